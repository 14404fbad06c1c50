/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The target's half of a request: decode the element, give core/sw the
 * request with a payload that reads the initiator's bytes where they are
 * (in the element, streamed through the data ring, or in the initiator's
 * memory through process_vm_readv: one copy, straight into the receive
 * buffer), and answer.  RDMA READ data goes back with process_vm_writev,
 * or through the answer ring when that is not permitted; atomics' results
 * ride in the answer.
 *
 * Answers, as an IB responder gives them: sends and writes are
 * acknowledged together (one ACK for the last of a batch; a RESP or NAK
 * also says that everything before it executed), READs and atomics get a
 * RESP, a failure a NAK, after which the requests that follow are dropped
 * until the NAKed one comes again (RNR) or for good.  A QP still in INIT
 * (its connection being made) leaves requests in the ring until it is in
 * RTR.
 */
#include <string.h>
#include <sys/uio.h>

#include "core/sw/target.h"
#include "transports/shm/shm.h"

/* How long a stream may stall before the request is abandoned. */
#define STREAM_TIMEOUT_NS (5ull * 1000 * 1000 * 1000)

struct rx_payload {
	struct sw_payload base;
	struct shm_conn *conn;
	uint32_t seq;
	uint8_t pl; /* enum shm_pl */
	bool atomic;
	/* INLINE: the bytes; RING: the chunk at the ring's head */
	uint8_t inl[SHM_INLINE_MAX];
	bool held; /* the element at the head carries our chunk */
	uint64_t pos, len, off;
	uint64_t left; /* payload not yet reached in the stream */
	/* CMA: the initiator's iovecs and where we are in them */
	struct shm_iov iov[SW_MAX_SGE];
	int niov, idx;
	uint64_t ioff;
	uint64_t result;
};

static struct rx_payload *to_rx(struct sw_payload *pl)
{
	return openrdma_container_of(pl, struct rx_payload, base);
}

/* Waits for the next DATA element of the request and takes its chunk. */
static int next_chunk(struct rx_payload *p)
{
	struct shm_ring_cons *c = &p->conn->req_rx;
	const struct shm_elem *e;
	struct shm_backoff b;
	uint64_t pos, len;
	int ret;

	if (p->held) {
		shm_ring_release(c, p->len);
		p->held = false;
	}
	if (!p->left)
		return -OPENRDMA_EMSGSIZE;
	shm_backoff_init(&b, STREAM_TIMEOUT_NS);
	/* the initiator sends more when it sees room: it may sleep */
	shm_peer_kick(p->conn->peer);
	while (!(e = shm_ring_peek(c))) {
		if (atomic_load(&p->conn->dead))
			return -OPENRDMA_ECONNRESET;
		ret = shm_backoff(&b);
		if (ret)
			return ret;
	}
	pos = e->data;
	len = e->len;
	if (e->type != SHM_EL_DATA || e->seq != p->seq || !len ||
	    len > p->left || shm_ring_data_check(c, pos, len))
		return -OPENRDMA_EPROTO;
	p->held = true;
	p->pos = pos;
	p->len = len;
	p->off = 0;
	p->left -= len;
	return 0;
}

static int rx_read(struct sw_payload *pl, void *dst, size_t len)
{
	struct rx_payload *p = to_rx(pl);
	uint8_t *d = dst;
	uint64_t n;
	int ret;

	switch (p->pl) {
	case SHM_PL_INLINE:
		if (len > sizeof(p->inl) - p->off)
			return -OPENRDMA_EMSGSIZE;
		memcpy(dst, p->inl + p->off, len);
		p->off += len;
		return 0;
	case SHM_PL_CMA:
		return shm_cma_copy(p->conn->peer->pid, false, dst, len, p->iov,
				    p->niov, &p->idx, &p->ioff);
	case SHM_PL_RING:
		while (len) {
			if (!p->held || p->off == p->len) {
				ret = next_chunk(p);
				if (ret)
					return ret;
			}
			n = p->len - p->off < len ? p->len - p->off : len;
			shm_ring_data_get(&p->conn->req_rx, p->pos + p->off, d,
					  n);
			p->off += n;
			d += n;
			len -= n;
		}
		return 0;
	default:
		return -OPENRDMA_EMSGSIZE;
	}
}

