/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Scatter/gather lists from 0 to max_sge SGEs, inline data up to
 * max_inline_data, zero-length messages, and the one-past-the-limit
 * requests that a post refuses.
 */
#include <stdlib.h>

#include "conf.h"

#define SEED_A 1
#define SEED_B 2
#define GAP 16

/* SGE i of a list: 1 + 37 i bytes, GAP bytes after the previous one. */
static uint32_t piece_len(int i)
{
	return 1 + 37 * (uint32_t)i;
}

static size_t piece_off(int i)
{
	size_t off = 0;
	int j;

	for (j = 0; j < i; j++)
		off += piece_len(j) + GAP;
	return off;
}

static size_t total_len(int n)
{
	return piece_off(n) - (size_t)n * GAP;
}

static void pieces(const struct conf_mem *m, int n, struct openrdma_sge *sge)
{
	int i;

	for (i = 0; i < n; i++)
		sge[i] = conf_sge(m, piece_off(i), piece_len(i));
}

/* The bytes of pieces 0..n-1 of a buffer holding pattern seed, in order. */
static uint8_t *gathered(int n, unsigned int seed)
{
	uint8_t *buf = malloc(total_len(n) + 1);
	size_t at = 0;
	int i;

	cr_assert_not_null(buf);
	for (i = 0; i < n; i++) {
		conf_fill(buf + at, piece_len(i), seed, piece_off(i));
		at += piece_len(i);
	}
	return buf;
}

/* An RC pair whose side A takes max_sge SGEs on both queues. */
static struct conf_test *wide_pair(struct conf_rc *rc)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct conf_rc_opts opts = { 0 };

	cr_assert_gt(t->attr.max_sge, 0, "max_sge is %d", t->attr.max_sge);
	opts.cap.max_send_sge = (uint32_t)t->attr.max_sge;
	opts.cap.max_recv_sge = (uint32_t)t->attr.max_sge;
	conf_rc_connect(t, rc, &opts);
	return t;
}

CONF_TEST(sge, send_gathers_0_to_max_sge)
{
	struct conf_rc rc;
	struct conf_test *t = wide_pair(&rc);
	int max = t->attr.max_sge, n;
	struct openrdma_sge *sge = calloc((size_t)max + 1, sizeof(*sge));
	struct openrdma_send_wr wr = { .sg_list = sge,
				       .opcode = OPENRDMA_WR_SEND,
				       .send_flags = OPENRDMA_SEND_SIGNALED };
	struct conf_mem *src;
	struct openrdma_wc wc;
	struct conf_pmr dst;
	uint8_t *want, *got;

	cr_assert_not_null(sge);
	src = conf_mem_new(t, t->pd, piece_off(max), 0, SEED_A);
	dst = conf_peer_mr_reg(t, t->ppd, total_len(max) + 1,
			       OPENRDMA_ACCESS_LOCAL_WRITE, SEED_B);
	got = malloc(total_len(max) + 1);
	cr_assert_not_null(got);
	for (n = 0; n <= max; n++) {
		pieces(src, n, sge);
		wr.wr_id = (uint64_t)n;
		wr.num_sge = n;
		conf_peer_recv(t, rc.pqp.id, 100 + (uint64_t)n, &dst, 0,
			       (uint32_t)total_len(max) + 1);
		conf_post_send(rc.qp, &wr);
		conf_poll_n(t, rc.scq, 1, &wc);
		conf_wc_expect(&wc, (uint64_t)n, OPENRDMA_WC_SUCCESS,
			       OPENRDMA_WC_SEND);
		conf_peer_poll_n(t, rc.prcq, 1, &wc);
		conf_wc_expect(&wc, 100 + (uint64_t)n, OPENRDMA_WC_SUCCESS,
			       OPENRDMA_WC_RECV);
		cr_assert_eq(wc.byte_len, total_len(n),
			     "%d SGEs: byte_len %u, want %zu", n, wc.byte_len,
			     total_len(n));
		want = gathered(n, SEED_A);
		conf_peer_mem_read(t, &dst, 0, got, total_len(n));
		cr_assert_arr_eq(got, want, total_len(n),
				 "%d SGEs gathered wrongly", n);
		free(want);
	}
	free(got);
	free(sge);
}

