/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Software work queues through sw_qp: post-state rules, malformed and
 * full posts, flush order, reset, unsignaled requests, inline copies, RNR
 * retries and the QP state effects of errors.
 */
#include <criterion/criterion.h>
#include <string.h>
#include <time.h>

#include "core/sw/timer.h"
#include "tests/unit/test_sw_fake.h"

#define WR 8
/* an RNR timer long enough to hold requests queued for a test: 491 ms */
#define HOLD 31

static struct sw_keymap *map;
static struct fake_cq cq;
static struct fake_qp q;
static uint8_t buf[8192];
static uint32_t lkey;

static void setup(void)
{
	struct sw_key_attr attr = {
		.type = SW_KEY_MR,
		.va = (uintptr_t)buf,
		.length = sizeof(buf),
		.access = OPENRDMA_ACCESS_LOCAL_WRITE,
		.pd = &fake_pd,
	};

	fake_reset();
	cr_assert_eq(sw_keymap_create(&map), 0);
	cr_assert_eq(sw_keymap_add(map, &attr, &lkey), 0);
	fake_cq_init(&cq, 64);
	fake_qp_init(&q, OPENRDMA_QPT_RC, map, &cq, NULL, WR, 2);
}

static void teardown(void)
{
	fake_qp_fini(&q);
	fake_cq_fini(&cq);
	sw_keymap_destroy(map);
}

TestSuite(sw_queue, .init = setup, .fini = teardown);

static struct openrdma_sge sge = { 0, 16, 0 };

static int post_send_on(struct fake_qp *fq, uint64_t wr_id, unsigned int flags)
{
	struct openrdma_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = OPENRDMA_WR_SEND,
		.send_flags = flags,
	};
	struct openrdma_send_wr *bad = NULL;

	sge.addr = (uintptr_t)buf;
	sge.lkey = lkey;
	return sw_qp_post_send(&fq->sw, &wr, &bad);
}

static int post_send(uint64_t wr_id, unsigned int flags)
{
	return post_send_on(&q, wr_id, flags);
}

static int post_recv(uint64_t wr_id)
{
	struct openrdma_sge rs = { (uintptr_t)buf, 64, lkey };
	struct openrdma_recv_wr wr = { .wr_id = wr_id,
				       .sg_list = &rs,
				       .num_sge = 1 };
	struct openrdma_recv_wr *bad = NULL;

	return sw_qp_post_recv(&q.sw, &wr, &bad);
}

static void modify_state(enum openrdma_qp_state state)
{
	struct openrdma_qp_attr attr = { .qp_state = state };

	cr_assert_eq(sw_qp_modify(&q.sw, &attr, OPENRDMA_QP_STATE), 0);
	atomic_store(&q.qp.state, (int)state);
}

static void expect_wc(uint64_t wr_id, enum openrdma_wc_status status)
{
	struct openrdma_wc wc = fake_poll1(&cq);

	cr_assert_eq(wc.wr_id, wr_id, "completion of %llu, want %llu",
		     (unsigned long long)wc.wr_id, (unsigned long long)wr_id);
	cr_assert_eq(wc.status, status, "wr %llu: %s, want %s",
		     (unsigned long long)wr_id,
		     openrdma_wc_status_str(wc.status),
		     openrdma_wc_status_str(status));
	cr_assert_eq(wc.qp_num, q.qp.qp_num);
}

Test(sw_queue, post_state_rules)
{
	struct openrdma_send_wr wr = { .opcode = OPENRDMA_WR_SEND };
	struct openrdma_send_wr *bad = NULL;

	cr_assert_eq(sw_qp_post_send(&q.sw, &wr, &bad), -OPENRDMA_EINVAL);
	cr_assert_eq(bad, &wr);
	cr_assert_eq(post_recv(1), -OPENRDMA_EINVAL, "receives in RESET");
	fake_qp_to(&q, OPENRDMA_QPS_INIT);
	cr_assert_eq(post_recv(1), 0);
	cr_assert_eq(post_send(2, 0), -OPENRDMA_EINVAL, "sends in INIT");
	fake_qp_to(&q, OPENRDMA_QPS_RTR);
	cr_assert_eq(post_send(2, 0), -OPENRDMA_EINVAL, "sends in RTR");
	fake_qp_to(&q, OPENRDMA_QPS_RTS);
	cr_assert_eq(post_send(2, OPENRDMA_SEND_SIGNALED), 0);
	cr_assert_eq(q.executed, 1, "executed at post time");
	expect_wc(2, OPENRDMA_WC_SUCCESS);
}

