/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
#include <stdlib.h>
#include <string.h>

#include <openrdma/transport.h>

#include "core/sw/mw.h"
#include "core/sw/payload.h"
#include "core/sw/sw_pipe.h"
#include "core/sw/timer.h"

static struct sw_sq *pipe_sq(struct sw_pipe *p)
{
	return &p->sqp->sq;
}

static struct sw_pipe_slot *slot_of(struct sw_pipe *p, uint32_t idx)
{
	return &p->slot[idx & (p->nslots - 1)];
}

static struct sw_send_wqe *wqe_of(struct sw_pipe *p, uint32_t idx)
{
	struct sw_sq *sq = pipe_sq(p);

	return &sq->wqe[idx & sq->mask];
}

static bool is_rd_atomic(enum openrdma_wr_opcode opcode)
{
	return opcode == OPENRDMA_WR_RDMA_READ ||
	       opcode == OPENRDMA_WR_ATOMIC_CMP_AND_SWP ||
	       opcode == OPENRDMA_WR_ATOMIC_FETCH_AND_ADD;
}

static int slots_alloc(struct sw_pipe *p)
{
	uint32_t n = pipe_sq(p)->mask + 1;
	struct sw_pipe_slot *slot;

	if (p->slot && p->nslots == n)
		return 0;
	slot = calloc(n, sizeof(*slot));
	if (!slot)
		return -OPENRDMA_ENOMEM;
	free(p->slot);
	p->slot = slot;
	p->nslots = n;
	return 0;
}

int sw_pipe_init(struct sw_pipe *p, struct sw_qp *sqp)
{
	memset(p, 0, sizeof(*p));
	p->sqp = sqp;
	p->max_rd = 1;
	return slots_alloc(p);
}

void sw_pipe_fini(struct sw_pipe *p)
{
	free(p->slot);
	p->slot = NULL;
}

int sw_pipe_reset(struct sw_pipe *p)
{
	struct sw_sq *sq = pipe_sq(p);
	int ret;

	/* nothing is in flight: a resize happens before RTS, a reset drops
	 * everything; the slot array only has to follow the ring's size */
	core_lock_acquire(&sq->lock);
	ret = slots_alloc(p);
	p->sent = sq->head;
	p->acked = sq->head;
	p->rd_out = 0;
	p->stopped = false;
	p->failed = false;
	p->lost = false;
	__atomic_store_n(&p->unsent, 0, __ATOMIC_RELAXED);
	core_lock_release(&sq->lock);
	return ret;
}

void sw_pipe_set_max_rd(struct sw_pipe *p, uint32_t max_rd)
{
	struct sw_sq *sq = pipe_sq(p);

	core_lock_acquire(&sq->lock);
	p->max_rd = max_rd ? max_rd : 1;
	core_lock_release(&sq->lock);
}

int sw_pipe_post_send(struct sw_pipe *p, struct openrdma_send_wr *wr,
		      struct openrdma_send_wr **bad_wr)
{
	struct sw_qp *sqp = p->sqp;
	enum openrdma_qp_state state = sw_qp_state(sqp);
	struct sw_sq *sq = &sqp->sq;
	int ret = 0;

	if (state != OPENRDMA_QPS_RTS && state != OPENRDMA_QPS_ERR) {
		*bad_wr = wr;
		return -OPENRDMA_EINVAL;
	}
	core_lock_acquire(&sq->lock);
	for (; wr; wr = wr->next) {
		ret = sw_send_wr_check(sqp->qp, wr);
		if (!ret)
			ret = sw_sq_post_locked(sq, wr, sqp->qp->sq_sig_all);
		if (ret) {
			*bad_wr = wr;
			break;
		}
	}
	__atomic_store_n(&p->unsent, sq->tail - p->sent, __ATOMIC_RELAXED);
	core_lock_release(&sq->lock);
	/* in ERR the toolkit's progress flushes them at once */
	if (sw_qp_state(sqp) == OPENRDMA_QPS_ERR)
		sw_qp_progress(sqp);
	return ret;
}

