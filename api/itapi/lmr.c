/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Local memory regions: one memory region of the PZ's protection domain
 * each.  Relative addressing is a zero-based MR.  The core has no
 * fast-registration work request, so it_lmr_link() registers the region
 * when called and reports its completion in order on the endpoint's
 * request SEVD (see it_lmr(3)).  I/O buffer lists and it_mem_map() are
 * privileged operations no transport offers.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "api/itapi/itapi.h"
#include "core/core.h"
#include "core/export.h"

#define LMR_FLAGS                                                          \
	(IT_LMR_FLAG_NONE | IT_LMR_FLAG_SHARED | IT_LMR_FLAG_NONCOHERENT | \
	 IT_LMR_FLAG_NON_SHAREABLE)

int itapi_privs_to_access(it_mem_priv_t privs)
{
	int access = 0;

	if (privs & ~(unsigned int)IT_PRIV_ALL)
		return -1;
	/* the device writes for remote writes and atomics too */
	if (privs &
	    (IT_PRIV_LOCAL_WRITE | IT_PRIV_REMOTE_WRITE | IT_PRIV_ATOMIC))
		access |= OPENRDMA_ACCESS_LOCAL_WRITE;
	if (privs & IT_PRIV_REMOTE_WRITE)
		access |= OPENRDMA_ACCESS_REMOTE_WRITE;
	if (privs & IT_PRIV_REMOTE_READ)
		access |= OPENRDMA_ACCESS_REMOTE_READ;
	if (privs & IT_PRIV_ATOMIC)
		access |= OPENRDMA_ACCESS_REMOTE_ATOMIC;
	return access;
}

/* The MR access of an LMR: windows may be linked to any LMR. */
static int lmr_access(const struct itapi_ia *ia, it_mem_priv_t privs,
		      it_addr_mode_t mode)
{
	int access = itapi_privs_to_access(privs);

	if (access < 0)
		return access;
	/* IT_PRIV_ATOMIC grants nothing on a device without atomics */
	access = core_mr_access_fit(&ia->dev, access);
	if (mode == IT_ADDR_MODE_RELATIVE)
		access |= OPENRDMA_ACCESS_ZERO_BASED;
	return access;
}

/*
 * The checks create and link share: it_status_t, IT_SUCCESS when the
 * region can be registered.
 */
static it_status_t region_check(const char *fn, const struct itapi_ia *ia,
				const void *addr, const it_iobl_t *iobl,
				it_length_t length, it_addr_mode_t mode,
				it_mem_priv_t privs)
{
	if (iobl) {
		openrdma_dbg(ITAPI_LOG,
			     "%s: I/O buffer lists are privileged: unsupported",
			     fn);
		return IT_ERR_OP_NOT_SUPPORTED;
	}
	if (mode != IT_ADDR_MODE_ABSOLUTE && mode != IT_ADDR_MODE_RELATIVE) {
		openrdma_dbg(ITAPI_LOG, "%s: arg addr_mode: %d", fn, (int)mode);
		return IT_ERR_INVALID_ADDR_MODE;
	}
	if (mode == IT_ADDR_MODE_RELATIVE &&
	    !(ia->dev.device_cap_flags & OPENRDMA_DEVICE_ZERO_BASED)) {
		openrdma_dbg(ITAPI_LOG, "%s: relative addressing unsupported",
			     fn);
		return IT_ERR_OP_NOT_SUPPORTED;
	}
	if (itapi_privs_to_access(privs) < 0) {
		openrdma_dbg(ITAPI_LOG, "%s: arg privs: 0x%x", fn,
			     (unsigned int)privs);
		return IT_ERR_INVALID_PRIVS;
	}
	if (!addr && length) {
		openrdma_dbg(ITAPI_LOG, "%s: arg addr: NULL", fn);
		return IT_ERR_INVALID_ADDRESS;
	}
	/* a range past the end of the address space is too long too (a
	 * device may allow any length: rxe's limit is 2^64 - 1) */
	if (length > ia->dev.max_mr_size ||
	    (uintptr_t)addr + length < (uintptr_t)addr) {
		openrdma_dbg(ITAPI_LOG, "%s: arg length: %llu", fn,
			     (unsigned long long)length);
		return IT_ERR_RESOURCE_LMR_LENGTH;
	}
	return IT_SUCCESS;
}

