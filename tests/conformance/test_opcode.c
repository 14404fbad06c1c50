/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Every work-request opcode on a connected RC pair: side A initiates, side
 * B is the target.  Each test checks both completions (status, opcode,
 * byte_len, flags, immediate data) and the bytes that moved.
 */
#include "conf.h"

#define LEN 4096
#define SEED_A 1
#define SEED_B 2
#define IMM 0x12345678u

/* 8-byte values that read the same in either byte order */
#define ATOMIC_V 0x1111111111111111ull
#define ATOMIC_W 0x0102030404030201ull
#define ATOMIC_D 0x0101010101010101ull

/* A sends [0, len) of a fresh buffer with opcode/imm to a receive of B. */
static void send_one(struct conf_test *t, struct conf_rc *rc,
		     enum openrdma_wr_opcode op, uint32_t imm,
		     struct openrdma_wc *pwc, struct conf_pmr *dst)
{
	struct conf_mem *src = conf_mem_new(t, t->pd, LEN, 0, SEED_A);
	struct openrdma_sge sge = conf_sge(src, 0, LEN);
	struct openrdma_send_wr wr = { .wr_id = 1,
				       .sg_list = &sge,
				       .num_sge = 1,
				       .opcode = op,
				       .send_flags = OPENRDMA_SEND_SIGNALED,
				       .imm_data = imm };
	struct openrdma_wc wc;

	*dst = conf_peer_mr_reg(t, t->ppd, LEN, OPENRDMA_ACCESS_LOCAL_WRITE,
				SEED_B);
	conf_peer_recv(t, rc->pqp.id, 7, dst, 0, LEN);
	conf_post_send(rc->qp, &wr);
	conf_poll_n(t, rc->scq, 1, &wc);
	conf_wc_expect(&wc, 1, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_SEND);
	conf_peer_poll_n(t, rc->prcq, 1, pwc);
	conf_wc_expect(pwc, 7, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_RECV);
	cr_assert_eq(pwc->byte_len, LEN);
	cr_assert_eq(pwc->qp_num, rc->pqp.qpn);
	conf_peer_mem_expect(t, dst, 0, LEN, SEED_A, 0);
}

CONF_TEST(opcode, send)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct openrdma_wc wc;
	struct conf_pmr dst;
	struct conf_rc rc;

	conf_rc_connect(t, &rc, NULL);
	send_one(t, &rc, OPENRDMA_WR_SEND, 0, &wc, &dst);
	cr_assert_eq(wc.wc_flags &
			     (OPENRDMA_WC_WITH_IMM | OPENRDMA_WC_WITH_INV),
		     0, "plain SEND reported flags %#x", wc.wc_flags);
}

CONF_TEST(opcode, send_with_imm)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct openrdma_wc wc;
	struct conf_pmr dst;
	struct conf_rc rc;

	conf_require_cap(t, OPENRDMA_DEVICE_IMM, "immediate data");
	conf_rc_connect(t, &rc, NULL);
	send_one(t, &rc, OPENRDMA_WR_SEND_WITH_IMM, htonl(IMM), &wc, &dst);
	cr_assert(wc.wc_flags & OPENRDMA_WC_WITH_IMM, "no WITH_IMM flag");
	cr_assert_eq(ntohl(wc.imm_data), IMM, "imm_data %#x, want %#x",
		     ntohl(wc.imm_data), IMM);
}

/* B binds a type 2 window over [0, LEN) of a fresh MR; returns its key. */
static uint32_t bind_type2(struct conf_test *t, struct conf_rc *rc,
			   struct conf_pmr *mr, uint32_t *mw)
{
	struct conf_wire_send wr = {
		.wr_id = 50,
		.opcode = OPENRDMA_WR_BIND_MW,
		.flags = OPENRDMA_SEND_SIGNALED,
		.bind_len = LEN,
		.bind_access = OPENRDMA_ACCESS_REMOTE_WRITE |
			       OPENRDMA_ACCESS_REMOTE_READ,
	};
	struct openrdma_wc wc;
	uint32_t key;

