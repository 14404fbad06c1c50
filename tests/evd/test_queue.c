/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The event engine's queue: posts, dequeues, overflow modes, resize and
 * modify, thresholds, waits and timeouts, and the fd.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <criterion/criterion.h>

#include "tests/evd/evd_test.h"

TestSuite(evd_queue, .timeout = 60);

Test(evd_queue, create_rejects_bad_attributes)
{
	struct core_evd_attr ok = {
		.streams = CORE_EVD_STREAM_SOFTWARE,
		.rec_size = 16,
		.capacity = 4,
	};
	struct core_evd_attr a;
	struct core_evd *evd = (struct core_evd *)0x1;

	a = ok;
	a.rec_size = 0;
	cr_assert_eq(core_evd_create(&a, &evd), -OPENRDMA_EINVAL);
	a = ok;
	a.rec_size = CORE_EVD_REC_MAX + 1;
	cr_assert_eq(core_evd_create(&a, &evd), -OPENRDMA_EINVAL);
	a = ok;
	a.capacity = 0;
	cr_assert_eq(core_evd_create(&a, &evd), -OPENRDMA_EINVAL);
	a = ok;
	a.streams = 0;
	cr_assert_eq(core_evd_create(&a, &evd), -OPENRDMA_EINVAL);
	a = ok;
	a.streams |= CORE_EVD_STREAM_AEVD;
	cr_assert_eq(core_evd_create(&a, &evd), -OPENRDMA_EINVAL);
	a = ok;
	a.threshold = 5;
	cr_assert_eq(core_evd_create(&a, &evd), -OPENRDMA_EINVAL);
	a = ok;
	a.flags = 0x80;
	cr_assert_eq(core_evd_create(&a, &evd), -OPENRDMA_EINVAL);
	a = ok;
	a.overflow = 7;
	cr_assert_eq(core_evd_create(&a, &evd), -OPENRDMA_EINVAL);
	cr_assert_eq(core_evd_create(NULL, &evd), -OPENRDMA_EINVAL);
	/* outputs are written only on success */
	cr_assert_eq(evd, (struct core_evd *)0x1);
	cr_assert_eq(core_evd_create(&ok, &evd), 0);
	cr_assert_eq(core_evd_free(evd), 0);
}

Test(evd_queue, fifo_and_empty)
{
	struct core_evd *evd = t_sevd(16, 0);
	struct trec r;
	uint32_t i;

	cr_assert_eq(core_evd_dequeue(evd, &r), -OPENRDMA_EAGAIN);
	for (i = 0; i < 10; i++)
		cr_assert_eq(t_post(evd, 1, i), 0);
	for (i = 0; i < 10; i++) {
		cr_assert_eq(core_evd_dequeue(evd, &r), 0);
		cr_assert_eq(r.seq, i);
	}
	cr_assert_eq(core_evd_dequeue(evd, &r), -OPENRDMA_EAGAIN);
	core_evd_free(evd);
}

Test(evd_queue, wraps_around)
{
	struct core_evd *evd = t_sevd(3, 0);
	struct trec r;
	uint32_t i;

	for (i = 0; i < 100; i++) {
		cr_assert_eq(t_post(evd, 0, 2 * i), 0);
		cr_assert_eq(t_post(evd, 0, 2 * i + 1), 0);
		cr_assert_eq(core_evd_dequeue(evd, &r), 0);
		cr_assert_eq(r.seq, 2 * i);
		cr_assert_eq(core_evd_dequeue(evd, &r), 0);
		cr_assert_eq(r.seq, 2 * i + 1);
	}
	core_evd_free(evd);
}

Test(evd_queue, software_post_full_is_enospc_not_overflow)
{
	struct core_evd *evd = t_sevd(4, 0);
	struct core_evd_info info;
	struct trec r = { 0 };
	int i;

	for (i = 0; i < 4; i++)
		cr_assert_eq(core_evd_post_se(evd, &r), 0);
	cr_assert_eq(core_evd_post_se(evd, &r), -OPENRDMA_ENOSPC);
	cr_assert_eq(core_evd_query(evd, &info), 0);
	cr_assert_eq(info.count, 4);
	cr_assert_not(info.overflowed);
	cr_assert_eq(info.lost, 0);
	core_evd_free(evd);
}

