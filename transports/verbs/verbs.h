/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * verbs: OpenRDMA over rdma-core (libibverbs and librdmacm), for kernel
 * RDMA devices (InfiniBand, RoCE, iWARP).  The core mirrors libibverbs
 * value for value, so most ops are a cast and one call: work requests are
 * translated into ibv_send_wr arrays, receive lists, SGEs and completions
 * are passed through unchanged (their layouts are checked at compile time
 * in verbs_abi.c).
 *
 * Each context opens its own ibv_context on the interface's device and
 * runs one progress thread, which waits with epoll on the context's
 * completion channel, its async-event fd and its rdma_cm event channel,
 * and reports into the core.  RC QPs are connected through librdmacm with
 * user-created QPs moved by rdma_init_qp_attr() (see verbs_cm.c), which
 * works alike on InfiniBand, RoCE and iWARP.  See openrdma_verbs_transport(7).
 */
#ifndef TRANSPORTS_VERBS_VERBS_H
#define TRANSPORTS_VERBS_VERBS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <uthash.h>

#include <openrdma/log.h>
#include <openrdma/transport.h>

#include "core/lock.h"

/* Send WRs translated on the stack; longer lists use the QP's array. */
#define VERBS_POST_STACK 16
/* Bound of a QP's preallocated array: longer lists are posted in chunks. */
#define VERBS_POST_LIST_MAX 256

/* Private data that the CM carries (bytes), per transport and message. */
#define VERBS_IB_PDATA_CONNECT 56 /* REQ 92 minus the rdma_cm header */
#define VERBS_IB_PDATA_ACCEPT 196 /* REP */
#define VERBS_IB_PDATA_REJECT 148 /* REJ */
/*
 * MPA carries 256 bytes, of which MPA v2 takes 4 for IRD and ORD; siw
 * (Linux 6.1, siw_send_mpareqrep) keeps the sum in a u8, so one less.
 */
#define VERBS_IWARP_PDATA 251
/*
 * MPA carries no QP number either, and the core's CM events promise the
 * peer's: connect and accept put it in front of the application's private
 * data, in a header a peer without it is recognised by.
 */
#define VERBS_IWARP_HDR_MAGIC 0x4f525150u /* "ORQP" */
#define VERBS_IWARP_HDR_LEN 8 /* be32 magic, be32 QPN */
#define VERBS_IWARP_PDATA_CONN (VERBS_IWARP_PDATA - VERBS_IWARP_HDR_LEN)

/* The IB CM reject reason of rdma_reject() (IBTA 12.6.7.2). */
#define VERBS_IB_REJ_CONSUMER 28 /* rdma_reject() */

/* The device's GIDs that an address handle can be derived from. */
struct verbs_gid {
	union ibv_gid gid;
	uint8_t index;
	uint8_t type; /* enum ibv_gid_type */
};

struct verbs_reg_cache;

struct verbs_ctx {
	struct openrdma_context base;
	struct ibv_context *ibctx;
	struct ibv_comp_channel *comp_ch;
	struct rdma_event_channel *cm_ch;
	uint8_t port; /* the device port behind the core's port 1 */
	bool iwarp;
	uint32_t quirks; /* VERBS_QUIRK_* */
	enum ibv_mtu active_mtu;
	uint8_t link_layer;
	int resolve_ms; /* address and route resolution timeout */
	struct openrdma_device_attr attr;
	struct sockaddr_storage addr; /* the port's IP address, or AF_UNSPEC */
	struct verbs_gid *gids; /* RoCE GIDs of the port */
	int num_gids;
	struct verbs_reg_cache *reg_cache;
	/*
	 * CM ids' connection states and the QP list; never held across a
	 * core call that may call the application
	 */
	pthread_mutex_t cm_lock;
	struct verbs_qp *qps; /* for CQ_ERR: the QPs of the CQ go to ERR */
	/* threads destroying withdrawn iWARP requests (verbs_cm.c) */
	pthread_t *destroyers;
	unsigned int num_destroyers;
	/* progress thread */
	int epfd;
	int wake_fd;
	pthread_t thread;
};

struct verbs_pd {
	struct openrdma_pd base;
	struct ibv_pd *ibpd;
};

