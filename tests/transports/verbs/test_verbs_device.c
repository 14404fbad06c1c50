/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The verbs transport on a real device (rxe, siw: run in the vmlab guest
 * with make check-vmlab): what it reports against what libibverbs says,
 * the CM, the data path's list handling, completion notification, async
 * events, UD address handles, windows and the registration cache.
 * Features the device lacks are skipped with the device's own reason.
 */
#include <endian.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "vt.h"

/* The device behind the interface, as libibverbs reports it. */
static void raw_query(const char *ifname, struct ibv_device_attr *attr,
		      enum ibv_transport_type *transport)
{
	char dev[64];
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	snprintf(dev, sizeof(dev), "%s", ifname);
	*strrchr(dev, '-') = '\0';
	list = ibv_get_device_list(&n);
	cr_assert_not_null(list);
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev))
			ctx = ibv_open_device(list[i]);
	cr_assert_not_null(ctx, "libibverbs cannot open %s", dev);
	cr_assert_eq(ibv_query_device(ctx, attr), 0);
	*transport = ctx->device->transport_type;
	ibv_close_device(ctx);
	ibv_free_device_list(list);
}

VT_TEST(device, attributes_match_libibverbs)
{
	enum ibv_transport_type transport;
	struct ibv_device_attr raw;
	union openrdma_gid gid;
	struct vt_side s;
	bool iwarp;

	vt_side_open(&s);
	raw_query(vt_ifname(), &raw, &transport);
	iwarp = transport == IBV_TRANSPORT_IWARP;
	cr_assert_str_eq(s.attr.transport, "verbs");
	cr_assert_eq(s.attr.node_transport,
		     iwarp ? OPENRDMA_NODE_IWARP : OPENRDMA_NODE_IB);
	cr_assert_eq(s.attr.phys_port_cnt, 1);
	cr_assert_eq(s.attr.max_qp, raw.max_qp);
	cr_assert_eq(s.attr.max_sge, raw.max_sge);
	cr_assert_eq(s.attr.max_cqe, raw.max_cqe);
	cr_assert_eq(s.attr.node_guid, be64toh(raw.node_guid));
	cr_assert_eq((int)s.attr.atomic_cap, (int)raw.atomic_cap);
	cr_assert_eq(!!(s.attr.device_cap_flags & OPENRDMA_DEVICE_UD), !iwarp);
	cr_assert_eq(!!(s.attr.device_cap_flags & OPENRDMA_DEVICE_SRQ),
		     raw.max_srq > 0);
	cr_assert_eq(!!(s.attr.device_cap_flags & OPENRDMA_DEVICE_MW_TYPE1),
		     raw.max_mw > 0 &&
			     !!(raw.device_cap_flags & IBV_DEVICE_MEM_WINDOW));
	cr_assert(s.attr.device_cap_flags & OPENRDMA_DEVICE_CROSS_PROCESS);
	cr_assert(s.attr.device_cap_flags & OPENRDMA_DEVICE_CROSS_HOST);
	cr_assert_gt(s.attr.max_inline_data, 0, "no inline data found");
	cr_assert_eq(s.attr.max_pdata_connect, iwarp ? 243 : 56);
	cr_assert_eq(s.attr.max_pdata_disconnect, 0);
	cr_assert_eq(s.port.state, OPENRDMA_PORT_ACTIVE);
	cr_assert_neq(s.port.addr.ss_family, AF_UNSPEC,
		      "the port reports no IP address");
	VT_OK(openrdma_gid_query(s.ctx, 1, 0, &gid));
	vt_side_close(&s);
}

/* Two connected sides with an RC QP each. */
static void rc_pair(struct vt_side *a, struct vt_side *b, uint32_t wr)
{
	vt_side_open(a);
	vt_side_open(b);
	vt_qp_create(a, OPENRDMA_QPT_RC, wr, NULL);
	vt_qp_create(b, OPENRDMA_QPT_RC, wr, NULL);
	vt_connect(a, b);
}

static void rc_pair_close(struct vt_side *a, struct vt_side *b)
{
	vt_side_close(a);
	vt_side_close(b);
}

