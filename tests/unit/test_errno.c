/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * openrdma_strerror() and the enum-name functions: every defined value has
 * its own text, anything else a fixed fallback, never NULL.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <string.h>

#include <openrdma/verbs.h>

static const int codes[] = {
	OPENRDMA_EPERM,		OPENRDMA_ENOENT,       OPENRDMA_EINTR,
	OPENRDMA_EIO,		OPENRDMA_E2BIG,	       OPENRDMA_EAGAIN,
	OPENRDMA_ENOMEM,	OPENRDMA_EACCES,       OPENRDMA_EFAULT,
	OPENRDMA_EBUSY,		OPENRDMA_EEXIST,       OPENRDMA_ENODEV,
	OPENRDMA_EINVAL,	OPENRDMA_ENOSPC,       OPENRDMA_ERANGE,
	OPENRDMA_ENOSYS,	OPENRDMA_EOPNOTSUPP,   OPENRDMA_EADDRINUSE,
	OPENRDMA_EADDRNOTAVAIL, OPENRDMA_ENETDOWN,     OPENRDMA_ENETUNREACH,
	OPENRDMA_ECONNABORTED,	OPENRDMA_ECONNRESET,   OPENRDMA_ENOBUFS,
	OPENRDMA_EISCONN,	OPENRDMA_ENOTCONN,     OPENRDMA_ETIMEDOUT,
	OPENRDMA_ECONNREFUSED,	OPENRDMA_EHOSTUNREACH, OPENRDMA_EALREADY,
	OPENRDMA_EINPROGRESS,	OPENRDMA_EOVERFLOW,    OPENRDMA_EMSGSIZE,
	OPENRDMA_EPROTO,	OPENRDMA_ECANCELED,
};

#define NCODES (sizeof(codes) / sizeof(codes[0]))

/* texts[i] differs from texts[j] for all i != j, and from unknown. */
static void assert_distinct(const char *const *texts, size_t n,
			    const char *unknown)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		cr_assert_not_null(texts[i]);
		cr_assert_str_neq(texts[i], unknown, "value %zu unnamed", i);
		for (j = 0; j < i; j++)
			cr_assert_str_neq(texts[i], texts[j],
					  "values %zu and %zu share \"%s\"", i,
					  j, texts[i]);
	}
}

Test(strerror, every_code_has_its_own_text)
{
	const char *texts[NCODES + OPENRDMA_ERRNO_MAX - OPENRDMA_ERRNO_OFFSET];
	const char *unknown = openrdma_strerror(99999);
	size_t i, n = 0;
	int e;

	for (i = 0; i < NCODES; i++)
		texts[n++] = openrdma_strerror(-codes[i]);
	for (e = OPENRDMA_ERRNO_OFFSET; e < OPENRDMA_ERRNO_MAX; e++)
		texts[n++] = openrdma_strerror(-e);
	assert_distinct(texts, n, unknown);
	cr_assert_str_neq(openrdma_strerror(0), unknown);
}

Test(strerror, sign_does_not_matter)
{
	size_t i;
	int e;

	for (i = 0; i < NCODES; i++)
		cr_assert_eq(openrdma_strerror(codes[i]),
			     openrdma_strerror(-codes[i]));
	for (e = OPENRDMA_ERRNO_OFFSET; e < OPENRDMA_ERRNO_MAX; e++)
		cr_assert_eq(openrdma_strerror(e), openrdma_strerror(-e));
}

Test(strerror, unknown_codes_are_never_null)
{
	const int odd[] = { OPENRDMA_ERRNO_MAX,
			    -OPENRDMA_ERRNO_MAX,
			    255,
			    99999,
			    INT_MAX,
			    INT_MIN,
			    -INT_MAX };
	size_t i;

	for (i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		cr_assert_not_null(openrdma_strerror(odd[i]));
		cr_assert_str_eq(openrdma_strerror(odd[i]), "Unknown error");
	}
}

Test(strerror, not_supported_says_so)
{
	cr_assert_str_eq(openrdma_strerror(-OPENRDMA_EOPNOTSUPP),
			 "Operation not supported");
	cr_assert_str_eq(openrdma_strerror(-OPENRDMA_EBADHANDLE),
			 "Invalid or destroyed object handle");
}

/* Applies fn to 0..n-1 and checks the names, then values around them. */
#define CHECK_NAMES(fn, type, n)                             \
	do {                                                 \
		const char *texts_[(n)];                     \
		size_t i_;                                   \
		for (i_ = 0; i_ < (size_t)(n); i_++)         \
			texts_[i_] = fn((type)i_);           \
		assert_distinct(texts_, (n), "unknown");     \
		cr_assert_str_eq(fn((type)(n)), "unknown");  \
		cr_assert_str_eq(fn((type)-1), "unknown");   \
		cr_assert_str_eq(fn((type)1000), "unknown"); \
	} while (0)

Test(strings, wc_status)
{
	CHECK_NAMES(openrdma_wc_status_str, enum openrdma_wc_status,
		    OPENRDMA_WC_STATUS_MAX);
	cr_assert_str_eq(openrdma_wc_status_str(OPENRDMA_WC_WR_FLUSH_ERR),
			 "work request flushed");
}

Test(strings, qp_state)
{
	CHECK_NAMES(openrdma_qp_state_str, enum openrdma_qp_state,
		    OPENRDMA_QPS_UNKNOWN + 1);
	cr_assert_str_eq(openrdma_qp_state_str(OPENRDMA_QPS_RTS), "RTS");
}

Test(strings, event_type)
{
	CHECK_NAMES(openrdma_event_type_str, enum openrdma_event_type,
		    OPENRDMA_EVENT_TYPE_MAX);
}

Test(strings, cm_event)
{
	CHECK_NAMES(openrdma_cm_event_str, enum openrdma_cm_event_type,
		    OPENRDMA_CM_EVENT_TIMEWAIT_EXIT + 1);
	cr_assert_str_eq(openrdma_cm_event_str(OPENRDMA_CM_EVENT_ESTABLISHED),
			 "ESTABLISHED");
}
