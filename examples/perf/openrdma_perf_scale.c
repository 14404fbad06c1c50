/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The scale test: as many connected RC endpoints (a QP and its CM id) as
 * the descriptor limit, the interfaces' QP limits and --endpoints allow.
 * The client drives four phases, each a SCALE message that the server
 * answers with READY, then its part, then RESULT:
 *
 *   probe     a few endpoints, to learn what one costs in descriptors;
 *   bulk      the rest, timed: the connection set-up rate;
 *   check     one message on every endpoint, counted by the server;
 *   teardown  disconnect and destroy all, timed.
 *
 * Memory per endpoint is the growth of the resident set over the probe
 * and bulk phases divided by the endpoints, on each side.
 */
#include "config.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "examples/perf/openrdma_perf.h"

#define PROBE_EPS 64u
#define DEFAULT_MAX_EPS 65536u /* when descriptors do not bound it */
#define FD_RESERVE 64u
#define EPS_PER_CQ 1024u
#define CONNECTS_IN_FLIGHT 256u
#define MSG_BYTES 8

enum scale_phase {
	SCALE_SETUP = 1,
	SCALE_CHECK,
	SCALE_TEARDOWN,
};

/* Values of the SCALE message and of the server's READY. */
enum {
	V_PHASE = 0,
	V_COUNT = 1,
	V_PORT = 2,
};

static unsigned int addr_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return 0;
}

struct scale_ep {
	struct openrdma_qp *qp;
	struct openrdma_cm_id *id;
};

struct perf_scale {
	/* a context of its own: the session's QPs do not count against it */
	struct openrdma_context *ctx;
	struct openrdma_pd *pd;
	struct openrdma_cm_channel *ch;
	struct openrdma_cm_id *listen_id; /* server */
	struct sockaddr_storage addr; /* server: where it listens */
	struct sockaddr_storage dst; /* client: the server's listener */
	uint32_t max_qp;
	struct scale_ep *eps;
	uint32_t neps; /* created */
	uint32_t cap; /* of eps[] */
	uint32_t established;
	struct openrdma_cq **cqs;
	uint32_t ncqs;
	uint32_t per_cq;
	uint8_t *buf;
	struct openrdma_mr *mr;
	uint64_t rss0;
	unsigned int fds0;
};

static int scale_init(struct perf_side *side)
{
	struct perf_scale *s;
	int ret;

	if (side->scale)
		return 0;
	s = calloc(1, sizeof(*s));
	if (!s)
		return perf_err(side, "memory", -OPENRDMA_ENOMEM);
	side->scale = s;
	ret = perf_ctx_open(side, side->ctx->device, &s->ctx, &s->pd, &s->ch);
	if (ret)
		return ret;
	s->max_qp = side->attr.max_qp > 0 ? (uint32_t)side->attr.max_qp : 0;
	s->per_cq = EPS_PER_CQ;
	if (side->attr.max_cqe > 0 &&
	    (uint32_t)side->attr.max_cqe < 2 * s->per_cq + 16)
		s->per_cq = side->attr.max_cqe > 32 ?
				    ((uint32_t)side->attr.max_cqe - 16) / 2 :
				    1;
	if (side->is_server) {
		ret = perf_listen_on(side, s->ctx, s->ch, 0, &s->listen_id,
				     &s->addr);
		if (ret)
			return ret;
	}
	s->buf = aligned_alloc(4096, 4096);
	if (!s->buf)
		return perf_err(side, "memory", -OPENRDMA_ENOMEM);
	memset(s->buf, 0, 4096);
	ret = openrdma_mr_reg(s->pd, s->buf, 4096, OPENRDMA_ACCESS_LOCAL_WRITE,
			      &s->mr);
	if (ret)
		return perf_err(side, "mr_reg", ret);
	/* The baseline: everything but the endpoints exists. */
	s->rss0 = perf_rss_bytes();
	s->fds0 = perf_fd_count();
	return 0;
}

