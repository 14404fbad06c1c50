/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Remote access checks at the target: every violation completes
 * REM_ACCESS_ERR at the initiator, moves both QPs to ERR, raises
 * QP_ACCESS_ERR at the target and moves no byte.  Also zero-based MRs and
 * zero-length RDMA, which checks no key.
 */
#include "conf.h"

#define LEN 4096
#define SEED_A 1
#define SEED_B 2

#define RW                                                            \
	(OPENRDMA_ACCESS_LOCAL_WRITE | OPENRDMA_ACCESS_REMOTE_WRITE | \
	 OPENRDMA_ACCESS_REMOTE_READ)

/* Side A's request op of len bytes at raddr/rkey must be refused. */
static void violation(struct conf_test *t, struct conf_rc *rc,
		      enum openrdma_wr_opcode op, const struct conf_pmr *target,
		      uint64_t raddr, uint32_t rkey, uint32_t len)
{
	struct conf_mem *local = conf_mem_new(
		t, t->pd, len, OPENRDMA_ACCESS_LOCAL_WRITE, SEED_A);
	struct openrdma_sge sge = conf_sge(local, 0, len);
	struct openrdma_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = op
	};

	conf_require_cap(t, OPENRDMA_DEVICE_EXACT_ERRORS,
			 "remote access errors in the initiator's completion "
			 "and QP_ACCESS_ERR at the target");
	if (op == OPENRDMA_WR_ATOMIC_CMP_AND_SWP ||
	    op == OPENRDMA_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	conf_post_expect(t, rc->qp, rc->scq, &wr, OPENRDMA_WC_REM_ACCESS_ERR,
			 -1);
	conf_state_expect(rc->qp, OPENRDMA_QPS_ERR);
	conf_peer_async_expect(t, OPENRDMA_EVENT_QP_ACCESS_ERR, CONF_K_QP,
			       rc->pqp.id);
	conf_peer_state_expect(t, rc->pqp.id, OPENRDMA_QPS_ERR);
	conf_peer_mem_untouched(t, target);
	CONF_EXPECT_PATTERN(local->buf, len, SEED_A, 0);
}

/* A connected pair and a peer MR of LEN bytes with access. */
static struct conf_test *pair(struct conf_rc *rc, int access,
			      struct conf_pmr *mr)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);

	conf_rc_connect(t, rc, NULL);
	*mr = conf_peer_mr_reg(t, t->ppd, LEN, access, SEED_B);
	return t;
}

CONF_TEST(access, bad_rkey)
{
	struct conf_pmr mr;
	struct conf_rc rc;
	struct conf_test *t = pair(&rc, RW, &mr);

	violation(t, &rc, OPENRDMA_WR_RDMA_WRITE, &mr, conf_pmr_raddr(&mr, 0),
		  mr.rkey ^ 0x5a5a5a00, 64);
}

CONF_TEST(access, write_one_byte_past_end)
{
	struct conf_pmr mr;
	struct conf_rc rc;
	struct conf_test *t = pair(&rc, RW, &mr);

	violation(t, &rc, OPENRDMA_WR_RDMA_WRITE, &mr,
		  conf_pmr_raddr(&mr, LEN - 63), mr.rkey, 64);
}

CONF_TEST(access, read_one_byte_past_end)
{
	struct conf_pmr mr;
	struct conf_rc rc;
	struct conf_test *t = pair(&rc, RW, &mr);

	violation(t, &rc, OPENRDMA_WR_RDMA_READ, &mr,
		  conf_pmr_raddr(&mr, LEN - 63), mr.rkey, 64);
}

CONF_TEST(access, write_one_byte_before_start)
{
	struct conf_pmr mr;
	struct conf_rc rc;
	struct conf_test *t = pair(&rc, RW, &mr);

	violation(t, &rc, OPENRDMA_WR_RDMA_WRITE, &mr,
		  conf_pmr_raddr(&mr, 0) - 1, mr.rkey, 64);
}

CONF_TEST(access, write_to_read_only_mr)
{
	struct conf_pmr mr;
	struct conf_rc rc;
	struct conf_test *t =
		pair(&rc,
		     OPENRDMA_ACCESS_LOCAL_WRITE | OPENRDMA_ACCESS_REMOTE_READ,
		     &mr);

	violation(t, &rc, OPENRDMA_WR_RDMA_WRITE, &mr, conf_pmr_raddr(&mr, 0),
		  mr.rkey, 64);
}

CONF_TEST(access, read_from_write_only_mr)
{
	struct conf_pmr mr;
	struct conf_rc rc;
	struct conf_test *t =
		pair(&rc,
		     OPENRDMA_ACCESS_LOCAL_WRITE | OPENRDMA_ACCESS_REMOTE_WRITE,
		     &mr);

	violation(t, &rc, OPENRDMA_WR_RDMA_READ, &mr, conf_pmr_raddr(&mr, 0),
		  mr.rkey, 64);
}

CONF_TEST(access, atomic_without_remote_atomic)
{
	struct conf_pmr mr;
	struct conf_rc rc;
	struct conf_test *t = pair(&rc, RW, &mr);

	conf_require_atomics(t);
	violation(t, &rc, OPENRDMA_WR_ATOMIC_FETCH_AND_ADD, &mr,
		  conf_pmr_raddr(&mr, 8), mr.rkey, 8);
}

