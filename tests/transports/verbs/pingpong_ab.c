/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * pingpong_ab: it_pingpong's send ping-pong through IT-API next to the
 * same ping-pong on raw libibverbs and librdmacm, on one device, taking
 * turns in batches inside one pair of processes.  The emulated CPUs of
 * the lab VM change speed from one second to the next: two programs run
 * one after the other (it_pingpong, then ib_send_lat) see different
 * speeds, batches a few milliseconds apart see the same.
 *
 * Three loops take turns, each a client sending size bytes and waiting
 * for them to come back, the server sending them back, the receive
 * posted again after each message:
 *
 *   perftest  ib_send_lat's loop as it runs over the RDMA CM here (its
 *             "TX depth 1" and "Max inline data 0"): every send signaled
 *             and its completion polled, the payload not inline;
 *   lean      it_pingpong's method on raw verbs: every 16th send
 *             signaled and waited for, the payload inline where the
 *             device takes it;
 *   IT-API    it_pingpong's loop: it_post_send(), it_post_recv() and
 *             it_evd_wait() (spinning with OPENRDMA_EVD_SPIN_US).
 *
 * A round is one batch of each, in an order that runs through the six
 * orders of three in turn, so that a steady drift favours none.  The
 * client prints each loop's median batch (half round trips) and, for
 * IT-API against each raw loop, the ratio of the medians and the median
 * and quartiles of the rounds' ratios.  Under callgrind the loops' costs
 * are the inclusive costs of perftest_round_trip(), lean_round_trip()
 * and itapi_round_trip().
 *
 *   pingpong_ab -d interface [-p port] [-n round trips per batch]
 *               [-r rounds] [-s size] [server-address]
 *
 * The server runs without an address.  The IT-API connection uses port,
 * the raw one port + 1, both to the server's address.
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "examples/itapi_common.h"

#define DEPTH 32
#define SIGNAL 16
/* as the IT-API side's waits (itx_wait) */
#define RAW_TIMEOUT_US 20000000u

struct ab_opts {
	struct itx_opts it;
	unsigned int rounds;
};

enum loop { LOOP_PERFTEST, LOOP_LEAN, LOOP_IT, NLOOPS };

static const char *const loop_name[NLOOPS] = { "perftest", "lean", "IT-API" };

/* The raw side: one RC QP through librdmacm, as perftest's -R sets up. */
struct raw {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen, *id;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_mr *smr, *rmr;
	unsigned char *sbuf, *rbuf;
	size_t size;
	uint32_t inline_max;
};

/* The IT-API side: it_pingpong's endpoint. */
struct itapi_side {
	struct itx x;
	it_ep_handle_t ep;
	struct itx_buf sbuf, rbuf;
	size_t size;
};

static int raw_fail(const char *what)
{
	perror(what);
	return -1;
}

/* Waits for the next CM event, which must be want; *id: its cm_id. */
static int raw_cm_wait(struct raw *r, enum rdma_cm_event_type want,
		       struct rdma_cm_id **id)
{
	struct rdma_cm_event *ev;
	int got;

	if (rdma_get_cm_event(r->ch, &ev))
		return raw_fail("rdma_get_cm_event");
	got = ev->event;
	if (id)
		*id = ev->id;
	rdma_ack_cm_event(ev);
	if (got != (int)want) {
		fprintf(stderr, "raw: CM event %s instead of %s\n",
			rdma_event_str(got), rdma_event_str(want));
		return -1;
	}
	return 0;
}

