/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Endpoints: a QP of the core, its send ring and receive slots, and the
 * DAT connection state.  The QP exists once the EP has a PZ; it waits in
 * INIT, where receives can be posted, until the CM connects it.  Reset
 * returns it to INIT with new work-request keys, so that completions of
 * the old connection are dropped.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openrdma/errno.h>
#include <openrdma/log.h>
#include <openrdma/transport.h>

#include "api/dat/provider.h"
#include "api/dat/slots.h"
#include "core/core.h"

#define EP_DEFAULT_DTOS 64
#define EP_DEFAULT_IOV 4
#define EP_DEFAULT_RDMA_READ 4
/* The Q_Key of every UD EP: one per provider, like DAPL's. */
#define EP_UD_QKEY 0x11111111u

#define RECV_FLAGS                                           \
	((unsigned int)(DAT_COMPLETION_SOLICITED_WAIT_FLAG | \
			DAT_COMPLETION_EVD_THRESHOLD_FLAG))
#define REQUEST_FLAGS                                        \
	((unsigned int)(DAT_COMPLETION_SUPPRESS_FLAG |       \
			DAT_COMPLETION_SOLICITED_WAIT_FLAG | \
			DAT_COMPLETION_UNSIGNALLED_FLAG |    \
			DAT_COMPLETION_BARRIER_FENCE_FLAG))

struct datp_ep *datp_ep_get(DAT_EP_HANDLE handle)
{
	return (struct datp_ep *)datp_obj_get(handle, DATP_EP);
}

void datp_ep_count(struct datp_ep *ep, DAT_EP_COUNTERS which, uint64_t bytes)
{
	atomic_fetch_add_explicit(&ep->counters[which], 1,
				  memory_order_relaxed);
	/* each counter of operations is followed by its byte counter */
	if (which == DCNT_EP_POST_SEND || which == DCNT_EP_POST_SEND_UD ||
	    which == DCNT_EP_POST_RECV || which == DCNT_EP_POST_WRITE ||
	    which == DCNT_EP_POST_WRITE_IMM || which == DCNT_EP_POST_READ ||
	    which == DCNT_EP_RECV || which == DCNT_EP_RECV_UD ||
	    which == DCNT_EP_RECV_IMM || which == DCNT_EP_RECV_RDMA_IMM)
		atomic_fetch_add_explicit(&ep->counters[which + 1], bytes,
					  memory_order_relaxed);
}

static DAT_COUNT min_count(DAT_COUNT a, int b)
{
	return a < b ? a : (DAT_COUNT)b;
}

static DAT_SEG_LENGTH seg_max(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (DAT_SEG_LENGTH)v;
}

static void attr_default(struct datp_ia *ia, DAT_EP_ATTR *a)
{
	const struct openrdma_device_attr *d = &ia->dev_attr;

	memset(a, 0, sizeof(*a));
	a->service_type = DAT_SERVICE_TYPE_RC;
	a->max_message_size = seg_max(d->max_msg_size);
	a->max_rdma_size = seg_max(d->max_msg_size);
	a->qos = DAT_QOS_BEST_EFFORT;
	a->max_recv_dtos = min_count(EP_DEFAULT_DTOS, d->max_qp_wr);
	a->max_request_dtos = min_count(EP_DEFAULT_DTOS, d->max_qp_wr);
	a->max_recv_iov = min_count(EP_DEFAULT_IOV, d->max_sge);
	a->max_request_iov = min_count(EP_DEFAULT_IOV, d->max_sge);
	a->max_rdma_read_in =
		min_count(EP_DEFAULT_RDMA_READ, d->max_qp_rd_atom);
	a->max_rdma_read_out =
		min_count(EP_DEFAULT_RDMA_READ, d->max_qp_init_rd_atom);
	a->srq_soft_hw = DAT_HW_DEFAULT;
	a->max_rdma_read_iov = min_count(EP_DEFAULT_IOV, d->max_sge_rd);
	a->max_rdma_write_iov = min_count(EP_DEFAULT_IOV, d->max_sge);
}

