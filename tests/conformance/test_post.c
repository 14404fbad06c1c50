/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * What a post may be refused for (openrdma_semantics(7), Posting): a
 * malformed request, a QP state that does not take it, or a full queue,
 * with *bad_wr at the first request not posted and those before it posted.
 */
#include "conf.h"

#define SEED_A 1
#define SEED_B 2

/* Posts wr and expects the refusal err with *bad_wr == expect_bad. */
static void send_refused(struct openrdma_qp *qp, struct openrdma_send_wr *wr,
			 struct openrdma_send_wr *expect_bad, int err)
{
	struct openrdma_send_wr *bad = NULL;
	int ret;

	ret = openrdma_qp_post_send(qp, wr, &bad);
	cr_assert_eq(ret, -err, "post_send in %s: got %s, want %s",
		     openrdma_qp_state_str(conf_qp_state(qp)),
		     openrdma_strerror(ret), openrdma_strerror(-err));
	cr_assert_eq(bad, expect_bad, "bad_wr does not point at WR %llu",
		     (unsigned long long)expect_bad->wr_id);
}

static void recv_refused(struct openrdma_qp *qp, struct openrdma_recv_wr *wr,
			 struct openrdma_recv_wr *expect_bad, int err)
{
	struct openrdma_recv_wr *bad = NULL;
	int ret;

	ret = openrdma_qp_post_recv(qp, wr, &bad);
	cr_assert_eq(ret, -err, "post_recv in %s: got %s, want %s",
		     openrdma_qp_state_str(conf_qp_state(qp)),
		     openrdma_strerror(ret), openrdma_strerror(-err));
	cr_assert_eq(bad, expect_bad, "bad_wr does not point at WR %llu",
		     (unsigned long long)expect_bad->wr_id);
}

static void modify_to(struct openrdma_qp *qp, struct openrdma_qp_attr *attr,
		      int mask)
{
	CONF_OK(openrdma_qp_modify(qp, attr, mask));
	conf_state_expect(qp, attr->qp_state);
}

/* Sends refused, receives taken (not in RESET) in the states before RTS. */
static void check_states_before_rts(struct conf_test *t, struct openrdma_qp *qp,
				    struct openrdma_cq *cq, bool ud,
				    const struct conf_rc *rc)
{
	struct conf_mem *m = conf_mem_new(t, t->pd, 256,
					  OPENRDMA_ACCESS_LOCAL_WRITE, SEED_A);
	struct openrdma_sge sge = conf_sge(m, 0, 64);
	struct openrdma_send_wr swr = { .wr_id = 1,
					.sg_list = &sge,
					.num_sge = 1,
					.opcode = OPENRDMA_WR_SEND,
					.send_flags = OPENRDMA_SEND_SIGNALED };
	struct openrdma_recv_wr rwr = { .wr_id = 2,
					.sg_list = &sge,
					.num_sge = 1 };
	struct openrdma_ah_attr aha = { .port_num = 1 };
	struct openrdma_recv_wr *rbad;
	struct openrdma_qp_attr attr;
	struct openrdma_ah *ah;
	int mask;

	if (ud) {
		aha.addr = t->port.addr;
		CONF_OK(openrdma_ah_create(t->pd, &aha, &ah));
		conf_track(t, CONF_K_AH, ah);
		swr.wr.ud.ah = ah;
		swr.wr.ud.remote_qpn = qp->qp_num;
		swr.wr.ud.remote_qkey = CONF_QKEY;
	}
	send_refused(qp, &swr, &swr, OPENRDMA_EINVAL);
	recv_refused(qp, &rwr, &rwr, OPENRDMA_EINVAL);

	mask = ud ? conf_ud_attr(OPENRDMA_QPS_INIT, &attr) :
		    conf_rc_attr(t, OPENRDMA_QPS_INIT, NULL, 0, false, &attr);
	modify_to(qp, &attr, mask);
	send_refused(qp, &swr, &swr, OPENRDMA_EINVAL);
	rwr.wr_id = 3;
	CONF_OK(openrdma_qp_post_recv(qp, &rwr, &rbad));
	if (!rc && !ud)
		goto out;

	if (ud)
		mask = conf_ud_attr(OPENRDMA_QPS_RTR, &attr);
	else
		mask = conf_rc_attr(t, OPENRDMA_QPS_RTR, &t->pport.addr,
				    rc->pqp.qpn, false, &attr);
	modify_to(qp, &attr, mask);
	send_refused(qp, &swr, &swr, OPENRDMA_EINVAL);
	rwr.wr_id = 4;
	CONF_OK(openrdma_qp_post_recv(qp, &rwr, &rbad));
out:
	/* nothing refused left a completion behind */
	conf_poll_none(cq);
}

