/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* Contexts: open and close, the device and port queries, the limits. */
#include "config.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openrdma/log.h>
#include <openrdma/param.h>

#include "transports/self/self.h"

static const int res_max[SELF_RES_NUM] = {
	[SELF_RES_PD] = SELF_MAX_PD, [SELF_RES_MR] = SELF_MAX_MR,
	[SELF_RES_MW] = SELF_MAX_MW, [SELF_RES_CQ] = SELF_MAX_CQ,
	[SELF_RES_QP] = SELF_MAX_QP, [SELF_RES_SRQ] = SELF_MAX_SRQ,
	[SELF_RES_AH] = SELF_MAX_AH,
};

int self_res_get(struct self_ctx *sctx, enum self_res res)
{
	if (atomic_fetch_add(&sctx->count[res], 1) >= res_max[res]) {
		atomic_fetch_sub(&sctx->count[res], 1);
		return -OPENRDMA_ENOMEM;
	}
	return 0;
}

void self_res_put(struct self_ctx *sctx, enum self_res res)
{
	atomic_fetch_sub(&sctx->count[res], 1);
}

void self_port_addr(struct sockaddr_storage *addr)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)addr;

	memset(addr, 0, sizeof(*addr));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
}

void self_port_gid(union openrdma_gid *gid)
{
	struct sockaddr_storage addr;

	self_port_addr(&addr);
	sw_gid_from_addr((struct sockaddr *)&addr, gid);
}

bool self_addr_local(const struct sockaddr *sa)
{
	return sw_addr_is_loopback(sa);
}

bool self_ah_attr_local(const struct openrdma_ah_attr *attr)
{
	union openrdma_gid gid;

	if (attr->addr.ss_family != AF_UNSPEC)
		return self_addr_local((const struct sockaddr *)&attr->addr);
	if (attr->is_global) {
		self_port_gid(&gid);
		return !memcmp(&gid, &attr->grh.dgid, sizeof(gid));
	}
	/* a LID-only vector: there is one port in this fabric */
	return true;
}

static unsigned int param_rnr_scale(void)
{
	int64_t v = 100;

	openrdma_param_get_int("self", "rnr_timer_scale", &v);
	if (v < 1 || v > 10000) {
		openrdma_warn("self", "rnr_timer_scale %lld out of 1-10000",
			      (long long)v);
		v = 100;
	}
	return (unsigned int)v;
}

int self_device_open(struct openrdma_device *dev,
		     struct openrdma_context **ctx_out)
{
	struct self_ctx *sctx;
	bool port_event = false;
	int ret;

	sctx = calloc(1, sizeof(*sctx));
	if (!sctx)
		return -OPENRDMA_ENOMEM;
	ret = sw_keymap_create(&sctx->keymap);
	if (ret)
		goto err_free;
	ret = sw_peers_create(&sctx->peers);
	if (ret)
		goto err_keymap;
	ret = sw_timer_init(&sctx->timer);
	if (ret)
		goto err_peers;
	sctx->rnr_scale = param_rnr_scale();
	openrdma_param_get_bool("self", "port_event", &port_event);
	sctx->port_event = port_event;
	sctx->base.async_fd = -1;
	*ctx_out = &sctx->base;
	return 0;

err_peers:
	sw_peers_destroy(sctx->peers);
err_keymap:
	sw_keymap_destroy(sctx->keymap);
err_free:
	free(sctx);
	return ret;
}

void self_context_close(struct openrdma_context *ctx)
{
	struct self_ctx *sctx = to_self_ctx(ctx);

	sw_timer_fini(&sctx->timer);
	sw_peers_destroy(sctx->peers);
	sw_keymap_destroy(sctx->keymap);
	free(sctx);
}

void self_port_event(struct self_ctx *sctx)
{
	struct openrdma_async_event ev;

	/* the core queues events only once the open has returned: the
	 * first call after it queues the port's */
	if (!sctx->port_event || atomic_exchange(&sctx->port_event_done, true))
		return;
	memset(&ev, 0, sizeof(ev));
	ev.element.port_num = SELF_PORT;
	ev.event_type = OPENRDMA_EVENT_PORT_ACTIVE;
	openrdma_async_event_post(&sctx->base, &ev);
}

