/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * A minimal runner with Criterion's API, for ThreadSanitizer builds only.
 *
 * Criterion's runner cannot start under ThreadSanitizer: its inheritable
 * arena collides with TSAN's address-space layout (Criterion issue #274).
 * TSAN builds therefore compile the same test sources against this header:
 * Test()/TestSuite() with .init, .fini, .timeout, .description and
 * .disabled, the cr_assert and cr_expect families the tests use, and
 * cr_skip_test().  Each test runs in a forked child, as Criterion does.
 */
#ifndef OPENRDMA_CRITERION_SHIM_H
#define OPENRDMA_CRITERION_SHIM_H

#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

struct cr_shim_attr {
	int cr_shim_sentinel_; /* lets every attribute list end with a comma */
	void (*init)(void);
	void (*fini)(void);
	double timeout;
	const char *description;
	bool disabled;
	int signal;
	int exit_code;
};

struct cr_shim_test {
	const char *suite;
	const char *name;
	void (*fn)(void);
	struct cr_shim_attr attr;
	struct cr_shim_test *next;
};

struct cr_shim_suite {
	const char *name;
	struct cr_shim_attr attr;
	struct cr_shim_suite *next;
};

void cr_shim_register(struct cr_shim_test *test);
void cr_shim_register_suite(struct cr_shim_suite *suite);
/* No format attribute: an assertion without a message passes "" as fmt,
 * which -Wformat-zero-length would reject; Criterion builds check them. */
void cr_shim_fail(const char *file, int line, bool fatal, const char *expr,
		  const char *fmt, ...);
void cr_shim_skip(const char *fmt, ...);
void cr_shim_log(const char *fmt, ...);

#define CR_SHIM_CAT_(a, b) a##b
#define CR_SHIM_CAT(a, b) CR_SHIM_CAT_(a, b)
/* A test's function: prefixed, so it cannot clash with the code tested. */
#define CR_SHIM_FN_(suite, name) \
	CR_SHIM_CAT(cr_shim_fn_, CR_SHIM_CAT(suite, CR_SHIM_CAT(_, name)))

/* Every macro is variadic only, so ISO C99 accepts calls without options. */
#define Test(...) CR_SHIM_TEST_(__VA_ARGS__, .cr_shim_sentinel_ = 0)
#define CR_SHIM_TEST_(suite, name, ...)                                        \
	static void CR_SHIM_FN_(suite, name)(void);                            \
	static struct cr_shim_test CR_SHIM_CAT(                                \
		cr_shim_t_, CR_SHIM_CAT(suite, CR_SHIM_CAT(_, name))) = {      \
		#suite, #name, CR_SHIM_FN_(suite, name), { __VA_ARGS__ }, NULL \
	};                                                                     \
	__attribute__((constructor)) static void CR_SHIM_CAT(                  \
		cr_shim_r_, CR_SHIM_CAT(suite, CR_SHIM_CAT(_, name)))(void)    \
	{                                                                      \
		cr_shim_register(&CR_SHIM_CAT(                                 \
			cr_shim_t_,                                            \
			CR_SHIM_CAT(suite, CR_SHIM_CAT(_, name))));            \
	}                                                                      \
	static void CR_SHIM_FN_(suite, name)(void)

