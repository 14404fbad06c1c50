/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Contexts: open and close, the parameters, the port (a TCP listener for
 * QPs connected by hand and a UDP socket for UD, on one port number), the
 * device and port queries, the limits.
 */
#include "config.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openrdma/log.h>
#include <openrdma/param.h>

#include "core/sw/sw_ops.h"
#include "transports/tcp/tcp.h"

/* Attempts at finding a port number free for both TCP and UDP. */
#define PORT_ATTEMPTS 32
#define QP_LISTEN_BACKLOG 1024

static const struct sw_dev_limits tcp_limits = {
	.transport = "tcp",
	.res_max = {
		[SW_RES_PD] = TCP_MAX_PD, [SW_RES_MR] = TCP_MAX_MR,
		[SW_RES_MW] = TCP_MAX_MW, [SW_RES_CQ] = TCP_MAX_CQ,
		[SW_RES_QP] = TCP_MAX_QP, [SW_RES_SRQ] = TCP_MAX_SRQ,
		[SW_RES_AH] = TCP_MAX_AH,
	},
	.max_mr_size = TCP_MAX_MR_SIZE,
	.max_msg_size = TCP_MAX_MSG_SIZE,
	.max_ud_msg = TCP_MAX_UD_MSG,
	.max_qp_wr = TCP_MAX_QP_WR,
	.max_sge = TCP_MAX_SGE,
	.max_inline = TCP_MAX_INLINE,
	.max_cqe = TCP_MAX_CQE,
	.max_srq_wr = TCP_MAX_SRQ_WR,
	.max_rd_atom = TCP_MAX_RD_ATOM,
	.pdata_connect = TCP_FRAME_PDATA_CONNECT,
	.pdata_accept = TCP_FRAME_PDATA_ACCEPT,
	.pdata_reject = TCP_FRAME_PDATA_REJECT,
	.pdata_disconnect = TCP_FRAME_PDATA_DISCONNECT,
	.cap_flags = OPENRDMA_DEVICE_CROSS_PROCESS | OPENRDMA_DEVICE_CROSS_HOST |
		     OPENRDMA_DEVICE_SOCKET_ADOPT,
	.atomic_cap = OPENRDMA_ATOMIC_HCA,
	.link_layer = OPENRDMA_LINK_LAYER_ETHERNET,
};

int tcp_res_get(struct openrdma_context *ctx, enum sw_res res)
{
	return sw_res_get(&to_tcp_ctx(ctx)->count[res],
			  tcp_limits.res_max[res]);
}

void tcp_res_put(struct openrdma_context *ctx, enum sw_res res)
{
	sw_res_put(&to_tcp_ctx(ctx)->count[res]);
}

/*
 * A numeric parameter: the interface line's key=value if it has one, else
 * the declared parameter; out of [min, max] falls back to the default.
 */
static uint64_t param_num(const struct openrdma_device *dev, const char *name,
			  bool size, uint64_t def, uint64_t min, uint64_t max)
{
	const char *s = openrdma_device_param(dev, name);
	uint64_t v = def;
	int64_t iv;
	char *end;

	if (s) {
		v = strtoull(s, &end, 0);
		switch (*end) {
		case 'k':
		case 'K':
			v <<= 10;
			end++;
			break;
		case 'm':
		case 'M':
			v <<= 20;
			end++;
			break;
		default:
			break;
		}
		if (*end || end == s) {
			openrdma_warn("tcp", "%s: %s=%s is not a number",
				      dev->name, name, s);
			v = def;
		}
	} else if (size) {
		openrdma_param_get_size("tcp", name, &v);
	} else if (!openrdma_param_get_int("tcp", name, &iv)) {
		v = iv < 0 ? max + 1 : (uint64_t)iv;
	}
	if (v < min || v > max) {
		openrdma_warn("tcp", "%s: %s %llu out of %llu-%llu", dev->name,
			      name, (unsigned long long)v,
			      (unsigned long long)min, (unsigned long long)max);
		v = def;
	}
	return v;
}

