/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Bad input on every entry point of the verbs core: NULL handles and
 * pointers, handles of the wrong type or already destroyed, unknown enum
 * values and out-of-range sizes.  Each call must fail with the documented
 * code and change nothing.  Runs over the fake transport of test_obj.c,
 * linked into the same program.
 */
#include "config.h"

#include <criterion/criterion.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/un.h>

#include <openrdma/transport.h>

struct openrdma_device *fake_device(void);
void fake_fini(void);

#define EINV (-OPENRDMA_EINVAL)
#define EBAD (-OPENRDMA_EBADHANDLE)

/* Every kind of object, and a dead handle of each kind. */
static struct {
	struct openrdma_context *ctx;
	struct openrdma_pd *pd;
	struct openrdma_mr *mr;
	struct openrdma_mw *mw;
	struct openrdma_comp_channel *ch;
	struct openrdma_cq *cq;
	struct openrdma_srq *srq;
	struct openrdma_qp *qp;
	struct openrdma_ah *ah;
	struct openrdma_cm_channel *cmch;
	struct openrdma_cm_id *id;
	/* A handle that was never created: type tag 0, not in any table. */
	struct {
		union {
			struct openrdma_context ctx;
			struct openrdma_pd pd;
			struct openrdma_mr mr;
			struct openrdma_mw mw;
			struct openrdma_comp_channel ch;
			struct openrdma_cq cq;
			struct openrdma_srq srq;
			struct openrdma_qp qp;
			struct openrdma_ah ah;
			struct openrdma_cm_channel cmch;
			struct openrdma_cm_id id;
		};
	} dead;
	char buf[64];
} o;

static void setup(void)
{
	struct openrdma_srq_init_attr sinit = { .attr = { .max_wr = 4,
							  .max_sge = 1 } };
	struct openrdma_ah_attr ah_attr = { .port_num = 1 };
	struct openrdma_qp_init_attr init = { 0 };

	memset(&o, 0, sizeof(o));
	cr_assert_eq(openrdma_device_open(fake_device(), &o.ctx), 0);
	cr_assert_eq(openrdma_pd_alloc(o.ctx, &o.pd), 0);
	cr_assert_eq(openrdma_mr_reg(o.pd, o.buf, sizeof(o.buf),
				     OPENRDMA_ACCESS_LOCAL_WRITE, &o.mr),
		     0);
	cr_assert_eq(openrdma_mw_alloc(o.pd, OPENRDMA_MW_TYPE_1, &o.mw), 0);
	cr_assert_eq(openrdma_comp_channel_create(o.ctx, &o.ch), 0);
	cr_assert_eq(openrdma_cq_create(o.ctx, 8, NULL, o.ch, 0, &o.cq), 0);
	cr_assert_eq(openrdma_srq_create(o.pd, &sinit, &o.srq), 0);
	init.send_cq = o.cq;
	init.recv_cq = o.cq;
	init.qp_type = OPENRDMA_QPT_RC;
	cr_assert_eq(openrdma_qp_create(o.pd, &init, &o.qp), 0);
	cr_assert_eq(openrdma_ah_create(o.pd, &ah_attr, &o.ah), 0);
	cr_assert_eq(openrdma_cm_channel_create(o.ctx, &o.cmch), 0);
	cr_assert_eq(openrdma_cm_id_create(o.ctx, o.cmch, NULL, OPENRDMA_PS_TCP,
					   &o.id),
		     0);
}

/* Everything is still alive and unreferenced: nothing leaked a ref. */
static void teardown(void)
{
	cr_expect_eq(openrdma_cm_id_destroy(o.id), 0);
	cr_expect_eq(openrdma_cm_channel_destroy(o.cmch), 0);
	cr_expect_eq(openrdma_ah_destroy(o.ah), 0);
	cr_expect_eq(openrdma_qp_destroy(o.qp), 0);
	cr_expect_eq(openrdma_srq_destroy(o.srq), 0);
	cr_expect_eq(openrdma_cq_destroy(o.cq), 0);
	cr_expect_eq(openrdma_comp_channel_destroy(o.ch), 0);
	cr_expect_eq(openrdma_mw_dealloc(o.mw), 0);
	cr_expect_eq(openrdma_mr_dereg(o.mr), 0);
	cr_expect_eq(openrdma_pd_dealloc(o.pd), 0);
	cr_expect_eq(openrdma_context_close(o.ctx), 0);
	fake_fini();
}

TestSuite(core_args, .init = setup, .fini = teardown);

