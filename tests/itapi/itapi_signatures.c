/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Every function of IT-API 2.1 is declared with the standard's signature.
 * Each check compiles only if the prototype matches argument for argument;
 * nothing here is called or linked.
 */
#include <string.h>

#include "itapi_test.h"

/* Interfaces, adapters, addresses. */
typedef void interface_list_fn(it_interface_t *, size_t *, size_t *);
typedef it_status_t ia_create_fn(const char *, uint32_t, uint32_t,
				 it_ia_handle_t *);
typedef it_status_t ia_free_fn(it_ia_handle_t);
typedef it_status_t ia_query_fn(it_ia_handle_t, it_ia_info_t **);
typedef void ia_info_free_fn(it_ia_info_t *);
typedef it_status_t get_pathinfo_fn(it_ia_handle_t, size_t,
				    const it_net_addr_t *, size_t *, size_t *,
				    it_path_t *);
typedef it_status_t convert_net_addr_fn(const it_net_addr_t *,
					it_net_addr_type_t, it_net_addr_t *);
typedef it_rdma_addr_t make_rdma_addr_relative_fn(it_length_t);
typedef uint64_t byte_order_fn(uint64_t);

ITAPI_ASSERT_FN_TYPE(interface_list, it_interface_list, interface_list_fn);
ITAPI_ASSERT_FN_TYPE(ia_create, it_ia_create, ia_create_fn);
ITAPI_ASSERT_FN_TYPE(ia_free, it_ia_free, ia_free_fn);
ITAPI_ASSERT_FN_TYPE(ia_query, it_ia_query, ia_query_fn);
ITAPI_ASSERT_FN_TYPE(ia_info_free, it_ia_info_free, ia_info_free_fn);
ITAPI_ASSERT_FN_TYPE(get_pathinfo, it_get_pathinfo, get_pathinfo_fn);
ITAPI_ASSERT_FN_TYPE(convert_net_addr, it_convert_net_addr,
		     convert_net_addr_fn);
ITAPI_ASSERT_FN_TYPE(make_rdma_addr_absolute, it_make_rdma_addr_absolute,
		     itapi_make_rdma_addr_absolute_fn);
ITAPI_ASSERT_FN_TYPE(make_rdma_addr_relative, it_make_rdma_addr_relative,
		     make_rdma_addr_relative_fn);
ITAPI_ASSERT_FN_TYPE(hton64, it_hton64, byte_order_fn);
ITAPI_ASSERT_FN_TYPE(ntoh64, it_ntoh64, byte_order_fn);

/* Protection zones and memory. */
typedef it_status_t pz_create_fn(it_ia_handle_t, it_pz_handle_t *);
typedef it_status_t pz_query_fn(it_pz_handle_t, it_pz_param_mask_t,
				it_pz_param_t *);
typedef it_status_t pz_free_fn(it_pz_handle_t);
typedef it_status_t lmr_create_unlinked_fn(it_pz_handle_t, size_t,
					   it_lmr_flag_t, uint32_t,
					   it_lmr_handle_t *);
typedef it_status_t lmr_link_fn(it_lmr_handle_t, const void *,
				const it_iobl_t *, it_length_t, it_addr_mode_t,
				it_mem_priv_t, it_ep_handle_t, it_dto_cookie_t,
				it_dto_flags_t, it_rmr_context_t *);
typedef it_status_t lmr_unlink_fn(it_lmr_handle_t, it_ep_handle_t,
				  it_dto_cookie_t, it_dto_flags_t);
typedef it_status_t lmr_modify_fn(it_lmr_handle_t, it_lmr_param_mask_t,
				  const it_lmr_param_t *);
typedef it_status_t lmr_query_fn(it_lmr_handle_t, it_lmr_param_mask_t,
				 it_lmr_param_t *);
typedef it_status_t lmr_free_fn(it_lmr_handle_t);
typedef it_status_t mem_map_fn(it_ia_handle_t, void *, uint64_t, size_t,
			       it_io_addr_t *, size_t *);
typedef it_status_t mem_unmap_fn(it_ia_handle_t, it_io_addr_t, size_t);
typedef it_status_t rmr_query_fn(it_rmr_handle_t, it_rmr_param_mask_t,
				 it_rmr_param_t *);