/* RDMA READ data through the answer ring, in chunks. */
static int rdata_send(struct rx_payload *p, const uint8_t *src, size_t len)
{
	struct shm_ring_prod *r = &p->conn->resp_tx;
	uint64_t chunk, pos;
	struct shm_backoff b;
	struct shm_elem *e;
	int ret;

	uint64_t total = len;

	shm_backoff_init(&b, STREAM_TIMEOUT_NS);
	while (len) {
		chunk = r->data_size / 2 < len ? r->data_size / 2 : len;
		if (!shm_ring_reserve(r) || !shm_ring_data_fits(r, chunk))
			shm_peer_kick(p->conn->peer);
		while (!(e = shm_ring_reserve(r)) ||
		       shm_ring_data_alloc(r, chunk, &pos)) {
			if (atomic_load(&p->conn->dead))
				return -OPENRDMA_ECONNRESET;
			ret = shm_backoff(&b);
			if (ret)
				return ret;
		}
		shm_ring_data_put(r, pos, src, chunk);
		e->type = SHM_EL_RDATA;
		e->seq = p->seq;
		e->len = (uint32_t)chunk;
		e->data = pos;
		e->u.resp.result = total;
		shm_ring_commit(r, e);
		src += chunk;
		len -= chunk;
	}
	return 0;
}

static int rx_write(struct sw_payload *pl, const void *src, size_t len)
{
	struct rx_payload *p = to_rx(pl);

	if (p->atomic) {
		if (len != sizeof(p->result))
			return -OPENRDMA_EMSGSIZE;
		memcpy(&p->result, src, len);
		return 0;
	}
	if (p->pl == SHM_PL_CMA)
		return shm_cma_copy(p->conn->peer->pid, true, (void *)src, len,
				    p->iov, p->niov, &p->idx, &p->ioff);
	return rdata_send(p, src, len);
}

static bool is_atomic(uint8_t op)
{
	return op == OPENRDMA_WR_ATOMIC_CMP_AND_SWP ||
	       op == OPENRDMA_WR_ATOMIC_FETCH_AND_ADD;
}

/*
 * Copies what the element says into p and r.  The element stays in the
 * ring only if it carries the first chunk of a streamed payload.
 */
static int decode(struct shm_conn *conn, const struct shm_elem *e,
		  struct rx_payload *p, struct sw_req *r)
{
	struct shm_ring_cons *c = &conn->req_rx;
	uint64_t chunk, list;

	memset(r, 0, sizeof(*r));
	r->opcode = (enum openrdma_wr_opcode)e->op;
	r->send_flags = e->flags;
	r->src_qpn = conn->peer_qpn;
	r->ex = e->ex;
	r->length = e->len;
	r->remote_addr = e->u.r.raddr;
	r->rkey = e->u.r.rkey;
	r->compare_add = e->u.r.cmp;
	r->swap = e->u.r.swap;
	r->payload = &p->base;
	p->conn = conn;
	p->seq = e->seq;
	p->pl = e->pl;
	p->atomic = is_atomic(e->op);
	p->base.read = rx_read;
	p->base.write = rx_write;
	if (e->op >= OPENRDMA_WR_OPCODE_MAX)
		return -OPENRDMA_EPROTO;
	switch (p->pl) {
	case SHM_PL_NONE:
		shm_ring_consume(c, 0);
		return 0;
	case SHM_PL_INLINE:
		if (r->length > SHM_INLINE_MAX)
			return -OPENRDMA_EPROTO;
		memcpy(p->inl, e->u.inl, r->length);
		/* inline only for sends: no RDMA fields to keep */
		r->remote_addr = 0;
		r->rkey = 0;
		r->compare_add = 0;
		r->swap = 0;
		shm_ring_consume(c, 0);
		return 0;
	case SHM_PL_CMA:
		list = (uint64_t)e->u.r.aux * sizeof(struct shm_iov);
		if (!e->u.r.aux || e->u.r.aux > SW_MAX_SGE ||
		    shm_ring_data_check(c, e->data, list))
			return -OPENRDMA_EPROTO;
		p->niov = (int)e->u.r.aux;
		shm_ring_data_get(c, e->data, p->iov, list);
		shm_ring_consume(c, list);
		return 0;
	case SHM_PL_RING:
		chunk = e->u.r.aux;
		if (chunk > r->length || shm_ring_data_check(c, e->data, chunk))
			return -OPENRDMA_EPROTO;
		/* the request's own chunk: consumed through rx_read() */
		p->held = true;
		p->pos = e->data;
		p->len = chunk;
		p->left = r->length - chunk;
		return 0;
	default:
		return -OPENRDMA_EPROTO;
	}
}

/* A chunk left in the ring by a request that did not read all of it. */
static void finish(struct rx_payload *p)
{
	if (p->held)
		shm_ring_release(&p->conn->req_rx, p->len);
	p->held = false;
}

int shm_answer(struct shm_conn *conn, const struct shm_elem *tmpl)
{
	struct shm_ring_prod *r = &conn->resp_tx;
	struct shm_backoff b;
	struct shm_elem *e;

	/* the initiator has room for an answer to each request it sent:
	 * full means it is slow, not that it gave up */
	shm_backoff_init(&b, 0);
	while (!(e = shm_ring_reserve(r))) {
		if (atomic_load(&conn->dead))
			return -OPENRDMA_ECONNRESET;
		if (b.n == 0)
			shm_peer_kick(conn->peer);
		shm_backoff(&b);
	}
	e->type = tmpl->type;
	e->op = tmpl->op;
	e->flags = tmpl->flags;
	e->pl = SHM_PL_NONE;
	e->seq = tmpl->seq;
	e->len = tmpl->len;
	e->ex = 0;
	e->data = 0;
	e->u = tmpl->u;
	shm_ring_commit(r, e);
	conn->answered = true;
	return 0;
}

