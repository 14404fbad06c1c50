/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Bounded waits and message I/O shared by the test side and the peer
 * agent.  They never assert (the agent may run outside a test's thread):
 * they return 0, a count, or a negative OPENRDMA_E* code.
 */
#ifndef CONF_SYS_H
#define CONF_SYS_H

#include <stdint.h>

#include <openrdma/verbs.h>

struct conf_msg;

int64_t conf_now_ms(void);
/* Makes a channel's fd non-blocking, so that its get returns -EAGAIN. */
int conf_set_nonblock(int fd);
/* Waits until fd is readable; 0, or -EAGAIN after timeout_ms. */
int conf_wait_fd(int fd, int timeout_ms);
/*
 * Polls cq until n completions arrived or timeout_ms passed.  Returns the
 * count, or the poll error if it failed before any completion.
 */
int conf_cq_collect(struct openrdma_cq *cq, int n, struct openrdma_wc *wc,
		    int timeout_ms);
/* The next async event of ctx within timeout_ms (the caller acks it). */
int conf_async_wait(struct openrdma_context *ctx, int timeout_ms,
		    struct openrdma_async_event *ev);
/* The next event of a non-blocking CM channel (the caller acks it). */
int conf_cm_wait(struct openrdma_cm_channel *ch, int timeout_ms,
		 struct openrdma_cm_event **ev);

/* Whole messages over a stream socket; timeout_ms -1 waits forever. */
int conf_msg_send(int fd, const struct conf_msg *msg);
int conf_msg_recv(int fd, struct conf_msg *msg, int timeout_ms);

#endif /* CONF_SYS_H */
