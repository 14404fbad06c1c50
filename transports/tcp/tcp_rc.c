/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * RC requests and their answers.
 *
 * Target: a request's header is checked by the toolkit before any of its
 * payload is read (sw_place_begin() for sends and writes, sw_target_rc()
 * for reads and atomics, which need no payload); the payload then lands
 * where the check said, and the request is acknowledged, or answered with
 * its data (READ_RESP, sent from the registered memory itself) or its
 * original value (ATOMIC_RESP).  A failed check is answered with a NAK,
 * whose payload is read and discarded; after a NAK the target drops the
 * requests that follow until the NAKed one comes again (RNR) or forever.
 *
 * Initiator: answers go to the QP's pipe (core/sw/sw_pipe.h), which
 * completes work requests in order.  Requests are written by tcp_rc_fill()
 * as the pipe hands them out.
 */
#include <arpa/inet.h>
#include <string.h>

#include <openrdma/log.h>

#include "transports/tcp/tcp.h"
#include "core/sw/dma.h"

/* Requests at least this long ask for an acknowledgement at once. */
#define ACKREQ_BYTES (64u << 10)

static enum openrdma_wr_opcode verb_opcode(uint8_t op)
{
	switch (op) {
	case TCP_OP_SEND_IMM:
		return OPENRDMA_WR_SEND_WITH_IMM;
	case TCP_OP_SEND_INV:
		return OPENRDMA_WR_SEND_WITH_INV;
	case TCP_OP_WRITE:
		return OPENRDMA_WR_RDMA_WRITE;
	case TCP_OP_WRITE_IMM:
		return OPENRDMA_WR_RDMA_WRITE_WITH_IMM;
	case TCP_OP_READ:
		return OPENRDMA_WR_RDMA_READ;
	case TCP_OP_CMP_SWAP:
		return OPENRDMA_WR_ATOMIC_CMP_AND_SWP;
	case TCP_OP_FETCH_ADD:
		return OPENRDMA_WR_ATOMIC_FETCH_AND_ADD;
	default:
		return OPENRDMA_WR_SEND;
	}
}

static uint8_t wire_opcode(enum openrdma_wr_opcode op)
{
	switch (op) {
	case OPENRDMA_WR_SEND_WITH_IMM:
		return TCP_OP_SEND_IMM;
	case OPENRDMA_WR_SEND_WITH_INV:
		return TCP_OP_SEND_INV;
	case OPENRDMA_WR_RDMA_WRITE:
		return TCP_OP_WRITE;
	case OPENRDMA_WR_RDMA_WRITE_WITH_IMM:
		return TCP_OP_WRITE_IMM;
	case OPENRDMA_WR_RDMA_READ:
		return TCP_OP_READ;
	case OPENRDMA_WR_ATOMIC_CMP_AND_SWP:
		return TCP_OP_CMP_SWAP;
	case OPENRDMA_WR_ATOMIC_FETCH_AND_ADD:
		return TCP_OP_FETCH_ADD;
	default:
		return TCP_OP_SEND;
	}
}

/* Immediate data is opaque bytes in network order: carried as such. */
static bool has_imm(uint8_t op)
{
	return op == TCP_OP_SEND_IMM || op == TCP_OP_WRITE_IMM;
}

/*
 * What the target hands back through sw_target_rc(): the place of the
 * READ data (sent from there, not copied) or the atomic's original value.
 */
struct capture {
	struct sw_payload base;
	void *ptr;
	size_t len;
	uint64_t value;
};

static int capture_read(struct sw_payload *pl, void *dst, size_t len)
{
	/* reads and atomics carry no payload to the target */
	return -OPENRDMA_EPROTO;
}

static int capture_write(struct sw_payload *pl, const void *src, size_t len)
{
	struct capture *c = (struct capture *)pl;

	c->ptr = (void *)(uintptr_t)src;
	c->len = len;
	if (len == sizeof(c->value))
		memcpy(&c->value, src, sizeof(c->value));
	return 0;
}

/* Answers psn with a NAK; the requests behind it are dropped until psn
 * comes again. */
