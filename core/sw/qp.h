/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The software QP: what a software transport's QP embeds to get posting,
 * in-order execution, completions, RNR retries, the QP state effects of the
 * semantics page (flush on ERR, drop on RESET, errors detected while
 * executing) and the async events that go with them.
 *
 * The transport supplies two operations: execute one wire request (SEND,
 * RDMA WRITE and READ, atomics; the toolkit runs LOCAL_INV and BIND_MW and
 * checks local SGEs itself) and schedule a later sw_qp_progress() call (the
 * RNR timer).  At the target, the transport hands a decoded request to
 * sw_target_rc() or sw_target_ud() (core/sw/target.h).
 *
 * Locks: SQ and RQ spinlocks, CQ rings inside them; openrdma_cq_notify()
 * and async events are called with none held.
 */
#ifndef CORE_SW_QP_H
#define CORE_SW_QP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include <openrdma/verbs.h>

#include "core/sw/cq.h"
#include "core/sw/keymap.h"
#include "core/sw/queue.h"
#include "core/sw/srq.h"

/* The most SGEs a software work request carries. */
#define SW_MAX_SGE 32

/* execute(): the target had no receive (RNR NAK); wqe->rnr_timer is set. */
#define SW_EXEC_RNR (-OPENRDMA_EAGAIN)

/* rnr_retry value that retries forever */
#define SW_RNR_RETRY_INFINITE 7

struct sw_qp;

struct sw_qp_ops {
	/*
	 * Carries out one wire request.  iov lists its local buffers, checked
	 * and mapped (the payload of sends and writes, where read data and
	 * atomic results go); len is their total.  Returns the completion
	 * status, or SW_EXEC_RNR.
	 */
	int (*execute)(struct sw_qp *sqp, struct sw_send_wqe *wqe,
		       const struct iovec *iov, int iovcnt, uint64_t len);
	/*
	 * Calls sw_qp_progress(sqp) again at deadline (CLOCK_MONOTONIC ns).
	 * On failure the waiting request completes with RNR_RETRY_EXC_ERR.
	 */
	int (*schedule)(struct sw_qp *sqp, uint64_t deadline);
};

struct sw_qp_init {
	const struct sw_qp_ops *ops;
	struct sw_keymap *keymap;
	struct sw_cq *send_cq;
	struct sw_cq *recv_cq;
	struct sw_srq *srq; /* NULL: the QP has its own RQ */
	/* largest message: max_msg_size (RC) or max_ud_msg_size (UD) */
	uint64_t max_msg_size;
	/* RNR delays in percent of the IB timer values */
	unsigned int rnr_scale;
};

struct sw_qp {
	/* the core's object: pd, qp_num, qp_type, cap and sq_sig_all are
	 * read from it and must be set before sw_qp_init() */
	struct openrdma_qp *qp;
	const struct sw_qp_ops *ops;
	struct sw_keymap *keymap;
	struct sw_cq *scq;
	struct sw_cq *rcq;
	struct sw_srq *srq;
	struct sw_sq sq;
	struct sw_rq rq;
	uint64_t max_msg_size;
	unsigned int rnr_scale;
	_Atomic int state; /* enum openrdma_qp_state, as this QP sees it */
	/* attributes the data path reads */
	_Atomic unsigned int access_flags;
	_Atomic uint32_t qkey;
	_Atomic uint32_t dest_qpn;
	_Atomic uint8_t rnr_retry;
	_Atomic uint8_t min_rnr_timer;
	/* every attribute, for openrdma_qp_query() */
	pthread_mutex_t attr_lock;
	struct openrdma_qp_attr attr;
};

/* A receive taken for filling by the target. */
struct sw_recv {
	struct sw_recv_wqe *wqe; /* in the RQ, or &copy for an SRQ */
	struct sw_recv_wqe copy;
	struct openrdma_sge sge[SW_MAX_SGE];
};

int sw_qp_init(struct sw_qp *sqp, struct openrdma_qp *qp,
	       const struct sw_qp_init *init);
/* The QP must be unreachable: no thread posts to it or delivers to it. */
void sw_qp_fini(struct sw_qp *sqp);

static inline enum openrdma_qp_state sw_qp_state(struct sw_qp *sqp)
{
	return (enum openrdma_qp_state)atomic_load(&sqp->state);
}

/*
 * Checks and records attributes, then applies a state change (the core
 * checked the transition): ERR flushes, RESET drops.  OPENRDMA_QP_CAP
 * resizes the work queues; attr->cap returns what was granted.
 */
int sw_qp_modify(struct sw_qp *sqp, struct openrdma_qp_attr *attr,
		 int attr_mask);
void sw_qp_query(struct sw_qp *sqp, struct openrdma_qp_attr *attr,
		 struct openrdma_qp_init_attr *init_attr);

int sw_qp_post_send(struct sw_qp *sqp, struct openrdma_send_wr *wr,
		    struct openrdma_send_wr **bad_wr);
int sw_qp_post_recv(struct sw_qp *sqp, struct openrdma_recv_wr *wr,
		    struct openrdma_recv_wr **bad_wr);
/* Works the send queue: executes, completes, flushes.  Any thread. */
void sw_qp_progress(struct sw_qp *sqp);

/*
 * Moves the QP to ERR after a failure: tells the core, flushes both
 * queues, posts event (an OPENRDMA_EVENT_*, or -1 for none) and, with an
 * SRQ, QP_LAST_WQE_REACHED.  Nothing happens if it already was in ERR.
 */
void sw_qp_error(struct sw_qp *sqp, int event);

/* Target side: takes the next receive (RQ or SRQ); -OPENRDMA_EAGAIN if
 * none is posted. */
int sw_qp_recv_take(struct sw_qp *sqp, struct sw_recv *r);
/* Completes a taken receive with wc (qp_num and wr_id are filled in). */
void sw_qp_recv_done(struct sw_qp *sqp, struct sw_recv *r,
		     struct openrdma_wc *wc, bool solicited);

/* An RNR NAK timer code (0..31) in ns, as IB encodes it. */
uint64_t sw_rnr_delay_ns(uint8_t timer);

#endif /* CORE_SW_QP_H */
