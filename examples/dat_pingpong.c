/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * dat_pingpong: a DAT 2.0 (uDAPL) ping-pong.  It uses <dat2/udat.h> and
 * nothing else, so it builds unchanged against OpenRDMA's headers and
 * library:
 *
 *   cc dat_pingpong.c $(pkg-config --cflags --libs openrdma-dat2)
 *
 * and against DAPL's (Debian's libdapl-dev):
 *
 *   cc dat_pingpong.c -ldat2
 *
 * Server:  dat_pingpong -P ofa-openrdma-tcp0 -s
 * Client:  dat_pingpong -P ofa-openrdma-tcp0 -h <the address it prints>
 * Both in one process (any interface, self0 included):
 *          dat_pingpong -P ofa-openrdma-self0 -l
 *
 * Each round trip is a message one way and one back, then the client
 * writes its buffer into the server's with RDMA and reads it back.
 */
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dat2/udat.h>

#define QLEN 64
#define WAIT_US 10000000u /* ten seconds */
#define DEFAULT_QUAL 18515

struct opts {
	char provider[DAT_NAME_MAX_LENGTH];
	const char *host; /* client: the server */
	DAT_CONN_QUAL qual;
	unsigned int iters;
	unsigned int size;
	int server;
	int loopback;
};

/* One side of the connection: an EP, its EVDs and its memory. */
struct side {
	DAT_EP_HANDLE ep;
	DAT_EVD_HANDLE sevd, revd, conn; /* send and receive completions */
	char *buf; /* [0, size): send; [size, 2 size): receive */
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lctx;
	DAT_RMR_CONTEXT rctx;
	DAT_RMR_TRIPLET peer; /* the other side's buffer, for RDMA */
	int sending; /* a send's completion is yet to be taken */
};

struct app {
	struct opts o;
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async, cr_evd;
	DAT_PZ_HANDLE pz;
	DAT_PSP_HANDLE psp;
	DAT_IA_ADDRESS_PTR ia_addr;
	struct side side[2];
};

static int fail(const char *what, DAT_RETURN ret)
{
	const char *major = "?", *minor = "?";

	dat_strerror(ret, &major, &minor);
	fprintf(stderr, "dat_pingpong: %s: %s %s (0x%08x)\n", what, major,
		minor, ret);
	return -1;
}

