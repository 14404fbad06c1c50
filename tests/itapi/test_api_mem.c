/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Protection zones, LMRs (every create form, link and unlink, modify,
 * query, sync) and RMRs (narrow and wide: link, remote access, unlink,
 * remote invalidation), with their argument checks.
 */
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>

#include "tests/itapi/test_api.h"

TestSuite(itapi_mem, .timeout = 60);

static struct tapi t;

static void setup(void)
{
	tapi_open(&t);
}

static void teardown(void)
{
	tapi_close(&t);
}

Test(itapi_mem, pz, .init = setup, .fini = teardown)
{
	it_pz_handle_t pz = (it_pz_handle_t)0x1;
	it_pz_param_t p;
	struct tapi_buf b;

	cr_assert_eq(it_pz_create(TAPI_BOGUS, &pz), IT_ERR_INVALID_IA);
	cr_assert_eq(it_pz_create(t.ia, NULL), IT_ERR_FAULT);
	cr_assert_eq(pz, (it_pz_handle_t)0x1);
	cr_assert_eq(it_pz_create(t.ia, &pz), IT_SUCCESS);
	cr_assert_eq(it_pz_query(pz, IT_PZ_PARAM_ALL, &p), IT_SUCCESS);
	cr_assert_eq(p.ia, t.ia);
	cr_assert_eq(it_pz_query(pz, (it_pz_param_mask_t)0x80, &p),
		     IT_ERR_INVALID_MASK);
	cr_assert_eq(it_pz_query(pz, IT_PZ_PARAM_IA, NULL), IT_ERR_FAULT);
	cr_assert_eq(it_pz_query(TAPI_BOGUS, IT_PZ_PARAM_IA, &p),
		     IT_ERR_INVALID_PZ);
	/* a PZ with an LMR is busy */
	tapi_buf_make(&t, &b, 64, IT_PRIV_LOCAL);
	cr_assert_eq(it_pz_free(t.pz), IT_ERR_PZ_BUSY);
	tapi_buf_free(&b);
	cr_assert_eq(it_pz_free(pz), IT_SUCCESS);
	cr_assert_eq(it_pz_free(TAPI_BOGUS), IT_ERR_INVALID_PZ);
	cr_assert_eq(it_pz_free((it_pz_handle_t)t.ia), IT_ERR_INVALID_PZ);
}

Test(itapi_mem, lmr_create_forms, .init = setup, .fini = teardown)
{
	unsigned char buf[512];
	it_lmr_handle_t lmr = (it_lmr_handle_t)0x1;
	it_rmr_context_t key = 7;
	it_iobl_t iobl;

	cr_assert_eq(it_lmr_create10(TAPI_BOGUS, buf, 512, IT_PRIV_LOCAL, 0, 0,
				     &lmr, &key),
		     IT_ERR_INVALID_PZ);
	cr_assert_eq(it_lmr_create10(t.pz, buf, 512, (it_mem_priv_t)0x100, 0, 0,
				     &lmr, &key),
		     IT_ERR_INVALID_PRIVS);
	cr_assert_eq(it_lmr_create10(t.pz, buf, 512, IT_PRIV_LOCAL,
				     (it_lmr_flag_t)0x40, 0, &lmr, &key),
		     IT_ERR_INVALID_FLAGS);
	cr_assert_eq(it_lmr_create10(t.pz, NULL, 512, IT_PRIV_LOCAL, 0, 0, &lmr,
				     &key),
		     IT_ERR_INVALID_ADDRESS);
	cr_assert_eq(it_lmr_create10(t.pz, buf, 512, IT_PRIV_LOCAL, 0, 0, NULL,
				     &key),
		     IT_ERR_FAULT);
	cr_assert_eq(it_lmr_create10(t.pz, buf, (it_length_t)-1, IT_PRIV_LOCAL,
				     0, 0, &lmr, &key),
		     IT_ERR_RESOURCE_LMR_LENGTH);
	cr_assert_eq(it_lmr_create20(t.pz, buf, 512, (it_addr_mode_t)5,
				     IT_PRIV_LOCAL, 0, 0, &lmr, &key),
		     IT_ERR_INVALID_ADDR_MODE);
	cr_assert_eq(it_lmr_create10(t.pz, buf, 512, IT_PRIV_LOCAL,
				     IT_LMR_FLAG_SHARED, 0, &lmr, &key),
		     IT_ERR_OP_NOT_SUPPORTED);
	/* I/O buffer lists are for privileged consumers */
	memset(&iobl, 0, sizeof(iobl));
	cr_assert_eq(it_lmr_create21(t.pz, NULL, &iobl, 512,
				     IT_ADDR_MODE_ABSOLUTE, IT_PRIV_LOCAL, 0, 0,
				     &lmr, &key),
		     IT_ERR_OP_NOT_SUPPORTED);
	cr_assert_eq(lmr, (it_lmr_handle_t)0x1);
	cr_assert_eq(key, 7);

	cr_assert_eq(it_lmr_create10(t.pz, buf, 512, IT_PRIV_ALL, 0, 0, &lmr,
				     &key),
		     IT_SUCCESS);
	cr_assert_eq(it_lmr_free(lmr), IT_SUCCESS);
	cr_assert_eq(it_lmr_create20(t.pz, buf, 512, IT_ADDR_MODE_ABSOLUTE,
				     IT_PRIV_DEFAULT, IT_LMR_FLAG_NONCOHERENT,
				     0, &lmr, NULL),
		     IT_SUCCESS);
	cr_assert_eq(it_lmr_free(lmr), IT_SUCCESS);
	cr_assert_eq(it_lmr_create21(t.pz, buf, NULL, 0, IT_ADDR_MODE_ABSOLUTE,
				     IT_PRIV_LOCAL, 0, 0, &lmr, &key),
		     IT_SUCCESS);
	cr_assert_eq(it_lmr_free(lmr), IT_SUCCESS);
	cr_assert_eq(it_lmr_free(TAPI_BOGUS), IT_ERR_INVALID_LMR);
	cr_assert_eq(it_lmr_free(NULL), IT_ERR_INVALID_LMR);
}

