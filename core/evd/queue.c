/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The ring of an SEVD: software posts, source events and their overflow
 * modes, dequeues.
 */
#include <stdlib.h>
#include <string.h>

#include <openrdma/errno.h>
#include <openrdma/log.h>

#include "core/evd/evd_priv.h"

void *core_evd_slot_tail(struct core_evd *evd)
{
	size_t i = evd->head + evd_count(evd);

	if (i >= evd->cap)
		i -= evd->cap;
	return evd->ring + i * evd->stride;
}

void core_evd_slot_commit(struct core_evd *evd)
{
	evd_count_set(evd, evd_count(evd) + 1);
}

void core_evd_overflow(struct core_evd *evd)
{
	evd->lost++;
	switch (evd->ovf_mode) {
	case CORE_EVD_OVERFLOW_DEFAULT:
		if (!evd->overflowed)
			evd->ovf_report = true;
		evd->overflowed = true;
		break;
	case CORE_EVD_OVERFLOW_NOTIFY:
		if (!evd->ovf_episode)
			evd->ovf_report = true;
		evd->ovf_episode = true;
		break;
	case CORE_EVD_OVERFLOW_AUTO_RESET:
		break;
	}
}

enum evd_push_result core_evd_push(struct core_evd *evd, const void *rec)
{
	if (evd->overflowed) {
		evd->lost++;
		return EVD_DROPPED;
	}
	if (evd_count(evd) == evd->cap) {
		core_evd_overflow(evd);
		return EVD_DROPPED;
	}
	memcpy(core_evd_slot_tail(evd), rec, evd->rec_size);
	core_evd_slot_commit(evd);
	return EVD_PUSHED;
}

int core_evd_pop(struct core_evd *evd, void *rec)
{
	size_t n = evd_count(evd);

	if (!n)
		return evd->overflowed ? -OPENRDMA_EOVERFLOW : -OPENRDMA_EAGAIN;
	memcpy(rec, evd->ring + evd->head * evd->stride, evd->rec_size);
	if (++evd->head == evd->cap)
		evd->head = 0;
	evd_count_set(evd, n - 1);
	evd->ovf_episode = false; /* there is room again */
	return 0;
}

int core_evd_take(struct core_evd *evd, void *rec)
{
	int ret;

	if (evd->cqs && !evd_count(evd))
		core_evd_cq_pull(evd);
	ret = core_evd_pop(evd, rec);
	/* keep the ring, and so the fd, in step with what the CQs hold */
	if (!ret && evd->backlog)
		core_evd_cq_pull(evd);
	return ret;
}

int core_evd_ring_resize(struct core_evd *evd, size_t cap)
{
	size_t n = evd_count(evd), i, j;
	unsigned char *ring;

	if (cap == evd->cap)
		return 0;
	if (cap < n)
		return -OPENRDMA_EBUSY;
	ring = malloc(cap * evd->stride);
	if (!ring)
		return -OPENRDMA_ENOMEM;
	for (i = 0, j = evd->head; i < n; i++) {
		memcpy(ring + i * evd->stride, evd->ring + j * evd->stride,
		       evd->rec_size);
		if (++j == evd->cap)
			j = 0;
	}
	free(evd->ring);
	evd->ring = ring;
	evd->cap = cap;
	evd->head = 0;
	return 0;
}

int core_evd_post_se(struct core_evd *evd, const void *rec)
{
	int ret = 0;

	if (!(evd->streams & CORE_EVD_STREAM_SOFTWARE) || !rec)
		return -OPENRDMA_EINVAL;
	core_evd_lock(evd);
	if (evd->dead) {
		ret = -OPENRDMA_ECANCELED;
	} else if (evd_count(evd) == evd->cap) {
		ret = -OPENRDMA_ENOSPC;
	} else {
		memcpy(core_evd_slot_tail(evd), rec, evd->rec_size);
		core_evd_slot_commit(evd);
		core_evd_update(evd);
	}
	core_evd_unlock(evd);
	return ret;
}

int core_evd_enqueue(struct core_evd *evd, const void *rec)
{
	int ret = 0;

	if (evd_is_aevd(evd) || !rec)
		return -OPENRDMA_EINVAL;
	core_evd_lock(evd);
	if (evd->dead)
		ret = -OPENRDMA_ECANCELED;
	else if (core_evd_push(evd, rec) != EVD_PUSHED)
		ret = -OPENRDMA_EOVERFLOW;
	core_evd_update(evd);
	core_evd_unlock(evd);
	return ret;
}

int core_evd_dequeue(struct core_evd *evd, void *rec)
{
	int ret;

	if (!rec)
		return -OPENRDMA_EINVAL;
	if (evd_is_aevd(evd))
		return core_evd_aevd_take(evd, rec, NULL);
	core_evd_lock(evd);
	if (evd_direct_ok(evd)) {
		/* nothing queued: a completion goes straight to rec */
		if (core_evd_cq_take_one(evd, rec)) {
			evd_direct_taken(evd);
			core_evd_unlock(evd);
			return 0;
		}
		/* none kept, so the ring is still empty: no second poll */
		ret = core_evd_pop(evd, rec);
	} else {
		ret = core_evd_take(evd, rec);
	}
	/* even a failed take may have pulled, or met a CQ overrun */
	core_evd_update(evd);
	core_evd_unlock(evd);
	return ret;
}

int core_evd_dequeue_n(struct core_evd *evd, void *recs, int max)
{
	unsigned char *out = recs;
	int n = 0, ret = 0;

	if (!recs || max <= 0 || evd_is_aevd(evd))
		return -OPENRDMA_EINVAL;
	core_evd_lock(evd);
	while (n < max) {
		ret = core_evd_take(evd, out + (size_t)n * evd->rec_size);
		if (ret)
			break;
		n++;
	}
	core_evd_update(evd);
	core_evd_unlock(evd);
	return n ? n : ret;
}
