/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Reads the config file and its interfaces.d/ drop-ins (openrdma_config(5)).
 *
 * Problems are queued while reading and logged later by
 * registry_conf_report(): the logger takes its own level from this file,
 * so logging from inside the read would re-enter the logger's set-up.
 * Nothing here is fatal: a bad line is reported with file:line and skipped.
 */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>
#include <utlist.h>

#include "core/param.h"
#include "registry/conf.h"
#include "registry/registry.h"

struct conf_setting {
	UT_hash_handle hh;
	char *key; /* "name" or "scope.name" */
	char *value;
	char *origin;
};

struct conf_diag {
	struct conf_diag *next;
	enum openrdma_log_level level;
	char msg[];
};

/*
 * Read on first use; readers then go without the lock, as the lists do
 * not change until registry_conf_fini(), which runs when nothing else can.
 */
static pthread_mutex_t conf_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool conf_loaded;
static struct conf_setting *conf_settings;
static struct registry_conf_iface *conf_ifaces;

static pthread_mutex_t diag_lock = PTHREAD_MUTEX_INITIALIZER;
static struct conf_diag *diags;

static void diag(enum openrdma_log_level level, const char *origin,
		 const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void diag(enum openrdma_log_level level, const char *origin,
		 const char *fmt, ...)
{
	struct conf_diag *d;
	char msg[512];
	va_list ap;
	int n;

	n = snprintf(msg, sizeof(msg), "%s: ", origin);
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - n, fmt, ap);
	va_end(ap);

	d = malloc(sizeof(*d) + strlen(msg) + 1);
	if (!d)
		return;
	d->level = level;
	strcpy(d->msg, msg);
	pthread_mutex_lock(&diag_lock);
	LL_APPEND(diags, d);
	pthread_mutex_unlock(&diag_lock);
}

void registry_conf_report(void)
{
	struct conf_diag *list, *d, *tmp;

	pthread_mutex_lock(&diag_lock);
	list = diags;
	diags = NULL;
	pthread_mutex_unlock(&diag_lock);

	LL_FOREACH_SAFE (list, d, tmp) {
		if (openrdma_log_enabled(d->level))
			openrdma_log(d->level, "config", "read", "%s", d->msg);
		free(d);
	}
}

static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		end--;
	*end = '\0';
	return s;
}

static bool ident_valid(const char *s, size_t max)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_");

	return n && n <= max && !s[n];
}

/* "name" or "scope.name", lower case. */
static bool key_valid(char *key)
{
	char *dot = strchr(key, '.');
	bool ok;

	if (!dot)
		return ident_valid(key, CORE_PARAM_NAME_MAX);
	*dot = '\0';
	ok = ident_valid(key, CORE_PARAM_SCOPE_MAX) &&
	     ident_valid(dot + 1, CORE_PARAM_NAME_MAX);
	*dot = '.';
	return ok;
}

static void setting_free(struct conf_setting *s)
{
	free(s->key);
	free(s->value);
	free(s->origin);
	free(s);
}

static void setting_parse(char *line, const char *origin)
{
	struct conf_setting *s, *old;
	char *eq = strchr(line, '=');
	char *key, *value;

	if (!eq) {
		diag(OPENRDMA_LOG_WARN, origin,
		     "expected \"name = value\" or \"interface ...\"; line skipped");
		return;
	}
	*eq = '\0';
	key = trim(line);
	value = trim(eq + 1);
	if (!key_valid(key)) {
		diag(OPENRDMA_LOG_WARN, origin,
		     "invalid parameter name \"%s\"; line skipped", key);
		return;
	}
	if (!strchr(key, '.') && !core_param_declared(NULL, key)) {
		diag(OPENRDMA_LOG_WARN, origin,
		     "unknown parameter \"%s\"; line skipped", key);
		return;
	}
	if (!strcmp(key, "config")) {
		diag(OPENRDMA_LOG_WARN, origin,
		     "\"config\" can only be set by OPENRDMA_CONFIG; line skipped");
		return;
	}

	s = calloc(1, sizeof(*s));
	if (!s)
		goto err;
	s->key = strdup(key);
	s->value = strdup(value);
	s->origin = strdup(origin);
	if (!s->key || !s->value || !s->origin)
		goto err_free;

	/* The last setting of a name wins, as in a shell script. */
	HASH_FIND_STR(conf_settings, key, old);
	if (old) {
		HASH_DEL(conf_settings, old);
		setting_free(old);
	}
	HASH_ADD_KEYPTR(hh, conf_settings, s->key, strlen(s->key), s);
	return;

err_free:
	setting_free(s);
err:
	diag(OPENRDMA_LOG_ERROR, origin, "out of memory; line skipped");
}