Test(sw_queue, malformed_request_stops_the_list)
{
	struct openrdma_sge s[3] = { 0 };
	struct openrdma_send_wr wr[3], *bad = NULL;
	int i;

	fake_qp_to(&q, OPENRDMA_QPS_RTS);
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 3; i++) {
		wr[i].wr_id = (uint64_t)i;
		wr[i].opcode = OPENRDMA_WR_SEND;
		wr[i].send_flags = OPENRDMA_SEND_SIGNALED;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	wr[1].sg_list = s;
	wr[1].num_sge = 3; /* more than the 2 granted */
	cr_assert_eq(sw_qp_post_send(&q.sw, wr, &bad), -OPENRDMA_EINVAL);
	cr_assert_eq(bad, &wr[1]);
	expect_wc(0, OPENRDMA_WC_SUCCESS);
	fake_poll0(&cq);

	/* an INLINE flag on a read does not lift the SGE limit */
	wr[1].opcode = OPENRDMA_WR_RDMA_READ;
	wr[1].send_flags = OPENRDMA_SEND_INLINE;
	wr[1].next = NULL;
	cr_assert_eq(sw_qp_post_send(&q.sw, &wr[1], &bad), -OPENRDMA_EINVAL);
	/* nor the 8 bytes of an atomic */
	wr[1].opcode = OPENRDMA_WR_ATOMIC_FETCH_AND_ADD;
	wr[1].num_sge = 1;
	s[0].length = 4;
	cr_assert_eq(sw_qp_post_send(&q.sw, &wr[1], &bad), -OPENRDMA_EINVAL);
	/* the type 1 bind mark is for BIND_MW only */
	wr[1].opcode = OPENRDMA_WR_SEND;
	wr[1].num_sge = 0;
	wr[1].send_flags = OPENRDMA_SEND_TYPE1_BIND;
	cr_assert_eq(sw_qp_post_send(&q.sw, &wr[1], &bad), -OPENRDMA_EINVAL);
}

Test(sw_queue, full_queue_then_flush_in_order)
{
	int i;

	fake_qp_to(&q, OPENRDMA_QPS_INIT);
	for (i = 0; i < 3; i++)
		cr_assert_eq(post_recv(100 + (uint64_t)i), 0);
	fake_qp_to(&q, OPENRDMA_QPS_RTS);
	/* the peer has no receive, forever: requests stay queued */
	atomic_store(&q.sw.rnr_retry, SW_RNR_RETRY_INFINITE);
	q.next_status = SW_EXEC_RNR;
	q.rnr_timer = HOLD;
	for (i = 0; i < WR; i++)
		cr_assert_eq(post_send((uint64_t)i,
				       i % 2 ? OPENRDMA_SEND_SIGNALED : 0),
			     0);
	cr_assert_eq(q.executed, 1, "only the head runs; the rest wait");
	cr_assert_neq(q.scheduled, 0, "an RNR retry is scheduled");
	cr_assert_eq(post_send(99, 0), -OPENRDMA_ENOMEM);
	fake_poll0(&cq);

	modify_state(OPENRDMA_QPS_ERR);
	cr_assert_eq(fake.num_state_set, 0,
		     "the core changes the state of a modify itself");
	/* every one completes, signaled or not, receives first as flushed
	 * by the modify, each queue in order */
	for (i = 0; i < 3; i++)
		expect_wc(100 + (uint64_t)i, OPENRDMA_WC_WR_FLUSH_ERR);
	for (i = 0; i < WR; i++)
		expect_wc((uint64_t)i, OPENRDMA_WC_WR_FLUSH_ERR);
	fake_poll0(&cq);
	cr_assert_eq(fake.num_events, 0);

	/* posts in ERR are accepted and flushed */
	cr_assert_eq(post_send(50, 0), 0);
	expect_wc(50, OPENRDMA_WC_WR_FLUSH_ERR);
	cr_assert_eq(post_recv(51), 0);
	expect_wc(51, OPENRDMA_WC_WR_FLUSH_ERR);
}

