/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Target-side execution of remote requests, for every software transport:
 * the transport decodes a request (from its wire, or from the initiator's
 * work request in self), and these functions do every check of the
 * semantics page before any byte moves, copy through the request's payload,
 * run atomics, consume receives, invalidate keys, write the responder's
 * completions, move the target QP to ERR with its async event where the
 * page says so, and return the status the initiator completes with.
 */
#ifndef CORE_SW_TARGET_H
#define CORE_SW_TARGET_H

#include <stdint.h>

#include <openrdma/verbs.h>

#include "core/sw/payload.h"
#include "core/sw/qp.h"

/* One decoded request. */
struct sw_req {
	enum openrdma_wr_opcode opcode;
	unsigned int send_flags; /* OPENRDMA_SEND_SOLICITED matters */
	uint32_t src_qpn;
	uint32_t ex; /* imm_data (network order) or the rkey to invalidate */
	uint64_t remote_addr;
	uint32_t rkey;
	uint64_t length; /* of the data sent, written or read */
	uint64_t compare_add;
	uint64_t swap;
	struct sw_payload *payload;
	/* UD */
	uint32_t qkey;
	uint16_t slid; /* the sender's index in the target's peer table */
	union openrdma_gid sgid; /* the sender's port */
	union openrdma_gid dgid; /* the target's port */
};

/*
 * Executes an RC request on target.  Returns the initiator's completion
 * status, or SW_EXEC_RNR when no receive is posted; *rnr_timer then holds
 * the target's min_rnr_timer for the NAK.  A target that is not in RTR or
 * RTS does not answer: RETRY_EXC_ERR.
 */
int sw_target_rc(struct sw_qp *target, const struct sw_req *req,
		 uint8_t *rnr_timer);
/*
 * Delivers a datagram to target.  Returns 0 when a receive took it, or
 * why it was dropped (-OPENRDMA_ENOTCONN: not ready, -OPENRDMA_EPERM:
 * Q_Key, -OPENRDMA_EAGAIN: no receive, -OPENRDMA_EMSGSIZE: receive too
 * short, -OPENRDMA_EFAULT: bad receive buffer); the sender completes
 * successfully in every case.
 */
int sw_target_ud(struct sw_qp *target, const struct sw_req *req);

#endif /* CORE_SW_TARGET_H */