VT_TEST(rc, send_write_read_and_disconnect)
{
	struct openrdma_sge sge;
	struct openrdma_send_wr wr;
	struct openrdma_cm_event *ev;
	struct openrdma_wc wc[2];
	struct vt_buf ab, bb;
	struct vt_side a, b;

	rc_pair(&a, &b, 16);
	vt_buf_new(&a, &ab, 4096, OPENRDMA_ACCESS_LOCAL_WRITE, 0xa1);
	vt_buf_new(&b, &bb, 4096,
		   OPENRDMA_ACCESS_LOCAL_WRITE | OPENRDMA_ACCESS_REMOTE_WRITE |
			   OPENRDMA_ACCESS_REMOTE_READ,
		   0xb2);

	/* send with immediate data; iWARP has none */
	vt_post_recv(b.qp, 7, &bb, 0, 4096);
	sge = (struct openrdma_sge){ (uintptr_t)ab.buf, 100, ab.mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = OPENRDMA_WR_SEND_WITH_IMM;
	wr.send_flags = OPENRDMA_SEND_SIGNALED;
	wr.imm_data = htobe32(0x1234);
	if (a.attr.node_transport == OPENRDMA_NODE_IWARP) {
		struct openrdma_send_wr *bad;

		cr_assert_eq(openrdma_qp_post_send(a.qp, &wr, &bad),
			     -OPENRDMA_EOPNOTSUPP);
		wr.opcode = OPENRDMA_WR_SEND;
	}
	vt_post_send(a.qp, &wr);
	vt_poll_ok(a.scq, 1, wc);
	cr_assert_eq(wc[0].opcode, OPENRDMA_WC_SEND);
	vt_poll_ok(b.rcq, 1, wc);
	cr_assert_eq(wc[0].wr_id, 7);
	cr_assert_eq(wc[0].byte_len, 100);
	if (wr.opcode == OPENRDMA_WR_SEND_WITH_IMM) {
		cr_assert(wc[0].wc_flags & OPENRDMA_WC_WITH_IMM);
		cr_assert_eq(be32toh(wc[0].imm_data), 0x1234);
	}
	cr_assert_eq(wc[0].qp_num, b.qp->qp_num);
	cr_assert_eq(bb.buf[99], 0xa1);
	cr_assert_eq(bb.buf[100], 0xb2);

	/* RDMA write, then read back into another part of a's buffer */
	wr.opcode = OPENRDMA_WR_RDMA_WRITE;
	wr.wr_id = 2;
	sge.length = 512;
	wr.wr.rdma.remote_addr = (uintptr_t)bb.buf + 1024;
	wr.wr.rdma.rkey = bb.mr->rkey;
	vt_post_send(a.qp, &wr);
	vt_poll_ok(a.scq, 1, wc);
	cr_assert_eq(wc[0].opcode, OPENRDMA_WC_RDMA_WRITE);
	cr_assert_eq(bb.buf[1024], 0xa1);
	cr_assert_eq(bb.buf[1535], 0xa1);
	cr_assert_eq(bb.buf[1536], 0xb2);
	memset(bb.buf + 2048, 0xc3, 256);
	wr.opcode = OPENRDMA_WR_RDMA_READ;
	wr.wr_id = 3;
	sge.addr = (uintptr_t)ab.buf + 2048;
	sge.length = 256;
	wr.wr.rdma.remote_addr = (uintptr_t)bb.buf + 2048;
	vt_post_send(a.qp, &wr);
	vt_poll_ok(a.scq, 1, wc);
	cr_assert_eq(wc[0].opcode, OPENRDMA_WC_RDMA_READ);
	cr_assert_eq(wc[0].byte_len, 256);
	cr_assert_eq(ab.buf[2048], 0xc3);
	cr_assert_eq(ab.buf[2303], 0xc3);

	/* disconnect: both sides hear it, receives are flushed */
	vt_post_recv(b.qp, 8, &bb, 0, 64);
	VT_OK(openrdma_cm_disconnect(a.id, NULL, 0));
	ev = vt_cm_expect(&b, OPENRDMA_CM_EVENT_DISCONNECTED);
	openrdma_cm_event_ack(ev);
	ev = vt_cm_expect(&a, OPENRDMA_CM_EVENT_DISCONNECTED);
	openrdma_cm_event_ack(ev);
	cr_assert_eq(atomic_load(&a.qp->state), OPENRDMA_QPS_ERR);
	cr_assert_eq(atomic_load(&b.qp->state), OPENRDMA_QPS_ERR);
	cr_assert_eq(vt_poll(b.rcq, 1, wc, VT_TIMEOUT_MS), 1);
	cr_assert_eq(wc[0].wr_id, 8);
	cr_assert_eq(wc[0].status, OPENRDMA_WC_WR_FLUSH_ERR);

	vt_buf_free(&ab);
	vt_buf_free(&bb);
	rc_pair_close(&a, &b);
}

/* n signaled RDMA writes of 8 bytes each, linked into one list. */
static void write_list(struct openrdma_send_wr *wr, struct openrdma_sge *sge,
		       int n, const struct vt_buf *src,
		       const struct vt_buf *dst)
{
	int i;

	memset(wr, 0, (size_t)n * sizeof(*wr));
	for (i = 0; i < n; i++) {
		sge[i] = (struct openrdma_sge){ (uintptr_t)src->buf + 8 * i, 8,
						src->mr->lkey };
		wr[i].wr_id = 100 + (uint64_t)i;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].opcode = OPENRDMA_WR_RDMA_WRITE;
		wr[i].send_flags = OPENRDMA_SEND_SIGNALED;
		wr[i].wr.rdma.remote_addr = (uintptr_t)dst->buf + 8 * i;
		wr[i].wr.rdma.rkey = dst->mr->rkey;
	}
}

VT_TEST(post, long_list_in_order)
{
	enum { N = 50 }; /* past the stack array of 16 */
	struct openrdma_send_wr wr[N], *bad = NULL;
	struct openrdma_sge sge[N];
	struct openrdma_wc wc[N];
	struct vt_buf src, dst;
	struct vt_side a, b;
	int i;

	rc_pair(&a, &b, 128);
	vt_buf_new(&a, &src, 8 * N, 0, 0);
	for (i = 0; i < 8 * N; i++)
		src.buf[i] = (uint8_t)i;
	vt_buf_new(&b, &dst, 8 * N,
		   OPENRDMA_ACCESS_LOCAL_WRITE | OPENRDMA_ACCESS_REMOTE_WRITE,
		   0);
	write_list(wr, sge, N, &src, &dst);
	VT_OK(openrdma_qp_post_send(a.qp, wr, &bad));
	vt_poll_ok(a.scq, N, wc);
	for (i = 0; i < N; i++)
		cr_assert_eq(wc[i].wr_id, 100 + (uint64_t)i,
			     "completion %d out of order", i);
	cr_assert_eq(memcmp(src.buf, dst.buf, 8 * N), 0);
	vt_buf_free(&src);
	vt_buf_free(&dst);
	rc_pair_close(&a, &b);
}

/* Posts a list of N writes whose WR bad is malformed; checks the prefix. */
static void list_with_bad(struct vt_side *a, const struct vt_buf *src,
			  const struct vt_buf *dst, int bad_at)
{
	enum { N = 24 };
	struct openrdma_send_wr wr[N], *bad = NULL;
	struct openrdma_sge sge[N];
	struct openrdma_wc wc[N];

	write_list(wr, sge, N, src, dst);
	wr[bad_at].opcode = (enum openrdma_wr_opcode)42;
	cr_assert_eq(openrdma_qp_post_send(a->qp, wr, &bad), -OPENRDMA_EINVAL);
	cr_assert_eq(bad, &wr[bad_at], "bad_wr is WR %ld, want %d",
		     (long)(bad - wr), bad_at);
	if (bad_at)
		vt_poll_ok(a->scq, bad_at, wc);
	cr_assert_eq(wc[bad_at - 1].wr_id, 100 + (uint64_t)bad_at - 1);
	cr_assert_eq(vt_poll(a->scq, 1, wc, 300), 0, "a WR after it ran");
}

