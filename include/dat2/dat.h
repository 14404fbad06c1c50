/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * DAT 2.0: the types and calls that uDAPL and kDAPL share.
 *
 * Programs include <dat2/udat.h>, which includes this file.  Every layout
 * and value here is fixed by the DAT 2.0 binary interface as DAPL 2.1
 * ships it; dat_headers(7) lists the few deliberate differences.
 */
#ifndef _DAT_H_
#define _DAT_H_

#include <dat2/udat_config.h>
#include <dat2/dat_platform_specific.h>
#include <dat2/dat_error.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ basics */

typedef char *DAT_NAME_PTR; /* IA, provider and attribute names */
#define DAT_NAME_MAX_LENGTH 256

/* Free-form name/value attribute, as in the IA and provider attributes. */
typedef struct dat_named_attr {
	const char *name;
	const char *value;
} DAT_NAMED_ATTR;

typedef enum dat_boolean { DAT_FALSE = 0, DAT_TRUE = 1 } DAT_BOOLEAN;

#ifdef DAT_EXTENSIONS
/* Values of DAT_IA_ATTR.extension_supported, as plain numbers. */
#define DAT_IB_EXTENSION 1
#define DAT_IW_EXTENSION 2
#endif

/* High-availability load balancing (DAT_PROVIDER_ATTR.ha_loadbalancing). */
typedef DAT_UINT32 DAT_HA_LB;
#define DAT_HA_LB_NONE ((DAT_HA_LB)0)
#define DAT_HA_LB_INTERCOMM ((DAT_HA_LB)1)
#define DAT_HA_LB_INTRACOMM ((DAT_HA_LB)2)

/* Consumer data attached to handles and returned in completions. */
typedef union dat_context {
	DAT_PVOID as_ptr;
	DAT_UINT64 as_64;
	DAT_UVERYLONG as_index;
} DAT_CONTEXT;

typedef DAT_CONTEXT DAT_DTO_COOKIE;
typedef DAT_CONTEXT DAT_RMR_COOKIE;

typedef enum dat_completion_flags {
	DAT_COMPLETION_DEFAULT_FLAG = 0x00,
	/* no event when the operation succeeds */
	DAT_COMPLETION_SUPPRESS_FLAG = 0x01,
	/* the receiver is woken only if the sender asks (solicited event) */
	DAT_COMPLETION_SOLICITED_WAIT_FLAG = 0x02,
	/* the event is queued but does not wake a waiter */
	DAT_COMPLETION_UNSIGNALLED_FLAG = 0x04,
	/* start only after earlier RDMA reads have completed */
	DAT_COMPLETION_BARRIER_FENCE_FLAG = 0x08,
	/* receive attribute: the dat_evd_wait() threshold decides wake-ups */
	DAT_COMPLETION_EVD_THRESHOLD_FLAG = 0x10,
	/* kDAPL: LMR invalidation waits for earlier requests */
	DAT_COMPLETION_LMR_INVALIDATE_FENCE_FLAG = 0x20
} DAT_COMPLETION_FLAGS;

typedef DAT_UINT32 DAT_TIMEOUT; /* microseconds */
#define DAT_TIMEOUT_INFINITE ((DAT_TIMEOUT)~0)

/* ------------------------------------------------------------ handles */

/*
 * Every handle except the IA handle points to an object whose first word
 * is its DAT_PROVIDER (see dat_redirection.h); the IA handle libdat2
 * returns is its own index.
 */
typedef DAT_PVOID DAT_HANDLE;
typedef DAT_HANDLE DAT_CR_HANDLE;
typedef DAT_HANDLE DAT_EP_HANDLE;
typedef DAT_HANDLE DAT_EVD_HANDLE;
typedef DAT_HANDLE DAT_IA_HANDLE;
typedef DAT_HANDLE DAT_LMR_HANDLE;
typedef DAT_HANDLE DAT_PSP_HANDLE;
typedef DAT_HANDLE DAT_PZ_HANDLE;
typedef DAT_HANDLE DAT_RMR_HANDLE;
typedef DAT_HANDLE DAT_RSP_HANDLE;
typedef DAT_HANDLE DAT_SRQ_HANDLE;
typedef DAT_HANDLE DAT_CSP_HANDLE;

#define DAT_HANDLE_NULL ((DAT_HANDLE)NULL)

/* What dat_get_handle_type() reports. */
typedef enum dat_handle_type {
	DAT_HANDLE_TYPE_CR,
	DAT_HANDLE_TYPE_EP,
	DAT_HANDLE_TYPE_EVD,
	DAT_HANDLE_TYPE_IA,
	DAT_HANDLE_TYPE_LMR,
	DAT_HANDLE_TYPE_PSP,
	DAT_HANDLE_TYPE_PZ,
	DAT_HANDLE_TYPE_RMR,
	DAT_HANDLE_TYPE_RSP,
	DAT_HANDLE_TYPE_CNO,
	DAT_HANDLE_TYPE_SRQ,
	DAT_HANDLE_TYPE_CSP
#ifdef DAT_EXTENSIONS
	,
	DAT_HANDLE_TYPE_EXTENSION_BASE
#endif
} DAT_HANDLE_TYPE;

/* The operation a DTO completion reports. */
typedef enum dat_dtos {
	DAT_DTO_SEND,
	DAT_DTO_RDMA_WRITE,
	DAT_DTO_RDMA_READ,
	DAT_DTO_RECEIVE,
	DAT_DTO_RECEIVE_WITH_INVALIDATE,
	DAT_DTO_BIND_MW, /* RMR binds may complete as DTO events */
	DAT_DTO_LMR_FMR, /* kDAPL */
	DAT_DTO_LMR_INVALIDATE /* kDAPL */
#ifdef DAT_EXTENSIONS
	,
	DAT_DTO_EXTENSION_BASE /* first extension operation */
#endif
} DAT_DTOS;

/* ------------------------------------------------------------ addressing */

typedef DAT_SOCK_ADDR *DAT_IA_ADDRESS_PTR;
typedef DAT_UINT64 DAT_CONN_QUAL; /* service point "port" */
typedef DAT_UINT64 DAT_PORT_QUAL;

typedef enum dat_qos {
	DAT_QOS_BEST_EFFORT = 0x00,
	DAT_QOS_HIGH_THROUGHPUT = 0x01,
	DAT_QOS_LOW_LATENCY = 0x02,
	DAT_QOS_ECONOMY = 0x04, /* neither of the two above */
	DAT_QOS_PREMIUM = 0x08 /* both */
} DAT_QOS;

/* The old name of DAT_CONNECT_MULTIPATH_FLAG; both name the same value. */
#define DAT_CONNECT_MULTIPATH_REQUESTED_FLAG DAT_CONNECT_MULTIPATH_FLAG

typedef enum dat_connect_flags {
	DAT_CONNECT_DEFAULT_FLAG = 0x00,
	DAT_CONNECT_MULTIPATH_FLAG = 0x01,
	DAT_CONNECT_MULTIPATH_REQUIRED_FLAG = 0x02
} DAT_CONNECT_FLAGS;

typedef enum dat_close_flags {
	DAT_CLOSE_ABRUPT_FLAG = 0x00,
	DAT_CLOSE_GRACEFUL_FLAG = 0x01
} DAT_CLOSE_FLAGS;

