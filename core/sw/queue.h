/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Send and receive queues of copied work requests.
 *
 * Every slot is allocated at create with room for the granted number of
 * SGEs (and inline bytes), so posting never allocates.  Sequence numbers
 * run freely; the ring has a power-of-two number of slots so that they
 * index it across the 32-bit wrap, and holds at most cap requests.
 *
 * A send queue is worked by one thread at a time (see sw_qp_progress()), so
 * its requests execute and complete in order.  A receive queue is consumed
 * by whoever delivers to it: a consumed receive stays in its slot until its
 * completion is written, and completions leave in posting order even when
 * deliveries finish out of order or a flush overtakes them.
 *
 * The *_locked functions expect the queue's lock held.
 */
#ifndef CORE_SW_QUEUE_H
#define CORE_SW_QUEUE_H

#include <stdbool.h>
#include <stdint.h>

#include <openrdma/verbs.h>

#include "core/lock.h"
#include "core/sw/cq.h"

/* A send work request as posted, with the state of its execution. */
struct sw_send_wqe {
	uint64_t wr_id;
	enum openrdma_wr_opcode opcode;
	unsigned int send_flags;
	bool signaled;
	bool is_inline; /* the payload is in inline_data */
	uint32_t ex; /* imm_data (network order) or invalidate_rkey */
	uint64_t remote_addr;
	uint32_t rkey;
	uint64_t compare_add;
	uint64_t swap;
	struct openrdma_ah *ah; /* UD */
	uint32_t remote_qpn;
	uint32_t remote_qkey;
	struct openrdma_mw *mw; /* BIND_MW */
	uint32_t bind_rkey;
	struct openrdma_mw_bind_info bind_info;
	int num_sge;
	struct openrdma_sge *sge; /* the slot's array, max_send_sge long */
	uint32_t inline_len;
	uint8_t *inline_data; /* the slot's buffer, max_inline_data long */
	/* execution */
	bool started;
	uint8_t rnr_left; /* retries left after an RNR NAK */
	uint8_t rnr_timer; /* timer code of the last RNR NAK */
	bool rnr_no_wait; /* no timer: the next RNR NAK is final */
	uint64_t not_before; /* CLOCK_MONOTONIC ns: waiting out an RNR NAK */
};

struct sw_sq {
	struct core_lock lock;
	struct sw_send_wqe *wqe;
	struct openrdma_sge *sge_pool;
	uint8_t *inline_pool;
	uint32_t cap; /* granted max_send_wr */
	uint32_t mask; /* slots - 1 */
	uint32_t max_sge;
	uint32_t max_inline;
	uint32_t head; /* oldest not completed */
	uint32_t tail; /* next to post */
	bool busy; /* a thread is working the queue */
	bool kick; /* work arrived while it was */
};

enum sw_recv_state {
	SW_RECV_POSTED,
	SW_RECV_BUSY, /* being filled */
	SW_RECV_DONE, /* result in wc, waiting for those before it */
};

struct sw_recv_wqe {
	uint64_t wr_id;
	int num_sge;
	struct openrdma_sge *sge;
	enum sw_recv_state state;
	bool solicited;
	struct openrdma_wc wc;
};

struct sw_rq {
	struct core_lock lock;
	struct sw_recv_wqe *wqe;
	struct openrdma_sge *sge_pool;
	uint32_t cap; /* granted max_recv_wr */
	uint32_t mask; /* slots - 1 */
	uint32_t max_sge;
	uint32_t head; /* oldest not completed */
	uint32_t next; /* next to consume */
	uint32_t tail; /* next to post */
};

/* Slots for cap requests: the next power of two. */
uint32_t sw_ring_slots(uint32_t cap);

int sw_sq_init(struct sw_sq *sq, uint32_t cap, uint32_t max_sge,
	       uint32_t max_inline);
