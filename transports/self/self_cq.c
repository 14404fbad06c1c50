/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Completion queues and shared receive queues: the toolkit's
 * (core/sw/sw_cq_ops.c) with self's limits.
 */
#include <stddef.h>

#include "transports/self/self.h"

static int cq_init(struct openrdma_context *ctx, struct openrdma_cq *cq)
{
	self_port_event(to_self_ctx(ctx));
	return 0;
}

static const struct sw_cq_ops self_cq_ops = {
	.max_cqe = SELF_MAX_CQE,
	.max_srq_wr = SELF_MAX_SRQ_WR,
	.max_sge = SELF_MAX_SGE,
	.cq_size = sizeof(struct self_cq),
	.cq_sw = offsetof(struct self_cq, sw),
	.srq_size = sizeof(struct self_srq),
	.srq_sw = offsetof(struct self_srq, sw),
	.res_get = self_res_get,
	.res_put = self_res_put,
	.cq_init = cq_init,
};

int self_cq_create(struct openrdma_context *ctx, int cqe, int comp_vector,
		   struct openrdma_cq **cq_out)
{
	return sw_cq_create(&self_cq_ops, ctx, cqe, cq_out);
}

int self_cq_destroy(struct openrdma_cq *cq)
{
	return sw_cq_destroy(&self_cq_ops, cq);
}

int self_cq_poll(struct openrdma_cq *cq, int num_entries,
		 struct openrdma_wc *wc)
{
	return sw_cq_poll(&to_self_cq(cq)->sw, num_entries, wc);
}

int self_cq_resize(struct openrdma_cq *cq, int cqe)
{
	return sw_cq_set_size(&self_cq_ops, cq, cqe);
}

int self_srq_create(struct openrdma_pd *pd,
		    struct openrdma_srq_init_attr *init_attr,
		    struct openrdma_srq **srq_out)
{
	return sw_srq_create(&self_cq_ops, pd, init_attr, srq_out);
}

int self_srq_destroy(struct openrdma_srq *srq)
{
	return sw_srq_destroy(&self_cq_ops, srq);
}

int self_srq_modify(struct openrdma_srq *srq, struct openrdma_srq_attr *attr,
		    int attr_mask)
{
	return sw_srq_set_attr(&self_cq_ops, srq, attr, attr_mask);
}

int self_srq_post_recv(struct openrdma_srq *srq, struct openrdma_recv_wr *wr,
		       struct openrdma_recv_wr **bad_wr)
{
	return sw_srq_post_recv(&to_self_srq(srq)->sw, wr, bad_wr);
}

int self_srq_query(struct openrdma_srq *srq, struct openrdma_srq_attr *attr)
{
	sw_srq_query(&to_self_srq(srq)->sw, attr);
	return 0;
}
