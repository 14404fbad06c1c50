/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * RC connections.  When a QP reaches RTR (by hand or through the CM), it
 * asks the context owning its destination QPN, through that context's
 * node socket, for a connection: both sides make a segment with their two
 * outgoing rings (requests, answers), exchange read-only descriptors of
 * them, and keep the socket as the connection's lifeline: DETACH on it
 * says the peer QP was reset or destroyed, its end says the peer died.
 *
 * If both QPs ask at once, the connection asked for by the lower QPN is
 * kept on both sides.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <utlist.h>

#include <openrdma/log.h>

#include "transports/shm/shm.h"

#define HANDSHAKE_MS 2000
/* The largest channel segment a peer may hand us. */
#define CHAN_SEG_MAX                                                  \
	(SHM_PAGE + SHM_CHAN_RINGS * ((size_t)65536 * SHM_CACHELINE + \
				      ((size_t)64 << 20)))

static struct shm_conn *conn_new(struct shm_qp *qp, uint32_t peer_qpn,
				 uint32_t initiator)
{
	struct shm_ctx *sctx = qp->ctx;
	struct shm_conn *conn;

	conn = calloc(1, sizeof(*conn));
	if (!conn)
		return NULL;
	atomic_init(&conn->ref, 1);
	conn->ctx = sctx;
	conn->qp = qp;
	conn->peer_qpn = peer_qpn;
	conn->initiator = initiator;
	conn->sock = -1;
	atomic_init(&conn->slot, -1);
	conn->theirs.fd = -1;
	if (shm_chan_create("openrdma-shm-qp", SHM_SEG_QP, SHM_CHAN_RINGS,
			    sctx->par.ring_entries, sctx->par.ring_data,
			    &conn->own)) {
		free(conn);
		return NULL;
	}
	conn->own_hdr = conn->own.addr;
	conn->own_hdr->qpn = qp->base.qp_num;
	return conn;
}

static void conn_free(struct shm_conn *conn)
{
	if (conn->sock >= 0)
		close(conn->sock);
	shm_seg_destroy(&conn->theirs);
	shm_seg_destroy(&conn->own);
	shm_peer_put(conn->ctx, conn->peer);
	free(conn);
}

struct shm_conn *shm_conn_get_gen(struct shm_qp *qp, uint32_t *gen)
{
	struct shm_conn *conn;

	pthread_mutex_lock(&qp->conn_lock);
	conn = qp->conn;
	if (conn)
		atomic_fetch_add(&conn->ref, 1);
	*gen = atomic_load_explicit(&qp->conn_gen, memory_order_relaxed);
	pthread_mutex_unlock(&qp->conn_lock);
	return conn;
}

struct shm_conn *shm_conn_get(struct shm_qp *qp)
{
	uint32_t gen;

	return shm_conn_get_gen(qp, &gen);
}

/* Says what executed so far, and wakes the initiator, which may sleep:
 * it has answers to take. */
static void ack_now(struct shm_conn *conn)
{
	shm_rx_ack(conn);
	shm_peer_kick(conn->peer);
}

/* Rounds of a drain: a peer that goes on writing after its DETACH or
 * DREQ gets no more. */
#define DRAIN_ROUNDS 64

/* Takes conn's slot, waiting out the thread that holds it (a pass: a
 * moment at most); NULL if conn was closed. */
static struct shm_slot *conn_slot_take(struct shm_conn *conn)
{
	int slot = atomic_load(&conn->slot);
	struct shm_slot *s;

	if (slot < 0)
		return NULL;
	s = &conn->ctx->prog.slots[slot];
	while (!shm_slot_take(s))
		sched_yield();
	/* closed meanwhile: the slot may serve another connection */
	if (atomic_load(&s->kind) != SHM_SLOT_CONN || s->obj != conn) {
		shm_slot_release(s);
		return NULL;
	}
	return s;
}

/*
 * Waits out a drain of the QP's requests under way in another thread, and
 * says what a polling application's pass held back: the acknowledgement
 * of a receive whose completion the application saw is in the ring
 * before what the application sends next (a DREQ on the socket overtakes
 * nothing).
 */
static void conn_settle(struct shm_conn *conn)
{
	struct shm_slot *s = conn_slot_take(conn);

	if (!s)
		return;
	if (conn->ack_due && !atomic_load(&conn->dead))
		ack_now(conn);
	shm_slot_release(s);
}

