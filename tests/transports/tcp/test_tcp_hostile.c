/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Hostile peers against a live tcp context: a raw socket speaks (or
 * garbles) the wire.  Malformed frames close the connection, forged keys
 * and out-of-bounds accesses are answered with a NAK and leave memory
 * untouched, floods of connections are bounded, and the process goes on.
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "tt.h"

#define FILL 0xa5
#define LEN 4096
/* A QP in RTR towards the raw peer, with a buffer of len bytes, and the
 * peer's connection to it, past the HELLO handshake. */
static int target_of(struct tt_side *t, size_t len)
{
	tt_open(t, "tcp0", len,
		OPENRDMA_ACCESS_LOCAL_WRITE | OPENRDMA_ACCESS_REMOTE_WRITE |
			OPENRDMA_ACCESS_REMOTE_READ |
			OPENRDMA_ACCESS_REMOTE_ATOMIC,
		FILL);
	return tt_raw_target(t);
}

static int target(struct tt_side *t)
{
	return target_of(t, LEN);
}

static void write_frame(struct tcp_frame *f, const struct tt_side *t,
			uint32_t psn, uint64_t raddr, uint32_t rkey,
			uint32_t len)
{
	memset(f, 0, sizeof(*f));
	f->opcode = TCP_OP_WRITE;
	f->flags = TCP_FLAG_ACKREQ;
	f->qpn = t->qp->qp_num;
	f->psn = psn;
	f->raddr = raddr;
	f->rkey = rkey;
	f->length = len;
}

/* Nothing of t's buffer outside [off, off + len) was written. */
static void expect_untouched_outside(const struct tt_side *t, size_t off,
				     size_t len)
{
	size_t i;

	for (i = 0; i < t->len; i++)
		if (i < off || i >= off + len)
			cr_assert_eq(t->buf[i], FILL, "byte %zu was written",
				     i);
}

static void expect_untouched(const struct tt_side *t)
{
	expect_untouched_outside(t, 0, 0);
}

/* The peer ended mid-request: t's QP goes to ERR (an idle QP waits out
 * its retry span, at most a second, first). */
static void expect_qp_error(struct tt_side *t)
{
	int i;

	for (i = 0; i < 100 && tt_qp_state(t->qp) != OPENRDMA_QPS_ERR; i++)
		usleep(20000);
	cr_assert_eq(tt_qp_state(t->qp), OPENRDMA_QPS_ERR,
		     "the QP outlived its peer mid-request");
}

/* The peer's write is refused: a NAK, memory as it was, the QP in ERR
 * with QP_ACCESS_ERR. */
static void expect_refused(struct tt_side *t, int fd, uint32_t psn)
{
	struct openrdma_async_event ev;
	struct tcp_frame f;

	cr_assert_eq(tt_raw_read(fd, &f, TT_TIMEOUT_MS), 0, "no answer");
	cr_assert_eq(f.opcode, TCP_OP_NAK, "answer %s, want NAK",
		     tcp_frame_op_name(f.opcode));
	cr_assert_eq(f.psn, psn);
	cr_assert_eq(f.syndrome, OPENRDMA_WC_REM_ACCESS_ERR);
	expect_untouched(t);
	cr_assert_eq(tt_qp_state(t->qp), OPENRDMA_QPS_ERR);
	cr_assert_eq(tt_async(t, &ev, TT_TIMEOUT_MS), 0);
	cr_assert_eq(ev.event_type, OPENRDMA_EVENT_QP_ACCESS_ERR);
	openrdma_async_event_ack(&ev);
}

Test(tcp_hostile, forged_rkey_write_is_refused)
{
	uint8_t payload[64];
	struct tcp_frame f;
	struct tt_side t;
	int fd = target(&t);

	memset(payload, 0x5a, sizeof(payload));
	/* another index: a key nothing holds */
	write_frame(&f, &t, 0, (uintptr_t)t.buf, t.mr->rkey ^ 0x00010000u,
		    sizeof(payload));
	tt_raw_frame(fd, &f, payload);
	expect_refused(&t, fd, 0);
	close(fd);
	tt_close(&t);
}

