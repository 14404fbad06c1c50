/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * openrdma_demo: two peers exchange messages and RDMA over the OpenRDMA
 * verbs core, and print latency and bandwidth.
 *
 *   openrdma_demo [-d interface] [-p port] [-n iters] [-s size]    server
 *   openrdma_demo [-d interface] [-p port] [-n iters] [-s size] ADDR  client
 *   openrdma_demo -l ...             both sides on this machine
 *
 * The client connects with the CM and sends its buffer's address and rkey
 * in the private data; the server answers with its own in the accept.
 * Then: a send/receive ping-pong (latency), a stream of RDMA writes into
 * the server's buffer (bandwidth), and an RDMA read that brings the
 * server's bytes back to check them.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openrdma/registry.h>
#include <openrdma/verbs.h>

#define DEMO_WINDOW 16 /* RDMA writes in flight */
#define DEMO_TIMEOUT_S 10

struct demo_opts {
	const char *dev_name;
	const char *server;
	unsigned int port;
	unsigned int iters;
	size_t size;
};

/* What each side tells the other in the CM private data. */
struct demo_buf_info {
	uint64_t addr;
	uint32_t rkey;
	uint32_t size;
};

struct demo_peer {
	bool is_server;
	const struct demo_opts *opts;
	struct openrdma_context *ctx;
	struct openrdma_pd *pd;
	struct openrdma_cq *cq;
	struct openrdma_qp *qp;
	struct openrdma_cm_channel *ch;
	struct openrdma_cm_id *listen_id;
	struct openrdma_cm_id *id;
	struct openrdma_mr *mr;
	char *buf; /* [0, size): RDMA target; [size, 2 size): messages */
	struct demo_buf_info remote;
	int ready_fd; /* -l: the server writes a byte once it listens */
	int status;
};

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int fail(const char *what, int ret)
{
	fprintf(stderr, "openrdma_demo: %s: %s\n", what,
		openrdma_strerror(ret));
	return ret < 0 ? ret : -ret;
}

/* Waits for one completion; any error status ends the demo. */
static int demo_poll(struct demo_peer *p, struct openrdma_wc *wc)
{
	double deadline = now_us() + DEMO_TIMEOUT_S * 1e6;
	int n;

	for (;;) {
		n = openrdma_cq_poll(p->cq, 1, wc);
		if (n < 0)
			return fail("cq_poll", n);
		if (n == 1)
			break;
		if (now_us() > deadline)
			return fail("cq_poll", -OPENRDMA_ETIMEDOUT);
	}
	if (wc->status != OPENRDMA_WC_SUCCESS) {
		fprintf(stderr,
			"openrdma_demo: %s: completion %" PRIu64 ": %s\n",
			p->is_server ? "server" : "client", wc->wr_id,
			openrdma_wc_status_str(wc->status));
		return -OPENRDMA_EIO;
	}
	return 0;
}

static int demo_post_recv(struct demo_peer *p)
{
	struct openrdma_sge sge = {
		.addr = (uintptr_t)p->buf + p->opts->size,
		.length = (uint32_t)p->opts->size,
		.lkey = p->mr->lkey,
	};
	struct openrdma_recv_wr wr = { .wr_id = 1,
				       .sg_list = &sge,
				       .num_sge = 1 };
	struct openrdma_recv_wr *bad;

	return openrdma_qp_post_recv(p->qp, &wr, &bad);
}

static int demo_post(struct demo_peer *p, enum openrdma_wr_opcode op,
		     uint64_t wr_id, size_t off, uint32_t len, bool signaled)
{
	struct openrdma_sge sge = {
		.addr = (uintptr_t)p->buf + off,
		.length = len,
		.lkey = p->mr->lkey,
	};
	struct openrdma_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = op,
		.send_flags = signaled ? OPENRDMA_SEND_SIGNALED : 0,
	};
	struct openrdma_send_wr *bad;

	if (op == OPENRDMA_WR_RDMA_WRITE || op == OPENRDMA_WR_RDMA_READ) {
		wr.wr.rdma.remote_addr = p->remote.addr;
		wr.wr.rdma.rkey = p->remote.rkey;
	}
	return openrdma_qp_post_send(p->qp, &wr, &bad);
}