	conf_require_cap(t, OPENRDMA_DEVICE_MW_TYPE2, "type 2 memory windows");
	*mr = conf_peer_mr_reg(
		t, t->ppd, LEN,
		OPENRDMA_ACCESS_LOCAL_WRITE | OPENRDMA_ACCESS_MW_BIND, SEED_B);
	*mw = conf_peer_mw_alloc(t, t->ppd, OPENRDMA_MW_TYPE_2, &key);
	wr.mw = *mw;
	wr.bind_mr = mr->id;
	wr.bind_rkey = openrdma_inc_rkey(key);
	CONF_OK(conf_peer_post_send(t, rc->pqp.id, &wr, 1, NULL));
	conf_peer_poll_n(t, rc->pscq, 1, &wc);
	conf_wc_expect(&wc, 50, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_BIND_MW);
	cr_assert_eq(conf_peer_mw_rkey(t, *mw), wr.bind_rkey,
		     "bound window reports key %#x, want %#x",
		     conf_peer_mw_rkey(t, *mw), wr.bind_rkey);
	return wr.bind_rkey;
}

/* A writes [0, len) through key; checks status (and data on success). */
static void write_through(struct conf_test *t, struct conf_rc *rc,
			  const struct conf_pmr *mr, uint64_t off, uint32_t len,
			  uint32_t key, enum openrdma_wc_status status)
{
	struct conf_mem *src = conf_mem_new(t, t->pd, len, 0, SEED_A + 10);
	struct openrdma_wc wc;

	conf_rdma(rc->qp, OPENRDMA_WR_RDMA_WRITE, 3, src, 0, len,
		  conf_pmr_raddr(mr, off), key);
	conf_poll_n(t, rc->scq, 1, &wc);
	conf_wc_expect(&wc, 3, status,
		       status ? -1 : (int)OPENRDMA_WC_RDMA_WRITE);
	if (status == OPENRDMA_WC_SUCCESS)
		conf_peer_mem_expect(t, mr, off, len, SEED_A + 10, 0);
}

CONF_TEST(opcode, send_with_inv)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct conf_mem *src;
	struct openrdma_sge sge;
	struct openrdma_send_wr wr = { .wr_id = 1,
				       .sg_list = &sge,
				       .num_sge = 1,
				       .opcode = OPENRDMA_WR_SEND_WITH_INV,
				       .send_flags = OPENRDMA_SEND_SIGNALED };
	struct conf_pmr mr, dst;
	struct openrdma_wc wc;
	struct conf_rc rc;
	uint32_t mw, key;

	conf_require_cap(t, OPENRDMA_DEVICE_SEND_INV, "SEND_WITH_INV");
	conf_rc_connect(t, &rc, NULL);
	key = bind_type2(t, &rc, &mr, &mw);
	write_through(t, &rc, &mr, 0, 64, key, OPENRDMA_WC_SUCCESS);

	src = conf_mem_new(t, t->pd, 256, 0, SEED_A);
	sge = conf_sge(src, 0, 256);
	wr.invalidate_rkey = key;
	dst = conf_peer_mr_reg(t, t->ppd, 256, OPENRDMA_ACCESS_LOCAL_WRITE,
			       SEED_B);
	conf_peer_recv(t, rc.pqp.id, 7, &dst, 0, 256);
	conf_post_send(rc.qp, &wr);
	conf_poll_n(t, rc.scq, 1, &wc);
	conf_wc_expect(&wc, 1, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_SEND);
	conf_peer_poll_n(t, rc.prcq, 1, &wc);
	conf_wc_expect(&wc, 7, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_RECV);
	cr_assert(wc.wc_flags & OPENRDMA_WC_WITH_INV, "no WITH_INV flag");
	cr_assert_eq(wc.invalidated_rkey, key, "invalidated %#x, want %#x",
		     wc.invalidated_rkey, key);
	cr_assert_eq(wc.byte_len, 256);
	conf_peer_mem_expect(t, &dst, 0, 256, SEED_A, 0);

	/* the key is dead: the same write now fails, memory untouched */
	write_through(t, &rc, &mr, 128, 64, key, OPENRDMA_WC_REM_ACCESS_ERR);
	conf_peer_mem_expect(t, &mr, 64, LEN - 64, SEED_B, 64);
}