Test(tcp_hostile, out_of_bounds_write_is_refused)
{
	uint8_t payload[64];
	struct tcp_frame f;
	struct tt_side t;
	int fd = target(&t);

	memset(payload, 0x5a, sizeof(payload));
	write_frame(&f, &t, 0, (uintptr_t)t.buf + LEN - 32, t.mr->rkey,
		    sizeof(payload));
	tt_raw_frame(fd, &f, payload);
	expect_refused(&t, fd, 0);
	close(fd);
	tt_close(&t);
}

Test(tcp_hostile, requests_after_a_nak_are_dropped)
{
	uint8_t payload[64];
	struct tcp_frame f;
	struct tt_side t;
	int fd = target(&t);

	memset(payload, 0x5a, sizeof(payload));
	write_frame(&f, &t, 0, (uintptr_t)t.buf, 0x12345600, sizeof(payload));
	tt_raw_frame(fd, &f, payload);
	/* a valid write behind it: the target dropped everything after the
	 * NAK, its payload read and thrown away */
	write_frame(&f, &t, 1, (uintptr_t)t.buf, t.mr->rkey, sizeof(payload));
	tt_raw_frame(fd, &f, payload);
	expect_refused(&t, fd, 0);
	cr_assert_eq(tt_raw_read(fd, &f, 300), -1, "answer %s after the NAK",
		     tcp_frame_op_name(f.opcode));
	expect_untouched(&t);
	close(fd);
	tt_close(&t);
}

Test(tcp_hostile, valid_write_is_placed_and_acknowledged)
{
	uint8_t payload[64];
	struct tcp_frame f;
	struct tt_side t;
	int fd = target(&t);

	memset(payload, 0x5a, sizeof(payload));
	write_frame(&f, &t, 7, (uintptr_t)t.buf + 100, t.mr->rkey,
		    sizeof(payload));
	tt_raw_frame(fd, &f, payload);
	cr_assert_eq(tt_raw_read(fd, &f, TT_TIMEOUT_MS), 0);
	cr_assert_eq(f.opcode, TCP_OP_ACK, "answer %s, want ACK",
		     tcp_frame_op_name(f.opcode));
	cr_assert_eq(f.ack, 7);
	cr_assert(!memcmp(t.buf + 100, payload, sizeof(payload)));
	cr_assert_eq(t.buf[99], FILL);
	cr_assert_eq(t.buf[164], FILL);
	close(fd);
	tt_close(&t);
}

/* The transport hangs up on fd; the context keeps working. */
static void expect_hangup(struct tt_side *t, int fd)
{
	int fd2;

	cr_assert(tt_raw_closed(fd, TT_TIMEOUT_MS),
		  "the connection stayed open");
	close(fd);
	expect_untouched(t);
	/* the port still answers */
	fd2 = tt_raw_connect(&t->port.addr);
	close(fd2);
}

Test(tcp_hostile, garbage_closes_the_connection)
{
	uint8_t junk[100];
	struct tt_side t;
	int fd = target(&t);
	size_t i;

	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 37 + 11);
	cr_assert_eq(send(fd, junk, sizeof(junk), MSG_NOSIGNAL),
		     (ssize_t)sizeof(junk));
	expect_hangup(&t, fd);
	tt_close(&t);
}

Test(tcp_hostile, oversized_length_closes_the_connection)
{
	struct tcp_frame f;
	uint8_t hdr[TCP_FRAME_HDR_MAX];
	struct tt_side t;
	int fd = target(&t);
	unsigned int n;

	write_frame(&f, &t, 0, (uintptr_t)t.buf, t.mr->rkey, 64);
	n = tcp_frame_encode(&f, hdr);
	/* length 0xffffffff: past any message */
	memset(hdr + 8, 0xff, 4);
	cr_assert_eq(send(fd, hdr, n, MSG_NOSIGNAL), (ssize_t)n);
	expect_hangup(&t, fd);
	tt_close(&t);
}

