/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The tcp transport's wire format (docs/wire/tcp.md): every message on a
 * connection, and every datagram, is a frame: a 24-byte base header, an
 * extension whose size the opcode fixes, then `length` bytes of payload.
 * All integers are big-endian.
 *
 * tcp_frame_parse() is a pure function, bytes in and a decoded header or
 * an error out, with no state and no allocation, so that it can be fuzzed
 * alone (tests/fuzz/tcp_frame_fuzz.c).  It checks every field a frame
 * carries by itself; what depends on the connection (is this PSN
 * outstanding, is this QP ours) is checked by the connection.
 */
#ifndef TRANSPORTS_TCP_TCP_FRAME_H
#define TRANSPORTS_TCP_TCP_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define TCP_FRAME_MAGIC 0x4f52 /* "OR" */
#define TCP_FRAME_VERSION 1
#define TCP_FRAME_BASE_LEN 24
/* The largest header: base and the largest extension. */
#define TCP_FRAME_HDR_MAX 56

/* Largest RC message (SEND, WRITE, READ), as device_query reports. */
#define TCP_FRAME_MAX_MSG (1u << 31)
/* Largest UD payload (without the GRH). */
#define TCP_FRAME_MAX_UD 4096
/* Private data each CM message may carry. */
#define TCP_FRAME_PDATA_CONNECT 196
#define TCP_FRAME_PDATA_ACCEPT 196
#define TCP_FRAME_PDATA_REJECT 148
#define TCP_FRAME_PDATA_DISCONNECT 148
/* QP numbers are 24 bits. */
#define TCP_FRAME_QPN_MAX 0xffffffu

enum tcp_op {
	/* requests: initiator to target */
	TCP_OP_SEND = 0x01,
	TCP_OP_SEND_IMM = 0x02,
	TCP_OP_SEND_INV = 0x03,
	TCP_OP_WRITE = 0x04,
	TCP_OP_WRITE_IMM = 0x05,
	TCP_OP_READ = 0x06,
	TCP_OP_CMP_SWAP = 0x07,
	TCP_OP_FETCH_ADD = 0x08,
	/* responses: target to initiator */
	TCP_OP_ACK = 0x10,
	TCP_OP_NAK = 0x11,
	TCP_OP_READ_RESP = 0x12,
	TCP_OP_ATOMIC_RESP = 0x13,
	/* connection management */
	TCP_OP_CONNECT = 0x20,
	TCP_OP_ACCEPT = 0x21,
	TCP_OP_REJECT = 0x22,
	TCP_OP_RTU = 0x23,
	TCP_OP_DISCONNECT = 0x24,
	TCP_OP_HELLO = 0x25,
	TCP_OP_KEEPALIVE = 0x26,
	/* datagrams (UDP) */
	TCP_OP_UD_SEND = 0x30,
	TCP_OP_UD_SEND_IMM = 0x31,
	TCP_OP_MAX = 0x32
};

/* Header flags. */
enum {
	TCP_FLAG_ACK = 1 << 0, /* the ack field is valid */
	TCP_FLAG_SOLICITED = 1 << 1, /* the receive raises a solicited event */
	TCP_FLAG_ACKREQ = 1 << 2, /* acknowledge without delay */
};

/* NAK syndromes besides completion statuses. */
#define TCP_NAK_RNR 0xff

/* Address families in HELLO frames. */
#define TCP_FAMILY_IPV4 4
#define TCP_FAMILY_IPV6 6

/*
 * A decoded header.  Only the fields of the frame's opcode are meaningful;
 * tcp_frame_encode() writes those and zeros for the reserved bytes.
 */
struct tcp_frame {
	uint8_t opcode;
	uint16_t flags;
	uint16_t hlen; /* header bytes, base and extension */
	uint32_t length; /* payload bytes that follow */
	uint32_t qpn; /* the receiving QP (0 in CM frames) */
	uint32_t psn;
	uint32_t ack;
	/* SEND_IMM, SEND_INV (the key to invalidate), WRITE_IMM, UD_SEND_IMM */
	uint32_t imm;
	/* WRITE*, READ, CMP_SWAP, FETCH_ADD */
	uint64_t raddr;
	uint32_t rkey;
	uint32_t rlen; /* READ: bytes to read */
	/* CMP_SWAP, FETCH_ADD; ATOMIC_RESP: value holds the original */
	uint64_t compare_add;
	uint64_t swap;
	uint64_t value;
	/* NAK */
	uint8_t syndrome; /* enum openrdma_wc_status, or TCP_NAK_RNR */
	uint8_t rnr_timer;
	/* CONNECT, ACCEPT, HELLO, UD_SEND* */
	uint32_t src_qpn;
	/* CONNECT, ACCEPT */
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	uint8_t three_way;
	/* REJECT: the reason, a negative OPENRDMA_E* code */
	int32_t reason;
	/* HELLO: the sender's port address */
	uint8_t family;
	uint16_t port;
	uint8_t addr[16];
	/* UD_SEND* */
	uint32_t qkey;
};

/* The header length of opcode (base and extension), 0 if unknown. */
unsigned int tcp_frame_hlen(unsigned int opcode);

/*
 * Decodes the frame header at buf[0, avail).  Returns the header length
 * (> 0) with *f filled, 0 when more bytes are needed (at least *need in
 * all, if need is not NULL), or -OPENRDMA_EPROTO when the bytes are not a
 * valid header.
 */
int tcp_frame_parse(const uint8_t *buf, size_t avail, struct tcp_frame *f,
		    size_t *need);

/* Encodes f (opcode, flags and the opcode's fields) into buf, which has
 * room for TCP_FRAME_HDR_MAX bytes; returns the header length. */
unsigned int tcp_frame_encode(const struct tcp_frame *f, uint8_t *buf);

/* Printable opcode name, for logs. */
const char *tcp_frame_op_name(unsigned int opcode);

#endif /* TRANSPORTS_TCP_TCP_FRAME_H */
