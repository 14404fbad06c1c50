/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Consumer calls of endpoints: creation, connection, data transfer.
 * Each checks its handle, translates an IA index to the provider's IA,
 * and calls the slot of the table the handle's object points to.
 */
#include "config.h"

#include <dat2/dat_redirection.h>

#include "core/export.h"
#include "registry/dat/datreg.h"

OPENRDMA_EXPORT DAT_RETURN dat_ep_create(DAT_IA_HANDLE ia_handle,
					 DAT_PZ_HANDLE pz_handle,
					 DAT_EVD_HANDLE recv_evd_handle,
					 DAT_EVD_HANDLE request_evd_handle,
					 DAT_EVD_HANDLE connect_evd_handle,
					 const DAT_EP_ATTR *ep_attributes,
					 DAT_EP_HANDLE *ep_handle)
{
	return DATREG_IA_CALL(ia_handle, ep_create_func, pz_handle,
			      recv_evd_handle, request_evd_handle,
			      connect_evd_handle, ep_attributes, ep_handle);
}

OPENRDMA_EXPORT DAT_RETURN dat_ep_query(DAT_EP_HANDLE ep_handle,
					DAT_EP_PARAM_MASK ep_param_mask,
					DAT_EP_PARAM *ep_param)
{
	return DATREG_CALL(ep_handle, DAT_INVALID_HANDLE_EP, ep_query_func,
			   ep_param_mask, ep_param);
}

OPENRDMA_EXPORT DAT_RETURN dat_ep_modify(DAT_EP_HANDLE ep_handle,
					 DAT_EP_PARAM_MASK ep_param_mask,
					 const DAT_EP_PARAM *ep_param)
{
	return DATREG_CALL(ep_handle, DAT_INVALID_HANDLE_EP, ep_modify_func,
			   ep_param_mask, ep_param);
}

OPENRDMA_EXPORT DAT_RETURN
dat_ep_connect(DAT_EP_HANDLE ep_handle, DAT_IA_ADDRESS_PTR remote_ia_address,
	       DAT_CONN_QUAL remote_conn_qual, DAT_TIMEOUT timeout,
	       DAT_COUNT private_data_size, const DAT_PVOID private_data,
	       DAT_QOS quality_of_service, DAT_CONNECT_FLAGS connect_flags)
{
	return DATREG_CALL(ep_handle, DAT_INVALID_HANDLE_EP, ep_connect_func,
			   remote_ia_address, remote_conn_qual, timeout,
			   private_data_size, private_data, quality_of_service,
			   connect_flags);
}

OPENRDMA_EXPORT DAT_RETURN dat_ep_dup_connect(DAT_EP_HANDLE ep_handle,
					      DAT_EP_HANDLE ep_dup_handle,
					      DAT_TIMEOUT timeout,
					      DAT_COUNT private_data_size,
					      const DAT_PVOID private_data,
					      DAT_QOS quality_of_service)
{
	return DATREG_CALL(ep_handle, DAT_INVALID_HANDLE_EP,
			   ep_dup_connect_func, ep_dup_handle, timeout,
			   private_data_size, private_data, quality_of_service);
}

OPENRDMA_EXPORT DAT_RETURN dat_ep_disconnect(DAT_EP_HANDLE ep_handle,
					     DAT_CLOSE_FLAGS close_flags)
{
	return DATREG_CALL(ep_handle, DAT_INVALID_HANDLE_EP, ep_disconnect_func,
			   close_flags);
}

OPENRDMA_EXPORT DAT_RETURN
dat_ep_post_send(DAT_EP_HANDLE ep_handle, DAT_COUNT num_segments,
		 DAT_LMR_TRIPLET *local_iov, DAT_DTO_COOKIE user_cookie,
		 DAT_COMPLETION_FLAGS completion_flags)
{
	return DATREG_CALL(ep_handle, DAT_INVALID_HANDLE_EP, ep_post_send_func,
			   num_segments, local_iov, user_cookie,
			   completion_flags);
}

OPENRDMA_EXPORT DAT_RETURN
dat_ep_post_recv(DAT_EP_HANDLE ep_handle, DAT_COUNT num_segments,
		 DAT_LMR_TRIPLET *local_iov, DAT_DTO_COOKIE user_cookie,
		 DAT_COMPLETION_FLAGS completion_flags)
{
	return DATREG_CALL(ep_handle, DAT_INVALID_HANDLE_EP, ep_post_recv_func,
			   num_segments, local_iov, user_cookie,
			   completion_flags);
}

OPENRDMA_EXPORT DAT_RETURN
dat_ep_post_rdma_read(DAT_EP_HANDLE ep_handle, DAT_COUNT num_segments,
		      DAT_LMR_TRIPLET *local_iov, DAT_DTO_COOKIE user_cookie,
		      const DAT_RMR_TRIPLET *remote_iov,
		      DAT_COMPLETION_FLAGS completion_flags)
{
	return DATREG_CALL(ep_handle, DAT_INVALID_HANDLE_EP,
			   ep_post_rdma_read_func, num_segments, local_iov,
			   user_cookie, remote_iov, completion_flags);
}

