/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#include "core/sw/epoll.h"

/* set once epoll_pwait2() said ENOSYS: no need to ask again */
static atomic_bool no_pwait2;

static int wait_ms(int64_t timeout_ns)
{
	int64_t ms;

	if (timeout_ns < 0)
		return -1;
	ms = (timeout_ns + 999999) / 1000000;
	return ms > INT32_MAX ? INT32_MAX : (int)ms;
}

int sw_epoll_wait(int epfd, struct epoll_event *ev, int max, int64_t timeout_ns)
{
	struct timespec ts;
	int n;

	if (!atomic_load_explicit(&no_pwait2, memory_order_relaxed)) {
		ts.tv_sec = (time_t)(timeout_ns / 1000000000);
		ts.tv_nsec = (long)(timeout_ns % 1000000000);
		n = epoll_pwait2(epfd, ev, max, timeout_ns < 0 ? NULL : &ts,
				 NULL);
		if (n >= 0 || errno != ENOSYS)
			return n;
		atomic_store_explicit(&no_pwait2, true, memory_order_relaxed);
	}
	return epoll_wait(epfd, ev, max, wait_ms(timeout_ns));
}
