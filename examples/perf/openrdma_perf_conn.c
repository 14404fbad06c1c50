/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Connections: the CM private data that carries each buffer's address and
 * key, listening, the control connection, the data QPs' connections (many
 * in flight at once) and the disconnect at the end.
 */
#include "config.h"

#include <arpa/inet.h>
#include <endian.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "examples/perf/openrdma_perf.h"

#define PERF_MAGIC 0x4f525046u /* "ORPF" */
#define PERF_VERSION 1
#define CONNECTS_IN_FLIGHT 256
#define LISTEN_BACKLOG 1024
#define RETRY_PAUSE_US 100000
#define DISCONNECT_WAIT_MS 1000

/* 40 bytes: within the 56 that an InfiniBand CM request carries. */
struct wire_pdata {
	uint32_t magic;
	uint16_t version;
	uint8_t kind;
	uint8_t pad;
	uint32_t session;
	uint32_t index;
	uint64_t addr;
	uint64_t length;
	uint32_t rkey;
	uint32_t pad2;
};

_Static_assert(sizeof(struct wire_pdata) == 40, "private data layout");

static int timeout_ms(const struct perf_side *side)
{
	return (int)side->p.timeout_s * 1000;
}

int perf_cm_wait_on(struct perf_side *side, struct openrdma_cm_channel *ch,
		    int ms, struct openrdma_cm_event **ev_out)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	uint64_t deadline;
	int ret, left;

	if (ms < 0)
		ms = timeout_ms(side);
	deadline = perf_now_ns() + (uint64_t)ms * 1000000ull;
	for (;;) {
		ret = openrdma_cm_event_get(ch, ev_out);
		if (ret != -OPENRDMA_EAGAIN)
			return ret;
		left = (int)(((int64_t)deadline - (int64_t)perf_now_ns()) /
			     1000000);
		if (left <= 0)
			return -OPENRDMA_ETIMEDOUT;
		if (side->abort)
			return -OPENRDMA_ECANCELED;
		if (poll(&pfd, 1, left) < 0 && errno != EINTR)
			return -errno;
	}
}

int perf_cm_wait(struct perf_side *side, int ms,
		 struct openrdma_cm_event **ev_out)
{
	return perf_cm_wait_on(side, side->cm_ch, ms, ev_out);
}

void perf_conn_encode(const struct perf_conn_info *info, uint8_t *out,
		      uint8_t *len_out)
{
	struct wire_pdata w = {
		.magic = htobe32(PERF_MAGIC),
		.version = htobe16(PERF_VERSION),
		.kind = (uint8_t)info->kind,
		.session = htobe32(info->session),
		.index = htobe32(info->remote.index),
		.addr = htobe64(info->remote.addr),
		.length = htobe64(info->remote.length),
		.rkey = htobe32(info->remote.rkey),
	};

	memcpy(out, &w, sizeof(w));
	*len_out = sizeof(w);
}

int perf_conn_decode(const struct openrdma_cm_event *ev,
		     struct perf_conn_info *info)
{
	struct wire_pdata w;

	if (ev->param.private_data_len < sizeof(w))
		return -OPENRDMA_EPROTO;
	memcpy(&w, ev->param.private_data, sizeof(w));
	if (be32toh(w.magic) != PERF_MAGIC ||
	    be16toh(w.version) != PERF_VERSION)
		return -OPENRDMA_EPROTO;
	info->kind = w.kind;
	info->session = be32toh(w.session);
	info->remote.index = be32toh(w.index);
	info->remote.addr = be64toh(w.addr);
	info->remote.length = be64toh(w.length);
	info->remote.rkey = be32toh(w.rkey);
	return 0;
}

void perf_conn_param(struct perf_side *side, struct openrdma_conn_param *param,
		     const uint8_t *pdata, uint8_t len)
{
	int ird = side->attr.max_qp_rd_atom,
	    ord = side->attr.max_qp_init_rd_atom;

	memset(param, 0, sizeof(*param));
	param->private_data = pdata;
	param->private_data_len = len;
	param->responder_resources = (uint8_t)(ird > 16 ? 16 : ird);
	param->initiator_depth = (uint8_t)(ord > 16 ? 16 : ord);
	param->retry_count = 7;
	param->rnr_retry_count = 7;
}

void perf_addr_set_port(struct sockaddr_storage *ss, unsigned int port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
	else if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
}

