/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Connections: creation, the events of their socket, and their end.
 *
 * A connection is referenced by its creator, by the progress thread while
 * it is registered, by the close queue, and by whoever writes or looks it
 * up for a moment.  Only the progress thread tears one down (after
 * tcp_conn_close() queued it): it stops watching the socket, ends a
 * placement cut short, and tells the QP and the CM id that owned it.  The
 * socket itself is closed with the last reference, so no other thread can
 * write to a number the kernel gave to a new socket.
 */
#include <netinet/in.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>
#include <utlist.h>

#include <openrdma/log.h>

#include "transports/tcp/tcp.h"

static void conn_event(struct tcp_poll *poll, uint32_t events);

int tcp_conn_create(struct tcp_ctx *tctx, int fd, enum tcp_conn_kind kind,
		    struct tcp_conn **conn_out)
{
	struct tcp_conn *conn;
	uint64_t now = tcp_now();
	int ret;

	conn = calloc(1, sizeof(*conn));
	if (!conn)
		return -OPENRDMA_ENOMEM;
	conn->rx.cap = tctx->prm.rx_buffer;
	conn->rx.buf = malloc(conn->rx.cap);
	if (!conn->rx.buf) {
		ret = -OPENRDMA_ENOMEM;
		goto err_free;
	}
	ret = core_lock_init(&conn->lock, CORE_LOCK_SPIN);
	if (ret)
		goto err_buf;
	conn->ctx = tctx;
	conn->poll.fd = fd;
	conn->poll.fn = conn_event;
	atomic_init(&conn->ref, 1);
	atomic_init(&conn->state, TCP_CONN_CONNECTING);
	conn->kind = kind;
	conn->initiator = kind != TCP_CONN_QP_IN;
	conn->target = kind != TCP_CONN_QP_OUT;
	/* QP connections by hand carry requests once HELLO was answered */
	conn->confirmed =
		kind == TCP_CONN_CM_ACTIVE || kind == TCP_CONN_CM_PASSIVE;
	conn->rx_at = now;
	conn->tx_at = now;
	*conn_out = conn;
	return 0;

err_buf:
	free(conn->rx.buf);
err_free:
	free(conn);
	return ret;
}

static void conn_free(struct tcp_conn *conn)
{
	struct tcp_ctl *c, *tmp;

	LL_FOREACH_SAFE (conn->ctl_head, c, tmp)
		free(c);
	if (conn->poll.fd >= 0)
		close(conn->poll.fd);
	core_lock_destroy(&conn->lock);
	free(conn->rx.buf);
	free(conn);
}

void tcp_conn_get(struct tcp_conn *conn)
{
	atomic_fetch_add(&conn->ref, 1);
}

void tcp_conn_put(struct tcp_conn *conn)
{
	if (atomic_fetch_sub(&conn->ref, 1) == 1)
		conn_free(conn);
}

/* Unlinks conn from the context's list; ctx->lock held. */
static void conns_del(struct tcp_ctx *tctx, struct tcp_conn *conn)
{
	if (tctx->sweep_next == conn)
		tctx->sweep_next = conn->next;
	DL_DELETE(tctx->conns, conn);
}

int tcp_conn_start(struct tcp_conn *conn, enum tcp_conn_state state)
{
	struct tcp_ctx *tctx = conn->ctx;
	int ret;

	atomic_store(&conn->state, state);
	pthread_mutex_lock(&tctx->lock);
	DL_APPEND(tctx->conns, conn);
	pthread_mutex_unlock(&tctx->lock);
	/* the progress thread's reference, dropped at teardown */
	tcp_conn_get(conn);
	ret = tcp_poll_add(tctx, &conn->poll, TCP_CONN_EVENTS);
	if (ret) {
		pthread_mutex_lock(&tctx->lock);
		conns_del(tctx, conn);
		pthread_mutex_unlock(&tctx->lock);
		atomic_store(&conn->state, TCP_CONN_CLOSED);
		tcp_conn_put(conn);
	}
	return ret;
}

void tcp_conn_close(struct tcp_conn *conn, int err, bool abortive)
{
	struct tcp_ctx *tctx = conn->ctx;
	int state = atomic_load(&conn->state);

	do {
		if (state == TCP_CONN_CLOSING || state == TCP_CONN_CLOSED)
			return;
	} while (!atomic_compare_exchange_weak(&conn->state, &state,
					       TCP_CONN_CLOSING));
	conn->error = err;
	conn->abortive = abortive;
	openrdma_dbg("tcp", "close conn %p kind %d err %d abortive %d from %p",
		     (void *)conn, conn->kind, err, abortive,
		     __builtin_return_address(0));
	pthread_mutex_lock(&tctx->lock);
	if (!conn->close_queued) {
		conn->close_queued = true;
		tcp_conn_get(conn);
		LL_PREPEND2(tctx->closing, conn, close_next);
	}
	pthread_mutex_unlock(&tctx->lock);
	tcp_progress_wake(tctx);
}

