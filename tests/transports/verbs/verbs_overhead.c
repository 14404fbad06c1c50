/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * verbs_overhead: the instructions OpenRDMA adds to a post and to a
 * completion over raw libibverbs, on the same QP and CQ.  Two connected
 * RC QPs on one interface; rounds of one-at-a-time signaled 8-byte RDMA
 * writes, posted through openrdma_qp_post_send() or ibv_post_send(), and
 * their completions polled one at a time through openrdma_cq_poll() or
 * ibv_poll_cq() once they are all there.  Run it under
 * valgrind --tool=callgrind and compare the inclusive costs of the four
 * measure_* functions (bench-vm.sh does); the program prints their call
 * counts and how many polls found nothing.
 *
 *   verbs_overhead [-d interface] [-r rounds] [-b batch]
 */
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openrdma/verbs.h>

#include "transports/verbs/verbs.h"

struct side {
	struct openrdma_context *ctx;
	struct openrdma_pd *pd;
	struct openrdma_cq *cq;
	struct openrdma_qp *qp;
	struct openrdma_cm_channel *ch;
	struct openrdma_cm_id *id;
	struct openrdma_port_attr port;
};

static unsigned long empty_polls;

static void die(const char *what, int ret)
{
	fprintf(stderr, "verbs_overhead: %s: %s\n", what,
		openrdma_strerror(ret));
	exit(1);
}

