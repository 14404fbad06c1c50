/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Aggregate EVDs: notifications from member SEVDs, waits, the fd,
 * callbacks, enable and disable, membership changes.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <criterion/criterion.h>

#include "tests/evd/evd_test.h"

TestSuite(evd_aevd, .timeout = 60);

static void join(struct core_evd *sevd, struct core_evd *aevd)
{
	struct core_evd_mod mod = { .aevd = aevd };

	cr_assert_eq(core_evd_modify(sevd, CORE_EVD_MOD_AEVD, &mod), 0);
}

Test(evd_aevd, notifications_follow_the_members)
{
	struct core_evd *a = t_aevd(0), *s1 = t_sevd(8, 0), *s2 = t_sevd(8, 0);
	struct core_evd_info info;
	struct core_evd *got;
	struct trec r;

	join(s1, a);
	join(s2, a);
	core_evd_query(a, &info);
	cr_assert_eq(info.members, 2);
	cr_assert_eq(core_evd_notify_dequeue(a, &got), -OPENRDMA_EAGAIN);
	t_post(s2, 2, 0);
	t_post(s1, 1, 0);
	t_post(s1, 1, 1);
	core_evd_query(a, &info);
	cr_assert_eq(info.count, 2, "one notice per member with events");
	/* in the order the members got events, then round robin */
	cr_assert_eq(core_evd_notify_dequeue(a, &got), 0);
	cr_assert_eq(got, s2);
	cr_assert_eq(core_evd_notify_dequeue(a, &got), 0);
	cr_assert_eq(got, s1);
	cr_assert_eq(core_evd_notify_dequeue(a, &got), 0);
	cr_assert_eq(got, s2, "a notice stays while the member has events");
	/* draining a member withdraws its notice: none goes stale */
	cr_assert_eq(core_evd_dequeue(s2, &r), 0);
	cr_assert_eq(core_evd_notify_dequeue(a, &got), 0);
	cr_assert_eq(got, s1);
	cr_assert_eq(core_evd_notify_dequeue(a, &got), 0);
	cr_assert_eq(got, s1);
	/* an AEVD dequeue takes records from the members */
	cr_assert_eq(core_evd_dequeue(a, &r), 0);
	cr_assert_eq(r.producer, 1);
	cr_assert_eq(r.seq, 0);
	cr_assert_eq(core_evd_dequeue(a, &r), 0);
	cr_assert_eq(r.seq, 1);
	cr_assert_eq(core_evd_dequeue(a, &r), -OPENRDMA_EAGAIN);
	cr_assert_eq(core_evd_notify_dequeue(a, &got), -OPENRDMA_EAGAIN);
	cr_assert_eq(core_evd_free(a), -OPENRDMA_EBUSY, "has members");
	core_evd_free(s1);
	core_evd_free(s2);
	cr_assert_eq(core_evd_free(a), 0);
}

Test(evd_aevd, dequeue_is_round_robin)
{
	struct core_evd *a = t_aevd(0), *s[3];
	struct trec r;
	int i;

	for (i = 0; i < 3; i++) {
		s[i] = t_sevd(8, 0);
		join(s[i], a);
		t_post(s[i], (uint32_t)i, 0);
		t_post(s[i], (uint32_t)i, 1);
	}
	for (i = 0; i < 6; i++) {
		cr_assert_eq(core_evd_dequeue(a, &r), 0);
		cr_assert_eq(r.producer, (uint32_t)(i % 3));
		cr_assert_eq(r.seq, (uint32_t)(i / 3));
	}
	for (i = 0; i < 3; i++)
		core_evd_free(s[i]);
	core_evd_free(a);
}

Test(evd_aevd, disabled_member_gives_no_notice)
{
	struct core_evd *a = t_aevd(0), *s = t_sevd(8, 0);
	struct core_evd_mod mod = { .enabled = false };
	struct core_evd *got;

	join(s, a);
	cr_assert_eq(core_evd_modify(s, CORE_EVD_MOD_ENABLED, &mod), 0);
	t_post(s, 0, 0);
	cr_assert_eq(core_evd_notify_dequeue(a, &got), -OPENRDMA_EAGAIN);
	mod.enabled = true;
	cr_assert_eq(core_evd_modify(s, CORE_EVD_MOD_ENABLED, &mod), 0);
	cr_assert_eq(core_evd_notify_dequeue(a, &got), 0);
	cr_assert_eq(got, s);
	core_evd_free(s);
	core_evd_free(a);
}

