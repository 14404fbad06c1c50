/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* Shared receive queues, EPs on them, watermarks. */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include "tests/dat/test_api_common.h"

struct srq_pair {
	struct t_pair p;
	DAT_SRQ_HANDLE srq;
	DAT_EP_HANDLE srq_ep; /* passive, on the SRQ */
	DAT_CNO_HANDLE cno;
};

/*
 * ep[0] connected to an EP of the SRQ, which reports to recv[1].  A
 * receive counts against its EP once it reaches the EVD: recv[1] gets a
 * CNO, so that receives reach it as they complete, not only when the
 * test reads it, whatever the transport's timing.
 */
static void srq_pair(struct srq_pair *s, DAT_COUNT dtos, DAT_COUNT lw)
{
	DAT_OS_WAIT_PROXY_AGENT none = { NULL, NULL };
	DAT_SRQ_ATTR attr = { dtos, 2, lw };
	DAT_CR_HANDLE cr;
	DAT_EVENT ev;

	t_pair_setup(&s->p, NULL);
	T_OK(dat_cno_create(s->p.t.ia, none, &s->cno));
	T_OK(dat_evd_modify_cno(s->p.recv[1], s->cno));
	T_OK(dat_srq_create(s->p.t.ia, s->p.t.pz, &attr, &s->srq));
	T_OK(dat_ep_create_with_srq(s->p.t.ia, s->p.t.pz, s->p.recv[1],
				    s->p.req[1], s->p.conn[1], s->srq, NULL,
				    &s->srq_ep));
	T_OK(dat_ep_connect(s->p.ep[0], s->p.t.attr.ia_address_ptr, s->p.qual,
			    T_TIMEOUT_US, 0, NULL, DAT_QOS_BEST_EFFORT,
			    DAT_CONNECT_DEFAULT_FLAG));
	ev = t_wait(s->p.cr_evd, DAT_CONNECTION_REQUEST_EVENT);
	cr = ev.event_data.cr_arrival_event_data.cr_handle;
	T_OK(dat_cr_accept(cr, s->srq_ep, 0, NULL));
	t_wait(s->p.conn[0], DAT_CONNECTION_EVENT_ESTABLISHED);
	t_wait(s->p.conn[1], DAT_CONNECTION_EVENT_ESTABLISHED);
}

static void srq_pair_teardown(struct srq_pair *s)
{
	T_OK(dat_ep_free(s->srq_ep));
	T_OK(dat_srq_free(s->srq));
	T_OK(dat_evd_modify_cno(s->p.recv[1], DAT_HANDLE_NULL));
	T_OK(dat_cno_free(s->cno));
	t_pair_teardown(&s->p);
}

static void srq_post(struct srq_pair *s, uint64_t cookie, size_t off)
{
	DAT_LMR_TRIPLET r = t_seg(&s->p.mem[1], off, 64);

	T_OK(dat_srq_post_recv(s->srq, 1, &r, t_cookie(cookie)));
}

static DAT_RETURN post_one(struct srq_pair *s, uint64_t cookie)
{
	DAT_LMR_TRIPLET l = t_seg(&s->p.mem[0], 0, 32);

	return dat_ep_post_send(s->p.ep[0], 1, &l, t_cookie(cookie),
				DAT_COMPLETION_SUPPRESS_FLAG);
}

static void send_one(struct srq_pair *s, uint64_t cookie)
{
	T_OK(post_one(s, cookie));
}

/* The receives the SRQ EP holds, once they are want (or 5 s passed). */
static DAT_COUNT held(struct srq_pair *s, DAT_COUNT want, DAT_COUNT *span)
{
	DAT_COUNT n = -1;
	int i;

	for (i = 0; i < 5000; i++) {
		T_OK(dat_ep_recv_query(s->srq_ep, &n, span));
		if (n == want)
			break;
		usleep(1000);
	}
	return n;
}

