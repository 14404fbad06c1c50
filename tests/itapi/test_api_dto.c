/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Data transfer on connected RC endpoints: send and receive, RDMA write
 * and read, both atomics, completion suppression, flushes, and the
 * argument checks of every post call.
 */
#include <poll.h>
#include <string.h>
#include <criterion/criterion.h>

#include "tests/itapi/test_api.h"

TestSuite(itapi_dto, .timeout = 60);

static struct tapi t;
static struct tapi_conn c;

static void conn_setup(void)
{
	tapi_open(&t);
	tapi_connect(&t, &c, false);
}

static void conn_teardown(void)
{
	tapi_close(&t);
}

Test(itapi_dto, send_recv, .init = conn_setup, .fini = conn_teardown)
{
	struct tapi_buf src, dst;
	it_lmr_triplet_t seg[2];
	it_event_t ev;
	int i;

	tapi_buf_make(&t, &src, 4096, IT_PRIV_LOCAL);
	tapi_buf_make(&t, &dst, 4096, IT_PRIV_LOCAL);
	for (i = 0; i < 4096; i++)
		src.p[i] = (unsigned char)(i * 7);
	tapi_post_recv(c.b, &dst, 0, 4096, 0x1234);

	/* two segments gather into one message */
	seg[0] = tapi_seg(&src, 0, 1000);
	seg[1] = tapi_seg(&src, 1000, 3096);
	cr_assert_eq(it_post_send(c.a, seg, 2, 0xabcd, IT_COMPLETION_FLAG),
		     IT_SUCCESS);
	tapi_wait(t.sq, IT_DTO_SEND_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.ep, c.a);
	cr_assert_eq(ev.dto_cmpl.cookie, 0xabcd);
	cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_SUCCESS);
	cr_assert_eq(ev.dto_cmpl.transferred_length, 4096);
	tapi_wait(t.rq, IT_DTO_RC_RECV_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.ep, c.b);
	cr_assert_eq(ev.dto_cmpl.cookie, 0x1234);
	cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_SUCCESS);
	cr_assert_eq(ev.dto_cmpl.transferred_length, 4096);
	cr_assert_arr_eq(dst.p, src.p, 4096);
}

Test(itapi_dto, suppressed_completion, .init = conn_setup,
     .fini = conn_teardown)
{
	struct tapi_buf src, dst;
	it_lmr_triplet_t seg;
	it_event_t ev;

	tapi_buf_make(&t, &src, 64, IT_PRIV_LOCAL);
	tapi_buf_make(&t, &dst, 128, IT_PRIV_LOCAL);
	tapi_post_recv(c.b, &dst, 0, 64, 1);
	tapi_post_recv(c.b, &dst, 64, 64, 2);
	seg = tapi_seg(&src, 0, 64);
	/* without IT_COMPLETION_FLAG a successful send reports nothing */
	cr_assert_eq(it_post_send(c.a, &seg, 1, 10, 0), IT_SUCCESS);
	cr_assert_eq(it_post_send(c.a, &seg, 1, 11, IT_COMPLETION_FLAG),
		     IT_SUCCESS);
	tapi_wait(t.sq, IT_DTO_SEND_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.cookie, 11);
	cr_assert_eq(it_evd_dequeue(t.sq, &ev), IT_ERR_QUEUE_EMPTY);
	/* receives always complete, in order */
	tapi_wait(t.rq, IT_DTO_RC_RECV_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.cookie, 1);
	tapi_wait(t.rq, IT_DTO_RC_RECV_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.cookie, 2);
}

