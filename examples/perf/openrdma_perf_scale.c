/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The scale test: as many connected RC endpoints (a QP and its CM id) on
 * one interface as the descriptor limit and --endpoints allow, or as the
 * interface accepts.  Software transports count max_qp per context, so
 * the endpoints fill contexts of their own, max_qp each (the session's
 * QPs do not count); a hardware device's max_qp bounds the whole device,
 * so it gets one context.  Each server context listens on its own port.
 *
 * The client drives four phases, each a SCALE message that the server
 * answers with READY (its listeners' ports), then its part, then RESULT:
 *
 *   probe     a few endpoints, to learn what one costs in descriptors;
 *   bulk      the rest, timed: the connection set-up rate;
 *   check     one message on every endpoint, counted by the server;
 *   teardown  disconnect and destroy all, timed.
 *
 * A client that meets a limit on the way (the interface refuses a QP or a
 * connection) stops there, lets the connections in flight finish and
 * tells the server how far it got (STOP).  Memory per endpoint is the
 * growth of the resident set over the probe and bulk phases divided by
 * the endpoints, on each side.
 */
#include "config.h"

#include <arpa/inet.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "examples/perf/openrdma_perf.h"

#define PROBE_EPS 64u
#define DEFAULT_MAX_EPS 65536u /* when descriptors do not bound it */
#define MAX_CTXS 16u
#define FD_RESERVE 64u
#define EPS_PER_CQ 1024u
#define CONNECTS_IN_FLIGHT 256u
#define MSG_BYTES 8
/* The server looks for a STOP this often while it waits for requests. */
#define STOP_CHECK_MS 100

enum scale_phase {
	SCALE_SETUP = 1,
	SCALE_CHECK,
	SCALE_TEARDOWN,
	SCALE_STOP, /* during SETUP: the client reached a limit at 'count' */
};

/* Values of the SCALE message and of the server's READY. */
enum {
	V_PHASE = 0,
	V_COUNT,
	V_PER_CTX, /* endpoints per context */
	V_NPORTS,
	V_PORT0, /* ... V_PORT0 + MAX_CTXS - 1 */
};

_Static_assert(V_PORT0 + MAX_CTXS <= PERF_MSG_VALUES, "READY holds every port");

struct scale_ep {
	struct openrdma_qp *qp;
	struct openrdma_cm_id *id; /* NULL once its connection failed */
};

struct scale_ctx {
	struct openrdma_context *ctx;
	struct openrdma_pd *pd;
	struct openrdma_cm_channel *ch;
	struct openrdma_cm_id *listen_id; /* server */
	unsigned int port; /* server: its listener's; client: the peer's */
	struct openrdma_mr *mr;
	struct openrdma_cq **cqs;
	uint32_t ncqs;
	uint32_t neps;
};

struct perf_scale {
	struct scale_ctx ctxs[MAX_CTXS];
	uint32_t nctxs;
	uint32_t max_ctxs;
	uint32_t per_ctx;
	uint32_t per_cq;
	struct sockaddr_storage dst; /* client: the server's address */
	struct scale_ep *eps;
	uint32_t neps;
	uint32_t cap; /* of eps[] */
	uint32_t established;
	uint32_t lost; /* client: endpoints whose connection failed */
	int limit; /* client: the error that ended the set-up early */
	const char *limit_what;
	uint32_t target; /* endpoints to wait for */
	uint8_t *buf; /* every endpoint's messages: their bytes do not matter */
	uint64_t rss0;
	unsigned int fds0;
};

static unsigned int addr_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return 0;
}

/* Errors that mean "no more of these here", not a broken run. */
static bool is_limit(int ret)
{
	return ret == -OPENRDMA_EADDRINUSE || ret == -OPENRDMA_ENOSPC ||
	       ret == -OPENRDMA_ENOMEM || ret == -OPENRDMA_EAGAIN ||
	       ret == -OPENRDMA_ENOBUFS || ret == -EMFILE || ret == -ENFILE ||
	       ret == -OPENRDMA_ECONNREFUSED || ret == -OPENRDMA_EREJECTED;
}

