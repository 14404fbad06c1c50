/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * A transport that refuses a receive.  it_post_recv() reserves the
 * receive's place (a slot of the endpoint's ring, or of the SRQ's cookie
 * table) before it hands the receive to the transport, since the
 * completion may come before the call returns; a refusal must give the
 * place back.  No transport refuses a receive the front end checked, so
 * the refusal is made here: test_api links with -Wl,--wrap for the
 * software transports' sw_qp_post_recv() and sw_srq_post_recv().  An
 * interface whose receives do not go through them (verbs) skips, saying
 * so.
 */
#include <stdatomic.h>
#include <string.h>
#include <criterion/criterion.h>

#include <openrdma/errno.h>

#include "core/sw/qp.h"
#include "core/sw/srq.h"
#include "tests/itapi/test_api.h"

TestSuite(itapi_refuse, .timeout = 60);

/* posts still to refuse, with what; posts refused */
static atomic_int refuse_left;
static atomic_int refuse_code;
static atomic_int refused;

int __real_sw_qp_post_recv(struct sw_qp *sqp, struct openrdma_recv_wr *wr,
			   struct openrdma_recv_wr **bad_wr);
int __wrap_sw_qp_post_recv(struct sw_qp *sqp, struct openrdma_recv_wr *wr,
			   struct openrdma_recv_wr **bad_wr);
int __real_sw_srq_post_recv(struct sw_srq *ssrq, struct openrdma_recv_wr *wr,
			    struct openrdma_recv_wr **bad_wr);
int __wrap_sw_srq_post_recv(struct sw_srq *ssrq, struct openrdma_recv_wr *wr,
			    struct openrdma_recv_wr **bad_wr);

/* Takes one refusal, if one is left: its code (wr is then the refused
 * one), else 0. */
static int refusal(struct openrdma_recv_wr *wr,
		   struct openrdma_recv_wr **bad_wr)
{
	int left = atomic_load(&refuse_left);

	while (left > 0)
		if (atomic_compare_exchange_weak(&refuse_left, &left,
						 left - 1)) {
			atomic_fetch_add(&refused, 1);
			*bad_wr = wr;
			return atomic_load(&refuse_code);
		}
	return 0;
}

int __wrap_sw_qp_post_recv(struct sw_qp *sqp, struct openrdma_recv_wr *wr,
			   struct openrdma_recv_wr **bad_wr)
{
	int code = refusal(wr, bad_wr);

	return code ? code : __real_sw_qp_post_recv(sqp, wr, bad_wr);
}

int __wrap_sw_srq_post_recv(struct sw_srq *ssrq, struct openrdma_recv_wr *wr,
			    struct openrdma_recv_wr **bad_wr)
{
	int code = refusal(wr, bad_wr);

	return code ? code : __real_sw_srq_post_recv(ssrq, wr, bad_wr);
}

static void refuse(int n, int code)
{
	atomic_store(&refuse_code, code);
	atomic_store(&refused, 0);
	atomic_store(&refuse_left, n);
}

static struct tapi t;

static void setup(void)
{
	tapi_open(&t);
}

static void teardown(void)
{
	refuse(0, 0);
	tapi_close(&t);
}

/* One refused post of a receive into seg on handle (an EP or an SRQ):
 * skips the test if the interface's receives do not come here. */
static void post_refused(it_handle_t handle, const it_lmr_triplet_t *seg,
			 int code, it_status_t want)
{
	it_status_t st;

	refuse(1, code);
	st = it_post_recv(handle, seg, 1, 0xdead, IT_COMPLETION_FLAG);
	if (!atomic_load(&refused))
		cr_skip_test("receives on %s are not posted through the "
			     "software transports' queues",
			     tapi_interface());
	cr_assert_eq(st, want, "refused with %d: status %d", code, (int)st);
}

/* Posts receives of 8 bytes each into dst until the place runs out;
 * returns how many fit, cookies from 1000 up. */
static int fill(it_handle_t handle, struct tapi_buf *dst, int max)
{
	it_lmr_triplet_t seg;
	it_status_t st;
	int n;

	for (n = 0; n < max; n++) {
		seg = tapi_seg(dst, (size_t)n * 8, 8);
		st = it_post_recv(handle, &seg, 1, (it_dto_cookie_t)(1000 + n),
				  IT_COMPLETION_FLAG);
		if (st == IT_ERR_TOO_MANY_POSTS)
			break;
		cr_assert_eq(st, IT_SUCCESS, "receive %d: status %d", n,
			     (int)st);
	}
	return n;
}

/* Sends n messages of 8 bytes from a, each its index, and checks that
 * receives 1000.. took them in order. */