Test(sw_queue, reset_drops_without_completions)
{
	int i;

	fake_qp_to(&q, OPENRDMA_QPS_INIT);
	cr_assert_eq(post_recv(100), 0);
	fake_qp_to(&q, OPENRDMA_QPS_RTS);
	atomic_store(&q.sw.rnr_retry, SW_RNR_RETRY_INFINITE);
	q.next_status = SW_EXEC_RNR;
	q.rnr_timer = HOLD;
	for (i = 0; i < 4; i++)
		cr_assert_eq(post_send((uint64_t)i, OPENRDMA_SEND_SIGNALED), 0);
	modify_state(OPENRDMA_QPS_RESET);
	fake_poll0(&cq);
	cr_assert_eq(post_recv(1), -OPENRDMA_EINVAL);

	/* back up: the queues are empty and whole again */
	q.next_status = OPENRDMA_WC_SUCCESS;
	fake_qp_to(&q, OPENRDMA_QPS_RTS);
	for (i = 0; i < WR; i++)
		cr_assert_eq(
			post_send(10 + (uint64_t)i, OPENRDMA_SEND_SIGNALED), 0);
	for (i = 0; i < WR; i++)
		expect_wc(10 + (uint64_t)i, OPENRDMA_WC_SUCCESS);
}

Test(sw_queue, unsignaled_requests)
{
	int i;

	fake_qp_to(&q, OPENRDMA_QPS_RTS);
	/* successes without SIGNALED leave no completion and no slot */
	for (i = 0; i < 3 * WR; i++)
		cr_assert_eq(post_send((uint64_t)i, 0), 0);
	fake_poll0(&cq);
	cr_assert_eq(post_send(100, OPENRDMA_SEND_SIGNALED), 0);
	expect_wc(100, OPENRDMA_WC_SUCCESS);

	/* sq_sig_all signals everything */
	q.qp.sq_sig_all = 1;
	cr_assert_eq(post_send(101, 0), 0);
	expect_wc(101, OPENRDMA_WC_SUCCESS);
	q.qp.sq_sig_all = 0;

	/* a failure always completes, and the QP goes to ERR */
	q.next_status = OPENRDMA_WC_REM_ACCESS_ERR;
	cr_assert_eq(post_send(102, 0), 0);
	expect_wc(102, OPENRDMA_WC_REM_ACCESS_ERR);
	cr_assert_eq(sw_qp_state(&q.sw), OPENRDMA_QPS_ERR);
	cr_assert_eq(atomic_load(&q.qp.state), OPENRDMA_QPS_ERR,
		     "the core is told");
	cr_assert_eq(fake.num_events, 0, "an initiator error has no event");
}

Test(sw_queue, error_flushes_what_follows)
{
	struct openrdma_send_wr wr[3], *bad;
	int i, n = 0;

	fake_qp_to(&q, OPENRDMA_QPS_INIT);
	cr_assert_eq(post_recv(100), 0);
	fake_qp_to(&q, OPENRDMA_QPS_RTS);
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 3; i++) {
		wr[i].wr_id = (uint64_t)i;
		wr[i].opcode = OPENRDMA_WR_RDMA_WRITE;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	/* the first has a bad local key: LOC_PROT_ERR, not executed */
	sge.addr = (uintptr_t)buf;
	sge.lkey = lkey ^ 0x100;
	wr[0].sg_list = &sge;
	wr[0].num_sge = 1;
	cr_assert_eq(sw_qp_post_send(&q.sw, wr, &bad), 0);
	cr_assert_eq(q.executed, 0);
	expect_wc(0, OPENRDMA_WC_LOC_PROT_ERR);
	/* then the rest of each queue, in order (the two queues share the
	 * CQ; their relative order is not defined) */
	for (i = 0; i < 3; i++) {
		struct openrdma_wc wc = fake_poll1(&cq);

		cr_assert_eq(wc.status, OPENRDMA_WC_WR_FLUSH_ERR);
		if (wc.wr_id == 100)
			continue;
		cr_assert_eq(wc.wr_id, (uint64_t)++n,
			     "send flushed out of order");
	}
	cr_assert_eq(n, 2);
	fake_poll0(&cq);
}

