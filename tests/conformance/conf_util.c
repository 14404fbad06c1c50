/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Side A's helpers: byte patterns, posting, bounded polling and event
 * waits that fail the test instead of hanging.
 */
#include <unistd.h>

#include "conf.h"
#include "conf_sys.h"

void conf_fill(void *buf, size_t len, unsigned int seed, size_t first)
{
	uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = conf_pattern(seed, first + i);
}

long conf_check(const void *buf, size_t len, unsigned int seed, size_t first)
{
	const uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != conf_pattern(seed, first + i))
			return (long)i;
	return -1;
}

uint16_t conf_addr_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return 0;
}

void conf_addr_set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
}

void conf_post_send(struct openrdma_qp *qp, struct openrdma_send_wr *wr)
{
	struct openrdma_send_wr *bad = NULL;
	int ret;

	ret = openrdma_qp_post_send(qp, wr, &bad);
	cr_assert_eq(ret, 0, "post_send wr_id %llu: %s",
		     (unsigned long long)wr->wr_id, openrdma_strerror(ret));
}

void conf_post_recv(struct openrdma_qp *qp, uint64_t wr_id,
		    const struct conf_mem *m, size_t off, uint32_t len)
{
	struct openrdma_sge sge = conf_sge(m, off, len);
	struct openrdma_recv_wr wr = { .wr_id = wr_id,
				       .sg_list = &sge,
				       .num_sge = 1 };
	struct openrdma_recv_wr *bad = NULL;
	int ret;

	ret = openrdma_qp_post_recv(qp, &wr, &bad);
	cr_assert_eq(ret, 0, "post_recv wr_id %llu: %s",
		     (unsigned long long)wr_id, openrdma_strerror(ret));
}

void conf_rdma(struct openrdma_qp *qp, enum openrdma_wr_opcode op,
	       uint64_t wr_id, const struct conf_mem *m, size_t off,
	       uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct openrdma_sge sge = conf_sge(m, off, len);
	struct openrdma_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = op,
		.send_flags = OPENRDMA_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	};

	conf_post_send(qp, &wr);
}

void conf_send(struct openrdma_qp *qp, uint64_t wr_id, const struct conf_mem *m,
	       size_t off, uint32_t len)
{
	conf_rdma(qp, OPENRDMA_WR_SEND, wr_id, m, off, len, 0, 0);
}

int conf_poll_wait(struct conf_test *t, struct openrdma_cq *cq, int n,
		   struct openrdma_wc *wc)
{
	return conf_cq_collect(cq, n, wc, t->timeout_ms);
}

void conf_poll_n(struct conf_test *t, struct openrdma_cq *cq, int n,
		 struct openrdma_wc *wc)
{
	struct openrdma_wc extra;
	int ret;

	ret = conf_poll_wait(t, cq, n, wc);
	cr_assert_eq(ret, n, "CQ: %d completions (%s), want %d", ret,
		     ret < 0 ? openrdma_strerror(ret) : "ok", n);
	ret = openrdma_cq_poll(cq, 1, &extra);
	cr_assert_eq(ret, 0, "CQ: unexpected completion wr_id %llu (%s)",
		     ret > 0 ? (unsigned long long)extra.wr_id : 0ULL,
		     ret > 0 ? openrdma_wc_status_str(extra.status) :
			       openrdma_strerror(ret));
}

void conf_poll_none(struct openrdma_cq *cq)
{
	int64_t deadline = conf_now_ms() + CONF_QUIET_MS;
	struct openrdma_wc wc;
	int ret;

	do {
		ret = openrdma_cq_poll(cq, 1, &wc);
		cr_assert_eq(ret, 0,
			     "CQ: unexpected completion wr_id %llu (%s)",
			     ret > 0 ? (unsigned long long)wc.wr_id : 0ULL,
			     ret > 0 ? openrdma_wc_status_str(wc.status) :
				       openrdma_strerror(ret));
		usleep(1000);
	} while (conf_now_ms() < deadline);
}

