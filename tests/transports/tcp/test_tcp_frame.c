/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The tcp frame codec: every opcode survives encode and parse, every
 * field the parser checks is refused when wrong, truncated headers ask for
 * more, and the fuzz corpus (tests/fuzz/corpus/tcp_frame) parses as its
 * names say: op-* and stream-* are valid frames, bad-* are not.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <openrdma/errno.h>
#include <openrdma/verbs.h>

#include "transports/tcp/tcp_frame.h"

static const uint8_t all_ops[] = {
	TCP_OP_SEND,	  TCP_OP_SEND_IMM,   TCP_OP_SEND_INV,
	TCP_OP_WRITE,	  TCP_OP_WRITE_IMM,  TCP_OP_READ,
	TCP_OP_CMP_SWAP,  TCP_OP_FETCH_ADD,  TCP_OP_ACK,
	TCP_OP_NAK,	  TCP_OP_READ_RESP,  TCP_OP_ATOMIC_RESP,
	TCP_OP_CONNECT,	  TCP_OP_ACCEPT,     TCP_OP_REJECT,
	TCP_OP_RTU,	  TCP_OP_DISCONNECT, TCP_OP_HELLO,
	TCP_OP_KEEPALIVE, TCP_OP_UD_SEND,    TCP_OP_UD_SEND_IMM,
};

/* A valid frame of opcode op with every field it carries set. */
static void sample(uint8_t op, struct tcp_frame *f)
{
	memset(f, 0, sizeof(*f));
	f->opcode = op;
	switch (op) {
	case TCP_OP_SEND:
	case TCP_OP_SEND_IMM:
	case TCP_OP_SEND_INV:
	case TCP_OP_WRITE:
	case TCP_OP_WRITE_IMM:
		f->length = 4096;
		f->flags = op == TCP_OP_WRITE ? TCP_FLAG_ACKREQ :
						TCP_FLAG_SOLICITED;
		f->qpn = 0xabcdef;
		f->psn = 0xfffffffe;
		f->imm = op == TCP_OP_WRITE || op == TCP_OP_SEND ? 0 :
								   0x12345678;
		if (op == TCP_OP_WRITE || op == TCP_OP_WRITE_IMM) {
			f->raddr = 0x00007f1234567000ull;
			f->rkey = 0x89abcd01;
		}
		break;
	case TCP_OP_READ:
	case TCP_OP_CMP_SWAP:
	case TCP_OP_FETCH_ADD:
		f->qpn = 2;
		f->psn = 17;
		f->flags = TCP_FLAG_ACK;
		f->ack = 16;
		f->raddr = 0xffffffffffff0000ull;
		f->rkey = 0x100;
		if (op == TCP_OP_READ) {
			f->rlen = TCP_FRAME_MAX_MSG;
		} else {
			f->compare_add = 0x0102030405060708ull;
			f->swap = op == TCP_OP_CMP_SWAP ? ~0ull : 0;
		}
		break;
	case TCP_OP_ACK:
		f->qpn = 3;
		f->flags = TCP_FLAG_ACK;
		f->ack = 99;
		break;
	case TCP_OP_NAK:
		f->qpn = 3;
		f->psn = 5;
		f->syndrome = TCP_NAK_RNR;
		f->rnr_timer = 31;
		break;
	case TCP_OP_READ_RESP:
		f->qpn = 3;
		f->psn = 5;
		f->length = 1;
		break;
	case TCP_OP_ATOMIC_RESP:
		f->qpn = 3;
		f->psn = 6;
		f->value = 0x8000000000000001ull;
		break;
	case TCP_OP_CONNECT:
	case TCP_OP_ACCEPT:
		f->src_qpn = 0xffffff;
		f->responder_resources = 16;
		f->initiator_depth = 8;
		f->retry_count = 7;
		f->rnr_retry_count = 6;
		f->three_way = op == TCP_OP_CONNECT;
		f->length = TCP_FRAME_PDATA_CONNECT;
		break;
	case TCP_OP_REJECT:
		f->reason = -OPENRDMA_EREJECTED;
		f->length = TCP_FRAME_PDATA_REJECT;
		break;
	case TCP_OP_DISCONNECT:
		f->length = TCP_FRAME_PDATA_DISCONNECT;
		break;
	case TCP_OP_HELLO:
		f->qpn = 7;
		f->src_qpn = 8;
		f->family = TCP_FAMILY_IPV6;
		f->port = 65535;
		memset(f->addr, 0xfe, sizeof(f->addr));
		break;
	case TCP_OP_UD_SEND:
	case TCP_OP_UD_SEND_IMM:
		f->qpn = 9;
		f->src_qpn = 10;
		f->qkey = 0x80000000;
		f->imm = op == TCP_OP_UD_SEND_IMM ? 1 : 0;
		f->length = TCP_FRAME_MAX_UD;
		break;
	default:
		break;
	}
	f->hlen = (uint16_t)tcp_frame_hlen(op);
}

