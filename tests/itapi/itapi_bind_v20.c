/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The v2.0 binding: v2.0 signatures for it_lmr_create and it_rmr_create,
 * and it_rmr_bind becomes it_rmr_link.
 */
#define ITAPI_ENABLE_V20_BINDINGS
#include <string.h>

#include "itapi_test.h"

#ifdef ITAPI_ENABLE_V10_BINDINGS
#error "selecting v2.0 must turn the v1.0 binding off"
#endif

ITAPI_ASSERT_FN_TYPE(v20_lmr_create, it_lmr_create, itapi_lmr_create20_fn);
ITAPI_ASSERT_FN_TYPE(v20_rmr_create, it_rmr_create, itapi_rmr_create20_fn);
ITAPI_ASSERT_FN_TYPE(v20_rmr_bind, it_rmr_bind, itapi_rmr_link_fn);

Test(itapi_bindings, v20)
{
	it_rmr_param_t rmr;

	ITAPI_EXPECT_NAME(it_lmr_create, "it_lmr_create20");
	ITAPI_EXPECT_NAME(it_rmr_create, "it_rmr_create20");
	ITAPI_EXPECT_NAME(it_rmr_bind, "it_rmr_link");
	/* The v1.0 names of renamed functions stay in every binding. */
	ITAPI_EXPECT_NAME(it_rmr_unbind, "it_rmr_unlink");

	memset(&rmr, 0, sizeof(rmr));
	rmr.linked = IT_TRUE;
	cr_expect_eq(offsetof(it_rmr_param_t, linked),
		     offsetof(it_rmr_param_t, pz) + sizeof(rmr.pz));
}
