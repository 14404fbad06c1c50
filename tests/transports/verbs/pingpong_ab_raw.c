/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * pingpong_ab's baseline in the verbs build: one RC QP on libibverbs,
 * connected through librdmacm as perftest's -R connects, and two loops
 * on it: perftest's (ib_send_lat over the RDMA CM: "TX depth 1", "Max
 * inline data 0": every send signaled and its completion polled, the
 * payload not inline) and a lean one (it_pingpong's method on raw verbs:
 * a send in SIGNAL waited for, the payload inline where the device
 * takes it).
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "tests/perf/pingpong_ab.h"

struct ab_base {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen, *id;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_mr *smr, *rmr;
	unsigned char *sbuf, *rbuf;
	size_t size;
	uint32_t inline_max;
};

const struct ab_base_info ab_base_info = {
	.name = { "perftest", "lean" },
	.signal_all = { true, false },
};

static int raw_fail(const char *what)
{
	perror(what);
	return -1;
}

/* Waits for the next CM event, which must be want; *id: its cm_id. */
static int raw_cm_wait(struct ab_base *r, enum rdma_cm_event_type want,
		       struct rdma_cm_id **id)
{
	struct rdma_cm_event *ev;
	int got;

	if (rdma_get_cm_event(r->ch, &ev))
		return raw_fail("rdma_get_cm_event");
	got = ev->event;
	if (id)
		*id = ev->id;
	rdma_ack_cm_event(ev);
	if (got != (int)want) {
		fprintf(stderr, "raw: CM event %s instead of %s\n",
			rdma_event_str(got), rdma_event_str(want));
		return -1;
	}
	return 0;
}

static int raw_post_recv(struct ab_base *r)
{
	struct ibv_sge sge = { (uintptr_t)r->rbuf, (uint32_t)r->size,
			       r->rmr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(r->id->qp, &wr, &bad) ? -1 : 0;
}

/* The PD, CQs, buffers and QP on the connection's device; a receive. */
static int raw_setup(struct ab_base *r)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = AB_DEPTH,
			 .max_recv_wr = AB_DEPTH,
			 .max_send_sge = 1,
			 .max_recv_sge = 1,
			 .max_inline_data = (uint32_t)r->size },
	};
	struct ibv_context *ctx = r->id->verbs;

	r->pd = ibv_alloc_pd(ctx);
	r->scq = r->pd ? ibv_create_cq(ctx, AB_DEPTH, NULL, NULL, 0) : NULL;
	r->rcq = r->scq ? ibv_create_cq(ctx, AB_DEPTH, NULL, NULL, 0) : NULL;
	r->sbuf = calloc(1, r->size);
	r->rbuf = calloc(1, r->size);
	if (!r->rcq || !r->sbuf || !r->rbuf)
		return raw_fail("raw set-up");
	r->smr = ibv_reg_mr(r->pd, r->sbuf, r->size, IBV_ACCESS_LOCAL_WRITE);
	r->rmr = ibv_reg_mr(r->pd, r->rbuf, r->size, IBV_ACCESS_LOCAL_WRITE);
	if (!r->smr || !r->rmr)
		return raw_fail("ibv_reg_mr");
	init.send_cq = r->scq;
	init.recv_cq = r->rcq;
	/* as the IT-API side: inline where the device takes the size */
	if (rdma_create_qp(r->id, r->pd, &init)) {
		init.cap.max_inline_data = 0;
		if (rdma_create_qp(r->id, r->pd, &init))
			return raw_fail("rdma_create_qp");
	}
	r->inline_max = init.cap.max_inline_data;
	return raw_post_recv(r) ? raw_fail("ibv_post_recv") : 0;
}

int ab_base_open(struct ab_base **out, size_t size)
{
	struct ab_base *r = calloc(1, sizeof(*r));

	if (!r)
		return raw_fail("raw side");
	r->size = size;
	*out = r;
	return 0;
}

unsigned char *ab_base_sbuf(struct ab_base *r)
{
	return r->sbuf;
}

const unsigned char *ab_base_rbuf(struct ab_base *r)
{
	return r->rbuf;
}

int ab_base_listen(struct ab_base *r, unsigned int port)
{
	/* IPv4's wildcard: iWARP devices do not listen on IPv6's */
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_ANY) };

	r->ch = rdma_create_event_channel();
	if (!r->ch || rdma_create_id(r->ch, &r->listen, NULL, RDMA_PS_TCP))
		return raw_fail("rdma_create_id");
	if (rdma_bind_addr(r->listen, (struct sockaddr *)&sa) ||
	    rdma_listen(r->listen, 1))
		return raw_fail("rdma_listen");
	return 0;
}

