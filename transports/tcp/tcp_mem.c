/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Protection domains, memory regions and windows, address handles.
 * Deregistering (or re-registering) an MR waits for the socket transfers
 * into or out of registered memory under way (the memory guard), so that
 * no byte moves into memory the application got back.
 */
#include <stdlib.h>

#include "core/sw/mw.h"
#include "transports/tcp/tcp.h"

static struct tcp_ctx *pd_ctx(struct openrdma_pd *pd)
{
	return to_tcp_ctx(pd->obj.ctx);
}

int tcp_pd_alloc(struct openrdma_context *ctx, struct openrdma_pd **pd_out)
{
	struct tcp_ctx *tctx = to_tcp_ctx(ctx);
	struct tcp_pd *pd;
	int ret;

	ret = tcp_res_get(tctx, TCP_RES_PD);
	if (ret)
		return ret;
	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		tcp_res_put(tctx, TCP_RES_PD);
		return -OPENRDMA_ENOMEM;
	}
	*pd_out = &pd->base;
	return 0;
}

int tcp_pd_dealloc(struct openrdma_pd *pd)
{
	tcp_res_put(pd_ctx(pd), TCP_RES_PD);
	free(pd);
	return 0;
}

static int mr_attr(struct openrdma_pd *pd, void *addr, size_t length,
		   int access, struct openrdma_mr *owner,
		   struct sw_key_attr *attr)
{
	if (length > TCP_MAX_MR_SIZE)
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

int tcp_mr_reg(struct openrdma_pd *pd, void *addr, size_t length, int access,
	       struct openrdma_mr **mr_out)
{
	struct tcp_ctx *tctx = pd_ctx(pd);
	struct sw_key_attr attr;
	struct tcp_mr *mr;
	uint32_t key;
	int ret;

	ret = tcp_res_get(tctx, TCP_RES_MR);
	if (ret)
		return ret;
	ret = -OPENRDMA_ENOMEM;
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		goto err_res;
	ret = mr_attr(pd, addr, length, access, &mr->base, &attr);
	if (ret)
		goto err_free;
	ret = sw_keymap_add(tctx->keymap, &attr, &key);
	if (ret)
		goto err_free;
	mr->base.pd = pd;
	mr->base.addr = addr;
	mr->base.length = length;
	mr->base.access = access;
	/* one key serves both: the access check tells local from remote */
	mr->base.lkey = key;
	mr->base.rkey = key;
	*mr_out = &mr->base;
	return 0;

err_free:
	free(mr);
err_res:
	tcp_res_put(tctx, TCP_RES_MR);
	return ret;
}

int tcp_mr_rereg(struct openrdma_mr *mr, int flags, struct openrdma_pd *pd,
		 void *addr, size_t length, int access)
{
	struct tcp_ctx *tctx = pd_ctx(mr->pd);
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
	tcp_mem_change_begin(tctx);
	ret = sw_keymap_modify(tctx->keymap, mr->lkey, &attr);
	tcp_mem_change_end(tctx);
	return ret;
}

int tcp_mr_dereg(struct openrdma_mr *mr)
{
	struct tcp_ctx *tctx = pd_ctx(mr->pd);
	int ret;

	tcp_mem_change_begin(tctx);
	ret = sw_keymap_remove(tctx->keymap, mr->lkey);
	tcp_mem_change_end(tctx);
	/* windows bound to it keep it */
	if (ret == -OPENRDMA_EBUSY)
		return ret;
	tcp_res_put(tctx, TCP_RES_MR);
	free(mr);
	return 0;
}

int tcp_mw_alloc(struct openrdma_pd *pd, enum openrdma_mw_type type,
		 struct openrdma_mw **mw_out)
{
	struct tcp_ctx *tctx = pd_ctx(pd);
	struct tcp_mw *mw;
	int ret;

	ret = tcp_res_get(tctx, TCP_RES_MW);
	if (ret)
		return ret;
	ret = -OPENRDMA_ENOMEM;
	mw = calloc(1, sizeof(*mw));
	if (!mw)
		goto err_res;
	mw->base.pd = pd;
	mw->base.type = type;
	ret = sw_mw_init(tctx->keymap, &mw->base);
	if (ret)
		goto err_free;
	*mw_out = &mw->base;
	return 0;

err_free:
	free(mw);
err_res:
	tcp_res_put(tctx, TCP_RES_MW);
	return ret;
}

int tcp_mw_dealloc(struct openrdma_mw *mw)
{
	struct tcp_ctx *tctx = pd_ctx(mw->pd);

	sw_mw_fini(tctx->keymap, mw);
	tcp_res_put(tctx, TCP_RES_MW);
	free(mw);
	return 0;
}

int tcp_ah_create(struct openrdma_pd *pd, struct openrdma_ah_attr *attr,
		  struct openrdma_ah **ah_out)
{
	struct tcp_ctx *tctx = pd_ctx(pd);
	struct tcp_ah *ah;
	int ret;

	ret = tcp_res_get(tctx, TCP_RES_AH);
	if (ret)
		return ret;
	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		tcp_res_put(tctx, TCP_RES_AH);
		return -OPENRDMA_ENOMEM;
	}
	ah->base.pd = pd;
	/* a GID alone names a host but no port: datagrams to it are lost,
	 * which is not an error for UD */
	if (attr->addr.ss_family == AF_INET ||
	    attr->addr.ss_family == AF_INET6) {
		ah->dest = attr->addr;
		tcp_addr_normalize(&ah->dest);
	}
	*ah_out = &ah->base;
	return 0;
}

int tcp_ah_destroy(struct openrdma_ah *ah)
{
	tcp_res_put(pd_ctx(ah->pd), TCP_RES_AH);
	free(to_tcp_ah(ah));
	return 0;
}

int tcp_ah_attr_from_wc(struct openrdma_context *ctx, uint8_t port_num,
			const struct openrdma_wc *wc,
			const struct openrdma_grh *grh,
			struct openrdma_ah_attr *attr)
{
	if (port_num != TCP_PORT)
		return -OPENRDMA_EINVAL;
	return sw_ah_attr_from_wc(to_tcp_ctx(ctx)->peers, port_num, wc, grh,
				  attr);
}
