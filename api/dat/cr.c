/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Connection requests: the CM id of a request that arrived at a service
 * point, with what the peer sent, until the consumer accepts it on an EP,
 * rejects it, or hands it to another service point.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <openrdma/errno.h>
#include <openrdma/log.h>

#include "api/dat/provider.h"
#include "api/dat/slots.h"

struct datp_cr *datp_cr_get(DAT_CR_HANDLE handle)
{
	return (struct datp_cr *)datp_obj_get(handle, DATP_CR);
}

/* Where a request for an RSP or a provider-flagged PSP goes. */
static int cr_ep(struct datp_ia *ia, struct datp_sp *sp, struct datp_cr *cr)
{
	int reserved = DAT_EP_STATE_RESERVED;
	int unconf = DAT_EP_STATE_UNCONFIGURED_RESERVED;
	int ret;

	if (sp->kind == DATP_RSP) {
		cr->ep = sp->ep;
		if (!atomic_compare_exchange_strong(
			    &cr->ep->state, &reserved,
			    DAT_EP_STATE_PASSIVE_CONNECTION_PENDING))
			atomic_compare_exchange_strong(
				&cr->ep->state, &unconf,
				DAT_EP_STATE_UNCONFIGURED_PASSIVE);
		return 0;
	}
	if (sp->kind == DATP_PSP && sp->flags == DAT_PSP_PROVIDER_FLAG) {
		ret = datp_ep_alloc_tentative(ia, &cr->ep);
		if (ret)
			return ret;
		cr->ep->cr = cr;
	}
	return 0;
}

int datp_cr_create(struct datp_ia *ia, struct datp_sp *sp,
		   const struct openrdma_cm_event *ev, struct datp_cr **cr_out)
{
	const uint8_t *pd = ev->param.private_data;
	int len = ev->param.private_data_len;
	struct datp_cr *cr;
	int ret;

	cr = calloc(1, sizeof(*cr));
	if (!cr)
		return -OPENRDMA_ENOMEM;
	cr->obj.ia = ia;
	cr->sp = sp;
	cr->id = ev->id;
	cr->conn_qual = sp->conn_qual;
	cr->remote_addr = ev->src_addr;
	cr->remote_port = datp_addr_port(&ev->src_addr);
	cr->ud = datp_ud_parse(cr, pd, len, &pd, &len);
	memcpy(cr->pdata, pd, (size_t)len);
	cr->pdata_len = len;
	ret = cr_ep(ia, sp, cr);
	if (ret)
		goto err_free;
	ret = datp_cmref_add(ia, cr->id, &cr->obj);
	if (ret)
		goto err_ep;
	ret = datp_obj_init(&cr->obj, ia, DATP_CR);
	if (ret)
		goto err_ref;
	datp_obj_hold(&sp->obj);
	*cr_out = cr;
	return 0;

err_ref:
	pthread_mutex_lock(&ia->lock);
	datp_cmref_move(ia, cr->id, NULL);
	pthread_mutex_unlock(&ia->lock);
err_ep:
	if (cr->ep && cr->ep->cr == cr)
		cr->ep->cr = NULL;
err_free:
	free(cr);
	return ret;
}

void datp_cr_event(struct datp_cr *cr, DAT_EVENT *event)
{
	DAT_CR_ARRIVAL_EVENT_DATA *a = &event->event_data.cr_arrival_event_data;

	memset(event, 0, sizeof(*event));
	event->event_number = DAT_CONNECTION_REQUEST_EVENT;
	event->evd_handle = cr->sp->evd;
	switch (cr->sp->kind) {
	case DATP_RSP:
		a->sp_handle.rsp_handle = cr->sp;
		break;
	case DATP_CSP:
		a->sp_handle.csp_handle = cr->sp;
		break;
	default:
		a->sp_handle.psp_handle = cr->sp;
		break;
	}
	a->local_ia_address_ptr = (DAT_IA_ADDRESS_PTR)&cr->obj.ia->addr;
	a->conn_qual = cr->conn_qual;
	a->cr_handle = cr;
	a->truncate_flag = DAT_FALSE;
}

/* Frees the CR; the request is refused first unless someone took it. */
void datp_cr_destroy(struct datp_cr *cr, bool reject)
{
	struct datp_ia *ia = cr->obj.ia;
	struct datp_sp *sp = cr->sp;

	if (cr->id) {
		if (reject)
			openrdma_cm_reject(cr->id, NULL, 0);
		datp_cmref_drop(ia, cr->id, false);
		cr->id = NULL;
	}
	pthread_mutex_lock(&ia->lock);
	if (cr->ep && cr->ep->cr == cr)
		cr->ep->cr = NULL;
	pthread_mutex_unlock(&ia->lock);
	datp_obj_fini(&cr->obj, DATP_CR);
	datp_obj_release(&sp->obj);
}