typedef it_status_t rmr_free_fn(it_rmr_handle_t);

ITAPI_ASSERT_FN_TYPE(pz_create, it_pz_create, pz_create_fn);
ITAPI_ASSERT_FN_TYPE(pz_query, it_pz_query, pz_query_fn);
ITAPI_ASSERT_FN_TYPE(pz_free, it_pz_free, pz_free_fn);
ITAPI_ASSERT_FN_TYPE(lmr_create10, it_lmr_create10, itapi_lmr_create10_fn);
ITAPI_ASSERT_FN_TYPE(lmr_create20, it_lmr_create20, itapi_lmr_create20_fn);
ITAPI_ASSERT_FN_TYPE(lmr_create21, it_lmr_create21, itapi_lmr_create21_fn);
ITAPI_ASSERT_FN_TYPE(lmr_create_unlinked, it_lmr_create_unlinked,
		     lmr_create_unlinked_fn);
ITAPI_ASSERT_FN_TYPE(lmr_link, it_lmr_link, lmr_link_fn);
ITAPI_ASSERT_FN_TYPE(lmr_unlink, it_lmr_unlink, lmr_unlink_fn);
ITAPI_ASSERT_FN_TYPE(lmr_modify, it_lmr_modify, lmr_modify_fn);
ITAPI_ASSERT_FN_TYPE(lmr_query, it_lmr_query, lmr_query_fn);
ITAPI_ASSERT_FN_TYPE(lmr_free, it_lmr_free, lmr_free_fn);
ITAPI_ASSERT_FN_TYPE(lmr_flush_to_mem, it_lmr_flush_to_mem, itapi_lmr_sync_fn);
ITAPI_ASSERT_FN_TYPE(lmr_refresh_from_mem, it_lmr_refresh_from_mem,
		     itapi_lmr_sync_fn);
ITAPI_ASSERT_FN_TYPE(mem_map, it_mem_map, mem_map_fn);
ITAPI_ASSERT_FN_TYPE(mem_unmap, it_mem_unmap, mem_unmap_fn);
ITAPI_ASSERT_FN_TYPE(rmr_create10, it_rmr_create10, itapi_rmr_create10_fn);
ITAPI_ASSERT_FN_TYPE(rmr_create20, it_rmr_create20, itapi_rmr_create20_fn);
ITAPI_ASSERT_FN_TYPE(rmr_bind10, it_rmr_bind10, itapi_rmr_bind10_fn);
ITAPI_ASSERT_FN_TYPE(rmr_link, it_rmr_link, itapi_rmr_link_fn);
ITAPI_ASSERT_FN_TYPE(rmr_unlink, it_rmr_unlink, itapi_rmr_unlink_fn);
ITAPI_ASSERT_FN_TYPE(rmr_query, it_rmr_query, rmr_query_fn);
ITAPI_ASSERT_FN_TYPE(rmr_free, it_rmr_free, rmr_free_fn);

/* Event dispatchers. */
typedef it_status_t evd_create_fn(it_ia_handle_t, it_event_type_t,
				  it_evd_flags_t, size_t, size_t,
				  it_evd_handle_t, it_evd_handle_t *, int *);
typedef it_status_t evd_wait_fn(it_evd_handle_t, uint64_t, it_event_t *,
				size_t *);
typedef it_status_t evd_dequeue_fn(it_evd_handle_t, it_event_t *);
typedef it_status_t evd_dequeue_n_fn(it_evd_handle_t, int, it_event_t *, int *);
typedef it_status_t evd_post_se_fn(it_evd_handle_t, const void *);
typedef it_status_t evd_modify_fn(it_evd_handle_t, it_evd_param_mask_t,
				  const it_evd_param_t *);
typedef it_status_t evd_query_fn(it_evd_handle_t, it_evd_param_mask_t,
				 it_evd_param_t *);
typedef it_status_t evd_callback_attach_fn(it_evd_handle_t,
					   it_evd_callback_rtn_t, void *);
typedef it_status_t evd_handle_fn(it_evd_handle_t);
typedef void evd_callback_fn(it_evd_handle_t, void *);

