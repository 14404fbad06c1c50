/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * A DAT program built against OpenRDMA's DAT headers and linked with the
 * system's libdat2 (DAPL), talking to interop_provider.c, a provider also
 * built against our headers, that libdat2 loads from the dat.conf named by
 * DAT_OVERRIDE.  If our layouts, constants, provider table or macros
 * differed from the ones libdat2 was built with, these calls would fail.
 * Prints one "ok"/"not ok" line per check; exits 1 if any failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dat2/udat.h>
#include <dat2/dat_ib_extensions.h>

#include "interop.h"

static int failed;

static void check(int ok, const char *what, DAT_RETURN ret)
{
	printf("%s - %s", ok ? "ok" : "not ok", what);
	if (!ok)
		printf(" (returned 0x%08x)", (unsigned int)ret);
	printf("\n");
	/* a broken binary interface tends to crash: keep what was printed */
	fflush(stdout);
	if (!ok)
		failed = 1;
}

/* dat_strerror() and the registry need no provider. */
static void registry(void)
{
	DAT_PROVIDER_INFO *list[64];
	DAT_PROVIDER_INFO infos[64];
	const char *major = NULL;
	const char *minor = NULL;
	DAT_COUNT n = 0;
	DAT_COUNT i;
	DAT_RETURN ret;
	int found = 0;

	ret = dat_strerror(DAT_CLASS_ERROR | DAT_PROVIDER_NOT_FOUND |
				   DAT_NAME_NOT_REGISTERED,
			   &major, &minor);
	check(ret == DAT_SUCCESS &&
		      strcmp(major, "DAT_PROVIDER_NOT_FOUND") == 0 &&
		      strcmp(minor, "DAT_NAME_NOT_REGISTERED") == 0,
	      "dat_strerror names our type and subtype values", ret);

	ret = dat_registry_list_providers(0, &n, list);
	check(DAT_GET_TYPE(ret) == DAT_INVALID_PARAMETER &&
		      DAT_GET_SUBTYPE(ret) == DAT_INVALID_ARG1 && n == 1,
	      "dat_registry_list_providers(0) counts the one dat.conf entry",
	      ret);

	for (i = 0; i < 64; i++)
		list[i] = &infos[i];
	memset(infos, 0xa5, sizeof(infos));
	ret = dat_registry_list_providers(64, &n, list);
	for (i = 0; ret == DAT_SUCCESS && i < n; i++)
		if (strcmp(infos[i].ia_name, INTEROP_IA_NAME) == 0 &&
		    infos[i].dapl_version_major == DAT_VERSION_MAJOR &&
		    infos[i].dapl_version_minor == DAT_VERSION_MINOR &&
		    infos[i].is_thread_safe == DAT_FALSE)
			found = 1;
	check(found, "DAT_PROVIDER_INFO as libdat2 fills it", ret);
}

