/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The dispatcher: one thread per process that waits with epoll on the
 * notification fds of the sources (completion channels, CM channels,
 * contexts' async fds, transports' own fds) and runs their handlers.  It
 * starts with the first watch and stops with the last.
 *
 * epoll carries a watch's id, not its address: a handler is looked up by
 * id under the lock, so an event that was already collected for a watch
 * removed since is simply not found.
 */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <uthash.h>

#include <openrdma/errno.h>
#include <openrdma/log.h>

#include "core/evd/evd_priv.h"

struct core_disp_watch {
	uint64_t id;
	int fd;
	void (*fn)(void *arg);
	void *arg;
	UT_hash_handle hh;
};

/* One run of the thread; one that stopped itself cleans up after itself. */
struct disp_run {
	int epfd;
	int wakefd; /* epoll id 0: wakes the thread to stop */
	pthread_t tid;
	bool stop;
	bool self_stopped;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t done; /* a handler returned */
	struct core_disp_watch *watches;
	uint64_t next_id;
	uint64_t busy; /* id of the watch whose handler runs */
	struct disp_run *run;
	atomic_int live;
} disp = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.done = PTHREAD_COND_INITIALIZER,
};

static __thread bool disp_thread;

static void run_free(struct disp_run *run)
{
	close(run->epfd);
	close(run->wakefd);
	free(run);
}

/* Runs the handlers of one epoll batch.  disp.lock held. */
static void disp_batch(struct disp_run *run, const struct epoll_event *ev,
		       int n)
{
	struct core_disp_watch *w;
	void (*fn)(void *arg);
	uint64_t id;
	void *arg;
	int i;

	for (i = 0; i < n && !run->stop; i++) {
		id = ev[i].data.u64;
		if (!id)
			continue;
		HASH_FIND(hh, disp.watches, &id, sizeof(id), w);
		if (!w)
			continue;
		fn = w->fn;
		arg = w->arg;
		disp.busy = id;
		pthread_mutex_unlock(&disp.lock);
		fn(arg);
		pthread_mutex_lock(&disp.lock);
		disp.busy = 0;
		pthread_cond_broadcast(&disp.done);
	}
}

static void *disp_main(void *arg)
{
	struct disp_run *run = arg;
	struct epoll_event ev[32];
	bool self_stopped;
	int n;

	disp_thread = true;
	core_evd_reap_self_mark();
	for (;;) {
		n = epoll_wait(run->epfd, ev, 32, -1);
		if (n < 0 && errno != EINTR) {
			openrdma_err(EVD_LOG, "epoll_wait: %s",
				     openrdma_strerror(errno));
			break;
		}
		pthread_mutex_lock(&disp.lock);
		if (n > 0)
			disp_batch(run, ev, n);
		if (run->stop) {
			pthread_mutex_unlock(&disp.lock);
			break;
		}
		pthread_mutex_unlock(&disp.lock);
	}
	pthread_mutex_lock(&disp.lock);
	self_stopped = run->self_stopped;
	pthread_mutex_unlock(&disp.lock);
	if (self_stopped)
		run_free(run);
	atomic_fetch_sub(&disp.live, 1);
	return NULL;
}

/* disp.lock held */
static int disp_start(void)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 0 };
	struct disp_run *run;
	sigset_t all, old;
	int ret;

	run = calloc(1, sizeof(*run));
	if (!run)
		return -OPENRDMA_ENOMEM;
	run->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (run->epfd < 0) {
		ret = -errno;
		goto err_free;
	}
	run->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (run->wakefd < 0) {
		ret = -errno;
		goto err_epoll;
	}
	if (epoll_ctl(run->epfd, EPOLL_CTL_ADD, run->wakefd, &ev) < 0) {
		ret = -errno;
		goto err_wake;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	atomic_fetch_add(&disp.live, 1);
	ret = -pthread_create(&run->tid, NULL, disp_main, run);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		atomic_fetch_sub(&disp.live, 1);
		goto err_wake;
	}
	disp.run = run;
	return 0;

err_wake:
	close(run->wakefd);
err_epoll:
	close(run->epfd);
err_free:
	free(run);
	openrdma_err(EVD_LOG, "no dispatcher: %s", openrdma_strerror(ret));
	return ret;
}

/* Tells the thread to stop; returns the run to join, if any.  Lock held. */
static struct disp_run *disp_stop(void)
{
	struct disp_run *run = disp.run;

	disp.run = NULL;
	run->stop = true;
	eventfd_write(run->wakefd, 1);
	if (!disp_thread)
		return run;
	/* the last watch went from a handler: the thread ends on its own,
	 * and another joins it (reap.c) */
	run->self_stopped = true;
	core_evd_reap_add(run->tid);
	return NULL;
}

static void disp_join(struct disp_run *run)
{
	if (!run)
		return;
	pthread_join(run->tid, NULL);
	run_free(run);
}

int core_disp_watch(int fd, void (*fn)(void *arg), void *arg,
		    struct core_disp_watch **watch_out)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct disp_run *stopped = NULL;
	struct core_disp_watch *w;
	int ret = 0;

	if (fd < 0 || !fn || !watch_out)
		return -OPENRDMA_EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -OPENRDMA_ENOMEM;
	w->fd = fd;
	w->fn = fn;
	w->arg = arg;
	pthread_mutex_lock(&disp.lock);
	if (!disp.run) {
		ret = disp_start();
		if (ret)
			goto out;
	}
	w->id = ++disp.next_id;
	ev.data.u64 = w->id;
	if (epoll_ctl(disp.run->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		ret = -errno;
		if (!disp.watches)
			stopped = disp_stop();
		goto out;
	}
	HASH_ADD(hh, disp.watches, id, sizeof(w->id), w);
out:
	pthread_mutex_unlock(&disp.lock);
	disp_join(stopped);
	if (ret) {
		free(w);
		return ret;
	}
	*watch_out = w;
	return 0;
}

void core_disp_unwatch(struct core_disp_watch *w)
{
	struct disp_run *stopped = NULL;

	pthread_mutex_lock(&disp.lock);
	HASH_DEL(disp.watches, w);
	/* the fd may be closed already, which removed it from the set */
	epoll_ctl(disp.run->epfd, EPOLL_CTL_DEL, w->fd, NULL);
	while (disp.busy == w->id && !disp_thread)
		pthread_cond_wait(&disp.done, &disp.lock);
	/* while we waited, another thread may have removed the last other
	 * watch and stopped the run already */
	if (!disp.watches && disp.run)
		stopped = disp_stop();
	pthread_mutex_unlock(&disp.lock);
	disp_join(stopped);
	free(w);
}

int core_evd_disp_threads(void)
{
	return atomic_load(&disp.live);
}

int core_evd_engine_threads(void)
{
	return core_evd_disp_threads() + core_evd_pool_threads();
}
