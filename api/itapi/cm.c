/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Connections: listen points, connect, accept, reject, handoff,
 * disconnect and socket conversion over the core's CM (openrdma_cm(3)).
 *
 * Every CM id of an IA reports on the IA's one channel, which the
 * dispatcher thread reads through cm_handler().  The handler finds the
 * object an id belongs to in ia->cm_refs, turns the event into an
 * it_event_t and queues it on that object's SEVD, all under ia->cm_lock;
 * the API calls change endpoint states and the table under the same lock,
 * so an object that leaves the table is never reached again.  Requests
 * get an identifier (cn_est_id) in the process's table, since it_reject()
 * and it_handoff() name them by identifier alone.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <utlist.h>

#include "api/itapi/itapi.h"
#include "core/export.h"

/* ------------------------------------------------------------------ */
/* Identifiers                                                        */
/* ------------------------------------------------------------------ */

/* The process's unanswered requests by identifier; a leaf lock. */
static pthread_mutex_t cn_lock = PTHREAD_MUTEX_INITIALIZER;
static struct itapi_cn *cn_table;
static uint64_t cn_next = 1;

struct itapi_cn *itapi_cn_new(struct itapi_ia *ia, enum itapi_cn_kind kind)
{
	struct itapi_cn *cn = calloc(1, sizeof(*cn));

	if (!cn)
		return NULL;
	cn->ia = ia;
	cn->kind = kind;
	pthread_mutex_lock(&cn_lock);
	/* identifiers are never reused: a stale one finds nothing */
	cn->key = cn_next++;
	HASH_ADD(hh, cn_table, key, sizeof(cn->key), cn);
	pthread_mutex_unlock(&cn_lock);
	return cn;
}

struct itapi_cn *itapi_cn_take(uint64_t key)
{
	struct itapi_cn *cn;

	pthread_mutex_lock(&cn_lock);
	HASH_FIND(hh, cn_table, &key, sizeof(key), cn);
	if (cn)
		HASH_DEL(cn_table, cn);
	pthread_mutex_unlock(&cn_lock);
	return cn;
}

void itapi_cn_list(struct itapi_cn *cn)
{
	pthread_mutex_lock(&cn_lock);
	HASH_ADD(hh, cn_table, key, sizeof(cn->key), cn);
	pthread_mutex_unlock(&cn_lock);
}

/* Takes out every record match() selects, as a utlist list on hh.next. */
static struct itapi_cn *cn_take_all(bool (*match)(const struct itapi_cn *cn,
						  const void *arg),
				    const void *arg)
{
	struct itapi_cn *cn, *tmp, *taken = NULL;

	pthread_mutex_lock(&cn_lock);
	HASH_ITER (hh, cn_table, cn, tmp) {
		if (!match(cn, arg))
			continue;
		HASH_DEL(cn_table, cn);
		cn->hh.next = taken;
		taken = cn;
	}
	pthread_mutex_unlock(&cn_lock);
	return taken;
}

/* Refuses a request nobody will answer, and frees its id. */
static void request_refuse(struct openrdma_cm_id *id)
{
	int ret;

	openrdma_cm_reject(id, NULL, 0);
	ret = openrdma_cm_id_destroy(id);
	if (ret)
		openrdma_warn(ITAPI_LOG, "cm_id_destroy: %s",
			      openrdma_strerror(ret));
}

static bool cn_of_ia(const struct itapi_cn *cn, const void *ia)
{
	return cn->ia == ia;
}

void itapi_cm_requests_drop(struct itapi_ia *ia)
{
	struct itapi_cn *cn = cn_take_all(cn_of_ia, ia), *next;

	for (; cn; cn = next) {
		next = cn->hh.next;
		if (cn->kind != ITAPI_CN_ACCEPT_ARRIVAL)
			request_refuse(cn->id);
		free(cn);
	}
}

static bool cn_of_ep(const struct itapi_cn *cn, const void *ep)
{
	return cn->kind == ITAPI_CN_ACCEPT_ARRIVAL && cn->ep == ep;
}

void itapi_cm_ep_forget(struct itapi_ep *ep)
{
	struct itapi_cn *cn = cn_take_all(cn_of_ep, ep), *next;

	for (; cn; cn = next) {
		next = cn->hh.next;
		free(cn);
	}
}

/* ------------------------------------------------------------------ */
/* The id table and the channel                                       */
/* ------------------------------------------------------------------ */

void itapi_cm_ref_add(struct itapi_ia *ia, struct itapi_cm_ref *ref,
		      struct openrdma_cm_id *id, struct itapi_obj *owner)
{
	ref->id = id;
	ref->owner = owner;
	HASH_ADD_PTR(ia->cm_refs, id, ref);
}

void itapi_cm_ref_del(struct itapi_ia *ia, struct itapi_cm_ref *ref)
{
	if (!ref->id)
		return;
	HASH_DEL(ia->cm_refs, ref);
	ref->id = NULL;
}

void itapi_cm_drop_run(struct itapi_cm_drop *drop)
{
	int ret;

	if (drop->reject)
		request_refuse(drop->reject);
	if (drop->id) {
		ret = openrdma_cm_id_destroy(drop->id);
		if (ret)
			openrdma_warn(ITAPI_LOG, "cm_id_destroy: %s",
				      openrdma_strerror(ret));
	}
	if (drop->qp)
		itapi_qp_destroy(drop->qp);
}

void itapi_pdata_copy(unsigned char *dst, it_boolean_t *present,
		      const struct openrdma_cm_event *ev, size_t skip)
{
	size_t len = ev->param.private_data_len;

	*present = IT_FALSE;
	if (len <= skip)
		return;
	len -= skip;
	if (len > IT_MAX_PRIV_DATA)
		len = IT_MAX_PRIV_DATA;
	memcpy(dst, ev->param.private_data + skip, len);
	*present = IT_TRUE;
}

static it_conn_reject_code_t reject_reason(int status)
{
	switch (status) {
	case -OPENRDMA_ETIMEDOUT:
		return IT_CN_REJ_TIMEOUT;
	case -OPENRDMA_EHOSTUNREACH:
	case -OPENRDMA_ENETUNREACH:
	case -OPENRDMA_ENETDOWN:
	case -OPENRDMA_EADDRNOTAVAIL:
		return IT_CN_REJ_BAD_PATH;
	case -OPENRDMA_ENOMEM:
	case -OPENRDMA_ENOBUFS:
		return IT_CN_REJ_RESOURCES;
	case -OPENRDMA_EINVAL:
		return IT_CN_REJ_BAD_CONN_PARMS;
	default:
		/* no listener, a full backlog, a refused port */
		return IT_CN_REJ_OTHER;
	}
}

