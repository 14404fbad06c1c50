/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* Contexts: open and close, the device and port queries, the limits. */
#include "config.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include <openrdma/log.h>
#include <openrdma/param.h>

#include "transports/self/self.h"

static const struct sw_dev_limits self_limits = {
	.transport = "self",
	.res_max = {
		[SW_RES_PD] = SELF_MAX_PD, [SW_RES_MR] = SELF_MAX_MR,
		[SW_RES_MW] = SELF_MAX_MW, [SW_RES_CQ] = SELF_MAX_CQ,
		[SW_RES_QP] = SELF_MAX_QP, [SW_RES_SRQ] = SELF_MAX_SRQ,
		[SW_RES_AH] = SELF_MAX_AH,
	},
	.max_mr_size = SELF_MAX_MR_SIZE,
	.max_msg_size = SELF_MAX_MSG_SIZE,
	.max_ud_msg = SELF_MAX_UD_MSG,
	.max_qp_wr = SELF_MAX_QP_WR,
	.max_sge = SELF_MAX_SGE,
	.max_inline = SELF_MAX_INLINE,
	.max_cqe = SELF_MAX_CQE,
	.max_srq_wr = SELF_MAX_SRQ_WR,
	.max_rd_atom = SELF_MAX_RD_ATOM,
	.pdata_connect = SELF_PDATA_CONNECT,
	.pdata_accept = SELF_PDATA_ACCEPT,
	.pdata_reject = SELF_PDATA_REJECT,
	.pdata_disconnect = SELF_PDATA_DISCONNECT,
	.atomic_cap = OPENRDMA_ATOMIC_HCA,
	.link_layer = OPENRDMA_LINK_LAYER_LOOPBACK,
};

int self_res_get(struct openrdma_context *ctx, enum sw_res res)
{
	return sw_res_get(&to_self_ctx(ctx)->count[res],
			  self_limits.res_max[res]);
}

void self_res_put(struct openrdma_context *ctx, enum sw_res res)
{
	sw_res_put(&to_self_ctx(ctx)->count[res]);
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
	sw_device_attr_init(attr, &self_limits);
	/* locally administered, and the same in every process */
	attr->node_guid = 0x020000fffe000001ull;
	return 0;
}

int self_port_query(struct openrdma_context *ctx, uint8_t port_num,
		    struct openrdma_port_attr *attr)
{
	if (port_num != SELF_PORT)
		return -OPENRDMA_EINVAL;
	self_port_event(to_self_ctx(ctx));
	sw_port_attr_init(attr, &self_limits);
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
