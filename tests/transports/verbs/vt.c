/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* Helpers of the verbs transport's device tests (vt.h). */
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openrdma/registry.h>

#include "vt.h"

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *vt_ifname(void)
{
	static char name[64];
	struct openrdma_device **list;
	const char *env = getenv("OPENRDMA_TEST_INTERFACE");
	int i, n;

	if (env && *env)
		return env;
	if (name[0])
		return name;
	cr_assert_eq(openrdma_device_list_get(&list, &n), 0);
	for (i = 0; i < n && !name[0]; i++)
		if (!strcmp(openrdma_device_transport_name(list[i]), "verbs"))
			strcpy(name, openrdma_device_name(list[i]));
	openrdma_device_list_free(list);
	if (!name[0])
		cr_skip_test("no verbs interface: no RDMA device here (run "
			     "the tests in the vmlab guest: make check-vmlab)");
	return name;
}

void vt_side_open(struct vt_side *s)
{
	struct openrdma_device *dev;
	const char *ifname = vt_ifname();

	memset(s, 0, sizeof(*s));
	cr_assert_eq(openrdma_device_find(ifname, &dev), 0, "no interface %s",
		     ifname);
	VT_OK(openrdma_device_open(dev, &s->ctx));
	VT_OK(openrdma_device_query(s->ctx, &s->attr));
	VT_OK(openrdma_port_query(s->ctx, 1, &s->port));
	VT_OK(openrdma_pd_alloc(s->ctx, &s->pd));
	VT_OK(openrdma_comp_channel_create(s->ctx, &s->comp));
	cr_assert_eq(fcntl(s->comp->fd, F_SETFL, O_NONBLOCK), 0);
	VT_OK(openrdma_cq_create(s->ctx, 256, NULL, NULL, 0, &s->scq));
	VT_OK(openrdma_cq_create(s->ctx, 256, s, s->comp, 0, &s->rcq));
	VT_OK(openrdma_cm_channel_create(s->ctx, &s->ch));
	cr_assert_eq(fcntl(s->ch->fd, F_SETFL,
			   fcntl(s->ch->fd, F_GETFL) | O_NONBLOCK),
		     0);
}

