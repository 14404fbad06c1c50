/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The control channel: fixed-size messages on their own RC QP.  Its CQ has
 * a completion channel, so a side waiting for its peer sleeps in poll()
 * instead of spinning, and the CPU it reports for a passive role (the
 * target of RDMA writes) is what the transport spends, not ours.
 */
#include "config.h"

#include <endian.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "examples/perf/openrdma_perf.h"

#define CTL_MAGIC 0x4f52504du /* "ORPM" */
#define CTL_RECVS 8
#define CTL_SLOT 320
#define CTL_SEND_ID UINT64_MAX
#define CTL_CQE 32
#define ABORT_WAIT_MS 2000
/* Transports without CQ notification: how long to sleep between polls. */
#define CTL_NAP_MS 1
/* ctl_sleep(): the wake fd fired */
#define CTL_WOKEN 1

struct wire_msg {
	uint32_t magic;
	uint32_t type;
	int32_t status;
	uint32_t pad;
	uint64_t v[PERF_MSG_VALUES];
	char text[64];
};

_Static_assert(sizeof(struct wire_msg) <= CTL_SLOT, "control message size");

static uint8_t *slot(struct perf_ctl *ctl, unsigned int i)
{
	return ctl->buf + (size_t)i * CTL_SLOT;
}

static int post_recv(struct perf_ctl *ctl, unsigned int i)
{
	struct openrdma_sge sge = {
		.addr = (uintptr_t)slot(ctl, i),
		.length = CTL_SLOT,
		.lkey = ctl->mr->lkey,
	};
	struct openrdma_recv_wr wr = { .wr_id = i,
				       .sg_list = &sge,
				       .num_sge = 1 };
	struct openrdma_recv_wr *bad;

	return openrdma_qp_post_recv(ctl->qp, &wr, &bad);
}

static int post_recvs(struct perf_ctl *ctl)
{
	unsigned int i;
	int ret;

	for (i = 0; i < CTL_RECVS; i++) {
		ret = post_recv(ctl, i);
		if (ret)
			return ret;
	}
	return 0;
}

static int set_nonblock(int fd)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

int perf_ctl_create(struct perf_side *side)
{
	struct perf_ctl *ctl = &side->ctl;
	struct openrdma_qp_cap cap = {
		.max_send_wr = 4,
		.max_recv_wr = CTL_RECVS,
		.max_send_sge = 1,
		.max_recv_sge = 1,
	};
	int ret;

	ret = openrdma_comp_channel_create(side->ctx, &ctl->channel);
	if (ret)
		return perf_err(side, "comp_channel_create", ret);
	ret = set_nonblock(ctl->channel->fd);
	if (ret)
		return perf_err(side, "completion channel fd", ret);
	ret = openrdma_cq_create(side->ctx, CTL_CQE, ctl, ctl->channel, 0,
				 &ctl->cq);
	if (ret)
		return perf_err(side, "cq_create", ret);
	ret = perf_qp_open(side, side->pd, ctl->cq, ctl->cq, &cap, &ctl->qp);
	if (ret)
		return perf_err(side, "qp_create", ret);
	ctl->buf = aligned_alloc(4096, perf_round_up(CTL_SLOT * (CTL_RECVS + 1),
						     4096));
	if (!ctl->buf)
		return perf_err(side, "buffer", -OPENRDMA_ENOMEM);
	memset(ctl->buf, 0, CTL_SLOT * (CTL_RECVS + 1));
	ret = openrdma_mr_reg(side->pd, ctl->buf, CTL_SLOT * (CTL_RECVS + 1),
			      OPENRDMA_ACCESS_LOCAL_WRITE, &ctl->mr);
	if (ret)
		return perf_err(side, "mr_reg", ret);
	ret = post_recvs(ctl);
	if (ret)
		return perf_err(side, "post_recv", ret);
	/* Without notification the waits fall back to short naps. */
	ret = openrdma_cq_req_notify(ctl->cq, 0);
	if (ret && ret != -OPENRDMA_EOPNOTSUPP)
		return perf_err(side, "cq_req_notify", ret);
	ctl->notify = !ret;
	return 0;
}

