/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* Protection domains. */
#include <openrdma/transport.h>

#include "core/core.h"
#include "core/export.h"

OPENRDMA_EXPORT int openrdma_pd_alloc(struct openrdma_context *ctx,
				      struct openrdma_pd **pd_out)
{
	struct openrdma_pd *pd;
	int ret;

	ret = core_check(ctx, OPENRDMA_OBJ_CONTEXT, "pd_alloc", "ctx");
	if (ret)
		return ret;
	if (!pd_out) {
		core_arg_err("pd_alloc", "pd_out", "NULL");
		return -OPENRDMA_EINVAL;
	}

	ret = ctx->ops->pd_alloc(ctx, &pd);
	if (ret)
		return ret;
	ret = core_obj_init(&pd->obj, OPENRDMA_OBJ_PD, ctx, &ctx->obj);
	if (ret)
		goto err_destroy;

	*pd_out = pd;
	return 0;

err_destroy:
	ctx->ops->pd_dealloc(pd);
	return ret;
}

OPENRDMA_EXPORT int openrdma_pd_dealloc(struct openrdma_pd *pd)
{
	struct openrdma_context *ctx;
	int ret;

	ret = core_check(pd, OPENRDMA_OBJ_PD, "pd_dealloc", "pd");
	if (ret)
		return ret;
	ctx = pd->obj.ctx;
	ret = core_obj_retire(&pd->obj);
	if (ret)
		return ret;
	ret = ctx->ops->pd_dealloc(pd);
	if (ret) {
		core_obj_revive(&pd->obj, OPENRDMA_OBJ_PD);
		return ret;
	}
	core_obj_put(&ctx->obj);
	return 0;
}