CONF_TEST(opcode, rdma_write)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct conf_mem *src;
	struct conf_pmr dst, rbuf;
	struct openrdma_wc wc;
	struct conf_rc rc;

	conf_rc_connect(t, &rc, NULL);
	src = conf_mem_new(t, t->pd, LEN, 0, SEED_A);
	dst = conf_peer_mr_reg(t, t->ppd, 3 * LEN, conf_remote_access(t),
			       SEED_B);
	/* a posted receive must not be consumed by a write */
	rbuf = conf_peer_mr_reg(t, t->ppd, 64, OPENRDMA_ACCESS_LOCAL_WRITE, 3);
	conf_peer_recv(t, rc.pqp.id, 9, &rbuf, 0, 64);

	conf_rdma(rc.qp, OPENRDMA_WR_RDMA_WRITE, 1, src, 0, LEN,
		  conf_pmr_raddr(&dst, LEN), dst.rkey);
	conf_poll_n(t, rc.scq, 1, &wc);
	conf_wc_expect(&wc, 1, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_RDMA_WRITE);
	conf_peer_mem_expect(t, &dst, 0, LEN, SEED_B, 0);
	conf_peer_mem_expect(t, &dst, LEN, LEN, SEED_A, 0);
	conf_peer_mem_expect(t, &dst, 2 * LEN, LEN, SEED_B, 2 * LEN);
	conf_peer_poll_none(t, rc.prcq);
	conf_peer_mem_untouched(t, &rbuf);
}

CONF_TEST(opcode, rdma_write_with_imm)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct conf_wire_recv rwr = { .wr_id = 9, .num_sge = 0 };
	struct conf_mem *src;
	struct openrdma_sge sge;
	struct openrdma_send_wr wr = {
		.wr_id = 1,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = OPENRDMA_WR_RDMA_WRITE_WITH_IMM,
		.send_flags = OPENRDMA_SEND_SIGNALED,
		.imm_data = htonl(IMM),
	};
	struct openrdma_wc wc;
	struct conf_pmr dst;
	struct conf_rc rc;

	conf_require_cap(t, OPENRDMA_DEVICE_IMM, "immediate data");
	conf_rc_connect(t, &rc, NULL);
	src = conf_mem_new(t, t->pd, LEN, 0, SEED_A);
	sge = conf_sge(src, 0, LEN);
	dst = conf_peer_mr_reg(t, t->ppd, LEN, conf_remote_access(t), SEED_B);
	wr.wr.rdma.remote_addr = conf_pmr_raddr(&dst, 0);
	wr.wr.rdma.rkey = dst.rkey;
	/* the receive needs no buffer: the data goes where the write says */
	CONF_OK(conf_peer_post_recv(t, rc.pqp.id, false, &rwr, 1, NULL));
	conf_post_send(rc.qp, &wr);
	conf_poll_n(t, rc.scq, 1, &wc);
	conf_wc_expect(&wc, 1, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_RDMA_WRITE);
	conf_peer_poll_n(t, rc.prcq, 1, &wc);
	conf_wc_expect(&wc, 9, OPENRDMA_WC_SUCCESS,
		       OPENRDMA_WC_RECV_RDMA_WITH_IMM);
	cr_assert_eq(wc.byte_len, LEN, "byte_len %u, want the write's %u",
		     wc.byte_len, LEN);
	cr_assert(wc.wc_flags & OPENRDMA_WC_WITH_IMM, "no WITH_IMM flag");
	cr_assert_eq(ntohl(wc.imm_data), IMM);
	conf_peer_mem_expect(t, &dst, 0, LEN, SEED_A, 0);
}

