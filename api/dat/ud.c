/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Unreliable datagram EPs (IB extension).  A UD EP "connects" to learn a
 * peer's QP number and address, as IB's SIDR does: the active side sends
 * a connection request carrying its own, and the passive side answers by
 * refusing the request with its own in the private data.  Each side then
 * gets DAT_IB_UD_CONNECTION_EVENT_ESTABLISHED with an address handle for
 * dat_ib_post_send_ud().  The exchange uses only the CM's reliable port
 * space, which every transport has; the CM needs a QP of that type for
 * the request, so a small RC QP carries it and is destroyed after.
 *
 * Private data: a header of 32 bytes, then the consumer's bytes.
 */
#include "config.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <utlist.h>

#include <openrdma/errno.h>
#include <openrdma/log.h>
#include <openrdma/transport.h>

#include "api/dat/provider.h"

#define UD_ANSWER 0x80000000u

struct ud_hdr {
	uint32_t magic; /* DATP_UD_MAGIC, | UD_ANSWER in the answer */
	uint32_t qpn;
	uint32_t qkey;
	uint16_t family;
	uint16_t port;
	uint8_t addr[16];
};

_Static_assert(sizeof(struct ud_hdr) == 32, "UD header layout");

static void hdr_make(struct datp_ep *ep, bool answer, struct ud_hdr *h)
{
	/* the port's full address: an address handle may need its port */
	const struct sockaddr_storage *a = &ep->obj.ia->port_attr.addr;

	memset(h, 0, sizeof(*h));
	h->magic = htonl(DATP_UD_MAGIC | (answer ? UD_ANSWER : 0));
	h->qpn = htonl(ep->qp->qp_num);
	h->qkey = htonl(ep->qkey);
	h->family = htons(a->ss_family);
	if (a->ss_family == AF_INET6) {
		h->port = ((const struct sockaddr_in6 *)a)->sin6_port;
		memcpy(h->addr, &((const struct sockaddr_in6 *)a)->sin6_addr,
		       16);
	} else {
		h->port = ((const struct sockaddr_in *)a)->sin_port;
		memcpy(h->addr, &((const struct sockaddr_in *)a)->sin_addr, 4);
	}
}

/* The peer's address, QP number and Q_Key from a header. */
static bool hdr_parse(const uint8_t *pd, int len, bool answer,
		      struct sockaddr_storage *addr, uint32_t *qpn,
		      uint32_t *qkey)
{
	struct ud_hdr h;

	if (len < (int)sizeof(h))
		return false;
	memcpy(&h, pd, sizeof(h));
	if (ntohl(h.magic) != (DATP_UD_MAGIC | (answer ? UD_ANSWER : 0)))
		return false;
	memset(addr, 0, sizeof(*addr));
	addr->ss_family = ntohs(h.family);
	if (addr->ss_family == AF_INET6) {
		((struct sockaddr_in6 *)addr)->sin6_port = h.port;
		memcpy(&((struct sockaddr_in6 *)addr)->sin6_addr, h.addr, 16);
	} else {
		((struct sockaddr_in *)addr)->sin_port = h.port;
		memcpy(&((struct sockaddr_in *)addr)->sin_addr, h.addr, 4);
	}
	*qpn = ntohl(h.qpn);
	*qkey = ntohl(h.qkey);
	return true;
}

bool datp_ud_parse(struct datp_cr *cr, const uint8_t *pd, int len,
		   const uint8_t **user_out, int *len_out)
{
	*user_out = pd;
	*len_out = len;
	if (!hdr_parse(pd, len, false, &cr->peer_ud_addr, &cr->peer_qpn,
		       &cr->peer_qkey))
		return false;
	*user_out = pd + sizeof(struct ud_hdr);
	*len_out = len - (int)sizeof(struct ud_hdr);
	return true;
}

/* An address handle to the peer, on ep's PZ, listed in the IA. */
static int ah_make(struct datp_ep *ep, const struct sockaddr_storage *addr,
		   uint32_t qpn, struct datp_ah **ah_out)
{
	struct datp_ia *ia = ep->obj.ia;
	struct openrdma_ah_attr attr = { 0 };
	struct datp_ah *ah;
	int ret;

	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return -OPENRDMA_ENOMEM;
	attr.port_num = ia->dev->port_num ? ia->dev->port_num : 1;
	attr.addr = *addr;
	ret = openrdma_ah_create(ep->pz->pd, &attr, &ah->ah);
	if (ret) {
		free(ah);
		return ret;
	}
	ah->qpn = qpn;
	ah->ep = ep;
	pthread_mutex_lock(&ia->lock);
	DL_APPEND(ia->ahs, ah);
	pthread_mutex_unlock(&ia->lock);
	*ah_out = ah;
	return 0;
}

