/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The QP state machine through the public API: legal transitions succeed
 * and openrdma_qp_query() reports them; illegal ones, missing required
 * attributes and invalid states fail with -EINVAL and change nothing.
 */
#include "conf.h"

static struct openrdma_qp *new_qp(struct conf_test *t,
				  enum openrdma_qp_type type)
{
	struct openrdma_cq *cq = conf_cq_new(t, 16, NULL, NULL);
	struct openrdma_qp_init_attr init = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 4,
			 .max_recv_wr = 4,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = type,
	};

	return conf_qp_new(t, &init);
}

/* One modify that must succeed and land in attr->qp_state. */
static void legal(struct openrdma_qp *qp, struct openrdma_qp_attr *attr,
		  int mask)
{
	enum openrdma_qp_state from = conf_qp_state(qp);
	int ret;

	ret = openrdma_qp_modify(qp, attr, mask);
	cr_assert_eq(ret, 0, "%s -> %s: %s", openrdma_qp_state_str(from),
		     openrdma_qp_state_str(attr->qp_state),
		     openrdma_strerror(ret));
	conf_state_expect(qp, attr->qp_state);
	cr_assert_eq(qp->state, (int)attr->qp_state,
		     "qp->state does not follow the modify");
}

/* One modify that must fail with -EINVAL and leave the state as it was. */
static void illegal(struct openrdma_qp *qp, struct openrdma_qp_attr *attr,
		    int mask, const char *why)
{
	enum openrdma_qp_state from = conf_qp_state(qp);
	int ret;

	ret = openrdma_qp_modify(qp, attr, mask);
	cr_assert_eq(ret, -OPENRDMA_EINVAL,
		     "%s -> %s (%s): got %s, want EINVAL",
		     openrdma_qp_state_str(from),
		     openrdma_qp_state_str(attr->qp_state), why,
		     openrdma_strerror(ret));
	conf_state_expect(qp, from);
}

static void to_state(struct openrdma_qp *qp, enum openrdma_qp_state to)
{
	struct openrdma_qp_attr attr = { .qp_state = to };

	legal(qp, &attr, OPENRDMA_QP_STATE);
}

/* To RESET, or skip where the transport says it cannot. */
static void to_reset(struct conf_test *t, struct openrdma_qp *qp)
{
	struct openrdma_qp_attr attr = { .qp_state = OPENRDMA_QPS_RESET };
	enum openrdma_qp_state from = conf_qp_state(qp);
	int ret;

	ret = openrdma_qp_modify(qp, &attr, OPENRDMA_QP_STATE);
	if (ret == -OPENRDMA_EOPNOTSUPP)
		conf_state_expect(qp, from); /* the refusal changed nothing */
	conf_skip_no_reset(t, ret);
	cr_assert_eq(ret, 0, "%s -> RESET: %s", openrdma_qp_state_str(from),
		     openrdma_strerror(ret));
	conf_state_expect(qp, OPENRDMA_QPS_RESET);
	cr_assert_eq(qp->state, (int)OPENRDMA_QPS_RESET,
		     "qp->state does not follow the modify");
}

static void bare(struct openrdma_qp *qp, enum openrdma_qp_state to,
		 const char *why)
{
	struct openrdma_qp_attr attr = { .qp_state = to };

	illegal(qp, &attr, OPENRDMA_QP_STATE, why);
}

CONF_TEST(qp_state, rc_reset_init_err_reset)
{
	struct conf_test *t = conf_setup(CONF_LOCAL_ONLY);
	struct openrdma_qp *qp = new_qp(t, OPENRDMA_QPT_RC);
	struct openrdma_qp_attr attr;
	int mask;

	mask = conf_rc_attr(t, OPENRDMA_QPS_INIT, NULL, 0, false, &attr);
	legal(qp, &attr, mask);
	legal(qp, &attr, mask); /* INIT -> INIT */
	to_state(qp, OPENRDMA_QPS_ERR);
	to_state(qp, OPENRDMA_QPS_ERR); /* ERR -> ERR */
	to_reset(t, qp);
	to_state(qp, OPENRDMA_QPS_ERR); /* RESET -> ERR */
	to_reset(t, qp);
	legal(qp, &attr, mask);
	to_reset(t, qp); /* INIT -> RESET */
}

