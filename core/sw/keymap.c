/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
#include "config.h"

/*
 * Indexes are random, so their own low bits spread them over the buckets:
 * hashing them again would cost more than the lookup.
 */
#define HASH_FUNCTION(keyptr, keylen, hashv) \
	((hashv) = *(const uint32_t *)(const void *)(keyptr))

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef HAVE_GETRANDOM
#include <sys/random.h>
#endif
#include <uthash.h>

#include "core/sw/keymap.h"

#define REMOTE_ACCESS                                                 \
	(OPENRDMA_ACCESS_REMOTE_WRITE | OPENRDMA_ACCESS_REMOTE_READ | \
	 OPENRDMA_ACCESS_REMOTE_ATOMIC)
#define WINDOW_ACCESS (REMOTE_ACCESS | OPENRDMA_ACCESS_ZERO_BASED)

/* Enough attempts that a full map, not bad luck, is the only way to fail. */
#define KEY_ATTEMPTS 64

struct key_entry {
	uint32_t index; /* hash key */
	uint32_t key; /* current key: index and tag */
	enum sw_key_type type;
	bool valid; /* MR: always; window: bound */
	uint64_t va;
	uint64_t length;
	unsigned int access;
	const struct openrdma_pd *pd;
	void *owner;
	uint32_t mr_index; /* window: the MR it is bound to */
	uint32_t num_mw; /* MR: windows bound to it */
	UT_hash_handle hh;
};

struct sw_keymap {
	pthread_rwlock_t lock;
	/* moves on with every change, under the write lock: a thread's
	 * copy of an entry (key_cache) holds while it stays */
	_Atomic uint64_t gen;
	struct key_entry *table;
	/* random bytes drawn in batches: one syscall per 64 keys */
	uint32_t pool[64];
	unsigned int pool_left;
};

/*
 * A thread's last lookups: a check of a key the thread looked up before,
 * with nothing changed in its map since, takes no lock.  Each set has two
 * ways, filled by turns, so that two keys a thread uses by turns (a
 * receive buffer and a target of writes, or the memory of two devices)
 * both stay whatever their random indexes.  Generations start apart for
 * every map, so that a map made where a freed one was never matches the
 * freed one's copies.
 */
struct key_copy {
	const struct sw_keymap *map;
	uint64_t gen;
	struct key_entry e;
};
static __thread struct {
	struct key_copy way[2];
	unsigned int fill; /* the way the next miss fills */
} key_cache[SW_KEY_CACHE_SETS];
static _Atomic uint64_t map_gens;

static void write_begin(struct sw_keymap *map)
{
	pthread_rwlock_wrlock(&map->lock);
}

static void write_end(struct sw_keymap *map)
{
	atomic_fetch_add_explicit(&map->gen, 1, memory_order_release);
	pthread_rwlock_unlock(&map->lock);
}

static int fill_random(void *buf, size_t len)
{
	uint8_t *p = buf;
	ssize_t n;
	int fd;

#ifdef HAVE_GETRANDOM
	while (len) {
		n = getrandom(p, len, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != ENOSYS)
				return -errno;
			break;
		}
		p += n;
		len -= (size_t)n;
	}
	if (!len)
		return 0;
#endif
	fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (len) {
		n = read(fd, p, len);
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			close(fd);
			return n < 0 ? -errno : -OPENRDMA_EIO;
		}
		p += n;
		len -= (size_t)n;
	}
	close(fd);
	return 0;
}

/* Called with the write lock held. */
static int next_random(struct sw_keymap *map, uint32_t *value)
{
	int ret;

	if (!map->pool_left) {
		ret = fill_random(map->pool, sizeof(map->pool));
		if (ret)
			return ret;
		map->pool_left = sizeof(map->pool) / sizeof(map->pool[0]);
	}
	*value = map->pool[--map->pool_left];
	return 0;
}