/* Checks the consumer's attributes; a 0 size means the device's limit. */
static DAT_RETURN attr_check(struct datp_ia *ia, const DAT_EP_ATTR *in,
			     DAT_EP_ATTR *out, DAT_RETURN_SUBTYPE arg,
			     const char *fn)
{
	const struct openrdma_device_attr *d = &ia->dev_attr;
	DAT_EP_ATTR a = *in;

#define ATTR_BAD(cond, ...)                                              \
	do {                                                             \
		if (cond)                                                \
			return datp_fail(-OPENRDMA_EINVAL, arg, fn,      \
					 "ep_attributes: " __VA_ARGS__); \
	} while (0)

	if (a.service_type == (DAT_SERVICE_TYPE)DAT_IB_SERVICE_TYPE_UD &&
	    !(d->device_cap_flags & OPENRDMA_DEVICE_UD))
		return datp_fail(-OPENRDMA_EOPNOTSUPP, DAT_NO_SUBTYPE, fn,
				 "%s has no UD", ia->entry->iface);
	ATTR_BAD(a.service_type != DAT_SERVICE_TYPE_RC &&
			 a.service_type !=
				 (DAT_SERVICE_TYPE)DAT_IB_SERVICE_TYPE_UD,
		 "service_type %d", a.service_type);
	if (!a.max_message_size)
		a.max_message_size = seg_max(d->max_msg_size);
	if (!a.max_rdma_size)
		a.max_rdma_size = seg_max(d->max_msg_size);
	ATTR_BAD(a.max_message_size > d->max_msg_size,
		 "max_message_size %u > %llu", a.max_message_size,
		 (unsigned long long)d->max_msg_size);
	ATTR_BAD((unsigned int)a.qos & ~0x0fu, "qos 0x%x", a.qos);
	ATTR_BAD((unsigned int)a.recv_completion_flags & ~RECV_FLAGS,
		 "recv_completion_flags 0x%x", a.recv_completion_flags);
	ATTR_BAD((unsigned int)a.request_completion_flags & ~REQUEST_FLAGS,
		 "request_completion_flags 0x%x", a.request_completion_flags);
	ATTR_BAD(a.max_recv_dtos < 0 || a.max_recv_dtos > d->max_qp_wr,
		 "max_recv_dtos %d", a.max_recv_dtos);
	ATTR_BAD(a.max_request_dtos < 0 || a.max_request_dtos > d->max_qp_wr,
		 "max_request_dtos %d", a.max_request_dtos);
	ATTR_BAD(a.max_recv_iov < 0 || a.max_recv_iov > d->max_sge,
		 "max_recv_iov %d", a.max_recv_iov);
	ATTR_BAD(a.max_request_iov < 0 || a.max_request_iov > d->max_sge,
		 "max_request_iov %d", a.max_request_iov);
	ATTR_BAD(a.max_rdma_read_in < 0 ||
			 a.max_rdma_read_in > d->max_qp_rd_atom,
		 "max_rdma_read_in %d", a.max_rdma_read_in);
	ATTR_BAD(a.max_rdma_read_out < 0 ||
			 a.max_rdma_read_out > d->max_qp_init_rd_atom,
		 "max_rdma_read_out %d", a.max_rdma_read_out);
	ATTR_BAD(a.max_rdma_read_iov < 0 || a.max_rdma_read_iov > d->max_sge_rd,
		 "max_rdma_read_iov %d", a.max_rdma_read_iov);
	ATTR_BAD(a.max_rdma_write_iov < 0 || a.max_rdma_write_iov > d->max_sge,
		 "max_rdma_write_iov %d", a.max_rdma_write_iov);
	ATTR_BAD(a.ep_transport_specific_count < 0 ||
			 (a.ep_transport_specific_count &&
			  !a.ep_transport_specific),
		 "ep_transport_specific_count %d",
		 a.ep_transport_specific_count);
	ATTR_BAD(a.ep_provider_specific_count < 0 ||
			 (a.ep_provider_specific_count &&
			  !a.ep_provider_specific),
		 "ep_provider_specific_count %d", a.ep_provider_specific_count);
#undef ATTR_BAD
	/* nothing specific is understood: the lists are not kept */
	a.ep_transport_specific_count = 0;
	a.ep_transport_specific = NULL;
	a.ep_provider_specific_count = 0;
	a.ep_provider_specific = NULL;
	*out = a;
	return DAT_SUCCESS;
}

static int max3(int a, int b, int c)
{
	int m = a > b ? a : b;

	return m > c ? m : c;
}

/* Grows a shared CQ so that every queue reporting to it fits. */
static void evd_cq_reserve(struct datp_evd *evd, int n)
{
	int need, ret;

	if (!evd || !evd->cq || n <= 0)
		return;
	need = n + evd->cq->cqe;
	if (need > evd->obj.ia->dev_attr.max_cqe)
		return;
	ret = openrdma_cq_resize(evd->cq, need);
	if (ret)
		openrdma_dbg("dat", "cq_resize %d: %s", need,
			     openrdma_strerror(ret));
}

static int qp_init_state(struct datp_ep *ep)
{
	struct openrdma_qp_attr attr = { 0 };
	int mask =
		OPENRDMA_QP_STATE | OPENRDMA_QP_PKEY_INDEX | OPENRDMA_QP_PORT;
	int ret;

	attr.qp_state = OPENRDMA_QPS_INIT;
	attr.port_num =
		ep->obj.ia->dev->port_num ? ep->obj.ia->dev->port_num : 1;
	if (ep->kind == DATP_EP_UD) {
		attr.qkey = ep->qkey;
		mask |= OPENRDMA_QP_QKEY;
	} else {
		attr.qp_access_flags = OPENRDMA_ACCESS_REMOTE_WRITE |
				       OPENRDMA_ACCESS_REMOTE_READ |
				       OPENRDMA_ACCESS_REMOTE_ATOMIC;
		mask |= OPENRDMA_QP_ACCESS_FLAGS;
	}
	ret = openrdma_qp_modify(ep->qp, &attr, mask);
	if (ret || ep->kind != DATP_EP_UD)
		return ret;
	return core_qp_ud_ready(ep->qp);
}

static void ep_qp_forget(struct datp_ep *ep)
{
	struct datp_ia *ia = ep->obj.ia;

	pthread_mutex_lock(&ia->lock);
	if (ep->qp)
		HASH_DELETE(hh_qpn, ia->qp_eps, ep);
	pthread_mutex_unlock(&ia->lock);
	datp_key_del(ia, ep->key);
	ep->key = 0;
}

