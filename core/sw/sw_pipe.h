/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The pipelined send queue of an RC software QP whose wire answers later
 * (tcp): many requests in flight, each completed in posting order when the
 * peer's acknowledgement, read response, atomic response or negative
 * acknowledgement for it arrives.  sw_qp_progress() runs one request at a
 * time to its end; this runs the same queue (struct sw_sq of the sw_qp)
 * with the same checks, local operations and RNR rules, but lets the
 * transport put requests on its wire as fast as it can take them.
 *
 * A request's sequence number (PSN) is its send-queue index: the
 * transport carries it on the wire and hands it back with the answer.
 * Answers are cumulative, as on InfiniBand: an answer for PSN n means every
 * request before n executed successfully.  After an RNR NAK for n the
 * target drops what follows until n comes again, and the pipe sends again
 * from n once the RNR delay has passed.
 *
 * All work happens under the send queue's lock, in a pass:
 * sw_pipe_begin() ... sw_pipe_end().  Completions are written during the
 * pass and signalled by sw_pipe_end(), which also moves the QP to ERR when
 * a request failed.  The toolkit's flush (sw_qp_progress() in ERR) may run
 * between passes; the pipe notices and forgets what it had in flight.
 */
#ifndef CORE_SW_SW_PIPE_H
#define CORE_SW_SW_PIPE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include <openrdma/verbs.h>

#include "core/sw/cq.h"
#include "core/sw/qp.h"

/* Per-request state, in a ring parallel to the send queue's. */
struct sw_pipe_slot {
	uint32_t psn; /* the request the slot describes */
	uint32_t byte_len;
	uint8_t status; /* enum openrdma_wc_status once done */
	bool done; /* answered, or finished locally: retired in order */
};

struct sw_pipe {
	struct sw_qp *sqp;
	struct sw_pipe_slot *slot;
	uint32_t nslots; /* the send queue's ring size */
	uint32_t sent; /* next request to transmit: head <= sent <= tail */
	uint32_t acked; /* first request not known to be done */
	uint32_t rd_out; /* reads and atomics sent and not answered */
	uint32_t max_rd; /* ORD: how many of them may be outstanding */
	uint32_t stop; /* with stopped: a request failed locally before it */
	bool stopped; /* nothing is sent from stop on */
	bool failed; /* the peer failed a request: nothing more is sent */
	bool lost; /* the path to the peer is gone */
	/* posted requests not yet sent, as the last post or pass left them
	 * (sw_pipe_may_send); written under the queue's lock */
	uint32_t unsent;
};

/* One request for the wire, as sw_pipe_next() returns it. */
struct sw_pipe_req {
	const struct sw_send_wqe *wqe;
	uint32_t psn;
	/* the local buffers, checked and mapped: the payload of sends and
	 * writes; for reads and atomics, where the answer goes */
	struct iovec iov[SW_MAX_SGE];
	int iovcnt;
	uint64_t len;
};

/* A pass: what sw_pipe_end() signals and does once the lock is dropped. */
struct sw_pipe_pass {
	struct sw_cq_batch batch;
	bool fail; /* a request failed: the QP goes to ERR */
	int fail_event; /* async event with it, or -1 */
	uint64_t deadline; /* SW_PIPE_WAIT: when to call again (ns) */
};

/* sw_pipe_next() results */
enum {
	SW_PIPE_SEND, /* *req is the next request */
	SW_PIPE_IDLE, /* nothing to send */
	SW_PIPE_BLOCKED, /* waiting for answers (fence, ORD) */
	SW_PIPE_WAIT, /* waiting out an RNR NAK until pass->deadline */
};

int sw_pipe_init(struct sw_pipe *p, struct sw_qp *sqp);
void sw_pipe_fini(struct sw_pipe *p);
/*
 * Starts over after the QP was reset or its queues resized (nothing is in
 * flight then): follows the send queue's new size.
 */
