/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Datagram links: one ring from this context to each context its UD QPs
 * send to, made on the first datagram through the peer's node socket (as
 * an address resolution would be).  The UD QPs of a context share the
 * ring, so its producer side has a lock; the receiver drains it like a
 * connection's and hands each datagram to sw_target_ud().  A datagram
 * that cannot go (no such context, a ring that stays full) is lost, as
 * UD allows.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openrdma/log.h>

#include "core/sw/target.h"
#include "transports/shm/shm.h"

#define HANDSHAKE_MS 2000
/* How long a sender waits for room before dropping a datagram. */
#define FULL_WAIT_NS (1000ull * 1000)
#define LINK_SEG_MAX \
	(SHM_PAGE + ((size_t)65536 * SHM_CACHELINE + ((size_t)64 << 20)))

static void link_free(struct shm_link *link)
{
	if (link->sock >= 0 && !link->watch)
		close(link->sock);
	shm_seg_destroy(&link->theirs);
	shm_seg_destroy(&link->own);
	shm_peer_put(link->ctx, link->peer);
	pthread_mutex_destroy(&link->tx_lock);
	free(link);
}

static struct shm_link *link_new(struct shm_ctx *sctx, bool tx)
{
	struct shm_link *link;

	link = calloc(1, sizeof(*link));
	if (!link)
		return NULL;
	link->ctx = sctx;
	link->tx = tx;
	link->sock = -1;
	link->slot = -1;
	link->own.fd = -1;
	link->theirs.fd = -1;
	pthread_mutex_init(&link->tx_lock, NULL);
	return link;
}

/* On the progress thread: the peer went away. */
static void link_event(struct shm_ctx *sctx, struct shm_watch *w,
		       uint32_t events)
{
	struct shm_link *link = w->owner;
	char buf[64];
	int len;

	len = shm_sock_recv(w->fd, buf, sizeof(buf), NULL, NULL, 0);
	if (len == -OPENRDMA_EAGAIN || len > 0)
		return;
	atomic_store(&link->dead, true);
	shm_watch_del(sctx, w);
	link->watch = NULL;
	link->sock = -1;
	if (link->slot >= 0) {
		shm_slot_del(sctx, link->slot);
		link->slot = -1;
	}
	/* nothing of the peer is kept but the entry itself */
	pthread_mutex_lock(&link->tx_lock);
	shm_seg_destroy(&link->own);
	shm_seg_destroy(&link->theirs);
	shm_peer_put(sctx, link->peer);
	link->peer = NULL;
	pthread_mutex_unlock(&link->tx_lock);
}

static void link_watch_cmd(void *arg)
{
	struct shm_link *link = arg;

	link->watch = shm_watch_add(link->ctx, link->sock, link_event, link);
	if (!link->watch)
		atomic_store(&link->dead, true);
}

static void link_add(struct shm_ctx *sctx, struct shm_link *link)
{
	pthread_mutex_lock(&sctx->link_lock);
	link->next = sctx->links;
	sctx->links = link;
	pthread_mutex_unlock(&sctx->link_lock);
}

static int send_fds(struct shm_ctx *sctx, int sock, enum shm_msg_type type,
		    const struct shm_seg *seg)
{
	struct shm_msg_hdr msg;
	int fds[3], ret;

	ret = shm_own_fds(sctx, fds);
	if (ret)
		return ret;
	fds[2] = shm_seg_ro_fd(seg);
	if (fds[2] < 0) {
		ret = fds[2];
		shm_fds_close(fds, 2);
		return ret;
	}
	shm_msg_init(&msg, type);
	ret = shm_sock_send(sock, &msg, sizeof(msg), fds, 3);
	shm_fds_close(fds, 3);
	return ret;
}

/* Sender: a new link to node. */
static int link_connect(struct shm_ctx *sctx, uint32_t node,
			struct shm_link **link_out)
{
	struct shm_msg_hdr msg;
	struct shm_link *link;
	int fds[3], nfds = 3, len, ret;
	pid_t pid;

