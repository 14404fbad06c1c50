/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Inside the event engine.
 *
 * Locks, outer to inner: evd->ctl (control calls of one EVD) -> the engine
 * registry (core_evd_reg_lock: async routers, the CQ map) -> an SEVD's
 * lock -> its AEVD's lock -> the callback pool's lock.  The dispatcher's
 * lock is never held while a handler runs, and no engine lock is held
 * while a callback or an overflow report runs.  Handlers take EVD locks
 * only, so control calls may wait for them (core_disp_unwatch) while
 * holding evd->ctl.  The reaper's lock (reap.c) is a leaf, taken under
 * the dispatcher's.
 */
#ifndef CORE_EVD_EVD_PRIV_H
#define CORE_EVD_EVD_PRIV_H

#include <pthread.h>
#include <stdatomic.h>

#include "core/lock.h"
#include "core/evd/evd.h"

#define EVD_LOG "evd"

enum evd_cb_state {
	EVD_CB_IDLE,
	EVD_CB_QUEUED, /* on the pool's run queue, holding a reference */
	EVD_CB_RUNNING,
};

struct evd_cq_src;
struct evd_cm_src;

struct core_evd {
	pthread_mutex_t ctl;
	struct core_lock lock;
	atomic_uint ref;
	uint32_t streams;
	uint32_t flags;
	void *context;
	core_evd_overflow_fn overflow_fn;
	void *overflow_arg;

	/* the ring; an AEVD has none and counts ready members instead */
	unsigned char *ring;
	size_t rec_size;
	size_t stride;
	size_t cap;
	size_t head;
	atomic_size_t count; /* written under lock, read anywhere */
	size_t threshold;

	enum core_evd_overflow ovf_mode;
	bool overflowed; /* DEFAULT: sticky until reset */
	bool ovf_episode; /* NOTIFY: this episode was reported */
	bool ovf_report; /* a report is due at unlock */
	uint64_t lost;

	bool enabled;
	bool waitable;
	bool dead;

	int fd; /* CORE_EVD_FD eventfd, else -1 */
	bool fd_ready; /* its counter is 1 */

	/*
	 * The one waiter.  It sleeps on the futex wake_seq, or in ppoll() on
	 * wake_fd when it also watches a completion channel.  Producers set
	 * wake_pending under the lock and wake it after unlocking, so that
	 * the woken waiter does not run into a lock still held.
	 */
	bool waiter;
	bool sleeping;
	bool sleep_futex;
	bool wake_sent;
	bool wake_pending;
	size_t wait_thr;
	atomic_uint wake_seq;
	int wake_fd; /* created at the first ppoll() wait */

	/* aggregation: an SEVD's links are under its AEVD's lock */
	struct core_evd *aevd;
	bool on_ready;
	struct core_evd *rnext, *rprev;
	struct core_evd *ready; /* an AEVD's list of members with records */
	unsigned int members;

	/* callback; cb_state leaves RUNNING under the pool lock too */
	core_evd_cb_fn cb_fn;
	void *cb_arg;
	unsigned int cb_flags;
	bool cb_armed;
	atomic_int cb_state; /* enum evd_cb_state */
	pthread_t cb_thread;
	bool on_runq; /* pool lock */
	struct core_evd *qnext, *qprev; /* pool run queue, pool lock */

	/* sources */
	struct evd_cq_src *cqs;
	struct openrdma_comp_channel *chan;
	struct core_disp_watch *chan_watch; /* push mode */
	bool backlog; /* the ring filled up while pulling */
	struct evd_cm_src *cms;
	unsigned int nasync;
};

static inline size_t evd_count(const struct core_evd *evd)
{
	return atomic_load_explicit(&evd->count, memory_order_relaxed);
}

static inline void evd_count_set(struct core_evd *evd, size_t n)
{
	atomic_store_explicit(&evd->count, n, memory_order_relaxed);
}

static inline bool evd_is_aevd(const struct core_evd *evd)
{
	return evd->streams == CORE_EVD_STREAM_AEVD;
}

/*
 * The callback should run (an overflow alone does not run it: a callback
 * that cannot take it would be called again and again).  Lock held.
 */
