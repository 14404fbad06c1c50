/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The 79 functions of the DAT_PROVIDER table, in slot order: what
 * provider.c puts in the table and each file of api/dat/ implements.
 * Argument checks and error codes are in the man pages (dat_ia(3), ...).
 */
#ifndef API_DAT_SLOTS_H
#define API_DAT_SLOTS_H

#include <dat2/udat.h>
#include <dat2/udat_redirection.h>

DAT_RETURN datp_ia_open(const DAT_NAME_PTR name, DAT_COUNT async_evd_min_qlen,
			DAT_EVD_HANDLE *async_evd_handle,
			DAT_IA_HANDLE *ia_handle);
DAT_RETURN datp_ia_query(DAT_IA_HANDLE ia_handle,
			 DAT_EVD_HANDLE *async_evd_handle,
			 DAT_IA_ATTR_MASK ia_attr_mask, DAT_IA_ATTR *ia_attr,
			 DAT_PROVIDER_ATTR_MASK provider_attr_mask,
			 DAT_PROVIDER_ATTR *provider_attr);
DAT_RETURN datp_ia_close(DAT_IA_HANDLE ia_handle, DAT_CLOSE_FLAGS close_flags);
DAT_RETURN datp_set_consumer_context(DAT_HANDLE dat_handle,
				     DAT_CONTEXT context);
DAT_RETURN datp_get_consumer_context(DAT_HANDLE dat_handle,
				     DAT_CONTEXT *context);
DAT_RETURN datp_get_handle_type(DAT_HANDLE dat_handle,
				DAT_HANDLE_TYPE *handle_type);
DAT_RETURN datp_cno_create(DAT_IA_HANDLE ia_handle,
			   DAT_OS_WAIT_PROXY_AGENT agent,
			   DAT_CNO_HANDLE *cno_handle);
DAT_RETURN datp_cno_modify_agent(DAT_CNO_HANDLE cno_handle,
				 DAT_OS_WAIT_PROXY_AGENT agent);
DAT_RETURN datp_cno_query(DAT_CNO_HANDLE cno_handle,
			  DAT_CNO_PARAM_MASK cno_param_mask,
			  DAT_CNO_PARAM *cno_param);
DAT_RETURN datp_cno_free(DAT_CNO_HANDLE cno_handle);
DAT_RETURN datp_cno_wait(DAT_CNO_HANDLE cno_handle, DAT_TIMEOUT timeout,
			 DAT_EVD_HANDLE *evd_handle);
DAT_RETURN datp_cr_query(DAT_CR_HANDLE cr_handle,
			 DAT_CR_PARAM_MASK cr_param_mask,
			 DAT_CR_PARAM *cr_param);
DAT_RETURN datp_cr_accept(DAT_CR_HANDLE cr_handle, DAT_EP_HANDLE ep_handle,
			  DAT_COUNT private_data_size,
			  const DAT_PVOID private_data);
DAT_RETURN datp_cr_reject(DAT_CR_HANDLE cr_handle, DAT_COUNT private_data_size,
			  const DAT_PVOID private_data);
DAT_RETURN datp_cr_handoff(DAT_CR_HANDLE cr_handle, DAT_CONN_QUAL handoff);
DAT_RETURN datp_evd_create(DAT_IA_HANDLE ia_handle, DAT_COUNT evd_min_qlen,
			   DAT_CNO_HANDLE cno_handle, DAT_EVD_FLAGS evd_flags,
			   DAT_EVD_HANDLE *evd_handle);
DAT_RETURN datp_evd_query(DAT_EVD_HANDLE evd_handle,
			  DAT_EVD_PARAM_MASK evd_param_mask,
			  DAT_EVD_PARAM *evd_param);
DAT_RETURN datp_evd_modify_cno(DAT_EVD_HANDLE evd_handle,
			       DAT_CNO_HANDLE cno_handle);
DAT_RETURN datp_evd_enable(DAT_EVD_HANDLE evd_handle);
DAT_RETURN datp_evd_disable(DAT_EVD_HANDLE evd_handle);
DAT_RETURN datp_evd_wait(DAT_EVD_HANDLE evd_handle, DAT_TIMEOUT timeout,
			 DAT_COUNT threshold, DAT_EVENT *event,
			 DAT_COUNT *n_more_events);
