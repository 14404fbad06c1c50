/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Queue pairs: the context's table that numbers them, their operations,
 * and what happens to them when their connections come and go.  The
 * toolkit does the rest: core/sw/qp.c (states, receives, flushes) and, for
 * RC send queues, core/sw/sw_pipe.c.
 */
/* QPNs are handed out in sequence: their low bits spread them evenly over
 * the buckets, no hash needed. */
#define HASH_FUNCTION(keyptr, keylen, hashv) \
	((hashv) = *(const uint32_t *)(const void *)(keyptr))

#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openrdma/log.h>

#include "core/sw/sw_ops.h"
#include "transports/tcp/tcp.h"

/* QPNs are 24 bits; 0 and 1 are IB's special QPs. */
#define QPN_FIRST 2
#define QPN_LAST 0xffffff
/* The longest an idle QP stays in RTS once its path is gone. */
#define LOST_MAX_NS 1000000000ull

static int qp_table_add(struct tcp_ctx *tctx, struct tcp_qp *qp)
{
	struct tcp_qp *found;
	uint32_t qpn, tries;
	int ret = -OPENRDMA_ENOSPC;

	pthread_mutex_lock(&tctx->lock);
	for (tries = 0; tries <= QPN_LAST - QPN_FIRST; tries++) {
		qpn = tctx->qpn_next;
		tctx->qpn_next = qpn >= QPN_LAST ? QPN_FIRST : qpn + 1;
		if (qpn < QPN_FIRST)
			continue;
		HASH_FIND(hh, tctx->qps, &qpn, sizeof(qpn), found);
		if (!found) {
			qp->base.qp_num = qpn;
			HASH_ADD(hh, tctx->qps, base.qp_num, sizeof(qpn), qp);
			ret = 0;
			break;
		}
	}
	pthread_mutex_unlock(&tctx->lock);
	return ret;
}

struct tcp_qp *tcp_qp_lookup(struct tcp_ctx *tctx, uint32_t qpn)
{
	struct tcp_qp *qp;

	pthread_mutex_lock(&tctx->lock);
	HASH_FIND(hh, tctx->qps, &qpn, sizeof(qpn), qp);
	if (qp)
		tcp_qp_hold(qp);
	pthread_mutex_unlock(&tctx->lock);
	return qp;
}

void tcp_qp_hold(struct tcp_qp *qp)
{
	atomic_fetch_add(&qp->users, 1);
}

void tcp_qp_put(struct tcp_qp *qp)
{
	atomic_fetch_sub(&qp->users, 1);
}

/* RC send queues are run by the pipe, never by sw_qp_progress() outside
 * ERR, where it only flushes. */
static int rc_execute(struct sw_qp *sqp, struct sw_send_wqe *wqe,
		      const struct iovec *iov, int iovcnt, uint64_t len)
{
	return OPENRDMA_WC_LOC_QP_OP_ERR;
}

static int rc_schedule(struct sw_qp *sqp, uint64_t deadline)
{
	return -OPENRDMA_EOPNOTSUPP;
}

static const struct sw_qp_ops rc_ops = {
	.execute = rc_execute,
	.schedule = rc_schedule,
};

static void rnr_fire(struct sw_timer_entry *entry)
{
	tcp_qp_kick(openrdma_container_of(entry, struct tcp_qp, rnr_entry));
}

/* An idle QP whose path went away gives up, as its next request would. */
static void lost_fire(struct sw_timer_entry *entry)
{
	struct tcp_qp *qp =
		openrdma_container_of(entry, struct tcp_qp, lost_entry);
	enum openrdma_qp_state state = sw_qp_state(&qp->sw);
	bool lost;

	core_lock_acquire(&qp->sw.sq.lock);
	lost = qp->pipe.lost;
	core_lock_release(&qp->sw.sq.lock);
	if (lost && (state == OPENRDMA_QPS_RTR || state == OPENRDMA_QPS_RTS))
		sw_qp_error(&qp->sw, OPENRDMA_EVENT_QP_FATAL);
}