int ab_base_accept(struct ab_base *r)
{
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1 };

	if (raw_cm_wait(r, RDMA_CM_EVENT_CONNECT_REQUEST, &r->id) ||
	    raw_setup(r))
		return -1;
	if (rdma_accept(r->id, &cp))
		return raw_fail("rdma_accept");
	return raw_cm_wait(r, RDMA_CM_EVENT_ESTABLISHED, NULL);
}

int ab_base_connect(struct ab_base *r, const char *host, unsigned int port)
{
	struct rdma_conn_param cp = { .responder_resources = 1,
				      .initiator_depth = 1,
				      .retry_count = 7 };
	struct sockaddr_storage ss;

	if (ab_addr(host, port, &ss))
		return -1;
	r->ch = rdma_create_event_channel();
	if (!r->ch || rdma_create_id(r->ch, &r->id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(r->id, NULL, (struct sockaddr *)&ss, 2000))
		return raw_fail("rdma_resolve_addr");
	if (raw_cm_wait(r, RDMA_CM_EVENT_ADDR_RESOLVED, NULL))
		return -1;
	if (rdma_resolve_route(r->id, 2000))
		return raw_fail("rdma_resolve_route");
	if (raw_cm_wait(r, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL) || raw_setup(r))
		return -1;
	if (rdma_connect(r->id, &cp))
		return raw_fail("rdma_connect");
	return raw_cm_wait(r, RDMA_CM_EVENT_ESTABLISHED, NULL);
}

/* Ends the connection as itx_disconnect() does: the client first. */
int ab_base_disconnect(struct ab_base *r, bool server)
{
	if (!server && rdma_disconnect(r->id))
		return raw_fail("rdma_disconnect");
	if (raw_cm_wait(r, RDMA_CM_EVENT_DISCONNECTED, NULL))
		return -1;
	if (server)
		rdma_disconnect(r->id);
	return 0;
}

void ab_base_close(struct ab_base *r)
{
	if (!r)
		return;
	if (r->id && r->id->qp)
		rdma_destroy_qp(r->id);
	if (r->smr)
		ibv_dereg_mr(r->smr);
	if (r->rmr)
		ibv_dereg_mr(r->rmr);
	if (r->scq)
		ibv_destroy_cq(r->scq);
	if (r->rcq)
		ibv_destroy_cq(r->rcq);
	if (r->pd)
		ibv_dealloc_pd(r->pd);
	if (r->id)
		rdma_destroy_id(r->id);
	if (r->listen)
		rdma_destroy_id(r->listen);
	if (r->ch)
		rdma_destroy_event_channel(r->ch);
	free(r->sbuf);
	free(r->rbuf);
	free(r);
}

/* Spins on cq for one completion, which must be a success. */
static int raw_poll_one(struct ibv_cq *cq)
{
	unsigned int empty = 0;
	double deadline = 0;
	struct ibv_wc wc;
	int n;

	while (!(n = ibv_poll_cq(cq, 1, &wc)))
		if (ab_poll_expired(&empty, &deadline)) {
			fprintf(stderr, "raw: no completion in time\n");
			return -1;
		}
	if (n < 0 || wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "raw: completion status %s\n",
			n < 0 ? "(poll failed)" : ibv_wc_status_str(wc.status));
		return -1;
	}
	return 0;
}

/* perftest's loop (0) sends the payload from its buffer, the lean one
 * (1) inline where it fits. */
int ab_base_send(struct ab_base *r, int l, bool signaled)
{
	struct ibv_sge sge = { (uintptr_t)r->sbuf, (uint32_t)r->size,
			       r->smr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND },
			   *bad;

	if (signaled)
		wr.send_flags = IBV_SEND_SIGNALED;
	if (l == 1 && r->size <= r->inline_max)
		wr.send_flags |= IBV_SEND_INLINE;
	if (ibv_post_send(r->id->qp, &wr, &bad))
		return raw_fail("ibv_post_send");
	return signaled ? raw_poll_one(r->scq) : 0;
}

int ab_base_recv(struct ab_base *r, int l)
{
	(void)l;
	if (raw_poll_one(r->rcq))
		return -1;
	return raw_post_recv(r) ? raw_fail("ibv_post_recv") : 0;
}
