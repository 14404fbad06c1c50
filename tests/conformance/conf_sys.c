/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Bounded waits and message I/O shared by both sides (conf_sys.h).
 */
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "conf_proto.h"
#include "conf_sys.h"

int64_t conf_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int conf_set_nonblock(int fd)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

int conf_wait_fd(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int ret;

	do {
		ret = poll(&pfd, 1, timeout_ms);
	} while (ret < 0 && errno == EINTR);
	if (ret < 0)
		return -errno;
	return ret ? 0 : -OPENRDMA_EAGAIN;
}

int conf_cq_collect(struct openrdma_cq *cq, int n, struct openrdma_wc *wc,
		    int timeout_ms)
{
	int64_t deadline = conf_now_ms() + timeout_ms;
	int got = 0, ret;

	/* an empty CQ is polled until the deadline, at least once */
	for (;;) {
		ret = openrdma_cq_poll(cq, n - got, wc + got);
		if (ret < 0)
			return got ? got : ret;
		got += ret;
		if (got == n || conf_now_ms() >= deadline)
			return got;
		if (!ret)
			usleep(200);
	}
}

int conf_async_wait(struct openrdma_context *ctx, int timeout_ms,
		    struct openrdma_async_event *ev)
{
	int64_t deadline = conf_now_ms() + timeout_ms;
	int ret;

	for (;;) {
		ret = openrdma_async_event_get(ctx, ev);
		if (ret != -OPENRDMA_EAGAIN || conf_now_ms() >= deadline)
			return ret;
		conf_wait_fd(ctx->async_fd, 10);
	}
}

int conf_cm_wait(struct openrdma_cm_channel *ch, int timeout_ms,
		 struct openrdma_cm_event **ev)
{
	int64_t deadline = conf_now_ms() + timeout_ms;
	int ret;

	for (;;) {
		ret = openrdma_cm_event_get(ch, ev);
		if (ret != -OPENRDMA_EAGAIN || conf_now_ms() >= deadline)
			return ret;
		conf_wait_fd(ch->fd, 10);
	}
}

static int write_full(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	ssize_t n;

	while (len) {
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int read_full(int fd, void *buf, size_t len, int timeout_ms)
{
	uint8_t *p = buf;
	ssize_t n;
	int ret;

	while (len) {
		ret = conf_wait_fd(fd, timeout_ms);
		if (ret == -OPENRDMA_EAGAIN)
			return -OPENRDMA_ETIMEDOUT;
		if (ret)
			return ret;
		n = recv(fd, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -OPENRDMA_ECONNRESET;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int conf_msg_send(int fd, const struct conf_msg *msg)
{
	if (msg->data_len > CONF_DATA_MAX)
		return -OPENRDMA_EMSGSIZE;
	return write_full(fd, msg, CONF_MSG_HDR_LEN + msg->data_len);
}

int conf_msg_recv(int fd, struct conf_msg *msg, int timeout_ms)
{
	int ret;

	ret = read_full(fd, msg, CONF_MSG_HDR_LEN, timeout_ms);
	if (ret)
		return ret;
	if (msg->data_len > CONF_DATA_MAX)
		return -OPENRDMA_EPROTO;
	return read_full(fd, msg->data, msg->data_len, timeout_ms);
}
