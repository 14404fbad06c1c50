/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Mutated streams against a live tcp context, from a raw peer on a QP
 * connected by hand.  As the initiator, it sends a few valid requests
 * (sends, writes, reads, atomics, keepalives); as the target, it answers
 * the QP's requests (acknowledgements, read and atomic responses).  One
 * frame in three has a field moved just past what is valid (a length,
 * an address at the region's edge, a key, a PSN, a QP number), and the
 * stream as a whole has bytes flipped, overwritten or inserted, or is
 * cut short; then the peer ends its side.  Whatever it sent, the
 * transport must end the connection with the peer, complete each of
 * the QP's requests exactly once, write nothing outside the one
 * registered region, and go on serving new connections.  Each side runs
 * once with the progress thread reading the connections and once with a
 * thread busy-polling their CQ, which reads them itself (tcp_poll.c).
 *
 * A listener meets mutated handshakes the same way: a raw active peer
 * sends CONNECT, RTU, requests and DISCONNECT, with the CONNECT valid
 * (the request is accepted, then what follows is mutated) or mutated
 * with the rest.  A valid CONNECT must reach the application with its
 * private data, an accepted id must end with its connection (only by
 * DISCONNECTED once established), and a real client must still connect.
 *
 * A UD QP gets mutated datagrams (a key, a QP number or a length of
 * another, bytes changed), each stream followed by a valid marker: every
 * receive before it completes as a delivery within its buffer or as too
 * long (LOC_LEN_ERR), the marker arrives intact, and the QP stays in RTS.
 *
 * The streams come from a fixed seed, so that a failure repeats; for
 * longer runs OPENRDMA_TEST_MUTATIONS sets how many streams each test
 * sends (default 300) and OPENRDMA_TEST_SEED another seed.
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "tt.h"

#define FILL 0xa5
/* The buffer: a registered region between two unregistered guards. */
#define GUARD 4096
#define REGION 4096
#define BUF_LEN (GUARD + REGION + GUARD)
#define RECVS 4
/* the receive of the last check, whose completion the poller looks for */
#define SERVING_WR 77
#define RECV_LEN 256
#define MAX_FRAMES 8
#define MAX_PAYLOAD 512
/* payload a skewed length adds, at most */
#define MAX_SKEW 64
#define STREAM_MAX \
	(MAX_FRAMES * (TCP_FRAME_HDR_MAX + MAX_PAYLOAD + MAX_SKEW) + 64)

struct mutate {
	struct tt_side t;
	struct openrdma_mr *region;
	uint64_t rng;
	unsigned int n; /* streams to send */
	unsigned int i; /* the current one */
	/* a thread busy-polls the CQ and counts its completions */
	bool with_poller;
	pthread_t poller;
	atomic_bool stop;
	atomic_ulong polled;
	/* the wr_id of the last successful completion it polled, plus 1 */
	atomic_ulong polled_ok;
	int udp; /* a raw UDP socket, for datagrams */
};

/* xorshift64*: the same streams on every run */
static uint64_t rnd(struct mutate *m)
{
	m->rng ^= m->rng >> 12;
	m->rng ^= m->rng << 25;
	m->rng ^= m->rng >> 27;
	return m->rng * 0x2545f4914f6cdd1dull;
}

static uint32_t rnd_below(struct mutate *m, uint32_t n)
{
	return (uint32_t)(rnd(m) % n);
}

/* An address in the region for len bytes, aligned to align. */
static uint64_t region_addr(struct mutate *m, uint32_t len, uint32_t align)
{
	uint32_t off = rnd_below(m, REGION - len + 1) & ~(align - 1);

	return (uintptr_t)m->t.buf + GUARD + off;
}

/* Moves one field of f just past what is valid, or to an edge. */
static void skew_field(struct mutate *m, struct tcp_frame *f)
{
	static const uint32_t edges[] = { 0x7fffffffu, 0x80000000u,
					  0xffffffffu };
	uint64_t start = (uintptr_t)m->t.buf + GUARD;

	switch (rnd_below(m, 8)) {
	case 0: /* longer than the receive or the region allows */
		f->length += 1 + rnd_below(m, MAX_SKEW);
		break;
	case 1: /* ends past the region */
		f->raddr = start + REGION - rnd_below(m, MAX_SKEW);
		break;
	case 2: /* starts before it */
		f->raddr = start - 1 - rnd_below(m, MAX_SKEW);
		break;
	case 3: /* another key */
		f->rkey ^= 1u << rnd_below(m, 32);
		break;
	case 4: /* reads past the region */
		f->rlen += 1 + rnd_below(m, MAX_SKEW);
		break;
	case 5:
		f->length = edges[rnd_below(m, 3)];
		break;
	case 6: /* out of sequence */
		f->psn += 1 + rnd_below(m, 3);
		break;
	default: /* another QP */
		f->qpn ^= 1u << rnd_below(m, 24);
		break;
	}
}

/* One valid request to QP qpn (with the next *psn) or keepalive, one in
 * three with a field skewed; returns its length in out, header and payload
 * (MAX_SKEW bytes at most of a skewed length's). */
static size_t valid_frame(struct mutate *m, uint32_t qpn, uint32_t *psn,
			  uint8_t *out)
{
	static const uint8_t ops[] = {
		TCP_OP_SEND,	  TCP_OP_SEND_IMM,  TCP_OP_WRITE,
		TCP_OP_WRITE_IMM, TCP_OP_READ,	    TCP_OP_CMP_SWAP,
		TCP_OP_FETCH_ADD, TCP_OP_KEEPALIVE,
	};
	struct tcp_frame f;
	unsigned int n, i, len;

	memset(&f, 0, sizeof(f));
	f.opcode = ops[rnd_below(m, sizeof(ops))];
	if (f.opcode != TCP_OP_KEEPALIVE) {
		f.qpn = qpn;
		f.psn = (*psn)++;
		f.flags = rnd_below(m, 2) ? TCP_FLAG_ACKREQ : 0;
	}
	switch (f.opcode) {
	case TCP_OP_SEND:
	case TCP_OP_SEND_IMM:
		f.length = rnd_below(m, RECV_LEN + 1);
		f.imm = (uint32_t)rnd(m);
		break;
	case TCP_OP_WRITE:
	case TCP_OP_WRITE_IMM:
		f.length = rnd_below(m, MAX_PAYLOAD + 1);
		f.raddr = region_addr(m, f.length, 1);
		f.rkey = m->region->rkey;
		f.imm = (uint32_t)rnd(m);
		break;
	case TCP_OP_READ:
		f.rlen = rnd_below(m, MAX_PAYLOAD + 1);
		f.raddr = region_addr(m, f.rlen, 1);
		f.rkey = m->region->rkey;
		break;
	case TCP_OP_CMP_SWAP:
	case TCP_OP_FETCH_ADD:
		f.raddr = region_addr(m, 8, 8);
		f.rkey = m->region->rkey;
		f.compare_add = rnd(m);
		f.swap = rnd(m);
		break;
	default:
		break;
	}
	if (!rnd_below(m, 3))
		skew_field(m, &f);
	n = tcp_frame_encode(&f, out);
	len = f.length < MAX_PAYLOAD + MAX_SKEW ? f.length :
						  MAX_PAYLOAD + MAX_SKEW;
	for (i = 0; i < len; i++)
		out[n + i] = (uint8_t)rnd(m);
	return n + len;
}

/* One mutation of the len bytes at buf (room for 32 more); returns the
 * new length. */
static size_t mutate_bytes(struct mutate *m, uint8_t *buf, size_t len)
{
	unsigned int i, k;
	size_t at;

	if (!len)
		return 0;
	switch (rnd_below(m, 5)) {
	case 0: /* a few bytes flipped */
		for (k = 1 + rnd_below(m, 4); k; k--)
			buf[rnd_below(m, (uint32_t)len)] ^=
				(uint8_t)(1 + rnd_below(m, 255));
		return len;
	case 1: /* four bytes overwritten */
		at = rnd_below(m, (uint32_t)len);
		for (k = 0; k < 4 && at + k < len; k++)
			buf[at + k] = (uint8_t)rnd(m);
		return len;
	case 2: /* cut short */
		return rnd_below(m, (uint32_t)len);
	case 3: /* random bytes inserted */
		at = rnd_below(m, (uint32_t)len + 1);
		k = 1 + rnd_below(m, 32);
		memmove(buf + at + k, buf + at, len - at);
		for (i = 0; i < k; i++)
			buf[at + i] = (uint8_t)rnd(m);
		return len + k;
	default: /* as it is */
		return len;
	}
}

/* A stream of valid requests, mutated; returns its length. */
static size_t request_stream(struct mutate *m, uint8_t *buf)
{
	unsigned int frames = 1 + rnd_below(m, MAX_FRAMES), i;
	uint32_t psn = 0;
	size_t len = 0;

	for (i = 0; i < frames; i++)
		len += valid_frame(m, m->t.qp->qp_num, &psn, buf + len);
	return mutate_bytes(m, buf, len);
}

/* Drains what the transport answers until it ends the connection. */
static void expect_end(int fd)
{
	cr_assert(tt_raw_closed(fd, TT_TIMEOUT_MS),
		  "the connection outlived its peer's end");
}

static void expect_guards_untouched(const struct mutate *m)
{
	size_t i;

	for (i = 0; i < GUARD; i++) {
		cr_assert_eq(m->t.buf[i], FILL, "guard byte %zu written", i);
		cr_assert_eq(m->t.buf[GUARD + REGION + i], FILL,
			     "guard byte %zu after the region written", i);
	}
}

/* Takes what the streams left: completions (unless a poller does) and
 * async events. */
static void drain(struct mutate *m)
{
	struct openrdma_async_event ev;
	struct openrdma_wc wc[16];

	while (!m->with_poller && openrdma_cq_poll(m->t.cq, 16, wc) > 0)
		;
	while (!tt_async(&m->t, &ev, 0))
		openrdma_async_event_ack(&ev);
}

/* After one stream: the QP goes, and what it left is taken. */
static void qp_done(struct mutate *m, int fd)
{
	close(fd);
	cr_assert_eq(openrdma_qp_destroy(m->t.qp), 0);
	m->t.qp = NULL;
	drain(m);
	expect_guards_untouched(m);
}

static void *poll_loop(void *arg)
{
	struct mutate *m = arg;
	struct openrdma_wc wc[16];
	int i, n;

	while (!atomic_load(&m->stop)) {
		n = openrdma_cq_poll(m->t.cq, 16, wc);
		for (i = 0; i < n; i++)
			if (wc[i].status == OPENRDMA_WC_SUCCESS)
				atomic_store(&m->polled_ok, wc[i].wr_id + 1);
		if (n > 0)
			atomic_fetch_add(&m->polled, (unsigned long)n);
	}
	return NULL;
}

/* A positive number from the environment, or def. */
static uint64_t env_or(const char *name, uint64_t def)
{
	const char *s = getenv(name);
	unsigned long long n = s ? strtoull(s, NULL, 0) : 0;

	return n ? n : def;
}

/* The serving check's request (wr_id SERVING_WR) completes in success. */
static void expect_serving_done(struct mutate *m)
{
	struct openrdma_wc wc;
	int i;

	if (!m->with_poller) {
		cr_assert_eq(tt_poll(&m->t, 1, &wc, TT_TIMEOUT_MS), 1,
			     "the check's request did not complete");
		cr_assert_eq(wc.status, OPENRDMA_WC_SUCCESS);
		cr_assert_eq(wc.wr_id, SERVING_WR);
		return;
	}
	for (i = 0; i < TT_TIMEOUT_MS / 10 &&
		    atomic_load(&m->polled_ok) != SERVING_WR + 1;
	     i++)
		usleep(10000);
	cr_assert_eq(atomic_load(&m->polled_ok), SERVING_WR + 1,
		     "the check's request did not complete");
}

/* A new QP and raw connection: a valid write lands, a valid send is
 * received, as if nothing had come before. */
static void expect_serving(struct mutate *m)
{
	uint8_t payload[64], hdr[TCP_FRAME_HDR_MAX];
	uint64_t base = (uintptr_t)m->t.buf + GUARD;
	struct tcp_frame f;
	int fd;

	fd = tt_raw_target(&m->t);
	tt_post_recv(&m->t, SERVING_WR, GUARD + 1024, RECV_LEN);
	memset(payload, 0x3c, sizeof(payload));

	memset(&f, 0, sizeof(f));
	f.opcode = TCP_OP_WRITE;
	f.flags = TCP_FLAG_ACKREQ;
	f.qpn = m->t.qp->qp_num;
	f.raddr = base + 100;
	f.rkey = m->region->rkey;
	f.length = sizeof(payload);
	tt_raw_frame(fd, &f, payload);
	cr_assert_eq(tt_raw_read(fd, &f, TT_TIMEOUT_MS), 0);
	cr_assert_eq(f.opcode, TCP_OP_ACK, "answer %s, want ACK",
		     tcp_frame_op_name(f.opcode));
	cr_assert_eq(f.ack, 0);
	cr_assert(!memcmp(m->t.buf + GUARD + 100, payload, sizeof(payload)));

	memset(&f, 0, sizeof(f));
	f.opcode = TCP_OP_SEND;
	f.flags = TCP_FLAG_ACKREQ;
	f.qpn = m->t.qp->qp_num;
	f.psn = 1;
	f.length = sizeof(payload);
	tt_raw_send(fd, hdr, tcp_frame_encode(&f, hdr));
	tt_raw_send(fd, payload, sizeof(payload));
	cr_assert_eq(tt_raw_read(fd, &f, TT_TIMEOUT_MS), 0);
	cr_assert_eq(f.opcode, TCP_OP_ACK);
	cr_assert_eq(f.ack, 1);
	expect_serving_done(m);
	cr_assert(!memcmp(m->t.buf + GUARD + 1024, payload, sizeof(payload)));
	qp_done(m, fd);
}

static void mutate_open(struct mutate *m, bool poller)
{
	memset(m, 0, sizeof(*m));
	m->udp = -1;
	m->n = (unsigned int)env_or("OPENRDMA_TEST_MUTATIONS", 300);
	m->rng = env_or("OPENRDMA_TEST_SEED", 0x6f70656e72646d61ull);
	m->with_poller = poller;
	tt_open(&m->t, "tcp0", BUF_LEN, TT_ACCESS, FILL);
	/* one region, and no key that reaches the guards */
	cr_assert_eq(openrdma_mr_dereg(m->t.mr), 0);
	cr_assert_eq(openrdma_mr_reg(m->t.pd, m->t.buf + GUARD, REGION,
				     TT_ACCESS, &m->region),
		     0);
	m->t.mr = m->region;
	if (poller)
		cr_assert_eq(pthread_create(&m->poller, NULL, poll_loop, m), 0);
}

static void mutate_close(struct mutate *m)
{
	if (m->with_poller) {
		atomic_store(&m->stop, true);
		pthread_join(m->poller, NULL);
	}
	if (m->udp >= 0)
		close(m->udp);
	expect_guards_untouched(m);
	tt_close(&m->t);
}

/* Waits for n completions of the QP; returns how many came. */
static unsigned int completions(struct mutate *m, unsigned int n)
{
	struct openrdma_wc wc[MAX_FRAMES];
	uint64_t end = tt_now_ms() + TT_TIMEOUT_MS;
	unsigned long got;

	if (!m->with_poller)
		return (unsigned int)tt_poll(&m->t, (int)n, wc, TT_TIMEOUT_MS);
	while ((got = atomic_load(&m->polled)) < n && tt_now_ms() < end)
		usleep(1000);
	return got < n ? (unsigned int)got : n;
}

/* The connection ended and its n requests completed: no request
 * completes twice. */
static void expect_no_more(struct mutate *m, unsigned int n)
{
	struct openrdma_wc wc;

	if (m->with_poller)
		cr_assert_eq(atomic_fetch_sub(&m->polled, n), n,
			     "more completions than requests");
	else
		cr_assert_eq(openrdma_cq_poll(m->t.cq, 1, &wc), 0,
			     "more completions than requests");
}

/* The target's side: one stream of mutated requests. */
static void request_one(struct mutate *m, uint8_t *buf)
{
	unsigned int k;
	size_t len;
	int fd;

	fd = tt_raw_target(&m->t);
	for (k = 0; k < RECVS; k++)
		tt_post_recv(&m->t, k, GUARD + k * RECV_LEN, RECV_LEN);
	len = request_stream(m, buf);
	tt_raw_send(fd, buf, len);
	shutdown(fd, SHUT_WR);
	expect_end(fd);
	/* received, or flushed as the QP went to ERR with its connection */
	cr_assert_eq(completions(m, RECVS), RECVS,
		     "stream %u: receives without a completion", m->i);
	expect_no_more(m, RECVS);
	qp_done(m, fd);
}

static bool is_atomic(enum openrdma_wr_opcode op)
{
	return op == OPENRDMA_WR_ATOMIC_CMP_AND_SWP ||
	       op == OPENRDMA_WR_ATOMIC_FETCH_AND_ADD;
}

/* Posts a signaled request of op, on len bytes at off in the region
 * (8 for atomics); the raw target checks no key. */
static void post_request(struct mutate *m, enum openrdma_wr_opcode op,
			 uint64_t wr_id, uint32_t off, uint32_t len)
{
	struct openrdma_sge sge = { (uintptr_t)m->t.buf + GUARD + off, len,
				    m->region->lkey };
	struct openrdma_send_wr wr = { .wr_id = wr_id,
				       .sg_list = &sge,
				       .num_sge = 1,
				       .opcode = op,
				       .send_flags = OPENRDMA_SEND_SIGNALED },
				*bad;

	if (is_atomic(op)) {
		wr.wr.atomic.remote_addr = 0x10000;
		wr.wr.atomic.compare_add = rnd(m);
		wr.wr.atomic.swap = rnd(m);
		wr.wr.atomic.rkey = 0x1234;
	} else {
		wr.wr.rdma.remote_addr = 0x10000;
		wr.wr.rdma.rkey = 0x1234;
	}
	cr_assert_eq(openrdma_qp_post_send(m->t.qp, &wr, &bad), 0);
}

/* Posts 1 to MAX_FRAMES requests; returns how many, and in *sent how many
 * go out before the target answers: the QP allows one read or atomic in
 * flight, and what follows a second waits for its answer. */
static unsigned int post_requests(struct mutate *m, unsigned int *sent)
{
	static const enum openrdma_wr_opcode ops[] = {
		OPENRDMA_WR_SEND,
		OPENRDMA_WR_RDMA_WRITE,
		OPENRDMA_WR_RDMA_READ,
		OPENRDMA_WR_ATOMIC_CMP_AND_SWP,
		OPENRDMA_WR_ATOMIC_FETCH_AND_ADD,
	};
	unsigned int i, n = 1 + rnd_below(m, MAX_FRAMES), rd = 0;
	enum openrdma_wr_opcode op;
	uint32_t len, off;

	*sent = n;
	for (i = 0; i < n; i++) {
		op = ops[rnd_below(m, sizeof(ops) / sizeof(ops[0]))];
		if ((op == OPENRDMA_WR_RDMA_READ || is_atomic(op)) && rd++ == 1)
			*sent = i;
		len = is_atomic(op) ? 8 : rnd_below(m, RECV_LEN + 1);
		off = i * RECV_LEN;
		post_request(m, op, i, off, len);
	}
	return n;
}

/* Reads the n requests the QP sent and writes their answers to buf, as a
 * target would, one in three with a field skewed, and mutates them;
 * returns their length. */
static size_t answer_stream(struct mutate *m, int fd, unsigned int n,
			    uint8_t *buf)
{
	struct tcp_frame f, a;
	size_t len = 0;
	unsigned int i, k;

	for (i = 0; i < n; i++) {
		cr_assert_eq(tt_raw_read(fd, &f, TT_TIMEOUT_MS), 0,
			     "request %u of %u did not come", i, n);
		memset(&a, 0, sizeof(a));
		a.qpn = m->t.qp->qp_num;
		a.psn = f.psn;
		switch (f.opcode) {
		case TCP_OP_READ:
			a.opcode = TCP_OP_READ_RESP;
			a.length = f.rlen;
			break;
		case TCP_OP_CMP_SWAP:
		case TCP_OP_FETCH_ADD:
			a.opcode = TCP_OP_ATOMIC_RESP;
			a.value = rnd(m);
			break;
		default:
			a.opcode = TCP_OP_ACK;
			a.flags = TCP_FLAG_ACK;
			a.ack = f.psn;
			a.psn = 0;
			break;
		}
		if (!rnd_below(m, 3))
			skew_field(m, &a);
		len += tcp_frame_encode(&a, buf + len);
		for (k = 0; k < a.length && k < MAX_PAYLOAD + MAX_SKEW; k++)
			buf[len++] = (uint8_t)rnd(m);
	}
	return mutate_bytes(m, buf, len);
}

/* A new QP reads from a valid target: the data lands, the read
 * completes, as if nothing had come before. */
static void expect_reading(struct mutate *m)
{
	uint8_t data[64];
	struct tcp_frame f, a;
	unsigned int k;
	int fd;

	fd = tt_raw_initiator(&m->t);
	post_request(m, OPENRDMA_WR_RDMA_READ, SERVING_WR, 2048, sizeof(data));
	cr_assert_eq(tt_raw_read(fd, &f, TT_TIMEOUT_MS), 0);
	cr_assert_eq(f.opcode, TCP_OP_READ);
	cr_assert_eq(f.rlen, sizeof(data));
	for (k = 0; k < sizeof(data); k++)
		data[k] = (uint8_t)(k * 5 + 1);
	memset(&a, 0, sizeof(a));
	a.opcode = TCP_OP_READ_RESP;
	a.qpn = m->t.qp->qp_num;
	a.psn = f.psn;
	a.length = sizeof(data);
	tt_raw_frame(fd, &a, data);
	expect_serving_done(m);
	cr_assert(!memcmp(m->t.buf + GUARD + 2048, data, sizeof(data)));
	qp_done(m, fd);
}

/* The initiator's side: one stream of mutated answers.  Every request
 * completes, in success or in error, and the connection ends with the
 * peer's. */
static void answer_one(struct mutate *m, uint8_t *buf)
{
	unsigned int n, sent;
	size_t len;
	int fd;

	fd = tt_raw_initiator(&m->t);
	n = post_requests(m, &sent);
	len = answer_stream(m, fd, sent, buf);
	tt_raw_send(fd, buf, len);
	shutdown(fd, SHUT_WR);
	cr_assert_eq(completions(m, n), n,
		     "stream %u: requests without a completion", m->i);
	expect_end(fd);
	expect_no_more(m, n);
	qp_done(m, fd);
}

/* m->n streams of one, then the check that the context still serves
 * (serving, if given). */
static void run_streams(bool poller,
			void (*one)(struct mutate *m, uint8_t *buf),
			void (*serving)(struct mutate *m))
{
	static uint8_t buf[STREAM_MAX];
	struct mutate m;

	mutate_open(&m, poller);
	for (m.i = 0; m.i < m.n; m.i++)
		one(&m, buf);
	if (serving)
		serving(&m);
	mutate_close(&m);
}

/* ------------------------------------------------------------------ */
/* Datagrams                                                          */
/* ------------------------------------------------------------------ */

#define UD_QKEY 0x11111111u
/* receives kept posted, more than a stream's datagrams and its marker */
#define UD_RECVS 8
/* the marker that ends stream i, in its immediate data */
#define UD_MARK(i) (0x4d000000u | (i))

/* A UD QP in RTS with UD_QKEY and UD_RECVS receives, one per slot of
 * RECV_LEN bytes (wr_id: the slot), and a raw UDP socket. */
static void ud_open(struct mutate *m)
{
	struct openrdma_qp_attr attr = { .qp_state = OPENRDMA_QPS_INIT,
					 .port_num = 1,
					 .qkey = UD_QKEY };
	unsigned int k;

	tt_qp(&m->t, OPENRDMA_QPT_UD);
	cr_assert_eq(
		openrdma_qp_modify(m->t.qp, &attr,
				   OPENRDMA_QP_STATE | OPENRDMA_QP_PKEY_INDEX |
					   OPENRDMA_QP_PORT | OPENRDMA_QP_QKEY),
		0);
	attr.qp_state = OPENRDMA_QPS_RTR;
	cr_assert_eq(openrdma_qp_modify(m->t.qp, &attr, OPENRDMA_QP_STATE), 0);
	attr.qp_state = OPENRDMA_QPS_RTS;
	cr_assert_eq(openrdma_qp_modify(m->t.qp, &attr,
					OPENRDMA_QP_STATE | OPENRDMA_QP_SQ_PSN),
		     0);
	for (k = 0; k < UD_RECVS; k++)
		tt_post_recv(&m->t, k, GUARD + k * RECV_LEN, RECV_LEN);
	m->udp = socket(m->t.port.addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(m->udp, 0);
}

/* A datagram for the UD QP with len bytes of payload (copied from
 * payload, or random); returns its length in out. */
static size_t datagram(struct mutate *m, uint32_t imm, const void *payload,
		       uint32_t len, uint8_t *out)
{
	struct tcp_frame f;
	unsigned int n, k;

	memset(&f, 0, sizeof(f));
	f.opcode = TCP_OP_UD_SEND_IMM;
	f.qpn = m->t.qp->qp_num;
	f.src_qpn = 1 + rnd_below(m, TCP_FRAME_QPN_MAX);
	f.qkey = UD_QKEY;
	f.imm = imm;
	f.length = len;
	n = tcp_frame_encode(&f, out);
	for (k = 0; k < len; k++)
		out[n + k] = payload ? ((const uint8_t *)payload)[k] :
				       (uint8_t)rnd(m);
	return n + len;
}

static void ud_send(struct mutate *m, const uint8_t *buf, size_t len)
{
	socklen_t alen = m->t.port.addr.ss_family == AF_INET ?
				 sizeof(struct sockaddr_in) :
				 sizeof(struct sockaddr_in6);

	cr_assert_eq(sendto(m->udp, buf, len, 0,
			    (const struct sockaddr *)&m->t.port.addr, alen),
		     (ssize_t)len);
}

/*
 * Takes completions up to the marker of the current stream; each is a
 * delivery (its GRH and payload within its receive) or a datagram too
 * long for it (LOC_LEN_ERR).  Returns the marker's completion.
 */
static void ud_until_marker(struct mutate *m, struct openrdma_wc *mark)
{
	struct openrdma_wc wc;
	uint64_t slot;

	for (;;) {
		cr_assert_eq(tt_poll(&m->t, 1, &wc, TT_TIMEOUT_MS), 1,
			     "stream %u: the marker did not come", m->i);
		cr_assert(wc.status == OPENRDMA_WC_SUCCESS ||
				  wc.status == OPENRDMA_WC_LOC_LEN_ERR,
			  "a datagram's receive completed with %s",
			  openrdma_wc_status_str(wc.status));
		if (wc.status == OPENRDMA_WC_SUCCESS)
			cr_assert_leq(wc.byte_len, RECV_LEN);
		/* posted again to its own slot */
		slot = wc.wr_id;
		cr_assert_lt(slot, UD_RECVS);
		tt_post_recv(&m->t, slot, GUARD + slot * RECV_LEN, RECV_LEN);
		if (wc.status == OPENRDMA_WC_SUCCESS &&
		    (wc.wc_flags & OPENRDMA_WC_WITH_IMM) &&
		    ntohl(wc.imm_data) == UD_MARK(m->i)) {
			*mark = wc;
			return;
		}
	}
}

/* One stream of mutated datagrams, then a valid marker, which must be
 * delivered as it went. */
static void ud_one(struct mutate *m, uint8_t *buf)
{
	static const uint8_t marker[16] = "the marker.....";
	unsigned int k, n = 1 + rnd_below(m, 4);
	struct openrdma_wc wc;
	struct tcp_frame f;
	size_t len;

	if (!m->t.qp)
		ud_open(m);
	for (k = 0; k < n; k++) {
		/* some too long for a receive */
		len = datagram(
			m, (uint32_t)rnd(m), NULL,
			rnd_below(m, RECV_LEN - OPENRDMA_GRH_LEN + MAX_SKEW),
			buf);
		if (!rnd_below(m, 3)) {
			/* a QP number, a key or a length of another */
			cr_assert_gt(tcp_frame_parse(buf, len, &f, NULL), 0);
			skew_field(m, &f);
			if (rnd_below(m, 2))
				f.qkey ^= 1u << rnd_below(m, 32);
			len = tcp_frame_encode(&f, buf) +
			      (f.length < MAX_PAYLOAD ? f.length : 0);
		}
		ud_send(m, buf, mutate_bytes(m, buf, len));
	}
	len = datagram(m, UD_MARK(m->i), marker, sizeof(marker), buf);
	ud_send(m, buf, len);
	ud_until_marker(m, &wc);
	cr_assert_eq(wc.byte_len, OPENRDMA_GRH_LEN + sizeof(marker));
	cr_assert(!memcmp(m->t.buf + GUARD + wc.wr_id * RECV_LEN +
				  OPENRDMA_GRH_LEN,
			  marker, sizeof(marker)),
		  "the marker arrived changed");
	cr_assert_eq(tt_qp_state(m->t.qp), OPENRDMA_QPS_RTS);
	expect_guards_untouched(m);
}

/* ------------------------------------------------------------------ */
/* Connection management                                              */
/* ------------------------------------------------------------------ */

/* The CM side of a run: a listener, and the request being served. */
struct cm_run {
	struct mutate *m;
	struct sockaddr_storage addr; /* the listener's */
	uint32_t tag; /* private data of the current stream's CONNECT */
	uint8_t pdata[TCP_FRAME_PDATA_CONNECT]; /* all of it */
	unsigned int plen;
	bool intact; /* the CONNECT goes as it is */
	struct openrdma_cm_id *id; /* its request, accepted */
	struct openrdma_qp *qp;
	bool established;
	bool ended; /* the id's last event came */
};

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/* The stream's tag, big-endian, as the first 4 bytes of its private
 * data. */
static void tag_pdata(struct cm_run *c)
{
	c->pdata[0] = (uint8_t)(c->tag >> 24);
	c->pdata[1] = (uint8_t)(c->tag >> 16);
	c->pdata[2] = (uint8_t)(c->tag >> 8);
	c->pdata[3] = (uint8_t)c->tag;
}

/* A CONNECT whose private data starts with the stream's tag. */
static size_t connect_frame(struct cm_run *c, uint8_t *out)
{
	struct mutate *m = c->m;
	struct tcp_frame f;
	unsigned int n, i;

	memset(&f, 0, sizeof(f));
	f.opcode = TCP_OP_CONNECT;
	f.src_qpn = 1 + rnd_below(m, TCP_FRAME_QPN_MAX);
	f.responder_resources = (uint8_t)(1 + rnd_below(m, 16));
	f.initiator_depth = (uint8_t)(1 + rnd_below(m, 16));
	f.retry_count = (uint8_t)rnd_below(m, 8);
	f.rnr_retry_count = (uint8_t)rnd_below(m, 8);
	f.length = 4 + rnd_below(m, TCP_FRAME_PDATA_CONNECT - 3);
	c->plen = f.length;
	tag_pdata(c);
	for (i = 4; i < f.length; i++)
		c->pdata[i] = (uint8_t)rnd(m);
	n = tcp_frame_encode(&f, out);
	memcpy(out + n, c->pdata, f.length);
	return n + f.length;
}

/* What an established active side sends: RTU, requests to QP qpn, and
 * maybe DISCONNECT. */
static size_t session_frames(struct mutate *m, uint32_t qpn, uint8_t *out)
{
	unsigned int k, n = rnd_below(m, 4);
	uint32_t psn = 0;
	struct tcp_frame f;
	size_t len;

	memset(&f, 0, sizeof(f));
	f.opcode = TCP_OP_RTU;
	len = tcp_frame_encode(&f, out);
	for (k = 0; k < n; k++)
		len += valid_frame(m, qpn, &psn, out + len);
	if (rnd_below(m, 2)) {
		memset(&f, 0, sizeof(f));
		f.opcode = TCP_OP_DISCONNECT;
		f.length = rnd_below(m, TCP_FRAME_PDATA_DISCONNECT + 1);
		len += tcp_frame_encode(&f, out + len);
		for (k = 0; k < f.length; k++)
			out[len++] = (uint8_t)rnd(m);
	}
	return len;
}

static bool is_last_event(enum openrdma_cm_event_type e)
{
	return e == OPENRDMA_CM_EVENT_DISCONNECTED ||
	       e == OPENRDMA_CM_EVENT_CONNECT_ERROR ||
	       e == OPENRDMA_CM_EVENT_UNREACHABLE ||
	       e == OPENRDMA_CM_EVENT_REJECTED;
}

/*
 * Takes one CM event (within timeout_ms; false if none came).  The
 * request of the current stream is left in c->id, unanswered; others
 * (from an earlier stream whose CONNECT was mutated) are rejected.  The
 * accepted id's events are recorded.
 */
static bool cm_event(struct cm_run *c, int timeout_ms)
{
	struct openrdma_cm_event *ev;
	struct openrdma_cm_id *id;
	enum openrdma_cm_event_type type;
	bool mine;

	if (tt_cm_quiet(&c->m->t, timeout_ms))
		return false;
	cr_assert_eq(openrdma_cm_event_get(c->m->t.ch, &ev), 0);
	type = ev->event;
	id = ev->id;
	mine = ev->param.private_data_len >= 4 &&
	       get_be32(ev->param.private_data) == c->tag;
	/* a CONNECT that went as it is arrives as it went */
	if (type == OPENRDMA_CM_EVENT_CONNECT_REQUEST && mine && c->intact)
		cr_assert(ev->param.private_data_len == c->plen &&
				  !memcmp(ev->param.private_data, c->pdata,
					  c->plen),
			  "the request's private data differs from CONNECT's");
	openrdma_cm_event_ack(ev);
	if (type == OPENRDMA_CM_EVENT_CONNECT_REQUEST) {
		if (mine && !c->id) {
			c->id = id;
			return true;
		}
		/* a request may be rejected however its connection fares */
		(void)openrdma_cm_reject(id, NULL, 0);
		cr_assert_eq(openrdma_cm_id_destroy(id), 0);
		return true;
	}
	cr_assert_eq(id, c->id, "CM event %s for an id no longer served",
		     openrdma_cm_event_str(type));
	cr_assert(!c->ended, "CM event %s after the id's last",
		  openrdma_cm_event_str(type));
	if (type == OPENRDMA_CM_EVENT_ESTABLISHED) {
		c->established = true;
	} else {
		cr_assert(is_last_event(type), "CM event %s",
			  openrdma_cm_event_str(type));
		/* once established, only DISCONNECTED ends it */
		if (c->established)
			cr_assert_eq(type, OPENRDMA_CM_EVENT_DISCONNECTED);
		c->ended = true;
	}
	return true;
}

/* Accepts the current stream's request with a new QP; returns whether
 * the transport took the accept (the peer may be gone already). */
static bool cm_accept(struct cm_run *c)
{
	struct openrdma_qp_init_attr init = {
		.send_cq = c->m->t.cq,
		.recv_cq = c->m->t.cq,
		.qp_type = OPENRDMA_QPT_RC,
		.cap = { .max_send_wr = 16,
			 .max_recv_wr = 16,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct openrdma_sge sge = { (uintptr_t)c->m->t.buf + GUARD, RECV_LEN,
				    c->m->region->lkey };
	struct openrdma_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	cr_assert_eq(openrdma_qp_create(c->m->t.pd, &init, &c->qp), 0);
	tt_qp_init(c->qp);
	cr_assert_eq(openrdma_qp_post_recv(c->qp, &wr, &bad), 0);
	return !openrdma_cm_accept(c->id, c->qp, &tt_conn_param);
}

/* The stream is over: the accepted id, if any, ends and goes. */
static void cm_finish(struct cm_run *c)
{
	uint64_t end = tt_now_ms() + TT_TIMEOUT_MS;

	while (c->id && !c->ended && tt_now_ms() < end)
		cm_event(c, 100);
	if (c->id) {
		cr_assert(c->ended, "the connection's id never ended");
		cr_assert_eq(openrdma_cm_id_destroy(c->id), 0);
	}
	if (c->qp)
		cr_assert_eq(openrdma_qp_destroy(c->qp), 0);
	c->id = NULL;
	c->qp = NULL;
	c->established = false;
	c->ended = false;
	drain(c->m);
	expect_guards_untouched(c->m);
}

/*
 * One stream.  Half of them make a valid CONNECT, have it accepted and
 * mutate what follows (RTU, requests, DISCONNECT); the other half
 * mutate the CONNECT and what follows it at once.
 */
static void cm_stream(struct cm_run *c, uint8_t *buf)
{
	struct mutate *m = c->m;
	bool handshake = rnd_below(m, 2);
	struct tcp_frame f;
	size_t len;
	int fd;

	fd = tt_raw_connect(&c->addr);
	len = connect_frame(c, buf);
	c->intact = handshake;
	if (handshake) {
		tt_raw_send(fd, buf, len);
		while (!c->id)
			cr_assert(cm_event(c, TT_TIMEOUT_MS),
				  "no request for a valid CONNECT");
		cr_assert(cm_accept(c));
		cr_assert_eq(tt_raw_read(fd, &f, TT_TIMEOUT_MS), 0);
		cr_assert_eq(f.opcode, TCP_OP_ACCEPT, "answer %s, want ACCEPT",
			     tcp_frame_op_name(f.opcode));
		len = session_frames(m, f.src_qpn, buf);
	} else {
		len += session_frames(m, rnd_below(m, 64), buf + len);
	}
	len = mutate_bytes(m, buf, len);
	tt_raw_send(fd, buf, len);
	shutdown(fd, SHUT_WR);
	/* a request of a mutated CONNECT may come after all */
	while (!handshake && !c->id && cm_event(c, 0))
		;
	if (!handshake && c->id && !cm_accept(c))
		c->ended = true;
	expect_end(fd);
	close(fd);
	cm_finish(c);
}

/* The listener still serves: a real client connects through it and
 * disconnects. */
static void expect_listening(struct cm_run *c)
{
	struct openrdma_conn_param param = tt_conn_param;
	struct openrdma_cm_event *ev;
	struct tt_side client;

	c->tag = 0x7affffffu;
	c->plen = 4;
	tag_pdata(c);
	c->intact = true;
	tt_open(&client, "tcp0", 4096, TT_ACCESS, 0);
	tt_qp(&client, OPENRDMA_QPT_RC);
	cr_assert_eq(openrdma_cm_id_create(client.ctx, client.ch, NULL,
					   OPENRDMA_PS_TCP, &client.id),
		     0);
	param.private_data = c->pdata;
	param.private_data_len = (uint8_t)c->plen;
	cr_assert_eq(openrdma_cm_connect(client.id, client.qp,
					 (struct sockaddr *)&c->addr, &param),
		     0);
	while (!c->id)
		cr_assert(cm_event(c, TT_TIMEOUT_MS), "no request");
	cr_assert(cm_accept(c));
	ev = tt_cm_expect(&client, OPENRDMA_CM_EVENT_ESTABLISHED,
			  TT_TIMEOUT_MS);
	openrdma_cm_event_ack(ev);
	while (!c->established)
		cr_assert(cm_event(c, TT_TIMEOUT_MS), "not established");
	/* the client goes: the listener's side ends with DISCONNECTED */
	tt_close(&client);
	cm_finish(c);
}

/* The passive side of connection management: mutated handshakes. */
static void run_cm(void)
{
	static uint8_t buf[STREAM_MAX];
	struct cm_run c;
	struct mutate m;
	unsigned int i;

	mutate_open(&m, false);
	memset(&c, 0, sizeof(c));
	c.m = &m;
	tt_listen_addr(&m.t, &c.addr);
	cr_assert_eq(openrdma_cm_id_create(m.t.ctx, m.t.ch, NULL,
					   OPENRDMA_PS_TCP, &m.t.listen_id),
		     0);
	cr_assert_eq(openrdma_cm_listen(m.t.listen_id,
					(struct sockaddr *)&c.addr, 8),
		     0);
	cr_assert_eq(openrdma_cm_local_addr(m.t.listen_id, &c.addr), 0);
	for (i = 0; i < m.n; i++) {
		c.tag = 0x7a000000u | i;
		cm_stream(&c, buf);
	}

	expect_listening(&c);
	mutate_close(&m);
}

Test(tcp_mutate, target_survives_mutated_requests, .timeout = 120)
{
	run_streams(false, request_one, expect_serving);
}

Test(tcp_mutate, busy_polled_target_survives_mutated_requests, .timeout = 120)
{
	run_streams(true, request_one, expect_serving);
}

Test(tcp_mutate, initiator_survives_mutated_answers, .timeout = 300)
{
	run_streams(false, answer_one, expect_reading);
}

Test(tcp_mutate, busy_polled_initiator_survives_mutated_answers, .timeout = 300)
{
	run_streams(true, answer_one, expect_reading);
}

Test(tcp_mutate, listener_survives_mutated_handshakes, .timeout = 300)
{
	run_cm();
}

Test(tcp_mutate, ud_qp_survives_mutated_datagrams, .timeout = 120)
{
	/* each stream's marker shows that the QP still serves */
	run_streams(false, ud_one, NULL);
}