/* The next context: its PD, CM channel, MR and (server) listener. */
static int ctx_add(struct perf_side *side)
{
	struct perf_scale *s = side->scale;
	struct scale_ctx *c = &s->ctxs[s->nctxs];
	struct sockaddr_storage addr;
	int ret;

	if (s->nctxs == s->max_ctxs)
		return -OPENRDMA_ENOSPC;
	ret = perf_ctx_open(side, side->ctx->device, &c->ctx, &c->pd, &c->ch);
	if (ret)
		return ret;
	s->nctxs++;
	ret = openrdma_mr_reg(c->pd, s->buf, 4096, OPENRDMA_ACCESS_LOCAL_WRITE,
			      &c->mr);
	if (ret)
		return perf_err(side, "mr_reg", ret);
	if (side->is_server) {
		ret = perf_listen_on(side, c->ctx, c->ch, 0, &c->listen_id,
				     &addr);
		if (ret)
			return ret;
		c->port = addr_port(&addr);
	}
	return 0;
}

static int scale_init(struct perf_side *side, uint32_t per_ctx)
{
	struct perf_scale *s;
	int ret;

	if (side->scale)
		return 0;
	s = calloc(1, sizeof(*s));
	if (!s)
		return perf_err(side, "memory", -OPENRDMA_ENOMEM);
	side->scale = s;
	s->per_ctx = per_ctx ? per_ctx : 1;
	s->max_ctxs = side->attr.node_transport == OPENRDMA_NODE_SOFTWARE ?
			      MAX_CTXS :
			      1;
	s->per_cq = EPS_PER_CQ;
	if (side->attr.max_cqe > 0 &&
	    (uint32_t)side->attr.max_cqe < 2 * s->per_cq + 16)
		s->per_cq = side->attr.max_cqe > 32 ?
				    ((uint32_t)side->attr.max_cqe - 16) / 2 :
				    1;
	s->buf = aligned_alloc(4096, 4096);
	if (!s->buf)
		return perf_err(side, "memory", -OPENRDMA_ENOMEM);
	memset(s->buf, 0, 4096);
	ret = ctx_add(side);
	if (ret)
		return perf_err(side, "scale: context", ret);
	/* The baseline: everything but the endpoints exists. */
	s->rss0 = perf_rss_bytes();
	s->fds0 = perf_fd_count();
	return 0;
}

/* A QP for the next endpoint, in INIT; the server's gets its receive. */
static int ep_create(struct perf_side *side, struct scale_ctx *c,
		     struct scale_ep **ep_out)
{
	struct perf_scale *s = side->scale;
	struct openrdma_qp_cap cap = { .max_send_wr = 2,
				       .max_recv_wr = 1,
				       .max_send_sge = 1,
				       .max_recv_sge = 1 };
	struct openrdma_sge sge = { .addr = (uintptr_t)s->buf,
				    .length = 64,
				    .lkey = c->mr->lkey };
	struct openrdma_recv_wr wr = { .sg_list = &sge, .num_sge = 1 };
	uint32_t k = c->neps / s->per_cq;
	struct openrdma_recv_wr *bad;
	struct scale_ep *ep, *eps;
	int ret;

	if (s->neps == s->cap) {
		uint32_t n = s->cap ? 2 * s->cap : 1024;

		eps = realloc(s->eps, n * sizeof(*eps));
		if (!eps)
			return -OPENRDMA_ENOMEM;
		s->eps = eps;
		s->cap = n;
	}
	if (k == c->ncqs) {
		struct openrdma_cq **cqs =
			realloc(c->cqs, (k + 1) * sizeof(*cqs));

		if (!cqs)
			return -OPENRDMA_ENOMEM;
		c->cqs = cqs;
		s->limit_what = "cq_create";
		ret = openrdma_cq_create(c->ctx, (int)(2 * s->per_cq + 16),
					 NULL, NULL, 0, &c->cqs[k]);
		if (ret)
			return ret;
		c->ncqs++;
	}
	ep = &s->eps[s->neps];
	memset(ep, 0, sizeof(*ep));
	s->limit_what = "qp_create";
	ret = perf_qp_open(side, c->pd, c->cqs[k], c->cqs[k], &cap, &ep->qp);
	if (ret)
		return ret;
	s->neps++;
	c->neps++;
	if (side->is_server) {
		wr.wr_id = s->neps - 1;
		ret = openrdma_qp_post_recv(ep->qp, &wr, &bad);
		if (ret)
			return perf_err(side, "post_recv", ret);
	}
	*ep_out = ep;
	return 0;
}

