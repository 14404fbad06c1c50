/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Side B's verbs, one request each.  The helpers that return an object
 * assert that it was created; those that return an int let the test check
 * the code.
 */
#include <stdlib.h>

#include "conf.h"

#define PEER_OK(rep, what)                                    \
	cr_assert_eq((rep)->ret, 0, "peer %s: %s (%d)", what, \
		     openrdma_strerror((rep)->ret), (rep)->ret)

uint32_t conf_peer_pd_alloc(struct conf_test *t)
{
	struct conf_msg *rep;

	conf_peer_req(t->peer, CONF_OP_PD_ALLOC);
	rep = conf_peer_do(t->peer);
	PEER_OK(rep, "pd_alloc");
	return rep->a.obj.id;
}

struct conf_pmr conf_peer_mr_reg(struct conf_test *t, uint32_t pd, uint64_t len,
				 int access, unsigned int seed)
{
	struct conf_msg *req = conf_peer_req(t->peer, CONF_OP_MR_REG);
	struct conf_msg *rep;

	req->a.mr.pd = pd;
	req->a.mr.len = len;
	req->a.mr.access = (uint32_t)access;
	req->a.mr.seed = seed;
	rep = conf_peer_do(t->peer);
	PEER_OK(rep, "mr_reg");
	return (struct conf_pmr){ .id = rep->a.mr.id,
				  .access = access,
				  .addr = rep->a.mr.addr,
				  .len = len,
				  .lkey = rep->a.mr.lkey,
				  .rkey = rep->a.mr.rkey,
				  .seed = seed };
}

void conf_peer_mem_read(struct conf_test *t, const struct conf_pmr *m,
			uint64_t off, void *buf, uint64_t len)
{
	struct conf_msg *req, *rep;
	uint64_t n;

	while (len) {
		n = len < CONF_DATA_MAX ? len : CONF_DATA_MAX;
		req = conf_peer_req(t->peer, CONF_OP_MEM_READ);
		req->a.mem.mr = m->id;
		req->a.mem.off = off;
		req->a.mem.len = n;
		rep = conf_peer_do(t->peer);
		PEER_OK(rep, "mem_read");
		cr_assert_eq(rep->data_len, n);
		memcpy(buf, rep->data, n);
		buf = (uint8_t *)buf + n;
		off += n;
		len -= n;
	}
}

void conf_peer_mem_write(struct conf_test *t, const struct conf_pmr *m,
			 uint64_t off, const void *buf, uint64_t len)
{
	struct conf_msg *req, *rep;
	uint64_t n;

	while (len) {
		n = len < CONF_DATA_MAX ? len : CONF_DATA_MAX;
		req = conf_peer_req(t->peer, CONF_OP_MEM_WRITE);
		req->a.mem.mr = m->id;
		req->a.mem.off = off;
		req->data_len = (uint32_t)n;
		memcpy(req->data, buf, n);
		rep = conf_peer_do(t->peer);
		PEER_OK(rep, "mem_write");
		buf = (const uint8_t *)buf + n;
		off += n;
		len -= n;
	}
}

void conf_peer_mem_expect(struct conf_test *t, const struct conf_pmr *m,
			  uint64_t off, uint64_t len, unsigned int seed,
			  size_t first)
{
	uint8_t *buf = malloc(len ? len : 1);
	long bad;

	cr_assert_not_null(buf);
	conf_peer_mem_read(t, m, off, buf, len);
	bad = conf_check(buf, len, seed, first);
	free(buf);
	cr_assert_eq(
		bad, -1,
		"peer memory: byte %ld of [%llu, +%llu) differs from pattern %u",
		bad, (unsigned long long)off, (unsigned long long)len, seed);
}

void conf_peer_mem_restore(struct conf_test *t, const struct conf_pmr *m,
			   uint64_t off, uint64_t len)
{
	uint8_t *buf = malloc(len ? len : 1);

	cr_assert_not_null(buf);
	conf_fill(buf, len, m->seed, off);
	conf_peer_mem_write(t, m, off, buf, len);
	free(buf);
}

void conf_peer_mem_untouched(struct conf_test *t, const struct conf_pmr *m)
{
	conf_peer_mem_expect(t, m, 0, m->len, m->seed, 0);
}