/* A connection request on a listen point: the cn_est_id is made here. */
static void cm_request(struct itapi_ia *ia, const struct openrdma_cm_event *ev,
		       struct itapi_cm_drop *drop)
{
	struct openrdma_cm_id *listen_id = ev->listen_id;
	const struct sockaddr *src = (const struct sockaddr *)&ev->src_addr;
	it_conn_request_event_t *req;
	it_ud_svc_request_event_t *svc;
	struct itapi_listen *l;
	struct itapi_cm_ref *ref;
	struct itapi_cn *cn;
	bool is_svc;

	HASH_FIND_PTR(ia->cm_refs, &listen_id, ref);
	if (!ref || ref->owner->type != IT_HANDLE_TYPE_LISTEN) {
		drop->reject = ev->id;
		return;
	}
	l = (struct itapi_listen *)ref->owner;
	is_svc = itapi_svc_is_request(ev);
	cn = itapi_cn_new(ia, is_svc ? ITAPI_CN_UD_SVC : ITAPI_CN_CONN_REQUEST);
	if (!cn) {
		drop->reject = ev->id;
		return;
	}
	cn->id = ev->id;
	cn->listen = l;
	cn->ird = ev->param.responder_resources;
	cn->ord = ev->param.initiator_depth;
	cn->src = ev->src_addr;
	if (is_svc) {
		svc = &cn->ev.ud_svc_request;
		svc->event_number = IT_CM_REQ_UD_SERVICE_REQUEST_EVENT;
		svc->ud_svc_req_id = cn->key;
		svc->conn_qual = l->conn_qual;
		svc->spigot_id = l->spigot_id;
		if (src->sa_family == AF_INET || src->sa_family == AF_INET6)
			itapi_net_addr_from_sockaddr(src, &svc->source_addr);
		itapi_pdata_copy(svc->private_data, &svc->private_data_present,
				 ev, ITAPI_SVC_REQ_HDR);
	} else {
		req = &cn->ev.conn_req;
		req->event_number = IT_CM_REQ_CONN_REQUEST_EVENT;
		req->cn_est_id = cn->key;
		req->conn_qual = l->conn_qual;
		req->spigot_id = l->spigot_id;
		if (src->sa_family == AF_INET || src->sa_family == AF_INET6)
			itapi_net_addr_from_sockaddr(src, &req->source_addr);
		req->max_message_size = ia->dev.max_msg_size > UINT32_MAX ?
						UINT32_MAX :
						(uint32_t)ia->dev.max_msg_size;
		/* the requester's own values: its IRD is what our ORD
		 * faces, and the event carries them swapped */
		req->rdma_read_ird = ev->param.initiator_depth;
		req->rdma_read_ord = ev->param.responder_resources;
		itapi_pdata_copy(req->private_data, &req->private_data_present,
				 ev, 0);
	}
	if (itapi_evd_enqueue(l->evd, &cn->ev)) {
		/* lost to a full SEVD, reported by its overflow: refuse */
		free(itapi_cn_take(cn->key));
		drop->reject = ev->id;
	}
}

static void conn_event_init(it_event_t *e, struct itapi_ep *ep,
			    it_event_type_t number)
{
	memset(&e->conn, 0, sizeof(e->conn));
	e->conn.event_number = number;
	e->conn.ep = (it_ep_handle_t)ep;
	e->conn.dst_path = ep->path;
	e->conn.rdma_read_ird = ep->ird;
	e->conn.rdma_read_ord = ep->ord;
}

/* An event of an endpoint's id.  ia->cm_lock held. */
static void cm_ep_event(struct itapi_ia *ia, struct itapi_ep *ep,
			const struct openrdma_cm_event *ev)
{
	int state = atomic_load(&ep->state);
	struct itapi_cn *cn;
	it_event_t e;

	switch (ev->event) {
	case OPENRDMA_CM_EVENT_ESTABLISHED:
		ep->ird = ev->param.responder_resources;
		ep->ord = ev->param.initiator_depth;
		conn_event_init(&e, ep, IT_CM_MSG_CONN_ESTABLISHED_EVENT);
		itapi_pdata_copy(e.conn.private_data,
				 &e.conn.private_data_present, ev, 0);
		atomic_store(&ep->state, IT_EP_STATE_CONNECTED);
		break;
	case OPENRDMA_CM_EVENT_CONNECT_RESPONSE:
		if (state != IT_EP_STATE_ACTIVE1_CONNECTION_PENDING)
			return;
		ep->ird = ev->param.responder_resources;
		ep->ord = ev->param.initiator_depth;
		cn = itapi_cn_new(ia, ITAPI_CN_ACCEPT_ARRIVAL);
		if (!cn) {
			/* nobody could answer it: refuse the connection */
			openrdma_cm_reject(ep->cm.id, NULL, 0);
			conn_event_init(&e, ep,
					IT_CM_MSG_CONN_NONPEER_REJECT_EVENT);
			e.conn.reject_reason_code = IT_CN_REJ_RESOURCES;
			atomic_store(&ep->state, IT_EP_STATE_NONOPERATIONAL);
			break;
		}
		cn->ep = ep;
		conn_event_init(&e, ep, IT_CM_MSG_CONN_ACCEPT_ARRIVAL_EVENT);
		e.conn.cn_est_id = cn->key;
		itapi_pdata_copy(e.conn.private_data,
				 &e.conn.private_data_present, ev, 0);
		atomic_store(&ep->state,
			     IT_EP_STATE_ACTIVE2_CONNECTION_PENDING);
		break;
	case OPENRDMA_CM_EVENT_REJECTED:
		if (ev->status == -OPENRDMA_EREJECTED) {
			conn_event_init(&e, ep,
					IT_CM_MSG_CONN_PEER_REJECT_EVENT);
			itapi_pdata_copy(e.conn.private_data,
					 &e.conn.private_data_present, ev, 0);
		} else {
			conn_event_init(&e, ep,
					IT_CM_MSG_CONN_NONPEER_REJECT_EVENT);
			e.conn.reject_reason_code = reject_reason(ev->status);
		}
		atomic_store(&ep->state, IT_EP_STATE_NONOPERATIONAL);
		break;
	case OPENRDMA_CM_EVENT_UNREACHABLE:
	case OPENRDMA_CM_EVENT_CONNECT_ERROR:
	case OPENRDMA_CM_EVENT_ADDR_ERROR:
	case OPENRDMA_CM_EVENT_ROUTE_ERROR:
		conn_event_init(&e, ep, IT_CM_MSG_CONN_NONPEER_REJECT_EVENT);
		e.conn.reject_reason_code = reject_reason(ev->status);
		atomic_store(&ep->state, IT_EP_STATE_NONOPERATIONAL);
		break;
	case OPENRDMA_CM_EVENT_DISCONNECTED:
	case OPENRDMA_CM_EVENT_DEVICE_REMOVAL:
		if (state == IT_EP_STATE_NONOPERATIONAL ||
		    state == IT_EP_STATE_UNCONNECTED)
			return;
		conn_event_init(&e, ep,
				ev->event == OPENRDMA_CM_EVENT_DISCONNECTED &&
						!ev->status ?
					IT_CM_MSG_CONN_DISCONNECT_EVENT :
					IT_CM_MSG_CONN_BROKEN_EVENT);
		itapi_pdata_copy(e.conn.private_data,
				 &e.conn.private_data_present, ev, 0);
		atomic_store(&ep->state, IT_EP_STATE_NONOPERATIONAL);
		break;
	default:
		return;
	}
	itapi_evd_enqueue(ep->conn_evd, &e);
}

