/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The consumer calls of the IA, of any handle, and the extension
 * gateway.  dat_ia_openv() finds and loads the provider, opens the IA and
 * hands out an index; dat_ia_close() closes it and lets the provider go
 * when its last IA is closed.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <dat2/dat_redirection.h>

#include "core/export.h"
#include "registry/dat/datreg.h"

static DAT_RETURN key_of(const char *name, DAT_UINT32 major, DAT_UINT32 minor,
			 DAT_BOOLEAN thread_safety, DAT_PROVIDER_INFO *key)
{
	size_t len;

	if (!name)
		return DATREG_ERR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG1);
	len = strlen(name);
	if (len >= DAT_NAME_MAX_LENGTH)
		return DATREG_ERR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG1);
	memset(key, 0, sizeof(*key));
	memcpy(key->ia_name, name, len + 1);
	key->dapl_version_major = major;
	key->dapl_version_minor = minor;
	key->is_thread_safe = thread_safety ? DAT_TRUE : DAT_FALSE;
	return DAT_SUCCESS;
}

OPENRDMA_EXPORT DAT_RETURN dat_ia_openv(
	const DAT_NAME_PTR name, DAT_COUNT async_evd_min_qlen,
	DAT_EVD_HANDLE *async_evd_handle, DAT_IA_HANDLE *ia_handle,
	DAT_UINT32 dat_major, DAT_UINT32 dat_minor, DAT_BOOLEAN thread_safety)
{
	DAT_PROVIDER_INFO key;
	struct datreg_open o;
	DAT_IA_HANDLE pia, h;
	DAT_RETURN ret;

	ret = key_of(name, dat_major, dat_minor, thread_safety, &key);
	if (ret != DAT_SUCCESS)
		return ret;
	if (!ia_handle)
		return DATREG_ERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	datreg_log(DATREG_DBG_CONSUMER_API, "dat_ia_openv (%s,%u:%u,%d)\n",
		   name, dat_major, dat_minor, thread_safety);
	ret = datreg_provider_open(&key, &o);
	if (ret != DAT_SUCCESS)
		return ret;
	ret = o.dr->provider->ia_open_func(name, async_evd_min_qlen,
					   async_evd_handle, &pia);
	if (ret != DAT_SUCCESS) {
		datreg_log(DATREG_DBG_ERROR,
			   "IA %s: the provider's open failed: 0x%08x\n", name,
			   ret);
		datreg_provider_close(&o);
		return ret;
	}
	h = datreg_ia_handle_add(pia, &o);
	if (!h) {
		DAT_HANDLE_TO_PROVIDER(pia)->ia_close_func(
			pia, DAT_CLOSE_ABRUPT_FLAG);
		datreg_provider_close(&o);
		return DATREG_ERR(DAT_INSUFFICIENT_RESOURCES,
				  DAT_RESOURCE_MEMORY);
	}
	*ia_handle = h;
	return DAT_SUCCESS;
}

OPENRDMA_EXPORT DAT_RETURN dat_ia_close(DAT_IA_HANDLE ia_handle,
					DAT_CLOSE_FLAGS close_flags)
{
	struct datreg_open o;
	DAT_IA_HANDLE pia;
	DAT_RETURN ret;

	ret = datreg_ia_handle_get(ia_handle, &pia);
	if (ret != DAT_SUCCESS)
		return ret;
	ret = DAT_HANDLE_TO_PROVIDER(pia)->ia_close_func(pia, close_flags);
	if (ret != DAT_SUCCESS)
		return ret;
	if (datreg_ia_handle_del(ia_handle, &o) == DAT_SUCCESS)
		datreg_provider_close(&o);
	return DAT_SUCCESS;
}

OPENRDMA_EXPORT DAT_RETURN
dat_ia_query(DAT_IA_HANDLE ia_handle, DAT_EVD_HANDLE *async_evd_handle,
	     DAT_IA_ATTR_MASK ia_attr_mask, DAT_IA_ATTR *ia_attr,
	     DAT_PROVIDER_ATTR_MASK provider_attr_mask,
	     DAT_PROVIDER_ATTR *provider_attr)
{
	DAT_IA_HANDLE pia;
	DAT_RETURN ret;

	ret = datreg_ia_handle_get(ia_handle, &pia);
	if (ret != DAT_SUCCESS)
		return ret;
	return DAT_IA_QUERY(pia, async_evd_handle, ia_attr_mask, ia_attr,
			    provider_attr_mask, provider_attr);
}

OPENRDMA_EXPORT DAT_RETURN dat_set_consumer_context(DAT_HANDLE dat_handle,
						    DAT_CONTEXT context)
{
	return DATREG_ANY_CALL(dat_handle, set_consumer_context_func, context);
}

