/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Callbacks and the worker pool: serial per EVD, in order, exactly once,
 * attach and detach while events flow, detach from inside a callback,
 * free with a callback, and no thread left behind.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>

#include "tests/evd/evd_test.h"

TestSuite(evd_callback, .timeout = 120);

static bool wait_for(atomic_size_t *v, size_t want, unsigned int ms)
{
	unsigned int i;

	for (i = 0; i < ms && atomic_load(v) < want; i++)
		t_sleep_ms(1);
	return atomic_load(v) >= want;
}

/* Asserts that each of the n events was seen exactly once. */
static void assert_once(const uint8_t *seen, size_t n)
{
	size_t i, bad = 0, first = 0;

	for (i = 0; i < n; i++) {
		if (seen[i] != 1 && !bad++)
			first = i;
	}
	cr_assert_eq(bad, 0, "%zu events not seen once; first: %zu, %u times",
		     bad, first, seen[first]);
}

/* ------------------------------------------------------------ basics */

struct counter {
	atomic_size_t n;
	atomic_int inside;
	atomic_int overlap;
	uint32_t next;
};

static void drain_count(struct core_evd *evd, void *arg)
{
	struct counter *c = arg;
	struct trec r[32];
	int n, i;

	if (atomic_fetch_add(&c->inside, 1))
		atomic_store(&c->overlap, 1);
	while ((n = core_evd_dequeue_n(evd, r, 32)) > 0) {
		for (i = 0; i < n; i++) {
			if (r[i].seq != c->next)
				atomic_store(&c->overlap, 2);
			c->next++;
		}
		atomic_fetch_add(&c->n, n);
	}
	atomic_fetch_sub(&c->inside, 1);
}

Test(evd_callback, runs_for_posted_events)
{
	struct core_evd *evd = t_sevd(64, 0);
	struct counter c = { 0 };
	struct core_evd_info info;
	uint32_t i;

	cr_assert_eq(core_evd_engine_threads(), 0, "lazy start");
	cr_assert_eq(core_evd_callback_attach(evd, drain_count, &c, 0), 0);
	cr_assert_gt(core_evd_engine_threads(), 0);
	cr_assert_eq(core_evd_callback_attach(evd, drain_count, &c, 0),
		     -OPENRDMA_EEXIST);
	core_evd_query(evd, &info);
	cr_assert(info.callback);
	for (i = 0; i < 1000; i++)
		t_post(evd, 0, i);
	cr_assert(wait_for(&c.n, 1000, 5000));
	cr_assert_eq(atomic_load(&c.overlap), 0);
	cr_assert_eq(core_evd_callback_detach(evd), 0);
	cr_assert_eq(core_evd_callback_detach(evd), -OPENRDMA_ENOENT);
	cr_assert_eq(t_engine_threads_settle(2000), 0, "pool stopped");
	core_evd_free(evd);
}

Test(evd_callback, events_queued_before_attach_are_delivered)
{
	struct core_evd *evd = t_sevd(64, 0);
	struct counter c = { 0 };
	uint32_t i;

	for (i = 0; i < 10; i++)
		t_post(evd, 0, i);
	cr_assert_eq(core_evd_callback_attach(evd, drain_count, &c, 0), 0);
	cr_assert(wait_for(&c.n, 10, 5000));
	core_evd_free(evd);
	cr_assert_eq(t_engine_threads_settle(2000), 0);
}

Test(evd_callback, disabled_evd_runs_no_callback)
{
	struct core_evd *evd = t_sevd(64, 0);
	struct core_evd_mod mod = { .enabled = false };
	struct counter c = { 0 };

	cr_assert_eq(core_evd_modify(evd, CORE_EVD_MOD_ENABLED, &mod), 0);
	cr_assert_eq(core_evd_callback_attach(evd, drain_count, &c, 0), 0);
	t_post(evd, 0, 0);
	t_sleep_ms(100);
	cr_assert_eq(atomic_load(&c.n), 0);
	mod.enabled = true;
	cr_assert_eq(core_evd_modify(evd, CORE_EVD_MOD_ENABLED, &mod), 0);
	cr_assert(wait_for(&c.n, 1, 5000));
	core_evd_free(evd);
}

