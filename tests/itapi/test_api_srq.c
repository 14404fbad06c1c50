/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Shared receive queues: creation checks, endpoints that share one,
 * receives consumed by whichever endpoint gets a message, the low
 * watermark event, modify and query.
 */
#include <string.h>
#include <criterion/criterion.h>

#include "tests/itapi/test_api.h"

TestSuite(itapi_srq, .timeout = 60);

static struct tapi t;

static void setup(void)
{
	tapi_open(&t);
	tapi_require(t.info->srq_support, "SRQ");
}

static void teardown(void)
{
	tapi_close(&t);
}

static it_ep_handle_t srq_ep(it_srq_handle_t srq)
{
	it_ep_attributes_t a = tapi_rc_attr();
	it_ep_handle_t ep;

	a.srv.rc.srq = srq;
	a.srv.rc.atomics_enable = IT_FALSE;
	cr_assert_eq(it_ep_rc_create(t.pz, t.sq, t.rq, t.cmsg, IT_EP_SRQ, &a,
				     &ep),
		     IT_SUCCESS);
	return ep;
}

/* Connects a fresh endpoint to passive (which has the SRQ). */
static it_ep_handle_t connect_to(it_ep_handle_t passive)
{
	struct tapi_conn c = { .a = tapi_rc_ep(&t), .b = passive };

	tapi_connect_eps(&t, &c, false);
	return c.a;
}

Test(itapi_srq, create_arguments, .init = setup, .fini = teardown)
{
	it_srq_handle_t srq = (it_srq_handle_t)0x1;
	it_ep_attributes_t a = tapi_rc_attr();
	it_ep_handle_t ep;

	cr_assert_eq(it_srq_create(TAPI_BOGUS, 1, 16, &srq), IT_ERR_INVALID_PZ);
	cr_assert_eq(it_srq_create(t.pz, 1, 0, &srq), IT_ERR_INVALID_SRQ_SIZE);
	cr_assert_eq(it_srq_create(t.pz, 1, 1u << 30, &srq),
		     IT_ERR_INVALID_SRQ_SIZE);
	cr_assert_eq(it_srq_create(t.pz, 0, 16, &srq), IT_ERR_RESOURCE_RSEG);
	cr_assert_eq(it_srq_create(t.pz, 1000, 16, &srq), IT_ERR_RESOURCE_RSEG);
	cr_assert_eq(it_srq_create(t.pz, 1, 16, NULL), IT_ERR_FAULT);
	cr_assert_eq(srq, (it_srq_handle_t)0x1);
	/* IT_EP_SRQ needs an SRQ of the endpoint's PZ */
	a.srv.rc.srq = TAPI_BOGUS;
	cr_assert_eq(it_ep_rc_create(t.pz, t.sq, t.rq, t.cmsg, IT_EP_SRQ, &a,
				     &ep),
		     IT_ERR_INVALID_SRQ);
	cr_assert_eq(it_srq_free(TAPI_BOGUS), IT_ERR_INVALID_SRQ);
}

Test(itapi_srq, shared_by_endpoints, .init = setup, .fini = teardown)
{
	struct tapi_buf src, dst;
	it_ep_handle_t p1, p2, a1, a2;
	it_lmr_triplet_t seg;
	it_srq_handle_t srq;
	it_event_t ev;
	bool seen1 = false, seen2 = false;
	int i;

	cr_assert_eq(it_srq_create(t.pz, 2, 16, &srq), IT_SUCCESS);
	p1 = srq_ep(srq);
	p2 = srq_ep(srq);
	cr_assert_eq(it_srq_free(srq), IT_ERR_SRQ_BUSY);
	a1 = connect_to(p1);
	a2 = connect_to(p2);

	tapi_buf_make(&t, &src, 64, IT_PRIV_LOCAL);
	tapi_buf_make(&t, &dst, 2 * 32, IT_PRIV_LOCAL);
	for (i = 0; i < 2; i++) {
		seg = tapi_seg(&dst, (size_t)i * 32, 32);
		cr_assert_eq(it_post_recv(srq, &seg, 1, (it_dto_cookie_t)i,
					  IT_COMPLETION_FLAG),
			     IT_SUCCESS);
	}
	/* an endpoint with an SRQ has no receive queue of its own */
	cr_assert_eq(it_post_recv(p1, &seg, 1, 0, 0), IT_ERR_INVALID_EP_TYPE);
	memset(src.p, 0xa1, 32);
	memset(src.p + 32, 0xa2, 32);
	seg = tapi_seg(&src, 0, 32);
	cr_assert_eq(it_post_send(a1, &seg, 1, 0, 0), IT_SUCCESS);
	seg = tapi_seg(&src, 32, 32);
	cr_assert_eq(it_post_send(a2, &seg, 1, 0, 0), IT_SUCCESS);
	for (i = 0; i < 2; i++) {
		tapi_wait(t.rq, IT_DTO_RC_RECV_CMPL_EVENT, &ev);
		cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_SUCCESS);
		cr_assert_eq(ev.dto_cmpl.transferred_length, 32);
		/* receives are taken in order, whoever gets the message;
		 * the two connections' messages may come in either order */
		cr_assert_eq(ev.dto_cmpl.cookie, (it_dto_cookie_t)i);
		if (ev.dto_cmpl.ep == p1) {
			seen1 = true;
			cr_assert_eq(dst.p[i * 32], 0xa1);
		} else if (ev.dto_cmpl.ep == p2) {
			seen2 = true;
			cr_assert_eq(dst.p[i * 32], 0xa2);
		}
	}
	cr_assert(seen1 && seen2);
}

