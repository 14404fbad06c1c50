/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * A DAT provider library built against OpenRDMA's DAT headers, for
 * interop.c: the system's libdat2 loads it through a dat.conf entry, and
 * every call the program makes reaches it through libdat2's dispatch.
 * Each function checks that the arguments arrived as the program passed
 * them and answers DAT_INVALID_PARAMETER with the argument number if not,
 * so the program sees any disagreement on layout or calling convention.
 */
#include <stdarg.h>
#include <string.h>

#include <dat2/udat.h>
#include <dat2/dat_registry.h>
#include <dat2/dat_ib_extensions.h>

#include "interop.h"

struct object {
	DAT_PROVIDER *provider; /* first word: libdat2 dispatches on it */
	DAT_HANDLE_TYPE type;
	DAT_CONTEXT context;
};

static DAT_PROVIDER provider;
static struct object ia = { &provider, DAT_HANDLE_TYPE_IA, { NULL } };
static struct object evd = { &provider, DAT_HANDLE_TYPE_EVD, { NULL } };
static struct object pz = { &provider, DAT_HANDLE_TYPE_PZ, { NULL } };
static struct object ep = { &provider, DAT_HANDLE_TYPE_EP, { NULL } };
static char ia_params_seen[64];

#define BAD_ARG(n) \
	(DAT_CLASS_ERROR | DAT_INVALID_PARAMETER | DAT_INVALID_ARG##n)

static DAT_RETURN ia_open(const DAT_NAME_PTR name, DAT_COUNT qlen,
			  DAT_EVD_HANDLE *async_evd, DAT_IA_HANDLE *ia_handle)
{
	if (strcmp(name, INTEROP_IA_NAME) != 0)
		return BAD_ARG(1);
	if (qlen != INTEROP_QLEN)
		return BAD_ARG(2);
	if (*async_evd == DAT_HANDLE_NULL)
		*async_evd = &evd;
	*ia_handle = &ia;
	return DAT_SUCCESS;
}

static DAT_RETURN ia_close(DAT_IA_HANDLE ia_handle, DAT_CLOSE_FLAGS flags)
{
	return ia_handle == &ia ? DAT_SUCCESS : BAD_ARG(1);
}

static DAT_RETURN ia_query(DAT_IA_HANDLE ia_handle, DAT_EVD_HANDLE *async_evd,
			   DAT_IA_ATTR_MASK ia_mask, DAT_IA_ATTR *ia_attr,
			   DAT_PROVIDER_ATTR_MASK pr_mask,
			   DAT_PROVIDER_ATTR *pr_attr)
{
	if (ia_handle != &ia)
		return BAD_ARG(1);
	if (async_evd != NULL)
		*async_evd = &evd;
	if (ia_attr != NULL) {
		memset(ia_attr, 0, sizeof(*ia_attr));
		strcpy(ia_attr->adapter_name, INTEROP_ADAPTER);
		strncpy(ia_attr->vendor_name, ia_params_seen,
			sizeof(ia_attr->vendor_name) - 1);
		ia_attr->max_eps = INTEROP_MAX_EPS;
		ia_attr->max_message_size = INTEROP_MAX_MSG;
		ia_attr->extension_supported = DAT_EXTENSION_IB;
		ia_attr->extension_version = DAT_IB_EXTENSION_VERSION;
	}
	if (pr_attr != NULL && pr_mask != DAT_PROVIDER_FIELD_NONE) {
		/* the matrix is const: only a byte copy may fill it */
		memset(pr_attr, 0, sizeof(*pr_attr));
		strcpy(pr_attr->provider_name, INTEROP_PROVIDER);
		/* libdat2's dat_ia_close() finds our registry entry by these */
		pr_attr->dapl_version_major = DAT_VERSION_MAJOR;
		pr_attr->dapl_version_minor = DAT_VERSION_MINOR;
		pr_attr->is_thread_safe = DAT_FALSE;
		pr_attr->max_private_data_size = INTEROP_MAX_PDATA;
		pr_attr->ha_loadbalancing = DAT_HA_LB_INTRACOMM;
	}
	return DAT_SUCCESS;
}

static DAT_RETURN get_handle_type(DAT_HANDLE handle, DAT_HANDLE_TYPE *type)
{
	*type = ((struct object *)handle)->type;
	return DAT_SUCCESS;
}

static DAT_RETURN set_context(DAT_HANDLE handle, DAT_CONTEXT context)
{
	((struct object *)handle)->context = context;
	return DAT_SUCCESS;
}

static DAT_RETURN get_context(DAT_HANDLE handle, DAT_CONTEXT *context)
{
	*context = ((struct object *)handle)->context;
	return DAT_SUCCESS;
}

static DAT_RETURN pz_create(DAT_IA_HANDLE ia_handle, DAT_PZ_HANDLE *pz_handle)
{
	/* libdat2 must have turned its IA index back into our pointer */
	if (ia_handle != &ia)
		return BAD_ARG(1);
	*pz_handle = &pz;
	return DAT_SUCCESS;
}

static DAT_RETURN pz_free(DAT_PZ_HANDLE pz_handle)
{
	return pz_handle == &pz ? DAT_SUCCESS : BAD_ARG(1);
}

static DAT_RETURN ep_create(DAT_IA_HANDLE ia_handle, DAT_PZ_HANDLE pz_handle,
			    DAT_EVD_HANDLE recv_evd, DAT_EVD_HANDLE req_evd,
			    DAT_EVD_HANDLE conn_evd, const DAT_EP_ATTR *attr,
			    DAT_EP_HANDLE *ep_handle)
{
	if (ia_handle != &ia)
		return BAD_ARG(1);
	if (pz_handle != &pz)
		return BAD_ARG(2);
	if (recv_evd != &evd || req_evd != &evd || conn_evd != &evd)
		return BAD_ARG(3);
	if (attr == NULL || attr->max_recv_dtos != INTEROP_RECV_DTOS ||
	    attr->max_rdma_write_iov != INTEROP_WRITE_IOV ||
	    attr->ep_provider_specific_count != 0)
		return BAD_ARG(6);
	*ep_handle = &ep;
	return DAT_SUCCESS;
}

static DAT_RETURN ep_free(DAT_EP_HANDLE ep_handle)
{
	return ep_handle == &ep ? DAT_SUCCESS : BAD_ARG(1);
}

static DAT_RETURN ep_post_send(DAT_EP_HANDLE ep_handle, DAT_COUNT n,
			       DAT_LMR_TRIPLET *iov, DAT_DTO_COOKIE cookie,
			       DAT_COMPLETION_FLAGS flags)
{
	if (ep_handle != &ep)
		return BAD_ARG(1);
	if (n != 2)
		return BAD_ARG(2);
	if (iov[1].virtual_address != INTEROP_VADDR ||
	    iov[1].segment_length != INTEROP_LEN ||
	    iov[1].lmr_context != INTEROP_LKEY)
		return BAD_ARG(3);
	if (cookie.as_64 != INTEROP_COOKIE)
		return BAD_ARG(4);
	if (flags != DAT_COMPLETION_SUPPRESS_FLAG)
		return BAD_ARG(5);
	return DAT_SUCCESS;
}

static DAT_RETURN ep_post_rdma_write(DAT_EP_HANDLE ep_handle, DAT_COUNT n,
				     DAT_LMR_TRIPLET *iov,
				     DAT_DTO_COOKIE cookie,
				     const DAT_RMR_TRIPLET *rmr,
				     DAT_COMPLETION_FLAGS flags)
{
	if (ep_handle != &ep)
		return BAD_ARG(1);
	if (rmr->virtual_address != INTEROP_VADDR ||
	    rmr->rmr_context != INTEROP_RKEY)
		return BAD_ARG(5);
	return DAT_SUCCESS;
}

static DAT_RETURN extended_op(DAT_HANDLE handle, DAT_EXTENDED_OP op,
			      va_list args)
{
	DAT_LMR_TRIPLET *local;
	DAT_RMR_TRIPLET *remote;
	DAT_DTO_COOKIE cookie;
	DAT_UINT64 add;

	if (handle != &ep)
		return BAD_ARG(1);
	if (op != DAT_IB_FETCH_AND_ADD_OP)
		return DAT_NOT_IMPLEMENTED;
	/* read back exactly as DAPL's provider does */
	add = va_arg(args, DAT_UINT64);
	local = va_arg(args, DAT_LMR_TRIPLET *);
	cookie = va_arg(args, DAT_DTO_COOKIE);
	remote = va_arg(args, DAT_RMR_TRIPLET *);
	if (add != INTEROP_ADD)
		return BAD_ARG(3);
	if (local->lmr_context != INTEROP_LKEY)
		return BAD_ARG(4);
	if (cookie.as_64 != INTEROP_COOKIE)
		return BAD_ARG(5);
	if (remote->rmr_context != INTEROP_RKEY)
		return BAD_ARG(6);
	if (va_arg(args, DAT_COMPLETION_FLAGS) != DAT_COMPLETION_DEFAULT_FLAG)
		return BAD_ARG(7);
	return DAT_SUCCESS;
}

void dat_provider_init(const DAT_PROVIDER_INFO *info, const char *ia_params)
{
	memset(&provider, 0, sizeof(provider));
	provider.device_name = INTEROP_IA_NAME;
	provider.ia_open_func = ia_open;
	provider.ia_query_func = ia_query;
	provider.ia_close_func = ia_close;
	provider.set_consumer_context_func = set_context;
	provider.get_consumer_context_func = get_context;
	provider.get_handle_type_func = get_handle_type;
	provider.pz_create_func = pz_create;
	provider.pz_free_func = pz_free;
	provider.ep_create_func = ep_create;
	provider.ep_free_func = ep_free;
	provider.ep_post_send_func = ep_post_send;
	provider.ep_post_rdma_write_func = ep_post_rdma_write;
	provider.handle_extendedop_func = extended_op;
	strncpy(ia_params_seen, ia_params, sizeof(ia_params_seen) - 1);
	(void)dat_registry_add_provider(&provider, info);
}

void dat_provider_fini(const DAT_PROVIDER_INFO *info)
{
	(void)dat_registry_remove_provider(&provider, info);
}