void vt_qp_create(struct vt_side *s, enum openrdma_qp_type type,
		  uint32_t max_send_wr, struct openrdma_srq *srq)
{
	struct openrdma_qp_init_attr init = {
		.send_cq = s->scq,
		.recv_cq = s->rcq,
		.srq = srq,
		.qp_type = type,
		.cap = { .max_send_wr = max_send_wr,
			 .max_recv_wr = 64,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	VT_OK(openrdma_qp_create(s->pd, &init, &s->qp));
	cr_assert_geq(s->qp->cap.max_send_wr, max_send_wr);
}

void vt_side_close(struct vt_side *s)
{
	if (s->id)
		VT_OK(openrdma_cm_id_destroy(s->id));
	if (s->listen)
		VT_OK(openrdma_cm_id_destroy(s->listen));
	if (s->qp)
		VT_OK(openrdma_qp_destroy(s->qp));
	VT_OK(openrdma_cm_channel_destroy(s->ch));
	VT_OK(openrdma_cq_destroy(s->rcq));
	VT_OK(openrdma_cq_destroy(s->scq));
	VT_OK(openrdma_comp_channel_destroy(s->comp));
	VT_OK(openrdma_pd_dealloc(s->pd));
	VT_OK(openrdma_context_close(s->ctx));
}

void vt_require_cap(const struct vt_side *s, uint32_t cap, const char *what)
{
	if (!(s->attr.device_cap_flags & cap))
		cr_skip_test("%s: the device has no %s (device_cap_flags "
			     "0x%x)",
			     vt_ifname(), what, s->attr.device_cap_flags);
}

int vt_cm_next(struct vt_side *s, int timeout_ms,
	       struct openrdma_cm_event **ev_out)
{
	int64_t end = now_ms() + timeout_ms;
	struct pollfd pfd = { .fd = s->ch->fd, .events = POLLIN };
	int ret;

	for (;;) {
		ret = openrdma_cm_event_get(s->ch, ev_out);
		if (ret != -OPENRDMA_EAGAIN)
			return ret;
		if (now_ms() >= end)
			return -OPENRDMA_ETIMEDOUT;
		poll(&pfd, 1, (int)(end - now_ms()));
	}
}

struct openrdma_cm_event *vt_cm_expect(struct vt_side *s,
				       enum openrdma_cm_event_type want)
{
	struct openrdma_cm_event *ev;
	int ret;

	ret = vt_cm_next(s, VT_TIMEOUT_MS, &ev);
	cr_assert_eq(ret, 0, "waiting for %s: %s", openrdma_cm_event_str(want),
		     openrdma_strerror(ret));
	cr_assert_eq(ev->event, want, "CM event %s (status %d), want %s",
		     openrdma_cm_event_str(ev->event), ev->status,
		     openrdma_cm_event_str(want));
	return ev;
}

void vt_connect(struct vt_side *a, struct vt_side *b)
{
	struct openrdma_conn_param param = {
		.responder_resources = 4,
		.initiator_depth = 4,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
	struct openrdma_cm_event *ev;
	struct sockaddr_storage addr;

	VT_OK(openrdma_cm_id_create(b->ctx, b->ch, b, OPENRDMA_PS_TCP,
				    &b->listen));
	addr = b->port.addr;
	cr_assert_neq(addr.ss_family, AF_UNSPEC, "%s has no IP address",
		      vt_ifname());
	VT_OK(openrdma_cm_listen(b->listen, (struct sockaddr *)&addr, 4));
	VT_OK(openrdma_cm_local_addr(b->listen, &addr));
	VT_OK(openrdma_cm_id_create(a->ctx, a->ch, a, OPENRDMA_PS_TCP, &a->id));
	VT_OK(openrdma_cm_connect(a->id, a->qp, (struct sockaddr *)&addr,
				  &param));
	ev = vt_cm_expect(b, OPENRDMA_CM_EVENT_CONNECT_REQUEST);
	cr_assert_eq(ev->listen_id, b->listen);
	b->id = ev->id;
	openrdma_cm_event_ack(ev);
	VT_OK(openrdma_cm_accept(b->id, b->qp, &param));
	ev = vt_cm_expect(a, OPENRDMA_CM_EVENT_ESTABLISHED);
	openrdma_cm_event_ack(ev);
	ev = vt_cm_expect(b, OPENRDMA_CM_EVENT_ESTABLISHED);
	openrdma_cm_event_ack(ev);
	cr_assert_eq(atomic_load(&a->qp->state), OPENRDMA_QPS_RTS);
	cr_assert_eq(atomic_load(&b->qp->state), OPENRDMA_QPS_RTS);
}

void vt_buf_new(struct vt_side *s, struct vt_buf *b, size_t len, int access,
		uint8_t fill)
{
	b->len = len;
	b->buf = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	cr_assert_not_null(b->buf);
	memset(b->buf, fill, len);
	VT_OK(openrdma_mr_reg(s->pd, b->buf, len, access, &b->mr));
}

void vt_buf_free(struct vt_buf *b)
{
	VT_OK(openrdma_mr_dereg(b->mr));
	free(b->buf);
}

void vt_post_recv(struct openrdma_qp *qp, uint64_t wr_id,
		  const struct vt_buf *b, size_t off, uint32_t len)
{
	struct openrdma_sge sge = { .addr = (uintptr_t)b->buf + off,
				    .length = len,
				    .lkey = b->mr->lkey };
	struct openrdma_recv_wr wr = { .wr_id = wr_id,
				       .sg_list = &sge,
				       .num_sge = 1 };
	struct openrdma_recv_wr *bad;

	VT_OK(openrdma_qp_post_recv(qp, &wr, &bad));
}

void vt_post_send(struct openrdma_qp *qp, struct openrdma_send_wr *wr)
{
	struct openrdma_send_wr *bad = NULL;

	VT_OK(openrdma_qp_post_send(qp, wr, &bad));
}

int vt_poll(struct openrdma_cq *cq, int n, struct openrdma_wc *wc,
	    int timeout_ms)
{
	int64_t end = now_ms() + timeout_ms;
	int got = 0, ret;

	while (got < n) {
		ret = openrdma_cq_poll(cq, n - got, wc + got);
		if (ret < 0)
			return ret;
		got += ret;
		if (!ret && now_ms() >= end)
			break;
	}
	return got;
}

void vt_poll_ok(struct openrdma_cq *cq, int n, struct openrdma_wc *wc)
{
	int i, got;

	got = vt_poll(cq, n, wc, VT_TIMEOUT_MS);
	cr_assert_eq(got, n, "%d completions of %d", got, n);
	for (i = 0; i < n; i++)
		cr_assert_eq(wc[i].status, OPENRDMA_WC_SUCCESS,
			     "completion %d (wr_id %llu): %s", i,
			     (unsigned long long)wc[i].wr_id,
			     openrdma_wc_status_str(wc[i].status));
}

int vt_async_next(struct vt_side *s, int timeout_ms,
		  struct openrdma_async_event *ev)
{
	int64_t end = now_ms() + timeout_ms;
	struct pollfd pfd = { .fd = s->ctx->async_fd, .events = POLLIN };
	int ret;

	for (;;) {
		ret = openrdma_async_event_get(s->ctx, ev);
		if (ret != -OPENRDMA_EAGAIN)
			return ret;
		if (now_ms() >= end)
			return -OPENRDMA_ETIMEDOUT;
		poll(&pfd, 1, (int)(end - now_ms()));
	}
}
