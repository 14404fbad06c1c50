/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * A session, seen from each side.  The client connects the control QP,
 * sends HELLO with its parameters, connects the data QPs, and then for
 * each test and size runs a warm-up round (or, with -D, calibration
 * rounds that size the timed one) and a timed round:
 *
 *   client                         server
 *   BEGIN(test, size, iters)  ->
 *                                  prepare, go
 *                             <-   READY
 *   go ... workers done
 *   END                       ->   (its workers done too)
 *                             <-   RESULT(cpu, wall, arrivals)
 *
 * and ends with BYE.  Either side sends ABORT when it fails.
 */
#include "config.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "examples/perf/openrdma_perf.h"

/* Calibration (-D): rounds until one lasts this long, at most this often. */
#define CALIBRATE_NS 100000000ull
#define CALIBRATE_TRIES 6
#define BYTES_PER_ROUND (1ull << 30)

enum {
	HELLO_TESTS,
	HELLO_EXPLICIT,
	HELLO_MIN_SIZE,
	HELLO_MAX_SIZE,
	HELLO_ITERS,
	HELLO_DURATION,
	HELLO_QPS,
	HELLO_THREADS,
	HELLO_WINDOW,
	HELLO_POST_LIST,
	HELLO_CQ_MOD,
	HELLO_RX_DEPTH,
	HELLO_INLINE,
	HELLO_TIMEOUT,
	HELLO_SCALE_EPS,
	HELLO_SESSION,
};

static void params_to_msg(const struct perf_params *p, struct perf_msg *m)
{
	m->v[HELLO_TESTS] = p->tests;
	m->v[HELLO_EXPLICIT] = p->explicit_tests;
	m->v[HELLO_MIN_SIZE] = p->min_size;
	m->v[HELLO_MAX_SIZE] = p->max_size;
	m->v[HELLO_ITERS] = p->iters;
	m->v[HELLO_DURATION] = p->duration_ms;
	m->v[HELLO_QPS] = p->qps;
	m->v[HELLO_THREADS] = p->threads;
	m->v[HELLO_WINDOW] = p->window;
	m->v[HELLO_POST_LIST] = p->post_list;
	m->v[HELLO_CQ_MOD] = p->cq_mod;
	m->v[HELLO_RX_DEPTH] = p->rx_depth;
	m->v[HELLO_INLINE] = (uint64_t)(int64_t)p->inline_size;
	m->v[HELLO_TIMEOUT] = p->timeout_s;
	m->v[HELLO_SCALE_EPS] = p->scale_eps;
	m->v[HELLO_SESSION] = p->session;
}

/* The server takes the client's parameters, within its own limits. */
static int params_from_msg(const struct perf_msg *m, struct perf_params *p)
{
	if (m->v[HELLO_MAX_SIZE] > PERF_MAX_SIZE ||
	    m->v[HELLO_MIN_SIZE] > m->v[HELLO_MAX_SIZE] ||
	    m->v[HELLO_QPS] > PERF_MAX_QPS ||
	    m->v[HELLO_THREADS] > PERF_MAX_THREADS ||
	    m->v[HELLO_WINDOW] > 65536 || m->v[HELLO_RX_DEPTH] > 65536 ||
	    m->v[HELLO_TIMEOUT] > 86400)
		return -OPENRDMA_EINVAL;
	p->tests = (uint32_t)m->v[HELLO_TESTS];
	p->explicit_tests = (uint32_t)m->v[HELLO_EXPLICIT];
	p->min_size = m->v[HELLO_MIN_SIZE];
	p->max_size = m->v[HELLO_MAX_SIZE];
	p->iters = m->v[HELLO_ITERS];
	p->duration_ms = m->v[HELLO_DURATION];
	p->qps = (uint32_t)m->v[HELLO_QPS];
	p->threads = (uint32_t)m->v[HELLO_THREADS];
	p->window = (uint32_t)m->v[HELLO_WINDOW];
	p->post_list = (uint32_t)m->v[HELLO_POST_LIST];
	p->cq_mod = (uint32_t)m->v[HELLO_CQ_MOD];
	p->rx_depth = (uint32_t)m->v[HELLO_RX_DEPTH];
	p->inline_size = (int32_t)(int64_t)m->v[HELLO_INLINE];
	p->timeout_s = (uint32_t)m->v[HELLO_TIMEOUT];
	p->scale_eps = (uint32_t)m->v[HELLO_SCALE_EPS];
	p->session = (uint32_t)m->v[HELLO_SESSION];
	perf_params_fix(p);
	return 0;
}