Test(core_args, context)
{
	struct openrdma_context *ctx = (void *)0x1;
	struct openrdma_device_attr attr;
	struct openrdma_port_attr pattr;
	struct openrdma_device nodev = { .name = "none" };
	union openrdma_gid gid;

	cr_assert_eq(openrdma_device_open(NULL, &ctx), EINV);
	cr_assert_eq(openrdma_device_open(&nodev, &ctx), EINV);
	cr_assert_eq(openrdma_device_open(fake_device(), NULL), EINV);
	cr_assert_eq(openrdma_device_open_mode(fake_device(), 7, &ctx), EINV);
	cr_assert_eq(openrdma_device_open_mode(fake_device(), -1, &ctx), EINV);
	cr_assert_eq(ctx, (void *)0x1);

	cr_assert_eq(openrdma_context_close(NULL), EINV);
	cr_assert_eq(openrdma_context_close((void *)o.pd), EBAD);
	cr_assert_eq(openrdma_context_close(&o.dead.ctx), EBAD);

	cr_assert_eq(openrdma_device_query(NULL, &attr), EINV);
	cr_assert_eq(openrdma_device_query((void *)o.cq, &attr), EBAD);
	cr_assert_eq(openrdma_device_query(o.ctx, NULL), EINV);

	cr_assert_eq(openrdma_port_query(NULL, 1, &pattr), EINV);
	cr_assert_eq(openrdma_port_query(o.ctx, 0, &pattr), EINV);
	cr_assert_eq(openrdma_port_query(o.ctx, 2, &pattr), EINV);
	cr_assert_eq(openrdma_port_query(o.ctx, 1, NULL), EINV);
	cr_assert_eq(openrdma_port_query(o.ctx, 1, &pattr), 0);

	cr_assert_eq(openrdma_gid_query(NULL, 1, 0, &gid), EINV);
	cr_assert_eq(openrdma_gid_query(o.ctx, 9, 0, &gid), EINV);
	cr_assert_eq(openrdma_gid_query(o.ctx, 1, -1, &gid), EINV);
	cr_assert_eq(openrdma_gid_query(o.ctx, 1, 0, NULL), EINV);
	cr_assert_eq(openrdma_gid_query(o.ctx, 1, 3, &gid), 0);
	cr_assert_eq(gid.raw[15], 3);
}

