/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* The software SRQ: the limit event, resize, query, posting limits. */
#include <criterion/criterion.h>

#include "tests/unit/test_sw_fake.h"

static struct openrdma_srq srq;
static struct sw_srq ssrq;

static void setup(void)
{
	struct openrdma_srq_attr attr = { .max_wr = 8, .max_sge = 2 };

	fake_reset();
	memset(&srq, 0, sizeof(srq));
	srq.obj.ctx = &fake_ctx;
	cr_assert_eq(sw_srq_init(&ssrq, &srq, &attr), 0);
	cr_assert_eq(srq.max_wr, 8);
}

static void teardown(void)
{
	sw_srq_fini(&ssrq);
}

TestSuite(sw_srq, .init = setup, .fini = teardown);

static int post(uint64_t wr_id)
{
	struct openrdma_recv_wr wr = { .wr_id = wr_id };
	struct openrdma_recv_wr *bad = NULL;

	return sw_srq_post_recv(&ssrq, &wr, &bad);
}

static uint64_t take(void)
{
	struct openrdma_sge sge[2];
	struct sw_recv_wqe w = { .sge = sge };

	cr_assert_eq(sw_srq_take(&ssrq, &w), 0, "no receive to take");
	return w.wr_id;
}

static void arm(uint32_t limit, int expect)
{
	struct openrdma_srq_attr attr = { .srq_limit = limit };

	cr_assert_eq(sw_srq_modify(&ssrq, &attr, OPENRDMA_SRQ_LIMIT, 64),
		     expect);
}

Test(sw_srq, limit_event_fires_once_below_the_limit)
{
	struct openrdma_srq_attr q;
	int i;

	for (i = 0; i < 6; i++)
		cr_assert_eq(post((uint64_t)i), 0);
	arm(4, 0);
	sw_srq_query(&ssrq, &q);
	cr_assert_eq(q.srq_limit, 4);
	cr_assert_eq(take(), 0);
	cr_assert_eq(take(), 1);
	cr_assert_eq(fake.num_events, 0, "4 left: not below 4");
	cr_assert_eq(take(), 2);
	cr_assert_eq(fake_events(OPENRDMA_EVENT_SRQ_LIMIT_REACHED), 1);
	cr_assert_eq(fake.events[0].element.srq, &srq);
	sw_srq_query(&ssrq, &q);
	cr_assert_eq(q.srq_limit, 0, "disarmed");
	cr_assert_eq(take(), 3);
	cr_assert_eq(take(), 4);
	cr_assert_eq(fake.num_events, 1, "once");

	/* armed again: fires again */
	arm(3, 0);
	cr_assert_eq(take(), 5);
	cr_assert_eq(fake.num_events, 2);
	cr_assert_eq(sw_srq_take(&ssrq, &(struct sw_recv_wqe){ 0 }),
		     -OPENRDMA_EAGAIN);
}

Test(sw_srq, no_event_unarmed)
{
	cr_assert_eq(post(1), 0);
	cr_assert_eq(take(), 1);
	cr_assert_eq(fake.num_events, 0);
}

Test(sw_srq, limits_and_resize)
{
	struct openrdma_srq_attr attr = { 0 };
	struct openrdma_sge sge[3] = { 0 };
	struct openrdma_recv_wr wr = { .sg_list = sge, .num_sge = 3 }, *bad;
	int i;

	arm(9, -OPENRDMA_EINVAL);
	cr_assert_eq(sw_srq_post_recv(&ssrq, &wr, &bad), -OPENRDMA_EINVAL);
	cr_assert_eq(bad, &wr);
	for (i = 0; i < 8; i++)
		cr_assert_eq(post((uint64_t)i), 0);
	cr_assert_eq(post(8), -OPENRDMA_ENOMEM);
	cr_assert_eq(take(), 0);

	attr.max_wr = 6;
	cr_assert_eq(sw_srq_modify(&ssrq, &attr, OPENRDMA_SRQ_MAX_WR, 64),
		     -OPENRDMA_EINVAL, "7 posted do not fit in 6");
	attr.max_wr = 65;
	cr_assert_eq(sw_srq_modify(&ssrq, &attr, OPENRDMA_SRQ_MAX_WR, 64),
		     -OPENRDMA_EINVAL, "above the device limit");
	attr.max_wr = 16;
	cr_assert_eq(sw_srq_modify(&ssrq, &attr, OPENRDMA_SRQ_MAX_WR, 64), 0);
	cr_assert_eq(srq.max_wr, 16);
	for (i = 8; i < 17; i++)
		cr_assert_eq(post((uint64_t)i), 0);
	cr_assert_eq(post(17), -OPENRDMA_ENOMEM);
	for (i = 1; i < 17; i++)
		cr_assert_eq(take(), (uint64_t)i, "order kept by resize");
	sw_srq_query(&ssrq, &attr);
	cr_assert_eq(attr.max_wr, 16);
	cr_assert_eq(attr.max_sge, 2);
	cr_assert_eq(sw_srq_modify(&ssrq, &attr, 1 << 5, 64), -OPENRDMA_EINVAL);
}

Test(sw_srq, qp_on_srq_reports_last_wqe_and_keeps_receives)
{
	struct openrdma_qp_attr attr = { .qp_state = OPENRDMA_QPS_ERR };
	struct fake_cq cq;
	struct fake_qp q;

	fake_cq_init(&cq, 16);
	fake_qp_init(&q, OPENRDMA_QPT_RC, NULL, &cq, &ssrq, 4, 1);
	fake_qp_to(&q, OPENRDMA_QPS_RTS);
	cr_assert_eq(post(1), 0);
	cr_assert_eq(sw_qp_post_recv(&q.sw,
				     &(struct openrdma_recv_wr){ .wr_id = 2 },
				     &(struct openrdma_recv_wr *){ NULL }),
		     -OPENRDMA_EINVAL, "receives go to the SRQ");
	cr_assert_eq(sw_qp_modify(&q.sw, &attr, OPENRDMA_QP_STATE), 0);
	cr_assert_eq(fake_events(OPENRDMA_EVENT_QP_LAST_WQE_REACHED), 1);
	fake_poll0(&cq);
	cr_assert_eq(take(), 1, "SRQ receives are not flushed");
	fake_qp_fini(&q);
	fake_cq_fini(&cq);
}
