/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The two registries of DAT: the static one (dat.conf entries, read once
 * on first use) and the dynamic one (the tables providers register from
 * dat_provider_init()).  Opening an IA loads the library of the matching
 * entry, which registers its table, then opens the IA through it.
 *
 * Besides dat.conf, every name "ofa-openrdma-<interface>" opens OpenRDMA's
 * provider on that interface, so that programs run on OpenRDMA without a
 * dat.conf line; a dat.conf entry of that name takes precedence.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "core/export.h"
#include "registry/dat/datreg.h"

#ifndef DAT_CONF_DEFAULT
#define DAT_CONF_DEFAULT "/etc/dat.conf"
#endif

#define IMPLICIT_PREFIX "ofa-openrdma-"
#define IMPLICIT_LIB "libopenrdma-dat.so.2"

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t reg_once = PTHREAD_ONCE_INIT;
static struct datreg_conf reg_conf;
static struct datreg_entry *implicit; /* entries made for ofa-openrdma-* */
static struct datreg_provider *providers;
static unsigned int dbg_type = DATREG_DBG_ERROR;
static unsigned int dbg_dest = 0x1;

/* ------------------------------------------------------------ logging */

void datreg_log(unsigned int type, const char *fmt, ...)
{
	va_list ap;

	if (!(dbg_type & type))
		return;
	if (dbg_dest & 0x1) {
		va_start(ap, fmt);
		fputs("DAT Registry: ", stderr);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
	}
	if (dbg_dest & 0x2) {
		va_start(ap, fmt);
		vsyslog(LOG_DEBUG, fmt, ap);
		va_end(ap);
	}
}

static unsigned int env_bits(const char *name, unsigned int dflt)
{
	const char *v = secure_getenv(name);
	char *end;
	unsigned long n;

	if (!v || !*v)
		return dflt;
	n = strtoul(v, &end, 0);
	return *end ? dflt : (unsigned int)n;
}

/* ------------------------------------------------------------ init */

/* $DAT_OVERRIDE, else the configured dat.conf, else /etc/dat.conf. */
static void reg_init(void)
{
	const char *override;
	int ret;

	dbg_type = env_bits("DAT_DBG_TYPE", DATREG_DBG_ERROR);
	dbg_dest = env_bits("DAT_DBG_DEST", 0x1);
	override = secure_getenv("DAT_OVERRIDE");
	if (override) {
		ret = datreg_conf_read(override, &reg_conf);
		if (ret)
			datreg_log(DATREG_DBG_ERROR,
				   "DAT_OVERRIDE=%s: %s; no dat.conf entries\n",
				   override, strerror(-ret));
		return;
	}
	ret = datreg_conf_read(DATREG_CONF_PATH, &reg_conf);
	if (ret == -ENOENT && strcmp(DATREG_CONF_PATH, DAT_CONF_DEFAULT)) {
		datreg_conf_free(&reg_conf);
		ret = datreg_conf_read(DAT_CONF_DEFAULT, &reg_conf);
	}
	if (ret)
		datreg_log(DATREG_DBG_SR, "%s: %s\n", reg_conf.path,
			   strerror(-ret));
}

void datreg_lock(void)
{
	pthread_once(&reg_once, reg_init);
	pthread_mutex_lock(&reg_lock);
}

void datreg_unlock(void)
{
	pthread_mutex_unlock(&reg_lock);
}

struct datreg_conf *datreg_conf_get(void)
{
	return &reg_conf;
}

bool datreg_info_equal(const DAT_PROVIDER_INFO *a, const DAT_PROVIDER_INFO *b)
{
	return !strcmp(a->ia_name, b->ia_name) &&
	       a->dapl_version_major == b->dapl_version_major &&
	       a->dapl_version_minor == b->dapl_version_minor &&
	       a->is_thread_safe == b->is_thread_safe;
}

/* ------------------------------------------------------------ implicit */

