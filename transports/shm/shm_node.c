/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The node socket of a context: where peers ask for RC connections to our
 * QPs (ATTACH) and for datagram links (LINK).  The node number, bound as
 * an abstract socket name, is unique on the host while we live and forms
 * the high bits of our QP numbers, so a QPN alone leads to its context.
 */
#include <stdlib.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openrdma/log.h>

#include "transports/shm/shm.h"

/* The first message on an accepted node socket says what it is for. */
static void node_first_msg(struct shm_ctx *sctx, struct shm_watch *w,
			   uint32_t events)
{
	union {
		struct shm_msg_hdr hdr;
		struct shm_msg_attach attach;
	} msg;
	int fds[SHM_MSG_MAX_FDS], nfds = SHM_MSG_MAX_FDS, len, type;
	pid_t pid;

	len = shm_sock_recv(w->fd, &msg, sizeof(msg), fds, &nfds, 0);
	if (len == -OPENRDMA_EAGAIN)
		return;
	if (len <= 0)
		goto drop;
	if (shm_sock_peer_check(sctx, w->fd, &pid)) {
		openrdma_dbg("shm", "node %u: a user not allowed knocked",
			     sctx->node);
		goto drop;
	}
	type = shm_msg_type(&msg, len, sizeof(msg.hdr));
	if (type == SHM_MSG_ATTACH && len == sizeof(msg.attach) && nfds == 3) {
		shm_conn_accept(sctx, w, pid, &msg.attach, fds, nfds);
		return;
	}
	if (type == SHM_MSG_LINK && nfds == 3) {
		shm_link_accept(sctx, w, pid, fds, nfds);
		return;
	}
drop:
	shm_fds_close(fds, nfds);
	shm_watch_del(sctx, w);
}

static void node_listen_event(struct shm_ctx *sctx, struct shm_watch *w,
			      uint32_t events)
{
	int fd;

	for (;;) {
		fd = accept4(w->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			break;
		if (!shm_watch_add(sctx, fd, node_first_msg, NULL))
			close(fd);
	}
}

static void node_watch(void *arg)
{
	struct shm_ctx *sctx = arg;

	sctx->node_watch =
		shm_watch_add(sctx, sctx->node_fd, node_listen_event, sctx);
}

int shm_node_open(struct shm_ctx *sctx)
{
	uint32_t start = 0, n, i;
	int fd, ret = -OPENRDMA_EADDRINUSE;

	/* a random start: contexts opened together rarely collide */
	if (getrandom(&start, sizeof(start), 0) < 0)
		start = (uint32_t)getpid();
	for (i = 0; i < SHM_NODE_MAX; i++) {
		n = (start + i) % SHM_NODE_MAX + 1;
		ret = shm_sock_listen(SHM_SOCK_NODE, n, &fd);
		if (ret != -OPENRDMA_EADDRINUSE)
			break;
	}
	if (ret) {
		openrdma_warn("shm", "no node number: %s",
			      openrdma_strerror(ret));
		return ret;
	}
	sctx->node = n;
	sctx->node_fd = fd;
	shm_prog_run(sctx, node_watch, sctx);
	if (!sctx->node_watch) {
		close(fd);
		sctx->node_fd = -1;
		return -OPENRDMA_ENOMEM;
	}
	return 0;
}

static void node_unwatch(void *arg)
{
	struct shm_ctx *sctx = arg;

	/* closes the socket: the name is free again */
	shm_watch_del(sctx, sctx->node_watch);
	sctx->node_watch = NULL;
	sctx->node_fd = -1;
}

void shm_node_close(struct shm_ctx *sctx)
{
	shm_prog_run(sctx, node_unwatch, sctx);
}