#define CHECK(call)                             \
	do {                                    \
		DAT_RETURN r_ = (call);         \
		if (r_ != DAT_SUCCESS)          \
			return fail(#call, r_); \
	} while (0)

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Takes the next event of evd, which must be event number want. */
static int expect(DAT_EVD_HANDLE evd, DAT_EVENT_NUMBER want, DAT_EVENT *ev)
{
	DAT_COUNT nmore;

	CHECK(dat_evd_wait(evd, WAIT_US, 1, ev, &nmore));
	if (ev->event_number != want) {
		fprintf(stderr, "dat_pingpong: event 0x%x, expected 0x%x\n",
			ev->event_number, want);
		return -1;
	}
	if (want == DAT_DTO_COMPLETION_EVENT &&
	    ev->event_data.dto_completion_event_data.status !=
		    DAT_DTO_SUCCESS) {
		fprintf(stderr, "dat_pingpong: completion status %d\n",
			ev->event_data.dto_completion_event_data.status);
		return -1;
	}
	return 0;
}

static int side_open(struct app *a, struct side *s)
{
	DAT_REGION_DESCRIPTION region;
	DAT_VLEN len;
	DAT_VADDR addr;
	DAT_EP_ATTR attr;

	s->buf = calloc(2, a->o.size);
	if (!s->buf)
		return fail("calloc", DAT_INSUFFICIENT_RESOURCES);
	region.for_va = s->buf;
	CHECK(dat_lmr_create(a->ia, DAT_MEM_TYPE_VIRTUAL, region,
			     2 * (DAT_VLEN)a->o.size, a->pz,
			     DAT_MEM_PRIV_ALL_FLAG, DAT_VA_TYPE_VA, &s->lmr,
			     &s->lctx, &s->rctx, &len, &addr));
	CHECK(dat_evd_create(a->ia, QLEN, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG,
			     &s->sevd));
	CHECK(dat_evd_create(a->ia, QLEN, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG,
			     &s->revd));
	CHECK(dat_evd_create(a->ia, QLEN, DAT_HANDLE_NULL,
			     DAT_EVD_CONNECTION_FLAG, &s->conn));
	memset(&attr, 0, sizeof(attr));
	attr.service_type = DAT_SERVICE_TYPE_RC;
	attr.max_message_size = a->o.size;
	attr.max_rdma_size = a->o.size;
	attr.max_recv_dtos = 4;
	attr.max_request_dtos = 4;
	attr.max_recv_iov = 1;
	attr.max_request_iov = 1;
	attr.max_rdma_read_in = 1;
	attr.max_rdma_read_out = 1;
	CHECK(dat_ep_create(a->ia, a->pz, s->revd, s->sevd, s->conn, &attr,
			    &s->ep));
	return 0;
}

static DAT_LMR_TRIPLET seg(const struct side *s, size_t off, uint32_t len)
{
	DAT_LMR_TRIPLET t;

	t.virtual_address = (DAT_VADDR)(uintptr_t)(s->buf + off);
	t.segment_length = len;
	t.lmr_context = s->lctx;
	return t;
}

static int post_recv(struct app *a, struct side *s)
{
	DAT_LMR_TRIPLET r = seg(s, a->o.size, a->o.size);
	DAT_DTO_COOKIE c;

	c.as_64 = 0;
	CHECK(dat_ep_post_recv(s->ep, 1, &r, c, DAT_COMPLETION_DEFAULT_FLAG));
	return 0;
}

/* Takes the completion of the send in flight. */
static int send_done(struct side *s)
{
	DAT_EVENT ev;

	s->sending = 0;
	return expect(s->sevd, DAT_DTO_COMPLETION_EVENT, &ev);
}

/*
 * Posts a send of the first len bytes of the buffer.  Its completion is
 * taken before the next send, not right away: a transport may
 * acknowledge a message only with its next one to us.
 */
static int send_msg(struct side *s, uint32_t len)
{
	DAT_LMR_TRIPLET l = seg(s, 0, len);
	DAT_DTO_COOKIE c;

	if (s->sending && send_done(s))
		return -1;
	c.as_64 = 1;
	CHECK(dat_ep_post_send(s->ep, 1, &l, c, DAT_COMPLETION_DEFAULT_FLAG));
	s->sending = 1;
	return 0;
}

static int recv_complete(struct side *s)
{
	DAT_EVENT ev;

	return expect(s->revd, DAT_DTO_COMPLETION_EVENT, &ev);
}

/* The server side: a PSP, one request, accepted on side 1. */
static int listen_accept(struct app *a)
{
	DAT_CR_HANDLE cr;
	DAT_EVENT ev;

	if (expect(a->cr_evd, DAT_CONNECTION_REQUEST_EVENT, &ev))
		return -1;
	cr = ev.event_data.cr_arrival_event_data.cr_handle;
	CHECK(dat_cr_accept(cr, a->side[1].ep, 0, NULL));
	return expect(a->side[1].conn, DAT_CONNECTION_EVENT_ESTABLISHED, &ev);
}

static int resolve(const char *host, struct sockaddr_storage *ss)
{
	struct addrinfo hints = { 0 }, *res;

	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, NULL, &hints, &res)) {
		fprintf(stderr, "dat_pingpong: cannot resolve %s\n", host);
		return -1;
	}
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
}

/* The numeric host of an IA address, for the client's -h. */
static const char *address(DAT_IA_ADDRESS_PTR sa, char *host, size_t len)
{
	socklen_t salen = sa->sa_family == AF_INET6 ?
				  sizeof(struct sockaddr_in6) :
				  sizeof(struct sockaddr_in);

	if (getnameinfo(sa, salen, host, (socklen_t)len, NULL, 0,
			NI_NUMERICHOST))
		snprintf(host, len, "(family %d)", sa->sa_family);
	return host;
}

/*
 * Tells the peer where this side's receive half is: the RDMA target.
 * The message goes through the receive buffer the peer posted.
 */
static int exchange_rmr(struct app *a, struct side *s, int first)
{
	DAT_RMR_TRIPLET mine;

	mine.virtual_address = (DAT_VADDR)(uintptr_t)(s->buf + a->o.size);
	mine.segment_length = a->o.size;
	mine.rmr_context = s->rctx;
	if (first) {
		memcpy(s->buf, &mine, sizeof(mine));
		if (send_msg(s, sizeof(mine)) || recv_complete(s))
			return -1;
	} else {
		if (recv_complete(s))
			return -1;
		memcpy(s->buf, &mine, sizeof(mine));
		if (send_msg(s, sizeof(mine)))
			return -1;
	}
	memcpy(&s->peer, s->buf + a->o.size, sizeof(s->peer));
	return post_recv(a, s);
}

