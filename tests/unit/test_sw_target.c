/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Target-side execution: every check of the semantics page before a byte
 * moves, the responder's completions, the target QP's state and events,
 * atomics (also from several threads), and UD delivery with its GRH.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>

#include "core/sw/target.h"
#include "tests/unit/test_sw_fake.h"

#define LEN 4096
#define REMOTE_ALL                                                    \
	(OPENRDMA_ACCESS_REMOTE_WRITE | OPENRDMA_ACCESS_REMOTE_READ | \
	 OPENRDMA_ACCESS_REMOTE_ATOMIC)

static struct sw_keymap *map;
static struct fake_cq cq;
static struct fake_qp t; /* the target */
static uint8_t src[LEN], mem[LEN] __attribute__((aligned(8)));
static uint32_t key; /* mem: local write and every remote right */

static void fill(uint8_t *p, size_t len, uint8_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i);
}

static bool filled(const uint8_t *p, size_t len, uint8_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != (uint8_t)(seed + i))
			return false;
	return true;
}

static void setup(void)
{
	struct sw_key_attr attr = {
		.type = SW_KEY_MR,
		.va = (uintptr_t)mem,
		.length = LEN,
		.access = OPENRDMA_ACCESS_LOCAL_WRITE | REMOTE_ALL,
		.pd = &fake_pd,
	};

	fake_reset();
	cr_assert_eq(sw_keymap_create(&map), 0);
	cr_assert_eq(sw_keymap_add(map, &attr, &key), 0);
	fake_cq_init(&cq, 64);
	fake_qp_init(&t, OPENRDMA_QPT_RC, map, &cq, NULL, 8, 4);
	fake_qp_to(&t, OPENRDMA_QPS_RTS);
	fill(src, LEN, 1);
	fill(mem, LEN, 100);
}

static void teardown(void)
{
	fake_qp_fini(&t);
	fake_cq_fini(&cq);
	sw_keymap_destroy(map);
}

TestSuite(sw_target, .init = setup, .fini = teardown);

/* A request whose payload is src[0, len). */
struct req {
	struct sw_req r;
	struct iovec iov;
	struct sw_iov_payload pl;
};

static struct sw_req *req(struct req *q, enum openrdma_wr_opcode op, void *buf,
			  uint64_t len)
{
	memset(q, 0, sizeof(*q));
	q->iov.iov_base = buf;
	q->iov.iov_len = len;
	sw_iov_payload_init(&q->pl, &q->iov, 1);
	q->r.opcode = op;
	q->r.src_qpn = 77;
	q->r.length = len;
	q->r.rkey = key;
	q->r.remote_addr = (uintptr_t)mem;
	q->r.payload = &q->pl.base;
	return &q->r;
}

static void recv_on(struct fake_qp *fq, uint64_t wr_id, size_t off,
		    uint32_t len)
{
	struct openrdma_sge sge = { (uintptr_t)mem + off, len, key };
	struct openrdma_recv_wr wr = { .wr_id = wr_id,
				       .sg_list = &sge,
				       .num_sge = 1 };
	struct openrdma_recv_wr *bad;

	cr_assert_eq(sw_qp_post_recv(&fq->sw, &wr, &bad), 0);
}

static int run(struct sw_req *r)
{
	uint8_t timer = 0xff;

	return sw_target_rc(&t.sw, r, &timer);
}

static void expect_target_err(void)
{
	cr_assert_eq(sw_qp_state(&t.sw), OPENRDMA_QPS_ERR);
	cr_assert_eq(atomic_load(&t.qp.state), OPENRDMA_QPS_ERR);
}

