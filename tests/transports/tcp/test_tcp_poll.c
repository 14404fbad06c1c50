/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * A thread that posts a request writes it itself until the socket is
 * full; the rest is written when the socket has room again: by the
 * progress thread on EPOLLOUT, or by a busy poller on its next polls
 * (tcp_poll.c).  These tests check that what a thread posted goes out
 * once it stops calling into the library, whichever of the two served
 * its connection before (the busy poller here usually reads the socket
 * before the progress thread wakes, which then leaves the connection to
 * the thread; a progress thread that ignored EPOLLOUT fails the test).
 * Also: which connections a busy poller keeps, acknowledgements written
 * by whoever reads, and a waiter that sleeps over the sockets itself.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include <criterion/criterion.h>

#include "core/evd/evd.h"
#include "transports/tcp/tcp.h"
#include "tt.h"

#ifdef HAVE_VALGRIND_VALGRIND_H
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

#define MIB (1u << 20)
/* Comes in over many reads, whoever reads it (small socket buffers). */
#define LONG_WRITE (8 * MIB)
/* Far more than the sockets hold: the writer must stop on a full one. */
#define WRITES 128
#define STREAM_MS 20000

/* Polls s's CQ without a pause, as a busy poller does, for at most ms or
 * until it has n completions; returns how many it took, into wc. */
static int busy_poll(struct tt_side *s, unsigned int ms, struct openrdma_wc *wc,
		     int n)
{
	uint64_t end = tt_now_ms() + ms;
	int got = 0, ret;

	while (got < n && tt_now_ms() < end) {
		ret = openrdma_cq_poll(s->cq, n - got, wc + got);
		cr_assert_geq(ret, 0, "cq_poll: %s", openrdma_strerror(ret));
		got += ret;
	}
	return got;
}

/*
 * The client busy-polls its CQ, posts more 1 MiB RDMA writes than the
 * sockets hold and stops calling into the library.  The last write, from
 * other bytes than the rest, must land at the server all the same.
 */
Test(tcp_poll, stream_goes_on_once_the_poster_stops, .timeout = 60)
{
	struct openrdma_wc wc[WRITES + 1];
	struct sockaddr_storage ss;
	struct tt_side s, c;
	uint64_t end;
	int i, got;

	tt_open(&s, "tcp0", MIB, TT_ACCESS, 0);
	tt_open(&c, "tcp0", 2 * MIB, TT_ACCESS, 0x11);
	memset(c.buf + MIB, 0x22, MIB);
	tt_qp(&s, OPENRDMA_QPT_RC);
	tt_qp(&c, OPENRDMA_QPT_RC);
	tt_listen_addr(&s, &ss);
	tt_cm_connect(&s, &c, (struct sockaddr *)&ss);

	/*
	 * The client polls without a pause while the server's RDMA write
	 * comes in, which makes no completion there (one would end the
	 * poller's streak of empty polls): the poller reads it, or the
	 * progress thread, woken by it, leaves the connection to the poller.
	 */
	cr_assert_eq(busy_poll(&c, 20, wc, 1), 0);
	tt_post(&s, OPENRDMA_WR_RDMA_WRITE, 7, 0, 64, (uintptr_t)c.buf,
		c.mr->rkey);
	cr_assert_eq(busy_poll(&c, 50, wc, 1), 0);
	cr_assert_eq(c.buf[0], 0);
	for (i = 0; i < WRITES; i++)
		tt_post(&c, OPENRDMA_WR_RDMA_WRITE, (uint64_t)i,
			i == WRITES - 1 ? MIB : 0, MIB, (uintptr_t)s.buf,
			s.mr->rkey);
	/* the client no longer polls: the last bytes must come anyway */
	end = tt_now_ms() + STREAM_MS;
	while ((__atomic_load_n(&s.buf[0], __ATOMIC_ACQUIRE) != 0x22 ||
		__atomic_load_n(&s.buf[MIB - 1], __ATOMIC_ACQUIRE) != 0x22) &&
	       tt_now_ms() < end)
		usleep(1000);
	cr_assert_eq(s.buf[0], 0x22, "the stream stopped with its poster");
	cr_assert_eq(s.buf[MIB - 1], 0x22);

	cr_assert_eq(tt_poll(&s, 1, wc, TT_TIMEOUT_MS), 1);
	cr_assert_eq(wc[0].status, OPENRDMA_WC_SUCCESS);
	got = tt_poll(&c, WRITES, wc, TT_TIMEOUT_MS);
	cr_assert_eq(got, WRITES);
	for (i = 0; i < WRITES; i++) {
		cr_assert_eq(wc[i].status, OPENRDMA_WC_SUCCESS);
		cr_assert_eq(wc[i].wr_id, (uint64_t)i);
	}
	tt_close(&c);
	tt_close(&s);
}

