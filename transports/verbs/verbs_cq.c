/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Completion queues.  Every CQ reports to the context's one completion
 * channel, which the progress thread services; the core arms its own
 * channel first and then the device's CQ (cq_req_notify), so a completion
 * that arrives in between still wakes the application.  Completions are
 * polled straight into the caller's array (verbs_abi.c).
 */
#include <stdlib.h>

#include "transports/verbs/verbs.h"

int verbs_cq_create(struct openrdma_context *ctx, int cqe, int comp_vector,
		    struct openrdma_cq **cq_out)
{
	struct verbs_ctx *vctx = to_verbs_ctx(ctx);
	struct verbs_cq *vcq;
	int ret;

	vcq = calloc(1, sizeof(*vcq));
	if (!vcq)
		return -OPENRDMA_ENOMEM;
	atomic_init(&vcq->overrun, false);
	vcq->kernel_wc_flags = vctx->quirks & VERBS_QUIRK_KERNEL_WC_FLAGS;
	/* Vectors beyond the device's wrap around, as the core allows any. */
	if (vctx->ibctx->num_comp_vectors > 0)
		comp_vector %= vctx->ibctx->num_comp_vectors;
	vcq->ibcq = ibv_create_cq(vctx->ibctx, cqe, vcq, vctx->comp_ch,
				  comp_vector);
	if (!vcq->ibcq) {
		ret = verbs_errno();
		free(vcq);
		return ret;
	}
	vcq->base.cqe = vcq->ibcq->cqe;
	ret = verbs_flush_init(vcq, (unsigned int)vcq->base.cqe);
	if (ret) {
		ibv_destroy_cq(vcq->ibcq);
		free(vcq);
		return ret;
	}
	*cq_out = &vcq->base;
	return 0;
}

int verbs_cq_destroy(struct openrdma_cq *cq)
{
	struct verbs_cq *vcq = to_verbs_cq(cq);
	int ret;

	/* Waits for the progress thread to acknowledge its events. */
	ret = ibv_destroy_cq(vcq->ibcq);
	if (ret)
		return verbs_ret(ret);
	verbs_flush_fini(vcq);
	free(vcq);
	return 0;
}

/*
 * One look at each of n completions: puts back the two flags the kernel
 * swaps (fix: IB_WC_WITH_INVALIDATE and IB_WC_IP_CSUM_OK), and tells
 * whether one failed other than by a flush.
 */
static inline bool wc_scan(struct openrdma_wc *wc, int n, bool fix)
{
	bool failed = false;
	unsigned int f;
	int i;

	for (i = 0; i < n; i++) {
		if (fix) {
			f = wc[i].wc_flags;
			wc[i].wc_flags =
				(f & ~(IBV_WC_IP_CSUM_OK | IBV_WC_WITH_INV)) |
				(f & IBV_WC_IP_CSUM_OK ? IBV_WC_WITH_INV : 0) |
				(f & IBV_WC_WITH_INV ? IBV_WC_IP_CSUM_OK : 0);
		}
		failed |= wc[i].status != OPENRDMA_WC_SUCCESS &&
			  wc[i].status != OPENRDMA_WC_WR_FLUSH_ERR;
	}
	return failed;
}

int verbs_cq_poll(struct openrdma_cq *cq, int num_entries,
		  struct openrdma_wc *wc)
{
	struct verbs_cq *vcq = to_verbs_cq(cq);
	int n;

	n = ibv_poll_cq(vcq->ibcq, num_entries, (struct ibv_wc *)wc);
	/* the QP of a failed request is in ERR once its completion is seen */
	if (__builtin_expect(wc_scan(wc, n, vcq->kernel_wc_flags), 0))
		verbs_qp_wc_errors(to_verbs_ctx(cq->obj.ctx), wc, n);
	if (__builtin_expect(n >= 0, 1) &&
	    __builtin_expect(atomic_load_explicit(&vcq->flushed,
						  memory_order_relaxed) != 0,
			     0))
		n += verbs_flush_poll(vcq, num_entries - n, wc + n);
	if (__builtin_expect(n > 0, 1))
		return n;
	/*
	 * Devices drop the completion that overruns a CQ and report CQ_ERR;
	 * the queue then says so once the entries before it are polled.
	 */
	if (atomic_load_explicit(&vcq->overrun, memory_order_relaxed))
		return -OPENRDMA_EOVERFLOW;
	return n < 0 ? -OPENRDMA_EIO : 0;
}

int verbs_cq_req_notify(struct openrdma_cq *cq, int solicited_only)
{
	/*
	 * A device that never marks receives solicited is armed for every
	 * completion instead: a spurious wake-up, never a lost one.
	 */
	if (to_verbs_ctx(cq->obj.ctx)->quirks & VERBS_QUIRK_NO_SOLICITED)
		solicited_only = 0;
	return verbs_ret(
		ibv_req_notify_cq(to_verbs_cq(cq)->ibcq, solicited_only));
}

int verbs_cq_resize(struct openrdma_cq *cq, int cqe)
{
	struct verbs_cq *vcq = to_verbs_cq(cq);
	int ret;

	ret = ibv_resize_cq(vcq->ibcq, cqe);
	if (ret)
		return verbs_ret(ret);
	vcq->base.cqe = vcq->ibcq->cqe;
	return 0;
}