/* The QP's attributes: those of the EP, over its EVDs' CQs. */
static void ep_qp_init_attr(struct datp_ep *ep, struct openrdma_cq *null_cq,
			    struct openrdma_qp_init_attr *init)
{
	memset(init, 0, sizeof(*init));
	init->qp_context = ep;
	init->send_cq = ep->req_evd ? ep->req_evd->cq : null_cq;
	init->recv_cq = ep->recv_evd ? ep->recv_evd->cq : null_cq;
	init->srq = ep->srq ? ep->srq->srq : NULL;
	init->qp_type =
		ep->kind == DATP_EP_UD ? OPENRDMA_QPT_UD : OPENRDMA_QPT_RC;
	init->cap.max_send_wr =
		ep->attr.max_request_dtos > 0 ? ep->attr.max_request_dtos : 1;
	init->cap.max_recv_wr =
		ep->attr.max_recv_dtos > 0 ? ep->attr.max_recv_dtos : 1;
	if (ep->srq)
		init->cap.max_recv_wr = 0;
	init->cap.max_send_sge =
		max3(ep->attr.max_request_iov, ep->attr.max_rdma_read_iov,
		     ep->attr.max_rdma_write_iov);
	if (!init->cap.max_send_sge)
		init->cap.max_send_sge = 1;
	init->cap.max_recv_sge =
		ep->attr.max_recv_iov > 0 ? ep->attr.max_recv_iov : 1;
}

int datp_ep_qp_make(struct datp_ep *ep)
{
	struct datp_ia *ia = ep->obj.ia;
	struct openrdma_qp_init_attr init;
	struct openrdma_cq *null_cq = NULL;
	uint32_t sq_cap, rq_cap;
	int ret;

	if (ep->qp || !ep->pz)
		return 0;
	if (!ep->req_evd || !ep->recv_evd) {
		ret = datp_ia_null_cq(ia, &null_cq);
		if (ret)
			return ret;
	}
	ep_qp_init_attr(ep, null_cq, &init);
	sq_cap = init.cap.max_send_wr;
	rq_cap = ep->attr.max_recv_dtos > 0 ? ep->attr.max_recv_dtos : 1;

	ret = datp_sq_init(&ep->sq, sq_cap, init.cap.max_send_sge);
	if (ret)
		return ret;
	ret = datp_rq_init(&ep->rq, rq_cap, init.cap.max_recv_sge);
	if (ret)
		goto err_sq;
	ret = openrdma_qp_create(ep->pz->pd, &init, &ep->qp);
	if (ret)
		goto err_rq;
	ret = qp_init_state(ep);
	if (ret)
		goto err_qp;
	ep->key = datp_key_add(ia, DATP_KEY_EP, ep);
	if (!ep->key) {
		ret = -OPENRDMA_ENOMEM;
		goto err_qp;
	}
	ep->qpn = ep->qp->qp_num;
	pthread_mutex_lock(&ia->lock);
	HASH_ADD(hh_qpn, ia->qp_eps, qpn, sizeof(ep->qpn), ep);
	pthread_mutex_unlock(&ia->lock);
	evd_cq_reserve(ep->req_evd, (int)sq_cap);
	if (!ep->srq)
		evd_cq_reserve(ep->recv_evd, (int)rq_cap);
	return 0;

err_qp:
	datp_qp_destroy(ep->qp);
	ep->qp = NULL;
err_rq:
	datp_rq_fini(&ep->rq);
err_sq:
	datp_sq_fini(&ep->sq);
	return ret;
}

/*
 * A device that cannot return a QP to RESET (siw: openrdma_verbs_transport(7))
 * resets an RC EP by a new QP of the same size, in RESET, under a new
 * number; the old one's queued completions no longer find the EP.
 */
static int ep_qp_replace(struct datp_ep *ep)
{
	struct datp_ia *ia = ep->obj.ia;
	struct openrdma_qp_init_attr init;
	struct openrdma_cq *null_cq = NULL;
	struct openrdma_qp *old = ep->qp, *qp;
	int ret;

	if (!ep->req_evd || !ep->recv_evd) {
		ret = datp_ia_null_cq(ia, &null_cq);
		if (ret)
			return ret;
	}
	ep_qp_init_attr(ep, null_cq, &init);
	ret = openrdma_qp_create(ep->pz->pd, &init, &qp);
	if (ret)
		return ret;
	pthread_mutex_lock(&ia->lock);
	HASH_DELETE(hh_qpn, ia->qp_eps, ep);
	ep->qp = qp;
	ep->qpn = qp->qp_num;
	HASH_ADD(hh_qpn, ia->qp_eps, qpn, sizeof(ep->qpn), ep);
	pthread_mutex_unlock(&ia->lock);
	datp_qp_destroy(old);
	return 0;
}

static void ep_qp_free(struct datp_ep *ep)
{
	if (!ep->qp)
		return;
	ep_qp_forget(ep);
	datp_qp_destroy(ep->qp);
	ep->qp = NULL;
	datp_rq_fini(&ep->rq);
	datp_sq_fini(&ep->sq);
}