Test(itapi_mem, lmr_query_modify, .init = setup, .fini = teardown)
{
	unsigned char *buf = malloc(8192);
	it_lmr_param_t p;
	it_pz_handle_t pz2;
	it_lmr_handle_t lmr;
	it_rmr_context_t key;

	cr_assert_eq(it_lmr_create21(t.pz, buf, NULL, 4096,
				     IT_ADDR_MODE_ABSOLUTE, IT_PRIV_LOCAL, 0,
				     42, &lmr, &key),
		     IT_SUCCESS);
	cr_assert_eq(it_lmr_query(lmr, IT_LMR_PARAM_ALL, &p), IT_SUCCESS);
	cr_assert_eq(p.ia, t.ia);
	cr_assert_eq(p.pz, t.pz);
	cr_assert_eq(p.addr, buf);
	cr_assert_eq(p.length, 4096);
	cr_assert_eq(p.privs, IT_PRIV_LOCAL);
	cr_assert_eq(p.shared_id, 42);
	cr_assert_eq(p.rmr_context, key);
	cr_assert_eq(p.actual_addr, buf);
	cr_assert_eq(p.actual_length, 4096);
	cr_assert_eq(p.addr_mode, IT_ADDR_MODE_ABSOLUTE);
	cr_assert_eq(p.linked, IT_TRUE);
	cr_assert_eq(it_lmr_query(lmr, (it_lmr_param_mask_t)0x100000, &p),
		     IT_ERR_INVALID_MASK);
	cr_assert_eq(it_lmr_query(lmr, IT_LMR_PARAM_ALL, NULL), IT_ERR_FAULT);
	cr_assert_eq(it_lmr_query(TAPI_BOGUS, IT_LMR_PARAM_ALL, &p),
		     IT_ERR_INVALID_LMR);

	/* re-registration: a new range, privileges and PZ */
	cr_assert_eq(it_pz_create(t.ia, &pz2), IT_SUCCESS);
	p.addr = buf + 4096;
	p.length = 4096;
	p.privs = IT_PRIV_ALL;
	p.pz = pz2;
	cr_assert_eq(it_lmr_modify(lmr,
				   IT_LMR_PARAM_ADDR | IT_LMR_PARAM_LENGTH |
					   IT_LMR_PARAM_MEM_PRIV |
					   IT_LMR_PARAM_PZ,
				   &p),
		     IT_SUCCESS);
	memset(&p, 0, sizeof(p));
	cr_assert_eq(it_lmr_query(lmr, IT_LMR_PARAM_ALL, &p), IT_SUCCESS);
	cr_assert_eq(p.addr, buf + 4096);
	cr_assert_eq(p.privs, IT_PRIV_ALL);
	cr_assert_eq(p.pz, pz2);
	cr_assert_eq(it_pz_free(pz2), IT_ERR_PZ_BUSY);
	cr_assert_eq(it_lmr_modify(lmr, IT_LMR_PARAM_SHARED_ID, &p),
		     IT_ERR_INVALID_MASK);
	p.privs = (it_mem_priv_t)0x400;
	cr_assert_eq(it_lmr_modify(lmr, IT_LMR_PARAM_MEM_PRIV, &p),
		     IT_ERR_INVALID_PRIVS);
	p.pz = TAPI_BOGUS;
	cr_assert_eq(it_lmr_modify(lmr, IT_LMR_PARAM_PZ, &p),
		     IT_ERR_INVALID_PZ);
	cr_assert_eq(it_lmr_modify(lmr, IT_LMR_PARAM_PZ, NULL), IT_ERR_FAULT);
	cr_assert_eq(it_lmr_free(lmr), IT_SUCCESS);
	cr_assert_eq(it_pz_free(pz2), IT_SUCCESS);
	free(buf);
}