/* Forgets what a flush (or reset) completed behind the pipe's back. */
static void sync_locked(struct sw_pipe *p)
{
	struct sw_sq *sq = pipe_sq(p);

	if ((uint32_t)(p->sent - sq->head) > (uint32_t)(sq->tail - sq->head)) {
		p->sent = sq->head;
		p->rd_out = 0;
	}
	if ((uint32_t)(p->acked - sq->head) > (uint32_t)(p->sent - sq->head))
		p->acked = sq->head;
}

void sw_pipe_begin(struct sw_pipe *p, struct sw_pipe_pass *pass)
{
	memset(pass, 0, sizeof(*pass));
	pass->fail_event = -1;
	core_lock_acquire(&pipe_sq(p)->lock);
	sync_locked(p);
}

/* Retires the finished requests at the head, in order. */
static void retire_locked(struct sw_pipe *p, struct sw_pipe_pass *pass)
{
	struct sw_sq *sq = pipe_sq(p);
	struct sw_pipe_slot *s;
	enum openrdma_wc_status status;

	while (sq->head != p->sent) {
		s = slot_of(p, sq->head);
		if (!s->done)
			break;
		status = (enum openrdma_wc_status)s->status;
		/* whoever polls the error sees the QP in ERR already; the
		 * toolkit flushes the rest when sw_pipe_end() lets go */
		if (status != OPENRDMA_WC_SUCCESS)
			openrdma_qp_state_set(p->sqp->qp, OPENRDMA_QPS_ERR);
		sw_sq_retire_locked(sq, status, s->byte_len, p->sqp->qp->qp_num,
				    p->sqp->scq, &pass->batch);
		if (status != OPENRDMA_WC_SUCCESS) {
			pass->fail = true;
			break;
		}
	}
	if ((uint32_t)(p->acked - sq->head) > (uint32_t)(p->sent - sq->head))
		p->acked = sq->head;
}

void sw_pipe_end(struct sw_pipe *p, struct sw_pipe_pass *pass)
{
	struct sw_qp *sqp = p->sqp;

	retire_locked(p, pass);
	if (pass->fail)
		p->failed = true;
	/* an overrun CQ_ERR finds the QP in ERR already, as the semantics
	 * page says; QP_FATAL follows it */
	if (pass->batch.lost) {
		p->failed = true;
		openrdma_qp_state_set(sqp->qp, OPENRDMA_QPS_ERR);
	}
	__atomic_store_n(&p->unsent, pipe_sq(p)->tail - p->sent,
			 __ATOMIC_RELAXED);
	core_lock_release(&pipe_sq(p)->lock);
	if (sw_cq_batch_done(&pass->batch))
		sw_qp_error(sqp, OPENRDMA_EVENT_QP_FATAL);
	if (pass->fail)
		sw_qp_error(sqp, pass->fail_event);
}

/*
 * Finishes request idx without the wire (a local operation, or a request
 * that failed its local checks).  After a failure nothing more is sent:
 * the failure completes in order once the requests before it are answered.
 */
static void finish_local(struct sw_pipe *p, uint32_t idx,
			 enum openrdma_wc_status status)
{
	struct sw_pipe_slot *s = slot_of(p, idx);

	s->psn = idx;
	s->done = true;
	s->status = (uint8_t)status;
	s->byte_len = 0;
	if (status != OPENRDMA_WC_SUCCESS) {
		p->stopped = true;
		p->stop = idx + 1;
	}
}

/* Counts one RNR retry of w; false once they are used up. */
static bool rnr_retry_left(struct sw_qp *sqp, struct sw_send_wqe *w)
{
	if (w->rnr_no_wait)
		return false;
	if (atomic_load(&sqp->rnr_retry) == SW_RNR_RETRY_INFINITE)
		return true;
	if (!w->rnr_left)
		return false;
	w->rnr_left--;
	return true;
}

/* Maps the local buffers of w into req; returns the request's status. */
static enum openrdma_wc_status map_req(struct sw_pipe *p, struct sw_send_wqe *w,
				       struct sw_pipe_req *req)
{
	struct sw_qp *sqp = p->sqp;
	enum openrdma_wc_status status;