DAT_RETURN datp_cr_query(DAT_CR_HANDLE cr_handle, DAT_CR_PARAM_MASK mask,
			 DAT_CR_PARAM *param)
{
	struct datp_cr *cr = datp_cr_get(cr_handle);
	DAT_CR_PARAM p;

	if (!cr)
		return DATP_HANDLE(DAT_INVALID_HANDLE_CR, "cr %p", cr_handle);
	if ((unsigned int)mask & ~(unsigned int)DAT_CR_FIELD_ALL)
		return DATP_ARG(DAT_INVALID_ARG2, "cr_param_mask 0x%x", mask);
	if (!param)
		return DATP_ARG(DAT_INVALID_ARG3, "cr_param: NULL");
	memset(&p, 0, sizeof(p));
	p.remote_ia_address_ptr = (DAT_IA_ADDRESS_PTR)&cr->remote_addr;
	p.remote_port_qual = cr->remote_port;
	p.private_data_size = cr->pdata_len;
	p.private_data = cr->pdata_len ? cr->pdata : NULL;
	p.local_ep_handle = cr->ep;
	*param = p;
	return DAT_SUCCESS;
}

/* The EP states from which a request can be accepted. */
static bool ep_can_accept(DAT_EP_STATE s)
{
	return s == DAT_EP_STATE_UNCONNECTED ||
	       s == DAT_EP_STATE_PASSIVE_CONNECTION_PENDING ||
	       s == DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING;
}

DAT_RETURN datp_cr_accept(DAT_CR_HANDLE cr_handle, DAT_EP_HANDLE ep_handle,
			  DAT_COUNT private_data_size,
			  const DAT_PVOID private_data)
{
	struct datp_cr *cr = datp_cr_get(cr_handle);
	struct openrdma_conn_param param = { 0 };
	const struct openrdma_device_attr *d;
	struct datp_ep *ep;
	struct datp_ia *ia;
	DAT_EP_STATE state;
	DAT_RETURN dret;
	int ret;

	if (!cr)
		return DATP_HANDLE(DAT_INVALID_HANDLE_CR, "cr %p", cr_handle);
	ia = cr->obj.ia;
	d = &ia->dev_attr;
	ep = ep_handle ? datp_ep_get(ep_handle) : cr->ep;
	if (!ep || ep->obj.ia != ia)
		return DATP_HANDLE(DAT_INVALID_HANDLE_EP, "ep %p", ep_handle);
	if (cr->ep && ep != cr->ep)
		return DATP_HANDLE(DAT_INVALID_HANDLE_EP,
				   "ep %p: the request is for ep %p", ep_handle,
				   (void *)cr->ep);
	dret = datp_pdata_check(private_data_size, private_data,
				d->max_pdata_accept, DAT_INVALID_ARG3,
				__func__);
	if (dret != DAT_SUCCESS)
		return dret;
	if (cr->ud)
		return datp_ud_accept(cr, ep, private_data, private_data_size);

	pthread_mutex_lock(&ep->lock);
	state = datp_ep_state(ep);
	if (!ep_can_accept(state) || !ep->qp || ep->kind != DATP_EP_RC) {
		pthread_mutex_unlock(&ep->lock);
		return DATP_STATE(ep->qp ? datp_ep_state_sub(state) :
					   DAT_INVALID_STATE_EP_UNCONFIGURED,
				  "EP state %d%s", state,
				  ep->qp ? "" : ", no QP");
	}
	pthread_mutex_lock(&ia->lock);
	datp_cmref_move(ia, cr->id, &ep->obj);
	pthread_mutex_unlock(&ia->lock);
	ep->cm_id = cr->id;
	ep->active = false;
	ep->remote_addr = cr->remote_addr;
	ep->remote_port = cr->remote_port;
	ep->local_port = cr->conn_qual;
	atomic_store(&ep->state, DAT_EP_STATE_COMPLETION_PENDING);
	param.private_data = private_data;
	param.private_data_len = (uint8_t)private_data_size;
	param.responder_resources =
		(uint8_t)(ep->attr.max_rdma_read_in < d->max_qp_rd_atom ?
				  ep->attr.max_rdma_read_in :
				  d->max_qp_rd_atom);
	param.initiator_depth =
		(uint8_t)(ep->attr.max_rdma_read_out < d->max_qp_init_rd_atom ?
				  ep->attr.max_rdma_read_out :
				  d->max_qp_init_rd_atom);
	param.retry_count = 7;
	param.rnr_retry_count = 7;
	ret = openrdma_cm_accept(cr->id, ep->qp, &param);
	if (ret) {
		atomic_store(&ep->state, state);
		ep->cm_id = NULL;
		pthread_mutex_lock(&ia->lock);
		datp_cmref_move(ia, cr->id, &cr->obj);
		pthread_mutex_unlock(&ia->lock);
		pthread_mutex_unlock(&ep->lock);
		return DATP_ERR(ret, DAT_NO_SUBTYPE, "cm_accept");
	}
	if (ep->cr == cr)
		ep->cr = NULL;
	pthread_mutex_unlock(&ep->lock);
	cr->id = NULL; /* the EP's now */
	datp_ia_count(ia, DCNT_IA_SP_CR_ACCEPTED);
	datp_cr_destroy(cr, false);
	return DAT_SUCCESS;
}

