/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
#include <sched.h>
#include <string.h>

#include <openrdma/transport.h>

#include "core/sw/mw.h"
#include "core/sw/qp.h"
#include "core/sw/timer.h"

#define QP_ACCESS_FLAGS                                               \
	(OPENRDMA_ACCESS_REMOTE_WRITE | OPENRDMA_ACCESS_REMOTE_READ | \
	 OPENRDMA_ACCESS_REMOTE_ATOMIC)

/* IB RNR NAK timer encoding, in units of 10 us; code 0 is the longest. */
/* clang-format off */
static const uint32_t rnr_timer_10us[32] = {
	65536,     1,     2,     3,     4,     6,     8,    12,
	   16,    24,    32,    48,    64,    96,   128,   192,
	  256,   384,   512,   768,  1024,  1536,  2048,  3072,
	 4096,  6144,  8192, 12288, 16384, 24576, 32768, 49152,
};
/* clang-format on */

uint64_t sw_rnr_delay_ns(uint8_t timer)
{
	return (uint64_t)rnr_timer_10us[timer & 31] * 10000u;
}

int sw_qp_init(struct sw_qp *sqp, struct openrdma_qp *qp,
	       const struct sw_qp_init *init)
{
	const struct openrdma_qp_cap *cap = &qp->cap;
	int ret;

	if (cap->max_send_sge > SW_MAX_SGE || cap->max_recv_sge > SW_MAX_SGE)
		return -OPENRDMA_EINVAL;
	if (init->srq && init->srq->rq.max_sge > SW_MAX_SGE)
		return -OPENRDMA_EINVAL;
	memset(sqp, 0, sizeof(*sqp));
	sqp->qp = qp;
	sqp->ops = init->ops;
	sqp->keymap = init->keymap;
	sqp->scq = init->send_cq;
	sqp->rcq = init->recv_cq;
	sqp->srq = init->srq;
	sqp->max_msg_size = init->max_msg_size;
	sqp->rnr_scale = init->rnr_scale ? init->rnr_scale : 100;
	atomic_init(&sqp->state, OPENRDMA_QPS_RESET);
	atomic_init(&sqp->access_flags, 0);
	atomic_init(&sqp->qkey, 0);
	atomic_init(&sqp->dest_qpn, 0);
	atomic_init(&sqp->rnr_retry, 0);
	atomic_init(&sqp->min_rnr_timer, 0);

	ret = sw_sq_init(&sqp->sq, cap->max_send_wr, cap->max_send_sge,
			 cap->max_inline_data);
	if (ret)
		return ret;
	ret = sw_rq_init(&sqp->rq, init->srq ? 0 : cap->max_recv_wr,
			 cap->max_recv_sge);
	if (ret)
		goto err_sq;
	ret = -pthread_mutex_init(&sqp->attr_lock, NULL);
	if (ret)
		goto err_rq;
	sqp->attr.qp_state = OPENRDMA_QPS_RESET;
	sqp->attr.cap = *cap;
	return 0;

err_rq:
	sw_rq_fini(&sqp->rq);
err_sq:
	sw_sq_fini(&sqp->sq);
	return ret;
}

void sw_qp_fini(struct sw_qp *sqp)
{
	pthread_mutex_destroy(&sqp->attr_lock);
	sw_rq_fini(&sqp->rq);
	sw_sq_fini(&sqp->sq);
}

/* Returns true if this call moved the QP to ERR. */
static bool enter_err(struct sw_qp *sqp)
{
	return atomic_exchange(&sqp->state, OPENRDMA_QPS_ERR) !=
	       OPENRDMA_QPS_ERR;
}

static void post_qp_event(struct sw_qp *sqp, enum openrdma_event_type type)
{
	struct openrdma_async_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.element.qp = sqp->qp;
	ev.event_type = type;
	openrdma_async_event_post(sqp->qp->obj.ctx, &ev);
}

