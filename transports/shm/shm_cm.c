/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The connection manager of shm.  A listener binds the port's abstract
 * socket name; connect() connects to it and sends REQ; the passive side
 * answers REP (after its QP is in RTS, which also makes the data
 * connection: see shm_conn.c), the active side RTU, or either REJ.  DREQ
 * disconnects; a socket that ends without one means the peer died.  The
 * IB CM's rules decide what the QPs get, as in self.
 *
 * cm_lock guards every id's state; messages are sent under it.  Sockets
 * and their watches belong to the progress thread: only it closes them,
 * so an application thread sends on a socket only under cm_lock while its
 * watch is there.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>
#include <utlist.h>

#include <openrdma/log.h>

#include "transports/shm/shm.h"

enum cm_state {
	CM_IDLE,
	CM_LISTEN,
	CM_REQ_SENT, /* active: waiting for REP or REJ */
	CM_REQ_RCVD, /* passive: the application has the request */
	CM_REP_RCVD, /* active, three-way: the application has the REP */
	CM_REP_SENT, /* passive: waiting for RTU */
	CM_ESTABLISHED,
	CM_DISCONNECTED,
};

struct cm_pending;

struct shm_cm_id {
	struct openrdma_cm_id base;
	struct shm_ctx *ctx;
	enum cm_state state;
	bool gone; /* passive: the active side went away before an answer */
	struct sockaddr_storage local;
	struct sockaddr_storage peer;
	int fd; /* listener: the port socket; else the CM socket */
	struct shm_watch *watch;
	/* listener */
	int backlog;
	int pending;
	struct shm_cm_id *requests;
	struct cm_pending *pendings;
	/* passive id while its request is pending */
	struct shm_cm_id *listener;
	struct shm_cm_id *prev, *next;
	struct sw_cm_param mine;
	struct sw_cm_param theirs;
	uint32_t peer_qpn;
};

/* An accepted socket whose REQ has not come yet. */
struct cm_pending {
	struct shm_cm_id *listener;
	struct shm_watch *w;
	struct cm_pending *prev, *next;
};

static struct shm_cm_id *to_cm_id(struct openrdma_cm_id *id)
{
	return openrdma_container_of(id, struct shm_cm_id, base);
}

static void param_from_msg(struct sw_cm_param *p, const struct shm_msg_cm *m)
{
	memset(p, 0, sizeof(*p));
	p->responder_resources = m->responder_resources;
	p->initiator_depth = m->initiator_depth;
	p->retry_count = m->retry_count;
	p->rnr_retry_count = m->rnr_retry_count;
	p->three_way = m->three_way;
}

/* Sends a CM message; with cm_lock held and the id's socket open. */
static int cm_send(struct shm_cm_id *id, enum shm_msg_type type, uint32_t qpn,
		   int32_t status, const struct sw_cm_param *p,
		   const void *pdata, uint8_t len)
{
	struct shm_msg_cm m;

	if (id->fd < 0)
		return -OPENRDMA_ENOTCONN;
	memset(&m, 0, sizeof(m));
	shm_msg_init(&m.hdr, type);
	m.qpn = qpn;
	m.status = status;
	if (p) {
		m.responder_resources = p->responder_resources;
		m.initiator_depth = p->initiator_depth;
		m.retry_count = p->retry_count;
		m.rnr_retry_count = p->rnr_retry_count;
		m.three_way = p->three_way;
	}
	if (len)
		memcpy(m.pdata, pdata, len);
	m.pdata_len = len;
	return shm_sock_send(id->fd, &m,
			     offsetof(struct shm_msg_cm, pdata) + len, NULL, 0);
}

static void event_init(struct openrdma_cm_event *ev,
		       enum openrdma_cm_event_type type,
		       const struct shm_cm_id *id)
{
	sw_cm_event_init(ev, type, &id->peer, &id->local);
}

static void post_simple(struct shm_cm_id *id, enum openrdma_cm_event_type t,
			int status)
{
	sw_cm_event_post_status(&id->base, t, status, &id->peer, &id->local);
}

/* Brings qp to RTS towards the QP numbered dest_qpn on this host. */
static int qp_connect(struct openrdma_qp *qp, uint32_t dest_qpn,
		      const struct sw_cm_param *mine,
		      const struct sw_cm_param *theirs)
{
	struct sw_cm_path path = { .port_num = SHM_PORT, .dest_qpn = dest_qpn };

	shm_port_addr(&path.addr);
	return sw_cm_qp_connect(qp, &to_shm_qp(qp)->sw, &path, mine, theirs);
}

