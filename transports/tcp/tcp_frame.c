/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* The frame codec: see tcp_frame.h and docs/wire/tcp.md. */
#include <stdbool.h>
#include <string.h>

#include <openrdma/errno.h>
#include <openrdma/verbs.h>

#include "transports/tcp/tcp_frame.h"

/* What each opcode allows: its extension, flags and payload. */
struct op_rule {
	const char *name;
	uint8_t ext; /* extension bytes */
	uint8_t flags; /* flags it may carry */
	uint8_t psn; /* carries a PSN (else 0) */
	uint8_t qpn; /* names a QP (else 0) */
	uint32_t max_len; /* payload bytes */
};

#define REQ_FLAGS (TCP_FLAG_ACK | TCP_FLAG_ACKREQ)

static const struct op_rule rules[TCP_OP_MAX] = {
	[TCP_OP_SEND] = { "SEND", 0, REQ_FLAGS | TCP_FLAG_SOLICITED, 1, 1,
			  TCP_FRAME_MAX_MSG },
	[TCP_OP_SEND_IMM] = { "SEND_IMM", 8, REQ_FLAGS | TCP_FLAG_SOLICITED, 1,
			      1, TCP_FRAME_MAX_MSG },
	[TCP_OP_SEND_INV] = { "SEND_INV", 8, REQ_FLAGS | TCP_FLAG_SOLICITED, 1,
			      1, TCP_FRAME_MAX_MSG },
	[TCP_OP_WRITE] = { "WRITE", 16, REQ_FLAGS, 1, 1, TCP_FRAME_MAX_MSG },
	[TCP_OP_WRITE_IMM] = { "WRITE_IMM", 16, REQ_FLAGS | TCP_FLAG_SOLICITED,
			       1, 1, TCP_FRAME_MAX_MSG },
	[TCP_OP_READ] = { "READ", 16, REQ_FLAGS, 1, 1, 0 },
	[TCP_OP_CMP_SWAP] = { "CMP_SWAP", 32, REQ_FLAGS, 1, 1, 0 },
	[TCP_OP_FETCH_ADD] = { "FETCH_ADD", 32, REQ_FLAGS, 1, 1, 0 },
	[TCP_OP_ACK] = { "ACK", 0, TCP_FLAG_ACK, 0, 1, 0 },
	[TCP_OP_NAK] = { "NAK", 8, 0, 1, 1, 0 },
	[TCP_OP_READ_RESP] = { "READ_RESP", 0, TCP_FLAG_ACK, 1, 1,
			       TCP_FRAME_MAX_MSG },
	[TCP_OP_ATOMIC_RESP] = { "ATOMIC_RESP", 8, TCP_FLAG_ACK, 1, 1, 0 },
	[TCP_OP_CONNECT] = { "CONNECT", 16, 0, 0, 0, TCP_FRAME_PDATA_CONNECT },
	[TCP_OP_ACCEPT] = { "ACCEPT", 16, 0, 0, 0, TCP_FRAME_PDATA_ACCEPT },
	[TCP_OP_REJECT] = { "REJECT", 8, 0, 0, 0, TCP_FRAME_PDATA_REJECT },
	[TCP_OP_RTU] = { "RTU", 0, 0, 0, 0, 0 },
	[TCP_OP_DISCONNECT] = { "DISCONNECT", 0, 0, 0, 0,
				TCP_FRAME_PDATA_DISCONNECT },
	[TCP_OP_HELLO] = { "HELLO", 24, 0, 0, 1, 0 },
	[TCP_OP_KEEPALIVE] = { "KEEPALIVE", 0, TCP_FLAG_ACK, 0, 0, 0 },
	[TCP_OP_UD_SEND] = { "UD_SEND", 16, TCP_FLAG_SOLICITED, 0, 1,
			     TCP_FRAME_MAX_UD },
	[TCP_OP_UD_SEND_IMM] = { "UD_SEND_IMM", 16, TCP_FLAG_SOLICITED, 0, 1,
				 TCP_FRAME_MAX_UD },
};

static const struct op_rule *rule_of(unsigned int opcode)
{
	if (opcode >= TCP_OP_MAX || !rules[opcode].name)
		return NULL;
	return &rules[opcode];
}

unsigned int tcp_frame_hlen(unsigned int opcode)
{
	const struct op_rule *r = rule_of(opcode);

	return r ? TCP_FRAME_BASE_LEN + r->ext : 0;
}

