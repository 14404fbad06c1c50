/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Interfaces: what probes and the config file add, and the public device
 * list.  Devices live as long as the registry; a list handed out is only
 * an array of pointers to them.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openrdma/log.h>
#include <openrdma/verbs.h>

#include "core/export.h"
#include "registry/registry.h"

bool registry_iface_name_valid(const char *name)
{
	size_t n;

	if (!name)
		return false;
	n = strspn(name, "abcdefghijklmnopqrstuvwxyz"
			 "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:-");
	return n && n <= REGISTRY_IFACE_MAX && !name[n];
}

static void device_free(struct registry_device *rd)
{
	int i;

	if (rd->dev.free_priv)
		rd->dev.free_priv(rd->dev.priv);
	for (i = 0; i < rd->dev.num_params; i++)
		free(rd->dev.params[i]);
	free(rd->dev.params);
	free(rd);
}

static int params_copy(struct openrdma_device *dev, char *const *params,
		       int num)
{
	int i;

	if (!num)
		return 0;
	dev->params = calloc(num, sizeof(*dev->params));
	if (!dev->params)
		return -OPENRDMA_ENOMEM;
	for (i = 0; i < num; i++) {
		dev->params[i] = strdup(params[i]);
		if (!dev->params[i])
			return -OPENRDMA_ENOMEM; /* device_free() unwinds */
		dev->num_params++;
	}
	return 0;
}

int registry_device_add(struct registry *reg, struct registry_transport *rt,
			const struct registry_device_spec *spec)
{
	const char *dev_name = spec->dev_name ? spec->dev_name : "";
	struct registry_device *rd, *old, **devices;
	const char *at = spec->origin ? " (" : "";
	const char *origin = spec->origin ? spec->origin : "";
	const char *end = spec->origin ? ")" : "";
	int max, ret;

	if (!registry_iface_name_valid(spec->name)) {
		registry_transport_note(
			rt, "interface \"%s\"%s%s%s skipped: invalid name",
			spec->name ? spec->name : "", at, origin, end);
		return -OPENRDMA_EINVAL;
	}
	if (strlen(dev_name) >= sizeof(rd->dev.dev_name)) {
		registry_transport_note(
			rt, "interface %s%s%s%s skipped: device name too long",
			spec->name, at, origin, end);
		return -OPENRDMA_EINVAL;
	}
	HASH_FIND_STR(reg->by_name, spec->name, old);
	if (old) {
		registry_transport_note(
			rt,
			"interface %s%s%s%s skipped: the name is taken by transport %s",
			spec->name, at, origin, end, old->rt->name);
		return -OPENRDMA_EEXIST;
	}

	if (reg->num_devices == reg->max_devices) {
		max = reg->max_devices ? 2 * reg->max_devices : 8;
		devices = realloc(reg->devices, max * sizeof(*devices));
		if (!devices)
			return -OPENRDMA_ENOMEM;
		reg->devices = devices;
		reg->max_devices = max;
	}
	rd = calloc(1, sizeof(*rd));
	if (!rd)
		return -OPENRDMA_ENOMEM;
	ret = params_copy(&rd->dev, spec->params, spec->num_params);
	if (ret)
		goto err_free;

	snprintf(rd->dev.name, sizeof(rd->dev.name), "%s", spec->name);
	snprintf(rd->dev.dev_name, sizeof(rd->dev.dev_name), "%s", dev_name);
	rd->dev.transport = rt->desc;
	rd->dev.ops = &rt->ops;
	rd->dev.port_num = spec->port_num;
	/* Only now: on failure the caller still owns priv. */
	rd->dev.priv = spec->priv;
	rd->dev.free_priv = spec->free_priv;
	rd->rt = rt;
	HASH_ADD_KEYPTR(hh, reg->by_name, rd->dev.name, strlen(rd->dev.name),
			rd);
	reg->devices[reg->num_devices++] = rd;
	rt->num_devices++;
	return 0;

err_free:
	device_free(rd);
	return ret;
}

