/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The connection manager: CM channels, ids and events (the librdmacm
 * model).
 *
 * A channel is an eventfd whose counter is the number of queued events,
 * plus the queue.  Every event holds a reference on its id (and on the
 * listener for a connect request) from openrdma_cm_event_post() until
 * openrdma_cm_event_ack(); openrdma_cm_id_destroy() discards the id's
 * events not yet taken and waits for the taken ones to be acknowledged.
 */
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
#include <utlist.h>

#include <openrdma/transport.h>

#include "core/core.h"
#include "core/export.h"

struct core_cm_event {
	struct openrdma_cm_event ev; /* the application's until acked */
	/* What the event holds, apart from ev, which the application owns */
	struct openrdma_cm_id *id;
	struct openrdma_cm_id *listen_id;
	struct core_cm_event *prev, *next;
};

struct core_cm_channel {
	struct openrdma_cm_channel base;
	/* A mutex for the condition: transports post from any thread. */
	pthread_mutex_t lock;
	pthread_cond_t acked; /* an event was acknowledged */
	struct core_cm_event *queue;
};

static struct core_cm_channel *to_cm_channel(struct openrdma_cm_channel *ch)
{
	return openrdma_container_of(ch, struct core_cm_channel, base);
}

int core_sockaddr_check(const struct sockaddr *sa, const char *fn,
			const char *arg)
{
	if (!sa) {
		openrdma_dbg("core", "%s: arg %s: NULL", fn, arg);
		return -OPENRDMA_EINVAL;
	}
	if (sa->sa_family != AF_INET && sa->sa_family != AF_INET6) {
		openrdma_dbg("core", "%s: arg %s: address family %u", fn, arg,
			     sa->sa_family);
		return -OPENRDMA_EINVAL;
	}
	return 0;
}

static int cm_pdata_check(const void *data, uint8_t len, uint16_t max,
			  const char *fn)
{
	if (len && !data) {
		openrdma_dbg("core", "%s: arg private_data: NULL, length %u",
			     fn, len);
		return -OPENRDMA_EINVAL;
	}
	if (len > max) {
		openrdma_dbg("core", "%s: arg private_data: length %u > %u", fn,
			     len, max);
		return -OPENRDMA_EINVAL;
	}
	return 0;
}

/* param may be NULL (no private data, the transport's defaults). */
static int cm_param_check(const struct openrdma_conn_param *param,
			  const struct openrdma_device_attr *dev,
			  uint16_t max_pdata, const char *fn)
{
	int ret;

	if (!param)
		return 0;
	ret = cm_pdata_check(param->private_data, param->private_data_len,
			     max_pdata, fn);
	if (ret)
		return ret;
	if (param->retry_count > 7 || param->rnr_retry_count > 7 ||
	    param->initiator_depth > dev->max_qp_init_rd_atom ||
	    param->responder_resources > dev->max_qp_rd_atom ||
	    param->three_way > 1) {
		openrdma_dbg(
			"core",
			"%s: arg param: retry_count %u rnr_retry_count %u initiator_depth %u responder_resources %u three_way %u",
			fn, param->retry_count, param->rnr_retry_count,
			param->initiator_depth, param->responder_resources,
			param->three_way);
		return -OPENRDMA_EINVAL;
	}
	if (param->three_way &&
	    !(dev->device_cap_flags & OPENRDMA_DEVICE_THREE_WAY)) {
		openrdma_dbg("core", "%s: arg param: three_way unsupported",
			     fn);
		return -OPENRDMA_EOPNOTSUPP;
	}
	return 0;
}

