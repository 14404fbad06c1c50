/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Service points: a listening CM id.  A PSP listens on a connection
 * qualifier (the port of the IA address) and, with DAT_PSP_PROVIDER_FLAG,
 * hands out an EP with each request; an RSP reserves an EP for one
 * request; a CSP (DAT 2.0) listens on a socket address of its own.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <utlist.h>

#include <openrdma/errno.h>
#include <openrdma/log.h>

#include "api/dat/provider.h"
#include "api/dat/slots.h"

#define SP_BACKLOG 128
#define QUAL_MAX 0xffffu

struct datp_sp *datp_sp_get(DAT_HANDLE handle, enum datp_kind kind)
{
	return (struct datp_sp *)datp_obj_get(handle, kind);
}

struct datp_sp *datp_sp_find(struct datp_ia *ia, DAT_CONN_QUAL conn_qual)
{
	static const enum datp_kind kinds[] = { DATP_PSP, DATP_RSP, DATP_CSP };
	struct datp_obj *obj;
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		DL_FOREACH (ia->objs[kinds[i]], obj)
			if (((struct datp_sp *)obj)->conn_qual == conn_qual)
				return (struct datp_sp *)obj;
	return NULL;
}

/*
 * Listens at sp->addr; a port of 0 there picks one, reported back.  The
 * id is in the IA's table before it listens: a request that comes at once
 * finds its service point.
 */
static int sp_listen(struct datp_sp *sp)
{
	struct datp_ia *ia = sp->obj.ia;
	struct sockaddr_storage local;
	int ret;

	ret = openrdma_cm_id_create(ia->ctx, ia->cm_ch, sp, OPENRDMA_PS_TCP,
				    &sp->id);
	if (ret)
		return ret;
	ret = datp_cmref_add(ia, sp->id, &sp->obj);
	if (ret)
		goto err_id;
	sp->conn_qual = datp_addr_port(&sp->addr);
	ret = openrdma_cm_listen(sp->id, (const struct sockaddr *)&sp->addr,
				 SP_BACKLOG);
	if (ret)
		goto err_ref;
	ret = openrdma_cm_local_addr(sp->id, &local);
	if (ret)
		goto err_ref;
	sp->addr = local;
	/* a port picked here is unknown to peers until the call returns:
	 * no request reads it before this */
	if (!sp->conn_qual)
		sp->conn_qual = datp_addr_port(&local);
	datp_ia_count(ia, DCNT_IA_CM_LISTEN);
	return 0;

err_ref:
	datp_cmref_drop(ia, sp->id, false);
	sp->id = NULL;
	return ret;
err_id:
	openrdma_cm_id_destroy(sp->id);
	sp->id = NULL;
	return ret;
}

/*
 * Makes the service point tmpl describes (kind, addr, evd and the kind's
 * own fields) and has it listen.  It is complete before it listens: a
 * request may reach it at once, in the dispatcher thread.
 */
static int sp_make(struct datp_ia *ia, const struct datp_sp *tmpl,
		   struct datp_sp **sp_out)
{
	struct datp_sp *sp;
	int ret;

	sp = malloc(sizeof(*sp));
	if (!sp)
		return -OPENRDMA_ENOMEM;
	*sp = *tmpl;
	sp->obj.ia = ia;
	ret = datp_obj_init(&sp->obj, ia, sp->kind);
	if (ret) {
		free(sp);
		return ret;
	}
	ret = sp_listen(sp);
	if (ret) {
		datp_obj_fini(&sp->obj, sp->kind);
		return ret;
	}
	datp_use(&sp->evd->obj);
	*sp_out = sp;
	return 0;
}

static DAT_RETURN sp_args(DAT_IA_HANDLE ia_handle, DAT_EVD_HANDLE evd_handle,
			  DAT_RETURN_SUBTYPE evd_arg, struct datp_ia **ia_out,
			  struct datp_evd **evd_out, const char *fn)
{
	struct datp_ia *ia = datp_ia_get(ia_handle);
	DAT_RETURN ret;

	if (!ia)
		return datp_fail(-OPENRDMA_EBADHANDLE, DAT_INVALID_HANDLE_IA,
				 fn, "ia %p", ia_handle);
	if (!evd_handle)
		return datp_fail(-OPENRDMA_EBADHANDLE, evd_arg, fn,
				 "evd: NULL");
	ret = datp_evd_arg(ia, evd_handle, DAT_EVD_CR_FLAG, evd_arg, fn,
			   evd_out);
	if (ret != DAT_SUCCESS)
		return ret;
	*ia_out = ia;
	return DAT_SUCCESS;
}

