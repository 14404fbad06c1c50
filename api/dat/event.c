/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The engine's converters: completions and async events to DAT_EVENTs.
 *
 * A completion's work-request id names its queue's key and slot.  The
 * slot tells what was posted (cookie, length, operation); a key that is
 * gone (freed or reset EP) drops the completion.  Converters run under
 * the EVD's lock and take only the IA's leaf lock.
 */
#include "config.h"

#include <arpa/inet.h>
#include <string.h>

#include <openrdma/errno.h>
#include <openrdma/log.h>

#include "api/dat/provider.h"

DAT_DTO_COMPLETION_STATUS datp_dto_status(enum openrdma_wc_status status)
{
	switch (status) {
	case OPENRDMA_WC_SUCCESS:
		return DAT_DTO_SUCCESS;
	case OPENRDMA_WC_WR_FLUSH_ERR:
		return DAT_DTO_ERR_FLUSHED;
	case OPENRDMA_WC_LOC_LEN_ERR:
		return DAT_DTO_ERR_LOCAL_LENGTH;
	case OPENRDMA_WC_LOC_QP_OP_ERR:
	case OPENRDMA_WC_LOC_EEC_OP_ERR:
		return DAT_DTO_ERR_LOCAL_EP;
	case OPENRDMA_WC_LOC_PROT_ERR:
	case OPENRDMA_WC_LOC_ACCESS_ERR:
	case OPENRDMA_WC_LOC_RDD_VIOL_ERR:
		return DAT_DTO_ERR_LOCAL_PROTECTION;
	case OPENRDMA_WC_MW_BIND_ERR:
		return DAT_RMR_OPERATION_FAILED;
	case OPENRDMA_WC_BAD_RESP_ERR:
		return DAT_DTO_ERR_BAD_RESPONSE;
	case OPENRDMA_WC_REM_ACCESS_ERR:
		return DAT_DTO_ERR_REMOTE_ACCESS;
	case OPENRDMA_WC_REM_INV_REQ_ERR:
	case OPENRDMA_WC_REM_OP_ERR:
	case OPENRDMA_WC_REM_INV_RD_REQ_ERR:
	case OPENRDMA_WC_REM_ABORT_ERR:
		return DAT_DTO_ERR_REMOTE_RESPONDER;
	case OPENRDMA_WC_RNR_RETRY_EXC_ERR:
		return DAT_DTO_ERR_RECEIVER_NOT_READY;
	default:
		return DAT_DTO_ERR_TRANSPORT;
	}
}

static DAT_IB_EXTENSION_EVENT_DATA *ext_data(DAT_EVENT *ev)
{
	return (DAT_IB_EXTENSION_EVENT_DATA *)ev->event_extension_data;
}

/* The extension's event type of an extended operation. */
static DAT_IB_EXT_TYPE ext_type(unsigned int op)
{
	switch (op) {
	case DAT_IB_DTO_FETCH_ADD:
		return DAT_IB_FETCH_AND_ADD;
	case DAT_IB_DTO_CMP_SWAP:
		return DAT_IB_CMP_AND_SWAP;
	case DAT_IB_DTO_RDMA_WRITE_IMMED:
		return DAT_IB_RDMA_WRITE_IMMED;
	case DAT_IB_DTO_RECV_IMMED:
		return DAT_IB_RDMA_WRITE_IMMED_DATA;
	case DAT_IB_DTO_RECV_MSG_IMMED:
		return DAT_IB_RECV_IMMED_DATA;
	case DAT_IB_DTO_SEND_UD:
		return DAT_IB_UD_SEND;
	default:
		return DAT_IB_UD_RECV;
	}
}

static void dto_fill(DAT_EVENT *ev, struct datp_ep *ep,
		     const struct datp_slot *slot, const struct openrdma_wc *wc,
		     unsigned int op, uint32_t length)
{
	DAT_DTO_COMPLETION_EVENT_DATA *dto =
		&ev->event_data.dto_completion_event_data;

	dto->ep_handle = ep;
	dto->user_cookie = slot->cookie;
	dto->status = datp_dto_status(wc->status);
	dto->transfered_length = wc->status == OPENRDMA_WC_SUCCESS ? length : 0;
	dto->operation = (DAT_DTOS)op;
	if (op < DAT_DTO_EXTENSION_BASE) {
		ev->event_number = DAT_DTO_COMPLETION_EVENT;
		return;
	}
	ev->event_number = (DAT_EVENT_NUMBER)DAT_IB_DTO_EVENT;
	ext_data(ev)->type = ext_type(op);
	ext_data(ev)->status = wc->status == OPENRDMA_WC_SUCCESS ?
				       DAT_OP_SUCCESS :
				       DAT_IB_OP_ERR;
}

/*
 * An SRQ receive went to ep: count it against the EP, and enforce its
 * watermarks.  Above the soft one the consumer is told once; above the
 * hard one the connection is broken.
 */
