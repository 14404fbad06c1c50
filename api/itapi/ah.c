/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Address handles: the core's AH for a path (addr.c turns the path into
 * an address vector).  Core AHs cannot change, so a modify makes a new one
 * and keeps the old until the handle is freed: datagrams posted before the
 * modify may still be on their way with it.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "api/itapi/itapi.h"
#include "core/export.h"

static struct itapi_ah *to_ah(it_addr_handle_t h)
{
	return (struct itapi_ah *)h;
}

static it_status_t ah_make(struct itapi_ia *ia, struct itapi_pz *pz,
			   const it_path_t *path, struct openrdma_ah **ah_out)
{
	struct openrdma_ah_attr attr;
	int ret;

	if (!itapi_spigot_valid(ia, path->spigot_id))
		return IT_ERR_INVALID_SPIGOT;
	ret = itapi_path_to_ah_attr(ia, path, &attr);
	if (ret)
		return IT_ERR_INVALID_SOURCE_PATH;
	ret = openrdma_ah_create(pz->pd, &attr, ah_out);
	if (ret == -OPENRDMA_EINVAL)
		return IT_ERR_INVALID_SOURCE_PATH;
	return itapi_status(ret, IT_ERR_INVALID_SOURCE_PATH);
}

OPENRDMA_EXPORT it_status_t it_address_handle_create(
	it_pz_handle_t pz_handle, const it_path_t *destination_path,
	it_ah_flags_t ah_flags, it_addr_handle_t *addr_handle)
{
	struct itapi_pz *pz = (struct itapi_pz *)pz_handle;
	struct openrdma_ah *core_ah;
	struct itapi_ah *ah;
	struct itapi_ia *ia;
	it_status_t st;
	int ret;

	if (!itapi_valid(pz, IT_HANDLE_TYPE_PZ)) {
		itapi_arg_err("it_address_handle_create", "pz_handle",
			      "not a PZ");
		return IT_ERR_INVALID_PZ;
	}
	ia = pz->obj.ia;
	if (!(ia->dev.device_cap_flags & OPENRDMA_DEVICE_UD))
		return IT_ERR_OP_NOT_SUPPORTED;
	if (ah_flags & ~(unsigned int)IT_AH_PATH_COMPLETE) {
		itapi_arg_err("it_address_handle_create", "ah_flags", "0x%x",
			      (unsigned int)ah_flags);
		return IT_ERR_INVALID_FLAGS;
	}
	if (!destination_path || !addr_handle) {
		itapi_arg_err("it_address_handle_create", "destination_path",
			      "NULL");
		return IT_ERR_FAULT;
	}
	st = ah_make(ia, pz, destination_path, &core_ah);
	if (st)
		return st;
	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		openrdma_ah_destroy(core_ah);
		return IT_ERR_RESOURCES;
	}
	ah->pz = pz;
	ah->path = *destination_path;
	atomic_init(&ah->ah, core_ah);
	ret = itapi_obj_init(&ah->obj, IT_HANDLE_TYPE_ADDR, ia);
	if (ret) {
		openrdma_ah_destroy(core_ah);
		free(ah);
		return itapi_status(ret, IT_ERR_INVALID_PZ);
	}
	itapi_obj_get(&pz->obj);
	*addr_handle = (it_addr_handle_t)ah;
	return IT_SUCCESS;
}

#define AH_QUERYABLE 0xfu

