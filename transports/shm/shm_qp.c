/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Queue pairs: numbering (the context's node in the high bits, so that a
 * QPN leads to its context), the state published for initiators, the
 * connection made at RTR and dropped at RESET, and the operations core/sw
 * carries out.  Every entry into core/sw may move the QP to ERR, so each
 * one is followed by a publish.
 */
#include <sched.h>
#include <stdlib.h>

#include "transports/shm/shm.h"

/* Numbers at index 0 would be QPN 0 and 1 of node 0: never used. */
#define QP_INDEX_FIRST 1

static void pub_set(struct shm_ctx *sctx, struct shm_qp *qp, bool alive)
{
	struct shm_qp_pub *pub = &sctx->qp_pub[SHM_QPN_INDEX(qp->base.qp_num)];

	if (!alive) {
		atomic_store(&pub->qpn, 0);
		atomic_store(&pub->state, OPENRDMA_QPS_RESET);
		return;
	}
	atomic_store_explicit(&pub->pd, qp->pd_id, memory_order_relaxed);
	atomic_store_explicit(&pub->access, 0, memory_order_relaxed);
	atomic_store_explicit(&pub->state, OPENRDMA_QPS_RESET,
			      memory_order_relaxed);
	atomic_store_explicit(&pub->qpn, qp->base.qp_num, memory_order_release);
}

void shm_qp_publish(struct shm_qp *qp)
{
	struct shm_qp_pub *pub =
		&qp->ctx->qp_pub[SHM_QPN_INDEX(qp->base.qp_num)];
	uint32_t state = sw_qp_state(&qp->sw);
	uint32_t access = atomic_load(&qp->sw.access_flags);

	/* the common case: nothing changed, nothing written */
	if (atomic_load_explicit(&pub->state, memory_order_relaxed) == state &&
	    atomic_load_explicit(&pub->access, memory_order_relaxed) == access)
		return;
	atomic_store_explicit(&pub->access, access, memory_order_relaxed);
	atomic_store_explicit(&pub->state, state, memory_order_release);
}

/* Numbers qp and makes it reachable. */
static int table_add(struct shm_ctx *sctx, struct shm_qp *qp)
{
	uint32_t idx, tries;
	int ret = -OPENRDMA_ENOMEM;

	pthread_mutex_lock(&sctx->qp_lock);
	/* in sequence, so a number is not reused soon: a peer still
	 * connected to a destroyed QP must not reach a new one */
	for (tries = 0; tries < SHM_QPN_INDEX_MAX; tries++) {
		idx = sctx->qp_next;
		sctx->qp_next =
			idx >= SHM_QPN_INDEX_MAX ? QP_INDEX_FIRST : idx + 1;
		if (idx < QP_INDEX_FIRST || sctx->qps[idx])
			continue;
		qp->base.qp_num = sctx->node << SHM_QPN_INDEX_BITS | idx;
		sctx->qps[idx] = qp;
		pub_set(sctx, qp, true);
		ret = 0;
		break;
	}
	pthread_mutex_unlock(&sctx->qp_lock);
	return ret;
}

static void table_del(struct shm_ctx *sctx, struct shm_qp *qp)
{
	pthread_mutex_lock(&sctx->qp_lock);
	sctx->qps[SHM_QPN_INDEX(qp->base.qp_num)] = NULL;
	pub_set(sctx, qp, false);
	pthread_mutex_unlock(&sctx->qp_lock);
}

struct shm_qp *shm_qp_get(struct shm_ctx *sctx, uint32_t qpn)
{
	struct shm_qp *qp = NULL;

	if (SHM_QPN_NODE(qpn) != sctx->node)
		return NULL;
	pthread_mutex_lock(&sctx->qp_lock);
	qp = sctx->qps[SHM_QPN_INDEX(qpn)];
	if (qp && atomic_load(&qp->ready) && qp->base.qp_num == qpn)
		atomic_fetch_add(&qp->users, 1);
	else
		qp = NULL;
	pthread_mutex_unlock(&sctx->qp_lock);
	return qp;
}