int sw_pipe_reset(struct sw_pipe *p);
/* The ORD granted to the QP (0 is taken as 1: reads must be possible). */
void sw_pipe_set_max_rd(struct sw_pipe *p, uint32_t max_rd);

/*
 * Posts send work requests (the checks of openrdma_send_wr_check()); the
 * caller then has them transmitted.  In ERR they are flushed at once.
 */
int sw_pipe_post_send(struct sw_pipe *p, struct openrdma_send_wr *wr,
		      struct openrdma_send_wr **bad_wr);

void sw_pipe_begin(struct sw_pipe *p, struct sw_pipe_pass *pass);
void sw_pipe_end(struct sw_pipe *p, struct sw_pipe_pass *pass);

/*
 * The next request to transmit.  Local operations (BIND_MW, LOCAL_INV)
 * and requests that fail their local checks are finished on the way.
 */
int sw_pipe_next(struct sw_pipe *p, struct sw_pipe_pass *pass,
		 struct sw_pipe_req *req);
/* Requests sent and not yet acknowledged. */
static inline uint32_t sw_pipe_unacked(const struct sw_pipe *p)
{
	return p->sent - p->acked;
}

/* Whether every posted request was sent (in a pass: the queue's lock). */
static inline bool sw_pipe_all_sent(const struct sw_pipe *p)
{
	return p->sent == p->sqp->sq.tail;
}

/*
 * Whether the next sw_pipe_next() maps no memory key (in a pass): the
 * request it would return carries its payload inline, or there is none.
 * A transport that guards registered memory around its transmitter needs
 * no guard for such a request.
 */
bool sw_pipe_next_inline(struct sw_pipe *p);

/*
 * Whether requests wait to be sent, without the queue's lock: false only
 * if none did when the last post or pass ended.  A transport that sees
 * false after an answer need not write: a later post writes for itself.
 */
static inline bool sw_pipe_may_send(const struct sw_pipe *p)
{
	return __atomic_load_n(&p->unsent, __ATOMIC_RELAXED) != 0;
}

/*
 * The peer's answers.  Each returns 0, or -OPENRDMA_EPROTO when the
 * answer names no request it could answer (the transport then drops the
 * connection).  Answers for requests already flushed are ignored.
 */
int sw_pipe_ack(struct sw_pipe *p, struct sw_pipe_pass *pass, uint32_t psn);
/*
 * A read response for psn begins: maps where its data goes (may be called
 * again to check the mapping still holds).  Returns the status the read
 * completes with if it is not OPENRDMA_WC_SUCCESS (the data is then
 * discarded), or -OPENRDMA_EPROTO.
 */
int sw_pipe_read_map(struct sw_pipe *p, struct sw_pipe_pass *pass, uint32_t psn,
		     uint64_t len, struct iovec *iov, int *iovcnt);
/* The read response for psn ended: its data is in place, or status says
 * why not. */
void sw_pipe_read_done(struct sw_pipe *p, struct sw_pipe_pass *pass,
		       uint32_t psn, enum openrdma_wc_status status);
/* An atomic's original value arrived: stored in its buffer (host order). */
int sw_pipe_atomic_done(struct sw_pipe *p, struct sw_pipe_pass *pass,
			uint32_t psn, uint64_t value);
/*
 * A negative acknowledgement for psn: status is the completion status, or
 * SW_EXEC_RNR (rnr_timer: the target's timer code); after an RNR NAK with
 * retries left, pass->deadline says when to send again.
 */
int sw_pipe_nak(struct sw_pipe *p, struct sw_pipe_pass *pass, uint32_t psn,
		int status, uint8_t rnr_timer);
/*
 * The path to the peer is gone.  If a request is outstanding, the oldest
 * completes with status and the QP goes to ERR with event (an
 * OPENRDMA_EVENT_*, or -1); returns true then.  Otherwise the pipe is
 * marked lost and false is returned.
 */
bool sw_pipe_path_lost(struct sw_pipe *p, struct sw_pipe_pass *pass,
		       enum openrdma_wc_status status, int event);

#endif /* CORE_SW_SW_PIPE_H */