/* ------------------------------------------------------------ oneshot */

struct oneshot {
	atomic_size_t runs;
	atomic_size_t got;
	bool rearm;
};

static void take_one(struct core_evd *evd, void *arg)
{
	struct oneshot *o = arg;
	struct trec r;

	atomic_fetch_add(&o->runs, 1);
	if (core_evd_dequeue(evd, &r) == 0)
		atomic_fetch_add(&o->got, 1);
	/* re-arming from inside: runs again after this one returns */
	if (o->rearm)
		cr_assert_eq(core_evd_callback_arm(evd), 0);
}

Test(evd_callback, oneshot_waits_for_rearm)
{
	struct core_evd *evd = t_sevd(64, 0);
	struct oneshot o = { .rearm = false };
	uint32_t i;

	cr_assert_eq(core_evd_callback_attach(evd, take_one, &o,
					      CORE_EVD_CB_ONESHOT),
		     0);
	for (i = 0; i < 5; i++)
		t_post(evd, 0, i);
	cr_assert(wait_for(&o.runs, 1, 5000));
	t_sleep_ms(50);
	cr_assert_eq(atomic_load(&o.runs), 1, "not re-armed: ran once");
	o.rearm = true;
	cr_assert_eq(core_evd_callback_arm(evd), 0);
	cr_assert(wait_for(&o.got, 5, 5000));
	t_sleep_ms(20);
	cr_assert_eq(atomic_load(&o.runs), 5, "runs only while events remain");
	core_evd_free(evd);
}

Test(evd_callback, level_mode_reruns_while_events_remain)
{
	struct core_evd *evd = t_sevd(64, 0);
	struct oneshot o = { .rearm = false };
	uint32_t i;

	for (i = 0; i < 7; i++)
		t_post(evd, 0, i);
	cr_assert_eq(core_evd_callback_attach(evd, take_one, &o, 0), 0);
	cr_assert(wait_for(&o.got, 7, 5000));
	t_sleep_ms(20);
	cr_assert_eq(atomic_load(&o.runs), 7);
	cr_assert_eq(core_evd_callback_arm(evd), 0);
	core_evd_free(evd);
}

/* ------------------------------------------------------------ serial, ordered */

#define SER_PRODUCERS 4
#define SER_EACH 100000

struct serial {
	struct core_evd *evd;
	atomic_size_t n;
	atomic_int inside;
	atomic_int bad;
	uint32_t next[SER_PRODUCERS];
};

static void serial_cb(struct core_evd *evd, void *arg)
{
	struct serial *s = arg;
	struct trec r[16];
	int n, i;

	if (atomic_fetch_add(&s->inside, 1))
		atomic_store(&s->bad, 1); /* concurrent runs */
	n = core_evd_dequeue_n(evd, r, 16);
	for (i = 0; i < n; i++) {
		if (r[i].producer >= SER_PRODUCERS ||
		    r[i].seq != s->next[r[i].producer])
			atomic_store(&s->bad, 2); /* out of order */
		else
			s->next[r[i].producer]++;
	}
	if (n > 0)
		atomic_fetch_add(&s->n, n);
	atomic_fetch_sub(&s->inside, 1);
}

struct prod {
	struct core_evd *evd;
	uint32_t id;
	uint32_t n;
};

static void *producer(void *arg)
{
	struct prod *p = arg;
	uint32_t i;

	for (i = 0; i < p->n; i++)
		if (t_post(p->evd, p->id, i))
			abort();
	return NULL;
}