OPENRDMA_EXPORT DAT_RETURN dat_get_consumer_context(DAT_HANDLE dat_handle,
						    DAT_CONTEXT *context)
{
	return DATREG_ANY_CALL(dat_handle, get_consumer_context_func, context);
}

OPENRDMA_EXPORT DAT_RETURN dat_get_handle_type(DAT_HANDLE dat_handle,
					       DAT_HANDLE_TYPE *handle_type)
{
	return DATREG_ANY_CALL(dat_handle, get_handle_type_func, handle_type);
}

/* ------------------------------------------------------------ extensions */

/* An IA opened by an open-type extension, with the references it holds. */
struct ext_ia {
	DAT_HANDLE ia;
	struct datreg_open open;
	struct ext_ia *next;
};

static struct ext_ia *ext_ias;
static pthread_mutex_t ext_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * An open-type extension names an IA instead of passing a handle: the
 * registry opens the provider for it and hands the name to the
 * provider's extension entry point, whose first output is the IA.  The
 * provider stays loaded until the matching close-type call.
 */
static DAT_RETURN ext_open(DAT_EXTENDED_OP op, va_list args)
{
	const char *name = va_arg(args, const char *);
	DAT_PROVIDER_INFO key;
	struct ext_ia *rec;
	DAT_HANDLE *ia_out;
	DAT_RETURN ret;
	va_list peek;

	ret = key_of(name, DAT_VERSION_MAJOR, DAT_VERSION_MINOR, DAT_THREADSAFE,
		     &key);
	if (ret != DAT_SUCCESS)
		return ret;
	va_copy(peek, args);
	ia_out = va_arg(peek, DAT_HANDLE *);
	va_end(peek);
	if (!ia_out)
		return DATREG_ERR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	rec = calloc(1, sizeof(*rec));
	if (!rec)
		return DATREG_ERR(DAT_INSUFFICIENT_RESOURCES,
				  DAT_RESOURCE_MEMORY);
	ret = datreg_provider_open(&key, &rec->open);
	if (ret != DAT_SUCCESS)
		goto err_free;
	if (!rec->open.dr->provider->handle_extendedop_func) {
		ret = DAT_NOT_IMPLEMENTED;
		goto err_close;
	}
	ret = rec->open.dr->provider->handle_extendedop_func((DAT_HANDLE)name,
							     op, args);
	if (ret != DAT_SUCCESS)
		goto err_close;
	rec->ia = *ia_out;
	pthread_mutex_lock(&ext_lock);
	rec->next = ext_ias;
	ext_ias = rec;
	pthread_mutex_unlock(&ext_lock);
	return DAT_SUCCESS;

err_close:
	datreg_provider_close(&rec->open);
err_free:
	free(rec);
	return ret;
}

static DAT_RETURN ext_close(DAT_HANDLE handle, DAT_EXTENDED_OP op, va_list args)
{
	struct ext_ia **pp, *rec = NULL;
	const DAT_PROVIDER *provider;
	DAT_RETURN ret;

	pthread_mutex_lock(&ext_lock);
	for (pp = &ext_ias; *pp; pp = &(*pp)->next) {
		if ((*pp)->ia == handle) {
			rec = *pp;
			break;
		}
	}
	pthread_mutex_unlock(&ext_lock);
	if (!handle || !rec)
		return DATREG_ERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	provider = DAT_HANDLE_TO_PROVIDER(handle);
	ret = provider->handle_extendedop_func(handle, op, args);
	if (ret != DAT_SUCCESS)
		return ret;
	pthread_mutex_lock(&ext_lock);
	for (pp = &ext_ias; *pp; pp = &(*pp)->next) {
		if (*pp == rec) {
			*pp = rec->next;
			break;
		}
	}
	pthread_mutex_unlock(&ext_lock);
	datreg_provider_close(&rec->open);
	free(rec);
	return DAT_SUCCESS;
}

OPENRDMA_EXPORT DAT_RETURN dat_extension_op(DAT_HANDLE handle,
					    DAT_EXTENDED_OP op, ...)
{
	DAT_RETURN ret;
	va_list args;

	va_start(args, op);
	if (op & DAT_OPEN_EXTENSION_BASE) {
		ret = ext_open(op, args);
	} else if (op & DAT_CLOSE_EXTENSION_BASE) {
		ret = ext_close(handle, op, args);
	} else if (!handle) {
		ret = DATREG_ERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE1);
	} else {
		handle = datreg_any_handle(handle);
		ret = DAT_HANDLE_TO_PROVIDER(handle)->handle_extendedop_func ?
			      DAT_HANDLE_EXTENDEDOP(handle, op, args) :
			      DAT_NOT_IMPLEMENTED;
	}
	va_end(args);
	return ret;
}