Test(itapi_dto, rdma_write_read, .init = conn_setup, .fini = conn_teardown)
{
	struct tapi_buf local, remote, back;
	it_lmr_triplet_t seg;
	it_event_t ev;
	int i;

	tapi_buf_make(&t, &local, 8192, IT_PRIV_LOCAL);
	tapi_buf_make(&t, &remote, 8192, IT_PRIV_ALL);
	tapi_buf_make(&t, &back, 8192, IT_PRIV_LOCAL);
	for (i = 0; i < 8192; i++)
		local.p[i] = (unsigned char)(i ^ 0x5a);

	seg = tapi_seg(&local, 0, 8192);
	cr_assert_eq(it_post_rdma_write(c.a, &seg, 1, 21, IT_COMPLETION_FLAG,
					it_make_rdma_addr_absolute(remote.p),
					remote.rkey),
		     IT_SUCCESS);
	tapi_wait(t.sq, IT_DTO_RDMA_WRITE_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.cookie, 21);
	cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_SUCCESS);
	cr_assert_eq(ev.dto_cmpl.transferred_length, 8192);
	cr_assert_arr_eq(remote.p, local.p, 8192);

	seg = tapi_seg(&back, 0, 8192);
	cr_assert_eq(it_post_rdma_read(c.a, &seg, 1, 22, IT_COMPLETION_FLAG,
				       it_make_rdma_addr_absolute(remote.p),
				       remote.rkey),
		     IT_SUCCESS);
	tapi_wait(t.sq, IT_DTO_RDMA_READ_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.cookie, 22);
	cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_SUCCESS);
	cr_assert_arr_eq(back.p, local.p, 8192);
}

Test(itapi_dto, rdma_write_bad_key, .init = conn_setup, .fini = conn_teardown)
{
	static const unsigned char zero[64];
	struct tapi_buf local, remote;
	it_evd_handle_t aff;
	it_lmr_triplet_t seg;
	it_event_t ev;

	cr_assert_eq(it_evd_create(t.ia, IT_ASYNC_AFF_EVENT_STREAM, 0, 8, 0,
				   NULL, &aff, NULL),
		     IT_SUCCESS);
	tapi_buf_make(&t, &local, 64, IT_PRIV_LOCAL);
	/* no remote privileges: the access fails at the target */
	tapi_buf_make(&t, &remote, 64, IT_PRIV_LOCAL);
	memset(local.p, 0x5a, 64);
	memset(remote.p, 0, 64);
	seg = tapi_seg(&local, 0, 64);
	cr_assert_eq(it_post_rdma_write(c.a, &seg, 1, 31, IT_COMPLETION_FLAG,
					it_make_rdma_addr_absolute(remote.p),
					remote.rkey),
		     IT_SUCCESS);
	tapi_wait_write_refused(&t, c.a, 31);
	cr_assert_arr_eq(remote.p, zero, sizeof(zero),
			 "the refused write landed");
	/* the target endpoint hears of the violation */
	tapi_wait(aff, IT_ASYNC_AFF_EP_R_ACCESS_VIOLATION, &ev);
	cr_assert_eq(ev.aff_async.cause.ep, c.b);
}

Test(itapi_dto, fd_of_completions)
{
	it_ep_attributes_t a;
	it_ep_handle_t active;
	struct tapi_buf src, dst;
	it_lmr_triplet_t seg;
	struct pollfd pfd;
	it_evd_handle_t sq;
	it_event_t ev;
	int fd = -1;

	tapi_open(&t);
	a = tapi_rc_attr();
	/* completions reach an SEVD with an fd without a dequeue */
	cr_assert_eq(it_evd_create(t.ia, IT_DTO_EVENT_STREAM, IT_EVD_CREATE_FD,
				   16, 0, NULL, &sq, &fd),
		     IT_SUCCESS);
	a.srv.rc.atomics_enable = IT_FALSE;
	cr_assert_eq(it_ep_rc_create(t.pz, sq, t.rq, t.cmsg, 0, &a, &active),
		     IT_SUCCESS);
	c.a = active;
	c.b = tapi_rc_ep(&t);
	tapi_connect_eps(&t, &c, false);

	tapi_buf_make(&t, &src, 64, IT_PRIV_LOCAL);
	tapi_buf_make(&t, &dst, 64, IT_PRIV_ALL);
	seg = tapi_seg(&src, 0, 64);
	pfd.fd = fd;
	pfd.events = POLLIN;
	cr_assert_eq(poll(&pfd, 1, 0), 0);
	cr_assert_eq(it_post_rdma_write(active, &seg, 1, 7, IT_COMPLETION_FLAG,
					it_make_rdma_addr_absolute(dst.p),
					dst.rkey),
		     IT_SUCCESS);
	cr_assert_eq(poll(&pfd, 1, 5000), 1);
	cr_assert_eq(it_evd_dequeue(sq, &ev), IT_SUCCESS);
	cr_assert_eq(ev.event_number, IT_DTO_RDMA_WRITE_CMPL_EVENT);
	cr_assert_eq(ev.dto_cmpl.cookie, 7);
	cr_assert_eq(poll(&pfd, 1, 0), 0);
	/* unreported requests leave the fd alone */
	cr_assert_eq(it_post_rdma_write(active, &seg, 1, 8, 0,
					it_make_rdma_addr_absolute(dst.p),
					dst.rkey),
		     IT_SUCCESS);
	cr_assert_eq(poll(&pfd, 1, 50), 0);
	tapi_close(&t);
}