ITAPI_ASSERT_FN_TYPE(evd_create, it_evd_create, evd_create_fn);
ITAPI_ASSERT_FN_TYPE(evd_wait, it_evd_wait, evd_wait_fn);
ITAPI_ASSERT_FN_TYPE(evd_dequeue, it_evd_dequeue, evd_dequeue_fn);
ITAPI_ASSERT_FN_TYPE(evd_dequeue_n, it_evd_dequeue_n, evd_dequeue_n_fn);
ITAPI_ASSERT_FN_TYPE(evd_post_se, it_evd_post_se, evd_post_se_fn);
ITAPI_ASSERT_FN_TYPE(evd_modify, it_evd_modify, evd_modify_fn);
ITAPI_ASSERT_FN_TYPE(evd_query, it_evd_query, evd_query_fn);
ITAPI_ASSERT_FN_TYPE(evd_callback_attach, it_evd_callback_attach,
		     evd_callback_attach_fn);
ITAPI_ASSERT_FN_TYPE(evd_callback_detach, it_evd_callback_detach,
		     evd_handle_fn);
ITAPI_ASSERT_FN_TYPE(evd_free, it_evd_free, evd_handle_fn);
ITAPI_BUILD_ASSERT(callback_type,
		   sizeof((evd_callback_fn *)0 == (it_evd_callback_rtn_t)0) ==
			   sizeof(int));

/* Endpoints and connection management. */
typedef it_status_t ep_rc_create_fn(it_pz_handle_t, it_evd_handle_t,
				    it_evd_handle_t, it_evd_handle_t,
				    it_ep_rc_creation_flags_t,
				    const it_ep_attributes_t *,
				    it_ep_handle_t *);
typedef it_status_t ep_ud_create_fn(it_pz_handle_t, it_evd_handle_t,
				    it_evd_handle_t, const it_ep_attributes_t *,
				    size_t, it_ep_handle_t *);
typedef it_status_t ep_query_fn(it_ep_handle_t, it_ep_param_mask_t,
				it_ep_param_t *);
typedef it_status_t ep_modify_fn(it_ep_handle_t, it_ep_param_mask_t,
				 const it_ep_attributes_t *);
typedef it_status_t ep_handle_fn(it_ep_handle_t);
typedef it_status_t listen_create_fn(it_ia_handle_t, size_t, it_evd_handle_t,
				     it_listen_flags_t, it_conn_qual_t *,
				     it_listen_handle_t *);
typedef it_status_t listen_query_fn(it_listen_handle_t, it_listen_param_mask_t,
				    it_listen_param_t *);
typedef it_status_t listen_free_fn(it_listen_handle_t);
typedef it_status_t ep_connect_fn(it_ep_handle_t, const it_path_t *,
				  const it_conn_attributes_t *,
				  const it_conn_qual_t *, it_cn_est_flags_t,
				  const unsigned char *, size_t);
typedef it_status_t ep_accept_fn(it_ep_handle_t, it_cn_est_identifier_t,
				 const unsigned char *, size_t);
typedef it_status_t reject_fn(it_cn_est_identifier_t, const unsigned char *,
			      size_t);
typedef it_status_t handoff_fn(const it_conn_qual_t *, size_t,
			       it_cn_est_identifier_t);
typedef it_status_t ep_disconnect_fn(it_ep_handle_t, const unsigned char *,
				     size_t);
typedef it_status_t socket_convert_fn(int, it_ep_handle_t, it_sc_flags_t,
				      const unsigned char *, size_t);

