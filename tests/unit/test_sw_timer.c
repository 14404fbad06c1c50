/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The software device's timer: entries run once their deadline passed,
 * and sw_timer_cancel() leaves nothing to run, not even what a running
 * entry re-armed from its own call (an RNR retry re-arms itself so);
 * sw_timer_cancel_set() does the same for entries that arm each other (a
 * QP's RNR retry and its lost-request check).
 */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "core/sw/timer.h"

struct rearming {
	struct sw_timer_entry entry;
	struct sw_timer *timer;
	atomic_int calls;
	atomic_bool inside;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Re-arms itself for at once, after a while inside. */
static void rearm_fn(struct sw_timer_entry *entry)
{
	struct rearming *r = (struct rearming *)entry;

	atomic_store(&r->inside, true);
	atomic_fetch_add(&r->calls, 1);
	usleep(20 * 1000);
	sw_timer_add(r->timer, &r->entry, now_ns());
}

/* Static: a timer thread left running by a failed test still finds them. */
static struct sw_timer t;
static struct rearming r = { .entry.fn = rearm_fn, .timer = &t };

Test(sw_timer, runs_after_deadline, .timeout = 10)
{
	uint64_t start = now_ns();

	cr_assert_eq(sw_timer_init(&t), 0);
	cr_assert_eq(sw_timer_add(&t, &r.entry, start + 30 * 1000000u), 0);
	while (!atomic_load(&r.inside))
		usleep(1000);
	cr_assert_geq(now_ns() - start, 30 * 1000000u, "ran early");
	sw_timer_cancel(&t, &r.entry);
	sw_timer_fini(&t);
}

Test(sw_timer, cancel_disarms_what_the_call_rearmed, .timeout = 10)
{
	int calls;

	cr_assert_eq(sw_timer_init(&t), 0);
	cr_assert_eq(sw_timer_add(&t, &r.entry, now_ns()), 0);
	/* cancel while the call is inside: it re-arms before it returns */
	while (!atomic_load(&r.inside))
		usleep(1000);
	sw_timer_cancel(&t, &r.entry);
	cr_assert_not(r.entry.queued, "still armed after the cancel");
	calls = atomic_load(&r.calls);
	usleep(100 * 1000);
	cr_assert_eq(atomic_load(&r.calls), calls,
		     "ran %d times after the cancel",
		     atomic_load(&r.calls) - calls);
	sw_timer_fini(&t);
}

/* Two entries, each arming the other from its call, after a while inside. */
struct pair_entry {
	struct sw_timer_entry entry;
	struct pair_entry *other;
	atomic_int calls;
	atomic_bool inside;
};

static void pair_fn(struct sw_timer_entry *entry)
{
	struct pair_entry *p = (struct pair_entry *)entry;

	atomic_store(&p->inside, true);
	atomic_fetch_add(&p->calls, 1);
	usleep(20 * 1000);
	sw_timer_add(&t, &p->other->entry, now_ns());
}

static struct pair_entry pa, pb;

Test(sw_timer, cancel_set_disarms_entries_that_arm_each_other, .timeout = 10)
{
	struct sw_timer_entry *const set[] = { &pa.entry, &pb.entry };
	int calls;

	pa = (struct pair_entry){ .entry.fn = pair_fn, .other = &pb };
	pb = (struct pair_entry){ .entry.fn = pair_fn, .other = &pa };
	cr_assert_eq(sw_timer_init(&t), 0);
	cr_assert_eq(sw_timer_add(&t, &pb.entry, now_ns()), 0);
	/* cancel while b is inside: it arms a, which the set names first */
	while (!atomic_load(&pb.inside))
		usleep(1000);
	sw_timer_cancel_set(&t, set, 2);
	cr_assert_not(pa.entry.queued || pb.entry.queued,
		      "still armed after the cancel");
	calls = atomic_load(&pa.calls) + atomic_load(&pb.calls);
	usleep(100 * 1000);
	cr_assert_eq(atomic_load(&pa.calls) + atomic_load(&pb.calls), calls,
		     "ran %d times after the cancel",
		     atomic_load(&pa.calls) + atomic_load(&pb.calls) - calls);
	sw_timer_fini(&t);
}
