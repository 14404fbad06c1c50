/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * it_srq: many endpoints, one shared receive queue.  The server accepts
 * EPS connections with endpoints that all take their receives from one
 * SRQ; the client sends n messages round robin over its endpoints.  The
 * server checks each message, counts them per endpoint and reports the
 * counts back, which the client checks.
 *
 *   it_srq [-d interface] [-p port] [-n iters] [-s size] [-l] [server]
 */
#include <endian.h>
#include <stdio.h>
#include <string.h>

#include "examples/itapi_common.h"

#define EPS 4
#define SRQ_DEPTH 64
#define WINDOW 16
#define DEPTH 32

/* Message i from endpoint e: its header, then a filler. */
static void msg_fill(unsigned char *p, size_t size, unsigned int i,
		     unsigned int e)
{
	size_t k;

	for (k = 0; k < size; k++)
		p[k] = (unsigned char)(i + k);
	p[0] = (unsigned char)e;
}

static int server(struct itx *x, const struct itx_opts *o, struct itx_buf *rbuf,
		  struct itx_buf *sbuf)
{
	it_ep_handle_t ep[EPS];
	it_ep_attributes_t a;
	it_listen_handle_t l;
	it_lmr_triplet_t seg;
	it_srq_handle_t srq;
	uint32_t count[EPS] = { 0 };
	unsigned int i, e, slot;
	it_event_t ev;
	it_status_t st;

	st = it_srq_create(x->pz, 1, SRQ_DEPTH, &srq);
	if (st)
		return itx_fail("it_srq_create", st);
	if (itx_buf(x, rbuf, SRQ_DEPTH * o->size, IT_PRIV_LOCAL) ||
	    itx_buf(x, sbuf, sizeof(count), IT_PRIV_LOCAL))
		return -1;
	for (slot = 0; slot < SRQ_DEPTH; slot++) {
		seg = itx_seg(rbuf, slot * o->size, o->size);
		st = it_post_recv(srq, &seg, 1, slot, IT_COMPLETION_FLAG);
		if (st)
			return itx_fail("it_post_recv", st);
	}
	a = itx_rc_attr(x, DEPTH);
	a.srv.rc.srq = srq;
	if (itx_listen(x, o, &l))
		return -1;
	for (e = 0; e < EPS; e++) {
		st = it_ep_rc_create(x->pz, x->sq, x->rq, x->cmsg, IT_EP_SRQ,
				     &a, &ep[e]);
		if (st)
			return itx_fail("it_ep_rc_create", st);
		if (itx_accept(x, ep[e], NULL, 0))
			return -1;
	}
	for (i = 0; i < o->iters; i++) {
		if (itx_wait(x->rq, IT_DTO_RC_RECV_CMPL_EVENT, &ev))
			return -1;
		slot = (unsigned int)ev.dto_cmpl.cookie;
		for (e = 0; e < EPS && ep[e] != ev.dto_cmpl.ep; e++)
			;
		if (e == EPS || rbuf->p[slot * o->size] != e ||
		    ev.dto_cmpl.transferred_length != o->size) {
			fprintf(stderr,
				"message %u: not from the endpoint it "
				"names\n",
				i);
			return -1;
		}
		count[e]++;
		seg = itx_seg(rbuf, slot * o->size, o->size);
		st = it_post_recv(srq, &seg, 1, slot, IT_COMPLETION_FLAG);
		if (st)
			return itx_fail("it_post_recv", st);
	}
	for (e = 0; e < EPS; e++)
		count[e] = htobe32(count[e]);
	memcpy(sbuf->p, count, sizeof(count));
	seg = itx_seg(sbuf, 0, sizeof(count));
	/* unsignaled: the client disconnects once it has the counts */
	st = it_post_send(ep[0], &seg, 1, 0, 0);
	if (st)
		return itx_fail("it_post_send", st);
	return itx_disconnect(x, ep, EPS, true);
}