Test(itapi_mem, lmr_sync, .init = setup, .fini = teardown)
{
	struct tapi_buf b;
	it_lmr_triplet_t seg[2];

	tapi_buf_make(&t, &b, 256, IT_PRIV_LOCAL);
	seg[0] = tapi_seg(&b, 0, 128);
	seg[1] = tapi_seg(&b, 128, 128);
	cr_assert_eq(it_lmr_flush_to_mem(seg, 2), IT_SUCCESS);
	cr_assert_eq(it_lmr_refresh_from_mem(seg, 2), IT_SUCCESS);
	cr_assert_eq(it_lmr_sync_rdma_read(seg, 1), IT_SUCCESS);
	seg[1].length = 129;
	cr_assert_eq(it_lmr_flush_to_mem(seg, 2), IT_ERR_INVALID_LENGTH);
	seg[1].lmr = TAPI_BOGUS;
	cr_assert_eq(it_lmr_refresh_from_mem(seg, 2), IT_ERR_INVALID_LMR);
	cr_assert_eq(it_lmr_flush_to_mem(NULL, 1), IT_ERR_FAULT);
	cr_assert_eq(it_mem_map(TAPI_BOGUS, b.p, 0, 256, NULL, NULL),
		     IT_ERR_INVALID_IA);
	cr_assert_eq(it_mem_map(t.ia, b.p, 0, 256, NULL, NULL),
		     IT_ERR_OP_NOT_SUPPORTED);
	cr_assert_eq(it_mem_unmap(t.ia, NULL, 256), IT_ERR_OP_NOT_SUPPORTED);
}

Test(itapi_mem, lmr_link_unlink, .init = setup, .fini = teardown)
{
	struct tapi_conn c;
	struct tapi_buf src;
	unsigned char dst[128];
	it_lmr_handle_t lmr;
	it_rmr_context_t key = 0;
	it_lmr_triplet_t seg;
	it_lmr_param_t p;
	it_event_t ev;

	tapi_connect(&t, &c, false);
	cr_assert_eq(it_lmr_create_unlinked(TAPI_BOGUS, 0, 0, 0, &lmr),
		     IT_ERR_INVALID_PZ);
	cr_assert_eq(it_lmr_create_unlinked(t.pz, 0, 0, 0, NULL), IT_ERR_FAULT);
	cr_assert_eq(it_lmr_create_unlinked(t.pz, 0, 0, 0, &lmr), IT_SUCCESS);
	cr_assert_eq(it_lmr_query(lmr, IT_LMR_PARAM_LINKED, &p), IT_SUCCESS);
	cr_assert_eq(p.linked, IT_FALSE);
	cr_assert_eq(it_lmr_unlink(lmr, c.b, 0, 0), IT_ERR_INVALID_LMR);
	cr_assert_eq(it_lmr_link(lmr, dst, NULL, sizeof(dst),
				 IT_ADDR_MODE_ABSOLUTE, IT_PRIV_ALL, TAPI_BOGUS,
				 0, 0, &key),
		     IT_ERR_INVALID_EP);

	memset(dst, 0, sizeof(dst));
	cr_assert_eq(it_lmr_link(lmr, dst, NULL, sizeof(dst),
				 IT_ADDR_MODE_ABSOLUTE, IT_PRIV_ALL, c.b, 71,
				 IT_COMPLETION_FLAG, &key),
		     IT_SUCCESS);
	tapi_wait(t.sq, IT_LMR_LINK_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.ep, c.b);
	cr_assert_eq(ev.dto_cmpl.cookie, 71);
	cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_SUCCESS);
	cr_assert_eq(it_lmr_link(lmr, dst, NULL, sizeof(dst),
				 IT_ADDR_MODE_ABSOLUTE, IT_PRIV_ALL, c.b, 0, 0,
				 &key),
		     IT_ERR_INVALID_LMR);
	/* the linked region takes remote writes */
	tapi_buf_make(&t, &src, 128, IT_PRIV_LOCAL);
	memset(src.p, 0x3c, 128);
	seg = tapi_seg(&src, 0, 128);
	cr_assert_eq(it_post_rdma_write(c.a, &seg, 1, 72, IT_COMPLETION_FLAG,
					it_make_rdma_addr_absolute(dst), key),
		     IT_SUCCESS);
	tapi_wait(t.sq, IT_DTO_RDMA_WRITE_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_SUCCESS);
	cr_assert_arr_eq(dst, src.p, 128);

	cr_assert_eq(it_lmr_unlink(lmr, c.b, 73, IT_COMPLETION_FLAG),
		     IT_SUCCESS);
	tapi_wait(t.sq, IT_LMR_LINK_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.cookie, 73);
	/* unlinked: the key no longer works */
	memset(src.p, 0xa5, 128);
	cr_assert_eq(it_post_rdma_write(c.a, &seg, 1, 74, IT_COMPLETION_FLAG,
					it_make_rdma_addr_absolute(dst), key),
		     IT_SUCCESS);
	tapi_wait_write_refused(&t, c.a, 74);
	memset(src.p, 0x3c, 128);
	cr_assert_arr_eq(dst, src.p, 128, "the refused write landed");
	cr_assert_eq(it_lmr_free(lmr), IT_SUCCESS);
}