/* A QP for endpoint n, in INIT; the server's gets its one receive. */
static int ep_create(struct perf_side *side, struct scale_ep **ep_out)
{
	struct perf_scale *s = side->scale;
	struct openrdma_qp_cap cap = { .max_send_wr = 2,
				       .max_recv_wr = 1,
				       .max_send_sge = 1,
				       .max_recv_sge = 1 };
	struct openrdma_sge sge = { .addr = (uintptr_t)s->buf,
				    .length = 64,
				    .lkey = s->mr->lkey };
	struct openrdma_recv_wr wr = { .sg_list = &sge, .num_sge = 1 };
	struct openrdma_recv_wr *bad;
	struct scale_ep *ep, *eps;
	uint32_t c = s->neps / s->per_cq;
	int ret;

	if (s->neps == s->cap) {
		uint32_t cap_eps = s->cap ? 2 * s->cap : 1024;

		eps = realloc(s->eps, cap_eps * sizeof(*eps));
		if (!eps)
			return perf_err(side, "memory", -OPENRDMA_ENOMEM);
		s->eps = eps;
		s->cap = cap_eps;
	}
	if (c == s->ncqs) {
		struct openrdma_cq **cqs =
			realloc(s->cqs, (c + 1) * sizeof(*cqs));

		if (!cqs)
			return perf_err(side, "memory", -OPENRDMA_ENOMEM);
		s->cqs = cqs;
		ret = openrdma_cq_create(s->ctx, (int)(2 * s->per_cq + 16),
					 NULL, NULL, 0, &s->cqs[c]);
		if (ret)
			return perf_err(side, "cq_create", ret);
		s->ncqs++;
	}
	ep = &s->eps[s->neps];
	memset(ep, 0, sizeof(*ep));
	ret = perf_qp_open(side, s->pd, s->cqs[c], s->cqs[c], &cap, &ep->qp);
	if (ret)
		return perf_err(side, "qp_create", ret);
	s->neps++;
	if (side->is_server) {
		wr.wr_id = s->neps - 1;
		ret = openrdma_qp_post_recv(ep->qp, &wr, &bad);
		if (ret)
			return perf_err(side, "post_recv", ret);
	}
	*ep_out = ep;
	return 0;
}

static int ep_connect(struct perf_side *side)
{
	struct perf_scale *s = side->scale;
	struct perf_conn_info info = { .kind = PERF_CONN_SCALE,
				       .session = side->p.session };
	struct openrdma_conn_param param;
	struct scale_ep *ep;
	uint8_t pdata[64], len;
	uint32_t n;
	int ret;

	ret = ep_create(side, &ep);
	if (ret)
		return ret;
	n = s->neps - 1;
	info.remote.index = n;
	perf_conn_encode(&info, pdata, &len);
	perf_conn_param(side, &param, pdata, len);
	ret = openrdma_cm_id_create(s->ctx, s->ch, (void *)(uintptr_t)n,
				    OPENRDMA_PS_TCP, &ep->id);
	if (ret)
		return perf_err(side, "cm_id_create", ret);
	ret = openrdma_cm_connect(ep->id, ep->qp,
				  (const struct sockaddr *)&s->dst, &param);
	if (ret)
		return perf_err(side, "cm_connect", ret);
	return 0;
}

static int ep_accept(struct perf_side *side, struct openrdma_cm_event *ev)
{
	struct perf_conn_info info;
	struct openrdma_conn_param param;
	struct scale_ep *ep;
	uint8_t pdata[64], len;
	int ret;

	if (perf_conn_decode(ev, &info) || info.kind != PERF_CONN_SCALE ||
	    info.session != side->p.session) {
		openrdma_cm_reject(ev->id, NULL, 0);
		openrdma_cm_id_destroy(ev->id);
		return 0;
	}
	ret = ep_create(side, &ep);
	if (ret)
		return ret;
	ep->id = ev->id;
	perf_conn_encode(&info, pdata, &len);
	perf_conn_param(side, &param, pdata, len);
	ret = openrdma_cm_accept(ep->id, ep->qp, &param);
	if (ret)
		return perf_err(side, "cm_accept", ret);
	return 0;
}

