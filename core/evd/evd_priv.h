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

#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <uthash.h>

#include "core/datapath.h"
#include "core/lock.h"
#include "core/evd/evd.h"

#define EVD_LOG "evd"

enum evd_cb_state {
	EVD_CB_IDLE,
	EVD_CB_QUEUED, /* on the pool's run queue, holding a reference */
	EVD_CB_RUNNING,
};

struct evd_cm_src;

/* A CQ that feeds an EVD (source_cq.c). */
struct evd_cq_src {
	struct openrdma_cq *cq;
	struct core_evd *evd;
	core_evd_wc_fn convert;
	void *arg;
	bool overrun; /* the CQ lost completions: it is not polled again */
	struct evd_cq_src *next, *prev; /* evd->cqs */
	UT_hash_handle hh; /* cq_map */
};

/*
 * The EVD lock: a mutex, since it is held across system calls (eventfd
 * writes, channel reads) and converters that lock, so a thread that finds
 * it taken must be able to sleep; but one that costs an uncontended taker
 * one atomic operation each way, a fraction of a pthread mutex's
 * instructions (every dequeue and wait takes it).  The word is 0 when
 * free, 1 when taken, 2 when taken and a thread may sleep on it (U.
 * Drepper, "Futexes Are Tricky", mutex 3); a taker spins briefly before
 * it sleeps.
 */
struct evd_mutex {
	atomic_uint word;
};

/* futex(2) on word, for the EVD lock and the waiter's sleep (wait.c). */
long core_evd_futex(atomic_uint *word, int op, unsigned int val,
		    const struct timespec *ts);
/* Contended halves of evd_mutex_lock() and evd_mutex_unlock() (evd.c). */
void evd_mutex_wait(struct evd_mutex *m);
void evd_mutex_wake(struct evd_mutex *m);

static inline void evd_mutex_init(struct evd_mutex *m)
{
	atomic_init(&m->word, 0);
}

static inline void evd_mutex_lock(struct evd_mutex *m)
{
	unsigned int free_word = 0;

	if (!atomic_compare_exchange_strong_explicit(&m->word, &free_word, 1,
						     memory_order_acquire,
						     memory_order_relaxed))
		evd_mutex_wait(m);
}

static inline void evd_mutex_unlock(struct evd_mutex *m)
{
	if (atomic_exchange_explicit(&m->word, 0, memory_order_release) == 2)
		evd_mutex_wake(m);
}

/* Another thread sleeps on the lock, or is about to (evd_mutex_wait()). */
static inline bool evd_mutex_contended(struct evd_mutex *m)
{
	return atomic_load_explicit(&m->word, memory_order_relaxed) == 2;
}

struct core_evd {
	pthread_mutex_t ctl;
	struct evd_mutex lock;
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
/* core_evd_unlock() with a wake or an overflow report due. */
void core_evd_unlock_slow(struct core_evd *evd);

static inline void core_evd_lock(struct core_evd *evd)
{
	evd_mutex_lock(&evd->lock);
}

/* Unlocks, then wakes the waiter and runs the overflow report due. */
static inline void core_evd_unlock(struct core_evd *evd)
{
	if (evd->ovf_report || evd->wake_pending)
		core_evd_unlock_slow(evd);
	else
		evd_mutex_unlock(&evd->lock);
}

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
/*
 * Moves the CQs' completions into the ring (lock held).  With first set
 * (the ring empty: the caller checked), the first completion the
 * converter keeps goes to first instead, and the call returns whether
 * one did: a dequeue or wait that finds nothing queued hands its caller a
 * completion with no trip through the ring.  Either way the CQs are
 * polled as a pull with nothing queued would poll them, so the order of
 * events and what the ring holds afterwards are the same.
 */
bool core_evd_cq_pull_first(struct core_evd *evd, void *first);

static inline void core_evd_cq_pull(struct core_evd *evd)
{
	core_evd_cq_pull_first(evd, NULL);
}

/* A poll of src failed with err: an overrun is the EVD's overflow. */
void core_evd_cq_poll_failed(struct core_evd *evd, struct evd_cq_src *src,
			     int err);

/*
 * core_evd_cq_pull_first() for a caller that wants one record and not
 * the count of those behind it: a single CQ is polled one completion at
 * a time, and what follows stays in the CQ, where a pull would find it
 * next.  Lock held, the ring empty.
 */
static inline bool core_evd_cq_take_one(struct core_evd *evd, void *rec)
{
	struct evd_cq_src *src = evd->cqs;
	struct openrdma_wc wc;
	int n;

	/* several CQs: polled in their order, as a pull polls them */
	if (src->next)
		return core_evd_cq_pull_first(evd, rec);
	while (!src->overrun) {
		n = core_cq_poll(src->cq, 1, &wc);
		if (n == 1) {
			if (!src->convert(src->arg, &wc, rec))
				return true;
			continue;
		}
		if (n < 0)
			core_evd_cq_poll_failed(evd, src, n);
		break;
	}
	return false;
}

/* Fed by CQs in pull mode: its consumers poll the CQs.  Lock held. */
static inline bool evd_pulls(const struct core_evd *evd)
{
	return evd->cqs && !evd->chan_watch;
}

/*
 * Whether a take may convert the next CQ completion straight into the
 * caller's record: nothing queued ahead of it, no overflow to report
 * first, and pull mode (the dispatcher moves nothing into the ring, so
 * the fd, the callback and the AEVD have nothing to see).  Lock held.
 */
static inline bool evd_direct_ok(const struct core_evd *evd)
{
	return evd_pulls(evd) && evd_count(evd) == 0 && !evd->overflowed;
}

/*
 * The bookkeeping of a take that core_evd_cq_pull_first() filled: the
 * same as a pop's, and the update a pop would be followed by when the
 * pull changed what the fd, a waiter, the AEVD or the callback see.
 */
static inline void evd_direct_taken(struct core_evd *evd)
{
	evd->ovf_episode = false;
	if (evd_count(evd) || evd->overflowed)
		core_evd_update(evd);
}

void core_evd_cq_arm(struct core_evd *evd);
/*
 * A waiter about to sleep on the channel of an EVD fed by one CQ: the
 * descriptors its transport has it watch (cq_sleep_begin) go into pfd
 * and cookie (at most max; *n_out of them), and the CQ is armed.
 * Returns the CQ, held, if there are any, else NULL (the caller arms the
 * CQs as usual).  Lock held.
 */
struct openrdma_cq *core_evd_cq_sleep_begin(struct core_evd *evd,
					    struct pollfd *pfd, void **cookie,
					    int max, int *n_out);
/* After the sleep (cq may be NULL): disarms cq, lets its transport read
 * what woke the waiter, and drops cq.  Lock not held. */
void core_evd_cq_sleep_end(struct openrdma_cq *cq, const struct pollfd *pfd,
			   void **cookie, int n);
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
