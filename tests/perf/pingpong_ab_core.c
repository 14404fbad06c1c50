/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * pingpong_ab's core side: one RC QP on OpenRDMA's verbs interface,
 * connected with its CM, and the core loop's posts and polls, the calls
 * openrdma-perf makes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include <openrdma/errno.h>

#include "tests/perf/pingpong_ab.h"

static int core_fail(const char *what, int ret)
{
	fprintf(stderr, "core: %s: %s\n", what, openrdma_strerror(ret));
	return -1;
}

/* Waits for the next CM event, which must be want; *id: its cm_id. */
static int core_cm_wait(struct core_side *c, enum openrdma_cm_event_type want,
			struct openrdma_cm_id **id)
{
	struct openrdma_cm_event *ev;
	enum openrdma_cm_event_type got;
	int ret;

	ret = openrdma_cm_event_get(c->ch, &ev);
	if (ret)
		return core_fail("cm_event_get", ret);
	got = ev->event;
	if (id)
		*id = ev->id;
	openrdma_cm_event_ack(ev);
	if (got != want) {
		fprintf(stderr, "core: CM event %s instead of %s\n",
			openrdma_cm_event_str(got),
			openrdma_cm_event_str(want));
		return -1;
	}
	return 0;
}

static int core_post_recv(struct core_side *c)
{
	struct openrdma_sge sge = { (uintptr_t)c->rbuf, (uint32_t)c->size,
				    c->rmr->lkey };
	struct openrdma_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	int ret;

	ret = openrdma_qp_post_recv(c->qp, &wr, &bad);
	return ret ? core_fail("qp_post_recv", ret) : 0;
}

/* The QP asks for inline sends of size bytes, and takes none if refused. */
static int core_qp_open(struct core_side *c)
{
	struct openrdma_qp_init_attr init = {
		.send_cq = c->scq,
		.recv_cq = c->rcq,
		.qp_type = OPENRDMA_QPT_RC,
		.cap = { .max_send_wr = AB_DEPTH,
			 .max_recv_wr = AB_DEPTH,
			 .max_send_sge = 1,
			 .max_recv_sge = 1,
			 .max_inline_data = (uint32_t)c->size },
	};
	int ret;

	ret = openrdma_qp_create(c->pd, &init, &c->qp);
	if (ret == -OPENRDMA_EINVAL) {
		init.cap.max_inline_data = 0;
		ret = openrdma_qp_create(c->pd, &init, &c->qp);
	}
	if (ret)
		return core_fail("qp_create", ret);
	c->inline_max = init.cap.max_inline_data;
	return 0;
}

int core_side_open(struct core_side *c, const char *dev, size_t size)
{
	struct openrdma_device *d;
	int ret;

	c->size = size;
	c->sbuf = calloc(1, size);
	c->rbuf = calloc(1, size);
	if (!c->sbuf || !c->rbuf)
		return core_fail("buffers", -OPENRDMA_ENOMEM);
	ret = openrdma_device_find(dev, &d);
	if (!ret)
		ret = openrdma_device_open(d, &c->ctx);
	if (!ret)
		ret = openrdma_port_query(c->ctx, 1, &c->port);
	if (!ret)
		ret = openrdma_pd_alloc(c->ctx, &c->pd);
	if (!ret)
		ret = openrdma_cq_create(c->ctx, AB_DEPTH, NULL, NULL, 0,
					 &c->scq);
	if (!ret)
		ret = openrdma_cq_create(c->ctx, AB_DEPTH, NULL, NULL, 0,
					 &c->rcq);
	if (!ret)
		ret = openrdma_mr_reg(c->pd, c->sbuf, size,
				      OPENRDMA_ACCESS_LOCAL_WRITE, &c->smr);
	if (!ret)
		ret = openrdma_mr_reg(c->pd, c->rbuf, size,
				      OPENRDMA_ACCESS_LOCAL_WRITE, &c->rmr);
	if (!ret)
		ret = openrdma_cm_channel_create(c->ctx, &c->ch);
	if (ret)
		return core_fail(dev, ret);
	return core_qp_open(c);
}

/* Listens on the interface's address, port. */
int core_side_listen(struct core_side *c, unsigned int port)
{
	struct sockaddr_storage ss = c->port.addr;
	int ret;

	if (ss.ss_family == AF_INET)
		((struct sockaddr_in *)&ss)->sin_port = htons((uint16_t)port);
	else
		((struct sockaddr_in6 *)&ss)->sin6_port = htons((uint16_t)port);
	ret = openrdma_cm_id_create(c->ctx, c->ch, NULL, OPENRDMA_PS_TCP,
				    &c->listen);
	if (!ret)
		ret = openrdma_cm_listen(c->listen, (struct sockaddr *)&ss, 1);
	return ret ? core_fail("cm_listen", ret) : 0;
}