VT_TEST(post, list_stops_at_first_bad)
{
	struct openrdma_recv_wr rwr[3], *rbad = NULL;
	struct openrdma_sge sge[3];
	struct vt_buf src, dst;
	struct vt_side a, b;
	int i;

	rc_pair(&a, &b, 64);
	vt_buf_new(&a, &src, 8 * 24, OPENRDMA_ACCESS_LOCAL_WRITE, 0x11);
	vt_buf_new(&b, &dst, 8 * 24,
		   OPENRDMA_ACCESS_LOCAL_WRITE | OPENRDMA_ACCESS_REMOTE_WRITE,
		   0);
	list_with_bad(&a, &src, &dst, 3); /* inside the stack array */
	list_with_bad(&a, &src, &dst, 20); /* in the QP's array */

	/* receives: the list is cut before the bad one and mended */
	memset(rwr, 0, sizeof(rwr));
	for (i = 0; i < 3; i++) {
		sge[i] = (struct openrdma_sge){ (uintptr_t)src.buf, 8,
						src.mr->lkey };
		rwr[i].wr_id = 200 + (uint64_t)i;
		rwr[i].next = i < 2 ? &rwr[i + 1] : NULL;
		rwr[i].sg_list = &sge[i];
		rwr[i].num_sge = 1;
	}
	rwr[1].num_sge = (int)a.qp->cap.max_recv_sge + 1;
	cr_assert_eq(openrdma_qp_post_recv(a.qp, rwr, &rbad), -OPENRDMA_EINVAL);
	cr_assert_eq(rbad, &rwr[1]);
	cr_assert_eq(rwr[0].next, &rwr[1], "the list was not mended");

	vt_buf_free(&src);
	vt_buf_free(&dst);
	rc_pair_close(&a, &b);
}

VT_TEST(post, refused_before_rts)
{
	struct openrdma_send_wr wr = { .opcode = OPENRDMA_WR_SEND }, *bad;
	struct openrdma_recv_wr rwr = { 0 }, *rbad;
	struct vt_side s;

	vt_side_open(&s);
	vt_qp_create(&s, OPENRDMA_QPT_RC, 8, NULL);
	cr_assert_eq(openrdma_qp_post_send(s.qp, &wr, &bad), -OPENRDMA_EINVAL);
	cr_assert_eq(bad, &wr);
	cr_assert_eq(openrdma_qp_post_recv(s.qp, &rwr, &rbad),
		     -OPENRDMA_EINVAL);
	cr_assert_eq(rbad, &rwr);
	vt_side_close(&s);
}

/* A signaled send of len bytes from b to a's posted receive. */
static void send_one(struct vt_side *from, const struct vt_buf *src,
		     uint32_t len, unsigned int flags)
{
	struct openrdma_sge sge = { (uintptr_t)src->buf, len, src->mr->lkey };
	struct openrdma_send_wr wr = { .wr_id = 1,
				       .sg_list = &sge,
				       .num_sge = 1,
				       .opcode = OPENRDMA_WR_SEND,
				       .send_flags = flags };
	struct openrdma_wc wc;

	vt_post_send(from->qp, &wr);
	if (flags & OPENRDMA_SEND_SIGNALED)
		vt_poll_ok(from->scq, 1, &wc);
}

VT_TEST(cq, notify_wakes_channel_once)
{
	struct pollfd pfd;
	struct openrdma_cq *got;
	struct openrdma_wc wc;
	struct vt_buf src, dst;
	struct vt_side a, b;
	void *ctx;

	rc_pair(&a, &b, 8);
	vt_buf_new(&a, &src, 64, 0, 0x5a);
	vt_buf_new(&b, &dst, 256, OPENRDMA_ACCESS_LOCAL_WRITE, 0);
	pfd = (struct pollfd){ .fd = b.comp->fd, .events = POLLIN };

	/* not armed: a completion does not wake the channel */
	vt_post_recv(b.qp, 1, &dst, 0, 64);
	send_one(&a, &src, 64, OPENRDMA_SEND_SIGNALED);
	vt_poll_ok(b.rcq, 1, &wc);
	cr_assert_eq(poll(&pfd, 1, 200), 0, "woken without being armed");

	/* armed: exactly one notification */
	VT_OK(openrdma_cq_req_notify(b.rcq, 0));
	vt_post_recv(b.qp, 2, &dst, 64, 64);
	vt_post_recv(b.qp, 3, &dst, 128, 64);
	send_one(&a, &src, 64, OPENRDMA_SEND_SIGNALED);
	send_one(&a, &src, 64, OPENRDMA_SEND_SIGNALED);
	cr_assert_eq(poll(&pfd, 1, VT_TIMEOUT_MS), 1, "no notification");
	VT_OK(openrdma_cq_event_get(b.comp, &got, &ctx));
	cr_assert_eq(got, b.rcq);
	cr_assert_eq(ctx, &b);
	openrdma_cq_events_ack(got, 1);
	cr_assert_eq(openrdma_cq_event_get(b.comp, &got, &ctx),
		     -OPENRDMA_EAGAIN, "notified twice for one arming");

	/*
	 * Solicited only: an unsolicited send does not wake it, except on
	 * siw, which never marks receives solicited and is armed for every
	 * completion instead (a spurious wake-up rather than a lost one).
	 */
	cr_assert_eq(vt_poll(b.rcq, 2, (struct openrdma_wc[2]){ 0 },
			     VT_TIMEOUT_MS),
		     2);
	VT_OK(openrdma_cq_req_notify(b.rcq, 1));
	if (b.attr.node_transport != OPENRDMA_NODE_IWARP) {
		vt_post_recv(b.qp, 4, &dst, 192, 64);
		send_one(&a, &src, 64, OPENRDMA_SEND_SIGNALED);
		vt_poll_ok(b.rcq, 1, &wc);
		cr_assert_eq(poll(&pfd, 1, 300), 0,
			     "woken by an unsolicited send");
	}
	vt_post_recv(b.qp, 5, &dst, 0, 64);
	send_one(&a, &src, 64,
		 OPENRDMA_SEND_SIGNALED | OPENRDMA_SEND_SOLICITED);
	cr_assert_eq(poll(&pfd, 1, VT_TIMEOUT_MS), 1, "solicited: no wake-up");
	VT_OK(openrdma_cq_event_get(b.comp, &got, &ctx));
	openrdma_cq_events_ack(got, 1);
	vt_poll_ok(b.rcq, 1, &wc);

	vt_buf_free(&src);
	vt_buf_free(&dst);
	rc_pair_close(&a, &b);
}