static it_status_t flags_check(const char *fn, it_lmr_flag_t flags)
{
	if (flags & ~(unsigned int)LMR_FLAGS) {
		openrdma_dbg(ITAPI_LOG, "%s: arg flags: 0x%x", fn,
			     (unsigned int)flags);
		return IT_ERR_INVALID_FLAGS;
	}
	/* sharing a registration between processes needs the kernel */
	if (flags & IT_LMR_FLAG_SHARED) {
		openrdma_dbg(ITAPI_LOG, "%s: shared LMRs unsupported", fn);
		return IT_ERR_OP_NOT_SUPPORTED;
	}
	return IT_SUCCESS;
}

static it_status_t mr_status(int ret)
{
	if (ret == -OPENRDMA_EFAULT || ret == -OPENRDMA_EINVAL)
		return IT_ERR_INVALID_ADDRESS;
	return itapi_status(ret, IT_ERR_INVALID_ADDRESS);
}

static it_status_t lmr_create(const char *fn, it_pz_handle_t pz_handle,
			      void *addr, it_iobl_t *iobl, it_length_t length,
			      it_addr_mode_t mode, it_mem_priv_t privs,
			      it_lmr_flag_t flags, uint32_t shared_id,
			      it_lmr_handle_t *lmr_handle,
			      it_rmr_context_t *rmr_context)
{
	struct itapi_pz *pz = (struct itapi_pz *)pz_handle;
	struct itapi_lmr *lmr;
	it_status_t st;
	int ret;

	if (!itapi_valid(pz, IT_HANDLE_TYPE_PZ)) {
		openrdma_dbg(ITAPI_LOG, "%s: arg pz_handle: not a PZ", fn);
		return IT_ERR_INVALID_PZ;
	}
	st = region_check(fn, pz->obj.ia, addr, iobl, length, mode, privs);
	if (st)
		return st;
	st = flags_check(fn, flags);
	if (st)
		return st;
	if (!lmr_handle) {
		openrdma_dbg(ITAPI_LOG, "%s: arg lmr_handle: NULL", fn);
		return IT_ERR_FAULT;
	}

	lmr = calloc(1, sizeof(*lmr));
	if (!lmr)
		return IT_ERR_RESOURCES;
	lmr->pz = pz;
	lmr->addr = addr;
	lmr->length = length;
	lmr->addr_mode = mode;
	lmr->privs = privs;
	lmr->flags = flags;
	lmr->shared_id = shared_id;
	ret = openrdma_mr_reg(pz->pd, addr, length,
			      lmr_access(pz->obj.ia, privs, mode), &lmr->mr);
	if (ret)
		goto err_free;
	ret = itapi_obj_init(&lmr->obj, IT_HANDLE_TYPE_LMR, pz->obj.ia);
	if (ret)
		goto err_dereg;
	itapi_obj_get(&pz->obj);

	*lmr_handle = (it_lmr_handle_t)lmr;
	if (rmr_context)
		*rmr_context = lmr->mr->rkey;
	return IT_SUCCESS;

err_dereg:
	openrdma_mr_dereg(lmr->mr);
err_free:
	free(lmr);
	return mr_status(ret);
}

OPENRDMA_EXPORT it_status_t
it_lmr_create10(it_pz_handle_t pz_handle, void *addr, it_length_t length,
		it_mem_priv_t privs, it_lmr_flag_t flags, uint32_t shared_id,
		it_lmr_handle_t *lmr_handle, it_rmr_context_t *rmr_context)
{
	return lmr_create("it_lmr_create10", pz_handle, addr, NULL, length,
			  IT_ADDR_MODE_ABSOLUTE, privs, flags, shared_id,
			  lmr_handle, rmr_context);
}

OPENRDMA_EXPORT it_status_t
it_lmr_create20(it_pz_handle_t pz_handle, void *addr, it_length_t length,
		it_addr_mode_t addr_mode, it_mem_priv_t privs,
		it_lmr_flag_t flags, uint32_t shared_id,
		it_lmr_handle_t *lmr_handle, it_rmr_context_t *rmr_context)
{
	return lmr_create("it_lmr_create20", pz_handle, addr, NULL, length,
			  addr_mode, privs, flags, shared_id, lmr_handle,
			  rmr_context);
}

