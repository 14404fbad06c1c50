/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * PDs, MRs, MWs and AHs of software transports.  An MR has one key for
 * both lkey and rkey: the access check of the key map tells local from
 * remote use.  The transport's hooks see every key change, so that one
 * that exposes registered memory outside the map (a published key table,
 * transfers under way on a socket) can withdraw it first.
 */
#include <stdlib.h>

#include <openrdma/errno.h>

#include "core/sw/mw.h"
#include "core/sw/sw_ops.h"

int sw_pd_alloc(const struct sw_mem_ops *ops, struct openrdma_context *ctx,
		struct openrdma_pd **pd_out)
{
	struct openrdma_pd *pd;
	int ret;

	ret = ops->res_get(ctx, SW_RES_PD);
	if (ret)
		return ret;
	pd = calloc(1, ops->pd_size);
	if (!pd) {
		ops->res_put(ctx, SW_RES_PD);
		return -OPENRDMA_ENOMEM;
	}
	if (ops->pd_init)
		ops->pd_init(ctx, pd);
	*pd_out = pd;
	return 0;
}

int sw_pd_dealloc(const struct sw_mem_ops *ops, struct openrdma_pd *pd)
{
	ops->res_put(pd->obj.ctx, SW_RES_PD);
	free(pd);
	return 0;
}

static int mr_attr(const struct sw_mem_ops *ops, struct openrdma_pd *pd,
		   void *addr, size_t length, int access,
		   struct openrdma_mr *owner, struct sw_key_attr *attr)
{
	if (length > ops->max_mr_size)
		return -OPENRDMA_EINVAL;
	/* the device writes where remote peers may write */
	if ((access &
	     (OPENRDMA_ACCESS_REMOTE_WRITE | OPENRDMA_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & OPENRDMA_ACCESS_LOCAL_WRITE))
		return -OPENRDMA_EINVAL;
	attr->type = SW_KEY_MR;
	attr->va = (uintptr_t)addr;
	attr->length = length;
	attr->access = (unsigned int)access;
	attr->pd = pd;
	attr->owner = owner;
	return 0;
}

int sw_mr_reg(const struct sw_mem_ops *ops, struct openrdma_pd *pd, void *addr,
	      size_t length, int access, struct openrdma_mr **mr_out)
{
	struct openrdma_context *ctx = pd->obj.ctx;
	struct sw_key_attr attr;
	struct openrdma_mr *mr;
	uint32_t key;
	int ret;

	ret = ops->res_get(ctx, SW_RES_MR);
	if (ret)
		return ret;
	ret = -OPENRDMA_ENOMEM;
	mr = calloc(1, ops->mr_size);
	if (!mr)
		goto err_res;
	ret = mr_attr(ops, pd, addr, length, access, mr, &attr);
	if (ret)
		goto err_free;
	ret = sw_keymap_add(ops->keymap(ctx), &attr, &key);
	if (ret)
		goto err_free;
	mr->pd = pd;
	mr->addr = addr;
	mr->length = length;
	mr->access = access;
	mr->lkey = key;
	mr->rkey = key;
	if (ops->mr_added)
		ops->mr_added(ctx, mr);
	*mr_out = mr;
	return 0;

err_free:
	free(mr);
err_res:
	ops->res_put(ctx, SW_RES_MR);
	return ret;
}

static void change_begin(const struct sw_mem_ops *ops,
			 struct openrdma_context *ctx,
			 const struct openrdma_mr *mr)
{
	if (ops->mr_change_begin)
		ops->mr_change_begin(ctx, mr);
}

static void change_end(const struct sw_mem_ops *ops,
		       struct openrdma_context *ctx,
		       const struct openrdma_mr *now)
{
	if (ops->mr_change_end)
		ops->mr_change_end(ctx, now);
}

int sw_mr_rereg(const struct sw_mem_ops *ops, struct openrdma_mr *mr, int flags,
		struct openrdma_pd *pd, void *addr, size_t length, int access)
{
	struct openrdma_context *ctx = mr->pd->obj.ctx;
	struct openrdma_mr now = *mr;
	struct sw_key_attr attr;
	int ret;

	ret = mr_attr(ops, pd, addr, length, access, mr, &attr);
	if (ret)
		return ret;
	change_begin(ops, ctx, mr);
	ret = sw_keymap_modify(ops->keymap(ctx), mr->lkey, &attr);
	if (!ret) {
		/* the core records them in mr after we return */
		now.pd = pd;
		now.addr = addr;
		now.length = length;
		now.access = access;
	}
	change_end(ops, ctx, &now);
	return ret;
}

int sw_mr_dereg(const struct sw_mem_ops *ops, struct openrdma_mr *mr)
{
	struct openrdma_context *ctx = mr->pd->obj.ctx;
	int ret;

	change_begin(ops, ctx, mr);
	ret = sw_keymap_remove(ops->keymap(ctx), mr->lkey);
	/* windows bound to it keep it */
	if (ret == -OPENRDMA_EBUSY) {
		change_end(ops, ctx, mr);
		return ret;
	}
	change_end(ops, ctx, NULL);
	ops->res_put(ctx, SW_RES_MR);
	free(mr);
	return 0;
}

int sw_mw_alloc(const struct sw_mem_ops *ops, struct openrdma_pd *pd,
		enum openrdma_mw_type type, struct openrdma_mw **mw_out)
{
	struct openrdma_context *ctx = pd->obj.ctx;
	struct openrdma_mw *mw;
	int ret;

	ret = ops->res_get(ctx, SW_RES_MW);
	if (ret)
		return ret;
	ret = -OPENRDMA_ENOMEM;
	mw = calloc(1, ops->mw_size);
	if (!mw)
		goto err_res;
	mw->pd = pd;
	mw->type = type;
	ret = sw_mw_init(ops->keymap(ctx), mw);
	if (ret)
		goto err_free;
	*mw_out = mw;
	return 0;

err_free:
	free(mw);
err_res:
	ops->res_put(ctx, SW_RES_MW);
	return ret;
}

int sw_mw_dealloc(const struct sw_mem_ops *ops, struct openrdma_mw *mw)
{
	struct openrdma_context *ctx = mw->pd->obj.ctx;

	sw_mw_fini(ops->keymap(ctx), mw);
	ops->res_put(ctx, SW_RES_MW);
	free(mw);
	return 0;
}

int sw_ah_create(const struct sw_mem_ops *ops, struct openrdma_pd *pd,
		 struct openrdma_ah_attr *attr, struct openrdma_ah **ah_out)
{
	struct openrdma_context *ctx = pd->obj.ctx;
	struct openrdma_ah *ah;
	int ret;

	ret = ops->res_get(ctx, SW_RES_AH);
	if (ret)
		return ret;
	ah = calloc(1, ops->ah_size);
	if (!ah) {
		ops->res_put(ctx, SW_RES_AH);
		return -OPENRDMA_ENOMEM;
	}
	ah->pd = pd;
	ops->ah_init(ah, attr);
	*ah_out = ah;
	return 0;
}

int sw_ah_destroy(const struct sw_mem_ops *ops, struct openrdma_ah *ah)
{
	ops->res_put(ah->pd->obj.ctx, SW_RES_AH);
	free(ah);
	return 0;
}
