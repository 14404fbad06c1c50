/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The progress thread of a context: one epoll set over every socket of
 * the context (connections, CM listeners, the context's port, its UDP
 * socket) and an eventfd that wakes it.  It reads and places incoming
 * data, continues writes that did not fit, sends delayed
 * acknowledgements, keeps connections alive and tears down those that
 * ended.  It sleeps in epoll (with a timeout for the nearest delayed
 * acknowledgement or sweep), or spins when the busy_poll parameter is set.
 *
 * Also here: the memory guard, which orders socket transfers into and out
 * of registered memory against deregistration.
 */
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include <utlist.h>

#include <openrdma/log.h>

#include "transports/tcp/tcp.h"
#include "core/sw/epoll.h"

#define EVENTS_MAX 64
/* How often keepalives and deadlines are looked at, at most. */
#define SWEEP_MIN_NS (20 * 1000 * 1000ull)

/* ------------------------------------------------------------------ */
/* The memory guard                                                   */
/* ------------------------------------------------------------------ */

/* The guards a thread holds: they nest (a write started while reading),
 * and the lock prefers writers, so it is taken once per context. */
static __thread struct {
	struct tcp_ctx *ctx;
	unsigned int depth;
} mem_held;

void tcp_mem_enter(struct tcp_ctx *tctx)
{
	if (mem_held.ctx == tctx && mem_held.depth) {
		mem_held.depth++;
		return;
	}
	pthread_rwlock_rdlock(&tctx->mem_lock);
	/* a thread is inside one context's guard at a time */
	mem_held.ctx = tctx;
	mem_held.depth = 1;
}

void tcp_mem_leave(struct tcp_ctx *tctx)
{
	if (--mem_held.depth)
		return;
	mem_held.ctx = NULL;
	pthread_rwlock_unlock(&tctx->mem_lock);
}

void tcp_mem_change_begin(struct tcp_ctx *tctx)
{
	pthread_rwlock_wrlock(&tctx->mem_lock);
}

void tcp_mem_change_end(struct tcp_ctx *tctx)
{
	atomic_fetch_add(&tctx->mem_gen, 1);
	pthread_rwlock_unlock(&tctx->mem_lock);
}

/* ------------------------------------------------------------------ */
/* Watched fds                                                        */
/* ------------------------------------------------------------------ */

int tcp_poll_add(struct tcp_ctx *tctx, struct tcp_poll *poll, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = poll };

	/* publishes what the creator set up to the progress thread, which
	 * finds poll through epoll (an order the kernel keeps, but that
	 * ThreadSanitizer cannot see) */
	__atomic_store_n(&poll->fn, poll->fn, __ATOMIC_RELEASE);

	if (epoll_ctl(tctx->epfd, EPOLL_CTL_ADD, poll->fd, &ev))
		return -errno;
	return 0;
}

void tcp_poll_del(struct tcp_ctx *tctx, struct tcp_poll *poll)
{
	if (poll->fd >= 0)
		epoll_ctl(tctx->epfd, EPOLL_CTL_DEL, poll->fd, NULL);
}

void tcp_progress_wake(struct tcp_ctx *tctx)
{
	uint64_t one = 1;

	/* only fails when the counter is full: the thread is awake then */
	if (write(tctx->wake.fd, &one, sizeof(one)) < 0)
		return;
}

static void wake_drain(struct tcp_poll *poll, uint32_t events)
{
	uint64_t v;

	while (read(poll->fd, &v, sizeof(v)) > 0)
		;
}

/* ------------------------------------------------------------------ */
/* Delayed acknowledgements                                           */
/* ------------------------------------------------------------------ */

void tcp_ack_list_add(struct tcp_conn *conn)
{
	struct tcp_ctx *tctx = conn->ctx;
	bool pending, due;

	if (conn->on_ack_list)
		return;
	/* one delay for all: appending keeps the list in deadline order,
	 * with the delay started now if it has not */
	core_lock_acquire(&conn->lock);
	pending = conn->ack_pending;
	due = pending && tcp_tx_ack_due(conn, tcp_now());
	if (due)
		conn->ack_due = true;
	core_lock_release(&conn->lock);
	if (due) {
		tcp_tx_kick(conn);
		return;
	}
	if (!pending)
		return;
	conn->on_ack_list = true;
	tcp_conn_get(conn);
	DL_APPEND2(tctx->ack_list, conn, ack_prev, ack_next);
}

void tcp_ack_list_del(struct tcp_conn *conn)
{
	if (!conn->on_ack_list)
		return;
	conn->on_ack_list = false;
	DL_DELETE2(conn->ctx->ack_list, conn, ack_prev, ack_next);
	tcp_conn_put(conn);
}

/* Sends the acknowledgements whose time has come; returns the next
 * deadline, 0 if none. */
