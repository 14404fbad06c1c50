/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* Queue pairs: create, destroy, modify, query, and the post calls. */
#include <openrdma/transport.h>

#include "core/core.h"
#include "core/export.h"
#include "core/probe.h"
#include "core/qp_init.h"
#include "core/qp_state.h"

static int qp_init_attr_check(const struct openrdma_pd *pd,
			      const struct openrdma_qp_init_attr *init_attr,
			      const struct openrdma_device_attr *dev)
{
	uint32_t cap;
	int ret;

	if (init_attr->qp_type == OPENRDMA_QPT_RC) {
		cap = OPENRDMA_DEVICE_RC;
	} else if (init_attr->qp_type == OPENRDMA_QPT_UD) {
		cap = OPENRDMA_DEVICE_UD;
	} else {
		core_arg_err("qp_create", "init_attr", "qp_type %d unknown",
			     (int)init_attr->qp_type);
		return -OPENRDMA_EINVAL;
	}
	if (!(dev->device_cap_flags & cap)) {
		core_arg_err("qp_create", "init_attr", "qp_type %d unsupported",
			     (int)init_attr->qp_type);
		return -OPENRDMA_EOPNOTSUPP;
	}
	ret = core_check(init_attr->send_cq, OPENRDMA_OBJ_CQ, "qp_create",
			 "init_attr->send_cq");
	if (ret)
		return ret;
	ret = core_same_ctx(&init_attr->send_cq->obj, &pd->obj, "qp_create",
			    "init_attr->send_cq");
	if (ret)
		return ret;
	ret = core_check(init_attr->recv_cq, OPENRDMA_OBJ_CQ, "qp_create",
			 "init_attr->recv_cq");
	if (ret)
		return ret;
	ret = core_same_ctx(&init_attr->recv_cq->obj, &pd->obj, "qp_create",
			    "init_attr->recv_cq");
	if (ret)
		return ret;
	if (init_attr->srq) {
		ret = core_check(init_attr->srq, OPENRDMA_OBJ_SRQ, "qp_create",
				 "init_attr->srq");
		if (ret)
			return ret;
		ret = core_same_ctx(&init_attr->srq->obj, &pd->obj, "qp_create",
				    "init_attr->srq");
		if (ret)
			return ret;
	}
	return core_qp_cap_check(&init_attr->cap, init_attr->srq != NULL, dev,
				 "qp_create", "init_attr->cap");
}

OPENRDMA_EXPORT int openrdma_qp_create(struct openrdma_pd *pd,
				       struct openrdma_qp_init_attr *init_attr,
				       struct openrdma_qp **qp_out)
{
	struct openrdma_context *ctx;
	struct openrdma_qp *qp;
	int ret;

	ret = core_check(pd, OPENRDMA_OBJ_PD, "qp_create", "pd");
	if (ret)
		return ret;
	ctx = pd->obj.ctx;
	if (!init_attr) {
		core_arg_err("qp_create", "init_attr", "NULL");
		return -OPENRDMA_EINVAL;
	}
	ret = qp_init_attr_check(pd, init_attr, core_attr(ctx));
	if (ret)
		return ret;
	if (!qp_out) {
		core_arg_err("qp_create", "qp_out", "NULL");
		return -OPENRDMA_EINVAL;
	}

	ret = ctx->ops->qp_create(pd, init_attr, &qp);
	if (ret)
		return ret;
	ret = core_obj_init(&qp->obj, OPENRDMA_OBJ_QP, ctx, &pd->obj);
	if (ret)
		goto err_destroy;
	core_obj_get(&init_attr->send_cq->obj);
	core_obj_get(&init_attr->recv_cq->obj);
	if (init_attr->srq)
		core_obj_get(&init_attr->srq->obj);
	/* cap as granted: the transport updated it */
	core_qp_init_fields(qp, pd, init_attr);
	atomic_store(&qp->state, OPENRDMA_QPS_RESET);

	*qp_out = qp;
	return 0;

err_destroy:
	ctx->ops->qp_destroy(qp);
	return ret;
}

OPENRDMA_EXPORT int openrdma_qp_destroy(struct openrdma_qp *qp)
{
	struct openrdma_cq *send_cq, *recv_cq;
	struct openrdma_context *ctx;
	struct openrdma_srq *srq;
	struct openrdma_pd *pd;
	int ret;

	ret = core_check(qp, OPENRDMA_OBJ_QP, "qp_destroy", "qp");
	if (ret)
		return ret;
	ctx = qp->obj.ctx;
	pd = qp->pd;
	send_cq = qp->send_cq;
	recv_cq = qp->recv_cq;
	srq = qp->srq;
	ret = core_obj_retire(&qp->obj);
	if (ret)
		return ret;
	ret = ctx->ops->qp_destroy(qp);
	if (ret) {
		core_obj_revive(&qp->obj, OPENRDMA_OBJ_QP);
		return ret;
	}
	if (srq)
		core_obj_put(&srq->obj);
	core_obj_put(&recv_cq->obj);
	core_obj_put(&send_cq->obj);
	core_obj_put(&pd->obj);
	return 0;
}