/* OpenRDMA's provider, preferably the one next to this library. */
static char *implicit_lib(void)
{
	char path[PATH_MAX];
	Dl_info info;
	char *slash;

	if (dladdr((void *)implicit_lib, &info) && info.dli_fname &&
	    strlen(info.dli_fname) < sizeof(path)) {
		strcpy(path, info.dli_fname);
		slash = strrchr(path, '/');
		if (slash &&
		    (size_t)(slash - path) + 1 + sizeof(IMPLICIT_LIB) <=
			    sizeof(path)) {
			strcpy(slash + 1, IMPLICIT_LIB);
			if (!access(path, R_OK))
				return strdup(path);
		}
	}
	return strdup(IMPLICIT_LIB);
}

/* Under reg_lock: the entry that opens OpenRDMA's key->ia_name. */
static struct datreg_entry *implicit_entry(const DAT_PROVIDER_INFO *key)
{
	const char *iface = key->ia_name + strlen(IMPLICIT_PREFIX);
	struct datreg_entry *e;
	size_t n;

	/* the provider implements DAT 2.0, in either thread-safety mode */
	if (strncmp(key->ia_name, IMPLICIT_PREFIX, strlen(IMPLICIT_PREFIX)) ||
	    !*iface || key->dapl_version_major != 2 ||
	    key->dapl_version_minor != 0)
		return NULL;
	for (e = implicit; e; e = e->next)
		if (datreg_info_equal(&e->info, key))
			return e;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->info = *key;
	e->is_default = true;
	e->lib_path = implicit_lib();
	e->provider_version = strdup("openrdma.2.0");
	n = strlen(iface) + 3;
	e->ia_params = malloc(n);
	e->platform_params = strdup("");
	if (!e->lib_path || !e->provider_version || !e->ia_params ||
	    !e->platform_params) {
		free(e->lib_path);
		free(e->provider_version);
		free(e->ia_params);
		free(e->platform_params);
		free(e);
		return NULL;
	}
	snprintf(e->ia_params, n, "%s 0", iface);
	e->origin = "built in";
	e->next = implicit;
	implicit = e;
	return e;
}

/* ------------------------------------------------------------ loading */

static struct datreg_provider *dr_find(const DAT_PROVIDER_INFO *key)
{
	struct datreg_provider *p;

	for (p = providers; p; p = p->next)
		if (datreg_info_equal(&p->info, key))
			return p;
	return NULL;
}

/*
 * Set while this thread runs a provider's init or fini under reg_lock:
 * their calls back into dat_registry_add/remove_provider must not take
 * the lock again.
 */
static __thread bool registering;

/* Under reg_lock: loads the entry's library and calls its init. */
static int sr_load(struct datreg_entry *e)
{
	const char *err;

	if (e->ref++)
		return 0;
	free(e->load_error);
	e->load_error = NULL;
	dlerror();
	e->dl = dlopen(e->lib_path, RTLD_NOW | RTLD_GLOBAL);
	if (!e->dl) {
		err = dlerror();
		e->load_error = strdup(err ? err : "dlopen failed");
		e->ref--;
		datreg_log(DATREG_DBG_GENERIC, "library load failure: %s\n",
			   e->load_error ? e->load_error : "");
		return -ENOENT;
	}
	e->init = (DAT_PROVIDER_INIT_FUNC)dlsym(e->dl,
						DAT_PROVIDER_INIT_FUNC_STR);
	e->fini = (DAT_PROVIDER_FINI_FUNC)dlsym(e->dl,
						DAT_PROVIDER_FINI_FUNC_STR);
	if (!dlsym(e->dl, "dapl_extensions"))
		datreg_log(DATREG_DBG_SR,
			   "%s: no dapl_extensions: DAT extensions expected\n",
			   e->lib_path);
	if (!e->init) {
		e->load_error = strdup("no " DAT_PROVIDER_INIT_FUNC_STR);
		dlclose(e->dl);
		e->dl = NULL;
		e->ref--;
		return -ENOENT;
	}
	datreg_log(DATREG_DBG_SR, "IA %s: loaded %s\n", e->info.ia_name,
		   e->lib_path);
	registering = true;
	e->init(&e->info, e->ia_params);
	registering = false;
	return 0;
}

