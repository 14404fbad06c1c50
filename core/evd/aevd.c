/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Aggregate EVDs.  An AEVD keeps the list of its member SEVDs that are
 * enabled and have records, in the order they became so; its count is the
 * length of that list.  Being level-based, a notice can neither be lost
 * nor go stale: a member is listed exactly while it has something to take.
 */
#include <utlist.h>

#include <openrdma/errno.h>

#include "core/evd/evd_priv.h"

/* Lists or unlists sevd on its AEVD.  The SEVD's lock is held. */
static void aevd_list(struct core_evd *sevd, bool want)
{
	struct core_evd *aevd = sevd->aevd;

	/* on_ready changes under both locks, so ours is enough to read it */
	if (want == sevd->on_ready)
		return;
	core_evd_lock(aevd);
	if (want)
		DL_APPEND2(aevd->ready, sevd, rprev, rnext);
	else
		DL_DELETE2(aevd->ready, sevd, rprev, rnext);
	sevd->on_ready = want;
	evd_count_set(aevd, evd_count(aevd) + (want ? 1 : (size_t)-1));
	core_evd_update(aevd);
	core_evd_unlock(aevd);
}

void core_evd_aevd_sync(struct core_evd *sevd)
{
	aevd_list(sevd, sevd->enabled && !sevd->dead && evd_count(sevd) > 0);
}

int core_evd_aevd_join(struct core_evd *sevd, struct core_evd *aevd)
{
	struct core_evd *old;
	int ret = 0;

	core_evd_lock(sevd);
	old = sevd->aevd;
	if (old == aevd)
		goto out;
	if (old) {
		aevd_list(sevd, false);
		core_evd_lock(old);
		old->members--;
		core_evd_unlock(old);
		sevd->aevd = NULL;
	}
	if (aevd) {
		core_evd_lock(aevd);
		if (aevd->dead)
			ret = -OPENRDMA_ECANCELED;
		else
			aevd->members++;
		core_evd_unlock(aevd);
		if (!ret) {
			core_evd_get(aevd);
			sevd->aevd = aevd;
			core_evd_aevd_sync(sevd);
		}
	}
out:
	core_evd_unlock(sevd);
	if (old && old != aevd)
		core_evd_put(old);
	return ret;
}

void core_evd_aevd_leave(struct core_evd *sevd)
{
	core_evd_aevd_join(sevd, NULL);
}

int core_evd_aevd_take(struct core_evd *aevd, void *rec,
		       struct core_evd **sevd_out)
{
	struct core_evd *sevd;
	int ret;

	for (;;) {
		core_evd_lock(aevd);
		sevd = aevd->ready;
		if (!sevd) {
			core_evd_unlock(aevd);
			return -OPENRDMA_EAGAIN;
		}
		/* round robin among the members */
		if (sevd->rnext) {
			DL_DELETE2(aevd->ready, sevd, rprev, rnext);
			DL_APPEND2(aevd->ready, sevd, rprev, rnext);
		}
		core_evd_get(sevd);
		core_evd_unlock(aevd);
		if (!rec) {
			ret = 0;
		} else {
			/* sevd -> aevd is the lock order: ours is released */
			core_evd_lock(sevd);
			ret = core_evd_take(sevd, rec);
			core_evd_update(sevd);
			core_evd_unlock(sevd);
		}
		core_evd_put(sevd);
		if (!ret) {
			if (sevd_out)
				*sevd_out = sevd;
			return 0;
		}
		/* emptied by another thread since it was listed: next one */
		if (ret != -OPENRDMA_EAGAIN && ret != -OPENRDMA_EOVERFLOW)
			return ret;
	}
}

int core_evd_notify_dequeue(struct core_evd *aevd, struct core_evd **sevd_out)
{
	if (!evd_is_aevd(aevd) || !sevd_out)
		return -OPENRDMA_EINVAL;
	return core_evd_aevd_take(aevd, NULL, sevd_out);
}