CONF_TEST(sge, recv_scatters_0_to_max_sge)
{
	struct conf_rc rc;
	struct conf_test *t = wide_pair(&rc);
	int max = t->attr.max_sge, n, i;
	struct openrdma_sge *sge = calloc((size_t)max + 1, sizeof(*sge));
	struct openrdma_recv_wr wr = { .sg_list = sge };
	struct openrdma_recv_wr *bad;
	struct conf_wire_send pwr = { .opcode = OPENRDMA_WR_SEND,
				      .flags = OPENRDMA_SEND_SIGNALED,
				      .num_sge = 1 };
	struct conf_mem *dst;
	struct openrdma_wc wc;
	struct conf_pmr src;

	cr_assert_not_null(sge);
	src = conf_peer_mr_reg(t, t->ppd, total_len(max) + 1, 0, SEED_B);
	for (n = 0; n <= max; n++) {
		dst = conf_mem_new(t, t->pd, piece_off(n) + 1,
				   OPENRDMA_ACCESS_LOCAL_WRITE, SEED_A);
		pieces(dst, n, sge);
		wr.wr_id = 100 + (uint64_t)n;
		wr.num_sge = n;
		CONF_OK(openrdma_qp_post_recv(rc.qp, &wr, &bad));
		pwr.wr_id = (uint64_t)n;
		pwr.sge[0] = conf_psge(&src, 0, (uint32_t)total_len(n));
		CONF_OK(conf_peer_post_send(t, rc.pqp.id, &pwr, 1, NULL));
		conf_peer_poll_n(t, rc.pscq, 1, &wc);
		conf_wc_expect(&wc, (uint64_t)n, OPENRDMA_WC_SUCCESS,
			       OPENRDMA_WC_SEND);
		conf_poll_n(t, rc.rcq, 1, &wc);
		conf_wc_expect(&wc, 100 + (uint64_t)n, OPENRDMA_WC_SUCCESS,
			       OPENRDMA_WC_RECV);
		cr_assert_eq(wc.byte_len, total_len(n));
		for (i = 0; i < n; i++) {
			/* piece i holds the next piece_len(i) bytes sent */
			CONF_EXPECT_PATTERN(dst->buf + piece_off(i),
					    piece_len(i), SEED_B,
					    piece_off(i) - (size_t)i * GAP);
			CONF_EXPECT_PATTERN(
				dst->buf + piece_off(i) + piece_len(i), GAP,
				SEED_A, piece_off(i) + piece_len(i));
		}
	}
	free(sge);
}

CONF_TEST(sge, rdma_write_gathers_and_read_scatters)
{
	struct conf_rc rc;
	struct conf_test *t = wide_pair(&rc);
	int max = t->attr.max_sge, rd = t->attr.max_sge_rd, n, i;
	struct openrdma_sge *sge = calloc((size_t)max + 1, sizeof(*sge));
	struct openrdma_send_wr wr = { .sg_list = sge,
				       .send_flags = OPENRDMA_SEND_SIGNALED };
	struct conf_mem *src, *dst;
	struct openrdma_wc wc;
	struct conf_pmr mr;
	uint8_t *want, *got;

	cr_assert_not_null(sge);
	cr_assert_gt(rd, 0, "max_sge_rd is %d", rd);
	src = conf_mem_new(t, t->pd, piece_off(max), 0, SEED_A);
	mr = conf_peer_mr_reg(t, t->ppd, total_len(max) + 1,
			      OPENRDMA_ACCESS_LOCAL_WRITE |
				      OPENRDMA_ACCESS_REMOTE_WRITE |
				      OPENRDMA_ACCESS_REMOTE_READ,
			      SEED_B);
	wr.wr.rdma.remote_addr = conf_pmr_raddr(&mr, 0);
	wr.wr.rdma.rkey = mr.rkey;
	/* write with max SGEs: B holds the gathered bytes */
	pieces(src, max, sge);
	wr.wr_id = 1;
	wr.num_sge = max;
	wr.opcode = OPENRDMA_WR_RDMA_WRITE;
	conf_post_send(rc.qp, &wr);
	conf_poll_n(t, rc.scq, 1, &wc);
	conf_wc_expect(&wc, 1, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_RDMA_WRITE);
	want = gathered(max, SEED_A);
	got = malloc(total_len(max));
	cr_assert_not_null(got);
	conf_peer_mem_read(t, &mr, 0, got, total_len(max));
	cr_assert_arr_eq(got, want, total_len(max));
	free(got);
	free(want);
	/* read back with 1..max_sge_rd SGEs: each piece gets its bytes */
	for (n = 1; n <= rd && n <= max; n++) {
		dst = conf_mem_new(t, t->pd, piece_off(n) + 1,
				   OPENRDMA_ACCESS_LOCAL_WRITE, 9);
		pieces(dst, n, sge);
		wr.wr_id = 10 + (uint64_t)n;
		wr.num_sge = n;
		wr.opcode = OPENRDMA_WR_RDMA_READ;
		conf_post_send(rc.qp, &wr);
		conf_poll_n(t, rc.scq, 1, &wc);
		conf_wc_expect(&wc, 10 + (uint64_t)n, OPENRDMA_WC_SUCCESS,
			       OPENRDMA_WC_RDMA_READ);
		cr_assert_eq(wc.byte_len, total_len(n));
		for (i = 0; i < n; i++)
			CONF_EXPECT_PATTERN(dst->buf + piece_off(i),
					    piece_len(i), SEED_A, piece_off(i));
	}
	free(sge);
}

