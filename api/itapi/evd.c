/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Event dispatchers: each IT-API SEVD or AEVD is one EVD of the event
 * engine (openrdma_evd(7)) whose records are it_event_t.  DTO SEVDs own
 * the CQ their endpoints share; the async SEVDs are fed by the context's
 * async events through the converter below; CM events are queued by
 * cm.c.  An overflow becomes an IT_ASYNC_*_SEVD_ENQUEUE_FAILURE event.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "api/itapi/itapi.h"
#include "core/export.h"

#define EVD_OVERFLOW_FLAGS                                  \
	(IT_EVD_OVERFLOW_DEFAULT | IT_EVD_OVERFLOW_NOTIFY | \
	 IT_EVD_OVERFLOW_AUTO_RESET)
#define EVD_FLAGS \
	(IT_EVD_DEQUEUE_NOTIFICATIONS | IT_EVD_CREATE_FD | EVD_OVERFLOW_FLAGS)

_Static_assert(IT_TIMEOUT_INFINITE == CORE_EVD_INFINITE,
	       "IT-API and engine timeouts mean the same");

/* The engine's streams of an IT stream base; 0 if it is none. */
static uint32_t evd_streams(it_event_type_t stream)
{
	switch (stream) {
	case IT_DTO_EVENT_STREAM:
		return CORE_EVD_STREAM_DTO;
	case IT_CM_REQ_EVENT_STREAM:
		return CORE_EVD_STREAM_CM_REQ;
	case IT_CM_MSG_EVENT_STREAM:
		return CORE_EVD_STREAM_CM_MSG;
	case IT_ASYNC_AFF_EVENT_STREAM:
		return CORE_EVD_STREAM_ASYNC_AFF;
	case IT_ASYNC_UNAFF_EVENT_STREAM:
		return CORE_EVD_STREAM_ASYNC_UNAFF;
	case IT_SOFTWARE_EVENT_STREAM:
		return CORE_EVD_STREAM_SOFTWARE;
	case IT_AEVD_NOTIFICATION_EVENT_STREAM:
		return CORE_EVD_STREAM_AEVD;
	default:
		return 0;
	}
}

/* The overflow mode the flags ask for; -1 if they ask for two. */
static int evd_overflow(it_evd_flags_t flags)
{
	switch (flags & EVD_OVERFLOW_FLAGS) {
	case 0:
	case IT_EVD_OVERFLOW_DEFAULT:
		return CORE_EVD_OVERFLOW_DEFAULT;
	case IT_EVD_OVERFLOW_NOTIFY:
		return CORE_EVD_OVERFLOW_NOTIFY;
	case IT_EVD_OVERFLOW_AUTO_RESET:
		return CORE_EVD_OVERFLOW_AUTO_RESET;
	default:
		return -1;
	}
}

static bool is_aevd(const struct itapi_evd *evd)
{
	return evd->stream == IT_AEVD_NOTIFICATION_EVENT_STREAM;
}

/* ------------------------------------------------------------------ */
/* Async events and overflows                                         */
/* ------------------------------------------------------------------ */

void itapi_async_post(struct itapi_ia *ia, it_event_t *event)
{
	struct itapi_evd *evd;
	int ret;

	pthread_mutex_lock(&ia->async_lock);
	evd = (event->event_number & IT_EVENT_STREAM_MASK) ==
			      IT_ASYNC_AFF_EVENT_STREAM ?
		      ia->aff_evd :
		      ia->unaff_evd;
	if (evd) {
		event->any.evd = (it_evd_handle_t)evd;
		ret = core_evd_enqueue(evd->core, event);
		if (ret)
			openrdma_dbg(ITAPI_LOG, "async event 0x%x lost: %s",
				     (unsigned int)event->event_number,
				     openrdma_strerror(ret));
	} else {
		openrdma_dbg(ITAPI_LOG, "async event 0x%x: no async SEVD",
			     (unsigned int)event->event_number);
	}
	pthread_mutex_unlock(&ia->async_lock);
}

/*
 * An event was lost to a full SEVD.  The affiliated SEVD hears of it; its
 * own overflow goes to the unaffiliated one, whose own only to the log.
 * async_lock is recursive because posting the report may overflow again.
 */
static void evd_overflowed(struct core_evd *core, void *arg)
{
	struct itapi_evd *evd = arg;
	struct itapi_ia *ia = evd->obj.ia;
	it_event_t ev;

	memset(&ev, 0, sizeof(ev));
	if (evd->stream == IT_ASYNC_UNAFF_EVENT_STREAM) {
		openrdma_warn(ITAPI_LOG,
			      "%s: unaffiliated SEVD full, events lost",
			      ia->name);
		return;
	}
	if (evd->stream == IT_ASYNC_AFF_EVENT_STREAM) {
		ev.unaff_async.event_number =
			IT_ASYNC_UNAFF_SEVD_ENQUEUE_FAILURE;
		ev.unaff_async.ia = (it_ia_handle_t)ia;
	} else {
		ev.aff_async.event_number = IT_ASYNC_AFF_SEVD_ENQUEUE_FAILURE;
		ev.aff_async.cause.sevd = (it_evd_handle_t)evd;
	}
	itapi_async_post(ia, &ev);
}