OPENRDMA_EXPORT it_status_t
it_lmr_create21(it_pz_handle_t pz_handle, void *addr, it_iobl_t *iobl,
		it_length_t length, it_addr_mode_t addr_mode,
		it_mem_priv_t privs, it_lmr_flag_t flags, uint32_t shared_id,
		it_lmr_handle_t *lmr_handle, it_rmr_context_t *rmr_context)
{
	return lmr_create("it_lmr_create21", pz_handle, addr, iobl, length,
			  addr_mode, privs, flags, shared_id, lmr_handle,
			  rmr_context);
}

OPENRDMA_EXPORT it_status_t it_lmr_create_unlinked(it_pz_handle_t pz_handle,
						   size_t iobl_num_elts,
						   it_lmr_flag_t flags,
						   uint32_t shared_id,
						   it_lmr_handle_t *lmr_handle)
{
	struct itapi_pz *pz = (struct itapi_pz *)pz_handle;
	struct itapi_lmr *lmr;
	it_status_t st;
	int ret;

	if (!itapi_valid(pz, IT_HANDLE_TYPE_PZ)) {
		itapi_arg_err("it_lmr_create_unlinked", "pz_handle",
			      "not a PZ");
		return IT_ERR_INVALID_PZ;
	}
	st = flags_check("it_lmr_create_unlinked", flags);
	if (st)
		return st;
	if (!lmr_handle) {
		itapi_arg_err("it_lmr_create_unlinked", "lmr_handle", "NULL");
		return IT_ERR_FAULT;
	}
	lmr = calloc(1, sizeof(*lmr));
	if (!lmr)
		return IT_ERR_RESOURCES;
	lmr->pz = pz;
	lmr->flags = flags;
	lmr->shared_id = shared_id;
	lmr->linkable = true;
	lmr->iobl_num_elts = iobl_num_elts;
	ret = itapi_obj_init(&lmr->obj, IT_HANDLE_TYPE_LMR, pz->obj.ia);
	if (ret) {
		free(lmr);
		return itapi_status(ret, IT_ERR_INVALID_PZ);
	}
	itapi_obj_get(&pz->obj);
	*lmr_handle = (it_lmr_handle_t)lmr;
	return IT_SUCCESS;
}

#define LINK_DTO_FLAGS                                                 \
	(IT_COMPLETION_FLAG | IT_NOTIFY_FLAG | IT_BARRIER_FENCE_FLAG | \
	 IT_UNLINK_FENCE_FLAG | IT_COALESCE_WR_FLAG)

/*
 * The arguments a link and an unlink share: an LMR of
 * it_lmr_create_unlinked, an endpoint of its IA and PZ, and flags.
 */
static it_status_t link_args_check(const char *fn, const struct itapi_lmr *lmr,
				   const struct itapi_ep *ep,
				   it_dto_flags_t dto_flags)
{
	if (!itapi_valid(lmr, IT_HANDLE_TYPE_LMR) || !lmr->linkable) {
		openrdma_dbg(ITAPI_LOG,
			     "%s: arg lmr_handle: not an LMR of "
			     "it_lmr_create_unlinked",
			     fn);
		return IT_ERR_INVALID_LMR;
	}
	if (!itapi_valid(ep, IT_HANDLE_TYPE_EP) || ep->obj.ia != lmr->obj.ia) {
		openrdma_dbg(ITAPI_LOG, "%s: arg ep_handle: not an EP", fn);
		return IT_ERR_INVALID_EP;
	}
	if (ep->pz != lmr->pz) {
		openrdma_dbg(ITAPI_LOG, "%s: arg ep_handle: another PZ", fn);
		return IT_ERR_INVALID_PZ;
	}
	if (itapi_dto_flags(dto_flags, LINK_DTO_FLAGS) < 0) {
		openrdma_dbg(ITAPI_LOG, "%s: arg dto_flags: 0x%x", fn,
			     (unsigned int)dto_flags);
		return IT_ERR_INVALID_DTO_FLAGS;
	}
	return IT_SUCCESS;
}