CONF_TEST(sge, one_past_max_sge_refused)
{
	struct conf_rc rc;
	struct conf_test *t = wide_pair(&rc);
	uint32_t n = rc.qp->cap.max_send_sge + 1;
	uint32_t nr = rc.qp->cap.max_recv_sge + 1;
	struct openrdma_sge *sge = calloc(n > nr ? n : nr, sizeof(*sge));
	struct openrdma_send_wr swr = { .wr_id = 1,
					.sg_list = sge,
					.num_sge = (int)n,
					.opcode = OPENRDMA_WR_SEND };
	struct openrdma_recv_wr rwr = { .wr_id = 2,
					.sg_list = sge,
					.num_sge = (int)nr };
	struct openrdma_send_wr *sbad = NULL;
	struct openrdma_recv_wr *rbad = NULL;
	struct conf_mem *m;
	uint32_t i;

	cr_assert_not_null(sge);
	m = conf_mem_new(t, t->pd, 64, OPENRDMA_ACCESS_LOCAL_WRITE, SEED_A);
	for (i = 0; i < (n > nr ? n : nr); i++)
		sge[i] = conf_sge(m, 0, 1);
	CONF_ERR(openrdma_qp_post_send(rc.qp, &swr, &sbad), OPENRDMA_EINVAL);
	cr_assert_eq(sbad, &swr);
	CONF_ERR(openrdma_qp_post_recv(rc.qp, &rwr, &rbad), OPENRDMA_EINVAL);
	cr_assert_eq(rbad, &rwr);
	conf_poll_none(rc.scq);
	conf_poll_none(rc.rcq);
	conf_state_expect(rc.qp, OPENRDMA_QPS_RTS);
	free(sge);
}

/* An RC pair whose side A takes max_inline_data bytes inline. */
static struct conf_test *inline_pair(struct conf_rc *rc)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct conf_rc_opts opts = { 0 };

	cr_assert_geq(t->attr.max_inline_data, 0);
	opts.cap.max_inline_data = (uint32_t)t->attr.max_inline_data;
	conf_rc_connect(t, rc, &opts);
	return t;
}