/* Both sides: count more endpoints up (the client connects them). */
static int setup(struct perf_side *side, uint32_t count)
{
	struct perf_scale *s = side->scale;
	uint32_t target = s->established + count;
	uint32_t started = s->neps;
	struct openrdma_cm_event *ev;
	int ret;

	while (s->established < target) {
		while (!side->is_server && started < target &&
		       started - s->established < CONNECTS_IN_FLIGHT) {
			ret = ep_connect(side);
			if (ret)
				return ret;
			started++;
		}
		ret = perf_cm_wait_on(side, s->ch, -1, &ev);
		if (ret)
			return perf_err(side, "scale: connecting", ret);
		if (ev->event == OPENRDMA_CM_EVENT_CONNECT_REQUEST &&
		    side->is_server) {
			ret = ep_accept(side, ev);
		} else if (ev->event == OPENRDMA_CM_EVENT_ESTABLISHED) {
			s->established++;
		} else {
			fprintf(stderr,
				"%s: %sscale: endpoint %u of %u: %s (%s)\n",
				PERF_NAME, side->is_server ? "server: " : "",
				s->established + 1, target,
				openrdma_cm_event_str(ev->event),
				openrdma_strerror(ev->status));
			ret = -OPENRDMA_ECONNABORTED;
		}
		openrdma_cm_event_ack(ev);
		if (ret)
			return ret;
	}
	return 0;
}

/* Polls every CQ until n completions arrived; counts them. */
static int reap(struct perf_side *side, uint64_t n, uint64_t *got)
{
	struct perf_scale *s = side->scale;
	uint64_t deadline = perf_now_ns() + side->p.timeout_s * 1000000000ull;
	struct openrdma_wc wc[PERF_POLL_BATCH];
	uint32_t c;
	int k, i;

	*got = 0;
	while (*got < n) {
		bool idle = true;

		for (c = 0; c < s->ncqs; c++) {
			k = openrdma_cq_poll(s->cqs[c], PERF_POLL_BATCH, wc);
			if (k < 0)
				return perf_err(side, "cq_poll", k);
			for (i = 0; i < k; i++) {
				if (wc[i].status != OPENRDMA_WC_SUCCESS) {
					fprintf(stderr,
						"%s: %sscale: endpoint %llu: %s\n",
						PERF_NAME,
						side->is_server ? "server: " :
								  "",
						(unsigned long long)wc[i].wr_id,
						openrdma_wc_status_str(
							wc[i].status));
					return -OPENRDMA_EIO;
				}
			}
			*got += (uint64_t)k;
			idle = idle && !k;
		}
		if (idle && perf_now_ns() > deadline)
			return perf_err(side, "scale: messages",
					-OPENRDMA_ETIMEDOUT);
	}
	return 0;
}

static int send_all(struct perf_side *side)
{
	struct perf_scale *s = side->scale;
	struct openrdma_sge sge = { .addr = (uintptr_t)s->buf + 2048,
				    .length = MSG_BYTES,
				    .lkey = s->mr->lkey };
	struct openrdma_send_wr wr = { .sg_list = &sge,
				       .num_sge = 1,
				       .opcode = OPENRDMA_WR_SEND,
				       .send_flags = OPENRDMA_SEND_SIGNALED };
	struct openrdma_send_wr *bad;
	uint64_t got;
	uint32_t i, batch;
	int ret;

	/* In batches that the CQs can hold. */
	for (i = 0; i < s->neps; i += batch) {
		uint32_t j;

		batch = s->neps - i < s->per_cq ? s->neps - i : s->per_cq;
		for (j = i; j < i + batch; j++) {
			wr.wr_id = j;
			ret = openrdma_qp_post_send(s->eps[j].qp, &wr, &bad);
			if (ret)
				return perf_err(side, "scale: post_send", ret);
		}
		ret = reap(side, batch, &got);
		if (ret)
			return ret;
	}
	return 0;
}

/* Disconnects every endpoint, waits for each to report it, destroys. */
static int teardown(struct perf_side *side)
{
	struct perf_scale *s = side->scale;
	struct openrdma_cm_event *ev;
	uint32_t i, left = 0;
	int ret = 0;

	if (!side->is_server)
		for (i = 0; i < s->neps; i++)
			if (s->eps[i].id &&
			    !openrdma_cm_disconnect(s->eps[i].id, NULL, 0))
				left++;
	if (side->is_server)
		left = s->established;
	while (left) {
		ret = perf_cm_wait_on(side, s->ch, -1, &ev);
		if (ret) {
			perf_err(side, "scale: disconnecting", ret);
			break;
		}
		if (ev->event == OPENRDMA_CM_EVENT_DISCONNECTED)
			left--;
		openrdma_cm_event_ack(ev);
	}
	perf_scale_close(side);
	return ret;
}

