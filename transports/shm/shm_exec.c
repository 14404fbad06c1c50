/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The initiator's half of a request, called by core/sw for the head of
 * the send queue.
 *
 * RDMA WRITE and READ to an MR of the peer are done here, with one
 * process_vm_writev/readv, once the peer's published QP state and key
 * table allow it: no work at the target.  Anything those tables cannot
 * prove allowed, and every other request, goes to the target as a REQ
 * element: its core/sw code decides, as it does for self.  Sends of up
 * to 32 bytes travel in the element, larger ones up to shm.eager_max
 * through the data ring, and beyond that the target reads them from our
 * memory straight into the receive buffer.
 */
#include <string.h>
#include <time.h>

#include "core/sw/payload.h"
#include "transports/shm/shm.h"

/* Q_Keys with the high bit set mean "use the QP's own" (IB 10.2.5). */
#define QKEY_USE_QP 0x80000000u
/* A software target may be descheduled: never give up on it sooner. */
#define RESP_TIMEOUT_MIN_NS (1000ull * 1000 * 1000)
#define NOT_READY_PAUSE_NS 20000

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

/* IB's retry budget: local ACK timeout times (retry_cnt + 1); 0: none. */
static uint64_t retry_budget(struct shm_qp *qp)
{
	uint64_t t = shm_ib_timeout_ns(atomic_load(&qp->timeout));

	return t * (atomic_load(&qp->retry_cnt) + 1u);
}

