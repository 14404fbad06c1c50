/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Declared runtime parameters.  Every setting of OpenRDMA is declared once
 * with its type, default and help; its value comes from the environment
 * variable OPENRDMA_<SCOPE>_<NAME> (OPENRDMA_<NAME> for the core), else from
 * the config file ($sysconfdir/openrdma/openrdma.conf, or the file named by
 * OPENRDMA_CONFIG), else the default.  openrdma-info -p lists them all.
 */
#ifndef OPENRDMA_PARAM_H
#define OPENRDMA_PARAM_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum openrdma_param_type {
	OPENRDMA_PARAM_BOOL = 1, /* 1/0, y/n, yes/no, on/off, true/false */
	OPENRDMA_PARAM_INT, /* int64, decimal or 0x hex */
	OPENRDMA_PARAM_SIZE, /* uint64 with optional k, m, g suffix (1024) */
	OPENRDMA_PARAM_STRING,
};

struct openrdma_param_def {
	const char *name; /* lower case: "log_level", "nodelay" */
	enum openrdma_param_type type;
	const char *default_value; /* as text; NULL: no default */
	const char *help;
};

/*
 * scope is NULL for core parameters, else the transport's name ("tcp").
 * The getters return 0 and set *value, -OPENRDMA_ENOENT if the parameter
 * is not declared, -OPENRDMA_EINVAL if its value does not parse (a
 * warning is logged; *value is then the default).
 */
int openrdma_param_get_bool(const char *scope, const char *name, bool *value);
int openrdma_param_get_int(const char *scope, const char *name, int64_t *value);
int openrdma_param_get_size(const char *scope, const char *name,
			    uint64_t *value);
/* The string stays valid until the library is unloaded. */
int openrdma_param_get_str(const char *scope, const char *name,
			   const char **value);

struct openrdma_param_info {
	const char *scope; /* NULL for the core */
	const struct openrdma_param_def *def;
	const char *env_name; /* "OPENRDMA_TCP_NODELAY" */
	const char *value; /* current value as text, NULL if unset */
	const char *source; /* "default", "env", "config", "unset" */
};

/* Calls fn for every declared parameter; stops early if fn returns != 0. */
int openrdma_param_foreach(int (*fn)(const struct openrdma_param_info *info,
				     void *arg),
			   void *arg);

#ifdef __cplusplus
}
#endif

#endif /* OPENRDMA_PARAM_H */
