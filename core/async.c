/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Asynchronous events: the context's queue, which transports fill with
 * openrdma_async_event_post() and applications drain with
 * openrdma_async_event_get(); and the event-fd helpers that every channel of
 * the core shares.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <utlist.h>

#include <openrdma/transport.h>

#include "core/core.h"
#include "core/export.h"

struct core_async_event {
	struct openrdma_async_event ev;
	struct core_async_event *prev, *next;
};

int core_evfd_create(int flags, int *fd_out)
{
	int fd;

	fd = eventfd(0, EFD_SEMAPHORE | EFD_CLOEXEC | flags);
	if (fd < 0)
		return -errno;
	*fd_out = fd;
	return 0;
}

void core_evfd_post(int fd)
{
	uint64_t one = 1;

	/* Fails only if the counter would pass 2^64 - 2: not reachable. */
	if (write(fd, &one, sizeof(one)) != sizeof(one))
		openrdma_err("core", "eventfd %d: write: %s", fd,
			     strerror(errno));
}

void core_evfd_take(int fd)
{
	uint64_t val;

	/* The caller's lock pairs counts with queued events: one is there,
	 * so this read does not block even on a blocking fd. */
	if (read(fd, &val, sizeof(val)) != sizeof(val))
		openrdma_err("core", "eventfd %d: read: %s", fd,
			     strerror(errno));
}

int core_evfd_wait(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int flags;

	flags = fcntl(fd, F_GETFL);
	if (flags < 0)
		return -errno;
	if (flags & O_NONBLOCK)
		return -OPENRDMA_EAGAIN;
	if (poll(&pfd, 1, -1) < 0)
		return -errno;
	return 0;
}

/* The type of object an event is about, or FREED for port/device events. */
static uint32_t event_obj_type(enum openrdma_event_type type)
{
	switch (type) {
	case OPENRDMA_EVENT_CQ_ERR:
		return OPENRDMA_OBJ_CQ;
	case OPENRDMA_EVENT_QP_FATAL:
	case OPENRDMA_EVENT_QP_REQ_ERR:
	case OPENRDMA_EVENT_QP_ACCESS_ERR:
	case OPENRDMA_EVENT_COMM_EST:
	case OPENRDMA_EVENT_SQ_DRAINED:
	case OPENRDMA_EVENT_PATH_MIG:
	case OPENRDMA_EVENT_PATH_MIG_ERR:
	case OPENRDMA_EVENT_QP_LAST_WQE_REACHED:
		return OPENRDMA_OBJ_QP;
	case OPENRDMA_EVENT_SRQ_ERR:
	case OPENRDMA_EVENT_SRQ_LIMIT_REACHED:
		return OPENRDMA_OBJ_SRQ;
	default:
		return OPENRDMA_OBJ_FREED;
	}
}

static struct openrdma_obj *event_obj(const struct openrdma_async_event *ev)
{
	switch (event_obj_type(ev->event_type)) {
	case OPENRDMA_OBJ_CQ:
		return ev->element.cq ? &ev->element.cq->obj : NULL;
	case OPENRDMA_OBJ_QP:
		return ev->element.qp ? &ev->element.qp->obj : NULL;
	case OPENRDMA_OBJ_SRQ:
		return ev->element.srq ? &ev->element.srq->obj : NULL;
	default:
		return NULL;
	}
}

int core_async_init(struct core_ctx *cc)
{
	int ret;

	ret = core_evfd_create(EFD_NONBLOCK, &cc->async_fd);
	if (ret)
		return ret;
	ret = core_lock_init(&cc->lock, CORE_LOCK_MUTEX);
	if (ret)
		goto err_fd;
	cc->events = NULL;
	return 0;

err_fd:
	close(cc->async_fd);
	return ret;
}

void core_async_fini(struct core_ctx *cc)
{
	struct core_async_event *e, *tmp;

	/* Only port and device events can be left: an event about an object
	 * holds it, and the object holds the context open. */
	DL_FOREACH_SAFE (cc->events, e, tmp) {
		DL_DELETE(cc->events, e);
		free(e);
	}
	close(cc->async_fd);
	core_lock_destroy(&cc->lock);
}

