/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The peer agent: side B of every test.  It owns one context on the
 * interface under test and executes requests (conf_proto.h) with the
 * public verbs API.  It never asserts: it reports return codes, so that a
 * test can check failures of side B as well as successes.  This file
 * holds the object table and the resources; conf_agent_post.c the data
 * path, conf_agent_cm.c the CM.
 */
#include <stdlib.h>
#include <string.h>

#include "conf_agent.h"
#include "conf_sys.h"

int conf_agent_new(struct conf_agent **agent_out)
{
	struct conf_agent *agent = calloc(1, sizeof(*agent));

	if (!agent)
		return -OPENRDMA_ENOMEM;
	*agent_out = agent;
	return 0;
}

int conf_agent_add(struct conf_agent *agent, enum conf_kind kind, void *ptr,
		   void *buf, uint32_t *id)
{
	if (agent->nobj == CONF_AGENT_MAX_OBJ)
		return -OPENRDMA_ENOSPC;
	agent->obj[agent->nobj] = (struct conf_agent_obj){ kind, ptr, buf };
	*id = (uint32_t)++agent->nobj;
	return 0;
}

void *conf_agent_get(struct conf_agent *agent, enum conf_kind kind, uint32_t id)
{
	if (id == 0 || id > (uint32_t)agent->nobj ||
	    agent->obj[id - 1].kind != kind)
		return NULL;
	return agent->obj[id - 1].ptr;
}

uint32_t conf_agent_find(struct conf_agent *agent, enum conf_kind kind,
			 const void *ptr)
{
	int i;

	for (i = 0; i < agent->nobj; i++)
		if (agent->obj[i].kind == kind && agent->obj[i].ptr == ptr)
			return (uint32_t)i + 1;
	return 0;
}

static int destroy_obj(struct conf_agent_obj *o)
{
	int ret = 0;

	switch (o->kind) {
	case CONF_K_NONE:
	case CONF_K_MAX:
		return 0;
	case CONF_K_PD:
		ret = openrdma_pd_dealloc(o->ptr);
		break;
	case CONF_K_MR:
		ret = openrdma_mr_dereg(o->ptr);
		break;
	case CONF_K_MW:
		ret = openrdma_mw_dealloc(o->ptr);
		break;
	case CONF_K_CQ:
		ret = openrdma_cq_destroy(o->ptr);
		break;
	case CONF_K_SRQ:
		ret = openrdma_srq_destroy(o->ptr);
		break;
	case CONF_K_QP:
		ret = openrdma_qp_destroy(o->ptr);
		break;
	case CONF_K_AH:
		ret = openrdma_ah_destroy(o->ptr);
		break;
	case CONF_K_CM_ID:
		ret = openrdma_cm_id_destroy(o->ptr);
		break;
	}
	if (ret)
		return ret;
	free(o->buf);
	*o = (struct conf_agent_obj){ CONF_K_NONE, NULL, NULL };
	return 0;
}

int conf_agent_free(struct conf_agent *agent)
{
	int ret = 0, err, i;

	for (i = agent->nobj - 1; i >= 0; i--) {
		err = destroy_obj(&agent->obj[i]);
		if (err && !ret)
			ret = err;
	}
	if (agent->cm_ch) {
		err = openrdma_cm_channel_destroy(agent->cm_ch);
		if (err && !ret)
			ret = err;
	}
	if (agent->ctx) {
		err = openrdma_context_close(agent->ctx);
		if (err && !ret)
			ret = err;
	}
	free(agent);
	return ret;
}

static int do_open(struct conf_agent *agent, const struct conf_msg *req,
		   struct conf_msg *rep)
{
	struct openrdma_device *dev;
	struct openrdma_pd *pd;
	int ret;

	if (agent->ctx)
		return -OPENRDMA_EEXIST;
	ret = openrdma_device_find(req->a.open.ifname, &dev);
	if (ret)
		return ret;
	ret = openrdma_device_open(dev, &agent->ctx);
	if (ret)
		return ret;
	ret = openrdma_device_query(agent->ctx, &rep->a.opened.attr);
	if (ret)
		return ret;
	ret = openrdma_port_query(agent->ctx, 1, &rep->a.opened.port);
	if (ret)
		return ret;
	ret = openrdma_cm_channel_create(agent->ctx, &agent->cm_ch);
	if (ret)
		return ret;
	ret = conf_set_nonblock(agent->cm_ch->fd);
	if (ret)
		return ret;
	ret = openrdma_pd_alloc(agent->ctx, &pd);
	if (ret)
		return ret;
	return conf_agent_add(agent, CONF_K_PD, pd, NULL, &rep->a.opened.pd);
}

static int do_pd_alloc(struct conf_agent *agent, const struct conf_msg *req,
		       struct conf_msg *rep)
{
	struct openrdma_pd *pd;
	int ret;

