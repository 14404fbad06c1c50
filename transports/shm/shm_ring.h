/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * A single-producer, single-consumer ring in shared memory: a ring of
 * one-cache-line elements (struct shm_elem) and a byte ring for the data
 * that does not fit in them.  The producer owns both rings (they are in
 * its segment, read-only for the consumer); the consumer publishes how far
 * it got in struct shm_heads of its own segment.  No locks, no syscalls:
 * the producer publishes an element by storing its tag with release, the
 * consumer releases space by storing its heads with release.
 *
 * Positions run freely in 64 bits; sizes are powers of two.  Nothing the
 * peer wrote is trusted: the consumer checks every length and position.
 */
#ifndef TRANSPORTS_SHM_SHM_RING_H
#define TRANSPORTS_SHM_SHM_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/sw/dma.h"
#include "transports/shm/shm_wire.h"

/* Data chunks start on cache lines. */
#define SHM_DATA_ALIGN SHM_CACHELINE

struct shm_ring_prod {
	struct shm_elem *elem;
	uint8_t *data;
	uint32_t elem_mask;
	uint64_t data_size;
	uint64_t tail; /* next element */
	uint64_t dtail; /* next data byte */
	uint64_t head; /* the consumer's positions, as last read */
	uint64_t dhead;
	const struct shm_heads *heads;
	uint64_t sync; /* the ring's name, for ThreadSanitizer */
};

struct shm_ring_cons {
	const struct shm_elem *elem;
	const uint8_t *data;
	uint32_t elem_mask;
	uint64_t data_size;
	uint64_t head;
	uint64_t dhead;
	struct shm_heads *heads;
	uint64_t sync;
	/* head, for threads that look without taking the ring */
	_Atomic uint64_t seen;
	uint64_t published; /* head as the producer knows it */
};

static inline uint64_t shm_data_align(uint64_t len)
{
	return (len + SHM_DATA_ALIGN - 1) & ~(uint64_t)(SHM_DATA_ALIGN - 1);
}

/* The rings are zeroed (fresh memfd pages); heads too.  sync: the same
 * number on both sides (the segment's id plus the ring's index). */
void shm_ring_prod_init(struct shm_ring_prod *p, struct shm_elem *elem,
			uint32_t nelem, uint8_t *data, uint64_t data_size,
			const struct shm_heads *heads, uint64_t sync);
void shm_ring_cons_init(struct shm_ring_cons *c, const struct shm_elem *elem,
			uint32_t nelem, const uint8_t *data, uint64_t data_size,
			struct shm_heads *heads, uint64_t sync);

/* Producer: the next element to fill, or NULL while the ring is full. */
struct shm_elem *shm_ring_reserve(struct shm_ring_prod *p);
/*
 * Producer: reserves len bytes of the data ring (rounded up to
 * SHM_DATA_ALIGN) and returns their position; -OPENRDMA_ENOSPC until the
 * consumer has released enough.
 */
int shm_ring_data_alloc(struct shm_ring_prod *p, uint64_t len,
			uint64_t *pos_out);
/* Largest allocation that could succeed now. */
uint64_t shm_ring_data_room(struct shm_ring_prod *p);
/* Whether len bytes fit; reads the consumer's heads (a cache line the
 * consumer writes) only when the last reading says they do not. */
bool shm_ring_data_fits(struct shm_ring_prod *p, uint64_t len);
/* Producer: copies into reserved data, across the ring's end if need be. */
void shm_ring_data_put(struct shm_ring_prod *p, uint64_t pos, const void *src,
		       uint64_t len);
/* Producer: publishes the element shm_ring_reserve() returned. */
void shm_ring_commit(struct shm_ring_prod *p, struct shm_elem *e);
/* Producer: true once the consumer has taken everything. */
bool shm_ring_drained(struct shm_ring_prod *p);

/*
 * Whether an element waits, for a thread that does not hold the consumer
 * side (a hint: it may be stale, never unsafe).
 */
static inline bool shm_ring_pending(const struct shm_ring_cons *c)
{
	uint64_t h = atomic_load_explicit(&c->seen, memory_order_relaxed);

	return atomic_load_explicit(&c->elem[h & c->elem_mask].tag,
				    memory_order_relaxed) == h + 1;
}

/* Consumer: the next element, or NULL if none is published. */
const struct shm_elem *shm_ring_peek(const struct shm_ring_cons *c);
/*
 * Consumer: checks that the chunk [pos, pos + len) is the next one in the
 * data ring and fits it; -OPENRDMA_EPROTO if the producer lied.
 */
int shm_ring_data_check(const struct shm_ring_cons *c, uint64_t pos,
			uint64_t len);
/* Consumer: copies len bytes at pos (checked) into dst. */
void shm_ring_data_get(const struct shm_ring_cons *c, uint64_t pos, void *dst,
		       uint64_t len);
/*
 * Consumer: done with the element at the head and with its data chunk of
 * len bytes (0: none); publishes the new heads.
 */
void shm_ring_release(struct shm_ring_cons *c, uint64_t len);
/*
 * Consumer: done with the element at the head and its chunk, the space
 * still the consumer's until shm_ring_publish().  Writing the heads takes
 * their cache line from the producer, which stalls the consumer's next
 * locked instruction: a consumer with work to finish first publishes
 * after it.
 */
void shm_ring_consume(struct shm_ring_cons *c, uint64_t len);
/* Consumer: gives back to the producer what was consumed. */
void shm_ring_publish(struct shm_ring_cons *c);

#endif /* TRANSPORTS_SHM_SHM_RING_H */
