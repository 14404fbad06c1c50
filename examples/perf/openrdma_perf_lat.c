/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Latency loops.  One exchange at a time per worker, over its QPs in
 * turn; the time between two consecutive iterations is one sample.
 *
 *   lat_send   the client sends, the server answers each receive with a
 *              send of the same size;
 *   lat_write  each side RDMA-writes into the other's buffer and the other
 *              spins on the last byte of the message, which carries a
 *              sequence number (perftest's method);
 *   lat_read, lat_atomic  the client waits for each request's completion;
 *              the server's part is done by its transport.
 */
#include "config.h"

#include "examples/perf/openrdma_perf.h"

/* Spins on memory between two polls of the CQ. */
#define FLAG_SPINS 64

static int take(struct perf_worker *w, int n, int *received)
{
	int i, ret;

	for (i = 0; i < n; i++) {
		ret = perf_complete(w, &w->wc[i]);
		if (ret < 0)
			return ret;
		*received += ret;
	}
	return 0;
}

/* Waits until q's send ring has room for one more request. */
static int sq_room(struct perf_worker *w, struct perf_qp *q)
{
	int n, ret, received = 0;

	while (q->posted - q->completed >= q->ring) {
		n = perf_poll(w);
		if (n < 0)
			return n;
		ret = take(w, n, &received);
		if (ret)
			return ret;
	}
	return 0;
}

/* Waits for one receive (sends completing meanwhile are accounted). */
static int wait_recv(struct perf_worker *w)
{
	int n, ret, received = 0;

	while (!received) {
		n = perf_poll(w);
		if (n < 0)
			return n;
		ret = take(w, n, &received);
		if (ret)
			return ret;
	}
	return 0;
}

static int wait_completed(struct perf_worker *w, struct perf_qp *q)
{
	int n, ret, received = 0;

	while (q->completed < q->posted) {
		n = perf_poll(w);
		if (n < 0)
			return n;
		ret = take(w, n, &received);
		if (ret)
			return ret;
	}
	return 0;
}

static uint8_t next_seq(uint8_t seq)
{
	return seq == 255 ? 1 : seq + 1; /* 0 is the "nothing yet" value */
}

/* Spins on a flag byte that the peer's RDMA write sets. */
static int wait_flag(struct perf_worker *w, const uint8_t *flag, uint8_t seq)
{
	int n, ret, received = 0;
	unsigned int spins = 0;

	while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != seq) {
		if (++spins < FLAG_SPINS)
			continue;
		spins = 0;
		/* Reaps our own send completions and notices errors. */
		n = perf_poll(w);
		if (n < 0)
			return n;
		ret = take(w, n, &received);
		if (ret)
			return ret;
	}
	w->progress++;
	return 0;
}

static int post_one(struct perf_worker *w, struct perf_qp *q)
{
	int ret;

	ret = sq_room(w, q);
	if (ret)
		return ret;
	return perf_post_sends(w, q, 1);
}

static int write_ping(struct perf_worker *w, struct perf_qp *q, bool client)
{
	uint32_t size = w->round.size;
	uint8_t *flag_in = q->buf + size - 1;
	uint8_t *flag_out = q->buf + q->area + size - 1;
	int ret;

	q->seq = next_seq(q->seq);
	if (!client) {
		ret = wait_flag(w, flag_in, q->seq);
		if (ret)
			return ret;
	}
	*flag_out = q->seq;
	ret = post_one(w, q);
	if (ret || !client)
		return ret;
	return wait_flag(w, flag_in, q->seq);
}

static int atomic_check(struct perf_worker *w, struct perf_qp *q)
{
	uint64_t got = *(volatile uint64_t *)q->buf;

	/* Each QP's target is its own: every add must return the value of
	 * the one before plus one. */
	if (q->atomic_known && got != q->atomic_next)
		return perf_worker_fail(
			w, -OPENRDMA_EIO,
			"fetch-and-add on QP %u returned %llu, expected %llu",
			q->index, (unsigned long long)got,
			(unsigned long long)q->atomic_next);
	q->atomic_next = got + 1;
	q->atomic_known = true;
	return 0;
}

static int client_step(struct perf_worker *w, struct perf_qp *q)
{
	int ret;

	switch (w->round.test) {
	case PERF_LAT_SEND:
		ret = post_one(w, q);
		return ret ? ret : wait_recv(w);
	case PERF_LAT_WRITE:
		return write_ping(w, q, true);
	case PERF_LAT_ATOMIC:
		ret = post_one(w, q);
		if (!ret)
			ret = wait_completed(w, q);
		return ret ? ret : atomic_check(w, q);
	default:
		ret = post_one(w, q);
		return ret ? ret : wait_completed(w, q);
	}
}

/* A sample's clock: cycles on a pinned thread (perf_cycles()). */
static inline uint64_t stamp(const struct perf_worker *w)
{
	return w->cycles ? perf_cycles() : perf_now_ns();
}

static inline uint64_t stamp_ns(const struct perf_worker *w, uint64_t d)
{
	return w->cycles ? (uint64_t)((double)d * perf_cycle_ns) : d;
}

int perf_lat_client(struct perf_worker *w)
{
	uint64_t total = w->round.iters * w->nqps, i, prev, now, dt;
	unsigned int qi = 0;
	int ret;

	w->t_first = perf_now_ns();
	prev = stamp(w);
	for (i = 0; i < total; i++) {
		ret = client_step(w, w->qps[qi]);
		if (ret)
			return ret;
		if (++qi == w->nqps)
			qi = 0;
		now = stamp(w);
		dt = stamp_ns(w, now - prev);
		w->samples[i] = dt > UINT32_MAX ? UINT32_MAX : (uint32_t)dt;
		prev = now;
	}
	w->t_last = perf_now_ns();
	w->nsamples = total;
	w->ops = total;
	return perf_drain_sends(w);
}

/* The server of the ping-pong tests answers in the client's order. */
int perf_lat_server(struct perf_worker *w)
{
	uint64_t total = w->round.iters * w->nqps, i;
	unsigned int qi = 0;
	int ret;

	for (i = 0; i < total; i++) {
		if (w->round.test == PERF_LAT_WRITE) {
			ret = write_ping(w, w->qps[qi], false);
		} else {
			ret = wait_recv(w);
			if (!ret)
				ret = post_one(w, w->rx_qp);
		}
		if (ret)
			return ret;
		if (!i)
			w->t_first = perf_now_ns();
		if (++qi == w->nqps)
			qi = 0;
	}
	w->t_last = perf_now_ns();
	w->ops = total;
	return perf_drain_sends(w);
}
