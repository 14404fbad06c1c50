/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* Memory regions and memory windows. */
#include <openrdma/transport.h>

#include "core/core.h"
#include "core/export.h"

#define MW_BIND_ACCESS                                                \
	(OPENRDMA_ACCESS_REMOTE_WRITE | OPENRDMA_ACCESS_REMOTE_READ | \
	 OPENRDMA_ACCESS_REMOTE_ATOMIC | OPENRDMA_ACCESS_ZERO_BASED)
#define REREG_FLAGS                                                     \
	(OPENRDMA_REREG_CHANGE_TRANSLATION | OPENRDMA_REREG_CHANGE_PD | \
	 OPENRDMA_REREG_CHANGE_ACCESS)

static int mr_access_check(const struct openrdma_device_attr *attr, int access,
			   const char *fn)
{
	if (access & ~OPENRDMA_ACCESS_ALL) {
		openrdma_dbg("core", "%s: arg access: unknown flags 0x%x", fn,
			     access & ~OPENRDMA_ACCESS_ALL);
		return -OPENRDMA_EINVAL;
	}
	/* The IB rule: remote writes and atomics imply local write. */
	if ((access &
	     (OPENRDMA_ACCESS_REMOTE_WRITE | OPENRDMA_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & OPENRDMA_ACCESS_LOCAL_WRITE)) {
		openrdma_dbg(
			"core",
			"%s: arg access: REMOTE_WRITE or REMOTE_ATOMIC without LOCAL_WRITE",
			fn);
		return -OPENRDMA_EINVAL;
	}
	if ((access & OPENRDMA_ACCESS_ZERO_BASED) &&
	    !(attr->device_cap_flags & OPENRDMA_DEVICE_ZERO_BASED)) {
		openrdma_dbg("core", "%s: arg access: ZERO_BASED unsupported",
			     fn);
		return -OPENRDMA_EOPNOTSUPP;
	}
	if ((access & OPENRDMA_ACCESS_REMOTE_ATOMIC) &&
	    attr->atomic_cap == OPENRDMA_ATOMIC_NONE) {
		openrdma_dbg("core", "%s: arg access: atomics unsupported", fn);
		return -OPENRDMA_EOPNOTSUPP;
	}
	if ((access & OPENRDMA_ACCESS_MW_BIND) &&
	    !(attr->device_cap_flags &
	      (OPENRDMA_DEVICE_MW_TYPE1 | OPENRDMA_DEVICE_MW_TYPE2))) {
		openrdma_dbg("core", "%s: arg access: MW_BIND unsupported", fn);
		return -OPENRDMA_EOPNOTSUPP;
	}
	return 0;
}

static int mr_range_check(const struct openrdma_device_attr *attr,
			  const void *addr, size_t length, const char *fn)
{
	if (!addr && length) {
		openrdma_dbg("core", "%s: arg addr: NULL with length %zu", fn,
			     length);
		return -OPENRDMA_EINVAL;
	}
	if ((uintptr_t)addr + length < (uintptr_t)addr) {
		openrdma_dbg("core", "%s: arg length: %zu wraps around", fn,
			     length);
		return -OPENRDMA_EINVAL;
	}
	if (attr->max_mr_size && length > attr->max_mr_size) {
		openrdma_dbg("core", "%s: arg length: %zu > max_mr_size %llu",
			     fn, length, (unsigned long long)attr->max_mr_size);
		return -OPENRDMA_EINVAL;
	}
	return 0;
}

OPENRDMA_EXPORT int openrdma_mr_reg(struct openrdma_pd *pd, void *addr,
				    size_t length, int access,
				    struct openrdma_mr **mr_out)
{
	const struct openrdma_device_attr *attr;
	struct openrdma_context *ctx;
	struct openrdma_mr *mr;
	int ret;

	ret = core_check(pd, OPENRDMA_OBJ_PD, "mr_reg", "pd");
	if (ret)
		return ret;
	ctx = pd->obj.ctx;
	attr = core_attr(ctx);
	ret = mr_range_check(attr, addr, length, "mr_reg");
	if (ret)
		return ret;
	ret = mr_access_check(attr, access, "mr_reg");
	if (ret)
		return ret;
	if (!mr_out) {
		core_arg_err("mr_reg", "mr_out", "NULL");
		return -OPENRDMA_EINVAL;
	}

	ret = ctx->ops->mr_reg(pd, addr, length, access, &mr);
	if (ret)
		return ret;
	ret = core_obj_init(&mr->obj, OPENRDMA_OBJ_MR, ctx, &pd->obj);
	if (ret)
		goto err_dereg;
	mr->pd = pd;
	mr->addr = addr;
	mr->length = length;
	mr->access = access;

	*mr_out = mr;
	return 0;

err_dereg:
	ctx->ops->mr_dereg(mr);
	return ret;
}

OPENRDMA_EXPORT int openrdma_mr_rereg(struct openrdma_mr *mr, int flags,
				      struct openrdma_pd *pd, void *addr,
				      size_t length, int access)
{
	const struct openrdma_device_attr *attr;
	struct openrdma_context *ctx;
	struct openrdma_pd *old_pd;
	int ret;

	ret = core_check(mr, OPENRDMA_OBJ_MR, "mr_rereg", "mr");
	if (ret)
		return ret;
	ctx = mr->obj.ctx;
	attr = core_attr(ctx);
	if (!flags || (flags & ~REREG_FLAGS)) {
		core_arg_err("mr_rereg", "flags", "0x%x invalid", flags);
		return -OPENRDMA_EINVAL;
	}
	if (flags & OPENRDMA_REREG_CHANGE_PD) {
		ret = core_check(pd, OPENRDMA_OBJ_PD, "mr_rereg", "pd");
		if (ret)
			return ret;
		ret = core_same_ctx(&pd->obj, &mr->obj, "mr_rereg", "pd");
		if (ret)
			return ret;
	}
	if (flags & OPENRDMA_REREG_CHANGE_TRANSLATION) {
		ret = mr_range_check(attr, addr, length, "mr_rereg");
		if (ret)
			return ret;
	}
	if (flags & OPENRDMA_REREG_CHANGE_ACCESS) {
		ret = mr_access_check(attr, access, "mr_rereg");
		if (ret)
			return ret;
	}

	/* the transport gets the whole new description, flags saying what
	 * changed */
	if (!(flags & OPENRDMA_REREG_CHANGE_PD))
		pd = mr->pd;
	if (!(flags & OPENRDMA_REREG_CHANGE_TRANSLATION)) {
		addr = mr->addr;
		length = mr->length;
	}
	if (!(flags & OPENRDMA_REREG_CHANGE_ACCESS))
		access = mr->access;
	old_pd = mr->pd;
	/* Hold the new PD across the call: the MR may already be in it. */
	if (flags & OPENRDMA_REREG_CHANGE_PD)
		core_obj_get(&pd->obj);
	ret = ctx->ops->mr_rereg(mr, flags, pd, addr, length, access);
	if (ret) {
		if (flags & OPENRDMA_REREG_CHANGE_PD)
			core_obj_put(&pd->obj);
		return ret;
	}

	if (flags & OPENRDMA_REREG_CHANGE_PD) {
		mr->pd = pd;
		mr->obj.parent = &pd->obj;
		core_obj_put(&old_pd->obj);
	}
	if (flags & OPENRDMA_REREG_CHANGE_TRANSLATION) {
		mr->addr = addr;
		mr->length = length;
	}
	if (flags & OPENRDMA_REREG_CHANGE_ACCESS)
		mr->access = access;
	return 0;
}

OPENRDMA_EXPORT int openrdma_mr_dereg(struct openrdma_mr *mr)
{
	struct openrdma_context *ctx;
	struct openrdma_pd *pd;
	int ret;

	ret = core_check(mr, OPENRDMA_OBJ_MR, "mr_dereg", "mr");
	if (ret)
		return ret;
	ctx = mr->obj.ctx;
	pd = mr->pd;
	ret = core_obj_retire(&mr->obj);
	if (ret)
		return ret;
	ret = ctx->ops->mr_dereg(mr);
	if (ret) {
		core_obj_revive(&mr->obj, OPENRDMA_OBJ_MR);
		return ret;
	}
	core_obj_put(&pd->obj);
	return 0;
}

OPENRDMA_EXPORT int openrdma_mw_alloc(struct openrdma_pd *pd,
				      enum openrdma_mw_type type,
				      struct openrdma_mw **mw_out)
{
	struct openrdma_context *ctx;
	struct openrdma_mw *mw;
	uint32_t cap;
	int ret;

	ret = core_check(pd, OPENRDMA_OBJ_PD, "mw_alloc", "pd");
	if (ret)
		return ret;
	ctx = pd->obj.ctx;
	if (type != OPENRDMA_MW_TYPE_1 && type != OPENRDMA_MW_TYPE_2) {
		core_arg_err("mw_alloc", "type", "%d unknown", (int)type);
		return -OPENRDMA_EINVAL;
	}
	cap = type == OPENRDMA_MW_TYPE_1 ? OPENRDMA_DEVICE_MW_TYPE1 :
					   OPENRDMA_DEVICE_MW_TYPE2;
	if (!(core_attr(ctx)->device_cap_flags & cap)) {
		core_arg_err("mw_alloc", "type", "type %d unsupported",
			     (int)type);
		return -OPENRDMA_EOPNOTSUPP;
	}
	if (!mw_out) {
		core_arg_err("mw_alloc", "mw_out", "NULL");
		return -OPENRDMA_EINVAL;
	}

	ret = ctx->ops->mw_alloc(pd, type, &mw);
	if (ret)
		return ret;
	ret = core_obj_init(&mw->obj, OPENRDMA_OBJ_MW, ctx, &pd->obj);
	if (ret)
		goto err_dealloc;
	mw->pd = pd;
	mw->type = type;

	*mw_out = mw;
	return 0;

err_dealloc:
	ctx->ops->mw_dealloc(mw);
	return ret;
}

OPENRDMA_EXPORT int openrdma_mw_dealloc(struct openrdma_mw *mw)
{
	struct openrdma_context *ctx;
	struct openrdma_pd *pd;
	int ret;

	ret = core_check(mw, OPENRDMA_OBJ_MW, "mw_dealloc", "mw");
	if (ret)
		return ret;
	ctx = mw->obj.ctx;
	pd = mw->pd;
	ret = core_obj_retire(&mw->obj);
	if (ret)
		return ret;
	ret = ctx->ops->mw_dealloc(mw);
	if (ret) {
		core_obj_revive(&mw->obj, OPENRDMA_OBJ_MW);
		return ret;
	}
	core_obj_put(&pd->obj);
	return 0;
}

OPENRDMA_EXPORT int openrdma_mw_bind(struct openrdma_qp *qp,
				     struct openrdma_mw *mw, uint64_t wr_id,
				     unsigned int send_flags,
				     const struct openrdma_mw_bind_info *info)
{
	struct openrdma_send_wr wr = { 0 }, *bad_wr;
	int ret;

	ret = core_check(qp, OPENRDMA_OBJ_QP, "mw_bind", "qp");
	if (ret)
		return ret;
	ret = core_check(mw, OPENRDMA_OBJ_MW, "mw_bind", "mw");
	if (ret)
		return ret;
	ret = core_same_ctx(&mw->obj, &qp->obj, "mw_bind", "mw");
	if (ret)
		return ret;
	if (mw->type != OPENRDMA_MW_TYPE_1) {
		/* Type 2 windows are bound by a BIND_MW work request. */
		core_arg_err("mw_bind", "mw", "not a type 1 window");
		return -OPENRDMA_EINVAL;
	}
	if (!info) {
		core_arg_err("mw_bind", "info", "NULL");
		return -OPENRDMA_EINVAL;
	}
	if (info->mr) {
		ret = core_check(info->mr, OPENRDMA_OBJ_MR, "mw_bind", "info");
		if (ret)
			return ret;
	} else if (info->length) {
		/* Without an MR, only an unbind (length 0) makes sense. */
		core_arg_err("mw_bind", "info", "no MR for length %llu",
			     (unsigned long long)info->length);
		return -OPENRDMA_EINVAL;
	}
	if (info->mw_access_flags & ~(unsigned int)MW_BIND_ACCESS) {
		core_arg_err("mw_bind", "info", "mw_access_flags 0x%x invalid",
			     info->mw_access_flags);
		return -OPENRDMA_EINVAL;
	}
	if (send_flags &
	    ~(unsigned int)(OPENRDMA_SEND_FENCE | OPENRDMA_SEND_SIGNALED |
			    OPENRDMA_SEND_SOLICITED)) {
		core_arg_err("mw_bind", "send_flags", "0x%x invalid",
			     send_flags);
		return -OPENRDMA_EINVAL;
	}

	wr.wr_id = wr_id;
	wr.opcode = OPENRDMA_WR_BIND_MW;
	wr.send_flags = send_flags | OPENRDMA_SEND_TYPE1_BIND;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = openrdma_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = *info;
	return qp->obj.ctx->ops->qp_post_send(qp, &wr, &bad_wr);
}
