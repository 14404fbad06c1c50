/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The verbs core over a fake transport defined here: object lifetime and
 * references, QP state tracking, completion channels, async events and CM
 * channels.  The fake keeps destroyed objects in a graveyard (freed at the
 * end of each test), so that tests may hand their stale handles back to the
 * core in any build.
 */
#include "config.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openrdma/transport.h>

/* Used by test_core_args.c, linked into the same program. */
struct openrdma_device *fake_device(void);
void fake_fini(void);

/* ------------------------------------------------------------------ */
/* The fake transport                                                 */
/* ------------------------------------------------------------------ */

#define GRAVEYARD_SIZE 256

static struct {
	int fail; /* the next op returns this, once */
	bool really_free; /* free destroyed objects at once */
	void *graveyard[GRAVEYARD_SIZE];
	int dead;
	int qp_modified;
	int cm_destroyed;
	struct openrdma_send_wr last_send;
	/* called from the destroy op, before the object dies */
	void (*on_qp_destroy)(struct openrdma_qp *qp);
	void (*on_cm_id_destroy)(struct openrdma_cm_id *id);
} fake;

static const struct openrdma_device_attr fake_attr = {
	.transport = "fake",
	.max_mr_size = 1 << 20,
	.max_msg_size = 1 << 20,
	.device_cap_flags =
		OPENRDMA_DEVICE_RC | OPENRDMA_DEVICE_UD | OPENRDMA_DEVICE_SRQ |
		OPENRDMA_DEVICE_MW_TYPE1 | OPENRDMA_DEVICE_MW_TYPE2 |
		OPENRDMA_DEVICE_ZERO_BASED | OPENRDMA_DEVICE_THREE_WAY |
		OPENRDMA_DEVICE_SRQ_LIMIT,
	.max_qp = 64,
	.max_qp_wr = 1024,
	.max_sge = 4,
	.max_sge_rd = 4,
	.max_inline_data = 64,
	.max_cq = 64,
	.max_cqe = 4096,
	.max_mr = 64,
	.max_pd = 64,
	.max_qp_rd_atom = 16,
	.max_qp_init_rd_atom = 16,
	.atomic_cap = OPENRDMA_ATOMIC_HCA,
	.max_mw = 64,
	.max_ah = 64,
	.max_srq = 64,
	.max_srq_wr = 1024,
	.max_srq_sge = 4,
	.max_pkeys = 1,
	.phys_port_cnt = 1,
	.max_pdata_connect = 56,
	.max_pdata_accept = 196,
	.max_pdata_reject = 148,
	.max_pdata_disconnect = 32,
	.max_ud_msg_size = 4096,
};

static int fake_failure(void)
{
	int ret = fake.fail;

	fake.fail = 0;
	return ret;
}

static void *fake_new(size_t size)
{
	void *obj = calloc(1, size);

	cr_assert_not_null(obj);
	return obj;
}

static int fake_bury(void *obj)
{
	if (fake.really_free) {
		free(obj);
		return 0;
	}
	cr_assert_lt(fake.dead, GRAVEYARD_SIZE);
	fake.graveyard[fake.dead++] = obj;
	return 0;
}

void fake_fini(void)
{
	while (fake.dead)
		free(fake.graveyard[--fake.dead]);
	memset(&fake, 0, sizeof(fake));
}

#define FAKE_FAIL()                         \
	do {                                \
		int fail_ = fake_failure(); \
		if (fail_)                  \
			return fail_;       \
	} while (0)

static void fake_context_close(struct openrdma_context *ctx)
{
	fake_bury(ctx);
}

static int fake_device_query(struct openrdma_context *ctx,
			     struct openrdma_device_attr *attr)
{
	FAKE_FAIL();
	*attr = fake_attr;
	return 0;
}

static int fake_gid_query(struct openrdma_context *ctx, uint8_t port_num,
			  int index, union openrdma_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	gid->raw[15] = (uint8_t)index;
	return 0;
}

static int fake_port_query(struct openrdma_context *ctx, uint8_t port_num,
			   struct openrdma_port_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->state = OPENRDMA_PORT_ACTIVE;
	attr->active_mtu = OPENRDMA_MTU_4096;
	return 0;
}

static int fake_mr_dereg(struct openrdma_mr *mr)
{
	FAKE_FAIL();
	return fake_bury(mr);
}

static int fake_mr_reg(struct openrdma_pd *pd, void *addr, size_t length,
		       int access, struct openrdma_mr **mr_out)
{
	struct openrdma_mr *mr;

	FAKE_FAIL();
	mr = fake_new(sizeof(*mr));
	mr->lkey = 0x1111;
	mr->rkey = 0x2222;
	*mr_out = mr;
	return 0;
}

static int fake_mr_rereg(struct openrdma_mr *mr, int flags,
			 struct openrdma_pd *pd, void *addr, size_t length,
			 int access)
{
	FAKE_FAIL();
	return 0;
}

static int fake_mw_alloc(struct openrdma_pd *pd, enum openrdma_mw_type type,
			 struct openrdma_mw **mw_out)
{
	struct openrdma_mw *mw;

	FAKE_FAIL();
	mw = fake_new(sizeof(*mw));
	mw->rkey = 0xabcd0005;
	*mw_out = mw;
	return 0;
}

static int fake_mw_dealloc(struct openrdma_mw *mw)
{
	FAKE_FAIL();
	return fake_bury(mw);
}

static int fake_pd_alloc(struct openrdma_context *ctx,
			 struct openrdma_pd **pd_out)
{
	FAKE_FAIL();
	*pd_out = fake_new(sizeof(**pd_out));
	return 0;
}

static int fake_pd_dealloc(struct openrdma_pd *pd)
{
	FAKE_FAIL();
	return fake_bury(pd);
}

static int fake_ah_attr_from_wc(struct openrdma_context *ctx, uint8_t port_num,
				const struct openrdma_wc *wc,
				const struct openrdma_grh *grh,
				struct openrdma_ah_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->port_num = port_num;
	return 0;
}

static int fake_ah_create(struct openrdma_pd *pd, struct openrdma_ah_attr *attr,
			  struct openrdma_ah **ah_out)
{
	FAKE_FAIL();
	*ah_out = fake_new(sizeof(**ah_out));
	return 0;
}

static int fake_ah_destroy(struct openrdma_ah *ah)
{
	FAKE_FAIL();
	return fake_bury(ah);
}

static int fake_cq_create(struct openrdma_context *ctx, int cqe,
			  int comp_vector, struct openrdma_cq **cq_out)
{
	struct openrdma_cq *cq;
	int granted = 16;

	FAKE_FAIL();
	while (granted < cqe)
		granted *= 2;
	cq = fake_new(sizeof(*cq));
	cq->cqe = granted;
	*cq_out = cq;
	return 0;
}

static int fake_cq_destroy(struct openrdma_cq *cq)
{
	FAKE_FAIL();
	return fake_bury(cq);
}

static int fake_cq_poll(struct openrdma_cq *cq, int num_entries,
			struct openrdma_wc *wc)
{
	return 0;
}

static int fake_cq_req_notify(struct openrdma_cq *cq, int solicited_only)
{
	/* As software transports: arming is the core's business. */
	return -OPENRDMA_EOPNOTSUPP;
}

static int fake_cq_resize(struct openrdma_cq *cq, int cqe)
{
	FAKE_FAIL();
	return 0;
}

static int fake_qp_create(struct openrdma_pd *pd,
			  struct openrdma_qp_init_attr *init_attr,
			  struct openrdma_qp **qp_out)
{
	struct openrdma_qp *qp;

