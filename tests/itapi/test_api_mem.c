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
	cr_assert_eq(it_post_rdma_write(c.a, &seg, 1, 74, IT_COMPLETION_FLAG,
					it_make_rdma_addr_absolute(dst), key),
		     IT_SUCCESS);
	tapi_wait(t.sq, IT_DTO_RDMA_WRITE_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_ERR_REMOTE_ACCESS);
	cr_assert_eq(it_lmr_free(lmr), IT_SUCCESS);
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
	cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_SUCCESS);
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