static DAT_RETURN sp_fail(int err, DAT_CONN_QUAL qual, const char *fn)
{
	if (err == -OPENRDMA_EADDRINUSE)
		return datp_fail(err, DAT_NO_SUBTYPE, fn,
				 "connection qualifier %llu is in use",
				 (unsigned long long)qual);
	return datp_fail(err, DAT_RESOURCE_MEMORY, fn, "listen on %llu",
			 (unsigned long long)qual);
}

static DAT_RETURN psp_create(DAT_IA_HANDLE ia_handle, DAT_CONN_QUAL conn_qual,
			     DAT_EVD_HANDLE evd_handle, DAT_PSP_FLAGS psp_flags,
			     DAT_PSP_HANDLE *psp_handle,
			     DAT_CONN_QUAL *qual_out, const char *fn)
{
	struct datp_sp tmpl = { .kind = DATP_PSP, .flags = psp_flags };
	struct datp_evd *evd;
	struct datp_sp *sp;
	struct datp_ia *ia;
	DAT_RETURN ret;
	int err;

	ret = sp_args(ia_handle, evd_handle, DAT_INVALID_HANDLE_EVD_CR, &ia,
		      &evd, fn);
	if (ret != DAT_SUCCESS)
		return ret;
	if (psp_flags != DAT_PSP_CONSUMER_FLAG &&
	    psp_flags != DAT_PSP_PROVIDER_FLAG)
		return datp_fail(-OPENRDMA_EINVAL, DAT_INVALID_ARG4, fn,
				 "psp_flags 0x%x", psp_flags);
	if (!psp_handle)
		return datp_fail(-OPENRDMA_EINVAL, DAT_INVALID_ARG5, fn,
				 "psp_handle: NULL");
	tmpl.evd = evd;
	tmpl.addr = ia->addr;
	datp_addr_set_port(&tmpl.addr, (uint16_t)conn_qual);
	err = sp_make(ia, &tmpl, &sp);
	if (err)
		return sp_fail(err, conn_qual, fn);
	datp_ia_count(ia,
		      qual_out ? DCNT_IA_PSP_CREATE_ANY : DCNT_IA_PSP_CREATE);
	if (qual_out)
		*qual_out = sp->conn_qual;
	*psp_handle = sp;
	return DAT_SUCCESS;
}

DAT_RETURN datp_psp_create(DAT_IA_HANDLE ia_handle, DAT_CONN_QUAL conn_qual,
			   DAT_EVD_HANDLE evd_handle, DAT_PSP_FLAGS psp_flags,
			   DAT_PSP_HANDLE *psp_handle)
{
	if (!conn_qual || conn_qual > QUAL_MAX)
		return DATP_ARG(DAT_INVALID_ARG2,
				"conn_qual %llu: not a port number",
				(unsigned long long)conn_qual);
	return psp_create(ia_handle, conn_qual, evd_handle, psp_flags,
			  psp_handle, NULL, __func__);
}

DAT_RETURN datp_psp_create_any(DAT_IA_HANDLE ia_handle,
			       DAT_CONN_QUAL *conn_qual,
			       DAT_EVD_HANDLE evd_handle,
			       DAT_PSP_FLAGS psp_flags,
			       DAT_PSP_HANDLE *psp_handle)
{
	if (!conn_qual)
		return DATP_ARG(DAT_INVALID_ARG2, "conn_qual: NULL");
	return psp_create(ia_handle, 0, evd_handle, psp_flags, psp_handle,
			  conn_qual, __func__);
}

/*
 * What the three queries check before they fill DAT_xSP_PARAM: the
 * handle (of kind, else subtype sub), the mask (within all) and the
 * output.  NULL, with *ret set, when one fails.  fn: the query, for the
 * log.
 */
static struct datp_sp *sp_query_args(DAT_HANDLE handle, enum datp_kind kind,
				     DAT_RETURN_SUBTYPE sub, unsigned int mask,
				     unsigned int all, const void *param,
				     DAT_RETURN *ret, const char *fn)
{
	struct datp_sp *sp = datp_sp_get(handle, kind);

	if (!sp)
		*ret = datp_fail(-OPENRDMA_EBADHANDLE, sub, fn, "handle %p",
				 handle);
	else if (mask & ~all)
		*ret = datp_fail(-OPENRDMA_EINVAL, DAT_INVALID_ARG2, fn,
				 "param_mask 0x%x", mask);
	else if (!param)
		*ret = datp_fail(-OPENRDMA_EINVAL, DAT_INVALID_ARG3, fn,
				 "param: NULL");
	else
		return sp;
	return NULL;
}

