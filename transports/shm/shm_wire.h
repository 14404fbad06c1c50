/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * What two shm contexts share: the segments (memfd files that both sides
 * map, each written by its owner alone and mapped read-only by the peer)
 * and the messages of the rendezvous sockets.  docs/wire/shm.md explains
 * them; this header is their definition.  Both ends run on one host, so
 * integers are in host byte order.
 */
#ifndef TRANSPORTS_SHM_SHM_WIRE_H
#define TRANSPORTS_SHM_SHM_WIRE_H

#include <stdatomic.h>
#include <stdint.h>

#include <openrdma/verbs.h>

#define SHM_WIRE_VERSION 1
#define SHM_CACHELINE 64
#define SHM_PAGE 4096

/* Abstract Unix socket names: "\0" SHM_NAME_PREFIX "/node/<n>", ".../port/<p>" */
#define SHM_NAME_PREFIX "openrdma-shm-1"

/* A QPN is <node:12><index:12>: the node names the context owning it. */
#define SHM_QPN_INDEX_BITS 12
#define SHM_NODE_MAX ((1u << 12) - 1)
#define SHM_QPN_INDEX_MAX ((1u << SHM_QPN_INDEX_BITS) - 1)
#define SHM_QPN_NODE(qpn) ((qpn) >> SHM_QPN_INDEX_BITS)
#define SHM_QPN_INDEX(qpn) ((qpn)&SHM_QPN_INDEX_MAX)

enum shm_seg_kind {
	SHM_SEG_NODE = 1, /* a context: its key table and wake-up flag */
	SHM_SEG_QP = 2, /* one end of an RC connection */
	SHM_SEG_LINK = 3, /* datagrams from one context to another */
	SHM_SEG_ACK = 4, /* the receiver's heads of a link */
};

#define SHM_SEG_MAGIC 0x314d48534d445250ull /* "PRDMSHM1" */

/* ------------------------------------------------------------------ */
/* The node segment: one per context                                  */
/* ------------------------------------------------------------------ */

/*
 * A published memory key.  The owner writes an entry between two
 * increments of seq (odd while it writes); readers copy it and retry if
 * seq moved.  key 0 is an empty slot, 1 a deleted one (real keys have a
 * non-zero index, so they are at least 256).
 */
struct shm_key {
	_Atomic uint32_t seq;
	_Atomic uint32_t key;
	_Atomic uint32_t access; /* OPENRDMA_ACCESS_* of the MR */
	_Atomic uint32_t pd; /* the owner's PD number */
	_Atomic uint64_t va; /* first byte, in the owner's address space */
	_Atomic uint64_t len;
};

#define SHM_KEY_EMPTY 0u
#define SHM_KEY_DELETED 1u

/*
 * What a QP publishes for the initiators of its connection, at its index
 * in the owner's table: they check it before RDMA of their own.
 */
struct shm_qp_pub {
	_Atomic uint32_t qpn; /* 0: no QP at this index */
	_Atomic uint32_t state; /* enum openrdma_qp_state */
	_Atomic uint32_t access; /* qp_access_flags */
	_Atomic uint32_t pd;
};

#define SHM_QP_SLOTS (SHM_QPN_INDEX_MAX + 1)

struct shm_node_hdr {
	uint64_t magic;
	uint32_t version;
	uint32_t kind; /* SHM_SEG_NODE */
	uint64_t size; /* of the whole segment */
	uint64_t incarnation; /* random: tells reused node numbers apart */
	uint32_t node;
	uint32_t pid;
	uint32_t uid;
	uint32_t key_slots; /* a power of two */
	uint64_t key_off; /* struct shm_key[key_slots] */
	uint64_t qp_off; /* struct shm_qp_pub[SHM_QP_SLOTS] */
	/* process_vm_readv() of cma_addr in pid returns cma_cookie when
	 * cross-memory attach is permitted */
	uint64_t cma_addr;
	uint64_t cma_cookie;
	/* set by the owner's progress thread before it blocks: producers
	 * then write to its wake-up eventfd */
	_Alignas(SHM_CACHELINE) _Atomic uint32_t sleeping;
};

/* ------------------------------------------------------------------ */
/* Rings                                                              */
/* ------------------------------------------------------------------ */

enum shm_el_type {
	SHM_EL_REQ = 1, /* a request for the target to execute */
	SHM_EL_DATA = 2, /* more payload of the request being executed */
	SHM_EL_RESP = 3, /* a READ or atomic done: its value or length */
	SHM_EL_RDATA = 4, /* RDMA READ data coming back through the ring */
	SHM_EL_DGRAM = 5, /* a UD datagram */
	SHM_EL_ACK = 6, /* every request up to seq executed */
	SHM_EL_NAK = 7, /* request seq failed (op: status) or found no
			 * receive (op: SHM_NAK_RNR, flags: the timer) */
};

/* Where a request's payload is. */
enum shm_pl {
	SHM_PL_NONE = 0,
	SHM_PL_INLINE = 1, /* in the element (u.inl) */
	SHM_PL_RING = 2, /* in the data ring, then in DATA elements */
	SHM_PL_CMA = 3, /* in the initiator's memory: an iovec list */
};

/* NAK op for "receiver not ready" */
#define SHM_NAK_RNR 0xfe

#define SHM_INLINE_MAX 32

