/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The RC initiator.  The send queue is core/sw's pipe: requests go out as
 * fast as the ring takes them and complete in order as their answers come
 * back (ACK, NAK, RESP of a READ or atomic), so many requests are in
 * flight and a target that sleeps wakes once for a batch.
 *
 * RDMA WRITE and READ to an MR of the peer are done here with one
 * process_vm_writev/readv, when the peer's published QP state and key
 * table allow it and nothing else is in flight (requests execute in
 * order): no work at the target.  Anything else goes to the target as a
 * REQ element, which its core/sw code decides.  Sends of up to 32 bytes
 * travel in the element, larger ones up to shm.eager_max through the data
 * ring, and beyond that the target reads them from our memory straight
 * into the receive buffer.
 *
 * One thread transmits at a time (tx_want: the request ring has one
 * producer); it never waits for room: answers and the target's reading
 * call it again.
 */
#include <string.h>

#include "core/sw/dma.h"
#include "core/sw/payload.h"
#include "transports/shm/shm.h"

/* A software target may be descheduled: never give up on it sooner. */
#define LOST_MIN_NS (1000ull * 1000 * 1000)

static bool is_send(enum openrdma_wr_opcode op)
{
	return op == OPENRDMA_WR_SEND || op == OPENRDMA_WR_SEND_WITH_IMM ||
	       op == OPENRDMA_WR_SEND_WITH_INV;
}

static bool is_atomic(enum openrdma_wr_opcode op)
{
	return op == OPENRDMA_WR_ATOMIC_CMP_AND_SWP ||
	       op == OPENRDMA_WR_ATOMIC_FETCH_AND_ADD;
}

/* IB's retry budget (local ACK timeout times retry_cnt + 1), at least a
 * second; 0: wait forever. */
static uint64_t lost_budget(struct shm_qp *qp)
{
	uint64_t t = shm_ib_timeout_ns(atomic_load(&qp->timeout));

	t *= atomic_load(&qp->retry_cnt) + 1u;
	return t && t < LOST_MIN_NS ? LOST_MIN_NS : t;
}

/* RDMA by ourselves; -1 when the target must decide. */
static int direct(struct shm_conn *conn, const struct sw_send_wqe *w,
		  const struct iovec *iov, int cnt, uint64_t len)
{
	const struct shm_peer *peer = conn->peer;
	const struct shm_qp_pub *pub =
		&peer->qps[SHM_QPN_INDEX(conn->peer_qpn)];
	bool write = w->opcode == OPENRDMA_WR_RDMA_WRITE;
	unsigned int need = write ? OPENRDMA_ACCESS_REMOTE_WRITE :
				    OPENRDMA_ACCESS_REMOTE_READ;
	uint32_t state, access, pd;
	struct shm_key_grant g;
	struct iovec r;
	int ret;

	if (atomic_load_explicit(&pub->qpn, memory_order_acquire) !=
	    conn->peer_qpn)
		return -1;
	state = atomic_load_explicit(&pub->state, memory_order_acquire);
	access = atomic_load_explicit(&pub->access, memory_order_relaxed);
	pd = atomic_load_explicit(&pub->pd, memory_order_relaxed);
	if ((state != OPENRDMA_QPS_RTR && state != OPENRDMA_QPS_RTS) ||
	    !(access & need))
		return -1;
	if (!len)
		return OPENRDMA_WC_SUCCESS; /* names no memory: no key */
	if (!shm_keytab_grant(peer, w->rkey, pd, w->remote_addr, len, need, &g))
		return -1;
	/* announce the access, then check the key is still the same: the
	 * target deregistering it either sees us or we see it */
	atomic_store(&conn->own_hdr->busy, (uint64_t)w->rkey << 32 | g.seq);
	if (!shm_keytab_still(&g)) {
		atomic_store(&conn->own_hdr->busy, 0);
		return -1;
	}
	r.iov_base = (void *)(uintptr_t)g.va;
	r.iov_len = len;
	ret = shm_cma_rw(peer->pid, write, iov, cnt, &r, 1);
	atomic_store_explicit(&conn->own_hdr->busy, 0, memory_order_release);
	if (!ret)
		return OPENRDMA_WC_SUCCESS;
	if (ret == -OPENRDMA_EPERM)
		atomic_store(&conn->cma, false); /* not permitted after all */
	return -1;
}