/*
 * Links and unlinks complete on the endpoint's request SEVD in the order
 * they were posted among the endpoint's other requests.
 */
Test(itapi_mem, lmr_link_order, .init = setup, .fini = teardown)
{
	struct tapi_conn c;
	struct tapi_buf src, dst;
	it_lmr_handle_t lmr;
	it_lmr_triplet_t seg;
	it_rmr_context_t key = 0;
	unsigned char *mem;
	it_event_t ev;

	tapi_connect(&t, &c, false);
	tapi_buf_make(&t, &src, 64, IT_PRIV_LOCAL);
	tapi_buf_make(&t, &dst, 256, IT_PRIV_LOCAL);
	cr_assert_eq(posix_memalign((void **)&mem, 64, 256), 0);
	t.mem[t.num_mem++] = mem;
	memset(mem, 0x11, 256);
	tapi_post_recv(c.b, &dst, 0, 64, 1);
	tapi_post_recv(c.b, &dst, 64, 64, 2);
	seg = tapi_seg(&src, 0, 64);

	cr_assert_eq(it_lmr_create_unlinked(t.pz, 0, 0, 0, &lmr), IT_SUCCESS);
	cr_assert_eq(it_post_send(c.a, &seg, 1, 101, IT_COMPLETION_FLAG),
		     IT_SUCCESS);
	cr_assert_eq(it_lmr_link(lmr, mem, NULL, 256, IT_ADDR_MODE_ABSOLUTE,
				 IT_PRIV_LOCAL, c.a, 102, IT_COMPLETION_FLAG,
				 &key),
		     IT_SUCCESS);
	/* the new LMR serves at once, before its link completion is seen */
	seg = tapi_seg(&src, 0, 64);
	seg.lmr = lmr;
	seg.addr.abs = mem;
	cr_assert_eq(it_post_send(c.a, &seg, 1, 103, IT_COMPLETION_FLAG),
		     IT_SUCCESS);

	tapi_wait(t.sq, IT_DTO_SEND_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.cookie, 101);
	tapi_wait(t.sq, IT_LMR_LINK_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.cookie, 102);
	cr_assert_eq(ev.dto_cmpl.ep, c.a);
	cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_SUCCESS);
	tapi_wait(t.sq, IT_DTO_SEND_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.cookie, 103);
	cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_SUCCESS);
	tapi_wait(t.rq, IT_DTO_RC_RECV_CMPL_EVENT, &ev);
	tapi_wait(t.rq, IT_DTO_RC_RECV_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.cookie, 2);
	cr_assert_eq(dst.p[64], 0x11);

	/* an unlink without IT_COMPLETION_FLAG reports nothing */
	cr_assert_eq(it_lmr_unlink(lmr, c.a, 105, 0), IT_SUCCESS);
	cr_assert_eq(it_post_send(c.a, &seg, 1, 106, IT_COMPLETION_FLAG),
		     IT_ERR_INVALID_LMR, "a send from an unlinked LMR");
	cr_assert_eq(it_lmr_link(lmr, mem, NULL, 128, IT_ADDR_MODE_ABSOLUTE,
				 IT_PRIV_LOCAL, c.a, 107, IT_COMPLETION_FLAG,
				 NULL),
		     IT_SUCCESS, "linked again, without asking for the key");
	tapi_wait(t.sq, IT_LMR_LINK_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.cookie, 107);
	cr_assert_eq(it_evd_dequeue(t.sq, &ev), IT_ERR_QUEUE_EMPTY);
	cr_assert_eq(it_lmr_free(lmr), IT_SUCCESS);
}

