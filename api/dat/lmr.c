/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Local memory regions: memory registered in a PZ.  lmr_context is the
 * region's lkey and rmr_context its rkey.  Memory is cache-coherent on
 * every platform OpenRDMA runs on, so the sync calls only check their
 * segments and order memory.
 */
#include "config.h"

#include <stdlib.h>
#include <utlist.h>

#include <openrdma/errno.h>
#include <openrdma/log.h>

#include "api/dat/provider.h"
#include "api/dat/slots.h"
#include "core/core.h"

#define PRIV_ALL                               \
	((unsigned int)DAT_MEM_PRIV_ALL_FLAG | \
	 (unsigned int)DAT_IB_MEM_PRIV_REMOTE_ATOMIC)

struct datp_lmr *datp_lmr_get(DAT_LMR_HANDLE handle)
{
	return (struct datp_lmr *)datp_obj_get(handle, DATP_LMR);
}

int datp_mem_access(DAT_MEM_PRIV_FLAGS priv, DAT_VA_TYPE va_type)
{
	int access = 0;

	/* InfiniBand requires local write for remote write and atomics */
	if (priv &
	    (DAT_MEM_PRIV_LOCAL_WRITE_FLAG | DAT_MEM_PRIV_REMOTE_WRITE_FLAG |
	     DAT_IB_MEM_PRIV_REMOTE_ATOMIC))
		access |= OPENRDMA_ACCESS_LOCAL_WRITE;
	if (priv & DAT_MEM_PRIV_REMOTE_WRITE_FLAG)
		access |= OPENRDMA_ACCESS_REMOTE_WRITE;
	if (priv & DAT_MEM_PRIV_REMOTE_READ_FLAG)
		access |= OPENRDMA_ACCESS_REMOTE_READ;
	if (priv & DAT_IB_MEM_PRIV_REMOTE_ATOMIC)
		access |= OPENRDMA_ACCESS_REMOTE_ATOMIC;
	if (va_type == DAT_VA_TYPE_ZB)
		access |= OPENRDMA_ACCESS_ZERO_BASED;
	return access;
}

/* Where the region to register starts, by memory type. */
static DAT_RETURN region_addr(DAT_MEM_TYPE mem_type,
			      const DAT_REGION_DESCRIPTION *region,
			      DAT_VLEN length, void **addr_out)
{
	struct datp_lmr *src;

	switch (mem_type) {
	case DAT_MEM_TYPE_VIRTUAL:
		*addr_out = region->for_va;
		return DAT_SUCCESS;
	case DAT_MEM_TYPE_SHARED_VIRTUAL:
		/* the cookie only names the sharing; the memory is mapped */
		*addr_out = region->for_shared_memory.virtual_address;
		return DAT_SUCCESS;
	case DAT_MEM_TYPE_LMR:
		src = datp_lmr_get(region->for_lmr_handle);
		if (!src)
			return DATP_HANDLE(DAT_INVALID_HANDLE_LMR,
					   "region_description: LMR %p",
					   region->for_lmr_handle);
		if (length > src->mr->length)
			return DATP_ARG(DAT_INVALID_ARG4,
					"length %llu > the LMR's %zu",
					(unsigned long long)length,
					src->mr->length);
		*addr_out = src->mr->addr;
		return DAT_SUCCESS;
	}
	return DATP_ARG(DAT_INVALID_ARG2, "mem_type 0x%x", mem_type);
}

