/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* The software CQ: ring order across the wrap, overrun, resize, signals. */
#include <criterion/criterion.h>

#include "tests/unit/test_sw_fake.h"

static struct fake_cq cq;

static void setup(void)
{
	fake_reset();
	fake_cq_init(&cq, 4);
}

static void teardown(void)
{
	fake_cq_fini(&cq);
}

TestSuite(sw_cq, .init = setup, .fini = teardown);

static void push(uint64_t wr_id, bool solicited)
{
	struct sw_cq_batch b = SW_CQ_BATCH_INIT;
	struct openrdma_wc wc = { .wr_id = wr_id };

	sw_cq_push(&cq.sw, &wc, solicited, &b);
	cr_assert_not(sw_cq_batch_done(&b), "completion %llu lost",
		      (unsigned long long)wr_id);
}

Test(sw_cq, order_across_wrap_around)
{
	struct openrdma_wc wc[4];
	uint64_t next = 0, expect = 0;
	int round, n, i;

	for (round = 0; round < 10; round++) {
		/* 3 in, 3 out: head and tail walk around the 4-slot ring */
		for (i = 0; i < 3; i++)
			push(next++, false);
		n = sw_cq_poll(&cq.sw, 2, wc);
		cr_assert_eq(n, 2);
		n += sw_cq_poll(&cq.sw, 4, wc + 2);
		cr_assert_eq(n, 3);
		for (i = 0; i < 3; i++)
			cr_assert_eq(wc[i].wr_id, expect++);
	}
	cr_assert_eq(sw_cq_poll(&cq.sw, 4, wc), 0);
	cr_assert_eq(fake.num_notify, 30, "one notification per push");
}

Test(sw_cq, notify_reports_solicited)
{
	push(1, false);
	push(2, true);
	cr_assert_eq(fake.num_notify, 2);
	cr_assert_eq(fake.notify_cq[0], &cq.cq);
	cr_assert_not(fake.notify_solicited[0]);
	cr_assert(fake.notify_solicited[1]);
}

Test(sw_cq, batch_signals_each_cq_once)
{
	struct sw_cq_batch b = SW_CQ_BATCH_INIT;
	struct openrdma_wc wc = { .wr_id = 1 };
	struct fake_cq other;

	fake_cq_init(&other, 4);
	sw_cq_push(&cq.sw, &wc, false, &b);
	sw_cq_push(&other.sw, &wc, false, &b);
	sw_cq_push(&cq.sw, &wc, true, &b);
	cr_assert_eq(fake.num_notify, 0, "nothing signalled under locks");
	cr_assert_not(sw_cq_batch_done(&b));
	cr_assert_eq(fake.num_notify, 2);
	cr_assert(fake.notify_solicited[0], "solicited if any one was");
	cr_assert_not(fake.notify_solicited[1]);
	fake_cq_fini(&other);
}

Test(sw_cq, overrun)
{
	struct sw_cq_batch b = SW_CQ_BATCH_INIT;
	struct openrdma_wc wc[8] = { 0 };
	int i;

	for (i = 0; i < 4; i++)
		push((uint64_t)i, false);
	/* the fifth is lost: CQ_ERR, once, and the producer learns it */
	wc[0].wr_id = 4;
	sw_cq_push(&cq.sw, &wc[0], false, &b);
	cr_assert(sw_cq_batch_done(&b));
	cr_assert_eq(fake_events(OPENRDMA_EVENT_CQ_ERR), 1);
	cr_assert_eq(fake.events[0].element.cq, &cq.cq);
	memset(&b, 0, sizeof(b));
	sw_cq_push(&cq.sw, &wc[0], false, &b);
	cr_assert(sw_cq_batch_done(&b), "still overrun");
	cr_assert_eq(fake_events(OPENRDMA_EVENT_CQ_ERR), 1, "reported once");

	/* what came before is still there, then -EOVERFLOW for good */
	cr_assert_eq(sw_cq_poll(&cq.sw, 3, wc), 3);
	cr_assert_eq(sw_cq_poll(&cq.sw, 8, wc), 1);
	cr_assert_eq(wc[0].wr_id, 3);
	cr_assert_eq(sw_cq_poll(&cq.sw, 8, wc), -OPENRDMA_EOVERFLOW);
	cr_assert_eq(sw_cq_poll(&cq.sw, 8, wc), -OPENRDMA_EOVERFLOW);
	cr_assert_eq(sw_cq_poll(&cq.sw, 0, wc), 0);
}

Test(sw_cq, resize_keeps_entries_in_order)
{
	struct openrdma_wc wc[8];
	int i;

	for (i = 0; i < 3; i++)
		push((uint64_t)i, false);
	cr_assert_eq(sw_cq_poll(&cq.sw, 2, wc), 2);
	for (i = 3; i < 6; i++)
		push((uint64_t)i, false); /* wraps */
	cr_assert_eq(sw_cq_resize(&cq.sw, 3), -OPENRDMA_EINVAL,
		     "4 entries do not fit in 3");
	cr_assert_eq(sw_cq_resize(&cq.sw, 0), -OPENRDMA_EINVAL);
	cr_assert_eq(sw_cq_resize(&cq.sw, 8), 0);
	push(6, false);
	push(7, false);
	push(8, false);
	push(9, false);
	cr_assert_eq(sw_cq_poll(&cq.sw, 8, wc), 8);
	for (i = 0; i < 8; i++)
		cr_assert_eq(wc[i].wr_id, (uint64_t)i + 2);
	cr_assert_eq(sw_cq_resize(&cq.sw, 1), 0, "empty: any size");
}

Test(sw_cq, bad_arguments)
{
	struct sw_cq scq;
	struct openrdma_wc wc;

	cr_assert_eq(sw_cq_init(&scq, &cq.cq, 0), -OPENRDMA_EINVAL);
	cr_assert_eq(sw_cq_poll(&cq.sw, -1, &wc), -OPENRDMA_EINVAL);
}
