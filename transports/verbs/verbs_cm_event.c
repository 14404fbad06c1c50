/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * rdma_cm events, on the progress thread: address and route resolution
 * lead to rdma_connect() without the application's help, replies move the
 * QP, and what the application must know becomes a core CM event.  The
 * QP's state is set before its event is posted, so that an application
 * that sees ESTABLISHED or DISCONNECTED also sees RTS or ERR.
 */
#include <endian.h>
#include <string.h>
#include <utlist.h>

#include "transports/verbs/verbs.h"

/*
 * iWARP: the peer's QPN from the header connect and accept put in front
 * (verbs_cm.c); a peer without it leaves its private data whole and the
 * QPN 0, all that MPA tells.
 */
static void iwarp_hdr_strip(uint32_t *qpn, const void **pdata, uint8_t *len)
{
	uint32_t magic, num;

	if (!*pdata || *len < VERBS_IWARP_HDR_LEN)
		return;
	memcpy(&magic, *pdata, sizeof(magic));
	if (be32toh(magic) != VERBS_IWARP_HDR_MAGIC)
		return;
	memcpy(&num, (const uint8_t *)*pdata + sizeof(magic), sizeof(num));
	*qpn = be32toh(num);
	*pdata = (const uint8_t *)*pdata + VERBS_IWARP_HDR_LEN;
	*len -= VERBS_IWARP_HDR_LEN;
}

/* The core's event from librdmacm's, private data and peer QPN included. */
static void event_fill(struct openrdma_cm_event *out,
		       enum openrdma_cm_event_type type, int status,
		       const struct verbs_cm_id *vid,
		       const struct rdma_cm_event *ev)
{
	const void *pdata = NULL;
	uint8_t len = 0;

	memset(out, 0, sizeof(*out));
	out->event = type;
	out->status = status;
	if (ev && vid->base.ps == OPENRDMA_PS_UDP) {
		pdata = ev->param.ud.private_data;
		len = ev->param.ud.private_data_len;
		out->param.qp_num = ev->param.ud.qp_num;
	} else if (ev) {
		pdata = ev->param.conn.private_data;
		len = ev->param.conn.private_data_len;
		out->param.responder_resources =
			ev->param.conn.responder_resources;
		out->param.initiator_depth = ev->param.conn.initiator_depth;
		out->param.qp_num = ev->param.conn.qp_num;
		if (vid->vctx->iwarp && type != OPENRDMA_CM_EVENT_REJECTED)
			iwarp_hdr_strip(&out->param.qp_num, &pdata, &len);
	}
	if (pdata && len) {
		memcpy(out->param.private_data, pdata, len);
		out->param.private_data_len = len;
	}
	if (!vid->cmid)
		return;
	memcpy(&out->src_addr, rdma_get_peer_addr(vid->cmid),
	       verbs_sockaddr_len(rdma_get_peer_addr(vid->cmid)));
	memcpy(&out->dst_addr, rdma_get_local_addr(vid->cmid),
	       verbs_sockaddr_len(rdma_get_local_addr(vid->cmid)));
}

static void post(struct verbs_cm_id *vid, const struct openrdma_cm_event *out)
{
	/* -ENOSPC: the id is being destroyed, nobody would take the event */
	if (openrdma_cm_event_post(&vid->base, out))
		openrdma_dbg("verbs", "%s dropped",
			     openrdma_cm_event_str(out->event));
}

/* librdmacm's statuses are negative errnos, IB CM reasons or 0. */
static int status_code(int status)
{
	if (status < 0)
		return status;
	return status ? -OPENRDMA_ECONNABORTED : -OPENRDMA_EIO;
}

/* With cm_lock held: an attempt failed; QP to ERR, the id is done. */
static void attempt_fail(struct verbs_cm_id *vid)
{
	verbs_cm_qp_error(vid);
	vid->state = VERBS_CM_FAILED;
}

/* rdma_connect() failed: nobody listens, or the connection broke. */
static enum openrdma_cm_event_type connect_fail_type(int ret)
{
	switch (ret) {
	case -ECONNREFUSED:
		return OPENRDMA_CM_EVENT_REJECTED;
	case -ETIMEDOUT:
	case -EHOSTUNREACH:
	case -ENETUNREACH:
		return OPENRDMA_CM_EVENT_UNREACHABLE;
	default:
		return OPENRDMA_CM_EVENT_CONNECT_ERROR;
	}
}