Test(tcp_hostile, answers_on_a_target_connection_close_it)
{
	struct tcp_frame f;
	struct tt_side t;
	int fd = target(&t);

	memset(&f, 0, sizeof(f));
	f.opcode = TCP_OP_ACK;
	f.flags = TCP_FLAG_ACK;
	f.qpn = t.qp->qp_num;
	f.ack = 3;
	tt_raw_frame(fd, &f, NULL);
	expect_hangup(&t, fd);
	tt_close(&t);
}

Test(tcp_hostile, truncated_frames_then_hangup)
{
	uint8_t buf[TCP_FRAME_HDR_MAX + 16];
	struct tcp_frame f;
	struct tt_side t;
	int fd = target(&t);

	/* a whole header and part of its payload, then at once the end,
	 * which usually comes in the same epoll edge as the data: what came
	 * may be placed, nothing outside the target range */
	write_frame(&f, &t, 0, (uintptr_t)t.buf + 512, t.mr->rkey, 64);
	tcp_frame_encode(&f, buf);
	memset(buf + f.hlen, 0x5a, 16);
	cr_assert_eq(send(fd, buf, f.hlen + 16, MSG_NOSIGNAL),
		     (ssize_t)(f.hlen + 16));
	close(fd);
	expect_qp_error(&t);
	expect_untouched_outside(&t, 512, 64);
	/* half a header, then the end */
	fd = tt_raw_connect(&t.port.addr);
	cr_assert_eq(send(fd, buf, 20, MSG_NOSIGNAL), 20);
	close(fd);
	fd = tt_raw_connect(&t.port.addr);
	close(fd);
	tt_close(&t);
}

/*
 * A large write whose payload comes in pieces with pauses between, as
 * from a slow peer.  Between them the target raises its socket's
 * low-water mark to what remains of the payload (tcp_rx.c), and must
 * still wake for the last piece, which brings exactly that, and for the
 * peer's end in the middle.
 */
#define PIECES_LEN (256u << 10)
#define PIECES_OFF 512
#define PIECE_PAUSE_US (30 * 1000)

static const size_t pieces[] = { 64u << 10, 100u << 10, 92u << 10 };

/* Sends a write's header and the first n pieces of its payload. */
static int write_in_pieces(struct tt_side *t, uint8_t *payload, size_t n)
{
	uint8_t hdr[TCP_FRAME_HDR_MAX];
	struct tcp_frame f;
	size_t i, off = 0;
	int fd = target_of(t, PIECES_OFF + PIECES_LEN + 4096);

	for (i = 0; i < PIECES_LEN; i++)
		payload[i] = (uint8_t)(i * 7 + 3);
	write_frame(&f, t, 9, (uintptr_t)t->buf + PIECES_OFF, t->mr->rkey,
		    PIECES_LEN);
	tt_raw_send(fd, hdr, tcp_frame_encode(&f, hdr));
	for (i = 0; i < n; i++) {
		usleep(PIECE_PAUSE_US);
		tt_raw_send(fd, payload + off, pieces[i]);
		off += pieces[i];
	}
	return fd;
}

Test(tcp_hostile, write_in_pieces_is_placed, .timeout = 30)
{
	static uint8_t payload[PIECES_LEN];
	struct tcp_frame f;
	struct tt_side t;
	int fd = write_in_pieces(&t, payload, 3);

	cr_assert_eq(tt_raw_read(fd, &f, TT_TIMEOUT_MS), 0,
		     "no answer to a write that came in pieces");
	cr_assert_eq(f.opcode, TCP_OP_ACK, "answer %s, want ACK",
		     tcp_frame_op_name(f.opcode));
	cr_assert_eq(f.ack, 9);
	cr_assert(!memcmp(t.buf + PIECES_OFF, payload, PIECES_LEN));
	expect_untouched_outside(&t, PIECES_OFF, PIECES_LEN);
	close(fd);
	tt_close(&t);
}