/*
 * What the peer wrote before its DETACH or DREQ, or before it died, is in
 * the rings: the answers and acknowledgements of our requests among
 * them, which its conn_settle() writes first.  Drained before the
 * connection or the QP dies, or they would be lost and our requests
 * flushed, though the peer had executed them.  A pass would not do: it
 * skips a ring that an application thread holds for a moment.
 */
static void conn_drain(struct shm_conn *conn)
{
	struct shm_slot *s;
	int i;

	if (atomic_load(&conn->dead))
		return;
	s = conn_slot_take(conn);
	if (!s)
		return;
	for (i = 0; i < DRAIN_ROUNDS && shm_conn_rx(conn) > 0; i++)
		;
	shm_slot_release(s);
}

/* Runs fn on qp's connection, if it has one, holding a reference. */
static void qp_conn_run(struct shm_qp *qp, void (*fn)(struct shm_conn *))
{
	struct shm_conn *conn = shm_conn_get(qp);

	if (!conn)
		return;
	fn(conn);
	shm_conn_put(conn);
}

void shm_conn_rx_drain(struct shm_qp *qp)
{
	qp_conn_run(qp, conn_drain);
}

void shm_conn_rx_settle(struct shm_qp *qp)
{
	qp_conn_run(qp, conn_settle);
}

void shm_conn_put(struct shm_conn *conn)
{
	if (atomic_fetch_sub(&conn->ref, 1) == 1)
		conn_free(conn);
}

/* Maps the peer's segment (fd consumed) and sets up the four rings. */
static int conn_map(struct shm_conn *conn, int fd)
{
	const struct shm_chan_hdr *ph;
	struct shm_chan_hdr *oh = conn->own_hdr;
	size_t size;
	int ret;

	ret = shm_seg_map_peer(fd, SHM_PAGE, CHAN_SEG_MAX, &conn->theirs);
	if (ret)
		return ret;
	ph = conn->theirs.addr;
	size = conn->theirs.size;
	ret = shm_chan_check(ph, size, SHM_SEG_QP, SHM_CHAN_RINGS);
	if (ret || ph->qpn != conn->peer_qpn)
		return ret ? ret : -OPENRDMA_EPROTO;
	conn->peer_hdr = ph;
	ret = shm_chan_cons(ph, size, SHM_RING_REQ, oh, SHM_RING_REQ,
			    &conn->req_rx);
	if (!ret)
		ret = shm_chan_cons(ph, size, SHM_RING_RESP, oh, SHM_RING_RESP,
				    &conn->resp_rx);
	if (ret)
		return ret;
	shm_chan_prod(oh, SHM_RING_REQ, ph, SHM_RING_REQ, &conn->req_tx);
	shm_chan_prod(oh, SHM_RING_RESP, ph, SHM_RING_RESP, &conn->resp_tx);
	atomic_store(&conn->cma, conn->peer->cma);
	atomic_store(&oh->cma, conn->peer->cma);
	return 0;
}

/* On the progress thread: says goodbye and closes the socket. */
static void conn_close_cmd(void *arg)
{
	struct shm_conn *conn = arg;
	struct shm_msg_hdr bye;

	if (conn->sock >= 0) {
		shm_msg_init(&bye, SHM_MSG_DETACH);
		shm_sock_send(conn->sock, &bye, sizeof(bye), NULL, 0);
	}
	if (conn->watch) {
		shm_watch_del(conn->ctx, conn->watch);
		conn->watch = NULL;
	} else if (conn->sock >= 0) {
		close(conn->sock);
	}
	conn->sock = -1;
}

/* Takes a connection off its QP's context and drops the QP's reference. */
static void conn_close(struct shm_conn *conn)
{
	struct shm_ctx *sctx = conn->ctx;
	int slot;

	conn_settle(conn);
	atomic_store(&conn->dead, true);
	slot = atomic_exchange(&conn->slot, -1);
	if (slot >= 0)
		shm_slot_del(sctx, slot);
	pthread_mutex_lock(&sctx->conn_lock);
	if (conn->next || conn->prev)
		DL_DELETE(sctx->conns, conn);
	conn->prev = conn->next = NULL;
	pthread_mutex_unlock(&sctx->conn_lock);
	shm_prog_run(sctx, conn_close_cmd, conn);
	shm_conn_put(conn);
}