Test(evd_queue, software_post_needs_software_stream)
{
	struct core_evd *evd;
	struct trec r = { 0 };

	cr_assert_eq(t_evd_create(CORE_EVD_STREAM_DTO, 4, 0,
				  CORE_EVD_OVERFLOW_DEFAULT, &evd),
		     0);
	cr_assert_eq(core_evd_post_se(evd, &r), -OPENRDMA_EINVAL);
	/* a source event is fine */
	cr_assert_eq(core_evd_enqueue(evd, &r), 0);
	core_evd_free(evd);
}

Test(evd_queue, dequeue_n_batches)
{
	struct core_evd *evd = t_sevd(64, 0);
	struct trec r[16];
	uint32_t i;

	for (i = 0; i < 20; i++)
		t_post(evd, 0, i);
	cr_assert_eq(core_evd_dequeue_n(evd, r, 16), 16);
	for (i = 0; i < 16; i++)
		cr_assert_eq(r[i].seq, i);
	cr_assert_eq(core_evd_dequeue_n(evd, r, 16), 4);
	cr_assert_eq(r[3].seq, 19);
	cr_assert_eq(core_evd_dequeue_n(evd, r, 16), -OPENRDMA_EAGAIN);
	cr_assert_eq(core_evd_dequeue_n(evd, r, 0), -OPENRDMA_EINVAL);
	core_evd_free(evd);
}

/* ------------------------------------------------------------ ordering */

#define ORD_PRODUCERS 4
#define ORD_EACH 50000

struct ord_ctx {
	struct core_evd *evd;
	uint32_t id;
};

static void *ord_producer(void *arg)
{
	struct ord_ctx *c = arg;
	uint32_t i;

	for (i = 0; i < ORD_EACH; i++)
		if (t_post(c->evd, c->id, i))
			abort();
	return NULL;
}

Test(evd_queue, order_per_producer_with_waiting_consumer)
{
	struct ord_ctx ctx[ORD_PRODUCERS];
	pthread_t tid[ORD_PRODUCERS];
	uint32_t next[ORD_PRODUCERS] = { 0 };
	struct core_evd *evd = t_sevd(256, 0);
	struct trec r;
	size_t total = 0;
	int i;

	for (i = 0; i < ORD_PRODUCERS; i++) {
		ctx[i].evd = evd;
		ctx[i].id = i;
		pthread_create(&tid[i], NULL, ord_producer, &ctx[i]);
	}
	while (total < (size_t)ORD_PRODUCERS * ORD_EACH) {
		cr_assert_eq(core_evd_wait(evd, 5000000, 0, &r, NULL), 0);
		cr_assert_lt(r.producer, ORD_PRODUCERS);
		cr_assert_eq(r.seq, next[r.producer], "producer %u: %u, not %u",
			     r.producer, r.seq, next[r.producer]);
		next[r.producer]++;
		total++;
	}
	for (i = 0; i < ORD_PRODUCERS; i++)
		pthread_join(tid[i], NULL);
	cr_assert_eq(core_evd_dequeue(evd, &r), -OPENRDMA_EAGAIN);
	core_evd_free(evd);
}

/* ------------------------------------------------------------ overflow */

static atomic_int reports;

static void count_report(struct core_evd *evd, void *arg)
{
	cr_assert_eq(arg, (void *)0x42);
	cr_assert_not_null(evd);
	atomic_fetch_add(&reports, 1);
}

static struct core_evd *ovf_evd(enum core_evd_overflow mode, size_t cap)
{
	struct core_evd_attr attr = {
		.streams = CORE_EVD_STREAM_ASYNC_AFF,
		.flags = CORE_EVD_FD,
		.overflow = mode,
		.rec_size = sizeof(struct trec),
		.capacity = cap,
		.overflow_fn = count_report,
		.overflow_arg = (void *)0x42,
	};
	struct core_evd *evd = NULL;

	cr_assert_eq(core_evd_create(&attr, &evd), 0);
	return evd;
}

static void enqueue_n(struct core_evd *evd, uint32_t from, uint32_t n,
		      int expect)
{
	struct trec r = { 0 };
	uint32_t i;

	for (i = 0; i < n; i++) {
		r.seq = from + i;
		cr_assert_eq(core_evd_enqueue(evd, &r), expect);
	}
}

