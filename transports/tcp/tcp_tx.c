/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The write side of a connection.  Whoever has something to send (a
 * thread posting, the progress thread answering or continuing, the RNR
 * timer) calls tcp_tx_kick(); one of them at a time holds the token and
 * writes for all: it gathers what is queued into a batch (control frames,
 * then answers, then requests, each frame a header and iovecs straight
 * into registered memory) and hands the batch to the kernel with one
 * sendmsg().  The others leave their work queued and return.  When the
 * socket is full the token is put down and EPOLLOUT brings the progress
 * thread back to it.
 *
 * Acknowledgements ride on the next frame the target sends; alone, they go
 * once due: at once when the initiator asked (ACKREQ), else after
 * ack_delay_us.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <openrdma/log.h>

#include "transports/tcp/tcp.h"
#include "core/sw/dma.h"

bool tcp_tx_room(struct tcp_conn *conn, int niov)
{
	struct tcp_tx *tx = &conn->tx;

	return tx->nframes < TCP_TX_FRAMES && tx->iov_n + niov <= TCP_TX_IOV;
}

static void add_iov(struct tcp_tx *tx, void *ptr, size_t len,
		    const struct tcp_guard *guard)
{
	tx->iov[tx->iov_n].iov_base = ptr;
	tx->iov[tx->iov_n].iov_len = len;
	if (guard) {
		tx->guard[tx->iov_n] = *guard;
		tx->has_mem = true;
	} else {
		tx->guard[tx->iov_n].key = 0;
	}
	tx->iov_n++;
}

void tcp_tx_frame(struct tcp_conn *conn, const struct tcp_frame *f)
{
	struct tcp_tx *tx = &conn->tx;
	uint8_t *hdr = tx->hdr[tx->nframes++];

	add_iov(tx, hdr, tcp_frame_encode(f, hdr), NULL);
}

void tcp_tx_mem(struct tcp_conn *conn, void *ptr, size_t len,
		const struct tcp_guard *guard)
{
	if (len)
		add_iov(&conn->tx, ptr, len, guard);
}

static void batch_reset(struct tcp_tx *tx)
{
	tx->iov_n = 0;
	tx->iov_pos = 0;
	tx->nframes = 0;
	tx->nctl = 0;
	tx->has_mem = false;
	tx->stale = false;
	tx->shut_after = false;
	tx->ack_out = false;
}

/* Clears the pending acknowledgement psn, which went out. */
static void ack_sent(struct tcp_conn *conn, uint32_t psn)
{
	core_lock_acquire(&conn->lock);
	/* a newer one arrived meanwhile: it stays */
	if (conn->ack_pending && conn->ack_psn == psn) {
		__atomic_store_n(&conn->ack_pending, false, __ATOMIC_RELAXED);
		conn->ack_due = false;
	}
	core_lock_release(&conn->lock);
}

/* The batch is on its way: frees what it held. */
static void batch_done(struct tcp_conn *conn)
{
	struct tcp_tx *tx = &conn->tx;
	int i;

	if (tx->ack_out)
		ack_sent(conn, tx->ack_psn);
	for (i = 0; i < tx->nctl; i++)
		free(tx->ctl[i]);
	if (tx->shut_after) {
		/* DISCONNECT or REJECT was the last word: the peer reads up
		 * to it and sees the end */
		__atomic_store_n(&conn->shut, true, __ATOMIC_RELAXED);
		shutdown(conn->poll.fd, SHUT_WR);
	}
	batch_reset(tx);
}

/* Answers queued under conn->lock, as frames.  Called with it held. */
static void fill_answers(struct tcp_conn *conn)
{
	struct tcp_resp *r;
	struct tcp_frame f;
	struct tcp_guard g;

	while (conn->resp_n && tcp_tx_room(conn, 2)) {
		r = &conn->resp[conn->resp_head];
		memset(&f, 0, sizeof(f));
		f.opcode = r->opcode;
		f.qpn = conn->peer_qpn;
		f.psn = r->psn;
		switch (r->opcode) {
		case TCP_OP_NAK:
			f.syndrome = r->syndrome;
			f.rnr_timer = r->rnr_timer;
			tcp_tx_frame(conn, &f);
			break;
		case TCP_OP_ATOMIC_RESP:
			f.value = r->value;
			tcp_tx_frame(conn, &f);
			break;
		default:
			f.length = (uint32_t)r->len;
			tcp_tx_frame(conn, &f);
			g.key = r->rkey;
			g.access = OPENRDMA_ACCESS_REMOTE_READ;
			g.pd = r->pd;
			g.addr = r->raddr;
			g.len = r->len;
			g.ptr = r->ptr;
			tcp_tx_mem(conn, r->ptr, (size_t)r->len, &g);
			/* checked when the request came, maybe before the
			 * batch's generation: look again before sending */
			if (r->len && r->gen != conn->tx.gen)
				conn->tx.stale = true;
			break;
		}
		conn->resp_head = (conn->resp_head + 1) % TCP_RESP_MAX;
		conn->resp_n--;
	}
}

