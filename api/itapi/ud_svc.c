/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * UD service resolution: how a consumer learns the endpoint number and key
 * of a UD service, as InfiniBand's SIDR does.  The core's CM has no
 * datagram port space on every transport, so the exchange rides on the
 * reliable-connection CM that every transport has: the request is a
 * connect, from a hidden QP, whose private data starts with a marker; the
 * listen point's consumer sees IT_CM_REQ_UD_SERVICE_REQUEST_EVENT, and
 * it_ud_service_reply() answers with a reject whose private data carries
 * the reply.  No connection is ever made.
 *
 *   request private data: "ITUD" version len 0 0 | consumer's bytes
 *   reply private data:   "ITUR" version status len 0 | ep_id ep_key
 *                         port 0 0 (big endian) | consumer's bytes
 *
 * 'port' is the replier's port number where the transport gives each
 * context its own (tcp: its datagrams go there), else 0.
 */
#include "config.h"

#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "api/itapi/itapi.h"
#include "core/export.h"

#define SVC_VERSION 1

static const char svc_req_magic[4] = { 'I', 'T', 'U', 'D' };
static const char svc_rep_magic[4] = { 'I', 'T', 'U', 'R' };

struct itapi_ud_svc {
	struct itapi_obj obj;
	struct itapi_evd *reply_evd;
	it_conn_qual_t conn_qual;
	uint16_t port;
	it_path_t path;
	unsigned char pdata[IT_MAX_PRIV_DATA];
	size_t pdata_len;
	uint32_t request_id; /* requests sent so far */
	/* the request in flight; ia->cm_lock */
	struct itapi_cm_ref cm;
	struct openrdma_qp *qp;
};

static struct itapi_ud_svc *to_svc(it_ud_svc_req_handle_t h)
{
	return (struct itapi_ud_svc *)h;
}

/* How much consumer private data requests and replies carry. */
static size_t svc_req_max(const struct itapi_ia *ia)
{
	size_t n = ia->dev.max_pdata_connect;

	if (n < ITAPI_SVC_REQ_HDR ||
	    ia->dev.max_pdata_reject < ITAPI_SVC_REP_HDR)
		return 0;
	n -= ITAPI_SVC_REQ_HDR;
	return n < IT_MAX_PRIV_DATA ? n : IT_MAX_PRIV_DATA;
}

static size_t svc_rep_max(const struct itapi_ia *ia)
{
	size_t n = ia->dev.max_pdata_reject;

	if (n < ITAPI_SVC_REP_HDR)
		return 0;
	n -= ITAPI_SVC_REP_HDR;
	return n < IT_MAX_PRIV_DATA ? n : IT_MAX_PRIV_DATA;
}

static bool svc_supported(const struct itapi_ia *ia)
{
	return ia->dev.max_pdata_connect >= ITAPI_SVC_REQ_HDR &&
	       ia->dev.max_pdata_reject >= ITAPI_SVC_REP_HDR &&
	       (ia->dev.device_cap_flags & OPENRDMA_DEVICE_RC);
}

bool itapi_svc_is_request(const struct openrdma_cm_event *ev)
{
	return ev->param.private_data_len >= ITAPI_SVC_REQ_HDR &&
	       !memcmp(ev->param.private_data, svc_req_magic,
		       sizeof(svc_req_magic)) &&
	       ev->param.private_data[4] == SVC_VERSION;
}

