/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Queue pairs: create, destroy, modify and query, with the attribute
 * translation.  The masks, states and flags are libibverbs' values
 * (verbs_abi.c); the address vector and the port number are translated,
 * since each interface shows its device port as port 1.
 */
#include <stdlib.h>
#include <string.h>
#include <utlist.h>

#include "transports/verbs/verbs.h"

/* Masks of attributes that struct openrdma_qp_attr has no field for. */
#define UNSUPPORTED_MASK (OPENRDMA_QP_ALT_PATH | OPENRDMA_QP_PATH_MIG_STATE)

/*
 * What the queues hold.  rxe (Linux 6.1, rxe_qp_init_req) rounds them up
 * to a power of two less one but answers create with the sizes asked
 * for, so the queue would take more than the capacity says; its query
 * tells the truth, as every device's does.
 */
static void cap_granted(struct ibv_qp *ibqp, struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	if (ibv_query_qp(ibqp, &attr, IBV_QP_CAP, &init))
		return;
	if (attr.cap.max_send_wr >= cap->max_send_wr)
		cap->max_send_wr = attr.cap.max_send_wr;
	if (!ibqp->srq && attr.cap.max_recv_wr >= cap->max_recv_wr)
		cap->max_recv_wr = attr.cap.max_recv_wr;
}

int verbs_qp_create(struct openrdma_pd *pd,
		    struct openrdma_qp_init_attr *init_attr,
		    struct openrdma_qp **qp_out)
{
	struct verbs_ctx *vctx = to_verbs_ctx(pd->obj.ctx);
	enum core_lock_kind kind = CORE_LOCK_MUTEX;
	struct ibv_qp_init_attr init;
	struct verbs_qp *vqp;
	int ret;

	if (pd->obj.ctx->thread_mode == OPENRDMA_THREAD_SINGLE)
		kind = CORE_LOCK_NONE;
	vqp = calloc(1, sizeof(*vqp));
	if (!vqp)
		return -OPENRDMA_ENOMEM;
	vqp->vctx = vctx;
	vqp->no_imm = vctx->iwarp;
	atomic_init(&vqp->last_wqe, false);
	memset(&init, 0, sizeof(init));
	init.qp_context = vqp;
	init.send_cq = to_verbs_cq(init_attr->send_cq)->ibcq;
	init.recv_cq = to_verbs_cq(init_attr->recv_cq)->ibcq;
	if (init_attr->srq)
		init.srq = to_verbs_srq(init_attr->srq)->ibsrq;
	init.cap.max_send_wr = init_attr->cap.max_send_wr;
	init.cap.max_recv_wr = init_attr->cap.max_recv_wr;
	init.cap.max_send_sge = init_attr->cap.max_send_sge;
	init.cap.max_recv_sge = init_attr->cap.max_recv_sge;
	init.cap.max_inline_data = init_attr->cap.max_inline_data;
	init.qp_type = (enum ibv_qp_type)init_attr->qp_type;
	init.sq_sig_all = init_attr->sq_sig_all;

	/* A mutex: its holder posts whole lists and may enter the kernel. */
	ret = core_lock_init(&vqp->post_lock, kind);
	if (ret)
		goto err_free;
	vqp->ibqp = ibv_create_qp(to_verbs_pd(pd)->ibpd, &init);
	if (!vqp->ibqp) {
		ret = verbs_errno();
		goto err_lock;
	}
	/* Lists longer than this are posted in chunks of it. */
	vqp->list_max = init.cap.max_send_wr < VERBS_POST_LIST_MAX ?
				init.cap.max_send_wr :
				VERBS_POST_LIST_MAX;
	if (vqp->list_max > VERBS_POST_STACK) {
		vqp->list = calloc(vqp->list_max, sizeof(*vqp->list));
		if (!vqp->list) {
			ret = -OPENRDMA_ENOMEM;
			goto err_destroy;
		}
	}
	vqp->base.qp_num = vqp->ibqp->qp_num;
	cap_granted(vqp->ibqp, &init.cap);
	init_attr->cap.max_send_wr = init.cap.max_send_wr;
	init_attr->cap.max_recv_wr = init.cap.max_recv_wr;
	init_attr->cap.max_send_sge = init.cap.max_send_sge;
	init_attr->cap.max_recv_sge = init.cap.max_recv_sge;
	init_attr->cap.max_inline_data = init.cap.max_inline_data;