#define DAT_CLOSE_DEFAULT DAT_CLOSE_ABRUPT_FLAG

/* The event streams an EVD takes. */
typedef enum dat_evd_flags {
	DAT_EVD_SOFTWARE_FLAG = 0x001,
	DAT_EVD_CR_FLAG = 0x010,
	DAT_EVD_DTO_FLAG = 0x020,
	DAT_EVD_CONNECTION_FLAG = 0x040,
	DAT_EVD_RMR_BIND_FLAG = 0x080,
	DAT_EVD_ASYNC_FLAG = 0x100,
	DAT_EVD_DEFAULT_FLAG = 0x1F0 /* all provider streams, no software */
#ifdef DAT_EXTENSIONS
	,
	DAT_EVD_EXTENSION_BASE = 0x200
#endif
} DAT_EVD_FLAGS;

typedef enum dat_psp_flags {
	DAT_PSP_CONSUMER_FLAG = 0x00, /* the consumer supplies the EP */
	DAT_PSP_PROVIDER_FLAG = 0x01 /* the provider creates one per CR */
} DAT_PSP_FLAGS;

/* ------------------------------------------------------------ memory */

typedef DAT_UINT32 DAT_LMR_CONTEXT; /* local key */
typedef DAT_UINT32 DAT_RMR_CONTEXT; /* remote key */

typedef DAT_UINT64 DAT_VLEN;
typedef DAT_UINT64 DAT_VADDR;
typedef DAT_UINT32 DAT_SEG_LENGTH; /* one data segment */

/* Defined in udat.h; the common calls take them by pointer. */
typedef struct dat_provider_attr DAT_PROVIDER_ATTR;
typedef struct dat_evd_param DAT_EVD_PARAM;
typedef struct dat_lmr_param DAT_LMR_PARAM;
typedef struct dat_ia_attr DAT_IA_ATTR;

/* One local segment of a DTO: address and length within an LMR. */
typedef struct dat_lmr_triplet {
	DAT_VADDR virtual_address;
	DAT_SEG_LENGTH segment_length; /* may be 0 */
	DAT_LMR_CONTEXT lmr_context;
} DAT_LMR_TRIPLET;

/* One remote segment of an RDMA operation. */
typedef struct dat_rmr_triplet {
	DAT_VADDR virtual_address;
	DAT_SEG_LENGTH segment_length;
	DAT_RMR_CONTEXT rmr_context;
} DAT_RMR_TRIPLET;

typedef enum dat_mem_priv_flags {
	DAT_MEM_PRIV_NONE_FLAG = 0x00,
	DAT_MEM_PRIV_LOCAL_READ_FLAG = 0x01,
	DAT_MEM_PRIV_REMOTE_READ_FLAG = 0x02,
	DAT_MEM_PRIV_LOCAL_WRITE_FLAG = 0x10,
	DAT_MEM_PRIV_REMOTE_WRITE_FLAG = 0x20,
	DAT_MEM_PRIV_ALL_FLAG = 0x33
#ifdef DAT_EXTENSIONS
	,
	DAT_MEM_PRIV_EXTENSION_BASE = 0x40
#endif
} DAT_MEM_PRIV_FLAGS;

/* DAT 1.0 names: read and write meant local and remote together. */
#define DAT_MEM_PRIV_READ_FLAG \
	(DAT_MEM_PRIV_LOCAL_READ_FLAG | DAT_MEM_PRIV_REMOTE_READ_FLAG)
#define DAT_MEM_PRIV_WRITE_FLAG \
	(DAT_MEM_PRIV_LOCAL_WRITE_FLAG | DAT_MEM_PRIV_REMOTE_WRITE_FLAG)

/* How remote addresses into an LMR or RMR are expressed. */
typedef enum dat_va_type {
	DAT_VA_TYPE_VA = 0x0, /* virtual addresses */
	DAT_VA_TYPE_ZB = 0x1 /* offsets from the region's start */
} DAT_VA_TYPE;

typedef enum dat_rmr_scope {
	DAT_RMR_SCOPE_EP, /* bound to at most one EP at a time */
	DAT_RMR_SCOPE_PZ, /* usable by any EP of the PZ */
	DAT_RMR_SCOPE_ANY
} DAT_RMR_SCOPE;

typedef struct dat_rmr_param {
	DAT_IA_HANDLE ia_handle;
	DAT_PZ_HANDLE pz_handle;
	DAT_LMR_TRIPLET lmr_triplet;
	DAT_MEM_PRIV_FLAGS mem_priv;
	DAT_RMR_CONTEXT rmr_context;
	DAT_RMR_SCOPE rmr_scope;
	DAT_VA_TYPE va_type;
} DAT_RMR_PARAM;

typedef enum dat_rmr_param_mask {
	DAT_RMR_FIELD_IA_HANDLE = 0x01,
	DAT_RMR_FIELD_PZ_HANDLE = 0x02,
	DAT_RMR_FIELD_LMR_TRIPLET = 0x04,
	DAT_RMR_FIELD_MEM_PRIV = 0x08,
	DAT_RMR_FIELD_RMR_CONTEXT = 0x10,
	DAT_RMR_FIELD_RMR_SCOPE = 0x20,
	DAT_RMR_FIELD_VA_TYPE = 0x40,
	DAT_RMR_FIELD_ALL = 0x7F
} DAT_RMR_PARAM_MASK;

/* Fields of DAT_LMR_PARAM (udat.h) that dat_lmr_query() fills. */
typedef enum dat_lmr_param_mask {
	DAT_LMR_FIELD_IA_HANDLE = 0x001,
	DAT_LMR_FIELD_MEM_TYPE = 0x002,
	DAT_LMR_FIELD_REGION_DESC = 0x004,
	DAT_LMR_FIELD_LENGTH = 0x008,
	DAT_LMR_FIELD_PZ_HANDLE = 0x010,
	DAT_LMR_FIELD_MEM_PRIV = 0x020,
	DAT_LMR_FIELD_VA_TYPE = 0x040,
	DAT_LMR_FIELD_LMR_CONTEXT = 0x080,
	DAT_LMR_FIELD_RMR_CONTEXT = 0x100,
	DAT_LMR_FIELD_REGISTERED_SIZE = 0x200,
	DAT_LMR_FIELD_REGISTERED_ADDRESS = 0x400,
	DAT_LMR_FIELD_ALL = 0x7FF
} DAT_LMR_PARAM_MASK;

/* ------------------------------------------------------------ IA, provider */

/* Who owns an IOV handed to a DTO once the call returns. */
typedef enum dat_iov_ownership {
	DAT_IOV_CONSUMER = 0x0, /* the consumer, at once */
	DAT_IOV_PROVIDER_NOMOD = 0x1, /* the provider, read only */
	DAT_IOV_PROVIDER_MOD = 0x2 /* the provider, may change it */
} DAT_IOV_OWNERSHIP;

typedef enum dat_ep_creator_for_psp {
	DAT_PSP_CREATES_EP_NEVER,
	DAT_PSP_CREATES_EP_IFASKED,
	DAT_PSP_CREATES_EP_ALWAYS
} DAT_EP_CREATOR_FOR_PSP;