/* The UD connection event; its extension data is the remote AH. */
static void ud_event(DAT_EVENT *out, struct datp_ep *ep,
		     DAT_IB_EVENT_NUMBER number, DAT_IB_EXT_TYPE type,
		     const struct datp_ah *ah,
		     const struct sockaddr_storage *addr, const void *pdata,
		     int len)
{
	DAT_IB_EXTENSION_EVENT_DATA *x =
		(DAT_IB_EXTENSION_EVENT_DATA *)out->event_extension_data;
	DAT_CONNECTION_EVENT_DATA *c = &out->event_data.connect_event_data;

	out->event_number = (DAT_EVENT_NUMBER)number;
	c->ep_handle = ep;
	c->private_data_size = len > 0 ? len : 0;
	c->private_data = NULL;
	if (len > 0) {
		memcpy(ep->pdata_est, pdata, (size_t)len);
		c->private_data = ep->pdata_est;
	}
	x->type = type;
	x->status = ah ? DAT_OP_SUCCESS : DAT_IB_OP_ERR;
	if (ah) {
		x->remote_ah.ah = (struct ibv_ah *)(void *)ah;
		x->remote_ah.qpn = ah->qpn;
		memcpy(&x->remote_ah.ia_addr, addr,
		       addr->ss_family == AF_INET6 ?
			       sizeof(struct sockaddr_in6) :
			       sizeof(struct sockaddr_in));
	}
}

static void ah_destroy(struct datp_ah *ah)
{
	int ret = openrdma_ah_destroy(ah->ah);

	if (ret)
		openrdma_warn("dat", "ah_destroy: %s", openrdma_strerror(ret));
	free(ah);
}

int datp_ud_request(struct datp_ep *ep, const struct sockaddr *dst,
		    const void *pdata, DAT_COUNT pdata_len)
{
	struct datp_ia *ia = ep->obj.ia;
	struct openrdma_qp_init_attr init = { 0 };
	struct openrdma_conn_param param = { 0 };
	uint8_t buf[OPENRDMA_MAX_PRIVATE_DATA];
	struct datp_ud_req *req;
	struct openrdma_cq *cq;
	struct ud_hdr h;
	int ret;

	if (pdata_len + (int)sizeof(h) > ia->dev_attr.max_pdata_connect)
		return -OPENRDMA_EMSGSIZE;
	req = calloc(1, sizeof(*req));
	if (!req)
		return -OPENRDMA_ENOMEM;
	ret = datp_ia_null_cq(ia, &cq);
	if (ret)
		goto err_free;
	init.send_cq = cq;
	init.recv_cq = cq;
	init.qp_type = OPENRDMA_QPT_RC;
	init.cap.max_send_wr = 1;
	init.cap.max_recv_wr = 1;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	ret = openrdma_qp_create(ep->pz->pd, &init, &req->qp);
	if (ret)
		goto err_free;
	ret = openrdma_cm_id_create(ia->ctx, ia->cm_ch, ep, OPENRDMA_PS_TCP,
				    &req->id);
	if (ret)
		goto err_qp;
	ret = datp_cmref_add(ia, req->id, &ep->obj);
	if (ret)
		goto err_id;
	pthread_mutex_lock(&ia->lock);
	DL_APPEND(ep->ud_reqs, req);
	pthread_mutex_unlock(&ia->lock);

	hdr_make(ep, false, &h);
	memcpy(buf, &h, sizeof(h));
	if (pdata_len)
		memcpy(buf + sizeof(h), pdata, (size_t)pdata_len);
	param.private_data = buf;
	param.private_data_len = (uint8_t)(sizeof(h) + (size_t)pdata_len);
	if (datp_ep_state(ep) == DAT_EP_STATE_UNCONNECTED)
		atomic_store(&ep->state,
			     DAT_EP_STATE_ACTIVE_CONNECTION_PENDING);
	ret = openrdma_cm_connect(req->id, req->qp, dst, &param);
	if (ret)
		goto err_list;
	datp_ia_count(ia, DCNT_IA_CM_AH_REQ_TX);
	return 0;

err_list:
	pthread_mutex_lock(&ia->lock);
	DL_DELETE(ep->ud_reqs, req);
	pthread_mutex_unlock(&ia->lock);
	if (datp_ep_state(ep) == DAT_EP_STATE_ACTIVE_CONNECTION_PENDING)
		atomic_store(&ep->state, DAT_EP_STATE_UNCONNECTED);
	datp_cmref_drop(ia, req->id, false);
	req->id = NULL;
err_id:
	if (req->id)
		openrdma_cm_id_destroy(req->id);
err_qp:
	openrdma_qp_destroy(req->qp);
err_free:
	free(req);
	return ret;
}