/* A QP given to connect or accept: same context, type of the port space. */
static int cm_qp_check(const struct openrdma_cm_id *id,
		       const struct openrdma_qp *qp, const char *fn)
{
	enum openrdma_qp_type want;
	int state, ret;

	ret = core_check(qp, OPENRDMA_OBJ_QP, fn, "qp");
	if (ret)
		return ret;
	ret = core_same_ctx(&qp->obj, &id->obj, fn, "qp");
	if (ret)
		return ret;
	want = id->ps == OPENRDMA_PS_UDP ? OPENRDMA_QPT_UD : OPENRDMA_QPT_RC;
	if (qp->qp_type != want) {
		openrdma_dbg("core", "%s: arg qp: type %d for port space 0x%x",
			     fn, (int)qp->qp_type, (unsigned int)id->ps);
		return -OPENRDMA_EINVAL;
	}
	/* A QP already given to this id has moved on; a new one must not. */
	state = atomic_load(&qp->state);
	if (qp != id->qp && state != OPENRDMA_QPS_RESET &&
	    state != OPENRDMA_QPS_INIT) {
		openrdma_dbg("core", "%s: arg qp: in state %s", fn,
			     openrdma_qp_state_str(state));
		return -OPENRDMA_EINVAL;
	}
	return 0;
}

/*
 * The id holds its QP from connect or accept until it is destroyed, so that
 * the transport can reach the QP for the whole connection.  Attached before
 * the transport's call, settled after it.
 */
static struct openrdma_qp *cm_qp_attach(struct openrdma_cm_id *id,
					struct openrdma_qp *qp)
{
	struct openrdma_qp *old = id->qp;

	if (qp && qp != old) {
		core_obj_get(&qp->obj);
		id->qp = qp;
	}
	return old;
}

static void cm_qp_settle(struct openrdma_cm_id *id, struct openrdma_qp *qp,
			 struct openrdma_qp *old, int ret)
{
	struct openrdma_qp *drop;

	if (!qp || qp == old)
		return;
	if (ret)
		id->qp = old;
	drop = ret ? qp : old;
	if (drop)
		core_obj_put(&drop->obj);
}

OPENRDMA_EXPORT int
openrdma_cm_channel_create(struct openrdma_context *ctx,
			   struct openrdma_cm_channel **ch_out)
{
	struct core_cm_channel *ch;
	int ret;

	ret = core_check(ctx, OPENRDMA_OBJ_CONTEXT, "cm_channel_create", "ctx");
	if (ret)
		return ret;
	if (!ch_out) {
		core_arg_err("cm_channel_create", "ch_out", "NULL");
		return -OPENRDMA_EINVAL;
	}

	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return -OPENRDMA_ENOMEM;
	/* Blocking: event_get sleeps unless the application sets O_NONBLOCK */
	ret = core_evfd_create(0, &ch->base.fd);
	if (ret)
		goto err_free;
	ret = -pthread_mutex_init(&ch->lock, NULL);
	if (ret)
		goto err_fd;
	ret = -pthread_cond_init(&ch->acked, NULL);
	if (ret)
		goto err_mutex;
	ret = core_obj_init(&ch->base.obj, OPENRDMA_OBJ_CM_CHANNEL, ctx,
			    &ctx->obj);
	if (ret)
		goto err_cond;

	*ch_out = &ch->base;
	return 0;

err_cond:
	pthread_cond_destroy(&ch->acked);
err_mutex:
	pthread_mutex_destroy(&ch->lock);
err_fd:
	close(ch->base.fd);
err_free:
	free(ch);
	return ret;
}

OPENRDMA_EXPORT int
openrdma_cm_channel_destroy(struct openrdma_cm_channel *channel)
{
	struct openrdma_context *ctx;
	struct core_cm_channel *ch;
	int ret;

	ret = core_check(channel, OPENRDMA_OBJ_CM_CHANNEL, "cm_channel_destroy",
			 "ch");
	if (ret)
		return ret;
	ctx = channel->obj.ctx;
	/* Every id holds its channel and every event its id: empty now. */
	ret = core_obj_retire(&channel->obj);
	if (ret)
		return ret;

	ch = to_cm_channel(channel);
	close(ch->base.fd);
	pthread_cond_destroy(&ch->acked);
	pthread_mutex_destroy(&ch->lock);
	free(ch);
	core_obj_put(&ctx->obj);
	return 0;
}

/* Fills the header of an id the transport created, on channel ch. */
static int cm_id_setup(struct openrdma_cm_id *id, struct openrdma_context *ctx,
		       struct openrdma_cm_channel *ch, void *context,
		       enum openrdma_port_space ps)
{
	int ret;

