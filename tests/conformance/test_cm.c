/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The connection manager: private data in every message up to the
 * device's limits (and one byte more refused), reject, a port without a
 * listener, the three-way handshake, and disconnect with its flushes.
 * Side A connects, side B listens.
 */
#include "conf.h"

#define SEED_CONNECT 11
#define SEED_ACCEPT 12
#define SEED_REJECT 13
#define SEED_DISCONNECT 14

/* The largest private data one CM message carries (the length is 8 bits). */
static unsigned int pdata_max(uint16_t dev_max)
{
	return dev_max < 255 ? dev_max : 255;
}

static void pdata_fill(uint8_t *buf, unsigned int len, unsigned int seed)
{
	conf_fill(buf, len, seed, 0);
}

/*
 * Private data as received: exactly what was sent on software transports;
 * at least that much, padded with zeros, where the wire rounds it up (IB).
 */
static void pdata_expect(struct conf_test *t, const uint8_t *got,
			 unsigned int got_len, unsigned int len,
			 unsigned int seed)
{
	unsigned int i;

	if (t->attr.node_transport == OPENRDMA_NODE_SOFTWARE)
		cr_assert_eq(got_len, len, "private data of %u bytes, want %u",
			     got_len, len);
	else
		cr_assert_geq(got_len, len, "private data of %u bytes, want %u",
			      got_len, len);
	CONF_EXPECT_PATTERN(got, len, seed, 0);
	for (i = len; i < got_len; i++)
		cr_assert_eq(got[i], 0, "private data padding is not zero");
}

/* A pair of QPs, B listening, A's CM id created; nothing sent yet. */
static struct conf_test *cm_pair(struct conf_rc *rc,
				 struct sockaddr_storage *addr)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);

	conf_rc_create(t, rc, NULL);
	rc->plisten = conf_peer_cm_listen(t, 8, addr);
	CONF_OK(openrdma_cm_id_create(t->ctx, t->cm_ch, rc, OPENRDMA_PS_TCP,
				      &rc->id));
	conf_track(t, CONF_K_CM_ID, rc->id);
	cr_assert_eq(rc->id->context, rc);
	return t;
}

static int connect_pdata(struct conf_test *t, struct conf_rc *rc,
			 const struct sockaddr_storage *addr,
			 const uint8_t *pdata, unsigned int len, bool three_way)
{
	struct openrdma_conn_param param;

	conf_conn_param(t, false, &param);
	param.private_data = pdata;
	param.private_data_len = (uint8_t)len;
	param.three_way = three_way;
	return openrdma_cm_connect(rc->id, rc->qp,
				   (const struct sockaddr *)addr, &param);
}

static struct conf_wire_param accept_param(struct conf_test *t,
					   unsigned int len)
{
	struct conf_wire_param p = { .has_pdata = 1,
				     .pdata_len = (uint8_t)len,
				     .retry_count = 7,
				     .rnr_retry_count = 7 };
	struct openrdma_conn_param cp;

	conf_conn_param(t, false, &cp);
	p.responder_resources = cp.responder_resources;
	p.initiator_depth = cp.initiator_depth;
	pdata_fill(p.pdata, len, SEED_ACCEPT);
	return p;
}

/* B takes the request; returns its id. */
static uint32_t request(struct conf_test *t, struct conf_rc *rc,
			unsigned int len, unsigned int seed)
{
	struct conf_wire_cm_event ev;

	conf_peer_cm_expect(t, OPENRDMA_CM_EVENT_CONNECT_REQUEST, &ev);
	cr_assert_eq(ev.listen_id, rc->plisten);
	cr_assert_eq(ev.qp_num, rc->qp->qp_num);
	pdata_expect(t, ev.pdata, ev.pdata_len, len, seed);
	rc->pid = ev.id;
	return ev.id;
}

