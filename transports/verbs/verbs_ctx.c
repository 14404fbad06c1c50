/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Contexts: opening the interface's device port, closing it, and the
 * device, port and GID queries.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openrdma/param.h>

#include "transports/verbs/verbs.h"

/* Inline sizes tried, largest first, to learn the device's limit. */
static const uint32_t inline_probe[] = { 1024, 512, 256, 128, 64, 32, 16 };

static int ibctx_open(const char *name, struct ibv_context **ibctx_out)
{
	struct ibv_device **list;
	struct ibv_context *ibctx = NULL;
	int i, n, ret = -OPENRDMA_ENODEV;

	list = ibv_get_device_list(&n);
	if (!list)
		return verbs_errno();
	for (i = 0; i < n; i++) {
		if (strcmp(ibv_get_device_name(list[i]), name))
			continue;
		ibctx = ibv_open_device(list[i]);
		ret = ibctx ? 0 : verbs_errno();
		break;
	}
	ibv_free_device_list(list);
	if (ret) {
		openrdma_dbg("verbs", "%s: %s", name, openrdma_strerror(ret));
		return ret;
	}
	*ibctx_out = ibctx;
	return 0;
}

/*
 * libibverbs does not report the device's inline limit: create small QPs
 * until one is accepted and read back what it was granted.
 */
static uint32_t max_inline_find(struct ibv_context *ibctx)
{
	struct ibv_qp_init_attr init = { .qp_type = IBV_QPT_RC };
	uint32_t granted = 0;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	size_t i;

	pd = ibv_alloc_pd(ibctx);
	if (!pd)
		return 0;
	cq = ibv_create_cq(ibctx, 1, NULL, NULL, 0);
	if (!cq)
		goto out_pd;
	init.send_cq = cq;
	init.recv_cq = cq;
	init.cap.max_send_wr = 1;
	init.cap.max_recv_wr = 1;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	for (i = 0; i < sizeof(inline_probe) / sizeof(inline_probe[0]); i++) {
		init.cap.max_inline_data = inline_probe[i];
		qp = ibv_create_qp(pd, &init);
		if (!qp)
			continue;
		granted = init.cap.max_inline_data;
		ibv_destroy_qp(qp);
		break;
	}
	ibv_destroy_cq(cq);
out_pd:
	ibv_dealloc_pd(pd);
	return granted;
}

static int attr_load(struct verbs_ctx *vctx)
{
	struct ibv_device_attr_ex dev;
	struct ibv_port_attr port;
	int ret;

	ret = ibv_query_device_ex(vctx->ibctx, NULL, &dev);
	if (ret)
		return verbs_ret(ret);
	if (vctx->port < 1 || vctx->port > dev.orig_attr.phys_port_cnt) {
		openrdma_warn("verbs", "%s has no port %u",
			      ibv_get_device_name(vctx->ibctx->device),
			      vctx->port);
		return -OPENRDMA_ENODEV;
	}
	ret = ibv_query_port(vctx->ibctx, vctx->port, &port);
	if (ret)
		return verbs_ret(ret);
	vctx->link_layer = port.link_layer;
	vctx->active_mtu = port.active_mtu;
	vctx->quirks = verbs_device_quirks(&dev);
	verbs_device_attr_fill(&dev, &port, vctx->iwarp, vctx->quirks,
			       &vctx->attr);
	vctx->attr.max_inline_data = (int)max_inline_find(vctx->ibctx);
	return 0;
}

static int params_load(struct verbs_ctx *vctx)
{
	int64_t resolve_ms = 2000;
	bool cache = false;

	openrdma_param_get_int("verbs", "resolve_timeout_ms", &resolve_ms);
	if (resolve_ms < 1 || resolve_ms > 600000) {
		openrdma_warn("verbs",
			      "resolve_timeout_ms %lld out of 1-600000",
			      (long long)resolve_ms);
		resolve_ms = 2000;
	}
	vctx->resolve_ms = (int)resolve_ms;
	openrdma_param_get_bool("verbs", "reg_cache", &cache);
	return cache ? verbs_reg_cache_create(&vctx->reg_cache) : 0;
}

static int fd_nonblock(int fd)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return verbs_errno();
	return 0;
}

static void libs_pin_once(void)
{
	static const char *const libs[] = { "librdmacm.so.1",
					    "libibverbs.so.1" };
	size_t i;

	for (i = 0; i < sizeof(libs) / sizeof(libs[0]); i++)
		if (!dlopen(libs[i], RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE))
			openrdma_dbg("verbs", "%s not pinned: %s", libs[i],
				     dlerror());
}

/*
 * librdmacm opens every device once per process and never closes them,
 * and keeps libibverbs' device list: unloaded with libopenrdma (libdat2
 * unloads its provider after the last IA is closed), they would lose that
 * state, and leak it, at each load.  The first context pins both.
 */
