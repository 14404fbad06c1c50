/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Shared receive queues: an SRQ of the core, with its receive slots.  A
 * receive an EP consumed from the SRQ counts against that EP (for
 * dat_ep_recv_query and the EP's watermarks) until the consumer dequeues
 * its event.  The low watermark is the core's SRQ limit event.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <openrdma/errno.h>
#include <openrdma/log.h>

#include "api/dat/provider.h"
#include "api/dat/slots.h"

struct datp_srq *datp_srq_get(DAT_SRQ_HANDLE handle)
{
	return (struct datp_srq *)datp_obj_get(handle, DATP_SRQ);
}

DAT_RETURN datp_srq_create(DAT_IA_HANDLE ia_handle, DAT_PZ_HANDLE pz_handle,
			   DAT_SRQ_ATTR *srq_attr, DAT_SRQ_HANDLE *srq_handle)
{
	struct datp_ia *ia = datp_ia_get(ia_handle);
	struct datp_pz *pz = datp_pz_get(pz_handle);
	struct openrdma_srq_init_attr init = { 0 };
	struct datp_srq *srq;
	int ret;

	if (!ia)
		return DATP_HANDLE(DAT_INVALID_HANDLE_IA, "ia %p", ia_handle);
	if (!pz || pz->obj.ia != ia)
		return DATP_HANDLE(DAT_INVALID_HANDLE_PZ, "pz %p", pz_handle);
	if (!(ia->dev_attr.device_cap_flags & OPENRDMA_DEVICE_SRQ))
		return DATP_ERR(-OPENRDMA_EOPNOTSUPP, DAT_NO_SUBTYPE,
				"%s has no SRQ", ia->entry->iface);
	if (!srq_attr)
		return DATP_ARG(DAT_INVALID_ARG3, "srq_attr: NULL");
	if (srq_attr->max_recv_dtos <= 0 ||
	    srq_attr->max_recv_dtos > ia->dev_attr.max_srq_wr ||
	    srq_attr->max_recv_iov <= 0 ||
	    srq_attr->max_recv_iov > ia->dev_attr.max_srq_sge ||
	    srq_attr->low_watermark < 0 ||
	    srq_attr->low_watermark > srq_attr->max_recv_dtos)
		return DATP_ARG(DAT_INVALID_ARG3,
				"srq_attr: max_recv_dtos %d max_recv_iov %d "
				"low_watermark %d",
				srq_attr->max_recv_dtos, srq_attr->max_recv_iov,
				srq_attr->low_watermark);
	if (!srq_handle)
		return DATP_ARG(DAT_INVALID_ARG4, "srq_handle: NULL");

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return datp_ret(-OPENRDMA_ENOMEM, DAT_RESOURCE_MEMORY);
	init.srq_context = srq;
	init.attr.max_wr = (uint32_t)srq_attr->max_recv_dtos;
	init.attr.max_sge = (uint32_t)srq_attr->max_recv_iov;
	init.attr.srq_limit = (uint32_t)srq_attr->low_watermark;
	ret = openrdma_srq_create(pz->pd, &init, &srq->srq);
	if (ret)
		goto err_free;
	ret = datp_rq_init(&srq->rq, srq->srq->max_wr, srq->srq->max_sge);
	if (ret)
		goto err_srq;
	srq->key = datp_key_add(ia, DATP_KEY_SRQ, srq);
	if (!srq->key) {
		ret = -OPENRDMA_ENOMEM;
		goto err_rq;
	}
	srq->pz = pz;
	srq->max_recv_iov = srq_attr->max_recv_iov;
	srq->low_watermark = srq_attr->low_watermark;
	ret = datp_obj_init(&srq->obj, ia, DATP_SRQ);
	if (ret)
		goto err_key;
	datp_use(&pz->obj);
	datp_ia_count(ia, DCNT_IA_SRQ_CREATE);
	*srq_handle = srq;
	return DAT_SUCCESS;

err_key:
	datp_key_del(ia, srq->key);
err_rq:
	datp_rq_fini(&srq->rq);
err_srq:
	openrdma_srq_destroy(srq->srq);
err_free:
	free(srq);
	return DATP_ERR(ret, DAT_RESOURCE_SRQ, "SRQ");
}

DAT_RETURN datp_srq_post_recv(DAT_SRQ_HANDLE srq_handle, DAT_COUNT num_segments,
			      DAT_LMR_TRIPLET *local_iov,
			      DAT_DTO_COOKIE user_cookie)
{
	struct datp_srq *srq = datp_srq_get(srq_handle);
	struct openrdma_recv_wr wr = { 0 }, *bad;
	struct datp_rq *rq;
	uint64_t total;
	int index, ret;

	if (!srq)
		return DATP_HANDLE(DAT_INVALID_HANDLE_SRQ, "srq %p",
				   srq_handle);
	if (num_segments < 0 || num_segments > srq->max_recv_iov)
		return DATP_ARG(DAT_INVALID_ARG2,
				"num_segments %d (at most %d)", num_segments,
				srq->max_recv_iov);
	if (num_segments && !local_iov)
		return DATP_ARG(DAT_INVALID_ARG3, "local_iov: NULL");
	rq = &srq->rq;
	pthread_mutex_lock(&rq->lock);
	index = datp_rq_take(rq);
	if (index < 0) {
		pthread_mutex_unlock(&rq->lock);
		return DATP_ERR(-OPENRDMA_ENOMEM, DAT_RESOURCE_SRQ,
				"%u receives outstanding", rq->cap);
	}
	datp_sge_fill(rq->sge, local_iov, num_segments, &total);
	rq->slots[index].cookie = user_cookie;
	rq->slots[index].op = DAT_DTO_RECEIVE;
	rq->slots[index].length = (uint32_t)total;
	rq->bytes += total;
	wr.wr_id = datp_recv_wr_id(srq->key, (uint32_t)index);
	wr.sg_list = rq->sge;
	wr.num_sge = num_segments;
	ret = openrdma_srq_post_recv(srq->srq, &wr, &bad);
	if (ret)
		datp_rq_give(rq, (uint32_t)index);
	pthread_mutex_unlock(&rq->lock);
	if (ret)
		return DATP_ERR(ret, DAT_RESOURCE_SRQ, "srq_post_recv");
	return DAT_SUCCESS;
}

DAT_RETURN datp_srq_query(DAT_SRQ_HANDLE srq_handle, DAT_SRQ_PARAM_MASK mask,
			  DAT_SRQ_PARAM *param)
{
	struct datp_srq *srq = datp_srq_get(srq_handle);
	DAT_SRQ_PARAM p;

	if (!srq)
		return DATP_HANDLE(DAT_INVALID_HANDLE_SRQ, "srq %p",
				   srq_handle);
	if ((unsigned int)mask & ~(unsigned int)DAT_SRQ_FIELD_ALL)
		return DATP_ARG(DAT_INVALID_ARG2, "srq_param_mask 0x%x", mask);
	if (!param)
		return DATP_ARG(DAT_INVALID_ARG3, "srq_param: NULL");
	memset(&p, 0, sizeof(p));
	p.ia_handle = srq->obj.ia;
	p.srq_state = DAT_SRQ_STATE_OPERATIONAL;
	p.pz_handle = srq->pz;
	p.max_recv_dtos = (DAT_COUNT)srq->srq->max_wr;
	p.max_recv_iov = srq->max_recv_iov;
	p.low_watermark = srq->low_watermark;
	pthread_mutex_lock(&srq->rq.lock);
	p.available_dto_count = (DAT_COUNT)datp_rq_outstanding(&srq->rq);
	pthread_mutex_unlock(&srq->rq.lock);
	p.outstanding_dto_count = atomic_load(&srq->in_use);
	*param = p;
	return DAT_SUCCESS;
}

DAT_RETURN datp_srq_resize(DAT_SRQ_HANDLE srq_handle,
			   DAT_COUNT srq_max_recv_dto)
{
	struct datp_srq *srq = datp_srq_get(srq_handle);
	struct openrdma_srq_attr attr = { 0 };
	uint32_t posted;
	int ret;

	if (!srq)
		return DATP_HANDLE(DAT_INVALID_HANDLE_SRQ, "srq %p",
				   srq_handle);
	if (srq_max_recv_dto <= 0 ||
	    srq_max_recv_dto > srq->obj.ia->dev_attr.max_srq_wr)
		return DATP_ARG(DAT_INVALID_ARG2, "srq_max_recv_dto %d",
				srq_max_recv_dto);
	pthread_mutex_lock(&srq->rq.lock);
	posted = datp_rq_outstanding(&srq->rq);
	if ((uint32_t)srq_max_recv_dto < posted) {
		pthread_mutex_unlock(&srq->rq.lock);
		return DATP_STATE(DAT_INVALID_STATE_SRQ_IN_USE,
				  "%u receives are posted", posted);
	}
	/* it holds as many already: a device need not shrink it (siw
	 * cannot resize at all) */
	ret = 0;
	if ((uint32_t)srq_max_recv_dto > srq->srq->max_wr) {
		attr.max_wr = (uint32_t)srq_max_recv_dto;
		ret = openrdma_srq_modify(srq->srq, &attr, OPENRDMA_SRQ_MAX_WR);
		if (!ret)
			ret = datp_rq_grow(&srq->rq, srq->srq->max_wr);
	}
	pthread_mutex_unlock(&srq->rq.lock);
	if (ret)
		return DATP_ERR(ret, DAT_RESOURCE_SRQ, "srq_modify");
	if (srq->low_watermark > srq_max_recv_dto)
		srq->low_watermark = srq_max_recv_dto;
	return DAT_SUCCESS;
}

DAT_RETURN datp_srq_set_lw(DAT_SRQ_HANDLE srq_handle, DAT_COUNT low_watermark)
{
	struct datp_srq *srq = datp_srq_get(srq_handle);
	struct openrdma_srq_attr attr = { 0 };
	int ret;

	if (!srq)
		return DATP_HANDLE(DAT_INVALID_HANDLE_SRQ, "srq %p",
				   srq_handle);
	if (!(srq->obj.ia->dev_attr.device_cap_flags &
	      OPENRDMA_DEVICE_SRQ_LIMIT))
		return DATP_ERR(-OPENRDMA_EOPNOTSUPP, DAT_NO_SUBTYPE,
				"%s has no SRQ limit event",
				srq->obj.ia->entry->iface);
	if (low_watermark < 0 || (uint32_t)low_watermark > srq->srq->max_wr)
		return DATP_ARG(DAT_INVALID_ARG2, "low_watermark %d",
				low_watermark);
	/* 0 disarms; otherwise one event when fewer receives are posted */
	attr.srq_limit = (uint32_t)low_watermark;
	ret = openrdma_srq_modify(srq->srq, &attr, OPENRDMA_SRQ_LIMIT);
	if (ret)
		return DATP_ERR(ret, DAT_NO_SUBTYPE, "srq_modify");
	srq->low_watermark = low_watermark;
	return DAT_SUCCESS;
}

void datp_srq_destroy(struct datp_srq *srq)
{
	struct datp_ia *ia = srq->obj.ia;
	int ret, tries = 0;

	datp_key_del(ia, srq->key);
	do {
		ret = openrdma_srq_destroy(srq->srq);
	} while (datp_busy_retry(ret, &tries));
	if (ret)
		openrdma_warn("dat", "srq_destroy: %s", openrdma_strerror(ret));
	datp_rq_fini(&srq->rq);
	datp_unuse(&srq->pz->obj);
	datp_ia_count(ia, DCNT_IA_SRQ_FREE);
	datp_obj_fini(&srq->obj, DATP_SRQ);
}

DAT_RETURN datp_srq_free(DAT_SRQ_HANDLE srq_handle)
{
	struct datp_srq *srq = datp_srq_get(srq_handle);

	if (!srq)
		return DATP_HANDLE(DAT_INVALID_HANDLE_SRQ, "srq %p",
				   srq_handle);
	if (datp_in_use(&srq->obj))
		return DATP_STATE(DAT_INVALID_STATE_SRQ_IN_USE,
				  "%u EPs use srq %p",
				  atomic_load(&srq->obj.users), srq_handle);
	datp_srq_destroy(srq);
	return DAT_SUCCESS;
}

static bool is_receive(const DAT_EVENT *ev)
{
	unsigned int op = ev->event_data.dto_completion_event_data.operation;

	if (ev->event_number != DAT_DTO_COMPLETION_EVENT &&
	    ev->event_number != (DAT_EVENT_NUMBER)DAT_IB_DTO_EVENT)
		return false;
	return op == DAT_DTO_RECEIVE || op == DAT_DTO_RECEIVE_WITH_INVALIDATE ||
	       op == DAT_IB_DTO_RECV_IMMED || op == DAT_IB_DTO_RECV_MSG_IMMED ||
	       op == DAT_IB_DTO_RECV_UD || op == DAT_IB_DTO_RECV_UD_IMMED;
}

void datp_srq_taken(struct datp_ia *ia, const DAT_EVENT *event)
{
	struct datp_ep *ep;
	DAT_EP_HANDLE handle;

	if (!is_receive(event))
		return;
	handle = event->event_data.dto_completion_event_data.ep_handle;
	pthread_mutex_lock(&ia->lock);
	/* the EP may be gone: look for it among the live ones */
	HASH_FIND(hh_live, ia->live_eps, &handle, sizeof(handle), ep);
	if (ep && ep->srq && atomic_load(&ep->srq_held) > 0) {
		if (atomic_fetch_sub(&ep->srq_held, 1) - 1 < ep->soft_hw)
			atomic_store(&ep->soft_hw_sent, false);
		atomic_fetch_sub(&ep->srq->in_use, 1);
	}
	pthread_mutex_unlock(&ia->lock);
}
