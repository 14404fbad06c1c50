/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * UD over UDP: one datagram per message, a frame header (UD_SEND or
 * UD_SEND_IMM: destination QPN, source QPN, Q_Key) and the payload, on the
 * context's UDP socket, whose port is the port of the context's address.
 * A receive starts with the GRH that the sender's address gives; its
 * completion's slid names that address for openrdma_ah_attr_from_wc().
 * Datagrams that are malformed, for no QP, or refused by it are dropped,
 * as the semantics page allows.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openrdma/log.h>

#include "transports/tcp/tcp.h"
#include "core/sw/dma.h"

/* Q_Keys with the high bit set mean "use the QP's own" (IB 10.2.5). */
#define QKEY_USE_QP 0x80000000u
#define UD_BUF (TCP_FRAME_HDR_MAX + TCP_MAX_UD_MSG)
/* Datagrams handled per wake-up before the other sockets' turn. */
#define UD_BUDGET 256
/* A full socket buffer: how long a sender waits for room, at most. */
#define UD_SEND_WAIT_MS 10
#define UD_RCVBUF (4 << 20)

static void ud_event(struct tcp_poll *poll, uint32_t events);

int tcp_ud_open(struct tcp_ctx *tctx, uint16_t port)
{
	struct sockaddr_storage ss = tctx->bind_addr;
	struct sockaddr_in any4 = { .sin_family = AF_INET };
	int fd, ret, zero = 0, size = UD_RCVBUF;

	sw_addr_set_port((struct sockaddr *)&ss, port);
	ret = tcp_sock_open(tctx, ss.ss_family, SOCK_DGRAM, &fd);
	if (ret == -EAFNOSUPPORT && ss.ss_family == AF_INET6 &&
	    sw_addr_is_any((struct sockaddr *)&ss)) {
		any4.sin_port = htons(port);
		memset(&ss, 0, sizeof(ss));
		memcpy(&ss, &any4, sizeof(any4));
		ret = tcp_sock_open(tctx, AF_INET, SOCK_DGRAM, &fd);
	}
	if (ret)
		return ret;
	if (ss.ss_family == AF_INET6 && sw_addr_is_any((struct sockaddr *)&ss))
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	/* bursts of datagrams wait here for the progress thread */
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (bind(fd, (struct sockaddr *)&ss,
		 sw_addr_len((struct sockaddr *)&ss))) {
		ret = -errno;
		close(fd);
		return ret;
	}
	tctx->ud_buf = malloc(UD_BUF);
	if (!tctx->ud_buf) {
		close(fd);
		return -OPENRDMA_ENOMEM;
	}
	tctx->ud.fd = fd;
	tctx->ud.fn = ud_event;
	tctx->ud_family = ss.ss_family;
	return 0;
}

void tcp_ud_close(struct tcp_ctx *tctx)
{
	if (tctx->ud.fd >= 0)
		close(tctx->ud.fd);
	tctx->ud.fd = -1;
	free(tctx->ud_buf);
	tctx->ud_buf = NULL;
}

/* One datagram of n bytes from src: to its QP, or dropped. */
static void ud_deliver(struct tcp_ctx *tctx, ssize_t n,
		       struct sockaddr_storage *src)
{
	struct sw_iov_payload payload;
	struct tcp_frame f;
	struct iovec iov;
	struct sw_req req;
	struct tcp_qp *qp;
	int hlen, ret;

	hlen = tcp_frame_parse(tctx->ud_buf, (size_t)n, &f, NULL);
	if (hlen <= 0 ||
	    (f.opcode != TCP_OP_UD_SEND && f.opcode != TCP_OP_UD_SEND_IMM) ||
	    (size_t)hlen + f.length != (size_t)n) {
		openrdma_dbg("tcp", "malformed datagram of %zd bytes dropped",
			     n);
		return;
	}
	qp = tcp_qp_lookup(tctx, f.qpn);
	if (!qp)
		return;
	/* The state is read first: its store in modify orders the core's
	 * set-up of a fresh QP before the toolkit reads it. */
	ret = sw_qp_state(&qp->sw);
	if (ret != OPENRDMA_QPS_RTR && ret != OPENRDMA_QPS_RTS) {
		tcp_qp_put(qp);
		return;
	}
	tcp_addr_normalize(src);
	memset(&req, 0, sizeof(req));
	req.opcode = f.opcode == TCP_OP_UD_SEND_IMM ?
			     OPENRDMA_WR_SEND_WITH_IMM :
			     OPENRDMA_WR_SEND;
	if (f.flags & TCP_FLAG_SOLICITED)
		req.send_flags = OPENRDMA_SEND_SOLICITED;
	req.src_qpn = f.src_qpn;
	req.ex = htonl(f.imm);
	req.length = f.length;
	req.qkey = f.qkey;
	iov.iov_base = tctx->ud_buf + hlen;
	iov.iov_len = f.length;
	sw_iov_payload_init(&payload, &iov, 1);
	req.payload = &payload.base;
	if (sw_peers_index(tctx->peers, (struct sockaddr *)src, &req.slid))
		req.slid = 0;
	sw_gid_from_addr((struct sockaddr *)src, &req.sgid);
	req.dgid = tctx->gid;
	/* the receive's buffers are registered memory */
	tcp_mem_enter(tctx);
	sw_dma_begin();
	ret = sw_target_ud(&qp->sw, &req);
	sw_dma_end();
	tcp_mem_leave(tctx);
	if (ret)
		openrdma_dbg("tcp", "datagram for QP %u dropped: %s", f.qpn,
			     openrdma_strerror(ret));
	tcp_qp_put(qp);
}