	FAKE_FAIL();
	qp = fake_new(sizeof(*qp));
	qp->qp_num = 0x123;
	/* Grants at least 16 send WRs: the core must report it. */
	if (init_attr->cap.max_send_wr < 16)
		init_attr->cap.max_send_wr = 16;
	*qp_out = qp;
	return 0;
}

static int fake_qp_destroy(struct openrdma_qp *qp)
{
	FAKE_FAIL();
	if (fake.on_qp_destroy)
		fake.on_qp_destroy(qp);
	return fake_bury(qp);
}

static int fake_qp_modify(struct openrdma_qp *qp, struct openrdma_qp_attr *attr,
			  int attr_mask)
{
	FAKE_FAIL();
	fake.qp_modified++;
	return 0;
}

static int fake_qp_post_recv(struct openrdma_qp *qp,
			     struct openrdma_recv_wr *wr,
			     struct openrdma_recv_wr **bad_wr)
{
	return 0;
}

static int fake_qp_post_send(struct openrdma_qp *qp,
			     struct openrdma_send_wr *wr,
			     struct openrdma_send_wr **bad_wr)
{
	FAKE_FAIL();
	fake.last_send = *wr;
	return 0;
}

static int fake_qp_query(struct openrdma_qp *qp, struct openrdma_qp_attr *attr,
			 int attr_mask, struct openrdma_qp_init_attr *init_attr)
{
	FAKE_FAIL();
	memset(attr, 0, sizeof(*attr));
	memset(init_attr, 0, sizeof(*init_attr));
	attr->port_num = 1;
	return 0;
}

static int fake_srq_create(struct openrdma_pd *pd,
			   struct openrdma_srq_init_attr *init_attr,
			   struct openrdma_srq **srq_out)
{
	FAKE_FAIL();
	*srq_out = fake_new(sizeof(**srq_out));
	return 0;
}

static int fake_srq_destroy(struct openrdma_srq *srq)
{
	FAKE_FAIL();
	return fake_bury(srq);
}

static int fake_srq_modify(struct openrdma_srq *srq,
			   struct openrdma_srq_attr *attr, int attr_mask)
{
	FAKE_FAIL();
	return 0;
}

static int fake_srq_post_recv(struct openrdma_srq *srq,
			      struct openrdma_recv_wr *wr,
			      struct openrdma_recv_wr **bad_wr)
{
	return 0;
}

static int fake_srq_query(struct openrdma_srq *srq,
			  struct openrdma_srq_attr *attr)
{
	attr->max_wr = srq->max_wr;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = 0;
	return 0;
}

static int fake_cm_accept(struct openrdma_cm_id *id, struct openrdma_qp *qp,
			  const struct openrdma_conn_param *param)
{
	FAKE_FAIL();
	return 0;
}

static int fake_cm_connect(struct openrdma_cm_id *id, struct openrdma_qp *qp,
			   const struct sockaddr *dst,
			   const struct openrdma_conn_param *param)
{
	FAKE_FAIL();
	return 0;
}

static int fake_cm_disconnect(struct openrdma_cm_id *id,
			      const void *private_data,
			      uint8_t private_data_len)
{
	return 0;
}

static int fake_cm_id_create(struct openrdma_context *ctx,
			     enum openrdma_port_space ps,
			     struct openrdma_cm_id **id_out)
{
	FAKE_FAIL();
	*id_out = fake_new(sizeof(**id_out));
	return 0;
}

static int fake_cm_id_destroy(struct openrdma_cm_id *id)
{
	FAKE_FAIL();
	fake.cm_destroyed++;
	if (fake.on_cm_id_destroy)
		fake.on_cm_id_destroy(id);
	return fake_bury(id);
}

static int fake_cm_listen(struct openrdma_cm_id *id,
			  const struct sockaddr *addr, int backlog)
{
	id->port_num = 1;
	return 0;
}

static int fake_cm_addr(struct openrdma_cm_id *id,
			struct sockaddr_storage *addr)
{
	memset(addr, 0, sizeof(*addr));
	addr->ss_family = AF_INET;
	return 0;
}

static int fake_cm_reject(struct openrdma_cm_id *id, const void *private_data,
			  uint8_t private_data_len)
{
	return 0;
}

static const struct openrdma_transport_ops fake_ops = {
	.context_close = fake_context_close,
	.device_query = fake_device_query,
	.gid_query = fake_gid_query,
	.port_query = fake_port_query,
	.mr_dereg = fake_mr_dereg,
	.mr_reg = fake_mr_reg,
	.mr_rereg = fake_mr_rereg,
	.mw_alloc = fake_mw_alloc,
	.mw_dealloc = fake_mw_dealloc,
	.pd_alloc = fake_pd_alloc,
	.pd_dealloc = fake_pd_dealloc,
	.ah_attr_from_wc = fake_ah_attr_from_wc,
	.ah_create = fake_ah_create,
	.ah_destroy = fake_ah_destroy,
	.cq_create = fake_cq_create,
	.cq_destroy = fake_cq_destroy,
	.cq_poll = fake_cq_poll,
	.cq_req_notify = fake_cq_req_notify,
	.cq_resize = fake_cq_resize,
	.qp_create = fake_qp_create,
	.qp_destroy = fake_qp_destroy,
	.qp_modify = fake_qp_modify,
	.qp_post_recv = fake_qp_post_recv,
	.qp_post_send = fake_qp_post_send,
	.qp_query = fake_qp_query,
	.srq_create = fake_srq_create,
	.srq_destroy = fake_srq_destroy,
	.srq_modify = fake_srq_modify,
	.srq_post_recv = fake_srq_post_recv,
	.srq_query = fake_srq_query,
	.cm_accept = fake_cm_accept,
	.cm_connect = fake_cm_connect,
	.cm_disconnect = fake_cm_disconnect,
	.cm_id_create = fake_cm_id_create,
	.cm_id_destroy = fake_cm_id_destroy,
	.cm_listen = fake_cm_listen,
	.cm_local_addr = fake_cm_addr,
	.cm_peer_addr = fake_cm_addr,
	.cm_reject = fake_cm_reject,
};

static int fake_device_open(struct openrdma_device *dev,
			    struct openrdma_context **ctx_out)
{
	struct openrdma_context *ctx;

	FAKE_FAIL();
	ctx = fake_new(sizeof(*ctx));
	ctx->async_fd = -1;
	*ctx_out = ctx;
	return 0;
}

static const struct openrdma_transport fake_transport = {
	.abi_version = OPENRDMA_TRANSPORT_ABI,
	.size = sizeof(struct openrdma_transport),
	.name = "fake",
	.description = "test double",
	.device_open = fake_device_open,
	.ops = &fake_ops,
};

struct openrdma_device *fake_device(void)
{
	static struct openrdma_device dev = {
		.name = "fake0",
		.dev_name = "fake",
		.transport = &fake_transport,
		.ops = &fake_ops,
		.port_num = 1,
	};

	return &dev;
}

/* ------------------------------------------------------------------ */
/* Helpers                                                            */
/* ------------------------------------------------------------------ */

static unsigned int refs(const void *handle)
{
	const struct openrdma_obj *obj = handle;

	return atomic_load(&obj->ref);
}

static bool readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	cr_assert_geq(poll(&pfd, 1, 0), 0);
	return pfd.revents & POLLIN;
}

static void set_nonblock(int fd)
{
	int flags = fcntl(fd, F_GETFL);

	cr_assert_geq(flags, 0);
	cr_assert_eq(fcntl(fd, F_SETFL, flags | O_NONBLOCK), 0);
}

static struct openrdma_context *open_ctx(void)
{
	struct openrdma_context *ctx = NULL;

	cr_assert_eq(openrdma_device_open(fake_device(), &ctx), 0);
	cr_assert_not_null(ctx);
	return ctx;
}

