/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Requests posted to a QP in ERR complete with WR_FLUSH_ERR
 * (openrdma_semantics(7)).  Devices differ there: some never complete
 * them (rxe and siw in Linux 6.1 leave them in the queue), so the
 * transport does not hand them to the device at all and completes them
 * itself, in posting order, on the QP's CQ, after what the device has
 * queued there.  The core knows the QP is in ERR when the application
 * moved it there, the CM did, an async event said so, or a query found it.
 */
#include <stdlib.h>

#include "transports/verbs/verbs.h"

int verbs_flush_init(struct verbs_cq *vcq, unsigned int size)
{
	int ret;

	vcq->flush_ring = calloc(size, sizeof(*vcq->flush_ring));
	if (!vcq->flush_ring)
		return -OPENRDMA_ENOMEM;
	ret = -pthread_spin_init(&vcq->flush_lock, PTHREAD_PROCESS_PRIVATE);
	if (ret) {
		free(vcq->flush_ring);
		return ret;
	}
	vcq->flush_size = size;
	vcq->flush_head = 0;
	atomic_init(&vcq->flushed, 0);
	return 0;
}

void verbs_flush_fini(struct verbs_cq *vcq)
{
	pthread_spin_destroy(&vcq->flush_lock);
	free(vcq->flush_ring);
}

/* Queues one flushed completion; false if the ring is full (overrun). */
static bool flush_push(struct verbs_cq *vcq, uint64_t wr_id, uint32_t qp_num)
{
	unsigned int n = atomic_load(&vcq->flushed);
	struct openrdma_wc *wc;

	if (n == vcq->flush_size)
		return false;
	wc = &vcq->flush_ring[(vcq->flush_head + n) % vcq->flush_size];
	*wc = (struct openrdma_wc){ .wr_id = wr_id,
				    .status = OPENRDMA_WC_WR_FLUSH_ERR,
				    .qp_num = qp_num };
	atomic_store(&vcq->flushed, n + 1);
	return true;
}

/* Flushed completions queued on one CQ, under its lock. */
struct flush_batch {
	struct verbs_cq *vcq;
	uint32_t qp_num;
	unsigned int pushed;
	bool overrun;
};

static void batch_begin(struct flush_batch *b, struct openrdma_cq *cq,
			uint32_t qp_num)
{
	b->vcq = to_verbs_cq(cq);
	b->qp_num = qp_num;
	b->pushed = 0;
	b->overrun = false;
	pthread_spin_lock(&b->vcq->flush_lock);
}

static void batch_add(struct flush_batch *b, uint64_t wr_id)
{
	if (b->overrun)
		return;
	if (flush_push(b->vcq, wr_id, b->qp_num))
		b->pushed++;
	else
		b->overrun = true;
}

/* Wakes the CQ's channel if it is armed, as the device would. */
static int batch_end(struct flush_batch *b)
{
	struct openrdma_async_event ev = { .event_type =
						   OPENRDMA_EVENT_CQ_ERR };

	pthread_spin_unlock(&b->vcq->flush_lock);
	if (b->pushed)
		openrdma_cq_notify(&b->vcq->base, true);
	if (b->overrun) {
		atomic_store(&b->vcq->overrun, true);
		ev.element.cq = &b->vcq->base;
		openrdma_async_event_post(b->vcq->base.obj.ctx, &ev);
	}
	return 0;
}

int verbs_flush_send(struct verbs_qp *vqp, struct openrdma_send_wr *wr)
{
	struct flush_batch b;

	batch_begin(&b, vqp->base.send_cq, vqp->base.qp_num);
	for (; wr; wr = wr->next)
		batch_add(&b, wr->wr_id);
	return batch_end(&b);
}

int verbs_flush_recv(struct verbs_qp *vqp, struct openrdma_recv_wr *wr)
{
	struct flush_batch b;

	batch_begin(&b, vqp->base.recv_cq, vqp->base.qp_num);
	for (; wr; wr = wr->next)
		batch_add(&b, wr->wr_id);
	return batch_end(&b);
}

int verbs_flush_poll(struct verbs_cq *vcq, int num_entries,
		     struct openrdma_wc *wc)
{
	unsigned int n;
	int i;

	pthread_spin_lock(&vcq->flush_lock);
	n = atomic_load(&vcq->flushed);
	for (i = 0; i < num_entries && n; i++, n--) {
		wc[i] = vcq->flush_ring[vcq->flush_head];
		vcq->flush_head = (vcq->flush_head + 1) % vcq->flush_size;
	}
	atomic_store(&vcq->flushed, n);
	pthread_spin_unlock(&vcq->flush_lock);
	return i;
}