static const struct sw_qp_create_ops qp_create_ops = {
	.max_wr = TCP_MAX_QP_WR,
	.max_sge = TCP_MAX_SGE,
	.max_inline = TCP_MAX_INLINE,
	.max_msg_size = TCP_MAX_MSG_SIZE,
	.max_ud_msg = TCP_MAX_UD_MSG,
	.qp_size = sizeof(struct tcp_qp),
	.cq_sw = offsetof(struct tcp_cq, sw),
	.srq_sw = offsetof(struct tcp_srq, sw),
	.res_get = tcp_res_get,
	.res_put = tcp_res_put,
};

int tcp_qp_create(struct openrdma_pd *pd,
		  struct openrdma_qp_init_attr *init_attr,
		  struct openrdma_qp **qp_out)
{
	struct tcp_ctx *tctx = to_tcp_ctx(pd->obj.ctx);
	struct sw_qp_init init = { 0 };
	struct openrdma_qp_cap *cap;
	struct openrdma_qp *base;
	struct tcp_qp *qp;
	bool rc = init_attr->qp_type == OPENRDMA_QPT_RC;
	int ret;

	ret = sw_qp_alloc(&qp_create_ops, pd, init_attr, &init, &base);
	if (ret)
		return ret;
	qp = to_tcp_qp(base);
	cap = &qp->base.cap;
	qp->ctx = tctx;
	qp->rc = rc;
	qp->rnr_entry.fn = rnr_fire;
	qp->lost_entry.fn = lost_fire;
	atomic_init(&qp->users, 0);
	/* ask for an acknowledgement once a quarter of the queue waits */
	qp->ackreq = cap->max_send_wr / 4;
	if (qp->ackreq < 1)
		qp->ackreq = 1;
	if (qp->ackreq > 8)
		qp->ackreq = 8;

	init.ops = rc ? &rc_ops : &tcp_ud_ops;
	init.keymap = tctx->keymap;
	init.rnr_scale = tctx->prm.rnr_scale;
	ret = sw_qp_init(&qp->sw, &qp->base, &init);
	if (ret)
		goto err_free;
	ret = sw_pipe_init(&qp->pipe, &qp->sw);
	if (ret)
		goto err_sw;
	ret = -pthread_spin_init(&qp->link_lock, PTHREAD_PROCESS_PRIVATE);
	if (ret)
		goto err_pipe;
	ret = qp_table_add(tctx, qp);
	if (ret)
		goto err_spin;

	init_attr->cap = *cap;
	*qp_out = &qp->base;
	return 0;

err_spin:
	pthread_spin_destroy(&qp->link_lock);
err_pipe:
	sw_pipe_fini(&qp->pipe);
err_sw:
	sw_qp_fini(&qp->sw);
err_free:
	sw_qp_free(&qp_create_ops, &qp->base);
	return ret;
}

/* Waits until the progress thread tore conn down. */
static void wait_closed(struct tcp_conn *conn)
{
	struct tcp_ctx *tctx = conn->ctx;

	pthread_mutex_lock(&tctx->lock);
	while (atomic_load(&conn->state) != TCP_CONN_CLOSED)
		pthread_cond_wait(&tctx->reaped, &tctx->lock);
	pthread_mutex_unlock(&tctx->lock);
}

/*
 * How long a QP that goes away waits for the writer to send what the
 * connection owes the peer (a socket that does not take it is not waited
 * for longer): an acknowledgement briefly, its last word up to a second.
 */
#define ACK_FLUSH_NS (10 * 1000 * 1000ull)
#define LAST_WORD_NS (1000 * 1000 * 1000ull)