DAT_RETURN datp_evd_resize(DAT_EVD_HANDLE evd_handle, DAT_COUNT evd_min_qlen);
DAT_RETURN datp_evd_post_se(DAT_EVD_HANDLE evd_handle, const DAT_EVENT *event);
DAT_RETURN datp_evd_dequeue(DAT_EVD_HANDLE evd_handle, DAT_EVENT *event);
DAT_RETURN datp_evd_free(DAT_EVD_HANDLE evd_handle);
DAT_RETURN datp_ep_create(DAT_IA_HANDLE ia_handle, DAT_PZ_HANDLE pz_handle,
			  DAT_EVD_HANDLE recv_evd_handle,
			  DAT_EVD_HANDLE request_evd_handle,
			  DAT_EVD_HANDLE connect_evd_handle,
			  const DAT_EP_ATTR *ep_attributes,
			  DAT_EP_HANDLE *ep_handle);
DAT_RETURN datp_ep_query(DAT_EP_HANDLE ep_handle,
			 DAT_EP_PARAM_MASK ep_param_mask,
			 DAT_EP_PARAM *ep_param);
DAT_RETURN datp_ep_modify(DAT_EP_HANDLE ep_handle,
			  DAT_EP_PARAM_MASK ep_param_mask,
			  const DAT_EP_PARAM *ep_param);
DAT_RETURN
datp_ep_connect(DAT_EP_HANDLE ep_handle, DAT_IA_ADDRESS_PTR remote_ia_address,
		DAT_CONN_QUAL remote_conn_qual, DAT_TIMEOUT timeout,
		DAT_COUNT private_data_size, const DAT_PVOID private_data,
		DAT_QOS quality_of_service, DAT_CONNECT_FLAGS connect_flags);
DAT_RETURN datp_ep_dup_connect(DAT_EP_HANDLE ep_handle,
			       DAT_EP_HANDLE ep_dup_handle, DAT_TIMEOUT timeout,
			       DAT_COUNT private_data_size,
			       const DAT_PVOID private_data,
			       DAT_QOS quality_of_service);
DAT_RETURN datp_ep_disconnect(DAT_EP_HANDLE ep_handle,
			      DAT_CLOSE_FLAGS close_flags);
DAT_RETURN datp_ep_post_send(DAT_EP_HANDLE ep_handle, DAT_COUNT num_segments,
			     DAT_LMR_TRIPLET *local_iov,
			     DAT_DTO_COOKIE user_cookie,
			     DAT_COMPLETION_FLAGS completion_flags);
DAT_RETURN datp_ep_post_recv(DAT_EP_HANDLE ep_handle, DAT_COUNT num_segments,
			     DAT_LMR_TRIPLET *local_iov,
			     DAT_DTO_COOKIE user_cookie,
			     DAT_COMPLETION_FLAGS completion_flags);
DAT_RETURN datp_ep_post_rdma_read(DAT_EP_HANDLE ep_handle,
				  DAT_COUNT num_segments,
				  DAT_LMR_TRIPLET *local_iov,
				  DAT_DTO_COOKIE user_cookie,
				  const DAT_RMR_TRIPLET *remote_iov,
				  DAT_COMPLETION_FLAGS completion_flags);
DAT_RETURN datp_ep_post_rdma_write(DAT_EP_HANDLE ep_handle,
				   DAT_COUNT num_segments,
				   DAT_LMR_TRIPLET *local_iov,
				   DAT_DTO_COOKIE user_cookie,
				   const DAT_RMR_TRIPLET *remote_iov,
				   DAT_COMPLETION_FLAGS completion_flags);
DAT_RETURN datp_ep_get_status(DAT_EP_HANDLE ep_handle, DAT_EP_STATE *ep_state,
			      DAT_BOOLEAN *recv_idle,
			      DAT_BOOLEAN *request_idle);
DAT_RETURN datp_ep_free(DAT_EP_HANDLE ep_handle);
DAT_RETURN
datp_lmr_create(DAT_IA_HANDLE ia_handle, DAT_MEM_TYPE mem_type,
		DAT_REGION_DESCRIPTION region_description, DAT_VLEN length,
		DAT_PZ_HANDLE pz_handle, DAT_MEM_PRIV_FLAGS privileges,
		DAT_VA_TYPE va_type, DAT_LMR_HANDLE *lmr_handle,
		DAT_LMR_CONTEXT *lmr_context, DAT_RMR_CONTEXT *rmr_context,
		DAT_VLEN *registered_length, DAT_VADDR *registered_address);