uint32_t conf_peer_cq_create(struct conf_test *t, int cqe)
{
	struct conf_msg *req = conf_peer_req(t->peer, CONF_OP_CQ_CREATE);
	struct conf_msg *rep;

	req->a.cq.cqe = cqe;
	rep = conf_peer_do(t->peer);
	PEER_OK(rep, "cq_create");
	cr_assert_geq(rep->a.cq.cqe, cqe, "peer CQ granted %d < %d entries",
		      rep->a.cq.cqe, cqe);
	return rep->a.cq.id;
}

struct conf_pqp conf_peer_qp_create(struct conf_test *t, uint32_t pd,
				    enum openrdma_qp_type type, uint32_t scq,
				    uint32_t rcq, uint32_t srq,
				    const struct openrdma_qp_cap *cap,
				    int sq_sig_all)
{
	struct conf_msg *req = conf_peer_req(t->peer, CONF_OP_QP_CREATE);
	struct conf_msg *rep;

	req->a.qp.pd = pd;
	req->a.qp.type = type;
	req->a.qp.scq = scq;
	req->a.qp.rcq = rcq;
	req->a.qp.srq = srq;
	req->a.qp.cap = *cap;
	req->a.qp.sq_sig_all = sq_sig_all;
	rep = conf_peer_do(t->peer);
	PEER_OK(rep, "qp_create");
	return (struct conf_pqp){ .id = rep->a.qp.id,
				  .qpn = rep->a.qp.qpn,
				  .cap = rep->a.qp.cap };
}

int conf_peer_qp_modify(struct conf_test *t, uint32_t qp,
			const struct openrdma_qp_attr *attr, int mask)
{
	struct conf_msg *req = conf_peer_req(t->peer, CONF_OP_QP_MODIFY);

	req->a.qp_attr.id = qp;
	req->a.qp_attr.attr = *attr;
	req->a.qp_attr.mask = mask;
	return conf_peer_do(t->peer)->ret;
}

enum openrdma_qp_state conf_peer_qp_state(struct conf_test *t, uint32_t qp)
{
	struct conf_msg *req = conf_peer_req(t->peer, CONF_OP_QP_QUERY);
	struct conf_msg *rep;

	req->a.qp_attr.id = qp;
	rep = conf_peer_do(t->peer);
	PEER_OK(rep, "qp_query");
	return rep->a.qp_attr.attr.qp_state;
}

void conf_peer_state_expect(struct conf_test *t, uint32_t qp,
			    enum openrdma_qp_state want)
{
	enum openrdma_qp_state got = conf_peer_qp_state(t, qp);

	cr_assert_eq(got, want, "peer QP is in %s, want %s",
		     openrdma_qp_state_str(got), openrdma_qp_state_str(want));
}

static int post(struct conf_test *t, enum conf_op op, uint32_t id, bool srq,
		const void *wr, size_t size, int n, int *bad)
{
	struct conf_msg *req = conf_peer_req(t->peer, op);
	struct conf_msg *rep;

	cr_assert(n > 0 && (size_t)n * size <= CONF_DATA_MAX);
	req->a.post.id = id;
	req->a.post.srq = srq;
	req->a.post.count = (uint32_t)n;
	req->data_len = (uint32_t)(n * size);
	memcpy(req->data, wr, req->data_len);
	rep = conf_peer_do(t->peer);
	if (bad)
		*bad = rep->a.post.bad;
	return rep->ret;
}

int conf_peer_post_send(struct conf_test *t, uint32_t qp,
			const struct conf_wire_send *wr, int n, int *bad)
{
	return post(t, CONF_OP_POST_SEND, qp, false, wr, sizeof(*wr), n, bad);
}

int conf_peer_post_recv(struct conf_test *t, uint32_t qp, bool srq,
			const struct conf_wire_recv *wr, int n, int *bad)
{
	return post(t, CONF_OP_POST_RECV, qp, srq, wr, sizeof(*wr), n, bad);
}

static void recv1(struct conf_test *t, uint32_t id, bool srq, uint64_t wr_id,
		  const struct conf_pmr *m, uint64_t off, uint32_t len)
{
	struct conf_wire_recv wr = { .wr_id = wr_id, .num_sge = 1 };
	int ret;

	wr.sge[0] = conf_psge(m, off, len);
	ret = conf_peer_post_recv(t, id, srq, &wr, 1, NULL);
	cr_assert_eq(ret, 0, "peer post_recv: %s", openrdma_strerror(ret));
}