int datp_ep_qp_recycle(struct datp_ep *ep)
{
	struct datp_ia *ia = ep->obj.ia;
	struct openrdma_qp_attr attr = { .qp_state = OPENRDMA_QPS_RESET };
	int ret;

	if (!ep->qp)
		return 0;
	/* completions of the old queues must not match the new slots */
	datp_key_del(ia, ep->key);
	ep->key = 0;
	ret = openrdma_qp_modify(ep->qp, &attr, OPENRDMA_QP_STATE);
	if (ret == -OPENRDMA_EOPNOTSUPP && ep->kind != DATP_EP_UD)
		ret = ep_qp_replace(ep);
	if (ret)
		return ret;
	datp_sq_reset(&ep->sq);
	pthread_mutex_lock(&ep->rq.lock);
	datp_rq_reset(&ep->rq);
	pthread_mutex_unlock(&ep->rq.lock);
	ep->key = datp_key_add(ia, DATP_KEY_EP, ep);
	if (!ep->key)
		return -OPENRDMA_ENOMEM;
	return qp_init_state(ep);
}

/* EPs without a PZ or connection EVD are unconfigured. */
static bool ep_configured(struct datp_ep *ep)
{
	return ep->pz && ep->conn_evd;
}

static void ep_link(struct datp_ep *ep)
{
	struct datp_ia *ia = ep->obj.ia;

	if (ep->pz)
		datp_use(&ep->pz->obj);
	if (ep->recv_evd)
		datp_use(&ep->recv_evd->obj);
	if (ep->req_evd)
		datp_use(&ep->req_evd->obj);
	if (ep->conn_evd)
		datp_use(&ep->conn_evd->obj);
	if (ep->srq) {
		datp_use(&ep->srq->obj);
		atomic_fetch_add(&ia->srq_eps, 1);
	}
}

static void ep_unlink(struct datp_ep *ep)
{
	struct datp_ia *ia = ep->obj.ia;

	if (ep->pz)
		datp_unuse(&ep->pz->obj);
	if (ep->recv_evd)
		datp_unuse(&ep->recv_evd->obj);
	if (ep->req_evd)
		datp_unuse(&ep->req_evd->obj);
	if (ep->conn_evd)
		datp_unuse(&ep->conn_evd->obj);
	if (ep->srq) {
		datp_unuse(&ep->srq->obj);
		atomic_fetch_sub(&ia->srq_eps, 1);
	}
}

static int ep_alloc(struct datp_ia *ia, struct datp_ep **ep_out)
{
	struct datp_ep *ep;
	int ret;

	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -OPENRDMA_ENOMEM;
	ret = -pthread_mutex_init(&ep->lock, NULL);
	if (ret) {
		free(ep);
		return ret;
	}
	ep->obj.ia = ia;
	ep->timer_fd = -1;
	ep->soft_hw = DAT_WATERMARK_INFINITE;
	ep->hard_hw = DAT_WATERMARK_INFINITE;
	ep->qkey = EP_UD_QKEY;
	attr_default(ia, &ep->attr);
	*ep_out = ep;
	return 0;
}

/* Makes the EP a live handle of its IA. */
static int ep_publish(struct datp_ep *ep)
{
	struct datp_ia *ia = ep->obj.ia;
	int ret;

	ret = datp_obj_init(&ep->obj, ia, DATP_EP);
	if (ret)
		return ret;
	pthread_mutex_lock(&ia->lock);
	ep->self = ep;
	HASH_ADD(hh_live, ia->live_eps, self, sizeof(ep->self), ep);
	pthread_mutex_unlock(&ia->lock);
	datp_ia_count(ia, DCNT_IA_EP_CREATE);
	return 0;
}

int datp_ep_alloc_tentative(struct datp_ia *ia, struct datp_ep **ep_out)
{
	struct datp_ep *ep;
	int ret;

	ret = ep_alloc(ia, &ep);
	if (ret)
		return ret;
	atomic_init(&ep->state, DAT_EP_STATE_UNCONFIGURED_TENTATIVE);
	ret = ep_publish(ep);
	if (ret) {
		pthread_mutex_destroy(&ep->lock);
		free(ep);
		return ret;
	}
	*ep_out = ep;
	return 0;
}

