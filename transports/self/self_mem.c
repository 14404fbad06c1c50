/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Protection domains, memory regions and windows, address handles: the
 * toolkit's (core/sw/sw_mem_ops.c), with self's limits and address check.
 */
#include "core/sw/sw_ops.h"
#include "transports/self/self.h"

static struct sw_keymap *keymap(struct openrdma_context *ctx)
{
	return to_self_ctx(ctx)->keymap;
}

static void pd_init(struct openrdma_context *ctx, struct openrdma_pd *pd)
{
	self_port_event(to_self_ctx(ctx));
}

static void ah_init(struct openrdma_ah *ah, const struct openrdma_ah_attr *attr)
{
	struct self_ah *sah = to_self_ah(ah);

	sah->attr = *attr;
	/* an address elsewhere is not an error: datagrams to it are lost */
	sah->local = self_ah_attr_local(attr);
}

static const struct sw_mem_ops self_mem_ops = {
	.max_mr_size = SELF_MAX_MR_SIZE,
	.pd_size = sizeof(struct self_pd),
	.mr_size = sizeof(struct self_mr),
	.mw_size = sizeof(struct self_mw),
	.ah_size = sizeof(struct self_ah),
	.res_get = self_res_get,
	.res_put = self_res_put,
	.keymap = keymap,
	.pd_init = pd_init,
	.ah_init = ah_init,
};

int self_pd_alloc(struct openrdma_context *ctx, struct openrdma_pd **pd_out)
{
	return sw_pd_alloc(&self_mem_ops, ctx, pd_out);
}

int self_pd_dealloc(struct openrdma_pd *pd)
{
	return sw_pd_dealloc(&self_mem_ops, pd);
}

int self_mr_reg(struct openrdma_pd *pd, void *addr, size_t length, int access,
		struct openrdma_mr **mr_out)
{
	return sw_mr_reg(&self_mem_ops, pd, addr, length, access, mr_out);
}

int self_mr_rereg(struct openrdma_mr *mr, int flags, struct openrdma_pd *pd,
		  void *addr, size_t length, int access)
{
	return sw_mr_rereg(&self_mem_ops, mr, flags, pd, addr, length, access);
}

int self_mr_dereg(struct openrdma_mr *mr)
{
	return sw_mr_dereg(&self_mem_ops, mr);
}

int self_mw_alloc(struct openrdma_pd *pd, enum openrdma_mw_type type,
		  struct openrdma_mw **mw_out)
{
	return sw_mw_alloc(&self_mem_ops, pd, type, mw_out);
}

int self_mw_dealloc(struct openrdma_mw *mw)
{
	return sw_mw_dealloc(&self_mem_ops, mw);
}

int self_ah_create(struct openrdma_pd *pd, struct openrdma_ah_attr *attr,
		   struct openrdma_ah **ah_out)
{
	return sw_ah_create(&self_mem_ops, pd, attr, ah_out);
}

int self_ah_destroy(struct openrdma_ah *ah)
{
	return sw_ah_destroy(&self_mem_ops, ah);
}

int self_ah_attr_from_wc(struct openrdma_context *ctx, uint8_t port_num,
			 const struct openrdma_wc *wc,
			 const struct openrdma_grh *grh,
			 struct openrdma_ah_attr *attr)
{
	if (port_num != SELF_PORT)
		return -OPENRDMA_EINVAL;
	return sw_ah_attr_from_wc(to_self_ctx(ctx)->peers, port_num, wc, grh,
				  attr);
}