Test(sw_target, send_scatters_into_the_receive)
{
	struct openrdma_sge sge[2] = { { (uintptr_t)mem, 10, key },
				       { (uintptr_t)mem + 100, 50, key } };
	struct openrdma_recv_wr wr = { .wr_id = 5,
				       .sg_list = sge,
				       .num_sge = 2 };
	struct openrdma_recv_wr *bad;
	struct openrdma_wc wc;
	struct req q;
	struct sw_req *r = req(&q, OPENRDMA_WR_SEND_WITH_IMM, src, 40);

	cr_assert_eq(sw_qp_post_recv(&t.sw, &wr, &bad), 0);
	r->ex = htonl(0xabcd);
	r->send_flags = OPENRDMA_SEND_SOLICITED;
	cr_assert_eq(run(r), OPENRDMA_WC_SUCCESS);
	cr_assert(filled(mem, 10, 1));
	cr_assert(filled(mem + 100, 30, 11));
	cr_assert(filled(mem + 130, 20, 230), "past the message: untouched");
	wc = fake_poll1(&cq);
	cr_assert_eq(wc.wr_id, 5);
	cr_assert_eq(wc.status, OPENRDMA_WC_SUCCESS);
	cr_assert_eq(wc.opcode, OPENRDMA_WC_RECV);
	cr_assert_eq(wc.byte_len, 40);
	cr_assert_eq(wc.src_qp, 77);
	cr_assert_eq(wc.qp_num, t.qp.qp_num);
	cr_assert_eq(wc.wc_flags, OPENRDMA_WC_WITH_IMM);
	cr_assert_eq(ntohl(wc.imm_data), 0xabcd);
	cr_assert(fake.notify_solicited[fake.num_notify - 1]);
}

Test(sw_target, no_receive_is_an_rnr_nak)
{
	struct req q;
	uint8_t timer = 0;

	atomic_store(&t.sw.min_rnr_timer, 14);
	cr_assert_eq(sw_target_rc(&t.sw, req(&q, OPENRDMA_WR_SEND, src, 8),
				  &timer),
		     SW_EXEC_RNR);
	cr_assert_eq(timer, 14);
	q.r.opcode = OPENRDMA_WR_RDMA_WRITE_WITH_IMM;
	cr_assert_eq(sw_target_rc(&t.sw, &q.r, &timer), SW_EXEC_RNR);
	cr_assert(filled(mem, LEN, 100), "nothing written before the NAK");
	cr_assert_eq(sw_qp_state(&t.sw), OPENRDMA_QPS_RTS, "unaffected");
}

Test(sw_target, send_longer_than_receive)
{
	struct openrdma_wc wc;
	struct req q;

	recv_on(&t, 7, 0, 100);
	cr_assert_eq(run(req(&q, OPENRDMA_WR_SEND, src, 101)),
		     OPENRDMA_WC_REM_INV_REQ_ERR);
	wc = fake_poll1(&cq);
	cr_assert_eq(wc.wr_id, 7);
	cr_assert_eq(wc.status, OPENRDMA_WC_LOC_LEN_ERR);
	expect_target_err();
	cr_assert_eq(fake.num_events, 0);
}

Test(sw_target, receive_without_local_write)
{
	struct sw_key_attr attr = { .type = SW_KEY_MR,
				    .va = (uintptr_t)mem,
				    .length = LEN,
				    .pd = &fake_pd };
	struct openrdma_sge sge = { (uintptr_t)mem, 64, 0 };
	struct openrdma_recv_wr wr = { .wr_id = 3,
				       .sg_list = &sge,
				       .num_sge = 1 };
	struct openrdma_recv_wr *bad;
	struct req q;

	cr_assert_eq(sw_keymap_add(map, &attr, &sge.lkey), 0);
	cr_assert_eq(sw_qp_post_recv(&t.sw, &wr, &bad), 0);
	cr_assert_eq(run(req(&q, OPENRDMA_WR_SEND, src, 8)),
		     OPENRDMA_WC_REM_OP_ERR);
	cr_assert_eq(fake_poll1(&cq).status, OPENRDMA_WC_LOC_PROT_ERR);
	cr_assert(filled(mem, LEN, 100));
	expect_target_err();
}

Test(sw_target, write_and_read)
{
	uint8_t back[64];
	struct req q;
	struct sw_req *r = req(&q, OPENRDMA_WR_RDMA_WRITE, src, 64);

	r->remote_addr = (uintptr_t)mem + 8;
	cr_assert_eq(run(r), OPENRDMA_WC_SUCCESS);
	cr_assert(filled(mem + 8, 64, 1));
	cr_assert(filled(mem, 8, 100));
	cr_assert(filled(mem + 72, 8, 172));
	fake_poll0(&cq);

	r = req(&q, OPENRDMA_WR_RDMA_READ, back, 64);
	r->remote_addr = (uintptr_t)mem + 8;
	cr_assert_eq(run(r), OPENRDMA_WC_SUCCESS);
	cr_assert(filled(back, 64, 1));
}

