/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The connection manager over librdmacm: the application's calls.
 *
 * The core creates QPs before it connects them, so the QP is never
 * librdmacm's (rdma_create_qp): the id carries only its number
 * (rdma_conn_param.qp_num) and the transport moves the QP itself with the
 * attributes rdma_init_qp_attr() returns, at the points where librdmacm
 * would: INIT before connect, RTR and RTS on the reply (IB) or before the
 * accept, ERR (IB) or SQD (iWARP) before a disconnect.  The kernel finds
 * an iWARP QP by number on the device, so a QP of our own ibv_context
 * works on iWARP as well as on IB and RoCE.  The events that drive the
 * rest arrive on the progress thread (verbs_cm_event.c).
 *
 * An rdma_cm_id exists from the first listen or connect; a request's id
 * is librdmacm's, adopted when the request arrives.
 */
#include <endian.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <utlist.h>

#include "transports/verbs/verbs.h"

#define DEFAULT_BACKLOG 128

int verbs_cm_id_create(struct openrdma_context *ctx,
		       enum openrdma_port_space ps,
		       struct openrdma_cm_id **id_out)
{
	struct verbs_cm_id *vid;

	vid = calloc(1, sizeof(*vid));
	if (!vid)
		return -OPENRDMA_ENOMEM;
	vid->vctx = to_verbs_ctx(ctx);
	vid->state = VERBS_CM_IDLE;
	vid->base.port_num = 1;
	*id_out = &vid->base;
	return 0;
}

void verbs_cm_request_done(struct verbs_cm_id *vid)
{
	struct verbs_cm_id *l = vid->listener;

	if (!l)
		return;
	DL_DELETE2(l->requests, vid, req_prev, req_next);
	l->num_pending--;
	vid->listener = NULL;
}

static void *destroyer_main(void *arg)
{
	struct verbs_cm_id *vid = arg;

	if (rdma_destroy_id(vid->cmid))
		openrdma_warn("verbs", "rdma_destroy_id: %s", strerror(errno));
	free(vid);
	return NULL;
}

/*
 * siw's rdma_destroy_id() of an id whose MPA request is unanswered waits
 * for the request to time out (10 s): a withdrawn request is destroyed
 * on a thread of its own, which the context's close joins (the progress
 * thread acknowledges the id's events meanwhile).  cm_lock held; false
 * when no thread could start, and the caller destroys it itself.
 */
static bool destroy_behind(struct verbs_ctx *vctx, struct verbs_cm_id *vid)
{
	pthread_t *tids, tid;
	unsigned int i, n = 0;
	sigset_t all, old;
	int ret;

	/* the ones done by now are joined on the way */
	for (i = 0; i < vctx->num_destroyers; i++)
		if (pthread_tryjoin_np(vctx->destroyers[i], NULL))
			vctx->destroyers[n++] = vctx->destroyers[i];
	vctx->num_destroyers = n;
	tids = realloc(vctx->destroyers, (n + 1) * sizeof(*tids));
	if (!tids)
		return false;
	vctx->destroyers = tids;
	/* application signals are not for our threads */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&tid, NULL, destroyer_main, vid);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		return false;
	tids[vctx->num_destroyers++] = tid;
	return true;
}

void verbs_cm_destroyers_join(struct verbs_ctx *vctx)
{
	unsigned int i;

	for (i = 0; i < vctx->num_destroyers; i++)
		pthread_join(vctx->destroyers[i], NULL);
	free(vctx->destroyers);
	vctx->destroyers = NULL;
	vctx->num_destroyers = 0;
}

int verbs_cm_id_destroy(struct openrdma_cm_id *id)
{
	struct verbs_cm_id *vid = to_verbs_cm_id(id), *r;
	struct verbs_ctx *vctx = vid->vctx;
	struct verbs_qp *vqp;
	bool behind;

	pthread_mutex_lock(&vctx->cm_lock);
	behind = vctx->iwarp && vid->cmid && vid->state == VERBS_CM_CONNECTING;
	/* a request arriving meanwhile finds no listener to count on */
	vid->state = VERBS_CM_DESTROYING;
	verbs_cm_request_done(vid);
	/* a listener's requests outlive it: they stop counting */
	while ((r = vid->requests)) {
		DL_DELETE2(vid->requests, r, req_prev, req_next);
		r->listener = NULL;
	}
	/*
	 * The core drops the id's reference on its QP once this returns,
	 * and the QP may go: events still handled for this id (an iWARP
	 * attempt is destroyed behind) find none.
	 */
	vqp = verbs_cm_qp(vid);
	if (vqp && vqp->cmid == vid->cmid)
		vqp->cmid = NULL;
	vid->base.qp = NULL;
	behind = behind && destroy_behind(vctx, vid);
	pthread_mutex_unlock(&vctx->cm_lock);
	if (behind)
		return 0;

	/* Unlocked: waits for the progress thread to ack the id's events. */
	if (vid->cmid && rdma_destroy_id(vid->cmid))
		openrdma_warn("verbs", "rdma_destroy_id: %s", strerror(errno));
	free(vid);
	return 0;
}