/* Puts conn on its QP; returns the connection that lost, to close. */
static struct shm_conn *conn_install(struct shm_conn *conn)
{
	struct shm_qp *qp = conn->qp;
	struct shm_conn *old;

	pthread_mutex_lock(&qp->conn_lock);
	old = qp->conn;
	if (old && !atomic_load(&old->dead) &&
	    old->peer_qpn == conn->peer_qpn &&
	    old->initiator < conn->initiator) {
		pthread_mutex_unlock(&qp->conn_lock);
		return conn;
	}
	qp->conn = conn;
	atomic_fetch_add_explicit(&qp->conn_gen, 1, memory_order_release);
	pthread_mutex_unlock(&qp->conn_lock);
	return old;
}

/* Makes the receive side live and the connection the QP's. */
static int conn_activate(struct shm_conn *conn)
{
	struct shm_ctx *sctx = conn->ctx;
	struct shm_conn *loser;
	int slot;

	slot = shm_slot_add(sctx, SHM_SLOT_CONN, conn);
	if (slot < 0)
		return slot;
	atomic_store(&conn->slot, slot);
	pthread_mutex_lock(&sctx->conn_lock);
	DL_APPEND(sctx->conns, conn);
	pthread_mutex_unlock(&sctx->conn_lock);
	loser = conn_install(conn);
	if (loser)
		conn_close(loser);
	return loser == conn ? -OPENRDMA_EALREADY : 0;
}

/* The peer died: tell what is outstanding now; else the next request
 * fails as the semantics page says (RETRY_EXC_ERR). */
static void conn_died(struct shm_conn *conn)
{
	struct shm_qp *qp = conn->qp;
	bool installed, sends;

	pthread_mutex_lock(&qp->conn_lock);
	installed = qp->conn == conn;
	pthread_mutex_unlock(&qp->conn_lock);
	openrdma_dbg("shm", "QP %u: peer QP %u died", qp->base.qp_num,
		     conn->peer_qpn);
	if (!installed || !shm_qp_busy(qp, &sends))
		return;
	if (sends) {
		/* the oldest fails as unanswered, the rest flush */
		shm_tx_lost(qp, OPENRDMA_WC_RETRY_EXC_ERR, -1);
	} else {
		sw_qp_error(&qp->sw, OPENRDMA_EVENT_QP_FATAL);
		shm_qp_publish(qp);
	}
}

static void conn_event(struct shm_ctx *sctx, struct shm_watch *w,
		       uint32_t events)
{
	struct shm_conn *conn = w->owner;
	char buf[128];
	int len;

	len = shm_sock_recv(w->fd, buf, sizeof(buf), NULL, NULL, 0);
	if (len == -OPENRDMA_EAGAIN)
		return;
	if (len > 0 && shm_msg_type(buf, len, sizeof(struct shm_msg_hdr)) !=
			       SHM_MSG_DETACH)
		return; /* nothing else is sent on it */
	conn_drain(conn);
	atomic_store(&conn->dead, true);
	shm_watch_del(sctx, w);
	conn->watch = NULL;
	conn->sock = -1;
	if (len <= 0)
		conn_died(conn);
}

static void conn_watch_cmd(void *arg)
{
	struct shm_conn *conn = arg;

	if (conn->sock < 0 || conn->watch)
		return;
	conn->watch = shm_watch_add(conn->ctx, conn->sock, conn_event, conn);
	/* without a watch a dying peer goes unnoticed: better now */
	if (!conn->watch)
		atomic_store(&conn->dead, true);
}

static int send_own(struct shm_conn *conn, const void *msg, size_t len)
{
	int fds[3], ret;

	ret = shm_own_fds(conn->ctx, fds);
	if (ret)
		return ret;
	fds[2] = shm_seg_ro_fd(&conn->own);
	if (fds[2] < 0) {
		ret = fds[2];
		shm_fds_close(fds, 2);
		return ret;
	}
	ret = shm_sock_send(conn->sock, msg, len, fds, 3);
	shm_fds_close(fds, 3);
	return ret;
}

