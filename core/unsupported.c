/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The "not supported" stubs: a transport leaves NULL the ops it lacks, and
 * registration fills each hole with the stub of the same signature, so the
 * core calls through a complete table and a missing feature is always
 * -OPENRDMA_EOPNOTSUPP, never a crash.  Posting stubs report the first
 * work request as the bad one, as a failed post must.
 */
#include "config.h"

#include <string.h>

#include "core/unsupported.h"

/* context */

static void unsup_context_close(struct openrdma_context *ctx)
{
}

static int unsup_device_query(struct openrdma_context *ctx,
			      struct openrdma_device_attr *attr)
{
	return -OPENRDMA_EOPNOTSUPP;
}

static int unsup_gid_query(struct openrdma_context *ctx, uint8_t port_num,
			   int index, union openrdma_gid *gid)
{
	return -OPENRDMA_EOPNOTSUPP;
}

static int unsup_port_query(struct openrdma_context *ctx, uint8_t port_num,
			    struct openrdma_port_attr *attr)
{
	return -OPENRDMA_EOPNOTSUPP;
}

/* protection domains and memory */

static int unsup_mr_dereg(struct openrdma_mr *mr)
{
	return -OPENRDMA_EOPNOTSUPP;
}

static int unsup_mr_reg(struct openrdma_pd *pd, void *addr, size_t length,
			int access, struct openrdma_mr **mr_out)
{
	return -OPENRDMA_EOPNOTSUPP;
}

static int unsup_mr_rereg(struct openrdma_mr *mr, int flags,
			  struct openrdma_pd *pd, void *addr, size_t length,
			  int access)
{
	return -OPENRDMA_EOPNOTSUPP;
}

static int unsup_mw_alloc(struct openrdma_pd *pd, enum openrdma_mw_type type,
			  struct openrdma_mw **mw_out)
{
	return -OPENRDMA_EOPNOTSUPP;
}

static int unsup_mw_dealloc(struct openrdma_mw *mw)
{
	return -OPENRDMA_EOPNOTSUPP;
}

static int unsup_pd_alloc(struct openrdma_context *ctx,
			  struct openrdma_pd **pd_out)
{
	return -OPENRDMA_EOPNOTSUPP;
}

static int unsup_pd_dealloc(struct openrdma_pd *pd)
{
	return -OPENRDMA_EOPNOTSUPP;
}

/* address handles */

static int unsup_ah_attr_from_wc(struct openrdma_context *ctx, uint8_t port_num,
				 const struct openrdma_wc *wc,
				 const struct openrdma_grh *grh,
				 struct openrdma_ah_attr *attr)
{
	return -OPENRDMA_EOPNOTSUPP;
}

static int unsup_ah_create(struct openrdma_pd *pd,
			   struct openrdma_ah_attr *attr,
			   struct openrdma_ah **ah_out)
{
	return -OPENRDMA_EOPNOTSUPP;
}

static int unsup_ah_destroy(struct openrdma_ah *ah)
{
	return -OPENRDMA_EOPNOTSUPP;
}

/* completion queues */

static int unsup_cq_create(struct openrdma_context *ctx, int cqe,
			   int comp_vector, struct openrdma_cq **cq_out)
{
	return -OPENRDMA_EOPNOTSUPP;
}

static int unsup_cq_destroy(struct openrdma_cq *cq)
{
	return -OPENRDMA_EOPNOTSUPP;
}

static int unsup_cq_poll(struct openrdma_cq *cq, int num_entries,
			 struct openrdma_wc *wc)
{
	return -OPENRDMA_EOPNOTSUPP;
}

static int unsup_cq_req_notify(struct openrdma_cq *cq, int solicited_only)
{
	return -OPENRDMA_EOPNOTSUPP;
}

static int unsup_cq_resize(struct openrdma_cq *cq, int cqe)
{
	return -OPENRDMA_EOPNOTSUPP;
}

static int unsup_cq_sleep_begin(struct openrdma_cq *cq, struct pollfd *pfd,
				void **cookie, int max)
{
	return -OPENRDMA_EOPNOTSUPP;
}

/* never called: begin filled nothing */
static void unsup_cq_sleep_end(struct openrdma_cq *cq, const struct pollfd *pfd,
			       void **cookie, int n)
{
}

/* queue pairs */