Test(sw_target, write_with_imm_consumes_a_receive)
{
	struct openrdma_recv_wr wr = { .wr_id = 9 }, *bad;
	struct openrdma_wc wc;
	struct req q;
	struct sw_req *r = req(&q, OPENRDMA_WR_RDMA_WRITE_WITH_IMM, src, 32);

	cr_assert_eq(sw_qp_post_recv(&t.sw, &wr, &bad), 0);
	r->ex = htonl(42);
	cr_assert_eq(run(r), OPENRDMA_WC_SUCCESS);
	cr_assert(filled(mem, 32, 1));
	wc = fake_poll1(&cq);
	cr_assert_eq(wc.wr_id, 9);
	cr_assert_eq(wc.opcode, OPENRDMA_WC_RECV_RDMA_WITH_IMM);
	cr_assert_eq(wc.byte_len, 32);
	cr_assert_eq(ntohl(wc.imm_data), 42);
	cr_assert_eq(wc.wc_flags, OPENRDMA_WC_WITH_IMM);
}

static void access_violation(struct sw_req *r)
{
	cr_assert_eq(run(r), OPENRDMA_WC_REM_ACCESS_ERR);
	cr_assert(filled(mem, LEN, 100), "memory untouched");
	expect_target_err();
	cr_assert_eq(fake_events(OPENRDMA_EVENT_QP_ACCESS_ERR), 1);
	cr_assert_eq(fake.events[0].element.qp, &t.qp);
}

Test(sw_target, bad_rkey)
{
	struct req q;
	struct sw_req *r = req(&q, OPENRDMA_WR_RDMA_WRITE, src, 8);

	r->rkey ^= 0x5a5a5a00;
	access_violation(r);
}

Test(sw_target, out_of_bounds)
{
	struct req q;
	struct sw_req *r = req(&q, OPENRDMA_WR_RDMA_WRITE, src, 16);

	r->remote_addr = (uintptr_t)mem + LEN - 8;
	access_violation(r);
}

Test(sw_target, qp_access_flags)
{
	struct req q;

	atomic_store(&t.sw.access_flags, OPENRDMA_ACCESS_REMOTE_READ);
	access_violation(req(&q, OPENRDMA_WR_RDMA_WRITE, src, 8));
}

Test(sw_target, missing_permission)
{
	struct sw_key_attr attr = { .type = SW_KEY_MR,
				    .va = (uintptr_t)mem,
				    .length = LEN,
				    .access = OPENRDMA_ACCESS_REMOTE_READ,
				    .pd = &fake_pd };
	struct req q;
	struct sw_req *r = req(&q, OPENRDMA_WR_ATOMIC_FETCH_AND_ADD, src, 8);

	cr_assert_eq(sw_keymap_add(map, &attr, &r->rkey), 0);
	access_violation(r);
}

Test(sw_target, zero_length_checks_no_key)
{
	struct req q;
	struct sw_req *r = req(&q, OPENRDMA_WR_RDMA_WRITE, src, 0);

	r->rkey = 0;
	r->remote_addr = 0;
	cr_assert_eq(run(r), OPENRDMA_WC_SUCCESS);
	r->opcode = OPENRDMA_WR_RDMA_READ;
	cr_assert_eq(run(r), OPENRDMA_WC_SUCCESS);
	cr_assert_eq(sw_qp_state(&t.sw), OPENRDMA_QPS_RTS);
}

Test(sw_target, atomics)
{
	uint64_t *word = (uint64_t *)(void *)(mem + 16), orig = 0;
	struct req q;
	struct sw_req *r;

	*word = 10;
	r = req(&q, OPENRDMA_WR_ATOMIC_FETCH_AND_ADD, &orig, 8);
	r->remote_addr = (uintptr_t)word;
	r->compare_add = 5;
	cr_assert_eq(run(r), OPENRDMA_WC_SUCCESS);
	cr_assert_eq(orig, 10);
	cr_assert_eq(*word, 15);

	r = req(&q, OPENRDMA_WR_ATOMIC_CMP_AND_SWP, &orig, 8);
	r->remote_addr = (uintptr_t)word;
	r->compare_add = 14;
	r->swap = 99;
	cr_assert_eq(run(r), OPENRDMA_WC_SUCCESS);
	cr_assert_eq(orig, 15, "no swap: the value is returned");
	cr_assert_eq(*word, 15);
	r = req(&q, OPENRDMA_WR_ATOMIC_CMP_AND_SWP, &orig, 8);
	r->remote_addr = (uintptr_t)word;
	r->compare_add = 15;
	r->swap = 99;
	cr_assert_eq(run(r), OPENRDMA_WC_SUCCESS);
	cr_assert_eq(orig, 15);
	cr_assert_eq(*word, 99);
}

