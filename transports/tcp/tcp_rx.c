/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The read side of a connection, run by the progress thread.  Headers
 * are read into a staging buffer, many per recv(); each is parsed
 * (tcp_frame_parse: every field checked) and its destination resolved
 * before any of its payload is read.  A payload in the staging buffer is
 * copied out; the rest of a large one is read with readv() straight into
 * registered memory, with a little staging room behind it for the next
 * header.  Payload whose request failed its checks is read and discarded.
 */
#include <sched.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <utlist.h>

#include <openrdma/log.h>

#include "transports/tcp/tcp.h"
#include "core/probe.h"
#include "core/sw/dma.h"

/* Bytes one connection may consume per turn before the others. */
#define RX_BUDGET (4u << 20)
/* Payload read straight into memory from this many bytes on. */
#define RX_DIRECT_MIN 4096
/* Staging room a direct read may fill after the payload. */
#define RX_TAIL 1024
/* A payload with this much still to come raises the socket's low-water
 * mark, up to RX_LOWAT_MAX. */
#define RX_LOWAT_MIN (128u << 10)
#define RX_LOWAT_MAX (512u << 10)

enum {
	RX_EOF = 1, /* the peer closed its side */
	RX_AGAIN = 2, /* no more data now */
};

/* What a turn's frames may have given the writer to do. */
enum {
	RX_SAW_ANSWER = 1 << 0, /* answers or acks: requests may go on */
	RX_SAW_REQUEST = 1 << 1, /* requests: answers may wait */
};

/* Reads into the staging buffer; returns the count, RX_EOF as 0, or a
 * negative code (-EAGAIN when nothing is there). */
static ssize_t read_staging(struct tcp_conn *c)
{
	struct tcp_rx *rx = &c->rx;
	ssize_t n;

	if (rx->pos == rx->end) {
		rx->pos = 0;
		rx->end = 0;
	} else if (rx->cap - rx->end < TCP_FRAME_HDR_MAX) {
		memmove(rx->buf, rx->buf + rx->pos, rx->end - rx->pos);
		rx->end -= rx->pos;
		rx->pos = 0;
	}
	if (rx->drained)
		return -EAGAIN;
	n = tcp_sock_recv(c->poll.fd, rx->buf + rx->end, rx->cap - rx->end);
	if (n < 0)
		return n;
	if (n) {
		tcp_conn_count(&c->rx_count);
		core_probe_mark(CORE_PROBE_RX);
	}
	/* less than asked: the socket is empty, and what comes next raises
	 * a new edge (or the next poll looks again): no recv() just to hear
	 * EAGAIN */
	rx->drained = n && (size_t)n < rx->cap - rx->end &&
		      !atomic_load_explicit(&c->rdhup, memory_order_relaxed);
	rx->end += (size_t)n;
	return n;
}

/* Copies len payload bytes from src to where the frame's payload goes. */
static void sink_put(struct tcp_rx *rx, const uint8_t *src, size_t len)
{
	struct iovec *v;
	size_t n;

	switch (rx->sink) {
	case TCP_SINK_MEM:
		while (len && rx->iovidx < rx->iovcnt) {
			v = &rx->iov[rx->iovidx];
			n = v->iov_len - rx->iovoff;
			if (n > len)
				n = len;
			sw_dma_begin();
			memcpy((uint8_t *)v->iov_base + rx->iovoff, src, n);
			sw_dma_end();
			src += n;
			len -= n;
			rx->iovoff += n;
			if (rx->iovoff == v->iov_len) {
				rx->iovidx++;
				rx->iovoff = 0;
			}
		}
		break;
	case TCP_SINK_CTL:
		memcpy(rx->ctl + (rx->f.length - rx->left), src, len);
		break;
	default:
		break;
	}
}

/* Moves the payload cursor on by n bytes read straight into memory. */
static void sink_skip(struct tcp_rx *rx, size_t n)
{
	size_t k;

	while (n && rx->iovidx < rx->iovcnt) {
		k = rx->iov[rx->iovidx].iov_len - rx->iovoff;
		if (k > n)
			k = n;
		n -= k;
		rx->iovoff += k;
		if (rx->iovoff == rx->iov[rx->iovidx].iov_len) {
			rx->iovidx++;
			rx->iovoff = 0;
		}
	}
}

