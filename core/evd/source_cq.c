/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * CQs as the source of a DTO EVD.
 *
 * Completions stay in the CQ until someone needs them in the ring.  In
 * pull mode (no fd, callback or AEVD) that is the consumer: dequeue and
 * wait poll the CQs themselves, and a blocked waiter sleeps on the
 * completion channel.  In push mode the dispatcher watches the channel
 * and moves completions into the ring as they come, so that the fd, the
 * callback and the AEVD see them.  Either way every CQ poll happens under
 * the EVD's lock, which keeps each CQ's completions in order, and
 * completions that do not fit stay in the CQ (backlog) until a dequeue
 * makes room.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <uthash.h>
#include <utlist.h>

#include <openrdma/errno.h>
#include <openrdma/log.h>

#include "core/core.h"
#include "core/evd/evd_priv.h"

/* every bound CQ, by address; core_evd_reg_lock */
static struct evd_cq_src *cq_map;

#define PULL_BATCH 16

bool core_evd_cq_pull_first(struct core_evd *evd, void *first)
{
	struct openrdma_wc wc[PULL_BATCH];
	struct evd_cq_src *src;
	void *filled = first;
	size_t space;
	int i, n, want;

	evd->backlog = false;
	DL_FOREACH (evd->cqs, src) {
		while (!src->overrun) {
			space = evd->cap - evd_count(evd);
			if (!space) {
				evd->backlog = true;
				return !first && filled;
			}
			want = space < PULL_BATCH ? (int)space : PULL_BATCH;
			n = core_cq_poll(src->cq, want, wc);
			if (n < 0) {
				core_evd_cq_poll_failed(evd, src, n);
				break;
			}
			for (i = 0; i < n; i++) {
				/* the converter writes first only to keep it */
				if (first) {
					if (!src->convert(src->arg, &wc[i],
							  first))
						first = NULL;
				} else if (!src->convert(
						   src->arg, &wc[i],
						   core_evd_slot_tail(evd))) {
					core_evd_slot_commit(evd);
				}
			}
			if (n < want)
				break;
		}
	}
	return !first && filled;
}

void core_evd_cq_poll_failed(struct core_evd *evd, struct evd_cq_src *src,
			     int err)
{
	if (err == -OPENRDMA_EOVERFLOW) {
		src->overrun = true;
		core_evd_overflow(evd);
	} else {
		openrdma_warn(EVD_LOG, "cq_poll: %s", openrdma_strerror(err));
	}
}

void core_evd_locked(struct core_evd *evd, void (*fn)(void *arg), void *arg)
{
	core_evd_lock(evd);
	fn(arg);
	core_evd_unlock(evd);
}

void core_evd_cq_arm(struct core_evd *evd)
{
	struct evd_cq_src *src;
	int ret;

	DL_FOREACH (evd->cqs, src) {
		if (src->overrun)
			continue;
		ret = openrdma_cq_req_notify(src->cq, 0);
		if (ret)
			openrdma_warn(EVD_LOG, "cq_req_notify: %s",
				      openrdma_strerror(ret));
	}
}

struct openrdma_cq *core_evd_cq_sleep_begin(struct core_evd *evd,
					    struct pollfd *pfd, void **cookie,
					    int max, int *n_out)
{
	struct openrdma_cq *cq;
	int n;

	*n_out = 0;
	/* the transport of several CQs would wake the waiter for any */
	if (!evd->cqs || evd->cqs->next || evd->cqs->overrun)
		return NULL;
	cq = evd->cqs->cq;
	n = cq->obj.ctx->ops->cq_sleep_begin(cq, pfd, cookie, max);
	if (n <= 0)
		return NULL;
	/* a destroy from another thread waits for the sleep to end */
	core_obj_get(&cq->obj);
	/* for what other threads complete; the transport is not told, as
	 * openrdma_cq_req_notify() would, that nobody polls */
	core_cq_arm(cq, 0);
	*n_out = n;
	return cq;
}

void core_evd_cq_sleep_end(struct openrdma_cq *cq, const struct pollfd *pfd,
			   void **cookie, int n)
{
	if (!cq)
		return;
	core_cq_disarm(cq);
	cq->obj.ctx->ops->cq_sleep_end(cq, pfd, cookie, n);
	core_obj_put(&cq->obj);
}

void core_evd_chan_drain(struct core_evd *evd)
{
	struct openrdma_cq *cq;
	void *cq_context;
	int ret;

	for (;;) {
		ret = openrdma_cq_event_get(evd->chan, &cq, &cq_context);
		if (ret)
			break;
		openrdma_cq_events_ack(cq, 1);
	}
	if (ret != -OPENRDMA_EAGAIN)
		openrdma_dbg(EVD_LOG, "cq_event_get: %s",
			     openrdma_strerror(ret));
}

/* Push mode: the channel is readable. */
static void chan_handler(void *arg)
{
	struct core_evd *evd = arg;

	core_evd_lock(evd);
	core_evd_chan_drain(evd);
	/* arm before polling: a completion in between signals again */
	core_evd_cq_arm(evd);
	core_evd_cq_pull(evd);
	core_evd_update(evd);
	core_evd_unlock(evd);
}

