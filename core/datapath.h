/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The data path for the library's own callers, the IT-API front end and
 * the event engine: posts and polls go straight to the transport's op.
 * The public entries (core/qp.c, core/srq.c, core/cq.c) first check the
 * handle and the list pointers, a call and some twenty instructions on
 * every request; these callers hold live objects and pass lists they
 * built.  A debug build goes through the public entries, which also
 * look the handle up in the live table.
 */
#ifndef CORE_DATAPATH_H
#define CORE_DATAPATH_H

#include "config.h"

#include <openrdma/transport.h>
#include <openrdma/verbs.h>

static inline int core_qp_post_send(struct openrdma_qp *qp,
				    struct openrdma_send_wr *wr,
				    struct openrdma_send_wr **bad_wr)
{
#ifdef OPENRDMA_DEBUG
	return openrdma_qp_post_send(qp, wr, bad_wr);
#else
	return qp->obj.ctx->ops->qp_post_send(qp, wr, bad_wr);
#endif
}

static inline int core_qp_post_recv(struct openrdma_qp *qp,
				    struct openrdma_recv_wr *wr,
				    struct openrdma_recv_wr **bad_wr)
{
#ifdef OPENRDMA_DEBUG
	return openrdma_qp_post_recv(qp, wr, bad_wr);
#else
	return qp->obj.ctx->ops->qp_post_recv(qp, wr, bad_wr);
#endif
}

static inline int core_srq_post_recv(struct openrdma_srq *srq,
				     struct openrdma_recv_wr *wr,
				     struct openrdma_recv_wr **bad_wr)
{
#ifdef OPENRDMA_DEBUG
	return openrdma_srq_post_recv(srq, wr, bad_wr);
#else
	return srq->obj.ctx->ops->srq_post_recv(srq, wr, bad_wr);
#endif
}

/* num_entries > 0 and wc valid: the caller's own array. */
static inline int core_cq_poll(struct openrdma_cq *cq, int num_entries,
			       struct openrdma_wc *wc)
{
#ifdef OPENRDMA_DEBUG
	return openrdma_cq_poll(cq, num_entries, wc);
#else
	return cq->obj.ctx->ops->cq_poll(cq, num_entries, wc);
#endif
}

#endif /* CORE_DATAPATH_H */