/* Room for a REQ element, and for the longest iovec list. */
static bool room(struct shm_conn *conn)
{
	struct shm_ring_prod *r = &conn->req_tx;

	return shm_ring_reserve(r) &&
	       shm_ring_data_fits(
		       r, shm_data_align(SW_MAX_SGE * sizeof(struct shm_iov)));
}

/* The largest chunk the data ring takes now, at most left. */
static uint64_t chunk_now(struct shm_ring_prod *r, uint64_t left)
{
	uint64_t n = shm_ring_data_room(r) & ~(uint64_t)(SHM_DATA_ALIGN - 1);

	if (n > r->data_size / 2)
		n = r->data_size / 2;
	return n < left ? n : left;
}

/*
 * Copies the next len bytes of the cursor into the data ring at pos.  The
 * payload is read on the RNIC's behalf (core/sw/dma.h): the peer's answer
 * orders the read before the completion, through the other process.
 */
static void data_fill(struct shm_ring_prod *r, uint64_t pos,
		      struct sw_iov_cursor *cur, uint64_t len)
{
	uint64_t off = pos & (r->data_size - 1), first = r->data_size - off;

	if (first > len)
		first = len;
	sw_dma_begin();
	sw_iov_cursor_get(cur, r->data + off, first);
	sw_iov_cursor_get(cur, r->data, len - first);
	sw_dma_end();
}

/* More of the payload being streamed; true once it all went. */
static bool stream_more(struct shm_conn *conn)
{
	struct shm_ring_prod *r = &conn->req_tx;
	struct shm_elem *e;
	uint64_t chunk, pos;

	while (conn->stream.left) {
		chunk = chunk_now(r, conn->stream.left);
		if (!chunk || !(e = shm_ring_reserve(r)) ||
		    shm_ring_data_alloc(r, chunk, &pos))
			return false;
		data_fill(r, pos, &conn->stream.cur, chunk);
		e->type = SHM_EL_DATA;
		e->seq = conn->stream.psn;
		e->len = (uint32_t)chunk;
		e->data = pos;
		shm_ring_commit(r, e);
		conn->stream.left -= chunk;
	}
	conn->stream.on = false;
	atomic_store(&conn->streaming, false);
	return true;
}

/* Puts request req on the ring: room() said there is room. */
static void send_req(struct shm_conn *conn, const struct shm_params *par,
		     const struct sw_pipe_req *req)
{
	const struct sw_send_wqe *w = req->wqe;
	struct shm_ring_prod *r = &conn->req_tx;
	bool peer_cma = atomic_load(&conn->peer_hdr->cma);
	uint64_t len = req->len, chunk, pos, list;
	struct shm_iov v[SW_MAX_SGE];
	struct shm_elem *e = shm_ring_reserve(r);
	int i;

	e->type = SHM_EL_REQ;
	e->op = (uint8_t)w->opcode;
	e->flags = (uint8_t)w->send_flags;
	e->seq = req->psn;
	e->len = (uint32_t)len;
	e->ex = w->ex;
	e->data = 0;
	memset(&e->u, 0, sizeof(e->u));
	e->u.r.raddr = w->remote_addr;
	e->u.r.rkey = w->rkey;
	e->u.r.cmp = w->compare_add;
	e->u.r.swap = w->swap;
	memcpy(conn->stream.iov, req->iov, sizeof(req->iov[0]) * req->iovcnt);
	sw_iov_cursor_init(&conn->stream.cur, conn->stream.iov, req->iovcnt);

	if (is_atomic(w->opcode) || !len) {
		e->pl = SHM_PL_NONE;
	} else if (is_send(w->opcode) && len <= SHM_INLINE_MAX) {
		e->pl = SHM_PL_INLINE;
		/* as data_fill() */
		sw_dma_begin();
		sw_iov_cursor_get(&conn->stream.cur, e->u.inl, len);
		sw_dma_end();
	} else if (peer_cma && (w->opcode == OPENRDMA_WR_RDMA_READ ||
				len > par->eager_max)) {
		/* the target copies from (or to) our memory itself */
		e->pl = SHM_PL_CMA;
		list = (uint64_t)req->iovcnt * sizeof(v[0]);
		shm_ring_data_alloc(r, list, &pos);
		for (i = 0; i < req->iovcnt; i++) {
			v[i].addr = (uintptr_t)req->iov[i].iov_base;
			v[i].len = req->iov[i].iov_len;
		}
		shm_ring_data_put(r, pos, v, list);
		e->data = pos;
		e->u.r.aux = (uint32_t)req->iovcnt;
	} else if (w->opcode == OPENRDMA_WR_RDMA_READ) {
		e->pl = SHM_PL_NONE; /* the data comes back in RDATA */
	} else {
		/* what fits now; the rest follows in DATA elements */
		e->pl = SHM_PL_RING;
		chunk = chunk_now(r, len);
		if (chunk && shm_ring_data_alloc(r, chunk, &pos))
			chunk = 0;
		if (chunk) {
			data_fill(r, pos, &conn->stream.cur, chunk);
			e->data = pos;
		}
		e->u.r.aux = (uint32_t)chunk;
		if (chunk < len) {
			conn->stream.on = true;
			conn->stream.psn = req->psn;
			conn->stream.left = len - chunk;
			atomic_store(&conn->streaming, true);
		}
	}
	shm_ring_commit(r, e);
}

