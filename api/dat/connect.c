/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Connections: the active side (connect, dup_connect, common_connect),
 * disconnect, and the converter that turns the IA's CM events into DAT
 * connection and connection-request events on their owners' EVDs.
 *
 * A DAT address is an IA address plus a connection qualifier; here the
 * qualifier is the port of the socket address the CM listens on, so it
 * must fit 16 bits.  EP states move on CM events, on the dispatcher
 * thread, by atomic stores; the consumer's calls move them by compare and
 * swap, so that an event is never overwritten by a stale state.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <openrdma/errno.h>
#include <openrdma/log.h>

#include "api/dat/provider.h"
#include "api/dat/slots.h"

#define QUAL_MAX 0xffffu

/* A consumer's socket address, copied; -EINVAL unless IPv4 or IPv6. */
static int addr_copy(const DAT_SOCK_ADDR *sa, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (sa->sa_family == AF_INET)
		memcpy(ss, sa, sizeof(struct sockaddr_in));
	else if (sa->sa_family == AF_INET6)
		memcpy(ss, sa, sizeof(struct sockaddr_in6));
	else
		return -OPENRDMA_EINVAL;
	return 0;
}

/* An address that is not IPv4 or IPv6, or (common_connect) has no port. */
static DAT_RETURN bad_address(const DAT_SOCK_ADDR *sa, const char *fn)
{
	openrdma_dbg("dat", "%s: arg remote_ia_address: family %u, or no port",
		     fn, sa->sa_family);
	return DAT_CLASS_ERROR | DAT_INVALID_ADDRESS |
	       DAT_INVALID_ADDRESS_MALFORMED;
}

/* ------------------------------------------------------------ events */

static void conn_event(DAT_EVENT *out, DAT_EVENT_NUMBER number,
		       struct datp_ep *ep, uint8_t *buf, const void *pdata,
		       int len)
{
	DAT_CONNECTION_EVENT_DATA *c = &out->event_data.connect_event_data;

	out->event_number = number;
	c->ep_handle = ep;
	c->private_data_size = len;
	c->private_data = NULL;
	if (len > 0) {
		/* DAT hands out a pointer: the EP keeps the bytes */
		memcpy(buf, pdata, (size_t)len);
		c->private_data = buf;
	}
}