static DAT_RETURN ep_create(DAT_IA_HANDLE ia_handle, DAT_PZ_HANDLE pz_handle,
			    DAT_EVD_HANDLE recv_evd_handle,
			    DAT_EVD_HANDLE request_evd_handle,
			    DAT_EVD_HANDLE connect_evd_handle,
			    DAT_SRQ_HANDLE srq_handle,
			    const DAT_EP_ATTR *ep_attributes,
			    DAT_EP_HANDLE *ep_handle, const char *fn)
{
	struct datp_ia *ia = datp_ia_get(ia_handle);
	DAT_RETURN_SUBTYPE attr_arg =
		srq_handle ? DAT_INVALID_ARG7 : DAT_INVALID_ARG6;
	struct datp_evd *recv, *req, *conn;
	struct datp_srq *srq = NULL;
	struct datp_pz *pz = NULL;
	struct datp_ep *ep;
	DAT_EP_ATTR attr;
	DAT_RETURN dret;
	int ret;

	if (!ia)
		return datp_fail(-OPENRDMA_EBADHANDLE, DAT_INVALID_HANDLE_IA,
				 fn, "ia %p", ia_handle);
	if (pz_handle) {
		pz = datp_pz_get(pz_handle);
		if (!pz || pz->obj.ia != ia)
			return datp_fail(-OPENRDMA_EBADHANDLE,
					 DAT_INVALID_HANDLE_PZ, fn, "pz %p",
					 pz_handle);
	}
	dret = datp_evd_arg(ia, recv_evd_handle, DAT_EVD_DTO_FLAG,
			    DAT_INVALID_HANDLE_EVD_RECV, fn, &recv);
	if (dret == DAT_SUCCESS)
		dret = datp_evd_arg(ia, request_evd_handle, DAT_EVD_DTO_FLAG,
				    DAT_INVALID_HANDLE_EVD_REQUEST, fn, &req);
	if (dret == DAT_SUCCESS)
		dret = datp_evd_arg(ia, connect_evd_handle,
				    DAT_EVD_CONNECTION_FLAG,
				    DAT_INVALID_HANDLE_EVD_CONN, fn, &conn);
	if (dret != DAT_SUCCESS)
		return dret;
	if (srq_handle) {
		srq = datp_srq_get(srq_handle);
		if (!srq || srq->obj.ia != ia)
			return datp_fail(-OPENRDMA_EBADHANDLE,
					 DAT_INVALID_HANDLE_SRQ, fn, "srq %p",
					 srq_handle);
		if (!pz || srq->pz != pz)
			return datp_fail(-OPENRDMA_EINVAL, DAT_INVALID_ARG2, fn,
					 "the PZ must be the SRQ's");
	}
	if (ep_attributes) {
		dret = attr_check(ia, ep_attributes, &attr, attr_arg, fn);
		if (dret != DAT_SUCCESS)
			return dret;
	} else {
		attr_default(ia, &attr);
	}
	if (!ep_handle)
		return datp_fail(-OPENRDMA_EINVAL,
				 srq_handle ? DAT_INVALID_ARG8 :
					      DAT_INVALID_ARG7,
				 fn, "ep_handle: NULL");

	ret = ep_alloc(ia, &ep);
	if (ret)
		return datp_ret(ret, DAT_RESOURCE_MEMORY);
	ep->attr = attr;
	ep->kind = attr.service_type == DAT_SERVICE_TYPE_RC ? DATP_EP_RC :
							      DATP_EP_UD;
	ep->pz = pz;
	ep->recv_evd = recv;
	ep->req_evd = req;
	ep->conn_evd = conn;
	ep->srq = srq;
	ep->soft_hw = attr.srq_soft_hw;
	ret = datp_ep_qp_make(ep);
	if (ret)
		goto err_free;
	atomic_init(&ep->state, ep_configured(ep) ?
					DAT_EP_STATE_UNCONNECTED :
					DAT_EP_STATE_UNCONFIGURED_UNCONNECTED);
	ret = ep_publish(ep);
	if (ret)
		goto err_qp;
	ep_link(ep);
	*ep_handle = ep;
	return DAT_SUCCESS;

err_qp:
	ep_qp_free(ep);
err_free:
	pthread_mutex_destroy(&ep->lock);
	free(ep);
	return datp_fail(ret, DAT_RESOURCE_TEP, fn, "QP");
}

DAT_RETURN datp_ep_create(DAT_IA_HANDLE ia_handle, DAT_PZ_HANDLE pz_handle,
			  DAT_EVD_HANDLE recv_evd_handle,
			  DAT_EVD_HANDLE request_evd_handle,
			  DAT_EVD_HANDLE connect_evd_handle,
			  const DAT_EP_ATTR *ep_attributes,
			  DAT_EP_HANDLE *ep_handle)
{
	return ep_create(ia_handle, pz_handle, recv_evd_handle,
			 request_evd_handle, connect_evd_handle, NULL,
			 ep_attributes, ep_handle, __func__);
}

DAT_RETURN datp_ep_create_with_srq(
	DAT_IA_HANDLE ia_handle, DAT_PZ_HANDLE pz_handle,
	DAT_EVD_HANDLE recv_evd_handle, DAT_EVD_HANDLE request_evd_handle,
	DAT_EVD_HANDLE connect_evd_handle, DAT_SRQ_HANDLE srq_handle,
	const DAT_EP_ATTR *ep_attributes, DAT_EP_HANDLE *ep_handle)
{
	if (!srq_handle)
		return DATP_HANDLE(DAT_INVALID_HANDLE_SRQ, "srq: NULL");
	return ep_create(ia_handle, pz_handle, recv_evd_handle,
			 request_evd_handle, connect_evd_handle, srq_handle,
			 ep_attributes, ep_handle, __func__);
}

static void param_fill(struct datp_ep *ep, DAT_EP_PARAM *p)
{
	memset(p, 0, sizeof(*p));
	p->ia_handle = ep->obj.ia;
	p->ep_state = datp_ep_state(ep);
	p->comm.domain = ep->obj.ia->addr.ss_family;
	p->comm.type = SOCK_STREAM;
	p->local_ia_address_ptr = (DAT_IA_ADDRESS_PTR)&ep->obj.ia->addr;
	p->local_port_qual = ep->local_port;
	p->remote_ia_address_ptr = (DAT_IA_ADDRESS_PTR)&ep->remote_addr;
	p->remote_port_qual = ep->remote_port;
	p->pz_handle = ep->pz;
	p->recv_evd_handle = ep->recv_evd;
	p->request_evd_handle = ep->req_evd;
	p->connect_evd_handle = ep->conn_evd;
	p->srq_handle = ep->srq;
	p->ep_attr = ep->attr;
}

