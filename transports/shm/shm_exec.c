/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The operations core/sw calls for the head of a send queue: UD sends
 * (datagrams through the link to the destination's context) and the RNR
 * timer.  RC send queues are the pipe of shm_tx.c, which core/sw only
 * flushes.
 */
#include <string.h>

#include "transports/shm/shm.h"

/* Q_Keys with the high bit set mean "use the QP's own" (IB 10.2.5). */
#define QKEY_USE_QP 0x80000000u

static int ud_execute(struct shm_qp *qp, struct sw_send_wqe *w,
		      const struct iovec *iov, int cnt, uint64_t len)
{
	uint32_t node = SHM_QPN_NODE(w->remote_qpn);
	struct shm_elem t;

	/* datagrams to elsewhere, or to no context, are lost */
	if (!to_shm_ah(w->ah)->local || !node)
		return OPENRDMA_WC_SUCCESS;
	memset(&t, 0, sizeof(t));
	t.type = SHM_EL_DGRAM;
	t.op = (uint8_t)w->opcode;
	t.flags = (uint8_t)w->send_flags;
	t.seq = w->remote_qpn;
	t.len = (uint32_t)len;
	t.ex = w->ex;
	t.u.r.aux = w->remote_qkey & QKEY_USE_QP ? atomic_load(&qp->sw.qkey) :
						   w->remote_qkey;
	t.u.r.cmp = qp->base.qp_num;
	shm_link_send(qp->ctx, node, &t, iov, cnt, len);
	return OPENRDMA_WC_SUCCESS;
}

static int shm_execute(struct sw_qp *sqp, struct sw_send_wqe *w,
		       const struct iovec *iov, int iovcnt, uint64_t len)
{
	struct shm_qp *qp = sw_to_shm_qp(sqp);

	if (qp->base.qp_type == OPENRDMA_QPT_UD)
		return ud_execute(qp, w, iov, iovcnt, len);
	/* RC requests go through the pipe, never here */
	return OPENRDMA_WC_GENERAL_ERR;
}

static int shm_schedule(struct sw_qp *sqp, uint64_t deadline)
{
	struct shm_qp *qp = sw_to_shm_qp(sqp);

	return sw_timer_add(&qp->ctx->timer, &qp->rnr_entry, deadline);
}

const struct sw_qp_ops shm_sw_qp_ops = {
	.execute = shm_execute,
	.schedule = shm_schedule,
};
