/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The published key table: the MRs that peers may access with their own
 * process_vm_writev/readv, in the node segment that only we write.  It
 * mirrors the key map for MRs with remote rights; windows are not in it
 * (their accesses go through the target).  A lookup that fails is never an
 * error: the request then goes to the target, whose key map decides.
 *
 * Open addressing by the key's (random) index; entries are seqlocks.  The
 * deregistration race is closed by a generation check on both sides: the
 * initiator announces the key and generation it copies through (the busy
 * word of its connection segment) and then checks that the entry still
 * has that generation; we make the entry odd (invalid) and then wait until
 * no connection announces the key.  Sequentially consistent on both
 * sides, so one of the two sees the other.
 */
#include <sched.h>

#include "transports/shm/shm.h"

/* Probes a reader makes before leaving the decision to the target. */
#define MAX_PROBES 32
#define MAX_RETRIES 4

static uint32_t slot_of(uint32_t key, uint32_t mask)
{
	return SW_KEY_INDEX(key) & mask;
}

/* Our entry for key, or where to put it.  Called with key_lock held. */
static struct shm_key *entry_find(struct shm_ctx *sctx, uint32_t key,
				  bool insert)
{
	uint32_t mask = SHM_KEY_SLOTS - 1, i = slot_of(key, mask), n, k;
	struct shm_key *free_slot = NULL, *e;

	for (n = 0; n < SHM_KEY_SLOTS; n++, i = (i + 1) & mask) {
		e = &sctx->keys[i];
		k = atomic_load_explicit(&e->key, memory_order_relaxed);
		if (k == key)
			return e;
		if (k == SHM_KEY_DELETED && !free_slot)
			free_slot = e;
		if (k == SHM_KEY_EMPTY)
			return insert ? (free_slot ? free_slot : e) : NULL;
	}
	return insert ? free_slot : NULL;
}

static void entry_begin(struct shm_key *e)
{
	atomic_store(&e->seq, atomic_load(&e->seq) + 1);
}

static void entry_end(struct shm_key *e)
{
	atomic_store_explicit(&e->seq, atomic_load(&e->seq) + 1,
			      memory_order_release);
}

static void entry_fill(struct shm_key *e, uint32_t key, uint32_t pd,
		       uint64_t va, uint64_t len, unsigned int access)
{
	atomic_store_explicit(&e->access, access, memory_order_relaxed);
	atomic_store_explicit(&e->pd, pd, memory_order_relaxed);
	atomic_store_explicit(&e->va, va, memory_order_relaxed);
	atomic_store_explicit(&e->len, len, memory_order_relaxed);
	atomic_store_explicit(&e->key, key, memory_order_relaxed);
}

/* Invalidates the entry of key (odd generation) and waits until no
 * initiator copies through it.  Returns it, still odd, or NULL. */
static struct shm_key *entry_retire(struct shm_ctx *sctx, uint32_t key)
{
	struct shm_key *e;

	pthread_mutex_lock(&sctx->key_lock);
	e = entry_find(sctx, key, false);
	if (e)
		entry_begin(e);
	pthread_mutex_unlock(&sctx->key_lock);
	if (e)
		shm_conn_key_quiesce(sctx, key);
	return e;
}

void shm_keytab_publish(struct shm_ctx *sctx, uint32_t key,
			const struct shm_pd *pd, uint64_t va, uint64_t len,
			unsigned int access)
{
	struct shm_key *e;

	/* a changed entry: no copy may run on the old one */
	e = entry_retire(sctx, key);
	pthread_mutex_lock(&sctx->key_lock);
	if (!e) {
		e = entry_find(sctx, key, true);
		if (e)
			entry_begin(e);
	}
	if (e) {
		entry_fill(e, key, pd->id, va, len, access);
		entry_end(e);
	}
	pthread_mutex_unlock(&sctx->key_lock);
	/* a full table only costs speed: the target decides */
}

void shm_keytab_unpublish(struct shm_ctx *sctx, uint32_t key)
{
	struct shm_key *e = entry_retire(sctx, key);

	if (!e)
		return;
	pthread_mutex_lock(&sctx->key_lock);
	entry_fill(e, SHM_KEY_DELETED, 0, 0, 0, 0);
	entry_end(e);
	pthread_mutex_unlock(&sctx->key_lock);
}

/* A consistent copy of an entry, or false if it kept changing. */
static bool entry_read(const struct shm_key *e, uint32_t *key, uint32_t *seq,
		       uint32_t *access, uint32_t *pd, uint64_t *va,
		       uint64_t *len)
{
	uint32_t s1, s2;
	int i;

	for (i = 0; i < MAX_RETRIES; i++) {
		s1 = atomic_load_explicit(&e->seq, memory_order_acquire);
		if (s1 & 1)
			continue;
		*key = atomic_load_explicit(&e->key, memory_order_relaxed);
		*access =
			atomic_load_explicit(&e->access, memory_order_relaxed);
		*pd = atomic_load_explicit(&e->pd, memory_order_relaxed);
		*va = atomic_load_explicit(&e->va, memory_order_relaxed);
		*len = atomic_load_explicit(&e->len, memory_order_relaxed);
		atomic_thread_fence(memory_order_acquire);
		s2 = atomic_load_explicit(&e->seq, memory_order_relaxed);
		if (s1 == s2) {
			*seq = s1;
			return true;
		}
	}
	return false;
}

bool shm_keytab_grant(const struct shm_peer *peer, uint32_t key, uint32_t pd,
		      uint64_t addr, uint64_t len, unsigned int access,
		      struct shm_key_grant *g)
{
	uint32_t i = slot_of(key, peer->key_mask), n, k, seq, acc, kpd;
	const struct shm_key *e;
	uint64_t va, klen, off;

	for (n = 0; n < MAX_PROBES; n++, i = (i + 1) & peer->key_mask) {
		e = &peer->keys[i];
		if (!entry_read(e, &k, &seq, &acc, &kpd, &va, &klen))
			return false;
		if (k == SHM_KEY_EMPTY)
			return false;
		if (k != key)
			continue;
		if (kpd != pd || (acc & access) != access)
			return false;
		if (acc & OPENRDMA_ACCESS_ZERO_BASED) {
			off = addr;
		} else {
			if (addr < va)
				return false;
			off = addr - va;
		}
		if (off > klen || len > klen - off)
			return false;
		g->va = va + off;
		g->seq = seq;
		g->slot = e;
		return true;
	}
	return false;
}

bool shm_keytab_still(const struct shm_key_grant *g)
{
	return atomic_load(&g->slot->seq) == g->seq;
}