void conf_wc_expect(const struct openrdma_wc *wc, uint64_t wr_id,
		    enum openrdma_wc_status status, int opcode)
{
	cr_assert_eq(wc->wr_id, wr_id, "completion wr_id %llu, want %llu",
		     (unsigned long long)wc->wr_id, (unsigned long long)wr_id);
	cr_assert_eq(wc->status, status, "completion %llu: status %s, want %s",
		     (unsigned long long)wr_id,
		     openrdma_wc_status_str(wc->status),
		     openrdma_wc_status_str(status));
	if (opcode >= 0)
		cr_assert_eq((int)wc->opcode, opcode,
			     "completion %llu: opcode %d, want %d",
			     (unsigned long long)wr_id, wc->opcode, opcode);
}

void conf_async_expect(struct conf_test *t, enum openrdma_event_type type,
		       struct openrdma_async_event *ev)
{
	struct openrdma_async_event e;
	int ret;

	ret = conf_async_wait(t->ctx, t->timeout_ms, &e);
	cr_assert_eq(ret, 0, "no async event %s: %s",
		     openrdma_event_type_str(type), openrdma_strerror(ret));
	openrdma_async_event_ack(&e);
	cr_assert_eq(e.event_type, type, "async event %s, want %s",
		     openrdma_event_type_str(e.event_type),
		     openrdma_event_type_str(type));
	if (ev)
		*ev = e;
}

void conf_async_none(struct conf_test *t)
{
	struct openrdma_async_event e;
	int ret;

	ret = conf_async_wait(t->ctx, CONF_QUIET_MS, &e);
	if (!ret)
		openrdma_async_event_ack(&e);
	cr_assert_eq(ret, -OPENRDMA_EAGAIN, "unexpected async event %s",
		     ret ? openrdma_strerror(ret) :
			   openrdma_event_type_str(e.event_type));
}

int conf_cm_next(struct conf_test *t, int timeout_ms,
		 struct openrdma_cm_event **ev)
{
	return conf_cm_wait(t->cm_ch, timeout_ms, ev);
}

void conf_cm_none(struct conf_test *t)
{
	struct openrdma_cm_event *ev;
	int ret;

	ret = conf_cm_next(t, CONF_QUIET_MS, &ev);
	if (!ret) {
		enum openrdma_cm_event_type got = ev->event;

		openrdma_cm_event_ack(ev);
		cr_assert_fail("unexpected CM event %s",
			       openrdma_cm_event_str(got));
	}
	cr_assert_eq(ret, -OPENRDMA_EAGAIN, "CM channel: %s",
		     openrdma_strerror(ret));
}

struct openrdma_cm_event *conf_cm_expect(struct conf_test *t,
					 enum openrdma_cm_event_type type)
{
	struct openrdma_cm_event *ev = NULL;
	int ret;

	ret = conf_cm_next(t, t->timeout_ms, &ev);
	cr_assert_eq(ret, 0, "no CM event %s: %s", openrdma_cm_event_str(type),
		     openrdma_strerror(ret));
	if (ev->event != type) {
		enum openrdma_cm_event_type got = ev->event;
		int status = ev->status;

		openrdma_cm_event_ack(ev);
		cr_assert_fail("CM event %s (status %d), want %s",
			       openrdma_cm_event_str(got), status,
			       openrdma_cm_event_str(type));
	}
	return ev;
}

void conf_post_expect(struct conf_test *t, struct openrdma_qp *qp,
		      struct openrdma_cq *cq, struct openrdma_send_wr *wr,
		      enum openrdma_wc_status status, int opcode)
{
	struct openrdma_wc wc;

	wr->send_flags |= OPENRDMA_SEND_SIGNALED;
	conf_post_send(qp, wr);
	conf_poll_n(t, cq, 1, &wc);
	conf_wc_expect(&wc, wr->wr_id, status, opcode);
}

void conf_state_expect(struct openrdma_qp *qp, enum openrdma_qp_state want)
{
	enum openrdma_qp_state got = conf_qp_state(qp);

	cr_assert_eq(got, want, "QP %u is in %s, want %s", qp->qp_num,
		     openrdma_qp_state_str(got), openrdma_qp_state_str(want));
}
