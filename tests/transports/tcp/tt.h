/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Helpers of the tcp transport's white-box tests: a "side" is one context
 * on a tcp interface with a PD, a CQ, a CM channel and a buffer; helpers
 * wait, with a deadline, for completions and events, and speak the wire
 * through a raw socket.
 */
#ifndef TESTS_TRANSPORTS_TCP_TT_H
#define TESTS_TRANSPORTS_TCP_TT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <openrdma/verbs.h>

#include "transports/tcp/tcp_frame.h"

#define TT_TIMEOUT_MS 5000
/* Every access but zero-based addressing. */
#define TT_ACCESS                                                     \
	(OPENRDMA_ACCESS_LOCAL_WRITE | OPENRDMA_ACCESS_REMOTE_WRITE | \
	 OPENRDMA_ACCESS_REMOTE_READ | OPENRDMA_ACCESS_REMOTE_ATOMIC)

struct tt_side {
	struct openrdma_context *ctx;
	struct openrdma_pd *pd;
	struct openrdma_cq *cq;
	/* the CQ's completion channel, if a test gave it one */
	struct openrdma_comp_channel *cc;
	struct openrdma_cm_channel *ch;
	struct openrdma_port_attr port;
	uint8_t *buf;
	size_t len;
	struct openrdma_mr *mr;
	struct openrdma_qp *qp;
	struct openrdma_cm_id *listen_id;
	struct openrdma_cm_id *id;
};

/* What the tests' CM connects and accepts with: IRD and ORD 4, retries 7. */
extern const struct openrdma_conn_param tt_conn_param;

uint64_t tt_now_ms(void);
/* Opens ifname (skips the test if it does not exist) with a buffer of len
 * bytes, filled with byte fill and registered with access. */
void tt_open(struct tt_side *s, const char *ifname, size_t len, int access,
	     uint8_t fill);
void tt_close(struct tt_side *s);
/* An RC QP on the side's CQ. */
struct openrdma_qp *tt_qp(struct tt_side *s, enum openrdma_qp_type type);
/* Moves qp to INIT with every remote access allowed. */
void tt_qp_init(struct openrdma_qp *qp);
/* Connects client to server through the CM (server listens on addr). */
void tt_cm_connect(struct tt_side *server, struct tt_side *client,
		   const struct sockaddr *addr);
/* The next CM event of type within timeout_ms (asserts); caller acks. */
struct openrdma_cm_event *tt_cm_expect(struct tt_side *s,
				       enum openrdma_cm_event_type type,
				       int timeout_ms);
/* True if no CM event arrives within ms. */
bool tt_cm_quiet(struct tt_side *s, int ms);
/* Polls n completions within timeout_ms; returns how many came. */
int tt_poll(struct tt_side *s, int n, struct openrdma_wc *wc, int timeout_ms);
/* The next async event within timeout_ms: 0, or -EAGAIN. */
int tt_async(struct tt_side *s, struct openrdma_async_event *ev,
	     int timeout_ms);
enum openrdma_qp_state tt_qp_state(struct openrdma_qp *qp);
void tt_post_recv(struct tt_side *s, uint64_t wr_id, size_t off, uint32_t len);
void tt_post(struct tt_side *s, enum openrdma_wr_opcode op, uint64_t wr_id,
	     size_t off, uint32_t len, uint64_t raddr, uint32_t rkey);

/*
 * Makes poller's connection its busy poller's: writer posts unsignaled
 * 64-byte RDMA writes to raddr/rkey over that connection (none completes
 * at poller) while poller polls its CQ without a pause, until the
 * progress thread has handed the connection over and stopped watching it.
 */
void tt_hand_to_poller(struct tt_side *poller, struct tt_side *writer,
		       uint64_t raddr, uint32_t rkey);

/* The side's port address with port 0: where a CM listener goes. */
void tt_listen_addr(const struct tt_side *s, struct sockaddr_storage *ss);
/* What a raw peer that connects by hand claims to be: its QP number, and
 * its port (the side's address with this port number). */
#define TT_PEER_QPN 0x4242
#define TT_PEER_PORT 1
/*
 * A new RC QP of s (s->qp) in RTR towards a raw peer (TT_PEER_QPN), and
 * the raw peer's connection to s's port, past the HELLO handshake: the
 * raw peer speaks for a QP connected by hand.  Returns its socket.
 */
int tt_raw_target(struct tt_side *s);
/*
 * A new RC QP of s (s->qp) in RTS towards a raw listener (TT_PEER_QPN),
 * which accepts its connection and answers its HELLO: the raw peer
 * speaks for the target of s's requests.  Returns the raw peer's socket.
 * The QP allows one read or atomic in flight.
 */
int tt_raw_initiator(struct tt_side *s);
/* A raw TCP connection to addr (blocking, with a receive timeout). */
int tt_raw_connect(const struct sockaddr_storage *addr);
/* Writes len bytes, or as many as the transport takes before it hangs up. */
void tt_raw_send(int fd, const void *buf, size_t len);
/* Writes a frame header f and its payload. */
void tt_raw_frame(int fd, const struct tcp_frame *f, const void *payload);
/* Reads the next frame header (and skips its payload); -1 if the
 * connection ended or nothing came within timeout_ms. */
int tt_raw_read(int fd, struct tcp_frame *f, int timeout_ms);
/* True if the peer closed the connection (EOF or reset) within ms. */
bool tt_raw_closed(int fd, int ms);

#endif /* TESTS_TRANSPORTS_TCP_TT_H */
