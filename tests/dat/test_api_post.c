/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Data transfer: send and receive, RDMA read and write, send with
 * invalidate, read into an RMR; suppressed completions; argument errors;
 * completion errors and flushes.
 */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include "tests/dat/test_api_common.h"

static void connected(struct t_pair *p, const DAT_EP_ATTR *attr)
{
	t_pair_setup(p, attr);
	t_pair_connect(p);
}

Test(dat_post, send_recv_segments_and_cookies)
{
	DAT_DTO_COMPLETION_EVENT_DATA d;
	DAT_LMR_TRIPLET r[2], s[3];
	DAT_BOOLEAN ri, qi;
	struct t_pair p;

	connected(&p, NULL);
	r[0] = t_seg(&p.mem[1], 0, 5);
	r[1] = t_seg(&p.mem[1], 100, 100);
	T_OK(dat_ep_post_recv(p.ep[1], 2, r, t_cookie(11),
			      DAT_COMPLETION_DEFAULT_FLAG));
	T_OK(dat_ep_get_status(p.ep[1], NULL, &ri, &qi));
	cr_assert_eq(ri, DAT_FALSE);
	memcpy(p.mem[0].buf, "hello", 5);
	memcpy(p.mem[0].buf + 50, ", ", 2);
	memcpy(p.mem[0].buf + 60, "world", 5);
	s[0] = t_seg(&p.mem[0], 0, 5);
	s[1] = t_seg(&p.mem[0], 50, 2);
	s[2] = t_seg(&p.mem[0], 60, 5);
	T_OK(dat_ep_post_send(p.ep[0], 3, s, t_cookie(22),
			      DAT_COMPLETION_DEFAULT_FLAG));
	d = t_dto(p.req[0], DAT_DTO_SUCCESS);
	cr_assert_eq(d.ep_handle, p.ep[0]);
	cr_assert_eq(d.user_cookie.as_64, 22);
	cr_assert_eq(d.operation, DAT_DTO_SEND);
	cr_assert_eq(d.transfered_length, 12);
	d = t_dto(p.recv[1], DAT_DTO_SUCCESS);
	cr_assert_eq(d.ep_handle, p.ep[1]);
	cr_assert_eq(d.user_cookie.as_64, 11);
	cr_assert_eq(d.operation, DAT_DTO_RECEIVE);
	cr_assert_eq(d.transfered_length, 12);
	cr_assert_arr_eq(p.mem[1].buf, "hello", 5);
	cr_assert_arr_eq(p.mem[1].buf + 100, ", world", 7);
	T_OK(dat_ep_get_status(p.ep[1], NULL, &ri, NULL));
	cr_assert_eq(ri, DAT_TRUE);

	/* an empty message */
	T_OK(dat_ep_post_recv(p.ep[1], 1, r, t_cookie(12),
			      DAT_COMPLETION_DEFAULT_FLAG));
	T_OK(dat_ep_post_send(
		p.ep[0], 0, NULL, t_cookie(23),
		(DAT_COMPLETION_FLAGS)(DAT_COMPLETION_SOLICITED_WAIT_FLAG |
				       DAT_COMPLETION_BARRIER_FENCE_FLAG)));
	d = t_dto(p.req[0], DAT_DTO_SUCCESS);
	cr_assert_eq(d.transfered_length, 0);
	d = t_dto(p.recv[1], DAT_DTO_SUCCESS);
	cr_assert_eq(d.transfered_length, 0);
	t_pair_teardown(&p);
}