/* A context with a PD, a CQ on a channel and an RC QP in RESET. */
struct rig {
	struct openrdma_context *ctx;
	struct openrdma_pd *pd;
	struct openrdma_comp_channel *ch;
	struct openrdma_cq *cq;
	struct openrdma_qp *qp;
};

static void rig_up(struct rig *r, enum openrdma_qp_type type)
{
	struct openrdma_qp_init_attr init = { 0 };

	r->ctx = open_ctx();
	cr_assert_eq(openrdma_pd_alloc(r->ctx, &r->pd), 0);
	cr_assert_eq(openrdma_comp_channel_create(r->ctx, &r->ch), 0);
	cr_assert_eq(openrdma_cq_create(r->ctx, 10, (void *)0xc0, r->ch, 0,
					&r->cq),
		     0);
	init.qp_context = (void *)0x9c;
	init.send_cq = r->cq;
	init.recv_cq = r->cq;
	init.qp_type = type;
	init.cap.max_send_wr = 4;
	init.cap.max_recv_wr = 8;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	cr_assert_eq(openrdma_qp_create(r->pd, &init, &r->qp), 0);
}

static void rig_down(struct rig *r)
{
	cr_assert_eq(openrdma_qp_destroy(r->qp), 0);
	cr_assert_eq(openrdma_cq_destroy(r->cq), 0);
	cr_assert_eq(openrdma_comp_channel_destroy(r->ch), 0);
	cr_assert_eq(openrdma_pd_dealloc(r->pd), 0);
	cr_assert_eq(openrdma_context_close(r->ctx), 0);
}

/* ------------------------------------------------------------------ */
/* Lifetime and references                                            */
/* ------------------------------------------------------------------ */

TestSuite(obj, .fini = fake_fini);

Test(obj, open_fills_the_context)
{
	struct openrdma_context *ctx = open_ctx();
	struct openrdma_device_attr attr;

	cr_assert_eq(ctx->obj.type, OPENRDMA_OBJ_CONTEXT);
	cr_assert_eq(refs(ctx), 1);
	cr_assert_eq(ctx->device, fake_device());
	cr_assert_eq(ctx->ops, &fake_ops);
	cr_assert_eq(ctx->thread_mode, OPENRDMA_THREAD_SAFE);
	cr_assert_geq(ctx->async_fd, 0, "the core owns the async fd");
	cr_assert_eq(openrdma_device_query(ctx, &attr), 0);
	cr_assert_eq(attr.max_qp_wr, fake_attr.max_qp_wr);
	cr_assert_str_eq(attr.transport, "fake");
	cr_assert_eq(openrdma_context_close(ctx), 0);

	cr_assert_eq(openrdma_device_open_mode(fake_device(),
					       OPENRDMA_THREAD_SINGLE, &ctx),
		     0);
	cr_assert_eq(ctx->thread_mode, OPENRDMA_THREAD_SINGLE);
	cr_assert_eq(openrdma_context_close(ctx), 0);
}

Test(obj, failed_open_leaves_no_context)
{
	struct openrdma_context *ctx = (void *)0x1;

	fake.fail = -OPENRDMA_ENODEV;
	cr_assert_eq(openrdma_device_open(fake_device(), &ctx),
		     -OPENRDMA_ENODEV);
	cr_assert_eq(ctx, (void *)0x1, "output written on failure");
}

Test(obj, children_keep_parents_busy)
{
	struct openrdma_context *ctx = open_ctx();
	struct openrdma_pd *pd;
	struct openrdma_mr *mr;
	char buf[64];

	cr_assert_eq(openrdma_pd_alloc(ctx, &pd), 0);
	cr_assert_eq(pd->obj.type, OPENRDMA_OBJ_PD);
	cr_assert_eq(pd->obj.ctx, ctx);
	cr_assert_eq(pd->obj.parent, &ctx->obj);
	cr_assert_eq(refs(pd), 1);
	cr_assert_eq(refs(ctx), 2);

	cr_assert_eq(openrdma_mr_reg(pd, buf, sizeof(buf),
				     OPENRDMA_ACCESS_LOCAL_WRITE, &mr),
		     0);
	cr_assert_eq(mr->pd, pd);
	cr_assert_eq(mr->addr, buf);
	cr_assert_eq(mr->length, sizeof(buf));
	cr_assert_eq(mr->access, OPENRDMA_ACCESS_LOCAL_WRITE);
	cr_assert_eq(mr->lkey, 0x1111, "keys are the transport's");
	cr_assert_eq(refs(pd), 2);

	cr_assert_eq(openrdma_pd_dealloc(pd), -OPENRDMA_EBUSY);
	cr_assert_eq(openrdma_context_close(ctx), -OPENRDMA_EBUSY);
	cr_assert_eq(pd->obj.type, OPENRDMA_OBJ_PD);
	cr_assert_eq(ctx->obj.type, OPENRDMA_OBJ_CONTEXT);

	cr_assert_eq(openrdma_mr_dereg(mr), 0);
	cr_assert_eq(refs(pd), 1);
	cr_assert_eq(openrdma_pd_dealloc(pd), 0);
	cr_assert_eq(refs(ctx), 1);
	cr_assert_eq(openrdma_context_close(ctx), 0);
}

Test(obj, qp_holds_its_pd_cqs_and_srq)
{
	struct openrdma_srq_init_attr sinit = { .attr = { .max_wr = 8,
							  .max_sge = 1 } };
	struct openrdma_qp_init_attr init = { 0 };
	struct openrdma_srq *srq;
	struct openrdma_qp *qp;
	struct rig r;

	rig_up(&r, OPENRDMA_QPT_RC);
	cr_assert_eq(r.qp->pd, r.pd);
	cr_assert_eq(r.qp->send_cq, r.cq);
	cr_assert_eq(r.qp->recv_cq, r.cq);
	cr_assert_null(r.qp->srq);
	cr_assert_eq(r.qp->qp_context, (void *)0x9c);
	cr_assert_eq(r.qp->qp_type, OPENRDMA_QPT_RC);
	cr_assert_eq(r.qp->qp_num, 0x123);
	cr_assert_eq(r.qp->cap.max_send_wr, 16, "granted caps reported");
	cr_assert_eq(r.qp->cap.max_recv_wr, 8);
	cr_assert_eq(atomic_load(&r.qp->state), OPENRDMA_QPS_RESET);
	cr_assert_eq(refs(r.cq), 3, "one per QP queue");
	cr_assert_eq(refs(r.ch), 2);

	cr_assert_eq(openrdma_srq_create(r.pd, &sinit, &srq), 0);
	cr_assert_eq(srq->max_wr, 8);
	init.send_cq = r.cq;
	init.recv_cq = r.cq;
	init.srq = srq;
	init.qp_type = OPENRDMA_QPT_UD;
	cr_assert_eq(openrdma_qp_create(r.pd, &init, &qp), 0);
	cr_assert_eq(qp->srq, srq);
	cr_assert_eq(refs(srq), 2);
	cr_assert_eq(refs(r.pd), 4);

	cr_assert_eq(openrdma_cq_destroy(r.cq), -OPENRDMA_EBUSY);
	cr_assert_eq(openrdma_srq_destroy(srq), -OPENRDMA_EBUSY);
	cr_assert_eq(openrdma_comp_channel_destroy(r.ch), -OPENRDMA_EBUSY);

	cr_assert_eq(openrdma_qp_destroy(qp), 0);
	cr_assert_eq(refs(srq), 1);
	cr_assert_eq(refs(r.cq), 3);
	cr_assert_eq(openrdma_srq_destroy(srq), 0);
	rig_down(&r);
}

