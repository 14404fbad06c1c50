/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* Shared receive queues. */
#include <openrdma/transport.h>

#include "core/core.h"
#include "core/export.h"

static int srq_max_wr_check(uint32_t max_wr,
			    const struct openrdma_device_attr *dev,
			    const char *fn)
{
	if (max_wr >= 1 && max_wr <= (uint32_t)dev->max_srq_wr)
		return 0;
	openrdma_dbg("core", "%s: arg attr: max_wr=%u not in 1..max_srq_wr=%d",
		     fn, max_wr, dev->max_srq_wr);
	return -OPENRDMA_EINVAL;
}

OPENRDMA_EXPORT int
openrdma_srq_create(struct openrdma_pd *pd,
		    struct openrdma_srq_init_attr *init_attr,
		    struct openrdma_srq **srq_out)
{
	const struct openrdma_device_attr *dev;
	struct openrdma_context *ctx;
	struct openrdma_srq *srq;
	int ret;

	ret = core_check(pd, OPENRDMA_OBJ_PD, "srq_create", "pd");
	if (ret)
		return ret;
	ctx = pd->obj.ctx;
	dev = core_attr(ctx);
	if (!(dev->device_cap_flags & OPENRDMA_DEVICE_SRQ)) {
		core_arg_err("srq_create", "pd", "device has no SRQs");
		return -OPENRDMA_EOPNOTSUPP;
	}
	if (!init_attr) {
		core_arg_err("srq_create", "init_attr", "NULL");
		return -OPENRDMA_EINVAL;
	}
	ret = srq_max_wr_check(init_attr->attr.max_wr, dev, "srq_create");
	if (ret)
		return ret;
	if (init_attr->attr.max_sge > (uint32_t)dev->max_srq_sge) {
		core_arg_err("srq_create", "init_attr",
			     "max_sge=%u > max_srq_sge=%d",
			     init_attr->attr.max_sge, dev->max_srq_sge);
		return -OPENRDMA_EINVAL;
	}
	if (!srq_out) {
		core_arg_err("srq_create", "srq_out", "NULL");
		return -OPENRDMA_EINVAL;
	}

	ret = ctx->ops->srq_create(pd, init_attr, &srq);
	if (ret)
		return ret;
	ret = core_obj_init(&srq->obj, OPENRDMA_OBJ_SRQ, ctx, &pd->obj);
	if (ret)
		goto err_destroy;
	srq->pd = pd;
	srq->srq_context = init_attr->srq_context;
	/* granted: the transport updated init_attr->attr */
	srq->max_wr = init_attr->attr.max_wr;
	srq->max_sge = init_attr->attr.max_sge;

	*srq_out = srq;
	return 0;

err_destroy:
	ctx->ops->srq_destroy(srq);
	return ret;
}

OPENRDMA_EXPORT int openrdma_srq_modify(struct openrdma_srq *srq,
					struct openrdma_srq_attr *attr,
					int attr_mask)
{
	const struct openrdma_device_attr *dev;
	uint32_t max_wr;
	int ret;

	ret = core_check(srq, OPENRDMA_OBJ_SRQ, "srq_modify", "srq");
	if (ret)
		return ret;
	dev = core_attr(srq->obj.ctx);
	if (!attr) {
		core_arg_err("srq_modify", "attr", "NULL");
		return -OPENRDMA_EINVAL;
	}
	if (!attr_mask ||
	    (attr_mask & ~(OPENRDMA_SRQ_MAX_WR | OPENRDMA_SRQ_LIMIT))) {
		core_arg_err("srq_modify", "attr_mask", "0x%x invalid",
			     attr_mask);
		return -OPENRDMA_EINVAL;
	}
	max_wr = srq->max_wr;
	if (attr_mask & OPENRDMA_SRQ_MAX_WR) {
		ret = srq_max_wr_check(attr->max_wr, dev, "srq_modify");
		if (ret)
			return ret;
		max_wr = attr->max_wr;
	}
	if (attr_mask & OPENRDMA_SRQ_LIMIT) {
		if (!(dev->device_cap_flags & OPENRDMA_DEVICE_SRQ_LIMIT)) {
			core_arg_err("srq_modify", "attr_mask",
				     "no SRQ limit event on this device");
			return -OPENRDMA_EOPNOTSUPP;
		}
		if (attr->srq_limit > max_wr) {
			core_arg_err("srq_modify", "attr",
				     "srq_limit=%u > max_wr=%u",
				     attr->srq_limit, max_wr);
			return -OPENRDMA_EINVAL;
		}
	}

	ret = srq->obj.ctx->ops->srq_modify(srq, attr, attr_mask);
	if (ret)
		return ret;
	if (attr_mask & OPENRDMA_SRQ_MAX_WR)
		srq->max_wr = attr->max_wr;
	return 0;
}

OPENRDMA_EXPORT int openrdma_srq_query(struct openrdma_srq *srq,
				       struct openrdma_srq_attr *attr)
{
	int ret;

	ret = core_check(srq, OPENRDMA_OBJ_SRQ, "srq_query", "srq");
	if (ret)
		return ret;
	if (!attr) {
		core_arg_err("srq_query", "attr", "NULL");
		return -OPENRDMA_EINVAL;
	}
	return srq->obj.ctx->ops->srq_query(srq, attr);
}

OPENRDMA_EXPORT int openrdma_srq_destroy(struct openrdma_srq *srq)
{
	struct openrdma_context *ctx;
	struct openrdma_pd *pd;
	int ret;

	ret = core_check(srq, OPENRDMA_OBJ_SRQ, "srq_destroy", "srq");
	if (ret)
		return ret;
	ctx = srq->obj.ctx;
	pd = srq->pd;
	ret = core_obj_retire(&srq->obj);
	if (ret)
		return ret;
	ret = ctx->ops->srq_destroy(srq);
	if (ret) {
		core_obj_revive(&srq->obj, OPENRDMA_OBJ_SRQ);
		return ret;
	}
	core_obj_put(&pd->obj);
	return 0;
}

OPENRDMA_EXPORT int openrdma_srq_post_recv(struct openrdma_srq *srq,
					   struct openrdma_recv_wr *wr,
					   struct openrdma_recv_wr **bad_wr)
{
	int ret;

	ret = core_check(srq, OPENRDMA_OBJ_SRQ, "srq_post_recv", "srq");
	if (!ret && (!wr || !bad_wr)) {
		core_arg_err("srq_post_recv", "wr", "wr %p bad_wr %p",
			     (void *)wr, (void *)bad_wr);
		ret = -OPENRDMA_EINVAL;
	}
	if (ret) {
		if (bad_wr)
			*bad_wr = wr;
		return ret;
	}
	return srq->obj.ctx->ops->srq_post_recv(srq, wr, bad_wr);
}
