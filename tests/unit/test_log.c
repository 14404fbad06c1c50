/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Logging: level parsing, the level and file parameters, the line format,
 * errno kept across calls, the stderr fallback, and a set-up raced by
 * several threads.  The logger sets itself up once per process; Criterion
 * runs each test in a fresh one.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <openrdma/log.h>

#include "core/param.h"

static void env_set(const char *name, const char *value)
{
	cr_assert_eq(setenv(name, value, 1), 0);
}

/* The test's temporary files; removed after the test, pass or fail. */
static char *tmp_files[8];
static int num_tmp_files;

static char *tmpfile_make(void)
{
	char *path = strdup("/tmp/openrdma-test-XXXXXX");
	int fd;

	cr_assert_not_null(path);
	cr_assert_lt(num_tmp_files, 8);
	fd = mkstemp(path);
	cr_assert_geq(fd, 0, "mkstemp: %s", strerror(errno));
	close(fd);
	tmp_files[num_tmp_files++] = path;
	return path;
}

static void tmp_cleanup(void)
{
	while (num_tmp_files)
		unlink(tmp_files[--num_tmp_files]);
}

/* A log file of the test's own, and no config file. */
static char *log_to_file(const char *level)
{
	char *path = tmpfile_make();

	env_set("OPENRDMA_CONFIG", "/dev/null");
	env_set("OPENRDMA_LOG_FILE", path);
	if (level)
		env_set("OPENRDMA_LOG_LEVEL", level);
	else
		unsetenv("OPENRDMA_LOG_LEVEL");
	return path;
}

/* Sends file descriptor fd into a fresh file; returns its path. */
static char *fd_capture(int fd)
{
	char *path = tmpfile_make();
	int tmp = open(path, O_WRONLY | O_APPEND);

	cr_assert_geq(tmp, 0);
	cr_assert_eq(dup2(tmp, fd), fd);
	close(tmp);
	return path;
}

static char *file_slurp(const char *path)
{
	static char buf[65536];
	FILE *fp = fopen(path, "r");
	size_t n;

	cr_assert_not_null(fp);
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	return buf;
}

static int count_of(const char *text, const char *what)
{
	int n = 0;

	while ((text = strstr(text, what))) {
		n++;
		text += strlen(what);
	}
	return n;
}

TestSuite(log, .fini = tmp_cleanup);

Test(log, level_parse)
{
	static const struct {
		const char *text;
		enum openrdma_log_level level;
	} good[] = {
		{ "none", OPENRDMA_LOG_NONE },
		{ "0", OPENRDMA_LOG_NONE },
		{ "error", OPENRDMA_LOG_ERROR },
		{ "1", OPENRDMA_LOG_ERROR },
		{ "warn", OPENRDMA_LOG_WARN },
		{ "WARNING", OPENRDMA_LOG_WARN },
		{ "2", OPENRDMA_LOG_WARN },
		{ "Info", OPENRDMA_LOG_INFO },
		{ "3", OPENRDMA_LOG_INFO },
		{ "debug", OPENRDMA_LOG_DEBUG },
		{ " 4 ", OPENRDMA_LOG_DEBUG },
		{ "TRACE", OPENRDMA_LOG_TRACE },
		{ "5", OPENRDMA_LOG_TRACE },
	};
	static const char *const bad[] = {
		"", "6", "-1", "05", "verbose", "warns", "debug2", "4 4"
	};
	enum openrdma_log_level level;
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		cr_assert_eq(core_log_level_parse(good[i].text, &level), 0,
			     "%s", good[i].text);
		cr_assert_eq(level, good[i].level, "%s", good[i].text);
	}
	level = OPENRDMA_LOG_INFO;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(core_log_level_parse(bad[i], &level),
			     -OPENRDMA_EINVAL, "\"%s\"", bad[i]);
	cr_assert_eq(core_log_level_parse(NULL, &level), -OPENRDMA_EINVAL);
	cr_assert_eq(level, OPENRDMA_LOG_INFO);
}

Test(log, default_level_is_warn)
{
	log_to_file(NULL);
	cr_assert(openrdma_log_enabled(OPENRDMA_LOG_ERROR));
	cr_assert(openrdma_log_enabled(OPENRDMA_LOG_WARN));
	cr_assert_not(openrdma_log_enabled(OPENRDMA_LOG_INFO));
	cr_assert_not(openrdma_log_enabled(OPENRDMA_LOG_NONE));
	cr_assert_not(openrdma_log_enabled((enum openrdma_log_level)99));
}

Test(log, level_from_env)
{
	log_to_file("debug");
	cr_assert(openrdma_log_enabled(OPENRDMA_LOG_DEBUG));
	cr_assert_not(openrdma_log_enabled(OPENRDMA_LOG_TRACE));
}

Test(log, level_none_silences)
{
	char *path = log_to_file("none");

	cr_assert_not(openrdma_log_enabled(OPENRDMA_LOG_ERROR));
	openrdma_err("test", "not written");
	openrdma_log(OPENRDMA_LOG_ERROR, "test", "f", "not written either");
	cr_assert_str_eq(file_slurp(path), "");
}

