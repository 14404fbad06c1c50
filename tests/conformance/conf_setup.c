/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Per-test set-up and tear-down: the interface, mode and connection method
 * from the environment, side A's context, the peer, and the objects to
 * destroy at the end (newest first, each destroy expected to succeed).
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "conf.h"
#include "conf_sys.h"

/* Criterion runs each test in its own process: one fixture per process. */
static struct conf_test conf_the_test;
static bool conf_active;

const char *conf_mode_name(enum conf_mode mode)
{
	switch (mode) {
	case CONF_MODE_LOCAL:
		return "local";
	case CONF_MODE_THREAD:
		return "thread";
	case CONF_MODE_PROCESS:
		return "process";
	}
	return "?";
}

int conf_mode_parse(const char *s, enum conf_mode *mode)
{
	if (!s || !*s || !strcmp(s, "local"))
		*mode = CONF_MODE_LOCAL;
	else if (!strcmp(s, "thread"))
		*mode = CONF_MODE_THREAD;
	else if (!strcmp(s, "process"))
		*mode = CONF_MODE_PROCESS;
	else
		return -OPENRDMA_EINVAL;
	return 0;
}

int conf_connect_parse(const char *s, enum conf_connect *connect)
{
	if (!s || !*s || !strcmp(s, "cm"))
		*connect = CONF_CONNECT_CM;
	else if (!strcmp(s, "manual"))
		*connect = CONF_CONNECT_MANUAL;
	else
		return -OPENRDMA_EINVAL;
	return 0;
}

static void read_env(struct conf_test *t)
{
	const char *ifname = getenv("OPENRDMA_TEST_INTERFACE");
	const char *timeout = getenv("OPENRDMA_TEST_TIMEOUT");

	/* conf_main runs one interface per process and sets the variable */
	cr_assert(ifname && *ifname && strcmp(ifname, "all"),
		  "OPENRDMA_TEST_INTERFACE is not set to one interface");
	cr_assert_lt(strlen(ifname), sizeof(t->ifname));
	strcpy(t->ifname, ifname);
	cr_assert_eq(conf_mode_parse(getenv("OPENRDMA_TEST_MODE"), &t->mode), 0,
		     "OPENRDMA_TEST_MODE must be local, thread or process");
	cr_assert_eq(conf_connect_parse(getenv("OPENRDMA_TEST_CONNECT"),
					&t->connect),
		     0, "OPENRDMA_TEST_CONNECT must be cm or manual");
	t->timeout_ms = 5000;
	if (timeout && atoi(timeout) > 0)
		t->timeout_ms = atoi(timeout) * 1000;
}

static void open_peer(struct conf_test *t)
{
	struct conf_msg *req, *rep;
	int ret;

	ret = conf_peer_start(t->mode, &t->peer);
	cr_assert_eq(ret, 0, "cannot start the %s peer: %s",
		     conf_mode_name(t->mode), openrdma_strerror(ret));
	req = conf_peer_req(t->peer, CONF_OP_OPEN);
	strcpy(req->a.open.ifname, t->ifname);
	rep = conf_peer_do(t->peer);
	cr_assert_eq(rep->ret, 0, "peer cannot open %s: %s", t->ifname,
		     openrdma_strerror(rep->ret));
	t->pattr = rep->a.opened.attr;
	t->pport = rep->a.opened.port;
	t->ppd = rep->a.opened.pd;
	if (t->mode == CONF_MODE_PROCESS &&
	    !(t->pattr.device_cap_flags & OPENRDMA_DEVICE_CROSS_PROCESS))
		cr_skip_test("%s: process mode needs a transport that reaches "
			     "other processes (OPENRDMA_DEVICE_CROSS_PROCESS); "
			     "transport %s does not",
			     t->ifname, t->pattr.transport);
}

static void open_local(struct conf_test *t)
{
	int ret;

	ret = openrdma_device_find(t->ifname, &t->dev);
	cr_assert_eq(ret, 0, "no interface %s: %s", t->ifname,
		     openrdma_strerror(ret));
	CONF_OK(openrdma_device_open(t->dev, &t->ctx));
	CONF_OK(openrdma_device_query(t->ctx, &t->attr));
	CONF_OK(openrdma_port_query(t->ctx, 1, &t->port));
	t->pd = conf_pd_new(t);
	CONF_OK(openrdma_cm_channel_create(t->ctx, &t->cm_ch));
	conf_track(t, CONF_K_CM_CH, t->cm_ch);
	CONF_OK(conf_set_nonblock(t->cm_ch->fd));
}

struct conf_test *conf_setup(int flags)
{
	struct conf_test *t = &conf_the_test;

	memset(t, 0, sizeof(*t));
	conf_active = true;
	read_env(t);
	/* the peer first: a process peer must fork before we open anything */
	if (flags & CONF_WITH_PEER)
		open_peer(t);
	open_local(t);
	return t;
}

