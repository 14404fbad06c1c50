/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The side's verbs objects: the interface, the data QPs with their
 * buffers and work-request rings, the workers' CQs; and their teardown.
 */
#include "config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openrdma/registry.h>

#include "examples/perf/openrdma_perf.h"

int perf_ctx_open(struct perf_side *side, struct openrdma_device *dev,
		  struct openrdma_context **ctx_out,
		  struct openrdma_pd **pd_out,
		  struct openrdma_cm_channel **ch_out)
{
	struct openrdma_cm_channel *ch;
	struct openrdma_context *ctx;
	struct openrdma_pd *pd;
	int ret, flags;

	ret = openrdma_device_open(dev, &ctx);
	if (ret)
		return perf_err(side, openrdma_device_name(dev), ret);
	ret = openrdma_pd_alloc(ctx, &pd);
	if (ret) {
		perf_err(side, "pd_alloc", ret);
		goto err_close;
	}
	ret = openrdma_cm_channel_create(ctx, &ch);
	if (ret) {
		perf_err(side, "cm_channel_create", ret);
		goto err_pd;
	}
	/* Waits poll() the fd, so that every one of them has a deadline. */
	flags = fcntl(ch->fd, F_GETFL);
	if (flags < 0 || fcntl(ch->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		ret = perf_err(side, "cm channel fd", -errno);
		goto err_ch;
	}
	*ctx_out = ctx;
	*pd_out = pd;
	*ch_out = ch;
	return 0;

err_ch:
	openrdma_cm_channel_destroy(ch);
err_pd:
	openrdma_pd_dealloc(pd);
err_close:
	openrdma_context_close(ctx);
	return ret;
}

int perf_side_open(struct perf_side *side)
{
	const char *name = side->opts->dev_name;
	struct openrdma_device *dev;
	int ret;

	if (!name)
		name = openrdma_default_interface();
	if (!name)
		return perf_err(side, "no interface found", -OPENRDMA_ENODEV);
	ret = openrdma_device_find(name, &dev);
	if (ret)
		return perf_err(side, name, ret);
	/* The transport's threads (a progress thread) come with the context
	 * and keep this thread's cores: the side's, as a peer benchmark run
	 * under taskset -c keeps its helper threads on its core. */
	perf_pin_span(side->cpu, side->p.threads);
	ret = perf_ctx_open(side, dev, &side->ctx, &side->pd, &side->cm_ch);
	if (ret)
		return ret;
	ret = openrdma_device_query(side->ctx, &side->attr);
	if (ret)
		return perf_err(side, "device_query", ret);
	return 0;
}

static bool has_atomics(const struct perf_side *side)
{
	return side->attr.atomic_cap != OPENRDMA_ATOMIC_NONE;
}

static int remote_access(const struct perf_side *side)
{
	return OPENRDMA_ACCESS_REMOTE_WRITE | OPENRDMA_ACCESS_REMOTE_READ |
	       (has_atomics(side) ? OPENRDMA_ACCESS_REMOTE_ATOMIC : 0);
}

int perf_qp_init(struct perf_side *side, struct openrdma_qp *qp)
{
	struct openrdma_qp_attr attr = {
		.qp_state = OPENRDMA_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = (unsigned int)remote_access(side),
	};

	return openrdma_qp_modify(qp, &attr,
				  OPENRDMA_QP_STATE | OPENRDMA_QP_PKEY_INDEX |
					  OPENRDMA_QP_PORT |
					  OPENRDMA_QP_ACCESS_FLAGS);
}

int perf_qp_open(struct perf_side *side, struct openrdma_pd *pd,
		 struct openrdma_cq *send_cq, struct openrdma_cq *recv_cq,
		 struct openrdma_qp_cap *cap, struct openrdma_qp **qp_out)
{
	struct openrdma_qp_init_attr init = {
		.send_cq = send_cq,
		.recv_cq = recv_cq,
		.cap = *cap,
		.qp_type = OPENRDMA_QPT_RC,
	};
	struct openrdma_qp *qp;
	int ret;