static void iface_free(struct registry_conf_iface *ifc)
{
	int i;

	for (i = 0; i < ifc->num_params; i++)
		free(ifc->params[i]);
	free(ifc->params);
	free(ifc->origin);
	free(ifc);
}

/* Points at the value of a "key=value" token. */
static char *param_value(char *const *params, int num, const char *key)
{
	size_t len = strlen(key);
	int i;

	for (i = 0; i < num; i++)
		if (!strncmp(params[i], key, len) && params[i][len] == '=')
			return params[i] + len + 1;
	return NULL;
}

/* Checks one key=value token of an interface line. */
static int iface_token_check(struct registry_conf_iface *ifc, const char *tok,
			     const char *origin)
{
	const char *eq = strchr(tok, '=');
	char key[CORE_PARAM_NAME_MAX + 1];
	size_t len;

	if (!eq || eq == tok || (len = eq - tok) >= sizeof(key)) {
		diag(OPENRDMA_LOG_WARN, origin,
		     "expected key=value, got \"%s\"; line skipped", tok);
		return -OPENRDMA_EINVAL;
	}
	memcpy(key, tok, len);
	key[len] = '\0';
	if (param_value(ifc->params, ifc->num_params, key)) {
		diag(OPENRDMA_LOG_WARN, origin,
		     "\"%s\" given twice; line skipped", key);
		return -OPENRDMA_EINVAL;
	}
	return 0;
}

static void iface_parse(char *rest, const char *origin)
{
	struct registry_conf_iface *ifc;
	const char *name, *port;
	char *save = NULL, *tok;
	char **params;
	int64_t num;

	name = strtok_r(rest, " \t", &save);
	if (!name || !registry_iface_name_valid(name)) {
		diag(OPENRDMA_LOG_WARN, origin,
		     "invalid interface name \"%s\"; line skipped",
		     name ? name : "");
		return;
	}

	ifc = calloc(1, sizeof(*ifc) + strlen(name) + 1);
	if (!ifc) {
		diag(OPENRDMA_LOG_ERROR, origin, "out of memory; line skipped");
		return;
	}
	ifc->name = strcpy((char *)(ifc + 1), name);
	ifc->port_num = 1;
	ifc->origin = strdup(origin);
	if (!ifc->origin)
		goto err_nomem;

	while ((tok = strtok_r(NULL, " \t", &save))) {
		if (iface_token_check(ifc, tok, origin))
			goto err_free;
		params = realloc(ifc->params,
				 (ifc->num_params + 1) * sizeof(*params));
		if (!params)
			goto err_nomem;
		ifc->params = params;
		params[ifc->num_params] = strdup(tok);
		if (!params[ifc->num_params])
			goto err_nomem;
		ifc->num_params++;
	}

	ifc->transport = param_value(ifc->params, ifc->num_params, "transport");
	ifc->device = param_value(ifc->params, ifc->num_params, "device");
	if (!ifc->transport || !ifc->device) {
		diag(OPENRDMA_LOG_WARN, origin,
		     "interface %s needs transport= and device=; line skipped",
		     name);
		goto err_free;
	}
	port = param_value(ifc->params, ifc->num_params, "port");
	if (port) {
		if (core_param_parse_int(port, &num) || num < 1 || num > 255) {
			diag(OPENRDMA_LOG_WARN, origin,
			     "port=%s is not a port number (1-255); line skipped",
			     port);
			goto err_free;
		}
		ifc->port_num = (uint8_t)num;
	}
	LL_APPEND(conf_ifaces, ifc);
	return;

err_nomem:
	diag(OPENRDMA_LOG_ERROR, origin, "out of memory; line skipped");
err_free:
	iface_free(ifc);
}

static void file_read(const char *path, bool dropin, bool must_exist)
{
	char origin[4096 + 32];
	unsigned int lineno = 0;
	char *buf = NULL, *line;
	size_t size = 0;
	FILE *fp;

	fp = fopen(path, "re");
	if (!fp) {
		if (errno != ENOENT || must_exist)
			diag(OPENRDMA_LOG_WARN, path, "cannot open: %s",
			     strerror(errno));
		return;
	}

	while (getline(&buf, &size, fp) >= 0) {
		lineno++;
		snprintf(origin, sizeof(origin), "%s:%u", path, lineno);
		line = trim(buf);
		if (!*line || *line == '#')
			continue;
		if (!strncmp(line, "interface", 9) &&
		    (!line[9] || isspace((unsigned char)line[9])))
			iface_parse(line + 9, origin);
		else if (dropin)
			diag(OPENRDMA_LOG_WARN, origin,
			     "drop-in files hold only interface lines; line skipped");
		else
			setting_parse(line, origin);
	}
	if (ferror(fp))
		diag(OPENRDMA_LOG_WARN, path, "read error: %s",
		     strerror(errno));
	free(buf);
	fclose(fp);
}