void registry_devices_drop(struct registry *reg, struct registry_transport *rt)
{
	struct registry_device *rd;
	int i, kept = 0;

	for (i = 0; i < reg->num_devices; i++) {
		rd = reg->devices[i];
		if (rt && rd->rt != rt) {
			reg->devices[kept++] = rd;
			continue;
		}
		HASH_DEL(reg->by_name, rd);
		rd->rt->num_devices--;
		device_free(rd);
	}
	reg->num_devices = kept;
}

OPENRDMA_EXPORT
int openrdma_probe_device_add(struct openrdma_probe *probe, const char *name,
			      const char *dev_name, uint8_t port_num,
			      void *priv, void (*free_priv)(void *))
{
	struct registry_device_spec spec = {
		.name = name,
		.dev_name = dev_name,
		.port_num = port_num,
		.priv = priv,
		.free_priv = free_priv,
	};

	if (!probe || !probe->reg || !probe->rt || !name)
		return -OPENRDMA_EINVAL;
	return registry_device_add(probe->reg, probe->rt, &spec);
}

OPENRDMA_EXPORT
void openrdma_probe_explain(struct openrdma_probe *probe, const char *fmt, ...)
{
	struct registry_transport *rt;
	char *text, *joined;
	va_list ap;
	int ret;

	if (!probe || !probe->rt || !fmt)
		return;
	rt = probe->rt;
	va_start(ap, fmt);
	ret = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (ret < 0)
		return;
	if (!rt->explain) {
		rt->explain = text;
		return;
	}
	if (asprintf(&joined, "%s; %s", rt->explain, text) >= 0) {
		free(rt->explain);
		rt->explain = joined;
	}
	free(text);
}

OPENRDMA_EXPORT
const char *openrdma_device_param(const struct openrdma_device *dev,
				  const char *key)
{
	size_t len;
	int i;

	if (!dev || !key)
		return NULL;
	len = strlen(key);
	for (i = 0; i < dev->num_params; i++)
		if (!strncmp(dev->params[i], key, len) &&
		    dev->params[i][len] == '=')
			return dev->params[i] + len + 1;
	return NULL;
}

OPENRDMA_EXPORT
int openrdma_device_list_get(struct openrdma_device ***list_out, int *num_out)
{
	struct openrdma_device **list;
	struct registry *reg;
	int i, ret;

	if (!list_out)
		return -OPENRDMA_EINVAL;
	ret = registry_get(&reg);
	if (ret)
		return ret;
	list = calloc(reg->num_devices + 1, sizeof(*list));
	if (!list)
		return -OPENRDMA_ENOMEM;
	for (i = 0; i < reg->num_devices; i++)
		list[i] = &reg->devices[i]->dev;
	*list_out = list;
	if (num_out)
		*num_out = reg->num_devices;
	return 0;
}

OPENRDMA_EXPORT
void openrdma_device_list_free(struct openrdma_device **list)
{
	free(list);
}

OPENRDMA_EXPORT
int openrdma_device_find(const char *name, struct openrdma_device **dev_out)
{
	struct registry_device *rd;
	struct registry *reg;
	int ret;

	if (!name || !dev_out)
		return -OPENRDMA_EINVAL;
	ret = registry_get(&reg);
	if (ret)
		return ret;
	HASH_FIND_STR(reg->by_name, name, rd);
	if (!rd) {
		openrdma_dbg("registry", "no interface \"%s\"", name);
		return -OPENRDMA_ENODEV;
	}
	*dev_out = &rd->dev;
	return 0;
}

OPENRDMA_EXPORT
const char *openrdma_device_name(const struct openrdma_device *dev)
{
	return dev ? dev->name : NULL;
}

OPENRDMA_EXPORT
const char *openrdma_device_transport_name(const struct openrdma_device *dev)
{
	return dev && dev->transport ? dev->transport->name : NULL;
}
