/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The initiator's half of a request: find the target QP in this process and
 * hand it the request, with the initiator's buffers as its payload.  This is
 * all of self's "wire"; core/sw does the rest on both sides.
 */
#include <string.h>

#include "core/sw/target.h"
#include "transports/self/self.h"

/* Q_Keys with the high bit set mean "use the QP's own" (IB 10.2.5). */
#define QKEY_USE_QP 0x80000000u

static void req_init(struct sw_req *req, const struct self_qp *qp,
		     const struct sw_send_wqe *w, uint64_t len,
		     struct sw_payload *payload)
{
	memset(req, 0, sizeof(*req));
	req->opcode = w->opcode;
	req->send_flags = w->send_flags;
	req->src_qpn = qp->base.qp_num;
	req->ex = w->ex;
	req->remote_addr = w->remote_addr;
	req->rkey = w->rkey;
	req->length = len;
	req->compare_add = w->compare_add;
	req->swap = w->swap;
	req->payload = payload;
}

static int rc_execute(struct self_qp *qp, struct sw_send_wqe *w,
		      struct sw_payload *payload, uint64_t len)
{
	struct self_qp *peer;
	struct sw_req req;
	int status;

	/* no answer from a peer that is not there, or not connected to us:
	 * what a real initiator sees as retries running out */
	if (!atomic_load(&qp->av_local))
		return OPENRDMA_WC_RETRY_EXC_ERR;
	peer = self_qp_get(atomic_load(&qp->sw.dest_qpn));
	if (!peer)
		return OPENRDMA_WC_RETRY_EXC_ERR;
	if (peer->base.qp_type != OPENRDMA_QPT_RC ||
	    atomic_load(&peer->sw.dest_qpn) != qp->base.qp_num) {
		self_qp_put(peer);
		return OPENRDMA_WC_RETRY_EXC_ERR;
	}
	req_init(&req, qp, w, len, payload);
	status = sw_target_rc(&peer->sw, &req, &w->rnr_timer);
	self_qp_put(peer);
	return status;
}

static int ud_execute(struct self_qp *qp, struct sw_send_wqe *w,
		      struct sw_payload *payload, uint64_t len)
{
	struct sockaddr_storage addr;
	struct self_qp *peer;
	struct sw_req req;
	uint32_t qkey;

	/* datagrams may be lost: to elsewhere, or to no QP, they are */
	if (!to_self_ah(w->ah)->local)
		return OPENRDMA_WC_SUCCESS;
	peer = self_qp_get(w->remote_qpn);
	if (!peer)
		return OPENRDMA_WC_SUCCESS;
	qkey = w->remote_qkey & QKEY_USE_QP ? atomic_load(&qp->sw.qkey) :
					      w->remote_qkey;
	req_init(&req, qp, w, len, payload);
	req.qkey = qkey;
	self_port_gid(&req.sgid);
	req.dgid = req.sgid;
	self_port_addr(&addr);
	if (sw_peers_index(peer->ctx->peers, (struct sockaddr *)&addr,
			   &req.slid))
		req.slid = 0;
	sw_target_ud(&peer->sw, &req);
	self_qp_put(peer);
	return OPENRDMA_WC_SUCCESS;
}

static int self_execute(struct sw_qp *sqp, struct sw_send_wqe *w,
			const struct iovec *iov, int iovcnt, uint64_t len)
{
	struct self_qp *qp = sw_to_self_qp(sqp);
	struct sw_iov_payload payload;

	sw_iov_payload_init(&payload, iov, iovcnt);
	if (qp->base.qp_type == OPENRDMA_QPT_UD)
		return ud_execute(qp, w, &payload.base, len);
	return rc_execute(qp, w, &payload.base, len);
}

static int self_schedule(struct sw_qp *sqp, uint64_t deadline)
{
	struct self_qp *qp = sw_to_self_qp(sqp);

	return sw_timer_add(&qp->ctx->timer, &qp->rnr_entry, deadline);
}

const struct sw_qp_ops self_sw_qp_ops = {
	.execute = self_execute,
	.schedule = self_schedule,
};
