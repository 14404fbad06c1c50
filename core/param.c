/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Declared parameters: the core table plus one scope per registered
 * transport.  A value comes from the environment, else the config file,
 * else the declared default.  Values are looked up on every call (so a
 * test or a tool may change the environment) and interned, so the strings
 * handed out stay valid after a plugin that declared them is unloaded.
 *
 * param_lock guards the table and the intern set.  It is never held while
 * calling out (config reader, logger), since both call back in here.
 */
#include "config.h"

#include <ctype.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <uthash.h>
#include <utlist.h>

#include "core/export.h"
#include "core/param.h"
#include "registry/conf.h"
#include "registry/registry.h"

#define PARAM_KEY_MAX (CORE_PARAM_SCOPE_MAX + 1 + CORE_PARAM_NAME_MAX + 1)
#define PARAM_ENV_MAX (sizeof("OPENRDMA_") + PARAM_KEY_MAX)

struct param_entry {
	UT_hash_handle hh;
	struct param_entry *next; /* declaration order */
	const struct openrdma_param_def *def;
	bool scoped;
	char scope[CORE_PARAM_SCOPE_MAX + 1];
	char key[PARAM_KEY_MAX]; /* "name" or "scope.name" */
	char env_name[PARAM_ENV_MAX];
};

struct param_intern {
	UT_hash_handle hh;
	char text[];
};

/* What one lookup found, copied out from under param_lock. */
struct param_value {
	enum openrdma_param_type type;
	const char *text; /* interned; NULL when unset */
	const char *source;
	const char *origin; /* config file:line, when from there */
	const char *def_text; /* interned default, or NULL */
	char env_name[PARAM_ENV_MAX];
};

static pthread_mutex_t param_lock = PTHREAD_MUTEX_INITIALIZER;
static struct param_entry *param_table; /* hash by key */
static struct param_entry *param_order;
static bool param_core_ready;
static struct param_intern *param_interned;

static atomic_int setid_cached = -1;

bool core_setid_check(uid_t uid, uid_t euid, gid_t gid, gid_t egid)
{
	return uid != euid || gid != egid;
}

bool core_setid(void)
{
	int v = atomic_load_explicit(&setid_cached, memory_order_relaxed);

	if (v < 0) {
		v = core_setid_check(getuid(), geteuid(), getgid(), getegid());
		atomic_store_explicit(&setid_cached, v, memory_order_relaxed);
	}
	return v;
}

/* A privileged process must not be steered by its caller's environment. */
static const char *env_get(const char *name)
{
	if (core_setid())
		return NULL;
#ifdef HAVE_SECURE_GETENV
	return secure_getenv(name);
#else
	return getenv(name);
#endif
}

/* ------------------------------------------------------------------ */
/* Parsers                                                            */
/* ------------------------------------------------------------------ */

/* Copies text without surrounding white space; too long is invalid. */
static int trim_copy(const char *text, char *buf, size_t size)
{
	size_t len;

	if (!text)
		return -OPENRDMA_EINVAL;
	while (isspace((unsigned char)*text))
		text++;
	len = strlen(text);
	while (len && isspace((unsigned char)text[len - 1]))
		len--;
	if (!len || len >= size)
		return -OPENRDMA_EINVAL;
	memcpy(buf, text, len);
	buf[len] = '\0';
	return 0;
}

int core_param_parse_bool(const char *text, bool *value)
{
	static const char *const words[][2] = {
		{ "1", "0" },	 { "y", "n" },	      { "yes", "no" },
		{ "on", "off" }, { "true", "false" },
	};
	char buf[8];
	size_t i;

	if (trim_copy(text, buf, sizeof(buf)))
		return -OPENRDMA_EINVAL;
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		if (!strcasecmp(buf, words[i][0]) ||
		    !strcasecmp(buf, words[i][1])) {
			*value = !strcasecmp(buf, words[i][0]);
			return 0;
		}
	}
	return -OPENRDMA_EINVAL;
}

