/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * DAT 2.0 user-level API (uDAPL): the header DAT programs include.
 *
 * It adds to the common part (dat.h) what only user space has: CNOs
 * (consumer notification objects), waiting on EVDs, memory registration
 * by virtual address, and the IA and provider attributes.
 *
 * Compatibility promise and differences from DAPL 2.1: dat_headers(7).
 */
#ifndef _UDAT_H_
#define _UDAT_H_

#include <dat2/udat_config.h>
#include <dat2/dat_platform_specific.h>
#include <dat2/dat.h>
#include <dat2/udat_vendor_specific.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ EVD, CNO */

typedef DAT_HANDLE DAT_CNO_HANDLE;

/*
 * Three independent sub-states, one bit group each.  CONFIG_THRESHOLD
 * (0x30) overlaps the other two CONFIG bits: that is its defined value.
 */
typedef enum dat_evd_state {
	DAT_EVD_STATE_ENABLED = 0x01,
	DAT_EVD_STATE_DISABLED = 0x02,
	DAT_EVD_STATE_WAITABLE = 0x04,
	DAT_EVD_STATE_UNWAITABLE = 0x08,
	DAT_EVD_STATE_CONFIG_NOTIFY = 0x10,
	DAT_EVD_STATE_CONFIG_SOLICITED = 0x20,
	DAT_EVD_STATE_CONFIG_THRESHOLD = 0x30
} DAT_EVD_STATE;

struct dat_evd_param {
	DAT_IA_HANDLE ia_handle;
	DAT_COUNT evd_qlen;
	DAT_EVD_STATE evd_state;
	DAT_CNO_HANDLE cno_handle;
	DAT_EVD_FLAGS evd_flags;
};

/* dat_ia_open(): use the IA's existing async EVD instead of a new one. */
#define DAT_EVD_ASYNC_EXISTS ((DAT_EVD_HANDLE)0x1)
/* dat_cno_wait(): the CNO fired but the EVD is no longer known. */
#define DAT_EVD_OUT_OF_SCOPE ((DAT_EVD_HANDLE)0x2)

/* A CNO's OS wait proxy: called with its instance data and the EVD. */
typedef void (*DAT_AGENT_FUNC)(DAT_PVOID instance_data,
			       DAT_EVD_HANDLE evd_handle);

typedef struct dat_os_wait_proxy_agent {
	DAT_PVOID instance_data;
	DAT_AGENT_FUNC proxy_agent_func;
} DAT_OS_WAIT_PROXY_AGENT;

/*
 * "No proxy agent", by value.  A macro, not an object: programs #undef it
 * and declare their own.
 */
#ifdef __cplusplus
#define DAT_OS_WAIT_PROXY_AGENT_NULL (DAT_OS_WAIT_PROXY_AGENT())
#else
#define DAT_OS_WAIT_PROXY_AGENT_NULL \
	((DAT_OS_WAIT_PROXY_AGENT){ (DAT_PVOID)NULL, (DAT_AGENT_FUNC)NULL })
#endif

typedef enum dat_proxy_type {
	DAT_PROXY_TYPE_NONE = 0x0,
	DAT_PROXY_TYPE_AGENT = 0x1,
	DAT_PROXY_TYPE_FD = 0x2
} DAT_PROXY_TYPE;

typedef struct dat_cno_param {
	DAT_IA_HANDLE ia_handle;
	DAT_PROXY_TYPE proxy_type;
	union {
		DAT_OS_WAIT_PROXY_AGENT agent;
		DAT_FD fd;
		DAT_PVOID none;
	} proxy;
} DAT_CNO_PARAM;

/* Not one bit per field: these are the defined values. */
typedef enum dat_cno_param_mask {
	DAT_CNO_FIELD_IA_HANDLE = 0x1,
	DAT_CNO_FIELD_PROXY_TYPE = 0x2,
	DAT_CNO_FIELD_PROXY = 0x3,
	DAT_CNO_FIELD_ALL = 0x4
} DAT_CNO_PARAM_MASK;

/* ------------------------------------------------------------ LMR */

typedef enum dat_mem_type {
	DAT_MEM_TYPE_VIRTUAL = 0x00, /* a virtual address range */
	DAT_MEM_TYPE_LMR = 0x01, /* the memory of another LMR */
	DAT_MEM_TYPE_SHARED_VIRTUAL = 0x02 /* shared between processes */
} DAT_MEM_TYPE;

