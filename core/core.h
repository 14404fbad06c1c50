/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Declarations shared inside the verbs core: the state the core keeps per
 * context, the event-fd helpers behind every channel, and the argument
 * checks.
 */
#ifndef CORE_CORE_H
#define CORE_CORE_H

#include <sys/socket.h>
#include <uthash.h>

#include <openrdma/log.h>
#include <openrdma/verbs.h>

#include "core/lock.h"
#include "core/obj.h"

struct core_async_event;

/*
 * The core's side of a context, found with core_ctx_get().  Public structs
 * have no room for it, so a table keyed by the context pointer holds it;
 * only control paths look it up.
 */
struct core_ctx {
	struct openrdma_context *ctx; /* key */
	struct openrdma_device_attr attr; /* cached at open, for arg checks */
	/*
	 * Guards the async-event queue and object retirement.  Always a
	 * mutex: transports post events from their own threads whatever the
	 * thread mode.
	 */
	struct core_lock lock;
	int async_fd; /* eventfd: one count per queued event */
	struct core_async_event *events; /* utlist DL queue */
	UT_hash_handle hh;
};

/* The core state of a context that passed core_obj_check(); never NULL. */
struct core_ctx *core_ctx_get(const struct openrdma_context *ctx);
/* How many contexts are open (the library may be torn down at none). */
unsigned int core_ctx_count(void);

static inline const struct openrdma_device_attr *
core_attr(const struct openrdma_context *ctx)
{
	return &core_ctx_get(ctx)->attr;
}

/* async.c: the context's async-event queue */
int core_async_init(struct core_ctx *cc);
void core_async_fini(struct core_ctx *cc);
/* With cc->lock held: unread events holding obj, and dropping them. */
unsigned int core_async_held(struct core_ctx *cc,
			     const struct openrdma_obj *obj);
void core_async_discard(struct core_ctx *cc, const struct openrdma_obj *obj);

/*
 * With cc->lock held: invalidates obj unless something other than its
 * unread events holds it.  'unread' counts references held by the caller's
 * own unread events (a CQ's channel notifications), which the caller
 * discards when this returns 0; unread async events are discarded here.
 */
int core_obj_retire_locked(struct core_ctx *cc, struct openrdma_obj *obj,
			   unsigned int unread);

/*
 * Event fds.  Every channel (completion, CM, async) is an eventfd in
 * semaphore mode whose counter equals the number of queued events: posted
 * and taken only under the queue's lock, together with the queue change,
 * so poll() reports readable exactly while something is queued.
 */
int core_evfd_create(int flags, int *fd_out);
void core_evfd_post(int fd);
void core_evfd_take(int fd);
/*
 * Sleeps until fd is readable: 0, -OPENRDMA_EAGAIN when the application
 * made it non-blocking, -OPENRDMA_EINTR on a signal.
 */
int core_evfd_wait(int fd);

/*
 * Arms cq's notification on its channel (openrdma_cq_req_notify without
 * telling the transport), and disarms it.  An event queue's waiter whose
 * sleep the CQ's transport covers (cq_sleep_begin) arms the CQ for what
 * other threads complete, and disarms it once awake, so that what it
 * completes itself signals no one (core/evd/wait.c).
 */
void core_cq_arm(struct openrdma_cq *cq, int solicited_only);
void core_cq_disarm(struct openrdma_cq *cq);

/*
 * Argument checks.  A failing argument is logged at debug level with the
 * function and the argument's name, then reported as a negative code.
 */
#define core_arg_err(fn, arg, fmt, ...) \
	openrdma_dbg("core", fn ": arg " arg ": " fmt, ##__VA_ARGS__)

int core_check_log(const void *handle, enum openrdma_obj_type type,
		   const char *fn, const char *arg);

/* Inline, so that the post and poll paths pay one compare. */
static inline int core_check(const void *handle, enum openrdma_obj_type type,
			     const char *fn, const char *arg)
{
	int ret = core_obj_check(handle, type);

	if (__builtin_expect(ret != 0, 0))
		return core_check_log(handle, type, fn, arg);
	return 0;
}

int core_port_check(const struct openrdma_device_attr *attr,
		    unsigned int port_num, const char *fn);
int core_sockaddr_check(const struct sockaddr *sa, const char *fn,
			const char *arg);
/*
 * The access a front end registers its consumer's region with (inline:
 * the DAT provider is a library of its own).  Windows may be bound to any
 * region of a device that has them; remote atomic access grants nothing
 * on a device without atomics, which never executes one (and siw refuses
 * to register memory for them).
 */
static inline int core_mr_access_fit(const struct openrdma_device_attr *dev,
				     int access)
{
	if (dev->atomic_cap == OPENRDMA_ATOMIC_NONE)
		access &= ~OPENRDMA_ACCESS_REMOTE_ATOMIC;
	if (dev->device_cap_flags &
	    (OPENRDMA_DEVICE_MW_TYPE1 | OPENRDMA_DEVICE_MW_TYPE2))
		access |= OPENRDMA_ACCESS_MW_BIND;
	return access;
}

/* A UD QP in INIT needs no peer: RTR, then RTS (inline, as above). */
static inline int core_qp_ud_ready(struct openrdma_qp *qp)
{
	struct openrdma_qp_attr attr = { .qp_state = OPENRDMA_QPS_RTR };
	int ret;

	ret = openrdma_qp_modify(qp, &attr, OPENRDMA_QP_STATE);
	if (ret)
		return ret;
	attr.qp_state = OPENRDMA_QPS_RTS;
	attr.sq_psn = 0;
	return openrdma_qp_modify(qp, &attr,
				  OPENRDMA_QP_STATE | OPENRDMA_QP_SQ_PSN);
}

/* Both objects belong to the same context. */
int core_same_ctx(const struct openrdma_obj *a, const struct openrdma_obj *b,
		  const char *fn, const char *arg);

#endif /* CORE_CORE_H */
