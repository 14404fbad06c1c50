/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * IT-API 2.1, the Interconnect Transport API of The Open Group (ICSC), as
 * OpenRDMA implements it.
 *
 * Type names, member names, constant values and prototypes are the
 * standard's, so that IT-API programs build unchanged.  The header is plain
 * C (C99 and later) and also compiles as C++.  it_api(7) lists what it
 * holds, the version bindings, the one extension (it_evd_dequeue_n) and
 * where OpenRDMA differs from other published copies of this header.
 */
#ifndef IT_API_H
#define IT_API_H

#include "it_api_os_specific.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Version bindings                                                   */
/* ------------------------------------------------------------------ */

/*
 * it_lmr_create, it_rmr_create and it_rmr_bind changed signature in v2.0
 * and v2.1.  A program picks the signatures it was written for by defining
 * ITAPI_ENABLE_V20_BINDINGS or ITAPI_ENABLE_V21_BINDINGS before including
 * this header; without either it gets the v1.0 ones, as the standard says.
 */
#if defined(ITAPI_ENABLE_V20_BINDINGS) && defined(ITAPI_ENABLE_V21_BINDINGS)
#error "define at most one of ITAPI_ENABLE_V20_BINDINGS and ITAPI_ENABLE_V21_BINDINGS"
#endif

#if defined(ITAPI_ENABLE_V20_BINDINGS) || defined(ITAPI_ENABLE_V21_BINDINGS)
#undef ITAPI_ENABLE_V10_BINDINGS
#elif !defined(ITAPI_ENABLE_V10_BINDINGS)
#define ITAPI_ENABLE_V10_BINDINGS
#endif

#if defined(ITAPI_ENABLE_V10_BINDINGS)
#define it_lmr_create it_lmr_create10
#define it_rmr_create it_rmr_create10
#define it_rmr_bind it_rmr_bind10
#elif defined(ITAPI_ENABLE_V20_BINDINGS)
#define it_lmr_create it_lmr_create20
#define it_rmr_create it_rmr_create20
#define it_rmr_bind it_rmr_link
#else
#define it_lmr_create it_lmr_create21
#define it_rmr_create it_rmr_create20
#define it_rmr_bind it_rmr_link
#endif

/* v1.0 names that v2.0 renamed, kept in every binding. */
#define it_make_rdma_addr it_make_rdma_addr_absolute
#define it_lmr_sync_rdma_read it_lmr_flush_to_mem
#define it_lmr_sync_rdma_write it_lmr_refresh_from_mem
#define it_rmr_unbind it_rmr_unlink

/* v1.0 member names of it_rc_only_attributes_t and it_ia_info_t. */
#define rdma_read_inflight_incoming rdma_read_ird
#define rdma_read_inflight_outgoing rdma_read_ord
#define ird_support ird_ord_ia_support
#define ord_support ird_ord_ia_support

/* ------------------------------------------------------------------ */
/* Status codes                                                       */
/* ------------------------------------------------------------------ */

/* A flat enumeration: no class or subtype bits, unlike DAT_RETURN. */
typedef enum {
	IT_SUCCESS = 0,
	IT_ERR_ABORT = 1,
	IT_ERR_ACCESS = 2,
	IT_ERR_ADDRESS = 3,
	IT_ERR_AEVD_NOT_ALLOWED = 4,
	IT_ERR_ASYNC_AFF_EVD_EXISTS = 5,
	IT_ERR_ASYNC_UNAFF_EVD_EXISTS = 6,
	IT_ERR_CALLBACK_EXISTS = 7,
	IT_ERR_CANNOT_RESET = 8,
	IT_ERR_CONN_QUAL_BUSY = 9,
	IT_ERR_EP_BUSY = 10,
	IT_ERR_EP_TIMEWAIT = 11,
	IT_ERR_EVD_BUSY = 12,
	IT_ERR_EVD_WAIT = 13,
	IT_ERR_EVD_QUEUE_FULL = 14,
	IT_ERR_FAULT = 15,
	IT_ERR_HARD_HI_WATERMARK = 16,
	IT_ERR_IA_CATASTROPHE = 17,
	IT_ERR_INTERRUPT = 18,
	IT_ERR_INVALID_ADDR_MODE = 19,
	IT_ERR_INVALID_ADDRESS = 20,
	IT_ERR_INVALID_AEVD = 21,
	IT_ERR_INVALID_AH = 22,
	IT_ERR_INVALID_ATIMEOUT = 23,
	IT_ERR_INVALID_ATOMIC_OP = 24,
	IT_ERR_INVALID_CM_RETRY = 25,
	IT_ERR_INVALID_CN_EST_FLAGS = 26,
	IT_ERR_INVALID_CN_EST_ID = 27,
	IT_ERR_INVALID_CONN_EVD = 28,
	IT_ERR_INVALID_CONN_QUAL = 29,
	IT_ERR_INVALID_CONVERSION = 30,
	IT_ERR_INVALID_DTO_FLAGS = 31,
	IT_ERR_INVALID_EP = 32,
	IT_ERR_INVALID_EP_ATTR = 33,
	IT_ERR_INVALID_EP_KEY = 34,
	IT_ERR_INVALID_EP_STATE = 35,
	IT_ERR_INVALID_EP_TYPE = 36,
	IT_ERR_INVALID_EVD = 37,
	IT_ERR_INVALID_EVD_STATE = 38,
	IT_ERR_INVALID_EVD_TYPE = 39,
	IT_ERR_INVALID_FLAGS = 40,
	IT_ERR_INVALID_HANDLE = 41,
	IT_ERR_INVALID_IA = 42,
	IT_ERR_INVALID_IOBL = 43,
	IT_ERR_INVALID_LENGTH = 44,
	IT_ERR_INVALID_LISTEN = 45,
	IT_ERR_INVALID_LMR = 46,
	IT_ERR_INVALID_LTIMEOUT = 47,
	IT_ERR_INVALID_MAJOR_VERSION = 48,
	IT_ERR_INVALID_MASK = 49,
	IT_ERR_INVALID_MINOR_VERSION = 50,
	IT_ERR_INVALID_NAME = 51,
	IT_ERR_INVALID_NETADDR = 52,
	IT_ERR_INVALID_NUM_SEGMENTS = 53,
	IT_ERR_INVALID_PDATA_LENGTH = 54,
	IT_ERR_INVALID_PRIVS = 55,
	IT_ERR_INVALID_PZ = 56,
	IT_ERR_INVALID_QUEUE_SIZE = 57,
	IT_ERR_INVALID_RECV_DTO = 58,
	IT_ERR_INVALID_RECV_EVD = 59,
	IT_ERR_INVALID_RECV_EVD_STATE = 60,
	IT_ERR_INVALID_REQ_EVD = 61,
	IT_ERR_INVALID_REQ_EVD_STATE = 62,
	IT_ERR_INVALID_RETRY = 63,
	IT_ERR_INVALID_RMR = 64,
	IT_ERR_INVALID_RNR_RETRY = 65,
	IT_ERR_INVALID_RMR_TYPE = 66,
	IT_ERR_INVALID_RTIMEOUT = 67,
	IT_ERR_INVALID_SOFT_EVD = 68,
	IT_ERR_INVALID_SOURCE_PATH = 69,
	IT_ERR_INVALID_SPIGOT = 70,
	IT_ERR_INVALID_SRQ = 71,
	IT_ERR_INVALID_SRQ_SIZE = 72,
	IT_ERR_INVALID_THRESHOLD = 73,
	IT_ERR_INVALID_UD_STATUS = 74,
	IT_ERR_INVALID_UD_SVC = 75,
	IT_ERR_INVALID_UD_SVC_REQ_ID = 76,
	IT_ERR_INVALID_WATERMARK = 77,
	IT_ERR_LMR_BUSY = 78,
	IT_ERR_MISMATCH_FD = 79,
	IT_ERR_NO_CONTEXT = 80,
	IT_ERR_NO_PERMISSION = 81,
	IT_ERR_OP_NOT_SUPPORTED = 82,
	IT_ERR_PAYLOAD_SIZE = 83,
	IT_ERR_PDATA_NOT_SUPPORTED = 84,
	IT_ERR_PRIV_OPS_UNAVAILABLE = 85,
	IT_ERR_PZ_BUSY = 86,
	IT_ERR_QUEUE_EMPTY = 87,
	IT_ERR_RANGE = 88,
	IT_ERR_RESOURCES = 89,
	IT_ERR_RESOURCE_IRD = 90,
	IT_ERR_RESOURCE_LMR_LENGTH = 91,
	IT_ERR_RESOURCE_ORD = 92,
	IT_ERR_RESOURCE_QUEUE_SIZE = 93,
	IT_ERR_RESOURCE_RECV_DTO = 94,
	IT_ERR_RESOURCE_REQ_DTO = 95,
	IT_ERR_RESOURCE_RRSEG = 96,
	IT_ERR_RESOURCE_RSEG = 97,
	IT_ERR_RESOURCE_RWSEG = 98,
	IT_ERR_RESOURCE_SSEG = 99,
	IT_ERR_SOFT_HI_WATERMARK = 100,
	IT_ERR_SRQ_BUSY = 101,
	IT_ERR_SRQ_LOW_WATERMARK = 102,
	IT_ERR_SRQ_NOT_SUPPORTED = 103,
	IT_ERR_TIMEOUT_EXPIRED = 104,
	IT_ERR_TOO_MANY_POSTS = 105,
	IT_ERR_WAITER_LIMIT = 106
} it_status_t;