/*
 * Reports a link or unlink that took effect at once.  On a connected RC
 * endpoint a zero-length RDMA write (which checks no key) carries the
 * completion through the send queue, so that it is reported after those
 * of the requests posted before; elsewhere nothing is in flight that
 * could complete later, and the event is queued directly.
 */
static int link_complete(struct itapi_ep *ep, struct itapi_lmr *lmr,
			 it_dto_cookie_t cookie, it_dto_flags_t dto_flags)
{
	struct openrdma_send_wr wr;
	bool signaled = dto_flags & IT_COMPLETION_FLAG;
	it_event_t ev;
	int send_flags;

	send_flags = itapi_dto_flags(dto_flags, LINK_DTO_FLAGS);
	if (ep->service == IT_RC_SERVICE &&
	    atomic_load(&ep->qp->state) == OPENRDMA_QPS_RTS) {
		memset(&wr, 0, sizeof(wr));
		wr.opcode = OPENRDMA_WR_RDMA_WRITE;
		wr.send_flags = (unsigned int)send_flags;
		return itapi_post_sq(ep, &wr, cookie, IT_LMR_LINK_CMPL_EVENT, 0,
				     signaled, &lmr->obj);
	}
	if (!signaled)
		return 0;
	memset(&ev, 0, sizeof(ev));
	ev.dto_cmpl.event_number = IT_LMR_LINK_CMPL_EVENT;
	ev.dto_cmpl.evd = (it_evd_handle_t)ep->req_evd;
	ev.dto_cmpl.ep = (it_ep_handle_t)ep;
	ev.dto_cmpl.cookie = cookie;
	ev.dto_cmpl.dto_status = IT_DTO_SUCCESS;
	return itapi_evd_enqueue(ep->req_evd, &ev);
}

OPENRDMA_EXPORT it_status_t
it_lmr_link(it_lmr_handle_t lmr_handle, const void *addr, const it_iobl_t *iobl,
	    it_length_t length, it_addr_mode_t addr_mode, it_mem_priv_t privs,
	    it_ep_handle_t ep_handle, it_dto_cookie_t cookie,
	    it_dto_flags_t dto_flags, it_rmr_context_t *rmr_context)
{
	struct itapi_lmr *lmr = (struct itapi_lmr *)lmr_handle;
	struct itapi_ep *ep = to_ep(ep_handle);
	struct openrdma_mr *mr;
	it_status_t st;
	int ret;

	st = link_args_check("it_lmr_link", lmr, ep, dto_flags);
	if (st)
		return st;
	st = region_check("it_lmr_link", lmr->obj.ia, addr, iobl, length,
			  addr_mode, privs);
	if (st)
		return st;
	if (lmr->mr) {
		itapi_arg_err("it_lmr_link", "lmr_handle", "already linked");
		return IT_ERR_INVALID_LMR;
	}

	ret = openrdma_mr_reg(lmr->pz->pd, (void *)addr, length,
			      lmr_access(lmr->obj.ia, privs, addr_mode), &mr);
	if (ret)
		return mr_status(ret);
	lmr->mr = mr;
	lmr->addr = (void *)addr;
	lmr->length = length;
	lmr->addr_mode = addr_mode;
	lmr->privs = privs;
	ret = link_complete(ep, lmr, cookie, dto_flags);
	if (ret) {
		lmr->mr = NULL;
		openrdma_mr_dereg(mr);
		return ret == -OPENRDMA_ENOMEM ?
			       IT_ERR_TOO_MANY_POSTS :
			       itapi_status(ret, IT_ERR_INVALID_EP_STATE);
	}
	if (rmr_context)
		*rmr_context = mr->rkey;
	return IT_SUCCESS;
}

