/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The self transport through the public API, where the conformance suite
 * does not go: connection-manager corner cases, type 1 binds, RNR retries
 * run by the timer thread, teardown with one pending, its parameters and
 * its limits.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openrdma/transport.h>

#define OK(x)                                                                 \
	do {                                                                  \
		int ret_ = (x);                                               \
		cr_assert_eq(ret_, 0, "%s: %s", #x, openrdma_strerror(ret_)); \
	} while (0)

struct side {
	struct openrdma_context *ctx;
	struct openrdma_pd *pd;
	struct openrdma_cq *cq;
	struct openrdma_qp *qp;
	struct openrdma_cm_channel *ch;
	struct openrdma_cm_id *id;
};

#ifdef TEST_SELF_PLUGIN_DIR
/* self is a plugin here: load it from the build tree.  Each test runs in
 * its own process, before the registry is first built. */
static void use_plugin(void)
{
	cr_assert_eq(setenv("OPENRDMA_TRANSPORT_PATH", TEST_SELF_PLUGIN_DIR, 1),
		     0);
}

TestSuite(sw_self, .init = use_plugin);
#endif

static struct openrdma_context *open_self(void)
{
	struct openrdma_device *dev;
	struct openrdma_context *ctx;

	OK(openrdma_device_find("self0", &dev));
	OK(openrdma_device_open(dev, &ctx));
	return ctx;
}

static struct openrdma_qp *new_qp(struct side *s, enum openrdma_qp_type type)
{
	struct openrdma_qp_init_attr ia = {
		.send_cq = s->cq,
		.recv_cq = s->cq,
		.qp_type = type,
		.cap = { .max_send_wr = 16,
			 .max_recv_wr = 16,
			 .max_send_sge = 2,
			 .max_recv_sge = 2,
			 .max_inline_data = 64 },
	};
	struct openrdma_qp *qp;

	OK(openrdma_qp_create(s->pd, &ia, &qp));
	return qp;
}

static void side_init(struct side *s)
{
	int flags;

	memset(s, 0, sizeof(*s));
	s->ctx = open_self();
	OK(openrdma_pd_alloc(s->ctx, &s->pd));
	OK(openrdma_cq_create(s->ctx, 64, NULL, NULL, 0, &s->cq));
	s->qp = new_qp(s, OPENRDMA_QPT_RC);
	OK(openrdma_cm_channel_create(s->ctx, &s->ch));
	flags = fcntl(s->ch->fd, F_GETFL);
	cr_assert_eq(fcntl(s->ch->fd, F_SETFL, flags | O_NONBLOCK), 0);
	OK(openrdma_cm_id_create(s->ctx, s->ch, NULL, OPENRDMA_PS_TCP, &s->id));
}

static struct sockaddr_storage loopback(uint16_t port)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin->sin_port = htons(port);
	return ss;
}

static uint16_t port_of(const struct sockaddr_storage *ss)
{
	return ntohs(((const struct sockaddr_in *)ss)->sin_port);
}

/* The next CM event of s, which must be of type; the caller acks it. */
static struct openrdma_cm_event *expect(struct side *s,
					enum openrdma_cm_event_type type)
{
	struct openrdma_cm_event *ev;

	OK(openrdma_cm_event_get(s->ch, &ev));
	cr_assert_eq(ev->event, type, "CM event %s, want %s",
		     openrdma_cm_event_str(ev->event),
		     openrdma_cm_event_str(type));
	return ev;
}

static void expect_none(struct side *s)
{
	struct openrdma_cm_event *ev;

	cr_assert_eq(openrdma_cm_event_get(s->ch, &ev), -OPENRDMA_EAGAIN);
}

static enum openrdma_qp_state state(struct openrdma_qp *qp)
{
	return (enum openrdma_qp_state)atomic_load(&qp->state);
}

/* b listens on an ephemeral port; returns its address. */
static struct sockaddr_storage listen_on(struct side *b, int backlog)
{
	struct sockaddr_storage any = loopback(0), addr;

	OK(openrdma_cm_listen(b->id, (struct sockaddr *)&any, backlog));
	OK(openrdma_cm_local_addr(b->id, &addr));
	cr_assert_geq(port_of(&addr), 49152, "an ephemeral port");
	return addr;
}

