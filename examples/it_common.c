/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* The harness of the IT-API examples: see itapi_common.h. */
#include <arpa/inet.h>
#include <getopt.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include <openrdma/registry.h>
#include <openrdma/verbs.h>

#include "examples/itapi_common.h"

/* Waits for events that must come: 20 s. */
#define ITX_TIMEOUT_US 20000000ull

static void usage(const struct itx_opts *o)
{
	fprintf(stderr,
		"usage: %s [-d interface] [-p port] [-n iters] [-s size] [-l] [server]\n"
		"  no server address: run the server; -l: run both sides here\n",
		o->prog);
}

int itx_parse(int argc, char **argv, struct itx_opts *o)
{
	int c;

	o->prog = argv[0];
	while ((c = getopt(argc, argv, "d:p:n:s:lh")) != -1) {
		switch (c) {
		case 'd':
			o->dev = optarg;
			break;
		case 'p':
			o->port = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'n':
			o->iters = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 's':
			o->size = strtoul(optarg, NULL, 0);
			break;
		case 'l':
			o->local = true;
			break;
		default:
			usage(o);
			return 2;
		}
	}
	if (optind < argc)
		o->server = argv[optind];
	if (!o->dev)
		o->dev = openrdma_default_interface();
	if (!o->dev) {
		fprintf(stderr, "%s: no interface (see openrdma-info)\n",
			o->prog);
		return 1;
	}
	if (!o->iters || !o->size || o->size > o->max_size || !o->port ||
	    o->port > 65535) {
		usage(o);
		return 2;
	}
	return 0;
}

/* Whether the interface reaches other processes (the demo's test). */
static bool cross_process(const char *name)
{
	struct openrdma_device_attr attr;
	struct openrdma_context *ctx;
	struct openrdma_device *dev;
	bool ret = false;

	if (openrdma_device_find(name, &dev) || openrdma_device_open(dev, &ctx))
		return false;
	if (!openrdma_device_query(ctx, &attr))
		ret = attr.device_cap_flags & OPENRDMA_DEVICE_CROSS_PROCESS;
	openrdma_context_close(ctx);
	return ret;
}

struct side_run {
	const struct itx_opts *o;
	itx_side_fn side;
	int ret;
};

static void *server_thread(void *arg)
{
	struct side_run *r = arg;

	r->ret = r->side(r->o, true);
	return NULL;
}

int itx_main(const struct itx_opts *o, itx_side_fn side)
{
	struct side_run srv = { .o = o, .side = side };
	pthread_t thr;
	int client, wstatus;
	pid_t pid;

	if (!o->local)
		return side(o, !o->server) ? 1 : 0;
	if (cross_process(o->dev)) {
		printf("%s: server and client in two processes on %s\n",
		       o->prog, o->dev);
		fflush(stdout);
		pid = fork();
		if (pid < 0)
			return 1;
		if (!pid)
			_exit(side(o, true) ? 1 : 0);
		client = side(o, false);
		if (waitpid(pid, &wstatus, 0) < 0 || !WIFEXITED(wstatus) ||
		    WEXITSTATUS(wstatus))
			return 1;
		return client ? 1 : 0;
	}
	printf("%s: server and client in two threads on %s (in-process interface)\n",
	       o->prog, o->dev);
	fflush(stdout);
	if (pthread_create(&thr, NULL, server_thread, &srv))
		return 1;
	client = side(o, false);
	pthread_join(thr, NULL);
	return client || srv.ret ? 1 : 0;
}

int itx_fail(const char *what, it_status_t st)
{
	fprintf(stderr, "%s failed: IT-API status %d\n", what, (int)st);
	return -1;
}

int itx_open(struct itx *x, const struct itx_opts *o, size_t dto_events)
{
	it_status_t st;

	memset(x, 0, sizeof(*x));
	st = it_ia_create(o->dev, 2, 1, &x->ia);
	if (st)
		return itx_fail("it_ia_create", st);
	st = it_ia_query(x->ia, &x->info);
	if (!st)
		st = it_pz_create(x->ia, &x->pz);
	if (!st)
		st = it_evd_create(x->ia, IT_DTO_EVENT_STREAM, 0, dto_events, 0,
				   NULL, &x->sq, NULL);
	if (!st)
		st = it_evd_create(x->ia, IT_DTO_EVENT_STREAM, 0, dto_events, 0,
				   NULL, &x->rq, NULL);
	if (!st)
		st = it_evd_create(x->ia, IT_CM_REQ_EVENT_STREAM, 0, 16, 0,
				   NULL, &x->creq, NULL);
	if (!st)
		st = it_evd_create(x->ia, IT_CM_MSG_EVENT_STREAM, 0, 64, 0,
				   NULL, &x->cmsg, NULL);
	if (st) {
		itx_close(x);
		return itx_fail("IA set-up", st);
	}
	return 0;
}