typedef enum dat_extension {
	DAT_EXTENSION_NONE,
	DAT_EXTENSION_IB,
	DAT_EXTENSION_IW
} DAT_EXTENSION;

/*
 * Older names of DAT_IA_ATTR fields and masks.  The two lower-case ones
 * rename any identifier spelt that way, as they always have.  (DAPL maps
 * DAT_IA_FIELD_IA_MAX_DTO_PER_OP to a name that does not exist.)
 */
#define max_rdma_read_per_ep max_rdma_read_per_ep_in
#define max_mtu_size max_message_size
#define DAT_IA_FIELD_IA_MAX_DTO_PER_OP DAT_IA_FIELD_IA_MAX_DTO_PER_EP
#define DAT_IA_FIELD_IA_MAX_MTU_SIZE DAT_IA_FIELD_IA_MAX_MESSAGE_SIZE
#define DAT_IA_ALL DAT_IA_FIELD_ALL

/* Which DAT_IA_ATTR fields dat_ia_query() fills; one bit per field. */
typedef DAT_UINT64 DAT_IA_ATTR_MASK;
#define DAT_IA_FIELD_NONE UINT64_C(0x0)
#define DAT_IA_FIELD_IA_ADAPTER_NAME UINT64_C(0x000000001)
#define DAT_IA_FIELD_IA_VENDOR_NAME UINT64_C(0x000000002)
#define DAT_IA_FIELD_IA_HARDWARE_MAJOR_VERSION UINT64_C(0x000000004)
#define DAT_IA_FIELD_IA_HARDWARE_MINOR_VERSION UINT64_C(0x000000008)
#define DAT_IA_FIELD_IA_FIRMWARE_MAJOR_VERSION UINT64_C(0x000000010)
#define DAT_IA_FIELD_IA_FIRMWARE_MINOR_VERSION UINT64_C(0x000000020)
#define DAT_IA_FIELD_IA_ADDRESS_PTR UINT64_C(0x000000040)
#define DAT_IA_FIELD_IA_MAX_EPS UINT64_C(0x000000080)
#define DAT_IA_FIELD_IA_MAX_DTO_PER_EP UINT64_C(0x000000100)
#define DAT_IA_FIELD_IA_MAX_RDMA_READ_PER_EP_IN UINT64_C(0x000000200)
#define DAT_IA_FIELD_IA_MAX_RDMA_READ_PER_EP_OUT UINT64_C(0x000000400)
#define DAT_IA_FIELD_IA_MAX_EVDS UINT64_C(0x000000800)
#define DAT_IA_FIELD_IA_MAX_EVD_QLEN UINT64_C(0x000001000)
#define DAT_IA_FIELD_IA_MAX_IOV_SEGMENTS_PER_DTO UINT64_C(0x000002000)
#define DAT_IA_FIELD_IA_MAX_LMRS UINT64_C(0x000004000)
#define DAT_IA_FIELD_IA_MAX_LMR_BLOCK_SIZE UINT64_C(0x000008000)
#define DAT_IA_FIELD_IA_MAX_LMR_VIRTUAL_ADDRESS UINT64_C(0x000010000)
#define DAT_IA_FIELD_IA_MAX_PZS UINT64_C(0x000020000)
#define DAT_IA_FIELD_IA_MAX_MESSAGE_SIZE UINT64_C(0x000040000)
#define DAT_IA_FIELD_IA_MAX_RDMA_SIZE UINT64_C(0x000080000)
#define DAT_IA_FIELD_IA_MAX_RMRS UINT64_C(0x000100000)
#define DAT_IA_FIELD_IA_MAX_RMR_TARGET_ADDRESS UINT64_C(0x000200000)
#define DAT_IA_FIELD_IA_MAX_SRQS UINT64_C(0x000400000)
#define DAT_IA_FIELD_IA_MAX_EP_PER_SRQ UINT64_C(0x000800000)
#define DAT_IA_FIELD_IA_MAX_RECV_PER_SRQ UINT64_C(0x001000000)
#define DAT_IA_FIELD_IA_MAX_IOV_SEGMENTS_PER_RDMA_READ UINT64_C(0x002000000)
#define DAT_IA_FIELD_IA_MAX_IOV_SEGMENTS_PER_RDMA_WRITE UINT64_C(0x004000000)
#define DAT_IA_FIELD_IA_MAX_RDMA_READ_IN UINT64_C(0x008000000)
#define DAT_IA_FIELD_IA_MAX_RDMA_READ_OUT UINT64_C(0x010000000)
#define DAT_IA_FIELD_IA_MAX_RDMA_READ_PER_EP_IN_GUARANTEED UINT64_C(0x020000000)
#define DAT_IA_FIELD_IA_MAX_RDMA_READ_PER_EP_OUT_GUARANTEED \
	UINT64_C(0x040000000)
#define DAT_IA_FIELD_IA_ZB_SUPPORTED UINT64_C(0x080000000)
/* extension_supported has two names for one bit */
#define DAT_IA_FIELD_IA_EXTENSIONS_SUPPORTED UINT64_C(0x100000000)
#define DAT_IA_FIELD_IA_EXTENSION UINT64_C(0x100000000)
#define DAT_IA_FIELD_IA_EXTENSION_VERSION UINT64_C(0x200000000)
#define DAT_IA_FIELD_IA_NUM_TRANSPORT_ATTR UINT64_C(0x400000000)
#define DAT_IA_FIELD_IA_TRANSPORT_ATTR UINT64_C(0x800000000)
#define DAT_IA_FIELD_IA_NUM_VENDOR_ATTR UINT64_C(0x1000000000)
#define DAT_IA_FIELD_IA_VENDOR_ATTR UINT64_C(0x2000000000)
#define DAT_IA_FIELD_ALL UINT64_C(0x3FFFFFFFFF)

/* Which DAT_PROVIDER_ATTR fields dat_ia_query() fills (udat.h). */
typedef DAT_UINT64 DAT_PROVIDER_ATTR_MASK;

/* ------------------------------------------------------------ endpoints */

typedef enum dat_service_type {
	DAT_SERVICE_TYPE_RC /* reliable connection */
#ifdef DAT_EXTENSIONS
	,
	DAT_SERVICE_TYPE_EXTENSION_BASE
#endif
} DAT_SERVICE_TYPE;

typedef struct dat_ep_attr {
	DAT_SERVICE_TYPE service_type;
	DAT_SEG_LENGTH max_message_size;
	DAT_SEG_LENGTH max_rdma_size;
	DAT_QOS qos;
	DAT_COMPLETION_FLAGS recv_completion_flags;
	DAT_COMPLETION_FLAGS request_completion_flags;
	DAT_COUNT max_recv_dtos;
	DAT_COUNT max_request_dtos;
	DAT_COUNT max_recv_iov;
	DAT_COUNT max_request_iov;
	DAT_COUNT max_rdma_read_in;
	DAT_COUNT max_rdma_read_out;
	DAT_COUNT srq_soft_hw;
	DAT_COUNT max_rdma_read_iov;
	DAT_COUNT max_rdma_write_iov;
	DAT_COUNT ep_transport_specific_count;
	DAT_NAMED_ATTR *ep_transport_specific;
	DAT_COUNT ep_provider_specific_count;
	DAT_NAMED_ATTR *ep_provider_specific;
} DAT_EP_ATTR;