/* ------------------------------------------------------------------ */
/* Scalars                                                            */
/* ------------------------------------------------------------------ */

typedef enum { IT_FALSE = 0, IT_TRUE = 1 } it_boolean_t;

#ifdef IT_32BIT
typedef uint32_t it_length_t;
#else
typedef uint64_t it_length_t;
#endif

/* The remote key of a registered region or window. */
typedef uint64_t it_rmr_context_t;

/* A remote address: a virtual address or an offset into the region. */
typedef uint64_t it_rdma_addr_t;

/* Identifies an incoming connection request until it is answered. */
typedef uint64_t it_cn_est_identifier_t;

/* Identifies an incoming UD service request until it is answered. */
typedef uint64_t it_ud_svc_req_identifier_t;

/* The consumer's tag on a work request, returned in its completion. */
typedef uint64_t it_dto_cookie_t;

/* The consumer's own value attached to any handle. */
typedef union {
	void *ptr;
	uint64_t index;
} it_context_t;

/* ------------------------------------------------------------------ */
/* Handles                                                            */
/* ------------------------------------------------------------------ */

/* Distinct opaque types, so that passing the wrong handle fails to build. */
typedef void *it_handle_t;
typedef struct it_addr_handle_s *it_addr_handle_t;
typedef struct it_ep_handle_s *it_ep_handle_t;
typedef struct it_evd_handle_s *it_evd_handle_t;
typedef struct it_ia_handle_s *it_ia_handle_t;
typedef struct it_listen_handle_s *it_listen_handle_t;
typedef struct it_lmr_handle_s *it_lmr_handle_t;
typedef struct it_pz_handle_s *it_pz_handle_t;
typedef struct it_rmr_handle_s *it_rmr_handle_t;
typedef struct it_ud_svc_req_handle_s *it_ud_svc_req_handle_t;
typedef struct it_srq_handle_s *it_srq_handle_t;

/* C++ does not convert void * to other pointer types implicitly. */
#ifdef __cplusplus
#define IT_NULL_HANDLE NULL
#else
#define IT_NULL_HANDLE ((it_handle_t)0)
#endif

typedef enum {
	IT_HANDLE_TYPE_ADDR = 0,
	IT_HANDLE_TYPE_EP = 1,
	IT_HANDLE_TYPE_EVD = 2,
	IT_HANDLE_TYPE_IA = 3,
	IT_HANDLE_TYPE_LISTEN = 4,
	IT_HANDLE_TYPE_LMR = 5,
	IT_HANDLE_TYPE_PZ = 6,
	IT_HANDLE_TYPE_RMR = 7,
	IT_HANDLE_TYPE_UD_SVC_REQ = 8,
	IT_HANDLE_TYPE_SRQ = 9
} it_handle_type_enum_t;

/* ------------------------------------------------------------------ */
/* Memory: privileges, LMRs, RMRs, I/O buffer lists                   */
/* ------------------------------------------------------------------ */

typedef enum {
	IT_PRIV_NONE = 0x0000,
	IT_PRIV_LOCAL_READ = 0x0001,
	IT_PRIV_LOCAL_WRITE = 0x0002,
	IT_PRIV_LOCAL = 0x0003,
	IT_PRIV_DEFAULT = 0x0003, /* v1.0 name of IT_PRIV_LOCAL */
	IT_PRIV_REMOTE_READ = 0x0004,
	IT_PRIV_REMOTE_WRITE = 0x0008,
	IT_PRIV_REMOTE = 0x000c,
	IT_PRIV_ATOMIC = 0x0010,
	IT_PRIV_ALL = 0x001f
} it_mem_priv_t;

typedef enum {
	IT_LMR_FLAG_NONE = 0x0001,
	IT_LMR_FLAG_SHARED = 0x0002,
	IT_LMR_FLAG_NONCOHERENT = 0x0004,
	IT_LMR_FLAG_NON_SHAREABLE = 0x0008
} it_lmr_flag_t;

/* Also a bit set in it_ia_info_t.rmr_types_supported. */
typedef enum {
	IT_RMR_TYPE_DEFAULT = 0,
	IT_RMR_TYPE_NARROW = 1,
	IT_RMR_TYPE_WIDE = 2
} it_rmr_type_t;

typedef enum {
	IT_ADDR_MODE_ABSOLUTE = 0,
	IT_ADDR_MODE_RELATIVE = 1
} it_addr_mode_t;

typedef enum {
	IT_IOBL_PAGE_LIST = 0x0001,
	IT_IOBL_BLOCK_LIST = 0x0002,
	IT_IOBL_VE_PAGE_LIST = 0x0004
} it_iobl_type_t;

/* One element of a variable-element-length IOBL. */
typedef struct {
	it_io_addr_t io_addr;
	it_length_t elt_len;
} it_iobl_ve_elt_t;

/* An I/O buffer list: what a privileged consumer registers by bus address. */
typedef struct {
	it_iobl_type_t iobl_type; /* selects the member of 'list' */
	union {
		struct {
			it_io_addr_t *list_elt;
			it_length_t elt_len; /* the same for every element */
		} ce_list;
		struct {
			it_iobl_ve_elt_t *list_elt;
		} ve_list;
	} list;
	size_t num_elts;
	it_length_t fbo; /* offset of the first byte in the first element */
} it_iobl_t;

/* A local segment.  It names the LMR handle, not a key, unlike DAT. */
typedef struct {
	it_lmr_handle_t lmr;
	union {
		void *abs; /* IT_ADDR_MODE_ABSOLUTE */
		it_length_t rel; /* IT_ADDR_MODE_RELATIVE */
		it_io_addr_t io; /* LMRs registered from an IOBL */
	} addr;
	it_length_t length;
} it_lmr_triplet_t;

/* A local segment inside an RMR, for it_post_rdma_read_to_rmr. */
typedef struct {
	it_rmr_handle_t rmr;
	union {
		void *abs;
		it_length_t rel;
	} addr;
	it_length_t length;
} it_rmr_triplet_t;

/* ------------------------------------------------------------------ */
/* Addressing: connection qualifiers, network addresses, paths        */
/* ------------------------------------------------------------------ */

/* Also a bit set in it_spigot_info_t. */
typedef enum {
	IT_IANA_PORT = 0x01,
	IT_IB_SERVICEID = 0x02,
	IT_VIA_DISCRIMINATOR = 0x04,
	IT_IANA_LR_PORT = 0x08
} it_conn_qual_type_t;

#define IT_MAX_VIA_DISC_LEN 64

typedef struct {
	uint16_t len; /* significant bytes of 'discriminator' */
	unsigned char discriminator[IT_MAX_VIA_DISC_LEN];
} it_via_discriminator_t;

typedef uint64_t it_ib_serviceid_t;

/* The port pair of an iWARP connection. */
typedef struct {
	uint16_t local;
	uint16_t remote;
} it_iana_lr_port_t;

/*
 * Ports and service IDs are in network byte order.  An implementation that
 * wanted host order would announce it by defining
 * ITAPI_IANA_PORT_HOST_BYTE_ORDER or ITAPI_SERVICE_ID_HOST_BYTE_ORDER;
 * OpenRDMA defines neither.
 */
typedef struct {
	it_conn_qual_type_t type; /* selects the member of 'conn_qual' */
	union {
		uint16_t port;
		it_ib_serviceid_t serviceid;
		it_via_discriminator_t discriminator;
		it_iana_lr_port_t lr_port;
	} conn_qual;
} it_conn_qual_t;

typedef enum {
	IT_IPV4 = 0x1,
	IT_IPV6 = 0x2,
	IT_IB_GID = 0x3,
	IT_VIA_HOSTADDR = 0x4
} it_net_addr_type_t;

#define IT_MAX_VIA_ADDR_LEN 64

typedef struct {
	uint16_t len; /* significant bytes of 'hostaddr' */
	unsigned char hostaddr[IT_MAX_VIA_ADDR_LEN];
} it_via_net_addr_t;

typedef struct in6_addr it_ib_gid_t;

/* Addresses and GIDs are stored as on the wire. */
typedef struct {
	it_net_addr_type_t addr_type; /* selects the member of 'addr' */
	union {
		struct in_addr ipv4;
		struct in6_addr ipv6;
		it_ib_gid_t gid;
		it_via_net_addr_t via;
	} addr;
} it_net_addr_t;

typedef enum {
	IT_IB_TRANSPORT = 1,
	IT_VIA_IP_TRANSPORT = 2,
	IT_VIA_FC_TRANSPORT = 3,
	IT_IWARP_TCP_TRANSPORT = 4,
	IT_VENDOR_TRANSPORT = 1000
} it_transport_type_t;

