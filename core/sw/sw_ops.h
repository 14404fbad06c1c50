/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The verbs glue every software transport shares: PD, MR, MW and AH
 * objects, CQs and SRQs, the object counts against the device limits.  A
 * transport describes itself once per family in a const ops struct (object
 * sizes, limits and the hooks where it differs) and its transport ops call
 * the sw_* function with it; what stays in the transport is really its own.
 */
#ifndef CORE_SW_SW_OPS_H
#define CORE_SW_SW_OPS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <openrdma/verbs.h>

#include "core/sw/cq.h"
#include "core/sw/keymap.h"
#include "core/sw/qp.h"
#include "core/sw/srq.h"

/* Objects counted against a device's limits. */
enum sw_res {
	SW_RES_PD,
	SW_RES_MR,
	SW_RES_MW,
	SW_RES_CQ,
	SW_RES_QP,
	SW_RES_SRQ,
	SW_RES_AH,
	SW_RES_NUM
};

/* Counts one more object against max: -OPENRDMA_ENOMEM at the limit. */
int sw_res_get(atomic_int *count, int max);
void sw_res_put(atomic_int *count);

/* sw_ctx_ops.c: a device's limits, as device_query reports them. */
struct sw_dev_limits {
	const char *transport; /* "self", "shm", "tcp" */
	int res_max[SW_RES_NUM]; /* objects of each kind per context */
	uint64_t max_mr_size;
	uint32_t max_msg_size;
	uint32_t max_ud_msg;
	int max_qp_wr;
	int max_sge;
	int max_inline;
	int max_cqe;
	int max_srq_wr;
	int max_rd_atom;
	uint16_t pdata_connect;
	uint16_t pdata_accept;
	uint16_t pdata_reject;
	uint16_t pdata_disconnect;
	uint32_t cap_flags; /* beyond what every software transport has */
	enum openrdma_atomic_cap atomic_cap;
	uint8_t link_layer; /* enum openrdma_link_layer */
};

/* Fills attr from lim; fw_ver reads "openrdma <version>", node_guid 0. */
void sw_device_attr_init(struct openrdma_device_attr *attr,
			 const struct sw_dev_limits *lim);
/* An active port of lim's device; addr is the transport's to fill. */
void sw_port_attr_init(struct openrdma_port_attr *attr,
		       const struct sw_dev_limits *lim);

/* sw_mem_ops.c: what the PD, MR, MW and AH glue needs of a transport. */
struct sw_mem_ops {
	uint64_t max_mr_size;
	/* sizes of the transport's objects, each with the core's first */
	size_t pd_size;
	size_t mr_size;
	size_t mw_size;
	size_t ah_size;
	/* counts one more (fewer) object of kind res against the limit */
	int (*res_get)(struct openrdma_context *ctx, enum sw_res res);
	void (*res_put)(struct openrdma_context *ctx, enum sw_res res);
	struct sw_keymap *(*keymap)(struct openrdma_context *ctx);
	/* The optional hooks below (NULL: nothing to do). */
	void (*pd_init)(struct openrdma_context *ctx, struct openrdma_pd *pd);
	/* an MR is registered, usable at once */
	void (*mr_added)(struct openrdma_context *ctx,
			 const struct openrdma_mr *mr);
	/* brackets every change of a registered MR's key; now holds the
	 * attributes in force afterwards, NULL once the MR is gone */
	void (*mr_change_begin)(struct openrdma_context *ctx,
				const struct openrdma_mr *mr);
	void (*mr_change_end)(struct openrdma_context *ctx,
			      const struct openrdma_mr *now);
	/* fills the transport's part of a new AH; cannot fail */
	void (*ah_init)(struct openrdma_ah *ah,
			const struct openrdma_ah_attr *attr);
};

int sw_pd_alloc(const struct sw_mem_ops *ops, struct openrdma_context *ctx,
		struct openrdma_pd **pd_out);
int sw_pd_dealloc(const struct sw_mem_ops *ops, struct openrdma_pd *pd);
int sw_mr_reg(const struct sw_mem_ops *ops, struct openrdma_pd *pd, void *addr,
	      size_t length, int access, struct openrdma_mr **mr_out);
int sw_mr_rereg(const struct sw_mem_ops *ops, struct openrdma_mr *mr, int flags,
		struct openrdma_pd *pd, void *addr, size_t length, int access);
int sw_mr_dereg(const struct sw_mem_ops *ops, struct openrdma_mr *mr);
int sw_mw_alloc(const struct sw_mem_ops *ops, struct openrdma_pd *pd,
		enum openrdma_mw_type type, struct openrdma_mw **mw_out);
int sw_mw_dealloc(const struct sw_mem_ops *ops, struct openrdma_mw *mw);
int sw_ah_create(const struct sw_mem_ops *ops, struct openrdma_pd *pd,
		 struct openrdma_ah_attr *attr, struct openrdma_ah **ah_out);
int sw_ah_destroy(const struct sw_mem_ops *ops, struct openrdma_ah *ah);