Test(sw_target, misaligned_atomic)
{
	uint64_t orig = 7;
	struct req q;
	struct sw_req *r = req(&q, OPENRDMA_WR_ATOMIC_FETCH_AND_ADD, &orig, 8);

	r->remote_addr = (uintptr_t)mem + 4;
	cr_assert_eq(run(r), OPENRDMA_WC_REM_INV_REQ_ERR);
	cr_assert(filled(mem, LEN, 100));
	cr_assert_eq(orig, 7);
	expect_target_err();
}

struct faa_arg {
	uint64_t *word;
	int n;
};

static void *faa_thread(void *p)
{
	struct faa_arg *a = p;
	uint64_t orig;
	struct req q;
	uint8_t timer;
	int i;

	for (i = 0; i < a->n; i++) {
		struct sw_req *r =
			req(&q, OPENRDMA_WR_ATOMIC_FETCH_AND_ADD, &orig, 8);

		r->remote_addr = (uintptr_t)a->word;
		r->compare_add = 1;
		if (sw_target_rc(&t.sw, r, &timer) != OPENRDMA_WC_SUCCESS)
			return p;
	}
	return NULL;
}

Test(sw_target, atomics_are_atomic_across_threads)
{
	uint64_t *word = (uint64_t *)(void *)(mem + 64);
	struct faa_arg a = { word, 20000 };
	pthread_t th[4];
	void *ret;
	int i;

	*word = 0;
	for (i = 0; i < 4; i++)
		cr_assert_eq(pthread_create(&th[i], NULL, faa_thread, &a), 0);
	for (i = 0; i < 4; i++) {
		pthread_join(th[i], &ret);
		cr_assert_null(ret);
	}
	cr_assert_eq(*word, 80000);
}

Test(sw_target, send_with_inv)
{
	struct sw_key_attr mwa = { .type = SW_KEY_MW2, .pd = &fake_pd };
	struct sw_key_attr mra = { .type = SW_KEY_MR,
				   .va = (uintptr_t)mem,
				   .length = LEN,
				   .access = OPENRDMA_ACCESS_LOCAL_WRITE |
					     OPENRDMA_ACCESS_MW_BIND,
				   .pd = &fake_pd };
	struct sw_bind b = { .qp_pd = &fake_pd,
			     .has_mr = true,
			     .addr = (uintptr_t)mem,
			     .length = 64,
			     .access = OPENRDMA_ACCESS_REMOTE_READ };
	struct openrdma_wc wc;
	uint32_t mw, bound;
	struct req q;
	struct sw_req *r;

	cr_assert_eq(sw_keymap_add(map, &mwa, &mw), 0);
	cr_assert_eq(sw_keymap_add(map, &mra, &b.mr_key), 0);
	b.mw_key = mw;
	b.new_key = openrdma_inc_rkey(mw);
	cr_assert_eq(sw_keymap_bind(map, &b, &bound), OPENRDMA_WC_SUCCESS);

	recv_on(&t, 1, 1024, 64);
	r = req(&q, OPENRDMA_WR_SEND_WITH_INV, src, 16);
	r->ex = bound;
	cr_assert_eq(run(r), OPENRDMA_WC_SUCCESS);
	wc = fake_poll1(&cq);
	cr_assert_eq(wc.wc_flags, OPENRDMA_WC_WITH_INV);
	cr_assert_eq(wc.invalidated_rkey, bound);
	r = req(&q, OPENRDMA_WR_RDMA_READ, src, 8);
	r->rkey = bound;
	cr_assert_eq(run(r), OPENRDMA_WC_REM_ACCESS_ERR, "key invalidated");
}

Test(sw_target, send_with_inv_of_a_key_it_cannot_invalidate)
{
	struct req q;
	struct sw_req *r = req(&q, OPENRDMA_WR_SEND_WITH_INV, src, 16);

	recv_on(&t, 1, 0, 64);
	r->ex = key; /* an MR: not invalidatable */
	cr_assert_eq(run(r), OPENRDMA_WC_REM_OP_ERR);
	cr_assert_eq(fake_poll1(&cq).status, OPENRDMA_WC_LOC_PROT_ERR);
	expect_target_err();
}