/* Names the memory that processes share for DAT_MEM_TYPE_SHARED_VIRTUAL. */
#define DAT_LMR_COOKIE_SIZE 40
typedef char (*DAT_LMR_COOKIE)[DAT_LMR_COOKIE_SIZE];

typedef struct dat_shared_memory {
	DAT_PVOID virtual_address;
	DAT_LMR_COOKIE shared_memory_id;
} DAT_SHARED_MEMORY;

/* The region dat_lmr_create() registers; which member depends on type. */
typedef union dat_region_description {
	DAT_PVOID for_va;
	DAT_LMR_HANDLE for_lmr_handle;
	DAT_SHARED_MEMORY for_shared_memory;
} DAT_REGION_DESCRIPTION;

struct dat_lmr_param {
	DAT_IA_HANDLE ia_handle;
	DAT_MEM_TYPE mem_type;
	DAT_REGION_DESCRIPTION region_desc;
	DAT_VLEN length;
	DAT_PZ_HANDLE pz_handle;
	DAT_MEM_PRIV_FLAGS mem_priv;
	DAT_VA_TYPE va_type;
	DAT_LMR_CONTEXT lmr_context;
	DAT_RMR_CONTEXT rmr_context;
	DAT_VLEN registered_size;
	DAT_VADDR registered_address;
};

/* ------------------------------------------------------------ attributes */

/* Limits and identity of an interface adapter (dat_ia_query()). */
struct dat_ia_attr {
	char adapter_name[DAT_NAME_MAX_LENGTH];
	char vendor_name[DAT_NAME_MAX_LENGTH];
	DAT_UINT32 hardware_version_major;
	DAT_UINT32 hardware_version_minor;
	DAT_UINT32 firmware_version_major;
	DAT_UINT32 firmware_version_minor;
	DAT_IA_ADDRESS_PTR ia_address_ptr;
	DAT_COUNT max_eps;
	DAT_COUNT max_dto_per_ep;
	DAT_COUNT max_rdma_read_per_ep_in;
	DAT_COUNT max_rdma_read_per_ep_out;
	DAT_COUNT max_evds;
	DAT_COUNT max_evd_qlen;
	DAT_COUNT max_iov_segments_per_dto;
	DAT_COUNT max_lmrs;
	DAT_SEG_LENGTH max_lmr_block_size;
	DAT_VADDR max_lmr_virtual_address;
	DAT_COUNT max_pzs;
	DAT_SEG_LENGTH max_message_size;
	DAT_SEG_LENGTH max_rdma_size;
	DAT_COUNT max_rmrs;
	DAT_VADDR max_rmr_target_address;
	DAT_COUNT max_srqs;
	DAT_COUNT max_ep_per_srq;
	DAT_COUNT max_recv_per_srq;
	DAT_COUNT max_iov_segments_per_rdma_read;
	DAT_COUNT max_iov_segments_per_rdma_write;
	DAT_COUNT max_rdma_read_in;
	DAT_COUNT max_rdma_read_out;
	DAT_BOOLEAN max_rdma_read_per_ep_in_guaranteed;
	DAT_BOOLEAN max_rdma_read_per_ep_out_guaranteed;
	DAT_BOOLEAN zb_supported;
	DAT_EXTENSION extension_supported;
	DAT_COUNT extension_version;
	DAT_COUNT num_transport_attr;
	DAT_NAMED_ATTR *transport_attr;
	DAT_COUNT num_vendor_attr;
	DAT_NAMED_ATTR *vendor_attr;
};

typedef enum dat_pz_support { DAT_PZ_UNIQUE, DAT_PZ_SHAREABLE } DAT_PZ_SUPPORT;

/*
 * What the provider behind an IA supports (dat_ia_query()).
 * evd_stream_merging_supported[i][j] says whether streams i and j may feed
 * one EVD; the index follows the DAT_EVD_*_FLAG bits: 0 software, 1 CR,
 * 2 DTO, 3 connection, 4 RMR bind, 5 async.
 */
