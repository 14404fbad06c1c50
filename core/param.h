/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Internal side of the declared parameters (include/openrdma/param.h): the
 * core table, transport scopes registered by the registry, lookups that
 * never log (for the logger itself), and the value parsers.
 */
#ifndef CORE_PARAM_H
#define CORE_PARAM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <openrdma/errno.h>
#include <openrdma/log.h>
#include <openrdma/param.h>

/* The core parameters, ending with an all-zero entry. */
extern const struct openrdma_param_def core_param_table[];

/* Longest parameter name and scope (transport name) accepted. */
#define CORE_PARAM_NAME_MAX 47
#define CORE_PARAM_SCOPE_MAX 15

/*
 * Declares a transport's parameters under scope (its name).  defs must stay
 * valid until core_param_scope_clear().  Invalid or repeated names are
 * skipped with a warning.
 */
int core_param_scope_add(const char *scope,
			 const struct openrdma_param_def *defs);
/* Forgets every transport scope (registry teardown). */
void core_param_scope_clear(void);
/*
 * Forgets every declaration and interned value, which invalidates the
 * strings lookups returned: only when the library is being unloaded.
 */
void core_param_fini(void);
/* True if scope.name (or name, for scope NULL) is declared. */
bool core_param_declared(const char *scope, const char *name);

/*
 * Looks a parameter up without logging: *value is its text (environment,
 * then config file, then default; NULL if unset) and *source one of "env",
 * "config", "default", "unset".  The text stays valid for the life of the
 * process.  Returns -OPENRDMA_ENOENT if the parameter is not declared.
 */
int core_param_raw(const char *scope, const char *name, const char **value,
		   const char **source);
/* Logs the config-file problems found so far (deferred: see param.c). */
void core_param_report(void);

/*
 * Value parsers shared by the getters, the logger and the tests.  They
 * accept surrounding white space and return 0 or -OPENRDMA_EINVAL.
 */
int core_param_parse_bool(const char *text, bool *value);
int core_param_parse_int(const char *text, int64_t *value);
int core_param_parse_size(const char *text, uint64_t *value);
/* "none".."trace" (any case, also "warning") or "0".."5". */
int core_log_level_parse(const char *text, enum openrdma_log_level *level);

/*
 * True when the process runs with other ids than the user's (setuid or
 * setgid): the environment is then ignored, as are plugin paths from it.
 */
bool core_setid(void);
bool core_setid_check(uid_t uid, uid_t euid, gid_t gid, gid_t egid);

#endif /* CORE_PARAM_H */