OPENRDMA_EXPORT it_status_t it_address_handle_modify(
	it_addr_handle_t addr_handle, it_addr_param_mask_t mask,
	const it_addr_param_t *params)
{
	struct itapi_ah *ah = to_ah(addr_handle);
	struct openrdma_ah **retired, *core_ah;
	unsigned int m = (unsigned int)mask;
	struct itapi_ia *ia;
	it_status_t st;

	if (!itapi_valid(ah, IT_HANDLE_TYPE_ADDR)) {
		itapi_arg_err("it_address_handle_modify", "addr_handle",
			      "not an address handle");
		return IT_ERR_INVALID_AH;
	}
	/* the path is what an address handle is; IA and PZ are fixed */
	if (m & IT_ADDR_PARAM_ALL)
		m = IT_ADDR_PARAM_PATH;
	if (m != IT_ADDR_PARAM_PATH) {
		itapi_arg_err("it_address_handle_modify", "mask", "0x%x", m);
		return IT_ERR_INVALID_MASK;
	}
	if (!params) {
		itapi_arg_err("it_address_handle_modify", "params", "NULL");
		return IT_ERR_FAULT;
	}
	ia = ah->obj.ia;
	st = ah_make(ia, ah->pz, &params->path, &core_ah);
	if (st)
		return st;
	pthread_mutex_lock(&ia->lock);
	retired = realloc(ah->retired,
			  (ah->num_retired + 1) * sizeof(*ah->retired));
	if (!retired) {
		pthread_mutex_unlock(&ia->lock);
		openrdma_ah_destroy(core_ah);
		return IT_ERR_RESOURCES;
	}
	ah->retired = retired;
	ah->retired[ah->num_retired++] = atomic_exchange(&ah->ah, core_ah);
	ah->path = params->path;
	pthread_mutex_unlock(&ia->lock);
	return IT_SUCCESS;
}

OPENRDMA_EXPORT it_status_t it_address_handle_query(it_addr_handle_t addr_handle,
						    it_addr_param_mask_t mask,
						    it_addr_param_t *params)
{
	struct itapi_ah *ah = to_ah(addr_handle);
	unsigned int m = (unsigned int)mask;
	it_addr_param_t p;

	if (!itapi_valid(ah, IT_HANDLE_TYPE_ADDR)) {
		itapi_arg_err("it_address_handle_query", "addr_handle",
			      "not an address handle");
		return IT_ERR_INVALID_AH;
	}
	if (m & ~AH_QUERYABLE) {
		itapi_arg_err("it_address_handle_query", "mask", "0x%x", m);
		return IT_ERR_INVALID_MASK;
	}
	if (!params) {
		itapi_arg_err("it_address_handle_query", "params", "NULL");
		return IT_ERR_FAULT;
	}
	if (m & IT_ADDR_PARAM_ALL)
		m = AH_QUERYABLE;
	p = *params;
	if (m & IT_ADDR_PARAM_IA)
		p.ia = (it_ia_handle_t)ah->obj.ia;
	if (m & IT_ADDR_PARAM_PZ)
		p.pz = (it_pz_handle_t)ah->pz;
	if (m & IT_ADDR_PARAM_PATH) {
		pthread_mutex_lock(&ah->obj.ia->lock);
		p.path = ah->path;
		pthread_mutex_unlock(&ah->obj.ia->lock);
	}
	*params = p;
	return IT_SUCCESS;
}

void itapi_ah_destroy(struct itapi_ah *ah)
{
	size_t i;
	int ret;

	itapi_obj_fini(&ah->obj);
	ret = openrdma_ah_destroy(atomic_load(&ah->ah));
	if (ret)
		openrdma_warn(ITAPI_LOG, "ah_destroy: %s",
			      openrdma_strerror(ret));
	for (i = 0; i < ah->num_retired; i++)
		openrdma_ah_destroy(ah->retired[i]);
	free(ah->retired);
	itapi_obj_put(&ah->pz->obj);
	free(ah);
}

OPENRDMA_EXPORT it_status_t it_address_handle_free(it_addr_handle_t addr_handle)
{
	struct itapi_ah *ah = to_ah(addr_handle);

	if (!itapi_valid(ah, IT_HANDLE_TYPE_ADDR)) {
		itapi_arg_err("it_address_handle_free", "addr_handle",
			      "not an address handle");
		return IT_ERR_INVALID_AH;
	}
	itapi_ah_destroy(ah);
	return IT_SUCCESS;
}