/* The old name of the state a broken connection leaves. */
#define DAT_EP_STATE_ERROR DAT_EP_STATE_DISCONNECTED

typedef enum dat_ep_state {
	DAT_EP_STATE_UNCONNECTED, /* idle, ready to connect */
	DAT_EP_STATE_UNCONFIGURED_UNCONNECTED,
	DAT_EP_STATE_RESERVED,
	DAT_EP_STATE_UNCONFIGURED_RESERVED,
	DAT_EP_STATE_PASSIVE_CONNECTION_PENDING,
	DAT_EP_STATE_UNCONFIGURED_PASSIVE,
	DAT_EP_STATE_ACTIVE_CONNECTION_PENDING,
	DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING,
	DAT_EP_STATE_UNCONFIGURED_TENTATIVE,
	DAT_EP_STATE_CONNECTED,
	DAT_EP_STATE_DISCONNECT_PENDING,
	DAT_EP_STATE_DISCONNECTED,
	DAT_EP_STATE_COMPLETION_PENDING,
	DAT_EP_STATE_CONNECTED_SINGLE_PATH,
	DAT_EP_STATE_CONNECTED_MULTI_PATH
} DAT_EP_STATE;

typedef struct dat_ep_param {
	DAT_IA_HANDLE ia_handle;
	DAT_EP_STATE ep_state;
	DAT_COMM comm;
	DAT_IA_ADDRESS_PTR local_ia_address_ptr;
	DAT_PORT_QUAL local_port_qual;
	DAT_IA_ADDRESS_PTR remote_ia_address_ptr;
	DAT_PORT_QUAL remote_port_qual;
	DAT_PZ_HANDLE pz_handle;
	DAT_EVD_HANDLE recv_evd_handle;
	DAT_EVD_HANDLE request_evd_handle;
	DAT_EVD_HANDLE connect_evd_handle;
	DAT_SRQ_HANDLE srq_handle;
	DAT_EP_ATTR ep_attr;
} DAT_EP_PARAM;

/* Fields of DAT_EP_PARAM; bits from 0x1000 select DAT_EP_ATTR fields. */
typedef DAT_UINT64 DAT_EP_PARAM_MASK;
#define DAT_EP_FIELD_IA_HANDLE UINT64_C(0x00000001)
#define DAT_EP_FIELD_EP_STATE UINT64_C(0x00000002)
#define DAT_EP_FIELD_COMM UINT64_C(0x00000004)
#define DAT_EP_FIELD_LOCAL_IA_ADDRESS_PTR UINT64_C(0x00000008)
#define DAT_EP_FIELD_LOCAL_PORT_QUAL UINT64_C(0x00000010)
#define DAT_EP_FIELD_REMOTE_IA_ADDRESS_PTR UINT64_C(0x00000020)
#define DAT_EP_FIELD_REMOTE_PORT_QUAL UINT64_C(0x00000040)
#define DAT_EP_FIELD_PZ_HANDLE UINT64_C(0x00000080)
#define DAT_EP_FIELD_RECV_EVD_HANDLE UINT64_C(0x00000100)
#define DAT_EP_FIELD_REQUEST_EVD_HANDLE UINT64_C(0x00000200)
#define DAT_EP_FIELD_CONNECT_EVD_HANDLE UINT64_C(0x00000400)
#define DAT_EP_FIELD_SRQ_HANDLE UINT64_C(0x00000800)
#define DAT_EP_FIELD_EP_ATTR_SERVICE_TYPE UINT64_C(0x00001000)
#define DAT_EP_FIELD_EP_ATTR_MAX_MESSAGE_SIZE UINT64_C(0x00002000)
#define DAT_EP_FIELD_EP_ATTR_MAX_RDMA_SIZE UINT64_C(0x00004000)
#define DAT_EP_FIELD_EP_ATTR_QOS UINT64_C(0x00008000)
#define DAT_EP_FIELD_EP_ATTR_RECV_COMPLETION_FLAGS UINT64_C(0x00010000)
#define DAT_EP_FIELD_EP_ATTR_REQUEST_COMPLETION_FLAGS UINT64_C(0x00020000)
#define DAT_EP_FIELD_EP_ATTR_MAX_RECV_DTOS UINT64_C(0x00040000)
#define DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_DTOS UINT64_C(0x00080000)
#define DAT_EP_FIELD_EP_ATTR_MAX_RECV_IOV UINT64_C(0x00100000)
#define DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_IOV UINT64_C(0x00200000)
#define DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_IN UINT64_C(0x00400000)
#define DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_OUT UINT64_C(0x00800000)
#define DAT_EP_FIELD_EP_ATTR_SRQ_SOFT_HW UINT64_C(0x01000000)
#define DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_IOV UINT64_C(0x02000000)
#define DAT_EP_FIELD_EP_ATTR_MAX_RDMA_WRITE_IOV UINT64_C(0x04000000)
#define DAT_EP_FIELD_EP_ATTR_NUM_TRANSPORT_ATTR UINT64_C(0x08000000)
#define DAT_EP_FIELD_EP_ATTR_TRANSPORT_SPECIFIC_ATTR UINT64_C(0x10000000)
#define DAT_EP_FIELD_EP_ATTR_NUM_PROVIDER_ATTR UINT64_C(0x20000000)
#define DAT_EP_FIELD_EP_ATTR_PROVIDER_SPECIFIC_ATTR UINT64_C(0x40000000)
#define DAT_EP_FIELD_EP_ATTR_ALL UINT64_C(0x7FFFF000)
#define DAT_EP_FIELD_ALL UINT64_C(0x7FFFFFFF)

/* Watermark values for dat_ep_set_watermark() and DAT_SRQ_ATTR. */
#define DAT_WATERMARK_INFINITE ((DAT_COUNT)~0)
#define DAT_HW_DEFAULT DAT_WATERMARK_INFINITE
#define DAT_SRQ_LW_DEFAULT 0x0

/* ------------------------------------------------------------ SRQ */

typedef enum dat_srq_state {
	DAT_SRQ_STATE_ERROR,
	DAT_SRQ_STATE_OPERATIONAL,
	DAT_SRQ_STATE_SHUTDOWN
} DAT_SRQ_STATE;

/* A count the provider cannot report (DAT_SRQ_PARAM). */
#define DAT_VALUE_UNKNOWN (((DAT_COUNT)~0) - 1)

typedef struct dat_srq_attr {
	DAT_COUNT max_recv_dtos;
	DAT_COUNT max_recv_iov;
	DAT_COUNT low_watermark;
} DAT_SRQ_ATTR;

typedef struct dat_srq_param {
	DAT_IA_HANDLE ia_handle;
	DAT_SRQ_STATE srq_state;
	DAT_PZ_HANDLE pz_handle;
	DAT_COUNT max_recv_dtos;
	DAT_COUNT max_recv_iov;
	DAT_COUNT low_watermark;
	DAT_COUNT available_dto_count;
	DAT_COUNT outstanding_dto_count;
} DAT_SRQ_PARAM;