int perf_listen_on(struct perf_side *side, struct openrdma_context *ctx,
		   struct openrdma_cm_channel *ch, unsigned int port,
		   struct openrdma_cm_id **id_out,
		   struct sockaddr_storage *addr_out)
{
	struct openrdma_port_attr pa;
	struct openrdma_cm_id *id;
	struct sockaddr_storage ss;
	int ret;

	ret = openrdma_port_query(ctx, 1, &pa);
	if (ret)
		return perf_err(side, "port_query", ret);
	ss = pa.addr;
	perf_addr_set_port(&ss, port);
	ret = openrdma_cm_id_create(ctx, ch, NULL, OPENRDMA_PS_TCP, &id);
	if (ret)
		return perf_err(side, "cm_id_create", ret);
	ret = openrdma_cm_listen(id, (struct sockaddr *)&ss, LISTEN_BACKLOG);
	if (ret) {
		perf_err(side, "cm_listen", ret);
		goto err_destroy;
	}
	ret = openrdma_cm_local_addr(id, &ss);
	if (ret) {
		perf_err(side, "cm_local_addr", ret);
		goto err_destroy;
	}
	*id_out = id;
	*addr_out = ss;
	return 0;

err_destroy:
	openrdma_cm_id_destroy(id);
	return ret;
}

int perf_listen(struct perf_side *side)
{
	const struct perf_opts *o = side->opts;

	/* -l picks a free port, unless told one: two runs never collide. */
	return perf_listen_on(side, side->ctx, side->cm_ch,
			      o->local && !o->port_set ? 0 : o->port,
			      &side->listen_id, &side->addr);
}

int perf_resolve(struct perf_side *side, const char *host,
		 struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICSERV,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *res;
	char port[16];
	int ret;

	snprintf(port, sizeof(port), "%u", side->opts->port);
	ret = getaddrinfo(host, port, &hints, &res);
	if (ret) {
		fprintf(stderr, "%s: %s: %s\n", PERF_NAME, host,
			gai_strerror(ret));
		return -OPENRDMA_EADDRNOTAVAIL;
	}
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
}

/* One attempt: 1 when the server is not (yet) there, 0 when connected. */
static int ctl_connect_once(struct perf_side *side,
			    const struct sockaddr_storage *dst)
{
	struct perf_conn_info info = { .kind = PERF_CONN_CTL,
				       .session = side->p.session };
	struct openrdma_conn_param param;
	struct openrdma_cm_event *ev;
	uint8_t pdata[64], len;
	int ret;

	perf_conn_encode(&info, pdata, &len);
	perf_conn_param(side, &param, pdata, len);
	ret = openrdma_cm_id_create(side->ctx, side->cm_ch, &side->ctl,
				    OPENRDMA_PS_TCP, &side->ctl.id);
	if (ret)
		return perf_err(side, "cm_id_create", ret);
	ret = openrdma_cm_connect(side->ctl.id, side->ctl.qp,
				  (const struct sockaddr *)dst, &param);
	if (ret)
		return perf_err(side, "cm_connect", ret);
	ret = perf_cm_wait(side, -1, &ev);
	if (ret)
		return perf_err(side, "connect", ret);
	if (ev->event == OPENRDMA_CM_EVENT_ESTABLISHED) {
		ret = perf_conn_decode(ev, &info);
		openrdma_cm_event_ack(ev);
		side->ctl.connected = true;
		if (ret || info.kind != PERF_CONN_CTL)
			return perf_err(side, "server's reply",
					-OPENRDMA_EPROTO);
		return 0;
	}
	ret = ev->status;
	if (ev->event == OPENRDMA_CM_EVENT_REJECTED &&
	    ret == -OPENRDMA_EREJECTED) {
		openrdma_cm_event_ack(ev);
		fprintf(stderr, "%s: the server is busy with another client\n",
			PERF_NAME);
		return -OPENRDMA_EBUSY;
	}
	if (side->opts->verbose)
		fprintf(stderr, "%s: connect: %s (%s), retrying\n", PERF_NAME,
			openrdma_cm_event_str(ev->event),
			openrdma_strerror(ret));
	openrdma_cm_event_ack(ev);
	openrdma_cm_id_destroy(side->ctl.id);
	side->ctl.id = NULL;
	return 1;
}