static void srq_account(struct datp_ia *ia, struct datp_ep *ep)
{
	struct openrdma_qp_attr attr = { .qp_state = OPENRDMA_QPS_ERR };
	int held = atomic_fetch_add(&ep->srq_held, 1) + 1;
	DAT_EVENT note = { 0 };

	atomic_fetch_add(&ep->srq->in_use, 1);
	note.event_data.asynch_error_event_data.dat_handle = ep;
	if (ep->hard_hw != DAT_WATERMARK_INFINITE && held > ep->hard_hw) {
		/* a core call, not the engine's: allowed in a converter */
		openrdma_qp_modify(ep->qp, &attr, OPENRDMA_QP_STATE);
		note.event_number = DAT_ASYNC_ERROR_EP_BROKEN;
		note.event_data.asynch_error_event_data.reason =
			DAT_EP_OTHER_ERROR;
		datp_ia_defer_event(ia, &note);
		return;
	}
	if (ep->soft_hw != DAT_WATERMARK_INFINITE && held >= ep->soft_hw &&
	    !atomic_exchange(&ep->soft_hw_sent, true)) {
		note.event_number = DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR;
		note.event_data.asynch_error_event_data.reason =
			DAT_SRQ_SOFT_HIGH_WATERMARK_EVENT;
		datp_ia_defer_event(ia, &note);
	}
}

/*
 * The event a completion becomes starts empty.  Converters clear it only
 * once they keep the completion: a skipped one leaves the record alone
 * (it may be the caller's own, see core_evd_wc_fn).
 */
static void ev_clear(DAT_EVENT *ev, struct datp_evd *evd)
{
	memset(ev, 0, sizeof(*ev));
	ev->evd_handle = evd;
}

/* A receive: the slot is the EP's or its SRQ's; the EP is the QP's. */
static int recv_convert(struct datp_evd *evd, struct datp_ia *ia,
			struct datp_key *k, uint32_t index,
			const struct openrdma_wc *wc, DAT_EVENT *ev)
{
	struct datp_ep *ep = NULL;
	uint32_t qpn = wc->qp_num;
	struct datp_slot slot;
	struct datp_rq *rq;
	unsigned int op;

	if (k->kind == DATP_KEY_EP) {
		ep = k->owner;
		rq = &ep->rq;
	} else {
		rq = &((struct datp_srq *)k->owner)->rq;
		HASH_FIND(hh_qpn, ia->qp_eps, &qpn, sizeof(qpn), ep);
	}
	if (index >= rq->cap)
		return CORE_EVD_SKIP;
	pthread_mutex_lock(&rq->lock);
	slot = rq->slots[index];
	datp_rq_give(rq, index);
	pthread_mutex_unlock(&rq->lock);
	if (!ep)
		return CORE_EVD_SKIP;

	ev_clear(ev, evd);
	op = DAT_DTO_RECEIVE;
	if (wc->wc_flags & OPENRDMA_WC_WITH_INV) {
		op = DAT_DTO_RECEIVE_WITH_INVALIDATE;
		ev->event_data.dto_completion_event_data.rmr_context =
			wc->invalidated_rkey;
	}
	if (wc->wc_flags & OPENRDMA_WC_WITH_IMM)
		op = wc->opcode == OPENRDMA_WC_RECV_RDMA_WITH_IMM ?
			     DAT_IB_DTO_RECV_IMMED :
			     DAT_IB_DTO_RECV_MSG_IMMED;
	if (ep->kind == DATP_EP_UD)
		op = wc->wc_flags & OPENRDMA_WC_WITH_IMM ?
			     DAT_IB_DTO_RECV_UD_IMMED :
			     DAT_IB_DTO_RECV_UD;
	dto_fill(ev, ep, &slot, wc, op, wc->byte_len);
	if (wc->wc_flags & OPENRDMA_WC_WITH_IMM)
		ext_data(ev)->val.immed.data = ntohl(wc->imm_data);
	if (ep->kind == DATP_EP_UD) {
		ext_data(ev)->type = DAT_IB_UD_RECV;
		ext_data(ev)->remote_ah.qpn = wc->src_qp;
	}
	if (wc->status == OPENRDMA_WC_SUCCESS) {
		datp_ep_count(ep, DCNT_EP_RECV, wc->byte_len);
		if (wc->wc_flags & OPENRDMA_WC_WITH_IMM)
			datp_ep_count(ep, DCNT_EP_RECV_RDMA_IMM, wc->byte_len);
		if (ep->kind == DATP_EP_UD)
			datp_ep_count(ep, DCNT_EP_RECV_UD, wc->byte_len);
	}
	if (k->kind == DATP_KEY_SRQ && ep->srq)
		srq_account(ia, ep);
	return 0;
}

