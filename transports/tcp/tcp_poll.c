/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Progress driven by polling applications.  An application that busy-polls
 * a CQ is a thread already running, waiting for exactly what arrives on the
 * connections of that CQ's QPs: when its polls come up empty, it reads those
 * connections itself (tcp_poll_drive), and once it has polled steadily, the
 * progress thread stops watching their sockets (they leave its epoll set)
 * instead of waking up for every message.  Per message that leaves one
 * send() on one side and one recv() on the other, with no thread switch
 * between.  Unwatched, not just without EPOLLIN: a socket in an epoll set
 * runs the set's wake-up callback in the sender's path for every segment
 * it receives (0.14 us of a 3.3 us half round trip over loopback).
 *
 * The progress thread hands a connection over when it sees input while a
 * busy poller is at one of its CQs, or when the poller asks: a poller that
 * reads a connection itself usually takes the input before the progress
 * thread, woken for it, looks (epoll then reports nothing), so it asks
 * once, with a wake-up (tcp_poll_asked).  The ask comes from the poll
 * itself, so the progress thread does not look at the poll clock for it.
 * The poller also goes on writing where a full socket stopped the writer,
 * so that a stream of large requests does not wait for the progress
 * thread to be scheduled (tcp_tx.c).
 *
 * The progress thread looks at the connections it handed out every
 * APP_CHECK_NS, and takes back those whose CQs' pollers did not stamp the
 * poll clock since its last look, or at once when the application arms a
 * CQ to sleep on its channel (tcp_cq_req_notify).  Since the last look,
 * not within APP_GRACE_NS: a poller whose few polls take longer than that
 * (under valgrind, say) is still polling, and would lose its connections
 * at every look.  Event-driven applications, which poll a
 * CQ once or twice per notification, never reach APP_STREAK empty polls and
 * are served by the progress thread alone.  A poller that did is busy
 * until it arms the CQ or stops polling, however many completions it
 * finds between: a ping-pong on one CQ makes a few empty polls per
 * message.
 */
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <utlist.h>

#include <openrdma/log.h>

#include "transports/tcp/tcp.h"

/* Empty polls in a row that make a CQ's poller a busy poller. */
#define APP_STREAK 64
/* A busy poller that did not poll for this long stopped. */
#define APP_GRACE_NS (200 * 1000ull)
/* How often the progress thread looks at the connections handed out. */
#define APP_CHECK_NS (1000 * 1000ull)
/* Empty polls in a row before a poller starts reading sockets itself. */
#define DRIVE_AFTER 8
/* Connections one poll reads, at most. */
#define DRIVE_MAX 16
/* Empty polls per stamp of the poll clock: a busy poller's polls come
 * microseconds apart, a small part of APP_GRACE_NS. */
#define STAMP_EVERY 4
/* While a full socket stops a connection's writer, its poller reads it
 * once in this many polls: the read (a recv() and the connection's
 * locks) took about a quarter of a streaming sender's core. */
#define RX_WHILE_BLOCKED 32
/* Connections one look at the pollers' requests hands over, at most. */
#define ASKED_MAX 64

static int drive_add(struct tcp_cq *cq, struct tcp_conn *conn)
{
	struct tcp_conn **d;
	int cap;

	core_lock_acquire(&cq->drive_lock);
	if (cq->ndrive == cq->drive_cap) {
		cap = cq->drive_cap ? 2 * cq->drive_cap : 4;
		d = realloc(cq->drive, (size_t)cap * sizeof(*d));
		if (!d) {
			core_lock_release(&cq->drive_lock);
			return -OPENRDMA_ENOMEM;
		}
		cq->drive = d;
		cq->drive_cap = cap;
	}
	tcp_conn_get(conn);
	cq->drive[cq->ndrive++] = conn;
	core_lock_release(&cq->drive_lock);
	return 0;
}