/* sw_cq_ops.c: what the CQ and SRQ glue needs of a transport. */
struct sw_cq_ops {
	int max_cqe;
	uint32_t max_srq_wr;
	uint32_t max_sge;
	/* the transport's objects, each with the core's first, and where
	 * the toolkit's struct sw_cq and struct sw_srq stand in them */
	size_t cq_size;
	size_t cq_sw;
	size_t srq_size;
	size_t srq_sw;
	int (*res_get)(struct openrdma_context *ctx, enum sw_res res);
	void (*res_put)(struct openrdma_context *ctx, enum sw_res res);
	/* optional (NULL: nothing to do): the transport's part of a CQ */
	int (*cq_init)(struct openrdma_context *ctx, struct openrdma_cq *cq);
	void (*cq_fini)(struct openrdma_cq *cq);
};

int sw_cq_create(const struct sw_cq_ops *ops, struct openrdma_context *ctx,
		 int cqe, struct openrdma_cq **cq_out);
int sw_cq_destroy(const struct sw_cq_ops *ops, struct openrdma_cq *cq);
/* openrdma_cq_resize(): checks cqe against the limit, records it */
int sw_cq_set_size(const struct sw_cq_ops *ops, struct openrdma_cq *cq,
		   int cqe);
int sw_srq_create(const struct sw_cq_ops *ops, struct openrdma_pd *pd,
		  struct openrdma_srq_init_attr *init_attr,
		  struct openrdma_srq **srq_out);
int sw_srq_destroy(const struct sw_cq_ops *ops, struct openrdma_srq *srq);
/* openrdma_srq_modify(), with max_srq_wr as the cap */
int sw_srq_set_attr(const struct sw_cq_ops *ops, struct openrdma_srq *srq,
		    struct openrdma_srq_attr *attr, int attr_mask);

/* sw_cm_ops.c: what the connection managers share. */
#define SW_CM_EPHEMERAL_FIRST 49152
#define SW_CM_EPHEMERAL_LAST 65535
#define SW_CM_DEFAULT_BACKLOG 128

/* What one side asked for in connect or accept. */
struct sw_cm_param {
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	bool three_way;
};

/* Where a connected QP sends: its RTR address vector and remote QPN. */
struct sw_cm_path {
	uint8_t port_num;
	struct sockaddr_storage addr;
	uint32_t dest_qpn;
};

/* param NULL: librdmacm's defaults, max_rd_atom both ways */
void sw_cm_param_set(struct sw_cm_param *p,
		     const struct openrdma_conn_param *param,
		     uint8_t max_rd_atom);
/* An event of id with src_addr peer and dst_addr local. */
void sw_cm_event_init(struct openrdma_cm_event *ev,
		      enum openrdma_cm_event_type type,
		      const struct sockaddr_storage *peer,
		      const struct sockaddr_storage *local);
void sw_cm_event_pdata(struct openrdma_cm_event *ev, const void *data,
		       unsigned int len);
/* The remote side's connect or accept parameters, as this side sees them. */
void sw_cm_event_param(struct openrdma_cm_event *ev,
		       const struct sw_cm_param *p, uint32_t qp_num);
void sw_cm_event_post(struct openrdma_cm_id *id,
		      const struct openrdma_cm_event *ev);
/* Posts an event that carries a status and nothing else. */
void sw_cm_event_post_status(struct openrdma_cm_id *id,
			     enum openrdma_cm_event_type type, int status,
			     const struct sockaddr_storage *peer,
			     const struct sockaddr_storage *local);
/*
 * Brings qp (sqp its toolkit part) to RTS along path: mine is what this
 * side asked for, theirs what the other side did.  IB CM rules: remote
 * reads and atomics are allowed when this side offers responder resources,
 * and each side's RNR retry count is the one the other side sent.
 */
int sw_cm_qp_connect(struct openrdma_qp *qp, const struct sw_qp *sqp,
		     const struct sw_cm_path *path,
		     const struct sw_cm_param *mine,
		     const struct sw_cm_param *theirs);
/* Moves qp (may be NULL) to ERR, as a broken connection does. */
void sw_cm_qp_error(struct openrdma_qp *qp);

/* sw_qp_ops.c: what a new QP is checked against and built from. */
struct sw_qp_create_ops {
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t max_inline;
	uint32_t max_msg_size; /* RC */
	uint32_t max_ud_msg;
	/* the transport's QP, with the core's first, and where struct sw_cq
	 * and struct sw_srq stand in its CQ and SRQ */
	size_t qp_size;
	size_t cq_sw;
	size_t srq_sw;
	int (*res_get)(struct openrdma_context *ctx, enum sw_res res);
	void (*res_put)(struct openrdma_context *ctx, enum sw_res res);
};

/*
 * Allocates and counts an RC or UD QP (-OPENRDMA_EOPNOTSUPP for other
 * types), fills the core's part from init_attr, as the toolkit reads it
 * before the core does, and checks its capabilities (-OPENRDMA_EINVAL past
 * the limits).  (*qp_out)->cap then holds what is granted, and init the
 * QP's queues and message size; the transport adds ops, keymap and
 * rnr_scale before sw_qp_init().
 */
int sw_qp_alloc(const struct sw_qp_create_ops *ops, struct openrdma_pd *pd,
		const struct openrdma_qp_init_attr *init_attr,
		struct sw_qp_init *init, struct openrdma_qp **qp_out);
/* Frees a QP of sw_qp_alloc() and uncounts it. */
void sw_qp_free(const struct sw_qp_create_ops *ops, struct openrdma_qp *qp);

#endif /* CORE_SW_SW_OPS_H */