/*
 * A CQ polled empty, past the streak that makes its poller read
 * connections, while its QP has none yet: the connection the CM attaches
 * afterwards must still be detached when the QP goes (a poll that found
 * nothing to read must not stay counted as reading).
 */
Test(tcp_poll, empty_polls_before_any_connection, .timeout = 30)
{
	struct sockaddr_storage ss;
	struct openrdma_wc wc;
	struct tt_side s, c;
	int i;

	tt_open(&s, "tcp0", 4096, TT_ACCESS, 0);
	tt_open(&c, "tcp0", 4096, TT_ACCESS, 0);
	tt_qp(&s, OPENRDMA_QPT_RC);
	tt_qp(&c, OPENRDMA_QPT_RC);
	for (i = 0; i < 32; i++)
		cr_assert_eq(openrdma_cq_poll(c.cq, 1, &wc), 0);
	tt_listen_addr(&s, &ss);
	tt_cm_connect(&s, &c, (struct sockaddr *)&ss);
	tt_close(&c);
	tt_close(&s);
}

/*
 * One RDMA write whose payload ends many reads after its header: the
 * acknowledgement it asks for (large requests do) is due when the last
 * byte is in, and must go out then, in that read's turn, although no
 * frame began in it.  The keepalive, which would carry it otherwise, is
 * set to come only long after the bound.  The target is read by its
 * progress thread (whose every wake-up also tries the write side), or by
 * its application busy-polling its CQ, which nothing else wakes.
 */
static void long_write_acknowledged(bool target_polls)
{
	struct sockaddr_storage ss;
	struct openrdma_wc wc;
	struct tt_side s, c;
	uint64_t end;
	int got = 0;

	setenv("OPENRDMA_TCP_KEEPALIVE_MS", "60000", 1);
	/* the sockets hold a small part of it at a time */
	setenv("OPENRDMA_TCP_SNDBUF", "256k", 1);
	setenv("OPENRDMA_TCP_RCVBUF", "256k", 1);
	tt_open(&s, "tcp0", LONG_WRITE, TT_ACCESS, 0);
	tt_open(&c, "tcp0", LONG_WRITE, TT_ACCESS, 0x33);
	tt_qp(&s, OPENRDMA_QPT_RC);
	tt_qp(&c, OPENRDMA_QPT_RC);
	tt_listen_addr(&s, &ss);
	tt_cm_connect(&s, &c, (struct sockaddr *)&ss);
	if (target_polls)
		tt_hand_to_poller(&s, &c, (uintptr_t)s.buf, s.mr->rkey);

	tt_post(&c, OPENRDMA_WR_RDMA_WRITE, 1, 0, LONG_WRITE, (uintptr_t)s.buf,
		s.mr->rkey);
	/* the target's poller polls on, between the initiator's polls */
	end = tt_now_ms() + TT_TIMEOUT_MS;
	while (target_polls && !got && tt_now_ms() < end) {
		cr_assert_eq(openrdma_cq_poll(s.cq, 1, &wc), 0);
		got = openrdma_cq_poll(c.cq, 1, &wc);
		cr_assert_geq(got, 0, "cq_poll: %s", openrdma_strerror(got));
	}
	if (!target_polls)
		got = tt_poll(&c, 1, &wc, TT_TIMEOUT_MS);
	cr_assert_eq(got, 1, "the write was not acknowledged in %d ms",
		     TT_TIMEOUT_MS);
	cr_assert_eq(wc.status, OPENRDMA_WC_SUCCESS);
	cr_assert_eq(s.buf[0], 0x33);
	cr_assert_eq(s.buf[LONG_WRITE - 1], 0x33);
	tt_close(&c);
	tt_close(&s);
	unsetenv("OPENRDMA_TCP_KEEPALIVE_MS");
	unsetenv("OPENRDMA_TCP_SNDBUF");
	unsetenv("OPENRDMA_TCP_RCVBUF");
}

