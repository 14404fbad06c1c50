/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * pingpong_ab's baseline in the tcp build: one TCP connection
 * (TCP_NODELAY, busy-polled with MSG_DONTWAIT, as sockpp -P and the
 * benchmark's raw socket) and two loops on it:
 *
 *   socket  the message's bytes and nothing else: send() them, recv()
 *           until they are all there (the raw TCP ping-pong);
 *   framed  the least a transport that frames its messages does, as
 *           tcp0 frames them: a 24-byte header (magic, version, opcode,
 *           QP number, sequence number, carried acknowledgement,
 *           length) gathered with the payload into one send(); reads
 *           into a staging buffer as large as tcp0's, every header
 *           field checked, the payload copied into the receive posted
 *           first, a completion written to a ring and taken from it,
 *           the receive posted again.  No locks, no memory keys, no
 *           send completions: the floor under tcp0's per-message path.
 *
 * Both loops share the connection; they take turns, a ping-pong at a
 * time, so each finds it empty.
 *
 * Built with --enable-probes, the socket loop marks the points tcp0 marks
 * (core/probe.h) with its own copy of the probes, printed as "baseline".
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/probe.h"
#include "tests/perf/pingpong_ab.h"

#define FR_MAGIC 0x4f52
#define FR_VERSION 1
#define FR_SEND 0x01
#define FR_QPN 1
#define FR_HDR 24
/* tcp0's staging buffer */
#define FR_STAGING 65536

struct fr_hdr {
	uint16_t magic;
	uint8_t version;
	uint8_t opcode;
	uint32_t qpn;
	uint32_t psn;
	uint32_t ack;
	uint32_t length;
	uint32_t flags;
};

struct fr_recv {
	unsigned char *addr;
	size_t len;
};

struct fr_cqe {
	uint32_t len;
	uint32_t psn;
};

struct ab_base {
	int lfd, fd;
	size_t size;
	unsigned char *sbuf, *rbuf;
	/* framed: sequence numbers each way, the receive ring (one
	 * buffer, posted again and again) and the completion ring */
	uint32_t psn_out, psn_in;
	struct fr_recv rq[AB_DEPTH];
	unsigned int rq_head, rq_tail;
	struct fr_cqe cq[AB_DEPTH];
	unsigned int cq_head, cq_tail;
	unsigned char *staging, *frame;
	size_t st_off, st_len;
	bool probe; /* the socket loop's turn: core/probe.h */
};

const struct ab_base_info ab_base_info = {
	.name = { "socket", "framed" },
	.signal_all = { false, false },
};

static int sock_fail(const char *what)
{
	perror(what);
	return -1;
}

int ab_base_open(struct ab_base **out, size_t size)
{
	struct ab_base *b = calloc(1, sizeof(*b));

	if (!b)
		return sock_fail("socket side");
	b->lfd = -1;
	b->fd = -1;
	b->size = size;
	b->sbuf = calloc(1, size);
	b->rbuf = calloc(1, size);
	b->staging = malloc(FR_STAGING);
	b->frame = malloc(FR_HDR + size);
	*out = b;
	if (!b->sbuf || !b->rbuf || !b->staging || !b->frame)
		return sock_fail("socket side");
	/* every receive of the ring lands in rbuf */
	for (b->rq_tail = 0; b->rq_tail < AB_DEPTH; b->rq_tail++)
		b->rq[b->rq_tail] = (struct fr_recv){ b->rbuf, size };
	return 0;
}

unsigned char *ab_base_sbuf(struct ab_base *b)
{
	return b->sbuf;
}

const unsigned char *ab_base_rbuf(struct ab_base *b)
{
	return b->rbuf;
}

static void sock_tune(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* Any address, so that the client's (tcp0's) reaches it: IPv6's with
 * IPv4 mapped, or IPv4's where the host has no IPv6. */
int ab_base_listen(struct ab_base *b, unsigned int port)
{
	struct sockaddr_in6 sa6 = { .sin6_family = AF_INET6,
				    .sin6_port = htons((uint16_t)port),
				    .sin6_addr = IN6ADDR_ANY_INIT };
	struct sockaddr_in sa4 = { .sin_family = AF_INET,
				   .sin_port = htons((uint16_t)port),
				   .sin_addr.s_addr = htonl(INADDR_ANY) };
	struct sockaddr *sa = (struct sockaddr *)&sa6;
	socklen_t len = sizeof(sa6);
	int one = 1, zero = 0;

	b->lfd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (b->lfd < 0) {
		sa = (struct sockaddr *)&sa4;
		len = sizeof(sa4);
		b->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	}
	if (b->lfd < 0)
		return sock_fail("socket");
	setsockopt(b->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (sa->sa_family == AF_INET6)
		setsockopt(b->lfd, IPPROTO_IPV6, IPV6_V6ONLY, &zero,
			   sizeof(zero));
	if (bind(b->lfd, sa, len) || listen(b->lfd, 1))
		return sock_fail("bind/listen");
	return 0;
}

int ab_base_accept(struct ab_base *b)
{
	b->fd = accept4(b->lfd, NULL, NULL, SOCK_CLOEXEC);
	if (b->fd < 0)
		return sock_fail("accept");
	sock_tune(b->fd);
	return 0;
}

int ab_base_connect(struct ab_base *b, const char *host, unsigned int port)
{
	struct sockaddr_storage ss;

	if (ab_addr(host, port, &ss))
		return -1;
	b->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (b->fd < 0)
		return sock_fail("socket");
	if (connect(b->fd, (struct sockaddr *)&ss,
		    ss.ss_family == AF_INET ? sizeof(struct sockaddr_in) :
					      sizeof(struct sockaddr_in6)))
		return sock_fail("connect");
	sock_tune(b->fd);
	return 0;
}

/* One recv() into buf, polling until it brings something or the end:
 * the count, 0 at the end, -1 on an error or the timeout. */
static ssize_t sock_recv(struct ab_base *b, void *buf, size_t len)
{
	unsigned int empty = 0;
	double deadline = 0;
	ssize_t n;

	while ((n = recv(b->fd, buf, len, MSG_DONTWAIT)) < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return sock_fail("recv");
		if (ab_poll_expired(&empty, &deadline)) {
			fprintf(stderr, "socket: nothing came in time\n");
			return -1;
		}
	}
	if (n > 0 && b->probe)
		core_probe_mark(CORE_PROBE_RX);
	return n;
}

/* Reads into buf (len bytes at most) until min bytes came; returns the
 * count, or -1 at the end, an error or the timeout. */
static ssize_t sock_read(struct ab_base *b, void *buf, size_t len, size_t min)
{
	size_t got = 0;
	ssize_t n;

	do {
		n = sock_recv(b, (unsigned char *)buf + got, len - got);
		if (n <= 0) {
			if (!n)
				fprintf(stderr, "socket: the peer closed\n");
			return -1;
		}
		got += (size_t)n;
	} while (got < min);
	return (ssize_t)got;
}

static int sock_write(struct ab_base *b, const void *buf, size_t len)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		if (b->probe)
			core_probe_send();
		n = send(b->fd, (const unsigned char *)buf + done, len - done,
			 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (b->probe)
			core_probe_sent();
		if (n > 0)
			done += (size_t)n;
		else if (errno != EAGAIN && errno != EWOULDBLOCK &&
			 errno != EINTR)
			return sock_fail("send");
	}
	return 0;
}

/* The client shuts its side; each side then reads to the end. */
int ab_base_disconnect(struct ab_base *b, bool server)
{
	unsigned char c;
	ssize_t n;

	if (!server && shutdown(b->fd, SHUT_WR))
		return sock_fail("shutdown");
	n = sock_recv(b, &c, 1);
	if (n < 0)
		return -1;
	if (n > 0) {
		fprintf(stderr, "socket: bytes after the last message\n");
		return -1;
	}
	if (server && shutdown(b->fd, SHUT_WR))
		return sock_fail("shutdown");
	return 0;
}

void ab_base_close(struct ab_base *b)
{
	if (!b)
		return;
	if (b->fd >= 0)
		close(b->fd);
	if (b->lfd >= 0)
		close(b->lfd);
	free(b->sbuf);
	free(b->rbuf);
	free(b->staging);
	free(b->frame);
	free(b);
}

static int framed_send(struct ab_base *b)
{
	struct fr_hdr h = {
		.magic = htobe16(FR_MAGIC),
		.version = FR_VERSION,
		.opcode = FR_SEND,
		.qpn = htobe32(FR_QPN),
		.psn = htobe32(b->psn_out),
		/* the last message taken: cumulative, as tcp0's */
		.ack = htobe32(b->psn_in - 1),
		.length = htobe32((uint32_t)b->size),
	};

	b->psn_out++;
	memcpy(b->frame, &h, FR_HDR);
	memcpy(b->frame + FR_HDR, b->sbuf, b->size);
	return sock_write(b, b->frame, FR_HDR + b->size);
}

int ab_base_send(struct ab_base *b, int l, bool signaled)
{
	int ret;

	(void)signaled;
	if (l == 1)
		return framed_send(b);
	b->probe = true;
	core_probe_post();
	ret = sock_write(b, b->sbuf, b->size);
	core_probe_posted();
	b->probe = false;
	return ret;
}

/* One frame from the staging buffer, if all of it is there: checked,
 * placed, completed.  Returns 1 if one was, 0 if more must be read. */
static int framed_take(struct ab_base *b)
{
	const unsigned char *p = b->staging + b->st_off;
	size_t avail = b->st_len - b->st_off;
	struct fr_recv *r;
	struct fr_hdr h;
	uint32_t len;

	if (avail < FR_HDR)
		return 0;
	memcpy(&h, p, FR_HDR);
	len = be32toh(h.length);
	if (be16toh(h.magic) != FR_MAGIC || h.version != FR_VERSION ||
	    h.opcode != FR_SEND || be32toh(h.qpn) != FR_QPN || h.flags ||
	    be32toh(h.psn) != b->psn_in || be32toh(h.ack) != b->psn_out - 1 ||
	    len > b->size) {
		fprintf(stderr, "framed: a bad frame\n");
		return -1;
	}
	if (avail < FR_HDR + len)
		return 0;
	if (b->rq_head == b->rq_tail) {
		fprintf(stderr, "framed: no receive posted\n");
		return -1;
	}
	r = &b->rq[b->rq_head++ % AB_DEPTH];
	if (len > r->len) {
		fprintf(stderr, "framed: the receive is too short\n");
		return -1;
	}
	memcpy(r->addr, p + FR_HDR, len);
	b->cq[b->cq_tail++ % AB_DEPTH] = (struct fr_cqe){ len, b->psn_in++ };
	b->st_off += FR_HDR + len;
	return 1;
}

/* Polls for a completion, reading the socket when none is there. */
static int framed_recv(struct ab_base *b)
{
	ssize_t n;
	int ret;

	while (b->cq_head == b->cq_tail) {
		ret = framed_take(b);
		if (ret < 0)
			return -1;
		if (ret)
			continue;
		/* a partial frame moves to the front */
		memmove(b->staging, b->staging + b->st_off,
			b->st_len - b->st_off);
		b->st_len -= b->st_off;
		b->st_off = 0;
		n = sock_read(b, b->staging + b->st_len, FR_STAGING - b->st_len,
			      0);
		if (n < 0)
			return -1;
		b->st_len += (size_t)n;
	}
	if (b->cq[b->cq_head++ % AB_DEPTH].len != b->size) {
		fprintf(stderr, "framed: a short message\n");
		return -1;
	}
	/* the receive posted again */
	b->rq[b->rq_tail++ % AB_DEPTH] = (struct fr_recv){ b->rbuf, b->size };
	return 0;
}

int ab_base_recv(struct ab_base *b, int l)
{
	ssize_t n;

	if (l == 1)
		return framed_recv(b);
	b->probe = true;
	n = sock_read(b, b->rbuf, b->size, b->size);
	b->probe = false;
	if (n < 0)
		return -1;
	core_probe_polled();
	return 0;
}
