/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
#include <string.h>
#include <time.h>
#include <utlist.h>

#include <openrdma/errno.h>

#include "core/sw/timer.h"

uint64_t sw_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int sw_timer_init(struct sw_timer *t)
{
	pthread_condattr_t attr;
	int ret;

	memset(t, 0, sizeof(*t));
	ret = -pthread_condattr_init(&attr);
	if (ret)
		return ret;
	ret = -pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (ret)
		goto out_attr;
	ret = -pthread_mutex_init(&t->lock, NULL);
	if (ret)
		goto out_attr;
	ret = -pthread_cond_init(&t->wake, &attr);
	if (ret)
		goto err_mutex;
	ret = -pthread_cond_init(&t->idle, NULL);
	if (ret)
		goto err_wake;
	pthread_condattr_destroy(&attr);
	return 0;

err_wake:
	pthread_cond_destroy(&t->wake);
err_mutex:
	pthread_mutex_destroy(&t->lock);
out_attr:
	pthread_condattr_destroy(&attr);
	return ret;
}

static void disarm(struct sw_timer *t, struct sw_timer_entry *const *entries,
		   int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (!entries[i]->queued)
			continue;
		DL_DELETE(t->list, entries[i]);
		entries[i]->queued = false;
	}
}

static bool running_one_of(const struct sw_timer *t,
			   struct sw_timer_entry *const *entries, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (t->running == entries[i])
			return true;
	return false;
}

static void *timer_thread(void *arg)
{
	struct sw_timer *t = arg;
	struct sw_timer_entry *e;
	struct timespec ts;

	pthread_mutex_lock(&t->lock);
	while (!t->stop) {
		e = t->list;
		if (!e) {
			pthread_cond_wait(&t->wake, &t->lock);
			continue;
		}
		if (sw_now_ns() < e->deadline) {
			ts.tv_sec = (time_t)(e->deadline / 1000000000u);
			ts.tv_nsec = (long)(e->deadline % 1000000000u);
			pthread_cond_timedwait(&t->wake, &t->lock, &ts);
			continue;
		}
		DL_DELETE(t->list, e);
		e->queued = false;
		t->running = e;
		pthread_mutex_unlock(&t->lock);
		e->fn(e);
		pthread_mutex_lock(&t->lock);
		/* what it re-armed of the set being cancelled does not run
		 * again: the canceller waits for this call, and may free
		 * them next */
		if (t->ncancel)
			disarm(t, t->cancel, t->ncancel);
		t->running = NULL;
		pthread_cond_broadcast(&t->idle);
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

void sw_timer_fini(struct sw_timer *t)
{
	bool started;

	pthread_mutex_lock(&t->lock);
	t->stop = true;
	started = t->started;
	pthread_cond_signal(&t->wake);
	pthread_mutex_unlock(&t->lock);
	if (started)
		pthread_join(t->thread, NULL);
	pthread_cond_destroy(&t->idle);
	pthread_cond_destroy(&t->wake);
	pthread_mutex_destroy(&t->lock);
}

int sw_timer_add(struct sw_timer *t, struct sw_timer_entry *entry,
		 uint64_t deadline)
{
	struct sw_timer_entry *pos;
	int ret = 0;

	pthread_mutex_lock(&t->lock);
	if (t->stop) {
		ret = -OPENRDMA_ESTATE;
		goto out;
	}
	if (!t->started) {
		ret = -pthread_create(&t->thread, NULL, timer_thread, t);
		if (ret)
			goto out;
		t->started = true;
	}
	if (entry->queued)
		DL_DELETE(t->list, entry);
	entry->deadline = deadline;
	entry->queued = true;
	DL_FOREACH (t->list, pos) {
		if (pos->deadline > deadline)
			break;
	}
	if (pos)
		DL_PREPEND_ELEM(t->list, pos, entry);
	else
		DL_APPEND(t->list, entry);
	if (t->list == entry)
		pthread_cond_signal(&t->wake);
out:
	pthread_mutex_unlock(&t->lock);
	return ret;
}

void sw_timer_cancel_set(struct sw_timer *t,
			 struct sw_timer_entry *const *entries, int n)
{
	pthread_mutex_lock(&t->lock);
	disarm(t, entries, n);
	/* an entry cancelling itself from its own call must not wait */
	if (running_one_of(t, entries, n) && t->started &&
	    !pthread_equal(pthread_self(), t->thread)) {
		t->cancel = entries;
		t->ncancel = n;
		while (running_one_of(t, entries, n))
			pthread_cond_wait(&t->idle, &t->lock);
		/* the thread may have gone on to another's entry, whose
		 * canceller now waits with its own set */
		if (t->cancel == entries) {
			t->cancel = NULL;
			t->ncancel = 0;
		}
	}
	pthread_mutex_unlock(&t->lock);
}

void sw_timer_cancel(struct sw_timer *t, struct sw_timer_entry *entry)
{
	sw_timer_cancel_set(t, &entry, 1);
}
