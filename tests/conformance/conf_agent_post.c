/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The agent's data path: posting work requests described on the wire,
 * polling its CQs and taking its async events.
 */
#include <stdlib.h>

#include "conf_agent.h"
#include "conf_sys.h"

/* Turns n wire SGEs into verbs SGEs of the agent's MRs. */
static int sges(struct conf_agent *agent, const struct conf_wire_sge *w, int n,
		struct openrdma_sge *sge)
{
	struct openrdma_mr *mr;
	int i;

	if (n < 0 || n > CONF_PEER_MAX_SGE)
		return -OPENRDMA_EINVAL;
	for (i = 0; i < n; i++) {
		mr = conf_agent_get(agent, CONF_K_MR, w[i].mr);
		if (!mr)
			return -OPENRDMA_ENOENT;
		sge[i] = (struct openrdma_sge){
			.addr = (uintptr_t)agent->obj[w[i].mr - 1].buf +
				w[i].off,
			.length = w[i].len,
			.lkey = mr->lkey,
		};
	}
	return 0;
}

struct agent_send {
	struct openrdma_send_wr wr;
	struct openrdma_sge sge[CONF_PEER_MAX_SGE];
};

static int send_wr(struct conf_agent *agent, const struct conf_wire_send *w,
		   struct agent_send *s)
{
	struct openrdma_mr *bmr = NULL;
	int ret;

	ret = sges(agent, w->sge, w->num_sge, s->sge);
	if (ret)
		return ret;
	s->wr = (struct openrdma_send_wr){
		.wr_id = w->wr_id,
		.sg_list = s->sge,
		.num_sge = w->num_sge,
		.opcode = (enum openrdma_wr_opcode)w->opcode,
		.send_flags = w->flags,
		.imm_data = w->imm,
	};
	switch (w->opcode) {
	case OPENRDMA_WR_ATOMIC_CMP_AND_SWP:
	case OPENRDMA_WR_ATOMIC_FETCH_AND_ADD:
		s->wr.wr.atomic.remote_addr = w->remote_addr;
		s->wr.wr.atomic.compare_add = w->compare_add;
		s->wr.wr.atomic.swap = w->swap;
		s->wr.wr.atomic.rkey = w->rkey;
		break;
	case OPENRDMA_WR_BIND_MW:
		s->wr.bind_mw.mw = conf_agent_get(agent, CONF_K_MW, w->mw);
		s->wr.bind_mw.rkey = w->bind_rkey;
		if (w->bind_mr) {
			bmr = conf_agent_get(agent, CONF_K_MR, w->bind_mr);
			if (!bmr)
				return -OPENRDMA_ENOENT;
			s->wr.bind_mw.bind_info.addr =
				(uintptr_t)bmr->addr + w->bind_off;
		}
		s->wr.bind_mw.bind_info.mr = bmr;
		s->wr.bind_mw.bind_info.length = w->bind_len;
		s->wr.bind_mw.bind_info.mw_access_flags = w->bind_access;
		break;
	default:
		if (w->ah) {
			s->wr.wr.ud.ah =
				conf_agent_get(agent, CONF_K_AH, w->ah);
			s->wr.wr.ud.remote_qpn = w->remote_qpn;
			s->wr.wr.ud.remote_qkey = w->remote_qkey;
		} else {
			s->wr.wr.rdma.remote_addr = w->remote_addr;
			s->wr.wr.rdma.rkey = w->rkey;
		}
		break;
	}
	return 0;
}

int conf_agent_post_send(struct conf_agent *agent, const struct conf_msg *req,
			 struct conf_msg *rep)
{
	const struct conf_wire_send *w = (const void *)req->data;
	struct openrdma_qp *qp =
		conf_agent_get(agent, CONF_K_QP, req->a.post.id);
	uint32_t n = req->a.post.count, i;
	struct openrdma_send_wr *bad = NULL;
	struct agent_send *s;
	int ret;

	rep->a.post.bad = -1;
	if (!qp)
		return -OPENRDMA_ENOENT;
	if (n == 0 || n * sizeof(*w) > req->data_len)
		return -OPENRDMA_EPROTO;
	s = calloc(n, sizeof(*s));
	if (!s)
		return -OPENRDMA_ENOMEM;
	for (i = 0; i < n; i++) {
		ret = send_wr(agent, &w[i], &s[i]);
		if (ret)
			goto out;
		if (i)
			s[i - 1].wr.next = &s[i].wr;
	}
	ret = openrdma_qp_post_send(qp, &s[0].wr, &bad);
	if (ret && bad)
		rep->a.post.bad =
			(int32_t)(((struct agent_send *)(void *)bad) - s);
out:
	free(s);
	return ret;
}