/* RDMA by ourselves; -1 when the target must decide. */
static int direct(struct shm_conn *conn, struct sw_send_wqe *w,
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

/* An element to fill; waits for the target to free one. */
static struct shm_elem *req_reserve(struct shm_conn *conn,
				    struct shm_backoff *b)
{
	struct shm_elem *e;

	while (!(e = shm_ring_reserve(&conn->req_tx))) {
		if (atomic_load(&conn->dead) || shm_backoff(b))
			return NULL;
		shm_prog_poll(conn->ctx);
	}
	return e;
}

static int data_reserve(struct shm_conn *conn, uint64_t len, uint64_t *pos,
			struct shm_backoff *b)
{
	while (shm_ring_data_alloc(&conn->req_tx, len, pos)) {
		if (atomic_load(&conn->dead) || shm_backoff(b))
			return -OPENRDMA_ECONNRESET;
		shm_prog_poll(conn->ctx);
	}
	return 0;
}

/* Copies the next len bytes of the cursor into the data ring at pos. */
static void data_fill(struct shm_ring_prod *r, uint64_t pos,
		      struct sw_iov_cursor *cur, uint64_t len)
{
	uint64_t off = pos & (r->data_size - 1), first = r->data_size - off;

	if (first > len)
		first = len;
	sw_iov_cursor_get(cur, r->data + off, first);
	sw_iov_cursor_get(cur, r->data, len - first);
}

/* Streams the rest of a payload in DATA elements, until an answer came. */
static int stream(struct shm_conn *conn, uint32_t seq,
		  struct sw_iov_cursor *cur, uint64_t left,
		  struct shm_backoff *b)
{
	uint64_t chunk_max = conn->req_tx.data_size / 2, chunk, pos;
	struct shm_elem *e;

	while (left) {
		/* the target answered early (RNR, an error): stop */
		if (shm_ring_peek(&conn->resp_rx))
			return 0;
		chunk = left < chunk_max ? left : chunk_max;
		e = req_reserve(conn, b);
		if (!e || data_reserve(conn, chunk, &pos, b))
			return -OPENRDMA_ECONNRESET;
		data_fill(&conn->req_tx, pos, cur, chunk);
		e->type = SHM_EL_DATA;
		e->seq = seq;
		e->len = (uint32_t)chunk;
		e->data = pos;
		shm_ring_commit(&conn->req_tx, e);
		shm_peer_kick(conn->peer);
		left -= chunk;
	}
	return 0;
}

/* Sends the REQ element (and the payload) of request seq. */
static int send_req(struct shm_conn *conn, const struct shm_params *par,
		    const struct sw_send_wqe *w, const struct iovec *iov,
		    int cnt, uint64_t len, uint32_t seq)
{
	bool peer_cma = atomic_load(&conn->peer_hdr->cma);
	uint64_t chunk = 0, pos, list;
	struct sw_iov_cursor cur;
	struct shm_backoff b;
	struct shm_iov v[SW_MAX_SGE];
	struct shm_elem *e;
	int i;

	shm_backoff_init(&b, RESP_TIMEOUT_MIN_NS);
	e = req_reserve(conn, &b);
	if (!e)
		return -OPENRDMA_ECONNRESET;
	sw_iov_cursor_init(&cur, iov, cnt);
	e->type = SHM_EL_REQ;
	e->op = (uint8_t)w->opcode;
	e->flags = (uint8_t)w->send_flags;
	e->seq = seq;
	e->len = (uint32_t)len;
	e->ex = w->ex;
	e->data = 0;
	memset(&e->u, 0, sizeof(e->u));
	e->u.r.raddr = w->remote_addr;
	e->u.r.rkey = w->rkey;
	e->u.r.cmp = w->compare_add;
	e->u.r.swap = w->swap;

	if (is_atomic(w->opcode) || !len) {
		e->pl = SHM_PL_NONE;
	} else if (is_send(w->opcode) && len <= SHM_INLINE_MAX) {
		e->pl = SHM_PL_INLINE;
		sw_iov_cursor_get(&cur, e->u.inl, len);
	} else if (peer_cma && (w->opcode == OPENRDMA_WR_RDMA_READ ||
				len > par->eager_max)) {
		/* the target copies from (or to) our memory itself */
		e->pl = SHM_PL_CMA;
		list = (uint64_t)cnt * sizeof(v[0]);
		if (data_reserve(conn, list, &pos, &b))
			return -OPENRDMA_ECONNRESET;
		for (i = 0; i < cnt; i++) {
			v[i].addr = (uintptr_t)iov[i].iov_base;
			v[i].len = iov[i].iov_len;
		}
		shm_ring_data_put(&conn->req_tx, pos, v, list);
		e->data = pos;
		e->u.r.aux = (uint32_t)cnt;
	} else if (w->opcode == OPENRDMA_WR_RDMA_READ) {
		e->pl = SHM_PL_NONE; /* the data comes back in RDATA */
	} else {
		e->pl = SHM_PL_RING;
		chunk = conn->req_tx.data_size / 2;
		if (chunk > len)
			chunk = len;
		if (data_reserve(conn, chunk, &pos, &b))
			return -OPENRDMA_ECONNRESET;
		data_fill(&conn->req_tx, pos, &cur, chunk);
		e->data = pos;
		e->u.r.aux = (uint32_t)chunk;
	}
	shm_ring_commit(&conn->req_tx, e);
	shm_peer_kick(conn->peer);
	if (e->pl == SHM_PL_RING && chunk < len)
		return stream(conn, seq, &cur, len - chunk, &b);
	return 0;
}

/* RDMA READ data that came back through the ring, into our buffers. */
static void rdata_take(const struct shm_ring_cons *c, uint64_t pos,
		       uint64_t len, struct sw_iov_cursor *cur)
{
	uint64_t off = pos & (c->data_size - 1), first = c->data_size - off;

	if (first > len)
		first = len;
	sw_iov_cursor_put(cur, c->data + off, first);
	sw_iov_cursor_put(cur, c->data, len - first);
}

struct answer {
	int status;
	uint8_t rnr_timer;
	uint64_t result;
};

/* Waits for the answer to request seq; RDATA on the way goes to cur. */
static int wait_answer(struct shm_conn *conn, struct shm_qp *qp, uint32_t seq,
		       struct sw_iov_cursor *cur, struct answer *a)
{
	struct shm_ring_cons *c = &conn->resp_rx;
	uint64_t timeout = retry_budget(qp), pos, len;
	const struct shm_elem *e;
	struct shm_backoff b;
	uint32_t eseq;
	uint8_t type;

	if (timeout && timeout < RESP_TIMEOUT_MIN_NS)
		timeout = RESP_TIMEOUT_MIN_NS;
	shm_backoff_init(&b, timeout);
	for (;;) {
		e = shm_ring_peek(c);
		if (!e) {
			if (atomic_load(&conn->dead))
				return OPENRDMA_WC_RETRY_EXC_ERR;
			if (shm_prog_poll(conn->ctx))
				continue;
			if (shm_backoff(&b))
				return OPENRDMA_WC_RETRY_EXC_ERR;
			continue;
		}
		type = e->type;
		eseq = e->seq;
		pos = e->data;
		len = type == SHM_EL_RDATA ? e->len : 0;
		if ((type != SHM_EL_RDATA && type != SHM_EL_RESP) ||
		    shm_ring_data_check(c, pos, len)) {
			atomic_store(&conn->dead, true);
			return OPENRDMA_WC_RETRY_EXC_ERR;
		}
		if (type == SHM_EL_RESP && eseq == seq) {
			a->status = e->op;
			a->rnr_timer = e->flags;
			a->result = e->u.resp.result;
			shm_ring_release(c, 0);
			return 0;
		}
		/* ours, or stale ones of requests given up on */
		if (type == SHM_EL_RDATA && eseq == seq && cur)
			rdata_take(c, pos, len, cur);
		shm_ring_release(c, len);
	}
}

static int remote(struct shm_conn *conn, struct shm_qp *qp,
		  struct sw_send_wqe *w, const struct iovec *iov, int cnt,
		  uint64_t len)
{
	struct timespec pause = { 0, NOT_READY_PAUSE_NS };
	uint64_t budget = retry_budget(qp), waited = 0;
	struct sw_iov_cursor cur;
	struct answer a;
	uint32_t seq;
	int ret;

	for (;;) {
		seq = ++conn->seq;
		ret = send_req(conn, &qp->ctx->par, w, iov, cnt, len, seq);
		if (ret)
			return OPENRDMA_WC_RETRY_EXC_ERR;
		sw_iov_cursor_init(&cur, iov, cnt);
		ret = wait_answer(
			conn, qp, seq,
			w->opcode == OPENRDMA_WR_RDMA_READ ? &cur : NULL, &a);
		if (ret)
			return ret;
		if (a.status != SHM_RESP_NOT_READY)
			break;
		/* the target is not in RTR yet: as a requester that gets no
		 * answer, send again until the retries run out */
		if (budget && waited > budget)
			return OPENRDMA_WC_RETRY_EXC_ERR;
		nanosleep(&pause, NULL);
		waited += NOT_READY_PAUSE_NS;
	}
	if (a.status == SHM_RESP_RNR) {
		w->rnr_timer = a.rnr_timer;
		return SW_EXEC_RNR;
	}
	if (a.status >= OPENRDMA_WC_STATUS_MAX)
		return OPENRDMA_WC_GENERAL_ERR;
	if (a.status == OPENRDMA_WC_SUCCESS && is_atomic(w->opcode)) {
		sw_iov_cursor_init(&cur, iov, cnt);
		sw_iov_cursor_put(&cur, &a.result, sizeof(a.result));
	}
	return a.status;
}

static int rc_execute(struct shm_qp *qp, struct sw_send_wqe *w,
		      const struct iovec *iov, int cnt, uint64_t len)
{
	struct shm_conn *conn;
	uint32_t dest;
	int status = -1;

	/* no answer from a peer that is not on this host */
	if (!atomic_load(&qp->av_local))
		return OPENRDMA_WC_RETRY_EXC_ERR;
	conn = shm_conn_get(qp);
	if (!conn) {
		/* connected by hand before the peer QP existed: try now */
		dest = atomic_load(&qp->sw.dest_qpn);
		if (dest && !shm_conn_attach(qp, dest))
			conn = shm_conn_get(qp);
		if (!conn)
			return OPENRDMA_WC_RETRY_EXC_ERR;
	}
	if (atomic_load(&conn->dead)) {
		status = OPENRDMA_WC_RETRY_EXC_ERR;
		goto out;
	}
	if ((w->opcode == OPENRDMA_WR_RDMA_WRITE ||
	     w->opcode == OPENRDMA_WR_RDMA_READ) &&
	    atomic_load(&conn->cma))
		status = direct(conn, w, iov, cnt, len);
	if (status < 0)
		status = remote(conn, qp, w, iov, cnt, len);
out:
	shm_conn_put(conn);
	return status;
}

static int ud_execute(struct shm_qp *qp, struct sw_send_wqe *w,
		      const struct iovec *iov, int cnt, uint64_t len)
{
	uint32_t node = SHM_QPN_NODE(w->remote_qpn);
	struct shm_elem t;

	/* datagrams to elsewhere, or to no context, are lost */
	if (!to_shm_ah(w->ah)->local || !node)
		return OPENRDMA_WC_SUCCESS;
	memset(&t, 0, sizeof(t));
	t.type = SHM_EL_DGRAM;
	t.op = (uint8_t)w->opcode;
	t.flags = (uint8_t)w->send_flags;
	t.seq = w->remote_qpn;
	t.len = (uint32_t)len;
	t.ex = w->ex;
	t.u.r.aux = w->remote_qkey & QKEY_USE_QP ? atomic_load(&qp->sw.qkey) :
						   w->remote_qkey;
	t.u.r.cmp = qp->base.qp_num;
	shm_link_send(qp->ctx, node, &t, iov, cnt, len);
	return OPENRDMA_WC_SUCCESS;
}

static int shm_execute(struct sw_qp *sqp, struct sw_send_wqe *w,
		       const struct iovec *iov, int iovcnt, uint64_t len)
{
	struct shm_qp *qp = sw_to_shm_qp(sqp);

	if (qp->base.qp_type == OPENRDMA_QPT_UD)
		return ud_execute(qp, w, iov, iovcnt, len);
	return rc_execute(qp, w, iov, iovcnt, len);
}

static int shm_schedule(struct sw_qp *sqp, uint64_t deadline)
{
	struct shm_qp *qp = sw_to_shm_qp(sqp);

	return sw_timer_add(&qp->ctx->timer, &qp->rnr_entry, deadline);
}

const struct sw_qp_ops shm_sw_qp_ops = {
	.execute = shm_execute,
	.schedule = shm_schedule,
};

int shm_resp_send(struct shm_conn *conn, uint32_t seq, int status,
		  uint8_t rnr_timer, uint64_t result)
{
	struct shm_backoff b;
	struct shm_elem *e;

	/* the initiator takes answers while it waits for them: full means
	 * it gave up on its requests */
	shm_backoff_init(&b, RESP_TIMEOUT_MIN_NS / 10);
	while (!(e = shm_ring_reserve(&conn->resp_tx))) {
		if (atomic_load(&conn->dead) || shm_backoff(&b))
			return 0;
	}
	e->type = SHM_EL_RESP;
	e->op = (uint8_t)status;
	e->flags = rnr_timer;
	e->seq = seq;
	e->len = 0;
	e->pl = SHM_PL_NONE;
	e->data = 0;
	e->u.resp.result = result;
	shm_ring_commit(&conn->resp_tx, e);
	return 0;
}