DAT_RETURN datp_lmr_query(DAT_LMR_HANDLE lmr_handle,
			  DAT_LMR_PARAM_MASK lmr_param_mask,
			  DAT_LMR_PARAM *lmr_param);
DAT_RETURN datp_lmr_free(DAT_LMR_HANDLE lmr_handle);
DAT_RETURN datp_rmr_create(DAT_PZ_HANDLE pz_handle, DAT_RMR_HANDLE *rmr_handle);
DAT_RETURN datp_rmr_query(DAT_RMR_HANDLE rmr_handle,
			  DAT_RMR_PARAM_MASK rmr_param_mask,
			  DAT_RMR_PARAM *rmr_param);
DAT_RETURN datp_rmr_bind(DAT_RMR_HANDLE rmr_handle, DAT_LMR_HANDLE lmr_handle,
			 const DAT_LMR_TRIPLET *lmr_triplet,
			 DAT_MEM_PRIV_FLAGS mem_priv, DAT_VA_TYPE va_type,
			 DAT_EP_HANDLE ep_handle, DAT_RMR_COOKIE user_cookie,
			 DAT_COMPLETION_FLAGS completion_flags,
			 DAT_RMR_CONTEXT *rmr_context);
DAT_RETURN datp_rmr_free(DAT_RMR_HANDLE rmr_handle);
DAT_RETURN datp_psp_create(DAT_IA_HANDLE ia_handle, DAT_CONN_QUAL conn_qual,
			   DAT_EVD_HANDLE evd_handle, DAT_PSP_FLAGS psp_flags,
			   DAT_PSP_HANDLE *psp_handle);
DAT_RETURN datp_psp_query(DAT_PSP_HANDLE psp_handle,
			  DAT_PSP_PARAM_MASK psp_param_mask,
			  DAT_PSP_PARAM *psp_param);
DAT_RETURN datp_psp_free(DAT_PSP_HANDLE psp_handle);
DAT_RETURN datp_rsp_create(DAT_IA_HANDLE ia_handle, DAT_CONN_QUAL conn_qual,
			   DAT_EP_HANDLE ep_handle, DAT_EVD_HANDLE evd_handle,
			   DAT_RSP_HANDLE *rsp_handle);
DAT_RETURN datp_rsp_query(DAT_RSP_HANDLE rsp_handle,
			  DAT_RSP_PARAM_MASK rsp_param_mask,
			  DAT_RSP_PARAM *rsp_param);
DAT_RETURN datp_rsp_free(DAT_RSP_HANDLE rsp_handle);
DAT_RETURN datp_pz_create(DAT_IA_HANDLE ia_handle, DAT_PZ_HANDLE *pz_handle);
DAT_RETURN datp_pz_query(DAT_PZ_HANDLE pz_handle,
			 DAT_PZ_PARAM_MASK pz_param_mask,
			 DAT_PZ_PARAM *pz_param);
DAT_RETURN datp_pz_free(DAT_PZ_HANDLE pz_handle);
DAT_RETURN datp_psp_create_any(DAT_IA_HANDLE ia_handle,
			       DAT_CONN_QUAL *conn_qual,
			       DAT_EVD_HANDLE evd_handle,
			       DAT_PSP_FLAGS psp_flags,
			       DAT_PSP_HANDLE *psp_handle);
DAT_RETURN datp_ep_reset(DAT_EP_HANDLE ep_handle);
DAT_RETURN datp_evd_set_unwaitable(DAT_EVD_HANDLE evd_handle);
DAT_RETURN datp_evd_clear_unwaitable(DAT_EVD_HANDLE evd_handle);
DAT_RETURN datp_lmr_sync_rdma_read(DAT_IA_HANDLE ia_handle,
				   const DAT_LMR_TRIPLET *local_segments,
				   DAT_VLEN num_segments);
DAT_RETURN datp_lmr_sync_rdma_write(DAT_IA_HANDLE ia_handle,
				    const DAT_LMR_TRIPLET *local_segments,
				    DAT_VLEN num_segments);