Test(evd_callback, one_evd_never_concurrent_and_in_order)
{
	struct serial s = { 0 };
	struct prod p[SER_PRODUCERS];
	pthread_t tid[SER_PRODUCERS];
	int i;

	setenv("OPENRDMA_CB_THREADS", "4", 1);
	s.evd = t_sevd(512, 0);
	cr_assert_eq(core_evd_callback_attach(s.evd, serial_cb, &s, 0), 0);
	for (i = 0; i < SER_PRODUCERS; i++) {
		p[i] = (struct prod){ s.evd, (uint32_t)i, SER_EACH };
		pthread_create(&tid[i], NULL, producer, &p[i]);
	}
	for (i = 0; i < SER_PRODUCERS; i++)
		pthread_join(tid[i], NULL);
	cr_assert(wait_for(&s.n, (size_t)SER_PRODUCERS * SER_EACH, 20000));
	cr_assert_eq(atomic_load(&s.bad), 0, "bad = %d", atomic_load(&s.bad));
	cr_assert_eq(core_evd_free(s.evd), 0);
	cr_assert_eq(t_engine_threads_settle(2000), 0);
}

/* ------------------------------------------------------------ stress */

/*
 * 8 producers x EVD_STRESS_N events (default 1 M) into 4 EVDs, two
 * producers each, drained by callbacks; every event is seen exactly once.
 */
#define STRESS_PRODUCERS 8
#define STRESS_EVDS 4

struct stress_evd {
	atomic_size_t n;
	atomic_int inside;
	atomic_int bad;
	uint32_t next[STRESS_PRODUCERS];
};

static uint8_t *stress_seen;
static uint32_t stress_each;

static void stress_cb(struct core_evd *evd, void *arg)
{
	struct stress_evd *s = arg;
	struct trec r[64];
	int n, i;

	if (atomic_fetch_add(&s->inside, 1))
		atomic_store(&s->bad, 1);
	while ((n = core_evd_dequeue_n(evd, r, 64)) > 0) {
		for (i = 0; i < n; i++) {
			size_t k =
				(size_t)r[i].producer * stress_each + r[i].seq;

			if (r[i].seq != s->next[r[i].producer])
				atomic_store(&s->bad, 2);
			s->next[r[i].producer] = r[i].seq + 1;
			stress_seen[k]++;
		}
		atomic_fetch_add(&s->n, n);
	}
	atomic_fetch_sub(&s->inside, 1);
}

Test(evd_callback, stress_8_producers_exactly_once)
{
	struct stress_evd s[STRESS_EVDS];
	struct core_evd *evd[STRESS_EVDS];
	struct prod p[STRESS_PRODUCERS];
	pthread_t tid[STRESS_PRODUCERS];
	const char *env = getenv("EVD_STRESS_N");
	size_t i, total = 0;

	stress_each = env ? (uint32_t)strtoul(env, NULL, 0) : 1000000;
	stress_seen = calloc((size_t)STRESS_PRODUCERS * stress_each, 1);
	cr_assert_not_null(stress_seen);
	memset(s, 0, sizeof(s));
	for (i = 0; i < STRESS_EVDS; i++) {
		evd[i] = t_sevd(4096, 0);
		cr_assert_eq(core_evd_callback_attach(evd[i], stress_cb, &s[i],
						      0),
			     0);
	}
	for (i = 0; i < STRESS_PRODUCERS; i++) {
		p[i] = (struct prod){ evd[i % STRESS_EVDS], (uint32_t)i,
				      stress_each };
		pthread_create(&tid[i], NULL, producer, &p[i]);
	}
	for (i = 0; i < STRESS_PRODUCERS; i++)
		pthread_join(tid[i], NULL);
	for (i = 0; i < STRESS_EVDS; i++) {
		cr_assert(wait_for(&s[i].n, 2 * (size_t)stress_each, 60000));
		cr_assert_eq(atomic_load(&s[i].bad), 0);
		cr_assert_eq(core_evd_free(evd[i]), 0);
		total += atomic_load(&s[i].n);
	}
	cr_assert_eq(total, (size_t)STRESS_PRODUCERS * stress_each);
	assert_once(stress_seen, (size_t)STRESS_PRODUCERS * stress_each);
	free(stress_seen);
	cr_assert_eq(t_engine_threads_settle(2000), 0);
}

/* ------------------------------------------------------------ attach/detach races */

