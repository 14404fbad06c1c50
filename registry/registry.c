/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Builds the registry: built-in transports, then plugins, each checked the
 * same way and filtered by the transports parameter; then every loaded
 * transport's probe; then the interfaces the config file names.  Every
 * transport considered keeps a status that says what became of it.
 */
#include "config.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utlist.h>

#include <openrdma/log.h>

#include "core/param.h"
#include "core/unsupported.h"
#include "registry/conf.h"
#include "registry/registry.h"

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(struct registry *) registry_cur;
/* Set while this thread builds the registry (and runs the probes). */
static __thread bool registry_building;

static char *vformat(const char *fmt, va_list ap)
	__attribute__((format(printf, 1, 0)));

static char *vformat(const char *fmt, va_list ap)
{
	char *s;

	if (vasprintf(&s, fmt, ap) < 0)
		return NULL;
	return s;
}

void registry_transport_status(struct registry_transport *rt, const char *fmt,
			       ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = vformat(fmt, ap);
	va_end(ap);
	if (!s)
		return;
	free(rt->status);
	rt->status = s;
}

void registry_transport_note(struct registry_transport *rt, const char *fmt,
			     ...)
{
	char *note, *joined;
	va_list ap;

	va_start(ap, fmt);
	note = vformat(fmt, ap);
	va_end(ap);
	if (!note)
		return;
	openrdma_warn("registry", "%s: %s", rt->name, note);
	if (!rt->notes) {
		rt->notes = note;
		return;
	}
	if (asprintf(&joined, "%s; %s", rt->notes, note) >= 0) {
		free(rt->notes);
		rt->notes = joined;
	}
	free(note);
}

bool registry_transport_name_valid(const char *name)
{
	size_t n;

	if (!name)
		return false;
	n = strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_");
	return n && n <= REGISTRY_NAME_MAX && !name[n];
}

/* Calls fn on each trimmed, non-empty item of a comma list. */
static bool list_any(const char *list,
		     bool (*fn)(const char *item, size_t len, void *arg),
		     void *arg)
{
	const char *p = list;
	size_t n, len;

	while (*p) {
		n = strcspn(p, ",");
		len = n;
		while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		while (len && (*p == ' ' || *p == '\t')) {
			p++;
			n--;
			len--;
		}
		if (len && fn(p, len, arg))
			return true;
		p += n;
		if (*p == ',')
			p++;
	}
	return false;
}

static bool item_is(const char *item, size_t len, void *name)
{
	return strlen(name) == len && !strncmp(item, name, len);
}

bool registry_filter_match(const char *filter, const char *name)
{
	bool negate;

	if (!filter || !*filter)
		return true;
	negate = *filter == '^';
	return list_any(filter + negate, item_is, (void *)name) != negate;
}

struct registry_transport *registry_transport_new(struct registry *reg,
						  const char *name,
						  const char *source)
{
	struct registry_transport *rt;

	rt = calloc(1, sizeof(*rt));
	if (!rt)
		return NULL;
	rt->source = strdup(source);
	if (!rt->source) {
		free(rt);
		return NULL;
	}
	snprintf(rt->name, sizeof(rt->name), "%s", name ? name : "");
	DL_APPEND(reg->transports, rt);
	return rt;
}

void registry_transport_free(struct registry *reg,
			     struct registry_transport *rt)
{
	DL_DELETE(reg->transports, rt);
	free(rt->description);
	free(rt->source);
	free(rt->status);
	free(rt->explain);
	free(rt->notes);
	free(rt);
}

/* The registered transport of that name, if any. */
static struct registry_transport *transport_owner(struct registry *reg,
						  const char *name)
{
	struct registry_transport *rt;

	DL_FOREACH (reg->transports, rt)
		if (rt->registered && !strcmp(rt->name, name))
			return rt;
	return NULL;
}

