/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Event dispatchers.  A DAT EVD is one engine SEVD (core/evd/evd.h) that
 * takes the streams of its flags and stores DAT_EVENTs.  An EVD with the
 * DTO, RMR-bind or extension flag owns a CQ, which every EP that reports
 * to it shares; connection events come routed from the IA's CM channel,
 * async events from the context.  An EVD given a CNO joins the CNO's
 * aggregate EVD.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <openrdma/errno.h>
#include <openrdma/log.h>

#include "api/dat/provider.h"
#include "api/dat/slots.h"

#define EVD_FLAGS_ALL                                                \
	((unsigned int)(DAT_EVD_SOFTWARE_FLAG | DAT_EVD_CR_FLAG |    \
			DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG | \
			DAT_EVD_RMR_BIND_FLAG | DAT_EVD_ASYNC_FLAG | \
			DAT_IB_EVD_EXTENSION_FLAG))
/* Flags whose events come from the EVD's CQ. */
#define EVD_CQ_FLAGS                                               \
	((unsigned int)(DAT_EVD_DTO_FLAG | DAT_EVD_RMR_BIND_FLAG | \
			DAT_IB_EVD_EXTENSION_FLAG))
/* A CQ never smaller than this: EPs share it, and an overrun is fatal. */
#define EVD_CQ_MIN 256

struct datp_evd *datp_evd_get(DAT_EVD_HANDLE handle)
{
	return (struct datp_evd *)datp_obj_get(handle, DATP_EVD);
}

DAT_RETURN datp_evd_arg(struct datp_ia *ia, DAT_EVD_HANDLE handle,
			DAT_EVD_FLAGS flags, DAT_RETURN_SUBTYPE sub,
			const char *fn, struct datp_evd **evd_out)
{
	struct datp_evd *evd;

	if (!handle) {
		*evd_out = NULL;
		return DAT_SUCCESS;
	}
	evd = datp_evd_get(handle);
	if (!evd)
		return datp_fail(-OPENRDMA_EBADHANDLE, sub, fn, "evd %p",
				 handle);
	if ((evd->flags & flags) != flags)
		return datp_fail(-OPENRDMA_EBADHANDLE, sub, fn,
				 "evd %p: flags 0x%x lack 0x%x", handle,
				 evd->flags, flags);
	if (evd->obj.ia != ia)
		return datp_fail(-OPENRDMA_EBADHANDLE, sub, fn,
				 "evd %p belongs to another IA", handle);
	*evd_out = evd;
	return DAT_SUCCESS;
}

static uint32_t evd_streams(DAT_EVD_FLAGS flags)
{
	uint32_t streams = 0;

	if (flags & DAT_EVD_SOFTWARE_FLAG)
		streams |= CORE_EVD_STREAM_SOFTWARE;
	if (flags & DAT_EVD_CR_FLAG)
		streams |= CORE_EVD_STREAM_CM_REQ;
	if (flags & DAT_EVD_CONNECTION_FLAG)
		streams |= CORE_EVD_STREAM_CM_MSG;
	if (flags & EVD_CQ_FLAGS)
		streams |= CORE_EVD_STREAM_DTO;
	if (flags & DAT_EVD_ASYNC_FLAG)
		streams |=
			CORE_EVD_STREAM_ASYNC_AFF | CORE_EVD_STREAM_ASYNC_UNAFF;
	/* the IB UD connection events travel with the connection stream */
	if (flags & DAT_IB_EVD_EXTENSION_FLAG)
		streams |= CORE_EVD_STREAM_CM_MSG;
	return streams;
}