ITAPI_ASSERT_FN_TYPE(ep_rc_create, it_ep_rc_create, ep_rc_create_fn);
ITAPI_ASSERT_FN_TYPE(ep_ud_create, it_ep_ud_create, ep_ud_create_fn);
ITAPI_ASSERT_FN_TYPE(ep_query, it_ep_query, ep_query_fn);
ITAPI_ASSERT_FN_TYPE(ep_modify, it_ep_modify, ep_modify_fn);
ITAPI_ASSERT_FN_TYPE(ep_reset, it_ep_reset, ep_handle_fn);
ITAPI_ASSERT_FN_TYPE(ep_free, it_ep_free, ep_handle_fn);
ITAPI_ASSERT_FN_TYPE(listen_create, it_listen_create, listen_create_fn);
ITAPI_ASSERT_FN_TYPE(listen_query, it_listen_query, listen_query_fn);
ITAPI_ASSERT_FN_TYPE(listen_free, it_listen_free, listen_free_fn);
ITAPI_ASSERT_FN_TYPE(ep_connect, it_ep_connect, ep_connect_fn);
ITAPI_ASSERT_FN_TYPE(ep_accept, it_ep_accept, ep_accept_fn);
ITAPI_ASSERT_FN_TYPE(reject, it_reject, reject_fn);
ITAPI_ASSERT_FN_TYPE(handoff, it_handoff, handoff_fn);
ITAPI_ASSERT_FN_TYPE(ep_disconnect, it_ep_disconnect, ep_disconnect_fn);
ITAPI_ASSERT_FN_TYPE(socket_convert, it_socket_convert, socket_convert_fn);

/* UD service resolution and address handles. */
typedef it_status_t ud_req_create_fn(const it_conn_qual_t *, it_evd_handle_t,
				     const it_path_t *, const unsigned char *,
				     size_t, it_ud_svc_req_handle_t *);
typedef it_status_t ud_req_handle_fn(it_ud_svc_req_handle_t);
typedef it_status_t ud_req_query_fn(it_ud_svc_req_handle_t,
				    it_ud_svc_req_param_mask_t,
				    it_ud_svc_req_param_t *);
typedef it_status_t ud_reply_fn(it_ud_svc_req_identifier_t,
				it_ud_svc_req_status_t, it_remote_ep_info_t,
				const unsigned char *, size_t);
typedef it_status_t ah_create_fn(it_pz_handle_t, const it_path_t *,
				 it_ah_flags_t, it_addr_handle_t *);
typedef it_status_t ah_modify_fn(it_addr_handle_t, it_addr_param_mask_t,
				 const it_addr_param_t *);
typedef it_status_t ah_query_fn(it_addr_handle_t, it_addr_param_mask_t,
				it_addr_param_t *);
typedef it_status_t ah_free_fn(it_addr_handle_t);

ITAPI_ASSERT_FN_TYPE(ud_req_create, it_ud_service_request_handle_create,
		     ud_req_create_fn);
ITAPI_ASSERT_FN_TYPE(ud_req_free, it_ud_service_request_handle_free,
		     ud_req_handle_fn);
ITAPI_ASSERT_FN_TYPE(ud_req_query, it_ud_service_request_handle_query,
		     ud_req_query_fn);
ITAPI_ASSERT_FN_TYPE(ud_request, it_ud_service_request, ud_req_handle_fn);
ITAPI_ASSERT_FN_TYPE(ud_reply, it_ud_service_reply, ud_reply_fn);
ITAPI_ASSERT_FN_TYPE(ah_create, it_address_handle_create, ah_create_fn);
ITAPI_ASSERT_FN_TYPE(ah_modify, it_address_handle_modify, ah_modify_fn);
ITAPI_ASSERT_FN_TYPE(ah_query, it_address_handle_query, ah_query_fn);
ITAPI_ASSERT_FN_TYPE(ah_free, it_address_handle_free, ah_free_fn);

/* Data transfer. */
typedef it_status_t post_fn(it_ep_handle_t, const it_lmr_triplet_t *, size_t,
			    it_dto_cookie_t, it_dto_flags_t);
typedef it_status_t post_recv_fn(it_handle_t, const it_lmr_triplet_t *, size_t,
				 it_dto_cookie_t, it_dto_flags_t);
typedef it_status_t post_send_and_unlink_fn(it_ep_handle_t,
					    const it_lmr_triplet_t *, size_t,
					    it_dto_cookie_t, it_dto_flags_t,
					    it_rmr_context_t);
typedef it_status_t post_sendto_fn(it_ep_handle_t, const it_lmr_triplet_t *,
				   size_t, it_dto_cookie_t, it_dto_flags_t,
				   const it_dg_remote_ep_addr_t *);
typedef it_status_t post_rdma_fn(it_ep_handle_t, const it_lmr_triplet_t *,
				 size_t, it_dto_cookie_t, it_dto_flags_t,
				 it_rdma_addr_t, it_rmr_context_t);