static void ep_destroy(struct scale_ep *ep)
{
	if (ep->id)
		openrdma_cm_id_destroy(ep->id);
	if (ep->qp)
		openrdma_qp_destroy(ep->qp);
	ep->id = NULL;
	ep->qp = NULL;
}

/* Client: endpoint n goes to context n / per_ctx, on both sides. */
static int ep_connect(struct perf_side *side)
{
	struct perf_scale *s = side->scale;
	struct perf_conn_info info = { .kind = PERF_CONN_SCALE,
				       .session = side->p.session,
				       .remote.index = s->neps };
	uint32_t k = s->neps / s->per_ctx;
	struct openrdma_conn_param param;
	struct sockaddr_storage dst;
	struct scale_ep *ep;
	uint8_t pdata[64], len;
	int ret;

	if (k == s->nctxs) {
		s->limit_what = "a new context";
		ret = ctx_add(side);
		if (ret)
			return ret;
	}
	ret = ep_create(side, &s->ctxs[k], &ep);
	if (ret)
		return ret;
	perf_conn_encode(&info, pdata, &len);
	perf_conn_param(side, &param, pdata, len);
	ret = openrdma_cm_id_create(s->ctxs[k].ctx, s->ctxs[k].ch, NULL,
				    OPENRDMA_PS_TCP, &ep->id);
	if (ret) {
		s->limit_what = "cm_id_create";
		goto err_undo;
	}
	dst = s->dst;
	perf_addr_set_port(&dst, s->ctxs[k].port);
	ret = openrdma_cm_connect(ep->id, ep->qp, (const struct sockaddr *)&dst,
				  &param);
	if (ret) {
		s->limit_what = "cm_connect";
		goto err_undo;
	}
	return 0;

err_undo:
	/* The last endpoint: taking it back leaves no hole. */
	ep_destroy(ep);
	s->neps--;
	s->ctxs[k].neps--;
	return ret;
}

/* Server: a request accepted in the context of the listener it came to. */
static int ep_accept(struct perf_side *side, struct openrdma_cm_event *ev)
{
	struct perf_scale *s = side->scale;
	struct openrdma_conn_param param;
	struct perf_conn_info info;
	struct scale_ctx *c = NULL;
	struct scale_ep *ep;
	uint8_t pdata[64], len;
	uint32_t k;
	int ret;

	for (k = 0; k < s->nctxs; k++)
		if (s->ctxs[k].listen_id == ev->listen_id)
			c = &s->ctxs[k];
	if (!c || perf_conn_decode(ev, &info) || info.kind != PERF_CONN_SCALE ||
	    info.session != side->p.session) {
		openrdma_cm_reject(ev->id, NULL, 0);
		openrdma_cm_id_destroy(ev->id);
		return 0;
	}
	ret = ep_create(side, c, &ep);
	if (ret) {
		/* The client learns it from the rejection, and stops. */
		openrdma_cm_reject(ev->id, NULL, 0);
		openrdma_cm_id_destroy(ev->id);
		return is_limit(ret) ? 0 : perf_err(side, s->limit_what, ret);
	}
	ep->id = ev->id;
	perf_conn_encode(&info, pdata, &len);
	perf_conn_param(side, &param, pdata, len);
	ret = openrdma_cm_accept(ep->id, ep->qp, &param);
	if (ret)
		return perf_err(side, "cm_accept", ret);
	return 0;
}

/* Server: a STOP from the client lowers the target of the set-up. */
static int check_stop(struct perf_side *side)
{
	struct perf_scale *s = side->scale;
	struct perf_msg msg;
	int ret;

	ret = perf_ctl_recv(side, &msg, -1, 0);
	if (ret == -OPENRDMA_ETIMEDOUT)
		return 0;
	if (ret)
		return ret;
	if (msg.type != PERF_MSG_SCALE || msg.v[V_PHASE] != SCALE_STOP ||
	    msg.v[V_COUNT] > s->target)
		return perf_err(side, "scale: control message",
				-OPENRDMA_EPROTO);
	s->target = (uint32_t)msg.v[V_COUNT];
	return 0;
}

/*
 * The next CM event of any context, within the session's timeout.  The
 * server also looks at the control channel every STOP_CHECK_MS, and
 * returns 1 without an event when a STOP changed its target.
 */