	if (w->is_inline) {
		req->iov[0].iov_base = w->inline_data;
		req->iov[0].iov_len = w->inline_len;
		req->iovcnt = w->inline_len ? 1 : 0;
		req->len = w->inline_len;
	} else {
		/* the device writes read data and atomic results */
		status = sw_keymap_map_sges(
			sqp->keymap, sqp->qp->pd, w->sge, w->num_sge,
			is_rd_atomic(w->opcode) ? OPENRDMA_ACCESS_LOCAL_WRITE :
						  0,
			req->iov, &req->iovcnt, &req->len);
		if (status != OPENRDMA_WC_SUCCESS)
			return status;
	}
	if (req->len > sqp->max_msg_size)
		return OPENRDMA_WC_LOC_LEN_ERR;
	return OPENRDMA_WC_SUCCESS;
}

bool sw_pipe_next_inline(struct sw_pipe *p)
{
	struct sw_pipe_slot *s;

	if (p->sent == pipe_sq(p)->tail)
		return true;
	/* sw_pipe_next() steps over a finished one to the request after */
	s = slot_of(p, p->sent);
	if (s->psn == p->sent && s->done)
		return false;
	return wqe_of(p, p->sent)->is_inline;
}

int sw_pipe_next(struct sw_pipe *p, struct sw_pipe_pass *pass,
		 struct sw_pipe_req *req)
{
	struct sw_qp *sqp = p->sqp;
	struct sw_sq *sq = &sqp->sq;
	enum openrdma_wc_status status;
	struct sw_pipe_slot *s;
	struct sw_send_wqe *w;
	uint64_t now;

	for (;;) {
		if (p->failed || sw_qp_state(sqp) != OPENRDMA_QPS_RTS ||
		    p->sent == sq->tail || (p->stopped && p->sent == p->stop))
			return SW_PIPE_IDLE;
		s = slot_of(p, p->sent);
		w = wqe_of(p, p->sent);
		/* finished locally before an RNR NAK took the pipe back: a
		 * local operation runs once */
		if (s->psn == p->sent && s->done) {
			p->sent++;
			continue;
		}
		switch (w->opcode) {
		case OPENRDMA_WR_LOCAL_INV:
			finish_local(p, p->sent++, sw_mw_local_inv(sqp, w));
			continue;
		case OPENRDMA_WR_BIND_MW:
			finish_local(p, p->sent++, sw_mw_bind(sqp, w));
			continue;
		default:
			break;
		}
		if ((w->send_flags & OPENRDMA_SEND_FENCE) && p->rd_out)
			return SW_PIPE_BLOCKED;
		if (is_rd_atomic(w->opcode) && p->rd_out >= p->max_rd)
			return SW_PIPE_BLOCKED;
		if (w->not_before) {
			now = sw_now_ns();
			if (now < w->not_before) {
				pass->deadline = w->not_before;
				return SW_PIPE_WAIT;
			}
			w->not_before = 0;
		}
		if (!w->started) {
			w->started = true;
			w->rnr_left = atomic_load(&sqp->rnr_retry);
		}
		status = map_req(p, w, req);
		if (status != OPENRDMA_WC_SUCCESS) {
			finish_local(p, p->sent++, status);
			continue;
		}
		s->psn = p->sent;
		s->done = false;
		s->status = OPENRDMA_WC_SUCCESS;
		s->byte_len = (uint32_t)req->len;
		req->wqe = w;
		req->psn = p->sent++;
		if (is_rd_atomic(w->opcode))
			p->rd_out++;
		return SW_PIPE_SEND;
	}
}

/* Where psn lies: in flight (sent, not retired), behind (answered or
 * flushed already), or ahead (never sent: a protocol error). */
enum where { IN_FLIGHT, BEHIND, AHEAD };

static enum where locate(struct sw_pipe *p, uint32_t psn)
{
	struct sw_sq *sq = pipe_sq(p);

	if ((uint32_t)(psn - sq->head) < (uint32_t)(p->sent - sq->head))
		return IN_FLIGHT;
	/* a window of 2^30 behind the head: answers repeat or lag, they
	 * never run that far back */
	if ((uint32_t)(sq->head - 1 - psn) < (1u << 30))
		return BEHIND;
	/* after a flush everything outstanding is behind the head */
	if (p->failed || sw_qp_state(p->sqp) == OPENRDMA_QPS_ERR)
		return BEHIND;
	return AHEAD;
}