CONF_TEST(opcode, rdma_read)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct conf_mem *dst;
	struct openrdma_wc wc;
	struct conf_pmr src;
	struct conf_rc rc;

	conf_rc_connect(t, &rc, NULL);
	dst = conf_mem_new(t, t->pd, 2 * LEN, OPENRDMA_ACCESS_LOCAL_WRITE,
			   SEED_A);
	src = conf_peer_mr_reg(t, t->ppd, 2 * LEN, conf_remote_access(t),
			       SEED_B);
	conf_rdma(rc.qp, OPENRDMA_WR_RDMA_READ, 1, dst, 0, LEN,
		  conf_pmr_raddr(&src, LEN), src.rkey);
	conf_poll_n(t, rc.scq, 1, &wc);
	conf_wc_expect(&wc, 1, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_RDMA_READ);
	cr_assert_eq(wc.byte_len, LEN, "byte_len %u, want %u", wc.byte_len,
		     LEN);
	CONF_EXPECT_PATTERN(dst->buf, LEN, SEED_B, LEN);
	CONF_EXPECT_PATTERN(dst->buf + LEN, LEN, SEED_A, LEN);
	conf_peer_mem_untouched(t, &src);
}

/* Runs one atomic on the 8 bytes at offset 8 of a peer MR holding V. */
static void atomic_one(enum openrdma_wr_opcode op, uint64_t compare_add,
		       uint64_t swap, uint64_t expect_remote)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	uint64_t v = ATOMIC_V, got;
	struct conf_mem *res;
	struct openrdma_sge sge;
	struct openrdma_send_wr wr = { .wr_id = 1,
				       .sg_list = &sge,
				       .num_sge = 1,
				       .opcode = op,
				       .send_flags = OPENRDMA_SEND_SIGNALED };
	struct openrdma_wc wc;
	struct conf_pmr mr;
	struct conf_rc rc;

	conf_require_atomics(t);
	conf_rc_connect(t, &rc, NULL);
	res = conf_mem_new(t, t->pd, 8, OPENRDMA_ACCESS_LOCAL_WRITE, SEED_A);
	sge = conf_sge(res, 0, 8);
	mr = conf_peer_mr_reg(t, t->ppd, 64, conf_remote_access(t), SEED_B);
	conf_peer_mem_write(t, &mr, 8, &v, 8);
	wr.wr.atomic.remote_addr = conf_pmr_raddr(&mr, 8);
	wr.wr.atomic.rkey = mr.rkey;
	wr.wr.atomic.compare_add = compare_add;
	wr.wr.atomic.swap = swap;
	conf_post_send(rc.qp, &wr);
	conf_poll_n(t, rc.scq, 1, &wc);
	conf_wc_expect(&wc, 1, OPENRDMA_WC_SUCCESS,
		       op == OPENRDMA_WR_ATOMIC_CMP_AND_SWP ?
			       OPENRDMA_WC_COMP_SWAP :
			       OPENRDMA_WC_FETCH_ADD);
	cr_assert_eq(wc.byte_len, 8, "atomic byte_len %u, want 8", wc.byte_len);
	memcpy(&got, res->buf, 8);
	cr_assert_eq(got, ATOMIC_V, "atomic returned %#llx, want %#llx",
		     (unsigned long long)got, ATOMIC_V);
	conf_peer_mem_read(t, &mr, 8, &got, 8);
	cr_assert_eq(got, expect_remote, "target holds %#llx, want %#llx",
		     (unsigned long long)got,
		     (unsigned long long)expect_remote);
	conf_peer_mem_expect(t, &mr, 0, 8, SEED_B, 0);
	conf_peer_mem_expect(t, &mr, 16, 48, SEED_B, 16);
}

CONF_TEST(opcode, atomic_cmp_swp_hit)
{
	atomic_one(OPENRDMA_WR_ATOMIC_CMP_AND_SWP, ATOMIC_V, ATOMIC_W,
		   ATOMIC_W);
}

CONF_TEST(opcode, atomic_cmp_swp_miss)
{
	atomic_one(OPENRDMA_WR_ATOMIC_CMP_AND_SWP, ATOMIC_W, ATOMIC_D,
		   ATOMIC_V);
}

CONF_TEST(opcode, atomic_fetch_add)
{
	atomic_one(OPENRDMA_WR_ATOMIC_FETCH_AND_ADD, ATOMIC_D, 0,
		   ATOMIC_V + ATOMIC_D);
}