Test(tcp_hostile, end_in_the_middle_of_a_large_payload, .timeout = 30)
{
	static uint8_t payload[PIECES_LEN];
	struct tt_side t;
	int fd = write_in_pieces(&t, payload, 1);

	usleep(PIECE_PAUSE_US);
	close(fd);
	expect_qp_error(&t);
	expect_untouched_outside(&t, PIECES_OFF, PIECES_LEN);
	tt_close(&t);
}

/* A source larger than the sockets hold: its writer stops part-way. */
#define BIG (32u << 20)
#define BIG_FILL 0x3c
#define BIG_AFTER 0xc3

/*
 * A QP of t in RTS towards a raw listener, which answers its HELLO and
 * then reads nothing; returns the raw peer's end of the connection.
 */
static int initiator(struct tt_side *t)
{
	tt_open(t, "tcp0", BIG, TT_ACCESS, BIG_FILL);
	return tt_raw_initiator(t);
}

/*
 * The memory guard of the writer: an RDMA write whose source is
 * deregistered while the socket is full sends nothing of what the
 * application wrote there afterwards; the connection ends instead, and
 * the write does not complete successfully.
 */
Test(tcp_hostile, deregistered_source_is_not_sent, .timeout = 30)
{
	static uint8_t chunk[1 << 16];
	uint64_t got = 0;
	struct openrdma_wc wc;
	struct tt_side t;
	unsigned int hlen = tcp_frame_hlen(TCP_OP_WRITE);
	ssize_t n, i;
	int fd = initiator(&t);

	tt_post(&t, OPENRDMA_WR_RDMA_WRITE, 1, 0, BIG, 0x1000, 0x1234);
	/* its writer found the sockets full long before the end */
	usleep(200 * 1000);
	cr_assert_eq(openrdma_mr_dereg(t.mr), 0);
	t.mr = NULL;
	memset(t.buf, BIG_AFTER, BIG);

	for (;;) {
		n = recv(fd, chunk, sizeof(chunk), 0);
		if (n <= 0)
			break;
		for (i = 0; i < n; i++, got++) {
			if (got < hlen)
				continue;
			cr_assert_eq(chunk[i], BIG_FILL,
				     "byte %llu of the payload was written "
				     "after its MR was deregistered",
				     (unsigned long long)(got - hlen));
		}
	}
	cr_assert_lt(got, hlen + BIG, "the whole write went out");
	cr_assert_eq(tt_poll(&t, 1, &wc, TT_TIMEOUT_MS), 1);
	cr_assert_neq(wc.status, OPENRDMA_WC_SUCCESS);
	close(fd);
	tt_close(&t);
}

Test(tcp_hostile, hello_for_no_qp_is_refused)
{
	struct tcp_frame f;
	struct tt_side t;
	int fd;

	tt_open(&t, "tcp0", LEN, OPENRDMA_ACCESS_LOCAL_WRITE, FILL);
	fd = tt_raw_connect(&t.port.addr);
	memset(&f, 0, sizeof(f));
	f.opcode = TCP_OP_HELLO;
	f.qpn = 0xfffff0;
	f.src_qpn = 5;
	f.family = TCP_FAMILY_IPV4;
	f.port = 9;
	tt_raw_frame(fd, &f, NULL);
	cr_assert(tt_raw_closed(fd, TT_TIMEOUT_MS));
	close(fd);
	tt_close(&t);
}