/* The peer's answer to our ATTACH. */
static int attach_reply(struct shm_conn *conn, pid_t pid)
{
	union {
		struct shm_msg_hdr hdr;
		struct shm_msg_nak nak;
	} msg;
	int fds[3], nfds = 3, len, type, ret;

	len = shm_sock_recv(conn->sock, &msg, sizeof(msg), fds, &nfds,
			    HANDSHAKE_MS);
	if (len < 0)
		return len;
	type = shm_msg_type(&msg, len, sizeof(msg.hdr));
	if (type == SHM_MSG_NAK && len == sizeof(msg.nak)) {
		shm_fds_close(fds, nfds);
		return msg.nak.err < 0 ? msg.nak.err : -OPENRDMA_EPROTO;
	}
	if (type != SHM_MSG_ATTACH_OK || nfds != 3) {
		shm_fds_close(fds, nfds);
		return -OPENRDMA_EPROTO;
	}
	ret = shm_peer_get(conn->ctx, fds[0], fds[1], pid, &conn->peer);
	if (ret) {
		close(fds[2]);
		return ret;
	}
	return conn_map(conn, fds[2]);
}

int shm_conn_attach(struct shm_qp *qp, uint32_t dest_qpn)
{
	struct shm_ctx *sctx = qp->ctx;
	struct shm_msg_attach msg;
	struct shm_conn *conn;
	pid_t pid;
	int ret;

	/* a handshake waits for the peer's progress thread: never from
	 * one, or two of them could wait for each other */
	if (shm_prog_on_thread(NULL))
		return -OPENRDMA_EAGAIN;
	if (!SHM_QPN_NODE(dest_qpn))
		return -OPENRDMA_EINVAL;
	conn = conn_new(qp, dest_qpn, qp->base.qp_num);
	if (!conn)
		return -OPENRDMA_ENOMEM;
	ret = shm_sock_connect(SHM_SOCK_NODE, SHM_QPN_NODE(dest_qpn),
			       &conn->sock);
	if (ret)
		goto err_free;
	ret = shm_sock_peer_check(sctx, conn->sock, &pid);
	if (ret)
		goto err_free;
	shm_msg_init(&msg.hdr, SHM_MSG_ATTACH);
	msg.src_qpn = qp->base.qp_num;
	msg.dst_qpn = dest_qpn;
	ret = send_own(conn, &msg, sizeof(msg));
	if (ret)
		goto err_free;
	ret = attach_reply(conn, pid);
	if (ret)
		goto err_free;
	ret = conn_activate(conn);
	if (ret == -OPENRDMA_EALREADY)
		return 0; /* the peer's own request won */
	if (ret)
		goto err_free;
	shm_prog_run(sctx, conn_watch_cmd, conn);
	openrdma_dbg("shm", "QP %u connected to QP %u (%s)", qp->base.qp_num,
		     dest_qpn,
		     atomic_load(&conn->cma) ? "single copy" : "ring copies");
	return 0;

err_free:
	openrdma_dbg("shm", "QP %u to QP %u: %s", qp->base.qp_num, dest_qpn,
		     openrdma_strerror(ret));
	conn_free(conn);
	return ret;
}

static void nak(int sock, int err)
{
	struct shm_msg_nak msg;

	shm_msg_init(&msg.hdr, SHM_MSG_NAK);
	msg.err = err;
	shm_sock_send(sock, &msg, sizeof(msg), NULL, 0);
}

void shm_conn_accept(struct shm_ctx *sctx, struct shm_watch *w, pid_t pid,
		     const struct shm_msg_attach *msg, int *fds, int nfds)
{
	struct shm_msg_hdr ok;
	struct shm_conn *conn = NULL;
	struct shm_qp *qp;
	uint32_t dest;
	int ret;

	qp = shm_qp_get(sctx, msg->dst_qpn);
	ret = -OPENRDMA_ENOENT;
	if (!qp || qp->base.qp_type != OPENRDMA_QPT_RC)
		goto err;
	/* a QP connected by hand to another one is not free */
	dest = atomic_load(&qp->sw.dest_qpn);
	ret = -OPENRDMA_EISCONN;
	if (dest && dest != msg->src_qpn)
		goto err;
	ret = -OPENRDMA_ENOMEM;
	conn = conn_new(qp, msg->src_qpn, msg->src_qpn);
	if (!conn)
		goto err;
	ret = shm_peer_get(sctx, fds[0], fds[1], pid, &conn->peer);
	fds[0] = fds[1] = -1;
	if (ret)
		goto err;
	ret = conn_map(conn, fds[2]);
	fds[2] = -1;
	if (ret)
		goto err;
	conn->sock = w->fd;
	conn->watch = w;
	w->fn = conn_event;
	w->owner = conn;
	ret = conn_activate(conn);
	if (ret) {
		/* lost to our own request, or no slot: the socket goes */
		if (ret != -OPENRDMA_EALREADY)
			conn_close(conn);
		shm_qp_put(qp);
		return;
	}
	shm_msg_init(&ok, SHM_MSG_ATTACH_OK);
	ret = send_own(conn, &ok, sizeof(ok));
	if (ret) {
		shm_conn_detach(qp);
		openrdma_dbg("shm", "QP %u: answer to QP %u: %s",
			     qp->base.qp_num, msg->src_qpn,
			     openrdma_strerror(ret));
	}
	shm_qp_put(qp);
	return;

err:
	openrdma_dbg("shm", "node %u: ATTACH to QP %u refused: %s", sctx->node,
		     msg->dst_qpn, openrdma_strerror(ret));
	nak(w->fd, ret);
	shm_fds_close(fds, nfds);
	shm_watch_del(sctx, w);
	if (conn) {
		conn->sock = -1;
		conn_free(conn);
	}
	if (qp)
		shm_qp_put(qp);
}

