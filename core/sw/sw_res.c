/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* Object counts against the limits a software device advertises. */
#include <openrdma/errno.h>

#include "core/sw/sw_ops.h"

int sw_res_get(atomic_int *count, int max)
{
	if (atomic_fetch_add(count, 1) >= max) {
		atomic_fetch_sub(count, 1);
		return -OPENRDMA_ENOMEM;
	}
	return 0;
}

void sw_res_put(atomic_int *count)
{
	atomic_fetch_sub(count, 1);
}