static void sr_unload(struct datreg_entry *e)
{
	if (--e->ref)
		return;
	registering = true;
	if (e->fini)
		e->fini(&e->info);
	registering = false;
	dlclose(e->dl);
	e->dl = NULL;
	datreg_log(DATREG_DBG_SR, "IA %s: unloaded %s\n", e->info.ia_name,
		   e->lib_path);
}

/* ------------------------------------------------------------ explaining */

static const char *ts_name(DAT_BOOLEAN ts)
{
	return ts ? "threadsafe" : "nonthreadsafe";
}

/*
 * Says why no entry served key, line by line, and picks the subtype of
 * the key that came closest to matching.
 */
static DAT_RETURN_SUBTYPE explain(const DAT_PROVIDER_INFO *key,
				  const struct datreg_entry *tried)
{
	DAT_RETURN_SUBTYPE sub = DAT_NAME_NOT_REGISTERED;
	const struct datreg_conf *c = &reg_conf;
	const struct datreg_bad_line *b;
	const struct datreg_entry *e;
	bool any = false;

	datreg_log(DATREG_DBG_ERROR,
		   "no provider for IA %s (DAT %u.%u, %s)%s%s\n", key->ia_name,
		   key->dapl_version_major, key->dapl_version_minor,
		   ts_name(key->is_thread_safe), c->path ? " in " : "",
		   c->path ? c->path : "");
	if (c->open_error)
		datreg_log(DATREG_DBG_ERROR, "  %s: %s\n", c->path,
			   c->open_error);
	for (e = c->entries; e; e = e->next) {
		if (strcmp(e->info.ia_name, key->ia_name))
			continue;
		any = true;
		if (e->kernel) {
			datreg_log(DATREG_DBG_ERROR,
				   "  %s:%d: a kernel (k) entry\n", e->origin,
				   e->line);
		} else if (e->info.dapl_version_major !=
			   key->dapl_version_major) {
			datreg_log(DATREG_DBG_ERROR,
				   "  %s:%d: for DAT %u.%u, not %u.%u\n",
				   e->origin, e->line,
				   e->info.dapl_version_major,
				   e->info.dapl_version_minor,
				   key->dapl_version_major,
				   key->dapl_version_minor);
			if (sub == DAT_NAME_NOT_REGISTERED)
				sub = DAT_MAJOR_NOT_FOUND;
		} else if (e->info.dapl_version_minor !=
			   key->dapl_version_minor) {
			datreg_log(DATREG_DBG_ERROR,
				   "  %s:%d: for DAT %u.%u, not %u.%u\n",
				   e->origin, e->line,
				   e->info.dapl_version_major,
				   e->info.dapl_version_minor,
				   key->dapl_version_major,
				   key->dapl_version_minor);
			if (sub != DAT_THREAD_SAFETY_NOT_FOUND)
				sub = DAT_MINOR_NOT_FOUND;
		} else if (e->info.is_thread_safe != key->is_thread_safe) {
			datreg_log(DATREG_DBG_ERROR,
				   "  %s:%d: %s, but the program asks for %s "
				   "(DAT_THREADSAFE)\n",
				   e->origin, e->line,
				   ts_name(e->info.is_thread_safe),
				   ts_name(key->is_thread_safe));
			sub = DAT_THREAD_SAFETY_NOT_FOUND;
		} else if (!e->is_default) {
			datreg_log(DATREG_DBG_ERROR,
				   "  %s:%d: marked nondefault: never loaded\n",
				   e->origin, e->line);
		} else if (e->load_error) {
			datreg_log(DATREG_DBG_ERROR,
				   "  %s:%d: library %s: %s\n", e->origin,
				   e->line, e->lib_path, e->load_error);
		} else if (e == tried) {
			datreg_log(DATREG_DBG_ERROR,
				   "  %s:%d: library %s registered no provider "
				   "named %s\n",
				   e->origin, e->line, e->lib_path,
				   key->ia_name);
		}
	}
	for (b = c->bad; b; b = b->next) {
		if (!b->ia_name || strcmp(b->ia_name, key->ia_name))
			continue;
		any = true;
		datreg_log(DATREG_DBG_ERROR, "  %s:%d: malformed: %s\n",
			   b->origin, b->line, b->why);
	}
	/* the built-in entry of an ofa-openrdma-* name */
	if (tried && !tried->line) {
		any = true;
		datreg_log(DATREG_DBG_ERROR, "  %s entry: library %s: %s\n",
			   tried->origin, tried->lib_path,
			   tried->load_error ? tried->load_error :
					       "registered no such provider");
	}
	if (!any)
		datreg_log(DATREG_DBG_ERROR,
			   "  no line names it (OpenRDMA's interfaces open as "
			   "%s<interface>)\n",
			   IMPLICIT_PREFIX);
	return sub;
}