/* Marks every request before end as acknowledged; a read or atomic among
 * them without its answer is a protocol error. */
static int ack_until(struct sw_pipe *p, uint32_t end)
{
	struct sw_sq *sq = pipe_sq(p);
	struct sw_pipe_slot *s;
	uint32_t i;

	if ((uint32_t)(p->acked - sq->head) > (uint32_t)(end - sq->head))
		return 0;
	for (i = p->acked; i != end; i++) {
		s = slot_of(p, i);
		if (s->done)
			continue;
		if (is_rd_atomic(wqe_of(p, i)->opcode))
			return -OPENRDMA_EPROTO;
		s->done = true;
	}
	p->acked = end;
	return 0;
}

int sw_pipe_ack(struct sw_pipe *p, struct sw_pipe_pass *pass, uint32_t psn)
{
	switch (locate(p, psn)) {
	case IN_FLIGHT:
		return ack_until(p, psn + 1);
	case BEHIND:
		return 0;
	default:
		return -OPENRDMA_EPROTO;
	}
}

/* The outstanding read or atomic psn of the given kind, with everything
 * before it acknowledged; NULL if it is behind, -EPROTO in *err if the
 * answer cannot be. */
static struct sw_send_wqe *answer_of(struct sw_pipe *p, uint32_t psn, bool read,
				     int *err)
{
	struct sw_send_wqe *w;

	*err = 0;
	switch (locate(p, psn)) {
	case BEHIND:
		return NULL;
	case AHEAD:
		*err = -OPENRDMA_EPROTO;
		return NULL;
	default:
		break;
	}
	w = wqe_of(p, psn);
	if (!is_rd_atomic(w->opcode) ||
	    (w->opcode == OPENRDMA_WR_RDMA_READ) != read ||
	    slot_of(p, psn)->done) {
		*err = -OPENRDMA_EPROTO;
		return NULL;
	}
	*err = ack_until(p, psn);
	return *err ? NULL : w;
}

int sw_pipe_read_map(struct sw_pipe *p, struct sw_pipe_pass *pass, uint32_t psn,
		     uint64_t len, struct iovec *iov, int *iovcnt)
{
	struct sw_qp *sqp = p->sqp;
	enum openrdma_wc_status status;
	struct sw_send_wqe *w;
	uint64_t mapped;
	int err;

	w = answer_of(p, psn, true, &err);
	if (!w)
		return err ? err : OPENRDMA_WC_WR_FLUSH_ERR;
	if (len != slot_of(p, psn)->byte_len)
		return -OPENRDMA_EPROTO;
	status = sw_keymap_map_sges(sqp->keymap, sqp->qp->pd, w->sge,
				    w->num_sge, OPENRDMA_ACCESS_LOCAL_WRITE,
				    iov, iovcnt, &mapped);
	if (status == OPENRDMA_WC_SUCCESS && mapped != len)
		status = OPENRDMA_WC_LOC_PROT_ERR;
	return status;
}

/* Ends an answered read or atomic. */
static void answered(struct sw_pipe *p, uint32_t psn,
		     enum openrdma_wc_status status)
{
	struct sw_pipe_slot *s = slot_of(p, psn);

	s->done = true;
	s->status = (uint8_t)status;
	if (p->rd_out)
		p->rd_out--;
	if (p->acked == psn)
		p->acked = psn + 1;
	if (status != OPENRDMA_WC_SUCCESS)
		p->failed = true;
}

void sw_pipe_read_done(struct sw_pipe *p, struct sw_pipe_pass *pass,
		       uint32_t psn, enum openrdma_wc_status status)
{
	if (locate(p, psn) != IN_FLIGHT || slot_of(p, psn)->done)
		return;
	answered(p, psn, status);
}