static int async_convert(void *arg, const struct openrdma_async_event *ev,
			 struct core_evd *cq_evd, void *rec)
{
	struct itapi_evd *evd = arg;
	it_event_t *out = rec;
	it_affiliated_event_t *aff = &out->aff_async;
	it_unaffiliated_event_t *unaff = &out->unaff_async;

	memset(out, 0, sizeof(*out));
	switch (ev->event_type) {
	case OPENRDMA_EVENT_QP_FATAL:
		aff->event_number = IT_ASYNC_AFF_EP_FAILURE;
		break;
	case OPENRDMA_EVENT_QP_REQ_ERR:
		aff->event_number = IT_ASYNC_AFF_EP_BAD_TRANSPORT_OPCODE;
		break;
	case OPENRDMA_EVENT_QP_ACCESS_ERR:
		aff->event_number = IT_ASYNC_AFF_EP_R_ACCESS_VIOLATION;
		break;
	case OPENRDMA_EVENT_PATH_MIG_ERR:
		aff->event_number = IT_ASYNC_AFF_EP_L_TRANSPORT_ERROR;
		break;
	case OPENRDMA_EVENT_SRQ_ERR:
	case OPENRDMA_EVENT_SRQ_LIMIT_REACHED:
		aff->event_number = ev->event_type == OPENRDMA_EVENT_SRQ_ERR ?
					    IT_ASYNC_AFF_EP_SRQ_ERROR :
					    IT_ASYNC_AFF_SRQ_LOW_WATERMARK;
		aff->cause.srq = ev->element.srq->srq_context;
		aff->evd = (it_evd_handle_t)evd;
		return aff->cause.srq ? 0 : CORE_EVD_SKIP;
	case OPENRDMA_EVENT_PORT_ACTIVE:
	case OPENRDMA_EVENT_PORT_ERR:
	case OPENRDMA_EVENT_DEVICE_FATAL:
		unaff->event_number =
			ev->event_type == OPENRDMA_EVENT_PORT_ACTIVE ?
				IT_ASYNC_UNAFF_SPIGOT_ONLINE :
				IT_ASYNC_UNAFF_SPIGOT_OFFLINE;
		unaff->evd = (it_evd_handle_t)evd;
		unaff->ia = (it_ia_handle_t)evd->obj.ia;
		unaff->spigot_id =
			ev->event_type != OPENRDMA_EVENT_DEVICE_FATAL &&
					ev->element.port_num > 0 ?
				(size_t)ev->element.port_num - 1 :
				0;
		return 0;
	default:
		/*
		 * A CQ overrun is the SEVD's overflow, which the engine
		 * reports by its mode (evd_overflowed); COMM_EST, SQ_DRAINED,
		 * LAST_WQE, LID changes: nothing the consumer is told of.
		 */
		return CORE_EVD_SKIP;
	}
	/* the QP's context is its endpoint; the IA's hidden QPs have none */
	aff->cause.ep = ev->element.qp->qp_context;
	aff->evd = (it_evd_handle_t)evd;
	return aff->cause.ep ? 0 : CORE_EVD_SKIP;
}

/* ------------------------------------------------------------------ */
/* Create, free                                                       */
/* ------------------------------------------------------------------ */

static it_status_t create_check(struct itapi_ia *ia,
				it_event_type_t event_number,
				it_evd_flags_t flags, size_t queue_size,
				size_t threshold, struct itapi_evd *aevd)
{
	if (!evd_streams(event_number)) {
		itapi_arg_err("it_evd_create", "event_number", "0x%x",
			      (unsigned int)event_number);
		return IT_ERR_INVALID_EVD_TYPE;
	}
	if ((flags & ~(unsigned int)EVD_FLAGS) || evd_overflow(flags) < 0 ||
	    ((flags & IT_EVD_DEQUEUE_NOTIFICATIONS) &&
	     event_number != IT_AEVD_NOTIFICATION_EVENT_STREAM)) {
		itapi_arg_err("it_evd_create", "evd_flag", "0x%x",
			      (unsigned int)flags);
		return IT_ERR_INVALID_FLAGS;
	}
	if (event_number == IT_AEVD_NOTIFICATION_EVENT_STREAM) {
		if (aevd) {
			itapi_arg_err("it_evd_create", "aevd_handle",
				      "an AEVD joins no AEVD");
			return IT_ERR_AEVD_NOT_ALLOWED;
		}
		return IT_SUCCESS;
	}
	if (!queue_size) {
		itapi_arg_err("it_evd_create", "sevd_queue_size", "0");
		return IT_ERR_INVALID_QUEUE_SIZE;
	}
	if (queue_size > CORE_EVD_CAPACITY_MAX) {
		itapi_arg_err("it_evd_create", "sevd_queue_size", "%zu",
			      queue_size);
		return IT_ERR_RESOURCE_QUEUE_SIZE;
	}
	if (threshold > queue_size) {
		itapi_arg_err("it_evd_create", "sevd_threshold", "%zu > %zu",
			      threshold, queue_size);
		return IT_ERR_INVALID_THRESHOLD;
	}
	if (aevd && (!itapi_valid(aevd, IT_HANDLE_TYPE_EVD) || !is_aevd(aevd) ||
		     aevd->obj.ia != ia)) {
		itapi_arg_err("it_evd_create", "aevd_handle", "not an AEVD");
		return IT_ERR_INVALID_AEVD;
	}
	return IT_SUCCESS;
}