struct dat_provider_attr {
	char provider_name[DAT_NAME_MAX_LENGTH];
	DAT_UINT32 provider_version_major;
	DAT_UINT32 provider_version_minor;
	DAT_UINT32 dapl_version_major;
	DAT_UINT32 dapl_version_minor;
	DAT_MEM_TYPE lmr_mem_types_supported;
	DAT_IOV_OWNERSHIP iov_ownership_on_return;
	DAT_QOS dat_qos_supported;
	DAT_COMPLETION_FLAGS completion_flags_supported;
	DAT_BOOLEAN is_thread_safe;
	DAT_COUNT max_private_data_size;
	DAT_BOOLEAN supports_multipath;
	DAT_EP_CREATOR_FOR_PSP ep_creator;
	DAT_PZ_SUPPORT pz_support;
	DAT_UINT32 optimal_buffer_alignment;
	const DAT_BOOLEAN evd_stream_merging_supported[6][6];
	DAT_BOOLEAN srq_supported;
	DAT_COUNT srq_watermarks_supported;
	DAT_BOOLEAN srq_ep_pz_difference_supported;
	DAT_COUNT srq_info_supported;
	DAT_COUNT ep_recv_info_supported;
	DAT_BOOLEAN lmr_sync_req;
	DAT_BOOLEAN dto_async_return_guaranteed;
	DAT_BOOLEAN rdma_write_for_rdma_read_req;
	DAT_BOOLEAN rdma_read_lmr_rmr_context_exposure;
	DAT_RMR_SCOPE rmr_scope_supported;
	DAT_BOOLEAN is_signal_safe;
	DAT_BOOLEAN ha_supported;
	DAT_HA_LB ha_loadbalancing;
	DAT_COUNT num_provider_specific_attr;
	DAT_NAMED_ATTR *provider_specific_attr;
};

#define DAT_PROVIDER_FIELD_NONE UINT64_C(0x0)
#define DAT_PROVIDER_FIELD_PROVIDER_NAME UINT64_C(0x00000001)
#define DAT_PROVIDER_FIELD_PROVIDER_VERSION_MAJOR UINT64_C(0x00000002)
#define DAT_PROVIDER_FIELD_PROVIDER_VERSION_MINOR UINT64_C(0x00000004)
#define DAT_PROVIDER_FIELD_DAPL_VERSION_MAJOR UINT64_C(0x00000008)
#define DAT_PROVIDER_FIELD_DAPL_VERSION_MINOR UINT64_C(0x00000010)
#define DAT_PROVIDER_FIELD_LMR_MEM_TYPE_SUPPORTED UINT64_C(0x00000020)
#define DAT_PROVIDER_FIELD_IOV_OWNERSHIP UINT64_C(0x00000040)
#define DAT_PROVIDER_FIELD_DAT_QOS_SUPPORTED UINT64_C(0x00000080)
#define DAT_PROVIDER_FIELD_COMPLETION_FLAGS_SUPPORTED UINT64_C(0x00000100)
#define DAT_PROVIDER_FIELD_IS_THREAD_SAFE UINT64_C(0x00000200)
#define DAT_PROVIDER_FIELD_MAX_PRIVATE_DATA_SIZE UINT64_C(0x00000400)
#define DAT_PROVIDER_FIELD_SUPPORTS_MULTIPATH UINT64_C(0x00000800)
#define DAT_PROVIDER_FIELD_EP_CREATOR UINT64_C(0x00001000)
#define DAT_PROVIDER_FIELD_PZ_SUPPORT UINT64_C(0x00002000)
#define DAT_PROVIDER_FIELD_OPTIMAL_BUFFER_ALIGNMENT UINT64_C(0x00004000)
#define DAT_PROVIDER_FIELD_EVD_STREAM_MERGING_SUPPORTED UINT64_C(0x00008000)
#define DAT_PROVIDER_FIELD_SRQ_SUPPORTED UINT64_C(0x00010000)
#define DAT_PROVIDER_FIELD_SRQ_WATERMARKS_SUPPORTED UINT64_C(0x00020000)
#define DAT_PROVIDER_FIELD_SRQ_EP_PZ_DIFFERENCE_SUPPORTED UINT64_C(0x00040000)
#define DAT_PROVIDER_FIELD_SRQ_INFO_SUPPORTED UINT64_C(0x00080000)
#define DAT_PROVIDER_FIELD_EP_RECV_INFO_SUPPORTED UINT64_C(0x00100000)
#define DAT_PROVIDER_FIELD_LMR_SYNC_REQ UINT64_C(0x00200000)
#define DAT_PROVIDER_FIELD_DTO_ASYNC_RETURN_GUARANTEED UINT64_C(0x00400000)
#define DAT_PROVIDER_FIELD_RDMA_WRITE_FOR_RDMA_READ_REQ UINT64_C(0x00800000)
#define DAT_PROVIDER_FIELD_RDMA_READ_LMR_RMR_CONTEXT_EXPOSURE \
	UINT64_C(0x01000000)