static void drive_del(struct tcp_cq *cq, struct tcp_conn *conn)
{
	bool found = false;
	int i;

	core_lock_acquire(&cq->drive_lock);
	for (i = 0; i < cq->ndrive; i++) {
		if (cq->drive[i] != conn)
			continue;
		cq->drive[i] = cq->drive[--cq->ndrive];
		found = true;
		break;
	}
	/*
	 * Pollers use the connections they took from the array without a
	 * reference (tcp_poll_drive): the array's is dropped once those
	 * inside are out, and new ones stay out until then.
	 */
	if (found)
		cq->draining++;
	while (found && cq->drivers) {
		core_lock_release(&cq->drive_lock);
		sched_yield();
		core_lock_acquire(&cq->drive_lock);
	}
	if (found)
		cq->draining--;
	core_lock_release(&cq->drive_lock);
	if (found)
		tcp_conn_put(conn);
}

void tcp_poll_attach(struct tcp_conn *conn, struct tcp_qp *qp)
{
	/* the toolkit's copies: set before the QP could be found */
	struct tcp_cq *cq[2] = {
		openrdma_container_of(qp->sw.scq, struct tcp_cq, sw),
		openrdma_container_of(qp->sw.rcq, struct tcp_cq, sw)
	};
	int i, n = cq[0] == cq[1] ? 1 : 2;

	/* without it the progress thread alone serves the connection */
	for (i = 0; i < n; i++) {
		if (drive_add(cq[i], conn)) {
			cq[i] = NULL;
			continue;
		}
	}
	core_lock_acquire(&conn->lock);
	conn->drive_cq[0] = cq[0];
	conn->drive_cq[1] = n == 2 ? cq[1] : NULL;
	core_lock_release(&conn->lock);
}

void tcp_poll_detach(struct tcp_conn *conn)
{
	struct tcp_cq *cq[2];
	int i;

	core_lock_acquire(&conn->lock);
	cq[0] = conn->drive_cq[0];
	cq[1] = conn->drive_cq[1];
	conn->drive_cq[0] = NULL;
	conn->drive_cq[1] = NULL;
	core_lock_release(&conn->lock);
	for (i = 0; i < 2; i++)
		if (cq[i])
			drive_del(cq[i], conn);
}

/* The CQs whose pollers read conn (none, one or two). */
static void drive_cqs(struct tcp_conn *conn, struct tcp_cq *cq[2])
{
	core_lock_acquire(&conn->lock);
	cq[0] = conn->drive_cq[0];
	cq[1] = conn->drive_cq[1];
	core_lock_release(&conn->lock);
}

/* Is a busy poller at conn's CQs now? */
static bool polled(struct tcp_conn *conn, uint64_t now)
{
	struct tcp_cq *cq[2];
	int i;

	drive_cqs(conn, cq);
	for (i = 0; i < 2; i++)
		/* the poller stamps times newer than now as well */
		if (cq[i] &&
		    atomic_load_explicit(&cq[i]->busy, memory_order_relaxed) &&
		    atomic_load_explicit(&cq[i]->last_poll,
					 memory_order_relaxed) +
				    APP_GRACE_NS >
			    now)
			return true;
	return false;
}

/*
 * The write side, for a busy poller: sends conn's delayed acknowledgement
 * if its time has come, and goes on writing where a full socket stopped
 * the writer (a stream of large requests), instead of leaving that to the
 * progress thread's EPOLLOUT, which must first be scheduled on a core the
 * poller keeps busy.  Returns true if a full socket had stopped the
 * writer.
 */
static bool drive_tx(struct tcp_conn *conn)
{
	bool kick = false, blocked;
	uint64_t now;

	/* written under conn->lock, read here without it: nothing to do is
	 * the usual answer, and costs no lock */
	if (!__atomic_load_n(&conn->ack_pending, __ATOMIC_RELAXED) &&
	    !__atomic_load_n(&conn->tx.blocked, __ATOMIC_RELAXED))
		return false;
	now = tcp_now();
	core_lock_acquire(&conn->lock);
	if (conn->ack_pending && !conn->ack_due && tcp_tx_ack_due(conn, now)) {
		conn->ack_due = true;
		kick = true;
	}
	blocked = conn->tx.blocked;
	core_lock_release(&conn->lock);
	if (blocked)
		tcp_tx_writable(conn);
	else if (kick)
		tcp_tx_kick(conn);
	return blocked;
}