/* The request of id, taken off the EP's list; NULL if not one of them. */
static struct datp_ud_req *req_take(struct datp_ep *ep,
				    const struct openrdma_cm_id *id)
{
	struct datp_ia *ia = ep->obj.ia;
	struct datp_ud_req *req;

	pthread_mutex_lock(&ia->lock);
	DL_FOREACH (ep->ud_reqs, req)
		if (req->id == id)
			break;
	if (req) {
		DL_DELETE(ep->ud_reqs, req);
		datp_cmref_del_locked(ia, id);
	}
	pthread_mutex_unlock(&ia->lock);
	return req;
}

int datp_ud_answer(struct datp_ep *ep, const struct openrdma_cm_event *ev,
		   DAT_EVENT *out)
{
	const uint8_t *pd = ev->param.private_data;
	int len = ev->param.private_data_len;
	struct sockaddr_storage addr;
	struct datp_ud_req *req;
	struct datp_ah *ah = NULL;
	uint32_t qpn, qkey;
	bool ok;

	if (ev->event == OPENRDMA_CM_EVENT_DISCONNECTED ||
	    ev->event == OPENRDMA_CM_EVENT_TIMEWAIT_EXIT)
		return CORE_EVD_SKIP;
	req = req_take(ep, ev->id);
	if (!req)
		return CORE_EVD_SKIP;
	/* the CM id and its carrier QP have done their job: the id first */
	datp_ia_bury(ep->obj.ia, req->id, req->qp);
	free(req);

	ok = ev->event == OPENRDMA_CM_EVENT_REJECTED &&
	     hdr_parse(pd, len, true, &addr, &qpn, &qkey);
	if (ok && !ah_make(ep, &addr, qpn, &ah)) {
		atomic_store(&ep->state, DAT_EP_STATE_CONNECTED);
		datp_ia_count(ep->obj.ia, DCNT_IA_CM_AH_RESOLVED);
		ud_event(out, ep, DAT_IB_UD_CONNECTION_EVENT_ESTABLISHED,
			 DAT_IB_UD_REMOTE_AH, ah, &addr,
			 pd + sizeof(struct ud_hdr),
			 len - (int)sizeof(struct ud_hdr));
		return 0;
	}
	if (datp_ep_state(ep) == DAT_EP_STATE_ACTIVE_CONNECTION_PENDING)
		atomic_store(&ep->state, DAT_EP_STATE_UNCONNECTED);
	if (ev->event == OPENRDMA_CM_EVENT_REJECTED &&
	    ev->status == -OPENRDMA_EREJECTED && !ok)
		ud_event(out, ep, DAT_IB_UD_CONNECTION_REJECT_EVENT,
			 DAT_IB_UD_CONNECT_REJECT, NULL, NULL, pd, len);
	else
		ud_event(out, ep, DAT_IB_UD_CONNECTION_ERROR_EVENT,
			 DAT_IB_UD_CONNECT_ERROR, NULL, NULL, NULL, 0);
	return 0;
}

DAT_RETURN datp_ud_accept(struct datp_cr *cr, struct datp_ep *ep,
			  const void *pdata, DAT_COUNT pdata_len)
{
	struct datp_ia *ia = cr->obj.ia;
	uint8_t buf[OPENRDMA_MAX_PRIVATE_DATA];
	struct datp_ah *ah;
	struct ud_hdr h;
	DAT_EVENT ev;
	int ret;

	if (ep->kind != DATP_EP_UD || !ep->qp)
		return DATP_STATE(DAT_INVALID_STATE_EP_NOTREADY,
				  "a UD request needs a UD EP with a PZ");
	if (pdata_len + (int)sizeof(h) > ia->dev_attr.max_pdata_reject)
		return DATP_ARG(DAT_INVALID_ARG3,
				"private_data_size %d: at most %d for UD",
				pdata_len,
				ia->dev_attr.max_pdata_reject - (int)sizeof(h));
	ret = ah_make(ep, &cr->peer_ud_addr, cr->peer_qpn, &ah);
	if (ret)
		return DATP_ERR(ret, DAT_RESOURCE_MEMORY, "address handle");
	hdr_make(ep, true, &h);
	memcpy(buf, &h, sizeof(h));
	if (pdata_len)
		memcpy(buf + sizeof(h), pdata, (size_t)pdata_len);
	ret = openrdma_cm_reject(cr->id, buf,
				 (uint8_t)(sizeof(h) + (size_t)pdata_len));
	if (ret) {
		pthread_mutex_lock(&ia->lock);
		DL_DELETE(ia->ahs, ah);
		pthread_mutex_unlock(&ia->lock);
		ah_destroy(ah);
		return DATP_ERR(ret, DAT_NO_SUBTYPE, "answer");
	}
	atomic_store(&ep->state, DAT_EP_STATE_CONNECTED);
	datp_ia_count(ia, DCNT_IA_CM_AH_REQ_RX);
	memset(&ev, 0, sizeof(ev));
	ud_event(&ev, ep, DAT_IB_UD_CONNECTION_EVENT_ESTABLISHED,
		 DAT_IB_UD_PASSIVE_REMOTE_AH, ah, &cr->peer_ud_addr, cr->pdata,
		 cr->pdata_len);
	if (ep->conn_evd)
		datp_evd_post(ep->conn_evd, &ev);
	datp_cr_destroy(cr, false);
	return DAT_SUCCESS;
}