static int demo_cm_wait(struct demo_peer *p, enum openrdma_cm_event_type want,
			struct openrdma_cm_event **ev_out)
{
	struct openrdma_cm_event *ev;
	int ret;

	ret = openrdma_cm_event_get(p->ch, &ev);
	if (ret)
		return fail("cm_event_get", ret);
	if (ev->event != want) {
		fprintf(stderr, "openrdma_demo: expected %s, got %s (%d)\n",
			openrdma_cm_event_str(want),
			openrdma_cm_event_str(ev->event), ev->status);
		openrdma_cm_event_ack(ev);
		return -OPENRDMA_EPROTO;
	}
	*ev_out = ev;
	return 0;
}

/* INIT: receives can be posted before the connection is made. */
static int demo_qp_init(struct demo_peer *p)
{
	struct openrdma_qp_attr attr = {
		.qp_state = OPENRDMA_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = OPENRDMA_ACCESS_REMOTE_WRITE |
				   OPENRDMA_ACCESS_REMOTE_READ,
	};
	int ret;

	ret = openrdma_qp_modify(p->qp, &attr,
				 OPENRDMA_QP_STATE | OPENRDMA_QP_PKEY_INDEX |
					 OPENRDMA_QP_PORT |
					 OPENRDMA_QP_ACCESS_FLAGS);
	return ret ? fail("qp_modify", ret) : 0;
}

/* A CQ and an RC QP in INIT: a failed connect attempt replaces both. */
static int demo_qp_open(struct demo_peer *p)
{
	struct openrdma_qp_init_attr qia = { 0 };
	int ret;

	ret = openrdma_cq_create(p->ctx, 2 * DEMO_WINDOW + 4, NULL, NULL, 0,
				 &p->cq);
	if (ret)
		return fail("cq_create", ret);
	qia.send_cq = p->cq;
	qia.recv_cq = p->cq;
	qia.qp_type = OPENRDMA_QPT_RC;
	qia.cap.max_send_wr = DEMO_WINDOW + 2;
	qia.cap.max_recv_wr = 4;
	qia.cap.max_send_sge = 1;
	qia.cap.max_recv_sge = 1;
	ret = openrdma_qp_create(p->pd, &qia, &p->qp);
	if (ret)
		return fail("qp_create", ret);
	return demo_qp_init(p);
}

static void demo_qp_close(struct demo_peer *p)
{
	if (p->qp)
		openrdma_qp_destroy(p->qp);
	if (p->cq)
		openrdma_cq_destroy(p->cq);
	p->qp = NULL;
	p->cq = NULL;
}

static int demo_resources(struct demo_peer *p)
{
	struct openrdma_device *dev;
	const char *name = p->opts->dev_name;
	int ret;

	if (!name)
		name = openrdma_default_interface();
	if (!name)
		return fail("no interface", -OPENRDMA_ENODEV);
	ret = openrdma_device_find(name, &dev);
	if (ret)
		return fail(name, ret);
	ret = openrdma_device_open(dev, &p->ctx);
	if (ret)
		return fail("device_open", ret);
	ret = openrdma_pd_alloc(p->ctx, &p->pd);
	if (ret)
		return fail("pd_alloc", ret);
	p->buf = aligned_alloc(4096, (2 * p->opts->size + 4095) & ~4095ul);
	if (!p->buf)
		return fail("buffer", -OPENRDMA_ENOMEM);
	memset(p->buf, p->is_server ? 's' : 'c', 2 * p->opts->size);
	ret = openrdma_mr_reg(p->pd, p->buf, 2 * p->opts->size,
			      OPENRDMA_ACCESS_LOCAL_WRITE |
				      OPENRDMA_ACCESS_REMOTE_WRITE |
				      OPENRDMA_ACCESS_REMOTE_READ,
			      &p->mr);
	if (ret)
		return fail("mr_reg", ret);
	ret = demo_qp_open(p);
	if (ret)
		return ret;
	ret = openrdma_cm_channel_create(p->ctx, &p->ch);
	if (ret)
		return fail("cm_channel_create", ret);
	return 0;
}