Test(obj, destroyed_handles_are_rejected)
{
	struct openrdma_context *ctx = open_ctx();
	struct openrdma_pd *pd, *pd2;
	struct openrdma_mr *mr;
	char buf[8];

	cr_assert_eq(openrdma_pd_alloc(ctx, &pd), 0);
	cr_assert_eq(openrdma_pd_dealloc(pd), 0);
	cr_assert_eq(pd->obj.type, OPENRDMA_OBJ_FREED);
	cr_assert_eq(openrdma_pd_dealloc(pd), -OPENRDMA_EBADHANDLE);
	cr_assert_eq(openrdma_mr_reg(pd, buf, sizeof(buf), 0, &mr),
		     -OPENRDMA_EBADHANDLE);
	cr_assert_eq(refs(ctx), 1, "a stale handle took no reference");

	cr_assert_eq(openrdma_context_close(ctx), 0);
	cr_assert_eq(openrdma_pd_alloc(ctx, &pd2), -OPENRDMA_EBADHANDLE);
	cr_assert_eq(openrdma_context_close(ctx), -OPENRDMA_EBADHANDLE);
}

Test(obj, freed_memory_is_never_read)
{
#ifndef OPENRDMA_DEBUG
	cr_skip_test("needs --enable-debug: only the live-handle table "
		     "rejects a handle whose memory was freed");
#else
	struct openrdma_context *ctx = open_ctx();
	struct openrdma_pd *pd;

	/* Really freed: under ASan, a read of the tag would be reported. */
	fake.really_free = true;
	cr_assert_eq(openrdma_pd_alloc(ctx, &pd), 0);
	cr_assert_eq(openrdma_pd_dealloc(pd), 0);
	cr_assert_eq(openrdma_pd_dealloc(pd), -OPENRDMA_EBADHANDLE);
	cr_assert_eq(openrdma_context_close(ctx), 0);
	cr_assert_eq(openrdma_context_close(ctx), -OPENRDMA_EBADHANDLE);
#endif
}

Test(obj, wrong_type_is_rejected)
{
	struct rig r;

	rig_up(&r, OPENRDMA_QPT_RC);
	cr_assert_eq(openrdma_pd_dealloc((struct openrdma_pd *)r.cq),
		     -OPENRDMA_EBADHANDLE);
	cr_assert_eq(openrdma_cq_destroy((struct openrdma_cq *)r.qp),
		     -OPENRDMA_EBADHANDLE);
	cr_assert_eq(openrdma_qp_destroy((struct openrdma_qp *)r.ch),
		     -OPENRDMA_EBADHANDLE);
	cr_assert_eq(r.cq->obj.type, OPENRDMA_OBJ_CQ);
	rig_down(&r);
}

Test(obj, failed_destroy_keeps_the_object)
{
	struct openrdma_context *ctx = open_ctx();
	struct openrdma_pd *pd;

	cr_assert_eq(openrdma_pd_alloc(ctx, &pd), 0);
	fake.fail = -OPENRDMA_EIO;
	cr_assert_eq(openrdma_pd_dealloc(pd), -OPENRDMA_EIO);
	cr_assert_eq(pd->obj.type, OPENRDMA_OBJ_PD);
	cr_assert_eq(refs(ctx), 2);
	cr_assert_eq(openrdma_pd_dealloc(pd), 0, "still a live handle");
	cr_assert_eq(openrdma_context_close(ctx), 0);
}

Test(obj, failed_create_takes_no_reference)
{
	struct openrdma_context *ctx = open_ctx();
	struct openrdma_pd *pd = (void *)0x1;
	struct openrdma_cq *cq = (void *)0x2;

	fake.fail = -OPENRDMA_ENOMEM;
	cr_assert_eq(openrdma_pd_alloc(ctx, &pd), -OPENRDMA_ENOMEM);
	cr_assert_eq(pd, (void *)0x1);
	fake.fail = -OPENRDMA_ENOSPC;
	cr_assert_eq(openrdma_cq_create(ctx, 4, NULL, NULL, 0, &cq),
		     -OPENRDMA_ENOSPC);
	cr_assert_eq(cq, (void *)0x2);
	cr_assert_eq(refs(ctx), 1);
	cr_assert_eq(openrdma_context_close(ctx), 0);
}

Test(obj, cq_capacity_is_granted)
{
	struct openrdma_context *ctx = open_ctx();
	struct openrdma_cq *cq;

	cr_assert_eq(openrdma_cq_create(ctx, 20, (void *)0x5, NULL, 0, &cq), 0);
	cr_assert_eq(cq->cqe, 32, "the transport's rounding is kept");
	cr_assert_eq(cq->cq_context, (void *)0x5);
	cr_assert_null(cq->channel);
	cr_assert_eq(openrdma_cq_resize(cq, 100), 0);
	cr_assert_eq(cq->cqe, 100);
	fake.fail = -OPENRDMA_ENOMEM;
	cr_assert_eq(openrdma_cq_resize(cq, 200), -OPENRDMA_ENOMEM);
	cr_assert_eq(cq->cqe, 100);
	cr_assert_eq(openrdma_cq_destroy(cq), 0);
	cr_assert_eq(openrdma_context_close(ctx), 0);
}

Test(obj, mr_rereg_moves_the_pd_reference)
{
	struct openrdma_context *ctx = open_ctx();
	struct openrdma_pd *pd1, *pd2;
	struct openrdma_mr *mr;
	char a[16], b[32];

	cr_assert_eq(openrdma_pd_alloc(ctx, &pd1), 0);
	cr_assert_eq(openrdma_pd_alloc(ctx, &pd2), 0);
	cr_assert_eq(openrdma_mr_reg(pd1, a, sizeof(a), 0, &mr), 0);

	fake.fail = -OPENRDMA_EIO;
	cr_assert_eq(openrdma_mr_rereg(mr, OPENRDMA_REREG_CHANGE_PD, pd2, NULL,
				       0, 0),
		     -OPENRDMA_EIO);
	cr_assert_eq(refs(pd1), 2);
	cr_assert_eq(refs(pd2), 1);
	cr_assert_eq(mr->pd, pd1);

	cr_assert_eq(
		openrdma_mr_rereg(mr,
				  OPENRDMA_REREG_CHANGE_PD |
					  OPENRDMA_REREG_CHANGE_TRANSLATION |
					  OPENRDMA_REREG_CHANGE_ACCESS,
				  pd2, b, sizeof(b),
				  OPENRDMA_ACCESS_LOCAL_WRITE |
					  OPENRDMA_ACCESS_REMOTE_WRITE),
		0);
	cr_assert_eq(mr->pd, pd2);
	cr_assert_eq(mr->obj.parent, &pd2->obj);
	cr_assert_eq(mr->addr, b);
	cr_assert_eq(mr->length, sizeof(b));
	cr_assert_eq(mr->access, OPENRDMA_ACCESS_LOCAL_WRITE |
					 OPENRDMA_ACCESS_REMOTE_WRITE);
	cr_assert_eq(refs(pd1), 1);
	cr_assert_eq(refs(pd2), 2);

	cr_assert_eq(openrdma_pd_dealloc(pd1), 0);
	cr_assert_eq(openrdma_mr_dereg(mr), 0);
	cr_assert_eq(openrdma_pd_dealloc(pd2), 0);
	cr_assert_eq(openrdma_context_close(ctx), 0);
}