	ret = openrdma_pd_alloc(agent->ctx, &pd);
	if (ret)
		return ret;
	ret = conf_agent_add(agent, CONF_K_PD, pd, NULL, &rep->a.obj.id);
	if (ret)
		openrdma_pd_dealloc(pd);
	return ret;
}

static int do_mr_reg(struct conf_agent *agent, const struct conf_msg *req,
		     struct conf_msg *rep)
{
	struct openrdma_pd *pd = conf_agent_get(agent, CONF_K_PD, req->a.mr.pd);
	uint64_t len = req->a.mr.len;
	struct openrdma_mr *mr;
	void *buf;
	int ret;

	if (!pd)
		return -OPENRDMA_ENOENT;
	/* page aligned, and never empty so that the address is real */
	buf = aligned_alloc(4096, (len + 4096) & ~(uint64_t)4095);
	if (!buf)
		return -OPENRDMA_ENOMEM;
	conf_fill(buf, len, req->a.mr.seed, 0);
	ret = openrdma_mr_reg(pd, buf, len, (int)req->a.mr.access, &mr);
	if (ret)
		goto err_free;
	ret = conf_agent_add(agent, CONF_K_MR, mr, buf, &rep->a.mr.id);
	if (ret)
		goto err_dereg;
	rep->a.mr.addr = (uintptr_t)buf;
	rep->a.mr.len = len;
	rep->a.mr.lkey = mr->lkey;
	rep->a.mr.rkey = mr->rkey;
	return 0;

err_dereg:
	openrdma_mr_dereg(mr);
err_free:
	free(buf);
	return ret;
}

/* The bytes [off, off + len) of an agent MR, or NULL if out of range. */
uint8_t *conf_agent_mem(struct conf_agent *agent, uint32_t id, uint64_t off,
			uint64_t len)
{
	struct openrdma_mr *mr = conf_agent_get(agent, CONF_K_MR, id);

	if (!mr || off > mr->length || len > mr->length - off)
		return NULL;
	return (uint8_t *)agent->obj[id - 1].buf + off;
}

static int do_mem_read(struct conf_agent *agent, const struct conf_msg *req,
		       struct conf_msg *rep)
{
	uint8_t *p = conf_agent_mem(agent, req->a.mem.mr, req->a.mem.off,
				    req->a.mem.len);

	if (!p || req->a.mem.len > CONF_DATA_MAX)
		return -OPENRDMA_ERANGE;
	memcpy(rep->data, p, req->a.mem.len);
	rep->data_len = (uint32_t)req->a.mem.len;
	return 0;
}

static int do_mem_write(struct conf_agent *agent, const struct conf_msg *req,
			struct conf_msg *rep)
{
	uint8_t *p = conf_agent_mem(agent, req->a.mem.mr, req->a.mem.off,
				    req->data_len);

	if (!p)
		return -OPENRDMA_ERANGE;
	memcpy(p, req->data, req->data_len);
	return 0;
}

static int do_mw_alloc(struct conf_agent *agent, const struct conf_msg *req,
		       struct conf_msg *rep)
{
	struct openrdma_pd *pd = conf_agent_get(agent, CONF_K_PD, req->a.mw.pd);
	struct openrdma_mw *mw;
	int ret;

	if (!pd)
		return -OPENRDMA_ENOENT;
	ret = openrdma_mw_alloc(pd, (enum openrdma_mw_type)req->a.mw.type, &mw);
	if (ret)
		return ret;
	ret = conf_agent_add(agent, CONF_K_MW, mw, NULL, &rep->a.mw.id);
	if (ret) {
		openrdma_mw_dealloc(mw);
		return ret;
	}
	rep->a.mw.rkey = mw->rkey;
	return 0;
}

static int do_mw_bind(struct conf_agent *agent, const struct conf_msg *req,
		      struct conf_msg *rep)
{
	struct openrdma_qp *qp =
		conf_agent_get(agent, CONF_K_QP, req->a.mw_bind.qp);
	struct openrdma_mw *mw =
		conf_agent_get(agent, CONF_K_MW, req->a.mw_bind.mw);
	struct openrdma_mw_bind_info info = {
		.length = req->a.mw_bind.len,
		.mw_access_flags = req->a.mw_bind.access,
	};
	int ret;

	if (!qp || !mw)
		return -OPENRDMA_ENOENT;
	if (req->a.mw_bind.mr) {
		info.mr = conf_agent_get(agent, CONF_K_MR, req->a.mw_bind.mr);
		if (!info.mr)
			return -OPENRDMA_ENOENT;
		info.addr = (uintptr_t)info.mr->addr + req->a.mw_bind.off;
	}
	ret = openrdma_mw_bind(qp, mw, req->a.mw_bind.wr_id,
			       req->a.mw_bind.send_flags, &info);
	rep->a.mw_bind.rkey = mw->rkey;
	return ret;
}