DAT_RETURN
datp_lmr_create(DAT_IA_HANDLE ia_handle, DAT_MEM_TYPE mem_type,
		DAT_REGION_DESCRIPTION region, DAT_VLEN length,
		DAT_PZ_HANDLE pz_handle, DAT_MEM_PRIV_FLAGS privileges,
		DAT_VA_TYPE va_type, DAT_LMR_HANDLE *lmr_handle,
		DAT_LMR_CONTEXT *lmr_context, DAT_RMR_CONTEXT *rmr_context,
		DAT_VLEN *registered_length, DAT_VADDR *registered_address)
{
	struct datp_ia *ia = datp_ia_get(ia_handle);
	struct datp_pz *pz = datp_pz_get(pz_handle);
	struct datp_lmr *lmr;
	DAT_RETURN dret;
	void *addr = NULL;
	int access, ret;

	if (!ia)
		return DATP_HANDLE(DAT_INVALID_HANDLE_IA, "ia %p", ia_handle);
	dret = region_addr(mem_type, &region, length, &addr);
	if (dret != DAT_SUCCESS)
		return dret;
	if (!pz || pz->obj.ia != ia)
		return DATP_HANDLE(DAT_INVALID_HANDLE_PZ, "pz %p", pz_handle);
	if ((unsigned int)privileges & ~PRIV_ALL)
		return DATP_ARG(DAT_INVALID_ARG6, "privileges 0x%x",
				privileges);
	if (va_type != DAT_VA_TYPE_VA && va_type != DAT_VA_TYPE_ZB)
		return DATP_ARG(DAT_INVALID_ARG7, "va_type 0x%x", va_type);
	if (va_type == DAT_VA_TYPE_ZB &&
	    !(ia->dev_attr.device_cap_flags & OPENRDMA_DEVICE_ZERO_BASED))
		return DATP_ERR(-OPENRDMA_EOPNOTSUPP, DAT_NO_SUBTYPE,
				"zero-based regions on %s", ia->entry->iface);
	if (!lmr_handle)
		return DATP_ARG(DAT_INVALID_ARG8, "lmr_handle: NULL");
	if (length > ia->dev_attr.max_mr_size)
		return DATP_ERR(-OPENRDMA_ENOMEM, DAT_RESOURCE_MEMORY_REGION,
				"length %llu > max_mr_size %llu",
				(unsigned long long)length,
				(unsigned long long)ia->dev_attr.max_mr_size);

	/* remote atomic access grants nothing on a device without atomics */
	access = core_mr_access_fit(&ia->dev_attr,
				    datp_mem_access(privileges, va_type));

	lmr = calloc(1, sizeof(*lmr));
	if (!lmr)
		return datp_ret(-OPENRDMA_ENOMEM, DAT_RESOURCE_MEMORY);
	ret = openrdma_mr_reg(pz->pd, addr, length, access, &lmr->mr);
	if (ret) {
		free(lmr);
		return DATP_ERR(ret, DAT_RESOURCE_MEMORY_REGION,
				"mr_reg %p length %llu", addr,
				(unsigned long long)length);
	}
	lmr->pz = pz;
	lmr->param.ia_handle = ia;
	lmr->param.mem_type = mem_type;
	lmr->param.region_desc = region;
	lmr->param.length = length;
	lmr->param.pz_handle = pz;
	lmr->param.mem_priv = privileges;
	lmr->param.va_type = va_type;
	lmr->param.lmr_context = lmr->mr->lkey;
	lmr->param.rmr_context = lmr->mr->rkey;
	lmr->param.registered_size = length;
	lmr->param.registered_address =
		va_type == DAT_VA_TYPE_ZB ? 0 : (DAT_VADDR)(uintptr_t)addr;
	ret = datp_obj_init(&lmr->obj, ia, DATP_LMR);
	if (ret) {
		openrdma_mr_dereg(lmr->mr);
		free(lmr);
		return datp_ret(ret, DAT_RESOURCE_MEMORY);
	}
	datp_use(&pz->obj);
	datp_ia_count(ia, DCNT_IA_LMR_CREATE);

	*lmr_handle = lmr;
	if (lmr_context)
		*lmr_context = lmr->param.lmr_context;
	if (rmr_context)
		*rmr_context = lmr->param.rmr_context;
	if (registered_length)
		*registered_length = lmr->param.registered_size;
	if (registered_address)
		*registered_address = lmr->param.registered_address;
	return DAT_SUCCESS;
}

DAT_RETURN datp_lmr_query(DAT_LMR_HANDLE lmr_handle, DAT_LMR_PARAM_MASK mask,
			  DAT_LMR_PARAM *param)
{
	struct datp_lmr *lmr = datp_lmr_get(lmr_handle);

	if (!lmr)
		return DATP_HANDLE(DAT_INVALID_HANDLE_LMR, "lmr %p",
				   lmr_handle);
	if ((unsigned int)mask & ~(unsigned int)DAT_LMR_FIELD_ALL)
		return DATP_ARG(DAT_INVALID_ARG2, "lmr_param_mask 0x%x", mask);
	if (!param)
		return DATP_ARG(DAT_INVALID_ARG3, "lmr_param: NULL");
	*param = lmr->param;
	return DAT_SUCCESS;
}