Test(evd_aevd, leaving_and_moving)
{
	struct core_evd *a = t_aevd(0), *b = t_aevd(0), *s = t_sevd(8, 0);
	struct core_evd_info info;
	struct core_evd *got;

	join(s, a);
	t_post(s, 0, 0);
	join(s, b); /* moves, with its notice */
	cr_assert_eq(core_evd_notify_dequeue(a, &got), -OPENRDMA_EAGAIN);
	cr_assert_eq(core_evd_notify_dequeue(b, &got), 0);
	core_evd_query(a, &info);
	cr_assert_eq(info.members, 0);
	cr_assert_eq(core_evd_free(a), 0);
	join(s, NULL);
	cr_assert_eq(core_evd_notify_dequeue(b, &got), -OPENRDMA_EAGAIN);
	cr_assert_eq(core_evd_free(b), 0);
	/* only an AEVD can be joined, and only by an SEVD */
	{
		struct core_evd *s2 = t_sevd(8, 0);
		struct core_evd_mod mod = { .aevd = s2 };

		cr_assert_eq(core_evd_modify(s, CORE_EVD_MOD_AEVD, &mod),
			     -OPENRDMA_EINVAL);
		core_evd_free(s2);
	}
	core_evd_free(s);
}

struct later {
	struct core_evd *evd;
	unsigned int ms;
};

static void *post_later(void *arg)
{
	struct later *l = arg;

	t_sleep_ms(l->ms);
	t_post(l->evd, 9, 0);
	return NULL;
}

Test(evd_aevd, waits_are_woken_by_a_member)
{
	struct core_evd *a = t_aevd(0), *s = t_sevd(8, 0);
	struct later l = { s, 30 };
	struct core_evd *got;
	pthread_t tid;
	struct trec r;
	size_t nmore;

	join(s, a);
	cr_assert_eq(core_evd_notify_wait(a, 20000, &got), -OPENRDMA_ETIMEDOUT);
	pthread_create(&tid, NULL, post_later, &l);
	cr_assert_eq(core_evd_notify_wait(a, 5000000, &got), 0);
	cr_assert_eq(got, s);
	pthread_join(tid, NULL);
	/* and a wait for records */
	pthread_create(&tid, NULL, post_later, &l);
	cr_assert_eq(core_evd_dequeue(s, &r), 0);
	cr_assert_eq(core_evd_wait(a, 5000000, 0, &r, &nmore), 0);
	cr_assert_eq(r.producer, 9);
	cr_assert_eq(nmore, 0);
	pthread_join(tid, NULL);
	core_evd_free(s);
	core_evd_free(a);
}

Test(evd_aevd, fd_readable_while_a_member_has_events)
{
	struct core_evd *a = t_aevd(CORE_EVD_FD), *s1 = t_sevd(8, 0),
			*s2 = t_sevd(8, 0);
	struct core_evd_info info;
	struct trec r;

	join(s1, a);
	join(s2, a);
	core_evd_query(a, &info);
	cr_assert_geq(info.fd, 0);
	cr_assert_not(t_readable(info.fd));
	t_post(s1, 0, 0);
	t_post(s2, 0, 0);
	cr_assert(t_readable(info.fd));
	core_evd_dequeue(s1, &r);
	cr_assert(t_readable(info.fd));
	core_evd_dequeue(s2, &r);
	cr_assert_not(t_readable(info.fd));
	core_evd_free(s1);
	core_evd_free(s2);
	core_evd_free(a);
}

static void aevd_drain(struct core_evd *aevd, void *arg)
{
	atomic_size_t *n = arg;
	struct trec r;

	while (core_evd_dequeue(aevd, &r) == 0)
		atomic_fetch_add(n, 1);
}

Test(evd_aevd, callback_on_an_aevd)
{
	struct core_evd *a = t_aevd(0), *s1 = t_sevd(64, 0),
			*s2 = t_sevd(64, 0);
	atomic_size_t n = 0;
	unsigned int i;

	join(s1, a);
	join(s2, a);
	cr_assert_eq(core_evd_callback_attach(a, aevd_drain, &n, 0), 0);
	for (i = 0; i < 100; i++) {
		t_post(s1, 1, i);
		t_post(s2, 2, i);
	}
	for (i = 0; i < 5000 && atomic_load(&n) < 200; i++)
		t_sleep_ms(1);
	cr_assert_eq(atomic_load(&n), 200);
	core_evd_free(s1);
	core_evd_free(s2);
	core_evd_free(a);
	cr_assert_eq(t_engine_threads_settle(2000), 0);
}