int perf_ctl_connect(struct perf_side *side, const struct sockaddr_storage *dst)
{
	uint64_t deadline = perf_now_ns() + side->p.timeout_s * 1000000000ull;
	int ret;

	for (;;) {
		ret = ctl_connect_once(side, dst);
		if (ret <= 0)
			return ret;
		if (perf_now_ns() > deadline) {
			fprintf(stderr, "%s: no server answered within %u s\n",
				PERF_NAME, side->p.timeout_s);
			return -OPENRDMA_ETIMEDOUT;
		}
		/* A failed attempt leaves the QP in ERR. */
		ret = perf_ctl_reset(side);
		if (ret)
			return perf_err(side, "control QP reset", ret);
		usleep(RETRY_PAUSE_US);
	}
}

static void reject(struct openrdma_cm_id *id)
{
	openrdma_cm_reject(id, NULL, 0);
	openrdma_cm_id_destroy(id);
}

int perf_ctl_accept(struct perf_side *side)
{
	const struct perf_opts *o = side->opts;
	struct openrdma_conn_param param;
	struct openrdma_cm_event *ev;
	struct perf_conn_info info;
	uint8_t pdata[64], len;
	int ret, wait_ms;

	/* A server started by hand waits for its client as long as it takes,
	 * unless told otherwise; with -l the client is on its way. */
	wait_ms = o->local || o->timeout_set ? -1 : 0x7fffffff;
	for (;;) {
		ret = perf_cm_wait(side, wait_ms, &ev);
		if (ret)
			return perf_err(side, "waiting for a client", ret);
		if (ev->event != OPENRDMA_CM_EVENT_CONNECT_REQUEST) {
			openrdma_cm_event_ack(ev);
			continue;
		}
		if (perf_conn_decode(ev, &info) || info.kind != PERF_CONN_CTL) {
			/* Stale data connections of an earlier client. */
			reject(ev->id);
			openrdma_cm_event_ack(ev);
			continue;
		}
		break;
	}
	side->p.session = info.session;
	side->ctl.id = ev->id;
	openrdma_cm_event_ack(ev);
	perf_conn_encode(&info, pdata, &len);
	perf_conn_param(side, &param, pdata, len);
	ret = openrdma_cm_accept(side->ctl.id, side->ctl.qp, &param);
	if (ret)
		return perf_err(side, "cm_accept", ret);
	ret = perf_cm_wait(side, -1, &ev);
	if (ret)
		return perf_err(side, "accept", ret);
	ret = ev->event == OPENRDMA_CM_EVENT_ESTABLISHED ? 0 : -OPENRDMA_EPROTO;
	side->ctl.connected = !ret;
	if (ret)
		fprintf(stderr, "%s: server: accept: %s\n", PERF_NAME,
			openrdma_cm_event_str(ev->event));
	openrdma_cm_event_ack(ev);
	return ret;
}

static void local_info(struct perf_side *side, const struct perf_qp *q,
		       struct perf_conn_info *info)
{
	info->kind = PERF_CONN_DATA;
	info->session = side->p.session;
	info->remote.index = q->index;
	info->remote.addr = (uintptr_t)q->buf;
	info->remote.length = q->area;
	info->remote.rkey = q->mr->rkey;
}

static int data_connect_one(struct perf_side *side, struct perf_qp *q,
			    const struct sockaddr_storage *dst)
{
	struct openrdma_conn_param param;
	struct perf_conn_info info;
	uint8_t pdata[64], len;
	int ret;

	local_info(side, q, &info);
	perf_conn_encode(&info, pdata, &len);
	perf_conn_param(side, &param, pdata, len);
	ret = openrdma_cm_id_create(side->ctx, side->cm_ch, q, OPENRDMA_PS_TCP,
				    &q->id);
	if (ret)
		return perf_err(side, "cm_id_create", ret);
	ret = openrdma_cm_connect(q->id, q->qp, (const struct sockaddr *)dst,
				  &param);
	if (ret)
		return perf_err(side, "cm_connect", ret);
	return 0;
}

static int data_accept_one(struct perf_side *side, struct openrdma_cm_event *ev)
{
	struct openrdma_conn_param param;
	struct perf_conn_info info;
	struct perf_qp *q;
	uint8_t pdata[64], len;
	int ret;

	if (perf_conn_decode(ev, &info) || info.kind != PERF_CONN_DATA ||
	    info.session != side->p.session ||
	    info.remote.index >= side->nqps ||
	    side->qps[info.remote.index].id) {
		reject(ev->id);
		return 0;
	}
	q = &side->qps[info.remote.index];
	q->id = ev->id;
	q->remote = info.remote;
	local_info(side, q, &info);
	perf_conn_encode(&info, pdata, &len);
	perf_conn_param(side, &param, pdata, len);
	ret = openrdma_cm_accept(q->id, q->qp, &param);
	if (ret)
		return perf_err(side, "cm_accept", ret);
	return 0;
}