static struct key_entry *find_index(struct sw_keymap *map, uint32_t index)
{
	struct key_entry *e;

	HASH_FIND(hh, map->table, &index, sizeof(index), e);
	return e;
}

/* The entry a key names now: a stale tag names nothing. */
static struct key_entry *find_key(struct sw_keymap *map, uint32_t key)
{
	struct key_entry *e = find_index(map, SW_KEY_INDEX(key));

	return e && e->key == key ? e : NULL;
}

int sw_keymap_create(struct sw_keymap **map_out)
{
	struct sw_keymap *map;
	int ret;

	map = calloc(1, sizeof(*map));
	if (!map)
		return -OPENRDMA_ENOMEM;
	ret = -pthread_rwlock_init(&map->lock, NULL);
	if (ret)
		goto err_free;
	atomic_init(&map->gen, atomic_fetch_add(&map_gens, 1ull << 32));
	*map_out = map;
	return 0;

err_free:
	free(map);
	return ret;
}

void sw_keymap_destroy(struct sw_keymap *map)
{
	struct key_entry *e, *tmp;

	if (!map)
		return;
	HASH_ITER (hh, map->table, e, tmp) {
		HASH_DEL(map->table, e);
		free(e);
	}
	pthread_rwlock_destroy(&map->lock);
	free(map);
}

static bool attr_valid(const struct sw_key_attr *attr)
{
	switch (attr->type) {
	case SW_KEY_MR:
		return !(attr->access & ~(unsigned int)OPENRDMA_ACCESS_ALL) &&
		       attr->va + attr->length >= attr->va;
	case SW_KEY_MW1:
	case SW_KEY_MW2:
		return true;
	}
	return false;
}

int sw_keymap_add(struct sw_keymap *map, const struct sw_key_attr *attr,
		  uint32_t *key_out)
{
	struct key_entry *e;
	uint32_t rnd = 0;
	int ret, i;

	if (!attr_valid(attr))
		return -OPENRDMA_EINVAL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -OPENRDMA_ENOMEM;
	e->type = attr->type;
	e->valid = attr->type == SW_KEY_MR;
	e->pd = attr->pd;
	e->owner = attr->owner;
	if (e->valid) {
		e->va = attr->va;
		e->length = attr->length;
		e->access = attr->access;
	}

	write_begin(map);
	for (i = 0; i < KEY_ATTEMPTS; i++) {
		ret = next_random(map, &rnd);
		if (ret)
			goto err_unlock;
		if (SW_KEY_INDEX(rnd) && !find_index(map, SW_KEY_INDEX(rnd)))
			break;
	}
	if (i == KEY_ATTEMPTS) {
		ret = -OPENRDMA_ENOSPC;
		goto err_unlock;
	}
	e->index = SW_KEY_INDEX(rnd);
	e->key = rnd;
	HASH_ADD(hh, map->table, index, sizeof(e->index), e);
	write_end(map);
	*key_out = e->key;
	return 0;

err_unlock:
	write_end(map);
	free(e);
	return ret;
}

int sw_keymap_modify(struct sw_keymap *map, uint32_t key,
		     const struct sw_key_attr *attr)
{
	struct key_entry *e;
	int ret = 0;

	if (attr->type != SW_KEY_MR || !attr_valid(attr))
		return -OPENRDMA_EINVAL;
	write_begin(map);
	e = find_key(map, key);
	if (!e || e->type != SW_KEY_MR) {
		ret = -OPENRDMA_ENOENT;
	} else if (e->num_mw) {
		ret = -OPENRDMA_EBUSY;
	} else {
		e->va = attr->va;
		e->length = attr->length;
		e->access = attr->access;
		e->pd = attr->pd;
		e->owner = attr->owner;
	}
	write_end(map);
	return ret;
}

