/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * QP creation glue of software transports: the core's object as the
 * toolkit reads it before the core fills it, the capabilities checked
 * against the device limits, and the toolkit's view of its queues.
 */
#include <stddef.h>
#include <stdlib.h>

#include <openrdma/errno.h>

#include "core/qp_init.h"
#include "core/sw/sw_ops.h"

static int base_init(struct openrdma_qp *qp, struct openrdma_pd *pd,
		     const struct openrdma_qp_init_attr *init_attr,
		     const struct sw_qp_create_ops *lim,
		     struct sw_qp_init *init)
{
	struct openrdma_qp_cap *cap = &qp->cap;

	core_qp_init_fields(qp, pd, init_attr);
	/* receives come from the SRQ: the QP has no receive queue */
	if (init_attr->srq) {
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
	}
	if (cap->max_send_wr > lim->max_wr || cap->max_recv_wr > lim->max_wr ||
	    cap->max_send_sge > lim->max_sge ||
	    cap->max_recv_sge > lim->max_sge ||
	    cap->max_inline_data > lim->max_inline)
		return -OPENRDMA_EINVAL;
	init->send_cq = (struct sw_cq *)((char *)qp->send_cq + lim->cq_sw);
	init->recv_cq = (struct sw_cq *)((char *)qp->recv_cq + lim->cq_sw);
	init->srq = qp->srq ? (struct sw_srq *)((char *)qp->srq + lim->srq_sw) :
			      NULL;
	init->max_msg_size = qp->qp_type == OPENRDMA_QPT_UD ? lim->max_ud_msg :
							      lim->max_msg_size;
	return 0;
}

int sw_qp_alloc(const struct sw_qp_create_ops *ops, struct openrdma_pd *pd,
		const struct openrdma_qp_init_attr *init_attr,
		struct sw_qp_init *init, struct openrdma_qp **qp_out)
{
	struct openrdma_context *ctx = pd->obj.ctx;
	struct openrdma_qp *qp;
	int ret;

	if (init_attr->qp_type != OPENRDMA_QPT_RC &&
	    init_attr->qp_type != OPENRDMA_QPT_UD)
		return -OPENRDMA_EOPNOTSUPP;
	ret = ops->res_get(ctx, SW_RES_QP);
	if (ret)
		return ret;
	ret = -OPENRDMA_ENOMEM;
	qp = calloc(1, ops->qp_size);
	if (!qp)
		goto err_res;
	ret = base_init(qp, pd, init_attr, ops, init);
	if (ret)
		goto err_free;
	*qp_out = qp;
	return 0;

err_free:
	free(qp);
err_res:
	ops->res_put(ctx, SW_RES_QP);
	return ret;
}

void sw_qp_free(const struct sw_qp_create_ops *ops, struct openrdma_qp *qp)
{
	struct openrdma_context *ctx = qp->pd->obj.ctx;

	free(qp);
	ops->res_put(ctx, SW_RES_QP);
}
