/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Bad input on the public entry points: NULL arguments, objects of the
 * wrong type passed through casts, invalid enumerations, and destroying
 * objects that still have children.  Each call must fail without side
 * effects, leaving its output untouched.
 */
#include <stdlib.h>

#include "conf.h"

static void *const sentinel = (void *)(uintptr_t)0x5e5e5e5e;

/* A NULL handle: the core may call it invalid or a bad handle. */
#define CONF_NULL_REFUSED(expr)                                           \
	do {                                                              \
		int conf_r_ = (expr);                                     \
		cr_assert(conf_r_ == -OPENRDMA_EINVAL ||                  \
				  conf_r_ == -OPENRDMA_EBADHANDLE,        \
			  "%s: got %s, want EINVAL or EBADHANDLE", #expr, \
			  openrdma_strerror(conf_r_));                    \
	} while (0)

/* A few live objects of every kind. */
struct objs {
	struct openrdma_cq *cq;
	struct openrdma_qp *qp;
	struct conf_mem *mem;
	struct openrdma_comp_channel *ch;
};

static struct conf_test *objs(struct objs *o)
{
	struct conf_test *t = conf_setup(CONF_LOCAL_ONLY);
	struct openrdma_qp_init_attr init = {
		.cap = { .max_send_wr = 1,
			 .max_recv_wr = 1,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = OPENRDMA_QPT_RC,
	};

