/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include <openrdma/transport.h>

#include "core/sw/cq.h"

int sw_cq_init(struct sw_cq *scq, struct openrdma_cq *cq, int cqe)
{
	int ret;

	if (cqe < 1)
		return -OPENRDMA_EINVAL;
	memset(scq, 0, sizeof(*scq));
	scq->cq = cq;
	scq->size = (uint32_t)cqe;
	scq->ring = calloc(scq->size, sizeof(*scq->ring));
	if (!scq->ring)
		return -OPENRDMA_ENOMEM;
	/* producers are other QPs' threads and the RNR timer: always lock */
	ret = core_lock_init(&scq->lock, CORE_LOCK_SPIN);
	if (ret)
		goto err_free;
	return 0;

err_free:
	free(scq->ring);
	scq->ring = NULL;
	return ret;
}

void sw_cq_fini(struct sw_cq *scq)
{
	core_lock_destroy(&scq->lock);
	free(scq->ring);
	scq->ring = NULL;
}

/* The slot n after slot i (i < size, n <= size), without a division: a
 * busy ping-pong pushes and polls once per message. */
static inline uint32_t ring_add(const struct sw_cq *scq, uint32_t i, uint32_t n)
{
	i += n;
	return i >= scq->size ? i - scq->size : i;
}

int sw_cq_poll(struct sw_cq *scq, int num_entries, struct openrdma_wc *wc)
{
	uint32_t n, first;
	int ret;

	if (num_entries < 0)
		return -OPENRDMA_EINVAL;
	/* empty, with no overrun to report: the usual busy poll takes no
	 * lock (a completion pushed meanwhile is the next poll's) */
	if (!sw_cq_ready(scq))
		return 0;
	core_lock_acquire(&scq->lock);
	n = scq->count < (uint32_t)num_entries ? scq->count :
						 (uint32_t)num_entries;
	if (!n && scq->overrun && num_entries) {
		ret = -OPENRDMA_EOVERFLOW;
		goto out;
	}
	/* at most two runs: up to the end of the ring, then from its start */
	first = scq->size - scq->head;
	if (first > n)
		first = n;
	memcpy(wc, &scq->ring[scq->head], first * sizeof(*wc));
	memcpy(wc + first, scq->ring, (n - first) * sizeof(*wc));
	scq->head = ring_add(scq, scq->head, n);
	__atomic_store_n(&scq->count, scq->count - n, __ATOMIC_RELAXED);
	ret = (int)n;
out:
	core_lock_release(&scq->lock);
	return ret;
}

int sw_cq_resize(struct sw_cq *scq, int cqe)
{
	struct openrdma_wc *ring, *old;
	uint32_t i;
	int ret = 0;

	if (cqe < 1)
		return -OPENRDMA_EINVAL;
	ring = calloc((size_t)cqe, sizeof(*ring));
	if (!ring)
		return -OPENRDMA_ENOMEM;
	core_lock_acquire(&scq->lock);
	if ((uint32_t)cqe < scq->count) {
		ret = -OPENRDMA_EINVAL;
		goto out;
	}
	for (i = 0; i < scq->count; i++)
		ring[i] = scq->ring[ring_add(scq, scq->head, i)];
	/* swap, so that the old ring is freed below, outside the lock */
	old = scq->ring;
	scq->ring = ring;
	ring = old;
	scq->size = (uint32_t)cqe;
	scq->head = 0;
out:
	core_lock_release(&scq->lock);
	free(ring);
	return ret;
}

static void batch_add(struct sw_cq_batch *b, struct sw_cq *scq, bool pushed,
		      bool solicited, bool overrun)
{
	int i;

	for (i = 0; i < b->num; i++) {
		if (b->ent[i].cq == scq)
			break;
	}
	if (i == b->num) {
		assert(b->num < SW_CQ_BATCH_MAX);
		b->num++;
		b->ent[i].cq = scq;
		b->ent[i].pushed = false;
		b->ent[i].solicited = false;
		b->ent[i].overrun = false;
	}
	b->ent[i].pushed |= pushed;
	b->ent[i].solicited |= pushed && solicited;
	b->ent[i].overrun |= overrun;
}

void sw_cq_push(struct sw_cq *scq, const struct openrdma_wc *wc, bool solicited,
		struct sw_cq_batch *batch)
{
	bool pushed = false, overrun_now = false;

	core_lock_acquire(&scq->lock);
	if (scq->overrun) {
		batch->lost = true;
	} else if (scq->count == scq->size) {
		__atomic_store_n(&scq->overrun, true, __ATOMIC_RELAXED);
		overrun_now = true;
		batch->lost = true;
	} else {
		scq->ring[ring_add(scq, scq->head, scq->count)] = *wc;
		__atomic_store_n(&scq->count, scq->count + 1, __ATOMIC_RELAXED);
		pushed = true;
	}
	core_lock_release(&scq->lock);
	if (pushed || overrun_now)
		batch_add(batch, scq, pushed, solicited, overrun_now);
}

bool sw_cq_batch_done(struct sw_cq_batch *batch)
{
	struct openrdma_async_event ev;
	struct sw_cq *scq;
	int i;

	for (i = 0; i < batch->num; i++) {
		scq = batch->ent[i].cq;
		if (batch->ent[i].pushed)
			openrdma_cq_notify(scq->cq, batch->ent[i].solicited);
		if (batch->ent[i].overrun) {
			memset(&ev, 0, sizeof(ev));
			ev.element.cq = scq->cq;
			ev.event_type = OPENRDMA_EVENT_CQ_ERR;
			openrdma_async_event_post(scq->cq->obj.ctx, &ev);
		}
	}
	batch->num = 0;
	return batch->lost;
}