DAT_RETURN datp_cr_reject(DAT_CR_HANDLE cr_handle, DAT_COUNT private_data_size,
			  const DAT_PVOID private_data)
{
	struct datp_cr *cr = datp_cr_get(cr_handle);
	struct datp_ep *ep;
	DAT_RETURN dret;
	int ret;

	if (!cr)
		return DATP_HANDLE(DAT_INVALID_HANDLE_CR, "cr %p", cr_handle);
	dret = datp_pdata_check(private_data_size, private_data,
				cr->obj.ia->dev_attr.max_pdata_reject,
				DAT_INVALID_ARG2, __func__);
	if (dret != DAT_SUCCESS)
		return dret;
	ret = openrdma_cm_reject(cr->id, private_data,
				 (uint8_t)private_data_size);
	/* a request its peer withdrew is answered all the same */
	if (ret && ret != -OPENRDMA_ECONNABORTED)
		return DATP_ERR(ret, DAT_NO_SUBTYPE, "cm_reject");
	datp_ia_count(cr->obj.ia, DCNT_IA_SP_CR_REJECTED);
	datp_ia_count(cr->obj.ia, DCNT_IA_CM_USER_REJ_TX);
	/* an RSP's EP is free again; the EP a PSP made stays the consumer's */
	ep = cr->ep;
	if (ep && cr->sp->kind == DATP_RSP) {
		int pending = DAT_EP_STATE_PASSIVE_CONNECTION_PENDING;
		int unconf = DAT_EP_STATE_UNCONFIGURED_PASSIVE;

		if (!atomic_compare_exchange_strong(&ep->state, &pending,
						    DAT_EP_STATE_UNCONNECTED))
			atomic_compare_exchange_strong(
				&ep->state, &unconf,
				DAT_EP_STATE_UNCONFIGURED_UNCONNECTED);
	}
	datp_cr_destroy(cr, false);
	return DAT_SUCCESS;
}

DAT_RETURN datp_cr_handoff(DAT_CR_HANDLE cr_handle, DAT_CONN_QUAL handoff)
{
	struct datp_cr *cr = datp_cr_get(cr_handle);
	struct datp_sp *to;
	struct datp_ia *ia;
	DAT_EVENT ev;
	int ret;

	if (!cr)
		return DATP_HANDLE(DAT_INVALID_HANDLE_CR, "cr %p", cr_handle);
	ia = cr->obj.ia;
	pthread_mutex_lock(&ia->lock);
	to = datp_sp_find(ia, handoff);
	if (to && (to->kind == DATP_RSP || to == cr->sp))
		to = NULL;
	if (to)
		datp_obj_hold(&to->obj);
	pthread_mutex_unlock(&ia->lock);
	if (!to)
		return DATP_ARG(DAT_INVALID_ARG2,
				"no other PSP or CSP on qualifier %llu",
				(unsigned long long)handoff);
	/* the same request, announced at the other service point */
	datp_obj_release(&cr->sp->obj);
	cr->sp = to;
	cr->conn_qual = to->conn_qual;
	datp_cr_event(cr, &ev);
	ret = datp_evd_post(to->evd, &ev);
	if (ret)
		return DATP_ERR(ret, DAT_NO_SUBTYPE, "post to the new EVD");
	return DAT_SUCCESS;
}
