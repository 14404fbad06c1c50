/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Completion queues and shared receive queues: the toolkit's
 * (core/sw/sw_cq_ops.c), with the connections a polling CQ drives.
 */
#include <stddef.h>
#include <stdlib.h>

#include "core/sw/sw_ops.h"
#include "transports/tcp/tcp.h"

static int cq_init(struct openrdma_context *ctx, struct openrdma_cq *cq)
{
	return core_lock_init(&to_tcp_cq(cq)->drive_lock, CORE_LOCK_SPIN);
}

static void cq_fini(struct openrdma_cq *cq)
{
	struct tcp_cq *tcq = to_tcp_cq(cq);

	/* its QPs are gone, and with them every connection it drove */
	core_lock_destroy(&tcq->drive_lock);
	free(tcq->drive);
}

static const struct sw_cq_ops tcp_cq_ops = {
	.max_cqe = TCP_MAX_CQE,
	.max_srq_wr = TCP_MAX_SRQ_WR,
	.max_sge = TCP_MAX_SGE,
	.cq_size = sizeof(struct tcp_cq),
	.cq_sw = offsetof(struct tcp_cq, sw),
	.srq_size = sizeof(struct tcp_srq),
	.srq_sw = offsetof(struct tcp_srq, sw),
	.res_get = tcp_res_get,
	.res_put = tcp_res_put,
	.cq_init = cq_init,
	.cq_fini = cq_fini,
};

int tcp_cq_create(struct openrdma_context *ctx, int cqe, int comp_vector,
		  struct openrdma_cq **cq_out)
{
	return sw_cq_create(&tcp_cq_ops, ctx, cqe, cq_out);
}

int tcp_cq_destroy(struct openrdma_cq *cq)
{
	return sw_cq_destroy(&tcp_cq_ops, cq);
}

int tcp_cq_poll(struct openrdma_cq *cq, int num_entries, struct openrdma_wc *wc)
{
	struct tcp_cq *tcq = to_tcp_cq(cq);
	int n;

	n = sw_cq_poll(&tcq->sw, num_entries, wc);
	if (n || !num_entries) {
		atomic_store_explicit(&tcq->streak, 0, memory_order_relaxed);
		return n;
	}
	/* nothing yet: read the connections it waits on (tcp_poll.c) */
	tcp_poll_drive(tcq);
	return sw_cq_poll(&tcq->sw, num_entries, wc);
}

int tcp_cq_req_notify(struct openrdma_cq *cq, int solicited_only)
{
	struct tcp_cq *tcq = to_tcp_cq(cq);
	struct tcp_ctx *tctx = to_tcp_ctx(cq->obj.ctx);

	/* its poller goes to sleep on the channel: the progress thread takes
	 * its connections back at once */
	atomic_store(&tcq->streak, 0);
	atomic_store(&tcq->busy, false);
	atomic_store(&tcq->last_poll, 0);
	if (atomic_load(&tctx->app_count))
		tcp_progress_wake(tctx);
	/* the core arms the CQ */
	return -OPENRDMA_EOPNOTSUPP;
}

int tcp_cq_resize(struct openrdma_cq *cq, int cqe)
{
	return sw_cq_set_size(&tcp_cq_ops, cq, cqe);
}

int tcp_cq_sleep_begin(struct openrdma_cq *cq, struct pollfd *pfd,
		       void **cookie, int max)
{
	return tcp_poll_sleep_begin(to_tcp_cq(cq), pfd, cookie, max);
}

void tcp_cq_sleep_end(struct openrdma_cq *cq, const struct pollfd *pfd,
		      void **cookie, int n)
{
	tcp_poll_sleep_end(to_tcp_cq(cq), pfd, cookie, n);
}

int tcp_srq_create(struct openrdma_pd *pd,
		   struct openrdma_srq_init_attr *init_attr,
		   struct openrdma_srq **srq_out)
{
	return sw_srq_create(&tcp_cq_ops, pd, init_attr, srq_out);
}

int tcp_srq_destroy(struct openrdma_srq *srq)
{
	return sw_srq_destroy(&tcp_cq_ops, srq);
}

int tcp_srq_modify(struct openrdma_srq *srq, struct openrdma_srq_attr *attr,
		   int attr_mask)
{
	return sw_srq_set_attr(&tcp_cq_ops, srq, attr, attr_mask);
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