/* ------------------------------------------------------------ open, close */

/* Under reg_lock: the default entry of key, from dat.conf or built in. */
static struct datreg_entry *sr_find(const DAT_PROVIDER_INFO *key)
{
	struct datreg_entry *e;
	bool named = false;

	for (e = reg_conf.entries; e; e = e->next) {
		if (strcmp(e->info.ia_name, key->ia_name))
			continue;
		named = true;
		if (e->is_default && !e->kernel &&
		    datreg_info_equal(&e->info, key))
			return e;
	}
	/* a dat.conf line for the name overrides the built-in entry */
	return named ? NULL : implicit_entry(key);
}

DAT_RETURN datreg_provider_open(const DAT_PROVIDER_INFO *key,
				struct datreg_open *out)
{
	struct datreg_provider *p;
	struct datreg_entry *e;
	DAT_RETURN_SUBTYPE sub;
	bool loaded;

	datreg_lock();
	e = sr_find(key);
	loaded = e && !sr_load(e);
	/* a provider may also have registered itself without dat.conf */
	p = dr_find(key);
	if (!p) {
		sub = explain(key, e);
		if (loaded)
			sr_unload(e);
		datreg_unlock();
		return DATREG_ERR(DAT_PROVIDER_NOT_FOUND, sub);
	}
	p->ref++;
	out->entry = loaded ? e : NULL;
	out->dr = p;
	datreg_unlock();
	return DAT_SUCCESS;
}

void datreg_provider_close(struct datreg_open *o)
{
	datreg_lock();
	if (o->dr)
		o->dr->ref--;
	if (o->entry)
		sr_unload(o->entry);
	datreg_unlock();
	o->dr = NULL;
	o->entry = NULL;
}

/* ------------------------------------------------------------ provider API */

/* The arguments both calls check, in their order. */
static DAT_RETURN dr_args(const DAT_PROVIDER *provider,
			  const DAT_PROVIDER_INFO *info)
{
	if (!provider)
		return DATREG_ERR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG1);
	if (!info)
		return DATREG_ERR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	return DAT_SUCCESS;
}

OPENRDMA_EXPORT DAT_RETURN dat_registry_add_provider(
	const DAT_PROVIDER *provider, const DAT_PROVIDER_INFO *info)
{
	struct datreg_provider *p;
	DAT_RETURN ret = dr_args(provider, info);
	bool locked = !registering;

	if (ret != DAT_SUCCESS)
		return ret;
	/* from a provider's init the registry's lock is held already */
	if (locked)
		datreg_lock();
	if (dr_find(info)) {
		ret = DATREG_ERR(DAT_PROVIDER_ALREADY_REGISTERED, 0);
	} else {
		p = calloc(1, sizeof(*p));
		if (p) {
			p->info = *info;
			p->provider = provider;
			p->next = providers;
			providers = p;
			datreg_log(DATREG_DBG_DR, "registered %s (%u.%u, %s)\n",
				   info->ia_name, info->dapl_version_major,
				   info->dapl_version_minor,
				   ts_name(info->is_thread_safe));
		} else {
			ret = DATREG_ERR(DAT_INSUFFICIENT_RESOURCES,
					 DAT_RESOURCE_MEMORY);
		}
	}
	if (locked)
		datreg_unlock();
	return ret;
}

