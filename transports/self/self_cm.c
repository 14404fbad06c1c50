/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The connection manager of self.  Both ends are in this process, so each
 * CM message is a direct call: connect finds the listener by port in the
 * process's table and posts CONNECT_REQUEST on a new id; accept moves both
 * QPs through INIT, RTR and RTS as an IB CM does on REP and RTU, and posts
 * ESTABLISHED (or CONNECT_RESPONSE when the active side asked for the
 * three-way handshake); reject and disconnect post REJECTED and
 * DISCONNECTED to the other end.
 *
 * One mutex guards every id's state and the links between ids, and is held
 * for a whole operation, event posts and QP moves included: none of those
 * calls back into the CM.  It is never taken under another lock.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <utlist.h>

#include "transports/self/self.h"

enum cm_state {
	CM_IDLE,
	CM_LISTEN,
	CM_REQ_SENT, /* active: waiting for accept or reject */
	CM_REQ_RCVD, /* passive: the application has the request */
	CM_REP_RCVD, /* active, three-way: the application has the response */
	CM_REP_SENT, /* passive, three-way: waiting for the active's accept */
	CM_ESTABLISHED,
	CM_DISCONNECTED,
};

struct self_cm_id {
	struct openrdma_cm_id base;
	enum cm_state state;
	struct sockaddr_storage local;
	struct sockaddr_storage peer;
	uint16_t port; /* bound port, 0 if none */
	/* the other end of a request or connection */
	struct self_cm_id *remote;
	/* listener: its backlog and its requests not yet answered */
	int backlog;
	int pending;
	struct self_cm_id *requests;
	/* passive id while its request is pending */
	struct self_cm_id *listener;
	struct self_cm_id *prev, *next; /* on the listener's requests */
	struct sw_cm_param mine; /* from connect or accept */
	struct sw_cm_param theirs; /* from the other end */
	UT_hash_handle hh; /* bound ports */
};

static pthread_mutex_t cm_lock = PTHREAD_MUTEX_INITIALIZER;
/* every bound id (listeners and connected active ids), by port */
static struct self_cm_id *ports;
static uint16_t next_port = SW_CM_EPHEMERAL_FIRST;

static struct self_cm_id *to_cm_id(struct openrdma_cm_id *id)
{
	return openrdma_container_of(id, struct self_cm_id, base);
}

/* Called with cm_lock held. */
static struct self_cm_id *port_find(uint16_t port)
{
	struct self_cm_id *id;

	HASH_FIND(hh, ports, &port, sizeof(port), id);
	return id;
}

/* Binds id to port (0: an ephemeral one).  Called with cm_lock held. */
static int port_bind(struct self_cm_id *id, uint16_t port)
{
	uint32_t tries;

	if (port) {
		if (port_find(port))
			return -OPENRDMA_EADDRINUSE;
	} else {
		for (tries = 0;
		     tries <= SW_CM_EPHEMERAL_LAST - SW_CM_EPHEMERAL_FIRST;
		     tries++) {
			port = next_port;
			next_port = port == SW_CM_EPHEMERAL_LAST ?
					    SW_CM_EPHEMERAL_FIRST :
					    port + 1;
			if (!port_find(port))
				break;
			port = 0;
		}
		if (!port)
			return -OPENRDMA_EADDRINUSE;
	}
	id->port = port;
	sw_addr_set_port((struct sockaddr *)&id->local, port);
	HASH_ADD(hh, ports, port, sizeof(id->port), id);
	return 0;
}

static void port_unbind(struct self_cm_id *id)
{
	if (!id->port)
		return;
	HASH_DEL(ports, id);
	id->port = 0;
}

static void event_init(struct openrdma_cm_event *ev,
		       enum openrdma_cm_event_type type,
		       const struct self_cm_id *id)
{
	sw_cm_event_init(ev, type, &id->peer, &id->local);
}

static void post_simple(struct self_cm_id *id, enum openrdma_cm_event_type t,
			int status)
{
	sw_cm_event_post_status(&id->base, t, status, &id->peer, &id->local);
}

/* Brings qp to RTS towards the QP numbered dest_qpn in this process. */
static int qp_connect(struct openrdma_qp *qp, uint32_t dest_qpn,
		      const struct sw_cm_param *mine,
		      const struct sw_cm_param *theirs)
{
	struct sw_cm_path path = { .port_num = SELF_PORT,
				   .dest_qpn = dest_qpn };

	self_port_addr(&path.addr);
	return sw_cm_qp_connect(qp, &to_self_qp(qp)->sw, &path, mine, theirs);
}