/*
 * Whether conn still owes the peer what must precede its end.  Ending
 * abortively (no bye): the acknowledgement a delayed-ack connection owes,
 * made due now, since any RNIC acknowledges a message before its receive
 * completes and the peer's send would flush instead.  Ending gracefully
 * (bye): the DISCONNECT or REJECT still queued, behind a large transfer
 * say, which the end would drop, and a peer that read our end without it
 * would report its connection broken, not disconnected.
 */
static bool owes(struct tcp_conn *conn, bool bye)
{
	bool pending;

	if (bye)
		return !__atomic_load_n(&conn->shut, __ATOMIC_RELAXED);
	core_lock_acquire(&conn->lock);
	pending = conn->ack_pending;
	if (pending)
		conn->ack_due = true;
	core_lock_release(&conn->lock);
	return pending;
}

/* Lets the writer send what conn owes before its end (owes()). */
static void owed_flush(struct tcp_conn *conn, bool bye)
{
	uint64_t end = tcp_now() + (bye ? LAST_WORD_NS : ACK_FLUSH_NS);

	while (owes(conn, bye) && atomic_load(&conn->state) == TCP_CONN_OPEN &&
	       tcp_now() < end) {
		tcp_tx_kick(conn);
		usleep(100);
	}
}

/*
 * Closes the QP's connections and waits until they are gone, so that no
 * thread touches the QP through them any more (reset, destroy).
 */
static void qp_unlink(struct tcp_qp *qp)
{
	struct tcp_conn *conn[2];
	bool bye;
	int i;

	pthread_spin_lock(&qp->link_lock);
	qp->unlinking = true;
	conn[0] = qp->out;
	conn[1] = qp->in != qp->out ? qp->in : NULL;
	for (i = 0; i < 2; i++)
		if (conn[i])
			tcp_conn_get(conn[i]);
	pthread_spin_unlock(&qp->link_lock);

	for (i = 0; i < 2; i++) {
		if (!conn[i])
			continue;
		/* once the DISCONNECT went out, the peer reads to the end */
		bye = atomic_load(&conn[i]->bye);
		owed_flush(conn[i], bye);
		tcp_conn_close(conn[i], -OPENRDMA_ECONNABORTED, !bye);
		wait_closed(conn[i]);
		tcp_conn_put(conn[i]);
	}

	/* the progress thread may still be telling it of a connection that
	 * ended by itself */
	while (atomic_load(&qp->users))
		sched_yield();
	pthread_spin_lock(&qp->link_lock);
	qp->unlinking = false;
	qp->path = TCP_PATH_NONE;
	pthread_spin_unlock(&qp->link_lock);
}

int tcp_qp_destroy(struct openrdma_qp *base)
{
	struct tcp_qp *qp = to_tcp_qp(base);
	struct tcp_ctx *tctx = qp->ctx;
	/* each may arm the other */
	struct sw_timer_entry *const timers[] = { &qp->rnr_entry,
						  &qp->lost_entry };

	/* unreachable first, then wait out those inside */
	pthread_mutex_lock(&tctx->lock);
	HASH_DEL(tctx->qps, qp);
	pthread_mutex_unlock(&tctx->lock);
	qp_unlink(qp);
	sw_timer_cancel_set(&tctx->timer, timers, 2);
	while (atomic_load(&qp->users))
		sched_yield();
	pthread_spin_destroy(&qp->link_lock);
	sw_pipe_fini(&qp->pipe);
	sw_qp_fini(&qp->sw);
	sw_qp_free(&qp_create_ops, &qp->base);
	return 0;
}

