/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * pingpong_ab: it_pingpong's send ping-pong through IT-API and through
 * OpenRDMA's verbs interface, next to two baseline loops outside
 * OpenRDMA, on one interface, taking turns in batches inside one pair of
 * processes.  Machines change speed from one second to the next (the lab
 * VM's emulated CPUs by half, a busy host by a third): two programs run
 * one after the other see different speeds, batches a few milliseconds
 * apart see the same.
 *
 * Four loops take turns, each a client sending size bytes and waiting
 * for them to come back, the server sending them back, the receive
 * posted again after each message:
 *
 *   base 0, base 1  the baseline the build links (pingpong_ab.h):
 *             perftest and lean on libibverbs (verbs build), socket and
 *             framed on a TCP socket (tcp build);
 *   core      the lean loop on OpenRDMA's verbs interface, the calls
 *             openrdma-perf makes (openrdma_qp_post_send(),
 *             openrdma_cq_poll()): every 16th send signaled and waited
 *             for, the payload inline where the transport takes it;
 *   IT-API    it_pingpong's loop: it_post_send(), it_post_recv() and
 *             it_evd_wait() (spinning with OPENRDMA_EVD_SPIN_US).
 *
 * A round is one batch of each, in one of four orders in turn (each loop
 * once in each place, each after every other once), so that a steady
 * drift favours none.  The client prints each loop's median batch (half
 * round trips) and, for core and IT-API against each baseline loop, the
 * ratio of the medians and the median and quartiles of the rounds'
 * ratios.  Under callgrind the loops' costs are the inclusive costs of
 * base0_round_trip(), base1_round_trip(), core_round_trip() and
 * itapi_round_trip().
 *
 *   pingpong_ab -d interface [-m] [-p port] [-n round trips per batch]
 *               [-r rounds] [-s size] [server-address]
 *
 * -m: a batch's figure is its median round trip (timed one by one on the
 * client), not its mean: a transport whose first messages after a pause
 * take a slower path (tcp0 hands its connection to a busy poller, and
 * takes it back when the poller stops) is measured as it runs steadily.
 *
 * The server runs without an address.  The IT-API connection uses port,
 * the baseline's port + 1 and the core one port + 2, all to the server's
 * address.
 */
#include <getopt.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/perf/pingpong_ab.h"

#define SIGNAL 16

struct ab_opts {
	struct itx_opts it;
	unsigned int rounds;
	/* a batch's figure is its median round trip, not its mean */
	bool median;
};

enum loop { LOOP_BASE0, LOOP_BASE1, LOOP_CORE, LOOP_IT, NLOOPS };

static const char *loop_name(enum loop l)
{
	if (l == LOOP_CORE)
		return "core";
	if (l == LOOP_IT)
		return "IT-API";
	return ab_base_info.name[l];
}

/* The IT-API side: it_pingpong's endpoint. */
struct itapi_side {
	struct itx x;
	it_ep_handle_t ep;
	struct itx_buf sbuf, rbuf;
	size_t size;
};

/* What the loops run on. */
struct sides {
	struct ab_base *base;
	struct core_side core;
	struct itapi_side it;
};

int ab_addr(const char *host, unsigned int port, struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	char serv[16];

	snprintf(serv, sizeof(serv), "%u", port);
	if (getaddrinfo(host, serv, &hints, &ai)) {
		fprintf(stderr, "cannot resolve %s\n", host);
		return -1;
	}
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	return 0;
}

bool ab_poll_expired(unsigned int *empty, double *deadline)
{
	if (++*empty % 65536)
		return false;
	if (!*deadline)
		*deadline = itx_now_us() + AB_TIMEOUT_US;
	return itx_now_us() > *deadline;
}

/* The sides' send and receive as round_trip() takes them. */
static int base0_send(void *b, bool signaled)
{
	return ab_base_send(b, 0, signaled);
}

static int base1_send(void *b, bool signaled)
{
	return ab_base_send(b, 1, signaled);
}

static int base0_recv(void *b)
{
	return ab_base_recv(b, 0);
}

static int base1_recv(void *b)
{
	return ab_base_recv(b, 1);
}

static int core_send_any(void *c, bool signaled)
{
	return core_side_send(c, signaled);
}

static int core_recv_any(void *c)
{
	return core_side_recv(c);
}

/* it_pingpong's send and receive (examples/it_common.c) */
static int itapi_send_any(void *side, bool signaled)
{
	struct itapi_side *t = side;

	return itx_send(t->ep, &t->sbuf, t->size, 0, signaled, t->x.sq);
}

static int itapi_recv_any(void *side)
{
	struct itapi_side *t = side;

	return itx_recv(&t->x, t->ep, &t->rbuf, t->size);
}

