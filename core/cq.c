/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Completion queues and completion channels.
 *
 * A channel is an eventfd whose counter is the number of queued
 * notifications, plus a record per attached CQ: its arm state and its
 * notifications, queued and taken.  Every notification holds a reference
 * on its CQ from openrdma_cq_notify() until openrdma_cq_events_ack().
 *
 * Arming and notifying are a Dekker pair: the transport stores a
 * completion, then loads the channel's arm count (openrdma_cq_notify());
 * the application stores the arm, then polls, and a poll of an empty CQ
 * may read its count without a lock (core/sw/cq.c).  Each side needs a
 * full fence between its store and its load, or both miss (x86 lets a
 * load pass an earlier store to another line), and the application
 * sleeps on a completion already queued.
 */
#include <stdlib.h>
#include <unistd.h>
#include <utlist.h>

#include <openrdma/transport.h>

#include "core/core.h"
#include "core/export.h"
#include "core/probe.h"

enum cq_arm {
	CQ_ARM_NONE,
	CQ_ARM_SOLICITED,
	CQ_ARM_NEXT,
};

/* What a channel knows of one of its CQs; guarded by the channel lock. */
struct cq_record {
	struct openrdma_cq *cq; /* key */
	enum cq_arm armed;
	unsigned int queued; /* notifications not yet taken by event_get */
	unsigned int taken; /* taken, not yet acknowledged */
	struct cq_record *prev, *next; /* on the ready list while queued */
	UT_hash_handle hh;
};

struct core_comp_channel {
	struct openrdma_comp_channel base;
	/* A mutex: transports notify from their own threads. */
	struct core_lock lock;
	/* CQs armed; lets openrdma_cq_notify() skip the lock while 0. */
	atomic_uint armed;
	struct cq_record *cqs; /* hash by CQ */
	struct cq_record *ready; /* FIFO of records with queued > 0 */
};

static struct core_comp_channel *to_channel(struct openrdma_comp_channel *ch)
{
	return openrdma_container_of(ch, struct core_comp_channel, base);
}

static struct cq_record *cq_record_find(struct core_comp_channel *ch,
					const struct openrdma_cq *cq)
{
	struct cq_record *rec;

	HASH_FIND_PTR(ch->cqs, &cq, rec);
	return rec;
}

/* Sets how rec is armed, keeping the channel's count of armed CQs in step;
 * with the channel lock held. */
static void cq_record_arm_locked(struct core_comp_channel *ch,
				 struct cq_record *rec, enum cq_arm armed)
{
	if (rec->armed == CQ_ARM_NONE && armed != CQ_ARM_NONE)
		atomic_fetch_add(&ch->armed, 1);
	else if (rec->armed != CQ_ARM_NONE && armed == CQ_ARM_NONE)
		atomic_fetch_sub(&ch->armed, 1);
	rec->armed = armed;
}

OPENRDMA_EXPORT int
openrdma_comp_channel_create(struct openrdma_context *ctx,
			     struct openrdma_comp_channel **ch_out)
{
	struct core_comp_channel *ch;
	int ret;

	ret = core_check(ctx, OPENRDMA_OBJ_CONTEXT, "comp_channel_create",
			 "ctx");
	if (ret)
		return ret;
	if (!ch_out) {
		core_arg_err("comp_channel_create", "ch_out", "NULL");
		return -OPENRDMA_EINVAL;
	}

	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return -OPENRDMA_ENOMEM;
	/* Blocking: event_get sleeps unless the application sets O_NONBLOCK */
	ret = core_evfd_create(0, &ch->base.fd);
	if (ret)
		goto err_free;
	ret = core_lock_init(&ch->lock, CORE_LOCK_MUTEX);
	if (ret)
		goto err_fd;
	atomic_init(&ch->armed, 0);
	ret = core_obj_init(&ch->base.obj, OPENRDMA_OBJ_COMP_CHANNEL, ctx,
			    &ctx->obj);
	if (ret)
		goto err_lock;

	*ch_out = &ch->base;
	return 0;

err_lock:
	core_lock_destroy(&ch->lock);
err_fd:
	close(ch->base.fd);
err_free:
	free(ch);
	return ret;
}