Test(sw_queue, message_size_limit)
{
	struct openrdma_sge big = { (uintptr_t)buf, 4097, 0 };
	struct openrdma_send_wr wr = { .wr_id = 1,
				       .sg_list = &big,
				       .num_sge = 1,
				       .opcode = OPENRDMA_WR_SEND };
	struct openrdma_send_wr *bad;
	struct openrdma_ah ah;
	struct fake_qp ud;

	/* UD: LOC_LEN_ERR and the QP stays in RTS */
	fake_qp_init(&ud, OPENRDMA_QPT_UD, map, &cq, NULL, WR, 2);
	fake_qp_to(&ud, OPENRDMA_QPS_RTS);
	big.lkey = lkey;
	wr.wr.ud.ah = &ah;
	cr_assert_eq(sw_qp_post_send(&ud.sw, &wr, &bad), 0);
	cr_assert_eq(ud.executed, 0);
	cr_assert_eq(fake_poll1(&cq).status, OPENRDMA_WC_LOC_LEN_ERR);
	cr_assert_eq(sw_qp_state(&ud.sw), OPENRDMA_QPS_RTS);
	big.length = 4096;
	wr.send_flags = OPENRDMA_SEND_SIGNALED;
	cr_assert_eq(sw_qp_post_send(&ud.sw, &wr, &bad), 0);
	cr_assert_eq(fake_poll1(&cq).status, OPENRDMA_WC_SUCCESS);
	fake_qp_fini(&ud);
}

Test(sw_queue, inline_data_is_copied_at_post)
{
	char msg[] = "inline!";
	struct openrdma_sge s = { (uintptr_t)msg, sizeof(msg), 0 };
	struct openrdma_send_wr wr = { .wr_id = 1,
				       .sg_list = &s,
				       .num_sge = 1,
				       .opcode = OPENRDMA_WR_SEND,
				       .send_flags = OPENRDMA_SEND_INLINE };
	struct openrdma_send_wr *bad;
	struct sw_send_wqe *w;

	fake_qp_to(&q, OPENRDMA_QPS_RTS);
	q.next_status = SW_EXEC_RNR; /* keep it queued to look at it */
	q.rnr_timer = HOLD;
	cr_assert_eq(sw_qp_post_send(&q.sw, &wr, &bad), 0);
	memset(msg, 'x', sizeof(msg));
	w = sw_sq_head_locked(&q.sw.sq);
	cr_assert_not_null(w);
	cr_assert(w->is_inline);
	cr_assert_eq(w->inline_len, 8);
	cr_assert_str_eq((char *)w->inline_data, "inline!");
	/* longer than granted: refused at post */
	s.length = 65;
	cr_assert_eq(sw_qp_post_send(&q.sw, &wr, &bad), -OPENRDMA_EINVAL);
}

static void sleep_until(uint64_t deadline)
{
	struct timespec ts = { 0, 100000 };

	while (sw_now_ns() < deadline)
		nanosleep(&ts, NULL);
}

Test(sw_queue, rnr_retries_then_fails)
{
	uint64_t first;

	fake_qp_to(&q, OPENRDMA_QPS_RTS); /* rnr_retry 2, timer 1 */
	q.next_status = SW_EXEC_RNR;
	cr_assert_eq(post_send(1, 0), 0);
	cr_assert_eq(q.executed, 1);
	first = q.scheduled;
	cr_assert_gt(first, 0);
	/* too early: nothing runs, the deadline is asked for again */
	q.scheduled = 0;
	sw_qp_progress(&q.sw);
	if (sw_now_ns() < first) {
		cr_assert_eq(q.executed, 1);
		cr_assert_eq(q.scheduled, first);
	}
	sleep_until(first);
	sw_qp_progress(&q.sw);
	cr_assert_eq(q.executed, 2);
	sleep_until(q.scheduled);
	sw_qp_progress(&q.sw);
	cr_assert_eq(q.executed, 3, "1 try + rnr_retry 2");
	expect_wc(1, OPENRDMA_WC_RNR_RETRY_EXC_ERR);
	cr_assert_eq(sw_qp_state(&q.sw), OPENRDMA_QPS_ERR);
}

Test(sw_queue, rnr_then_success)
{
	fake_qp_to(&q, OPENRDMA_QPS_RTS);
	q.next_status = SW_EXEC_RNR;
	/* 20.48 ms: the second post comes before the retry is due, however
	 * slow the run (10 us was not, under ThreadSanitizer on a busy
	 * host: the second post retried the first, a fourth execution) */
	q.rnr_timer = 22;
	cr_assert_eq(post_send(1, OPENRDMA_SEND_SIGNALED), 0);
	cr_assert_eq(post_send(2, OPENRDMA_SEND_SIGNALED), 0);
	fake_poll0(&cq);
	q.next_status = OPENRDMA_WC_SUCCESS;
	sleep_until(q.scheduled);
	sw_qp_progress(&q.sw);
	expect_wc(1, OPENRDMA_WC_SUCCESS);
	expect_wc(2, OPENRDMA_WC_SUCCESS);
	cr_assert_eq(q.executed, 3, "executed %d", q.executed);
}