DAT_RETURN datp_psp_query(DAT_PSP_HANDLE psp_handle, DAT_PSP_PARAM_MASK mask,
			  DAT_PSP_PARAM *param)
{
	struct datp_sp *sp;
	DAT_RETURN ret;

	sp = sp_query_args(psp_handle, DATP_PSP, DAT_INVALID_HANDLE_PSP, mask,
			   DAT_PSP_FIELD_ALL, param, &ret, __func__);
	if (!sp)
		return ret;
	*param = (DAT_PSP_PARAM){
		.ia_handle = sp->obj.ia,
		.conn_qual = sp->conn_qual,
		.evd_handle = sp->evd,
		.psp_flags = sp->flags,
	};
	return DAT_SUCCESS;
}

DAT_RETURN datp_rsp_create(DAT_IA_HANDLE ia_handle, DAT_CONN_QUAL conn_qual,
			   DAT_EP_HANDLE ep_handle, DAT_EVD_HANDLE evd_handle,
			   DAT_RSP_HANDLE *rsp_handle)
{
	struct datp_sp tmpl = { .kind = DATP_RSP };
	struct datp_evd *evd;
	struct datp_sp *sp;
	struct datp_ep *ep;
	struct datp_ia *ia;
	DAT_EP_STATE state;
	DAT_RETURN ret;
	int err;

	ret = sp_args(ia_handle, evd_handle, DAT_INVALID_HANDLE_EVD_CR, &ia,
		      &evd, __func__);
	if (ret != DAT_SUCCESS)
		return ret;
	if (!conn_qual || conn_qual > QUAL_MAX)
		return DATP_ARG(DAT_INVALID_ARG2,
				"conn_qual %llu: not a port number",
				(unsigned long long)conn_qual);
	ep = datp_ep_get(ep_handle);
	if (!ep || ep->obj.ia != ia)
		return DATP_HANDLE(DAT_INVALID_HANDLE_EP, "ep %p", ep_handle);
	if (!rsp_handle)
		return DATP_ARG(DAT_INVALID_ARG5, "rsp_handle: NULL");

	pthread_mutex_lock(&ep->lock);
	state = datp_ep_state(ep);
	if (state != DAT_EP_STATE_UNCONNECTED &&
	    state != DAT_EP_STATE_UNCONFIGURED_UNCONNECTED) {
		pthread_mutex_unlock(&ep->lock);
		return DATP_STATE(datp_ep_state_sub(state), "EP state %d",
				  state);
	}
	/* reserved before the RSP listens: its request may come at once */
	atomic_store(&ep->state, state == DAT_EP_STATE_UNCONNECTED ?
					 DAT_EP_STATE_RESERVED :
					 DAT_EP_STATE_UNCONFIGURED_RESERVED);
	datp_use(&ep->obj);
	tmpl.ep = ep;
	tmpl.evd = evd;
	tmpl.addr = ia->addr;
	datp_addr_set_port(&tmpl.addr, (uint16_t)conn_qual);
	err = sp_make(ia, &tmpl, &sp);
	if (err) {
		datp_unuse(&ep->obj);
		atomic_store(&ep->state, state);
		pthread_mutex_unlock(&ep->lock);
		return sp_fail(err, conn_qual, __func__);
	}
	pthread_mutex_unlock(&ep->lock);
	datp_ia_count(ia, DCNT_IA_RSP_CREATE);
	*rsp_handle = sp;
	return DAT_SUCCESS;
}

DAT_RETURN datp_rsp_query(DAT_RSP_HANDLE rsp_handle, DAT_RSP_PARAM_MASK mask,
			  DAT_RSP_PARAM *param)
{
	struct datp_sp *sp;
	DAT_RETURN ret;

	sp = sp_query_args(rsp_handle, DATP_RSP, DAT_INVALID_HANDLE_RSP, mask,
			   DAT_RSP_FIELD_ALL, param, &ret, __func__);
	if (!sp)
		return ret;
	*param = (DAT_RSP_PARAM){
		.ia_handle = sp->obj.ia,
		.conn_qual = sp->conn_qual,
		.evd_handle = sp->evd,
		.ep_handle = sp->ep,
	};
	return DAT_SUCCESS;
}