Test(tcp_hostile, reset_peer_flushes_within_a_second)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	struct openrdma_async_event ev;
	struct openrdma_wc wc;
	struct tt_side t;
	uint64_t t0;
	int fd = target(&t);

	tt_post_recv(&t, 77, 0, 64);
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	t0 = tt_now_ms();
	close(fd); /* a reset */
	cr_assert_eq(tt_poll(&t, 1, &wc, 1000), 1,
		     "no completion within 1 s of the reset");
	cr_assert_eq(wc.wr_id, 77);
	cr_assert_eq(wc.status, OPENRDMA_WC_WR_FLUSH_ERR);
	cr_assert_eq(tt_qp_state(t.qp), OPENRDMA_QPS_ERR);
	cr_assert_eq(tt_async(&t, &ev, 1000), 0, "no async event");
	cr_assert_eq(ev.event_type, OPENRDMA_EVENT_QP_FATAL);
	openrdma_async_event_ack(&ev);
	cr_assert_leq(tt_now_ms() - t0, 1000);
	tt_close(&t);
}

/* A CM listener on the side's port address, port 0: its address. */
static void listener(struct tt_side *t, int backlog,
		     struct sockaddr_storage *ss)
{
	tt_listen_addr(t, ss);
	cr_assert_eq(openrdma_cm_id_create(t->ctx, t->ch, NULL, OPENRDMA_PS_TCP,
					   &t->listen_id),
		     0);
	cr_assert_eq(openrdma_cm_listen(t->listen_id, (struct sockaddr *)ss,
					backlog),
		     0);
	cr_assert_eq(openrdma_cm_local_addr(t->listen_id, ss), 0);
}

Test(tcp_hostile, cm_listener_garbage_and_truncated_connect)
{
	struct sockaddr_storage ss;
	uint8_t junk[64], pdata[10] = { 0 };
	struct tcp_frame f;
	struct tt_side t;
	int fd;

	tt_open(&t, "tcp0", LEN, OPENRDMA_ACCESS_LOCAL_WRITE, FILL);
	listener(&t, 4, &ss);
	memset(junk, 0xee, sizeof(junk));
	fd = tt_raw_connect(&ss);
	cr_assert_eq(send(fd, junk, sizeof(junk), MSG_NOSIGNAL),
		     (ssize_t)sizeof(junk));
	cr_assert(tt_raw_closed(fd, TT_TIMEOUT_MS));
	close(fd);
	/* a CONNECT announcing 100 bytes of private data, with 10 */
	fd = tt_raw_connect(&ss);
	memset(&f, 0, sizeof(f));
	f.opcode = TCP_OP_CONNECT;
	f.src_qpn = 9;
	f.length = 100;
	tt_raw_frame(fd, &f, NULL);
	cr_assert_eq(send(fd, pdata, sizeof(pdata), MSG_NOSIGNAL),
		     (ssize_t)sizeof(pdata));
	close(fd);
	cr_assert(tt_cm_quiet(&t, 300), "a request from a truncated CONNECT");
	tt_close(&t);
}