Test(tcp_frame, every_opcode_round_trips)
{
	uint8_t buf[TCP_FRAME_HDR_MAX];
	struct tcp_frame f, g;
	unsigned int i, n;

	for (i = 0; i < sizeof(all_ops); i++) {
		sample(all_ops[i], &f);
		n = tcp_frame_encode(&f, buf);
		cr_assert_eq(n, f.hlen, "%s: %u header bytes, want %u",
			     tcp_frame_op_name(f.opcode), n, f.hlen);
		cr_assert_eq(tcp_frame_parse(buf, n, &g, NULL), (int)n, "%s",
			     tcp_frame_op_name(f.opcode));
		cr_assert(!memcmp(&f, &g, sizeof(f)), "%s changed on the way",
			  tcp_frame_op_name(f.opcode));
	}
}

Test(tcp_frame, short_headers_ask_for_more)
{
	uint8_t buf[TCP_FRAME_HDR_MAX];
	struct tcp_frame f, g;
	size_t need;
	unsigned int i, n, k;

	for (i = 0; i < sizeof(all_ops); i++) {
		sample(all_ops[i], &f);
		n = tcp_frame_encode(&f, buf);
		for (k = 0; k < n; k++) {
			need = 0;
			cr_assert_eq(tcp_frame_parse(buf, k, &g, &need), 0,
				     "%s: %u of %u bytes parsed",
				     tcp_frame_op_name(f.opcode), k, n);
			cr_assert(need > k && need <= n,
				  "%s: %u bytes in, need %zu",
				  tcp_frame_op_name(f.opcode), k, need);
		}
	}
}

/* Encodes a sample of op, lets mutate() spoil it, expects a refusal. */
static void refused(uint8_t op, void (*mutate)(uint8_t *buf), const char *what)
{
	uint8_t buf[TCP_FRAME_HDR_MAX];
	struct tcp_frame f;
	int ret;

	sample(op, &f);
	tcp_frame_encode(&f, buf);
	mutate(buf);
	ret = tcp_frame_parse(buf, sizeof(buf), &f, NULL);
	cr_assert_eq(ret, -OPENRDMA_EPROTO, "%s %s: parsed as %d",
		     tcp_frame_op_name(op), what, ret);
}

static void bad_magic(uint8_t *b)
{
	b[0] ^= 0x80;
}

static void bad_version(uint8_t *b)
{
	b[2] = 2;
}

static void bad_opcode(uint8_t *b)
{
	b[3] = 0x7f;
}

static void bad_hlen(uint8_t *b)
{
	b[7] += 8;
}

static void bad_flags(uint8_t *b)
{
	b[4] = 0x80;
}

static void big_length(uint8_t *b)
{
	b[8] = 0xff;
}

static void ack_without_flag(uint8_t *b)
{
	b[5] &= (uint8_t)~TCP_FLAG_ACK;
	b[23] |= 1;
}

static void big_qpn(uint8_t *b)
{
	b[12] = 1;
}

static void reserved_byte(uint8_t *b)
{
	/* the last byte of every extension sample here is reserved */
	b[TCP_FRAME_BASE_LEN + 7] = 1;
}

Test(tcp_frame, bad_fields_refused)
{
	unsigned int i;

	for (i = 0; i < sizeof(all_ops); i++) {
		refused(all_ops[i], bad_magic, "magic");
		refused(all_ops[i], bad_version, "version");
		refused(all_ops[i], bad_hlen, "header length");
		refused(all_ops[i], bad_flags, "flags");
		refused(all_ops[i], big_length, "length");
	}
	refused(TCP_OP_SEND, bad_opcode, "opcode");
	refused(TCP_OP_SEND, ack_without_flag, "ack field");
	refused(TCP_OP_SEND, big_qpn, "QPN");
	refused(TCP_OP_RTU, big_qpn, "QPN in a CM frame");
	refused(TCP_OP_SEND_IMM, reserved_byte, "reserved");
	refused(TCP_OP_NAK, reserved_byte, "reserved");
	refused(TCP_OP_REJECT, reserved_byte, "reserved");
}