/* Also a bit set in it_ia_info_t.supported_service_types. */
typedef enum {
	IT_RC_SERVICE = 0x1,
	IT_UD_SERVICE = 0x2
} it_transport_service_type_t;

/*
 * The fields of an InfiniBand path record that the CM REQ and an address
 * handle use.  ISO C allows bit-fields only of int types, so the standard's
 * widths are kept on unsigned int bit-fields.
 */
typedef struct {
	uint16_t partition_key;
	unsigned int path_mtu : 4;
	unsigned int packet_lifetime : 6;
	uint16_t local_port_lid;
	uint16_t remote_port_lid; /* also the DLID of an address handle */
	it_ib_gid_t local_port_gid; /* selects the source GID index */
	it_ib_gid_t remote_port_gid; /* DGID or MGID */
	unsigned int packet_rate : 6;
	unsigned int sl : 4;
	unsigned int
		subnet_local : 1; /* set: no GRH, and the next three unused */
	unsigned int flow_label : 20;
	uint8_t traffic_class;
	uint8_t hop_limit;
} it_ib_net_endpoint_t;

typedef it_via_net_addr_t it_via_net_endpoint_t;

typedef enum { IT_IP_VERS_IPV4 = 0x1, IT_IP_VERS_IPV6 = 0x2 } it_ip_vers_t;

typedef struct {
	it_ip_vers_t ip_vers; /* the family of both laddr and raddr */
	union {
		struct in_addr ipv4;
		struct in6_addr ipv6;
	} laddr;
	union {
		struct in_addr ipv4;
		struct in6_addr ipv6;
	} raddr;
} it_iwarp_net_endpoint_t;

/* A route to a peer, from it_get_pathinfo(), for connect or an AH. */
typedef struct {
	size_t spigot_id;
	uint64_t timeout; /* connection establishment, microseconds */
	union {
		it_ib_net_endpoint_t ib;
		it_via_net_endpoint_t via;
		it_iwarp_net_endpoint_t iwarp;
	} remote;
} it_path_t;

/* ------------------------------------------------------------------ */
/* Interfaces and interface adapters                                  */
/* ------------------------------------------------------------------ */

/* A spigot is a port of an IA. */
typedef struct {
	size_t spigot_id;
	size_t max_rc_send_len;
	size_t max_rc_rdma_len;
	size_t max_ud_send_len;
	it_boolean_t spigot_online;
	it_conn_qual_type_t active_side_conn_qual; /* bit set */
	it_conn_qual_type_t passive_side_conn_qual; /* bit set */
	size_t num_net_addr;
	it_net_addr_t *net_addr;
} it_spigot_info_t;

/* NodeInfo fields of the InfiniBand specification. */
typedef struct {
	unsigned int vendor : 24;
	uint16_t device;
	uint32_t revision;
} it_vendor_ib_t;

/* VIP_NIC_ATTRIBUTES fields of the VIA specification. */
typedef struct {
	char name[64];
	unsigned long hardware;
	unsigned long provider;
} it_vendor_via_t;

typedef struct {
	it_boolean_t valid_vid;
	unsigned char vid[64];
} it_vendor_iwarp_tcp_t;

/* What it_ia_query() reports; free it with it_ia_info_free(). */
typedef struct {
	char *ia_name;
	uint32_t api_major_version; /* newest IT-API version supported */
	uint32_t api_minor_version;
	uint32_t sw_major_version; /* meaning defined by the IA */
	uint32_t sw_minor_version;
	union {
		it_vendor_ib_t ib;
		it_vendor_via_t via;
		it_vendor_iwarp_tcp_t iwarp;
	} vendor; /* selected by transport_type */
	uint32_t dto_alignment_hint; /* bytes */
	it_transport_type_t transport_type;
	it_transport_service_type_t supported_service_types; /* bit set */
	it_boolean_t ep_work_queues_resizable;
	it_boolean_t three_way_handshake_support;
	it_boolean_t private_data_support;
	it_boolean_t max_message_size_support;
	it_boolean_t ird_ord_ia_support;
	it_boolean_t ird_ord_suppressible;
	it_boolean_t spigot_online_support;
	it_boolean_t spigot_offline_support;
	/* private data limits per call, each at most IT_MAX_PRIV_DATA */
	size_t connect_private_data_len;
	size_t accept_private_data_len;
	size_t reject_private_data_len;
	size_t disconnect_private_data_len;
	size_t ud_req_private_data_len;
	size_t ud_rep_private_data_len;
	size_t num_spigots;
	it_spigot_info_t *spigot_info;
	it_evd_handle_t affiliated_err_evd; /* IT_NULL_HANDLE if none */
	it_evd_handle_t unaffiliated_err_evd; /* IT_NULL_HANDLE if none */
	it_boolean_t srq_support;
	it_boolean_t hard_hi_watermark_support;
	it_boolean_t soft_hi_watermark_support;
	it_boolean_t srq_resizable;
	it_boolean_t extended_iwarp_qp_states;
	it_boolean_t socket_conversion_support;
	it_boolean_t rdma_read_ord_increasable;
	it_boolean_t rdma_read_ird_modifiable;
	it_rmr_type_t rmr_types_supported; /* bit set */
	it_boolean_t addr_mode_relative_support;
	it_boolean_t rdma_read_requires_remote_write;
	it_boolean_t ep_rdma_enables_modifiable;
	it_boolean_t rdma_read_local_extensions;
	it_boolean_t dto_evd_overflow_detection;
	it_boolean_t atomic_support;
	it_boolean_t lmr_link_support;
	it_boolean_t direct_lmr_handle_support;
	it_lmr_handle_t direct_lmr_handle; /* IT_NULL_HANDLE if unsupported */
	it_boolean_t post_send_unlink_remote_support;
	it_boolean_t narrow_rmr_unlink_support;
	it_boolean_t wide_rmr_unlink_support;
	it_boolean_t unlink_fence_support;
	it_iobl_type_t iobl_types_supported; /* bit set */
} it_ia_info_t;

/* One entry of it_interface_list(). */
typedef struct {
	uint32_t major_version;
	uint32_t minor_version;
	it_transport_type_t transport_type;
	char name[IT_INTERFACE_NAME_SIZE]; /* input to it_ia_create() */
} it_interface_t;

/* ------------------------------------------------------------------ */
/* Endpoints                                                          */
/* ------------------------------------------------------------------ */

typedef uint32_t it_ud_ep_id_t;
typedef uint32_t it_ud_ep_key_t;

typedef enum {
	IT_EP_PARAM_ALL = 0x00000001,
	IT_EP_PARAM_IA = 0x00000002,
	IT_EP_PARAM_SPIGOT = 0x00000004,
	IT_EP_PARAM_STATE = 0x00000008,
	IT_EP_PARAM_SERV_TYPE = 0x00000010,
	IT_EP_PARAM_PATH = 0x00000020,
	IT_EP_PARAM_PZ = 0x00000040,
	IT_EP_PARAM_REQ_SEVD = 0x00000080,
	IT_EP_PARAM_RECV_SEVD = 0x00000100,
	IT_EP_PARAM_CONN_SEVD = 0x00000200,
	IT_EP_PARAM_RDMA_RD_ENABLE = 0x00000400,
	IT_EP_PARAM_RDMA_WR_ENABLE = 0x00000800,
	IT_EP_PARAM_MAX_RDMA_READ_SEG = 0x00001000,
	IT_EP_PARAM_MAX_RDMA_WRITE_SEG = 0x00002000,
	IT_EP_PARAM_MAX_IRD = 0x00004000,
	IT_EP_PARAM_MAX_ORD = 0x00008000,
	IT_EP_PARAM_EP_ID = 0x00010000,
	IT_EP_PARAM_EP_KEY = 0x00020000,
	IT_EP_PARAM_MAX_PAYLOAD = 0x00040000,
	IT_EP_PARAM_MAX_REQ_DTO = 0x00080000,
	IT_EP_PARAM_MAX_RECV_DTO = 0x00100000,
	IT_EP_PARAM_MAX_SEND_SEG = 0x00200000,
	IT_EP_PARAM_MAX_RECV_SEG = 0x00400000,
	IT_EP_PARAM_SRQ = 0x00800000,
	IT_EP_PARAM_SOFT_HI_WATERMARK = 0x01000000,
	IT_EP_PARAM_HARD_HI_WATERMARK = 0x02000000,
	IT_EP_PARAM_ATOMICS_ENABLE = 0x04000000,
	IT_EP_PARAM_PRIV_OPS_ENABLE = 0x08000000
} it_ep_param_mask_t;

/* The trailing comments name the mask bit of each member. */
typedef struct {
	it_boolean_t rdma_read_enable; /* IT_EP_PARAM_RDMA_RD_ENABLE */
	it_boolean_t rdma_write_enable; /* IT_EP_PARAM_RDMA_WR_ENABLE */
	size_t max_rdma_read_segments; /* IT_EP_PARAM_MAX_RDMA_READ_SEG */
	size_t max_rdma_write_segments; /* IT_EP_PARAM_MAX_RDMA_WRITE_SEG */
	uint32_t rdma_read_ird; /* IT_EP_PARAM_MAX_IRD */
	uint32_t rdma_read_ord; /* IT_EP_PARAM_MAX_ORD */
	it_srq_handle_t srq; /* IT_EP_PARAM_SRQ */
	size_t soft_hi_watermark; /* IT_EP_PARAM_SOFT_HI_WATERMARK */
	size_t hard_hi_watermark; /* IT_EP_PARAM_HARD_HI_WATERMARK */
	it_boolean_t atomics_enable; /* IT_EP_PARAM_ATOMICS_ENABLE */
} it_rc_only_attributes_t;

