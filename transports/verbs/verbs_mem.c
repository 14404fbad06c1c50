/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* Protection domains, memory regions and memory windows. */
#include <stdlib.h>

#include "transports/verbs/verbs.h"

int verbs_pd_alloc(struct openrdma_context *ctx, struct openrdma_pd **pd_out)
{
	struct verbs_pd *vpd;
	int ret;

	vpd = calloc(1, sizeof(*vpd));
	if (!vpd)
		return -OPENRDMA_ENOMEM;
	vpd->ibpd = ibv_alloc_pd(to_verbs_ctx(ctx)->ibctx);
	if (!vpd->ibpd) {
		ret = verbs_errno();
		free(vpd);
		return ret;
	}
	vpd->base.handle = vpd->ibpd->handle;
	*pd_out = &vpd->base;
	return 0;
}

int verbs_pd_dealloc(struct openrdma_pd *pd)
{
	struct verbs_pd *vpd = to_verbs_pd(pd);
	int ret;

	ret = ibv_dealloc_pd(vpd->ibpd);
	if (ret)
		return verbs_ret(ret);
	free(vpd);
	return 0;
}

/*
 * A zero-length MR has no registration (the kernel refuses empty ones):
 * its keys are 0, which the device never checks for zero-length accesses,
 * the only ones such an MR allows.
 */
static void mr_keys_set(struct verbs_mr *vmr)
{
	struct verbs_reg *reg = vmr->reg;

	if (!reg) {
		vmr->base.lkey = 0;
		vmr->base.rkey = 0;
		return;
	}
	vmr->base.lkey = reg->local->lkey;
	vmr->base.rkey = reg->remote ? reg->remote->rkey : reg->local->rkey;
}

int verbs_mr_reg(struct openrdma_pd *pd, void *addr, size_t length, int access,
		 struct openrdma_mr **mr_out)
{
	struct verbs_ctx *vctx = to_verbs_ctx(pd->obj.ctx);
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return -OPENRDMA_ENOMEM;
	if (length) {
		ret = verbs_reg_get(vctx, to_verbs_pd(pd)->ibpd, addr, length,
				    access, &vmr->reg);
		if (ret) {
			free(vmr);
			return ret;
		}
	}
	mr_keys_set(vmr);
	*mr_out = &vmr->base;
	return 0;
}

/*
 * A new registration replaces the old one, so that the keys may change,
 * as the verbs allow: one path whether the old registration is shared,
 * zero-based or neither.
 */
int verbs_mr_rereg(struct openrdma_mr *mr, int flags, struct openrdma_pd *pd,
		   void *addr, size_t length, int access)
{
	struct verbs_ctx *vctx = to_verbs_ctx(mr->obj.ctx);
	struct verbs_mr *vmr = to_verbs_mr(mr);
	struct verbs_reg *reg = NULL;
	int ret;

	if (length) {
		ret = verbs_reg_get(vctx, to_verbs_pd(pd)->ibpd, addr, length,
				    access, &reg);
		if (ret)
			return ret;
	}
	if (vmr->reg) {
		ret = verbs_reg_put(vctx, vmr->reg);
		if (ret) {
			if (reg && verbs_reg_put(vctx, reg))
				openrdma_warn("verbs", "rereg: registration "
						       "left behind");
			return ret;
		}
	}
	vmr->reg = reg;
	mr_keys_set(vmr);
	return 0;
}

int verbs_mr_dereg(struct openrdma_mr *mr)
{
	struct verbs_mr *vmr = to_verbs_mr(mr);
	int ret;

	if (vmr->reg) {
		ret = verbs_reg_put(to_verbs_ctx(mr->obj.ctx), vmr->reg);
		if (ret)
			return ret;
	}
	free(vmr);
	return 0;
}

int verbs_mw_alloc(struct openrdma_pd *pd, enum openrdma_mw_type type,
		   struct openrdma_mw **mw_out)
{
	struct verbs_mw *vmw;
	int ret;

	vmw = calloc(1, sizeof(*vmw));
	if (!vmw)
		return -OPENRDMA_ENOMEM;
	vmw->ibmw = ibv_alloc_mw(to_verbs_pd(pd)->ibpd, (enum ibv_mw_type)type);
	if (!vmw->ibmw) {
		ret = verbs_errno();
		free(vmw);
		return ret;
	}
	/* The key's index is the window's; binds change its low byte. */
	vmw->base.rkey = vmw->ibmw->rkey;
	*mw_out = &vmw->base;
	return 0;
}

int verbs_mw_dealloc(struct openrdma_mw *mw)
{
	struct verbs_mw *vmw = to_verbs_mw(mw);
	int ret;

	ret = ibv_dealloc_mw(vmw->ibmw);
	if (ret)
		return verbs_ret(ret);
	free(vmw);
	return 0;
}
