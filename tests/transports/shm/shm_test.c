/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* The connected pair of the shm tests (shm_test.h). */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shm_test.h"

uint8_t st_pattern(unsigned int seed, size_t i)
{
	return (uint8_t)(i * 131u + (i >> 9) + seed * 73u);
}

void st_fill(uint8_t *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = st_pattern(seed, i);
}

bool st_check(const uint8_t *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != st_pattern(seed, i))
			return false;
	return true;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int st_qp_new(struct st_side *s)
{
	struct openrdma_qp_init_attr qia = {
		.qp_type = OPENRDMA_QPT_RC,
		.send_cq = s->cq,
		.recv_cq = s->cq,
		.cap = { .max_send_wr = 16,
			 .max_recv_wr = 16,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct openrdma_qp_attr init = {
		.qp_state = OPENRDMA_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = OPENRDMA_ACCESS_REMOTE_WRITE |
				   OPENRDMA_ACCESS_REMOTE_READ,
	};
	int ret;

	ret = openrdma_qp_create(s->pd, &qia, &s->qp);
	if (ret)
		return ret;
	/* INIT: receives can be posted before the connection is made */
	return openrdma_qp_modify(s->qp, &init,
				  OPENRDMA_QP_STATE | OPENRDMA_QP_PKEY_INDEX |
					  OPENRDMA_QP_PORT |
					  OPENRDMA_QP_ACCESS_FLAGS);
}

int st_open(struct st_side *s, bool channel)
{
	struct openrdma_device *dev;
	int ret;

	memset(s, 0, sizeof(*s));
	ret = openrdma_device_find("shm0", &dev);
	if (!ret)
		ret = openrdma_device_open(dev, &s->ctx);
	if (!ret)
		ret = openrdma_pd_alloc(s->ctx, &s->pd);
	if (!ret && channel)
		ret = openrdma_comp_channel_create(s->ctx, &s->comp);
	if (!ret)
		ret = openrdma_cq_create(s->ctx, 64, NULL, s->comp, 0, &s->cq);
	if (ret)
		return ret;
	s->buf = aligned_alloc(4096, ST_BUF);
	if (!s->buf)
		return -OPENRDMA_ENOMEM;
	memset(s->buf, 0, ST_BUF);
	ret = openrdma_mr_reg(s->pd, s->buf, ST_BUF,
			      OPENRDMA_ACCESS_LOCAL_WRITE |
				      OPENRDMA_ACCESS_REMOTE_WRITE |
				      OPENRDMA_ACCESS_REMOTE_READ,
			      &s->mr);
	if (!ret)
		ret = openrdma_cm_channel_create(s->ctx, &s->ch);
	if (!ret)
		ret = st_qp_new(s);
	return ret;
}

void st_close(struct st_side *s)
{
	if (s->id)
		openrdma_cm_id_destroy(s->id);
	if (s->listen_id)
		openrdma_cm_id_destroy(s->listen_id);
	if (s->qp)
		openrdma_qp_destroy(s->qp);
	if (s->ch)
		openrdma_cm_channel_destroy(s->ch);
	if (s->mr)
		openrdma_mr_dereg(s->mr);
	if (s->cq)
		openrdma_cq_destroy(s->cq);
	if (s->comp)
		openrdma_comp_channel_destroy(s->comp);
	if (s->pd)
		openrdma_pd_dealloc(s->pd);
	if (s->ctx)
		openrdma_context_close(s->ctx);
	free(s->buf);
	memset(s, 0, sizeof(*s));
}

int st_post_recv(struct st_side *s, uint64_t wr_id, size_t off, uint32_t len)
{
	struct openrdma_sge sge = { .addr = (uintptr_t)s->buf + off,
				    .length = len,
				    .lkey = s->mr->lkey };
	struct openrdma_recv_wr wr = { .wr_id = wr_id,
				       .sg_list = &sge,
				       .num_sge = 1 };
	struct openrdma_recv_wr *bad;

	return openrdma_qp_post_recv(s->qp, &wr, &bad);
}

int st_post(struct st_side *s, enum openrdma_wr_opcode op, uint64_t wr_id,
	    size_t off, uint32_t len, uint64_t remote_off)
{
	struct openrdma_sge sge = { .addr = (uintptr_t)s->buf + off,
				    .length = len,
				    .lkey = s->mr->lkey };
	struct openrdma_send_wr wr = { .wr_id = wr_id,
				       .sg_list = &sge,
				       .num_sge = 1,
				       .opcode = op,
				       .send_flags = OPENRDMA_SEND_SIGNALED };
	struct openrdma_send_wr *bad;

	wr.wr.rdma.remote_addr = s->remote.addr + remote_off;
	wr.wr.rdma.rkey = s->remote.rkey;
	return openrdma_qp_post_send(s->qp, &wr, &bad);
}

int st_poll(struct st_side *s, struct openrdma_wc *wc, int timeout_ms)
{
	long end = now_ms() + timeout_ms;
	int n;

	do {
		n = openrdma_cq_poll(s->cq, 1, wc);
		if (n < 0)
			return n;
		if (n == 1)
			return (int)wc->status;
	} while (now_ms() < end);
	return -OPENRDMA_ETIMEDOUT;
}

int st_cm_wait(struct st_side *s, enum openrdma_cm_event_type type,
	       struct openrdma_cm_event *copy, int timeout_ms)
{
	struct pollfd pfd = { .fd = s->ch->fd, .events = POLLIN };
	struct openrdma_cm_event *ev;
	int ret;

	if (poll(&pfd, 1, timeout_ms) != 1)
		return -OPENRDMA_ETIMEDOUT;
	ret = openrdma_cm_event_get(s->ch, &ev);
	if (ret)
		return ret;
	ret = ev->event == type ? 0 : -OPENRDMA_EPROTO;
	if (copy)
		*copy = *ev;
	if (ret && !ev->status)
		ev->status = -OPENRDMA_EPROTO;
	if (ret)
		ret = ev->status;
	openrdma_cm_event_ack(ev);
	return ret;
}

uint16_t st_listen(struct st_side *s)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct sockaddr_storage ss;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_eq(openrdma_cm_id_create(s->ctx, s->ch, NULL, OPENRDMA_PS_TCP,
					   &s->listen_id),
		     0);
	cr_assert_eq(openrdma_cm_listen(s->listen_id, (struct sockaddr *)&sin,
					4),
		     0);
	cr_assert_eq(openrdma_cm_local_addr(s->listen_id, &ss), 0);
	return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

void st_accept(struct st_side *s)
{
	struct st_info mine = { .addr = (uintptr_t)s->buf,
				.rkey = s->mr->rkey };
	struct openrdma_conn_param param = {
		.private_data = &mine,
		.private_data_len = sizeof(mine),
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
	struct pollfd pfd = { .fd = s->ch->fd, .events = POLLIN };
	struct openrdma_cm_event *ev;
	int ret;

	/* the child may have failed before it connected */
	cr_assert_eq(poll(&pfd, 1, ST_TIMEOUT_MS), 1, "no connect request");
	ret = openrdma_cm_event_get(s->ch, &ev);
	cr_assert_eq(ret, 0, "no connect request: %s", openrdma_strerror(ret));
	cr_assert_eq(ev->event, OPENRDMA_CM_EVENT_CONNECT_REQUEST, "event %s",
		     openrdma_cm_event_str(ev->event));
	s->id = ev->id;
	memcpy(&s->remote, ev->param.private_data, sizeof(s->remote));
	openrdma_cm_event_ack(ev);
	cr_assert_eq(openrdma_cm_accept(s->id, s->qp, &param), 0);
	ret = st_cm_wait(s, OPENRDMA_CM_EVENT_ESTABLISHED, NULL, ST_TIMEOUT_MS);
	cr_assert_eq(ret, 0, "not established: %s", openrdma_strerror(ret));
}

int st_connect(struct st_side *s, uint16_t port)
{
	struct st_info mine = { .addr = (uintptr_t)s->buf,
				.rkey = s->mr->rkey };
	struct openrdma_conn_param param = {
		.private_data = &mine,
		.private_data_len = sizeof(mine),
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct openrdma_cm_event ev;
	int ret;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons(port);
	ret = openrdma_cm_id_create(s->ctx, s->ch, NULL, OPENRDMA_PS_TCP,
				    &s->id);
	if (!ret)
		ret = openrdma_cm_connect(s->id, s->qp, (struct sockaddr *)&sin,
					  &param);
	if (!ret)
		ret = st_cm_wait(s, OPENRDMA_CM_EVENT_ESTABLISHED, &ev,
				 ST_TIMEOUT_MS);
	if (!ret)
		memcpy(&s->remote, ev.param.private_data, sizeof(s->remote));
	return ret;
}

void st_child_start(struct st_child *c,
		    int (*fn)(void *arg, uint16_t port, int ready_fd),
		    void *arg)
{
	uint16_t port = 0;
	int ready[2], go[2];

	cr_assert_eq(pipe2(ready, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(go, O_CLOEXEC), 0);
	c->pid = fork();
	cr_assert_geq(c->pid, 0, "fork");
	if (!c->pid) {
		close(ready[0]);
		close(go[1]);
		if (read(go[0], &port, sizeof(port)) != sizeof(port))
			_exit(ST_EXIT_SETUP);
		close(go[0]);
		_exit(fn(arg, port, ready[1]));
	}
	close(ready[1]);
	close(go[0]);
	c->ready_fd = ready[0];
	c->go_fd = go[1];
}

void st_child_go(struct st_child *c, uint16_t port)
{
	cr_assert_eq(write(c->go_fd, &port, sizeof(port)), sizeof(port));
	close(c->go_fd);
	c->go_fd = -1;
}

char st_child_ready(struct st_child *c)
{
	struct pollfd pfd = { .fd = c->ready_fd, .events = POLLIN };
	char b = 0;

	cr_assert_eq(poll(&pfd, 1, ST_TIMEOUT_MS), 1, "child not ready");
	cr_assert_eq(read(c->ready_fd, &b, 1), 1,
		     "the child ended before it was ready");
	return b;
}

int st_child_wait(struct st_child *c)
{
	int status;

	if (c->go_fd >= 0)
		close(c->go_fd);
	c->go_fd = -1;
	cr_assert_eq(waitpid(c->pid, &status, 0), c->pid);
	close(c->ready_fd);
	cr_assert(WIFEXITED(status), "child killed by signal %d",
		  WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	return WEXITSTATUS(status);
}
