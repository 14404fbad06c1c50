/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Endpoints: one QP each, whose send and receive CQs are those of its
 * request and receive SEVDs.  An RC endpoint waits in INIT (receives may
 * be posted before it connects, see cm.c); a UD endpoint is operational
 * as soon as it exists.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openrdma/param.h>

#include "api/itapi/itapi.h"
#include "core/core.h"
#include "core/export.h"

#define RC_FLAGS (IT_EP_NO_FLAG | IT_EP_REUSEADDR | IT_EP_SRQ)

/* The remote accesses the endpoint's attributes allow. */
static unsigned int ep_access(const struct itapi_ep *ep)
{
	const it_rc_only_attributes_t *rc = &ep->attr.srv.rc;
	unsigned int access = 0;

	if (rc->rdma_write_enable)
		access |= OPENRDMA_ACCESS_REMOTE_WRITE;
	if (rc->rdma_read_enable)
		access |= OPENRDMA_ACCESS_REMOTE_READ;
	if (rc->atomics_enable)
		access |= OPENRDMA_ACCESS_REMOTE_ATOMIC;
	return access;
}

/* The DTO SEVD an endpoint names: same IA, DTO stream. */
static bool dto_evd(const struct itapi_evd *evd, const struct itapi_ia *ia)
{
	return itapi_evd_is(evd, IT_DTO_EVENT_STREAM) && evd->obj.ia == ia;
}

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

/* Checks attributes against the device: the it_status_t of the first
 * that does not fit. */
static it_status_t attr_check(const struct itapi_ia *ia,
			      const it_ep_attributes_t *a,
			      it_transport_service_type_t service,
			      const struct itapi_srq *srq)
{
	const struct openrdma_device_attr *dev = &ia->dev;
	const it_rc_only_attributes_t *rc = &a->srv.rc;
	size_t max_sge = min_size((size_t)dev->max_sge, ITAPI_MAX_SGE);
	size_t max_payload = service == IT_RC_SERVICE ? dev->max_msg_size :
							dev->max_ud_msg_size;

	if (!a->max_request_dtos || a->max_dto_payload_size > max_payload) {
		openrdma_dbg(ITAPI_LOG,
			     "ep_create: max_request_dtos %zu payload %zu",
			     a->max_request_dtos, a->max_dto_payload_size);
		return IT_ERR_INVALID_EP_ATTR;
	}
	if (a->priv_ops_enable)
		return IT_ERR_PRIV_OPS_UNAVAILABLE;
	if (a->max_request_dtos > (size_t)dev->max_qp_wr)
		return IT_ERR_RESOURCE_REQ_DTO;
	if (!srq && a->max_recv_dtos > (size_t)dev->max_qp_wr)
		return IT_ERR_RESOURCE_RECV_DTO;
	if (a->max_send_segments > max_sge)
		return IT_ERR_RESOURCE_SSEG;
	/* a UD receive spends one of the device's SGEs on its GRH area */
	if (!srq &&
	    a->max_recv_segments >
		    (service == IT_UD_SERVICE ?
			     min_size((size_t)dev->max_sge - 1, ITAPI_MAX_SGE) :
			     max_sge))
		return IT_ERR_RESOURCE_RSEG;
	if (service == IT_UD_SERVICE) {
		/* Q_Keys with the high bit set are the privileged ones */
		if (a->srv.ud.ep_info.ud_ep_key & 0x80000000u)
			return IT_ERR_INVALID_EP_KEY;
		return IT_SUCCESS;
	}
	if (rc->max_rdma_read_segments >
	    min_size((size_t)dev->max_sge_rd, ITAPI_MAX_SGE))
		return IT_ERR_RESOURCE_RRSEG;
	if (rc->max_rdma_write_segments > max_sge)
		return IT_ERR_RESOURCE_RWSEG;
	if (rc->rdma_read_ird > (uint32_t)dev->max_qp_rd_atom)
		return IT_ERR_RESOURCE_IRD;
	if (rc->rdma_read_ord > (uint32_t)dev->max_qp_init_rd_atom)
		return IT_ERR_RESOURCE_ORD;
	if (rc->atomics_enable && dev->atomic_cap == OPENRDMA_ATOMIC_NONE)
		return IT_ERR_OP_NOT_SUPPORTED;
	/* watermarks: 0 and IT_HARD_HI_WATERMARK_DISABLE mean none */
	if ((rc->soft_hi_watermark &&
	     rc->soft_hi_watermark != IT_HARD_HI_WATERMARK_DISABLE) ||
	    (rc->hard_hi_watermark &&
	     rc->hard_hi_watermark != IT_HARD_HI_WATERMARK_DISABLE))
		return IT_ERR_OP_NOT_SUPPORTED;
	return IT_SUCCESS;
}