static int cmid_ensure(struct verbs_cm_id *vid)
{
	if (vid->cmid)
		return 0;
	if (rdma_create_id(vid->vctx->cm_ch, &vid->cmid, vid,
			   (enum rdma_port_space)vid->base.ps))
		return verbs_errno();
	return 0;
}

static bool cmid_on_port(const struct verbs_ctx *vctx,
			 const struct rdma_cm_id *cmid)
{
	return !cmid->verbs ||
	       (!strcmp(ibv_get_device_name(cmid->verbs->device),
			ibv_get_device_name(vctx->ibctx->device)) &&
		cmid->port_num == vctx->port);
}

static bool addr_is_any(const struct sockaddr *sa)
{
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)sa;
	const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;

	if (sa->sa_family == AF_INET)
		return sin->sin_addr.s_addr == htonl(INADDR_ANY);
	return IN6_IS_ADDR_UNSPECIFIED(&sin6->sin6_addr);
}

static void addr_port_set(struct sockaddr_storage *ss, in_port_t port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = port;
	else
		((struct sockaddr_in6 *)ss)->sin6_port = port;
}

static in_port_t addr_port(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET ?
		       ((const struct sockaddr_in *)sa)->sin_port :
		       ((const struct sockaddr_in6 *)sa)->sin6_port;
}

int verbs_cm_listen(struct openrdma_cm_id *id, const struct sockaddr *addr,
		    int backlog)
{
	struct verbs_cm_id *vid = to_verbs_cm_id(id);
	struct verbs_ctx *vctx = vid->vctx;
	struct sockaddr_storage ss;
	int ret;

	memcpy(&ss, addr, verbs_sockaddr_len(addr));
	/*
	 * A wildcard listens on the interface's address: rdma_cm would
	 * otherwise hand us the requests of every device.
	 */
	if (addr_is_any(addr) && vctx->addr.ss_family == addr->sa_family) {
		memcpy(&ss, &vctx->addr, sizeof(ss));
		addr_port_set(&ss, addr_port(addr));
	}

	pthread_mutex_lock(&vctx->cm_lock);
	if (vid->state != VERBS_CM_IDLE) {
		ret = -OPENRDMA_EINVAL;
		goto out;
	}
	ret = cmid_ensure(vid);
	if (ret)
		goto out;
	if (rdma_bind_addr(vid->cmid, (struct sockaddr *)&ss)) {
		ret = verbs_errno();
		goto out;
	}
	if (!cmid_on_port(vctx, vid->cmid)) {
		ret = -OPENRDMA_EADDRNOTAVAIL;
		goto out;
	}
	vid->backlog = backlog ? backlog : DEFAULT_BACKLOG;
	if (rdma_listen(vid->cmid, vid->backlog)) {
		ret = verbs_errno();
		goto out;
	}
	vid->state = VERBS_CM_LISTEN;
out:
	pthread_mutex_unlock(&vctx->cm_lock);
	return ret;
}