	ret = openrdma_qp_create(pd, &init, &qp);
	if (ret)
		return ret;
	/* INIT now, so that receives can be posted before the connection. */
	ret = perf_qp_init(side, qp);
	if (ret)
		goto err_destroy;
	*cap = init.cap;
	*qp_out = qp;
	return 0;

err_destroy:
	openrdma_qp_destroy(qp);
	return ret;
}

int perf_rx_fill(struct perf_qp *q)
{
	struct openrdma_recv_wr *first, *bad;
	uint64_t n, i;
	int ret;

	n = q->rx_ring - (q->rx_posted - q->rx_done);
	if (!n)
		return 0;
	first = &q->rwr[q->rx_posted % q->rx_ring];
	for (i = 0; i < n; i++) {
		struct openrdma_recv_wr *wr =
			&q->rwr[(q->rx_posted + i) % q->rx_ring];

		wr->wr_id = ((uint64_t)q->local << PERF_WR_QP_SHIFT) |
			    PERF_WR_RECV |
			    ((q->rx_posted + i) & PERF_WR_SEQ_MASK);
		wr->next =
			i + 1 < n ?
				&q->rwr[(q->rx_posted + i + 1) % q->rx_ring] :
				NULL;
	}
	ret = openrdma_qp_post_recv(q->qp, first, &bad);
	if (ret)
		return ret;
	q->rx_posted += n;
	return 0;
}

void perf_rings_layout(struct perf_qp *q, uint32_t size,
		       enum openrdma_wr_opcode opcode, bool spread)
{
	uint64_t stride = perf_round_up(size ? size : 1, PERF_SLOT_ALIGN);
	uint64_t nslots =
		spread && stride < PERF_SPREAD ? PERF_SPREAD / stride : 1;
	uint8_t *send_area = q->buf + q->area;
	bool atomic = opcode == OPENRDMA_WR_ATOMIC_FETCH_AND_ADD ||
		      opcode == OPENRDMA_WR_ATOMIC_CMP_AND_SWP;
	uint32_t i;

	for (i = 0; i < q->ring; i++) {
		struct openrdma_send_wr *wr = &q->swr[i];
		uint64_t off = atomic ? 0 : (i % nslots) * stride;

		memset(&wr->wr, 0, sizeof(wr->wr));
		wr->opcode = opcode;
		wr->next = NULL;
		wr->sg_list = &q->ssge[i];
		wr->num_sge = 1;
		q->ssge[i].lkey = q->mr->lkey;
		q->ssge[i].length = atomic ? 8 : size;
		/* Reads and atomics land in our receive area. */
		if (opcode == OPENRDMA_WR_RDMA_READ || atomic)
			q->ssge[i].addr = (uintptr_t)(q->buf + off);
		else
			q->ssge[i].addr = (uintptr_t)(send_area + off);
		if (atomic) {
			wr->wr.atomic.remote_addr = q->remote.addr;
			wr->wr.atomic.rkey = q->remote.rkey;
			wr->wr.atomic.compare_add = 1;
		} else if (opcode != OPENRDMA_WR_SEND) {
			wr->wr.rdma.remote_addr = q->remote.addr + off;
			wr->wr.rdma.rkey = q->remote.rkey;
		}
	}
	/* Receives take up to the end of the area, so that one posted for
	 * a smaller size in an earlier round still fits any message. */
	for (i = 0; i < q->rx_ring; i++) {
		uint64_t off = (i % nslots) * stride;

		q->rwr[i].sg_list = &q->rsge[i];
		q->rwr[i].num_sge = 1;
		q->rsge[i].addr = (uintptr_t)(q->buf + off);
		q->rsge[i].length = (uint32_t)(q->area - off);
		q->rsge[i].lkey = q->mr->lkey;
	}
}

static int cq_size(struct perf_side *side, struct perf_worker *w)
{
	uint64_t per_qp = (uint64_t)side->p.window + 1 + side->p.rx_depth;
	uint64_t cqe = per_qp * w->nqps + 16;

	if (cqe > (uint64_t)side->attr.max_cqe) {
		fprintf(stderr,
			"%s: %s%u QPs per thread need %llu CQ entries, %s allows %d: lower -q, -w or -r\n",
			PERF_NAME, side->is_server ? "server: " : "", w->nqps,
			(unsigned long long)cqe,
			openrdma_device_name(side->ctx->device),
			side->attr.max_cqe);
		return -OPENRDMA_EINVAL;
	}
	return (int)cqe;
}

static int data_qp_create(struct perf_side *side, struct perf_worker *w,
			  struct perf_qp *q, size_t area)
{
	struct openrdma_qp_cap cap = {
		.max_send_wr = side->p.window + 1,
		.max_recv_wr = side->p.rx_depth,
		.max_send_sge = 1,
		.max_recv_sge = 1,
	};
	int access = OPENRDMA_ACCESS_LOCAL_WRITE | remote_access(side);
	int ret;