void sw_sq_fini(struct sw_sq *sq);
/*
 * openrdma_send_wr_check() as the send queue applies it: an INLINE flag
 * carries data only for sends and writes, and on other opcodes it is
 * ignored, so their SGEs are checked as usual.
 */
int sw_send_wr_check(const struct openrdma_qp *qp,
		     const struct openrdma_send_wr *wr);
/* Copies one checked WR (inline data included); -OPENRDMA_ENOMEM if full. */
int sw_sq_post_locked(struct sw_sq *sq, const struct openrdma_send_wr *wr,
		      bool sig_all);
static inline struct sw_send_wqe *sw_sq_head_locked(struct sw_sq *sq)
{
	return sq->head == sq->tail ? NULL : &sq->wqe[sq->head & sq->mask];
}
/*
 * Resizing: to is a fresh, empty queue of the new size.  copy moves what
 * from holds into it (-OPENRDMA_EINVAL if it does not fit, from unchanged);
 * swap then exchanges the storage of the two, each keeping its lock.
 */
int sw_sq_copy_locked(const struct sw_sq *from, struct sw_sq *to);
void sw_sq_swap(struct sw_sq *a, struct sw_sq *b);
/* Completes the head WR with status (a completion if signaled or failed). */
void sw_sq_retire_locked(struct sw_sq *sq, enum openrdma_wc_status status,
			 uint32_t byte_len, uint32_t qp_num, struct sw_cq *scq,
			 struct sw_cq_batch *batch);
/* Completes every outstanding WR with WR_FLUSH_ERR, in order. */
void sw_sq_flush_locked(struct sw_sq *sq, uint32_t qp_num, struct sw_cq *scq,
			struct sw_cq_batch *batch);
/* Drops every outstanding WR without completions. */
void sw_sq_reset_locked(struct sw_sq *sq);
/* The completion opcode of a send opcode. */
enum openrdma_wc_opcode sw_wc_opcode(enum openrdma_wr_opcode opcode);

int sw_rq_init(struct sw_rq *rq, uint32_t cap, uint32_t max_sge);
void sw_rq_fini(struct sw_rq *rq);
/* Copies one checked WR; -OPENRDMA_ENOMEM if full. */
int sw_rq_post_locked(struct sw_rq *rq, const struct openrdma_recv_wr *wr);
/* Receives posted and not yet consumed. */
static inline uint32_t sw_rq_pending_locked(const struct sw_rq *rq)
{
	return rq->tail - rq->next;
}
/* Takes the next receive for filling (it keeps its slot), or NULL. */
struct sw_recv_wqe *sw_rq_take_locked(struct sw_rq *rq);
/* Takes the next receive out of the ring (SRQ): copies it to wqe, whose
 * sge array has room for max_sge entries.  -OPENRDMA_EAGAIN if none. */
int sw_rq_pop_locked(struct sw_rq *rq, struct sw_recv_wqe *wqe);
/* Marks every receive not consumed as flushed. */
void sw_rq_flush_locked(struct sw_rq *rq, uint32_t qp_num);
/* Writes the completions of the done receives at the head, in order. */
void sw_rq_retire_locked(struct sw_rq *rq, struct sw_cq *scq,
			 struct sw_cq_batch *batch);
/* True while a consumed receive is being filled. */
bool sw_rq_busy_locked(const struct sw_rq *rq);
/* Drops every receive without completions (none may be busy). */
void sw_rq_reset_locked(struct sw_rq *rq);
/* As for send queues; -OPENRDMA_EBUSY while a receive is being filled. */
int sw_rq_copy_locked(const struct sw_rq *from, struct sw_rq *to);
void sw_rq_swap(struct sw_rq *a, struct sw_rq *b);
/* Grows or shrinks the ring (SRQ resize; takes the lock): -OPENRDMA_EINVAL
 * if cap is below the number of receives held, -OPENRDMA_EBUSY while one
 * is being filled. */
int sw_rq_resize(struct sw_rq *rq, uint32_t cap);

#endif /* CORE_SW_QUEUE_H */