static void demo_fill_info(struct demo_peer *p, struct demo_buf_info *info)
{
	info->addr = (uintptr_t)p->buf;
	info->rkey = p->mr->rkey;
	info->size = (uint32_t)p->opts->size;
}

static int demo_addr(struct demo_peer *p, const char *host,
		     struct sockaddr_storage *ss)
{
	struct openrdma_port_attr pa;
	struct addrinfo hints = { .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res;
	char port[16];
	int ret;

	if (!host) {
		/* The port's own address: where a peer finds us. */
		ret = openrdma_port_query(p->ctx, 1, &pa);
		if (ret)
			return fail("port_query", ret);
		*ss = pa.addr;
	} else {
		snprintf(port, sizeof(port), "%u", p->opts->port);
		ret = getaddrinfo(host, port, &hints, &res);
		if (ret) {
			fprintf(stderr, "openrdma_demo: %s: %s\n", host,
				gai_strerror(ret));
			return -OPENRDMA_EADDRNOTAVAIL;
		}
		memcpy(ss, res->ai_addr, res->ai_addrlen);
		freeaddrinfo(res);
	}
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(p->opts->port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons(p->opts->port);
	return 0;
}

/*
 * Connects, retrying for a while if the server is not listening yet (it
 * may still be starting).  A failed attempt leaves the QP in ERR, so it is
 * reset before the next one.
 */
static int demo_client_connect(struct demo_peer *p, const struct sockaddr *dst,
			       const struct openrdma_conn_param *param)
{
	enum openrdma_cm_event_type type;
	struct openrdma_cm_event *ev;
	double deadline = now_us() + DEMO_TIMEOUT_S * 1e6;
	int ret;

	for (;;) {
		ret = openrdma_cm_id_create(p->ctx, p->ch, p, OPENRDMA_PS_TCP,
					    &p->id);
		if (ret)
			return fail("cm_id_create", ret);
		ret = openrdma_cm_connect(p->id, p->qp, dst, param);
		if (ret)
			return fail("cm_connect", ret);
		ret = openrdma_cm_event_get(p->ch, &ev);
		if (ret)
			return fail("cm_event_get", ret);
		if (ev->event == OPENRDMA_CM_EVENT_ESTABLISHED)
			break;
		type = ev->event;
		openrdma_cm_event_ack(ev);
		openrdma_cm_id_destroy(p->id);
		p->id = NULL;
		if (now_us() > deadline) {
			fprintf(stderr, "openrdma_demo: connect: %s\n",
				openrdma_cm_event_str(type));
			return -OPENRDMA_ETIMEDOUT;
		}
		/* a fresh QP and CQ: the failure flushed the old ones */
		demo_qp_close(p);
		ret = demo_qp_open(p);
		if (ret)
			return ret;
		ret = demo_post_recv(p);
		if (ret)
			return fail("post_recv", ret);
		usleep(200 * 1000);
	}
	memcpy(&p->remote, ev->param.private_data, sizeof(p->remote));
	openrdma_cm_event_ack(ev);
	return 0;
}

static int demo_connect(struct demo_peer *p)
{
	struct openrdma_conn_param param = { 0 };
	struct demo_buf_info mine;
	struct sockaddr_storage ss;
	char byte;
	struct openrdma_cm_event *ev;
	int ret;

	demo_fill_info(p, &mine);
	param.private_data = &mine;
	param.private_data_len = sizeof(mine);
	param.responder_resources = 1;
	param.initiator_depth = 1;
	param.retry_count = 7;
	param.rnr_retry_count = 7;
	ret = demo_post_recv(p);
	if (ret)
		return fail("post_recv", ret);

	if (p->is_server) {
		ret = demo_addr(p, NULL, &ss);
		if (ret)
			return ret;
		ret = openrdma_cm_id_create(p->ctx, p->ch, p, OPENRDMA_PS_TCP,
					    &p->listen_id);
		if (ret)
			return fail("cm_id_create", ret);
		ret = openrdma_cm_listen(p->listen_id, (struct sockaddr *)&ss,
					 1);
		if (ret)
			return fail("cm_listen", ret);
		if (p->ready_fd >= 0 && write(p->ready_fd, "", 1) != 1)
			return fail("ready", -OPENRDMA_EIO);
		ret = demo_cm_wait(p, OPENRDMA_CM_EVENT_CONNECT_REQUEST, &ev);
		if (ret)
			return ret;
		p->id = ev->id;
		memcpy(&p->remote, ev->param.private_data, sizeof(p->remote));
		openrdma_cm_event_ack(ev);
		ret = openrdma_cm_accept(p->id, p->qp, &param);
		if (ret)
			return fail("cm_accept", ret);
	} else {
		ret = demo_addr(p, p->opts->server, &ss);
		if (ret)
			return ret;
		if (p->ready_fd >= 0 && read(p->ready_fd, &byte, 1) != 1)
			return fail("server not ready", -OPENRDMA_EIO);
		ret = demo_client_connect(p, (struct sockaddr *)&ss, &param);
		if (ret)
			return ret;
	}
	if (p->is_server) {
		ret = demo_cm_wait(p, OPENRDMA_CM_EVENT_ESTABLISHED, &ev);
		if (ret)
			return ret;
		openrdma_cm_event_ack(ev);
	}
	if (p->remote.size != p->opts->size) {
		fprintf(stderr,
			"openrdma_demo: peer uses size %u, we use %zu\n",
			p->remote.size, p->opts->size);
		return -OPENRDMA_EINVAL;
	}
	return 0;
}

/*
 * Polls until a receive completes, counting the send completions met on
 * the way: one CQ serves both queues, and a peer's answer may complete
 * before our own send does.
 */
static int demo_wait_recv(struct demo_peer *p, unsigned int *sends_done)
{
	struct openrdma_wc wc;
	int ret;

	for (;;) {
		ret = demo_poll(p, &wc);
		if (ret)
			return ret;
		if (wc.opcode == OPENRDMA_WC_RECV)
			return 0;
		(*sends_done)++;
	}
}

static int demo_wait_sends(struct demo_peer *p, unsigned int *sends_done,
			   unsigned int posted)
{
	struct openrdma_wc wc;
	int ret;

	while (*sends_done < posted) {
		ret = demo_poll(p, &wc);
		if (ret)
			return ret;
		if (wc.opcode == OPENRDMA_WC_RECV)
			return fail("ping-pong", -OPENRDMA_EPROTO);
		(*sends_done)++;
	}
	return 0;
}

/* Send/receive ping-pong: the client starts, the server echoes. */
static int demo_pingpong(struct demo_peer *p, double *lat_us)
{
	uint32_t len = (uint32_t)p->opts->size;
	unsigned int i, sends_done = 0;
	double t0 = 0;
	int ret;

	for (i = 0; i < p->opts->iters; i++) {
		if (i == 1)
			t0 = now_us(); /* the first round trip warms up */
		if (!p->is_server) {
			ret = demo_post(p, OPENRDMA_WR_SEND, 2, p->opts->size,
					len, true);
			if (ret)
				return fail("post_send", ret);
		}
		ret = demo_wait_recv(p, &sends_done);
		if (ret)
			return ret;
		ret = demo_post_recv(p);
		if (ret)
			return fail("post_recv", ret);
		if (p->is_server) {
			ret = demo_post(p, OPENRDMA_WR_SEND, 2, p->opts->size,
					len, true);
			if (ret)
				return fail("post_send", ret);
		}
		/* keep the send queue short: at most one send in flight */
		ret = demo_wait_sends(p, &sends_done, i);
		if (ret)
			return ret;
	}
	*lat_us = (now_us() - t0) / (2.0 * (p->opts->iters - 1));
	return demo_wait_sends(p, &sends_done, p->opts->iters);
}

/* The client streams RDMA writes, then tells the server with a send. */
static int demo_write_bw(struct demo_peer *p, double *gbps)
{
	struct openrdma_wc wc;
	unsigned int posted = 0, done = 0;
	double t0;
	int ret;

	if (p->is_server) {
		ret = demo_poll(p, &wc); /* the client's "done" message */
		if (ret)
			return ret;
		if (wc.opcode != OPENRDMA_WC_RECV)
			return fail("write_bw", -OPENRDMA_EPROTO);
		return demo_post_recv(p);
	}
	memset(p->buf, 'W', p->opts->size);
	t0 = now_us();
	while (done < p->opts->iters) {
		while (posted < p->opts->iters && posted - done < DEMO_WINDOW) {
			ret = demo_post(p, OPENRDMA_WR_RDMA_WRITE, 3, 0,
					(uint32_t)p->opts->size, true);
			if (ret)
				return fail("post_send", ret);
			posted++;
		}
		ret = demo_poll(p, &wc);
		if (ret)
			return ret;
		done++;
	}
	*gbps = p->opts->size * (double)p->opts->iters /
		((now_us() - t0) * 1e3);
	ret = demo_post(p, OPENRDMA_WR_SEND, 4, p->opts->size, 0, true);
	if (ret)
		return fail("post_send", ret);
	return demo_poll(p, &wc);
}

/*
 * The client reads the server's buffer back: it must hold the writes.
 * Then it tells the server it is done, so the server does not disconnect
 * while the read is still under way.
 */
static int demo_read_check(struct demo_peer *p)
{
	struct openrdma_wc wc;
	unsigned int sends_done = 0;
	size_t i;
	int ret;

	if (p->is_server)
		return demo_wait_recv(p, &sends_done);
	memset(p->buf, 0, p->opts->size);
	ret = demo_post(p, OPENRDMA_WR_RDMA_READ, 5, 0, (uint32_t)p->opts->size,
			true);
	if (ret)
		return fail("post_send", ret);
	ret = demo_poll(p, &wc);
	if (ret)
		return ret;
	for (i = 0; i < p->opts->size; i++) {
		if (p->buf[i] != 'W') {
			fprintf(stderr,
				"openrdma_demo: RDMA read: byte %zu is 0x%02x\n",
				i, (unsigned char)p->buf[i]);
			return -OPENRDMA_EIO;
		}
	}
	ret = demo_post(p, OPENRDMA_WR_SEND, 6, p->opts->size, 0, true);
	if (ret)
		return fail("post_send", ret);
	return demo_wait_sends(p, &sends_done, 1);
}

static void demo_teardown(struct demo_peer *p)
{
	struct openrdma_cm_event *ev;

	if (p->id && openrdma_cm_disconnect(p->id, NULL, 0) == 0 &&
	    openrdma_cm_event_get(p->ch, &ev) == 0)
		openrdma_cm_event_ack(ev);
	if (p->id)
		openrdma_cm_id_destroy(p->id);
	if (p->listen_id)
		openrdma_cm_id_destroy(p->listen_id);
	demo_qp_close(p);
	if (p->ch)
		openrdma_cm_channel_destroy(p->ch);
	if (p->mr)
		openrdma_mr_dereg(p->mr);
	if (p->pd)
		openrdma_pd_dealloc(p->pd);
	if (p->ctx)
		openrdma_context_close(p->ctx);
	free(p->buf);
}

static void *demo_run(void *arg)
{
	struct demo_peer *p = arg;
	double lat = 0, bw = 0;

	p->status = demo_resources(p);
	if (!p->status)
		p->status = demo_connect(p);
	if (!p->status)
		p->status = demo_pingpong(p, &lat);
	if (!p->status)
		p->status = demo_write_bw(p, &bw);
	if (!p->status)
		p->status = demo_read_check(p);
	if (!p->status && !p->is_server) {
		printf("interface      %s\n",
		       openrdma_device_name(p->ctx->device));
		printf("message size   %zu bytes, %u iterations\n",
		       p->opts->size, p->opts->iters);
		printf("send latency   %.2f us (half round trip)\n", lat);
		printf("write bandwidth %.3f GB/s (%d writes in flight)\n", bw,
		       DEMO_WINDOW);
		printf("read check     ok\n");
	}
	/* a server that failed before it listened must not leave the
	 * client waiting */
	if (p->is_server && p->ready_fd >= 0)
		close(p->ready_fd);
	demo_teardown(p);
	return NULL;
}

static bool demo_cross_process(const struct demo_opts *opts)
{
	struct openrdma_device *dev;
	struct openrdma_context *ctx;
	struct openrdma_device_attr attr;
	const char *name = opts->dev_name;
	bool ret = false;

	if (!name)
		name = openrdma_default_interface();
	if (!name || openrdma_device_find(name, &dev) ||
	    openrdma_device_open(dev, &ctx))
		return false;
	if (!openrdma_device_query(ctx, &attr))
		ret = attr.device_cap_flags & OPENRDMA_DEVICE_CROSS_PROCESS;
	openrdma_context_close(ctx);
	return ret;
}

/*
 * Both sides on this machine: two processes when the interface reaches
 * other processes, else (self) two threads of this one.
 */
static int demo_local(struct demo_opts *opts, struct demo_peer *server,
		      struct demo_peer *client)
{
	pthread_t thr;
	int ready[2];
	pid_t pid;
	int wstatus;