/* Unsigned decimal or 0x hex; *end points after the digits. */
static int magnitude_parse(const char *s, uint64_t *mag, char **end)
{
	int base = 10;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
		if (!isxdigit((unsigned char)*s))
			return -OPENRDMA_EINVAL;
	} else if (!isdigit((unsigned char)*s)) {
		return -OPENRDMA_EINVAL;
	}
	errno = 0;
	*mag = strtoull(s, end, base);
	return errno ? -OPENRDMA_EINVAL : 0;
}

int core_param_parse_int(const char *text, int64_t *value)
{
	uint64_t mag;
	bool neg = false;
	char buf[32], *s = buf, *end;
	int saved = errno;
	int ret;

	if (trim_copy(text, buf, sizeof(buf)))
		return -OPENRDMA_EINVAL;
	if (*s == '+' || *s == '-')
		neg = *s++ == '-';
	ret = magnitude_parse(s, &mag, &end);
	errno = saved;
	if (ret || *end || mag > (uint64_t)INT64_MAX + neg)
		return -OPENRDMA_EINVAL;
	if (neg)
		*value = mag > (uint64_t)INT64_MAX ? INT64_MIN : -(int64_t)mag;
	else
		*value = (int64_t)mag;
	return 0;
}

int core_param_parse_size(const char *text, uint64_t *value)
{
	unsigned int shift = 0;
	uint64_t mag;
	char buf[32], *end;
	int saved = errno;
	int ret;

	if (trim_copy(text, buf, sizeof(buf)))
		return -OPENRDMA_EINVAL;
	ret = magnitude_parse(buf, &mag, &end);
	errno = saved;
	if (ret)
		return ret;
	switch (tolower((unsigned char)*end)) {
	case '\0':
		break;
	case 'k':
		shift = 10;
		break;
	case 'm':
		shift = 20;
		break;
	case 'g':
		shift = 30;
		break;
	default:
		return -OPENRDMA_EINVAL;
	}
	if (shift && end[1])
		return -OPENRDMA_EINVAL;
	if (mag > UINT64_MAX >> shift)
		return -OPENRDMA_EINVAL;
	*value = mag << shift;
	return 0;
}

int core_log_level_parse(const char *text, enum openrdma_log_level *level)
{
	static const char *const names[] = {
		[OPENRDMA_LOG_NONE] = "none",	[OPENRDMA_LOG_ERROR] = "error",
		[OPENRDMA_LOG_WARN] = "warn",	[OPENRDMA_LOG_INFO] = "info",
		[OPENRDMA_LOG_DEBUG] = "debug", [OPENRDMA_LOG_TRACE] = "trace",
	};
	char buf[16];
	int i;

	if (trim_copy(text, buf, sizeof(buf)))
		return -OPENRDMA_EINVAL;
	if (!strcasecmp(buf, "warning"))
		strcpy(buf, "warn");
	for (i = OPENRDMA_LOG_NONE; i <= OPENRDMA_LOG_TRACE; i++) {
		if (!strcasecmp(buf, names[i]) ||
		    (buf[0] == '0' + i && !buf[1])) {
			*level = i;
			return 0;
		}
	}
	return -OPENRDMA_EINVAL;
}

static const char *type_name(enum openrdma_param_type type)
{
	switch (type) {
	case OPENRDMA_PARAM_BOOL:
		return "a boolean";
	case OPENRDMA_PARAM_INT:
		return "an integer";
	case OPENRDMA_PARAM_SIZE:
		return "a size";
	case OPENRDMA_PARAM_STRING:
		return "a string";
	}
	return "an unknown type";
}

union param_num {
	bool b;
	int64_t i;
	uint64_t u;
};