static int raw_post_recv(struct raw *r)
{
	struct ibv_sge sge = { (uintptr_t)r->rbuf, (uint32_t)r->size,
			       r->rmr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(r->id->qp, &wr, &bad) ? -1 : 0;
}

/* The PD, CQs, buffers and QP on the connection's device; a receive. */
static int raw_setup(struct raw *r)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = DEPTH,
			 .max_recv_wr = DEPTH,
			 .max_send_sge = 1,
			 .max_recv_sge = 1,
			 .max_inline_data = (uint32_t)r->size },
	};
	struct ibv_context *ctx = r->id->verbs;

	r->pd = ibv_alloc_pd(ctx);
	r->scq = r->pd ? ibv_create_cq(ctx, DEPTH, NULL, NULL, 0) : NULL;
	r->rcq = r->scq ? ibv_create_cq(ctx, DEPTH, NULL, NULL, 0) : NULL;
	r->sbuf = calloc(1, r->size);
	r->rbuf = calloc(1, r->size);
	if (!r->rcq || !r->sbuf || !r->rbuf)
		return raw_fail("raw set-up");
	r->smr = ibv_reg_mr(r->pd, r->sbuf, r->size, IBV_ACCESS_LOCAL_WRITE);
	r->rmr = ibv_reg_mr(r->pd, r->rbuf, r->size, IBV_ACCESS_LOCAL_WRITE);
	if (!r->smr || !r->rmr)
		return raw_fail("ibv_reg_mr");
	init.send_cq = r->scq;
	init.recv_cq = r->rcq;
	/* as the IT-API side: inline where the device takes the size */
	if (rdma_create_qp(r->id, r->pd, &init)) {
		init.cap.max_inline_data = 0;
		if (rdma_create_qp(r->id, r->pd, &init))
			return raw_fail("rdma_create_qp");
	}
	r->inline_max = init.cap.max_inline_data;
	return raw_post_recv(r) ? raw_fail("ibv_post_recv") : 0;
}

static int raw_listen(struct raw *r, unsigned int port)
{
	/* IPv4's wildcard: iWARP devices do not listen on IPv6's */
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_ANY) };

	r->ch = rdma_create_event_channel();
	if (!r->ch || rdma_create_id(r->ch, &r->listen, NULL, RDMA_PS_TCP))
		return raw_fail("rdma_create_id");
	if (rdma_bind_addr(r->listen, (struct sockaddr *)&sa) ||
	    rdma_listen(r->listen, 1))
		return raw_fail("rdma_listen");
	return 0;
}

static int raw_accept(struct raw *r)
{
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1 };

	if (raw_cm_wait(r, RDMA_CM_EVENT_CONNECT_REQUEST, &r->id) ||
	    raw_setup(r))
		return -1;
	if (rdma_accept(r->id, &cp))
		return raw_fail("rdma_accept");
	return raw_cm_wait(r, RDMA_CM_EVENT_ESTABLISHED, NULL);
}

static int raw_connect(struct raw *r, const char *host, unsigned int port)
{
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1,
				      .retry_count = 7 };
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	char serv[16];
	int ret;

	snprintf(serv, sizeof(serv), "%u", port);
	if (getaddrinfo(host, serv, &hints, &ai)) {
		fprintf(stderr, "raw: cannot resolve %s\n", host);
		return -1;
	}
	r->ch = rdma_create_event_channel();
	ret = !r->ch || rdma_create_id(r->ch, &r->id, NULL, RDMA_PS_TCP) ||
	      rdma_resolve_addr(r->id, NULL, ai->ai_addr, 2000);
	freeaddrinfo(ai);
	if (ret)
		return raw_fail("rdma_resolve_addr");
	if (raw_cm_wait(r, RDMA_CM_EVENT_ADDR_RESOLVED, NULL))
		return -1;
	if (rdma_resolve_route(r->id, 2000))
		return raw_fail("rdma_resolve_route");
	if (raw_cm_wait(r, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL) || raw_setup(r))
		return -1;
	if (rdma_connect(r->id, &cp))
		return raw_fail("rdma_connect");
	return raw_cm_wait(r, RDMA_CM_EVENT_ESTABLISHED, NULL);
}

/* Ends the connection as itx_disconnect() does: the client first. */
static int raw_disconnect(struct raw *r, bool server)
{
	if (!server && rdma_disconnect(r->id))
		return raw_fail("rdma_disconnect");
	if (raw_cm_wait(r, RDMA_CM_EVENT_DISCONNECTED, NULL))
		return -1;
	if (server)
		rdma_disconnect(r->id);
	return 0;
}

static void raw_close(struct raw *r)
{
	if (r->id && r->id->qp)
		rdma_destroy_qp(r->id);
	if (r->smr)
		ibv_dereg_mr(r->smr);
	if (r->rmr)
		ibv_dereg_mr(r->rmr);
	if (r->scq)
		ibv_destroy_cq(r->scq);
	if (r->rcq)
		ibv_destroy_cq(r->rcq);
	if (r->pd)
		ibv_dealloc_pd(r->pd);
	if (r->id)
		rdma_destroy_id(r->id);
	if (r->listen)
		rdma_destroy_id(r->listen);
	if (r->ch)
		rdma_destroy_event_channel(r->ch);
	free(r->sbuf);
	free(r->rbuf);
}

