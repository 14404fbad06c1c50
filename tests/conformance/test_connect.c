/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Both ways of connecting RC QPs, whatever OPENRDMA_TEST_CONNECT says:
 * through the CM, and by hand (modify to INIT, RTR with the peer's QPN and
 * address, RTS) where the transport allows it.  Data then flows both ways.
 */
#include "conf.h"

#define SEED_A 1
#define SEED_B 2

/* A sends to B, B sends to A, A writes into B: all must arrive. */
static void traffic(struct conf_test *t, struct conf_rc *rc)
{
	struct conf_wire_send pwr = { .wr_id = 30,
				      .opcode = OPENRDMA_WR_SEND,
				      .flags = OPENRDMA_SEND_SIGNALED,
				      .num_sge = 1 };
	struct conf_mem *am;
	struct openrdma_wc wc;
	struct conf_pmr bm;

	am = conf_mem_new(t, t->pd, 1024, OPENRDMA_ACCESS_LOCAL_WRITE, SEED_A);
	bm = conf_peer_mr_reg(t, t->ppd, 1024,
			      OPENRDMA_ACCESS_LOCAL_WRITE |
				      OPENRDMA_ACCESS_REMOTE_WRITE,
			      SEED_B);
	conf_peer_recv(t, rc->pqp.id, 20, &bm, 512, 256);
	conf_send(rc->qp, 1, am, 0, 256);
	conf_poll_n(t, rc->scq, 1, &wc);
	conf_wc_expect(&wc, 1, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_SEND);
	conf_peer_poll_n(t, rc->prcq, 1, &wc);
	conf_wc_expect(&wc, 20, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_RECV);
	cr_assert_eq(wc.qp_num, rc->pqp.qpn);
	conf_peer_mem_expect(t, &bm, 512, 256, SEED_A, 0);

	conf_post_recv(rc->qp, 2, am, 512, 256);
	pwr.sge[0] = conf_psge(&bm, 0, 256);
	CONF_OK(conf_peer_post_send(t, rc->pqp.id, &pwr, 1, NULL));
	conf_peer_poll_n(t, rc->pscq, 1, &wc);
	conf_wc_expect(&wc, 30, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_SEND);
	conf_poll_n(t, rc->rcq, 1, &wc);
	conf_wc_expect(&wc, 2, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_RECV);
	cr_assert_eq(wc.byte_len, 256);
	CONF_EXPECT_PATTERN(am->buf + 512, 256, SEED_B, 0);

	conf_rdma(rc->qp, OPENRDMA_WR_RDMA_WRITE, 3, am, 0, 128,
		  conf_pmr_raddr(&bm, 768), bm.rkey);
	conf_poll_n(t, rc->scq, 1, &wc);
	conf_wc_expect(&wc, 3, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_RDMA_WRITE);
	conf_peer_mem_expect(t, &bm, 768, 128, SEED_A, 0);
}

CONF_TEST(connect, through_the_cm)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct conf_rc rc;

	conf_rc_create(t, &rc, NULL);
	conf_rc_connect_cm(t, &rc, NULL);
	traffic(t, &rc);
}

CONF_TEST(connect, by_modify_qp)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct conf_rc rc;

	conf_rc_create(t, &rc, NULL);
	conf_rc_connect_manual(t, &rc, NULL);
	traffic(t, &rc);
}
