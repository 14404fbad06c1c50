/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The event engine: event dispatchers (EVDs) that the IT-API and DAT front
 * ends are thin layers over.  openrdma_evd(7) is the normative description
 * of the model and of its guarantees; this header is its interface.
 *
 * An EVD is a ring of fixed-size opaque records (the front end stores an
 * it_event_t or a DAT_EVENT in each).  A simple EVD (SEVD) accepts the
 * streams named at creation; an aggregate EVD (AEVD) holds no records and
 * tells which of its member SEVDs have events.  Records come from software
 * posts and from sources bound to the EVD: CQs, CM channels and contexts'
 * async events, each with a converter supplied by the front end.
 *
 * Functions return 0 (or a count) on success and a negative OPENRDMA_E*
 * code on failure; outputs are written only on success.
 *
 * The functions marked OPENRDMA_EXPORT are what the DAT provider library
 * (api/dat/) uses: libopenrdma exports them in OPENRDMA_PRIVATE_2 so that
 * the provider shares this engine instead of carrying a copy.
 */
#ifndef CORE_EVD_EVD_H
#define CORE_EVD_EVD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openrdma/verbs.h>

#include "core/export.h"

struct core_evd;
struct core_disp_watch;

/* Streams: an SEVD takes one or more; an AEVD is CORE_EVD_STREAM_AEVD alone. */
enum core_evd_stream {
	CORE_EVD_STREAM_DTO = 1 << 0, /* completions of bound CQs */
	CORE_EVD_STREAM_CM_REQ = 1 << 1, /* connection requests */
	CORE_EVD_STREAM_CM_MSG = 1 << 2, /* other connection events */
	CORE_EVD_STREAM_ASYNC_AFF = 1 << 3, /* QP, CQ, SRQ, EVD errors */
	CORE_EVD_STREAM_ASYNC_UNAFF = 1 << 4, /* port and device events */
	CORE_EVD_STREAM_SOFTWARE = 1 << 5, /* core_evd_post_se() */
	CORE_EVD_STREAM_AEVD = 1 << 6,
};

#define CORE_EVD_STREAMS_SEVD                                 \
	(CORE_EVD_STREAM_DTO | CORE_EVD_STREAM_CM_REQ |       \
	 CORE_EVD_STREAM_CM_MSG | CORE_EVD_STREAM_ASYNC_AFF | \
	 CORE_EVD_STREAM_ASYNC_UNAFF | CORE_EVD_STREAM_SOFTWARE)

/*
 * What happens when a source event finds the ring full (software posts
 * fail with -OPENRDMA_ENOSPC instead).  In every mode the event is dropped
 * and counted in core_evd_info.lost.
 *  DEFAULT: the EVD becomes overflowed and the overflow is reported once;
 *    later source events are dropped; dequeue and wait return the events
 *    queued before the overflow, then -OPENRDMA_EOVERFLOW until
 *    CORE_EVD_MOD_OVERFLOW_RESET.
 *  NOTIFY: reported once per episode (an episode ends when a dequeue makes
 *    room); the EVD keeps working.
 *  AUTO_RESET: nothing is reported; the EVD keeps working.
 */
enum core_evd_overflow {
	CORE_EVD_OVERFLOW_DEFAULT = 0,
	CORE_EVD_OVERFLOW_NOTIFY,
	CORE_EVD_OVERFLOW_AUTO_RESET,
};

/* core_evd_attr.flags */
enum {
	/* an eventfd readable exactly while the EVD has something to take */
	CORE_EVD_FD = 1 << 0,
};

/* Converter results besides 0 (queue the record). */
#define CORE_EVD_SKIP 1

/*
 * Converters fill rec (rec_size bytes) from a source's event and must not
 * call the engine.  Return 0 to queue rec, CORE_EVD_SKIP to drop it.  The
 * CQ converter runs under the EVD's lock, on the dispatcher thread or in
 * the thread that dequeues or waits; the CM and async converters run on
 * the dispatcher thread.  A CQ converter writes rec only when it returns
 * 0: a dequeue or wait that finds nothing queued converts the next
 * completion straight into its caller's record (openrdma_evd(7), "Direct
 * pull"), which a failed call must leave as it was.
 */
typedef int (*core_evd_wc_fn)(void *arg, const struct openrdma_wc *wc,
			      void *rec);
/* *dst is preset to the bound EVD; set it to route the event elsewhere
 * (an EVD with a CM stream and the same rec_size that the front end keeps
 * alive while the event's id lives: the event is acknowledged after its
 * delivery, so destroying the id waits for it). */
typedef int (*core_evd_cm_fn)(void *arg, const struct openrdma_cm_event *ev,
			      void *rec, struct core_evd **dst);
/* cq_evd: for an event about a CQ, the EVD that CQ is bound to, or NULL. */
typedef int (*core_evd_async_fn)(void *arg,
				 const struct openrdma_async_event *ev,
				 struct core_evd *cq_evd, void *rec);