void itx_close(struct itx *x)
{
	if (x->info)
		it_ia_info_free(x->info);
	/* frees every object of the IA */
	if (x->ia)
		it_ia_free(x->ia);
	memset(x, 0, sizeof(*x));
}

int itx_wait(it_evd_handle_t evd, it_event_type_t want, it_event_t *ev)
{
	it_event_t local;
	it_status_t st;

	if (!ev)
		ev = &local;
	st = it_evd_wait(evd, ITX_TIMEOUT_US, ev, NULL);
	if (st)
		return itx_fail("it_evd_wait", st);
	if (ev->event_number != want) {
		fprintf(stderr, "event 0x%x instead of 0x%x",
			(unsigned int)ev->event_number, (unsigned int)want);
		if ((ev->event_number & IT_EVENT_STREAM_MASK) ==
		    IT_DTO_EVENT_STREAM)
			fprintf(stderr, " (DTO status %d)",
				(int)ev->dto_cmpl.dto_status);
		fprintf(stderr, "\n");
		return -1;
	}
	if ((want & IT_EVENT_STREAM_MASK) == IT_DTO_EVENT_STREAM &&
	    ev->dto_cmpl.dto_status != IT_DTO_SUCCESS) {
		fprintf(stderr, "completion 0x%x: DTO status %d\n",
			(unsigned int)want, (int)ev->dto_cmpl.dto_status);
		return -1;
	}
	return 0;
}

int itx_buf(struct itx *x, struct itx_buf *b, size_t len, it_mem_priv_t privs)
{
	it_status_t st;

	memset(b, 0, sizeof(*b));
	if (posix_memalign((void **)&b->p, 4096, len ? len : 1))
		return -1;
	memset(b->p, 0, len);
	b->len = len;
	st = it_lmr_create21(x->pz, b->p, NULL, len, IT_ADDR_MODE_ABSOLUTE,
			     privs, 0, 0, &b->lmr, &b->rkey);
	if (st) {
		free(b->p);
		b->p = NULL;
		return itx_fail("it_lmr_create", st);
	}
	return 0;
}

void itx_buf_free(struct itx_buf *b)
{
	/* the LMR goes with its IA; only the memory is ours */
	free(b->p);
	b->p = NULL;
}

it_lmr_triplet_t itx_seg(const struct itx_buf *b, size_t off, size_t len)
{
	it_lmr_triplet_t s;

	s.lmr = b->lmr;
	s.addr.abs = b->p + off;
	s.length = len;
	return s;
}

int itx_send(it_ep_handle_t ep, const struct itx_buf *b, size_t len,
	     it_dto_cookie_t cookie, bool signaled, it_evd_handle_t sq)
{
	it_lmr_triplet_t seg = itx_seg(b, 0, len);
	it_status_t st;

	st = it_post_send(ep, &seg, 1, cookie,
			  signaled ? IT_COMPLETION_FLAG : 0);
	if (st)
		return itx_fail("it_post_send", st);
	return signaled ? itx_wait(sq, IT_DTO_SEND_CMPL_EVENT, NULL) : 0;
}

int itx_post_recv(it_ep_handle_t ep, const struct itx_buf *b, size_t len)
{
	it_lmr_triplet_t seg = itx_seg(b, 0, len);
	it_status_t st;

	st = it_post_recv(ep, &seg, 1, 0, IT_COMPLETION_FLAG);
	return st ? itx_fail("it_post_recv", st) : 0;
}

int itx_recv(struct itx *x, it_ep_handle_t ep, const struct itx_buf *b,
	     size_t len)
{
	it_event_t ev;

	if (itx_wait(x->rq, IT_DTO_RC_RECV_CMPL_EVENT, &ev))
		return -1;
	if (ev.dto_cmpl.transferred_length != len) {
		fprintf(stderr, "received %u bytes, expected %zu\n",
			ev.dto_cmpl.transferred_length, len);
		return -1;
	}
	return itx_post_recv(ep, b, len);
}

it_ep_attributes_t itx_rc_attr(const struct itx *x, size_t depth)
{
	it_ep_attributes_t a;

	memset(&a, 0, sizeof(a));
	a.max_dto_payload_size = x->info->spigot_info[0].max_rc_send_len;
	a.max_request_dtos = depth;
	a.max_recv_dtos = depth;
	a.max_send_segments = 1;
	a.max_recv_segments = 1;
	a.srv.rc.rdma_read_enable = IT_TRUE;
	a.srv.rc.rdma_write_enable = IT_TRUE;
	a.srv.rc.max_rdma_read_segments = 1;
	a.srv.rc.max_rdma_write_segments = 1;
	a.srv.rc.rdma_read_ird = 4;
	a.srv.rc.rdma_read_ord = 4;
	a.srv.rc.atomics_enable = x->info->atomic_support;
	return a;
}

