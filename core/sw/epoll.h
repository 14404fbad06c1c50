/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The progress threads' wait on their epoll sets, with a timeout in
 * nanoseconds.
 */
#ifndef CORE_SW_EPOLL_H
#define CORE_SW_EPOLL_H

#include <stdint.h>
#include <sys/epoll.h>

/*
 * epoll_pwait2(2) for up to max events; timeout_ns < 0 waits for one, 0
 * does not wait.  Where the kernel lacks it (before Linux 5.11), or a
 * tool that runs the program does (valgrind 3.19), epoll_wait(2) with the
 * timeout rounded up to the next millisecond.  Returns what they return.
 */
int sw_epoll_wait(int epfd, struct epoll_event *ev, int max,
		  int64_t timeout_ns);

#endif /* CORE_SW_EPOLL_H */
