/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Completion queues: signaled and unsignaled sends, sq_sig_all, overrun
 * (CQ_ERR, QP to ERR, -EOVERFLOW after the queued entries), and completion
 * channels (arm, event, ack, solicited-only, non-blocking get).
 */
#include "conf.h"
#include "conf_sys.h"

#define SEED_A 1
#define SEED_B 2

/* Posts n zero-length writes; wr_id i is signaled when signaled(i). */
static void writes(struct openrdma_qp *qp, int n, int every)
{
	struct openrdma_send_wr wr = { .opcode = OPENRDMA_WR_RDMA_WRITE };
	int i;

	for (i = 0; i < n; i++) {
		wr.wr_id = (uint64_t)i;
		wr.send_flags =
			every && i % every == 0 ? OPENRDMA_SEND_SIGNALED : 0;
		conf_post_send(qp, &wr);
	}
}

CONF_TEST(cq, unsignaled_sends_complete_silently)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct openrdma_wc wc[4];
	struct conf_rc rc;
	int i;

	conf_rc_connect(t, &rc, NULL);
	writes(rc.qp, 10, 3); /* 0, 3, 6 and 9 signaled */
	conf_poll_n(t, rc.scq, 4, wc);
	for (i = 0; i < 4; i++)
		conf_wc_expect(&wc[i], 3 * (uint64_t)i, OPENRDMA_WC_SUCCESS,
			       OPENRDMA_WC_RDMA_WRITE);
}

CONF_TEST(cq, sq_sig_all)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct conf_rc_opts opts = { .sq_sig_all = 1 };
	struct openrdma_wc wc[5];
	struct conf_rc rc;
	int i;

	conf_rc_connect(t, &rc, &opts);
	cr_assert_eq(rc.qp->sq_sig_all, 1);
	writes(rc.qp, 5, 0); /* none asks to be signaled */
	conf_poll_n(t, rc.scq, 5, wc);
	for (i = 0; i < 5; i++)
		conf_wc_expect(&wc[i], (uint64_t)i, OPENRDMA_WC_SUCCESS,
			       OPENRDMA_WC_RDMA_WRITE);
}

CONF_TEST(cq, overrun)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct conf_rc_opts opts = { .cqe = 4, .cap.max_send_wr = 64 };
	struct openrdma_async_event ev;
	struct openrdma_wc wc[80];
	struct conf_rc rc;
	int cap, got = 0, ret, i;

	conf_rc_connect(t, &rc, &opts);
	cap = rc.scq->cqe;
	if ((uint32_t)cap + 1 > rc.qp->cap.max_send_wr)
		cr_skip_test("%s: a CQ of 4 entries was granted %d, more than "
			     "the send queue holds",
			     t->ifname, cap);
	writes(rc.qp, cap + 1, 1);
	conf_async_expect(t, OPENRDMA_EVENT_CQ_ERR, &ev);
	cr_assert_eq(ev.element.cq, rc.scq, "CQ_ERR names another CQ");
	conf_state_expect(rc.qp, OPENRDMA_QPS_ERR);
	/* the entries queued before the overrun, then the overrun */
	do {
		ret = openrdma_cq_poll(rc.scq, 80 - got, wc + got);
		if (ret > 0)
			got += ret;
	} while (ret > 0 && got < 80);
	cr_assert_eq(ret, -OPENRDMA_EOVERFLOW,
		     "poll after draining: %s, want -EOVERFLOW",
		     openrdma_strerror(ret));
	cr_assert_eq(got, cap, "%d entries before the overrun, want %d", got,
		     cap);
	for (i = 0; i < got; i++)
		conf_wc_expect(&wc[i], (uint64_t)i, OPENRDMA_WC_SUCCESS,
			       OPENRDMA_WC_RDMA_WRITE);
	CONF_ERR(openrdma_cq_poll(rc.scq, 1, wc), OPENRDMA_EOVERFLOW);
}

static bool readable(int fd, int timeout_ms)
{
	return conf_wait_fd(fd, timeout_ms) == 0;
}

/* A pair whose side-A CQs report to a fresh, non-blocking channel. */
static struct conf_test *channel_pair(struct conf_rc *rc,
				      struct openrdma_comp_channel **ch)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct conf_rc_opts opts = { 0 };

	CONF_OK(openrdma_comp_channel_create(t->ctx, ch));
	conf_track(t, CONF_K_COMP_CH, *ch);
	CONF_OK(conf_set_nonblock((*ch)->fd));
	opts.channel = *ch;
	conf_rc_connect(t, rc, &opts);
	return t;
}

/* Takes one notification and checks that it names cq. */
static void event_expect(struct conf_test *t, struct openrdma_comp_channel *ch,
			 struct openrdma_cq *cq)
{
	struct openrdma_cq *got;
	void *context;
	uint32_t acked = cq->comp_events_completed;