Test(core_args, pd_mr_mw)
{
	struct openrdma_mw_bind_info info = { .mr = o.mr };
	struct openrdma_pd *pd = (void *)0x1;
	struct openrdma_mr *mr = (void *)0x1;
	struct openrdma_mw *mw = (void *)0x1;
	const int lw = OPENRDMA_ACCESS_LOCAL_WRITE;

	cr_assert_eq(openrdma_pd_alloc(NULL, &pd), EINV);
	cr_assert_eq(openrdma_pd_alloc((void *)o.pd, &pd), EBAD);
	cr_assert_eq(openrdma_pd_alloc(o.ctx, NULL), EINV);
	cr_assert_eq(openrdma_pd_dealloc(NULL), EINV);
	cr_assert_eq(openrdma_pd_dealloc(&o.dead.pd), EBAD);
	cr_assert_eq(openrdma_pd_dealloc((void *)o.mr), EBAD);
	cr_assert_eq(pd, (void *)0x1);

	cr_assert_eq(openrdma_mr_reg(NULL, o.buf, 8, lw, &mr), EINV);
	cr_assert_eq(openrdma_mr_reg((void *)o.ctx, o.buf, 8, lw, &mr), EBAD);
	cr_assert_eq(openrdma_mr_reg(o.pd, NULL, 8, lw, &mr), EINV);
	cr_assert_eq(openrdma_mr_reg(o.pd, o.buf, 8, 1 << 9, &mr), EINV);
	cr_assert_eq(openrdma_mr_reg(o.pd, o.buf, 8,
				     OPENRDMA_ACCESS_REMOTE_WRITE, &mr),
		     EINV, "remote write needs local write");
	cr_assert_eq(openrdma_mr_reg(o.pd, o.buf, 8,
				     OPENRDMA_ACCESS_REMOTE_ATOMIC, &mr),
		     EINV);
	cr_assert_eq(openrdma_mr_reg(o.pd, o.buf, (size_t)1 << 21, lw, &mr),
		     EINV, "beyond max_mr_size");
	cr_assert_eq(openrdma_mr_reg(o.pd, (void *)-8, 16, lw, &mr), EINV);
	cr_assert_eq(openrdma_mr_reg(o.pd, o.buf, 8, lw, NULL), EINV);
	cr_assert_eq(mr, (void *)0x1);

	cr_assert_eq(openrdma_mr_rereg(NULL, OPENRDMA_REREG_CHANGE_ACCESS, NULL,
				       NULL, 0, 0),
		     EINV);
	cr_assert_eq(openrdma_mr_rereg((void *)o.mw,
				       OPENRDMA_REREG_CHANGE_ACCESS, NULL, NULL,
				       0, 0),
		     EBAD);
	cr_assert_eq(openrdma_mr_rereg(o.mr, 0, NULL, NULL, 0, 0), EINV);
	cr_assert_eq(openrdma_mr_rereg(o.mr, 1 << 5, NULL, NULL, 0, 0), EINV);
	cr_assert_eq(openrdma_mr_rereg(o.mr, OPENRDMA_REREG_CHANGE_PD, NULL,
				       NULL, 0, 0),
		     EINV);
	cr_assert_eq(openrdma_mr_rereg(o.mr, OPENRDMA_REREG_CHANGE_PD,
				       &o.dead.pd, NULL, 0, 0),
		     EBAD);
	cr_assert_eq(openrdma_mr_rereg(o.mr, OPENRDMA_REREG_CHANGE_ACCESS, NULL,
				       NULL, 0, 1 << 12),
		     EINV);
	cr_assert_eq(openrdma_mr_rereg(o.mr, OPENRDMA_REREG_CHANGE_TRANSLATION,
				       NULL, NULL, 8, 0),
		     EINV);
	cr_assert_eq(o.mr->access, lw);
	cr_assert_eq(o.mr->addr, o.buf);
	cr_assert_eq(openrdma_mr_dereg(NULL), EINV);
	cr_assert_eq(openrdma_mr_dereg(&o.dead.mr), EBAD);
	cr_assert_eq(openrdma_mr_dereg((void *)o.pd), EBAD);

	cr_assert_eq(openrdma_mw_alloc(NULL, OPENRDMA_MW_TYPE_1, &mw), EINV);
	cr_assert_eq(openrdma_mw_alloc((void *)o.qp, OPENRDMA_MW_TYPE_1, &mw),
		     EBAD);
	cr_assert_eq(openrdma_mw_alloc(o.pd, 0, &mw), EINV);
	cr_assert_eq(openrdma_mw_alloc(o.pd, 3, &mw), EINV);
	cr_assert_eq(openrdma_mw_alloc(o.pd, OPENRDMA_MW_TYPE_1, NULL), EINV);
	cr_assert_eq(mw, (void *)0x1);
	cr_assert_eq(openrdma_mw_dealloc(NULL), EINV);
	cr_assert_eq(openrdma_mw_dealloc(&o.dead.mw), EBAD);

	cr_assert_eq(openrdma_mw_bind(NULL, o.mw, 0, 0, &info), EINV);
	cr_assert_eq(openrdma_mw_bind(o.qp, NULL, 0, 0, &info), EINV);
	cr_assert_eq(openrdma_mw_bind((void *)o.cq, o.mw, 0, 0, &info), EBAD);
	cr_assert_eq(openrdma_mw_bind(o.qp, (void *)o.mr, 0, 0, &info), EBAD);
	cr_assert_eq(openrdma_mw_bind(o.qp, o.mw, 0, 0, NULL), EINV);
	cr_assert_eq(openrdma_mw_bind(o.qp, o.mw, 0, OPENRDMA_SEND_INLINE,
				      &info),
		     EINV);
	info.mr = (void *)o.pd;
	cr_assert_eq(openrdma_mw_bind(o.qp, o.mw, 0, 0, &info), EBAD);
	cr_assert_eq(atomic_load(&o.pd->obj.ref), 6, "no stray reference");
}