Test(tcp_poll, long_write_acknowledged_by_the_progress_thread, .timeout = 60)
{
	long_write_acknowledged(false);
}

Test(tcp_poll, long_write_acknowledged_by_a_busy_poller, .timeout = 60)
{
	long_write_acknowledged(true);
}

/*
 * A slow poller polls in rounds: STAMP_EVERY polls back to back, which
 * stamp the poll clock once, then a pause to the end of the round.  Its
 * stamps come some 400 us apart: more than 200 us, within the progress
 * thread's millisecond between looks.  It wakes the progress thread
 * twice in each pause, as other work of the context would (a spinning
 * one turns back to back).  A phase counts only if no stamp stood for
 * over SLOW_STAMP_NS: a thread the host holds up for longer did stop
 * polling.  A stamp is the time its poll wrote it, so the test reads
 * the true pace even when the host holds up the rest of the poll.
 */
#define SLOW_POLLS 4 /* tcp_poll.c's STAMP_EVERY */
#define SLOW_ROUND_NS (400 * 1000u)
#define SLOW_EARLY_NS (150 * 1000u)
#define SLOW_LATE_NS (300 * 1000u)
#define SLOW_STAMP_NS (900 * 1000u)
#define SLOW_PHASE_MS 10
#define SLOW_PHASES 3
#define SLOW_TRIES 200

/* Sleeps until tcp_now() reaches t. */
static void sleep_until(uint64_t t)
{
	uint64_t now = tcp_now();

	if (now < t)
		usleep((useconds_t)((t - now) / 1000));
}

/* Polls s's CQ slowly for a phase; returns whether its connection stayed
 * with it, and in *steady whether the stamps kept their pace. */
static bool slow_phase(struct tt_side *s, bool *steady)
{
	struct tcp_ctx *tctx = to_tcp_ctx(s->ctx);
	struct tcp_cq *tcq = to_tcp_cq(s->cq);
	uint64_t t, stamp, end = tcp_now() + SLOW_PHASE_MS * 1000000u;
	struct openrdma_wc wc;
	int i;

	*steady = true;
	for (;;) {
		/* this thread stamps it, with this clock: never after t */
		stamp = atomic_load(&tcq->last_poll);
		t = tcp_now();
		if (t - stamp > SLOW_STAMP_NS)
			*steady = false;
		if (t >= end || atomic_load(&tctx->app_count) != 1)
			break;
		for (i = 0; i < SLOW_POLLS; i++) {
			cr_assert_eq(openrdma_cq_poll(s->cq, 1, &wc), 0);
			/* the old stamp stood until the new one (if any) */
			if (atomic_load(&tcq->last_poll) - stamp >
			    SLOW_STAMP_NS)
				*steady = false;
			stamp = atomic_load(&tcq->last_poll);
		}
		sleep_until(t + SLOW_EARLY_NS);
		tcp_progress_wake(tctx);
		sleep_until(t + SLOW_LATE_NS);
		tcp_progress_wake(tctx);
		sleep_until(t + SLOW_ROUND_NS);
	}
	return atomic_load(&tctx->app_count) == 1;
}