/* Ping: send, wait for the answer.  Pong: wait, send back. */
static int round_trip(struct app *a, struct side *s, int ping)
{
	if (ping)
		return send_msg(s, a->o.size) || recv_complete(s) ||
		       post_recv(a, s);
	return recv_complete(s) || post_recv(a, s) || send_msg(s, a->o.size);
}

static int rdma_round_trip(struct app *a, struct side *s)
{
	DAT_LMR_TRIPLET l = seg(s, 0, a->o.size);
	DAT_DTO_COOKIE c;
	DAT_EVENT ev;

	if (s->sending && send_done(s))
		return -1;
	c.as_64 = 2;
	CHECK(dat_ep_post_rdma_write(s->ep, 1, &l, c, &s->peer,
				     DAT_COMPLETION_DEFAULT_FLAG));
	if (expect(s->sevd, DAT_DTO_COMPLETION_EVENT, &ev))
		return -1;
	l = seg(s, a->o.size, a->o.size);
	CHECK(dat_ep_post_rdma_read(s->ep, 1, &l, c, &s->peer,
				    DAT_COMPLETION_DEFAULT_FLAG));
	if (expect(s->sevd, DAT_DTO_COMPLETION_EVENT, &ev))
		return -1;
	/* what came back is what was written */
	if (memcmp(s->buf, s->buf + a->o.size, a->o.size)) {
		fprintf(stderr, "dat_pingpong: RDMA data differs\n");
		return -1;
	}
	return 0;
}

static void report(const struct app *a, const char *what, double us)
{
	printf("%-8s %u x %u bytes: %.2f us per round trip, %.1f MB/s\n", what,
	       a->o.iters, a->o.size, us / a->o.iters,
	       2.0 * a->o.iters * a->o.size / us);
}

/* Loopback: both sides in this process, ping and pong interleaved. */
static int loopback_run(struct app *a)
{
	struct side *c = &a->side[0], *srv = &a->side[1];
	DAT_RMR_TRIPLET t;
	double t0;
	unsigned int i;

	t.virtual_address = (DAT_VADDR)(uintptr_t)(srv->buf + a->o.size);
	t.segment_length = a->o.size;
	t.rmr_context = srv->rctx;
	c->peer = t;
	t0 = now_us();
	for (i = 0; i < a->o.iters; i++) {
		if (send_msg(c, a->o.size) || recv_complete(srv) ||
		    post_recv(a, srv) || send_msg(srv, a->o.size) ||
		    recv_complete(c) || post_recv(a, c))
			return -1;
	}
	report(a, "send", now_us() - t0);
	t0 = now_us();
	for (i = 0; i < a->o.iters; i++)
		if (rdma_round_trip(a, c))
			return -1;
	report(a, "rdma", now_us() - t0);
	return 0;
}

static int remote_run(struct app *a, struct side *s)
{
	double t0;
	unsigned int i;

	if (exchange_rmr(a, s, !a->o.server))
		return -1;
	t0 = now_us();
	for (i = 0; i < a->o.iters; i++)
		if (round_trip(a, s, !a->o.server))
			return -1;
	report(a, "send", now_us() - t0);
	if (a->o.server)
		return 0;
	t0 = now_us();
	for (i = 0; i < a->o.iters; i++)
		if (rdma_round_trip(a, s))
			return -1;
	report(a, "rdma", now_us() - t0);
	/* tell the server we are done */
	return send_msg(s, 1) || send_done(s);
}

