/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * RC QPs connected by hand (modify-QP to RTR with the peer's QPN and port
 * address, then RTS), as on InfiniBand without a CM.  Each side opens, at
 * RTS, one connection to the other's port for its own requests and their
 * answers, and says HELLO: its QPN, the QPN it wants and its own port's
 * address.  The other side answers HELLO once that QP is in RTR towards
 * this one; requests flow only after the answer, so a peer that is not
 * ready yet delays them instead of failing them.  A connection the peer
 * never answers ends after connect_timeout_ms, and its requests complete
 * with RETRY_EXC_ERR.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openrdma/log.h>

#include "transports/tcp/tcp.h"

/* Connections on a context's port that did not say HELLO yet, at most. */
#define HELLO_PENDING_MAX 256

static uint64_t handshake_deadline(struct tcp_ctx *tctx)
{
	return tcp_now() + (uint64_t)tctx->prm.connect_timeout_ms * 1000000u;
}

/* Our port, in a HELLO. */
static void hello_addr(struct tcp_ctx *tctx, struct tcp_frame *f)
{
	const struct sockaddr_storage *ss = &tctx->port_addr;

	if (ss->ss_family == AF_INET) {
		f->family = TCP_FAMILY_IPV4;
		memcpy(f->addr, &((const struct sockaddr_in *)ss)->sin_addr, 4);
	} else {
		f->family = TCP_FAMILY_IPV6;
		memcpy(f->addr, &((const struct sockaddr_in6 *)ss)->sin6_addr,
		       16);
	}
	f->port = sw_addr_port((const struct sockaddr *)ss);
}

static void hello_sockaddr(const struct tcp_frame *f,
			   struct sockaddr_storage *ss)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (f->family == TCP_FAMILY_IPV4) {
		sin->sin_family = AF_INET;
		memcpy(&sin->sin_addr, f->addr, 4);
		sin->sin_port = htons(f->port);
	} else {
		sin6->sin6_family = AF_INET6;
		memcpy(&sin6->sin6_addr, f->addr, 16);
		sin6->sin6_port = htons(f->port);
	}
	tcp_addr_normalize(ss);
}

static int send_hello(struct tcp_conn *conn, uint32_t to_qpn, uint32_t from_qpn)
{
	struct tcp_frame f;

	memset(&f, 0, sizeof(f));
	f.opcode = TCP_OP_HELLO;
	f.qpn = to_qpn;
	f.src_qpn = from_qpn;
	hello_addr(conn->ctx, &f);
	return tcp_tx_ctl(conn, &f, NULL, 0, false);
}

static void set_deadline(struct tcp_conn *conn, uint64_t deadline)
{
	/* the sweep reads it under ctx->lock */
	pthread_mutex_lock(&conn->ctx->lock);
	conn->deadline = deadline;
	pthread_mutex_unlock(&conn->ctx->lock);
}

void tcp_manual_connect(struct tcp_qp *qp)
{
	struct tcp_ctx *tctx = qp->ctx;
	struct sockaddr_storage dest, bind_to;
	struct tcp_conn *conn;
	socklen_t len;
	uint32_t dest_qpn = atomic_load(&qp->sw.dest_qpn);
	int fd, ret;

	pthread_spin_lock(&qp->link_lock);
	if (qp->path == TCP_PATH_CM || qp->out) {
		pthread_spin_unlock(&qp->link_lock);
		return;
	}
	qp->path = TCP_PATH_MANUAL;
	dest = qp->dest;
	pthread_spin_unlock(&qp->link_lock);
	/* without the peer's port there is no path: requests fail */
	if (dest.ss_family == AF_UNSPEC ||
	    !sw_addr_port((struct sockaddr *)&dest))
		return;

	ret = tcp_sock_open(tctx, dest.ss_family, SOCK_STREAM, &fd);
	if (ret)
		goto err;
	/* an interface bound to one address leaves from it */
	if (!sw_addr_is_any((struct sockaddr *)&tctx->bind_addr) &&
	    tctx->bind_addr.ss_family == dest.ss_family) {
		bind_to = tctx->bind_addr;
		bind(fd, (struct sockaddr *)&bind_to,
		     sw_addr_len((struct sockaddr *)&bind_to));
	}
	len = sw_addr_len((struct sockaddr *)&dest);
	if (connect(fd, (struct sockaddr *)&dest, len) &&
	    errno != EINPROGRESS) {
		ret = -errno;
		close(fd);
		goto err;
	}
	ret = tcp_conn_create(tctx, fd, TCP_CONN_QP_OUT, &conn);
	if (ret) {
		close(fd);
		goto err;
	}
	conn->peer = dest;
	conn->peer_port = dest;
	conn->deadline = handshake_deadline(tctx);
	tcp_conn_set_qp(conn, qp, dest_qpn);
	tcp_poll_attach(conn, qp);
	pthread_spin_lock(&qp->link_lock);
	qp->out = conn; /* the creator's reference */
	pthread_spin_unlock(&qp->link_lock);
	ret = tcp_conn_start(conn, TCP_CONN_CONNECTING);
	if (!ret)
		return;
	pthread_spin_lock(&qp->link_lock);
	qp->out = NULL;
	pthread_spin_unlock(&qp->link_lock);
	tcp_poll_detach(conn);
	tcp_conn_put(conn);

err:
	openrdma_dbg("tcp", "QP %u: no connection to its peer: %s",
		     qp->base.qp_num, openrdma_strerror(ret));
}