Test(obj, mw_bind_posts_a_bind_request)
{
	struct openrdma_mw_bind_info info = { 0 };
	struct openrdma_mw *mw1, *mw2;
	struct openrdma_mr *mr;
	char buf[64];
	struct rig r;

	rig_up(&r, OPENRDMA_QPT_RC);
	cr_assert_eq(openrdma_mr_reg(r.pd, buf, sizeof(buf),
				     OPENRDMA_ACCESS_LOCAL_WRITE |
					     OPENRDMA_ACCESS_MW_BIND,
				     &mr),
		     0);
	cr_assert_eq(openrdma_mw_alloc(r.pd, OPENRDMA_MW_TYPE_1, &mw1), 0);
	cr_assert_eq(openrdma_mw_alloc(r.pd, OPENRDMA_MW_TYPE_2, &mw2), 0);
	cr_assert_eq(mw1->pd, r.pd);
	cr_assert_eq(mw1->type, OPENRDMA_MW_TYPE_1);
	cr_assert_eq(refs(r.pd), 5);

	info.mr = mr;
	info.addr = (uintptr_t)buf;
	info.length = 16;
	info.mw_access_flags = OPENRDMA_ACCESS_REMOTE_READ;
	cr_assert_eq(openrdma_mw_bind(r.qp, mw1, 77, OPENRDMA_SEND_SIGNALED,
				      &info),
		     0);
	cr_assert_eq(fake.last_send.opcode, OPENRDMA_WR_BIND_MW);
	cr_assert_eq(fake.last_send.wr_id, 77);
	cr_assert_eq(fake.last_send.send_flags,
		     OPENRDMA_SEND_SIGNALED | OPENRDMA_SEND_TYPE1_BIND);
	cr_assert_eq(fake.last_send.bind_mw.mw, mw1);
	cr_assert_eq(fake.last_send.bind_mw.rkey, 0xabcd0006);
	cr_assert_eq(fake.last_send.bind_mw.bind_info.mr, mr);
	cr_assert_eq(fake.last_send.bind_mw.bind_info.length, 16);
	cr_assert_null(fake.last_send.next);

	cr_assert_eq(openrdma_mw_bind(r.qp, mw2, 1, 0, &info), -OPENRDMA_EINVAL,
		     "type 2 windows are bound by work request");
	info.mw_access_flags = OPENRDMA_ACCESS_LOCAL_WRITE;
	cr_assert_eq(openrdma_mw_bind(r.qp, mw1, 1, 0, &info),
		     -OPENRDMA_EINVAL);
	info.mw_access_flags = 0;
	info.mr = NULL;
	cr_assert_eq(openrdma_mw_bind(r.qp, mw1, 1, 0, &info), -OPENRDMA_EINVAL,
		     "a bind without MR must be an unbind");
	info.length = 0;
	cr_assert_eq(openrdma_mw_bind(r.qp, mw1, 1, 0, &info), 0);
	fake.fail = -OPENRDMA_ENOMEM;
	cr_assert_eq(openrdma_mw_bind(r.qp, mw1, 1, 0, &info),
		     -OPENRDMA_ENOMEM);

	cr_assert_eq(openrdma_mw_dealloc(mw1), 0);
	cr_assert_eq(openrdma_mw_dealloc(mw2), 0);
	cr_assert_eq(openrdma_mr_dereg(mr), 0);
	rig_down(&r);
}

/* ------------------------------------------------------------------ */
/* QP state                                                           */
/* ------------------------------------------------------------------ */

Test(obj, qp_modify_tracks_the_state)
{
	struct openrdma_qp_attr attr = { 0 };
	const int to_init = OPENRDMA_QP_STATE | OPENRDMA_QP_PKEY_INDEX |
			    OPENRDMA_QP_PORT | OPENRDMA_QP_ACCESS_FLAGS;
	struct rig r;

	rig_up(&r, OPENRDMA_QPT_RC);
	attr.qp_state = OPENRDMA_QPS_INIT;
	attr.port_num = 1;
	attr.qp_access_flags = OPENRDMA_ACCESS_REMOTE_WRITE;

	cr_assert_eq(openrdma_qp_modify(r.qp, &attr,
					to_init & ~OPENRDMA_QP_PORT),
		     -OPENRDMA_EINVAL);
	cr_assert_eq(fake.qp_modified, 0, "the transport was not called");
	cr_assert_eq(atomic_load(&r.qp->state), OPENRDMA_QPS_RESET);

	cr_assert_eq(openrdma_qp_modify(r.qp, &attr, to_init), 0);
	cr_assert_eq(fake.qp_modified, 1);
	cr_assert_eq(atomic_load(&r.qp->state), OPENRDMA_QPS_INIT);

	/* The transport refuses: the state stays. */
	attr.qp_state = OPENRDMA_QPS_RTR;
	attr.path_mtu = OPENRDMA_MTU_1024;
	attr.max_dest_rd_atomic = 1;
	fake.fail = -OPENRDMA_EIO;
	cr_assert_eq(openrdma_qp_modify(r.qp, &attr,
					OPENRDMA_QP_STATE | OPENRDMA_QP_AV |
						OPENRDMA_QP_PATH_MTU |
						OPENRDMA_QP_DEST_QPN |
						OPENRDMA_QP_RQ_PSN |
						OPENRDMA_QP_MAX_DEST_RD_ATOMIC |
						OPENRDMA_QP_MIN_RNR_TIMER),
		     -OPENRDMA_EIO);
	cr_assert_eq(atomic_load(&r.qp->state), OPENRDMA_QPS_INIT);

	attr.qp_state = OPENRDMA_QPS_ERR;
	cr_assert_eq(openrdma_qp_modify(r.qp, &attr, OPENRDMA_QP_STATE), 0);
	cr_assert_eq(atomic_load(&r.qp->state), OPENRDMA_QPS_ERR);

	cr_assert_eq(openrdma_qp_state_set(r.qp, OPENRDMA_QPS_RESET),
		     OPENRDMA_QPS_ERR);
	cr_assert_eq(atomic_load(&r.qp->state), OPENRDMA_QPS_RESET);
	rig_down(&r);
}

Test(obj, qp_query_reports_what_the_core_keeps)
{
	struct openrdma_qp_init_attr init;
	struct openrdma_qp_attr attr;
	struct rig r;

	rig_up(&r, OPENRDMA_QPT_RC);
	openrdma_qp_state_set(r.qp, OPENRDMA_QPS_RTS);
	cr_assert_eq(openrdma_qp_query(r.qp, &attr, OPENRDMA_QP_STATE, &init),
		     0);
	cr_assert_eq(attr.qp_state, OPENRDMA_QPS_RTS);
	cr_assert_eq(attr.cur_qp_state, OPENRDMA_QPS_RTS);
	cr_assert_eq(attr.port_num, 1, "the transport's fields are kept");
	cr_assert_eq(attr.cap.max_send_wr, 16);
	cr_assert_eq(init.send_cq, r.cq);
	cr_assert_eq(init.recv_cq, r.cq);
	cr_assert_eq(init.qp_context, (void *)0x9c);
	cr_assert_eq(init.qp_type, OPENRDMA_QPT_RC);
	cr_assert_eq(init.cap.max_recv_wr, 8);
	rig_down(&r);
}

Test(obj, posts_reach_the_transport)
{
	struct openrdma_send_wr swr = { .wr_id = 5,
					.opcode = OPENRDMA_WR_SEND },
				*sbad = NULL;
	struct openrdma_recv_wr rwr = { .wr_id = 6 }, *rbad = NULL;
	struct rig r;

	rig_up(&r, OPENRDMA_QPT_RC);
	cr_assert_eq(openrdma_qp_post_send(r.qp, &swr, &sbad), 0);
	cr_assert_eq(fake.last_send.wr_id, 5);
	cr_assert_eq(openrdma_qp_post_recv(r.qp, &rwr, &rbad), 0);
	fake.fail = -OPENRDMA_ENOMEM;
	cr_assert_eq(openrdma_qp_post_send(r.qp, &swr, &sbad),
		     -OPENRDMA_ENOMEM);
	rig_down(&r);
}

