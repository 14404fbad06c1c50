/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Sockets: creation, options, listening, the data path's system calls,
 * and address conversions.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <openrdma/log.h>

#include "transports/tcp/tcp.h"
#include "core/probe.h"
#include "core/sw/dma.h"

uint64_t tcp_now(void)
{
	return sw_now_ns();
}

/*
 * glibc's recv(), readv() and sendmsg() are cancellation points: in a
 * process with threads each call switches asynchronous cancellation on and
 * off around the system call, which costs as much user time as the rest of
 * an empty poll.  Cancelling a thread inside the library would leave the
 * memory guard and the read or write token held anyway, and these sockets
 * never block, so the system calls are made directly.  ThreadSanitizer
 * builds keep the library's calls, whose interceptors tell the tool about
 * the memory the kernel fills.
 */
#ifdef SW_TSAN
#define sys_recvfrom(fd, buf, len, flags) recv(fd, buf, len, flags)
#define sys_readv(fd, iov, cnt) readv(fd, iov, cnt)
#define sys_sendmsg(fd, msg, flags) sendmsg(fd, msg, flags)
#define sys_sendto(fd, buf, len, flags) send(fd, buf, len, flags)
#else
#define sys_recvfrom(fd, buf, len, flags) \
	syscall(SYS_recvfrom, fd, buf, len, flags, NULL, NULL)
#define sys_readv(fd, iov, cnt) syscall(SYS_readv, fd, iov, cnt)
#define sys_sendmsg(fd, msg, flags) syscall(SYS_sendmsg, fd, msg, flags)
#define sys_sendto(fd, buf, len, flags) \
	syscall(SYS_sendto, fd, buf, len, flags, NULL, 0)
#endif

ssize_t tcp_sock_recv(int fd, void *buf, size_t len)
{
	ssize_t n;

	do {
		n = sys_recvfrom(fd, buf, len, MSG_DONTWAIT);
	} while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

ssize_t tcp_sock_readv(int fd, const struct iovec *iov, int cnt)
{
	ssize_t n;

	do {
		n = sys_readv(fd, iov, cnt);
	} while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

int tcp_sock_rcvlowat(int fd, int bytes)
{
	return setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &bytes, sizeof(bytes)) ?
		       -errno :
		       0;
}

/*
 * A small batch goes out as one buffer: sendmsg() first copies the message
 * header and imports the iovecs, which costs a small frame more than
 * gathering its few bytes here (0.13 us of a 3.8 us half round trip).
 */
ssize_t tcp_sock_send(int fd, const struct msghdr *msg)
{
	uint8_t flat[TCP_SOCK_FLAT_MAX];
	size_t i, len = 0;
	ssize_t n;

	for (i = 0; i < msg->msg_iovlen && len <= sizeof(flat); i++)
		len += msg->msg_iov[i].iov_len;
	if (msg->msg_iovlen > 1 && len <= sizeof(flat)) {
		len = 0;
		for (i = 0; i < msg->msg_iovlen; i++) {
			memcpy(flat + len, msg->msg_iov[i].iov_base,
			       msg->msg_iov[i].iov_len);
			len += msg->msg_iov[i].iov_len;
		}
		core_probe_send();
		do {
			n = sys_sendto(fd, flat, len,
				       MSG_NOSIGNAL | MSG_DONTWAIT);
		} while (n < 0 && errno == EINTR);
		core_probe_sent();
		return n < 0 ? -errno : n;
	}
	core_probe_send();
	do {
		n = sys_sendmsg(fd, msg, MSG_NOSIGNAL | MSG_DONTWAIT);
	} while (n < 0 && errno == EINTR);
	core_probe_sent();
	return n < 0 ? -errno : n;
}

int tcp_sock_open(struct tcp_ctx *tctx, int family, int type, int *fd_out)
{
	int fd;

	fd = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	*fd_out = fd;
	return 0;
}

void tcp_sock_tune(struct tcp_ctx *tctx, int fd)
{
	const struct tcp_params *prm = &tctx->prm;
	int one = 1;
	unsigned int ms = prm->keepalive_ms;

	if (prm->nodelay)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (prm->sndbuf)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &prm->sndbuf,
			   sizeof(prm->sndbuf));
	if (prm->rcvbuf)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &prm->rcvbuf,
			   sizeof(prm->rcvbuf));
	/* data the peer does not acknowledge for as long as a silent peer
	 * may last ends the connection as well */
	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof(ms));
}

int tcp_sock_listen(struct tcp_ctx *tctx, const struct sockaddr *addr,
		    int backlog, int *fd_out)
{
	struct sockaddr_in any4 = { .sin_family = AF_INET };
	const struct sockaddr *sa = addr;
	int fd = -1, ret, one = 1, zero = 0;

	ret = tcp_sock_open(tctx, sa->sa_family, SOCK_STREAM, &fd);
	if (ret == -EAFNOSUPPORT && sa->sa_family == AF_INET6 &&
	    sw_addr_is_any(sa)) {
		/* a host without IPv6: every IPv4 address instead */
		any4.sin_port = htons(sw_addr_port(sa));
		sa = (const struct sockaddr *)&any4;
		ret = tcp_sock_open(tctx, AF_INET, SOCK_STREAM, &fd);
	}
	if (ret)
		return ret;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* the IPv6 wildcard takes IPv4 peers too */
	if (sa->sa_family == AF_INET6 && sw_addr_is_any(sa))
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, sa, sw_addr_len(sa)) || listen(fd, backlog)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	*fd_out = fd;
	return 0;
}

void tcp_addr_normalize(struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t len;

	if (ss->ss_family != AF_INET6 ||
	    !IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
		/* the kernel wrote the family's length: the rest is copied
		 * whole into events and QP attributes */
		len = sw_addr_len((struct sockaddr *)ss);
		if (len)
			memset((uint8_t *)ss + len, 0, sizeof(*ss) - len);
		return;
	}
	sin.sin_port = sin6->sin6_port;
	memcpy(&sin.sin_addr, &sin6->sin6_addr.s6_addr[12], 4);
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, &sin, sizeof(sin));
}

int tcp_addr_for_family(const struct sockaddr *sa, int family,
			struct sockaddr_storage *out, socklen_t *len_out)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)out;

	memset(out, 0, sizeof(*out));
	if (sa->sa_family == family) {
		memcpy(out, sa, sw_addr_len(sa));
		*len_out = sw_addr_len(sa);
		return 0;
	}
	if (family == AF_INET6 && sa->sa_family == AF_INET) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = sin->sin_port;
		sin6->sin6_addr.s6_addr[10] = 0xff;
		sin6->sin6_addr.s6_addr[11] = 0xff;
		memcpy(&sin6->sin6_addr.s6_addr[12], &sin->sin_addr, 4);
		*len_out = sizeof(*sin6);
		return 0;
	}
	if (family == AF_INET && sa->sa_family == AF_INET6) {
		memcpy(out, sa, sizeof(struct sockaddr_in6));
		tcp_addr_normalize(out);
		if (out->ss_family == AF_INET) {
			*len_out = sizeof(struct sockaddr_in);
			return 0;
		}
	}
	return -OPENRDMA_EADDRNOTAVAIL;
}
