/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
#include <errno.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <openrdma/registry.h>

#include "core/qp_state.h"
#include "transports/tcp/tcp.h"
#include "tt.h"

const struct openrdma_conn_param tt_conn_param = {
	.responder_resources = 4,
	.initiator_depth = 4,
	.retry_count = 7,
	.rnr_retry_count = 7,
};

uint64_t tt_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void tt_open(struct tt_side *s, const char *ifname, size_t len, int access,
	     uint8_t fill)
{
	struct openrdma_device *dev;
	int ret;

	memset(s, 0, sizeof(*s));
	ret = openrdma_device_find(ifname, &dev);
	if (ret)
		cr_skip_test("interface %s: %s (build with --enable-tcp)",
			     ifname, openrdma_strerror(ret));
	cr_assert_eq(openrdma_device_open(dev, &s->ctx), 0);
	cr_assert_eq(openrdma_pd_alloc(s->ctx, &s->pd), 0);
	cr_assert_eq(openrdma_cq_create(s->ctx, 1024, NULL, NULL, 0, &s->cq),
		     0);
	cr_assert_eq(openrdma_cm_channel_create(s->ctx, &s->ch), 0);
	cr_assert_eq(openrdma_port_query(s->ctx, 1, &s->port), 0);
	s->len = len;
	s->buf = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	cr_assert_not_null(s->buf);
	memset(s->buf, fill, len);
	cr_assert_eq(openrdma_mr_reg(s->pd, s->buf, len, access, &s->mr), 0);
}

void tt_close(struct tt_side *s)
{
	if (s->id)
		openrdma_cm_id_destroy(s->id);
	if (s->listen_id)
		openrdma_cm_id_destroy(s->listen_id);
	if (s->qp)
		cr_expect_eq(openrdma_qp_destroy(s->qp), 0);
	if (s->mr)
		cr_expect_eq(openrdma_mr_dereg(s->mr), 0);
	if (s->ch)
		cr_expect_eq(openrdma_cm_channel_destroy(s->ch), 0);
	if (s->cq)
		cr_expect_eq(openrdma_cq_destroy(s->cq), 0);
	if (s->cc)
		cr_expect_eq(openrdma_comp_channel_destroy(s->cc), 0);
	if (s->pd)
		cr_expect_eq(openrdma_pd_dealloc(s->pd), 0);
	if (s->ctx)
		cr_expect_eq(openrdma_context_close(s->ctx), 0);
	free(s->buf);
	memset(s, 0, sizeof(*s));
}

