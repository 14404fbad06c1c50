/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Bad input to the calls the other files reach only on their good paths:
 * handles no object has, handles of another type, NULL pointers, bad
 * counts and lengths.  Every call must refuse with the code of it_api(7)
 * and the object it names must carry on unharmed.
 */
#include <string.h>
#include <criterion/criterion.h>

#include "tests/itapi/test_api.h"

TestSuite(itapi_handles, .timeout = 60);

static struct tapi t;
static struct tapi_conn c;

static void setup(void)
{
	tapi_open(&t);
	tapi_connect(&t, &c, false);
}

static void teardown(void)
{
	tapi_close(&t);
}

Test(itapi_handles, rdma_posts, .init = setup, .fini = teardown)
{
	struct tapi_buf local, remote;
	it_lmr_triplet_t seg[6], bad;
	it_rmr_triplet_t rseg;
	it_rdma_addr_t ra;
	it_event_t ev;
	int i;

	tapi_buf_make(&t, &local, 4096, IT_PRIV_LOCAL);
	tapi_buf_make(&t, &remote, 4096, IT_PRIV_ALL);
	ra = it_make_rdma_addr_absolute(remote.p);
	for (i = 0; i < 6; i++)
		seg[i] = tapi_seg(&local, (size_t)i * 64, 64);

	/* the endpoint: none, of another type */
	cr_assert_eq(it_post_rdma_write(TAPI_BOGUS, seg, 1, 0, 0, ra,
					remote.rkey),
		     IT_ERR_INVALID_EP);
	cr_assert_eq(it_post_rdma_write((it_ep_handle_t)t.pz, seg, 1, 0, 0, ra,
					remote.rkey),
		     IT_ERR_INVALID_EP);
	cr_assert_eq(it_post_rdma_read(TAPI_BOGUS, seg, 1, 0, 0, ra,
				       remote.rkey),
		     IT_ERR_INVALID_EP);
	cr_assert_eq(it_post_rdma_read((it_ep_handle_t)t.sq, seg, 1, 0, 0, ra,
				       remote.rkey),
		     IT_ERR_INVALID_EP);
	memset(&rseg, 0, sizeof(rseg));
	cr_assert_eq(it_post_rdma_read_to_rmr(TAPI_BOGUS, &rseg, 1, 0, 0, ra,
					      remote.rkey),
		     IT_ERR_INVALID_EP);

	/* the segments: NULL, too many, no LMR (the bounds are the device's) */
	cr_assert_eq(it_post_rdma_write(c.a, NULL, 1, 0, 0, ra, remote.rkey),
		     IT_ERR_FAULT);
	cr_assert_eq(it_post_rdma_read(c.a, NULL, 1, 0, 0, ra, remote.rkey),
		     IT_ERR_FAULT);
	cr_assert_eq(it_post_rdma_write(c.a, seg, 6, 0, 0, ra, remote.rkey),
		     IT_ERR_INVALID_NUM_SEGMENTS);
	cr_assert_eq(it_post_rdma_read(c.a, seg, 6, 0, 0, ra, remote.rkey),
		     IT_ERR_INVALID_NUM_SEGMENTS);
	bad = seg[0];
	bad.lmr = TAPI_BOGUS;
	cr_assert_eq(it_post_rdma_write(c.a, &bad, 1, 0, 0, ra, remote.rkey),
		     IT_ERR_INVALID_LMR);
	bad.lmr = (it_lmr_handle_t)t.pz;
	cr_assert_eq(it_post_rdma_read(c.a, &bad, 1, 0, 0, ra, remote.rkey),
		     IT_ERR_INVALID_LMR);
	/* unknown flags */
	cr_assert_eq(it_post_rdma_write(c.a, seg, 1, 0, (it_dto_flags_t)0x8000,
					ra, remote.rkey),
		     IT_ERR_INVALID_DTO_FLAGS);

	/* none of it reached the endpoint, which still works */
	cr_assert_eq(it_evd_dequeue(t.sq, &ev), IT_ERR_QUEUE_EMPTY);
	cr_assert_eq(it_post_rdma_write(c.a, seg, 1, 9, IT_COMPLETION_FLAG, ra,
					remote.rkey),
		     IT_SUCCESS);
	tapi_wait(t.sq, IT_DTO_RDMA_WRITE_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.cookie, 9);
	cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_SUCCESS);
}

