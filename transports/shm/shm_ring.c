/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
#include <string.h>

#include <openrdma/errno.h>

#include "transports/shm/shm_ring.h"

#ifdef SW_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);

static char tsan_sync[4096];

#define SYNC_ADDR(id) ((void *)&tsan_sync[(id) % sizeof(tsan_sync)])
#define SYNC_RELEASE(id) __tsan_release(SYNC_ADDR(id))
#define SYNC_ACQUIRE(id) __tsan_acquire(SYNC_ADDR(id))
#else
#define SYNC_RELEASE(id) ((void)(id))
#define SYNC_ACQUIRE(id) ((void)(id))
#endif

void shm_ring_prod_init(struct shm_ring_prod *p, struct shm_elem *elem,
			uint32_t nelem, uint8_t *data, uint64_t data_size,
			const struct shm_heads *heads, uint64_t sync)
{
	memset(p, 0, sizeof(*p));
	p->sync = sync;
	p->elem = elem;
	p->data = data;
	p->elem_mask = nelem - 1;
	p->data_size = data_size;
	p->heads = heads;
}

void shm_ring_cons_init(struct shm_ring_cons *c, const struct shm_elem *elem,
			uint32_t nelem, const uint8_t *data, uint64_t data_size,
			struct shm_heads *heads, uint64_t sync)
{
	memset(c, 0, sizeof(*c));
	c->sync = sync;
	c->elem = elem;
	c->data = data;
	c->elem_mask = nelem - 1;
	c->data_size = data_size;
	c->heads = heads;
}

struct shm_elem *shm_ring_reserve(struct shm_ring_prod *p)
{
	uint64_t nelem = (uint64_t)p->elem_mask + 1;

	if (p->tail - p->head >= nelem) {
		/* acquire: the consumer is done reading what it released */
		p->head = atomic_load_explicit(&p->heads->elem,
					       memory_order_acquire);
		if (p->tail - p->head >= nelem)
			return NULL;
	}
	return &p->elem[p->tail & p->elem_mask];
}

uint64_t shm_ring_data_room(struct shm_ring_prod *p)
{
	p->dhead = atomic_load_explicit(&p->heads->data, memory_order_acquire);
	return p->data_size - (p->dtail - p->dhead);
}

bool shm_ring_data_fits(struct shm_ring_prod *p, uint64_t len)
{
	return p->data_size - (p->dtail - p->dhead) >= len ||
	       shm_ring_data_room(p) >= len;
}

int shm_ring_data_alloc(struct shm_ring_prod *p, uint64_t len,
			uint64_t *pos_out)
{
	uint64_t need = shm_data_align(len);

	if (need > p->data_size)
		return -OPENRDMA_EMSGSIZE;
	if (!shm_ring_data_fits(p, need))
		return -OPENRDMA_ENOSPC;
	*pos_out = p->dtail;
	p->dtail += need;
	return 0;
}

void shm_ring_data_put(struct shm_ring_prod *p, uint64_t pos, const void *src,
		       uint64_t len)
{
	uint64_t off = pos & (p->data_size - 1);
	uint64_t first = p->data_size - off;

	if (first > len)
		first = len;
	memcpy(p->data + off, src, first);
	memcpy(p->data, (const uint8_t *)src + first, len - first);
}

void shm_ring_commit(struct shm_ring_prod *p, struct shm_elem *e)
{
	p->tail++;
	SYNC_RELEASE(p->sync);
	atomic_store_explicit(&e->tag, p->tail, memory_order_release);
}

bool shm_ring_drained(struct shm_ring_prod *p)
{
	p->head = atomic_load_explicit(&p->heads->elem, memory_order_acquire);
	return p->head == p->tail;
}

const struct shm_elem *shm_ring_peek(const struct shm_ring_cons *c)
{
	const struct shm_elem *e = &c->elem[c->head & c->elem_mask];

	if (atomic_load_explicit(&e->tag, memory_order_acquire) != c->head + 1)
		return NULL;
	SYNC_ACQUIRE(c->sync);
	return e;
}

int shm_ring_data_check(const struct shm_ring_cons *c, uint64_t pos,
			uint64_t len)
{
	if (!len)
		return 0;
	if (pos != c->dhead || len > c->data_size)
		return -OPENRDMA_EPROTO;
	return 0;
}

void shm_ring_data_get(const struct shm_ring_cons *c, uint64_t pos, void *dst,
		       uint64_t len)
{
	uint64_t off = pos & (c->data_size - 1);
	uint64_t first = c->data_size - off;

	if (first > len)
		first = len;
	memcpy(dst, c->data + off, first);
	memcpy((uint8_t *)dst + first, c->data, len - first);
}

void shm_ring_consume(struct shm_ring_cons *c, uint64_t len)
{
	c->head++;
	c->dhead += shm_data_align(len);
	atomic_store_explicit(&c->seen, c->head, memory_order_relaxed);
}

void shm_ring_publish(struct shm_ring_cons *c)
{
	if (c->published == c->head)
		return;
	c->published = c->head;
	/* release: our reads of the elements and their data are done */
	atomic_store_explicit(&c->heads->data, c->dhead, memory_order_release);
	atomic_store_explicit(&c->heads->elem, c->head, memory_order_release);
}

void shm_ring_release(struct shm_ring_cons *c, uint64_t len)
{
	shm_ring_consume(c, len);
	shm_ring_publish(c);
}