/*
 * A registration: the ibv_mr that local SGEs and MW binds name (virtual
 * addresses), and for a zero-based MR a second one at IOVA 0 whose rkey
 * peers use.  Shared by the MRs of identical ranges when the registration
 * cache is on (verbs_reg.c).
 */
struct verbs_reg {
	struct ibv_mr *local;
	struct ibv_mr *remote; /* zero-based only */
	/* cache key */
	struct ibv_pd *pd;
	uintptr_t addr;
	size_t length;
	int access;
	unsigned int refs; /* guarded by the cache lock */
	UT_hash_handle hh;
};

struct verbs_mr {
	struct openrdma_mr base;
	struct verbs_reg *reg; /* NULL for a zero-length MR */
};

struct verbs_mw {
	struct openrdma_mw base;
	struct ibv_mw *ibmw;
	/* type 1: the MR of the last bind, which an unbind names too (rxe's
	 * provider reads the MR's key even for an unbind) */
	struct ibv_mr *bound_mr;
};

struct verbs_cq {
	struct openrdma_cq base;
	struct ibv_cq *ibcq;
	/* the device reported CQ_ERR: poll says -EOVERFLOW once drained */
	atomic_bool overrun;
	bool kernel_wc_flags; /* VERBS_QUIRK_KERNEL_WC_FLAGS */
	/*
	 * Completions of requests posted to a QP in ERR, which the transport
	 * flushes itself (verbs_flush.c): a ring of wc, polled after the
	 * device's.  'flushed' counts them, so that poll looks only then.
	 */
	atomic_uint flushed;
	pthread_spinlock_t flush_lock;
	struct openrdma_wc *flush_ring;
	unsigned int flush_size, flush_head;
};

struct verbs_cm_id;

struct verbs_qp {
	struct openrdma_qp base;
	struct ibv_qp *ibqp;
	struct verbs_ctx *vctx;
	struct rdma_cm_id *cmid; /* connecting it, under vctx->cm_lock */
	bool no_imm; /* iWARP: no immediate data */
	struct verbs_qp *prev, *next; /* vctx->qps, under cm_lock */
	atomic_bool last_wqe; /* VERBS_QUIRK_NO_LAST_WQE: reported */
	/* preallocated translation array for long lists, under post_lock */
	struct core_lock post_lock;
	struct ibv_send_wr *list;
	unsigned int list_max;
};

struct verbs_srq {
	struct openrdma_srq base;
	struct ibv_srq *ibsrq;
	/* the armed limit, for devices without ibv_query_srq() (siw) */
	atomic_uint limit;
};

struct verbs_ah {
	struct openrdma_ah base;
	struct ibv_ah *ibah;
};

enum verbs_cm_state {
	VERBS_CM_IDLE,
	VERBS_CM_LISTEN,
	VERBS_CM_RESOLVING, /* address, then route */
	VERBS_CM_CONNECTING, /* REQ or MPA request sent */
	VERBS_CM_RESPONSE, /* three-way: waiting for the application */
	VERBS_CM_REQUEST, /* passive: reported, not yet accepted */
	VERBS_CM_ACCEPTING, /* passive: accepted, waiting for RTU */
	VERBS_CM_CONNECTED,
	VERBS_CM_DISCONNECTED,
	VERBS_CM_FAILED,
	VERBS_CM_DESTROYING, /* waiting for its events to be acknowledged */
};

struct verbs_cm_id {
	struct openrdma_cm_id base;
	struct verbs_ctx *vctx;
	struct rdma_cm_id *cmid;
	/* the rest is guarded by vctx->cm_lock */
	enum verbs_cm_state state;
	/* a listener: its requests reported but not yet answered */
	int backlog;
	int num_pending;
	struct verbs_cm_id *requests;
	/* a request: its listener while it counts against the backlog */
	struct verbs_cm_id *listener;
	struct verbs_cm_id *req_prev, *req_next;
	/* what connect or accept was given, for librdmacm */
	struct rdma_conn_param conn;
	uint8_t pdata[OPENRDMA_MAX_PRIVATE_DATA];
	bool three_way;
};

static inline struct verbs_ctx *to_verbs_ctx(struct openrdma_context *ctx)
{
	return openrdma_container_of(ctx, struct verbs_ctx, base);
}