CONF_TEST(qp_state, rc_illegal_transitions)
{
	struct conf_test *t = conf_setup(CONF_LOCAL_ONLY);
	struct openrdma_qp *qp = new_qp(t, OPENRDMA_QPT_RC);
	struct openrdma_qp_attr attr;
	int mask;

	/* from RESET only INIT, RESET and ERR are reachable */
	mask = conf_rc_attr(t, OPENRDMA_QPS_RTR, &t->port.addr, qp->qp_num,
			    false, &attr);
	illegal(qp, &attr, mask, "RESET to RTR");
	mask = conf_rc_attr(t, OPENRDMA_QPS_RTS, NULL, 0, false, &attr);
	illegal(qp, &attr, mask, "RESET to RTS");
	bare(qp, OPENRDMA_QPS_SQD, "RESET to SQD");
	bare(qp, OPENRDMA_QPS_SQE, "SQE is entered only by the device");

	/* from INIT, RTS needs RTR first */
	mask = conf_rc_attr(t, OPENRDMA_QPS_INIT, NULL, 0, false, &attr);
	legal(qp, &attr, mask);
	mask = conf_rc_attr(t, OPENRDMA_QPS_RTS, NULL, 0, false, &attr);
	illegal(qp, &attr, mask, "INIT to RTS");

	/* from ERR only RESET (and ERR) */
	to_state(qp, OPENRDMA_QPS_ERR);
	mask = conf_rc_attr(t, OPENRDMA_QPS_INIT, NULL, 0, false, &attr);
	illegal(qp, &attr, mask, "ERR to INIT");
	mask = conf_rc_attr(t, OPENRDMA_QPS_RTS, NULL, 0, false, &attr);
	illegal(qp, &attr, mask, "ERR to RTS");
}

CONF_TEST(qp_state, missing_or_invalid_attributes)
{
	struct conf_test *t = conf_setup(CONF_LOCAL_ONLY);
	struct openrdma_qp *qp = new_qp(t, OPENRDMA_QPT_RC);
	struct openrdma_qp_attr attr;
	int mask;

	bare(qp, OPENRDMA_QPS_INIT, "INIT without port and access flags");
	mask = conf_rc_attr(t, OPENRDMA_QPS_INIT, NULL, 0, false, &attr);
	illegal(qp, &attr, mask & ~OPENRDMA_QP_PORT, "INIT without port");
	attr.port_num = 0;
	illegal(qp, &attr, mask, "port 0");
	attr.port_num = (uint8_t)(t->attr.phys_port_cnt + 1);
	illegal(qp, &attr, mask, "port past phys_port_cnt");
	mask = conf_rc_attr(t, OPENRDMA_QPS_INIT, NULL, 0, false, &attr);
	attr.qp_state = (enum openrdma_qp_state)42;
	illegal(qp, &attr, mask, "state 42");
	attr.qp_state = OPENRDMA_QPS_INIT;
	attr.cur_qp_state = OPENRDMA_QPS_RTS;
	illegal(qp, &attr, mask | OPENRDMA_QP_CUR_STATE,
		"cur_qp_state RTS while in RESET");
	legal(qp, &attr, mask);

	mask = conf_rc_attr(t, OPENRDMA_QPS_RTR, &t->port.addr, qp->qp_num,
			    false, &attr);
	illegal(qp, &attr, mask & ~OPENRDMA_QP_DEST_QPN, "RTR without QPN");
	illegal(qp, &attr, mask & ~OPENRDMA_QP_AV, "RTR without AV");
	illegal(qp, &attr, mask & ~OPENRDMA_QP_PATH_MTU, "RTR without MTU");
	illegal(qp, &attr, OPENRDMA_QP_ATTR_MASK_ALL + 1 + mask,
		"unknown mask bit");
}

