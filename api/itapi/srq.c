/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Shared receive queues: the core's SRQ.  The low watermark is the SRQ
 * limit: once the posted receives fall below it, the IA's affiliated
 * async SEVD gets IT_ASYNC_AFF_SRQ_LOW_WATERMARK (evd.c), and the
 * watermark is disarmed until it_srq_modify() sets it again.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "api/itapi/itapi.h"
#include "core/export.h"

static struct itapi_srq *to_srq(it_srq_handle_t h)
{
	return (struct itapi_srq *)h;
}

OPENRDMA_EXPORT it_status_t it_srq_create(it_pz_handle_t pz_handle,
					  size_t max_recv_segments,
					  size_t max_recv_dtos,
					  it_srq_handle_t *srq_handle)
{
	struct itapi_pz *pz = (struct itapi_pz *)pz_handle;
	struct openrdma_srq_init_attr init;
	const struct openrdma_device_attr *dev;
	struct itapi_srq *srq;
	int ret;

	if (!itapi_valid(pz, IT_HANDLE_TYPE_PZ)) {
		itapi_arg_err("it_srq_create", "pz_handle", "not a PZ");
		return IT_ERR_INVALID_PZ;
	}
	dev = &pz->obj.ia->dev;
	if (!(dev->device_cap_flags & OPENRDMA_DEVICE_SRQ))
		return IT_ERR_SRQ_NOT_SUPPORTED;
	if (!max_recv_dtos || max_recv_dtos > (size_t)dev->max_srq_wr) {
		itapi_arg_err("it_srq_create", "max_recv_dtos", "%zu",
			      max_recv_dtos);
		return IT_ERR_INVALID_SRQ_SIZE;
	}
	if (!max_recv_segments || max_recv_segments > ITAPI_MAX_SGE ||
	    max_recv_segments > (size_t)dev->max_srq_sge) {
		itapi_arg_err("it_srq_create", "max_recv_segments", "%zu",
			      max_recv_segments);
		return IT_ERR_RESOURCE_RSEG;
	}
	if (!srq_handle) {
		itapi_arg_err("it_srq_create", "srq_handle", "NULL");
		return IT_ERR_FAULT;
	}

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return IT_ERR_RESOURCES;
	srq->pz = pz;
	memset(&init, 0, sizeof(init));
	/* the async converter names the SRQ by this */
	init.srq_context = srq;
	init.attr.max_wr = (uint32_t)max_recv_dtos;
	init.attr.max_sge = (uint32_t)max_recv_segments;
	ret = openrdma_srq_create(pz->pd, &init, &srq->srq);
	if (ret)
		goto err_free;
	srq->max_recv_dtos = srq->srq->max_wr;
	srq->max_recv_segs = max_recv_segments;
	ret = itapi_rslots_init(&srq->slots, srq->srq->max_wr);
	if (ret)
		goto err_srq;
	ret = itapi_obj_init(&srq->obj, IT_HANDLE_TYPE_SRQ, pz->obj.ia);
	if (ret)
		goto err_slots;
	itapi_obj_get(&pz->obj);
	*srq_handle = (it_srq_handle_t)srq;
	return IT_SUCCESS;

err_slots:
	itapi_rslots_fini(&srq->slots);
err_srq:
	openrdma_srq_destroy(srq->srq);
err_free:
	free(srq);
	return itapi_status(ret, IT_ERR_INVALID_SRQ_SIZE);
}

#define SRQ_MODIFIABLE (IT_SRQ_PARAM_MAX_RECV_DTO | IT_SRQ_PARAM_LOW_WATERMARK)
#define SRQ_QUERYABLE 0x3fu