Test(itapi_dto, unsignaled_slots_come_back, .init = conn_setup,
     .fini = conn_teardown)
{
	struct tapi_buf local, remote;
	it_lmr_triplet_t seg;
	it_event_t ev;
	int i, full = 0;

	tapi_buf_make(&t, &local, 8, IT_PRIV_LOCAL);
	tapi_buf_make(&t, &remote, 8, IT_PRIV_ALL);
	seg = tapi_seg(&local, 0, 8);
	/* many more unreported writes than the queue holds: the consumer
	 * only has to look at the request SEVD now and then */
	for (i = 0; i < 1000; i++) {
		it_status_t st =
			it_post_rdma_write(c.a, &seg, 1, (it_dto_cookie_t)i, 0,
					   it_make_rdma_addr_absolute(remote.p),
					   remote.rkey);

		if (st == IT_ERR_TOO_MANY_POSTS) {
			/* nothing to report: the wait only retires slots */
			cr_assert_eq(it_evd_wait(t.sq, 1000, &ev, NULL),
				     IT_ERR_TIMEOUT_EXPIRED);
			i--;
			cr_assert_lt(++full, 10000);
			continue;
		}
		cr_assert_eq(st, IT_SUCCESS);
	}
	cr_assert_eq(it_evd_dequeue(t.sq, &ev), IT_ERR_QUEUE_EMPTY);
}

Test(itapi_dto, atomics, .init = conn_setup, .fini = conn_teardown)
{
	struct tapi_buf target, result;
	it_lmr_triplet_t seg;
	uint64_t *value, *old;
	it_event_t ev;

	tapi_require(t.info->atomic_support, "atomics");
	tapi_buf_make(&t, &target, 8, IT_PRIV_ALL);
	tapi_buf_make(&t, &result, 8, IT_PRIV_LOCAL);
	value = (uint64_t *)target.p;
	old = (uint64_t *)result.p;
	*value = 100;
	seg = tapi_seg(&result, 0, 8);

	cr_assert_eq(it_post_atomic(c.a, IT_FETCH_AND_ADD, 5, 0, &seg, 41,
				    IT_COMPLETION_FLAG,
				    it_make_rdma_addr_absolute(target.p),
				    target.rkey),
		     IT_SUCCESS);
	tapi_wait(t.sq, IT_DTO_FETCH_ADD_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_SUCCESS);
	cr_assert_eq(*old, 100);
	cr_assert_eq(*value, 105);

	/* compare fails: nothing swapped, the old value comes back */
	cr_assert_eq(it_post_atomic(c.a, IT_COMPARE_AND_SWAP, 7, 1, &seg, 42,
				    IT_COMPLETION_FLAG,
				    it_make_rdma_addr_absolute(target.p),
				    target.rkey),
		     IT_SUCCESS);
	tapi_wait(t.sq, IT_DTO_CMP_SWAP_CMPL_EVENT, &ev);
	cr_assert_eq(*old, 105);
	cr_assert_eq(*value, 105);
	cr_assert_eq(it_post_atomic(c.a, IT_COMPARE_AND_SWAP, 7, 105, &seg, 43,
				    IT_COMPLETION_FLAG,
				    it_make_rdma_addr_absolute(target.p),
				    target.rkey),
		     IT_SUCCESS);
	tapi_wait(t.sq, IT_DTO_CMP_SWAP_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.cookie, 43);
	cr_assert_eq(*old, 105);
	cr_assert_eq(*value, 7);
}