OPENRDMA_EXPORT it_status_t it_lmr_unlink(it_lmr_handle_t lmr_handle,
					  it_ep_handle_t ep_handle,
					  it_dto_cookie_t cookie,
					  it_dto_flags_t dto_flags)
{
	struct itapi_lmr *lmr = (struct itapi_lmr *)lmr_handle;
	struct itapi_ep *ep = to_ep(ep_handle);
	struct openrdma_mr *mr;
	it_status_t st;
	int ret;

	st = link_args_check("it_lmr_unlink", lmr, ep, dto_flags);
	if (st)
		return st;
	if (!lmr->mr) {
		itapi_arg_err("it_lmr_unlink", "lmr_handle", "not linked");
		return IT_ERR_INVALID_LMR;
	}
	if (itapi_obj_users(&lmr->obj))
		return IT_ERR_LMR_BUSY;
	mr = lmr->mr;
	ret = openrdma_mr_dereg(mr);
	if (ret)
		return ret == -OPENRDMA_EBUSY ?
			       IT_ERR_LMR_BUSY :
			       itapi_status(ret, IT_ERR_INVALID_LMR);
	lmr->mr = NULL;
	ret = link_complete(ep, lmr, cookie, dto_flags);
	if (ret)
		openrdma_dbg(ITAPI_LOG, "it_lmr_unlink: completion: %s",
			     openrdma_strerror(ret));
	return IT_SUCCESS;
}

#define LMR_MODIFIABLE                                               \
	(IT_LMR_PARAM_PZ | IT_LMR_PARAM_ADDR | IT_LMR_PARAM_LENGTH | \
	 IT_LMR_PARAM_MEM_PRIV | IT_LMR_PARAM_ADDR_MODE)

OPENRDMA_EXPORT it_status_t it_lmr_modify(it_lmr_handle_t lmr_handle,
					  it_lmr_param_mask_t mask,
					  const it_lmr_param_t *params)
{
	struct itapi_lmr *lmr = (struct itapi_lmr *)lmr_handle;
	struct itapi_pz *pz;
	it_lmr_param_t want;
	it_status_t st;
	int flags = 0, ret;

	if (!itapi_valid(lmr, IT_HANDLE_TYPE_LMR)) {
		itapi_arg_err("it_lmr_modify", "lmr_handle", "not an LMR");
		return IT_ERR_INVALID_LMR;
	}
	if (mask & IT_LMR_PARAM_ALL)
		mask = (it_lmr_param_mask_t)LMR_MODIFIABLE;
	if (!mask || (mask & ~(unsigned int)LMR_MODIFIABLE)) {
		itapi_arg_err("it_lmr_modify", "mask", "0x%x",
			      (unsigned int)mask);
		return IT_ERR_INVALID_MASK;
	}
	if (!params) {
		itapi_arg_err("it_lmr_modify", "params", "NULL");
		return IT_ERR_FAULT;
	}
	if (!lmr->mr) {
		itapi_arg_err("it_lmr_modify", "lmr_handle", "not linked");
		return IT_ERR_INVALID_LMR;
	}
	want.pz = (it_pz_handle_t)lmr->pz;
	want.addr = lmr->addr;
	want.length = lmr->length;
	want.privs = lmr->privs;
	want.addr_mode = lmr->addr_mode;
	if (mask & IT_LMR_PARAM_PZ) {
		want.pz = params->pz;
		flags |= OPENRDMA_REREG_CHANGE_PD;
	}
	if (mask & IT_LMR_PARAM_ADDR) {
		want.addr = params->addr;
		flags |= OPENRDMA_REREG_CHANGE_TRANSLATION;
	}
	if (mask & IT_LMR_PARAM_LENGTH) {
		want.length = params->length;
		flags |= OPENRDMA_REREG_CHANGE_TRANSLATION;
	}
	if (mask & IT_LMR_PARAM_MEM_PRIV) {
		want.privs = params->privs;
		flags |= OPENRDMA_REREG_CHANGE_ACCESS;
	}
	if (mask & IT_LMR_PARAM_ADDR_MODE) {
		want.addr_mode = params->addr_mode;
		flags |= OPENRDMA_REREG_CHANGE_ACCESS;
	}
	pz = (struct itapi_pz *)want.pz;
	if (!itapi_valid(pz, IT_HANDLE_TYPE_PZ) || pz->obj.ia != lmr->obj.ia) {
		itapi_arg_err("it_lmr_modify", "params->pz", "not a PZ");
		return IT_ERR_INVALID_PZ;
	}
	st = region_check("it_lmr_modify", lmr->obj.ia, want.addr, NULL,
			  want.length, want.addr_mode, want.privs);
	if (st)
		return st;
	if (itapi_obj_users(&lmr->obj))
		return IT_ERR_LMR_BUSY;

	ret = openrdma_mr_rereg(lmr->mr, flags, pz->pd, want.addr, want.length,
				lmr_access(lmr->obj.ia, want.privs,
					   want.addr_mode));
	if (ret)
		return ret == -OPENRDMA_EBUSY ? IT_ERR_LMR_BUSY :
						mr_status(ret);
	if (pz != lmr->pz) {
		itapi_obj_get(&pz->obj);
		itapi_obj_put(&lmr->pz->obj);
		lmr->pz = pz;
	}
	lmr->addr = want.addr;
	lmr->length = want.length;
	lmr->privs = want.privs;
	lmr->addr_mode = want.addr_mode;
	return IT_SUCCESS;
}