	cr_assert(readable(ch->fd, t->timeout_ms),
		  "the channel's fd did not become readable");
	CONF_OK(openrdma_cq_event_get(ch, &got, &context));
	cr_assert_eq(got, cq, "notification for another CQ");
	cr_assert_eq(context, cq->cq_context, "wrong cq_context");
	openrdma_cq_events_ack(got, 1);
	cr_assert_eq(cq->comp_events_completed, acked + 1,
		     "comp_events_completed %u after one ack, want %u",
		     cq->comp_events_completed, acked + 1);
}

static void no_event(struct openrdma_comp_channel *ch)
{
	struct openrdma_cq *cq;
	void *context;

	cr_assert(!readable(ch->fd, CONF_QUIET_MS),
		  "the channel signals without an armed CQ");
	CONF_ERR(openrdma_cq_event_get(ch, &cq, &context), OPENRDMA_EAGAIN);
}

CONF_TEST(cq, channel_notifies_once_per_arm)
{
	struct openrdma_comp_channel *ch;
	struct openrdma_wc wc;
	struct conf_rc rc;
	struct conf_test *t = channel_pair(&rc, &ch);

	/* not armed: a completion signals nothing */
	writes(rc.qp, 1, 1);
	conf_poll_n(t, rc.scq, 1, &wc);
	no_event(ch);

	CONF_OK(openrdma_cq_req_notify(rc.scq, 0));
	writes(rc.qp, 1, 1);
	event_expect(t, ch, rc.scq);
	conf_poll_n(t, rc.scq, 1, &wc);
	conf_wc_expect(&wc, 0, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_RDMA_WRITE);

	/* the arm was used up */
	writes(rc.qp, 1, 1);
	conf_poll_n(t, rc.scq, 1, &wc);
	no_event(ch);

	/* re-armed, it signals again; completions already queued count */
	writes(rc.qp, 1, 1);
	conf_poll_n(t, rc.scq, 1, &wc);
	CONF_OK(openrdma_cq_req_notify(rc.scq, 0));
	writes(rc.qp, 1, 1);
	event_expect(t, ch, rc.scq);
	conf_poll_n(t, rc.scq, 1, &wc);
}

CONF_TEST(cq, channel_solicited_only)
{
	struct openrdma_comp_channel *ch;
	struct conf_wire_send wr = { .opcode = OPENRDMA_WR_SEND,
				     .flags = OPENRDMA_SEND_SIGNALED,
				     .num_sge = 1 };
	struct openrdma_wc wc[2];
	struct conf_mem *m;
	struct conf_pmr src;
	struct conf_rc rc;
	struct conf_test *t = channel_pair(&rc, &ch);

	conf_require_cap(t, OPENRDMA_DEVICE_SOLICITED,
			 "solicited-only CQ arming");
	m = conf_mem_new(t, t->pd, 128, OPENRDMA_ACCESS_LOCAL_WRITE, SEED_A);
	conf_post_recv(rc.qp, 10, m, 0, 64);
	conf_post_recv(rc.qp, 11, m, 64, 64);
	src = conf_peer_mr_reg(t, t->ppd, 64, 0, SEED_B);
	wr.sge[0] = conf_psge(&src, 0, 64);
	CONF_OK(openrdma_cq_req_notify(rc.rcq, 1));

	/* an unsolicited receive does not signal */
	wr.wr_id = 1;
	CONF_OK(conf_peer_post_send(t, rc.pqp.id, &wr, 1, NULL));
	conf_poll_n(t, rc.rcq, 1, wc);
	conf_wc_expect(wc, 10, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_RECV);
	no_event(ch);

	/* a solicited one does */
	wr.wr_id = 2;
	wr.flags |= OPENRDMA_SEND_SOLICITED;
	CONF_OK(conf_peer_post_send(t, rc.pqp.id, &wr, 1, NULL));
	event_expect(t, ch, rc.rcq);
	conf_poll_n(t, rc.rcq, 1, wc);
	conf_wc_expect(wc, 11, OPENRDMA_WC_SUCCESS, OPENRDMA_WC_RECV);
	conf_peer_poll_n(t, rc.pscq, 2, wc);
}

CONF_TEST(cq, channel_solicited_only_signals_errors)
{
	struct openrdma_qp_attr attr = { .qp_state = OPENRDMA_QPS_ERR };
	struct openrdma_comp_channel *ch;
	struct openrdma_wc wc;
	struct conf_mem *m;
	struct conf_rc rc;
	struct conf_test *t = channel_pair(&rc, &ch);

	conf_require_cap(t, OPENRDMA_DEVICE_SOLICITED,
			 "solicited-only CQ arming");
	m = conf_mem_new(t, t->pd, 64, OPENRDMA_ACCESS_LOCAL_WRITE, SEED_A);
	conf_post_recv(rc.qp, 10, m, 0, 64);
	CONF_OK(openrdma_cq_req_notify(rc.rcq, 1));
	/* the flush is an error completion: it signals solicited-only arms */
	CONF_OK(openrdma_qp_modify(rc.qp, &attr, OPENRDMA_QP_STATE));
	event_expect(t, ch, rc.rcq);
	conf_poll_n(t, rc.rcq, 1, &wc);
	conf_wc_expect(&wc, 10, OPENRDMA_WC_WR_FLUSH_ERR, -1);
}