static int destroy_local(struct conf_tracked *o)
{
	struct conf_mem *m;
	int ret;

	switch (o->kind) {
	case CONF_K_PD:
		return openrdma_pd_dealloc(o->obj);
	case CONF_K_MR:
		return openrdma_mr_dereg(o->obj);
	case CONF_K_MW:
		return openrdma_mw_dealloc(o->obj);
	case CONF_K_CQ:
		return openrdma_cq_destroy(o->obj);
	case CONF_K_SRQ:
		return openrdma_srq_destroy(o->obj);
	case CONF_K_QP:
		return openrdma_qp_destroy(o->obj);
	case CONF_K_AH:
		return openrdma_ah_destroy(o->obj);
	case CONF_K_CM_ID:
		return openrdma_cm_id_destroy(o->obj);
	case CONF_K_COMP_CH:
		return openrdma_comp_channel_destroy(o->obj);
	case CONF_K_CM_CH:
		return openrdma_cm_channel_destroy(o->obj);
	case CONF_K_MEM:
		m = o->obj;
		ret = m->mr ? openrdma_mr_dereg(m->mr) : 0;
		if (ret)
			return ret;
		if (m->mapped)
			munmap(m->buf, m->len);
		else
			free(m->buf);
		free(m);
		return 0;
	default:
		return 0;
	}
}

void conf_teardown(void)
{
	struct conf_test *t = &conf_the_test;
	int i, ret;

	if (!conf_active)
		return;
	conf_active = false;
	for (i = t->ntracked - 1; i >= 0; i--) {
		if (!t->tracked[i].obj)
			continue;
		ret = destroy_local(&t->tracked[i]);
		cr_expect_eq(ret, 0, "teardown: destroying object kind %d: %s",
			     t->tracked[i].kind, openrdma_strerror(ret));
	}
	if (t->ctx) {
		ret = openrdma_context_close(t->ctx);
		cr_expect_eq(ret, 0, "teardown: context_close: %s",
			     openrdma_strerror(ret));
	}
	if (t->peer) {
		ret = conf_peer_stop(t->peer);
		cr_expect_eq(ret, 0, "teardown: peer cleanup: %s",
			     openrdma_strerror(ret));
	}
}

/* The name of one OPENRDMA_DEVICE_* flag, for skip reasons. */
static const char *cap_name(uint32_t cap)
{
	static const struct {
		uint32_t cap;
		const char *name;
	} names[] = {
		{ OPENRDMA_DEVICE_RC, "RC" },
		{ OPENRDMA_DEVICE_UD, "UD" },
		{ OPENRDMA_DEVICE_SRQ, "SRQ" },
		{ OPENRDMA_DEVICE_MW_TYPE1, "MW_TYPE1" },
		{ OPENRDMA_DEVICE_MW_TYPE2, "MW_TYPE2" },
		{ OPENRDMA_DEVICE_SEND_INV, "SEND_INV" },
		{ OPENRDMA_DEVICE_ZERO_BASED, "ZERO_BASED" },
		{ OPENRDMA_DEVICE_THREE_WAY, "THREE_WAY" },
		{ OPENRDMA_DEVICE_RNR_RETRY, "RNR_RETRY" },
		{ OPENRDMA_DEVICE_SRQ_LIMIT, "SRQ_LIMIT" },
		{ OPENRDMA_DEVICE_CROSS_PROCESS, "CROSS_PROCESS" },
		{ OPENRDMA_DEVICE_CROSS_HOST, "CROSS_HOST" },
		{ OPENRDMA_DEVICE_PEER_CAN_READ_RMR, "PEER_CAN_READ_RMR" },
		{ OPENRDMA_DEVICE_IMM, "IMM" },
		{ OPENRDMA_DEVICE_EXACT_ERRORS, "EXACT_ERRORS" },
		{ OPENRDMA_DEVICE_SOLICITED, "SOLICITED" },
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].cap == cap)
			return names[i].name;
	return "?";
}

static const char *node_name(enum openrdma_node_transport node)
{
	switch (node) {
	case OPENRDMA_NODE_SOFTWARE:
		return "software";
	case OPENRDMA_NODE_IB:
		return "InfiniBand/RoCE";
	case OPENRDMA_NODE_IWARP:
		return "iWARP";
	}
	return "unknown node type";
}

/*
 * The reason comes from the device's attributes: which flag its
 * device_cap_flags lack, and what the device is.
 */
void conf_require_cap(struct conf_test *t, uint32_t cap, const char *what)
{
	if (!(t->attr.device_cap_flags & cap))
		cr_skip_test("%s: needs %s: device_cap_flags %#x of transport "
			     "%s (%s, vendor %#x) lack OPENRDMA_DEVICE_%s",
			     t->ifname, what, t->attr.device_cap_flags,
			     t->attr.transport,
			     node_name(t->attr.node_transport),
			     t->attr.vendor_id, cap_name(cap));
}

void conf_skip_no_reset(struct conf_test *t, int ret)
{
	if (ret == -OPENRDMA_EOPNOTSUPP)
		cr_skip_test("%s: transport %s (%s, vendor %#x) cannot return "
			     "a QP to RESET: modify to RESET is "
			     "-OPENRDMA_EOPNOTSUPP (%s)",
			     t->ifname, t->attr.transport,
			     node_name(t->attr.node_transport),
			     t->attr.vendor_id, openrdma_strerror(ret));
}

