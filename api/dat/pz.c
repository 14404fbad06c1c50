/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* Protection zones: a protection domain of the core. */
#include "config.h"

#include <stdlib.h>

#include <openrdma/errno.h>
#include <openrdma/log.h>

#include "api/dat/provider.h"
#include "api/dat/slots.h"

struct datp_pz *datp_pz_get(DAT_PZ_HANDLE handle)
{
	return (struct datp_pz *)datp_obj_get(handle, DATP_PZ);
}

DAT_RETURN datp_pz_create(DAT_IA_HANDLE ia_handle, DAT_PZ_HANDLE *pz_handle)
{
	struct datp_ia *ia = datp_ia_get(ia_handle);
	struct datp_pz *pz;
	int ret;

	if (!ia)
		return DATP_HANDLE(DAT_INVALID_HANDLE_IA, "ia %p", ia_handle);
	if (!pz_handle)
		return DATP_ARG(DAT_INVALID_ARG2, "pz_handle: NULL");
	pz = calloc(1, sizeof(*pz));
	if (!pz)
		return datp_ret(-OPENRDMA_ENOMEM, DAT_RESOURCE_MEMORY);
	ret = openrdma_pd_alloc(ia->ctx, &pz->pd);
	if (ret)
		goto err_free;
	ret = datp_obj_init(&pz->obj, ia, DATP_PZ);
	if (ret)
		goto err_pd;
	datp_ia_count(ia, DCNT_IA_PZ_CREATE);
	*pz_handle = pz;
	return DAT_SUCCESS;

err_pd:
	openrdma_pd_dealloc(pz->pd);
err_free:
	free(pz);
	return DATP_ERR(ret, DAT_RESOURCE_PROTECTION_DOMAIN, "pd_alloc");
}

DAT_RETURN datp_pz_query(DAT_PZ_HANDLE pz_handle, DAT_PZ_PARAM_MASK mask,
			 DAT_PZ_PARAM *param)
{
	struct datp_pz *pz = datp_pz_get(pz_handle);

	if (!pz)
		return DATP_HANDLE(DAT_INVALID_HANDLE_PZ, "pz %p", pz_handle);
	if (mask & ~DAT_PZ_FIELD_ALL)
		return DATP_ARG(DAT_INVALID_ARG2, "pz_param_mask 0x%x", mask);
	if (!param)
		return DATP_ARG(DAT_INVALID_ARG3, "pz_param: NULL");
	param->ia_handle = pz->obj.ia;
	return DAT_SUCCESS;
}

void datp_pz_destroy(struct datp_pz *pz)
{
	int ret = openrdma_pd_dealloc(pz->pd);

	if (ret)
		openrdma_warn("dat", "pd_dealloc: %s", openrdma_strerror(ret));
	datp_ia_count(pz->obj.ia, DCNT_IA_PZ_FREE);
	datp_obj_fini(&pz->obj, DATP_PZ);
}

DAT_RETURN datp_pz_free(DAT_PZ_HANDLE pz_handle)
{
	struct datp_pz *pz = datp_pz_get(pz_handle);
	int ret;

	if (!pz)
		return DATP_HANDLE(DAT_INVALID_HANDLE_PZ, "pz %p", pz_handle);
	if (datp_in_use(&pz->obj))
		return DATP_STATE(DAT_INVALID_STATE_PZ_IN_USE,
				  "%u objects use the PZ",
				  atomic_load(&pz->obj.users));
	/* QPs that carried UD address requests may still hold the PD */
	datp_ia_reap(pz->obj.ia);
	ret = openrdma_pd_dealloc(pz->pd);
	if (ret)
		return DATP_ERR(ret, DAT_INVALID_STATE_PZ_IN_USE, "pd_dealloc");
	datp_ia_count(pz->obj.ia, DCNT_IA_PZ_FREE);
	datp_obj_fini(&pz->obj, DATP_PZ);
	return DAT_SUCCESS;
}