OPENRDMA_EXPORT int openrdma_qp_modify(struct openrdma_qp *qp,
				       struct openrdma_qp_attr *attr,
				       int attr_mask)
{
	enum openrdma_qp_state cur;
	int expected, ret;

	ret = core_check(qp, OPENRDMA_OBJ_QP, "qp_modify", "qp");
	if (ret)
		return ret;
	if (!attr) {
		core_arg_err("qp_modify", "attr", "NULL");
		return -OPENRDMA_EINVAL;
	}
	cur = atomic_load(&qp->state);
	ret = core_qp_modify_check(qp->qp_type, cur, attr, attr_mask,
				   core_attr(qp->obj.ctx));
	if (ret)
		return ret;

	ret = qp->obj.ctx->ops->qp_modify(qp, attr, attr_mask);
	if (ret)
		return ret;
	if (attr_mask & OPENRDMA_QP_STATE) {
		/* Unless the transport moved the QP meanwhile (an error). */
		expected = cur;
		atomic_compare_exchange_strong(&qp->state, &expected,
					       (int)attr->qp_state);
	}
	if (attr_mask & OPENRDMA_QP_CAP)
		qp->cap = attr->cap;
	return 0;
}

OPENRDMA_EXPORT int openrdma_qp_query(struct openrdma_qp *qp,
				      struct openrdma_qp_attr *attr,
				      int attr_mask,
				      struct openrdma_qp_init_attr *init_attr)
{
	enum openrdma_qp_state state;
	int ret;

	ret = core_check(qp, OPENRDMA_OBJ_QP, "qp_query", "qp");
	if (ret)
		return ret;
	if (!attr || !init_attr) {
		core_arg_err("qp_query", "attr", "attr %p init_attr %p",
			     (void *)attr, (void *)init_attr);
		return -OPENRDMA_EINVAL;
	}
	ret = qp->obj.ctx->ops->qp_query(qp, attr, attr_mask, init_attr);
	if (ret)
		return ret;

	/* What the core keeps is authoritative. */
	state = atomic_load(&qp->state);
	attr->qp_state = state;
	attr->cur_qp_state = state;
	attr->cap = qp->cap;
	core_qp_init_attr_get(qp, init_attr);
	return 0;
}

OPENRDMA_EXPORT enum openrdma_qp_state
openrdma_qp_state_set(struct openrdma_qp *qp, enum openrdma_qp_state state)
{
	return atomic_exchange(&qp->state, (int)state);
}

/*
 * The post calls check the handle (one compare) and the list pointers; the
 * transport checks each work request with openrdma_send_wr_check() or
 * openrdma_recv_wr_check().
 */
OPENRDMA_EXPORT int openrdma_qp_post_send(struct openrdma_qp *qp,
					  struct openrdma_send_wr *wr,
					  struct openrdma_send_wr **bad_wr)
{
	int ret;

	core_probe_post();
	ret = core_check(qp, OPENRDMA_OBJ_QP, "qp_post_send", "qp");
	if (!ret && (!wr || !bad_wr)) {
		core_arg_err("qp_post_send", "wr", "wr %p bad_wr %p",
			     (void *)wr, (void *)bad_wr);
		ret = -OPENRDMA_EINVAL;
	}
	if (ret) {
		if (bad_wr)
			*bad_wr = wr;
		return ret;
	}
	ret = qp->obj.ctx->ops->qp_post_send(qp, wr, bad_wr);
	core_probe_posted();
	return ret;
}

OPENRDMA_EXPORT int openrdma_qp_post_recv(struct openrdma_qp *qp,
					  struct openrdma_recv_wr *wr,
					  struct openrdma_recv_wr **bad_wr)
{
	int ret;

	ret = core_check(qp, OPENRDMA_OBJ_QP, "qp_post_recv", "qp");
	if (!ret && (!wr || !bad_wr)) {
		core_arg_err("qp_post_recv", "wr", "wr %p bad_wr %p",
			     (void *)wr, (void *)bad_wr);
		ret = -OPENRDMA_EINVAL;
	}
	if (ret) {
		if (bad_wr)
			*bad_wr = wr;
		return ret;
	}
	return qp->obj.ctx->ops->qp_post_recv(qp, wr, bad_wr);
}