static inline struct verbs_pd *to_verbs_pd(struct openrdma_pd *pd)
{
	return openrdma_container_of(pd, struct verbs_pd, base);
}

static inline struct verbs_mr *to_verbs_mr(struct openrdma_mr *mr)
{
	return openrdma_container_of(mr, struct verbs_mr, base);
}

static inline struct verbs_mw *to_verbs_mw(struct openrdma_mw *mw)
{
	return openrdma_container_of(mw, struct verbs_mw, base);
}

static inline struct verbs_cq *to_verbs_cq(struct openrdma_cq *cq)
{
	return openrdma_container_of(cq, struct verbs_cq, base);
}

static inline struct verbs_qp *to_verbs_qp(struct openrdma_qp *qp)
{
	return openrdma_container_of(qp, struct verbs_qp, base);
}

static inline struct verbs_srq *to_verbs_srq(struct openrdma_srq *srq)
{
	return openrdma_container_of(srq, struct verbs_srq, base);
}

static inline struct verbs_ah *to_verbs_ah(struct openrdma_ah *ah)
{
	return openrdma_container_of(ah, struct verbs_ah, base);
}

static inline struct verbs_cm_id *to_verbs_cm_id(struct openrdma_cm_id *id)
{
	return openrdma_container_of(id, struct verbs_cm_id, base);
}

/*
 * Error conventions, converted once.  libibverbs returns a positive errno,
 * but some providers pass their own negative one through (siw's posts).
 */
static inline int verbs_ret(int ret)
{
	return ret > 0 ? -ret : ret;
}

/* NULL, or -1 with errno (libibverbs constructors, librdmacm). */
static inline int verbs_errno(void)
{
	return errno > 0 ? -errno : -OPENRDMA_EIO;
}

/* verbs_ctx.c: contexts and queries */
int verbs_device_open(struct openrdma_device *dev,
		      struct openrdma_context **ctx_out);
void verbs_context_close(struct openrdma_context *ctx);
int verbs_device_query(struct openrdma_context *ctx,
		       struct openrdma_device_attr *attr);
int verbs_gid_query(struct openrdma_context *ctx, uint8_t port_num, int index,
		    union openrdma_gid *gid);
int verbs_port_query(struct openrdma_context *ctx, uint8_t port_num,
		     struct openrdma_port_attr *attr);

/* verbs_attr.c: attribute translation, without a device */
void verbs_device_attr_fill(const struct ibv_device_attr_ex *dev,
			    const struct ibv_port_attr *port, bool iwarp,
			    uint32_t quirks, struct openrdma_device_attr *attr);
void verbs_port_attr_fill(const struct ibv_port_attr *port,
			  struct openrdma_port_attr *attr);
uint32_t verbs_mtu_bytes(enum ibv_mtu mtu);
/* Devices that ignore parts of the verbs contract (verbs_attr.c). */
enum {
	VERBS_QUIRK_NO_IOVA = 1 << 0, /* registration ignores the IOVA */
	VERBS_QUIRK_NO_SOLICITED = 1 << 1, /* receives never solicited */
	/* wc_flags in the kernel's bits */
	VERBS_QUIRK_KERNEL_WC_FLAGS = 1 << 2,
	/* no QP_LAST_WQE_REACHED event */
	VERBS_QUIRK_NO_LAST_WQE = 1 << 3,
	/* errors missed or reported with another status */
	VERBS_QUIRK_LAX_ERRORS = 1 << 4,
	/* a receive without SGEs refused */
	VERBS_QUIRK_NO_EMPTY_RECV = 1 << 5,
	/* a move to RESET ignored (the QP keeps its state and queues) */
	VERBS_QUIRK_NO_RESET = 1 << 6,
};
uint32_t verbs_device_quirks(const struct ibv_device_attr_ex *dev);
/* The reason a REJECTED event carries, as a negative code. */
int verbs_reject_status(int status, bool iwarp);

/* verbs_addr.c: the port's IP address and GIDs, addresses to GIDs */
int verbs_port_addr_find(struct verbs_ctx *vctx);
int verbs_gids_load(struct verbs_ctx *vctx);
void verbs_gid_from_sockaddr(const struct sockaddr *sa, union ibv_gid *gid);
void verbs_sockaddr_from_gid(const union ibv_gid *gid,
			     struct sockaddr_storage *ss);