	pthread_mutex_lock(&vctx->cm_lock);
	DL_APPEND(vctx->qps, vqp);
	pthread_mutex_unlock(&vctx->cm_lock);
	*qp_out = &vqp->base;
	return 0;

err_destroy:
	ibv_destroy_qp(vqp->ibqp);
err_lock:
	core_lock_destroy(&vqp->post_lock);
err_free:
	free(vqp);
	return ret;
}

int verbs_qp_destroy(struct openrdma_qp *qp)
{
	struct verbs_qp *vqp = to_verbs_qp(qp);
	int ret;

	/*
	 * Out of the list first: its walkers (CQ overrun, failed
	 * completions) would move a destroyed QP.  A destroy that fails
	 * puts it back.  Its CM id let go of it when destroyed: the core
	 * refuses to destroy a QP an id holds.
	 */
	pthread_mutex_lock(&vqp->vctx->cm_lock);
	DL_DELETE(vqp->vctx->qps, vqp);
	pthread_mutex_unlock(&vqp->vctx->cm_lock);
	/* Waits for the progress thread to acknowledge its async events. */
	ret = ibv_destroy_qp(vqp->ibqp);
	if (ret) {
		pthread_mutex_lock(&vqp->vctx->cm_lock);
		DL_APPEND(vqp->vctx->qps, vqp);
		pthread_mutex_unlock(&vqp->vctx->cm_lock);
		return verbs_ret(ret);
	}
	core_lock_destroy(&vqp->post_lock);
	free(vqp->list);
	free(vqp);
	return 0;
}

int verbs_qp_attr_to_ibv(const struct verbs_ctx *vctx,
			 const struct openrdma_qp_attr *attr, int attr_mask,
			 struct ibv_qp_attr *ib)
{
	memset(ib, 0, sizeof(*ib));
	if (attr_mask & UNSUPPORTED_MASK)
		return -OPENRDMA_EOPNOTSUPP;
	ib->qp_state = (enum ibv_qp_state)attr->qp_state;
	ib->cur_qp_state = (enum ibv_qp_state)attr->cur_qp_state;
	ib->path_mtu = (enum ibv_mtu)attr->path_mtu;
	ib->qkey = attr->qkey;
	ib->rq_psn = attr->rq_psn;
	ib->sq_psn = attr->sq_psn;
	ib->dest_qp_num = attr->dest_qp_num;
	ib->qp_access_flags = attr->qp_access_flags;
	ib->cap.max_send_wr = attr->cap.max_send_wr;
	ib->cap.max_recv_wr = attr->cap.max_recv_wr;
	ib->cap.max_send_sge = attr->cap.max_send_sge;
	ib->cap.max_recv_sge = attr->cap.max_recv_sge;
	ib->cap.max_inline_data = attr->cap.max_inline_data;
	ib->pkey_index = attr->pkey_index;
	ib->en_sqd_async_notify = attr->en_sqd_async_notify;
	ib->max_rd_atomic = attr->max_rd_atomic;
	ib->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	ib->min_rnr_timer = attr->min_rnr_timer;
	ib->port_num = vctx->port;
	ib->timeout = attr->timeout;
	ib->retry_cnt = attr->retry_cnt;
	ib->rnr_retry = attr->rnr_retry;
	if (attr_mask & OPENRDMA_QP_AV)
		return verbs_ah_attr_to_ibv(vctx, &attr->ah_attr, &ib->ah_attr);
	return 0;
}

int verbs_qp_move(struct verbs_qp *vqp, struct ibv_qp_attr *ib, int mask)
{
	int ret;

	ret = ibv_modify_qp(vqp->ibqp, ib, mask);
	if (ret)
		return verbs_ret(ret);
	if (mask & IBV_QP_STATE)
		verbs_qp_state_set(vqp, (enum openrdma_qp_state)ib->qp_state);
	return 0;
}

/*
 * A QP of an SRQ that enters ERR has no receive of its own left to
 * finish, so on devices that do not say so the transport reports
 * QP_LAST_WQE_REACHED itself, once per error.
 */
