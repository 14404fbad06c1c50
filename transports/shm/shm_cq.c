/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Completion queues and shared receive queues: core/sw's, with one
 * addition: an empty poll runs the receive side first, so a polling
 * application serves its peers itself, without waking a thread.
 */
#include <stdlib.h>

#include "transports/shm/shm.h"

int shm_cq_create(struct openrdma_context *ctx, int cqe, int comp_vector,
		  struct openrdma_cq **cq_out)
{
	struct shm_ctx *sctx = to_shm_ctx(ctx);
	struct shm_cq *cq;
	int ret;

	if (cqe < 1 || cqe > SHM_MAX_CQE)
		return -OPENRDMA_EINVAL;
	ret = shm_res_get(sctx, SHM_RES_CQ);
	if (ret)
		return ret;
	ret = -OPENRDMA_ENOMEM;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		goto err_res;
	ret = sw_cq_init(&cq->sw, &cq->base, cqe);
	if (ret)
		goto err_free;
	cq->base.cqe = cqe;
	*cq_out = &cq->base;
	return 0;

err_free:
	free(cq);
err_res:
	shm_res_put(sctx, SHM_RES_CQ);
	return ret;
}

int shm_cq_destroy(struct openrdma_cq *cq)
{
	struct shm_cq *scq = to_shm_cq(cq);

	sw_cq_fini(&scq->sw);
	shm_res_put(to_shm_ctx(cq->obj.ctx), SHM_RES_CQ);
	free(scq);
	return 0;
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
	/* the application is about to block: the progress thread stops
	 * counting on its polls at its next look */
	atomic_store(&to_shm_ctx(cq->obj.ctx)->prog.app_active, false);
	/* the core arms the CQ and signals its channel */
	return 0;
}

int shm_cq_resize(struct openrdma_cq *cq, int cqe)
{
	int ret;

	if (cqe < 1 || cqe > SHM_MAX_CQE)
		return -OPENRDMA_EINVAL;
	ret = sw_cq_resize(&to_shm_cq(cq)->sw, cqe);
	if (!ret)
		cq->cqe = cqe;
	return ret;
}

int shm_srq_create(struct openrdma_pd *pd,
		   struct openrdma_srq_init_attr *init_attr,
		   struct openrdma_srq **srq_out)
{
	struct shm_ctx *sctx = to_shm_ctx(pd->obj.ctx);
	struct openrdma_srq_attr *attr = &init_attr->attr;
	struct shm_srq *srq;
	int ret;

	if (!attr->max_wr || attr->max_wr > SHM_MAX_SRQ_WR ||
	    attr->max_sge > SHM_MAX_SGE)
		return -OPENRDMA_EINVAL;
	ret = shm_res_get(sctx, SHM_RES_SRQ);
	if (ret)
		return ret;
	ret = -OPENRDMA_ENOMEM;
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		goto err_res;
	srq->base.pd = pd;
	ret = sw_srq_init(&srq->sw, &srq->base, attr);
	if (ret)
		goto err_free;
	/* granted as asked; the limit is armed by srq_modify only */
	attr->srq_limit = 0;
	*srq_out = &srq->base;
	return 0;

err_free:
	free(srq);
err_res:
	shm_res_put(sctx, SHM_RES_SRQ);
	return ret;
}

int shm_srq_destroy(struct openrdma_srq *srq)
{
	struct shm_srq *ssrq = to_shm_srq(srq);

	sw_srq_fini(&ssrq->sw);
	shm_res_put(to_shm_ctx(srq->obj.ctx), SHM_RES_SRQ);
	free(ssrq);
	return 0;
}

int shm_srq_modify(struct openrdma_srq *srq, struct openrdma_srq_attr *attr,
		   int attr_mask)
{
	return sw_srq_modify(&to_shm_srq(srq)->sw, attr, attr_mask,
			     SHM_MAX_SRQ_WR);
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
