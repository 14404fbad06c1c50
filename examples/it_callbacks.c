/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * it_callbacks: the ping-pong of it_pingpong, driven by EVD callbacks
 * instead of waits.  Each side attaches a callback to its receive SEVD
 * that takes the completions, posts the next receive and sends the next
 * message once the send before it completed: the one send buffer is the
 * application's again only then, even when the answer to that send has
 * already come.  The main thread only waits for the end.
 *
 *   it_callbacks [-d interface] [-p port] [-n iters] [-s size] [-l] [server]
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "examples/itapi_common.h"

#define DEPTH 16

struct cb_side {
	struct itx x;
	it_ep_handle_t ep;
	struct itx_buf sbuf, rbuf;
	size_t size;
	unsigned int iters;
	bool server;
	/* written by the callbacks, which never run concurrently per SEVD */
	unsigned int received;
	unsigned int sent;
	unsigned int completed; /* sends */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;
	bool failed;
};

static void finish(struct cb_side *s, bool failed)
{
	pthread_mutex_lock(&s->lock);
	s->done = true;
	s->failed |= failed;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

/*
 * Waits for the completion of every send posted, before the send buffer
 * is written again.  Taken here rather than by a callback of its own,
 * the request SEVD holds at most the one send in flight, however late
 * the callback threads run.
 */
static int sends_done(struct cb_side *s)
{
	while (s->completed < s->sent) {
		if (itx_wait(s->x.sq, IT_DTO_SEND_CMPL_EVENT, NULL)) {
			fprintf(stderr, "%s: send %u did not complete\n",
				s->server ? "server" : "client",
				s->completed + 1);
			return -1;
		}
		s->completed++;
	}
	return 0;
}

/* Sends what the send buffer holds (sends_done() came first). */
static it_status_t send_msg(struct cb_side *s)
{
	it_lmr_triplet_t seg = itx_seg(&s->sbuf, 0, s->size);
	it_status_t st;

	s->sent++;
	st = it_post_send(s->ep, &seg, 1, s->sent, IT_COMPLETION_FLAG);
	if (st)
		fprintf(stderr,
			"%s: it_post_send %u failed: IT-API status %d\n",
			s->server ? "server" : "client", s->sent, (int)st);
	return st;
}

/* A message arrived: answer it, or (client) send the next one. */
static void on_recv(it_evd_handle_t evd, void *arg)
{
	struct cb_side *s = arg;
	it_lmr_triplet_t seg;
	it_event_t ev;

	while (it_evd_dequeue(evd, &ev) == IT_SUCCESS) {
		if (ev.dto_cmpl.dto_status != IT_DTO_SUCCESS ||
		    ev.dto_cmpl.transferred_length != s->size) {
			fprintf(stderr,
				"%s: receive %u failed: status %d, %zu bytes\n",
				s->server ? "server" : "client",
				s->received + 1, (int)ev.dto_cmpl.dto_status,
				(size_t)ev.dto_cmpl.transferred_length);
			finish(s, true);
			return;
		}
		s->received++;
		seg = itx_seg(&s->rbuf, 0, s->size);
		if (s->received < s->iters &&
		    it_post_recv(s->ep, &seg, 1, 0, IT_COMPLETION_FLAG)) {
			finish(s, true);
			return;
		}
		if (s->server) {
			if (sends_done(s)) {
				finish(s, true);
				return;
			}
			memcpy(s->sbuf.p, s->rbuf.p, s->size);
			if (send_msg(s))
				finish(s, true);
			else if (s->received == s->iters)
				finish(s, false);
			continue;
		}
		if (s->rbuf.p[0] != (unsigned char)s->received) {
			fprintf(stderr, "message %u came back wrong\n",
				s->received);
			finish(s, true);
			return;
		}
		if (s->received == s->iters) {
			finish(s, false);
			return;
		}
		if (sends_done(s)) {
			finish(s, true);
			return;
		}
		s->sbuf.p[0] = (unsigned char)(s->received + 1);
		if (send_msg(s))
			finish(s, true);
	}
}

static int wait_done(struct cb_side *s)
{
	struct timespec until;
	int ret = 0;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 60;
	pthread_mutex_lock(&s->lock);
	while (!s->done && ret != ETIMEDOUT)
		ret = pthread_cond_timedwait(&s->cond, &s->lock, &until);
	pthread_mutex_unlock(&s->lock);
	if (!s->done)
		fprintf(stderr, "timed out after %u messages\n", s->received);
	return s->done && !s->failed ? 0 : -1;
}

static int setup(struct cb_side *s, const struct itx_opts *o)
{
	it_ep_attributes_t attr;
	it_lmr_triplet_t seg;
	it_status_t st;

	if (itx_open(&s->x, o, 4 * DEPTH))
		return -1;
	attr = itx_rc_attr(&s->x, DEPTH);
	st = it_ep_rc_create(s->x.pz, s->x.sq, s->x.rq, s->x.cmsg,
			     IT_EP_NO_FLAG, &attr, &s->ep);
	if (st)
		return itx_fail("it_ep_rc_create", st);
	if (itx_buf(&s->x, &s->sbuf, s->size, IT_PRIV_LOCAL) ||
	    itx_buf(&s->x, &s->rbuf, s->size, IT_PRIV_LOCAL))
		return -1;
	/* the client's first receive follows its connect, which resets
	 * the endpoint (and drops its receives) when it must retry */
	seg = itx_seg(&s->rbuf, 0, s->size);
	st = s->server ? it_post_recv(s->ep, &seg, 1, 0, IT_COMPLETION_FLAG) :
			 IT_SUCCESS;
	if (!st)
		st = it_evd_callback_attach(s->x.rq, on_recv, s);
	return st ? itx_fail("callback set-up", st) : 0;
}

static int callbacks(const struct itx_opts *o, bool server)
{
	struct cb_side s;
	it_listen_handle_t l;
	it_lmr_triplet_t seg;
	it_event_t ev;
	double t0, us = 0;
	int ret = -1;

	memset(&s, 0, sizeof(s));
	s.size = o->size;
	s.iters = o->iters;
	s.server = server;
	pthread_mutex_init(&s.lock, NULL);
	pthread_cond_init(&s.cond, NULL);
	if (setup(&s, o))
		goto out;
	if (server) {
		if (itx_listen(&s.x, o, &l) || itx_accept(&s.x, s.ep, NULL, 0))
			goto out;
		ret = wait_done(&s);
		if (!ret)
			ret = itx_disconnect(&s.x, &s.ep, 1, true);
		goto out;
	}
	seg = itx_seg(&s.rbuf, 0, s.size);
	if (itx_connect(&s.x, o, s.ep, &ev) ||
	    it_post_recv(s.ep, &seg, 1, 0, IT_COMPLETION_FLAG))
		goto out;
	t0 = itx_now_us();
	s.sbuf.p[0] = 1;
	if (send_msg(&s)) {
		itx_fail("it_post_send", IT_ERR_ABORT);
		goto out;
	}
	ret = wait_done(&s);
	us = itx_now_us() - t0;
	if (!ret)
		ret = itx_disconnect(&s.x, &s.ep, 1, false);
	if (!ret) {
		printf("interface      %s\n", o->dev);
		printf("message size   %zu bytes, %u round trips by callbacks\n",
		       o->size, o->iters);
		printf("send latency   %.2f us (half round trip)\n",
		       us / o->iters / 2);
	}
out:
	/* detaching waits for a running callback: then nothing touches s */
	if (s.x.ia)
		it_evd_callback_detach(s.x.rq);
	itx_close(&s.x);
	itx_buf_free(&s.sbuf);
	itx_buf_free(&s.rbuf);
	pthread_cond_destroy(&s.cond);
	pthread_mutex_destroy(&s.lock);
	return ret;
}

int main(int argc, char **argv)
{
	struct itx_opts o = {
		.port = 18527,
		.iters = 1000,
		.size = 64,
		.max_size = 1 << 24,
	};
	int ret = itx_parse(argc, argv, &o);

	return ret ? ret : itx_main(&o, callbacks);
}