/* The batch carries the acknowledgement of psn. */
static void ack_carried(struct tcp_tx *tx, uint32_t psn)
{
	tx->ack_out = true;
	tx->ack_psn = psn;
}

static void add_ctl(struct tcp_tx *tx, struct tcp_ctl *ctl)
{
	tx->nframes++;
	add_iov(tx, ctl->hdr, ctl->hlen, NULL);
	if (ctl->plen)
		add_iov(tx, ctl->pdata, ctl->plen, NULL);
	tx->ctl[tx->nctl++] = ctl;
	tx->shut_after = ctl->shut_after;
}

/* A standalone acknowledgement (or keepalive, without one). */
static void add_ack(struct tcp_conn *conn, uint32_t ack)
{
	struct tcp_frame f;

	memset(&f, 0, sizeof(f));
	f.opcode = TCP_OP_ACK;
	f.qpn = conn->peer_qpn;
	f.flags = TCP_FLAG_ACK;
	f.ack = ack;
	tcp_tx_frame(conn, &f);
	ack_carried(&conn->tx, ack);
}

/* The batch: control frames, answers, requests, a lone acknowledgement
 * or keepalive, as far as it has room. */
static void gather(struct tcp_conn *conn, struct tcp_qp *qp)
{
	struct tcp_tx *tx = &conn->tx;
	struct tcp_ctl *ctl;
	struct tcp_frame f;
	bool has_ack = false, due = false, keepalive, requests;
	uint32_t ack = 0;

	batch_reset(tx);
	tx->gen = atomic_load(&conn->ctx->mem_gen);
	core_lock_acquire(&conn->lock);
	/*
	 * Control frames first (ACCEPT precedes the requests that follow
	 * it), except the last word (DISCONNECT, REJECT): what the target
	 * executed before it, its answers and acknowledgement, goes first.
	 */
	while ((ctl = conn->ctl_head) && tcp_tx_room(conn, 2) &&
	       tx->nctl < TCP_TX_FRAMES && !ctl->shut_after) {
		conn->ctl_head = ctl->next;
		if (!conn->ctl_head)
			conn->ctl_tail = NULL;
		add_ctl(tx, ctl);
	}
	fill_answers(conn);
	/* an acknowledgement may not pass an answer still queued */
	if (conn->ack_pending && !conn->resp_n) {
		has_ack = true;
		ack = conn->ack_psn;
		due = conn->ack_due;
	}
	if (ctl && ctl->shut_after && !conn->resp_n && tcp_tx_room(conn, 3)) {
		core_lock_release(&conn->lock);
		if (has_ack)
			add_ack(conn, ack);
		core_lock_acquire(&conn->lock);
		conn->ctl_head = ctl->next;
		if (!conn->ctl_head)
			conn->ctl_tail = NULL;
		add_ctl(tx, ctl);
		core_lock_release(&conn->lock);
		return;
	}
	keepalive = conn->want_keepalive;
	conn->want_keepalive = false;
	/* confirmed is set under conn->lock by the peer's HELLO */
	requests = qp && conn->initiator && conn->confirmed;
	core_lock_release(&conn->lock);

	if (has_ack && requests) {
		/* on the first request, if there is one */
		tcp_rc_fill(conn, qp, &has_ack, ack);
		if (!has_ack)
			ack_carried(tx, ack);
	} else if (requests) {
		tcp_rc_fill(conn, qp, &has_ack, ack);
	}
	if (!tcp_tx_room(conn, 1))
		return;
	/* the clock only for an acknowledgement no request carried */
	if (has_ack && !due) {
		core_lock_acquire(&conn->lock);
		due = tcp_tx_ack_due(conn, tcp_now());
		core_lock_release(&conn->lock);
	}
	if (has_ack && due) {
		add_ack(conn, ack);
	} else if (keepalive && !tx->nframes) {
		memset(&f, 0, sizeof(f));
		f.opcode = TCP_OP_KEEPALIVE;
		tcp_tx_frame(conn, &f);
	}
}

/* Gathers a batch; leaves it empty when there is nothing to send. */
static void fill(struct tcp_conn *conn, struct tcp_qp *qp)
{
	gather(conn, qp);
	/* room for the largest request left: every queue was emptied */
	conn->tx.full = !tcp_tx_room(conn, 1 + SW_MAX_SGE);
}

/* Memory changed since the batch was gathered: does what it still has to
 * send lie where it did? */