struct agent_recv {
	struct openrdma_recv_wr wr;
	struct openrdma_sge sge[CONF_PEER_MAX_SGE];
};

int conf_agent_post_recv(struct conf_agent *agent, const struct conf_msg *req,
			 struct conf_msg *rep)
{
	const struct conf_wire_recv *w = (const void *)req->data;
	uint32_t n = req->a.post.count, i;
	struct openrdma_recv_wr *bad = NULL;
	struct openrdma_srq *srq = NULL;
	struct openrdma_qp *qp = NULL;
	struct agent_recv *r;
	int ret;

	rep->a.post.bad = -1;
	if (req->a.post.srq)
		srq = conf_agent_get(agent, CONF_K_SRQ, req->a.post.id);
	else
		qp = conf_agent_get(agent, CONF_K_QP, req->a.post.id);
	if (!qp && !srq)
		return -OPENRDMA_ENOENT;
	if (n == 0 || n * sizeof(*w) > req->data_len)
		return -OPENRDMA_EPROTO;
	r = calloc(n, sizeof(*r));
	if (!r)
		return -OPENRDMA_ENOMEM;
	for (i = 0; i < n; i++) {
		ret = sges(agent, w[i].sge, w[i].num_sge, r[i].sge);
		if (ret)
			goto out;
		r[i].wr = (struct openrdma_recv_wr){ .wr_id = w[i].wr_id,
						     .sg_list = r[i].sge,
						     .num_sge = w[i].num_sge };
		if (i)
			r[i - 1].wr.next = &r[i].wr;
	}
	if (srq)
		ret = openrdma_srq_post_recv(srq, &r[0].wr, &bad);
	else
		ret = openrdma_qp_post_recv(qp, &r[0].wr, &bad);
	if (ret && bad)
		rep->a.post.bad =
			(int32_t)(((struct agent_recv *)(void *)bad) - r);
out:
	free(r);
	return ret;
}

int conf_agent_poll(struct conf_agent *agent, const struct conf_msg *req,
		    struct conf_msg *rep)
{
	struct openrdma_cq *cq =
		conf_agent_get(agent, CONF_K_CQ, req->a.poll.cq);
	struct openrdma_wc *wc = (void *)rep->data;
	int max = req->a.poll.max, n;

	if (!cq)
		return -OPENRDMA_ENOENT;
	if (max < 0 || (size_t)max * sizeof(*wc) > CONF_DATA_MAX)
		return -OPENRDMA_EINVAL;
	n = conf_cq_collect(cq, max, wc, req->a.poll.timeout_ms);
	if (n > 0)
		rep->data_len = (uint32_t)((size_t)n * sizeof(*wc));
	return n;
}

/* The table id of the object an async event names. */
static void async_element(struct conf_agent *agent,
			  const struct openrdma_async_event *ev,
			  struct conf_msg *rep)
{
	switch (ev->event_type) {
	case OPENRDMA_EVENT_CQ_ERR:
		rep->a.async.kind = CONF_K_CQ;
		rep->a.async.id =
			conf_agent_find(agent, CONF_K_CQ, ev->element.cq);
		break;
	case OPENRDMA_EVENT_SRQ_ERR:
	case OPENRDMA_EVENT_SRQ_LIMIT_REACHED:
		rep->a.async.kind = CONF_K_SRQ;
		rep->a.async.id =
			conf_agent_find(agent, CONF_K_SRQ, ev->element.srq);
		break;
	case OPENRDMA_EVENT_DEVICE_FATAL:
	case OPENRDMA_EVENT_PORT_ACTIVE:
	case OPENRDMA_EVENT_PORT_ERR:
	case OPENRDMA_EVENT_LID_CHANGE:
	case OPENRDMA_EVENT_PKEY_CHANGE:
	case OPENRDMA_EVENT_SM_CHANGE:
	case OPENRDMA_EVENT_CLIENT_REREGISTER:
	case OPENRDMA_EVENT_GID_CHANGE:
		rep->a.async.kind = CONF_K_NONE;
		rep->a.async.id = (uint32_t)ev->element.port_num;
		break;
	default:
		rep->a.async.kind = CONF_K_QP;
		rep->a.async.id =
			conf_agent_find(agent, CONF_K_QP, ev->element.qp);
		break;
	}
}

int conf_agent_async_get(struct conf_agent *agent, const struct conf_msg *req,
			 struct conf_msg *rep)
{
	struct openrdma_async_event ev;
	int ret;

	ret = conf_async_wait(agent->ctx, req->a.async.timeout_ms, &ev);
	if (ret)
		return ret;
	rep->a.async.type = ev.event_type;
	async_element(agent, &ev, rep);
	openrdma_async_event_ack(&ev);
	return 0;
}