static void connect_to(struct side *a, const struct sockaddr_storage *addr,
		       bool three_way)
{
	struct openrdma_conn_param p = { .responder_resources = 1,
					 .initiator_depth = 1,
					 .retry_count = 7,
					 .rnr_retry_count = 7,
					 .three_way = three_way };

	OK(openrdma_cm_connect(a->id, a->qp, (const struct sockaddr *)addr,
			       &p));
}

/* a connects to b, b accepts; returns b's new id. */
static struct openrdma_cm_id *establish(struct side *a, struct side *b)
{
	struct sockaddr_storage addr = listen_on(b, 4);
	struct openrdma_conn_param p = { .responder_resources = 1,
					 .initiator_depth = 1 };
	struct openrdma_cm_event *ev;
	struct openrdma_cm_id *nid;

	connect_to(a, &addr, false);
	ev = expect(b, OPENRDMA_CM_EVENT_CONNECT_REQUEST);
	nid = ev->id;
	openrdma_cm_event_ack(ev);
	OK(openrdma_cm_accept(nid, b->qp, &p));
	openrdma_cm_event_ack(expect(a, OPENRDMA_CM_EVENT_ESTABLISHED));
	openrdma_cm_event_ack(expect(b, OPENRDMA_CM_EVENT_ESTABLISHED));
	cr_assert_eq(state(a->qp), OPENRDMA_QPS_RTS);
	cr_assert_eq(state(b->qp), OPENRDMA_QPS_RTS);
	return nid;
}

Test(sw_self, connect_to_another_host_is_unreachable)
{
	struct sockaddr_storage far = loopback(4791);
	struct openrdma_cm_event *ev;
	struct side a;

	side_init(&a);
	((struct sockaddr_in *)&far)->sin_addr.s_addr = htonl(0x0a000001);
	connect_to(&a, &far, false);
	ev = expect(&a, OPENRDMA_CM_EVENT_UNREACHABLE);
	cr_assert_eq(ev->status, -OPENRDMA_EHOSTUNREACH);
	openrdma_cm_event_ack(ev);
	cr_assert_eq(state(a.qp), OPENRDMA_QPS_ERR);
}

Test(sw_self, listen_errors)
{
	struct sockaddr_storage addr, far = loopback(5000);
	struct openrdma_cm_id *udp, *other;
	struct side b;

	side_init(&b);
	addr = listen_on(&b, 1);
	OK(openrdma_cm_id_create(b.ctx, b.ch, NULL, OPENRDMA_PS_TCP, &other));
	cr_assert_eq(openrdma_cm_listen(other, (struct sockaddr *)&addr, 1),
		     -OPENRDMA_EADDRINUSE);
	cr_assert_eq(openrdma_cm_listen(b.id, (struct sockaddr *)&far, 1),
		     -OPENRDMA_EINVAL, "already listening");
	((struct sockaddr_in *)&far)->sin_addr.s_addr = htonl(0x0a000001);
	cr_assert_eq(openrdma_cm_listen(other, (struct sockaddr *)&far, 1),
		     -OPENRDMA_EADDRNOTAVAIL);
	OK(openrdma_cm_id_create(b.ctx, b.ch, NULL, OPENRDMA_PS_UDP, &udp));
	cr_assert_eq(openrdma_cm_listen(udp, (struct sockaddr *)&far, 1),
		     -OPENRDMA_EOPNOTSUPP);
	/* the port is free again once its listener is gone */
	OK(openrdma_cm_id_destroy(b.id));
	OK(openrdma_cm_listen(other, (struct sockaddr *)&addr, 1));
}

Test(sw_self, backlog_full_is_refused)
{
	struct openrdma_cm_event *ev;
	struct sockaddr_storage addr;
	struct side a, a2, b;

	side_init(&a);
	side_init(&a2);
	side_init(&b);
	addr = listen_on(&b, 1);
	connect_to(&a, &addr, false);
	connect_to(&a2, &addr, false);
	ev = expect(&a2, OPENRDMA_CM_EVENT_REJECTED);
	cr_assert_eq(ev->status, -OPENRDMA_ECONNREFUSED);
	openrdma_cm_event_ack(ev);
	cr_assert_eq(state(a2.qp), OPENRDMA_QPS_ERR);
	openrdma_cm_event_ack(expect(&b, OPENRDMA_CM_EVENT_CONNECT_REQUEST));
	expect_none(&b);
	expect_none(&a);
}