DAT_RETURN datp_ud_post_send(struct datp_ep *ep, DAT_COUNT n,
			     DAT_LMR_TRIPLET *iov, DAT_IB_ADDR_HANDLE *dest,
			     DAT_DTO_COOKIE cookie, DAT_COMPLETION_FLAGS flags)
{
	struct datp_ia *ia = ep->obj.ia;
	struct openrdma_send_wr wr = { 0 };
	struct datp_slot slot = { 0 };
	struct datp_ah *ah, *found = NULL;
	uint64_t total = 0;
	DAT_RETURN ret;
	DAT_COUNT i;

	if (ep->kind != DATP_EP_UD)
		return DATP_STATE(DAT_INVALID_STATE_EP_NOTREADY, "not a UD EP");
	if (n < 0 || n > ep->attr.max_request_iov)
		return DATP_ARG(DAT_INVALID_ARG2, "segments %d (at most %d)", n,
				ep->attr.max_request_iov);
	if (n && !iov)
		return DATP_ARG(DAT_INVALID_ARG3, "local buffer: NULL");
	if (!dest)
		return DATP_ARG(DAT_INVALID_ARG4, "address handle: NULL");
	pthread_mutex_lock(&ia->lock);
	DL_FOREACH (ia->ahs, ah)
		if (ah == (struct datp_ah *)(void *)dest->ah)
			found = ah;
	pthread_mutex_unlock(&ia->lock);
	if (!found || found->ep->pz != ep->pz)
		return DATP_ARG(DAT_INVALID_ARG4,
				"address handle %p: not from a UD connection "
				"event of this PZ",
				(void *)dest->ah);
	ret = datp_ep_can_send(ep, __func__);
	if (ret != DAT_SUCCESS)
		return ret;
	for (i = 0; i < n; i++)
		total += iov[i].segment_length;
	wr.opcode = OPENRDMA_WR_SEND;
	wr.wr.ud.ah = found->ah;
	wr.wr.ud.remote_qpn = dest->qpn;
	wr.wr.ud.remote_qkey = ep->qkey;
	slot.cookie = cookie;
	slot.op = DAT_IB_DTO_SEND_UD;
	ret = datp_post_sq(ep, &wr, iov, n, &slot, flags, __func__);
	if (ret == DAT_SUCCESS)
		datp_ep_count(ep, DCNT_EP_POST_SEND_UD, total);
	return ret;
}

DAT_RETURN datp_ud_ah_free(struct datp_ep *ep, DAT_IB_ADDR_HANDLE *dest)
{
	struct datp_ia *ia = ep->obj.ia;
	struct datp_ah *ah, *found = NULL;

	if (!dest)
		return DATP_ARG(DAT_INVALID_ARG3, "address handle: NULL");
	pthread_mutex_lock(&ia->lock);
	DL_FOREACH (ia->ahs, ah)
		if (ah == (struct datp_ah *)(void *)dest->ah)
			found = ah;
	if (found)
		DL_DELETE(ia->ahs, found);
	pthread_mutex_unlock(&ia->lock);
	if (!found)
		return DATP_ARG(DAT_INVALID_ARG3, "address handle %p unknown",
				(void *)dest->ah);
	ah_destroy(found);
	return DAT_SUCCESS;
}

void datp_ud_fini(struct datp_ep *ep)
{
	struct datp_ia *ia = ep->obj.ia;
	struct datp_ah *ah, *tmp, *mine = NULL;
	struct datp_ud_req *req, *rtmp, *reqs;

	pthread_mutex_lock(&ia->lock);
	DL_FOREACH_SAFE (ia->ahs, ah, tmp) {
		if (ah->ep == ep) {
			DL_DELETE(ia->ahs, ah);
			DL_APPEND(mine, ah);
		}
	}
	reqs = ep->ud_reqs;
	ep->ud_reqs = NULL;
	pthread_mutex_unlock(&ia->lock);
	DL_FOREACH_SAFE (mine, ah, tmp)
		ah_destroy(ah);
	DL_FOREACH_SAFE (reqs, req, rtmp) {
		datp_cmref_drop(ia, req->id, false);
		datp_qp_destroy(req->qp);
		free(req);
	}
}
