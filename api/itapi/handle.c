/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * What every handle shares: registration and retirement, the calls that
 * take any handle (type, consumer context), and the translation of
 * OpenRDMA codes into IT-API statuses.
 */
#include "config.h"

#include <utlist.h>

#include "api/itapi/itapi.h"
#include "core/export.h"

int itapi_obj_init(struct itapi_obj *obj, it_handle_type_enum_t type,
		   struct itapi_ia *ia)
{
	int ret;

	obj->type = type;
	/* constructors that need the IA earlier set it themselves, and the
	 * engine's threads may read it already (the async converter) */
	if (obj->ia != ia)
		obj->ia = ia;
	atomic_init(&obj->users, 0);
	obj->has_context = false;
	obj->context.ptr = NULL;
	ret = core_handle_add((const struct openrdma_obj *)obj);
	if (ret)
		return ret;
	if (type != IT_HANDLE_TYPE_IA) {
		pthread_mutex_lock(&ia->lock);
		DL_APPEND(ia->objs, obj);
		pthread_mutex_unlock(&ia->lock);
	}
	obj->magic = ITAPI_MAGIC(type);
	return 0;
}

void itapi_obj_fini(struct itapi_obj *obj)
{
	struct itapi_ia *ia = obj->ia;

	obj->magic = 0;
	core_handle_del((const struct openrdma_obj *)obj);
	if (obj->type != IT_HANDLE_TYPE_IA) {
		pthread_mutex_lock(&ia->lock);
		DL_DELETE(ia->objs, obj);
		pthread_mutex_unlock(&ia->lock);
	}
}

it_status_t itapi_status(int err, it_status_t einval)
{
	switch (err) {
	case 0:
		return IT_SUCCESS;
	case -OPENRDMA_EINVAL:
	case -OPENRDMA_ESTATE:
	case -OPENRDMA_EBADHANDLE:
		return einval;
	case -OPENRDMA_ENOMEM:
	case -OPENRDMA_ENOBUFS:
	case -OPENRDMA_ENOSPC:
	case -OPENRDMA_EBUSY:
	case -OPENRDMA_EAGAIN:
		return IT_ERR_RESOURCES;
	case -OPENRDMA_EOPNOTSUPP:
	case -OPENRDMA_ENOSYS:
		return IT_ERR_OP_NOT_SUPPORTED;
	case -OPENRDMA_EADDRINUSE:
		return IT_ERR_CONN_QUAL_BUSY;
	case -OPENRDMA_EADDRNOTAVAIL:
	case -OPENRDMA_ENETDOWN:
	case -OPENRDMA_ENETUNREACH:
	case -OPENRDMA_EHOSTUNREACH:
		return IT_ERR_INVALID_NETADDR;
	case -OPENRDMA_ETIMEDOUT:
		return IT_ERR_TIMEOUT_EXPIRED;
	case -OPENRDMA_EINTR:
		return IT_ERR_INTERRUPT;
	case -OPENRDMA_EOVERFLOW:
		return IT_ERR_EVD_QUEUE_FULL;
	case -OPENRDMA_EFATAL:
	case -OPENRDMA_EIO:
	case -OPENRDMA_ENODEV:
		return IT_ERR_IA_CATASTROPHE;
	case -OPENRDMA_EPERM:
	case -OPENRDMA_EACCES:
		return IT_ERR_NO_PERMISSION;
	case -OPENRDMA_EFAULT:
		return IT_ERR_FAULT;
	case -OPENRDMA_EMSGSIZE:
		return IT_ERR_INVALID_LENGTH;
	case -OPENRDMA_ERANGE:
		return IT_ERR_RANGE;
	case -OPENRDMA_EISCONN:
	case -OPENRDMA_ENOTCONN:
	case -OPENRDMA_EALREADY:
	case -OPENRDMA_EINPROGRESS:
		return IT_ERR_INVALID_EP_STATE;
	default:
		/* the connection or the operation went away underneath */
		openrdma_dbg(ITAPI_LOG, "unexpected %s",
			     openrdma_strerror(err));
		return IT_ERR_ABORT;
	}
}

/* Any live handle: the tag has the IT prefix and a known type. */
static bool handle_any(const void *h)
{
	const struct itapi_obj *obj = h;

	return obj && itapi_obj_live(obj) &&
	       (obj->magic & 0xffff0000u) == ITAPI_MAGIC(0) &&
	       obj->magic <= ITAPI_MAGIC(IT_HANDLE_TYPE_SRQ);
}

OPENRDMA_EXPORT it_status_t it_get_handle_type(it_handle_t handle,
					       it_handle_type_enum_t *type_out)
{
	const struct itapi_obj *obj = handle;

	if (!handle_any(obj)) {
		itapi_arg_err("it_get_handle_type", "handle", "not live");
		return IT_ERR_INVALID_HANDLE;
	}
	if (!type_out) {
		itapi_arg_err("it_get_handle_type", "type_of_handle", "NULL");
		return IT_ERR_FAULT;
	}
	*type_out = obj->type;
	return IT_SUCCESS;
}

OPENRDMA_EXPORT it_status_t it_set_consumer_context(it_handle_t handle,
						    it_context_t context)
{
	struct itapi_obj *obj = handle;

	if (!handle_any(obj)) {
		itapi_arg_err("it_set_consumer_context", "handle", "not live");
		return IT_ERR_INVALID_HANDLE;
	}
	obj->context = context;
	obj->has_context = true;
	return IT_SUCCESS;
}

OPENRDMA_EXPORT it_status_t it_get_consumer_context(it_handle_t handle,
						    it_context_t *context)
{
	const struct itapi_obj *obj = handle;

	if (!handle_any(obj)) {
		itapi_arg_err("it_get_consumer_context", "handle", "not live");
		return IT_ERR_INVALID_HANDLE;
	}
	if (!context) {
		itapi_arg_err("it_get_consumer_context", "context", "NULL");
		return IT_ERR_FAULT;
	}
	if (!obj->has_context)
		return IT_ERR_NO_CONTEXT;
	*context = obj->context;
	return IT_SUCCESS;
}
