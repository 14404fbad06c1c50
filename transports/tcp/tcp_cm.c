/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The connection manager of tcp.  A listening id owns a listening socket;
 * connect opens a TCP connection to it, which then carries the CM's frames
 * and, once established, the QP pair's traffic:
 *
 *   active                     passive
 *   CONNECT (QPN, IRD/ORD, pdata) ->     CONNECT_REQUEST on a new id
 *                <- ACCEPT (QPN, IRD/ORD, pdata)   openrdma_cm_accept()
 *   ESTABLISHED (or CONNECT_RESPONSE, three-way)
 *   RTU ->                               ESTABLISHED
 *
 * A connected socket that the application hands over on both of its ends
 * (openrdma_cm_adopt_socket) runs the same frames without a listener: the
 * end with the lower address and port is active and sends CONNECT, the
 * other one waits for it (CM_ADOPT_WAIT) and answers ACCEPT on its own.
 *
 * REJECT answers a CONNECT (the application's, or the backlog's), and
 * DISCONNECT ends a connection with private data; both are the last frame
 * their sender writes.  A connection that ends without them (peer killed,
 * reset, silent) is reported as DISCONNECTED, or as UNREACHABLE or
 * CONNECT_ERROR while connecting.
 *
 * ctx->cm_lock guards every id's state and its links to connections and
 * listeners; it is held for a whole operation, event posts and QP moves
 * included (none of them calls back into the CM).
 */
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <utlist.h>

#include <openrdma/log.h>

#include "core/sw/sw_ops.h"
#include "transports/tcp/tcp.h"

/* Accepted connections that may sit before their CONNECT, beyond the
 * backlog: more are refused at once (a flood). */
#define WAITING_SLACK 16

enum cm_state {
	CM_IDLE,
	CM_LISTEN,
	CM_REQ_SENT, /* active: connecting, or waiting for accept or reject */
	CM_REQ_RCVD, /* passive: the application has the request */
	CM_REP_RCVD, /* active, three-way: the application has the response */
	CM_REP_SENT, /* passive: waiting for the active's RTU */
	CM_ADOPT_WAIT, /* adopted socket, passive: waiting for its CONNECT */
	CM_ESTABLISHED,
	CM_DISCONNECTED,
};

struct tcp_listener;

struct tcp_cm_id {
	struct openrdma_cm_id base;
	struct tcp_ctx *ctx;
	enum cm_state state;
	struct sockaddr_storage local;
	struct sockaddr_storage peer;
	struct tcp_conn *conn; /* holds a reference */
	uint32_t peer_qpn;
	struct sw_cm_param mine;
	struct sw_cm_param theirs;
	/* connect's private data, sent once the connection is up (adopted,
	 * passive: sent with the ACCEPT) */
	uint8_t pdata[TCP_FRAME_PDATA_CONNECT];
	uint8_t pdata_len;
	/* an adopted socket: the passive end keeps the CONNECT's private data
	 * for its ESTABLISHED */
	bool adopted;
	uint8_t peer_pdata[TCP_FRAME_PDATA_CONNECT];
	uint8_t peer_pdata_len;
	/* listener: its socket, backlog and requests not yet answered */
	struct tcp_listener *lsn;
	int backlog;
	int pending;
	struct tcp_cm_id *requests;
	/* passive id while its request is pending */
	struct tcp_cm_id *listener;
	struct tcp_cm_id *prev, *next; /* on the listener's requests */
};

/*
 * A listening socket.  Separate from its id, because the progress thread
 * may still hold an epoll event for it after the id is gone: it is freed
 * by the progress thread (tcp_cm_reap_listeners), never in between.
 */
struct tcp_listener {
	struct tcp_poll poll;
	struct tcp_ctx *ctx;
	struct tcp_cm_id *id; /* NULL once the id let go */
	struct tcp_conn *waiting; /* accepted, no CONNECT yet */
	int nwaiting;
	struct tcp_listener *next;
};

static struct tcp_cm_id *to_cm_id(struct openrdma_cm_id *id)
{
	return openrdma_container_of(id, struct tcp_cm_id, base);
}

static uint64_t deadline_from_now(struct tcp_ctx *tctx)
{
	return tcp_now() + (uint64_t)tctx->prm.connect_timeout_ms * 1000000u;
}

static void param_from_frame(struct sw_cm_param *p, const struct tcp_frame *f)
{
	memset(p, 0, sizeof(*p));
	p->responder_resources = f->responder_resources < TCP_MAX_RD_ATOM ?
					 f->responder_resources :
					 TCP_MAX_RD_ATOM;
	p->initiator_depth = f->initiator_depth < TCP_MAX_RD_ATOM ?
				     f->initiator_depth :
				     TCP_MAX_RD_ATOM;
	p->retry_count = f->retry_count;
	p->rnr_retry_count = f->rnr_retry_count;
	p->three_way = f->three_way;
}

static void frame_param(struct tcp_frame *f, uint8_t opcode,
			const struct sw_cm_param *p, uint32_t qpn)
{
	memset(f, 0, sizeof(*f));
	f->opcode = opcode;
	f->src_qpn = qpn;
	f->responder_resources = p->responder_resources;
	f->initiator_depth = p->initiator_depth;
	f->retry_count = p->retry_count;
	f->rnr_retry_count = p->rnr_retry_count;
	f->three_way = opcode == TCP_OP_CONNECT && p->three_way;
}