/* An event on a connection of ep; returns CORE_EVD_SKIP to drop it. */
static int ep_event(struct datp_ep *ep, const struct openrdma_cm_event *ev,
		    DAT_EVENT *out)
{
	DAT_EP_STATE state = datp_ep_state(ep);
	const void *pd = ev->param.private_data;
	int len = ev->param.private_data_len;
	bool accepting = state == DAT_EP_STATE_COMPLETION_PENDING;
	int from = (int)state;

	if (ep->kind == DATP_EP_UD)
		return datp_ud_answer(ep, ev, out);
	/* an attempt that timed out or was abandoned: the CM's word is late */
	if (state == DAT_EP_STATE_DISCONNECTED)
		return CORE_EVD_SKIP;

	switch (ev->event) {
	case OPENRDMA_CM_EVENT_ESTABLISHED:
		/* a consumer's abort may race with this: it wins */
		if (!atomic_compare_exchange_strong(&ep->state, &from,
						    DAT_EP_STATE_CONNECTED))
			return CORE_EVD_SKIP;
		datp_ep_timer_stop(ep);
		if (ep->active && datp_addr_port(&ev->dst_addr))
			ep->local_port = datp_addr_port(&ev->dst_addr);
		datp_ep_count(ep, DCNT_EP_CONNECT, 0);
		datp_ia_count(ep->obj.ia, ep->active ? DCNT_IA_CM_ACTIVE_EST :
						       DCNT_IA_CM_PASSIVE_EST);
		/* only the active side receives the accept's private data */
		conn_event(out, DAT_CONNECTION_EVENT_ESTABLISHED, ep,
			   ep->pdata_est, pd, ep->active ? len : 0);
		return 0;
	case OPENRDMA_CM_EVENT_REJECTED:
		atomic_store(&ep->state, DAT_EP_STATE_DISCONNECTED);
		if (ev->status == -OPENRDMA_EREJECTED) {
			datp_ia_count(ep->obj.ia, DCNT_IA_CM_USER_REJ_RX);
			conn_event(out, DAT_CONNECTION_EVENT_PEER_REJECTED, ep,
				   ep->pdata_rej, pd, len);
		} else {
			conn_event(out, DAT_CONNECTION_EVENT_NON_PEER_REJECTED,
				   ep, NULL, NULL, 0);
		}
		return 0;
	case OPENRDMA_CM_EVENT_UNREACHABLE:
	case OPENRDMA_CM_EVENT_CONNECT_ERROR:
		atomic_store(&ep->state, DAT_EP_STATE_DISCONNECTED);
		datp_ia_count(ep->obj.ia, DCNT_IA_CM_ERR);
		if (accepting)
			conn_event(out,
				   DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR,
				   ep, NULL, NULL, 0);
		else if (ev->status == -OPENRDMA_ETIMEDOUT)
			conn_event(out, DAT_CONNECTION_EVENT_TIMED_OUT, ep,
				   NULL, NULL, 0);
		else
			conn_event(out, DAT_CONNECTION_EVENT_UNREACHABLE, ep,
				   NULL, NULL, 0);
		return 0;
	case OPENRDMA_CM_EVENT_DISCONNECTED:
	case OPENRDMA_CM_EVENT_DEVICE_REMOVAL:
		atomic_store(&ep->state, DAT_EP_STATE_DISCONNECTED);
		datp_ep_count(ep, DCNT_EP_DISCONNECT, 0);
		if (accepting)
			conn_event(out,
				   DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR,
				   ep, NULL, NULL, 0);
		else if (ev->status ||
			 ev->event == OPENRDMA_CM_EVENT_DEVICE_REMOVAL)
			conn_event(out, DAT_CONNECTION_EVENT_BROKEN, ep, NULL,
				   NULL, 0);
		else
			conn_event(out, DAT_CONNECTION_EVENT_DISCONNECTED, ep,
				   ep->pdata_disc, pd, len);
		return 0;
	default:
		/* time-wait exit, three-way responses: nothing for DAT */
		return CORE_EVD_SKIP;
	}
}

/* A request at a service point: a CR, or a refusal. */
static int sp_event(struct datp_ia *ia, struct datp_sp *sp,
		    const struct openrdma_cm_event *ev, DAT_EVENT *out,
		    struct core_evd **dst)
{
	struct datp_cr *cr;
	int ret;

	if (ev->event != OPENRDMA_CM_EVENT_CONNECT_REQUEST)
		return CORE_EVD_SKIP;
	datp_ia_count(ia, DCNT_IA_CM_REQ_RX);
	/* an RSP takes one request; DAPL refuses the others likewise */
	if (sp->kind == DATP_RSP && atomic_exchange(&sp->consumed, true)) {
		ret = -OPENRDMA_EBUSY;
		goto refuse;
	}
	ret = datp_cr_create(ia, sp, ev, &cr);
	if (ret)
		goto refuse;
	datp_ia_count(ia, DCNT_IA_SP_CR);
	datp_cr_event(cr, out);
	*dst = sp->evd->evd;
	return 0;

refuse:
	openrdma_dbg("dat", "connection request on qualifier %llu refused: %s",
		     (unsigned long long)sp->conn_qual, openrdma_strerror(ret));
	openrdma_cm_reject(ev->id, NULL, 0);
	datp_ia_bury(ia, ev->id, NULL);
	return CORE_EVD_SKIP;
}