OPENRDMA_EXPORT int
openrdma_comp_channel_destroy(struct openrdma_comp_channel *channel)
{
	struct core_comp_channel *ch;
	struct openrdma_context *ctx;
	int ret;

	ret = core_check(channel, OPENRDMA_OBJ_COMP_CHANNEL,
			 "comp_channel_destroy", "ch");
	if (ret)
		return ret;
	ctx = channel->obj.ctx;
	/* Every CQ on the channel holds it, so none is left after this. */
	ret = core_obj_retire(&channel->obj);
	if (ret)
		return ret;

	ch = to_channel(channel);
	close(ch->base.fd);
	core_lock_destroy(&ch->lock);
	free(ch);
	core_obj_put(&ctx->obj);
	return 0;
}

OPENRDMA_EXPORT int openrdma_cq_create(struct openrdma_context *ctx, int cqe,
				       void *cq_context,
				       struct openrdma_comp_channel *channel,
				       int comp_vector,
				       struct openrdma_cq **cq_out)
{
	struct cq_record *rec = NULL;
	struct core_comp_channel *ch;
	struct openrdma_cq *cq;
	int max_cqe, ret;

	ret = core_check(ctx, OPENRDMA_OBJ_CONTEXT, "cq_create", "ctx");
	if (ret)
		return ret;
	max_cqe = core_attr(ctx)->max_cqe;
	if (cqe < 1 || cqe > max_cqe) {
		core_arg_err("cq_create", "cqe", "%d not in 1..max_cqe %d", cqe,
			     max_cqe);
		return -OPENRDMA_EINVAL;
	}
	if (channel) {
		ret = core_check(channel, OPENRDMA_OBJ_COMP_CHANNEL,
				 "cq_create", "channel");
		if (ret)
			return ret;
		ret = core_same_ctx(&channel->obj, &ctx->obj, "cq_create",
				    "channel");
		if (ret)
			return ret;
	}
	if (comp_vector < 0) {
		core_arg_err("cq_create", "comp_vector", "%d < 0", comp_vector);
		return -OPENRDMA_EINVAL;
	}
	if (!cq_out) {
		core_arg_err("cq_create", "cq_out", "NULL");
		return -OPENRDMA_EINVAL;
	}

	/* Allocated first: nothing may fail once the transport's CQ exists */
	if (channel) {
		rec = calloc(1, sizeof(*rec));
		if (!rec)
			return -OPENRDMA_ENOMEM;
	}
	ret = ctx->ops->cq_create(ctx, cqe, comp_vector, &cq);
	if (ret)
		goto err_rec;
	ret = core_obj_init(&cq->obj, OPENRDMA_OBJ_CQ, ctx, &ctx->obj);
	if (ret)
		goto err_destroy;
	cq->channel = channel;
	cq->cq_context = cq_context;
	if (cq->cqe < cqe)
		cq->cqe = cqe;
	cq->comp_events_completed = 0;
	cq->async_events_completed = 0;
	if (channel) {
		ch = to_channel(channel);
		core_obj_get(&channel->obj);
		rec->cq = cq;
		core_lock_acquire(&ch->lock);
		HASH_ADD_PTR(ch->cqs, cq, rec);
		core_lock_release(&ch->lock);
	}

	*cq_out = cq;
	return 0;

err_destroy:
	ctx->ops->cq_destroy(cq);
err_rec:
	free(rec);
	return ret;
}

/* Drops a record's queued notifications; with the channel lock held. */
static void cq_record_discard(struct core_comp_channel *ch,
			      struct cq_record *rec)
{
	if (!rec->queued)
		return;
	DL_DELETE(ch->ready, rec);
	core_obj_put_n(&rec->cq->obj, rec->queued);
	for (; rec->queued; rec->queued--)
		core_evfd_take(ch->base.fd);
}