static void rnr_wait(struct shm_qp *qp, uint64_t deadline)
{
	if (!sw_timer_add(&qp->ctx->timer, &qp->rnr_entry, deadline))
		return;
	/* no timer (the context is closing): the retry fails now */
	shm_tx_lost(qp, OPENRDMA_WC_RNR_RETRY_EXC_ERR, -1);
}

/* Completes a request we carried out ourselves. */
static void direct_done(struct shm_qp *qp, const struct sw_pipe_req *req,
			int status)
{
	struct sw_pipe_pass pass;

	sw_pipe_begin(&qp->pipe, &pass);
	if (status != OPENRDMA_WC_SUCCESS)
		sw_pipe_nak(&qp->pipe, &pass, req->psn, status, 0);
	else if (req->wqe->opcode == OPENRDMA_WR_RDMA_READ)
		sw_pipe_read_done(&qp->pipe, &pass, req->psn, status);
	else
		sw_pipe_ack(&qp->pipe, &pass, req->psn);
	sw_pipe_end(&qp->pipe, &pass);
}

/* Arms the lost timer while requests are unanswered. */
static void lost_arm(struct shm_qp *qp, bool unacked, uint32_t acked)
{
	uint64_t budget;

	/* armed for a second at least: look before the locked exchange */
	if (!unacked ||
	    atomic_load_explicit(&qp->lost_armed, memory_order_relaxed) ||
	    atomic_exchange(&qp->lost_armed, true))
		return;
	budget = lost_budget(qp);
	if (!budget) {
		atomic_store(&qp->lost_armed, false);
		return;
	}
	qp->lost_mark = acked;
	if (sw_timer_add(&qp->ctx->timer, &qp->lost_entry,
			 sw_now_ns() + budget))
		atomic_store(&qp->lost_armed, false);
}

void shm_tx_lost_fire(struct sw_timer_entry *entry)
{
	struct shm_qp *qp =
		openrdma_container_of(entry, struct shm_qp, lost_entry);
	struct sw_pipe_pass pass;
	uint32_t acked;
	bool unacked, stuck;

	sw_pipe_begin(&qp->pipe, &pass);
	unacked = sw_pipe_unacked(&qp->pipe) != 0;
	acked = qp->pipe.acked;
	stuck = unacked && acked == qp->lost_mark;
	sw_pipe_end(&qp->pipe, &pass);
	atomic_store(&qp->lost_armed, false);
	/* answers came meanwhile: watch the rest */
	if (stuck)
		shm_tx_lost(qp, OPENRDMA_WC_RETRY_EXC_ERR, -1);
	else
		lost_arm(qp, unacked, acked);
}

void shm_tx_lost(struct shm_qp *qp, enum openrdma_wc_status status, int event)
{
	struct sw_pipe_pass pass;

	sw_pipe_begin(&qp->pipe, &pass);
	sw_pipe_path_lost(&qp->pipe, &pass, status, event);
	sw_pipe_end(&qp->pipe, &pass);
	shm_qp_publish(qp);
}

