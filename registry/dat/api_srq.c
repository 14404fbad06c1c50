/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Consumer calls of shared receive queues.
 * Each checks its handle, translates an IA index to the provider's IA,
 * and calls the slot of the table the handle's object points to.
 */
#include "config.h"

#include <dat2/dat_redirection.h>

#include "core/export.h"
#include "registry/dat/datreg.h"

OPENRDMA_EXPORT DAT_RETURN dat_srq_create(DAT_IA_HANDLE ia_handle,
					  DAT_PZ_HANDLE pz_handle,
					  DAT_SRQ_ATTR *srq_attr,
					  DAT_SRQ_HANDLE *srq_handle)
{
	return DATREG_IA_CALL(ia_handle, srq_create_func, pz_handle, srq_attr,
			      srq_handle);
}

OPENRDMA_EXPORT DAT_RETURN dat_srq_free(DAT_SRQ_HANDLE srq_handle)
{
	return DATREG_CALL(srq_handle, DAT_INVALID_HANDLE_SRQ, srq_free_func);
}

OPENRDMA_EXPORT DAT_RETURN dat_srq_post_recv(DAT_SRQ_HANDLE srq_handle,
					     DAT_COUNT num_segments,
					     DAT_LMR_TRIPLET *local_iov,
					     DAT_DTO_COOKIE user_cookie)
{
	return DATREG_CALL(srq_handle, DAT_INVALID_HANDLE_SRQ,
			   srq_post_recv_func, num_segments, local_iov,
			   user_cookie);
}

OPENRDMA_EXPORT DAT_RETURN dat_srq_query(DAT_SRQ_HANDLE srq_handle,
					 DAT_SRQ_PARAM_MASK srq_param_mask,
					 DAT_SRQ_PARAM *srq_param)
{
	return DATREG_CALL(srq_handle, DAT_INVALID_HANDLE_SRQ, srq_query_func,
			   srq_param_mask, srq_param);
}

OPENRDMA_EXPORT DAT_RETURN dat_srq_resize(DAT_SRQ_HANDLE srq_handle,
					  DAT_COUNT srq_max_recv_dto)
{
	return DATREG_CALL(srq_handle, DAT_INVALID_HANDLE_SRQ, srq_resize_func,
			   srq_max_recv_dto);
}

OPENRDMA_EXPORT DAT_RETURN dat_srq_set_lw(DAT_SRQ_HANDLE srq_handle,
					  DAT_COUNT low_watermark)
{
	return DATREG_CALL(srq_handle, DAT_INVALID_HANDLE_SRQ, srq_set_lw_func,
			   low_watermark);
}
