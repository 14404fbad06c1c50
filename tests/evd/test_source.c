/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Sources: the dispatcher with fds of our own, then CQs and async events
 * of a real context on the self transport.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <criterion/criterion.h>

#include <openrdma/transport.h>

#include "tests/evd/evd_test.h"

TestSuite(evd_source, .timeout = 60);

/* ------------------------------------------------------------ fake sources */

struct fake {
	int efd;
	struct core_evd *evd;
	uint32_t seq;
	atomic_int in_handler;
	atomic_int handler_done;
	unsigned int sleep_ms;
	struct core_disp_watch *self_unwatch;
	pthread_t thread;
};

/* Reads the eventfd and queues that many source events. */
static void fake_handler(void *arg)
{
	struct fake *f = arg;
	struct trec r = { 0 };
	eventfd_t n = 0;

	f->thread = pthread_self();
	atomic_store(&f->in_handler, 1);
	if (eventfd_read(f->efd, &n))
		n = 0;
	while (n--) {
		r.seq = f->seq++;
		core_evd_enqueue(f->evd, &r);
	}
	if (f->sleep_ms)
		t_sleep_ms(f->sleep_ms);
	if (f->self_unwatch)
		core_disp_unwatch(f->self_unwatch);
	atomic_store(&f->handler_done, 1);
}

static void fake_init(struct fake *f, struct core_evd *evd)
{
	*f = (struct fake){ .evd = evd };
	f->efd = eventfd(0, EFD_NONBLOCK);
	cr_assert_geq(f->efd, 0);
}

Test(evd_source, dispatcher_starts_lazily_and_stops_with_the_last_watch)
{
	struct core_evd *evd;
	struct core_disp_watch *w;
	struct fake f;
	struct trec r;
	uint32_t i;

	cr_assert_eq(t_evd_create(CORE_EVD_STREAM_CM_MSG, 64, 0,
				  CORE_EVD_OVERFLOW_DEFAULT, &evd),
		     0);
	fake_init(&f, evd);
	cr_assert_eq(core_evd_engine_threads(), 0);
	cr_assert_eq(core_disp_watch(f.efd, fake_handler, &f, &w), 0);
	cr_assert_eq(core_evd_engine_threads(), 1);
	eventfd_write(f.efd, 10);
	for (i = 0; i < 10; i++) {
		cr_assert_eq(core_evd_wait(evd, 5000000, 0, &r, NULL), 0);
		cr_assert_eq(r.seq, i);
	}
	cr_assert_neq(f.thread, pthread_self());
	core_disp_unwatch(w);
	cr_assert_eq(core_evd_engine_threads(), 0, "joined");
	cr_assert_eq(core_disp_watch(-1, fake_handler, &f, &w),
		     -OPENRDMA_EINVAL);
	close(f.efd);
	core_evd_free(evd);
}

Test(evd_source, unwatch_waits_for_a_running_handler)
{
	struct core_evd *evd = t_sevd(8, 0);
	struct core_disp_watch *w;
	struct fake f;

	fake_init(&f, evd);
	f.sleep_ms = 100;
	cr_assert_eq(core_disp_watch(f.efd, fake_handler, &f, &w), 0);
	eventfd_write(f.efd, 1);
	while (!atomic_load(&f.in_handler))
		sched_yield();
	core_disp_unwatch(w);
	cr_assert_eq(atomic_load(&f.handler_done), 1);
	close(f.efd);
	core_evd_free(evd);
}

static void *unwatch_thread(void *arg)
{
	core_disp_unwatch(arg);
	return NULL;
}

/*
 * One thread waits in unwatch for a running handler while another removes
 * the last other watch, which stops the dispatcher: the first must not
 * stop it again.
 */
Test(evd_source, last_unwatch_while_another_waits_for_its_handler)
{
	struct core_evd *evd = t_sevd(8, 0);
	struct core_disp_watch *w, *other;
	struct fake f;
	pthread_t t;
	int efd;

	fake_init(&f, evd);
	f.sleep_ms = 200;
	efd = eventfd(0, EFD_NONBLOCK);
	cr_assert_geq(efd, 0);
	cr_assert_eq(core_disp_watch(f.efd, fake_handler, &f, &w), 0);
	cr_assert_eq(core_disp_watch(efd, fake_handler, &f, &other), 0);
	eventfd_write(f.efd, 1);
	while (!atomic_load(&f.in_handler))
		sched_yield();
	cr_assert_eq(pthread_create(&t, NULL, unwatch_thread, w), 0);
	t_sleep_ms(50); /* it is waiting for the handler */
	core_disp_unwatch(other);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_eq(atomic_load(&f.handler_done), 1);
	cr_assert_eq(t_engine_threads_settle(2000), 0);
	close(efd);
	close(f.efd);
	core_evd_free(evd);
}

Test(evd_source, unwatch_from_its_own_handler)
{
	struct core_evd *evd = t_sevd(8, 0);
	struct core_disp_watch *w;
	int before = t_process_threads_base();
	struct fake f;

	fake_init(&f, evd);
	cr_assert_eq(core_disp_watch(f.efd, fake_handler, &f, &w), 0);
	f.self_unwatch = w;
	eventfd_write(f.efd, 1);
	while (!atomic_load(&f.handler_done))
		t_sleep_ms(1);
	cr_assert_eq(t_engine_threads_settle(2000), 0);
	/* it cannot join itself: another does, here or at the last close */
	cr_assert_eq(core_evd_reap(), 1, "the dispatcher was left detached");
	cr_assert_eq(t_process_threads_settle(before, 2000), before, "joined");
	close(f.efd);
	core_evd_free(evd);
}

static void count_handler(void *arg)
{
	atomic_int *hits = arg;

	atomic_fetch_add(hits, 1);
}