static uint32_t pow2_at_least(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

/* The inline room to ask for: the inline_max param, within the device's. */
static uint32_t ep_inline_max(const struct itapi_ia *ia)
{
	int64_t v = 0;

	if (openrdma_param_get_int(NULL, "inline_max", &v) || v <= 0 ||
	    ia->dev.max_inline_data <= 0)
		return 0;
	return v < ia->dev.max_inline_data ? (uint32_t)v :
					     (uint32_t)ia->dev.max_inline_data;
}

/* Makes a QP of the endpoint's attributes, with the inline room it got. */
static int ep_qp_new(const struct itapi_ep *ep, struct openrdma_qp **qp,
		     uint32_t *inline_max)
{
	struct openrdma_qp_init_attr init;
	const it_ep_attributes_t *a = &ep->attr;
	size_t sge;
	int ret;

	memset(&init, 0, sizeof(init));
	init.qp_context = (void *)ep;
	init.send_cq = ep->req_evd->cq;
	init.recv_cq = ep->recv_evd->cq;
	init.srq = ep->srq ? ep->srq->srq : NULL;
	init.qp_type = ep->service == IT_RC_SERVICE ? OPENRDMA_QPT_RC :
						      OPENRDMA_QPT_UD;
	init.cap.max_send_wr = (uint32_t)a->max_request_dtos;
	init.cap.max_recv_wr =
		ep->srq ? 0 :
			  (uint32_t)(a->max_recv_dtos ? a->max_recv_dtos : 1);
	sge = a->max_send_segments;
	if (ep->service == IT_RC_SERVICE) {
		if (a->srv.rc.max_rdma_read_segments > sge)
			sge = a->srv.rc.max_rdma_read_segments;
		if (a->srv.rc.max_rdma_write_segments > sge)
			sge = a->srv.rc.max_rdma_write_segments;
	}
	init.cap.max_send_sge = (uint32_t)(sge ? sge : 1);
	init.cap.max_recv_sge =
		ep->srq ? 0 :
			  (uint32_t)(a->max_recv_segments +
				     (ep->service == IT_UD_SERVICE ? 1 : 0));
	init.cap.max_inline_data = ep_inline_max(ep->pz->obj.ia);
	ret = openrdma_qp_create(ep->pz->pd, &init, qp);
	if (ret == -OPENRDMA_EINVAL && init.cap.max_inline_data) {
		/* a device may give less inline room with these queues */
		init.cap.max_inline_data = 0;
		ret = openrdma_qp_create(ep->pz->pd, &init, qp);
	}
	if (ret)
		return ret;
	*inline_max = init.cap.max_inline_data;
	if ((*qp)->cap.max_inline_data < *inline_max)
		*inline_max = (*qp)->cap.max_inline_data;
	return 0;
}

/* Reserves room in the SEVDs' CQs and makes the QP; ia->lock held. */
static int ep_qp_create(struct itapi_ep *ep)
{
	const it_ep_attributes_t *a = &ep->attr;
	size_t recv = ep->srq ? ep->srq->max_recv_dtos : a->max_recv_dtos;
	int ret;

	ret = itapi_evd_cq_reserve(ep->req_evd, a->max_request_dtos);
	if (ret)
		return ret;
	ep->cq_req_need = a->max_request_dtos;
	ret = itapi_evd_cq_reserve(ep->recv_evd, recv);
	if (ret)
		goto err_req;
	ep->cq_recv_need = recv;
	ret = ep_qp_new(ep, &ep->qp, &ep->inline_max);
	if (ret)
		goto err_recv;
	return 0;

err_recv:
	itapi_evd_cq_release(ep->recv_evd, recv);
err_req:
	itapi_evd_cq_release(ep->req_evd, a->max_request_dtos);
	return ret;
}

void itapi_qp_destroy(struct openrdma_qp *qp)
{
	int ret, tries = 0;

	while ((ret = openrdma_qp_destroy(qp)) == -OPENRDMA_EBUSY &&
	       tries++ < 1000)
		usleep(1000);
	if (ret)
		openrdma_warn(ITAPI_LOG, "qp_destroy: %s",
			      openrdma_strerror(ret));
}

/* The send and receive rings and GRH areas of the granted queues. */
static int ep_queues_init(struct itapi_ep *ep)
{
	uint32_t i;
	size_t grh_len;
	int ret;

	ep->ssize = pow2_at_least(ep->qp->cap.max_send_wr);
	ep->sauto = ep->ssize > 1 ? ep->ssize / 2 : 1;
	ep->sring = calloc(ep->ssize, sizeof(*ep->sring));
	if (!ep->sring)
		return -OPENRDMA_ENOMEM;
	for (i = 0; i < ep->ssize; i++)
		ep->sring[i].seq = UINT64_MAX;
	if (ep->srq)
		return 0;
	ep->rnum = ep->qp->cap.max_recv_wr ? ep->qp->cap.max_recv_wr : 1;
	ep->rsize = pow2_at_least(ep->rnum);
	ep->rcookie = calloc(ep->rsize, sizeof(*ep->rcookie));
	if (!ep->rcookie) {
		ret = -OPENRDMA_ENOMEM;
		goto err_ring;
	}
	core_spin_init(&ep->rq_lock);
	if (ep->service != IT_UD_SERVICE)
		return 0;
	grh_len = (size_t)ep->rsize * OPENRDMA_GRH_LEN;
	ep->grh = calloc(1, grh_len);
	if (!ep->grh) {
		ret = -OPENRDMA_ENOMEM;
		goto err_rring;
	}
	ret = openrdma_mr_reg(ep->pz->pd, ep->grh, grh_len,
			      OPENRDMA_ACCESS_LOCAL_WRITE, &ep->grh_mr);
	if (ret)
		goto err_grh;
	return 0;

err_grh:
	free(ep->grh);
	ep->grh = NULL;
err_rring:
	free(ep->rcookie);
	ep->rcookie = NULL;
err_ring:
	free(ep->sring);
	ep->sring = NULL;
	return ret;
}

static void ep_queues_fini(struct itapi_ep *ep)
{
	if (ep->grh_mr)
		openrdma_mr_dereg(ep->grh_mr);
	free(ep->grh);
	free(ep->rcookie);
	free(ep->sring);
}

/*
 * The converter reads an SEVD's tables under the SEVD's engine lock, so
 * they change under it too: no lock of their own on the data path.
 */
static void req_add(void *arg)
{
	struct itapi_ep *ep = arg;

	HASH_ADD(req_hh, ep->req_evd->req_eps, qpn, sizeof(ep->qpn), ep);
}

static void recv_add(void *arg)
{
	struct itapi_ep *ep = arg;

	HASH_ADD(recv_hh, ep->recv_evd->recv_eps, qpn, sizeof(ep->qpn), ep);
}

static void req_del(void *arg)
{
	struct itapi_ep *ep = arg;

	HASH_DELETE(req_hh, ep->req_evd->req_eps, ep);
	if (ep->req_evd->req_last == ep)
		ep->req_evd->req_last = NULL;
}

static void recv_del(void *arg)
{
	struct itapi_ep *ep = arg;

	HASH_DELETE(recv_hh, ep->recv_evd->recv_eps, ep);
	if (ep->recv_evd->recv_last == ep)
		ep->recv_evd->recv_last = NULL;
}

/* Lists the endpoint where the SEVDs' converter finds it. */
static void ep_tables_add(struct itapi_ep *ep)
{
	core_evd_locked(ep->req_evd->core, req_add, ep);
	core_evd_locked(ep->recv_evd->core, recv_add, ep);
}

/* Once it returns, no converter reads the endpoint. */
static void ep_tables_del(struct itapi_ep *ep)
{
	core_evd_locked(ep->req_evd->core, req_del, ep);
	core_evd_locked(ep->recv_evd->core, recv_del, ep);
}

/*
 * A device that cannot return a QP to RESET (siw: openrdma_verbs_transport(7))
 * resets an RC endpoint by a new QP of the same size, in RESET, under a
 * new number: completions of the old one that are still queued no longer
 * find the endpoint and are dropped, as a reset drops its requests.
 */
static int ep_qp_replace(struct itapi_ep *ep)
{
	struct openrdma_qp *old = ep->qp, *qp;
	uint32_t inline_max;
	int ret;

	ret = ep_qp_new(ep, &qp, &inline_max);
	if (ret)
		return ret;
	/* the send ring and receive slots are sized for the old one */
	if (qp->cap.max_send_wr < old->cap.max_send_wr ||
	    qp->cap.max_recv_wr < old->cap.max_recv_wr) {
		itapi_qp_destroy(qp);
		return -OPENRDMA_ENOMEM;
	}
	ep_tables_del(ep);
	core_spin_lock(&ep->sq_lock);
	ep->qp = qp;
	ep->qpn = qp->qp_num;
	ep->inline_max = inline_max;
	core_spin_unlock(&ep->sq_lock);
	ep_tables_add(ep);
	itapi_qp_destroy(old);
	return 0;
}

int itapi_ep_qp_init(struct itapi_ep *ep)
{
	struct openrdma_qp_attr attr;
	int ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = OPENRDMA_QPS_RESET;
	ret = openrdma_qp_modify(ep->qp, &attr, OPENRDMA_QP_STATE);
	if (ret == -OPENRDMA_EOPNOTSUPP && ep->service == IT_RC_SERVICE)
		ret = ep_qp_replace(ep);
	if (ret)
		return ret;
	attr.qp_state = OPENRDMA_QPS_INIT;
	attr.port_num = (uint8_t)(ep->spigot_id + 1);
	if (ep->service == IT_RC_SERVICE) {
		attr.qp_access_flags = ep_access(ep);
		return openrdma_qp_modify(
			ep->qp, &attr,
			OPENRDMA_QP_STATE | OPENRDMA_QP_PKEY_INDEX |
				OPENRDMA_QP_PORT | OPENRDMA_QP_ACCESS_FLAGS);
	}
	attr.qkey = ep->qkey;
	ret = openrdma_qp_modify(ep->qp, &attr,
				 OPENRDMA_QP_STATE | OPENRDMA_QP_PKEY_INDEX |
					 OPENRDMA_QP_PORT | OPENRDMA_QP_QKEY);
	if (ret)
		return ret;
	return core_qp_ud_ready(ep->qp);
}

static void ep_users(struct itapi_ep *ep, bool get)
{
	struct itapi_obj *deps[5] = {
		&ep->pz->obj,
		&ep->req_evd->obj,
		&ep->recv_evd->obj,
		ep->conn_evd ? &ep->conn_evd->obj : NULL,
		ep->srq ? &ep->srq->obj : NULL,
	};
	size_t i;

	for (i = 0; i < sizeof(deps) / sizeof(deps[0]); i++) {
		if (!deps[i])
			continue;
		if (get)
			itapi_obj_get(deps[i]);
		else
			itapi_obj_put(deps[i]);
	}
}

/* The granted attributes: what the QP got, within what was asked. */
static void attr_granted(struct itapi_ep *ep)
{
	const struct openrdma_qp_cap *cap = &ep->qp->cap;
	it_ep_attributes_t *a = &ep->attr;

	a->max_request_dtos = cap->max_send_wr;
	if (!ep->srq)
		a->max_recv_dtos = ep->rnum;
	else
		a->max_recv_dtos = 0;
	if (!a->max_dto_payload_size)
		a->max_dto_payload_size =
			ep->service == IT_RC_SERVICE ?
				ep->obj.ia->dev.max_msg_size :
				ep->obj.ia->dev.max_ud_msg_size;
}

static it_status_t ep_create(struct itapi_ep *ep, it_ep_handle_t *ep_handle)
{
	struct itapi_ia *ia = ep->pz->obj.ia;
	int ret;

	core_spin_init(&ep->sq_lock);
	pthread_mutex_lock(&ia->lock);
	ret = ep_qp_create(ep);
	pthread_mutex_unlock(&ia->lock);
	if (ret)
		goto err_free;
	ep->qpn = ep->qp->qp_num;
	ret = ep_queues_init(ep);
	if (ret)
		goto err_qp;
	attr_granted(ep);
	ret = itapi_ep_qp_init(ep);
	if (ret)
		goto err_queues;
	ep->obj.ia = ia;
	ret = itapi_obj_init(&ep->obj, IT_HANDLE_TYPE_EP, ia);
	if (ret)
		goto err_queues;
	ep_users(ep, true);
	ep_tables_add(ep);

	*ep_handle = (it_ep_handle_t)ep;
	return IT_SUCCESS;

err_queues:
	ep_queues_fini(ep);
err_qp:
	itapi_qp_destroy(ep->qp);
	pthread_mutex_lock(&ia->lock);
	itapi_evd_cq_release(ep->req_evd, ep->cq_req_need);
	itapi_evd_cq_release(ep->recv_evd, ep->cq_recv_need);
	pthread_mutex_unlock(&ia->lock);
err_free:
	free(ep);
	if (ret == -OPENRDMA_ENOSPC)
		return IT_ERR_RESOURCE_QUEUE_SIZE;
	return itapi_status(ret, IT_ERR_INVALID_EP_ATTR);
}

/*
 * The checks both services begin with: the PZ, the service on its device
 * and the two DTO SEVDs of its IA.
 */
static it_status_t create_check(const char *fn, const struct itapi_pz *pz,
				uint32_t service_cap, it_evd_handle_t req,
				it_evd_handle_t recv)
{
	const struct itapi_ia *ia;

	if (!itapi_valid(pz, IT_HANDLE_TYPE_PZ)) {
		openrdma_dbg(ITAPI_LOG, "%s: arg pz_handle: not a PZ", fn);
		return IT_ERR_INVALID_PZ;
	}
	ia = pz->obj.ia;
	if (!(ia->dev.device_cap_flags & service_cap))
		return IT_ERR_OP_NOT_SUPPORTED;
	if (!dto_evd(to_evd(req), ia)) {
		openrdma_dbg(ITAPI_LOG, "%s: arg %s: not a DTO SEVD of the IA",
			     fn, "request_sevd_handle");
		return IT_ERR_INVALID_REQ_EVD;
	}
	if (!dto_evd(to_evd(recv), ia)) {
		openrdma_dbg(ITAPI_LOG, "%s: arg %s: not a DTO SEVD of the IA",
			     fn, "recv_sevd_handle");
		return IT_ERR_INVALID_RECV_EVD;
	}
	return IT_SUCCESS;
}

/*
 * The checks both services end with (the attributes, ep_handle), then the
 * endpoint with the members they share; *ep_out is the caller's to finish
 * and hand to ep_create().
 */
static it_status_t ep_alloc(const char *fn, struct itapi_pz *pz,
			    it_transport_service_type_t service,
			    const it_ep_attributes_t *ep_attr,
			    struct itapi_srq *srq, it_evd_handle_t req,
			    it_evd_handle_t recv, it_ep_handle_t *ep_handle,
			    struct itapi_ep **ep_out)
{
	struct itapi_ep *ep;
	it_status_t st;

	st = attr_check(pz->obj.ia, ep_attr, service, srq);
	if (st)
		return st;
	if (!ep_handle) {
		openrdma_dbg(ITAPI_LOG, "%s: arg ep_handle: NULL", fn);
		return IT_ERR_FAULT;
	}
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return IT_ERR_RESOURCES;
	ep->obj.ia = pz->obj.ia;
	ep->pz = pz;
	ep->req_evd = to_evd(req);
	ep->recv_evd = to_evd(recv);
	ep->srq = srq;
	ep->service = service;
	ep->attr = *ep_attr;
	*ep_out = ep;
	return IT_SUCCESS;
}

OPENRDMA_EXPORT it_status_t it_ep_rc_create(it_pz_handle_t pz_handle,
					    it_evd_handle_t request_sevd_handle,
					    it_evd_handle_t recv_sevd_handle,
					    it_evd_handle_t connect_sevd_handle,
					    it_ep_rc_creation_flags_t flags,
					    const it_ep_attributes_t *ep_attr,
					    it_ep_handle_t *ep_handle)
{
	struct itapi_pz *pz = (struct itapi_pz *)pz_handle;
	struct itapi_evd *conn = to_evd(connect_sevd_handle);
	struct itapi_srq *srq = NULL;
	struct itapi_ia *ia;
	struct itapi_ep *ep;
	it_status_t st;

	st = create_check("it_ep_rc_create", pz, OPENRDMA_DEVICE_RC,
			  request_sevd_handle, recv_sevd_handle);
	if (st)
		return st;
	ia = pz->obj.ia;
	if (!itapi_evd_is(conn, IT_CM_MSG_EVENT_STREAM) || conn->obj.ia != ia) {
		itapi_arg_err("it_ep_rc_create", "connect_sevd_handle",
			      "not a CM message SEVD of the IA");
		return IT_ERR_INVALID_CONN_EVD;
	}
	if (flags & ~(unsigned int)RC_FLAGS) {
		itapi_arg_err("it_ep_rc_create", "flags", "0x%x",
			      (unsigned int)flags);
		return IT_ERR_INVALID_FLAGS;
	}
	if (!ep_attr) {
		itapi_arg_err("it_ep_rc_create", "ep_attr", "NULL");
		return IT_ERR_INVALID_EP_ATTR;
	}
	if (flags & IT_EP_SRQ) {
		if (!(ia->dev.device_cap_flags & OPENRDMA_DEVICE_SRQ))
			return IT_ERR_SRQ_NOT_SUPPORTED;
		srq = (struct itapi_srq *)ep_attr->srv.rc.srq;
		if (!itapi_valid(srq, IT_HANDLE_TYPE_SRQ) || srq->pz != pz) {
			itapi_arg_err("it_ep_rc_create", "ep_attr->srv.rc.srq",
				      "not an SRQ of the PZ");
			return IT_ERR_INVALID_SRQ;
		}
	}
	st = ep_alloc("it_ep_rc_create", pz, IT_RC_SERVICE, ep_attr, srq,
		      request_sevd_handle, recv_sevd_handle, ep_handle, &ep);
	if (st)
		return st;
	ep->conn_evd = conn;
	ep->attr.srv.rc.srq = (it_srq_handle_t)srq;
	ep->spigot_id = 0;
	atomic_init(&ep->state, IT_EP_STATE_UNCONNECTED);
	return ep_create(ep, ep_handle);
}

OPENRDMA_EXPORT it_status_t it_ep_ud_create(it_pz_handle_t pz_handle,
					    it_evd_handle_t request_sevd_handle,
					    it_evd_handle_t recv_sevd_handle,
					    const it_ep_attributes_t *ep_attr,
					    size_t spigot_id,
					    it_ep_handle_t *ep_handle)
{
	struct itapi_pz *pz = (struct itapi_pz *)pz_handle;
	struct itapi_ep *ep;
	it_status_t st;

	st = create_check("it_ep_ud_create", pz, OPENRDMA_DEVICE_UD,
			  request_sevd_handle, recv_sevd_handle);
	if (st)
		return st;
	if (!ep_attr) {
		itapi_arg_err("it_ep_ud_create", "ep_attr", "NULL");
		return IT_ERR_INVALID_EP_ATTR;
	}
	if (!itapi_spigot_valid(pz->obj.ia, spigot_id)) {
		itapi_arg_err("it_ep_ud_create", "spigot_id", "%zu", spigot_id);
		return IT_ERR_INVALID_SPIGOT;
	}
	st = ep_alloc("it_ep_ud_create", pz, IT_UD_SERVICE, ep_attr, NULL,
		      request_sevd_handle, recv_sevd_handle, ep_handle, &ep);
	if (st)
		return st;
	ep->spigot_id = spigot_id;
	ep->qkey = ep_attr->srv.ud.ep_info.ud_ep_key;
	atomic_init(&ep->state, IT_EP_STATE_UD_OPERATIONAL);
	return ep_create(ep, ep_handle);
}

void itapi_ep_destroy(struct itapi_ep *ep)
{
	struct itapi_ia *ia = ep->obj.ia;
	struct openrdma_cm_id *id;
	int ret;

	itapi_obj_fini(&ep->obj);
	pthread_mutex_lock(&ia->cm_lock);
	id = ep->cm.id;
	if (id)
		itapi_cm_ref_del(ia, &ep->cm);
	pthread_mutex_unlock(&ia->cm_lock);
	itapi_cm_ep_forget(ep);
	/* a connected peer is told, as by a disconnect */
	if (id) {
		ret = openrdma_cm_id_destroy(id);
		if (ret)
			openrdma_warn(ITAPI_LOG, "cm_id_destroy: %s",
				      openrdma_strerror(ret));
	}
	ep_tables_del(ep);
	itapi_qp_destroy(ep->qp);
	ep_queues_fini(ep);
	pthread_mutex_lock(&ia->lock);
	itapi_evd_cq_release(ep->req_evd, ep->cq_req_need);
	itapi_evd_cq_release(ep->recv_evd, ep->cq_recv_need);
	pthread_mutex_unlock(&ia->lock);
	ep_users(ep, false);
	free(ep);
}

OPENRDMA_EXPORT it_status_t it_ep_free(it_ep_handle_t ep_handle)
{
	struct itapi_ep *ep = to_ep(ep_handle);

	if (!itapi_valid(ep, IT_HANDLE_TYPE_EP)) {
		itapi_arg_err("it_ep_free", "ep_handle", "not an EP");
		return IT_ERR_INVALID_EP;
	}
	itapi_ep_destroy(ep);
	return IT_SUCCESS;
}

OPENRDMA_EXPORT it_status_t it_ep_reset(it_ep_handle_t ep_handle)
{
	struct itapi_ep *ep = to_ep(ep_handle);
	struct openrdma_cm_id *id = NULL;
	struct itapi_ia *ia;
	int state, ret;

	if (!itapi_valid(ep, IT_HANDLE_TYPE_EP)) {
		itapi_arg_err("it_ep_reset", "ep_handle", "not an EP");
		return IT_ERR_INVALID_EP;
	}
	if (ep->service != IT_RC_SERVICE)
		return IT_ERR_INVALID_EP_TYPE;
	ia = ep->obj.ia;
	pthread_mutex_lock(&ia->cm_lock);
	state = atomic_load(&ep->state);
	if (state != IT_EP_STATE_NONOPERATIONAL &&
	    state != IT_EP_STATE_UNCONNECTED) {
		pthread_mutex_unlock(&ia->cm_lock);
		return IT_ERR_INVALID_EP_STATE;
	}
	id = ep->cm.id;
	if (id)
		itapi_cm_ref_del(ia, &ep->cm);
	pthread_mutex_unlock(&ia->cm_lock);
	itapi_cm_ep_forget(ep);
	/* a connection attempt needs a new id (openrdma_cm(3)) */
	if (id)
		openrdma_cm_id_destroy(id);

	ret = itapi_ep_qp_init(ep);
	if (ret)
		return itapi_status(ret, IT_ERR_INVALID_EP_STATE);
	/* RESET dropped the outstanding requests without completions */
	core_spin_lock(&ep->sq_lock);
	atomic_store(&ep->stail, ep->shead);
	core_spin_unlock(&ep->sq_lock);
	if (!ep->srq) {
		core_spin_lock(&ep->rq_lock);
		atomic_store(&ep->rtail, atomic_load(&ep->rhead));
		core_spin_unlock(&ep->rq_lock);
	}
	memset(&ep->path, 0, sizeof(ep->path));
	atomic_store(&ep->state, IT_EP_STATE_UNCONNECTED);
	return IT_SUCCESS;
}

#define EP_QUERYABLE 0x0fffffffu

OPENRDMA_EXPORT it_status_t it_ep_query(it_ep_handle_t ep_handle,
					it_ep_param_mask_t mask,
					it_ep_param_t *params)
{
	struct itapi_ep *ep = to_ep(ep_handle);
	unsigned int m = (unsigned int)mask;
	it_ep_attributes_t *a;
	it_ep_param_t p;

	if (!itapi_valid(ep, IT_HANDLE_TYPE_EP)) {
		itapi_arg_err("it_ep_query", "ep_handle", "not an EP");
		return IT_ERR_INVALID_EP;
	}
	if (m & ~EP_QUERYABLE) {
		itapi_arg_err("it_ep_query", "mask", "0x%x", m);
		return IT_ERR_INVALID_MASK;
	}
	if (!params) {
		itapi_arg_err("it_ep_query", "params", "NULL");
		return IT_ERR_FAULT;
	}
	if (m & IT_EP_PARAM_ALL)
		m = EP_QUERYABLE;
	p = *params;
	a = &p.attr;
	if (m & IT_EP_PARAM_IA)
		p.ia = (it_ia_handle_t)ep->obj.ia;
	if (m & IT_EP_PARAM_SPIGOT)
		p.spigot_id = ep->spigot_id;
	if (m & IT_EP_PARAM_STATE) {
		if (ep->service == IT_RC_SERVICE)
			p.ep_state.rc =
				(it_ep_state_rc_t)atomic_load(&ep->state);
		else
			p.ep_state.ud =
				(it_ep_state_ud_t)atomic_load(&ep->state);
	}
	if (m & IT_EP_PARAM_SERV_TYPE)
		p.service_type = ep->service;
	if (m & IT_EP_PARAM_PATH) {
		pthread_mutex_lock(&ep->obj.ia->cm_lock);
		p.dst_path = ep->path;
		pthread_mutex_unlock(&ep->obj.ia->cm_lock);
	}
	if (m & IT_EP_PARAM_PZ)
		p.pz = (it_pz_handle_t)ep->pz;
	if (m & IT_EP_PARAM_REQ_SEVD)
		p.request_sevd = (it_evd_handle_t)ep->req_evd;
	if (m & IT_EP_PARAM_RECV_SEVD)
		p.recv_sevd = (it_evd_handle_t)ep->recv_evd;
	if (m & IT_EP_PARAM_CONN_SEVD)
		p.connect_sevd = (it_evd_handle_t)ep->conn_evd;
	if (m & IT_EP_PARAM_MAX_PAYLOAD)
		a->max_dto_payload_size = ep->attr.max_dto_payload_size;
	if (m & IT_EP_PARAM_MAX_REQ_DTO)
		a->max_request_dtos = ep->attr.max_request_dtos;
	if (m & IT_EP_PARAM_MAX_RECV_DTO)
		a->max_recv_dtos = ep->attr.max_recv_dtos;
	if (m & IT_EP_PARAM_MAX_SEND_SEG)
		a->max_send_segments = ep->attr.max_send_segments;
	if (m & IT_EP_PARAM_MAX_RECV_SEG)
		a->max_recv_segments = ep->attr.max_recv_segments;
	if (m & IT_EP_PARAM_PRIV_OPS_ENABLE)
		a->priv_ops_enable = IT_FALSE;
	if (ep->service == IT_UD_SERVICE) {
		if (m & IT_EP_PARAM_EP_ID)
			a->srv.ud.ep_info.ud_ep_id = ep->qpn;
		if (m & IT_EP_PARAM_EP_KEY)
			a->srv.ud.ep_info.ud_ep_key = ep->qkey;
		*params = p;
		return IT_SUCCESS;
	}
	if (m & IT_EP_PARAM_RDMA_RD_ENABLE)
		a->srv.rc.rdma_read_enable = ep->attr.srv.rc.rdma_read_enable;
	if (m & IT_EP_PARAM_RDMA_WR_ENABLE)
		a->srv.rc.rdma_write_enable = ep->attr.srv.rc.rdma_write_enable;
	if (m & IT_EP_PARAM_MAX_RDMA_READ_SEG)
		a->srv.rc.max_rdma_read_segments =
			ep->attr.srv.rc.max_rdma_read_segments;
	if (m & IT_EP_PARAM_MAX_RDMA_WRITE_SEG)
		a->srv.rc.max_rdma_write_segments =
			ep->attr.srv.rc.max_rdma_write_segments;
	if (m & IT_EP_PARAM_MAX_IRD)
		a->srv.rc.rdma_read_ird = ep->attr.srv.rc.rdma_read_ird;
	if (m & IT_EP_PARAM_MAX_ORD)
		a->srv.rc.rdma_read_ord = ep->attr.srv.rc.rdma_read_ord;
	if (m & IT_EP_PARAM_SRQ)
		a->srv.rc.srq = (it_srq_handle_t)ep->srq;
	if (m & IT_EP_PARAM_SOFT_HI_WATERMARK)
		a->srv.rc.soft_hi_watermark = ep->attr.srv.rc.soft_hi_watermark;
	if (m & IT_EP_PARAM_HARD_HI_WATERMARK)
		a->srv.rc.hard_hi_watermark = ep->attr.srv.rc.hard_hi_watermark;
	if (m & IT_EP_PARAM_ATOMICS_ENABLE)
		a->srv.rc.atomics_enable = ep->attr.srv.rc.atomics_enable;
	*params = p;
	return IT_SUCCESS;
}

#define EP_RC_MODIFIABLE                                           \
	(IT_EP_PARAM_RDMA_RD_ENABLE | IT_EP_PARAM_RDMA_WR_ENABLE | \
	 IT_EP_PARAM_ATOMICS_ENABLE | IT_EP_PARAM_MAX_IRD |        \
	 IT_EP_PARAM_MAX_ORD)
#define EP_RESIZE                                                         \
	(IT_EP_PARAM_MAX_PAYLOAD | IT_EP_PARAM_MAX_REQ_DTO |              \
	 IT_EP_PARAM_MAX_RECV_DTO | IT_EP_PARAM_MAX_SEND_SEG |            \
	 IT_EP_PARAM_MAX_RECV_SEG | IT_EP_PARAM_MAX_RDMA_READ_SEG |       \
	 IT_EP_PARAM_MAX_RDMA_WRITE_SEG | IT_EP_PARAM_SOFT_HI_WATERMARK | \
	 IT_EP_PARAM_HARD_HI_WATERMARK | IT_EP_PARAM_PRIV_OPS_ENABLE)

/* Applies the RDMA enables to the QP: any state but RESET and ERR. */
static it_status_t ep_modify_access(struct itapi_ep *ep)
{
	struct openrdma_qp_attr attr;
	int ret, state = atomic_load(&ep->qp->state);

	if (state == OPENRDMA_QPS_ERR || state == OPENRDMA_QPS_RESET)
		return IT_SUCCESS;
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = (enum openrdma_qp_state)state;
	attr.qp_access_flags = ep_access(ep);
	ret = openrdma_qp_modify(ep->qp, &attr,
				 OPENRDMA_QP_STATE | OPENRDMA_QP_ACCESS_FLAGS);
	return itapi_status(ret, IT_ERR_INVALID_EP_STATE);
}

OPENRDMA_EXPORT it_status_t it_ep_modify(it_ep_handle_t ep_handle,
					 it_ep_param_mask_t mask,
					 const it_ep_attributes_t *ep_attr)
{
	struct itapi_ep *ep = to_ep(ep_handle);
	unsigned int m = (unsigned int)mask;
	const struct openrdma_device_attr *dev;
	it_rc_only_attributes_t old;
	const it_rc_only_attributes_t *rc;
	struct openrdma_qp_attr attr;
	it_status_t st;
	int ret;

	if (!itapi_valid(ep, IT_HANDLE_TYPE_EP)) {
		itapi_arg_err("it_ep_modify", "ep_handle", "not an EP");
		return IT_ERR_INVALID_EP;
	}
	if (!ep_attr) {
		itapi_arg_err("it_ep_modify", "ep_attr", "NULL");
		return IT_ERR_FAULT;
	}
	if (m & EP_RESIZE)
		return IT_ERR_OP_NOT_SUPPORTED;
	dev = &ep->obj.ia->dev;
	if (ep->service == IT_UD_SERVICE) {
		if (!m || (m & ~(unsigned int)IT_EP_PARAM_EP_KEY))
			return IT_ERR_INVALID_MASK;
		if (ep_attr->srv.ud.ep_info.ud_ep_key & 0x80000000u)
			return IT_ERR_INVALID_EP_KEY;
		memset(&attr, 0, sizeof(attr));
		attr.qp_state =
			(enum openrdma_qp_state)atomic_load(&ep->qp->state);
		attr.qkey = ep_attr->srv.ud.ep_info.ud_ep_key;
		ret = openrdma_qp_modify(ep->qp, &attr,
					 OPENRDMA_QP_STATE | OPENRDMA_QP_QKEY);
		if (ret)
			return itapi_status(ret, IT_ERR_INVALID_EP_STATE);
		ep->qkey = attr.qkey;
		return IT_SUCCESS;
	}
	if (!m || (m & ~(unsigned int)EP_RC_MODIFIABLE))
		return IT_ERR_INVALID_MASK;
	rc = &ep_attr->srv.rc;
	if ((m & IT_EP_PARAM_MAX_IRD) &&
	    rc->rdma_read_ird > (uint32_t)dev->max_qp_rd_atom)
		return IT_ERR_RESOURCE_IRD;
	if ((m & IT_EP_PARAM_MAX_ORD) &&
	    rc->rdma_read_ord > (uint32_t)dev->max_qp_init_rd_atom)
		return IT_ERR_RESOURCE_ORD;
	if ((m & IT_EP_PARAM_ATOMICS_ENABLE) && rc->atomics_enable &&
	    dev->atomic_cap == OPENRDMA_ATOMIC_NONE)
		return IT_ERR_OP_NOT_SUPPORTED;
	/* IRD and ORD are negotiated at connection: set them before */
	if ((m & (IT_EP_PARAM_MAX_IRD | IT_EP_PARAM_MAX_ORD)) &&
	    atomic_load(&ep->state) != IT_EP_STATE_UNCONNECTED)
		return IT_ERR_INVALID_EP_STATE;

	old = ep->attr.srv.rc;
	if (m & IT_EP_PARAM_RDMA_RD_ENABLE)
		ep->attr.srv.rc.rdma_read_enable = rc->rdma_read_enable;
	if (m & IT_EP_PARAM_RDMA_WR_ENABLE)
		ep->attr.srv.rc.rdma_write_enable = rc->rdma_write_enable;
	if (m & IT_EP_PARAM_ATOMICS_ENABLE)
		ep->attr.srv.rc.atomics_enable = rc->atomics_enable;
	if (m & IT_EP_PARAM_MAX_IRD)
		ep->attr.srv.rc.rdma_read_ird = rc->rdma_read_ird;
	if (m & IT_EP_PARAM_MAX_ORD)
		ep->attr.srv.rc.rdma_read_ord = rc->rdma_read_ord;
	if (m & (IT_EP_PARAM_RDMA_RD_ENABLE | IT_EP_PARAM_RDMA_WR_ENABLE |
		 IT_EP_PARAM_ATOMICS_ENABLE)) {
		st = ep_modify_access(ep);
		if (st) {
			ep->attr.srv.rc = old;
			return st;
		}
	}
	return IT_SUCCESS;
}