	ret = core_obj_init(&id->obj, OPENRDMA_OBJ_CM_ID, ctx, &ch->obj);
	if (ret)
		return ret;
	id->channel = ch;
	id->context = context;
	id->ps = ps;
	id->qp = NULL;
	return 0;
}

OPENRDMA_EXPORT int openrdma_cm_id_create(struct openrdma_context *ctx,
					  struct openrdma_cm_channel *ch,
					  void *context,
					  enum openrdma_port_space ps,
					  struct openrdma_cm_id **id_out)
{
	struct openrdma_cm_id *id;
	int ret;

	ret = core_check(ctx, OPENRDMA_OBJ_CONTEXT, "cm_id_create", "ctx");
	if (ret)
		return ret;
	ret = core_check(ch, OPENRDMA_OBJ_CM_CHANNEL, "cm_id_create", "ch");
	if (ret)
		return ret;
	ret = core_same_ctx(&ch->obj, &ctx->obj, "cm_id_create", "ch");
	if (ret)
		return ret;
	if (ps != OPENRDMA_PS_TCP && ps != OPENRDMA_PS_UDP) {
		core_arg_err("cm_id_create", "ps", "0x%x unknown",
			     (unsigned int)ps);
		return -OPENRDMA_EINVAL;
	}
	if (!id_out) {
		core_arg_err("cm_id_create", "id_out", "NULL");
		return -OPENRDMA_EINVAL;
	}

	ret = ctx->ops->cm_id_create(ctx, ps, &id);
	if (ret)
		return ret;
	ret = cm_id_setup(id, ctx, ch, context, ps);
	if (ret)
		goto err_destroy;

	*id_out = id;
	return 0;

err_destroy:
	ctx->ops->cm_id_destroy(id);
	return ret;
}

OPENRDMA_EXPORT int openrdma_cm_id_new_request(struct openrdma_cm_id *listen_id,
					       struct openrdma_cm_id **id_out)
{
	struct openrdma_context *ctx;
	struct openrdma_cm_id *id;
	int ret;

	ret = core_check(listen_id, OPENRDMA_OBJ_CM_ID, "cm_id_new_request",
			 "listen_id");
	if (ret)
		return ret;
	if (!id_out) {
		core_arg_err("cm_id_new_request", "id_out", "NULL");
		return -OPENRDMA_EINVAL;
	}
	ctx = listen_id->obj.ctx;

	ret = ctx->ops->cm_id_create(ctx, listen_id->ps, &id);
	if (ret)
		return ret;
	ret = cm_id_setup(id, ctx, listen_id->channel, listen_id->context,
			  listen_id->ps);
	if (ret)
		goto err_destroy;
	if (!id->port_num)
		id->port_num = listen_id->port_num;

	*id_out = id;
	return 0;

err_destroy:
	ctx->ops->cm_id_destroy(id);
	return ret;
}

/* Drops the references an event holds; with the channel lock held. */
static void cm_event_release(struct core_cm_event *e)
{
	core_obj_put(&e->id->obj);
	if (e->listen_id)
		core_obj_put(&e->listen_id->obj);
}

OPENRDMA_EXPORT int openrdma_cm_id_destroy(struct openrdma_cm_id *id)
{
	struct core_cm_event *e, *tmp, *requests = NULL;
	struct openrdma_context *ctx;
	struct core_cm_channel *ch;
	struct openrdma_qp *qp;
	int ret;

	ret = core_check(id, OPENRDMA_OBJ_CM_ID, "cm_id_destroy", "id");
	if (ret)
		return ret;
	ctx = id->obj.ctx;
	ch = to_cm_channel(id->channel);

	pthread_mutex_lock(&ch->lock);
	/* From here on, the transport's posts for id are refused. */
	core_obj_invalidate(&id->obj);
	DL_FOREACH_SAFE (ch->queue, e, tmp) {
		if (e->id != id && e->listen_id != id)
			continue;
		DL_DELETE(ch->queue, e);
		core_evfd_take(ch->base.fd);
		cm_event_release(e);
		/* A request to this listener, never taken: its new id was
		 * never the application's, so it goes too. */
		if (e->id != id)
			DL_APPEND(requests, e);
		else
			free(e);
	}
	pthread_mutex_unlock(&ch->lock);

	DL_FOREACH_SAFE (requests, e, tmp) {
		DL_DELETE(requests, e);
		if (openrdma_cm_id_destroy(e->id))
			openrdma_warn("core", "request id %p left behind",
				      (void *)e->id);
		free(e);
	}

	/* As rdma_destroy_id: taken events must be acknowledged first. */
	pthread_mutex_lock(&ch->lock);
	while (core_obj_refs(&id->obj) > 1)
		pthread_cond_wait(&ch->acked, &ch->lock);
	pthread_mutex_unlock(&ch->lock);

	qp = id->qp;
	ret = ctx->ops->cm_id_destroy(id);
	if (ret) {
		core_obj_revive(&id->obj, OPENRDMA_OBJ_CM_ID);
		return ret;
	}
	if (qp)
		core_obj_put(&qp->obj);
	core_obj_put(&ch->base.obj);
	return 0;
}