#define TestSuite(...) CR_SHIM_SUITE_(__VA_ARGS__, .cr_shim_sentinel_ = 0)
#define CR_SHIM_SUITE_(suite, ...)                                        \
	static struct cr_shim_suite CR_SHIM_CAT(                          \
		cr_shim_s_, suite) = { #suite, { __VA_ARGS__ }, NULL };   \
	__attribute__((constructor)) static void CR_SHIM_CAT(cr_shim_rs_, \
							     suite)(void) \
	{                                                                 \
		cr_shim_register_suite(&CR_SHIM_CAT(cr_shim_s_, suite));  \
	}                                                                 \
	/* completed by the caller's semicolon */                         \
	extern struct cr_shim_suite CR_SHIM_CAT(cr_shim_s_, suite)

/*
 * An assertion's optional message (format and arguments) arrives with a
 * trailing "" that makes the list non-empty; vfprintf ignores it.
 */
#define cr_shim_check(fatal, cond, text, ...)                         \
	do {                                                          \
		if (!(cond)) {                                        \
			cr_shim_fail(__FILE__, __LINE__, fatal, text, \
				     __VA_ARGS__);                    \
			/* fatal: cr_shim_fail() ended the test */    \
			if (fatal)                                    \
				__builtin_unreachable();              \
		}                                                     \
	} while (0)
#define CR_SHIM_BOOL_(fatal, neg, cond, ...) \
	cr_shim_check(fatal, neg(cond), #cond ": ", __VA_ARGS__)
#define CR_SHIM_CMP_(fatal, op, a, b, ...) \
	cr_shim_check(fatal, (a)op(b), #a " " #op " " #b ": ", __VA_ARGS__)
#define CR_SHIM_STR_(fatal, eq, a, b, ...)                                 \
	cr_shim_check(fatal, (strcmp(a, b) == 0) == (eq), #a ", " #b ": ", \
		      __VA_ARGS__)
#define CR_SHIM_ARR_(fatal, eq, a, b, size, ...)                \
	cr_shim_check(fatal, (memcmp(a, b, size) == 0) == (eq), \
		      #a ", " #b ": ", __VA_ARGS__)
#define CR_SHIM_NULL_(fatal, op, p, ...) \
	cr_shim_check(fatal, (p)op NULL, #p " " #op " NULL: ", __VA_ARGS__)

#define cr_assert(...) CR_SHIM_BOOL_(1, , __VA_ARGS__, "")
#define cr_assert_not(...) CR_SHIM_BOOL_(1, !, __VA_ARGS__, "")
#define cr_expect(...) CR_SHIM_BOOL_(0, , __VA_ARGS__, "")
#define cr_expect_not(...) CR_SHIM_BOOL_(0, !, __VA_ARGS__, "")
#define cr_assert_fail(...) cr_shim_check(1, 0, "failed: ", "" __VA_ARGS__)

#define cr_assert_eq(...) CR_SHIM_CMP_(1, ==, __VA_ARGS__, "")
#define cr_assert_neq(...) CR_SHIM_CMP_(1, !=, __VA_ARGS__, "")
#define cr_assert_lt(...) CR_SHIM_CMP_(1, <, __VA_ARGS__, "")
#define cr_assert_leq(...) CR_SHIM_CMP_(1, <=, __VA_ARGS__, "")
#define cr_assert_gt(...) CR_SHIM_CMP_(1, >, __VA_ARGS__, "")
#define cr_assert_geq(...) CR_SHIM_CMP_(1, >=, __VA_ARGS__, "")
#define cr_expect_eq(...) CR_SHIM_CMP_(0, ==, __VA_ARGS__, "")
#define cr_expect_neq(...) CR_SHIM_CMP_(0, !=, __VA_ARGS__, "")
#define cr_expect_lt(...) CR_SHIM_CMP_(0, <, __VA_ARGS__, "")
#define cr_expect_leq(...) CR_SHIM_CMP_(0, <=, __VA_ARGS__, "")
#define cr_expect_gt(...) CR_SHIM_CMP_(0, >, __VA_ARGS__, "")
#define cr_expect_geq(...) CR_SHIM_CMP_(0, >=, __VA_ARGS__, "")

#define cr_assert_null(...) CR_SHIM_NULL_(1, ==, __VA_ARGS__, "")
#define cr_assert_not_null(...) CR_SHIM_NULL_(1, !=, __VA_ARGS__, "")
#define cr_expect_null(...) CR_SHIM_NULL_(0, ==, __VA_ARGS__, "")
#define cr_expect_not_null(...) CR_SHIM_NULL_(0, !=, __VA_ARGS__, "")

#define cr_assert_str_eq(...) CR_SHIM_STR_(1, 1, __VA_ARGS__, "")
#define cr_assert_str_neq(...) CR_SHIM_STR_(1, 0, __VA_ARGS__, "")
#define cr_expect_str_eq(...) CR_SHIM_STR_(0, 1, __VA_ARGS__, "")
#define cr_expect_str_neq(...) CR_SHIM_STR_(0, 0, __VA_ARGS__, "")
#define cr_assert_arr_eq(...) CR_SHIM_ARR_(1, 1, __VA_ARGS__, "")
#define cr_assert_arr_neq(...) CR_SHIM_ARR_(1, 0, __VA_ARGS__, "")

#define cr_skip_test(...) cr_shim_skip("" __VA_ARGS__)
#define cr_log_info(...) cr_shim_log("" __VA_ARGS__)
#define cr_log_warn(...) cr_shim_log("" __VA_ARGS__)
#define cr_log_error(...) cr_shim_log("" __VA_ARGS__)

/* The runner API that programs with their own main() use. */
struct criterion_test_set;
struct criterion_test_set *criterion_initialize(void);
int criterion_handle_args(int argc, char *argv[], bool handle_unknown_arg);
int criterion_run_all_tests(struct criterion_test_set *tests);
void criterion_finalize(struct criterion_test_set *tests);

#endif /* OPENRDMA_CRITERION_SHIM_H */
