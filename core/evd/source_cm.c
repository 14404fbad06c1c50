/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * CM channels as the source of CM EVDs.  The dispatcher reads the channel;
 * the converter may route each event to another EVD, because the ids of
 * accepted connections report on their listener's channel while the
 * front ends want their events on the endpoint's own EVD.  An event is
 * acknowledged after its delivery: until then the id (or listener) it is
 * about cannot be destroyed, so neither can its owner nor the EVD the
 * owner routes to.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <utlist.h>

#include <openrdma/errno.h>
#include <openrdma/log.h>

#include "core/evd/evd_priv.h"

struct evd_cm_src {
	struct core_evd *evd;
	struct openrdma_cm_channel *ch;
	core_evd_cm_fn convert;
	void *arg;
	struct core_disp_watch *watch;
	void *rec; /* the converter's output, rec_size bytes */
	struct evd_cm_src *next, *prev; /* evd->cms */
	struct evd_cm_src *gnext, *gprev; /* cm_all */
};

/* every binding, to refuse a channel bound twice; core_evd_reg_lock */
static struct evd_cm_src *cm_all;

#define CM_STREAMS (CORE_EVD_STREAM_CM_REQ | CORE_EVD_STREAM_CM_MSG)

static void cm_deliver(struct evd_cm_src *src, struct core_evd *dst)
{
	if (!dst || dst->rec_size != src->evd->rec_size ||
	    !(dst->streams & CM_STREAMS)) {
		openrdma_warn(EVD_LOG, "CM event routed to a wrong EVD %p",
			      (void *)dst);
		return;
	}
	core_evd_lock(dst);
	if (!dst->dead)
		core_evd_push(dst, src->rec);
	core_evd_update(dst);
	core_evd_unlock(dst);
}

static void cm_handler(void *arg)
{
	struct evd_cm_src *src = arg;
	struct openrdma_cm_event *ev;
	struct core_evd *dst;
	int ret;

	for (;;) {
		ret = openrdma_cm_event_get(src->ch, &ev);
		if (ret)
			break;
		dst = src->evd;
		ret = src->convert(src->arg, ev, src->rec, &dst);
		if (!ret)
			cm_deliver(src, dst);
		/* only now: destroying the id waits for the ack, and dst
		 * lives as long as the id's owner */
		openrdma_cm_event_ack(ev);
	}
	if (ret != -OPENRDMA_EAGAIN)
		openrdma_dbg(EVD_LOG, "cm_event_get: %s",
			     openrdma_strerror(ret));
}

int core_evd_cm_bind(struct core_evd *evd, struct openrdma_cm_channel *ch,
		     core_evd_cm_fn convert, void *arg)
{
	struct evd_cm_src *src, *s;
	int ret = 0, fl;

	if (!ch || !convert || !(evd->streams & CM_STREAMS))
		return -OPENRDMA_EINVAL;
	src = calloc(1, sizeof(*src));
	if (!src)
		return -OPENRDMA_ENOMEM;
	src->rec = calloc(1, evd->rec_size);
	if (!src->rec) {
		ret = -OPENRDMA_ENOMEM;
		goto err_free;
	}
	src->evd = evd;
	src->ch = ch;
	src->convert = convert;
	src->arg = arg;

	pthread_mutex_lock(&evd->ctl);
	pthread_mutex_lock(&core_evd_reg_lock);
	DL_FOREACH2(cm_all, s, gnext)
	{
		if (s->ch == ch)
			ret = -OPENRDMA_EEXIST;
	}
	if (!ret)
		DL_APPEND2(cm_all, src, gprev, gnext);
	pthread_mutex_unlock(&core_evd_reg_lock);
	if (ret)
		goto err_unlock;
	fl = fcntl(ch->fd, F_GETFL);
	if (fl < 0 || fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		ret = -errno;
		goto err_unlist;
	}
	ret = core_disp_watch(ch->fd, cm_handler, src, &src->watch);
	if (ret)
		goto err_unlist;
	DL_APPEND(evd->cms, src);
	pthread_mutex_unlock(&evd->ctl);
	return 0;

err_unlist:
	pthread_mutex_lock(&core_evd_reg_lock);
	DL_DELETE2(cm_all, src, gprev, gnext);
	pthread_mutex_unlock(&core_evd_reg_lock);
err_unlock:
	pthread_mutex_unlock(&evd->ctl);
	free(src->rec);
err_free:
	free(src);
	return ret;
}

/* ctl held */
static void cm_remove(struct core_evd *evd, struct evd_cm_src *src)
{
	DL_DELETE(evd->cms, src);
	core_disp_unwatch(src->watch);
	pthread_mutex_lock(&core_evd_reg_lock);
	DL_DELETE2(cm_all, src, gprev, gnext);
	pthread_mutex_unlock(&core_evd_reg_lock);
	free(src->rec);
	free(src);
}

int core_evd_cm_unbind(struct core_evd *evd, struct openrdma_cm_channel *ch)
{
	struct evd_cm_src *src;
	int ret = -OPENRDMA_ENOENT;

	pthread_mutex_lock(&evd->ctl);
	DL_FOREACH (evd->cms, src) {
		if (src->ch == ch)
			break;
	}
	if (src) {
		cm_remove(evd, src);
		ret = 0;
	}
	pthread_mutex_unlock(&evd->ctl);
	return ret;
}

void core_evd_cm_unbind_all(struct core_evd *evd)
{
	while (evd->cms)
		cm_remove(evd, evd->cms);
}

unsigned int core_evd_cm_count(struct core_evd *evd)
{
	struct evd_cm_src *src;
	unsigned int n = 0;

	DL_COUNT(evd->cms, src, n);
	return n;
}
