/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Worker threads and rounds.  The main thread of a side posts a round;
 * every worker prepares its QPs (ring layout, receives, counters) and
 * reports; the main thread then lets them all go at once and sleeps on the
 * control channel until the last one is done, so that it can react to the
 * peer (an ABORT) while they run.  The last worker of each phase wakes
 * the main thread through an eventfd.
 */
#include "config.h"

#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "examples/perf/openrdma_perf.h"

/* Sample memory per worker is bounded: 2^26 round trips, 256 MiB. */
#define MAX_SAMPLES (1ull << 26)

int perf_worker_fail(struct perf_worker *w, int ret, const char *fmt, ...)
{
	va_list ap;

	if (w->status)
		return ret;
	w->status = ret;
	va_start(ap, fmt);
	vsnprintf(w->error, sizeof(w->error), fmt, ap);
	va_end(ap);
	return ret;
}

int perf_wc_fail(struct perf_worker *w, const struct openrdma_wc *wc)
{
	uint64_t local = wc->wr_id >> PERF_WR_QP_SHIFT;

	return perf_worker_fail(
		w, -OPENRDMA_EIO,
		"%s on QP %ld completed with %s (vendor error 0x%x)",
		wc->wr_id & PERF_WR_RECV ? "a receive" : "a send request",
		local < w->nqps ? (long)w->qps[local]->index : -1L,
		openrdma_wc_status_str(wc->status), wc->vendor_err);
}

int perf_worker_idle(struct perf_worker *w)
{
	struct perf_side *side = w->side;
	uint64_t now;

	if (atomic_load_explicit(&side->abort, memory_order_relaxed))
		return perf_worker_fail(w, -OPENRDMA_ECANCELED, "stopped");
	now = perf_now_ns();
	if (w->progress != w->seen_progress) {
		w->seen_progress = w->progress;
		w->deadline = now + side->p.timeout_s * 1000000000ull;
		return 0;
	}
	if (now > w->deadline)
		return perf_worker_fail(w, -OPENRDMA_ETIMEDOUT,
					"no progress for %u s",
					side->p.timeout_s);
	return 0;
}

static bool is_atomic(enum openrdma_wr_opcode op)
{
	return op == OPENRDMA_WR_ATOMIC_FETCH_AND_ADD ||
	       op == OPENRDMA_WR_ATOMIC_CMP_AND_SWP;
}

static int samples_reserve(struct perf_worker *w, uint64_t n)
{
	uint32_t *s;

	if (n > MAX_SAMPLES)
		return perf_worker_fail(
			w, -OPENRDMA_E2BIG,
			"%llu round trips per thread: at most %llu",
			(unsigned long long)n, (unsigned long long)MAX_SAMPLES);
	if (n <= w->samples_cap)
		return 0;
	s = realloc(w->samples, n * sizeof(*s));
	if (!s)
		return perf_worker_fail(w, -OPENRDMA_ENOMEM, "sample memory");
	/* Touched now, not in the timed loop. */
	memset(s, 0, n * sizeof(*s));
	w->samples = s;
	w->samples_cap = n;
	return 0;
}

/* Everything a round needs is set here, outside the timed part. */
static int prepare(struct perf_worker *w)
{
	struct perf_side *side = w->side;
	const struct perf_test_desc *t = &perf_tests[w->round.test];
	uint32_t size = w->round.size;
	unsigned int i;
	int ret;

	w->status = 0;
	w->error[0] = '\0';
	w->window = side->p.window;
	w->post_list = side->p.post_list;
	w->cq_mod = t->kind == PERF_KIND_ROUNDTRIP ? 1 : side->p.cq_mod;
	w->rx_group = t->kind == PERF_KIND_STREAM ? side->p.rx_depth / 4 : 1;
	if (w->rx_group > 16)
		w->rx_group = 16;
	if (!w->rx_group)
		w->rx_group = 1;
	w->send_flags = 0;
	if ((t->opcode == OPENRDMA_WR_SEND ||
	     t->opcode == OPENRDMA_WR_RDMA_WRITE) &&
	    size <= side->max_inline)
		w->send_flags = OPENRDMA_SEND_INLINE;
	w->t_first = w->t_last = 0;
	w->ops = 0;
	w->cpu_ns = 0;
	w->nsamples = 0;
	w->spins = 0;
	w->progress = w->seen_progress = 0;
	w->deadline = perf_now_ns() + side->p.timeout_s * 1000000000ull;
	for (i = 0; i < w->nqps; i++) {
		struct perf_qp *q = w->qps[i];

		q->posted = q->completed = q->received = 0;
		q->total = w->round.iters;
		q->slot = 0;
		q->sig_left = w->cq_mod;
		q->seq = 0;
		q->atomic_known = false;
		perf_rings_layout(q, size, t->opcode,
				  t->kind == PERF_KIND_STREAM);
		/* lat_write polls the last byte of the message. */
		if (t->kind == PERF_KIND_PINGPONG && !is_atomic(t->opcode))
			q->buf[size - 1] = 0;
		ret = perf_rx_fill(q);
		if (ret)
			return perf_worker_fail(w, ret, "post_recv: %s",
						openrdma_strerror(ret));
	}
	if (!side->is_server && t->kind != PERF_KIND_STREAM)
		return samples_reserve(w, w->round.iters * w->nqps);
	return 0;
}