static bool param_bool(const struct openrdma_device *dev, const char *name,
		       bool def)
{
	const char *s = openrdma_device_param(dev, name);
	bool v = def;

	if (!s) {
		openrdma_param_get_bool("tcp", name, &v);
		return v;
	}
	if (!strcmp(s, "1") || !strcmp(s, "yes") || !strcmp(s, "y") ||
	    !strcmp(s, "on") || !strcmp(s, "true"))
		return true;
	if (!strcmp(s, "0") || !strcmp(s, "no") || !strcmp(s, "n") ||
	    !strcmp(s, "off") || !strcmp(s, "false"))
		return false;
	openrdma_warn("tcp", "%s: %s=%s is not a boolean", dev->name, name, s);
	return def;
}

static void params_read(const struct openrdma_device *dev, struct tcp_params *p)
{
	p->keepalive_ms = (unsigned int)param_num(dev, "keepalive_ms", false,
						  3000, 100, 3600000);
	p->connect_timeout_ms = (unsigned int)param_num(
		dev, "connect_timeout_ms", false, 5000, 100, 3600000);
	p->ack_delay_us = (unsigned int)param_num(dev, "ack_delay_us", false,
						  20, 0, 100000);
	p->rnr_scale = (unsigned int)param_num(dev, "rnr_timer_scale", false,
					       100, 1, 10000);
	p->rx_buffer = (size_t)param_num(dev, "rx_buffer", true, 64 << 10,
					 4 << 10, 16 << 20);
	p->sndbuf = (int)param_num(dev, "sndbuf", true, 0, 0, 1 << 30);
	p->rcvbuf = (int)param_num(dev, "rcvbuf", true, 0, 0, 1 << 30);
	p->busy_poll = param_bool(dev, "busy_poll", false);
	p->nodelay = param_bool(dev, "nodelay", true);
}

/* The context's port: a TCP listener and a UDP socket, one port number. */
static int port_open(struct tcp_ctx *tctx)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	uint16_t port;
	int i, fd, ret = -OPENRDMA_EADDRINUSE;

	for (i = 0; i < PORT_ATTEMPTS; i++) {
		ret = tcp_sock_listen(tctx, (struct sockaddr *)&tctx->bind_addr,
				      QP_LISTEN_BACKLOG, &fd);
		if (ret)
			return ret;
		if (getsockname(fd, (struct sockaddr *)&ss, &len)) {
			ret = -errno;
			close(fd);
			return ret;
		}
		port = sw_addr_port((struct sockaddr *)&ss);
		ret = tcp_ud_open(tctx, port);
		if (!ret) {
			tctx->qp_listen.fd = fd;
			sw_addr_set_port((struct sockaddr *)&tctx->port_addr,
					 port);
			return 0;
		}
		close(fd);
		if (ret != -OPENRDMA_EADDRINUSE)
			return ret;
	}
	return ret;
}

static uint32_t random_qpn(void)
{
	uint64_t t = sw_now_ns();

	/* not secret, only unlikely to repeat: QPNs of a new context should
	 * not match those a stale peer still addresses */
	t ^= (uint64_t)getpid() << 24;
	t ^= t >> 29;
	t *= 0xbf58476d1ce4e5b9ull;
	t ^= t >> 32;
	return (uint32_t)(t % 0xf00000u) + 0x1000u;
}

static void ctx_free(struct tcp_ctx *tctx)
{
	pthread_mutex_destroy(&tctx->cm_lock);
	pthread_cond_destroy(&tctx->reaped);
	pthread_mutex_destroy(&tctx->lock);
	pthread_rwlock_destroy(&tctx->mem_lock);
	sw_timer_fini(&tctx->timer);
	sw_peers_destroy(tctx->peers);
	sw_keymap_destroy(tctx->keymap);
	free(tctx);
}

int tcp_device_open(struct openrdma_device *dev,
		    struct openrdma_context **ctx_out)
{
	pthread_rwlockattr_t rwattr;
	struct tcp_ctx *tctx;
	int ret;