static void decode(const uint8_t *buf, struct perf_msg *msg)
{
	struct wire_msg w;
	int i;

	memcpy(&w, buf, sizeof(w));
	msg->type = be32toh(w.type);
	msg->status = (int32_t)be32toh((uint32_t)w.status);
	for (i = 0; i < PERF_MSG_VALUES; i++)
		msg->v[i] = be64toh(w.v[i]);
	memcpy(msg->text, w.text, sizeof(msg->text));
	msg->text[sizeof(msg->text) - 1] = '\0';
	if (be32toh(w.magic) != CTL_MAGIC)
		msg->type = 0;
}

static void encode(const struct perf_msg *msg, uint8_t *buf)
{
	struct wire_msg w = {
		.magic = htobe32(CTL_MAGIC),
		.type = htobe32(msg->type),
		.status = (int32_t)htobe32((uint32_t)msg->status),
	};
	int i;

	for (i = 0; i < PERF_MSG_VALUES; i++)
		w.v[i] = htobe64(msg->v[i]);
	memcpy(w.text, msg->text, sizeof(w.text));
	w.text[sizeof(w.text) - 1] = '\0';
	memcpy(buf, &w, sizeof(w));
}

/* Takes the control CQ's completions; *sent is set by our send's. */
static int ctl_poll(struct perf_side *side, bool *sent)
{
	struct perf_ctl *ctl = &side->ctl;
	struct openrdma_wc wc[CTL_RECVS];
	struct perf_msg *msg;
	int n, i, ret;

	n = openrdma_cq_poll(ctl->cq, CTL_RECVS, wc);
	if (n < 0)
		return perf_err(side, "control cq_poll", n);
	for (i = 0; i < n; i++) {
		if (wc[i].status != OPENRDMA_WC_SUCCESS) {
			/*
			 * After BYE the peer disconnects as soon as it has
			 * what it needs; our last send may then complete in
			 * error though it arrived: a reply would have shown.
			 */
			if (!ctl->ending)
				fprintf(stderr,
					"%s: %slost the %s (control connection: %s)\n",
					PERF_NAME,
					side->is_server ? "server: " : "",
					side->is_server ? "client" : "server",
					openrdma_wc_status_str(wc[i].status));
			side->peer_gone = true;
			return -OPENRDMA_ECONNRESET;
		}
		if (wc[i].wr_id == CTL_SEND_ID) {
			if (sent)
				*sent = true;
			continue;
		}
		if (ctl->inbox_count ==
		    sizeof(ctl->inbox) / sizeof(ctl->inbox[0]))
			return perf_err(side, "control inbox",
					-OPENRDMA_ENOSPC);
		msg = &ctl->inbox[(ctl->inbox_head + ctl->inbox_count) %
				  (sizeof(ctl->inbox) / sizeof(ctl->inbox[0]))];
		decode(slot(ctl, (unsigned int)wc[i].wr_id), msg);
		ctl->inbox_count++;
		if (msg->type == PERF_MSG_BYE)
			ctl->ending = true;
		ret = post_recv(ctl, (unsigned int)wc[i].wr_id);
		if (ret)
			return perf_err(side, "control post_recv", ret);
	}
	return n;
}

/*
 * Sleeps until the control CQ may have something, wake_fd is readable
 * (CTL_WOKEN) or ms pass; completions it takes on the way are accounted
 * as ctl_poll() does.  Arming comes first and a poll follows it, so a
 * completion that arrived in between is not slept through.
 */
