/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* Criterion's logging calls: criterion.h has them (cr_log_info, ...). */
#ifndef OPENRDMA_CRITERION_SHIM_LOGGING_H
#define OPENRDMA_CRITERION_SHIM_LOGGING_H

#include <criterion/criterion.h>

#endif