	tctx = calloc(1, sizeof(*tctx));
	if (!tctx)
		return -OPENRDMA_ENOMEM;
	tctx->epfd = -1;
	tctx->wake.fd = -1;
	tctx->qp_listen.fd = -1;
	tctx->ud.fd = -1;
	params_read(dev, &tctx->prm);
	ret = tcp_iface_resolve(dev, &tctx->bind_addr, &tctx->port_addr);
	if (ret)
		goto err_free;
	ret = sw_keymap_create(&tctx->keymap);
	if (ret)
		goto err_free;
	ret = sw_peers_create(&tctx->peers);
	if (ret)
		goto err_keymap;
	ret = sw_timer_init(&tctx->timer);
	if (ret)
		goto err_peers;
	/* deregistration must not wait behind a stream of transfers */
	pthread_rwlockattr_init(&rwattr);
	pthread_rwlockattr_setkind_np(
		&rwattr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	ret = -pthread_rwlock_init(&tctx->mem_lock, &rwattr);
	pthread_rwlockattr_destroy(&rwattr);
	if (ret)
		goto err_timer;
	ret = -pthread_mutex_init(&tctx->lock, NULL);
	if (ret)
		goto err_rwlock;
	ret = -pthread_cond_init(&tctx->reaped, NULL);
	if (ret)
		goto err_lock;
	ret = -pthread_mutex_init(&tctx->cm_lock, NULL);
	if (ret)
		goto err_cond;
	tctx->qpn_next = random_qpn();

	ret = port_open(tctx);
	if (ret) {
		openrdma_warn("tcp", "%s: cannot open its port: %s", dev->name,
			      openrdma_strerror(ret));
		goto err_cm_lock;
	}
	sw_gid_from_addr((struct sockaddr *)&tctx->port_addr, &tctx->gid);
	ret = tcp_progress_start(tctx);
	if (ret)
		goto err_port;
	tctx->base.async_fd = -1;
	*ctx_out = &tctx->base;
	return 0;

err_port:
	tcp_ud_close(tctx);
	close(tctx->qp_listen.fd);
err_cm_lock:
	pthread_mutex_destroy(&tctx->cm_lock);
err_cond:
	pthread_cond_destroy(&tctx->reaped);
err_lock:
	pthread_mutex_destroy(&tctx->lock);
err_rwlock:
	pthread_rwlock_destroy(&tctx->mem_lock);
err_timer:
	sw_timer_fini(&tctx->timer);
err_peers:
	sw_peers_destroy(tctx->peers);
err_keymap:
	sw_keymap_destroy(tctx->keymap);
err_free:
	free(tctx);
	return ret;
}

void tcp_context_close(struct openrdma_context *ctx)
{
	struct tcp_ctx *tctx = to_tcp_ctx(ctx);

	/* every QP and CM id is gone: what is left are connections being
	 * closed, which the progress thread ends as it stops */
	tcp_progress_stop(tctx);
	tcp_ud_close(tctx);
	close(tctx->qp_listen.fd);
	ctx_free(tctx);
}

int tcp_device_query(struct openrdma_context *ctx,
		     struct openrdma_device_attr *attr)
{
	struct tcp_ctx *tctx = to_tcp_ctx(ctx);

	sw_device_attr_init(attr, &tcp_limits);
	/* locally administered, from the port's address */
	attr->node_guid =
		0x0200000000000000ull | ((uint64_t)tctx->gid.raw[12] << 24) |
		((uint64_t)tctx->gid.raw[13] << 16) |
		((uint64_t)tctx->gid.raw[14] << 8) | tctx->gid.raw[15];
	return 0;
}

int tcp_port_query(struct openrdma_context *ctx, uint8_t port_num,
		   struct openrdma_port_attr *attr)
{
	if (port_num != TCP_PORT)
		return -OPENRDMA_EINVAL;
	sw_port_attr_init(attr, &tcp_limits);
	attr->addr = to_tcp_ctx(ctx)->port_addr;
	return 0;
}

int tcp_gid_query(struct openrdma_context *ctx, uint8_t port_num, int index,
		  union openrdma_gid *gid)
{
	if (port_num != TCP_PORT || index != 0)
		return -OPENRDMA_EINVAL;
	*gid = to_tcp_ctx(ctx)->gid;
	return 0;
}
