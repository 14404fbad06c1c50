/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Ordering: one send queue's requests execute in order at the target,
 * receives are consumed in posting order, and FENCE holds a request back
 * until earlier reads and atomics are done.
 */
#include "conf.h"

#define SEED_A 1
#define SEED_B 2
#define NSEND 1000
#define WINDOW 50

CONF_TEST(order, thousand_sends_in_order)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct conf_rc_opts opts = { .cap = { .max_send_wr = WINDOW,
					      .max_recv_wr = WINDOW } };
	struct conf_wire_recv rwr[WINDOW];
	struct openrdma_send_wr wr[WINDOW];
	struct openrdma_sge sge[WINDOW];
	struct openrdma_wc wc[WINDOW];
	struct openrdma_send_wr *bad;
	uint32_t seq[WINDOW];
	struct conf_mem *src;
	struct conf_pmr dst;
	struct conf_rc rc;
	int base, i;

	conf_rc_connect(t, &rc, &opts);
	src = conf_mem_new(t, t->pd, WINDOW * sizeof(uint32_t), 0, SEED_A);
	dst = conf_peer_mr_reg(t, t->ppd, WINDOW * sizeof(uint32_t),
			       OPENRDMA_ACCESS_LOCAL_WRITE, SEED_B);
	memset(wr, 0, sizeof(wr));
	memset(rwr, 0, sizeof(rwr));
	for (base = 0; base < NSEND; base += WINDOW) {
		for (i = 0; i < WINDOW; i++) {
			rwr[i].wr_id = (uint64_t)(base + i);
			rwr[i].num_sge = 1;
			rwr[i].sge[0] = conf_psge(&dst, i * sizeof(uint32_t),
						  sizeof(uint32_t));
			memcpy(src->buf + i * sizeof(uint32_t),
			       &(uint32_t){ (uint32_t)(base + i) },
			       sizeof(uint32_t));
			sge[i] = conf_sge(src, i * sizeof(uint32_t),
					  sizeof(uint32_t));
			wr[i] = (struct openrdma_send_wr){
				.wr_id = (uint64_t)(base + i),
				.next = i + 1 < WINDOW ? &wr[i + 1] : NULL,
				.sg_list = &sge[i],
				.num_sge = 1,
				.opcode = OPENRDMA_WR_SEND,
				.send_flags = OPENRDMA_SEND_SIGNALED,
			};
		}
		CONF_OK(conf_peer_post_recv(t, rc.pqp.id, false, rwr, WINDOW,
					    NULL));
		CONF_OK(openrdma_qp_post_send(rc.qp, wr, &bad));
		conf_poll_n(t, rc.scq, WINDOW, wc);
		for (i = 0; i < WINDOW; i++)
			conf_wc_expect(&wc[i], (uint64_t)(base + i),
				       OPENRDMA_WC_SUCCESS, OPENRDMA_WC_SEND);
		conf_peer_poll_n(t, rc.prcq, WINDOW, wc);
		for (i = 0; i < WINDOW; i++)
			conf_wc_expect(&wc[i], (uint64_t)(base + i),
				       OPENRDMA_WC_SUCCESS, OPENRDMA_WC_RECV);
		/* receive k holds message k */
		conf_peer_mem_read(t, &dst, 0, seq, sizeof(seq));
		for (i = 0; i < WINDOW; i++)
			cr_assert_eq(seq[i], (uint32_t)(base + i),
				     "receive %d holds message %u", base + i,
				     seq[i]);
	}
}

CONF_TEST(order, writes_then_send)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct conf_mem *src;
	struct openrdma_sge sge;
	struct openrdma_send_wr wr = { .sg_list = &sge, .num_sge = 1 };
	struct openrdma_wc wc;
	struct conf_pmr dst, note;
	struct conf_rc rc;
	int i;

	conf_rc_connect(t, &rc, NULL);
	src = conf_mem_new(t, t->pd, 16 * 4096, 0, SEED_A);
	dst = conf_peer_mr_reg(t, t->ppd, 16 * 4096, conf_remote_access(t),
			       SEED_B);
	note = conf_peer_mr_reg(t, t->ppd, 8, OPENRDMA_ACCESS_LOCAL_WRITE, 3);
	conf_peer_recv(t, rc.pqp.id, 9, &note, 0, 8);
	/* sixteen unsignaled writes, then the signaled send that announces
	 * them */
	wr.opcode = OPENRDMA_WR_RDMA_WRITE;
	wr.wr.rdma.rkey = dst.rkey;
	for (i = 0; i < 16; i++) {
		sge = conf_sge(src, (size_t)i * 4096, 4096);
		wr.wr_id = (uint64_t)i;
		wr.wr.rdma.remote_addr =
			conf_pmr_raddr(&dst, (uint64_t)i * 4096);
		conf_post_send(rc.qp, &wr);
	}
	conf_send(rc.qp, 100, src, 0, 8);
	conf_peer_poll_n(t, rc.prcq, 1, &wc);
	conf_wc_expect(&wc, 9, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_RECV);
	conf_peer_mem_expect(t, &dst, 0, 16 * 4096, SEED_A, 0);
	conf_poll_n(t, rc.scq, 1, &wc);
	conf_wc_expect(&wc, 100, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_SEND);
}

