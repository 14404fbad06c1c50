/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Cycle probes on the path of a small message, for finding where its time
 * goes (configure --enable-probes; without it every call below compiles to
 * nothing).  Instruction counts (callgrind) miss what a path costs in
 * stalls, and what it costs the kernel code around it; a probe reads the
 * time stamp counter at a few points of one thread's path and keeps each
 * segment's durations:
 *
 *   rx       the transport read the message  -> a poll returned a completion
 *   app      the poll returned               -> the next post
 *   tx       the post                        -> the transport's send()
 *   syscall  send() itself
 *   ret      send() returned                 -> the post returns
 *
 * A segment is counted only when its start was marked on the same thread
 * since the last end, so unrelated points do not pair up.  At exit each
 * process prints, for every segment it saw, the count, mean and p10, median
 * and p90, in counter ticks and nanoseconds (stderr, lines beginning
 * "openrdma-probe").  A probe costs about one counter read (~25 cycles on
 * x86): medians of a few segments compare two builds, or a transport with
 * a baseline that marks the same points, to tens of cycles.
 */
#ifndef CORE_PROBE_H
#define CORE_PROBE_H

#include <stdbool.h>

enum core_probe_mark {
	CORE_PROBE_RX, /* a message was read */
	CORE_PROBE_CQE, /* a poll returned a completion */
	CORE_PROBE_POST, /* a post began */
	CORE_PROBE_SEND, /* send() is called */
	CORE_PROBE_SENT, /* send() returned */
	CORE_PROBE_MARKS
};

enum core_probe_seg {
	CORE_PROBE_SEG_RX, /* RX -> CQE */
	CORE_PROBE_SEG_APP, /* CQE -> POST */
	CORE_PROBE_SEG_TX, /* POST -> SEND */
	CORE_PROBE_SEG_SYSCALL, /* SEND -> SENT */
	CORE_PROBE_SEG_RET, /* SENT -> the post returns */
	CORE_PROBE_SEGS
};

#ifdef OPENRDMA_PROBES
/* Marks m now. */
void core_probe_mark(enum core_probe_mark m);
/* Ends seg, begun at mark from (if it was marked), and clears from. */
void core_probe_end(enum core_probe_seg seg, enum core_probe_mark from);
#else
static inline void core_probe_mark(enum core_probe_mark m)
{
	(void)m;
}

static inline void core_probe_end(enum core_probe_seg seg,
				  enum core_probe_mark from)
{
	(void)seg;
	(void)from;
}
#endif

/* The points of the path, as the library and a baseline mark them. */
static inline void core_probe_polled(void)
{
	core_probe_end(CORE_PROBE_SEG_RX, CORE_PROBE_RX);
	core_probe_mark(CORE_PROBE_CQE);
}

static inline void core_probe_post(void)
{
	core_probe_end(CORE_PROBE_SEG_APP, CORE_PROBE_CQE);
	core_probe_mark(CORE_PROBE_POST);
}

static inline void core_probe_send(void)
{
	core_probe_end(CORE_PROBE_SEG_TX, CORE_PROBE_POST);
	core_probe_mark(CORE_PROBE_SEND);
}

static inline void core_probe_sent(void)
{
	core_probe_end(CORE_PROBE_SEG_SYSCALL, CORE_PROBE_SEND);
	core_probe_mark(CORE_PROBE_SENT);
}

static inline void core_probe_posted(void)
{
	core_probe_end(CORE_PROBE_SEG_RET, CORE_PROBE_SENT);
}

#endif /* CORE_PROBE_H */
