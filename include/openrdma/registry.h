/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The transport registry as seen by tools: which transports exist, where
 * they came from, and why one was skipped.  See openrdma-info(1).
 */
#ifndef OPENRDMA_REGISTRY_H
#define OPENRDMA_REGISTRY_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

struct openrdma_transport_info {
	const char *name;
	const char *description;
	const char *source; /* "built-in" or the plugin's path */
	bool loaded; /* registered (ABI checked, not filtered out) */
	int num_devices; /* interfaces its probe found */
	/* "ok", or why it is not loaded or has no device */
	const char *status;
};

/*
 * Lists every transport the registry considered, loaded or not, including
 * plugins that failed to load.  Free with openrdma_transport_info_free().
 */
int openrdma_transport_info_list(struct openrdma_transport_info **list_out,
				 int *num_out);
void openrdma_transport_info_free(struct openrdma_transport_info *list,
				  int num);
/* The default interface name: OPENRDMA_DEFAULT_INTERFACE, else the config
 * file's, else the first listed device.  NULL if there is none. */
const char *openrdma_default_interface(void);

/* Library version, "major.minor.patch". */
const char *openrdma_version(void);

#ifdef __cplusplus
}
#endif

#endif /* OPENRDMA_REGISTRY_H */