/* Ends a pending request on its listener.  Called with cm_lock held. */
static void request_done(struct self_cm_id *id)
{
	struct self_cm_id *l = id->listener;

	if (!l)
		return;
	DL_DELETE(l->requests, id);
	l->pending--;
	id->listener = NULL;
}

static void unlink_remote(struct self_cm_id *id)
{
	if (id->remote)
		id->remote->remote = NULL;
	id->remote = NULL;
}

int self_cm_id_create(struct openrdma_context *ctx, enum openrdma_port_space ps,
		      struct openrdma_cm_id **id_out)
{
	struct self_cm_id *id;

	self_port_event(to_self_ctx(ctx));
	id = calloc(1, sizeof(*id));
	if (!id)
		return -OPENRDMA_ENOMEM;
	id->base.port_num = SELF_PORT;
	id->state = CM_IDLE;
	*id_out = &id->base;
	return 0;
}

int self_cm_id_destroy(struct openrdma_cm_id *base)
{
	struct self_cm_id *id = to_cm_id(base), *r, *tmp;
	struct self_cm_id *remote;
	struct openrdma_cm_event ev;

	pthread_mutex_lock(&cm_lock);
	port_unbind(id);
	/* requests the application holds outlive their listener */
	DL_FOREACH_SAFE (id->requests, r, tmp) {
		DL_DELETE(id->requests, r);
		r->listener = NULL;
	}
	request_done(id);
	remote = id->remote;
	unlink_remote(id);
	if (remote) {
		switch (id->state) {
		case CM_REQ_RCVD:
			/* an unanswered request is refused */
			sw_cm_qp_error(remote->base.qp);
			event_init(&ev, OPENRDMA_CM_EVENT_REJECTED, remote);
			ev.status = SELF_REJ_CONSUMER;
			sw_cm_event_post(&remote->base, &ev);
			remote->state = CM_IDLE;
			break;
		case CM_REQ_SENT:
			/* the request vanishes: its accept or reject fails */
			break;
		default:
			/* a connection ends as if disconnected */
			remote->state = CM_DISCONNECTED;
			sw_cm_qp_error(remote->base.qp);
			post_simple(remote, OPENRDMA_CM_EVENT_DISCONNECTED, 0);
			break;
		}
	}
	pthread_mutex_unlock(&cm_lock);
	free(id);
	return 0;
}

static bool local_addr_ok(const struct sockaddr *sa)
{
	return sw_addr_is_any(sa) || self_addr_local(sa);
}

int self_cm_listen(struct openrdma_cm_id *base, const struct sockaddr *addr,
		   int backlog)
{
	struct self_cm_id *id = to_cm_id(base);
	int ret;

	if (base->ps != OPENRDMA_PS_TCP)
		return -OPENRDMA_EOPNOTSUPP;
	if (!local_addr_ok(addr))
		return -OPENRDMA_EADDRNOTAVAIL;
	pthread_mutex_lock(&cm_lock);
	if (id->state != CM_IDLE || id->port) {
		ret = -OPENRDMA_EINVAL;
		goto out;
	}
	memset(&id->local, 0, sizeof(id->local));
	memcpy(&id->local, addr, sw_addr_len(addr));
	ret = port_bind(id, sw_addr_port(addr));
	if (ret)
		goto out;
	id->backlog = backlog ? backlog : SW_CM_DEFAULT_BACKLOG;
	id->state = CM_LISTEN;
out:
	pthread_mutex_unlock(&cm_lock);
	return ret;
}

/* The listener that dst reaches.  Called with cm_lock held. */
static struct self_cm_id *listener_find(const struct sockaddr *dst)
{
	struct self_cm_id *l = port_find(sw_addr_port(dst));

	if (!l || l->state != CM_LISTEN)
		return NULL;
	if (!sw_addr_is_any((struct sockaddr *)&l->local) &&
	    !sw_addr_equal((struct sockaddr *)&l->local, dst, false))
		return NULL;
	return l;
}

/* Posts the request to a new id on the listener.  Called with cm_lock
 * held; returns the new id, or NULL if the request could not be made. */
