/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Flush on error: when a QP enters ERR, by modify or by a failed request,
 * every outstanding send and receive completes WR_FLUSH_ERR in posting
 * order, unsignaled sends included; RESET drops them silently.
 */
#include "conf.h"

#define SEED_A 1
#define SEED_B 2

static void modify_state(struct openrdma_qp *qp, enum openrdma_qp_state to)
{
	struct openrdma_qp_attr attr = { .qp_state = to };

	CONF_OK(openrdma_qp_modify(qp, &attr, OPENRDMA_QP_STATE));
	conf_state_expect(qp, to);
}

/*
 * Expects n completions with wr_ids first, first + 1, ...: all flushed, but
 * for the first when it has its own status.
 */
static void expect_flushed(struct conf_test *t, struct openrdma_cq *cq,
			   uint64_t first, int n, uint32_t qpn,
			   enum openrdma_wc_status first_status)
{
	struct openrdma_wc wc[16];
	int i;

	cr_assert_leq(n, 16);
	conf_poll_n(t, cq, n, wc);
	for (i = 0; i < n; i++) {
		conf_wc_expect(&wc[i], first + (uint64_t)i,
			       i ? OPENRDMA_WC_WR_FLUSH_ERR : first_status, -1);
		cr_assert_eq(wc[i].qp_num, qpn);
	}
}

CONF_TEST(flush, receives_on_modify_to_err)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct conf_mem *m;
	struct conf_rc rc;
	int i;

	conf_rc_connect(t, &rc, NULL);
	m = conf_mem_new(t, t->pd, 5 * 64, OPENRDMA_ACCESS_LOCAL_WRITE, SEED_A);
	for (i = 0; i < 5; i++)
		conf_post_recv(rc.qp, 100 + (uint64_t)i, m, (size_t)i * 64, 64);
	conf_poll_none(rc.rcq);
	modify_state(rc.qp, OPENRDMA_QPS_ERR);
	expect_flushed(t, rc.rcq, 100, 5, rc.qp->qp_num,
		       OPENRDMA_WC_WR_FLUSH_ERR);
	CONF_EXPECT_PATTERN(m->buf, 5 * 64, SEED_A, 0);
}

CONF_TEST(flush, sends_on_modify_to_err)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct openrdma_sge sge;
	struct openrdma_send_wr wr = { .sg_list = &sge,
				       .num_sge = 1,
				       .opcode = OPENRDMA_WR_SEND };
	struct conf_mem *m;
	struct conf_rc rc;
	int i;

	/* B posts no receive and A retries forever: the sends stay queued */
	conf_require_cap(t, OPENRDMA_DEVICE_RNR_RETRY,
			 "receiver-not-ready retries (to hold sends queued)");
	conf_rc_connect(t, &rc, NULL);
	m = conf_mem_new(t, t->pd, 64, 0, SEED_A);
	sge = conf_sge(m, 0, 64);
	for (i = 0; i < 6; i++) {
		wr.wr_id = 200 + (uint64_t)i;
		wr.send_flags = i % 2 ? 0 : OPENRDMA_SEND_SIGNALED;
		conf_post_send(rc.qp, &wr);
	}
	conf_poll_none(rc.scq);
	modify_state(rc.qp, OPENRDMA_QPS_ERR);
	expect_flushed(t, rc.scq, 200, 6, rc.qp->qp_num,
		       OPENRDMA_WC_WR_FLUSH_ERR);
}