static void cm_event(struct itapi_ia *ia, const struct openrdma_cm_event *ev,
		     struct itapi_cm_drop *drop)
{
	struct openrdma_cm_id *id = ev->id;
	struct itapi_evd *dst = NULL;
	struct itapi_cm_ref *ref;
	it_event_t e;

	if (ev->event == OPENRDMA_CM_EVENT_CONNECT_REQUEST) {
		cm_request(ia, ev, drop);
		return;
	}
	/* an id that left the table belongs to a freed object */
	HASH_FIND_PTR(ia->cm_refs, &id, ref);
	if (!ref)
		return;
	switch (ref->owner->type) {
	case IT_HANDLE_TYPE_EP:
		cm_ep_event(ia, (struct itapi_ep *)ref->owner, ev);
		break;
	case IT_HANDLE_TYPE_UD_SVC_REQ:
		if (!itapi_svc_cm_event(ia, ref->owner, ev, &e, &dst, drop))
			itapi_evd_enqueue(dst, &e);
		break;
	default:
		break;
	}
}

/* The dispatcher thread: the IA's channel is readable. */
static void cm_handler(void *arg)
{
	struct itapi_ia *ia = arg;
	struct openrdma_cm_event *ev;
	struct itapi_cm_drop drop;

	while (!openrdma_cm_event_get(ia->cm_ch, &ev)) {
		memset(&drop, 0, sizeof(drop));
		pthread_mutex_lock(&ia->cm_lock);
		cm_event(ia, ev, &drop);
		pthread_mutex_unlock(&ia->cm_lock);
		/* destroying an id waits for its events' acknowledgement */
		openrdma_cm_event_ack(ev);
		itapi_cm_drop_run(&drop);
	}
}

int itapi_cm_init(struct itapi_ia *ia)
{
	int fl, ret;

	ret = openrdma_cm_channel_create(ia->ctx, &ia->cm_ch);
	if (ret)
		return ret;
	fl = fcntl(ia->cm_ch->fd, F_GETFL);
	if (fl < 0 || fcntl(ia->cm_ch->fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		ret = -errno;
		openrdma_cm_channel_destroy(ia->cm_ch);
		ia->cm_ch = NULL;
		return ret;
	}
	return 0;
}

int itapi_cm_start(struct itapi_ia *ia)
{
	/* the dispatcher thread starts with the first id, not the IA */
	if (ia->cm_watch)
		return 0;
	return core_disp_watch(ia->cm_ch->fd, cm_handler, ia, &ia->cm_watch);
}

void itapi_cm_stop(struct itapi_ia *ia)
{
	struct core_disp_watch *w;

	pthread_mutex_lock(&ia->cm_lock);
	w = ia->cm_watch;
	ia->cm_watch = NULL;
	pthread_mutex_unlock(&ia->cm_lock);
	if (w)
		core_disp_unwatch(w);
}

void itapi_cm_fini(struct itapi_ia *ia)
{
	int ret;

	itapi_cm_stop(ia);
	if (!ia->cm_ch)
		return;
	ret = openrdma_cm_channel_destroy(ia->cm_ch);
	if (ret)
		openrdma_warn(ITAPI_LOG, "cm_channel_destroy: %s",
			      openrdma_strerror(ret));
	ia->cm_ch = NULL;
}

/* ------------------------------------------------------------------ */
/* Listen points                                                      */
/* ------------------------------------------------------------------ */

/* The address a listen point binds: the spigot's, on port. */
static void listen_addr(const struct itapi_ia *ia, size_t spigot_id,
			uint16_t port, struct sockaddr_storage *ss)
{
	const struct sockaddr *pa =
		(const struct sockaddr *)&ia->ports[spigot_id].addr;

	memset(ss, 0, sizeof(*ss));
	if (pa->sa_family == AF_INET6) {
		*(struct sockaddr_in6 *)ss = *(const struct sockaddr_in6 *)pa;
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
	} else if (pa->sa_family == AF_INET) {
		*(struct sockaddr_in *)ss = *(const struct sockaddr_in *)pa;
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	} else {
		((struct sockaddr_in *)ss)->sin_family = AF_INET;
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	}
}

static uint16_t sockaddr_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return ntohs(((const struct sockaddr_in *)ss)->sin_port);
}

