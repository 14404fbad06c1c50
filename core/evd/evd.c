/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * EVD objects: creation, references, state propagation, query, modify and
 * free.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/eventfd.h>

#include <openrdma/errno.h>
#include <openrdma/log.h>

#include "core/evd/evd_priv.h"

/* Looks at a taken lock this many times before sleeping on it. */
#define EVD_MUTEX_SPINS 100

void evd_mutex_wait(struct evd_mutex *m)
{
	unsigned int c, n;

	/* a short section ends soon: take the lock as it comes free */
	for (n = 0; n < EVD_MUTEX_SPINS; n++) {
		core_cpu_relax();
		c = 0;
		if (!atomic_load_explicit(&m->word, memory_order_relaxed) &&
		    atomic_compare_exchange_weak_explicit(&m->word, &c, 1,
							  memory_order_acquire,
							  memory_order_relaxed))
			return;
	}
	/* taken as 2 from now on: the unlock that frees it wakes a sleeper */
	while (atomic_exchange_explicit(&m->word, 2, memory_order_acquire))
		core_evd_futex(&m->word, FUTEX_WAIT_PRIVATE, 2, NULL);
}

void evd_mutex_wake(struct evd_mutex *m)
{
	core_evd_futex(&m->word, FUTEX_WAKE_PRIVATE, 1, NULL);
}

void core_evd_get(struct core_evd *evd)
{
	atomic_fetch_add_explicit(&evd->ref, 1, memory_order_relaxed);
}

static void evd_destroy(struct core_evd *evd)
{
	if (evd->wake_fd >= 0)
		close(evd->wake_fd);
	if (evd->fd >= 0)
		close(evd->fd);
	free(evd->ring);
	pthread_mutex_destroy(&evd->ctl);
	free(evd);
}

void core_evd_put(struct core_evd *evd)
{
	if (atomic_fetch_sub_explicit(&evd->ref, 1, memory_order_acq_rel) == 1)
		evd_destroy(evd);
}

void core_evd_unlock_slow(struct core_evd *evd)
{
	bool report = evd->ovf_report, wake = evd->wake_pending;
	bool futex = evd->sleep_futex;
	int fd = evd->wake_fd;

	evd->ovf_report = false;
	evd->wake_pending = false;
	core_evd_get(evd);
	evd_mutex_unlock(&evd->lock);
	if (wake)
		core_evd_waiter_wake(evd, futex, fd);
	/* The report posts to another EVD: no lock of ours may be held. */
	if (report && evd->overflow_fn)
		evd->overflow_fn(evd, evd->overflow_arg);
	else if (report)
		openrdma_warn(EVD_LOG, "EVD %p overflowed, events lost",
			      (void *)evd);
	core_evd_put(evd);
}

/* An eventfd used as a level: counter 1 when on, 0 when off. */
void core_evd_efd_set(int fd, bool on)
{
	eventfd_t v;

	if (on)
		eventfd_write(fd, 1);
	else
		eventfd_read(fd, &v);
}

static bool wake_due(const struct core_evd *evd)
{
	return evd->dead || !evd->waitable || evd->overflowed ||
	       evd_count(evd) >= evd->wait_thr;
}

void core_evd_update(struct core_evd *evd)
{
	bool ready = evd_count(evd) > 0 || evd_ovf_stuck(evd);

	if (evd->fd >= 0 && ready != evd->fd_ready) {
		core_evd_efd_set(evd->fd, ready);
		evd->fd_ready = ready;
	}
	if (evd->sleeping && !evd->wake_sent && wake_due(evd)) {
		evd->wake_sent = true;
		evd->wake_pending = true;
		if (evd->sleep_futex)
			atomic_fetch_add(&evd->wake_seq, 1);
	}
	if (evd->aevd)
		core_evd_aevd_sync(evd);
	if (evd_cb_due(evd) && evd->cb_state == EVD_CB_IDLE)
		core_evd_cb_schedule(evd);
}