void perf_scale_close(struct perf_side *side)
{
	struct perf_scale *s = side->scale;
	uint32_t i;

	if (!s)
		return;
	for (i = 0; i < s->neps; i++) {
		if (s->eps[i].id)
			openrdma_cm_id_destroy(s->eps[i].id);
		if (s->eps[i].qp)
			openrdma_qp_destroy(s->eps[i].qp);
	}
	if (s->listen_id)
		openrdma_cm_id_destroy(s->listen_id);
	for (i = 0; i < s->ncqs; i++)
		openrdma_cq_destroy(s->cqs[i]);
	if (s->mr)
		openrdma_mr_dereg(s->mr);
	if (s->ch)
		openrdma_cm_channel_destroy(s->ch);
	if (s->pd)
		openrdma_pd_dealloc(s->pd);
	if (s->ctx)
		openrdma_context_close(s->ctx);
	free(s->buf);
	free(s->cqs);
	free(s->eps);
	free(s);
	side->scale = NULL;
}

/*
 * How many more endpoints this side can open, and what bounds it: the
 * interface's max_qp or the descriptors (fds_per_ep of them each).
 */
static uint32_t capacity(struct perf_side *side, double fds_per_ep,
			 const char **why)
{
	struct perf_scale *s = side->scale;
	uint64_t cap = s->max_qp > s->neps ? s->max_qp - s->neps : 0;
	unsigned int limit = perf_fd_limit_raise(), now = perf_fd_count();

	*why = "max_qp";
	if (fds_per_ep > 0) {
		uint64_t free_fds =
			limit > now + FD_RESERVE ? limit - now - FD_RESERVE : 0;
		uint64_t by_fd = (uint64_t)(free_fds / fds_per_ep);

		if (by_fd < cap) {
			cap = by_fd;
			*why = "descriptors";
		}
	}
	return cap > UINT32_MAX ? UINT32_MAX : (uint32_t)cap;
}

int perf_scale_server(struct perf_side *side, const struct perf_msg *msg)
{
	struct perf_msg ready = { .type = PERF_MSG_READY };
	struct perf_msg res = { .type = PERF_MSG_RESULT };
	struct perf_scale *s;
	uint64_t t0 = perf_now_ns(), got = 0;
	const char *why;
	int ret;

	ret = scale_init(side);
	if (ret)
		return ret;
	s = side->scale;
	/* The client connects to the scale context's own listener. */
	ready.v[V_PORT] = addr_port(&s->addr);
	ret = perf_ctl_send(side, &ready);
	if (ret)
		return ret;
	switch (msg->v[V_PHASE]) {
	case SCALE_SETUP:
		ret = setup(side, (uint32_t)msg->v[V_COUNT]);
		break;
	case SCALE_CHECK:
		ret = reap(side, s->neps, &got);
		break;
	case SCALE_TEARDOWN:
		res.v[PERF_V_EPS] = s->neps;
		ret = teardown(side);
		break;
	default:
		ret = perf_err(side, "scale phase", -OPENRDMA_EPROTO);
		break;
	}
	if (ret)
		return ret;
	s = side->scale;
	if (s) {
		res.v[PERF_V_EPS] = s->neps;
		res.v[PERF_V_FDS] = perf_fd_count() - s->fds0;
		res.v[PERF_V_RSS] = perf_rss_bytes() - s->rss0;
		res.v[PERF_V_CAP] = capacity(
			side, s->neps ? (double)res.v[PERF_V_FDS] / s->neps : 0,
			&why);
		res.v[PERF_V_CAP_WHY] = !strcmp(why, "descriptors");
	}
	res.v[PERF_V_COUNT] = got;
	res.v[PERF_V_WALL_NS] = perf_now_ns() - t0;
	return perf_ctl_send(side, &res);
}

/* One phase, driven by the client; res gets the server's RESULT. */
static int phase(struct perf_side *side, enum scale_phase ph, uint32_t count,
		 uint64_t *ns, struct perf_msg *res)
{
	struct perf_scale *s = side->scale;
	struct perf_msg msg = { .type = PERF_MSG_SCALE };
	uint64_t t0;
	int ret;

	msg.v[V_PHASE] = ph;
	msg.v[V_COUNT] = count;
	ret = perf_ctl_send(side, &msg);
	if (!ret)
		ret = perf_ctl_expect(side, PERF_MSG_READY, &msg);
	if (ret)
		return ret;
	perf_addr_set_port(&s->dst, (unsigned int)msg.v[V_PORT]);
	t0 = perf_now_ns();
	switch (ph) {
	case SCALE_SETUP:
		ret = setup(side, count);
		break;
	case SCALE_CHECK:
		ret = send_all(side);
		break;
	case SCALE_TEARDOWN:
		ret = teardown(side);
		break;
	}
	*ns = perf_now_ns() - t0;
	if (ret)
		return ret;
	return perf_ctl_expect(side, PERF_MSG_RESULT, res);
}