/* A NAK for psn: what follows is dropped until psn comes again. */
static int nak(struct shm_conn *conn, uint32_t psn, uint8_t op, uint8_t timer)
{
	struct shm_elem a = {
		.type = SHM_EL_NAK, .op = op, .flags = timer, .seq = psn
	};

	conn->ack_due = false; /* a NAK says the ones before went well */
	conn->dropping = true;
	conn->drop_psn = psn;
	return shm_answer(conn, &a);
}

/* A dropped request: its element and its chunk go. */
static int drop(struct shm_conn *conn, const struct shm_elem *e)
{
	struct shm_ring_cons *c = &conn->req_rx;
	uint64_t len = 0;

	if (e->pl == SHM_PL_RING)
		len = e->u.r.aux;
	else if (e->pl == SHM_PL_CMA)
		len = (uint64_t)e->u.r.aux * sizeof(struct shm_iov);
	if (shm_ring_data_check(c, e->data, len))
		return -OPENRDMA_EPROTO;
	shm_ring_release(c, len);
	return 0;
}

static int rx_req(struct shm_conn *conn, const struct shm_elem *e)
{
	struct shm_qp *qp = conn->qp;
	enum openrdma_qp_state state = sw_qp_state(&qp->sw);
	struct rx_payload p = { 0 };
	uint8_t rnr_timer = 0, op;
	struct shm_elem a;
	struct sw_req r;
	uint32_t psn = e->seq;
	int status, ret;

	/* the passive side may send before our CM has us in RTR: the
	 * request waits, as an IB requester would retransmit it */
	if (state == OPENRDMA_QPS_INIT || state == OPENRDMA_QPS_RESET)
		return 1;
	if (conn->dropping) {
		if (psn != conn->drop_psn)
			return drop(conn, e);
		conn->dropping = false;
	}
	op = e->op;
	ret = decode(conn, e, &p, &r);
	if (ret) {
		finish(&p);
		return ret;
	}
	/* another process's request: what happened there before it is
	 * invisible to ThreadSanitizer */
	if (conn->peer->foreign)
		sw_dma_begin();
	status = sw_target_rc(&qp->sw, &r, &rnr_timer);
	if (conn->peer->foreign)
		sw_dma_end();
	finish(&p);
	shm_qp_publish(qp);
	if (status == SW_EXEC_RNR)
		return nak(conn, psn, SHM_NAK_RNR, rnr_timer);
	if (status != OPENRDMA_WC_SUCCESS)
		return nak(conn, psn, (uint8_t)status, 0);
	if (op != OPENRDMA_WR_RDMA_READ && !p.atomic) {
		conn->ack_due = true;
		conn->ack_psn = psn;
		/* a write is said with the next answer, or at the end of the
		 * batch; a completion the progress thread makes here lets the
		 * application go on (and disconnect): the initiator learns
		 * of it first.  A polling application's pass holds it back
		 * (shm_conn_rx). */
		if (op == OPENRDMA_WR_RDMA_WRITE || conn->ack_hold)
			return 0;
		return shm_rx_ack(conn);
	}
	memset(&a, 0, sizeof(a));
	a.type = SHM_EL_RESP;
	a.op = op;
	a.seq = psn;
	a.len = (uint32_t)r.length;
	a.u.resp.result = p.result;
	conn->ack_due = false;
	return shm_answer(conn, &a);
}

int shm_rx_ack(struct shm_conn *conn)
{
	struct shm_elem a = { .type = SHM_EL_ACK };

	atomic_store_explicit(&conn->ack_held, false, memory_order_relaxed);
	/* the space of what it acknowledges goes back with it */
	shm_ring_publish(&conn->req_rx);
	if (!conn->ack_due)
		return 0;
	conn->ack_due = false;
	a.seq = conn->ack_psn;
	return shm_answer(conn, &a);
}

int shm_rx_request(struct shm_conn *conn, const struct shm_elem *e)
{
	struct shm_ring_cons *c = &conn->req_rx;
	uint64_t len;

	switch (e->type) {
	case SHM_EL_REQ:
		return rx_req(conn, e);
	case SHM_EL_DATA:
		/* the rest of a stream its request no longer reads */
		len = e->len;
		if (shm_ring_data_check(c, e->data, len))
			return -OPENRDMA_EPROTO;
		shm_ring_release(c, len);
		return 0;
	default:
		return -OPENRDMA_EPROTO;
	}
}