static int evd_cq_make(struct datp_evd *evd)
{
	struct datp_ia *ia = evd->obj.ia;
	int cqe = evd->qlen < EVD_CQ_MIN ? EVD_CQ_MIN : evd->qlen;
	int ret;

	if (cqe > ia->dev_attr.max_cqe)
		cqe = ia->dev_attr.max_cqe;
	ret = openrdma_comp_channel_create(ia->ctx, &evd->ch);
	if (ret)
		return ret;
	ret = openrdma_cq_create(ia->ctx, cqe, evd, evd->ch, 0, &evd->cq);
	if (ret)
		goto err_channel;
	ret = core_evd_cq_bind(evd->evd, evd->cq, datp_wc_convert, evd);
	if (ret)
		goto err_cq;
	return 0;

err_cq:
	openrdma_cq_destroy(evd->cq);
	evd->cq = NULL;
err_channel:
	openrdma_comp_channel_destroy(evd->ch);
	evd->ch = NULL;
	return ret;
}

static void evd_cq_free(struct datp_evd *evd)
{
	int ret, tries = 0;

	if (!evd->cq)
		return;
	core_evd_cq_unbind(evd->evd, evd->cq);
	do {
		ret = openrdma_cq_destroy(evd->cq);
	} while (datp_busy_retry(ret, &tries));
	if (ret)
		openrdma_warn("dat", "evd %p: cq_destroy: %s", (void *)evd,
			      openrdma_strerror(ret));
	openrdma_comp_channel_destroy(evd->ch);
	evd->cq = NULL;
}

/* Makes evd the IA's async EVD: there is one at most. */
static int evd_async_attach(struct datp_evd *evd)
{
	struct datp_ia *ia = evd->obj.ia;
	int ret;

	pthread_mutex_lock(&ia->async_lock);
	if (ia->async_evd) {
		pthread_mutex_unlock(&ia->async_lock);
		return -OPENRDMA_EEXIST;
	}
	ia->async_evd = evd;
	pthread_mutex_unlock(&ia->async_lock);
	ret = core_evd_async_bind(evd->evd, ia->ctx,
				  CORE_EVD_STREAM_ASYNC_AFF |
					  CORE_EVD_STREAM_ASYNC_UNAFF,
				  datp_async_convert, evd);
	if (ret) {
		pthread_mutex_lock(&ia->async_lock);
		ia->async_evd = NULL;
		pthread_mutex_unlock(&ia->async_lock);
		return ret;
	}
	evd->is_async = true;
	return 0;
}

static void evd_async_detach(struct datp_evd *evd)
{
	struct datp_ia *ia = evd->obj.ia;

	if (!evd->is_async)
		return;
	core_evd_async_unbind(evd->evd, ia->ctx);
	pthread_mutex_lock(&ia->async_lock);
	ia->async_evd = NULL;
	ia->async_owned = false;
	pthread_mutex_unlock(&ia->async_lock);
	evd->is_async = false;
}

static int evd_cno_set(struct datp_evd *evd, struct datp_cno *cno)
{
	struct core_evd_mod mod = { .aevd = cno ? cno->aevd : NULL };
	int ret;

	if (cno == evd->cno)
		return 0;
	ret = core_evd_modify(evd->evd, CORE_EVD_MOD_AEVD, &mod);
	if (ret)
		return ret;
	if (evd->cno)
		datp_unuse(&evd->cno->obj);
	if (cno)
		datp_use(&cno->obj);
	evd->cno = cno;
	return 0;
}

int datp_evd_make(struct datp_ia *ia, DAT_COUNT qlen, struct datp_cno *cno,
		  DAT_EVD_FLAGS flags, struct datp_evd **evd_out)
{
	struct core_evd_attr attr = { 0 };
	struct datp_evd *evd;
	int ret;

	evd = calloc(1, sizeof(*evd));
	if (!evd)
		return -OPENRDMA_ENOMEM;
	evd->obj.ia = ia;
	evd->flags = flags;
	evd->qlen = qlen;
	attr.streams = evd_streams(flags);
	/* keep working after an overflow; DAT reports it as an async event */
	attr.overflow = CORE_EVD_OVERFLOW_NOTIFY;
	attr.rec_size = DATP_REC_SIZE;
	attr.capacity = (size_t)qlen;
	attr.threshold = 1;
	attr.overflow_fn = datp_overflow;
	attr.overflow_arg = evd;
	attr.context = evd;
	ret = core_evd_create(&attr, &evd->evd);
	if (ret)
		goto err_free;
	if (flags & EVD_CQ_FLAGS) {
		ret = evd_cq_make(evd);
		if (ret)
			goto err_evd;
	}
	if (flags & DAT_EVD_ASYNC_FLAG) {
		ret = evd_async_attach(evd);
		if (ret)
			goto err_cq;
	}
	if (cno) {
		ret = evd_cno_set(evd, cno);
		if (ret)
			goto err_async;
	}
	ret = datp_obj_init(&evd->obj, ia, DATP_EVD);
	if (ret)
		goto err_cno;
	datp_ia_count(ia, DCNT_IA_EVD_CREATE);
	*evd_out = evd;
	return 0;

err_cno:
	evd_cno_set(evd, NULL);
err_async:
	evd_async_detach(evd);
err_cq:
	evd_cq_free(evd);
err_evd:
	core_evd_free(evd->evd);
err_free:
	free(evd);
	return ret;
}