static bool has_data_tests(const struct perf_params *p)
{
	return p->tests & PERF_TESTS_ALL;
}

static void describe(const struct perf_side *side, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", openrdma_device_name(side->ctx->device),
		 side->attr.transport);
}

/* ------------------------------------------------------------------ */
/* Client                                                             */
/* ------------------------------------------------------------------ */

struct round_out {
	uint64_t cpu_ns, wall_ns;
	struct perf_msg srv; /* the server's RESULT */
};

static int client_round(struct perf_side *side, enum perf_test test,
			uint32_t size, uint64_t iters, bool warmup,
			struct round_out *out)
{
	struct perf_round round = {
		.test = test, .size = size, .iters = iters, .warmup = warmup
	};
	struct perf_msg msg = { .type = PERF_MSG_BEGIN };
	int ret;

	msg.v[PERF_V_TEST] = test;
	msg.v[PERF_V_SIZE] = size;
	msg.v[PERF_V_ITERS] = iters;
	msg.v[PERF_V_WARMUP] = warmup;
	ret = perf_ctl_send(side, &msg);
	if (!ret)
		ret = perf_ctl_expect(side, PERF_MSG_READY, &msg);
	if (ret)
		return ret;
	ret = perf_round_run(side, &round, NULL, &out->cpu_ns, &out->wall_ns);
	if (ret)
		return ret;
	msg = (struct perf_msg){ .type = PERF_MSG_END };
	ret = perf_ctl_send(side, &msg);
	if (!ret)
		ret = perf_ctl_expect(side, PERF_MSG_RESULT, &out->srv);
	if (!ret && out->srv.status)
		ret = out->srv.status;
	return ret;
}

static uint64_t default_iters(enum perf_test test, uint32_t size)
{
	uint64_t n = perf_tests[test].kind == PERF_KIND_STREAM ? 100000 : 10000;
	uint64_t cap = BYTES_PER_ROUND / size;

	if (n > cap)
		n = cap;
	return n < 100 ? 100 : n;
}

static uint64_t warmup_iters(enum perf_test test, uint64_t iters)
{
	uint64_t max = perf_tests[test].kind == PERF_KIND_STREAM ? 20000 : 2000;
	uint64_t n = iters / 10;

	if (n < 16)
		n = 16;
	if (n > max)
		n = max;
	return n > iters ? iters : n;
}

/* The most round trips a latency round may take (sample memory). */
static uint64_t max_lat_iters(const struct perf_side *side)
{
	uint32_t per_worker =
		(side->nqps + side->nworkers - 1) / side->nworkers;

	return (1ull << 26) / per_worker;
}

/*
 * -D: rounds of growing length until one takes CALIBRATE_NS; they also
 * warm up.  The timed round gets the count that fills the duration.
 */
static int calibrate(struct perf_side *side, enum perf_test test, uint32_t size,
		     uint64_t *iters)
{
	bool lat = perf_tests[test].kind != PERF_KIND_STREAM;
	uint64_t cap = BYTES_PER_ROUND / size, n, want;
	struct round_out ro;
	int tries, ret;

	n = lat ? 256 : 4ull * side->p.window;
	if (n > cap)
		n = cap > 16 ? cap : 16;
	for (tries = 0;; tries++) {
		ret = client_round(side, test, size, n, true, &ro);
		if (ret)
			return ret;
		if (ro.wall_ns >= CALIBRATE_NS || tries == CALIBRATE_TRIES ||
		    n * 4 > cap)
			break;
		n *= 4;
	}
	want = (uint64_t)((double)n * (double)side->p.duration_ms * 1e6 /
			  (double)(ro.wall_ns ? ro.wall_ns : 1));
	if (want < 16)
		want = 16;
	if (lat && want > max_lat_iters(side))
		want = max_lat_iters(side);
	*iters = want;
	return 0;
}

/* All workers' samples in one array (copied when there are several). */
static int latency_fill(struct perf_side *side, bool half,
			struct perf_result *r)
{
	uint64_t total = 0, off = 0;
	uint32_t *all, i;

	if (side->nworkers == 1) {
		perf_stats_latency(side->workers[0].samples,
				   side->workers[0].nsamples, half, r);
		return 0;
	}
	for (i = 0; i < side->nworkers; i++)
		total += side->workers[i].nsamples;
	all = malloc((total ? total : 1) * sizeof(*all));
	if (!all)
		return perf_err(side, "samples", -OPENRDMA_ENOMEM);
	for (i = 0; i < side->nworkers; i++) {
		memcpy(all + off, side->workers[i].samples,
		       side->workers[i].nsamples * sizeof(*all));
		off += side->workers[i].nsamples;
	}
	perf_stats_latency(all, total, half, r);
	free(all);
	return 0;
}