/*
 * Spins on cq for one completion, which must be a success; gives up
 * after RAW_TIMEOUT_US (a peer that died sends nothing more), reading
 * the clock once in 65536 empty polls.
 */
static int raw_poll_one(struct ibv_cq *cq)
{
	double deadline = 0;
	unsigned int empty = 0;
	struct ibv_wc wc;
	int n;

	while (!(n = ibv_poll_cq(cq, 1, &wc))) {
		if (++empty % 65536)
			continue;
		if (!deadline) {
			deadline = itx_now_us() + RAW_TIMEOUT_US;
		} else if (itx_now_us() > deadline) {
			fprintf(stderr, "raw: no completion in %u s\n",
				RAW_TIMEOUT_US / 1000000);
			return -1;
		}
	}
	if (n < 0 || wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "raw: completion status %s\n",
			n < 0 ? "(poll failed)" : ibv_wc_status_str(wc.status));
		return -1;
	}
	return 0;
}

/* Sends the message; a signaled send waits for its completion. */
static int raw_send(struct raw *r, bool signaled, bool inline_ok)
{
	struct ibv_sge sge = { (uintptr_t)r->sbuf, (uint32_t)r->size,
			       r->smr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND },
			   *bad;

	if (signaled)
		wr.send_flags = IBV_SEND_SIGNALED;
	if (inline_ok && r->size <= r->inline_max)
		wr.send_flags |= IBV_SEND_INLINE;
	if (ibv_post_send(r->id->qp, &wr, &bad))
		return raw_fail("ibv_post_send");
	return signaled ? raw_poll_one(r->scq) : 0;
}

static int raw_recv(struct raw *r)
{
	if (raw_poll_one(r->rcq))
		return -1;
	return raw_post_recv(r) ? raw_fail("ibv_post_recv") : 0;
}

static int itapi_side_send(struct itapi_side *t, bool signaled)
{
	it_lmr_triplet_t seg = itx_seg(&t->sbuf, 0, t->size);
	it_dto_flags_t flags = signaled ? IT_COMPLETION_FLAG : 0;
	it_status_t st;

	st = it_post_send(t->ep, &seg, 1, 0, flags);
	if (st)
		return itx_fail("it_post_send", st);
	return signaled ? itx_wait(t->x.sq, IT_DTO_SEND_CMPL_EVENT, NULL) : 0;
}

static int itapi_side_post_recv(struct itapi_side *t)
{
	it_lmr_triplet_t seg = itx_seg(&t->rbuf, 0, t->size);
	it_status_t st;

	st = it_post_recv(t->ep, &seg, 1, 0, IT_COMPLETION_FLAG);
	return st ? itx_fail("it_post_recv", st) : 0;
}

static int itapi_side_recv(struct itapi_side *t)
{
	it_event_t ev;

	if (itx_wait(t->x.rq, IT_DTO_RC_RECV_CMPL_EVENT, &ev))
		return -1;
	if (ev.dto_cmpl.transferred_length != t->size) {
		fprintf(stderr, "it: received %u bytes, expected %zu\n",
			ev.dto_cmpl.transferred_length, t->size);
		return -1;
	}
	return itapi_side_post_recv(t);
}

/* One raw round trip i, the message's first byte the count. */
static inline int raw_round_trip(struct raw *r, bool server, unsigned int i,
				 bool signaled, bool inline_ok)
{
	if (server && raw_recv(r))
		return -1;
	r->sbuf[0] = server ? r->rbuf[0] : (unsigned char)i;
	if (raw_send(r, signaled, inline_ok))
		return -1;
	if (server)
		return 0;
	return raw_recv(r) || r->rbuf[0] != (unsigned char)i ? -1 : 0;
}

/*
 * Each loop has a function of its own, not inlined, so that callgrind
 * tells their costs apart.  perftest signals every send (last: the
 * server's last send of the run, which nobody waits for).
 */
static __attribute__((noinline)) int
perftest_round_trip(struct raw *r, bool server, unsigned int i, bool last)
{
	return raw_round_trip(r, server, i, !last, false);
}

static __attribute__((noinline)) int
lean_round_trip(struct raw *r, bool server, unsigned int i, bool signaled)
{
	return raw_round_trip(r, server, i, signaled, true);
}