typedef enum dat_srq_param_mask {
	DAT_SRQ_FIELD_IA_HANDLE = 0x001,
	DAT_SRQ_FIELD_SRQ_STATE = 0x002,
	DAT_SRQ_FIELD_PZ_HANDLE = 0x004,
	DAT_SRQ_FIELD_MAX_RECV_DTO = 0x008,
	DAT_SRQ_FIELD_MAX_RECV_IOV = 0x010,
	DAT_SRQ_FIELD_LOW_WATERMARK = 0x020,
	DAT_SRQ_FIELD_AVAILABLE_DTO_COUNT = 0x040,
	DAT_SRQ_FIELD_OUTSTANDING_DTO_COUNT = 0x080,
	DAT_SRQ_FIELD_ALL = 0x0FF
} DAT_SRQ_PARAM_MASK;

/* ------------------------------------------------------------ PZ */

typedef struct dat_pz_param {
	DAT_IA_HANDLE ia_handle;
} DAT_PZ_PARAM;

typedef enum dat_pz_param_mask {
	DAT_PZ_FIELD_IA_HANDLE = 0x01,
	DAT_PZ_FIELD_ALL = 0x01
} DAT_PZ_PARAM_MASK;

/* ------------------------------------------------------------ service points */

/* Public service point: listens on a connection qualifier. */
typedef struct dat_psp_param {
	DAT_IA_HANDLE ia_handle;
	DAT_CONN_QUAL conn_qual;
	DAT_EVD_HANDLE evd_handle;
	DAT_PSP_FLAGS psp_flags;
} DAT_PSP_PARAM;

typedef enum dat_psp_param_mask {
	DAT_PSP_FIELD_IA_HANDLE = 0x01,
	DAT_PSP_FIELD_CONN_QUAL = 0x02,
	DAT_PSP_FIELD_EVD_HANDLE = 0x04,
	DAT_PSP_FIELD_PSP_FLAGS = 0x08,
	DAT_PSP_FIELD_ALL = 0x0F
} DAT_PSP_PARAM_MASK;

/* Reserved service point: one connection request, for one EP. */
typedef struct dat_rsp_param {
	DAT_IA_HANDLE ia_handle;
	DAT_CONN_QUAL conn_qual;
	DAT_EVD_HANDLE evd_handle;
	DAT_EP_HANDLE ep_handle;
} DAT_RSP_PARAM;

typedef enum dat_rsp_param_mask {
	DAT_RSP_FIELD_IA_HANDLE = 0x01,
	DAT_RSP_FIELD_CONN_QUAL = 0x02,
	DAT_RSP_FIELD_EVD_HANDLE = 0x04,
	DAT_RSP_FIELD_EP_HANDLE = 0x08,
	DAT_RSP_FIELD_ALL = 0x0F
} DAT_RSP_PARAM_MASK;

/* Common service point (DAT 2.0): listens on a socket-style address. */
typedef struct dat_csp_param {
	DAT_IA_HANDLE ia_handle;
	DAT_COMM *comm;
	DAT_IA_ADDRESS_PTR address_ptr;
	DAT_EVD_HANDLE evd_handle;
} DAT_CSP_PARAM;

typedef enum dat_csp_param_mask {
	DAT_CSP_FIELD_IA_HANDLE = 0x01,
	DAT_CSP_FIELD_COMM = 0x02,
	DAT_CSP_FIELD_IA_ADDRESS = 0x04,
	DAT_CSP_FIELD_EVD_HANDLE = 0x08,
	DAT_CSP_FIELD_ALL = 0x0F
} DAT_CSP_PARAM_MASK;

/* ------------------------------------------------------------ connection requests */

typedef struct dat_cr_param {
	DAT_IA_ADDRESS_PTR remote_ia_address_ptr;
	DAT_PORT_QUAL remote_port_qual;
	DAT_COUNT private_data_size;
	DAT_PVOID private_data;
	/* the only EP that may accept: an RSP's, or a PSP-created one */
	DAT_EP_HANDLE local_ep_handle;
} DAT_CR_PARAM;

typedef enum dat_cr_param_mask {
	DAT_CR_FIELD_REMOTE_IA_ADDRESS_PTR = 0x01,
	DAT_CR_FIELD_REMOTE_PORT_QUAL = 0x02,
	DAT_CR_FIELD_PRIVATE_DATA_SIZE = 0x04,
	DAT_CR_FIELD_PRIVATE_DATA = 0x08,
	DAT_CR_FIELD_LOCAL_EP_HANDLE = 0x10,
	DAT_CR_FIELD_ALL = 0x1F
} DAT_CR_PARAM_MASK;

/* ------------------------------------------------------------ events */

/* Older names of two completion statuses. */
#define DAT_DTO_LENGTH_ERROR DAT_DTO_ERR_LOCAL_LENGTH
#define DAT_DTO_FAILURE DAT_DTO_ERR_FLUSHED

typedef enum dat_dto_completion_status {
	DAT_DTO_SUCCESS = 0,
	DAT_DTO_ERR_FLUSHED = 1,
	DAT_DTO_ERR_LOCAL_LENGTH = 2,
	DAT_DTO_ERR_LOCAL_EP = 3,
	DAT_DTO_ERR_LOCAL_PROTECTION = 4,
	DAT_DTO_ERR_BAD_RESPONSE = 5,
	DAT_DTO_ERR_REMOTE_ACCESS = 6,
	DAT_DTO_ERR_REMOTE_RESPONDER = 7,
	DAT_DTO_ERR_TRANSPORT = 8,
	DAT_DTO_ERR_RECEIVER_NOT_READY = 9,
	DAT_DTO_ERR_PARTIAL_PACKET = 10,
	DAT_RMR_OPERATION_FAILED = 11,
	DAT_DTO_ERR_LOCAL_MM_ERROR = 12 /* kDAPL */
} DAT_DTO_COMPLETION_STATUS;

/* RMR binds complete with the DTO statuses. */
#define DAT_RMR_BIND_COMPLETION_STATUS DAT_DTO_COMPLETION_STATUS
#define DAT_RMR_BIND_SUCCESS DAT_DTO_SUCCESS
#define DAT_RMR_BIND_FAILURE DAT_DTO_ERR_FLUSHED

/*
 * DTO completion.  transfered_length (sic) is valid only on success,
 * rmr_context only for a receive that invalidated one.
 */
typedef struct dat_dto_completion_event_data {
	DAT_EP_HANDLE ep_handle;
	DAT_DTO_COOKIE user_cookie;
	DAT_DTO_COMPLETION_STATUS status;
	DAT_SEG_LENGTH transfered_length;
	DAT_DTOS operation;
	DAT_RMR_CONTEXT rmr_context;
} DAT_DTO_COMPLETION_EVENT_DATA;

typedef struct dat_rmr_bind_completion_event_data {
	DAT_RMR_HANDLE rmr_handle;
	DAT_RMR_COOKIE user_cookie;
	DAT_RMR_BIND_COMPLETION_STATUS status;
} DAT_RMR_BIND_COMPLETION_EVENT_DATA;

typedef union dat_sp_handle {
	DAT_RSP_HANDLE rsp_handle;
	DAT_PSP_HANDLE psp_handle;
	DAT_CSP_HANDLE csp_handle;
} DAT_SP_HANDLE;