static int run(struct perf_worker *w)
{
	const struct perf_test_desc *t = &perf_tests[w->round.test];
	bool server = w->side->is_server;

	switch (t->kind) {
	case PERF_KIND_PINGPONG:
		return server ? perf_lat_server(w) : perf_lat_client(w);
	case PERF_KIND_ROUNDTRIP:
		return server ? 0 : perf_lat_client(w);
	case PERF_KIND_STREAM:
		if (!server)
			return perf_bw_client(w);
		/* RDMA targets have nothing to do: the transport does it. */
		return t->opcode == OPENRDMA_WR_SEND ? perf_bw_server(w) : 0;
	default:
		return -OPENRDMA_EINVAL;
	}
}

/* The last worker of a phase wakes the main thread. */
static void phase_done(struct perf_side *side)
{
	uint64_t one = 1;

	if (atomic_fetch_sub(&side->pending, 1) == 1 &&
	    write(side->event_fd, &one, sizeof(one)) < 0)
		atomic_store(&side->abort, true);
}

static void *worker_main(void *arg)
{
	struct perf_worker *w = arg;
	struct perf_side *side = w->side;
	uint64_t gen = 0, cpu0;
	bool skip;

	w->cycles = perf_pin(side->cpu >= 0 ? side->cpu + (int)w->index : -1) &&
		    perf_cycle_ns > 0;
	for (;;) {
		pthread_mutex_lock(&side->lock);
		while (side->round_gen == gen)
			pthread_cond_wait(&side->cond, &side->lock);
		gen = side->round_gen;
		w->round = side->round;
		pthread_mutex_unlock(&side->lock);
		if (w->round.quit)
			break;
		prepare(w);
		phase_done(side);

		pthread_mutex_lock(&side->lock);
		while (side->go_gen != gen)
			pthread_cond_wait(&side->cond, &side->lock);
		skip = side->go_abort;
		pthread_mutex_unlock(&side->lock);
		if (!skip && !w->status) {
			cpu0 = perf_cpu_ns(true);
			run(w);
			w->cpu_ns = perf_cpu_ns(true) - cpu0;
		}
		phase_done(side);
	}
	return NULL;
}

int perf_workers_start(struct perf_side *side)
{
	uint32_t i;
	int ret;

	side->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (side->event_fd < 0)
		return perf_err(side, "eventfd", -errno);
	pthread_mutex_init(&side->lock, NULL);
	pthread_cond_init(&side->cond, NULL);
	side->sync_init = true;
	for (i = 0; i < side->nworkers; i++) {
		ret = pthread_create(&side->workers[i].thread, NULL,
				     worker_main, &side->workers[i]);
		if (ret)
			return perf_err(side, "pthread_create", -ret);
		side->workers[i].started = true;
	}
	return 0;
}

void perf_workers_stop(struct perf_side *side)
{
	uint32_t i;

	if (!side->sync_init)
		return;
	pthread_mutex_lock(&side->lock);
	side->round.quit = true;
	side->round_gen++;
	pthread_cond_broadcast(&side->cond);
	pthread_mutex_unlock(&side->lock);
	for (i = 0; i < side->nworkers; i++)
		if (side->workers[i].started)
			pthread_join(side->workers[i].thread, NULL);
	pthread_cond_destroy(&side->cond);
	pthread_mutex_destroy(&side->lock);
	close(side->event_fd);
	side->sync_init = false;
}

static void post_round(struct perf_side *side, const struct perf_round *r)
{
	pthread_mutex_lock(&side->lock);
	side->round = *r;
	side->go_abort = false;
	atomic_store(&side->pending, side->nworkers);
	side->round_gen++;
	pthread_cond_broadcast(&side->cond);
	pthread_mutex_unlock(&side->lock);
}

static void go(struct perf_side *side, bool abort_round)
{
	pthread_mutex_lock(&side->lock);
	side->go_abort = abort_round;
	atomic_store(&side->pending, side->nworkers);
	side->go_gen = side->round_gen;
	pthread_cond_broadcast(&side->cond);
	pthread_mutex_unlock(&side->lock);
}

