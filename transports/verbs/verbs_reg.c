/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Memory registrations, and the optional cache that lets MRs of the same
 * range share one (param verbs.reg_cache, off by default).
 *
 * Policy: a cached registration lives exactly as long as one of its MRs
 * does; the last openrdma_mr_dereg() releases it.  Nothing is kept for
 * memory that no MR covers, so unmapping memory after deregistering it
 * can never leave a stale translation behind.  Memory unmapped while an
 * MR still covers it stays pinned to the old pages (as with libibverbs),
 * and with the cache on, a new registration of the same range while that
 * MR lives returns the old pages too: deregister before unmapping.
 *
 * A zero-based MR is two registrations of the range: one at its virtual
 * address for local SGEs and MW binds, one at IOVA 0 whose rkey peers use
 * with offsets (openrdma_semantics(7)).
 */
#include <stdlib.h>
#include <string.h>

#include "transports/verbs/verbs.h"

#define REMOTE_ACCESS                                       \
	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
	 IBV_ACCESS_REMOTE_ATOMIC)

/* Bytes of struct verbs_reg that form the cache key, from pd to access. */
#define REG_KEY_LEN                                         \
	(offsetof(struct verbs_reg, access) + sizeof(int) - \
	 offsetof(struct verbs_reg, pd))

struct verbs_reg_cache {
	pthread_mutex_t lock;
	struct verbs_reg *table;
};

int verbs_reg_cache_create(struct verbs_reg_cache **cache_out)
{
	struct verbs_reg_cache *cache;
	int ret;

	cache = calloc(1, sizeof(*cache));
	if (!cache)
		return -OPENRDMA_ENOMEM;
	ret = -pthread_mutex_init(&cache->lock, NULL);
	if (ret) {
		free(cache);
		return ret;
	}
	*cache_out = cache;
	return 0;
}

static int reg_release(struct verbs_reg *reg)
{
	int ret;

	/* One MR may fail (an MW still bound): keep what is left. */
	if (reg->remote) {
		ret = ibv_dereg_mr(reg->remote);
		if (ret)
			return verbs_ret(ret);
		reg->remote = NULL;
	}
	ret = ibv_dereg_mr(reg->local);
	return verbs_ret(ret);
}

void verbs_reg_cache_destroy(struct verbs_reg_cache *cache)
{
	struct verbs_reg *reg, *tmp;

	/* Every MR is gone with its context's PDs: nothing should be left. */
	HASH_ITER (hh, cache->table, reg, tmp) {
		HASH_DEL(cache->table, reg);
		if (reg_release(reg))
			openrdma_warn("verbs", "registration of %p left behind",
				      (void *)reg->addr);
		free(reg);
	}
	pthread_mutex_destroy(&cache->lock);
	free(cache);
}

static int reg_create(struct ibv_pd *pd, void *addr, size_t length, int access,
		      struct verbs_reg **reg_out)
{
	struct verbs_reg *reg;
	int ret;

	reg = calloc(1, sizeof(*reg));
	if (!reg)
		return -OPENRDMA_ENOMEM;
	reg->pd = pd;
	reg->addr = (uintptr_t)addr;
	reg->length = length;
	reg->access = access;
	reg->refs = 1;
	if (!(access & IBV_ACCESS_ZERO_BASED)) {
		reg->local = ibv_reg_mr(pd, addr, length, access);
		if (!reg->local) {
			ret = verbs_errno();
			goto err_free;
		}
		*reg_out = reg;
		return 0;
	}

	reg->local =
		ibv_reg_mr(pd, addr, length,
			   access & ~(REMOTE_ACCESS | IBV_ACCESS_ZERO_BASED));
	if (!reg->local) {
		ret = verbs_errno();
		goto err_free;
	}
	reg->remote = ibv_reg_mr_iova(pd, addr, length, 0,
				      access & ~(IBV_ACCESS_ZERO_BASED |
						 IBV_ACCESS_MW_BIND));
	if (!reg->remote) {
		ret = verbs_errno();
		goto err_local;
	}
	*reg_out = reg;
	return 0;

err_local:
	ibv_dereg_mr(reg->local);
err_free:
	free(reg);
	return ret;
}

static struct verbs_reg *cache_find(struct verbs_reg_cache *cache,
				    const struct verbs_reg *key)
{
	struct verbs_reg *reg;

	HASH_FIND(hh, cache->table, &key->pd, REG_KEY_LEN, reg);
	return reg;
}

int verbs_reg_get(struct verbs_ctx *vctx, struct ibv_pd *pd, void *addr,
		  size_t length, int access, struct verbs_reg **reg_out)
{
	struct verbs_reg_cache *cache = vctx->reg_cache;
	struct verbs_reg key, *reg, *found;
	int ret;

	if (!cache)
		return reg_create(pd, addr, length, access, reg_out);

	memset(&key, 0, sizeof(key));
	key.pd = pd;
	key.addr = (uintptr_t)addr;
	key.length = length;
	key.access = access;
	pthread_mutex_lock(&cache->lock);
	found = cache_find(cache, &key);
	if (found)
		found->refs++;
	pthread_mutex_unlock(&cache->lock);
	if (found) {
		*reg_out = found;
		return 0;
	}

	/* Registered unlocked: pinning may take long.  A racing thread may
	 * have added the same range meanwhile; then use its. */
	ret = reg_create(pd, addr, length, access, &reg);
	if (ret)
		return ret;
	pthread_mutex_lock(&cache->lock);
	found = cache_find(cache, &key);
	if (found)
		found->refs++;
	else
		HASH_ADD(hh, cache->table, pd, REG_KEY_LEN, reg);
	pthread_mutex_unlock(&cache->lock);
	if (found) {
		if (reg_release(reg))
			openrdma_warn("verbs", "duplicate registration leaked");
		else
			free(reg);
		reg = found;
	}
	*reg_out = reg;
	return 0;
}

int verbs_reg_put(struct verbs_ctx *vctx, struct verbs_reg *reg)
{
	struct verbs_reg_cache *cache = vctx->reg_cache;
	int ret;

	if (!cache) {
		ret = reg_release(reg);
		if (!ret)
			free(reg);
		return ret;
	}
	/* Under the lock: no other MR may find it while it goes away. */
	pthread_mutex_lock(&cache->lock);
	if (reg->refs > 1) {
		reg->refs--;
		pthread_mutex_unlock(&cache->lock);
		return 0;
	}
	ret = reg_release(reg);
	if (!ret)
		HASH_DEL(cache->table, reg);
	pthread_mutex_unlock(&cache->lock);
	if (!ret)
		free(reg);
	return ret;
}
