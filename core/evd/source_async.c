/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Async events.  One router per context watches its async_fd; each event
 * goes, converted, to every EVD bound to the context for the event's
 * stream (affiliated: QP, CQ, SRQ; unaffiliated: port, device).  For an
 * event about a CQ the converter is told which EVD the CQ feeds, so the
 * front end can name it in its "EVD overflow" event.
 */
#include <stdlib.h>
#include <uthash.h>
#include <utlist.h>

#include <openrdma/errno.h>
#include <openrdma/log.h>

#include "core/evd/evd_priv.h"

struct evd_async_bind {
	struct core_evd *evd;
	uint32_t streams;
	core_evd_async_fn convert;
	void *arg;
	void *rec;
	struct evd_async_bind *next, *prev;
};

struct evd_async_router {
	struct openrdma_context *ctx;
	struct core_disp_watch *watch;
	struct evd_async_bind *binds;
	UT_hash_handle hh;
};

pthread_mutex_t core_evd_reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct evd_async_router *routers; /* by context; reg lock */
/*
 * Serializes making and removing routers, across the wait for the handler
 * in core_disp_unwatch(): a context's fd is in the epoll set once.
 * Outside the registry lock, which the handler takes.
 */
static pthread_mutex_t router_lock = PTHREAD_MUTEX_INITIALIZER;

#define ASYNC_STREAMS (CORE_EVD_STREAM_ASYNC_AFF | CORE_EVD_STREAM_ASYNC_UNAFF)

uint32_t core_evd_async_stream(enum openrdma_event_type type)
{
	switch (type) {
	case OPENRDMA_EVENT_DEVICE_FATAL:
	case OPENRDMA_EVENT_PORT_ACTIVE:
	case OPENRDMA_EVENT_PORT_ERR:
	case OPENRDMA_EVENT_LID_CHANGE:
	case OPENRDMA_EVENT_PKEY_CHANGE:
	case OPENRDMA_EVENT_SM_CHANGE:
	case OPENRDMA_EVENT_CLIENT_REREGISTER:
	case OPENRDMA_EVENT_GID_CHANGE:
		return CORE_EVD_STREAM_ASYNC_UNAFF;
	default:
		return CORE_EVD_STREAM_ASYNC_AFF;
	}
}

/* core_evd_reg_lock held */
static void async_route(struct evd_async_router *r,
			const struct openrdma_async_event *ev)
{
	uint32_t stream = core_evd_async_stream(ev->event_type);
	struct core_evd *cq_evd = NULL;
	struct evd_async_bind *b;

	if (ev->event_type == OPENRDMA_EVENT_CQ_ERR)
		cq_evd = core_evd_cq_owner(ev->element.cq);
	DL_FOREACH (r->binds, b) {
		if (!(b->streams & stream))
			continue;
		if (b->convert(b->arg, ev, cq_evd, b->rec))
			continue;
		core_evd_lock(b->evd);
		if (!b->evd->dead)
			core_evd_push(b->evd, b->rec);
		core_evd_update(b->evd);
		core_evd_unlock(b->evd);
	}
}

static void async_handler(void *arg)
{
	struct evd_async_router *r = arg;
	struct openrdma_async_event ev;
	int ret;

	for (;;) {
		ret = openrdma_async_event_get(r->ctx, &ev);
		if (ret)
			break;
		pthread_mutex_lock(&core_evd_reg_lock);
		async_route(r, &ev);
		pthread_mutex_unlock(&core_evd_reg_lock);
		openrdma_async_event_ack(&ev);
	}
	if (ret != -OPENRDMA_EAGAIN)
		openrdma_dbg(EVD_LOG, "async_event_get: %s",
			     openrdma_strerror(ret));
}

static struct evd_async_bind *bind_find(struct evd_async_router *r,
					struct core_evd *evd)
{
	struct evd_async_bind *b;

	DL_FOREACH (r->binds, b) {
		if (b->evd == evd)
			return b;
	}
	return NULL;
}

