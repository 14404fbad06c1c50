/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Protection domains, memory regions and windows, address handles: the
 * toolkit's (core/sw/sw_mem_ops.c) with shm's hooks.  MRs with remote
 * rights are also published in the node segment's key table, where
 * initiators check their own RDMA; deregistering one waits until no
 * initiator copies through it.
 */
#include <sched.h>

#include "transports/shm/shm.h"

#define REMOTE_RIGHTS \
	(OPENRDMA_ACCESS_REMOTE_WRITE | OPENRDMA_ACCESS_REMOTE_READ)

/* Returns once every memory section and every drain of a receive slot
 * that began before has ended. */
static void epoch_wait(struct shm_ctx *sctx)
{
	struct shm_epoch *e = &sctx->epoch;
	uint32_t v;

	pthread_mutex_lock(&e->lock);
	v = atomic_fetch_add(&e->epoch, 1);
	while (atomic_load(&e->readers[v & 1]))
		sched_yield();
	pthread_mutex_unlock(&e->lock);
	shm_slots_wait(sctx);
}

static struct sw_keymap *keymap(struct openrdma_context *ctx)
{
	return to_shm_ctx(ctx)->keymap;
}

static void pd_init(struct openrdma_context *ctx, struct openrdma_pd *pd)
{
	to_shm_pd(pd)->id = atomic_fetch_add(&to_shm_ctx(ctx)->pd_next, 1);
}

/* Publishes an MR that peers may reach with RDMA of their own. */
static void mr_publish(struct openrdma_context *ctx,
		       const struct openrdma_mr *mr)
{
	if (mr->access & REMOTE_RIGHTS)
		shm_keytab_publish(to_shm_ctx(ctx), mr->rkey, to_shm_pd(mr->pd),
				   (uintptr_t)mr->addr, mr->length,
				   (unsigned int)mr->access);
}

/* No direct access with the old attributes once the change is made. */
static void mr_change_begin(struct openrdma_context *ctx,
			    const struct openrdma_mr *mr)
{
	shm_keytab_unpublish(to_shm_ctx(ctx), mr->rkey);
}

static void mr_change_end(struct openrdma_context *ctx,
			  const struct openrdma_mr *now)
{
	/* a request that found the key before it changed may still copy
	 * through the old translation: the application reuses the memory
	 * once we return */
	epoch_wait(to_shm_ctx(ctx));
	if (now)
		mr_publish(ctx, now);
}

static void ah_init(struct openrdma_ah *ah, const struct openrdma_ah_attr *attr)
{
	struct shm_ah *sah = to_shm_ah(ah);

	sah->attr = *attr;
	/* an address elsewhere is not an error: datagrams to it are lost */
	sah->local = shm_ah_attr_local(attr);
}

static const struct sw_mem_ops shm_mem_ops = {
	.max_mr_size = SHM_MAX_MR_SIZE,
	.pd_size = sizeof(struct shm_pd),
	.mr_size = sizeof(struct shm_mr),
	.mw_size = sizeof(struct shm_mw),
	.ah_size = sizeof(struct shm_ah),
	.res_get = shm_res_get,
	.res_put = shm_res_put,
	.keymap = keymap,
	.pd_init = pd_init,
	.mr_added = mr_publish,
	.mr_change_begin = mr_change_begin,
	.mr_change_end = mr_change_end,
	.ah_init = ah_init,
};

int shm_pd_alloc(struct openrdma_context *ctx, struct openrdma_pd **pd_out)
{
	return sw_pd_alloc(&shm_mem_ops, ctx, pd_out);
}

int shm_pd_dealloc(struct openrdma_pd *pd)
{
	return sw_pd_dealloc(&shm_mem_ops, pd);
}

int shm_mr_reg(struct openrdma_pd *pd, void *addr, size_t length, int access,
	       struct openrdma_mr **mr_out)
{
	return sw_mr_reg(&shm_mem_ops, pd, addr, length, access, mr_out);
}

int shm_mr_rereg(struct openrdma_mr *mr, int flags, struct openrdma_pd *pd,
		 void *addr, size_t length, int access)
{
	return sw_mr_rereg(&shm_mem_ops, mr, flags, pd, addr, length, access);
}

int shm_mr_dereg(struct openrdma_mr *mr)
{
	return sw_mr_dereg(&shm_mem_ops, mr);
}

int shm_mw_alloc(struct openrdma_pd *pd, enum openrdma_mw_type type,
		 struct openrdma_mw **mw_out)
{
	return sw_mw_alloc(&shm_mem_ops, pd, type, mw_out);
}

int shm_mw_dealloc(struct openrdma_mw *mw)
{
	return sw_mw_dealloc(&shm_mem_ops, mw);
}

int shm_ah_create(struct openrdma_pd *pd, struct openrdma_ah_attr *attr,
		  struct openrdma_ah **ah_out)
{
	return sw_ah_create(&shm_mem_ops, pd, attr, ah_out);
}

int shm_ah_destroy(struct openrdma_ah *ah)
{
	return sw_ah_destroy(&shm_mem_ops, ah);
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