static void addr_resolved(struct verbs_cm_id *vid)
{
	struct verbs_ctx *vctx = vid->vctx;
	struct openrdma_cm_event out;
	const char *dev;
	int ret = 0;

	pthread_mutex_lock(&vctx->cm_lock);
	if (vid->state != VERBS_CM_RESOLVING)
		goto out;
	dev = ibv_get_device_name(vid->cmid->verbs->device);
	if (strcmp(dev, ibv_get_device_name(vctx->ibctx->device)) ||
	    vid->cmid->port_num != vctx->port) {
		openrdma_dbg("verbs", "destination is behind %s port %u", dev,
			     vid->cmid->port_num);
		ret = -OPENRDMA_ENETUNREACH;
	} else if (rdma_resolve_route(vid->cmid, vctx->resolve_ms)) {
		ret = verbs_errno();
	}
	if (ret)
		attempt_fail(vid);
out:
	pthread_mutex_unlock(&vctx->cm_lock);
	if (ret) {
		event_fill(&out, OPENRDMA_CM_EVENT_UNREACHABLE, ret, vid, NULL);
		post(vid, &out);
	}
}

static void route_resolved(struct verbs_cm_id *vid)
{
	struct verbs_ctx *vctx = vid->vctx;
	struct openrdma_cm_event out;
	int ret = 0;

	pthread_mutex_lock(&vctx->cm_lock);
	if (vid->state != VERBS_CM_RESOLVING)
		goto out;
	ret = verbs_cm_qp_prepare(vid);
	if (!ret && rdma_connect(vid->cmid, &vid->conn))
		ret = verbs_errno();
	if (ret)
		attempt_fail(vid);
	else
		vid->state = VERBS_CM_CONNECTING;
out:
	pthread_mutex_unlock(&vctx->cm_lock);
	if (ret) {
		event_fill(&out, connect_fail_type(ret), ret, vid, NULL);
		post(vid, &out);
	}
}

/* A listener's request: adopt librdmacm's id, or refuse it. */
static void request(struct verbs_ctx *vctx, struct rdma_cm_event *ev)
{
	struct verbs_cm_id *l = ev->listen_id->context, *r;
	struct openrdma_cm_event out;
	struct openrdma_cm_id *id;
	bool room;

	pthread_mutex_lock(&vctx->cm_lock);
	room = l->state == VERBS_CM_LISTEN && l->num_pending < l->backlog;
	pthread_mutex_unlock(&vctx->cm_lock);
	/* a wildcard listener hears every device: take our port's only */
	if (!room || !ev->id->verbs ||
	    strcmp(ibv_get_device_name(ev->id->verbs->device),
		   ibv_get_device_name(vctx->ibctx->device)) ||
	    ev->id->port_num != vctx->port)
		goto refuse;
	if (openrdma_cm_id_new_request(&l->base, &id))
		goto refuse;

	r = to_verbs_cm_id(id);
	r->cmid = ev->id;
	ev->id->context = r;
	pthread_mutex_lock(&vctx->cm_lock);
	r->state = VERBS_CM_REQUEST;
	if (l->state == VERBS_CM_LISTEN) {
		r->listener = l;
		l->num_pending++;
		DL_APPEND2(l->requests, r, req_prev, req_next);
	}
	pthread_mutex_unlock(&vctx->cm_lock);

	event_fill(&out, OPENRDMA_CM_EVENT_CONNECT_REQUEST, 0, r, ev);
	out.listen_id = &l->base;
	/* the listener is going: the core never gave the new id out */
	if (openrdma_cm_event_post(&r->base, &out))
		openrdma_cm_id_destroy(id);
	return;

refuse:
	openrdma_dbg("verbs", "connection request refused");
	rdma_reject(ev->id, NULL, 0);
	rdma_destroy_id(ev->id);
}

/* IB: the passive side accepted (REP). */
static void response(struct verbs_cm_id *vid, struct rdma_cm_event *ev)
{
	struct verbs_ctx *vctx = vid->vctx;
	struct openrdma_cm_event out;
	int ret;

	pthread_mutex_lock(&vctx->cm_lock);
	if (vid->state != VERBS_CM_CONNECTING) {
		pthread_mutex_unlock(&vctx->cm_lock);
		return;
	}
	if (vid->three_way) {
		/* the application answers with accept or reject */
		vid->state = VERBS_CM_RESPONSE;
		pthread_mutex_unlock(&vctx->cm_lock);
		event_fill(&out, OPENRDMA_CM_EVENT_CONNECT_RESPONSE, 0, vid,
			   ev);
		post(vid, &out);
		return;
	}
	ret = verbs_cm_qp_move(vid, IBV_QPS_RTR);
	if (!ret)
		ret = verbs_cm_qp_move(vid, IBV_QPS_RTS);
	if (!ret && rdma_establish(vid->cmid))
		ret = verbs_errno();
	if (ret) {
		rdma_reject(vid->cmid, NULL, 0);
		attempt_fail(vid);
	} else {
		vid->state = VERBS_CM_CONNECTED;
	}
	pthread_mutex_unlock(&vctx->cm_lock);
	event_fill(&out,
		   ret ? OPENRDMA_CM_EVENT_CONNECT_ERROR :
			 OPENRDMA_CM_EVENT_ESTABLISHED,
		   ret, vid, ev);
	post(vid, &out);
}