unsigned int core_async_held(struct core_ctx *cc,
			     const struct openrdma_obj *obj)
{
	struct core_async_event *e;
	unsigned int n = 0;

	DL_FOREACH (cc->events, e)
		if (event_obj(&e->ev) == obj)
			n++;
	return n;
}

void core_async_discard(struct core_ctx *cc, const struct openrdma_obj *obj)
{
	struct core_async_event *e, *tmp;
	struct openrdma_obj *held;

	DL_FOREACH_SAFE (cc->events, e, tmp) {
		held = event_obj(&e->ev);
		if (held != obj)
			continue;
		DL_DELETE(cc->events, e);
		core_evfd_take(cc->async_fd);
		core_obj_put(held);
		free(e);
	}
}

OPENRDMA_EXPORT void
openrdma_async_event_post(struct openrdma_context *ctx,
			  const struct openrdma_async_event *event)
{
	struct core_async_event *e;
	struct openrdma_obj *obj;
	struct core_ctx *cc;
	uint32_t type;

	if (!ctx || !event ||
	    (unsigned int)event->event_type >= OPENRDMA_EVENT_TYPE_MAX) {
		openrdma_warn("core", "invalid event dropped");
		return;
	}
	type = event_obj_type(event->event_type);
	obj = event_obj(event);
	if (type != OPENRDMA_OBJ_FREED && !obj) {
		openrdma_warn("core", "%s without its object: dropped",
			      openrdma_event_type_str(event->event_type));
		return;
	}
	cc = core_ctx_get(ctx);
	if (!cc)
		return;
	e = malloc(sizeof(*e));
	if (!e) {
		openrdma_err("core", "async event %s lost: out of memory",
			     openrdma_event_type_str(event->event_type));
		return;
	}
	e->ev = *event;

	core_lock_acquire(&cc->lock);
	/* An event must not outlive its object: drop it once the object's
	 * destroy (or the context's close) has begun. */
	if (ctx->obj.type != OPENRDMA_OBJ_CONTEXT ||
	    (obj && obj->type != type)) {
		core_lock_release(&cc->lock);
		openrdma_dbg("core", "async event %s dropped: object destroyed",
			     openrdma_event_type_str(event->event_type));
		free(e);
		return;
	}
	if (obj)
		core_obj_get(obj);
	DL_APPEND(cc->events, e);
	core_evfd_post(cc->async_fd);
	core_lock_release(&cc->lock);
}

OPENRDMA_EXPORT int openrdma_async_event_get(struct openrdma_context *ctx,
					     struct openrdma_async_event *event)
{
	struct core_async_event *e;
	struct core_ctx *cc;
	int ret;

	ret = core_check(ctx, OPENRDMA_OBJ_CONTEXT, "async_event_get", "ctx");
	if (ret)
		return ret;
	if (!event) {
		core_arg_err("async_event_get", "event", "NULL");
		return -OPENRDMA_EINVAL;
	}
	cc = core_ctx_get(ctx);

	core_lock_acquire(&cc->lock);
	e = cc->events;
	if (e) {
		DL_DELETE(cc->events, e);
		core_evfd_take(cc->async_fd);
	}
	core_lock_release(&cc->lock);
	if (!e)
		return -OPENRDMA_EAGAIN;

	*event = e->ev;
	free(e);
	return 0;
}

OPENRDMA_EXPORT void
openrdma_async_event_ack(struct openrdma_async_event *event)
{
	struct openrdma_obj *obj;
	struct core_ctx *cc;

	if (!event)
		return;
	obj = event_obj(event);
	if (!obj)
		return;
	/* Counted, as libibverbs does, for CQ events. */
	if (event_obj_type(event->event_type) == OPENRDMA_OBJ_CQ) {
		cc = core_ctx_get(obj->ctx);
		core_lock_acquire(&cc->lock);
		event->element.cq->async_events_completed++;
		core_lock_release(&cc->lock);
	}
	core_obj_put(obj);
}