DAT_RETURN datp_ep_query(DAT_EP_HANDLE ep_handle, DAT_EP_PARAM_MASK mask,
			 DAT_EP_PARAM *param)
{
	struct datp_ep *ep = datp_ep_get(ep_handle);
	DAT_EP_PARAM p;

	if (!ep)
		return DATP_HANDLE(DAT_INVALID_HANDLE_EP, "ep %p", ep_handle);
	if (mask & ~DAT_EP_FIELD_ALL)
		return DATP_ARG(DAT_INVALID_ARG2, "ep_param_mask 0x%llx",
				(unsigned long long)mask);
	if (!param)
		return DATP_ARG(DAT_INVALID_ARG3, "ep_param: NULL");
	pthread_mutex_lock(&ep->lock);
	param_fill(ep, &p);
	pthread_mutex_unlock(&ep->lock);
	*param = p;
	return DAT_SUCCESS;
}

/* The states in which an EP may change its PZ, EVDs and attributes. */
static bool ep_modifiable(DAT_EP_STATE s)
{
	switch (s) {
	case DAT_EP_STATE_UNCONNECTED:
	case DAT_EP_STATE_UNCONFIGURED_UNCONNECTED:
	case DAT_EP_STATE_RESERVED:
	case DAT_EP_STATE_UNCONFIGURED_RESERVED:
	case DAT_EP_STATE_PASSIVE_CONNECTION_PENDING:
	case DAT_EP_STATE_UNCONFIGURED_PASSIVE:
	case DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING:
	case DAT_EP_STATE_UNCONFIGURED_TENTATIVE:
		return true;
	default:
		return false;
	}
}

/* The configured or unconfigured twin of a state. */
static DAT_EP_STATE state_configured(DAT_EP_STATE s, bool configured)
{
	switch (s) {
	case DAT_EP_STATE_UNCONNECTED:
	case DAT_EP_STATE_UNCONFIGURED_UNCONNECTED:
		return configured ? DAT_EP_STATE_UNCONNECTED :
				    DAT_EP_STATE_UNCONFIGURED_UNCONNECTED;
	case DAT_EP_STATE_RESERVED:
	case DAT_EP_STATE_UNCONFIGURED_RESERVED:
		return configured ? DAT_EP_STATE_RESERVED :
				    DAT_EP_STATE_UNCONFIGURED_RESERVED;
	case DAT_EP_STATE_PASSIVE_CONNECTION_PENDING:
	case DAT_EP_STATE_UNCONFIGURED_PASSIVE:
		return configured ? DAT_EP_STATE_PASSIVE_CONNECTION_PENDING :
				    DAT_EP_STATE_UNCONFIGURED_PASSIVE;
	case DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING:
	case DAT_EP_STATE_UNCONFIGURED_TENTATIVE:
		return configured ? DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING :
				    DAT_EP_STATE_UNCONFIGURED_TENTATIVE;
	default:
		return s;
	}
}

#define MODIFIABLE_FIELDS                                                    \
	(DAT_EP_FIELD_PZ_HANDLE | DAT_EP_FIELD_RECV_EVD_HANDLE |             \
	 DAT_EP_FIELD_REQUEST_EVD_HANDLE | DAT_EP_FIELD_CONNECT_EVD_HANDLE | \
	 DAT_EP_FIELD_EP_ATTR_ALL)
/* Changes that a QP cannot take in place: it is made again. */
#define QP_FIELDS (MODIFIABLE_FIELDS & ~DAT_EP_FIELD_CONNECT_EVD_HANDLE)

static DAT_RETURN modify_args(struct datp_ep *ep, DAT_EP_PARAM_MASK mask,
			      const DAT_EP_PARAM *p, struct datp_ep *next)
{
	struct datp_ia *ia = ep->obj.ia;
	DAT_EP_ATTR attr = ep->attr;
	DAT_RETURN ret;

	if (mask & DAT_EP_FIELD_PZ_HANDLE) {
		next->pz = p->pz_handle ? datp_pz_get(p->pz_handle) : NULL;
		if (p->pz_handle && (!next->pz || next->pz->obj.ia != ia))
			return DATP_HANDLE(DAT_INVALID_HANDLE_PZ, "pz %p",
					   p->pz_handle);
	}
	if (mask & DAT_EP_FIELD_RECV_EVD_HANDLE) {
		ret = datp_evd_arg(ia, p->recv_evd_handle, DAT_EVD_DTO_FLAG,
				   DAT_INVALID_HANDLE_EVD_RECV, __func__,
				   &next->recv_evd);
		if (ret != DAT_SUCCESS)
			return ret;
	}
	if (mask & DAT_EP_FIELD_REQUEST_EVD_HANDLE) {
		ret = datp_evd_arg(ia, p->request_evd_handle, DAT_EVD_DTO_FLAG,
				   DAT_INVALID_HANDLE_EVD_REQUEST, __func__,
				   &next->req_evd);
		if (ret != DAT_SUCCESS)
			return ret;
	}
	if (mask & DAT_EP_FIELD_CONNECT_EVD_HANDLE) {
		ret = datp_evd_arg(ia, p->connect_evd_handle,
				   DAT_EVD_CONNECTION_FLAG,
				   DAT_INVALID_HANDLE_EVD_CONN, __func__,
				   &next->conn_evd);
		if (ret != DAT_SUCCESS)
			return ret;
	}
#define TAKE(bit, field)                               \
	do {                                           \
		if (mask & (bit))                      \
			attr.field = p->ep_attr.field; \
	} while (0)
	TAKE(DAT_EP_FIELD_EP_ATTR_SERVICE_TYPE, service_type);
	TAKE(DAT_EP_FIELD_EP_ATTR_MAX_MESSAGE_SIZE, max_message_size);
	TAKE(DAT_EP_FIELD_EP_ATTR_MAX_RDMA_SIZE, max_rdma_size);
	TAKE(DAT_EP_FIELD_EP_ATTR_QOS, qos);
	TAKE(DAT_EP_FIELD_EP_ATTR_RECV_COMPLETION_FLAGS, recv_completion_flags);
	TAKE(DAT_EP_FIELD_EP_ATTR_REQUEST_COMPLETION_FLAGS,
	     request_completion_flags);
	TAKE(DAT_EP_FIELD_EP_ATTR_MAX_RECV_DTOS, max_recv_dtos);
	TAKE(DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_DTOS, max_request_dtos);
	TAKE(DAT_EP_FIELD_EP_ATTR_MAX_RECV_IOV, max_recv_iov);
	TAKE(DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_IOV, max_request_iov);
	TAKE(DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_IN, max_rdma_read_in);
	TAKE(DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_OUT, max_rdma_read_out);
	TAKE(DAT_EP_FIELD_EP_ATTR_SRQ_SOFT_HW, srq_soft_hw);
	TAKE(DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_IOV, max_rdma_read_iov);
	TAKE(DAT_EP_FIELD_EP_ATTR_MAX_RDMA_WRITE_IOV, max_rdma_write_iov);
#undef TAKE
	return attr_check(ia, &attr, &next->attr, DAT_INVALID_ARG3, __func__);
}