Test(core_args, cq_and_channel)
{
	struct openrdma_comp_channel *ch = (void *)0x1;
	struct openrdma_cq *cq = (void *)0x1;
	struct openrdma_wc wc;

	cr_assert_eq(openrdma_comp_channel_create(NULL, &ch), EINV);
	cr_assert_eq(openrdma_comp_channel_create((void *)o.cmch, &ch), EBAD);
	cr_assert_eq(openrdma_comp_channel_create(o.ctx, NULL), EINV);
	cr_assert_eq(openrdma_comp_channel_destroy(NULL), EINV);
	cr_assert_eq(openrdma_comp_channel_destroy((void *)o.cmch), EBAD);
	cr_assert_eq(openrdma_comp_channel_destroy(&o.dead.ch), EBAD);
	cr_assert_eq(ch, (void *)0x1);

	cr_assert_eq(openrdma_cq_create(NULL, 4, NULL, NULL, 0, &cq), EINV);
	cr_assert_eq(openrdma_cq_create((void *)o.pd, 4, NULL, NULL, 0, &cq),
		     EBAD);
	cr_assert_eq(openrdma_cq_create(o.ctx, 0, NULL, NULL, 0, &cq), EINV);
	cr_assert_eq(openrdma_cq_create(o.ctx, -4, NULL, NULL, 0, &cq), EINV);
	cr_assert_eq(openrdma_cq_create(o.ctx, 4097, NULL, NULL, 0, &cq), EINV);
	cr_assert_eq(openrdma_cq_create(o.ctx, 4, NULL, (void *)o.cmch, 0, &cq),
		     EBAD);
	cr_assert_eq(openrdma_cq_create(o.ctx, 4, NULL, NULL, -1, &cq), EINV);
	cr_assert_eq(openrdma_cq_create(o.ctx, 4, NULL, NULL, 0, NULL), EINV);
	cr_assert_eq(cq, (void *)0x1);

	cr_assert_eq(openrdma_cq_destroy(NULL), EINV);
	cr_assert_eq(openrdma_cq_destroy(&o.dead.cq), EBAD);
	cr_assert_eq(openrdma_cq_resize(NULL, 8), EINV);
	cr_assert_eq(openrdma_cq_resize(o.cq, 0), EINV);
	cr_assert_eq(openrdma_cq_resize(o.cq, 1 << 20), EINV);
	cr_assert_eq(openrdma_cq_poll(NULL, 1, &wc), EINV);
	cr_assert_eq(openrdma_cq_poll((void *)o.qp, 1, &wc), EBAD);
	cr_assert_eq(openrdma_cq_poll(o.cq, -1, &wc), EINV);
	cr_assert_eq(openrdma_cq_poll(o.cq, 1, NULL), EINV);
	cr_assert_eq(openrdma_cq_poll(o.cq, 0, NULL), 0);
	cr_assert_eq(openrdma_cq_req_notify(NULL, 0), EINV);
	cr_assert_eq(openrdma_cq_req_notify(&o.dead.cq, 0), EBAD);
	cr_assert_eq(openrdma_cq_event_get(NULL, &cq, NULL), EINV);
	cr_assert_eq(openrdma_cq_event_get((void *)o.cq, &cq, NULL), EBAD);
	cr_assert_eq(openrdma_cq_event_get(o.ch, NULL, NULL), EINV);
	/* Void calls: no crash, no change. */
	openrdma_cq_events_ack(NULL, 1);
	openrdma_cq_events_ack(&o.dead.cq, 1);
	openrdma_cq_events_ack(o.cq, 3);
	openrdma_cq_notify(NULL, true);
	cr_assert_eq(atomic_load(&o.cq->obj.ref), 3);
	cr_assert_eq(o.cq->comp_events_completed, 0);
}

Test(core_args, srq)
{
	struct openrdma_srq_init_attr sinit = { .attr = { .max_wr = 4 } };
	struct openrdma_recv_wr wr = { 0 }, *bad = NULL;
	struct openrdma_srq *srq = (void *)0x1;
	struct openrdma_srq_attr attr = { .max_wr = 4 };

	cr_assert_eq(openrdma_srq_create(NULL, &sinit, &srq), EINV);
	cr_assert_eq(openrdma_srq_create((void *)o.ctx, &sinit, &srq), EBAD);
	cr_assert_eq(openrdma_srq_create(o.pd, NULL, &srq), EINV);
	cr_assert_eq(openrdma_srq_create(o.pd, &sinit, NULL), EINV);
	sinit.attr.max_wr = 0;
	cr_assert_eq(openrdma_srq_create(o.pd, &sinit, &srq), EINV);
	sinit.attr.max_wr = 1025;
	cr_assert_eq(openrdma_srq_create(o.pd, &sinit, &srq), EINV);
	sinit.attr.max_wr = 4;
	sinit.attr.max_sge = 5;
	cr_assert_eq(openrdma_srq_create(o.pd, &sinit, &srq), EINV);
	cr_assert_eq(srq, (void *)0x1);

	cr_assert_eq(openrdma_srq_modify(NULL, &attr, OPENRDMA_SRQ_MAX_WR),
		     EINV);
	cr_assert_eq(openrdma_srq_modify(&o.dead.srq, &attr,
					 OPENRDMA_SRQ_MAX_WR),
		     EBAD);
	cr_assert_eq(openrdma_srq_modify(o.srq, NULL, OPENRDMA_SRQ_MAX_WR),
		     EINV);
	cr_assert_eq(openrdma_srq_modify(o.srq, &attr, 0), EINV);
	cr_assert_eq(openrdma_srq_modify(o.srq, &attr, 1 << 2), EINV);
	attr.max_wr = 0;
	cr_assert_eq(openrdma_srq_modify(o.srq, &attr, OPENRDMA_SRQ_MAX_WR),
		     EINV);
	attr.srq_limit = 5;
	cr_assert_eq(openrdma_srq_modify(o.srq, &attr, OPENRDMA_SRQ_LIMIT),
		     EINV, "limit above max_wr");
	attr.srq_limit = 2;
	cr_assert_eq(openrdma_srq_modify(o.srq, &attr, OPENRDMA_SRQ_LIMIT), 0);
	attr.max_wr = 16;
	cr_assert_eq(openrdma_srq_modify(o.srq, &attr, OPENRDMA_SRQ_MAX_WR), 0);
	cr_assert_eq(o.srq->max_wr, 16);

	cr_assert_eq(openrdma_srq_query(NULL, &attr), EINV);
	cr_assert_eq(openrdma_srq_query((void *)o.qp, &attr), EBAD);
	cr_assert_eq(openrdma_srq_query(o.srq, NULL), EINV);
	cr_assert_eq(openrdma_srq_destroy(NULL), EINV);
	cr_assert_eq(openrdma_srq_destroy(&o.dead.srq), EBAD);

	cr_assert_eq(openrdma_srq_post_recv(NULL, &wr, &bad), EINV);
	cr_assert_eq(bad, &wr, "bad_wr names the first WR not posted");
	bad = NULL;
	cr_assert_eq(openrdma_srq_post_recv((void *)o.qp, &wr, &bad), EBAD);
	cr_assert_eq(bad, &wr);
	cr_assert_eq(openrdma_srq_post_recv(o.srq, NULL, &bad), EINV);
	cr_assert_eq(openrdma_srq_post_recv(o.srq, &wr, NULL), EINV);
}