/* Transmits until the ring, the answers' room or the queue runs out. */
static void pump(struct shm_qp *qp, struct shm_conn *conn)
{
	/* every request gets one answer: never more out than they fit */
	uint32_t cap = (conn->resp_rx.elem_mask + 1) / 4;
	struct sw_pipe *p = &qp->pipe;
	struct sw_pipe_pass pass;
	struct sw_pipe_req req;
	bool sent = false, only, unacked = false, known = false, last = false;
	uint64_t deadline;
	uint32_t acked = 0;
	int r, status, ep = -1;

	if (conn->stream.on) {
		sent = true;
		ep = shm_epoch_enter(&qp->ctx->epoch);
		if (!stream_more(conn))
			goto out;
	}
	/* each look at the queue notes what the lost timer needs; after the
	 * last request posted, none is taken just for it */
	while (!last && room(conn)) {
		sw_pipe_begin(p, &pass);
		/* a request whose keys we map copies registered memory: the
		 * guard first (an inline payload is the queue's copy) */
		if (ep < 0 && !sw_pipe_next_inline(p))
			ep = shm_epoch_enter(&qp->ctx->epoch);
		r = sw_pipe_unacked(p) >= cap ? SW_PIPE_BLOCKED :
						sw_pipe_next(p, &pass, &req);
		only = sw_pipe_unacked(p) == 1;
		unacked = sw_pipe_unacked(p) != 0;
		acked = p->acked;
		last = sw_pipe_all_sent(p);
		deadline = pass.deadline;
		sw_pipe_end(p, &pass);
		known = true;
		if (r == SW_PIPE_WAIT)
			rnr_wait(qp, deadline);
		if (r != SW_PIPE_SEND)
			break;
		/* alone in flight, so in order: RDMA without the target */
		status = -1;
		if (only && atomic_load(&conn->cma) &&
		    (req.wqe->opcode == OPENRDMA_WR_RDMA_WRITE ||
		     req.wqe->opcode == OPENRDMA_WR_RDMA_READ))
			status = direct(conn, req.wqe, req.iov, req.iovcnt,
					req.len);
		if (status >= 0) {
			direct_done(qp, &req, status);
			known = false;
			continue;
		}
		send_req(conn, &qp->ctx->par, &req);
		sent = true;
		if (conn->stream.on && !stream_more(conn)) {
			known = false;
			break;
		}
	}
out:
	if (ep >= 0)
		shm_epoch_exit(&qp->ctx->epoch, ep);
	if (sent)
		shm_peer_kick(conn->peer);
	if (!known) {
		sw_pipe_begin(p, &pass);
		unacked = sw_pipe_unacked(p) != 0;
		acked = p->acked;
		sw_pipe_end(p, &pass);
	}
	lost_arm(qp, unacked, acked);
}

/*
 * The QP's connection, for its transmitter (one thread at a time, see
 * shm_tx): a reference held from one call to the next, taken again only
 * when the QP's connection changed.  A lock and two atomic counts per
 * request otherwise; a connection torn down stays allocated until the
 * next transmission or the QP's destruction lets it go.
 */
static struct shm_conn *tx_conn(struct shm_qp *qp)
{
	struct shm_conn *old = qp->tx_conn;

	if (old && atomic_load_explicit(&qp->conn_gen, memory_order_acquire) ==
			   qp->tx_gen)
		return old;
	qp->tx_conn = shm_conn_get_gen(qp, &qp->tx_gen);
	if (old)
		shm_conn_put(old);
	return qp->tx_conn;
}

static void tx_once(struct shm_qp *qp)
{
	struct shm_conn *conn;
	uint32_t dest;

	conn = tx_conn(qp);
	if (!conn && atomic_load(&qp->av_local)) {
		/* connected by hand before the peer QP existed: try now */
		dest = atomic_load(&qp->sw.dest_qpn);
		if (dest && !shm_conn_attach(qp, dest))
			conn = tx_conn(qp);
	}
	if (!conn || atomic_load(&conn->dead)) {
		/* nobody answers: what waits fails as unanswered */
		if (sw_qp_state(&qp->sw) == OPENRDMA_QPS_RTS)
			shm_tx_lost(qp, OPENRDMA_WC_RETRY_EXC_ERR, -1);
		return;
	}
	pump(qp, conn);
}

void shm_tx(struct shm_qp *qp)
{
	unsigned int n;

	/* a count that was not 0: the transmitter at work finds ours left
	 * when it takes off the calls it served, and goes round again */
	if (atomic_fetch_add(&qp->tx_want, 1) == 0) {
		do {
			n = atomic_load(&qp->tx_want);
			tx_once(qp);
		} while (atomic_fetch_sub(&qp->tx_want, n) != n);
	}
	shm_qp_publish(qp);
}