static int num_parse(enum openrdma_param_type type, const char *text,
		     union param_num *v)
{
	switch (type) {
	case OPENRDMA_PARAM_BOOL:
		return core_param_parse_bool(text, &v->b);
	case OPENRDMA_PARAM_INT:
		return core_param_parse_int(text, &v->i);
	case OPENRDMA_PARAM_SIZE:
		return core_param_parse_size(text, &v->u);
	case OPENRDMA_PARAM_STRING:
		break;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* The table                                                          */
/* ------------------------------------------------------------------ */

static bool ident_valid(const char *s, size_t max)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_");

	return n && n <= max && !s[n];
}

static void key_make(char *key, const char *scope, const char *name)
{
	if (scope)
		snprintf(key, PARAM_KEY_MAX, "%s.%s", scope, name);
	else
		snprintf(key, PARAM_KEY_MAX, "%s", name);
}

/* Called with param_lock held; the caller checked the names. */
static int entry_add(const char *scope, const struct openrdma_param_def *def)
{
	struct param_entry *e;
	char *p;

	e = calloc(1, sizeof(*e));
	if (!e)
		return -OPENRDMA_ENOMEM;
	e->def = def;
	e->scoped = scope != NULL;
	if (scope)
		snprintf(e->scope, sizeof(e->scope), "%s", scope);
	key_make(e->key, scope, def->name);
	snprintf(e->env_name, sizeof(e->env_name), "OPENRDMA_%s%s%s",
		 scope ? scope : "", scope ? "_" : "", def->name);
	for (p = e->env_name; *p; p++)
		*p = toupper((unsigned char)*p);
	HASH_ADD_STR(param_table, key, e);
	LL_APPEND(param_order, e);
	return 0;
}

static void entry_del(struct param_entry *e)
{
	HASH_DEL(param_table, e);
	LL_DELETE(param_order, e);
	free(e);
}

/* Called with param_lock held: the core table is added on first use. */
static int core_ready(void)
{
	const struct openrdma_param_def *def;
	struct param_entry *e, *tmp;
	int ret;

	if (param_core_ready)
		return 0;
	for (def = core_param_table; def->name; def++) {
		ret = entry_add(NULL, def);
		if (ret)
			goto err;
	}
	param_core_ready = true;
	return 0;

err:
	LL_FOREACH_SAFE (param_order, e, tmp)
		if (!e->scoped)
			entry_del(e);
	return ret;
}

static struct param_entry *entry_find(const char *scope, const char *name)
{
	char key[PARAM_KEY_MAX];
	struct param_entry *e;

	if (core_ready())
		return NULL;
	key_make(key, scope, name);
	HASH_FIND_STR(param_table, key, e);
	return e;
}

/* Checks one transport declaration; NULL if it is fine. */
static const char *def_problem(const struct openrdma_param_def *defs,
			       const struct openrdma_param_def *def)
{
	const struct openrdma_param_def *d;
	union param_num v;

	if (!ident_valid(def->name, CORE_PARAM_NAME_MAX))
		return "invalid name";
	if (def->type < OPENRDMA_PARAM_BOOL ||
	    def->type > OPENRDMA_PARAM_STRING)
		return "invalid type";
	for (d = defs; d != def; d++)
		if (!strcmp(d->name, def->name))
			return "declared twice";
	if (def->default_value && num_parse(def->type, def->default_value, &v))
		return "default does not parse";
	return NULL;
}

int core_param_scope_add(const char *scope,
			 const struct openrdma_param_def *defs)
{
	const struct openrdma_param_def *def;
	struct param_entry *e, *tmp;
	const char *problem;
	int ret = 0;

	if (!scope || !ident_valid(scope, CORE_PARAM_SCOPE_MAX))
		return -OPENRDMA_EINVAL;
	if (!defs)
		return 0;

	for (def = defs; def->name; def++) {
		problem = def_problem(defs, def);
		if (problem)
			openrdma_warn("param",
				      "%s: parameter \"%s\": %s; ignored",
				      scope, def->name, problem);
	}

	pthread_mutex_lock(&param_lock);
	LL_FOREACH (param_order, e) {
		if (e->scoped && !strcmp(e->scope, scope)) {
			ret = -OPENRDMA_EEXIST;
			goto out;
		}
	}
	for (def = defs; def->name && !ret; def++)
		if (!def_problem(defs, def))
			ret = entry_add(scope, def);
	/* All or nothing. */
	if (ret)
		LL_FOREACH_SAFE (param_order, e, tmp)
			if (e->scoped && !strcmp(e->scope, scope))
				entry_del(e);
out:
	pthread_mutex_unlock(&param_lock);
	return ret;
}

void core_param_scope_clear(void)
{
	struct param_entry *e, *tmp;

	pthread_mutex_lock(&param_lock);
	LL_FOREACH_SAFE (param_order, e, tmp)
		if (e->scoped)
			entry_del(e);
	pthread_mutex_unlock(&param_lock);
}

void core_param_fini(void)
{
	struct param_intern *in, *itmp;
	struct param_entry *e, *tmp;

	pthread_mutex_lock(&param_lock);
	LL_FOREACH_SAFE (param_order, e, tmp)
		entry_del(e);
	param_core_ready = false;
	HASH_ITER (hh, param_interned, in, itmp) {
		HASH_DEL(param_interned, in);
		free(in);
	}
	pthread_mutex_unlock(&param_lock);
}

bool core_param_declared(const char *scope, const char *name)
{
	bool found;

	pthread_mutex_lock(&param_lock);
	found = entry_find(scope, name) != NULL;
	pthread_mutex_unlock(&param_lock);
	return found;
}

/* Called with param_lock held. */
static const char *intern(const char *text)
{
	struct param_intern *in;
	size_t len;

	if (!text)
		return NULL;
	HASH_FIND_STR(param_interned, text, in);
	if (in)
		return in->text;
	len = strlen(text);
	in = calloc(1, sizeof(*in) + len + 1);
	if (!in)
		return NULL;
	memcpy(in->text, text, len + 1);
	HASH_ADD_KEYPTR(hh, param_interned, in->text, len, in);
	return in->text;
}

/* ------------------------------------------------------------------ */
/* Lookups                                                            */
/* ------------------------------------------------------------------ */

static int param_lookup(const char *scope, const char *name,
			struct param_value *pv)
{
	const char *env, *conf = NULL, *origin = NULL;
	struct param_entry *e;
	bool self_config;