static int ctl_sleep(struct perf_side *side, int wake_fd, int ms, bool *sent)
{
	struct perf_ctl *ctl = &side->ctl;
	struct pollfd pfd[2] = {
		{ .fd = ctl->notify ? ctl->channel->fd : -1, .events = POLLIN },
		{ .fd = wake_fd, .events = POLLIN },
	};
	struct openrdma_cq *cq;
	uint64_t val;
	void *cq_ctx;
	int ret;

	if (ctl->notify) {
		ret = openrdma_cq_req_notify(ctl->cq, 0);
		if (ret)
			return perf_err(side, "cq_req_notify", ret);
		ret = ctl_poll(side, sent);
		if (ret)
			return ret < 0 ? ret : 0;
	} else if (ms > CTL_NAP_MS) {
		ms = CTL_NAP_MS;
	}
	if (poll(pfd, 2, ms) < 0 && errno != EINTR)
		return -errno;
	if (pfd[0].revents & POLLIN) {
		ret = openrdma_cq_event_get(ctl->channel, &cq, &cq_ctx);
		if (!ret)
			openrdma_cq_events_ack(cq, 1);
		else if (ret != -OPENRDMA_EAGAIN)
			return perf_err(side, "cq_event_get", ret);
	}
	if (pfd[1].revents & POLLIN) {
		if (read(wake_fd, &val, sizeof(val)) < 0 && errno != EAGAIN)
			return -errno;
		return CTL_WOKEN;
	}
	return 0;
}

static int ms_left(uint64_t deadline)
{
	int64_t left = ((int64_t)deadline - (int64_t)perf_now_ns()) / 1000000;

	return left > 0x7fffffff ? 0x7fffffff : (int)left;
}

static uint64_t deadline_of(const struct perf_side *side, int timeout_ms)
{
	uint64_t ms = timeout_ms < 0 ? side->p.timeout_s * 1000ull :
				       (uint64_t)timeout_ms;

	return perf_now_ns() + ms * 1000000ull;
}

int perf_ctl_recv(struct perf_side *side, struct perf_msg *msg, int wake_fd,
		  int timeout_ms)
{
	struct perf_ctl *ctl = &side->ctl;
	uint64_t deadline = deadline_of(side, timeout_ms);
	int ret, left;

	for (;;) {
		if (ctl->inbox_count) {
			*msg = ctl->inbox[ctl->inbox_head];
			ctl->inbox_head =
				(ctl->inbox_head + 1) %
				(sizeof(ctl->inbox) / sizeof(ctl->inbox[0]));
			ctl->inbox_count--;
			return 0;
		}
		/* Messages that arrived before a failure are still news:
		 * a BYE, then the flush of the receives behind it. */
		ret = ctl_poll(side, NULL);
		if (ret < 0 && !ctl->inbox_count)
			return ret;
		if (ret)
			continue;
		left = ms_left(deadline);
		if (left <= 0)
			return -OPENRDMA_ETIMEDOUT;
		ret = ctl_sleep(side, wake_fd, left, NULL);
		if (ret == CTL_WOKEN)
			return -OPENRDMA_EINTR;
		if (ret < 0 && !ctl->inbox_count)
			return ret;
	}
}

static int ctl_send(struct perf_side *side, const struct perf_msg *msg,
		    int timeout_ms)
{
	struct perf_ctl *ctl = &side->ctl;
	uint8_t *buf = slot(ctl, CTL_RECVS);
	struct openrdma_sge sge = {
		.addr = (uintptr_t)buf,
		.length = sizeof(struct wire_msg),
		.lkey = ctl->mr->lkey,
	};
	struct openrdma_send_wr wr = {
		.wr_id = CTL_SEND_ID,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = OPENRDMA_WR_SEND,
		.send_flags = OPENRDMA_SEND_SIGNALED,
	};
	uint64_t deadline = deadline_of(side, timeout_ms);
	struct openrdma_send_wr *bad;
	bool sent = false;
	int ret, left;

	encode(msg, buf);
	ret = openrdma_qp_post_send(ctl->qp, &wr, &bad);
	if (ret)
		return perf_err(side, "control post_send", ret);
	/* One send at a time: the slot is reused by the next one. */
	for (;;) {
		ret = ctl_poll(side, &sent);
		if (ret < 0)
			return ctl->ending ? 0 : ret;
		if (sent)
			return 0;
		if (ret > 0)
			continue;
		left = ms_left(deadline);
		if (left <= 0)
			return perf_err(side, "control send",
					-OPENRDMA_ETIMEDOUT);
		ret = ctl_sleep(side, -1, left, &sent);
		if (ret < 0)
			return ctl->ending ? 0 : ret;
	}
}

