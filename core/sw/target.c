/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
#include <string.h>

#include "core/sw/addr.h"
#include "core/sw/target.h"

static bool accepts_requests(struct sw_qp *t)
{
	enum openrdma_qp_state state = sw_qp_state(t);

	return state == OPENRDMA_QPS_RTR || state == OPENRDMA_QPS_RTS;
}

/* Remote access violation: the target QP goes to ERR with QP_ACCESS_ERR. */
static int access_error(struct sw_qp *t)
{
	sw_qp_error(t, OPENRDMA_EVENT_QP_ACCESS_ERR);
	return OPENRDMA_WC_REM_ACCESS_ERR;
}

/* Fails a taken receive with status; the target QP goes to ERR. */
static void recv_fail(struct sw_qp *t, struct sw_recv *r,
		      enum openrdma_wc_status status, bool qp_error)
{
	struct openrdma_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.status = status;
	wc.opcode = OPENRDMA_WC_RECV;
	sw_qp_recv_done(t, r, &wc, true);
	if (qp_error)
		sw_qp_error(t, -1);
}

/* Checks and maps the receive's SGEs for writing. */
static enum openrdma_wc_status map_recv(struct sw_qp *t, struct sw_recv *r,
					struct iovec *iov, int *cnt,
					uint64_t *len)
{
	return sw_keymap_map_sges(t->keymap, t->qp->pd, r->wqe->sge,
				  r->wqe->num_sge, OPENRDMA_ACCESS_LOCAL_WRITE,
				  iov, cnt, len);
}

static int do_send(struct sw_qp *t, const struct sw_req *req,
		   uint8_t *rnr_timer)
{
	struct iovec iov[SW_MAX_SGE];
	struct sw_iov_cursor cur;
	struct openrdma_wc wc;
	struct sw_recv r;
	uint64_t len;
	int cnt;

	if (sw_qp_recv_take(t, &r)) {
		*rnr_timer = atomic_load(&t->min_rnr_timer);
		return SW_EXEC_RNR;
	}
	if (map_recv(t, &r, iov, &cnt, &len) != OPENRDMA_WC_SUCCESS) {
		recv_fail(t, &r, OPENRDMA_WC_LOC_PROT_ERR, true);
		return OPENRDMA_WC_REM_OP_ERR;
	}
	if (req->length > len) {
		recv_fail(t, &r, OPENRDMA_WC_LOC_LEN_ERR, true);
		return OPENRDMA_WC_REM_INV_REQ_ERR;
	}
	if (req->opcode == OPENRDMA_WR_SEND_WITH_INV &&
	    sw_keymap_invalidate(t->keymap, req->ex, t->qp->pd)) {
		recv_fail(t, &r, OPENRDMA_WC_LOC_PROT_ERR, true);
		return OPENRDMA_WC_REM_OP_ERR;
	}
	sw_iov_cursor_init(&cur, iov, cnt);
	if (sw_iov_cursor_fill(&cur, req->payload, req->length)) {
		recv_fail(t, &r, OPENRDMA_WC_GENERAL_ERR, true);
		return OPENRDMA_WC_REM_OP_ERR;
	}

	memset(&wc, 0, sizeof(wc));
	wc.status = OPENRDMA_WC_SUCCESS;
	wc.opcode = OPENRDMA_WC_RECV;
	wc.byte_len = (uint32_t)req->length;
	wc.src_qp = req->src_qpn;
	if (req->opcode == OPENRDMA_WR_SEND_WITH_IMM) {
		wc.wc_flags = OPENRDMA_WC_WITH_IMM;
		wc.imm_data = req->ex;
	} else if (req->opcode == OPENRDMA_WR_SEND_WITH_INV) {
		wc.wc_flags = OPENRDMA_WC_WITH_INV;
		wc.invalidated_rkey = req->ex;
	}
	sw_qp_recv_done(t, &r, &wc, req->send_flags & OPENRDMA_SEND_SOLICITED);
	return OPENRDMA_WC_SUCCESS;
}