static void nak(struct tcp_conn *c, uint32_t psn, int status, uint8_t timer)
{
	struct tcp_resp r = { .opcode = TCP_OP_NAK, .psn = psn };

	switch (status) {
	case SW_EXEC_RNR:
		r.syndrome = TCP_NAK_RNR;
		r.rnr_timer = timer & 31;
		break;
	case OPENRDMA_WC_REM_INV_REQ_ERR:
	case OPENRDMA_WC_REM_ACCESS_ERR:
	case OPENRDMA_WC_REM_OP_ERR:
	case OPENRDMA_WC_RETRY_EXC_ERR:
		r.syndrome = (uint8_t)status;
		break;
	default:
		r.syndrome = OPENRDMA_WC_REM_OP_ERR;
		break;
	}
	c->rx.dropping = true;
	c->rx.drop_psn = psn;
	if (tcp_tx_resp(c, &r))
		tcp_conn_close(c, -OPENRDMA_EPROTO, true);
}

static void req_from_frame(struct sw_req *req, const struct tcp_conn *c,
			   const struct tcp_frame *f)
{
	memset(req, 0, sizeof(*req));
	req->opcode = verb_opcode(f->opcode);
	if (f->flags & TCP_FLAG_SOLICITED)
		req->send_flags = OPENRDMA_SEND_SOLICITED;
	req->src_qpn = c->peer_qpn;
	req->ex = has_imm(f->opcode) ? htonl(f->imm) : f->imm;
	req->remote_addr = f->raddr;
	req->rkey = f->rkey;
	req->compare_add = f->compare_add;
	req->swap = f->swap;
	switch (f->opcode) {
	case TCP_OP_READ:
		req->length = f->rlen;
		break;
	case TCP_OP_CMP_SWAP:
	case TCP_OP_FETCH_ADD:
		req->length = sizeof(uint64_t);
		break;
	default:
		req->length = f->length;
		break;
	}
}

/* Points the payload's sink at the iovecs where it goes. */
static void sink_mem(struct tcp_rx *rx, const struct iovec *iov, int cnt)
{
	memcpy(rx->iov, iov, (size_t)cnt * sizeof(*iov));
	memcpy(rx->orig, iov, (size_t)cnt * sizeof(*iov));
	rx->iovcnt = cnt;
	rx->sink = TCP_SINK_MEM;
}

void tcp_rc_request(struct tcp_conn *c, struct tcp_qp *qp,
		    const struct tcp_frame *f)
{
	struct tcp_rx *rx = &c->rx;
	struct capture cap = { { capture_read, capture_write }, NULL, 0, 0 };
	struct tcp_resp r;
	struct sw_req req;
	uint8_t timer = 0;
	int status;

	if (rx->dropping) {
		/* the payload of what follows a NAK is discarded unread */
		if (f->psn != rx->drop_psn)
			return;
		rx->dropping = false;
	}
	/* no QP (reset, destroyed) or not the one named: nobody answers,
	 * which an initiator sees as retries running out */
	if (!qp || f->qpn != qp->base.qp_num) {
		nak(c, f->psn, OPENRDMA_WC_RETRY_EXC_ERR, 0);
		return;
	}
	req_from_frame(&req, c, f);
	switch (f->opcode) {
	case TCP_OP_READ:
	case TCP_OP_CMP_SWAP:
	case TCP_OP_FETCH_ADD:
		req.payload = &cap.base;
		sw_dma_begin();
		status = sw_target_rc(&qp->sw, &req, &timer);
		sw_dma_end();
		if (status != OPENRDMA_WC_SUCCESS) {
			nak(c, f->psn, status, timer);
			return;
		}
		memset(&r, 0, sizeof(r));
		r.psn = f->psn;
		if (f->opcode == TCP_OP_READ) {
			r.opcode = TCP_OP_READ_RESP;
			r.ptr = cap.ptr;
			r.len = req.length;
			r.rkey = f->rkey;
			r.raddr = f->raddr;
			r.pd = qp->base.pd;
			/* the rx turn holds the memory guard: stable */
			r.gen = atomic_load(&qp->ctx->mem_gen);
		} else {
			r.opcode = TCP_OP_ATOMIC_RESP;
			r.value = cap.value;
		}
		/* more reads in flight than the IRD allows */
		if (tcp_tx_resp(c, &r))
			tcp_conn_close(c, -OPENRDMA_EPROTO, true);
		return;
	default:
		status = sw_place_begin(&qp->sw, &req, &rx->place, &timer);
		if (status != OPENRDMA_WC_SUCCESS) {
			nak(c, f->psn, status, timer);
			return;
		}
		rx->placing = true;
		if (rx->place.iovcnt)
			sink_mem(rx, rx->place.iov, rx->place.iovcnt);
		return;
	}
}