int perf_ctl_send(struct perf_side *side, const struct perf_msg *msg)
{
	return ctl_send(side, msg, -1);
}

int perf_ctl_expect(struct perf_side *side, uint32_t want, struct perf_msg *msg)
{
	int ret;

	for (;;) {
		ret = perf_ctl_recv(side, msg, -1, -1);
		if (ret == -OPENRDMA_ETIMEDOUT)
			return perf_err(side, "waiting for the peer", ret);
		if (ret)
			return ret;
		if (msg->type == PERF_MSG_HEARTBEAT)
			continue;
		if (msg->type == PERF_MSG_ABORT) {
			side->peer_gone = true;
			fprintf(stderr, "%s: %sthe peer stopped: %s\n",
				PERF_NAME, side->is_server ? "server: " : "",
				msg->text[0] ? msg->text :
					       openrdma_strerror(msg->status));
			return msg->status ? msg->status : -OPENRDMA_ECANCELED;
		}
		if (msg->type != want) {
			fprintf(stderr,
				"%s: %scontrol message %u, expected %u\n",
				PERF_NAME, side->is_server ? "server: " : "",
				msg->type, want);
			return -OPENRDMA_EPROTO;
		}
		return 0;
	}
}

void perf_ctl_abort(struct perf_side *side, int code)
{
	struct perf_msg msg = { .type = PERF_MSG_ABORT, .status = code };

	if (!side->ctl.qp || !side->ctl.id || side->peer_gone)
		return;
	snprintf(msg.text, sizeof(msg.text), "%s%s",
		 side->is_server ? "server: " : "client: ",
		 openrdma_strerror(code));
	ctl_send(side, &msg, ABORT_WAIT_MS);
}

int perf_ctl_reset(struct perf_side *side)
{
	struct perf_ctl *ctl = &side->ctl;
	struct openrdma_qp_attr attr = { .qp_state = OPENRDMA_QPS_RESET };
	struct openrdma_wc wc[CTL_RECVS];
	int ret;

	ret = openrdma_qp_modify(ctl->qp, &attr, OPENRDMA_QP_STATE);
	if (ret)
		return ret;
	/* The receives flushed by the failed attempt. */
	while (openrdma_cq_poll(ctl->cq, CTL_RECVS, wc) > 0)
		;
	ctl->inbox_count = 0;
	ret = perf_qp_init(side, ctl->qp);
	if (ret)
		return ret;
	return post_recvs(ctl);
}

void perf_ctl_destroy(struct perf_side *side)
{
	struct perf_ctl *ctl = &side->ctl;

	if (ctl->id)
		openrdma_cm_id_destroy(ctl->id);
	ctl->id = NULL;
	if (ctl->qp)
		openrdma_qp_destroy(ctl->qp);
	ctl->qp = NULL;
	if (ctl->mr)
		openrdma_mr_dereg(ctl->mr);
	ctl->mr = NULL;
	free(ctl->buf);
	ctl->buf = NULL;
	if (ctl->cq)
		openrdma_cq_destroy(ctl->cq);
	ctl->cq = NULL;
	if (ctl->channel)
		openrdma_comp_channel_destroy(ctl->channel);
	ctl->channel = NULL;
}
