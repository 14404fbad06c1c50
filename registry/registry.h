/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The transport registry: which transports exist (built in, or plugins),
 * which were registered, and the interfaces their probes and the config
 * file added.  Built lazily on first use; torn down by registry_fini().
 *
 * registry_lock is the outermost lock of the library (see core/lock.h).  It
 * is held while the registry is built, which includes calling the
 * transports' probe(); a probe must not call back into the device list.
 */
#ifndef REGISTRY_REGISTRY_H
#define REGISTRY_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>

#include <uthash.h>

#include <openrdma/transport.h>

/* Generated (registry/builtin.c): the built-in transports, NULL-ended. */
extern const struct openrdma_transport *const *const registry_builtin[];

/* Longest transport name; interface names fit struct openrdma_device. */
#define REGISTRY_NAME_MAX 15
#define REGISTRY_IFACE_MAX (sizeof(((struct openrdma_device *)0)->name) - 1)

/* A transport the registry considered, whether it registered or not. */
struct registry_transport {
	struct registry_transport *next, *prev;
	char name[REGISTRY_NAME_MAX + 1];
	char *description;
	char *source; /* "built-in" or the plugin's path */
	/* set while loaded: registered and not filtered out */
	const struct openrdma_transport *desc;
	struct openrdma_transport_ops ops; /* desc->ops, holes filled */
	void *dl; /* dlopen handle of a plugin */
	bool registered; /* passed the checks: owns its name */
	bool loaded;
	int probe_ret; /* what probe() returned */
	int num_devices;
	char *status; /* why not loaded; "ok"/"no device: ..." once probed */
	char *explain; /* what probe said through openrdma_probe_explain */
	char *notes; /* interfaces skipped on its behalf, "; "-separated */
};

/* An interface: the public struct plus the registry's bookkeeping. */
struct registry_device {
	struct openrdma_device dev;
	struct registry_transport *rt;
	UT_hash_handle hh; /* by dev.name */
};

struct registry {
	const char *filter; /* the transports parameter */
	struct registry_transport *transports; /* utlist DL, discovery order */
	struct registry_device **devices; /* in the order they were added */
	int num_devices;
	int max_devices;
	struct registry_device *by_name;
};

/* What a transport's probe() writes into. */
struct openrdma_probe {
	struct registry *reg;
	struct registry_transport *rt;
};

/*
 * Returns the registry, building it on first use.  -OPENRDMA_EBUSY when
 * called from a probe() (the registry is being built by this thread).
 */
int registry_get(struct registry **reg_out);
/* Releases every device and transport (fini, then dlclose). */
void registry_fini(void);

/*
 * registry.c.  registry_transport_new() appends an entry (name: what the
 * plugin's file name says, until its descriptor is checked);
 * registry_transport_register() runs the checks every transport passes,
 * built in or not, and the filter.  It returns 0 if rt is loaded, else an
 * error with rt's status saying why.
 */
struct registry_transport *registry_transport_new(struct registry *reg,
						  const char *name,
						  const char *source);
int registry_transport_register(struct registry *reg,
				struct registry_transport *rt,
				const struct openrdma_transport *desc);
/* Unlinks rt and frees it (its plugin, if any, is already closed). */
void registry_transport_free(struct registry *reg,
			     struct registry_transport *rt);
void registry_transport_status(struct registry_transport *rt, const char *fmt,
			       ...) __attribute__((format(printf, 2, 3)));
void registry_transport_note(struct registry_transport *rt, const char *fmt,
			     ...) __attribute__((format(printf, 2, 3)));
/* "tcp,shm" keeps those, "^verbs" skips those; NULL or "" keeps all. */
bool registry_filter_match(const char *filter, const char *name);
/* [a-z0-9_]+, at most REGISTRY_NAME_MAX characters. */
bool registry_transport_name_valid(const char *name);

/* loader.c: plugins from every search directory, in order. */
void registry_plugins_load(struct registry *reg);
/* The libopenrdma-<name>-t<ABI>.so pattern; copies <name> if name_out. */
bool registry_plugin_file_match(const char *file, char *name_out, size_t size);
void registry_plugins_unload(struct registry *reg);

/* device.c: one interface, from a probe or from the config file. */
struct registry_device_spec {
	const char *name;
	const char *dev_name;
	uint8_t port_num;
	char *const *params; /* "key=value", copied */
	int num_params;
	void *priv;
	void (*free_priv)(void *priv);
	const char *origin; /* config file:line; NULL from a probe */
};

/*
 * Adds an interface of rt.  A refused one (invalid or taken name) is noted
 * on rt and logged; the caller keeps priv then.
 */
int registry_device_add(struct registry *reg, struct registry_transport *rt,
			const struct registry_device_spec *spec);
/* Removes rt's interfaces (all of them if rt is NULL), freeing priv. */
void registry_devices_drop(struct registry *reg, struct registry_transport *rt);
/* Letters, digits and "_.:-", 1 to REGISTRY_IFACE_MAX characters. */
bool registry_iface_name_valid(const char *name);

#endif /* REGISTRY_REGISTRY_H */
