/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Target-side execution in two steps, for transports whose payload arrives
 * after the request's header and must land straight in registered memory
 * (tcp reads it from its socket as it comes, without stopping its progress
 * thread).
 *
 * sw_place_begin() does everything sw_target_rc() does before the first
 * byte moves: every check of the semantics page, taking the receive of a
 * SEND or RDMA WRITE with immediate, invalidating a key, and the target's
 * state change and async event when a check fails.  It returns where the
 * payload goes.  The transport then fills those iovecs and calls
 * sw_place_end(), which writes the receive's completion.
 *
 * READ and atomics carry no payload at the target: transports run them
 * through sw_target_rc().
 */
#ifndef CORE_SW_SW_PLACE_H
#define CORE_SW_SW_PLACE_H

#include <stdint.h>
#include <sys/uio.h>

#include <openrdma/verbs.h>

#include "core/sw/qp.h"
#include "core/sw/target.h"

/* A SEND or RDMA WRITE between its checks and its completion. */
struct sw_place {
	enum openrdma_wr_opcode opcode;
	unsigned int send_flags;
	uint32_t src_qpn;
	uint32_t ex; /* immediate data or the invalidated key */
	uint64_t length;
	bool has_recv; /* a receive was taken and awaits sw_place_end() */
	struct sw_recv recv;
	/* where the payload goes: exactly length bytes */
	struct iovec iov[SW_MAX_SGE];
	int iovcnt;
};

/*
 * Checks req (SEND, SEND_WITH_IMM, SEND_WITH_INV, RDMA_WRITE or
 * RDMA_WRITE_WITH_IMM; req->payload is not used) against target and
 * prepares p.  Returns OPENRDMA_WC_SUCCESS, SW_EXEC_RNR with *rnr_timer
 * set (nothing was taken), or the initiator's error status; on an error
 * the target is already in the state the semantics page gives it, and
 * nothing may be written.
 */
int sw_place_begin(struct sw_qp *target, const struct sw_req *req,
		   struct sw_place *p, uint8_t *rnr_timer);
/*
 * The payload of a successful sw_place_begin() is in place (status
 * OPENRDMA_WC_SUCCESS) or could not be (any other status: the receive, if
 * any, completes with it and the target QP goes to ERR).
 */
void sw_place_end(struct sw_qp *target, struct sw_place *p,
		  enum openrdma_wc_status status);

#endif /* CORE_SW_SW_PLACE_H */