Test(dat_post, rdma_write_read)
{
	DAT_DTO_COMPLETION_EVENT_DATA d;
	DAT_LMR_TRIPLET l;
	DAT_RMR_TRIPLET r;
	struct t_pair p;
	int i;

	connected(&p, NULL);
	for (i = 0; i < 4096; i++)
		p.mem[0].buf[i] = (char)i;
	l = t_seg(&p.mem[0], 0, 4096);
	r = t_rseg(&p.mem[1], 8192, 4096);
	T_OK(dat_ep_post_rdma_write(p.ep[0], 1, &l, t_cookie(1), &r,
				    DAT_COMPLETION_DEFAULT_FLAG));
	d = t_dto(p.req[0], DAT_DTO_SUCCESS);
	cr_assert_eq(d.operation, DAT_DTO_RDMA_WRITE);
	cr_assert_eq(d.transfered_length, 4096);
	cr_assert_arr_eq(p.mem[1].buf + 8192, p.mem[0].buf, 4096);
	/* the target sees nothing */
	t_empty(p.recv[1]);

	l = t_seg(&p.mem[0], 16384, 4096);
	T_OK(dat_ep_post_rdma_read(p.ep[0], 1, &l, t_cookie(2), &r,
				   DAT_COMPLETION_DEFAULT_FLAG));
	d = t_dto(p.req[0], DAT_DTO_SUCCESS);
	cr_assert_eq(d.operation, DAT_DTO_RDMA_READ);
	cr_assert_eq(d.user_cookie.as_64, 2);
	cr_assert_eq(d.transfered_length, 4096);
	cr_assert_arr_eq(p.mem[0].buf + 16384, p.mem[0].buf, 4096);
	/* more than the remote segment holds */
	r.segment_length = 100;
	T_ERR(dat_ep_post_rdma_read(p.ep[0], 1, &l, t_cookie(3), &r,
				    DAT_COMPLETION_DEFAULT_FLAG),
	      DAT_LENGTH_ERROR, DAT_NO_SUBTYPE);
	T_ERR(dat_ep_post_rdma_read(p.ep[0], 1, &l, t_cookie(3), NULL,
				    DAT_COMPLETION_DEFAULT_FLAG),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG5);
	T_ERR(dat_ep_post_rdma_read(p.ep[0], 1, &l, t_cookie(3), &r,
				    (DAT_COMPLETION_FLAGS)0x100),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG6);
	T_ERR(dat_ep_post_rdma_read(p.ep[0], -1, &l, t_cookie(3), &r,
				    DAT_COMPLETION_DEFAULT_FLAG),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	T_ERR(dat_ep_post_rdma_read(p.ep[0], 1, NULL, t_cookie(3), &r,
				    DAT_COMPLETION_DEFAULT_FLAG),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	T_ERR(dat_ep_post_rdma_read(p.t.pz, 1, &l, t_cookie(3), &r,
				    DAT_COMPLETION_DEFAULT_FLAG),
	      DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	/* nothing of that was posted */
	t_empty(p.req[0]);
	T_ERR(dat_ep_post_rdma_write(p.ep[0], 1, &l, t_cookie(3), NULL,
				     DAT_COMPLETION_DEFAULT_FLAG),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG5);
	T_ERR(dat_ep_post_rdma_write(p.ep[0], 1, &l, t_cookie(3), &r,
				     (DAT_COMPLETION_FLAGS)0x100),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG6);
	t_pair_teardown(&p);
}

/* Many suppressed requests on a small ring: no event, no exhaustion. */
Test(dat_post, suppressed_requests_reclaim)
{
	DAT_RETURN ret = DAT_SUCCESS;
	DAT_LMR_TRIPLET l;
	DAT_RMR_TRIPLET r;
	DAT_EP_ATTR attr;
	DAT_EVENT ev;
	DAT_BOOLEAN qi;
	struct t_pair p;
	int i, tries;

	memset(&attr, 0, sizeof(attr));
	attr.max_recv_dtos = 8;
	attr.max_request_dtos = 8;
	attr.max_recv_iov = 2;
	attr.max_request_iov = 2;
	attr.max_rdma_read_in = 1;
	attr.max_rdma_read_out = 1;
	attr.max_rdma_read_iov = 1;
	attr.max_rdma_write_iov = 1;
	connected(&p, &attr);
	l = t_seg(&p.mem[0], 0, 64);
	r = t_rseg(&p.mem[1], 0, 64);
	for (i = 0; i < 500; i++) {
		/* a transport that completes later fills the ring for a while */
		for (tries = 0; tries < 50000; tries++) {
			ret = dat_ep_post_rdma_write(
				p.ep[0], 1, &l, t_cookie(i), &r,
				DAT_COMPLETION_SUPPRESS_FLAG);
			if (DAT_GET_TYPE(ret) != DAT_INSUFFICIENT_RESOURCES)
				break;
			cr_assert_eq(dat_evd_dequeue(p.req[0], &ev),
				     DAT_QUEUE_EMPTY);
			usleep(100);
		}
		cr_assert_eq(ret, DAT_SUCCESS, "post %d: %s", i, t_str(ret));
		/* reading the EVD reclaims; it has nothing to report */
		if (i % 2)
			cr_assert_eq(dat_evd_dequeue(p.req[0], &ev),
				     DAT_QUEUE_EMPTY);
	}
	T_OK(dat_ep_post_rdma_write(p.ep[0], 1, &l, t_cookie(999), &r,
				    DAT_COMPLETION_DEFAULT_FLAG));
	cr_assert_eq(t_dto(p.req[0], DAT_DTO_SUCCESS).user_cookie.as_64, 999);
	t_empty(p.req[0]);
	T_OK(dat_ep_get_status(p.ep[0], NULL, NULL, &qi));
	cr_assert_eq(qi, DAT_TRUE);
	/* without reading the EVD the ring fills */
	for (i = 0; i < 8; i++)
		T_OK(dat_ep_post_rdma_write(p.ep[0], 1, &l, t_cookie(i), &r,
					    DAT_COMPLETION_DEFAULT_FLAG));
	T_ERR(dat_ep_post_rdma_write(p.ep[0], 1, &l, t_cookie(i), &r,
				     DAT_COMPLETION_DEFAULT_FLAG),
	      DAT_INSUFFICIENT_RESOURCES, -1);
	for (i = 0; i < 8; i++)
		cr_assert_eq(t_dto(p.req[0], DAT_DTO_SUCCESS).user_cookie.as_64,
			     (uint64_t)i);
	t_pair_teardown(&p);
}

Test(dat_post, argument_and_state_errors)
{
	DAT_LMR_TRIPLET s[64];
	DAT_RMR_TRIPLET r;
	DAT_EP_HANDLE norecv;
	struct t_pair p;

	t_pair_setup(&p, NULL);
	s[0] = t_seg(&p.mem[0], 0, 8);
	/* not connected: no sends, reads or writes; receives are fine */
	T_ERR(dat_ep_post_send(p.ep[0], 1, s, t_cookie(1),
			       DAT_COMPLETION_DEFAULT_FLAG),
	      DAT_INVALID_STATE, DAT_INVALID_STATE_EP_UNCONNECTED);
	r = t_rseg(&p.mem[1], 0, 8);
	T_ERR(dat_ep_post_rdma_read(p.ep[0], 1, s, t_cookie(1), &r,
				    DAT_COMPLETION_DEFAULT_FLAG),
	      DAT_INVALID_STATE, DAT_INVALID_STATE_EP_UNCONNECTED);
	T_ERR(dat_ep_post_rdma_write(p.ep[0], 1, s, t_cookie(1), &r,
				     DAT_COMPLETION_DEFAULT_FLAG),
	      DAT_INVALID_STATE, DAT_INVALID_STATE_EP_UNCONNECTED);
	T_OK(dat_ep_post_recv(p.ep[0], 1, s, t_cookie(1),
			      DAT_COMPLETION_DEFAULT_FLAG));
	t_pair_connect(&p);
	T_ERR(dat_ep_post_send(NULL, 1, s, t_cookie(1),
			       DAT_COMPLETION_DEFAULT_FLAG),
	      DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	T_ERR(dat_ep_post_send(p.ep[0], -1, s, t_cookie(1),
			       DAT_COMPLETION_DEFAULT_FLAG),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	T_ERR(dat_ep_post_send(p.ep[0], 64, s, t_cookie(1),
			       DAT_COMPLETION_DEFAULT_FLAG),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	T_ERR(dat_ep_post_send(p.ep[0], 1, NULL, t_cookie(1),
			       DAT_COMPLETION_DEFAULT_FLAG),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	T_ERR(dat_ep_post_send(p.ep[0], 1, s, t_cookie(1),
			       (DAT_COMPLETION_FLAGS)0x80),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG5);
	T_ERR(dat_ep_post_recv(p.ep[0], 64, s, t_cookie(1),
			       DAT_COMPLETION_DEFAULT_FLAG),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	T_ERR(dat_ep_post_recv(p.ep[0], 1, NULL, t_cookie(1),
			       DAT_COMPLETION_DEFAULT_FLAG),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	/* receives cannot be suppressed */
	T_ERR(dat_ep_post_recv(p.ep[0], 1, s, t_cookie(1),
			       DAT_COMPLETION_SUPPRESS_FLAG),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG5);
	/* an EP without a receive EVD takes no receives */
	T_OK(dat_ep_create(p.t.ia, p.t.pz, NULL, p.req[0], p.conn[0], NULL,
			   &norecv));
	T_ERR(dat_ep_post_recv(norecv, 1, s, t_cookie(1),
			       DAT_COMPLETION_DEFAULT_FLAG),
	      DAT_INVALID_STATE, DAT_INVALID_STATE_EP_EVD_RECV);
	T_OK(dat_ep_free(norecv));
	t_pair_teardown(&p);
}

Test(dat_post, completion_errors_and_flush)
{
	DAT_DTO_COMPLETION_EVENT_DATA d;
	DAT_LMR_TRIPLET s, r;
	DAT_RMR_TRIPLET rr;
	struct t_pair p;

	connected(&p, NULL);
	/* a bad remote key: refused at the target */
	s = t_seg(&p.mem[0], 0, 16);
	rr = t_rseg(&p.mem[1], 0, 16);
	rr.rmr_context ^= 0x10001;
	T_OK(dat_ep_post_rdma_write(p.ep[0], 1, &s, t_cookie(5), &rr,
				    DAT_COMPLETION_SUPPRESS_FLAG));
	if (t_refusal_completes(&p.t)) {
		/* failures complete even when suppressed */
		d = t_dto(p.req[0], DAT_DTO_ERR_REMOTE_ACCESS);
		cr_assert_eq(d.user_cookie.as_64, 5);
		cr_assert_eq(d.transfered_length, 0);
	} else {
		/* iWARP: it succeeded once sent; the target's Terminate
		 * ends the connection */
		t_conn_ends(p.conn[0], p.ep[0]);
	}
	t_pair_teardown(&p);

	connected(&p, NULL);
	/* receives outstanding when the connection goes are flushed */
	r = t_seg(&p.mem[1], 0, 16);
	T_OK(dat_ep_post_recv(p.ep[1], 1, &r, t_cookie(71),
			      DAT_COMPLETION_DEFAULT_FLAG));
	T_OK(dat_ep_post_recv(p.ep[1], 1, &r, t_cookie(72),
			      DAT_COMPLETION_DEFAULT_FLAG));
	/* a bad local key: the sender's QP fails */
	s.lmr_context ^= 0x10001;
	T_OK(dat_ep_post_send(p.ep[0], 1, &s, t_cookie(6),
			      DAT_COMPLETION_DEFAULT_FLAG));
	d = t_dto_local(&p.t, p.req[0], DAT_DTO_ERR_LOCAL_PROTECTION);
	cr_assert_eq(d.user_cookie.as_64, 6);
	T_OK(dat_ep_disconnect(p.ep[1], DAT_CLOSE_ABRUPT_FLAG));
	t_wait(p.conn[1], DAT_CONNECTION_EVENT_DISCONNECTED);
	d = t_dto(p.recv[1], DAT_DTO_ERR_FLUSHED);
	cr_assert_eq(d.user_cookie.as_64, 71, "cookie %llu",
		     (unsigned long long)d.user_cookie.as_64);
	d = t_dto(p.recv[1], DAT_DTO_ERR_FLUSHED);
	cr_assert_eq(d.user_cookie.as_64, 72);
	t_pair_teardown(&p);
}

Test(dat_post, receive_too_small)
{
	DAT_LMR_TRIPLET s, r;
	struct t_pair p;

	connected(&p, NULL);
	r = t_seg(&p.mem[1], 0, 4);
	T_OK(dat_ep_post_recv(p.ep[1], 1, &r, t_cookie(1),
			      DAT_COMPLETION_DEFAULT_FLAG));
	s = t_seg(&p.mem[0], 0, 64);
	T_OK(dat_ep_post_send(p.ep[0], 1, &s, t_cookie(2),
			      DAT_COMPLETION_DEFAULT_FLAG));
	t_dto_local(&p.t, p.recv[1], DAT_DTO_ERR_LOCAL_LENGTH);
	if (t_refusal_completes(&p.t)) {
		t_dto(p.req[0], DAT_DTO_ERR_REMOTE_RESPONDER);
	} else {
		/* iWARP: sent, so done; the Terminate ends the connection */
		t_dto(p.req[0], DAT_DTO_SUCCESS);
		t_conn_ends(p.conn[0], p.ep[0]);
	}
	t_pair_teardown(&p);
}

Test(dat_post, send_with_invalidate)
{
	DAT_DTO_COMPLETION_EVENT_DATA d;
	DAT_RMR_CONTEXT key;
	DAT_RMR_HANDLE rmr;
	DAT_LMR_TRIPLET w, s, r;
	DAT_RMR_TRIPLET rr;
	DAT_RMR_COOKIE ck = { .as_64 = 3 };
	struct t_pair p;
	DAT_RETURN ret;

	connected(&p, NULL);
	ret = dat_rmr_create_for_ep(p.t.pz, &rmr);
	if (DAT_GET_TYPE(ret) == DAT_MODEL_NOT_SUPPORTED) {
		t_pair_teardown(&p);
		cr_skip_test("%s has no type 2 windows", t_iface());
	}
	T_OK(ret);
	w = t_seg(&p.mem[1], 4096, 128);
	T_OK(dat_rmr_bind(rmr, p.mem[1].lmr, &w, DAT_MEM_PRIV_REMOTE_WRITE_FLAG,
			  DAT_VA_TYPE_VA, p.ep[1], ck,
			  DAT_COMPLETION_DEFAULT_FLAG, &key));
	t_wait(p.req[1], DAT_RMR_BIND_COMPLETION_EVENT);
	r = t_seg(&p.mem[1], 0, 16);
	T_OK(dat_ep_post_recv(p.ep[1], 1, &r, t_cookie(9),
			      DAT_COMPLETION_DEFAULT_FLAG));
	s = t_seg(&p.mem[0], 0, 8);
	T_ERR(dat_ep_post_send_with_invalidate(p.ep[0], 1, &s, t_cookie(8),
					       DAT_COMPLETION_DEFAULT_FLAG,
					       (DAT_BOOLEAN)5, key),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG6);
	T_OK(dat_ep_post_send_with_invalidate(p.ep[0], 1, &s, t_cookie(8),
					      DAT_COMPLETION_DEFAULT_FLAG,
					      DAT_TRUE, key));
	t_dto(p.req[0], DAT_DTO_SUCCESS);
	d = t_dto(p.recv[1], DAT_DTO_SUCCESS);
	cr_assert_eq(d.operation, DAT_DTO_RECEIVE_WITH_INVALIDATE);
	cr_assert_eq(d.rmr_context, key);
	/* the key is gone */
	rr.virtual_address = w.virtual_address;
	rr.segment_length = 128;
	rr.rmr_context = key;
	T_OK(dat_ep_post_rdma_write(p.ep[0], 1, &s, t_cookie(10), &rr,
				    DAT_COMPLETION_DEFAULT_FLAG));
	t_dto(p.req[0], DAT_DTO_ERR_REMOTE_ACCESS);
	T_OK(dat_rmr_free(rmr));
	t_pair_teardown(&p);
}

Test(dat_post, rdma_read_to_rmr)
{
	DAT_DTO_COMPLETION_EVENT_DATA d;
	DAT_RMR_CONTEXT key;
	DAT_RMR_HANDLE rmr;
	DAT_LMR_TRIPLET w;
	DAT_RMR_TRIPLET local, remote;
	DAT_RMR_COOKIE ck = { .as_64 = 4 };
	struct t_pair p;

	connected(&p, NULL);
	t_require_rmrs(&p);
	T_OK(dat_rmr_create(p.t.pz, &rmr));
	w = t_seg(&p.mem[0], 8192, 256);
	T_OK(dat_rmr_bind(rmr, p.mem[0].lmr, &w, DAT_MEM_PRIV_REMOTE_WRITE_FLAG,
			  DAT_VA_TYPE_VA, p.ep[0], ck,
			  DAT_COMPLETION_DEFAULT_FLAG, &key));
	t_wait(p.req[0], DAT_RMR_BIND_COMPLETION_EVENT);
	strcpy(p.mem[1].buf + 300, "read into a window");
	remote = t_rseg(&p.mem[1], 300, 19);
	local.virtual_address = w.virtual_address + 16;
	local.segment_length = 19;
	local.rmr_context = key;
	T_OK(dat_ep_post_rdma_read_to_rmr(p.ep[0], &local, t_cookie(12),
					  &remote,
					  DAT_COMPLETION_DEFAULT_FLAG));
	d = t_dto(p.req[0], DAT_DTO_SUCCESS);
	cr_assert_eq(d.operation, DAT_DTO_RDMA_READ);
	cr_assert_str_eq(p.mem[0].buf + 8192 + 16, "read into a window");
	/* outside the window */
	local.virtual_address = w.virtual_address + 250;
	T_ERR(dat_ep_post_rdma_read_to_rmr(p.ep[0], &local, t_cookie(13),
					   &remote,
					   DAT_COMPLETION_DEFAULT_FLAG),
	      DAT_PROTECTION_VIOLATION, -1);
	local.rmr_context ^= 0x77;
	T_ERR(dat_ep_post_rdma_read_to_rmr(p.ep[0], &local, t_cookie(13),
					   &remote,
					   DAT_COMPLETION_DEFAULT_FLAG),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	T_ERR(dat_ep_post_rdma_read_to_rmr(p.ep[0], NULL, t_cookie(13), &remote,
					   DAT_COMPLETION_DEFAULT_FLAG),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	T_OK(dat_rmr_free(rmr));
	t_pair_teardown(&p);
}