/*
 * A poller whose polls are slow (under valgrind, say) is still polling:
 * it keeps the connection handed to it across the progress thread's
 * looks, as long as it stamps its clock between them.  Taken back when
 * the stamp was over 200 us old (at the late wake-up), or at any turn
 * that found no stamp since the one before (the second wake-up), the
 * connection was lost in every phase.  One that stops is taken back
 * (tcp_fault's killed_peer_of_a_poller_that_stopped).
 */
Test(tcp_poll, slow_poller_keeps_its_connection, .timeout = 60)
{
	struct sockaddr_storage ss;
	struct tt_side s, c;
	int tries, phases = 0;
	bool steady, kept;

	tt_open(&s, "tcp0", 4096, TT_ACCESS, 0);
	tt_open(&c, "tcp0", 4096, TT_ACCESS, 0x44);
	tt_qp(&s, OPENRDMA_QPT_RC);
	tt_qp(&c, OPENRDMA_QPT_RC);
	tt_listen_addr(&s, &ss);
	tt_cm_connect(&s, &c, (struct sockaddr *)&ss);
	for (tries = 0; tries < SLOW_TRIES && phases < SLOW_PHASES; tries++) {
		if (atomic_load(&to_tcp_ctx(s.ctx)->app_count) != 1)
			tt_hand_to_poller(&s, &c, (uintptr_t)s.buf, s.mr->rkey);
		kept = slow_phase(&s, &steady);
		if (!steady)
			continue;
		cr_assert(kept, "a slow poller lost its connection");
		phases++;
	}
	/* valgrind runs one thread at a time, and a poll there can take a
	 * few hundred microseconds: the pace is for the phases that kept it */
	if (RUNNING_ON_VALGRIND && phases < SLOW_PHASES)
		cr_log_warn("under valgrind: the poller kept its pace in %d "
			    "of %d phases, and its connection in those",
			    phases, tries);
	else
		cr_assert_eq(phases, SLOW_PHASES,
			     "the poller kept its pace in %d of %d phases",
			     phases, tries);
	tt_close(&c);
	tt_close(&s);
}

/*
 * A waiter that sleeps (core_evd_wait with evd_spin_us 0, as IT-API and
 * DAT programs wait) watches its connection's socket itself: it asks for
 * the connection, the progress thread hands it over and stops watching
 * it, and from then on only the waiter reads it.  A sleeper side: its CQ
 * has a completion channel and feeds an EVD.
 */
struct sleeper {
	struct tt_side t;
	struct core_evd *evd;
};

#define SLEEP_ROUNDS 200
#define SLEEP_LATE_ROUNDS 20
#define SLEEP_LATE_US 3000

static int wc_copy(void *arg, const struct openrdma_wc *wc, void *rec)
{
	memcpy(rec, wc, sizeof(*wc));
	return 0;
}

static void sleeper_open(struct sleeper *s)
{
	struct core_evd_attr attr = { .streams = CORE_EVD_STREAM_DTO,
				      .rec_size = sizeof(struct openrdma_wc),
				      .capacity = 64 };

	memset(s, 0, sizeof(*s));
	/* sleeps at once, whatever the environment says */
	setenv("OPENRDMA_EVD_SPIN_US", "0", 1);
	tt_open(&s->t, "tcp0", 4096, TT_ACCESS, 0);
	cr_assert_eq(openrdma_cq_destroy(s->t.cq), 0);
	cr_assert_eq(openrdma_comp_channel_create(s->t.ctx, &s->t.cc), 0);
	cr_assert_eq(openrdma_cq_create(s->t.ctx, 1024, NULL, s->t.cc, 0,
					&s->t.cq),
		     0);
	cr_assert_eq(core_evd_create(&attr, &s->evd), 0);
	cr_assert_eq(core_evd_cq_bind(s->evd, s->t.cq, wc_copy, NULL), 0);
	tt_qp(&s->t, OPENRDMA_QPT_RC);
}

