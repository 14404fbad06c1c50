/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Transport plugins: libopenrdma-<name>-t<ABI>.so files, searched in the
 * directories of the transport_path parameter (its environment variable is
 * ignored by setuid and setgid programs, see core_setid()), then in the
 * openrdma/ folder next to the loaded library, then in the install
 * directory.  Each directory is read once, its files in byte order.
 */
#include "config.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utlist.h>

#include <openrdma/log.h>

#include "core/param.h"
#include "registry/registry.h"

#define STR_(x) #x
#define STR(x) STR_(x)
#define PLUGIN_PREFIX "libopenrdma-"
#define PLUGIN_SUFFIX "-t" STR(OPENRDMA_TRANSPORT_ABI) ".so"
#define MAX_DIRS 32

/* The directories read so far, by real path, so none is read twice. */
struct dir_set {
	char *paths[MAX_DIRS];
	int num;
};

bool registry_plugin_file_match(const char *file, char *name_out, size_t size)
{
	size_t len = strlen(file);
	size_t pre = sizeof(PLUGIN_PREFIX) - 1;
	size_t suf = sizeof(PLUGIN_SUFFIX) - 1;

	if (len <= pre + suf || strncmp(file, PLUGIN_PREFIX, pre) ||
	    strcmp(file + len - suf, PLUGIN_SUFFIX))
		return false;
	if (name_out && size)
		snprintf(name_out, size, "%.*s", (int)(len - pre - suf),
			 file + pre);
	return true;
}

static int plugin_filter(const struct dirent *de)
{
	return registry_plugin_file_match(de->d_name, NULL, 0);
}

/* Byte order, not the locale's: the same order on every machine. */
static int plugin_compare(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static void plugin_load(struct registry *reg, const char *path,
			const char *file)
{
	char name[REGISTRY_NAME_MAX + 1];
	const struct openrdma_transport *desc;
	openrdma_transport_ini_fn ini;
	struct registry_transport *rt;
	const char *err;
	void *dl, *sym;

	registry_plugin_file_match(file, name, sizeof(name));
	rt = registry_transport_new(reg, name, path);
	if (!rt)
		return;
	/* Not even loaded: a broken plugin can be excluded this way. */
	if (!registry_filter_match(reg->filter, name)) {
		registry_transport_status(rt,
					  "excluded by OPENRDMA_TRANSPORTS");
		return;
	}

	dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		err = dlerror();
		registry_transport_status(rt, "plugin load failed: %s",
					  err ? err : "unknown error");
		return;
	}
	dlerror();
	sym = dlsym(dl, OPENRDMA_TRANSPORT_INI_SYM(OPENRDMA_TRANSPORT_ABI));
	/* ISO C has no void * to function pointer conversion; POSIX does. */
	memcpy(&ini, &sym, sizeof(ini));
	if (!ini) {
		err = dlerror();
		registry_transport_status(rt, "plugin load failed: %s",
					  err ? err : "entry point is NULL");
		goto err_close;
	}
	desc = ini();
	if (!desc) {
		registry_transport_status(
			rt,
			"plugin load failed: its entry point returned no transport");
		goto err_close;
	}
	if (registry_transport_register(reg, rt, desc))
		goto err_close;
	rt->dl = dl;
	return;

err_close:
	dlclose(dl);
}

static void dir_scan(struct registry *reg, struct dir_set *seen,
		     const char *dir)
{
	struct dirent **names;
	char real[PATH_MAX], path[PATH_MAX];
	int i, n;

	if (!realpath(dir, real)) {
		openrdma_dbg("registry", "plugin directory %s: %s", dir,
			     strerror(errno));
		return;
	}
	for (i = 0; i < seen->num; i++)
		if (!strcmp(seen->paths[i], real))
			return;
	if (seen->num == MAX_DIRS) {
		openrdma_warn("registry",
			      "more than %d plugin directories; %s skipped",
			      MAX_DIRS, dir);
		return;
	}
	seen->paths[seen->num] = strdup(real);
	if (!seen->paths[seen->num])
		return;
	seen->num++;

	n = scandir(real, &names, plugin_filter, plugin_compare);
	if (n < 0) {
		openrdma_dbg("registry", "plugin directory %s: %s", real,
			     strerror(errno));
		return;
	}
	openrdma_dbg("registry", "plugin directory %s: %d plugin(s)", real, n);
	for (i = 0; i < n; i++) {
		if (snprintf(path, sizeof(path), "%s/%s", real,
			     names[i]->d_name) < (int)sizeof(path))
			plugin_load(reg, path, names[i]->d_name);
		free(names[i]);
	}
	free(names);
}

/* Every directory of a colon list, in order. */
static void path_scan(struct registry *reg, struct dir_set *seen,
		      const char *list)
{
	char dir[PATH_MAX];
	size_t n;

	while (*list) {
		n = strcspn(list, ":");
		if (n && n < sizeof(dir)) {
			memcpy(dir, list, n);
			dir[n] = '\0';
			dir_scan(reg, seen, dir);
		}
		list += n;
		if (*list == ':')
			list++;
	}
}

/* Any object of the library will do for dladdr(). */
static const char anchor;

/* The openrdma/ folder next to the library this code was loaded from. */
static void next_to_library(struct registry *reg, struct dir_set *seen)
{
	char dir[PATH_MAX];
	const char *slash;
	Dl_info info;

	if (!dladdr(&anchor, &info) || !info.dli_fname)
		return;
	slash = strrchr(info.dli_fname, '/');
	if (!slash)
		return;
	if (snprintf(dir, sizeof(dir), "%.*s/openrdma",
		     (int)(slash - info.dli_fname),
		     info.dli_fname) < (int)sizeof(dir))
		dir_scan(reg, seen, dir);
}

void registry_plugins_load(struct registry *reg)
{
	struct dir_set seen = { .num = 0 };
	const char *path, *source;
	int i;

	if (!core_param_raw(NULL, "transport_path", &path, &source) && path)
		path_scan(reg, &seen, path);
	next_to_library(reg, &seen);
	dir_scan(reg, &seen, OPENRDMA_TRANSPORTDIR);
	for (i = 0; i < seen.num; i++)
		free(seen.paths[i]);
}

void registry_plugins_unload(struct registry *reg)
{
	struct registry_transport *rt;

	DL_FOREACH (reg->transports, rt) {
		if (!rt->dl)
			continue;
		dlclose(rt->dl);
		rt->dl = NULL;
		rt->desc = NULL;
	}
}
