/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Callbacks and the worker pool that runs them.
 *
 * An EVD's callback is a small state machine: IDLE, QUEUED (on the run
 * queue, which holds a reference) and RUNNING.  Only an IDLE EVD is
 * queued, so one EVD's callback never runs twice at once; after a run the
 * worker queues it again if it still has records.  The pool has cb_threads
 * workers, started with the first attached callback and stopped with the
 * last; an epoch number tells the workers of an old pool to leave.
 */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <utlist.h>

#include <openrdma/errno.h>
#include <openrdma/log.h>
#include <openrdma/param.h>

#include "core/evd/evd_priv.h"

static struct {
	pthread_mutex_t lock;
	pthread_cond_t work; /* workers wait for the run queue */
	pthread_cond_t idle; /* a run ended (detach waits for it) */
	struct core_evd *runq;
	unsigned int users; /* attached callbacks */
	unsigned int epoch;
	pthread_t *tids;
	unsigned int ntids;
	atomic_int live;
} pool = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.work = PTHREAD_COND_INITIALIZER,
	.idle = PTHREAD_COND_INITIALIZER,
};

static __thread bool pool_thread;

static void cb_state_set(struct core_evd *evd, enum evd_cb_state state)
{
	atomic_store_explicit(&evd->cb_state, state, memory_order_relaxed);
}

void core_evd_cb_schedule(struct core_evd *evd)
{
	cb_state_set(evd, EVD_CB_QUEUED);
	core_evd_get(evd);
	pthread_mutex_lock(&pool.lock);
	DL_APPEND2(pool.runq, evd, qprev, qnext);
	evd->on_runq = true;
	pthread_cond_signal(&pool.work);
	pthread_mutex_unlock(&pool.lock);
}

static void cb_run(struct core_evd *evd)
{
	core_evd_cb_fn fn;
	void *arg;

	core_evd_lock(evd);
	if (!evd_cb_due(evd)) {
		cb_state_set(evd, EVD_CB_IDLE);
		core_evd_unlock(evd);
		core_evd_put(evd);
		return;
	}
	fn = evd->cb_fn;
	arg = evd->cb_arg;
	if (evd->cb_flags & CORE_EVD_CB_ONESHOT)
		evd->cb_armed = false;
	evd->cb_thread = pthread_self();
	cb_state_set(evd, EVD_CB_RUNNING);
	core_evd_unlock(evd);

	fn(evd, arg);

	core_evd_lock(evd);
	pthread_mutex_lock(&pool.lock);
	cb_state_set(evd, EVD_CB_IDLE);
	pthread_cond_broadcast(&pool.idle);
	pthread_mutex_unlock(&pool.lock);
	core_evd_update(evd); /* queues it again if it still has records */
	core_evd_unlock(evd);
	core_evd_put(evd);
}

static void *pool_worker(void *arg)
{
	unsigned int epoch = (unsigned int)(uintptr_t)arg;
	struct core_evd *evd;

	pool_thread = true;
	core_evd_reap_self_mark();
	pthread_mutex_lock(&pool.lock);
	while (epoch == pool.epoch) {
		evd = pool.runq;
		if (!evd) {
			pthread_cond_wait(&pool.work, &pool.lock);
			continue;
		}
		DL_DELETE2(pool.runq, evd, qprev, qnext);
		evd->on_runq = false;
		pthread_mutex_unlock(&pool.lock);
		cb_run(evd);
		pthread_mutex_lock(&pool.lock);
	}
	pthread_mutex_unlock(&pool.lock);
	atomic_fetch_sub(&pool.live, 1);
	return NULL;
}

static unsigned int pool_size(void)
{
	int64_t n = 0;
	long cpus;
	int ret;

	ret = openrdma_param_get_int(NULL, "cb_threads", &n);
	if (ret && ret != -OPENRDMA_ENOENT)
		openrdma_dbg(EVD_LOG, "cb_threads: %d", ret);
	if (n > 0)
		return n > 1024 ? 1024 : (unsigned int)n;
	cpus = sysconf(_SC_NPROCESSORS_ONLN);
	return cpus > 0 ? (unsigned int)cpus : 1;
}