Test(evd_queue, overflow_default_is_sticky_until_reset)
{
	struct core_evd *evd = ovf_evd(CORE_EVD_OVERFLOW_DEFAULT, 4);
	struct core_evd_mod mod = { 0 };
	struct core_evd_info info;
	struct trec r;
	uint32_t i;

	enqueue_n(evd, 0, 4, 0);
	enqueue_n(evd, 4, 3, -OPENRDMA_EOVERFLOW);
	cr_assert_eq(atomic_load(&reports), 1, "one report per overflow");
	core_evd_query(evd, &info);
	cr_assert(info.overflowed);
	cr_assert_eq(info.lost, 3);
	cr_assert_eq(info.count, 4);
	/* room made, but the EVD stays overflowed: still dropped */
	cr_assert_eq(core_evd_dequeue(evd, &r), 0);
	cr_assert_eq(r.seq, 0);
	enqueue_n(evd, 7, 1, -OPENRDMA_EOVERFLOW);
	cr_assert_eq(atomic_load(&reports), 1);
	/* what was queued before the overflow comes out in order ... */
	for (i = 1; i < 4; i++) {
		cr_assert_eq(core_evd_dequeue(evd, &r), 0);
		cr_assert_eq(r.seq, i);
	}
	/* ... then the overflow, for dequeue, wait and the fd */
	cr_assert_eq(core_evd_dequeue(evd, &r), -OPENRDMA_EOVERFLOW);
	cr_assert_eq(core_evd_wait(evd, 1000000, 0, &r, NULL),
		     -OPENRDMA_EOVERFLOW);
	cr_assert(t_readable(info.fd));
	cr_assert_eq(core_evd_modify(evd, CORE_EVD_MOD_OVERFLOW_RESET, &mod),
		     0);
	cr_assert_not(t_readable(info.fd));
	cr_assert_eq(core_evd_dequeue(evd, &r), -OPENRDMA_EAGAIN);
	core_evd_query(evd, &info);
	cr_assert_not(info.overflowed);
	cr_assert_eq(info.lost, 4);
	enqueue_n(evd, 100, 4, 0);
	enqueue_n(evd, 104, 1, -OPENRDMA_EOVERFLOW);
	cr_assert_eq(atomic_load(&reports), 2);
	core_evd_free(evd);
}

Test(evd_queue, overflow_notify_reports_each_episode_and_goes_on)
{
	struct core_evd *evd = ovf_evd(CORE_EVD_OVERFLOW_NOTIFY, 4);
	struct core_evd_info info;
	struct trec r;
	uint32_t i;

	enqueue_n(evd, 0, 4, 0);
	enqueue_n(evd, 4, 5, -OPENRDMA_EOVERFLOW);
	cr_assert_eq(atomic_load(&reports), 1);
	core_evd_query(evd, &info);
	cr_assert_not(info.overflowed);
	cr_assert_eq(info.lost, 5);
	/* a dequeue makes room and ends the episode */
	cr_assert_eq(core_evd_dequeue(evd, &r), 0);
	enqueue_n(evd, 9, 1, 0);
	enqueue_n(evd, 10, 2, -OPENRDMA_EOVERFLOW);
	cr_assert_eq(atomic_load(&reports), 2);
	for (i = 0; i < 4; i++)
		cr_assert_eq(core_evd_dequeue(evd, &r), 0);
	cr_assert_eq(r.seq, 9);
	cr_assert_eq(core_evd_dequeue(evd, &r), -OPENRDMA_EAGAIN);
	core_evd_free(evd);
}

Test(evd_queue, overflow_auto_reset_drops_silently_with_a_count)
{
	struct core_evd *evd = ovf_evd(CORE_EVD_OVERFLOW_AUTO_RESET, 2);
	struct core_evd_info info;
	struct trec r;

	enqueue_n(evd, 0, 2, 0);
	enqueue_n(evd, 2, 10, -OPENRDMA_EOVERFLOW);
	cr_assert_eq(core_evd_dequeue(evd, &r), 0);
	enqueue_n(evd, 12, 1, 0);
	enqueue_n(evd, 13, 1, -OPENRDMA_EOVERFLOW);
	core_evd_query(evd, &info);
	cr_assert_eq(atomic_load(&reports), 0);
	cr_assert_not(info.overflowed);
	cr_assert_eq(info.lost, 11);
	cr_assert_eq(core_evd_dequeue(evd, &r), 0);
	cr_assert_eq(r.seq, 1);
	cr_assert_eq(core_evd_dequeue(evd, &r), 0);
	cr_assert_eq(r.seq, 12);
	core_evd_free(evd);
}