/* Reads payload straight into memory, and what follows into staging. */
static ssize_t read_direct(struct tcp_conn *c)
{
	struct tcp_rx *rx = &c->rx;
	struct iovec iov[SW_MAX_SGE + 1];
	uint64_t want = rx->left;
	size_t part, off = rx->iovoff;
	int i, cnt = 0;
	ssize_t n;

	for (i = rx->iovidx; i < rx->iovcnt && want; i++) {
		part = rx->iov[i].iov_len - off;
		if (part > want)
			part = (size_t)want;
		iov[cnt].iov_base = (uint8_t *)rx->iov[i].iov_base + off;
		iov[cnt].iov_len = part;
		cnt++;
		want -= part;
		off = 0;
	}
	rx->pos = 0;
	rx->end = 0;
	iov[cnt].iov_base = rx->buf;
	iov[cnt].iov_len = RX_TAIL < rx->cap ? RX_TAIL : rx->cap;
	cnt++;
	if (rx->drained)
		return -EAGAIN;
	sw_dma_begin();
	n = tcp_sock_readv(c->poll.fd, iov, cnt);
	sw_dma_end();
	if (n <= 0)
		return n;
	tcp_conn_count(&c->rx_count);
	rx->drained = (uint64_t)n < rx->left + iov[cnt - 1].iov_len &&
		      !atomic_load_explicit(&c->rdhup, memory_order_relaxed);
	part = (uint64_t)n < rx->left ? (size_t)n : (size_t)rx->left;
	sink_skip(rx, part);
	rx->left -= part;
	rx->end = (size_t)n - part;
	return n;
}

/* A frame's header came: decides what becomes of it and its payload. */
static int frame_begin(struct tcp_conn *c, unsigned int *saw)
{
	struct tcp_rx *rx = &c->rx;
	struct tcp_frame *f = &rx->f;
	struct tcp_qp *qp = tcp_conn_qp(c);
	struct sw_pipe_pass pass;
	int ret;

	rx->sink = TCP_SINK_DISCARD;
	rx->status = 0;
	if (!c->greeted && f->opcode != TCP_OP_KEEPALIVE) {
		switch (c->kind) {
		case TCP_CONN_CM_PASSIVE:
			ret = f->opcode == TCP_OP_CONNECT;
			break;
		case TCP_CONN_CM_ACTIVE:
			ret = f->opcode == TCP_OP_ACCEPT ||
			      f->opcode == TCP_OP_REJECT;
			break;
		default:
			ret = f->opcode == TCP_OP_HELLO;
			break;
		}
		if (!ret)
			return -OPENRDMA_EPROTO;
	}
	if ((f->flags & TCP_FLAG_ACK) && f->opcode != TCP_OP_KEEPALIVE) {
		if (!c->initiator)
			return -OPENRDMA_EPROTO;
		if (qp) {
			sw_pipe_begin(&qp->pipe, &pass);
			ret = sw_pipe_ack(&qp->pipe, &pass, f->ack);
			sw_pipe_end(&qp->pipe, &pass);
			if (ret)
				return ret;
			*saw |= RX_SAW_ANSWER;
		}
	}
	switch (f->opcode) {
	case TCP_OP_SEND:
	case TCP_OP_SEND_IMM:
	case TCP_OP_SEND_INV:
	case TCP_OP_WRITE:
	case TCP_OP_WRITE_IMM:
	case TCP_OP_READ:
	case TCP_OP_CMP_SWAP:
	case TCP_OP_FETCH_ADD:
		if (!c->target || !c->greeted)
			return -OPENRDMA_EPROTO;
		tcp_rc_request(c, qp, f);
		*saw |= RX_SAW_REQUEST;
		return 0;
	case TCP_OP_ACK:
	case TCP_OP_NAK:
	case TCP_OP_READ_RESP:
	case TCP_OP_ATOMIC_RESP:
		if (!c->initiator || !c->greeted)
			return -OPENRDMA_EPROTO;
		*saw |= RX_SAW_ANSWER;
		return tcp_rc_answer(c, qp, f);
	case TCP_OP_CONNECT:
	case TCP_OP_ACCEPT:
	case TCP_OP_REJECT:
	case TCP_OP_RTU:
	case TCP_OP_DISCONNECT:
		if (c->kind != TCP_CONN_CM_ACTIVE &&
		    c->kind != TCP_CONN_CM_PASSIVE)
			return -OPENRDMA_EPROTO;
		rx->sink = TCP_SINK_CTL;
		return 0;
	case TCP_OP_HELLO:
		if (c->kind != TCP_CONN_QP_IN && c->kind != TCP_CONN_QP_OUT)
			return -OPENRDMA_EPROTO;
		return 0;
	case TCP_OP_KEEPALIVE:
		return 0;
	default:
		/* datagrams belong to UDP */
		return -OPENRDMA_EPROTO;
	}
}

/*
 * A frame's payload is in (or was discarded).  Marks the turn it ends in
 * as well as the one it began in: a large payload ends turns later, and
 * its acknowledgement (or the requests its answer lets go) must be
 * written then, not when some later frame or the keepalive comes.
 */
