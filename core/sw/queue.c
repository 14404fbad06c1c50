/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
#include <stdlib.h>
#include <string.h>

#include <openrdma/transport.h>

#include "core/sw/queue.h"

uint32_t sw_ring_slots(uint32_t cap)
{
	uint32_t n = 1;

	while (n < cap)
		n <<= 1;
	return n;
}

int sw_sq_init(struct sw_sq *sq, uint32_t cap, uint32_t max_sge,
	       uint32_t max_inline)
{
	uint32_t i, slots;
	int ret;

	if (cap > (1u << 31))
		return -OPENRDMA_EINVAL;
	memset(sq, 0, sizeof(*sq));
	slots = sw_ring_slots(cap);
	sq->cap = cap;
	sq->mask = slots - 1;
	sq->max_sge = max_sge;
	sq->max_inline = max_inline;

	ret = -OPENRDMA_ENOMEM;
	sq->wqe = calloc(slots, sizeof(*sq->wqe));
	if (!sq->wqe)
		goto err;
	if (max_sge) {
		sq->sge_pool =
			calloc((size_t)slots * max_sge, sizeof(*sq->sge_pool));
		if (!sq->sge_pool)
			goto err_wqe;
	}
	if (max_inline) {
		sq->inline_pool = malloc((size_t)slots * max_inline);
		if (!sq->inline_pool)
			goto err_sge;
	}
	for (i = 0; i < slots; i++) {
		sq->wqe[i].sge = sq->sge_pool ?
					 &sq->sge_pool[(size_t)i * max_sge] :
					 NULL;
		sq->wqe[i].inline_data =
			sq->inline_pool ?
				&sq->inline_pool[(size_t)i * max_inline] :
				NULL;
	}
	ret = core_lock_init(&sq->lock, CORE_LOCK_SPIN);
	if (ret)
		goto err_inline;
	return 0;

err_inline:
	free(sq->inline_pool);
err_sge:
	free(sq->sge_pool);
err_wqe:
	free(sq->wqe);
err:
	return ret;
}

void sw_sq_fini(struct sw_sq *sq)
{
	core_lock_destroy(&sq->lock);
	free(sq->inline_pool);
	free(sq->sge_pool);
	free(sq->wqe);
	memset(sq, 0, sizeof(*sq));
}

static bool opcode_has_payload(enum openrdma_wr_opcode opcode)
{
	switch (opcode) {
	case OPENRDMA_WR_SEND:
	case OPENRDMA_WR_SEND_WITH_IMM:
	case OPENRDMA_WR_SEND_WITH_INV:
	case OPENRDMA_WR_RDMA_WRITE:
	case OPENRDMA_WR_RDMA_WRITE_WITH_IMM:
		return true;
	default:
		return false;
	}
}

int sw_send_wr_check(const struct openrdma_qp *qp,
		     const struct openrdma_send_wr *wr)
{
	struct openrdma_send_wr plain;
	int ret;

	ret = openrdma_send_wr_check(qp, wr);
	if (ret || !(wr->send_flags & OPENRDMA_SEND_INLINE) ||
	    opcode_has_payload(wr->opcode))
		return ret;
	plain = *wr;
	plain.send_flags &= ~(unsigned int)OPENRDMA_SEND_INLINE;
	return openrdma_send_wr_check(qp, &plain);
}

