/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * A connected pair for the shm tests: this process is the passive side
 * (A), a forked child the active one (B).  The child cannot use
 * Criterion's asserts: it reports by its exit status, which the parent
 * checks.
 */
#ifndef SHM_TEST_H
#define SHM_TEST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <openrdma/verbs.h>

/* Each side's registered buffer: [0, 1 MiB) RDMA target, [1, 2 MiB) RDMA
 * read source, [2 MiB, + ST_MSG) a receive, [3 MiB, + 64) a receive. */
#define ST_BUF (4u << 20)
#define ST_OFF_READ (1u << 20)
#define ST_OFF_MSG (2u << 20)
#define ST_OFF_DONE (3u << 20)
#define ST_MSG (256u << 10) /* a send past shm.eager_max */
#define ST_RDMA (1u << 20)
#define ST_TIMEOUT_MS 10000

/* Where a side's buffer is, carried in the CM private data. */
struct st_info {
	uint64_t addr;
	uint32_t rkey;
	uint32_t pad;
};

struct st_side {
	struct openrdma_context *ctx;
	struct openrdma_pd *pd;
	struct openrdma_comp_channel *comp;
	struct openrdma_cq *cq;
	struct openrdma_qp *qp;
	struct openrdma_cm_channel *ch;
	struct openrdma_cm_id *listen_id;
	struct openrdma_cm_id *id;
	struct openrdma_mr *mr;
	uint8_t *buf;
	struct st_info remote;
};

/* Child exit statuses besides 0: which step failed. */
enum {
	ST_EXIT_OPEN = 10,
	ST_EXIT_CONNECT,
	ST_EXIT_RECV,
	ST_EXIT_DATA,
	ST_EXIT_CMA,
	ST_EXIT_REFUSED,
	ST_EXIT_SETUP,
};

uint8_t st_pattern(unsigned int seed, size_t i);
void st_fill(uint8_t *p, size_t len, unsigned int seed);
bool st_check(const uint8_t *p, size_t len, unsigned int seed);

/* Both sides: 0 or a negative code (the child has no asserts).  With
 * channel, the CQ reports to a completion channel. */
int st_open(struct st_side *s, bool channel);
/* A new RC QP on s's CQ, in INIT, as s->qp. */
int st_qp_new(struct st_side *s);
void st_close(struct st_side *s);
int st_post_recv(struct st_side *s, uint64_t wr_id, size_t off, uint32_t len);
int st_post(struct st_side *s, enum openrdma_wr_opcode op, uint64_t wr_id,
	    size_t off, uint32_t len, uint64_t remote_off);
/* Waits for one completion; its status, or a negative code. */
int st_poll(struct st_side *s, struct openrdma_wc *wc, int timeout_ms);
/* The next CM event of the given type (acked), or a negative code. */
int st_cm_wait(struct st_side *s, enum openrdma_cm_event_type type,
	       struct openrdma_cm_event *copy, int timeout_ms);

/* A: listens on an ephemeral port of 127.0.0.1; returns it. */
uint16_t st_listen(struct st_side *s);
/* A: takes the request and accepts it (asserts). */
void st_accept(struct st_side *s);
/* B: connects to port; 0 once ESTABLISHED, else the event's status. */
int st_connect(struct st_side *s, uint16_t port);

/*
 * Starts fn(arg) in a child, before this process opens anything (with
 * threads running, a fork is not safe under ThreadSanitizer).  The child
 * waits for the port to connect to, then says when it is ready.
 */
struct st_child {
	pid_t pid;
	int ready_fd; /* parent: read end */
	int go_fd; /* parent: write end */
};
void st_child_start(struct st_child *c,
		    int (*fn)(void *arg, uint16_t port, int ready_fd),
		    void *arg);
/* Parent: gives the child the port (asserts). */
void st_child_go(struct st_child *c, uint16_t port);
/* Parent: waits for the child's ready byte (asserts) and returns it. */
char st_child_ready(struct st_child *c);
/* Parent: the child's exit status (asserts it exited). */
int st_child_wait(struct st_child *c);

#endif /* SHM_TEST_H */