OPENRDMA_EXPORT it_status_t it_ud_service_request_handle_create(
	const it_conn_qual_t *conn_qual, it_evd_handle_t reply_evd,
	const it_path_t *destination_path, const unsigned char *private_data,
	size_t private_data_length, it_ud_svc_req_handle_t *ud_svc_handle)
{
	struct itapi_evd *evd = to_evd(reply_evd);
	struct itapi_ud_svc *svc;
	struct itapi_ia *ia;
	uint16_t port;
	int ret;

	if (!itapi_valid(evd, IT_HANDLE_TYPE_EVD)) {
		itapi_arg_err("it_ud_service_request_handle_create",
			      "reply_evd", "not an EVD");
		return IT_ERR_INVALID_EVD;
	}
	if (evd->stream != IT_CM_MSG_EVENT_STREAM) {
		itapi_arg_err("it_ud_service_request_handle_create",
			      "reply_evd", "not a CM message SEVD");
		return IT_ERR_INVALID_EVD_TYPE;
	}
	ia = evd->obj.ia;
	if (!svc_supported(ia))
		return IT_ERR_OP_NOT_SUPPORTED;
	if (!conn_qual || !destination_path || !ud_svc_handle) {
		itapi_arg_err("it_ud_service_request_handle_create",
			      "conn_qual", "NULL");
		return IT_ERR_FAULT;
	}
	if (itapi_conn_qual_port(conn_qual, &port) || !port)
		return IT_ERR_INVALID_CONN_QUAL;
	if (!itapi_spigot_valid(ia, destination_path->spigot_id))
		return IT_ERR_INVALID_SPIGOT;
	if (private_data_length > svc_req_max(ia))
		return IT_ERR_INVALID_PDATA_LENGTH;
	if (private_data_length && !private_data)
		return IT_ERR_FAULT;

	svc = calloc(1, sizeof(*svc));
	if (!svc)
		return IT_ERR_RESOURCES;
	svc->reply_evd = evd;
	svc->conn_qual = *conn_qual;
	svc->port = port;
	svc->path = *destination_path;
	if (private_data_length)
		memcpy(svc->pdata, private_data, private_data_length);
	svc->pdata_len = private_data_length;
	ret = itapi_obj_init(&svc->obj, IT_HANDLE_TYPE_UD_SVC_REQ, ia);
	if (ret) {
		free(svc);
		return itapi_status(ret, IT_ERR_INVALID_EVD);
	}
	itapi_obj_get(&evd->obj);
	*ud_svc_handle = (it_ud_svc_req_handle_t)svc;
	return IT_SUCCESS;
}

void itapi_ud_svc_destroy(struct itapi_obj *obj)
{
	struct itapi_ud_svc *svc = (struct itapi_ud_svc *)obj;
	struct itapi_ia *ia = obj->ia;
	struct itapi_cm_drop drop;

	itapi_obj_fini(obj);
	memset(&drop, 0, sizeof(drop));
	pthread_mutex_lock(&ia->cm_lock);
	drop.id = svc->cm.id;
	drop.qp = svc->qp;
	itapi_cm_ref_del(ia, &svc->cm);
	svc->qp = NULL;
	pthread_mutex_unlock(&ia->cm_lock);
	itapi_cm_drop_run(&drop);
	itapi_obj_put(&svc->reply_evd->obj);
	free(svc);
}

OPENRDMA_EXPORT it_status_t
it_ud_service_request_handle_free(it_ud_svc_req_handle_t ud_svc_handle)
{
	struct itapi_ud_svc *svc = to_svc(ud_svc_handle);

	if (!itapi_valid(svc, IT_HANDLE_TYPE_UD_SVC_REQ)) {
		itapi_arg_err("it_ud_service_request_handle_free",
			      "ud_svc_handle", "not a UD service request");
		return IT_ERR_INVALID_UD_SVC;
	}
	itapi_ud_svc_destroy(&svc->obj);
	return IT_SUCCESS;
}

#define SVC_QUERYABLE 0xffu

