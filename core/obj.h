/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The common object header: type tags, references and, in debug builds
 * (--enable-debug), the live-handle table.
 *
 * 'ref' is 1 for the object itself; every child, queued event and in-flight
 * user adds one.  References never free an object: its destroy call does,
 * and refuses with -OPENRDMA_EBUSY while ref > 1.
 */
#ifndef CORE_OBJ_H
#define CORE_OBJ_H

#include "config.h"

#include <stdbool.h>
#include <openrdma/verbs.h>

/*
 * Fills the header of an object a transport has just created and takes a
 * reference on its parent.  Fails only in debug builds, when the handle
 * cannot be added to the live table (-OPENRDMA_ENOMEM).
 */
int core_obj_init(struct openrdma_obj *obj, enum openrdma_obj_type type,
		  struct openrdma_context *ctx, struct openrdma_obj *parent);
/*
 * Turns a handle dead (type OPENRDMA_OBJ_FREED) before its memory is handed
 * back to the transport, and live again if the transport's destroy fails.
 */
void core_obj_invalidate(struct openrdma_obj *obj);
void core_obj_revive(struct openrdma_obj *obj, enum openrdma_obj_type type);
/*
 * Invalidates obj unless something other than unread async events holds
 * it (-OPENRDMA_EBUSY); those events are discarded.  See core_ctx_retire()
 * in core/core.h for objects that have more kinds of unread events.
 */
int core_obj_retire(struct openrdma_obj *obj);

const char *core_obj_type_name(uint32_t type);

static inline void core_obj_get(struct openrdma_obj *obj)
{
	atomic_fetch_add_explicit(&obj->ref, 1, memory_order_relaxed);
}

static inline void core_obj_put(struct openrdma_obj *obj)
{
	atomic_fetch_sub_explicit(&obj->ref, 1, memory_order_release);
}

static inline void core_obj_put_n(struct openrdma_obj *obj, unsigned int n)
{
	atomic_fetch_sub_explicit(&obj->ref, n, memory_order_release);
}

static inline unsigned int core_obj_refs(const struct openrdma_obj *obj)
{
	return atomic_load_explicit(&obj->ref, memory_order_acquire);
}

#ifdef OPENRDMA_DEBUG
int core_handle_add(const struct openrdma_obj *obj);
void core_handle_del(const struct openrdma_obj *obj);
bool core_handle_live(const struct openrdma_obj *obj);
#else
static inline int core_handle_add(const struct openrdma_obj *obj)
{
	return 0;
}

static inline void core_handle_del(const struct openrdma_obj *obj)
{
}

static inline bool core_handle_live(const struct openrdma_obj *obj)
{
	return true;
}
#endif

/*
 * Validates a handle: -OPENRDMA_EINVAL for NULL, -OPENRDMA_EBADHANDLE for
 * another type or a destroyed object.  One compare in release builds; debug
 * builds consult the live table first so that a freed object is never read.
 */
static inline int core_obj_check(const void *handle,
				 enum openrdma_obj_type type)
{
	const struct openrdma_obj *obj = handle;

	if (!obj)
		return -OPENRDMA_EINVAL;
	if (!core_handle_live(obj))
		return -OPENRDMA_EBADHANDLE;
	if (obj->type != (uint32_t)type)
		return -OPENRDMA_EBADHANDLE;
	return 0;
}

#endif /* CORE_OBJ_H */