static int do_cq_create(struct conf_agent *agent, const struct conf_msg *req,
			struct conf_msg *rep)
{
	struct openrdma_cq *cq;
	int ret;

	ret = openrdma_cq_create(agent->ctx, req->a.cq.cqe, NULL, NULL, 0, &cq);
	if (ret)
		return ret;
	ret = conf_agent_add(agent, CONF_K_CQ, cq, NULL, &rep->a.cq.id);
	if (ret) {
		openrdma_cq_destroy(cq);
		return ret;
	}
	rep->a.cq.cqe = cq->cqe;
	return 0;
}

static int do_srq_create(struct conf_agent *agent, const struct conf_msg *req,
			 struct conf_msg *rep)
{
	struct openrdma_pd *pd =
		conf_agent_get(agent, CONF_K_PD, req->a.srq.pd);
	struct openrdma_srq_init_attr init = { .attr = req->a.srq.attr };
	struct openrdma_srq *srq;
	int ret;

	if (!pd)
		return -OPENRDMA_ENOENT;
	ret = openrdma_srq_create(pd, &init, &srq);
	if (ret)
		return ret;
	ret = conf_agent_add(agent, CONF_K_SRQ, srq, NULL, &rep->a.srq.id);
	if (ret) {
		openrdma_srq_destroy(srq);
		return ret;
	}
	rep->a.srq.attr = init.attr;
	return 0;
}

static int do_srq_modify(struct conf_agent *agent, const struct conf_msg *req,
			 struct conf_msg *rep)
{
	struct openrdma_srq *srq =
		conf_agent_get(agent, CONF_K_SRQ, req->a.srq.id);
	struct openrdma_srq_attr attr = req->a.srq.attr;

	if (!srq)
		return -OPENRDMA_ENOENT;
	return openrdma_srq_modify(srq, &attr, req->a.srq.mask);
}

static int do_qp_create(struct conf_agent *agent, const struct conf_msg *req,
			struct conf_msg *rep)
{
	struct openrdma_pd *pd = conf_agent_get(agent, CONF_K_PD, req->a.qp.pd);
	struct openrdma_qp_init_attr init = {
		.send_cq = conf_agent_get(agent, CONF_K_CQ, req->a.qp.scq),
		.recv_cq = conf_agent_get(agent, CONF_K_CQ, req->a.qp.rcq),
		.srq = conf_agent_get(agent, CONF_K_SRQ, req->a.qp.srq),
		.cap = req->a.qp.cap,
		.qp_type = (enum openrdma_qp_type)req->a.qp.type,
		.sq_sig_all = req->a.qp.sq_sig_all,
	};
	struct openrdma_qp *qp;
	int ret;

	if (!pd || !init.send_cq || !init.recv_cq ||
	    (req->a.qp.srq && !init.srq))
		return -OPENRDMA_ENOENT;
	ret = openrdma_qp_create(pd, &init, &qp);
	if (ret)
		return ret;
	ret = conf_agent_add(agent, CONF_K_QP, qp, NULL, &rep->a.qp.id);
	if (ret) {
		openrdma_qp_destroy(qp);
		return ret;
	}
	rep->a.qp.qpn = qp->qp_num;
	rep->a.qp.cap = init.cap;
	return 0;
}

static int do_qp_modify(struct conf_agent *agent, const struct conf_msg *req,
			struct conf_msg *rep)
{
	struct openrdma_qp *qp =
		conf_agent_get(agent, CONF_K_QP, req->a.qp_attr.id);
	struct openrdma_qp_attr attr = req->a.qp_attr.attr;

	if (!qp)
		return -OPENRDMA_ENOENT;
	return openrdma_qp_modify(qp, &attr, req->a.qp_attr.mask);
}

static int do_qp_query(struct conf_agent *agent, const struct conf_msg *req,
		       struct conf_msg *rep)
{
	struct openrdma_qp *qp =
		conf_agent_get(agent, CONF_K_QP, req->a.qp_attr.id);
	struct openrdma_qp_init_attr init;

	if (!qp)
		return -OPENRDMA_ENOENT;
	return openrdma_qp_query(qp, &rep->a.qp_attr.attr,
				 OPENRDMA_QP_ATTR_MASK_ALL, &init);
}

static int do_ah_create(struct conf_agent *agent, const struct conf_msg *req,
			struct conf_msg *rep)
{
	struct openrdma_pd *pd = conf_agent_get(agent, CONF_K_PD, req->a.ah.pd);
	struct openrdma_ah_attr attr = req->a.ah.attr;
	struct openrdma_ah *ah;
	int ret;

