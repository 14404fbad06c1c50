/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * tcp_xcheck: a subset of the conformance checks, run between two
 * processes that may sit on different hosts (or network namespaces):
 *
 *   tcp_xcheck [-d IFACE] -a ADDR -p PORT server
 *   tcp_xcheck [-d IFACE] -a ADDR -p PORT client
 *
 * The server listens on ADDR:PORT, the client connects there.  Checked:
 * private data both ways; SEND with immediate data both ways; RDMA WRITE
 * then SEND; RDMA READ; fetch-and-add and compare-and-swap; RDMA WRITE
 * with immediate data; a UD datagram with its GRH and the reply through
 * openrdma_ah_attr_from_wc(); a write with a forged key (REM_ACCESS_ERR at
 * the client, QP_ACCESS_ERR at the server, memory untouched); and the
 * disconnect.  Exit status 0 when everything held, 1 otherwise, 2 on a
 * usage error.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openrdma/verbs.h>

/* The buffer, in LEN-byte areas. */
#define LEN 4096
enum {
	AREA_WRITE, /* RDMA writes land here; reads into the client */
	AREA_ATOMIC, /* the atomic word */
	AREA_RECV, /* RC receives */
	AREA_SEND, /* what sends and atomics' results use */
	AREA_READ, /* what the client reads */
	AREA_UD, /* UD receives */
	AREAS
};
#define AT(area) ((size_t)(area)*LEN)
/* RC receives are posted into slots of their own: a message that comes
 * before the one ahead of it was read must not land on it */
#define RECV_SLOTS 8
#define SLOT_LEN (LEN / RECV_SLOTS)
#define RECV_AT(slot) (AT(AREA_RECV) + (size_t)(slot)*SLOT_LEN)
#define TIMEOUT_MS 10000
#define QKEY 0x600dcafeu
#define IMM 0x11223344u

/* What each side tells the other in the CM private data. */
struct info {
	uint64_t addr;
	uint32_t rkey;
	uint32_t ud_qpn;
	struct sockaddr_storage port; /* for UD */
};

struct side {
	bool server;
	struct openrdma_context *ctx;
	struct openrdma_pd *pd;
	struct openrdma_cq *scq; /* the RC QP's sends */
	struct openrdma_cq *rcq; /* and receives */
	struct openrdma_cq *ud_cq;
	struct openrdma_qp *qp;
	struct openrdma_qp *ud;
	struct openrdma_cm_channel *ch;
	struct openrdma_cm_id *listen_id;
	struct openrdma_cm_id *id;
	uint8_t *buf;
	struct openrdma_mr *mr;
	struct info peer;
};

#define CHECK(cond, ...)                                                 \
	do {                                                             \
		if (!(cond)) {                                           \
			fprintf(stderr, "tcp_xcheck: %s:%d: ", __FILE__, \
				__LINE__);                               \
			fprintf(stderr, __VA_ARGS__);                    \
			fputc('\n', stderr);                             \
			exit(1);                                         \
		}                                                        \
	} while (0)