OPENRDMA_EXPORT DAT_RETURN
dat_ep_post_rdma_write(DAT_EP_HANDLE ep_handle, DAT_COUNT num_segments,
		       DAT_LMR_TRIPLET *local_iov, DAT_DTO_COOKIE user_cookie,
		       const DAT_RMR_TRIPLET *remote_iov,
		       DAT_COMPLETION_FLAGS completion_flags)
{
	return DATREG_CALL(ep_handle, DAT_INVALID_HANDLE_EP,
			   ep_post_rdma_write_func, num_segments, local_iov,
			   user_cookie, remote_iov, completion_flags);
}

OPENRDMA_EXPORT DAT_RETURN dat_ep_get_status(DAT_EP_HANDLE ep_handle,
					     DAT_EP_STATE *ep_state,
					     DAT_BOOLEAN *recv_idle,
					     DAT_BOOLEAN *request_idle)
{
	return DATREG_CALL(ep_handle, DAT_INVALID_HANDLE_EP, ep_get_status_func,
			   ep_state, recv_idle, request_idle);
}

OPENRDMA_EXPORT DAT_RETURN dat_ep_free(DAT_EP_HANDLE ep_handle)
{
	return DATREG_CALL(ep_handle, DAT_INVALID_HANDLE_EP, ep_free_func);
}

OPENRDMA_EXPORT DAT_RETURN dat_ep_reset(DAT_EP_HANDLE ep_handle)
{
	return DATREG_CALL(ep_handle, DAT_INVALID_HANDLE_EP, ep_reset_func);
}

OPENRDMA_EXPORT DAT_RETURN dat_ep_create_with_srq(
	DAT_IA_HANDLE ia_handle, DAT_PZ_HANDLE pz_handle,
	DAT_EVD_HANDLE recv_evd_handle, DAT_EVD_HANDLE request_evd_handle,
	DAT_EVD_HANDLE connect_evd_handle, DAT_SRQ_HANDLE srq_handle,
	const DAT_EP_ATTR *ep_attributes, DAT_EP_HANDLE *ep_handle)
{
	return DATREG_IA_CALL(ia_handle, ep_create_with_srq_func, pz_handle,
			      recv_evd_handle, request_evd_handle,
			      connect_evd_handle, srq_handle, ep_attributes,
			      ep_handle);
}

OPENRDMA_EXPORT DAT_RETURN dat_ep_recv_query(DAT_EP_HANDLE ep_handle,
					     DAT_COUNT *nbufs_allocated,
					     DAT_COUNT *bufs_alloc_span)
{
	return DATREG_CALL(ep_handle, DAT_INVALID_HANDLE_EP, ep_recv_query_func,
			   nbufs_allocated, bufs_alloc_span);
}

OPENRDMA_EXPORT DAT_RETURN dat_ep_set_watermark(DAT_EP_HANDLE ep_handle,
						DAT_COUNT soft_high_watermark,
						DAT_COUNT hard_high_watermark)
{
	return DATREG_CALL(ep_handle, DAT_INVALID_HANDLE_EP,
			   ep_set_watermark_func, soft_high_watermark,
			   hard_high_watermark);
}

OPENRDMA_EXPORT DAT_RETURN
dat_ep_common_connect(DAT_EP_HANDLE ep_handle,
		      DAT_IA_ADDRESS_PTR remote_ia_address, DAT_TIMEOUT timeout,
		      DAT_COUNT private_data_size, const DAT_PVOID private_data)
{
	return DATREG_CALL(ep_handle, DAT_INVALID_HANDLE_EP,
			   ep_common_connect_func, remote_ia_address, timeout,
			   private_data_size, private_data);
}

OPENRDMA_EXPORT DAT_RETURN dat_ep_post_send_with_invalidate(
	DAT_EP_HANDLE ep_handle, DAT_COUNT num_segments,
	DAT_LMR_TRIPLET *local_iov, DAT_DTO_COOKIE user_cookie,
	DAT_COMPLETION_FLAGS completion_flags, DAT_BOOLEAN invalidate_flag,
	DAT_RMR_CONTEXT rmr_context)
{
	return DATREG_CALL(ep_handle, DAT_INVALID_HANDLE_EP,
			   ep_post_send_with_invalidate_func, num_segments,
			   local_iov, user_cookie, completion_flags,
			   invalidate_flag, rmr_context);
}

OPENRDMA_EXPORT DAT_RETURN dat_ep_post_rdma_read_to_rmr(
	DAT_EP_HANDLE ep_handle, const DAT_RMR_TRIPLET *local_iov,
	DAT_DTO_COOKIE user_cookie, const DAT_RMR_TRIPLET *remote_iov,
	DAT_COMPLETION_FLAGS completion_flags)
{
	return DATREG_CALL(ep_handle, DAT_INVALID_HANDLE_EP,
			   ep_post_rdma_read_to_rmr_func, local_iov,
			   user_cookie, remote_iov, completion_flags);
}