/*
 * A connection request arrived.  sp_handle is DAT_HANDLE_NULL for an RSP,
 * which the request consumed; truncate_flag says the private data did not
 * fit.
 */
typedef struct dat_cr_arrival_event_data {
	DAT_SP_HANDLE sp_handle;
	DAT_IA_ADDRESS_PTR local_ia_address_ptr;
	DAT_CONN_QUAL conn_qual;
	DAT_CR_HANDLE cr_handle;
	DAT_BOOLEAN truncate_flag;
} DAT_CR_ARRIVAL_EVENT_DATA;

typedef struct dat_connection_event_data {
	DAT_EP_HANDLE ep_handle;
	DAT_COUNT private_data_size;
	DAT_PVOID private_data;
} DAT_CONNECTION_EVENT_DATA;

/*
 * Asynchronous error.  dat_handle is the object concerned (the IA for
 * errors affecting no single object); reason is one of the per-object
 * reasons below.
 */
typedef struct dat_asynch_error_event_data {
	DAT_HANDLE dat_handle;
	DAT_COUNT reason;
} DAT_ASYNCH_ERROR_EVENT_DATA;

typedef enum ia_async_error_reason {
	DAT_IA_CATASTROPHIC_ERROR,
	DAT_IA_OTHER_ERROR
} DAT_IA_ASYNC_ERROR_REASON;

typedef enum ep_async_error_reason {
	DAT_EP_TRANSFER_TO_ERROR,
	DAT_EP_OTHER_ERROR,
	DAT_SRQ_SOFT_HIGH_WATERMARK_EVENT
} DAT_EP_ASYNC_ERROR_REASON;

typedef enum evd_async_error_reason {
	DAT_EVD_OVERFLOW_ERROR,
	DAT_EVD_OTHER_ERROR
} DAT_EVD_ASYNC_ERROR_REASON;

typedef enum srq_async_error_reason {
	DAT_SRQ_TRANSFER_TO_ERROR,
	DAT_SRQ_OTHER_ERROR,
	DAT_SRQ_LOW_WATERMARK_EVENT
} DAT_SRQ_ASYNC_ERROR_REASON;

typedef enum lmr_async_error_reason {
	DAT_LMR_OTHER_ERROR
} DAT_LMR_ASYNC_ERROR_REASON;

typedef enum rmr_async_error_reason {
	DAT_RMR_OTHER_ERROR
} DAT_RMR_ASYNC_ERROR_REASON;

typedef enum pz_async_error_reason {
	DAT_PZ_OTHER_ERROR
} DAT_PZ_ASYNC_ERROR_REASON;

typedef struct dat_software_event_data {
	DAT_PVOID pointer;
} DAT_SOFTWARE_EVENT_DATA;

/* The high bits name the stream, the low bits the event. */
typedef enum dat_event_number {
	DAT_DTO_COMPLETION_EVENT = 0x00001,
	DAT_RMR_BIND_COMPLETION_EVENT = 0x01001,
	DAT_CONNECTION_REQUEST_EVENT = 0x02001,
	DAT_CONNECTION_EVENT_ESTABLISHED = 0x04001,
	DAT_CONNECTION_EVENT_PEER_REJECTED = 0x04002,
	DAT_CONNECTION_EVENT_NON_PEER_REJECTED = 0x04003,
	DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR = 0x04004,
	DAT_CONNECTION_EVENT_DISCONNECTED = 0x04005,
	DAT_CONNECTION_EVENT_BROKEN = 0x04006,
	DAT_CONNECTION_EVENT_TIMED_OUT = 0x04007,
	DAT_CONNECTION_EVENT_UNREACHABLE = 0x04008,
	DAT_ASYNC_ERROR_EVD_OVERFLOW = 0x08001,
	DAT_ASYNC_ERROR_IA_CATASTROPHIC = 0x08002,
	DAT_ASYNC_ERROR_EP_BROKEN = 0x08003,
	DAT_ASYNC_ERROR_TIMED_OUT = 0x08004,
	DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR = 0x08005,
	DAT_HA_DOWN_TO_1 = 0x08101,
	DAT_HA_UP_TO_MULTI_PATH = 0x08102,
	DAT_SOFTWARE_EVENT = 0x10001
#ifdef DAT_EXTENSIONS
	,
	DAT_EXTENSION_EVENT = 0x20000,
	DAT_IB_EXTENSION_RANGE_BASE = 0x40000,
	DAT_IW_EXTENSION_RANGE_BASE = 0x80000
#endif
} DAT_EVENT_NUMBER;

typedef union dat_event_data {
	DAT_DTO_COMPLETION_EVENT_DATA dto_completion_event_data;
	DAT_RMR_BIND_COMPLETION_EVENT_DATA rmr_completion_event_data;
	DAT_CR_ARRIVAL_EVENT_DATA cr_arrival_event_data;
	DAT_CONNECTION_EVENT_DATA connect_event_data;
	DAT_ASYNCH_ERROR_EVENT_DATA asynch_error_event_data;
	DAT_SOFTWARE_EVENT_DATA software_event_data;
} DAT_EVENT_DATA;

/* One event.  Extensions put their own data in event_extension_data. */
typedef struct dat_event {
	DAT_EVENT_NUMBER event_number;
	DAT_EVD_HANDLE evd_handle;
	DAT_EVENT_DATA event_data;
	DAT_UINT64 event_extension_data[8];
} DAT_EVENT;

/* A registry entry: what dat_registry_list_providers() returns. */
typedef struct dat_provider_info {
	char ia_name[DAT_NAME_MAX_LENGTH];
	DAT_UINT32 dapl_version_major;
	DAT_UINT32 dapl_version_minor;
	DAT_BOOLEAN is_thread_safe;
} DAT_PROVIDER_INFO;

/* Fields of DAT_EVD_PARAM (udat.h) that dat_evd_query() fills. */
typedef enum dat_evd_param_mask {
	DAT_EVD_FIELD_IA_HANDLE = 0x01,
	DAT_EVD_FIELD_EVD_QLEN = 0x02,
	DAT_EVD_FIELD_EVD_STATE = 0x04,
	DAT_EVD_FIELD_CNO = 0x08,
	DAT_EVD_FIELD_EVD_FLAGS = 0x10,
	DAT_EVD_FIELD_ALL = 0x1F
} DAT_EVD_PARAM_MASK;

/* ------------------------------------------------------------ calls */

/* Interface adapter.  dat_ia_open() asks for this header's DAT version. */
extern DAT_RETURN dat_ia_openv(const DAT_NAME_PTR name,
			       DAT_COUNT async_evd_min_qlen,
			       DAT_EVD_HANDLE *async_evd_handle,
			       DAT_IA_HANDLE *ia_handle, DAT_UINT32 dat_major,
			       DAT_UINT32 dat_minor, DAT_BOOLEAN thread_safety);

#define dat_ia_open(name, qlen, async_evd, ia)                             \
	dat_ia_openv((name), (qlen), (async_evd), (ia), DAT_VERSION_MAJOR, \
		     DAT_VERSION_MINOR, DAT_THREADSAFE)