static void ud_event(struct tcp_poll *poll, uint32_t events)
{
	struct tcp_ctx *tctx = openrdma_container_of(poll, struct tcp_ctx, ud);
	struct sockaddr_storage src;
	socklen_t len;
	ssize_t n;
	int i;

	tctx->ud_again = false;
	for (i = 0; i < UD_BUDGET; i++) {
		len = sizeof(src);
		n = recvfrom(poll->fd, tctx->ud_buf, UD_BUF, MSG_DONTWAIT,
			     (struct sockaddr *)&src, &len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return; /* EAGAIN: the socket is empty */
		}
		ud_deliver(tctx, n, &src);
	}
	/* more may wait, and the socket is edge-triggered: look again */
	tctx->ud_again = true;
}

/* Sends one datagram; a full socket buffer is waited out briefly, then
 * the datagram is lost, which UD allows. */
static void ud_send(struct tcp_ctx *tctx, struct msghdr *msg)
{
	struct pollfd pfd = { .fd = tctx->ud.fd, .events = POLLOUT };
	int tries = 2;

	while (sendmsg(tctx->ud.fd, msg, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
		if (errno == EINTR)
			continue;
		if ((errno != EAGAIN && errno != EWOULDBLOCK) || !tries--) {
			openrdma_dbg("tcp", "datagram lost: %s",
				     strerror(errno));
			return;
		}
		poll(&pfd, 1, UD_SEND_WAIT_MS);
	}
}

static int ud_execute(struct sw_qp *sqp, struct sw_send_wqe *w,
		      const struct iovec *iov, int iovcnt, uint64_t len)
{
	struct tcp_qp *qp = sw_to_tcp_qp(sqp);
	struct tcp_ctx *tctx = qp->ctx;
	struct tcp_ah *ah = to_tcp_ah(w->ah);
	struct iovec v[SW_MAX_SGE + 1];
	uint8_t hdr[TCP_FRAME_HDR_MAX];
	struct sockaddr_storage dest;
	struct msghdr msg;
	struct tcp_frame f;
	socklen_t dlen;

	/* datagrams may be lost: to nowhere, they are */
	if (ah->dest.ss_family == AF_UNSPEC ||
	    w->remote_qpn > TCP_FRAME_QPN_MAX ||
	    tcp_addr_for_family((struct sockaddr *)&ah->dest, tctx->ud_family,
				&dest, &dlen))
		return OPENRDMA_WC_SUCCESS;
	memset(&f, 0, sizeof(f));
	f.opcode = w->opcode == OPENRDMA_WR_SEND_WITH_IMM ? TCP_OP_UD_SEND_IMM :
							    TCP_OP_UD_SEND;
	if (w->send_flags & OPENRDMA_SEND_SOLICITED)
		f.flags = TCP_FLAG_SOLICITED;
	f.length = (uint32_t)len;
	f.qpn = w->remote_qpn;
	f.src_qpn = qp->base.qp_num;
	f.qkey = w->remote_qkey & QKEY_USE_QP ? atomic_load(&sqp->qkey) :
						w->remote_qkey;
	if (f.opcode == TCP_OP_UD_SEND_IMM)
		f.imm = ntohl(w->ex);
	v[0].iov_base = hdr;
	v[0].iov_len = tcp_frame_encode(&f, hdr);
	memcpy(&v[1], iov, (size_t)iovcnt * sizeof(*iov));
	memset(&msg, 0, sizeof(msg));
	msg.msg_name = &dest;
	msg.msg_namelen = dlen;
	msg.msg_iov = v;
	msg.msg_iovlen = (size_t)iovcnt + 1;
	/* straight from the registered buffers */
	tcp_mem_enter(tctx);
	ud_send(tctx, &msg);
	tcp_mem_leave(tctx);
	return OPENRDMA_WC_SUCCESS;
}

static int ud_schedule(struct sw_qp *sqp, uint64_t deadline)
{
	/* UD has no RNR retries */
	return -OPENRDMA_EOPNOTSUPP;
}

const struct sw_qp_ops tcp_ud_ops = {
	.execute = ud_execute,
	.schedule = ud_schedule,
};