VT_TEST(cm, connect_without_listener)
{
	struct openrdma_conn_param param = { .retry_count = 7,
					     .rnr_retry_count = 7 };
	struct openrdma_cm_event *ev;
	struct sockaddr_storage addr;
	struct vt_side a;
	int ret;

	vt_side_open(&a);
	vt_qp_create(&a, OPENRDMA_QPT_RC, 8, NULL);
	addr = a.port.addr;
	if (addr.ss_family == AF_INET)
		((struct sockaddr_in *)&addr)->sin_port = htons(47999);
	else
		((struct sockaddr_in6 *)&addr)->sin6_port = htons(47999);
	VT_OK(openrdma_cm_id_create(a.ctx, a.ch, &a, OPENRDMA_PS_TCP, &a.id));
	VT_OK(openrdma_cm_connect(a.id, a.qp, (struct sockaddr *)&addr,
				  &param));
	ret = vt_cm_next(&a, VT_TIMEOUT_MS, &ev);
	cr_assert_eq(ret, 0, "no event: %s", openrdma_strerror(ret));
	cr_assert(ev->event == OPENRDMA_CM_EVENT_REJECTED ||
			  ev->event == OPENRDMA_CM_EVENT_UNREACHABLE,
		  "%s", openrdma_cm_event_str(ev->event));
	cr_assert_lt(ev->status, 0, "status %d", ev->status);
	openrdma_cm_event_ack(ev);
	cr_assert_eq(atomic_load(&a.qp->state), OPENRDMA_QPS_ERR);
	vt_side_close(&a);
}

VT_TEST(cm, reject_carries_private_data)
{
	struct openrdma_conn_param param = { .retry_count = 7,
					     .rnr_retry_count = 7 };
	uint8_t pdata[255];
	struct openrdma_cm_event *ev;
	struct sockaddr_storage addr;
	struct vt_side a, b;
	unsigned int i, len;

	vt_side_open(&a);
	vt_side_open(&b);
	vt_qp_create(&a, OPENRDMA_QPT_RC, 8, NULL);
	len = b.attr.max_pdata_reject;
	for (i = 0; i < len; i++)
		pdata[i] = (uint8_t)(i * 7 + 1);
	VT_OK(openrdma_cm_id_create(b.ctx, b.ch, &b, OPENRDMA_PS_TCP,
				    &b.listen));
	addr = b.port.addr;
	VT_OK(openrdma_cm_listen(b.listen, (struct sockaddr *)&addr, 4));
	VT_OK(openrdma_cm_local_addr(b.listen, &addr));
	VT_OK(openrdma_cm_id_create(a.ctx, a.ch, &a, OPENRDMA_PS_TCP, &a.id));
	VT_OK(openrdma_cm_connect(a.id, a.qp, (struct sockaddr *)&addr,
				  &param));
	ev = vt_cm_expect(&b, OPENRDMA_CM_EVENT_CONNECT_REQUEST);
	b.id = ev->id;
	openrdma_cm_event_ack(ev);
	VT_OK(openrdma_cm_reject(b.id, pdata, (uint8_t)len));
	ev = vt_cm_expect(&a, OPENRDMA_CM_EVENT_REJECTED);
	cr_assert_eq(ev->status, -OPENRDMA_EREJECTED, "status %d", ev->status);
	cr_assert_geq(ev->param.private_data_len, len);
	cr_assert_eq(memcmp(ev->param.private_data, pdata, len), 0);
	openrdma_cm_event_ack(ev);
	cr_assert_eq(atomic_load(&a.qp->state), OPENRDMA_QPS_ERR);
	vt_side_close(&a);
	vt_side_close(&b);
}

