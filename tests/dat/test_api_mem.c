/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* Protection zones, local memory regions and remote memory regions. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tests/dat/test_api_common.h"

Test(dat_pz, create_query_free)
{
	DAT_PZ_HANDLE pz;
	DAT_PZ_PARAM param;
	struct t_ia t;
	struct t_mem m;

	t_ia_open(&t);
	T_OK(dat_pz_create(t.ia, &pz));
	T_OK(dat_pz_query(pz, DAT_PZ_FIELD_ALL, &param));
	T_OK(dat_ia_query(param.ia_handle, NULL, 0, NULL, 0, NULL));
	T_ERR(dat_pz_query(pz, (DAT_PZ_PARAM_MASK)0x80, &param),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	T_ERR(dat_pz_query(pz, DAT_PZ_FIELD_ALL, NULL), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG3);
	T_ERR(dat_pz_create(t.ia, NULL), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG2);
	T_ERR(dat_pz_create(NULL, &pz), DAT_INVALID_HANDLE,
	      DAT_INVALID_HANDLE_IA);
	T_OK(dat_pz_free(pz));
	/* a PZ with a region is in use */
	t_mem_make(&t, &m, 4096);
	T_ERR(dat_pz_free(t.pz), DAT_INVALID_STATE,
	      DAT_INVALID_STATE_PZ_IN_USE);
	t_mem_free(&m);
	t_ia_close(&t);
}

Test(dat_lmr, create_query_free)
{
	DAT_REGION_DESCRIPTION region;
	DAT_LMR_HANDLE lmr, lmr2;
	DAT_LMR_CONTEXT lctx;
	DAT_RMR_CONTEXT rctx;
	DAT_LMR_PARAM param;
	DAT_VLEN len;
	DAT_VADDR addr;
	struct t_ia t;
	char *buf = malloc(8192);

	t_ia_open(&t);
	region.for_va = buf;
	T_OK(dat_lmr_create(t.ia, DAT_MEM_TYPE_VIRTUAL, region, 8192, t.pz,
			    DAT_MEM_PRIV_ALL_FLAG, DAT_VA_TYPE_VA, &lmr, &lctx,
			    &rctx, &len, &addr));
	cr_assert_eq(len, 8192);
	cr_assert_eq(addr, (DAT_VADDR)(uintptr_t)buf);
	T_OK(dat_lmr_query(lmr, DAT_LMR_FIELD_ALL, &param));
	cr_assert_eq(param.mem_type, DAT_MEM_TYPE_VIRTUAL);
	cr_assert_eq(param.region_desc.for_va, buf);
	cr_assert_eq(param.length, 8192);
	cr_assert_eq(param.pz_handle, t.pz);
	cr_assert_eq(param.mem_priv, DAT_MEM_PRIV_ALL_FLAG);
	cr_assert_eq(param.lmr_context, lctx);
	cr_assert_eq(param.rmr_context, rctx);
	T_ERR(dat_lmr_query(lmr, (DAT_LMR_PARAM_MASK)0x10000, &param),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	T_ERR(dat_lmr_query(lmr, DAT_LMR_FIELD_ALL, NULL),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);

	/* the same memory again, through the LMR; outputs are optional */
	region.for_lmr_handle = lmr;
	T_OK(dat_lmr_create(t.ia, DAT_MEM_TYPE_LMR, region, 4096, t.pz,
			    DAT_MEM_PRIV_LOCAL_READ_FLAG, DAT_VA_TYPE_VA, &lmr2,
			    NULL, NULL, NULL, &addr));
	cr_assert_eq(addr, (DAT_VADDR)(uintptr_t)buf);
	T_ERR(dat_lmr_create(t.ia, DAT_MEM_TYPE_LMR, region, 16384, t.pz,
			     DAT_MEM_PRIV_ALL_FLAG, DAT_VA_TYPE_VA, &lmr2, NULL,
			     NULL, NULL, NULL),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);
	T_OK(dat_lmr_free(lmr2));
	T_OK(dat_lmr_free(lmr));
	free(buf);
	t_ia_close(&t);
}

Test(dat_lmr, shared_and_zero_based)
{
	DAT_REGION_DESCRIPTION region;
	char cookie[DAT_LMR_COOKIE_SIZE] = "shared";
	DAT_LMR_HANDLE lmr;
	DAT_VADDR addr;
	struct t_ia t;
	/* page-aligned: a zero-based region must be, on verbs */
	char *buf = aligned_alloc(4096, 4096);

	t_ia_open(&t);
	region.for_shared_memory.virtual_address = buf;
	region.for_shared_memory.shared_memory_id = &cookie;
	T_OK(dat_lmr_create(t.ia, DAT_MEM_TYPE_SHARED_VIRTUAL, region, 4096,
			    t.pz, DAT_MEM_PRIV_ALL_FLAG, DAT_VA_TYPE_VA, &lmr,
			    NULL, NULL, NULL, &addr));
	cr_assert_eq(addr, (DAT_VADDR)(uintptr_t)buf);
	T_OK(dat_lmr_free(lmr));
	if (t.attr.zb_supported) {
		region.for_va = buf;
		T_OK(dat_lmr_create(t.ia, DAT_MEM_TYPE_VIRTUAL, region, 4096,
				    t.pz, DAT_MEM_PRIV_ALL_FLAG, DAT_VA_TYPE_ZB,
				    &lmr, NULL, NULL, NULL, &addr));
		cr_assert_eq(addr, 0);
		T_OK(dat_lmr_free(lmr));
	}
	free(buf);
	t_ia_close(&t);
}

Test(dat_lmr, create_errors)
{
	DAT_REGION_DESCRIPTION region;
	DAT_LMR_HANDLE lmr;
	struct t_ia t;
	char buf[64];

	t_ia_open(&t);
	region.for_va = buf;
	T_ERR(dat_lmr_create(NULL, DAT_MEM_TYPE_VIRTUAL, region, 64, t.pz,
			     DAT_MEM_PRIV_ALL_FLAG, DAT_VA_TYPE_VA, &lmr, NULL,
			     NULL, NULL, NULL),
	      DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	T_ERR(dat_lmr_create(t.ia, (DAT_MEM_TYPE)0x77, region, 64, t.pz,
			     DAT_MEM_PRIV_ALL_FLAG, DAT_VA_TYPE_VA, &lmr, NULL,
			     NULL, NULL, NULL),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	T_ERR(dat_lmr_create(t.ia, DAT_MEM_TYPE_VIRTUAL, region, 64, NULL,
			     DAT_MEM_PRIV_ALL_FLAG, DAT_VA_TYPE_VA, &lmr, NULL,
			     NULL, NULL, NULL),
	      DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	T_ERR(dat_lmr_create(t.ia, DAT_MEM_TYPE_VIRTUAL, region, 64, t.pz,
			     (DAT_MEM_PRIV_FLAGS)0x1000, DAT_VA_TYPE_VA, &lmr,
			     NULL, NULL, NULL, NULL),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG6);
	T_ERR(dat_lmr_create(t.ia, DAT_MEM_TYPE_VIRTUAL, region, 64, t.pz,
			     DAT_MEM_PRIV_ALL_FLAG, (DAT_VA_TYPE)9, &lmr, NULL,
			     NULL, NULL, NULL),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG7);
	T_ERR(dat_lmr_create(t.ia, DAT_MEM_TYPE_VIRTUAL, region, 64, t.pz,
			     DAT_MEM_PRIV_ALL_FLAG, DAT_VA_TYPE_VA, NULL, NULL,
			     NULL, NULL, NULL),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG8);
	region.for_lmr_handle = t.pz;
	T_ERR(dat_lmr_create(t.ia, DAT_MEM_TYPE_LMR, region, 64, t.pz,
			     DAT_MEM_PRIV_ALL_FLAG, DAT_VA_TYPE_VA, &lmr, NULL,
			     NULL, NULL, NULL),
	      DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_LMR);
	T_ERR(dat_lmr_free(t.pz), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_LMR);
	t_ia_close(&t);
}

Test(dat_lmr, sync_rdma)
{
	DAT_LMR_TRIPLET seg[2];
	struct t_ia t;
	struct t_mem m;

	t_ia_open(&t);
	t_mem_make(&t, &m, 8192);
	seg[0] = t_seg(&m, 0, 100);
	seg[1] = t_seg(&m, 4096, 4096);
	T_OK(dat_lmr_sync_rdma_read(t.ia, seg, 2));
	T_OK(dat_lmr_sync_rdma_write(t.ia, seg, 2));
	T_OK(dat_lmr_sync_rdma_write(t.ia, NULL, 0));
	seg[1] = t_seg(&m, 4096, 4097);
	T_ERR(dat_lmr_sync_rdma_read(t.ia, seg, 2), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG2);
	seg[0].lmr_context ^= 0x5a5a;
	T_ERR(dat_lmr_sync_rdma_write(t.ia, seg, 1), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG2);
	T_ERR(dat_lmr_sync_rdma_write(t.ia, NULL, 1), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG2);
	T_ERR(dat_lmr_sync_rdma_read(NULL, seg, 1), DAT_INVALID_HANDLE,
	      DAT_INVALID_HANDLE_IA);
	t_mem_free(&m);
	t_ia_close(&t);
}

/* Binds a window on the passive side and writes through it. */
Test(dat_rmr, bind_write_through_window_unbind)
{
	DAT_RMR_HANDLE rmr;
	DAT_RMR_CONTEXT rctx;
	DAT_RMR_PARAM param;
	DAT_RMR_TRIPLET rseg;
	DAT_LMR_TRIPLET lseg, s;
	DAT_RMR_COOKIE cookie;
	DAT_EVENT ev;
	struct t_pair p;

	t_pair_setup(&p, NULL);
	t_require_rmrs(&p);
	t_pair_connect(&p);
	T_OK(dat_rmr_create(p.t.pz, &rmr));
	T_OK(dat_rmr_query(rmr, DAT_RMR_FIELD_ALL, &param));
	cr_assert_eq(param.pz_handle, p.t.pz);
	cr_assert_eq(param.rmr_scope, DAT_RMR_SCOPE_PZ);

	lseg = t_seg(&p.mem[1], 1024, 256);
	cookie.as_64 = 77;
	T_OK(dat_rmr_bind(rmr, p.mem[1].lmr, &lseg,
			  DAT_MEM_PRIV_REMOTE_WRITE_FLAG, DAT_VA_TYPE_VA,
			  p.ep[1], cookie, DAT_COMPLETION_DEFAULT_FLAG, &rctx));
	ev = t_wait(p.req[1], DAT_RMR_BIND_COMPLETION_EVENT);
	cr_assert_eq(ev.event_data.rmr_completion_event_data.rmr_handle, rmr);
	cr_assert_eq(ev.event_data.rmr_completion_event_data.user_cookie.as_64,
		     77);
	cr_assert_eq(ev.event_data.rmr_completion_event_data.status,
		     DAT_RMR_BIND_SUCCESS);
	T_OK(dat_rmr_query(rmr, DAT_RMR_FIELD_ALL, &param));
	cr_assert_eq(param.rmr_context, rctx);
	cr_assert_eq(param.lmr_triplet.segment_length, 256);
	cr_assert_eq(param.mem_priv, DAT_MEM_PRIV_REMOTE_WRITE_FLAG);
	/* the LMR a window is bound to is in use */
	T_ERR(dat_lmr_free(p.mem[1].lmr), DAT_INVALID_STATE,
	      DAT_INVALID_STATE_LMR_IN_USE);

	strcpy(p.mem[0].buf, "through the window");
	s = t_seg(&p.mem[0], 0, 19);
	rseg.virtual_address = lseg.virtual_address;
	rseg.segment_length = 256;
	rseg.rmr_context = rctx;
	T_OK(dat_ep_post_rdma_write(p.ep[0], 1, &s, t_cookie(1), &rseg,
				    DAT_COMPLETION_DEFAULT_FLAG));
	t_dto(p.req[0], DAT_DTO_SUCCESS);
	cr_assert_str_eq(p.mem[1].buf + 1024, "through the window");

	/* read was not granted: the access fails at the target */
	T_OK(dat_ep_post_rdma_read(p.ep[0], 1, &s, t_cookie(2), &rseg,
				   DAT_COMPLETION_DEFAULT_FLAG));
	t_dto(p.req[0], DAT_DTO_ERR_REMOTE_ACCESS);

	T_OK(dat_rmr_free(rmr));
	t_pair_teardown(&p);
}

Test(dat_rmr, bind_errors_and_unbind)
{
	DAT_RMR_HANDLE rmr;
	DAT_RMR_CONTEXT rctx, rctx2;
	DAT_LMR_TRIPLET lseg, bad;
	DAT_RMR_COOKIE cookie = { .as_64 = 1 };
	DAT_RMR_PARAM param;
	DAT_PZ_HANDLE pz2;
	DAT_RMR_HANDLE rmr2;
	struct t_pair p;

	t_pair_setup(&p, NULL);
	t_require_rmrs(&p);
	T_OK(dat_rmr_create(p.t.pz, &rmr));
	lseg = t_seg(&p.mem[1], 0, 64);
	/* not connected yet */
	T_ERR(dat_rmr_bind(rmr, p.mem[1].lmr, &lseg,
			   DAT_MEM_PRIV_REMOTE_READ_FLAG, DAT_VA_TYPE_VA,
			   p.ep[1], cookie, DAT_COMPLETION_DEFAULT_FLAG, &rctx),
	      DAT_INVALID_STATE, DAT_INVALID_STATE_EP_UNCONNECTED);
	t_pair_connect(&p);
	T_ERR(dat_rmr_bind(NULL, p.mem[1].lmr, &lseg,
			   DAT_MEM_PRIV_REMOTE_READ_FLAG, DAT_VA_TYPE_VA,
			   p.ep[1], cookie, DAT_COMPLETION_DEFAULT_FLAG, &rctx),
	      DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_RMR);
	T_ERR(dat_rmr_bind(rmr, p.t.pz, &lseg, DAT_MEM_PRIV_REMOTE_READ_FLAG,
			   DAT_VA_TYPE_VA, p.ep[1], cookie,
			   DAT_COMPLETION_DEFAULT_FLAG, &rctx),
	      DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_LMR);
	T_ERR(dat_rmr_bind(rmr, p.mem[1].lmr, &lseg,
			   DAT_MEM_PRIV_REMOTE_READ_FLAG, DAT_VA_TYPE_VA,
			   p.t.pz, cookie, DAT_COMPLETION_DEFAULT_FLAG, &rctx),
	      DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	bad = t_seg(&p.mem[1], T_BUF - 8, 64);
	T_ERR(dat_rmr_bind(rmr, p.mem[1].lmr, &bad,
			   DAT_MEM_PRIV_REMOTE_READ_FLAG, DAT_VA_TYPE_VA,
			   p.ep[1], cookie, DAT_COMPLETION_DEFAULT_FLAG, &rctx),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	T_ERR(dat_rmr_bind(rmr, p.mem[1].lmr, &lseg, (DAT_MEM_PRIV_FLAGS)0x800,
			   DAT_VA_TYPE_VA, p.ep[1], cookie,
			   DAT_COMPLETION_DEFAULT_FLAG, &rctx),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);
	T_ERR(dat_rmr_bind(rmr, p.mem[1].lmr, &lseg,
			   DAT_MEM_PRIV_REMOTE_READ_FLAG, (DAT_VA_TYPE)5,
			   p.ep[1], cookie, DAT_COMPLETION_DEFAULT_FLAG, &rctx),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG5);
	T_ERR(dat_rmr_bind(rmr, p.mem[1].lmr, &lseg,
			   DAT_MEM_PRIV_REMOTE_READ_FLAG, DAT_VA_TYPE_VA,
			   p.ep[1], cookie, (DAT_COMPLETION_FLAGS)0x400, &rctx),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG8);
	T_ERR(dat_rmr_bind(rmr, p.mem[1].lmr, &lseg,
			   DAT_MEM_PRIV_REMOTE_READ_FLAG, DAT_VA_TYPE_VA,
			   p.ep[1], cookie, DAT_COMPLETION_DEFAULT_FLAG, NULL),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG9);
	/* a window in another PZ */
	T_OK(dat_pz_create(p.t.ia, &pz2));
	T_OK(dat_rmr_create(pz2, &rmr2));
	T_ERR(dat_rmr_bind(rmr2, p.mem[1].lmr, &lseg,
			   DAT_MEM_PRIV_REMOTE_READ_FLAG, DAT_VA_TYPE_VA,
			   p.ep[1], cookie, DAT_COMPLETION_DEFAULT_FLAG, &rctx),
	      DAT_PROTECTION_VIOLATION, -1);
	T_OK(dat_rmr_free(rmr2));
	T_OK(dat_pz_free(pz2));

	/* a suppressed bind, then an unbind (no LMR) */
	T_OK(dat_rmr_bind(rmr, p.mem[1].lmr, &lseg,
			  DAT_MEM_PRIV_REMOTE_READ_FLAG, DAT_VA_TYPE_VA,
			  p.ep[1], cookie, DAT_COMPLETION_SUPPRESS_FLAG,
			  &rctx));
	T_OK(dat_rmr_bind(rmr, NULL, NULL, DAT_MEM_PRIV_NONE_FLAG,
			  DAT_VA_TYPE_VA, p.ep[1], cookie,
			  DAT_COMPLETION_DEFAULT_FLAG, &rctx2));
	cr_assert_neq(rctx, rctx2);
	t_wait(p.req[1], DAT_RMR_BIND_COMPLETION_EVENT);
	T_OK(dat_rmr_query(rmr, DAT_RMR_FIELD_ALL, &param));
	cr_assert_eq(param.rmr_context, rctx2);
	cr_assert_eq(param.lmr_triplet.segment_length, 0);
	T_OK(dat_rmr_free(rmr));
	T_ERR(dat_rmr_free(NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_RMR);
	t_pair_teardown(&p);
}

Test(dat_rmr, create_for_ep)
{
	DAT_RMR_HANDLE rmr;
	DAT_RMR_PARAM param;
	struct t_ia t;
	DAT_RETURN ret;

	t_ia_open(&t);
	ret = dat_rmr_create_for_ep(t.pz, &rmr);
	if (DAT_GET_TYPE(ret) == DAT_MODEL_NOT_SUPPORTED) {
		t_ia_close(&t);
		cr_skip_test("%s has no type 2 windows", t_iface());
	}
	T_OK(ret);
	T_OK(dat_rmr_query(rmr, DAT_RMR_FIELD_ALL, &param));
	cr_assert_eq(param.rmr_scope, DAT_RMR_SCOPE_EP);
	T_ERR(dat_rmr_create_for_ep(t.pz, NULL), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG2);
	T_ERR(dat_rmr_create(NULL, &rmr), DAT_INVALID_HANDLE,
	      DAT_INVALID_HANDLE_PZ);
	T_ERR(dat_rmr_query(rmr, DAT_RMR_FIELD_ALL, NULL),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	T_ERR(dat_rmr_query(rmr, (DAT_RMR_PARAM_MASK)0x100, &param),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	T_OK(dat_rmr_free(rmr));
	t_ia_close(&t);
}