OPENRDMA_EXPORT int openrdma_cm_listen(struct openrdma_cm_id *id,
				       const struct sockaddr *addr, int backlog)
{
	int ret;

	ret = core_check(id, OPENRDMA_OBJ_CM_ID, "cm_listen", "id");
	if (ret)
		return ret;
	ret = core_sockaddr_check(addr, "cm_listen", "addr");
	if (ret)
		return ret;
	if (backlog < 0) {
		core_arg_err("cm_listen", "backlog", "%d < 0", backlog);
		return -OPENRDMA_EINVAL;
	}
	return id->obj.ctx->ops->cm_listen(id, addr, backlog);
}

OPENRDMA_EXPORT int openrdma_cm_local_addr(struct openrdma_cm_id *id,
					   struct sockaddr_storage *addr)
{
	int ret;

	ret = core_check(id, OPENRDMA_OBJ_CM_ID, "cm_local_addr", "id");
	if (ret)
		return ret;
	if (!addr) {
		core_arg_err("cm_local_addr", "addr", "NULL");
		return -OPENRDMA_EINVAL;
	}
	return id->obj.ctx->ops->cm_local_addr(id, addr);
}

OPENRDMA_EXPORT int openrdma_cm_peer_addr(struct openrdma_cm_id *id,
					  struct sockaddr_storage *addr)
{
	int ret;

	ret = core_check(id, OPENRDMA_OBJ_CM_ID, "cm_peer_addr", "id");
	if (ret)
		return ret;
	if (!addr) {
		core_arg_err("cm_peer_addr", "addr", "NULL");
		return -OPENRDMA_EINVAL;
	}
	return id->obj.ctx->ops->cm_peer_addr(id, addr);
}

OPENRDMA_EXPORT int openrdma_cm_connect(struct openrdma_cm_id *id,
					struct openrdma_qp *qp,
					const struct sockaddr *dst,
					const struct openrdma_conn_param *param)
{
	const struct openrdma_device_attr *dev;
	struct openrdma_qp *old;
	int ret;

	ret = core_check(id, OPENRDMA_OBJ_CM_ID, "cm_connect", "id");
	if (ret)
		return ret;
	dev = core_attr(id->obj.ctx);
	ret = cm_qp_check(id, qp, "cm_connect");
	if (ret)
		return ret;
	ret = core_sockaddr_check(dst, "cm_connect", "dst");
	if (ret)
		return ret;
	ret = cm_param_check(param, dev, dev->max_pdata_connect, "cm_connect");
	if (ret)
		return ret;

	old = cm_qp_attach(id, qp);
	ret = id->obj.ctx->ops->cm_connect(id, qp, dst, param);
	cm_qp_settle(id, qp, old, ret);
	return ret;
}