static int unsup_qp_create(struct openrdma_pd *pd,
			   struct openrdma_qp_init_attr *init_attr,
			   struct openrdma_qp **qp_out)
{
	return -OPENRDMA_EOPNOTSUPP;
}

static int unsup_qp_destroy(struct openrdma_qp *qp)
{
	return -OPENRDMA_EOPNOTSUPP;
}

static int unsup_qp_modify(struct openrdma_qp *qp,
			   struct openrdma_qp_attr *attr, int attr_mask)
{
	return -OPENRDMA_EOPNOTSUPP;
}

static int unsup_qp_post_recv(struct openrdma_qp *qp,
			      struct openrdma_recv_wr *wr,
			      struct openrdma_recv_wr **bad_wr)
{
	if (bad_wr)
		*bad_wr = wr;
	return -OPENRDMA_EOPNOTSUPP;
}

static int unsup_qp_post_send(struct openrdma_qp *qp,
			      struct openrdma_send_wr *wr,
			      struct openrdma_send_wr **bad_wr)
{
	if (bad_wr)
		*bad_wr = wr;
	return -OPENRDMA_EOPNOTSUPP;
}

static int unsup_qp_query(struct openrdma_qp *qp, struct openrdma_qp_attr *attr,
			  int attr_mask,
			  struct openrdma_qp_init_attr *init_attr)
{
	return -OPENRDMA_EOPNOTSUPP;
}

/* shared receive queues */

static int unsup_srq_create(struct openrdma_pd *pd,
			    struct openrdma_srq_init_attr *init_attr,
			    struct openrdma_srq **srq_out)
{
	return -OPENRDMA_EOPNOTSUPP;
}

static int unsup_srq_destroy(struct openrdma_srq *srq)
{
	return -OPENRDMA_EOPNOTSUPP;
}

static int unsup_srq_modify(struct openrdma_srq *srq,
			    struct openrdma_srq_attr *attr, int attr_mask)
{
	return -OPENRDMA_EOPNOTSUPP;
}

static int unsup_srq_post_recv(struct openrdma_srq *srq,
			       struct openrdma_recv_wr *wr,
			       struct openrdma_recv_wr **bad_wr)
{
	if (bad_wr)
		*bad_wr = wr;
	return -OPENRDMA_EOPNOTSUPP;
}

static int unsup_srq_query(struct openrdma_srq *srq,
			   struct openrdma_srq_attr *attr)
{
	return -OPENRDMA_EOPNOTSUPP;
}

/* connection manager */

static int unsup_cm_accept(struct openrdma_cm_id *id, struct openrdma_qp *qp,
			   const struct openrdma_conn_param *param)
{
	return -OPENRDMA_EOPNOTSUPP;
}

static int unsup_cm_adopt(struct openrdma_cm_id *id, struct openrdma_qp *qp,
			  int fd, const struct openrdma_conn_param *param)
{
	return -OPENRDMA_EOPNOTSUPP;
}

static int unsup_cm_connect(struct openrdma_cm_id *id, struct openrdma_qp *qp,
			    const struct sockaddr *dst,
			    const struct openrdma_conn_param *param)
{
	return -OPENRDMA_EOPNOTSUPP;
}

static int unsup_cm_disconnect(struct openrdma_cm_id *id,
			       const void *private_data,
			       uint8_t private_data_len)
{
	return -OPENRDMA_EOPNOTSUPP;
}

static int unsup_cm_id_create(struct openrdma_context *ctx,
			      enum openrdma_port_space ps,
			      struct openrdma_cm_id **id_out)
{
	return -OPENRDMA_EOPNOTSUPP;
}

static int unsup_cm_id_destroy(struct openrdma_cm_id *id)
{
	return -OPENRDMA_EOPNOTSUPP;
}

static int unsup_cm_listen(struct openrdma_cm_id *id,
			   const struct sockaddr *addr, int backlog)
{
	return -OPENRDMA_EOPNOTSUPP;
}

static int unsup_cm_local_addr(struct openrdma_cm_id *id,
			       struct sockaddr_storage *addr)
{
	return -OPENRDMA_EOPNOTSUPP;
}

static int unsup_cm_peer_addr(struct openrdma_cm_id *id,
			      struct sockaddr_storage *addr)
{
	return -OPENRDMA_EOPNOTSUPP;
}