static void flush_rq(struct sw_qp *sqp)
{
	struct sw_cq_batch batch = SW_CQ_BATCH_INIT;

	if (sqp->srq)
		return;
	core_lock_acquire(&sqp->rq.lock);
	sw_rq_flush_locked(&sqp->rq, sqp->qp->qp_num);
	sw_rq_retire_locked(&sqp->rq, sqp->rcq, &batch);
	core_lock_release(&sqp->rq.lock);
	/* a lost flush completion changes nothing: the QP is in ERR */
	sw_cq_batch_done(&batch);
}

/* What follows entering ERR; tell_core is false when the core itself is
 * changing the state (openrdma_qp_modify). */
static void after_err(struct sw_qp *sqp, int event, bool tell_core)
{
	if (tell_core)
		openrdma_qp_state_set(sqp->qp, OPENRDMA_QPS_ERR);
	pthread_mutex_lock(&sqp->attr_lock);
	sqp->attr.qp_state = OPENRDMA_QPS_ERR;
	pthread_mutex_unlock(&sqp->attr_lock);
	flush_rq(sqp);
	sw_qp_progress(sqp);
	if (event >= 0)
		post_qp_event(sqp, (enum openrdma_event_type)event);
	if (sqp->srq)
		post_qp_event(sqp, OPENRDMA_EVENT_QP_LAST_WQE_REACHED);
}

void sw_qp_error(struct sw_qp *sqp, int event)
{
	if (enter_err(sqp))
		after_err(sqp, event, true);
}

/* Local access each opcode needs on its SGEs: the device writes read data
 * and atomic results. */
static unsigned int local_access(enum openrdma_wr_opcode opcode)
{
	switch (opcode) {
	case OPENRDMA_WR_RDMA_READ:
	case OPENRDMA_WR_ATOMIC_CMP_AND_SWP:
	case OPENRDMA_WR_ATOMIC_FETCH_AND_ADD:
		return OPENRDMA_ACCESS_LOCAL_WRITE;
	default:
		return 0;
	}
}

static int execute_one(struct sw_qp *sqp, struct sw_send_wqe *w,
		       uint32_t *byte_len)
{
	enum openrdma_wc_status status;
	struct iovec iov[SW_MAX_SGE];
	uint64_t len;
	int cnt;

	*byte_len = 0;
	switch (w->opcode) {
	case OPENRDMA_WR_LOCAL_INV:
		return sw_mw_local_inv(sqp, w);
	case OPENRDMA_WR_BIND_MW:
		return sw_mw_bind(sqp, w);
	default:
		break;
	}
	if (!w->started) {
		w->started = true;
		w->rnr_left = atomic_load(&sqp->rnr_retry);
	}
	if (w->is_inline) {
		iov[0].iov_base = w->inline_data;
		iov[0].iov_len = w->inline_len;
		cnt = w->inline_len ? 1 : 0;
		len = w->inline_len;
	} else {
		status = sw_keymap_map_sges(sqp->keymap, sqp->qp->pd, w->sge,
					    w->num_sge, local_access(w->opcode),
					    iov, &cnt, &len);
		if (status != OPENRDMA_WC_SUCCESS)
			return status;
	}
	if (len > sqp->max_msg_size)
		return OPENRDMA_WC_LOC_LEN_ERR;
	*byte_len = (uint32_t)len;
	return sqp->ops->execute(sqp, w, iov, cnt, len);
}

