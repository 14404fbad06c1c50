/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Faults: a peer process killed in the middle of a transfer, a peer that
 * goes silent (stopped), and a killed peer of an idle QP.  The surviving
 * side's QP must reach ERR with every outstanding work request completed
 * (the oldest RETRY_EXC_ERR, the rest WR_FLUSH_ERR), with DISCONNECTED
 * and QP_FATAL, within a second of the fault being detectable.  Also when
 * a busy poller reads the connection, which the progress thread then no
 * longer watches (tcp_poll.c): the poller sees the end in its recv(), and
 * a poller that stopped has its connection taken back.
 */
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "transports/tcp/tcp.h"
#include "tt.h"

#define BIG (1u << 20)
#define WRITES 200
#define RECVS 8
#define DETECT_MS 1000

struct server_info {
	struct sockaddr_storage addr;
	uint64_t buf;
	uint32_t rkey;
};

/*
 * The peer process: accepts one connection and waits to be killed.  It
 * reports failures by its exit status, never through Criterion, whose
 * worker it is not.
 */
static void serve(int wfd)
{
	struct openrdma_qp_init_attr init = {
		.qp_type = OPENRDMA_QPT_RC,
		.cap = { .max_send_wr = 16,
			 .max_recv_wr = RECVS,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct openrdma_qp_attr attr = {
		.qp_state = OPENRDMA_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = OPENRDMA_ACCESS_REMOTE_WRITE |
				   OPENRDMA_ACCESS_REMOTE_READ,
	};
	struct openrdma_cm_id *lid, *id;
	struct openrdma_recv_wr wr, *bad;
	struct openrdma_cm_event *ev;
	struct openrdma_context *ctx;
	struct openrdma_device *dev;
	struct openrdma_port_attr port;
	struct openrdma_cm_channel *ch;
	/* all of it goes down the pipe, padding included */
	struct server_info info = { 0 };
	struct openrdma_sge sge;
	struct openrdma_qp *qp;
	struct openrdma_pd *pd;
	struct openrdma_cq *cq;
	struct openrdma_mr *mr;
	uint8_t *buf = malloc(BIG);
	int i;

	if (!buf || openrdma_device_find("tcp0", &dev) ||
	    openrdma_device_open(dev, &ctx) || openrdma_pd_alloc(ctx, &pd) ||
	    openrdma_cq_create(ctx, 64, NULL, NULL, 0, &cq) ||
	    openrdma_mr_reg(pd, buf, BIG, TT_ACCESS, &mr) ||
	    openrdma_cm_channel_create(ctx, &ch) ||
	    openrdma_port_query(ctx, 1, &port))
		_exit(2);
	init.send_cq = cq;
	init.recv_cq = cq;
	if (openrdma_qp_create(pd, &init, &qp) ||
	    openrdma_qp_modify(qp, &attr,
			       OPENRDMA_QP_STATE | OPENRDMA_QP_PKEY_INDEX |
				       OPENRDMA_QP_PORT |
				       OPENRDMA_QP_ACCESS_FLAGS))
		_exit(3);
	sge = (struct openrdma_sge){ (uintptr_t)buf, BIG, mr->lkey };
	wr = (struct openrdma_recv_wr){ .sg_list = &sge, .num_sge = 1 };
	for (i = 0; i < RECVS; i++)
		if (openrdma_qp_post_recv(qp, &wr, &bad))
			_exit(4);
	info.addr = port.addr;
	if (info.addr.ss_family == AF_INET)
		((struct sockaddr_in *)&info.addr)->sin_port = 0;
	else
		((struct sockaddr_in6 *)&info.addr)->sin6_port = 0;
	if (openrdma_cm_id_create(ctx, ch, NULL, OPENRDMA_PS_TCP, &lid) ||
	    openrdma_cm_listen(lid, (struct sockaddr *)&info.addr, 1) ||
	    openrdma_cm_local_addr(lid, &info.addr))
		_exit(5);
	info.buf = (uintptr_t)buf;
	info.rkey = mr->rkey;
	if (write(wfd, &info, sizeof(info)) != sizeof(info))
		_exit(6);
	if (openrdma_cm_event_get(ch, &ev))
		_exit(7);
	id = ev->id;
	openrdma_cm_event_ack(ev);
	if (openrdma_cm_accept(id, qp, NULL))
		_exit(8);
	for (;;)
		pause();
}

struct fault {
	pid_t pid;
	struct tt_side c;
	struct server_info info;
};

static void start(struct fault *ft)
{
	struct openrdma_cm_event *ev;
	int pfd[2];

	cr_assert_eq(pipe(pfd), 0);
	ft->pid = fork();
	cr_assert_geq(ft->pid, 0);
	if (!ft->pid) {
		/* never outlive a test that failed before killing us */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(pfd[0]);
		serve(pfd[1]);
	}
	close(pfd[1]);
	cr_assert_eq(read(pfd[0], &ft->info, sizeof(ft->info)),
		     (ssize_t)sizeof(ft->info), "the peer did not start");
	close(pfd[0]);
	tt_open(&ft->c, "tcp0", BIG, TT_ACCESS, 0x11);
	tt_qp(&ft->c, OPENRDMA_QPT_RC);
	cr_assert_eq(openrdma_cm_id_create(ft->c.ctx, ft->c.ch, NULL,
					   OPENRDMA_PS_TCP, &ft->c.id),
		     0);
	cr_assert_eq(openrdma_cm_connect(ft->c.id, ft->c.qp,
					 (struct sockaddr *)&ft->info.addr,
					 NULL),
		     0);
	ev = tt_cm_expect(&ft->c, OPENRDMA_CM_EVENT_ESTABLISHED, TT_TIMEOUT_MS);
	openrdma_cm_event_ack(ev);
}

static void stop(struct fault *ft)
{
	kill(ft->pid, SIGKILL);
	kill(ft->pid, SIGCONT);
	waitpid(ft->pid, NULL, 0);
	tt_close(&ft->c);
}

/* DISCONNECTED, QP_FATAL and the QP in ERR, within DETECT_MS of t0. */
static void expect_events(struct fault *ft, uint64_t t0)
{
	struct openrdma_async_event ev;
	struct openrdma_cm_event *cev;

	cev = tt_cm_expect(&ft->c, OPENRDMA_CM_EVENT_DISCONNECTED,
			   (int)(t0 + DETECT_MS - tt_now_ms()) + 1);
	openrdma_cm_event_ack(cev);
	cr_assert_eq(tt_async(&ft->c, &ev, DETECT_MS), 0, "no async event");
	cr_assert_eq(ev.event_type, OPENRDMA_EVENT_QP_FATAL);
	openrdma_async_event_ack(&ev);
	cr_assert_eq(tt_qp_state(ft->c.qp), OPENRDMA_QPS_ERR);
	cr_assert_leq(tt_now_ms() - t0, DETECT_MS,
		      "%llu ms from the fault to the last report",
		      (unsigned long long)(tt_now_ms() - t0));
}

/* Every completion of n: the oldest may fail as unanswered, the rest are
 * flushed; events and state follow, all within DETECT_MS of t0. */
static void expect_down(struct fault *ft, int n, int done, uint64_t t0)
{
	struct openrdma_wc wc[WRITES + RECVS];
	int i, got, failed = 0;

	got = tt_poll(&ft->c, n - done, wc, DETECT_MS);
	cr_assert_eq(got, n - done, "%d of %d outstanding completed in %d ms",
		     got, n - done, DETECT_MS);
	for (i = 0; i < got; i++) {
		if (wc[i].status == OPENRDMA_WC_SUCCESS) {
			cr_assert_eq(failed, 0, "success after a failure");
			continue;
		}
		if (!failed++ && wc[i].status == OPENRDMA_WC_RETRY_EXC_ERR)
			continue;
		cr_assert_eq(wc[i].status, OPENRDMA_WC_WR_FLUSH_ERR,
			     "completion %d: %s", i,
			     openrdma_wc_status_str(wc[i].status));
	}
	cr_assert_gt(failed, 0, "nothing failed");
	expect_events(ft, t0);
}

Test(tcp_fault, peer_killed_mid_transfer, .timeout = 30)
{
	struct openrdma_wc wc;
	struct fault ft;
	uint64_t t0;
	int i, done;

	start(&ft);
	/* one write went through; the peer then stops reading, so that the
	 * rest is surely in flight (socket buffers full, a frame half
	 * placed) when it dies, however fast or slow this build is */
	tt_post(&ft.c, OPENRDMA_WR_RDMA_WRITE, 0, 0, BIG, ft.info.buf,
		ft.info.rkey);
	done = tt_poll(&ft.c, 1, &wc, TT_TIMEOUT_MS);
	cr_assert_eq(done, 1);
	cr_assert_eq(wc.status, OPENRDMA_WC_SUCCESS);
	kill(ft.pid, SIGSTOP);
	for (i = 1; i < WRITES; i++)
		tt_post(&ft.c, OPENRDMA_WR_RDMA_WRITE, (uint64_t)i, 0, BIG,
			ft.info.buf, ft.info.rkey);
	usleep(100000);
	kill(ft.pid, SIGKILL);
	t0 = tt_now_ms();
	expect_down(&ft, WRITES, done, t0);
	stop(&ft);
}

Test(tcp_fault, silent_peer_is_dead_after_keepalive, .timeout = 30)
{
	struct fault ft;
	uint64_t t0;

	setenv("OPENRDMA_TCP_KEEPALIVE_MS", "400", 1);
	start(&ft);
	tt_post_recv(&ft.c, 1, 0, 64);
	kill(ft.pid, SIGSTOP);
	/* silence becomes detectable once keepalive_ms passed */
	t0 = tt_now_ms() + 400;
	expect_down(&ft, 1, 0, t0);
	stop(&ft);
}

Test(tcp_fault, killed_peer_of_an_idle_qp, .timeout = 30)
{
	struct openrdma_async_event ev;
	struct openrdma_cm_event *cev;
	struct openrdma_wc wc;
	struct fault ft;
	uint64_t t0;

	start(&ft);
	kill(ft.pid, SIGKILL);
	t0 = tt_now_ms();
	cev = tt_cm_expect(&ft.c, OPENRDMA_CM_EVENT_DISCONNECTED, DETECT_MS);
	openrdma_cm_event_ack(cev);
	/* nothing was outstanding: the QP gives up within its retry time,
	 * at most a second */
	cr_assert_eq(tt_async(&ft.c, &ev, DETECT_MS), 0, "no async event");
	cr_assert_eq(ev.event_type, OPENRDMA_EVENT_QP_FATAL);
	openrdma_async_event_ack(&ev);
	cr_assert_eq(tt_qp_state(ft.c.qp), OPENRDMA_QPS_ERR);
	cr_assert_leq(tt_now_ms() - t0, DETECT_MS);
	/* what is posted now is flushed */
	tt_post(&ft.c, OPENRDMA_WR_SEND, 9, 0, 8, 0, 0);
	cr_assert_eq(tt_poll(&ft.c, 1, &wc, DETECT_MS), 1);
	cr_assert_eq(wc.status, OPENRDMA_WC_WR_FLUSH_ERR);
	stop(&ft);
}

Test(tcp_fault, send_to_a_killed_peer_fails_unanswered, .timeout = 30)
{
	struct openrdma_cm_event *cev;
	struct openrdma_wc wc;
	struct fault ft;

	start(&ft);
	kill(ft.pid, SIGKILL);
	cev = tt_cm_expect(&ft.c, OPENRDMA_CM_EVENT_DISCONNECTED, DETECT_MS);
	openrdma_cm_event_ack(cev);
	/* right away, as an RC initiator would see it: no answer */
	tt_post(&ft.c, OPENRDMA_WR_SEND, 9, 0, 8, 0, 0);
	cr_assert_eq(tt_poll(&ft.c, 1, &wc, DETECT_MS), 1);
	cr_assert_eq(wc.status, OPENRDMA_WC_RETRY_EXC_ERR, "%s",
		     openrdma_wc_status_str(wc.status));
	cr_assert_eq(tt_qp_state(ft.c.qp), OPENRDMA_QPS_ERR);
	stop(&ft);
}

Test(tcp_fault, killed_peer_of_a_busy_poller, .timeout = 30)
{
	struct fault ft;
	uint64_t t0;

	struct openrdma_wc wc;
	int got;

	start(&ft);
	tt_post_recv(&ft.c, 1, 0, 64);
	tt_hand_to_poller(&ft.c, &ft.c, ft.info.buf, ft.info.rkey);
	kill(ft.pid, SIGKILL);
	t0 = tt_now_ms();
	/* the poller reads on, without a pause, and meets the end */
	do {
		got = openrdma_cq_poll(ft.c.cq, 1, &wc);
		cr_assert_geq(got, 0);
	} while (!got && tt_now_ms() < t0 + DETECT_MS);
	cr_assert_eq(got, 1, "nothing completed in %d ms", DETECT_MS);
	cr_assert_eq(wc.wr_id, 1);
	cr_assert_eq(wc.status, OPENRDMA_WC_WR_FLUSH_ERR);
	expect_events(&ft, t0);
	stop(&ft);
}

Test(tcp_fault, killed_peer_of_a_poller_that_stopped, .timeout = 30)
{
	struct fault ft;
	uint64_t t0;

	start(&ft);
	tt_hand_to_poller(&ft.c, &ft.c, ft.info.buf, ft.info.rkey);
	/* no more polls: the progress thread takes the connection back
	 * within a few milliseconds, watches it again and notices */
	t0 = tt_now_ms();
	while (atomic_load(&to_tcp_ctx(ft.c.ctx)->app_count) &&
	       tt_now_ms() < t0 + DETECT_MS)
		usleep(1000);
	cr_assert_eq(atomic_load(&to_tcp_ctx(ft.c.ctx)->app_count), 0,
		     "the connection was not taken back");
	kill(ft.pid, SIGKILL);
	t0 = tt_now_ms();
	expect_events(&ft, t0);
	stop(&ft);
}