void tcp_manual_connected(struct tcp_conn *conn)
{
	struct tcp_qp *qp = tcp_conn_qp(conn);

	if (!qp || send_hello(conn, conn->peer_qpn, qp->base.qp_num))
		tcp_conn_close(conn, -OPENRDMA_ECONNABORTED, true);
}

/*
 * How long a request waits for a peer that does not answer: IB's
 * 4.096 us * 2^timeout per try, retry_cnt + 1 tries; 0 (timeout 0): for
 * ever, bounded by the handshake deadline alone.
 */
static uint64_t retry_span(struct tcp_qp *qp)
{
	struct openrdma_qp_attr attr;

	sw_qp_query(&qp->sw, &attr, NULL);
	if (!attr.timeout || attr.timeout > 31)
		return 0;
	return (4096ull << attr.timeout) * (attr.retry_cnt + 1u);
}

void tcp_manual_sweep(struct tcp_conn *conn, uint64_t now)
{
	struct tcp_qp *qp = tcp_conn_qp_get(conn);
	bool confirmed, waiting;
	uint32_t peer_qpn;
	uint64_t span;

	if (!qp)
		return;
	core_lock_acquire(&conn->lock);
	confirmed = conn->confirmed;
	peer_qpn = conn->peer_qpn;
	core_lock_release(&conn->lock);
	core_lock_acquire(&qp->sw.sq.lock);
	waiting = qp->sw.sq.head != qp->sw.sq.tail;
	core_lock_release(&qp->sw.sq.lock);
	if (confirmed || !waiting) {
		conn->wait_since = 0;
		goto out;
	}
	/*
	 * A peer whose QP is not in RTR (never was, or was reset before our
	 * HELLO came) does not answer: on InfiniBand its QP would drop our
	 * packets, and the requests fail once the retries are spent.
	 */
	if (!conn->wait_since)
		conn->wait_since = now;
	span = retry_span(qp);
	if (span && now - conn->wait_since > span) {
		openrdma_dbg("tcp",
			     "QP %u: peer QP %u did not answer in %llu ms",
			     qp->base.qp_num, peer_qpn,
			     (unsigned long long)(span / 1000000u));
		tcp_conn_close(conn, -OPENRDMA_ETIMEDOUT, true);
	}
out:
	tcp_qp_put(qp);
}

/* Does qp, in RTR or RTS, expect the peer that said HELLO on conn? */
static bool hello_matches(struct tcp_qp *qp, struct tcp_conn *conn)
{
	enum openrdma_qp_state state = sw_qp_state(&qp->sw);
	struct sockaddr_storage dest;
	uint32_t peer_qpn;

	if (state != OPENRDMA_QPS_RTR && state != OPENRDMA_QPS_RTS)
		return false;
	pthread_spin_lock(&qp->link_lock);
	dest = qp->dest;
	pthread_spin_unlock(&qp->link_lock);
	/* the progress thread may be linking conn to the QP right now */
	core_lock_acquire(&conn->lock);
	peer_qpn = conn->peer_qpn;
	core_lock_release(&conn->lock);
	return atomic_load(&qp->sw.dest_qpn) == peer_qpn &&
	       dest.ss_family != AF_UNSPEC &&
	       sw_addr_equal((struct sockaddr *)&dest,
			     (struct sockaddr *)&conn->peer_port, true);
}

/* We answer the HELLO on conn: requests may come. */
static void hello_answer(struct tcp_qp *qp, struct tcp_conn *conn)
{
	bool done;

	/* from the progress thread (HELLO) or the thread moving the QP to
	 * RTR, whichever comes last: once */
	core_lock_acquire(&conn->lock);
	done = conn->confirmed;
	conn->confirmed = true;
	core_lock_release(&conn->lock);
	if (done)
		return;
	set_deadline(conn, 0);
	if (send_hello(conn, conn->peer_qpn, qp->base.qp_num))
		tcp_conn_close(conn, -OPENRDMA_ENOMEM, true);
}