CONF_TEST(opcode, local_inv)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct conf_wire_send inv = { .wr_id = 60,
				      .opcode = OPENRDMA_WR_LOCAL_INV,
				      .flags = OPENRDMA_SEND_SIGNALED };
	struct openrdma_wc wc;
	struct conf_pmr mr;
	struct conf_rc rc;
	uint32_t mw, key;

	conf_require_cap(t, OPENRDMA_DEVICE_SEND_INV, "LOCAL_INV");
	conf_rc_connect(t, &rc, NULL);
	key = bind_type2(t, &rc, &mr, &mw);
	write_through(t, &rc, &mr, 0, 64, key, OPENRDMA_WC_SUCCESS);

	inv.imm = key;
	CONF_OK(conf_peer_post_send(t, rc.pqp.id, &inv, 1, NULL));
	conf_peer_poll_n(t, rc.pscq, 1, &wc);
	conf_wc_expect(&wc, 60, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_LOCAL_INV);

	write_through(t, &rc, &mr, 128, 64, key, OPENRDMA_WC_REM_ACCESS_ERR);
	conf_peer_mem_expect(t, &mr, 64, LEN - 64, SEED_B, 64);
}

CONF_TEST(opcode, bind_mw_type1)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct openrdma_wc wc;
	struct conf_pmr mr;
	struct conf_rc rc;
	uint32_t mw, key;
	int access = OPENRDMA_ACCESS_REMOTE_WRITE | OPENRDMA_ACCESS_REMOTE_READ;

	conf_require_cap(t, OPENRDMA_DEVICE_MW_TYPE1, "type 1 memory windows");
	conf_rc_connect(t, &rc, NULL);
	mr = conf_peer_mr_reg(
		t, t->ppd, LEN,
		OPENRDMA_ACCESS_LOCAL_WRITE | OPENRDMA_ACCESS_MW_BIND, SEED_B);
	mw = conf_peer_mw_alloc(t, t->ppd, OPENRDMA_MW_TYPE_1, NULL);
	/* the window covers [1024, 3072) of the MR */
	CONF_OK(conf_peer_mw_bind(t, rc.pqp.id, mw, &mr, 1024, 2048, access, 70,
				  NULL));
	conf_peer_poll_n(t, rc.pscq, 1, &wc);
	conf_wc_expect(&wc, 70, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_BIND_MW);
	key = conf_peer_mw_rkey(t, mw);
	cr_assert_neq(key, 0, "bound type 1 window has no key");
	cr_assert_neq(key, mr.rkey, "window key equals the MR's");

	write_through(t, &rc, &mr, 1024, 2048, key, OPENRDMA_WC_SUCCESS);
	conf_peer_mem_expect(t, &mr, 0, 1024, SEED_B, 0);
	conf_peer_mem_expect(t, &mr, 3072, 1024, SEED_B, 3072);
	/* one byte past the window, inside the MR */
	conf_require_cap(t, OPENRDMA_DEVICE_EXACT_ERRORS,
			 "an access past a type 1 window refused");
	write_through(t, &rc, &mr, 2048, 1025, key, OPENRDMA_WC_REM_ACCESS_ERR);
	conf_peer_mem_expect(t, &mr, 2048, 1024, SEED_A + 10, 1024);
	conf_peer_mem_expect(t, &mr, 3072, 1024, SEED_B, 3072);
}

CONF_TEST(opcode, bind_mw_type2)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct conf_mem *dst;
	struct openrdma_wc wc;
	struct conf_pmr mr;
	struct conf_rc rc;
	uint32_t mw, key;

	conf_rc_connect(t, &rc, NULL);
	key = bind_type2(t, &rc, &mr, &mw);
	write_through(t, &rc, &mr, 512, 1024, key, OPENRDMA_WC_SUCCESS);
	conf_peer_mem_expect(t, &mr, 0, 512, SEED_B, 0);

	/* and read back through the window */
	dst = conf_mem_new(t, t->pd, 1024, OPENRDMA_ACCESS_LOCAL_WRITE, 9);
	conf_rdma(rc.qp, OPENRDMA_WR_RDMA_READ, 4, dst, 0, 1024,
		  conf_pmr_raddr(&mr, 512), key);
	conf_poll_n(t, rc.scq, 1, &wc);
	conf_wc_expect(&wc, 4, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_RDMA_READ);
	CONF_EXPECT_PATTERN(dst->buf, 1024, SEED_A + 10, 0);
}
