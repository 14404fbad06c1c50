/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* Protection zones: one protection domain of the IA's context each. */
#include "config.h"

#include <stdlib.h>

#include "api/itapi/itapi.h"
#include "core/export.h"

OPENRDMA_EXPORT it_status_t it_pz_create(it_ia_handle_t ia_handle,
					 it_pz_handle_t *pz_handle)
{
	struct itapi_ia *ia = to_ia(ia_handle);
	struct itapi_pz *pz;
	int ret;

	if (!itapi_valid(ia, IT_HANDLE_TYPE_IA)) {
		itapi_arg_err("it_pz_create", "ia_handle", "not an IA");
		return IT_ERR_INVALID_IA;
	}
	if (!pz_handle) {
		itapi_arg_err("it_pz_create", "pz_handle", "NULL");
		return IT_ERR_FAULT;
	}
	pz = calloc(1, sizeof(*pz));
	if (!pz)
		return IT_ERR_RESOURCES;
	ret = openrdma_pd_alloc(ia->ctx, &pz->pd);
	if (ret)
		goto err_free;
	ret = itapi_obj_init(&pz->obj, IT_HANDLE_TYPE_PZ, ia);
	if (ret)
		goto err_pd;

	*pz_handle = (it_pz_handle_t)pz;
	return IT_SUCCESS;

err_pd:
	openrdma_pd_dealloc(pz->pd);
err_free:
	free(pz);
	return itapi_status(ret, IT_ERR_INVALID_IA);
}

OPENRDMA_EXPORT it_status_t it_pz_query(it_pz_handle_t pz_handle,
					it_pz_param_mask_t mask,
					it_pz_param_t *params)
{
	struct itapi_pz *pz = (struct itapi_pz *)pz_handle;

	if (!itapi_valid(pz, IT_HANDLE_TYPE_PZ)) {
		itapi_arg_err("it_pz_query", "pz_handle", "not a PZ");
		return IT_ERR_INVALID_PZ;
	}
	if (mask & ~(unsigned int)(IT_PZ_PARAM_ALL | IT_PZ_PARAM_IA)) {
		itapi_arg_err("it_pz_query", "mask", "0x%x",
			      (unsigned int)mask);
		return IT_ERR_INVALID_MASK;
	}
	if (!params) {
		itapi_arg_err("it_pz_query", "params", "NULL");
		return IT_ERR_FAULT;
	}
	if (mask)
		params->ia = (it_ia_handle_t)pz->obj.ia;
	return IT_SUCCESS;
}

void itapi_pz_destroy(struct itapi_pz *pz)
{
	int ret;

	itapi_obj_fini(&pz->obj);
	ret = openrdma_pd_dealloc(pz->pd);
	if (ret)
		openrdma_warn(ITAPI_LOG, "pd_dealloc: %s",
			      openrdma_strerror(ret));
	free(pz);
}

OPENRDMA_EXPORT it_status_t it_pz_free(it_pz_handle_t pz_handle)
{
	struct itapi_pz *pz = (struct itapi_pz *)pz_handle;

	if (!itapi_valid(pz, IT_HANDLE_TYPE_PZ)) {
		itapi_arg_err("it_pz_free", "pz_handle", "not a PZ");
		return IT_ERR_INVALID_PZ;
	}
	if (itapi_obj_users(&pz->obj)) {
		openrdma_dbg(ITAPI_LOG, "it_pz_free: %u objects use the PZ",
			     itapi_obj_users(&pz->obj));
		return IT_ERR_PZ_BUSY;
	}
	itapi_pz_destroy(pz);
	return IT_SUCCESS;
}