static it_status_t listen_check(struct itapi_ia *ia, size_t spigot_id,
				struct itapi_evd *evd, it_listen_flags_t flags,
				const it_conn_qual_t *cq,
				const it_listen_handle_t *out, uint16_t *port)
{
	if (!itapi_spigot_valid(ia, spigot_id)) {
		itapi_arg_err("it_listen_create", "spigot_id", "%zu",
			      spigot_id);
		return IT_ERR_INVALID_SPIGOT;
	}
	if (!itapi_evd_is(evd, IT_CM_REQ_EVENT_STREAM) || evd->obj.ia != ia) {
		itapi_arg_err("it_listen_create", "connect_evd",
			      "not a CM request SEVD of the IA");
		return IT_ERR_INVALID_CONN_EVD;
	}
	if (flags & ~(unsigned int)(IT_LISTEN_CONN_QUAL_INPUT |
				    IT_LISTEN_SUPPRESS_IRD_ORD)) {
		itapi_arg_err("it_listen_create", "flags", "0x%x",
			      (unsigned int)flags);
		return IT_ERR_INVALID_FLAGS;
	}
	if (flags & IT_LISTEN_SUPPRESS_IRD_ORD)
		return IT_ERR_OP_NOT_SUPPORTED;
	if (!cq || !out) {
		itapi_arg_err("it_listen_create", "conn_qual", "NULL");
		return IT_ERR_FAULT;
	}
	*port = 0;
	if ((flags & IT_LISTEN_CONN_QUAL_INPUT) &&
	    (itapi_conn_qual_port(cq, port) || !*port)) {
		itapi_arg_err("it_listen_create", "conn_qual",
			      "not a port of this interface");
		return IT_ERR_INVALID_CONN_QUAL;
	}
	return IT_SUCCESS;
}

OPENRDMA_EXPORT it_status_t it_listen_create(it_ia_handle_t ia_handle,
					     size_t spigot_id,
					     it_evd_handle_t connect_evd,
					     it_listen_flags_t flags,
					     it_conn_qual_t *conn_qual,
					     it_listen_handle_t *listen_handle)
{
	struct itapi_ia *ia = to_ia(ia_handle);
	struct itapi_evd *evd = to_evd(connect_evd);
	struct sockaddr_storage ss;
	struct openrdma_cm_id *id;
	struct itapi_listen *l;
	it_status_t st;
	uint16_t port;
	int ret;

	if (!itapi_valid(ia, IT_HANDLE_TYPE_IA)) {
		itapi_arg_err("it_listen_create", "ia_handle", "not an IA");
		return IT_ERR_INVALID_IA;
	}
	st = listen_check(ia, spigot_id, evd, flags, conn_qual, listen_handle,
			  &port);
	if (st)
		return st;
	l = calloc(1, sizeof(*l));
	if (!l)
		return IT_ERR_RESOURCES;
	l->obj.ia = ia;
	l->evd = evd;
	l->spigot_id = spigot_id;
	l->flags = flags;
	ret = openrdma_cm_id_create(ia->ctx, ia->cm_ch, l, OPENRDMA_PS_TCP,
				    &id);
	if (ret)
		goto err_free;
	/* complete before a request can reach it: cm_request() reads it */
	ret = itapi_obj_init(&l->obj, IT_HANDLE_TYPE_LISTEN, ia);
	if (ret)
		goto err_id;
	listen_addr(ia, spigot_id, port, &ss);
	/*
	 * Requests wait for cm_lock in the CM handler, so the first ones
	 * find the listen point with its conn_qual, whatever the transport's
	 * threads deliver while the listen is being set up.
	 */
	pthread_mutex_lock(&ia->cm_lock);
	ret = itapi_cm_start(ia);
	if (ret)
		goto err_locked;
	itapi_cm_ref_add(ia, &l->cm, id, &l->obj);
	ret = openrdma_cm_listen(id, (struct sockaddr *)&ss, 0);
	if (!ret)
		ret = openrdma_cm_local_addr(id, &ss);
	if (ret) {
		itapi_cm_ref_del(ia, &l->cm);
		goto err_locked;
	}
	l->port = sockaddr_port(&ss);
	if (flags & IT_LISTEN_CONN_QUAL_INPUT) {
		l->conn_qual = *conn_qual;
	} else {
		memset(&l->conn_qual, 0, sizeof(l->conn_qual));
		l->conn_qual.type = IT_IANA_PORT;
		l->conn_qual.conn_qual.port = htons(l->port);
	}
	itapi_obj_get(&evd->obj);
	DL_APPEND(ia->listens, l);
	pthread_mutex_unlock(&ia->cm_lock);

	if (!(flags & IT_LISTEN_CONN_QUAL_INPUT))
		*conn_qual = l->conn_qual;
	*listen_handle = (it_listen_handle_t)l;
	return IT_SUCCESS;

err_locked:
	pthread_mutex_unlock(&ia->cm_lock);
	itapi_obj_fini(&l->obj);
err_id:
	openrdma_cm_id_destroy(id);
err_free:
	free(l);
	return ret == -OPENRDMA_EADDRINUSE ?
		       IT_ERR_CONN_QUAL_BUSY :
		       itapi_status(ret, IT_ERR_INVALID_CONN_QUAL);
}

static bool cn_of_listen(const struct itapi_cn *cn, const void *l)
{
	return cn->listen == l;
}

void itapi_listen_destroy(struct itapi_listen *l)
{
	struct itapi_ia *ia = l->obj.ia;
	struct itapi_cn *cn, *next;
	struct openrdma_cm_id *id;
	int ret;

	itapi_obj_fini(&l->obj);
	pthread_mutex_lock(&ia->cm_lock);
	id = l->cm.id;
	itapi_cm_ref_del(ia, &l->cm);
	DL_DELETE(ia->listens, l);
	pthread_mutex_unlock(&ia->cm_lock);
	/* the requests already delivered stay answerable */
	for (cn = cn_take_all(cn_of_listen, l); cn; cn = next) {
		next = cn->hh.next;
		cn->listen = NULL;
		itapi_cn_list(cn);
	}
	/* the requests not yet delivered go with the id */
	ret = openrdma_cm_id_destroy(id);
	if (ret)
		openrdma_warn(ITAPI_LOG, "cm_id_destroy: %s",
			      openrdma_strerror(ret));
	itapi_obj_put(&l->evd->obj);
	free(l);
}

OPENRDMA_EXPORT it_status_t it_listen_free(it_listen_handle_t listen_handle)
{
	struct itapi_listen *l = (struct itapi_listen *)listen_handle;

	if (!itapi_valid(l, IT_HANDLE_TYPE_LISTEN)) {
		itapi_arg_err("it_listen_free", "listen_handle",
			      "not a listen point");
		return IT_ERR_INVALID_LISTEN;
	}
	itapi_listen_destroy(l);
	return IT_SUCCESS;
}

#define LISTEN_QUERYABLE 0x1fu