/* Every misuse of fast registration is refused, and changes nothing. */
Test(itapi_mem, lmr_link_errors, .init = setup, .fini = teardown)
{
	struct tapi_conn c;
	struct tapi_buf plain, src;
	unsigned char mem[128];
	it_lmr_handle_t lmr;
	it_pz_handle_t pz2;
	it_ep_handle_t ep2;
	it_rmr_context_t key = 0;
	it_lmr_triplet_t seg, pseg;
	it_lmr_param_t p;
	it_iobl_t iobl;
	it_event_t ev;

	tapi_connect(&t, &c, false);
	tapi_buf_make(&t, &plain, 64, IT_PRIV_LOCAL);
	tapi_buf_make(&t, &src, 64, IT_PRIV_LOCAL);
	cr_assert_eq(it_lmr_create_unlinked(t.pz, 0, 0, 0, &lmr), IT_SUCCESS);

	/* an unlinked LMR in a post, of every kind */
	seg.lmr = lmr;
	seg.addr.abs = mem;
	seg.length = sizeof(mem);
	cr_assert_eq(it_post_send(c.a, &seg, 1, 1, IT_COMPLETION_FLAG),
		     IT_ERR_INVALID_LMR);
	cr_assert_eq(it_post_recv(c.b, &seg, 1, 1, IT_COMPLETION_FLAG),
		     IT_ERR_INVALID_LMR);
	cr_assert_eq(it_post_rdma_read(c.a, &seg, 1, 1, IT_COMPLETION_FLAG,
				       it_make_rdma_addr_absolute(src.p),
				       src.rkey),
		     IT_ERR_INVALID_LMR);
	cr_assert_eq(it_lmr_flush_to_mem(&seg, 1), IT_ERR_INVALID_LMR);

	/* wrong handles: bogus, freed-type, another PZ, a plain LMR */
	cr_assert_eq(it_lmr_link(TAPI_BOGUS, mem, NULL, sizeof(mem),
				 IT_ADDR_MODE_ABSOLUTE, IT_PRIV_LOCAL, c.a, 0,
				 0, &key),
		     IT_ERR_INVALID_LMR);
	cr_assert_eq(it_lmr_link((it_lmr_handle_t)c.a, mem, NULL, sizeof(mem),
				 IT_ADDR_MODE_ABSOLUTE, IT_PRIV_LOCAL, c.a, 0,
				 0, &key),
		     IT_ERR_INVALID_LMR);
	cr_assert_eq(it_lmr_link(lmr, mem, NULL, sizeof(mem),
				 IT_ADDR_MODE_ABSOLUTE, IT_PRIV_LOCAL,
				 (it_ep_handle_t)lmr, 0, 0, &key),
		     IT_ERR_INVALID_EP);
	cr_assert_eq(it_lmr_link(plain.lmr, mem, NULL, sizeof(mem),
				 IT_ADDR_MODE_ABSOLUTE, IT_PRIV_LOCAL, c.a, 0,
				 0, &key),
		     IT_ERR_INVALID_LMR);
	cr_assert_eq(it_lmr_unlink(plain.lmr, c.a, 0, 0), IT_ERR_INVALID_LMR);
	cr_assert_eq(it_lmr_unlink(TAPI_BOGUS, c.a, 0, 0), IT_ERR_INVALID_LMR);
	cr_assert_eq(it_lmr_unlink(lmr, TAPI_BOGUS, 0, 0), IT_ERR_INVALID_EP);
	cr_assert_eq(it_pz_create(t.ia, &pz2), IT_SUCCESS);
	{
		it_ep_attributes_t a = tapi_rc_attr();

		a.srv.rc.atomics_enable = t.info->atomic_support;
		cr_assert_eq(it_ep_rc_create(pz2, t.sq, t.rq, t.cmsg,
					     IT_EP_NO_FLAG, &a, &ep2),
			     IT_SUCCESS);
	}
	cr_assert_eq(it_lmr_link(lmr, mem, NULL, sizeof(mem),
				 IT_ADDR_MODE_ABSOLUTE, IT_PRIV_LOCAL, ep2, 0,
				 0, &key),
		     IT_ERR_INVALID_PZ);

	/* bad arguments */
	cr_assert_eq(it_lmr_link(lmr, mem, NULL, sizeof(mem),
				 IT_ADDR_MODE_ABSOLUTE, IT_PRIV_LOCAL, c.a, 0,
				 0x40000000, &key),
		     IT_ERR_INVALID_DTO_FLAGS);
	cr_assert_eq(it_lmr_unlink(lmr, c.a, 0, 0x40000000),
		     IT_ERR_INVALID_DTO_FLAGS);
	cr_assert_eq(it_lmr_link(lmr, mem, NULL, sizeof(mem),
				 IT_ADDR_MODE_ABSOLUTE, 0x40000000, c.a, 0, 0,
				 &key),
		     IT_ERR_INVALID_PRIVS);
	cr_assert_eq(it_lmr_link(lmr, mem, NULL, sizeof(mem), (it_addr_mode_t)7,
				 IT_PRIV_LOCAL, c.a, 0, 0, &key),
		     IT_ERR_INVALID_ADDR_MODE);
	cr_assert_eq(it_lmr_link(lmr, NULL, NULL, sizeof(mem),
				 IT_ADDR_MODE_ABSOLUTE, IT_PRIV_LOCAL, c.a, 0,
				 0, &key),
		     IT_ERR_INVALID_ADDRESS);
	/* I/O buffer lists are privileged (it_api(7)) */
	memset(&iobl, 0, sizeof(iobl));
	cr_assert_eq(it_lmr_link(lmr, NULL, &iobl, sizeof(mem),
				 IT_ADDR_MODE_ABSOLUTE, IT_PRIV_LOCAL, c.a, 0,
				 0, &key),
		     IT_ERR_OP_NOT_SUPPORTED);
	/* and the core cannot invalidate a local key by a work request */
	pseg = tapi_seg(&plain, 0, 64);
	cr_assert_eq(
		it_post_rdma_read(c.a, &pseg, 1, 1,
				  IT_COMPLETION_FLAG | IT_UNLINK_LOCAL_SINK,
				  it_make_rdma_addr_absolute(src.p), src.rkey),
		IT_ERR_OP_NOT_SUPPORTED);
	/* none of them linked it, nor queued an event */
	cr_assert_eq(it_lmr_query(lmr, IT_LMR_PARAM_LINKED, &p), IT_SUCCESS);
	cr_assert_eq(p.linked, IT_FALSE);
	cr_assert_eq(it_evd_dequeue(t.sq, &ev), IT_ERR_QUEUE_EMPTY);

	cr_assert_eq(it_ep_free(ep2), IT_SUCCESS);
	cr_assert_eq(it_pz_free(pz2), IT_SUCCESS);
	/* on an endpoint that is not connected the event comes at once */
	ep2 = tapi_rc_ep(&t);
	cr_assert_eq(it_lmr_link(lmr, mem, NULL, sizeof(mem),
				 IT_ADDR_MODE_ABSOLUTE, IT_PRIV_LOCAL, ep2, 9,
				 IT_COMPLETION_FLAG, &key),
		     IT_SUCCESS);
	tapi_wait(t.sq, IT_LMR_LINK_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.ep, ep2);
	cr_assert_eq(ev.dto_cmpl.cookie, 9);
	/* linked: a second link is refused, the first stays */
	cr_assert_eq(it_lmr_link(lmr, mem, NULL, sizeof(mem),
				 IT_ADDR_MODE_ABSOLUTE, IT_PRIV_LOCAL, ep2, 0,
				 0, &key),
		     IT_ERR_INVALID_LMR);
	cr_assert_eq(it_lmr_query(lmr, IT_LMR_PARAM_LINKED, &p), IT_SUCCESS);
	cr_assert_eq(p.linked, IT_TRUE);
	cr_assert_eq(it_lmr_unlink(lmr, ep2, 0, 0), IT_SUCCESS);
	/* unlinked: a second unlink is refused */
	cr_assert_eq(it_lmr_unlink(lmr, ep2, 0, 0), IT_ERR_INVALID_LMR);
	cr_assert_eq(it_lmr_free(lmr), IT_SUCCESS);
#ifdef OPENRDMA_DEBUG
	/* freed: every call on it is refused (debug builds detect it) */
	cr_assert_eq(it_lmr_link(lmr, mem, NULL, sizeof(mem),
				 IT_ADDR_MODE_ABSOLUTE, IT_PRIV_LOCAL, ep2, 0,
				 0, &key),
		     IT_ERR_INVALID_LMR);
	cr_assert_eq(it_lmr_unlink(lmr, ep2, 0, 0), IT_ERR_INVALID_LMR);
	cr_assert_eq(it_lmr_free(lmr), IT_ERR_INVALID_LMR);
#endif
}