/* Application code: runs on a worker of the callback pool, no lock held. */
typedef void (*core_evd_cb_fn)(struct core_evd *evd, void *arg);
/*
 * Reports an overflow (DEFAULT and NOTIFY modes), with no engine lock
 * held, in the thread whose event was dropped.  It may post events (the
 * front end posts its "EVD overflow" async event); it must not free EVDs
 * or bind sources.
 */
typedef void (*core_evd_overflow_fn)(struct core_evd *evd, void *arg);

struct core_evd_attr {
	uint32_t streams; /* enum core_evd_stream */
	uint32_t flags; /* CORE_EVD_FD */
	enum core_evd_overflow overflow;
	size_t rec_size; /* 1..CORE_EVD_REC_MAX; SEVD only */
	size_t capacity; /* records; SEVD only */
	size_t threshold; /* default for waits; 0 or 1: one event */
	core_evd_overflow_fn overflow_fn; /* NULL: log a warning */
	void *overflow_arg;
	void *context; /* the front end's, never touched */
};

#define CORE_EVD_REC_MAX 4096
#define CORE_EVD_CAPACITY_MAX (1u << 24)
#define CORE_EVD_INFINITE UINT64_MAX

OPENRDMA_EXPORT int core_evd_create(const struct core_evd_attr *attr,
				    struct core_evd **evd_out);
/*
 * Detaches the callback (waiting for a running one unless called from
 * it), leaves the AEVD, unbinds every source, wakes and waits out a
 * blocked waiter (its wait returns -OPENRDMA_ECANCELED), then frees.
 * -OPENRDMA_EBUSY: an AEVD that still has members.
 */
OPENRDMA_EXPORT int core_evd_free(struct core_evd *evd);
OPENRDMA_EXPORT void *core_evd_context(const struct core_evd *evd);

/* ---------------------------------------------------------------- events */

/* A software event: -OPENRDMA_ENOSPC when full (never an overflow). */
OPENRDMA_EXPORT int core_evd_post_se(struct core_evd *evd, const void *rec);
/*
 * An event from a source the front end drives itself: subject to the
 * overflow mode; -OPENRDMA_EOVERFLOW when the event was dropped.
 */
OPENRDMA_EXPORT int core_evd_enqueue(struct core_evd *evd, const void *rec);
/*
 * Takes the oldest record.  -OPENRDMA_EAGAIN: nothing queued;
 * -OPENRDMA_EOVERFLOW: nothing queued and overflowed (DEFAULT mode).  On
 * an AEVD it takes the oldest record of the next member that has one,
 * round robin.
 */
OPENRDMA_EXPORT int core_evd_dequeue(struct core_evd *evd, void *rec);
/* Takes up to max records into recs[]; returns how many (>= 1) or as
 * core_evd_dequeue.  SEVD only. */
int core_evd_dequeue_n(struct core_evd *evd, void *recs, int max);
/*
 * Blocks until at least threshold records are queued (0: the EVD's
 * threshold; an AEVD: one member with records), then takes one; *nmore_out
 * (may be NULL) is the number left (an AEVD: members with records).
 * Spins up to evd_spin_us first, then sleeps.  timeout_us CORE_EVD_INFINITE
 * never expires.  Errors: -OPENRDMA_ETIMEDOUT, -OPENRDMA_EOVERFLOW,
 * -OPENRDMA_EBUSY (another thread waits), -OPENRDMA_ESTATE (unwaitable),
 * -OPENRDMA_ECANCELED (freed), -OPENRDMA_EINVAL (threshold > capacity).
 */
OPENRDMA_EXPORT int core_evd_wait(struct core_evd *evd, uint64_t timeout_us,
				  size_t threshold, void *rec,
				  size_t *nmore_out);

/* ---------------------------------------------------------------- AEVD */

/*
 * Notifications: the next member SEVD that has records (round robin); the
 * record stays in the SEVD.  A member is listed exactly while it is
 * enabled and has records.  -OPENRDMA_EAGAIN: none.
 */
OPENRDMA_EXPORT int core_evd_notify_dequeue(struct core_evd *aevd,
					    struct core_evd **sevd_out);
OPENRDMA_EXPORT int core_evd_notify_wait(struct core_evd *aevd,
					 uint64_t timeout_us,
					 struct core_evd **sevd_out);

/* ---------------------------------------------------------------- control */

enum core_evd_mod_mask {
	CORE_EVD_MOD_CAPACITY = 1 << 0, /* resize; -EBUSY below the count */
	CORE_EVD_MOD_THRESHOLD = 1 << 1,
	CORE_EVD_MOD_OVERFLOW = 1 << 2, /* the mode */
	CORE_EVD_MOD_ENABLED = 1 << 3,
	CORE_EVD_MOD_WAITABLE = 1 << 4,
	CORE_EVD_MOD_AEVD = 1 << 5, /* join (or leave, NULL) an AEVD */
	CORE_EVD_MOD_OVERFLOW_RESET = 1 << 6, /* leave the overflowed state */
};