CONF_TEST(flush, everything_after_a_failed_request)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct openrdma_send_wr wr[4];
	struct openrdma_send_wr *bad = NULL;
	struct openrdma_sge sge;
	struct openrdma_wc wc;
	struct conf_pmr dst, rbuf;
	struct conf_mem *m, *r;
	struct conf_rc rc;
	int i;

	/* iWARP completes the bad write once sent: a TERMINATE follows */
	conf_require_cap(t, OPENRDMA_DEVICE_EXACT_ERRORS,
			 "a remote access error in the write's completion");
	conf_rc_connect(t, &rc, NULL);
	m = conf_mem_new(t, t->pd, 64, 0, SEED_A);
	r = conf_mem_new(t, t->pd, 3 * 64, OPENRDMA_ACCESS_LOCAL_WRITE, 3);
	for (i = 0; i < 3; i++)
		conf_post_recv(rc.qp, 300 + (uint64_t)i, r, (size_t)i * 64, 64);
	dst = conf_peer_mr_reg(t, t->ppd, 64,
			       OPENRDMA_ACCESS_LOCAL_WRITE |
				       OPENRDMA_ACCESS_REMOTE_WRITE,
			       SEED_B);
	rbuf = conf_peer_mr_reg(t, t->ppd, 64, OPENRDMA_ACCESS_LOCAL_WRITE, 4);
	conf_peer_recv(t, rc.pqp.id, 400, &rbuf, 0, 64);

	/* one list: a write with a bad key, then three that must not run */
	sge = conf_sge(m, 0, 64);
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 4; i++) {
		wr[i].wr_id = 1 + (uint64_t)i;
		wr[i].sg_list = &sge;
		wr[i].num_sge = 1;
		wr[i].next = i < 3 ? &wr[i + 1] : NULL;
	}
	wr[0].opcode = OPENRDMA_WR_RDMA_WRITE;
	wr[0].send_flags = OPENRDMA_SEND_SIGNALED;
	wr[0].wr.rdma.remote_addr = conf_pmr_raddr(&dst, 0);
	wr[0].wr.rdma.rkey = dst.rkey ^ 0x5a5a5a00;
	wr[1].opcode = OPENRDMA_WR_SEND;
	wr[1].send_flags = OPENRDMA_SEND_SIGNALED;
	wr[2].opcode = OPENRDMA_WR_SEND; /* unsignaled */
	wr[3].opcode = OPENRDMA_WR_RDMA_WRITE; /* unsignaled */
	wr[3].wr.rdma.remote_addr = conf_pmr_raddr(&dst, 0);
	wr[3].wr.rdma.rkey = dst.rkey;
	CONF_OK(openrdma_qp_post_send(rc.qp, wr, &bad));

	expect_flushed(t, rc.scq, 1, 4, rc.qp->qp_num,
		       OPENRDMA_WC_REM_ACCESS_ERR);
	expect_flushed(t, rc.rcq, 300, 3, rc.qp->qp_num,
		       OPENRDMA_WC_WR_FLUSH_ERR);
	conf_state_expect(rc.qp, OPENRDMA_QPS_ERR);

	/* the target saw only the bad write: its receive is flushed too */
	conf_peer_state_expect(t, rc.pqp.id, OPENRDMA_QPS_ERR);
	conf_peer_poll_n(t, rc.prcq, 1, &wc);
	conf_wc_expect(&wc, 400, OPENRDMA_WC_WR_FLUSH_ERR, -1);
	conf_peer_mem_untouched(t, &dst);
	conf_peer_mem_untouched(t, &rbuf);
}

CONF_TEST(flush, posted_in_err)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct openrdma_sge sge;
	struct openrdma_send_wr wr = { .wr_id = 1,
				       .sg_list = &sge,
				       .num_sge = 1,
				       .opcode = OPENRDMA_WR_SEND };
	struct openrdma_wc wc;
	struct conf_mem *m;
	struct conf_rc rc;

	conf_rc_connect(t, &rc, NULL);
	m = conf_mem_new(t, t->pd, 64, OPENRDMA_ACCESS_LOCAL_WRITE, SEED_A);
	sge = conf_sge(m, 0, 64);
	modify_state(rc.qp, OPENRDMA_QPS_ERR);
	/* accepted, and completed in error although unsignaled */
	conf_post_send(rc.qp, &wr);
	conf_poll_n(t, rc.scq, 1, &wc);
	conf_wc_expect(&wc, 1, OPENRDMA_WC_WR_FLUSH_ERR, -1);
	conf_post_recv(rc.qp, 2, m, 0, 64);
	conf_poll_n(t, rc.rcq, 1, &wc);
	conf_wc_expect(&wc, 2, OPENRDMA_WC_WR_FLUSH_ERR, -1);
	conf_peer_poll_none(t, rc.prcq);
}

CONF_TEST(flush, reset_drops_without_completions)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct conf_mem *m;
	struct openrdma_qp_attr attr = { .qp_state = OPENRDMA_QPS_RESET };
	struct conf_rc rc;
	int i, ret;

	conf_rc_connect(t, &rc, NULL);
	m = conf_mem_new(t, t->pd, 4 * 64, OPENRDMA_ACCESS_LOCAL_WRITE, SEED_A);
	for (i = 0; i < 4; i++)
		conf_post_recv(rc.qp, 10 + (uint64_t)i, m, (size_t)i * 64, 64);
	ret = openrdma_qp_modify(rc.qp, &attr, OPENRDMA_QP_STATE);
	conf_skip_no_reset(t, ret);
	CONF_OK(ret);
	conf_state_expect(rc.qp, OPENRDMA_QPS_RESET);
	conf_poll_none(rc.rcq);
	/* nothing is left to flush on a later error either */
	modify_state(rc.qp, OPENRDMA_QPS_ERR);
	conf_poll_none(rc.rcq);
	conf_poll_none(rc.scq);
}