DAT_RETURN datp_csp_create(DAT_IA_HANDLE ia_handle, DAT_COMM *comm,
			   DAT_IA_ADDRESS_PTR address,
			   DAT_EVD_HANDLE evd_handle,
			   DAT_CSP_HANDLE *csp_handle)
{
	struct datp_sp tmpl = { .kind = DATP_CSP };
	struct datp_evd *evd;
	struct datp_sp *sp;
	struct datp_ia *ia;
	DAT_RETURN ret;
	int err;

	ret = sp_args(ia_handle, evd_handle, DAT_INVALID_HANDLE_EVD_CR, &ia,
		      &evd, __func__);
	if (ret != DAT_SUCCESS)
		return ret;
	if (!comm)
		return DATP_ARG(DAT_INVALID_ARG2, "comm: NULL");
	/* connections are reliable streams, TCP-like, over IPv4 or IPv6 */
	if ((comm->domain != AF_INET && comm->domain != AF_INET6) ||
	    comm->type != SOCK_STREAM ||
	    (comm->protocol != 0 && comm->protocol != IPPROTO_TCP)) {
		openrdma_dbg("dat", "%s: comm {%d, %d, %d}", __func__,
			     comm->domain, comm->type, comm->protocol);
		return DAT_CLASS_ERROR | DAT_COMM_NOT_SUPPORTED;
	}
	if (!address)
		return DATP_ARG(DAT_INVALID_ARG3, "address: NULL");
	if (address->sa_family != comm->domain)
		return DAT_CLASS_ERROR | DAT_INVALID_ADDRESS |
		       DAT_INVALID_ADDRESS_MALFORMED;
	memcpy(&tmpl.addr, address,
	       address->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
						sizeof(struct sockaddr_in));
	if (!csp_handle)
		return DATP_ARG(DAT_INVALID_ARG5, "csp_handle: NULL");
	tmpl.comm = *comm;
	tmpl.evd = evd;
	err = sp_make(ia, &tmpl, &sp);
	if (err == -OPENRDMA_EADDRNOTAVAIL)
		return DAT_CLASS_ERROR | DAT_INVALID_ADDRESS |
		       DAT_INVALID_ADDRESS_UNSUPPORTED;
	if (err == -OPENRDMA_EADDRINUSE)
		return DAT_CLASS_ERROR | DAT_PORT_IN_USE;
	if (err)
		return sp_fail(err, 0, __func__);
	*csp_handle = sp;
	return DAT_SUCCESS;
}

DAT_RETURN datp_csp_query(DAT_CSP_HANDLE csp_handle, DAT_CSP_PARAM_MASK mask,
			  DAT_CSP_PARAM *param)
{
	struct datp_sp *sp;
	DAT_RETURN ret;

	sp = sp_query_args(csp_handle, DATP_CSP, DAT_INVALID_HANDLE_CSP, mask,
			   DAT_CSP_FIELD_ALL, param, &ret, __func__);
	if (!sp)
		return ret;
	*param = (DAT_CSP_PARAM){
		.ia_handle = sp->obj.ia,
		.comm = &sp->comm,
		.address_ptr = (DAT_IA_ADDRESS_PTR)&sp->addr,
		.evd_handle = sp->evd,
	};
	return DAT_SUCCESS;
}

void datp_sp_destroy(struct datp_sp *sp)
{
	struct datp_ia *ia = sp->obj.ia;
	struct datp_ep *ep = sp->ep;
	int reserved = DAT_EP_STATE_RESERVED;
	int unconf = DAT_EP_STATE_UNCONFIGURED_RESERVED;

	/* requests not yet taken keep their CRs: they do not need the id */
	datp_cmref_drop(ia, sp->id, false);
	datp_unuse(&sp->evd->obj);
	if (ep) {
		/* an RSP whose request never came gives its EP back */
		if (!atomic_compare_exchange_strong(&ep->state, &reserved,
						    DAT_EP_STATE_UNCONNECTED))
			atomic_compare_exchange_strong(
				&ep->state, &unconf,
				DAT_EP_STATE_UNCONFIGURED_UNCONNECTED);
		datp_unuse(&ep->obj);
	}
	datp_ia_count(ia, sp->kind == DATP_PSP ? DCNT_IA_PSP_FREE :
						 DCNT_IA_RSP_FREE);
	datp_obj_fini(&sp->obj, sp->kind);
}

static DAT_RETURN sp_free(DAT_HANDLE handle, enum datp_kind kind,
			  DAT_RETURN_SUBTYPE sub, const char *fn)
{
	struct datp_sp *sp = datp_sp_get(handle, kind);

	if (!sp)
		return datp_fail(-OPENRDMA_EBADHANDLE, sub, fn, "handle %p",
				 handle);
	datp_ia_reap(sp->obj.ia);
	datp_sp_destroy(sp);
	return DAT_SUCCESS;
}

DAT_RETURN datp_psp_free(DAT_PSP_HANDLE psp_handle)
{
	return sp_free(psp_handle, DATP_PSP, DAT_INVALID_HANDLE_PSP, __func__);
}

DAT_RETURN datp_rsp_free(DAT_RSP_HANDLE rsp_handle)
{
	return sp_free(rsp_handle, DATP_RSP, DAT_INVALID_HANDLE_RSP, __func__);
}

DAT_RETURN datp_csp_free(DAT_CSP_HANDLE csp_handle)
{
	return sp_free(csp_handle, DATP_CSP, DAT_INVALID_HANDLE_CSP, __func__);
}