/* The server's address: a name or a literal, IPv4 or IPv6. */
static int resolve(const char *name, it_net_addr_t *na)
{
	struct addrinfo hints, *res;
	int ret;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	ret = getaddrinfo(name, NULL, &hints, &res);
	if (ret) {
		fprintf(stderr, "%s: %s\n", name, gai_strerror(ret));
		return -1;
	}
	memset(na, 0, sizeof(*na));
	if (res->ai_family == AF_INET6) {
		na->addr_type = IT_IPV6;
		na->addr.ipv6 =
			((struct sockaddr_in6 *)res->ai_addr)->sin6_addr;
	} else {
		na->addr_type = IT_IPV4;
		na->addr.ipv4 = ((struct sockaddr_in *)res->ai_addr)->sin_addr;
	}
	freeaddrinfo(res);
	return 0;
}

int itx_server_path(struct itx *x, const struct itx_opts *o, it_path_t *path)
{
	size_t num = 1, total = 0;
	it_net_addr_t na;
	it_status_t st;

	if (o->server) {
		if (resolve(o->server, &na))
			return -1;
	} else if (x->info->num_spigots &&
		   x->info->spigot_info[0].num_net_addr) {
		na = x->info->spigot_info[0].net_addr[0];
	} else {
		fprintf(stderr, "%s has no address\n", o->dev);
		return -1;
	}
	st = it_get_pathinfo(x->ia, 0, &na, &num, &total, path);
	if (st)
		return itx_fail("it_get_pathinfo", st);
	return num ? 0 : -1;
}

it_conn_qual_t itx_conn_qual(const struct itx_opts *o)
{
	it_conn_qual_t cq;

	memset(&cq, 0, sizeof(cq));
	cq.type = IT_IANA_PORT;
	cq.conn_qual.port = htons((uint16_t)o->port);
	return cq;
}

int itx_listen(struct itx *x, const struct itx_opts *o, it_listen_handle_t *l)
{
	it_conn_qual_t cq = itx_conn_qual(o);
	it_status_t st;

	st = it_listen_create(x->ia, 0, x->creq, IT_LISTEN_CONN_QUAL_INPUT, &cq,
			      l);
	return st ? itx_fail("it_listen_create", st) : 0;
}

int itx_connect(struct itx *x, const struct itx_opts *o, it_ep_handle_t ep,
		it_event_t *ev)
{
	it_conn_qual_t cq = itx_conn_qual(o);
	it_path_t path;
	it_status_t st;
	int tries;

	if (itx_server_path(x, o, &path))
		return -1;
	for (tries = 0; tries < 400; tries++) {
		st = it_ep_connect(ep, &path, NULL, &cq,
				   IT_CONNECT_FLAG_TWO_WAY, NULL, 0);
		if (st)
			return itx_fail("it_ep_connect", st);
		st = it_evd_wait(x->cmsg, ITX_TIMEOUT_US, ev, NULL);
		if (st)
			return itx_fail("it_evd_wait", st);
		if (ev->event_number == IT_CM_MSG_CONN_ESTABLISHED_EVENT)
			return 0;
		if (ev->event_number != IT_CM_MSG_CONN_NONPEER_REJECT_EVENT) {
			fprintf(stderr, "connect: event 0x%x\n",
				(unsigned int)ev->event_number);
			return -1;
		}
		/* nobody listens yet: a rejected endpoint is reset first */
		st = it_ep_reset(ep);
		if (st)
			return itx_fail("it_ep_reset", st);
		usleep(25000);
	}
	fprintf(stderr, "connect: no server on port %u\n", o->port);
	return -1;
}

int itx_accept(struct itx *x, it_ep_handle_t ep, const void *pdata, size_t len)
{
	it_event_t ev;
	it_status_t st;

	if (itx_wait(x->creq, IT_CM_REQ_CONN_REQUEST_EVENT, &ev))
		return -1;
	st = it_ep_accept(ep, ev.conn_req.cn_est_id, pdata, len);
	if (st)
		return itx_fail("it_ep_accept", st);
	return itx_wait(x->cmsg, IT_CM_MSG_CONN_ESTABLISHED_EVENT, NULL);
}

int itx_disconnect(struct itx *x, const it_ep_handle_t *ep, unsigned int n,
		   bool server)
{
	unsigned int i;
	it_status_t st;

	for (i = 0; !server && i < n; i++) {
		st = it_ep_disconnect(ep[i], NULL, 0);
		if (st)
			return itx_fail("it_ep_disconnect", st);
	}
	for (i = 0; i < n; i++)
		if (itx_wait(x->cmsg, IT_CM_MSG_CONN_DISCONNECT_EVENT, NULL))
			return -1;
	return 0;
}

double itx_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}