Test(itapi_handles, atomic_and_datagram_posts, .init = setup, .fini = teardown)
{
	struct tapi_buf local, remote;
	it_dg_remote_ep_addr_t dst;
	it_lmr_triplet_t seg, bad;
	it_rdma_addr_t ra;

	tapi_buf_make(&t, &local, 64, IT_PRIV_LOCAL);
	tapi_buf_make(&t, &remote, 64, IT_PRIV_ALL);
	ra = it_make_rdma_addr_absolute(remote.p);
	seg = tapi_seg(&local, 0, 8);

	cr_assert_eq(it_post_atomic(TAPI_BOGUS, IT_FETCH_AND_ADD, 1, 0, &seg, 0,
				    0, ra, remote.rkey),
		     IT_ERR_INVALID_EP);
	cr_assert_eq(it_post_atomic((it_ep_handle_t)t.ia, IT_FETCH_AND_ADD, 1,
				    0, &seg, 0, 0, ra, remote.rkey),
		     IT_ERR_INVALID_EP);
	if (t.info->atomic_support) {
		cr_assert_eq(it_post_atomic(c.a, IT_FETCH_AND_ADD, 1, 0, NULL,
					    0, 0, ra, remote.rkey),
			     IT_ERR_FAULT);
		cr_assert_eq(it_post_atomic(c.a, (it_atomic_op_t)9, 1, 0, &seg,
					    0, 0, ra, remote.rkey),
			     IT_ERR_INVALID_ATOMIC_OP);
		/* the result is one 64-bit word */
		bad = tapi_seg(&local, 0, 4);
		cr_assert_eq(it_post_atomic(c.a, IT_FETCH_AND_ADD, 1, 0, &bad,
					    0, 0, ra, remote.rkey),
			     IT_ERR_INVALID_LENGTH);
	}

	/* the datagram calls refuse an RC endpoint */
	memset(&dst, 0, sizeof(dst));
	cr_assert_eq(it_post_sendto(c.a, &seg, 1, 0, 0, &dst),
		     IT_ERR_INVALID_EP_TYPE);
	cr_assert_eq(it_post_recvfrom(c.a, &seg, 1, 0, 0),
		     IT_ERR_INVALID_EP_TYPE);
	cr_assert_eq(it_post_recvfrom(TAPI_BOGUS, &seg, 1, 0, 0),
		     IT_ERR_INVALID_EP);
	cr_assert_eq(it_post_sendto(TAPI_BOGUS, &seg, 1, 0, 0, &dst),
		     IT_ERR_INVALID_EP);
	/* a receive on something that is neither an EP nor an SRQ */
	cr_assert_eq(it_post_recv((it_handle_t)t.pz, &seg, 1, 0, 0),
		     IT_ERR_INVALID_HANDLE);
}

