/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* Address handles. */
#include <openrdma/transport.h>

#include "core/core.h"
#include "core/export.h"

static int ah_attr_check(const struct openrdma_ah_attr *attr,
			 const struct openrdma_device_attr *dev)
{
	int ret;

	ret = core_port_check(dev, attr->port_num, "ah_create");
	if (ret)
		return ret;
	if (attr->is_global > 1) {
		core_arg_err("ah_create", "attr", "is_global=%u",
			     attr->is_global);
		return -OPENRDMA_EINVAL;
	}
	/* No address: the transport routes by GID or LID. */
	if (attr->addr.ss_family == AF_UNSPEC)
		return 0;
	return core_sockaddr_check((const struct sockaddr *)&attr->addr,
				   "ah_create", "attr->addr");
}

OPENRDMA_EXPORT int openrdma_ah_create(struct openrdma_pd *pd,
				       struct openrdma_ah_attr *attr,
				       struct openrdma_ah **ah_out)
{
	const struct openrdma_device_attr *dev;
	struct openrdma_context *ctx;
	struct openrdma_ah *ah;
	int ret;

	ret = core_check(pd, OPENRDMA_OBJ_PD, "ah_create", "pd");
	if (ret)
		return ret;
	ctx = pd->obj.ctx;
	dev = core_attr(ctx);
	if (!(dev->device_cap_flags & OPENRDMA_DEVICE_UD)) {
		core_arg_err("ah_create", "pd", "device has no UD QPs");
		return -OPENRDMA_EOPNOTSUPP;
	}
	if (!attr) {
		core_arg_err("ah_create", "attr", "NULL");
		return -OPENRDMA_EINVAL;
	}
	ret = ah_attr_check(attr, dev);
	if (ret)
		return ret;
	if (!ah_out) {
		core_arg_err("ah_create", "ah_out", "NULL");
		return -OPENRDMA_EINVAL;
	}

	ret = ctx->ops->ah_create(pd, attr, &ah);
	if (ret)
		return ret;
	ret = core_obj_init(&ah->obj, OPENRDMA_OBJ_AH, ctx, &pd->obj);
	if (ret)
		goto err_destroy;
	ah->pd = pd;

	*ah_out = ah;
	return 0;

err_destroy:
	ctx->ops->ah_destroy(ah);
	return ret;
}

OPENRDMA_EXPORT int openrdma_ah_destroy(struct openrdma_ah *ah)
{
	struct openrdma_context *ctx;
	struct openrdma_pd *pd;
	int ret;

	ret = core_check(ah, OPENRDMA_OBJ_AH, "ah_destroy", "ah");
	if (ret)
		return ret;
	ctx = ah->obj.ctx;
	pd = ah->pd;
	ret = core_obj_retire(&ah->obj);
	if (ret)
		return ret;
	ret = ctx->ops->ah_destroy(ah);
	if (ret) {
		core_obj_revive(&ah->obj, OPENRDMA_OBJ_AH);
		return ret;
	}
	core_obj_put(&pd->obj);
	return 0;
}

OPENRDMA_EXPORT int openrdma_ah_attr_from_wc(struct openrdma_context *ctx,
					     uint8_t port_num,
					     const struct openrdma_wc *wc,
					     const struct openrdma_grh *grh,
					     struct openrdma_ah_attr *attr)
{
	int ret;

	ret = core_check(ctx, OPENRDMA_OBJ_CONTEXT, "ah_attr_from_wc", "ctx");
	if (ret)
		return ret;
	ret = core_port_check(core_attr(ctx), port_num, "ah_attr_from_wc");
	if (ret)
		return ret;
	if (!wc || !attr) {
		core_arg_err("ah_attr_from_wc", "wc", "wc %p attr %p",
			     (const void *)wc, (void *)attr);
		return -OPENRDMA_EINVAL;
	}
	if ((wc->wc_flags & OPENRDMA_WC_GRH) && !grh) {
		core_arg_err("ah_attr_from_wc", "grh", "NULL, wc has a GRH");
		return -OPENRDMA_EINVAL;
	}
	return ctx->ops->ah_attr_from_wc(ctx, port_num, wc, grh, attr);
}