/* ------------------------------------------------------------ control */

Test(evd_queue, resize_keeps_order)
{
	struct core_evd *evd = t_sevd(4, 0);
	struct core_evd_mod mod = { .capacity = 16 };
	struct core_evd_info info;
	struct trec r;
	uint32_t i;

	t_post(evd, 0, 0);
	t_post(evd, 0, 1);
	core_evd_dequeue(evd, &r); /* head moves: the copy must wrap */
	for (i = 2; i < 5; i++)
		t_post(evd, 0, i);
	cr_assert_eq(core_evd_modify(evd, CORE_EVD_MOD_CAPACITY, &mod), 0);
	for (i = 5; i < 16; i++)
		cr_assert_eq(t_post(evd, 0, i), 0);
	mod.capacity = 8;
	cr_assert_eq(core_evd_modify(evd, CORE_EVD_MOD_CAPACITY, &mod),
		     -OPENRDMA_EBUSY);
	for (i = 1; i < 10; i++) {
		cr_assert_eq(core_evd_dequeue(evd, &r), 0);
		cr_assert_eq(r.seq, i);
	}
	cr_assert_eq(core_evd_modify(evd, CORE_EVD_MOD_CAPACITY, &mod), 0);
	core_evd_query(evd, &info);
	cr_assert_eq(info.capacity, 8);
	cr_assert_eq(info.count, 6);
	for (i = 10; i < 16; i++) {
		cr_assert_eq(core_evd_dequeue(evd, &r), 0);
		cr_assert_eq(r.seq, i);
	}
	mod.capacity = 0;
	cr_assert_eq(core_evd_modify(evd, CORE_EVD_MOD_CAPACITY, &mod),
		     -OPENRDMA_EINVAL);
	core_evd_free(evd);
}

Test(evd_queue, modify_is_all_or_nothing_and_query_reports)
{
	struct core_evd *evd = t_sevd(8, CORE_EVD_FD);
	struct core_evd_mod mod = {
		.threshold = 3,
		.overflow = CORE_EVD_OVERFLOW_NOTIFY,
		.capacity = 2, /* below the threshold: refused */
	};
	struct core_evd_info info;

	cr_assert_eq(core_evd_modify(evd,
				     CORE_EVD_MOD_THRESHOLD |
					     CORE_EVD_MOD_OVERFLOW |
					     CORE_EVD_MOD_CAPACITY,
				     &mod),
		     -OPENRDMA_EINVAL);
	core_evd_query(evd, &info);
	cr_assert_eq(info.threshold, 1);
	cr_assert_eq(info.overflow, CORE_EVD_OVERFLOW_DEFAULT);
	cr_assert_eq(info.capacity, 8);
	cr_assert_eq(core_evd_modify(evd, 1u << 20, &mod), -OPENRDMA_EINVAL);
	cr_assert_eq(core_evd_modify(evd,
				     CORE_EVD_MOD_THRESHOLD |
					     CORE_EVD_MOD_OVERFLOW,
				     &mod),
		     0);
	core_evd_query(evd, &info);
	cr_assert_eq(info.threshold, 3);
	cr_assert_eq(info.overflow, CORE_EVD_OVERFLOW_NOTIFY);
	cr_assert_eq(info.streams, CORE_EVD_STREAM_SOFTWARE);
	cr_assert_eq(info.rec_size, sizeof(struct trec));
	cr_assert_geq(info.fd, 0);
	cr_assert(info.enabled);
	cr_assert(info.waitable);
	cr_assert_not(info.callback);
	cr_assert_null(info.aevd);
	cr_assert_eq(info.sources, 0);
	core_evd_free(evd);
}

Test(evd_queue, unwaitable_refuses_waits)
{
	struct core_evd *evd = t_sevd(8, 0);
	struct core_evd_mod mod = { .waitable = false };
	struct trec r;

	t_post(evd, 0, 0);
	cr_assert_eq(core_evd_modify(evd, CORE_EVD_MOD_WAITABLE, &mod), 0);
	cr_assert_eq(core_evd_wait(evd, 0, 0, &r, NULL), -OPENRDMA_ESTATE);
	/* dequeue still works */
	cr_assert_eq(core_evd_dequeue(evd, &r), 0);
	mod.waitable = true;
	cr_assert_eq(core_evd_modify(evd, CORE_EVD_MOD_WAITABLE, &mod), 0);
	t_post(evd, 0, 1);
	cr_assert_eq(core_evd_wait(evd, 0, 0, &r, NULL), 0);
	core_evd_free(evd);
}