/* A send-queue completion: every slot up to it is done. */
static int send_convert(struct datp_evd *evd, struct datp_ep *ep, uint32_t seq,
			const struct openrdma_wc *wc, DAT_EVENT *ev)
{
	struct datp_slot slot = ep->sq.slots[seq % ep->sq.cap];
	DAT_RMR_BIND_COMPLETION_EVENT_DATA *bind;

	atomic_store_explicit(&ep->sq.tail, seq + 1, memory_order_release);
	if (slot.internal && wc->status == OPENRDMA_WC_SUCCESS)
		return CORE_EVD_SKIP;
	ev_clear(ev, evd);
	if (slot.bind && (evd->flags & DAT_EVD_RMR_BIND_FLAG)) {
		ev->event_number = DAT_RMR_BIND_COMPLETION_EVENT;
		bind = &ev->event_data.rmr_completion_event_data;
		bind->rmr_handle = slot.rmr;
		bind->user_cookie = slot.cookie;
		bind->status = datp_dto_status(wc->status);
		return 0;
	}
	dto_fill(ev, ep, &slot, wc, slot.op, slot.length);
	if (slot.op == DAT_IB_DTO_SEND_UD)
		ext_data(ev)->type = DAT_IB_UD_SEND;
	return 0;
}

int datp_wc_convert(void *arg, const struct openrdma_wc *wc, void *rec)
{
	struct datp_evd *evd = arg;
	struct datp_ia *ia = evd->obj.ia;
	uint32_t key = (uint32_t)(wc->wr_id >> 32);
	uint32_t index = (uint32_t)wc->wr_id;
	DAT_EVENT *ev = rec;
	struct datp_key *k;
	int ret = CORE_EVD_SKIP;

	pthread_mutex_lock(&ia->lock);
	k = datp_key_find(ia, key & ~DATP_KEY_RECV);
	if (k && (key & DATP_KEY_RECV))
		ret = recv_convert(evd, ia, k, index, wc, ev);
	else if (k && k->kind == DATP_KEY_EP)
		ret = send_convert(evd, k->owner, index, wc, ev);
	pthread_mutex_unlock(&ia->lock);
	if (ret == CORE_EVD_SKIP)
		openrdma_dbg("dat", "completion 0x%llx (%s) of a gone queue",
			     (unsigned long long)wc->wr_id,
			     openrdma_wc_status_str(wc->status));
	return ret;
}

int datp_async_convert(void *arg, const struct openrdma_async_event *ev,
		       struct core_evd *cq_evd, void *rec)
{
	struct datp_evd *evd = arg;
	DAT_ASYNCH_ERROR_EVENT_DATA *err;
	DAT_EVENT *out = rec;

	memset(out, 0, sizeof(*out));
	out->evd_handle = evd;
	err = &out->event_data.asynch_error_event_data;
	switch (ev->event_type) {
	case OPENRDMA_EVENT_CQ_ERR:
		if (!cq_evd)
			return CORE_EVD_SKIP;
		out->event_number = DAT_ASYNC_ERROR_EVD_OVERFLOW;
		err->dat_handle = core_evd_context(cq_evd);
		err->reason = DAT_EVD_OVERFLOW_ERROR;
		return 0;
	case OPENRDMA_EVENT_QP_FATAL:
	case OPENRDMA_EVENT_QP_REQ_ERR:
	case OPENRDMA_EVENT_QP_ACCESS_ERR:
		out->event_number = DAT_ASYNC_ERROR_EP_BROKEN;
		err->dat_handle = ev->element.qp->qp_context;
		err->reason = ev->event_type == OPENRDMA_EVENT_QP_ACCESS_ERR ?
				      DAT_EP_OTHER_ERROR :
				      DAT_EP_TRANSFER_TO_ERROR;
		return err->dat_handle ? 0 : CORE_EVD_SKIP;
	case OPENRDMA_EVENT_SRQ_ERR:
	case OPENRDMA_EVENT_SRQ_LIMIT_REACHED:
		out->event_number = DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR;
		err->dat_handle = ev->element.srq->srq_context;
		err->reason = ev->event_type == OPENRDMA_EVENT_SRQ_ERR ?
				      DAT_SRQ_TRANSFER_TO_ERROR :
				      DAT_SRQ_LOW_WATERMARK_EVENT;
		return err->dat_handle ? 0 : CORE_EVD_SKIP;
	case OPENRDMA_EVENT_DEVICE_FATAL:
	case OPENRDMA_EVENT_PORT_ERR:
		out->event_number = DAT_ASYNC_ERROR_IA_CATASTROPHIC;
		err->dat_handle = evd->obj.ia;
		err->reason = ev->event_type == OPENRDMA_EVENT_DEVICE_FATAL ?
				      DAT_IA_CATASTROPHIC_ERROR :
				      DAT_IA_OTHER_ERROR;
		return 0;
	default:
		/* informational: port up, connection established, ... */
		return CORE_EVD_SKIP;
	}
}

void datp_overflow(struct core_evd *cevd, void *arg)
{
	struct datp_evd *evd = arg;
	DAT_EVENT ev = { 0 };

	openrdma_warn("dat", "evd %p overflowed (qlen %d)", (void *)evd,
		      evd->qlen);
	if (evd->is_async)
		return;
	ev.event_number = DAT_ASYNC_ERROR_EVD_OVERFLOW;
	ev.event_data.asynch_error_event_data.dat_handle = evd;
	ev.event_data.asynch_error_event_data.reason = DAT_EVD_OVERFLOW_ERROR;
	datp_ia_post_async(evd->obj.ia, &ev);
}
