/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The software completion queue: a ring of struct openrdma_wc sized at
 * create, filled from any thread, with the overrun state of the semantics
 * page (the completion is lost, CQ_ERR is reported once, and polls return
 * -OPENRDMA_EOVERFLOW once the entries before it are drained).
 *
 * Completions are pushed under the producer's queue lock (the CQ lock is
 * innermost) into a struct sw_cq_batch; sw_cq_batch_done() then signals the
 * core with no lock held.
 */
#ifndef CORE_SW_CQ_H
#define CORE_SW_CQ_H

#include <stdbool.h>
#include <stdint.h>

#include <openrdma/verbs.h>

#include "core/lock.h"

struct sw_cq {
	struct openrdma_cq *cq; /* the core's object, for notifications */
	struct core_lock lock;
	struct openrdma_wc *ring;
	uint32_t size; /* capacity */
	uint32_t head; /* oldest entry */
	uint32_t count; /* written under lock; read without it by pollers */
	bool overrun; /* likewise */
};

/* A batch serves one QP: its send and receive CQs. */
#define SW_CQ_BATCH_MAX 2

/* Completions pushed under locks, signalled once the locks are dropped. */
struct sw_cq_batch {
	int num;
	struct {
		struct sw_cq *cq;
		bool pushed; /* notify */
		bool solicited;
		bool overrun; /* this batch overran it: report CQ_ERR */
	} ent[SW_CQ_BATCH_MAX];
	/* a completion was lost: the producing QP goes to ERR */
	bool lost;
};

#define SW_CQ_BATCH_INIT \
	{                \
		.num = 0 \
	}

int sw_cq_init(struct sw_cq *scq, struct openrdma_cq *cq, int cqe);
void sw_cq_fini(struct sw_cq *scq);
/* Whether a poll would find something (an entry or an overrun); takes no
 * lock, so an entry pushed meanwhile may be missed. */
static inline bool sw_cq_ready(const struct sw_cq *scq)
{
	return __atomic_load_n(&scq->count, __ATOMIC_RELAXED) ||
	       __atomic_load_n(&scq->overrun, __ATOMIC_RELAXED);
}

/* Returns the number of entries copied, or -OPENRDMA_EOVERFLOW once the CQ
 * has overrun and the entries before the overrun are drained. */
int sw_cq_poll(struct sw_cq *scq, int num_entries, struct openrdma_wc *wc);
/* -OPENRDMA_EINVAL if cqe is below the number of queued entries. */
int sw_cq_resize(struct sw_cq *scq, int cqe);
/*
 * Adds one completion.  solicited: a solicited receive or an error.  A CQ
 * that is full overruns; the batch records what to report.
 */
void sw_cq_push(struct sw_cq *scq, const struct openrdma_wc *wc, bool solicited,
		struct sw_cq_batch *batch);
/* Signals the completions of a batch: call with no lock held.  Returns
 * true if a completion was lost (the caller moves its QP to ERR). */
bool sw_cq_batch_done(struct sw_cq_batch *batch);

#endif /* CORE_SW_CQ_H */