CONF_TEST(post, rc_reset_and_init)
{
	struct conf_test *t = conf_setup(CONF_LOCAL_ONLY);
	struct openrdma_cq *cq = conf_cq_new(t, 16, NULL, NULL);
	struct openrdma_qp_init_attr init = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 4,
			 .max_recv_wr = 4,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = OPENRDMA_QPT_RC,
	};

	check_states_before_rts(t, conf_qp_new(t, &init), cq, false, NULL);
}

CONF_TEST(post, rc_rtr)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct openrdma_qp_attr attr;
	struct conf_rc rc;
	int mask;

	conf_rc_create(t, &rc, NULL);
	/* probe the manual path on the peer first: it may be CM-only */
	mask = conf_rc_attr(t, OPENRDMA_QPS_INIT, NULL, 0, false, &attr);
	CONF_OK(conf_peer_qp_modify(t, rc.pqp.id, &attr, mask));
	mask = conf_rc_attr(t, OPENRDMA_QPS_RTR, &t->port.addr, rc.qp->qp_num,
			    false, &attr);
	if (conf_peer_qp_modify(t, rc.pqp.id, &attr, mask) ==
	    -OPENRDMA_EOPNOTSUPP)
		cr_skip_test("%s: transport %s reaches RTR only through the CM",
			     t->ifname, t->attr.transport);
	check_states_before_rts(t, rc.qp, rc.scq, false, &rc);
	conf_poll_none(rc.rcq);
}

CONF_TEST(post, ud_reset_init_rtr)
{
	struct conf_test *t = conf_setup(CONF_LOCAL_ONLY);
	struct openrdma_cq *cq = conf_cq_new(t, 16, NULL, NULL);
	struct openrdma_qp_init_attr init = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 4,
			 .max_recv_wr = 4,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = OPENRDMA_QPT_UD,
	};

	conf_require_cap(t, OPENRDMA_DEVICE_UD, "UD queue pairs");
	check_states_before_rts(t, conf_qp_new(t, &init), cq, true, NULL);
}

CONF_TEST(post, rts_takes_both)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct conf_mem *m;
	struct openrdma_wc wc;
	struct conf_pmr dst;
	struct conf_rc rc;

	conf_rc_connect(t, &rc, NULL);
	m = conf_mem_new(t, t->pd, 64, OPENRDMA_ACCESS_LOCAL_WRITE, SEED_A);
	conf_post_recv(rc.qp, 2, m, 0, 64);
	dst = conf_peer_mr_reg(t, t->ppd, 64, OPENRDMA_ACCESS_LOCAL_WRITE,
			       SEED_B);
	conf_peer_recv(t, rc.pqp.id, 3, &dst, 0, 64);
	conf_send(rc.qp, 1, m, 0, 64);
	conf_poll_n(t, rc.scq, 1, &wc);
	conf_wc_expect(&wc, 1, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_SEND);
	conf_poll_none(rc.rcq);
}

/* An RC pair whose A side is in RTS, and a local 64-byte buffer. */
static struct conf_test *rts(struct conf_rc *rc, struct conf_mem **m)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);

	conf_rc_connect(t, rc, NULL);
	*m = conf_mem_new(t, t->pd, 64, OPENRDMA_ACCESS_LOCAL_WRITE, SEED_A);
	return t;
}