VT_TEST(cm, three_way_handshake)
{
	struct openrdma_conn_param param = { .retry_count = 7,
					     .rnr_retry_count = 7,
					     .three_way = 1 };
	struct openrdma_cm_event *ev;
	struct sockaddr_storage addr;
	struct vt_buf src, dst;
	struct vt_side a, b;
	struct openrdma_wc wc;

	vt_side_open(&a);
	vt_require_cap(&a, OPENRDMA_DEVICE_THREE_WAY, "three-way handshake");
	vt_side_open(&b);
	vt_qp_create(&a, OPENRDMA_QPT_RC, 8, NULL);
	vt_qp_create(&b, OPENRDMA_QPT_RC, 8, NULL);
	VT_OK(openrdma_cm_id_create(b.ctx, b.ch, &b, OPENRDMA_PS_TCP,
				    &b.listen));
	addr = b.port.addr;
	VT_OK(openrdma_cm_listen(b.listen, (struct sockaddr *)&addr, 4));
	VT_OK(openrdma_cm_local_addr(b.listen, &addr));
	VT_OK(openrdma_cm_id_create(a.ctx, a.ch, &a, OPENRDMA_PS_TCP, &a.id));
	VT_OK(openrdma_cm_connect(a.id, a.qp, (struct sockaddr *)&addr,
				  &param));
	ev = vt_cm_expect(&b, OPENRDMA_CM_EVENT_CONNECT_REQUEST);
	cr_assert_eq(ev->param.qp_num, a.qp->qp_num);
	b.id = ev->id;
	openrdma_cm_event_ack(ev);
	param.three_way = 0;
	VT_OK(openrdma_cm_accept(b.id, b.qp, &param));
	ev = vt_cm_expect(&a, OPENRDMA_CM_EVENT_CONNECT_RESPONSE);
	cr_assert_eq(ev->param.qp_num, b.qp->qp_num);
	openrdma_cm_event_ack(ev);
	cr_assert_eq(vt_cm_next(&b, 300, &ev), -OPENRDMA_ETIMEDOUT,
		     "the passive side did not wait for the RTU");
	VT_OK(openrdma_cm_accept(a.id, NULL, &param));
	cr_assert_eq(atomic_load(&a.qp->state), OPENRDMA_QPS_RTS);
	ev = vt_cm_expect(&b, OPENRDMA_CM_EVENT_ESTABLISHED);
	openrdma_cm_event_ack(ev);

	vt_buf_new(&a, &src, 64, 0, 0x77);
	vt_buf_new(&b, &dst, 64, OPENRDMA_ACCESS_LOCAL_WRITE, 0);
	vt_post_recv(b.qp, 1, &dst, 0, 64);
	send_one(&a, &src, 64, OPENRDMA_SEND_SIGNALED);
	vt_poll_ok(b.rcq, 1, &wc);
	cr_assert_eq(dst.buf[63], 0x77);
	vt_buf_free(&src);
	vt_buf_free(&dst);
	vt_side_close(&a);
	vt_side_close(&b);
}

VT_TEST(srq, limit_event)
{
	struct openrdma_srq_init_attr init = { .attr = { .max_wr = 16,
							 .max_sge = 1 } };
	struct openrdma_srq_attr sattr = { .srq_limit = 4 };
	struct openrdma_async_event aev;
	struct openrdma_srq *srq;
	struct openrdma_recv_wr rwr, *bad;
	struct openrdma_sge sge;
	struct openrdma_wc wc;
	struct vt_buf src, dst;
	struct vt_side a, b;
	int i;

	vt_side_open(&a);
	vt_side_open(&b);
	vt_require_cap(&b, OPENRDMA_DEVICE_SRQ_LIMIT, "SRQ limit event");
	VT_OK(openrdma_srq_create(b.pd, &init, &srq));
	vt_qp_create(&a, OPENRDMA_QPT_RC, 16, NULL);
	vt_qp_create(&b, OPENRDMA_QPT_RC, 16, srq);
	vt_connect(&a, &b);
	vt_buf_new(&a, &src, 64, 0, 0x42);
	vt_buf_new(&b, &dst, 64 * 8, OPENRDMA_ACCESS_LOCAL_WRITE, 0);
	for (i = 0; i < 6; i++) {
		sge = (struct openrdma_sge){ (uintptr_t)dst.buf + 64 * i, 64,
					     dst.mr->lkey };
		rwr = (struct openrdma_recv_wr){ .wr_id = (uint64_t)i,
						 .sg_list = &sge,
						 .num_sge = 1 };
		VT_OK(openrdma_srq_post_recv(srq, &rwr, &bad));
	}
	VT_OK(openrdma_srq_modify(srq, &sattr, OPENRDMA_SRQ_LIMIT));
	cr_assert_eq(vt_async_next(&b, 200, &aev), -OPENRDMA_ETIMEDOUT);
	for (i = 0; i < 3; i++) {
		send_one(&a, &src, 64, OPENRDMA_SEND_SIGNALED);
		vt_poll_ok(b.rcq, 1, &wc);
		cr_assert_eq(wc.wr_id, (uint64_t)i);
	}
	VT_OK(vt_async_next(&b, VT_TIMEOUT_MS, &aev));
	cr_assert_eq(aev.event_type, OPENRDMA_EVENT_SRQ_LIMIT_REACHED, "%s",
		     openrdma_event_type_str(aev.event_type));
	cr_assert_eq(aev.element.srq, srq);
	openrdma_async_event_ack(&aev);

	vt_buf_free(&src);
	vt_buf_free(&dst);
	vt_side_close(&a);
	VT_OK(openrdma_cm_id_destroy(b.id));
	b.id = NULL;
	VT_OK(openrdma_qp_destroy(b.qp));
	b.qp = NULL;
	VT_OK(openrdma_srq_destroy(srq));
	vt_side_close(&b);
}