Test(sw_self, unanswered_request_is_rejected_when_destroyed)
{
	struct openrdma_cm_event *ev;
	struct sockaddr_storage addr;
	struct openrdma_cm_id *nid;
	struct side a, b;

	side_init(&a);
	side_init(&b);
	addr = listen_on(&b, 4);
	connect_to(&a, &addr, false);
	ev = expect(&b, OPENRDMA_CM_EVENT_CONNECT_REQUEST);
	nid = ev->id;
	cr_assert_eq(ev->listen_id, b.id);
	cr_assert_eq(ev->param.qp_num, a.qp->qp_num);
	cr_assert_eq(ev->param.responder_resources, 1, "swapped: a's ORD");
	openrdma_cm_event_ack(ev);
	OK(openrdma_cm_id_destroy(nid));
	ev = expect(&a, OPENRDMA_CM_EVENT_REJECTED);
	cr_assert_eq(ev->status, -OPENRDMA_EREJECTED);
	openrdma_cm_event_ack(ev);
	cr_assert_eq(state(a.qp), OPENRDMA_QPS_ERR);
}

Test(sw_self, request_of_a_vanished_connector)
{
	struct openrdma_cm_event *ev;
	struct sockaddr_storage addr;
	struct openrdma_cm_id *nid;
	struct side a, b;

	side_init(&a);
	side_init(&b);
	addr = listen_on(&b, 4);
	connect_to(&a, &addr, false);
	ev = expect(&b, OPENRDMA_CM_EVENT_CONNECT_REQUEST);
	nid = ev->id;
	openrdma_cm_event_ack(ev);
	OK(openrdma_cm_id_destroy(a.id));
	cr_assert_eq(openrdma_cm_accept(nid, b.qp, NULL),
		     -OPENRDMA_ECONNABORTED);
	cr_assert_eq(state(b.qp), OPENRDMA_QPS_RESET, "left as it was");
}

Test(sw_self, destroying_a_connected_id_disconnects_the_peer)
{
	struct openrdma_cm_id *nid;
	struct side a, b;

	side_init(&a);
	side_init(&b);
	nid = establish(&a, &b);
	OK(openrdma_cm_id_destroy(a.id));
	openrdma_cm_event_ack(expect(&b, OPENRDMA_CM_EVENT_DISCONNECTED));
	cr_assert_eq(state(b.qp), OPENRDMA_QPS_ERR);
	cr_assert_eq(openrdma_cm_disconnect(nid, NULL, 0), -OPENRDMA_ENOTCONN);
}

Test(sw_self, three_way_refused_by_the_active_side)
{
	struct openrdma_cm_event *ev;
	struct sockaddr_storage addr;
	struct openrdma_cm_id *nid;
	uint8_t why[4] = { 1, 2, 3, 4 };
	struct side a, b;

	side_init(&a);
	side_init(&b);
	addr = listen_on(&b, 4);
	connect_to(&a, &addr, true);
	ev = expect(&b, OPENRDMA_CM_EVENT_CONNECT_REQUEST);
	nid = ev->id;
	openrdma_cm_event_ack(ev);
	OK(openrdma_cm_accept(nid, b.qp, NULL));
	openrdma_cm_event_ack(expect(&a, OPENRDMA_CM_EVENT_CONNECT_RESPONSE));
	OK(openrdma_cm_reject(a.id, why, sizeof(why)));
	ev = expect(&b, OPENRDMA_CM_EVENT_REJECTED);
	cr_assert_eq(ev->id, nid);
	cr_assert_eq(ev->param.private_data_len, 4);
	cr_assert_eq(memcmp(ev->param.private_data, why, 4), 0);
	openrdma_cm_event_ack(ev);
	cr_assert_eq(state(a.qp), OPENRDMA_QPS_ERR);
	cr_assert_eq(state(b.qp), OPENRDMA_QPS_ERR);
	cr_assert_eq(openrdma_cm_accept(a.id, NULL, NULL), -OPENRDMA_EINVAL,
		     "nothing left to accept");
}