static int dropin_filter(const struct dirent *de)
{
	size_t len = strlen(de->d_name);

	return de->d_name[0] != '.' && len > 5 &&
	       !strcmp(de->d_name + len - 5, ".conf");
}

/* Byte order, not the locale's: the same order on every machine. */
static int dropin_compare(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* interfaces.d/ next to the config file, *.conf in name order. */
static void dropins_read(const char *conf_path)
{
	const char *slash = strrchr(conf_path, '/');
	int dir_len = slash ? (int)(slash - conf_path) : 1;
	const char *dir_base = slash ? conf_path : ".";
	struct dirent **names;
	char dir[4096], path[4096 + 256];
	int i, n;

	if (snprintf(dir, sizeof(dir), "%.*s/interfaces.d", dir_len,
		     dir_base) >= (int)sizeof(dir))
		return;
	n = scandir(dir, &names, dropin_filter, dropin_compare);
	if (n < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			diag(OPENRDMA_LOG_WARN, dir, "cannot read: %s",
			     strerror(errno));
		return;
	}
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		file_read(path, true, true);
		free(names[i]);
	}
	free(names);
}

static void conf_read(void)
{
	const char *path, *source;

	if (core_param_raw(NULL, "config", &path, &source) || !path || !*path)
		return;
	/* A missing default file is normal; a missing named one is not. */
	file_read(path, false, !strcmp(source, "env"));
	dropins_read(path);
}

static void conf_load(void)
{
	if (atomic_load_explicit(&conf_loaded, memory_order_acquire))
		return;
	pthread_mutex_lock(&conf_lock);
	if (!atomic_load_explicit(&conf_loaded, memory_order_relaxed)) {
		conf_read();
		atomic_store_explicit(&conf_loaded, true, memory_order_release);
	}
	pthread_mutex_unlock(&conf_lock);
}

void registry_conf_fini(void)
{
	struct registry_conf_iface *ifc, *itmp;
	struct conf_setting *s, *stmp;
	struct conf_diag *d, *dtmp;

	pthread_mutex_lock(&conf_lock);
	HASH_ITER (hh, conf_settings, s, stmp) {
		HASH_DEL(conf_settings, s);
		setting_free(s);
	}
	LL_FOREACH_SAFE (conf_ifaces, ifc, itmp) {
		LL_DELETE(conf_ifaces, ifc);
		iface_free(ifc);
	}
	atomic_store_explicit(&conf_loaded, false, memory_order_release);
	pthread_mutex_unlock(&conf_lock);

	pthread_mutex_lock(&diag_lock);
	LL_FOREACH_SAFE (diags, d, dtmp) {
		LL_DELETE(diags, d);
		free(d);
	}
	pthread_mutex_unlock(&diag_lock);
}

const char *registry_conf_value(const char *scope, const char *name,
				const char **origin_out)
{
	char key[CORE_PARAM_SCOPE_MAX + CORE_PARAM_NAME_MAX + 2];
	struct conf_setting *s;

	conf_load();
	if (scope)
		snprintf(key, sizeof(key), "%s.%s", scope, name);
	else
		snprintf(key, sizeof(key), "%s", name);
	HASH_FIND_STR(conf_settings, key, s);
	if (!s)
		return NULL;
	if (origin_out)
		*origin_out = s->origin;
	return s->value;
}

const struct registry_conf_iface *registry_conf_interfaces(void)
{
	conf_load();
	return conf_ifaces;
}

void registry_conf_check_scope(const char *scope)
{
	size_t len = strlen(scope);
	struct conf_setting *s, *tmp;

	conf_load();
	HASH_ITER (hh, conf_settings, s, tmp) {
		if (strncmp(s->key, scope, len) || s->key[len] != '.')
			continue;
		if (!core_param_declared(scope, s->key + len + 1))
			diag(OPENRDMA_LOG_WARN, s->origin,
			     "transport %s has no parameter \"%s\"; ignored",
			     scope, s->key + len + 1);
	}
}