/* Starts the workers.  pool.lock held. */
static int pool_start(void)
{
	unsigned int i, n = pool_size();
	sigset_t all, old;
	int ret = 0;

	pool.tids = calloc(n, sizeof(*pool.tids));
	if (!pool.tids)
		return -OPENRDMA_ENOMEM;
	pool.epoch++;
	/* application signals are not for our threads */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (i = 0; i < n; i++) {
		atomic_fetch_add(&pool.live, 1);
		ret = -pthread_create(&pool.tids[i], NULL, pool_worker,
				      (void *)(uintptr_t)pool.epoch);
		if (ret) {
			atomic_fetch_sub(&pool.live, 1);
			break;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pool.ntids = i;
	if (i)
		return 0;
	free(pool.tids);
	pool.tids = NULL;
	openrdma_err(EVD_LOG, "no callback thread: %s", openrdma_strerror(ret));
	return ret;
}

static int pool_get(void)
{
	int ret = 0;

	pthread_mutex_lock(&pool.lock);
	if (!pool.users)
		ret = pool_start();
	if (!ret)
		pool.users++;
	pthread_mutex_unlock(&pool.lock);
	return ret;
}

void core_evd_pool_put(void)
{
	pthread_t *tids;
	unsigned int i, n;

	pthread_mutex_lock(&pool.lock);
	if (--pool.users) {
		pthread_mutex_unlock(&pool.lock);
		return;
	}
	pool.epoch++;
	tids = pool.tids;
	n = pool.ntids;
	pool.tids = NULL;
	pool.ntids = 0;
	pthread_cond_broadcast(&pool.work);
	pthread_mutex_unlock(&pool.lock);
	/* a worker cannot join itself: the workers then end on their own,
	 * and another joins them (reap.c) */
	for (i = 0; i < n; i++) {
		if (pool_thread)
			core_evd_reap_add(tids[i]);
		else
			pthread_join(tids[i], NULL);
	}
	free(tids);
}

int core_evd_pool_threads(void)
{
	return atomic_load(&pool.live);
}

bool core_evd_cb_clear(struct core_evd *evd)
{
	bool queued, wait;

	core_evd_lock(evd);
	evd->cb_fn = NULL;
	evd->cb_arg = NULL;
	pthread_mutex_lock(&pool.lock);
	queued = evd->on_runq;
	if (queued) {
		DL_DELETE2(pool.runq, evd, qprev, qnext);
		evd->on_runq = false;
		cb_state_set(evd, EVD_CB_IDLE);
	}
	/* popped but not started: the worker will see no callback */
	wait = evd->cb_state == EVD_CB_RUNNING &&
	       !pthread_equal(evd->cb_thread, pthread_self());
	pthread_mutex_unlock(&pool.lock);
	core_evd_unlock(evd);
	if (queued)
		core_evd_put(evd);
	return wait;
}

void core_evd_cb_wait(struct core_evd *evd)
{
	pthread_mutex_lock(&pool.lock);
	while (atomic_load_explicit(&evd->cb_state, memory_order_relaxed) ==
	       EVD_CB_RUNNING)
		pthread_cond_wait(&pool.idle, &pool.lock);
	pthread_mutex_unlock(&pool.lock);
}

int core_evd_callback_attach(struct core_evd *evd, core_evd_cb_fn fn, void *arg,
			     unsigned int flags)
{
	bool wait;
	int ret;

	if (!fn || (flags & ~(unsigned int)CORE_EVD_CB_ONESHOT))
		return -OPENRDMA_EINVAL;
	pthread_mutex_lock(&evd->ctl);
	core_evd_lock(evd);
	ret = evd->cb_fn ? -OPENRDMA_EEXIST : 0;
	core_evd_unlock(evd);
	if (ret)
		goto out;
	ret = pool_get();
	if (ret)
		goto out;
	core_evd_lock(evd);
	evd->cb_fn = fn;
	evd->cb_arg = arg;
	evd->cb_flags = flags;
	evd->cb_armed = true;
	core_evd_update(evd);
	core_evd_unlock(evd);
	/* the dispatcher now moves completions, so the callback sees them */
	ret = core_evd_cq_mode(evd);
	if (ret) {
		wait = core_evd_cb_clear(evd);
		pthread_mutex_unlock(&evd->ctl);
		if (wait)
			core_evd_cb_wait(evd);
		core_evd_pool_put();
		return ret;
	}
out:
	pthread_mutex_unlock(&evd->ctl);
	return ret;
}

int core_evd_callback_detach(struct core_evd *evd)
{
	bool attached, wait;

	pthread_mutex_lock(&evd->ctl);
	core_evd_lock(evd);
	attached = evd->cb_fn != NULL;
	core_evd_unlock(evd);
	if (!attached) {
		pthread_mutex_unlock(&evd->ctl);
		return -OPENRDMA_ENOENT;
	}
	wait = core_evd_cb_clear(evd);
	core_evd_cq_mode(evd);
	pthread_mutex_unlock(&evd->ctl);
	/* ctl is free: the running callback may call control functions */
	if (wait)
		core_evd_cb_wait(evd);
	core_evd_pool_put();
	return 0;
}

int core_evd_callback_arm(struct core_evd *evd)
{
	int ret = 0;

	core_evd_lock(evd);
	if (!evd->cb_fn) {
		ret = -OPENRDMA_ENOENT;
	} else {
		evd->cb_armed = true;
		core_evd_update(evd);
	}
	core_evd_unlock(evd);
	return ret;
}