DAT_RETURN datp_ep_modify(DAT_EP_HANDLE ep_handle, DAT_EP_PARAM_MASK mask,
			  const DAT_EP_PARAM *param)
{
	struct datp_ep *ep = datp_ep_get(ep_handle);
	struct datp_ep next;
	DAT_EP_STATE state;
	DAT_RETURN dret;
	int ret;

	if (!ep)
		return DATP_HANDLE(DAT_INVALID_HANDLE_EP, "ep %p", ep_handle);
	if (mask & ~MODIFIABLE_FIELDS)
		return DATP_ARG(DAT_INVALID_ARG2,
				"ep_param_mask 0x%llx: fields 0x%llx cannot "
				"change",
				(unsigned long long)mask,
				(unsigned long long)(mask &
						     ~MODIFIABLE_FIELDS));
	if (!param)
		return DATP_ARG(DAT_INVALID_ARG3, "ep_param: NULL");

	pthread_mutex_lock(&ep->lock);
	state = datp_ep_state(ep);
	if (!ep_modifiable(state)) {
		pthread_mutex_unlock(&ep->lock);
		return DATP_STATE(datp_ep_state_sub(state), "EP state %d",
				  state);
	}
	next = *ep;
	dret = modify_args(ep, mask, param, &next);
	if (dret != DAT_SUCCESS)
		goto out;
	if ((mask & QP_FIELDS) && ep->qp && datp_rq_outstanding(&ep->rq)) {
		dret = DATP_STATE(DAT_INVALID_STATE_EP_NOTREADY,
				  "receives are posted: the QP cannot change");
		goto out;
	}
	ep_unlink(ep);
	ep->pz = next.pz;
	ep->recv_evd = next.recv_evd;
	ep->req_evd = next.req_evd;
	ep->conn_evd = next.conn_evd;
	ep->attr = next.attr;
	ep->kind = ep->attr.service_type == DAT_SERVICE_TYPE_RC ? DATP_EP_RC :
								  DATP_EP_UD;
	ep->soft_hw = ep->attr.srq_soft_hw;
	ep_link(ep);
	if (mask & QP_FIELDS)
		ep_qp_free(ep);
	ret = datp_ep_qp_make(ep);
	if (ret) {
		dret = DATP_ERR(ret, DAT_RESOURCE_TEP, "QP");
		goto out;
	}
	atomic_store(&ep->state, state_configured(state, ep_configured(ep)));
	dret = DAT_SUCCESS;
out:
	pthread_mutex_unlock(&ep->lock);
	return dret;
}

DAT_RETURN datp_ep_get_status(DAT_EP_HANDLE ep_handle, DAT_EP_STATE *ep_state,
			      DAT_BOOLEAN *recv_idle, DAT_BOOLEAN *request_idle)
{
	struct datp_ep *ep = datp_ep_get(ep_handle);
	bool rq_idle = true, sq_idle = true;

	if (!ep)
		return DATP_HANDLE(DAT_INVALID_HANDLE_EP, "ep %p", ep_handle);
	pthread_mutex_lock(&ep->lock);
	if (ep->qp) {
		sq_idle = !datp_sq_outstanding(&ep->sq);
		pthread_mutex_lock(&ep->rq.lock);
		rq_idle = !datp_rq_outstanding(&ep->rq);
		pthread_mutex_unlock(&ep->rq.lock);
	}
	pthread_mutex_unlock(&ep->lock);
	if (ep_state)
		*ep_state = datp_ep_state(ep);
	if (recv_idle)
		*recv_idle = rq_idle ? DAT_TRUE : DAT_FALSE;
	if (request_idle)
		*request_idle = sq_idle ? DAT_TRUE : DAT_FALSE;
	return DAT_SUCCESS;
}