Test(itapi_srq, low_watermark, .init = setup, .fini = teardown)
{
	struct tapi_buf src, dst;
	it_evd_handle_t aff;
	it_ep_handle_t p1, a1;
	it_lmr_triplet_t seg;
	it_srq_handle_t srq;
	it_srq_param_t p;
	it_event_t ev;
	int i;

	cr_assert_eq(it_evd_create(t.ia, IT_ASYNC_AFF_EVENT_STREAM, 0, 8, 0,
				   NULL, &aff, NULL),
		     IT_SUCCESS);
	cr_assert_eq(it_srq_create(t.pz, 1, 8, &srq), IT_SUCCESS);
	p1 = srq_ep(srq);
	a1 = connect_to(p1);
	tapi_buf_make(&t, &src, 8, IT_PRIV_LOCAL);
	tapi_buf_make(&t, &dst, 8 * 4, IT_PRIV_LOCAL);
	for (i = 0; i < 4; i++) {
		seg = tapi_seg(&dst, (size_t)i * 8, 8);
		cr_assert_eq(it_post_recv(srq, &seg, 1, 0, 0), IT_SUCCESS);
	}
	memset(&p, 0, sizeof(p));
	p.low_watermark = 3;
	cr_assert_eq(it_srq_modify(srq, IT_SRQ_PARAM_LOW_WATERMARK, &p),
		     IT_SUCCESS);
	cr_assert_eq(it_srq_query(srq, IT_SRQ_PARAM_ALL, &p), IT_SUCCESS);
	cr_assert_eq(p.ia, t.ia);
	cr_assert_eq(p.pz, t.pz);
	cr_assert_geq(p.max_recv_dtos, 8);
	cr_assert_eq(p.max_recv_segs, 1);
	cr_assert_eq(p.low_watermark, 3);
	seg = tapi_seg(&src, 0, 8);
	/* four receives, then three, then two: below the watermark */
	cr_assert_eq(it_post_send(a1, &seg, 1, 0, 0), IT_SUCCESS);
	cr_assert_eq(it_post_send(a1, &seg, 1, 0, 0), IT_SUCCESS);
	tapi_wait(aff, IT_ASYNC_AFF_SRQ_LOW_WATERMARK, &ev);
	cr_assert_eq(ev.aff_async.cause.srq, srq);
	tapi_wait(t.rq, IT_DTO_RC_RECV_CMPL_EVENT, NULL);
	tapi_wait(t.rq, IT_DTO_RC_RECV_CMPL_EVENT, NULL);

	p.low_watermark = 100;
	cr_assert_eq(it_srq_modify(srq, IT_SRQ_PARAM_LOW_WATERMARK, &p),
		     IT_ERR_INVALID_WATERMARK);
	cr_assert_eq(it_srq_modify(srq, IT_SRQ_PARAM_PZ, &p),
		     IT_ERR_INVALID_MASK);
	cr_assert_eq(it_srq_modify(srq, IT_SRQ_PARAM_LOW_WATERMARK, NULL),
		     IT_ERR_FAULT);
	cr_assert_eq(it_srq_query(srq, (it_srq_param_mask_t)0x400, &p),
		     IT_ERR_INVALID_MASK);
	cr_assert_eq(it_srq_query(TAPI_BOGUS, IT_SRQ_PARAM_ALL, &p),
		     IT_ERR_INVALID_SRQ);
	cr_assert_eq(it_srq_modify(TAPI_BOGUS, IT_SRQ_PARAM_ALL, &p),
		     IT_ERR_INVALID_SRQ);
}
