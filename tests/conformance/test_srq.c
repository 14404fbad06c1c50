/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Shared receive queues on side A: several QPs consume one SRQ in posting
 * order, the limit event fires once and disarms, and a QP in ERR leaves
 * the SRQ's receives alone (LAST_WQE_REACHED instead of flushes).
 */
#include "conf.h"

#define MSG 64
#define SEED_A 1
#define SEED_B 2

static struct openrdma_srq *srq_new(struct conf_test *t, uint32_t max_wr)
{
	struct openrdma_srq_init_attr init = {
		.srq_context = t,
		.attr = { .max_wr = max_wr, .max_sge = 1 },
	};
	struct openrdma_srq *srq;

	conf_require_cap(t, OPENRDMA_DEVICE_SRQ, "shared receive queues");
	CONF_OK(openrdma_srq_create(t->pd, &init, &srq));
	conf_track(t, CONF_K_SRQ, srq);
	cr_assert_geq(srq->max_wr, max_wr);
	cr_assert_geq(init.attr.max_wr, max_wr);
	cr_assert_eq(srq->srq_context, t);
	return srq;
}

/* Posts n receives of MSG bytes, wr_ids first.., at offsets 0, MSG, ... */
static void srq_fill(struct openrdma_srq *srq, const struct conf_mem *m,
		     uint64_t first, int n)
{
	struct openrdma_sge sge;
	struct openrdma_recv_wr wr = { .sg_list = &sge, .num_sge = 1 };
	struct openrdma_recv_wr *bad;
	int i;

	for (i = 0; i < n; i++) {
		sge = conf_sge(m, (size_t)i * MSG, MSG);
		wr.wr_id = first + (uint64_t)i;
		CONF_OK(openrdma_srq_post_recv(srq, &wr, &bad));
	}
}

/* Side B sends MSG bytes of src at offset k * MSG over rc; waits for it. */
static void peer_send(struct conf_test *t, const struct conf_rc *rc,
		      const struct conf_pmr *src, int k)
{
	struct conf_wire_send wr = { .wr_id = (uint64_t)k,
				     .opcode = OPENRDMA_WR_SEND,
				     .flags = OPENRDMA_SEND_SIGNALED,
				     .num_sge = 1 };
	struct openrdma_wc wc;

	wr.sge[0] = conf_psge(src, (uint64_t)k * MSG, MSG);
	CONF_OK(conf_peer_post_send(t, rc->pqp.id, &wr, 1, NULL));
	conf_peer_poll_n(t, rc->pscq, 1, &wc);
	conf_wc_expect(&wc, (uint64_t)k, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_SEND);
}

CONF_TEST(srq, shared_by_several_qps)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct openrdma_srq *srq = srq_new(t, 16);
	struct conf_rc_opts opts = { .srq = srq };
	struct conf_mem *m;
	struct openrdma_wc wc;
	struct conf_pmr src;
	struct conf_rc rc[3];
	int k;

	for (k = 0; k < 3; k++)
		conf_rc_connect(t, &rc[k], &opts);
	m = conf_mem_new(t, t->pd, 6 * MSG, OPENRDMA_ACCESS_LOCAL_WRITE,
			 SEED_A);
	srq_fill(srq, m, 10, 6);
	src = conf_peer_mr_reg(t, t->ppd, 6 * MSG, 0, SEED_B);
	/* messages alternate between the QPs; receives go in posting order */
	for (k = 0; k < 6; k++) {
		peer_send(t, &rc[k % 3], &src, k);
		conf_poll_n(t, rc[k % 3].rcq, 1, &wc);
		conf_wc_expect(&wc, 10 + (uint64_t)k, OPENRDMA_WC_SUCCESS,
			       OPENRDMA_WC_RECV);
		cr_assert_eq(wc.qp_num, rc[k % 3].qp->qp_num,
			     "receive reported on QP %u, want %u", wc.qp_num,
			     rc[k % 3].qp->qp_num);
		cr_assert_eq(wc.byte_len, MSG);
	}
	CONF_EXPECT_PATTERN(m->buf, 6 * MSG, SEED_B, 0);
}