#define IT_HARD_HI_WATERMARK_DISABLE ((size_t)-1)

/* What a UD peer needs to address an endpoint. */
typedef struct {
	it_ud_ep_id_t ud_ep_id; /* IT_EP_PARAM_EP_ID */
	it_ud_ep_key_t ud_ep_key; /* IT_EP_PARAM_EP_KEY */
} it_remote_ep_info_t;

typedef struct {
	it_remote_ep_info_t ep_info;
} it_ud_only_attributes_t;

typedef union {
	it_rc_only_attributes_t rc;
	it_ud_only_attributes_t ud;
} it_service_attributes_t;

typedef struct {
	size_t max_dto_payload_size; /* IT_EP_PARAM_MAX_PAYLOAD */
	size_t max_request_dtos; /* IT_EP_PARAM_MAX_REQ_DTO */
	size_t max_recv_dtos; /* IT_EP_PARAM_MAX_RECV_DTO */
	size_t max_send_segments; /* IT_EP_PARAM_MAX_SEND_SEG */
	size_t max_recv_segments; /* IT_EP_PARAM_MAX_RECV_SEG */
	it_service_attributes_t srv; /* by service type */
	it_boolean_t priv_ops_enable; /* IT_EP_PARAM_PRIV_OPS_ENABLE */
} it_ep_attributes_t;

typedef enum {
	IT_EP_STATE_UNCONNECTED = 0,
	IT_EP_STATE_ACTIVE1_CONNECTION_PENDING = 1,
	IT_EP_STATE_ACTIVE2_CONNECTION_PENDING = 2,
	IT_EP_STATE_PASSIVE_CONNECTION_PENDING = 3,
	IT_EP_STATE_CONNECTED = 4,
	IT_EP_STATE_NONOPERATIONAL = 5,
	IT_EP_STATE_PASSIVE_WAIT_RDMA_TRANS_REQ = 6
} it_ep_state_rc_t;

typedef enum {
	IT_EP_STATE_UD_NONOPERATIONAL = 0,
	IT_EP_STATE_UD_OPERATIONAL = 1
} it_ep_state_ud_t;

typedef union {
	it_ep_state_rc_t rc;
	it_ep_state_ud_t ud;
} it_ep_state_t;

typedef struct {
	it_ia_handle_t ia; /* IT_EP_PARAM_IA */
	size_t spigot_id; /* IT_EP_PARAM_SPIGOT */
	it_ep_state_t ep_state; /* IT_EP_PARAM_STATE */
	it_transport_service_type_t service_type; /* IT_EP_PARAM_SERV_TYPE */
	it_path_t dst_path; /* IT_EP_PARAM_PATH */
	it_pz_handle_t pz; /* IT_EP_PARAM_PZ */
	it_evd_handle_t request_sevd; /* IT_EP_PARAM_REQ_SEVD */
	it_evd_handle_t recv_sevd; /* IT_EP_PARAM_RECV_SEVD */
	it_evd_handle_t connect_sevd; /* IT_EP_PARAM_CONN_SEVD */
	it_ep_attributes_t attr; /* the bits of it_ep_attributes_t */
} it_ep_param_t;

typedef enum {
	IT_EP_NO_FLAG = 0x00,
	IT_EP_REUSEADDR = 0x01,
	IT_EP_SRQ = 0x02
} it_ep_rc_creation_flags_t;

/* InfiniBand CM REQ fields, with the standard's widths (see above). */
typedef struct {
	unsigned int remote_cm_timeout : 5;
	unsigned int local_cm_timeout : 5;
	unsigned int retry_count : 3;
	unsigned int rnr_retry_count : 3;
	unsigned int max_cm_retries : 4;
	unsigned int local_ack_timeout : 5;
} it_ib_conn_attributes_t;

/* VIA and iWARP have no such attributes; a member keeps the struct legal. */
typedef struct {
	void *unused;
} it_via_conn_attributes_t;

typedef struct {
	void *unused;
} it_iwarp_conn_attributes_t;

typedef union {
	it_ib_conn_attributes_t ib;
	it_via_conn_attributes_t via;
	it_iwarp_conn_attributes_t iwarp;
} it_conn_attributes_t;

typedef enum {
	IT_CONNECT_FLAG_TWO_WAY = 0x0001,
	IT_CONNECT_FLAG_THREE_WAY = 0x0002,
	IT_CONNECT_SUPPRESS_IRD_ORD = 0x0004
} it_cn_est_flags_t;

/* it_socket_convert() flags. */
typedef enum {
	IT_SC_DEFAULT = 0x0000,
	IT_SC_NO_REQ_REP = 0x0001
} it_sc_flags_t;

/* ------------------------------------------------------------------ */
/* UD address handles and datagram destinations                       */
/* ------------------------------------------------------------------ */

typedef enum { IT_AH_PATH_COMPLETE = 0x1 } it_ah_flags_t;

typedef enum {
	IT_ADDR_PARAM_ALL = 0x0001,
	IT_ADDR_PARAM_IA = 0x0002,
	IT_ADDR_PARAM_PZ = 0x0004,
	IT_ADDR_PARAM_PATH = 0x0008
} it_addr_param_mask_t;

typedef struct {
	it_ia_handle_t ia; /* IT_ADDR_PARAM_IA */
	it_pz_handle_t pz; /* IT_ADDR_PARAM_PZ */
	it_path_t path; /* IT_ADDR_PARAM_PATH */
} it_addr_param_t;

typedef struct {
	it_addr_handle_t addr;
	it_remote_ep_info_t ep_info;
} it_ib_ud_addr_t;

typedef enum { IT_DG_TYPE_IB_UD = 0 } it_dg_type_t;

/* The destination of it_post_sendto(). */
typedef struct {
	it_dg_type_t type; /* selects the member of 'addr' */
	union {
		it_ib_ud_addr_t ud;
	} addr;
} it_dg_remote_ep_addr_t;

/* ------------------------------------------------------------------ */
/* Work requests                                                      */
/* ------------------------------------------------------------------ */

typedef enum {
	IT_COMPLETION_FLAG = 0x01, /* report a completion event */
	IT_NOTIFY_FLAG = 0x02, /* and notify the EVD's waiters */
	IT_SOLICITED_WAIT_FLAG = 0x04, /* wake the receiver's waiters */
	IT_BARRIER_FENCE_FLAG = 0x08, /* start after earlier RDMA Reads */
	IT_UNLINK_FENCE_FLAG = 0x10, /* unlink after earlier requests */
	IT_UNLINK_LOCAL_SINK = 0x20, /* unlink the sink LMR/RMR on completion */
	IT_COALESCE_WR_FLAG = 0x40 /* may be held back and posted later */
} it_dto_flags_t;

typedef enum { IT_COMPARE_AND_SWAP = 0, IT_FETCH_AND_ADD = 1 } it_atomic_op_t;

/* ------------------------------------------------------------------ */
/* Events                                                             */
/* ------------------------------------------------------------------ */

/*
 * An event number carries its stream in the bits of IT_EVENT_STREAM_MASK;
 * each stream's base value is also the event_number an EVD is created
 * with to carry that stream.
 */
#define IT_EVENT_STREAM_MASK 0xff000