/* Unbinds a window from its MR.  Called with the write lock held. */
static void unbind(struct sw_keymap *map, struct key_entry *mw)
{
	struct key_entry *mr;

	if (!mw->valid)
		return;
	mr = find_index(map, mw->mr_index);
	if (mr && mr->num_mw)
		mr->num_mw--;
	mw->valid = false;
}

int sw_keymap_remove(struct sw_keymap *map, uint32_t key)
{
	struct key_entry *e;
	int ret = 0;

	write_begin(map);
	/* a window is removed by index: its tag may have moved on */
	e = find_index(map, SW_KEY_INDEX(key));
	if (!e || (e->type == SW_KEY_MR && e->key != key)) {
		ret = -OPENRDMA_ENOENT;
		goto out;
	}
	if (e->type == SW_KEY_MR && e->num_mw) {
		ret = -OPENRDMA_EBUSY;
		goto out;
	}
	if (e->type != SW_KEY_MR)
		unbind(map, e);
	HASH_DEL(map->table, e);
	free(e);
out:
	write_end(map);
	return ret;
}

unsigned int sw_keymap_count(struct sw_keymap *map)
{
	unsigned int n;

	pthread_rwlock_rdlock(&map->lock);
	n = HASH_COUNT(map->table);
	pthread_rwlock_unlock(&map->lock);
	return n;
}

/* Does [addr, addr + len) lie within [base, base + size)?  No overflow. */
static bool in_range(uint64_t base, uint64_t size, uint64_t addr, uint64_t len)
{
	return addr >= base && addr - base <= size &&
	       len <= size - (addr - base);
}

/* The check itself, of the entry e that key names (NULL: none). */
static enum openrdma_wc_status check(const struct key_entry *e,
				     const struct openrdma_pd *pd,
				     uint64_t addr, uint64_t len,
				     unsigned int required, struct sw_mem *out)
{
	bool remote = required & REMOTE_ACCESS;
	enum openrdma_wc_status fail =
		remote ? OPENRDMA_WC_REM_ACCESS_ERR : OPENRDMA_WC_LOC_PROT_ERR;
	uint64_t base;

	if (!e || !e->valid || e->pd != pd)
		return fail;
	/* windows are for remote peers; locally only MRs are addressed */
	if (!remote && e->type != SW_KEY_MR)
		return fail;
	if ((e->access & required) != required)
		return fail;
	base = remote && (e->access & OPENRDMA_ACCESS_ZERO_BASED) ? 0 : e->va;
	if (!in_range(base, e->length, addr, len))
		return fail;
	out->ptr = (uint8_t *)(uintptr_t)(e->va + (addr - base));
	out->type = e->type;
	out->access = e->access;
	out->owner = e->owner;
	return OPENRDMA_WC_SUCCESS;
}

enum openrdma_wc_status sw_keymap_check(struct sw_keymap *map, uint32_t key,
					const struct openrdma_pd *pd,
					uint64_t addr, uint64_t len,
					unsigned int required,
					struct sw_mem *out)
{
	uint64_t gen = atomic_load_explicit(&map->gen, memory_order_acquire);
	unsigned int set = SW_KEY_CACHE_SET(key), w;
	enum openrdma_wc_status status;
	struct key_copy *copy;
	struct key_entry *e;

	for (w = 0; w < 2; w++) {
		copy = &key_cache[set].way[w];
		if (copy->map == map && copy->gen == gen && copy->e.key == key)
			return check(&copy->e, pd, addr, len, required, out);
	}
	pthread_rwlock_rdlock(&map->lock);
	e = find_key(map, key);
	if (e) {
		copy = &key_cache[set].way[key_cache[set].fill];
		key_cache[set].fill ^= 1;
		/* writers are out: the generation is the entry's */
		copy->map = map;
		copy->gen =
			atomic_load_explicit(&map->gen, memory_order_relaxed);
		copy->e = *e;
	}
	status = check(e, pd, addr, len, required, out);
	pthread_rwlock_unlock(&map->lock);
	return status;
}

