/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The registry as tools see it (include/openrdma/registry.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <utlist.h>

#include <openrdma/registry.h>

#include "core/export.h"
#include "core/param.h"
#include "registry/registry.h"

/* Appends s to the string area; returns where it went. */
static const char *put(char **area, const char *s1, const char *s2,
		       const char *s3)
{
	char *start = *area;

	*area = stpcpy(stpcpy(stpcpy(*area, s1), s2), s3) + 1;
	return start;
}

OPENRDMA_EXPORT
int openrdma_transport_info_list(struct openrdma_transport_info **list_out,
				 int *num_out)
{
	struct openrdma_transport_info *list, *info;
	struct registry_transport *rt;
	struct registry *reg;
	size_t size;
	char *area;
	int num = 0, ret;

	if (!list_out || !num_out)
		return -OPENRDMA_EINVAL;
	ret = registry_get(&reg);
	if (ret)
		return ret;

	/* One block, so that the list outlives the registry. */
	size = 0;
	DL_FOREACH (reg->transports, rt) {
		size += strlen(rt->name) + 1;
		size += strlen(rt->description ? rt->description : "") + 1;
		size += strlen(rt->source) + 1;
		size += strlen(rt->status ? rt->status : "") + 1;
		size += rt->notes ? strlen(rt->notes) + 2 : 0;
		num++;
	}
	list = calloc(1, num * sizeof(*list) + size + 1);
	if (!list)
		return -OPENRDMA_ENOMEM;
	area = (char *)(list + num);
	info = list;
	DL_FOREACH (reg->transports, rt) {
		info->name = put(&area, rt->name, "", "");
		info->description = put(
			&area, rt->description ? rt->description : "", "", "");
		info->source = put(&area, rt->source, "", "");
		info->status =
			put(&area, rt->status ? rt->status : "",
			    rt->notes ? "; " : "", rt->notes ? rt->notes : "");
		info->loaded = rt->loaded;
		info->num_devices = rt->num_devices;
		info++;
	}
	*list_out = list;
	*num_out = num;
	return 0;
}

OPENRDMA_EXPORT
void openrdma_transport_info_free(struct openrdma_transport_info *list, int num)
{
	free(list);
}

OPENRDMA_EXPORT
const char *openrdma_default_interface(void)
{
	const char *name, *source;
	struct registry *reg;

	if (!core_param_raw(NULL, "default_interface", &name, &source) &&
	    name && *name)
		return name;
	if (registry_get(&reg) || !reg->num_devices)
		return NULL;
	return reg->devices[0]->dev.name;
}

OPENRDMA_EXPORT
const char *openrdma_version(void)
{
	return OPENRDMA_VERSION_STRING;
}