bool shm_conn_detach(struct shm_qp *qp)
{
	struct shm_conn *conn;

	pthread_mutex_lock(&qp->conn_lock);
	conn = qp->conn;
	qp->conn = NULL;
	atomic_fetch_add_explicit(&qp->conn_gen, 1, memory_order_release);
	pthread_mutex_unlock(&qp->conn_lock);
	if (conn)
		conn_close(conn);
	return conn != NULL;
}

/*
 * An application thread that polls holds the acknowledgement of what its
 * pass executed back until its next pass (or its next disconnect, see
 * shm_conn_rx_settle), so that writing it does not delay the completion
 * the application waits for, nor what it sends in reply.  The progress
 * thread's next look says it too, should the application stop polling;
 * while that thread sleeps for good nothing is held back.
 */
int shm_conn_rx(struct shm_conn *conn)
{
	const struct shm_elem *e;
	int n, reqs = 0, ret = 0;

	if (atomic_load_explicit(&conn->dead, memory_order_relaxed))
		return 0;
	/* answers first: they free the initiator's window */
	n = shm_tx_answers(conn);
	/* the last pass's, before anything new */
	if (atomic_load_explicit(&conn->ack_held, memory_order_relaxed))
		ack_now(conn);
	conn->ack_hold = !shm_prog_on_thread(conn->ctx) &&
			 !atomic_load(&conn->ctx->hdr->sleeping);
	conn->answered = false;
	/* a bounded batch: other rings get their turn */
	while (reqs < 64 &&
	       !atomic_load_explicit(&conn->dead, memory_order_relaxed)) {
		e = shm_ring_peek(&conn->req_rx);
		if (!e)
			break;
		ret = shm_rx_request(conn, e);
		if (ret)
			break; /* an error, or a request that must wait */
		reqs++;
	}
	if (ret < 0) {
		openrdma_warn("shm", "QP %u: bad message from QP %u",
			      conn->qp->base.qp_num, conn->peer_qpn);
		atomic_store(&conn->dead, true);
	} else if (reqs && conn->ack_hold && conn->ack_due) {
		atomic_store_explicit(&conn->ack_held, true,
				      memory_order_relaxed);
		/* answers that went (RESP, NAK) are news all the same */
		if (conn->answered)
			shm_peer_kick(conn->peer);
	} else if (reqs) {
		ack_now(conn);
	}
	/* decode() consumed the requests; their space goes back with the
	 * acknowledgement, held back or not (shm_rx_ack) */
	if (!atomic_load_explicit(&conn->ack_held, memory_order_relaxed))
		shm_ring_publish(&conn->req_rx);
	/* answers opened the window, or a stream waits for room */
	if (n || atomic_load(&conn->streaming))
		shm_tx(conn->qp);
	return n + reqs;
}

void shm_conn_key_quiesce(struct shm_ctx *sctx, uint32_t key)
{
	struct shm_conn *conn;

	pthread_mutex_lock(&sctx->conn_lock);
	DL_FOREACH (sctx->conns, conn) {
		while (!atomic_load(&conn->dead) &&
		       (uint32_t)(atomic_load(&conn->peer_hdr->busy) >> 32) ==
			       key)
			sched_yield();
	}
	pthread_mutex_unlock(&sctx->conn_lock);
}