#define OK(expr)                                                              \
	do {                                                                  \
		int ok_ret_ = (expr);                                         \
		CHECK(!ok_ret_, "%s: %s", #expr, openrdma_strerror(ok_ret_)); \
	} while (0)

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void step(struct side *s, const char *what)
{
	printf("tcp_xcheck %s: %s: ok\n", s->server ? "server" : "client",
	       what);
	fflush(stdout);
}

static void poll_one(struct openrdma_cq *cq, struct openrdma_wc *wc,
		     enum openrdma_wc_status status, int opcode)
{
	uint64_t end = now_ms() + TIMEOUT_MS;
	int n;

	while (!(n = openrdma_cq_poll(cq, 1, wc)))
		CHECK(now_ms() < end, "no completion");
	CHECK(n == 1, "cq_poll: %s", openrdma_strerror(n));
	CHECK(wc->status == status, "completion %llu: %s, want %s",
	      (unsigned long long)wc->wr_id, openrdma_wc_status_str(wc->status),
	      openrdma_wc_status_str(status));
	CHECK(opcode < 0 || (int)wc->opcode == opcode,
	      "completion opcode %d, want %d", wc->opcode, opcode);
}

static struct openrdma_cm_event *cm_wait(struct side *s,
					 enum openrdma_cm_event_type type)
{
	struct pollfd pfd = { .fd = s->ch->fd, .events = POLLIN };
	struct openrdma_cm_event *ev;

	CHECK(poll(&pfd, 1, TIMEOUT_MS) == 1, "no CM event, want %s",
	      openrdma_cm_event_str(type));
	OK(openrdma_cm_event_get(s->ch, &ev));
	CHECK(ev->event == type, "CM event %s (%d), want %s",
	      openrdma_cm_event_str(ev->event), ev->status,
	      openrdma_cm_event_str(type));
	return ev;
}

static void post_recv(struct openrdma_qp *qp, struct side *s, uint64_t id,
		      size_t off, uint32_t len)
{
	struct openrdma_sge sge = { (uintptr_t)s->buf + off, len, s->mr->lkey };
	struct openrdma_recv_wr wr = { .wr_id = id,
				       .sg_list = &sge,
				       .num_sge = 1 };
	struct openrdma_recv_wr *bad;

	OK(openrdma_qp_post_recv(qp, &wr, &bad));
}

static void post(struct side *s, struct openrdma_qp *qp,
		 struct openrdma_send_wr *wr, size_t off, uint32_t len)
{
	struct openrdma_sge sge = { (uintptr_t)s->buf + off, len, s->mr->lkey };
	struct openrdma_send_wr *bad;

	wr->sg_list = &sge;
	wr->num_sge = 1;
	wr->send_flags |= OPENRDMA_SEND_SIGNALED;
	OK(openrdma_qp_post_send(qp, wr, &bad));
}

static void send_msg(struct side *s, const char *msg, uint32_t imm)
{
	struct openrdma_send_wr wr = {
		.opcode = imm ? OPENRDMA_WR_SEND_WITH_IMM : OPENRDMA_WR_SEND,
		.imm_data = htonl(imm),
	};
	struct openrdma_wc wc;

	strcpy((char *)s->buf + AT(AREA_SEND), msg);
	post(s, s->qp, &wr, AT(AREA_SEND), (uint32_t)strlen(msg) + 1);
	poll_one(s->scq, &wc, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_SEND);
}

/* Waits for the message msg, in the receive slot its wr_id names. */
static void recv_msg(struct side *s, const char *msg, uint32_t imm)
{
	struct openrdma_wc wc;
	const char *got;

	poll_one(s->rcq, &wc, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_RECV);
	got = (const char *)s->buf + RECV_AT(wc.wr_id);
	CHECK(!strcmp(got, msg), "got \"%s\", want \"%s\"", got, msg);
	if (imm)
		CHECK((wc.wc_flags & OPENRDMA_WC_WITH_IMM) &&
			      ntohl(wc.imm_data) == imm,
		      "immediate data 0x%x", ntohl(wc.imm_data));
	post_recv(s->qp, s, wc.wr_id, RECV_AT(wc.wr_id), SLOT_LEN);
}

static void setup(struct side *s, const char *ifname)
{
	struct openrdma_qp_init_attr init = {
		.qp_type = OPENRDMA_QPT_RC,
		.cap = { .max_send_wr = 64,
			 .max_recv_wr = 64,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct openrdma_qp_attr attr = {
		.qp_state = OPENRDMA_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = OPENRDMA_ACCESS_REMOTE_WRITE |
				   OPENRDMA_ACCESS_REMOTE_READ |
				   OPENRDMA_ACCESS_REMOTE_ATOMIC,
		.qkey = QKEY,
	};
	struct openrdma_device *dev;
	int i;

	OK(openrdma_device_find(ifname, &dev));
	OK(openrdma_device_open(dev, &s->ctx));
	OK(openrdma_pd_alloc(s->ctx, &s->pd));
	OK(openrdma_cq_create(s->ctx, 128, NULL, NULL, 0, &s->scq));
	OK(openrdma_cq_create(s->ctx, 128, NULL, NULL, 0, &s->rcq));
	OK(openrdma_cq_create(s->ctx, 64, NULL, NULL, 0, &s->ud_cq));
	OK(openrdma_cm_channel_create(s->ctx, &s->ch));
	s->buf = aligned_alloc(4096, AREAS * LEN);
	CHECK(s->buf, "out of memory");
	memset(s->buf, s->server ? 's' : 'c', AREAS * LEN);
	OK(openrdma_mr_reg(s->pd, s->buf, AREAS * LEN,
			   OPENRDMA_ACCESS_LOCAL_WRITE |
				   OPENRDMA_ACCESS_REMOTE_WRITE |
				   OPENRDMA_ACCESS_REMOTE_READ |
				   OPENRDMA_ACCESS_REMOTE_ATOMIC,
			   &s->mr));
	init.send_cq = s->scq;
	init.recv_cq = s->rcq;
	OK(openrdma_qp_create(s->pd, &init, &s->qp));
	OK(openrdma_qp_modify(s->qp, &attr,
			      OPENRDMA_QP_STATE | OPENRDMA_QP_PKEY_INDEX |
				      OPENRDMA_QP_PORT |
				      OPENRDMA_QP_ACCESS_FLAGS));
	for (i = 0; i < RECV_SLOTS; i++)
		post_recv(s->qp, s, (uint64_t)i, RECV_AT(i), SLOT_LEN);

	/* the UD QP, straight to RTS */
	init.qp_type = OPENRDMA_QPT_UD;
	init.send_cq = s->ud_cq;
	init.recv_cq = s->ud_cq;
	OK(openrdma_qp_create(s->pd, &init, &s->ud));
	OK(openrdma_qp_modify(s->ud, &attr,
			      OPENRDMA_QP_STATE | OPENRDMA_QP_PKEY_INDEX |
				      OPENRDMA_QP_PORT | OPENRDMA_QP_QKEY));
	attr.qp_state = OPENRDMA_QPS_RTR;
	OK(openrdma_qp_modify(s->ud, &attr, OPENRDMA_QP_STATE));
	attr.qp_state = OPENRDMA_QPS_RTS;
	OK(openrdma_qp_modify(s->ud, &attr,
			      OPENRDMA_QP_STATE | OPENRDMA_QP_SQ_PSN));
	post_recv(s->ud, s, 9, AT(AREA_UD), LEN);
}

static void my_info(struct side *s, struct info *info)
{
	struct openrdma_port_attr pa;

	memset(info, 0, sizeof(*info));
	OK(openrdma_port_query(s->ctx, 1, &pa));
	info->addr = (uintptr_t)s->buf;
	info->rkey = s->mr->rkey;
	info->ud_qpn = s->ud->qp_num;
	info->port = pa.addr;
}

static void connect_both(struct side *s, struct sockaddr_storage *ss)
{
	struct openrdma_conn_param param = { .responder_resources = 4,
					     .initiator_depth = 4,
					     .retry_count = 7,
					     .rnr_retry_count = 7 };
	struct openrdma_cm_event *ev;
	struct info mine;

	my_info(s, &mine);
	param.private_data = &mine;
	param.private_data_len = sizeof(mine);
	if (s->server) {
		OK(openrdma_cm_id_create(s->ctx, s->ch, NULL, OPENRDMA_PS_TCP,
					 &s->listen_id));
		OK(openrdma_cm_listen(s->listen_id, (struct sockaddr *)ss, 1));
		printf("tcp_xcheck server: listening\n");
		fflush(stdout);
		ev = cm_wait(s, OPENRDMA_CM_EVENT_CONNECT_REQUEST);
		CHECK(ev->param.private_data_len == sizeof(s->peer),
		      "connect private data of %u bytes",
		      ev->param.private_data_len);
		memcpy(&s->peer, ev->param.private_data, sizeof(s->peer));
		s->id = ev->id;
		openrdma_cm_event_ack(ev);
		OK(openrdma_cm_accept(s->id, s->qp, &param));
		openrdma_cm_event_ack(
			cm_wait(s, OPENRDMA_CM_EVENT_ESTABLISHED));
	} else {
		OK(openrdma_cm_id_create(s->ctx, s->ch, NULL, OPENRDMA_PS_TCP,
					 &s->id));
		OK(openrdma_cm_connect(s->id, s->qp, (struct sockaddr *)ss,
				       &param));
		ev = cm_wait(s, OPENRDMA_CM_EVENT_ESTABLISHED);
		CHECK(ev->param.private_data_len == sizeof(s->peer),
		      "accept private data of %u bytes",
		      ev->param.private_data_len);
		memcpy(&s->peer, ev->param.private_data, sizeof(s->peer));
		openrdma_cm_event_ack(ev);
	}
	step(s, "connect, private data both ways");
}

static void rdma(struct side *s, enum openrdma_wr_opcode op, size_t off,
		 uint32_t len, uint64_t raddr, uint32_t rkey,
		 enum openrdma_wc_status status, uint32_t imm)
{
	struct openrdma_send_wr wr = { .opcode = op, .imm_data = htonl(imm) };
	struct openrdma_wc wc;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	post(s, s->qp, &wr, off, len);
	poll_one(s->scq, &wc, status, -1);
}

static void atomic(struct side *s, enum openrdma_wr_opcode op, uint64_t add,
		   uint64_t swap, uint64_t want)
{
	struct openrdma_send_wr wr = { .opcode = op };
	struct openrdma_wc wc;
	uint64_t *res = (uint64_t *)(void *)(s->buf + AT(AREA_SEND));

	wr.wr.atomic.remote_addr = s->peer.addr + AT(AREA_ATOMIC);
	wr.wr.atomic.rkey = s->peer.rkey;
	wr.wr.atomic.compare_add = add;
	wr.wr.atomic.swap = swap;
	post(s, s->qp, &wr, AT(AREA_SEND), 8);
	poll_one(s->scq, &wc, OPENRDMA_WC_SUCCESS, -1);
	CHECK(*res == want, "atomic returned %llu, want %llu",
	      (unsigned long long)*res, (unsigned long long)want);
}

static void ud_exchange(struct side *s)
{
	struct openrdma_ah_attr ah_attr = { .port_num = 1 };
	struct openrdma_send_wr wr = { .opcode = OPENRDMA_WR_SEND };
	struct openrdma_ah *ah;
	struct openrdma_wc wc;
	bool sent;

	if (!s->server) {
		ah_attr.addr = s->peer.port;
		OK(openrdma_ah_create(s->pd, &ah_attr, &ah));
		strcpy((char *)s->buf + AT(AREA_SEND), "datagram");
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = s->peer.ud_qpn;
		wr.wr.ud.remote_qkey = QKEY;
		post(s, s->ud, &wr, AT(AREA_SEND), 9);
		/* the send's completion and the reply's, in either order:
		 * two work queues are not ordered with each other */
		poll_one(s->ud_cq, &wc, OPENRDMA_WC_SUCCESS, -1);
		sent = wc.opcode == OPENRDMA_WC_SEND;
		CHECK(sent || wc.opcode == OPENRDMA_WC_RECV,
		      "completion opcode %d", wc.opcode);
		poll_one(s->ud_cq, &wc, OPENRDMA_WC_SUCCESS,
			 sent ? OPENRDMA_WC_RECV : OPENRDMA_WC_SEND);
		CHECK(!strcmp((char *)s->buf + AT(AREA_UD) + OPENRDMA_GRH_LEN,
			      "reply"),
		      "UD reply \"%s\"",
		      (char *)s->buf + AT(AREA_UD) + OPENRDMA_GRH_LEN);
		OK(openrdma_ah_destroy(ah));
		step(s, "UD datagram and its reply");
		return;
	}
	poll_one(s->ud_cq, &wc, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_RECV);
	CHECK(wc.wc_flags & OPENRDMA_WC_GRH, "no GRH");
	CHECK(wc.byte_len == OPENRDMA_GRH_LEN + 9, "UD byte_len %u",
	      wc.byte_len);
	CHECK(!strcmp((char *)s->buf + AT(AREA_UD) + OPENRDMA_GRH_LEN,
		      "datagram"),
	      "UD payload");
	OK(openrdma_ah_attr_from_wc(
		s->ctx, 1, &wc,
		(struct openrdma_grh *)(void *)(s->buf + AT(AREA_UD)),
		&ah_attr));
	OK(openrdma_ah_create(s->pd, &ah_attr, &ah));
	strcpy((char *)s->buf + AT(AREA_SEND), "reply");
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = wc.src_qp;
	wr.wr.ud.remote_qkey = QKEY;
	post(s, s->ud, &wr, AT(AREA_SEND), 6);
	poll_one(s->ud_cq, &wc, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_SEND);
	OK(openrdma_ah_destroy(ah));
	step(s, "UD datagram and its reply");
}

static void run_client(struct side *s)
{
	size_t i;

	recv_msg(s, "hello client", IMM);
	send_msg(s, "hello server", IMM);
	step(s, "send with immediate data both ways");

	memset(s->buf, 'W', LEN);
	rdma(s, OPENRDMA_WR_RDMA_WRITE, 0, LEN, s->peer.addr, s->peer.rkey,
	     OPENRDMA_WC_SUCCESS, 0);
	send_msg(s, "written", 0);
	recv_msg(s, "seen", 0);
	step(s, "RDMA write, then send");

	memset(s->buf, 0, LEN);
	rdma(s, OPENRDMA_WR_RDMA_READ, 0, LEN, s->peer.addr + AT(AREA_READ),
	     s->peer.rkey, OPENRDMA_WC_SUCCESS, 0);
	for (i = 0; i < LEN; i++)
		CHECK(s->buf[i] == 's', "read byte %zu is 0x%02x", i,
		      s->buf[i]);
	step(s, "RDMA read");

	/* the server set its atomic word to 40 */
	atomic(s, OPENRDMA_WR_ATOMIC_FETCH_AND_ADD, 2, 0, 40);
	atomic(s, OPENRDMA_WR_ATOMIC_CMP_AND_SWP, 42, 7, 42);
	atomic(s, OPENRDMA_WR_ATOMIC_CMP_AND_SWP, 42, 9, 7);
	step(s, "fetch-and-add, compare-and-swap hit and miss");

	rdma(s, OPENRDMA_WR_RDMA_WRITE_WITH_IMM, 0, 16, s->peer.addr,
	     s->peer.rkey, OPENRDMA_WC_SUCCESS, IMM + 1);
	recv_msg(s, "imm seen", 0);
	step(s, "RDMA write with immediate data");

	ud_exchange(s);

	rdma(s, OPENRDMA_WR_RDMA_WRITE, 0, 64, s->peer.addr + AT(AREA_READ),
	     s->peer.rkey ^ 0x00800000u, OPENRDMA_WC_REM_ACCESS_ERR, 0);
	step(s, "forged key: REM_ACCESS_ERR");
}

static void run_server(struct side *s)
{
	struct openrdma_async_event ev;
	struct openrdma_wc wc;
	uint64_t end;
	size_t i;

	memset(s->buf + AT(AREA_READ), 's', LEN);
	*(uint64_t *)(void *)(s->buf + AT(AREA_ATOMIC)) = 40;
	send_msg(s, "hello client", IMM);
	recv_msg(s, "hello server", IMM);
	step(s, "send with immediate data both ways");

	recv_msg(s, "written", 0);
	for (i = 0; i < LEN; i++)
		CHECK(s->buf[i] == 'W', "written byte %zu is 0x%02x", i,
		      s->buf[i]);
	send_msg(s, "seen", 0);
	step(s, "RDMA write, then send");

	poll_one(s->rcq, &wc, OPENRDMA_WC_SUCCESS,
		 OPENRDMA_WC_RECV_RDMA_WITH_IMM);
	CHECK(ntohl(wc.imm_data) == IMM + 1 && wc.byte_len == 16,
	      "write with immediate: imm 0x%x, %u bytes", ntohl(wc.imm_data),
	      wc.byte_len);
	CHECK(*(uint64_t *)(void *)(s->buf + AT(AREA_ATOMIC)) == 7,
	      "atomic word %llu",
	      (unsigned long long)*(uint64_t *)(void *)(s->buf +
							AT(AREA_ATOMIC)));
	post_recv(s->qp, s, wc.wr_id, RECV_AT(wc.wr_id), SLOT_LEN);
	send_msg(s, "imm seen", 0);
	step(s, "RDMA write with immediate data; atomics");

	ud_exchange(s);

	end = now_ms() + TIMEOUT_MS;
	while (openrdma_async_event_get(s->ctx, &ev))
		CHECK(now_ms() < end, "no QP_ACCESS_ERR");
	CHECK(ev.event_type == OPENRDMA_EVENT_QP_ACCESS_ERR, "async event %s",
	      openrdma_event_type_str(ev.event_type));
	openrdma_async_event_ack(&ev);
	for (i = 0; i < LEN; i++)
		CHECK(s->buf[AT(AREA_READ) + i] == 's', "byte %zu written", i);
	step(s, "forged key: QP_ACCESS_ERR, memory untouched");
}

static void teardown(struct side *s)
{
	if (!s->server)
		OK(openrdma_cm_disconnect(s->id, NULL, 0));
	openrdma_cm_event_ack(cm_wait(s, OPENRDMA_CM_EVENT_DISCONNECTED));
	step(s, "disconnect");
	OK(openrdma_cm_id_destroy(s->id));
	if (s->listen_id)
		OK(openrdma_cm_id_destroy(s->listen_id));
	OK(openrdma_qp_destroy(s->qp));
	OK(openrdma_qp_destroy(s->ud));
	OK(openrdma_cm_channel_destroy(s->ch));
	OK(openrdma_mr_dereg(s->mr));
	OK(openrdma_cq_destroy(s->scq));
	OK(openrdma_cq_destroy(s->rcq));
	OK(openrdma_cq_destroy(s->ud_cq));
	OK(openrdma_pd_dealloc(s->pd));
	OK(openrdma_context_close(s->ctx));
	free(s->buf);
}

int main(int argc, char **argv)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV };
	const char *ifname = "tcp0", *addr = NULL, *port = NULL;
	struct side s = { 0 };
	struct sockaddr_storage ss;
	struct addrinfo *res;
	int c;

	while ((c = getopt(argc, argv, "d:a:p:")) != -1) {
		switch (c) {
		case 'd':
			ifname = optarg;
			break;
		case 'a':
			addr = optarg;
			break;
		case 'p':
			port = optarg;
			break;
		default:
			return 2;
		}
	}
	if (!addr || !port || optind != argc - 1 ||
	    (strcmp(argv[optind], "server") &&
	     strcmp(argv[optind], "client"))) {
		fprintf(stderr, "usage: tcp_xcheck [-d IFACE] -a ADDR -p PORT "
				"server|client\n");
		return 2;
	}
	s.server = !strcmp(argv[optind], "server");
	if (getaddrinfo(addr, port, &hints, &res)) {
		fprintf(stderr, "tcp_xcheck: bad address %s port %s\n", addr,
			port);
		return 2;
	}
	memset(&ss, 0, sizeof(ss));
	memcpy(&ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);

	setup(&s, ifname);
	connect_both(&s, &ss);
	if (s.server)
		run_server(&s);
	else
		run_client(&s);
	teardown(&s);
	printf("tcp_xcheck %s: all checks passed\n",
	       s.server ? "server" : "client");
	return 0;
}
