/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Object headers: initialization, retirement, handle checks and, in debug
 * builds, the table of live handles.
 */
#include <stdlib.h>

#include "core/core.h"
#include "core/obj.h"

#ifdef OPENRDMA_DEBUG
#include <pthread.h>

/*
 * Every live handle, keyed by address, so that a destroyed object is
 * rejected without reading its (freed) memory.  The mutex is a leaf: no
 * other lock is taken under it.
 */
struct live_handle {
	const struct openrdma_obj *obj;
	UT_hash_handle hh;
};

static struct live_handle *live_handles;
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;

int core_handle_add(const struct openrdma_obj *obj)
{
	struct live_handle *h;

	h = calloc(1, sizeof(*h));
	if (!h)
		return -OPENRDMA_ENOMEM;
	h->obj = obj;
	pthread_mutex_lock(&live_lock);
	HASH_ADD_PTR(live_handles, obj, h);
	pthread_mutex_unlock(&live_lock);
	return 0;
}

void core_handle_del(const struct openrdma_obj *obj)
{
	struct live_handle *h;

	pthread_mutex_lock(&live_lock);
	HASH_FIND_PTR(live_handles, &obj, h);
	if (h)
		HASH_DEL(live_handles, h);
	pthread_mutex_unlock(&live_lock);
	free(h);
}

bool core_handle_live(const struct openrdma_obj *obj)
{
	struct live_handle *h;

	pthread_mutex_lock(&live_lock);
	HASH_FIND_PTR(live_handles, &obj, h);
	pthread_mutex_unlock(&live_lock);
	return h != NULL;
}
#endif /* OPENRDMA_DEBUG */

int core_obj_init(struct openrdma_obj *obj, enum openrdma_obj_type type,
		  struct openrdma_context *ctx, struct openrdma_obj *parent)
{
	int ret;

	obj->ctx = ctx;
	obj->parent = parent;
	obj->user_context = NULL;
	atomic_init(&obj->ref, 1);
	ret = core_handle_add(obj);
	if (ret)
		return ret;
	if (parent)
		core_obj_get(parent);
	obj->type = type;
	return 0;
}

void core_obj_invalidate(struct openrdma_obj *obj)
{
	obj->type = OPENRDMA_OBJ_FREED;
	core_handle_del(obj);
}

void core_obj_revive(struct openrdma_obj *obj, enum openrdma_obj_type type)
{
	/* The handle was in the table a moment ago; if it cannot go back,
	 * debug builds reject it rather than crash on it. */
	if (core_handle_add(obj))
		openrdma_err("core", "%s %p: lost from the handle table",
			     core_obj_type_name(type), (void *)obj);
	obj->type = type;
}

int core_obj_retire_locked(struct core_ctx *cc, struct openrdma_obj *obj,
			   unsigned int unread)
{
	unsigned int held = core_async_held(cc, obj) + unread;
	unsigned int refs = core_obj_refs(obj);

	if (refs - held > 1) {
		openrdma_dbg("core", "%s %p: busy, %u other references",
			     core_obj_type_name(obj->type), (void *)obj,
			     refs - held - 1);
		return -OPENRDMA_EBUSY;
	}
	core_async_discard(cc, obj);
	core_obj_invalidate(obj);
	return 0;
}

int core_obj_retire(struct openrdma_obj *obj)
{
	struct core_ctx *cc = core_ctx_get(obj->ctx);
	int ret;

	core_lock_acquire(&cc->lock);
	ret = core_obj_retire_locked(cc, obj, 0);
	core_lock_release(&cc->lock);
	return ret;
}

int core_check_log(const void *handle, enum openrdma_obj_type type,
		   const char *fn, const char *arg)
{
	int ret = core_obj_check(handle, type);

	if (ret)
		openrdma_dbg("core", "%s: arg %s: %s%s", fn, arg,
			     handle ? "not a live handle of type " : "NULL",
			     handle ? core_obj_type_name(type) : "");
	return ret;
}

int core_same_ctx(const struct openrdma_obj *a, const struct openrdma_obj *b,
		  const char *fn, const char *arg)
{
	if (a->ctx == b->ctx)
		return 0;
	openrdma_dbg("core", "%s: arg %s: belongs to another context", fn, arg);
	return -OPENRDMA_EINVAL;
}

const char *core_obj_type_name(uint32_t type)
{
	static const char *const names[] = {
		[OPENRDMA_OBJ_CONTEXT - OPENRDMA_OBJ_CONTEXT] = "context",
		[OPENRDMA_OBJ_PD - OPENRDMA_OBJ_CONTEXT] = "pd",
		[OPENRDMA_OBJ_MR - OPENRDMA_OBJ_CONTEXT] = "mr",
		[OPENRDMA_OBJ_MW - OPENRDMA_OBJ_CONTEXT] = "mw",
		[OPENRDMA_OBJ_CQ - OPENRDMA_OBJ_CONTEXT] = "cq",
		[OPENRDMA_OBJ_COMP_CHANNEL - OPENRDMA_OBJ_CONTEXT] =
			"comp_channel",
		[OPENRDMA_OBJ_QP - OPENRDMA_OBJ_CONTEXT] = "qp",
		[OPENRDMA_OBJ_SRQ - OPENRDMA_OBJ_CONTEXT] = "srq",
		[OPENRDMA_OBJ_AH - OPENRDMA_OBJ_CONTEXT] = "ah",
		[OPENRDMA_OBJ_CM_CHANNEL - OPENRDMA_OBJ_CONTEXT] = "cm_channel",
		[OPENRDMA_OBJ_CM_ID - OPENRDMA_OBJ_CONTEXT] = "cm_id",
	};

	if (type == OPENRDMA_OBJ_FREED)
		return "freed object";
	if (type < OPENRDMA_OBJ_CONTEXT || type >= OPENRDMA_OBJ_TYPE_MAX)
		return "object";
	return names[type - OPENRDMA_OBJ_CONTEXT];
}