static void last_wqe_emulate(struct verbs_qp *vqp, enum openrdma_qp_state state)
{
	struct openrdma_async_event ev = {
		.event_type = OPENRDMA_EVENT_QP_LAST_WQE_REACHED,
		.element.qp = &vqp->base,
	};

	if (!vqp->base.srq || !(vqp->vctx->quirks & VERBS_QUIRK_NO_LAST_WQE))
		return;
	if (state == OPENRDMA_QPS_RESET)
		atomic_store(&vqp->last_wqe, false);
	else if (state == OPENRDMA_QPS_ERR &&
		 !atomic_exchange(&vqp->last_wqe, true))
		openrdma_async_event_post(vqp->base.obj.ctx, &ev);
}

/* The QP's state in the core, after a change the transport made. */
void verbs_qp_state_set(struct verbs_qp *vqp, enum openrdma_qp_state state)
{
	openrdma_qp_state_set(&vqp->base, state);
	last_wqe_emulate(vqp, state);
}

/*
 * A CQ overrun breaks the QPs that complete on the CQ (IBTA 11.4.2.1:
 * they enter ERR).  rxe and siw (Linux 6.1) only report CQ_ERR and leave
 * them running, so the transport moves them.
 */
void verbs_qp_cq_overrun(struct verbs_ctx *vctx, struct verbs_cq *vcq)
{
	struct ibv_qp_attr ib = { .qp_state = IBV_QPS_ERR };
	struct verbs_qp *vqp;
	int ret;

	pthread_mutex_lock(&vctx->cm_lock);
	DL_FOREACH (vctx->qps, vqp) {
		if (vqp->base.send_cq != &vcq->base &&
		    vqp->base.recv_cq != &vcq->base)
			continue;
		ret = verbs_qp_move(vqp, &ib, IBV_QP_STATE);
		if (ret)
			openrdma_warn("verbs", "QP %u to ERR: %s",
				      vqp->base.qp_num, openrdma_strerror(ret));
	}
	pthread_mutex_unlock(&vctx->cm_lock);
}

/*
 * An RC request or receive that failed, other than by a flush, has moved
 * its QP to ERR (IBTA 10.8.3.3).  rxe (Linux 6.1, rxe_comp.c COMPST_ERROR)
 * queues the completion before it changes the QP's state, so a query
 * right after the poll could still read RTS: the core's state follows the
 * completion instead.  Only a connected QP's: one that has been moved on
 * since (RESET, INIT) keeps its state.
 */
void verbs_qp_wc_errors(struct verbs_ctx *vctx, const struct openrdma_wc *wc,
			int n)
{
	struct verbs_qp *vqp;
	int i, state;

	for (i = 0; i < n; i++) {
		if (wc[i].status == OPENRDMA_WC_SUCCESS ||
		    wc[i].status == OPENRDMA_WC_WR_FLUSH_ERR)
			continue;
		pthread_mutex_lock(&vctx->cm_lock);
		DL_FOREACH (vctx->qps, vqp) {
			if (vqp->base.qp_num != wc[i].qp_num)
				continue;
			state = atomic_load(&vqp->base.state);
			if (vqp->base.qp_type == OPENRDMA_QPT_RC &&
			    (state == OPENRDMA_QPS_RTR ||
			     state == OPENRDMA_QPS_RTS ||
			     state == OPENRDMA_QPS_SQD))
				verbs_qp_state_set(vqp, OPENRDMA_QPS_ERR);
			break;
		}
		pthread_mutex_unlock(&vctx->cm_lock);
	}
}

/*
 * The core allows RESET to ERR, the kernel's table does not: go through
 * INIT, which leaves nothing to flush either.
 */
static int reset_to_init(struct verbs_qp *vqp)
{
	struct ibv_qp_attr ib = { .qp_state = IBV_QPS_INIT,
				  .port_num = vqp->vctx->port };
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	mask |= vqp->base.qp_type == OPENRDMA_QPT_UD ? IBV_QP_QKEY :
						       IBV_QP_ACCESS_FLAGS;
	return verbs_ret(ibv_modify_qp(vqp->ibqp, &ib, mask));
}