CONF_TEST(sge, inline_up_to_max)
{
	struct conf_rc rc;
	struct conf_test *t = inline_pair(&rc);
	uint32_t max = rc.qp->cap.max_inline_data;
	uint32_t sizes[] = { 0, 1, max / 2, max };
	struct openrdma_sge sge[2];
	struct openrdma_send_wr wr = { .sg_list = sge,
				       .opcode = OPENRDMA_WR_SEND,
				       .send_flags = OPENRDMA_SEND_SIGNALED |
						     OPENRDMA_SEND_INLINE };
	struct openrdma_wc wc;
	struct conf_pmr dst;
	uint8_t *buf;
	size_t i;

	dst = conf_peer_mr_reg(t, t->ppd, max + 1, OPENRDMA_ACCESS_LOCAL_WRITE,
			       SEED_B);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		if (i && sizes[i] <= sizes[i - 1])
			continue;
		/* unregistered memory: inline data needs no key */
		buf = malloc(sizes[i] + 1);
		cr_assert_not_null(buf);
		conf_fill(buf, sizes[i], SEED_A, 0);
		/* two SGEs when possible: inline gathers too */
		sge[0] = (struct openrdma_sge){ .addr = (uintptr_t)buf,
						.length = sizes[i] / 2 };
		sge[1] = (struct openrdma_sge){
			.addr = (uintptr_t)buf + sizes[i] / 2,
			.length = sizes[i] - sizes[i] / 2
		};
		wr.num_sge = sizes[i] ? 2 : 0;
		wr.wr_id = i;
		conf_peer_recv(t, rc.pqp.id, 100 + i, &dst, 0, max + 1);
		conf_post_send(rc.qp, &wr);
		/* the buffer is free again as soon as the post returns */
		conf_fill(buf, sizes[i], SEED_B + 5, 0);
		free(buf);
		conf_poll_n(t, rc.scq, 1, &wc);
		conf_wc_expect(&wc, i, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_SEND);
		conf_peer_poll_n(t, rc.prcq, 1, &wc);
		conf_wc_expect(&wc, 100 + i, OPENRDMA_WC_SUCCESS,
			       OPENRDMA_WC_RECV);
		cr_assert_eq(wc.byte_len, sizes[i]);
		conf_peer_mem_expect(t, &dst, 0, sizes[i], SEED_A, 0);
	}
}

CONF_TEST(sge, inline_one_past_max_refused)
{
	struct conf_rc rc;
	struct conf_test *t = inline_pair(&rc);
	uint32_t len = rc.qp->cap.max_inline_data + 1;
	uint8_t *buf = calloc(1, len);
	struct openrdma_sge sge = { .addr = (uintptr_t)buf, .length = len };
	struct openrdma_send_wr wr = { .wr_id = 1,
				       .sg_list = &sge,
				       .num_sge = 1,
				       .opcode = OPENRDMA_WR_SEND,
				       .send_flags = OPENRDMA_SEND_INLINE };
	struct openrdma_send_wr *bad = NULL;

	cr_assert_not_null(buf);
	CONF_ERR(openrdma_qp_post_send(rc.qp, &wr, &bad), OPENRDMA_EINVAL);
	cr_assert_eq(bad, &wr);
	conf_poll_none(rc.scq);
	conf_peer_poll_none(t, rc.prcq);
	free(buf);
}

CONF_TEST(sge, zero_length_send)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct conf_mem *m;
	struct openrdma_sge sge;
	struct openrdma_send_wr wr = { .wr_id = 1,
				       .opcode = OPENRDMA_WR_SEND_WITH_IMM,
				       .send_flags = OPENRDMA_SEND_SIGNALED,
				       .imm_data = htonl(7) };
	struct openrdma_wc wc[2];
	struct conf_pmr dst;
	struct conf_rc rc;
	int i;

	conf_require_cap(t, OPENRDMA_DEVICE_IMM, "immediate data");
	conf_rc_connect(t, &rc, NULL);
	dst = conf_peer_mr_reg(t, t->ppd, 64, OPENRDMA_ACCESS_LOCAL_WRITE,
			       SEED_B);
	/* no SGE at all, then one SGE of length 0 */
	m = conf_mem_new(t, t->pd, 64, 0, SEED_A);
	sge = conf_sge(m, 0, 0);
	conf_peer_recv(t, rc.pqp.id, 10, &dst, 0, 64);
	conf_peer_recv(t, rc.pqp.id, 11, &dst, 0, 64);
	conf_post_send(rc.qp, &wr);
	wr.wr_id = 2;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	conf_post_send(rc.qp, &wr);
	conf_poll_n(t, rc.scq, 2, wc);
	for (i = 0; i < 2; i++)
		conf_wc_expect(&wc[i], 1 + (uint64_t)i, OPENRDMA_WC_SUCCESS,
			       OPENRDMA_WC_SEND);
	conf_peer_poll_n(t, rc.prcq, 2, wc);
	for (i = 0; i < 2; i++) {
		conf_wc_expect(&wc[i], 10 + (uint64_t)i, OPENRDMA_WC_SUCCESS,
			       OPENRDMA_WC_RECV);
		cr_assert_eq(wc[i].byte_len, 0);
		cr_assert(wc[i].wc_flags & OPENRDMA_WC_WITH_IMM);
		cr_assert_eq(ntohl(wc[i].imm_data), 7);
	}
	conf_peer_mem_untouched(t, &dst);
}
