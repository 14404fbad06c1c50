/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The agent's connection manager: listen, connect, accept, reject,
 * disconnect, and events with their ids registered in the table.
 */
#include <string.h>

#include "conf_agent.h"
#include "conf_sys.h"

int conf_agent_cm_listen(struct conf_agent *agent, const struct conf_msg *req,
			 struct conf_msg *rep)
{
	struct openrdma_cm_id *id;
	int ret;

	ret = openrdma_cm_id_create(agent->ctx, agent->cm_ch, NULL,
				    OPENRDMA_PS_TCP, &id);
	if (ret)
		return ret;
	ret = conf_agent_add(agent, CONF_K_CM_ID, id, NULL, &rep->a.listen.id);
	if (ret) {
		openrdma_cm_id_destroy(id);
		return ret;
	}
	ret = openrdma_cm_listen(id,
				 (const struct sockaddr *)&req->a.listen.addr,
				 req->a.listen.backlog);
	if (ret)
		return ret;
	return openrdma_cm_local_addr(id, &rep->a.listen.addr);
}

/* A conn_param from its wire form; NULL when the request asks for none. */
static const struct openrdma_conn_param *
conn_param(const struct conf_wire_param *w, struct openrdma_conn_param *p)
{
	if (w->no_param)
		return NULL;
	*p = (struct openrdma_conn_param){
		.private_data = w->has_pdata ? w->pdata : NULL,
		.private_data_len = w->pdata_len,
		.responder_resources = w->responder_resources,
		.initiator_depth = w->initiator_depth,
		.retry_count = w->retry_count,
		.rnr_retry_count = w->rnr_retry_count,
		.three_way = w->three_way,
	};
	return p;
}

int conf_agent_cm_connect(struct conf_agent *agent, const struct conf_msg *req,
			  struct conf_msg *rep)
{
	struct openrdma_qp *qp = conf_agent_get(agent, CONF_K_QP, req->a.cm.qp);
	struct openrdma_conn_param param;
	struct openrdma_cm_id *id;
	int ret;

	if (!qp)
		return -OPENRDMA_ENOENT;
	ret = openrdma_cm_id_create(agent->ctx, agent->cm_ch, NULL,
				    OPENRDMA_PS_TCP, &id);
	if (ret)
		return ret;
	ret = conf_agent_add(agent, CONF_K_CM_ID, id, NULL, &rep->a.cm.id);
	if (ret) {
		openrdma_cm_id_destroy(id);
		return ret;
	}
	return openrdma_cm_connect(id, qp,
				   (const struct sockaddr *)&req->a.cm.dst,
				   conn_param(&req->a.cm.param, &param));
}

int conf_agent_cm_call(struct conf_agent *agent, const struct conf_msg *req,
		       struct conf_msg *rep)
{
	struct openrdma_cm_id *id =
		conf_agent_get(agent, CONF_K_CM_ID, req->a.cm.id);
	const struct conf_wire_param *w = &req->a.cm.param;
	struct openrdma_conn_param param;
	struct openrdma_qp *qp = NULL;

	if (!id)
		return -OPENRDMA_ENOENT;
	if (req->a.cm.qp) {
		qp = conf_agent_get(agent, CONF_K_QP, req->a.cm.qp);
		if (!qp)
			return -OPENRDMA_ENOENT;
	}
	switch (req->op) {
	case CONF_OP_CM_ACCEPT:
		return openrdma_cm_accept(id, qp, conn_param(w, &param));
	case CONF_OP_CM_REJECT:
		return openrdma_cm_reject(id, w->has_pdata ? w->pdata : NULL,
					  w->pdata_len);
	default:
		return openrdma_cm_disconnect(
			id, w->has_pdata ? w->pdata : NULL, w->pdata_len);
	}
}

int conf_agent_cm_event(struct conf_agent *agent, const struct conf_msg *req,
			struct conf_msg *rep)
{
	struct conf_wire_cm_event *w = &rep->a.cm_event.ev;
	struct openrdma_cm_event *ev;
	int ret;

	ret = conf_cm_wait(agent->cm_ch, req->a.cm_event.timeout_ms, &ev);
	if (ret)
		return ret;
	*w = (struct conf_wire_cm_event){
		.type = ev->event,
		.status = ev->status,
		.qp_num = ev->param.qp_num,
		.pdata_len = ev->param.private_data_len,
		.responder_resources = ev->param.responder_resources,
		.initiator_depth = ev->param.initiator_depth,
	};
	memcpy(w->pdata, ev->param.private_data, sizeof(w->pdata));
	w->listen_id = conf_agent_find(agent, CONF_K_CM_ID, ev->listen_id);
	w->id = conf_agent_find(agent, CONF_K_CM_ID, ev->id);
	/* a request's new id joins the table */
	if (!w->id && ev->id && ev->event == OPENRDMA_CM_EVENT_CONNECT_REQUEST)
		ret = conf_agent_add(agent, CONF_K_CM_ID, ev->id, NULL, &w->id);
	openrdma_cm_event_ack(ev);
	return ret;
}
