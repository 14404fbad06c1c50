/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Logging for the core and transports.  The level comes from
 * OPENRDMA_LOG_LEVEL (error, warn, info, debug, trace; default warn), the
 * destination from OPENRDMA_LOG_FILE (default stderr).  Logging keeps errno.
 */
#ifndef OPENRDMA_LOG_H
#define OPENRDMA_LOG_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

enum openrdma_log_level {
	OPENRDMA_LOG_NONE = 0,
	OPENRDMA_LOG_ERROR,
	OPENRDMA_LOG_WARN,
	OPENRDMA_LOG_INFO,
	OPENRDMA_LOG_DEBUG,
	OPENRDMA_LOG_TRACE,
};

bool openrdma_log_enabled(enum openrdma_log_level level);
void openrdma_log(enum openrdma_log_level level, const char *subsys,
		  const char *func, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#define OPENRDMA_LOG_(lvl, subsys, ...)                                   \
	do {                                                              \
		if (openrdma_log_enabled(lvl))                            \
			openrdma_log(lvl, subsys, __func__, __VA_ARGS__); \
	} while (0)

#define openrdma_err(subsys, ...) \
	OPENRDMA_LOG_(OPENRDMA_LOG_ERROR, subsys, __VA_ARGS__)
#define openrdma_warn(subsys, ...) \
	OPENRDMA_LOG_(OPENRDMA_LOG_WARN, subsys, __VA_ARGS__)
#define openrdma_info(subsys, ...) \
	OPENRDMA_LOG_(OPENRDMA_LOG_INFO, subsys, __VA_ARGS__)
#define openrdma_dbg(subsys, ...) \
	OPENRDMA_LOG_(OPENRDMA_LOG_DEBUG, subsys, __VA_ARGS__)

#ifdef __cplusplus
}
#endif

#endif /* OPENRDMA_LOG_H */