DAT_RETURN datp_evd_create(DAT_IA_HANDLE ia_handle, DAT_COUNT evd_min_qlen,
			   DAT_CNO_HANDLE cno_handle, DAT_EVD_FLAGS evd_flags,
			   DAT_EVD_HANDLE *evd_handle)
{
	struct datp_ia *ia = datp_ia_get(ia_handle);
	struct datp_cno *cno = NULL;
	struct datp_evd *evd;
	int ret;

	if (!ia)
		return DATP_HANDLE(DAT_INVALID_HANDLE_IA, "ia %p", ia_handle);
	if (evd_min_qlen <= 0 ||
	    evd_min_qlen > (DAT_COUNT)CORE_EVD_CAPACITY_MAX ||
	    evd_min_qlen > ia->dev_attr.max_cqe)
		return DATP_ARG(DAT_INVALID_ARG2, "evd_min_qlen %d",
				evd_min_qlen);
	if (cno_handle) {
		cno = datp_cno_get(cno_handle);
		if (!cno || cno->obj.ia != ia)
			return DATP_HANDLE(DAT_INVALID_HANDLE_CNO, "cno %p",
					   cno_handle);
	}
	if (!evd_flags || ((unsigned int)evd_flags & ~EVD_FLAGS_ALL))
		return DATP_ARG(DAT_INVALID_ARG4, "evd_flags 0x%x", evd_flags);
	if (!evd_handle)
		return DATP_ARG(DAT_INVALID_ARG5, "evd_handle: NULL");
	ret = datp_evd_make(ia, evd_min_qlen, cno, evd_flags, &evd);
	if (ret == -OPENRDMA_EEXIST)
		return DATP_STATE(DAT_INVALID_STATE_EVD_ASYNC,
				  "the IA has an async EVD already");
	if (ret)
		return DATP_ERR(ret, DAT_RESOURCE_TEVD, "evd_flags 0x%x",
				evd_flags);
	*evd_handle = evd;
	return DAT_SUCCESS;
}

DAT_RETURN datp_evd_query(DAT_EVD_HANDLE evd_handle, DAT_EVD_PARAM_MASK mask,
			  DAT_EVD_PARAM *param)
{
	struct datp_evd *evd = datp_evd_get(evd_handle);
	struct core_evd_info info;
	DAT_EVD_PARAM p;
	int ret;

	if (!evd)
		return DATP_HANDLE(DAT_INVALID_HANDLE_EVD_REQUEST, "evd %p",
				   evd_handle);
	if ((unsigned int)mask & ~(unsigned int)DAT_EVD_FIELD_ALL)
		return DATP_ARG(DAT_INVALID_ARG2, "evd_param_mask 0x%x", mask);
	if (!param)
		return DATP_ARG(DAT_INVALID_ARG3, "evd_param: NULL");
	ret = core_evd_query(evd->evd, &info);
	if (ret)
		return DATP_ERR(ret, DAT_NO_SUBTYPE, "core_evd_query");
	memset(&p, 0, sizeof(p));
	p.ia_handle = evd->obj.ia;
	p.evd_qlen = evd->qlen;
	/* waits take any threshold: the threshold configuration */
	p.evd_state =
		(DAT_EVD_STATE)((info.enabled ? DAT_EVD_STATE_ENABLED :
						DAT_EVD_STATE_DISABLED) |
				(info.waitable ? DAT_EVD_STATE_WAITABLE :
						 DAT_EVD_STATE_UNWAITABLE) |
				DAT_EVD_STATE_CONFIG_THRESHOLD);
	p.cno_handle = evd->cno;
	p.evd_flags = evd->flags;
	*param = p;
	return DAT_SUCCESS;
}

