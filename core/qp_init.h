/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The QP fields that come from its creation attributes.  The core sets
 * them once the transport made the QP; the software toolkit, which reads
 * them while making it, sets them first.  A query gives them back.
 * Inline: a transport built as a plugin compiles the toolkit in, and the
 * core's functions are not exported.
 */
#ifndef CORE_QP_INIT_H
#define CORE_QP_INIT_H

#include <openrdma/verbs.h>

static inline void core_qp_init_fields(struct openrdma_qp *qp,
				       struct openrdma_pd *pd,
				       const struct openrdma_qp_init_attr *ia)
{
	qp->pd = pd;
	qp->send_cq = ia->send_cq;
	qp->recv_cq = ia->recv_cq;
	qp->srq = ia->srq;
	qp->qp_context = ia->qp_context;
	qp->qp_type = ia->qp_type;
	qp->sq_sig_all = ia->sq_sig_all;
	qp->cap = ia->cap;
}

/* The creation attributes a query reports: the ones the QP keeps. */
static inline void core_qp_init_attr_get(const struct openrdma_qp *qp,
					 struct openrdma_qp_init_attr *ia)
{
	ia->send_cq = qp->send_cq;
	ia->recv_cq = qp->recv_cq;
	ia->srq = qp->srq;
	ia->qp_context = qp->qp_context;
	ia->qp_type = qp->qp_type;
	ia->sq_sig_all = qp->sq_sig_all;
	ia->cap = qp->cap;
}

#endif /* CORE_QP_INIT_H */