Test(itapi_dto, relative_addressing, .init = conn_setup, .fini = conn_teardown)
{
	struct tapi_buf local;
	it_lmr_triplet_t seg;
	it_lmr_handle_t rel;
	it_rmr_context_t key;
	/* a verbs device's offset 0 is a page boundary (it_lmr(3)) */
	static _Alignas(4096) unsigned char remote[256];
	it_event_t ev;

	tapi_require(t.info->addr_mode_relative_support, "relative addresses");
	tapi_buf_make(&t, &local, 256, IT_PRIV_LOCAL);
	memset(local.p, 0x77, 256);
	memset(remote, 0, sizeof(remote));
	cr_assert_eq(it_lmr_create20(t.pz, remote, sizeof(remote),
				     IT_ADDR_MODE_RELATIVE, IT_PRIV_ALL, 0, 0,
				     &rel, &key),
		     IT_SUCCESS);
	/* the peer addresses the region by offset */
	seg = tapi_seg(&local, 0, 16);
	cr_assert_eq(it_post_rdma_write(c.a, &seg, 1, 51, IT_COMPLETION_FLAG,
					it_make_rdma_addr_relative(100), key),
		     IT_SUCCESS);
	tapi_wait(t.sq, IT_DTO_RDMA_WRITE_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_SUCCESS);
	cr_assert_eq(remote[99], 0);
	cr_assert_eq(remote[100], 0x77);
	cr_assert_eq(remote[115], 0x77);
	cr_assert_eq(remote[116], 0);
	cr_assert_eq(it_lmr_free(rel), IT_SUCCESS);
}

Test(itapi_dto, flush_after_disconnect, .init = conn_setup,
     .fini = conn_teardown)
{
	struct tapi_buf dst;
	it_event_t ev;

	tapi_buf_make(&t, &dst, 64, IT_PRIV_LOCAL);
	tapi_post_recv(c.b, &dst, 0, 64, 61);
	tapi_disconnect(&t, &c);
	tapi_wait(t.rq, IT_DTO_RC_RECV_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.cookie, 61);
	cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_ERR_FLUSHED);
	/* posts to a disconnected endpoint are flushed too */
	tapi_post_recv(c.b, &dst, 0, 64, 62);
	tapi_wait(t.rq, IT_DTO_RC_RECV_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.cookie, 62);
	cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_ERR_FLUSHED);
}

Test(itapi_dto, post_bad_arguments, .init = conn_setup, .fini = conn_teardown)
{
	struct tapi_buf b;
	it_lmr_triplet_t seg[8], bad;
	it_dg_remote_ep_addr_t dg;
	size_t i;

	tapi_buf_make(&t, &b, 4096, IT_PRIV_ALL);
	for (i = 0; i < 8; i++)
		seg[i] = tapi_seg(&b, i * 8, 8);
	bad = seg[0];
	bad.lmr = TAPI_BOGUS;

	cr_assert_eq(it_post_send(TAPI_BOGUS, seg, 1, 0, 0), IT_ERR_INVALID_EP);
	cr_assert_eq(it_post_send(NULL, seg, 1, 0, 0), IT_ERR_INVALID_EP);
	cr_assert_eq(it_post_send((it_ep_handle_t)t.pz, seg, 1, 0, 0),
		     IT_ERR_INVALID_EP);
	cr_assert_eq(it_post_send(c.a, seg, 5, 0, 0),
		     IT_ERR_INVALID_NUM_SEGMENTS);
	cr_assert_eq(it_post_send(c.a, NULL, 1, 0, 0), IT_ERR_FAULT);
	cr_assert_eq(it_post_send(c.a, &bad, 1, 0, 0), IT_ERR_INVALID_LMR);
	cr_assert_eq(it_post_send(c.a, seg, 1, 0, (it_dto_flags_t)0x8000),
		     IT_ERR_INVALID_DTO_FLAGS);
	cr_assert_eq(it_post_send(c.a, seg, 1, 0, IT_UNLINK_LOCAL_SINK),
		     IT_ERR_OP_NOT_SUPPORTED);
	cr_assert_eq(it_post_recv(TAPI_BOGUS, seg, 1, 0, 0),
		     IT_ERR_INVALID_HANDLE);
	cr_assert_eq(it_post_recv(c.a, seg, 5, 0, 0),
		     IT_ERR_INVALID_NUM_SEGMENTS);
	cr_assert_eq(it_post_recv(c.a, seg, 1, 0, IT_SOLICITED_WAIT_FLAG),
		     IT_ERR_INVALID_DTO_FLAGS);
	cr_assert_eq(it_post_recvfrom(c.a, seg, 1, 0, 0),
		     IT_ERR_INVALID_EP_TYPE);
	memset(&dg, 0, sizeof(dg));
	cr_assert_eq(it_post_sendto(c.a, seg, 1, 0, 0, &dg),
		     IT_ERR_INVALID_EP_TYPE);
	cr_assert_eq(it_post_rdma_write(c.a, seg, 5, 0, 0, 0, b.rkey),
		     IT_ERR_INVALID_NUM_SEGMENTS);
	cr_assert_eq(it_post_rdma_write(c.a, seg, 1, 0, 0, 0, 1ull << 40),
		     IT_ERR_INVALID_RMR);
	cr_assert_eq(it_post_rdma_read(c.a, &bad, 1, 0, 0, 0, b.rkey),
		     IT_ERR_INVALID_LMR);
	cr_assert_eq(it_post_atomic(c.a, (it_atomic_op_t)9, 0, 0, seg, 0, 0, 0,
				    b.rkey),
		     IT_ERR_INVALID_ATOMIC_OP);
	cr_assert_eq(it_post_atomic(c.a, IT_FETCH_AND_ADD, 0, 0, NULL, 0, 0, 0,
				    b.rkey),
		     IT_ERR_FAULT);
	bad = tapi_seg(&b, 0, 4);
	if (t.info->atomic_support)
		cr_assert_eq(it_post_atomic(c.a, IT_FETCH_AND_ADD, 0, 0, &bad,
					    0, 0, 0, b.rkey),
			     IT_ERR_INVALID_LENGTH);
	cr_assert_eq(it_post_send_and_unlink(TAPI_BOGUS, seg, 1, 0, 0, 0),
		     IT_ERR_INVALID_EP);
}