Test(sw_target, target_not_ready)
{
	struct openrdma_qp_attr attr = { .qp_state = OPENRDMA_QPS_ERR };
	struct req q;

	cr_assert_eq(sw_qp_modify(&t.sw, &attr, OPENRDMA_QP_STATE), 0);
	cr_assert_eq(run(req(&q, OPENRDMA_WR_RDMA_WRITE, src, 8)),
		     OPENRDMA_WC_RETRY_EXC_ERR);
	cr_assert(filled(mem, LEN, 100));
}

Test(sw_target, srq_receive)
{
	struct openrdma_srq_attr sa = { .max_wr = 4, .max_sge = 1 };
	struct openrdma_sge sge = { (uintptr_t)mem, 64, key };
	struct openrdma_recv_wr wr = { .wr_id = 11,
				       .sg_list = &sge,
				       .num_sge = 1 };
	struct openrdma_recv_wr *bad;
	struct openrdma_srq srq = { .obj.ctx = &fake_ctx };
	struct sw_srq ssrq;
	struct openrdma_wc wc;
	struct fake_qp s;
	struct req q;
	uint8_t timer;

	cr_assert_eq(sw_srq_init(&ssrq, &srq, &sa), 0);
	fake_qp_init(&s, OPENRDMA_QPT_RC, map, &cq, &ssrq, 4, 1);
	fake_qp_to(&s, OPENRDMA_QPS_RTS);
	cr_assert_eq(sw_srq_post_recv(&ssrq, &wr, &bad), 0);
	cr_assert_eq(sw_target_rc(&s.sw, req(&q, OPENRDMA_WR_SEND, src, 20),
				  &timer),
		     OPENRDMA_WC_SUCCESS);
	wc = fake_poll1(&cq);
	cr_assert_eq(wc.wr_id, 11);
	cr_assert_eq(wc.qp_num, s.qp.qp_num, "the QP that took it");
	cr_assert(filled(mem, 20, 1));
	fake_qp_fini(&s);
	sw_srq_fini(&ssrq);
}

Test(sw_target, ud_delivery)
{
	struct openrdma_grh grh;
	struct openrdma_wc wc;
	struct fake_qp u;
	struct req q;
	struct sw_req *r;

	fake_qp_init(&u, OPENRDMA_QPT_UD, map, &cq, NULL, 4, 2);
	fake_qp_to(&u, OPENRDMA_QPS_RTS); /* qkey 0x1234 */
	r = req(&q, OPENRDMA_WR_SEND_WITH_IMM, src, 100);
	r->qkey = 0x1234;
	r->slid = 3;
	r->ex = htonl(5);
	memset(&r->sgid, 0x11, sizeof(r->sgid));
	memset(&r->dgid, 0x22, sizeof(r->dgid));

	cr_assert_eq(sw_target_ud(&u.sw, r), -OPENRDMA_EAGAIN,
		     "no receive: dropped");
	recv_on(&u, 1, 0, OPENRDMA_GRH_LEN + 99);
	cr_assert_eq(sw_target_ud(&u.sw, r), -OPENRDMA_EMSGSIZE);
	wc = fake_poll1(&cq);
	cr_assert_eq(wc.status, OPENRDMA_WC_LOC_LEN_ERR);
	cr_assert_eq(sw_qp_state(&u.sw), OPENRDMA_QPS_RTS, "UD stays in RTS");

	recv_on(&u, 2, 0, OPENRDMA_GRH_LEN + 100);
	r->qkey = 0x4321;
	cr_assert_eq(sw_target_ud(&u.sw, r), -OPENRDMA_EPERM, "Q_Key");
	r->qkey = 0x1234;
	cr_assert_eq(sw_target_ud(&u.sw, r), 0);
	wc = fake_poll1(&cq);
	cr_assert_eq(wc.wr_id, 2);
	cr_assert_eq(wc.byte_len, OPENRDMA_GRH_LEN + 100);
	cr_assert_eq(wc.wc_flags, OPENRDMA_WC_GRH | OPENRDMA_WC_WITH_IMM);
	cr_assert_eq(wc.src_qp, 77);
	cr_assert_eq(wc.slid, 3);
	memcpy(&grh, mem, sizeof(grh));
	cr_assert_eq(ntohl(grh.version_tclass_flow) >> 28, 6);
	cr_assert_eq(grh.sgid.raw[0], 0x11);
	cr_assert_eq(grh.dgid.raw[15], 0x22);
	cr_assert(filled(mem + OPENRDMA_GRH_LEN, 100, 1));
	fake_qp_fini(&u);
}