/* The LMR is gone once its region is deregistered. */
static void lmr_fini(struct datp_lmr *lmr)
{
	datp_unuse(&lmr->pz->obj);
	datp_ia_count(lmr->obj.ia, DCNT_IA_LMR_FREE);
	datp_obj_fini(&lmr->obj, DATP_LMR);
}

void datp_lmr_destroy(struct datp_lmr *lmr)
{
	int ret = openrdma_mr_dereg(lmr->mr);

	if (ret)
		openrdma_warn("dat", "mr_dereg: %s", openrdma_strerror(ret));
	lmr_fini(lmr);
}

DAT_RETURN datp_lmr_free(DAT_LMR_HANDLE lmr_handle)
{
	struct datp_lmr *lmr = datp_lmr_get(lmr_handle);
	int ret;

	if (!lmr)
		return DATP_HANDLE(DAT_INVALID_HANDLE_LMR, "lmr %p",
				   lmr_handle);
	if (datp_in_use(&lmr->obj))
		return DATP_STATE(DAT_INVALID_STATE_LMR_IN_USE,
				  "RMRs are bound to the LMR");
	ret = openrdma_mr_dereg(lmr->mr);
	if (ret)
		return DATP_ERR(ret, DAT_INVALID_STATE_LMR_IN_USE, "mr_dereg");
	lmr_fini(lmr);
	return DAT_SUCCESS;
}

/* Every segment lies in a region of the IA, named by its lmr_context. */
static DAT_RETURN segments_check(struct datp_ia *ia, const DAT_LMR_TRIPLET *seg,
				 DAT_VLEN n, const char *fn)
{
	struct datp_obj *obj;
	struct datp_lmr *lmr;
	uintptr_t start, end;
	DAT_VLEN i;
	bool found;

	if (n && !seg)
		return datp_fail(-OPENRDMA_EINVAL, DAT_INVALID_ARG2, fn,
				 "local_segments: NULL, %llu segments",
				 (unsigned long long)n);
	for (i = 0; i < n; i++) {
		found = false;
		pthread_mutex_lock(&ia->lock);
		DL_FOREACH (ia->objs[DATP_LMR], obj) {
			lmr = (struct datp_lmr *)obj;
			start = (uintptr_t)lmr->mr->addr;
			end = start + lmr->mr->length;
			if (lmr->mr->lkey == seg[i].lmr_context &&
			    seg[i].virtual_address >= start &&
			    seg[i].virtual_address + seg[i].segment_length <=
				    end) {
				found = true;
				break;
			}
		}
		pthread_mutex_unlock(&ia->lock);
		if (!found)
			return datp_fail(
				-OPENRDMA_EINVAL, DAT_INVALID_ARG2, fn,
				"segment %llu: [0x%llx, +%u) not in "
				"LMR context 0x%x",
				(unsigned long long)i,
				(unsigned long long)seg[i].virtual_address,
				seg[i].segment_length, seg[i].lmr_context);
	}
	return DAT_SUCCESS;
}

static DAT_RETURN lmr_sync(DAT_IA_HANDLE ia_handle,
			   const DAT_LMR_TRIPLET *segments, DAT_VLEN n,
			   const char *fn)
{
	struct datp_ia *ia = datp_ia_get(ia_handle);
	DAT_RETURN ret;

	if (!ia)
		return datp_fail(-OPENRDMA_EBADHANDLE, DAT_INVALID_HANDLE_IA,
				 fn, "ia %p", ia_handle);
	ret = segments_check(ia, segments, n, fn);
	if (ret != DAT_SUCCESS)
		return ret;
	/* coherent memory: only order the CPU's accesses against the NIC's */
	atomic_thread_fence(memory_order_seq_cst);
	return DAT_SUCCESS;
}

DAT_RETURN datp_lmr_sync_rdma_read(DAT_IA_HANDLE ia_handle,
				   const DAT_LMR_TRIPLET *local_segments,
				   DAT_VLEN num_segments)
{
	return lmr_sync(ia_handle, local_segments, num_segments, __func__);
}

DAT_RETURN datp_lmr_sync_rdma_write(DAT_IA_HANDLE ia_handle,
				    const DAT_LMR_TRIPLET *local_segments,
				    DAT_VLEN num_segments)
{
	return lmr_sync(ia_handle, local_segments, num_segments, __func__);
}
