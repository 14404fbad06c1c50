/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The default version binding: a program that selects none gets the v1.0
 * signatures of it_lmr_create, it_rmr_create and it_rmr_bind, and the
 * v1.0 names of renamed functions, members and constants.
 */
#include <string.h>

#include "itapi_test.h"

#ifndef ITAPI_ENABLE_V10_BINDINGS
#error "the v1.0 binding must be the default"
#endif
#if defined(ITAPI_ENABLE_V20_BINDINGS) || defined(ITAPI_ENABLE_V21_BINDINGS)
#error "no other binding may be selected by default"
#endif

ITAPI_ASSERT_FN_TYPE(v10_lmr_create, it_lmr_create, itapi_lmr_create10_fn);
ITAPI_ASSERT_FN_TYPE(v10_rmr_create, it_rmr_create, itapi_rmr_create10_fn);
ITAPI_ASSERT_FN_TYPE(v10_rmr_bind, it_rmr_bind, itapi_rmr_bind10_fn);
ITAPI_ASSERT_FN_TYPE(v10_make_rdma_addr, it_make_rdma_addr,
		     itapi_make_rdma_addr_absolute_fn);
ITAPI_ASSERT_FN_TYPE(v10_sync_read, it_lmr_sync_rdma_read, itapi_lmr_sync_fn);
ITAPI_ASSERT_FN_TYPE(v10_sync_write, it_lmr_sync_rdma_write, itapi_lmr_sync_fn);
ITAPI_ASSERT_FN_TYPE(v10_rmr_unbind, it_rmr_unbind, itapi_rmr_unlink_fn);

Test(itapi_bindings, v10_default)
{
	ITAPI_EXPECT_NAME(it_lmr_create, "it_lmr_create10");
	ITAPI_EXPECT_NAME(it_rmr_create, "it_rmr_create10");
	ITAPI_EXPECT_NAME(it_rmr_bind, "it_rmr_bind10");
}

Test(itapi_bindings, v10_function_aliases)
{
	ITAPI_EXPECT_NAME(it_make_rdma_addr, "it_make_rdma_addr_absolute");
	ITAPI_EXPECT_NAME(it_lmr_sync_rdma_read, "it_lmr_flush_to_mem");
	ITAPI_EXPECT_NAME(it_lmr_sync_rdma_write, "it_lmr_refresh_from_mem");
	ITAPI_EXPECT_NAME(it_rmr_unbind, "it_rmr_unlink");
}

Test(itapi_bindings, v10_member_names)
{
	it_rc_only_attributes_t rc;
	it_ia_info_t info;
	it_rmr_param_t rmr;

	memset(&rc, 0, sizeof(rc));
	rc.rdma_read_inflight_incoming = 4;
	rc.rdma_read_inflight_outgoing = 8;
	cr_expect_eq(rc.rdma_read_ird, 4);
	cr_expect_eq(rc.rdma_read_ord, 8);

	memset(&info, 0, sizeof(info));
	info.ird_support = IT_TRUE;
	cr_expect_eq(info.ird_ord_ia_support, IT_TRUE);
	cr_expect_eq(info.ord_support, IT_TRUE);

	/* v1.0 calls the RMR's "linked" state "bound", at the same place. */
	memset(&rmr, 0, sizeof(rmr));
	rmr.bound = IT_TRUE;
	cr_expect_eq(offsetof(it_rmr_param_t, bound),
		     offsetof(it_rmr_param_t, pz) + sizeof(rmr.pz));
	cr_expect_eq(IT_RMR_PARAM_BOUND, IT_RMR_PARAM_LINKED);
	cr_expect_eq(IT_RMR_BIND_CMPL_EVENT, IT_RMR_LINK_CMPL_EVENT);
	cr_expect_eq(IT_PRIV_DEFAULT, IT_PRIV_LOCAL);
}