static void event_init(struct openrdma_cm_event *ev,
		       enum openrdma_cm_event_type type,
		       const struct tcp_cm_id *id)
{
	sw_cm_event_init(ev, type, &id->peer, &id->local);
}

static void post_simple(struct tcp_cm_id *id, enum openrdma_cm_event_type t,
			int status)
{
	sw_cm_event_post_status(&id->base, t, status, &id->peer, &id->local);
}

/* Brings qp to RTS towards the QP numbered dest_qpn at peer. */
static int qp_connect(struct openrdma_qp *qp, uint32_t dest_qpn,
		      const struct sockaddr_storage *peer,
		      const struct sw_cm_param *mine,
		      const struct sw_cm_param *theirs)
{
	struct sw_cm_path path = { .port_num = TCP_PORT,
				   .addr = *peer,
				   .dest_qpn = dest_qpn };

	return sw_cm_qp_connect(qp, &to_tcp_qp(qp)->sw, &path, mine, theirs);
}

/* Ends a pending request on its listener.  Called with cm_lock held. */
static void request_done(struct tcp_cm_id *id)
{
	struct tcp_cm_id *l = id->listener;

	if (!l)
		return;
	DL_DELETE(l->requests, id);
	l->pending--;
	id->listener = NULL;
}

/* Lets go of the id's connection: the progress thread no longer reports
 * it to the id.  Called with cm_lock held. */
static struct tcp_conn *conn_unlink(struct tcp_cm_id *id)
{
	struct tcp_conn *conn = id->conn;

	if (conn)
		conn->id = NULL;
	id->conn = NULL;
	return conn;
}

/* Queues a frame on the id's connection; last: the final word (REJECT,
 * DISCONNECT), after which our side of it is closed. */
static int send_frame(struct tcp_cm_id *id, const struct tcp_frame *f,
		      const void *pdata, unsigned int len, bool last)
{
	if (!id->conn)
		return -OPENRDMA_ECONNABORTED;
	if (last)
		id->conn->bye = true;
	return tcp_tx_ctl(id->conn, f, pdata, len, last);
}

static int send_reject(struct tcp_cm_id *id, int reason, const void *pdata,
		       unsigned int len)
{
	struct tcp_frame f;

	memset(&f, 0, sizeof(f));
	f.opcode = TCP_OP_REJECT;
	f.reason = reason;
	return send_frame(id, &f, pdata, len, true);
}

/* ------------------------------------------------------------------ */
/* Ids                                                                */
/* ------------------------------------------------------------------ */

int tcp_cm_id_create(struct openrdma_context *ctx, enum openrdma_port_space ps,
		     struct openrdma_cm_id **id_out)
{
	struct tcp_cm_id *id;

	id = calloc(1, sizeof(*id));
	if (!id)
		return -OPENRDMA_ENOMEM;
	id->ctx = to_tcp_ctx(ctx);
	id->base.port_num = TCP_PORT;
	id->state = CM_IDLE;
	*id_out = &id->base;
	return 0;
}

static void listener_close(struct tcp_cm_id *id)
{
	struct tcp_listener *l = id->lsn;
	struct tcp_ctx *tctx = id->ctx;
	struct tcp_cm_id *r, *tmp;
	struct tcp_conn *conn;

	/* requests the application holds outlive their listener */
	DL_FOREACH_SAFE (id->requests, r, tmp) {
		DL_DELETE(id->requests, r);
		r->listener = NULL;
	}
	id->pending = 0;
	if (!l)
		return;
	id->lsn = NULL;
	l->id = NULL;
	tcp_poll_del(tctx, &l->poll);
	close(l->poll.fd);
	l->poll.fd = -1;
	while ((conn = l->waiting)) {
		DL_DELETE2(l->waiting, conn, lprev, lnext);
		conn->listener = NULL;
		tcp_conn_close(conn, -OPENRDMA_ECONNREFUSED, true);
		tcp_conn_put(conn);
	}
	/* freed by the progress thread, which may hold an event for it */
	pthread_mutex_lock(&tctx->lock);
	LL_PREPEND(tctx->dead_listeners, l);
	pthread_mutex_unlock(&tctx->lock);
	tcp_progress_wake(tctx);
}

void tcp_cm_reap_listeners(struct tcp_ctx *tctx)
{
	struct tcp_listener *list, *l;

	pthread_mutex_lock(&tctx->lock);
	list = tctx->dead_listeners;
	tctx->dead_listeners = NULL;
	pthread_mutex_unlock(&tctx->lock);
	while ((l = list)) {
		list = l->next;
		free(l);
	}
}