static void provider_calls(void)
{
	DAT_EVD_HANDLE async_evd = DAT_HANDLE_NULL;
	DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
	DAT_IA_ATTR ia_attr;
	DAT_PROVIDER_ATTR *pr_attr;
	DAT_PZ_HANDLE pz = DAT_HANDLE_NULL;
	DAT_EP_HANDLE ep = DAT_HANDLE_NULL;
	DAT_HANDLE_TYPE type;
	DAT_EP_ATTR ep_attr;
	DAT_LMR_TRIPLET iov[2];
	DAT_RMR_TRIPLET rmr;
	DAT_DTO_COOKIE cookie;
	DAT_CONTEXT ctx;
	DAT_RETURN ret;
	char missing[] = "openrdma-no-such-ia";
	char name[] = INTEROP_IA_NAME;

	/* the failure path first: a name no dat.conf line has */
	ret = dat_ia_open(missing, INTEROP_QLEN, &async_evd, &ia);
	check(ret == (DAT_CLASS_ERROR | DAT_PROVIDER_NOT_FOUND |
		      DAT_NAME_NOT_REGISTERED),
	      "dat_ia_open of an unknown name: PROVIDER_NOT_FOUND", ret);

	ret = dat_ia_open(name, INTEROP_QLEN, &async_evd, &ia);
	check(ret == DAT_SUCCESS && ia != DAT_HANDLE_NULL &&
		      async_evd != DAT_HANDLE_NULL,
	      "dat_ia_open loads our provider and opens the IA", ret);
	if (ret != DAT_SUCCESS)
		return;

	pr_attr = (DAT_PROVIDER_ATTR *)calloc(1, sizeof(*pr_attr));
	if (pr_attr == NULL)
		abort();
	ret = dat_ia_query(ia, NULL, DAT_IA_FIELD_ALL, &ia_attr,
			   DAT_PROVIDER_FIELD_ALL, pr_attr);
	check(ret == DAT_SUCCESS &&
		      strcmp(ia_attr.adapter_name, INTEROP_ADAPTER) == 0 &&
		      strcmp(ia_attr.vendor_name, INTEROP_IA_PARAMS) == 0 &&
		      ia_attr.max_eps == INTEROP_MAX_EPS &&
		      ia_attr.max_message_size == INTEROP_MAX_MSG &&
		      ia_attr.extension_supported == DAT_EXTENSION_IB &&
		      strcmp(pr_attr->provider_name, INTEROP_PROVIDER) == 0 &&
		      pr_attr->max_private_data_size == INTEROP_MAX_PDATA &&
		      pr_attr->ha_loadbalancing == DAT_HA_LB_INTRACOMM,
	      "dat_ia_query: DAT_IA_ATTR and DAT_PROVIDER_ATTR", ret);
	free(pr_attr);

	ret = dat_pz_create(ia, &pz);
	check(ret == DAT_SUCCESS, "dat_pz_create through the IA index", ret);
	ret = dat_get_handle_type(pz, &type);
	check(ret == DAT_SUCCESS && type == DAT_HANDLE_TYPE_PZ,
	      "dat_get_handle_type", ret);
	ctx.as_64 = INTEROP_COOKIE;
	ret = dat_set_consumer_context(pz, ctx);
	if (ret == DAT_SUCCESS) {
		ctx.as_64 = 0;
		ret = dat_get_consumer_context(pz, &ctx);
	}
	check(ret == DAT_SUCCESS && ctx.as_64 == INTEROP_COOKIE,
	      "consumer context round trip", ret);

	memset(&ep_attr, 0, sizeof(ep_attr));
	ep_attr.max_recv_dtos = INTEROP_RECV_DTOS;
	ep_attr.max_rdma_write_iov = INTEROP_WRITE_IOV;
	ret = dat_ep_create(ia, pz, async_evd, async_evd, async_evd, &ep_attr,
			    &ep);
	check(ret == DAT_SUCCESS, "dat_ep_create: DAT_EP_ATTR", ret);

	memset(iov, 0, sizeof(iov));
	iov[1].virtual_address = INTEROP_VADDR;
	iov[1].segment_length = INTEROP_LEN;
	iov[1].lmr_context = INTEROP_LKEY;
	cookie.as_64 = INTEROP_COOKIE;
	ret = dat_ep_post_send(ep, 2, iov, cookie,
			       DAT_COMPLETION_SUPPRESS_FLAG);
	check(ret == DAT_SUCCESS, "dat_ep_post_send: triplets, cookie, flags",
	      ret);
	rmr.virtual_address = INTEROP_VADDR;
	rmr.segment_length = INTEROP_LEN;
	rmr.rmr_context = INTEROP_RKEY;
	ret = dat_ep_post_rdma_write(ep, 1, &iov[1], cookie, &rmr,
				     DAT_COMPLETION_DEFAULT_FLAG);
	check(ret == DAT_SUCCESS, "dat_ep_post_rdma_write: DAT_RMR_TRIPLET",
	      ret);
	ret = dat_ib_post_fetch_and_add(ep, INTEROP_ADD, &iov[1], cookie, &rmr,
					DAT_COMPLETION_DEFAULT_FLAG);
	check(ret == DAT_SUCCESS,
	      "dat_ib_post_fetch_and_add through dat_extension_op", ret);
	/* an operation our provider does not have */
	ret = dat_ib_post_cmp_and_swap(ep, 1, 2, &iov[1], cookie, &rmr,
				       DAT_COMPLETION_DEFAULT_FLAG);
	check(DAT_GET_TYPE(ret) == DAT_NOT_IMPLEMENTED,
	      "an unknown extension op: NOT_IMPLEMENTED", ret);
	/* a provider-side refusal comes back unchanged */
	ret = dat_ep_post_send(ep, 1, iov, cookie, DAT_COMPLETION_DEFAULT_FLAG);
	check(ret == (DAT_CLASS_ERROR | DAT_INVALID_PARAMETER |
		      DAT_INVALID_ARG2),
	      "the provider's error reaches the caller", ret);

	ret = dat_ep_free(ep);
	check(ret == DAT_SUCCESS, "dat_ep_free", ret);
	ret = dat_pz_free(pz);
	check(ret == DAT_SUCCESS, "dat_pz_free", ret);
	ret = dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG);
	check(ret == DAT_SUCCESS, "dat_ia_close", ret);
}

int main(void)
{
	registry();
	provider_calls();
	return failed;
}