/* A busy poller read conn itself: asks the progress thread, once, to leave
 * conn to it. */
static void ask(struct tcp_conn *conn, struct tcp_cq *cq)
{
	/* two loads, the usual answer in a poller's every read */
	if (!atomic_load_explicit(&cq->busy, memory_order_relaxed) ||
	    atomic_load_explicit(&conn->app_asked, memory_order_relaxed))
		return;
	if (atomic_exchange(&conn->app_asked, true))
		return;
	atomic_store(&conn->ctx->app_asked, true);
	tcp_progress_wake(conn->ctx);
}

void tcp_poll_drive(struct tcp_cq *cq)
{
	struct tcp_conn *conn[DRIVE_MAX];
	unsigned int streak;
	uint64_t rx;
	int i, n = 0, first;

	/* a heuristic, not a count: pollers racing on one CQ may lose an
	 * increment, and no locked instruction is spent on it */
	streak = atomic_load_explicit(&cq->streak, memory_order_relaxed);
	atomic_store_explicit(&cq->streak, streak + 1, memory_order_relaxed);
	if (streak % STAMP_EVERY == 0)
		atomic_store_explicit(&cq->last_poll, tcp_now(),
				      memory_order_relaxed);
	/* racing pollers may write a count twice, never skip one */
	if (streak == APP_STREAK)
		atomic_store_explicit(&cq->busy, true, memory_order_relaxed);
	if (streak < DRIVE_AFTER)
		return;
	core_lock_acquire(&cq->drive_lock);
	/* a poll that takes no connection is not counted among those inside
	 * (drive_del waits for them to leave): it returns below */
	if (!cq->draining && cq->ndrive) {
		n = cq->ndrive < DRIVE_MAX ? cq->ndrive : DRIVE_MAX;
		/* in turns, as a poll may stop early */
		first = cq->drive_next < cq->ndrive ? cq->drive_next : 0;
		cq->drive_next = first + 1;
		/* first + i < 2 * ndrive: no division on every poll */
		for (i = 0; i < n; i++)
			conn[i] = cq->drive[first + i < cq->ndrive ?
						    first + i :
						    first + i - cq->ndrive];
		/* they stay in the array, with its references, until we
		 * leave (drive_del) */
		cq->drivers++;
	}
	core_lock_release(&cq->drive_lock);
	if (!n)
		return;
	for (i = 0; i < n; i++) {
		/*
		 * An acknowledgement this poll's read leaves pending is
		 * usually carried by the reply the application posts next:
		 * its deadline is looked at on the next poll.  A writer that
		 * a full socket stopped waits for room, which only a write
		 * attempt finds: answers are read once in RX_WHILE_BLOCKED
		 * polls then.
		 */
		rx = atomic_load_explicit(&conn[i]->rx_count,
					  memory_order_relaxed);
		if (!drive_tx(conn[i]) || streak % RX_WHILE_BLOCKED == 0)
			tcp_rx_run(conn[i], true);
		/* counted by each read that brought something */
		if (atomic_load_explicit(&conn[i]->rx_count,
					 memory_order_relaxed) != rx)
			ask(conn[i], cq);
		/* what the poller waits for is there: the rest can wait for
		 * its next poll rather than make it wait for their recv() */
		if (sw_cq_ready(&cq->sw))
			break;
	}
	core_lock_acquire(&cq->drive_lock);
	cq->drivers--;
	core_lock_release(&cq->drive_lock);
}

/*
 * A thread about to sleep until cq has a completion (the core's EVD
 * waiter) watches the sockets of cq's connections itself and reads what
 * wakes it (tcp_poll_sleep_end): the message wakes the thread that waits
 * for it, where the progress thread would read it first and then wake
 * the waiter through the completion channel.  Such a thread is a busy
 * poller that sleeps: it asks for the connections as a poller that reads
 * them does, so that the progress thread stops watching them, and keeps
 * them while it sleeps (still_polled).  The progress thread still ends a
 * connection whose peer fell silent, and what that completes signals the
 * channel, which the core armed; and at its looks (every APP_CHECK_NS
 * while it has handed connections out) it sends the acknowledgements
 * that a sleeper holds once they are due, as for any busy poller.  With
 * more connections than max, or none, the waiter sleeps on the channel
 * alone.
 */
