/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* Contexts: open and close, the node segment, queries, the limits. */
#include "config.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <openrdma/log.h>

#include "transports/shm/shm.h"

static const struct sw_dev_limits shm_limits = {
	.transport = "shm",
	.res_max = {
		[SW_RES_PD] = SHM_MAX_PD, [SW_RES_MR] = SHM_MAX_MR,
		[SW_RES_MW] = SHM_MAX_MW, [SW_RES_CQ] = SHM_MAX_CQ,
		[SW_RES_QP] = SHM_MAX_QP, [SW_RES_SRQ] = SHM_MAX_SRQ,
		[SW_RES_AH] = SHM_MAX_AH,
	},
	.max_mr_size = SHM_MAX_MR_SIZE,
	.max_msg_size = SHM_MAX_MSG_SIZE,
	.max_ud_msg = SHM_MAX_UD_MSG,
	.max_qp_wr = SHM_MAX_QP_WR,
	.max_sge = SHM_MAX_SGE,
	.max_inline = SHM_MAX_INLINE,
	.max_cqe = SHM_MAX_CQE,
	.max_srq_wr = SHM_MAX_SRQ_WR,
	.max_rd_atom = SHM_MAX_RD_ATOM,
	.pdata_connect = SHM_PDATA_CONNECT,
	.pdata_accept = SHM_PDATA_ACCEPT,
	.pdata_reject = SHM_PDATA_REJECT,
	.pdata_disconnect = SHM_PDATA_DISCONNECT,
	.cap_flags = OPENRDMA_DEVICE_CROSS_PROCESS,
	/* the target's CPU runs them: atomic with its own accesses too */
	.atomic_cap = OPENRDMA_ATOMIC_GLOB,
	.link_layer = OPENRDMA_LINK_LAYER_LOOPBACK,
};

int shm_res_get(struct openrdma_context *ctx, enum sw_res res)
{
	return sw_res_get(&to_shm_ctx(ctx)->count[res],
			  shm_limits.res_max[res]);
}

void shm_res_put(struct openrdma_context *ctx, enum sw_res res)
{
	sw_res_put(&to_shm_ctx(ctx)->count[res]);
}

void shm_port_addr(struct sockaddr_storage *addr)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)addr;

	memset(addr, 0, sizeof(*addr));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
}

void shm_port_gid(union openrdma_gid *gid)
{
	struct sockaddr_storage addr;

	shm_port_addr(&addr);
	sw_gid_from_addr((struct sockaddr *)&addr, gid);
}

bool shm_ah_attr_local(const struct openrdma_ah_attr *attr)
{
	union openrdma_gid gid;

	if (attr->addr.ss_family != AF_UNSPEC)
		return sw_addr_is_loopback(
			(const struct sockaddr *)&attr->addr);
	if (attr->is_global) {
		shm_port_gid(&gid);
		return !memcmp(&gid, &attr->grh.dgid, sizeof(gid));
	}
	/* a LID-only vector: the host is the whole fabric */
	return true;
}

/* The node segment: header, QP table, key table. */
static int node_seg_create(struct shm_ctx *sctx)
{
	size_t qp_off = SHM_PAGE;
	size_t key_off = qp_off + SHM_QP_SLOTS * sizeof(struct shm_qp_pub);
	size_t size = key_off + SHM_KEY_SLOTS * sizeof(struct shm_key);
	struct shm_node_hdr *h;
	int ret;

	size = (size + SHM_PAGE - 1) & ~(size_t)(SHM_PAGE - 1);
	ret = shm_seg_create("openrdma-shm-node", size, &sctx->node_seg);
	if (ret)
		return ret;
	h = sctx->node_seg.addr;
	h->magic = SHM_SEG_MAGIC;
	h->version = SHM_WIRE_VERSION;
	h->kind = SHM_SEG_NODE;
	h->size = size;
	h->pid = (uint32_t)getpid();
	h->uid = (uint32_t)geteuid();
	h->key_slots = SHM_KEY_SLOTS;
	h->key_off = key_off;
	h->qp_off = qp_off;
	if (getrandom(&h->incarnation, sizeof(h->incarnation), 0) < 0 ||
	    getrandom(&sctx->cma_cookie, sizeof(sctx->cma_cookie), 0) < 0) {
		ret = -errno;
		shm_seg_destroy(&sctx->node_seg);
		return ret;
	}
	h->cma_addr = (uintptr_t)&sctx->cma_cookie;
	h->cma_cookie = sctx->cma_cookie;
	sctx->hdr = h;
	sctx->keys = (struct shm_key *)(void *)((uint8_t *)h + key_off);
	sctx->qp_pub = (struct shm_qp_pub *)(void *)((uint8_t *)h + qp_off);
	return 0;
}