static bool batch_check(struct tcp_conn *conn)
{
	struct tcp_tx *tx = &conn->tx;
	struct sw_mem mem;
	struct tcp_guard *g;
	int i;

	for (i = tx->iov_pos; i < tx->iov_n; i++) {
		g = &tx->guard[i];
		if (!g->key)
			continue;
		if (sw_keymap_check(conn->ctx->keymap, g->key, g->pd, g->addr,
				    g->len, g->access,
				    &mem) != OPENRDMA_WC_SUCCESS ||
		    mem.ptr != g->ptr)
			return false;
	}
	tx->gen = atomic_load(&conn->ctx->mem_gen);
	tx->stale = false;
	return true;
}

static void advance(struct tcp_tx *tx, size_t n)
{
	while (n) {
		if (n < tx->iov[tx->iov_pos].iov_len) {
			tx->iov[tx->iov_pos].iov_base =
				(uint8_t *)tx->iov[tx->iov_pos].iov_base + n;
			tx->iov[tx->iov_pos].iov_len -= n;
			/* the guard keeps the region as checked */
			return;
		}
		n -= tx->iov[tx->iov_pos].iov_len;
		tx->iov_pos++;
	}
	/* zero-length tails (nothing here makes them) end the batch too */
	while (tx->iov_pos < tx->iov_n && !tx->iov[tx->iov_pos].iov_len)
		tx->iov_pos++;
}

/* Stops writing: drops the token, unless more arrived meanwhile.
 * Returns true if the writer must go on. */
static bool put_token(struct tcp_conn *conn, bool blocked)
{
	struct tcp_tx *tx = &conn->tx;
	bool more;

	core_lock_acquire(&conn->lock);
	more = tx->kick;
	tx->kick = false;
	if (!more) {
		tx->busy = false;
		__atomic_store_n(&tx->blocked, blocked, __ATOMIC_RELAXED);
	}
	core_lock_release(&conn->lock);
	return more;
}

/* Stops writing for good: the connection ends, or ended. */
static void drop_token(struct tcp_conn *conn)
{
	core_lock_acquire(&conn->lock);
	conn->tx.busy = false;
	conn->tx.kick = false;
	core_lock_release(&conn->lock);
}

/*
 * Hands the rest of the batch to the kernel; returns the count or -errno.
 * Memory the batch points into is checked again if it changed since the
 * batch was gathered (-EFAULT: it is gone).  The memory guard is held only
 * here: the batch's checks were made at tx->gen, read before them, so a
 * change that completed since is seen, and one under way is waited for.
 */
static ssize_t send_batch(struct tcp_conn *conn)
{
	struct tcp_ctx *tctx = conn->ctx;
	struct tcp_tx *tx = &conn->tx;
	struct msghdr msg;
	ssize_t n;

	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &tx->iov[tx->iov_pos];
	msg.msg_iovlen = (size_t)(tx->iov_n - tx->iov_pos);
	if (!tx->has_mem)
		return tcp_sock_send(conn->poll.fd, &msg);
	tcp_mem_enter(tctx);
	if ((tx->stale || tx->gen != atomic_load(&tctx->mem_gen)) &&
	    !batch_check(conn)) {
		tcp_mem_leave(tctx);
		return -EFAULT;
	}
	/* payload read on the RNIC's behalf (core/sw/dma.h): the peer's
	 * acknowledgement orders it before the completion */
	sw_dma_begin();
	n = tcp_sock_send(conn->poll.fd, &msg);
	sw_dma_end();
	tcp_mem_leave(tctx);
	return n;
}

/* Writes until nothing is left or the socket is full; returns 0 or the
 * error that ends the connection.  The token is put down on return. */
static int write_all(struct tcp_conn *conn, struct tcp_qp *qp)
{
	struct tcp_tx *tx = &conn->tx;
	bool all_sent;
	ssize_t n;

	for (;;) {
		if (atomic_load(&conn->state) != TCP_CONN_OPEN ||
		    __atomic_load_n(&conn->shut, __ATOMIC_RELAXED)) {
			drop_token(conn);
			return 0;
		}
		if (tx->iov_pos == tx->iov_n) {
			/*
			 * A batch that had room left took all there was;
			 * whoever queued more since found the token taken and
			 * set tx.kick: put_token() sees it, and only then is
			 * there something to gather.
			 */
			all_sent = tx->iov_n && !tx->full;
			batch_done(conn);
			if (!all_sent)
				fill(conn, qp);
			if (!tx->iov_n) {
				if (put_token(conn, false))
					continue;
				return 0;
			}
		}
		n = send_batch(conn);
		if (n == -EFAULT) {
			drop_token(conn);
			openrdma_warn("tcp",
				      "memory being sent was deregistered");
			return -OPENRDMA_EFAULT;
		}
		if (n == -EAGAIN || n == -EWOULDBLOCK) {
			if (put_token(conn, true))
				continue;
			return 0;
		}
		if (n < 0) {
			drop_token(conn);
			return (int)n;
		}
		tcp_conn_count(&conn->tx_count);
		advance(tx, (size_t)n);
	}
}

