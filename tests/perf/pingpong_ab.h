/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * pingpong_ab (pingpong_ab.c): the sides its loops run on.  Each side
 * connects to the server's address and port (an RC QP, or a socket),
 * sends and receives size-byte messages, the client first; a receive is
 * posted again as soon as one completes.  Functions return 0 or -1, with
 * the reason printed.
 */
#ifndef TESTS_PERF_PINGPONG_AB_H
#define TESTS_PERF_PINGPONG_AB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <openrdma/verbs.h>

#include "examples/itapi_common.h"

/* queue depths of every side */
#define AB_DEPTH 32
/* how long a wait for a completion or an event may last: itx_wait's */
#define AB_TIMEOUT_US 20000000u

/* The server's address at port, for a client. */
int ab_addr(const char *host, unsigned int port, struct sockaddr_storage *ss);
/*
 * For a poll that found nothing: true once AB_TIMEOUT_US have gone by
 * since the first (a peer that died sends nothing more).  The clock is
 * read once in 65536 calls.
 */
bool ab_poll_expired(unsigned int *empty, double *deadline);

/*
 * The baseline (a file of each build's own): two loops outside OpenRDMA
 * on one connection of their own, which the core and IT-API loops are
 * measured against.  The verbs build's (pingpong_ab_raw.c) runs
 * perftest's loop and a lean one on libibverbs, the tcp build's
 * (pingpong_ab_sock.c) a ping-pong on a bare socket and one of a minimal
 * framed protocol on it.
 */
struct ab_base;

struct ab_base_info {
	const char *name[2];
	/* the loop waits for every send's completion (perftest's) */
	bool signal_all[2];
};

extern const struct ab_base_info ab_base_info;

int ab_base_open(struct ab_base **out, size_t size);
int ab_base_listen(struct ab_base *b, unsigned int port);
int ab_base_accept(struct ab_base *b);
int ab_base_connect(struct ab_base *b, const char *host, unsigned int port);
/* The client ends the connection, the server waits for it. */
int ab_base_disconnect(struct ab_base *b, bool server);
void ab_base_close(struct ab_base *b);
/* Where loop's messages go from and come to (both loops share them). */
unsigned char *ab_base_sbuf(struct ab_base *b);
const unsigned char *ab_base_rbuf(struct ab_base *b);
/* Loop l (0 or 1) sends the message; signaled: waits for its completion,
 * where the loop has completions. */
int ab_base_send(struct ab_base *b, int l, bool signaled);
/* Loop l waits for a message (and makes ready for the next). */
int ab_base_recv(struct ab_base *b, int l);

/* pingpong_ab_core.c: OpenRDMA's verbs interface, as openrdma-perf uses. */
struct core_side {
	struct openrdma_context *ctx;
	struct openrdma_port_attr port;
	struct openrdma_pd *pd;
	struct openrdma_cq *scq, *rcq;
	struct openrdma_qp *qp;
	struct openrdma_mr *smr, *rmr;
	struct openrdma_cm_channel *ch;
	struct openrdma_cm_id *listen, *id;
	unsigned char *sbuf, *rbuf;
	size_t size;
	uint32_t inline_max;
};

int core_side_open(struct core_side *c, const char *dev, size_t size);
int core_side_listen(struct core_side *c, unsigned int port);
int core_side_accept(struct core_side *c);
int core_side_connect(struct core_side *c, const char *host, unsigned int port);
int core_side_disconnect(struct core_side *c, bool server);
void core_side_close(struct core_side *c);
/* Inline where it fits; a signaled send waits for its completion. */
int core_side_send(struct core_side *c, bool signaled);
int core_side_recv(struct core_side *c);

#endif /* TESTS_PERF_PINGPONG_AB_H */