static uint64_t acks_run(struct tcp_ctx *tctx, uint64_t now)
{
	struct tcp_conn *conn;
	uint64_t deadline;
	bool pending;

	while ((conn = tctx->ack_list)) {
		core_lock_acquire(&conn->lock);
		pending = conn->ack_pending;
		if (pending && !tcp_tx_ack_due(conn, now)) {
			deadline = conn->ack_deadline;
			core_lock_release(&conn->lock);
			return deadline;
		}
		if (pending)
			conn->ack_due = true;
		core_lock_release(&conn->lock);
		tcp_conn_get(conn);
		tcp_ack_list_del(conn);
		if (pending)
			tcp_tx_kick(conn);
		tcp_conn_put(conn);
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* The thread                                                         */
/* ------------------------------------------------------------------ */

/* Connections that stopped reading on their budget: their data is
 * waiting, and edge-triggered epoll will not say so again. */
static bool rx_again_run(struct tcp_ctx *tctx)
{
	struct tcp_conn *list = tctx->rx_again, *conn, *tmp;

	tctx->rx_again = NULL;
	DL_FOREACH_SAFE2(list, conn, tmp, rx_next)
	{
		DL_DELETE2(list, conn, rx_prev, rx_next);
		conn->on_rx_again = false;
		tcp_rx_run(conn, false);
		tcp_conn_put(conn);
	}
	return tctx->rx_again != NULL;
}

static void wait_events(struct tcp_ctx *tctx, uint64_t deadline, bool spin)
{
	struct epoll_event ev[EVENTS_MAX];
	int64_t timeout_ns = deadline ? 0 : -1;
	struct tcp_poll *poll;
	uint64_t now;
	int i, n;

	if (spin) {
		timeout_ns = 0;
	} else if (deadline) {
		now = tcp_now();
		if (deadline > now)
			timeout_ns = (int64_t)(deadline - now);
	}
	n = sw_epoll_wait(tctx->epfd, ev, EVENTS_MAX, timeout_ns);
	for (i = 0; i < n; i++) {
		poll = ev[i].data.ptr;
		__atomic_load_n(&poll->fn, __ATOMIC_ACQUIRE)(poll,
							     ev[i].events);
	}
}

static void *progress_thread(void *arg)
{
	struct tcp_ctx *tctx = arg;
	uint64_t now, next, ack_next, app_next;
	bool again;

	while (!atomic_load(&tctx->stop)) {
		now = tcp_now();
		ack_next = acks_run(tctx, now);
		if (now >= tctx->next_sweep) {
			tcp_conn_sweep(tctx, now);
			tctx->next_sweep = now + SWEEP_MIN_NS;
		}
		tcp_conn_reap(tctx);
		tcp_cm_reap_listeners(tctx);
		again = rx_again_run(tctx);
		if (tctx->ud_again) {
			tctx->ud.fn(&tctx->ud, EPOLLIN);
			again |= tctx->ud_again;
		}
		tcp_poll_asked(tctx);
		app_next = tcp_poll_check(tctx, tcp_now());
		next = tctx->next_sweep;
		if (ack_next && ack_next < next)
			next = ack_next;
		if (app_next && app_next < next)
			next = app_next;
		wait_events(tctx, next, again || tctx->prm.busy_poll);
	}
	return NULL;
}

int tcp_progress_start(struct tcp_ctx *tctx)
{
	int ret;

	tctx->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (tctx->epfd < 0)
		return -errno;
	tctx->wake.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (tctx->wake.fd < 0) {
		ret = -errno;
		goto err_ep;
	}
	tctx->wake.fn = wake_drain;
	ret = tcp_poll_add(tctx, &tctx->wake, EPOLLIN | EPOLLET);
	if (ret)
		goto err_wake;
	tctx->qp_listen.fn = tcp_manual_accept;
	ret = tcp_poll_add(tctx, &tctx->qp_listen, EPOLLIN | EPOLLET);
	if (ret)
		goto err_wake;
	ret = tcp_poll_add(tctx, &tctx->ud, EPOLLIN | EPOLLET);
	if (ret)
		goto err_wake;
	ret = -pthread_create(&tctx->thread, NULL, progress_thread, tctx);
	if (ret)
		goto err_wake;
	tctx->thread_started = true;
	return 0;

err_wake:
	close(tctx->wake.fd);
	tctx->wake.fd = -1;
err_ep:
	close(tctx->epfd);
	tctx->epfd = -1;
	return ret;
}

void tcp_progress_stop(struct tcp_ctx *tctx)
{
	struct tcp_conn *conn, *tmp;

	if (tctx->thread_started) {
		atomic_store(&tctx->stop, true);
		tcp_progress_wake(tctx);
		pthread_join(tctx->thread, NULL);
		tctx->thread_started = false;
	}
	/* connections still closing end now, abortively: nobody waits */
	pthread_mutex_lock(&tctx->lock);
	DL_FOREACH_SAFE (tctx->conns, conn, tmp) {
		conn->abortive = true;
		tcp_conn_get(conn);
		pthread_mutex_unlock(&tctx->lock);
		tcp_conn_close(conn, -OPENRDMA_ECONNABORTED, true);
		tcp_conn_put(conn);
		pthread_mutex_lock(&tctx->lock);
	}
	pthread_mutex_unlock(&tctx->lock);
	while (tctx->ack_list)
		tcp_ack_list_del(tctx->ack_list);
	while ((conn = tctx->rx_again)) {
		DL_DELETE2(tctx->rx_again, conn, rx_prev, rx_next);
		conn->on_rx_again = false;
		tcp_conn_put(conn);
	}
	tcp_conn_reap(tctx);
	tcp_cm_reap_listeners(tctx);
	close(tctx->wake.fd);
	close(tctx->epfd);
}