/* ------------------------------------------------------------------ */
/* Completion channels                                                */
/* ------------------------------------------------------------------ */

TestSuite(comp_channel, .fini = fake_fini);

Test(comp_channel, notifies_once_per_arm)
{
	struct openrdma_cq *cq;
	void *cq_context;
	struct rig r;

	rig_up(&r, OPENRDMA_QPT_RC);
	set_nonblock(r.ch->fd);
	cr_assert_eq(r.cq->channel, r.ch);

	/* Not armed: nothing. */
	openrdma_cq_notify(r.cq, true);
	cr_assert_not(readable(r.ch->fd));
	cr_assert_eq(openrdma_cq_event_get(r.ch, &cq, &cq_context),
		     -OPENRDMA_EAGAIN);

	cr_assert_eq(openrdma_cq_req_notify(r.cq, 0), 0,
		     "EOPNOTSUPP from the transport is not an error");
	cr_assert_not(readable(r.ch->fd));
	openrdma_cq_notify(r.cq, false);
	cr_assert(readable(r.ch->fd));
	cr_assert_eq(refs(r.cq), 4, "the notification holds the CQ");
	/* Disarmed by the first: a second completion does not notify. */
	openrdma_cq_notify(r.cq, false);

	cr_assert_eq(openrdma_cq_event_get(r.ch, &cq, &cq_context), 0);
	cr_assert_eq(cq, r.cq);
	cr_assert_eq(cq_context, (void *)0xc0);
	cr_assert_not(readable(r.ch->fd));
	cr_assert_eq(openrdma_cq_event_get(r.ch, &cq, NULL), -OPENRDMA_EAGAIN);

	openrdma_cq_events_ack(r.cq, 1);
	cr_assert_eq(r.cq->comp_events_completed, 1);
	cr_assert_eq(refs(r.cq), 3);
	rig_down(&r);
}

Test(comp_channel, solicited_only)
{
	struct openrdma_cq *cq;
	struct rig r;

	rig_up(&r, OPENRDMA_QPT_RC);
	set_nonblock(r.ch->fd);

	cr_assert_eq(openrdma_cq_req_notify(r.cq, 1), 0);
	openrdma_cq_notify(r.cq, false);
	cr_assert_not(readable(r.ch->fd), "unsolicited completion notified");
	openrdma_cq_notify(r.cq, true);
	cr_assert(readable(r.ch->fd));
	cr_assert_eq(openrdma_cq_event_get(r.ch, &cq, NULL), 0);

	/* Armed for solicited, then for next: the next one notifies. */
	cr_assert_eq(openrdma_cq_req_notify(r.cq, 1), 0);
	cr_assert_eq(openrdma_cq_req_notify(r.cq, 0), 0);
	openrdma_cq_notify(r.cq, false);
	cr_assert(readable(r.ch->fd));
	cr_assert_eq(openrdma_cq_event_get(r.ch, &cq, NULL), 0);
	cr_assert_not(readable(r.ch->fd));

	openrdma_cq_events_ack(r.cq, 2);
	cr_assert_eq(r.cq->comp_events_completed, 2);
	rig_down(&r);
}

Test(comp_channel, readable_exactly_while_queued)
{
	struct openrdma_cq *cq, *cq2, *got[2];
	struct rig r;
	int i;

	rig_up(&r, OPENRDMA_QPT_RC);
	set_nonblock(r.ch->fd);
	cr_assert_eq(openrdma_cq_create(r.ctx, 4, (void *)0xc2, r.ch, 0, &cq2),
		     0);
	cr_assert_eq(refs(r.ch), 3);

	/* Two notifications of one CQ, one of another: three events. */
	for (i = 0; i < 2; i++) {
		cr_assert_eq(openrdma_cq_req_notify(r.cq, 0), 0);
		openrdma_cq_notify(r.cq, false);
	}
	cr_assert_eq(openrdma_cq_req_notify(cq2, 0), 0);
	openrdma_cq_notify(cq2, false);

	cr_assert_eq(openrdma_cq_event_get(r.ch, &got[0], NULL), 0);
	cr_assert(readable(r.ch->fd));
	cr_assert_eq(openrdma_cq_event_get(r.ch, &got[1], NULL), 0);
	cr_assert_neq(got[0], got[1], "round robin among CQs");
	cr_assert(readable(r.ch->fd));
	cr_assert_eq(openrdma_cq_event_get(r.ch, &cq, NULL), 0);
	cr_assert_eq(cq, r.cq);
	cr_assert_not(readable(r.ch->fd));

	/* Taken, not acknowledged: the CQ cannot go. */
	cr_assert_eq(openrdma_cq_destroy(cq2), -OPENRDMA_EBUSY);
	openrdma_cq_events_ack(cq2, 1);
	cr_assert_eq(openrdma_cq_destroy(cq2), 0);
	cr_assert_eq(refs(r.ch), 2);

	/* Acknowledging more than was taken drops nothing it does not own */
	openrdma_cq_events_ack(r.cq, 5);
	cr_assert_eq(r.cq->comp_events_completed, 2);
	cr_assert_eq(refs(r.cq), 3);
	rig_down(&r);
}

Test(comp_channel, destroy_discards_untaken_notifications)
{
	struct openrdma_cq *cq;
	struct rig r;

	rig_up(&r, OPENRDMA_QPT_RC);
	set_nonblock(r.ch->fd);
	cr_assert_eq(openrdma_cq_create(r.ctx, 4, NULL, r.ch, 0, &cq), 0);
	cr_assert_eq(openrdma_cq_req_notify(cq, 0), 0);
	openrdma_cq_notify(cq, false);
	cr_assert(readable(r.ch->fd));

	cr_assert_eq(openrdma_cq_destroy(cq), 0);
	cr_assert_not(readable(r.ch->fd), "the discarded count stayed");
	cr_assert_eq(openrdma_cq_event_get(r.ch, &cq, NULL), -OPENRDMA_EAGAIN);

	/* A CQ still armed when destroyed leaves no trace either. */
	cr_assert_eq(openrdma_cq_create(r.ctx, 4, NULL, r.ch, 0, &cq), 0);
	cr_assert_eq(openrdma_cq_req_notify(cq, 1), 0);
	cr_assert_eq(openrdma_cq_destroy(cq), 0);
	rig_down(&r);
}

static void *notify_later(void *arg)
{
	usleep(50 * 1000);
	openrdma_cq_notify(arg, false);
	return NULL;
}

Test(comp_channel, blocking_get_waits_for_a_notification)
{
	struct openrdma_cq *cq = NULL;
	pthread_t thread;
	struct rig r;

	rig_up(&r, OPENRDMA_QPT_RC);
	cr_assert_eq(openrdma_cq_req_notify(r.cq, 0), 0);
	cr_assert_eq(pthread_create(&thread, NULL, notify_later, r.cq), 0);
	cr_assert_eq(openrdma_cq_event_get(r.ch, &cq, NULL), 0);
	cr_assert_eq(cq, r.cq);
	cr_assert_eq(pthread_join(thread, NULL), 0);
	openrdma_cq_events_ack(cq, 1);
	rig_down(&r);
}

Test(comp_channel, cq_without_channel_ignores_notify)
{
	struct openrdma_context *ctx = open_ctx();
	struct openrdma_cq *cq;

	cr_assert_eq(openrdma_cq_create(ctx, 4, NULL, NULL, 0, &cq), 0);
	cr_assert_eq(openrdma_cq_req_notify(cq, 0), 0);
	openrdma_cq_notify(cq, true);
	openrdma_cq_events_ack(cq, 1);
	cr_assert_eq(refs(cq), 1);
	cr_assert_eq(openrdma_cq_destroy(cq), 0);
	cr_assert_eq(openrdma_context_close(ctx), 0);
}