socklen_t verbs_sockaddr_len(const struct sockaddr *sa);
int verbs_ah_attr_to_ibv(const struct verbs_ctx *vctx,
			 const struct openrdma_ah_attr *attr,
			 struct ibv_ah_attr *ib);
void verbs_ah_attr_from_ibv(const struct verbs_ctx *vctx,
			    const struct ibv_ah_attr *ib,
			    struct openrdma_ah_attr *attr);

/* verbs_progress.c: the context's progress thread */
int verbs_progress_start(struct verbs_ctx *vctx);
void verbs_progress_stop(struct verbs_ctx *vctx);
void verbs_async_event(struct verbs_ctx *vctx, struct ibv_async_event *ev);

/* verbs_mem.c: PDs, MRs and MWs */
int verbs_pd_alloc(struct openrdma_context *ctx, struct openrdma_pd **pd_out);
int verbs_pd_dealloc(struct openrdma_pd *pd);
int verbs_mr_reg(struct openrdma_pd *pd, void *addr, size_t length, int access,
		 struct openrdma_mr **mr_out);
int verbs_mr_rereg(struct openrdma_mr *mr, int flags, struct openrdma_pd *pd,
		   void *addr, size_t length, int access);
int verbs_mr_dereg(struct openrdma_mr *mr);
int verbs_mw_alloc(struct openrdma_pd *pd, enum openrdma_mw_type type,
		   struct openrdma_mw **mw_out);
int verbs_mw_dealloc(struct openrdma_mw *mw);

/* verbs_reg.c: registrations and their cache */
int verbs_reg_cache_create(struct verbs_reg_cache **cache_out);
void verbs_reg_cache_destroy(struct verbs_reg_cache *cache);
int verbs_reg_get(struct verbs_ctx *vctx, struct ibv_pd *pd, void *addr,
		  size_t length, int access, struct verbs_reg **reg_out);
int verbs_reg_put(struct verbs_ctx *vctx, struct verbs_reg *reg);

/* verbs_cq.c */
int verbs_cq_create(struct openrdma_context *ctx, int cqe, int comp_vector,
		    struct openrdma_cq **cq_out);
int verbs_cq_destroy(struct openrdma_cq *cq);
int verbs_cq_poll(struct openrdma_cq *cq, int num_entries,
		  struct openrdma_wc *wc);
int verbs_cq_req_notify(struct openrdma_cq *cq, int solicited_only);
int verbs_cq_resize(struct openrdma_cq *cq, int cqe);

/* verbs_flush.c: completions of requests posted to a QP in ERR */
int verbs_flush_init(struct verbs_cq *vcq, unsigned int size);
void verbs_flush_fini(struct verbs_cq *vcq);
int verbs_flush_send(struct verbs_qp *vqp, struct openrdma_send_wr *wr);
int verbs_flush_recv(struct verbs_qp *vqp, struct openrdma_recv_wr *wr);
int verbs_flush_poll(struct verbs_cq *vcq, int num_entries,
		     struct openrdma_wc *wc);

/* verbs_qp.c: QPs and their attributes */
int verbs_qp_create(struct openrdma_pd *pd,
		    struct openrdma_qp_init_attr *init_attr,
		    struct openrdma_qp **qp_out);
int verbs_qp_destroy(struct openrdma_qp *qp);
int verbs_qp_modify(struct openrdma_qp *qp, struct openrdma_qp_attr *attr,
		    int attr_mask);
int verbs_qp_query(struct openrdma_qp *qp, struct openrdma_qp_attr *attr,
		   int attr_mask, struct openrdma_qp_init_attr *init_attr);
int verbs_qp_attr_to_ibv(const struct verbs_ctx *vctx,
			 const struct openrdma_qp_attr *attr, int attr_mask,
			 struct ibv_qp_attr *ib);
/* Moves the QP with ibv_modify_qp and records the state in the core. */
int verbs_qp_move(struct verbs_qp *vqp, struct ibv_qp_attr *ib, int mask);
void verbs_qp_cq_overrun(struct verbs_ctx *vctx, struct verbs_cq *vcq);
void verbs_qp_wc_errors(struct verbs_ctx *vctx, const struct openrdma_wc *wc,
			int n);