const char *tcp_frame_op_name(unsigned int opcode)
{
	const struct op_rule *r = rule_of(opcode);

	return r ? r->name : "unknown";
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

static bool zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

/* The statuses a target answers a request with (NAK syndromes). */
static bool syndrome_valid(uint8_t s, uint8_t rnr_timer)
{
	switch (s) {
	case OPENRDMA_WC_REM_INV_REQ_ERR:
	case OPENRDMA_WC_REM_ACCESS_ERR:
	case OPENRDMA_WC_REM_OP_ERR:
	case OPENRDMA_WC_RETRY_EXC_ERR:
		return rnr_timer == 0;
	case TCP_NAK_RNR:
		return rnr_timer <= 31;
	default:
		return false;
	}
}

/* Decodes and checks the extension of f->opcode at e. */
static int parse_ext(const uint8_t *e, struct tcp_frame *f)
{
	switch (f->opcode) {
	case TCP_OP_SEND:
	case TCP_OP_ACK:
	case TCP_OP_READ_RESP:
	case TCP_OP_RTU:
	case TCP_OP_DISCONNECT:
	case TCP_OP_KEEPALIVE:
		return 0;
	case TCP_OP_SEND_IMM:
	case TCP_OP_SEND_INV:
		f->imm = get32(e);
		return zero(e + 4, 4) ? 0 : -1;
	case TCP_OP_WRITE:
	case TCP_OP_WRITE_IMM:
		f->raddr = get64(e);
		f->rkey = get32(e + 8);
		f->imm = get32(e + 12);
		return f->opcode == TCP_OP_WRITE && f->imm ? -1 : 0;
	case TCP_OP_READ:
		f->raddr = get64(e);
		f->rkey = get32(e + 8);
		f->rlen = get32(e + 12);
		return f->rlen > TCP_FRAME_MAX_MSG ? -1 : 0;
	case TCP_OP_CMP_SWAP:
	case TCP_OP_FETCH_ADD:
		f->raddr = get64(e);
		f->rkey = get32(e + 8);
		f->compare_add = get64(e + 16);
		f->swap = get64(e + 24);
		if (!zero(e + 12, 4))
			return -1;
		return f->opcode == TCP_OP_FETCH_ADD && f->swap ? -1 : 0;
	case TCP_OP_NAK:
		f->syndrome = e[0];
		f->rnr_timer = e[1];
		if (!zero(e + 2, 6))
			return -1;
		return syndrome_valid(f->syndrome, f->rnr_timer) ? 0 : -1;
	case TCP_OP_ATOMIC_RESP:
		f->value = get64(e);
		return 0;
	case TCP_OP_CONNECT:
	case TCP_OP_ACCEPT:
		f->src_qpn = get32(e);
		f->responder_resources = e[4];
		f->initiator_depth = e[5];
		f->retry_count = e[6];
		f->rnr_retry_count = e[7];
		f->three_way = e[8];
		if (!zero(e + 9, 7) || f->src_qpn > TCP_FRAME_QPN_MAX ||
		    f->retry_count > 7 || f->rnr_retry_count > 7 ||
		    f->three_way > 1)
			return -1;
		return f->opcode == TCP_OP_ACCEPT && f->three_way ? -1 : 0;
	case TCP_OP_REJECT:
		f->reason = (int32_t)get32(e);
		if (!zero(e + 4, 4))
			return -1;
		/* a negative OPENRDMA_E* code */
		return f->reason < 0 && f->reason > -65536 ? 0 : -1;
	case TCP_OP_HELLO:
		f->src_qpn = get32(e);
		f->family = e[4];
		f->port = get16(e + 6);
		memcpy(f->addr, e + 8, 16);
		if (e[5] || f->src_qpn > TCP_FRAME_QPN_MAX || !f->port)
			return -1;
		if (f->family == TCP_FAMILY_IPV4)
			return zero(f->addr + 4, 12) ? 0 : -1;
		return f->family == TCP_FAMILY_IPV6 ? 0 : -1;
	case TCP_OP_UD_SEND:
	case TCP_OP_UD_SEND_IMM:
		f->src_qpn = get32(e);
		f->qkey = get32(e + 4);
		f->imm = get32(e + 8);
		if (!zero(e + 12, 4) || f->src_qpn > TCP_FRAME_QPN_MAX)
			return -1;
		return f->opcode == TCP_OP_UD_SEND && f->imm ? -1 : 0;
	default:
		return -1;
	}
}

int tcp_frame_parse(const uint8_t *buf, size_t avail, struct tcp_frame *f,
		    size_t *need)
{
	const struct op_rule *r;
	unsigned int hlen;

	if (avail < TCP_FRAME_BASE_LEN) {
		if (need)
			*need = TCP_FRAME_BASE_LEN;
		return 0;
	}
	/* the base first: garbage is refused before waiting for more */
	if (get16(buf) != TCP_FRAME_MAGIC || buf[2] != TCP_FRAME_VERSION)
		return -OPENRDMA_EPROTO;
	r = rule_of(buf[3]);
	if (!r)
		return -OPENRDMA_EPROTO;
	hlen = TCP_FRAME_BASE_LEN + r->ext;
	if (get16(buf + 6) != hlen)
		return -OPENRDMA_EPROTO;
	if (avail < hlen) {
		if (need)
			*need = hlen;
		return 0;
	}

	memset(f, 0, sizeof(*f));
	f->opcode = buf[3];
	f->flags = get16(buf + 4);
	f->hlen = (uint16_t)hlen;
	f->length = get32(buf + 8);
	f->qpn = get32(buf + 12);
	f->psn = get32(buf + 16);
	f->ack = get32(buf + 20);
	if (f->flags & ~(unsigned int)r->flags)
		return -OPENRDMA_EPROTO;
	if (f->opcode == TCP_OP_ACK && !(f->flags & TCP_FLAG_ACK))
		return -OPENRDMA_EPROTO;
	if (!(f->flags & TCP_FLAG_ACK) && f->ack)
		return -OPENRDMA_EPROTO;
	if (f->length > r->max_len)
		return -OPENRDMA_EPROTO;
	if ((!r->psn && f->psn) || (!r->qpn && f->qpn) ||
	    f->qpn > TCP_FRAME_QPN_MAX)
		return -OPENRDMA_EPROTO;
	if (parse_ext(buf + TCP_FRAME_BASE_LEN, f))
		return -OPENRDMA_EPROTO;
	return (int)hlen;
}

static void encode_ext(const struct tcp_frame *f, uint8_t *e)
{
	switch (f->opcode) {
	case TCP_OP_SEND_IMM:
	case TCP_OP_SEND_INV:
		put32(e, f->imm);
		break;
	case TCP_OP_WRITE:
	case TCP_OP_WRITE_IMM:
		put64(e, f->raddr);
		put32(e + 8, f->rkey);
		put32(e + 12, f->opcode == TCP_OP_WRITE_IMM ? f->imm : 0);
		break;
	case TCP_OP_READ:
		put64(e, f->raddr);
		put32(e + 8, f->rkey);
		put32(e + 12, f->rlen);
		break;
	case TCP_OP_CMP_SWAP:
	case TCP_OP_FETCH_ADD:
		put64(e, f->raddr);
		put32(e + 8, f->rkey);
		put64(e + 16, f->compare_add);
		put64(e + 24, f->opcode == TCP_OP_CMP_SWAP ? f->swap : 0);
		break;
	case TCP_OP_NAK:
		e[0] = f->syndrome;
		e[1] = f->rnr_timer;
		break;
	case TCP_OP_ATOMIC_RESP:
		put64(e, f->value);
		break;
	case TCP_OP_CONNECT:
	case TCP_OP_ACCEPT:
		put32(e, f->src_qpn);
		e[4] = f->responder_resources;
		e[5] = f->initiator_depth;
		e[6] = f->retry_count;
		e[7] = f->rnr_retry_count;
		e[8] = f->opcode == TCP_OP_CONNECT ? f->three_way : 0;
		break;
	case TCP_OP_REJECT:
		put32(e, (uint32_t)f->reason);
		break;
	case TCP_OP_HELLO:
		put32(e, f->src_qpn);
		e[4] = f->family;
		put16(e + 6, f->port);
		memcpy(e + 8, f->addr, 16);
		break;
	case TCP_OP_UD_SEND:
	case TCP_OP_UD_SEND_IMM:
		put32(e, f->src_qpn);
		put32(e + 4, f->qkey);
		put32(e + 8, f->opcode == TCP_OP_UD_SEND_IMM ? f->imm : 0);
		break;
	default:
		break;
	}
}

unsigned int tcp_frame_encode(const struct tcp_frame *f, uint8_t *buf)
{
	unsigned int hlen = tcp_frame_hlen(f->opcode);

	memset(buf, 0, hlen);
	put16(buf, TCP_FRAME_MAGIC);
	buf[2] = TCP_FRAME_VERSION;
	buf[3] = f->opcode;
	put16(buf + 4, f->flags);
	put16(buf + 6, (uint16_t)hlen);
	put32(buf + 8, f->length);
	put32(buf + 12, f->qpn);
	put32(buf + 16, f->psn);
	put32(buf + 20, (f->flags & TCP_FLAG_ACK) ? f->ack : 0);
	encode_ext(f, buf + TCP_FRAME_BASE_LEN);
	return hlen;
}