/* The receive goes after the accept: a QP in RESET takes none. */
int core_side_accept(struct core_side *c)
{
	struct openrdma_conn_param cp = { .responder_resources = 1,
					  .initiator_depth = 1,
					  .rnr_retry_count = 7 };
	int ret;

	if (core_cm_wait(c, OPENRDMA_CM_EVENT_CONNECT_REQUEST, &c->id))
		return -1;
	ret = openrdma_cm_accept(c->id, c->qp, &cp);
	if (ret)
		return core_fail("cm_accept", ret);
	if (core_post_recv(c))
		return -1;
	return core_cm_wait(c, OPENRDMA_CM_EVENT_ESTABLISHED, NULL);
}

/* A first message that beats the server's receive is retried (RNR). */
int core_side_connect(struct core_side *c, const char *host, unsigned int port)
{
	struct openrdma_conn_param cp = { .responder_resources = 1,
					  .initiator_depth = 1,
					  .retry_count = 7,
					  .rnr_retry_count = 7 };
	struct sockaddr_storage ss;
	int ret;

	if (ab_addr(host, port, &ss))
		return -1;
	ret = openrdma_cm_id_create(c->ctx, c->ch, NULL, OPENRDMA_PS_TCP,
				    &c->id);
	if (!ret)
		ret = openrdma_cm_connect(c->id, c->qp, (struct sockaddr *)&ss,
					  &cp);
	if (ret)
		return core_fail("cm_connect", ret);
	if (core_cm_wait(c, OPENRDMA_CM_EVENT_ESTABLISHED, NULL))
		return -1;
	return core_post_recv(c);
}

int core_side_disconnect(struct core_side *c, bool server)
{
	int ret;

	if (!server) {
		ret = openrdma_cm_disconnect(c->id, NULL, 0);
		if (ret)
			return core_fail("cm_disconnect", ret);
	}
	return core_cm_wait(c, OPENRDMA_CM_EVENT_DISCONNECTED, NULL);
}

void core_side_close(struct core_side *c)
{
	if (c->id)
		openrdma_cm_id_destroy(c->id);
	if (c->listen)
		openrdma_cm_id_destroy(c->listen);
	if (c->qp)
		openrdma_qp_destroy(c->qp);
	if (c->ch)
		openrdma_cm_channel_destroy(c->ch);
	if (c->smr)
		openrdma_mr_dereg(c->smr);
	if (c->rmr)
		openrdma_mr_dereg(c->rmr);
	if (c->scq)
		openrdma_cq_destroy(c->scq);
	if (c->rcq)
		openrdma_cq_destroy(c->rcq);
	if (c->pd)
		openrdma_pd_dealloc(c->pd);
	if (c->ctx)
		openrdma_context_close(c->ctx);
	free(c->sbuf);
	free(c->rbuf);
}

/* Spins on cq for one completion, which must be a success. */
static int core_poll_one(struct openrdma_cq *cq)
{
	unsigned int empty = 0;
	double deadline = 0;
	struct openrdma_wc wc;
	int n;

	while (!(n = openrdma_cq_poll(cq, 1, &wc)))
		if (ab_poll_expired(&empty, &deadline)) {
			fprintf(stderr, "core: no completion in time\n");
			return -1;
		}
	if (n < 0)
		return core_fail("cq_poll", n);
	if (wc.status != OPENRDMA_WC_SUCCESS) {
		fprintf(stderr, "core: completion status %s\n",
			openrdma_wc_status_str(wc.status));
		return -1;
	}
	return 0;
}

int core_side_send(struct core_side *c, bool signaled)
{
	struct openrdma_sge sge = { (uintptr_t)c->sbuf, (uint32_t)c->size,
				    c->smr->lkey };
	struct openrdma_send_wr wr = { .sg_list = &sge,
				       .num_sge = 1,
				       .opcode = OPENRDMA_WR_SEND },
				*bad;
	int ret;

	if (signaled)
		wr.send_flags = OPENRDMA_SEND_SIGNALED;
	if (c->size <= c->inline_max)
		wr.send_flags |= OPENRDMA_SEND_INLINE;
	ret = openrdma_qp_post_send(c->qp, &wr, &bad);
	if (ret)
		return core_fail("qp_post_send", ret);
	return signaled ? core_poll_one(c->scq) : 0;
}

int core_side_recv(struct core_side *c)
{
	if (core_poll_one(c->rcq))
		return -1;
	return core_post_recv(c);
}
