/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The v2.1 binding: it_lmr_create takes an IOBL, it_rmr_create the RMR
 * type, and it_rmr_bind becomes it_rmr_link.  A leftover v1.0 request
 * from the build system must not win over it.
 */
#define ITAPI_ENABLE_V10_BINDINGS
#define ITAPI_ENABLE_V21_BINDINGS
#include <string.h>

#include "itapi_test.h"

#ifdef ITAPI_ENABLE_V10_BINDINGS
#error "selecting v2.1 must turn the v1.0 binding off"
#endif

ITAPI_ASSERT_FN_TYPE(v21_lmr_create, it_lmr_create, itapi_lmr_create21_fn);
ITAPI_ASSERT_FN_TYPE(v21_rmr_create, it_rmr_create, itapi_rmr_create20_fn);
ITAPI_ASSERT_FN_TYPE(v21_rmr_bind, it_rmr_bind, itapi_rmr_link_fn);
ITAPI_ASSERT_FN_TYPE(v21_make_rdma_addr, it_make_rdma_addr,
		     itapi_make_rdma_addr_absolute_fn);

Test(itapi_bindings, v21)
{
	it_rmr_param_t rmr;

	ITAPI_EXPECT_NAME(it_lmr_create, "it_lmr_create21");
	ITAPI_EXPECT_NAME(it_rmr_create, "it_rmr_create20");
	ITAPI_EXPECT_NAME(it_rmr_bind, "it_rmr_link");
	ITAPI_EXPECT_NAME(it_make_rdma_addr, "it_make_rdma_addr_absolute");
	ITAPI_EXPECT_NAME(it_lmr_sync_rdma_read, "it_lmr_flush_to_mem");
	ITAPI_EXPECT_NAME(it_lmr_sync_rdma_write, "it_lmr_refresh_from_mem");

	memset(&rmr, 0, sizeof(rmr));
	rmr.linked = IT_TRUE;
	cr_expect_eq(rmr.linked, IT_TRUE);
}