static int unsup_cm_reject(struct openrdma_cm_id *id, const void *private_data,
			   uint8_t private_data_len)
{
	return -OPENRDMA_EOPNOTSUPP;
}

const struct openrdma_transport_ops core_unsupported_ops = {
	/* context */
	.context_close = unsup_context_close,
	.device_query = unsup_device_query,
	.gid_query = unsup_gid_query,
	.port_query = unsup_port_query,
	/* protection domains and memory */
	.mr_dereg = unsup_mr_dereg,
	.mr_reg = unsup_mr_reg,
	.mr_rereg = unsup_mr_rereg,
	.mw_alloc = unsup_mw_alloc,
	.mw_dealloc = unsup_mw_dealloc,
	.pd_alloc = unsup_pd_alloc,
	.pd_dealloc = unsup_pd_dealloc,
	/* address handles */
	.ah_attr_from_wc = unsup_ah_attr_from_wc,
	.ah_create = unsup_ah_create,
	.ah_destroy = unsup_ah_destroy,
	/* completion queues */
	.cq_create = unsup_cq_create,
	.cq_destroy = unsup_cq_destroy,
	.cq_poll = unsup_cq_poll,
	.cq_req_notify = unsup_cq_req_notify,
	.cq_resize = unsup_cq_resize,
	.cq_sleep_begin = unsup_cq_sleep_begin,
	.cq_sleep_end = unsup_cq_sleep_end,
	/* queue pairs */
	.qp_create = unsup_qp_create,
	.qp_destroy = unsup_qp_destroy,
	.qp_modify = unsup_qp_modify,
	.qp_post_recv = unsup_qp_post_recv,
	.qp_post_send = unsup_qp_post_send,
	.qp_query = unsup_qp_query,
	/* shared receive queues */
	.srq_create = unsup_srq_create,
	.srq_destroy = unsup_srq_destroy,
	.srq_modify = unsup_srq_modify,
	.srq_post_recv = unsup_srq_post_recv,
	.srq_query = unsup_srq_query,
	/* connection manager */
	.cm_accept = unsup_cm_accept,
	.cm_adopt = unsup_cm_adopt,
	.cm_connect = unsup_cm_connect,
	.cm_disconnect = unsup_cm_disconnect,
	.cm_id_create = unsup_cm_id_create,
	.cm_id_destroy = unsup_cm_id_destroy,
	.cm_listen = unsup_cm_listen,
	.cm_local_addr = unsup_cm_local_addr,
	.cm_peer_addr = unsup_cm_peer_addr,
	.cm_reject = unsup_cm_reject,
};

void core_ops_fill(struct openrdma_transport_ops *dst,
		   const struct openrdma_transport_ops *src)
{
	if (src)
		*dst = *src;
	else
		memset(dst, 0, sizeof(*dst));

		/* One typed assignment per op: no cast, so a signature change in
	 * transport.h breaks the build here instead of at run time. */
#define FILL(op)                                           \
	do {                                               \
		if (!dst->op)                              \
			dst->op = core_unsupported_ops.op; \
	} while (0)

	FILL(context_close);
	FILL(device_query);
	FILL(gid_query);
	FILL(port_query);
	FILL(mr_dereg);
	FILL(mr_reg);
	FILL(mr_rereg);
	FILL(mw_alloc);
	FILL(mw_dealloc);
	FILL(pd_alloc);
	FILL(pd_dealloc);
	FILL(ah_attr_from_wc);
	FILL(ah_create);
	FILL(ah_destroy);
	FILL(cq_create);
	FILL(cq_destroy);
	FILL(cq_poll);
	FILL(cq_req_notify);
	FILL(cq_resize);
	FILL(cq_sleep_begin);
	FILL(cq_sleep_end);
	FILL(qp_create);
	FILL(qp_destroy);
	FILL(qp_modify);
	FILL(qp_post_recv);
	FILL(qp_post_send);
	FILL(qp_query);
	FILL(srq_create);
	FILL(srq_destroy);
	FILL(srq_modify);
	FILL(srq_post_recv);
	FILL(srq_query);
	FILL(cm_accept);
	FILL(cm_adopt);
	FILL(cm_connect);
	FILL(cm_disconnect);
	FILL(cm_id_create);
	FILL(cm_id_destroy);
	FILL(cm_listen);
	FILL(cm_local_addr);
	FILL(cm_peer_addr);
	FILL(cm_reject);
#undef FILL
}