void tcp_conn_quiesce(struct tcp_conn *conn)
{
	/* writers check the state before each write: once CLOSING, the one
	 * inside returns soon */
	core_lock_acquire(&conn->lock);
	while (conn->tx.busy) {
		core_lock_release(&conn->lock);
		sched_yield();
		core_lock_acquire(&conn->lock);
	}
	core_lock_release(&conn->lock);
}

/* Progress thread: the end of a connection. */
static void teardown(struct tcp_conn *conn)
{
	struct tcp_ctx *tctx = conn->ctx;
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	struct tcp_qp *qp;

	tcp_poll_del(tctx, &conn->poll);
	tcp_ack_list_del(conn);
	if (conn->on_rx_again) {
		conn->on_rx_again = false;
		DL_DELETE2(tctx->rx_again, conn, rx_prev, rx_next);
		tcp_conn_put(conn);
	}
	tcp_poll_release(conn);
	tcp_conn_quiesce(conn);
	tcp_rx_quiesce(conn);
	if (conn->error && conn->error != -OPENRDMA_ECONNABORTED)
		openrdma_dbg("tcp", "connection %p (fd %d) ends: %s (%d)",
			     (void *)conn, conn->poll.fd,
			     openrdma_strerror(conn->error), conn->error);
	/* a receive being filled completes before its QP hears of the end */
	tcp_rx_fini(conn);
	tcp_tx_fini(conn);

	/* the CM id first: once it let go, nothing attaches a QP any more */
	if (conn->kind == TCP_CONN_CM_ACTIVE ||
	    conn->kind == TCP_CONN_CM_PASSIVE)
		tcp_cm_conn_lost(conn, conn->error);
	/* held: whoever destroys or resets the QP waits for it */
	qp = tcp_conn_qp_get(conn);
	if (qp) {
		tcp_poll_detach(conn);
		tcp_conn_set_qp(conn, NULL, 0);
		tcp_qp_conn_lost(qp, conn, conn->error);
		tcp_qp_put(qp);
	}
	if (conn->abortive)
		setsockopt(conn->poll.fd, SOL_SOCKET, SO_LINGER, &lg,
			   sizeof(lg));
	else
		shutdown(conn->poll.fd, SHUT_WR);

	pthread_mutex_lock(&tctx->lock);
	conns_del(tctx, conn);
	if (conn->hello_counted) {
		conn->hello_counted = false;
		tctx->hello_pending--;
	}
	atomic_store(&conn->state, TCP_CONN_CLOSED);
	pthread_cond_broadcast(&tctx->reaped);
	pthread_mutex_unlock(&tctx->lock);
	tcp_conn_put(conn); /* the progress thread's */
}

void tcp_conn_reap(struct tcp_ctx *tctx)
{
	struct tcp_conn *list, *conn;

	for (;;) {
		pthread_mutex_lock(&tctx->lock);
		list = tctx->closing;
		tctx->closing = NULL;
		pthread_mutex_unlock(&tctx->lock);
		if (!list)
			return;
		while ((conn = list)) {
			LL_DELETE2(list, conn, close_next);
			teardown(conn);
			tcp_conn_put(conn); /* the close queue's */
		}
	}
}

struct tcp_qp *tcp_conn_qp_get(struct tcp_conn *conn)
{
	struct tcp_qp *qp;

	core_lock_acquire(&conn->lock);
	qp = conn->qp;
	if (qp)
		tcp_qp_hold(qp);
	core_lock_release(&conn->lock);
	return qp;
}

void tcp_conn_set_qp(struct tcp_conn *conn, struct tcp_qp *qp,
		     uint32_t peer_qpn)
{
	core_lock_acquire(&conn->lock);
	conn->peer_qpn = peer_qpn;
	__atomic_store_n(&conn->qp, qp, __ATOMIC_RELEASE);
	core_lock_release(&conn->lock);
}

/* The TCP handshake of an outgoing connection ended. */
static void connected(struct tcp_conn *conn)
{
	int err = 0, state = TCP_CONN_CONNECTING;
	socklen_t len = sizeof(err);

	if (getsockopt(conn->poll.fd, SOL_SOCKET, SO_ERROR, &err, &len))
		err = errno;
	if (err) {
		tcp_conn_close(conn, -err, false);
		return;
	}
	len = sizeof(conn->local);
	getsockname(conn->poll.fd, (struct sockaddr *)&conn->local, &len);
	tcp_addr_normalize(&conn->local);
	tcp_sock_tune(conn->ctx, conn->poll.fd);
	conn->rx_at = tcp_now();
	/* a connection closed meanwhile stays closed: teardown relies on
	 * no writer starting once it is CLOSING */
	if (!atomic_compare_exchange_strong(&conn->state, &state,
					    TCP_CONN_OPEN))
		return;
	if (conn->kind == TCP_CONN_QP_OUT)
		tcp_manual_connected(conn);
	else
		tcp_cm_connected(conn);
}