static int cm_wait(struct perf_side *side, struct openrdma_cm_event **ev_out)
{
	struct perf_scale *s = side->scale;
	uint64_t deadline = perf_now_ns() + side->p.timeout_s * 1000000000ull;
	uint32_t k, target = s->target;
	struct pollfd pfd[MAX_CTXS];
	int ret, left;

	for (;;) {
		for (k = 0; k < s->nctxs; k++) {
			ret = openrdma_cm_event_get(s->ctxs[k].ch, ev_out);
			if (ret != -OPENRDMA_EAGAIN)
				return ret;
			pfd[k] = (struct pollfd){ .fd = s->ctxs[k].ch->fd,
						  .events = POLLIN };
		}
		if (side->is_server) {
			ret = check_stop(side);
			if (ret)
				return ret;
			if (s->target != target)
				return 1;
		}
		left = (int)(((int64_t)deadline - (int64_t)perf_now_ns()) /
			     1000000);
		if (left <= 0)
			return -OPENRDMA_ETIMEDOUT;
		if (side->is_server && left > STOP_CHECK_MS)
			left = STOP_CHECK_MS;
		if (poll(pfd, s->nctxs, left) < 0 && errno != EINTR)
			return -errno;
	}
}

/* Client: a connection that failed ends the set-up where it is. */
static void ep_lost(struct perf_side *side, struct openrdma_cm_event *ev)
{
	struct perf_scale *s = side->scale;
	uint32_t i;

	for (i = 0; i < s->neps; i++) {
		if (s->eps[i].id == ev->id) {
			/* Destroyed after the ack: the id waits for it. */
			s->eps[i].id = NULL;
			s->lost++;
			break;
		}
	}
	if (!s->limit) {
		s->limit = ev->status ? ev->status : -OPENRDMA_ECONNREFUSED;
		s->limit_what = openrdma_cm_event_str(ev->event);
	}
}

/* One CM event of the set-up; *dead is an id to destroy after the ack. */
static int setup_event(struct perf_side *side, struct openrdma_cm_event *ev,
		       struct openrdma_cm_id **dead)
{
	struct perf_scale *s = side->scale;

	if (ev->event == OPENRDMA_CM_EVENT_CONNECT_REQUEST && side->is_server)
		return ep_accept(side, ev);
	if (ev->event == OPENRDMA_CM_EVENT_ESTABLISHED) {
		s->established++;
		return 0;
	}
	if (!side->is_server &&
	    (ev->event == OPENRDMA_CM_EVENT_REJECTED ||
	     ev->event == OPENRDMA_CM_EVENT_UNREACHABLE ||
	     ev->event == OPENRDMA_CM_EVENT_CONNECT_ERROR)) {
		ep_lost(side, ev);
		*dead = ev->id;
		return 0;
	}
	fprintf(stderr, "%s: %sscale: endpoint %u of %u: %s (%s)\n", PERF_NAME,
		side->is_server ? "server: " : "", s->established + 1,
		s->target, openrdma_cm_event_str(ev->event),
		openrdma_strerror(ev->status));
	return -OPENRDMA_ECONNABORTED;
}

/*
 * Both sides: count more endpoints up.  The client connects them, up to
 * CONNECTS_IN_FLIGHT at a time; when it meets a limit it stops, lets the
 * connections in flight finish and tells the server how far it got.
 */
static int setup(struct perf_side *side, uint32_t count)
{
	struct perf_msg stop = { .type = PERF_MSG_SCALE };
	struct perf_scale *s = side->scale;
	struct openrdma_cm_event *ev;
	struct openrdma_cm_id *dead;
	int ret;

	s->target = s->established + count;
	while (s->established < s->target) {
		while (!side->is_server && !s->limit && s->neps < s->target &&
		       s->neps - s->established - s->lost <
			       CONNECTS_IN_FLIGHT) {
			ret = ep_connect(side);
			if (ret && !is_limit(ret))
				return perf_err(side, s->limit_what, ret);
			if (ret)
				s->limit = ret;
		}
		/* Stopped, and nothing in flight any more. */
		if (!side->is_server && s->limit &&
		    s->established + s->lost == s->neps)
			break;
		ret = cm_wait(side, &ev);
		if (ret == 1)
			continue;
		if (ret)
			return perf_err(side, "scale: connecting", ret);
		dead = NULL;
		ret = setup_event(side, ev, &dead);
		openrdma_cm_event_ack(ev);
		if (dead)
			openrdma_cm_id_destroy(dead);
		if (ret)
			return ret;
	}
	if (side->is_server || !s->limit)
		return 0;
	stop.v[V_PHASE] = SCALE_STOP;
	stop.v[V_COUNT] = s->established;
	return perf_ctl_send(side, &stop);
}

