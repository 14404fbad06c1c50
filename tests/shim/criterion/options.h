/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* The part of Criterion's options the tests set (see criterion.h). */
#ifndef OPENRDMA_CRITERION_SHIM_OPTIONS_H
#define OPENRDMA_CRITERION_SHIM_OPTIONS_H

#include <criterion/criterion.h>

enum criterion_logging_level {
	CRITERION_INFO = 1,
	CRITERION_IMPORTANT,
};

struct criterion_options {
	enum criterion_logging_level logging_threshold;
	int jobs;
	bool no_early_exit;
};

extern struct criterion_options criterion_options;

#endif /* OPENRDMA_CRITERION_SHIM_OPTIONS_H */