static int attr_check(const struct core_evd_attr *attr)
{
	if (!attr)
		return -OPENRDMA_EINVAL;
	if (attr->flags & ~(uint32_t)CORE_EVD_FD)
		return -OPENRDMA_EINVAL;
	if ((unsigned int)attr->overflow > CORE_EVD_OVERFLOW_AUTO_RESET)
		return -OPENRDMA_EINVAL;
	if (attr->streams == CORE_EVD_STREAM_AEVD)
		return 0;
	if (!attr->streams || (attr->streams & ~CORE_EVD_STREAMS_SEVD))
		return -OPENRDMA_EINVAL;
	if (!attr->rec_size || attr->rec_size > CORE_EVD_REC_MAX)
		return -OPENRDMA_EINVAL;
	if (!attr->capacity || attr->capacity > CORE_EVD_CAPACITY_MAX)
		return -OPENRDMA_EINVAL;
	if (attr->threshold > attr->capacity)
		return -OPENRDMA_EINVAL;
	return 0;
}

int core_evd_create(const struct core_evd_attr *attr, struct core_evd **evd_out)
{
	struct core_evd *evd;
	int ret;

	ret = attr_check(attr);
	if (ret) {
		openrdma_dbg(EVD_LOG, "arg 1 (attr): invalid");
		return ret;
	}
	evd = calloc(1, sizeof(*evd));
	if (!evd)
		return -OPENRDMA_ENOMEM;
	evd->fd = -1;
	evd->wake_fd = -1;
	ret = -pthread_mutex_init(&evd->ctl, NULL);
	if (ret)
		goto err_free;
	evd_mutex_init(&evd->lock);
	if (attr->streams != CORE_EVD_STREAM_AEVD) {
		evd->rec_size = attr->rec_size;
		evd->stride = (attr->rec_size + 7) & ~(size_t)7;
		evd->cap = attr->capacity;
		evd->ring = malloc(evd->cap * evd->stride);
		if (!evd->ring) {
			ret = -OPENRDMA_ENOMEM;
			goto err_ctl;
		}
	}
	if (attr->flags & CORE_EVD_FD) {
		evd->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (evd->fd < 0) {
			ret = -errno;
			goto err_ring;
		}
	}
	atomic_init(&evd->ref, 1);
	atomic_init(&evd->count, 0);
	atomic_init(&evd->wake_seq, 0);
	evd->streams = attr->streams;
	evd->flags = attr->flags;
	evd->ovf_mode = attr->overflow;
	evd->threshold = attr->threshold ? attr->threshold : 1;
	evd->overflow_fn = attr->overflow_fn;
	evd->overflow_arg = attr->overflow_arg;
	evd->context = attr->context;
	evd->enabled = true;
	evd->waitable = true;
	evd->cb_armed = true;
	*evd_out = evd;
	return 0;

err_ring:
	free(evd->ring);
err_ctl:
	pthread_mutex_destroy(&evd->ctl);
err_free:
	free(evd);
	return ret;
}

int core_evd_free(struct core_evd *evd)
{
	bool had_cb, wait_cb;

	pthread_mutex_lock(&evd->ctl);
	core_evd_lock(evd);
	if (evd->members) {
		core_evd_unlock(evd);
		pthread_mutex_unlock(&evd->ctl);
		openrdma_dbg(EVD_LOG, "AEVD %p still has %u members",
			     (void *)evd, evd->members);
		return -OPENRDMA_EBUSY;
	}
	evd->dead = true;
	had_cb = evd->cb_fn != NULL;
	core_evd_update(evd); /* wakes the waiter */
	core_evd_unlock(evd);

	wait_cb = had_cb && core_evd_cb_clear(evd);
	core_evd_aevd_leave(evd);
	core_evd_cq_unbind_all(evd);
	core_evd_cm_unbind_all(evd);
	core_evd_async_unbind_all(evd);
	pthread_mutex_unlock(&evd->ctl);

	if (wait_cb)
		core_evd_cb_wait(evd);
	if (had_cb)
		core_evd_pool_put();
	core_evd_waiter_gone(evd);
	core_evd_put(evd);
	return 0;
}

void *core_evd_context(const struct core_evd *evd)
{
	return evd->context;
}

