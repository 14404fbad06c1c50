/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The software shared receive queue: a receive ring that several QPs take
 * from, with the limit event (SRQ_LIMIT_REACHED once when the number of
 * posted receives falls below the armed limit, which then disarms).
 */
#ifndef CORE_SW_SRQ_H
#define CORE_SW_SRQ_H

#include <openrdma/verbs.h>

#include "core/sw/queue.h"

struct sw_srq {
	struct openrdma_srq *srq; /* the core's object, for events */
	struct sw_rq rq;
	uint32_t limit; /* armed limit; 0: off */
};

/* attr holds the granted sizes (the caller checked them). */
int sw_srq_init(struct sw_srq *ssrq, struct openrdma_srq *srq,
		const struct openrdma_srq_attr *attr);
void sw_srq_fini(struct sw_srq *ssrq);
int sw_srq_post_recv(struct sw_srq *ssrq, struct openrdma_recv_wr *wr,
		     struct openrdma_recv_wr **bad_wr);
/* Resizes (OPENRDMA_SRQ_MAX_WR, up to max_wr_cap) and arms
 * (OPENRDMA_SRQ_LIMIT, at most the size). */
int sw_srq_modify(struct sw_srq *ssrq, const struct openrdma_srq_attr *attr,
		  int attr_mask, uint32_t max_wr_cap);
void sw_srq_query(struct sw_srq *ssrq, struct openrdma_srq_attr *attr);
/*
 * Takes the oldest receive into wqe (whose sge array holds the SRQ's
 * max_sge entries) and reports the limit event if it fell below the
 * limit.  -OPENRDMA_EAGAIN if none is posted.
 */
int sw_srq_take(struct sw_srq *ssrq, struct sw_recv_wqe *wqe);

#endif /* CORE_SW_SRQ_H */
