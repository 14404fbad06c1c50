/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Connected pairs: RC QPs connected by the CM or by modify-QP, and UD QPs
 * with address handles both ways.  Side A is always the active side.
 */
#include "conf.h"

#define CONF_RD_ATOM_MAX 16

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static uint8_t rd_atom(int dev_max)
{
	return (uint8_t)min_u32(dev_max > 0 ? (uint32_t)dev_max : 0,
				CONF_RD_ATOM_MAX);
}

void conf_rc_create(struct conf_test *t, struct conf_rc *rc,
		    const struct conf_rc_opts *opts)
{
	static const struct conf_rc_opts defaults;
	struct openrdma_qp_init_attr init = { .qp_type = OPENRDMA_QPT_RC };
	struct openrdma_qp_cap cap;
	uint32_t max_sge = (uint32_t)t->attr.max_sge;
	int cqe;

	if (!opts)
		opts = &defaults;
	memset(rc, 0, sizeof(*rc));
	cap = opts->cap;
	if (!cap.max_send_wr)
		cap.max_send_wr = 64;
	if (!cap.max_recv_wr)
		cap.max_recv_wr = 64;
	if (!cap.max_send_sge)
		cap.max_send_sge = min_u32(CONF_PEER_MAX_SGE, max_sge);
	if (!cap.max_recv_sge)
		cap.max_recv_sge = min_u32(CONF_PEER_MAX_SGE, max_sge);
	cqe = opts->cqe ? opts->cqe : (int)(cap.max_send_wr + cap.max_recv_wr);

	rc->scq = conf_cq_new(t, cqe, opts->channel, &rc->scq);
	rc->rcq = conf_cq_new(t, cqe, opts->channel, &rc->rcq);
	init.send_cq = rc->scq;
	init.recv_cq = rc->rcq;
	init.srq = opts->srq;
	init.cap = cap;
	init.sq_sig_all = opts->sq_sig_all;
	rc->qp = conf_qp_new(t, &init);

	rc->pscq = conf_peer_cq_create(t, cqe);
	rc->prcq = conf_peer_cq_create(t, cqe);
	rc->pqp = conf_peer_qp_create(t, t->ppd, OPENRDMA_QPT_RC, rc->pscq,
				      rc->prcq, opts->psrq, &cap, 0);
}

int conf_rc_attr(struct conf_test *t, enum openrdma_qp_state to,
		 const struct sockaddr_storage *addr, uint32_t dest_qpn,
		 bool few_retries, struct openrdma_qp_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = to;
	switch (to) {
	case OPENRDMA_QPS_INIT:
		attr->port_num = 1;
		attr->qp_access_flags = OPENRDMA_ACCESS_REMOTE_WRITE |
					OPENRDMA_ACCESS_REMOTE_READ |
					OPENRDMA_ACCESS_REMOTE_ATOMIC;
		return OPENRDMA_QP_STATE | OPENRDMA_QP_PKEY_INDEX |
		       OPENRDMA_QP_PORT | OPENRDMA_QP_ACCESS_FLAGS;
	case OPENRDMA_QPS_RTR:
		attr->path_mtu = t->port.active_mtu ? t->port.active_mtu :
						      OPENRDMA_MTU_1024;
		attr->dest_qp_num = dest_qpn;
		attr->max_dest_rd_atomic = rd_atom(t->attr.max_qp_rd_atom);
		attr->min_rnr_timer = 1; /* 0.01 ms: RNR tests stay short */
		attr->ah_attr.port_num = 1;
		if (addr)
			attr->ah_attr.addr = *addr;
		return OPENRDMA_QP_STATE | OPENRDMA_QP_AV |
		       OPENRDMA_QP_PATH_MTU | OPENRDMA_QP_DEST_QPN |
		       OPENRDMA_QP_RQ_PSN | OPENRDMA_QP_MAX_DEST_RD_ATOMIC |
		       OPENRDMA_QP_MIN_RNR_TIMER;
	case OPENRDMA_QPS_RTS:
		attr->timeout = 14;
		attr->retry_cnt = few_retries ? 1 : 7;
		attr->rnr_retry = few_retries ? 1 : 7;
		attr->max_rd_atomic = rd_atom(t->attr.max_qp_init_rd_atom);
		return OPENRDMA_QP_STATE | OPENRDMA_QP_TIMEOUT |
		       OPENRDMA_QP_RETRY_CNT | OPENRDMA_QP_RNR_RETRY |
		       OPENRDMA_QP_SQ_PSN | OPENRDMA_QP_MAX_QP_RD_ATOMIC;
	default:
		return OPENRDMA_QP_STATE;
	}
}