int verbs_qp_modify(struct openrdma_qp *qp, struct openrdma_qp_attr *attr,
		    int attr_mask)
{
	struct verbs_qp *vqp = to_verbs_qp(qp);
	struct ibv_qp_attr ib;
	int ret;

	/*
	 * iWARP connects RC QPs through its CM only (MPA runs over the TCP
	 * connection the CM sets up): there is no way to RTR by hand.
	 */
	if (vqp->vctx->iwarp && qp->qp_type == OPENRDMA_QPT_RC &&
	    (attr_mask & OPENRDMA_QP_STATE) &&
	    (attr->qp_state == OPENRDMA_QPS_RTR ||
	     attr->qp_state == OPENRDMA_QPS_RTS) &&
	    atomic_load(&qp->state) <= OPENRDMA_QPS_INIT)
		return -OPENRDMA_EOPNOTSUPP;
	/*
	 * A device that ignores a move to RESET would report success and
	 * keep the QP's requests: say that it cannot, as it cannot.
	 */
	if ((vqp->vctx->quirks & VERBS_QUIRK_NO_RESET) &&
	    (attr_mask & OPENRDMA_QP_STATE) &&
	    attr->qp_state == OPENRDMA_QPS_RESET &&
	    atomic_load(&qp->state) != OPENRDMA_QPS_RESET) {
		openrdma_dbg("verbs",
			     "qp_modify: QP %u: %s cannot return a QP "
			     "to RESET",
			     qp->qp_num, vqp->vctx->ibctx->device->name);
		return -OPENRDMA_EOPNOTSUPP;
	}
	ret = verbs_qp_attr_to_ibv(vqp->vctx, attr, attr_mask, &ib);
	if (ret)
		return ret;
	if ((attr_mask & OPENRDMA_QP_STATE) &&
	    attr->qp_state == OPENRDMA_QPS_ERR &&
	    atomic_load(&qp->state) == OPENRDMA_QPS_RESET) {
		ret = reset_to_init(vqp);
		if (ret)
			return ret;
	}
	ret = ibv_modify_qp(vqp->ibqp, &ib, attr_mask);
	if (ret)
		return verbs_ret(ret);
	/* the core sets the state the application asked for */
	if (attr_mask & OPENRDMA_QP_STATE)
		last_wqe_emulate(vqp, attr->qp_state);
	return 0;
}

int verbs_qp_query(struct openrdma_qp *qp, struct openrdma_qp_attr *attr,
		   int attr_mask, struct openrdma_qp_init_attr *init_attr)
{
	struct verbs_qp *vqp = to_verbs_qp(qp);
	struct ibv_qp_init_attr ib_init;
	struct ibv_qp_attr ib;
	int ret;

	ret = ibv_query_qp(vqp->ibqp, &ib, attr_mask | IBV_QP_STATE, &ib_init);
	if (ret)
		return verbs_ret(ret);
	/*
	 * The device moves a QP to ERR on its own (a failed request, a
	 * broken connection); the core's state, which it reports, follows.
	 */
	if (ib.qp_state == IBV_QPS_ERR)
		verbs_qp_state_set(vqp, OPENRDMA_QPS_ERR);
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = (enum openrdma_qp_state)ib.qp_state;
	attr->cur_qp_state = (enum openrdma_qp_state)ib.cur_qp_state;
	attr->path_mtu = (enum openrdma_mtu)ib.path_mtu;
	attr->qkey = ib.qkey;
	attr->rq_psn = ib.rq_psn;
	attr->sq_psn = ib.sq_psn;
	attr->dest_qp_num = ib.dest_qp_num;
	attr->qp_access_flags = ib.qp_access_flags;
	attr->pkey_index = ib.pkey_index;
	attr->en_sqd_async_notify = ib.en_sqd_async_notify;
	attr->sq_draining = ib.sq_draining;
	attr->max_rd_atomic = ib.max_rd_atomic;
	attr->max_dest_rd_atomic = ib.max_dest_rd_atomic;
	attr->min_rnr_timer = ib.min_rnr_timer;
	attr->port_num = 1;
	attr->timeout = ib.timeout;
	attr->retry_cnt = ib.retry_cnt;
	attr->rnr_retry = ib.rnr_retry;
	verbs_ah_attr_from_ibv(vqp->vctx, &ib.ah_attr, &attr->ah_attr);
	/* the core fills the caps, the state it keeps and init_attr */
	return 0;
}