void shm_qp_put(struct shm_qp *qp)
{
	atomic_fetch_sub(&qp->users, 1);
}

bool shm_qp_busy(struct shm_qp *qp, bool *sends)
{
	bool recvs = false;

	core_lock_acquire(&qp->sw.sq.lock);
	*sends = qp->sw.sq.head != qp->sw.sq.tail;
	core_lock_release(&qp->sw.sq.lock);
	if (!qp->sw.srq) {
		core_lock_acquire(&qp->sw.rq.lock);
		recvs = qp->sw.rq.head != qp->sw.rq.tail;
		core_lock_release(&qp->sw.rq.lock);
	}
	return *sends || recvs;
}

void shm_qp_progress(struct shm_qp *qp)
{
	/* the send queue's work reads and writes registered memory */
	int ep = shm_epoch_enter(&qp->ctx->epoch);

	sw_qp_progress(&qp->sw);
	shm_epoch_exit(&qp->ctx->epoch, ep);
	shm_qp_publish(qp);
}

static void rnr_fire(struct sw_timer_entry *entry)
{
	shm_qp_progress(openrdma_container_of(entry, struct shm_qp, rnr_entry));
}

int shm_qp_create(struct openrdma_pd *pd,
		  struct openrdma_qp_init_attr *init_attr,
		  struct openrdma_qp **qp_out)
{
	struct shm_ctx *sctx = to_shm_ctx(pd->obj.ctx);
	struct sw_qp_init init = { 0 };
	struct openrdma_qp_cap *cap;
	struct shm_qp *qp;
	int ret;

	if (init_attr->qp_type != OPENRDMA_QPT_RC &&
	    init_attr->qp_type != OPENRDMA_QPT_UD)
		return -OPENRDMA_EOPNOTSUPP;
	ret = shm_res_get(sctx, SHM_RES_QP);
	if (ret)
		return ret;
	ret = -OPENRDMA_ENOMEM;
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		goto err_res;

	/* the toolkit reads these before the core fills them */
	qp->base.pd = pd;
	qp->base.send_cq = init_attr->send_cq;
	qp->base.recv_cq = init_attr->recv_cq;
	qp->base.srq = init_attr->srq;
	qp->base.qp_context = init_attr->qp_context;
	qp->base.qp_type = init_attr->qp_type;
	qp->base.sq_sig_all = init_attr->sq_sig_all;
	cap = &qp->base.cap;
	*cap = init_attr->cap;
	if (init_attr->srq) {
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
	}
	if (cap->max_send_wr > SHM_MAX_QP_WR ||
	    cap->max_recv_wr > SHM_MAX_QP_WR ||
	    cap->max_send_sge > SHM_MAX_SGE ||
	    cap->max_recv_sge > SHM_MAX_SGE ||
	    cap->max_inline_data > SHM_MAX_INLINE) {
		ret = -OPENRDMA_EINVAL;
		goto err_free;
	}
	qp->ctx = sctx;
	qp->pd_id = to_shm_pd(pd)->id;
	qp->rnr_entry.fn = rnr_fire;
	ret = -pthread_mutex_init(&qp->conn_lock, NULL);
	if (ret)
		goto err_free;

	init.ops = &shm_sw_qp_ops;
	init.keymap = sctx->keymap;
	init.send_cq = &to_shm_cq(init_attr->send_cq)->sw;
	init.recv_cq = &to_shm_cq(init_attr->recv_cq)->sw;
	init.srq = init_attr->srq ? &to_shm_srq(init_attr->srq)->sw : NULL;
	init.max_msg_size = init_attr->qp_type == OPENRDMA_QPT_UD ?
				    SHM_MAX_UD_MSG :
				    SHM_MAX_MSG_SIZE;
	init.rnr_scale = sctx->par.rnr_scale;
	ret = sw_qp_init(&qp->sw, &qp->base, &init);
	if (ret)
		goto err_lock;
	ret = table_add(sctx, qp);
	if (ret)
		goto err_sw;

