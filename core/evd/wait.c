/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Blocking waits.  One waiter per EVD.  It spins for evd_spin_us, then
 * sleeps on a futex that producers wake only while a waiter sleeps and
 * its condition holds.  A waiter on an EVD fed by CQs in pull mode also
 * arms the CQs and sleeps in ppoll() on their completion channel and a
 * wake eventfd, so a completion wakes it directly, with no dispatcher hop.
 */
#include <poll.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>

#include <openrdma/errno.h>
#include <openrdma/log.h>
#include <openrdma/param.h>

#include "core/evd/evd_priv.h"

/*
 * How many turns a spinning waiter makes between two readings of the
 * clock: in some virtual machines a clock read is a system call that
 * reads an emulated timer, dearer than many looks.
 */
#define SPIN_CLOCK_TURNS 1024
/* Descriptors of a CQ's transport a sleeping waiter watches, at most. */
#define SLEEP_FDS 16

static pthread_once_t spin_once = PTHREAD_ONCE_INIT;
/* evd_spin_us in ns; -1 until spin_init() read it */
static _Atomic int64_t spin_ns = -1;

/* free() waits here for the waiter it woke to leave */
static pthread_mutex_t gone_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gone_cond = PTHREAD_COND_INITIALIZER;

static void spin_init(void)
{
	int64_t us = 0;
	int ret;

	ret = openrdma_param_get_int(NULL, "evd_spin_us", &us);
	if (ret && ret != -OPENRDMA_ENOENT)
		openrdma_dbg(EVD_LOG, "evd_spin_us: %d", ret);
	if (us < 0)
		us = 0;
	atomic_store_explicit(&spin_ns, us * 1000, memory_order_relaxed);
}