#define RACE_EACH 200000

static uint8_t race_seen[2 * RACE_EACH];

static void race_cb(struct core_evd *evd, void *arg)
{
	atomic_size_t *n = arg;
	struct trec r[8];
	int k, i;

	/* a few at a time, so that detach often meets a running callback */
	k = core_evd_dequeue_n(evd, r, 8);
	for (i = 0; i < k; i++)
		race_seen[r[i].producer * RACE_EACH + r[i].seq]++;
	if (k > 0)
		atomic_fetch_add(n, k);
}

Test(evd_callback, attach_detach_while_events_flow)
{
	struct core_evd *evd = t_sevd(256, 0);
	atomic_size_t by_cb = 0;
	struct prod p[2];
	pthread_t tid[2];
	size_t by_main = 0, i, toggles = 0;
	struct trec r;

	for (i = 0; i < 2; i++) {
		p[i] = (struct prod){ evd, (uint32_t)i, RACE_EACH };
		pthread_create(&tid[i], NULL, producer, &p[i]);
	}
	/* between toggles the main thread competes as a consumer too */
	while (atomic_load(&by_cb) + by_main < 2 * RACE_EACH) {
		cr_assert_eq(core_evd_callback_attach(evd, race_cb, &by_cb, 0),
			     0);
		sched_yield();
		cr_assert_eq(core_evd_callback_detach(evd), 0);
		/* detached: nothing runs any more, nothing is lost */
		if (core_evd_dequeue(evd, &r) == 0) {
			race_seen[r.producer * RACE_EACH + r.seq]++;
			by_main++;
		}
		toggles++;
	}
	for (i = 0; i < 2; i++)
		pthread_join(tid[i], NULL);
	cr_assert_eq(core_evd_dequeue(evd, &r), -OPENRDMA_EAGAIN);
	assert_once(race_seen, 2 * RACE_EACH);
	cr_assert_gt(toggles, 10);
	cr_assert_gt(atomic_load(&by_cb), 0);
	core_evd_free(evd);
	cr_assert_eq(t_engine_threads_settle(2000), 0);
}

/* ------------------------------------------------------------ detach semantics */

struct slow {
	atomic_int started;
	atomic_int finished;
	atomic_int runs;
	int detach_ret;
	bool self_detach;
	bool self_free;
};

static void slow_cb(struct core_evd *evd, void *arg)
{
	struct slow *s = arg;
	struct trec r;

	atomic_fetch_add(&s->runs, 1);
	core_evd_dequeue(evd, &r);
	atomic_store(&s->started, 1);
	if (s->self_detach)
		s->detach_ret = core_evd_callback_detach(evd);
	if (s->self_free)
		s->detach_ret = core_evd_free(evd);
	t_sleep_ms(100);
	atomic_store(&s->finished, 1);
}

Test(evd_callback, detach_waits_for_the_running_callback)
{
	struct core_evd *evd = t_sevd(8, 0);
	struct slow s = { 0 };

	core_evd_callback_attach(evd, slow_cb, &s, 0);
	t_post(evd, 0, 0);
	while (!atomic_load(&s.started))
		sched_yield();
	cr_assert_eq(core_evd_callback_detach(evd), 0);
	cr_assert_eq(atomic_load(&s.finished), 1,
		     "detach returned during the callback");
	core_evd_free(evd);
}

Test(evd_callback, free_detaches_and_waits)
{
	struct core_evd *evd = t_sevd(8, 0);
	struct slow s = { 0 };

	core_evd_callback_attach(evd, slow_cb, &s, 0);
	t_post(evd, 0, 0);
	while (!atomic_load(&s.started))
		sched_yield();
	cr_assert_eq(core_evd_free(evd), 0);
	cr_assert_eq(atomic_load(&s.finished), 1);
	cr_assert_eq(t_engine_threads_settle(2000), 0);
}