#define LMR_QUERYABLE 0x7fffu

OPENRDMA_EXPORT it_status_t it_lmr_query(it_lmr_handle_t lmr_handle,
					 it_lmr_param_mask_t mask,
					 it_lmr_param_t *params)
{
	struct itapi_lmr *lmr = (struct itapi_lmr *)lmr_handle;
	it_lmr_param_t p;

	if (!itapi_valid(lmr, IT_HANDLE_TYPE_LMR)) {
		itapi_arg_err("it_lmr_query", "lmr_handle", "not an LMR");
		return IT_ERR_INVALID_LMR;
	}
	if (mask & ~LMR_QUERYABLE) {
		itapi_arg_err("it_lmr_query", "mask", "0x%x",
			      (unsigned int)mask);
		return IT_ERR_INVALID_MASK;
	}
	if (!params) {
		itapi_arg_err("it_lmr_query", "params", "NULL");
		return IT_ERR_FAULT;
	}
	if (mask & IT_LMR_PARAM_ALL)
		mask = (it_lmr_param_mask_t)LMR_QUERYABLE;
	p = *params;
	if (mask & IT_LMR_PARAM_IA)
		p.ia = (it_ia_handle_t)lmr->obj.ia;
	if (mask & IT_LMR_PARAM_PZ)
		p.pz = (it_pz_handle_t)lmr->pz;
	if (mask & IT_LMR_PARAM_ADDR)
		p.addr = lmr->addr;
	if (mask & IT_LMR_PARAM_LENGTH)
		p.length = lmr->length;
	if (mask & IT_LMR_PARAM_MEM_PRIV)
		p.privs = lmr->privs;
	if (mask & IT_LMR_PARAM_FLAG)
		p.flags = lmr->flags;
	if (mask & IT_LMR_PARAM_SHARED_ID)
		p.shared_id = lmr->shared_id;
	if (mask & IT_LMR_PARAM_RMR_CONTEXT)
		p.rmr_context = lmr->mr ? lmr->mr->rkey : 0;
	/* registrations are exact: no page rounding is visible */
	if (mask & IT_LMR_PARAM_ACTUAL_ADDR)
		p.actual_addr = lmr->addr;
	if (mask & IT_LMR_PARAM_ACTUAL_LENGTH)
		p.actual_length = lmr->length;
	if (mask & IT_LMR_PARAM_ADDR_MODE)
		p.addr_mode = lmr->addr_mode;
	if (mask & IT_LMR_PARAM_LINKED)
		p.linked = lmr->mr ? IT_TRUE : IT_FALSE;
	if (mask & IT_LMR_PARAM_IOBL_NUM_ELTS)
		p.iobl_num_elts = lmr->iobl_num_elts;
	if (mask & IT_LMR_PARAM_IOBL_TYPE)
		p.iobl_type = (it_iobl_type_t)0;
	*params = p;
	return IT_SUCCESS;
}

void itapi_lmr_destroy(struct itapi_lmr *lmr)
{
	int ret;

	itapi_obj_fini(&lmr->obj);
	if (lmr->mr) {
		ret = openrdma_mr_dereg(lmr->mr);
		if (ret)
			openrdma_warn(ITAPI_LOG, "mr_dereg: %s",
				      openrdma_strerror(ret));
	}
	itapi_obj_put(&lmr->pz->obj);
	free(lmr);
}