DAT_RETURN datp_evd_modify_cno(DAT_EVD_HANDLE evd_handle,
			       DAT_CNO_HANDLE cno_handle)
{
	struct datp_evd *evd = datp_evd_get(evd_handle);
	struct datp_cno *cno = NULL;
	int ret;

	if (!evd)
		return DATP_HANDLE(DAT_INVALID_HANDLE_EVD_REQUEST, "evd %p",
				   evd_handle);
	if (cno_handle) {
		cno = datp_cno_get(cno_handle);
		if (!cno || cno->obj.ia != evd->obj.ia)
			return DATP_HANDLE(DAT_INVALID_HANDLE_CNO, "cno %p",
					   cno_handle);
	}
	ret = evd_cno_set(evd, cno);
	if (ret)
		return DATP_ERR(ret, DAT_NO_SUBTYPE, "core_evd_modify");
	return DAT_SUCCESS;
}

static DAT_RETURN evd_mod(DAT_EVD_HANDLE evd_handle, uint32_t mask,
			  const struct core_evd_mod *mod, const char *fn)
{
	struct datp_evd *evd = datp_evd_get(evd_handle);
	int ret;

	if (!evd)
		return datp_fail(-OPENRDMA_EBADHANDLE,
				 DAT_INVALID_HANDLE_EVD_REQUEST, fn, "evd %p",
				 evd_handle);
	ret = core_evd_modify(evd->evd, mask, mod);
	if (ret)
		return datp_fail(ret, DAT_NO_SUBTYPE, fn, "core_evd_modify");
	return DAT_SUCCESS;
}

DAT_RETURN datp_evd_enable(DAT_EVD_HANDLE evd_handle)
{
	struct core_evd_mod mod = { .enabled = true };

	return evd_mod(evd_handle, CORE_EVD_MOD_ENABLED, &mod, __func__);
}

DAT_RETURN datp_evd_disable(DAT_EVD_HANDLE evd_handle)
{
	struct core_evd_mod mod = { .enabled = false };

	return evd_mod(evd_handle, CORE_EVD_MOD_ENABLED, &mod, __func__);
}

DAT_RETURN datp_evd_set_unwaitable(DAT_EVD_HANDLE evd_handle)
{
	struct core_evd_mod mod = { .waitable = false };

	return evd_mod(evd_handle, CORE_EVD_MOD_WAITABLE, &mod, __func__);
}

DAT_RETURN datp_evd_clear_unwaitable(DAT_EVD_HANDLE evd_handle)
{
	struct core_evd_mod mod = { .waitable = true };

	return evd_mod(evd_handle, CORE_EVD_MOD_WAITABLE, &mod, __func__);
}