struct core_evd_mod {
	size_t capacity;
	size_t threshold;
	enum core_evd_overflow overflow;
	bool enabled; /* disabled: no AEVD notice, no callback */
	bool waitable; /* unwaitable: waits fail with -OPENRDMA_ESTATE */
	struct core_evd *aevd;
};

/* Applies every change in mask, or none. */
OPENRDMA_EXPORT int core_evd_modify(struct core_evd *evd, uint32_t mask,
				    const struct core_evd_mod *mod);

struct core_evd_info {
	uint32_t streams;
	uint32_t flags;
	enum core_evd_overflow overflow;
	size_t rec_size;
	size_t capacity;
	size_t threshold;
	size_t count; /* records queued (an AEVD: members with records) */
	uint64_t lost; /* source events dropped by overflows */
	int fd; /* CORE_EVD_FD, else -1 */
	bool enabled;
	bool waitable;
	bool overflowed;
	bool callback;
	struct core_evd *aevd;
	unsigned int members; /* an AEVD's */
	unsigned int sources; /* bound CQs, CM channels, contexts */
	void *context;
};

OPENRDMA_EXPORT int core_evd_query(struct core_evd *evd,
				   struct core_evd_info *info);

/* ---------------------------------------------------------------- callbacks */

/* core_evd_callback_attach() flags */
enum {
	/* run once, then wait for core_evd_callback_arm() */
	CORE_EVD_CB_ONESHOT = 1 << 0,
};

/*
 * Runs fn on the callback pool while the EVD is enabled and has records
 * (ONESHOT: once per arm).  -OPENRDMA_EEXIST: a callback is attached.
 */
OPENRDMA_EXPORT int core_evd_callback_attach(struct core_evd *evd,
					     core_evd_cb_fn fn, void *arg,
					     unsigned int flags);
/*
 * Returns once no invocation of the callback runs any more, except when
 * called from that callback.  -OPENRDMA_ENOENT: none attached.
 */
OPENRDMA_EXPORT int core_evd_callback_detach(struct core_evd *evd);
/* Re-arms a ONESHOT callback. */
OPENRDMA_EXPORT int core_evd_callback_arm(struct core_evd *evd);

/* ---------------------------------------------------------------- sources */

/*
 * Feeds the completions of cq (which needs a completion channel) into a
 * DTO EVD.  All CQs of one EVD share one channel, which serves no other
 * EVD (-OPENRDMA_EBUSY).  The channel's fd is made non-blocking.
 */
OPENRDMA_EXPORT int core_evd_cq_bind(struct core_evd *evd,
				     struct openrdma_cq *cq,
				     core_evd_wc_fn convert, void *arg);
OPENRDMA_EXPORT int core_evd_cq_unbind(struct core_evd *evd,
				       struct openrdma_cq *cq);
/*
 * Runs fn(arg) under the EVD's lock, which every run of its CQ
 * converters holds: a front end changes what they read (its tables of
 * endpoints) there, and the converters need no lock of their own.  fn
 * must not call the engine.
 */
void core_evd_locked(struct core_evd *evd, void (*fn)(void *arg), void *arg);
/* Feeds the events of a CM channel (its fd is made non-blocking). */
OPENRDMA_EXPORT int core_evd_cm_bind(struct core_evd *evd,
				     struct openrdma_cm_channel *ch,
				     core_evd_cm_fn convert, void *arg);
OPENRDMA_EXPORT int core_evd_cm_unbind(struct core_evd *evd,
				       struct openrdma_cm_channel *ch);
/*
 * Feeds ctx's async events of the given streams (ASYNC_AFF and/or
 * ASYNC_UNAFF, which the EVD must have) into evd.  An event goes to every
 * EVD bound for its stream.
 */
OPENRDMA_EXPORT int core_evd_async_bind(struct core_evd *evd,
					struct openrdma_context *ctx,
					uint32_t streams,
					core_evd_async_fn convert, void *arg);
OPENRDMA_EXPORT int core_evd_async_unbind(struct core_evd *evd,
					  struct openrdma_context *ctx);
/* CORE_EVD_STREAM_ASYNC_AFF or _UNAFF: the stream of an async event. */
uint32_t core_evd_async_stream(enum openrdma_event_type type);

/* ---------------------------------------------------------------- dispatcher */

/*
 * Has the process's dispatcher thread call fn(arg) whenever fd is
 * readable (level-triggered), for transports and front ends that bring
 * their own notification fd.  fn must not block.
 */
OPENRDMA_EXPORT int core_disp_watch(int fd, void (*fn)(void *arg), void *arg,
				    struct core_disp_watch **watch_out);
/* Returns once fn no longer runs (unless called from fn itself). */
OPENRDMA_EXPORT void core_disp_unwatch(struct core_disp_watch *watch);

/* Engine threads alive now (dispatcher and callback pool). */
int core_evd_engine_threads(void);
/*
 * Joins the engine threads that stopped themselves (reap.c); does nothing
 * in an engine thread.  The caller holds no lock of the library's.
 * Returns how many it joined.
 */
unsigned int core_evd_reap(void);

#endif /* CORE_EVD_EVD_H */