DAT_RETURN datp_ep_recv_query(DAT_EP_HANDLE ep_handle,
			      DAT_COUNT *nbufs_allocated,
			      DAT_COUNT *bufs_alloc_span)
{
	struct datp_ep *ep = datp_ep_get(ep_handle);
	DAT_COUNT n = 0, span = 0;

	if (!ep)
		return DATP_HANDLE(DAT_INVALID_HANDLE_EP, "ep %p", ep_handle);
	if (ep->srq) {
		/* SRQ buffers holding data for the EP, not yet dequeued */
		n = atomic_load(&ep->srq_held);
		span = DAT_VALUE_UNKNOWN;
	} else if (ep->qp) {
		pthread_mutex_lock(&ep->rq.lock);
		n = (DAT_COUNT)datp_rq_outstanding(&ep->rq);
		span = ep->rq.bytes > INT32_MAX ? INT32_MAX :
						  (DAT_COUNT)ep->rq.bytes;
		pthread_mutex_unlock(&ep->rq.lock);
	}
	if (nbufs_allocated)
		*nbufs_allocated = n;
	if (bufs_alloc_span)
		*bufs_alloc_span = span;
	return DAT_SUCCESS;
}

DAT_RETURN datp_ep_set_watermark(DAT_EP_HANDLE ep_handle,
				 DAT_COUNT soft_high_watermark,
				 DAT_COUNT hard_high_watermark)
{
	struct datp_ep *ep = datp_ep_get(ep_handle);

	if (!ep)
		return DATP_HANDLE(DAT_INVALID_HANDLE_EP, "ep %p", ep_handle);
	if (!ep->srq)
		return DATP_STATE(DAT_INVALID_STATE_EP_RECV_WATERMARK,
				  "watermarks need an EP on an SRQ");
	if (soft_high_watermark < 0 &&
	    soft_high_watermark != DAT_WATERMARK_INFINITE)
		return DATP_ARG(DAT_INVALID_ARG2, "soft_high_watermark %d",
				soft_high_watermark);
	if (hard_high_watermark < 0 &&
	    hard_high_watermark != DAT_WATERMARK_INFINITE)
		return DATP_ARG(DAT_INVALID_ARG3, "hard_high_watermark %d",
				hard_high_watermark);
	pthread_mutex_lock(&ep->obj.ia->lock);
	ep->soft_hw = soft_high_watermark;
	ep->hard_hw = hard_high_watermark;
	ep->attr.srq_soft_hw = soft_high_watermark;
	atomic_store(&ep->soft_hw_sent, false);
	pthread_mutex_unlock(&ep->obj.ia->lock);
	return DAT_SUCCESS;
}

DAT_RETURN datp_ep_reset(DAT_EP_HANDLE ep_handle)
{
	struct datp_ep *ep = datp_ep_get(ep_handle);
	DAT_EP_STATE state;
	int ret;

	if (!ep)
		return DATP_HANDLE(DAT_INVALID_HANDLE_EP, "ep %p", ep_handle);
	datp_ia_reap(ep->obj.ia);
	pthread_mutex_lock(&ep->lock);
	state = datp_ep_state(ep);
	if (state == DAT_EP_STATE_UNCONNECTED ||
	    state == DAT_EP_STATE_UNCONFIGURED_UNCONNECTED) {
		pthread_mutex_unlock(&ep->lock);
		return DAT_SUCCESS;
	}
	if (state != DAT_EP_STATE_DISCONNECTED) {
		pthread_mutex_unlock(&ep->lock);
		return DATP_STATE(datp_ep_state_sub(state), "EP state %d",
				  state);
	}
	datp_ep_cm_release(ep);
	ret = datp_ep_qp_recycle(ep);
	if (!ret)
		atomic_store(&ep->state,
			     ep_configured(ep) ?
				     DAT_EP_STATE_UNCONNECTED :
				     DAT_EP_STATE_UNCONFIGURED_UNCONNECTED);
	pthread_mutex_unlock(&ep->lock);
	if (ret)
		return DATP_ERR(ret, DAT_NO_SUBTYPE, "QP reset");
	return DAT_SUCCESS;
}

void datp_ep_destroy(struct datp_ep *ep)
{
	struct datp_ia *ia = ep->obj.ia;

	pthread_mutex_lock(&ep->lock);
	datp_ep_timer_free(ep);
	datp_ep_cm_release(ep);
	datp_ud_fini(ep);
	ep_qp_free(ep);
	ep_unlink(ep);
	pthread_mutex_lock(&ia->lock);
	HASH_DELETE(hh_live, ia->live_eps, ep);
	if (ep->cr && ep->cr->ep == ep)
		ep->cr->ep = NULL;
	pthread_mutex_unlock(&ia->lock);
	pthread_mutex_unlock(&ep->lock);
	pthread_mutex_destroy(&ep->lock);
	datp_ia_count(ia, DCNT_IA_EP_FREE);
	datp_obj_fini(&ep->obj, DATP_EP);
}

DAT_RETURN datp_ep_free(DAT_EP_HANDLE ep_handle)
{
	struct datp_ep *ep = datp_ep_get(ep_handle);

	if (!ep)
		return DATP_HANDLE(DAT_INVALID_HANDLE_EP, "ep %p", ep_handle);
	if (datp_in_use(&ep->obj))
		return DATP_STATE(DAT_INVALID_STATE_EP_RESERVED,
				  "an RSP holds ep %p", ep_handle);
	datp_ia_reap(ep->obj.ia);
	datp_ep_destroy(ep);
	return DAT_SUCCESS;
}
