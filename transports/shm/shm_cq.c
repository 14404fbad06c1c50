/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Completion queues and shared receive queues: the toolkit's
 * (core/sw/sw_cq_ops.c), with one addition: an empty poll runs the receive
 * side first, so a polling application serves its peers itself, without
 * waking a thread.
 */
#include <stddef.h>

#include "transports/shm/shm.h"

static const struct sw_cq_ops shm_cq_ops = {
	.max_cqe = SHM_MAX_CQE,
	.max_srq_wr = SHM_MAX_SRQ_WR,
	.max_sge = SHM_MAX_SGE,
	.cq_size = sizeof(struct shm_cq),
	.cq_sw = offsetof(struct shm_cq, sw),
	.srq_size = sizeof(struct shm_srq),
	.srq_sw = offsetof(struct shm_srq, sw),
	.res_get = shm_res_get,
	.res_put = shm_res_put,
};

int shm_cq_create(struct openrdma_context *ctx, int cqe, int comp_vector,
		  struct openrdma_cq **cq_out)
{
	return sw_cq_create(&shm_cq_ops, ctx, cqe, cq_out);
}

int shm_cq_destroy(struct openrdma_cq *cq)
{
	return sw_cq_destroy(&shm_cq_ops, cq);
}

int shm_cq_poll(struct openrdma_cq *cq, int num_entries, struct openrdma_wc *wc)
{
	struct shm_cq *scq = to_shm_cq(cq);
	int n;

	n = sw_cq_poll(&scq->sw, num_entries, wc);
	if (n || !num_entries)
		return n;
	if (!shm_prog_poll(to_shm_ctx(cq->obj.ctx)))
		return 0;
	return sw_cq_poll(&scq->sw, num_entries, wc);
}

int shm_cq_req_notify(struct openrdma_cq *cq, int solicited_only)
{
	/* the application may be about to block: the progress thread
	 * stops counting on its polls soon */
	shm_prog_arm_hint(to_shm_ctx(cq->obj.ctx));
	/* the core arms the CQ and signals its channel */
	return 0;
}

int shm_cq_resize(struct openrdma_cq *cq, int cqe)
{
	return sw_cq_set_size(&shm_cq_ops, cq, cqe);
}

int shm_srq_create(struct openrdma_pd *pd,
		   struct openrdma_srq_init_attr *init_attr,
		   struct openrdma_srq **srq_out)
{
	return sw_srq_create(&shm_cq_ops, pd, init_attr, srq_out);
}

int shm_srq_destroy(struct openrdma_srq *srq)
{
	return sw_srq_destroy(&shm_cq_ops, srq);
}

int shm_srq_modify(struct openrdma_srq *srq, struct openrdma_srq_attr *attr,
		   int attr_mask)
{
	return sw_srq_set_attr(&shm_cq_ops, srq, attr, attr_mask);
}

int shm_srq_post_recv(struct openrdma_srq *srq, struct openrdma_recv_wr *wr,
		      struct openrdma_recv_wr **bad_wr)
{
	return sw_srq_post_recv(&to_shm_srq(srq)->sw, wr, bad_wr);
}

int shm_srq_query(struct openrdma_srq *srq, struct openrdma_srq_attr *attr)
{
	sw_srq_query(&to_shm_srq(srq)->sw, attr);
	return 0;
}
