/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* Helpers shared by the event engine's tests and benchmark. */
#ifndef TESTS_EVD_EVD_TEST_H
#define TESTS_EVD_EVD_TEST_H

#include <dirent.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/evd/evd.h"

/* The record the tests store: who produced it, its rank, when. */
struct trec {
	uint32_t producer;
	uint32_t seq;
	uint64_t stamp_ns;
};

static inline uint64_t t_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t t_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void t_sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static inline int t_evd_create(uint32_t streams, size_t capacity,
			       uint32_t flags, enum core_evd_overflow ovf,
			       struct core_evd **evd_out)
{
	struct core_evd_attr attr = {
		.streams = streams,
		.flags = flags,
		.overflow = ovf,
		.rec_size = sizeof(struct trec),
		.capacity = capacity,
	};

	return core_evd_create(&attr, evd_out);
}

/* A software-event SEVD. */
static inline struct core_evd *t_sevd(size_t capacity, uint32_t flags)
{
	struct core_evd *evd = NULL;

	if (t_evd_create(CORE_EVD_STREAM_SOFTWARE, capacity, flags,
			 CORE_EVD_OVERFLOW_DEFAULT, &evd))
		abort();
	return evd;
}

static inline struct core_evd *t_aevd(uint32_t flags)
{
	struct core_evd_attr attr = {
		.streams = CORE_EVD_STREAM_AEVD,
		.flags = flags,
	};
	struct core_evd *evd = NULL;

	if (core_evd_create(&attr, &evd))
		abort();
	return evd;
}

/* Posts, retrying while the EVD is full. */
static inline int t_post(struct core_evd *evd, uint32_t producer, uint32_t seq)
{
	struct trec r = { producer, seq, t_now_ns() };
	int ret;

	while ((ret = core_evd_post_se(evd, &r)) == -OPENRDMA_ENOSPC)
		sched_yield();
	return ret;
}

/* True once another thread is inside a wait on evd (an empty one);
 * false if none came within 10 s. */
static inline bool t_waiter_inside(struct core_evd *evd)
{
	struct trec r;
	int i;

	for (i = 0; i < 10000; i++) {
		if (core_evd_wait(evd, 0, 0, &r, NULL) == -OPENRDMA_EBUSY)
			return true;
		t_sleep_ms(1);
	}
	return false;
}

/* 1 if fd is readable now, 0 if not. */
static inline int t_readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN);
}

/* Waits up to ms for the engine's threads to be gone; returns their count. */
static inline int t_engine_threads_settle(unsigned int ms)
{
	unsigned int i;

	for (i = 0; i < ms && core_evd_engine_threads(); i++)
		t_sleep_ms(1);
	return core_evd_engine_threads();
}

/* Threads of this process, from /proc. */
static inline int t_process_threads(void)
{
	struct dirent *d;
	DIR *dir;
	int n = 0;

	dir = opendir("/proc/self/task");
	if (!dir)
		return -1;
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.')
			n++;
	closedir(dir);
	return n;
}

/*
 * Threads of this process once a joined one has left /proc too (the
 * kernel lists an exited thread until it has released it, a moment after
 * pthread_join() returns): want, or whatever is there after ms.
 */
static inline void *t_nothing(void *arg)
{
	*(pid_t *)arg = (pid_t)syscall(SYS_gettid);
	return NULL;
}

/*
 * The process's threads, once a sanitizer's runtime has started its own
 * (it does with the first thread made) and that first thread has gone: a
 * joined thread stays listed for a moment after pthread_join() returns.
 */
static inline int t_process_threads_base(void)
{
	char path[64];
	pid_t tid = 0;
	pthread_t t;
	int i;

	if (pthread_create(&t, NULL, t_nothing, &tid))
		return t_process_threads();
	pthread_join(t, NULL);
	snprintf(path, sizeof(path), "/proc/self/task/%d", (int)tid);
	for (i = 0; i < 2000 && !access(path, F_OK); i++)
		t_sleep_ms(1);
	return t_process_threads();
}

static inline int t_process_threads_settle(int want, unsigned int ms)
{
	unsigned int i;
	int n = t_process_threads();

	for (i = 0; i < ms && n != want; i++) {
		t_sleep_ms(1);
		n = t_process_threads();
	}
	return n;
}

#endif /* TESTS_EVD_EVD_TEST_H */
