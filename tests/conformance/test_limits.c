/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Device limits: each one can be reached, and one past it fails cleanly
 * with -EINVAL or -ENOMEM, leaving the output untouched.  Object counts
 * are checked up to CONF_COUNT_BOUND objects; a device may run out of
 * them earlier (-ENOMEM, -ENOSPC), but not before CONF_COUNT_MIN.
 */
#include <criterion/logging.h>

#include "conf.h"

#define CONF_COUNT_BOUND 256
/* Objects a device must create before running out below its max_*. */
#define CONF_COUNT_MIN 64
/* The largest CQ and MR actually created at their limit. */
#define CHEAP_CQE (1 << 20)
#define CHEAP_MR_SIZE (1ull << 30)

static void *const sentinel = (void *)(uintptr_t)0x5e5e5e5e;

/* ret must be a clean refusal and out must not have been written. */
static void refused(int ret, const void *out, const char *what)
{
	cr_assert(ret == -OPENRDMA_EINVAL || ret == -OPENRDMA_ENOMEM,
		  "%s: got %s (%d), want EINVAL or ENOMEM", what,
		  openrdma_strerror(ret), ret);
	cr_assert_eq(out, sentinel, "%s: output written on failure", what);
}

static struct openrdma_qp_init_attr qp_init(struct openrdma_cq *cq)
{
	return (struct openrdma_qp_init_attr){
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 1,
			 .max_recv_wr = 1,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = OPENRDMA_QPT_RC,
	};
}

/* One QP with init->cap changed by the test: created, or refused. */
static void qp_cap(struct conf_test *t, struct openrdma_qp_init_attr *init,
		   bool ok, const char *what)
{
	struct openrdma_qp *qp = sentinel;
	int ret;

	ret = openrdma_qp_create(t->pd, init, &qp);
	if (!ok) {
		refused(ret, qp, what);
		return;
	}
	cr_assert_eq(ret, 0, "%s: %s", what, openrdma_strerror(ret));
	CONF_OK(openrdma_qp_destroy(qp));
}

CONF_TEST(limits, max_qp_wr)
{
	struct conf_test *t = conf_setup(CONF_LOCAL_ONLY);
	uint32_t max = (uint32_t)t->attr.max_qp_wr;
	struct openrdma_cq *cq = conf_cq_new(t, 1, NULL, NULL);
	struct openrdma_qp_init_attr init;

	cr_assert_gt(t->attr.max_qp_wr, 0);
	init = qp_init(cq);
	init.cap.max_send_wr = max;
	init.cap.max_recv_wr = max;
	qp_cap(t, &init, true, "max_qp_wr");
	init = qp_init(cq);
	init.cap.max_send_wr = max + 1;
	qp_cap(t, &init, false, "max_send_wr = max_qp_wr + 1");
	init = qp_init(cq);
	init.cap.max_recv_wr = max + 1;
	qp_cap(t, &init, false, "max_recv_wr = max_qp_wr + 1");
}

CONF_TEST(limits, max_sge)
{
	struct conf_test *t = conf_setup(CONF_LOCAL_ONLY);
	uint32_t max = (uint32_t)t->attr.max_sge;
	struct openrdma_cq *cq = conf_cq_new(t, 1, NULL, NULL);
	struct openrdma_qp_init_attr init;

	cr_assert_gt(t->attr.max_sge, 0);
	init = qp_init(cq);
	init.cap.max_send_sge = max;
	init.cap.max_recv_sge = max;
	qp_cap(t, &init, true, "max_sge");
	init = qp_init(cq);
	init.cap.max_send_sge = max + 1;
	qp_cap(t, &init, false, "max_send_sge = max_sge + 1");
	init = qp_init(cq);
	init.cap.max_recv_sge = max + 1;
	qp_cap(t, &init, false, "max_recv_sge = max_sge + 1");
}

CONF_TEST(limits, max_inline_data)
{
	struct conf_test *t = conf_setup(CONF_LOCAL_ONLY);
	uint32_t max = (uint32_t)t->attr.max_inline_data;
	struct openrdma_cq *cq = conf_cq_new(t, 1, NULL, NULL);
	struct openrdma_qp_init_attr init;

	init = qp_init(cq);
	init.cap.max_inline_data = max;
	qp_cap(t, &init, true, "max_inline_data");
	init = qp_init(cq);
	init.cap.max_inline_data = max + 1;
	qp_cap(t, &init, false, "max_inline_data + 1");
}