int registry_transport_register(struct registry *reg,
				struct registry_transport *rt,
				const struct openrdma_transport *desc)
{
	struct registry_transport *owner;

	if (desc->abi_version != OPENRDMA_TRANSPORT_ABI) {
		/* Nothing past the version is known to be laid out as ours. */
		registry_transport_status(rt, "ABI version %u, expected %d",
					  desc->abi_version,
					  OPENRDMA_TRANSPORT_ABI);
		return -OPENRDMA_EABI;
	}
	if (desc->size < sizeof(*desc)) {
		registry_transport_status(
			rt, "descriptor of %u bytes, expected at least %zu",
			desc->size, sizeof(*desc));
		return -OPENRDMA_EABI;
	}
	if (desc->name)
		snprintf(rt->name, sizeof(rt->name), "%s", desc->name);
	if (!registry_transport_name_valid(desc->name)) {
		registry_transport_status(
			rt,
			"invalid name \"%s\" (want [a-z0-9_]+, at most %d characters)",
			desc->name ? desc->name : "", REGISTRY_NAME_MAX);
		return -OPENRDMA_EINVAL;
	}
	rt->description = strdup(desc->description ? desc->description : "");
	if (!rt->description) {
		registry_transport_status(rt, "out of memory");
		return -OPENRDMA_ENOMEM;
	}
	owner = transport_owner(reg, desc->name);
	if (owner) {
		if (!strcmp(owner->source, "built-in"))
			registry_transport_status(
				rt, "duplicate of built-in %s", owner->name);
		else
			registry_transport_status(rt, "duplicate of plugin %s",
						  owner->source);
		return -OPENRDMA_EEXIST;
	}
	if (!desc->ops || !desc->device_open) {
		registry_transport_status(rt, "no %s",
					  desc->ops ? "device_open" :
						      "operations table");
		return -OPENRDMA_EINVAL;
	}
	rt->registered = true;
	if (!registry_filter_match(reg->filter, rt->name)) {
		registry_transport_status(rt,
					  "excluded by OPENRDMA_TRANSPORTS");
		return -OPENRDMA_EPERM;
	}
	core_ops_fill(&rt->ops, desc->ops);
	rt->desc = desc;
	rt->loaded = true;
	return 0;
}

static void builtins_add(struct registry *reg)
{
	const struct openrdma_transport *const *const *p;
	struct registry_transport *rt;

	for (p = registry_builtin; *p; p++) {
		rt = registry_transport_new(reg, NULL, "built-in");
		if (rt)
			registry_transport_register(reg, rt, **p);
	}
}

/* Names in OPENRDMA_TRANSPORTS that match nothing are most likely typos. */
static bool item_unknown(const char *item, size_t len, void *arg)
{
	struct registry *reg = arg;
	struct registry_transport *rt;

	DL_FOREACH (reg->transports, rt)
		if (strlen(rt->name) == len && !strncmp(rt->name, item, len))
			return false;
	openrdma_warn(
		"registry",
		"OPENRDMA_TRANSPORTS names \"%.*s\", which is not a transport",
		(int)len, item);
	return false;
}

static void probe_one(struct registry *reg, struct registry_transport *rt)
{
	struct openrdma_probe probe = { .reg = reg, .rt = rt };
	int ret = 0;

	if (core_param_scope_add(rt->name, rt->desc->params))
		openrdma_warn("registry",
			      "%s: its parameters were not declared", rt->name);
	registry_conf_check_scope(rt->name);

	if (rt->desc->probe)
		ret = rt->desc->probe(&probe);
	if (ret > 0) {
		openrdma_err("registry",
			     "%s: probe returned %d, not 0 or an error",
			     rt->name, ret);
		ret = -OPENRDMA_EIO;
	}
	rt->probe_ret = ret;
	/* A failed probe may have left devices it meant to undo. */
	if (ret)
		registry_devices_drop(reg, rt);
	openrdma_dbg("registry", "%s: probe returned %d, %d interface(s)",
		     rt->name, ret, rt->num_devices);
}