static void libs_pin(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, libs_pin_once);
}

static int channels_create(struct verbs_ctx *vctx)
{
	int ret;

	libs_pin();
	vctx->comp_ch = ibv_create_comp_channel(vctx->ibctx);
	if (!vctx->comp_ch)
		return verbs_errno();
	vctx->cm_ch = rdma_create_event_channel();
	if (!vctx->cm_ch) {
		ret = verbs_errno();
		goto err_comp;
	}
	/* The progress thread drains each fd until EAGAIN. */
	ret = fd_nonblock(vctx->comp_ch->fd);
	if (!ret)
		ret = fd_nonblock(vctx->ibctx->async_fd);
	if (!ret)
		ret = fd_nonblock(vctx->cm_ch->fd);
	if (ret)
		goto err_cm;
	return 0;

err_cm:
	rdma_destroy_event_channel(vctx->cm_ch);
err_comp:
	ibv_destroy_comp_channel(vctx->comp_ch);
	return ret;
}

static void channels_destroy(struct verbs_ctx *vctx)
{
	rdma_destroy_event_channel(vctx->cm_ch);
	ibv_destroy_comp_channel(vctx->comp_ch);
}

int verbs_device_open(struct openrdma_device *dev,
		      struct openrdma_context **ctx_out)
{
	struct verbs_ctx *vctx;
	int ret;

	vctx = calloc(1, sizeof(*vctx));
	if (!vctx)
		return -OPENRDMA_ENOMEM;
	vctx->port = dev->port_num ? dev->port_num : 1;
	vctx->epfd = -1;
	vctx->wake_fd = -1;
	ret = ibctx_open(dev->dev_name, &vctx->ibctx);
	if (ret)
		goto err_free;
	vctx->iwarp =
		vctx->ibctx->device->transport_type == IBV_TRANSPORT_IWARP;
	ret = attr_load(vctx);
	if (ret)
		goto err_close;
	ret = channels_create(vctx);
	if (ret)
		goto err_close;
	ret = -pthread_mutex_init(&vctx->cm_lock, NULL);
	if (ret)
		goto err_channels;
	ret = verbs_gids_load(vctx);
	if (ret)
		goto err_mutex;
	ret = verbs_port_addr_find(vctx);
	if (ret)
		goto err_gids;
	ret = params_load(vctx);
	if (ret)
		goto err_gids;
	ret = verbs_progress_start(vctx);
	if (ret)
		goto err_cache;
	/* the core owns the async-event fd it gives the application */
	vctx->base.async_fd = -1;

	*ctx_out = &vctx->base;
	return 0;

err_cache:
	if (vctx->reg_cache)
		verbs_reg_cache_destroy(vctx->reg_cache);
err_gids:
	free(vctx->gids);
err_mutex:
	pthread_mutex_destroy(&vctx->cm_lock);
err_channels:
	channels_destroy(vctx);
err_close:
	ibv_close_device(vctx->ibctx);
err_free:
	free(vctx);
	return ret;
}

void verbs_context_close(struct openrdma_context *ctx)
{
	struct verbs_ctx *vctx = to_verbs_ctx(ctx);

	/* Their ids' events need the progress thread until they are gone. */
	verbs_cm_destroyers_join(vctx);
	/* Then: the thread reports into the core until it stops. */
	verbs_progress_stop(vctx);
	if (vctx->reg_cache)
		verbs_reg_cache_destroy(vctx->reg_cache);
	free(vctx->gids);
	pthread_mutex_destroy(&vctx->cm_lock);
	channels_destroy(vctx);
	if (ibv_close_device(vctx->ibctx))
		openrdma_warn("verbs", "ibv_close_device: %s", strerror(errno));
	free(vctx);
}

int verbs_device_query(struct openrdma_context *ctx,
		       struct openrdma_device_attr *attr)
{
	*attr = to_verbs_ctx(ctx)->attr;
	return 0;
}

int verbs_port_query(struct openrdma_context *ctx, uint8_t port_num,
		     struct openrdma_port_attr *attr)
{
	struct verbs_ctx *vctx = to_verbs_ctx(ctx);
	struct ibv_port_attr port;
	int ret;

	ret = ibv_query_port(vctx->ibctx, vctx->port, &port);
	if (ret)
		return verbs_ret(ret);
	verbs_port_attr_fill(&port, attr);
	attr->addr = vctx->addr;
	return 0;
}

int verbs_gid_query(struct openrdma_context *ctx, uint8_t port_num, int index,
		    union openrdma_gid *gid)
{
	struct verbs_ctx *vctx = to_verbs_ctx(ctx);
	union ibv_gid ibgid;

	if (ibv_query_gid(vctx->ibctx, vctx->port, index, &ibgid))
		return verbs_errno();
	memcpy(gid->raw, ibgid.raw, sizeof(gid->raw));
	return 0;
}