CONF_TEST(cm, private_data_both_ways)
{
	struct sockaddr_storage addr;
	struct conf_rc rc;
	struct conf_test *t = cm_pair(&rc, &addr);
	unsigned int lc = pdata_max(t->attr.max_pdata_connect);
	unsigned int la = pdata_max(t->attr.max_pdata_accept);
	unsigned int ld = pdata_max(t->attr.max_pdata_disconnect);
	struct conf_wire_param param = accept_param(t, la);
	uint8_t pdata[OPENRDMA_MAX_PRIVATE_DATA];
	struct openrdma_cm_event *ev;
	struct conf_wire_cm_event pev;

	pdata_fill(pdata, lc, SEED_CONNECT);
	CONF_OK(connect_pdata(t, &rc, &addr, pdata, lc, false));
	request(t, &rc, lc, SEED_CONNECT);
	CONF_OK(conf_peer_cm_accept(t, rc.pid, rc.pqp.id, &param));
	ev = conf_cm_expect(t, OPENRDMA_CM_EVENT_ESTABLISHED);
	pdata_expect(t, ev->param.private_data, ev->param.private_data_len, la,
		     SEED_ACCEPT);
	openrdma_cm_event_ack(ev);
	conf_peer_cm_expect(t, OPENRDMA_CM_EVENT_ESTABLISHED, &pev);

	pdata_fill(pdata, ld, SEED_DISCONNECT);
	CONF_OK(openrdma_cm_disconnect(rc.id, pdata, (uint8_t)ld));
	conf_peer_cm_expect(t, OPENRDMA_CM_EVENT_DISCONNECTED, &pev);
	pdata_expect(t, pev.pdata, pev.pdata_len, ld, SEED_DISCONNECT);
	ev = conf_cm_expect(t, OPENRDMA_CM_EVENT_DISCONNECTED);
	openrdma_cm_event_ack(ev);
}

/* Skips when the device's limit leaves no room for one byte more. */
static void require_room(struct conf_test *t, uint16_t dev_max,
			 const char *what)
{
	if (dev_max >= 255)
		cr_skip_test("%s: %s private data limit is %u; the 8-bit "
			     "length cannot exceed it",
			     t->ifname, what, dev_max);
}

CONF_TEST(cm, connect_private_data_over_max)
{
	uint8_t pdata[OPENRDMA_MAX_PRIVATE_DATA] = { 0 };
	struct sockaddr_storage addr;
	struct conf_rc rc;
	struct conf_test *t = cm_pair(&rc, &addr);
	unsigned int max = t->attr.max_pdata_connect;

	require_room(t, t->attr.max_pdata_connect, "connect");
	pdata_fill(pdata, max + 1, SEED_CONNECT);
	CONF_ERR(connect_pdata(t, &rc, &addr, pdata, max + 1, false),
		 OPENRDMA_EINVAL);
	conf_peer_cm_none(t);
	/* nothing was started: the id connects normally afterwards */
	CONF_OK(connect_pdata(t, &rc, &addr, pdata, max, false));
	request(t, &rc, max, SEED_CONNECT);
}

CONF_TEST(cm, accept_private_data_over_max)
{
	struct sockaddr_storage addr;
	struct conf_wire_cm_event pev;
	struct openrdma_cm_event *ev;
	struct conf_wire_param param;
	struct conf_rc rc;
	struct conf_test *t = cm_pair(&rc, &addr);
	unsigned int max = t->attr.max_pdata_accept;

	require_room(t, t->attr.max_pdata_accept, "accept");
	CONF_OK(connect_pdata(t, &rc, &addr, NULL, 0, false));
	request(t, &rc, 0, 0);
	param = accept_param(t, max + 1);
	CONF_ERR(conf_peer_cm_accept(t, rc.pid, rc.pqp.id, &param),
		 OPENRDMA_EINVAL);
	conf_cm_none(t);
	param = accept_param(t, max);
	CONF_OK(conf_peer_cm_accept(t, rc.pid, rc.pqp.id, &param));
	ev = conf_cm_expect(t, OPENRDMA_CM_EVENT_ESTABLISHED);
	openrdma_cm_event_ack(ev);
	conf_peer_cm_expect(t, OPENRDMA_CM_EVENT_ESTABLISHED, &pev);
}

CONF_TEST(cm, reject_with_private_data)
{
	uint8_t pdata[OPENRDMA_MAX_PRIVATE_DATA];
	struct sockaddr_storage addr;
	struct openrdma_cm_event *ev;
	struct conf_rc rc;
	struct conf_test *t = cm_pair(&rc, &addr);
	unsigned int lr = pdata_max(t->attr.max_pdata_reject);

	CONF_OK(connect_pdata(t, &rc, &addr, NULL, 0, false));
	request(t, &rc, 0, 0);
	pdata_fill(pdata, lr, SEED_REJECT);
	CONF_OK(conf_peer_cm_reject(t, rc.pid, pdata, (uint8_t)lr));
	ev = conf_cm_expect(t, OPENRDMA_CM_EVENT_REJECTED);
	cr_assert_neq(ev->status, 0, "REJECTED without a reason");
	cr_assert_eq(ev->id, rc.id);
	pdata_expect(t, ev->param.private_data, ev->param.private_data_len, lr,
		     SEED_REJECT);
	openrdma_cm_event_ack(ev);
	/* a failed attempt leaves the QP in ERR (openrdma_cm(3)) */
	conf_state_expect(rc.qp, OPENRDMA_QPS_ERR);
	conf_peer_cm_none(t);
}

