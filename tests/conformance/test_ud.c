/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Unreliable datagrams: the GRH in front of every receive, replies through
 * openrdma_ah_attr_from_wc(), silent drops for a wrong Q_Key or QPN, and
 * the length errors that leave the QP in RTS.
 */
#include "conf.h"

#define SEED_A 1
#define SEED_B 2
#define GRH OPENRDMA_GRH_LEN

/* Side A sends len bytes of m (imm if with_imm) to qpn with qkey. */
static void ud_send(struct conf_ud *ud, const struct conf_mem *m, uint32_t len,
		    uint32_t qpn, uint32_t qkey, uint64_t wr_id, bool with_imm)
{
	struct openrdma_sge sge = conf_sge(m, 0, len);
	struct openrdma_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode =
			with_imm ? OPENRDMA_WR_SEND_WITH_IMM : OPENRDMA_WR_SEND,
		.send_flags = OPENRDMA_SEND_SIGNALED,
		.imm_data = htonl(0xabcd),
		.wr.ud = { .ah = ud->ah,
			   .remote_qpn = qpn,
			   .remote_qkey = qkey },
	};

	conf_post_send(ud->qp, &wr);
}

static void send_ok(struct conf_test *t, struct conf_ud *ud, uint64_t wr_id)
{
	struct openrdma_wc wc;

	conf_poll_n(t, ud->cq, 1, &wc);
	conf_wc_expect(&wc, wr_id, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_SEND);
}

CONF_TEST(ud, send_recv_with_grh_and_reply)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct conf_wire_send reply = { .wr_id = 20,
					.opcode = OPENRDMA_WR_SEND,
					.flags = OPENRDMA_SEND_SIGNALED,
					.num_sge = 1,
					.remote_qkey = CONF_QKEY };
	struct conf_mem *src, *rbuf;
	struct openrdma_wc wc;
	struct conf_pmr dst;
	struct conf_ud ud;
	uint32_t ah;

	conf_require_cap(t, OPENRDMA_DEVICE_UD, "UD queue pairs");
	conf_require_cap(t, OPENRDMA_DEVICE_IMM, "immediate data");
	conf_ud_create(t, &ud);
	src = conf_mem_new(t, t->pd, 512, 0, SEED_A);
	dst = conf_peer_mr_reg(t, t->ppd, GRH + 512,
			       OPENRDMA_ACCESS_LOCAL_WRITE, SEED_B);
	conf_peer_recv(t, ud.pqp.id, 7, &dst, 0, GRH + 512);
	ud_send(&ud, src, 300, ud.pqp.qpn, CONF_QKEY, 1, true);
	send_ok(t, &ud, 1);
	conf_peer_poll_n(t, ud.pcq, 1, &wc);
	conf_wc_expect(&wc, 7, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_RECV);
	cr_assert_eq(wc.byte_len, GRH + 300, "byte_len %u, want %u + GRH",
		     wc.byte_len, 300);
	cr_assert(wc.wc_flags & OPENRDMA_WC_GRH, "no GRH flag");
	cr_assert(wc.wc_flags & OPENRDMA_WC_WITH_IMM, "no WITH_IMM flag");
	cr_assert_eq(ntohl(wc.imm_data), 0xabcd);
	cr_assert_eq(wc.src_qp, ud.qp->qp_num, "src_qp %u, want %u", wc.src_qp,
		     ud.qp->qp_num);
	cr_assert_eq(wc.qp_num, ud.pqp.qpn);
	conf_peer_mem_expect(t, &dst, GRH, 300, SEED_A, 0);
	conf_peer_mem_expect(t, &dst, GRH + 300, 212, SEED_B, GRH + 300);

	/* B answers the sender the completion names */
	CONF_OK(conf_peer_ah_from_wc(t, t->ppd, &wc, &dst, 0, &ah));
	rbuf = conf_mem_new(t, t->pd, GRH + 128, OPENRDMA_ACCESS_LOCAL_WRITE,
			    3);
	conf_post_recv(ud.qp, 8, rbuf, 0, GRH + 128);
	reply.ah = ah;
	reply.remote_qpn = wc.src_qp;
	reply.sge[0] = conf_psge(&dst, 0, 100);
	CONF_OK(conf_peer_post_send(t, ud.pqp.id, &reply, 1, NULL));
	conf_peer_poll_n(t, ud.pcq, 1, &wc);
	conf_wc_expect(&wc, 20, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_SEND);
	conf_poll_n(t, ud.cq, 1, &wc);
	conf_wc_expect(&wc, 8, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_RECV);
	cr_assert_eq(wc.byte_len, GRH + 100);
	cr_assert_eq(wc.src_qp, ud.pqp.qpn);
	cr_assert(wc.wc_flags & OPENRDMA_WC_GRH);
}

/* A datagram that must vanish: sent fine, never received. */
static void dropped(uint32_t qpn_xor, uint32_t qkey)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct openrdma_wc wc;
	struct conf_mem *src;
	struct conf_pmr dst;
	struct conf_ud ud;

	conf_ud_create(t, &ud);
	src = conf_mem_new(t, t->pd, 64, 0, SEED_A);
	dst = conf_peer_mr_reg(t, t->ppd, GRH + 64, OPENRDMA_ACCESS_LOCAL_WRITE,
			       SEED_B);
	conf_peer_recv(t, ud.pqp.id, 7, &dst, 0, GRH + 64);
	ud_send(&ud, src, 64, ud.pqp.qpn ^ qpn_xor, qkey, 1, false);
	send_ok(t, &ud, 1);
	conf_peer_poll_none(t, ud.pcq);
	conf_peer_mem_untouched(t, &dst);
	/* the receive is still there for a good datagram */
	ud_send(&ud, src, 64, ud.pqp.qpn, CONF_QKEY, 2, false);
	send_ok(t, &ud, 2);
	conf_peer_poll_n(t, ud.pcq, 1, &wc);
	conf_wc_expect(&wc, 7, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_RECV);
	conf_peer_state_expect(t, ud.pqp.id, OPENRDMA_QPS_RTS);
}