int tcp_cm_id_destroy(struct openrdma_cm_id *base)
{
	struct tcp_cm_id *id = to_cm_id(base);
	struct tcp_ctx *tctx = id->ctx;
	struct tcp_frame f;
	struct tcp_conn *conn;
	bool abortive = false, bye = false;

	pthread_mutex_lock(&tctx->cm_lock);
	listener_close(id);
	request_done(id);
	switch (id->state) {
	case CM_REQ_RCVD:
		/* an unanswered request is refused */
		send_reject(id, TCP_REJ_CONSUMER, NULL, 0);
		break;
	case CM_REQ_SENT:
	case CM_ADOPT_WAIT:
		/* the request vanishes: the passive side's accept fails */
		abortive = true;
		break;
	case CM_REP_SENT:
	case CM_REP_RCVD:
	case CM_ESTABLISHED:
		/* a connection ends as if disconnected */
		memset(&f, 0, sizeof(f));
		f.opcode = TCP_OP_DISCONNECT;
		send_frame(id, &f, NULL, 0, true);
		break;
	default:
		break;
	}
	conn = conn_unlink(id);
	/* bye is written under cm_lock by the frames of the peer */
	if (conn)
		bye = conn->bye;
	pthread_mutex_unlock(&tctx->cm_lock);
	if (conn) {
		/* after its last frame the peer closes, or abortively now */
		if (abortive || !bye)
			tcp_conn_close(conn, -OPENRDMA_ECONNABORTED, true);
		tcp_conn_put(conn);
	}
	free(id);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Listening                                                          */
/* ------------------------------------------------------------------ */

static void listener_event(struct tcp_poll *poll, uint32_t events);

int tcp_cm_listen(struct openrdma_cm_id *base, const struct sockaddr *addr,
		  int backlog)
{
	struct tcp_cm_id *id = to_cm_id(base);
	struct tcp_ctx *tctx = id->ctx;
	struct sockaddr_storage ss;
	struct tcp_listener *l;
	socklen_t len;
	int ret, fd;

	if (base->ps != OPENRDMA_PS_TCP)
		return -OPENRDMA_EOPNOTSUPP;
	memset(&ss, 0, sizeof(ss));
	memcpy(&ss, addr, sw_addr_len(addr));
	/* the wildcard of an interface bound to one address is that address
	 * (tcp0's stays the wildcard: every address) */
	if (sw_addr_is_any(addr) &&
	    !sw_addr_is_any((struct sockaddr *)&tctx->bind_addr)) {
		ss = tctx->bind_addr;
		sw_addr_set_port((struct sockaddr *)&ss, sw_addr_port(addr));
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return -OPENRDMA_ENOMEM;
	pthread_mutex_lock(&tctx->cm_lock);
	if (id->state != CM_IDLE || id->conn) {
		ret = -OPENRDMA_EINVAL;
		goto err;
	}
	if (!backlog)
		backlog = SW_CM_DEFAULT_BACKLOG;
	ret = tcp_sock_listen(tctx, (struct sockaddr *)&ss,
			      backlog + WAITING_SLACK, &fd);
	if (ret) {
		if (ret == -EADDRNOTAVAIL || ret == -EAFNOSUPPORT)
			ret = -OPENRDMA_EADDRNOTAVAIL;
		goto err;
	}
	len = sizeof(id->local);
	getsockname(fd, (struct sockaddr *)&id->local, &len);
	tcp_addr_normalize(&id->local);
	l->poll.fd = fd;
	l->poll.fn = listener_event;
	l->ctx = tctx;
	l->id = id;
	ret = tcp_poll_add(tctx, &l->poll, EPOLLIN | EPOLLET);
	if (ret) {
		close(fd);
		goto err;
	}
	id->lsn = l;
	id->backlog = backlog;
	id->state = CM_LISTEN;
	pthread_mutex_unlock(&tctx->cm_lock);
	return 0;

err:
	pthread_mutex_unlock(&tctx->cm_lock);
	free(l);
	return ret;
}

/* Progress thread: connections on a listening socket. */
static void listener_event(struct tcp_poll *poll, uint32_t events)
{
	struct tcp_listener *l =
		openrdma_container_of(poll, struct tcp_listener, poll);
	struct tcp_ctx *tctx = l->ctx;
	struct sockaddr_storage ss;
	struct tcp_conn *conn;
	socklen_t len;
	int fd;

	pthread_mutex_lock(&tctx->cm_lock);
	while (l->id) {
		len = sizeof(ss);
		fd = accept4(l->poll.fd, (struct sockaddr *)&ss, &len,
			     SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			break; /* EAGAIN; or out of fds: retried on the next */
		}
		/* connections that never say CONNECT are a flood */
		if (l->nwaiting >= l->id->backlog + WAITING_SLACK ||
		    tcp_conn_create(tctx, fd, TCP_CONN_CM_PASSIVE, &conn)) {
			close(fd);
			continue;
		}
		conn->peer = ss;
		tcp_addr_normalize(&conn->peer);
		len = sizeof(conn->local);
		getsockname(fd, (struct sockaddr *)&conn->local, &len);
		tcp_addr_normalize(&conn->local);
		conn->deadline = deadline_from_now(tctx);
		tcp_sock_tune(tctx, fd);
		conn->listener = l;
		DL_APPEND2(l->waiting, conn, lprev, lnext);
		l->nwaiting++;
		if (tcp_conn_start(conn, TCP_CONN_OPEN)) {
			DL_DELETE2(l->waiting, conn, lprev, lnext);
			l->nwaiting--;
			conn->listener = NULL;
			tcp_conn_put(conn);
		}
		/* the listener's reference is the creator's */
	}
	pthread_mutex_unlock(&tctx->cm_lock);
}

/* ------------------------------------------------------------------ */
/* Connecting                                                         */
/* ------------------------------------------------------------------ */

/* A connect that did not get through: the QP is left in ERR
 * (openrdma_cm(3)).  Called with cm_lock held. */
static void connect_failed(struct tcp_cm_id *id,
			   enum openrdma_cm_event_type type, int status)
{
	id->state = CM_IDLE;
	sw_cm_qp_error(id->base.qp);
	post_simple(id, type, status);
}

/* Connection errors that mean "nobody there". */
static bool unreachable(int err)
{
	switch (-err) {
	case ECONNREFUSED:
	case EHOSTUNREACH:
	case ENETUNREACH:
	case ETIMEDOUT:
	case EADDRNOTAVAIL:
	case ENETDOWN:
		return true;
	default:
		return false;
	}
}

int tcp_cm_connect(struct openrdma_cm_id *base, struct openrdma_qp *qp,
		   const struct sockaddr *dst,
		   const struct openrdma_conn_param *param)
{
	struct tcp_cm_id *id = to_cm_id(base);
	struct tcp_ctx *tctx = id->ctx;
	struct sockaddr_storage bind_to;
	struct tcp_conn *conn;
	int ret = 0, fd;

	if (base->ps != OPENRDMA_PS_TCP)
		return -OPENRDMA_EOPNOTSUPP;
	pthread_mutex_lock(&tctx->cm_lock);
	if (id->state != CM_IDLE || id->conn) {
		ret = id->state == CM_LISTEN ? -OPENRDMA_EINVAL :
					       -OPENRDMA_EISCONN;
		goto out;
	}
	id->adopted = false;
	sw_cm_param_set(&id->mine, param, TCP_MAX_RD_ATOM);
	id->pdata_len = param ? param->private_data_len : 0;
	if (id->pdata_len)
		memcpy(id->pdata, param->private_data, id->pdata_len);
	memset(&id->peer, 0, sizeof(id->peer));
	memcpy(&id->peer, dst, sw_addr_len(dst));
	tcp_addr_normalize(&id->peer);
	tcp_qp_set_cm(to_tcp_qp(qp));

	ret = tcp_sock_open(tctx, dst->sa_family, SOCK_STREAM, &fd);
	if (ret)
		goto out;
	/* an interface bound to one address leaves from it */
	if (!sw_addr_is_any((struct sockaddr *)&tctx->bind_addr) &&
	    tctx->bind_addr.ss_family == dst->sa_family) {
		bind_to = tctx->bind_addr;
		bind(fd, (struct sockaddr *)&bind_to,
		     sw_addr_len((struct sockaddr *)&bind_to));
	}
	if (connect(fd, dst, sw_addr_len(dst)) && errno != EINPROGRESS) {
		ret = -errno;
		close(fd);
		/* address and route resolution failed, or nobody listens */
		connect_failed(id,
			       unreachable(ret) ?
				       OPENRDMA_CM_EVENT_UNREACHABLE :
				       OPENRDMA_CM_EVENT_CONNECT_ERROR,
			       ret);
		ret = 0;
		goto out;
	}
	ret = tcp_conn_create(tctx, fd, TCP_CONN_CM_ACTIVE, &conn);
	if (ret) {
		close(fd);
		goto out;
	}
	conn->peer = id->peer;
	conn->deadline = deadline_from_now(tctx);
	conn->id = id;
	id->conn = conn; /* the creator's reference */
	id->state = CM_REQ_SENT;
	ret = tcp_conn_start(conn, TCP_CONN_CONNECTING);
	if (ret) {
		conn_unlink(id);
		id->state = CM_IDLE;
		tcp_conn_put(conn);
	}
out:
	pthread_mutex_unlock(&tctx->cm_lock);
	return ret;
}

void tcp_cm_connected(struct tcp_conn *conn)
{
	struct tcp_ctx *tctx = conn->ctx;
	struct tcp_cm_id *id;
	struct tcp_frame f;

	pthread_mutex_lock(&tctx->cm_lock);
	id = conn->id;
	if (id && id->state == CM_REQ_SENT && id->base.qp) {
		id->local = conn->local;
		frame_param(&f, TCP_OP_CONNECT, &id->mine, id->base.qp->qp_num);
		if (send_frame(id, &f, id->pdata, id->pdata_len, false))
			tcp_conn_close(conn, -OPENRDMA_ENOMEM, true);
	}
	pthread_mutex_unlock(&tctx->cm_lock);
}

/* ------------------------------------------------------------------ */
/* Adopting a connected socket                                        */
/* ------------------------------------------------------------------ */

/* Orders two socket addresses: family, address bytes, then port. */
static int addr_cmp(const struct sockaddr_storage *a,
		    const struct sockaddr_storage *b)
{
	const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)a;
	const struct sockaddr_in6 *b6 = (const struct sockaddr_in6 *)b;
	const struct sockaddr_in *a4 = (const struct sockaddr_in *)a;
	const struct sockaddr_in *b4 = (const struct sockaddr_in *)b;
	int ret;

	if (a->ss_family != b->ss_family)
		return a->ss_family < b->ss_family ? -1 : 1;
	if (a->ss_family == AF_INET6)
		ret = memcmp(&a6->sin6_addr, &b6->sin6_addr,
			     sizeof(a6->sin6_addr));
	else
		ret = memcmp(&a4->sin_addr, &b4->sin_addr,
			     sizeof(a4->sin_addr));
	if (ret)
		return ret;
	if (sw_addr_port((const struct sockaddr *)a) ==
	    sw_addr_port((const struct sockaddr *)b))
		return 0;
	return sw_addr_port((const struct sockaddr *)a) <
			       sw_addr_port((const struct sockaddr *)b) ?
		       -1 :
		       1;
}

/*
 * Nobody stands between two adopting ends to settle the read depths: each
 * takes the smaller of its offer and what the other end's offer allows, so
 * that both arrive at the same numbers.
 */
static void adopt_negotiate(struct tcp_cm_id *id)
{
	struct sw_cm_param *m = &id->mine;
	const struct sw_cm_param *t = &id->theirs;

	if (m->responder_resources > t->initiator_depth)
		m->responder_resources = t->initiator_depth;
	if (m->initiator_depth > t->responder_resources)
		m->initiator_depth = t->responder_resources;
}

/* Passive end of an adopted socket: the active end's CONNECT.  Answers it
 * as accept_request() would, with the data given to the adoption.  Called
 * with cm_lock held. */
static void adopt_on_connect(struct tcp_cm_id *id, const struct tcp_frame *f,
			     const uint8_t *pdata)
{
	struct tcp_conn *conn = id->conn;
	struct openrdma_qp *qp = id->base.qp;
	struct tcp_frame a;
	int ret;

	conn->greeted = true;
	pthread_mutex_lock(&id->ctx->lock);
	conn->deadline = 0;
	pthread_mutex_unlock(&id->ctx->lock);
	id->peer_qpn = f->src_qpn;
	param_from_frame(&id->theirs, f);
	adopt_negotiate(id);
	id->peer_pdata_len = (uint8_t)f->length;
	if (f->length)
		memcpy(id->peer_pdata, pdata, f->length);

	tcp_qp_attach_cm(to_tcp_qp(qp), conn, id->peer_qpn);
	ret = qp_connect(qp, id->peer_qpn, &id->peer, &id->mine, &id->theirs);
	if (ret) {
		send_reject(id, ret, NULL, 0);
		connect_failed(id, OPENRDMA_CM_EVENT_CONNECT_ERROR, ret);
		return;
	}
	id->state = CM_REP_SENT;
	frame_param(&a, TCP_OP_ACCEPT, &id->mine, qp->qp_num);
	if (send_frame(id, &a, id->pdata, id->pdata_len, false))
		tcp_conn_close(conn, -OPENRDMA_ENOMEM, true);
}

int tcp_cm_adopt(struct openrdma_cm_id *base, struct openrdma_qp *qp, int fd,
		 const struct openrdma_conn_param *param)
{
	struct tcp_cm_id *id = to_cm_id(base);
	struct tcp_ctx *tctx = id->ctx;
	struct sockaddr_storage local, peer;
	struct tcp_conn *conn;
	struct tcp_frame f;
	socklen_t len;
	int ret, fl, fdfl, cmp;

	len = sizeof(local);
	if (getsockname(fd, (struct sockaddr *)&local, &len))
		return -errno;
	len = sizeof(peer);
	if (getpeername(fd, (struct sockaddr *)&peer, &len))
		return -OPENRDMA_ENOTCONN;
	tcp_addr_normalize(&local);
	tcp_addr_normalize(&peer);
	cmp = addr_cmp(&local, &peer);
	/* connected to itself: its CONNECT would come back to it */
	if (!cmp)
		return -OPENRDMA_EINVAL;
	fl = fcntl(fd, F_GETFL);
	fdfl = fcntl(fd, F_GETFD);
	if (fl < 0 || fdfl < 0)
		return -OPENRDMA_EINVAL;

	pthread_mutex_lock(&tctx->cm_lock);
	if (id->state != CM_IDLE || id->conn) {
		ret = id->state == CM_LISTEN ? -OPENRDMA_EINVAL :
					       -OPENRDMA_EISCONN;
		goto err_unlock;
	}
	/* our sockets never block, and none leaks into a program exec'ed */
	if (fcntl(fd, F_SETFL, fl | O_NONBLOCK) ||
	    fcntl(fd, F_SETFD, fdfl | FD_CLOEXEC)) {
		ret = -errno;
		goto err_flags;
	}
	ret = tcp_conn_create(
		tctx, fd, cmp < 0 ? TCP_CONN_CM_ACTIVE : TCP_CONN_CM_PASSIVE,
		&conn);
	if (ret)
		goto err_flags;
	sw_cm_param_set(&id->mine, param, TCP_MAX_RD_ATOM);
	id->pdata_len = param ? param->private_data_len : 0;
	if (id->pdata_len)
		memcpy(id->pdata, param->private_data, id->pdata_len);
	id->local = local;
	id->peer = peer;
	id->adopted = true;
	tcp_qp_set_cm(to_tcp_qp(qp));
	conn->local = local;
	conn->peer = peer;
	/* the peer converts within the handshake's time, or it failed */
	conn->deadline = deadline_from_now(tctx);
	conn->id = id;
	id->conn = conn; /* the creator's reference */
	if (cmp < 0) {
		/* queued now, written once the progress thread has it */
		id->state = CM_REQ_SENT;
		frame_param(&f, TCP_OP_CONNECT, &id->mine, qp->qp_num);
		ret = tcp_tx_ctl(conn, &f, id->pdata, id->pdata_len, false);
		if (ret)
			goto err_conn;
	} else {
		id->state = CM_ADOPT_WAIT;
	}
	ret = tcp_conn_start(conn, TCP_CONN_OPEN);
	if (ret)
		goto err_conn;
	tcp_sock_tune(tctx, fd);
	/* the CONNECT leaves now rather than on the first EPOLLOUT */
	tcp_tx_kick(conn);
	pthread_mutex_unlock(&tctx->cm_lock);
	return 0;

err_conn:
	conn_unlink(id);
	id->state = CM_IDLE;
	id->adopted = false;
	/* the socket is still the caller's: the connection must not close it */
	conn->poll.fd = -1;
	tcp_conn_put(conn);
err_flags:
	fcntl(fd, F_SETFL, fl);
	fcntl(fd, F_SETFD, fdfl);
err_unlock:
	pthread_mutex_unlock(&tctx->cm_lock);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Answering                                                          */
/* ------------------------------------------------------------------ */

/* Passive side: answers the request on id with qp. */
static int accept_request(struct tcp_cm_id *id, struct openrdma_qp *qp,
			  const struct openrdma_conn_param *param)
{
	struct tcp_frame f;
	int ret;

	if (!id->conn)
		return -OPENRDMA_ECONNABORTED;
	sw_cm_param_set(&id->mine, param, TCP_MAX_RD_ATOM);
	tcp_qp_set_cm(to_tcp_qp(qp));
	/* attached first: its first requests follow our ACCEPT closely */
	tcp_qp_attach_cm(to_tcp_qp(qp), id->conn, id->peer_qpn);
	ret = qp_connect(qp, id->peer_qpn, &id->peer, &id->mine, &id->theirs);
	if (ret)
		return ret;
	request_done(id);
	id->state = CM_REP_SENT;
	frame_param(&f, TCP_OP_ACCEPT, &id->mine, qp->qp_num);
	return send_frame(id, &f, param ? param->private_data : NULL,
			  param ? param->private_data_len : 0, false);
}

/* Active side: the passive side accepted. */
static void on_accept(struct tcp_cm_id *id, const struct tcp_frame *f,
		      const uint8_t *pdata)
{
	struct openrdma_qp *qp = id->base.qp;
	struct openrdma_cm_event ev;
	struct tcp_frame rtu;
	int ret;

	id->peer_qpn = f->src_qpn;
	param_from_frame(&id->theirs, f);
	if (id->adopted)
		adopt_negotiate(id);
	if (id->mine.three_way) {
		id->state = CM_REP_RCVD;
		event_init(&ev, OPENRDMA_CM_EVENT_CONNECT_RESPONSE, id);
		sw_cm_event_param(&ev, &id->theirs, id->peer_qpn);
		sw_cm_event_pdata(&ev, pdata, f->length);
		sw_cm_event_post(&id->base, &ev);
		return;
	}
	tcp_qp_attach_cm(to_tcp_qp(qp), id->conn, id->peer_qpn);
	ret = qp_connect(qp, id->peer_qpn, &id->peer, &id->mine, &id->theirs);
	if (ret) {
		/* this side cannot take the connection */
		send_reject(id, ret, NULL, 0);
		connect_failed(id, OPENRDMA_CM_EVENT_CONNECT_ERROR, ret);
		return;
	}
	id->state = CM_ESTABLISHED;
	event_init(&ev, OPENRDMA_CM_EVENT_ESTABLISHED, id);
	sw_cm_event_param(&ev, &id->theirs, id->peer_qpn);
	sw_cm_event_pdata(&ev, pdata, f->length);
	sw_cm_event_post(&id->base, &ev);
	memset(&rtu, 0, sizeof(rtu));
	rtu.opcode = TCP_OP_RTU;
	send_frame(id, &rtu, NULL, 0, false);
}

/* Active side: completes a three-way handshake (the RTU). */
static int accept_response(struct tcp_cm_id *id)
{
	struct openrdma_qp *qp = id->base.qp;
	struct tcp_frame rtu;
	int ret;

	if (!id->conn)
		return -OPENRDMA_ECONNABORTED;
	tcp_qp_attach_cm(to_tcp_qp(qp), id->conn, id->peer_qpn);
	ret = qp_connect(qp, id->peer_qpn, &id->peer, &id->mine, &id->theirs);
	if (ret)
		return ret;
	id->state = CM_ESTABLISHED;
	memset(&rtu, 0, sizeof(rtu));
	rtu.opcode = TCP_OP_RTU;
	return send_frame(id, &rtu, NULL, 0, false);
}

int tcp_cm_accept(struct openrdma_cm_id *base, struct openrdma_qp *qp,
		  const struct openrdma_conn_param *param)
{
	struct tcp_cm_id *id = to_cm_id(base);
	int ret;

	pthread_mutex_lock(&id->ctx->cm_lock);
	switch (id->state) {
	case CM_REQ_RCVD:
		ret = qp ? accept_request(id, qp, param) : -OPENRDMA_EINVAL;
		break;
	case CM_REP_RCVD:
		ret = accept_response(id);
		break;
	default:
		ret = -OPENRDMA_EINVAL;
		break;
	}
	pthread_mutex_unlock(&id->ctx->cm_lock);
	return ret;
}

int tcp_cm_reject(struct openrdma_cm_id *base, const void *private_data,
		  uint8_t private_data_len)
{
	struct tcp_cm_id *id = to_cm_id(base);
	struct tcp_conn *conn = NULL;
	int ret = 0;

	pthread_mutex_lock(&id->ctx->cm_lock);
	if (id->state != CM_REQ_RCVD && id->state != CM_REP_RCVD) {
		ret = -OPENRDMA_EINVAL;
		goto out;
	}
	request_done(id);
	/* a rejected connection leaves the QP that waited for it in ERR, as
	 * the IB CM does */
	if (id->state == CM_REP_RCVD)
		sw_cm_qp_error(id->base.qp);
	id->state = CM_IDLE;
	send_reject(id, TCP_REJ_CONSUMER, private_data, private_data_len);
	/* the peer closes once it read the REJECT */
	conn = conn_unlink(id);
out:
	pthread_mutex_unlock(&id->ctx->cm_lock);
	if (conn)
		tcp_conn_put(conn);
	return ret;
}

int tcp_cm_disconnect(struct openrdma_cm_id *base, const void *private_data,
		      uint8_t private_data_len)
{
	struct tcp_cm_id *id = to_cm_id(base);
	struct tcp_frame f;
	int ret = 0;

	pthread_mutex_lock(&id->ctx->cm_lock);
	if (id->state != CM_ESTABLISHED && id->state != CM_REP_SENT &&
	    id->state != CM_REP_RCVD) {
		ret = -OPENRDMA_ENOTCONN;
		goto out;
	}
	id->state = CM_DISCONNECTED;
	memset(&f, 0, sizeof(f));
	f.opcode = TCP_OP_DISCONNECT;
	send_frame(id, &f, private_data, private_data_len, true);
	sw_cm_qp_error(id->base.qp);
	post_simple(id, OPENRDMA_CM_EVENT_DISCONNECTED, 0);
out:
	pthread_mutex_unlock(&id->ctx->cm_lock);
	return ret;
}

int tcp_cm_local_addr(struct openrdma_cm_id *base,
		      struct sockaddr_storage *addr)
{
	struct tcp_cm_id *id = to_cm_id(base);

	pthread_mutex_lock(&id->ctx->cm_lock);
	*addr = id->local;
	pthread_mutex_unlock(&id->ctx->cm_lock);
	return 0;
}

int tcp_cm_peer_addr(struct openrdma_cm_id *base, struct sockaddr_storage *addr)
{
	struct tcp_cm_id *id = to_cm_id(base);

	pthread_mutex_lock(&id->ctx->cm_lock);
	*addr = id->peer;
	pthread_mutex_unlock(&id->ctx->cm_lock);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Frames from the peer (progress thread)                             */
/* ------------------------------------------------------------------ */

/*
 * Passive side: a CONNECT on a connection a listener accepted.  Called
 * with cm_lock held.  Returns a new id that could not be reported (its
 * listener is going away), for the caller to destroy without the lock.
 */
static struct tcp_cm_id *on_connect(struct tcp_conn *conn,
				    const struct tcp_frame *f,
				    const uint8_t *pdata)
{
	struct tcp_listener *l = conn->listener;
	struct openrdma_cm_event ev;
	struct openrdma_cm_id *nbase;
	struct tcp_cm_id *lid, *n;
	struct tcp_frame rej;

	if (!l || !l->id) {
		tcp_conn_close(conn, -OPENRDMA_ECONNREFUSED, true);
		return NULL;
	}
	lid = l->id;
	DL_DELETE2(l->waiting, conn, lprev, lnext);
	l->nwaiting--;
	conn->listener = NULL;
	conn->greeted = true;
	pthread_mutex_lock(&conn->ctx->lock);
	conn->deadline = 0;
	pthread_mutex_unlock(&conn->ctx->lock);

	if (lid->pending >= lid->backlog ||
	    openrdma_cm_id_new_request(&lid->base, &nbase)) {
		/* the backlog is full: refused */
		memset(&rej, 0, sizeof(rej));
		rej.opcode = TCP_OP_REJECT;
		rej.reason = TCP_REJ_BACKLOG;
		conn->bye = true;
		tcp_tx_ctl(conn, &rej, NULL, 0, true);
		tcp_conn_put(conn); /* the listener's */
		return NULL;
	}
	n = to_cm_id(nbase);
	n->state = CM_REQ_RCVD;
	n->local = conn->local;
	n->peer = conn->peer;
	n->peer_qpn = f->src_qpn;
	param_from_frame(&n->theirs, f);
	n->conn = conn; /* the listener's reference passes to it */
	conn->id = n;
	n->listener = lid;
	DL_APPEND(lid->requests, n);
	lid->pending++;

	event_init(&ev, OPENRDMA_CM_EVENT_CONNECT_REQUEST, n);
	ev.listen_id = &lid->base;
	sw_cm_event_param(&ev, &n->theirs, n->peer_qpn);
	sw_cm_event_pdata(&ev, pdata, f->length);
	if (!openrdma_cm_event_post(&n->base, &ev))
		return NULL;
	/* the listener is being destroyed */
	request_done(n);
	n->state = CM_IDLE;
	tcp_conn_close(conn, -OPENRDMA_ECONNREFUSED, true);
	return n;
}

/* A REJECT: of our CONNECT, of our ACCEPT, or of the three-way response
 * the active side got.  Called with cm_lock held. */
static void on_reject(struct tcp_cm_id *id, const struct tcp_frame *f,
		      const uint8_t *pdata)
{
	struct openrdma_cm_event ev;

	id->conn->bye = true;
	switch (id->state) {
	case CM_REQ_SENT:
		id->state = CM_IDLE;
		sw_cm_qp_error(id->base.qp);
		event_init(&ev, OPENRDMA_CM_EVENT_REJECTED, id);
		ev.status = f->reason;
		sw_cm_event_pdata(&ev, pdata, f->length);
		sw_cm_event_post(&id->base, &ev);
		break;
	case CM_REP_SENT:
		/* the active side could not, or would not, take our accept */
		id->state = CM_IDLE;
		sw_cm_qp_error(id->base.qp);
		post_simple(id, OPENRDMA_CM_EVENT_CONNECT_ERROR, f->reason);
		break;
	default:
		tcp_conn_close(id->conn, -OPENRDMA_EPROTO, true);
		return;
	}
	/* our side ends too: the peer wrote its last */
	tcp_conn_close(id->conn, 0, false);
}

static void on_disconnect(struct tcp_cm_id *id, const struct tcp_frame *f,
			  const uint8_t *pdata)
{
	struct openrdma_cm_event ev;

	id->conn->bye = true;
	switch (id->state) {
	case CM_ESTABLISHED:
	case CM_REP_SENT:
	case CM_REP_RCVD:
		id->state = CM_DISCONNECTED;
		sw_cm_qp_error(id->base.qp);
		event_init(&ev, OPENRDMA_CM_EVENT_DISCONNECTED, id);
		sw_cm_event_pdata(&ev, pdata, f->length);
		sw_cm_event_post(&id->base, &ev);
		break;
	case CM_DISCONNECTED:
		/* both sides hung up at once: each reported its own */
		break;
	default:
		tcp_conn_close(id->conn, -OPENRDMA_EPROTO, true);
		return;
	}
	tcp_conn_close(id->conn, 0, false);
}

void tcp_cm_frame(struct tcp_conn *conn, const struct tcp_frame *f,
		  const uint8_t *pdata)
{
	struct tcp_ctx *tctx = conn->ctx;
	struct tcp_cm_id *id, *orphan = NULL;
	struct openrdma_cm_event ev;

	pthread_mutex_lock(&tctx->cm_lock);
	if (f->opcode == TCP_OP_CONNECT) {
		if (conn->id && conn->id->state == CM_ADOPT_WAIT)
			adopt_on_connect(conn->id, f, pdata);
		else if (conn->kind == TCP_CONN_CM_PASSIVE && !conn->greeted)
			orphan = on_connect(conn, f, pdata);
		else
			tcp_conn_close(conn, -OPENRDMA_EPROTO, true);
		goto out;
	}
	id = conn->id;
	if (!id) {
		/* its id is gone: what the peer says changes nothing */
		if (f->opcode == TCP_OP_REJECT ||
		    f->opcode == TCP_OP_DISCONNECT)
			conn->bye = true;
		goto out;
	}
	switch (f->opcode) {
	case TCP_OP_ACCEPT:
		if (conn->kind != TCP_CONN_CM_ACTIVE ||
		    id->state != CM_REQ_SENT) {
			tcp_conn_close(conn, -OPENRDMA_EPROTO, true);
			break;
		}
		conn->greeted = true;
		pthread_mutex_lock(&tctx->lock);
		conn->deadline = 0;
		pthread_mutex_unlock(&tctx->lock);
		on_accept(id, f, pdata);
		break;
	case TCP_OP_REJECT:
		conn->greeted = true;
		on_reject(id, f, pdata);
		break;
	case TCP_OP_RTU:
		if (conn->kind != TCP_CONN_CM_PASSIVE ||
		    id->state != CM_REP_SENT) {
			tcp_conn_close(conn, -OPENRDMA_EPROTO, true);
			break;
		}
		id->state = CM_ESTABLISHED;
		event_init(&ev, OPENRDMA_CM_EVENT_ESTABLISHED, id);
		sw_cm_event_param(&ev, &id->theirs, id->peer_qpn);
		if (id->adopted) {
			/* what both ends settled on, and the CONNECT's data */
			ev.param.responder_resources =
				id->mine.responder_resources;
			ev.param.initiator_depth = id->mine.initiator_depth;
			sw_cm_event_pdata(&ev, id->peer_pdata,
					  id->peer_pdata_len);
		}
		sw_cm_event_post(&id->base, &ev);
		break;
	case TCP_OP_DISCONNECT:
		on_disconnect(id, f, pdata);
		break;
	default:
		break;
	}
out:
	pthread_mutex_unlock(&tctx->cm_lock);
	if (orphan)
		openrdma_cm_id_destroy(&orphan->base);
}

void tcp_cm_conn_lost(struct tcp_conn *conn, int err)
{
	struct tcp_ctx *tctx = conn->ctx;
	struct tcp_listener *l;
	struct tcp_cm_id *id;
	struct tcp_conn *drop = NULL;

	pthread_mutex_lock(&tctx->cm_lock);
	l = conn->listener;
	if (l) {
		/* accepted, and gone before saying CONNECT */
		DL_DELETE2(l->waiting, conn, lprev, lnext);
		l->nwaiting--;
		conn->listener = NULL;
		drop = conn;
		goto out;
	}
	id = conn->id;
	if (!id)
		goto out;
	drop = conn_unlink(id);
	if (!err)
		err = -OPENRDMA_ECONNRESET;
	switch (id->state) {
	case CM_REQ_SENT:
	case CM_ADOPT_WAIT:
		connect_failed(id,
			       unreachable(err) ?
				       OPENRDMA_CM_EVENT_UNREACHABLE :
				       OPENRDMA_CM_EVENT_CONNECT_ERROR,
			       err);
		break;
	case CM_REQ_RCVD:
		/* the request vanished: accept and reject fail */
		request_done(id);
		break;
	case CM_REP_SENT:
	case CM_REP_RCVD:
	case CM_ESTABLISHED:
		/* peer killed, reset or silent; its QP learns it too */
		id->state = CM_DISCONNECTED;
		post_simple(id, OPENRDMA_CM_EVENT_DISCONNECTED, err);
		break;
	default:
		break;
	}
out:
	pthread_mutex_unlock(&tctx->cm_lock);
	if (drop)
		tcp_conn_put(drop);
}
