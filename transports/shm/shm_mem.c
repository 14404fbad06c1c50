/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Protection domains, memory regions and windows, address handles.  MRs
 * with remote rights are also published in the node segment's key table,
 * where initiators check their own RDMA; deregistering one waits until no
 * initiator copies through it.
 */
#include <stdlib.h>

#include "core/sw/mw.h"
#include "transports/shm/shm.h"

#define REMOTE_RIGHTS \
	(OPENRDMA_ACCESS_REMOTE_WRITE | OPENRDMA_ACCESS_REMOTE_READ)

static struct shm_ctx *pd_ctx(struct openrdma_pd *pd)
{
	return to_shm_ctx(pd->obj.ctx);
}

int shm_pd_alloc(struct openrdma_context *ctx, struct openrdma_pd **pd_out)
{
	struct shm_ctx *sctx = to_shm_ctx(ctx);
	struct shm_pd *pd;
	int ret;

	ret = shm_res_get(sctx, SHM_RES_PD);
	if (ret)
		return ret;
	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		shm_res_put(sctx, SHM_RES_PD);
		return -OPENRDMA_ENOMEM;
	}
	pd->id = atomic_fetch_add(&sctx->pd_next, 1);
	*pd_out = &pd->base;
	return 0;
}

int shm_pd_dealloc(struct openrdma_pd *pd)
{
	shm_res_put(pd_ctx(pd), SHM_RES_PD);
	free(to_shm_pd(pd));
	return 0;
}

static int mr_attr(struct openrdma_pd *pd, void *addr, size_t length,
		   int access, struct openrdma_mr *owner,
		   struct sw_key_attr *attr)
{
	if (length > SHM_MAX_MR_SIZE)
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

/* Publishes an MR that peers may reach with RDMA of their own. */
static void mr_publish(struct shm_ctx *sctx, const struct openrdma_mr *mr)
{
	if (mr->access & REMOTE_RIGHTS)
		shm_keytab_publish(sctx, mr->rkey, to_shm_pd(mr->pd),
				   (uintptr_t)mr->addr, mr->length,
				   (unsigned int)mr->access);
}

int shm_mr_reg(struct openrdma_pd *pd, void *addr, size_t length, int access,
	       struct openrdma_mr **mr_out)
{
	struct shm_ctx *sctx = pd_ctx(pd);
	struct sw_key_attr attr;
	struct shm_mr *mr;
	uint32_t key;
	int ret;

	ret = shm_res_get(sctx, SHM_RES_MR);
	if (ret)
		return ret;
	ret = -OPENRDMA_ENOMEM;
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		goto err_res;
	ret = mr_attr(pd, addr, length, access, &mr->base, &attr);
	if (ret)
		goto err_free;
	ret = sw_keymap_add(sctx->keymap, &attr, &key);
	if (ret)
		goto err_free;
	mr->base.pd = pd;
	mr->base.addr = addr;
	mr->base.length = length;
	mr->base.access = access;
	mr->base.lkey = key;
	mr->base.rkey = key;
	mr_publish(sctx, &mr->base);
	*mr_out = &mr->base;
	return 0;

err_free:
	free(mr);
err_res:
	shm_res_put(sctx, SHM_RES_MR);
	return ret;
}

int shm_mr_rereg(struct openrdma_mr *mr, int flags, struct openrdma_pd *pd,
		 void *addr, size_t length, int access)
{
	struct shm_ctx *sctx = pd_ctx(mr->pd);
	struct openrdma_mr now = *mr;
	struct sw_key_attr attr;
	int ret;

	if (!(flags & OPENRDMA_REREG_CHANGE_PD))
		pd = mr->pd;
	if (!(flags & OPENRDMA_REREG_CHANGE_TRANSLATION)) {
		addr = mr->addr;
		length = mr->length;
	}
	if (!(flags & OPENRDMA_REREG_CHANGE_ACCESS))
		access = mr->access;
	ret = mr_attr(pd, addr, length, access, mr, &attr);
	if (ret)
		return ret;
	/* no direct access with the old attributes once this returns */
	shm_keytab_unpublish(sctx, mr->rkey);
	ret = sw_keymap_modify(sctx->keymap, mr->lkey, &attr);
	/* our own copies through the old translation end first */
	shm_epoch_wait(&sctx->epoch);
	if (!ret) {
		/* the core records them after we return: publish the new */
		now.pd = pd;
		now.addr = addr;
		now.length = length;
		now.access = access;
	}
	mr_publish(sctx, &now);
	return ret;
}

int shm_mr_dereg(struct openrdma_mr *mr)
{
	struct shm_ctx *sctx = pd_ctx(mr->pd);
	int ret;

	shm_keytab_unpublish(sctx, mr->rkey);
	ret = sw_keymap_remove(sctx->keymap, mr->lkey);
	/* windows bound to it keep it */
	if (ret == -OPENRDMA_EBUSY) {
		mr_publish(sctx, mr);
		return ret;
	}
	/* a request that found the key before it went may still copy: the
	 * application frees the memory once we return */
	shm_epoch_wait(&sctx->epoch);
	shm_res_put(sctx, SHM_RES_MR);
	free(mr);
	return 0;
}

int shm_mw_alloc(struct openrdma_pd *pd, enum openrdma_mw_type type,
		 struct openrdma_mw **mw_out)
{
	struct shm_ctx *sctx = pd_ctx(pd);
	struct shm_mw *mw;
	int ret;

	ret = shm_res_get(sctx, SHM_RES_MW);
	if (ret)
		return ret;
	ret = -OPENRDMA_ENOMEM;
	mw = calloc(1, sizeof(*mw));
	if (!mw)
		goto err_res;
	mw->base.pd = pd;
	mw->base.type = type;
	ret = sw_mw_init(sctx->keymap, &mw->base);
	if (ret)
		goto err_free;
	*mw_out = &mw->base;
	return 0;

err_free:
	free(mw);
err_res:
	shm_res_put(sctx, SHM_RES_MW);
	return ret;
}

int shm_mw_dealloc(struct openrdma_mw *mw)
{
	struct shm_ctx *sctx = pd_ctx(mw->pd);

	sw_mw_fini(sctx->keymap, mw);
	shm_res_put(sctx, SHM_RES_MW);
	free(mw);
	return 0;
}

int shm_ah_create(struct openrdma_pd *pd, struct openrdma_ah_attr *attr,
		  struct openrdma_ah **ah_out)
{
	struct shm_ctx *sctx = pd_ctx(pd);
	struct shm_ah *ah;
	int ret;

	ret = shm_res_get(sctx, SHM_RES_AH);
	if (ret)
		return ret;
	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		shm_res_put(sctx, SHM_RES_AH);
		return -OPENRDMA_ENOMEM;
	}
	ah->base.pd = pd;
	ah->attr = *attr;
	/* an address elsewhere is not an error: datagrams to it are lost */
	ah->local = shm_ah_attr_local(attr);
	*ah_out = &ah->base;
	return 0;
}

int shm_ah_destroy(struct openrdma_ah *ah)
{
	shm_res_put(pd_ctx(ah->pd), SHM_RES_AH);
	free(to_shm_ah(ah));
	return 0;
}

int shm_ah_attr_from_wc(struct openrdma_context *ctx, uint8_t port_num,
			const struct openrdma_wc *wc,
			const struct openrdma_grh *grh,
			struct openrdma_ah_attr *attr)
{
	if (port_num != SHM_PORT)
		return -OPENRDMA_EINVAL;
	return sw_ah_attr_from_wc(to_shm_ctx(ctx)->peers, port_num, wc, grh,
				  attr);
}