Test(sw_queue, rnr_delay_encoding)
{
	cr_assert_eq(sw_rnr_delay_ns(1), 10000);
	cr_assert_eq(sw_rnr_delay_ns(12), 640000);
	cr_assert_eq(sw_rnr_delay_ns(31), 491520000);
	cr_assert_eq(sw_rnr_delay_ns(0), 655360000, "0 is the longest");
}

Test(sw_queue, cq_overrun_moves_qp_to_err)
{
	struct openrdma_wc wc[4];
	struct fake_cq small;
	struct fake_qp o;

	fake_cq_init(&small, 2);
	fake_qp_init(&o, OPENRDMA_QPT_RC, map, &small, NULL, WR, 2);
	fake_qp_to(&o, OPENRDMA_QPS_RTS);
	cr_assert_eq(post_send_on(&o, 1, OPENRDMA_SEND_SIGNALED), 0);
	cr_assert_eq(post_send_on(&o, 2, OPENRDMA_SEND_SIGNALED), 0);
	cr_assert_eq(post_send_on(&o, 3, OPENRDMA_SEND_SIGNALED), 0);
	cr_assert_eq(sw_qp_state(&o.sw), OPENRDMA_QPS_ERR);
	cr_assert_eq(fake_events(OPENRDMA_EVENT_CQ_ERR), 1);
	cr_assert_eq(fake_events(OPENRDMA_EVENT_QP_FATAL), 1);
	cr_assert_eq(sw_cq_poll(&small.sw, 4, wc), 2);
	cr_assert_eq(sw_cq_poll(&small.sw, 4, wc), -OPENRDMA_EOVERFLOW);
	fake_qp_fini(&o);
	fake_cq_fini(&small);
}

static void resize(uint32_t wr, uint32_t nsge, int expect)
{
	struct openrdma_qp_attr attr = { .cap = { .max_send_wr = wr,
						  .max_recv_wr = wr,
						  .max_send_sge = nsge,
						  .max_recv_sge = nsge,
						  .max_inline_data = 64 } };

	cr_assert_eq(sw_qp_modify(&q.sw, &attr, OPENRDMA_QP_CAP), expect);
	if (!expect)
		cr_assert_eq(attr.cap.max_send_wr, wr, "granted as asked");
}

Test(sw_queue, resize_keeps_what_is_queued)
{
	struct openrdma_qp_attr attr;
	struct openrdma_qp_init_attr init;
	int i;

	fake_qp_to(&q, OPENRDMA_QPS_INIT);
	for (i = 0; i < 6; i++)
		cr_assert_eq(post_recv(100 + (uint64_t)i), 0);
	resize(4, 2, -OPENRDMA_EINVAL); /* 6 receives do not fit */
	resize(16, 0, -OPENRDMA_EINVAL); /* their SGEs do not either */
	resize(16, 1, 0);
	sw_qp_query(&q.sw, &attr, &init);
	cr_assert_eq(attr.cap.max_recv_wr, 16);
	for (i = 6; i < 16; i++)
		cr_assert_eq(post_recv(100 + (uint64_t)i), 0);
	cr_assert_eq(post_recv(200), -OPENRDMA_ENOMEM);

	/* sends held by RNR move too, and still run in order */
	fake_qp_to(&q, OPENRDMA_QPS_RTS);
	atomic_store(&q.sw.rnr_retry, SW_RNR_RETRY_INFINITE);
	q.next_status = SW_EXEC_RNR;
	q.rnr_timer = HOLD;
	for (i = 0; i < 3; i++)
		cr_assert_eq(post_send((uint64_t)i, OPENRDMA_SEND_SIGNALED), 0);
	resize(2, 1, -OPENRDMA_EINVAL);
	resize(32, 1, 0);
	modify_state(OPENRDMA_QPS_ERR);
	for (i = 0; i < 16; i++)
		expect_wc(100 + (uint64_t)i, OPENRDMA_WC_WR_FLUSH_ERR);
	for (i = 0; i < 3; i++)
		expect_wc((uint64_t)i, OPENRDMA_WC_WR_FLUSH_ERR);
}