int datp_cm_convert(void *arg, const struct openrdma_cm_event *ev, void *rec,
		    struct core_evd **dst)
{
	struct datp_ia *ia = arg;
	const struct openrdma_cm_id *id =
		ev->event == OPENRDMA_CM_EVENT_CONNECT_REQUEST ? ev->listen_id :
								 ev->id;
	struct datp_obj *owner;
	struct datp_ep *ep;
	DAT_EVENT *out = rec;
	enum datp_kind kind;
	int ret;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&ia->lock);
	owner = datp_cmref_find(ia, id);
	pthread_mutex_unlock(&ia->lock);
	/* owners leave the table before they go: this one is alive */
	if (!owner || !datp_obj_any(owner, &kind)) {
		if (ev->event == OPENRDMA_CM_EVENT_CONNECT_REQUEST) {
			openrdma_cm_reject(ev->id, NULL, 0);
			datp_ia_bury(ia, ev->id, NULL);
		}
		return CORE_EVD_SKIP;
	}
	switch (kind) {
	case DATP_PSP:
	case DATP_RSP:
	case DATP_CSP:
		return sp_event(ia, (struct datp_sp *)owner, ev, out, dst);
	case DATP_EP:
		ep = (struct datp_ep *)owner;
		ret = ep_event(ep, ev, out);
		if (ret || !ep->conn_evd)
			return CORE_EVD_SKIP;
		out->evd_handle = ep->conn_evd;
		*dst = ep->conn_evd->evd;
		return 0;
	default:
		/* a request not yet accepted: the peer gave up */
		return CORE_EVD_SKIP;
	}
}

/* ------------------------------------------------------------ timeout */

/*
 * On the dispatcher: the connect timeout expired.  Only the state moves
 * here (the EP's lock is the consumer's); the CM id goes when the
 * consumer resets or frees the EP, as DAT requires after TIMED_OUT.
 */
static void connect_timeout(void *arg)
{
	struct datp_ep *ep = arg;
	int expected = DAT_EP_STATE_ACTIVE_CONNECTION_PENDING;
	uint64_t n;
	DAT_EVENT ev;

	if (read(ep->timer_fd, &n, sizeof(n)) != (ssize_t)sizeof(n))
		return;
	if (!atomic_compare_exchange_strong(&ep->state, &expected,
					    DAT_EP_STATE_DISCONNECTED))
		return;
	openrdma_dbg("dat", "ep %p: connect timed out", (void *)ep);
	datp_ia_count(ep->obj.ia, DCNT_IA_CM_ERR);
	conn_event(&ev, DAT_CONNECTION_EVENT_TIMED_OUT, ep, NULL, NULL, 0);
	if (ep->conn_evd && datp_evd_post(ep->conn_evd, &ev))
		openrdma_dbg("dat", "ep %p: TIMED_OUT event lost", (void *)ep);
}

/* Under the EP's lock: the attempt fails after timeout microseconds. */
static int timer_arm(struct datp_ep *ep, DAT_TIMEOUT timeout)
{
	struct itimerspec its = { 0 };
	int ret;

	if (ep->timer_fd < 0) {
		ep->timer_fd = timerfd_create(CLOCK_MONOTONIC,
					      TFD_NONBLOCK | TFD_CLOEXEC);
		if (ep->timer_fd < 0)
			return -errno;
		ret = core_disp_watch(ep->timer_fd, connect_timeout, ep,
				      &ep->timer_watch);
		if (ret) {
			close(ep->timer_fd);
			ep->timer_fd = -1;
			return ret;
		}
	}
	/* 0 would disarm: the shortest wait is a nanosecond */
	its.it_value.tv_sec = (time_t)(timeout / 1000000);
	its.it_value.tv_nsec = (long)(timeout % 1000000) * 1000 + 1;
	if (timerfd_settime(ep->timer_fd, 0, &its, NULL))
		return -errno;
	return 0;
}

void datp_ep_timer_stop(struct datp_ep *ep)
{
	struct itimerspec its = { 0 };

	if (ep->timer_fd >= 0)
		timerfd_settime(ep->timer_fd, 0, &its, NULL);
}

void datp_ep_timer_free(struct datp_ep *ep)
{
	if (ep->timer_fd < 0)
		return;
	/* waits out a running connect_timeout() */
	core_disp_unwatch(ep->timer_watch);
	close(ep->timer_fd);
	ep->timer_fd = -1;
	ep->timer_watch = NULL;
}