	link = link_new(sctx, true);
	if (!link)
		return -OPENRDMA_ENOMEM;
	ret = shm_chan_create("openrdma-shm-link", SHM_SEG_LINK, 1,
			      sctx->par.ring_entries, sctx->par.ring_data,
			      &link->own);
	if (ret)
		goto err;
	ret = shm_sock_connect(SHM_SOCK_NODE, node, &link->sock);
	if (!ret)
		ret = shm_sock_peer_check(sctx, link->sock, &pid);
	if (!ret)
		ret = send_fds(sctx, link->sock, SHM_MSG_LINK, &link->own);
	if (ret)
		goto err;
	len = shm_sock_recv(link->sock, &msg, sizeof(msg), fds, &nfds,
			    HANDSHAKE_MS);
	ret = len < 0 ? len : -OPENRDMA_EPROTO;
	if (shm_msg_type(&msg, len, sizeof(msg)) != SHM_MSG_LINK_OK ||
	    nfds != 3) {
		shm_fds_close(fds, nfds);
		goto err;
	}
	ret = shm_peer_get(sctx, fds[0], fds[1], pid, &link->peer);
	if (ret) {
		close(fds[2]);
		goto err;
	}
	ret = shm_seg_map_peer(fds[2], SHM_PAGE, SHM_PAGE, &link->theirs);
	if (!ret)
		ret = shm_chan_check(link->theirs.addr, link->theirs.size,
				     SHM_SEG_ACK, 0);
	if (ret)
		goto err;
	shm_chan_prod(link->own.addr, 0, link->theirs.addr, 0, &link->prod);
	link->node = node;
	link_add(sctx, link);
	shm_prog_run(sctx, link_watch_cmd, link);
	*link_out = link;
	return 0;

err:
	link_free(link);
	return ret;
}

/* The live link to node, made if need be; NULL if there is none. */
static struct shm_link *link_get(struct shm_ctx *sctx, uint32_t node)
{
	struct shm_link *link;

	pthread_mutex_lock(&sctx->link_lock);
	for (link = sctx->links; link; link = link->next)
		if (link->tx && link->node == node && !atomic_load(&link->dead))
			break;
	pthread_mutex_unlock(&sctx->link_lock);
	/* links live until the context closes: the pointer stays good */
	if (link || shm_prog_on_thread(NULL))
		return link;
	if (link_connect(sctx, node, &link)) {
		openrdma_dbg("shm", "node %u: no link to node %u", sctx->node,
			     node);
		return NULL;
	}
	return link;
}

int shm_link_send(struct shm_ctx *sctx, uint32_t node,
		  const struct shm_elem *tmpl, const struct iovec *iov,
		  int iovcnt, uint64_t len)
{
	struct shm_link *link = link_get(sctx, node);
	struct sw_iov_cursor cur;
	struct shm_backoff b;
	struct shm_elem *e;
	uint64_t pos = 0, off, first;
	int ret = -OPENRDMA_ENOSPC;

	if (!link)
		return -OPENRDMA_ENETUNREACH;
	shm_backoff_init(&b, FULL_WAIT_NS);
	pthread_mutex_lock(&link->tx_lock);
	if (atomic_load(&link->dead))
		goto out;
	while (!(e = shm_ring_reserve(&link->prod)) ||
	       (len && shm_ring_data_alloc(&link->prod, len, &pos))) {
		if (atomic_load(&link->dead) || shm_backoff(&b))
			goto out;
	}
	if (len) {
		sw_iov_cursor_init(&cur, iov, iovcnt);
		off = pos & (link->prod.data_size - 1);
		first = link->prod.data_size - off;
		if (first > len)
			first = len;
		sw_iov_cursor_get(&cur, link->prod.data + off, first);
		sw_iov_cursor_get(&cur, link->prod.data, len - first);
	}
	e->type = tmpl->type;
	e->op = tmpl->op;
	e->flags = tmpl->flags;
	e->pl = len ? SHM_PL_RING : SHM_PL_NONE;
	e->seq = tmpl->seq;
	e->len = tmpl->len;
	e->ex = tmpl->ex;
	e->data = pos;
	e->u = tmpl->u;
	shm_ring_commit(&link->prod, e);
	shm_peer_kick(link->peer);
	ret = 0;
out:
	pthread_mutex_unlock(&link->tx_lock);
	return ret;
}

