/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * itapi_overhead: a ping-pong of 8-byte sends between two RC endpoints in
 * one thread, it_pingpong's loop (every 16th send signaled, each receive
 * posted again after its completion), for callgrind to count what the
 * IT-API adds over the transport: itapi_overhead.sh runs it and prints,
 * per call, the instructions of it_post_send(), it_post_recv() and
 * it_evd_wait() less those of the transport's post and poll they make.
 * On self0 a send completes within its post, so every wait finds its
 * completion at its first look; elsewhere waits also spin.
 *
 *   itapi_overhead [-d interface] [-p port] [-n round trips] [-s 1..8]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "examples/itapi_common.h"

#define DEPTH 64
#define SIGNAL 16

struct end {
	struct itx x;
	it_ep_handle_t ep;
	struct itx_buf sbuf, rbuf;
};

static void die(const char *what)
{
	fprintf(stderr, "itapi_overhead: %s failed\n", what);
	exit(1);
}

static void end_open(struct end *e, const struct itx_opts *o)
{
	it_ep_attributes_t a;

	if (itx_open(&e->x, o, 4 * DEPTH))
		die("IA set-up");
	a = itx_rc_attr(&e->x, DEPTH);
	if (it_ep_rc_create(e->x.pz, e->x.sq, e->x.rq, e->x.cmsg, IT_EP_NO_FLAG,
			    &a, &e->ep) ||
	    itx_buf(&e->x, &e->sbuf, o->size, IT_PRIV_LOCAL) ||
	    itx_buf(&e->x, &e->rbuf, o->size, IT_PRIV_LOCAL))
		die("endpoint set-up");
}

/* The client connects; the server, with a receive posted, accepts. */
static void connect_ends(struct end *srv, struct end *cli,
			 const struct itx_opts *o)
{
	it_conn_qual_t cq = itx_conn_qual(o);
	it_listen_handle_t l;
	it_path_t path;
	it_event_t ev;

	if (itx_post_recv(srv->ep, &srv->rbuf, o->size) ||
	    itx_listen(&srv->x, o, &l) || itx_server_path(&cli->x, o, &path))
		die("listen");
	if (it_ep_connect(cli->ep, &path, NULL, &cq, IT_CONNECT_FLAG_TWO_WAY,
			  NULL, 0))
		die("it_ep_connect");
	if (itx_accept(&srv->x, srv->ep, NULL, 0) ||
	    itx_wait(cli->x.cmsg, IT_CM_MSG_CONN_ESTABLISHED_EVENT, &ev) ||
	    itx_post_recv(cli->ep, &cli->rbuf, o->size))
		die("connect");
}

/* One way: from sends, received by to. */
static void one_way(struct end *from, struct end *to, size_t size,
		    bool signaled)
{
	if (itx_send(from->ep, &from->sbuf, size, 0, signaled, from->x.sq) ||
	    itx_recv(&to->x, to->ep, &to->rbuf, size))
		die("ping-pong");
}

int main(int argc, char **argv)
{
	struct itx_opts o = {
		.dev = "self0",
		.port = 18655,
		.iters = 20000,
		.size = 8,
		.max_size = 8,
	};
	struct end srv, cli;
	unsigned int i;

	if (itx_parse(argc, argv, &o))
		return 2;
	end_open(&srv, &o);
	end_open(&cli, &o);
	connect_ends(&srv, &cli, &o);
	for (i = 0; i < o.iters; i++) {
		one_way(&cli, &srv, o.size, i % SIGNAL == SIGNAL - 1);
		one_way(&srv, &cli, o.size, i % SIGNAL == SIGNAL - 1);
	}
	printf("%u round trips of %zu bytes on %s\n", o.iters, o.size, o.dev);
	fflush(stdout);
	/* the IAs go with the process: a disconnect would need both ends'
	 * events served from this one thread */
	return 0;
}