static double pct(uint64_t cpu_ns, uint64_t wall_ns)
{
	return wall_ns ? 100.0 * (double)cpu_ns / (double)wall_ns : -1;
}

static int result_fill(struct perf_side *side, const struct round_out *ro,
		       struct perf_result *r)
{
	const struct perf_test_desc *t = &perf_tests[r->test];
	uint64_t first = UINT64_MAX, last = 0, ops = 0, ns;
	uint32_t i;

	r->cpu_client = pct(ro->cpu_ns, ro->wall_ns);
	r->cpu_server =
		pct(ro->srv.v[PERF_V_CPU_NS], ro->srv.v[PERF_V_WALL_NS]);
	r->seconds = (double)ro->wall_ns / 1e9;
	if (t->kind != PERF_KIND_STREAM)
		return latency_fill(side, t->kind == PERF_KIND_PINGPONG, r);
	if (t->rate_at_target) {
		/* Rate between arrivals: n messages, n - 1 intervals. */
		ops = ro->srv.v[PERF_V_COUNT];
		ns = ro->srv.v[PERF_V_RATE_NS];
		if (ops > 1)
			ops--;
	} else {
		for (i = 0; i < side->nworkers; i++) {
			struct perf_worker *w = &side->workers[i];

			if (w->t_first < first)
				first = w->t_first;
			if (w->t_last > last)
				last = w->t_last;
			ops += w->ops;
		}
		ns = last > first ? last - first : 0;
	}
	if (!ns)
		ns = 1;
	r->mmps = (double)ops * 1e3 / (double)ns;
	r->gbps = (double)ops * r->size / (double)ns;
	return 0;
}

/* Why the pair cannot run test at size, or NULL. */
static const char *unsupported(const struct perf_side *side,
			       const struct perf_msg *ack, enum perf_test test,
			       uint32_t size)
{
	if (test == PERF_LAT_ATOMIC &&
	    (side->attr.atomic_cap == OPENRDMA_ATOMIC_NONE ||
	     ack->v[PERF_V_ATOMIC] == OPENRDMA_ATOMIC_NONE))
		return "the interfaces have no atomics";
	if ((test == PERF_LAT_READ || test == PERF_BW_READ) &&
	    side->attr.max_qp_init_rd_atom < 1)
		return "the interface issues no RDMA reads";
	if (side->attr.max_msg_size && size > side->attr.max_msg_size)
		return "the message exceeds the interface's max_msg_size";
	return NULL;
}

static int run_size(struct perf_side *side, struct perf_out *out,
		    enum perf_test test, uint32_t size)
{
	struct perf_result r = { .test = test, .size = size };
	struct round_out ro;
	uint64_t iters = side->p.iters;
	int ret;

	if (side->p.duration_ms) {
		ret = calibrate(side, test, size, &iters);
		if (ret)
			return ret;
	} else {
		if (!iters)
			iters = default_iters(test, size);
		if (perf_tests[test].kind != PERF_KIND_STREAM &&
		    iters > max_lat_iters(side)) {
			fprintf(stderr,
				"%s: %llu iterations: latency tests keep at most %llu samples per thread\n",
				PERF_NAME, (unsigned long long)iters,
				(unsigned long long)max_lat_iters(side));
			return -OPENRDMA_E2BIG;
		}
		ret = client_round(side, test, size, warmup_iters(test, iters),
				   true, &ro);
		if (ret)
			return ret;
	}
	r.iters = iters;
	ret = client_round(side, test, size, iters, false, &ro);
	if (!ret)
		ret = result_fill(side, &ro, &r);
	if (!ret)
		perf_out_result(out, &r);
	return ret;
}

static int run_tests(struct perf_side *side, struct perf_out *out,
		     const struct perf_msg *ack)
{
	uint32_t first, last, size;
	const char *why;
	int t, ret;

	for (t = 0; t < PERF_SCALE; t++) {
		if (!(side->p.tests & (1u << t)))
			continue;
		perf_test_sizes(&side->p, t, &first, &last);
		for (size = first; size && size <= last; size *= 2) {
			why = unsupported(side, ack, t, size);
			if (why && (side->p.explicit_tests & (1u << t))) {
				fprintf(stderr, "%s: %s: %s\n", PERF_NAME,
					perf_test_name(t), why);
				return -OPENRDMA_EOPNOTSUPP;
			}
			if (why) {
				perf_out_skip(out, t, why);
				break;
			}
			perf_out_step(out, t, size);
			ret = run_size(side, out, t, size);
			if (ret)
				return ret;
			if (size > UINT32_MAX / 2)
				break;
		}
	}
	return 0;
}