CONF_TEST(qp_state, rc_through_rts_and_query)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct openrdma_qp_init_attr init;
	struct openrdma_qp_attr attr;
	struct conf_rc rc;
	int mask;

	conf_rc_create(t, &rc, NULL);
	mask = conf_rc_attr(t, OPENRDMA_QPS_INIT, NULL, 0, false, &attr);
	legal(rc.qp, &attr, mask);
	mask = conf_rc_attr(t, OPENRDMA_QPS_RTR, &t->pport.addr, rc.pqp.qpn,
			    false, &attr);
	if (openrdma_qp_modify(rc.qp, &attr, mask) == -OPENRDMA_EOPNOTSUPP)
		cr_skip_test("%s: transport %s reaches RTR only through the CM",
			     t->ifname, t->attr.transport);
	conf_state_expect(rc.qp, OPENRDMA_QPS_RTR);
	mask = conf_rc_attr(t, OPENRDMA_QPS_RTS, NULL, 0, true, &attr);
	legal(rc.qp, &attr, mask);

	/* RTS -> RTS may change the access flags and the RNR timer */
	attr = (struct openrdma_qp_attr){
		.qp_state = OPENRDMA_QPS_RTS,
		.qp_access_flags = OPENRDMA_ACCESS_REMOTE_READ,
		.min_rnr_timer = 3,
	};
	legal(rc.qp, &attr,
	      OPENRDMA_QP_STATE | OPENRDMA_QP_ACCESS_FLAGS |
		      OPENRDMA_QP_MIN_RNR_TIMER);
	mask = conf_rc_attr(t, OPENRDMA_QPS_INIT, NULL, 0, false, &attr);
	illegal(rc.qp, &attr, mask, "RTS to INIT");
	mask = conf_rc_attr(t, OPENRDMA_QPS_RTR, &t->pport.addr, rc.pqp.qpn,
			    false, &attr);
	illegal(rc.qp, &attr, mask, "RTS to RTR");

	memset(&attr, 0, sizeof(attr));
	CONF_OK(openrdma_qp_query(rc.qp, &attr, OPENRDMA_QP_ATTR_MASK_ALL,
				  &init));
	cr_assert_eq(attr.qp_state, OPENRDMA_QPS_RTS);
	cr_assert_eq(attr.dest_qp_num, rc.pqp.qpn, "dest_qp_num %u, want %u",
		     attr.dest_qp_num, rc.pqp.qpn);
	cr_assert_eq(attr.qp_access_flags, OPENRDMA_ACCESS_REMOTE_READ);
	cr_assert_eq(attr.retry_cnt, 1);
	cr_assert_eq(attr.rnr_retry, 1);
	cr_assert_eq(init.send_cq, rc.scq);
	cr_assert_eq(init.recv_cq, rc.rcq);
	cr_assert_eq(init.qp_type, OPENRDMA_QPT_RC);
	cr_assert_eq(init.cap.max_send_wr, rc.qp->cap.max_send_wr);

	to_state(rc.qp, OPENRDMA_QPS_ERR);
	to_reset(t, rc.qp);
}

CONF_TEST(qp_state, ud_transitions)
{
	struct conf_test *t = conf_setup(CONF_LOCAL_ONLY);
	struct openrdma_qp_init_attr init;
	struct openrdma_qp_attr attr;
	struct openrdma_qp *qp;
	int mask;

	conf_require_cap(t, OPENRDMA_DEVICE_UD, "UD queue pairs");
	qp = new_qp(t, OPENRDMA_QPT_UD);
	mask = conf_ud_attr(OPENRDMA_QPS_INIT, &attr);
	illegal(qp, &attr, mask & ~OPENRDMA_QP_QKEY, "UD INIT without Q_Key");
	legal(qp, &attr, mask);
	mask = conf_ud_attr(OPENRDMA_QPS_RTS, &attr);
	illegal(qp, &attr, mask, "INIT to RTS");
	mask = conf_ud_attr(OPENRDMA_QPS_RTR, &attr);
	legal(qp, &attr, mask);
	mask = conf_ud_attr(OPENRDMA_QPS_RTS, &attr);
	illegal(qp, &attr, mask & ~OPENRDMA_QP_SQ_PSN, "RTS without SQ PSN");
	legal(qp, &attr, mask);
	memset(&attr, 0, sizeof(attr));
	CONF_OK(openrdma_qp_query(qp, &attr, OPENRDMA_QP_QKEY, &init));
	cr_assert_eq(attr.qkey, CONF_QKEY, "qkey %#x, want %#x", attr.qkey,
		     CONF_QKEY);
	to_state(qp, OPENRDMA_QPS_ERR);
	to_reset(t, qp);
}