int sw_pipe_atomic_done(struct sw_pipe *p, struct sw_pipe_pass *pass,
			uint32_t psn, uint64_t value)
{
	struct sw_qp *sqp = p->sqp;
	enum openrdma_wc_status status;
	struct sw_send_wqe *w;
	struct iovec iov[SW_MAX_SGE];
	struct sw_iov_cursor cur;
	uint64_t len;
	int cnt, err;

	w = answer_of(p, psn, false, &err);
	if (!w)
		return err;
	status = sw_keymap_map_sges(sqp->keymap, sqp->qp->pd, w->sge,
				    w->num_sge, OPENRDMA_ACCESS_LOCAL_WRITE,
				    iov, &cnt, &len);
	if (status == OPENRDMA_WC_SUCCESS) {
		sw_iov_cursor_init(&cur, iov, cnt);
		sw_iov_cursor_put(&cur, &value, sizeof(value));
	}
	answered(p, psn, status);
	return 0;
}

static uint64_t rnr_delay(const struct sw_qp *sqp, const struct sw_send_wqe *w)
{
	/* at least 1 ns: not_before 0 means "not waiting" */
	return sw_rnr_delay_ns(w->rnr_timer) * sqp->rnr_scale / 100 + 1;
}

/* Takes back everything sent from psn on: the target dropped it. */
static void rewind_to(struct sw_pipe *p, uint32_t psn)
{
	uint32_t i;

	for (i = psn; i != p->sent; i++) {
		if (slot_of(p, i)->done)
			continue;
		if (is_rd_atomic(wqe_of(p, i)->opcode) && p->rd_out)
			p->rd_out--;
		/* sent again from scratch */
		slot_of(p, i)->psn = i - 1;
	}
	p->sent = psn;
	if ((uint32_t)(p->acked - pipe_sq(p)->head) >
	    (uint32_t)(psn - pipe_sq(p)->head))
		p->acked = psn;
}

int sw_pipe_nak(struct sw_pipe *p, struct sw_pipe_pass *pass, uint32_t psn,
		int status, uint8_t rnr_timer)
{
	struct sw_pipe_slot *s;
	struct sw_send_wqe *w;
	int ret;

	switch (locate(p, psn)) {
	case BEHIND:
		return 0;
	case AHEAD:
		return -OPENRDMA_EPROTO;
	default:
		break;
	}
	s = slot_of(p, psn);
	if (s->done)
		return -OPENRDMA_EPROTO;
	/* the target executed everything before psn */
	ret = ack_until(p, psn);
	if (ret)
		return ret;
	w = wqe_of(p, psn);
	if (status == SW_EXEC_RNR) {
		if (is_rd_atomic(w->opcode))
			return -OPENRDMA_EPROTO;
		if (rnr_retry_left(p->sqp, w)) {
			w->rnr_timer = rnr_timer;
			w->not_before = sw_now_ns() + rnr_delay(p->sqp, w);
			pass->deadline = w->not_before;
			rewind_to(p, psn);
			return 0;
		}
		status = OPENRDMA_WC_RNR_RETRY_EXC_ERR;
	}
	if (status <= OPENRDMA_WC_SUCCESS || status >= OPENRDMA_WC_STATUS_MAX)
		return -OPENRDMA_EPROTO;
	if (is_rd_atomic(w->opcode) && p->rd_out)
		p->rd_out--;
	s->done = true;
	s->status = (uint8_t)status;
	p->acked = psn + 1;
	p->failed = true;
	return 0;
}

bool sw_pipe_path_lost(struct sw_pipe *p, struct sw_pipe_pass *pass,
		       enum openrdma_wc_status status, int event)
{
	struct sw_sq *sq = pipe_sq(p);
	struct sw_pipe_slot *s;
	uint32_t i;

	p->lost = true;
	if (p->failed || sw_qp_state(p->sqp) == OPENRDMA_QPS_ERR)
		return sq->head != sq->tail;
	for (i = sq->head; i != sq->tail; i++) {
		s = slot_of(p, i);
		if (i == p->sent) {
			p->sent++;
			/* a local operation finished before an RNR rewind */
			if (s->psn == i && s->done)
				continue;
			s->byte_len = 0;
		} else if (s->done) {
			continue;
		}
		/* the oldest request not done: it could not reach the peer */
		s->psn = i;
		s->done = true;
		s->status = (uint8_t)status;
		p->failed = true;
		pass->fail = true;
		pass->fail_event = event;
		return true;
	}
	return false;
}
