/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Cross-memory attach: process_vm_readv/writev between our iovecs and a
 * peer's, one copy with no work in the peer, and the waits that go with
 * talking to another process.
 */
#include <sched.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "transports/shm/shm.h"

/* Moves an iovec list on by n bytes. */
static void iov_advance(struct iovec *v, int *idx, int cnt, size_t n)
{
	while (n && *idx < cnt) {
		if (v[*idx].iov_len <= n) {
			n -= v[*idx].iov_len;
			v[*idx].iov_len = 0;
			(*idx)++;
		} else {
			v[*idx].iov_base = (uint8_t *)v[*idx].iov_base + n;
			v[*idx].iov_len -= n;
			n = 0;
		}
	}
}

int shm_cma_rw(pid_t pid, bool to_peer, const struct iovec *liov, int lcnt,
	       const struct iovec *riov, int rcnt)
{
	struct iovec l[SW_MAX_SGE], r[SW_MAX_SGE];
	int li = 0, ri = 0, i;
	size_t total = 0;
	ssize_t n;

	if (lcnt > SW_MAX_SGE || rcnt > SW_MAX_SGE)
		return -OPENRDMA_EINVAL;
	memcpy(l, liov, sizeof(*l) * (size_t)lcnt);
	memcpy(r, riov, sizeof(*r) * (size_t)rcnt);
	for (i = 0; i < lcnt; i++)
		total += l[i].iov_len;
	while (total) {
		n = to_peer ?
			    process_vm_writev(pid, l + li, (size_t)(lcnt - li),
					      r + ri, (size_t)(rcnt - ri), 0) :
			    process_vm_readv(pid, l + li, (size_t)(lcnt - li),
					     r + ri, (size_t)(rcnt - ri), 0);
		if (n <= 0)
			return n < 0 ? -errno : -OPENRDMA_EFAULT;
		/* a partial transfer: a page that is not mapped, or a
		 * signal; go on from where it stopped */
		iov_advance(l, &li, lcnt, (size_t)n);
		iov_advance(r, &ri, rcnt, (size_t)n);
		total -= (size_t)n;
	}
	return 0;
}

int shm_cma_copy(pid_t pid, bool to_peer, void *buf, size_t len,
		 const struct shm_iov *iov, int niov, int *idx, uint64_t *off)
{
	struct iovec l = { .iov_base = buf, .iov_len = len };
	struct iovec r[SW_MAX_SGE];
	uint64_t want = len, o = *off, take;
	int n = 0, i = *idx;

	/* the peer's iovecs covering len bytes from the cursor */
	for (; want && i < niov; i++, o = 0) {
		if (o >= iov[i].len)
			continue;
		take = iov[i].len - o < want ? iov[i].len - o : want;
		r[n].iov_base = (void *)(uintptr_t)(iov[i].addr + o);
		r[n].iov_len = take;
		want -= take;
		*idx = i;
		*off = o + take;
		n++;
	}
	if (want)
		return -OPENRDMA_EMSGSIZE;
	return len ? shm_cma_rw(pid, to_peer, &l, 1, r, n) : 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void shm_backoff_init(struct shm_backoff *b, uint64_t timeout_ns)
{
	b->n = 0;
	b->deadline = timeout_ns ? now_ns() + timeout_ns : 0;
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	atomic_signal_fence(memory_order_seq_cst);
#endif
}

int shm_backoff(struct shm_backoff *b)
{
	static const struct timespec nap = { 0, 20000 };

	b->n++;
	if (b->n < 256) {
		cpu_relax();
		return 0;
	}
	if (b->deadline && now_ns() > b->deadline)
		return -OPENRDMA_ETIMEDOUT;
	/* the peer's thread may need our CPU */
	if (b->n < 2048)
		sched_yield();
	else
		nanosleep(&nap, NULL);
	return 0;
}