/* ------------------------------------------------------------ connect */

DAT_RETURN datp_ep_can_send(struct datp_ep *ep, const char *fn)
{
	DAT_EP_STATE state = datp_ep_state(ep);

	if (!ep->qp)
		return datp_fail(-OPENRDMA_ESTATE,
				 DAT_INVALID_STATE_EP_UNCONFIGURED, fn,
				 "the EP has no PZ");
	if (ep->kind == DATP_EP_UD || state == DAT_EP_STATE_CONNECTED)
		return DAT_SUCCESS;
	return datp_fail(-OPENRDMA_ESTATE, datp_ep_state_sub(state), fn,
			 "EP state %d", state);
}

static int conn_param(struct datp_ep *ep, const void *pdata, DAT_COUNT len,
		      struct openrdma_conn_param *p)
{
	const struct openrdma_device_attr *d = &ep->obj.ia->dev_attr;

	memset(p, 0, sizeof(*p));
	p->private_data = pdata;
	p->private_data_len = (uint8_t)len;
	p->responder_resources =
		(uint8_t)(ep->attr.max_rdma_read_in < d->max_qp_rd_atom ?
				  ep->attr.max_rdma_read_in :
				  d->max_qp_rd_atom);
	p->initiator_depth =
		(uint8_t)(ep->attr.max_rdma_read_out < d->max_qp_init_rd_atom ?
				  ep->attr.max_rdma_read_out :
				  d->max_qp_init_rd_atom);
	p->retry_count = 7;
	/* a peer short of receives is waited for, as DAPL does */
	p->rnr_retry_count = 7;
	return 0;
}

DAT_RETURN datp_pdata_check(DAT_COUNT len, const void *pdata, uint16_t max,
			    DAT_RETURN_SUBTYPE len_arg, const char *fn)
{
	if (len < 0 || len > max)
		return datp_fail(-OPENRDMA_EINVAL, len_arg, fn,
				 "private_data_size %d (at most %u)", len, max);
	if (len && !pdata)
		return datp_fail(-OPENRDMA_EINVAL, len_arg + 1, fn,
				 "private_data: NULL with %d bytes", len);
	return DAT_SUCCESS;
}