/* A failed request moves the QP to ERR, but for an oversized datagram. */
static bool fails_qp(struct sw_qp *sqp, int status)
{
	return status != OPENRDMA_WC_SUCCESS &&
	       !(sqp->qp->qp_type == OPENRDMA_QPT_UD &&
		 status == OPENRDMA_WC_LOC_LEN_ERR);
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

static uint64_t rnr_delay(const struct sw_qp *sqp, const struct sw_send_wqe *w)
{
	/* at least 1 ns: not_before 0 means "not waiting" */
	return sw_rnr_delay_ns(w->rnr_timer) * sqp->rnr_scale / 100 + 1;
}

static void rnr_give_up(struct sw_qp *sqp)
{
	struct sw_send_wqe *w;

	core_lock_acquire(&sqp->sq.lock);
	w = sw_sq_head_locked(&sqp->sq);
	if (w && w->not_before) {
		w->not_before = 0;
		w->rnr_no_wait = true;
	}
	core_lock_release(&sqp->sq.lock);
	sw_qp_progress(sqp);
}

void sw_qp_progress(struct sw_qp *sqp)
{
	struct sw_cq_batch batch = SW_CQ_BATCH_INIT;
	struct sw_sq *sq = &sqp->sq;
	uint32_t qpn = sqp->qp->qp_num;
	enum openrdma_qp_state state;
	bool entered = false, lost;
	struct sw_send_wqe *w;
	uint64_t deadline = 0, now;
	uint32_t byte_len;
	int status;

	core_lock_acquire(&sq->lock);
	/* one thread works the queue: the one that holds it sees whatever
	 * others post meanwhile */
	if (sq->busy) {
		core_lock_release(&sq->lock);
		return;
	}
	sq->busy = true;
	for (;;) {
		state = sw_qp_state(sqp);
		if (state == OPENRDMA_QPS_ERR) {
			sw_sq_flush_locked(sq, qpn, sqp->scq, &batch);
			break;
		}
		/* a reset under way drops the rest */
		if (state != OPENRDMA_QPS_RTS)
			break;
		w = sw_sq_head_locked(sq);
		if (!w)
			break;
		if (w->not_before) {
			now = sw_now_ns();
			if (now < w->not_before) {
				deadline = w->not_before;
				break;
			}
			w->not_before = 0;
		}
		core_lock_release(&sq->lock);
		status = execute_one(sqp, w, &byte_len);
		core_lock_acquire(&sq->lock);
		if (status == SW_EXEC_RNR) {
			if (rnr_retry_left(sqp, w)) {
				w->not_before = sw_now_ns() + rnr_delay(sqp, w);
				continue;
			}
			status = OPENRDMA_WC_RNR_RETRY_EXC_ERR;
		}
		/* whoever polls the error sees the QP in ERR already (so
		 * does the pipe's retire, sw_pipe.c) */
		if (fails_qp(sqp, status) && enter_err(sqp)) {
			entered = true;
			openrdma_qp_state_set(sqp->qp, OPENRDMA_QPS_ERR);
		}
		sw_sq_retire_locked(sq, (enum openrdma_wc_status)status,
				    byte_len, qpn, sqp->scq, &batch);
	}
	sq->busy = false;
	core_lock_release(&sq->lock);

	lost = sw_cq_batch_done(&batch);
	if (lost && enter_err(sqp))
		after_err(sqp, OPENRDMA_EVENT_QP_FATAL, true);
	if (entered)
		after_err(sqp, -1, true);
	if (deadline && sqp->ops->schedule(sqp, deadline))
		rnr_give_up(sqp);
}

int sw_qp_post_send(struct sw_qp *sqp, struct openrdma_send_wr *wr,
		    struct openrdma_send_wr **bad_wr)
{
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
	core_lock_release(&sq->lock);
	sw_qp_progress(sqp);
	return ret;
}

int sw_qp_post_recv(struct sw_qp *sqp, struct openrdma_recv_wr *wr,
		    struct openrdma_recv_wr **bad_wr)
{
	struct sw_cq_batch batch = SW_CQ_BATCH_INIT;
	struct sw_rq *rq = &sqp->rq;
	enum openrdma_qp_state state;
	bool lost;
	int ret = 0;

	state = sw_qp_state(sqp);
	if (state == OPENRDMA_QPS_RESET || sqp->srq) {
		*bad_wr = wr;
		return -OPENRDMA_EINVAL;
	}
	core_lock_acquire(&rq->lock);
	for (; wr; wr = wr->next) {
		ret = openrdma_recv_wr_check(rq->max_sge, wr);
		if (!ret)
			ret = sw_rq_post_locked(rq, wr);
		if (ret) {
			*bad_wr = wr;
			break;
		}
	}
	/* posted in ERR: flushed at once, behind what is outstanding */
	if (sw_qp_state(sqp) == OPENRDMA_QPS_ERR) {
		sw_rq_flush_locked(rq, sqp->qp->qp_num);
		sw_rq_retire_locked(rq, sqp->rcq, &batch);
	}
	core_lock_release(&rq->lock);
	lost = sw_cq_batch_done(&batch);
	if (lost && enter_err(sqp))
		after_err(sqp, OPENRDMA_EVENT_QP_FATAL, true);
	return ret;
}

int sw_qp_recv_take(struct sw_qp *sqp, struct sw_recv *r)
{
	struct sw_recv_wqe *w;

	if (sqp->srq) {
		r->copy.sge = r->sge;
		r->wqe = &r->copy;
		return sw_srq_take(sqp->srq, &r->copy);
	}
	core_lock_acquire(&sqp->rq.lock);
	w = sw_rq_take_locked(&sqp->rq);
	core_lock_release(&sqp->rq.lock);
	if (!w)
		return -OPENRDMA_EAGAIN;
	r->wqe = w;
	return 0;
}

void sw_qp_recv_done(struct sw_qp *sqp, struct sw_recv *r,
		     struct openrdma_wc *wc, bool solicited)
{
	struct sw_cq_batch batch = SW_CQ_BATCH_INIT;
	struct sw_recv_wqe *w = r->wqe;

	wc->wr_id = w->wr_id;
	wc->qp_num = sqp->qp->qp_num;
	solicited |= wc->status != OPENRDMA_WC_SUCCESS;
	if (sqp->srq) {
		sw_cq_push(sqp->rcq, wc, solicited, &batch);
	} else {
		core_lock_acquire(&sqp->rq.lock);
		w->wc = *wc;
		w->solicited = solicited;
		w->state = SW_RECV_DONE;
		sw_rq_retire_locked(&sqp->rq, sqp->rcq, &batch);
		core_lock_release(&sqp->rq.lock);
	}
	if (sw_cq_batch_done(&batch) && enter_err(sqp))
		after_err(sqp, OPENRDMA_EVENT_QP_FATAL, true);
}

/* Waits for the thread working the send queue and for deliveries being
 * written to the receive queue, then empties both. */
static void reset_queues(struct sw_qp *sqp)
{
	for (;;) {
		core_lock_acquire(&sqp->sq.lock);
		if (!sqp->sq.busy)
			break;
		core_lock_release(&sqp->sq.lock);
		sched_yield();
	}
	sw_sq_reset_locked(&sqp->sq);
	core_lock_release(&sqp->sq.lock);

	for (;;) {
		core_lock_acquire(&sqp->rq.lock);
		if (!sw_rq_busy_locked(&sqp->rq))
			break;
		core_lock_release(&sqp->rq.lock);
		sched_yield();
	}
	sw_rq_reset_locked(&sqp->rq);
	core_lock_release(&sqp->rq.lock);
}

static int check_attr(const struct sw_qp *sqp,
		      const struct openrdma_qp_attr *attr, int mask)
{
	if (mask & ~OPENRDMA_QP_ATTR_MASK_ALL)
		return -OPENRDMA_EINVAL;
	/* no alternate paths or SQ drain */
	if (mask & (OPENRDMA_QP_ALT_PATH | OPENRDMA_QP_PATH_MIG_STATE |
		    OPENRDMA_QP_EN_SQD_ASYNC_NOTIFY))
		return -OPENRDMA_EOPNOTSUPP;
	if ((mask & OPENRDMA_QP_CAP) && (attr->cap.max_send_sge > SW_MAX_SGE ||
					 attr->cap.max_recv_sge > SW_MAX_SGE))
		return -OPENRDMA_EINVAL;
	if ((mask & OPENRDMA_QP_STATE) && (attr->qp_state == OPENRDMA_QPS_SQD ||
					   attr->qp_state == OPENRDMA_QPS_SQE ||
					   attr->qp_state > OPENRDMA_QPS_ERR))
		return -OPENRDMA_EOPNOTSUPP;
	if ((mask & OPENRDMA_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~(unsigned int)QP_ACCESS_FLAGS))
		return -OPENRDMA_EINVAL;
	if ((mask & OPENRDMA_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -OPENRDMA_EINVAL;
	if ((mask & OPENRDMA_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -OPENRDMA_EINVAL;
	if ((mask & OPENRDMA_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -OPENRDMA_EINVAL;
	if ((mask & OPENRDMA_QP_TIMEOUT) && attr->timeout > 31)
		return -OPENRDMA_EINVAL;
	if ((mask & OPENRDMA_QP_PATH_MTU) &&
	    (attr->path_mtu < OPENRDMA_MTU_256 ||
	     attr->path_mtu > OPENRDMA_MTU_4096))
		return -OPENRDMA_EINVAL;
	if ((mask & OPENRDMA_QP_DEST_QPN) && attr->dest_qp_num > 0xffffff)
		return -OPENRDMA_EINVAL;
	(void)sqp;
	return 0;
}

/* Copies the attributes named by mask.  Called with attr_lock held. */
static void record_attr(struct sw_qp *sqp, const struct openrdma_qp_attr *a,
			int mask)
{
	struct openrdma_qp_attr *s = &sqp->attr;

	if (mask & OPENRDMA_QP_ACCESS_FLAGS) {
		s->qp_access_flags = a->qp_access_flags;
		atomic_store(&sqp->access_flags, a->qp_access_flags);
	}
	if (mask & OPENRDMA_QP_PKEY_INDEX)
		s->pkey_index = a->pkey_index;
	if (mask & OPENRDMA_QP_PORT)
		s->port_num = a->port_num;
	if (mask & OPENRDMA_QP_QKEY) {
		s->qkey = a->qkey;
		atomic_store(&sqp->qkey, a->qkey);
	}
	if (mask & OPENRDMA_QP_AV)
		s->ah_attr = a->ah_attr;
	if (mask & OPENRDMA_QP_PATH_MTU)
		s->path_mtu = a->path_mtu;
	if (mask & OPENRDMA_QP_TIMEOUT)
		s->timeout = a->timeout;
	if (mask & OPENRDMA_QP_RETRY_CNT)
		s->retry_cnt = a->retry_cnt;
	if (mask & OPENRDMA_QP_RNR_RETRY) {
		s->rnr_retry = a->rnr_retry;
		atomic_store(&sqp->rnr_retry, a->rnr_retry);
	}
	if (mask & OPENRDMA_QP_RQ_PSN)
		s->rq_psn = a->rq_psn & 0xffffff;
	if (mask & OPENRDMA_QP_MAX_QP_RD_ATOMIC)
		s->max_rd_atomic = a->max_rd_atomic;
	if (mask & OPENRDMA_QP_MIN_RNR_TIMER) {
		s->min_rnr_timer = a->min_rnr_timer;
		atomic_store(&sqp->min_rnr_timer, a->min_rnr_timer);
	}
	if (mask & OPENRDMA_QP_SQ_PSN)
		s->sq_psn = a->sq_psn & 0xffffff;
	if (mask & OPENRDMA_QP_MAX_DEST_RD_ATOMIC)
		s->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & OPENRDMA_QP_DEST_QPN) {
		s->dest_qp_num = a->dest_qp_num;
		atomic_store(&sqp->dest_qpn, a->dest_qp_num);
	}
}

static void clear_attr(struct sw_qp *sqp)
{
	struct openrdma_qp_cap cap = sqp->attr.cap;

	memset(&sqp->attr, 0, sizeof(sqp->attr));
	sqp->attr.cap = cap;
	atomic_store(&sqp->access_flags, 0);
	atomic_store(&sqp->qkey, 0);
	atomic_store(&sqp->dest_qpn, 0);
	atomic_store(&sqp->rnr_retry, 0);
	atomic_store(&sqp->min_rnr_timer, 0);
}

/*
 * Resizes both work queues to cap, all or nothing: what they hold moves to
 * the new rings, which must have room for it.  With an SRQ, the receive
 * caps stay 0.
 */
static int resize(struct sw_qp *sqp, struct openrdma_qp_cap *cap)
{
	struct sw_sq nsq;
	struct sw_rq nrq;
	int ret;

	if (sqp->srq) {
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
	}
	ret = sw_sq_init(&nsq, cap->max_send_wr, cap->max_send_sge,
			 cap->max_inline_data);
	if (ret)
		return ret;
	ret = sw_rq_init(&nrq, cap->max_recv_wr, cap->max_recv_sge);
	if (ret)
		goto out_sq;

	for (;;) {
		core_lock_acquire(&sqp->sq.lock);
		if (!sqp->sq.busy)
			break;
		core_lock_release(&sqp->sq.lock);
		sched_yield();
	}
	core_lock_acquire(&sqp->rq.lock);
	ret = sw_sq_copy_locked(&sqp->sq, &nsq);
	if (!ret)
		ret = sw_rq_copy_locked(&sqp->rq, &nrq);
	if (!ret) {
		sw_sq_swap(&sqp->sq, &nsq);
		sw_rq_swap(&sqp->rq, &nrq);
	}
	core_lock_release(&sqp->rq.lock);
	core_lock_release(&sqp->sq.lock);
	if (!ret) {
		pthread_mutex_lock(&sqp->attr_lock);
		sqp->attr.cap = *cap;
		pthread_mutex_unlock(&sqp->attr_lock);
	}

	/* the old rings after a swap, else the new ones */
	sw_rq_fini(&nrq);
out_sq:
	sw_sq_fini(&nsq);
	return ret;
}

int sw_qp_modify(struct sw_qp *sqp, struct openrdma_qp_attr *attr,
		 int attr_mask)
{
	int cur = atomic_load(&sqp->state);
	enum openrdma_qp_state state;
	int ret;

	ret = check_attr(sqp, attr, attr_mask);
	if (ret)
		return ret;
	if (attr_mask & OPENRDMA_QP_CAP) {
		ret = resize(sqp, &attr->cap);
		if (ret)
			return ret;
	}
	state = attr_mask & OPENRDMA_QP_STATE ? attr->qp_state :
						(enum openrdma_qp_state)cur;

	if (state == OPENRDMA_QPS_RESET && (attr_mask & OPENRDMA_QP_STATE)) {
		atomic_store(&sqp->state, OPENRDMA_QPS_RESET);
		reset_queues(sqp);
		pthread_mutex_lock(&sqp->attr_lock);
		clear_attr(sqp);
		record_attr(sqp, attr, attr_mask);
		sqp->attr.qp_state = OPENRDMA_QPS_RESET;
		pthread_mutex_unlock(&sqp->attr_lock);
		return 0;
	}

	pthread_mutex_lock(&sqp->attr_lock);
	record_attr(sqp, attr, attr_mask);
	pthread_mutex_unlock(&sqp->attr_lock);

	if (state == OPENRDMA_QPS_ERR) {
		if (enter_err(sqp))
			after_err(sqp, -1, false);
		return 0;
	}
	/* an error may have moved the QP to ERR since: it stays there (and
	 * so does the core's state, which it updates the same way) */
	if (atomic_compare_exchange_strong(&sqp->state, &cur, (int)state)) {
		pthread_mutex_lock(&sqp->attr_lock);
		sqp->attr.qp_state = state;
		pthread_mutex_unlock(&sqp->attr_lock);
	}
	return 0;
}

void sw_qp_query(struct sw_qp *sqp, struct openrdma_qp_attr *attr,
		 struct openrdma_qp_init_attr *init_attr)
{
	struct openrdma_qp *qp = sqp->qp;

	pthread_mutex_lock(&sqp->attr_lock);
	*attr = sqp->attr;
	pthread_mutex_unlock(&sqp->attr_lock);
	attr->qp_state = sw_qp_state(sqp);
	attr->cur_qp_state = attr->qp_state;
	if (init_attr) {
		memset(init_attr, 0, sizeof(*init_attr));
		init_attr->qp_context = qp->qp_context;
		init_attr->send_cq = qp->send_cq;
		init_attr->recv_cq = qp->recv_cq;
		init_attr->srq = qp->srq;
		init_attr->cap = qp->cap;
		init_attr->qp_type = qp->qp_type;
		init_attr->sq_sig_all = qp->sq_sig_all;
	}
}
