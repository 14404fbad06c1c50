/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
#include <string.h>

#include <openrdma/transport.h>

#include "core/sw/srq.h"

int sw_srq_init(struct sw_srq *ssrq, struct openrdma_srq *srq,
		const struct openrdma_srq_attr *attr)
{
	int ret;

	if (!attr->max_wr)
		return -OPENRDMA_EINVAL;
	ret = sw_rq_init(&ssrq->rq, attr->max_wr, attr->max_sge);
	if (ret)
		return ret;
	ssrq->srq = srq;
	/* as libibverbs: only openrdma_srq_modify() arms the limit */
	ssrq->limit = 0;
	srq->max_wr = attr->max_wr;
	srq->max_sge = attr->max_sge;
	return 0;
}

void sw_srq_fini(struct sw_srq *ssrq)
{
	sw_rq_fini(&ssrq->rq);
}

int sw_srq_post_recv(struct sw_srq *ssrq, struct openrdma_recv_wr *wr,
		     struct openrdma_recv_wr **bad_wr)
{
	int ret = 0;

	core_lock_acquire(&ssrq->rq.lock);
	for (; wr; wr = wr->next) {
		ret = openrdma_recv_wr_check(ssrq->rq.max_sge, wr);
		if (!ret)
			ret = sw_rq_post_locked(&ssrq->rq, wr);
		if (ret) {
			*bad_wr = wr;
			break;
		}
	}
	core_lock_release(&ssrq->rq.lock);
	return ret;
}

int sw_srq_modify(struct sw_srq *ssrq, const struct openrdma_srq_attr *attr,
		  int attr_mask, uint32_t max_wr_cap)
{
	uint32_t size;
	int ret;

	if (attr_mask & ~(OPENRDMA_SRQ_MAX_WR | OPENRDMA_SRQ_LIMIT))
		return -OPENRDMA_EINVAL;
	size = attr_mask & OPENRDMA_SRQ_MAX_WR ? attr->max_wr : ssrq->rq.cap;
	if (!size || size > max_wr_cap)
		return -OPENRDMA_EINVAL;
	if ((attr_mask & OPENRDMA_SRQ_LIMIT) && attr->srq_limit > size)
		return -OPENRDMA_EINVAL;
	if (attr_mask & OPENRDMA_SRQ_MAX_WR) {
		ret = sw_rq_resize(&ssrq->rq, size);
		if (ret)
			return ret;
		ssrq->srq->max_wr = size;
	}
	if (attr_mask & OPENRDMA_SRQ_LIMIT) {
		core_lock_acquire(&ssrq->rq.lock);
		ssrq->limit = attr->srq_limit;
		core_lock_release(&ssrq->rq.lock);
	}
	return 0;
}

void sw_srq_query(struct sw_srq *ssrq, struct openrdma_srq_attr *attr)
{
	core_lock_acquire(&ssrq->rq.lock);
	attr->max_wr = ssrq->rq.cap;
	attr->max_sge = ssrq->rq.max_sge;
	attr->srq_limit = ssrq->limit;
	core_lock_release(&ssrq->rq.lock);
}

int sw_srq_take(struct sw_srq *ssrq, struct sw_recv_wqe *wqe)
{
	struct openrdma_async_event ev;
	bool fire = false;
	int ret;

	core_lock_acquire(&ssrq->rq.lock);
	ret = sw_rq_pop_locked(&ssrq->rq, wqe);
	if (!ret && ssrq->limit &&
	    sw_rq_pending_locked(&ssrq->rq) < ssrq->limit) {
		ssrq->limit = 0;
		fire = true;
	}
	core_lock_release(&ssrq->rq.lock);
	if (fire) {
		memset(&ev, 0, sizeof(ev));
		ev.element.srq = ssrq->srq;
		ev.event_type = OPENRDMA_EVENT_SRQ_LIMIT_REACHED;
		openrdma_async_event_post(ssrq->srq->obj.ctx, &ev);
	}
	return ret;
}