int tcp_poll_sleep_begin(struct tcp_cq *cq, struct pollfd *pfd, void **cookie,
			 int max)
{
	struct tcp_conn *conn;
	int i, n = 0;

	core_lock_acquire(&cq->drive_lock);
	if (cq->draining || !cq->ndrive || cq->ndrive > max) {
		core_lock_release(&cq->drive_lock);
		return 0;
	}
	for (i = 0; i < cq->ndrive; i++) {
		conn = cq->drive[i];
		/* one that ended says so at every poll until its teardown */
		if (atomic_load(&conn->state) != TCP_CONN_OPEN)
			continue;
		tcp_conn_get(conn);
		cookie[n] = conn;
		pfd[n].fd = conn->poll.fd;
		pfd[n].events = POLLIN | POLLRDHUP;
		pfd[n].revents = 0;
		n++;
	}
	if (n)
		atomic_fetch_add(&cq->sleepers, 1);
	core_lock_release(&cq->drive_lock);
	if (!n)
		return 0;
	atomic_store_explicit(&cq->busy, true, memory_order_relaxed);
	atomic_store_explicit(&cq->last_poll, tcp_now(), memory_order_relaxed);
	for (i = 0; i < n; i++) {
		conn = cookie[i];
		/* the progress thread hands it over at its next turn */
		ask(conn, cq);
		/* a writer that a full socket stopped goes on when it has
		 * room, not at the progress thread's next look */
		if (drive_tx(conn))
			pfd[i].events |= POLLOUT;
	}
	return n;
}

void tcp_poll_sleep_end(struct tcp_cq *cq, const struct pollfd *pfd,
			void **cookie, int n)
{
	struct tcp_conn *conn;
	int i;

	atomic_store_explicit(&cq->last_poll, tcp_now(), memory_order_relaxed);
	atomic_fetch_sub(&cq->sleepers, 1);
	for (i = 0; i < n; i++) {
		conn = cookie[i];
		(void)drive_tx(conn);
		/* data, the peer's end, an error */
		if (pfd[i].revents & ~POLLOUT)
			tcp_rx_run(conn, true);
		tcp_conn_put(conn);
	}
}

/*
 * Leaves conn to its busy poller, if it has one, and stops watching it:
 * the poller sees the peer's end and errors in its recv(), and writes on
 * where a full socket stopped the writer (drive_tx).  A poller that asked
 * was polling when it asked: only a connection it did not ask for needs
 * the poll clock's word.  Returns true if conn is the poller's.
 */
static bool hand_over(struct tcp_conn *conn, bool asked)
{
	struct tcp_ctx *tctx = conn->ctx;

	if (conn->app_mode)
		return true;
	if (atomic_load(&conn->state) != TCP_CONN_OPEN ||
	    (!asked && !polled(conn, tcp_now())) ||
	    epoll_ctl(tctx->epfd, EPOLL_CTL_DEL, conn->poll.fd, NULL))
		return false;
	conn->app_mode = true;
	/* the first look finds the clocks moved */
	conn->poll_seen[0] = 0;
	conn->poll_seen[1] = 0;
	atomic_store(&conn->app_asked, true);
	tcp_conn_get(conn);
	DL_APPEND2(tctx->app_conns, conn, app_prev, app_next);
	atomic_fetch_add(&tctx->app_count, 1);
	return true;
}

void tcp_poll_rx_event(struct tcp_conn *conn)
{
	hand_over(conn, false);
	tcp_rx_run(conn, false);
}