Test(evd_source, several_watches_share_one_thread)
{
	struct core_disp_watch *w[3];
	atomic_int hits[3] = { 0 };
	int efd[3], i;

	for (i = 0; i < 3; i++) {
		efd[i] = eventfd(0, EFD_NONBLOCK);
		cr_assert_eq(core_disp_watch(efd[i], count_handler, &hits[i],
					     &w[i]),
			     0);
	}
	cr_assert_eq(core_evd_engine_threads(), 1);
	eventfd_write(efd[1], 1); /* level-triggered: runs until unwatched */
	while (atomic_load(&hits[1]) < 3)
		sched_yield();
	cr_assert_eq(atomic_load(&hits[0]), 0);
	cr_assert_eq(atomic_load(&hits[2]), 0);
	for (i = 0; i < 3; i++) {
		core_disp_unwatch(w[i]);
		close(efd[i]);
	}
	cr_assert_eq(core_evd_engine_threads(), 0);
}

struct ovf_seen {
	struct core_evd *async;
	atomic_int reports;
	pthread_t thread;
};

/* What a front end does: post an "EVD overflow" event to its async EVD. */
static void post_overflow_event(struct core_evd *evd, void *arg)
{
	struct ovf_seen *o = arg;
	struct trec r = { .producer = 0xffff };

	o->thread = pthread_self();
	atomic_fetch_add(&o->reports, 1);
	cr_assert_eq(core_evd_enqueue(o->async, &r), 0);
}

Test(evd_source, overflow_reported_from_the_dispatcher)
{
	struct ovf_seen o = { 0 };
	struct core_evd_attr attr = {
		.streams = CORE_EVD_STREAM_CM_MSG,
		.rec_size = sizeof(struct trec),
		.capacity = 4,
		.overflow_fn = post_overflow_event,
		.overflow_arg = &o,
	};
	struct core_disp_watch *w;
	struct core_evd_info info;
	struct core_evd *evd;
	struct fake f;
	struct trec r;

	cr_assert_eq(t_evd_create(CORE_EVD_STREAM_ASYNC_AFF, 8, 0,
				  CORE_EVD_OVERFLOW_DEFAULT, &o.async),
		     0);
	cr_assert_eq(core_evd_create(&attr, &evd), 0);
	fake_init(&f, evd);
	cr_assert_eq(core_disp_watch(f.efd, fake_handler, &f, &w), 0);
	eventfd_write(f.efd, 10);
	cr_assert_eq(core_evd_wait(o.async, 5000000, 0, &r, NULL), 0);
	cr_assert_eq(r.producer, 0xffff);
	cr_assert_eq(atomic_load(&o.reports), 1);
	cr_assert_neq(o.thread, pthread_self());
	/* the report comes at the fifth event: let the handler queue the rest */
	while (!atomic_load(&f.handler_done))
		t_sleep_ms(1);
	core_evd_query(evd, &info);
	cr_assert(info.overflowed);
	cr_assert_eq(info.lost, 6);
	core_disp_unwatch(w);
	close(f.efd);
	core_evd_free(evd);
	core_evd_free(o.async);
}

/* ------------------------------------------------------------ self0 */

struct self_res {
	struct openrdma_device *dev;
	struct openrdma_context *ctx;
	struct openrdma_pd *pd;
	struct openrdma_comp_channel *ch;
	struct openrdma_cq *cq;
	struct openrdma_qp *qp;
	struct openrdma_mr *mr;
	char buf[64];
};

static struct self_res res;