static void exchange(it_ep_handle_t a, it_ep_handle_t b, struct tapi_buf *src,
		     const struct tapi_buf *dst, int n)
{
	it_lmr_triplet_t seg;
	it_event_t ev;
	int i;

	for (i = 0; i < n; i++) {
		memset(src->p + (size_t)i * 8, i + 1, 8);
		seg = tapi_seg(src, (size_t)i * 8, 8);
		cr_assert_eq(it_post_send(a, &seg, 1, 0, 0), IT_SUCCESS);
	}
	for (i = 0; i < n; i++) {
		tapi_wait(t.rq, IT_DTO_RC_RECV_CMPL_EVENT, &ev);
		cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_SUCCESS);
		cr_assert_eq(ev.dto_cmpl.ep, b);
		cr_assert_eq(ev.dto_cmpl.cookie, (it_dto_cookie_t)(1000 + i),
			     "receive %d: cookie %llu", i,
			     (unsigned long long)ev.dto_cmpl.cookie);
		cr_assert_eq(ev.dto_cmpl.transferred_length, 8);
		cr_assert_eq(dst->p[(size_t)i * 8], i + 1);
		cr_assert_eq(dst->p[(size_t)i * 8 + 7], i + 1);
	}
}

Test(itapi_refuse, endpoint_ring_is_given_back, .init = setup, .fini = teardown)
{
	struct tapi_buf src, dst;
	struct tapi_conn c;
	it_lmr_triplet_t seg;
	it_ep_param_t p;
	int i, n, granted;

	tapi_connect(&t, &c, false);
	cr_assert_eq(it_ep_query(c.b, IT_EP_PARAM_MAX_RECV_DTO, &p),
		     IT_SUCCESS);
	granted = (int)p.attr.max_recv_dtos;
	cr_assert_gt(granted, 0);
	tapi_buf_make(&t, &src, (size_t)granted * 8, IT_PRIV_LOCAL);
	tapi_buf_make(&t, &dst, (size_t)granted * 8, IT_PRIV_LOCAL);
	seg = tapi_seg(&dst, 0, 8);

	/* a transport that is out of room says so; one that finds the
	 * endpoint unfit for it, that */
	post_refused(c.b, &seg, -OPENRDMA_ENOMEM, IT_ERR_TOO_MANY_POSTS);
	post_refused(c.b, &seg, -OPENRDMA_EINVAL, IT_ERR_INVALID_EP_STATE);
	/* three rings' worth of refusals take no place */
	refuse(3 * granted, -OPENRDMA_EINVAL);
	for (i = 0; i < 3 * granted; i++)
		cr_assert_eq(it_post_recv(c.b, &seg, 1, 0xdead,
					  IT_COMPLETION_FLAG),
			     IT_ERR_INVALID_EP_STATE);
	cr_assert_eq(atomic_load(&refused), 3 * granted);

	n = fill(c.b, &dst, 4 * granted);
	cr_assert_eq(n, granted, "%d receives fit, %d granted", n, granted);
	/* and no completion names a refused one */
	exchange(c.a, c.b, &src, &dst, n);
}

Test(itapi_refuse, srq_slot_is_given_back, .init = setup, .fini = teardown)
{
	struct tapi_buf src, dst;
	it_ep_attributes_t a = tapi_rc_attr();
	it_srq_handle_t srq, fresh;
	it_lmr_triplet_t seg;
	struct tapi_conn c;
	int i, n, cap;

	tapi_require(t.info->srq_support, "SRQ");
	/* what an SRQ of this size holds when nothing was refused */
	cr_assert_eq(it_srq_create(t.pz, 1, 16, &fresh), IT_SUCCESS);
	tapi_buf_make(&t, &dst, 64 * 8, IT_PRIV_LOCAL);
	cap = fill(fresh, &dst, 64);
	cr_assert_gt(cap, 0);
	cr_assert_eq(it_srq_free(fresh), IT_SUCCESS);

	cr_assert_eq(it_srq_create(t.pz, 1, 16, &srq), IT_SUCCESS);
	a.srv.rc.srq = srq;
	a.srv.rc.atomics_enable = IT_FALSE;
	c.a = tapi_rc_ep(&t);
	cr_assert_eq(it_ep_rc_create(t.pz, t.sq, t.rq, t.cmsg, IT_EP_SRQ, &a,
				     &c.b),
		     IT_SUCCESS);
	tapi_connect_eps(&t, &c, false);

	seg = tapi_seg(&dst, 0, 8);
	post_refused(srq, &seg, -OPENRDMA_ENOMEM, IT_ERR_TOO_MANY_POSTS);
	refuse(3 * cap, -OPENRDMA_EINVAL);
	for (i = 0; i < 3 * cap; i++)
		cr_assert_eq(it_post_recv(srq, &seg, 1, 0xdead,
					  IT_COMPLETION_FLAG),
			     IT_ERR_INVALID_EP_STATE);
	cr_assert_eq(atomic_load(&refused), 3 * cap);

	n = fill(srq, &dst, 64);
	cr_assert_eq(n, cap, "%d receives fit, %d in a fresh SRQ", n, cap);
	tapi_buf_make(&t, &src, (size_t)n * 8, IT_PRIV_LOCAL);
	exchange(c.a, c.b, &src, &dst, n);
}