static __attribute__((noinline)) int itapi_round_trip(struct itapi_side *t,
						      bool server,
						      unsigned int i,
						      bool signaled)
{
	if (server && itapi_side_recv(t))
		return -1;
	t->sbuf.p[0] = server ? t->rbuf.p[0] : (unsigned char)i;
	if (itapi_side_send(t, signaled))
		return -1;
	if (server)
		return 0;
	return itapi_side_recv(t) || t->rbuf.p[0] != (unsigned char)i ? -1 : 0;
}

/*
 * One batch of n round trips of a loop; *sent counts this side's sends
 * of the loop over the whole run, which decides the signaled ones.  In
 * the last round the client's last send is signaled, so that the server
 * has it when the client ends, and the server's is not, since the client
 * may disconnect before its completion.
 */
static int batch_run(struct raw *r, struct itapi_side *t, enum loop loop,
		     bool server, unsigned int n, unsigned long *sent,
		     bool last_round)
{
	unsigned int i;
	bool signaled, last;
	int ret;

	for (i = 0; i < n; i++) {
		last = last_round && i == n - 1;
		signaled = server ? !last && ++*sent % SIGNAL == 0 :
				    last || ++*sent % SIGNAL == 0;
		switch (loop) {
		case LOOP_PERFTEST:
			ret = perftest_round_trip(r, server, i, server && last);
			break;
		case LOOP_LEAN:
			ret = lean_round_trip(r, server, i, signaled);
			break;
		default:
			ret = itapi_round_trip(t, server, i, signaled);
			break;
		}
		if (ret) {
			fprintf(stderr, "%s: round trip %u failed\n",
				loop_name[loop], i);
			return -1;
		}
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The q-quantile of the n values v (sorted in place). */
static double quantile(double *v, unsigned int n, double q)
{
	double pos = q * (n - 1);
	unsigned int i = (unsigned int)pos;

	qsort(v, n, sizeof(*v), cmp_double);
	if (i + 1 >= n)
		return v[n - 1];
	return v[i] + (pos - i) * (v[i + 1] - v[i]);
}

/* IT-API against one raw loop: the ratio of the medians, the rounds'. */
static void report_ratio(const struct ab_opts *o, double *it_us, double *raw_us,
			 double it_med, double raw_med, const char *name,
			 double *ratio)
{
	unsigned int k;

	for (k = 0; k < o->rounds; k++)
		ratio[k] = it_us[k] / raw_us[k];
	printf("IT-API/%-8s %.3f (of the medians); paired %.3f (quartiles %.3f %.3f)\n",
	       name, it_med / raw_med, quantile(ratio, o->rounds, 0.5),
	       quantile(ratio, o->rounds, 0.25),
	       quantile(ratio, o->rounds, 0.75));
}

static void report(const struct ab_opts *o, double *us[NLOOPS])
{
	unsigned int n = o->rounds, half = o->it.iters * 2;
	double med[NLOOPS], *sorted, *ratio;
	int l;

	sorted = calloc(n, sizeof(*sorted));
	ratio = calloc(n, sizeof(*ratio));
	if (!sorted || !ratio)
		goto out;
	printf("interface      %s\n", o->it.dev);
	printf("rounds         %u, batches of %u round trips, %zu bytes\n", n,
	       o->it.iters, o->it.size);
	for (l = 0; l < NLOOPS; l++) {
		memcpy(sorted, us[l], n * sizeof(*sorted));
		med[l] = quantile(sorted, n, 0.5) / half;
		printf("%-14s %.3f us (half round trip, median batch)\n",
		       loop_name[l], med[l]);
	}
	report_ratio(o, us[LOOP_IT], us[LOOP_PERFTEST], med[LOOP_IT],
		     med[LOOP_PERFTEST], loop_name[LOOP_PERFTEST], ratio);
	report_ratio(o, us[LOOP_IT], us[LOOP_LEAN], med[LOOP_IT],
		     med[LOOP_LEAN], loop_name[LOOP_LEAN], ratio);
out:
	free(sorted);
	free(ratio);
}

static int itapi_side_open(struct itapi_side *t, const struct ab_opts *o)
{
	it_ep_attributes_t attr;
	it_status_t st;

	t->size = o->it.size;
	if (itx_open(&t->x, &o->it, 4 * DEPTH))
		return -1;
	attr = itx_rc_attr(&t->x, DEPTH);
	st = it_ep_rc_create(t->x.pz, t->x.sq, t->x.rq, t->x.cmsg,
			     IT_EP_NO_FLAG, &attr, &t->ep);
	if (st)
		return itx_fail("it_ep_rc_create", st);
	if (itx_buf(&t->x, &t->sbuf, t->size, IT_PRIV_LOCAL) ||
	    itx_buf(&t->x, &t->rbuf, t->size, IT_PRIV_LOCAL))
		return -1;
	return 0;
}

static void itapi_side_close(struct itapi_side *t)
{
	itx_close(&t->x);
	itx_buf_free(&t->sbuf);
	itx_buf_free(&t->rbuf);
}

/* Connects both sides: the raw listener is up before the IT-API accept. */
static int connect_both(const struct ab_opts *o, bool server, struct raw *r,
			struct itapi_side *t)
{
	it_listen_handle_t l;
	it_event_t ev;

	r->size = o->it.size;
	if (server) {
		if (raw_listen(r, o->it.port + 1) || itapi_side_post_recv(t) ||
		    itx_listen(&t->x, &o->it, &l) ||
		    itx_accept(&t->x, t->ep, NULL, 0))
			return -1;
		return raw_accept(r);
	}
	if (itx_connect(&t->x, &o->it, t->ep, &ev) || itapi_side_post_recv(t))
		return -1;
	return raw_connect(r, o->it.server, o->it.port + 1);
}

/* The six orders of three loops, one per round in turn. */
static const enum loop round_order[6][NLOOPS] = {
	{ LOOP_PERFTEST, LOOP_LEAN, LOOP_IT },
	{ LOOP_IT, LOOP_LEAN, LOOP_PERFTEST },
	{ LOOP_LEAN, LOOP_IT, LOOP_PERFTEST },
	{ LOOP_PERFTEST, LOOP_IT, LOOP_LEAN },
	{ LOOP_IT, LOOP_PERFTEST, LOOP_LEAN },
	{ LOOP_LEAN, LOOP_PERFTEST, LOOP_IT },
};

static int side(const struct ab_opts *o, bool server)
{
	unsigned long sent[NLOOPS] = { 0 };
	double *us[NLOOPS] = { NULL }, t0;
	struct raw r = { 0 };
	struct itapi_side t = { 0 };
	unsigned int k, j;
	int ret = -1, l;
	enum loop loop;

	for (l = 0; l < NLOOPS; l++) {
		us[l] = calloc(o->rounds, sizeof(*us[l]));
		if (!us[l])
			goto out;
	}
	if (itapi_side_open(&t, o) || connect_both(o, server, &r, &t))
		goto out;
	/* a round not counted first: caches and first faults */
	for (k = 0; k <= o->rounds; k++) {
		for (j = 0; j < NLOOPS; j++) {
			loop = round_order[k % 6][j];
			t0 = itx_now_us();
			if (batch_run(&r, &t, loop, server, o->it.iters,
				      &sent[loop], k == o->rounds))
				goto out;
			if (k)
				us[loop][k - 1] = itx_now_us() - t0;
		}
	}
	if (!server)
		report(o, us);
	if (raw_disconnect(&r, server) ||
	    itx_disconnect(&t.x, &t.ep, 1, server))
		goto out;
	ret = 0;
out:
	raw_close(&r);
	itapi_side_close(&t);
	for (l = 0; l < NLOOPS; l++)
		free(us[l]);
	return ret;
}

int main(int argc, char **argv)
{
	struct ab_opts o = {
		.it = { .prog = argv[0],
			.port = 18530,
			.iters = 200,
			.size = 2 },
		.rounds = 100,
	};
	int c;

	while ((c = getopt(argc, argv, "d:p:n:r:s:")) != -1) {
		switch (c) {
		case 'd':
			o.it.dev = optarg;
			break;
		case 'p':
			o.it.port = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'n':
			o.it.iters = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'r':
			o.rounds = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 's':
			o.it.size = strtoul(optarg, NULL, 0);
			break;
		default:
			goto usage;
		}
	}
	if (optind < argc)
		o.it.server = argv[optind];
	if (!o.it.dev || !o.it.iters || !o.rounds || !o.it.size ||
	    o.it.size > 4096 || !o.it.port || o.it.port >= 65535)
		goto usage;
	return side(&o, !o.it.server) ? 1 : 0;
usage:
	fprintf(stderr,
		"usage: %s -d interface [-p port] [-n round trips] [-r rounds] [-s size] [server]\n",
		argv[0]);
	return 2;
}
