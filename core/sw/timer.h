/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Deferred calls for a software device: one thread per timer, started on
 * first use, that runs each armed entry once its deadline has passed (RNR
 * retries).  Entries run without the timer's lock held, so they may re-arm
 * themselves or each other; sw_timer_cancel() waits for a running entry to
 * return and disarms what it re-armed, and sw_timer_cancel_set() does so
 * for entries that arm each other (a QP's RNR retry and its lost-request
 * check).
 */
#ifndef CORE_SW_TIMER_H
#define CORE_SW_TIMER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct sw_timer_entry {
	void (*fn)(struct sw_timer_entry *entry);
	uint64_t deadline; /* CLOCK_MONOTONIC ns */
	bool queued;
	struct sw_timer_entry *prev, *next;
};

struct sw_timer {
	pthread_mutex_t lock;
	pthread_cond_t wake; /* new earliest deadline, or stop */
	pthread_cond_t idle; /* an entry returned */
	pthread_t thread;
	bool started;
	bool stop;
	struct sw_timer_entry *list; /* by deadline */
	struct sw_timer_entry *running;
	/* the set being cancelled while one of it runs (one canceller of a
	 * running entry at a time: its object's destroy) */
	struct sw_timer_entry *const *cancel;
	int ncancel;
};

/* Now, CLOCK_MONOTONIC, in ns. */
uint64_t sw_now_ns(void);

int sw_timer_init(struct sw_timer *t);
/* Stops and joins the thread; entries still armed are dropped. */
void sw_timer_fini(struct sw_timer *t);
/* Arms (or re-arms) entry for deadline; starts the thread if needed. */
int sw_timer_add(struct sw_timer *t, struct sw_timer_entry *entry,
		 uint64_t deadline);
/* Disarms entry and waits until it is not running; an entry its running
 * call re-armed is disarmed too, so nothing runs it after the return. */
void sw_timer_cancel(struct sw_timer *t, struct sw_timer_entry *entry);
/* Disarms n entries that may arm each other, and waits until none runs:
 * whatever a running one armed of them is disarmed too.  Cancelling them
 * one by one could leave the first armed by the second's call. */
void sw_timer_cancel_set(struct sw_timer *t,
			 struct sw_timer_entry *const *entries, int n);

#endif /* CORE_SW_TIMER_H */
