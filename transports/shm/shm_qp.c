/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Queue pairs: numbering (the context's node in the high bits, so that a
 * QPN leads to its context), the state published for initiators, the
 * connection made at RTR and dropped at RESET, and the operations core/sw
 * carries out (RC send queues through its pipe, shm_tx.c).  Every entry
 * into core/sw may move the QP to ERR, so each one is followed by a
 * publish.
 */
#include <sched.h>
#include <stddef.h>
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
	uint32_t state, access;

	/* threads publish concurrently: each looks again after its store,
	 * so the last store is of a state that was current */
	for (;;) {
		state = sw_qp_state(&qp->sw);
		access = atomic_load(&qp->sw.access_flags);
		/* the common case: nothing changed, nothing written */
		if (atomic_load(&pub->state) == state &&
		    atomic_load(&pub->access) == access)
			return;
		atomic_store(&pub->access, access);
		atomic_store(&pub->state, state);
	}
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

static bool is_rc(const struct shm_qp *qp)
{
	return qp->base.qp_type == OPENRDMA_QPT_RC;
}

static void rnr_fire(struct sw_timer_entry *entry)
{
	struct shm_qp *qp =
		openrdma_container_of(entry, struct shm_qp, rnr_entry);
	int ep;

	if (is_rc(qp)) {
		shm_tx(qp);
		return;
	}
	/* a UD send queue is worked by core/sw */
	ep = shm_epoch_enter(&qp->ctx->epoch);
	sw_qp_progress(&qp->sw);
	shm_epoch_exit(&qp->ctx->epoch, ep);
	shm_qp_publish(qp);
}

static const struct sw_qp_create_ops qp_create_ops = {
	.max_wr = SHM_MAX_QP_WR,
	.max_sge = SHM_MAX_SGE,
	.max_inline = SHM_MAX_INLINE,
	.max_msg_size = SHM_MAX_MSG_SIZE,
	.max_ud_msg = SHM_MAX_UD_MSG,
	.qp_size = sizeof(struct shm_qp),
	.cq_sw = offsetof(struct shm_cq, sw),
	.srq_sw = offsetof(struct shm_srq, sw),
	.res_get = shm_res_get,
	.res_put = shm_res_put,
};

int shm_qp_create(struct openrdma_pd *pd,
		  struct openrdma_qp_init_attr *init_attr,
		  struct openrdma_qp **qp_out)
{
	struct shm_ctx *sctx = to_shm_ctx(pd->obj.ctx);
	struct sw_qp_init init = { 0 };
	struct openrdma_qp_cap *cap;
	struct openrdma_qp *base;
	struct shm_qp *qp;
	int ret;

	ret = sw_qp_alloc(&qp_create_ops, pd, init_attr, &init, &base);
	if (ret)
		return ret;
	qp = to_shm_qp(base);
	cap = &qp->base.cap;
	qp->ctx = sctx;
	qp->pd_id = to_shm_pd(pd)->id;
	qp->rnr_entry.fn = rnr_fire;
	qp->lost_entry.fn = shm_tx_lost_fire;
	ret = -pthread_mutex_init(&qp->conn_lock, NULL);
	if (ret)
		goto err_free;

	init.ops = &shm_sw_qp_ops;
	init.keymap = sctx->keymap;
	init.rnr_scale = sctx->par.rnr_scale;
	ret = sw_qp_init(&qp->sw, &qp->base, &init);
	if (ret)
		goto err_lock;
	ret = sw_pipe_init(&qp->pipe, &qp->sw);
	if (ret)
		goto err_sw;
	ret = table_add(sctx, qp);
	if (ret)
		goto err_pipe;

	init_attr->cap = *cap;
	*qp_out = &qp->base;
	return 0;

err_pipe:
	sw_pipe_fini(&qp->pipe);
err_sw:
	sw_qp_fini(&qp->sw);
err_lock:
	pthread_mutex_destroy(&qp->conn_lock);
err_free:
	sw_qp_free(&qp_create_ops, &qp->base);
	return ret;
}

int shm_qp_destroy(struct openrdma_qp *qp)
{
	struct shm_qp *sqp = to_shm_qp(qp);
	struct shm_ctx *sctx = sqp->ctx;
	/* each may arm the other */
	struct sw_timer_entry *const timers[] = { &sqp->rnr_entry,
						  &sqp->lost_entry };

	/* unreachable first, then wait out the deliveries already inside */
	table_del(sctx, sqp);
	while (atomic_load(&sqp->users))
		sched_yield();
	/*
	 * No retry may transmit again, nor the progress thread arm one: it
	 * reaches the QP through the connection, and a retry may attach a
	 * connection again (a QP connected by hand).  Timers, then the
	 * connection, until there was none.
	 */
	do
		sw_timer_cancel_set(&sctx->timer, timers, 2);
	while (shm_conn_detach(sqp));
	/* nothing transmits any more (tx_conn in shm_tx.c) */
	if (sqp->tx_conn)
		shm_conn_put(sqp->tx_conn);
	sw_pipe_fini(&sqp->pipe);
	sw_qp_fini(&sqp->sw);
	pthread_mutex_destroy(&sqp->conn_lock);
	sw_qp_free(&qp_create_ops, &sqp->base);
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
		} else if (attr->qp_state == OPENRDMA_QPS_RTR && is_rc(sqp)) {
			rtr_connect(sqp, attr->dest_qp_num);
			/* requests that waited for us to leave INIT */
			shm_prog_wake(sqp->ctx);
		}
	}
	if (is_rc(sqp) && (((attr_mask & OPENRDMA_QP_STATE) &&
			    attr->qp_state == OPENRDMA_QPS_RESET) ||
			   (attr_mask & OPENRDMA_QP_CAP))) {
		/* nothing is in flight: the pipe starts over */
		sw_timer_cancel(&sqp->ctx->timer, &sqp->lost_entry);
		atomic_store(&sqp->lost_armed, false);
		ret = sw_pipe_reset(&sqp->pipe);
		if (ret)
			return ret;
	}
	if (is_rc(sqp) && (attr_mask & OPENRDMA_QP_MAX_QP_RD_ATOMIC))
		sw_pipe_set_max_rd(&sqp->pipe, attr->max_rd_atomic);
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

	if (is_rc(sqp)) {
		ret = sw_pipe_post_send(&sqp->pipe, wr, bad_wr);
		/* those before a refused one are posted */
		shm_tx(sqp);
		return ret;
	}
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