static int client(struct itx *x, const struct itx_opts *o, struct itx_buf *rbuf,
		  struct itx_buf *sbuf)
{
	it_ep_handle_t ep[EPS];
	it_ep_attributes_t a;
	it_lmr_triplet_t seg;
	uint32_t count[EPS];
	bool busy[WINDOW] = { false };
	unsigned int i, e, slot, pending = 0;
	it_event_t ev;
	it_status_t st;
	double t0, us;

	if (itx_buf(x, sbuf, WINDOW * o->size, IT_PRIV_LOCAL) ||
	    itx_buf(x, rbuf, sizeof(count), IT_PRIV_LOCAL))
		return -1;
	a = itx_rc_attr(x, DEPTH);
	for (e = 0; e < EPS; e++) {
		st = it_ep_rc_create(x->pz, x->sq, x->rq, x->cmsg,
				     IT_EP_NO_FLAG, &a, &ep[e]);
		if (st)
			return itx_fail("it_ep_rc_create", st);
		if (itx_connect(x, o, ep[e], &ev))
			return -1;
	}
	seg = itx_seg(rbuf, 0, sizeof(count));
	st = it_post_recv(ep[0], &seg, 1, 0, IT_COMPLETION_FLAG);
	if (st)
		return itx_fail("it_post_recv", st);
	t0 = itx_now_us();
	for (i = 0; i < o->iters; i++) {
		/* a buffer is reused once its own send completed: the
		 * endpoints complete in their own orders */
		slot = i % WINDOW;
		while (busy[slot]) {
			if (itx_wait(x->sq, IT_DTO_SEND_CMPL_EVENT, &ev))
				return -1;
			busy[ev.dto_cmpl.cookie % WINDOW] = false;
			pending--;
		}
		e = i % EPS;
		msg_fill(sbuf->p + slot * o->size, o->size, i, e);
		seg = itx_seg(sbuf, slot * o->size, o->size);
		st = it_post_send(ep[e], &seg, 1, i, IT_COMPLETION_FLAG);
		if (st)
			return itx_fail("it_post_send", st);
		busy[slot] = true;
		pending++;
	}
	for (; pending; pending--)
		if (itx_wait(x->sq, IT_DTO_SEND_CMPL_EVENT, NULL))
			return -1;
	if (itx_wait(x->rq, IT_DTO_RC_RECV_CMPL_EVENT, NULL))
		return -1;
	us = itx_now_us() - t0;
	memcpy(count, rbuf->p, sizeof(count));
	printf("interface      %s\n", o->dev);
	printf("messages       %u of %zu bytes over %d endpoints sharing one SRQ of %d\n",
	       o->iters, o->size, EPS, SRQ_DEPTH);
	for (e = 0; e < EPS; e++) {
		count[e] = be32toh(count[e]);
		printf("endpoint %u     %u received\n", e, count[e]);
		if (count[e] != o->iters / EPS + (e < o->iters % EPS ? 1 : 0)) {
			fprintf(stderr, "endpoint %u: wrong count\n", e);
			return -1;
		}
	}
	printf("message rate   %.3f Mmsg/s\n", o->iters / us);
	printf("count check    ok\n");
	return itx_disconnect(x, ep, EPS, false);
}

static int srq(const struct itx_opts *o, bool is_server)
{
	struct itx_buf rbuf = { 0 }, sbuf = { 0 };
	struct itx x;
	int ret = -1;

	if (itx_open(&x, o, 4 * SRQ_DEPTH))
		return -1;
	if (!x.info->srq_support)
		fprintf(stderr, "%s has no shared receive queues\n", o->dev);
	else
		ret = is_server ? server(&x, o, &rbuf, &sbuf) :
				  client(&x, o, &rbuf, &sbuf);
	itx_close(&x);
	itx_buf_free(&rbuf);
	itx_buf_free(&sbuf);
	return ret;
}

int main(int argc, char **argv)
{
	struct itx_opts o = {
		.port = 18529,
		.iters = 1000,
		.size = 128,
		.max_size = 1 << 20,
	};
	int ret = itx_parse(argc, argv, &o);

	return ret ? ret : itx_main(&o, srq);
}