CONF_TEST(limits, max_cqe)
{
	struct conf_test *t = conf_setup(CONF_LOCAL_ONLY);
	struct openrdma_cq *cq = sentinel;
	int max = t->attr.max_cqe;

	cr_assert_gt(max, 0);
	if (max < INT32_MAX)
		refused(openrdma_cq_create(t->ctx, max + 1, NULL, NULL, 0, &cq),
			cq, "max_cqe + 1");
	refused(openrdma_cq_create(t->ctx, 0, NULL, NULL, 0, &cq), cq,
		"0 entries");
	refused(openrdma_cq_create(t->ctx, -1, NULL, NULL, 0, &cq), cq,
		"-1 entries");
	if (max > CHEAP_CQE)
		cr_skip_test("%s: max_cqe %d is too large to allocate cheaply; "
			     "the refusals above were checked",
			     t->ifname, max);
	CONF_OK(openrdma_cq_create(t->ctx, max, NULL, NULL, 0, &cq));
	cr_assert_geq(cq->cqe, max);
	CONF_OK(openrdma_cq_resize(cq, 1));
	cr_assert_geq(cq->cqe, 1);
	CONF_OK(openrdma_cq_destroy(cq));
}

CONF_TEST(limits, max_mr_size)
{
	struct conf_test *t = conf_setup(CONF_LOCAL_ONLY);
	uint64_t max = t->attr.max_mr_size;
	struct openrdma_mr *mr = sentinel;
	static uint8_t buf[64];
	struct conf_mem *m;

	cr_assert_gt(max, 0);
	if (max < SIZE_MAX)
		refused(openrdma_mr_reg(t->pd, buf, (size_t)max + 1,
					OPENRDMA_ACCESS_LOCAL_WRITE, &mr),
			mr, "max_mr_size + 1");
	if (max > CHEAP_MR_SIZE)
		cr_skip_test("%s: max_mr_size %llu is too large to register; "
			     "the refusal of one byte more was checked",
			     t->ifname, (unsigned long long)max);
	m = conf_mem_map(t, t->pd, (size_t)max, OPENRDMA_ACCESS_LOCAL_WRITE);
	cr_assert_eq(m->mr->length, max);
}

CONF_TEST(limits, max_srq_wr_and_sge)
{
	struct conf_test *t = conf_setup(CONF_LOCAL_ONLY);
	struct openrdma_srq_init_attr init = { 0 };
	struct openrdma_srq *srq = sentinel;

	conf_require_cap(t, OPENRDMA_DEVICE_SRQ, "shared receive queues");
	init.attr = (struct openrdma_srq_attr){
		.max_wr = (uint32_t)t->attr.max_srq_wr + 1, .max_sge = 1
	};
	refused(openrdma_srq_create(t->pd, &init, &srq), srq, "max_srq_wr + 1");
	init.attr = (struct openrdma_srq_attr){
		.max_wr = 1, .max_sge = (uint32_t)t->attr.max_srq_sge + 1
	};
	refused(openrdma_srq_create(t->pd, &init, &srq), srq,
		"max_srq_sge + 1");
	init.attr = (struct openrdma_srq_attr){
		.max_wr = (uint32_t)t->attr.max_srq_wr,
		.max_sge = (uint32_t)t->attr.max_srq_sge
	};
	CONF_OK(openrdma_srq_create(t->pd, &init, &srq));
	conf_track(t, CONF_K_SRQ, srq);
}

/*
 * Creates objects with make() until min(max, CONF_COUNT_BOUND) exist
 * (have already held), then, if max was within the bound, one more must be
 * refused.  Each created object is tracked as kind.
 *
 * A device's max_* is an upper bound, as ibv_query_device(3)'s are: objects
 * that share a resource (memory, the context's mappings) may run out
 * before, and the device says so with -ENOMEM or -ENOSPC.  That is the
 * device's real limit, accepted once CONF_COUNT_MIN objects (or max, if
 * fewer) exist; the failure must still be clean.
 */