int core_evd_query(struct core_evd *evd, struct core_evd_info *info)
{
	struct core_evd_info i = { 0 };

	core_evd_lock(evd);
	i.streams = evd->streams;
	i.flags = evd->flags;
	i.overflow = evd->ovf_mode;
	i.rec_size = evd->rec_size;
	i.capacity = evd->cap;
	i.threshold = evd->threshold;
	i.count = evd_count(evd);
	i.lost = evd->lost;
	i.fd = evd->fd;
	i.enabled = evd->enabled;
	i.waitable = evd->waitable;
	i.overflowed = evd->overflowed;
	i.callback = evd->cb_fn != NULL;
	i.aevd = evd->aevd;
	i.members = evd->members;
	i.sources = evd->nasync;
	i.context = evd->context;
	core_evd_unlock(evd);
	/* the source lists change under ctl only */
	pthread_mutex_lock(&evd->ctl);
	i.sources += core_evd_cq_count(evd) + core_evd_cm_count(evd);
	pthread_mutex_unlock(&evd->ctl);
	*info = i;
	return 0;
}

static int mod_check(struct core_evd *evd, uint32_t mask,
		     const struct core_evd_mod *mod)
{
	size_t cap = evd->cap;
	bool aevd = evd_is_aevd(evd);

	if (mask & ~(uint32_t)(CORE_EVD_MOD_CAPACITY | CORE_EVD_MOD_THRESHOLD |
			       CORE_EVD_MOD_OVERFLOW | CORE_EVD_MOD_ENABLED |
			       CORE_EVD_MOD_WAITABLE | CORE_EVD_MOD_AEVD |
			       CORE_EVD_MOD_OVERFLOW_RESET))
		return -OPENRDMA_EINVAL;
	if (mask && !mod)
		return -OPENRDMA_EINVAL;
	if (mask & CORE_EVD_MOD_CAPACITY) {
		if (aevd || !mod->capacity ||
		    mod->capacity > CORE_EVD_CAPACITY_MAX)
			return -OPENRDMA_EINVAL;
		cap = mod->capacity;
	}
	if ((mask & CORE_EVD_MOD_THRESHOLD) && (aevd || mod->threshold > cap))
		return -OPENRDMA_EINVAL;
	if (!(mask & CORE_EVD_MOD_THRESHOLD) && evd->threshold > cap)
		return -OPENRDMA_EINVAL;
	if ((mask & CORE_EVD_MOD_OVERFLOW) &&
	    (unsigned int)mod->overflow > CORE_EVD_OVERFLOW_AUTO_RESET)
		return -OPENRDMA_EINVAL;
	if ((mask & CORE_EVD_MOD_AEVD) &&
	    (aevd || (mod->aevd && !evd_is_aevd(mod->aevd))))
		return -OPENRDMA_EINVAL;
	return 0;
}

int core_evd_modify(struct core_evd *evd, uint32_t mask,
		    const struct core_evd_mod *mod)
{
	int ret;

	pthread_mutex_lock(&evd->ctl);
	core_evd_lock(evd);
	ret = mod_check(evd, mask, mod);
	if (!ret && (mask & CORE_EVD_MOD_CAPACITY))
		ret = core_evd_ring_resize(evd, mod->capacity);
	core_evd_unlock(evd);
	if (ret)
		goto out;
	/* Joining can fail only for a freed AEVD: do it before the rest. */
	if (mask & CORE_EVD_MOD_AEVD) {
		ret = core_evd_aevd_join(evd, mod->aevd);
		if (ret)
			goto out;
		ret = core_evd_cq_mode(evd);
		if (ret)
			goto out;
	}
	core_evd_lock(evd);
	if (mask & CORE_EVD_MOD_THRESHOLD)
		evd->threshold = mod->threshold ? mod->threshold : 1;
	if (mask & CORE_EVD_MOD_OVERFLOW)
		evd->ovf_mode = mod->overflow;
	if (mask & CORE_EVD_MOD_ENABLED)
		evd->enabled = mod->enabled;
	if (mask & CORE_EVD_MOD_WAITABLE)
		evd->waitable = mod->waitable;
	if (mask & CORE_EVD_MOD_OVERFLOW_RESET) {
		evd->overflowed = false;
		evd->ovf_episode = false;
	}
	/* a resize may have made room for completions left in the CQ */
	if (evd->cqs && evd->backlog)
		core_evd_cq_pull(evd);
	core_evd_update(evd);
	core_evd_unlock(evd);
out:
	pthread_mutex_unlock(&evd->ctl);
	return ret;
}