static inline bool evd_cb_due(const struct core_evd *evd)
{
	return evd->cb_fn && evd->enabled && evd->cb_armed && !evd->dead &&
	       evd_count(evd) > 0;
}

/* DEFAULT-mode overflow with nothing left to deliver before it. */
static inline bool evd_ovf_stuck(const struct core_evd *evd)
{
	return evd->overflowed && evd_count(evd) == 0;
}

/*
 * Push mode: something outside the consumer's calls must see events as
 * they come (an fd, a callback, an AEVD), so the dispatcher moves
 * completions into the ring.  Otherwise consumers pull them.
 */
static inline bool evd_push_mode(const struct core_evd *evd)
{
	return evd->fd >= 0 || evd->cb_fn || evd->aevd;
}

/* evd.c */
void core_evd_get(struct core_evd *evd);
void core_evd_put(struct core_evd *evd);
void core_evd_lock(struct core_evd *evd);
/* Unlocks, then runs a due overflow report. */
void core_evd_unlock(struct core_evd *evd);
/* Propagates a change of count or state to the fd, the waiter, the AEVD
 * and the callback.  Lock held. */
void core_evd_update(struct core_evd *evd);
void core_evd_efd_set(int fd, bool on);

/* queue.c */
enum evd_push_result {
	EVD_PUSHED,
	EVD_FULL,
	EVD_DROPPED,
};
void *core_evd_slot_tail(struct core_evd *evd);
void core_evd_slot_commit(struct core_evd *evd);
/* A source event: applies the overflow mode.  Lock held. */
enum evd_push_result core_evd_push(struct core_evd *evd, const void *rec);
/* Accounts a source event that found no room (or a lost completion). */
void core_evd_overflow(struct core_evd *evd);
int core_evd_pop(struct core_evd *evd, void *rec);
/* Pops one record, pulling from the CQs as needed.  Lock held. */
int core_evd_take(struct core_evd *evd, void *rec);
int core_evd_ring_resize(struct core_evd *evd, size_t cap);

/* aevd.c */
void core_evd_aevd_sync(struct core_evd *sevd);
void core_evd_aevd_leave(struct core_evd *sevd);
int core_evd_aevd_join(struct core_evd *sevd, struct core_evd *aevd);
int core_evd_aevd_take(struct core_evd *aevd, void *rec,
		       struct core_evd **sevd_out);

/* callback.c */
void core_evd_cb_schedule(struct core_evd *evd);
/* Detaches under ctl; returns whether the caller must wait for a run. */
bool core_evd_cb_clear(struct core_evd *evd);
void core_evd_cb_wait(struct core_evd *evd);
void core_evd_pool_put(void);

/* reap.c: engine threads that stopped themselves, joined later */
void core_evd_reap_self_mark(void);
void core_evd_reap_add(pthread_t tid);

/* wait.c: returns once no waiter is inside a wait on evd */
void core_evd_waiter_gone(struct core_evd *evd);
/* Wakes the sleeping waiter as core_evd_update() decided.  No lock held. */
void core_evd_waiter_wake(struct core_evd *evd, bool futex, int fd);

/* source_cq.c */
void core_evd_cq_pull(struct core_evd *evd);
void core_evd_cq_arm(struct core_evd *evd);
/* Consumes pending channel notifications. Lock held. */
void core_evd_chan_drain(struct core_evd *evd);
/* Watches or unwatches the channel after a mode change.  ctl held. */
int core_evd_cq_mode(struct core_evd *evd);
void core_evd_cq_unbind_all(struct core_evd *evd);
unsigned int core_evd_cq_count(struct core_evd *evd);
/* The EVD a CQ feeds.  core_evd_reg_lock held. */
struct core_evd *core_evd_cq_owner(struct openrdma_cq *cq);

/* source_cm.c */
void core_evd_cm_unbind_all(struct core_evd *evd);
unsigned int core_evd_cm_count(struct core_evd *evd);

/* source_async.c */
void core_evd_async_unbind_all(struct core_evd *evd);

/* dispatch.c, callback.c */
int core_evd_disp_threads(void);
int core_evd_pool_threads(void);

/* The engine registry lock (source_async.c). */
extern pthread_mutex_t core_evd_reg_lock;

#endif /* CORE_EVD_EVD_PRIV_H */
