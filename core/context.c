/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Contexts: opening a device, closing it, and the device, port and GID
 * queries.
 */
#include <pthread.h>
#include <stdlib.h>

#include <openrdma/transport.h>

#include "core/core.h"
#include "core/evd/evd.h"
#include "core/export.h"

/*
 * The core state of every open context, by context address.  A read-write
 * lock: lookups (every create call) far outnumber opens and closes.
 */
static struct core_ctx *ctx_table;
static pthread_rwlock_t ctx_table_lock = PTHREAD_RWLOCK_INITIALIZER;

struct core_ctx *core_ctx_get(const struct openrdma_context *ctx)
{
	struct core_ctx *cc;

	pthread_rwlock_rdlock(&ctx_table_lock);
	HASH_FIND_PTR(ctx_table, &ctx, cc);
	pthread_rwlock_unlock(&ctx_table_lock);
	return cc;
}

unsigned int core_ctx_count(void)
{
	unsigned int n;

	pthread_rwlock_rdlock(&ctx_table_lock);
	n = HASH_COUNT(ctx_table);
	pthread_rwlock_unlock(&ctx_table_lock);
	return n;
}

static void ctx_table_add(struct core_ctx *cc)
{
	pthread_rwlock_wrlock(&ctx_table_lock);
	HASH_ADD_PTR(ctx_table, ctx, cc);
	pthread_rwlock_unlock(&ctx_table_lock);
}

static void ctx_table_del(struct core_ctx *cc)
{
	pthread_rwlock_wrlock(&ctx_table_lock);
	HASH_DEL(ctx_table, cc);
	pthread_rwlock_unlock(&ctx_table_lock);
}

int core_port_check(const struct openrdma_device_attr *attr,
		    unsigned int port_num, const char *fn)
{
	if (port_num >= 1 && port_num <= attr->phys_port_cnt)
		return 0;
	openrdma_dbg("core", "%s: arg port_num: %u not in 1..%u", fn, port_num,
		     attr->phys_port_cnt);
	return -OPENRDMA_EINVAL;
}

OPENRDMA_EXPORT int openrdma_device_open_mode(struct openrdma_device *dev,
					      enum openrdma_thread_mode mode,
					      struct openrdma_context **ctx_out)
{
	struct openrdma_context *ctx;
	struct core_ctx *cc;
	int ret;

	if (!dev || !dev->transport || !dev->ops) {
		core_arg_err("device_open", "dev", "NULL or not registered");
		return -OPENRDMA_EINVAL;
	}
	if (mode != OPENRDMA_THREAD_SAFE && mode != OPENRDMA_THREAD_SINGLE) {
		core_arg_err("device_open", "mode", "%d unknown", (int)mode);
		return -OPENRDMA_EINVAL;
	}
	if (!ctx_out) {
		core_arg_err("device_open", "ctx_out", "NULL");
		return -OPENRDMA_EINVAL;
	}

	cc = calloc(1, sizeof(*cc));
	if (!cc)
		return -OPENRDMA_ENOMEM;
	ret = core_async_init(cc);
	if (ret)
		goto err_free;
	ret = dev->transport->device_open(dev, &ctx);
	if (ret)
		goto err_async;

	ctx->device = dev;
	ctx->ops = dev->ops;
	ctx->thread_mode = mode;
	/* The core owns the async queue, whatever the transport set. */
	ctx->async_fd = cc->async_fd;
	cc->ctx = ctx;
	ret = ctx->ops->device_query(ctx, &cc->attr);
	if (ret) {
		openrdma_warn("core", "%s: device_query: %s", dev->name,
			      openrdma_strerror(ret));
		goto err_close;
	}
	ctx_table_add(cc);
	ret = core_obj_init(&ctx->obj, OPENRDMA_OBJ_CONTEXT, ctx, NULL);
	if (ret)
		goto err_table;

	*ctx_out = ctx;
	return 0;

err_table:
	ctx_table_del(cc);
err_close:
	dev->ops->context_close(ctx);
err_async:
	core_async_fini(cc);
err_free:
	free(cc);
	return ret;
}

OPENRDMA_EXPORT int openrdma_device_open(struct openrdma_device *dev,
					 struct openrdma_context **ctx_out)
{
	return openrdma_device_open_mode(dev, OPENRDMA_THREAD_SAFE, ctx_out);
}

OPENRDMA_EXPORT int openrdma_context_close(struct openrdma_context *ctx)
{
	struct core_ctx *cc;
	int ret;

	ret = core_check(ctx, OPENRDMA_OBJ_CONTEXT, "context_close", "ctx");
	if (ret)
		return ret;
	cc = core_ctx_get(ctx);
	ret = core_obj_retire(&ctx->obj);
	if (ret)
		return ret;

	ctx->ops->context_close(ctx);
	/* Only now: the transport's threads may post until it has closed. */
	ctx_table_del(cc);
	core_async_fini(cc);
	free(cc);
	/* the engine threads that ended with the last context's work */
	if (!core_ctx_count())
		core_evd_reap();
	return 0;
}

OPENRDMA_EXPORT int openrdma_device_query(struct openrdma_context *ctx,
					  struct openrdma_device_attr *attr)
{
	int ret;

	ret = core_check(ctx, OPENRDMA_OBJ_CONTEXT, "device_query", "ctx");
	if (ret)
		return ret;
	if (!attr) {
		core_arg_err("device_query", "attr", "NULL");
		return -OPENRDMA_EINVAL;
	}
	*attr = *core_attr(ctx);
	return 0;
}

OPENRDMA_EXPORT int openrdma_port_query(struct openrdma_context *ctx,
					uint8_t port_num,
					struct openrdma_port_attr *attr)
{
	int ret;

	ret = core_check(ctx, OPENRDMA_OBJ_CONTEXT, "port_query", "ctx");
	if (ret)
		return ret;
	ret = core_port_check(core_attr(ctx), port_num, "port_query");
	if (ret)
		return ret;
	if (!attr) {
		core_arg_err("port_query", "attr", "NULL");
		return -OPENRDMA_EINVAL;
	}
	return ctx->ops->port_query(ctx, port_num, attr);
}

OPENRDMA_EXPORT int openrdma_gid_query(struct openrdma_context *ctx,
				       uint8_t port_num, int index,
				       union openrdma_gid *gid)
{
	int ret;

	ret = core_check(ctx, OPENRDMA_OBJ_CONTEXT, "gid_query", "ctx");
	if (ret)
		return ret;
	ret = core_port_check(core_attr(ctx), port_num, "gid_query");
	if (ret)
		return ret;
	if (index < 0) {
		core_arg_err("gid_query", "index", "%d < 0", index);
		return -OPENRDMA_EINVAL;
	}
	if (!gid) {
		core_arg_err("gid_query", "gid", "NULL");
		return -OPENRDMA_EINVAL;
	}
	return ctx->ops->gid_query(ctx, port_num, index, gid);
}