Test(sw_self, addresses)
{
	struct sockaddr_storage la, pa, lb, pb;
	struct openrdma_cm_id *nid;
	struct side a, b;

	side_init(&a);
	side_init(&b);
	nid = establish(&a, &b);
	OK(openrdma_cm_local_addr(a.id, &la));
	OK(openrdma_cm_peer_addr(a.id, &pa));
	OK(openrdma_cm_local_addr(nid, &lb));
	OK(openrdma_cm_peer_addr(nid, &pb));
	cr_assert_eq(port_of(&la), port_of(&pb));
	cr_assert_eq(port_of(&pa), port_of(&lb));
	cr_assert_neq(port_of(&la), port_of(&lb));
}

/* Brings a's and b's QPs to RTS towards each other by hand. */
static void connect_manual(struct side *a, struct side *b, uint8_t rnr_retry)
{
	struct side *s[2] = { a, b };
	struct openrdma_port_attr port;
	struct openrdma_qp_attr attr;
	int i;

	OK(openrdma_port_query(a->ctx, 1, &port));
	for (i = 0; i < 2; i++) {
		memset(&attr, 0, sizeof(attr));
		attr.qp_state = OPENRDMA_QPS_INIT;
		attr.port_num = 1;
		attr.qp_access_flags = OPENRDMA_ACCESS_REMOTE_WRITE;
		OK(openrdma_qp_modify(
			s[i]->qp, &attr,
			OPENRDMA_QP_STATE | OPENRDMA_QP_PKEY_INDEX |
				OPENRDMA_QP_PORT | OPENRDMA_QP_ACCESS_FLAGS));
		memset(&attr, 0, sizeof(attr));
		attr.qp_state = OPENRDMA_QPS_RTR;
		attr.path_mtu = OPENRDMA_MTU_1024;
		attr.dest_qp_num = s[1 - i]->qp->qp_num;
		attr.min_rnr_timer = 12; /* 0.64 ms */
		attr.ah_attr.port_num = 1;
		attr.ah_attr.addr = port.addr;
		OK(openrdma_qp_modify(s[i]->qp, &attr,
				      OPENRDMA_QP_STATE | OPENRDMA_QP_AV |
					      OPENRDMA_QP_PATH_MTU |
					      OPENRDMA_QP_DEST_QPN |
					      OPENRDMA_QP_RQ_PSN |
					      OPENRDMA_QP_MAX_DEST_RD_ATOMIC |
					      OPENRDMA_QP_MIN_RNR_TIMER));
		memset(&attr, 0, sizeof(attr));
		attr.qp_state = OPENRDMA_QPS_RTS;
		attr.rnr_retry = rnr_retry;
		attr.retry_cnt = 7;
		attr.timeout = 14;
		OK(openrdma_qp_modify(s[i]->qp, &attr,
				      OPENRDMA_QP_STATE | OPENRDMA_QP_TIMEOUT |
					      OPENRDMA_QP_RETRY_CNT |
					      OPENRDMA_QP_RNR_RETRY |
					      OPENRDMA_QP_SQ_PSN |
					      OPENRDMA_QP_MAX_QP_RD_ATOMIC));
	}
}

static int poll_wait(struct openrdma_cq *cq, struct openrdma_wc *wc,
		     int timeout_ms)
{
	struct timespec ts = { 0, 200000 };
	int i, n;

	for (i = 0; i < timeout_ms * 5; i++) {
		n = openrdma_cq_poll(cq, 1, wc);
		if (n)
			return n;
		nanosleep(&ts, NULL);
	}
	return 0;
}

static void send_inline(struct side *a, uint64_t wr_id, const char *msg)
{
	struct openrdma_sge sge = { (uintptr_t)msg, (uint32_t)strlen(msg) + 1,
				    0 };
	struct openrdma_send_wr wr = { .wr_id = wr_id,
				       .sg_list = &sge,
				       .num_sge = 1,
				       .opcode = OPENRDMA_WR_SEND,
				       .send_flags = OPENRDMA_SEND_SIGNALED |
						     OPENRDMA_SEND_INLINE };
	struct openrdma_send_wr *bad;

	OK(openrdma_qp_post_send(a->qp, &wr, &bad));
}