static int run(struct app *a)
{
	struct sockaddr_storage peer;
	DAT_IA_ADDRESS_PTR addr = (DAT_IA_ADDRESS_PTR)&peer;
	DAT_IA_ATTR attr;
	DAT_PROVIDER_ATTR pattr;
	char host[NI_MAXHOST];
	int server_side = a->o.server || a->o.loopback;
	int client_side = !a->o.server || a->o.loopback;

	a->async = DAT_HANDLE_NULL;
	CHECK(dat_ia_open(a->o.provider, QLEN, &a->async, &a->ia));
	CHECK(dat_ia_query(a->ia, NULL, DAT_IA_FIELD_IA_ADDRESS_PTR, &attr, 0,
			   &pattr));
	a->ia_addr = attr.ia_address_ptr;
	CHECK(dat_pz_create(a->ia, &a->pz));
	if (server_side) {
		if (side_open(a, &a->side[1]) || post_recv(a, &a->side[1]))
			return -1;
		CHECK(dat_evd_create(a->ia, QLEN, DAT_HANDLE_NULL,
				     DAT_EVD_CR_FLAG, &a->cr_evd));
		CHECK(dat_psp_create(a->ia, a->o.qual, a->cr_evd,
				     DAT_PSP_CONSUMER_FLAG, &a->psp));
		printf("listening on %s address %s, connection qualifier "
		       "%" PRIu64 "\n",
		       a->o.provider, address(a->ia_addr, host, sizeof(host)),
		       (uint64_t)a->o.qual);
		fflush(stdout);
	}
	if (client_side) {
		if (side_open(a, &a->side[0]) || post_recv(a, &a->side[0]))
			return -1;
		/* in one process, the server is this IA's own address */
		if (a->o.loopback)
			addr = a->ia_addr;
		else if (resolve(a->o.host, &peer))
			return -1;
		CHECK(dat_ep_connect(a->side[0].ep, addr, a->o.qual, WAIT_US, 0,
				     NULL, DAT_QOS_BEST_EFFORT,
				     DAT_CONNECT_DEFAULT_FLAG));
	}
	if (server_side && listen_accept(a))
		return -1;
	if (client_side) {
		DAT_EVENT ev;

		if (expect(a->side[0].conn, DAT_CONNECTION_EVENT_ESTABLISHED,
			   &ev))
			return -1;
	}
	if (a->o.loopback)
		return loopback_run(a);
	if (remote_run(a, &a->side[a->o.server ? 1 : 0]))
		return -1;
	/* the server waits for the client's last message, then closes */
	if (a->o.server)
		return recv_complete(&a->side[1]) || send_done(&a->side[1]);
	return 0;
}

static void side_close(struct side *s)
{
	if (s->ep) {
		dat_ep_disconnect(s->ep, DAT_CLOSE_ABRUPT_FLAG);
		dat_ep_free(s->ep);
	}
	if (s->sevd)
		dat_evd_free(s->sevd);
	if (s->revd)
		dat_evd_free(s->revd);
	if (s->conn)
		dat_evd_free(s->conn);
	if (s->lmr)
		dat_lmr_free(s->lmr);
	free(s->buf);
}

static void close_all(struct app *a)
{
	side_close(&a->side[0]);
	side_close(&a->side[1]);
	if (a->psp)
		dat_psp_free(a->psp);
	if (a->cr_evd)
		dat_evd_free(a->cr_evd);
	if (a->pz)
		dat_pz_free(a->pz);
	if (a->ia)
		dat_ia_close(a->ia, DAT_CLOSE_ABRUPT_FLAG);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: dat_pingpong -P IA [-s | -h HOST | -l] [-q QUAL] "
		"[-n ITERS] [-S SIZE]\n"
		"  -P IA     the IA name in the DAT registry "
		"(ofa-openrdma-<interface>)\n"
		"  -s        server (prints its IA address)\n"
		"  -h HOST   client of the server whose IA address is HOST\n"
		"  -l        both in this process\n"
		"  -q QUAL   connection qualifier (default %d)\n"
		"  -n ITERS  round trips (default 1000)\n"
		"  -S SIZE   message size in bytes, alike on both sides "
		"(default 64)\n",
		DEFAULT_QUAL);
}

static int parse(int argc, char **argv, struct opts *o)
{
	int c;

	memset(o, 0, sizeof(*o));
	snprintf(o->provider, sizeof(o->provider), "ofa-openrdma-self0");
	o->qual = DEFAULT_QUAL;
	o->iters = 1000;
	o->size = 64;
	while ((c = getopt(argc, argv, "P:sh:lq:n:S:")) != -1) {
		switch (c) {
		case 'P':
			snprintf(o->provider, sizeof(o->provider), "%s",
				 optarg);
			break;
		case 's':
			o->server = 1;
			break;
		case 'h':
			o->host = optarg;
			break;
		case 'l':
			o->loopback = 1;
			break;
		case 'q':
			o->qual = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			o->iters = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'S':
			o->size = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		default:
			return -1;
		}
	}
	if (o->server + o->loopback + (o->host != NULL) != 1 ||
	    o->size < sizeof(DAT_RMR_TRIPLET) || !o->iters)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct app a;
	int ret;

	memset(&a, 0, sizeof(a));
	if (parse(argc, argv, &a.o)) {
		usage();
		return 2;
	}
	ret = run(&a);
	close_all(&a);
	printf("dat_pingpong: %s\n", ret ? "FAILED" : "done");
	return ret ? 1 : 0;
}