OPENRDMA_EXPORT it_status_t it_listen_query(it_listen_handle_t listen_handle,
					    it_listen_param_mask_t mask,
					    it_listen_param_t *params)
{
	struct itapi_listen *l = (struct itapi_listen *)listen_handle;
	unsigned int m = (unsigned int)mask;
	it_listen_param_t p;

	if (!itapi_valid(l, IT_HANDLE_TYPE_LISTEN)) {
		itapi_arg_err("it_listen_query", "listen_handle",
			      "not a listen point");
		return IT_ERR_INVALID_LISTEN;
	}
	if (m & ~LISTEN_QUERYABLE) {
		itapi_arg_err("it_listen_query", "mask", "0x%x", m);
		return IT_ERR_INVALID_MASK;
	}
	if (!params) {
		itapi_arg_err("it_listen_query", "params", "NULL");
		return IT_ERR_FAULT;
	}
	if (m & IT_LISTEN_PARAM_ALL)
		m = LISTEN_QUERYABLE;
	p = *params;
	if (m & IT_LISTEN_PARAM_IA_HANDLE)
		p.ia_handle = (it_ia_handle_t)l->obj.ia;
	if (m & IT_LISTEN_PARAM_SPIGOT_ID)
		p.spigot_id = l->spigot_id;
	if (m & IT_LISTEN_PARAM_CONNECT_EVD)
		p.connect_evd = (it_evd_handle_t)l->evd;
	if (m & IT_LISTEN_PARAM_CONN_QUAL)
		p.connect_qual = l->conn_qual;
	*params = p;
	return IT_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Establishing connections                                           */
/* ------------------------------------------------------------------ */

/* Private data: within the IA's limit for the call, present if long. */
static it_status_t pdata_check(const char *fn, const struct itapi_ia *ia,
			       uint16_t dev_max, const unsigned char *data,
			       size_t len)
{
	if (!len)
		return IT_SUCCESS;
	if (!dev_max) {
		openrdma_dbg(ITAPI_LOG, "%s: no private data here", fn);
		return IT_ERR_PDATA_NOT_SUPPORTED;
	}
	if (len > itapi_pdata_max(ia, dev_max)) {
		openrdma_dbg(ITAPI_LOG, "%s: arg private_data_length: %zu", fn,
			     len);
		return IT_ERR_INVALID_PDATA_LENGTH;
	}
	if (!data) {
		openrdma_dbg(ITAPI_LOG, "%s: arg private_data: NULL", fn);
		return IT_ERR_FAULT;
	}
	return IT_SUCCESS;
}

/*
 * With cm_lock held: an unconnected EP becomes the active side of id's
 * connection (it_ep_connect, it_socket_convert), pending from here.
 */
static it_status_t active_claim(struct itapi_ia *ia, struct itapi_ep *ep,
				struct openrdma_cm_id *id)
{
	int ret;

	if (atomic_load(&ep->state) != IT_EP_STATE_UNCONNECTED || ep->cm.id)
		return IT_ERR_INVALID_EP_STATE;
	ret = itapi_cm_start(ia);
	if (ret)
		return itapi_status(ret, IT_ERR_INVALID_EP);
	itapi_cm_ref_add(ia, &ep->cm, id, &ep->obj);
	atomic_store(&ep->state, IT_EP_STATE_ACTIVE1_CONNECTION_PENDING);
	return IT_SUCCESS;
}

/* With cm_lock held: undoes active_claim() when the call fails. */
static void active_unclaim(struct itapi_ia *ia, struct itapi_ep *ep)
{
	itapi_cm_ref_del(ia, &ep->cm);
	atomic_store(&ep->state, IT_EP_STATE_UNCONNECTED);
}

static it_status_t rc_ep_check(const char *fn, const struct itapi_ep *ep)
{
	if (!itapi_valid(ep, IT_HANDLE_TYPE_EP)) {
		openrdma_dbg(ITAPI_LOG, "%s: arg ep_handle: not an EP", fn);
		return IT_ERR_INVALID_EP;
	}
	if (ep->service != IT_RC_SERVICE) {
		openrdma_dbg(ITAPI_LOG, "%s: arg ep_handle: not RC", fn);
		return IT_ERR_INVALID_EP_TYPE;
	}
	return IT_SUCCESS;
}

/* IRD and ORD the endpoint offers: none without reads and atomics. */
static void ep_rd_atom(const struct itapi_ep *ep, uint8_t *ird, uint8_t *ord)
{
	const it_rc_only_attributes_t *rc = &ep->attr.srv.rc;
	uint32_t in = rc->rdma_read_enable || rc->atomics_enable ?
			      rc->rdma_read_ird :
			      0;

	*ird = in > 255 ? 255 : (uint8_t)in;
	*ord = rc->rdma_read_ord > 255 ? 255 : (uint8_t)rc->rdma_read_ord;
}

#define CN_EST_FLAGS                                           \
	(IT_CONNECT_FLAG_TWO_WAY | IT_CONNECT_FLAG_THREE_WAY | \
	 IT_CONNECT_SUPPRESS_IRD_ORD)

static it_status_t connect_check(struct itapi_ep *ep, const it_path_t *path,
				 const it_conn_qual_t *cq,
				 it_cn_est_flags_t flags,
				 const unsigned char *pdata, size_t len,
				 uint16_t *port)
{
	struct itapi_ia *ia = ep->obj.ia;
	unsigned int handshake =
		flags & (IT_CONNECT_FLAG_TWO_WAY | IT_CONNECT_FLAG_THREE_WAY);

	if (!path || !cq) {
		itapi_arg_err("it_ep_connect", "path", "NULL");
		return IT_ERR_FAULT;
	}
	if (!itapi_spigot_valid(ia, path->spigot_id)) {
		itapi_arg_err("it_ep_connect", "path", "spigot %zu",
			      path->spigot_id);
		return IT_ERR_INVALID_SPIGOT;
	}
	if (itapi_conn_qual_port(cq, port) || !*port) {
		itapi_arg_err("it_ep_connect", "connect_qual", "no port");
		return IT_ERR_INVALID_CONN_QUAL;
	}
	if ((flags & ~(unsigned int)CN_EST_FLAGS) ||
	    (handshake != IT_CONNECT_FLAG_TWO_WAY &&
	     handshake != IT_CONNECT_FLAG_THREE_WAY)) {
		itapi_arg_err("it_ep_connect", "cn_est_flags", "0x%x",
			      (unsigned int)flags);
		return IT_ERR_INVALID_CN_EST_FLAGS;
	}
	if ((flags & IT_CONNECT_SUPPRESS_IRD_ORD) ||
	    ((flags & IT_CONNECT_FLAG_THREE_WAY) &&
	     !(ia->dev.device_cap_flags & OPENRDMA_DEVICE_THREE_WAY)))
		return IT_ERR_OP_NOT_SUPPORTED;
	return pdata_check("it_ep_connect", ia, ia->dev.max_pdata_connect,
			   pdata, len);
}

OPENRDMA_EXPORT it_status_t it_ep_connect(it_ep_handle_t ep_handle,
					  const it_path_t *path,
					  const it_conn_attributes_t *conn_attr,
					  const it_conn_qual_t *connect_qual,
					  it_cn_est_flags_t cn_est_flags,
					  const unsigned char *private_data,
					  size_t private_data_length)
{
	struct itapi_ep *ep = to_ep(ep_handle);
	struct openrdma_conn_param param;
	struct sockaddr_storage dst;
	struct openrdma_cm_id *id;
	struct itapi_ia *ia;
	it_status_t st;
	uint16_t port;
	int ret;

	st = rc_ep_check("it_ep_connect", ep);
	if (st)
		return st;
	st = connect_check(ep, path, connect_qual, cn_est_flags, private_data,
			   private_data_length, &port);
	if (st)
		return st;
	ia = ep->obj.ia;
	if (itapi_path_to_sockaddr(ia, path, port, &dst))
		return IT_ERR_INVALID_NETADDR;
	memset(&param, 0, sizeof(param));
	param.private_data = private_data;
	param.private_data_len = (uint8_t)private_data_length;
	ep_rd_atom(ep, &param.responder_resources, &param.initiator_depth);
	param.retry_count = 7;
	param.rnr_retry_count = 7;
	if (conn_attr && ia->transport == IT_IB_TRANSPORT) {
		param.retry_count = (uint8_t)conn_attr->ib.retry_count;
		param.rnr_retry_count = (uint8_t)conn_attr->ib.rnr_retry_count;
	}
	param.three_way = cn_est_flags & IT_CONNECT_FLAG_THREE_WAY ? 1 : 0;

	ret = openrdma_cm_id_create(ia->ctx, ia->cm_ch, ep, OPENRDMA_PS_TCP,
				    &id);
	if (ret)
		return itapi_status(ret, IT_ERR_INVALID_EP);
	pthread_mutex_lock(&ia->cm_lock);
	st = active_claim(ia, ep, id);
	if (st)
		goto err_unlock;
	ep->path = *path;
	ret = openrdma_cm_connect(id, ep->qp, (struct sockaddr *)&dst, &param);
	if (ret) {
		active_unclaim(ia, ep);
		st = itapi_status(ret, IT_ERR_INVALID_EP_STATE);
		goto err_unlock;
	}
	pthread_mutex_unlock(&ia->cm_lock);
	return IT_SUCCESS;

err_unlock:
	pthread_mutex_unlock(&ia->cm_lock);
	openrdma_cm_id_destroy(id);
	return st;
}

/* Active side of a three-way handshake: completes it. */
static it_status_t accept_arrival(struct itapi_ep *ep, struct itapi_cn *cn,
				  const struct openrdma_conn_param *param)
{
	struct itapi_ia *ia = ep->obj.ia;
	it_event_t e;
	int ret;

	if (cn->ep != ep) {
		itapi_cn_list(cn);
		return IT_ERR_INVALID_CN_EST_ID;
	}
	pthread_mutex_lock(&ia->cm_lock);
	if (atomic_load(&ep->state) != IT_EP_STATE_ACTIVE2_CONNECTION_PENDING) {
		pthread_mutex_unlock(&ia->cm_lock);
		free(cn);
		return IT_ERR_INVALID_EP_STATE;
	}
	ret = openrdma_cm_accept(ep->cm.id, NULL, param);
	if (ret) {
		pthread_mutex_unlock(&ia->cm_lock);
		free(cn);
		return itapi_status(ret, IT_ERR_INVALID_EP_STATE);
	}
	/* the core reports the establishment to the passive side only */
	atomic_store(&ep->state, IT_EP_STATE_CONNECTED);
	memset(&e.conn, 0, sizeof(e.conn));
	e.conn.event_number = IT_CM_MSG_CONN_ESTABLISHED_EVENT;
	e.conn.ep = (it_ep_handle_t)ep;
	e.conn.dst_path = ep->path;
	e.conn.rdma_read_ird = ep->ird;
	e.conn.rdma_read_ord = ep->ord;
	itapi_evd_enqueue(ep->conn_evd, &e);
	pthread_mutex_unlock(&ia->cm_lock);
	free(cn);
	return IT_SUCCESS;
}

/* Passive side: answers a request with ep. */
static it_status_t accept_request(struct itapi_ep *ep, struct itapi_cn *cn,
				  struct openrdma_conn_param *param)
{
	struct itapi_ia *ia = ep->obj.ia;
	uint8_t ird, ord;
	int ret, qps;

	if (cn->ia != ia) {
		itapi_cn_list(cn);
		return IT_ERR_INVALID_CN_EST_ID;
	}
	ep_rd_atom(ep, &ird, &ord);
	param->responder_resources = ird < cn->ird ? ird : cn->ird;
	param->initiator_depth = ord < cn->ord ? ord : cn->ord;
	pthread_mutex_lock(&ia->cm_lock);
	if (atomic_load(&ep->state) != IT_EP_STATE_UNCONNECTED || ep->cm.id) {
		pthread_mutex_unlock(&ia->cm_lock);
		itapi_cn_list(cn);
		return IT_ERR_INVALID_EP_STATE;
	}
	itapi_cm_ref_add(ia, &ep->cm, cn->id, &ep->obj);
	itapi_path_from_sockaddr(ia, ep->spigot_id,
				 (const struct sockaddr *)&cn->src, &ep->path);
	atomic_store(&ep->state, IT_EP_STATE_PASSIVE_CONNECTION_PENDING);
	ret = openrdma_cm_accept(cn->id, ep->qp, param);
	if (!ret) {
		pthread_mutex_unlock(&ia->cm_lock);
		free(cn);
		return IT_SUCCESS;
	}
	itapi_cm_ref_del(ia, &ep->cm);
	qps = atomic_load(&ep->qp->state);
	atomic_store(&ep->state,
		     qps == OPENRDMA_QPS_RESET || qps == OPENRDMA_QPS_INIT ?
			     IT_EP_STATE_UNCONNECTED :
			     IT_EP_STATE_NONOPERATIONAL);
	pthread_mutex_unlock(&ia->cm_lock);
	/* an unfit endpoint leaves the request to another; else it is dead */
	if (ret == -OPENRDMA_EINVAL) {
		itapi_cn_list(cn);
		return IT_ERR_INVALID_EP_STATE;
	}
	request_refuse(cn->id);
	free(cn);
	return ret == -OPENRDMA_ECONNABORTED ?
		       IT_ERR_INVALID_CN_EST_ID :
		       itapi_status(ret, IT_ERR_INVALID_CN_EST_ID);
}

OPENRDMA_EXPORT it_status_t it_ep_accept(it_ep_handle_t ep_handle,
					 it_cn_est_identifier_t cn_est_id,
					 const unsigned char *private_data,
					 size_t private_data_length)
{
	struct itapi_ep *ep = to_ep(ep_handle);
	struct openrdma_conn_param param;
	struct itapi_cn *cn;
	it_status_t st;

	st = rc_ep_check("it_ep_accept", ep);
	if (st)
		return st;
	st = pdata_check("it_ep_accept", ep->obj.ia,
			 ep->obj.ia->dev.max_pdata_accept, private_data,
			 private_data_length);
	if (st)
		return st;
	cn = itapi_cn_take(cn_est_id);
	if (!cn)
		return IT_ERR_INVALID_CN_EST_ID;
	memset(&param, 0, sizeof(param));
	param.private_data = private_data;
	param.private_data_len = (uint8_t)private_data_length;
	param.retry_count = 7;
	param.rnr_retry_count = 7;
	switch (cn->kind) {
	case ITAPI_CN_ACCEPT_ARRIVAL:
		return accept_arrival(ep, cn, &param);
	case ITAPI_CN_CONN_REQUEST:
		return accept_request(ep, cn, &param);
	default:
		itapi_cn_list(cn);
		return IT_ERR_INVALID_CN_EST_ID;
	}
}

OPENRDMA_EXPORT it_status_t it_reject(it_cn_est_identifier_t cn_est_id,
				      const unsigned char *private_data,
				      size_t private_data_length)
{
	struct itapi_cn *cn = itapi_cn_take(cn_est_id);
	struct itapi_ia *ia;
	struct itapi_ep *ep;
	it_status_t st;
	int ret;

	if (!cn)
		return IT_ERR_INVALID_CN_EST_ID;
	ia = cn->ia;
	if (cn->kind == ITAPI_CN_UD_SVC) {
		itapi_cn_list(cn);
		return IT_ERR_INVALID_CN_EST_ID;
	}
	st = pdata_check("it_reject", ia, ia->dev.max_pdata_reject,
			 private_data, private_data_length);
	if (st) {
		itapi_cn_list(cn);
		return st;
	}
	if (cn->kind == ITAPI_CN_CONN_REQUEST) {
		ret = openrdma_cm_reject(cn->id, private_data,
					 (uint8_t)private_data_length);
		openrdma_cm_id_destroy(cn->id);
		free(cn);
		/* a request its peer withdrew is answered all the same */
		if (ret && ret != -OPENRDMA_ECONNABORTED)
			return itapi_status(ret, IT_ERR_INVALID_CN_EST_ID);
		return IT_SUCCESS;
	}
	/* the active side refuses the passive side's accept */
	ep = cn->ep;
	pthread_mutex_lock(&ia->cm_lock);
	ret = -OPENRDMA_ESTATE;
	if (atomic_load(&ep->state) == IT_EP_STATE_ACTIVE2_CONNECTION_PENDING) {
		ret = openrdma_cm_reject(ep->cm.id, private_data,
					 (uint8_t)private_data_length);
		atomic_store(&ep->state, IT_EP_STATE_NONOPERATIONAL);
	}
	pthread_mutex_unlock(&ia->cm_lock);
	free(cn);
	return ret ? itapi_status(ret, IT_ERR_INVALID_CN_EST_ID) : IT_SUCCESS;
}

OPENRDMA_EXPORT it_status_t it_handoff(const it_conn_qual_t *conn_qual,
				       size_t spigot_id,
				       it_cn_est_identifier_t cn_est_id)
{
	struct itapi_listen *l, *to = NULL;
	struct itapi_cn *cn;
	struct itapi_ia *ia;
	uint16_t port;

	if (!conn_qual) {
		itapi_arg_err("it_handoff", "conn_qual", "NULL");
		return IT_ERR_FAULT;
	}
	cn = itapi_cn_take(cn_est_id);
	if (!cn)
		return IT_ERR_INVALID_CN_EST_ID;
	ia = cn->ia;
	if (cn->kind != ITAPI_CN_CONN_REQUEST) {
		itapi_cn_list(cn);
		return IT_ERR_INVALID_CN_EST_ID;
	}
	if (!itapi_spigot_valid(ia, spigot_id)) {
		itapi_cn_list(cn);
		return IT_ERR_INVALID_SPIGOT;
	}
	if (itapi_conn_qual_port(conn_qual, &port) || !port) {
		itapi_cn_list(cn);
		return IT_ERR_INVALID_CONN_QUAL;
	}
	/* another listen point of this IA: the CM reaches no further */
	pthread_mutex_lock(&ia->cm_lock);
	DL_FOREACH (ia->listens, l) {
		if (l != cn->listen && l->port == port &&
		    l->spigot_id == spigot_id) {
			to = l;
			break;
		}
	}
	if (!to) {
		pthread_mutex_unlock(&ia->cm_lock);
		itapi_cn_list(cn);
		return IT_ERR_INVALID_CONN_QUAL;
	}
	cn->listen = to;
	cn->ev.conn_req.conn_qual = to->conn_qual;
	cn->ev.conn_req.spigot_id = spigot_id;
	itapi_cn_list(cn);
	if (itapi_evd_enqueue(to->evd, &cn->ev)) {
		pthread_mutex_unlock(&ia->cm_lock);
		cn = itapi_cn_take(cn_est_id);
		if (cn) {
			request_refuse(cn->id);
			free(cn);
		}
		return IT_ERR_EVD_QUEUE_FULL;
	}
	pthread_mutex_unlock(&ia->cm_lock);
	return IT_SUCCESS;
}

OPENRDMA_EXPORT it_status_t it_ep_disconnect(it_ep_handle_t ep_handle,
					     const unsigned char *private_data,
					     size_t private_data_length)
{
	struct itapi_ep *ep = to_ep(ep_handle);
	struct openrdma_qp_attr attr;
	struct openrdma_cm_id *id;
	struct itapi_ia *ia;
	it_status_t st;
	it_event_t e;
	int ret;

	st = rc_ep_check("it_ep_disconnect", ep);
	if (st)
		return st;
	ia = ep->obj.ia;
	st = pdata_check("it_ep_disconnect", ia, ia->dev.max_pdata_disconnect,
			 private_data, private_data_length);
	if (st)
		return st;
	pthread_mutex_lock(&ia->cm_lock);
	switch (atomic_load(&ep->state)) {
	case IT_EP_STATE_CONNECTED:
	case IT_EP_STATE_ACTIVE2_CONNECTION_PENDING:
	case IT_EP_STATE_PASSIVE_CONNECTION_PENDING:
		/* both sides get the DISCONNECTED event of the CM */
		ret = openrdma_cm_disconnect(ep->cm.id, private_data,
					     (uint8_t)private_data_length);
		pthread_mutex_unlock(&ia->cm_lock);
		return ret ? itapi_status(ret, IT_ERR_INVALID_EP_STATE) :
			     IT_SUCCESS;
	case IT_EP_STATE_ACTIVE1_CONNECTION_PENDING:
		break;
	default:
		pthread_mutex_unlock(&ia->cm_lock);
		return IT_ERR_INVALID_EP_STATE;
	}
	/* A request still unanswered is withdrawn: the id goes, with any
	 * answer it would get, and the endpoint reports the end itself. */
	id = ep->cm.id;
	itapi_cm_ref_del(ia, &ep->cm);
	atomic_store(&ep->state, IT_EP_STATE_NONOPERATIONAL);
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = OPENRDMA_QPS_ERR;
	openrdma_qp_modify(ep->qp, &attr, OPENRDMA_QP_STATE);
	conn_event_init(&e, ep, IT_CM_MSG_CONN_DISCONNECT_EVENT);
	itapi_evd_enqueue(ep->conn_evd, &e);
	pthread_mutex_unlock(&ia->cm_lock);
	openrdma_cm_id_destroy(id);
	return IT_SUCCESS;
}

/* The socket's problems, as it_socket_convert() reports them. */
static it_status_t convert_status(int err)
{
	switch (err) {
	case -OPENRDMA_EINVAL:
	case -OPENRDMA_ENOTCONN:
	case -OPENRDMA_EISCONN:
		return IT_ERR_INVALID_HANDLE;
	default:
		return itapi_status(err, IT_ERR_INVALID_HANDLE);
	}
}

OPENRDMA_EXPORT it_status_t it_socket_convert(int sd, it_ep_handle_t ep_handle,
					      it_sc_flags_t flags,
					      const unsigned char *msg,
					      size_t len)
{
	struct itapi_ep *ep = to_ep(ep_handle);
	struct openrdma_conn_param param;
	struct sockaddr_storage peer;
	struct openrdma_cm_id *id;
	struct itapi_ia *ia;
	socklen_t alen;
	it_status_t st;
	int fd, ret;

	st = rc_ep_check("it_socket_convert", ep);
	if (st)
		return st;
	if (flags & ~(unsigned int)IT_SC_NO_REQ_REP) {
		itapi_arg_err("it_socket_convert", "flags", "0x%x",
			      (unsigned int)flags);
		return IT_ERR_INVALID_FLAGS;
	}
	if (sd < 0) {
		itapi_arg_err("it_socket_convert", "sd", "%d", sd);
		return IT_ERR_INVALID_HANDLE;
	}
	if (len && !msg) {
		itapi_arg_err("it_socket_convert", "msg", "NULL");
		return IT_ERR_FAULT;
	}
	ia = ep->obj.ia;
	if (!(ia->dev.device_cap_flags & OPENRDMA_DEVICE_SOCKET_ADOPT))
		return IT_ERR_OP_NOT_SUPPORTED;
	/* without the exchange, no message goes either way */
	if ((flags & IT_SC_NO_REQ_REP) && len) {
		itapi_arg_err("it_socket_convert", "len",
			      "%zu with IT_SC_NO_REQ_REP", len);
		return IT_ERR_INVALID_PDATA_LENGTH;
	}
	st = pdata_check("it_socket_convert", ia, ia->dev.max_pdata_connect,
			 msg, len);
	if (st)
		return st;
	alen = sizeof(peer);
	if (getpeername(sd, (struct sockaddr *)&peer, &alen)) {
		itapi_arg_err("it_socket_convert", "sd", "%d: not connected",
			      sd);
		return IT_ERR_INVALID_HANDLE;
	}
	memset(&param, 0, sizeof(param));
	param.private_data = msg;
	param.private_data_len = (uint8_t)len;
	ep_rd_atom(ep, &param.responder_resources, &param.initiator_depth);
	param.retry_count = 7;
	param.rnr_retry_count = 7;

	ret = openrdma_cm_id_create(ia->ctx, ia->cm_ch, ep, OPENRDMA_PS_TCP,
				    &id);
	if (ret)
		return itapi_status(ret, IT_ERR_INVALID_EP);
	/* The library's own descriptor: the application closes sd as it
	 * likes, without ending the connection. */
	fd = fcntl(sd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0) {
		st = errno == EMFILE || errno == ENFILE ? IT_ERR_RESOURCES :
							  IT_ERR_INVALID_HANDLE;
		goto err_id;
	}
	pthread_mutex_lock(&ia->cm_lock);
	st = active_claim(ia, ep, id);
	if (st)
		goto err_unlock;
	ret = openrdma_cm_adopt_socket(id, ep->qp, fd, &param);
	if (ret) {
		active_unclaim(ia, ep);
		st = convert_status(ret);
		goto err_unlock;
	}
	/* before any event: they wait for cm_lock */
	itapi_path_from_sockaddr(ia, ep->spigot_id,
				 (const struct sockaddr *)&peer, &ep->path);
	pthread_mutex_unlock(&ia->cm_lock);
	return IT_SUCCESS;

err_unlock:
	pthread_mutex_unlock(&ia->cm_lock);
	close(fd);
err_id:
	openrdma_cm_id_destroy(id);
	return st;
}