typedef enum {
	IT_DTO_EVENT_STREAM = 0x00000,
	IT_DTO_SEND_CMPL_EVENT = 0x00001,
	IT_DTO_RC_RECV_CMPL_EVENT = 0x00002,
	IT_DTO_UD_RECV_CMPL_EVENT = 0x00003,
	IT_DTO_RDMA_WRITE_CMPL_EVENT = 0x00004,
	IT_DTO_RDMA_READ_CMPL_EVENT = 0x00005,
	IT_RMR_BIND_CMPL_EVENT = 0x00006, /* v1.0 name */
	IT_RMR_LINK_CMPL_EVENT = 0x00006,
	IT_DTO_FETCH_ADD_CMPL_EVENT = 0x00007,
	IT_DTO_CMP_SWAP_CMPL_EVENT = 0x00008,
	IT_LMR_LINK_CMPL_EVENT = 0x00009,

	IT_CM_REQ_EVENT_STREAM = 0x01000,
	IT_CM_REQ_CONN_REQUEST_EVENT = 0x01001,
	IT_CM_REQ_UD_SERVICE_REQUEST_EVENT = 0x01002,

	IT_CM_MSG_EVENT_STREAM = 0x02000,
	IT_CM_MSG_CONN_ACCEPT_ARRIVAL_EVENT = 0x02001,
	IT_CM_MSG_CONN_ESTABLISHED_EVENT = 0x02002,
	IT_CM_MSG_CONN_DISCONNECT_EVENT = 0x02003,
	IT_CM_MSG_CONN_PEER_REJECT_EVENT = 0x02004,
	IT_CM_MSG_CONN_NONPEER_REJECT_EVENT = 0x02005,
	IT_CM_MSG_CONN_BROKEN_EVENT = 0x02006,
	IT_CM_MSG_UD_SERVICE_REPLY_EVENT = 0x02007,

	IT_ASYNC_AFF_EVENT_STREAM = 0x04000,
	IT_ASYNC_AFF_SEVD_ENQUEUE_FAILURE = 0x04001,
	IT_ASYNC_AFF_EP_FAILURE = 0x04002,
	IT_ASYNC_AFF_EP_BAD_TRANSPORT_OPCODE = 0x04003,
	IT_ASYNC_AFF_EP_REQ_DROPPED = 0x04005,
	IT_ASYNC_AFF_EP_RDMAW_ACCESS_VIOLATION = 0x04006,
	IT_ASYNC_AFF_EP_RDMAW_CORRUPT_DATA = 0x04007,
	IT_ASYNC_AFF_EP_RDMAR_ACCESS_VIOLATION = 0x04008,
	IT_ASYNC_AFF_EP_LOCAL_ACCESS_VIOLATION = 0x04020, /* v1.0 name */
	IT_ASYNC_AFF_EP_L_ACCESS_VIOLATION = 0x04020,
	IT_ASYNC_AFF_EP_L_RECV_ACCESS_VIOLATION = 0x04021,
	IT_ASYNC_AFF_EP_L_IRRQ_ACCESS_VIOLATION = 0x04022,
	IT_ASYNC_AFF_EP_L_TRANSPORT_ERROR = 0x04023,
	IT_ASYNC_AFF_EP_L_LLP_ERROR = 0x04024,
	IT_ASYNC_AFF_EP_R_ERROR = 0x04040,
	IT_ASYNC_AFF_EP_R_ACCESS_VIOLATION = 0x04041,
	IT_ASYNC_AFF_EP_R_RECV_ACCESS_VIOLATION = 0x04042,
	IT_ASYNC_AFF_EP_R_RECV_LENGTH_ERROR = 0x04043,
	IT_ASYNC_AFF_EP_SOFT_HI_WATERMARK = 0x04060,
	IT_ASYNC_AFF_EP_SRQ_ERROR = 0x04061,
	IT_ASYNC_AFF_SRQ_LOW_WATERMARK = 0x04100,

	/* 0x08001 was withdrawn and is not reused. */
	IT_ASYNC_UNAFF_EVENT_STREAM = 0x08000,
	IT_ASYNC_UNAFF_SPIGOT_ONLINE = 0x08002,
	IT_ASYNC_UNAFF_SPIGOT_OFFLINE = 0x08003,
	IT_ASYNC_UNAFF_SEVD_ENQUEUE_FAILURE = 0x08004,

	IT_SOFTWARE_EVENT_STREAM = 0x10000,
	IT_SOFTWARE_EVENT = 0x10001,

	IT_AEVD_NOTIFICATION_EVENT_STREAM = 0x20000,
	IT_AEVD_NOTIFICATION_EVENT = 0x20001
} it_event_type_t;

#define IT_TIMEOUT_INFINITE ((uint64_t)-1)

/* Largest private data of any CM message; it_ia_info_t has the real ones. */
#define IT_MAX_PRIV_DATA 64

typedef enum {
	IT_DTO_SUCCESS = 0,
	IT_DTO_ERR_LOCAL_LENGTH = 1,
	IT_DTO_ERR_LOCAL_EP = 2,
	IT_DTO_ERR_LOCAL_PROTECTION = 3,
	IT_DTO_ERR_FLUSHED = 4,
	IT_RMR_OPERATION_FAILED = 5,
	IT_DTO_ERR_BAD_RESPONSE = 6,
	IT_DTO_ERR_REMOTE_ACCESS = 7,
	IT_DTO_ERR_REMOTE_RESPONDER = 8,
	IT_DTO_ERR_TRANSPORT = 9,
	IT_DTO_ERR_RECEIVER_NOT_READY = 10,
	IT_DTO_ERR_PARTIAL_PACKET = 11,
	IT_DTO_ERR_LOCAL_MM_OPERATION = 12
} it_dto_status_t;

typedef enum { IT_UD_IB_GRH_PRESENT = 0x01 } it_dto_ud_flags_t;

typedef enum {
	IT_CN_REJ_OTHER = 0,
	IT_CN_REJ_TIMEOUT = 1,
	IT_CN_REJ_BAD_PATH = 2,
	IT_CN_REJ_STALE_CONN = 3,
	IT_CN_REJ_BAD_ORD = 4,
	IT_CN_REJ_RESOURCES = 5,
	IT_CN_REJ_BAD_CONN_PARMS = 6
} it_conn_reject_code_t;

typedef enum {
	IT_UD_SVC_EP_INFO_VALID = 0,
	IT_UD_SVC_ID_NOT_SUPPORTED = 1,
	IT_UD_SVC_REQ_REJECTED = 2,
	IT_UD_NO_EP_AVAILABLE = 3,
	IT_UD_REQ_REDIRECTED = 4
} it_ud_svc_req_status_t;

/*
 * Every event structure starts with event_number and then the EVD, so
 * that it_any_event_t reads both from any event.
 */
typedef struct {
	it_event_type_t event_number;
	it_evd_handle_t evd;
} it_any_event_t;

/* Send, RC receive, RDMA, atomic and link completions. */
typedef struct {
	it_event_type_t event_number;
	it_evd_handle_t evd;
	it_ep_handle_t ep;
	it_dto_cookie_t cookie;
	it_dto_status_t dto_status;
	uint32_t transferred_length;
	it_handle_t unlinked_mr_handle; /* with IT_UNLINK_LOCAL_SINK */
} it_dto_cmpl_event_t;

/* it_dto_cmpl_event_t plus what a UD receive adds; read it for any DTO. */
typedef struct {
	it_event_type_t event_number;
	it_evd_handle_t evd;
	it_ep_handle_t ep;
	it_dto_cookie_t cookie;
	it_dto_status_t dto_status;
	uint32_t transferred_length;
	it_handle_t unlinked_mr_handle;
	it_dto_ud_flags_t flags;
	it_ud_ep_id_t ud_ep_id; /* the sender */
	it_path_t src_path;
} it_all_dto_cmpl_event_t;

/* IT_CM_REQ_CONN_REQUEST_EVENT: answer with accept, reject or handoff. */
typedef struct {
	it_event_type_t event_number;
	it_evd_handle_t evd;
	it_cn_est_identifier_t cn_est_id;
	it_conn_qual_t conn_qual;
	it_net_addr_t source_addr;
	size_t spigot_id;
	uint32_t max_message_size;
	uint32_t rdma_read_ird;
	uint32_t rdma_read_ord;
	unsigned char private_data[IT_MAX_PRIV_DATA];
	it_boolean_t private_data_present;
} it_conn_request_event_t;

/* IT_CM_REQ_UD_SERVICE_REQUEST_EVENT: answer with it_ud_service_reply. */
typedef struct {
	it_event_type_t event_number;
	it_evd_handle_t evd;
	it_ud_svc_req_identifier_t ud_svc_req_id;
	it_conn_qual_t conn_qual;
	it_net_addr_t source_addr;
	size_t spigot_id;
	unsigned char private_data[IT_MAX_PRIV_DATA];
	it_boolean_t private_data_present;
} it_ud_svc_request_event_t;

/* The IT_CM_MSG_CONN_* events. */
typedef struct {
	it_event_type_t event_number;
	it_evd_handle_t evd;
	it_cn_est_identifier_t cn_est_id; /* accept arrival (three-way) */
	it_ep_handle_t ep;
	uint32_t rdma_read_ird;
	uint32_t rdma_read_ord;
	it_path_t dst_path;
	it_conn_reject_code_t reject_reason_code; /* non-peer rejects */
	unsigned char private_data[IT_MAX_PRIV_DATA];
	it_boolean_t private_data_present;
} it_connection_event_t;

/* IT_CM_MSG_UD_SERVICE_REPLY_EVENT. */
typedef struct {
	it_event_type_t event_number;
	it_evd_handle_t evd;
	it_ud_svc_req_handle_t ud_svc;
	it_ud_svc_req_status_t status;
	it_remote_ep_info_t ep_info; /* IT_UD_SVC_EP_INFO_VALID */
	it_path_t dst_path;
	unsigned char private_data[IT_MAX_PRIV_DATA];
	it_boolean_t private_data_present;
} it_ud_svc_reply_event_t;

/* The IT_ASYNC_AFF_* events name the object they concern. */
typedef struct {
	it_event_type_t event_number;
	it_evd_handle_t evd;
	union {
		it_evd_handle_t sevd;
		it_ep_handle_t ep;
		it_srq_handle_t srq;
	} cause;
} it_affiliated_event_t;

typedef struct {
	it_event_type_t event_number;
	it_evd_handle_t evd;
	it_ia_handle_t ia;
	size_t spigot_id;
} it_unaffiliated_event_t;