/*
 * One cache line.  The producer fills it, then stores tag (its ring
 * position + 1) with release: a consumer at position p accepts only
 * tag == p + 1, so a stale element of an earlier lap never passes.
 */
struct shm_elem {
	_Atomic uint64_t tag;
	uint8_t type; /* enum shm_el_type */
	uint8_t op; /* REQ, DGRAM, RESP: wr opcode; NAK: status */
	uint8_t flags; /* REQ, DGRAM: send flags; NAK: RNR timer */
	uint8_t pl; /* REQ, DGRAM: enum shm_pl */
	uint32_t seq; /* request number (PSN); DGRAM: destination QPN */
	uint32_t len; /* REQ, DGRAM, RESP: the request's length;
		       * DATA, RDATA: this chunk */
	uint32_t ex; /* immediate data or rkey to invalidate */
	uint64_t data; /* data ring position of the chunk (or iovec list) */
	union {
		struct {
			uint64_t raddr;
			uint32_t rkey;
			/* REQ: bytes of the payload in this element's chunk
			 * (RING) or iovecs in the list (CMA); DGRAM: Q_Key */
			uint32_t aux;
			uint64_t cmp; /* DGRAM: source QPN */
			uint64_t swap;
		} r;
		uint8_t inl[SHM_INLINE_MAX];
		struct {
			uint64_t result; /* RESP: the atomic's value */
		} resp;
	} u;
};

_Static_assert(sizeof(struct shm_elem) == SHM_CACHELINE,
	       "an element is one cache line");

/* An iovec of the initiator, in a CMA request's list. */
struct shm_iov {
	uint64_t addr;
	uint64_t len;
};

/* Where a ring lies in its segment; both sizes are powers of two. */
struct shm_ring_desc {
	uint64_t elem_off;
	uint64_t data_off;
	uint64_t data_size;
	uint32_t nelem;
	uint32_t pad;
};

/* The consumer's positions, published for the producer. */
struct shm_heads {
	_Alignas(SHM_CACHELINE) _Atomic uint64_t elem;
	_Atomic uint64_t data;
};

#define SHM_CHAN_RINGS 2
/* QP segments: ring 0 carries requests, ring 1 responses */
#define SHM_RING_REQ 0
#define SHM_RING_RESP 1

/* The first page of a QP, link or ack segment. */
struct shm_chan_hdr {
	uint64_t magic;
	uint32_t version;
	uint32_t kind; /* SHM_SEG_QP, _LINK or _ACK */
	uint64_t size;
	uint32_t qpn; /* QP segments: the owner's QP */
	uint32_t nring;
	uint64_t id; /* random: names the segment's rings */
	struct shm_ring_desc ring[SHM_CHAN_RINGS];
	/* the owner reads and writes the peer's memory (process_vm_*), so
	 * the peer may hand it iovecs instead of copies */
	_Alignas(SHM_CACHELINE) _Atomic uint32_t cma;
	/* the initiator's direct access in flight: key << 32 | key seq */
	_Alignas(SHM_CACHELINE) _Atomic uint64_t busy;
	/* how far the owner consumed the peer's rings */
	struct shm_heads heads[SHM_CHAN_RINGS];
};

_Static_assert(sizeof(struct shm_chan_hdr) <= SHM_PAGE, "one page");
_Static_assert(sizeof(struct shm_node_hdr) <= SHM_PAGE, "one page");

/* ------------------------------------------------------------------ */
/* Socket messages (SOCK_SEQPACKET: one message per datagram)         */
/* ------------------------------------------------------------------ */

#define SHM_MSG_MAGIC 0x4d534f52u /* "ROSM" */

enum shm_msg_type {
	/* node sockets */
	SHM_MSG_ATTACH = 1, /* connect QP src to QP dst; fds: node, wake, QP */
	SHM_MSG_ATTACH_OK = 2, /* fds: node, wake, QP */
	SHM_MSG_LINK = 3, /* datagrams follow; fds: node, wake, link */
	SHM_MSG_LINK_OK = 4, /* fds: node, wake, ack */
	SHM_MSG_NAK = 5, /* refused: err */
	SHM_MSG_DETACH = 6, /* the QP behind this socket is gone or reset */
	/* CM sockets (port rendezvous) */
	SHM_MSG_CM_REQ = 16,
	SHM_MSG_CM_REP = 17,
	SHM_MSG_CM_RTU = 18,
	SHM_MSG_CM_REJ = 19,
	SHM_MSG_CM_DREQ = 20,
};

struct shm_msg_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
};

struct shm_msg_attach {
	struct shm_msg_hdr hdr;
	uint32_t src_qpn;
	uint32_t dst_qpn;
};

struct shm_msg_nak {
	struct shm_msg_hdr hdr;
	int32_t err; /* negative OPENRDMA_E* */
};

struct shm_msg_cm {
	struct shm_msg_hdr hdr;
	uint32_t qpn; /* REQ, REP: the sender's QP */
	int32_t status; /* REJ: the reason, a negative OPENRDMA_E* */
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	uint8_t three_way;
	uint8_t pdata_len;
	uint16_t pad;
	uint8_t pdata[OPENRDMA_MAX_PRIVATE_DATA];
};

/* File descriptors a message carries at most. */
#define SHM_MSG_MAX_FDS 3

#endif /* TRANSPORTS_SHM_SHM_WIRE_H */
