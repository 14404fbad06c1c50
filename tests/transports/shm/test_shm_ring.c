/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * White-box tests of the shm ring (transports/shm/shm_ring.c): elements
 * and data wrapping around, a full ring and its recovery, consumed space
 * that goes back only when published, stale elements of an earlier lap,
 * what a consumer refuses, and one producer and one consumer thread
 * hammering it.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "transports/shm/shm_ring.h"

#define NELEM 16
#define DATA 4096

struct ring {
	struct shm_elem *elem;
	uint8_t *data;
	struct shm_heads *heads;
	struct shm_ring_prod p;
	struct shm_ring_cons c;
};

static void ring_init(struct ring *r, uint32_t nelem, uint64_t data)
{
	r->elem = aligned_alloc(SHM_CACHELINE, nelem * sizeof(*r->elem));
	r->data = aligned_alloc(SHM_CACHELINE, data);
	r->heads = aligned_alloc(SHM_CACHELINE, sizeof(*r->heads));
	cr_assert(r->elem && r->data && r->heads);
	memset(r->elem, 0, nelem * sizeof(*r->elem));
	memset(r->data, 0, data);
	memset(r->heads, 0, sizeof(*r->heads));
	shm_ring_prod_init(&r->p, r->elem, nelem, r->data, data, r->heads, 1);
	shm_ring_cons_init(&r->c, r->elem, nelem, r->data, data, r->heads, 1);
}

static void ring_fini(struct ring *r)
{
	free(r->elem);
	free(r->data);
	free(r->heads);
}

static uint8_t pattern(uint32_t msg, uint64_t i)
{
	return (uint8_t)(msg * 31u + i * 7u + (i >> 8));
}

/* Publishes message msg with len bytes of data; false if it has no room. */
static bool push(struct ring *r, uint32_t msg, uint64_t len)
{
	uint8_t buf[DATA];
	struct shm_elem *e;
	uint64_t pos = 0, i;

	e = shm_ring_reserve(&r->p);
	if (!e)
		return false;
	if (len && shm_ring_data_alloc(&r->p, len, &pos))
		return false;
	for (i = 0; i < len; i++)
		buf[i] = pattern(msg, i);
	shm_ring_data_put(&r->p, pos, buf, len);
	e->type = SHM_EL_DATA;
	e->seq = msg;
	e->len = (uint32_t)len;
	e->data = pos;
	shm_ring_commit(&r->p, e);
	return true;
}

/* Takes message msg, checking its data; false if none is there. */
static bool pop(struct ring *r, uint32_t msg)
{
	uint8_t buf[DATA];
	const struct shm_elem *e;
	uint64_t len, pos, i;

	e = shm_ring_peek(&r->c);
	if (!e)
		return false;
	len = e->len;
	pos = e->data;
	cr_assert_eq(e->seq, msg, "message %u where %u was due", e->seq, msg);
	cr_assert_eq(shm_ring_data_check(&r->c, pos, len), 0,
		     "message %u: chunk at %llu of %llu refused", msg,
		     (unsigned long long)pos, (unsigned long long)len);
	shm_ring_data_get(&r->c, pos, buf, len);
	for (i = 0; i < len; i++)
		cr_assert_eq(buf[i], pattern(msg, i),
			     "message %u: byte %llu is 0x%02x", msg,
			     (unsigned long long)i, buf[i]);
	shm_ring_release(&r->c, len);
	return true;
}

/* Fills every element of a new ring, without data. */
static void fill(struct ring *r)
{
	uint32_t msg;

	ring_init(r, NELEM, DATA);
	for (msg = 0; msg < NELEM; msg++)
		cr_assert(push(r, msg, 0), "message %u", msg);
}

Test(shm_ring, wraps_around)
{
	/* sizes that do not divide the ring: chunks straddle its end */
	static const uint64_t sizes[] = { 0, 1, 63, 64, 65, 1000, 1500, 4096 };
	struct ring r;
	uint32_t msg;

	ring_init(&r, NELEM, DATA);
	for (msg = 0; msg < 2000; msg++) {
		cr_assert(push(&r, msg, sizes[msg % 8]), "message %u", msg);
		cr_assert(pop(&r, msg), "message %u not seen", msg);
	}
	/* many laps of both rings went by */
	cr_assert_gt(r.p.tail, 100 * NELEM);
	cr_assert_gt(r.p.dtail, 100 * DATA);
	cr_assert_null(shm_ring_peek(&r.c));
	cr_assert(shm_ring_drained(&r.p));
	ring_fini(&r);
}

