/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
#include <string.h>

#include <openrdma/transport.h>

#include "core/sw/sw_place.h"

static bool accepts_requests(struct sw_qp *t)
{
	enum openrdma_qp_state state = sw_qp_state(t);

	return state == OPENRDMA_QPS_RTR || state == OPENRDMA_QPS_RTS;
}

/* Completes a taken receive in error; the target QP goes to ERR. */
static void recv_fail(struct sw_qp *t, struct sw_recv *r,
		      enum openrdma_wc_status status)
{
	struct openrdma_wc wc;

	/* whoever polls the error sees the QP in ERR already */
	openrdma_qp_state_set(t->qp, OPENRDMA_QPS_ERR);
	memset(&wc, 0, sizeof(wc));
	wc.status = status;
	wc.opcode = OPENRDMA_WC_RECV;
	sw_qp_recv_done(t, r, &wc, true);
	sw_qp_error(t, -1);
}

/* Keeps the first len bytes of an iovec list. */
static int iov_trim(struct iovec *iov, int cnt, uint64_t len)
{
	int i;

	for (i = 0; i < cnt && len; i++) {
		if (iov[i].iov_len > len)
			iov[i].iov_len = (size_t)len;
		len -= iov[i].iov_len;
	}
	return i;
}

static int place_send(struct sw_qp *t, const struct sw_req *req,
		      struct sw_place *p, uint8_t *rnr_timer)
{
	uint64_t room;

	if (sw_qp_recv_take(t, &p->recv)) {
		*rnr_timer = atomic_load(&t->min_rnr_timer);
		return SW_EXEC_RNR;
	}
	if (sw_keymap_map_sges(t->keymap, t->qp->pd, p->recv.wqe->sge,
			       p->recv.wqe->num_sge,
			       OPENRDMA_ACCESS_LOCAL_WRITE, p->iov, &p->iovcnt,
			       &room) != OPENRDMA_WC_SUCCESS) {
		recv_fail(t, &p->recv, OPENRDMA_WC_LOC_PROT_ERR);
		return OPENRDMA_WC_REM_OP_ERR;
	}
	if (req->length > room) {
		recv_fail(t, &p->recv, OPENRDMA_WC_LOC_LEN_ERR);
		return OPENRDMA_WC_REM_INV_REQ_ERR;
	}
	if (req->opcode == OPENRDMA_WR_SEND_WITH_INV &&
	    sw_keymap_invalidate(t->keymap, req->ex, t->qp->pd)) {
		recv_fail(t, &p->recv, OPENRDMA_WC_LOC_PROT_ERR);
		return OPENRDMA_WC_REM_OP_ERR;
	}
	p->iovcnt = iov_trim(p->iov, p->iovcnt, req->length);
	p->has_recv = true;
	return OPENRDMA_WC_SUCCESS;
}

static int place_write(struct sw_qp *t, const struct sw_req *req,
		       struct sw_place *p, uint8_t *rnr_timer)
{
	struct sw_mem mem;

	if (!(atomic_load(&t->access_flags) & OPENRDMA_ACCESS_REMOTE_WRITE))
		goto access_error;
	/* a zero-length write names no memory: no key to check */
	if (req->length &&
	    sw_keymap_check(t->keymap, req->rkey, t->qp->pd, req->remote_addr,
			    req->length, OPENRDMA_ACCESS_REMOTE_WRITE,
			    &mem) != OPENRDMA_WC_SUCCESS)
		goto access_error;
	/* the receive is taken before any byte moves, so an RNR retry
	 * repeats nothing */
	if (req->opcode == OPENRDMA_WR_RDMA_WRITE_WITH_IMM) {
		if (sw_qp_recv_take(t, &p->recv)) {
			*rnr_timer = atomic_load(&t->min_rnr_timer);
			return SW_EXEC_RNR;
		}
		p->has_recv = true;
	}
	if (req->length) {
		p->iov[0].iov_base = mem.ptr;
		p->iov[0].iov_len = (size_t)req->length;
		p->iovcnt = 1;
	}
	return OPENRDMA_WC_SUCCESS;

access_error:
	sw_qp_error(t, OPENRDMA_EVENT_QP_ACCESS_ERR);
	return OPENRDMA_WC_REM_ACCESS_ERR;
}

int sw_place_begin(struct sw_qp *target, const struct sw_req *req,
		   struct sw_place *p, uint8_t *rnr_timer)
{
	p->opcode = req->opcode;
	p->send_flags = req->send_flags;
	p->src_qpn = req->src_qpn;
	p->ex = req->ex;
	p->length = req->length;
	p->has_recv = false;
	p->iovcnt = 0;
	if (!accepts_requests(target))
		return OPENRDMA_WC_RETRY_EXC_ERR;
	switch (req->opcode) {
	case OPENRDMA_WR_SEND:
	case OPENRDMA_WR_SEND_WITH_IMM:
	case OPENRDMA_WR_SEND_WITH_INV:
		return place_send(target, req, p, rnr_timer);
	case OPENRDMA_WR_RDMA_WRITE:
	case OPENRDMA_WR_RDMA_WRITE_WITH_IMM:
		return place_write(target, req, p, rnr_timer);
	default:
		sw_qp_error(target, OPENRDMA_EVENT_QP_REQ_ERR);
		return OPENRDMA_WC_REM_INV_REQ_ERR;
	}
}

void sw_place_end(struct sw_qp *target, struct sw_place *p,
		  enum openrdma_wc_status status)
{
	struct openrdma_wc wc;

	if (status != OPENRDMA_WC_SUCCESS) {
		if (p->has_recv)
			recv_fail(target, &p->recv, status);
		else
			sw_qp_error(target, -1);
		p->has_recv = false;
		return;
	}
	if (!p->has_recv)
		return;
	p->has_recv = false;
	memset(&wc, 0, sizeof(wc));
	wc.status = OPENRDMA_WC_SUCCESS;
	wc.byte_len = (uint32_t)p->length;
	wc.src_qp = p->src_qpn;
	switch (p->opcode) {
	case OPENRDMA_WR_SEND_WITH_IMM:
		wc.opcode = OPENRDMA_WC_RECV;
		wc.wc_flags = OPENRDMA_WC_WITH_IMM;
		wc.imm_data = p->ex;
		break;
	case OPENRDMA_WR_SEND_WITH_INV:
		wc.opcode = OPENRDMA_WC_RECV;
		wc.wc_flags = OPENRDMA_WC_WITH_INV;
		wc.invalidated_rkey = p->ex;
		break;
	case OPENRDMA_WR_RDMA_WRITE_WITH_IMM:
		wc.opcode = OPENRDMA_WC_RECV_RDMA_WITH_IMM;
		wc.wc_flags = OPENRDMA_WC_WITH_IMM;
		wc.imm_data = p->ex;
		break;
	default:
		wc.opcode = OPENRDMA_WC_RECV;
		break;
	}
	sw_qp_recv_done(target, &p->recv, &wc,
			p->send_flags & OPENRDMA_SEND_SOLICITED);
}
