/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Stand-ins for what the toolkit reports to the core: the tests link with
 * -Wl,--wrap for openrdma_cq_notify, openrdma_async_event_post and
 * openrdma_qp_state_set, so toolkit pieces run without contexts, and the
 * tests see every notification and event.
 */
#ifndef TESTS_UNIT_TEST_SW_FAKE_H
#define TESTS_UNIT_TEST_SW_FAKE_H

#include <stdbool.h>

#include <openrdma/transport.h>

#include "core/sw/qp.h"

#define FAKE_MAX 64

struct fake_log {
	int num_notify;
	struct openrdma_cq *notify_cq[FAKE_MAX];
	bool notify_solicited[FAKE_MAX];
	int num_events;
	struct openrdma_async_event events[FAKE_MAX];
	int num_state_set;
};

extern struct fake_log fake;

/* Clears the log. */
void fake_reset(void);
/* Number of logged events of type. */
int fake_events(enum openrdma_event_type type);

/* A fake object world: a context, a PD, CQs and QPs over the toolkit. */
struct fake_qp {
	struct openrdma_qp qp;
	struct sw_qp sw;
	int executed; /* calls of the execute op */
	int next_status; /* what execute returns */
	uint8_t rnr_timer; /* the RNR NAK timer execute reports */
	uint64_t scheduled; /* last deadline given to schedule */
	struct fake_qp *peer; /* for target tests: the QP requests reach */
};

struct fake_cq {
	struct openrdma_cq cq;
	struct sw_cq sw;
};

extern struct openrdma_context fake_ctx;
extern struct openrdma_pd fake_pd;
extern const struct sw_qp_ops fake_qp_ops;

void fake_cq_init(struct fake_cq *cq, int cqe);
void fake_cq_fini(struct fake_cq *cq);
/* Creates a QP of type on keymap (NULL: no memory checks needed) with the
 * caps given, over cq for both queues, optionally on srq. */
void fake_qp_init(struct fake_qp *fq, enum openrdma_qp_type type,
		  struct sw_keymap *keymap, struct fake_cq *cq,
		  struct sw_srq *srq, uint32_t wr, uint32_t sge);
void fake_qp_fini(struct fake_qp *fq);
/* Moves a QP through INIT and RTR to state (all access flags). */
void fake_qp_to(struct fake_qp *fq, enum openrdma_qp_state state);
/* Polls one completion (asserts there is one). */
struct openrdma_wc fake_poll1(struct fake_cq *cq);
/* Asserts the CQ is empty. */
void fake_poll0(struct fake_cq *cq);

#endif /* TESTS_UNIT_TEST_SW_FAKE_H */