/* Polls every CQ until n completions arrived. */
static int reap(struct perf_side *side, uint64_t n, uint64_t *got)
{
	struct perf_scale *s = side->scale;
	uint64_t deadline = perf_now_ns() + side->p.timeout_s * 1000000000ull;
	struct openrdma_wc wc[PERF_POLL_BATCH];
	uint32_t k, q;
	bool idle;
	int m, i;

	*got = 0;
	while (*got < n) {
		idle = true;
		for (k = 0; k < s->nctxs; k++) {
			for (q = 0; q < s->ctxs[k].ncqs; q++) {
				m = openrdma_cq_poll(s->ctxs[k].cqs[q],
						     PERF_POLL_BATCH, wc);
				if (m < 0)
					return perf_err(side, "cq_poll", m);
				for (i = 0; i < m; i++)
					if (wc[i].status != OPENRDMA_WC_SUCCESS)
						goto err_wc;
				*got += (uint64_t)m;
				idle = idle && !m;
			}
		}
		if (idle && perf_now_ns() > deadline)
			return perf_err(side, "scale: messages",
					-OPENRDMA_ETIMEDOUT);
	}
	return 0;

err_wc:
	fprintf(stderr, "%s: %sscale: endpoint %llu: %s\n", PERF_NAME,
		side->is_server ? "server: " : "",
		(unsigned long long)wc[i].wr_id,
		openrdma_wc_status_str(wc[i].status));
	return -OPENRDMA_EIO;
}

static int send_all(struct perf_side *side)
{
	struct perf_scale *s = side->scale;
	struct openrdma_sge sge = { .addr = (uintptr_t)s->buf + 2048,
				    .length = MSG_BYTES };
	struct openrdma_send_wr wr = { .sg_list = &sge,
				       .num_sge = 1,
				       .opcode = OPENRDMA_WR_SEND,
				       .send_flags = OPENRDMA_SEND_SIGNALED };
	struct openrdma_send_wr *bad;
	uint32_t i, j, batch, posted;
	uint64_t got;
	int ret;

	/* In batches that any one CQ can hold. */
	for (i = 0; i < s->neps; i += batch) {
		batch = s->neps - i < s->per_cq ? s->neps - i : s->per_cq;
		posted = 0;
		for (j = i; j < i + batch; j++) {
			if (!s->eps[j].id)
				continue; /* its connection failed */
			wr.wr_id = j;
			sge.lkey = s->ctxs[j / s->per_ctx].mr->lkey;
			ret = openrdma_qp_post_send(s->eps[j].qp, &wr, &bad);
			if (ret)
				return perf_err(side, "scale: post_send", ret);
			posted++;
		}
		ret = reap(side, posted, &got);
		if (ret)
			return ret;
	}
	return 0;
}

void perf_scale_close(struct perf_side *side)
{
	struct perf_scale *s = side->scale;
	uint32_t i, q;

	if (!s)
		return;
	for (i = 0; i < s->neps; i++)
		ep_destroy(&s->eps[i]);
	for (i = s->nctxs; i-- > 0;) {
		struct scale_ctx *c = &s->ctxs[i];

		if (c->listen_id)
			openrdma_cm_id_destroy(c->listen_id);
		for (q = 0; q < c->ncqs; q++)
			openrdma_cq_destroy(c->cqs[q]);
		free(c->cqs);
		if (c->mr)
			openrdma_mr_dereg(c->mr);
		openrdma_cm_channel_destroy(c->ch);
		openrdma_pd_dealloc(c->pd);
		openrdma_context_close(c->ctx);
	}
	free(s->buf);
	free(s->eps);
	free(s);
	side->scale = NULL;
}