void tcp_tx_kick(struct tcp_conn *conn)
{
	struct tcp_qp *qp;
	int ret;

	core_lock_acquire(&conn->lock);
	if (atomic_load(&conn->state) != TCP_CONN_OPEN) {
		core_lock_release(&conn->lock);
		return;
	}
	/* the writer, or the one EPOLLOUT brings back, gathers again */
	if (conn->tx.busy || conn->tx.blocked) {
		conn->tx.kick = true;
		core_lock_release(&conn->lock);
		return;
	}
	conn->tx.busy = true;
	/* stays attached while the connection is open (tcp.h) */
	qp = conn->qp;
	core_lock_release(&conn->lock);

	ret = write_all(conn, qp);
	if (ret)
		tcp_conn_close(conn, ret, true);
}

void tcp_tx_writable(struct tcp_conn *conn)
{
	bool start;

	core_lock_acquire(&conn->lock);
	__atomic_store_n(&conn->tx.blocked, false, __ATOMIC_RELAXED);
	start = !conn->tx.busy;
	if (!start)
		conn->tx.kick = true;
	core_lock_release(&conn->lock);
	if (start)
		tcp_tx_kick(conn);
}

int tcp_tx_ctl(struct tcp_conn *conn, const struct tcp_frame *f,
	       const void *pdata, unsigned int plen, bool shut_after)
{
	struct tcp_frame hdr = *f;
	struct tcp_ctl *ctl;

	if (plen > sizeof(ctl->pdata))
		return -OPENRDMA_EINVAL;
	ctl = calloc(1, sizeof(*ctl));
	if (!ctl)
		return -OPENRDMA_ENOMEM;
	hdr.length = plen;
	ctl->hlen = tcp_frame_encode(&hdr, ctl->hdr);
	if (plen)
		memcpy(ctl->pdata, pdata, plen);
	ctl->plen = plen;
	ctl->shut_after = shut_after;
	core_lock_acquire(&conn->lock);
	if (conn->ctl_tail)
		conn->ctl_tail->next = ctl;
	else
		conn->ctl_head = ctl;
	conn->ctl_tail = ctl;
	core_lock_release(&conn->lock);
	tcp_tx_kick(conn);
	return 0;
}

bool tcp_tx_ack_due(struct tcp_conn *conn, uint64_t now)
{
	if (conn->ack_due)
		return true;
	if (!conn->ack_deadline) {
		conn->ack_deadline =
			now + (uint64_t)conn->ctx->prm.ack_delay_us * 1000u;
		return false;
	}
	return now >= conn->ack_deadline;
}

void tcp_tx_ack(struct tcp_conn *conn, uint32_t psn, bool ackreq)
{
	bool due = ackreq || !conn->ctx->prm.ack_delay_us;

	core_lock_acquire(&conn->lock);
	/* the delay starts at the first look (tcp_tx_ack_due) */
	if (!conn->ack_pending)
		conn->ack_deadline = 0;
	__atomic_store_n(&conn->ack_pending, true, __ATOMIC_RELAXED);
	conn->ack_psn = psn;
	if (due)
		conn->ack_due = true;
	core_lock_release(&conn->lock);
	/* the reader's: its turn kicks the writer */
	if (due)
		conn->rx.want_write = true;
}

int tcp_tx_resp(struct tcp_conn *conn, const struct tcp_resp *resp)
{
	int ret = 0;

	core_lock_acquire(&conn->lock);
	if (conn->resp_n == TCP_RESP_MAX) {
		ret = -OPENRDMA_ENOSPC;
	} else {
		conn->resp[(conn->resp_head + conn->resp_n) % TCP_RESP_MAX] =
			*resp;
		conn->resp_n++;
	}
	core_lock_release(&conn->lock);
	/* the reader's: its turn kicks the writer */
	if (!ret)
		conn->rx.want_write = true;
	return ret;
}

void tcp_tx_fini(struct tcp_conn *conn)
{
	struct tcp_ctl *c, *tmp;

	/* writers are gone (tcp_conn_quiesce): the batch is ours */
	batch_done(conn);
	core_lock_acquire(&conn->lock);
	c = conn->ctl_head;
	conn->ctl_head = NULL;
	conn->ctl_tail = NULL;
	conn->resp_n = 0;
	core_lock_release(&conn->lock);
	for (; c; c = tmp) {
		tmp = c->next;
		free(c);
	}
}