OPENRDMA_EXPORT DAT_RETURN dat_registry_remove_provider(
	const DAT_PROVIDER *provider, const DAT_PROVIDER_INFO *info)
{
	struct datreg_provider **pp, *p = NULL;
	DAT_RETURN ret = dr_args(provider, info);
	bool locked = !registering;

	if (ret != DAT_SUCCESS)
		return ret;
	if (locked)
		datreg_lock();
	for (pp = &providers; *pp; pp = &(*pp)->next) {
		if (datreg_info_equal(&(*pp)->info, info)) {
			p = *pp;
			break;
		}
	}
	if (!p)
		ret = DATREG_ERR(DAT_PROVIDER_NOT_FOUND,
				 DAT_NAME_NOT_REGISTERED);
	else if (p->ref)
		ret = DATREG_ERR(DAT_PROVIDER_IN_USE, 0);
	else
		*pp = p->next;
	if (locked)
		datreg_unlock();
	if (ret == DAT_SUCCESS)
		free(p);
	return ret;
}

/* ------------------------------------------------------------ consumer */

OPENRDMA_EXPORT DAT_RETURN dat_registry_list_providers(
	DAT_COUNT max_to_return, DAT_COUNT *entries_returned,
	DAT_PROVIDER_INFO *(dat_provider_list[]))
{
	struct datreg_entry *e;
	DAT_COUNT n = 0;

	if (max_to_return < 0)
		return DATREG_ERR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG1);
	if (!entries_returned)
		return DATREG_ERR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	if (max_to_return && !dat_provider_list)
		return DATREG_ERR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	datreg_lock();
	for (e = reg_conf.entries; e; e = e->next) {
		if (!e->is_default || e->kernel)
			continue;
		if (max_to_return && n < max_to_return) {
			if (!dat_provider_list[n]) {
				datreg_unlock();
				return DATREG_ERR(DAT_INVALID_PARAMETER,
						  DAT_INVALID_ARG3);
			}
			*dat_provider_list[n] = e->info;
		}
		if (!max_to_return || n < max_to_return)
			n++;
	}
	datreg_unlock();
	*entries_returned = n;
	/* DAT: asking for the count alone reports it as an error */
	if (!max_to_return)
		return DATREG_ERR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG1);
	return DAT_SUCCESS;
}

/* Under reg_lock: the library and parameters that serve name. */
static const struct datreg_entry *entry_named(const char *name)
{
	DAT_PROVIDER_INFO key = { 0 };
	struct datreg_entry *e;

	for (e = reg_conf.entries; e; e = e->next)
		if (!strcmp(e->info.ia_name, name) && e->is_default)
			return e;
	snprintf(key.ia_name, sizeof(key.ia_name), "%s", name);
	key.dapl_version_major = DAT_VERSION_MAJOR;
	key.dapl_version_minor = DAT_VERSION_MINOR;
	key.is_thread_safe = DAT_THREADSAFE;
	return implicit_entry(&key);
}

OPENRDMA_EXPORT DAT_RETURN dat_registry_providers_related(
	const DAT_NAME_PTR ia_name1, const DAT_NAME_PTR ia_name2,
	DAT_HA_RELATIONSHIP *relationship)
{
	const struct datreg_entry *a, *b;
	DAT_HA_RELATIONSHIP rel;

	if (!ia_name1)
		return DATREG_ERR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG1);
	if (!ia_name2)
		return DATREG_ERR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	if (!relationship)
		return DATREG_ERR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	datreg_lock();
	a = entry_named(ia_name1);
	b = entry_named(ia_name2);
	if (!a || !b) {
		datreg_unlock();
		return DATREG_ERR(DAT_PROVIDER_NOT_FOUND,
				  DAT_NAME_NOT_REGISTERED);
	}
	/*
	 * The same library with the same instance data reaches the same
	 * device; another library may or may not: only it could tell.
	 */
	if (strcmp(a->lib_path, b->lib_path))
		rel = DAT_HA_UNKNOWN;
	else
		rel = strcmp(a->ia_params, b->ia_params) ? DAT_HA_FALSE :
							   DAT_HA_TRUE;
	datreg_unlock();
	*relationship = rel;
	return DAT_SUCCESS;
}