DAT_RETURN datp_evd_resize(DAT_EVD_HANDLE evd_handle, DAT_COUNT evd_min_qlen)
{
	struct datp_evd *evd = datp_evd_get(evd_handle);
	struct core_evd_mod mod = { 0 };
	struct datp_ia *ia;
	int ret;

	if (!evd)
		return DATP_HANDLE(DAT_INVALID_HANDLE_EVD_REQUEST, "evd %p",
				   evd_handle);
	ia = evd->obj.ia;
	if (evd_min_qlen <= 0 ||
	    evd_min_qlen > (DAT_COUNT)CORE_EVD_CAPACITY_MAX ||
	    evd_min_qlen > ia->dev_attr.max_cqe)
		return DATP_ARG(DAT_INVALID_ARG2, "evd_min_qlen %d",
				evd_min_qlen);
	mod.capacity = (size_t)evd_min_qlen;
	ret = core_evd_modify(evd->evd, CORE_EVD_MOD_CAPACITY, &mod);
	if (ret == -OPENRDMA_EBUSY)
		return DATP_ARG(DAT_INVALID_ARG2,
				"evd_min_qlen %d: fewer than the events queued",
				evd_min_qlen);
	if (ret)
		return DATP_ERR(ret, DAT_RESOURCE_TEVD, "core_evd_modify");
	/* the CQ grows with the queue; it never shrinks below its EPs' need */
	if (evd->cq && evd_min_qlen > evd->cq->cqe) {
		ret = openrdma_cq_resize(evd->cq, evd_min_qlen);
		if (ret)
			openrdma_warn("dat", "cq_resize %d: %s", evd_min_qlen,
				      openrdma_strerror(ret));
	}
	evd->qlen = evd_min_qlen;
	return DAT_SUCCESS;
}

int datp_evd_post(struct datp_evd *evd, DAT_EVENT *event)
{
	event->evd_handle = evd;
	return core_evd_enqueue(evd->evd, event);
}

DAT_RETURN datp_evd_post_se(DAT_EVD_HANDLE evd_handle, const DAT_EVENT *event)
{
	struct datp_evd *evd = datp_evd_get(evd_handle);
	DAT_EVENT ev;
	int ret;

	if (!evd)
		return DATP_HANDLE(DAT_INVALID_HANDLE_EVD_REQUEST, "evd %p",
				   evd_handle);
	if (!(evd->flags & DAT_EVD_SOFTWARE_FLAG))
		return DATP_ARG(DAT_INVALID_ARG1,
				"evd %p has no DAT_EVD_SOFTWARE_FLAG",
				evd_handle);
	if (!event)
		return DATP_ARG(DAT_INVALID_ARG2, "event: NULL");
	if (event->event_number != DAT_SOFTWARE_EVENT)
		return DATP_ARG(DAT_INVALID_ARG2, "event_number 0x%x",
				event->event_number);
	ev = *event;
	ev.evd_handle = evd;
	ret = core_evd_post_se(evd->evd, &ev);
	if (ret)
		return DATP_ERR(ret, DAT_NO_SUBTYPE, "core_evd_post_se");
	return DAT_SUCCESS;
}

/* Bookkeeping on an event leaving the EVD to the consumer. */
static void evd_taken(struct datp_evd *evd, const DAT_EVENT *event)
{
	atomic_fetch_add_explicit(&evd->counters[DCNT_EVD_DEQUEUE_FOUND], 1,
				  memory_order_relaxed);
	if (atomic_load_explicit(&evd->obj.ia->srq_eps, memory_order_relaxed))
		datp_srq_taken(evd->obj.ia, event);
	if (evd->cno)
		datp_cno_rearm(evd->cno);
}

DAT_RETURN datp_evd_dequeue(DAT_EVD_HANDLE evd_handle, DAT_EVENT *event)
{
	struct datp_evd *evd = datp_evd_get(evd_handle);
	DAT_EVENT ev;
	int ret;

	if (!evd)
		return DATP_HANDLE(DAT_INVALID_HANDLE_EVD_REQUEST, "evd %p",
				   evd_handle);
	if (!event)
		return DATP_ARG(DAT_INVALID_ARG2, "event: NULL");
	atomic_fetch_add_explicit(&evd->counters[DCNT_EVD_DEQUEUE], 1,
				  memory_order_relaxed);
	ret = core_evd_dequeue(evd->evd, &ev);
	if (ret) {
		atomic_fetch_add_explicit(
			&evd->counters[DCNT_EVD_DEQUEUE_NOT_FOUND], 1,
			memory_order_relaxed);
		return datp_ret(ret, DAT_NO_SUBTYPE);
	}
	evd_taken(evd, &ev);
	*event = ev;
	return DAT_SUCCESS;
}

static uint64_t timeout_us(DAT_TIMEOUT timeout)
{
	return timeout == DAT_TIMEOUT_INFINITE ? CORE_EVD_INFINITE :
						 (uint64_t)timeout;
}