Test(core_args, ah)
{
	struct openrdma_ah_attr attr = { .port_num = 1 };
	struct openrdma_ah *ah = (void *)0x1;
	struct openrdma_wc wc = { .wc_flags = OPENRDMA_WC_GRH };
	struct openrdma_grh grh = { 0 };

	cr_assert_eq(openrdma_ah_create(NULL, &attr, &ah), EINV);
	cr_assert_eq(openrdma_ah_create((void *)o.mr, &attr, &ah), EBAD);
	cr_assert_eq(openrdma_ah_create(o.pd, NULL, &ah), EINV);
	cr_assert_eq(openrdma_ah_create(o.pd, &attr, NULL), EINV);
	attr.port_num = 0;
	cr_assert_eq(openrdma_ah_create(o.pd, &attr, &ah), EINV);
	attr.port_num = 2;
	cr_assert_eq(openrdma_ah_create(o.pd, &attr, &ah), EINV);
	attr.port_num = 1;
	attr.is_global = 2;
	cr_assert_eq(openrdma_ah_create(o.pd, &attr, &ah), EINV);
	attr.is_global = 0;
	attr.addr.ss_family = AF_UNIX;
	cr_assert_eq(openrdma_ah_create(o.pd, &attr, &ah), EINV);
	cr_assert_eq(ah, (void *)0x1);

	cr_assert_eq(openrdma_ah_destroy(NULL), EINV);
	cr_assert_eq(openrdma_ah_destroy(&o.dead.ah), EBAD);
	cr_assert_eq(openrdma_ah_destroy((void *)o.pd), EBAD);

	cr_assert_eq(openrdma_ah_attr_from_wc(NULL, 1, &wc, &grh, &attr), EINV);
	cr_assert_eq(openrdma_ah_attr_from_wc(o.ctx, 0, &wc, &grh, &attr),
		     EINV);
	cr_assert_eq(openrdma_ah_attr_from_wc(o.ctx, 1, NULL, &grh, &attr),
		     EINV);
	cr_assert_eq(openrdma_ah_attr_from_wc(o.ctx, 1, &wc, NULL, &attr), EINV,
		     "the completion says it has a GRH");
	cr_assert_eq(openrdma_ah_attr_from_wc(o.ctx, 1, &wc, &grh, NULL), EINV);
	cr_assert_eq(openrdma_ah_attr_from_wc(o.ctx, 1, &wc, &grh, &attr), 0);
}