static const enum openrdma_qp_state conf_rc_path[] = {
	OPENRDMA_QPS_INIT,
	OPENRDMA_QPS_RTR,
	OPENRDMA_QPS_RTS,
};

int conf_qp_to_rts(struct conf_test *t, struct openrdma_qp *qp,
		   const struct sockaddr_storage *addr, uint32_t dest_qpn,
		   bool few_retries)
{
	struct openrdma_qp_attr attr;
	size_t i;
	int mask, ret;

	for (i = 0; i < sizeof(conf_rc_path) / sizeof(conf_rc_path[0]); i++) {
		mask = conf_rc_attr(t, conf_rc_path[i], addr, dest_qpn,
				    few_retries, &attr);
		ret = openrdma_qp_modify(qp, &attr, mask);
		if (ret)
			return ret;
	}
	return 0;
}

int conf_peer_qp_to_rts(struct conf_test *t, uint32_t qp,
			const struct sockaddr_storage *addr, uint32_t dest_qpn,
			bool few_retries)
{
	struct openrdma_qp_attr attr;
	size_t i;
	int mask, ret;

	for (i = 0; i < sizeof(conf_rc_path) / sizeof(conf_rc_path[0]); i++) {
		mask = conf_rc_attr(t, conf_rc_path[i], addr, dest_qpn,
				    few_retries, &attr);
		ret = conf_peer_qp_modify(t, qp, &attr, mask);
		if (ret)
			return ret;
	}
	return 0;
}

void conf_rc_connect_manual(struct conf_test *t, struct conf_rc *rc,
			    const struct conf_rc_opts *opts)
{
	bool few = opts && opts->few_retries;
	int ret;

	ret = conf_qp_to_rts(t, rc->qp, &t->pport.addr, rc->pqp.qpn, few);
	if (ret == -OPENRDMA_EOPNOTSUPP)
		cr_skip_test("%s: transport %s connects RC QPs only through "
			     "the CM (modify to RTR: not supported)",
			     t->ifname, t->attr.transport);
	cr_assert_eq(ret, 0, "manual connect, side A: %s",
		     openrdma_strerror(ret));
	ret = conf_peer_qp_to_rts(t, rc->pqp.id, &t->port.addr, rc->qp->qp_num,
				  few);
	cr_assert_eq(ret, 0, "manual connect, side B: %s",
		     openrdma_strerror(ret));
	conf_state_expect(rc->qp, OPENRDMA_QPS_RTS);
	conf_peer_state_expect(t, rc->pqp.id, OPENRDMA_QPS_RTS);
}

void conf_conn_param(struct conf_test *t, bool few,
		     struct openrdma_conn_param *p)
{
	*p = (struct openrdma_conn_param){
		.responder_resources = rd_atom(t->attr.max_qp_rd_atom),
		.initiator_depth = rd_atom(t->attr.max_qp_init_rd_atom),
		.retry_count = few ? 1 : 7,
		.rnr_retry_count = few ? 1 : 7,
	};
}