void tcp_rc_request_end(struct tcp_conn *c, struct tcp_qp *qp,
			const struct tcp_frame *f)
{
	struct tcp_rx *rx = &c->rx;

	if (!rx->placing)
		return;
	rx->placing = false;
	/*
	 * The answer is queued before the receive completes, as an RNIC
	 * acknowledges before its CQE shows: an application that disconnects
	 * on the completion sends it ahead of its DISCONNECT.
	 */
	if (rx->status) {
		/* its memory went away while the payload came */
		nak(c, f->psn, OPENRDMA_WC_REM_OP_ERR, 0);
		sw_place_end(&qp->sw, &rx->place,
			     (enum openrdma_wc_status)rx->status);
		return;
	}
	tcp_tx_ack(c, f->psn, f->flags & TCP_FLAG_ACKREQ);
	sw_place_end(&qp->sw, &rx->place, OPENRDMA_WC_SUCCESS);
}

int tcp_rc_answer(struct tcp_conn *c, struct tcp_qp *qp,
		  const struct tcp_frame *f)
{
	struct tcp_rx *rx = &c->rx;
	struct iovec iov[SW_MAX_SGE];
	struct sw_pipe_pass pass;
	uint64_t deadline;
	int ret, cnt = 0;

	/* answers for a QP no longer here: their requests were flushed */
	if (!qp)
		return 0;
	if (f->qpn != qp->base.qp_num)
		return -OPENRDMA_EPROTO;
	switch (f->opcode) {
	case TCP_OP_NAK:
		sw_pipe_begin(&qp->pipe, &pass);
		ret = sw_pipe_nak(&qp->pipe, &pass, f->psn,
				  f->syndrome == TCP_NAK_RNR ? SW_EXEC_RNR :
							       f->syndrome,
				  f->rnr_timer);
		deadline = pass.deadline;
		sw_pipe_end(&qp->pipe, &pass);
		if (!ret && deadline)
			tcp_qp_rnr_wait(qp, deadline);
		return ret;
	case TCP_OP_READ_RESP:
		sw_pipe_begin(&qp->pipe, &pass);
		ret = sw_pipe_read_map(&qp->pipe, &pass, f->psn, f->length, iov,
				       &cnt);
		sw_pipe_end(&qp->pipe, &pass);
		if (ret < 0)
			return ret;
		rx->status = ret;
		if (ret == OPENRDMA_WC_SUCCESS && cnt)
			sink_mem(rx, iov, cnt);
		return 0;
	case TCP_OP_ATOMIC_RESP:
		sw_pipe_begin(&qp->pipe, &pass);
		ret = sw_pipe_atomic_done(&qp->pipe, &pass, f->psn, f->value);
		sw_pipe_end(&qp->pipe, &pass);
		return ret;
	default:
		/* ACK: its ack field did the work */
		return 0;
	}
}

int tcp_rc_answer_end(struct tcp_conn *c, struct tcp_qp *qp,
		      const struct tcp_frame *f)
{
	struct sw_pipe_pass pass;

	if (!qp)
		return 0;
	sw_pipe_begin(&qp->pipe, &pass);
	sw_pipe_read_done(&qp->pipe, &pass, f->psn,
			  (enum openrdma_wc_status)c->rx.status);
	sw_pipe_end(&qp->pipe, &pass);
	return 0;
}

static bool same_iov(const struct iovec *a, const struct iovec *b, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (a[i].iov_base != b[i].iov_base ||
		    a[i].iov_len != b[i].iov_len)
			return false;
	return true;
}

bool tcp_rc_sink_check(struct tcp_conn *c, struct tcp_qp *qp)
{
	struct tcp_rx *rx = &c->rx;
	const struct tcp_frame *f = &rx->f;
	struct iovec iov[SW_MAX_SGE];
	struct sw_recv_wqe *w;
	struct sw_pipe_pass pass;
	struct sw_mem mem;
	uint64_t len, left;
	int i, cnt = 0, ret;

	if (!qp)
		return false;
	switch (f->opcode) {
	case TCP_OP_WRITE:
	case TCP_OP_WRITE_IMM:
		return sw_keymap_check(qp->ctx->keymap, f->rkey, qp->base.pd,
				       f->raddr, f->length,
				       OPENRDMA_ACCESS_REMOTE_WRITE,
				       &mem) == OPENRDMA_WC_SUCCESS &&
		       mem.ptr == rx->orig[0].iov_base;
	case TCP_OP_READ_RESP:
		sw_pipe_begin(&qp->pipe, &pass);
		ret = sw_pipe_read_map(&qp->pipe, &pass, f->psn, f->length, iov,
				       &cnt);
		sw_pipe_end(&qp->pipe, &pass);
		return ret == OPENRDMA_WC_SUCCESS && cnt == rx->iovcnt &&
		       same_iov(iov, rx->orig, cnt);
	default:
		w = rx->place.recv.wqe;
		if (sw_keymap_map_sges(qp->ctx->keymap, qp->base.pd, w->sge,
				       w->num_sge, OPENRDMA_ACCESS_LOCAL_WRITE,
				       iov, &cnt, &len) != OPENRDMA_WC_SUCCESS)
			return false;
		/* as sw_place_begin() trimmed them: the payload's length */
		left = f->length;
		for (i = 0; i < cnt && left; i++) {
			if (iov[i].iov_len > left)
				iov[i].iov_len = (size_t)left;
			left -= iov[i].iov_len;
		}
		return i == rx->iovcnt && same_iov(iov, rx->orig, i);
	}
}