/* Connects ep to dst; qual is what the consumer named (dup_connect). */
static DAT_RETURN ep_connect_to(struct datp_ep *ep,
				const struct sockaddr_storage *dst,
				DAT_CONN_QUAL qual, DAT_TIMEOUT timeout,
				DAT_COUNT len, const void *pdata,
				const char *fn)
{
	struct datp_ia *ia = ep->obj.ia;
	struct openrdma_conn_param param;
	struct sockaddr_storage local;
	DAT_PORT_QUAL no_port = 0;
	struct openrdma_cm_id *id;
	DAT_EP_STATE state;
	DAT_RETURN dret;
	int ret;

	datp_ia_reap(ia);
	pthread_mutex_lock(&ep->lock);
	state = datp_ep_state(ep);
	/* a UD EP resolves any number of addresses, one after another */
	if (state != DAT_EP_STATE_UNCONNECTED &&
	    !(ep->kind == DATP_EP_UD &&
	      (state == DAT_EP_STATE_CONNECTED ||
	       state == DAT_EP_STATE_ACTIVE_CONNECTION_PENDING))) {
		dret = datp_fail(-OPENRDMA_ESTATE, datp_ep_state_sub(state), fn,
				 "EP state %d", state);
		goto out;
	}
	if (!ep->qp) {
		dret = datp_fail(-OPENRDMA_ESTATE,
				 DAT_INVALID_STATE_EP_UNCONFIGURED, fn,
				 "the EP has no QP");
		goto out;
	}
	ep->remote_addr = *dst;
	ep->remote_port = qual;
	ep->remote_qual = qual;
	ep->active = true;
	if (ep->kind == DATP_EP_UD) {
		ret = datp_ud_request(ep, (const struct sockaddr *)dst, pdata,
				      len);
		dret = ret ? datp_fail(ret, DAT_NO_SUBTYPE, fn,
				       "UD address request") :
			     DAT_SUCCESS;
		goto out;
	}
	ret = openrdma_cm_id_create(ia->ctx, ia->cm_ch, ep, OPENRDMA_PS_TCP,
				    &id);
	if (ret) {
		dret = datp_fail(ret, DAT_RESOURCE_TEP, fn, "cm_id_create");
		goto out;
	}
	ret = datp_cmref_add(ia, id, &ep->obj);
	if (ret) {
		openrdma_cm_id_destroy(id);
		dret = datp_fail(ret, DAT_RESOURCE_MEMORY, fn, "cmref");
		goto out;
	}
	ep->cm_id = id;
	/* before the call: its outcome may be converted before it returns
	 * (and stops the timer) */
	atomic_store(&ep->state, DAT_EP_STATE_ACTIVE_CONNECTION_PENDING);
	/* without a timer the transport's own retries bound the wait */
	if (timeout != DAT_TIMEOUT_INFINITE) {
		ret = timer_arm(ep, timeout);
		if (ret)
			openrdma_warn("dat", "connect timer: %s",
				      openrdma_strerror(ret));
	}
	conn_param(ep, pdata, len, &param);
	atomic_store(&ep->local_port, no_port);
	ret = openrdma_cm_connect(id, ep->qp, (const struct sockaddr *)dst,
				  &param);
	if (ret) {
		datp_ep_timer_stop(ep);
		atomic_store(&ep->state, DAT_EP_STATE_UNCONNECTED);
		ep->cm_id = NULL;
		datp_cmref_drop(ia, id, false);
		dret = datp_fail(ret, DAT_INVALID_ADDRESS_UNREACHABLE, fn,
				 "cm_connect");
		goto out;
	}
	/* the established connection's own word wins */
	if (!openrdma_cm_local_addr(id, &local))
		atomic_compare_exchange_strong(&ep->local_port, &no_port,
					       datp_addr_port(&local));
	datp_ia_count(ia, DCNT_IA_CM_REQ_TX);
	dret = DAT_SUCCESS;
out:
	pthread_mutex_unlock(&ep->lock);
	return dret;
}

static DAT_RETURN connect_common_args(struct datp_ep *ep, DAT_COUNT len,
				      const void *pdata,
				      DAT_RETURN_SUBTYPE len_arg,
				      const char *fn)
{
	return datp_pdata_check(len, pdata,
				ep->obj.ia->dev_attr.max_pdata_connect, len_arg,
				fn);
}

DAT_RETURN
datp_ep_connect(DAT_EP_HANDLE ep_handle, DAT_IA_ADDRESS_PTR remote_ia_address,
		DAT_CONN_QUAL remote_conn_qual, DAT_TIMEOUT timeout,
		DAT_COUNT private_data_size, const DAT_PVOID private_data,
		DAT_QOS quality_of_service, DAT_CONNECT_FLAGS connect_flags)
{
	struct datp_ep *ep = datp_ep_get(ep_handle);
	struct sockaddr_storage dst;
	DAT_RETURN ret;

	if (!ep)
		return DATP_HANDLE(DAT_INVALID_HANDLE_EP, "ep %p", ep_handle);
	if (!remote_ia_address)
		return DATP_ARG(DAT_INVALID_ARG2, "remote_ia_address: NULL");
	if (addr_copy(remote_ia_address, &dst))
		return bad_address(remote_ia_address, __func__);
	if (!remote_conn_qual || remote_conn_qual > QUAL_MAX)
		return DATP_ARG(DAT_INVALID_ARG3,
				"remote_conn_qual %llu: not a port number",
				(unsigned long long)remote_conn_qual);
	ret = connect_common_args(ep, private_data_size, private_data,
				  DAT_INVALID_ARG5, __func__);
	if (ret != DAT_SUCCESS)
		return ret;
	if ((unsigned int)quality_of_service & ~0x0fu)
		return DATP_ARG(DAT_INVALID_ARG7, "quality_of_service 0x%x",
				quality_of_service);
	if (connect_flags & DAT_CONNECT_MULTIPATH_REQUIRED_FLAG)
		return DATP_ERR(-OPENRDMA_EOPNOTSUPP, DAT_NO_SUBTYPE,
				"multipath connections");
	if ((unsigned int)connect_flags &
	    ~(unsigned int)(DAT_CONNECT_MULTIPATH_FLAG |
			    DAT_CONNECT_MULTIPATH_REQUIRED_FLAG))
		return DATP_ARG(DAT_INVALID_ARG8, "connect_flags 0x%x",
				connect_flags);
	datp_addr_set_port(&dst, (uint16_t)remote_conn_qual);
	return ep_connect_to(ep, &dst, remote_conn_qual, timeout,
			     private_data_size, private_data, __func__);
}

