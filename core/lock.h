/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * A lock whose kind follows the context's thread mode: a mutex for control
 * paths, a spinlock for short data-path sections, or nothing when the
 * application serializes its calls (OPENRDMA_THREAD_SINGLE).
 *
 * Lock order (outer to inner): registry -> context -> object (PD, CQ, QP,
 * SRQ, CM id) -> queue (SQ, RQ, CQ ring).  A CQ ring lock may be taken
 * under a QP queue lock, never the reverse.  No lock is held while user
 * code runs or while blocking on the network.
 */
#ifndef CORE_LOCK_H
#define CORE_LOCK_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>

enum core_lock_kind {
	CORE_LOCK_MUTEX,
	CORE_LOCK_SPIN,
	CORE_LOCK_NONE,
};

struct core_lock {
	enum core_lock_kind kind;
	union {
		pthread_mutex_t mutex;
		atomic_bool spin;
	};
};

/* Spins on a taken spinlock before the waiter yields its CPU. */
#define CORE_LOCK_SPINS 128

static inline void core_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

/*
 * A spinlock that yields: a holder preempted on the waiter's CPU (more
 * threads than cores, or a progress thread on a polling application's
 * core) would otherwise have the waiter spin out its whole time slice.
 */
static __attribute__((noinline, unused)) void
core_spin_contended(atomic_bool *spin)
{
	unsigned int n;

	do {
		for (n = 0; atomic_load_explicit(spin, memory_order_relaxed);
		     n++) {
			if (n < CORE_LOCK_SPINS) {
				core_cpu_relax();
			} else {
				sched_yield();
				n = 0;
			}
		}
	} while (atomic_exchange_explicit(spin, true, memory_order_acquire));
}

/* The waiting is out of line: the lock's users stay small. */
static inline void core_spin_acquire(atomic_bool *spin)
{
	if (atomic_exchange_explicit(spin, true, memory_order_acquire))
		core_spin_contended(spin);
}

/*
 * A spinlock and nothing else, for the front ends' short data-path
 * sections that are spinlocks whatever the thread mode: no kind to test
 * on the way in and out.
 */
struct core_spin {
	atomic_bool taken;
};

static inline void core_spin_init(struct core_spin *s)
{
	atomic_init(&s->taken, false);
}

static inline void core_spin_lock(struct core_spin *s)
{
	core_spin_acquire(&s->taken);
}

static inline void core_spin_unlock(struct core_spin *s)
{
	atomic_store_explicit(&s->taken, false, memory_order_release);
}

static inline int core_lock_init(struct core_lock *l, enum core_lock_kind kind)
{
	l->kind = kind;
	switch (kind) {
	case CORE_LOCK_MUTEX:
		return -pthread_mutex_init(&l->mutex, NULL);
	case CORE_LOCK_SPIN:
		atomic_init(&l->spin, false);
		break;
	case CORE_LOCK_NONE:
		break;
	}
	return 0;
}

static inline void core_lock_destroy(struct core_lock *l)
{
	if (l->kind == CORE_LOCK_MUTEX)
		pthread_mutex_destroy(&l->mutex);
}

static inline void core_lock_acquire(struct core_lock *l)
{
	if (l->kind == CORE_LOCK_SPIN)
		core_spin_acquire(&l->spin);
	else if (l->kind == CORE_LOCK_MUTEX)
		pthread_mutex_lock(&l->mutex);
}

static inline void core_lock_release(struct core_lock *l)
{
	if (l->kind == CORE_LOCK_SPIN)
		atomic_store_explicit(&l->spin, false, memory_order_release);
	else if (l->kind == CORE_LOCK_MUTEX)
		pthread_mutex_unlock(&l->mutex);
}

#endif /* CORE_LOCK_H */