static struct self_cm_id *request(struct self_cm_id *l, struct self_cm_id *a,
				  const struct sockaddr *dst,
				  const struct openrdma_conn_param *param)
{
	struct openrdma_cm_event ev;
	struct openrdma_cm_id *nbase;
	struct self_cm_id *n;

	if (openrdma_cm_id_new_request(&l->base, &nbase))
		return NULL;
	n = to_cm_id(nbase);
	n->state = CM_REQ_RCVD;
	memcpy(&n->local, dst, sw_addr_len(dst));
	n->peer = a->local;
	n->theirs = a->mine;
	n->remote = a;
	a->remote = n;
	n->listener = l;
	DL_APPEND(l->requests, n);
	l->pending++;

	event_init(&ev, OPENRDMA_CM_EVENT_CONNECT_REQUEST, n);
	ev.listen_id = &l->base;
	sw_cm_event_param(&ev, &a->mine, a->base.qp->qp_num);
	if (param)
		sw_cm_event_pdata(&ev, param->private_data,
				  param->private_data_len);
	if (openrdma_cm_event_post(&n->base, &ev)) {
		/* the listener is being destroyed */
		request_done(n);
		unlink_remote(n);
		n->state = CM_IDLE;
		return NULL;
	}
	return n;
}

/* A connect that did not get through: the QP is left in ERR
 * (openrdma_cm(3)).  Called with cm_lock held. */
static void connect_failed(struct self_cm_id *id,
			   enum openrdma_cm_event_type type, int status)
{
	id->state = CM_IDLE;
	sw_cm_qp_error(id->base.qp);
	post_simple(id, type, status);
}

int self_cm_connect(struct openrdma_cm_id *base, struct openrdma_qp *qp,
		    const struct sockaddr *dst,
		    const struct openrdma_conn_param *param)
{
	struct self_cm_id *id = to_cm_id(base), *l;
	int ret = 0;

	if (base->ps != OPENRDMA_PS_TCP)
		return -OPENRDMA_EOPNOTSUPP;
	pthread_mutex_lock(&cm_lock);
	if (id->state != CM_IDLE) {
		ret = id->state == CM_LISTEN ? -OPENRDMA_EINVAL :
					       -OPENRDMA_EISCONN;
		goto out;
	}
	sw_cm_param_set(&id->mine, param, SELF_MAX_RD_ATOM);
	memcpy(&id->peer, dst, sw_addr_len(dst));
	if (!self_addr_local(dst)) {
		/* address resolution: nothing but loopback is reachable */
		connect_failed(id, OPENRDMA_CM_EVENT_UNREACHABLE,
			       -OPENRDMA_EHOSTUNREACH);
		goto out;
	}
	if (!id->port) {
		self_port_addr(&id->local);
		ret = port_bind(id, 0);
		if (ret)
			goto out;
	}
	l = listener_find(dst);
	if (!l) {
		connect_failed(id, OPENRDMA_CM_EVENT_UNREACHABLE,
			       -OPENRDMA_ECONNREFUSED);
		goto out;
	}
	if (l->pending >= l->backlog) {
		connect_failed(id, OPENRDMA_CM_EVENT_REJECTED,
			       SELF_REJ_BACKLOG);
		goto out;
	}
	id->state = CM_REQ_SENT;
	if (!request(l, id, dst, param))
		connect_failed(id, OPENRDMA_CM_EVENT_REJECTED,
			       SELF_REJ_BACKLOG);
out:
	pthread_mutex_unlock(&cm_lock);
	return ret;
}

/* Passive side: answers the request on id with qp. */
static int accept_request(struct self_cm_id *id, struct openrdma_qp *qp,
			  const struct openrdma_conn_param *param)
{
	struct self_cm_id *a = id->remote;
	struct openrdma_cm_event ev;
	int ret;

	if (!a)
		return -OPENRDMA_ECONNABORTED;
	sw_cm_param_set(&id->mine, param, SELF_MAX_RD_ATOM);
	ret = qp_connect(qp, a->base.qp->qp_num, &id->mine, &id->theirs);
	if (ret)
		return ret;
	request_done(id);
	a->theirs = id->mine;

	if (a->mine.three_way) {
		id->state = CM_REP_SENT;
		a->state = CM_REP_RCVD;
		event_init(&ev, OPENRDMA_CM_EVENT_CONNECT_RESPONSE, a);
	} else {
		ret = qp_connect(a->base.qp, qp->qp_num, &a->mine, &a->theirs);
		if (ret) {
			/* the active side cannot take the connection */
			unlink_remote(id);
			id->state = CM_IDLE;
			a->state = CM_IDLE;
			sw_cm_qp_error(qp);
			post_simple(a, OPENRDMA_CM_EVENT_CONNECT_ERROR, ret);
			return ret;
		}
		id->state = CM_ESTABLISHED;
		a->state = CM_ESTABLISHED;
		event_init(&ev, OPENRDMA_CM_EVENT_ESTABLISHED, a);
	}
	sw_cm_event_param(&ev, &id->mine, qp->qp_num);
	if (param)
		sw_cm_event_pdata(&ev, param->private_data,
				  param->private_data_len);
	sw_cm_event_post(&a->base, &ev);
	if (id->state == CM_ESTABLISHED) {
		event_init(&ev, OPENRDMA_CM_EVENT_ESTABLISHED, id);
		sw_cm_event_param(&ev, &a->mine, a->base.qp->qp_num);
		sw_cm_event_post(&id->base, &ev);
	}
	return 0;
}