CONF_TEST(srq, limit_event_once)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct openrdma_srq *srq = srq_new(t, 16);
	struct conf_rc_opts opts = { .srq = srq };
	struct openrdma_srq_attr attr = { .srq_limit = 4 };
	struct openrdma_async_event ev;
	struct openrdma_wc wc;
	struct conf_mem *m;
	struct conf_pmr src;
	struct conf_rc rc;
	int k;

	conf_require_cap(t, OPENRDMA_DEVICE_SRQ_LIMIT, "the SRQ limit event");
	conf_rc_connect(t, &rc, &opts);
	m = conf_mem_new(t, t->pd, 8 * MSG, OPENRDMA_ACCESS_LOCAL_WRITE,
			 SEED_A);
	srq_fill(srq, m, 10, 8);
	CONF_OK(openrdma_srq_modify(srq, &attr, OPENRDMA_SRQ_LIMIT));
	CONF_OK(openrdma_srq_query(srq, &attr));
	cr_assert_eq(attr.srq_limit, 4, "armed limit reads %u", attr.srq_limit);
	src = conf_peer_mr_reg(t, t->ppd, 8 * MSG, 0, SEED_B);

	/* 8 -> 4 posted: not below the limit yet */
	for (k = 0; k < 4; k++) {
		peer_send(t, &rc, &src, k);
		conf_poll_n(t, rc.rcq, 1, &wc);
	}
	conf_async_none(t);
	/* 4 -> 3: below */
	peer_send(t, &rc, &src, 4);
	conf_poll_n(t, rc.rcq, 1, &wc);
	conf_async_expect(t, OPENRDMA_EVENT_SRQ_LIMIT_REACHED, &ev);
	cr_assert_eq(ev.element.srq, srq, "limit event names another SRQ");
	CONF_OK(openrdma_srq_query(srq, &attr));
	cr_assert_eq(attr.srq_limit, 0, "the limit stays armed (%u)",
		     attr.srq_limit);
	/* disarmed: 3 -> 2 reports nothing */
	peer_send(t, &rc, &src, 5);
	conf_poll_n(t, rc.rcq, 1, &wc);
	conf_wc_expect(&wc, 15, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_RECV);
	conf_async_none(t);
}

CONF_TEST(srq, err_qp_leaves_srq_receives)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct openrdma_srq *srq = srq_new(t, 16);
	struct conf_rc_opts opts = { .srq = srq };
	struct openrdma_qp_attr attr = { .qp_state = OPENRDMA_QPS_ERR };
	struct openrdma_async_event ev;
	struct openrdma_wc wc;
	struct conf_mem *m;
	struct conf_pmr src;
	struct conf_rc rc[2];
	int k;

	for (k = 0; k < 2; k++)
		conf_rc_connect(t, &rc[k], &opts);
	m = conf_mem_new(t, t->pd, 2 * MSG, OPENRDMA_ACCESS_LOCAL_WRITE,
			 SEED_A);
	srq_fill(srq, m, 10, 2);
	CONF_OK(openrdma_qp_modify(rc[0].qp, &attr, OPENRDMA_QP_STATE));
	conf_async_expect(t, OPENRDMA_EVENT_QP_LAST_WQE_REACHED, &ev);
	cr_assert_eq(ev.element.qp, rc[0].qp);
	conf_poll_none(rc[0].rcq);
	/* the other QP still finds both receives, in order */
	src = conf_peer_mr_reg(t, t->ppd, 2 * MSG, 0, SEED_B);
	for (k = 0; k < 2; k++) {
		peer_send(t, &rc[1], &src, k);
		conf_poll_n(t, rc[1].rcq, 1, &wc);
		conf_wc_expect(&wc, 10 + (uint64_t)k, OPENRDMA_WC_SUCCESS,
			       OPENRDMA_WC_RECV);
	}
	CONF_EXPECT_PATTERN(m->buf, 2 * MSG, SEED_B, 0);
}

CONF_TEST(srq, post_over_max_sge_refused)
{
	struct conf_test *t = conf_setup(CONF_LOCAL_ONLY);
	struct openrdma_srq *srq = srq_new(t, 4);
	struct conf_mem *m =
		conf_mem_new(t, t->pd, 64, OPENRDMA_ACCESS_LOCAL_WRITE, SEED_A);
	struct openrdma_sge sge[8];
	struct openrdma_recv_wr wr = { .wr_id = 1, .sg_list = sge };
	struct openrdma_recv_wr *bad = NULL;
	uint32_t i;

	cr_assert_lt(srq->max_sge, 8, "SRQ granted %u SGEs", srq->max_sge);
	for (i = 0; i < 8; i++)
		sge[i] = conf_sge(m, 0, 8);
	wr.num_sge = (int)srq->max_sge + 1;
	CONF_ERR(openrdma_srq_post_recv(srq, &wr, &bad), OPENRDMA_EINVAL);
	cr_assert_eq(bad, &wr);
}