void conf_rc_connect_cm(struct conf_test *t, struct conf_rc *rc,
			const struct conf_rc_opts *opts)
{
	bool few = opts && opts->few_retries;
	struct openrdma_conn_param param;
	struct conf_wire_param pparam = { 0 };
	struct conf_wire_cm_event pev;
	struct openrdma_cm_event *ev;
	struct sockaddr_storage addr;

	rc->plisten = conf_peer_cm_listen(t, 8, &addr);
	rc->listen_port = conf_addr_port(&addr);
	CONF_OK(openrdma_cm_id_create(t->ctx, t->cm_ch, rc, OPENRDMA_PS_TCP,
				      &rc->id));
	conf_track(t, CONF_K_CM_ID, rc->id);
	conf_conn_param(t, few, &param);
	CONF_OK(openrdma_cm_connect(rc->id, rc->qp, (struct sockaddr *)&addr,
				    &param));

	conf_peer_cm_expect(t, OPENRDMA_CM_EVENT_CONNECT_REQUEST, &pev);
	cr_assert_eq(pev.listen_id, rc->plisten,
		     "CONNECT_REQUEST not reported on the listening id");
	cr_assert_eq(pev.qp_num, rc->qp->qp_num,
		     "CONNECT_REQUEST carries QPN %u, want %u", pev.qp_num,
		     rc->qp->qp_num);
	rc->pid = pev.id;
	pparam.responder_resources = param.responder_resources;
	pparam.initiator_depth = param.initiator_depth;
	pparam.retry_count = param.retry_count;
	pparam.rnr_retry_count = param.rnr_retry_count;
	CONF_OK(conf_peer_cm_accept(t, rc->pid, rc->pqp.id, &pparam));

	ev = conf_cm_expect(t, OPENRDMA_CM_EVENT_ESTABLISHED);
	cr_assert_eq(ev->id, rc->id);
	cr_assert_eq(ev->param.qp_num, rc->pqp.qpn,
		     "ESTABLISHED carries QPN %u, want %u", ev->param.qp_num,
		     rc->pqp.qpn);
	openrdma_cm_event_ack(ev);
	conf_peer_cm_expect(t, OPENRDMA_CM_EVENT_ESTABLISHED, &pev);
	cr_assert_eq(pev.id, rc->pid);
	conf_state_expect(rc->qp, OPENRDMA_QPS_RTS);
	conf_peer_state_expect(t, rc->pqp.id, OPENRDMA_QPS_RTS);
}

void conf_rc_connect(struct conf_test *t, struct conf_rc *rc,
		     const struct conf_rc_opts *opts)
{
	conf_rc_create(t, rc, opts);
	if ((opts && opts->manual) || t->connect == CONF_CONNECT_MANUAL)
		conf_rc_connect_manual(t, rc, opts);
	else
		conf_rc_connect_cm(t, rc, opts);
}

int conf_ud_attr(enum openrdma_qp_state to, struct openrdma_qp_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = to;
	switch (to) {
	case OPENRDMA_QPS_INIT:
		attr->port_num = 1;
		attr->qkey = CONF_QKEY;
		return OPENRDMA_QP_STATE | OPENRDMA_QP_PKEY_INDEX |
		       OPENRDMA_QP_PORT | OPENRDMA_QP_QKEY;
	case OPENRDMA_QPS_RTS:
		return OPENRDMA_QP_STATE | OPENRDMA_QP_SQ_PSN;
	default:
		return OPENRDMA_QP_STATE;
	}
}

