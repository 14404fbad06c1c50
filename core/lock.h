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
		pthread_spinlock_t spin;
	};
};

static inline int core_lock_init(struct core_lock *l, enum core_lock_kind kind)
{
	l->kind = kind;
	switch (kind) {
	case CORE_LOCK_MUTEX:
		return -pthread_mutex_init(&l->mutex, NULL);
	case CORE_LOCK_SPIN:
		return -pthread_spin_init(&l->spin, PTHREAD_PROCESS_PRIVATE);
	case CORE_LOCK_NONE:
		break;
	}
	return 0;
}

static inline void core_lock_destroy(struct core_lock *l)
{
	if (l->kind == CORE_LOCK_MUTEX)
		pthread_mutex_destroy(&l->mutex);
	else if (l->kind == CORE_LOCK_SPIN)
		pthread_spin_destroy(&l->spin);
}

static inline void core_lock_acquire(struct core_lock *l)
{
	if (l->kind == CORE_LOCK_SPIN)
		pthread_spin_lock(&l->spin);
	else if (l->kind == CORE_LOCK_MUTEX)
		pthread_mutex_lock(&l->mutex);
}

static inline void core_lock_release(struct core_lock *l)
{
	if (l->kind == CORE_LOCK_SPIN)
		pthread_spin_unlock(&l->spin);
	else if (l->kind == CORE_LOCK_MUTEX)
		pthread_mutex_unlock(&l->mutex);
}

#endif /* CORE_LOCK_H */