DAT_RETURN datp_ep_common_connect(DAT_EP_HANDLE ep_handle,
				  DAT_IA_ADDRESS_PTR remote_ia_address,
				  DAT_TIMEOUT timeout,
				  DAT_COUNT private_data_size,
				  const DAT_PVOID private_data)
{
	struct datp_ep *ep = datp_ep_get(ep_handle);
	struct sockaddr_storage dst;
	DAT_RETURN ret;

	if (!ep)
		return DATP_HANDLE(DAT_INVALID_HANDLE_EP, "ep %p", ep_handle);
	if (!remote_ia_address)
		return DATP_ARG(DAT_INVALID_ARG2, "remote_ia_address: NULL");
	if (addr_copy(remote_ia_address, &dst) || !datp_addr_port(&dst))
		return bad_address(remote_ia_address, __func__);
	ret = connect_common_args(ep, private_data_size, private_data,
				  DAT_INVALID_ARG4, __func__);
	if (ret != DAT_SUCCESS)
		return ret;
	return ep_connect_to(ep, &dst, datp_addr_port(&dst), timeout,
			     private_data_size, private_data, __func__);
}

DAT_RETURN datp_ep_dup_connect(DAT_EP_HANDLE ep_handle,
			       DAT_EP_HANDLE ep_dup_handle, DAT_TIMEOUT timeout,
			       DAT_COUNT private_data_size,
			       const DAT_PVOID private_data,
			       DAT_QOS quality_of_service)
{
	struct datp_ep *ep = datp_ep_get(ep_handle);
	struct datp_ep *dup = datp_ep_get(ep_dup_handle);
	struct sockaddr_storage dst;
	DAT_CONN_QUAL qual;
	DAT_RETURN ret;

	if (!ep)
		return DATP_HANDLE(DAT_INVALID_HANDLE_EP, "ep %p", ep_handle);
	if (!dup || dup->obj.ia != ep->obj.ia)
		return DATP_HANDLE(DAT_INVALID_HANDLE2, "ep_dup %p",
				   ep_dup_handle);
	ret = connect_common_args(ep, private_data_size, private_data,
				  DAT_INVALID_ARG4, __func__);
	if (ret != DAT_SUCCESS)
		return ret;
	if ((unsigned int)quality_of_service & ~0x0fu)
		return DATP_ARG(DAT_INVALID_ARG6, "quality_of_service 0x%x",
				quality_of_service);
	pthread_mutex_lock(&dup->lock);
	dst = dup->remote_addr;
	qual = dup->remote_qual;
	ret = datp_ep_state(dup) == DAT_EP_STATE_CONNECTED && dup->active ?
		      DAT_SUCCESS :
		      DATP_STATE(datp_ep_state_sub(datp_ep_state(dup)),
				 "ep_dup is not connected by dat_ep_connect");
	pthread_mutex_unlock(&dup->lock);
	if (ret != DAT_SUCCESS)
		return ret;
	return ep_connect_to(ep, &dst, qual, timeout, private_data_size,
			     private_data, __func__);
}

/* ------------------------------------------------------------ disconnect */

