/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Protection domains, memory regions and windows, address handles: the
 * toolkit's (core/sw/sw_mem_ops.c) with tcp's hooks.
 * Deregistering (or re-registering) an MR waits for the socket transfers
 * into or out of registered memory under way (the memory guard), so that
 * no byte moves into memory the application got back.
 */
#include "core/sw/sw_ops.h"
#include "transports/tcp/tcp.h"

static struct sw_keymap *keymap(struct openrdma_context *ctx)
{
	return to_tcp_ctx(ctx)->keymap;
}

static void mr_change_begin(struct openrdma_context *ctx,
			    const struct openrdma_mr *mr)
{
	tcp_mem_change_begin(to_tcp_ctx(ctx));
}

static void mr_change_end(struct openrdma_context *ctx,
			  const struct openrdma_mr *now)
{
	tcp_mem_change_end(to_tcp_ctx(ctx));
}

static void ah_init(struct openrdma_ah *ah, const struct openrdma_ah_attr *attr)
{
	struct tcp_ah *tah = to_tcp_ah(ah);

	/* a GID alone names a host but no port: datagrams to it are lost,
	 * which is not an error for UD */
	if (attr->addr.ss_family == AF_INET ||
	    attr->addr.ss_family == AF_INET6) {
		tah->dest = attr->addr;
		tcp_addr_normalize(&tah->dest);
	}
}

static const struct sw_mem_ops tcp_mem_ops = {
	.max_mr_size = TCP_MAX_MR_SIZE,
	.pd_size = sizeof(struct tcp_pd),
	.mr_size = sizeof(struct tcp_mr),
	.mw_size = sizeof(struct tcp_mw),
	.ah_size = sizeof(struct tcp_ah),
	.res_get = tcp_res_get,
	.res_put = tcp_res_put,
	.keymap = keymap,
	.mr_change_begin = mr_change_begin,
	.mr_change_end = mr_change_end,
	.ah_init = ah_init,
};

int tcp_pd_alloc(struct openrdma_context *ctx, struct openrdma_pd **pd_out)
{
	return sw_pd_alloc(&tcp_mem_ops, ctx, pd_out);
}

int tcp_pd_dealloc(struct openrdma_pd *pd)
{
	return sw_pd_dealloc(&tcp_mem_ops, pd);
}

int tcp_mr_reg(struct openrdma_pd *pd, void *addr, size_t length, int access,
	       struct openrdma_mr **mr_out)
{
	return sw_mr_reg(&tcp_mem_ops, pd, addr, length, access, mr_out);
}

int tcp_mr_rereg(struct openrdma_mr *mr, int flags, struct openrdma_pd *pd,
		 void *addr, size_t length, int access)
{
	return sw_mr_rereg(&tcp_mem_ops, mr, flags, pd, addr, length, access);
}

int tcp_mr_dereg(struct openrdma_mr *mr)
{
	return sw_mr_dereg(&tcp_mem_ops, mr);
}

int tcp_mw_alloc(struct openrdma_pd *pd, enum openrdma_mw_type type,
		 struct openrdma_mw **mw_out)
{
	return sw_mw_alloc(&tcp_mem_ops, pd, type, mw_out);
}

int tcp_mw_dealloc(struct openrdma_mw *mw)
{
	return sw_mw_dealloc(&tcp_mem_ops, mw);
}

int tcp_ah_create(struct openrdma_pd *pd, struct openrdma_ah_attr *attr,
		  struct openrdma_ah **ah_out)
{
	return sw_ah_create(&tcp_mem_ops, pd, attr, ah_out);
}

int tcp_ah_destroy(struct openrdma_ah *ah)
{
	return sw_ah_destroy(&tcp_mem_ops, ah);
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
