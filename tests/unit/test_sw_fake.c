/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
#include <criterion/criterion.h>
#include <string.h>

#include "tests/unit/test_sw_fake.h"

struct fake_log fake;
struct openrdma_context fake_ctx;
struct openrdma_pd fake_pd;

void __wrap_openrdma_cq_notify(struct openrdma_cq *cq, bool solicited);
void __wrap_openrdma_async_event_post(struct openrdma_context *ctx,
				      const struct openrdma_async_event *ev);
enum openrdma_qp_state __wrap_openrdma_qp_state_set(struct openrdma_qp *qp,
						    enum openrdma_qp_state s);

void __wrap_openrdma_cq_notify(struct openrdma_cq *cq, bool solicited)
{
	cr_assert_lt(fake.num_notify, FAKE_MAX);
	fake.notify_cq[fake.num_notify] = cq;
	fake.notify_solicited[fake.num_notify] = solicited;
	fake.num_notify++;
}

void __wrap_openrdma_async_event_post(struct openrdma_context *ctx,
				      const struct openrdma_async_event *ev)
{
	cr_assert_eq(ctx, &fake_ctx, "event posted to a foreign context");
	cr_assert_lt(fake.num_events, FAKE_MAX);
	fake.events[fake.num_events++] = *ev;
}

enum openrdma_qp_state __wrap_openrdma_qp_state_set(struct openrdma_qp *qp,
						    enum openrdma_qp_state s)
{
	fake.num_state_set++;
	return (enum openrdma_qp_state)atomic_exchange(&qp->state, (int)s);
}

void fake_reset(void)
{
	memset(&fake, 0, sizeof(fake));
}

int fake_events(enum openrdma_event_type type)
{
	int i, n = 0;

	for (i = 0; i < fake.num_events; i++)
		n += fake.events[i].event_type == type;
	return n;
}

static int fake_execute(struct sw_qp *sqp, struct sw_send_wqe *wqe,
			const struct iovec *iov, int iovcnt, uint64_t len)
{
	struct fake_qp *fq = openrdma_container_of(sqp, struct fake_qp, sw);

	fq->executed++;
	if (fq->next_status == SW_EXEC_RNR)
		wqe->rnr_timer = fq->rnr_timer;
	return fq->next_status;
}

static int fake_schedule(struct sw_qp *sqp, uint64_t deadline)
{
	struct fake_qp *fq = openrdma_container_of(sqp, struct fake_qp, sw);

	fq->scheduled = deadline;
	return 0;
}

const struct sw_qp_ops fake_qp_ops = {
	.execute = fake_execute,
	.schedule = fake_schedule,
};

void fake_cq_init(struct fake_cq *cq, int cqe)
{
	memset(cq, 0, sizeof(*cq));
	cq->cq.obj.ctx = &fake_ctx;
	cq->cq.cqe = cqe;
	cr_assert_eq(sw_cq_init(&cq->sw, &cq->cq, cqe), 0);
}

void fake_cq_fini(struct fake_cq *cq)
{
	sw_cq_fini(&cq->sw);
}

void fake_qp_init(struct fake_qp *fq, enum openrdma_qp_type type,
		  struct sw_keymap *keymap, struct fake_cq *cq,
		  struct sw_srq *srq, uint32_t wr, uint32_t sge)
{
	static uint32_t qpn = 100;
	struct sw_qp_init init = {
		.ops = &fake_qp_ops,
		.keymap = keymap,
		.send_cq = &cq->sw,
		.recv_cq = &cq->sw,
		.srq = srq,
		.max_msg_size = type == OPENRDMA_QPT_UD ? 4096 : 1u << 31,
		.rnr_scale = 100,
	};

	memset(fq, 0, sizeof(*fq));
	fq->qp.obj.ctx = &fake_ctx;
	fq->qp.pd = &fake_pd;
	fq->qp.qp_num = qpn++;
	fq->qp.qp_type = type;
	fq->qp.send_cq = &cq->cq;
	fq->qp.recv_cq = &cq->cq;
	fq->qp.cap.max_send_wr = wr;
	fq->qp.cap.max_recv_wr = srq ? 0 : wr;
	fq->qp.cap.max_send_sge = sge;
	fq->qp.cap.max_recv_sge = srq ? 0 : sge;
	fq->qp.cap.max_inline_data = 64;
	fq->next_status = OPENRDMA_WC_SUCCESS;
	fq->rnr_timer = 1; /* 10 us */
	cr_assert_eq(sw_qp_init(&fq->sw, &fq->qp, &init), 0);
}

void fake_qp_fini(struct fake_qp *fq)
{
	sw_qp_fini(&fq->sw);
}

void fake_qp_to(struct fake_qp *fq, enum openrdma_qp_state state)
{
	static const enum openrdma_qp_state path[] = { OPENRDMA_QPS_INIT,
						       OPENRDMA_QPS_RTR,
						       OPENRDMA_QPS_RTS };
	struct openrdma_qp_attr attr = { 0 };
	size_t i;

	for (i = 0; i < sizeof(path) / sizeof(path[0]); i++) {
		memset(&attr, 0, sizeof(attr));
		attr.qp_state = path[i];
		attr.qp_access_flags = OPENRDMA_ACCESS_REMOTE_WRITE |
				       OPENRDMA_ACCESS_REMOTE_READ |
				       OPENRDMA_ACCESS_REMOTE_ATOMIC;
		attr.qkey = 0x1234;
		attr.min_rnr_timer = 1;
		attr.rnr_retry = 2;
		cr_assert_eq(sw_qp_modify(&fq->sw, &attr,
					  OPENRDMA_QP_STATE |
						  OPENRDMA_QP_ACCESS_FLAGS |
						  OPENRDMA_QP_QKEY |
						  OPENRDMA_QP_MIN_RNR_TIMER |
						  OPENRDMA_QP_RNR_RETRY),
			     0);
		atomic_store(&fq->qp.state, (int)path[i]);
		if (path[i] == state)
			return;
	}
}

struct openrdma_wc fake_poll1(struct fake_cq *cq)
{
	struct openrdma_wc wc;

	cr_assert_eq(sw_cq_poll(&cq->sw, 1, &wc), 1, "no completion");
	return wc;
}

void fake_poll0(struct fake_cq *cq)
{
	struct openrdma_wc wc;

	cr_assert_eq(sw_cq_poll(&cq->sw, 1, &wc), 0, "unexpected completion");
}