static void sleeper_close(struct sleeper *s)
{
	cr_expect_eq(core_evd_free(s->evd), 0);
	tt_close(&s->t);
}

/* The next completion of s within ms; its status is the caller's. */
static struct openrdma_wc sleeper_wait(struct sleeper *s, unsigned int ms)
{
	struct openrdma_wc wc;

	cr_assert_eq(core_evd_wait(s->evd, ms * 1000ull, 1, &wc, NULL), 0);
	return wc;
}

/* An unsignaled 8-byte send of byte v from c (its acknowledgement may
 * come late: nothing waits for it). */
static int send_byte(struct tt_side *c, uint8_t v)
{
	struct openrdma_sge sge = { (uintptr_t)c->buf, 8, c->mr->lkey };
	struct openrdma_send_wr wr = { .sg_list = &sge,
				       .num_sge = 1,
				       .opcode = OPENRDMA_WR_SEND },
				*bad;

	c->buf[0] = v;
	return openrdma_qp_post_send(c->qp, &wr, &bad);
}

static bool sleeper_handed(struct sleeper *s)
{
	return atomic_load(&to_tcp_ctx(s->t.ctx)->app_count) == 1;
}

struct late {
	pthread_t thread;
	struct tt_side *c;
	uint8_t v;
	int fd; /* >= 0: shut this socket down instead of sending */
	int ret;
};

static void *late_run(void *arg)
{
	struct late *l = arg;

	usleep(SLEEP_LATE_US);
	if (l->fd >= 0)
		l->ret = shutdown(l->fd, SHUT_RDWR);
	else
		l->ret = send_byte(l->c, l->v);
	return NULL;
}

static void late_start(struct late *l, struct tt_side *c, uint8_t v, int fd)
{
	l->c = c;
	l->v = v;
	l->fd = fd;
	l->ret = -1;
	cr_assert_eq(pthread_create(&l->thread, NULL, late_run, l), 0);
}

static void late_join(struct late *l)
{
	cr_assert_eq(pthread_join(l->thread, NULL), 0);
	cr_assert_eq(l->ret, 0);
}

/* s waits for a message from c that comes once it sleeps. */
static void sleeper_round(struct sleeper *s, struct tt_side *c, uint64_t id,
			  uint8_t v)
{
	struct openrdma_wc wc;
	struct late l;

	tt_post_recv(&s->t, id, 0, 64);
	late_start(&l, c, v, -1);
	wc = sleeper_wait(s, TT_TIMEOUT_MS);
	late_join(&l);
	cr_assert_eq(wc.status, OPENRDMA_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, id);
	cr_assert_eq(s->t.buf[0], v);
}

/* Rounds until s has its connection (asserted). */
static void sleeper_pair(struct sleeper *s, struct tt_side *c)
{
	struct sockaddr_storage ss;
	int i;

	sleeper_open(s);
	tt_open(c, "tcp0", 4096, TT_ACCESS, 0);
	tt_qp(c, OPENRDMA_QPT_RC);
	tt_listen_addr(&s->t, &ss);
	tt_cm_connect(&s->t, c, (struct sockaddr *)&ss);
	for (i = 0; i < SLEEP_ROUNDS && !sleeper_handed(s); i++)
		sleeper_round(s, c, (uint64_t)i, (uint8_t)i);
	cr_assert(sleeper_handed(s),
		  "the connection never went to the waiter that sleeps");
}

/*
 * Once handed over, the connection is out of the progress thread's
 * epoll set: messages that come while the waiter sleeps wake it, and it
 * reads them (or nothing would, and the waits would time out).
 */
