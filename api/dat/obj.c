/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The object header: handle checks, the IA's lists of its objects, and
 * the calls that take any handle (consumer context, handle type).
 *
 * A handle check is one compare of the tag.  Builds configured with
 * --enable-debug also keep every live object in a table, so that a
 * freed handle is refused without its memory being read.
 */
#include "config.h"

#include <stdlib.h>
#include <utlist.h>

#include <openrdma/errno.h>

#include "api/dat/provider.h"
#include "api/dat/slots.h"

#ifdef OPENRDMA_DEBUG
struct live {
	const void *obj;
	UT_hash_handle hh;
};

static struct live *live_table;
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;

static int live_add(const void *obj)
{
	struct live *l = malloc(sizeof(*l));

	if (!l)
		return -OPENRDMA_ENOMEM;
	l->obj = obj;
	pthread_mutex_lock(&live_lock);
	HASH_ADD_PTR(live_table, obj, l);
	pthread_mutex_unlock(&live_lock);
	return 0;
}

static void live_del(const void *obj)
{
	struct live *l;

	pthread_mutex_lock(&live_lock);
	HASH_FIND_PTR(live_table, &obj, l);
	if (l)
		HASH_DEL(live_table, l);
	pthread_mutex_unlock(&live_lock);
	free(l);
}

static bool live_has(const void *obj)
{
	struct live *l;

	pthread_mutex_lock(&live_lock);
	HASH_FIND_PTR(live_table, &obj, l);
	pthread_mutex_unlock(&live_lock);
	return l != NULL;
}
#else
static int live_add(const void *obj)
{
	return 0;
}

static void live_del(const void *obj)
{
}

static bool live_has(const void *obj)
{
	return true;
}
#endif

struct datp_obj *datp_obj_get(DAT_HANDLE handle, enum datp_kind kind)
{
	struct datp_obj *obj = handle;

	if (!obj || !live_has(obj) || obj->tag != DATP_TAG(kind))
		return NULL;
	return obj;
}

struct datp_obj *datp_obj_any(DAT_HANDLE handle, enum datp_kind *kind_out)
{
	struct datp_obj *obj = handle;
	uint32_t kind;

	if (!obj || !live_has(obj))
		return NULL;
	kind = obj->tag - DATP_TAG_BASE;
	if (obj->tag < DATP_TAG_BASE || kind >= DATP_KIND_MAX)
		return NULL;
	*kind_out = (enum datp_kind)kind;
	return obj;
}

int datp_obj_init(struct datp_obj *obj, struct datp_ia *ia, enum datp_kind kind)
{
	int ret;

	ret = live_add(obj);
	if (ret)
		return ret;
	obj->provider = &ia->entry->provider;
	obj->ia = ia;
	atomic_init(&obj->ref, 1);
	atomic_init(&obj->users, 0);
	obj->context.as_64 = 0;
	if (kind != DATP_IA) {
		pthread_mutex_lock(&ia->lock);
		DL_APPEND(ia->objs[kind], obj);
		pthread_mutex_unlock(&ia->lock);
	}
	/* last: the handle is valid from here */
	atomic_thread_fence(memory_order_release);
	obj->tag = DATP_TAG(kind);
	return 0;
}

void datp_obj_fini(struct datp_obj *obj, enum datp_kind kind)
{
	struct datp_ia *ia = obj->ia;

	obj->tag = DATP_TAG_FREED;
	if (kind != DATP_IA) {
		pthread_mutex_lock(&ia->lock);
		DL_DELETE(ia->objs[kind], obj);
		pthread_mutex_unlock(&ia->lock);
	}
	live_del(obj);
	datp_obj_release(obj);
}

void datp_obj_hold(struct datp_obj *obj)
{
	atomic_fetch_add(&obj->ref, 1);
}

void datp_obj_release(struct datp_obj *obj)
{
	if (atomic_fetch_sub(&obj->ref, 1) == 1)
		free(obj);
}

/* ------------------------------------------------------------ any handle */

static const DAT_HANDLE_TYPE handle_types[DATP_KIND_MAX] = {
	[DATP_IA] = DAT_HANDLE_TYPE_IA,	  [DATP_PZ] = DAT_HANDLE_TYPE_PZ,
	[DATP_LMR] = DAT_HANDLE_TYPE_LMR, [DATP_RMR] = DAT_HANDLE_TYPE_RMR,
	[DATP_EVD] = DAT_HANDLE_TYPE_EVD, [DATP_CNO] = DAT_HANDLE_TYPE_CNO,
	[DATP_EP] = DAT_HANDLE_TYPE_EP,	  [DATP_SRQ] = DAT_HANDLE_TYPE_SRQ,
	[DATP_PSP] = DAT_HANDLE_TYPE_PSP, [DATP_RSP] = DAT_HANDLE_TYPE_RSP,
	[DATP_CSP] = DAT_HANDLE_TYPE_CSP, [DATP_CR] = DAT_HANDLE_TYPE_CR,
};

DAT_RETURN datp_set_consumer_context(DAT_HANDLE handle, DAT_CONTEXT context)
{
	enum datp_kind kind;
	struct datp_obj *obj = datp_obj_any(handle, &kind);

	if (!obj)
		return DATP_HANDLE(DAT_INVALID_HANDLE1, "handle %p", handle);
	obj->context = context;
	return DAT_SUCCESS;
}

DAT_RETURN datp_get_consumer_context(DAT_HANDLE handle, DAT_CONTEXT *context)
{
	enum datp_kind kind;
	struct datp_obj *obj = datp_obj_any(handle, &kind);

	if (!obj)
		return DATP_HANDLE(DAT_INVALID_HANDLE1, "handle %p", handle);
	if (!context)
		return DATP_ARG(DAT_INVALID_ARG2, "context: NULL");
	*context = obj->context;
	return DAT_SUCCESS;
}

DAT_RETURN datp_get_handle_type(DAT_HANDLE handle, DAT_HANDLE_TYPE *type)
{
	enum datp_kind kind;
	struct datp_obj *obj = datp_obj_any(handle, &kind);

	if (!obj)
		return DATP_HANDLE(DAT_INVALID_HANDLE1, "handle %p", handle);
	if (!type)
		return DATP_ARG(DAT_INVALID_ARG2, "handle_type: NULL");
	*type = handle_types[kind];
	return DAT_SUCCESS;
}