static unsigned int count_steps(const struct perf_params *p)
{
	uint32_t first, last, size;
	unsigned int n = 0;
	int t;

	for (t = 0; t < PERF_SCALE; t++) {
		if (!(p->tests & (1u << t)))
			continue;
		perf_test_sizes(p, t, &first, &last);
		for (size = first; size && size <= last; size *= 2) {
			n++;
			if (size > UINT32_MAX / 2)
				break;
		}
	}
	return n + !!(p->tests & (1u << PERF_SCALE));
}

static void addr_str(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned int port = 0;

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)ss;

		inet_ntop(AF_INET, &sin->sin_addr, host, sizeof(host));
		port = ntohs(sin->sin_port);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const void *)ss;

		inet_ntop(AF_INET6, &sin6->sin6_addr, host, sizeof(host));
		port = ntohs(sin6->sin6_port);
	}
	snprintf(buf, len, "%s:%u", host, port);
}

static int client_setup(struct perf_side *side, struct sockaddr_storage *dst,
			struct perf_msg *ack)
{
	struct perf_msg msg = { .type = PERF_MSG_HELLO };
	int ret;

	ret = perf_side_open(side);
	if (!ret)
		ret = perf_ctl_create(side);
	if (ret)
		return ret;
	if (side->opts->local)
		*dst = side->addr;
	else
		ret = perf_resolve(side, side->opts->server, dst);
	if (!ret)
		ret = perf_ctl_connect(side, dst);
	if (ret)
		return ret;
	params_to_msg(&side->p, &msg);
	ret = perf_ctl_send(side, &msg);
	if (!ret)
		ret = perf_ctl_expect(side, PERF_MSG_HELLO_ACK, ack);
	if (!ret && ack->status) {
		fprintf(stderr, "%s: the server cannot run this: %s\n",
			PERF_NAME, openrdma_strerror(ack->status));
		ret = ack->status;
	}
	side->peer_max_qp = (uint32_t)ack->v[PERF_V_MAX_QP];
	if (ret || !has_data_tests(&side->p))
		return ret;
	ret = perf_data_create(side);
	if (!ret)
		ret = perf_data_connect(side, dst);
	if (!ret)
		ret = perf_workers_start(side);
	return ret;
}