static double per_ep(uint64_t v, uint32_t n)
{
	return n ? (double)v / n : 0;
}

/* Picks the endpoint count; *why names the limit that set it. */
static uint32_t choose(struct perf_side *side, const struct perf_msg *probe,
		       double fds_client, const char **why)
{
	uint32_t n = side->p.scale_eps ? side->p.scale_eps : DEFAULT_MAX_EPS;
	uint32_t have = side->scale->neps, cap_c, cap_s;
	double fds_server = per_ep(probe->v[PERF_V_FDS], have);
	const char *what;

	*why = side->p.scale_eps ? "--endpoints" :
				   "the default cap (--endpoints raises it)";
	/* In one process both sides draw on the same descriptors. */
	cap_c = capacity(side,
			 side->shares_process ? fds_client + fds_server :
						fds_client,
			 &what);
	cap_s = (uint32_t)probe->v[PERF_V_CAP];
	if (have + cap_c < n) {
		n = have + cap_c;
		*why = !strcmp(what, "max_qp") ? "the client's max_qp" :
						 "the client's descriptors";
	}
	if (!side->shares_process && have + cap_s < n) {
		n = have + cap_s;
		*why = probe->v[PERF_V_CAP_WHY] ? "the server's descriptors" :
						  "the server's max_qp";
	}
	return n;
}

int perf_scale_client(struct perf_side *side, struct perf_out *out,
		      const struct sockaddr_storage *dst)
{
	struct perf_scale_result r = { 0 };
	struct perf_msg res;
	uint32_t probe, total;
	uint64_t ns_probe, ns_bulk = 0, ns_down, rss_c, fds_c;
	double fds_probe;
	int ret;

	ret = scale_init(side);
	if (ret)
		return ret;
	side->scale->dst = *dst;
	probe = side->p.scale_eps && side->p.scale_eps < PROBE_EPS ?
			side->p.scale_eps :
			PROBE_EPS;
	ret = phase(side, SCALE_SETUP, probe, &ns_probe, &res);
	if (ret)
		return ret;
	fds_probe = per_ep(perf_fd_count() - side->scale->fds0, probe);
	total = choose(side, &res, fds_probe, &r.limited_by);
	if (total > probe) {
		ret = phase(side, SCALE_SETUP, total - probe, &ns_bulk, &res);
		if (ret)
			return ret;
	}
	r.eps = side->scale->neps;
	rss_c = perf_rss_bytes() - side->scale->rss0;
	fds_c = perf_fd_count() - side->scale->fds0;
	r.rss_per_ep_client = per_ep(rss_c, r.eps);
	r.rss_per_ep_server = per_ep(res.v[PERF_V_RSS], r.eps);
	r.fds_per_ep_client = per_ep(fds_c, r.eps);
	r.fds_per_ep_server = per_ep(res.v[PERF_V_FDS], r.eps);
	/* One process: its growth is both sides' together. */
	r.one_process = side->shares_process;
	r.setup_s = (double)(ns_probe + ns_bulk) / 1e9;
	r.conn_per_s = ns_bulk ?
			       (total - probe) * 1e9 / (double)ns_bulk :
			       probe * 1e9 / (double)(ns_probe ? ns_probe : 1);
	ret = phase(side, SCALE_CHECK, 0, &ns_bulk, &res);
	if (ret)
		return ret;
	r.messages = res.v[PERF_V_COUNT];
	ret = phase(side, SCALE_TEARDOWN, 0, &ns_down, &res);
	if (ret)
		return ret;
	r.teardown_per_s = r.eps * 1e9 / (double)(ns_down ? ns_down : 1);
	if (r.messages != r.eps) {
		fprintf(stderr, "%s: scale: %llu of %u messages arrived\n",
			PERF_NAME, (unsigned long long)r.messages, r.eps);
		ret = -OPENRDMA_EIO;
	}
	perf_out_scale(out, &r);
	return ret;
}