int tcp_qp_modify(struct openrdma_qp *base, struct openrdma_qp_attr *attr,
		  int attr_mask)
{
	struct tcp_qp *qp = to_tcp_qp(base);
	bool rc = base->qp_type == OPENRDMA_QPT_RC;
	bool state = attr_mask & OPENRDMA_QP_STATE;
	struct sockaddr_storage dest;
	unsigned int ord;
	int ret;

	/* a reset QP has no peer: its connections go first */
	if (state && attr->qp_state == OPENRDMA_QPS_RESET && rc) {
		qp_unlink(qp);
		sw_timer_cancel(&qp->ctx->timer, &qp->lost_entry);
	}
	ret = sw_qp_modify(&qp->sw, attr, attr_mask);
	if (ret)
		return ret;
	if (!rc)
		return 0;
	if ((state && attr->qp_state == OPENRDMA_QPS_RESET) ||
	    (attr_mask & OPENRDMA_QP_CAP)) {
		ret = sw_pipe_reset(&qp->pipe);
		if (ret)
			return ret;
	}
	if (attr_mask & OPENRDMA_QP_MAX_QP_RD_ATOMIC) {
		ord = attr->max_rd_atomic;
		sw_pipe_set_max_rd(&qp->pipe, ord > TCP_MAX_RD_ATOM ?
						      TCP_MAX_RD_ATOM :
						      ord);
	}
	if (attr_mask & OPENRDMA_QP_AV) {
		memset(&dest, 0, sizeof(dest));
		if (attr->ah_attr.addr.ss_family == AF_INET ||
		    attr->ah_attr.addr.ss_family == AF_INET6) {
			dest = attr->ah_attr.addr;
			tcp_addr_normalize(&dest);
		}
		pthread_spin_lock(&qp->link_lock);
		qp->dest = dest;
		pthread_spin_unlock(&qp->link_lock);
	}
	if (state && attr->qp_state == OPENRDMA_QPS_RTR)
		tcp_manual_ready(qp);
	if (state && attr->qp_state == OPENRDMA_QPS_RTS)
		tcp_manual_connect(qp);
	return 0;
}

int tcp_qp_query(struct openrdma_qp *qp, struct openrdma_qp_attr *attr,
		 int attr_mask, struct openrdma_qp_init_attr *init_attr)
{
	sw_qp_query(&to_tcp_qp(qp)->sw, attr, init_attr);
	return 0;
}

int tcp_qp_post_send(struct openrdma_qp *base, struct openrdma_send_wr *wr,
		     struct openrdma_send_wr **bad_wr)
{
	struct tcp_qp *qp = to_tcp_qp(base);
	int ret;

	if (base->qp_type != OPENRDMA_QPT_RC)
		return sw_qp_post_send(&qp->sw, wr, bad_wr);
	ret = sw_pipe_post_send(&qp->pipe, wr, bad_wr);
	/* those before a refused one are posted */
	tcp_qp_kick(qp);
	return ret;
}

int tcp_qp_post_recv(struct openrdma_qp *qp, struct openrdma_recv_wr *wr,
		     struct openrdma_recv_wr **bad_wr)
{
	return sw_qp_post_recv(&to_tcp_qp(qp)->sw, wr, bad_wr);
}

void tcp_qp_kick(struct tcp_qp *qp)
{
	struct sw_pipe_pass pass;
	struct tcp_conn *conn;

	pthread_spin_lock(&qp->link_lock);
	conn = qp->out;
	if (conn)
		tcp_conn_get(conn);
	pthread_spin_unlock(&qp->link_lock);
	if (conn) {
		tcp_tx_kick(conn);
		tcp_conn_put(conn);
		return;
	}
	/* no way to the peer, or not any more: what waits cannot go */
	if (sw_qp_state(&qp->sw) != OPENRDMA_QPS_RTS)
		return;
	sw_pipe_begin(&qp->pipe, &pass);
	sw_pipe_path_lost(&qp->pipe, &pass, OPENRDMA_WC_RETRY_EXC_ERR,
			  OPENRDMA_EVENT_QP_FATAL);
	sw_pipe_end(&qp->pipe, &pass);
}