typedef it_status_t post_rdma_read_to_rmr_fn(it_ep_handle_t,
					     const it_rmr_triplet_t *, size_t,
					     it_dto_cookie_t, it_dto_flags_t,
					     it_rdma_addr_t, it_rmr_context_t);
typedef it_status_t post_atomic_fn(it_ep_handle_t, it_atomic_op_t, uint64_t,
				   uint64_t, const it_lmr_triplet_t *,
				   it_dto_cookie_t, it_dto_flags_t,
				   it_rdma_addr_t, it_rmr_context_t);

ITAPI_ASSERT_FN_TYPE(post_send, it_post_send, post_fn);
ITAPI_ASSERT_FN_TYPE(post_send_and_unlink, it_post_send_and_unlink,
		     post_send_and_unlink_fn);
ITAPI_ASSERT_FN_TYPE(post_sendto, it_post_sendto, post_sendto_fn);
ITAPI_ASSERT_FN_TYPE(post_recv, it_post_recv, post_recv_fn);
ITAPI_ASSERT_FN_TYPE(post_recvfrom, it_post_recvfrom, post_fn);
ITAPI_ASSERT_FN_TYPE(post_rdma_read, it_post_rdma_read, post_rdma_fn);
ITAPI_ASSERT_FN_TYPE(post_rdma_read_to_rmr, it_post_rdma_read_to_rmr,
		     post_rdma_read_to_rmr_fn);
ITAPI_ASSERT_FN_TYPE(post_rdma_write, it_post_rdma_write, post_rdma_fn);
ITAPI_ASSERT_FN_TYPE(post_atomic, it_post_atomic, post_atomic_fn);

/* Shared receive queues and generic handle calls. */
typedef it_status_t srq_create_fn(it_pz_handle_t, size_t, size_t,
				  it_srq_handle_t *);
typedef it_status_t srq_modify_fn(it_srq_handle_t, it_srq_param_mask_t,
				  const it_srq_param_t *);
typedef it_status_t srq_query_fn(it_srq_handle_t, it_srq_param_mask_t,
				 it_srq_param_t *);
typedef it_status_t srq_free_fn(it_srq_handle_t);
typedef it_status_t get_consumer_context_fn(it_handle_t, it_context_t *);
typedef it_status_t set_consumer_context_fn(it_handle_t, it_context_t);
typedef it_status_t get_handle_type_fn(it_handle_t, it_handle_type_enum_t *);

ITAPI_ASSERT_FN_TYPE(srq_create, it_srq_create, srq_create_fn);
ITAPI_ASSERT_FN_TYPE(srq_modify, it_srq_modify, srq_modify_fn);
ITAPI_ASSERT_FN_TYPE(srq_query, it_srq_query, srq_query_fn);
ITAPI_ASSERT_FN_TYPE(srq_free, it_srq_free, srq_free_fn);
ITAPI_ASSERT_FN_TYPE(get_consumer_context, it_get_consumer_context,
		     get_consumer_context_fn);
ITAPI_ASSERT_FN_TYPE(set_consumer_context, it_set_consumer_context,
		     set_consumer_context_fn);
ITAPI_ASSERT_FN_TYPE(get_handle_type, it_get_handle_type, get_handle_type_fn);

/*
 * The list of the standard's functions, each spelled once: the count is
 * the test that none was dropped from the checks above.
 */
#define ITAPI_FN(fn)                                   \
	{                                              \
		.name = #fn, .ptr_size = sizeof(&(fn)) \
	}