/* Links rmr to b on ep and waits for the completion; returns the key. */
static it_rmr_context_t rmr_link(it_rmr_handle_t rmr, struct tapi_buf *b,
				 it_ep_handle_t ep, it_mem_priv_t privs)
{
	it_rmr_context_t key = 0;
	it_event_t ev;

	cr_assert_eq(it_rmr_link(rmr, b->lmr, b->p, b->len,
				 IT_ADDR_MODE_ABSOLUTE, privs, ep, 81,
				 IT_COMPLETION_FLAG, &key),
		     IT_SUCCESS);
	tapi_wait(t.sq, IT_RMR_LINK_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.cookie, 81);
	cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_SUCCESS, "status %d",
		     (int)ev.dto_cmpl.dto_status);
	return key;
}

static void rmr_cycle(it_rmr_type_t type)
{
	struct tapi_conn c;
	struct tapi_buf target, src;
	it_rmr_context_t key, key2;
	it_lmr_triplet_t seg;
	it_rmr_handle_t rmr;
	it_rmr_param_t p;
	it_event_t ev;

	tapi_connect(&t, &c, false);
	tapi_buf_make(&t, &target, 256, IT_PRIV_LOCAL);
	tapi_buf_make(&t, &src, 256, IT_PRIV_LOCAL);
	memset(src.p, 0x42, 256);
	seg = tapi_seg(&src, 0, 256);
	cr_assert_eq(it_rmr_create20(t.pz, type, &rmr), IT_SUCCESS);
	cr_assert_eq(it_rmr_query(rmr, IT_RMR_PARAM_ALL, &p), IT_SUCCESS);
	cr_assert_eq(p.type, type);
	cr_assert_eq(p.linked, IT_FALSE);
	cr_assert_eq(it_rmr_unlink(rmr, c.b, 0, 0), IT_ERR_INVALID_RMR);

	key = rmr_link(rmr, &target, c.b, IT_PRIV_REMOTE_WRITE);
	cr_assert_eq(it_rmr_query(rmr, IT_RMR_PARAM_ALL, &p), IT_SUCCESS);
	cr_assert_eq(p.linked, IT_TRUE);
	cr_assert_eq(p.lmr, target.lmr);
	cr_assert_eq(p.rmr_context, key);
	cr_assert_eq(p.length, 256);
	/* the LMR cannot go while a window is linked to it */
	cr_assert_eq(it_lmr_free(target.lmr), IT_ERR_LMR_BUSY);
	cr_assert_eq(it_post_rdma_write(c.a, &seg, 1, 82, IT_COMPLETION_FLAG,
					it_make_rdma_addr_absolute(target.p),
					key),
		     IT_SUCCESS);
	tapi_wait(t.sq, IT_DTO_RDMA_WRITE_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_SUCCESS);
	cr_assert_arr_eq(target.p, src.p, 256);

	cr_assert_eq(it_rmr_unlink(rmr, c.b, 83, IT_COMPLETION_FLAG),
		     IT_SUCCESS);
	tapi_wait(t.sq, IT_RMR_LINK_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.cookie, 83);
	cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_SUCCESS);
	cr_assert_eq(it_post_rdma_write(c.a, &seg, 1, 84, IT_COMPLETION_FLAG,
					it_make_rdma_addr_absolute(target.p),
					key),
		     IT_SUCCESS);
	tapi_wait(t.sq, IT_DTO_RDMA_WRITE_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_ERR_REMOTE_ACCESS);
	/* the connection is in error now: a new one for the rest */
	tapi_connect(&t, &c, false);
	key2 = rmr_link(rmr, &target, c.b, IT_PRIV_REMOTE_READ);
	cr_assert_neq(key2, key);
	/* the key returned at link time is the one the window has */
	memset(src.p, 0, 256);
	cr_assert_eq(it_post_rdma_read(c.a, &seg, 1, 85, IT_COMPLETION_FLAG,
				       it_make_rdma_addr_absolute(target.p),
				       key2),
		     IT_SUCCESS);
	tapi_wait(t.sq, IT_DTO_RDMA_READ_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_SUCCESS);
	cr_assert_arr_eq(src.p, target.p, 256);
	cr_assert_eq(src.p[0], 0x42);
	cr_assert_eq(it_rmr_free(rmr), IT_SUCCESS);
	cr_assert_eq(it_lmr_free(target.lmr), IT_SUCCESS);
}

