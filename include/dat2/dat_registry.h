/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * DAT 2.0: the provider side of the registry.
 *
 * libdat2 opens the library a dat.conf entry names, looks up
 * DAT_PROVIDER_INIT_FUNC_STR in it and calls it with the entry and the
 * entry's instance data; the provider then registers a DAT_PROVIDER table
 * for the IA name with dat_registry_add_provider().  When the last IA of
 * the library is closed, libdat2 calls DAT_PROVIDER_FINI_FUNC_STR, which
 * removes the table again.
 */
#ifndef _DAT_REGISTRY_H_
#define _DAT_REGISTRY_H_

#include <dat2/udat.h>
#include <dat2/udat_redirection.h>

#ifdef __cplusplus
extern "C" {
#endif

extern DAT_RETURN dat_registry_add_provider(const DAT_PROVIDER *provider,
					    const DAT_PROVIDER_INFO *info);
extern DAT_RETURN dat_registry_remove_provider(const DAT_PROVIDER *provider,
					       const DAT_PROVIDER_INFO *info);

/* What a provider library exports, and the names libdat2 looks up. */
#define DAT_PROVIDER_INIT_FUNC_NAME dat_provider_init
#define DAT_PROVIDER_FINI_FUNC_NAME dat_provider_fini
#define DAT_PROVIDER_INIT_FUNC_STR "dat_provider_init"
#define DAT_PROVIDER_FINI_FUNC_STR "dat_provider_fini"

typedef void (*DAT_PROVIDER_INIT_FUNC)(const DAT_PROVIDER_INFO *info,
				       const char *instance_data);
typedef void (*DAT_PROVIDER_FINI_FUNC)(const DAT_PROVIDER_INFO *info);

/* Whether two IAs are paths to the same thing (high availability). */
typedef enum dat_ha_relationship {
	DAT_HA_FALSE,
	DAT_HA_TRUE,
	DAT_HA_UNKNOWN,
	DAT_HA_CONFLICTING, /* the two providers disagree */
	DAT_HA_EXTENSION_BASE
} DAT_HA_RELATIONSHIP;

extern DAT_RETURN
dat_registry_providers_related(const DAT_NAME_PTR ia_name1,
			       const DAT_NAME_PTR ia_name2,
			       DAT_HA_RELATIONSHIP *relationship);

#ifdef __cplusplus
}
#endif

#endif /* _DAT_REGISTRY_H_ */