void conf_ud_create(struct conf_test *t, struct conf_ud *ud)
{
	struct openrdma_qp_init_attr init = {
		.qp_type = OPENRDMA_QPT_UD,
		.cap = { .max_send_wr = 64,
			 .max_recv_wr = 64,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct openrdma_ah_attr ah = { .port_num = 1 };
	struct openrdma_qp_attr attr;
	size_t i;
	int mask;

	conf_require_cap(t, OPENRDMA_DEVICE_UD, "UD queue pairs");
	memset(ud, 0, sizeof(*ud));
	ud->cq = conf_cq_new(t, 256, NULL, NULL);
	init.send_cq = ud->cq;
	init.recv_cq = ud->cq;
	ud->qp = conf_qp_new(t, &init);
	ud->pcq = conf_peer_cq_create(t, 256);
	ud->pqp = conf_peer_qp_create(t, t->ppd, OPENRDMA_QPT_UD, ud->pcq,
				      ud->pcq, 0, &init.cap, 0);
	for (i = 0; i < sizeof(conf_rc_path) / sizeof(conf_rc_path[0]); i++) {
		mask = conf_ud_attr(conf_rc_path[i], &attr);
		CONF_OK(openrdma_qp_modify(ud->qp, &attr, mask));
		CONF_OK(conf_peer_qp_modify(t, ud->pqp.id, &attr, mask));
	}
	ah.addr = t->pport.addr;
	CONF_OK(openrdma_ah_create(t->pd, &ah, &ud->ah));
	conf_track(t, CONF_K_AH, ud->ah);
	ah.addr = t->port.addr;
	ud->pah = conf_peer_ah_create(t, t->ppd, &ah);
}

#define TRAFFIC_SEED_A 1
#define TRAFFIC_SEED_B 2

/* A sends to B, B sends to A, A writes into B: all must arrive. */
void conf_rc_traffic(struct conf_test *t, struct conf_rc *rc)
{
	struct conf_wire_send pwr = { .wr_id = 30,
				      .opcode = OPENRDMA_WR_SEND,
				      .flags = OPENRDMA_SEND_SIGNALED,
				      .num_sge = 1 };
	struct conf_mem *am;
	struct openrdma_wc wc;
	struct conf_pmr bm;

	am = conf_mem_new(t, t->pd, 1024, OPENRDMA_ACCESS_LOCAL_WRITE,
			  TRAFFIC_SEED_A);
	bm = conf_peer_mr_reg(t, t->ppd, 1024,
			      OPENRDMA_ACCESS_LOCAL_WRITE |
				      OPENRDMA_ACCESS_REMOTE_WRITE,
			      TRAFFIC_SEED_B);
	conf_peer_recv(t, rc->pqp.id, 20, &bm, 512, 256);
	conf_send(rc->qp, 1, am, 0, 256);
	conf_poll_n(t, rc->scq, 1, &wc);
	conf_wc_expect(&wc, 1, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_SEND);
	conf_peer_poll_n(t, rc->prcq, 1, &wc);
	conf_wc_expect(&wc, 20, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_RECV);
	cr_assert_eq(wc.qp_num, rc->pqp.qpn);
	conf_peer_mem_expect(t, &bm, 512, 256, TRAFFIC_SEED_A, 0);

	conf_post_recv(rc->qp, 2, am, 512, 256);
	pwr.sge[0] = conf_psge(&bm, 0, 256);
	CONF_OK(conf_peer_post_send(t, rc->pqp.id, &pwr, 1, NULL));
	conf_peer_poll_n(t, rc->pscq, 1, &wc);
	conf_wc_expect(&wc, 30, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_SEND);
	conf_poll_n(t, rc->rcq, 1, &wc);
	conf_wc_expect(&wc, 2, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_RECV);
	cr_assert_eq(wc.byte_len, 256);
	CONF_EXPECT_PATTERN(am->buf + 512, 256, TRAFFIC_SEED_B, 0);

	conf_rdma(rc->qp, OPENRDMA_WR_RDMA_WRITE, 3, am, 0, 128,
		  conf_pmr_raddr(&bm, 768), bm.rkey);
	conf_poll_n(t, rc->scq, 1, &wc);
	conf_wc_expect(&wc, 3, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_RDMA_WRITE);
	conf_peer_mem_expect(t, &bm, 768, 128, TRAFFIC_SEED_A, 0);
}
