/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The config file (openrdma_config(5)): parameter settings and interface
 * lines, plus the interfaces.d/ drop-ins next to it.  Read once, on first
 * use, and immutable afterwards, so the strings it hands out stay valid
 * until registry_conf_fini().
 */
#ifndef REGISTRY_CONF_H
#define REGISTRY_CONF_H

#include <stdint.h>

/* One "interface NAME transport=T device=D [key=value ...]" line. */
struct registry_conf_iface {
	struct registry_conf_iface *next;
	char *name;
	char *transport;
	char *device;
	uint8_t port_num; /* port=N, default 1 */
	char **params; /* every key=value token, transport= and device= too */
	int num_params;
	char *origin; /* "file:line" */
};

/*
 * The value set by the config file for scope.name (scope NULL: a core
 * parameter), or NULL.  *origin_out ("file:line") may be NULL.
 */
const char *registry_conf_value(const char *scope, const char *name,
				const char **origin_out);
/* The interface lines, in file order (main file, then drop-ins by name). */
const struct registry_conf_iface *registry_conf_interfaces(void);
/* Warns about settings of scope that the transport does not declare. */
void registry_conf_check_scope(const char *scope);
/*
 * Logs the problems found while reading (once each).  Reading never logs
 * by itself, because the logger reads its own settings through it.
 */
void registry_conf_report(void);
/*
 * Frees what was read, and the problems not yet reported; the next use
 * reads the files again.  Only when nothing holds a string of it: after
 * registry_fini() and core_param_fini(), as the library is unloaded.
 */
void registry_conf_fini(void);

#endif /* REGISTRY_CONF_H */