/* Disconnects every endpoint, waits for each to report it, destroys. */
static int teardown(struct perf_side *side)
{
	struct perf_scale *s = side->scale;
	struct openrdma_cm_event *ev;
	uint32_t i, left = s->established;
	int ret = 0;

	/* The client disconnects; every endpoint of both sides reports it. */
	if (!side->is_server)
		for (i = 0; i < s->neps; i++)
			if (s->eps[i].id)
				openrdma_cm_disconnect(s->eps[i].id, NULL, 0);
	while (left) {
		ret = cm_wait(side, &ev);
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

/*
 * How many more endpoints this side can open, and what bounds it: its
 * contexts (max_ctxs of per_ctx endpoints) or the descriptors, of which
 * each endpoint takes fds_per_ep.
 */
static uint32_t capacity(struct perf_side *side, double fds_per_ep,
			 bool *by_fds)
{
	struct perf_scale *s = side->scale;
	uint64_t cap = (uint64_t)s->max_ctxs * s->per_ctx - s->neps;
	unsigned int limit = perf_fd_limit_raise(), now = perf_fd_count();

	*by_fds = false;
	if (fds_per_ep > 0) {
		uint64_t free_fds =
			limit > now + FD_RESERVE ? limit - now - FD_RESERVE : 0;
		uint64_t by_fd = (uint64_t)(free_fds / fds_per_ep);

		if (by_fd < cap) {
			cap = by_fd;
			*by_fds = true;
		}
	}
	return cap > UINT32_MAX ? UINT32_MAX : (uint32_t)cap;
}

/* Server: contexts (and listeners) for 'more' endpoints on top. */
static int ctx_reserve(struct perf_side *side, uint32_t more)
{
	struct perf_scale *s = side->scale;
	uint64_t want = (uint64_t)s->neps + more;
	int ret;

	while ((uint64_t)s->nctxs * s->per_ctx < want) {
		ret = ctx_add(side);
		if (ret)
			return perf_err(side, "scale: context", ret);
	}
	return 0;
}

int perf_scale_server(struct perf_side *side, const struct perf_msg *msg)
{
	struct perf_msg ready = { .type = PERF_MSG_READY };
	struct perf_msg res = { .type = PERF_MSG_RESULT };
	uint64_t t0 = perf_now_ns(), got = 0;
	struct perf_scale *s;
	bool by_fds;
	uint32_t k;
	int ret;

	ret = scale_init(side, (uint32_t)msg->v[V_PER_CTX]);
	if (!ret && msg->v[V_PHASE] == SCALE_SETUP)
		ret = ctx_reserve(side, (uint32_t)msg->v[V_COUNT]);
	if (ret)
		return ret;
	s = side->scale;
	ready.v[V_NPORTS] = s->nctxs;
	for (k = 0; k < s->nctxs; k++)
		ready.v[V_PORT0 + k] = s->ctxs[k].port;
	ret = perf_ctl_send(side, &ready);
	if (ret)
		return ret;
	switch (msg->v[V_PHASE]) {
	case SCALE_SETUP:
		ret = setup(side, (uint32_t)msg->v[V_COUNT]);
		break;
	case SCALE_CHECK:
		ret = reap(side, s->established, &got);
		break;
	case SCALE_TEARDOWN:
		ret = teardown(side);
		break;
	default:
		ret = perf_err(side, "scale phase", -OPENRDMA_EPROTO);
		break;
	}
	if (ret)
		return ret;
	s = side->scale; /* teardown freed it */
	if (s) {
		res.v[PERF_V_EPS] = s->established;
		res.v[PERF_V_FDS] = perf_fd_count() - s->fds0;
		res.v[PERF_V_RSS] = perf_rss_bytes() - s->rss0;
		res.v[PERF_V_CAP] = capacity(
			side, s->neps ? (double)res.v[PERF_V_FDS] / s->neps : 0,
			&by_fds);
		res.v[PERF_V_CAP_WHY] = by_fds;
	}
	res.v[PERF_V_COUNT] = got;
	res.v[PERF_V_WALL_NS] = perf_now_ns() - t0;
	return perf_ctl_send(side, &res);
}

/* One phase, driven by the client; res gets the server's RESULT. */
static int phase(struct perf_side *side, enum scale_phase ph, uint32_t count,
		 uint64_t *ns, struct perf_msg *res)
{
	struct perf_msg msg = { .type = PERF_MSG_SCALE };
	struct perf_scale *s = side->scale;
	uint64_t t0;
	uint32_t k;
	int ret;

	msg.v[V_PHASE] = ph;
	msg.v[V_COUNT] = count;
	msg.v[V_PER_CTX] = s->per_ctx;
	ret = perf_ctl_send(side, &msg);
	if (!ret)
		ret = perf_ctl_expect(side, PERF_MSG_READY, &msg);
	if (ret)
		return ret;
	if (msg.v[V_NPORTS] > MAX_CTXS)
		return perf_err(side, "scale: the server's ports",
				-OPENRDMA_EPROTO);
	for (k = 0; k < msg.v[V_NPORTS]; k++)
		s->ctxs[k].port = (unsigned int)msg.v[V_PORT0 + k];
	t0 = perf_now_ns();
	if (ph == SCALE_SETUP)
		ret = setup(side, count);
	else if (ph == SCALE_CHECK)
		ret = send_all(side);
	else
		ret = teardown(side);
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
	bool by_fds;

	*why = side->p.scale_eps ? "--endpoints" :
				   "the default cap (--endpoints raises it)";
	/* In one process both sides draw on the same descriptors. */
	cap_c = capacity(side,
			 side->shares_process ? fds_client + fds_server :
						fds_client,
			 &by_fds);
	cap_s = (uint32_t)probe->v[PERF_V_CAP];
	if (have + cap_c < n) {
		n = have + cap_c;
		*why = by_fds ? "the client's descriptors" :
		       side->scale->max_ctxs > 1 ?
				"the client's contexts (16 x max_qp)" :
				"the client's max_qp";
	}
	if (!side->shares_process && have + cap_s < n) {
		n = have + cap_s;
		*why = probe->v[PERF_V_CAP_WHY] ? "the server's descriptors" :
						  "the server's QP limits";
	}
	return n;
}

int perf_scale_client(struct perf_side *side, struct perf_out *out,
		      const struct sockaddr_storage *dst)
{
	uint32_t max_qp = (uint32_t)side->attr.max_qp, probe, total;
	uint64_t ns_probe, ns_bulk = 0, ns_down, ns_check;
	struct perf_scale_result r = { 0 };
	struct perf_scale *s;
	struct perf_msg res;
	int ret;

	/* Both sides fill their contexts alike: the smaller max_qp rules. */
	if (side->peer_max_qp && side->peer_max_qp < max_qp)
		max_qp = side->peer_max_qp;
	ret = scale_init(side, max_qp);
	if (ret)
		return ret;
	s = side->scale;
	s->dst = *dst;
	probe = side->p.scale_eps && side->p.scale_eps < PROBE_EPS ?
			side->p.scale_eps :
			PROBE_EPS;
	ret = phase(side, SCALE_SETUP, probe, &ns_probe, &res);
	if (ret)
		return ret;
	total = choose(side, &res, per_ep(perf_fd_count() - s->fds0, probe),
		       &r.limited_by);
	if (!s->limit && total > probe) {
		ret = phase(side, SCALE_SETUP, total - probe, &ns_bulk, &res);
		if (ret)
			return ret;
	}
	r.eps = s->established;
	if (s->limit) {
		snprintf(r.limit_text, sizeof(r.limit_text), "%s: %s",
			 s->limit_what, openrdma_strerror(s->limit));
		r.limited_by = r.limit_text;
	}
	r.rss_per_ep_client = per_ep(perf_rss_bytes() - s->rss0, r.eps);
	r.fds_per_ep_client = per_ep(perf_fd_count() - s->fds0, r.eps);
	r.rss_per_ep_server = per_ep(res.v[PERF_V_RSS], r.eps);
	r.fds_per_ep_server = per_ep(res.v[PERF_V_FDS], r.eps);
	/* One process: its growth is both sides' together. */
	r.one_process = side->shares_process;
	r.setup_s = (double)(ns_probe + ns_bulk) / 1e9;
	r.conn_per_s = ns_bulk ?
			       (r.eps - probe) * 1e9 / (double)ns_bulk :
			       r.eps * 1e9 / (double)(ns_probe ? ns_probe : 1);
	ret = phase(side, SCALE_CHECK, 0, &ns_check, &res);
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