/* Posted with it_evd_post_se(). */
typedef struct {
	it_event_type_t event_number;
	it_evd_handle_t evd;
	void *data;
} it_software_event_t;

/* An SEVD attached to an AEVD has events; 'aevd' sits where 'evd' does. */
typedef struct {
	it_event_type_t event_number;
	it_evd_handle_t aevd;
	it_evd_handle_t sevd;
} it_aevd_notification_event_t;

/* What it_evd_wait() and it_evd_dequeue() return; event_number selects. */
typedef union {
	it_event_type_t event_number;
	it_any_event_t any;
	it_dto_cmpl_event_t dto_cmpl;
	it_all_dto_cmpl_event_t all_dto_cmpl;
	it_conn_request_event_t conn_req;
	it_ud_svc_request_event_t ud_svc_request;
	it_connection_event_t conn;
	it_ud_svc_reply_event_t ud_svc_reply;
	it_affiliated_event_t aff_async;
	it_unaffiliated_event_t unaff_async;
	it_software_event_t sw;
	it_aevd_notification_event_t aevd_notify;
} it_event_t;

/* ------------------------------------------------------------------ */
/* Event dispatchers                                                  */
/* ------------------------------------------------------------------ */

/* sevd_threshold value: wake waiters on every event. */
#define IT_THRESHOLD_DISABLE 0

typedef enum {
	IT_EVD_DEQUEUE_NOTIFICATIONS = 0x01,
	IT_EVD_CREATE_FD = 0x02,
	IT_EVD_OVERFLOW_DEFAULT = 0x04,
	IT_EVD_OVERFLOW_NOTIFY = 0x08,
	IT_EVD_OVERFLOW_AUTO_RESET = 0x10
} it_evd_flags_t;

typedef enum {
	IT_EVD_PARAM_ALL = 0x000001,
	IT_EVD_PARAM_IA = 0x000002,
	IT_EVD_PARAM_EVENT_NUMBER = 0x000004,
	IT_EVD_PARAM_FLAG = 0x000008,
	IT_EVD_PARAM_QUEUE_SIZE = 0x000010,
	IT_EVD_PARAM_THRESHOLD = 0x000020,
	IT_EVD_PARAM_AEVD_HANDLE = 0x000040,
	IT_EVD_PARAM_FD = 0x000080,
	IT_EVD_PARAM_BOUND = 0x000100,
	IT_EVD_PARAM_ENABLED = 0x000200,
	IT_EVD_PARAM_OVERFLOWED = 0x000400,
	IT_EVD_PARAM_CALLBACK = 0x000800
} it_evd_param_mask_t;

typedef struct {
	it_ia_handle_t ia; /* IT_EVD_PARAM_IA */
	it_event_type_t event_number; /* IT_EVD_PARAM_EVENT_NUMBER */
	it_evd_flags_t evd_flag; /* IT_EVD_PARAM_FLAG */
	size_t sevd_queue_size; /* IT_EVD_PARAM_QUEUE_SIZE */
	size_t sevd_threshold; /* IT_EVD_PARAM_THRESHOLD */
	it_evd_handle_t aevd; /* IT_EVD_PARAM_AEVD_HANDLE */
	int fd; /* IT_EVD_PARAM_FD */
	it_boolean_t evd_bound; /* IT_EVD_PARAM_BOUND */
	it_boolean_t evd_enabled; /* IT_EVD_PARAM_ENABLED */
	it_boolean_t evd_overflowed; /* IT_EVD_PARAM_OVERFLOWED */
	it_boolean_t evd_callback; /* IT_EVD_PARAM_CALLBACK */
} it_evd_param_t;

typedef void (*it_evd_callback_rtn_t)(it_evd_handle_t evd, void *arg);

/* ------------------------------------------------------------------ */
/* Query and modify parameters of the other objects                   */
/* ------------------------------------------------------------------ */

typedef enum {
	IT_LISTEN_NO_FLAG = 0x0000,
	IT_LISTEN_CONN_QUAL_INPUT = 0x0001,
	IT_LISTEN_SUPPRESS_IRD_ORD = 0x0002
} it_listen_flags_t;

typedef enum {
	IT_LISTEN_PARAM_ALL = 0x0001,
	IT_LISTEN_PARAM_IA_HANDLE = 0x0002,
	IT_LISTEN_PARAM_SPIGOT_ID = 0x0004,
	IT_LISTEN_PARAM_CONNECT_EVD = 0x0008,
	IT_LISTEN_PARAM_CONN_QUAL = 0x0010
} it_listen_param_mask_t;

typedef struct {
	it_ia_handle_t ia_handle; /* IT_LISTEN_PARAM_IA_HANDLE */
	size_t spigot_id; /* IT_LISTEN_PARAM_SPIGOT_ID */
	it_evd_handle_t connect_evd; /* IT_LISTEN_PARAM_CONNECT_EVD */
	it_conn_qual_t connect_qual; /* IT_LISTEN_PARAM_CONN_QUAL */
} it_listen_param_t;

typedef enum {
	IT_PZ_PARAM_ALL = 0x01,
	IT_PZ_PARAM_IA = 0x02
} it_pz_param_mask_t;

typedef struct {
	it_ia_handle_t ia; /* IT_PZ_PARAM_IA */
} it_pz_param_t;

typedef enum {
	IT_LMR_PARAM_ALL = 0x000001,
	IT_LMR_PARAM_IA = 0x000002,
	IT_LMR_PARAM_PZ = 0x000004,
	IT_LMR_PARAM_ADDR = 0x000008,
	IT_LMR_PARAM_LENGTH = 0x000010,
	IT_LMR_PARAM_MEM_PRIV = 0x000020,
	IT_LMR_PARAM_FLAG = 0x000040,
	IT_LMR_PARAM_SHARED_ID = 0x000080,
	IT_LMR_PARAM_RMR_CONTEXT = 0x000100,
	IT_LMR_PARAM_ACTUAL_ADDR = 0x000200,
	IT_LMR_PARAM_ACTUAL_LENGTH = 0x000400,
	IT_LMR_PARAM_ADDR_MODE = 0x000800,
	IT_LMR_PARAM_LINKED = 0x001000,
	IT_LMR_PARAM_IOBL_NUM_ELTS = 0x002000,
	IT_LMR_PARAM_IOBL_TYPE = 0x004000
} it_lmr_param_mask_t;

typedef struct {
	it_ia_handle_t ia; /* IT_LMR_PARAM_IA */
	it_pz_handle_t pz; /* IT_LMR_PARAM_PZ */
	void *addr; /* IT_LMR_PARAM_ADDR */
	it_length_t length; /* IT_LMR_PARAM_LENGTH */
	it_mem_priv_t privs; /* IT_LMR_PARAM_MEM_PRIV */
	it_lmr_flag_t flags; /* IT_LMR_PARAM_FLAG */
	uint32_t shared_id; /* IT_LMR_PARAM_SHARED_ID */
	it_rmr_context_t rmr_context; /* IT_LMR_PARAM_RMR_CONTEXT */
	void *actual_addr; /* IT_LMR_PARAM_ACTUAL_ADDR */
	it_length_t actual_length; /* IT_LMR_PARAM_ACTUAL_LENGTH */
	it_addr_mode_t addr_mode; /* IT_LMR_PARAM_ADDR_MODE */
	it_boolean_t linked; /* IT_LMR_PARAM_LINKED */
	size_t iobl_num_elts; /* IT_LMR_PARAM_IOBL_NUM_ELTS */
	it_iobl_type_t iobl_type; /* IT_LMR_PARAM_IOBL_TYPE */
} it_lmr_param_t;

typedef enum {
	IT_RMR_PARAM_ALL = 0x000001,
	IT_RMR_PARAM_IA = 0x000002,
	IT_RMR_PARAM_PZ = 0x000004,
	IT_RMR_PARAM_LINKED = 0x000008,
	IT_RMR_PARAM_BOUND = 0x000008, /* v1.0 name */
	IT_RMR_PARAM_LMR = 0x000010,
	IT_RMR_PARAM_ADDR = 0x000020,
	IT_RMR_PARAM_LENGTH = 0x000040,
	IT_RMR_PARAM_MEM_PRIV = 0x000080,
	IT_RMR_PARAM_RMR_CONTEXT = 0x000100,
	IT_RMR_PARAM_TYPE = 0x000200,
	IT_RMR_PARAM_ADDR_MODE = 0x000400
} it_rmr_param_mask_t;

/* v1.0 called the third member 'bound'; the layout is the same. */
typedef struct {
	it_ia_handle_t ia; /* IT_RMR_PARAM_IA */
	it_pz_handle_t pz; /* IT_RMR_PARAM_PZ */
#ifdef ITAPI_ENABLE_V10_BINDINGS
	it_boolean_t bound; /* IT_RMR_PARAM_BOUND */
#else
	it_boolean_t linked; /* IT_RMR_PARAM_LINKED */
#endif
	it_lmr_handle_t lmr; /* IT_RMR_PARAM_LMR */
	void *addr; /* IT_RMR_PARAM_ADDR */
	it_length_t length; /* IT_RMR_PARAM_LENGTH */
	it_mem_priv_t privs; /* IT_RMR_PARAM_MEM_PRIV */
	it_rmr_context_t rmr_context; /* IT_RMR_PARAM_RMR_CONTEXT */
	it_rmr_type_t type; /* IT_RMR_PARAM_TYPE */
	it_addr_mode_t addr_mode; /* IT_RMR_PARAM_ADDR_MODE */
} it_rmr_param_t;