Test(tcp_poll, sleeping_waiter_reads_its_connection, .timeout = 60)
{
	struct sleeper s;
	struct tt_side c;
	int i;

	sleeper_pair(&s, &c);
	for (i = 0; i < SLEEP_LATE_ROUNDS; i++)
		sleeper_round(&s, &c, 1000u + (unsigned int)i,
			      (uint8_t)(0x80 + i));
	cr_assert(sleeper_handed(&s), "the waiter lost its connection");
	tt_close(&c);
	sleeper_close(&s);
}

/* A peer whose connection ends while the waiter sleeps: the receive is
 * flushed at once, and the wait returns it. */
Test(tcp_poll, sleeping_waiter_sees_its_peer_end, .timeout = 60)
{
	struct openrdma_wc wc;
	struct sleeper s;
	struct tt_side c;
	struct late l;
	uint64_t t0;

	sleeper_pair(&s, &c);
	tt_post_recv(&s.t, 77, 0, 64);
	t0 = tt_now_ms();
	late_start(&l, &c, 0, to_tcp_qp(c.qp)->out->poll.fd);
	wc = sleeper_wait(&s, TT_TIMEOUT_MS);
	late_join(&l);
	cr_assert_eq(wc.wr_id, 77);
	cr_assert_eq(wc.status, OPENRDMA_WC_WR_FLUSH_ERR);
	cr_assert_lt(tt_now_ms() - t0, 1000 + SLEEP_LATE_US / 1000);
	tt_close(&c);
	sleeper_close(&s);
}

struct asleep {
	struct sleeper *s;
	int first, second; /* what the two waits returned */
};

static void *asleep_run(void *arg)
{
	struct asleep *a = arg;
	struct openrdma_wc wc;

	a->first =
		core_evd_wait(a->s->evd, TT_TIMEOUT_MS * 1000ull, 1, &wc, NULL);
	if (!a->first && wc.status != OPENRDMA_WC_SUCCESS)
		a->first = -1;
	a->second = core_evd_wait(a->s->evd, 1000 * 1000ull, 1, &wc, NULL);
	return NULL;
}

/*
 * The waiter holds the acknowledgement of what it received for a later
 * frame; when it sleeps again instead, the progress thread's look sends
 * it once due, while the waiter keeps its connection and sleeps on: the
 * sender's completion comes then, not when the waiter stops waiting.
 */
Test(tcp_poll, sleeping_waiter_acknowledges, .timeout = 60)
{
	struct openrdma_wc wc;
	struct asleep a = { 0 };
	struct sleeper s;
	struct tt_side c;
	pthread_t thread;
	int got;

	/* longer than the waiter's polls before it sleeps, shorter than the
	 * sleep */
	setenv("OPENRDMA_TCP_ACK_DELAY_US", "50000", 1);
	sleeper_pair(&s, &c);
	/* a wait that times out sends what it held: nothing is due now, and
	 * the send below asks for no acknowledgement at once */
	cr_assert_eq(core_evd_wait(s.evd, 200 * 1000, 1, &wc, NULL),
		     -OPENRDMA_ETIMEDOUT);
	a.s = &s;
	tt_post_recv(&s.t, 5, 0, 64);
	cr_assert_eq(pthread_create(&thread, NULL, asleep_run, &a), 0);
	tt_post(&c, OPENRDMA_WR_SEND, 9, 0, 8, 0, 0);
	got = tt_poll(&c, 1, &wc, 500);
	cr_assert(sleeper_handed(&s), "the waiter lost its connection");
	cr_assert_eq(pthread_join(thread, NULL), 0);
	cr_assert_eq(a.first, 0);
	cr_assert_eq(a.second, -OPENRDMA_ETIMEDOUT);
	cr_assert_eq(got, 1,
		     "the send was not acknowledged while the "
		     "waiter slept");
	cr_assert_eq(wc.wr_id, 9);
	cr_assert_eq(wc.status, OPENRDMA_WC_SUCCESS);
	tt_close(&c);
	sleeper_close(&s);
	unsetenv("OPENRDMA_TCP_ACK_DELAY_US");
}