OPENRDMA_EXPORT it_status_t it_ud_service_request_handle_query(
	it_ud_svc_req_handle_t ud_svc_handle, it_ud_svc_req_param_mask_t mask,
	it_ud_svc_req_param_t *ud_svc_handle_info)
{
	struct itapi_ud_svc *svc = to_svc(ud_svc_handle);
	unsigned int m = (unsigned int)mask;
	it_ud_svc_req_param_t p;

	if (!itapi_valid(svc, IT_HANDLE_TYPE_UD_SVC_REQ)) {
		itapi_arg_err("it_ud_service_request_handle_query",
			      "ud_svc_handle", "not a UD service request");
		return IT_ERR_INVALID_UD_SVC;
	}
	if (m & ~SVC_QUERYABLE)
		return IT_ERR_INVALID_MASK;
	if (!ud_svc_handle_info)
		return IT_ERR_FAULT;
	if (m & IT_UD_PARAM_ALL)
		m = SVC_QUERYABLE;
	p = *ud_svc_handle_info;
	if (m & IT_UD_PARAM_IA_HANDLE)
		p.ia = (it_ia_handle_t)svc->obj.ia;
	if (m & IT_UD_PARAM_REQ_ID)
		p.request_id = svc->request_id;
	if (m & IT_UD_PARAM_REPLY_EVD)
		p.reply_evd = (it_evd_handle_t)svc->reply_evd;
	if (m & IT_UD_PARAM_CONN_QUAL)
		p.conn_qual = svc->conn_qual;
	if (m & IT_UD_PARAM_DEST_PATH)
		p.destination_path = svc->path;
	if (m & IT_UD_PARAM_PRIV_DATA)
		memcpy(p.private_data, svc->pdata, sizeof(p.private_data));
	if (m & IT_UD_PARAM_PRIV_DATA_LENGTH)
		p.private_data_length = svc->pdata_len;
	*ud_svc_handle_info = p;
	return IT_SUCCESS;
}

/* The IA's hidden PD and CQ, for the QPs requests connect from. */
static int svc_objects(struct itapi_ia *ia)
{
	int ret = 0;

	pthread_mutex_lock(&ia->lock);
	if (!ia->svc_pd)
		ret = openrdma_pd_alloc(ia->ctx, &ia->svc_pd);
	if (!ret && !ia->svc_cq)
		ret = openrdma_cq_create(ia->ctx, 4, NULL, NULL, 0,
					 &ia->svc_cq);
	pthread_mutex_unlock(&ia->lock);
	return ret;
}

static int svc_qp_create(struct itapi_ia *ia, struct openrdma_qp **qp_out)
{
	struct openrdma_qp_init_attr init;
	int ret;

	ret = svc_objects(ia);
	if (ret)
		return ret;
	memset(&init, 0, sizeof(init));
	/* no context: its async events concern no endpoint */
	init.send_cq = ia->svc_cq;
	init.recv_cq = ia->svc_cq;
	init.qp_type = OPENRDMA_QPT_RC;
	init.cap.max_send_wr = 1;
	init.cap.max_recv_wr = 1;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	return openrdma_qp_create(ia->svc_pd, &init, qp_out);
}

