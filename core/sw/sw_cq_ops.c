/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * CQs and SRQs of software transports: the transport's object embeds the
 * core's and the toolkit's (core/sw/cq.h, core/sw/srq.h); this file checks
 * the sizes against the device limits, counts the objects and builds and
 * tears them down, calling the transport's hooks for what it adds.
 */
#include <stdlib.h>

#include <openrdma/errno.h>

#include "core/sw/sw_ops.h"

static struct sw_cq *cq_sw(const struct sw_cq_ops *ops, struct openrdma_cq *cq)
{
	return (struct sw_cq *)((char *)cq + ops->cq_sw);
}

static struct sw_srq *srq_sw(const struct sw_cq_ops *ops,
			     struct openrdma_srq *srq)
{
	return (struct sw_srq *)((char *)srq + ops->srq_sw);
}

int sw_cq_create(const struct sw_cq_ops *ops, struct openrdma_context *ctx,
		 int cqe, struct openrdma_cq **cq_out)
{
	struct openrdma_cq *cq;
	int ret;

	if (cqe < 1 || cqe > ops->max_cqe)
		return -OPENRDMA_EINVAL;
	ret = ops->res_get(ctx, SW_RES_CQ);
	if (ret)
		return ret;
	ret = -OPENRDMA_ENOMEM;
	cq = calloc(1, ops->cq_size);
	if (!cq)
		goto err_res;
	ret = sw_cq_init(cq_sw(ops, cq), cq, cqe);
	if (ret)
		goto err_free;
	if (ops->cq_init) {
		ret = ops->cq_init(ctx, cq);
		if (ret)
			goto err_sw;
	}
	cq->cqe = cqe;
	*cq_out = cq;
	return 0;

err_sw:
	sw_cq_fini(cq_sw(ops, cq));
err_free:
	free(cq);
err_res:
	ops->res_put(ctx, SW_RES_CQ);
	return ret;
}

int sw_cq_destroy(const struct sw_cq_ops *ops, struct openrdma_cq *cq)
{
	if (ops->cq_fini)
		ops->cq_fini(cq);
	sw_cq_fini(cq_sw(ops, cq));
	ops->res_put(cq->obj.ctx, SW_RES_CQ);
	free(cq);
	return 0;
}

int sw_cq_set_size(const struct sw_cq_ops *ops, struct openrdma_cq *cq, int cqe)
{
	int ret;

	if (cqe < 1 || cqe > ops->max_cqe)
		return -OPENRDMA_EINVAL;
	ret = sw_cq_resize(cq_sw(ops, cq), cqe);
	if (!ret)
		cq->cqe = cqe;
	return ret;
}

int sw_srq_create(const struct sw_cq_ops *ops, struct openrdma_pd *pd,
		  struct openrdma_srq_init_attr *init_attr,
		  struct openrdma_srq **srq_out)
{
	struct openrdma_context *ctx = pd->obj.ctx;
	struct openrdma_srq_attr *attr = &init_attr->attr;
	struct openrdma_srq *srq;
	int ret;

	if (!attr->max_wr || attr->max_wr > ops->max_srq_wr ||
	    attr->max_sge > ops->max_sge)
		return -OPENRDMA_EINVAL;
	ret = ops->res_get(ctx, SW_RES_SRQ);
	if (ret)
		return ret;
	ret = -OPENRDMA_ENOMEM;
	srq = calloc(1, ops->srq_size);
	if (!srq)
		goto err_res;
	srq->pd = pd;
	ret = sw_srq_init(srq_sw(ops, srq), srq, attr);
	if (ret)
		goto err_free;
	/* granted as asked; the limit is armed by srq_modify only */
	attr->srq_limit = 0;
	*srq_out = srq;
	return 0;

err_free:
	free(srq);
err_res:
	ops->res_put(ctx, SW_RES_SRQ);
	return ret;
}

int sw_srq_destroy(const struct sw_cq_ops *ops, struct openrdma_srq *srq)
{
	sw_srq_fini(srq_sw(ops, srq));
	ops->res_put(srq->obj.ctx, SW_RES_SRQ);
	free(srq);
	return 0;
}

int sw_srq_set_attr(const struct sw_cq_ops *ops, struct openrdma_srq *srq,
		    struct openrdma_srq_attr *attr, int attr_mask)
{
	return sw_srq_modify(srq_sw(ops, srq), attr, attr_mask,
			     ops->max_srq_wr);
}