OPENRDMA_EXPORT int openrdma_cq_destroy(struct openrdma_cq *cq)
{
	struct core_comp_channel *ch = NULL;
	struct cq_record *rec = NULL;
	struct openrdma_context *ctx;
	struct core_ctx *cc;
	int ret;

	ret = core_check(cq, OPENRDMA_OBJ_CQ, "cq_destroy", "cq");
	if (ret)
		return ret;
	ctx = cq->obj.ctx;
	cc = core_ctx_get(ctx);

	/*
	 * Notifications not yet taken are discarded with the CQ, as the
	 * kernel does for libibverbs; taken ones must be acknowledged.
	 */
	core_lock_acquire(&cc->lock);
	if (cq->channel) {
		ch = to_channel(cq->channel);
		core_lock_acquire(&ch->lock);
		rec = cq_record_find(ch, cq);
	}
	ret = core_obj_retire_locked(cc, &cq->obj, rec ? rec->queued : 0);
	if (!ret && rec)
		cq_record_discard(ch, rec);
	if (ch)
		core_lock_release(&ch->lock);
	core_lock_release(&cc->lock);
	if (ret)
		return ret;

	ret = ctx->ops->cq_destroy(cq);
	if (ret) {
		core_obj_revive(&cq->obj, OPENRDMA_OBJ_CQ);
		return ret;
	}

	if (ch) {
		core_lock_acquire(&ch->lock);
		cq_record_arm_locked(ch, rec, CQ_ARM_NONE);
		HASH_DEL(ch->cqs, rec);
		core_lock_release(&ch->lock);
		free(rec);
		core_obj_put(&ch->base.obj);
	}
	core_obj_put(&ctx->obj);
	return 0;
}

OPENRDMA_EXPORT int openrdma_cq_resize(struct openrdma_cq *cq, int cqe)
{
	int max_cqe, old, ret;

	ret = core_check(cq, OPENRDMA_OBJ_CQ, "cq_resize", "cq");
	if (ret)
		return ret;
	max_cqe = core_attr(cq->obj.ctx)->max_cqe;
	if (cqe < 1 || cqe > max_cqe) {
		core_arg_err("cq_resize", "cqe", "%d not in 1..max_cqe %d", cqe,
			     max_cqe);
		return -OPENRDMA_EINVAL;
	}
	old = cq->cqe;
	ret = cq->obj.ctx->ops->cq_resize(cq, cqe);
	if (ret)
		return ret;
	/* The transport may grant more and say so in cq->cqe. */
	if (cq->cqe == old || cq->cqe < cqe)
		cq->cqe = cqe;
	return 0;
}

OPENRDMA_EXPORT int openrdma_cq_poll(struct openrdma_cq *cq, int num_entries,
				     struct openrdma_wc *wc)
{
	int ret;

	ret = core_check(cq, OPENRDMA_OBJ_CQ, "cq_poll", "cq");
	if (ret)
		return ret;
	if (num_entries < 0 || (num_entries && !wc)) {
		core_arg_err("cq_poll", "num_entries", "%d with wc %p",
			     num_entries, (void *)wc);
		return -OPENRDMA_EINVAL;
	}
	ret = cq->obj.ctx->ops->cq_poll(cq, num_entries, wc);
	if (ret > 0)
		core_probe_polled();
	return ret;
}

/* Arms cq for want, never weakening an arm already set (armed for the
 * next completion covers solicited ones), or disarms it (CQ_ARM_NONE). */
static void cq_arm_set(struct openrdma_cq *cq, enum cq_arm want)
{
	struct core_comp_channel *ch;
	struct cq_record *rec;

	if (!cq->channel)
		return;
	ch = to_channel(cq->channel);
	core_lock_acquire(&ch->lock);
	rec = cq_record_find(ch, cq);
	if (rec && (want == CQ_ARM_NONE || want > rec->armed))
		cq_record_arm_locked(ch, rec, want);
	core_lock_release(&ch->lock);
}

void core_cq_arm(struct openrdma_cq *cq, int solicited_only)
{
	cq_arm_set(cq, solicited_only ? CQ_ARM_SOLICITED : CQ_ARM_NEXT);
	/* before the caller's poll: see the top of the file */
	atomic_thread_fence(memory_order_seq_cst);
}