/* ------------------------------------------------------------ waits */

Test(evd_queue, wait_timeout_sleeps_for_about_the_time)
{
	struct core_evd *evd = t_sevd(8, 0);
	uint64_t t0, cpu0, wall, cpu;
	struct trec r;

	cr_assert_eq(core_evd_wait(evd, 0, 0, &r, NULL), -OPENRDMA_ETIMEDOUT);
	t0 = t_now_ns();
	cpu0 = t_thread_cpu_ns();
	cr_assert_eq(core_evd_wait(evd, 100000, 0, &r, NULL),
		     -OPENRDMA_ETIMEDOUT);
	wall = t_now_ns() - t0;
	cpu = t_thread_cpu_ns() - cpu0;
	cr_assert_geq(wall, 100000000, "woke early: %lu ns",
		      (unsigned long)wall);
	cr_assert_lt(wall, 400000000, "woke late: %lu ns", (unsigned long)wall);
	/* it slept: no spinning by default */
	cr_assert_lt(cpu, 20000000, "burnt %lu ns of CPU", (unsigned long)cpu);
	core_evd_free(evd);
}

struct later {
	struct core_evd *evd;
	unsigned int ms;
	uint32_t n;
};

static void *post_later(void *arg)
{
	struct later *l = arg;
	uint32_t i;

	t_sleep_ms(l->ms);
	for (i = 0; i < l->n; i++)
		t_post(l->evd, 7, i);
	return NULL;
}

Test(evd_queue, wait_is_woken_by_a_software_event)
{
	struct core_evd *evd = t_sevd(8, 0);
	struct later l = { evd, 50, 1 };
	pthread_t tid;
	struct trec r;
	size_t nmore = 99;
	uint64_t t0, wall;

	t0 = t_now_ns();
	pthread_create(&tid, NULL, post_later, &l);
	cr_assert_eq(core_evd_wait(evd, CORE_EVD_INFINITE, 0, &r, &nmore), 0);
	wall = t_now_ns() - t0;
	cr_assert_eq(r.producer, 7);
	cr_assert_eq(nmore, 0);
	cr_assert_geq(wall, 40000000);
	cr_assert_lt(wall, 1000000000);
	pthread_join(tid, NULL);
	core_evd_free(evd);
}

Test(evd_queue, threshold_wait)
{
	struct core_evd *evd;
	struct core_evd_attr attr = {
		.streams = CORE_EVD_STREAM_SOFTWARE,
		.rec_size = sizeof(struct trec),
		.capacity = 16,
		.threshold = 5,
	};
	struct later l;
	pthread_t tid;
	struct trec r;
	size_t nmore;
	uint32_t i;

	cr_assert_eq(core_evd_create(&attr, &evd), 0);
	for (i = 0; i < 4; i++)
		t_post(evd, 0, i);
	/* 4 of 5: the wait times out and takes nothing */
	cr_assert_eq(core_evd_wait(evd, 50000, 0, &r, NULL),
		     -OPENRDMA_ETIMEDOUT);
	/* a per-wait threshold overrides the EVD's */
	cr_assert_eq(core_evd_wait(evd, 0, 2, &r, &nmore), 0);
	cr_assert_eq(r.seq, 0);
	cr_assert_eq(nmore, 3);
	cr_assert_eq(core_evd_wait(evd, 0, 17, &r, NULL), -OPENRDMA_EINVAL);
	l = (struct later){ evd, 30, 2 };
	pthread_create(&tid, NULL, post_later, &l);
	cr_assert_eq(core_evd_wait(evd, 5000000, 0, &r, &nmore), 0);
	cr_assert_eq(r.seq, 1);
	cr_assert_eq(nmore, 4);
	pthread_join(tid, NULL);
	core_evd_free(evd);
}

struct waiter {
	struct core_evd *evd;
	int ret;
	uint32_t seq;
};