/*
 * One round trip i of every loop, the message's first byte the count.
 * Inlined into each loop's function with its own send and receive, which
 * are then called directly.
 */
static inline __attribute__((always_inline)) int
round_trip(void *side, int (*send)(void *, bool), int (*recv)(void *),
	   unsigned char *sbuf, const unsigned char *rbuf, bool server,
	   unsigned int i, bool signaled)
{
	if (server && recv(side))
		return -1;
	sbuf[0] = server ? rbuf[0] : (unsigned char)i;
	if (send(side, signaled))
		return -1;
	if (server)
		return 0;
	return recv(side) || rbuf[0] != (unsigned char)i ? -1 : 0;
}

/* Each loop has a function of its own, so that callgrind tells their
 * costs apart. */
static __attribute__((noinline)) int
base0_round_trip(struct ab_base *b, bool server, unsigned int i, bool signaled)
{
	return round_trip(b, base0_send, base0_recv, ab_base_sbuf(b),
			  ab_base_rbuf(b), server, i, signaled);
}

static __attribute__((noinline)) int
base1_round_trip(struct ab_base *b, bool server, unsigned int i, bool signaled)
{
	return round_trip(b, base1_send, base1_recv, ab_base_sbuf(b),
			  ab_base_rbuf(b), server, i, signaled);
}

static __attribute__((noinline)) int
core_round_trip(struct core_side *c, bool server, unsigned int i, bool signaled)
{
	return round_trip(c, core_send_any, core_recv_any, c->sbuf, c->rbuf,
			  server, i, signaled);
}