OPENRDMA_EXPORT int openrdma_cm_accept(struct openrdma_cm_id *id,
				       struct openrdma_qp *qp,
				       const struct openrdma_conn_param *param)
{
	const struct openrdma_device_attr *dev;
	struct openrdma_qp *old;
	int ret;

	ret = core_check(id, OPENRDMA_OBJ_CM_ID, "cm_accept", "id");
	if (ret)
		return ret;
	dev = core_attr(id->obj.ctx);
	/* qp NULL: the active side completing a three-way handshake. */
	if (qp) {
		ret = cm_qp_check(id, qp, "cm_accept");
		if (ret)
			return ret;
		if (id->qp && id->qp != qp) {
			core_arg_err("cm_accept", "qp", "id has another QP");
			return -OPENRDMA_EINVAL;
		}
	}
	ret = cm_param_check(param, dev, dev->max_pdata_accept, "cm_accept");
	if (ret)
		return ret;
	if (param && param->three_way) {
		core_arg_err("cm_accept", "param", "three_way is for connect");
		return -OPENRDMA_EINVAL;
	}

	old = cm_qp_attach(id, qp);
	ret = id->obj.ctx->ops->cm_accept(id, qp, param);
	cm_qp_settle(id, qp, old, ret);
	return ret;
}

/* fd must be a connected TCP socket: -EINVAL, or -ENOTCONN unconnected. */
static int cm_socket_check(int fd, const char *fn)
{
	struct sockaddr_storage ss;
	int type = 0, domain = 0, proto = 0;
	socklen_t len = sizeof(type);

	if (fd < 0 || getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len)) {
		openrdma_dbg("core", "%s: arg fd: %d is not a socket", fn, fd);
		return -OPENRDMA_EINVAL;
	}
	len = sizeof(domain);
	getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len);
	len = sizeof(proto);
	getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &len);
	if (type != SOCK_STREAM || proto != IPPROTO_TCP ||
	    (domain != AF_INET && domain != AF_INET6)) {
		openrdma_dbg(
			"core",
			"%s: arg fd: type %d family %d protocol %d, not TCP",
			fn, type, domain, proto);
		return -OPENRDMA_EINVAL;
	}
	len = sizeof(ss);
	if (getpeername(fd, (struct sockaddr *)&ss, &len)) {
		openrdma_dbg("core", "%s: arg fd: not connected", fn);
		return -OPENRDMA_ENOTCONN;
	}
	return 0;
}

OPENRDMA_EXPORT int
openrdma_cm_adopt_socket(struct openrdma_cm_id *id, struct openrdma_qp *qp,
			 int fd, const struct openrdma_conn_param *param)
{
	const struct openrdma_device_attr *dev;
	struct openrdma_qp *old;
	int ret;

	ret = core_check(id, OPENRDMA_OBJ_CM_ID, "cm_adopt_socket", "id");
	if (ret)
		return ret;
	dev = core_attr(id->obj.ctx);
	if (!(dev->device_cap_flags & OPENRDMA_DEVICE_SOCKET_ADOPT))
		return -OPENRDMA_EOPNOTSUPP;
	if (id->ps != OPENRDMA_PS_TCP) {
		core_arg_err("cm_adopt_socket", "id", "port space 0x%x",
			     (unsigned int)id->ps);
		return -OPENRDMA_EINVAL;
	}
	ret = cm_qp_check(id, qp, "cm_adopt_socket");
	if (ret)
		return ret;
	ret = cm_param_check(param, dev, dev->max_pdata_connect,
			     "cm_adopt_socket");
	if (ret)
		return ret;
	/* both sides adopt at once: there is nobody to answer a third step */
	if (param && param->three_way) {
		core_arg_err("cm_adopt_socket", "param", "three_way");
		return -OPENRDMA_EINVAL;
	}
	ret = cm_socket_check(fd, "cm_adopt_socket");
	if (ret)
		return ret;

	old = cm_qp_attach(id, qp);
	ret = id->obj.ctx->ops->cm_adopt(id, qp, fd, param);
	cm_qp_settle(id, qp, old, ret);
	return ret;
}

OPENRDMA_EXPORT int openrdma_cm_reject(struct openrdma_cm_id *id,
				       const void *private_data,
				       uint8_t private_data_len)
{
	int ret;

	ret = core_check(id, OPENRDMA_OBJ_CM_ID, "cm_reject", "id");
	if (ret)
		return ret;
	ret = cm_pdata_check(private_data, private_data_len,
			     core_attr(id->obj.ctx)->max_pdata_reject,
			     "cm_reject");
	if (ret)
		return ret;
	return id->obj.ctx->ops->cm_reject(id, private_data, private_data_len);
}