CONF_TEST(cm, reject_private_data_over_max)
{
	uint8_t pdata[OPENRDMA_MAX_PRIVATE_DATA] = { 0 };
	struct sockaddr_storage addr;
	struct openrdma_cm_event *ev;
	struct conf_rc rc;
	struct conf_test *t = cm_pair(&rc, &addr);
	unsigned int max = t->attr.max_pdata_reject;

	require_room(t, t->attr.max_pdata_reject, "reject");
	CONF_OK(connect_pdata(t, &rc, &addr, NULL, 0, false));
	request(t, &rc, 0, 0);
	CONF_ERR(conf_peer_cm_reject(t, rc.pid, pdata, (uint8_t)(max + 1)),
		 OPENRDMA_EINVAL);
	conf_cm_none(t);
	CONF_OK(conf_peer_cm_reject(t, rc.pid, pdata, (uint8_t)max));
	ev = conf_cm_expect(t, OPENRDMA_CM_EVENT_REJECTED);
	openrdma_cm_event_ack(ev);
}

CONF_TEST(cm, disconnect_private_data_over_max)
{
	uint8_t pdata[OPENRDMA_MAX_PRIVATE_DATA] = { 0 };
	struct conf_wire_cm_event pev;
	struct openrdma_cm_event *ev;
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	unsigned int max = t->attr.max_pdata_disconnect;
	struct conf_rc rc;

	require_room(t, t->attr.max_pdata_disconnect, "disconnect");
	conf_rc_create(t, &rc, NULL);
	conf_rc_connect_cm(t, &rc, NULL);
	CONF_ERR(openrdma_cm_disconnect(rc.id, pdata, (uint8_t)(max + 1)),
		 OPENRDMA_EINVAL);
	conf_state_expect(rc.qp, OPENRDMA_QPS_RTS);
	conf_peer_cm_none(t);
	CONF_OK(openrdma_cm_disconnect(rc.id, pdata, (uint8_t)max));
	conf_peer_cm_expect(t, OPENRDMA_CM_EVENT_DISCONNECTED, &pev);
	ev = conf_cm_expect(t, OPENRDMA_CM_EVENT_DISCONNECTED);
	openrdma_cm_event_ack(ev);
}

CONF_TEST(cm, connect_without_listener)
{
	struct sockaddr_storage addr;
	struct openrdma_cm_event *ev;
	enum openrdma_cm_event_type type;
	struct conf_rc rc;
	struct conf_test *t = cm_pair(&rc, &addr);
	int ret, status;

	/* the port was just listened on: free, and nobody listens now */
	CONF_OK(conf_peer_destroy(t, CONF_K_CM_ID, rc.plisten));
	CONF_OK(connect_pdata(t, &rc, &addr, NULL, 0, false));
	ret = conf_cm_next(t, t->timeout_ms, &ev);
	cr_assert_eq(ret, 0, "no CM event after connecting to nobody: %s",
		     openrdma_strerror(ret));
	type = ev->event;
	status = ev->status;
	openrdma_cm_event_ack(ev);
	cr_assert(type == OPENRDMA_CM_EVENT_UNREACHABLE ||
			  type == OPENRDMA_CM_EVENT_REJECTED,
		  "connect to a port without listener: %s, want UNREACHABLE "
		  "or REJECTED",
		  openrdma_cm_event_str(type));
	cr_assert_neq(status, 0, "%s without a status",
		      openrdma_cm_event_str(type));
	conf_state_expect(rc.qp, OPENRDMA_QPS_ERR);
}

CONF_TEST(cm, three_way_handshake)
{
	struct openrdma_conn_param param = { 0 };
	struct sockaddr_storage addr;
	struct conf_wire_param pparam;
	struct conf_wire_cm_event pev;
	struct openrdma_cm_event *ev;
	struct conf_rc rc;
	struct conf_test *t = cm_pair(&rc, &addr);

	conf_require_cap(t, OPENRDMA_DEVICE_THREE_WAY,
			 "the three-way connection handshake");
	CONF_OK(connect_pdata(t, &rc, &addr, NULL, 0, true));
	request(t, &rc, 0, 0);
	pparam = accept_param(t, 8);
	CONF_OK(conf_peer_cm_accept(t, rc.pid, rc.pqp.id, &pparam));
	ev = conf_cm_expect(t, OPENRDMA_CM_EVENT_CONNECT_RESPONSE);
	pdata_expect(t, ev->param.private_data, ev->param.private_data_len, 8,
		     SEED_ACCEPT);
	cr_assert_eq(ev->param.qp_num, rc.pqp.qpn);
	openrdma_cm_event_ack(ev);
	/* the passive side waits for our answer */
	conf_peer_cm_none(t);
	/* our answer establishes the passive side; we already know (the
	 * librdmacm model: rdma_establish() raises no event of its own) */
	CONF_OK(openrdma_cm_accept(rc.id, NULL, &param));
	conf_peer_cm_expect(t, OPENRDMA_CM_EVENT_ESTABLISHED, &pev);
	conf_cm_none(t);
	conf_state_expect(rc.qp, OPENRDMA_QPS_RTS);
	conf_peer_state_expect(t, rc.pqp.id, OPENRDMA_QPS_RTS);

	conf_rc_traffic(t, &rc);
}