/* Checks an RDMA or atomic access to the target's memory. */
static int check_remote(struct sw_qp *t, const struct sw_req *req,
			unsigned int access, struct sw_mem *mem)
{
	if (!(atomic_load(&t->access_flags) & access))
		return access_error(t);
	/* a zero-length RDMA access names no memory: no key to check */
	if (!req->length && access != OPENRDMA_ACCESS_REMOTE_ATOMIC) {
		mem->ptr = NULL;
		return OPENRDMA_WC_SUCCESS;
	}
	if (sw_keymap_check(t->keymap, req->rkey, t->qp->pd, req->remote_addr,
			    req->length, access, mem) != OPENRDMA_WC_SUCCESS)
		return access_error(t);
	return OPENRDMA_WC_SUCCESS;
}

static int do_write(struct sw_qp *t, const struct sw_req *req,
		    uint8_t *rnr_timer)
{
	bool imm = req->opcode == OPENRDMA_WR_RDMA_WRITE_WITH_IMM;
	struct openrdma_wc wc;
	struct sw_mem mem;
	struct sw_recv r;
	int status;

	status = check_remote(t, req, OPENRDMA_ACCESS_REMOTE_WRITE, &mem);
	if (status != OPENRDMA_WC_SUCCESS)
		return status;
	/* the receive is taken before any byte moves, so an RNR retry
	 * repeats nothing */
	if (imm && sw_qp_recv_take(t, &r)) {
		*rnr_timer = atomic_load(&t->min_rnr_timer);
		return SW_EXEC_RNR;
	}
	if (req->length &&
	    req->payload->read(req->payload, mem.ptr, (size_t)req->length)) {
		if (imm)
			recv_fail(t, &r, OPENRDMA_WC_GENERAL_ERR, true);
		else
			sw_qp_error(t, -1);
		return OPENRDMA_WC_REM_OP_ERR;
	}
	if (!imm)
		return OPENRDMA_WC_SUCCESS;

	memset(&wc, 0, sizeof(wc));
	wc.status = OPENRDMA_WC_SUCCESS;
	wc.opcode = OPENRDMA_WC_RECV_RDMA_WITH_IMM;
	wc.byte_len = (uint32_t)req->length;
	wc.src_qp = req->src_qpn;
	wc.wc_flags = OPENRDMA_WC_WITH_IMM;
	wc.imm_data = req->ex;
	sw_qp_recv_done(t, &r, &wc, req->send_flags & OPENRDMA_SEND_SOLICITED);
	return OPENRDMA_WC_SUCCESS;
}

static int do_read(struct sw_qp *t, const struct sw_req *req)
{
	struct sw_mem mem;
	int status;

	status = check_remote(t, req, OPENRDMA_ACCESS_REMOTE_READ, &mem);
	if (status != OPENRDMA_WC_SUCCESS)
		return status;
	if (req->length &&
	    req->payload->write(req->payload, mem.ptr, (size_t)req->length))
		return OPENRDMA_WC_REM_OP_ERR;
	return OPENRDMA_WC_SUCCESS;
}