/* The memory behind a request's payload, to check it again later. */
static void add_payload(struct tcp_conn *c, struct tcp_qp *qp,
			const struct sw_pipe_req *req)
{
	const struct sw_send_wqe *w = req->wqe;
	struct tcp_guard g;
	int i, k = 0;

	if (w->is_inline) {
		/* the send queue's own copy */
		if (req->iovcnt)
			tcp_tx_mem(c, req->iov[0].iov_base, req->iov[0].iov_len,
				   NULL);
		return;
	}
	for (i = 0; i < w->num_sge && k < req->iovcnt; i++) {
		if (!w->sge[i].length)
			continue;
		g.key = w->sge[i].lkey;
		g.access = 0; /* local read */
		g.pd = qp->base.pd;
		g.addr = w->sge[i].addr;
		g.len = w->sge[i].length;
		g.ptr = req->iov[k].iov_base;
		tcp_tx_mem(c, req->iov[k].iov_base, req->iov[k].iov_len, &g);
		k++;
	}
}

void tcp_rc_fill(struct tcp_conn *c, struct tcp_qp *qp, bool *has_ack,
		 uint32_t ack)
{
	struct sw_pipe *pipe = &qp->pipe;
	struct sw_pipe_pass pass;
	struct sw_pipe_req req;
	const struct sw_send_wqe *w;
	uint64_t wait = 0;
	struct tcp_frame f;
	int r;

	sw_pipe_begin(pipe, &pass);
	while (tcp_tx_room(c, 1 + SW_MAX_SGE)) {
		r = sw_pipe_next(pipe, &pass, &req);
		if (r != SW_PIPE_SEND) {
			if (r == SW_PIPE_WAIT)
				wait = pass.deadline;
			break;
		}
		w = req.wqe;
		memset(&f, 0, sizeof(f));
		f.opcode = wire_opcode(w->opcode);
		f.qpn = c->peer_qpn;
		f.psn = req.psn;
		if ((w->send_flags & OPENRDMA_SEND_SOLICITED) &&
		    f.opcode != TCP_OP_WRITE && f.opcode != TCP_OP_READ &&
		    f.opcode != TCP_OP_CMP_SWAP && f.opcode != TCP_OP_FETCH_ADD)
			f.flags |= TCP_FLAG_SOLICITED;
		/* the send queue fills up, or a large transfer: the window
		 * moves on only with acknowledgements */
		if (sw_pipe_unacked(pipe) >= qp->ackreq ||
		    req.len >= ACKREQ_BYTES)
			f.flags |= TCP_FLAG_ACKREQ;
		if (*has_ack) {
			f.flags |= TCP_FLAG_ACK;
			f.ack = ack;
			*has_ack = false;
		}
		switch (f.opcode) {
		case TCP_OP_READ:
			f.raddr = w->remote_addr;
			f.rkey = w->rkey;
			f.rlen = (uint32_t)req.len;
			tcp_tx_frame(c, &f);
			break;
		case TCP_OP_CMP_SWAP:
		case TCP_OP_FETCH_ADD:
			f.raddr = w->remote_addr;
			f.rkey = w->rkey;
			f.compare_add = w->compare_add;
			f.swap = w->swap;
			tcp_tx_frame(c, &f);
			break;
		default:
			f.length = (uint32_t)req.len;
			f.raddr = w->remote_addr;
			f.rkey = w->rkey;
			f.imm = has_imm(f.opcode) ? ntohl(w->ex) : w->ex;
			tcp_tx_frame(c, &f);
			add_payload(c, qp, &req);
			break;
		}
	}
	sw_pipe_end(pipe, &pass);
	if (wait)
		tcp_qp_rnr_wait(qp, wait);
}