	if (!name)
		return -OPENRDMA_EINVAL;
	pthread_mutex_lock(&param_lock);
	e = entry_find(scope, name);
	if (!e) {
		pthread_mutex_unlock(&param_lock);
		return -OPENRDMA_ENOENT;
	}
	pv->type = e->def->type;
	memcpy(pv->env_name, e->env_name, sizeof(pv->env_name));
	pv->def_text = intern(e->def->default_value);
	/* The config file cannot name itself. */
	self_config = !scope && !strcmp(name, "config");
	pthread_mutex_unlock(&param_lock);

	env = env_get(pv->env_name);
	if (!env && !self_config)
		conf = registry_conf_value(scope, name, &origin);

	pthread_mutex_lock(&param_lock);
	if (env) {
		pv->text = intern(env);
		pv->source = "env";
	} else if (conf) {
		pv->text = intern(conf);
		pv->source = "config";
	} else {
		pv->text = pv->def_text;
		pv->source = pv->text ? "default" : "unset";
	}
	pv->origin = origin;
	pthread_mutex_unlock(&param_lock);
	return 0;
}

int core_param_raw(const char *scope, const char *name, const char **value,
		   const char **source)
{
	struct param_value pv;
	int ret;

	ret = param_lookup(scope, name, &pv);
	if (ret)
		return ret;
	*value = pv.text;
	*source = pv.source;
	return 0;
}

void core_param_report(void)
{
	registry_conf_report();
}

/*
 * The typed getters' common part.  Returns 0 or -OPENRDMA_EINVAL with *out
 * valid (the default when the value does not parse), or another error.
 */
static int param_get_num(const char *scope, const char *name,
			 enum openrdma_param_type type, union param_num *out,
			 bool *valid)
{
	struct param_value pv;
	union param_num v;
	int ret;

	*valid = false;
	ret = param_lookup(scope, name, &pv);
	core_param_report();
	if (ret)
		return ret;
	if (pv.type != type) {
		openrdma_err("param", "%s is %s, not %s", pv.env_name,
			     type_name(pv.type), type_name(type));
		return -OPENRDMA_EINVAL;
	}

	memset(out, 0, sizeof(*out));
	*valid = true;
	if (!pv.text)
		return 0;
	if (!num_parse(type, pv.text, &v)) {
		*out = v;
		return 0;
	}
	openrdma_warn("param",
		      "%s=\"%s\" (from %s%s%s) is not %s; using %s%s%s",
		      pv.env_name, pv.text, pv.source, pv.origin ? " " : "",
		      pv.origin ? pv.origin : "", type_name(type),
		      pv.def_text ? "the default \"" : "0",
		      pv.def_text ? pv.def_text : "", pv.def_text ? "\"" : "");
	if (pv.def_text && !num_parse(type, pv.def_text, &v))
		*out = v;
	return -OPENRDMA_EINVAL;
}

OPENRDMA_EXPORT
int openrdma_param_get_bool(const char *scope, const char *name, bool *value)
{
	union param_num v;
	bool valid;
	int ret;

	if (!value)
		return -OPENRDMA_EINVAL;
	ret = param_get_num(scope, name, OPENRDMA_PARAM_BOOL, &v, &valid);
	if (valid)
		*value = v.b;
	return ret;
}

OPENRDMA_EXPORT
int openrdma_param_get_int(const char *scope, const char *name, int64_t *value)
{
	union param_num v;
	bool valid;
	int ret;

	if (!value)
		return -OPENRDMA_EINVAL;
	ret = param_get_num(scope, name, OPENRDMA_PARAM_INT, &v, &valid);
	if (valid)
		*value = v.i;
	return ret;
}

OPENRDMA_EXPORT
int openrdma_param_get_size(const char *scope, const char *name,
			    uint64_t *value)
{
	union param_num v;
	bool valid;
	int ret;

	if (!value)
		return -OPENRDMA_EINVAL;
	ret = param_get_num(scope, name, OPENRDMA_PARAM_SIZE, &v, &valid);
	if (valid)
		*value = v.u;
	return ret;
}

OPENRDMA_EXPORT
int openrdma_param_get_str(const char *scope, const char *name,
			   const char **value)
{
	struct param_value pv;
	int ret;

	if (!value)
		return -OPENRDMA_EINVAL;
	ret = param_lookup(scope, name, &pv);
	core_param_report();
	if (ret)
		return ret;
	*value = pv.text;
	return 0;
}

/* One declared parameter, copied so the callback runs without the lock. */
struct param_snap {
	const struct openrdma_param_def *def;
	bool scoped;
	char scope[CORE_PARAM_SCOPE_MAX + 1];
	char env_name[PARAM_ENV_MAX];
};

static int snapshot(struct param_snap **snap_out, int *num_out)
{
	struct param_snap *snap;
	struct param_entry *e;
	int num = 0, ret;

	pthread_mutex_lock(&param_lock);
	ret = core_ready();
	if (ret)
		goto out;
	LL_COUNT(param_order, e, num);
	snap = calloc(num ? num : 1, sizeof(*snap));
	if (!snap) {
		ret = -OPENRDMA_ENOMEM;
		goto out;
	}
	num = 0;
	LL_FOREACH (param_order, e) {
		snap[num].def = e->def;
		snap[num].scoped = e->scoped;
		memcpy(snap[num].scope, e->scope, sizeof(e->scope));
		memcpy(snap[num].env_name, e->env_name, sizeof(e->env_name));
		num++;
	}
	*snap_out = snap;
	*num_out = num;
out:
	pthread_mutex_unlock(&param_lock);
	return ret;
}

OPENRDMA_EXPORT
int openrdma_param_foreach(int (*fn)(const struct openrdma_param_info *info,
				     void *arg),
			   void *arg)
{
	struct openrdma_param_info info;
	struct param_snap *snap;
	struct param_value pv;
	struct registry *reg;
	int i, num, ret;

	if (!fn)
		return -OPENRDMA_EINVAL;
	/* Transport parameters are declared when the registry loads them. */
	(void)registry_get(&reg);

	ret = snapshot(&snap, &num);
	if (ret)
		return ret;
	for (i = 0; i < num && !ret; i++) {
		const char *scope = snap[i].scoped ? snap[i].scope : NULL;

		if (param_lookup(scope, snap[i].def->name, &pv))
			continue; /* unregistered meanwhile */
		info.scope = scope;
		info.def = snap[i].def;
		info.env_name = snap[i].env_name;
		info.value = pv.text;
		info.source = pv.source;
		ret = fn(&info, arg);
	}
	free(snap);
	core_param_report();
	return ret;
}