	if (!pd)
		return -OPENRDMA_ENOENT;
	ret = openrdma_ah_create(pd, &attr, &ah);
	if (ret)
		return ret;
	ret = conf_agent_add(agent, CONF_K_AH, ah, NULL, &rep->a.ah.id);
	if (ret)
		openrdma_ah_destroy(ah);
	return ret;
}

static int do_ah_from_wc(struct conf_agent *agent, const struct conf_msg *req,
			 struct conf_msg *rep)
{
	struct openrdma_pd *pd =
		conf_agent_get(agent, CONF_K_PD, req->a.ah_wc.pd);
	uint8_t *grh = conf_agent_mem(agent, req->a.ah_wc.mr, req->a.ah_wc.off,
				      OPENRDMA_GRH_LEN);
	struct openrdma_ah_attr attr;
	struct openrdma_ah *ah;
	int ret;

	if (!pd || !grh)
		return -OPENRDMA_ENOENT;
	ret = openrdma_ah_attr_from_wc(agent->ctx, 1, &req->a.ah_wc.wc,
				       (const struct openrdma_grh *)grh, &attr);
	if (ret)
		return ret;
	ret = openrdma_ah_create(pd, &attr, &ah);
	if (ret)
		return ret;
	ret = conf_agent_add(agent, CONF_K_AH, ah, NULL, &rep->a.ah_wc.id);
	if (ret)
		openrdma_ah_destroy(ah);
	return ret;
}

static int do_destroy(struct conf_agent *agent, const struct conf_msg *req,
		      struct conf_msg *rep)
{
	uint32_t id = req->a.destroy.id;

	if (!conf_agent_get(agent, (enum conf_kind)req->a.destroy.kind, id))
		return -OPENRDMA_ENOENT;
	return destroy_obj(&agent->obj[id - 1]);
}

static int do_quit(struct conf_agent *agent, const struct conf_msg *req,
		   struct conf_msg *rep)
{
	return 0; /* the server loop frees the agent */
}

static int do_mw_rkey(struct conf_agent *agent, const struct conf_msg *req,
		      struct conf_msg *rep)
{
	struct openrdma_mw *mw = conf_agent_get(agent, CONF_K_MW, req->a.mw.id);

	if (!mw)
		return -OPENRDMA_ENOENT;
	rep->a.mw.rkey = mw->rkey;
	return 0;
}

static const conf_agent_fn handlers[CONF_OP_MAX] = {
	[CONF_OP_AH_CREATE] = do_ah_create,
	[CONF_OP_AH_FROM_WC] = do_ah_from_wc,
	[CONF_OP_ASYNC_GET] = conf_agent_async_get,
	[CONF_OP_CM_ACCEPT] = conf_agent_cm_call,
	[CONF_OP_CM_CONNECT] = conf_agent_cm_connect,
	[CONF_OP_CM_DISCONNECT] = conf_agent_cm_call,
	[CONF_OP_CM_EVENT] = conf_agent_cm_event,
	[CONF_OP_CM_LISTEN] = conf_agent_cm_listen,
	[CONF_OP_CM_REJECT] = conf_agent_cm_call,
	[CONF_OP_CQ_CREATE] = do_cq_create,
	[CONF_OP_DESTROY] = do_destroy,
	[CONF_OP_MEM_READ] = do_mem_read,
	[CONF_OP_MEM_WRITE] = do_mem_write,
	[CONF_OP_MR_REG] = do_mr_reg,
	[CONF_OP_MW_ALLOC] = do_mw_alloc,
	[CONF_OP_MW_BIND] = do_mw_bind,
	[CONF_OP_MW_RKEY] = do_mw_rkey,
	[CONF_OP_OPEN] = do_open,
	[CONF_OP_PD_ALLOC] = do_pd_alloc,
	[CONF_OP_POLL] = conf_agent_poll,
	[CONF_OP_POST_RECV] = conf_agent_post_recv,
	[CONF_OP_POST_SEND] = conf_agent_post_send,
	[CONF_OP_QP_CREATE] = do_qp_create,
	[CONF_OP_QP_MODIFY] = do_qp_modify,
	[CONF_OP_QP_QUERY] = do_qp_query,
	[CONF_OP_QUIT] = do_quit,
	[CONF_OP_SRQ_CREATE] = do_srq_create,
	[CONF_OP_SRQ_MODIFY] = do_srq_modify,
};

void conf_agent_exec(struct conf_agent *agent, const struct conf_msg *req,
		     struct conf_msg *rep)
{
	memset(rep, 0, CONF_MSG_HDR_LEN);
	rep->op = req->op;
	if (req->op >= CONF_OP_MAX || !handlers[req->op])
		rep->ret = -OPENRDMA_EPROTO;
	else if (!agent->ctx && req->op != CONF_OP_OPEN &&
		 req->op != CONF_OP_QUIT)
		rep->ret = -OPENRDMA_ENODEV;
	else
		rep->ret = handlers[req->op](agent, req, rep);
}