Test(itapi_dto, payload_limit, .init = conn_setup, .fini = conn_teardown)
{
	it_ep_attributes_t a = tapi_rc_attr();
	struct tapi_buf b;
	it_lmr_triplet_t seg;
	it_ep_handle_t ep;

	a.max_dto_payload_size = 100;
	a.srv.rc.atomics_enable = IT_FALSE;
	cr_assert_eq(it_ep_rc_create(t.pz, t.sq, t.rq, t.cmsg, IT_EP_NO_FLAG,
				     &a, &ep),
		     IT_SUCCESS);
	tapi_buf_make(&t, &b, 256, IT_PRIV_LOCAL);
	seg = tapi_seg(&b, 0, 101);
	cr_assert_eq(it_post_send(ep, &seg, 1, 0, 0), IT_ERR_PAYLOAD_SIZE);
	/* an unconnected endpoint takes receives but not sends */
	seg.length = 100;
	cr_assert_eq(it_post_recv(ep, &seg, 1, 0, 0), IT_SUCCESS);
	cr_assert_eq(it_post_send(ep, &seg, 1, 0, 0), IT_ERR_INVALID_EP_STATE);
	cr_assert_eq(it_ep_free(ep), IT_SUCCESS);
}

/*
 * An event the front end queues (a link completion on an endpoint that
 * is not connected) and completions in the request SEVD's CQ: a take
 * that finds nothing queued converts a completion straight into the
 * caller's event, but never ahead of a queued one; the completions keep
 * their order, and every event is whole.
 */