CONF_TEST(cm, disconnect_flushes_both_sides)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct conf_wire_cm_event pev;
	struct openrdma_cm_event *ev;
	struct openrdma_wc wc[2];
	struct conf_mem *m;
	struct conf_pmr pm;
	struct conf_rc rc;
	int i;

	conf_rc_create(t, &rc, NULL);
	conf_rc_connect_cm(t, &rc, NULL);
	m = conf_mem_new(t, t->pd, 128, OPENRDMA_ACCESS_LOCAL_WRITE, 1);
	conf_post_recv(rc.qp, 10, m, 0, 64);
	conf_post_recv(rc.qp, 11, m, 64, 64);
	pm = conf_peer_mr_reg(t, t->ppd, 128, OPENRDMA_ACCESS_LOCAL_WRITE, 2);
	conf_peer_recv(t, rc.pqp.id, 20, &pm, 0, 64);
	conf_peer_recv(t, rc.pqp.id, 21, &pm, 64, 64);

	/* the passive side hangs up */
	CONF_OK(conf_peer_cm_disconnect(t, rc.pid, NULL, 0));
	ev = conf_cm_expect(t, OPENRDMA_CM_EVENT_DISCONNECTED);
	cr_assert_eq(ev->id, rc.id);
	openrdma_cm_event_ack(ev);
	conf_peer_cm_expect(t, OPENRDMA_CM_EVENT_DISCONNECTED, &pev);
	cr_assert_eq(pev.id, rc.pid);

	conf_state_expect(rc.qp, OPENRDMA_QPS_ERR);
	conf_peer_state_expect(t, rc.pqp.id, OPENRDMA_QPS_ERR);
	conf_poll_n(t, rc.rcq, 2, wc);
	for (i = 0; i < 2; i++)
		conf_wc_expect(&wc[i], 10 + (uint64_t)i,
			       OPENRDMA_WC_WR_FLUSH_ERR, -1);
	conf_peer_poll_n(t, rc.prcq, 2, wc);
	for (i = 0; i < 2; i++)
		conf_wc_expect(&wc[i], 20 + (uint64_t)i,
			       OPENRDMA_WC_WR_FLUSH_ERR, -1);
	CONF_EXPECT_PATTERN(m->buf, 128, 1, 0);
}

/*
 * A QP belongs to the CM id that connected it until the id is destroyed:
 * destroying the QP before fails with -EBUSY and leaves the connection
 * as it was; once the id is gone, the QP goes too.
 */
CONF_TEST(cm, qp_held_by_its_id)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct conf_rc rc;

	conf_rc_create(t, &rc, NULL);
	conf_rc_connect_cm(t, &rc, NULL);
	cr_assert_eq(openrdma_qp_destroy(rc.qp), -OPENRDMA_EBUSY);
	conf_state_expect(rc.qp, OPENRDMA_QPS_RTS);

	conf_rc_traffic(t, &rc);

	CONF_OK(openrdma_cm_id_destroy(rc.id));
	conf_untrack(t, rc.id);
	CONF_OK(openrdma_qp_destroy(rc.qp));
	conf_untrack(t, rc.qp);
}

CONF_TEST(cm, addresses)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct sockaddr_storage local, peer;
	struct conf_rc rc;

	conf_rc_create(t, &rc, NULL);
	conf_rc_connect_cm(t, &rc, NULL);
	CONF_OK(openrdma_cm_local_addr(rc.id, &local));
	CONF_OK(openrdma_cm_peer_addr(rc.id, &peer));
	cr_assert_eq(peer.ss_family, t->pport.addr.ss_family);
	cr_assert_eq(local.ss_family, t->port.addr.ss_family);
	cr_assert_eq(conf_addr_port(&peer), rc.listen_port,
		     "peer address port %u, want the listener's %u",
		     conf_addr_port(&peer), rc.listen_port);
}