/* What librdmacm sends with connect or accept. */
static void conn_param_set(struct verbs_cm_id *vid, struct verbs_qp *vqp,
			   const struct openrdma_conn_param *param)
{
	struct rdma_conn_param *c = &vid->conn;
	uint8_t off = 0;
	uint32_t hdr;

	memset(c, 0, sizeof(*c));
	c->qp_num = vqp->base.qp_num;
	c->srq = vqp->base.srq != NULL;
	c->responder_resources = RDMA_MAX_RESP_RES;
	c->initiator_depth = RDMA_MAX_INIT_DEPTH;
	c->retry_count = 7;
	c->rnr_retry_count = 7;
	vid->three_way = false;
	if (vid->vctx->iwarp) {
		hdr = htobe32(VERBS_IWARP_HDR_MAGIC);
		memcpy(vid->pdata, &hdr, sizeof(hdr));
		hdr = htobe32(vqp->base.qp_num);
		memcpy(vid->pdata + sizeof(hdr), &hdr, sizeof(hdr));
		off = VERBS_IWARP_HDR_LEN;
	}
	c->private_data = off ? vid->pdata : NULL;
	c->private_data_len = off;
	if (!param)
		return;
	if (param->private_data_len) {
		memcpy(vid->pdata + off, param->private_data,
		       param->private_data_len);
		c->private_data = vid->pdata;
		c->private_data_len = off + param->private_data_len;
	}
	c->responder_resources = param->responder_resources;
	c->initiator_depth = param->initiator_depth;
	c->retry_count = param->retry_count;
	c->rnr_retry_count = param->rnr_retry_count;
	vid->three_way = param->three_way;
}

int verbs_cm_connect(struct openrdma_cm_id *id, struct openrdma_qp *qp,
		     const struct sockaddr *dst,
		     const struct openrdma_conn_param *param)
{
	struct verbs_cm_id *vid = to_verbs_cm_id(id);
	struct verbs_qp *vqp = to_verbs_qp(qp);
	struct verbs_ctx *vctx = vid->vctx;
	struct sockaddr_storage src, to;
	struct sockaddr *srcp = NULL;
	int ret;

	memcpy(&to, dst, verbs_sockaddr_len(dst));
	/* From the interface's address, so that rdma_cm picks its device. */
	if (vctx->addr.ss_family == dst->sa_family) {
		memcpy(&src, &vctx->addr, sizeof(src));
		addr_port_set(&src, 0);
		srcp = (struct sockaddr *)&src;
	}

	pthread_mutex_lock(&vctx->cm_lock);
	if (vid->state != VERBS_CM_IDLE) {
		ret = vid->state == VERBS_CM_LISTEN ? -OPENRDMA_EINVAL :
						      -OPENRDMA_EISCONN;
		goto out;
	}
	ret = cmid_ensure(vid);
	if (ret)
		goto out;
	conn_param_set(vid, vqp, param);
	if (rdma_resolve_addr(vid->cmid, srcp, (struct sockaddr *)&to,
			      vctx->resolve_ms)) {
		ret = verbs_errno();
		goto out;
	}
	vqp->cmid = vid->cmid;
	vid->state = VERBS_CM_RESOLVING;
out:
	pthread_mutex_unlock(&vctx->cm_lock);
	return ret;
}

/*
 * As librdmacm before RTR: INIT again, now that the IB CM knows the
 * connection.  The active side's first INIT came before it, with no
 * remote access at all (the kernel's cma_ib_init_qp_attr), so RDMA from
 * the passive side would be refused.
 */
static int qp_reinit(struct verbs_cm_id *vid)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT };
	int mask;

	if (vid->vctx->iwarp)
		return 0;
	if (rdma_init_qp_attr(vid->cmid, &attr, &mask))
		return verbs_errno();
	return verbs_ret(
		ibv_modify_qp(to_verbs_qp(vid->base.qp)->ibqp, &attr, mask));
}

int verbs_cm_qp_move(struct verbs_cm_id *vid, enum ibv_qp_state state)
{
	struct verbs_qp *vqp = verbs_cm_qp(vid);
	struct ibv_qp_attr attr;
	int mask, ret;

	/* destroyed while the attempt went on */
	if (!vqp)
		return -OPENRDMA_ENODEV;
	if (state == IBV_QPS_RTR) {
		ret = qp_reinit(vid);
		if (ret)
			return ret;
	}
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = state;
	if (rdma_init_qp_attr(vid->cmid, &attr, &mask))
		return verbs_errno();
	/* As librdmacm: the application's own IRD and ORD, if it gave them */
	if (state == IBV_QPS_RTR &&
	    vid->conn.responder_resources != RDMA_MAX_RESP_RES)
		attr.max_dest_rd_atomic = vid->conn.responder_resources;
	if (state == IBV_QPS_RTS &&
	    vid->conn.initiator_depth != RDMA_MAX_INIT_DEPTH)
		attr.max_rd_atomic = vid->conn.initiator_depth;
	/* iWARP: the kernel moves the QP to RTS itself (empty mask) */
	if (!mask)
		return 0;
	return verbs_qp_move(vqp, &attr, mask);
}