static void *wait_forever(void *arg)
{
	struct waiter *w = arg;
	struct trec r;
	int ret;

	/* the main thread probes with waits of its own: -EBUSY, retry */
	do
		ret = core_evd_wait(w->evd, CORE_EVD_INFINITE, 0, &r, NULL);
	while (ret == -OPENRDMA_EBUSY);
	w->ret = ret;
	return NULL;
}

Test(evd_queue, one_waiter_at_a_time)
{
	struct core_evd *evd = t_sevd(8, 0);
	struct waiter w = { .evd = evd };
	pthread_t tid;
	struct trec r;

	pthread_create(&tid, NULL, wait_forever, &w);
	cr_assert(t_waiter_inside(evd), "the waiter never waited");
	cr_assert_eq(core_evd_wait(evd, 0, 0, &r, NULL), -OPENRDMA_EBUSY);
	t_post(evd, 0, 0);
	pthread_join(tid, NULL);
	cr_assert_eq(w.ret, 0);
	core_evd_free(evd);
}

/*
 * A wait in a thread running fn ends with -ESTATE when its EVD becomes
 * unwaitable, and a second one with -ECANCELED when the EVD is freed.
 */
static void waits_end(struct core_evd *evd, void *(*fn)(void *))
{
	struct core_evd_mod mod = { .waitable = false };
	struct waiter w = { .evd = evd };
	pthread_t tid;

	pthread_create(&tid, NULL, fn, &w);
	cr_assert(t_waiter_inside(evd), "the waiter never waited");
	cr_assert_eq(core_evd_modify(evd, CORE_EVD_MOD_WAITABLE, &mod), 0);
	pthread_join(tid, NULL);
	cr_assert_eq(w.ret, -OPENRDMA_ESTATE);

	mod.waitable = true;
	cr_assert_eq(core_evd_modify(evd, CORE_EVD_MOD_WAITABLE, &mod), 0);
	pthread_create(&tid, NULL, fn, &w);
	cr_assert(t_waiter_inside(evd), "the waiter never waited");
	cr_assert_eq(core_evd_free(evd), 0);
	pthread_join(tid, NULL);
	cr_assert_eq(w.ret, -OPENRDMA_ECANCELED);
}

Test(evd_queue, unwaitable_and_free_end_a_blocked_wait)
{
	waits_end(t_sevd(8, 0), wait_forever);
}

Test(evd_queue, bounded_spin_before_sleeping)
{
	struct core_evd *evd;
	uint64_t cpu0, cpu;
	struct trec r;

	/* read once, at the first wait of the process */
	setenv("OPENRDMA_EVD_SPIN_US", "20000", 1);
	evd = t_sevd(8, 0);
	cpu0 = t_thread_cpu_ns();
	cr_assert_eq(core_evd_wait(evd, 200000, 0, &r, NULL),
		     -OPENRDMA_ETIMEDOUT);
	cpu = t_thread_cpu_ns() - cpu0;
	/*
	 * Spun about 20 ms of the 200 ms, slept the rest.  A loaded machine
	 * takes the CPU away during the spin: only ask for clearly more than
	 * a sleeping wait uses.
	 */
	cr_assert_geq(cpu, 1000000, "spun only %lu ns", (unsigned long)cpu);
	cr_assert_lt(cpu, 120000000, "spun %lu ns", (unsigned long)cpu);
	core_evd_free(evd);
}

/*
 * A spinning waiter (evd_spin_us) watches a pushed EVD's count without its
 * lock and looks under the lock now and then: it still takes what comes,
 * ends on a free or on unwaitable, and times out, without ever sleeping.
 */
static void *wait_spinning(void *arg)
{
	struct waiter *w = arg;
	struct trec r = { 0 };
	int ret;

	do
		ret = core_evd_wait(w->evd, 5000000, 0, &r, NULL);
	while (ret == -OPENRDMA_EBUSY);
	w->ret = ret;
	w->seq = r.seq;
	return NULL;
}

static struct core_evd *spinning_sevd(void)
{
	/* read once, at the first wait of the process: spin past any test */
	setenv("OPENRDMA_EVD_SPIN_US", "60000000", 1);
	return t_sevd(8, 0);
}