typedef enum {
	IT_SRQ_PARAM_ALL = 0x000001,
	IT_SRQ_PARAM_IA = 0x000002,
	IT_SRQ_PARAM_PZ = 0x000004,
	IT_SRQ_PARAM_MAX_RECV_DTO = 0x000008,
	IT_SRQ_PARAM_MAX_RECV_SEG = 0x000010,
	IT_SRQ_PARAM_LOW_WATERMARK = 0x000020
} it_srq_param_mask_t;

typedef struct {
	it_ia_handle_t ia; /* IT_SRQ_PARAM_IA */
	it_pz_handle_t pz; /* IT_SRQ_PARAM_PZ */
	size_t max_recv_dtos; /* IT_SRQ_PARAM_MAX_RECV_DTO */
	size_t max_recv_segs; /* IT_SRQ_PARAM_MAX_RECV_SEG */
	size_t low_watermark; /* IT_SRQ_PARAM_LOW_WATERMARK */
} it_srq_param_t;

typedef enum {
	IT_UD_PARAM_ALL = 0x00000001,
	IT_UD_PARAM_IA_HANDLE = 0x00000002,
	IT_UD_PARAM_REQ_ID = 0x00000004,
	IT_UD_PARAM_REPLY_EVD = 0x00000008,
	IT_UD_PARAM_CONN_QUAL = 0x00000010,
	IT_UD_PARAM_DEST_PATH = 0x00000020,
	IT_UD_PARAM_PRIV_DATA = 0x00000040,
	IT_UD_PARAM_PRIV_DATA_LENGTH = 0x00000080
} it_ud_svc_req_param_mask_t;

typedef struct {
	it_ia_handle_t ia; /* IT_UD_PARAM_IA_HANDLE */
	uint32_t request_id; /* IT_UD_PARAM_REQ_ID */
	it_evd_handle_t reply_evd; /* IT_UD_PARAM_REPLY_EVD */
	it_conn_qual_t conn_qual; /* IT_UD_PARAM_CONN_QUAL */
	it_path_t destination_path; /* IT_UD_PARAM_DEST_PATH */
	unsigned char private_data[IT_MAX_PRIV_DATA]; /* IT_UD_PARAM_PRIV_DATA */
	size_t private_data_length; /* IT_UD_PARAM_PRIV_DATA_LENGTH */
} it_ud_svc_req_param_t;

/* ------------------------------------------------------------------ */
/* Functions                                                          */
/* ------------------------------------------------------------------ */

/* Interfaces and interface adapters. */
void it_interface_list(it_interface_t *interfaces, size_t *num_interfaces,
		       size_t *total_interfaces);
it_status_t it_ia_create(const char *name, uint32_t major_version,
			 uint32_t minor_version, it_ia_handle_t *ia_handle);
it_status_t it_ia_free(it_ia_handle_t ia_handle);
it_status_t it_ia_query(it_ia_handle_t ia_handle, it_ia_info_t **ia_info);
void it_ia_info_free(it_ia_info_t *ia_info);

/* Addresses and paths. */
it_status_t it_get_pathinfo(it_ia_handle_t ia_handle, size_t spigot_id,
			    const it_net_addr_t *net_addr, size_t *num_paths,
			    size_t *total_paths, it_path_t *paths);
it_status_t it_convert_net_addr(const it_net_addr_t *source_addr,
				it_net_addr_type_t addr_type,
				it_net_addr_t *destination_addr);
it_rdma_addr_t it_make_rdma_addr_absolute(void *addr);
it_rdma_addr_t it_make_rdma_addr_relative(it_length_t offset);
uint64_t it_hton64(uint64_t hostint);
uint64_t it_ntoh64(uint64_t netint);

/* Protection zones. */
it_status_t it_pz_create(it_ia_handle_t ia_handle, it_pz_handle_t *pz_handle);
it_status_t it_pz_query(it_pz_handle_t pz_handle, it_pz_param_mask_t mask,
			it_pz_param_t *params);
it_status_t it_pz_free(it_pz_handle_t pz_handle);

/* Local memory regions. */
it_status_t it_lmr_create10(it_pz_handle_t pz_handle, void *addr,
			    it_length_t length, it_mem_priv_t privs,
			    it_lmr_flag_t flags, uint32_t shared_id,
			    it_lmr_handle_t *lmr_handle,
			    it_rmr_context_t *rmr_context);
it_status_t it_lmr_create20(it_pz_handle_t pz_handle, void *addr,
			    it_length_t length, it_addr_mode_t addr_mode,
			    it_mem_priv_t privs, it_lmr_flag_t flags,
			    uint32_t shared_id, it_lmr_handle_t *lmr_handle,
			    it_rmr_context_t *rmr_context);
it_status_t it_lmr_create21(it_pz_handle_t pz_handle, void *addr,
			    it_iobl_t *iobl, it_length_t length,
			    it_addr_mode_t addr_mode, it_mem_priv_t privs,
			    it_lmr_flag_t flags, uint32_t shared_id,
			    it_lmr_handle_t *lmr_handle,
			    it_rmr_context_t *rmr_context);
it_status_t it_lmr_create_unlinked(it_pz_handle_t pz_handle,
				   size_t iobl_num_elts, it_lmr_flag_t flags,
				   uint32_t shared_id,
				   it_lmr_handle_t *lmr_handle);
it_status_t it_lmr_link(it_lmr_handle_t lmr_handle, const void *addr,
			const it_iobl_t *iobl, it_length_t length,
			it_addr_mode_t addr_mode, it_mem_priv_t privs,
			it_ep_handle_t ep_handle, it_dto_cookie_t cookie,
			it_dto_flags_t dto_flags,
			it_rmr_context_t *rmr_context);
it_status_t it_lmr_unlink(it_lmr_handle_t lmr_handle, it_ep_handle_t ep_handle,
			  it_dto_cookie_t cookie, it_dto_flags_t dto_flags);
it_status_t it_lmr_modify(it_lmr_handle_t lmr_handle, it_lmr_param_mask_t mask,
			  const it_lmr_param_t *params);
it_status_t it_lmr_query(it_lmr_handle_t lmr_handle, it_lmr_param_mask_t mask,
			 it_lmr_param_t *params);
it_status_t it_lmr_free(it_lmr_handle_t lmr_handle);
it_status_t it_lmr_flush_to_mem(const it_lmr_triplet_t *local_segments,
				size_t num_segments);
it_status_t it_lmr_refresh_from_mem(const it_lmr_triplet_t *local_segments,
				    size_t num_segments);
it_status_t it_mem_map(it_ia_handle_t ia_handle, void *vaddr,
		       uint64_t aspace_id, size_t len, it_io_addr_t *io_addr,
		       size_t *mapped_len);
it_status_t it_mem_unmap(it_ia_handle_t ia_handle, it_io_addr_t io_addr,
			 size_t mapped_len);

/* Remote memory regions (windows). */
it_status_t it_rmr_create10(it_pz_handle_t pz_handle,
			    it_rmr_handle_t *rmr_handle);
it_status_t it_rmr_create20(it_pz_handle_t pz_handle, it_rmr_type_t rmr_type,
			    it_rmr_handle_t *rmr_handle);
it_status_t it_rmr_bind10(it_rmr_handle_t rmr_handle,
			  it_lmr_handle_t lmr_handle, void *addr,
			  it_length_t length, it_mem_priv_t privs,
			  it_ep_handle_t ep_handle, it_dto_cookie_t cookie,
			  it_dto_flags_t dto_flags,
			  it_rmr_context_t *rmr_context);
it_status_t it_rmr_link(it_rmr_handle_t rmr_handle, it_lmr_handle_t lmr_handle,
			void *addr, it_length_t length,
			it_addr_mode_t addr_mode, it_mem_priv_t privs,
			it_ep_handle_t ep_handle, it_dto_cookie_t cookie,
			it_dto_flags_t dto_flags,
			it_rmr_context_t *rmr_context);
it_status_t it_rmr_unlink(it_rmr_handle_t rmr_handle, it_ep_handle_t ep_handle,
			  it_dto_cookie_t cookie, it_dto_flags_t dto_flags);
it_status_t it_rmr_query(it_rmr_handle_t rmr_handle, it_rmr_param_mask_t mask,
			 it_rmr_param_t *params);
it_status_t it_rmr_free(it_rmr_handle_t rmr_handle);

/* Event dispatchers. */
it_status_t it_evd_create(it_ia_handle_t ia_handle,
			  it_event_type_t event_number, it_evd_flags_t evd_flag,
			  size_t sevd_queue_size, size_t sevd_threshold,
			  it_evd_handle_t aevd_handle,
			  it_evd_handle_t *evd_handle, int *fd);