CONF_TEST(post, unknown_opcode)
{
	struct conf_mem *m;
	struct conf_rc rc;
	struct conf_test *t = rts(&rc, &m);
	struct openrdma_sge sge = conf_sge(m, 0, 8);
	struct openrdma_send_wr wr = { .wr_id = 1,
				       .sg_list = &sge,
				       .num_sge = 1,
				       .opcode = OPENRDMA_WR_OPCODE_MAX };

	send_refused(rc.qp, &wr, &wr, OPENRDMA_EINVAL);
	wr.opcode = (enum openrdma_wr_opcode)99;
	send_refused(rc.qp, &wr, &wr, OPENRDMA_EINVAL);
	conf_poll_none(rc.scq);
	conf_state_expect(rc.qp, OPENRDMA_QPS_RTS);
	(void)t;
}

CONF_TEST(post, unknown_send_flags)
{
	struct conf_mem *m;
	struct conf_rc rc;
	struct conf_test *t = rts(&rc, &m);
	struct openrdma_sge sge = conf_sge(m, 0, 8);
	struct openrdma_send_wr wr = { .wr_id = 1,
				       .sg_list = &sge,
				       .num_sge = 1,
				       .opcode = OPENRDMA_WR_SEND,
				       .send_flags = 1u << 12 };

	send_refused(rc.qp, &wr, &wr, OPENRDMA_EINVAL);
	conf_poll_none(rc.scq);
	(void)t;
}

CONF_TEST(post, atomic_sge_not_8_bytes)
{
	struct conf_mem *m;
	struct conf_rc rc;
	struct conf_test *t = rts(&rc, &m);
	struct openrdma_sge sge[2] = { conf_sge(m, 0, 4), conf_sge(m, 8, 4) };
	struct openrdma_send_wr wr = {
		.wr_id = 1,
		.sg_list = sge,
		.num_sge = 1,
		.opcode = OPENRDMA_WR_ATOMIC_FETCH_AND_ADD,
		.wr.atomic = { .remote_addr = 0, .rkey = 1 },
	};

	conf_require_atomics(t);
	send_refused(rc.qp, &wr, &wr, OPENRDMA_EINVAL); /* 4 bytes */
	sge[0].length = 16;
	wr.opcode = OPENRDMA_WR_ATOMIC_CMP_AND_SWP;
	send_refused(rc.qp, &wr, &wr, OPENRDMA_EINVAL); /* 16 bytes */
	wr.num_sge = 2; /* 4 + 4 in two SGEs */
	sge[0].length = 4;
	send_refused(rc.qp, &wr, &wr, OPENRDMA_EINVAL);
	wr.num_sge = 0;
	send_refused(rc.qp, &wr, &wr, OPENRDMA_EINVAL);
	conf_poll_none(rc.scq);
}

CONF_TEST(post, ud_only_sends)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	static const enum openrdma_wr_opcode ops[] = {
		OPENRDMA_WR_RDMA_WRITE,
		OPENRDMA_WR_RDMA_WRITE_WITH_IMM,
		OPENRDMA_WR_RDMA_READ,
		OPENRDMA_WR_ATOMIC_CMP_AND_SWP,
		OPENRDMA_WR_ATOMIC_FETCH_AND_ADD,
		OPENRDMA_WR_LOCAL_INV,
		OPENRDMA_WR_BIND_MW,
		OPENRDMA_WR_SEND_WITH_INV,
	};
	struct conf_mem *m;
	struct openrdma_sge sge;
	struct openrdma_send_wr wr = { .sg_list = &sge, .num_sge = 1 };
	struct conf_ud ud;
	size_t i;

	conf_ud_create(t, &ud);
	m = conf_mem_new(t, t->pd, 64, OPENRDMA_ACCESS_LOCAL_WRITE, SEED_A);
	sge = conf_sge(m, 0, 8);
	wr.wr.ud.ah = ud.ah;
	wr.wr.ud.remote_qpn = ud.pqp.qpn;
	wr.wr.ud.remote_qkey = CONF_QKEY;
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		wr.wr_id = i;
		wr.opcode = ops[i];
		send_refused(ud.qp, &wr, &wr, OPENRDMA_EINVAL);
	}
	/* a UD send needs an address handle */
	wr.opcode = OPENRDMA_WR_SEND;
	wr.wr.ud.ah = NULL;
	send_refused(ud.qp, &wr, &wr, OPENRDMA_EINVAL);
	conf_poll_none(ud.cq);
	conf_state_expect(ud.qp, OPENRDMA_QPS_RTS);
}