DAT_RETURN datp_ep_create_with_srq(
	DAT_IA_HANDLE ia_handle, DAT_PZ_HANDLE pz_handle,
	DAT_EVD_HANDLE recv_evd_handle, DAT_EVD_HANDLE request_evd_handle,
	DAT_EVD_HANDLE connect_evd_handle, DAT_SRQ_HANDLE srq_handle,
	const DAT_EP_ATTR *ep_attributes, DAT_EP_HANDLE *ep_handle);
DAT_RETURN datp_ep_recv_query(DAT_EP_HANDLE ep_handle,
			      DAT_COUNT *nbufs_allocated,
			      DAT_COUNT *bufs_alloc_span);
DAT_RETURN datp_ep_set_watermark(DAT_EP_HANDLE ep_handle,
				 DAT_COUNT soft_high_watermark,
				 DAT_COUNT hard_high_watermark);
DAT_RETURN datp_srq_create(DAT_IA_HANDLE ia_handle, DAT_PZ_HANDLE pz_handle,
			   DAT_SRQ_ATTR *srq_attr, DAT_SRQ_HANDLE *srq_handle);
DAT_RETURN datp_srq_free(DAT_SRQ_HANDLE srq_handle);
DAT_RETURN datp_srq_post_recv(DAT_SRQ_HANDLE srq_handle, DAT_COUNT num_segments,
			      DAT_LMR_TRIPLET *local_iov,
			      DAT_DTO_COOKIE user_cookie);
DAT_RETURN datp_srq_query(DAT_SRQ_HANDLE srq_handle,
			  DAT_SRQ_PARAM_MASK srq_param_mask,
			  DAT_SRQ_PARAM *srq_param);
DAT_RETURN datp_srq_resize(DAT_SRQ_HANDLE srq_handle,
			   DAT_COUNT srq_max_recv_dto);
DAT_RETURN datp_srq_set_lw(DAT_SRQ_HANDLE srq_handle, DAT_COUNT low_watermark);
DAT_RETURN datp_csp_create(DAT_IA_HANDLE ia_handle, DAT_COMM *comm,
			   DAT_IA_ADDRESS_PTR address,
			   DAT_EVD_HANDLE evd_handle,
			   DAT_CSP_HANDLE *csp_handle);
DAT_RETURN datp_csp_query(DAT_CSP_HANDLE csp_handle,
			  DAT_CSP_PARAM_MASK csp_param_mask,
			  DAT_CSP_PARAM *csp_param);
DAT_RETURN datp_csp_free(DAT_CSP_HANDLE csp_handle);
DAT_RETURN datp_ep_common_connect(DAT_EP_HANDLE ep_handle,
				  DAT_IA_ADDRESS_PTR remote_ia_address,
				  DAT_TIMEOUT timeout,
				  DAT_COUNT private_data_size,
				  const DAT_PVOID private_data);
DAT_RETURN datp_rmr_create_for_ep(DAT_PZ_HANDLE pz_handle,
				  DAT_RMR_HANDLE *rmr_handle);
DAT_RETURN datp_ep_post_send_with_invalidate(
	DAT_EP_HANDLE ep_handle, DAT_COUNT num_segments,
	DAT_LMR_TRIPLET *local_iov, DAT_DTO_COOKIE user_cookie,
	DAT_COMPLETION_FLAGS completion_flags, DAT_BOOLEAN invalidate_flag,
	DAT_RMR_CONTEXT rmr_context);
DAT_RETURN datp_ep_post_rdma_read_to_rmr(DAT_EP_HANDLE ep_handle,
					 const DAT_RMR_TRIPLET *local_iov,
					 DAT_DTO_COOKIE user_cookie,
					 const DAT_RMR_TRIPLET *remote_iov,
					 DAT_COMPLETION_FLAGS completion_flags);
DAT_RETURN datp_cno_fd_create(DAT_IA_HANDLE ia_handle, DAT_FD *fd,
			      DAT_CNO_HANDLE *cno_handle);
DAT_RETURN datp_cno_trigger(DAT_CNO_HANDLE cno_handle,
			    DAT_EVD_HANDLE *evd_handle);
DAT_RETURN datp_ia_ha_related(DAT_IA_HANDLE ia_handle, const DAT_NAME_PTR name,
			      DAT_BOOLEAN *answer);
DAT_RETURN datp_handle_extendedop(DAT_HANDLE handle, DAT_EXTENDED_OP op,
				  va_list args);

#endif /* API_DAT_SLOTS_H */