int self_device_query(struct openrdma_context *ctx,
		      struct openrdma_device_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	strcpy(attr->transport, "self");
	snprintf(attr->fw_ver, sizeof(attr->fw_ver), "openrdma %s",
		 OPENRDMA_VERSION_STRING);
	/* locally administered, and the same in every process */
	attr->node_guid = 0x020000fffe000001ull;
	attr->node_transport = OPENRDMA_NODE_SOFTWARE;
	attr->max_mr_size = SELF_MAX_MR_SIZE;
	/* any power of two from 4 KiB: memory is never pinned */
	attr->page_size_cap = ~0xfffull;
	attr->max_msg_size = SELF_MAX_MSG_SIZE;
	attr->device_cap_flags =
		OPENRDMA_DEVICE_RC | OPENRDMA_DEVICE_UD | OPENRDMA_DEVICE_SRQ |
		OPENRDMA_DEVICE_MW_TYPE1 | OPENRDMA_DEVICE_MW_TYPE2 |
		OPENRDMA_DEVICE_SEND_INV | OPENRDMA_DEVICE_ZERO_BASED |
		OPENRDMA_DEVICE_THREE_WAY | OPENRDMA_DEVICE_RNR_RETRY |
		OPENRDMA_DEVICE_SRQ_LIMIT | OPENRDMA_DEVICE_PEER_CAN_READ_RMR;
	attr->max_qp = SELF_MAX_QP;
	attr->max_qp_wr = SELF_MAX_QP_WR;
	attr->max_sge = SELF_MAX_SGE;
	attr->max_sge_rd = SELF_MAX_SGE;
	attr->max_inline_data = SELF_MAX_INLINE;
	attr->max_cq = SELF_MAX_CQ;
	attr->max_cqe = SELF_MAX_CQE;
	attr->max_mr = SELF_MAX_MR;
	attr->max_pd = SELF_MAX_PD;
	attr->max_qp_rd_atom = SELF_MAX_RD_ATOM;
	attr->max_qp_init_rd_atom = SELF_MAX_RD_ATOM;
	attr->atomic_cap = OPENRDMA_ATOMIC_HCA;
	attr->max_mw = SELF_MAX_MW;
	attr->max_ah = SELF_MAX_AH;
	attr->max_srq = SELF_MAX_SRQ;
	attr->max_srq_wr = SELF_MAX_SRQ_WR;
	attr->max_srq_sge = SELF_MAX_SGE;
	attr->max_pkeys = 1;
	attr->phys_port_cnt = 1;
	attr->max_pdata_connect = SELF_PDATA_CONNECT;
	attr->max_pdata_accept = SELF_PDATA_ACCEPT;
	attr->max_pdata_reject = SELF_PDATA_REJECT;
	attr->max_pdata_disconnect = SELF_PDATA_DISCONNECT;
	attr->max_ud_msg_size = SELF_MAX_UD_MSG;
	return 0;
}

int self_port_query(struct openrdma_context *ctx, uint8_t port_num,
		    struct openrdma_port_attr *attr)
{
	if (port_num != SELF_PORT)
		return -OPENRDMA_EINVAL;
	self_port_event(to_self_ctx(ctx));
	memset(attr, 0, sizeof(*attr));
	attr->state = OPENRDMA_PORT_ACTIVE;
	attr->max_mtu = OPENRDMA_MTU_4096;
	attr->active_mtu = OPENRDMA_MTU_4096;
	attr->gid_tbl_len = 1;
	attr->max_msg_sz = SELF_MAX_MSG_SIZE;
	attr->lid = 0;
	attr->link_layer = OPENRDMA_LINK_LAYER_LOOPBACK;
	self_port_addr(&attr->addr);
	return 0;
}

int self_gid_query(struct openrdma_context *ctx, uint8_t port_num, int index,
		   union openrdma_gid *gid)
{
	if (port_num != SELF_PORT || index != 0)
		return -OPENRDMA_EINVAL;
	self_port_event(to_self_ctx(ctx));
	self_port_gid(gid);
	return 0;
}