DAT_RETURN datp_evd_wait(DAT_EVD_HANDLE evd_handle, DAT_TIMEOUT timeout,
			 DAT_COUNT threshold, DAT_EVENT *event,
			 DAT_COUNT *n_more_events)
{
	struct datp_evd *evd = datp_evd_get(evd_handle);
	struct core_evd_info info;
	size_t nmore = 0;
	DAT_EVENT ev;
	int ret;

	if (!evd)
		return DATP_HANDLE(DAT_INVALID_HANDLE_EVD_REQUEST, "evd %p",
				   evd_handle);
	if (threshold <= 0 || threshold > evd->qlen)
		return DATP_ARG(DAT_INVALID_ARG3, "threshold %d (qlen %d)",
				threshold, evd->qlen);
	if (!event)
		return DATP_ARG(DAT_INVALID_ARG4, "event: NULL");
	atomic_fetch_add_explicit(&evd->counters[DCNT_EVD_WAIT], 1,
				  memory_order_relaxed);
	/* a free from another thread ends the wait; the memory stays */
	datp_obj_hold(&evd->obj);
	ret = core_evd_wait(evd->evd, timeout_us(timeout), (size_t)threshold,
			    &ev, &nmore);
	if (ret == -OPENRDMA_ETIMEDOUT && n_more_events &&
	    !core_evd_query(evd->evd, &info))
		*n_more_events = (DAT_COUNT)info.count;
	if (!ret)
		evd_taken(evd, &ev);
	datp_obj_release(&evd->obj);
	switch (ret) {
	case 0:
		break;
	case -OPENRDMA_EBUSY:
		return DATP_STATE(DAT_INVALID_STATE_EVD_WAITER,
				  "another thread waits on evd %p", evd_handle);
	case -OPENRDMA_ESTATE:
		return DATP_STATE(DAT_INVALID_STATE_EVD_UNWAITABLE,
				  "evd %p is unwaitable", evd_handle);
	case -OPENRDMA_ETIMEDOUT:
		return datp_ret(ret, DAT_NO_SUBTYPE);
	default:
		return DATP_ERR(ret, DAT_NO_SUBTYPE, "core_evd_wait");
	}
	*event = ev;
	if (n_more_events)
		*n_more_events = (DAT_COUNT)nmore;
	return DAT_SUCCESS;
}

void datp_evd_destroy(struct datp_evd *evd)
{
	struct datp_ia *ia = evd->obj.ia;
	int ret;

	/* new handle checks fail from here; a waiter is woken by the free */
	evd->obj.tag = DATP_TAG_FREED;
	evd_async_detach(evd);
	evd_cno_set(evd, NULL);
	evd_cq_free(evd);
	ret = core_evd_free(evd->evd);
	if (ret)
		openrdma_warn("dat", "core_evd_free: %s",
			      openrdma_strerror(ret));
	datp_ia_count(ia, DCNT_IA_EVD_FREE);
	datp_obj_fini(&evd->obj, DATP_EVD);
}

DAT_RETURN datp_evd_free(DAT_EVD_HANDLE evd_handle)
{
	struct datp_evd *evd = datp_evd_get(evd_handle);
	struct datp_ia *ia;
	bool owned;

	if (!evd)
		return DATP_HANDLE(DAT_INVALID_HANDLE_EVD_REQUEST, "evd %p",
				   evd_handle);
	ia = evd->obj.ia;
	pthread_mutex_lock(&ia->async_lock);
	owned = evd->is_async && ia->async_owned;
	pthread_mutex_unlock(&ia->async_lock);
	if (owned)
		return DATP_STATE(DAT_INVALID_STATE_EVD_IN_USE,
				  "the IA's async EVD goes with the IA");
	if (datp_in_use(&evd->obj))
		return DATP_STATE(DAT_INVALID_STATE_EVD_IN_USE,
				  "%u EPs or service points use evd %p",
				  atomic_load(&evd->obj.users), evd_handle);
	datp_evd_destroy(evd);
	return DAT_SUCCESS;
}