CONF_TEST(order, read_after_write_sees_it)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct conf_mem *src, *dst;
	struct openrdma_wc wc[2];
	struct conf_pmr mr;
	struct conf_rc rc;

	conf_rc_connect(t, &rc, NULL);
	src = conf_mem_new(t, t->pd, 4096, 0, SEED_A);
	dst = conf_mem_new(t, t->pd, 4096, OPENRDMA_ACCESS_LOCAL_WRITE, 9);
	mr = conf_peer_mr_reg(t, t->ppd, 4096, conf_remote_access(t), SEED_B);
	conf_rdma(rc.qp, OPENRDMA_WR_RDMA_WRITE, 1, src, 0, 4096,
		  conf_pmr_raddr(&mr, 0), mr.rkey);
	conf_rdma(rc.qp, OPENRDMA_WR_RDMA_READ, 2, dst, 0, 4096,
		  conf_pmr_raddr(&mr, 0), mr.rkey);
	conf_poll_n(t, rc.scq, 2, wc);
	conf_wc_expect(&wc[0], 1, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_RDMA_WRITE);
	conf_wc_expect(&wc[1], 2, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_RDMA_READ);
	CONF_EXPECT_PATTERN(dst->buf, 4096, SEED_A, 0);
}

CONF_TEST(order, fence_after_read)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct conf_mem *src, *dst;
	struct openrdma_sge rsge, wsge;
	struct openrdma_send_wr write = { .wr_id = 2,
					  .sg_list = &wsge,
					  .num_sge = 1,
					  .opcode = OPENRDMA_WR_RDMA_WRITE,
					  .send_flags = OPENRDMA_SEND_SIGNALED |
							OPENRDMA_SEND_FENCE };
	struct openrdma_send_wr read = { .wr_id = 1,
					 .next = &write,
					 .sg_list = &rsge,
					 .num_sge = 1,
					 .opcode = OPENRDMA_WR_RDMA_READ,
					 .send_flags = OPENRDMA_SEND_SIGNALED };
	struct openrdma_send_wr *bad;
	struct openrdma_wc wc[2];
	struct conf_pmr mr;
	struct conf_rc rc;

	conf_rc_connect(t, &rc, NULL);
	src = conf_mem_new(t, t->pd, 65536, 0, SEED_A);
	dst = conf_mem_new(t, t->pd, 65536, OPENRDMA_ACCESS_LOCAL_WRITE, 9);
	mr = conf_peer_mr_reg(t, t->ppd, 65536, conf_remote_access(t), SEED_B);
	rsge = conf_sge(dst, 0, 65536);
	wsge = conf_sge(src, 0, 65536);
	read.wr.rdma.remote_addr = conf_pmr_raddr(&mr, 0);
	read.wr.rdma.rkey = mr.rkey;
	write.wr.rdma = read.wr.rdma;
	/* the fenced write may not overtake the read of the same bytes */
	CONF_OK(openrdma_qp_post_send(rc.qp, &read, &bad));
	conf_poll_n(t, rc.scq, 2, wc);
	conf_wc_expect(&wc[0], 1, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_RDMA_READ);
	conf_wc_expect(&wc[1], 2, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_RDMA_WRITE);
	CONF_EXPECT_PATTERN(dst->buf, 65536, SEED_B, 0);
	conf_peer_mem_expect(t, &mr, 0, 65536, SEED_A, 0);
}

CONF_TEST(order, fence_after_atomic)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	uint64_t v = 0x1111111111111111ull, got;
	struct conf_mem *src, *res;
	struct openrdma_sge asge, wsge;
	struct openrdma_send_wr write = { .wr_id = 2,
					  .sg_list = &wsge,
					  .num_sge = 1,
					  .opcode = OPENRDMA_WR_RDMA_WRITE,
					  .send_flags = OPENRDMA_SEND_SIGNALED |
							OPENRDMA_SEND_FENCE };
	struct openrdma_send_wr atomic = {
		.wr_id = 1,
		.next = &write,
		.sg_list = &asge,
		.num_sge = 1,
		.opcode = OPENRDMA_WR_ATOMIC_FETCH_AND_ADD,
		.send_flags = OPENRDMA_SEND_SIGNALED,
		.wr.atomic.compare_add = 0x0101010101010101ull,
	};
	struct openrdma_send_wr *bad;
	struct openrdma_wc wc[2];
	struct conf_pmr mr;
	struct conf_rc rc;

	conf_require_atomics(t);
	conf_rc_connect(t, &rc, NULL);
	src = conf_mem_new(t, t->pd, 8, 0, SEED_A);
	res = conf_mem_new(t, t->pd, 8, OPENRDMA_ACCESS_LOCAL_WRITE, 9);
	mr = conf_peer_mr_reg(t, t->ppd, 8, conf_remote_access(t), SEED_B);
	conf_peer_mem_write(t, &mr, 0, &v, 8);
	asge = conf_sge(res, 0, 8);
	wsge = conf_sge(src, 0, 8);
	atomic.wr.atomic.remote_addr = conf_pmr_raddr(&mr, 0);
	atomic.wr.atomic.rkey = mr.rkey;
	write.wr.rdma.remote_addr = conf_pmr_raddr(&mr, 0);
	write.wr.rdma.rkey = mr.rkey;
	CONF_OK(openrdma_qp_post_send(rc.qp, &atomic, &bad));
	conf_poll_n(t, rc.scq, 2, wc);
	conf_wc_expect(&wc[0], 1, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_FETCH_ADD);
	conf_wc_expect(&wc[1], 2, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_RDMA_WRITE);
	memcpy(&got, res->buf, 8);
	cr_assert_eq(got, v, "the atomic saw %#llx, want %#llx",
		     (unsigned long long)got, (unsigned long long)v);
	conf_peer_mem_expect(t, &mr, 0, 8, SEED_A, 0);
}