CONF_TEST(ud, qkey_mismatch_dropped)
{
	dropped(0, CONF_QKEY ^ 0x0f0f);
}

CONF_TEST(ud, unknown_qpn_dropped)
{
	dropped(0x5a5a, CONF_QKEY);
}

CONF_TEST(ud, send_over_max_ud_msg_size)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	uint32_t max = t->attr.max_ud_msg_size;
	struct openrdma_wc wc;
	struct conf_mem *src;
	struct conf_pmr dst;
	struct conf_ud ud;

	conf_require_cap(t, OPENRDMA_DEVICE_UD, "UD queue pairs");
	conf_require_cap(t, OPENRDMA_DEVICE_EXACT_ERRORS,
			 "LOC_LEN_ERR for a datagram over max_ud_msg_size");
	conf_ud_create(t, &ud);
	cr_assert_gt(max, 0, "max_ud_msg_size is 0");
	src = max < (16u << 20) ?
		      conf_mem_new(t, t->pd, (size_t)max + 1, 0, SEED_A) :
		      conf_mem_map(t, t->pd, (size_t)max + 1, 0);
	dst = conf_peer_mr_reg(t, t->ppd, GRH + 64, OPENRDMA_ACCESS_LOCAL_WRITE,
			       SEED_B);
	conf_peer_recv(t, ud.pqp.id, 7, &dst, 0, GRH + 64);
	ud_send(&ud, src, max + 1, ud.pqp.qpn, CONF_QKEY, 1, false);
	conf_poll_n(t, ud.cq, 1, &wc);
	conf_wc_expect(&wc, 1, OPENRDMA_WC_LOC_LEN_ERR, -1);
	conf_state_expect(ud.qp, OPENRDMA_QPS_RTS);
	conf_peer_poll_none(t, ud.pcq);
	/* the QP goes on sending */
	ud_send(&ud, src, 64, ud.pqp.qpn, CONF_QKEY, 2, false);
	send_ok(t, &ud, 2);
	conf_peer_poll_n(t, ud.pcq, 1, &wc);
	conf_wc_expect(&wc, 7, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_RECV);
}

CONF_TEST(ud, max_ud_msg_size_fits)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	uint32_t max = t->attr.max_ud_msg_size;
	struct openrdma_wc wc;
	struct conf_mem *src;
	struct conf_pmr dst;
	struct conf_ud ud;

	if (max > (4u << 20))
		cr_skip_test("%s: max_ud_msg_size %u is too large to move "
			     "cheaply",
			     t->ifname, max);
	conf_ud_create(t, &ud);
	src = conf_mem_new(t, t->pd, max, 0, SEED_A);
	dst = conf_peer_mr_reg(t, t->ppd, GRH + (uint64_t)max,
			       OPENRDMA_ACCESS_LOCAL_WRITE, SEED_B);
	conf_peer_recv(t, ud.pqp.id, 7, &dst, 0, GRH + max);
	ud_send(&ud, src, max, ud.pqp.qpn, CONF_QKEY, 1, false);
	send_ok(t, &ud, 1);
	conf_peer_poll_n(t, ud.pcq, 1, &wc);
	conf_wc_expect(&wc, 7, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_RECV);
	cr_assert_eq(wc.byte_len, GRH + max);
	conf_peer_mem_expect(t, &dst, GRH, max, SEED_A, 0);
}

CONF_TEST(ud, recv_shorter_than_datagram)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct openrdma_wc wc;
	struct conf_mem *src;
	struct conf_pmr dst;
	struct conf_ud ud;

	conf_require_cap(t, OPENRDMA_DEVICE_UD, "UD queue pairs");
	conf_require_cap(t, OPENRDMA_DEVICE_EXACT_ERRORS,
			 "LOC_LEN_ERR for a receive shorter than the datagram");
	conf_ud_create(t, &ud);
	src = conf_mem_new(t, t->pd, 256, 0, SEED_A);
	dst = conf_peer_mr_reg(t, t->ppd, GRH + 256,
			       OPENRDMA_ACCESS_LOCAL_WRITE, SEED_B);
	/* room for the GRH and 99 bytes; 100 arrive */
	conf_peer_recv(t, ud.pqp.id, 7, &dst, 0, GRH + 99);
	ud_send(&ud, src, 100, ud.pqp.qpn, CONF_QKEY, 1, false);
	send_ok(t, &ud, 1);
	conf_peer_poll_n(t, ud.pcq, 1, &wc);
	conf_wc_expect(&wc, 7, OPENRDMA_WC_LOC_LEN_ERR, -1);
	conf_peer_state_expect(t, ud.pqp.id, OPENRDMA_QPS_RTS);
	conf_peer_mem_expect(t, &dst, GRH + 99, 256 - 99, SEED_B, GRH + 99);
	/* the QP keeps receiving */
	conf_peer_recv(t, ud.pqp.id, 8, &dst, 0, GRH + 256);
	ud_send(&ud, src, 100, ud.pqp.qpn, CONF_QKEY, 2, false);
	send_ok(t, &ud, 2);
	conf_peer_poll_n(t, ud.pcq, 1, &wc);
	conf_wc_expect(&wc, 8, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_RECV);
	cr_assert_eq(wc.byte_len, GRH + 100);
	conf_peer_mem_expect(t, &dst, GRH, 100, SEED_A, 0);
}