#define CHECK(expr)                       \
	do {                              \
		int ret_ = (expr);        \
		if (ret_)                 \
			die(#expr, ret_); \
	} while (0)

static void side_open(struct openrdma_device *dev, struct side *s)
{
	struct openrdma_qp_init_attr init = {
		.qp_type = OPENRDMA_QPT_RC,
		.cap = { .max_send_wr = 256,
			 .max_recv_wr = 16,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	CHECK(openrdma_device_open(dev, &s->ctx));
	CHECK(openrdma_port_query(s->ctx, 1, &s->port));
	CHECK(openrdma_pd_alloc(s->ctx, &s->pd));
	CHECK(openrdma_cq_create(s->ctx, 512, NULL, NULL, 0, &s->cq));
	init.send_cq = s->cq;
	init.recv_cq = s->cq;
	CHECK(openrdma_qp_create(s->pd, &init, &s->qp));
	CHECK(openrdma_cm_channel_create(s->ctx, &s->ch));
}

static struct openrdma_cm_event *cm_wait(struct side *s,
					 enum openrdma_cm_event_type want)
{
	struct openrdma_cm_event *ev;

	CHECK(openrdma_cm_event_get(s->ch, &ev));
	if (ev->event != want) {
		fprintf(stderr, "verbs_overhead: %s, want %s\n",
			openrdma_cm_event_str(ev->event),
			openrdma_cm_event_str(want));
		exit(1);
	}
	return ev;
}

static void connect_pair(struct side *a, struct side *b)
{
	struct openrdma_conn_param param = { .responder_resources = 1,
					     .initiator_depth = 1,
					     .retry_count = 7,
					     .rnr_retry_count = 7 };
	struct openrdma_cm_id *listen;
	struct openrdma_cm_event *ev;
	struct sockaddr_storage addr = b->port.addr;

	CHECK(openrdma_cm_id_create(b->ctx, b->ch, NULL, OPENRDMA_PS_TCP,
				    &listen));
	CHECK(openrdma_cm_listen(listen, (struct sockaddr *)&addr, 1));
	CHECK(openrdma_cm_local_addr(listen, &addr));
	CHECK(openrdma_cm_id_create(a->ctx, a->ch, NULL, OPENRDMA_PS_TCP,
				    &a->id));
	CHECK(openrdma_cm_connect(a->id, a->qp, (struct sockaddr *)&addr,
				  &param));
	ev = cm_wait(b, OPENRDMA_CM_EVENT_CONNECT_REQUEST);
	b->id = ev->id;
	openrdma_cm_event_ack(ev);
	CHECK(openrdma_cm_accept(b->id, b->qp, &param));
	openrdma_cm_event_ack(cm_wait(a, OPENRDMA_CM_EVENT_ESTABLISHED));
	openrdma_cm_event_ack(cm_wait(b, OPENRDMA_CM_EVENT_ESTABLISHED));
}

/* The four measured calls: never inlined, so that callgrind sees them. */
static __attribute__((noinline)) int
measure_post_openrdma(struct openrdma_qp *qp, struct openrdma_send_wr *wr)
{
	struct openrdma_send_wr *bad;

	return openrdma_qp_post_send(qp, wr, &bad);
}

static __attribute__((noinline)) int measure_post_raw(struct ibv_qp *qp,
						      struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;

	return ibv_post_send(qp, wr, &bad);
}

static __attribute__((noinline)) int
measure_poll_openrdma(struct openrdma_cq *cq, struct openrdma_wc *wc)
{
	return openrdma_cq_poll(cq, 1, wc);
}

static __attribute__((noinline)) int measure_poll_raw(struct ibv_cq *cq,
						      struct ibv_wc *wc)
{
	return ibv_poll_cq(cq, 1, wc);
}

/* Waits until n completions are there, then takes them one by one. */
static void drain(struct side *s, bool raw, int n)
{
	struct ibv_cq *ibcq = to_verbs_cq(s->cq)->ibcq;
	struct openrdma_wc wc;
	int got = 0, ret;

	usleep(20000);
	while (got < n) {
		ret = raw ? measure_poll_raw(ibcq, (struct ibv_wc *)&wc) :
			    measure_poll_openrdma(s->cq, &wc);
		if (ret < 0 || (ret == 1 && wc.status != OPENRDMA_WC_SUCCESS))
			die("poll", ret < 0 ? ret : -OPENRDMA_EIO);
		if (!ret) {
			empty_polls++;
			usleep(5000);
		}
		got += ret;
	}
}

static void round_run(struct side *a, bool raw, int batch, void *buf,
		      uint32_t lkey, uint64_t raddr, uint32_t rkey)
{
	struct openrdma_sge sge = { (uintptr_t)buf, 8, lkey };
	struct openrdma_send_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = OPENRDMA_WR_RDMA_WRITE,
		.send_flags = OPENRDMA_SEND_SIGNALED,
		.wr.rdma = { raddr, rkey },
	};
	struct ibv_send_wr ibwr = {
		.sg_list = (struct ibv_sge *)&sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { raddr, rkey },
	};
	struct ibv_qp *ibqp = to_verbs_qp(a->qp)->ibqp;
	int i, ret;

	for (i = 0; i < batch; i++) {
		ret = raw ? verbs_ret(measure_post_raw(ibqp, &ibwr)) :
			    measure_post_openrdma(a->qp, &wr);
		if (ret)
			die("post", ret);
	}
	drain(a, raw, batch);
}

int main(int argc, char *argv[])
{
	const char *ifname = "rxe0-1";
	int rounds = 20, batch = 64, opt, i;
	struct openrdma_device *dev;
	struct openrdma_mr *lmr, *rmr;
	struct side a, b;
	void *lbuf, *rbuf;

	while ((opt = getopt(argc, argv, "d:r:b:")) != -1) {
		switch (opt) {
		case 'd':
			ifname = optarg;
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		case 'b':
			batch = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: verbs_overhead [-d interface] "
					"[-r rounds] [-b batch]\n");
			return 2;
		}
	}
	if (batch < 1 || batch > 256 || rounds < 1) {
		fprintf(stderr, "verbs_overhead: batch 1-256, rounds >= 1\n");
		return 2;
	}
	CHECK(openrdma_device_find(ifname, &dev));
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	side_open(dev, &a);
	side_open(dev, &b);
	connect_pair(&a, &b);
	lbuf = aligned_alloc(4096, 4096);
	rbuf = aligned_alloc(4096, 4096);
	CHECK(openrdma_mr_reg(a.pd, lbuf, 4096, OPENRDMA_ACCESS_LOCAL_WRITE,
			      &lmr));
	CHECK(openrdma_mr_reg(b.pd, rbuf, 4096,
			      OPENRDMA_ACCESS_LOCAL_WRITE |
				      OPENRDMA_ACCESS_REMOTE_WRITE,
			      &rmr));

	for (i = 0; i < rounds; i++) {
		round_run(&a, true, batch, lbuf, lmr->lkey, (uintptr_t)rbuf,
			  rmr->rkey);
		round_run(&a, false, batch, lbuf, lmr->lkey, (uintptr_t)rbuf,
			  rmr->rkey);
	}
	printf("interface %s: %d posts and %d completions each way, "
	       "%lu empty polls\n",
	       ifname, rounds * batch, rounds * batch, empty_polls);
	/* the process exits: the kernel reclaims the device resources */
	return 0;
}