int perf_client_run(struct perf_side *side)
{
	const struct perf_opts *o = side->opts;
	struct perf_out out = { .f = stdout,
				.format = o->format,
				.progress = o->progress };
	struct perf_session_info info = { .p = &side->p };
	struct perf_msg ack = { 0 }, bye = { .type = PERF_MSG_BYE };
	struct sockaddr_storage dst;
	char server[INET6_ADDRSTRLEN + 8];
	bool begun = false;
	int ret;

	ret = client_setup(side, &dst, &ack);
	if (!ret) {
		addr_str(&dst, server, sizeof(server));
		info.iface = openrdma_device_name(side->ctx->device);
		info.transport = side->attr.transport;
		info.peer = ack.text;
		info.server = server;
		info.local_threads = side->shares_process;
		info.max_inline =
			has_data_tests(&side->p) ? side->max_inline : 0;
		out.steps = count_steps(&side->p);
		perf_out_begin(&out, &info);
		begun = true;
		ret = run_tests(side, &out, &ack);
	}
	if (!ret && (side->p.tests & (1u << PERF_SCALE))) {
		perf_out_step(&out, PERF_SCALE, 0);
		ret = perf_scale_client(side, &out, &dst);
	}
	if (!ret) {
		side->ctl.ending = true;
		ret = perf_ctl_send(side, &bye);
	} else {
		perf_ctl_abort(side, ret);
	}
	if (begun)
		perf_out_end(&out, ret, NULL);
	perf_scale_close(side);
	perf_side_close(side);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Server                                                             */
/* ------------------------------------------------------------------ */

static int server_round(struct perf_side *side, const struct perf_msg *begin)
{
	struct perf_msg end = { 0 }, res = { .type = PERF_MSG_RESULT };
	struct perf_round round = { 0 };
	uint64_t cpu, wall, first = UINT64_MAX, last = 0, ops = 0;
	uint32_t i;
	int ret;

	if (!has_data_tests(&side->p) || begin->v[PERF_V_TEST] >= PERF_SCALE ||
	    begin->v[PERF_V_SIZE] < 1 ||
	    begin->v[PERF_V_SIZE] > perf_params_max_size(&side->p) ||
	    begin->v[PERF_V_ITERS] < 1)
		return perf_err(side, "round parameters", -OPENRDMA_EPROTO);
	round.test = (enum perf_test)begin->v[PERF_V_TEST];
	round.size = (uint32_t)begin->v[PERF_V_SIZE];
	round.iters = begin->v[PERF_V_ITERS];
	round.warmup = begin->v[PERF_V_WARMUP];
	ret = perf_round_run(side, &round, &end, &cpu, &wall);
	if (ret)
		return ret;
	if (end.status)
		return end.status;
	for (i = 0; i < side->nworkers; i++) {
		struct perf_worker *w = &side->workers[i];

		if (w->t_first && w->t_first < first)
			first = w->t_first;
		if (w->t_last > last)
			last = w->t_last;
		ops += w->ops;
	}
	res.v[PERF_V_CPU_NS] = cpu;
	res.v[PERF_V_WALL_NS] = wall;
	res.v[PERF_V_COUNT] = ops;
	res.v[PERF_V_RATE_NS] = last > first ? last - first : 0;
	return perf_ctl_send(side, &res);
}

static int server_setup(struct perf_side *side)
{
	struct perf_msg msg, ack = { .type = PERF_MSG_HELLO_ACK };
	char addr[INET6_ADDRSTRLEN + 8];
	int ret;

	ret = perf_side_open(side);
	if (!ret)
		ret = perf_ctl_create(side);
	if (!ret)
		ret = perf_listen(side);
	if (side->ready_fd >= 0) {
		/* -l: the client learns where we listen (or that we fail). */
		if (ret)
			memset(&side->addr, 0, sizeof(side->addr));
		if (write(side->ready_fd, &side->addr, sizeof(side->addr)) < 0)
			ret = ret ? ret : -errno;
		close(side->ready_fd);
		side->ready_fd = -1;
	}
	if (ret)
		return ret;
	if (side->opts->verbose) {
		addr_str(&side->addr, addr, sizeof(addr));
		fprintf(stderr, "%s: server: %s listening at %s\n", PERF_NAME,
			openrdma_device_name(side->ctx->device), addr);
	}
	ret = perf_ctl_accept(side);
	if (!ret)
		ret = perf_ctl_expect(side, PERF_MSG_HELLO, &msg);
	if (ret)
		return ret;
	ack.status = params_from_msg(&msg, &side->p);
	if (!ack.status && has_data_tests(&side->p))
		ack.status = perf_data_create(side);
	describe(side, ack.text, sizeof(ack.text));
	ack.v[PERF_V_MAX_INLINE] = side->max_inline;
	ack.v[PERF_V_ATOMIC] = side->attr.atomic_cap;
	ack.v[PERF_V_MAX_QP] = (uint64_t)side->attr.max_qp;
	ret = perf_ctl_send(side, &ack);
	if (ack.status)
		return ack.status;
	if (ret || !has_data_tests(&side->p))
		return ret;
	ret = perf_data_connect(side, NULL);
	if (!ret)
		ret = perf_workers_start(side);
	return ret;
}

int perf_server_run(struct perf_side *side)
{
	struct perf_msg msg;
	unsigned int rounds = 0;
	bool bye = false;
	int ret;

	ret = server_setup(side);
	while (!ret && !bye) {
		ret = perf_ctl_recv(side, &msg, -1, -1);
		if (ret == -OPENRDMA_ETIMEDOUT)
			perf_err(side, "waiting for the client", ret);
		if (ret)
			break;
		switch (msg.type) {
		case PERF_MSG_BEGIN:
			ret = server_round(side, &msg);
			rounds++;
			break;
		case PERF_MSG_SCALE:
			ret = perf_scale_server(side, &msg);
			break;
		case PERF_MSG_HEARTBEAT:
			break;
		case PERF_MSG_BYE:
			bye = true;
			side->bye = true;
			break;
		case PERF_MSG_ABORT:
			side->peer_gone = true;
			fprintf(stderr, "%s: server: the client stopped: %s\n",
				PERF_NAME, msg.text);
			ret = msg.status ? msg.status : -OPENRDMA_ECANCELED;
			break;
		default:
			ret = perf_err(side, "control message",
				       -OPENRDMA_EPROTO);
			break;
		}
	}
	if (ret)
		perf_ctl_abort(side, ret);
	if (side->opts->verbose && side->ctx)
		fprintf(stderr, "%s: server: session %s after %u rounds\n",
			PERF_NAME, ret ? "failed" : "done", rounds);
	perf_scale_close(side);
	perf_side_close(side);
	return ret;
}