/* Active side: completes a three-way handshake (the RTU). */
static int accept_response(struct self_cm_id *id)
{
	struct self_cm_id *p = id->remote;
	struct openrdma_cm_event ev;
	int ret;

	if (!p)
		return -OPENRDMA_ECONNABORTED;
	ret = qp_connect(id->base.qp, p->base.qp->qp_num, &id->mine,
			 &id->theirs);
	if (ret)
		return ret;
	id->state = CM_ESTABLISHED;
	p->state = CM_ESTABLISHED;
	event_init(&ev, OPENRDMA_CM_EVENT_ESTABLISHED, p);
	sw_cm_event_param(&ev, &id->mine, id->base.qp->qp_num);
	sw_cm_event_post(&p->base, &ev);
	return 0;
}

int self_cm_accept(struct openrdma_cm_id *base, struct openrdma_qp *qp,
		   const struct openrdma_conn_param *param)
{
	struct self_cm_id *id = to_cm_id(base);
	int ret;

	pthread_mutex_lock(&cm_lock);
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
	pthread_mutex_unlock(&cm_lock);
	return ret;
}

int self_cm_reject(struct openrdma_cm_id *base, const void *private_data,
		   uint8_t private_data_len)
{
	struct self_cm_id *id = to_cm_id(base), *r;
	struct openrdma_cm_event ev;
	int ret = 0;

	pthread_mutex_lock(&cm_lock);
	r = id->remote;
	if (id->state != CM_REQ_RCVD && id->state != CM_REP_RCVD) {
		ret = -OPENRDMA_EINVAL;
		goto out;
	}
	request_done(id);
	unlink_remote(id);
	/* a rejected connection leaves the QP that waited for it in ERR,
	 * as the IB CM does */
	if (id->state == CM_REP_RCVD)
		sw_cm_qp_error(id->base.qp);
	id->state = CM_IDLE;
	if (!r)
		goto out;
	sw_cm_qp_error(r->base.qp);
	r->state = CM_IDLE;
	event_init(&ev, OPENRDMA_CM_EVENT_REJECTED, r);
	ev.status = SELF_REJ_CONSUMER;
	sw_cm_event_pdata(&ev, private_data, private_data_len);
	sw_cm_event_post(&r->base, &ev);
out:
	pthread_mutex_unlock(&cm_lock);
	return ret;
}

int self_cm_disconnect(struct openrdma_cm_id *base, const void *private_data,
		       uint8_t private_data_len)
{
	struct self_cm_id *id = to_cm_id(base), *r;
	struct openrdma_cm_event ev;
	int ret = 0;

	pthread_mutex_lock(&cm_lock);
	if (id->state != CM_ESTABLISHED && id->state != CM_REP_SENT &&
	    id->state != CM_REP_RCVD) {
		ret = -OPENRDMA_ENOTCONN;
		goto out;
	}
	r = id->remote;
	unlink_remote(id);
	id->state = CM_DISCONNECTED;
	sw_cm_qp_error(id->base.qp);
	post_simple(id, OPENRDMA_CM_EVENT_DISCONNECTED, 0);
	if (r) {
		r->state = CM_DISCONNECTED;
		sw_cm_qp_error(r->base.qp);
		event_init(&ev, OPENRDMA_CM_EVENT_DISCONNECTED, r);
		sw_cm_event_pdata(&ev, private_data, private_data_len);
		sw_cm_event_post(&r->base, &ev);
	}
out:
	pthread_mutex_unlock(&cm_lock);
	return ret;
}

int self_cm_local_addr(struct openrdma_cm_id *base,
		       struct sockaddr_storage *addr)
{
	pthread_mutex_lock(&cm_lock);
	*addr = to_cm_id(base)->local;
	pthread_mutex_unlock(&cm_lock);
	return 0;
}

int self_cm_peer_addr(struct openrdma_cm_id *base,
		      struct sockaddr_storage *addr)
{
	pthread_mutex_lock(&cm_lock);
	*addr = to_cm_id(base)->peer;
	pthread_mutex_unlock(&cm_lock);
	return 0;
}