Test(itapi_handles, memory, .init = setup, .fini = teardown)
{
	unsigned char buf[256];
	struct tapi_buf b;
	it_lmr_handle_t lmr;
	it_rmr_handle_t rmr;
	it_rmr_context_t key;
	it_lmr_triplet_t seg;

	tapi_buf_make(&t, &b, 256, IT_PRIV_ALL);
	cr_assert_eq(it_lmr_create20(TAPI_BOGUS, buf, sizeof(buf),
				     IT_ADDR_MODE_ABSOLUTE, IT_PRIV_LOCAL, 0, 0,
				     &lmr, &key),
		     IT_ERR_INVALID_PZ);
	cr_assert_eq(it_lmr_create20((it_pz_handle_t)t.ia, buf, sizeof(buf),
				     IT_ADDR_MODE_ABSOLUTE, IT_PRIV_LOCAL, 0, 0,
				     &lmr, &key),
		     IT_ERR_INVALID_PZ);
	cr_assert_eq(it_lmr_create20(t.pz, buf, sizeof(buf),
				     IT_ADDR_MODE_ABSOLUTE, IT_PRIV_LOCAL, 0, 0,
				     NULL, &key),
		     IT_ERR_FAULT);
	cr_assert_eq(
		it_lmr_create20(t.pz, buf, sizeof(buf), IT_ADDR_MODE_ABSOLUTE,
				(it_mem_priv_t)0x40000000, 0, 0, &lmr, &key),
		IT_ERR_INVALID_PRIVS);

	/* the sync calls check their segments */
	cr_assert_eq(it_lmr_refresh_from_mem(NULL, 1), IT_ERR_FAULT);
	seg = tapi_seg(&b, 0, 256);
	seg.lmr = TAPI_BOGUS;
	cr_assert_eq(it_lmr_refresh_from_mem(&seg, 1), IT_ERR_INVALID_LMR);
	seg = tapi_seg(&b, 200, 100);
	cr_assert_eq(it_lmr_refresh_from_mem(&seg, 1), IT_ERR_INVALID_LENGTH);
	seg = tapi_seg(&b, 0, 256);
	cr_assert_eq(it_lmr_refresh_from_mem(&seg, 1), IT_SUCCESS);

	/* the v1.0 bind takes the checks of the link */
	if (!t.info->rmr_types_supported)
		return;
	cr_assert_eq(it_rmr_create20(t.pz, IT_RMR_TYPE_DEFAULT, &rmr),
		     IT_SUCCESS);
	cr_assert_eq(it_rmr_bind10(TAPI_BOGUS, b.lmr, b.p, 256,
				   IT_PRIV_REMOTE_WRITE, c.b, 0, 0, &key),
		     IT_ERR_INVALID_RMR);
	cr_assert_eq(it_rmr_bind10((it_rmr_handle_t)b.lmr, b.lmr, b.p, 256,
				   IT_PRIV_REMOTE_WRITE, c.b, 0, 0, &key),
		     IT_ERR_INVALID_RMR);
	cr_assert_eq(it_rmr_bind10(rmr, TAPI_BOGUS, b.p, 256,
				   IT_PRIV_REMOTE_WRITE, c.b, 0, 0, &key),
		     IT_ERR_INVALID_LMR);
	cr_assert_eq(it_rmr_bind10(rmr, b.lmr, b.p, 256, IT_PRIV_REMOTE_WRITE,
				   TAPI_BOGUS, 0, 0, &key),
		     IT_ERR_INVALID_EP);
	cr_assert_eq(it_rmr_bind10(rmr, b.lmr, b.p + 128, 256,
				   IT_PRIV_REMOTE_WRITE, c.b, 0, 0, &key),
		     IT_ERR_INVALID_LENGTH);
	cr_assert_eq(it_rmr_free(rmr), IT_SUCCESS);
}

Test(itapi_handles, events_and_connections, .init = setup, .fini = teardown)
{
	it_remote_ep_info_t info;
	it_ud_svc_req_param_t sp;

	cr_assert_eq(it_evd_callback_detach(TAPI_BOGUS), IT_ERR_INVALID_EVD);
	cr_assert_eq(it_evd_callback_detach((it_evd_handle_t)c.a),
		     IT_ERR_INVALID_EVD);
	/* nothing attached */
	cr_assert_eq(it_evd_callback_detach(t.sq), IT_ERR_INVALID_EVD_STATE);

	cr_assert_eq(it_listen_free(TAPI_BOGUS), IT_ERR_INVALID_LISTEN);
	cr_assert_eq(it_listen_free((it_listen_handle_t)t.creq),
		     IT_ERR_INVALID_LISTEN);
	cr_assert_eq(it_listen_free(c.listen), IT_SUCCESS);

	memset(&info, 0, sizeof(info));
	cr_assert_eq(it_ud_service_reply(0x7fffffffffffull,
					 IT_UD_SVC_REQ_REJECTED, info, NULL, 0),
		     IT_ERR_INVALID_UD_SVC_REQ_ID);
	cr_assert_eq(it_ud_service_request_handle_query(TAPI_BOGUS,
							IT_UD_PARAM_ALL, &sp),
		     IT_ERR_INVALID_UD_SVC);
	cr_assert_eq(
		it_ud_service_request_handle_query((it_ud_svc_req_handle_t)t.pz,
						   IT_UD_PARAM_ALL, &sp),
		IT_ERR_INVALID_UD_SVC);
	cr_assert_eq(it_socket_convert(3, c.a, IT_SC_DEFAULT, NULL, 4),
		     IT_ERR_FAULT);

	/* the connection is untouched by all of it */
	tapi_disconnect(&t, &c);
}