OPENRDMA_EXPORT it_status_t
it_ud_service_request(it_ud_svc_req_handle_t ud_svc_handle)
{
	struct itapi_ud_svc *svc = to_svc(ud_svc_handle);
	unsigned char buf[ITAPI_SVC_REQ_HDR + IT_MAX_PRIV_DATA];
	struct openrdma_conn_param param;
	struct sockaddr_storage dst;
	struct openrdma_cm_id *id;
	struct openrdma_qp *qp;
	struct itapi_ia *ia;
	int ret;

	if (!itapi_valid(svc, IT_HANDLE_TYPE_UD_SVC_REQ)) {
		itapi_arg_err("it_ud_service_request", "ud_svc_handle",
			      "not a UD service request");
		return IT_ERR_INVALID_UD_SVC;
	}
	ia = svc->obj.ia;
	if (itapi_path_to_sockaddr(ia, &svc->path, svc->port, &dst))
		return IT_ERR_INVALID_NETADDR;
	memset(buf, 0, ITAPI_SVC_REQ_HDR);
	memcpy(buf, svc_req_magic, sizeof(svc_req_magic));
	buf[4] = SVC_VERSION;
	buf[5] = (unsigned char)svc->pdata_len;
	memcpy(buf + ITAPI_SVC_REQ_HDR, svc->pdata, svc->pdata_len);
	memset(&param, 0, sizeof(param));
	param.private_data = buf;
	param.private_data_len = (uint8_t)(ITAPI_SVC_REQ_HDR + svc->pdata_len);
	param.retry_count = 7;
	param.rnr_retry_count = 7;

	ret = svc_qp_create(ia, &qp);
	if (ret)
		return itapi_status(ret, IT_ERR_INVALID_UD_SVC);
	ret = openrdma_cm_id_create(ia->ctx, ia->cm_ch, svc, OPENRDMA_PS_TCP,
				    &id);
	if (ret)
		goto err_qp;
	pthread_mutex_lock(&ia->cm_lock);
	if (svc->cm.id) {
		/* one request at a time per handle */
		ret = -OPENRDMA_EBUSY;
		goto err_unlock;
	}
	ret = itapi_cm_start(ia);
	if (ret)
		goto err_unlock;
	itapi_cm_ref_add(ia, &svc->cm, id, &svc->obj);
	svc->qp = qp;
	ret = openrdma_cm_connect(id, qp, (struct sockaddr *)&dst, &param);
	if (ret) {
		itapi_cm_ref_del(ia, &svc->cm);
		svc->qp = NULL;
		goto err_unlock;
	}
	svc->request_id++;
	pthread_mutex_unlock(&ia->cm_lock);
	return IT_SUCCESS;

err_unlock:
	pthread_mutex_unlock(&ia->cm_lock);
	openrdma_cm_id_destroy(id);
err_qp:
	itapi_qp_destroy(qp);
	return ret == -OPENRDMA_EBUSY ?
		       IT_ERR_INVALID_UD_SVC :
		       itapi_status(ret, IT_ERR_INVALID_UD_SVC);
}

/* The reply of a REJECTED event that carries one: status, or -1. */
static int svc_reply_parse(const struct openrdma_cm_event *ev,
			   it_remote_ep_info_t *info, uint16_t *port,
			   size_t *skip)
{
	const uint8_t *p = ev->param.private_data;
	uint16_t v16;
	uint32_t v;

	if (ev->param.private_data_len < ITAPI_SVC_REP_HDR ||
	    memcmp(p, svc_rep_magic, sizeof(svc_rep_magic)) ||
	    p[4] != SVC_VERSION || p[5] > IT_UD_REQ_REDIRECTED)
		return -1;
	memcpy(&v, p + 8, 4);
	info->ud_ep_id = be32toh(v);
	memcpy(&v, p + 12, 4);
	info->ud_ep_key = be32toh(v);
	memcpy(&v16, p + 16, 2);
	*port = be16toh(v16);
	*skip = ITAPI_SVC_REP_HDR;
	return p[5];
}

int itapi_svc_cm_event(struct itapi_ia *ia, struct itapi_obj *owner,
		       const struct openrdma_cm_event *ev, it_event_t *event,
		       struct itapi_evd **dst, struct itapi_cm_drop *drop)
{
	struct itapi_ud_svc *svc = (struct itapi_ud_svc *)owner;
	it_ud_svc_reply_event_t *r = &event->ud_svc_reply;
	uint16_t port = 0;
	size_t skip = 0;
	int status;