extern DAT_RETURN dat_ia_query(DAT_IA_HANDLE ia_handle,
			       DAT_EVD_HANDLE *async_evd_handle,
			       DAT_IA_ATTR_MASK ia_attr_mask,
			       DAT_IA_ATTR *ia_attr,
			       DAT_PROVIDER_ATTR_MASK provider_attr_mask,
			       DAT_PROVIDER_ATTR *provider_attr);
extern DAT_RETURN dat_ia_close(DAT_IA_HANDLE ia_handle,
			       DAT_CLOSE_FLAGS close_flags);

/* Any handle */
extern DAT_RETURN dat_set_consumer_context(DAT_HANDLE dat_handle,
					   DAT_CONTEXT context);
extern DAT_RETURN dat_get_consumer_context(DAT_HANDLE dat_handle,
					   DAT_CONTEXT *context);
extern DAT_RETURN dat_get_handle_type(DAT_HANDLE dat_handle,
				      DAT_HANDLE_TYPE *handle_type);

/* Connection requests */
extern DAT_RETURN dat_cr_query(DAT_CR_HANDLE cr_handle,
			       DAT_CR_PARAM_MASK cr_param_mask,
			       DAT_CR_PARAM *cr_param);
extern DAT_RETURN dat_cr_accept(DAT_CR_HANDLE cr_handle,
				DAT_EP_HANDLE ep_handle,
				DAT_COUNT private_data_size,
				const DAT_PVOID private_data);
extern DAT_RETURN dat_cr_reject(DAT_CR_HANDLE cr_handle,
				DAT_COUNT private_data_size,
				const DAT_PVOID private_data);
extern DAT_RETURN dat_cr_handoff(DAT_CR_HANDLE cr_handle,
				 DAT_CONN_QUAL handoff);

/* Event dispatchers: the calls kDAPL shares (the rest are in udat.h) */
extern DAT_RETURN dat_evd_resize(DAT_EVD_HANDLE evd_handle,
				 DAT_COUNT evd_min_qlen);
extern DAT_RETURN dat_evd_post_se(DAT_EVD_HANDLE evd_handle,
				  const DAT_EVENT *event);
extern DAT_RETURN dat_evd_dequeue(DAT_EVD_HANDLE evd_handle, DAT_EVENT *event);
extern DAT_RETURN dat_evd_query(DAT_EVD_HANDLE evd_handle,
				DAT_EVD_PARAM_MASK evd_param_mask,
				DAT_EVD_PARAM *evd_param);
extern DAT_RETURN dat_evd_free(DAT_EVD_HANDLE evd_handle);

/* Endpoints */
extern DAT_RETURN
dat_ep_create(DAT_IA_HANDLE ia_handle, DAT_PZ_HANDLE pz_handle,
	      DAT_EVD_HANDLE recv_evd_handle, DAT_EVD_HANDLE request_evd_handle,
	      DAT_EVD_HANDLE connect_evd_handle,
	      const DAT_EP_ATTR *ep_attributes, DAT_EP_HANDLE *ep_handle);
extern DAT_RETURN dat_ep_create_with_srq(
	DAT_IA_HANDLE ia_handle, DAT_PZ_HANDLE pz_handle,
	DAT_EVD_HANDLE recv_evd_handle, DAT_EVD_HANDLE request_evd_handle,
	DAT_EVD_HANDLE connect_evd_handle, DAT_SRQ_HANDLE srq_handle,
	const DAT_EP_ATTR *ep_attributes, DAT_EP_HANDLE *ep_handle);
extern DAT_RETURN dat_ep_query(DAT_EP_HANDLE ep_handle,
			       DAT_EP_PARAM_MASK ep_param_mask,
			       DAT_EP_PARAM *ep_param);
extern DAT_RETURN dat_ep_modify(DAT_EP_HANDLE ep_handle,
				DAT_EP_PARAM_MASK ep_param_mask,
				const DAT_EP_PARAM *ep_param);
extern DAT_RETURN
dat_ep_connect(DAT_EP_HANDLE ep_handle, DAT_IA_ADDRESS_PTR remote_ia_address,
	       DAT_CONN_QUAL remote_conn_qual, DAT_TIMEOUT timeout,
	       DAT_COUNT private_data_size, const DAT_PVOID private_data,
	       DAT_QOS quality_of_service, DAT_CONNECT_FLAGS connect_flags);
extern DAT_RETURN
dat_ep_dup_connect(DAT_EP_HANDLE ep_handle, DAT_EP_HANDLE ep_dup_handle,
		   DAT_TIMEOUT timeout, DAT_COUNT private_data_size,
		   const DAT_PVOID private_data, DAT_QOS quality_of_service);
extern DAT_RETURN dat_ep_common_connect(DAT_EP_HANDLE ep_handle,
					DAT_IA_ADDRESS_PTR remote_ia_address,
					DAT_TIMEOUT timeout,
					DAT_COUNT private_data_size,
					const DAT_PVOID private_data);
extern DAT_RETURN dat_ep_disconnect(DAT_EP_HANDLE ep_handle,
				    DAT_CLOSE_FLAGS close_flags);
extern DAT_RETURN dat_ep_post_send(DAT_EP_HANDLE ep_handle,
				   DAT_COUNT num_segments,
				   DAT_LMR_TRIPLET *local_iov,
				   DAT_DTO_COOKIE user_cookie,
				   DAT_COMPLETION_FLAGS completion_flags);
extern DAT_RETURN dat_ep_post_send_with_invalidate(
	DAT_EP_HANDLE ep_handle, DAT_COUNT num_segments,
	DAT_LMR_TRIPLET *local_iov, DAT_DTO_COOKIE user_cookie,
	DAT_COMPLETION_FLAGS completion_flags, DAT_BOOLEAN invalidate_flag,
	DAT_RMR_CONTEXT rmr_context);
extern DAT_RETURN dat_ep_post_recv(DAT_EP_HANDLE ep_handle,
				   DAT_COUNT num_segments,
				   DAT_LMR_TRIPLET *local_iov,
				   DAT_DTO_COOKIE user_cookie,
				   DAT_COMPLETION_FLAGS completion_flags);
extern DAT_RETURN dat_ep_post_rdma_read(DAT_EP_HANDLE ep_handle,
					DAT_COUNT num_segments,
					DAT_LMR_TRIPLET *local_iov,
					DAT_DTO_COOKIE user_cookie,
					const DAT_RMR_TRIPLET *remote_iov,
					DAT_COMPLETION_FLAGS completion_flags);
extern DAT_RETURN dat_ep_post_rdma_read_to_rmr(
	DAT_EP_HANDLE ep_handle, const DAT_RMR_TRIPLET *local_iov,
	DAT_DTO_COOKIE user_cookie, const DAT_RMR_TRIPLET *remote_iov,
	DAT_COMPLETION_FLAGS completion_flags);
extern DAT_RETURN dat_ep_post_rdma_write(DAT_EP_HANDLE ep_handle,
					 DAT_COUNT num_segments,
					 DAT_LMR_TRIPLET *local_iov,
					 DAT_DTO_COOKIE user_cookie,
					 const DAT_RMR_TRIPLET *remote_iov,
					 DAT_COMPLETION_FLAGS completion_flags);
extern DAT_RETURN dat_ep_get_status(DAT_EP_HANDLE ep_handle,
				    DAT_EP_STATE *ep_state,
				    DAT_BOOLEAN *recv_idle,
				    DAT_BOOLEAN *request_idle);