static void qp_to_error(struct datp_ep *ep)
{
	struct openrdma_qp_attr attr = { .qp_state = OPENRDMA_QPS_ERR };

	if (ep->qp)
		openrdma_qp_modify(ep->qp, &attr, OPENRDMA_QP_STATE);
}

void datp_ep_cm_release(struct datp_ep *ep)
{
	struct openrdma_cm_id *id = ep->cm_id;
	int expected = DAT_EP_STATE_CONNECTED;

	datp_ep_timer_stop(ep);
	if (!id)
		return;
	if (atomic_compare_exchange_strong(&ep->state, &expected,
					   DAT_EP_STATE_DISCONNECT_PENDING))
		openrdma_cm_disconnect(id, NULL, 0);
	ep->cm_id = NULL;
	datp_cmref_drop(ep->obj.ia, id, false);
}

/* Ends a connection attempt the CM cannot cancel: forget its id. */
static void connect_abort(struct datp_ep *ep)
{
	DAT_EVENT ev = { 0 };
	int state = atomic_load(&ep->state);

	datp_ep_timer_stop(ep);
	if (ep->cm_id) {
		openrdma_cm_disconnect(ep->cm_id, NULL, 0);
		datp_cmref_drop(ep->obj.ia, ep->cm_id, false);
		ep->cm_id = NULL;
	}
	qp_to_error(ep);
	/* the timer may have ended the attempt and said so already */
	do {
		if (state == DAT_EP_STATE_DISCONNECTED)
			return;
	} while (!atomic_compare_exchange_weak(&ep->state, &state,
					       DAT_EP_STATE_DISCONNECTED));
	if (ep->conn_evd) {
		conn_event(&ev, DAT_CONNECTION_EVENT_DISCONNECTED, ep, NULL,
			   NULL, 0);
		datp_evd_post(ep->conn_evd, &ev);
	}
}

DAT_RETURN datp_ep_disconnect(DAT_EP_HANDLE ep_handle,
			      DAT_CLOSE_FLAGS close_flags)
{
	struct datp_ep *ep = datp_ep_get(ep_handle);
	int expected = DAT_EP_STATE_CONNECTED;
	DAT_EP_STATE state;
	DAT_RETURN ret = DAT_SUCCESS;

	if (!ep)
		return DATP_HANDLE(DAT_INVALID_HANDLE_EP, "ep %p", ep_handle);
	if (close_flags != DAT_CLOSE_ABRUPT_FLAG &&
	    close_flags != DAT_CLOSE_GRACEFUL_FLAG)
		return DATP_ARG(DAT_INVALID_ARG2, "close_flags 0x%x",
				close_flags);
	pthread_mutex_lock(&ep->lock);
	state = datp_ep_state(ep);
	switch (state) {
	case DAT_EP_STATE_CONNECTED:
		if (ep->kind == DATP_EP_UD) {
			connect_abort(ep);
			break;
		}
		if (!atomic_compare_exchange_strong(
			    &ep->state, &expected,
			    DAT_EP_STATE_DISCONNECT_PENDING))
			break; /* the peer was first */
		datp_ep_count(ep, DCNT_EP_DISCONNECT, 0);
		datp_ia_count(ep->obj.ia, DCNT_IA_CM_DREQ_TX);
		/* abrupt: flush now; graceful: let the transport finish */
		if (close_flags == DAT_CLOSE_ABRUPT_FLAG)
			qp_to_error(ep);
		if (openrdma_cm_disconnect(ep->cm_id, NULL, 0))
			connect_abort(ep);
		break;
	case DAT_EP_STATE_ACTIVE_CONNECTION_PENDING:
	case DAT_EP_STATE_COMPLETION_PENDING:
		connect_abort(ep);
		break;
	case DAT_EP_STATE_DISCONNECT_PENDING:
	case DAT_EP_STATE_DISCONNECTED:
		break;
	default:
		ret = DATP_STATE(datp_ep_state_sub(state), "EP state %d",
				 state);
		break;
	}
	pthread_mutex_unlock(&ep->lock);
	return ret;
}