CONF_TEST(access, rkey_of_another_pd)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct conf_pmr mr;
	struct conf_rc rc;

	conf_rc_connect(t, &rc, NULL);
	mr = conf_peer_mr_reg(t, conf_peer_pd_alloc(t), LEN, RW, SEED_B);
	violation(t, &rc, OPENRDMA_WR_RDMA_WRITE, &mr, conf_pmr_raddr(&mr, 0),
		  mr.rkey, 64);
}

CONF_TEST(access, key_of_a_deregistered_mr)
{
	struct conf_pmr old, mr;
	struct conf_rc rc;
	struct conf_test *t = pair(&rc, RW, &old);

	/* the key dies with its MR; a new MR gets a new key */
	CONF_OK(conf_peer_destroy(t, CONF_K_MR, old.id));
	mr = conf_peer_mr_reg(t, t->ppd, LEN, RW, SEED_B);
	cr_assert_neq(mr.rkey, old.rkey, "a new MR reuses the key %#x",
		      old.rkey);
	violation(t, &rc, OPENRDMA_WR_RDMA_WRITE, &mr, conf_pmr_raddr(&mr, 0),
		  old.rkey, 64);
}

CONF_TEST(access, qp_access_flags)
{
	struct openrdma_qp_attr attr = {
		.qp_state = OPENRDMA_QPS_RTS,
		.qp_access_flags = OPENRDMA_ACCESS_REMOTE_READ,
	};
	struct conf_pmr mr;
	struct conf_rc rc;
	struct conf_test *t = pair(&rc, RW, &mr);

	/* the MR allows writes; the target QP no longer does */
	CONF_OK(conf_peer_qp_modify(t, rc.pqp.id, &attr,
				    OPENRDMA_QP_STATE |
					    OPENRDMA_QP_ACCESS_FLAGS));
	violation(t, &rc, OPENRDMA_WR_RDMA_WRITE, &mr, conf_pmr_raddr(&mr, 0),
		  mr.rkey, 64);
}

CONF_TEST(access, zero_based_mr)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct conf_mem *src, *dst;
	struct openrdma_wc wc;
	struct conf_pmr mr;
	struct conf_rc rc;

	conf_require_cap(t, OPENRDMA_DEVICE_ZERO_BASED, "zero-based MRs");
	conf_rc_connect(t, &rc, NULL);
	mr = conf_peer_mr_reg(t, t->ppd, LEN, RW | OPENRDMA_ACCESS_ZERO_BASED,
			      SEED_B);
	cr_assert_eq(conf_pmr_raddr(&mr, 100), 100);
	src = conf_mem_new(t, t->pd, 256, 0, SEED_A);
	conf_rdma(rc.qp, OPENRDMA_WR_RDMA_WRITE, 1, src, 0, 256, 100, mr.rkey);
	conf_poll_n(t, rc.scq, 1, &wc);
	conf_wc_expect(&wc, 1, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_RDMA_WRITE);
	conf_peer_mem_expect(t, &mr, 0, 100, SEED_B, 0);
	conf_peer_mem_expect(t, &mr, 100, 256, SEED_A, 0);
	conf_peer_mem_expect(t, &mr, 356, LEN - 356, SEED_B, 356);

	dst = conf_mem_new(t, t->pd, 512, OPENRDMA_ACCESS_LOCAL_WRITE, 9);
	conf_rdma(rc.qp, OPENRDMA_WR_RDMA_READ, 2, dst, 0, 512, LEN - 512,
		  mr.rkey);
	conf_poll_n(t, rc.scq, 1, &wc);
	conf_wc_expect(&wc, 2, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_RDMA_READ);
	CONF_EXPECT_PATTERN(dst->buf, 512, SEED_B, LEN - 512);

	/* offsets past the length are out of bounds, as addresses are */
	conf_peer_mem_restore(t, &mr, 100, 256);
	violation(t, &rc, OPENRDMA_WR_RDMA_WRITE, &mr, LEN - 63, mr.rkey, 64);
}

CONF_TEST(access, zero_length_rdma_checks_no_key)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct openrdma_send_wr wr = { .wr_id = 1, .num_sge = 0 };
	struct conf_rc rc;

	conf_rc_connect(t, &rc, NULL);
	wr.opcode = OPENRDMA_WR_RDMA_WRITE;
	conf_post_expect(t, rc.qp, rc.scq, &wr, OPENRDMA_WC_SUCCESS,
			 OPENRDMA_WC_RDMA_WRITE);
	wr.wr_id = 2;
	wr.opcode = OPENRDMA_WR_RDMA_READ;
	conf_post_expect(t, rc.qp, rc.scq, &wr, OPENRDMA_WC_SUCCESS,
			 OPENRDMA_WC_RDMA_READ);
	conf_state_expect(rc.qp, OPENRDMA_QPS_RTS);
	conf_peer_state_expect(t, rc.pqp.id, OPENRDMA_QPS_RTS);
	conf_peer_async_none(t);
}