static void self_open(void)
{
	struct openrdma_qp_init_attr qia = {
		.qp_type = OPENRDMA_QPT_RC,
		.cap = { .max_send_wr = 16,
			 .max_recv_wr = 64,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct openrdma_qp_attr qa = {
		.qp_state = OPENRDMA_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = OPENRDMA_ACCESS_REMOTE_WRITE,
	};
	int ret;

	ret = openrdma_device_find("self0", &res.dev);
	if (ret) {
		fprintf(stderr, "self0: %s\n", openrdma_strerror(ret));
		cr_skip_test("no self0 interface");
	}
	cr_assert_eq(openrdma_device_open(res.dev, &res.ctx), 0);
	cr_assert_eq(openrdma_pd_alloc(res.ctx, &res.pd), 0);
	cr_assert_eq(openrdma_comp_channel_create(res.ctx, &res.ch), 0);
	cr_assert_eq(openrdma_cq_create(res.ctx, 128, NULL, res.ch, 0, &res.cq),
		     0);
	cr_assert_eq(openrdma_mr_reg(res.pd, res.buf, sizeof(res.buf),
				     OPENRDMA_ACCESS_LOCAL_WRITE, &res.mr),
		     0);
	qia.send_cq = res.cq;
	qia.recv_cq = res.cq;
	cr_assert_eq(openrdma_qp_create(res.pd, &qia, &res.qp), 0);
	cr_assert_eq(openrdma_qp_modify(res.qp, &qa,
					OPENRDMA_QP_STATE |
						OPENRDMA_QP_PKEY_INDEX |
						OPENRDMA_QP_PORT |
						OPENRDMA_QP_ACCESS_FLAGS),
		     0);
}

static void self_close(void)
{
	if (!res.ctx)
		return;
	cr_assert_eq(openrdma_qp_destroy(res.qp), 0);
	cr_assert_eq(openrdma_mr_dereg(res.mr), 0);
	cr_assert_eq(openrdma_cq_destroy(res.cq), 0);
	cr_assert_eq(openrdma_comp_channel_destroy(res.ch), 0);
	cr_assert_eq(openrdma_pd_dealloc(res.pd), 0);
	cr_assert_eq(openrdma_context_close(res.ctx), 0);
}

/* n receives, then ERR: n flushed completions, wr_id 0..n-1, in order. */
static void self_flush(uint32_t n)
{
	struct openrdma_qp_attr qa = { .qp_state = OPENRDMA_QPS_ERR };
	struct openrdma_sge sge = { (uintptr_t)res.buf, sizeof(res.buf),
				    res.mr->lkey };
	struct openrdma_recv_wr wr = { .sg_list = &sge, .num_sge = 1 };
	struct openrdma_recv_wr *bad;
	uint32_t i;

	for (i = 0; i < n; i++) {
		wr.wr_id = i;
		cr_assert_eq(openrdma_qp_post_recv(res.qp, &wr, &bad), 0);
	}
	cr_assert_eq(openrdma_qp_modify(res.qp, &qa, OPENRDMA_QP_STATE), 0);
}

static int wc_to_rec(void *arg, const struct openrdma_wc *wc, void *rec)
{
	struct trec *r = rec;

	cr_assert_eq(arg, &res);
	r->producer = wc->status;
	r->seq = (uint32_t)wc->wr_id;
	r->stamp_ns = 0;
	return 0;
}

static struct core_evd *dto_evd(size_t cap, uint32_t flags)
{
	struct core_evd *evd;

	cr_assert_eq(t_evd_create(CORE_EVD_STREAM_DTO, cap, flags,
				  CORE_EVD_OVERFLOW_DEFAULT, &evd),
		     0);
	cr_assert_eq(core_evd_cq_bind(evd, res.cq, wc_to_rec, &res), 0);
	return evd;
}

struct flusher {
	uint32_t n;
	unsigned int ms;
};

static void *flush_later(void *arg)
{
	struct flusher *f = arg;

	t_sleep_ms(f->ms);
	self_flush(f->n);
	return NULL;
}

Test(evd_source, cq_completions_wake_a_blocked_wait, .init = self_open,
     .fini = self_close)
{
	struct core_evd *evd = dto_evd(64, 0);
	struct flusher fl = { 8, 50 };
	struct core_evd_info info;
	pthread_t tid;
	struct trec r;
	uint32_t i;

	cr_assert_eq(core_evd_cq_bind(evd, res.cq, wc_to_rec, &res),
		     -OPENRDMA_EEXIST);
	core_evd_query(evd, &info);
	cr_assert_eq(info.sources, 1);
	/* pull mode: no dispatcher, the waiter sleeps on the channel */
	cr_assert_eq(core_evd_engine_threads(), 0);
	pthread_create(&tid, NULL, flush_later, &fl);
	for (i = 0; i < 8; i++) {
		cr_assert_eq(core_evd_wait(evd, 5000000, 0, &r, NULL), 0);
		cr_assert_eq(r.producer, OPENRDMA_WC_WR_FLUSH_ERR);
		cr_assert_eq(r.seq, i);
	}
	pthread_join(tid, NULL);
	cr_assert_eq(core_evd_engine_threads(), 0);
	cr_assert_eq(core_evd_dequeue(evd, &r), -OPENRDMA_EAGAIN);
	cr_assert_eq(core_evd_cq_unbind(evd, res.cq), 0);
	cr_assert_eq(core_evd_cq_unbind(evd, res.cq), -OPENRDMA_ENOENT);
	core_evd_free(evd);
}

Test(evd_source, cq_threshold_wait, .init = self_open, .fini = self_close)
{
	struct core_evd *evd = dto_evd(64, 0);
	struct flusher fl = { 6, 30 };
	pthread_t tid;
	struct trec r;
	size_t nmore;

	pthread_create(&tid, NULL, flush_later, &fl);
	cr_assert_eq(core_evd_wait(evd, 5000000, 6, &r, &nmore), 0);
	cr_assert_eq(r.seq, 0);
	cr_assert_eq(nmore, 5);
	pthread_join(tid, NULL);
	core_evd_free(evd);
}

Test(evd_source, cq_dequeue_polls_the_cq, .init = self_open, .fini = self_close)
{
	struct core_evd *evd = dto_evd(64, 0);
	struct trec r[8];

	self_flush(5);
	cr_assert_eq(core_evd_dequeue_n(evd, r, 8), 5);
	cr_assert_eq(r[4].seq, 4);
	core_evd_free(evd);
}

Test(evd_source, cq_fd_readable_while_completions_are_queued, .init = self_open,
     .fini = self_close)
{
	struct core_evd *evd = dto_evd(4, CORE_EVD_FD);
	struct core_evd_info info;
	struct pollfd pfd;
	struct trec r;
	uint32_t i;

	core_evd_query(evd, &info);
	cr_assert_eq(core_evd_engine_threads(), 1, "fd: push mode");
	cr_assert_not(t_readable(info.fd));
	/* more than the ring holds: the rest waits in the CQ */
	self_flush(10);
	pfd = (struct pollfd){ .fd = info.fd, .events = POLLIN };
	cr_assert_eq(poll(&pfd, 1, 5000), 1);
	for (i = 0; i < 10; i++) {
		cr_assert(t_readable(info.fd), "%u left but not readable",
			  10 - i);
		cr_assert_eq(core_evd_dequeue(evd, &r), 0);
		cr_assert_eq(r.seq, i);
	}
	cr_assert_not(t_readable(info.fd));
	core_evd_query(evd, &info);
	cr_assert_not(info.overflowed, "a full ring is not an overflow");
	core_evd_free(evd);
	cr_assert_eq(core_evd_engine_threads(), 0);
}

static void cq_drain_cb(struct core_evd *evd, void *arg)
{
	atomic_size_t *n = arg;
	struct trec r;

	while (core_evd_dequeue(evd, &r) == 0)
		atomic_fetch_add(n, 1);
}

Test(evd_source, cq_completions_run_callbacks, .init = self_open,
     .fini = self_close)
{
	struct core_evd *evd = dto_evd(64, 0);
	atomic_size_t n = 0;
	int i;

	cr_assert_eq(core_evd_callback_attach(evd, cq_drain_cb, &n, 0), 0);
	self_flush(20);
	for (i = 0; i < 5000 && atomic_load(&n) < 20; i++)
		t_sleep_ms(1);
	cr_assert_eq(atomic_load(&n), 20);
	cr_assert_eq(core_evd_callback_detach(evd), 0);
	cr_assert_eq(core_evd_engine_threads(), 0, "back to pull mode");
	core_evd_free(evd);
}

Test(evd_source, cq_channel_serves_one_evd, .init = self_open,
     .fini = self_close)
{
	struct core_evd *a = dto_evd(8, 0), *b;
	struct openrdma_cq *cq2;

	cr_assert_eq(t_evd_create(CORE_EVD_STREAM_DTO, 8, 0,
				  CORE_EVD_OVERFLOW_DEFAULT, &b),
		     0);
	cr_assert_eq(openrdma_cq_create(res.ctx, 8, NULL, res.ch, 0, &cq2), 0);
	cr_assert_eq(core_evd_cq_bind(b, cq2, wc_to_rec, &res),
		     -OPENRDMA_EBUSY);
	/* the same EVD may take several CQs of its channel */
	cr_assert_eq(core_evd_cq_bind(a, cq2, wc_to_rec, &res), 0);
	core_evd_free(a);
	cr_assert_eq(core_evd_cq_bind(b, cq2, wc_to_rec, &res), 0);
	core_evd_free(b);
	cr_assert_eq(openrdma_cq_destroy(cq2), 0);
}

/* ------------------------------------------------------------ direct pull */

/* A second RC QP in INIT whose queues complete on cq. */
static struct openrdma_qp *qp_on(struct openrdma_cq *cq)
{
	struct openrdma_qp_init_attr qia = {
		.qp_type = OPENRDMA_QPT_RC,
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 4,
			 .max_recv_wr = 32,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct openrdma_qp_attr qa = {
		.qp_state = OPENRDMA_QPS_INIT,
		.port_num = 1,
	};
	struct openrdma_qp *qp;

	cr_assert_eq(openrdma_qp_create(res.pd, &qia, &qp), 0);
	cr_assert_eq(openrdma_qp_modify(qp, &qa,
					OPENRDMA_QP_STATE |
						OPENRDMA_QP_PKEY_INDEX |
						OPENRDMA_QP_PORT |
						OPENRDMA_QP_ACCESS_FLAGS),
		     0);
	return qp;
}

/* n receives on qp, wr_id first.., then ERR: n flushed completions. */
static void qp_flush(struct openrdma_qp *qp, uint32_t first, uint32_t n)
{
	struct openrdma_qp_attr qa = { .qp_state = OPENRDMA_QPS_ERR };
	struct openrdma_sge sge = { (uintptr_t)res.buf, sizeof(res.buf),
				    res.mr->lkey };
	struct openrdma_recv_wr wr = { .sg_list = &sge, .num_sge = 1 };
	struct openrdma_recv_wr *bad;
	uint32_t i;

	for (i = 0; i < n; i++) {
		wr.wr_id = first + i;
		cr_assert_eq(openrdma_qp_post_recv(qp, &wr, &bad), 0);
	}
	cr_assert_eq(openrdma_qp_modify(qp, &qa, OPENRDMA_QP_STATE), 0);
}

static const struct trec sentinel = { 0xdead, 0xbeef, 42 };

/*
 * With nothing queued, a wait or dequeue converts the next completion
 * straight into the caller's record: one at a time, the rest left in the
 * CQ, in order; a take that finds nothing leaves the record alone.
 */
Test(evd_source, cq_direct_pull_takes_one_at_a_time, .init = self_open,
     .fini = self_close)
{
	struct core_evd *evd = dto_evd(64, 0);
	struct core_evd_info info;
	struct trec r;
	uint32_t i;

	self_flush(5);
	for (i = 0; i < 5; i++) {
		if (i % 2)
			cr_assert_eq(core_evd_dequeue(evd, &r), 0);
		else
			cr_assert_eq(core_evd_wait(evd, 5000000, 0, &r, NULL),
				     0);
		cr_assert_eq(r.seq, i);
		cr_assert_eq(r.producer, OPENRDMA_WC_WR_FLUSH_ERR);
		core_evd_query(evd, &info);
		cr_assert_eq(info.count, 0, "the rest stays in the CQ");
	}
	r = sentinel;
	cr_assert_eq(core_evd_dequeue(evd, &r), -OPENRDMA_EAGAIN);
	cr_assert_eq(core_evd_wait(evd, 0, 0, &r, NULL), -OPENRDMA_ETIMEDOUT);
	cr_assert_eq(core_evd_wait(evd, 1000, 0, &r, NULL),
		     -OPENRDMA_ETIMEDOUT);
	cr_assert_eq(memcmp(&r, &sentinel, sizeof(r)), 0);
	core_evd_free(evd);
}

/* A wait that reports how many follow pulls them all into the ring. */
Test(evd_source, cq_direct_pull_counts_what_follows, .init = self_open,
     .fini = self_close)
{
	struct core_evd *evd = dto_evd(64, 0);
	struct core_evd_info info;
	size_t nmore = 99;
	struct trec r;
	uint32_t i;

	self_flush(5);
	cr_assert_eq(core_evd_wait(evd, 5000000, 0, &r, &nmore), 0);
	cr_assert_eq(r.seq, 0);
	cr_assert_eq(nmore, 4);
	core_evd_query(evd, &info);
	cr_assert_eq(info.count, 4);
	for (i = 1; i < 5; i++) {
		cr_assert_eq(core_evd_wait(evd, 5000000, 0, &r, &nmore), 0);
		cr_assert_eq(r.seq, i);
		cr_assert_eq(nmore, 4 - i);
	}
	cr_assert_eq(core_evd_dequeue(evd, &r), -OPENRDMA_EAGAIN);
	core_evd_free(evd);
}

/* A waiter that had to block takes the first completion as the first
 * look would have: straight into its record, the count behind it right. */
Test(evd_source, cq_blocked_wait_pulls_directly, .init = self_open,
     .fini = self_close)
{
	struct core_evd *evd = dto_evd(64, 0);
	struct flusher fl = { 5, 50 };
	struct core_evd_info info;
	size_t nmore = 99;
	pthread_t tid;
	struct trec r;
	uint32_t i;

	pthread_create(&tid, NULL, flush_later, &fl);
	cr_assert_eq(core_evd_wait(evd, 5000000, 0, &r, &nmore), 0);
	pthread_join(tid, NULL);
	cr_assert_eq(r.seq, 0);
	/* the flush may have been half done when the waiter looked */
	core_evd_query(evd, &info);
	cr_assert_eq(nmore, info.count);
	cr_assert_leq(nmore, 4);
	for (i = 1; i < 5; i++) {
		cr_assert_eq(core_evd_wait(evd, 5000000, 0, &r, NULL), 0);
		cr_assert_eq(r.seq, i);
	}
	cr_assert_eq(core_evd_dequeue(evd, &r), -OPENRDMA_EAGAIN);
	core_evd_free(evd);
}

struct spinner {
	struct core_evd *evd;
	struct trec r;
	int ret;
};

static void *spin_wait(void *arg)
{
	struct spinner *s = arg;

	s->ret = core_evd_wait(s->evd, 30000000, 0, &s->r, NULL);
	return NULL;
}

/*
 * A waiter spinning on CQs looks again without a pause, yet steps aside
 * for a thread asleep on the EVD's lock: another thread's calls that
 * take the lock go on while it spins, and it still takes the completion.
 */
Test(evd_source, cq_spinning_wait_lets_others_lock, .init = self_open,
     .fini = self_close)
{
	struct core_evd_info info;
	struct spinner s = { 0 };
	uint64_t t0, took;
	pthread_t tid;
	int i;

	/* read once, at the first wait of the process: spin past the test */
	setenv("OPENRDMA_EVD_SPIN_US", "60000000", 1);
	s.evd = dto_evd(64, 0);
	pthread_create(&tid, NULL, spin_wait, &s);
	cr_assert(t_waiter_inside(s.evd), "the waiter never waited");
	t0 = t_now_ns();
	for (i = 0; i < 2000; i++)
		cr_assert_eq(core_evd_query(s.evd, &info), 0);
	took = t_now_ns() - t0;
	cr_assert_eq(info.count, 0);
	self_flush(1);
	pthread_join(tid, NULL);
	cr_assert_eq(s.ret, 0);
	cr_assert_eq(s.r.seq, 0);
	cr_assert_lt(took, 10000000000ull, "2000 queries took %llu ms",
		     (unsigned long long)(took / 1000000));
	core_evd_free(s.evd);
}

/*
 * A waiter spinning on a CQ keeps the EVD's lock between its looks while
 * nobody asks for it: it still reads the clock (a timeout ends the wait),
 * and a free, which takes the lock, ends it with -ECANCELED.
 */
Test(evd_source, cq_spinning_wait_times_out, .init = self_open,
     .fini = self_close)
{
	struct core_evd *evd;
	struct trec r;
	uint64_t t0;

	setenv("OPENRDMA_EVD_SPIN_US", "60000000", 1);
	evd = dto_evd(64, 0);
	t0 = t_now_ns();
	cr_assert_eq(core_evd_wait(evd, 20000, 0, &r, NULL),
		     -OPENRDMA_ETIMEDOUT);
	cr_assert_geq(t_now_ns() - t0, 20000000ull);
	cr_assert_lt(t_now_ns() - t0, 5000000000ull);
	core_evd_free(evd);
}

Test(evd_source, cq_spinning_wait_ends_on_free, .init = self_open,
     .fini = self_close)
{
	struct spinner s = { 0 };
	pthread_t tid;

	setenv("OPENRDMA_EVD_SPIN_US", "60000000", 1);
	s.evd = dto_evd(64, 0);
	pthread_create(&tid, NULL, spin_wait, &s);
	cr_assert(t_waiter_inside(s.evd), "the waiter never waited");
	core_evd_free(s.evd);
	pthread_join(tid, NULL);
	cr_assert_eq(s.ret, -OPENRDMA_ECANCELED);
}

/*
 * Queued records go first, then the CQ's completions in their order:
 * a direct pull never overtakes a record in the ring.
 */
Test(evd_source, cq_queued_records_go_before_completions, .init = self_open,
     .fini = self_close)
{
	struct trec a = { 0xaa, 100, 0 }, b = { 0xbb, 101, 0 }, r;
	struct core_evd *evd;
	uint32_t i;

	cr_assert_eq(t_evd_create(CORE_EVD_STREAM_DTO |
					  CORE_EVD_STREAM_SOFTWARE,
				  64, 0, CORE_EVD_OVERFLOW_DEFAULT, &evd),
		     0);
	cr_assert_eq(core_evd_cq_bind(evd, res.cq, wc_to_rec, &res), 0);
	cr_assert_eq(core_evd_post_se(evd, &a), 0);
	self_flush(4);
	cr_assert_eq(core_evd_enqueue(evd, &b), 0);
	cr_assert_eq(core_evd_wait(evd, 5000000, 0, &r, NULL), 0);
	cr_assert_eq(r.producer, 0xaa);
	cr_assert_eq(core_evd_dequeue(evd, &r), 0);
	cr_assert_eq(r.producer, 0xbb);
	for (i = 0; i < 4; i++) {
		cr_assert_eq(core_evd_wait(evd, 5000000, 0, &r, NULL), 0);
		cr_assert_eq(r.seq, i);
		if (i != 1)
			continue;
		/* one queued between two completions goes before the rest */
		cr_assert_eq(core_evd_post_se(evd, &a), 0);
		cr_assert_eq(core_evd_dequeue(evd, &r), 0);
		cr_assert_eq(r.producer, 0xaa);
	}
	cr_assert_eq(core_evd_dequeue(evd, &r), -OPENRDMA_EAGAIN);
	core_evd_free(evd);
}

/* Keeps odd wr_ids, skips even ones without touching the record. */
static int wc_odd_to_rec(void *arg, const struct openrdma_wc *wc, void *rec)
{
	if (!(wc->wr_id & 1))
		return CORE_EVD_SKIP;
	return wc_to_rec(arg, wc, rec);
}

Test(evd_source, cq_direct_pull_past_skipped_completions, .init = self_open,
     .fini = self_close)
{
	struct core_evd *evd;
	struct trec r;

	cr_assert_eq(t_evd_create(CORE_EVD_STREAM_DTO, 64, 0,
				  CORE_EVD_OVERFLOW_DEFAULT, &evd),
		     0);
	cr_assert_eq(core_evd_cq_bind(evd, res.cq, wc_odd_to_rec, &res), 0);
	self_flush(6);
	cr_assert_eq(core_evd_dequeue(evd, &r), 0);
	cr_assert_eq(r.seq, 1);
	cr_assert_eq(core_evd_wait(evd, 5000000, 0, &r, NULL), 0);
	cr_assert_eq(r.seq, 3);
	cr_assert_eq(core_evd_dequeue(evd, &r), 0);
	cr_assert_eq(r.seq, 5);
	r = sentinel;
	cr_assert_eq(core_evd_dequeue(evd, &r), -OPENRDMA_EAGAIN);
	cr_assert_eq(memcmp(&r, &sentinel, sizeof(r)), 0);
	core_evd_free(evd);
}

/* Two CQs: drained in the order they were bound, each in its order. */
Test(evd_source, cq_direct_pull_from_two_cqs, .init = self_open,
     .fini = self_close)
{
	struct core_evd *evd = dto_evd(64, 0);
	struct core_evd_info info;
	struct openrdma_cq *cq2;
	struct openrdma_qp *qp2;
	size_t nmore;
	struct trec r;
	uint32_t i;

	cr_assert_eq(openrdma_cq_create(res.ctx, 64, NULL, res.ch, 0, &cq2), 0);
	cr_assert_eq(core_evd_cq_bind(evd, cq2, wc_to_rec, &res), 0);
	core_evd_query(evd, &info);
	cr_assert_eq(info.sources, 2);
	qp2 = qp_on(cq2);
	qp_flush(qp2, 100, 3);
	self_flush(3);
	for (i = 0; i < 6; i++) {
		if (i == 4) {
			cr_assert_eq(core_evd_wait(evd, 5000000, 0, &r, &nmore),
				     0);
		} else {
			cr_assert_eq(core_evd_dequeue(evd, &r), 0);
		}
		cr_assert_eq(r.seq, i < 3 ? i : 100 + i - 3, "take %u: %u", i,
			     r.seq);
	}
	cr_assert_eq(core_evd_dequeue(evd, &r), -OPENRDMA_EAGAIN);
	core_evd_free(evd);
	cr_assert_eq(openrdma_qp_destroy(qp2), 0);
	cr_assert_eq(openrdma_cq_destroy(cq2), 0);
}

static void count_overflow(struct core_evd *evd, void *arg)
{
	atomic_int *reports = arg;

	(void)evd;
	atomic_fetch_add(reports, 1);
}

/*
 * A CQ that lost completions: what it holds comes first, then the
 * overflow, reported once, as without the direct pull.
 */
Test(evd_source, cq_overrun_after_direct_pulls, .init = self_open,
     .fini = self_close)
{
	atomic_int reports = 0;
	struct core_evd_attr attr = {
		.streams = CORE_EVD_STREAM_DTO,
		.rec_size = sizeof(struct trec),
		.capacity = 64,
		.overflow_fn = count_overflow,
		.overflow_arg = &reports,
	};
	struct core_evd_info info;
	struct openrdma_cq *small;
	struct openrdma_qp *qp2;
	struct core_evd *evd;
	struct trec r;
	uint32_t n = 0;
	int ret;

	cr_assert_eq(core_evd_create(&attr, &evd), 0);
	cr_assert_eq(openrdma_cq_create(res.ctx, 4, NULL, res.ch, 0, &small),
		     0);
	cr_assert_eq(core_evd_cq_bind(evd, small, wc_to_rec, &res), 0);
	qp2 = qp_on(small);
	qp_flush(qp2, 0, 12);
	while ((ret = core_evd_dequeue(evd, &r)) == 0) {
		cr_assert_eq(r.seq, n, "in order");
		n++;
	}
	cr_assert_eq(ret, -OPENRDMA_EOVERFLOW);
	cr_assert_geq(n, 1);
	cr_assert_lt(n, 12);
	cr_assert_eq(atomic_load(&reports), 1);
	core_evd_query(evd, &info);
	cr_assert(info.overflowed);
	cr_assert_eq(core_evd_wait(evd, 5000000, 0, &r, NULL),
		     -OPENRDMA_EOVERFLOW);
	cr_assert_eq(atomic_load(&reports), 1, "reported once");
	core_evd_free(evd);
	cr_assert_eq(openrdma_qp_destroy(qp2), 0);
	cr_assert_eq(openrdma_cq_destroy(small), 0);
}

/* ------------------------------------------------------------ CM */

struct cm_route {
	struct core_evd *srv; /* the accepted connection's own EVD */
	atomic_int converted;
};

/*
 * As a front end does: connection requests stay on the listener's EVD;
 * later events of accepted ids, which come on the listener's channel
 * too, go to the connection's EVD.
 */
static int cm_to_rec(void *arg, const struct openrdma_cm_event *ev, void *rec,
		     struct core_evd **dst)
{
	struct cm_route *route = arg;
	struct trec *r = rec;

	atomic_fetch_add(&route->converted, 1);
	r->producer = ev->event;
	r->seq = (uint32_t)ev->status;
	r->stamp_ns = (uintptr_t)ev->id;
	if (route->srv && ev->event != OPENRDMA_CM_EVENT_CONNECT_REQUEST)
		*dst = route->srv;
	return 0;
}

static struct core_evd *cm_evd(uint32_t stream)
{
	struct core_evd *evd;

	cr_assert_eq(t_evd_create(stream, 16, 0, CORE_EVD_OVERFLOW_DEFAULT,
				  &evd),
		     0);
	return evd;
}

static struct openrdma_qp *rc_qp(void)
{
	struct openrdma_qp_init_attr qia = {
		.qp_type = OPENRDMA_QPT_RC,
		.send_cq = res.cq,
		.recv_cq = res.cq,
		.cap = { .max_send_wr = 4,
			 .max_recv_wr = 4,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct openrdma_qp *qp;

	cr_assert_eq(openrdma_qp_create(res.pd, &qia, &qp), 0);
	return qp;
}

static uint32_t cm_next(struct core_evd *evd, struct trec *r)
{
	cr_assert_eq(core_evd_wait(evd, 5000000, 0, r, NULL), 0);
	return r->producer;
}

/* A listener and a client on self0, their channels bound to EVDs. */
struct cm_pair {
	struct core_evd *req, *srv, *cli;
	struct cm_route route_l, route_c;
	struct openrdma_cm_channel *chl, *chc;
	struct openrdma_cm_id *lid, *cid, *sid;
	struct openrdma_qp *qpc, *qps;
};

/* Connects p's client to its listener; sid is the accepted id. */
static void cm_pair_connect(struct cm_pair *p)
{
	struct openrdma_conn_param param = { .retry_count = 7 };
	struct openrdma_port_attr port;
	struct sockaddr_storage addr;
	struct trec r;
	int ret;

	*p = (struct cm_pair){ .req = cm_evd(CORE_EVD_STREAM_CM_REQ),
			       .srv = cm_evd(CORE_EVD_STREAM_CM_MSG),
			       .cli = cm_evd(CORE_EVD_STREAM_CM_MSG),
			       .qpc = rc_qp(),
			       .qps = rc_qp() };
	p->route_l.srv = p->srv;
	cr_assert_eq(openrdma_port_query(res.ctx, 1, &port), 0);
	cr_assert_eq(openrdma_cm_channel_create(res.ctx, &p->chl), 0);
	cr_assert_eq(openrdma_cm_channel_create(res.ctx, &p->chc), 0);
	cr_assert_eq(core_evd_cm_bind(p->req, p->chl, cm_to_rec, &p->route_l),
		     0);
	cr_assert_eq(core_evd_cm_bind(p->cli, p->chl, cm_to_rec, &p->route_c),
		     -OPENRDMA_EEXIST, "a channel feeds one binding");
	cr_assert_eq(core_evd_cm_bind(p->cli, p->chc, cm_to_rec, &p->route_c),
		     0);
	cr_assert_eq(openrdma_cm_id_create(res.ctx, p->chl, NULL,
					   OPENRDMA_PS_TCP, &p->lid),
		     0);
	cr_assert_eq(openrdma_cm_id_create(res.ctx, p->chc, NULL,
					   OPENRDMA_PS_TCP, &p->cid),
		     0);
	addr = port.addr;
	ret = openrdma_cm_listen(p->lid, (struct sockaddr *)&addr, 4);
	if (ret == -OPENRDMA_EOPNOTSUPP)
		cr_skip_test("self0 has no CM");
	cr_assert_eq(ret, 0);
	cr_assert_eq(openrdma_cm_local_addr(p->lid, &addr), 0);

	cr_assert_eq(openrdma_cm_connect(p->cid, p->qpc,
					 (struct sockaddr *)&addr, &param),
		     0);
	cr_assert_eq(cm_next(p->req, &r), OPENRDMA_CM_EVENT_CONNECT_REQUEST);
	p->sid = (struct openrdma_cm_id *)(uintptr_t)r.stamp_ns;
	cr_assert_not_null(p->sid);
	cr_assert_eq(openrdma_cm_accept(p->sid, p->qps, &param), 0);
	cr_assert_eq(cm_next(p->cli, &r), OPENRDMA_CM_EVENT_ESTABLISHED);
	/* routed by the converter from the listener's channel */
	cr_assert_eq(cm_next(p->srv, &r), OPENRDMA_CM_EVENT_ESTABLISHED);
	cr_assert_eq(r.stamp_ns, (uintptr_t)p->sid);
}

static void cm_pair_close(struct cm_pair *p)
{
	struct openrdma_cm_event *ev;

	if (p->sid)
		openrdma_cm_id_destroy(p->sid);
	openrdma_cm_id_destroy(p->cid);
	openrdma_cm_id_destroy(p->lid);
	core_evd_free(p->cli); /* unbinds chc */
	core_evd_free(p->req);
	cr_assert_eq(core_evd_engine_threads(), 0);
	/* drain what the channels still hold before destroying them */
	while (openrdma_cm_event_get(p->chl, &ev) == 0)
		openrdma_cm_event_ack(ev);
	while (openrdma_cm_event_get(p->chc, &ev) == 0)
		openrdma_cm_event_ack(ev);
	cr_assert_eq(openrdma_cm_channel_destroy(p->chl), 0);
	cr_assert_eq(openrdma_cm_channel_destroy(p->chc), 0);
	cr_assert_eq(openrdma_qp_destroy(p->qpc), 0);
	cr_assert_eq(openrdma_qp_destroy(p->qps), 0);
	core_evd_free(p->srv);
}

Test(evd_source, cm_events_and_a_peer_disconnect, .init = self_open,
     .fini = self_close)
{
	struct cm_pair p;
	struct trec r;

	cm_pair_connect(&p);
	/* the peer disconnects: the server side learns it on its EVD */
	cr_assert_eq(openrdma_cm_disconnect(p.cid, NULL, 0), 0);
	cr_assert_eq(cm_next(p.srv, &r), OPENRDMA_CM_EVENT_DISCONNECTED);
	cr_assert_eq(core_evd_dequeue(p.req, &r), -OPENRDMA_EAGAIN);
	cr_assert_eq(core_evd_cm_unbind(p.req, p.chl), 0);
	cr_assert_eq(core_evd_cm_unbind(p.req, p.chl), -OPENRDMA_ENOENT);
	cm_pair_close(&p);
}

struct cm_hold {
	struct cm_pair *p;
	pthread_t destroyer;
	atomic_bool destroyed;
	bool destroyed_in_hold;
};

static void *destroy_sid(void *arg)
{
	struct cm_hold *h = arg;

	cr_assert_eq(openrdma_cm_id_destroy(h->p->sid), 0);
	atomic_store(&h->destroyed, true);
	return NULL;
}

/*
 * Under srv's lock, which the dispatcher needs to deliver: the peer
 * disconnects, the event is converted (routed to srv), and another thread
 * destroys the id it is about.  That must wait for the event's delivery.
 */
static void hold_srv(void *arg)
{
	struct cm_hold *h = arg;
	int before = atomic_load(&h->p->route_l.converted);
	uint64_t end;

	cr_assert_eq(openrdma_cm_disconnect(h->p->cid, NULL, 0), 0);
	end = t_now_ns() + 5000000000u;
	while (atomic_load(&h->p->route_l.converted) == before &&
	       t_now_ns() < end)
		t_sleep_ms(1);
	cr_assert_neq(atomic_load(&h->p->route_l.converted), before);
	cr_assert_eq(pthread_create(&h->destroyer, NULL, destroy_sid, h), 0);
	end = t_now_ns() + 300000000u;
	while (!atomic_load(&h->destroyed) && t_now_ns() < end)
		t_sleep_ms(1);
	h->destroyed_in_hold = atomic_load(&h->destroyed);
}

/*
 * An event routed elsewhere is delivered before it is acknowledged: the
 * front end keeps the destination alive only as long as the id's owner,
 * which goes once destroying the id returns.  Acknowledged first, a DAT
 * EVD freed right after its EP was pushed into after its free.
 */
Test(evd_source, cm_id_destroy_waits_for_a_routed_delivery, .init = self_open,
     .fini = self_close)
{
	struct cm_pair p;
	struct cm_hold h = { .p = &p };
	struct trec r;

	cm_pair_connect(&p);
	core_evd_locked(p.srv, hold_srv, &h);
	cr_assert_eq(pthread_join(h.destroyer, NULL), 0);
	cr_assert_not(h.destroyed_in_hold,
		      "the id went before its event was delivered");
	p.sid = NULL;
	cr_assert_eq(core_evd_dequeue(p.srv, &r), 0);
	cr_assert_eq(r.producer, OPENRDMA_CM_EVENT_DISCONNECTED);
	cm_pair_close(&p);
}

/* ------------------------------------------------------------ async routing */

struct async_seen {
	struct core_evd *cq_evd;
	enum openrdma_event_type type;
};

static int async_to_rec(void *arg, const struct openrdma_async_event *ev,
			struct core_evd *cq_evd, void *rec)
{
	struct async_seen *s = arg;
	struct trec *r = rec;

	s->cq_evd = cq_evd;
	s->type = ev->event_type;
	r->producer = ev->event_type;
	r->seq = ev->event_type == OPENRDMA_EVENT_PORT_ERR ?
			 (uint32_t)ev->element.port_num :
			 0;
	return 0;
}

Test(evd_source, async_events_go_to_their_stream, .init = self_open,
     .fini = self_close)
{
	struct async_seen seen_aff = { 0 }, seen_unaff = { 0 };
	struct core_evd *aff, *unaff, *dto = dto_evd(8, 0);
	struct openrdma_async_event ev = { 0 };
	atomic_size_t n = 0;
	struct trec r;
	int i;

	cr_assert_eq(t_evd_create(CORE_EVD_STREAM_ASYNC_AFF, 8, 0,
				  CORE_EVD_OVERFLOW_DEFAULT, &aff),
		     0);
	cr_assert_eq(t_evd_create(CORE_EVD_STREAM_ASYNC_UNAFF, 8, 0,
				  CORE_EVD_OVERFLOW_DEFAULT, &unaff),
		     0);
	cr_assert_eq(core_evd_async_bind(aff, res.ctx,
					 CORE_EVD_STREAM_ASYNC_UNAFF,
					 async_to_rec, &seen_aff),
		     -OPENRDMA_EINVAL, "the EVD lacks that stream");
	cr_assert_eq(core_evd_async_bind(aff, res.ctx,
					 CORE_EVD_STREAM_ASYNC_AFF,
					 async_to_rec, &seen_aff),
		     0);
	cr_assert_eq(core_evd_async_bind(aff, res.ctx,
					 CORE_EVD_STREAM_ASYNC_AFF,
					 async_to_rec, &seen_aff),
		     -OPENRDMA_EEXIST);
	cr_assert_eq(core_evd_async_bind(unaff, res.ctx,
					 CORE_EVD_STREAM_ASYNC_UNAFF,
					 async_to_rec, &seen_unaff),
		     0);

	/* a port that went down */
	ev.event_type = OPENRDMA_EVENT_PORT_ERR;
	ev.element.port_num = 1;
	openrdma_async_event_post(res.ctx, &ev);
	cr_assert_eq(core_evd_wait(unaff, 5000000, 0, &r, NULL), 0);
	cr_assert_eq(r.producer, OPENRDMA_EVENT_PORT_ERR);
	cr_assert_eq(r.seq, 1);
	cr_assert_null(seen_unaff.cq_evd);

	/* a QP that hit a remote access error, through a callback */
	cr_assert_eq(core_evd_callback_attach(aff, cq_drain_cb, &n, 0), 0);
	ev = (struct openrdma_async_event){ 0 };
	ev.event_type = OPENRDMA_EVENT_QP_ACCESS_ERR;
	ev.element.qp = res.qp;
	openrdma_async_event_post(res.ctx, &ev);
	for (i = 0; i < 5000 && atomic_load(&n) < 1; i++)
		t_sleep_ms(1);
	cr_assert_eq(atomic_load(&n), 1);
	cr_assert_eq(seen_aff.type, OPENRDMA_EVENT_QP_ACCESS_ERR);
	cr_assert_eq(core_evd_callback_detach(aff), 0);

	/* a CQ overrun names the EVD the CQ feeds */
	ev = (struct openrdma_async_event){ 0 };
	ev.event_type = OPENRDMA_EVENT_CQ_ERR;
	ev.element.cq = res.cq;
	openrdma_async_event_post(res.ctx, &ev);
	cr_assert_eq(core_evd_wait(aff, 5000000, 0, &r, NULL), 0);
	cr_assert_eq(r.producer, OPENRDMA_EVENT_CQ_ERR);
	cr_assert_eq(seen_aff.cq_evd, dto);
	cr_assert_eq(core_evd_dequeue(unaff, &r), -OPENRDMA_EAGAIN);

	cr_assert_eq(core_evd_async_unbind(aff, res.ctx), 0);
	cr_assert_eq(core_evd_async_unbind(aff, res.ctx), -OPENRDMA_ENOENT);
	core_evd_free(unaff); /* unbinds too */
	cr_assert_eq(core_evd_engine_threads(), 0);
	core_evd_free(aff);
	core_evd_free(dto);
}

Test(evd_source, async_stream_classes)
{
	cr_assert_eq(core_evd_async_stream(OPENRDMA_EVENT_PORT_ERR),
		     CORE_EVD_STREAM_ASYNC_UNAFF);
	cr_assert_eq(core_evd_async_stream(OPENRDMA_EVENT_DEVICE_FATAL),
		     CORE_EVD_STREAM_ASYNC_UNAFF);
	cr_assert_eq(core_evd_async_stream(OPENRDMA_EVENT_QP_FATAL),
		     CORE_EVD_STREAM_ASYNC_AFF);
	cr_assert_eq(core_evd_async_stream(OPENRDMA_EVENT_SRQ_LIMIT_REACHED),
		     CORE_EVD_STREAM_ASYNC_AFF);
	cr_assert_eq(core_evd_async_stream(OPENRDMA_EVENT_CQ_ERR),
		     CORE_EVD_STREAM_ASYNC_AFF);
}
