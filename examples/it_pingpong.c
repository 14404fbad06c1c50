/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * it_pingpong: RC send/receive latency over IT-API.  The client sends a
 * message, the server sends it back, n times; the client checks what
 * comes back and prints the half round-trip time.
 *
 *   it_pingpong [-d interface] [-p port] [-n iters] [-s size] [-l] [server]
 */
#include <stdio.h>
#include <string.h>

#include "examples/itapi_common.h"

#define DEPTH 32
/* Sends report completion one in SIGNAL, which retires the others. */
#define SIGNAL 16

/*
 * The client's last send is signaled too: the server has it when the
 * client ends.  The server never waits for its last: the client, which
 * disconnects once it has it, may flush that completion.
 */
static int post_send(it_ep_handle_t ep, struct itx_buf *b, size_t len,
		     unsigned int i, unsigned int iters, bool server,
		     it_evd_handle_t sq)
{
	bool last = i == iters - 1;
	bool signaled = server ? !last && i % SIGNAL == SIGNAL - 1 :
				 last || i % SIGNAL == SIGNAL - 1;

	return itx_send(ep, b, len, i, signaled, sq);
}

static int pingpong(const struct itx_opts *o, bool server)
{
	struct itx_buf sbuf = { 0 }, rbuf = { 0 };
	it_ep_attributes_t attr;
	it_listen_handle_t l;
	it_ep_handle_t ep;
	unsigned int i;
	it_event_t ev;
	double t0, us;
	int ret = -1;
	size_t k;
	struct itx x;

	if (itx_open(&x, o, 4 * DEPTH))
		return -1;
	attr = itx_rc_attr(&x, DEPTH);
	if (it_ep_rc_create(x.pz, x.sq, x.rq, x.cmsg, IT_EP_NO_FLAG, &attr,
			    &ep) ||
	    itx_buf(&x, &sbuf, o->size, IT_PRIV_LOCAL) ||
	    itx_buf(&x, &rbuf, o->size, IT_PRIV_LOCAL))
		goto out;
	if (server) {
		/* the first receive is there before the client can send */
		if (itx_post_recv(ep, &rbuf, o->size) ||
		    itx_listen(&x, o, &l) || itx_accept(&x, ep, NULL, 0))
			goto out;
		for (i = 0; i < o->iters; i++) {
			if (itx_recv(&x, ep, &rbuf, o->size))
				goto out;
			memcpy(sbuf.p, rbuf.p, o->size);
			if (post_send(ep, &sbuf, o->size, i, o->iters, true,
				      x.sq))
				goto out;
		}
		ret = itx_disconnect(&x, &ep, 1, true);
		goto out;
	}

	/* after the connect: a retried connect resets the endpoint, which
	 * drops the receives posted before */
	if (itx_connect(&x, o, ep, &ev) || itx_post_recv(ep, &rbuf, o->size))
		goto out;
	for (k = 0; k < o->size; k++)
		sbuf.p[k] = (unsigned char)(k * 13 + 1);
	t0 = itx_now_us();
	for (i = 0; i < o->iters; i++) {
		sbuf.p[0] = (unsigned char)i;
		if (post_send(ep, &sbuf, o->size, i, o->iters, false, x.sq) ||
		    itx_recv(&x, ep, &rbuf, o->size))
			goto out;
		if (rbuf.p[0] != (unsigned char)i) {
			fprintf(stderr, "round trip %u: wrong message\n", i);
			goto out;
		}
	}
	us = itx_now_us() - t0;
	if (memcmp(rbuf.p, sbuf.p, o->size)) {
		fprintf(stderr, "the last message came back changed\n");
		goto out;
	}
	printf("interface      %s\n", o->dev);
	printf("message size   %zu bytes, %u round trips\n", o->size, o->iters);
	printf("send latency   %.2f us (half round trip)\n", us / o->iters / 2);
	printf("data check     ok\n");
	ret = itx_disconnect(&x, &ep, 1, false);
out:
	itx_close(&x);
	itx_buf_free(&sbuf);
	itx_buf_free(&rbuf);
	return ret;
}

int main(int argc, char **argv)
{
	struct itx_opts o = {
		.port = 18525,
		.iters = 1000,
		.size = 64,
		.max_size = 1 << 24,
	};
	int ret = itx_parse(argc, argv, &o);

	return ret ? ret : itx_main(&o, pingpong);
}