Test(core_args, qp)
{
	struct openrdma_qp_init_attr init = { .send_cq = o.cq,
					      .recv_cq = o.cq,
					      .qp_type = OPENRDMA_QPT_RC };
	struct openrdma_send_wr swr = { 0 }, *sbad = NULL;
	struct openrdma_recv_wr rwr = { 0 }, *rbad = NULL;
	struct openrdma_qp *qp = (void *)0x1;
	struct openrdma_context *ctx2;
	struct openrdma_qp_attr attr = { 0 };
	struct openrdma_cq *cq2;

	cr_assert_eq(openrdma_qp_create(NULL, &init, &qp), EINV);
	cr_assert_eq(openrdma_qp_create(&o.dead.pd, &init, &qp), EBAD);
	cr_assert_eq(openrdma_qp_create(o.pd, NULL, &qp), EINV);
	cr_assert_eq(openrdma_qp_create(o.pd, &init, NULL), EINV);
	init.qp_type = 3;
	cr_assert_eq(openrdma_qp_create(o.pd, &init, &qp), EINV);
	init.qp_type = OPENRDMA_QPT_RC;
	init.send_cq = NULL;
	cr_assert_eq(openrdma_qp_create(o.pd, &init, &qp), EINV);
	init.send_cq = (void *)o.srq;
	cr_assert_eq(openrdma_qp_create(o.pd, &init, &qp), EBAD);
	init.send_cq = o.cq;
	init.recv_cq = &o.dead.cq;
	cr_assert_eq(openrdma_qp_create(o.pd, &init, &qp), EBAD);
	init.recv_cq = o.cq;
	init.srq = (void *)o.cq;
	cr_assert_eq(openrdma_qp_create(o.pd, &init, &qp), EBAD);
	init.srq = NULL;
	init.cap.max_send_wr = 1025;
	cr_assert_eq(openrdma_qp_create(o.pd, &init, &qp), EINV);
	init.cap.max_send_wr = 1;
	init.cap.max_recv_sge = 5;
	cr_assert_eq(openrdma_qp_create(o.pd, &init, &qp), EINV);
	init.cap.max_recv_sge = 1;
	init.cap.max_inline_data = 65;
	cr_assert_eq(openrdma_qp_create(o.pd, &init, &qp), EINV);
	init.cap.max_inline_data = 0;
	cr_assert_eq(qp, (void *)0x1);

	/* A CQ of another context. */
	cr_assert_eq(openrdma_device_open(fake_device(), &ctx2), 0);
	cr_assert_eq(openrdma_cq_create(ctx2, 4, NULL, NULL, 0, &cq2), 0);
	init.recv_cq = cq2;
	cr_assert_eq(openrdma_qp_create(o.pd, &init, &qp), EINV);
	cr_assert_eq(atomic_load(&cq2->obj.ref), 1);
	cr_assert_eq(openrdma_cq_destroy(cq2), 0);
	cr_assert_eq(openrdma_context_close(ctx2), 0);

	cr_assert_eq(openrdma_qp_modify(NULL, &attr, OPENRDMA_QP_STATE), EINV);
	cr_assert_eq(openrdma_qp_modify(&o.dead.qp, &attr, OPENRDMA_QP_STATE),
		     EBAD);
	cr_assert_eq(openrdma_qp_modify(o.qp, NULL, OPENRDMA_QP_STATE), EINV);
	cr_assert_eq(openrdma_qp_modify(o.qp, &attr, 1 << 21), EINV);
	attr.qp_state = 9;
	cr_assert_eq(openrdma_qp_modify(o.qp, &attr, OPENRDMA_QP_STATE), EINV);
	cr_assert_eq(atomic_load(&o.qp->state), OPENRDMA_QPS_RESET);

	cr_assert_eq(openrdma_qp_query(NULL, &attr, 0, &init), EINV);
	cr_assert_eq(openrdma_qp_query((void *)o.srq, &attr, 0, &init), EBAD);
	cr_assert_eq(openrdma_qp_query(o.qp, NULL, 0, &init), EINV);
	cr_assert_eq(openrdma_qp_query(o.qp, &attr, 0, NULL), EINV);
	cr_assert_eq(openrdma_qp_destroy(NULL), EINV);
	cr_assert_eq(openrdma_qp_destroy(&o.dead.qp), EBAD);

	cr_assert_eq(openrdma_qp_post_send(NULL, &swr, &sbad), EINV);
	cr_assert_eq(sbad, &swr);
	sbad = NULL;
	cr_assert_eq(openrdma_qp_post_send((void *)o.cq, &swr, &sbad), EBAD);
	cr_assert_eq(sbad, &swr);
	cr_assert_eq(openrdma_qp_post_send(o.qp, NULL, &sbad), EINV);
	cr_assert_eq(openrdma_qp_post_send(o.qp, &swr, NULL), EINV);
	cr_assert_eq(openrdma_qp_post_recv(NULL, &rwr, &rbad), EINV);
	cr_assert_eq(rbad, &rwr);
	cr_assert_eq(openrdma_qp_post_recv(&o.dead.qp, &rwr, &rbad), EBAD);
	cr_assert_eq(openrdma_qp_post_recv(o.qp, NULL, &rbad), EINV);
	cr_assert_eq(openrdma_qp_post_recv(o.qp, &rwr, NULL), EINV);
}