OPENRDMA_EXPORT int openrdma_cm_disconnect(struct openrdma_cm_id *id,
					   const void *private_data,
					   uint8_t private_data_len)
{
	int ret;

	ret = core_check(id, OPENRDMA_OBJ_CM_ID, "cm_disconnect", "id");
	if (ret)
		return ret;
	ret = cm_pdata_check(private_data, private_data_len,
			     core_attr(id->obj.ctx)->max_pdata_disconnect,
			     "cm_disconnect");
	if (ret)
		return ret;
	return id->obj.ctx->ops->cm_disconnect(id, private_data,
					       private_data_len);
}

OPENRDMA_EXPORT int
openrdma_cm_event_post(struct openrdma_cm_id *id,
		       const struct openrdma_cm_event *event)
{
	struct openrdma_cm_id *listen_id;
	struct core_cm_channel *ch;
	struct core_cm_event *e;

	if (!id || !event || !id->channel ||
	    (unsigned int)event->event > OPENRDMA_CM_EVENT_TIMEWAIT_EXIT) {
		openrdma_warn("core", "invalid event refused");
		return -OPENRDMA_EINVAL;
	}
	listen_id = event->listen_id;
	if (listen_id && listen_id->channel != id->channel) {
		openrdma_warn("core", "listener on another channel");
		return -OPENRDMA_EINVAL;
	}
	ch = to_cm_channel(id->channel);
	e = malloc(sizeof(*e));
	if (!e)
		return -OPENRDMA_ENOMEM;
	e->ev = *event;
	e->ev.id = id;
	e->id = id;
	e->listen_id = listen_id;

	pthread_mutex_lock(&ch->lock);
	/* The id or its listener is being destroyed: nobody would take it. */
	if (id->obj.type != OPENRDMA_OBJ_CM_ID ||
	    (listen_id && listen_id->obj.type != OPENRDMA_OBJ_CM_ID)) {
		pthread_mutex_unlock(&ch->lock);
		free(e);
		return -OPENRDMA_ENOSPC;
	}
	core_obj_get(&id->obj);
	if (listen_id)
		core_obj_get(&listen_id->obj);
	DL_APPEND(ch->queue, e);
	core_evfd_post(ch->base.fd);
	pthread_mutex_unlock(&ch->lock);
	return 0;
}

OPENRDMA_EXPORT int openrdma_cm_event_get(struct openrdma_cm_channel *channel,
					  struct openrdma_cm_event **event_out)
{
	struct core_cm_channel *ch;
	struct core_cm_event *e;
	int ret;

	ret = core_check(channel, OPENRDMA_OBJ_CM_CHANNEL, "cm_event_get",
			 "ch");
	if (ret)
		return ret;
	if (!event_out) {
		core_arg_err("cm_event_get", "event_out", "NULL");
		return -OPENRDMA_EINVAL;
	}
	ch = to_cm_channel(channel);

	for (;;) {
		pthread_mutex_lock(&ch->lock);
		e = ch->queue;
		if (e)
			break;
		pthread_mutex_unlock(&ch->lock);
		ret = core_evfd_wait(ch->base.fd);
		if (ret)
			return ret;
	}
	DL_DELETE(ch->queue, e);
	core_evfd_take(ch->base.fd);
	pthread_mutex_unlock(&ch->lock);

	*event_out = &e->ev;
	return 0;
}

OPENRDMA_EXPORT void openrdma_cm_event_ack(struct openrdma_cm_event *event)
{
	struct core_cm_channel *ch;
	struct core_cm_event *e;

	if (!event)
		return;
	e = openrdma_container_of(event, struct core_cm_event, ev);
	/* The id is alive (this event holds it), and so is its channel. */
	ch = to_cm_channel(e->id->channel);

	pthread_mutex_lock(&ch->lock);
	cm_event_release(e);
	pthread_cond_broadcast(&ch->acked);
	pthread_mutex_unlock(&ch->lock);
	free(e);
}