OPENRDMA_EXPORT it_status_t it_srq_modify(it_srq_handle_t srq_handle,
					  it_srq_param_mask_t mask,
					  const it_srq_param_t *params)
{
	struct itapi_srq *srq = to_srq(srq_handle);
	unsigned int m = (unsigned int)mask;
	struct openrdma_srq_attr attr;
	int cmask = 0, ret;

	if (!itapi_valid(srq, IT_HANDLE_TYPE_SRQ)) {
		itapi_arg_err("it_srq_modify", "srq_handle", "not an SRQ");
		return IT_ERR_INVALID_SRQ;
	}
	if (m & IT_SRQ_PARAM_ALL)
		m = SRQ_MODIFIABLE;
	if (!m || (m & ~(unsigned int)SRQ_MODIFIABLE)) {
		itapi_arg_err("it_srq_modify", "mask", "0x%x", m);
		return IT_ERR_INVALID_MASK;
	}
	if (!params) {
		itapi_arg_err("it_srq_modify", "params", "NULL");
		return IT_ERR_FAULT;
	}
	memset(&attr, 0, sizeof(attr));
	if (m & IT_SRQ_PARAM_MAX_RECV_DTO) {
		/* receive slots are numbered at creation: only that many */
		if (!params->max_recv_dtos ||
		    params->max_recv_dtos > srq->slots.num)
			return IT_ERR_INVALID_SRQ_SIZE;
		attr.max_wr = (uint32_t)params->max_recv_dtos;
		cmask |= OPENRDMA_SRQ_MAX_WR;
	}
	if (m & IT_SRQ_PARAM_LOW_WATERMARK) {
		if (params->low_watermark > srq->max_recv_dtos)
			return IT_ERR_INVALID_WATERMARK;
		attr.srq_limit = (uint32_t)params->low_watermark;
		cmask |= OPENRDMA_SRQ_LIMIT;
	}
	ret = openrdma_srq_modify(srq->srq, &attr, cmask);
	if (ret)
		return ret == -OPENRDMA_EINVAL ?
			       IT_ERR_INVALID_SRQ_SIZE :
			       itapi_status(ret, IT_ERR_INVALID_SRQ);
	if (m & IT_SRQ_PARAM_MAX_RECV_DTO)
		srq->max_recv_dtos = srq->srq->max_wr;
	if (m & IT_SRQ_PARAM_LOW_WATERMARK)
		srq->low_watermark = params->low_watermark;
	return IT_SUCCESS;
}

OPENRDMA_EXPORT it_status_t it_srq_query(it_srq_handle_t srq_handle,
					 it_srq_param_mask_t mask,
					 it_srq_param_t *params)
{
	struct itapi_srq *srq = to_srq(srq_handle);
	unsigned int m = (unsigned int)mask;
	struct openrdma_srq_attr attr;
	it_srq_param_t p;
	int ret;

	if (!itapi_valid(srq, IT_HANDLE_TYPE_SRQ)) {
		itapi_arg_err("it_srq_query", "srq_handle", "not an SRQ");
		return IT_ERR_INVALID_SRQ;
	}
	if (m & ~SRQ_QUERYABLE) {
		itapi_arg_err("it_srq_query", "mask", "0x%x", m);
		return IT_ERR_INVALID_MASK;
	}
	if (!params) {
		itapi_arg_err("it_srq_query", "params", "NULL");
		return IT_ERR_FAULT;
	}
	if (m & IT_SRQ_PARAM_ALL)
		m = SRQ_QUERYABLE;
	ret = openrdma_srq_query(srq->srq, &attr);
	if (ret)
		return itapi_status(ret, IT_ERR_INVALID_SRQ);
	p = *params;
	if (m & IT_SRQ_PARAM_IA)
		p.ia = (it_ia_handle_t)srq->obj.ia;
	if (m & IT_SRQ_PARAM_PZ)
		p.pz = (it_pz_handle_t)srq->pz;
	if (m & IT_SRQ_PARAM_MAX_RECV_DTO)
		p.max_recv_dtos = attr.max_wr;
	if (m & IT_SRQ_PARAM_MAX_RECV_SEG)
		p.max_recv_segs = srq->max_recv_segs;
	/* 0 once the watermark fired: it is disarmed until set again */
	if (m & IT_SRQ_PARAM_LOW_WATERMARK)
		p.low_watermark = attr.srq_limit;
	*params = p;
	return IT_SUCCESS;
}

void itapi_srq_destroy(struct itapi_srq *srq)
{
	int ret;

	itapi_obj_fini(&srq->obj);
	ret = openrdma_srq_destroy(srq->srq);
	if (ret)
		openrdma_warn(ITAPI_LOG, "srq_destroy: %s",
			      openrdma_strerror(ret));
	itapi_rslots_fini(&srq->slots);
	itapi_obj_put(&srq->pz->obj);
	free(srq);
}

OPENRDMA_EXPORT it_status_t it_srq_free(it_srq_handle_t srq_handle)
{
	struct itapi_srq *srq = to_srq(srq_handle);

	if (!itapi_valid(srq, IT_HANDLE_TYPE_SRQ)) {
		itapi_arg_err("it_srq_free", "srq_handle", "not an SRQ");
		return IT_ERR_INVALID_SRQ;
	}
	if (itapi_obj_users(&srq->obj))
		return IT_ERR_SRQ_BUSY;
	itapi_srq_destroy(srq);
	return IT_SUCCESS;
}