void conf_peer_recv(struct conf_test *t, uint32_t qp, uint64_t wr_id,
		    const struct conf_pmr *m, uint64_t off, uint32_t len)
{
	recv1(t, qp, false, wr_id, m, off, len);
}

void conf_peer_srq_recv(struct conf_test *t, uint32_t srq, uint64_t wr_id,
			const struct conf_pmr *m, uint64_t off, uint32_t len)
{
	recv1(t, srq, true, wr_id, m, off, len);
}

int conf_peer_poll(struct conf_test *t, uint32_t cq, int n,
		   struct openrdma_wc *wc, int timeout_ms)
{
	struct conf_msg *req = conf_peer_req(t->peer, CONF_OP_POLL);
	struct conf_msg *rep;

	req->a.poll.cq = cq;
	req->a.poll.max = n;
	req->a.poll.timeout_ms = timeout_ms;
	rep = conf_peer_do(t->peer);
	if (rep->ret > 0)
		memcpy(wc, rep->data, (size_t)rep->ret * sizeof(*wc));
	return rep->ret;
}

void conf_peer_poll_n(struct conf_test *t, uint32_t cq, int n,
		      struct openrdma_wc *wc)
{
	struct openrdma_wc extra;
	int ret;

	ret = conf_peer_poll(t, cq, n, wc, t->timeout_ms);
	cr_assert_eq(ret, n, "peer CQ: %d completions (%s), want %d", ret,
		     ret < 0 ? openrdma_strerror(ret) : "ok", n);
	ret = conf_peer_poll(t, cq, 1, &extra, 0);
	cr_assert_eq(ret, 0, "peer CQ: unexpected completion wr_id %llu (%s)",
		     (unsigned long long)extra.wr_id,
		     openrdma_wc_status_str(extra.status));
}

void conf_peer_poll_none(struct conf_test *t, uint32_t cq)
{
	struct openrdma_wc wc;
	int ret;

	ret = conf_peer_poll(t, cq, 1, &wc, CONF_QUIET_MS);
	cr_assert_eq(ret, 0, "peer CQ: unexpected completion wr_id %llu (%s)",
		     ret > 0 ? (unsigned long long)wc.wr_id : 0ULL,
		     ret > 0 ? openrdma_wc_status_str(wc.status) :
			       openrdma_strerror(ret));
}

int conf_peer_async_get(struct conf_test *t, int timeout_ms,
			struct conf_pasync *ev)
{
	struct conf_msg *req = conf_peer_req(t->peer, CONF_OP_ASYNC_GET);
	struct conf_msg *rep;

	req->a.async.timeout_ms = timeout_ms;
	rep = conf_peer_do(t->peer);
	if (!rep->ret)
		*ev = (struct conf_pasync){ rep->a.async.type,
					    rep->a.async.kind,
					    rep->a.async.id };
	return rep->ret;
}

void conf_peer_async_expect(struct conf_test *t, enum openrdma_event_type type,
			    uint32_t kind, uint32_t id)
{
	struct conf_pasync ev;
	int ret;

	ret = conf_peer_async_get(t, t->timeout_ms, &ev);
	cr_assert_eq(ret, 0, "peer: no async event %s: %s",
		     openrdma_event_type_str(type), openrdma_strerror(ret));
	cr_assert_eq(ev.type, type, "peer async event %s, want %s",
		     openrdma_event_type_str(ev.type),
		     openrdma_event_type_str(type));
	cr_assert_eq(ev.kind, kind);
	cr_assert_eq(ev.id, id, "peer async event %s on object %u, want %u",
		     openrdma_event_type_str(type), ev.id, id);
}

void conf_peer_async_none(struct conf_test *t)
{
	struct conf_pasync ev;
	int ret;

	ret = conf_peer_async_get(t, CONF_QUIET_MS, &ev);
	cr_assert_eq(ret, -OPENRDMA_EAGAIN, "peer: unexpected async event %s",
		     ret ? openrdma_strerror(ret) :
			   openrdma_event_type_str(ev.type));
}