Test(evd_callback, detach_from_inside_the_callback)
{
	struct core_evd *evd = t_sevd(8, 0);
	struct slow s = { .self_detach = true };
	int before = t_process_threads_base();

	core_evd_callback_attach(evd, slow_cb, &s, 0);
	t_post(evd, 0, 0);
	t_post(evd, 0, 1);
	while (!atomic_load(&s.finished))
		t_sleep_ms(1);
	cr_assert_eq(s.detach_ret, 0);
	t_post(evd, 0, 2);
	t_sleep_ms(50);
	cr_assert_eq(atomic_load(&s.runs), 1, "ran after its own detach");
	/* the last callback went from a worker: the pool still stops, and
	 * its threads wait to be joined, not left detached */
	cr_assert_eq(t_engine_threads_settle(2000), 0);
	cr_assert_gt(core_evd_reap(), 0, "the workers were left detached");
	cr_assert_eq(core_evd_reap(), 0, "joined twice");
	cr_assert_eq(t_process_threads_settle(before, 2000), before, "joined");
	core_evd_free(evd);
}

Test(evd_callback, free_from_inside_the_callback)
{
	struct core_evd *evd = t_sevd(8, 0);
	struct slow s = { .self_free = true };

	core_evd_callback_attach(evd, slow_cb, &s, 0);
	t_post(evd, 0, 0);
	while (!atomic_load(&s.finished))
		t_sleep_ms(1);
	cr_assert_eq(s.detach_ret, 0);
	cr_assert_eq(t_engine_threads_settle(2000), 0);
	cr_assert_gt(core_evd_reap(), 0, "the workers were left detached");
}

/* ------------------------------------------------------------ callbacks calling the engine */

struct relay {
	struct core_evd *next;
	struct counter *last;
	atomic_int attached;
};

/* Forwards each event to the next EVD, whose callback it attaches. */
static void relay_cb(struct core_evd *evd, void *arg)
{
	struct relay *rl = arg;
	struct trec r;

	if (!atomic_exchange(&rl->attached, 1))
		cr_assert_eq(core_evd_callback_attach(rl->next, drain_count,
						      rl->last, 0),
			     0);
	while (core_evd_dequeue(evd, &r) == 0)
		cr_assert_eq(t_post(rl->next, r.producer, r.seq), 0);
}

Test(evd_callback, callback_posts_and_attaches)
{
	struct core_evd *a = t_sevd(64, 0), *b = t_sevd(64, 0);
	struct counter c = { 0 };
	struct relay rl = { .next = b, .last = &c };
	uint32_t i;

	cr_assert_eq(core_evd_callback_attach(a, relay_cb, &rl, 0), 0);
	for (i = 0; i < 2000; i++)
		t_post(a, 0, i);
	cr_assert(wait_for(&c.n, 2000, 10000));
	cr_assert_eq(atomic_load(&c.overlap), 0);
	core_evd_free(a);
	core_evd_free(b);
	cr_assert_eq(t_engine_threads_settle(2000), 0);
}

static void *nothing(void *arg)
{
	return arg;
}

Test(evd_callback, no_thread_left_behind)
{
	struct core_evd *evd[3];
	struct counter c[3];
	pthread_t tid;
	int before, i;

	/* a sanitizer starts its own thread with the first one of ours */
	before = t_process_threads();
	pthread_create(&tid, NULL, nothing, NULL);
	pthread_join(tid, NULL);
	/* the joined thread gone (or a sanitizer's one more, after 1 s) */
	before = t_process_threads_settle(before, 1000);
	memset(c, 0, sizeof(c));
	for (i = 0; i < 3; i++) {
		evd[i] = t_sevd(8, 0);
		core_evd_callback_attach(evd[i], drain_count, &c[i], 0);
		t_post(evd[i], 0, 0);
	}
	for (i = 0; i < 3; i++)
		cr_assert(wait_for(&c[i].n, 1, 5000));
	cr_assert_gt(t_process_threads(), before);
	for (i = 0; i < 3; i++)
		core_evd_free(evd[i]);
	cr_assert_eq(core_evd_engine_threads(), 0, "joined, not detached");
	cr_assert_eq(t_process_threads_settle(before, 2000), before);
}