VT_TEST(async, remote_access_error)
{
	struct openrdma_async_event aev;
	struct openrdma_send_wr wr;
	struct openrdma_sge sge;
	struct openrdma_wc wc;
	struct vt_buf src, dst;
	struct vt_side a, b;

	rc_pair(&a, &b, 8);
	vt_buf_new(&a, &src, 64, 0, 1);
	vt_buf_new(&b, &dst, 64, OPENRDMA_ACCESS_LOCAL_WRITE, 0);
	sge = (struct openrdma_sge){ (uintptr_t)src.buf, 64, src.mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = OPENRDMA_WR_RDMA_WRITE;
	wr.send_flags = OPENRDMA_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)dst.buf;
	wr.wr.rdma.rkey = dst.mr->rkey; /* no REMOTE_WRITE */
	vt_post_send(a.qp, &wr);
	cr_assert_eq(vt_poll(a.scq, 1, &wc, VT_TIMEOUT_MS), 1);
	/*
	 * iWARP completes a write once sent; the TERMINATE comes later.
	 * When it comes first, siw (Linux 6.1, siw_qp_sq_process) completes
	 * the write it was still sending with LOC_QP_OP_ERR.
	 */
	if (a.attr.node_transport == OPENRDMA_NODE_IWARP)
		cr_assert(wc.status == OPENRDMA_WC_REM_ACCESS_ERR ||
				  wc.status == OPENRDMA_WC_SUCCESS ||
				  wc.status == OPENRDMA_WC_LOC_QP_OP_ERR,
			  "%s", openrdma_wc_status_str(wc.status));
	else
		cr_assert_eq(wc.status, OPENRDMA_WC_REM_ACCESS_ERR, "%s",
			     openrdma_wc_status_str(wc.status));
	cr_assert_eq(dst.buf[0], 0, "memory written without permission");
	/*
	 * The target's QP_ACCESS_ERR is the device's to raise (rxe does
	 * from Linux 6.4 on): when it comes, it names the right QP.
	 */
	if (!vt_async_next(&b, 2000, &aev)) {
		cr_assert_eq(aev.event_type, OPENRDMA_EVENT_QP_ACCESS_ERR, "%s",
			     openrdma_event_type_str(aev.event_type));
		cr_assert_eq(aev.element.qp, b.qp);
		openrdma_async_event_ack(&aev);
	} else {
		cr_log_info("%s: the device raised no QP_ACCESS_ERR",
			    vt_ifname());
	}
	/*
	 * Either way the target QP is in error: a send to it fails.  Not on
	 * siw, whose errored QPs neither run nor flush later requests.
	 */
	if (a.attr.node_transport == OPENRDMA_NODE_IWARP)
		goto out;
	vt_post_recv(b.qp, 1, &dst, 0, 64);
	wr.opcode = OPENRDMA_WR_SEND;
	wr.wr_id = 2;
	vt_post_send(a.qp, &wr);
	cr_assert_eq(vt_poll(a.scq, 1, &wc, VT_TIMEOUT_MS), 1);
	cr_assert_neq(wc.status, OPENRDMA_WC_SUCCESS,
		      "a send to a QP in error succeeded");
out:
	vt_buf_free(&src);
	vt_buf_free(&dst);
	rc_pair_close(&a, &b);
}