Test(tcp_hostile, connection_flood_is_bounded)
{
	enum { FLOOD = 200, BACKLOG = 4 };
	struct openrdma_cm_event *ev;
	struct sockaddr_storage ss;
	struct tt_side t, c;
	int fd[FLOOD], i, closed = 0;

	tt_open(&t, "tcp0", LEN, OPENRDMA_ACCESS_LOCAL_WRITE, FILL);
	listener(&t, BACKLOG, &ss);
	for (i = 0; i < FLOOD; i++)
		fd[i] = tt_raw_connect(&ss);
	for (i = 0; i < FLOOD; i++)
		if (tt_raw_closed(fd[i], 20))
			closed++;
	/* the ones that said nothing, beyond the backlog and some slack,
	 * were hung up on at once */
	cr_assert_geq(closed, FLOOD - BACKLOG - 32,
		      "only %d of %d silent connections refused", closed,
		      FLOOD);
	for (i = 0; i < FLOOD; i++)
		close(fd[i]);
	cr_assert(tt_cm_quiet(&t, 100));

	/* a real client still gets through */
	tt_open(&c, "tcp0", LEN, OPENRDMA_ACCESS_LOCAL_WRITE, FILL);
	tt_qp(&c, OPENRDMA_QPT_RC);
	cr_assert_eq(openrdma_cm_id_create(c.ctx, c.ch, NULL, OPENRDMA_PS_TCP,
					   &c.id),
		     0);
	cr_assert_eq(openrdma_cm_connect(c.id, c.qp, (struct sockaddr *)&ss,
					 NULL),
		     0);
	ev = tt_cm_expect(&t, OPENRDMA_CM_EVENT_CONNECT_REQUEST, TT_TIMEOUT_MS);
	t.id = ev->id;
	openrdma_cm_event_ack(ev);
	cr_assert_eq(openrdma_cm_reject(t.id, NULL, 0), 0);
	ev = tt_cm_expect(&c, OPENRDMA_CM_EVENT_REJECTED, TT_TIMEOUT_MS);
	openrdma_cm_event_ack(ev);
	tt_close(&c);
	tt_close(&t);
}

Test(tcp_hostile, backlog_rejects_extra_requests)
{
	enum { BACKLOG = 2, CLIENTS = 4 };
	struct openrdma_cm_event *ev;
	struct sockaddr_storage ss;
	struct openrdma_cm_id *req[CLIENTS];
	struct tt_side t, c[CLIENTS];
	int i, rejected = 0, requests = 0;

	tt_open(&t, "tcp0", LEN, OPENRDMA_ACCESS_LOCAL_WRITE, FILL);
	listener(&t, BACKLOG, &ss);
	for (i = 0; i < CLIENTS; i++) {
		tt_open(&c[i], "tcp0", LEN, OPENRDMA_ACCESS_LOCAL_WRITE, FILL);
		tt_qp(&c[i], OPENRDMA_QPT_RC);
		cr_assert_eq(openrdma_cm_id_create(c[i].ctx, c[i].ch, NULL,
						   OPENRDMA_PS_TCP, &c[i].id),
			     0);
		cr_assert_eq(openrdma_cm_connect(c[i].id, c[i].qp,
						 (struct sockaddr *)&ss, NULL),
			     0);
	}
	for (i = 0; i < CLIENTS; i++) {
		if (tt_cm_quiet(&c[i], 1000))
			continue;
		cr_assert_eq(openrdma_cm_event_get(c[i].ch, &ev), 0);
		cr_assert_eq(ev->event, OPENRDMA_CM_EVENT_REJECTED);
		cr_assert_eq(ev->status, -OPENRDMA_ECONNREFUSED);
		openrdma_cm_event_ack(ev);
		rejected++;
	}
	while (!tt_cm_quiet(&t, 300)) {
		cr_assert_eq(openrdma_cm_event_get(t.ch, &ev), 0);
		cr_assert_eq(ev->event, OPENRDMA_CM_EVENT_CONNECT_REQUEST);
		cr_assert_lt(requests, CLIENTS);
		req[requests++] = ev->id;
		openrdma_cm_event_ack(ev);
	}
	cr_assert_eq(requests, BACKLOG, "%d requests, want the backlog (%d)",
		     requests, BACKLOG);
	cr_assert_eq(rejected, CLIENTS - BACKLOG);
	for (i = 0; i < requests; i++)
		cr_assert_eq(openrdma_cm_id_destroy(req[i]), 0);
	for (i = 0; i < CLIENTS; i++)
		tt_close(&c[i]);
	tt_close(&t);
}

/* What the DISCONNECT waits behind: twice what the sockets hold. */
#define BEHIND (8u << 20)

static void *destroy_qp(void *arg)
{
	struct tt_side *t = arg;

	cr_assert_eq(openrdma_cm_id_destroy(t->id), 0);
	t->id = NULL;
	cr_assert_eq(openrdma_qp_destroy(t->qp), 0);
	t->qp = NULL;
	return NULL;
}

