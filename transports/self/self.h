/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * self: the in-process loopback transport.  Every QP of the process can
 * reach every other one; the thread that posts a request executes it
 * against the target QP (core/sw/target.h), so a post returns with its
 * data placed, except for RNR retries, which a per-context timer thread
 * runs.  It is the reference the other transports are tested against and
 * the example to read first: see openrdma_self(7) and openrdma_transport(7).
 */
#ifndef TRANSPORTS_SELF_SELF_H
#define TRANSPORTS_SELF_SELF_H

#include <stdatomic.h>
#include <stdbool.h>
#include <uthash.h>

#include <openrdma/transport.h>

#include "core/sw/addr.h"
#include "core/sw/cq.h"
#include "core/sw/keymap.h"
#include "core/sw/qp.h"
#include "core/sw/srq.h"
#include "core/sw/sw_ops.h"
#include "core/sw/timer.h"

/* Limits advertised by device_query and enforced by every op. */
#define SELF_MAX_QP 4096
#define SELF_MAX_QP_WR 16384
#define SELF_MAX_SGE SW_MAX_SGE
#define SELF_MAX_INLINE 512
#define SELF_MAX_CQ 4096
#define SELF_MAX_CQE 65536
#define SELF_MAX_MR (1 << 20)
#define SELF_MAX_PD 4096
#define SELF_MAX_MW (1 << 16)
#define SELF_MAX_AH (1 << 16)
#define SELF_MAX_SRQ 4096
#define SELF_MAX_SRQ_WR 16384
#define SELF_MAX_RD_ATOM 16
#define SELF_MAX_MR_SIZE (1ull << 40)
#define SELF_MAX_MSG_SIZE (1u << 31)
#define SELF_MAX_UD_MSG 4096
#define SELF_PDATA_CONNECT 56
#define SELF_PDATA_ACCEPT 196
#define SELF_PDATA_REJECT 148
#define SELF_PDATA_DISCONNECT 148
#define SELF_PORT 1

/* REJECTED events' status, as openrdma_cm(3) lists them */
#define SELF_REJ_BACKLOG (-OPENRDMA_ECONNREFUSED) /* the backlog is full */
#define SELF_REJ_CONSUMER (-OPENRDMA_EREJECTED) /* openrdma_cm_reject() */

struct self_ctx {
	struct openrdma_context base;
	struct sw_keymap *keymap;
	struct sw_peers *peers;
	struct sw_timer timer; /* RNR retries */
	unsigned int rnr_scale; /* self.rnr_timer_scale */
	bool port_event; /* self.port_event: queue PORT_ACTIVE */
	atomic_bool port_event_done;
	atomic_int count[SW_RES_NUM]; /* against the limits above */
};

struct self_pd {
	struct openrdma_pd base;
};

struct self_mr {
	struct openrdma_mr base;
};

struct self_mw {
	struct openrdma_mw base;
};

struct self_cq {
	struct openrdma_cq base;
	struct sw_cq sw;
};

struct self_srq {
	struct openrdma_srq base;
	struct sw_srq sw;
};

struct self_ah {
	struct openrdma_ah base;
	struct openrdma_ah_attr attr;
	bool local; /* names this process's port: deliverable */
};

struct self_qp {
	struct openrdma_qp base;
	struct sw_qp sw;
	struct self_ctx *ctx;
	struct sw_timer_entry rnr_entry;
	/* requests of other QPs executing against this one */
	atomic_uint users;
	/* the RTR address vector names this process's port */
	atomic_bool av_local;
	UT_hash_handle hh; /* the process's QP table, by qp_num */
};

static inline struct self_ctx *to_self_ctx(struct openrdma_context *ctx)
{
	return openrdma_container_of(ctx, struct self_ctx, base);
}

static inline struct self_cq *to_self_cq(struct openrdma_cq *cq)
{
	return openrdma_container_of(cq, struct self_cq, base);
}

static inline struct self_srq *to_self_srq(struct openrdma_srq *srq)
{
	return openrdma_container_of(srq, struct self_srq, base);
}

static inline struct self_ah *to_self_ah(struct openrdma_ah *ah)
{
	return openrdma_container_of(ah, struct self_ah, base);
}

static inline struct self_qp *to_self_qp(struct openrdma_qp *qp)
{
	return openrdma_container_of(qp, struct self_qp, base);
}

static inline struct self_qp *sw_to_self_qp(struct sw_qp *sqp)
{
	return openrdma_container_of(sqp, struct self_qp, sw);
}

/* self_ctx.c: context, port, limits */
int self_device_open(struct openrdma_device *dev,
		     struct openrdma_context **ctx_out);
void self_context_close(struct openrdma_context *ctx);
int self_device_query(struct openrdma_context *ctx,
		      struct openrdma_device_attr *attr);
int self_port_query(struct openrdma_context *ctx, uint8_t port_num,
		    struct openrdma_port_attr *attr);
int self_gid_query(struct openrdma_context *ctx, uint8_t port_num, int index,
		   union openrdma_gid *gid);
