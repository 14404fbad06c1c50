/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The suite's entry point.  With OPENRDMA_TEST_INTERFACE naming one
 * interface it runs the Criterion tests on it; unset or "all", it runs
 * itself once per interface the registry lists, so that each run starts
 * with a fresh library and prints its own summary.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openrdma/registry.h>

#include <criterion/options.h>

#include "conf.h"

/* automake's exit status for a skipped test program */
#define CONF_EXIT_SKIP 77

static void explain_no_interface(void)
{
	struct openrdma_transport_info *info;
	int i, n;

	fprintf(stderr, "conformance: the registry lists no interface\n");
	if (openrdma_transport_info_list(&info, &n))
		return;
	for (i = 0; i < n; i++)
		fprintf(stderr, "conformance:   transport %s: %s\n",
			info[i].name, info[i].status);
	openrdma_transport_info_free(info, n);
}

/* Copies the registry's interface names (the list is freed before fork). */
static int interfaces(char (**names_out)[64], int *num_out)
{
	struct openrdma_device **list;
	char(*names)[64];
	int i, n, ret;

	ret = openrdma_device_list_get(&list, &n);
	if (ret)
		return ret;
	names = calloc(n > 0 ? (size_t)n : 1, sizeof(*names));
	if (!names) {
		openrdma_device_list_free(list);
		return -OPENRDMA_ENOMEM;
	}
	for (i = 0; i < n; i++)
		snprintf(names[i], sizeof(names[i]), "%s",
			 openrdma_device_name(list[i]));
	openrdma_device_list_free(list);
	*names_out = names;
	*num_out = n;
	return 0;
}

static int run_each(char *argv[], bool list_only)
{
	int i, n, ret, status, failed = 0;
	char(*names)[64];
	pid_t pid;

	ret = interfaces(&names, &n);
	if (ret) {
		fprintf(stderr, "conformance: cannot list interfaces: %s\n",
			openrdma_strerror(ret));
		return 1;
	}
	if (list_only) {
		for (i = 0; i < n; i++)
			printf("%s\n", names[i]);
		free(names);
		return 0;
	}
	if (!n) {
		explain_no_interface();
		free(names);
		return CONF_EXIT_SKIP;
	}
	for (i = 0; i < n; i++) {
		fflush(NULL);
		pid = fork();
		if (pid < 0) {
			perror("conformance: fork");
			failed = 1;
			break;
		}
		if (pid == 0) {
			setenv("OPENRDMA_TEST_INTERFACE", names[i], 1);
			execv("/proc/self/exe", argv);
			perror("conformance: exec");
			_exit(127);
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			fprintf(stderr, "conformance: %s: FAILED\n", names[i]);
			failed = 1;
		}
	}
	free(names);
	return failed;
}

static int run_one(int argc, char *argv[], const char *ifname,
		   enum conf_mode mode, enum conf_connect connect)
{
	struct criterion_test_set *tests;
	int ok = 1;

	/*
	 * Nothing here touches the library: the tests run in child
	 * processes, which must each start from an untouched registry.
	 */
	fprintf(stderr, "conformance: interface %s, mode %s, connect %s\n",
		ifname, conf_mode_name(mode),
		connect == CONF_CONNECT_CM ? "cm" : "manual");
	tests = criterion_initialize();
	/* list every test with its outcome, skips with their reasons;
	 * --verbose=N or CRITERION_VERBOSITY_LEVEL still decide */
	criterion_options.logging_threshold = CRITERION_INFO;
	if (criterion_handle_args(argc, argv, true))
		ok = criterion_run_all_tests(tests);
	criterion_finalize(tests);
	return ok ? 0 : 1;
}

/*
 * Criterion's workers find main through the dynamic symbol table to take
 * it over; the build hides symbols by default.
 */
__attribute__((visibility("default"))) int main(int argc, char *argv[]);

int main(int argc, char *argv[])
{
	const char *ifname = getenv("OPENRDMA_TEST_INTERFACE");
	enum conf_connect connect;
	enum conf_mode mode;

	if (argc == 2 && !strcmp(argv[1], "--list-interfaces"))
		return run_each(argv, true);
	if (conf_mode_parse(getenv("OPENRDMA_TEST_MODE"), &mode)) {
		fprintf(stderr, "conformance: OPENRDMA_TEST_MODE must be "
				"local, thread or process\n");
		return 2;
	}
	if (conf_connect_parse(getenv("OPENRDMA_TEST_CONNECT"), &connect)) {
		fprintf(stderr, "conformance: OPENRDMA_TEST_CONNECT must be "
				"cm or manual\n");
		return 2;
	}
	if (!ifname || !*ifname || !strcmp(ifname, "all"))
		return run_each(argv, false);
	return run_one(argc, argv, ifname, mode, connect);
}