static void ctx_free(struct shm_ctx *sctx)
{
	pthread_mutex_destroy(&sctx->epoch.lock);
	pthread_mutex_destroy(&sctx->cm_lock);
	pthread_mutex_destroy(&sctx->link_lock);
	pthread_mutex_destroy(&sctx->conn_lock);
	pthread_mutex_destroy(&sctx->peer_lock);
	pthread_mutex_destroy(&sctx->qp_lock);
	pthread_mutex_destroy(&sctx->key_lock);
	if (sctx->peers)
		sw_peers_destroy(sctx->peers);
	if (sctx->keymap)
		sw_keymap_destroy(sctx->keymap);
	free(sctx);
}

int shm_device_open(struct openrdma_device *dev,
		    struct openrdma_context **ctx_out)
{
	struct shm_ctx *sctx;
	bool possible;
	int ret;

	sctx = calloc(1, sizeof(*sctx));
	if (!sctx)
		return -OPENRDMA_ENOMEM;
	sctx->node_fd = -1;
	sctx->node_seg.fd = -1;
	pthread_mutex_init(&sctx->key_lock, NULL);
	pthread_mutex_init(&sctx->qp_lock, NULL);
	pthread_mutex_init(&sctx->peer_lock, NULL);
	pthread_mutex_init(&sctx->conn_lock, NULL);
	pthread_mutex_init(&sctx->link_lock, NULL);
	pthread_mutex_init(&sctx->cm_lock, NULL);
	pthread_mutex_init(&sctx->epoch.lock, NULL);
	atomic_init(&sctx->pd_next, 1);
	shm_params_read(&sctx->par);
	snprintf(sctx->cma_status, sizeof(sctx->cma_status), "%s",
		 shm_cma_status(&sctx->par, &possible));
	if (!possible)
		sctx->par.cma = false;

	ret = sw_keymap_create(&sctx->keymap);
	if (ret)
		goto err_free;
	ret = sw_peers_create(&sctx->peers);
	if (ret)
		goto err_free;
	ret = sw_timer_init(&sctx->timer);
	if (ret)
		goto err_free;
	ret = node_seg_create(sctx);
	if (ret)
		goto err_timer;
	ret = shm_prog_start(sctx);
	if (ret)
		goto err_seg;
	ret = shm_node_open(sctx);
	if (ret)
		goto err_prog;
	sctx->hdr->node = sctx->node;
	sctx->base.async_fd = -1;
	openrdma_dbg("shm", "%s: node %u, %s", dev->name, sctx->node,
		     sctx->cma_status);
	*ctx_out = &sctx->base;
	return 0;

err_prog:
	shm_prog_stop(sctx);
err_seg:
	shm_seg_destroy(&sctx->node_seg);
err_timer:
	sw_timer_fini(&sctx->timer);
err_free:
	ctx_free(sctx);
	return ret;
}

void shm_context_close(struct openrdma_context *ctx)
{
	struct shm_ctx *sctx = to_shm_ctx(ctx);

	/* QPs are gone (the core destroys children first): links are left */
	shm_links_close(sctx);
	shm_node_close(sctx);
	shm_prog_stop(sctx);
	sw_timer_fini(&sctx->timer);
	if (sctx->peer_list)
		openrdma_warn("shm", "node %u: peers still referenced",
			      sctx->node);
	shm_seg_destroy(&sctx->node_seg);
	ctx_free(sctx);
}

int shm_device_query(struct openrdma_context *ctx,
		     struct openrdma_device_attr *attr)
{
	struct shm_ctx *sctx = to_shm_ctx(ctx);

	sw_device_attr_init(attr, &shm_limits);
	/*
	 * How RDMA data moves here (single copy or ring copies, and why) is
	 * a property of this process, which the device attributes have no
	 * field for: openrdma-info shows it in fw_ver.
	 */
	snprintf(attr->fw_ver, sizeof(attr->fw_ver), "openrdma %s, %s",
		 OPENRDMA_VERSION_STRING, sctx->cma_status);
	/* locally administered, the same for every context of the host */
	attr->node_guid = 0x020000fffe000002ull;
	return 0;
}

int shm_port_query(struct openrdma_context *ctx, uint8_t port_num,
		   struct openrdma_port_attr *attr)
{
	if (port_num != SHM_PORT)
		return -OPENRDMA_EINVAL;
	sw_port_attr_init(attr, &shm_limits);
	shm_port_addr(&attr->addr);
	return 0;
}

int shm_gid_query(struct openrdma_context *ctx, uint8_t port_num, int index,
		  union openrdma_gid *gid)
{
	if (port_num != SHM_PORT || index != 0)
		return -OPENRDMA_EINVAL;
	shm_port_gid(gid);
	return 0;
}