/*
 * A request refused for its local memory: a local protection error, or
 * on a device a local EP error, as it may report a QP operation error
 * instead (rxe for another PD's key, siw for a segment past its region).
 */
static void local_error_check(const it_event_t *ev)
{
	it_dto_status_t st = ev->dto_cmpl.dto_status;

	if (t.info->transport_type == IT_VENDOR_TRANSPORT)
		cr_assert_eq(st, IT_DTO_ERR_LOCAL_PROTECTION);
	else
		cr_assert(st == IT_DTO_ERR_LOCAL_PROTECTION ||
				  st == IT_DTO_ERR_LOCAL_EP,
			  "status %d", (int)st);
}

/*
 * An RDMA write from [off, off + len) of a 4 KiB LMR, past its end: a
 * local error, and nothing written at the target.
 */
static void write_past_lmr(size_t off, size_t len)
{
	struct tapi_buf local, remote;
	it_lmr_triplet_t seg;
	it_event_t ev;
	size_t i;

	tapi_buf_make(&t, &local, 4096, IT_PRIV_LOCAL);
	tapi_buf_make(&t, &remote, 4096, IT_PRIV_ALL);
	memset(remote.p, 0x5a, remote.len);
	seg = tapi_seg(&local, off, len);
	cr_assert_eq(it_post_rdma_write(c.a, &seg, 1, 5, IT_COMPLETION_FLAG,
					it_make_rdma_addr_absolute(remote.p),
					remote.rkey),
		     IT_SUCCESS);
	tapi_wait(t.sq, IT_DTO_RDMA_WRITE_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.cookie, 5);
	local_error_check(&ev);
	for (i = 0; i < remote.len; i++)
		cr_assert_eq(remote.p[i], 0x5a, "byte %zu written", i);
}

/* The bounds of a segment in its LMR are checked where the data moves. */
Test(itapi_handles, segment_outside_lmr, .init = setup, .fini = teardown)
{
	write_past_lmr(4000, 200);
}

/*
 * Requests short enough to go inline (inline_max) are checked as the
 * device would check them: a device does not look at an inline payload's
 * lkey.
 */
Test(itapi_handles, inline_sized_segment_outside_lmr, .init = setup,
     .fini = teardown)
{
	write_past_lmr(4080, 32);
}

Test(itapi_handles, inline_sized_send_from_other_pz, .init = setup,
     .fini = teardown)
{
	struct tapi_buf rbuf;
	it_lmr_handle_t lmr;
	it_rmr_context_t rkey;
	it_lmr_triplet_t seg;
	it_pz_handle_t pz2;
	unsigned char buf[64];
	it_event_t ev;

	tapi_buf_make(&t, &rbuf, 64, IT_PRIV_LOCAL);
	tapi_post_recv(c.b, &rbuf, 0, 64, 1);
	cr_assert_eq(it_pz_create(t.ia, &pz2), IT_SUCCESS);
	memset(buf, 0x77, sizeof(buf));
	cr_assert_eq(it_lmr_create21(pz2, buf, NULL, sizeof(buf),
				     IT_ADDR_MODE_ABSOLUTE, IT_PRIV_LOCAL, 0, 0,
				     &lmr, &rkey),
		     IT_SUCCESS);
	seg.lmr = lmr;
	seg.addr.abs = buf;
	seg.length = 16;
	cr_assert_eq(it_post_send(c.a, &seg, 1, 7, IT_COMPLETION_FLAG),
		     IT_SUCCESS);
	tapi_wait(t.sq, IT_DTO_SEND_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.cookie, 7);
	local_error_check(&ev);
	cr_assert_eq(rbuf.p[0], 0, "the payload arrived");
	cr_assert_eq(it_lmr_free(lmr), IT_SUCCESS);
	cr_assert_eq(it_pz_free(pz2), IT_SUCCESS);
}