Test(sw_self, rnr_retry_by_the_timer_thread)
{
	static char buf[64];
	struct openrdma_sge sge = { (uintptr_t)buf, sizeof(buf), 0 };
	struct openrdma_recv_wr rwr = { .wr_id = 9,
					.sg_list = &sge,
					.num_sge = 1 };
	struct openrdma_recv_wr *bad;
	struct openrdma_wc wc;
	struct openrdma_mr *mr;
	struct side a, b;

	side_init(&a);
	side_init(&b);
	connect_manual(&a, &b, 7);
	send_inline(&a, 1, "late receive");
	cr_assert_eq(openrdma_cq_poll(a.cq, 1, &wc), 0, "waiting: no receive");
	OK(openrdma_mr_reg(b.pd, buf, sizeof(buf), OPENRDMA_ACCESS_LOCAL_WRITE,
			   &mr));
	sge.lkey = mr->lkey;
	OK(openrdma_qp_post_recv(b.qp, &rwr, &bad));
	/* nobody calls into the library now: the timer thread retries */
	cr_assert_eq(poll_wait(a.cq, &wc, 2000), 1);
	cr_assert_eq(wc.status, OPENRDMA_WC_SUCCESS);
	cr_assert_eq(poll_wait(b.cq, &wc, 100), 1);
	cr_assert_eq(wc.wr_id, 9);
	cr_assert_str_eq(buf, "late receive");
}

Test(sw_self, rnr_retries_run_out)
{
	struct openrdma_wc wc;
	struct side a, b;

	side_init(&a);
	side_init(&b);
	connect_manual(&a, &b, 2);
	send_inline(&a, 1, "nobody listens");
	cr_assert_eq(poll_wait(a.cq, &wc, 2000), 1);
	cr_assert_eq(wc.status, OPENRDMA_WC_RNR_RETRY_EXC_ERR);
	cr_assert_eq(state(a.qp), OPENRDMA_QPS_ERR);
	cr_assert_eq(state(b.qp), OPENRDMA_QPS_RTS);
}

Test(sw_self, teardown_with_a_retry_pending)
{
	struct side a, b;

	side_init(&a);
	side_init(&b);
	connect_manual(&a, &b, 7);
	send_inline(&a, 1, "forever");
	/* the QP goes while its retry is armed, then the context */
	OK(openrdma_cm_id_destroy(a.id));
	OK(openrdma_qp_destroy(a.qp));
	OK(openrdma_cq_destroy(a.cq));
	OK(openrdma_pd_dealloc(a.pd));
	OK(openrdma_cm_channel_destroy(a.ch));
	OK(openrdma_context_close(a.ctx));
}

Test(sw_self, type1_bind_needs_its_verb)
{
	static uint8_t buf[256];
	struct openrdma_send_wr wr = { .wr_id = 3,
				       .opcode = OPENRDMA_WR_BIND_MW,
				       .send_flags = OPENRDMA_SEND_SIGNALED };
	struct openrdma_send_wr *bad;
	struct openrdma_wc wc;
	struct openrdma_mw *mw;
	struct openrdma_mr *mr;
	uint32_t before;
	struct side a, b;

	side_init(&a);
	side_init(&b);
	connect_manual(&a, &b, 7);
	OK(openrdma_mr_reg(
		a.pd, buf, sizeof(buf),
		OPENRDMA_ACCESS_LOCAL_WRITE | OPENRDMA_ACCESS_MW_BIND, &mr));
	OK(openrdma_mw_alloc(a.pd, OPENRDMA_MW_TYPE_1, &mw));
	before = mw->rkey;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = openrdma_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)buf;
	wr.bind_mw.bind_info.length = 128;
	wr.bind_mw.bind_info.mw_access_flags = OPENRDMA_ACCESS_REMOTE_READ;
	/* as openrdma_mw_bind() posts it */
	wr.send_flags |= OPENRDMA_SEND_TYPE1_BIND;
	OK(openrdma_qp_post_send(a.qp, &wr, &bad));
	cr_assert_eq(poll_wait(a.cq, &wc, 100), 1);
	cr_assert_eq(wc.status, OPENRDMA_WC_SUCCESS);
	cr_assert_eq(wc.opcode, OPENRDMA_WC_BIND_MW);
	cr_assert_eq(mw->rkey, openrdma_inc_rkey(before));
	cr_assert_eq(openrdma_mr_dereg(mr), -OPENRDMA_EBUSY,
		     "a window is bound to it");
	/* as the application would post it: not for a type 1 window */
	wr.send_flags &= ~(unsigned int)OPENRDMA_SEND_TYPE1_BIND;
	wr.wr_id = 4;
	OK(openrdma_qp_post_send(a.qp, &wr, &bad));
	cr_assert_eq(poll_wait(a.cq, &wc, 100), 1);
	cr_assert_eq(wc.status, OPENRDMA_WC_MW_BIND_ERR);
	cr_assert_eq(state(a.qp), OPENRDMA_QPS_ERR);
	OK(openrdma_mw_dealloc(mw));
	OK(openrdma_mr_dereg(mr));
}

