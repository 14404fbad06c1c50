/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Remote memory regions: memory windows.  dat_rmr_create() makes a type 1
 * window (PZ scope), dat_rmr_create_for_ep() a type 2 window (EP scope);
 * dat_rmr_bind() posts the bind on the EP's send queue and returns the
 * window's new rmr_context at once, as DAT requires.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <utlist.h>

#include <openrdma/errno.h>
#include <openrdma/log.h>

#include "api/dat/provider.h"
#include "api/dat/slots.h"

#define BIND_PRIV                              \
	((unsigned int)DAT_MEM_PRIV_ALL_FLAG | \
	 (unsigned int)DAT_IB_MEM_PRIV_REMOTE_ATOMIC)

static struct datp_rmr *rmr_get(DAT_RMR_HANDLE handle)
{
	return (struct datp_rmr *)datp_obj_get(handle, DATP_RMR);
}

struct datp_rmr *datp_rmr_find(struct datp_ia *ia, DAT_RMR_CONTEXT rmr_context)
{
	struct datp_rmr *found = NULL;
	struct datp_obj *obj;

	pthread_mutex_lock(&ia->lock);
	DL_FOREACH (ia->objs[DATP_RMR], obj) {
		if (((struct datp_rmr *)obj)->key == rmr_context) {
			found = (struct datp_rmr *)obj;
			break;
		}
	}
	pthread_mutex_unlock(&ia->lock);
	return found;
}

static DAT_RETURN rmr_create(DAT_PZ_HANDLE pz_handle,
			     enum openrdma_mw_type type,
			     DAT_RMR_HANDLE *rmr_handle, const char *fn)
{
	struct datp_pz *pz = datp_pz_get(pz_handle);
	uint32_t cap = type == OPENRDMA_MW_TYPE_1 ? OPENRDMA_DEVICE_MW_TYPE1 :
						    OPENRDMA_DEVICE_MW_TYPE2;
	struct datp_rmr *rmr;
	struct datp_ia *ia;
	int ret;

	if (!pz)
		return datp_fail(-OPENRDMA_EBADHANDLE, DAT_INVALID_HANDLE_PZ,
				 fn, "pz %p", pz_handle);
	ia = pz->obj.ia;
	if (!rmr_handle)
		return datp_fail(-OPENRDMA_EINVAL, DAT_INVALID_ARG2, fn,
				 "rmr_handle: NULL");
	if (!(ia->dev_attr.device_cap_flags & cap))
		return datp_fail(-OPENRDMA_EOPNOTSUPP, DAT_NO_SUBTYPE, fn,
				 "%s has no type %d memory windows",
				 ia->entry->iface, (int)type);
	rmr = calloc(1, sizeof(*rmr));
	if (!rmr)
		return datp_ret(-OPENRDMA_ENOMEM, DAT_RESOURCE_MEMORY);
	ret = openrdma_mw_alloc(pz->pd, type, &rmr->mw);
	if (ret) {
		free(rmr);
		return datp_fail(ret, DAT_RESOURCE_MEMORY_REGION, fn,
				 "mw_alloc");
	}
	rmr->pz = pz;
	rmr->key = rmr->mw->rkey;
	rmr->scope = type == OPENRDMA_MW_TYPE_1 ? DAT_RMR_SCOPE_PZ :
						  DAT_RMR_SCOPE_EP;
	rmr->va_type = DAT_VA_TYPE_VA;
	ret = datp_obj_init(&rmr->obj, ia, DATP_RMR);
	if (ret) {
		openrdma_mw_dealloc(rmr->mw);
		free(rmr);
		return datp_ret(ret, DAT_RESOURCE_MEMORY);
	}
	datp_use(&pz->obj);
	datp_ia_count(ia, DCNT_IA_RMR_CREATE);
	*rmr_handle = rmr;
	return DAT_SUCCESS;
}

DAT_RETURN datp_rmr_create(DAT_PZ_HANDLE pz_handle, DAT_RMR_HANDLE *rmr_handle)
{
	return rmr_create(pz_handle, OPENRDMA_MW_TYPE_1, rmr_handle, __func__);
}

DAT_RETURN datp_rmr_create_for_ep(DAT_PZ_HANDLE pz_handle,
				  DAT_RMR_HANDLE *rmr_handle)
{
	return rmr_create(pz_handle, OPENRDMA_MW_TYPE_2, rmr_handle, __func__);
}