static int do_atomic(struct sw_qp *t, const struct sw_req *req)
{
	struct sw_req r8 = *req;
	struct sw_mem mem;
	uint64_t *word, orig;
	int status;

	r8.length = sizeof(uint64_t);
	status = check_remote(t, &r8, OPENRDMA_ACCESS_REMOTE_ATOMIC, &mem);
	if (status != OPENRDMA_WC_SUCCESS)
		return status;
	if ((uintptr_t)mem.ptr % sizeof(uint64_t)) {
		sw_qp_error(t, OPENRDMA_EVENT_QP_REQ_ERR);
		return OPENRDMA_WC_REM_INV_REQ_ERR;
	}
	/* aligned 8-byte words: the CPU's atomics make these atomic with
	 * respect to every other atomic on them, from any QP or thread */
	word = (uint64_t *)(void *)mem.ptr;
	if (req->opcode == OPENRDMA_WR_ATOMIC_CMP_AND_SWP) {
		orig = req->compare_add;
		__atomic_compare_exchange_n(word, &orig, req->swap, false,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	} else {
		orig = __atomic_fetch_add(word, req->compare_add,
					  __ATOMIC_SEQ_CST);
	}
	if (req->payload->write(req->payload, &orig, sizeof(orig)))
		return OPENRDMA_WC_REM_OP_ERR;
	return OPENRDMA_WC_SUCCESS;
}

int sw_target_rc(struct sw_qp *target, const struct sw_req *req,
		 uint8_t *rnr_timer)
{
	if (!accepts_requests(target))
		return OPENRDMA_WC_RETRY_EXC_ERR;
	switch (req->opcode) {
	case OPENRDMA_WR_SEND:
	case OPENRDMA_WR_SEND_WITH_IMM:
	case OPENRDMA_WR_SEND_WITH_INV:
		return do_send(target, req, rnr_timer);
	case OPENRDMA_WR_RDMA_WRITE:
	case OPENRDMA_WR_RDMA_WRITE_WITH_IMM:
		return do_write(target, req, rnr_timer);
	case OPENRDMA_WR_RDMA_READ:
		return do_read(target, req);
	case OPENRDMA_WR_ATOMIC_CMP_AND_SWP:
	case OPENRDMA_WR_ATOMIC_FETCH_AND_ADD:
		return do_atomic(target, req);
	default:
		sw_qp_error(target, OPENRDMA_EVENT_QP_REQ_ERR);
		return OPENRDMA_WC_REM_INV_REQ_ERR;
	}
}

int sw_target_ud(struct sw_qp *target, const struct sw_req *req)
{
	struct iovec iov[SW_MAX_SGE];
	struct openrdma_grh grh;
	struct sw_iov_cursor cur;
	struct openrdma_wc wc;
	struct sw_recv r;
	uint64_t len;
	int cnt;

	if (target->qp->qp_type != OPENRDMA_QPT_UD || !accepts_requests(target))
		return -OPENRDMA_ENOTCONN;
	if (req->qkey != atomic_load(&target->qkey))
		return -OPENRDMA_EPERM;
	if (sw_qp_recv_take(target, &r))
		return -OPENRDMA_EAGAIN;
	if (map_recv(target, &r, iov, &cnt, &len) != OPENRDMA_WC_SUCCESS) {
		recv_fail(target, &r, OPENRDMA_WC_LOC_PROT_ERR, true);
		return -OPENRDMA_EFAULT;
	}
	if (len < OPENRDMA_GRH_LEN + req->length) {
		recv_fail(target, &r, OPENRDMA_WC_LOC_LEN_ERR, false);
		return -OPENRDMA_EMSGSIZE;
	}
	sw_grh_build(&grh, &req->sgid, &req->dgid, (uint32_t)req->length);
	sw_iov_cursor_init(&cur, iov, cnt);
	sw_iov_cursor_put(&cur, &grh, OPENRDMA_GRH_LEN);
	if (sw_iov_cursor_fill(&cur, req->payload, req->length)) {
		recv_fail(target, &r, OPENRDMA_WC_GENERAL_ERR, false);
		return -OPENRDMA_EFAULT;
	}

	memset(&wc, 0, sizeof(wc));
	wc.status = OPENRDMA_WC_SUCCESS;
	wc.opcode = OPENRDMA_WC_RECV;
	wc.byte_len = (uint32_t)(OPENRDMA_GRH_LEN + req->length);
	wc.src_qp = req->src_qpn;
	wc.slid = req->slid;
	wc.wc_flags = OPENRDMA_WC_GRH;
	if (req->opcode == OPENRDMA_WR_SEND_WITH_IMM) {
		wc.wc_flags |= OPENRDMA_WC_WITH_IMM;
		wc.imm_data = req->ex;
	}
	sw_qp_recv_done(target, &r, &wc,
			req->send_flags & OPENRDMA_SEND_SOLICITED);
	return 0;
}