/* Claims the IA's async slot of the stream: false if it is taken. */
static bool async_claim(struct itapi_evd *evd)
{
	struct itapi_ia *ia = evd->obj.ia;
	struct itapi_evd **slot;
	bool ok;

	if (evd->stream != IT_ASYNC_AFF_EVENT_STREAM &&
	    evd->stream != IT_ASYNC_UNAFF_EVENT_STREAM)
		return true;
	slot = evd->stream == IT_ASYNC_AFF_EVENT_STREAM ? &ia->aff_evd :
							  &ia->unaff_evd;
	pthread_mutex_lock(&ia->async_lock);
	ok = !*slot;
	if (ok)
		*slot = evd;
	pthread_mutex_unlock(&ia->async_lock);
	return ok;
}

static void async_release(struct itapi_evd *evd)
{
	struct itapi_ia *ia = evd->obj.ia;

	pthread_mutex_lock(&ia->async_lock);
	if (ia->aff_evd == evd)
		ia->aff_evd = NULL;
	if (ia->unaff_evd == evd)
		ia->unaff_evd = NULL;
	pthread_mutex_unlock(&ia->async_lock);
}

OPENRDMA_EXPORT it_status_t it_evd_create(
	it_ia_handle_t ia_handle, it_event_type_t event_number,
	it_evd_flags_t evd_flag, size_t sevd_queue_size, size_t sevd_threshold,
	it_evd_handle_t aevd_handle, it_evd_handle_t *evd_handle, int *fd)
{
	struct itapi_ia *ia = to_ia(ia_handle);
	struct itapi_evd *aevd = to_evd(aevd_handle), *evd;
	struct core_evd_attr attr;
	struct core_evd_info info;
	struct core_evd_mod mod;
	it_status_t st;
	int ret;

	if (!itapi_valid(ia, IT_HANDLE_TYPE_IA)) {
		itapi_arg_err("it_evd_create", "ia_handle", "not an IA");
		return IT_ERR_INVALID_IA;
	}
	st = create_check(ia, event_number, evd_flag, sevd_queue_size,
			  sevd_threshold, aevd);
	if (st)
		return st;
	if (!evd_handle || ((evd_flag & IT_EVD_CREATE_FD) && !fd)) {
		itapi_arg_err("it_evd_create", "evd_handle", "NULL");
		return IT_ERR_FAULT;
	}

	evd = calloc(1, sizeof(*evd));
	if (!evd)
		return IT_ERR_RESOURCES;
	evd->obj.ia = ia;
	evd->stream = event_number;
	evd->flags = evd_flag;
	evd->queue_size = sevd_queue_size;
	evd->threshold = sevd_threshold;
	evd->enabled = true;
	if (!async_claim(evd)) {
		st = event_number == IT_ASYNC_AFF_EVENT_STREAM ?
			     IT_ERR_ASYNC_AFF_EVD_EXISTS :
			     IT_ERR_ASYNC_UNAFF_EVD_EXISTS;
		goto err_free;
	}

	memset(&attr, 0, sizeof(attr));
	attr.streams = evd_streams(event_number);
	attr.flags = evd_flag & IT_EVD_CREATE_FD ? CORE_EVD_FD : 0;
	attr.overflow = (enum core_evd_overflow)evd_overflow(evd_flag);
	attr.rec_size = sizeof(it_event_t);
	attr.capacity = sevd_queue_size;
	attr.threshold = sevd_threshold;
	attr.overflow_fn = evd_overflowed;
	attr.overflow_arg = evd;
	attr.context = evd;
	ret = core_evd_create(&attr, &evd->core);
	if (ret)
		goto err_async;
	if (attr.streams &
	    (CORE_EVD_STREAM_ASYNC_AFF | CORE_EVD_STREAM_ASYNC_UNAFF)) {
		ret = core_evd_async_bind(evd->core, ia->ctx, attr.streams,
					  async_convert, evd);
		if (ret)
			goto err_core;
	}
	if (aevd) {
		memset(&mod, 0, sizeof(mod));
		mod.aevd = aevd->core;
		ret = core_evd_modify(evd->core, CORE_EVD_MOD_AEVD, &mod);
		if (ret)
			goto err_core;
	}
	ret = core_evd_query(evd->core, &info);
	if (ret)
		goto err_core;
	evd->fd = info.fd;
	ret = itapi_obj_init(&evd->obj, IT_HANDLE_TYPE_EVD, ia);
	if (ret)
		goto err_core;
	if (aevd) {
		evd->aevd = aevd;
		itapi_obj_get(&aevd->obj);
	}

	*evd_handle = (it_evd_handle_t)evd;
	if (fd)
		*fd = evd->fd;
	return IT_SUCCESS;

err_core:
	core_evd_free(evd->core);
err_async:
	async_release(evd);
	st = itapi_status(ret, IT_ERR_INVALID_QUEUE_SIZE);
err_free:
	free(evd);
	return st;
}