int sw_sq_post_locked(struct sw_sq *sq, const struct openrdma_send_wr *wr,
		      bool sig_all)
{
	struct sw_send_wqe *w;
	uint32_t len = 0;
	int i;

	if (sq->tail - sq->head >= sq->cap)
		return -OPENRDMA_ENOMEM;
	/* the slots' sizes, which a resize may have changed under the caps
	 * openrdma_send_wr_check() read */
	if (!(wr->send_flags & OPENRDMA_SEND_INLINE) &&
	    (uint32_t)wr->num_sge > sq->max_sge)
		return -OPENRDMA_EINVAL;
	w = &sq->wqe[sq->tail & sq->mask];
	w->wr_id = wr->wr_id;
	w->opcode = wr->opcode;
	w->send_flags = wr->send_flags;
	w->signaled = sig_all || (wr->send_flags & OPENRDMA_SEND_SIGNALED);
	w->ex = wr->imm_data;
	w->ah = NULL;
	w->mw = NULL;
	switch (wr->opcode) {
	case OPENRDMA_WR_ATOMIC_CMP_AND_SWP:
	case OPENRDMA_WR_ATOMIC_FETCH_AND_ADD:
		w->remote_addr = wr->wr.atomic.remote_addr;
		w->rkey = wr->wr.atomic.rkey;
		w->compare_add = wr->wr.atomic.compare_add;
		w->swap = wr->wr.atomic.swap;
		break;
	case OPENRDMA_WR_BIND_MW:
		w->mw = wr->bind_mw.mw;
		w->bind_rkey = wr->bind_mw.rkey;
		w->bind_info = wr->bind_mw.bind_info;
		/* a type 1 window has its new key once the bind is posted, as
		 * ibv_bind_mw() gives it: the caller reads it on return */
		if (wr->send_flags & OPENRDMA_SEND_TYPE1_BIND)
			w->mw->rkey = w->bind_rkey;
		break;
	default:
		/* UD and RDMA share the union: copy both views */
		w->remote_addr = wr->wr.rdma.remote_addr;
		w->rkey = wr->wr.rdma.rkey;
		w->ah = wr->wr.ud.ah;
		w->remote_qpn = wr->wr.ud.remote_qpn;
		w->remote_qkey = wr->wr.ud.remote_qkey;
		break;
	}

	/* inline data is copied now: the caller may reuse its buffer at once */
	w->is_inline = (wr->send_flags & OPENRDMA_SEND_INLINE) &&
		       opcode_has_payload(wr->opcode);
	if (w->is_inline) {
		for (i = 0; i < wr->num_sge; i++)
			len += wr->sg_list[i].length;
		if (len > sq->max_inline)
			return -OPENRDMA_EINVAL;
		len = 0;
		for (i = 0; i < wr->num_sge; i++) {
			if (!wr->sg_list[i].length)
				continue;
			memcpy(w->inline_data + len,
			       (const void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			len += wr->sg_list[i].length;
		}
		w->inline_len = len;
		w->num_sge = 0;
	} else {
		w->inline_len = 0;
		w->num_sge = wr->num_sge;
		if (wr->num_sge)
			memcpy(w->sge, wr->sg_list,
			       (size_t)wr->num_sge * sizeof(*w->sge));
	}
	w->started = false;
	w->rnr_left = 0;
	w->rnr_timer = 0;
	w->rnr_no_wait = false;
	w->not_before = 0;
	sq->tail++;
	return 0;
}

int sw_sq_copy_locked(const struct sw_sq *from, struct sw_sq *to)
{
	uint32_t i, n = from->tail - from->head;
	const struct sw_send_wqe *s;
	struct openrdma_sge *sge;
	struct sw_send_wqe *d;
	uint8_t *data;

	if (n > to->cap)
		return -OPENRDMA_EINVAL;
	for (i = 0; i < n; i++) {
		s = &from->wqe[(from->head + i) & from->mask];
		if ((uint32_t)s->num_sge > to->max_sge ||
		    s->inline_len > to->max_inline)
			return -OPENRDMA_EINVAL;
	}
	for (i = 0; i < n; i++) {
		s = &from->wqe[(from->head + i) & from->mask];
		d = &to->wqe[i];
		/* the slot keeps its own arrays; the contents move */
		sge = d->sge;
		data = d->inline_data;
		*d = *s;
		d->sge = sge;
		d->inline_data = data;
		if (s->num_sge)
			memcpy(sge, s->sge, (size_t)s->num_sge * sizeof(*sge));
		if (s->inline_len)
			memcpy(data, s->inline_data, s->inline_len);
	}
	to->head = 0;
	to->tail = n;
	return 0;
}

void sw_sq_swap(struct sw_sq *a, struct sw_sq *b)
{
	struct sw_sq t = *a;

	a->wqe = b->wqe;
	a->sge_pool = b->sge_pool;
	a->inline_pool = b->inline_pool;
	a->cap = b->cap;
	a->mask = b->mask;
	a->max_sge = b->max_sge;
	a->max_inline = b->max_inline;
	a->head = b->head;
	a->tail = b->tail;
	b->wqe = t.wqe;
	b->sge_pool = t.sge_pool;
	b->inline_pool = t.inline_pool;
	b->cap = t.cap;
	b->mask = t.mask;
	b->max_sge = t.max_sge;
	b->max_inline = t.max_inline;
	b->head = t.head;
	b->tail = t.tail;
}

enum openrdma_wc_opcode sw_wc_opcode(enum openrdma_wr_opcode opcode)
{
	switch (opcode) {
	case OPENRDMA_WR_RDMA_WRITE:
	case OPENRDMA_WR_RDMA_WRITE_WITH_IMM:
		return OPENRDMA_WC_RDMA_WRITE;
	case OPENRDMA_WR_RDMA_READ:
		return OPENRDMA_WC_RDMA_READ;
	case OPENRDMA_WR_ATOMIC_CMP_AND_SWP:
		return OPENRDMA_WC_COMP_SWAP;
	case OPENRDMA_WR_ATOMIC_FETCH_AND_ADD:
		return OPENRDMA_WC_FETCH_ADD;
	case OPENRDMA_WR_LOCAL_INV:
		return OPENRDMA_WC_LOCAL_INV;
	case OPENRDMA_WR_BIND_MW:
		return OPENRDMA_WC_BIND_MW;
	default:
		return OPENRDMA_WC_SEND;
	}
}

void sw_sq_retire_locked(struct sw_sq *sq, enum openrdma_wc_status status,
			 uint32_t byte_len, uint32_t qp_num, struct sw_cq *scq,
			 struct sw_cq_batch *batch)
{
	struct sw_send_wqe *w = sw_sq_head_locked(sq);
	struct openrdma_wc wc;

	if (!w)
		return;
	if (w->signaled || status != OPENRDMA_WC_SUCCESS) {
		memset(&wc, 0, sizeof(wc));
		wc.wr_id = w->wr_id;
		wc.status = status;
		wc.opcode = sw_wc_opcode(w->opcode);
		wc.byte_len = byte_len;
		wc.qp_num = qp_num;
		sw_cq_push(scq, &wc, status != OPENRDMA_WC_SUCCESS, batch);
	}
	sq->head++;
}

void sw_sq_flush_locked(struct sw_sq *sq, uint32_t qp_num, struct sw_cq *scq,
			struct sw_cq_batch *batch)
{
	while (sq->head != sq->tail)
		sw_sq_retire_locked(sq, OPENRDMA_WC_WR_FLUSH_ERR, 0, qp_num,
				    scq, batch);
}

void sw_sq_reset_locked(struct sw_sq *sq)
{
	sq->head = 0;
	sq->tail = 0;
}

int sw_rq_init(struct sw_rq *rq, uint32_t cap, uint32_t max_sge)
{
	uint32_t i, slots;
	int ret;

	if (cap > (1u << 31))
		return -OPENRDMA_EINVAL;
	memset(rq, 0, sizeof(*rq));
	slots = sw_ring_slots(cap);
	rq->cap = cap;
	rq->mask = slots - 1;
	rq->max_sge = max_sge;

	ret = -OPENRDMA_ENOMEM;
	rq->wqe = calloc(slots, sizeof(*rq->wqe));
	if (!rq->wqe)
		goto err;
	if (max_sge) {
		rq->sge_pool =
			calloc((size_t)slots * max_sge, sizeof(*rq->sge_pool));
		if (!rq->sge_pool)
			goto err_wqe;
	}
	for (i = 0; i < slots; i++)
		rq->wqe[i].sge = rq->sge_pool ?
					 &rq->sge_pool[(size_t)i * max_sge] :
					 NULL;
	ret = core_lock_init(&rq->lock, CORE_LOCK_SPIN);
	if (ret)
		goto err_sge;
	return 0;

err_sge:
	free(rq->sge_pool);
err_wqe:
	free(rq->wqe);
err:
	return ret;
}

void sw_rq_fini(struct sw_rq *rq)
{
	core_lock_destroy(&rq->lock);
	free(rq->sge_pool);
	free(rq->wqe);
	memset(rq, 0, sizeof(*rq));
}

int sw_rq_post_locked(struct sw_rq *rq, const struct openrdma_recv_wr *wr)
{
	struct sw_recv_wqe *w;

	if (rq->tail - rq->head >= rq->cap)
		return -OPENRDMA_ENOMEM;
	if ((uint32_t)wr->num_sge > rq->max_sge)
		return -OPENRDMA_EINVAL;
	w = &rq->wqe[rq->tail & rq->mask];
	w->wr_id = wr->wr_id;
	w->num_sge = wr->num_sge;
	if (wr->num_sge)
		memcpy(w->sge, wr->sg_list,
		       (size_t)wr->num_sge * sizeof(*w->sge));
	w->state = SW_RECV_POSTED;
	w->solicited = false;
	rq->tail++;
	return 0;
}

struct sw_recv_wqe *sw_rq_take_locked(struct sw_rq *rq)
{
	struct sw_recv_wqe *w;

	if (rq->next == rq->tail)
		return NULL;
	w = &rq->wqe[rq->next & rq->mask];
	w->state = SW_RECV_BUSY;
	rq->next++;
	return w;
}

int sw_rq_pop_locked(struct sw_rq *rq, struct sw_recv_wqe *wqe)
{
	struct sw_recv_wqe *w;

	if (rq->next == rq->tail)
		return -OPENRDMA_EAGAIN;
	w = &rq->wqe[rq->next & rq->mask];
	wqe->wr_id = w->wr_id;
	wqe->num_sge = w->num_sge;
	if (w->num_sge)
		memcpy(wqe->sge, w->sge, (size_t)w->num_sge * sizeof(*w->sge));
	wqe->state = SW_RECV_BUSY;
	rq->next++;
	rq->head = rq->next;
	return 0;
}

void sw_rq_flush_locked(struct sw_rq *rq, uint32_t qp_num)
{
	struct sw_recv_wqe *w;

	for (; rq->next != rq->tail; rq->next++) {
		w = &rq->wqe[rq->next & rq->mask];
		memset(&w->wc, 0, sizeof(w->wc));
		w->wc.wr_id = w->wr_id;
		w->wc.status = OPENRDMA_WC_WR_FLUSH_ERR;
		w->wc.opcode = OPENRDMA_WC_RECV;
		w->wc.qp_num = qp_num;
		w->solicited = true;
		w->state = SW_RECV_DONE;
	}
}

void sw_rq_retire_locked(struct sw_rq *rq, struct sw_cq *scq,
			 struct sw_cq_batch *batch)
{
	struct sw_recv_wqe *w;

	while (rq->head != rq->next) {
		w = &rq->wqe[rq->head & rq->mask];
		if (w->state != SW_RECV_DONE)
			break;
		sw_cq_push(scq, &w->wc, w->solicited, batch);
		rq->head++;
	}
}

bool sw_rq_busy_locked(const struct sw_rq *rq)
{
	uint32_t i;

	for (i = rq->head; i != rq->next; i++) {
		if (rq->wqe[i & rq->mask].state == SW_RECV_BUSY)
			return true;
	}
	return false;
}

void sw_rq_reset_locked(struct sw_rq *rq)
{
	rq->head = 0;
	rq->next = 0;
	rq->tail = 0;
}

int sw_rq_copy_locked(const struct sw_rq *from, struct sw_rq *to)
{
	uint32_t i, n = from->tail - from->head;
	const struct sw_recv_wqe *s;
	struct openrdma_sge *sge;
	struct sw_recv_wqe *d;

	if (sw_rq_busy_locked(from))
		return -OPENRDMA_EBUSY;
	if (n > to->cap)
		return -OPENRDMA_EINVAL;
	for (i = 0; i < n; i++) {
		s = &from->wqe[(from->head + i) & from->mask];
		if ((uint32_t)s->num_sge > to->max_sge)
			return -OPENRDMA_EINVAL;
	}
	for (i = 0; i < n; i++) {
		s = &from->wqe[(from->head + i) & from->mask];
		d = &to->wqe[i];
		sge = d->sge;
		*d = *s;
		d->sge = sge;
		if (s->num_sge)
			memcpy(sge, s->sge, (size_t)s->num_sge * sizeof(*sge));
	}
	to->head = 0;
	to->next = from->next - from->head;
	to->tail = n;
	return 0;
}

void sw_rq_swap(struct sw_rq *a, struct sw_rq *b)
{
	struct sw_rq t = *a;

	a->wqe = b->wqe;
	a->sge_pool = b->sge_pool;
	a->cap = b->cap;
	a->mask = b->mask;
	a->max_sge = b->max_sge;
	a->head = b->head;
	a->next = b->next;
	a->tail = b->tail;
	b->wqe = t.wqe;
	b->sge_pool = t.sge_pool;
	b->cap = t.cap;
	b->mask = t.mask;
	b->max_sge = t.max_sge;
	b->head = t.head;
	b->next = t.next;
	b->tail = t.tail;
}

int sw_rq_resize(struct sw_rq *rq, uint32_t cap)
{
	struct sw_rq new;
	int ret;

	ret = sw_rq_init(&new, cap, rq->max_sge);
	if (ret)
		return ret;
	core_lock_acquire(&rq->lock);
	ret = sw_rq_copy_locked(rq, &new);
	if (!ret)
		sw_rq_swap(rq, &new);
	core_lock_release(&rq->lock);
	/* the old storage, after a swap */
	sw_rq_fini(&new);
	return ret;
}