Test(itapi_mem, rmr_narrow, .init = setup, .fini = teardown)
{
	tapi_require(t.info->rmr_types_supported & IT_RMR_TYPE_NARROW,
		     "narrow RMRs");
	rmr_cycle(IT_RMR_TYPE_NARROW);
}

Test(itapi_mem, rmr_wide, .init = setup, .fini = teardown)
{
	tapi_require((t.info->rmr_types_supported & IT_RMR_TYPE_WIDE) &&
			     t.info->wide_rmr_unlink_support,
		     "wide RMRs");
	rmr_cycle(IT_RMR_TYPE_WIDE);
}

Test(itapi_mem, send_and_unlink, .init = setup, .fini = teardown)
{
	struct tapi_conn c;
	struct tapi_buf target, msg, rbuf;
	it_rmr_context_t key;
	it_lmr_triplet_t seg;
	it_rmr_handle_t rmr;
	it_rmr_param_t p;
	it_event_t ev;

	tapi_require(t.info->post_send_unlink_remote_support,
		     "send and unlink");
	tapi_connect(&t, &c, false);
	tapi_buf_make(&t, &target, 64, IT_PRIV_LOCAL);
	tapi_buf_make(&t, &msg, 16, IT_PRIV_LOCAL);
	tapi_buf_make(&t, &rbuf, 16, IT_PRIV_LOCAL);
	cr_assert_eq(it_rmr_create20(t.pz, IT_RMR_TYPE_WIDE, &rmr), IT_SUCCESS);
	key = rmr_link(rmr, &target, c.b, IT_PRIV_REMOTE_WRITE);
	tapi_post_recv(c.b, &rbuf, 0, 16, 91);
	seg = tapi_seg(&msg, 0, 16);
	/* the peer's window goes with the message */
	cr_assert_eq(it_post_send_and_unlink(c.a, &seg, 1, 92,
					     IT_COMPLETION_FLAG, key),
		     IT_SUCCESS);
	tapi_wait(t.sq, IT_DTO_SEND_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_SUCCESS);
	tapi_wait(t.rq, IT_DTO_RC_RECV_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.cookie, 91);
	cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_SUCCESS);
	cr_assert_eq(ev.dto_cmpl.unlinked_mr_handle, rmr);
	cr_assert_eq(it_rmr_query(rmr, IT_RMR_PARAM_LINKED, &p), IT_SUCCESS);
	cr_assert_eq(p.linked, IT_FALSE);
	cr_assert_eq(it_rmr_free(rmr), IT_SUCCESS);
}