Test(tcp_frame, field_values_checked)
{
	uint8_t buf[TCP_FRAME_HDR_MAX];
	struct tcp_frame f, g;

	/* a NAK only carries the statuses a target answers with */
	sample(TCP_OP_NAK, &f);
	f.syndrome = OPENRDMA_WC_SUCCESS;
	tcp_frame_encode(&f, buf);
	cr_assert_eq(tcp_frame_parse(buf, sizeof(buf), &g, NULL),
		     -OPENRDMA_EPROTO);
	f.syndrome = TCP_NAK_RNR;
	f.rnr_timer = 32;
	tcp_frame_encode(&f, buf);
	cr_assert_eq(tcp_frame_parse(buf, sizeof(buf), &g, NULL),
		     -OPENRDMA_EPROTO);
	/* retry counts are 3 bits */
	sample(TCP_OP_CONNECT, &f);
	f.rnr_retry_count = 8;
	tcp_frame_encode(&f, buf);
	cr_assert_eq(tcp_frame_parse(buf, sizeof(buf), &g, NULL),
		     -OPENRDMA_EPROTO);
	/* private data beyond what the message carries */
	sample(TCP_OP_ACCEPT, &f);
	f.length = TCP_FRAME_PDATA_ACCEPT + 1;
	tcp_frame_encode(&f, buf);
	cr_assert_eq(tcp_frame_parse(buf, sizeof(buf), &g, NULL),
		     -OPENRDMA_EPROTO);
	/* a read longer than any message */
	sample(TCP_OP_READ, &f);
	f.rlen = TCP_FRAME_MAX_MSG + 1;
	tcp_frame_encode(&f, buf);
	cr_assert_eq(tcp_frame_parse(buf, sizeof(buf), &g, NULL),
		     -OPENRDMA_EPROTO);
	/* a reject reason is a negative code */
	sample(TCP_OP_REJECT, &f);
	f.reason = 5;
	tcp_frame_encode(&f, buf);
	cr_assert_eq(tcp_frame_parse(buf, sizeof(buf), &g, NULL),
		     -OPENRDMA_EPROTO);
	/* a HELLO names a port */
	sample(TCP_OP_HELLO, &f);
	f.port = 0;
	tcp_frame_encode(&f, buf);
	cr_assert_eq(tcp_frame_parse(buf, sizeof(buf), &g, NULL),
		     -OPENRDMA_EPROTO);
	/* reads and atomics carry no payload */
	sample(TCP_OP_CMP_SWAP, &f);
	f.length = 1;
	tcp_frame_encode(&f, buf);
	cr_assert_eq(tcp_frame_parse(buf, sizeof(buf), &g, NULL),
		     -OPENRDMA_EPROTO);
}

/* Parses a stream of frames; returns 1 if all parse, 0 if one is
 * incomplete, -1 if one is refused. */
static int parse_stream(const uint8_t *buf, size_t len)
{
	struct tcp_frame f;
	size_t off = 0;
	int n;

	while (off < len) {
		n = tcp_frame_parse(buf + off, len - off, &f, NULL);
		if (n <= 0)
			return n < 0 ? -1 : 0;
		off += (size_t)n;
		if (f.length > len - off)
			return 0;
		off += f.length;
	}
	return 1;
}

Test(tcp_frame, fuzz_corpus)
{
	char path[4096];
	uint8_t buf[8192];
	struct dirent *de;
	unsigned int files = 0;
	size_t len;
	FILE *fp;
	DIR *dir;
	int ret;

	dir = opendir(TCP_CORPUS_DIR);
	cr_assert_not_null(dir, "%s: cannot open the corpus", TCP_CORPUS_DIR);
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", TCP_CORPUS_DIR,
			 de->d_name);
		fp = fopen(path, "rb");
		cr_assert_not_null(fp, "%s", path);
		len = fread(buf, 1, sizeof(buf), fp);
		fclose(fp);
		ret = parse_stream(buf, len);
		if (!strncmp(de->d_name, "bad-", 4))
			cr_assert_leq(ret, 0, "%s parsed", de->d_name);
		else
			cr_assert_eq(ret, 1, "%s: %s", de->d_name,
				     ret ? "refused" : "incomplete");
		files++;
	}
	closedir(dir);
	cr_assert_geq(files, 20, "only %u corpus files", files);
}