enum openrdma_wc_status sw_keymap_map_sges(struct sw_keymap *map,
					   const struct openrdma_pd *pd,
					   const struct openrdma_sge *sge,
					   int num, unsigned int required,
					   struct iovec *iov, int *iovcnt_out,
					   uint64_t *len_out)
{
	enum openrdma_wc_status status;
	struct sw_mem mem;
	uint64_t len = 0;
	int i, n = 0;

	for (i = 0; i < num; i++) {
		status = sw_keymap_check(map, sge[i].lkey, pd, sge[i].addr,
					 sge[i].length, required, &mem);
		if (status != OPENRDMA_WC_SUCCESS)
			return status;
		if (!sge[i].length)
			continue;
		iov[n].iov_base = mem.ptr;
		iov[n].iov_len = sge[i].length;
		len += sge[i].length;
		n++;
	}
	*iovcnt_out = n;
	*len_out = len;
	return OPENRDMA_WC_SUCCESS;
}

enum openrdma_wc_status sw_keymap_bind(struct sw_keymap *map,
				       const struct sw_bind *bind,
				       uint32_t *key_out)
{
	enum openrdma_wc_status status = OPENRDMA_WC_MW_BIND_ERR;
	struct key_entry *mw, *mr;
	uint32_t key;

	if (bind->access & ~(unsigned int)WINDOW_ACCESS)
		return status;
	write_begin(map);
	/* a type 1 window's key moved on when its bind was posted (and may
	 * have again for a bind posted after it): it is found by its index */
	mw = bind->type1 ? find_index(map, SW_KEY_INDEX(bind->mw_key)) :
			   find_key(map, bind->mw_key);
	if (!mw || mw->type == SW_KEY_MR || mw->pd != bind->qp_pd)
		goto out;
	if ((mw->type == SW_KEY_MW1) != bind->type1)
		goto out;
	if (mw->type == SW_KEY_MW2) {
		/* a type 2 window is invalidated before it is bound again,
		 * and keeps its index */
		if (mw->valid ||
		    SW_KEY_INDEX(bind->new_key) != SW_KEY_INDEX(mw->key))
			goto out;
		key = bind->new_key;
	} else {
		key = bind->new_key;
	}
	if (!bind->has_mr) {
		/* a zero-length bind without an MR unbinds a type 1 window */
		if (mw->type != SW_KEY_MW1 || bind->length)
			goto out;
		unbind(map, mw);
		mw->key = key;
		*key_out = key;
		status = OPENRDMA_WC_SUCCESS;
		goto out;
	}
	mr = find_key(map, bind->mr_key);
	if (!mr || mr->type != SW_KEY_MR || mr->pd != bind->qp_pd ||
	    !(mr->access & OPENRDMA_ACCESS_MW_BIND))
		goto out;
	if (!in_range(mr->va, mr->length, bind->addr, bind->length))
		goto out;
	/* remote writes through a window need a locally writable MR */
	if ((bind->access &
	     (OPENRDMA_ACCESS_REMOTE_WRITE | OPENRDMA_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & OPENRDMA_ACCESS_LOCAL_WRITE))
		goto out;

	unbind(map, mw);
	mw->key = key;
	mw->va = bind->addr;
	mw->length = bind->length;
	mw->access = bind->access;
	mw->mr_index = mr->index;
	mw->valid = true;
	mr->num_mw++;
	*key_out = key;
	status = OPENRDMA_WC_SUCCESS;
out:
	write_end(map);
	return status;
}

int sw_keymap_invalidate(struct sw_keymap *map, uint32_t key,
			 const struct openrdma_pd *pd)
{
	struct key_entry *e;
	int ret = -OPENRDMA_EINVAL;

	write_begin(map);
	e = find_key(map, key);
	if (e && e->type == SW_KEY_MW2 && e->valid && e->pd == pd) {
		unbind(map, e);
		ret = 0;
	}
	write_end(map);
	return ret;
}