uint32_t conf_peer_mw_alloc(struct conf_test *t, uint32_t pd,
			    enum openrdma_mw_type type, uint32_t *rkey)
{
	struct conf_msg *req = conf_peer_req(t->peer, CONF_OP_MW_ALLOC);
	struct conf_msg *rep;

	req->a.mw.pd = pd;
	req->a.mw.type = type;
	rep = conf_peer_do(t->peer);
	PEER_OK(rep, "mw_alloc");
	if (rkey)
		*rkey = rep->a.mw.rkey;
	return rep->a.mw.id;
}

int conf_peer_mw_bind(struct conf_test *t, uint32_t qp, uint32_t mw,
		      const struct conf_pmr *m, uint64_t off, uint64_t len,
		      int access, uint64_t wr_id, uint32_t *rkey)
{
	struct conf_msg *req = conf_peer_req(t->peer, CONF_OP_MW_BIND);
	struct conf_msg *rep;

	req->a.mw_bind.qp = qp;
	req->a.mw_bind.mw = mw;
	req->a.mw_bind.mr = m ? m->id : 0;
	req->a.mw_bind.off = off;
	req->a.mw_bind.len = len;
	req->a.mw_bind.access = (uint32_t)access;
	req->a.mw_bind.wr_id = wr_id;
	req->a.mw_bind.send_flags = OPENRDMA_SEND_SIGNALED;
	rep = conf_peer_do(t->peer);
	if (rkey)
		*rkey = rep->a.mw_bind.rkey;
	return rep->ret;
}

uint32_t conf_peer_mw_rkey(struct conf_test *t, uint32_t mw)
{
	struct conf_msg *req = conf_peer_req(t->peer, CONF_OP_MW_RKEY);
	struct conf_msg *rep;

	req->a.mw.id = mw;
	rep = conf_peer_do(t->peer);
	PEER_OK(rep, "mw rkey");
	return rep->a.mw.rkey;
}

uint32_t conf_peer_srq_create(struct conf_test *t, uint32_t pd, uint32_t max_wr,
			      uint32_t max_sge)
{
	struct conf_msg *req = conf_peer_req(t->peer, CONF_OP_SRQ_CREATE);
	struct conf_msg *rep;

	req->a.srq.pd = pd;
	req->a.srq.attr.max_wr = max_wr;
	req->a.srq.attr.max_sge = max_sge;
	rep = conf_peer_do(t->peer);
	PEER_OK(rep, "srq_create");
	return rep->a.srq.id;
}

int conf_peer_srq_modify(struct conf_test *t, uint32_t srq,
			 const struct openrdma_srq_attr *attr, int mask)
{
	struct conf_msg *req = conf_peer_req(t->peer, CONF_OP_SRQ_MODIFY);

	req->a.srq.id = srq;
	req->a.srq.attr = *attr;
	req->a.srq.mask = mask;
	return conf_peer_do(t->peer)->ret;
}

uint32_t conf_peer_ah_create(struct conf_test *t, uint32_t pd,
			     const struct openrdma_ah_attr *attr)
{
	struct conf_msg *req = conf_peer_req(t->peer, CONF_OP_AH_CREATE);
	struct conf_msg *rep;

	req->a.ah.pd = pd;
	req->a.ah.attr = *attr;
	rep = conf_peer_do(t->peer);
	PEER_OK(rep, "ah_create");
	return rep->a.ah.id;
}

int conf_peer_ah_from_wc(struct conf_test *t, uint32_t pd,
			 const struct openrdma_wc *wc, const struct conf_pmr *m,
			 uint64_t off, uint32_t *ah_out)
{
	struct conf_msg *req = conf_peer_req(t->peer, CONF_OP_AH_FROM_WC);
	struct conf_msg *rep;

	req->a.ah_wc.pd = pd;
	req->a.ah_wc.wc = *wc;
	req->a.ah_wc.mr = m->id;
	req->a.ah_wc.off = off;
	rep = conf_peer_do(t->peer);
	if (!rep->ret)
		*ah_out = rep->a.ah_wc.id;
	return rep->ret;
}

uint32_t conf_peer_cm_listen(struct conf_test *t, int backlog,
			     struct sockaddr_storage *addr)
{
	struct conf_msg *req = conf_peer_req(t->peer, CONF_OP_CM_LISTEN);
	struct conf_msg *rep;