static int frame_end(struct tcp_conn *c, unsigned int *saw)
{
	struct tcp_rx *rx = &c->rx;
	struct tcp_frame *f = &rx->f;

	switch (f->opcode) {
	case TCP_OP_SEND:
	case TCP_OP_SEND_IMM:
	case TCP_OP_SEND_INV:
	case TCP_OP_WRITE:
	case TCP_OP_WRITE_IMM:
		tcp_rc_request_end(c, tcp_conn_qp(c), f);
		*saw |= RX_SAW_REQUEST;
		return 0;
	case TCP_OP_READ_RESP:
		*saw |= RX_SAW_ANSWER;
		return tcp_rc_answer_end(c, tcp_conn_qp(c), f);
	case TCP_OP_CONNECT:
	case TCP_OP_ACCEPT:
	case TCP_OP_REJECT:
	case TCP_OP_RTU:
	case TCP_OP_DISCONNECT:
		/* the CM takes its lock before the memory guard (it writes
		 * frames): this frame has no payload in memory, the guard
		 * can go for a moment */
		tcp_mem_leave(c->ctx);
		tcp_cm_frame(c, f, rx->ctl);
		tcp_mem_enter(c->ctx);
		return 0;
	case TCP_OP_HELLO:
		tcp_manual_hello(c, f);
		return 0;
	default:
		return 0;
	}
}

/* Reads and handles frames until the socket is empty, the budget is
 * spent (only if more is given: RX_AGAIN then, with *more set), or the
 * connection ends. */
static int rx_loop(struct tcp_conn *c, unsigned int *saw, bool *more)
{
	struct tcp_rx *rx = &c->rx;
	size_t consumed = 0, need;
	uint64_t take;
	ssize_t n;
	int ret;

	for (;;) {
		if (atomic_load(&c->state) != TCP_CONN_OPEN)
			return 0;
		if (more && consumed > RX_BUDGET) {
			*more = true;
			return RX_AGAIN;
		}
		if (rx->state == TCP_RX_HDR) {
			ret = tcp_frame_parse(rx->buf + rx->pos,
					      rx->end - rx->pos, &rx->f, &need);
			if (ret < 0) {
				openrdma_warn("tcp",
					      "malformed frame from the peer: "
					      "closing the connection");
				return ret;
			}
			if (!ret) {
				n = read_staging(c);
				if (n == 0)
					return RX_EOF;
				if (n < 0)
					return n == -EAGAIN ? RX_AGAIN : (int)n;
				consumed += (size_t)n;
				continue;
			}
			rx->pos += (size_t)ret;
			ret = frame_begin(c, saw);
			if (ret)
				return ret;
			if (!rx->f.length) {
				ret = frame_end(c, saw);
				if (ret)
					return ret;
				continue;
			}
			rx->left = rx->f.length;
			rx->iovidx = 0;
			rx->iovoff = 0;
			rx->state = TCP_RX_BODY;
		}
		if (rx->pos < rx->end) {
			take = rx->end - rx->pos;
			if (take > rx->left)
				take = rx->left;
			sink_put(rx, rx->buf + rx->pos, (size_t)take);
			rx->pos += (size_t)take;
			rx->left -= take;
		}
		if (!rx->left) {
			rx->state = TCP_RX_HDR;
			ret = frame_end(c, saw);
			if (ret)
				return ret;
			continue;
		}
		if (rx->sink == TCP_SINK_MEM && rx->left >= RX_DIRECT_MIN)
			n = read_direct(c);
		else
			n = read_staging(c);
		if (n == 0)
			return RX_EOF;
		if (n < 0)
			return n == -EAGAIN ? RX_AGAIN : (int)n;
		consumed += (size_t)n;
	}
}

/*
 * Most turns of a busy poller find the socket empty.  Between frames
 * nothing is read into registered memory, so the first read needs no
 * memory guard: returns 0 if there is something to parse (or a payload
 * to read), else what rx_loop() would have returned.
 */
static int rx_first(struct tcp_conn *c)
{
	struct tcp_rx *rx = &c->rx;
	ssize_t n;

	if (rx->state != TCP_RX_HDR || rx->pos != rx->end)
		return 0;
	n = read_staging(c);
	if (n > 0)
		return 0;
	if (n == 0)
		return RX_EOF;
	return n == -EAGAIN ? RX_AGAIN : (int)n;
}

/*
 * Between the segments of a large payload the progress thread would wake
 * for each one (64 KiB over loopback), and the sender pays for each
 * wake-up.  While one is being read, the socket's low-water mark asks
 * the kernel to wake us only once as much as remains of it (up to
 * RX_LOWAT_MAX) is there; the peer's end and errors wake us as before.
 * It never exceeds what the current payload still brings, so nothing
 * that will come can be left unannounced; the kernel holds it to half a
 * fixed SO_RCVBUF and wakes a reader whose receive window is closing, so
 * a small buffer cannot stall the peer.  A busy poller reads without
 * waiting and keeps it at one byte.
 */