Test(itapi_mem, rmr_arguments, .init = setup, .fini = teardown)
{
	struct tapi_conn c;
	struct tapi_buf b;
	it_rmr_handle_t rmr = (it_rmr_handle_t)0x1;
	it_rmr_context_t key;
	it_rmr_param_t p;

	cr_assert_eq(it_rmr_create10(TAPI_BOGUS, &rmr), IT_ERR_INVALID_PZ);
	cr_assert_eq(it_rmr_create20(t.pz, (it_rmr_type_t)9, &rmr),
		     IT_ERR_INVALID_RMR_TYPE);
	cr_assert_eq(it_rmr_create20(t.pz, IT_RMR_TYPE_DEFAULT, NULL),
		     IT_ERR_FAULT);
	cr_assert_eq(rmr, (it_rmr_handle_t)0x1);
	if (!t.info->rmr_types_supported) {
		cr_assert_eq(it_rmr_create10(t.pz, &rmr),
			     IT_ERR_OP_NOT_SUPPORTED);
		return;
	}
	tapi_connect(&t, &c, false);
	tapi_buf_make(&t, &b, 64, IT_PRIV_LOCAL);
	cr_assert_eq(it_rmr_create10(t.pz, &rmr), IT_SUCCESS);
	cr_assert_eq(it_rmr_link(TAPI_BOGUS, b.lmr, b.p, 64,
				 IT_ADDR_MODE_ABSOLUTE, IT_PRIV_REMOTE, c.b, 0,
				 0, &key),
		     IT_ERR_INVALID_RMR);
	cr_assert_eq(it_rmr_link(rmr, TAPI_BOGUS, b.p, 64,
				 IT_ADDR_MODE_ABSOLUTE, IT_PRIV_REMOTE, c.b, 0,
				 0, &key),
		     IT_ERR_INVALID_LMR);
	cr_assert_eq(it_rmr_link(rmr, b.lmr, b.p, 64, IT_ADDR_MODE_ABSOLUTE,
				 IT_PRIV_REMOTE, TAPI_BOGUS, 0, 0, &key),
		     IT_ERR_INVALID_EP);
	cr_assert_eq(it_rmr_link(rmr, b.lmr, b.p, 65, IT_ADDR_MODE_ABSOLUTE,
				 IT_PRIV_REMOTE, c.b, 0, 0, &key),
		     IT_ERR_INVALID_LENGTH);
	cr_assert_eq(it_rmr_link(rmr, b.lmr, b.p, 64, IT_ADDR_MODE_ABSOLUTE,
				 (it_mem_priv_t)0x800, c.b, 0, 0, &key),
		     IT_ERR_INVALID_PRIVS);
	cr_assert_eq(it_rmr_link(rmr, b.lmr, b.p, 64, IT_ADDR_MODE_ABSOLUTE,
				 IT_PRIV_REMOTE, c.b, 0, (it_dto_flags_t)0x800,
				 &key),
		     IT_ERR_INVALID_DTO_FLAGS);
	cr_assert_eq(it_rmr_bind10(rmr, b.lmr, b.p, 64, IT_PRIV_REMOTE, c.b, 0,
				   0, &key),
		     IT_SUCCESS);
	cr_assert_eq(it_rmr_query(rmr, (it_rmr_param_mask_t)0x8000, &p),
		     IT_ERR_INVALID_MASK);
	cr_assert_eq(it_rmr_query(rmr, IT_RMR_PARAM_ALL, NULL), IT_ERR_FAULT);
	cr_assert_eq(it_rmr_query(TAPI_BOGUS, IT_RMR_PARAM_ALL, &p),
		     IT_ERR_INVALID_RMR);
	cr_assert_eq(it_rmr_unlink(rmr, TAPI_BOGUS, 0, 0), IT_ERR_INVALID_EP);
	cr_assert_eq(it_rmr_free(TAPI_BOGUS), IT_ERR_INVALID_RMR);
	/* freeing a linked RMR unlinks it */
	cr_assert_eq(it_rmr_free(rmr), IT_SUCCESS);
	tapi_buf_free(&b);
}