/* A READ's data in RDATA: where it goes, from its first chunk on. */
static int rdata_in(struct shm_conn *conn, struct sw_pipe_pass *pass,
		    uint32_t psn, uint64_t total, uint64_t pos, uint64_t len)
{
	struct shm_ring_cons *c = &conn->resp_rx;
	uint64_t off, first;
	int cnt = 0, st;

	if (!conn->rd.on || conn->rd.psn != psn) {
		st = sw_pipe_read_map(&conn->qp->pipe, pass, psn, total,
				      conn->rd.iov, &cnt);
		if (st < 0)
			return st;
		conn->rd.on = true;
		conn->rd.psn = psn;
		conn->rd.status = st;
		sw_iov_cursor_init(&conn->rd.cur, conn->rd.iov, cnt);
	}
	if (conn->rd.status != OPENRDMA_WC_SUCCESS)
		return 0; /* its buffer went away: the data is dropped */
	off = pos & (c->data_size - 1);
	first = c->data_size - off;
	if (first > len)
		first = len;
	sw_iov_cursor_put(&conn->rd.cur, c->data + off, first);
	sw_iov_cursor_put(&conn->rd.cur, c->data, len - first);
	return 0;
}

/* A READ or atomic done. */
static int resp_in(struct shm_conn *conn, struct sw_pipe_pass *pass,
		   uint32_t psn, uint8_t op, uint64_t len, uint64_t value)
{
	struct sw_pipe *p = &conn->qp->pipe;
	struct iovec iov[SW_MAX_SGE];
	int cnt, st;

	if (op != OPENRDMA_WR_RDMA_READ)
		return sw_pipe_atomic_done(p, pass, psn, value);
	if (conn->rd.on && conn->rd.psn == psn) {
		st = conn->rd.status;
	} else {
		/* the target wrote it with process_vm_writev, or it is empty:
		 * the buffers must still be there */
		st = sw_pipe_read_map(p, pass, psn, len, iov, &cnt);
		if (st < 0)
			return st;
	}
	conn->rd.on = false;
	sw_pipe_read_done(p, pass, psn, (enum openrdma_wc_status)st);
	return 0;
}

int shm_tx_answers(struct shm_conn *conn)
{
	struct shm_ring_cons *c = &conn->resp_rx;
	struct shm_qp *qp = conn->qp;
	struct sw_pipe_pass pass;
	const struct shm_elem *e;
	uint64_t pos, len, value, deadline = 0;
	uint32_t psn;
	uint8_t type, op, flags;
	int n = 0, ret = 0;

	/* the usual case on a target's pass: nothing, and no lock taken */
	if (!shm_ring_pending(c))
		return 0;
	sw_pipe_begin(&qp->pipe, &pass);
	while (!ret && n < 64 && (e = shm_ring_peek(c))) {
		type = e->type;
		op = e->op;
		flags = e->flags;
		psn = e->seq;
		pos = e->data;
		len = e->len;
		value = e->u.resp.result;
		switch (type) {
		case SHM_EL_ACK:
			ret = sw_pipe_ack(&qp->pipe, &pass, psn);
			len = 0;
			break;
		case SHM_EL_NAK:
			ret = sw_pipe_nak(&qp->pipe, &pass, psn,
					  op == SHM_NAK_RNR ? SW_EXEC_RNR : op,
					  flags);
			len = 0;
			break;
		case SHM_EL_RDATA:
			ret = shm_ring_data_check(c, pos, len);
			if (!ret)
				ret = rdata_in(conn, &pass, psn, value, pos,
					       len);
			break;
		case SHM_EL_RESP:
			ret = resp_in(conn, &pass, psn, op, len, value);
			len = 0;
			break;
		default:
			ret = -OPENRDMA_EPROTO;
			break;
		}
		if (pass.deadline)
			deadline = pass.deadline;
		if (!ret)
			shm_ring_release(c, len);
		n++;
	}
	sw_pipe_end(&qp->pipe, &pass);
	if (ret) {
		atomic_store(&conn->dead, true);
		shm_tx_lost(qp, OPENRDMA_WC_RETRY_EXC_ERR, -1);
	}
	if (deadline)
		rnr_wait(qp, deadline);
	return n;
}
