/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * pingpong_ab (pingpong_ab.c): the sides its loops run on.  Each side
 * connects one RC QP to the server's address and port, sends and
 * receives size-byte messages, the client first; a receive is posted
 * again as soon as one completes.  Functions return 0 or -1, with the
 * reason printed.
 */
#ifndef PINGPONG_AB_H
#define PINGPONG_AB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>
#include <openrdma/verbs.h>
#include <rdma/rdma_cma.h>

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

/* pingpong_ab_raw.c: libibverbs and librdmacm, as perftest's -R uses. */
struct raw {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen, *id;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_mr *smr, *rmr;
	unsigned char *sbuf, *rbuf;
	size_t size;
	uint32_t inline_max;
};

int raw_listen(struct raw *r, unsigned int port);
int raw_accept(struct raw *r);
int raw_connect(struct raw *r, const char *host, unsigned int port);
/* The client disconnects, the server waits for it. */
int raw_disconnect(struct raw *r, bool server);
void raw_close(struct raw *r);
/* A signaled send waits for its completion; inline_ok: inline if it fits. */
int raw_send(struct raw *r, bool signaled, bool inline_ok);
int raw_recv(struct raw *r);

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

#endif /* PINGPONG_AB_H */