Test(itapi_dto, queued_events_and_completions_keep_order, .init = conn_setup,
     .fini = conn_teardown)
{
	it_ep_handle_t idle = tapi_rc_ep(&t);
	struct tapi_buf src, dst, region;
	it_lmr_handle_t lmr;
	it_lmr_triplet_t seg;
	it_event_t ev;
	size_t nmore;
	int i;

	tapi_buf_make(&t, &src, 64, IT_PRIV_LOCAL);
	tapi_buf_make(&t, &dst, 256, IT_PRIV_LOCAL);
	tapi_buf_make(&t, &region, 64, IT_PRIV_LOCAL);
	for (i = 0; i < 4; i++)
		tapi_post_recv(c.b, &dst, (size_t)i * 64, 64, 10 + i);
	seg = tapi_seg(&src, 0, 64);
	cr_assert_eq(it_lmr_create_unlinked(t.pz, 0, 0, 0, &lmr), IT_SUCCESS);

	/* queued before the send is posted */
	cr_assert_eq(it_lmr_link(lmr, region.p, NULL, 64, IT_ADDR_MODE_ABSOLUTE,
				 IT_PRIV_LOCAL, idle, 201, IT_COMPLETION_FLAG,
				 NULL),
		     IT_SUCCESS);
	cr_assert_eq(it_post_send(c.a, &seg, 1, 101, IT_COMPLETION_FLAG),
		     IT_SUCCESS);
	tapi_wait(t.sq, IT_LMR_LINK_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.cookie, 201);
	cr_assert_eq(ev.dto_cmpl.ep, idle);
	tapi_wait(t.sq, IT_DTO_SEND_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.cookie, 101);
	cr_assert_eq(ev.dto_cmpl.ep, c.a);
	cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_SUCCESS);
	cr_assert_eq(ev.dto_cmpl.transferred_length, 64);
	cr_assert_null(ev.dto_cmpl.unlinked_mr_handle);

	/* queued after two sends whose completions wait in the CQ */
	cr_assert_eq(it_post_send(c.a, &seg, 1, 102, IT_COMPLETION_FLAG),
		     IT_SUCCESS);
	cr_assert_eq(it_post_send(c.a, &seg, 1, 103, IT_COMPLETION_FLAG),
		     IT_SUCCESS);
	cr_assert_eq(it_lmr_unlink(lmr, idle, 202, IT_COMPLETION_FLAG),
		     IT_SUCCESS);
	cr_assert_eq(it_evd_wait(t.sq, TAPI_TIMEOUT_US, &ev, &nmore),
		     IT_SUCCESS);
	cr_assert_eq(ev.event_number, IT_LMR_LINK_CMPL_EVENT);
	cr_assert_eq(ev.dto_cmpl.cookie, 202);
	tapi_wait(t.sq, IT_DTO_SEND_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.cookie, 102);
	tapi_wait(t.sq, IT_DTO_SEND_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.cookie, 103);
	cr_assert_eq(it_evd_dequeue(t.sq, &ev), IT_ERR_QUEUE_EMPTY);

	/* receives: the cookies of the slots, in order */
	for (i = 0; i < 3; i++) {
		tapi_wait(t.rq, IT_DTO_RC_RECV_CMPL_EVENT, &ev);
		cr_assert_eq(ev.dto_cmpl.cookie, (uint64_t)(10 + i));
		cr_assert_eq(ev.dto_cmpl.ep, c.b);
		cr_assert_eq(ev.dto_cmpl.transferred_length, 64);
	}
	cr_assert_eq(it_evd_dequeue(t.rq, &ev), IT_ERR_QUEUE_EMPTY);
	cr_assert_eq(it_lmr_free(lmr), IT_SUCCESS);
	cr_assert_eq(it_ep_free(idle), IT_SUCCESS);
}

Test(itapi_dto, many_in_flight, .init = conn_setup, .fini = conn_teardown)
{
	struct tapi_buf src, dst;
	it_lmr_triplet_t seg;
	it_event_t ev[16];
	int i, n, got = 0, d;

	tapi_buf_make(&t, &src, 32 * 8, IT_PRIV_LOCAL);
	tapi_buf_make(&t, &dst, 32 * 8, IT_PRIV_LOCAL);
	for (i = 0; i < 32; i++)
		tapi_post_recv(c.b, &dst, (size_t)i * 8, 8, (it_dto_cookie_t)i);
	for (i = 0; i < 32; i++) {
		memset(src.p + i * 8, i, 8);
		seg = tapi_seg(&src, (size_t)i * 8, 8);
		cr_assert_eq(it_post_send(c.a, &seg, 1, (it_dto_cookie_t)i,
					  IT_COMPLETION_FLAG),
			     IT_SUCCESS);
	}
	/* the ring holds 32: one more would not fit */
	seg = tapi_seg(&src, 0, 8);
	/* completions come back in posting order */
	while (got < 32) {
		n = 0;
		if (it_evd_dequeue_n(t.rq, 16, ev, &n) == IT_ERR_QUEUE_EMPTY) {
			cr_assert(tapi_next(t.rq, TAPI_TIMEOUT_US, &ev[0]));
			n = 1;
		}
		for (d = 0; d < n; d++, got++) {
			cr_assert_eq(ev[d].dto_cmpl.cookie, (uint64_t)got);
			cr_assert_eq(ev[d].dto_cmpl.dto_status, IT_DTO_SUCCESS);
		}
	}
	cr_assert_arr_eq(dst.p, src.p, 32 * 8);
	for (i = 0; i < 32; i++)
		tapi_wait(t.sq, IT_DTO_SEND_CMPL_EVENT, &ev[0]);
}