#define DAT_PROVIDER_FIELD_RMR_SCOPE_SUPPORTED UINT64_C(0x02000000)
#define DAT_PROVIDER_FIELD_IS_SIGNAL_SAFE UINT64_C(0x04000000)
#define DAT_PROVIDER_FIELD_HA_SUPPORTED UINT64_C(0x08000000)
#define DAT_PROVIDER_FIELD_HA_LB UINT64_C(0x10000000)
#define DAT_PROVIDER_FIELD_NUM_PROVIDER_SPECIFIC_ATTR UINT64_C(0x20000000)
#define DAT_PROVIDER_FIELD_PROVIDER_SPECIFIC_ATTR UINT64_C(0x40000000)
#define DAT_PROVIDER_FIELD_ALL UINT64_C(0x7FFFFFFF)

/* ------------------------------------------------------------ calls */

extern DAT_RETURN
dat_lmr_create(DAT_IA_HANDLE ia_handle, DAT_MEM_TYPE mem_type,
	       DAT_REGION_DESCRIPTION region_description, DAT_VLEN length,
	       DAT_PZ_HANDLE pz_handle, DAT_MEM_PRIV_FLAGS privileges,
	       DAT_VA_TYPE va_type, DAT_LMR_HANDLE *lmr_handle,
	       DAT_LMR_CONTEXT *lmr_context, DAT_RMR_CONTEXT *rmr_context,
	       DAT_VLEN *registered_length, DAT_VADDR *registered_address);
extern DAT_RETURN dat_lmr_query(DAT_LMR_HANDLE lmr_handle,
				DAT_LMR_PARAM_MASK lmr_param_mask,
				DAT_LMR_PARAM *lmr_param);

extern DAT_RETURN dat_evd_create(DAT_IA_HANDLE ia_handle,
				 DAT_COUNT evd_min_qlen,
				 DAT_CNO_HANDLE cno_handle,
				 DAT_EVD_FLAGS evd_flags,
				 DAT_EVD_HANDLE *evd_handle);
extern DAT_RETURN dat_evd_modify_cno(DAT_EVD_HANDLE evd_handle,
				     DAT_CNO_HANDLE cno_handle);
extern DAT_RETURN dat_evd_enable(DAT_EVD_HANDLE evd_handle);
extern DAT_RETURN dat_evd_disable(DAT_EVD_HANDLE evd_handle);
extern DAT_RETURN dat_evd_wait(DAT_EVD_HANDLE evd_handle, DAT_TIMEOUT timeout,
			       DAT_COUNT threshold, DAT_EVENT *event,
			       DAT_COUNT *n_more_events);
extern DAT_RETURN dat_evd_set_unwaitable(DAT_EVD_HANDLE evd_handle);
extern DAT_RETURN dat_evd_clear_unwaitable(DAT_EVD_HANDLE evd_handle);

extern DAT_RETURN dat_cno_create(DAT_IA_HANDLE ia_handle,
				 DAT_OS_WAIT_PROXY_AGENT agent,
				 DAT_CNO_HANDLE *cno_handle);
extern DAT_RETURN dat_cno_modify_agent(DAT_CNO_HANDLE cno_handle,
				       DAT_OS_WAIT_PROXY_AGENT agent);
extern DAT_RETURN dat_cno_query(DAT_CNO_HANDLE cno_handle,
				DAT_CNO_PARAM_MASK cno_param_mask,
				DAT_CNO_PARAM *cno_param);
extern DAT_RETURN dat_cno_free(DAT_CNO_HANDLE cno_handle);
extern DAT_RETURN dat_cno_wait(DAT_CNO_HANDLE cno_handle, DAT_TIMEOUT timeout,
			       DAT_EVD_HANDLE *evd_handle);
extern DAT_RETURN dat_cno_fd_create(DAT_IA_HANDLE ia_handle, DAT_FD *fd,
				    DAT_CNO_HANDLE *cno_handle);
extern DAT_RETURN dat_cno_trigger(DAT_CNO_HANDLE cno_handle,
				  DAT_EVD_HANDLE *evd_handle);

#ifdef __cplusplus
}
#endif

#endif /* _UDAT_H_ */