Test(evd_queue, spinning_wait_takes_what_is_posted)
{
	struct core_evd *evd = spinning_sevd();
	struct waiter w = { .evd = evd };
	pthread_t tid;

	pthread_create(&tid, NULL, wait_spinning, &w);
	cr_assert(t_waiter_inside(evd), "the waiter never waited");
	cr_assert_eq(t_post(evd, 3, 42), 0);
	pthread_join(tid, NULL);
	cr_assert_eq(w.ret, 0);
	cr_assert_eq(w.seq, 42);
	core_evd_free(evd);
}

Test(evd_queue, unwaitable_and_free_end_a_spinning_wait)
{
	waits_end(spinning_sevd(), wait_spinning);
}

Test(evd_queue, spinning_wait_times_out)
{
	struct core_evd *evd = spinning_sevd();
	uint64_t t0 = t_now_ns();
	struct trec r;

	cr_assert_eq(core_evd_wait(evd, 20000, 0, &r, NULL),
		     -OPENRDMA_ETIMEDOUT);
	cr_assert_lt(t_now_ns() - t0, 5000000000ull);
	cr_assert_eq(core_evd_wait(evd, 0, 0, &r, NULL), -OPENRDMA_ETIMEDOUT);
	core_evd_free(evd);
}

/* ------------------------------------------------------------ the fd */

Test(evd_queue, fd_readable_exactly_while_events_are_queued)
{
	struct core_evd *evd = t_sevd(8, CORE_EVD_FD);
	struct epoll_event ev = { .events = EPOLLIN };
	struct core_evd_info info;
	struct timeval tv = { 0, 0 };
	struct trec r;
	fd_set set;
	int ep;

	core_evd_query(evd, &info);
	cr_assert_geq(info.fd, 0);
	ep = epoll_create1(0);
	cr_assert_eq(epoll_ctl(ep, EPOLL_CTL_ADD, info.fd, &ev), 0);

	cr_assert_not(t_readable(info.fd));
	cr_assert_eq(epoll_wait(ep, &ev, 1, 0), 0);
	t_post(evd, 0, 0);
	t_post(evd, 0, 1);
	cr_assert(t_readable(info.fd));
	FD_ZERO(&set);
	FD_SET(info.fd, &set);
	cr_assert_eq(select(info.fd + 1, &set, NULL, NULL, &tv), 1);
	cr_assert_eq(epoll_wait(ep, &ev, 1, 0), 1);
	cr_assert_eq(core_evd_dequeue(evd, &r), 0);
	cr_assert(t_readable(info.fd), "one left: still readable");
	cr_assert_eq(core_evd_dequeue(evd, &r), 0);
	cr_assert_not(t_readable(info.fd), "empty: not readable");
	FD_ZERO(&set);
	FD_SET(info.fd, &set);
	cr_assert_eq(select(info.fd + 1, &set, NULL, NULL, &tv), 0);
	cr_assert_eq(epoll_wait(ep, &ev, 1, 0), 0);
	/* through a wait too */
	t_post(evd, 0, 2);
	cr_assert(t_readable(info.fd));
	cr_assert_eq(core_evd_wait(evd, 0, 0, &r, NULL), 0);
	cr_assert_not(t_readable(info.fd));
	/* and through a batch */
	t_post(evd, 0, 3);
	t_post(evd, 0, 4);
	cr_assert_eq(core_evd_dequeue_n(evd, &r, 1), 1);
	cr_assert(t_readable(info.fd));
	cr_assert_eq(core_evd_dequeue_n(evd, &r, 1), 1);
	cr_assert_not(t_readable(info.fd));
	close(ep);
	core_evd_free(evd);
}

Test(evd_queue, fd_follows_a_producer_thread)
{
	struct core_evd *evd = t_sevd(1024, CORE_EVD_FD);
	struct later l = { evd, 20, 500 };
	struct core_evd_info info;
	struct pollfd pfd;
	pthread_t tid;
	struct trec r;
	uint32_t got = 0;

	core_evd_query(evd, &info);
	pthread_create(&tid, NULL, post_later, &l);
	while (got < 500) {
		pfd = (struct pollfd){ .fd = info.fd, .events = POLLIN };
		cr_assert_eq(poll(&pfd, 1, 5000), 1);
		while (core_evd_dequeue(evd, &r) == 0) {
			cr_assert_eq(r.seq, got);
			got++;
		}
	}
	pthread_join(tid, NULL);
	cr_assert_not(t_readable(info.fd));
	core_evd_free(evd);
}