/* ------------------------------------------------------------------ */
/* Async events                                                       */
/* ------------------------------------------------------------------ */

TestSuite(async, .fini = fake_fini);

Test(async, get_ack_and_references)
{
	struct openrdma_async_event ev = { .event_type =
						   OPENRDMA_EVENT_QP_FATAL },
				    got;
	struct rig r;

	rig_up(&r, OPENRDMA_QPT_RC);
	cr_assert_not(readable(r.ctx->async_fd));
	cr_assert_eq(openrdma_async_event_get(r.ctx, &got), -OPENRDMA_EAGAIN);

	ev.element.qp = r.qp;
	openrdma_async_event_post(r.ctx, &ev);
	cr_assert(readable(r.ctx->async_fd));
	cr_assert_eq(refs(r.qp), 2);

	cr_assert_eq(openrdma_async_event_get(r.ctx, &got), 0);
	cr_assert_eq(got.event_type, OPENRDMA_EVENT_QP_FATAL);
	cr_assert_eq(got.element.qp, r.qp);
	cr_assert_not(readable(r.ctx->async_fd));
	cr_assert_eq(refs(r.qp), 2, "held until acknowledged");
	cr_assert_eq(openrdma_qp_destroy(r.qp), -OPENRDMA_EBUSY);

	openrdma_async_event_ack(&got);
	cr_assert_eq(refs(r.qp), 1);

	/* CQ events are counted on the CQ. */
	ev.event_type = OPENRDMA_EVENT_CQ_ERR;
	ev.element.cq = r.cq;
	openrdma_async_event_post(r.ctx, &ev);
	cr_assert_eq(openrdma_async_event_get(r.ctx, &got), 0);
	cr_assert_eq(got.element.cq, r.cq);
	openrdma_async_event_ack(&got);
	cr_assert_eq(r.cq->async_events_completed, 1);
	rig_down(&r);
}

Test(async, events_come_in_order)
{
	struct openrdma_context *ctx = open_ctx();
	struct openrdma_async_event ev = { 0 }, got;
	int i;

	for (i = 1; i <= 3; i++) {
		ev.event_type = OPENRDMA_EVENT_PORT_ACTIVE;
		ev.element.port_num = i;
		openrdma_async_event_post(ctx, &ev);
	}
	for (i = 1; i <= 3; i++) {
		cr_assert_eq(openrdma_async_event_get(ctx, &got), 0);
		cr_assert_eq(got.element.port_num, i);
		openrdma_async_event_ack(&got);
	}
	cr_assert_eq(openrdma_async_event_get(ctx, &got), -OPENRDMA_EAGAIN);
	cr_assert_eq(openrdma_context_close(ctx), 0);
}

Test(async, close_drains_device_events)
{
	struct openrdma_context *ctx = open_ctx();
	struct openrdma_async_event ev = {
		.event_type = OPENRDMA_EVENT_DEVICE_FATAL
	};

	openrdma_async_event_post(ctx, &ev);
	ev.event_type = OPENRDMA_EVENT_PORT_ERR;
	ev.element.port_num = 1;
	openrdma_async_event_post(ctx, &ev);
	cr_assert(readable(ctx->async_fd));
	cr_assert_eq(openrdma_context_close(ctx), 0);
}

Test(async, unread_events_go_with_their_object)
{
	struct openrdma_async_event
		ev = { .event_type = OPENRDMA_EVENT_SRQ_LIMIT_REACHED },
		got;
	struct openrdma_srq_init_attr sinit = { .attr = { .max_wr = 4 } };
	struct openrdma_srq *srq;
	struct rig r;

	rig_up(&r, OPENRDMA_QPT_RC);
	cr_assert_eq(openrdma_srq_create(r.pd, &sinit, &srq), 0);
	ev.element.srq = srq;
	openrdma_async_event_post(r.ctx, &ev);
	ev.event_type = OPENRDMA_EVENT_PORT_ACTIVE;
	ev.element.port_num = 1;
	openrdma_async_event_post(r.ctx, &ev);

	cr_assert_eq(openrdma_srq_destroy(srq), 0,
		     "an event never read does not keep the SRQ");
	cr_assert(readable(r.ctx->async_fd));
	cr_assert_eq(openrdma_async_event_get(r.ctx, &got), 0);
	cr_assert_eq(got.event_type, OPENRDMA_EVENT_PORT_ACTIVE);
	cr_assert_not(readable(r.ctx->async_fd));
	rig_down(&r);
}

static void post_fatal(struct openrdma_qp *qp)
{
	struct openrdma_async_event ev = {
		.event_type = OPENRDMA_EVENT_QP_FATAL,
		.element.qp = qp,
	};

	openrdma_async_event_post(qp->obj.ctx, &ev);
}

Test(async, events_of_a_dying_object_are_dropped)
{
	struct openrdma_async_event got;
	struct rig r;

	rig_up(&r, OPENRDMA_QPT_RC);
	fake.on_qp_destroy = post_fatal;
	cr_assert_eq(openrdma_qp_destroy(r.qp), 0);
	cr_assert_not(readable(r.ctx->async_fd));
	cr_assert_eq(openrdma_async_event_get(r.ctx, &got), -OPENRDMA_EAGAIN);

	cr_assert_eq(openrdma_cq_destroy(r.cq), 0);
	cr_assert_eq(openrdma_comp_channel_destroy(r.ch), 0);
	cr_assert_eq(openrdma_pd_dealloc(r.pd), 0);
	cr_assert_eq(openrdma_context_close(r.ctx), 0);
}

/* ------------------------------------------------------------------ */
/* CM channels                                                        */
/* ------------------------------------------------------------------ */

TestSuite(cm, .fini = fake_fini);

struct cm_rig {
	struct openrdma_context *ctx;
	struct openrdma_cm_channel *ch;
	struct openrdma_cm_id *id;
};

static void cm_up(struct cm_rig *c)
{
	c->ctx = open_ctx();
	cr_assert_eq(openrdma_cm_channel_create(c->ctx, &c->ch), 0);
	cr_assert_eq(openrdma_cm_id_create(c->ctx, c->ch, (void *)0x1d,
					   OPENRDMA_PS_TCP, &c->id),
		     0);
}

static void cm_down(struct cm_rig *c)
{
	cr_assert_eq(openrdma_cm_id_destroy(c->id), 0);
	cr_assert_eq(openrdma_cm_channel_destroy(c->ch), 0);
	cr_assert_eq(openrdma_context_close(c->ctx), 0);
}

Test(cm, post_get_ack)
{
	struct openrdma_cm_event ev = { 0 }, *got;
	struct cm_rig c;

	cm_up(&c);
	cr_assert_eq(c.id->channel, c.ch);
	cr_assert_eq(c.id->context, (void *)0x1d);
	cr_assert_eq(c.id->ps, OPENRDMA_PS_TCP);
	cr_assert_eq(c.id->obj.parent, &c.ch->obj);
	cr_assert_eq(refs(c.ch), 2);
	set_nonblock(c.ch->fd);
	cr_assert_eq(openrdma_cm_event_get(c.ch, &got), -OPENRDMA_EAGAIN);

	ev.event = OPENRDMA_CM_EVENT_ESTABLISHED;
	ev.param.private_data_len = 3;
	memcpy(ev.param.private_data, "abc", 3);
	cr_assert_eq(openrdma_cm_event_post(c.id, &ev), 0);
	cr_assert(readable(c.ch->fd));
	cr_assert_eq(refs(c.id), 2);

	cr_assert_eq(openrdma_cm_event_get(c.ch, &got), 0);
	cr_assert_not(readable(c.ch->fd));
	cr_assert_eq(got->event, OPENRDMA_CM_EVENT_ESTABLISHED);
	cr_assert_eq(got->id, c.id);
	cr_assert_null(got->listen_id);
	cr_assert_eq(got->param.private_data_len, 3);
	cr_assert_arr_eq(got->param.private_data, "abc", 3);
	openrdma_cm_event_ack(got);
	cr_assert_eq(refs(c.id), 1);
	cm_down(&c);
}