Test(log, level_from_config_file)
{
	char *conf = tmpfile_make();
	FILE *fp = fopen(conf, "w");

	cr_assert_not_null(fp);
	fputs("log_level = info\n", fp);
	fclose(fp);
	log_to_file(NULL);
	env_set("OPENRDMA_CONFIG", conf);
	cr_assert(openrdma_log_enabled(OPENRDMA_LOG_INFO));
	cr_assert_not(openrdma_log_enabled(OPENRDMA_LOG_DEBUG));
}

Test(log, line_format)
{
	char *path = log_to_file("info");
	char expect[256];

	openrdma_log(OPENRDMA_LOG_WARN, "test", "fn", "hello %d", 5);
	openrdma_info("core", "already ends in a newline\n");
	openrdma_log(OPENRDMA_LOG_ERROR, NULL, NULL, "bare");
	openrdma_dbg("test", "below the level");
	snprintf(expect, sizeof(expect),
		 "openrdma[%d]: WARN test: fn: hello 5\n"
		 "openrdma[%d]: INFO core: %s: already ends in a newline\n"
		 "openrdma[%d]: ERROR core: bare\n",
		 (int)getpid(), (int)getpid(), __func__, (int)getpid());
	cr_assert_str_eq(file_slurp(path), expect);
}

Test(log, keeps_errno)
{
	char *path = log_to_file("warn");

	/* The first call sets the logger up: opens files, reads params. */
	errno = EBADF;
	openrdma_warn("test", "first");
	cr_assert_eq(errno, EBADF);
	errno = ENOSPC;
	cr_assert(openrdma_log_enabled(OPENRDMA_LOG_WARN));
	cr_assert_eq(errno, ENOSPC);
	errno = EAGAIN;
	openrdma_dbg("test", "disabled");
	cr_assert_eq(errno, EAGAIN);
	errno = ENOENT;
	openrdma_warn("test", "errno says %m");
	cr_assert_eq(errno, ENOENT);
	cr_assert(strstr(file_slurp(path), "errno says No such file"), "%s",
		  file_slurp(path));
}

Test(log, bad_level_warns_once)
{
	char *path = log_to_file("loud");

	cr_assert(openrdma_log_enabled(OPENRDMA_LOG_WARN));
	cr_assert_not(openrdma_log_enabled(OPENRDMA_LOG_INFO));
	openrdma_warn("test", "after");
	cr_assert_eq(count_of(file_slurp(path),
			      "OPENRDMA_LOG_LEVEL=\"loud\" (from env) is not"),
		     1, "%s", file_slurp(path));
}

Test(log, unopenable_file_falls_back_to_stderr)
{
	char *err = fd_capture(STDERR_FILENO);
	const char *text;
	char line[256];

	log_to_file("warn");
	env_set("OPENRDMA_LOG_FILE", "/nonexistent/dir/openrdma.log");
	openrdma_warn("test", "one");
	openrdma_warn("test", "two");
	text = file_slurp(err);
	cr_assert_eq(
		count_of(
			text,
			"/nonexistent/dir/openrdma.log\" (from env): cannot open"),
		1, "%s", text);
	snprintf(line, sizeof(line), "WARN test: %s: one\n", __func__);
	cr_assert(strstr(text, line), "%s", text);
	cr_assert(strstr(text, ": two\n"), "%s", text);
}

Test(log, stdout_destination)
{
	char *out = fd_capture(STDOUT_FILENO);

	log_to_file("warn");
	env_set("OPENRDMA_LOG_FILE", "stdout");
	openrdma_warn("test", "to stdout");
	cr_assert(strstr(file_slurp(out), "to stdout\n"));
}

Test(log, long_message_truncated)
{
	char *path = log_to_file("warn");
	static char big[4000];
	const char *text;
	size_t len;

	memset(big, 'x', sizeof(big) - 1);
	openrdma_warn("test", "%s", big);
	openrdma_warn("test", "next");
	text = file_slurp(path);
	len = strchr(text, '\n') - text + 1;
	cr_assert_leq(len, 1024);
	cr_assert_eq(strncmp(text + len - 4, "...\n", 4), 0);
	cr_assert(strstr(text + len, ": next\n"));
}

#define RACERS 8

static void *racer(void *arg)
{
	openrdma_log(OPENRDMA_LOG_WARN, "test", "racer", "thread %d",
		     *(int *)arg);
	return NULL;
}

Test(log, first_use_from_many_threads)
{
	char *path = log_to_file("warn");
	pthread_t threads[RACERS];
	int ids[RACERS], i;
	char line[64];

	for (i = 0; i < RACERS; i++) {
		ids[i] = i;
		cr_assert_eq(pthread_create(&threads[i], NULL, racer, &ids[i]),
			     0);
	}
	for (i = 0; i < RACERS; i++)
		pthread_join(threads[i], NULL);
	for (i = 0; i < RACERS; i++) {
		snprintf(line, sizeof(line), "racer: thread %d\n", i);
		cr_assert_eq(count_of(file_slurp(path), line), 1, "%s", line);
	}
	cr_assert_eq(count_of(file_slurp(path), "\n"), RACERS);
}