/* Ends a pending request on its listener.  Called with cm_lock held. */
static void request_done(struct shm_cm_id *id)
{
	struct shm_cm_id *l = id->listener;

	if (!l)
		return;
	DL_DELETE(l->requests, id);
	l->pending--;
	id->listener = NULL;
}

/* On the progress thread, with cm_lock held: the socket goes. */
static void drop_socket(struct shm_cm_id *id)
{
	struct cm_pending *p, *tmp;

	DL_FOREACH_SAFE (id->pendings, p, tmp) {
		DL_DELETE(id->pendings, p);
		shm_watch_del(id->ctx, p->w);
		free(p);
	}
	if (id->watch)
		shm_watch_del(id->ctx, id->watch);
	else if (id->fd >= 0)
		close(id->fd);
	id->watch = NULL;
	id->fd = -1;
}

static void drop_socket_cmd(void *arg)
{
	struct shm_cm_id *id = arg;

	pthread_mutex_lock(&id->ctx->cm_lock);
	drop_socket(id);
	pthread_mutex_unlock(&id->ctx->cm_lock);
}

int shm_cm_id_create(struct openrdma_context *ctx, enum openrdma_port_space ps,
		     struct openrdma_cm_id **id_out)
{
	struct shm_cm_id *id;

	id = calloc(1, sizeof(*id));
	if (!id)
		return -OPENRDMA_ENOMEM;
	id->ctx = to_shm_ctx(ctx);
	id->base.port_num = SHM_PORT;
	id->state = CM_IDLE;
	id->fd = -1;
	*id_out = &id->base;
	return 0;
}

