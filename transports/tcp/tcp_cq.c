/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* Completion queues and shared receive queues: thin wraps of core/sw. */
#include <stdlib.h>

#include "transports/tcp/tcp.h"

int tcp_cq_create(struct openrdma_context *ctx, int cqe, int comp_vector,
		  struct openrdma_cq **cq_out)
{
	struct tcp_ctx *tctx = to_tcp_ctx(ctx);
	struct tcp_cq *cq;
	int ret;

	if (cqe < 1 || cqe > TCP_MAX_CQE)
		return -OPENRDMA_EINVAL;
	ret = tcp_res_get(tctx, TCP_RES_CQ);
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
	tcp_res_put(tctx, TCP_RES_CQ);
	return ret;
}

int tcp_cq_destroy(struct openrdma_cq *cq)
{
	struct tcp_cq *scq = to_tcp_cq(cq);

	sw_cq_fini(&scq->sw);
	tcp_res_put(to_tcp_ctx(cq->obj.ctx), TCP_RES_CQ);
	free(scq);
	return 0;
}

int tcp_cq_poll(struct openrdma_cq *cq, int num_entries, struct openrdma_wc *wc)
{
	return sw_cq_poll(&to_tcp_cq(cq)->sw, num_entries, wc);
}

int tcp_cq_resize(struct openrdma_cq *cq, int cqe)
{
	int ret;

	if (cqe < 1 || cqe > TCP_MAX_CQE)
		return -OPENRDMA_EINVAL;
	ret = sw_cq_resize(&to_tcp_cq(cq)->sw, cqe);
	if (!ret)
		cq->cqe = cqe;
	return ret;
}

int tcp_srq_create(struct openrdma_pd *pd,
		   struct openrdma_srq_init_attr *init_attr,
		   struct openrdma_srq **srq_out)
{
	struct tcp_ctx *tctx = to_tcp_ctx(pd->obj.ctx);
	struct openrdma_srq_attr *attr = &init_attr->attr;
	struct tcp_srq *srq;
	int ret;

	if (!attr->max_wr || attr->max_wr > TCP_MAX_SRQ_WR ||
	    attr->max_sge > TCP_MAX_SGE)
		return -OPENRDMA_EINVAL;
	ret = tcp_res_get(tctx, TCP_RES_SRQ);
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
	tcp_res_put(tctx, TCP_RES_SRQ);
	return ret;
}

int tcp_srq_destroy(struct openrdma_srq *srq)
{
	struct tcp_srq *ssrq = to_tcp_srq(srq);

	sw_srq_fini(&ssrq->sw);
	tcp_res_put(to_tcp_ctx(srq->obj.ctx), TCP_RES_SRQ);
	free(ssrq);
	return 0;
}

int tcp_srq_modify(struct openrdma_srq *srq, struct openrdma_srq_attr *attr,
		   int attr_mask)
{
	return sw_srq_modify(&to_tcp_srq(srq)->sw, attr, attr_mask,
			     TCP_MAX_SRQ_WR);
}

int tcp_srq_post_recv(struct openrdma_srq *srq, struct openrdma_recv_wr *wr,
		      struct openrdma_recv_wr **bad_wr)
{
	return sw_srq_post_recv(&to_tcp_srq(srq)->sw, wr, bad_wr);
}

int tcp_srq_query(struct openrdma_srq *srq, struct openrdma_srq_attr *attr)
{
	sw_srq_query(&to_tcp_srq(srq)->sw, attr);
	return 0;
}
