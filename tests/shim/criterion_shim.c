/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The runner behind tests/shim/criterion/criterion.h (ThreadSanitizer
 * builds only).  Tests run one at a time, each in a forked child with its
 * suite's and its own init/fini and an alarm for its timeout; the summary
 * line has Criterion's format.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/options.h>

#define SHIM_EXIT_FAIL 1
#define SHIM_EXIT_SKIP 77
#define SHIM_DEFAULT_TIMEOUT 300

struct criterion_options criterion_options;

static struct cr_shim_test *shim_tests;
static struct cr_shim_suite *shim_suites;
static bool shim_expect_failed;

/* Constructors run in link order; keep the registration order. */
void cr_shim_register(struct cr_shim_test *test)
{
	struct cr_shim_test **p = &shim_tests;

	while (*p)
		p = &(*p)->next;
	*p = test;
}

void cr_shim_register_suite(struct cr_shim_suite *suite)
{
	suite->next = shim_suites;
	shim_suites = suite;
}

static const struct cr_shim_attr *shim_suite_attr(const char *name)
{
	struct cr_shim_suite *s;

	for (s = shim_suites; s; s = s->next)
		if (!strcmp(s->name, name))
			return &s->attr;
	return NULL;
}

void cr_shim_fail(const char *file, int line, bool fatal, const char *expr,
		  const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "[----] %s:%d: Assertion failed: %s", file, line, expr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (fatal) {
		fflush(NULL);
		_exit(SHIM_EXIT_FAIL);
	}
	shim_expect_failed = true;
}

void cr_shim_skip(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "[SKIP] ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(NULL);
	_exit(SHIM_EXIT_SKIP);
}

void cr_shim_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void shim_child(const struct cr_shim_test *t,
		       const struct cr_shim_attr *suite)
{
	double timeout = t->attr.timeout;

	if (timeout <= 0 && suite)
		timeout = suite->timeout;
	alarm(timeout > 0 ? (unsigned int)(timeout + 0.999) :
			    SHIM_DEFAULT_TIMEOUT);
	if (suite && suite->init)
		suite->init();
	if (t->attr.init)
		t->attr.init();
	t->fn();
	if (t->attr.fini)
		t->attr.fini();
	if (suite && suite->fini)
		suite->fini();
	fflush(NULL);
	_exit(shim_expect_failed ? SHIM_EXIT_FAIL : 0);
}

struct criterion_test_set *criterion_initialize(void)
{
	return (struct criterion_test_set *)&shim_tests;
}

int criterion_handle_args(int argc, char *argv[], bool handle_unknown_arg)
{
	return 1;
}

void criterion_finalize(struct criterion_test_set *tests)
{
}

static bool shim_selected(const struct cr_shim_test *t)
{
	const char *filter = getenv("CRITERION_TEST_PATTERN");
	char full[512];

	if (!filter || !*filter)
		return true;
	snprintf(full, sizeof(full), "%s/%s", t->suite, t->name);
	return strstr(full, filter) != NULL;
}

int criterion_run_all_tests(struct criterion_test_set *tests)
{
	unsigned int tested = 0, passed = 0, failed = 0, crashed = 0,
		     skipped = 0;
	const struct cr_shim_attr *suite;
	struct cr_shim_test *t;
	int status, code;
	pid_t pid;

	for (t = shim_tests; t; t = t->next) {
		suite = shim_suite_attr(t->suite);
		if (t->attr.disabled || (suite && suite->disabled) ||
		    !shim_selected(t)) {
			skipped++;
			continue;
		}
		fflush(NULL);
		pid = fork();
		if (pid < 0) {
			perror("fork");
			return 0;
		}
		if (pid == 0)
			shim_child(t, suite);
		if (waitpid(pid, &status, 0) != pid)
			status = -1;
		tested++;
		code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		if (WIFEXITED(status) && code == t->attr.exit_code &&
		    !t->attr.signal) {
			passed++;
			fprintf(stderr, "[PASS] %s::%s\n", t->suite, t->name);
		} else if (WIFEXITED(status) && code == SHIM_EXIT_SKIP) {
			tested--;
			skipped++;
			fprintf(stderr, "[SKIP] %s::%s\n", t->suite, t->name);
		} else if (WIFSIGNALED(status) &&
			   WTERMSIG(status) == t->attr.signal) {
			passed++;
			fprintf(stderr, "[PASS] %s::%s\n", t->suite, t->name);
		} else if (WIFSIGNALED(status)) {
			crashed++;
			fprintf(stderr, "[FAIL] %s::%s: %s\n", t->suite,
				t->name,
				WTERMSIG(status) == SIGALRM ?
					"timed out" :
					strsignal(WTERMSIG(status)));
		} else {
			failed++;
			fprintf(stderr, "[FAIL] %s::%s\n", t->suite, t->name);
		}
	}
	fprintf(stderr,
		"[====] Synthesis: Tested: %u | Passing: %u | Failing: %u | Crashing: %u | Skipped: %u\n",
		tested, passed, failed + crashed, crashed, skipped);
	return failed + crashed == 0;
}

/* Programs without their own main() get this one, as with Criterion. */
__attribute__((weak)) int main(int argc, char *argv[])
{
	struct criterion_test_set *tests = criterion_initialize();
	int ok = criterion_run_all_tests(tests);

	criterion_finalize(tests);
	return ok ? 0 : 1;
}