void verbs_qp_state_set(struct verbs_qp *vqp, enum openrdma_qp_state state);

/* verbs_post.c: the data path */
int verbs_qp_post_send(struct openrdma_qp *qp, struct openrdma_send_wr *wr,
		       struct openrdma_send_wr **bad_wr);
int verbs_qp_post_recv(struct openrdma_qp *qp, struct openrdma_recv_wr *wr,
		       struct openrdma_recv_wr **bad_wr);
int verbs_srq_post_recv(struct openrdma_srq *srq, struct openrdma_recv_wr *wr,
			struct openrdma_recv_wr **bad_wr);

/* verbs_srq.c */
int verbs_srq_create(struct openrdma_pd *pd,
		     struct openrdma_srq_init_attr *init_attr,
		     struct openrdma_srq **srq_out);
int verbs_srq_destroy(struct openrdma_srq *srq);
int verbs_srq_modify(struct openrdma_srq *srq, struct openrdma_srq_attr *attr,
		     int attr_mask);
int verbs_srq_query(struct openrdma_srq *srq, struct openrdma_srq_attr *attr);

/* verbs_ah.c */
int verbs_ah_create(struct openrdma_pd *pd, struct openrdma_ah_attr *attr,
		    struct openrdma_ah **ah_out);
int verbs_ah_destroy(struct openrdma_ah *ah);
int verbs_ah_attr_from_wc(struct openrdma_context *ctx, uint8_t port_num,
			  const struct openrdma_wc *wc,
			  const struct openrdma_grh *grh,
			  struct openrdma_ah_attr *attr);

/* verbs_cm.c: the application's CM calls */
int verbs_cm_id_create(struct openrdma_context *ctx,
		       enum openrdma_port_space ps,
		       struct openrdma_cm_id **id_out);
int verbs_cm_id_destroy(struct openrdma_cm_id *id);
/* Joins the threads that destroy withdrawn iWARP requests. */
void verbs_cm_destroyers_join(struct verbs_ctx *vctx);
int verbs_cm_listen(struct openrdma_cm_id *id, const struct sockaddr *addr,
		    int backlog);
int verbs_cm_connect(struct openrdma_cm_id *id, struct openrdma_qp *qp,
		     const struct sockaddr *dst,
		     const struct openrdma_conn_param *param);
int verbs_cm_accept(struct openrdma_cm_id *id, struct openrdma_qp *qp,
		    const struct openrdma_conn_param *param);
int verbs_cm_reject(struct openrdma_cm_id *id, const void *private_data,
		    uint8_t private_data_len);
int verbs_cm_disconnect(struct openrdma_cm_id *id, const void *private_data,
			uint8_t private_data_len);
int verbs_cm_local_addr(struct openrdma_cm_id *id,
			struct sockaddr_storage *addr);
int verbs_cm_peer_addr(struct openrdma_cm_id *id,
		       struct sockaddr_storage *addr);
/* With cm_lock held: */
/* Moves the id's QP to RC state along the CM's path (rdma_init_qp_attr). */
int verbs_cm_qp_move(struct verbs_cm_id *vid, enum ibv_qp_state state);
/* Readies the id's QP before connect or accept: INIT for RC, RTS for UD. */
int verbs_cm_qp_prepare(struct verbs_cm_id *vid);
/* The id's QP, or NULL: none was given, or the id is being destroyed
 * and the QP may be gone (verbs_cm_id_destroy).  cm_lock held. */
struct verbs_qp *verbs_cm_qp(struct verbs_cm_id *vid);
/* Moves the id's QP to ERR, as the end of a connection or an attempt. */
void verbs_cm_qp_error(struct verbs_cm_id *vid);
/* A request id stops counting against its listener's backlog. */
void verbs_cm_request_done(struct verbs_cm_id *vid);

/* verbs_cm_event.c: rdma_cm events, on the progress thread */
void verbs_cm_event(struct verbs_ctx *vctx, struct rdma_cm_event *ev);

#endif /* TRANSPORTS_VERBS_VERBS_H */