Test(sw_self, device_limits)
{
	struct openrdma_device_attr attr;
	struct openrdma_port_attr port;
	union openrdma_gid gid;
	struct openrdma_qp_init_attr ia = { .qp_type = OPENRDMA_QPT_RC };
	struct openrdma_qp *qp;
	struct side s;

	side_init(&s);
	OK(openrdma_device_query(s.ctx, &attr));
	cr_assert_str_eq(attr.transport, "self");
	cr_assert_eq(attr.node_transport, OPENRDMA_NODE_SOFTWARE);
	cr_assert_eq(attr.atomic_cap, OPENRDMA_ATOMIC_HCA);
	cr_assert_eq(attr.max_sge, 32);
	cr_assert_eq(attr.max_ud_msg_size, 4096);
	cr_assert(attr.device_cap_flags & OPENRDMA_DEVICE_MW_TYPE2);
	cr_assert_not(attr.device_cap_flags & OPENRDMA_DEVICE_CROSS_PROCESS);
	OK(openrdma_port_query(s.ctx, 1, &port));
	cr_assert_eq(port.state, OPENRDMA_PORT_ACTIVE);
	cr_assert_eq(port.link_layer, OPENRDMA_LINK_LAYER_LOOPBACK);
	cr_assert_eq(((struct sockaddr_in *)&port.addr)->sin_addr.s_addr,
		     htonl(INADDR_LOOPBACK));
	OK(openrdma_gid_query(s.ctx, 1, 0, &gid));
	cr_assert_eq(gid.raw[10], 0xff, "IPv4-mapped");
	cr_assert_eq(gid.raw[12], 127);
	cr_assert_eq(openrdma_gid_query(s.ctx, 1, 1, &gid), -OPENRDMA_EINVAL);

	ia.send_cq = s.cq;
	ia.recv_cq = s.cq;
	ia.cap.max_send_wr = (uint32_t)attr.max_qp_wr + 1;
	cr_assert_eq(openrdma_qp_create(s.pd, &ia, &qp), -OPENRDMA_EINVAL);
	ia.cap.max_send_wr = 1;
	ia.cap.max_inline_data = (uint32_t)attr.max_inline_data + 1;
	cr_assert_eq(openrdma_qp_create(s.pd, &ia, &qp), -OPENRDMA_EINVAL);
}

Test(sw_self, port_event_parameter)
{
	struct openrdma_async_event ev;
	struct openrdma_context *ctx;
	struct openrdma_pd *pd;

	cr_assert_eq(setenv("OPENRDMA_SELF_PORT_EVENT", "yes", 1), 0);
	ctx = open_self();
	cr_assert_eq(openrdma_async_event_get(ctx, &ev), -OPENRDMA_EAGAIN,
		     "queued by the first call after the open");
	OK(openrdma_pd_alloc(ctx, &pd));
	OK(openrdma_async_event_get(ctx, &ev));
	cr_assert_eq(ev.event_type, OPENRDMA_EVENT_PORT_ACTIVE);
	cr_assert_eq(ev.element.port_num, 1);
	openrdma_async_event_ack(&ev);
	OK(openrdma_pd_dealloc(pd));
	OK(openrdma_pd_alloc(ctx, &pd));
	cr_assert_eq(openrdma_async_event_get(ctx, &ev), -OPENRDMA_EAGAIN,
		     "once per context");
}

Test(sw_self, no_port_event_by_default)
{
	struct openrdma_async_event ev;
	struct side s;

	side_init(&s);
	cr_assert_eq(openrdma_async_event_get(s.ctx, &ev), -OPENRDMA_EAGAIN);
}