Test(shm_ring, full_then_room_again)
{
	struct ring r;
	uint64_t pos;
	uint32_t msg;

	/* elements run out first */
	fill(&r);
	cr_assert_null(shm_ring_reserve(&r.p), "a full ring gave an element");
	cr_assert(pop(&r, 0));
	cr_assert_not_null(shm_ring_reserve(&r.p));
	for (msg = 1; msg < NELEM; msg++)
		cr_assert(pop(&r, msg));

	/* then data: 64 bytes are taken for 1, the whole ring for 4096 */
	cr_assert_eq(shm_ring_data_alloc(&r.p, 1, &pos), 0);
	cr_assert_eq(shm_ring_data_room(&r.p), DATA - 64);
	cr_assert_eq(shm_ring_data_alloc(&r.p, DATA - 64, &pos), 0);
	cr_assert_eq(shm_ring_data_alloc(&r.p, 1, &pos), -OPENRDMA_ENOSPC);
	cr_assert_eq(shm_ring_data_alloc(&r.p, DATA + 1, &pos),
		     -OPENRDMA_EMSGSIZE, "more than the ring holds");
	ring_fini(&r);
}

/* Consumed elements stay the consumer's until it publishes them. */
Test(shm_ring, consumed_space_returns_on_publish)
{
	struct ring r;
	uint64_t pos;
	uint32_t msg;

	fill(&r);
	for (msg = 0; msg < NELEM; msg++) {
		cr_assert_not_null(shm_ring_peek(&r.c), "message %u", msg);
		shm_ring_consume(&r.c, 0);
	}
	cr_assert_null(shm_ring_peek(&r.c));
	cr_assert_null(shm_ring_reserve(&r.p), "unpublished space was taken");
	cr_assert_not(shm_ring_drained(&r.p));
	shm_ring_publish(&r.c);
	cr_assert(shm_ring_drained(&r.p));
	cr_assert_not_null(shm_ring_reserve(&r.p));
	/* a second publish with nothing new writes nothing */
	r.heads->elem = 0;
	shm_ring_publish(&r.c);
	cr_assert_eq(r.heads->elem, 0);
	r.heads->elem = NELEM;

	/* data: a fit is judged on the last heads read, then read again */
	cr_assert_eq(shm_ring_data_alloc(&r.p, DATA, &pos), 0);
	cr_assert_not(shm_ring_data_fits(&r.p, 1));
	cr_assert(push(&r, 100, 0));
	cr_assert_not_null(shm_ring_peek(&r.c));
	/* the chunk of DATA bytes before that element goes back with it */
	r.c.dhead += DATA;
	shm_ring_consume(&r.c, 0);
	cr_assert_not(shm_ring_data_fits(&r.p, 1), "fits before publish");
	shm_ring_publish(&r.c);
	cr_assert(shm_ring_data_fits(&r.p, DATA));
	ring_fini(&r);
}

Test(shm_ring, stale_lap_not_taken)
{
	struct ring r;
	struct shm_elem old;
	uint32_t msg;

	ring_init(&r, NELEM, DATA);
	for (msg = 0; msg < NELEM; msg++) {
		cr_assert(push(&r, msg, 8));
		cr_assert(pop(&r, msg));
	}
	/* the consumer is at the start of lap 2: every element still holds
	 * lap 1's tag, which must not pass */
	memcpy(&old, &r.elem[0], sizeof(old));
	cr_assert_eq(atomic_load(&old.tag), 1);
	cr_assert_null(shm_ring_peek(&r.c));
	cr_assert(push(&r, NELEM, 8));
	cr_assert_eq(atomic_load(&r.elem[0].tag), NELEM + 1);
	cr_assert(pop(&r, NELEM));
	ring_fini(&r);
}

Test(shm_ring, consumer_refuses_lies)
{
	struct ring r;

	ring_init(&r, NELEM, DATA);
	cr_assert(push(&r, 0, 100));
	/* out of order, and larger than the ring */
	cr_assert_eq(shm_ring_data_check(&r.c, 64, 100), -OPENRDMA_EPROTO);
	cr_assert_eq(shm_ring_data_check(&r.c, 0, DATA + 1), -OPENRDMA_EPROTO);
	cr_assert_eq(shm_ring_data_check(&r.c, 0, 100), 0);
	/* no data names no position */
	cr_assert_eq(shm_ring_data_check(&r.c, 12345, 0), 0);
	ring_fini(&r);
}

#define SPSC_MSGS 200000

static void *producer(void *arg)
{
	struct ring *r = arg;
	uint32_t msg;

	for (msg = 0; msg < SPSC_MSGS; msg++)
		while (!push(r, msg, msg % 700))
			sched_yield();
	return NULL;
}

Test(shm_ring, spsc_two_threads, .timeout = 120)
{
	pthread_t thr;
	struct ring r;
	uint32_t msg;

	/* small rings: the two threads meet at both ends all the time */
	ring_init(&r, NELEM, DATA);
	cr_assert_eq(pthread_create(&thr, NULL, producer, &r), 0);
	for (msg = 0; msg < SPSC_MSGS; msg++)
		while (!pop(&r, msg))
			sched_yield();
	pthread_join(thr, NULL);
	cr_assert_null(shm_ring_peek(&r.c));
	cr_assert(shm_ring_drained(&r.p));
	ring_fini(&r);
}