void tcp_manual_ready(struct tcp_qp *qp)
{
	struct tcp_conn *conn;

	pthread_spin_lock(&qp->link_lock);
	conn = qp->path != TCP_PATH_CM ? qp->in : NULL;
	if (conn)
		tcp_conn_get(conn);
	pthread_spin_unlock(&qp->link_lock);
	if (!conn)
		return;
	if (hello_matches(qp, conn))
		hello_answer(qp, conn);
	else
		tcp_conn_close(conn, -OPENRDMA_ECONNREFUSED, true);
	tcp_conn_put(conn);
}

/* The HELLO answering ours: our requests may go. */
static void hello_back(struct tcp_conn *conn, const struct tcp_frame *f)
{
	struct tcp_qp *qp = tcp_conn_qp(conn);

	if (!qp || f->qpn != qp->base.qp_num || f->src_qpn != conn->peer_qpn) {
		tcp_conn_close(conn, -OPENRDMA_EPROTO, true);
		return;
	}
	conn->greeted = true;
	set_deadline(conn, 0);
	core_lock_acquire(&conn->lock);
	conn->confirmed = true;
	core_lock_release(&conn->lock);
	tcp_tx_kick(conn);
}

void tcp_manual_hello(struct tcp_conn *conn, const struct tcp_frame *f)
{
	struct tcp_ctx *tctx = conn->ctx;
	struct tcp_conn *old = NULL;
	struct tcp_qp *qp;

	if (conn->greeted) {
		tcp_conn_close(conn, -OPENRDMA_EPROTO, true);
		return;
	}
	if (conn->kind == TCP_CONN_QP_OUT) {
		hello_back(conn, f);
		return;
	}
	conn->greeted = true;
	pthread_mutex_lock(&tctx->lock);
	if (conn->hello_counted) {
		conn->hello_counted = false;
		tctx->hello_pending--;
	}
	pthread_mutex_unlock(&tctx->lock);

	qp = tcp_qp_lookup(tctx, f->qpn);
	if (!qp || !qp->rc) {
		/* no such QP: what the peer sends would get no answer */
		tcp_conn_close(conn, -OPENRDMA_ECONNREFUSED, true);
		goto out;
	}
	conn->peer_qpn = f->src_qpn;
	hello_sockaddr(f, &conn->peer_port);
	tcp_conn_get(conn);
	pthread_spin_lock(&qp->link_lock);
	if (qp->path == TCP_PATH_CM || qp->unlinking) {
		pthread_spin_unlock(&qp->link_lock);
		tcp_conn_put(conn);
		tcp_conn_close(conn, -OPENRDMA_ECONNREFUSED, true);
		goto out;
	}
	/* a peer that connects again replaces its old connection */
	old = qp->in;
	qp->in = conn;
	pthread_spin_unlock(&qp->link_lock);
	tcp_conn_set_qp(conn, qp, f->src_qpn);
	tcp_poll_attach(conn, qp);
	if (old) {
		tcp_conn_close(old, -OPENRDMA_ECONNABORTED, true);
		tcp_conn_put(old);
	}
	/* not ready yet: answered when the QP reaches RTR */
	if (hello_matches(qp, conn))
		hello_answer(qp, conn);
out:
	if (qp)
		tcp_qp_put(qp);
}

void tcp_manual_accept(struct tcp_poll *poll, uint32_t events)
{
	struct tcp_ctx *tctx =
		openrdma_container_of(poll, struct tcp_ctx, qp_listen);
	struct sockaddr_storage ss;
	struct tcp_conn *conn;
	socklen_t len;
	bool full;
	int fd;

	for (;;) {
		len = sizeof(ss);
		fd = accept4(poll->fd, (struct sockaddr *)&ss, &len,
			     SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return; /* EAGAIN; or out of fds: retried on the next */
		}
		pthread_mutex_lock(&tctx->lock);
		full = tctx->hello_pending >= HELLO_PENDING_MAX;
		if (!full)
			tctx->hello_pending++;
		pthread_mutex_unlock(&tctx->lock);
		if (full) {
			/* a flood of connections that say nothing */
			close(fd);
			continue;
		}
		if (tcp_conn_create(tctx, fd, TCP_CONN_QP_IN, &conn)) {
			pthread_mutex_lock(&tctx->lock);
			tctx->hello_pending--;
			pthread_mutex_unlock(&tctx->lock);
			close(fd);
			continue;
		}
		conn->hello_counted = true;
		conn->peer = ss;
		tcp_addr_normalize(&conn->peer);
		len = sizeof(conn->local);
		getsockname(fd, (struct sockaddr *)&conn->local, &len);
		tcp_addr_normalize(&conn->local);
		conn->deadline = handshake_deadline(tctx);
		tcp_sock_tune(tctx, fd);
		if (tcp_conn_start(conn, TCP_CONN_OPEN)) {
			pthread_mutex_lock(&tctx->lock);
			tctx->hello_pending--;
			pthread_mutex_unlock(&tctx->lock);
		}
		tcp_conn_put(conn);
	}
}
