/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Helpers of the verbs transport's device tests: one interface, named by
 * OPENRDMA_TEST_INTERFACE (else the first verbs interface), two contexts
 * on it connected through the CM, and bounded waits.
 */
#ifndef VT_H
#define VT_H

#include <stdbool.h>
#include <stdint.h>

#include <criterion/criterion.h>

#include <openrdma/verbs.h>

#define VT_TIMEOUT_MS 10000
#define VT_TEST(suite, name) Test(suite, name, .timeout = 120)

#define VT_OK(expr)                                                \
	do {                                                       \
		int vt_ret_ = (expr);                              \
		cr_assert_eq(vt_ret_, 0, "%s: %s (%d)", #expr,     \
			     openrdma_strerror(vt_ret_), vt_ret_); \
	} while (0)

struct vt_side {
	struct openrdma_context *ctx;
	struct openrdma_device_attr attr;
	struct openrdma_port_attr port;
	struct openrdma_pd *pd;
	struct openrdma_comp_channel *comp; /* rcq's, non-blocking */
	struct openrdma_cq *scq;
	struct openrdma_cq *rcq;
	struct openrdma_qp *qp;
	struct openrdma_cm_channel *ch;
	struct openrdma_cm_id *listen;
	struct openrdma_cm_id *id;
};

struct vt_buf {
	uint8_t *buf;
	size_t len;
	struct openrdma_mr *mr;
};

/* The interface under test; skips the test if there is none. */
const char *vt_ifname(void);
/* Opens a context, PD, CQs and CM channel on the interface. */
void vt_side_open(struct vt_side *s);
/* An RC (or UD) QP on the side's CQs, in RESET. */
void vt_qp_create(struct vt_side *s, enum openrdma_qp_type type,
		  uint32_t max_send_wr, struct openrdma_srq *srq);
void vt_side_close(struct vt_side *s);
void vt_require_cap(const struct vt_side *s, uint32_t cap, const char *what);

/* b listens, a connects, b accepts; both see ESTABLISHED. */
void vt_connect(struct vt_side *a, struct vt_side *b);
/* The next CM event of s, within the timeout, of type want. */
struct openrdma_cm_event *vt_cm_expect(struct vt_side *s,
				       enum openrdma_cm_event_type want);
int vt_cm_next(struct vt_side *s, int timeout_ms,
	       struct openrdma_cm_event **ev_out);

void vt_buf_new(struct vt_side *s, struct vt_buf *b, size_t len, int access,
		uint8_t fill);
void vt_buf_free(struct vt_buf *b);

void vt_post_recv(struct openrdma_qp *qp, uint64_t wr_id,
		  const struct vt_buf *b, size_t off, uint32_t len);
void vt_post_send(struct openrdma_qp *qp, struct openrdma_send_wr *wr);
/* Polls n completions within the timeout; asserts each succeeded. */
void vt_poll_ok(struct openrdma_cq *cq, int n, struct openrdma_wc *wc);
int vt_poll(struct openrdma_cq *cq, int n, struct openrdma_wc *wc,
	    int timeout_ms);
/* The next async event of s, within the timeout. */
int vt_async_next(struct vt_side *s, int timeout_ms,
		  struct openrdma_async_event *ev);

#endif /* VT_H */
