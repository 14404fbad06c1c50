/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The progress threads' epoll wait: timeouts in nanoseconds, and the same
 * behaviour where epoll_pwait2(2) is missing (kernels before 5.11, and
 * valgrind 3.19), which a seccomp filter makes it here.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/sw/epoll.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* An epoll set watching a fresh eventfd, whose fd is *efd. */
static int epoll_with_eventfd(int *efd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int epfd;

	epfd = epoll_create1(EPOLL_CLOEXEC);
	cr_assert_geq(epfd, 0);
	*efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	cr_assert_geq(*efd, 0);
	ev.data.fd = *efd;
	cr_assert_eq(epoll_ctl(epfd, EPOLL_CTL_ADD, *efd, &ev), 0);
	return epfd;
}

/* What both kinds of wait must do. */
static void waits_as_asked(void)
{
	struct epoll_event ev[4];
	uint64_t one = 1, t;
	int epfd, efd, n;

	epfd = epoll_with_eventfd(&efd);

	/* nothing there: 0 returns at once, a timeout after its time */
	t = now_ns();
	cr_assert_eq(sw_epoll_wait(epfd, ev, 4, 0), 0);
	cr_expect_lt(now_ns() - t, 50 * 1000000u, "a wait of 0 waited");
	t = now_ns();
	cr_assert_eq(sw_epoll_wait(epfd, ev, 4, 1500 * 1000), 0);
	cr_assert_geq(now_ns() - t, 1500 * 1000u, "returned before 1.5 ms");
	t = now_ns();
	cr_assert_eq(sw_epoll_wait(epfd, ev, 4, 20 * 1000000), 0);
	cr_assert_geq(now_ns() - t, 20 * 1000000u, "returned before 20 ms");

	/* something there: every kind of wait reports it */
	cr_assert_eq(write(efd, &one, sizeof(one)), (ssize_t)sizeof(one));
	n = sw_epoll_wait(epfd, ev, 4, -1);
	cr_assert_eq(n, 1);
	cr_assert_eq(ev[0].data.fd, efd);
	cr_assert(ev[0].events & EPOLLIN);
	cr_assert_eq(sw_epoll_wait(epfd, ev, 4, 0), 1);
	cr_assert_eq(sw_epoll_wait(epfd, ev, 4, 5 * 1000000), 1);

	close(efd);
	close(epfd);
}

Test(sw_epoll, waits_as_asked)
{
	waits_as_asked();
}

Test(sw_epoll, waits_as_asked_without_epoll_pwait2)
{
#ifdef SYS_epoll_pwait2
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_epoll_pwait2, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = sizeof(filter) / sizeof(filter[0]),
		.filter = filter,
	};
	struct epoll_event ev;
	int epfd;

	/* criterion runs each test in a process of its own */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		cr_skip_test("no seccomp filter here: %s", strerror(errno));
	epfd = epoll_create1(EPOLL_CLOEXEC);
	cr_assert_geq(epfd, 0);
	errno = 0;
	cr_assert_eq(syscall(SYS_epoll_pwait2, epfd, &ev, 1, NULL, NULL, 0),
		     -1);
	cr_assert_eq(errno, ENOSYS, "the filter did not take");
	close(epfd);
	waits_as_asked();
#else
	cr_skip_test("this system's headers have no epoll_pwait2");
#endif
}