struct destroyer {
	struct openrdma_cm_id *id;
	atomic_bool done;
	int ret;
};

static void *destroy_id(void *arg)
{
	struct destroyer *d = arg;

	d->ret = openrdma_cm_id_destroy(d->id);
	atomic_store(&d->done, true);
	return NULL;
}

Test(cm, destroy_waits_for_the_ack)
{
	struct openrdma_cm_event ev = { .event =
						OPENRDMA_CM_EVENT_DISCONNECTED },
				 *got;
	struct destroyer d = { 0 };
	pthread_t thread;
	struct cm_rig c;

	cm_up(&c);
	cr_assert_eq(openrdma_cm_event_post(c.id, &ev), 0);
	cr_assert_eq(openrdma_cm_event_get(c.ch, &got), 0);

	d.id = c.id;
	atomic_init(&d.done, false);
	cr_assert_eq(pthread_create(&thread, NULL, destroy_id, &d), 0);
	usleep(100 * 1000);
	cr_assert_not(atomic_load(&d.done), "destroy did not wait");
	cr_assert_eq(fake.cm_destroyed, 0);

	openrdma_cm_event_ack(got);
	cr_assert_eq(pthread_join(thread, NULL), 0);
	cr_assert(atomic_load(&d.done));
	cr_assert_eq(d.ret, 0);
	cr_assert_eq(fake.cm_destroyed, 1);

	cr_assert_eq(openrdma_cm_channel_destroy(c.ch), 0);
	cr_assert_eq(openrdma_context_close(c.ctx), 0);
}

Test(cm, destroy_discards_untaken_events)
{
	struct openrdma_cm_event ev = {
		.event = OPENRDMA_CM_EVENT_DISCONNECTED
	};
	struct cm_rig c;

	cm_up(&c);
	cr_assert_eq(openrdma_cm_event_post(c.id, &ev), 0);
	cr_assert_eq(openrdma_cm_event_post(c.id, &ev), 0);
	cr_assert(readable(c.ch->fd));
	cr_assert_eq(openrdma_cm_id_destroy(c.id), 0);
	cr_assert_not(readable(c.ch->fd));
	cr_assert_eq(refs(c.ch), 1);
	cr_assert_eq(openrdma_cm_channel_destroy(c.ch), 0);
	cr_assert_eq(openrdma_context_close(c.ctx), 0);
}

static void post_during_destroy(struct openrdma_cm_id *id)
{
	struct openrdma_cm_event ev = {
		.event = OPENRDMA_CM_EVENT_TIMEWAIT_EXIT
	};

	cr_assert_eq(openrdma_cm_event_post(id, &ev), -OPENRDMA_ENOSPC);
}

Test(cm, posts_to_a_dying_id_are_refused)
{
	struct cm_rig c;

	cm_up(&c);
	fake.on_cm_id_destroy = post_during_destroy;
	cr_assert_eq(openrdma_cm_id_destroy(c.id), 0);
	cr_assert_not(readable(c.ch->fd));
	cr_assert_eq(openrdma_cm_channel_destroy(c.ch), 0);
	cr_assert_eq(openrdma_context_close(c.ctx), 0);
}

Test(cm, connect_request_and_listener)
{
	struct openrdma_cm_event
		ev = { .event = OPENRDMA_CM_EVENT_CONNECT_REQUEST },
		*got;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct openrdma_cm_id *req, *req2;
	struct cm_rig c;

	cm_up(&c);
	set_nonblock(c.ch->fd);
	cr_assert_eq(openrdma_cm_listen(c.id, (struct sockaddr *)&sin, 4), 0);
	cr_assert_eq(openrdma_cm_id_new_request(c.id, &req), 0);
	cr_assert_eq(req->channel, c.ch);
	cr_assert_eq(req->context, (void *)0x1d, "the listener's context");
	cr_assert_eq(req->ps, OPENRDMA_PS_TCP);
	cr_assert_eq(req->port_num, 1);

	ev.listen_id = c.id;
	cr_assert_eq(openrdma_cm_event_post(req, &ev), 0);
	cr_assert_eq(refs(req), 2);
	cr_assert_eq(refs(c.id), 2);
	cr_assert_eq(openrdma_cm_event_get(c.ch, &got), 0);
	cr_assert_eq(got->id, req);
	cr_assert_eq(got->listen_id, c.id);
	openrdma_cm_event_ack(got);
	cr_assert_eq(refs(c.id), 1);
	cr_assert_eq(openrdma_cm_id_destroy(req), 0);

	/* A request never taken goes with its listener. */
	cr_assert_eq(openrdma_cm_id_new_request(c.id, &req2), 0);
	cr_assert_eq(openrdma_cm_event_post(req2, &ev), 0);
	fake.cm_destroyed = 0;
	cr_assert_eq(openrdma_cm_id_destroy(c.id), 0);
	cr_assert_eq(fake.cm_destroyed, 2);
	cr_assert_not(readable(c.ch->fd));
	cr_assert_eq(refs(c.ch), 1);
	cr_assert_eq(openrdma_cm_channel_destroy(c.ch), 0);
	cr_assert_eq(openrdma_context_close(c.ctx), 0);
}

Test(cm, connected_id_holds_its_qp)
{
	struct openrdma_conn_param param = { .private_data = "hi",
					     .private_data_len = 2,
					     .initiator_depth = 1 };
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct openrdma_cm_id *id;
	struct openrdma_cm_channel *ch;
	struct rig r;

	rig_up(&r, OPENRDMA_QPT_RC);
	cr_assert_eq(openrdma_cm_channel_create(r.ctx, &ch), 0);
	cr_assert_eq(openrdma_cm_id_create(r.ctx, ch, NULL, OPENRDMA_PS_TCP,
					   &id),
		     0);

	fake.fail = -OPENRDMA_ECONNREFUSED;
	cr_assert_eq(openrdma_cm_connect(id, r.qp, (struct sockaddr *)&sin,
					 &param),
		     -OPENRDMA_ECONNREFUSED);
	cr_assert_null(id->qp);
	cr_assert_eq(refs(r.qp), 1);

	cr_assert_eq(openrdma_cm_connect(id, r.qp, (struct sockaddr *)&sin,
					 &param),
		     0);
	cr_assert_eq(id->qp, r.qp);
	cr_assert_eq(refs(r.qp), 2);
	cr_assert_eq(openrdma_qp_destroy(r.qp), -OPENRDMA_EBUSY);
	/* Completing a three-way handshake: the connect's QP. */
	cr_assert_eq(openrdma_cm_accept(id, NULL, NULL), 0);
	cr_assert_eq(refs(r.qp), 2);
	cr_assert_eq(openrdma_cm_disconnect(id, NULL, 0), 0);

	cr_assert_eq(openrdma_cm_id_destroy(id), 0);
	cr_assert_eq(refs(r.qp), 1);
	cr_assert_eq(openrdma_cm_channel_destroy(ch), 0);
	rig_down(&r);
}