	memset(r, 0, sizeof(*r));
	switch (ev->event) {
	case OPENRDMA_CM_EVENT_REJECTED:
		status = svc_reply_parse(ev, &r->ep_info, &port, &skip);
		if (status < 0)
			status = ev->status == -OPENRDMA_EREJECTED ?
					 IT_UD_SVC_REQ_REJECTED :
					 IT_UD_SVC_ID_NOT_SUPPORTED;
		break;
	case OPENRDMA_CM_EVENT_UNREACHABLE:
	case OPENRDMA_CM_EVENT_CONNECT_ERROR:
		status = ev->status == -OPENRDMA_ECONNREFUSED ?
				 IT_UD_SVC_ID_NOT_SUPPORTED :
				 IT_UD_NO_EP_AVAILABLE;
		break;
	case OPENRDMA_CM_EVENT_ESTABLISHED:
	case OPENRDMA_CM_EVENT_CONNECT_RESPONSE:
		/* a listener that is no IT-API UD service accepted */
		status = IT_UD_SVC_ID_NOT_SUPPORTED;
		break;
	default:
		return CORE_EVD_SKIP;
	}
	r->event_number = IT_CM_MSG_UD_SERVICE_REPLY_EVENT;
	r->ud_svc = (it_ud_svc_req_handle_t)svc;
	r->status = (it_ud_svc_req_status_t)status;
	r->dst_path = svc->path;
	itapi_path_set_port(ia, &r->dst_path, port);
	if (skip)
		itapi_pdata_copy(r->private_data, &r->private_data_present, ev,
				 skip);
	*dst = svc->reply_evd;
	/* the request is over: its id and QP go once the event is acked */
	drop->id = svc->cm.id;
	drop->qp = svc->qp;
	itapi_cm_ref_del(ia, &svc->cm);
	svc->qp = NULL;
	return 0;
}

OPENRDMA_EXPORT it_status_t it_ud_service_reply(
	it_ud_svc_req_identifier_t ud_svc_req_id, it_ud_svc_req_status_t status,
	it_remote_ep_info_t ep_info, const unsigned char *private_data,
	size_t private_data_length)
{
	unsigned char buf[ITAPI_SVC_REP_HDR + IT_MAX_PRIV_DATA];
	struct itapi_cn *cn = itapi_cn_take(ud_svc_req_id);
	uint16_t port;
	uint32_t v;
	int ret;

	if (!cn)
		return IT_ERR_INVALID_UD_SVC_REQ_ID;
	if (cn->kind != ITAPI_CN_UD_SVC) {
		itapi_cn_list(cn);
		return IT_ERR_INVALID_UD_SVC_REQ_ID;
	}
	if ((unsigned int)status > IT_UD_REQ_REDIRECTED) {
		itapi_cn_list(cn);
		return IT_ERR_INVALID_UD_STATUS;
	}
	if (private_data_length > svc_rep_max(cn->ia) ||
	    (private_data_length && !private_data)) {
		itapi_cn_list(cn);
		return private_data_length > svc_rep_max(cn->ia) ?
			       IT_ERR_INVALID_PDATA_LENGTH :
			       IT_ERR_FAULT;
	}
	memset(buf, 0, ITAPI_SVC_REP_HDR);
	memcpy(buf, svc_rep_magic, sizeof(svc_rep_magic));
	buf[4] = SVC_VERSION;
	buf[5] = (unsigned char)status;
	buf[6] = (unsigned char)private_data_length;
	v = htobe32(ep_info.ud_ep_id);
	memcpy(buf + 8, &v, 4);
	v = htobe32(ep_info.ud_ep_key);
	memcpy(buf + 12, &v, 4);
	port = htobe16(
		itapi_spigot_port(cn->ia, cn->ev.ud_svc_request.spigot_id));
	memcpy(buf + 16, &port, 2);
	if (private_data_length)
		memcpy(buf + ITAPI_SVC_REP_HDR, private_data,
		       private_data_length);
	ret = openrdma_cm_reject(
		cn->id, buf,
		(uint8_t)(ITAPI_SVC_REP_HDR + private_data_length));
	openrdma_cm_id_destroy(cn->id);
	free(cn);
	return ret ? itapi_status(ret, IT_ERR_INVALID_UD_SVC_REQ_ID) :
		     IT_SUCCESS;
}
