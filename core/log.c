/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Logging.  The level and destination are the parameters log_level and
 * log_file, read once on first use.  A disabled level costs one atomic
 * load and compare.  Each line is written with one write(2), so lines of
 * several threads or processes sharing a file do not interleave.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/export.h"
#include "core/param.h"

/* -1 until set up; then an enum openrdma_log_level. */
static atomic_int log_level = -1;
static int log_fd = STDERR_FILENO;
static pthread_once_t log_once = PTHREAD_ONCE_INIT;

/*
 * Problems met while setting up, reported once set-up is over: logging
 * from inside pthread_once() would wait for itself.
 */
static char log_problem[2][320];
static atomic_bool log_problem_pending;

static void log_init(void)
{
	enum openrdma_log_level level = OPENRDMA_LOG_WARN;
	const char *text, *source;
	int fd;

	if (!core_param_raw(NULL, "log_level", &text, &source) && text &&
	    core_log_level_parse(text, &level)) {
		level = OPENRDMA_LOG_WARN;
		snprintf(
			log_problem[0], sizeof(log_problem[0]),
			"OPENRDMA_LOG_LEVEL=\"%s\" (from %s) is not one of none, error, warn, info, debug, trace or 0-5; using warn",
			text, source);
	}

	if (!core_param_raw(NULL, "log_file", &text, &source) && text &&
	    strcmp(text, "stderr")) {
		if (!strcmp(text, "stdout")) {
			log_fd = STDOUT_FILENO;
		} else {
			fd = open(text,
				  O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
				  0644);
			if (fd >= 0)
				log_fd = fd;
			else
				snprintf(
					log_problem[1], sizeof(log_problem[1]),
					"OPENRDMA_LOG_FILE=\"%s\" (from %s): cannot open: %s; logging to stderr",
					text, source, strerror(errno));
		}
	}

	atomic_store_explicit(&log_problem_pending,
			      log_problem[0][0] || log_problem[1][0],
			      memory_order_relaxed);
	/* Publishes log_fd with the level. */
	atomic_store_explicit(&log_level, level, memory_order_release);
}

static int log_setup(void)
{
	int saved = errno;
	size_t i;

	pthread_once(&log_once, log_init);
	if (atomic_exchange(&log_problem_pending, false)) {
		for (i = 0; i < sizeof(log_problem) / sizeof(log_problem[0]);
		     i++)
			if (log_problem[i][0])
				openrdma_log(OPENRDMA_LOG_WARN, "log", "setup",
					     "%s", log_problem[i]);
	}
	/* The config file may have had problems of its own to report. */
	core_param_report();
	errno = saved;
	return atomic_load_explicit(&log_level, memory_order_acquire);
}

OPENRDMA_EXPORT
bool openrdma_log_enabled(enum openrdma_log_level level)
{
	int cur = atomic_load_explicit(&log_level, memory_order_acquire);

	if (__builtin_expect(cur < 0, 0))
		cur = log_setup();
	return level != OPENRDMA_LOG_NONE &&
	       (unsigned int)level <= (unsigned int)cur;
}

static void write_all(int fd, const char *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf += n;
		len -= n;
	}
}

OPENRDMA_EXPORT
void openrdma_log(enum openrdma_log_level level, const char *subsys,
		  const char *func, const char *fmt, ...)
{
	static const char *const names[] = {
		[OPENRDMA_LOG_NONE] = "NONE",	[OPENRDMA_LOG_ERROR] = "ERROR",
		[OPENRDMA_LOG_WARN] = "WARN",	[OPENRDMA_LOG_INFO] = "INFO",
		[OPENRDMA_LOG_DEBUG] = "DEBUG", [OPENRDMA_LOG_TRACE] = "TRACE",
	};
	static const char ellipsis[] = "...";
	char buf[1024];
	int saved = errno;
	size_t len;
	va_list ap;
	int n, ret;

	if (!fmt || !openrdma_log_enabled(level))
		goto out;

	n = snprintf(buf, sizeof(buf), "openrdma[%d]: %s %s: %s%s",
		     (int)getpid(), names[level], subsys ? subsys : "core",
		     func ? func : "", func ? ": " : "");
	/* One byte stays free for the newline. */
	if (n < 0 || (size_t)n >= sizeof(buf) - 1)
		goto out;
	/* The caller's errno, for %m. */
	errno = saved;
	va_start(ap, fmt);
	ret = vsnprintf(buf + n, sizeof(buf) - 1 - n, fmt, ap);
	va_end(ap);

	len = strlen(buf);
	if (ret >= (int)(sizeof(buf) - 1 - n))
		memcpy(buf + len - (sizeof(ellipsis) - 1), ellipsis,
		       sizeof(ellipsis) - 1);
	while (len && buf[len - 1] == '\n')
		len--;
	buf[len++] = '\n';
	write_all(log_fd, buf, len);
out:
	errno = saved;
}