VT_TEST(ud, address_handles_and_replies)
{
	struct openrdma_qp_attr attr;
	struct openrdma_ah_attr ah_attr = { .port_num = 1 }, reply;
	struct openrdma_ah *ah, *back;
	struct openrdma_send_wr wr;
	struct openrdma_sge sge;
	struct openrdma_wc wc;
	struct vt_buf src, dst;
	struct vt_side a, b;
	int i;
	static const int masks[] = {
		OPENRDMA_QP_STATE | OPENRDMA_QP_PKEY_INDEX | OPENRDMA_QP_PORT |
			OPENRDMA_QP_QKEY,
		OPENRDMA_QP_STATE,
		OPENRDMA_QP_STATE | OPENRDMA_QP_SQ_PSN,
	};

	vt_side_open(&a);
	vt_require_cap(&a, OPENRDMA_DEVICE_UD, "UD queue pairs");
	vt_side_open(&b);
	vt_qp_create(&a, OPENRDMA_QPT_UD, 8, NULL);
	vt_qp_create(&b, OPENRDMA_QPT_UD, 8, NULL);
	for (i = 0; i < 3; i++) {
		memset(&attr, 0, sizeof(attr));
		attr.qp_state = (enum openrdma_qp_state)(OPENRDMA_QPS_INIT + i);
		attr.port_num = 1;
		attr.qkey = 0x11223344;
		VT_OK(openrdma_qp_modify(a.qp, &attr, masks[i]));
		VT_OK(openrdma_qp_modify(b.qp, &attr, masks[i]));
	}
	vt_buf_new(&a, &src, 256, OPENRDMA_ACCESS_LOCAL_WRITE, 0x3c);
	vt_buf_new(&b, &dst, 256, OPENRDMA_ACCESS_LOCAL_WRITE, 0);
	ah_attr.addr = b.port.addr;
	VT_OK(openrdma_ah_create(a.pd, &ah_attr, &ah));

	vt_post_recv(b.qp, 1, &dst, 0, OPENRDMA_GRH_LEN + 100);
	sge = (struct openrdma_sge){ (uintptr_t)src.buf, 100, src.mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = OPENRDMA_WR_SEND;
	wr.send_flags = OPENRDMA_SEND_SIGNALED;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = b.qp->qp_num;
	wr.wr.ud.remote_qkey = 0x11223344;
	vt_post_send(a.qp, &wr);
	vt_poll_ok(a.scq, 1, &wc);
	vt_poll_ok(b.rcq, 1, &wc);
	cr_assert_eq(wc.byte_len, OPENRDMA_GRH_LEN + 100);
	cr_assert_eq(wc.src_qp, a.qp->qp_num);
	cr_assert(wc.wc_flags & OPENRDMA_WC_GRH);
	cr_assert_eq(dst.buf[OPENRDMA_GRH_LEN], 0x3c);

	/* reply to the sender from its completion */
	VT_OK(openrdma_ah_attr_from_wc(b.ctx, 1, &wc,
				       (struct openrdma_grh *)dst.buf, &reply));
	cr_assert_eq(reply.addr.ss_family, a.port.addr.ss_family);
	VT_OK(openrdma_ah_create(b.pd, &reply, &back));
	vt_post_recv(a.qp, 2, &src, 0, OPENRDMA_GRH_LEN + 64);
	sge = (struct openrdma_sge){ (uintptr_t)dst.buf + 128, 64,
				     dst.mr->lkey };
	wr.wr.ud.ah = back;
	wr.wr.ud.remote_qpn = wc.src_qp;
	vt_post_send(b.qp, &wr);
	vt_poll_ok(b.scq, 1, &wc);
	vt_poll_ok(a.rcq, 1, &wc);
	cr_assert_eq(wc.src_qp, b.qp->qp_num);

	VT_OK(openrdma_ah_destroy(back));
	VT_OK(openrdma_ah_destroy(ah));
	vt_buf_free(&src);
	vt_buf_free(&dst);
	vt_side_close(&a);
	vt_side_close(&b);
}

VT_TEST(mr, zero_based_read_by_offset)
{
	struct openrdma_send_wr wr;
	struct openrdma_sge sge;
	struct openrdma_wc wc;
	struct vt_buf src, dst;
	struct vt_side a, b;

	rc_pair(&a, &b, 8);
	vt_require_cap(&a, OPENRDMA_DEVICE_ZERO_BASED, "zero-based MRs");
	vt_buf_new(&a, &dst, 64, OPENRDMA_ACCESS_LOCAL_WRITE, 0);
	vt_buf_new(&b, &src, 4096,
		   OPENRDMA_ACCESS_REMOTE_READ | OPENRDMA_ACCESS_ZERO_BASED, 0);
	memset(src.buf + 1000, 0x99, 64);
	sge = (struct openrdma_sge){ (uintptr_t)dst.buf, 64, dst.mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = OPENRDMA_WR_RDMA_READ;
	wr.send_flags = OPENRDMA_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = 1000; /* an offset, not an address */
	wr.wr.rdma.rkey = src.mr->rkey;
	vt_post_send(a.qp, &wr);
	vt_poll_ok(a.scq, 1, &wc);
	cr_assert_eq(dst.buf[0], 0x99);
	cr_assert_eq(dst.buf[63], 0x99);
	vt_buf_free(&src);
	vt_buf_free(&dst);
	rc_pair_close(&a, &b);
}

VT_TEST(mr, registration_cache_shares_keys)
{
	struct openrdma_mr *m1, *m2, *m3;
	struct vt_side s;
	void *buf;

	setenv("OPENRDMA_VERBS_REG_CACHE", "yes", 1);
	vt_side_open(&s);
	buf = aligned_alloc(4096, 8192);
	VT_OK(openrdma_mr_reg(s.pd, buf, 8192, OPENRDMA_ACCESS_LOCAL_WRITE,
			      &m1));
	VT_OK(openrdma_mr_reg(s.pd, buf, 8192, OPENRDMA_ACCESS_LOCAL_WRITE,
			      &m2));
	cr_assert_neq(m1, m2, "two MRs are two objects");
	cr_assert_eq(m1->lkey, m2->lkey, "the cache did not share");
	/* another access is another registration */
	VT_OK(openrdma_mr_reg(s.pd, buf, 8192, 0, &m3));
	cr_assert_neq(m3->lkey, m1->lkey);
	VT_OK(openrdma_mr_dereg(m1));
	VT_OK(openrdma_mr_dereg(m3));
	/* the survivor still works: rereg moves it to its own range */
	VT_OK(openrdma_mr_rereg(m2, OPENRDMA_REREG_CHANGE_TRANSLATION, NULL,
				buf, 4096, 0));
	cr_assert_eq(m2->length, 4096);
	VT_OK(openrdma_mr_dereg(m2));
	free(buf);
	vt_side_close(&s);
	unsetenv("OPENRDMA_VERBS_REG_CACHE");
}

VT_TEST(mr, without_cache_keys_differ)
{
	struct openrdma_mr *m1, *m2, *empty;
	struct vt_side s;
	void *buf;

	vt_side_open(&s);
	buf = aligned_alloc(4096, 4096);
	VT_OK(openrdma_mr_reg(s.pd, buf, 4096, OPENRDMA_ACCESS_LOCAL_WRITE,
			      &m1));
	VT_OK(openrdma_mr_reg(s.pd, buf, 4096, OPENRDMA_ACCESS_LOCAL_WRITE,
			      &m2));
	cr_assert_neq(m1->lkey, m2->lkey);
	VT_OK(openrdma_mr_reg(s.pd, buf, 0, 0, &empty));
	VT_OK(openrdma_mr_dereg(empty));
	VT_OK(openrdma_mr_dereg(m1));
	VT_OK(openrdma_mr_dereg(m2));
	free(buf);
	vt_side_close(&s);
}

VT_TEST(mw, type1_and_type2_binds)
{
	struct openrdma_mw_bind_info info;
	struct openrdma_send_wr wr;
	struct openrdma_sge sge;
	struct openrdma_wc wc;
	struct openrdma_mw *mw1, *mw2;
	struct vt_buf src, dst;
	struct vt_side a, b;
	uint32_t old;

	rc_pair(&a, &b, 16);
	vt_require_cap(&b, OPENRDMA_DEVICE_MW_TYPE1 | OPENRDMA_DEVICE_MW_TYPE2,
		       "memory windows");
	if ((b.attr.device_cap_flags &
	     (OPENRDMA_DEVICE_MW_TYPE1 | OPENRDMA_DEVICE_MW_TYPE2)) !=
	    (OPENRDMA_DEVICE_MW_TYPE1 | OPENRDMA_DEVICE_MW_TYPE2))
		cr_skip_test("%s: needs both window types", vt_ifname());
	vt_buf_new(&a, &src, 64, 0, 0xee);
	vt_buf_new(&b, &dst, 4096,
		   OPENRDMA_ACCESS_LOCAL_WRITE | OPENRDMA_ACCESS_REMOTE_WRITE |
			   OPENRDMA_ACCESS_MW_BIND,
		   0);
	VT_OK(openrdma_mw_alloc(b.pd, OPENRDMA_MW_TYPE_1, &mw1));
	VT_OK(openrdma_mw_alloc(b.pd, OPENRDMA_MW_TYPE_2, &mw2));
	info = (struct openrdma_mw_bind_info){
		.mr = dst.mr,
		.addr = (uintptr_t)dst.buf + 512,
		.length = 512,
		.mw_access_flags = OPENRDMA_ACCESS_REMOTE_WRITE,
	};
	old = mw1->rkey;
	VT_OK(openrdma_mw_bind(b.qp, mw1, 5, OPENRDMA_SEND_SIGNALED, &info));
	vt_poll_ok(b.scq, 1, &wc);
	cr_assert_eq(wc.opcode, OPENRDMA_WC_BIND_MW);
	cr_assert_neq(mw1->rkey, old, "type 1 bind kept the key");

	/* type 2: a BIND_MW work request with the consumer's key */
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 6;
	wr.opcode = OPENRDMA_WR_BIND_MW;
	wr.send_flags = OPENRDMA_SEND_SIGNALED;
	wr.bind_mw.mw = mw2;
	wr.bind_mw.rkey = openrdma_inc_rkey(mw2->rkey);
	info.addr = (uintptr_t)dst.buf + 2048;
	wr.bind_mw.bind_info = info;
	vt_post_send(b.qp, &wr);
	vt_poll_ok(b.scq, 1, &wc);
	cr_assert_eq(mw2->rkey, wr.bind_mw.rkey);

	/* a writes through both windows */
	sge = (struct openrdma_sge){ (uintptr_t)src.buf, 64, src.mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = OPENRDMA_WR_RDMA_WRITE;
	wr.send_flags = OPENRDMA_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)dst.buf + 512;
	wr.wr.rdma.rkey = mw1->rkey;
	vt_post_send(a.qp, &wr);
	vt_poll_ok(a.scq, 1, &wc);
	wr.wr.rdma.remote_addr = (uintptr_t)dst.buf + 2048;
	wr.wr.rdma.rkey = mw2->rkey;
	vt_post_send(a.qp, &wr);
	vt_poll_ok(a.scq, 1, &wc);
	cr_assert_eq(dst.buf[512], 0xee);
	cr_assert_eq(dst.buf[2048 + 63], 0xee);

	VT_OK(openrdma_mw_dealloc(mw1));
	VT_OK(openrdma_mw_dealloc(mw2));
	vt_buf_free(&src);
	vt_buf_free(&dst);
	rc_pair_close(&a, &b);
}

VT_TEST(atomic, fetch_add_and_cmp_swap)
{
	struct openrdma_send_wr wr;
	struct openrdma_sge sge;
	struct openrdma_wc wc;
	struct vt_buf res, tgt;
	struct vt_side a, b;
	uint64_t *val;

	rc_pair(&a, &b, 8);
	if (a.attr.atomic_cap == OPENRDMA_ATOMIC_NONE)
		cr_skip_test("%s: the device has no atomics (atomic_cap NONE)",
			     vt_ifname());
	vt_buf_new(&a, &res, 8, OPENRDMA_ACCESS_LOCAL_WRITE, 0);
	vt_buf_new(&b, &tgt, 8,
		   OPENRDMA_ACCESS_LOCAL_WRITE | OPENRDMA_ACCESS_REMOTE_ATOMIC,
		   0);
	val = (uint64_t *)tgt.buf;
	*val = 40;
	sge = (struct openrdma_sge){ (uintptr_t)res.buf, 8, res.mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = OPENRDMA_WR_ATOMIC_FETCH_AND_ADD;
	wr.send_flags = OPENRDMA_SEND_SIGNALED;
	wr.wr.atomic.remote_addr = (uintptr_t)tgt.buf;
	wr.wr.atomic.rkey = tgt.mr->rkey;
	wr.wr.atomic.compare_add = 2;
	vt_post_send(a.qp, &wr);
	vt_poll_ok(a.scq, 1, &wc);
	cr_assert_eq(*(uint64_t *)res.buf, 40);
	cr_assert_eq(*val, 42);
	wr.opcode = OPENRDMA_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.atomic.compare_add = 42;
	wr.wr.atomic.swap = 7;
	vt_post_send(a.qp, &wr);
	vt_poll_ok(a.scq, 1, &wc);
	cr_assert_eq(*(uint64_t *)res.buf, 42);
	cr_assert_eq(*val, 7);
	vt_buf_free(&res);
	vt_buf_free(&tgt);
	rc_pair_close(&a, &b);
}

VT_TEST(post, inline_up_to_max)
{
	struct openrdma_qp_init_attr init;
	struct openrdma_send_wr wr, *bad;
	struct openrdma_sge sge;
	struct openrdma_wc wc;
	struct vt_buf src, dst;
	struct vt_side a, b;
	uint32_t max;

	vt_side_open(&a);
	vt_side_open(&b);
	max = (uint32_t)a.attr.max_inline_data;
	init = (struct openrdma_qp_init_attr){
		.send_cq = a.scq,
		.recv_cq = a.rcq,
		.qp_type = OPENRDMA_QPT_RC,
		.cap = { 8, 8, 1, 1, max },
	};
	VT_OK(openrdma_qp_create(a.pd, &init, &a.qp));
	cr_assert_geq(a.qp->cap.max_inline_data, max);
	vt_qp_create(&b, OPENRDMA_QPT_RC, 8, NULL);
	vt_connect(&a, &b);
	src.buf = malloc(max + 1); /* inline data needs no MR */
	memset(src.buf, 0x6b, max + 1);
	vt_buf_new(&b, &dst, max + 1, OPENRDMA_ACCESS_LOCAL_WRITE, 0);
	vt_post_recv(b.qp, 1, &dst, 0, max + 1);
	sge = (struct openrdma_sge){ (uintptr_t)src.buf, max, 0 };
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = OPENRDMA_WR_SEND;
	wr.send_flags = OPENRDMA_SEND_SIGNALED | OPENRDMA_SEND_INLINE;
	sge.length = a.qp->cap.max_inline_data + 1;
	cr_assert_eq(openrdma_qp_post_send(a.qp, &wr, &bad), -OPENRDMA_EINVAL);
	sge.length = max;
	vt_post_send(a.qp, &wr);
	memset(src.buf, 0, max + 1); /* the data was copied at post */
	vt_poll_ok(a.scq, 1, &wc);
	vt_poll_ok(b.rcq, 1, &wc);
	cr_assert_eq(wc.byte_len, max);
	cr_assert_eq(dst.buf[max - 1], 0x6b);
	free(src.buf);
	vt_buf_free(&dst);
	vt_side_close(&a);
	vt_side_close(&b);
}