Test(dat_srq, create_query_errors)
{
	DAT_SRQ_ATTR attr = { 16, 2, 0 };
	DAT_SRQ_PARAM param;
	DAT_SRQ_HANDLE srq;
	DAT_COUNT want;
	DAT_RETURN ret;
	DAT_LMR_TRIPLET r;
	struct t_ia t;
	struct t_mem m;

	t_ia_open(&t);
	t_mem_make(&t, &m, 4096);
	T_OK(dat_srq_create(t.ia, t.pz, &attr, &srq));
	T_OK(dat_srq_query(srq, DAT_SRQ_FIELD_ALL, &param));
	cr_assert_eq(param.srq_state, DAT_SRQ_STATE_OPERATIONAL);
	cr_assert_eq(param.pz_handle, t.pz);
	cr_assert_geq(param.max_recv_dtos, 16);
	cr_assert_eq(param.max_recv_iov, 2);
	cr_assert_eq(param.available_dto_count, 0);
	r = t_seg(&m, 0, 64);
	T_OK(dat_srq_post_recv(srq, 1, &r, t_cookie(1)));
	T_OK(dat_srq_post_recv(srq, 0, NULL, t_cookie(2)));
	T_OK(dat_srq_query(srq, DAT_SRQ_FIELD_ALL, &param));
	cr_assert_eq(param.available_dto_count, 2);
	T_ERR(dat_srq_post_recv(srq, 3, &r, t_cookie(1)), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG2);
	T_ERR(dat_srq_post_recv(srq, 1, NULL, t_cookie(1)),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	T_ERR(dat_srq_post_recv(NULL, 1, &r, t_cookie(1)), DAT_INVALID_HANDLE,
	      DAT_INVALID_HANDLE_SRQ);
	T_ERR(dat_srq_query(srq, (DAT_SRQ_PARAM_MASK)0x400, &param),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	T_ERR(dat_srq_query(srq, DAT_SRQ_FIELD_ALL, NULL),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	/* resize: never below what is posted */
	T_ERR(dat_srq_resize(srq, 1), DAT_INVALID_STATE,
	      DAT_INVALID_STATE_SRQ_IN_USE);
	T_ERR(dat_srq_resize(srq, 0), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	want = 64;
	ret = dat_srq_resize(srq, want);
	/* a device may be unable to grow an SRQ (siw); shrinking is not
	 * the device's business */
	if (DAT_GET_TYPE(ret) == DAT_MODEL_NOT_SUPPORTED &&
	    strcmp(t_pattr(&t, "OPENRDMA_NODE_TRANSPORT"), "SOFTWARE")) {
		want = 2;
		ret = dat_srq_resize(srq, want);
	}
	T_OK(ret);
	T_OK(dat_srq_query(srq, DAT_SRQ_FIELD_MAX_RECV_DTO, &param));
	cr_assert_geq(param.max_recv_dtos, want);
	T_ERR(dat_srq_set_lw(srq, -1), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	T_ERR(dat_srq_free(t.pz), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
	T_OK(dat_srq_free(srq));

	T_ERR(dat_srq_create(t.ia, t.pz, NULL, &srq), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG3);
	attr.max_recv_dtos = 0;
	T_ERR(dat_srq_create(t.ia, t.pz, &attr, &srq), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG3);
	attr.max_recv_dtos = 8;
	attr.low_watermark = 9;
	T_ERR(dat_srq_create(t.ia, t.pz, &attr, &srq), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG3);
	attr.low_watermark = 0;
	T_ERR(dat_srq_create(t.ia, NULL, &attr, &srq), DAT_INVALID_HANDLE,
	      DAT_INVALID_HANDLE_PZ);
	T_ERR(dat_srq_create(t.ia, t.pz, &attr, NULL), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG4);
	t_mem_free(&m);
	t_ia_close(&t);
}

Test(dat_srq, receive_through_srq)
{
	DAT_DTO_COMPLETION_EVENT_DATA d;
	DAT_SRQ_PARAM param;
	DAT_EP_PARAM eparam;
	DAT_LMR_TRIPLET r;
	DAT_COUNT n, span;
	struct srq_pair s;

	srq_pair(&s, 16, 0);
	T_OK(dat_ep_query(s.srq_ep, DAT_EP_FIELD_SRQ_HANDLE, &eparam));
	cr_assert_eq(eparam.srq_handle, s.srq);
	/* the EP takes receives from its SRQ only */
	r = t_seg(&s.p.mem[1], 0, 64);
	T_ERR(dat_ep_post_recv(s.srq_ep, 1, &r, t_cookie(1),
			       DAT_COMPLETION_DEFAULT_FLAG),
	      DAT_INVALID_STATE, -1);
	T_ERR(dat_srq_free(s.srq), DAT_INVALID_STATE,
	      DAT_INVALID_STATE_SRQ_IN_USE);
	srq_post(&s, 101, 0);
	srq_post(&s, 102, 100);
	send_one(&s, 1);
	send_one(&s, 2);
	d = t_dto(s.p.recv[1], DAT_DTO_SUCCESS);
	cr_assert_eq(d.ep_handle, s.srq_ep);
	cr_assert_eq(d.user_cookie.as_64, 101);
	cr_assert_eq(d.transfered_length, 32);
	/* the second is the EP's until the consumer takes it */
	n = held(&s, 1, &span);
	cr_assert_eq(n, 1);
	T_OK(dat_srq_query(s.srq, DAT_SRQ_FIELD_ALL, &param));
	cr_assert_eq(param.outstanding_dto_count, 1);
	cr_assert_eq(param.available_dto_count, 0);
	d = t_dto(s.p.recv[1], DAT_DTO_SUCCESS);
	cr_assert_eq(d.user_cookie.as_64, 102);
	T_OK(dat_ep_recv_query(s.srq_ep, &n, NULL));
	cr_assert_eq(n, 0);
	T_ERR(dat_ep_create_with_srq(s.p.t.ia, s.p.t.pz, s.p.recv[1],
				     s.p.req[1], s.p.conn[1], NULL, NULL,
				     &s.srq_ep),
	      DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
	srq_pair_teardown(&s);
}

Test(dat_srq, soft_watermark_event)
{
	DAT_EVENT ev;
	struct srq_pair s;

	srq_pair(&s, 16, 0);
	T_ERR(dat_ep_set_watermark(s.srq_ep, -5, 4), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG2);
	T_ERR(dat_ep_set_watermark(s.srq_ep, 1, -5), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG3);
	T_OK(dat_ep_set_watermark(s.srq_ep, 1, DAT_WATERMARK_INFINITE));
	srq_post(&s, 1, 0);
	srq_post(&s, 2, 100);
	send_one(&s, 1);
	send_one(&s, 2);
	t_dto(s.p.recv[1], DAT_DTO_SUCCESS);
	ev = t_wait(s.p.t.async, DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR);
	cr_assert_eq(ev.event_data.asynch_error_event_data.dat_handle,
		     s.srq_ep);
	cr_assert_eq(ev.event_data.asynch_error_event_data.reason,
		     DAT_SRQ_SOFT_HIGH_WATERMARK_EVENT);
	t_dto(s.p.recv[1], DAT_DTO_SUCCESS);
	srq_pair_teardown(&s);
}

Test(dat_srq, hard_watermark_breaks_connection)
{
	DAT_EVENT ev;
	struct srq_pair s;
	uint64_t cookie;
	DAT_RETURN ret;

	srq_pair(&s, 16, 0);
	T_OK(dat_ep_set_watermark(s.srq_ep, DAT_WATERMARK_INFINITE, 1));
	srq_post(&s, 1, 0);
	srq_post(&s, 2, 100);
	srq_post(&s, 3, 200);
	send_one(&s, 1);
	/* the first may break the connection before these are posted: the
	 * initiator's EP is disconnected then, and says so */
	for (cookie = 2; cookie <= 3; cookie++) {
		ret = post_one(&s, cookie);
		cr_assert(ret == DAT_SUCCESS ||
				  (DAT_GET_TYPE(ret) == DAT_INVALID_STATE &&
				   DAT_GET_SUBTYPE(ret) ==
					   DAT_INVALID_STATE_EP_DISCONNECTED),
			  "send %u: 0x%08x %s", (unsigned int)cookie, ret,
			  t_str(ret));
	}
	ev = t_wait(s.p.t.async, DAT_ASYNC_ERROR_EP_BROKEN);
	cr_assert_eq(ev.event_data.asynch_error_event_data.dat_handle,
		     s.srq_ep);
	cr_assert_eq(t_dto(s.p.recv[1], DAT_DTO_SUCCESS).user_cookie.as_64, 1);
	srq_pair_teardown(&s);
}

Test(dat_srq, low_watermark_event)
{
	DAT_EVENT ev;
	struct srq_pair s;
	DAT_RETURN ret;

	srq_pair(&s, 16, 0);
	srq_post(&s, 1, 0);
	srq_post(&s, 2, 100);
	srq_post(&s, 3, 200);
	ret = dat_srq_set_lw(s.srq, 2);
	if (DAT_GET_TYPE(ret) == DAT_MODEL_NOT_SUPPORTED) {
		srq_pair_teardown(&s);
		cr_skip_test("%s has no SRQ limit event", t_iface());
	}
	T_OK(ret);
	send_one(&s, 1);
	send_one(&s, 2);
	ev = t_wait(s.p.t.async, DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR);
	cr_assert_eq(ev.event_data.asynch_error_event_data.dat_handle, s.srq);
	cr_assert_eq(ev.event_data.asynch_error_event_data.reason,
		     DAT_SRQ_LOW_WATERMARK_EVENT);
	t_dto(s.p.recv[1], DAT_DTO_SUCCESS);
	t_dto(s.p.recv[1], DAT_DTO_SUCCESS);
	srq_pair_teardown(&s);
}
