/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Rendezvous sockets: SOCK_SEQPACKET Unix sockets in the abstract
 * namespace, so that nothing is left in any folder when a process dies.
 * That namespace has no permissions: the peer's credentials
 * (SO_PEERCRED) decide who may talk to us (shm.allow_users).
 */
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "transports/shm/shm.h"

static socklen_t sock_name(enum shm_sock_kind kind, uint32_t num,
			   struct sockaddr_un *sun)
{
	int n;

	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	/* sun_path[0] stays 0: the abstract namespace */
	n = snprintf(sun->sun_path + 1, sizeof(sun->sun_path) - 1, "%s/%s/%u",
		     SHM_NAME_PREFIX, kind == SHM_SOCK_NODE ? "node" : "port",
		     num);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
			   (size_t)n);
}

static int sock_new(int *fd_out)
{
	int fd;

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	*fd_out = fd;
	return 0;
}

int shm_sock_listen(enum shm_sock_kind kind, uint32_t num, int *fd_out)
{
	struct sockaddr_un sun;
	socklen_t len = sock_name(kind, num, &sun);
	int fd = -1, ret;

	ret = sock_new(&fd);
	if (ret)
		return ret;
	if (bind(fd, (struct sockaddr *)&sun, len) || listen(fd, SOMAXCONN)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	*fd_out = fd;
	return 0;
}

int shm_sock_connect(enum shm_sock_kind kind, uint32_t num, int *fd_out)
{
	struct sockaddr_un sun;
	socklen_t len = sock_name(kind, num, &sun);
	int fd = -1, ret;

	ret = sock_new(&fd);
	if (ret)
		return ret;
	/* local: it succeeds at once, or the listener's queue is full
	 * (EAGAIN), or nobody listens (ECONNREFUSED) */
	if (connect(fd, (struct sockaddr *)&sun, len)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	*fd_out = fd;
	return 0;
}

static int wait_fd(int fd, short events, int wait_ms)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int n;

	do {
		n = poll(&pfd, 1, wait_ms);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n ? 0 : -OPENRDMA_ETIMEDOUT;
}

int shm_sock_send(int fd, const void *msg, size_t len, const int *fds, int nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * SHM_MSG_MAX_FDS)];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = (void *)msg, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	ssize_t n;
	int ret;

	if (nfds > SHM_MSG_MAX_FDS)
		return -OPENRDMA_EINVAL;
	if (nfds > 0) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)nfds);
	}
	for (;;) {
		n = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n >= 0)
			return (size_t)n == len ? 0 : -OPENRDMA_EIO;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return -errno;
		/* a full socket buffer: the peer is alive but slow */
		ret = wait_fd(fd, POLLOUT, 1000);
		if (ret)
			return ret;
	}
}

void shm_fds_close(int *fds, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
}

/* Moves the descriptors of mh into fds (up to *nfds), closing the rest. */
static void take_fds(struct msghdr *mh, int *fds, int *nfds)
{
	int max = nfds ? *nfds : 0, got = 0, fd;
	struct cmsghdr *cm;
	size_t i, n;

	for (cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n; i++) {
			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int),
			       sizeof(int));
			if (got < max)
				fds[got++] = fd;
			else
				close(fd);
		}
	}
	if (nfds)
		*nfds = got;
}

int shm_sock_recv(int fd, void *buf, size_t len, int *fds, int *nfds,
		  int wait_ms)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * SHM_MSG_MAX_FDS)];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;
	int ret;

	if (nfds && *nfds > SHM_MSG_MAX_FDS)
		*nfds = SHM_MSG_MAX_FDS;
	if (wait_ms > 0) {
		ret = wait_fd(fd, POLLIN, wait_ms);
		if (ret)
			return ret;
	}
	mh.msg_control = ctl.buf;
	mh.msg_controllen = sizeof(ctl.buf);
	do {
		n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		if (nfds)
			*nfds = 0;
		return -errno;
	}
	take_fds(&mh, fds, nfds);
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
		if (nfds)
			shm_fds_close(fds, *nfds);
		return -OPENRDMA_EPROTO;
	}
	return (int)n;
}

void shm_msg_init(struct shm_msg_hdr *hdr, enum shm_msg_type type)
{
	hdr->magic = SHM_MSG_MAGIC;
	hdr->version = SHM_WIRE_VERSION;
	hdr->type = (uint16_t)type;
}

int shm_msg_type(const void *buf, int len, size_t min)
{
	struct shm_msg_hdr hdr;

	if (len < 0 || (size_t)len < sizeof(hdr) || (size_t)len < min)
		return -1;
	memcpy(&hdr, buf, sizeof(hdr));
	if (hdr.magic != SHM_MSG_MAGIC || hdr.version != SHM_WIRE_VERSION)
		return -1;
	return hdr.type;
}

int shm_sock_peer_check(const struct shm_ctx *sctx, int fd, pid_t *pid_out)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len))
		return -errno;
	if (!shm_uid_allowed(sctx, cred.uid))
		return -OPENRDMA_EACCES;
	*pid_out = cred.pid;
	return 0;
}
