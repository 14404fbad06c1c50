/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* Stands in for test_sw_self when self is not built at all. */
#include <criterion/criterion.h>

Test(sw_self, not_built)
{
	cr_skip_test("the self transport is not built (--enable-self=no): "
		     "test_sw_self needs it");
}
