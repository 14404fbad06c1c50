/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Engine threads that stopped themselves: a dispatcher whose last watch
 * went from one of its own handlers, a callback pool whose last callback
 * went from a callback.  A thread cannot join itself, and a detached one
 * may still run the library's code when the library is unmapped, so they
 * wait here until a thread that is none of the engine's joins them: the
 * close of the last context, and the library's unload.
 */
#include <stdlib.h>

#include <openrdma/log.h>

#include "core/evd/evd_priv.h"

static struct {
	pthread_mutex_t lock;
	pthread_t *tids;
	size_t num, cap;
} reap = { .lock = PTHREAD_MUTEX_INITIALIZER };

static __thread bool engine_self;

void core_evd_reap_self_mark(void)
{
	engine_self = true;
}

void core_evd_reap_add(pthread_t tid)
{
	pthread_t *tids;
	size_t cap;

	pthread_mutex_lock(&reap.lock);
	if (reap.num == reap.cap) {
		cap = reap.cap ? 2 * reap.cap : 8;
		tids = realloc(reap.tids, cap * sizeof(*tids));
		if (!tids) {
			/* it ends on its own all the same */
			pthread_mutex_unlock(&reap.lock);
			openrdma_warn(EVD_LOG, "thread left unjoined");
			pthread_detach(tid);
			return;
		}
		reap.tids = tids;
		reap.cap = cap;
	}
	reap.tids[reap.num++] = tid;
	pthread_mutex_unlock(&reap.lock);
}

unsigned int core_evd_reap(void)
{
	pthread_t *tids;
	size_t i, n;

	if (engine_self)
		return 0;
	pthread_mutex_lock(&reap.lock);
	tids = reap.tids;
	n = reap.num;
	reap.tids = NULL;
	reap.num = reap.cap = 0;
	pthread_mutex_unlock(&reap.lock);
	for (i = 0; i < n; i++)
		pthread_join(tids[i], NULL);
	free(tids);
	return (unsigned int)n;
}