Test(core_args, async)
{
	struct openrdma_async_event ev = { 0 };

	cr_assert_eq(openrdma_async_event_get(NULL, &ev), EINV);
	cr_assert_eq(openrdma_async_event_get((void *)o.pd, &ev), EBAD);
	cr_assert_eq(openrdma_async_event_get(o.ctx, NULL), EINV);

	/* Refused by the core: no crash, nothing queued. */
	openrdma_async_event_ack(NULL);
	openrdma_async_event_post(NULL, &ev);
	openrdma_async_event_post(o.ctx, NULL);
	ev.event_type = OPENRDMA_EVENT_TYPE_MAX;
	openrdma_async_event_post(o.ctx, &ev);
	ev.event_type = OPENRDMA_EVENT_QP_FATAL; /* without its QP */
	openrdma_async_event_post(o.ctx, &ev);
	ev.element.qp = (void *)o.cq; /* not a QP */
	openrdma_async_event_post(o.ctx, &ev);
	cr_assert_eq(openrdma_async_event_get(o.ctx, &ev), -OPENRDMA_EAGAIN);
	cr_assert_eq(atomic_load(&o.cq->obj.ref), 3);
}

Test(core_args, cm)
{
	struct openrdma_conn_param param = { 0 };
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct sockaddr_un unix_addr = { .sun_family = AF_UNIX };
	struct openrdma_cm_channel *ch = (void *)0x1;
	struct openrdma_cm_id *id = (void *)0x1;
	struct openrdma_cm_event ev = { 0 }, *evp = NULL;
	struct sockaddr_storage ss;
	struct openrdma_qp_init_attr init = { .send_cq = o.cq,
					      .recv_cq = o.cq,
					      .qp_type = OPENRDMA_QPT_UD };
	struct openrdma_qp *ud;
	const struct sockaddr *dst = (const struct sockaddr *)&sin;
	char big[256] = { 0 };

	cr_assert_eq(openrdma_cm_channel_create(NULL, &ch), EINV);
	cr_assert_eq(openrdma_cm_channel_create((void *)o.ch, &ch), EBAD);
	cr_assert_eq(openrdma_cm_channel_create(o.ctx, NULL), EINV);
	cr_assert_eq(ch, (void *)0x1);
	cr_assert_eq(openrdma_cm_channel_destroy(NULL), EINV);
	cr_assert_eq(openrdma_cm_channel_destroy((void *)o.ch), EBAD);
	cr_assert_eq(openrdma_cm_channel_destroy(o.cmch), -OPENRDMA_EBUSY);

	cr_assert_eq(openrdma_cm_id_create(NULL, o.cmch, NULL, OPENRDMA_PS_TCP,
					   &id),
		     EINV);
	cr_assert_eq(openrdma_cm_id_create(o.ctx, NULL, NULL, OPENRDMA_PS_TCP,
					   &id),
		     EINV);
	cr_assert_eq(openrdma_cm_id_create(o.ctx, (void *)o.ch, NULL,
					   OPENRDMA_PS_TCP, &id),
		     EBAD);
	cr_assert_eq(openrdma_cm_id_create(o.ctx, o.cmch, NULL, 0x999, &id),
		     EINV);
	cr_assert_eq(openrdma_cm_id_create(o.ctx, o.cmch, NULL, OPENRDMA_PS_TCP,
					   NULL),
		     EINV);
	cr_assert_eq(id, (void *)0x1);
	cr_assert_eq(openrdma_cm_id_destroy(NULL), EINV);
	cr_assert_eq(openrdma_cm_id_destroy(&o.dead.id), EBAD);
	cr_assert_eq(openrdma_cm_id_new_request(NULL, &id), EINV);
	cr_assert_eq(openrdma_cm_id_new_request((void *)o.cmch, &id), EBAD);
	cr_assert_eq(openrdma_cm_id_new_request(o.id, NULL), EINV);

	cr_assert_eq(openrdma_cm_listen(NULL, dst, 1), EINV);
	cr_assert_eq(openrdma_cm_listen(o.id, NULL, 1), EINV);
	cr_assert_eq(openrdma_cm_listen(o.id, (struct sockaddr *)&unix_addr, 1),
		     EINV);
	cr_assert_eq(openrdma_cm_listen(o.id, dst, -1), EINV);
	cr_assert_eq(openrdma_cm_local_addr(NULL, &ss), EINV);
	cr_assert_eq(openrdma_cm_local_addr(o.id, NULL), EINV);
	cr_assert_eq(openrdma_cm_peer_addr((void *)o.qp, &ss), EBAD);
	cr_assert_eq(openrdma_cm_peer_addr(o.id, NULL), EINV);

	cr_assert_eq(openrdma_cm_connect(NULL, o.qp, dst, NULL), EINV);
	cr_assert_eq(openrdma_cm_connect(o.id, NULL, dst, NULL), EINV);
	cr_assert_eq(openrdma_cm_connect(o.id, (void *)o.cq, dst, NULL), EBAD);
	cr_assert_eq(openrdma_cm_connect(o.id, o.qp, NULL, NULL), EINV);
	cr_assert_eq(openrdma_cm_connect(o.id, o.qp,
					 (struct sockaddr *)&unix_addr, NULL),
		     EINV);
	cr_assert_eq(openrdma_qp_create(o.pd, &init, &ud), 0);
	cr_assert_eq(openrdma_cm_connect(o.id, ud, dst, NULL), EINV,
		     "a UD QP on the TCP port space");
	cr_assert_eq(openrdma_qp_destroy(ud), 0);
	openrdma_qp_state_set(o.qp, OPENRDMA_QPS_RTS);
	cr_assert_eq(openrdma_cm_connect(o.id, o.qp, dst, NULL), EINV,
		     "a QP past INIT");
	openrdma_qp_state_set(o.qp, OPENRDMA_QPS_RESET);
	param.private_data_len = 57;
	param.private_data = big;
	cr_assert_eq(openrdma_cm_connect(o.id, o.qp, dst, &param), EINV);
	param.private_data = NULL;
	param.private_data_len = 1;
	cr_assert_eq(openrdma_cm_connect(o.id, o.qp, dst, &param), EINV);
	param.private_data_len = 0;
	param.retry_count = 8;
	cr_assert_eq(openrdma_cm_connect(o.id, o.qp, dst, &param), EINV);
	param.retry_count = 7;
	param.rnr_retry_count = 8;
	cr_assert_eq(openrdma_cm_connect(o.id, o.qp, dst, &param), EINV);
	param.rnr_retry_count = 7;
	param.initiator_depth = 17;
	cr_assert_eq(openrdma_cm_connect(o.id, o.qp, dst, &param), EINV);
	param.initiator_depth = 0;
	param.three_way = 2;
	cr_assert_eq(openrdma_cm_connect(o.id, o.qp, dst, &param), EINV);
	param.three_way = 1;
	cr_assert_eq(openrdma_cm_accept(o.id, o.qp, &param), EINV,
		     "three_way is for connect");
	param.three_way = 0;
	param.private_data = big;
	param.private_data_len = 197;
	cr_assert_eq(openrdma_cm_accept(o.id, o.qp, &param), EINV);
	cr_assert_eq(openrdma_cm_accept(NULL, o.qp, NULL), EINV);
	cr_assert_eq(openrdma_cm_accept(o.id, (void *)o.ah, NULL), EBAD);
	cr_assert_null(o.id->qp);
	cr_assert_eq(atomic_load(&o.qp->obj.ref), 1);

	cr_assert_eq(openrdma_cm_reject(NULL, NULL, 0), EINV);
	cr_assert_eq(openrdma_cm_reject(o.id, NULL, 3), EINV);
	cr_assert_eq(openrdma_cm_reject(o.id, big, 149), EINV);
	cr_assert_eq(openrdma_cm_disconnect(&o.dead.id, NULL, 0), EBAD);
	cr_assert_eq(openrdma_cm_disconnect(o.id, big, 33), EINV);
	cr_assert_eq(openrdma_cm_disconnect(o.id, big, 32), 0);

	cr_assert_eq(openrdma_cm_event_get(NULL, &evp), EINV);
	cr_assert_eq(openrdma_cm_event_get((void *)o.id, &evp), EBAD);
	cr_assert_eq(openrdma_cm_event_get(o.cmch, NULL), EINV);
	cr_assert_null(evp);
	openrdma_cm_event_ack(NULL);
	cr_assert_eq(openrdma_cm_event_post(NULL, &ev), EINV);
	cr_assert_eq(openrdma_cm_event_post(o.id, NULL), EINV);
	ev.event = 16;
	cr_assert_eq(openrdma_cm_event_post(o.id, &ev), EINV);
	cr_assert_eq(atomic_load(&o.id->obj.ref), 1);
}