static const struct {
	const char *name;
	size_t ptr_size;
} functions[] = {
	ITAPI_FN(it_interface_list),
	ITAPI_FN(it_ia_create),
	ITAPI_FN(it_ia_free),
	ITAPI_FN(it_ia_query),
	ITAPI_FN(it_ia_info_free),
	ITAPI_FN(it_get_pathinfo),
	ITAPI_FN(it_convert_net_addr),
	ITAPI_FN(it_make_rdma_addr_absolute),
	ITAPI_FN(it_make_rdma_addr_relative),
	ITAPI_FN(it_hton64),
	ITAPI_FN(it_ntoh64),
	ITAPI_FN(it_pz_create),
	ITAPI_FN(it_pz_query),
	ITAPI_FN(it_pz_free),
	ITAPI_FN(it_lmr_create10),
	ITAPI_FN(it_lmr_create20),
	ITAPI_FN(it_lmr_create21),
	ITAPI_FN(it_lmr_create_unlinked),
	ITAPI_FN(it_lmr_link),
	ITAPI_FN(it_lmr_unlink),
	ITAPI_FN(it_lmr_modify),
	ITAPI_FN(it_lmr_query),
	ITAPI_FN(it_lmr_free),
	ITAPI_FN(it_lmr_flush_to_mem),
	ITAPI_FN(it_lmr_refresh_from_mem),
	ITAPI_FN(it_mem_map),
	ITAPI_FN(it_mem_unmap),
	ITAPI_FN(it_rmr_create10),
	ITAPI_FN(it_rmr_create20),
	ITAPI_FN(it_rmr_bind10),
	ITAPI_FN(it_rmr_link),
	ITAPI_FN(it_rmr_unlink),
	ITAPI_FN(it_rmr_query),
	ITAPI_FN(it_rmr_free),
	ITAPI_FN(it_evd_create),
	ITAPI_FN(it_evd_wait),
	ITAPI_FN(it_evd_dequeue),
	ITAPI_FN(it_evd_dequeue_n),
	ITAPI_FN(it_evd_post_se),
	ITAPI_FN(it_evd_modify),
	ITAPI_FN(it_evd_query),
	ITAPI_FN(it_evd_callback_attach),
	ITAPI_FN(it_evd_callback_detach),
	ITAPI_FN(it_evd_free),
	ITAPI_FN(it_ep_rc_create),
	ITAPI_FN(it_ep_ud_create),
	ITAPI_FN(it_ep_query),
	ITAPI_FN(it_ep_modify),
	ITAPI_FN(it_ep_reset),
	ITAPI_FN(it_ep_free),
	ITAPI_FN(it_listen_create),
	ITAPI_FN(it_listen_query),
	ITAPI_FN(it_listen_free),
	ITAPI_FN(it_ep_connect),
	ITAPI_FN(it_ep_accept),
	ITAPI_FN(it_reject),
	ITAPI_FN(it_handoff),
	ITAPI_FN(it_ep_disconnect),
	ITAPI_FN(it_socket_convert),
	ITAPI_FN(it_ud_service_request_handle_create),
	ITAPI_FN(it_ud_service_request_handle_free),
	ITAPI_FN(it_ud_service_request_handle_query),
	ITAPI_FN(it_ud_service_request),
	ITAPI_FN(it_ud_service_reply),
	ITAPI_FN(it_address_handle_create),
	ITAPI_FN(it_address_handle_modify),
	ITAPI_FN(it_address_handle_query),
	ITAPI_FN(it_address_handle_free),
	ITAPI_FN(it_post_send),
	ITAPI_FN(it_post_send_and_unlink),
	ITAPI_FN(it_post_sendto),
	ITAPI_FN(it_post_recv),
	ITAPI_FN(it_post_recvfrom),
	ITAPI_FN(it_post_rdma_read),
	ITAPI_FN(it_post_rdma_read_to_rmr),
	ITAPI_FN(it_post_rdma_write),
	ITAPI_FN(it_post_atomic),
	ITAPI_FN(it_srq_create),
	ITAPI_FN(it_srq_modify),
	ITAPI_FN(it_srq_query),
	ITAPI_FN(it_srq_free),
	ITAPI_FN(it_get_consumer_context),
	ITAPI_FN(it_set_consumer_context),
	ITAPI_FN(it_get_handle_type),
};

Test(itapi_signatures, all_functions_declared)
{
	size_t i, j;

	/* 83 functions of the standard plus the it_evd_dequeue_n extension. */
	cr_assert_eq(ITAPI_ARRAY_SIZE(functions), 84);
	for (i = 0; i < ITAPI_ARRAY_SIZE(functions); i++) {
		cr_expect_gt(functions[i].ptr_size, 0);
		cr_expect_eq(strncmp(functions[i].name, "it_", 3), 0, "%s",
			     functions[i].name);
		for (j = 0; j < i; j++)
			cr_expect_str_neq(functions[i].name, functions[j].name);
	}
}