/* IB passive (RTU), iWARP either side (MPA done), UD active (SIDR). */
static void established(struct verbs_cm_id *vid, struct rdma_cm_event *ev)
{
	struct verbs_ctx *vctx = vid->vctx;
	struct openrdma_cm_event out;
	bool report;

	pthread_mutex_lock(&vctx->cm_lock);
	report = vid->state == VERBS_CM_ACCEPTING ||
		 vid->state == VERBS_CM_CONNECTING;
	if (report) {
		/* iWARP: the kernel moved the QP to RTS */
		if (verbs_cm_qp(vid))
			openrdma_qp_state_set(vid->base.qp, OPENRDMA_QPS_RTS);
		vid->state = VERBS_CM_CONNECTED;
	}
	pthread_mutex_unlock(&vctx->cm_lock);
	if (!report)
		return;
	event_fill(&out, OPENRDMA_CM_EVENT_ESTABLISHED, 0, vid, ev);
	post(vid, &out);
}

static void failed(struct verbs_cm_id *vid, struct rdma_cm_event *ev,
		   enum openrdma_cm_event_type type, int status)
{
	struct verbs_ctx *vctx = vid->vctx;
	struct openrdma_cm_event out;

	pthread_mutex_lock(&vctx->cm_lock);
	attempt_fail(vid);
	verbs_cm_request_done(vid);
	pthread_mutex_unlock(&vctx->cm_lock);
	event_fill(&out, type, status, vid, ev);
	post(vid, &out);
}

static void disconnected(struct verbs_cm_id *vid)
{
	struct verbs_ctx *vctx = vid->vctx;
	struct openrdma_cm_event out;

	pthread_mutex_lock(&vctx->cm_lock);
	/* flushes what is left, on iWARP after its graceful close too */
	verbs_cm_qp_error(vid);
	/*
	 * The peer hung up: answer at once (IB: the DREP), so that its
	 * DISCONNECTED does not wait for the DREQ to time out.
	 */
	if (vid->state != VERBS_CM_DISCONNECTED && rdma_disconnect(vid->cmid))
		openrdma_dbg("verbs", "rdma_disconnect: %s", strerror(errno));
	vid->state = VERBS_CM_DISCONNECTED;
	pthread_mutex_unlock(&vctx->cm_lock);
	event_fill(&out, OPENRDMA_CM_EVENT_DISCONNECTED, 0, vid, NULL);
	post(vid, &out);
}

static void simple(struct verbs_cm_id *vid, enum openrdma_cm_event_type type)
{
	struct openrdma_cm_event out;

	event_fill(&out, type, 0, vid, NULL);
	post(vid, &out);
}

void verbs_cm_event(struct verbs_ctx *vctx, struct rdma_cm_event *ev)
{
	struct verbs_cm_id *vid = ev->id->context;

	openrdma_dbg("verbs", "%s: %s, status %d",
		     ibv_get_device_name(vctx->ibctx->device),
		     rdma_event_str(ev->event), ev->status);
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		addr_resolved(vid);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		route_resolved(vid);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		failed(vid, NULL, OPENRDMA_CM_EVENT_UNREACHABLE,
		       status_code(ev->status));
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
		failed(vid, NULL, OPENRDMA_CM_EVENT_CONNECT_ERROR,
		       status_code(ev->status));
		break;
	case RDMA_CM_EVENT_REJECTED:
		failed(vid, ev, OPENRDMA_CM_EVENT_REJECTED,
		       verbs_reject_status(ev->status, vctx->iwarp));
		break;
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		request(vctx, ev);
		break;
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		response(vid, ev);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		established(vid, ev);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		disconnected(vid);
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		simple(vid, OPENRDMA_CM_EVENT_TIMEWAIT_EXIT);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		simple(vid, OPENRDMA_CM_EVENT_DEVICE_REMOVAL);
		break;
	default:
		/* ADDR_CHANGE and multicast: not reported (openrdma_cm(3)) */
		break;
	}
	rdma_ack_cm_event(ev);
}