static void count_limit(struct conf_test *t, int max, int have, int kind,
			int (*make)(struct conf_test *t, void **out),
			const char *what)
{
	int bound = max < CONF_COUNT_BOUND ? max : CONF_COUNT_BOUND;
	int least = max < CONF_COUNT_MIN ? max : CONF_COUNT_MIN;
	void *obj;
	int i, ret;

	cr_assert_gt(max, 0, "%s is %d", what, max);
	for (i = have; i < bound; i++) {
		obj = sentinel;
		ret = make(t, &obj);
		if ((ret == -OPENRDMA_ENOMEM || ret == -OPENRDMA_ENOSPC) &&
		    i >= least) {
			cr_assert_eq(obj, sentinel,
				     "%s: output written on failure", what);
			cr_log_info("%s: %s: the device ran out after %d of "
				    "%d: %s",
				    t->ifname, what, i, max,
				    openrdma_strerror(ret));
			return;
		}
		cr_assert_eq(ret, 0, "%s: object %d of %d: %s", what, i + 1,
			     max, openrdma_strerror(ret));
		conf_track(t, kind, obj);
	}
	if (max > CONF_COUNT_BOUND)
		return;
	obj = sentinel;
	refused(make(t, &obj), obj, what);
}

static int make_pd(struct conf_test *t, void **out)
{
	return openrdma_pd_alloc(t->ctx, (struct openrdma_pd **)out);
}

static int make_cq(struct conf_test *t, void **out)
{
	return openrdma_cq_create(t->ctx, 1, NULL, NULL, 0,
				  (struct openrdma_cq **)out);
}

static struct openrdma_cq *count_cq;

static int make_qp(struct conf_test *t, void **out)
{
	struct openrdma_qp_init_attr init = qp_init(count_cq);

	return openrdma_qp_create(t->pd, &init, (struct openrdma_qp **)out);
}

static int make_mr(struct conf_test *t, void **out)
{
	static uint8_t buf[64];

	return openrdma_mr_reg(t->pd, buf, sizeof(buf), 0,
			       (struct openrdma_mr **)out);
}

static int make_mw(struct conf_test *t, void **out)
{
	return openrdma_mw_alloc(t->pd, OPENRDMA_MW_TYPE_2,
				 (struct openrdma_mw **)out);
}

static int make_ah(struct conf_test *t, void **out)
{
	struct openrdma_ah_attr attr = { .port_num = 1, .addr = t->port.addr };

	return openrdma_ah_create(t->pd, &attr, (struct openrdma_ah **)out);
}

CONF_TEST(limits, max_pd)
{
	struct conf_test *t = conf_setup(CONF_LOCAL_ONLY);

	count_limit(t, t->attr.max_pd, 1, CONF_K_PD, make_pd, "max_pd");
}

CONF_TEST(limits, max_cq)
{
	struct conf_test *t = conf_setup(CONF_LOCAL_ONLY);

	count_limit(t, t->attr.max_cq, 0, CONF_K_CQ, make_cq, "max_cq");
}

CONF_TEST(limits, max_qp)
{
	struct conf_test *t = conf_setup(CONF_LOCAL_ONLY);

	count_cq = conf_cq_new(t, 16, NULL, NULL);
	count_limit(t, t->attr.max_qp, 0, CONF_K_QP, make_qp, "max_qp");
}

CONF_TEST(limits, max_mr)
{
	struct conf_test *t = conf_setup(CONF_LOCAL_ONLY);

	count_limit(t, t->attr.max_mr, 0, CONF_K_MR, make_mr, "max_mr");
}

CONF_TEST(limits, max_mw)
{
	struct conf_test *t = conf_setup(CONF_LOCAL_ONLY);

	conf_require_cap(t, OPENRDMA_DEVICE_MW_TYPE2, "type 2 memory windows");
	count_limit(t, t->attr.max_mw, 0, CONF_K_MW, make_mw, "max_mw");
}

CONF_TEST(limits, max_ah)
{
	struct conf_test *t = conf_setup(CONF_LOCAL_ONLY);

	conf_require_cap(t, OPENRDMA_DEVICE_UD, "UD (address handles)");
	count_limit(t, t->attr.max_ah, 0, CONF_K_AH, make_ah, "max_ah");
}