OPENRDMA_EXPORT int openrdma_cq_req_notify(struct openrdma_cq *cq,
					   int solicited_only)
{
	int ret;

	ret = core_check(cq, OPENRDMA_OBJ_CQ, "cq_req_notify", "cq");
	if (ret)
		return ret;

	/* Armed before the transport is told, so that no completion
	 * arriving in between is missed. */
	core_cq_arm(cq, solicited_only);
	ret = cq->obj.ctx->ops->cq_req_notify(cq, solicited_only);
	/* Software transports leave arming to the core. */
	if (ret == -OPENRDMA_EOPNOTSUPP)
		ret = 0;
	return ret;
}

void core_cq_disarm(struct openrdma_cq *cq)
{
	cq_arm_set(cq, CQ_ARM_NONE);
}

OPENRDMA_EXPORT void openrdma_cq_notify(struct openrdma_cq *cq, bool solicited)
{
	struct core_comp_channel *ch;
	struct cq_record *rec;

	if (!cq || !cq->channel)
		return;
	ch = to_channel(cq->channel);
	/* the completion pushed, then the arm read: see the top of the
	 * file */
	atomic_thread_fence(memory_order_seq_cst);
	if (!atomic_load_explicit(&ch->armed, memory_order_relaxed))
		return;

	core_lock_acquire(&ch->lock);
	rec = cq_record_find(ch, cq);
	/* A CQ being destroyed is retired under this lock: stay silent. */
	if (rec && cq->obj.type == OPENRDMA_OBJ_CQ &&
	    (rec->armed == CQ_ARM_NEXT ||
	     (rec->armed == CQ_ARM_SOLICITED && solicited))) {
		cq_record_arm_locked(ch, rec, CQ_ARM_NONE);
		core_obj_get(&cq->obj);
		if (!rec->queued++)
			DL_APPEND(ch->ready, rec);
		core_evfd_post(ch->base.fd);
	}
	core_lock_release(&ch->lock);
}

OPENRDMA_EXPORT int openrdma_cq_event_get(struct openrdma_comp_channel *channel,
					  struct openrdma_cq **cq_out,
					  void **cq_context_out)
{
	struct core_comp_channel *ch;
	struct cq_record *rec;
	struct openrdma_cq *cq;
	int ret;

	ret = core_check(channel, OPENRDMA_OBJ_COMP_CHANNEL, "cq_event_get",
			 "ch");
	if (ret)
		return ret;
	if (!cq_out) {
		core_arg_err("cq_event_get", "cq_out", "NULL");
		return -OPENRDMA_EINVAL;
	}
	ch = to_channel(channel);

	for (;;) {
		core_lock_acquire(&ch->lock);
		rec = ch->ready;
		if (rec)
			break;
		core_lock_release(&ch->lock);
		ret = core_evfd_wait(ch->base.fd);
		if (ret)
			return ret;
	}
	/* Round robin among CQs with several queued notifications. */
	DL_DELETE(ch->ready, rec);
	if (--rec->queued)
		DL_APPEND(ch->ready, rec);
	rec->taken++;
	core_evfd_take(ch->base.fd);
	cq = rec->cq;
	core_lock_release(&ch->lock);

	*cq_out = cq;
	if (cq_context_out)
		*cq_context_out = cq->cq_context;
	return 0;
}

OPENRDMA_EXPORT void openrdma_cq_events_ack(struct openrdma_cq *cq,
					    unsigned int nevents)
{
	struct core_comp_channel *ch;
	struct cq_record *rec;

	if (core_check(cq, OPENRDMA_OBJ_CQ, "cq_events_ack", "cq") || !nevents)
		return;
	if (!cq->channel) {
		core_arg_err("cq_events_ack", "cq", "has no channel");
		return;
	}
	ch = to_channel(cq->channel);

	core_lock_acquire(&ch->lock);
	rec = cq_record_find(ch, cq);
	/* More than were taken would drop references nobody holds. */
	if (nevents > rec->taken) {
		openrdma_warn("core", "%u events acknowledged, %u taken",
			      nevents, rec->taken);
		nevents = rec->taken;
	}
	rec->taken -= nevents;
	cq->comp_events_completed += nevents;
	core_lock_release(&ch->lock);
	core_obj_put_n(&cq->obj, nevents);
}
