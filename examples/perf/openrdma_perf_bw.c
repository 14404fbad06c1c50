/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Streaming loops.  The client keeps up to a window of requests in flight
 * on each of its QPs, posts them post_list at a time and signals one in
 * cq_mod; the round lasts from its first post to its last completion.
 * The server of a send stream keeps every QP's receive ring full and
 * notes when the first and the last message arrive (msg_rate).
 */
#include "config.h"

#include "examples/perf/openrdma_perf.h"

/* Posts lists on q until its window or its round is full. */
static int fill_window(struct perf_worker *w, struct perf_qp *q)
{
	uint64_t left, room;
	uint32_t batch;
	int ret;

	for (;;) {
		left = q->total - q->posted;
		room = q->ring - (q->posted - q->completed);
		if (!left)
			return 0;
		batch = left < w->post_list ? (uint32_t)left : w->post_list;
		if (room < batch)
			return 0;
		ret = perf_post_sends(w, q, batch);
		if (ret)
			return ret;
	}
}

int perf_bw_client(struct perf_worker *w)
{
	unsigned int active = w->nqps, i;
	int n, j, ret;

	w->t_first = perf_now_ns();
	while (active) {
		for (i = 0; i < w->nqps; i++) {
			ret = fill_window(w, w->qps[i]);
			if (ret)
				return ret;
		}
		n = perf_poll(w);
		if (n < 0)
			return n;
		for (j = 0; j < n; j++) {
			struct perf_qp *q =
				w->qps[w->wc[j].wr_id >> PERF_WR_QP_SHIFT];

			ret = perf_complete(w, &w->wc[j]);
			if (ret < 0)
				return ret;
			/* The last request is signaled: this happens once. */
			if (!ret && q->completed == q->total)
				active--;
		}
	}
	w->t_last = perf_now_ns();
	for (i = 0; i < w->nqps; i++)
		w->ops += w->qps[i]->total;
	return 0;
}

int perf_bw_server(struct perf_worker *w)
{
	uint64_t left = w->round.iters * w->nqps;
	int n, j, ret;

	w->ops = left;
	while (left) {
		n = perf_poll(w);
		if (n < 0)
			return n;
		for (j = 0; j < n; j++) {
			ret = perf_complete(w, &w->wc[j]);
			if (ret < 0)
				return ret;
			if (!ret)
				continue;
			if (!w->t_first)
				w->t_first = perf_now_ns();
			left--;
		}
	}
	w->t_last = perf_now_ns();
	return perf_drain_sends(w);
}