void tcp_poll_asked(struct tcp_ctx *tctx)
{
	struct tcp_conn *conn, *asked[ASKED_MAX];
	int i, n = 0;

	if (!atomic_load_explicit(&tctx->app_asked, memory_order_relaxed) ||
	    !atomic_exchange(&tctx->app_asked, false))
		return;
	pthread_mutex_lock(&tctx->lock);
	DL_FOREACH (tctx->conns, conn) {
		if (conn->app_mode || !atomic_load(&conn->app_asked))
			continue;
		if (n == ASKED_MAX) {
			/* the rest on the next turn, which comes at once */
			atomic_store(&tctx->app_asked, true);
			tcp_progress_wake(tctx);
			break;
		}
		tcp_conn_get(conn);
		asked[n++] = conn;
	}
	pthread_mutex_unlock(&tctx->lock);
	for (i = 0; i < n; i++) {
		/* refused: it may ask again */
		if (!hand_over(asked[i], true))
			atomic_store(&asked[i]->app_asked, false);
		tcp_conn_put(asked[i]);
	}
}

/* Takes conn back from its poller: the progress thread reads it again. */
static void take_back(struct tcp_conn *conn)
{
	struct tcp_ctx *tctx = conn->ctx;
	int ret;

	DL_DELETE2(tctx->app_conns, conn, app_prev, app_next);
	atomic_fetch_sub(&tctx->app_count, 1);
	conn->app_mode = false;
	if (atomic_load(&conn->state) == TCP_CONN_OPEN) {
		/* an ADD reports data already there, and room to write,
		 * edge-triggered or not */
		ret = tcp_poll_add(tctx, &conn->poll, TCP_CONN_EVENTS);
		if (ret) {
			/* no one would read it: it ends */
			openrdma_warn("tcp", "cannot watch a connection: %s",
				      openrdma_strerror(ret));
			tcp_conn_close(conn, ret, true);
			tcp_conn_put(conn);
			return;
		}
		atomic_store(&conn->app_asked, false);
		tcp_rx_run(conn, false);
		/* an acknowledgement the poller held, due or not */
		tcp_ack_list_add(conn);
	}
	tcp_conn_put(conn);
}

/*
 * Is a busy poller still at conn's CQs?  On a look, only if it stamped its
 * poll clock since the previous look (a poller stamps it every few empty
 * polls); between looks, if a CQ is still polled rather than armed.
 */
static bool still_polled(struct tcp_conn *conn, bool look)
{
	struct tcp_cq *cq[2];
	uint64_t stamp;
	bool polled = false;
	int i;

	drive_cqs(conn, cq);
	for (i = 0; i < 2; i++) {
		if (!cq[i] ||
		    !atomic_load_explicit(&cq[i]->busy, memory_order_relaxed))
			continue;
		/* one asleep over its sockets stamps only when it wakes */
		if (!look || atomic_load(&cq[i]->sleepers))
			return true;
		stamp = atomic_load_explicit(&cq[i]->last_poll,
					     memory_order_relaxed);
		if (stamp != conn->poll_seen[i])
			polled = true;
		conn->poll_seen[i] = stamp;
	}
	return polled;
}

/*
 * The progress thread turns for every event and deadline of the context,
 * often microseconds apart: the pollers' clocks are compared only every
 * APP_CHECK_NS, or a slow poller between two stamps would lose its
 * connections to a turn that came for something else.
 */
uint64_t tcp_poll_check(struct tcp_ctx *tctx, uint64_t now)
{
	struct tcp_conn *conn, *tmp;
	bool look = now >= tctx->app_look;

	DL_FOREACH_SAFE2(tctx->app_conns, conn, tmp, app_next)
	{
		if (atomic_load(&conn->state) != TCP_CONN_OPEN ||
		    !still_polled(conn, look))
			take_back(conn);
		else if (look)
			(void)drive_tx(conn);
	}
	if (look)
		tctx->app_look = now + APP_CHECK_NS;
	return tctx->app_conns ? tctx->app_look : 0;
}

void tcp_poll_release(struct tcp_conn *conn)
{
	struct tcp_ctx *tctx = conn->ctx;

	if (!conn->app_mode)
		return;
	DL_DELETE2(tctx->app_conns, conn, app_prev, app_next);
	atomic_fetch_sub(&tctx->app_count, 1);
	conn->app_mode = false;
	tcp_conn_put(conn);
}