struct openrdma_qp *tt_qp(struct tt_side *s, enum openrdma_qp_type type)
{
	struct openrdma_qp_init_attr init = {
		.send_cq = s->cq,
		.recv_cq = s->cq,
		.qp_type = type,
		.cap = { .max_send_wr = 256,
			 .max_recv_wr = 256,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	cr_assert_eq(openrdma_qp_create(s->pd, &init, &s->qp), 0);
	return s->qp;
}

void tt_qp_init(struct openrdma_qp *qp)
{
	struct openrdma_qp_attr attr = {
		.qp_state = OPENRDMA_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = OPENRDMA_ACCESS_REMOTE_WRITE |
				   OPENRDMA_ACCESS_REMOTE_READ |
				   OPENRDMA_ACCESS_REMOTE_ATOMIC,
	};

	cr_assert_eq(openrdma_qp_modify(qp, &attr,
					OPENRDMA_QP_STATE |
						OPENRDMA_QP_PKEY_INDEX |
						OPENRDMA_QP_PORT |
						OPENRDMA_QP_ACCESS_FLAGS),
		     0);
}

static int wait_fd(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, timeout_ms) > 0 ? 0 : -1;
}

struct openrdma_cm_event *tt_cm_expect(struct tt_side *s,
				       enum openrdma_cm_event_type type,
				       int timeout_ms)
{
	struct openrdma_cm_event *ev;

	cr_assert_eq(wait_fd(s->ch->fd, timeout_ms), 0,
		     "no CM event within %d ms, want %s", timeout_ms,
		     openrdma_cm_event_str(type));
	cr_assert_eq(openrdma_cm_event_get(s->ch, &ev), 0);
	cr_assert_eq(ev->event, type, "CM event %s (%d), want %s",
		     openrdma_cm_event_str(ev->event), ev->status,
		     openrdma_cm_event_str(type));
	return ev;
}

bool tt_cm_quiet(struct tt_side *s, int ms)
{
	return wait_fd(s->ch->fd, ms) != 0;
}

void tt_cm_connect(struct tt_side *server, struct tt_side *client,
		   const struct sockaddr *addr)
{
	struct openrdma_conn_param param = tt_conn_param;
	struct openrdma_cm_event *ev;
	struct sockaddr_storage ss;

	cr_assert_eq(openrdma_cm_id_create(server->ctx, server->ch, NULL,
					   OPENRDMA_PS_TCP, &server->listen_id),
		     0);
	cr_assert_eq(openrdma_cm_listen(server->listen_id, addr, 8), 0);
	cr_assert_eq(openrdma_cm_local_addr(server->listen_id, &ss), 0);
	cr_assert_eq(openrdma_cm_id_create(client->ctx, client->ch, NULL,
					   OPENRDMA_PS_TCP, &client->id),
		     0);
	cr_assert_eq(openrdma_cm_connect(client->id, client->qp,
					 (struct sockaddr *)&ss, &param),
		     0);
	ev = tt_cm_expect(server, OPENRDMA_CM_EVENT_CONNECT_REQUEST,
			  TT_TIMEOUT_MS);
	server->id = ev->id;
	openrdma_cm_event_ack(ev);
	cr_assert_eq(openrdma_cm_accept(server->id, server->qp, &param), 0);
	ev = tt_cm_expect(client, OPENRDMA_CM_EVENT_ESTABLISHED, TT_TIMEOUT_MS);
	openrdma_cm_event_ack(ev);
	ev = tt_cm_expect(server, OPENRDMA_CM_EVENT_ESTABLISHED, TT_TIMEOUT_MS);
	openrdma_cm_event_ack(ev);
}

int tt_poll(struct tt_side *s, int n, struct openrdma_wc *wc, int timeout_ms)
{
	uint64_t end = tt_now_ms() + (uint64_t)timeout_ms;
	int got = 0, ret;

	while (got < n) {
		ret = openrdma_cq_poll(s->cq, n - got, wc + got);
		cr_assert_geq(ret, 0, "cq_poll: %s", openrdma_strerror(ret));
		got += ret;
		if (!ret && tt_now_ms() > end)
			break;
		if (!ret)
			usleep(100);
	}
	return got;
}

int tt_async(struct tt_side *s, struct openrdma_async_event *ev, int timeout_ms)
{
	if (wait_fd(s->ctx->async_fd, timeout_ms))
		return -EAGAIN;
	return openrdma_async_event_get(s->ctx, ev);
}

enum openrdma_qp_state tt_qp_state(struct openrdma_qp *qp)
{
	struct openrdma_qp_init_attr init;
	struct openrdma_qp_attr attr;

