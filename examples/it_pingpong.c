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
	it_lmr_triplet_t seg = itx_seg(b, 0, len);
	bool last = i == iters - 1;
	it_dto_flags_t flags = 0;
	it_status_t st;

	if (server ? !last && i % SIGNAL == SIGNAL - 1 :
		     last || i % SIGNAL == SIGNAL - 1)
		flags = IT_COMPLETION_FLAG;

	st = it_post_send(ep, &seg, 1, i, flags);
	if (st)
		return itx_fail("it_post_send", st);
	return flags ? itx_wait(sq, IT_DTO_SEND_CMPL_EVENT, NULL) : 0;
}

static int post_recv(it_ep_handle_t ep, struct itx_buf *b, size_t len)
{
	it_lmr_triplet_t seg = itx_seg(b, 0, len);
	it_status_t st;

	st = it_post_recv(ep, &seg, 1, 0, IT_COMPLETION_FLAG);
	return st ? itx_fail("it_post_recv", st) : 0;
}

/* Receives one message of len bytes and posts the next receive. */
static int recv_one(struct itx *x, it_ep_handle_t ep, struct itx_buf *b,
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
	return post_recv(ep, b, len);
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
		if (post_recv(ep, &rbuf, o->size) || itx_listen(&x, o, &l) ||
		    itx_accept(&x, ep, NULL, 0))
			goto out;
		for (i = 0; i < o->iters; i++) {
			if (recv_one(&x, ep, &rbuf, o->size))
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
	if (itx_connect(&x, o, ep, &ev) || post_recv(ep, &rbuf, o->size))
		goto out;
	for (k = 0; k < o->size; k++)
		sbuf.p[k] = (unsigned char)(k * 13 + 1);
	t0 = itx_now_us();
	for (i = 0; i < o->iters; i++) {
		sbuf.p[0] = (unsigned char)i;
		if (post_send(ep, &sbuf, o->size, i, o->iters, false, x.sq) ||
		    recv_one(&x, ep, &rbuf, o->size))
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
