/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Macros and types shared by the <it_api.h> tests.  The tests are built as
 * strict C99 and must not reference any it_* function at link time: they
 * check types, macros and constants only, so every function check below
 * sits in an unevaluated sizeof.  A file that selects a version binding
 * defines it before including this header.
 */
#ifndef ITAPI_TEST_H
#define ITAPI_TEST_H

#include <stddef.h>

#include <criterion/criterion.h>
#include <it_api.h>

#define ITAPI_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Expands a macro before turning it into a string. */
#define ITAPI_STR(x) ITAPI_STR_(x)
#define ITAPI_STR_(x) #x

/* C99 has no _Static_assert: a negative array size stops the build. */
#define ITAPI_BUILD_ASSERT(name, cond) \
	typedef char itapi_assert_##name[(cond) ? 1 : -1]

/*
 * Stops the build unless 'fn' has exactly the function type 'type':
 * comparing pointers to incompatible types is a constraint violation.
 */
#define ITAPI_ASSERT_FN_TYPE(name, fn, type) \
	ITAPI_BUILD_ASSERT(fn_##name, sizeof((type *)0 == &(fn)) == sizeof(int))

/* Checks that a binding or alias macro expands to the expected name. */
#define ITAPI_EXPECT_NAME(macro, expected)                        \
	cr_expect_str_eq(ITAPI_STR(macro), expected,              \
			 "%s expands to %s, expected %s", #macro, \
			 ITAPI_STR(macro), expected)

/* One constant and the value the standard gives it. */
struct itapi_value {
	const char *name;
	long long value;
	long long expected;
};

#define ITAPI_VALUE(n, e)                                          \
	{                                                          \
		.name = #n, .value = (long long)(n), .expected = e \
	}

static inline void itapi_expect_values(const struct itapi_value *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		cr_expect_eq(v[i].value, v[i].expected,
			     "%s is %#llx, expected %#llx", v[i].name,
			     (unsigned long long)v[i].value,
			     (unsigned long long)v[i].expected);
}

/* The signatures that the version bindings select between. */
typedef it_status_t itapi_lmr_create10_fn(it_pz_handle_t, void *, it_length_t,
					  it_mem_priv_t, it_lmr_flag_t,
					  uint32_t, it_lmr_handle_t *,
					  it_rmr_context_t *);
typedef it_status_t itapi_lmr_create20_fn(it_pz_handle_t, void *, it_length_t,
					  it_addr_mode_t, it_mem_priv_t,
					  it_lmr_flag_t, uint32_t,
					  it_lmr_handle_t *,
					  it_rmr_context_t *);
typedef it_status_t itapi_lmr_create21_fn(it_pz_handle_t, void *, it_iobl_t *,
					  it_length_t, it_addr_mode_t,
					  it_mem_priv_t, it_lmr_flag_t,
					  uint32_t, it_lmr_handle_t *,
					  it_rmr_context_t *);
typedef it_status_t itapi_rmr_create10_fn(it_pz_handle_t, it_rmr_handle_t *);
typedef it_status_t itapi_rmr_create20_fn(it_pz_handle_t, it_rmr_type_t,
					  it_rmr_handle_t *);
typedef it_status_t itapi_rmr_bind10_fn(it_rmr_handle_t, it_lmr_handle_t,
					void *, it_length_t, it_mem_priv_t,
					it_ep_handle_t, it_dto_cookie_t,
					it_dto_flags_t, it_rmr_context_t *);
typedef it_status_t itapi_rmr_link_fn(it_rmr_handle_t, it_lmr_handle_t, void *,
				      it_length_t, it_addr_mode_t,
				      it_mem_priv_t, it_ep_handle_t,
				      it_dto_cookie_t, it_dto_flags_t,
				      it_rmr_context_t *);
typedef it_rdma_addr_t itapi_make_rdma_addr_absolute_fn(void *);
typedef it_status_t itapi_lmr_sync_fn(const it_lmr_triplet_t *, size_t);
typedef it_status_t itapi_rmr_unlink_fn(it_rmr_handle_t, it_ep_handle_t,
					it_dto_cookie_t, it_dto_flags_t);

#endif /* ITAPI_TEST_H */