CONF_TEST(post, list_stops_at_first_bad)
{
	struct conf_mem *m;
	struct conf_rc rc;
	struct conf_test *t = rts(&rc, &m);
	struct openrdma_sge sge = conf_sge(m, 0, 0);
	struct openrdma_send_wr wr[3];
	struct openrdma_wc wc;
	int i;

	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 3; i++) {
		wr[i].wr_id = 1 + (uint64_t)i;
		wr[i].sg_list = &sge;
		wr[i].num_sge = 0;
		wr[i].opcode = OPENRDMA_WR_RDMA_WRITE; /* zero length */
		wr[i].send_flags = OPENRDMA_SEND_SIGNALED;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	wr[1].opcode = (enum openrdma_wr_opcode)77;
	send_refused(rc.qp, wr, &wr[1], OPENRDMA_EINVAL);
	/* the first was posted and runs; the third was not */
	conf_poll_n(t, rc.scq, 1, &wc);
	conf_wc_expect(&wc, 1, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_RDMA_WRITE);
}

CONF_TEST(post, recv_list_stops_at_first_bad)
{
	struct conf_mem *m;
	struct conf_rc rc;
	struct conf_test *t = rts(&rc, &m);
	struct openrdma_qp_attr attr = { .qp_state = OPENRDMA_QPS_ERR };
	struct openrdma_sge sge = conf_sge(m, 0, 64);
	struct openrdma_recv_wr wr[3];
	struct openrdma_wc wc;
	int i;

	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 3; i++) {
		wr[i].wr_id = 1 + (uint64_t)i;
		wr[i].sg_list = &sge;
		wr[i].num_sge = 1;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	wr[1].num_sge = (int)rc.qp->cap.max_recv_sge + 1;
	recv_refused(rc.qp, wr, &wr[1], OPENRDMA_EINVAL);
	/* exactly one receive was posted: a flush shows which */
	CONF_OK(openrdma_qp_modify(rc.qp, &attr, OPENRDMA_QP_STATE));
	conf_poll_n(t, rc.rcq, 1, &wc);
	conf_wc_expect(&wc, 1, OPENRDMA_WC_WR_FLUSH_ERR, -1);
}

CONF_TEST(post, full_receive_queue)
{
	struct conf_mem *m;
	struct conf_rc rc;
	struct conf_test *t = rts(&rc, &m);
	struct openrdma_sge sge = conf_sge(m, 0, 64);
	struct openrdma_recv_wr wr = { .sg_list = &sge, .num_sge = 1 };
	struct openrdma_recv_wr *bad;
	uint32_t i;

	for (i = 0; i < rc.qp->cap.max_recv_wr; i++) {
		wr.wr_id = i;
		CONF_OK(openrdma_qp_post_recv(rc.qp, &wr, &bad));
	}
	recv_refused(rc.qp, &wr, &wr, OPENRDMA_ENOMEM);
	conf_poll_none(rc.rcq);
	(void)t;
}

CONF_TEST(post, full_send_queue)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct conf_rc_opts opts = { .cap.max_send_wr = 8 };
	struct conf_mem *m;
	struct openrdma_sge sge;
	struct openrdma_send_wr wr = { .sg_list = &sge,
				       .num_sge = 1,
				       .opcode = OPENRDMA_WR_SEND };
	struct conf_rc rc;
	uint32_t i;

	/* no receive at B and endless RNR retries keep every send queued */
	conf_require_cap(t, OPENRDMA_DEVICE_RNR_RETRY,
			 "receiver-not-ready retries (to hold sends queued)");
	conf_rc_connect(t, &rc, &opts);
	m = conf_mem_new(t, t->pd, 64, 0, SEED_A);
	sge = conf_sge(m, 0, 64);
	for (i = 0; i < rc.qp->cap.max_send_wr; i++) {
		wr.wr_id = i;
		conf_post_send(rc.qp, &wr);
	}
	send_refused(rc.qp, &wr, &wr, OPENRDMA_ENOMEM);
	conf_poll_none(rc.scq);
}