int core_evd_async_bind(struct core_evd *evd, struct openrdma_context *ctx,
			uint32_t streams, core_evd_async_fn convert, void *arg)
{
	struct evd_async_router *r;
	struct evd_async_bind *b;
	int ret = 0;

	if (!ctx || !convert || ctx->async_fd < 0 || !streams ||
	    (streams & ~(uint32_t)ASYNC_STREAMS) || (streams & ~evd->streams))
		return -OPENRDMA_EINVAL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -OPENRDMA_ENOMEM;
	b->rec = calloc(1, evd->rec_size);
	if (!b->rec) {
		ret = -OPENRDMA_ENOMEM;
		goto err_free;
	}
	b->evd = evd;
	b->streams = streams;
	b->convert = convert;
	b->arg = arg;

	pthread_mutex_lock(&evd->ctl);
	pthread_mutex_lock(&router_lock);
	pthread_mutex_lock(&core_evd_reg_lock);
	HASH_FIND_PTR(routers, &ctx, r);
	if (r && bind_find(r, evd)) {
		ret = -OPENRDMA_EEXIST;
		goto err_unlock;
	}
	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r) {
			ret = -OPENRDMA_ENOMEM;
			goto err_unlock;
		}
		r->ctx = ctx;
		/* the handler takes the registry lock only once running */
		ret = core_disp_watch(ctx->async_fd, async_handler, r,
				      &r->watch);
		if (ret) {
			free(r);
			goto err_unlock;
		}
		HASH_ADD_PTR(routers, ctx, r);
	}
	DL_APPEND(r->binds, b);
	pthread_mutex_unlock(&core_evd_reg_lock);
	pthread_mutex_unlock(&router_lock);
	core_evd_lock(evd);
	evd->nasync++;
	core_evd_unlock(evd);
	pthread_mutex_unlock(&evd->ctl);
	return 0;

err_unlock:
	pthread_mutex_unlock(&core_evd_reg_lock);
	pthread_mutex_unlock(&router_lock);
	pthread_mutex_unlock(&evd->ctl);
	free(b->rec);
err_free:
	free(b);
	return ret;
}

/* Removes evd's binding from r.  ctl held. */
static void bind_remove(struct core_evd *evd, struct evd_async_router *r,
			struct evd_async_bind *b)
{
	struct core_disp_watch *w = NULL;

	pthread_mutex_lock(&router_lock);
	pthread_mutex_lock(&core_evd_reg_lock);
	DL_DELETE(r->binds, b);
	if (!r->binds) {
		HASH_DEL(routers, r);
		w = r->watch;
	}
	pthread_mutex_unlock(&core_evd_reg_lock);
	/* the handler finds the router only while it is watched */
	if (w) {
		core_disp_unwatch(w);
		free(r);
	}
	pthread_mutex_unlock(&router_lock);
	core_evd_lock(evd);
	evd->nasync--;
	core_evd_unlock(evd);
	free(b->rec);
	free(b);
}

int core_evd_async_unbind(struct core_evd *evd, struct openrdma_context *ctx)
{
	struct evd_async_router *r;
	struct evd_async_bind *b = NULL;

	pthread_mutex_lock(&evd->ctl);
	pthread_mutex_lock(&core_evd_reg_lock);
	HASH_FIND_PTR(routers, &ctx, r);
	if (r)
		b = bind_find(r, evd);
	pthread_mutex_unlock(&core_evd_reg_lock);
	if (b)
		bind_remove(evd, r, b);
	pthread_mutex_unlock(&evd->ctl);
	return b ? 0 : -OPENRDMA_ENOENT;
}

void core_evd_async_unbind_all(struct core_evd *evd)
{
	struct evd_async_router *r, *tmp, *found;
	struct evd_async_bind *b;

	while (evd->nasync) {
		found = NULL;
		b = NULL;
		pthread_mutex_lock(&core_evd_reg_lock);
		HASH_ITER (hh, routers, r, tmp) {
			b = bind_find(r, evd);
			if (b) {
				found = r;
				break;
			}
		}
		pthread_mutex_unlock(&core_evd_reg_lock);
		if (!found)
			break;
		bind_remove(evd, found, b);
	}
}
