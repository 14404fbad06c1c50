/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Consumer calls of service points (PSP, RSP, CSP) and connection
 * requests.
 * Each checks its handle, translates an IA index to the provider's IA,
 * and calls the slot of the table the handle's object points to.
 */
#include "config.h"

#include <dat2/dat_redirection.h>

#include "core/export.h"
#include "registry/dat/datreg.h"

OPENRDMA_EXPORT DAT_RETURN dat_cr_query(DAT_CR_HANDLE cr_handle,
					DAT_CR_PARAM_MASK cr_param_mask,
					DAT_CR_PARAM *cr_param)
{
	return DATREG_CALL(cr_handle, DAT_INVALID_HANDLE_CR, cr_query_func,
			   cr_param_mask, cr_param);
}

OPENRDMA_EXPORT DAT_RETURN dat_cr_accept(DAT_CR_HANDLE cr_handle,
					 DAT_EP_HANDLE ep_handle,
					 DAT_COUNT private_data_size,
					 const DAT_PVOID private_data)
{
	return DATREG_CALL(cr_handle, DAT_INVALID_HANDLE_CR, cr_accept_func,
			   ep_handle, private_data_size, private_data);
}

OPENRDMA_EXPORT DAT_RETURN dat_cr_reject(DAT_CR_HANDLE cr_handle,
					 DAT_COUNT private_data_size,
					 const DAT_PVOID private_data)
{
	return DATREG_CALL(cr_handle, DAT_INVALID_HANDLE_CR, cr_reject_func,
			   private_data_size, private_data);
}

OPENRDMA_EXPORT DAT_RETURN dat_cr_handoff(DAT_CR_HANDLE cr_handle,
					  DAT_CONN_QUAL handoff)
{
	return DATREG_CALL(cr_handle, DAT_INVALID_HANDLE_CR, cr_handoff_func,
			   handoff);
}

OPENRDMA_EXPORT DAT_RETURN dat_psp_create(DAT_IA_HANDLE ia_handle,
					  DAT_CONN_QUAL conn_qual,
					  DAT_EVD_HANDLE evd_handle,
					  DAT_PSP_FLAGS psp_flags,
					  DAT_PSP_HANDLE *psp_handle)
{
	return DATREG_IA_CALL(ia_handle, psp_create_func, conn_qual, evd_handle,
			      psp_flags, psp_handle);
}

OPENRDMA_EXPORT DAT_RETURN dat_psp_query(DAT_PSP_HANDLE psp_handle,
					 DAT_PSP_PARAM_MASK psp_param_mask,
					 DAT_PSP_PARAM *psp_param)
{
	return DATREG_CALL(psp_handle, DAT_INVALID_HANDLE_PSP, psp_query_func,
			   psp_param_mask, psp_param);
}

OPENRDMA_EXPORT DAT_RETURN dat_psp_free(DAT_PSP_HANDLE psp_handle)
{
	return DATREG_CALL(psp_handle, DAT_INVALID_HANDLE_PSP, psp_free_func);
}

OPENRDMA_EXPORT DAT_RETURN dat_rsp_create(DAT_IA_HANDLE ia_handle,
					  DAT_CONN_QUAL conn_qual,
					  DAT_EP_HANDLE ep_handle,
					  DAT_EVD_HANDLE evd_handle,
					  DAT_RSP_HANDLE *rsp_handle)
{
	return DATREG_IA_CALL(ia_handle, rsp_create_func, conn_qual, ep_handle,
			      evd_handle, rsp_handle);
}

OPENRDMA_EXPORT DAT_RETURN dat_rsp_query(DAT_RSP_HANDLE rsp_handle,
					 DAT_RSP_PARAM_MASK rsp_param_mask,
					 DAT_RSP_PARAM *rsp_param)
{
	return DATREG_CALL(rsp_handle, DAT_INVALID_HANDLE_RSP, rsp_query_func,
			   rsp_param_mask, rsp_param);
}

OPENRDMA_EXPORT DAT_RETURN dat_rsp_free(DAT_RSP_HANDLE rsp_handle)
{
	return DATREG_CALL(rsp_handle, DAT_INVALID_HANDLE_RSP, rsp_free_func);
}

OPENRDMA_EXPORT DAT_RETURN dat_psp_create_any(DAT_IA_HANDLE ia_handle,
					      DAT_CONN_QUAL *conn_qual,
					      DAT_EVD_HANDLE evd_handle,
					      DAT_PSP_FLAGS psp_flags,
					      DAT_PSP_HANDLE *psp_handle)
{
	return DATREG_IA_CALL(ia_handle, psp_create_any_func, conn_qual,
			      evd_handle, psp_flags, psp_handle);
}

OPENRDMA_EXPORT DAT_RETURN dat_csp_create(DAT_IA_HANDLE ia_handle,
					  DAT_COMM *comm,
					  DAT_IA_ADDRESS_PTR address,
					  DAT_EVD_HANDLE evd_handle,
					  DAT_CSP_HANDLE *csp_handle)
{
	return DATREG_IA_CALL(ia_handle, csp_create_func, comm, address,
			      evd_handle, csp_handle);
}

OPENRDMA_EXPORT DAT_RETURN dat_csp_query(DAT_CSP_HANDLE csp_handle,
					 DAT_CSP_PARAM_MASK csp_param_mask,
					 DAT_CSP_PARAM *csp_param)
{
	return DATREG_CALL(csp_handle, DAT_INVALID_HANDLE_CSP, csp_query_func,
			   csp_param_mask, csp_param);
}

OPENRDMA_EXPORT DAT_RETURN dat_csp_free(DAT_CSP_HANDLE csp_handle)
{
	return DATREG_CALL(csp_handle, DAT_INVALID_HANDLE_CSP, csp_free_func);
}