it_status_t it_evd_wait(it_evd_handle_t evd_handle, uint64_t timeout,
			it_event_t *event, size_t *nmore);
it_status_t it_evd_dequeue(it_evd_handle_t evd_handle, it_event_t *event);
/* Extension: up to 'count' events at once; *dequeued says how many. */
it_status_t it_evd_dequeue_n(it_evd_handle_t evd_handle, int count,
			     it_event_t *events, int *dequeued);
it_status_t it_evd_post_se(it_evd_handle_t evd_handle, const void *event);
it_status_t it_evd_modify(it_evd_handle_t evd_handle, it_evd_param_mask_t mask,
			  const it_evd_param_t *params);
it_status_t it_evd_query(it_evd_handle_t evd_handle, it_evd_param_mask_t mask,
			 it_evd_param_t *params);
it_status_t it_evd_callback_attach(it_evd_handle_t evd_handle,
				   it_evd_callback_rtn_t callback, void *arg);
it_status_t it_evd_callback_detach(it_evd_handle_t evd_handle);
it_status_t it_evd_free(it_evd_handle_t evd_handle);

/* Endpoints. */
it_status_t it_ep_rc_create(it_pz_handle_t pz_handle,
			    it_evd_handle_t request_sevd_handle,
			    it_evd_handle_t recv_sevd_handle,
			    it_evd_handle_t connect_sevd_handle,
			    it_ep_rc_creation_flags_t flags,
			    const it_ep_attributes_t *ep_attr,
			    it_ep_handle_t *ep_handle);
it_status_t it_ep_ud_create(it_pz_handle_t pz_handle,
			    it_evd_handle_t request_sevd_handle,
			    it_evd_handle_t recv_sevd_handle,
			    const it_ep_attributes_t *ep_attr, size_t spigot_id,
			    it_ep_handle_t *ep_handle);
it_status_t it_ep_query(it_ep_handle_t ep_handle, it_ep_param_mask_t mask,
			it_ep_param_t *params);
it_status_t it_ep_modify(it_ep_handle_t ep_handle, it_ep_param_mask_t mask,
			 const it_ep_attributes_t *ep_attr);
it_status_t it_ep_reset(it_ep_handle_t ep_handle);
it_status_t it_ep_free(it_ep_handle_t ep_handle);

/* Connection management. */
it_status_t it_listen_create(it_ia_handle_t ia_handle, size_t spigot_id,
			     it_evd_handle_t connect_evd,
			     it_listen_flags_t flags, it_conn_qual_t *conn_qual,
			     it_listen_handle_t *listen_handle);
it_status_t it_listen_query(it_listen_handle_t listen_handle,
			    it_listen_param_mask_t mask,
			    it_listen_param_t *params);
it_status_t it_listen_free(it_listen_handle_t listen_handle);
it_status_t it_ep_connect(it_ep_handle_t ep_handle, const it_path_t *path,
			  const it_conn_attributes_t *conn_attr,
			  const it_conn_qual_t *connect_qual,
			  it_cn_est_flags_t cn_est_flags,
			  const unsigned char *private_data,
			  size_t private_data_length);
it_status_t it_ep_accept(it_ep_handle_t ep_handle,
			 it_cn_est_identifier_t cn_est_id,
			 const unsigned char *private_data,
			 size_t private_data_length);
it_status_t it_reject(it_cn_est_identifier_t cn_est_id,
		      const unsigned char *private_data,
		      size_t private_data_length);
it_status_t it_handoff(const it_conn_qual_t *conn_qual, size_t spigot_id,
		       it_cn_est_identifier_t cn_est_id);
it_status_t it_ep_disconnect(it_ep_handle_t ep_handle,
			     const unsigned char *private_data,
			     size_t private_data_length);
it_status_t it_socket_convert(int sd, it_ep_handle_t ep_handle,
			      it_sc_flags_t flags, const unsigned char *msg,
			      size_t len);

/* UD service resolution. */
it_status_t it_ud_service_request_handle_create(
	const it_conn_qual_t *conn_qual, it_evd_handle_t reply_evd,
	const it_path_t *destination_path, const unsigned char *private_data,
	size_t private_data_length, it_ud_svc_req_handle_t *ud_svc_handle);
it_status_t
it_ud_service_request_handle_free(it_ud_svc_req_handle_t ud_svc_handle);
it_status_t
it_ud_service_request_handle_query(it_ud_svc_req_handle_t ud_svc_handle,
				   it_ud_svc_req_param_mask_t mask,
				   it_ud_svc_req_param_t *ud_svc_handle_info);
it_status_t it_ud_service_request(it_ud_svc_req_handle_t ud_svc_handle);
it_status_t it_ud_service_reply(it_ud_svc_req_identifier_t ud_svc_req_id,
				it_ud_svc_req_status_t status,
				it_remote_ep_info_t ep_info,
				const unsigned char *private_data,
				size_t private_data_length);

/* UD address handles. */
it_status_t it_address_handle_create(it_pz_handle_t pz_handle,
				     const it_path_t *destination_path,
				     it_ah_flags_t ah_flags,
				     it_addr_handle_t *addr_handle);
it_status_t it_address_handle_modify(it_addr_handle_t addr_handle,
				     it_addr_param_mask_t mask,
				     const it_addr_param_t *params);
it_status_t it_address_handle_query(it_addr_handle_t addr_handle,
				    it_addr_param_mask_t mask,
				    it_addr_param_t *params);
it_status_t it_address_handle_free(it_addr_handle_t addr_handle);

/* Data transfer.  it_post_recv takes an EP or an SRQ handle. */
it_status_t it_post_send(it_ep_handle_t ep_handle,
			 const it_lmr_triplet_t *local_segments,
			 size_t num_segments, it_dto_cookie_t cookie,
			 it_dto_flags_t dto_flags);
it_status_t it_post_send_and_unlink(it_ep_handle_t ep_handle,
				    const it_lmr_triplet_t *local_segments,
				    size_t num_segments, it_dto_cookie_t cookie,
				    it_dto_flags_t dto_flags,
				    it_rmr_context_t rmr_context);
it_status_t it_post_sendto(it_ep_handle_t ep_handle,
			   const it_lmr_triplet_t *local_segments,
			   size_t num_segments, it_dto_cookie_t cookie,
			   it_dto_flags_t dto_flags,
			   const it_dg_remote_ep_addr_t *remote_ep_addr);
it_status_t it_post_recv(it_handle_t handle,
			 const it_lmr_triplet_t *local_segments,
			 size_t num_segments, it_dto_cookie_t cookie,
			 it_dto_flags_t dto_flags);
it_status_t it_post_recvfrom(it_ep_handle_t ep_handle,
			     const it_lmr_triplet_t *local_segments,
			     size_t num_segments, it_dto_cookie_t cookie,
			     it_dto_flags_t dto_flags);
it_status_t it_post_rdma_read(it_ep_handle_t ep_handle,
			      const it_lmr_triplet_t *local_segments,
			      size_t num_segments, it_dto_cookie_t cookie,
			      it_dto_flags_t dto_flags,
			      it_rdma_addr_t rdma_addr,
			      it_rmr_context_t rmr_context);
it_status_t it_post_rdma_read_to_rmr(
	it_ep_handle_t ep_handle, const it_rmr_triplet_t *local_segments,
	size_t num_segments, it_dto_cookie_t cookie, it_dto_flags_t dto_flags,
	it_rdma_addr_t rdma_addr, it_rmr_context_t rmr_context);
it_status_t it_post_rdma_write(it_ep_handle_t ep_handle,
			       const it_lmr_triplet_t *local_segments,
			       size_t num_segments, it_dto_cookie_t cookie,
			       it_dto_flags_t dto_flags,
			       it_rdma_addr_t rdma_addr,
			       it_rmr_context_t rmr_context);
it_status_t it_post_atomic(it_ep_handle_t ep_handle, it_atomic_op_t op,
			   uint64_t swap_or_add, uint64_t compare,
			   const it_lmr_triplet_t *result,
			   it_dto_cookie_t cookie, it_dto_flags_t dto_flags,
			   it_rdma_addr_t rdma_addr,
			   it_rmr_context_t rmr_context);

/* Shared receive queues. */
it_status_t it_srq_create(it_pz_handle_t pz_handle, size_t max_recv_segments,
			  size_t max_recv_dtos, it_srq_handle_t *srq_handle);
it_status_t it_srq_modify(it_srq_handle_t srq_handle, it_srq_param_mask_t mask,
			  const it_srq_param_t *params);
it_status_t it_srq_query(it_srq_handle_t srq_handle, it_srq_param_mask_t mask,
			 it_srq_param_t *params);
it_status_t it_srq_free(it_srq_handle_t srq_handle);

/* Any handle. */
it_status_t it_get_consumer_context(it_handle_t handle, it_context_t *context);
it_status_t it_set_consumer_context(it_handle_t handle, it_context_t context);
it_status_t it_get_handle_type(it_handle_t handle,
			       it_handle_type_enum_t *type_of_handle);

#ifdef __cplusplus
}
#endif

#endif /* IT_API_H */