	CONF_OK(openrdma_comp_channel_create(t->ctx, &o->ch));
	conf_track(t, CONF_K_COMP_CH, o->ch);
	o->cq = conf_cq_new(t, 4, o->ch, NULL);
	init.send_cq = o->cq;
	init.recv_cq = o->cq;
	o->qp = conf_qp_new(t, &init);
	o->mem = conf_mem_new(t, t->pd, 64, OPENRDMA_ACCESS_LOCAL_WRITE, 1);
	return t;
}

CONF_TEST(input, null_arguments)
{
	struct objs o;
	struct conf_test *t = objs(&o);
	struct openrdma_qp_init_attr init = { 0 };
	struct openrdma_device_attr dattr;
	struct openrdma_qp_attr qattr;
	struct openrdma_pd *pd = sentinel;
	struct openrdma_mr *mr = sentinel;
	struct openrdma_cq *cq = sentinel;
	struct openrdma_qp *qp = sentinel;
	struct openrdma_context *ctx = sentinel;
	struct openrdma_wc wc;

	CONF_NULL_REFUSED(openrdma_pd_alloc(NULL, &pd));
	CONF_ERR(openrdma_pd_alloc(t->ctx, NULL), OPENRDMA_EINVAL);
	CONF_NULL_REFUSED(openrdma_mr_reg(NULL, o.mem->buf, 64, 0, &mr));
	CONF_ERR(openrdma_mr_reg(t->pd, NULL, 64, 0, &mr), OPENRDMA_EINVAL);
	CONF_ERR(openrdma_mr_reg(t->pd, o.mem->buf, 64, 0, NULL),
		 OPENRDMA_EINVAL);
	CONF_NULL_REFUSED(openrdma_cq_create(NULL, 4, NULL, NULL, 0, &cq));
	CONF_ERR(openrdma_cq_create(t->ctx, 4, NULL, NULL, 0, NULL),
		 OPENRDMA_EINVAL);
	CONF_NULL_REFUSED(openrdma_cq_poll(NULL, 1, &wc));
	CONF_ERR(openrdma_cq_poll(o.cq, 1, NULL), OPENRDMA_EINVAL);
	CONF_ERR(openrdma_cq_poll(o.cq, -1, &wc), OPENRDMA_EINVAL);
	CONF_ERR(openrdma_qp_create(t->pd, NULL, &qp), OPENRDMA_EINVAL);
	/* no CQs */
	init.qp_type = OPENRDMA_QPT_RC;
	CONF_ERR(openrdma_qp_create(t->pd, &init, &qp), OPENRDMA_EINVAL);
	CONF_NULL_REFUSED(openrdma_qp_modify(NULL, &qattr, OPENRDMA_QP_STATE));
	CONF_ERR(openrdma_qp_modify(o.qp, NULL, OPENRDMA_QP_STATE),
		 OPENRDMA_EINVAL);
	CONF_ERR(openrdma_qp_query(o.qp, NULL, OPENRDMA_QP_STATE, &init),
		 OPENRDMA_EINVAL);
	CONF_NULL_REFUSED(openrdma_device_query(NULL, &dattr));
	CONF_ERR(openrdma_device_query(t->ctx, NULL), OPENRDMA_EINVAL);
	CONF_ERR(openrdma_device_open(NULL, &ctx), OPENRDMA_EINVAL);
	CONF_ERR(openrdma_device_open(t->dev, NULL), OPENRDMA_EINVAL);
	CONF_ERR(openrdma_device_find(NULL, &t->dev), OPENRDMA_EINVAL);
	CONF_NULL_REFUSED(openrdma_pd_dealloc(NULL));
	CONF_NULL_REFUSED(openrdma_mr_dereg(NULL));
	CONF_NULL_REFUSED(openrdma_cq_destroy(NULL));
	CONF_NULL_REFUSED(openrdma_qp_destroy(NULL));
	CONF_NULL_REFUSED(openrdma_context_close(NULL));
	cr_assert(pd == sentinel && mr == sentinel && cq == sentinel &&
			  qp == sentinel && ctx == sentinel,
		  "an output was written by a failed call");
}

CONF_TEST(input, wrong_object_types)
{
	struct objs o;
	struct conf_test *t = objs(&o);
	struct openrdma_send_wr swr = { .opcode = OPENRDMA_WR_SEND };
	struct openrdma_recv_wr rwr = { 0 };
	struct openrdma_send_wr *sbad;
	struct openrdma_recv_wr *rbad;
	struct openrdma_qp_attr qattr = { .qp_state = OPENRDMA_QPS_ERR };
	struct openrdma_qp_init_attr init;
	struct openrdma_pd *pd = sentinel;
	struct openrdma_mr *mr = sentinel;
	struct openrdma_wc wc;
	void *cq = o.cq, *qp = o.qp, *mrp = o.mem->mr, *pdp = t->pd;

	CONF_ERR(openrdma_pd_alloc((struct openrdma_context *)pdp, &pd),
		 OPENRDMA_EBADHANDLE);
	CONF_ERR(openrdma_mr_reg((struct openrdma_pd *)cq, o.mem->buf, 64, 0,
				 &mr),
		 OPENRDMA_EBADHANDLE);
	CONF_ERR(openrdma_cq_poll((struct openrdma_cq *)qp, 1, &wc),
		 OPENRDMA_EBADHANDLE);
	CONF_ERR(openrdma_qp_modify((struct openrdma_qp *)cq, &qattr,
				    OPENRDMA_QP_STATE),
		 OPENRDMA_EBADHANDLE);
	CONF_ERR(openrdma_qp_query((struct openrdma_qp *)mrp, &qattr,
				   OPENRDMA_QP_STATE, &init),
		 OPENRDMA_EBADHANDLE);
	CONF_ERR(openrdma_qp_post_send((struct openrdma_qp *)cq, &swr, &sbad),
		 OPENRDMA_EBADHANDLE);
	CONF_ERR(openrdma_qp_post_recv((struct openrdma_qp *)pdp, &rwr, &rbad),
		 OPENRDMA_EBADHANDLE);
	CONF_ERR(openrdma_cq_req_notify((struct openrdma_cq *)qp, 0),
		 OPENRDMA_EBADHANDLE);
	CONF_ERR(openrdma_pd_dealloc((struct openrdma_pd *)mrp),
		 OPENRDMA_EBADHANDLE);
	CONF_ERR(openrdma_mr_dereg((struct openrdma_mr *)pdp),
		 OPENRDMA_EBADHANDLE);
	CONF_ERR(openrdma_cq_destroy((struct openrdma_cq *)qp),
		 OPENRDMA_EBADHANDLE);
	CONF_ERR(openrdma_qp_destroy((struct openrdma_qp *)cq),
		 OPENRDMA_EBADHANDLE);
	CONF_ERR(openrdma_comp_channel_destroy(
			 (struct openrdma_comp_channel *)cq),
		 OPENRDMA_EBADHANDLE);
	CONF_ERR(openrdma_context_close((struct openrdma_context *)pdp),
		 OPENRDMA_EBADHANDLE);
	cr_assert(pd == sentinel && mr == sentinel);
	/* everything still works */
	conf_state_expect(o.qp, OPENRDMA_QPS_RESET);
	CONF_OK(openrdma_cq_poll(o.cq, 1, &wc));
}

CONF_TEST(input, invalid_enumerations)
{
	struct objs o;
	struct conf_test *t = objs(&o);
	struct openrdma_qp_init_attr init = {
		.send_cq = o.cq,
		.recv_cq = o.cq,
		.cap = { .max_send_wr = 1,
			 .max_recv_wr = 1,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = (enum openrdma_qp_type)99,
	};
	struct openrdma_port_attr pattr;
	struct openrdma_context *ctx = sentinel;
	struct openrdma_cm_id *id = sentinel;
	struct openrdma_qp *qp = sentinel;
	struct openrdma_mw *mw = sentinel;
	struct openrdma_mr *mr = sentinel;
	union openrdma_gid gid;

	CONF_ERR(openrdma_qp_create(t->pd, &init, &qp), OPENRDMA_EINVAL);
	CONF_ERR(openrdma_mw_alloc(t->pd, (enum openrdma_mw_type)3, &mw),
		 OPENRDMA_EINVAL);
	CONF_ERR(openrdma_mr_reg(t->pd, o.mem->buf, 64, 1 << 12, &mr),
		 OPENRDMA_EINVAL);
	/* remote write and atomics need local write, as in verbs */
	CONF_ERR(openrdma_mr_reg(t->pd, o.mem->buf, 64,
				 OPENRDMA_ACCESS_REMOTE_WRITE, &mr),
		 OPENRDMA_EINVAL);
	CONF_ERR(openrdma_mr_reg(t->pd, o.mem->buf, 64,
				 OPENRDMA_ACCESS_REMOTE_ATOMIC, &mr),
		 OPENRDMA_EINVAL);
	CONF_ERR(openrdma_port_query(t->ctx, 0, &pattr), OPENRDMA_EINVAL);
	CONF_ERR(openrdma_port_query(
			 t->ctx, (uint8_t)(t->attr.phys_port_cnt + 1), &pattr),
		 OPENRDMA_EINVAL);
	CONF_ERR(openrdma_gid_query(t->ctx, 1, -1, &gid), OPENRDMA_EINVAL);
	CONF_ERR(openrdma_gid_query(t->ctx, 1, t->port.gid_tbl_len, &gid),
		 OPENRDMA_EINVAL);
	CONF_ERR(openrdma_cm_id_create(t->ctx, t->cm_ch, NULL,
				       (enum openrdma_port_space)0x999, &id),
		 OPENRDMA_EINVAL);
	CONF_ERR(openrdma_device_open_mode(t->dev, (enum openrdma_thread_mode)7,
					   &ctx),
		 OPENRDMA_EINVAL);
	cr_assert(qp == sentinel && mw == sentinel && mr == sentinel &&
			  id == sentinel && ctx == sentinel,
		  "an output was written by a failed call");
	cr_assert_not_null(openrdma_strerror(-123456));
	cr_assert_not_null(openrdma_strerror(OPENRDMA_ERRNO_MAX + 5));
	cr_assert_not_null(openrdma_wc_status_str((enum openrdma_wc_status)99));
	cr_assert_not_null(openrdma_qp_state_str((enum openrdma_qp_state)42));
	cr_assert_not_null(
		openrdma_event_type_str((enum openrdma_event_type)77));
	cr_assert_not_null(
		openrdma_cm_event_str((enum openrdma_cm_event_type)77));
}

CONF_TEST(input, not_found)
{
	struct conf_test *t = conf_setup(CONF_LOCAL_ONLY);
	struct openrdma_device *dev = sentinel;
	int ret;

	ret = openrdma_device_find("no-such-interface9", &dev);
	cr_assert(ret == -OPENRDMA_ENODEV || ret == -OPENRDMA_ENOENT,
		  "device_find of an unknown name: %s", openrdma_strerror(ret));
	cr_assert_eq(dev, sentinel);
	cr_assert_str_eq(openrdma_device_name(t->dev), t->ifname);
	cr_assert_str_eq(openrdma_device_transport_name(t->dev),
			 t->attr.transport);
}

CONF_TEST(input, busy_objects)
{
	struct objs o;
	struct conf_test *t = objs(&o);
	struct openrdma_wc wc;

	/* parents with children refuse to go, and keep working */
	CONF_ERR(openrdma_pd_dealloc(t->pd), OPENRDMA_EBUSY);
	CONF_ERR(openrdma_cq_destroy(o.cq), OPENRDMA_EBUSY);
	CONF_ERR(openrdma_comp_channel_destroy(o.ch), OPENRDMA_EBUSY);
	CONF_ERR(openrdma_context_close(t->ctx), OPENRDMA_EBUSY);
	CONF_OK(openrdma_cq_poll(o.cq, 1, &wc));
	conf_state_expect(o.qp, OPENRDMA_QPS_RESET);
	cr_assert_eq(o.mem->mr->pd, t->pd);
}

CONF_TEST(input, busy_srq)
{
	struct objs o;
	struct conf_test *t = objs(&o);
	struct openrdma_srq_init_attr sinit = { .attr = { .max_wr = 1,
							  .max_sge = 1 } };
	struct openrdma_qp_init_attr init = {
		.send_cq = o.cq,
		.recv_cq = o.cq,
		.cap = { .max_send_wr = 1, .max_send_sge = 1 },
		.qp_type = OPENRDMA_QPT_RC,
	};
	struct openrdma_srq *srq;

	conf_require_cap(t, OPENRDMA_DEVICE_SRQ, "shared receive queues");
	CONF_OK(openrdma_srq_create(t->pd, &sinit, &srq));
	conf_track(t, CONF_K_SRQ, srq);
	init.srq = srq;
	conf_qp_new(t, &init);
	CONF_ERR(openrdma_srq_destroy(srq), OPENRDMA_EBUSY);
}