/*
 * A DISCONNECT queued behind a transfer the peer has not read yet still
 * goes out when the QP is destroyed at once: the peer, reading a moment
 * later, finds the transfer, the DISCONNECT and then the end, not an end
 * without it (which it would report as a broken connection).
 */
Test(tcp_hostile, disconnect_behind_a_transfer_goes_out, .timeout = 60)
{
	struct openrdma_cm_event *ev;
	struct sockaddr_storage ss;
	bool disconnected = false;
	struct tcp_frame f;
	size_t cap = BEHIND + (1u << 20), have = 0, pos = 0;
	struct tt_side t;
	uint64_t written = 0;
	uint8_t *all;
	pthread_t tid;
	ssize_t n;
	int fd, hlen;

	tt_open(&t, "tcp0", BEHIND, OPENRDMA_ACCESS_LOCAL_WRITE, FILL);
	listener(&t, 4, &ss);
	fd = tt_raw_connect(&ss);
	memset(&f, 0, sizeof(f));
	f.opcode = TCP_OP_CONNECT;
	f.src_qpn = 9;
	tt_raw_frame(fd, &f, NULL);
	ev = tt_cm_expect(&t, OPENRDMA_CM_EVENT_CONNECT_REQUEST, TT_TIMEOUT_MS);
	t.id = ev->id;
	openrdma_cm_event_ack(ev);
	tt_qp(&t, OPENRDMA_QPT_RC);
	cr_assert_eq(openrdma_cm_accept(t.id, t.qp, NULL), 0);
	memset(&f, 0, sizeof(f));
	f.opcode = TCP_OP_RTU;
	tt_raw_frame(fd, &f, NULL);
	ev = tt_cm_expect(&t, OPENRDMA_CM_EVENT_ESTABLISHED, TT_TIMEOUT_MS);
	openrdma_cm_event_ack(ev);

	/* more than the sockets hold (about 4 MiB here) while the peer
	 * reads nothing, and little enough that under valgrind the rest
	 * goes out well within the QP's one second for its last word */
	tt_post(&t, OPENRDMA_WR_RDMA_WRITE, 1, 0, BEHIND, 0x1000, 0x4242);
	usleep(100 * 1000);
	cr_assert_eq(openrdma_cm_disconnect(t.id, NULL, 0), 0);
	ev = tt_cm_expect(&t, OPENRDMA_CM_EVENT_DISCONNECTED, TT_TIMEOUT_MS);
	openrdma_cm_event_ack(ev);
	cr_assert_eq(pthread_create(&tid, NULL, destroy_qp, &t), 0);
	usleep(100 * 1000);

	/* all of it to the end, in large reads (valgrind runs this too) */
	all = malloc(cap);
	cr_assert_not_null(all);
	while (have < cap && (n = recv(fd, all + have, cap - have, 0)) > 0)
		have += (size_t)n;
	pthread_join(tid, NULL);
	/* a full buffer would have ended the loop as an end does */
	cr_assert_lt(have, cap, "more than the transfer and its frames");
	cr_assert_eq(n, 0, "no clean end (%zd): %s", n, strerror(errno));
	while (pos < have) {
		hlen = tcp_frame_parse(all + pos, have - pos, &f, NULL);
		cr_assert_gt(hlen, 0, "a frame cut or malformed at byte %zu",
			     pos);
		pos += (size_t)hlen + f.length;
		cr_assert_leq(pos, have, "a payload cut at byte %zu", have);
		if (f.opcode == TCP_OP_WRITE)
			written += f.length;
		if (f.opcode == TCP_OP_DISCONNECT)
			disconnected = true;
	}
	free(all);
	cr_assert_eq(written, BEHIND);
	cr_assert(disconnected, "the DISCONNECT was lost");
	close(fd);
	tt_close(&t);
}