int shm_cm_id_destroy(struct openrdma_cm_id *base)
{
	struct shm_cm_id *id = to_cm_id(base), *r, *tmp;
	struct shm_ctx *sctx = id->ctx;

	/* a connection ends as if disconnected: acknowledgements owed go
	 * before the DREQ */
	if (base->qp)
		shm_conn_rx_settle(to_shm_qp(base->qp));
	pthread_mutex_lock(&sctx->cm_lock);
	/* requests the application holds outlive their listener */
	DL_FOREACH_SAFE (id->requests, r, tmp) {
		DL_DELETE(id->requests, r);
		r->listener = NULL;
	}
	request_done(id);
	switch (id->state) {
	case CM_REQ_RCVD:
		/* an unanswered request is refused */
		if (!id->gone)
			cm_send(id, SHM_MSG_CM_REJ, 0, SHM_REJ_CONSUMER, NULL,
				NULL, 0);
		break;
	case CM_REP_RCVD:
	case CM_REP_SENT:
	case CM_ESTABLISHED:
		/* a connection ends as if disconnected */
		cm_send(id, SHM_MSG_CM_DREQ, 0, 0, NULL, NULL, 0);
		break;
	default:
		break;
	}
	id->state = CM_IDLE;
	pthread_mutex_unlock(&sctx->cm_lock);
	shm_prog_run(sctx, drop_socket_cmd, id);
	free(id);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Passive side                                                       */
/* ------------------------------------------------------------------ */

static void conn_event(struct shm_ctx *sctx, struct shm_watch *w,
		       uint32_t events);

/* A REQ on an accepted socket: a new id and CONNECT_REQUEST. */
static void request_in(struct shm_ctx *sctx, struct cm_pending *p,
		       const struct shm_msg_cm *m)
{
	struct shm_cm_id *l = p->listener, *n = NULL;
	struct openrdma_cm_id *nbase;
	struct openrdma_cm_event ev;
	struct shm_watch *w = p->w;

	DL_DELETE(l->pendings, p);
	free(p);
	if (l->pending >= l->backlog ||
	    openrdma_cm_id_new_request(&l->base, &nbase)) {
		/* a throwaway id only to send the REJ on the socket */
		struct shm_cm_id tmp = { .fd = w->fd };

		cm_send(&tmp, SHM_MSG_CM_REJ, 0, SHM_REJ_BACKLOG, NULL, NULL,
			0);
		shm_watch_del(sctx, w);
		return;
	}
	n = to_cm_id(nbase);
	n->state = CM_REQ_RCVD;
	n->fd = w->fd;
	n->watch = w;
	w->fn = conn_event;
	w->owner = n;
	n->local = l->local;
	shm_port_addr(&n->peer);
	param_from_msg(&n->theirs, m);
	n->peer_qpn = m->qpn;
	n->listener = l;
	DL_APPEND(l->requests, n);
	l->pending++;

	event_init(&ev, OPENRDMA_CM_EVENT_CONNECT_REQUEST, n);
	ev.listen_id = &l->base;
	sw_cm_event_param(&ev, &n->theirs, m->qpn);
	sw_cm_event_pdata(&ev, m->pdata, m->pdata_len);
	if (openrdma_cm_event_post(&n->base, &ev)) {
		/* the listener is being destroyed: the request goes too */
		request_done(n);
		cm_send(n, SHM_MSG_CM_REJ, 0, SHM_REJ_BACKLOG, NULL, NULL, 0);
		n->state = CM_IDLE;
		n->gone = true;
	}
}

/* Checks a CM message; returns its type or -1. */
static int cm_msg_check(const struct shm_msg_cm *m, int len)
{
	int type = shm_msg_type(m, len, offsetof(struct shm_msg_cm, pdata));

	/* pdata_len is 8 bits: never beyond the buffer */
	if (type < 0 ||
	    (size_t)len < offsetof(struct shm_msg_cm, pdata) + m->pdata_len)
		return -1;
	return type;
}

static void pending_event(struct shm_ctx *sctx, struct shm_watch *w,
			  uint32_t events)
{
	struct cm_pending *p = w->owner;
	struct shm_msg_cm m;
	int len;

	len = shm_sock_recv(w->fd, &m, sizeof(m), NULL, NULL, 0);
	if (len == -OPENRDMA_EAGAIN)
		return;
	pthread_mutex_lock(&sctx->cm_lock);
	if (len > 0 && cm_msg_check(&m, len) == SHM_MSG_CM_REQ &&
	    m.pdata_len <= SHM_PDATA_CONNECT) {
		request_in(sctx, p, &m);
	} else {
		DL_DELETE(p->listener->pendings, p);
		free(p);
		shm_watch_del(sctx, w);
	}
	pthread_mutex_unlock(&sctx->cm_lock);
}

static void listen_event(struct shm_ctx *sctx, struct shm_watch *w,
			 uint32_t events)
{
	struct shm_cm_id *l = w->owner;
	struct cm_pending *p;
	pid_t pid;
	int fd;

	for (;;) {
		fd = accept4(w->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			break;
		if (shm_sock_peer_check(sctx, fd, &pid)) {
			openrdma_dbg(
				"shm", "port %u: a user not allowed",
				sw_addr_port((struct sockaddr *)&l->local));
			close(fd);
			continue;
		}
		p = calloc(1, sizeof(*p));
		if (p)
			p->w = shm_watch_add(sctx, fd, pending_event, p);
		if (!p || !p->w) {
			free(p);
			close(fd);
			continue;
		}
		p->listener = l;
		pthread_mutex_lock(&sctx->cm_lock);
		DL_APPEND(l->pendings, p);
		pthread_mutex_unlock(&sctx->cm_lock);
	}
}

static void listen_watch_cmd(void *arg)
{
	struct shm_cm_id *id = arg;

	id->watch = shm_watch_add(id->ctx, id->fd, listen_event, id);
}

/* Binds port (0: an ephemeral one) as our listening socket. */
static int port_bind(uint16_t *port, int *fd)
{
	uint32_t start = 0, i,
		 n = SW_CM_EPHEMERAL_LAST - SW_CM_EPHEMERAL_FIRST + 1;
	int ret = -OPENRDMA_EADDRINUSE;

	if (*port)
		return shm_sock_listen(SHM_SOCK_PORT, *port, fd);
	if (getrandom(&start, sizeof(start), 0) < 0)
		start = (uint32_t)getpid();
	for (i = 0; i < n && ret == -OPENRDMA_EADDRINUSE; i++) {
		*port = (uint16_t)(SW_CM_EPHEMERAL_FIRST + (start + i) % n);
		ret = shm_sock_listen(SHM_SOCK_PORT, *port, fd);
	}
	return ret;
}

int shm_cm_listen(struct openrdma_cm_id *base, const struct sockaddr *addr,
		  int backlog)
{
	struct shm_cm_id *id = to_cm_id(base);
	struct shm_ctx *sctx = id->ctx;
	uint16_t port = sw_addr_port(addr);
	int fd, ret;

	if (base->ps != OPENRDMA_PS_TCP)
		return -OPENRDMA_EOPNOTSUPP;
	if (!sw_addr_is_any(addr) && !sw_addr_is_loopback(addr))
		return -OPENRDMA_EADDRNOTAVAIL;
	pthread_mutex_lock(&sctx->cm_lock);
	ret = id->state != CM_IDLE || id->fd >= 0 ? -OPENRDMA_EINVAL : 0;
	pthread_mutex_unlock(&sctx->cm_lock);
	if (ret)
		return ret;
	ret = port_bind(&port, &fd);
	if (ret)
		return ret;
	pthread_mutex_lock(&sctx->cm_lock);
	memset(&id->local, 0, sizeof(id->local));
	memcpy(&id->local, addr, sw_addr_len(addr));
	sw_addr_set_port((struct sockaddr *)&id->local, port);
	id->fd = fd;
	id->backlog = backlog ? backlog : SW_CM_DEFAULT_BACKLOG;
	id->state = CM_LISTEN;
	pthread_mutex_unlock(&sctx->cm_lock);
	shm_prog_run(sctx, listen_watch_cmd, id);
	if (!id->watch) {
		pthread_mutex_lock(&sctx->cm_lock);
		id->state = CM_IDLE;
		pthread_mutex_unlock(&sctx->cm_lock);
		shm_prog_run(sctx, drop_socket_cmd, id);
		return -OPENRDMA_ENOMEM;
	}
	return 0;
}

static int accept_request(struct shm_cm_id *id, struct openrdma_qp *qp,
			  const struct openrdma_conn_param *param)
{
	struct shm_ctx *sctx = id->ctx;
	struct sw_cm_param mine, theirs;
	uint32_t peer_qpn;
	int ret;

	pthread_mutex_lock(&sctx->cm_lock);
	ret = id->gone ? -OPENRDMA_ECONNABORTED : 0;
	sw_cm_param_set(&id->mine, param, SHM_MAX_RD_ATOM);
	mine = id->mine;
	theirs = id->theirs;
	peer_qpn = id->peer_qpn;
	pthread_mutex_unlock(&sctx->cm_lock);
	if (ret)
		return ret;
	/* RTR connects the QPs (a handshake with the peer's context):
	 * without cm_lock, which the progress thread needs meanwhile */
	ret = qp_connect(qp, peer_qpn, &mine, &theirs);
	if (ret)
		return ret;

	pthread_mutex_lock(&sctx->cm_lock);
	if (id->state != CM_REQ_RCVD || id->gone) {
		ret = -OPENRDMA_ECONNABORTED;
	} else {
		ret = cm_send(id, SHM_MSG_CM_REP, qp->qp_num, 0, &mine,
			      param ? param->private_data : NULL,
			      param ? param->private_data_len : 0);
		if (!ret) {
			request_done(id);
			id->state = CM_REP_SENT;
		}
	}
	pthread_mutex_unlock(&sctx->cm_lock);
	if (ret)
		sw_cm_qp_error(qp);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Active side                                                        */
/* ------------------------------------------------------------------ */

/* A connect that did not get through: the QP is left in ERR
 * (openrdma_cm(3)).  Called with cm_lock held. */
static void connect_failed(struct shm_cm_id *id,
			   enum openrdma_cm_event_type type, int status)
{
	id->state = CM_IDLE;
	sw_cm_qp_error(id->base.qp);
	post_simple(id, type, status);
}

static void conn_watch_cmd(void *arg)
{
	struct shm_cm_id *id = arg;

	pthread_mutex_lock(&id->ctx->cm_lock);
	if (id->fd >= 0 && !id->watch)
		id->watch = shm_watch_add(id->ctx, id->fd, conn_event, id);
	if (!id->watch && id->state == CM_REQ_SENT)
		connect_failed(id, OPENRDMA_CM_EVENT_CONNECT_ERROR,
			       -OPENRDMA_ENOMEM);
	pthread_mutex_unlock(&id->ctx->cm_lock);
}

/* Reaches the listener of dst; the event to report if it fails. */
static int dial(struct shm_cm_id *id, const struct sockaddr *dst,
		enum openrdma_cm_event_type *fail, int *fd_out)
{
	pid_t pid;
	int ret;

	*fail = OPENRDMA_CM_EVENT_UNREACHABLE;
	/* address resolution: only this host is reachable */
	if (!sw_addr_is_loopback(dst))
		return -OPENRDMA_EHOSTUNREACH;
	ret = shm_sock_connect(SHM_SOCK_PORT, sw_addr_port(dst), fd_out);
	if (ret == -OPENRDMA_EAGAIN) {
		*fail = OPENRDMA_CM_EVENT_REJECTED;
		return SHM_REJ_BACKLOG;
	}
	if (ret)
		return ret == -OPENRDMA_ENOENT ? -OPENRDMA_ECONNREFUSED : ret;
	/* someone else's process on the port: not ours to talk to */
	ret = shm_sock_peer_check(id->ctx, *fd_out, &pid);
	if (ret) {
		close(*fd_out);
		return ret;
	}
	return 0;
}

int shm_cm_connect(struct openrdma_cm_id *base, struct openrdma_qp *qp,
		   const struct sockaddr *dst,
		   const struct openrdma_conn_param *param)
{
	struct shm_cm_id *id = to_cm_id(base);
	struct shm_ctx *sctx = id->ctx;
	enum openrdma_cm_event_type fail;
	int fd = -1, ret;

	if (base->ps != OPENRDMA_PS_TCP)
		return -OPENRDMA_EOPNOTSUPP;
	/* the passive side connects to it before we modify it */
	atomic_store(&to_shm_qp(qp)->ready, true);
	pthread_mutex_lock(&sctx->cm_lock);
	if (id->state != CM_IDLE || id->fd >= 0) {
		ret = id->state == CM_LISTEN ? -OPENRDMA_EINVAL :
					       -OPENRDMA_EISCONN;
		pthread_mutex_unlock(&sctx->cm_lock);
		return ret;
	}
	sw_cm_param_set(&id->mine, param, SHM_MAX_RD_ATOM);
	memset(&id->peer, 0, sizeof(id->peer));
	memcpy(&id->peer, dst, sw_addr_len(dst));
	shm_port_addr(&id->local);
	id->state = CM_REQ_SENT;
	pthread_mutex_unlock(&sctx->cm_lock);

	ret = dial(id, dst, &fail, &fd);
	pthread_mutex_lock(&sctx->cm_lock);
	if (!ret) {
		id->fd = fd;
		ret = cm_send(id, SHM_MSG_CM_REQ, qp->qp_num, 0, &id->mine,
			      param ? param->private_data : NULL,
			      param ? param->private_data_len : 0);
		fail = OPENRDMA_CM_EVENT_CONNECT_ERROR;
	}
	if (ret)
		connect_failed(id, fail, ret);
	pthread_mutex_unlock(&sctx->cm_lock);
	/* the outcome is an event; a socket, if any, goes to the thread */
	shm_prog_run(sctx, ret ? drop_socket_cmd : conn_watch_cmd, id);
	return 0;
}

/* REP on the active side.  With cm_lock held; false if the connection
 * failed (its socket then goes). */
static bool reply_in(struct shm_cm_id *id, const struct shm_msg_cm *m)
{
	struct openrdma_cm_event ev;
	int ret;

	param_from_msg(&id->theirs, m);
	id->peer_qpn = m->qpn;
	if (id->mine.three_way) {
		id->state = CM_REP_RCVD;
		event_init(&ev, OPENRDMA_CM_EVENT_CONNECT_RESPONSE, id);
	} else {
		ret = qp_connect(id->base.qp, m->qpn, &id->mine, &id->theirs);
		if (!ret)
			ret = cm_send(id, SHM_MSG_CM_RTU, 0, 0, NULL, NULL, 0);
		if (ret) {
			/* we cannot take the connection */
			cm_send(id, SHM_MSG_CM_REJ, 0, ret, NULL, NULL, 0);
			connect_failed(id, OPENRDMA_CM_EVENT_CONNECT_ERROR,
				       ret);
			return false;
		}
		id->state = CM_ESTABLISHED;
		event_init(&ev, OPENRDMA_CM_EVENT_ESTABLISHED, id);
	}
	sw_cm_event_param(&ev, &id->theirs, m->qpn);
	sw_cm_event_pdata(&ev, m->pdata, m->pdata_len);
	sw_cm_event_post(&id->base, &ev);
	return true;
}

/* Active side: completes a three-way handshake (the RTU). */
static int accept_response(struct shm_cm_id *id)
{
	struct shm_ctx *sctx = id->ctx;
	struct sw_cm_param mine, theirs;
	uint32_t peer_qpn;
	int ret;

	pthread_mutex_lock(&sctx->cm_lock);
	mine = id->mine;
	theirs = id->theirs;
	peer_qpn = id->peer_qpn;
	pthread_mutex_unlock(&sctx->cm_lock);
	ret = qp_connect(id->base.qp, peer_qpn, &mine, &theirs);
	if (ret)
		return ret;
	pthread_mutex_lock(&sctx->cm_lock);
	if (id->state != CM_REP_RCVD) {
		ret = -OPENRDMA_ECONNABORTED;
	} else {
		ret = cm_send(id, SHM_MSG_CM_RTU, 0, 0, NULL, NULL, 0);
		if (!ret)
			id->state = CM_ESTABLISHED;
	}
	pthread_mutex_unlock(&sctx->cm_lock);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Messages and ends of the CM socket                                 */
/* ------------------------------------------------------------------ */

/* The socket ended, or REJ/DREQ came.  With cm_lock held. */
static void peer_left(struct shm_cm_id *id, int type,
		      const struct shm_msg_cm *m)
{
	struct openrdma_cm_event ev;
	bool died = type < 0;

	switch (id->state) {
	case CM_REQ_SENT:
		/* REJ, or no listener any more: refused */
		id->state = CM_IDLE;
		sw_cm_qp_error(id->base.qp);
		event_init(&ev, OPENRDMA_CM_EVENT_REJECTED, id);
		ev.status = type == SHM_MSG_CM_REJ && m->status < 0 ?
				    m->status :
				    SHM_REJ_BACKLOG;
		if (type == SHM_MSG_CM_REJ)
			sw_cm_event_pdata(&ev, m->pdata, m->pdata_len);
		sw_cm_event_post(&id->base, &ev);
		break;
	case CM_REQ_RCVD:
		/* the request vanished: its accept or reject fails */
		request_done(id);
		id->gone = true;
		break;
	case CM_REP_RCVD:
	case CM_REP_SENT:
	case CM_ESTABLISHED:
		if (type == SHM_MSG_CM_REJ && id->state == CM_REP_SENT) {
			/* the active side refused our answer */
			id->state = CM_IDLE;
			sw_cm_qp_error(id->base.qp);
			event_init(&ev, OPENRDMA_CM_EVENT_REJECTED, id);
			ev.status = SHM_REJ_CONSUMER;
			sw_cm_event_pdata(&ev, m->pdata, m->pdata_len);
			sw_cm_event_post(&id->base, &ev);
			break;
		}
		id->state = CM_DISCONNECTED;
		/* a dead peer is the data connection's business: the next
		 * request, or what is outstanding, fails (shm_conn.c) */
		if (!died) {
			/* answers the peer gave before it disconnected
			 * complete their requests first */
			if (id->base.qp)
				shm_conn_rx_drain(to_shm_qp(id->base.qp));
			sw_cm_qp_error(id->base.qp);
		}
		event_init(&ev, OPENRDMA_CM_EVENT_DISCONNECTED, id);
		ev.status = died ? -OPENRDMA_ECONNRESET : 0;
		if (!died)
			sw_cm_event_pdata(&ev, m->pdata, m->pdata_len);
		sw_cm_event_post(&id->base, &ev);
		break;
	default:
		break;
	}
}

static void conn_event(struct shm_ctx *sctx, struct shm_watch *w,
		       uint32_t events)
{
	struct shm_cm_id *id = w->owner;
	struct openrdma_cm_event ev;
	struct shm_msg_cm m;
	int len, type;

	len = shm_sock_recv(w->fd, &m, sizeof(m), NULL, NULL, 0);
	if (len == -OPENRDMA_EAGAIN)
		return;
	type = len > 0 ? cm_msg_check(&m, len) : -1;
	pthread_mutex_lock(&sctx->cm_lock);
	if (type == SHM_MSG_CM_REP && id->state == CM_REQ_SENT) {
		if (!reply_in(id, &m))
			drop_socket(id);
	} else if (type == SHM_MSG_CM_RTU && id->state == CM_REP_SENT) {
		id->state = CM_ESTABLISHED;
		event_init(&ev, OPENRDMA_CM_EVENT_ESTABLISHED, id);
		sw_cm_event_param(&ev, &id->theirs, id->peer_qpn);
		sw_cm_event_post(&id->base, &ev);
	} else if (type < 0 || type == SHM_MSG_CM_REJ ||
		   type == SHM_MSG_CM_DREQ) {
		peer_left(id, type, &m);
		drop_socket(id);
	}
	pthread_mutex_unlock(&sctx->cm_lock);
}

/* ------------------------------------------------------------------ */
/* The application's calls                                            */
/* ------------------------------------------------------------------ */

int shm_cm_accept(struct openrdma_cm_id *base, struct openrdma_qp *qp,
		  const struct openrdma_conn_param *param)
{
	struct shm_cm_id *id = to_cm_id(base);
	enum cm_state state;

	pthread_mutex_lock(&id->ctx->cm_lock);
	state = id->state;
	pthread_mutex_unlock(&id->ctx->cm_lock);
	switch (state) {
	case CM_REQ_RCVD:
		return qp ? accept_request(id, qp, param) : -OPENRDMA_EINVAL;
	case CM_REP_RCVD:
		return accept_response(id);
	default:
		return -OPENRDMA_EINVAL;
	}
}

int shm_cm_reject(struct openrdma_cm_id *base, const void *private_data,
		  uint8_t private_data_len)
{
	struct shm_cm_id *id = to_cm_id(base);
	struct shm_ctx *sctx = id->ctx;
	int ret = 0;

	pthread_mutex_lock(&sctx->cm_lock);
	if (id->state != CM_REQ_RCVD && id->state != CM_REP_RCVD) {
		pthread_mutex_unlock(&sctx->cm_lock);
		return -OPENRDMA_EINVAL;
	}
	request_done(id);
	if (!id->gone)
		cm_send(id, SHM_MSG_CM_REJ, 0, SHM_REJ_CONSUMER, NULL,
			private_data, private_data_len);
	/* a rejected connection leaves the QP that waited for it in ERR,
	 * as the IB CM does */
	if (id->state == CM_REP_RCVD)
		sw_cm_qp_error(id->base.qp);
	id->state = CM_IDLE;
	pthread_mutex_unlock(&sctx->cm_lock);
	shm_prog_run(sctx, drop_socket_cmd, id);
	return ret;
}

int shm_cm_disconnect(struct openrdma_cm_id *base, const void *private_data,
		      uint8_t private_data_len)
{
	struct shm_cm_id *id = to_cm_id(base);
	struct shm_ctx *sctx = id->ctx;

	/* acknowledgements owed go before the DREQ, as on any RNIC */
	if (base->qp)
		shm_conn_rx_settle(to_shm_qp(base->qp));
	pthread_mutex_lock(&sctx->cm_lock);
	if (id->state != CM_ESTABLISHED && id->state != CM_REP_SENT &&
	    id->state != CM_REP_RCVD) {
		pthread_mutex_unlock(&sctx->cm_lock);
		return -OPENRDMA_ENOTCONN;
	}
	cm_send(id, SHM_MSG_CM_DREQ, 0, 0, NULL, private_data,
		private_data_len);
	id->state = CM_DISCONNECTED;
	sw_cm_qp_error(id->base.qp);
	post_simple(id, OPENRDMA_CM_EVENT_DISCONNECTED, 0);
	pthread_mutex_unlock(&sctx->cm_lock);
	shm_prog_run(sctx, drop_socket_cmd, id);
	return 0;
}

int shm_cm_local_addr(struct openrdma_cm_id *base,
		      struct sockaddr_storage *addr)
{
	struct shm_cm_id *id = to_cm_id(base);

	pthread_mutex_lock(&id->ctx->cm_lock);
	*addr = id->local;
	pthread_mutex_unlock(&id->ctx->cm_lock);
	return 0;
}

int shm_cm_peer_addr(struct openrdma_cm_id *base, struct sockaddr_storage *addr)
{
	struct shm_cm_id *id = to_cm_id(base);

	pthread_mutex_lock(&id->ctx->cm_lock);
	*addr = id->peer;
	pthread_mutex_unlock(&id->ctx->cm_lock);
	return 0;
}
