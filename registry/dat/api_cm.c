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
	if (datreg_bad_handle(cr_handle))
		return DATREG_ERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
	return DAT_HANDLE_TO_PROVIDER(cr_handle)->cr_query_func(
		cr_handle, cr_param_mask, cr_param);
}

OPENRDMA_EXPORT DAT_RETURN dat_cr_accept(DAT_CR_HANDLE cr_handle,
					 DAT_EP_HANDLE ep_handle,
					 DAT_COUNT private_data_size,
					 const DAT_PVOID private_data)
{
	if (datreg_bad_handle(cr_handle))
		return DATREG_ERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
	return DAT_HANDLE_TO_PROVIDER(cr_handle)->cr_accept_func(
		cr_handle, ep_handle, private_data_size, private_data);
}

OPENRDMA_EXPORT DAT_RETURN dat_cr_reject(DAT_CR_HANDLE cr_handle,
					 DAT_COUNT private_data_size,
					 const DAT_PVOID private_data)
{
	if (datreg_bad_handle(cr_handle))
		return DATREG_ERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
	return DAT_HANDLE_TO_PROVIDER(cr_handle)->cr_reject_func(
		cr_handle, private_data_size, private_data);
}

OPENRDMA_EXPORT DAT_RETURN dat_cr_handoff(DAT_CR_HANDLE cr_handle,
					  DAT_CONN_QUAL handoff)
{
	if (datreg_bad_handle(cr_handle))
		return DATREG_ERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
	return DAT_HANDLE_TO_PROVIDER(cr_handle)->cr_handoff_func(cr_handle,
								  handoff);
}

OPENRDMA_EXPORT DAT_RETURN dat_psp_create(DAT_IA_HANDLE ia_handle,
					  DAT_CONN_QUAL conn_qual,
					  DAT_EVD_HANDLE evd_handle,
					  DAT_PSP_FLAGS psp_flags,
					  DAT_PSP_HANDLE *psp_handle)
{
	DAT_IA_HANDLE pia;
	DAT_RETURN ret;

	ret = datreg_ia_handle_get(ia_handle, &pia);
	if (ret != DAT_SUCCESS)
		return ret;
	return DAT_HANDLE_TO_PROVIDER(pia)->psp_create_func(
		pia, conn_qual, evd_handle, psp_flags, psp_handle);
}

OPENRDMA_EXPORT DAT_RETURN dat_psp_query(DAT_PSP_HANDLE psp_handle,
					 DAT_PSP_PARAM_MASK psp_param_mask,
					 DAT_PSP_PARAM *psp_param)
{
	if (datreg_bad_handle(psp_handle))
		return DATREG_ERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PSP);
	return DAT_HANDLE_TO_PROVIDER(psp_handle)
		->psp_query_func(psp_handle, psp_param_mask, psp_param);
}

OPENRDMA_EXPORT DAT_RETURN dat_psp_free(DAT_PSP_HANDLE psp_handle)
{
	if (datreg_bad_handle(psp_handle))
		return DATREG_ERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PSP);
	return DAT_HANDLE_TO_PROVIDER(psp_handle)->psp_free_func(psp_handle);
}

OPENRDMA_EXPORT DAT_RETURN dat_rsp_create(DAT_IA_HANDLE ia_handle,
					  DAT_CONN_QUAL conn_qual,
					  DAT_EP_HANDLE ep_handle,
					  DAT_EVD_HANDLE evd_handle,
					  DAT_RSP_HANDLE *rsp_handle)
{
	DAT_IA_HANDLE pia;
	DAT_RETURN ret;

	ret = datreg_ia_handle_get(ia_handle, &pia);
	if (ret != DAT_SUCCESS)
		return ret;
	return DAT_HANDLE_TO_PROVIDER(pia)->rsp_create_func(
		pia, conn_qual, ep_handle, evd_handle, rsp_handle);
}

OPENRDMA_EXPORT DAT_RETURN dat_rsp_query(DAT_RSP_HANDLE rsp_handle,
					 DAT_RSP_PARAM_MASK rsp_param_mask,
					 DAT_RSP_PARAM *rsp_param)
{
	if (datreg_bad_handle(rsp_handle))
		return DATREG_ERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_RSP);
	return DAT_HANDLE_TO_PROVIDER(rsp_handle)
		->rsp_query_func(rsp_handle, rsp_param_mask, rsp_param);
}

OPENRDMA_EXPORT DAT_RETURN dat_rsp_free(DAT_RSP_HANDLE rsp_handle)
{
	if (datreg_bad_handle(rsp_handle))
		return DATREG_ERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_RSP);
	return DAT_HANDLE_TO_PROVIDER(rsp_handle)->rsp_free_func(rsp_handle);
}

OPENRDMA_EXPORT DAT_RETURN dat_psp_create_any(DAT_IA_HANDLE ia_handle,
					      DAT_CONN_QUAL *conn_qual,
					      DAT_EVD_HANDLE evd_handle,
					      DAT_PSP_FLAGS psp_flags,
					      DAT_PSP_HANDLE *psp_handle)
{
	DAT_IA_HANDLE pia;
	DAT_RETURN ret;

	ret = datreg_ia_handle_get(ia_handle, &pia);
	if (ret != DAT_SUCCESS)
		return ret;
	return DAT_HANDLE_TO_PROVIDER(pia)->psp_create_any_func(
		pia, conn_qual, evd_handle, psp_flags, psp_handle);
}

OPENRDMA_EXPORT DAT_RETURN dat_csp_create(DAT_IA_HANDLE ia_handle,
					  DAT_COMM *comm,
					  DAT_IA_ADDRESS_PTR address,
					  DAT_EVD_HANDLE evd_handle,
					  DAT_CSP_HANDLE *csp_handle)
{
	DAT_IA_HANDLE pia;
	DAT_RETURN ret;

	ret = datreg_ia_handle_get(ia_handle, &pia);
	if (ret != DAT_SUCCESS)
		return ret;
	return DAT_HANDLE_TO_PROVIDER(pia)->csp_create_func(
		pia, comm, address, evd_handle, csp_handle);
}

OPENRDMA_EXPORT DAT_RETURN dat_csp_query(DAT_CSP_HANDLE csp_handle,
					 DAT_CSP_PARAM_MASK csp_param_mask,
					 DAT_CSP_PARAM *csp_param)
{
	if (datreg_bad_handle(csp_handle))
		return DATREG_ERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CSP);
	return DAT_HANDLE_TO_PROVIDER(csp_handle)
		->csp_query_func(csp_handle, csp_param_mask, csp_param);
}

OPENRDMA_EXPORT DAT_RETURN dat_csp_free(DAT_CSP_HANDLE csp_handle)
{
	if (datreg_bad_handle(csp_handle))
		return DATREG_ERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CSP);
	return DAT_HANDLE_TO_PROVIDER(csp_handle)->csp_free_func(csp_handle);
}