int verbs_cm_qp_prepare(struct verbs_cm_id *vid)
{
	struct verbs_qp *vqp = to_verbs_qp(vid->base.qp);
	struct ibv_qp_attr attr;
	int ret;

	ret = verbs_cm_qp_move(vid, IBV_QPS_INIT);
	if (ret || vqp->base.qp_type != OPENRDMA_QPT_UD)
		return ret;
	/* UD: the Q_Key and port came with INIT; RTR and RTS need nothing */
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTR;
	ret = verbs_qp_move(vqp, &attr, IBV_QP_STATE);
	if (ret)
		return ret;
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0;
	return verbs_qp_move(vqp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

struct verbs_qp *verbs_cm_qp(struct verbs_cm_id *vid)
{
	return vid->base.qp ? to_verbs_qp(vid->base.qp) : NULL;
}

void verbs_cm_qp_error(struct verbs_cm_id *vid)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct verbs_qp *vqp = verbs_cm_qp(vid);
	int ret;

	if (!vqp)
		return;
	ret = verbs_qp_move(vqp, &attr, IBV_QP_STATE);
	if (ret)
		openrdma_warn("verbs", "QP %u to ERR: %s", vid->base.qp->qp_num,
			      openrdma_strerror(ret));
}

/* The active side completes a three-way handshake (qp NULL). */
static int establish(struct verbs_cm_id *vid)
{
	int ret;

	if (vid->state != VERBS_CM_RESPONSE)
		return -OPENRDMA_EINVAL;
	ret = verbs_cm_qp_move(vid, IBV_QPS_RTR);
	if (!ret)
		ret = verbs_cm_qp_move(vid, IBV_QPS_RTS);
	if (!ret && rdma_establish(vid->cmid))
		ret = verbs_errno();
	if (ret) {
		rdma_reject(vid->cmid, NULL, 0);
		verbs_cm_qp_error(vid);
		vid->state = VERBS_CM_FAILED;
		return ret;
	}
	vid->state = VERBS_CM_CONNECTED;
	return 0;
}

/*
 * Whether the kernel's id has left the request state: its peer gave the
 * request up (the IB CM) and no QP attributes come from it any more.
 */
static bool request_gone(struct verbs_cm_id *vid)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RTR };
	int mask;

	return rdma_init_qp_attr(vid->cmid, &attr, &mask) && errno == EINVAL;
}

int verbs_cm_accept(struct openrdma_cm_id *id, struct openrdma_qp *qp,
		    const struct openrdma_conn_param *param)
{
	struct verbs_cm_id *vid = to_verbs_cm_id(id);
	struct verbs_ctx *vctx = vid->vctx;
	struct verbs_qp *vqp;
	int ret;

	pthread_mutex_lock(&vctx->cm_lock);
	if (!qp) {
		ret = establish(vid);
		goto out;
	}
	if (vid->state != VERBS_CM_REQUEST) {
		ret = -OPENRDMA_EINVAL;
		goto out;
	}
	/* before the QP is touched: an unfit QP is not a gone request */
	if (request_gone(vid)) {
		ret = -OPENRDMA_ECONNABORTED;
		goto out;
	}
	vqp = to_verbs_qp(qp);
	conn_param_set(vid, vqp, param);
	/* As librdmacm: the QP is ready to receive before the reply goes. */
	ret = verbs_cm_qp_prepare(vid);
	if (!ret && qp->qp_type == OPENRDMA_QPT_RC) {
		ret = verbs_cm_qp_move(vid, IBV_QPS_RTR);
		if (!ret)
			ret = verbs_cm_qp_move(vid, IBV_QPS_RTS);
	}
	if (!ret && rdma_accept(vid->cmid, &vid->conn)) {
		ret = verbs_errno();
		/* iWARP: the peer's TCP connection went before the reply */
		if (ret == -OPENRDMA_ECONNRESET)
			ret = -OPENRDMA_ECONNABORTED;
	}
	if (ret) {
		/* the request stays open: the application may reject it */
		verbs_cm_qp_error(vid);
		goto out;
	}
	vqp->cmid = vid->cmid;
	verbs_cm_request_done(vid);
	/* A UD reply completes the exchange: no ESTABLISHED follows. */
	vid->state = qp->qp_type == OPENRDMA_QPT_UD ? VERBS_CM_CONNECTED :
						      VERBS_CM_ACCEPTING;
out:
	pthread_mutex_unlock(&vctx->cm_lock);
	return ret;
}

