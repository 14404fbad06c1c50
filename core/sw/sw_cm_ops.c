/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The connection managers' common ground: what a side asked for in connect
 * or accept, the events as the application sees them, and the QP moves an
 * IB CM makes on REP and RTU.  How CM messages travel stays with each
 * transport.
 */
#include <string.h>

#include <openrdma/transport.h>

#include "core/sw/sw_ops.h"

/* RNR NAK timer the CM gives QPs: 0.64 ms, as IB CMs commonly do */
#define CM_MIN_RNR_TIMER 12
#define CM_TIMEOUT 14

void sw_cm_param_set(struct sw_cm_param *p,
		     const struct openrdma_conn_param *param,
		     uint8_t max_rd_atom)
{
	memset(p, 0, sizeof(*p));
	if (!param) {
		/* librdmacm's defaults without a param: all it can have */
		p->responder_resources = max_rd_atom;
		p->initiator_depth = max_rd_atom;
		p->retry_count = 7;
		p->rnr_retry_count = 7;
		return;
	}
	p->responder_resources = param->responder_resources;
	p->initiator_depth = param->initiator_depth;
	p->retry_count = param->retry_count;
	p->rnr_retry_count = param->rnr_retry_count;
	p->three_way = param->three_way;
}

void sw_cm_event_init(struct openrdma_cm_event *ev,
		      enum openrdma_cm_event_type type,
		      const struct sockaddr_storage *peer,
		      const struct sockaddr_storage *local)
{
	memset(ev, 0, sizeof(*ev));
	ev->event = type;
	ev->src_addr = *peer;
	ev->dst_addr = *local;
}

void sw_cm_event_pdata(struct openrdma_cm_event *ev, const void *data,
		       unsigned int len)
{
	if (len)
		memcpy(ev->param.private_data, data, len);
	ev->param.private_data_len = (uint8_t)len;
}

void sw_cm_event_param(struct openrdma_cm_event *ev,
		       const struct sw_cm_param *p, uint32_t qp_num)
{
	/* the remote side's view: its resources swapped */
	ev->param.responder_resources = p->initiator_depth;
	ev->param.initiator_depth = p->responder_resources;
	ev->param.qp_num = qp_num;
}

void sw_cm_event_post(struct openrdma_cm_id *id,
		      const struct openrdma_cm_event *ev)
{
	/* fails only while id is being destroyed: nobody is left to tell */
	openrdma_cm_event_post(id, ev);
}

void sw_cm_event_post_status(struct openrdma_cm_id *id,
			     enum openrdma_cm_event_type type, int status,
			     const struct sockaddr_storage *peer,
			     const struct sockaddr_storage *local)
{
	struct openrdma_cm_event ev;

	sw_cm_event_init(&ev, type, peer, local);
	ev.status = status;
	sw_cm_event_post(id, &ev);
}

int sw_cm_qp_connect(struct openrdma_qp *qp, const struct sw_qp *sqp,
		     const struct sw_cm_path *path,
		     const struct sw_cm_param *mine,
		     const struct sw_cm_param *theirs)
{
	unsigned int rd = mine->responder_resources ?
				  OPENRDMA_ACCESS_REMOTE_READ |
					  OPENRDMA_ACCESS_REMOTE_ATOMIC :
				  0;
	struct openrdma_qp_attr attr;
	int ret;

	if (atomic_load(&qp->state) == OPENRDMA_QPS_RESET) {
		memset(&attr, 0, sizeof(attr));
		attr.qp_state = OPENRDMA_QPS_INIT;
		attr.port_num = path->port_num;
		attr.qp_access_flags = OPENRDMA_ACCESS_REMOTE_WRITE | rd;
		ret = openrdma_qp_modify(
			qp, &attr,
			OPENRDMA_QP_STATE | OPENRDMA_QP_PKEY_INDEX |
				OPENRDMA_QP_PORT | OPENRDMA_QP_ACCESS_FLAGS);
		if (ret)
			return ret;
	}

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = OPENRDMA_QPS_RTR;
	attr.path_mtu = OPENRDMA_MTU_4096;
	attr.dest_qp_num = path->dest_qpn;
	attr.max_dest_rd_atomic = mine->responder_resources;
	attr.min_rnr_timer = CM_MIN_RNR_TIMER;
	attr.qp_access_flags = atomic_load(&sqp->access_flags) | rd;
	attr.ah_attr.port_num = path->port_num;
	attr.ah_attr.addr = path->addr;
	ret = openrdma_qp_modify(
		qp, &attr,
		OPENRDMA_QP_STATE | OPENRDMA_QP_AV | OPENRDMA_QP_PATH_MTU |
			OPENRDMA_QP_DEST_QPN | OPENRDMA_QP_RQ_PSN |
			OPENRDMA_QP_MAX_DEST_RD_ATOMIC |
			OPENRDMA_QP_MIN_RNR_TIMER | OPENRDMA_QP_ACCESS_FLAGS);
	if (ret)
		return ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = OPENRDMA_QPS_RTS;
	attr.timeout = CM_TIMEOUT;
	attr.retry_cnt = mine->retry_count;
	attr.rnr_retry = theirs->rnr_retry_count;
	attr.max_rd_atomic = mine->initiator_depth;
	return openrdma_qp_modify(
		qp, &attr,
		OPENRDMA_QP_STATE | OPENRDMA_QP_TIMEOUT |
			OPENRDMA_QP_RETRY_CNT | OPENRDMA_QP_RNR_RETRY |
			OPENRDMA_QP_SQ_PSN | OPENRDMA_QP_MAX_QP_RD_ATOMIC);
}

void sw_cm_qp_error(struct openrdma_qp *qp)
{
	struct openrdma_qp_attr attr = { .qp_state = OPENRDMA_QPS_ERR };

	if (qp)
		openrdma_qp_modify(qp, &attr, OPENRDMA_QP_STATE);
}