	req->a.listen.backlog = backlog;
	req->a.listen.addr = t->pport.addr;
	conf_addr_set_port(&req->a.listen.addr, 0);
	rep = conf_peer_do(t->peer);
	PEER_OK(rep, "cm_listen");
	*addr = rep->a.listen.addr;
	return rep->a.listen.id;
}

static struct conf_msg *cm_req(struct conf_test *t, enum conf_op op,
			       uint32_t id, uint32_t qp,
			       const struct conf_wire_param *param)
{
	struct conf_msg *req = conf_peer_req(t->peer, op);

	req->a.cm.id = id;
	req->a.cm.qp = qp;
	if (param)
		req->a.cm.param = *param;
	else
		req->a.cm.param.no_param = 1;
	return req;
}

int conf_peer_cm_connect(struct conf_test *t, uint32_t qp,
			 const struct sockaddr_storage *dst,
			 const struct conf_wire_param *param, uint32_t *id)
{
	struct conf_msg *req = cm_req(t, CONF_OP_CM_CONNECT, 0, qp, param);
	struct conf_msg *rep;

	req->a.cm.dst = *dst;
	rep = conf_peer_do(t->peer);
	*id = rep->a.cm.id;
	return rep->ret;
}

int conf_peer_cm_accept(struct conf_test *t, uint32_t id, uint32_t qp,
			const struct conf_wire_param *param)
{
	cm_req(t, CONF_OP_CM_ACCEPT, id, qp, param);
	return conf_peer_do(t->peer)->ret;
}

static int cm_pdata_call(struct conf_test *t, enum conf_op op, uint32_t id,
			 const void *pdata, uint8_t len)
{
	struct conf_wire_param param = { .pdata_len = len };

	if (pdata) {
		param.has_pdata = 1;
		memcpy(param.pdata, pdata, len);
	}
	cm_req(t, op, id, 0, &param);
	return conf_peer_do(t->peer)->ret;
}

int conf_peer_cm_reject(struct conf_test *t, uint32_t id, const void *pdata,
			uint8_t len)
{
	return cm_pdata_call(t, CONF_OP_CM_REJECT, id, pdata, len);
}

int conf_peer_cm_disconnect(struct conf_test *t, uint32_t id, const void *pdata,
			    uint8_t len)
{
	return cm_pdata_call(t, CONF_OP_CM_DISCONNECT, id, pdata, len);
}

int conf_peer_cm_event(struct conf_test *t, int timeout_ms,
		       struct conf_wire_cm_event *ev)
{
	struct conf_msg *req = conf_peer_req(t->peer, CONF_OP_CM_EVENT);
	struct conf_msg *rep;

	req->a.cm_event.timeout_ms = timeout_ms;
	rep = conf_peer_do(t->peer);
	if (!rep->ret)
		*ev = rep->a.cm_event.ev;
	return rep->ret;
}

void conf_peer_cm_expect(struct conf_test *t, enum openrdma_cm_event_type type,
			 struct conf_wire_cm_event *ev)
{
	int ret;

	ret = conf_peer_cm_event(t, t->timeout_ms, ev);
	cr_assert_eq(ret, 0, "peer: no CM event %s: %s",
		     openrdma_cm_event_str(type), openrdma_strerror(ret));
	cr_assert_eq(ev->type, type, "peer CM event %s (status %d), want %s",
		     openrdma_cm_event_str(ev->type), ev->status,
		     openrdma_cm_event_str(type));
}

void conf_peer_cm_none(struct conf_test *t)
{
	struct conf_wire_cm_event ev;
	int ret;

	ret = conf_peer_cm_event(t, CONF_QUIET_MS, &ev);
	cr_assert_eq(ret, -OPENRDMA_EAGAIN, "peer: unexpected CM event %s",
		     ret ? openrdma_strerror(ret) :
			   openrdma_cm_event_str(ev.type));
}

int conf_peer_destroy(struct conf_test *t, enum conf_kind kind, uint32_t id)
{
	struct conf_msg *req = conf_peer_req(t->peer, CONF_OP_DESTROY);

	req->a.destroy.kind = kind;
	req->a.destroy.id = id;
	return conf_peer_do(t->peer)->ret;
}