/* The client made each id with its QP as context; a request's id has the
 * listener's, so the server looks its QP up. */
static struct perf_qp *qp_of(struct perf_side *side, struct openrdma_cm_id *id)
{
	struct perf_qp *q = id->context;
	uint32_t i;

	if (!side->is_server)
		return q >= side->qps && q < side->qps + side->nqps ? q : NULL;
	for (i = 0; i < side->nqps; i++)
		if (side->qps[i].id == id)
			return &side->qps[i];
	return NULL;
}

static int data_established(struct perf_side *side,
			    struct openrdma_cm_event *ev)
{
	struct perf_qp *q = qp_of(side, ev->id);
	struct perf_conn_info info;

	if (!q || q->established)
		return perf_err(side, "unexpected connection",
				-OPENRDMA_EPROTO);
	if (!side->is_server) {
		if (perf_conn_decode(ev, &info) ||
		    info.kind != PERF_CONN_DATA ||
		    info.remote.index != q->index)
			return perf_err(side, "server's data reply",
					-OPENRDMA_EPROTO);
		q->remote = info.remote;
	}
	q->established = true;
	return 0;
}

int perf_data_connect(struct perf_side *side,
		      const struct sockaddr_storage *dst)
{
	struct openrdma_cm_event *ev;
	uint32_t started = 0, done = 0;
	int ret = 0;

	while (done < side->nqps) {
		while (!side->is_server && started < side->nqps &&
		       started - done < CONNECTS_IN_FLIGHT) {
			ret = data_connect_one(side, &side->qps[started], dst);
			if (ret)
				return ret;
			started++;
		}
		ret = perf_cm_wait(side, -1, &ev);
		if (ret)
			return perf_err(side, "connecting data QPs", ret);
		switch (ev->event) {
		case OPENRDMA_CM_EVENT_CONNECT_REQUEST:
			ret = side->is_server ? data_accept_one(side, ev) :
						-OPENRDMA_EPROTO;
			break;
		case OPENRDMA_CM_EVENT_ESTABLISHED:
			ret = data_established(side, ev);
			done++;
			break;
		default:
			fprintf(stderr, "%s: %sdata QP connection: %s (%s)\n",
				PERF_NAME, side->is_server ? "server: " : "",
				openrdma_cm_event_str(ev->event),
				openrdma_strerror(ev->status));
			ret = -OPENRDMA_ECONNABORTED;
			break;
		}
		openrdma_cm_event_ack(ev);
		if (ret)
			return ret;
	}
	return 0;
}

/* Takes DISCONNECTED events until every connection reported one. */
static void take_disconnects(struct perf_side *side, uint32_t *live, int ms)
{
	uint64_t deadline = perf_now_ns() + (uint64_t)ms * 1000000ull;
	struct openrdma_cm_event *ev;
	struct perf_qp *q;
	int left;

	while (*live) {
		left = (int)(((int64_t)deadline - (int64_t)perf_now_ns()) /
			     1000000);
		if (left <= 0 || perf_cm_wait(side, left, &ev))
			return;
		if (ev->event == OPENRDMA_CM_EVENT_DISCONNECTED) {
			if (ev->id == side->ctl.id && side->ctl.connected) {
				side->ctl.connected = false;
				(*live)--;
			} else if ((q = qp_of(side, ev->id)) &&
				   q->established) {
				q->established = false;
				(*live)--;
			}
		} else if (ev->event == OPENRDMA_CM_EVENT_CONNECT_REQUEST) {
			reject(ev->id);
		}
		openrdma_cm_event_ack(ev);
	}
}

void perf_disconnect_all(struct perf_side *side)
{
	uint32_t i, live = side->ctl.connected;

	for (i = 0; side->qps && i < side->nqps; i++)
		live += side->qps[i].established;
	/*
	 * After BYE the client disconnects first: were the server first, the
	 * client's BYE could still be unacknowledged and complete in error.
	 */
	if (side->is_server && side->bye)
		take_disconnects(side, &live, DISCONNECT_WAIT_MS);
	for (i = 0; side->qps && i < side->nqps; i++)
		if (side->qps[i].established)
			openrdma_cm_disconnect(side->qps[i].id, NULL, 0);
	if (side->ctl.connected)
		openrdma_cm_disconnect(side->ctl.id, NULL, 0);
	/* Bounded: a peer that died may never answer. */
	take_disconnects(side, &live, DISCONNECT_WAIT_MS);
}
