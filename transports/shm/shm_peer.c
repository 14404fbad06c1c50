/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Other contexts of the host, known by their node segment (mapped
 * read-only: their keys, their QPs' states, their sleeping flag) and
 * their wake-up eventfd.  One entry per peer context, shared by every
 * connection and link to it.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <openrdma/log.h>

#include "transports/shm/shm.h"

/* Largest node segment we accept from a peer. */
#define NODE_SEG_MAX (64u << 20)

int shm_own_fds(struct shm_ctx *sctx, int fds[2])
{
	int ret;

	fds[0] = shm_seg_ro_fd(&sctx->node_seg);
	if (fds[0] < 0)
		return fds[0];
	fds[1] = dup(sctx->prog.wake_fd);
	if (fds[1] < 0) {
		ret = -errno;
		close(fds[0]);
		return ret;
	}
	return 0;
}

/* The header's layout, checked against the segment; what we keep of it
 * is copied, since the owner could change it under us. */
static int node_check(const struct shm_seg *seg, pid_t pid, struct shm_peer *p)
{
	const struct shm_node_hdr *h = seg->addr;
	uint64_t key_off = h->key_off, qp_off = h->qp_off;
	uint32_t slots = h->key_slots;

	if (h->magic != SHM_SEG_MAGIC || h->version != SHM_WIRE_VERSION ||
	    h->kind != SHM_SEG_NODE || h->size != seg->size ||
	    h->pid != (uint32_t)pid || !slots || (slots & (slots - 1)) ||
	    key_off % SHM_CACHELINE || qp_off % SHM_CACHELINE ||
	    key_off < SHM_PAGE || key_off > seg->size ||
	    (uint64_t)slots * sizeof(struct shm_key) > seg->size - key_off ||
	    qp_off < SHM_PAGE || qp_off > seg->size ||
	    (uint64_t)SHM_QP_SLOTS * sizeof(struct shm_qp_pub) >
		    seg->size - qp_off)
		return -OPENRDMA_EPROTO;
	p->hdr = h;
	p->incarnation = h->incarnation;
	p->node = h->node;
	p->pid = pid;
	p->keys = (const struct shm_key *)(const void *)((const uint8_t *)h +
							 key_off);
	p->key_mask = slots - 1;
	p->qps = (const struct shm_qp_pub *)(const void *)((const uint8_t *)h +
							   qp_off);
	return 0;
}

/* Can we read the peer's memory?  Its cookie tells. */
static bool cma_probe(const struct shm_peer *p)
{
	uint64_t addr = p->hdr->cma_addr, cookie = p->hdr->cma_cookie, v = 0;
	struct iovec l = { .iov_base = &v, .iov_len = sizeof(v) };
	struct iovec r = { .iov_base = (void *)(uintptr_t)addr,
			   .iov_len = sizeof(v) };

	if (process_vm_readv(p->pid, &l, 1, &r, 1, 0) != sizeof(v))
		return false;
	return v == cookie;
}

int shm_peer_get(struct shm_ctx *sctx, int node_fd, int wake_fd, pid_t pid,
		 struct shm_peer **peer_out)
{
	struct shm_peer *p, *found;
	int ret;

	p = calloc(1, sizeof(*p));
	if (!p) {
		close(node_fd);
		close(wake_fd);
		return -OPENRDMA_ENOMEM;
	}
	ret = shm_seg_map_peer(node_fd, SHM_PAGE, NODE_SEG_MAX, &p->seg);
	if (ret)
		goto err_free;
	ret = node_check(&p->seg, pid, p);
	if (ret)
		goto err_unmap;

	pthread_mutex_lock(&sctx->peer_lock);
	for (found = sctx->peer_list; found; found = found->next)
		if (found->incarnation == p->incarnation && found->pid == pid)
			break;
	if (found) {
		found->ref++;
		pthread_mutex_unlock(&sctx->peer_lock);
		shm_seg_destroy(&p->seg);
		close(wake_fd);
		free(p);
		*peer_out = found;
		return 0;
	}
	p->wake_fd = wake_fd;
	p->foreign = pid != getpid();
	p->cma = sctx->par.cma && cma_probe(p);
	p->ref = 1;
	p->next = sctx->peer_list;
	sctx->peer_list = p;
	pthread_mutex_unlock(&sctx->peer_lock);
	openrdma_dbg("shm", "node %u: peer node %u (pid %d), %s", sctx->node,
		     p->node, (int)pid, p->cma ? "single copy" : "ring copies");
	*peer_out = p;
	return 0;

err_unmap:
	shm_seg_destroy(&p->seg);
err_free:
	close(wake_fd);
	free(p);
	return ret;
}

void shm_peer_put(struct shm_ctx *sctx, struct shm_peer *peer)
{
	struct shm_peer **pos;

	if (!peer)
		return;
	pthread_mutex_lock(&sctx->peer_lock);
	if (--peer->ref) {
		pthread_mutex_unlock(&sctx->peer_lock);
		return;
	}
	for (pos = &sctx->peer_list; *pos; pos = &(*pos)->next) {
		if (*pos == peer) {
			*pos = peer->next;
			break;
		}
	}
	pthread_mutex_unlock(&sctx->peer_lock);
	shm_seg_destroy(&peer->seg);
	close(peer->wake_fd);
	free(peer);
}