	init_attr->cap = *cap;
	*qp_out = &qp->base;
	return 0;

err_sw:
	sw_qp_fini(&qp->sw);
err_lock:
	pthread_mutex_destroy(&qp->conn_lock);
err_free:
	free(qp);
err_res:
	shm_res_put(sctx, SHM_RES_QP);
	return ret;
}

int shm_qp_destroy(struct openrdma_qp *qp)
{
	struct shm_qp *sqp = to_shm_qp(qp);
	struct shm_ctx *sctx = sqp->ctx;

	/* unreachable first, then wait out the deliveries already inside */
	table_del(sctx, sqp);
	while (atomic_load(&sqp->users))
		sched_yield();
	shm_conn_detach(sqp);
	sw_timer_cancel(&sctx->timer, &sqp->rnr_entry);
	sw_qp_fini(&sqp->sw);
	pthread_mutex_destroy(&sqp->conn_lock);
	free(sqp);
	shm_res_put(sctx, SHM_RES_QP);
	return 0;
}

/* RTR of an RC QP: the connection to its destination. */
static void rtr_connect(struct shm_qp *qp, uint32_t dest)
{
	struct shm_conn *conn = shm_conn_get(qp);
	bool same = conn && conn->peer_qpn == dest && !atomic_load(&conn->dead);

	if (conn)
		shm_conn_put(conn);
	if (same)
		return; /* the peer connected to us first */
	if (conn)
		shm_conn_detach(qp);
	/* not from a progress thread (a CM event): the first request
	 * connects instead; nor when the peer is elsewhere */
	if (atomic_load(&qp->av_local))
		shm_conn_attach(qp, dest);
}

int shm_qp_modify(struct openrdma_qp *qp, struct openrdma_qp_attr *attr,
		  int attr_mask)
{
	struct shm_qp *sqp = to_shm_qp(qp);
	int ret;

	atomic_store(&sqp->ready, true);
	ret = sw_qp_modify(&sqp->sw, attr, attr_mask);
	if (ret)
		return ret;
	if (attr_mask & OPENRDMA_QP_TIMEOUT)
		atomic_store(&sqp->timeout, attr->timeout);
	if (attr_mask & OPENRDMA_QP_RETRY_CNT)
		atomic_store(&sqp->retry_cnt, attr->retry_cnt);
	if (attr_mask & OPENRDMA_QP_AV)
		atomic_store(&sqp->av_local, shm_ah_attr_local(&attr->ah_attr));
	if (attr_mask & OPENRDMA_QP_STATE) {
		if (attr->qp_state == OPENRDMA_QPS_RESET) {
			shm_conn_detach(sqp);
			atomic_store(&sqp->av_local, false);
		} else if (attr->qp_state == OPENRDMA_QPS_RTR &&
			   qp->qp_type == OPENRDMA_QPT_RC) {
			rtr_connect(sqp, attr->dest_qp_num);
		}
	}
	shm_qp_publish(sqp);
	return 0;
}

int shm_qp_query(struct openrdma_qp *qp, struct openrdma_qp_attr *attr,
		 int attr_mask, struct openrdma_qp_init_attr *init_attr)
{
	sw_qp_query(&to_shm_qp(qp)->sw, attr, init_attr);
	return 0;
}

int shm_qp_post_send(struct openrdma_qp *qp, struct openrdma_send_wr *wr,
		     struct openrdma_send_wr **bad_wr)
{
	struct shm_qp *sqp = to_shm_qp(qp);
	int ret, ep;

	ep = shm_epoch_enter(&sqp->ctx->epoch);
	ret = sw_qp_post_send(&sqp->sw, wr, bad_wr);
	shm_epoch_exit(&sqp->ctx->epoch, ep);
	shm_qp_publish(sqp);
	return ret;
}

int shm_qp_post_recv(struct openrdma_qp *qp, struct openrdma_recv_wr *wr,
		     struct openrdma_recv_wr **bad_wr)
{
	struct shm_qp *sqp = to_shm_qp(qp);
	int ret;

	ret = sw_qp_post_recv(&sqp->sw, wr, bad_wr);
	shm_qp_publish(sqp);
	return ret;
}