	/* the client connects once the server listens */
	if (pipe(ready))
		return 1;
	server->ready_fd = ready[1];
	client->ready_fd = ready[0];

	if (demo_cross_process(opts)) {
		printf("demo: server and client in two processes\n");
		fflush(stdout);
		pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			close(ready[0]);
			demo_run(server);
			_exit(server->status ? 1 : 0);
		}
		close(ready[1]);
		demo_run(client);
		if (waitpid(pid, &wstatus, 0) < 0 || !WIFEXITED(wstatus) ||
		    WEXITSTATUS(wstatus))
			return 1;
		return client->status ? 1 : 0;
	}
	printf("demo: server and client in two threads (the interface is in-process only)\n");
	fflush(stdout);
	if (pthread_create(&thr, NULL, demo_run, server))
		return 1;
	demo_run(client);
	pthread_join(thr, NULL);
	return server->status || client->status ? 1 : 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: openrdma_demo [-d interface] [-p port] [-n iters] [-s size] [-l] [server]\n"
		"  no server address: run the server; -l: run both sides here\n");
}

int main(int argc, char **argv)
{
	struct demo_opts opts = { .port = 18515, .iters = 1000, .size = 4096 };
	struct demo_peer server = { .is_server = true,
				    .opts = &opts,
				    .ready_fd = -1 };
	struct demo_peer client = { .is_server = false,
				    .opts = &opts,
				    .ready_fd = -1 };
	bool loopback = false;
	int c;

	while ((c = getopt(argc, argv, "d:p:n:s:lh")) != -1) {
		switch (c) {
		case 'd':
			opts.dev_name = optarg;
			break;
		case 'p':
			opts.port = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'n':
			opts.iters = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 's':
			opts.size = strtoul(optarg, NULL, 0);
			break;
		case 'l':
			loopback = true;
			break;
		default:
			usage();
			return 2;
		}
	}
	if (optind < argc)
		opts.server = argv[optind];
	if (opts.iters < 2 || opts.size < 1 || opts.size > (1u << 30) ||
	    opts.port == 0 || opts.port > 65535) {
		usage();
		return 2;
	}
	if (loopback)
		return demo_local(&opts, &server, &client);
	demo_run(opts.server ? &client : &server);
	return (opts.server ? client.status : server.status) ? 1 : 0;
}