	cap.max_inline_data = (uint32_t)side->attr.max_inline_data;
	if (side->p.inline_size >= 0 &&
	    (uint32_t)side->p.inline_size < cap.max_inline_data)
		cap.max_inline_data = (uint32_t)side->p.inline_size;
	ret = perf_qp_open(side, side->pd, w->cq, w->cq, &cap, &q->qp);
	if (ret)
		return perf_err(side, "qp_create", ret);
	if (cap.max_inline_data < side->max_inline)
		side->max_inline = cap.max_inline_data;
	q->area = area;
	q->buf = aligned_alloc(4096, 2 * area);
	if (!q->buf)
		return perf_err(side, "buffer", -OPENRDMA_ENOMEM);
	/* Touched now, so that no page fault lands in a timed loop. */
	memset(q->buf, 0, 2 * area);
	ret = openrdma_mr_reg(side->pd, q->buf, 2 * area, access, &q->mr);
	if (ret)
		return perf_err(side, "mr_reg", ret);
	q->ring = side->p.window;
	q->rx_ring = side->p.rx_depth;
	q->swr = calloc(q->ring, sizeof(*q->swr));
	q->ssge = calloc(q->ring, sizeof(*q->ssge));
	q->rwr = calloc(q->rx_ring, sizeof(*q->rwr));
	q->rsge = calloc(q->rx_ring, sizeof(*q->rsge));
	if (!q->swr || !q->ssge || !q->rwr || !q->rsge)
		return perf_err(side, "rings", -OPENRDMA_ENOMEM);
	perf_rings_layout(q, PERF_SLOT_ALIGN, OPENRDMA_WR_SEND, true);
	ret = perf_rx_fill(q);
	if (ret)
		return perf_err(side, "post_recv", ret);
	return 0;
}

/* Keeps the flow control within what the device's queues hold. */
static void clamp_to_device(struct perf_side *side)
{
	struct perf_params *p = &side->p;
	uint32_t max_wr =
		side->attr.max_qp_wr > 1 ? (uint32_t)side->attr.max_qp_wr : 2;

	if (p->window + 1 > max_wr)
		p->window = max_wr - 1;
	if (p->rx_depth > max_wr)
		p->rx_depth = max_wr;
	perf_params_fix(p);
}

int perf_data_create(struct perf_side *side)
{
	size_t area;
	uint32_t i;
	int ret;

	clamp_to_device(side);
	side->nqps = side->p.qps;
	side->nworkers = side->p.threads;
	side->max_inline = UINT32_MAX;
	area = perf_round_up(perf_params_max_size(&side->p) + PERF_SPREAD,
			     4096);
	side->qps = calloc(side->nqps, sizeof(*side->qps));
	side->workers = calloc(side->nworkers, sizeof(*side->workers));
	if (!side->qps || !side->workers)
		return perf_err(side, "memory", -OPENRDMA_ENOMEM);
	for (i = 0; i < side->nworkers; i++) {
		struct perf_worker *w = &side->workers[i];

		w->side = side;
		w->index = i;
		w->nqps =
			(side->nqps - i + side->nworkers - 1) / side->nworkers;
		w->qps = calloc(w->nqps, sizeof(*w->qps));
		if (!w->qps)
			return perf_err(side, "memory", -OPENRDMA_ENOMEM);
		ret = cq_size(side, w);
		if (ret < 0)
			return ret;
		w->cqe = ret;
		ret = openrdma_cq_create(side->ctx, w->cqe, w, NULL, 0, &w->cq);
		if (ret)
			return perf_err(side, "cq_create", ret);
	}
	/* QP i belongs to worker i % threads on both sides, so that the
	 * two workers of a pair drive the same QPs in the same order. */
	for (i = 0; i < side->nqps; i++) {
		struct perf_worker *w = &side->workers[i % side->nworkers];
		struct perf_qp *q = &side->qps[i];

		q->index = i;
		q->local = i / side->nworkers;
		w->qps[q->local] = q;
		ret = data_qp_create(side, w, q, area);
		if (ret)
			return ret;
	}
	if (side->max_inline == UINT32_MAX)
		side->max_inline = 0;
	return 0;
}

static void qp_close(struct perf_qp *q)
{
	if (q->id)
		openrdma_cm_id_destroy(q->id);
	if (q->qp)
		openrdma_qp_destroy(q->qp);
	if (q->mr)
		openrdma_mr_dereg(q->mr);
	free(q->buf);
	free(q->swr);
	free(q->ssge);
	free(q->rwr);
	free(q->rsge);
}

void perf_side_close(struct perf_side *side)
{
	uint32_t i;

	perf_workers_stop(side);
	if (side->ctx)
		perf_disconnect_all(side);
	for (i = 0; side->qps && i < side->nqps; i++)
		qp_close(&side->qps[i]);
	free(side->qps);
	side->qps = NULL;
	perf_ctl_destroy(side);
	if (side->listen_id)
		openrdma_cm_id_destroy(side->listen_id);
	side->listen_id = NULL;
	for (i = 0; side->workers && i < side->nworkers; i++) {
		struct perf_worker *w = &side->workers[i];

		if (w->cq)
			openrdma_cq_destroy(w->cq);
		free(w->qps);
		free(w->samples);
	}
	free(side->workers);
	side->workers = NULL;
	if (side->cm_ch)
		openrdma_cm_channel_destroy(side->cm_ch);
	side->cm_ch = NULL;
	if (side->pd)
		openrdma_pd_dealloc(side->pd);
	side->pd = NULL;
	if (side->ctx)
		openrdma_context_close(side->ctx);
	side->ctx = NULL;
}