void tcp_qp_rnr_wait(struct tcp_qp *qp, uint64_t deadline)
{
	struct sw_pipe_pass pass;

	if (!sw_timer_add(&qp->ctx->timer, &qp->rnr_entry, deadline))
		return;
	/* no timer (the context is closing): the retry fails now */
	sw_pipe_begin(&qp->pipe, &pass);
	sw_pipe_path_lost(&qp->pipe, &pass, OPENRDMA_WC_RNR_RETRY_EXC_ERR, -1);
	sw_pipe_end(&qp->pipe, &pass);
}

/* How long an RC initiator retries before giving up: 4.096 us * 2^timeout
 * per try, retry_cnt + 1 tries; at most LOST_MAX_NS. */
static uint64_t retry_span_ns(struct tcp_qp *qp)
{
	struct openrdma_qp_attr attr;
	uint64_t ns;

	sw_qp_query(&qp->sw, &attr, NULL);
	if (!attr.timeout || attr.timeout > 24)
		return LOST_MAX_NS;
	ns = (4096ull << attr.timeout) * (attr.retry_cnt + 1u);
	return ns < LOST_MAX_NS ? ns : LOST_MAX_NS;
}

void tcp_qp_conn_lost(struct tcp_qp *qp, struct tcp_conn *conn, int err)
{
	struct sw_pipe_pass pass;
	bool unlinking, outstanding;
	uint32_t recvs = 0;
	int put = 0;

	pthread_spin_lock(&qp->link_lock);
	if (qp->out == conn) {
		qp->out = NULL;
		put++;
	}
	if (qp->in == conn) {
		qp->in = NULL;
		put++;
	}
	unlinking = qp->unlinking;
	pthread_spin_unlock(&qp->link_lock);
	/* a connection the QP already replaced tells it nothing */
	if (!put)
		return;
	while (put--)
		tcp_conn_put(conn);
	if (unlinking || !qp->rc)
		return;

	/* the oldest request outstanding fails as unanswered: the QP goes
	 * to ERR and the rest is flushed */
	sw_pipe_begin(&qp->pipe, &pass);
	outstanding =
		sw_pipe_path_lost(&qp->pipe, &pass, OPENRDMA_WC_RETRY_EXC_ERR,
				  OPENRDMA_EVENT_QP_FATAL);
	sw_pipe_end(&qp->pipe, &pass);
	if (outstanding || sw_qp_state(&qp->sw) == OPENRDMA_QPS_ERR)
		return;
	if (!qp->sw.srq) {
		core_lock_acquire(&qp->sw.rq.lock);
		recvs = sw_rq_pending_locked(&qp->sw.rq);
		core_lock_release(&qp->sw.rq.lock);
	}
	if (recvs) {
		/* receives wait for a peer that is gone: flushed */
		sw_qp_error(&qp->sw, OPENRDMA_EVENT_QP_FATAL);
		return;
	}
	/* idle: its next request fails; unused, it gives up when an RC
	 * initiator would have */
	if (sw_timer_add(&qp->ctx->timer, &qp->lost_entry,
			 tcp_now() + retry_span_ns(qp)))
		sw_qp_error(&qp->sw, OPENRDMA_EVENT_QP_FATAL);
}

void tcp_qp_set_cm(struct tcp_qp *qp)
{
	pthread_spin_lock(&qp->link_lock);
	qp->path = TCP_PATH_CM;
	pthread_spin_unlock(&qp->link_lock);
}

void tcp_qp_attach_cm(struct tcp_qp *qp, struct tcp_conn *conn,
		      uint32_t peer_qpn)
{
	tcp_conn_get(conn);
	tcp_conn_get(conn);
	pthread_spin_lock(&qp->link_lock);
	qp->path = TCP_PATH_CM;
	qp->out = conn;
	qp->in = conn;
	pthread_spin_unlock(&qp->link_lock);
	tcp_conn_set_qp(conn, qp, peer_qpn);
	tcp_poll_attach(conn, qp);
	tcp_tx_kick(conn);
}