	cr_assert_eq(openrdma_qp_query(qp, &attr, OPENRDMA_QP_STATE, &init), 0);
	return attr.qp_state;
}

void tt_post_recv(struct tt_side *s, uint64_t wr_id, size_t off, uint32_t len)
{
	struct openrdma_sge sge = { (uintptr_t)s->buf + off, len, s->mr->lkey };
	struct openrdma_recv_wr wr = { .wr_id = wr_id,
				       .sg_list = &sge,
				       .num_sge = 1 };
	struct openrdma_recv_wr *bad;

	cr_assert_eq(openrdma_qp_post_recv(s->qp, &wr, &bad), 0);
}

void tt_post(struct tt_side *s, enum openrdma_wr_opcode op, uint64_t wr_id,
	     size_t off, uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct openrdma_sge sge = { (uintptr_t)s->buf + off, len, s->mr->lkey };
	struct openrdma_send_wr wr = { .wr_id = wr_id,
				       .sg_list = &sge,
				       .num_sge = 1,
				       .opcode = op,
				       .send_flags = OPENRDMA_SEND_SIGNALED };
	struct openrdma_send_wr *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	cr_assert_eq(openrdma_qp_post_send(s->qp, &wr, &bad), 0);
}

void tt_hand_to_poller(struct tt_side *poller, struct tt_side *writer,
		       uint64_t raddr, uint32_t rkey)
{
	struct tcp_ctx *tctx = to_tcp_ctx(poller->ctx);
	struct openrdma_sge sge = { (uintptr_t)writer->buf, 64,
				    writer->mr->lkey };
	struct openrdma_send_wr wr = { .sg_list = &sge,
				       .num_sge = 1,
				       .opcode = OPENRDMA_WR_RDMA_WRITE },
				*bad;
	uint64_t until, end = tt_now_ms() + TT_TIMEOUT_MS;
	struct openrdma_wc wc;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	while (tt_now_ms() < end) {
		cr_assert_eq(openrdma_qp_post_send(writer->qp, &wr, &bad), 0);
		until = tt_now_ms() + 50;
		while (tt_now_ms() < until && !atomic_load(&tctx->app_count))
			cr_assert_eq(openrdma_cq_poll(poller->cq, 1, &wc), 0);
		if (atomic_load(&tctx->app_count) == 1)
			return;
	}
	cr_assert_fail("the connection never went to its busy poller");
}

void tt_listen_addr(const struct tt_side *s, struct sockaddr_storage *ss)
{
	*ss = s->port.addr;
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = 0;
	else
		((struct sockaddr_in6 *)ss)->sin6_port = 0;
}

/* s's QP, in INIT, to RTR towards QP TT_PEER_QPN at the port peer, with
 * what the core's state table requires of that transition. */
static void qp_rtr(struct tt_side *s, const struct sockaddr_storage *peer)
{
	struct openrdma_qp_attr attr = { .qp_state = OPENRDMA_QPS_RTR };
	uint32_t req, opt;

	cr_assert_eq(core_qp_transition(OPENRDMA_QPT_RC, OPENRDMA_QPS_INIT,
					OPENRDMA_QPS_RTR, &req, &opt),
		     0);
	attr.path_mtu = OPENRDMA_MTU_4096;
	attr.dest_qp_num = TT_PEER_QPN;
	attr.ah_attr.port_num = 1;
	attr.ah_attr.addr = *peer;
	cr_assert_eq(openrdma_qp_modify(s->qp, &attr,
					OPENRDMA_QP_STATE | (int)req),
		     0);
}

int tt_raw_target(struct tt_side *s)
{
	struct sockaddr_storage peer = s->port.addr;
	struct tcp_frame f;
	int fd;

	tt_qp(s, OPENRDMA_QPT_RC);
	tt_qp_init(s->qp);
	/* the port the raw peer claims as its own: ours, on TT_PEER_PORT */
	if (peer.ss_family == AF_INET)
		((struct sockaddr_in *)&peer)->sin_port = htons(TT_PEER_PORT);
	else
		((struct sockaddr_in6 *)&peer)->sin6_port = htons(TT_PEER_PORT);
	/* RTR only: a QP in RTS would connect out to the claimed port */
	qp_rtr(s, &peer);

	fd = tt_raw_connect(&s->port.addr);
	memset(&f, 0, sizeof(f));
	f.opcode = TCP_OP_HELLO;
	f.qpn = s->qp->qp_num;
	f.src_qpn = TT_PEER_QPN;
	f.port = TT_PEER_PORT;
	if (s->port.addr.ss_family == AF_INET) {
		f.family = TCP_FAMILY_IPV4;
		memcpy(f.addr, &((struct sockaddr_in *)&s->port.addr)->sin_addr,
		       4);
	} else {
		f.family = TCP_FAMILY_IPV6;
		memcpy(f.addr,
		       &((struct sockaddr_in6 *)&s->port.addr)->sin6_addr, 16);
	}
	tt_raw_frame(fd, &f, NULL);
	cr_assert_eq(tt_raw_read(fd, &f, TT_TIMEOUT_MS), 0, "no HELLO answer");
	cr_assert_eq(f.opcode, TCP_OP_HELLO);
	cr_assert_eq(f.qpn, TT_PEER_QPN);
	cr_assert_eq(f.src_qpn, s->qp->qp_num);
	return fd;
}

int tt_raw_initiator(struct tt_side *s)
{
	struct openrdma_qp_attr attr;
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct timeval tv = { .tv_sec = 5 };
	struct tcp_frame f;
	int lfd, fd;

	tt_qp(s, OPENRDMA_QPT_RC);
	tt_qp_init(s->qp);
	tt_listen_addr(s, &ss);
	lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(lfd, 0);
	cr_assert_eq(bind(lfd, (struct sockaddr *)&ss,
			  ss.ss_family == AF_INET ?
				  sizeof(struct sockaddr_in) :
				  sizeof(struct sockaddr_in6)),
		     0);
	cr_assert_eq(listen(lfd, 1), 0);
	cr_assert_eq(getsockname(lfd, (struct sockaddr *)&ss, &len), 0);

	qp_rtr(s, &ss);
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = OPENRDMA_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.max_rd_atomic = 1;
	cr_assert_eq(openrdma_qp_modify(s->qp, &attr,
					OPENRDMA_QP_STATE |
						OPENRDMA_QP_TIMEOUT |
						OPENRDMA_QP_RETRY_CNT |
						OPENRDMA_QP_RNR_RETRY |
						OPENRDMA_QP_SQ_PSN |
						OPENRDMA_QP_MAX_QP_RD_ATOMIC),
		     0);

	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	cr_assert_geq(fd, 0, "the QP did not connect: %s", strerror(errno));
	close(lfd);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	cr_assert_eq(tt_raw_read(fd, &f, TT_TIMEOUT_MS), 0);
	cr_assert_eq(f.opcode, TCP_OP_HELLO);
	cr_assert_eq(f.qpn, TT_PEER_QPN);
	f.qpn = s->qp->qp_num;
	f.src_qpn = TT_PEER_QPN;
	tt_raw_frame(fd, &f, NULL);
	return fd;
}

int tt_raw_connect(const struct sockaddr_storage *addr)
{
	struct timeval tv = { .tv_sec = 5 };
	socklen_t len = addr->ss_family == AF_INET ?
				sizeof(struct sockaddr_in) :
				sizeof(struct sockaddr_in6);
	int fd;

	fd = socket(addr->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(fd, 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	cr_assert_eq(connect(fd, (const struct sockaddr *)addr, len), 0,
		     "raw connect: %s", strerror(errno));
	return fd;
}

void tt_raw_send(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	ssize_t n;

	while (len) {
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n <= 0)
			return; /* the transport may already have hung up */
		p += n;
		len -= (size_t)n;
	}
}

void tt_raw_frame(int fd, const struct tcp_frame *f, const void *payload)
{
	uint8_t hdr[TCP_FRAME_HDR_MAX];

	tt_raw_send(fd, hdr, tcp_frame_encode(f, hdr));
	if (f->length && payload)
		tt_raw_send(fd, payload, f->length);
}

static int read_all(int fd, uint8_t *buf, size_t len, uint64_t end)
{
	ssize_t n;

	while (len) {
		if (tt_now_ms() > end)
			return -1;
		if (wait_fd(fd, 100))
			continue;
		n = recv(fd, buf, len, MSG_DONTWAIT);
		if (n == 0)
			return -1;
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int tt_raw_read(int fd, struct tcp_frame *f, int timeout_ms)
{
	uint64_t end = tt_now_ms() + (uint64_t)timeout_ms;
	uint8_t buf[TCP_FRAME_HDR_MAX], skip[256];
	size_t need = TCP_FRAME_BASE_LEN, have = 0;
	uint32_t left;
	int n;

	for (;;) {
		if (read_all(fd, buf + have, need - have, end))
			return -1;
		have = need;
		n = tcp_frame_parse(buf, have, f, &need);
		if (n < 0)
			return -1;
		if (n > 0)
			break;
	}
	for (left = f->length; left;) {
		n = left < sizeof(skip) ? (int)left : (int)sizeof(skip);
		if (read_all(fd, skip, (size_t)n, end))
			return -1;
		left -= (uint32_t)n;
	}
	return 0;
}

bool tt_raw_closed(int fd, int ms)
{
	uint64_t end = tt_now_ms() + (uint64_t)ms;
	uint8_t buf[4096];
	ssize_t n;

	while (tt_now_ms() <= end) {
		if (wait_fd(fd, 50))
			continue;
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			return true;
	}
	return false;
}