/* How long waiters spin: a load once the param was read. */
static inline int64_t spin_time_ns(void)
{
	int64_t ns = atomic_load_explicit(&spin_ns, memory_order_relaxed);

	if (__builtin_expect(ns < 0, 0)) {
		pthread_once(&spin_once, spin_init);
		ns = atomic_load_explicit(&spin_ns, memory_order_relaxed);
	}
	return ns;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The end of a wait of timeout_us begun at now. */
static int64_t deadline_at(int64_t now, uint64_t timeout_us)
{
	if (timeout_us == CORE_EVD_INFINITE ||
	    timeout_us > (uint64_t)INT64_MAX / 2000)
		return INT64_MAX;
	return now + (int64_t)timeout_us * 1000;
}

/* 1: the waiter may go on; 0: keep waiting; < 0: fail.  Lock held. */
static int wait_ready(struct core_evd *evd, size_t thr)
{
	if (evd->dead)
		return -OPENRDMA_ECANCELED;
	if (!evd->waitable)
		return -OPENRDMA_ESTATE;
	if (evd->cqs && evd_count(evd) < thr)
		core_evd_cq_pull(evd);
	/* no event can come after an overflow: deliver what is there */
	return evd_count(evd) >= thr || evd->overflowed;
}

/*
 * The next completion straight into rec, when nothing is queued ahead of
 * it (evd_direct_ok): true if one went.  count: the caller wants the
 * number of records behind it, so the CQs are pulled as a wait would
 * pull them.  Lock held.
 */
static inline __attribute__((always_inline)) bool
wait_direct(struct core_evd *evd, void *rec, bool count)
{
	if (!(count ? core_evd_cq_pull_first(evd, rec) :
		      core_evd_cq_take_one(evd, rec)))
		return false;
	evd_direct_taken(evd);
	return true;
}

/* A live, waitable EVD whose waiter may take straight from the CQ
 * (evd_direct_ok).  Lock held. */
static inline bool wait_direct_ok(const struct core_evd *evd)
{
	return !evd->dead && evd->waitable && evd_direct_ok(evd);
}

/*
 * One look of a waiter: wait_ready()'s, except that a direct waiter
 * (rec set: one record wanted) takes a completion straight into rec (2).
 * Lock held.
 */
static int wait_look(struct core_evd *evd, size_t thr, void *rec, bool count)
{
	if (!rec || !wait_direct_ok(evd))
		return wait_ready(evd, thr);
	if (wait_direct(evd, rec, count))
		return 2;
	return evd->overflowed;
}

long core_evd_futex(atomic_uint *word, int op, unsigned int val,
		    const struct timespec *ts)
{
	return syscall(SYS_futex, (uint32_t *)(void *)word, op, val, ts, NULL,
		       0);
}

void core_evd_waiter_wake(struct core_evd *evd, bool use_futex, int fd)
{
	if (use_futex)
		core_evd_futex(&evd->wake_seq, FUTEX_WAKE_PRIVATE, 1, NULL);
	else
		core_evd_efd_set(fd, true);
}

/*
 * Sleeps once, until woken or the deadline: on the futex, or in ppoll()
 * when a completion channel must wake it too, with the descriptors the
 * CQ's transport has the waiter watch for it (cq_sleep_begin): then what
 * wakes the waiter is the message itself, which it reads, rather than the
 * transport's thread, which read it first.  Lock held, dropped inside.
 */
static int wait_sleep(struct core_evd *evd, size_t thr, int64_t deadline)
{
	struct pollfd pfd[2 + SLEEP_FDS] = { { .fd = -1 }, { .fd = -1 } };
	void *cookie[SLEEP_FDS];
	struct openrdma_cq *cq = NULL;
	struct timespec ts, *tsp = NULL;
	bool chan = evd_pulls(evd);
	int64_t left;
	unsigned int seq;
	int ret, nt = 0;

	if (chan) {
		if (evd->wake_fd < 0) {
			evd->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
			if (evd->wake_fd < 0)
				return -errno;
		}
		/* arm, then look again: a completion in between is not lost */
		cq = core_evd_cq_sleep_begin(evd, pfd + 2, cookie, SLEEP_FDS,
					     &nt);
		if (!cq)
			core_evd_cq_arm(evd);
		ret = wait_ready(evd, thr);
		if (ret) {
			core_evd_unlock(evd);
			core_evd_cq_sleep_end(cq, pfd + 2, cookie, nt);
			core_evd_lock(evd);
			return ret;
		}
		pfd[0].fd = evd->wake_fd;
		pfd[0].events = POLLIN;
		pfd[1].fd = evd->chan->fd;
		pfd[1].events = POLLIN;
	}
	if (deadline != INT64_MAX) {
		left = deadline - now_ns();
		if (left < 0)
			left = 0;
		ts.tv_sec = left / 1000000000;
		ts.tv_nsec = left % 1000000000;
		tsp = &ts;
	}
	seq = atomic_load(&evd->wake_seq);
	evd->sleeping = true;
	evd->sleep_futex = !chan;
	evd->wake_sent = false;
	evd->wait_thr = thr;
	core_evd_unlock(evd);
	if (chan)
		ppoll(pfd, (nfds_t)(2 + nt), tsp, NULL);
	else
		core_evd_futex(&evd->wake_seq, FUTEX_WAIT_PRIVATE, seq, tsp);
	core_evd_cq_sleep_end(cq, pfd + 2, cookie, nt);
	core_evd_lock(evd);
	evd->sleeping = false;
	/* a wake written after we woke leaves the fd readable: take it */
	if (chan && (pfd[0].revents & POLLIN))
		core_evd_efd_set(evd->wake_fd, false);
	if (chan && (pfd[1].revents & POLLIN) && evd->chan && !evd->dead)
		core_evd_chan_drain(evd);
	return 0;
}

/*
 * A spinning waiter keeps the lock between its looks while nobody else
 * asks for it: one that does sleeps on the lock after a short spin
 * (evd_mutex_wait()), and the next turn gives it up.  Nothing may be due
 * at unlock either (a wake, an overflow report).  Only a waiter that
 * pulls from CQs keeps it: its looks are what takes the lock.  Lock held.
 */
static bool spin_keeps_lock(struct core_evd *evd)
{
	return evd_pulls(evd) && !evd_mutex_contended(&evd->lock) &&
	       !evd->ovf_report && !evd->wake_pending;
}

/*
 * Looks of a direct waiter (one record wanted, into rec) while it keeps
 * the lock (spin_keeps_lock(), true on entry): nothing but the CQ and the
 * lock's word changes meanwhile, so each look is a poll of the CQ and a
 * glance at the word, as a verbs program's.  Stops short of the turn that
 * reads the clock.  True once a completion went into rec.  Lock held.
 */
static __attribute__((noinline)) bool
spin_direct(struct core_evd *evd, void *rec, unsigned int *turns)
{
	if (!wait_direct_ok(evd))
		return false;
	while ((*turns + 1) % SPIN_CLOCK_TURNS &&
	       !evd_mutex_contended(&evd->lock)) {
		(*turns)++;
		if (wait_direct(evd, rec, false))
			return true;
		/* a poll that failed marked the EVD (overrun): its report
		 * is due at unlock */
		if (evd->overflowed)
			break;
	}
	return false;
}

/*
 * Registers the one waiter before it first drops the lock; the caller
 * checked that there was none.  Lock held.
 */
static void waiter_enter(struct core_evd *evd, bool *entered)
{
	if (*entered)
		return;
	evd->waiter = true;
	core_evd_get(evd);
	*entered = true;
}

/*
 * Between two looks of a spinning waiter; true if a direct waiter (rec
 * set) took a completion meanwhile.  A waiter that pulls from CQs looks
 * again at once, as a verbs program polls: a pause is where a virtual CPU
 * may leave the guest (pause-loop exiting; an emulated one leaves its
 * translated code), and what that costs is added to the completion it
 * waits for.  A waiter whose producers push (nothing to pull) watches the
 * count, pausing, instead of the lock.  Lock held.
 */
static bool spin_turn(struct core_evd *evd, size_t thr, void *rec,
		      unsigned int *turns, bool *entered)
{
	bool pull = evd_pulls(evd);

	if (spin_keeps_lock(evd))
		return rec && spin_direct(evd, rec, turns);
	waiter_enter(evd, entered);
	core_evd_unlock(evd);
	while (!pull && evd_count(evd) < thr &&
	       (*turns + 1) % SPIN_CLOCK_TURNS) {
		(*turns)++;
		core_cpu_relax();
	}
	core_evd_lock(evd);
	return false;
}

/*
 * Returns 0 once the condition holds, 1 once a completion went straight
 * into direct (a wait for one record: wait_look(), spin_turn()), the
 * waiter registered (*entered) once it dropped the lock; looked: the
 * caller's direct pull just found nothing, which stands for the first
 * look, and turns is how many looks of a spin it made since.  Lock held.
 * *deadline is 0 until the clock is first read: by a spinning waiter once
 * in SPIN_CLOCK_TURNS failed looks, by a sleeping one before it sleeps.
 * In some virtual machines a clock read is a system call that reads an
 * emulated timer, far more than a look; a spinning wait's deadline thus
 * starts up to SPIN_CLOCK_TURNS looks late.
 */
static int wait_block(struct core_evd *evd, size_t thr, uint64_t timeout_us,
		      void *direct, bool count, bool looked, unsigned int turns,
		      int64_t *deadline, bool *entered)
{
	int64_t spin_end = 0, t;
	int64_t spin_for = spin_time_ns();
	bool spin = spin_for > 0;
	int ret;

	for (;;) {
		/* a direct pull that found nothing was the first look; the
		 * ring is still empty, and only an overrun it met is new */
		ret = looked ? evd->overflowed :
			       wait_look(evd, thr, direct, count);
		looked = false;
		if (ret)
			return ret < 0 ? ret : ret - 1;
		if (!timeout_us)
			return -OPENRDMA_ETIMEDOUT;
		if (spin && ++turns % SPIN_CLOCK_TURNS) {
			/* a take that counts what is behind pulls (wait_look) */
			if (spin_turn(evd, thr, count ? NULL : direct, &turns,
				      entered))
				return 1;
			continue;
		}
		t = now_ns();
		if (!*deadline)
			*deadline = deadline_at(t, timeout_us);
		if (t >= *deadline)
			return -OPENRDMA_ETIMEDOUT;
		if (spin && !spin_end)
			spin_end = t + spin_for;
		if (spin && t < spin_end)
			continue;
		spin = false;
		waiter_enter(evd, entered);
		ret = wait_sleep(evd, thr, *deadline);
		if (ret < 0)
			return ret;
	}
}

/* Lock held on entry, released on return. */
static void waiter_leave(struct core_evd *evd)
{
	bool dead = evd->dead;

	evd->waiter = false;
	core_evd_unlock(evd);
	if (dead) {
		pthread_mutex_lock(&gone_lock);
		pthread_cond_broadcast(&gone_cond);
		pthread_mutex_unlock(&gone_lock);
	}
	core_evd_put(evd);
}

void core_evd_waiter_gone(struct core_evd *evd)
{
	bool waiter;

	pthread_mutex_lock(&gone_lock);
	for (;;) {
		core_evd_lock(evd);
		waiter = evd->waiter;
		core_evd_unlock(evd);
		if (!waiter)
			break;
		pthread_cond_wait(&gone_cond, &gone_lock);
	}
	pthread_mutex_unlock(&gone_lock);
}

/* An AEVD wait: for a notice, then a record (rec) or the member (sevd). */
static __attribute__((noinline)) int aevd_wait(struct core_evd *aevd,
					       uint64_t timeout_us, void *rec,
					       struct core_evd **sevd_out,
					       size_t *nmore_out)
{
	int64_t deadline = 0;
	bool entered = false;
	int ret;

	core_evd_lock(aevd);
	if (aevd->waiter) {
		core_evd_unlock(aevd);
		return -OPENRDMA_EBUSY;
	}
	/* the take below drops the lock: be the waiter throughout */
	waiter_enter(aevd, &entered);
	for (;;) {
		ret = wait_block(aevd, 1, timeout_us, NULL, false, false, 0,
				 &deadline, &entered);
		if (ret)
			break;
		core_evd_unlock(aevd);
		ret = core_evd_aevd_take(aevd, rec, sevd_out);
		core_evd_lock(aevd);
		if (ret != -OPENRDMA_EAGAIN)
			break;
	}
	if (!ret && nmore_out)
		*nmore_out = evd_count(aevd);
	waiter_leave(aevd);
	return ret;
}

/* Takes the record a wait returns.  Lock held. */
static int wait_take(struct core_evd *evd, void *rec, size_t *nmore_out)
{
	int ret = core_evd_take(evd, rec);

	core_evd_update(evd);
	if (!ret && nmore_out)
		*nmore_out = evd_count(evd);
	return ret;
}

/*
 * A wait past its first look (looked: a direct pull made it and found
 * nothing).  Lock held on entry, released on return.
 */
static __attribute__((noinline)) int wait_on(struct core_evd *evd,
					     uint64_t timeout_us, size_t thr,
					     bool looked, void *rec,
					     size_t *nmore_out)
{
	unsigned int turns = 0;
	int64_t deadline = 0;
	bool entered = false;
	int ret;

	/*
	 * A spinning waiter for one record, which counts nothing behind
	 * it, polls the CQ right here while it keeps the lock, so that the
	 * completion it waits for returns at once, without the waiter's
	 * registration; wait_block() goes on from where it stopped
	 * (another thread asked for the lock, the clock is due, an
	 * overrun).
	 */
	if (looked && !nmore_out && timeout_us && spin_time_ns() > 0 &&
	    spin_keeps_lock(evd) && spin_direct(evd, rec, &turns)) {
		core_evd_unlock(evd);
		return 0;
	}
	/* a spinning or woken waiter for one record takes it as the first
	 * look does, straight from the CQ */
	ret = wait_block(evd, thr, timeout_us, thr == 1 ? rec : NULL,
			 nmore_out != NULL, looked, turns, &deadline, &entered);
	if (ret == 1) {
		ret = 0;
		if (nmore_out)
			*nmore_out = evd_count(evd);
	} else if (!ret) {
		ret = wait_take(evd, rec, nmore_out);
	}
	/* a wait whose record was at hand held the lock throughout and
	 * never became the waiter */
	if (entered)
		waiter_leave(evd);
	else
		core_evd_unlock(evd);
	return ret;
}

int core_evd_wait(struct core_evd *evd, uint64_t timeout_us, size_t threshold,
		  void *rec, size_t *nmore_out)
{
	bool looked = false;
	size_t thr;
	int ret;

	if (!rec)
		return -OPENRDMA_EINVAL;
	if (evd_is_aevd(evd))
		return aevd_wait(evd, timeout_us, rec, NULL, nmore_out);
	core_evd_lock(evd);
	thr = threshold ? threshold : evd->threshold;
	if (thr > evd->cap || evd->waiter) {
		ret = thr > evd->cap ? -OPENRDMA_EINVAL : -OPENRDMA_EBUSY;
		core_evd_unlock(evd);
		return ret;
	}
	if (thr == 1 && wait_direct_ok(evd)) {
		/*
		 * The first look: a completion there goes straight to rec,
		 * with no ring and no clock.  nmore counts what a pull
		 * leaves in the ring.
		 */
		if (wait_direct(evd, rec, nmore_out != NULL)) {
			if (nmore_out)
				*nmore_out = evd_count(evd);
			core_evd_unlock(evd);
			return 0;
		}
		looked = true;
	}
	return wait_on(evd, timeout_us, thr, looked, rec, nmore_out);
}

int core_evd_notify_wait(struct core_evd *aevd, uint64_t timeout_us,
			 struct core_evd **sevd_out)
{
	if (!evd_is_aevd(aevd) || !sevd_out)
		return -OPENRDMA_EINVAL;
	return aevd_wait(aevd, timeout_us, NULL, sevd_out, NULL);
}