static void lowat_set(struct tcp_conn *c, bool app)
{
	struct tcp_rx *rx = &c->rx;
	int want = 0;

	if (!app && rx->state == TCP_RX_BODY && rx->sink == TCP_SINK_MEM &&
	    rx->left >= RX_LOWAT_MIN)
		want = rx->left < RX_LOWAT_MAX ? (int)rx->left :
						 (int)RX_LOWAT_MAX;
	if (want == rx->lowat)
		return;
	/* refused: the next turn tries again */
	if (!tcp_sock_rcvlowat(c->poll.fd, want ? want : 1))
		rx->lowat = want;
}

/* One turn of reading, with the read token held. */
static void rx_turn(struct tcp_conn *c, bool app)
{
	struct tcp_ctx *tctx = c->ctx;
	struct tcp_qp *qp;
	bool more = false;
	unsigned int saw = 0;
	int ret;

	/* an edge, or a poll: the socket may hold data again */
	c->rx.drained = false;
	c->rx.want_write = false;
	ret = rx_first(c);
	if (!ret) {
		tcp_mem_enter(tctx);
		/* memory was deregistered since the payload's place was
		 * chosen */
		if (c->rx.state == TCP_RX_BODY && c->rx.sink == TCP_SINK_MEM &&
		    c->rx.gen != atomic_load(&tctx->mem_gen) &&
		    !tcp_rc_sink_check(c, tcp_conn_qp(c))) {
			c->rx.sink = TCP_SINK_DISCARD;
			c->rx.status = OPENRDMA_WC_LOC_PROT_ERR;
		}
		ret = rx_loop(c, &saw, app ? NULL : &more);
		c->rx.gen = atomic_load(&tctx->mem_gen);
		tcp_mem_leave(tctx);
	}
	/* a busy poller's empty polls find the mark at one byte */
	if (ret == RX_AGAIN && !more && (!app || c->rx.lowat))
		lowat_set(c, app);

	if (ret == RX_EOF) {
		/* after DISCONNECT or REJECT the end is expected */
		tcp_conn_close(c, c->bye ? 0 : -OPENRDMA_ECONNRESET, false);
		return;
	}
	if (ret < 0 && ret != -EAGAIN) {
		tcp_conn_close(c, ret, true);
		return;
	}
	if (more && !c->on_rx_again) {
		c->on_rx_again = true;
		tcp_conn_get(c);
		DL_APPEND2(tctx->rx_again, c, rx_prev, rx_next);
	}
	if (!saw)
		return;
	/*
	 * Requests alone leave nothing to write but a held ack; answers or a
	 * due ack this turn queued, requests the window held back, do.  What
	 * others queued they kicked for themselves.
	 */
	qp = tcp_conn_qp(c);
	if (c->rx.want_write ||
	    ((saw & RX_SAW_ANSWER) && qp && sw_pipe_may_send(&qp->pipe)))
		tcp_tx_kick(c);
	/* a poller sends its delayed acknowledgements on its next polls */
	if (!app)
		tcp_ack_list_add(c);
}

void tcp_rx_run(struct tcp_conn *c, bool app)
{
	core_lock_acquire(&c->lock);
	if (c->rx_busy) {
		/* the reader sees it before letting go */
		c->rx_kick = true;
		core_lock_release(&c->lock);
		return;
	}
	c->rx_busy = true;
	core_lock_release(&c->lock);
	for (;;) {
		if (atomic_load(&c->state) == TCP_CONN_OPEN)
			rx_turn(c, app);
		core_lock_acquire(&c->lock);
		if (!c->rx_kick) {
			c->rx_busy = false;
			core_lock_release(&c->lock);
			return;
		}
		c->rx_kick = false;
		core_lock_release(&c->lock);
	}
}

void tcp_rx_quiesce(struct tcp_conn *c)
{
	core_lock_acquire(&c->lock);
	while (c->rx_busy) {
		core_lock_release(&c->lock);
		sched_yield();
		core_lock_acquire(&c->lock);
	}
	core_lock_release(&c->lock);
}

void tcp_rx_fini(struct tcp_conn *c)
{
	struct tcp_rx *rx = &c->rx;

	struct tcp_qp *qp = tcp_conn_qp(c);

	if (rx->placing && qp)
		sw_place_end(&qp->sw, &rx->place, OPENRDMA_WC_WR_FLUSH_ERR);
	rx->placing = false;
}