static __attribute__((noinline)) int itapi_round_trip(struct itapi_side *t,
						      bool server,
						      unsigned int i,
						      bool signaled)
{
	return round_trip(t, itapi_send_any, itapi_recv_any, t->sbuf.p,
			  t->rbuf.p, server, i, signaled);
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

/*
 * One batch of n round trips of a loop.  A baseline loop may signal
 * every send (perftest's); the others signal one in SIGNAL, *sent
 * counting this side's sends of the loop over the whole run.  In the
 * last round the client's last send is signaled, so that the server has
 * it when the client ends, and the server's is not, since the client may
 * disconnect before its completion.  rt, if not NULL, gets each round
 * trip's time (us).
 */
static int batch_run(struct sides *sd, enum loop loop, bool server,
		     unsigned int n, unsigned long *sent, bool last_round,
		     double *rt)
{
	unsigned int i;
	bool signaled, last;
	double t0 = 0;
	int ret;

	for (i = 0; i < n; i++) {
		if (rt)
			t0 = itx_now_us();
		last = last_round && i == n - 1;
		if (server && last)
			signaled = false;
		else
			signaled = (loop <= LOOP_BASE1 &&
				    ab_base_info.signal_all[loop]) ||
				   last || ++*sent % SIGNAL == 0;
		switch (loop) {
		case LOOP_BASE0:
			ret = base0_round_trip(sd->base, server, i, signaled);
			break;
		case LOOP_BASE1:
			ret = base1_round_trip(sd->base, server, i, signaled);
			break;
		case LOOP_CORE:
			ret = core_round_trip(&sd->core, server, i, signaled);
			break;
		default:
			ret = itapi_round_trip(&sd->it, server, i, signaled);
			break;
		}
		if (ret) {
			fprintf(stderr, "%s: round trip %u failed\n",
				loop_name(loop), i);
			return -1;
		}
		if (rt)
			rt[i] = itx_now_us() - t0;
	}
	return 0;
}

/* Loop a against baseline loop b: the ratio of the medians, the
 * rounds'. */
static void report_ratio(const struct ab_opts *o, double *us[NLOOPS],
			 const double *med, enum loop a, enum loop b,
			 double *ratio)
{
	unsigned int k, n = o->rounds;
	char name[32];

	for (k = 0; k < n; k++)
		ratio[k] = us[a][k] / us[b][k];
	snprintf(name, sizeof(name), "%s/%s", loop_name(a), loop_name(b));
	printf("%-15s %.3f (of the medians); paired %.3f (quartiles %.3f %.3f)\n",
	       name, med[a] / med[b], quantile(ratio, n, 0.5),
	       quantile(ratio, n, 0.25), quantile(ratio, n, 0.75));
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
	printf("rounds         %u, batches of %u round trips, %zu bytes%s\n", n,
	       o->it.iters, o->it.size,
	       o->median ? ", a batch's median round trip" : "");
	for (l = 0; l < NLOOPS; l++) {
		memcpy(sorted, us[l], n * sizeof(*sorted));
		med[l] = quantile(sorted, n, 0.5) / half;
		printf("%-14s %.3f us (half round trip, median batch)\n",
		       loop_name(l), med[l]);
	}
	report_ratio(o, us, med, LOOP_CORE, LOOP_BASE0, ratio);
	report_ratio(o, us, med, LOOP_CORE, LOOP_BASE1, ratio);
	report_ratio(o, us, med, LOOP_IT, LOOP_BASE0, ratio);
	report_ratio(o, us, med, LOOP_IT, LOOP_BASE1, ratio);
out:
	free(sorted);
	free(ratio);
}

static int itapi_side_open(struct itapi_side *t, const struct ab_opts *o)
{
	it_ep_attributes_t attr;
	it_status_t st;

	t->size = o->it.size;
	if (itx_open(&t->x, &o->it, 4 * AB_DEPTH))
		return -1;
	attr = itx_rc_attr(&t->x, AB_DEPTH);
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

/*
 * Connects the three sides: the server listens for the baseline and core
 * connections before it accepts the IT-API one, which the client makes
 * first.
 */
static int connect_all(const struct ab_opts *o, bool server, struct sides *sd)
{
	unsigned int port = o->it.port;
	it_listen_handle_t l;
	it_event_t ev;

	if (server) {
		if (ab_base_listen(sd->base, port + 1) ||
		    core_side_listen(&sd->core, port + 2) ||
		    itx_post_recv(sd->it.ep, &sd->it.rbuf, sd->it.size) ||
		    itx_listen(&sd->it.x, &o->it, &l) ||
		    itx_accept(&sd->it.x, sd->it.ep, NULL, 0))
			return -1;
		return ab_base_accept(sd->base) || core_side_accept(&sd->core) ?
			       -1 :
			       0;
	}
	if (itx_connect(&sd->it.x, &o->it, sd->it.ep, &ev) ||
	    itx_post_recv(sd->it.ep, &sd->it.rbuf, sd->it.size) ||
	    ab_base_connect(sd->base, o->it.server, port + 1))
		return -1;
	return core_side_connect(&sd->core, o->it.server, port + 2);
}

/*
 * The rounds' orders: each loop once in each place, and after each other
 * loop once (a Williams square), one order per round in turn.
 */
static const enum loop round_order[NLOOPS][NLOOPS] = {
	{ LOOP_BASE0, LOOP_BASE1, LOOP_IT, LOOP_CORE },
	{ LOOP_BASE1, LOOP_CORE, LOOP_BASE0, LOOP_IT },
	{ LOOP_CORE, LOOP_IT, LOOP_BASE1, LOOP_BASE0 },
	{ LOOP_IT, LOOP_BASE0, LOOP_CORE, LOOP_BASE1 },
};

static int side(const struct ab_opts *o, bool server)
{
	unsigned long sent[NLOOPS] = { 0 };
	double *us[NLOOPS] = { NULL }, *rt = NULL, t0;
	struct sides sd;
	unsigned int k, j;
	int ret = -1, l;
	enum loop loop;

	memset(&sd, 0, sizeof(sd));
	for (l = 0; l < NLOOPS; l++) {
		us[l] = calloc(o->rounds, sizeof(*us[l]));
		if (!us[l])
			goto out;
	}
	if (o->median && !server) {
		rt = calloc(o->it.iters, sizeof(*rt));
		if (!rt)
			goto out;
	}
	if (ab_base_open(&sd.base, o->it.size) || itapi_side_open(&sd.it, o) ||
	    core_side_open(&sd.core, o->it.dev, o->it.size) ||
	    connect_all(o, server, &sd))
		goto out;
	/* a round not counted first: caches and first faults */
	for (k = 0; k <= o->rounds; k++) {
		for (j = 0; j < NLOOPS; j++) {
			loop = round_order[k % NLOOPS][j];
			t0 = itx_now_us();
			if (batch_run(&sd, loop, server, o->it.iters,
				      &sent[loop], k == o->rounds, rt))
				goto out;
			if (!k)
				continue;
			/* the median as if all took as long */
			us[loop][k - 1] = rt ? quantile(rt, o->it.iters, 0.5) *
							  o->it.iters :
					       itx_now_us() - t0;
		}
	}
	if (!server)
		report(o, us);
	if (ab_base_disconnect(sd.base, server) ||
	    core_side_disconnect(&sd.core, server) ||
	    itx_disconnect(&sd.it.x, &sd.it.ep, 1, server))
		goto out;
	ret = 0;
out:
	ab_base_close(sd.base);
	core_side_close(&sd.core);
	itapi_side_close(&sd.it);
	for (l = 0; l < NLOOPS; l++)
		free(us[l]);
	free(rt);
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

	while ((c = getopt(argc, argv, "d:mp:n:r:s:")) != -1) {
		switch (c) {
		case 'm':
			o.median = true;
			break;
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
		"usage: %s -d interface [-m] [-p port] [-n round trips] [-r rounds] [-s size] [server]\n",
		argv[0]);
	return 2;
}