void itapi_evd_destroy(struct itapi_evd *evd)
{
	int ret;

	itapi_obj_fini(&evd->obj);
	async_release(evd);
	/* detaches the callback, leaves the AEVD, unbinds the sources */
	ret = core_evd_free(evd->core);
	if (ret)
		openrdma_warn(ITAPI_LOG, "evd_free: %s",
			      openrdma_strerror(ret));
	if (evd->aevd)
		itapi_obj_put(&evd->aevd->obj);
	if (evd->cq) {
		ret = openrdma_cq_destroy(evd->cq);
		if (ret)
			openrdma_warn(ITAPI_LOG, "cq_destroy: %s",
				      openrdma_strerror(ret));
	}
	if (evd->chan)
		openrdma_comp_channel_destroy(evd->chan);
	free(evd);
}

OPENRDMA_EXPORT it_status_t it_evd_free(it_evd_handle_t evd_handle)
{
	struct itapi_evd *evd = to_evd(evd_handle);

	if (!itapi_valid(evd, IT_HANDLE_TYPE_EVD)) {
		itapi_arg_err("it_evd_free", "evd_handle", "not an EVD");
		return IT_ERR_INVALID_EVD;
	}
	/* endpoints, listen points, requests and member SEVDs use it */
	if (itapi_obj_users(&evd->obj)) {
		openrdma_dbg(ITAPI_LOG, "it_evd_free: %u users",
			     itapi_obj_users(&evd->obj));
		return IT_ERR_EVD_BUSY;
	}
	itapi_evd_destroy(evd);
	return IT_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* The CQ of a DTO SEVD                                               */
/* ------------------------------------------------------------------ */

static int evd_cq_create(struct itapi_evd *evd, size_t need)
{
	struct itapi_ia *ia = evd->obj.ia;
	size_t cqe = evd->queue_size > need ? evd->queue_size : need;
	int ret;

	if (cqe > (size_t)ia->dev.max_cqe)
		cqe = (size_t)ia->dev.max_cqe;
	ret = openrdma_comp_channel_create(ia->ctx, &evd->chan);
	if (ret)
		return ret;
	ret = openrdma_cq_create(ia->ctx, (int)cqe, evd, evd->chan, 0,
				 &evd->cq);
	if (ret)
		goto err_chan;
	ret = core_evd_cq_bind(evd->core, evd->cq, itapi_dto_convert, evd);
	if (ret)
		goto err_cq;
	return 0;

err_cq:
	openrdma_cq_destroy(evd->cq);
	evd->cq = NULL;
err_chan:
	openrdma_comp_channel_destroy(evd->chan);
	evd->chan = NULL;
	return ret;
}

int itapi_evd_cq_reserve(struct itapi_evd *evd, size_t need)
{
	size_t max = (size_t)evd->obj.ia->dev.max_cqe, total;
	int ret;

	if (need > max)
		return -OPENRDMA_ENOSPC;
	if (!evd->cq) {
		ret = evd_cq_create(evd, need);
		if (ret)
			return ret;
	}
	total = evd->cq_need + need;
	/*
	 * A CQ that holds every request of its endpoints never overruns;
	 * beyond the device's limit the SEVD's overflow handling applies.
	 */
	if (total > (size_t)evd->cq->cqe && evd->cq->cqe < (int)max) {
		ret = openrdma_cq_resize(evd->cq,
					 (int)(total < max ? total : max));
		if (ret)
			openrdma_dbg(ITAPI_LOG, "cq_resize to %zu: %s", total,
				     openrdma_strerror(ret));
	}
	evd->cq_need = total;
	return 0;
}

void itapi_evd_cq_release(struct itapi_evd *evd, size_t need)
{
	evd->cq_need -= need < evd->cq_need ? need : evd->cq_need;
}

int itapi_evd_enqueue(struct itapi_evd *evd, it_event_t *event)
{
	event->any.evd = (it_evd_handle_t)evd;
	return core_evd_enqueue(evd->core, event);
}

/* ------------------------------------------------------------------ */
/* Waiting and dequeuing                                              */
/* ------------------------------------------------------------------ */

/* An AEVD that hands out notifications rather than its members' events. */
static bool notifies(const struct itapi_evd *evd)
{
	return is_aevd(evd) && (evd->flags & IT_EVD_DEQUEUE_NOTIFICATIONS);
}

static void notification(struct itapi_evd *aevd, struct core_evd *sevd,
			 it_event_t *event)
{
	it_aevd_notification_event_t n;

	memset(&n, 0, sizeof(n));
	n.event_number = IT_AEVD_NOTIFICATION_EVENT;
	n.aevd = (it_evd_handle_t)aevd;
	n.sevd = core_evd_context(sevd);
	memcpy(event, &n, sizeof(n));
}

static it_status_t take_status(int ret)
{
	switch (ret) {
	case -OPENRDMA_EAGAIN:
		return IT_ERR_QUEUE_EMPTY;
	case -OPENRDMA_EBUSY:
		return IT_ERR_WAITER_LIMIT;
	case -OPENRDMA_ESTATE:
		return IT_ERR_INVALID_EVD_STATE;
	case -OPENRDMA_ECANCELED:
		return IT_ERR_ABORT;
	default:
		return itapi_status(ret, IT_ERR_INVALID_EVD);
	}
}

/* it_evd_wait() of an AEVD that notifies, or of a caller who wants nmore. */
static __attribute__((noinline)) it_status_t
evd_wait_counted(struct itapi_evd *evd, uint64_t us, it_event_t *event,
		 size_t *nmore)
{
	struct core_evd_info info;
	struct core_evd *sevd;
	size_t more = 0;
	int ret;

	if (notifies(evd)) {
		ret = core_evd_notify_wait(evd->core, us, &sevd);
		if (ret)
			return take_status(ret);
		notification(evd, sevd, event);
		if (!core_evd_query(evd->core, &info))
			more = info.count ? info.count - 1 : 0;
	} else {
		ret = core_evd_wait(evd->core, us, 0, event, &more);
		if (ret)
			return take_status(ret);
	}
	if (nmore)
		*nmore = more;
	return IT_SUCCESS;
}

static __attribute__((cold, noinline)) it_status_t
wait_refused(const struct itapi_evd *evd)
{
	if (!itapi_valid(evd, IT_HANDLE_TYPE_EVD)) {
		itapi_arg_err("it_evd_wait", "evd_handle", "not an EVD");
		return IT_ERR_INVALID_EVD;
	}
	itapi_arg_err("it_evd_wait", "event", "NULL");
	return IT_ERR_FAULT;
}

OPENRDMA_EXPORT it_status_t it_evd_wait(it_evd_handle_t evd_handle,
					uint64_t timeout, it_event_t *event,
					size_t *nmore)
{
	struct itapi_evd *evd = to_evd(evd_handle);
	/* IT_TIMEOUT_INFINITE is CORE_EVD_INFINITE */
	uint64_t us = timeout;
	int ret;

	if (!itapi_valid(evd, IT_HANDLE_TYPE_EVD) || !event)
		return wait_refused(evd);
	if (nmore || notifies(evd))
		return evd_wait_counted(evd, us, event, nmore);
	/* without nmore the engine need not count what is behind */
	ret = core_evd_wait(evd->core, us, 0, event, NULL);
	return ret ? take_status(ret) : IT_SUCCESS;
}

OPENRDMA_EXPORT it_status_t it_evd_dequeue(it_evd_handle_t evd_handle,
					   it_event_t *event)
{
	struct itapi_evd *evd = to_evd(evd_handle);
	struct core_evd *sevd;
	int ret;

	if (!itapi_valid(evd, IT_HANDLE_TYPE_EVD)) {
		itapi_arg_err("it_evd_dequeue", "evd_handle", "not an EVD");
		return IT_ERR_INVALID_EVD;
	}
	if (!event) {
		itapi_arg_err("it_evd_dequeue", "event", "NULL");
		return IT_ERR_FAULT;
	}
	if (notifies(evd)) {
		ret = core_evd_notify_dequeue(evd->core, &sevd);
		if (ret)
			return take_status(ret);
		notification(evd, sevd, event);
		return IT_SUCCESS;
	}
	ret = core_evd_dequeue(evd->core, event);
	return ret ? take_status(ret) : IT_SUCCESS;
}

OPENRDMA_EXPORT it_status_t it_evd_dequeue_n(it_evd_handle_t evd_handle,
					     int count, it_event_t *events,
					     int *dequeued)
{
	struct itapi_evd *evd = to_evd(evd_handle);
	it_status_t st = IT_SUCCESS;
	int n = 0, ret;

	if (!itapi_valid(evd, IT_HANDLE_TYPE_EVD)) {
		itapi_arg_err("it_evd_dequeue_n", "evd_handle", "not an EVD");
		return IT_ERR_INVALID_EVD;
	}
	if (count < 1) {
		itapi_arg_err("it_evd_dequeue_n", "count", "%d", count);
		return IT_ERR_RANGE;
	}
	if (!events || !dequeued) {
		itapi_arg_err("it_evd_dequeue_n", "events", "NULL");
		return IT_ERR_FAULT;
	}
	if (!is_aevd(evd)) {
		ret = core_evd_dequeue_n(evd->core, events, count);
		if (ret < 0)
			return take_status(ret);
		*dequeued = ret;
		return IT_SUCCESS;
	}
	/* an AEVD takes from one member at a time */
	while (n < count) {
		st = it_evd_dequeue(evd_handle, &events[n]);
		if (st)
			break;
		n++;
	}
	if (!n)
		return st;
	*dequeued = n;
	return IT_SUCCESS;
}

OPENRDMA_EXPORT it_status_t it_evd_post_se(it_evd_handle_t evd_handle,
					   const void *event)
{
	struct itapi_evd *evd = to_evd(evd_handle);
	it_event_t ev;
	int ret;

	if (!itapi_valid(evd, IT_HANDLE_TYPE_EVD)) {
		itapi_arg_err("it_evd_post_se", "evd_handle", "not an EVD");
		return IT_ERR_INVALID_EVD;
	}
	if (evd->stream != IT_SOFTWARE_EVENT_STREAM) {
		itapi_arg_err("it_evd_post_se", "evd_handle",
			      "not a software-event SEVD");
		return IT_ERR_INVALID_EVD_TYPE;
	}
	memset(&ev.sw, 0, sizeof(ev.sw));
	ev.sw.event_number = IT_SOFTWARE_EVENT;
	ev.sw.evd = evd_handle;
	ev.sw.data = (void *)event;
	ret = core_evd_post_se(evd->core, &ev);
	if (ret == -OPENRDMA_ENOSPC)
		return IT_ERR_EVD_QUEUE_FULL;
	return itapi_status(ret, IT_ERR_INVALID_EVD);
}

/* ------------------------------------------------------------------ */
/* Modify, query                                                      */
/* ------------------------------------------------------------------ */

#define EVD_MODIFIABLE                                       \
	(IT_EVD_PARAM_FLAG | IT_EVD_PARAM_QUEUE_SIZE |       \
	 IT_EVD_PARAM_THRESHOLD | IT_EVD_PARAM_AEVD_HANDLE | \
	 IT_EVD_PARAM_ENABLED | IT_EVD_PARAM_OVERFLOWED)
#define EVD_QUERYABLE 0xfffu

static it_status_t modify_check(struct itapi_evd *evd, unsigned int mask,
				const it_evd_param_t *p)
{
	size_t size = mask & IT_EVD_PARAM_QUEUE_SIZE ? p->sevd_queue_size :
						       evd->queue_size;
	size_t thr = mask & IT_EVD_PARAM_THRESHOLD ? p->sevd_threshold :
						     evd->threshold;
	struct itapi_evd *aevd = to_evd(p->aevd);

	if (is_aevd(evd) &&
	    (mask & (IT_EVD_PARAM_QUEUE_SIZE | IT_EVD_PARAM_THRESHOLD |
		     IT_EVD_PARAM_AEVD_HANDLE)))
		return IT_ERR_INVALID_MASK;
	if ((mask & IT_EVD_PARAM_FLAG) &&
	    ((p->evd_flag & ~(unsigned int)EVD_FLAGS) ||
	     evd_overflow(p->evd_flag) < 0 ||
	     (p->evd_flag & ~(unsigned int)EVD_OVERFLOW_FLAGS) !=
		     (evd->flags & ~(unsigned int)EVD_OVERFLOW_FLAGS)))
		return IT_ERR_INVALID_FLAGS;
	if ((mask & IT_EVD_PARAM_QUEUE_SIZE) &&
	    (!size || size > CORE_EVD_CAPACITY_MAX))
		return IT_ERR_INVALID_QUEUE_SIZE;
	if (!is_aevd(evd) && thr > size)
		return IT_ERR_INVALID_THRESHOLD;
	if ((mask & IT_EVD_PARAM_AEVD_HANDLE) && aevd &&
	    (!itapi_valid(aevd, IT_HANDLE_TYPE_EVD) || !is_aevd(aevd) ||
	     aevd->obj.ia != evd->obj.ia))
		return IT_ERR_INVALID_AEVD;
	return IT_SUCCESS;
}

OPENRDMA_EXPORT it_status_t it_evd_modify(it_evd_handle_t evd_handle,
					  it_evd_param_mask_t mask,
					  const it_evd_param_t *params)
{
	struct itapi_evd *evd = to_evd(evd_handle), *aevd, *old;
	unsigned int m = (unsigned int)mask;
	struct core_evd_mod mod;
	uint32_t cmask = 0;
	it_status_t st;
	int ret;

	if (!itapi_valid(evd, IT_HANDLE_TYPE_EVD)) {
		itapi_arg_err("it_evd_modify", "evd_handle", "not an EVD");
		return IT_ERR_INVALID_EVD;
	}
	if (m & IT_EVD_PARAM_ALL)
		m = EVD_MODIFIABLE;
	if (!m || (m & ~(unsigned int)EVD_MODIFIABLE)) {
		itapi_arg_err("it_evd_modify", "mask", "0x%x", m);
		return IT_ERR_INVALID_MASK;
	}
	if (!params) {
		itapi_arg_err("it_evd_modify", "params", "NULL");
		return IT_ERR_FAULT;
	}
	st = modify_check(evd, m, params);
	if (st)
		return st;

	memset(&mod, 0, sizeof(mod));
	aevd = to_evd(params->aevd);
	if (m & IT_EVD_PARAM_FLAG) {
		cmask |= CORE_EVD_MOD_OVERFLOW;
		mod.overflow =
			(enum core_evd_overflow)evd_overflow(params->evd_flag);
	}
	if (m & IT_EVD_PARAM_QUEUE_SIZE) {
		cmask |= CORE_EVD_MOD_CAPACITY;
		mod.capacity = params->sevd_queue_size;
	}
	if (m & IT_EVD_PARAM_THRESHOLD) {
		cmask |= CORE_EVD_MOD_THRESHOLD;
		mod.threshold = params->sevd_threshold;
	}
	if (m & IT_EVD_PARAM_AEVD_HANDLE) {
		cmask |= CORE_EVD_MOD_AEVD;
		mod.aevd = aevd ? aevd->core : NULL;
	}
	if (m & IT_EVD_PARAM_ENABLED) {
		cmask |= CORE_EVD_MOD_ENABLED;
		mod.enabled = params->evd_enabled != IT_FALSE;
	}
	/* the overflowed state can only be cleared */
	if ((m & IT_EVD_PARAM_OVERFLOWED) && !params->evd_overflowed)
		cmask |= CORE_EVD_MOD_OVERFLOW_RESET;
	ret = cmask ? core_evd_modify(evd->core, cmask, &mod) : 0;
	if (ret)
		return ret == -OPENRDMA_EBUSY ?
			       IT_ERR_INVALID_QUEUE_SIZE :
			       itapi_status(ret, IT_ERR_INVALID_EVD_STATE);

	pthread_mutex_lock(&evd->obj.ia->lock);
	if (m & IT_EVD_PARAM_FLAG)
		evd->flags = params->evd_flag;
	if (m & IT_EVD_PARAM_QUEUE_SIZE)
		evd->queue_size = params->sevd_queue_size;
	if (m & IT_EVD_PARAM_THRESHOLD)
		evd->threshold = params->sevd_threshold;
	if (m & IT_EVD_PARAM_ENABLED)
		evd->enabled = params->evd_enabled != IT_FALSE;
	old = NULL;
	if ((m & IT_EVD_PARAM_AEVD_HANDLE) && evd->aevd != aevd) {
		old = evd->aevd;
		evd->aevd = aevd;
		if (aevd)
			itapi_obj_get(&aevd->obj);
	}
	pthread_mutex_unlock(&evd->obj.ia->lock);
	if (old)
		itapi_obj_put(&old->obj);
	return IT_SUCCESS;
}

OPENRDMA_EXPORT it_status_t it_evd_query(it_evd_handle_t evd_handle,
					 it_evd_param_mask_t mask,
					 it_evd_param_t *params)
{
	struct itapi_evd *evd = to_evd(evd_handle);
	unsigned int m = (unsigned int)mask;
	struct core_evd_info info;
	it_evd_param_t p;
	int ret;

	if (!itapi_valid(evd, IT_HANDLE_TYPE_EVD)) {
		itapi_arg_err("it_evd_query", "evd_handle", "not an EVD");
		return IT_ERR_INVALID_EVD;
	}
	if (m & ~EVD_QUERYABLE) {
		itapi_arg_err("it_evd_query", "mask", "0x%x", m);
		return IT_ERR_INVALID_MASK;
	}
	if (!params) {
		itapi_arg_err("it_evd_query", "params", "NULL");
		return IT_ERR_FAULT;
	}
	if (m & IT_EVD_PARAM_ALL)
		m = EVD_QUERYABLE;
	ret = core_evd_query(evd->core, &info);
	if (ret)
		return itapi_status(ret, IT_ERR_INVALID_EVD);
	p = *params;
	if (m & IT_EVD_PARAM_IA)
		p.ia = (it_ia_handle_t)evd->obj.ia;
	if (m & IT_EVD_PARAM_EVENT_NUMBER)
		p.event_number = evd->stream;
	if (m & IT_EVD_PARAM_FLAG)
		p.evd_flag = evd->flags;
	if (m & IT_EVD_PARAM_QUEUE_SIZE)
		p.sevd_queue_size = is_aevd(evd) ? 0 : info.capacity;
	if (m & IT_EVD_PARAM_THRESHOLD)
		p.sevd_threshold = evd->threshold;
	if (m & IT_EVD_PARAM_AEVD_HANDLE)
		p.aevd = (it_evd_handle_t)evd->aevd;
	if (m & IT_EVD_PARAM_FD)
		p.fd = info.fd;
	if (m & IT_EVD_PARAM_BOUND)
		p.evd_bound = itapi_obj_users(&evd->obj) ? IT_TRUE : IT_FALSE;
	if (m & IT_EVD_PARAM_ENABLED)
		p.evd_enabled = info.enabled ? IT_TRUE : IT_FALSE;
	if (m & IT_EVD_PARAM_OVERFLOWED)
		p.evd_overflowed = info.overflowed ? IT_TRUE : IT_FALSE;
	if (m & IT_EVD_PARAM_CALLBACK)
		p.evd_callback = info.callback ? IT_TRUE : IT_FALSE;
	*params = p;
	return IT_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Callbacks                                                          */
/* ------------------------------------------------------------------ */

/* Runs on the engine's callback pool, no lock held. */
static void evd_callback(struct core_evd *core, void *arg)
{
	struct itapi_evd *evd = arg;
	it_evd_callback_rtn_t fn =
		atomic_load_explicit(&evd->cb, memory_order_acquire);

	if (fn)
		fn((it_evd_handle_t)evd, evd->cb_arg);
}

OPENRDMA_EXPORT it_status_t it_evd_callback_attach(
	it_evd_handle_t evd_handle, it_evd_callback_rtn_t callback, void *arg)
{
	struct itapi_evd *evd = to_evd(evd_handle);
	struct itapi_ia *ia;
	int ret;

	if (!itapi_valid(evd, IT_HANDLE_TYPE_EVD)) {
		itapi_arg_err("it_evd_callback_attach", "evd_handle",
			      "not an EVD");
		return IT_ERR_INVALID_EVD;
	}
	if (!callback) {
		itapi_arg_err("it_evd_callback_attach", "callback", "NULL");
		return IT_ERR_FAULT;
	}
	ia = evd->obj.ia;
	pthread_mutex_lock(&ia->lock);
	if (atomic_load(&evd->cb)) {
		pthread_mutex_unlock(&ia->lock);
		return IT_ERR_CALLBACK_EXISTS;
	}
	evd->cb_arg = arg;
	atomic_store_explicit(&evd->cb, callback, memory_order_release);
	pthread_mutex_unlock(&ia->lock);

	ret = core_evd_callback_attach(evd->core, evd_callback, evd, 0);
	if (ret) {
		pthread_mutex_lock(&ia->lock);
		atomic_store(&evd->cb, NULL);
		pthread_mutex_unlock(&ia->lock);
		return ret == -OPENRDMA_EEXIST ?
			       IT_ERR_CALLBACK_EXISTS :
			       itapi_status(ret, IT_ERR_INVALID_EVD);
	}
	return IT_SUCCESS;
}

OPENRDMA_EXPORT it_status_t it_evd_callback_detach(it_evd_handle_t evd_handle)
{
	struct itapi_evd *evd = to_evd(evd_handle);
	struct itapi_ia *ia;
	int ret;

	if (!itapi_valid(evd, IT_HANDLE_TYPE_EVD)) {
		itapi_arg_err("it_evd_callback_detach", "evd_handle",
			      "not an EVD");
		return IT_ERR_INVALID_EVD;
	}
	/* returns once no invocation runs, except the caller's own */
	ret = core_evd_callback_detach(evd->core);
	if (ret == -OPENRDMA_ENOENT)
		return IT_ERR_INVALID_EVD_STATE;
	if (ret)
		return itapi_status(ret, IT_ERR_INVALID_EVD);
	ia = evd->obj.ia;
	pthread_mutex_lock(&ia->lock);
	atomic_store(&evd->cb, NULL);
	pthread_mutex_unlock(&ia->lock);
	return IT_SUCCESS;
}