int conf_remote_access(const struct conf_test *t)
{
	int access = OPENRDMA_ACCESS_LOCAL_WRITE |
		     OPENRDMA_ACCESS_REMOTE_WRITE | OPENRDMA_ACCESS_REMOTE_READ;

	/* registering for atomics is refused where there are none */
	if (t->attr.atomic_cap != OPENRDMA_ATOMIC_NONE)
		access |= OPENRDMA_ACCESS_REMOTE_ATOMIC;
	return access;
}

void conf_require_atomics(struct conf_test *t)
{
	if (t->attr.atomic_cap == OPENRDMA_ATOMIC_NONE)
		cr_skip_test(
			"%s: transport %s has no atomics (atomic_cap NONE)",
			t->ifname, t->attr.transport);
}

void conf_track(struct conf_test *t, int kind, void *obj)
{
	cr_assert_lt(t->ntracked, CONF_MAX_TRACKED, "too many objects");
	t->tracked[t->ntracked++] = (struct conf_tracked){ kind, obj };
}

void conf_untrack(struct conf_test *t, void *obj)
{
	int i;

	for (i = t->ntracked - 1; i >= 0; i--) {
		if (t->tracked[i].obj == obj) {
			t->tracked[i].obj = NULL;
			return;
		}
	}
}

struct conf_mem *conf_mem_new(struct conf_test *t, struct openrdma_pd *pd,
			      size_t len, int access, unsigned int seed)
{
	struct conf_mem *m = calloc(1, sizeof(*m));

	cr_assert_not_null(m);
	m->len = len;
	m->buf = aligned_alloc(4096, (len + 4096) & ~(size_t)4095);
	cr_assert_not_null(m->buf);
	conf_fill(m->buf, len, seed, 0);
	conf_track(t, CONF_K_MEM, m);
	CONF_OK(openrdma_mr_reg(pd, m->buf, len, access, &m->mr));
	return m;
}

struct conf_mem *conf_mem_map(struct conf_test *t, struct openrdma_pd *pd,
			      size_t len, int access)
{
	struct conf_mem *m = calloc(1, sizeof(*m));
	void *p;
	int ret;

	cr_assert_not_null(m);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		free(m);
		cr_skip_test("cannot reserve %zu bytes of address space", len);
	}
	*m = (struct conf_mem){ .buf = p, .len = len, .mapped = true };
	conf_track(t, CONF_K_MEM, m);
	ret = openrdma_mr_reg(pd, m->buf, len, access, &m->mr);
	/* devices that pin at registration need the memory itself */
	if (ret == -OPENRDMA_ENOMEM)
		cr_skip_test("%s: cannot register %zu bytes of untouched "
			     "memory: %s",
			     t->ifname, len, openrdma_strerror(ret));
	CONF_OK(ret);
	return m;
}

struct openrdma_pd *conf_pd_new(struct conf_test *t)
{
	struct openrdma_pd *pd;

	CONF_OK(openrdma_pd_alloc(t->ctx, &pd));
	conf_track(t, CONF_K_PD, pd);
	return pd;
}

struct openrdma_cq *conf_cq_new(struct conf_test *t, int cqe,
				struct openrdma_comp_channel *ch,
				void *cq_context)
{
	struct openrdma_cq *cq;

	CONF_OK(openrdma_cq_create(t->ctx, cqe, cq_context, ch, 0, &cq));
	cr_assert_eq(cq->cq_context, cq_context);
	cr_assert_eq(cq->channel, ch);
	cr_assert_geq(cq->cqe, cqe, "CQ granted %d < %d entries", cq->cqe, cqe);
	conf_track(t, CONF_K_CQ, cq);
	return cq;
}

struct openrdma_qp *conf_qp_new(struct conf_test *t,
				struct openrdma_qp_init_attr *init)
{
	struct openrdma_qp_cap want = init->cap;
	struct openrdma_qp *qp;

	CONF_OK(openrdma_qp_create(t->pd, init, &qp));
	conf_track(t, CONF_K_QP, qp);
	/* a QP on an SRQ has no receive queue of its own */
	cr_assert(init->cap.max_send_wr >= want.max_send_wr &&
			  (init->srq ||
			   (init->cap.max_recv_wr >= want.max_recv_wr &&
			    init->cap.max_recv_sge >= want.max_recv_sge)) &&
			  init->cap.max_send_sge >= want.max_send_sge &&
			  init->cap.max_inline_data >= want.max_inline_data,
		  "QP granted less than asked");
	cr_assert_eq(conf_qp_state(qp), OPENRDMA_QPS_RESET);
	return qp;
}

enum openrdma_qp_state conf_qp_state(struct openrdma_qp *qp)
{
	struct openrdma_qp_init_attr init;
	struct openrdma_qp_attr attr;

	CONF_OK(openrdma_qp_query(qp, &attr, OPENRDMA_QP_STATE, &init));
	return attr.qp_state;
}