DAT_RETURN datp_rmr_query(DAT_RMR_HANDLE rmr_handle, DAT_RMR_PARAM_MASK mask,
			  DAT_RMR_PARAM *param)
{
	struct datp_rmr *rmr = rmr_get(rmr_handle);
	DAT_RMR_PARAM p;

	if (!rmr)
		return DATP_HANDLE(DAT_INVALID_HANDLE_RMR, "rmr %p",
				   rmr_handle);
	if ((unsigned int)mask & ~(unsigned int)DAT_RMR_FIELD_ALL)
		return DATP_ARG(DAT_INVALID_ARG2, "rmr_param_mask 0x%x", mask);
	if (!param)
		return DATP_ARG(DAT_INVALID_ARG3, "rmr_param: NULL");
	memset(&p, 0, sizeof(p));
	p.ia_handle = rmr->obj.ia;
	p.pz_handle = rmr->pz;
	p.lmr_triplet = rmr->triplet;
	p.mem_priv = rmr->priv;
	p.rmr_context = rmr->key;
	p.rmr_scope = rmr->scope;
	p.va_type = rmr->va_type;
	*param = p;
	return DAT_SUCCESS;
}

/* An unbind: no LMR, or an empty segment. */
static bool bind_is_unbind(struct datp_lmr *lmr, const DAT_LMR_TRIPLET *t)
{
	return !lmr || !t || !t->segment_length;
}

