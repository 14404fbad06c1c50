/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Consumer calls of protection zones, local and remote memory regions.
 * Each checks its handle, translates an IA index to the provider's IA,
 * and calls the slot of the table the handle's object points to.
 */
#include "config.h"

#include <dat2/dat_redirection.h>

#include "core/export.h"
#include "registry/dat/datreg.h"

OPENRDMA_EXPORT DAT_RETURN
dat_lmr_create(DAT_IA_HANDLE ia_handle, DAT_MEM_TYPE mem_type,
	       DAT_REGION_DESCRIPTION region_description, DAT_VLEN length,
	       DAT_PZ_HANDLE pz_handle, DAT_MEM_PRIV_FLAGS privileges,
	       DAT_VA_TYPE va_type, DAT_LMR_HANDLE *lmr_handle,
	       DAT_LMR_CONTEXT *lmr_context, DAT_RMR_CONTEXT *rmr_context,
	       DAT_VLEN *registered_length, DAT_VADDR *registered_address)
{
	return DATREG_IA_CALL(ia_handle, lmr_create_func, mem_type,
			      region_description, length, pz_handle, privileges,
			      va_type, lmr_handle, lmr_context, rmr_context,
			      registered_length, registered_address);
}

OPENRDMA_EXPORT DAT_RETURN dat_lmr_query(DAT_LMR_HANDLE lmr_handle,
					 DAT_LMR_PARAM_MASK lmr_param_mask,
					 DAT_LMR_PARAM *lmr_param)
{
	return DATREG_CALL(lmr_handle, DAT_INVALID_HANDLE_LMR, lmr_query_func,
			   lmr_param_mask, lmr_param);
}

OPENRDMA_EXPORT DAT_RETURN dat_lmr_free(DAT_LMR_HANDLE lmr_handle)
{
	return DATREG_CALL(lmr_handle, DAT_INVALID_HANDLE_LMR, lmr_free_func);
}

OPENRDMA_EXPORT DAT_RETURN dat_rmr_create(DAT_PZ_HANDLE pz_handle,
					  DAT_RMR_HANDLE *rmr_handle)
{
	return DATREG_CALL(pz_handle, DAT_INVALID_HANDLE_PZ, rmr_create_func,
			   rmr_handle);
}

OPENRDMA_EXPORT DAT_RETURN dat_rmr_query(DAT_RMR_HANDLE rmr_handle,
					 DAT_RMR_PARAM_MASK rmr_param_mask,
					 DAT_RMR_PARAM *rmr_param)
{
	return DATREG_CALL(rmr_handle, DAT_INVALID_HANDLE_RMR, rmr_query_func,
			   rmr_param_mask, rmr_param);
}

OPENRDMA_EXPORT DAT_RETURN
dat_rmr_bind(DAT_RMR_HANDLE rmr_handle, DAT_LMR_HANDLE lmr_handle,
	     const DAT_LMR_TRIPLET *lmr_triplet, DAT_MEM_PRIV_FLAGS mem_priv,
	     DAT_VA_TYPE va_type, DAT_EP_HANDLE ep_handle,
	     DAT_RMR_COOKIE user_cookie, DAT_COMPLETION_FLAGS completion_flags,
	     DAT_RMR_CONTEXT *rmr_context)
{
	return DATREG_CALL(rmr_handle, DAT_INVALID_HANDLE_RMR, rmr_bind_func,
			   lmr_handle, lmr_triplet, mem_priv, va_type,
			   ep_handle, user_cookie, completion_flags,
			   rmr_context);
}

OPENRDMA_EXPORT DAT_RETURN dat_rmr_free(DAT_RMR_HANDLE rmr_handle)
{
	return DATREG_CALL(rmr_handle, DAT_INVALID_HANDLE_RMR, rmr_free_func);
}

OPENRDMA_EXPORT DAT_RETURN dat_pz_create(DAT_IA_HANDLE ia_handle,
					 DAT_PZ_HANDLE *pz_handle)
{
	return DATREG_IA_CALL(ia_handle, pz_create_func, pz_handle);
}

OPENRDMA_EXPORT DAT_RETURN dat_pz_query(DAT_PZ_HANDLE pz_handle,
					DAT_PZ_PARAM_MASK pz_param_mask,
					DAT_PZ_PARAM *pz_param)
{
	return DATREG_CALL(pz_handle, DAT_INVALID_HANDLE_PZ, pz_query_func,
			   pz_param_mask, pz_param);
}

OPENRDMA_EXPORT DAT_RETURN dat_pz_free(DAT_PZ_HANDLE pz_handle)
{
	return DATREG_CALL(pz_handle, DAT_INVALID_HANDLE_PZ, pz_free_func);
}

OPENRDMA_EXPORT DAT_RETURN dat_lmr_sync_rdma_read(
	DAT_IA_HANDLE ia_handle, const DAT_LMR_TRIPLET *local_segments,
	DAT_VLEN num_segments)
{
	return DATREG_IA_CALL(ia_handle, lmr_sync_rdma_read_func,
			      local_segments, num_segments);
}

OPENRDMA_EXPORT DAT_RETURN dat_lmr_sync_rdma_write(
	DAT_IA_HANDLE ia_handle, const DAT_LMR_TRIPLET *local_segments,
	DAT_VLEN num_segments)
{
	return DATREG_IA_CALL(ia_handle, lmr_sync_rdma_write_func,
			      local_segments, num_segments);
}

OPENRDMA_EXPORT DAT_RETURN dat_rmr_create_for_ep(DAT_PZ_HANDLE pz_handle,
						 DAT_RMR_HANDLE *rmr_handle)
{
	return DATREG_CALL(pz_handle, DAT_INVALID_HANDLE_PZ,
			   rmr_create_for_ep_func, rmr_handle);
}