/* Counts one more object of kind res: -OPENRDMA_ENOMEM at the limit. */
int self_res_get(struct openrdma_context *ctx, enum sw_res res);
void self_res_put(struct openrdma_context *ctx, enum sw_res res);
/* The port's address (127.0.0.1) and GID (::ffff:127.0.0.1). */
void self_port_addr(struct sockaddr_storage *addr);
void self_port_gid(union openrdma_gid *gid);
/* Does sa name this process's port (a loopback address)? */
bool self_addr_local(const struct sockaddr *sa);
/* Whether an address vector leads to this process. */
bool self_ah_attr_local(const struct openrdma_ah_attr *attr);
/* Queues PORT_ACTIVE once, if self.port_event is set. */
void self_port_event(struct self_ctx *sctx);

/* self_mem.c: PDs, MRs, MWs, AHs */
int self_pd_alloc(struct openrdma_context *ctx, struct openrdma_pd **pd_out);
int self_pd_dealloc(struct openrdma_pd *pd);
int self_mr_reg(struct openrdma_pd *pd, void *addr, size_t length, int access,
		struct openrdma_mr **mr_out);
int self_mr_rereg(struct openrdma_mr *mr, int flags, struct openrdma_pd *pd,
		  void *addr, size_t length, int access);
int self_mr_dereg(struct openrdma_mr *mr);
int self_mw_alloc(struct openrdma_pd *pd, enum openrdma_mw_type type,
		  struct openrdma_mw **mw_out);
int self_mw_dealloc(struct openrdma_mw *mw);
int self_ah_create(struct openrdma_pd *pd, struct openrdma_ah_attr *attr,
		   struct openrdma_ah **ah_out);
int self_ah_destroy(struct openrdma_ah *ah);
int self_ah_attr_from_wc(struct openrdma_context *ctx, uint8_t port_num,
			 const struct openrdma_wc *wc,
			 const struct openrdma_grh *grh,
			 struct openrdma_ah_attr *attr);

/* self_cq.c: CQs and SRQs */
int self_cq_create(struct openrdma_context *ctx, int cqe, int comp_vector,
		   struct openrdma_cq **cq_out);
int self_cq_destroy(struct openrdma_cq *cq);
int self_cq_poll(struct openrdma_cq *cq, int num_entries,
		 struct openrdma_wc *wc);
int self_cq_resize(struct openrdma_cq *cq, int cqe);
int self_srq_create(struct openrdma_pd *pd,
		    struct openrdma_srq_init_attr *init_attr,
		    struct openrdma_srq **srq_out);
int self_srq_destroy(struct openrdma_srq *srq);
int self_srq_modify(struct openrdma_srq *srq, struct openrdma_srq_attr *attr,
		    int attr_mask);
int self_srq_post_recv(struct openrdma_srq *srq, struct openrdma_recv_wr *wr,
		       struct openrdma_recv_wr **bad_wr);
int self_srq_query(struct openrdma_srq *srq, struct openrdma_srq_attr *attr);

/* self_qp.c: QPs and posting */
int self_qp_create(struct openrdma_pd *pd,
		   struct openrdma_qp_init_attr *init_attr,
		   struct openrdma_qp **qp_out);
int self_qp_destroy(struct openrdma_qp *qp);
int self_qp_modify(struct openrdma_qp *qp, struct openrdma_qp_attr *attr,
		   int attr_mask);
int self_qp_query(struct openrdma_qp *qp, struct openrdma_qp_attr *attr,
		  int attr_mask, struct openrdma_qp_init_attr *init_attr);
int self_qp_post_send(struct openrdma_qp *qp, struct openrdma_send_wr *wr,
		      struct openrdma_send_wr **bad_wr);
int self_qp_post_recv(struct openrdma_qp *qp, struct openrdma_recv_wr *wr,
		      struct openrdma_recv_wr **bad_wr);
/* The QP numbered qpn, held against destruction until self_qp_put(). */
struct self_qp *self_qp_get(uint32_t qpn);
void self_qp_put(struct self_qp *qp);

/* self_exec.c: the initiator's half of a request */
extern const struct sw_qp_ops self_sw_qp_ops;

/* self_cm.c: the connection manager */
int self_cm_id_create(struct openrdma_context *ctx, enum openrdma_port_space ps,
		      struct openrdma_cm_id **id_out);
int self_cm_id_destroy(struct openrdma_cm_id *id);
int self_cm_listen(struct openrdma_cm_id *id, const struct sockaddr *addr,
		   int backlog);
int self_cm_connect(struct openrdma_cm_id *id, struct openrdma_qp *qp,
		    const struct sockaddr *dst,
		    const struct openrdma_conn_param *param);
int self_cm_accept(struct openrdma_cm_id *id, struct openrdma_qp *qp,
		   const struct openrdma_conn_param *param);
int self_cm_reject(struct openrdma_cm_id *id, const void *private_data,
		   uint8_t private_data_len);
int self_cm_disconnect(struct openrdma_cm_id *id, const void *private_data,
		       uint8_t private_data_len);
int self_cm_local_addr(struct openrdma_cm_id *id,
		       struct sockaddr_storage *addr);
int self_cm_peer_addr(struct openrdma_cm_id *id, struct sockaddr_storage *addr);

#endif /* TRANSPORTS_SELF_SELF_H */