OPENRDMA_EXPORT it_status_t it_lmr_free(it_lmr_handle_t lmr_handle)
{
	struct itapi_lmr *lmr = (struct itapi_lmr *)lmr_handle;
	int ret;

	if (!itapi_valid(lmr, IT_HANDLE_TYPE_LMR)) {
		itapi_arg_err("it_lmr_free", "lmr_handle", "not an LMR");
		return IT_ERR_INVALID_LMR;
	}
	if (itapi_obj_users(&lmr->obj))
		return IT_ERR_LMR_BUSY;
	if (lmr->mr) {
		ret = openrdma_mr_dereg(lmr->mr);
		if (ret)
			return ret == -OPENRDMA_EBUSY ?
				       IT_ERR_LMR_BUSY :
				       itapi_status(ret, IT_ERR_INVALID_LMR);
		lmr->mr = NULL;
	}
	itapi_lmr_destroy(lmr);
	return IT_SUCCESS;
}

/* Every triplet names a live LMR and lies inside it. */
static it_status_t triplets_check(const char *fn, const it_lmr_triplet_t *seg,
				  size_t num)
{
	const struct itapi_lmr *lmr;
	size_t i;

	if (num && !seg) {
		openrdma_dbg(ITAPI_LOG, "%s: arg local_segments: NULL", fn);
		return IT_ERR_FAULT;
	}
	for (i = 0; i < num; i++) {
		lmr = (const struct itapi_lmr *)seg[i].lmr;
		if (!itapi_valid(lmr, IT_HANDLE_TYPE_LMR) || !lmr->mr) {
			openrdma_dbg(ITAPI_LOG, "%s: segment %zu: not an LMR",
				     fn, i);
			return IT_ERR_INVALID_LMR;
		}
		if (!itapi_triplet_inside(&seg[i])) {
			openrdma_dbg(ITAPI_LOG,
				     "%s: segment %zu: outside its LMR", fn, i);
			return IT_ERR_INVALID_LENGTH;
		}
	}
	return IT_SUCCESS;
}

/*
 * Every host OpenRDMA runs on keeps DMA coherent with the CPU caches; what
 * remains is ordering, which a full fence gives.
 */
OPENRDMA_EXPORT it_status_t
it_lmr_flush_to_mem(const it_lmr_triplet_t *local_segments, size_t num_segments)
{
	it_status_t st;

	st = triplets_check("it_lmr_flush_to_mem", local_segments,
			    num_segments);
	if (st)
		return st;
	atomic_thread_fence(memory_order_seq_cst);
	return IT_SUCCESS;
}

OPENRDMA_EXPORT it_status_t it_lmr_refresh_from_mem(
	const it_lmr_triplet_t *local_segments, size_t num_segments)
{
	it_status_t st;

	st = triplets_check("it_lmr_refresh_from_mem", local_segments,
			    num_segments);
	if (st)
		return st;
	atomic_thread_fence(memory_order_seq_cst);
	return IT_SUCCESS;
}

OPENRDMA_EXPORT it_status_t it_mem_map(it_ia_handle_t ia_handle, void *vaddr,
				       uint64_t aspace_id, size_t len,
				       it_io_addr_t *io_addr,
				       size_t *mapped_len)
{
	if (!itapi_valid(to_ia(ia_handle), IT_HANDLE_TYPE_IA)) {
		itapi_arg_err("it_mem_map", "ia_handle", "not an IA");
		return IT_ERR_INVALID_IA;
	}
	/* bus addresses are for privileged consumers of kernel drivers */
	return IT_ERR_OP_NOT_SUPPORTED;
}

OPENRDMA_EXPORT it_status_t it_mem_unmap(it_ia_handle_t ia_handle,
					 it_io_addr_t io_addr,
					 size_t mapped_len)
{
	if (!itapi_valid(to_ia(ia_handle), IT_HANDLE_TYPE_IA)) {
		itapi_arg_err("it_mem_unmap", "ia_handle", "not an IA");
		return IT_ERR_INVALID_IA;
	}
	return IT_ERR_OP_NOT_SUPPORTED;
}