static void conn_event(struct tcp_poll *poll, uint32_t events)
{
	struct tcp_conn *conn =
		openrdma_container_of(poll, struct tcp_conn, poll);
	int state = atomic_load(&conn->state);

	if (state == TCP_CONN_CONNECTING) {
		if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
			return;
		connected(conn);
		state = atomic_load(&conn->state);
	}
	if (state != TCP_CONN_OPEN)
		return;
	/* an edge that brings the end with data is the last one */
	if (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))
		atomic_store(&conn->rdhup, true);
	if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
		tcp_poll_rx_event(conn);
	if ((events & EPOLLOUT) && atomic_load(&conn->state) == TCP_CONN_OPEN)
		tcp_tx_writable(conn);
}

/* Turns conn's counts of reads and writes into the times they last moved:
 * the sweep's precision (SWEEP_MIN_NS) is enough for keepalives. */
static void activity(struct tcp_conn *conn, uint64_t now)
{
	uint64_t rx =
		atomic_load_explicit(&conn->rx_count, memory_order_relaxed);
	uint64_t tx =
		atomic_load_explicit(&conn->tx_count, memory_order_relaxed);

	if (rx != conn->rx_seen) {
		conn->rx_seen = rx;
		conn->rx_at = now;
	}
	if (tx != conn->tx_seen) {
		conn->tx_seen = tx;
		conn->tx_at = now;
	}
}

/* Connections one sweep pass acts on, collected under ctx->lock; a full
 * pass leaves the rest to the next, which resumes where it stopped. */
#define SWEEP_BATCH 64

/* The connection after conn, round the list; NULL back at start. */
static struct tcp_conn *sweep_step(struct tcp_ctx *tctx, struct tcp_conn *conn,
				   struct tcp_conn *start)
{
	struct tcp_conn *next = conn->next ? conn->next : tctx->conns;

	return next == start ? NULL : next;
}

void tcp_conn_sweep(struct tcp_ctx *tctx, uint64_t now)
{
	uint64_t ka = (uint64_t)tctx->prm.keepalive_ms * 1000000u;
	struct tcp_conn *conn, *start, *act[SWEEP_BATCH];
	int what[SWEEP_BATCH], i, n = 0;

	pthread_mutex_lock(&tctx->lock);
	start = tctx->sweep_next ? tctx->sweep_next : tctx->conns;
	tctx->sweep_next = NULL;
	for (conn = start; conn; conn = sweep_step(tctx, conn, start)) {
		if (n == SWEEP_BATCH) {
			tctx->sweep_next = conn;
			break;
		}
		if (atomic_load(&conn->state) == TCP_CONN_CLOSING ||
		    atomic_load(&conn->state) == TCP_CONN_CLOSED)
			continue;
		activity(conn, now);
		if (conn->deadline && now > conn->deadline) {
			what[n] = 0; /* handshake too slow */
		} else if (conn->deadline && conn->kind == TCP_CONN_QP_OUT) {
			what[n] = 3; /* requests may wait for the peer */
		} else if (!conn->deadline &&
			   atomic_load(&conn->state) == TCP_CONN_OPEN &&
			   conn->rx_at + ka < now) {
			what[n] = 1; /* silent peer */
		} else if (atomic_load(&conn->state) == TCP_CONN_OPEN &&
			   !__atomic_load_n(&conn->shut, __ATOMIC_RELAXED) &&
			   conn->tx_at + ka / 3 < now) {
			what[n] = 2; /* we were quiet: keep it alive */
		} else {
			continue;
		}
		tcp_conn_get(conn);
		act[n++] = conn;
	}
	pthread_mutex_unlock(&tctx->lock);

	for (i = 0; i < n; i++) {
		conn = act[i];
		switch (what[i]) {
		case 0:
			tcp_conn_close(conn, -OPENRDMA_ETIMEDOUT, true);
			break;
		case 1:
			openrdma_info("tcp", "peer silent for %u ms: closing",
				      tctx->prm.keepalive_ms);
			tcp_conn_close(conn, -OPENRDMA_ETIMEDOUT, true);
			break;
		case 3:
			tcp_manual_sweep(conn, now);
			break;
		default:
			core_lock_acquire(&conn->lock);
			conn->want_keepalive = true;
			core_lock_release(&conn->lock);
			/* a writer at work gathers once more for it */
			tcp_tx_kick(conn);
			break;
		}
		tcp_conn_put(conn);
	}
}
