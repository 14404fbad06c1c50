/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Remote memory regions: memory windows.  A narrow RMR is a type 1
 * window, bound with openrdma_mw_bind() and unbound by a zero-length bind;
 * a wide RMR is a type 2 window, bound by a BIND_MW work request and
 * unbound by LOCAL_INV (or by the peer's send-and-unlink).  Both go
 * through the endpoint's send queue, so their completions are DTO events
 * of its request SEVD.  The key is known when the link is posted.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "api/itapi/itapi.h"
#include "core/export.h"

#define RMR_DTO_FLAGS                                                  \
	(IT_COMPLETION_FLAG | IT_NOTIFY_FLAG | IT_BARRIER_FENCE_FLAG | \
	 IT_UNLINK_FENCE_FLAG | IT_COALESCE_WR_FLAG)

static struct itapi_rmr *to_rmr(it_rmr_handle_t h)
{
	return (struct itapi_rmr *)h;
}

/* Forgets the current link; ia->key_lock held. */
static void rmr_unlinked(struct itapi_ia *ia, struct itapi_rmr *rmr)
{
	rmr->linked = false;
	if (rmr->keyed) {
		HASH_DELETE(key_hh, ia->rmr_keys, rmr);
		rmr->keyed = false;
	}
	if (rmr->lmr) {
		itapi_obj_put(&rmr->lmr->obj);
		rmr->lmr = NULL;
	}
}

it_rmr_handle_t itapi_rmr_invalidated(struct itapi_ia *ia, uint32_t rkey)
{
	struct itapi_rmr *rmr;

	pthread_mutex_lock(&ia->key_lock);
	HASH_FIND(key_hh, ia->rmr_keys, &rkey, sizeof(rkey), rmr);
	if (rmr)
		rmr_unlinked(ia, rmr);
	pthread_mutex_unlock(&ia->key_lock);
	return (it_rmr_handle_t)rmr;
}

void itapi_rmr_link_failed(struct itapi_ia *ia, const void *ptr)
{
	struct itapi_rmr *rmr;

	pthread_mutex_lock(&ia->key_lock);
	HASH_FIND(ptr_hh, ia->rmrs, &ptr, sizeof(ptr), rmr);
	if (rmr)
		rmr_unlinked(ia, rmr);
	pthread_mutex_unlock(&ia->key_lock);
}

static it_status_t rmr_create(const char *fn, it_pz_handle_t pz_handle,
			      it_rmr_type_t type, it_rmr_handle_t *rmr_handle)
{
	struct itapi_pz *pz = (struct itapi_pz *)pz_handle;
	uint32_t caps;
	struct itapi_rmr *rmr;
	struct itapi_ia *ia;
	int ret;

	if (!itapi_valid(pz, IT_HANDLE_TYPE_PZ)) {
		openrdma_dbg(ITAPI_LOG, "%s: arg pz_handle: not a PZ", fn);
		return IT_ERR_INVALID_PZ;
	}
	ia = pz->obj.ia;
	caps = ia->dev.device_cap_flags;
	if (type == IT_RMR_TYPE_DEFAULT)
		type = caps & OPENRDMA_DEVICE_MW_TYPE1 ? IT_RMR_TYPE_NARROW :
							 IT_RMR_TYPE_WIDE;
	if (type != IT_RMR_TYPE_NARROW && type != IT_RMR_TYPE_WIDE) {
		openrdma_dbg(ITAPI_LOG, "%s: arg rmr_type: %d", fn, (int)type);
		return IT_ERR_INVALID_RMR_TYPE;
	}
	if (!rmr_handle) {
		openrdma_dbg(ITAPI_LOG, "%s: arg rmr_handle: NULL", fn);
		return IT_ERR_FAULT;
	}
	if (!(caps & (type == IT_RMR_TYPE_NARROW ? OPENRDMA_DEVICE_MW_TYPE1 :
						   OPENRDMA_DEVICE_MW_TYPE2))) {
		openrdma_dbg(ITAPI_LOG, "%s: no type %d windows here", fn,
			     (int)type);
		return IT_ERR_OP_NOT_SUPPORTED;
	}
	rmr = calloc(1, sizeof(*rmr));
	if (!rmr)
		return IT_ERR_RESOURCES;
	rmr->pz = pz;
	rmr->type = type;
	ret = openrdma_mw_alloc(pz->pd,
				type == IT_RMR_TYPE_NARROW ?
					OPENRDMA_MW_TYPE_1 :
					OPENRDMA_MW_TYPE_2,
				&rmr->mw);
	if (ret)
		goto err_free;
	rmr->rkey = rmr->mw->rkey;
	ret = itapi_obj_init(&rmr->obj, IT_HANDLE_TYPE_RMR, ia);
	if (ret)
		goto err_mw;
	pthread_mutex_lock(&ia->key_lock);
	rmr->self = rmr;
	HASH_ADD(ptr_hh, ia->rmrs, self, sizeof(rmr->self), rmr);
	pthread_mutex_unlock(&ia->key_lock);
	itapi_obj_get(&pz->obj);
	*rmr_handle = (it_rmr_handle_t)rmr;
	return IT_SUCCESS;

err_mw:
	openrdma_mw_dealloc(rmr->mw);
err_free:
	free(rmr);
	return itapi_status(ret, IT_ERR_INVALID_PZ);
}

OPENRDMA_EXPORT it_status_t it_rmr_create10(it_pz_handle_t pz_handle,
					    it_rmr_handle_t *rmr_handle)
{
	return rmr_create("it_rmr_create10", pz_handle, IT_RMR_TYPE_DEFAULT,
			  rmr_handle);
}

OPENRDMA_EXPORT it_status_t it_rmr_create20(it_pz_handle_t pz_handle,
					    it_rmr_type_t rmr_type,
					    it_rmr_handle_t *rmr_handle)
{
	return rmr_create("it_rmr_create20", pz_handle, rmr_type, rmr_handle);
}

/* The endpoint that carries a link or unlink: same IA and PZ. */
static it_status_t rmr_ep_check(const char *fn, const struct itapi_rmr *rmr,
				const struct itapi_ep *ep)
{
	if (!itapi_valid(ep, IT_HANDLE_TYPE_EP) || ep->obj.ia != rmr->obj.ia) {
		openrdma_dbg(ITAPI_LOG, "%s: arg ep_handle: not an EP", fn);
		return IT_ERR_INVALID_EP;
	}
	if (ep->service != IT_RC_SERVICE) {
		openrdma_dbg(ITAPI_LOG, "%s: arg ep_handle: not RC", fn);
		return IT_ERR_INVALID_EP_TYPE;
	}
	if (ep->pz != rmr->pz) {
		openrdma_dbg(ITAPI_LOG, "%s: arg ep_handle: another PZ", fn);
		return IT_ERR_INVALID_PZ;
	}
	return IT_SUCCESS;
}

static it_status_t link_check(struct itapi_rmr *rmr, struct itapi_lmr *lmr,
			      struct itapi_ep *ep, void *addr,
			      it_length_t length, it_addr_mode_t mode,
			      it_mem_priv_t privs, it_dto_flags_t flags)
{
	const struct itapi_ia *ia = rmr->obj.ia;
	uint64_t start = (uint64_t)(uintptr_t)addr, base;
	it_status_t st;

	if (!itapi_valid(lmr, IT_HANDLE_TYPE_LMR) || lmr->obj.ia != ia ||
	    !lmr->mr) {
		itapi_arg_err("it_rmr_link", "lmr_handle", "not a linked LMR");
		return IT_ERR_INVALID_LMR;
	}
	if (lmr->pz != rmr->pz) {
		itapi_arg_err("it_rmr_link", "lmr_handle", "another PZ");
		return IT_ERR_INVALID_PZ;
	}
	st = rmr_ep_check("it_rmr_link", rmr, ep);
	if (st)
		return st;
	if (mode != IT_ADDR_MODE_ABSOLUTE && mode != IT_ADDR_MODE_RELATIVE)
		return IT_ERR_INVALID_ADDR_MODE;
	if (mode == IT_ADDR_MODE_RELATIVE &&
	    !(ia->dev.device_cap_flags & OPENRDMA_DEVICE_ZERO_BASED))
		return IT_ERR_OP_NOT_SUPPORTED;
	if (itapi_privs_to_access(privs) < 0)
		return IT_ERR_INVALID_PRIVS;
	if (itapi_dto_flags(flags, RMR_DTO_FLAGS) < 0)
		return IT_ERR_INVALID_DTO_FLAGS;
	base = (uint64_t)(uintptr_t)lmr->addr;
	if (start < base || start + length < start ||
	    start + length > base + lmr->length) {
		itapi_arg_err("it_rmr_link", "addr", "outside the LMR");
		return IT_ERR_INVALID_LENGTH;
	}
	return IT_SUCCESS;
}

/* What a window grants remotely: the remote privileges of privs. */
static unsigned int mw_access(it_mem_priv_t privs, it_addr_mode_t mode)
{
	unsigned int access =
		(unsigned int)itapi_privs_to_access(privs) &
		(OPENRDMA_ACCESS_REMOTE_WRITE | OPENRDMA_ACCESS_REMOTE_READ |
		 OPENRDMA_ACCESS_REMOTE_ATOMIC);

	if (mode == IT_ADDR_MODE_RELATIVE)
		access |= OPENRDMA_ACCESS_ZERO_BASED;
	return access;
}

OPENRDMA_EXPORT it_status_t
it_rmr_link(it_rmr_handle_t rmr_handle, it_lmr_handle_t lmr_handle, void *addr,
	    it_length_t length, it_addr_mode_t addr_mode, it_mem_priv_t privs,
	    it_ep_handle_t ep_handle, it_dto_cookie_t cookie,
	    it_dto_flags_t dto_flags, it_rmr_context_t *rmr_context)
{
	struct itapi_rmr *rmr = to_rmr(rmr_handle);
	struct itapi_lmr *lmr = (struct itapi_lmr *)lmr_handle;
	struct itapi_ep *ep = to_ep(ep_handle);
	struct openrdma_send_wr wr;
	struct itapi_rmr old;
	struct itapi_ia *ia;
	it_status_t st;
	uint32_t key;
	int ret;

	if (!itapi_valid(rmr, IT_HANDLE_TYPE_RMR)) {
		itapi_arg_err("it_rmr_link", "rmr_handle", "not an RMR");
		return IT_ERR_INVALID_RMR;
	}
	st = link_check(rmr, lmr, ep, addr, length, addr_mode, privs,
			dto_flags);
	if (st)
		return st;
	ia = rmr->obj.ia;

	pthread_mutex_lock(&ia->key_lock);
	/* a wide window must be unlinked before it is linked again */
	if (rmr->type == IT_RMR_TYPE_WIDE && rmr->linked) {
		pthread_mutex_unlock(&ia->key_lock);
		return IT_ERR_INVALID_RMR;
	}
	/* a narrow one is rebound: the old link stands until this posts */
	old = *rmr;
	/* the key the bind gives: same index, the next tag */
	key = openrdma_inc_rkey(rmr->rkey);
	itapi_obj_get(&lmr->obj);
	rmr->lmr = lmr;
	rmr->addr = addr;
	rmr->length = length;
	rmr->privs = privs;
	rmr->addr_mode = addr_mode;
	rmr->rkey = key;
	rmr->linked = true;
	if (rmr->type == IT_RMR_TYPE_WIDE) {
		HASH_ADD(key_hh, ia->rmr_keys, rkey, sizeof(rmr->rkey), rmr);
		rmr->keyed = true;
	}
	pthread_mutex_unlock(&ia->key_lock);

	memset(&wr, 0, sizeof(wr));
	wr.opcode = OPENRDMA_WR_BIND_MW;
	wr.send_flags = (unsigned int)itapi_dto_flags(dto_flags, RMR_DTO_FLAGS);
	wr.bind_mw.mw = rmr->mw;
	wr.bind_mw.rkey = key;
	wr.bind_mw.bind_info.mr = lmr->mr;
	wr.bind_mw.bind_info.addr = (uint64_t)(uintptr_t)addr;
	wr.bind_mw.bind_info.length = length;
	wr.bind_mw.bind_info.mw_access_flags = mw_access(privs, addr_mode);
	ret = itapi_post_sq(ep, &wr, cookie, IT_RMR_LINK_CMPL_EVENT, 0,
			    dto_flags & IT_COMPLETION_FLAG, &rmr->obj);

	pthread_mutex_lock(&ia->key_lock);
	if (ret) {
		/* nothing was posted: the window is as it was */
		if (rmr->keyed)
			HASH_DELETE(key_hh, ia->rmr_keys, rmr);
		if (rmr->lmr)
			itapi_obj_put(&rmr->lmr->obj);
		rmr->lmr = old.lmr;
		rmr->addr = old.addr;
		rmr->length = old.length;
		rmr->privs = old.privs;
		rmr->addr_mode = old.addr_mode;
		rmr->rkey = old.rkey;
		rmr->linked = old.linked;
		rmr->keyed = false;
	} else if (old.lmr) {
		itapi_obj_put(&old.lmr->obj);
	}
	pthread_mutex_unlock(&ia->key_lock);
	if (ret)
		return ret == -OPENRDMA_ENOMEM ?
			       IT_ERR_TOO_MANY_POSTS :
			       itapi_status(ret, IT_ERR_INVALID_EP_STATE);
	if (rmr_context)
		*rmr_context = key;
	return IT_SUCCESS;
}

OPENRDMA_EXPORT it_status_t
it_rmr_bind10(it_rmr_handle_t rmr_handle, it_lmr_handle_t lmr_handle,
	      void *addr, it_length_t length, it_mem_priv_t privs,
	      it_ep_handle_t ep_handle, it_dto_cookie_t cookie,
	      it_dto_flags_t dto_flags, it_rmr_context_t *rmr_context)
{
	return it_rmr_link(rmr_handle, lmr_handle, addr, length,
			   IT_ADDR_MODE_ABSOLUTE, privs, ep_handle, cookie,
			   dto_flags, rmr_context);
}

OPENRDMA_EXPORT it_status_t it_rmr_unlink(it_rmr_handle_t rmr_handle,
					  it_ep_handle_t ep_handle,
					  it_dto_cookie_t cookie,
					  it_dto_flags_t dto_flags)
{
	struct itapi_rmr *rmr = to_rmr(rmr_handle);
	struct itapi_ep *ep = to_ep(ep_handle);
	struct openrdma_send_wr wr;
	struct itapi_ia *ia;
	it_status_t st;
	uint32_t key;
	int ret;

	if (!itapi_valid(rmr, IT_HANDLE_TYPE_RMR)) {
		itapi_arg_err("it_rmr_unlink", "rmr_handle", "not an RMR");
		return IT_ERR_INVALID_RMR;
	}
	st = rmr_ep_check("it_rmr_unlink", rmr, ep);
	if (st)
		return st;
	if (itapi_dto_flags(dto_flags, RMR_DTO_FLAGS) < 0)
		return IT_ERR_INVALID_DTO_FLAGS;
	ia = rmr->obj.ia;
	if (rmr->type == IT_RMR_TYPE_WIDE &&
	    !(ia->dev.device_cap_flags & OPENRDMA_DEVICE_SEND_INV))
		return IT_ERR_OP_NOT_SUPPORTED;
	pthread_mutex_lock(&ia->key_lock);
	if (!rmr->linked) {
		pthread_mutex_unlock(&ia->key_lock);
		return IT_ERR_INVALID_RMR;
	}
	key = rmr->rkey;
	rmr_unlinked(ia, rmr);
	pthread_mutex_unlock(&ia->key_lock);

	memset(&wr, 0, sizeof(wr));
	wr.send_flags = (unsigned int)itapi_dto_flags(dto_flags, RMR_DTO_FLAGS);
	if (rmr->type == IT_RMR_TYPE_WIDE) {
		wr.opcode = OPENRDMA_WR_LOCAL_INV;
		wr.invalidate_rkey = key;
	} else {
		/* a type 1 window is unbound by a bind of length 0 */
		wr.opcode = OPENRDMA_WR_BIND_MW;
		wr.bind_mw.mw = rmr->mw;
		rmr->rkey = openrdma_inc_rkey(key);
	}
	ret = itapi_post_sq(ep, &wr, cookie, IT_RMR_LINK_CMPL_EVENT, 0,
			    dto_flags & IT_COMPLETION_FLAG, &rmr->obj);
	if (ret)
		return ret == -OPENRDMA_ENOMEM ?
			       IT_ERR_TOO_MANY_POSTS :
			       itapi_status(ret, IT_ERR_INVALID_EP_STATE);
	return IT_SUCCESS;
}

#define RMR_QUERYABLE 0x7ffu

OPENRDMA_EXPORT it_status_t it_rmr_query(it_rmr_handle_t rmr_handle,
					 it_rmr_param_mask_t mask,
					 it_rmr_param_t *params)
{
	struct itapi_rmr *rmr = to_rmr(rmr_handle);
	unsigned int m = (unsigned int)mask;
	struct itapi_ia *ia;
	it_rmr_param_t p;

	if (!itapi_valid(rmr, IT_HANDLE_TYPE_RMR)) {
		itapi_arg_err("it_rmr_query", "rmr_handle", "not an RMR");
		return IT_ERR_INVALID_RMR;
	}
	if (m & ~RMR_QUERYABLE) {
		itapi_arg_err("it_rmr_query", "mask", "0x%x", m);
		return IT_ERR_INVALID_MASK;
	}
	if (!params) {
		itapi_arg_err("it_rmr_query", "params", "NULL");
		return IT_ERR_FAULT;
	}
	if (m & IT_RMR_PARAM_ALL)
		m = RMR_QUERYABLE;
	ia = rmr->obj.ia;
	p = *params;
	pthread_mutex_lock(&ia->key_lock);
	if (m & IT_RMR_PARAM_IA)
		p.ia = (it_ia_handle_t)ia;
	if (m & IT_RMR_PARAM_PZ)
		p.pz = (it_pz_handle_t)rmr->pz;
	/* v1.0 programs call this member 'bound': same place, same type */
	if (m & IT_RMR_PARAM_LINKED)
		p.linked = rmr->linked ? IT_TRUE : IT_FALSE;
	if (m & IT_RMR_PARAM_LMR)
		p.lmr = (it_lmr_handle_t)rmr->lmr;
	if (m & IT_RMR_PARAM_ADDR)
		p.addr = rmr->addr;
	if (m & IT_RMR_PARAM_LENGTH)
		p.length = rmr->length;
	if (m & IT_RMR_PARAM_MEM_PRIV)
		p.privs = rmr->privs;
	if (m & IT_RMR_PARAM_RMR_CONTEXT)
		p.rmr_context = rmr->rkey;
	if (m & IT_RMR_PARAM_TYPE)
		p.type = rmr->type;
	if (m & IT_RMR_PARAM_ADDR_MODE)
		p.addr_mode = rmr->addr_mode;
	pthread_mutex_unlock(&ia->key_lock);
	*params = p;
	return IT_SUCCESS;
}

void itapi_rmr_destroy(struct itapi_rmr *rmr)
{
	struct itapi_ia *ia = rmr->obj.ia;
	int ret;

	itapi_obj_fini(&rmr->obj);
	pthread_mutex_lock(&ia->key_lock);
	rmr_unlinked(ia, rmr);
	HASH_DELETE(ptr_hh, ia->rmrs, rmr);
	pthread_mutex_unlock(&ia->key_lock);
	/* a bound window is unbound by its deallocation */
	ret = openrdma_mw_dealloc(rmr->mw);
	if (ret)
		openrdma_warn(ITAPI_LOG, "mw_dealloc: %s",
			      openrdma_strerror(ret));
	itapi_obj_put(&rmr->pz->obj);
	free(rmr);
}

OPENRDMA_EXPORT it_status_t it_rmr_free(it_rmr_handle_t rmr_handle)
{
	struct itapi_rmr *rmr = to_rmr(rmr_handle);

	if (!itapi_valid(rmr, IT_HANDLE_TYPE_RMR)) {
		itapi_arg_err("it_rmr_free", "rmr_handle", "not an RMR");
		return IT_ERR_INVALID_RMR;
	}
	itapi_rmr_destroy(rmr);
	return IT_SUCCESS;
}
