/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The OpenRDMA verbs core: the RNIC programming interface that the IT-API
 * and DAT front ends are built on, and that every transport implements.
 *
 * It maps one-to-one onto libibverbs and librdmacm: the same objects, the
 * same work-request and completion model, the same numeric values for
 * opcodes, statuses, access flags, QP states and attribute masks.  Functions
 * return 0 or a negative OPENRDMA_E* code (see openrdma/errno.h); polling
 * returns a count.  The normative description is in openrdma_verbs(3) and
 * the per-object man pages.
 *
 * Object structures are visible so that the data path needs no accessor
 * calls, as in libibverbs; their fields are read-only for applications.
 */
#ifndef OPENRDMA_VERBS_H
#define OPENRDMA_VERBS_H

#include <stdint.h>
#include <stddef.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <openrdma/errno.h>

#ifdef __cplusplus
extern "C" {
#endif

struct openrdma_device;
struct openrdma_context;
struct openrdma_transport_ops;

/* ------------------------------------------------------------------ */
/* Object header                                                      */
/* ------------------------------------------------------------------ */

/* Type tags: one compare validates a handle (openrdma_obj_check). */
enum openrdma_obj_type {
	OPENRDMA_OBJ_FREED = 0,
	OPENRDMA_OBJ_CONTEXT = 0x4f520001,
	OPENRDMA_OBJ_PD,
	OPENRDMA_OBJ_MR,
	OPENRDMA_OBJ_MW,
	OPENRDMA_OBJ_CQ,
	OPENRDMA_OBJ_COMP_CHANNEL,
	OPENRDMA_OBJ_QP,
	OPENRDMA_OBJ_SRQ,
	OPENRDMA_OBJ_AH,
	OPENRDMA_OBJ_CM_CHANNEL,
	OPENRDMA_OBJ_CM_ID,
	OPENRDMA_OBJ_TYPE_MAX
};

/*
 * Common header, first member of every object.  'ref' counts the children
 * and in-flight users that keep the object alive; destroying an object with
 * ref > 1 fails with -OPENRDMA_EBUSY.
 */
struct openrdma_obj {
	uint32_t type; /* enum openrdma_obj_type */
	atomic_uint ref;
	struct openrdma_context *ctx;
	struct openrdma_obj *parent; /* holds a reference on it */
	void *user_context; /* application's, never touched */
};

/* ------------------------------------------------------------------ */
/* Devices, contexts, ports                                           */
/* ------------------------------------------------------------------ */

enum openrdma_node_transport {
	OPENRDMA_NODE_SOFTWARE = 0, /* self, shm, tcp */
	OPENRDMA_NODE_IB = 1, /* InfiniBand and RoCE */
	OPENRDMA_NODE_IWARP = 2,
};

enum openrdma_link_layer {
	OPENRDMA_LINK_LAYER_UNSPECIFIED = 0,
	OPENRDMA_LINK_LAYER_INFINIBAND = 1,
	OPENRDMA_LINK_LAYER_ETHERNET = 2,
	OPENRDMA_LINK_LAYER_LOOPBACK = 3, /* in-process or in-host */
};

enum openrdma_atomic_cap {
	OPENRDMA_ATOMIC_NONE = 0,
	OPENRDMA_ATOMIC_HCA = 1, /* atomic among this device's operations */
	OPENRDMA_ATOMIC_GLOB = 2, /* atomic with the CPU too */
};

/* openrdma_device_attr.device_cap_flags */
enum {
	OPENRDMA_DEVICE_RC = 1 << 0,
	OPENRDMA_DEVICE_UD = 1 << 1,
	OPENRDMA_DEVICE_SRQ = 1 << 2,
	OPENRDMA_DEVICE_MW_TYPE1 = 1 << 3,
	OPENRDMA_DEVICE_MW_TYPE2 = 1 << 4,
	OPENRDMA_DEVICE_SEND_INV = 1 << 5, /* SEND_WITH_INV and LOCAL_INV */
	OPENRDMA_DEVICE_ZERO_BASED =
		1 << 6, /* zero-based MRs (relative addressing) */
	OPENRDMA_DEVICE_THREE_WAY = 1 << 7, /* three-way connection handshake */
	OPENRDMA_DEVICE_RNR_RETRY = 1 << 8, /* receiver-not-ready retries */
	OPENRDMA_DEVICE_SRQ_LIMIT = 1 << 9, /* SRQ limit event */
	OPENRDMA_DEVICE_CROSS_PROCESS = 1 << 10, /* peers in other processes */
	OPENRDMA_DEVICE_CROSS_HOST = 1 << 11, /* peers on other hosts */
	OPENRDMA_DEVICE_PEER_CAN_READ_RMR = 1 << 12, /* RDMA read into an MW */
	OPENRDMA_DEVICE_IMM = 1 << 13, /* SEND and RDMA WRITE with immediate */
	/* every error of openrdma_semantics(7) detected, with its status */
	OPENRDMA_DEVICE_EXACT_ERRORS = 1 << 14,
	OPENRDMA_DEVICE_SOLICITED = 1 << 15, /* solicited-only CQ arming */
	/* openrdma_cm_adopt_socket(): a connected TCP socket becomes an RC
	 * connection */
	OPENRDMA_DEVICE_SOCKET_ADOPT = 1 << 16,
};

struct openrdma_device_attr {
	char transport[16]; /* "self", "tcp", "shm", "verbs" */
	char fw_ver[64];
	uint64_t node_guid;
	uint32_t vendor_id;
	uint32_t vendor_part_id;
	uint32_t hw_ver;
	enum openrdma_node_transport node_transport;
	uint64_t max_mr_size;
	uint64_t page_size_cap;
	uint64_t max_msg_size; /* RC send and RDMA length limit */
	uint32_t device_cap_flags; /* OPENRDMA_DEVICE_* */
	int max_qp;
	int max_qp_wr;
	int max_sge;
	int max_sge_rd;
	int max_inline_data;
	int max_cq;
	int max_cqe;
	int max_mr;
	int max_pd;
	int max_qp_rd_atom; /* incoming RDMA reads/atomics in flight (IRD) */
	int max_qp_init_rd_atom; /* outgoing ones (ORD) */
	enum openrdma_atomic_cap atomic_cap;
	int max_mw;
	int max_ah;
	int max_srq;
	int max_srq_wr;
	int max_srq_sge;
	int max_pkeys;
	uint8_t phys_port_cnt;
	/* private data lengths carried by each CM message */
	uint16_t max_pdata_connect;
	uint16_t max_pdata_accept;
	uint16_t max_pdata_reject;
	uint16_t max_pdata_disconnect;
	uint32_t max_ud_msg_size; /* UD payload, without the GRH */
};

enum openrdma_port_state {
	OPENRDMA_PORT_NOP = 0,
	OPENRDMA_PORT_DOWN = 1,
	OPENRDMA_PORT_INIT = 2,
	OPENRDMA_PORT_ARMED = 3,
	OPENRDMA_PORT_ACTIVE = 4,
	OPENRDMA_PORT_ACTIVE_DEFER = 5,
};

enum openrdma_mtu {
	OPENRDMA_MTU_256 = 1,
	OPENRDMA_MTU_512 = 2,
	OPENRDMA_MTU_1024 = 3,
	OPENRDMA_MTU_2048 = 4,
	OPENRDMA_MTU_4096 = 5,
};

union openrdma_gid {
	uint8_t raw[16];
	struct {
		uint64_t subnet_prefix;
		uint64_t interface_id;
	} global;
};

struct openrdma_port_attr {
	enum openrdma_port_state state;
	enum openrdma_mtu max_mtu;
	enum openrdma_mtu active_mtu;
	int gid_tbl_len;
	uint32_t max_msg_sz;
	uint16_t lid;
	uint8_t link_layer; /* enum openrdma_link_layer */
	/*
	 * The port's network address: what peers pass to openrdma_cm_connect()
	 * and put in an openrdma_ah_attr (IPv4 or IPv6; port number 0 unless
	 * the transport gives each context its own, as UD over UDP does).
	 */
	struct sockaddr_storage addr;
};

/*
 * Devices are found by the registry (see openrdma/registry.h).  The list
 * and its devices live until openrdma_device_list_free().
 */
int openrdma_device_list_get(struct openrdma_device ***list_out, int *num_out);
void openrdma_device_list_free(struct openrdma_device **list);
/* Finds one device by interface name ("self0", "tcp0", "rxe0-1"). */
int openrdma_device_find(const char *name, struct openrdma_device **dev_out);
const char *openrdma_device_name(const struct openrdma_device *dev);
const char *openrdma_device_transport_name(const struct openrdma_device *dev);

enum openrdma_thread_mode {
	OPENRDMA_THREAD_SAFE = 0, /* any thread, any time (default) */
	OPENRDMA_THREAD_SINGLE = 1, /* the application serializes all calls */
};

struct openrdma_context {
	struct openrdma_obj obj;
	struct openrdma_device *device;
	const struct openrdma_transport_ops *ops; /* filled, never NULL */
	enum openrdma_thread_mode thread_mode;
	int async_fd; /* readable while async events are queued */
};

int openrdma_device_open(struct openrdma_device *dev,
			 struct openrdma_context **ctx_out);
int openrdma_device_open_mode(struct openrdma_device *dev,
			      enum openrdma_thread_mode mode,
			      struct openrdma_context **ctx_out);
int openrdma_context_close(struct openrdma_context *ctx);
int openrdma_device_query(struct openrdma_context *ctx,
			  struct openrdma_device_attr *attr);
int openrdma_port_query(struct openrdma_context *ctx, uint8_t port_num,
			struct openrdma_port_attr *attr);
int openrdma_gid_query(struct openrdma_context *ctx, uint8_t port_num,
		       int index, union openrdma_gid *gid);

/* ------------------------------------------------------------------ */
/* Protection domains, memory regions, memory windows                 */
/* ------------------------------------------------------------------ */

struct openrdma_pd {
	struct openrdma_obj obj;
	uint32_t handle;
};

int openrdma_pd_alloc(struct openrdma_context *ctx,
		      struct openrdma_pd **pd_out);
int openrdma_pd_dealloc(struct openrdma_pd *pd);

/* Access flags: the libibverbs values. */
enum openrdma_access_flags {
	OPENRDMA_ACCESS_LOCAL_WRITE = 1 << 0,
	OPENRDMA_ACCESS_REMOTE_WRITE = 1 << 1,
	OPENRDMA_ACCESS_REMOTE_READ = 1 << 2,
	OPENRDMA_ACCESS_REMOTE_ATOMIC = 1 << 3,
	OPENRDMA_ACCESS_MW_BIND = 1 << 4,
	OPENRDMA_ACCESS_ZERO_BASED = 1 << 5,
};
#define OPENRDMA_ACCESS_ALL                                            \
	(OPENRDMA_ACCESS_LOCAL_WRITE | OPENRDMA_ACCESS_REMOTE_WRITE |  \
	 OPENRDMA_ACCESS_REMOTE_READ | OPENRDMA_ACCESS_REMOTE_ATOMIC | \
	 OPENRDMA_ACCESS_MW_BIND | OPENRDMA_ACCESS_ZERO_BASED)

struct openrdma_mr {
	struct openrdma_obj obj;
	struct openrdma_pd *pd;
	void *addr;
	size_t length;
	uint32_t lkey;
	uint32_t rkey;
	int access; /* OPENRDMA_ACCESS_* */
};

/*
 * Registers [addr, addr + length).  length 0 is allowed (an MR that no
 * access can reach except zero-length ones).  A ZERO_BASED MR is addressed
 * remotely by offset from its start rather than by virtual address.
 */
int openrdma_mr_reg(struct openrdma_pd *pd, void *addr, size_t length,
		    int access, struct openrdma_mr **mr_out);
/* openrdma_mr_rereg() flags: which of the arguments apply. */
enum {
	OPENRDMA_REREG_CHANGE_TRANSLATION = 1 << 0,
	OPENRDMA_REREG_CHANGE_PD = 1 << 1,
	OPENRDMA_REREG_CHANGE_ACCESS = 1 << 2,
};
int openrdma_mr_rereg(struct openrdma_mr *mr, int flags, struct openrdma_pd *pd,
		      void *addr, size_t length, int access);
int openrdma_mr_dereg(struct openrdma_mr *mr);

enum openrdma_mw_type {
	OPENRDMA_MW_TYPE_1 = 1,
	OPENRDMA_MW_TYPE_2 = 2,
};

struct openrdma_mw {
	struct openrdma_obj obj;
	struct openrdma_pd *pd;
	uint32_t rkey; /* current key, set at allocation; a bind moves it */
	enum openrdma_mw_type type;
};

struct openrdma_mw_bind_info {
	struct openrdma_mr *mr;
	uint64_t addr;
	uint64_t length;
	unsigned int mw_access_flags; /* REMOTE_* and ZERO_BASED */
};

int openrdma_mw_alloc(struct openrdma_pd *pd, enum openrdma_mw_type type,
		      struct openrdma_mw **mw_out);
int openrdma_mw_dealloc(struct openrdma_mw *mw);

/* ------------------------------------------------------------------ */
/* Completion queues and completion channels                          */
/* ------------------------------------------------------------------ */

/* Completion statuses: the libibverbs values. */
enum openrdma_wc_status {
	OPENRDMA_WC_SUCCESS = 0,
	OPENRDMA_WC_LOC_LEN_ERR = 1,
	OPENRDMA_WC_LOC_QP_OP_ERR = 2,
	OPENRDMA_WC_LOC_EEC_OP_ERR = 3,
	OPENRDMA_WC_LOC_PROT_ERR = 4,
	OPENRDMA_WC_WR_FLUSH_ERR = 5,
	OPENRDMA_WC_MW_BIND_ERR = 6,
	OPENRDMA_WC_BAD_RESP_ERR = 7,
	OPENRDMA_WC_LOC_ACCESS_ERR = 8,
	OPENRDMA_WC_REM_INV_REQ_ERR = 9,
	OPENRDMA_WC_REM_ACCESS_ERR = 10,
	OPENRDMA_WC_REM_OP_ERR = 11,
	OPENRDMA_WC_RETRY_EXC_ERR = 12,
	OPENRDMA_WC_RNR_RETRY_EXC_ERR = 13,
	OPENRDMA_WC_LOC_RDD_VIOL_ERR = 14,
	OPENRDMA_WC_REM_INV_RD_REQ_ERR = 15,
	OPENRDMA_WC_REM_ABORT_ERR = 16,
	OPENRDMA_WC_INV_EECN_ERR = 17,
	OPENRDMA_WC_INV_EEC_STATE_ERR = 18,
	OPENRDMA_WC_FATAL_ERR = 19,
	OPENRDMA_WC_RESP_TIMEOUT_ERR = 20,
	OPENRDMA_WC_GENERAL_ERR = 21,
	OPENRDMA_WC_STATUS_MAX
};

const char *openrdma_wc_status_str(enum openrdma_wc_status status);

enum openrdma_wc_opcode {
	OPENRDMA_WC_SEND = 0,
	OPENRDMA_WC_RDMA_WRITE = 1,
	OPENRDMA_WC_RDMA_READ = 2,
	OPENRDMA_WC_COMP_SWAP = 3,
	OPENRDMA_WC_FETCH_ADD = 4,
	OPENRDMA_WC_BIND_MW = 5,
	OPENRDMA_WC_LOCAL_INV = 6,
	OPENRDMA_WC_RECV = 1 << 7,
	OPENRDMA_WC_RECV_RDMA_WITH_IMM = (1 << 7) + 1,
};

enum {
	OPENRDMA_WC_GRH = 1 << 0, /* the first 40 bytes hold a GRH (UD) */
	OPENRDMA_WC_WITH_IMM = 1 << 1,
	OPENRDMA_WC_WITH_INV = 1 << 3,
};

/* Bytes at the start of every UD receive buffer that hold the GRH. */
#define OPENRDMA_GRH_LEN 40

struct openrdma_grh {
	uint32_t version_tclass_flow;
	uint16_t paylen;
	uint8_t next_hdr;
	uint8_t hop_limit;
	union openrdma_gid sgid;
	union openrdma_gid dgid;
};

struct openrdma_wc {
	uint64_t wr_id;
	enum openrdma_wc_status status;
	enum openrdma_wc_opcode opcode;
	uint32_t vendor_err;
	uint32_t byte_len;
	union {
		uint32_t imm_data; /* network byte order */
		uint32_t invalidated_rkey;
	};
	uint32_t qp_num;
	uint32_t src_qp;
	unsigned int wc_flags;
	uint16_t pkey_index;
	uint16_t slid; /* software transports: the sender's peer index */
	uint8_t sl;
	uint8_t dlid_path_bits;
};

/*
 * A completion channel: its fd is readable while a notified CQ is pending.
 * Used with openrdma_cq_req_notify(), as ibv_comp_channel.
 */
struct openrdma_comp_channel {
	struct openrdma_obj obj;
	int fd;
};

int openrdma_comp_channel_create(struct openrdma_context *ctx,
				 struct openrdma_comp_channel **ch_out);
int openrdma_comp_channel_destroy(struct openrdma_comp_channel *ch);

struct openrdma_cq {
	struct openrdma_obj obj;
	struct openrdma_comp_channel *channel;
	void *cq_context;
	int cqe; /* capacity */
	uint32_t comp_events_completed; /* acknowledged notifications */
	uint32_t async_events_completed;
};

int openrdma_cq_create(struct openrdma_context *ctx, int cqe, void *cq_context,
		       struct openrdma_comp_channel *channel, int comp_vector,
		       struct openrdma_cq **cq_out);
int openrdma_cq_destroy(struct openrdma_cq *cq);
int openrdma_cq_resize(struct openrdma_cq *cq, int cqe);
/*
 * Returns the number of completions written to wc (0..num_entries) or a
 * negative code; -OPENRDMA_EOVERFLOW once the CQ has overrun.
 */
int openrdma_cq_poll(struct openrdma_cq *cq, int num_entries,
		     struct openrdma_wc *wc);
/* Arms the CQ: the next (solicited) completion signals its channel once. */
int openrdma_cq_req_notify(struct openrdma_cq *cq, int solicited_only);
/*
 * Takes one notification from the channel: blocks unless the channel's fd
 * was made non-blocking, in which case -OPENRDMA_EAGAIN means none.
 */
int openrdma_cq_event_get(struct openrdma_comp_channel *ch,
			  struct openrdma_cq **cq_out, void **cq_context_out);
void openrdma_cq_events_ack(struct openrdma_cq *cq, unsigned int nevents);

/* ------------------------------------------------------------------ */
/* Shared receive queues                                              */
/* ------------------------------------------------------------------ */

struct openrdma_srq_attr {
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t srq_limit; /* SRQ_LIMIT_REACHED fires below this; 0 = off */
};

struct openrdma_srq_init_attr {
	void *srq_context;
	struct openrdma_srq_attr attr;
};

enum openrdma_srq_attr_mask {
	OPENRDMA_SRQ_MAX_WR = 1 << 0, /* resize */
	OPENRDMA_SRQ_LIMIT = 1 << 1, /* arm the limit event */
};

struct openrdma_srq {
	struct openrdma_obj obj;
	struct openrdma_pd *pd;
	void *srq_context;
	uint32_t max_wr; /* granted */
	uint32_t max_sge; /* granted */
};

struct openrdma_recv_wr;

int openrdma_srq_create(struct openrdma_pd *pd,
			struct openrdma_srq_init_attr *init_attr,
			struct openrdma_srq **srq_out);
int openrdma_srq_modify(struct openrdma_srq *srq,
			struct openrdma_srq_attr *attr, int attr_mask);
int openrdma_srq_query(struct openrdma_srq *srq,
		       struct openrdma_srq_attr *attr);
int openrdma_srq_destroy(struct openrdma_srq *srq);
int openrdma_srq_post_recv(struct openrdma_srq *srq,
			   struct openrdma_recv_wr *wr,
			   struct openrdma_recv_wr **bad_wr);

/* ------------------------------------------------------------------ */
/* Address handles                                                    */
/* ------------------------------------------------------------------ */

struct openrdma_global_route {
	union openrdma_gid dgid;
	uint32_t flow_label;
	uint8_t sgid_index;
	uint8_t hop_limit;
	uint8_t traffic_class;
};

struct openrdma_ah_attr {
	struct openrdma_global_route grh;
	uint16_t dlid;
	uint8_t sl;
	uint8_t src_path_bits;
	uint8_t static_rate;
	uint8_t is_global;
	uint8_t port_num;
	/*
	 * The peer port's address, as openrdma_port_query() reports it.
	 * Software transports route by it; the verbs transport derives the
	 * GID from it when is_global is 0 and addr is set.
	 */
	struct sockaddr_storage addr;
};

struct openrdma_ah {
	struct openrdma_obj obj;
	struct openrdma_pd *pd;
};

int openrdma_ah_create(struct openrdma_pd *pd, struct openrdma_ah_attr *attr,
		       struct openrdma_ah **ah_out);
int openrdma_ah_destroy(struct openrdma_ah *ah);
/* Fills attr to reply to the sender of a UD receive, as ibv_init_ah_from_wc. */
int openrdma_ah_attr_from_wc(struct openrdma_context *ctx, uint8_t port_num,
			     const struct openrdma_wc *wc,
			     const struct openrdma_grh *grh,
			     struct openrdma_ah_attr *attr);

/* ------------------------------------------------------------------ */
/* Queue pairs and work requests                                      */
/* ------------------------------------------------------------------ */

enum openrdma_qp_type {
	OPENRDMA_QPT_RC = 2,
	OPENRDMA_QPT_UD = 4,
};

struct openrdma_qp_cap {
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
};

struct openrdma_qp_init_attr {
	void *qp_context;
	struct openrdma_cq *send_cq;
	struct openrdma_cq *recv_cq;
	struct openrdma_srq *srq; /* NULL: the QP has its own RQ */
	struct openrdma_qp_cap cap; /* in: wanted; out: granted */
	enum openrdma_qp_type qp_type;
	int sq_sig_all; /* every send WR is signaled */
};

enum openrdma_qp_state {
	OPENRDMA_QPS_RESET = 0,
	OPENRDMA_QPS_INIT = 1,
	OPENRDMA_QPS_RTR = 2,
	OPENRDMA_QPS_RTS = 3,
	OPENRDMA_QPS_SQD = 4,
	OPENRDMA_QPS_SQE = 5,
	OPENRDMA_QPS_ERR = 6,
	OPENRDMA_QPS_UNKNOWN = 7,
};

const char *openrdma_qp_state_str(enum openrdma_qp_state state);

/* openrdma_qp_modify() attribute mask: the libibverbs values. */
enum openrdma_qp_attr_mask {
	OPENRDMA_QP_STATE = 1 << 0,
	OPENRDMA_QP_CUR_STATE = 1 << 1,
	OPENRDMA_QP_EN_SQD_ASYNC_NOTIFY = 1 << 2,
	OPENRDMA_QP_ACCESS_FLAGS = 1 << 3,
	OPENRDMA_QP_PKEY_INDEX = 1 << 4,
	OPENRDMA_QP_PORT = 1 << 5,
	OPENRDMA_QP_QKEY = 1 << 6,
	OPENRDMA_QP_AV = 1 << 7,
	OPENRDMA_QP_PATH_MTU = 1 << 8,
	OPENRDMA_QP_TIMEOUT = 1 << 9,
	OPENRDMA_QP_RETRY_CNT = 1 << 10,
	OPENRDMA_QP_RNR_RETRY = 1 << 11,
	OPENRDMA_QP_RQ_PSN = 1 << 12,
	OPENRDMA_QP_MAX_QP_RD_ATOMIC = 1 << 13,
	OPENRDMA_QP_ALT_PATH = 1 << 14,
	OPENRDMA_QP_MIN_RNR_TIMER = 1 << 15,
	OPENRDMA_QP_SQ_PSN = 1 << 16,
	OPENRDMA_QP_MAX_DEST_RD_ATOMIC = 1 << 17,
	OPENRDMA_QP_PATH_MIG_STATE = 1 << 18,
	OPENRDMA_QP_CAP = 1 << 19,
	OPENRDMA_QP_DEST_QPN = 1 << 20,
	OPENRDMA_QP_ATTR_MASK_ALL = (1 << 21) - 1,
};

struct openrdma_qp_attr {
	enum openrdma_qp_state qp_state;
	enum openrdma_qp_state cur_qp_state;
	enum openrdma_mtu path_mtu;
	uint32_t qkey;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t dest_qp_num;
	unsigned int
		qp_access_flags; /* REMOTE_WRITE, REMOTE_READ, REMOTE_ATOMIC */
	struct openrdma_qp_cap cap;
	struct openrdma_ah_attr ah_attr;
	uint16_t pkey_index;
	uint8_t en_sqd_async_notify;
	uint8_t sq_draining;
	uint8_t max_rd_atomic; /* ORD */
	uint8_t max_dest_rd_atomic; /* IRD */
	uint8_t min_rnr_timer;
	uint8_t port_num;
	uint8_t timeout;
	uint8_t retry_cnt; /* 0..7 */
	uint8_t rnr_retry; /* 0..7; 7 = retry forever */
};

struct openrdma_qp {
	struct openrdma_obj obj;
	struct openrdma_pd *pd;
	struct openrdma_cq *send_cq;
	struct openrdma_cq *recv_cq;
	struct openrdma_srq *srq;
	void *qp_context;
	uint32_t qp_num;
	enum openrdma_qp_type qp_type;
	int sq_sig_all;
	struct openrdma_qp_cap cap; /* granted */
	_Atomic int state; /* enum openrdma_qp_state, kept by the core */
};

/* Work-request opcodes: the libibverbs values. */
enum openrdma_wr_opcode {
	OPENRDMA_WR_RDMA_WRITE = 0,
	OPENRDMA_WR_RDMA_WRITE_WITH_IMM = 1,
	OPENRDMA_WR_SEND = 2,
	OPENRDMA_WR_SEND_WITH_IMM = 3,
	OPENRDMA_WR_RDMA_READ = 4,
	OPENRDMA_WR_ATOMIC_CMP_AND_SWP = 5,
	OPENRDMA_WR_ATOMIC_FETCH_AND_ADD = 6,
	OPENRDMA_WR_LOCAL_INV = 7,
	OPENRDMA_WR_BIND_MW = 8,
	OPENRDMA_WR_SEND_WITH_INV = 9,
	OPENRDMA_WR_OPCODE_MAX
};

enum openrdma_send_flags {
	OPENRDMA_SEND_FENCE = 1 << 0,
	OPENRDMA_SEND_SIGNALED = 1 << 1,
	OPENRDMA_SEND_SOLICITED = 1 << 2,
	OPENRDMA_SEND_INLINE = 1 << 3,
};

struct openrdma_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

struct openrdma_send_wr {
	uint64_t wr_id;
	struct openrdma_send_wr *next;
	struct openrdma_sge *sg_list;
	int num_sge;
	enum openrdma_wr_opcode opcode;
	unsigned int send_flags;
	union {
		uint32_t imm_data; /* network byte order */
		uint32_t invalidate_rkey; /* SEND_WITH_INV, LOCAL_INV */
	};
	union {
		struct {
			uint64_t remote_addr;
			uint32_t rkey;
		} rdma;
		struct {
			uint64_t remote_addr;
			uint64_t compare_add;
			uint64_t swap;
			uint32_t rkey;
		} atomic;
		struct {
			struct openrdma_ah *ah;
			uint32_t remote_qpn;
			uint32_t remote_qkey;
		} ud;
	} wr;
	struct {
		struct openrdma_mw *mw;
		uint32_t rkey; /* new key: the MW's key with a new low byte */
		struct openrdma_mw_bind_info bind_info;
	} bind_mw;
};

struct openrdma_recv_wr {
	uint64_t wr_id;
	struct openrdma_recv_wr *next;
	struct openrdma_sge *sg_list;
	int num_sge;
};

int openrdma_qp_create(struct openrdma_pd *pd,
		       struct openrdma_qp_init_attr *init_attr,
		       struct openrdma_qp **qp_out);
int openrdma_qp_modify(struct openrdma_qp *qp, struct openrdma_qp_attr *attr,
		       int attr_mask);
int openrdma_qp_query(struct openrdma_qp *qp, struct openrdma_qp_attr *attr,
		      int attr_mask, struct openrdma_qp_init_attr *init_attr);
int openrdma_qp_destroy(struct openrdma_qp *qp);
/*
 * Post a list of work requests.  On failure *bad_wr points at the first WR
 * not posted; those before it are posted.
 */
int openrdma_qp_post_send(struct openrdma_qp *qp, struct openrdma_send_wr *wr,
			  struct openrdma_send_wr **bad_wr);
int openrdma_qp_post_recv(struct openrdma_qp *qp, struct openrdma_recv_wr *wr,
			  struct openrdma_recv_wr **bad_wr);
/* Binds a type 1 window: posts a BIND_MW work request on qp. */
int openrdma_mw_bind(struct openrdma_qp *qp, struct openrdma_mw *mw,
		     uint64_t wr_id, unsigned int send_flags,
		     const struct openrdma_mw_bind_info *info);
/* The next key for a type 2 bind: same index, new low byte. */
static inline uint32_t openrdma_inc_rkey(uint32_t rkey)
{
	return (rkey & 0xffffff00u) | ((rkey + 1) & 0xffu);
}

/* ------------------------------------------------------------------ */
/* Asynchronous events                                                */
/* ------------------------------------------------------------------ */

/* The libibverbs values. */
enum openrdma_event_type {
	OPENRDMA_EVENT_CQ_ERR = 0,
	OPENRDMA_EVENT_QP_FATAL = 1,
	OPENRDMA_EVENT_QP_REQ_ERR = 2,
	OPENRDMA_EVENT_QP_ACCESS_ERR = 3,
	OPENRDMA_EVENT_COMM_EST = 4,
	OPENRDMA_EVENT_SQ_DRAINED = 5,
	OPENRDMA_EVENT_PATH_MIG = 6,
	OPENRDMA_EVENT_PATH_MIG_ERR = 7,
	OPENRDMA_EVENT_DEVICE_FATAL = 8,
	OPENRDMA_EVENT_PORT_ACTIVE = 9,
	OPENRDMA_EVENT_PORT_ERR = 10,
	OPENRDMA_EVENT_LID_CHANGE = 11,
	OPENRDMA_EVENT_PKEY_CHANGE = 12,
	OPENRDMA_EVENT_SM_CHANGE = 13,
	OPENRDMA_EVENT_SRQ_ERR = 14,
	OPENRDMA_EVENT_SRQ_LIMIT_REACHED = 15,
	OPENRDMA_EVENT_QP_LAST_WQE_REACHED = 16,
	OPENRDMA_EVENT_CLIENT_REREGISTER = 17,
	OPENRDMA_EVENT_GID_CHANGE = 18,
	OPENRDMA_EVENT_TYPE_MAX
};

const char *openrdma_event_type_str(enum openrdma_event_type type);

struct openrdma_async_event {
	union {
		struct openrdma_cq *cq;
		struct openrdma_qp *qp;
		struct openrdma_srq *srq;
		int port_num;
	} element;
	enum openrdma_event_type event_type;
};

/*
 * Takes the next async event: -OPENRDMA_EAGAIN when none is queued
 * (ctx->async_fd is readable while one is).  Each event holds a reference
 * on its object until openrdma_async_event_ack().
 */
int openrdma_async_event_get(struct openrdma_context *ctx,
			     struct openrdma_async_event *event);
void openrdma_async_event_ack(struct openrdma_async_event *event);

/* ------------------------------------------------------------------ */
/* Connection manager (librdmacm model)                               */
/* ------------------------------------------------------------------ */

enum openrdma_cm_event_type {
	OPENRDMA_CM_EVENT_ADDR_RESOLVED = 0,
	OPENRDMA_CM_EVENT_ADDR_ERROR = 1,
	OPENRDMA_CM_EVENT_ROUTE_RESOLVED = 2,
	OPENRDMA_CM_EVENT_ROUTE_ERROR = 3,
	OPENRDMA_CM_EVENT_CONNECT_REQUEST = 4,
	OPENRDMA_CM_EVENT_CONNECT_RESPONSE = 5,
	OPENRDMA_CM_EVENT_CONNECT_ERROR = 6,
	OPENRDMA_CM_EVENT_UNREACHABLE = 7,
	OPENRDMA_CM_EVENT_REJECTED = 8,
	OPENRDMA_CM_EVENT_ESTABLISHED = 9,
	OPENRDMA_CM_EVENT_DISCONNECTED = 10,
	OPENRDMA_CM_EVENT_DEVICE_REMOVAL = 11,
	OPENRDMA_CM_EVENT_MULTICAST_JOIN = 12,
	OPENRDMA_CM_EVENT_MULTICAST_ERROR = 13,
	OPENRDMA_CM_EVENT_ADDR_CHANGE = 14,
	OPENRDMA_CM_EVENT_TIMEWAIT_EXIT = 15,
};

const char *openrdma_cm_event_str(enum openrdma_cm_event_type type);

/* Maximum private data any transport carries in one CM message. */
#define OPENRDMA_MAX_PRIVATE_DATA 256

struct openrdma_conn_param {
	const void *private_data;
	uint8_t private_data_len;
	uint8_t responder_resources; /* IRD */
	uint8_t initiator_depth; /* ORD */
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	/*
	 * connect only: ask for the three-way handshake.  The active side then
	 * gets CONNECT_RESPONSE and completes it with openrdma_cm_accept().
	 */
	uint8_t three_way;
};

struct openrdma_cm_channel {
	struct openrdma_obj obj;
	int fd; /* readable while events are queued */
};

enum openrdma_port_space {
	OPENRDMA_PS_TCP = 0x0106, /* reliable connected (RC) */
	OPENRDMA_PS_UDP = 0x0111, /* datagram (UD) */
};

struct openrdma_cm_id {
	struct openrdma_obj obj;
	struct openrdma_cm_channel *channel;
	struct openrdma_qp *qp;
	void *context;
	enum openrdma_port_space ps;
	uint8_t port_num;
};

struct openrdma_cm_event {
	struct openrdma_cm_id *id; /* for CONNECT_REQUEST: the new id */
	struct openrdma_cm_id *listen_id;
	enum openrdma_cm_event_type event;
	int status; /* 0 or -OPENRDMA_E*; for REJECTED, the reject reason */
	struct {
		uint8_t private_data[OPENRDMA_MAX_PRIVATE_DATA];
		uint8_t private_data_len;
		uint8_t responder_resources;
		uint8_t initiator_depth;
		uint32_t qp_num; /* the peer's */
	} param;
	struct sockaddr_storage src_addr; /* the peer's */
	struct sockaddr_storage dst_addr; /* ours */
};

int openrdma_cm_channel_create(struct openrdma_context *ctx,
			       struct openrdma_cm_channel **ch_out);
int openrdma_cm_channel_destroy(struct openrdma_cm_channel *ch);
int openrdma_cm_id_create(struct openrdma_context *ctx,
			  struct openrdma_cm_channel *ch, void *context,
			  enum openrdma_port_space ps,
			  struct openrdma_cm_id **id_out);
int openrdma_cm_id_destroy(struct openrdma_cm_id *id);
/*
 * Binds id to addr (port 0: an ephemeral port, reported by
 * openrdma_cm_local_addr) and listens.  backlog bounds the requests not
 * yet accepted or rejected; further ones are rejected by the transport.
 */
int openrdma_cm_listen(struct openrdma_cm_id *id, const struct sockaddr *addr,
		       int backlog);
int openrdma_cm_local_addr(struct openrdma_cm_id *id,
			   struct sockaddr_storage *addr);
int openrdma_cm_peer_addr(struct openrdma_cm_id *id,
			  struct sockaddr_storage *addr);
/*
 * Connects qp (in RESET or INIT) to the listener at dst.  Address and
 * route resolution are part of it; the outcome arrives on the channel:
 * ESTABLISHED, REJECTED, UNREACHABLE, CONNECT_ERROR, or CONNECT_RESPONSE
 * for a three-way handshake.
 */
int openrdma_cm_connect(struct openrdma_cm_id *id, struct openrdma_qp *qp,
			const struct sockaddr *dst,
			const struct openrdma_conn_param *param);
/* Passive side: accepts the request id with qp.  Active side: completes a
 * three-way handshake (qp NULL: the one given to connect). */
int openrdma_cm_accept(struct openrdma_cm_id *id, struct openrdma_qp *qp,
		       const struct openrdma_conn_param *param);
/*
 * Turns fd, a connected TCP socket whose peer makes the same call, into
 * the connection of qp (RC, in RESET or INIT) without a listener.  On
 * success the library owns fd and closes it; on failure it is left alone.
 * The outcome arrives on the channel as for connect: ESTABLISHED with the
 * peer's private data, or CONNECT_ERROR, UNREACHABLE or REJECTED.
 * -OPENRDMA_EOPNOTSUPP without OPENRDMA_DEVICE_SOCKET_ADOPT.
 */
int openrdma_cm_adopt_socket(struct openrdma_cm_id *id, struct openrdma_qp *qp,
			     int fd, const struct openrdma_conn_param *param);
int openrdma_cm_reject(struct openrdma_cm_id *id, const void *private_data,
		       uint8_t private_data_len);
int openrdma_cm_disconnect(struct openrdma_cm_id *id, const void *private_data,
			   uint8_t private_data_len);
/* Takes the next event: blocks unless ch->fd was made non-blocking, when
 * -OPENRDMA_EAGAIN means none.  The event is the caller's until acked. */
int openrdma_cm_event_get(struct openrdma_cm_channel *ch,
			  struct openrdma_cm_event **event_out);
void openrdma_cm_event_ack(struct openrdma_cm_event *event);

#ifdef __cplusplus
}
#endif

#endif /* OPENRDMA_VERBS_H */