/*
 * Waits for the last worker of a phase.  Preparing cannot hang, and a
 * worker that runs checks the abort flag and its deadline while it spins.
 */
static int wait_phase(struct perf_side *side)
{
	struct pollfd pfd = { .fd = side->event_fd, .events = POLLIN };
	uint64_t val;
	int ret;

	do
		ret = poll(&pfd, 1, (int)side->p.timeout_s * 1000);
	while (ret < 0 && errno == EINTR);
	if (ret <= 0 || read(side->event_fd, &val, sizeof(val)) < 0)
		return perf_err(side, "workers", -OPENRDMA_ETIMEDOUT);
	return 0;
}

static int first_error(struct perf_side *side)
{
	uint32_t i;

	for (i = 0; i < side->nworkers; i++) {
		struct perf_worker *w = &side->workers[i];

		/* A worker stopped by another one's failure is not news. */
		if (w->status && w->status != -OPENRDMA_ECANCELED) {
			fprintf(stderr, "%s: %s%s, %u B: %s\n", PERF_NAME,
				side->is_server ? "server: " : "",
				perf_test_name(w->round.test), w->round.size,
				w->error);
			return w->status;
		}
	}
	for (i = 0; i < side->nworkers; i++)
		if (side->workers[i].status)
			return side->workers[i].status;
	return 0;
}

/*
 * Waits for the workers and, on the server, for the client's END.  The
 * client sends a heartbeat every third of the timeout, so that a server
 * whose own part is passive knows its client is alive.
 */
static int wait_done(struct perf_side *side, struct perf_msg *peer_end)
{
	int tick = side->is_server ? -1 : (int)side->p.timeout_s * 333;
	bool done = false, ended = !side->is_server;
	struct perf_msg msg;
	int ret, failure = 0;

	while (!done || !ended) {
		ret = perf_ctl_recv(side, &msg, done ? -1 : side->event_fd,
				    tick);
		if (ret == -OPENRDMA_EINTR) {
			done = true;
			continue;
		}
		if (ret == -OPENRDMA_ETIMEDOUT && !side->is_server) {
			msg = (struct perf_msg){ .type = PERF_MSG_HEARTBEAT };
			ret = perf_ctl_send(side, &msg);
		} else if (!ret && msg.type == PERF_MSG_END && !ended) {
			*peer_end = msg;
			ended = true;
		} else if (!ret && msg.type == PERF_MSG_ABORT) {
			side->peer_gone = true;
			fprintf(stderr, "%s: %sthe peer stopped: %s\n",
				PERF_NAME, side->is_server ? "server: " : "",
				msg.text);
			ret = msg.status ? msg.status : -OPENRDMA_ECANCELED;
		} else if (!ret && msg.type != PERF_MSG_HEARTBEAT) {
			ret = perf_err(side, "unexpected control message",
				       -OPENRDMA_EPROTO);
		}
		if (!ret)
			continue;
		if (ret == -OPENRDMA_ETIMEDOUT)
			perf_err(side, "waiting for the peer", ret);
		/* Stop the workers; without a peer nothing else can. */
		failure = ret;
		atomic_store(&side->abort, true);
		if (!done)
			wait_phase(side);
		break;
	}
	return failure;
}

int perf_round_run(struct perf_side *side, const struct perf_round *round,
		   struct perf_msg *peer_end, uint64_t *cpu_ns,
		   uint64_t *wall_ns)
{
	struct perf_msg ready = { .type = PERF_MSG_READY };
	uint64_t cpu0, t0, cpu = 0;
	uint32_t i;
	int ret, failed;

	post_round(side, round);
	ret = wait_phase(side);
	if (ret)
		return ret;
	ret = first_error(side);
	if (ret) {
		go(side, true);
		wait_phase(side);
		return ret;
	}
	cpu0 = perf_cpu_ns(false);
	t0 = perf_now_ns();
	go(side, false);
	if (side->is_server) {
		ret = perf_ctl_send(side, &ready);
		if (ret)
			atomic_store(&side->abort, true);
	}
	failed = wait_done(side, peer_end);
	if (!ret)
		ret = failed;
	*wall_ns = perf_now_ns() - t0;
	if (side->shares_process) {
		for (i = 0; i < side->nworkers; i++)
			cpu += side->workers[i].cpu_ns;
	} else {
		cpu = perf_cpu_ns(false) - cpu0;
	}
	*cpu_ns = cpu;
	failed = first_error(side);
	return failed ? failed : ret;
}