DAT_RETURN datp_rmr_bind(DAT_RMR_HANDLE rmr_handle, DAT_LMR_HANDLE lmr_handle,
			 const DAT_LMR_TRIPLET *lmr_triplet,
			 DAT_MEM_PRIV_FLAGS mem_priv, DAT_VA_TYPE va_type,
			 DAT_EP_HANDLE ep_handle, DAT_RMR_COOKIE user_cookie,
			 DAT_COMPLETION_FLAGS completion_flags,
			 DAT_RMR_CONTEXT *rmr_context)
{
	struct datp_rmr *rmr = rmr_get(rmr_handle);
	struct datp_lmr *lmr = NULL;
	struct openrdma_send_wr wr;
	struct datp_slot slot;
	struct datp_ep *ep;
	uintptr_t start;
	DAT_RETURN ret;
	uint32_t key;
	bool unbind;

	if (!rmr)
		return DATP_HANDLE(DAT_INVALID_HANDLE_RMR, "rmr %p",
				   rmr_handle);
	if (lmr_handle) {
		lmr = datp_lmr_get(lmr_handle);
		if (!lmr || lmr->obj.ia != rmr->obj.ia)
			return DATP_HANDLE(DAT_INVALID_HANDLE_LMR, "lmr %p",
					   lmr_handle);
	}
	ep = datp_ep_get(ep_handle);
	if (!ep || ep->obj.ia != rmr->obj.ia)
		return DATP_HANDLE(DAT_INVALID_HANDLE_EP, "ep %p", ep_handle);
	if ((unsigned int)mem_priv & ~BIND_PRIV)
		return DATP_ARG(DAT_INVALID_ARG4, "mem_priv 0x%x", mem_priv);
	if (va_type != DAT_VA_TYPE_VA && va_type != DAT_VA_TYPE_ZB)
		return DATP_ARG(DAT_INVALID_ARG5, "va_type 0x%x", va_type);
	if ((unsigned int)completion_flags &
	    ~(unsigned int)(DAT_COMPLETION_SUPPRESS_FLAG |
			    DAT_COMPLETION_UNSIGNALLED_FLAG |
			    DAT_COMPLETION_BARRIER_FENCE_FLAG))
		return DATP_ARG(DAT_INVALID_ARG8, "completion_flags 0x%x",
				completion_flags);
	if (!rmr_context)
		return DATP_ARG(DAT_INVALID_ARG9, "rmr_context: NULL");

	unbind = bind_is_unbind(lmr, lmr_triplet);
	if (!unbind) {
		start = (uintptr_t)lmr->mr->addr;
		if (lmr_triplet->lmr_context != lmr->mr->lkey ||
		    lmr_triplet->virtual_address < start ||
		    lmr_triplet->virtual_address + lmr_triplet->segment_length >
			    start + lmr->mr->length)
			return DATP_ARG(DAT_INVALID_ARG3,
					"lmr_triplet [0x%llx, +%u) context "
					"0x%x outside the LMR",
					(unsigned long long)
						lmr_triplet->virtual_address,
					lmr_triplet->segment_length,
					lmr_triplet->lmr_context);
		if (lmr->pz != rmr->pz || ep->pz != rmr->pz)
			return DATP_ERR(-OPENRDMA_EFAULT, DAT_NO_SUBTYPE,
					"RMR, LMR and EP in different PZs");
		/* a window grants no more than its region */
		if (((mem_priv & DAT_MEM_PRIV_REMOTE_READ_FLAG) &&
		     !(lmr->param.mem_priv & DAT_MEM_PRIV_REMOTE_READ_FLAG)) ||
		    ((mem_priv & DAT_MEM_PRIV_REMOTE_WRITE_FLAG) &&
		     !(lmr->param.mem_priv & DAT_MEM_PRIV_REMOTE_WRITE_FLAG)))
			return DATP_ERR(-OPENRDMA_EACCES, DAT_NO_SUBTYPE,
					"mem_priv 0x%x beyond the LMR's 0x%x",
					mem_priv, lmr->param.mem_priv);
	}
	if (rmr->scope == DAT_RMR_SCOPE_EP && rmr->ep && rmr->ep != ep &&
	    !unbind)
		return DATP_STATE(DAT_INVALID_STATE_EP_NOTREADY,
				  "window bound through another EP");
	ret = datp_ep_can_send(ep, __func__);
	if (ret != DAT_SUCCESS)
		return ret;

	key = openrdma_inc_rkey(rmr->key);
	memset(&wr, 0, sizeof(wr));
	wr.opcode = OPENRDMA_WR_BIND_MW;
	wr.bind_mw.mw = rmr->mw;
	wr.bind_mw.rkey = key;
	if (!unbind) {
		wr.bind_mw.bind_info.mr = lmr->mr;
		wr.bind_mw.bind_info.addr = lmr_triplet->virtual_address;
		wr.bind_mw.bind_info.length = lmr_triplet->segment_length;
		wr.bind_mw.bind_info.mw_access_flags =
			(unsigned int)datp_mem_access(mem_priv, va_type) &
			(OPENRDMA_ACCESS_REMOTE_READ |
			 OPENRDMA_ACCESS_REMOTE_WRITE |
			 OPENRDMA_ACCESS_REMOTE_ATOMIC |
			 OPENRDMA_ACCESS_ZERO_BASED);
	}
	memset(&slot, 0, sizeof(slot));
	slot.cookie = user_cookie;
	slot.op = DAT_DTO_BIND_MW;
	slot.bind = 1;
	slot.rmr = rmr;
	slot.rmr_context = key;
	ret = datp_post_sq(ep, &wr, NULL, 0, &slot, completion_flags, __func__);
	if (ret != DAT_SUCCESS)
		return ret;

	/* what dat_rmr_query reports from now on */
	if (rmr->lmr)
		datp_unuse(&rmr->lmr->obj);
	rmr->key = key;
	rmr->lmr = unbind ? NULL : lmr;
	if (rmr->lmr)
		datp_use(&lmr->obj);
	if (unbind)
		memset(&rmr->triplet, 0, sizeof(rmr->triplet));
	else
		rmr->triplet = *lmr_triplet;
	rmr->priv = unbind ? DAT_MEM_PRIV_NONE_FLAG : mem_priv;
	rmr->va_type = va_type;
	rmr->ep = unbind ? NULL : ep;
	*rmr_context = key;
	return DAT_SUCCESS;
}

void datp_rmr_destroy(struct datp_rmr *rmr)
{
	int ret = openrdma_mw_dealloc(rmr->mw);

	if (ret)
		openrdma_warn("dat", "mw_dealloc: %s", openrdma_strerror(ret));
	if (rmr->lmr)
		datp_unuse(&rmr->lmr->obj);
	datp_unuse(&rmr->pz->obj);
	datp_ia_count(rmr->obj.ia, DCNT_IA_RMR_FREE);
	datp_obj_fini(&rmr->obj, DATP_RMR);
}

DAT_RETURN datp_rmr_free(DAT_RMR_HANDLE rmr_handle)
{
	struct datp_rmr *rmr = rmr_get(rmr_handle);

	if (!rmr)
		return DATP_HANDLE(DAT_INVALID_HANDLE_RMR, "rmr %p",
				   rmr_handle);
	datp_rmr_destroy(rmr);
	return DAT_SUCCESS;
}
