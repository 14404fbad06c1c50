/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The data path shared by every test: posting a run of a QP's send ring
 * as one list with selective signaling, and accounting completions.
 * Nothing here allocates; the rings were laid out before the round.
 */
#include "config.h"

#include "examples/perf/openrdma_perf.h"

int perf_post_sends(struct perf_worker *w, struct perf_qp *q, uint32_t count)
{
	struct openrdma_send_wr *first = &q->swr[q->slot], *wr = NULL, *bad;
	uint64_t k = q->posted, end = q->posted + count;
	uint64_t tag = (uint64_t)q->local << PERF_WR_QP_SHIFT;
	uint32_t slot = q->slot, sig = q->sig_left;
	int ret;

	for (; k < end; k++) {
		struct openrdma_send_wr *next = &q->swr[slot];

		if (wr)
			wr->next = next;
		wr = next;
		wr->wr_id = tag | k;
		wr->send_flags = w->send_flags;
		/* Every cq_mod-th request and the round's last are signaled:
		 * a signaled completion retires all requests before it. */
		if (--sig == 0 || k + 1 == q->total) {
			wr->send_flags |= OPENRDMA_SEND_SIGNALED;
			sig = w->cq_mod;
		}
		if (++slot == q->ring)
			slot = 0;
	}
	wr->next = NULL;
	ret = openrdma_qp_post_send(q->qp, first, &bad);
	if (ret)
		return perf_worker_fail(w, ret, "post_send on QP %u: %s",
					q->index, openrdma_strerror(ret));
	q->posted = end;
	q->slot = slot;
	q->sig_left = sig;
	return 0;
}

int perf_complete(struct perf_worker *w, const struct openrdma_wc *wc)
{
	struct perf_qp *q = w->qps[wc->wr_id >> PERF_WR_QP_SHIFT];
	int ret;

	if (!(wc->opcode & OPENRDMA_WC_RECV)) {
		q->completed = (wc->wr_id & PERF_WR_SEQ_MASK) + 1;
		return 0;
	}
	q->received++;
	q->rx_done++;
	w->rx_qp = q;
	/* Reposted in groups: one post call per rx_group receives. */
	if (q->rx_ring - (q->rx_posted - q->rx_done) >= w->rx_group) {
		ret = perf_rx_fill(q);
		if (ret)
			return perf_worker_fail(w, ret,
						"post_recv on QP %u: %s",
						q->index,
						openrdma_strerror(ret));
	}
	return 1;
}

int perf_drain_sends(struct perf_worker *w)
{
	unsigned int i = 0;
	int n, j, ret;

	while (i < w->nqps) {
		if (w->qps[i]->completed >= w->qps[i]->posted) {
			i++;
			continue;
		}
		n = perf_poll(w);
		if (n < 0)
			return n;
		for (j = 0; j < n; j++) {
			ret = perf_complete(w, &w->wc[j]);
			if (ret < 0)
				return ret;
		}
	}
	return 0;
}
