/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Shared receive queues.  The limit event comes from the device as
 * IBV_EVENT_SRQ_LIMIT_REACHED (verbs_progress.c).
 */
#include <stdlib.h>
#include <string.h>

#include "transports/verbs/verbs.h"

int verbs_srq_create(struct openrdma_pd *pd,
		     struct openrdma_srq_init_attr *init_attr,
		     struct openrdma_srq **srq_out)
{
	struct ibv_srq_init_attr init;
	struct verbs_srq *vsrq;
	int ret;

	vsrq = calloc(1, sizeof(*vsrq));
	if (!vsrq)
		return -OPENRDMA_ENOMEM;
	memset(&init, 0, sizeof(init));
	init.srq_context = vsrq;
	init.attr.max_wr = init_attr->attr.max_wr;
	init.attr.max_sge = init_attr->attr.max_sge;
	init.attr.srq_limit = init_attr->attr.srq_limit;
	vsrq->ibsrq = ibv_create_srq(to_verbs_pd(pd)->ibpd, &init);
	if (!vsrq->ibsrq) {
		ret = verbs_errno();
		free(vsrq);
		return ret;
	}
	init_attr->attr.max_wr = init.attr.max_wr;
	init_attr->attr.max_sge = init.attr.max_sge;
	atomic_init(&vsrq->limit, init_attr->attr.srq_limit);
	*srq_out = &vsrq->base;
	return 0;
}

int verbs_srq_destroy(struct openrdma_srq *srq)
{
	struct verbs_srq *vsrq = to_verbs_srq(srq);
	int ret;

	/* Waits for the progress thread to acknowledge its async events. */
	ret = ibv_destroy_srq(vsrq->ibsrq);
	if (ret)
		return verbs_ret(ret);
	free(vsrq);
	return 0;
}

int verbs_srq_modify(struct openrdma_srq *srq, struct openrdma_srq_attr *attr,
		     int attr_mask)
{
	struct ibv_srq_attr ib = {
		.max_wr = attr->max_wr,
		.max_sge = attr->max_sge,
		.srq_limit = attr->srq_limit,
	};
	int ret;

	ret = ibv_modify_srq(to_verbs_srq(srq)->ibsrq, &ib, attr_mask);
	if (ret)
		return verbs_ret(ret);
	if (attr_mask & OPENRDMA_SRQ_LIMIT)
		atomic_store(&to_verbs_srq(srq)->limit, attr->srq_limit);
	/* a resize may grant more than asked for */
	if (attr_mask & OPENRDMA_SRQ_MAX_WR)
		attr->max_wr = ib.max_wr;
	return 0;
}

int verbs_srq_query(struct openrdma_srq *srq, struct openrdma_srq_attr *attr)
{
	struct verbs_srq *vsrq = to_verbs_srq(srq);
	struct ibv_srq_attr ib;
	int ret;

	ret = verbs_ret(ibv_query_srq(vsrq->ibsrq, &ib));
	if (ret == -OPENRDMA_EOPNOTSUPP) {
		/* what was granted, and the limit as armed and fired */
		attr->max_wr = srq->max_wr;
		attr->max_sge = srq->max_sge;
		attr->srq_limit = atomic_load(&vsrq->limit);
		return 0;
	}
	if (ret)
		return ret;
	attr->max_wr = ib.max_wr;
	attr->max_sge = ib.max_sge;
	attr->srq_limit = ib.srq_limit;
	return 0;
}