int verbs_cm_reject(struct openrdma_cm_id *id, const void *private_data,
		    uint8_t private_data_len)
{
	struct verbs_cm_id *vid = to_verbs_cm_id(id);
	struct verbs_ctx *vctx = vid->vctx;
	int ret = 0;

	pthread_mutex_lock(&vctx->cm_lock);
	if (vid->state != VERBS_CM_REQUEST && vid->state != VERBS_CM_RESPONSE) {
		ret = -OPENRDMA_EINVAL;
		goto out;
	}
	if (rdma_reject(vid->cmid, private_data, private_data_len)) {
		ret = verbs_errno();
		/* a request its peer withdrew: IB's id refuses (EINVAL),
		 * iWARP's connection is reset */
		if (vid->state == VERBS_CM_REQUEST &&
		    (ret == -OPENRDMA_ECONNRESET ||
		     (ret == -OPENRDMA_EINVAL && request_gone(vid)))) {
			ret = -OPENRDMA_ECONNABORTED;
			verbs_cm_request_done(vid);
			vid->state = VERBS_CM_FAILED;
		}
		goto out;
	}
	/* the active side refusing the reply: its attempt failed */
	if (vid->state == VERBS_CM_RESPONSE)
		verbs_cm_qp_error(vid);
	verbs_cm_request_done(vid);
	vid->state = VERBS_CM_FAILED;
out:
	pthread_mutex_unlock(&vctx->cm_lock);
	return ret;
}

/*
 * As librdmacm: IB flushes at once; iWARP closes gracefully (SQD) and the
 * QP enters ERR when DISCONNECTED comes (verbs_cm_event.c).
 */
static int qp_shutdown(struct verbs_cm_id *vid)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_SQD };
	struct verbs_qp *vqp = verbs_cm_qp(vid);

	if (!vqp)
		return 0;
	if (!vid->vctx->iwarp) {
		verbs_cm_qp_error(vid);
		return 0;
	}
	return verbs_ret(ibv_modify_qp(vqp->ibqp, &attr, IBV_QP_STATE));
}

int verbs_cm_disconnect(struct openrdma_cm_id *id, const void *private_data,
			uint8_t private_data_len)
{
	struct verbs_cm_id *vid = to_verbs_cm_id(id);
	struct verbs_ctx *vctx = vid->vctx;
	int ret = 0;

	pthread_mutex_lock(&vctx->cm_lock);
	/* the peer's disconnect was answered already (verbs_cm_event.c) */
	if (vid->state == VERBS_CM_DISCONNECTED)
		goto out;
	if (vid->state != VERBS_CM_CONNECTED &&
	    vid->state != VERBS_CM_ACCEPTING) {
		ret = -OPENRDMA_ENOTCONN;
		goto out;
	}
	if (id->qp && id->qp->qp_type == OPENRDMA_QPT_RC) {
		ret = qp_shutdown(vid);
		if (ret)
			goto out;
	}
	if (rdma_disconnect(vid->cmid)) {
		ret = verbs_errno();
		goto out;
	}
	if (id->qp)
		verbs_qp_state_set(to_verbs_qp(id->qp), OPENRDMA_QPS_ERR);
	vid->state = VERBS_CM_DISCONNECTED;
out:
	pthread_mutex_unlock(&vctx->cm_lock);
	return ret;
}

static int addr_copy(const struct sockaddr *sa, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (sa)
		memcpy(ss, sa, verbs_sockaddr_len(sa));
	return 0;
}

int verbs_cm_local_addr(struct openrdma_cm_id *id,
			struct sockaddr_storage *addr)
{
	struct verbs_cm_id *vid = to_verbs_cm_id(id);

	return addr_copy(vid->cmid ? rdma_get_local_addr(vid->cmid) : NULL,
			 addr);
}

int verbs_cm_peer_addr(struct openrdma_cm_id *id, struct sockaddr_storage *addr)
{
	struct verbs_cm_id *vid = to_verbs_cm_id(id);

	return addr_copy(vid->cmid ? rdma_get_peer_addr(vid->cmid) : NULL,
			 addr);
}