extern DAT_RETURN dat_ep_free(DAT_EP_HANDLE ep_handle);
extern DAT_RETURN dat_ep_reset(DAT_EP_HANDLE ep_handle);
extern DAT_RETURN dat_ep_recv_query(DAT_EP_HANDLE ep_handle,
				    DAT_COUNT *nbufs_allocated,
				    DAT_COUNT *bufs_alloc_span);
extern DAT_RETURN dat_ep_set_watermark(DAT_EP_HANDLE ep_handle,
				       DAT_COUNT soft_high_watermark,
				       DAT_COUNT hard_high_watermark);

/* Memory: dat_lmr_create() and dat_lmr_query() are in udat.h */
extern DAT_RETURN dat_lmr_free(DAT_LMR_HANDLE lmr_handle);
extern DAT_RETURN dat_lmr_sync_rdma_read(DAT_IA_HANDLE ia_handle,
					 const DAT_LMR_TRIPLET *local_segments,
					 DAT_VLEN num_segments);
extern DAT_RETURN dat_lmr_sync_rdma_write(DAT_IA_HANDLE ia_handle,
					  const DAT_LMR_TRIPLET *local_segments,
					  DAT_VLEN num_segments);
extern DAT_RETURN dat_rmr_create(DAT_PZ_HANDLE pz_handle,
				 DAT_RMR_HANDLE *rmr_handle);
extern DAT_RETURN dat_rmr_create_for_ep(DAT_PZ_HANDLE pz_handle,
					DAT_RMR_HANDLE *rmr_handle);
extern DAT_RETURN dat_rmr_query(DAT_RMR_HANDLE rmr_handle,
				DAT_RMR_PARAM_MASK rmr_param_mask,
				DAT_RMR_PARAM *rmr_param);
extern DAT_RETURN
dat_rmr_bind(DAT_RMR_HANDLE rmr_handle, DAT_LMR_HANDLE lmr_handle,
	     const DAT_LMR_TRIPLET *lmr_triplet, DAT_MEM_PRIV_FLAGS mem_priv,
	     DAT_VA_TYPE va_type, DAT_EP_HANDLE ep_handle,
	     DAT_RMR_COOKIE user_cookie, DAT_COMPLETION_FLAGS completion_flags,
	     DAT_RMR_CONTEXT *rmr_context);
extern DAT_RETURN dat_rmr_free(DAT_RMR_HANDLE rmr_handle);

/* Service points */
extern DAT_RETURN dat_psp_create(DAT_IA_HANDLE ia_handle,
				 DAT_CONN_QUAL conn_qual,
				 DAT_EVD_HANDLE evd_handle,
				 DAT_PSP_FLAGS psp_flags,
				 DAT_PSP_HANDLE *psp_handle);
extern DAT_RETURN dat_psp_create_any(DAT_IA_HANDLE ia_handle,
				     DAT_CONN_QUAL *conn_qual,
				     DAT_EVD_HANDLE evd_handle,
				     DAT_PSP_FLAGS psp_flags,
				     DAT_PSP_HANDLE *psp_handle);
extern DAT_RETURN dat_psp_query(DAT_PSP_HANDLE psp_handle,
				DAT_PSP_PARAM_MASK psp_param_mask,
				DAT_PSP_PARAM *psp_param);
extern DAT_RETURN dat_psp_free(DAT_PSP_HANDLE psp_handle);
extern DAT_RETURN dat_rsp_create(DAT_IA_HANDLE ia_handle,
				 DAT_CONN_QUAL conn_qual,
				 DAT_EP_HANDLE ep_handle,
				 DAT_EVD_HANDLE evd_handle,
				 DAT_RSP_HANDLE *rsp_handle);
extern DAT_RETURN dat_rsp_query(DAT_RSP_HANDLE rsp_handle,
				DAT_RSP_PARAM_MASK rsp_param_mask,
				DAT_RSP_PARAM *rsp_param);
extern DAT_RETURN dat_rsp_free(DAT_RSP_HANDLE rsp_handle);
extern DAT_RETURN dat_csp_create(DAT_IA_HANDLE ia_handle, DAT_COMM *comm,
				 DAT_IA_ADDRESS_PTR address,
				 DAT_EVD_HANDLE evd_handle,
				 DAT_CSP_HANDLE *csp_handle);
extern DAT_RETURN dat_csp_query(DAT_CSP_HANDLE csp_handle,
				DAT_CSP_PARAM_MASK csp_param_mask,
				DAT_CSP_PARAM *csp_param);
extern DAT_RETURN dat_csp_free(DAT_CSP_HANDLE csp_handle);

/* Protection zones */
extern DAT_RETURN dat_pz_create(DAT_IA_HANDLE ia_handle,
				DAT_PZ_HANDLE *pz_handle);
extern DAT_RETURN dat_pz_query(DAT_PZ_HANDLE pz_handle,
			       DAT_PZ_PARAM_MASK pz_param_mask,
			       DAT_PZ_PARAM *pz_param);
extern DAT_RETURN dat_pz_free(DAT_PZ_HANDLE pz_handle);

/* Shared receive queues */
extern DAT_RETURN dat_srq_create(DAT_IA_HANDLE ia_handle,
				 DAT_PZ_HANDLE pz_handle,
				 DAT_SRQ_ATTR *srq_attr,
				 DAT_SRQ_HANDLE *srq_handle);
extern DAT_RETURN dat_srq_free(DAT_SRQ_HANDLE srq_handle);
extern DAT_RETURN dat_srq_post_recv(DAT_SRQ_HANDLE srq_handle,
				    DAT_COUNT num_segments,
				    DAT_LMR_TRIPLET *local_iov,
				    DAT_DTO_COOKIE user_cookie);
extern DAT_RETURN dat_srq_query(DAT_SRQ_HANDLE srq_handle,
				DAT_SRQ_PARAM_MASK srq_param_mask,
				DAT_SRQ_PARAM *srq_param);
extern DAT_RETURN dat_srq_resize(DAT_SRQ_HANDLE srq_handle,
				 DAT_COUNT srq_max_recv_dto);
extern DAT_RETURN dat_srq_set_lw(DAT_SRQ_HANDLE srq_handle,
				 DAT_COUNT low_watermark);

#ifdef DAT_EXTENSIONS
/*
 * The one entry point of all extensions (dat_ib_extensions.h).  Operations
 * in these two ranges name a provider instead of passing a handle.
 */
#define DAT_OPEN_EXTENSION_BASE 0x1000
#define DAT_CLOSE_EXTENSION_BASE 0x2000
typedef int DAT_EXTENDED_OP;
extern DAT_RETURN dat_extension_op(DAT_HANDLE handle, DAT_EXTENDED_OP op, ...);
#endif

/* Registry and error text */
extern DAT_RETURN
dat_registry_list_providers(DAT_COUNT max_to_return,
			    DAT_COUNT *entries_returned,
			    DAT_PROVIDER_INFO *(dat_provider_list[]));
extern DAT_RETURN dat_strerror(DAT_RETURN value, const char **major_message,
			       const char **minor_message);

#ifdef __cplusplus
}
#endif

#endif /* _DAT_H_ */