void shm_link_accept(struct shm_ctx *sctx, struct shm_watch *w, pid_t pid,
		     int *fds, int nfds)
{
	struct shm_link *link;
	int ret = -OPENRDMA_ENOMEM;

	link = link_new(sctx, false);
	if (!link)
		goto err;
	ret = shm_peer_get(sctx, fds[0], fds[1], pid, &link->peer);
	fds[0] = fds[1] = -1;
	if (ret)
		goto err;
	ret = shm_seg_map_peer(fds[2], SHM_PAGE, LINK_SEG_MAX, &link->theirs);
	fds[2] = -1;
	if (!ret)
		ret = shm_chan_check(link->theirs.addr, link->theirs.size,
				     SHM_SEG_LINK, 1);
	if (!ret)
		ret = shm_chan_create("openrdma-shm-ack", SHM_SEG_ACK, 0, 0, 0,
				      &link->own);
	if (!ret)
		ret = shm_chan_cons(link->theirs.addr, link->theirs.size, 0,
				    link->own.addr, 0, &link->cons);
	if (ret)
		goto err;
	link->node = link->peer->node;
	link->sock = w->fd;
	ret = send_fds(sctx, link->sock, SHM_MSG_LINK_OK, &link->own);
	if (ret)
		goto err;
	link->slot = shm_slot_add(sctx, SHM_SLOT_LINK, link);
	if (link->slot < 0) {
		ret = link->slot;
		goto err;
	}
	link->watch = w;
	w->fn = link_event;
	w->owner = link;
	link_add(sctx, link);
	return;

err:
	openrdma_dbg("shm", "node %u: link refused: %s", sctx->node,
		     openrdma_strerror(ret));
	shm_fds_close(fds, nfds);
	shm_watch_del(sctx, w);
	if (link) {
		link->sock = -1;
		link_free(link);
	}
}

/* A datagram's payload: its chunk of the data ring. */
struct chunk_payload {
	struct sw_payload base;
	const struct shm_ring_cons *cons;
	uint64_t pos, len, off;
};

static int chunk_read(struct sw_payload *pl, void *dst, size_t len)
{
	struct chunk_payload *p =
		openrdma_container_of(pl, struct chunk_payload, base);

	if (len > p->len - p->off)
		return -OPENRDMA_EMSGSIZE;
	shm_ring_data_get(p->cons, p->pos + p->off, dst, len);
	p->off += len;
	return 0;
}

static int chunk_write(struct sw_payload *pl, const void *src, size_t len)
{
	return -OPENRDMA_EPROTO;
}

static void deliver(struct shm_link *link, const struct shm_elem *e,
		    uint64_t pos, uint64_t len)
{
	struct shm_ctx *sctx = link->ctx;
	struct chunk_payload p = {
		.base = { .read = chunk_read, .write = chunk_write },
		.cons = &link->cons,
		.pos = pos,
		.len = len,
	};
	struct sockaddr_storage addr;
	struct shm_qp *qp;
	struct sw_req r;

	qp = shm_qp_get(sctx, e->seq);
	if (!qp)
		return; /* no such QP: lost */
	memset(&r, 0, sizeof(r));
	r.opcode = (enum openrdma_wr_opcode)e->op;
	r.send_flags = e->flags;
	r.src_qpn = (uint32_t)e->u.r.cmp;
	r.ex = e->ex;
	r.length = len;
	r.payload = &p.base;
	r.qkey = e->u.r.aux;
	shm_port_gid(&r.sgid);
	r.dgid = r.sgid;
	shm_port_addr(&addr);
	if (sw_peers_index(sctx->peers, (struct sockaddr *)&addr, &r.slid))
		r.slid = 0;
	if (link->peer->foreign)
		sw_dma_begin();
	sw_target_ud(&qp->sw, &r);
	if (link->peer->foreign)
		sw_dma_end();
	shm_qp_publish(qp);
	shm_qp_put(qp);
}

int shm_link_rx(struct shm_link *link)
{
	const struct shm_elem *e;
	uint64_t pos, len;
	int n = 0;

	while (n < 32 && (e = shm_ring_peek(&link->cons))) {
		pos = e->data;
		len = e->pl == SHM_PL_RING ? e->len : 0;
		if (e->type != SHM_EL_DGRAM || len > SHM_MAX_UD_MSG ||
		    (e->pl == SHM_PL_NONE && e->len) ||
		    shm_ring_data_check(&link->cons, pos, len)) {
			openrdma_warn("shm",
				      "node %u: bad datagram from node %u",
				      link->ctx->node, link->peer->node);
			atomic_store(&link->dead, true);
			break;
		}
		if (e->op == OPENRDMA_WR_SEND ||
		    e->op == OPENRDMA_WR_SEND_WITH_IMM)
			deliver(link, e, pos, len);
		shm_ring_release(&link->cons, len);
		n++;
	}
	return n;
}

static void links_close_cmd(void *arg)
{
	struct shm_ctx *sctx = arg;
	struct shm_link *link;

	while ((link = sctx->links)) {
		sctx->links = link->next;
		if (link->slot >= 0)
			shm_slot_del(sctx, link->slot);
		shm_watch_del(sctx, link->watch);
		link->watch = NULL;
		link->sock = -1;
		link_free(link);
	}
}

void shm_links_close(struct shm_ctx *sctx)
{
	shm_prog_run(sctx, links_close_cmd, sctx);
}