int core_evd_cq_mode(struct core_evd *evd)
{
	struct core_disp_watch *w = NULL;
	bool push;
	int ret;

	core_evd_lock(evd);
	push = evd_push_mode(evd) && evd->chan && !evd->dead;
	if (push == (evd->chan_watch != NULL)) {
		core_evd_unlock(evd);
		return 0;
	}
	if (!push) {
		w = evd->chan_watch;
		evd->chan_watch = NULL;
	}
	core_evd_unlock(evd);
	if (!push) {
		core_disp_unwatch(w);
		return 0;
	}
	/* ctl is held: nobody else changes the mode meanwhile */
	ret = core_disp_watch(evd->chan->fd, chan_handler, evd, &w);
	if (ret)
		return ret;
	core_evd_lock(evd);
	evd->chan_watch = w;
	core_evd_cq_arm(evd);
	core_evd_cq_pull(evd);
	core_evd_update(evd);
	core_evd_unlock(evd);
	return 0;
}

static int chan_nonblock(struct openrdma_comp_channel *ch)
{
	int fl = fcntl(ch->fd, F_GETFL);

	if (fl < 0 || fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

/* The channel must serve this EVD only.  core_evd_reg_lock held. */
static int chan_check(struct core_evd *evd, struct openrdma_comp_channel *ch)
{
	struct evd_cq_src *src, *tmp;

	if (evd->chan && evd->chan != ch)
		return -OPENRDMA_EINVAL;
	HASH_ITER (hh, cq_map, src, tmp) {
		if (src->evd != evd && src->cq->channel == ch)
			return -OPENRDMA_EBUSY;
	}
	return 0;
}

int core_evd_cq_bind(struct core_evd *evd, struct openrdma_cq *cq,
		     core_evd_wc_fn convert, void *arg)
{
	struct evd_cq_src *src, *old;
	int ret;

	if (!cq || !convert || !cq->channel ||
	    !(evd->streams & CORE_EVD_STREAM_DTO))
		return -OPENRDMA_EINVAL;
	src = calloc(1, sizeof(*src));
	if (!src)
		return -OPENRDMA_ENOMEM;
	src->cq = cq;
	src->evd = evd;
	src->convert = convert;
	src->arg = arg;

	pthread_mutex_lock(&evd->ctl);
	pthread_mutex_lock(&core_evd_reg_lock);
	HASH_FIND_PTR(cq_map, &cq, old);
	ret = old ? -OPENRDMA_EEXIST : chan_check(evd, cq->channel);
	if (!ret)
		ret = chan_nonblock(cq->channel);
	if (!ret)
		HASH_ADD_PTR(cq_map, cq, src);
	pthread_mutex_unlock(&core_evd_reg_lock);
	if (ret)
		goto err;

	core_evd_lock(evd);
	DL_APPEND(evd->cqs, src);
	evd->chan = cq->channel;
	/* already in push mode: take what the new CQ holds, arm it */
	if (evd->chan_watch) {
		core_evd_cq_arm(evd);
		core_evd_cq_pull(evd);
		core_evd_update(evd);
	}
	core_evd_unlock(evd);
	ret = core_evd_cq_mode(evd);
	if (ret)
		goto err_unlist;
	pthread_mutex_unlock(&evd->ctl);
	return 0;

err_unlist:
	pthread_mutex_lock(&core_evd_reg_lock);
	HASH_DEL(cq_map, src);
	pthread_mutex_unlock(&core_evd_reg_lock);
	core_evd_lock(evd);
	DL_DELETE(evd->cqs, src);
	if (!evd->cqs)
		evd->chan = NULL;
	core_evd_unlock(evd);
err:
	pthread_mutex_unlock(&evd->ctl);
	free(src);
	return ret;
}

/* ctl held */
static void src_remove(struct core_evd *evd, struct evd_cq_src *src)
{
	struct core_disp_watch *w = NULL;

	core_evd_lock(evd);
	DL_DELETE(evd->cqs, src);
	if (!evd->cqs) {
		evd->chan = NULL;
		evd->backlog = false;
		w = evd->chan_watch;
		evd->chan_watch = NULL;
	}
	core_evd_unlock(evd);
	/* the handler may be running: it only sees the list under the lock */
	if (w)
		core_disp_unwatch(w);
	/* only now may another EVD bind a CQ of this channel */
	pthread_mutex_lock(&core_evd_reg_lock);
	HASH_DEL(cq_map, src);
	pthread_mutex_unlock(&core_evd_reg_lock);
	free(src);
}

int core_evd_cq_unbind(struct core_evd *evd, struct openrdma_cq *cq)
{
	struct evd_cq_src *src;
	int ret = 0;

	pthread_mutex_lock(&evd->ctl);
	pthread_mutex_lock(&core_evd_reg_lock);
	HASH_FIND_PTR(cq_map, &cq, src);
	pthread_mutex_unlock(&core_evd_reg_lock);
	if (src && src->evd == evd)
		src_remove(evd, src);
	else
		ret = -OPENRDMA_ENOENT;
	pthread_mutex_unlock(&evd->ctl);
	return ret;
}

void core_evd_cq_unbind_all(struct core_evd *evd)
{
	while (evd->cqs)
		src_remove(evd, evd->cqs);
}

unsigned int core_evd_cq_count(struct core_evd *evd)
{
	struct evd_cq_src *src;
	unsigned int n = 0;

	DL_COUNT(evd->cqs, src, n);
	return n;
}

struct core_evd *core_evd_cq_owner(struct openrdma_cq *cq)
{
	struct evd_cq_src *src;

	HASH_FIND_PTR(cq_map, &cq, src);
	return src ? src->evd : NULL;
}