static void conf_interfaces_add(struct registry *reg)
{
	const struct registry_conf_iface *ifc;
	struct registry_transport *rt, *any;
	struct registry_device_spec spec;

	for (ifc = registry_conf_interfaces(); ifc; ifc = ifc->next) {
		rt = NULL;
		any = NULL;
		DL_FOREACH (reg->transports, rt) {
			if (strcmp(rt->name, ifc->transport))
				continue;
			if (rt->loaded)
				break;
			if (!any)
				any = rt;
		}
		if (!rt && any) {
			registry_transport_note(
				any,
				"interface %s (%s) skipped: transport not loaded",
				ifc->name, ifc->origin);
			continue;
		}
		if (!rt) {
			/* Listed, so that openrdma-info shows the reason. */
			rt = registry_transport_new(reg, ifc->transport,
						    ifc->origin);
			if (!rt)
				continue;
			registry_transport_status(rt, "not found");
			registry_transport_note(
				rt,
				"interface %s (%s) skipped: no transport \"%s\"",
				ifc->name, ifc->origin, ifc->transport);
			continue;
		}
		spec = (struct registry_device_spec){
			.name = ifc->name,
			.dev_name = ifc->device,
			.port_num = ifc->port_num,
			.params = ifc->params,
			.num_params = ifc->num_params,
			.origin = ifc->origin,
		};
		registry_device_add(reg, rt, &spec);
	}
}

static void status_finish(struct registry_transport *rt)
{
	const char *why = rt->explain ? rt->explain : "the probe found none";

	if (!rt->loaded)
		return;
	if (rt->probe_ret && !rt->num_devices)
		registry_transport_status(rt, "probe failed: %s%s%s",
					  openrdma_strerror(rt->probe_ret),
					  rt->explain ? ": " : "",
					  rt->explain ? rt->explain : "");
	else if (!rt->num_devices)
		registry_transport_status(rt, "no device: %s", why);
	else
		registry_transport_status(rt, "ok");
}

static void registry_free(struct registry *reg)
{
	struct registry_transport *rt, *tmp;

	registry_devices_drop(reg, NULL);
	free(reg->devices);
	/* In reverse: a plugin may rely on a transport loaded before it. */
	for (rt = reg->transports ? reg->transports->prev : NULL; rt;
	     rt = rt == reg->transports ? NULL : rt->prev)
		if (rt->loaded && rt->desc->fini)
			rt->desc->fini();
	core_param_scope_clear();
	registry_plugins_unload(reg);
	DL_FOREACH_SAFE (reg->transports, rt, tmp)
		registry_transport_free(reg, rt);
	free(reg);
}

static int registry_build(struct registry **reg_out)
{
	struct registry_transport *rt;
	struct registry *reg;
	const char *source;

	reg = calloc(1, sizeof(*reg));
	if (!reg)
		return -OPENRDMA_ENOMEM;
	if (core_param_raw(NULL, "transports", &reg->filter, &source))
		reg->filter = NULL;

	builtins_add(reg);
	registry_plugins_load(reg);
	if (reg->filter)
		list_any(reg->filter + (*reg->filter == '^'), item_unknown,
			 reg);

	DL_FOREACH (reg->transports, rt)
		if (rt->loaded)
			probe_one(reg, rt);
	conf_interfaces_add(reg);
	DL_FOREACH (reg->transports, rt) {
		status_finish(rt);
		openrdma_info("registry", "%s (%s): %s%s%s", rt->name,
			      rt->source, rt->status ? rt->status : "?",
			      rt->notes ? "; " : "",
			      rt->notes ? rt->notes : "");
	}
	*reg_out = reg;
	return 0;
}

int registry_get(struct registry **reg_out)
{
	struct registry *reg;
	int ret = 0;

	reg = atomic_load_explicit(&registry_cur, memory_order_acquire);
	if (reg) {
		*reg_out = reg;
		return 0;
	}
	if (registry_building)
		return -OPENRDMA_EBUSY;

	pthread_mutex_lock(&registry_lock);
	reg = atomic_load_explicit(&registry_cur, memory_order_relaxed);
	if (!reg) {
		registry_building = true;
		ret = registry_build(&reg);
		registry_building = false;
		if (!ret)
			atomic_store_explicit(&registry_cur, reg,
					      memory_order_release);
	}
	pthread_mutex_unlock(&registry_lock);
	core_param_report();
	if (ret)
		return ret;
	*reg_out = reg;
	return 0;
}

void registry_fini(void)
{
	struct registry *reg;

	pthread_mutex_lock(&registry_lock);
	reg = atomic_exchange_explicit(&registry_cur, NULL,
				       memory_order_acq_rel);
	if (reg)
		registry_free(reg);
	pthread_mutex_unlock(&registry_lock);
}
