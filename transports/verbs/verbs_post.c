/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The data path.  A send list becomes one array of ibv_send_wr, on the
 * stack for up to VERBS_POST_STACK requests and in the QP's preallocated
 * array for longer lists, and goes to the device in one ibv_post_send().
 * Receive lists and SGEs have libibverbs' layout and are passed as they
 * are (verbs_abi.c).  Nothing here allocates.
 *
 * Two things split a list: a request that openrdma_send_wr_check()
 * refuses (those before it are posted, as the semantics require), and a
 * type 1 window bind, which libibverbs posts through ibv_bind_mw().
 */
#include <string.h>

#include "transports/verbs/verbs.h"

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

static inline enum openrdma_qp_state qp_state(const struct openrdma_qp *qp)
{
	return atomic_load_explicit(&qp->state, memory_order_relaxed);
}

/* openrdma_mw_bind()'s request: libibverbs binds those by ibv_bind_mw() */
static inline bool is_mw1_bind(const struct openrdma_send_wr *wr)
{
	return wr->send_flags & OPENRDMA_SEND_TYPE1_BIND;
}

static void bind_info_translate(struct ibv_mw_bind_info *ib,
				const struct openrdma_mw_bind_info *info)
{
	struct verbs_mr *vmr = info->mr ? to_verbs_mr(info->mr) : NULL;

	/* windows bind to the MR that local accesses use (verbs_reg.c) */
	ib->mr = vmr && vmr->reg ? vmr->reg->local : NULL;
	ib->addr = info->addr;
	ib->length = info->length;
	ib->mw_access_flags = info->mw_access_flags;
}

/* Returns true for a BIND_MW, whose window's key changes once posted. */
static inline bool send_wr_translate(const struct openrdma_qp *qp,
				     struct ibv_send_wr *ib,
				     const struct openrdma_send_wr *wr)
{
	ib->wr_id = wr->wr_id;
	ib->sg_list = (struct ibv_sge *)wr->sg_list;
	ib->num_sge = wr->num_sge;
	ib->opcode = (enum ibv_wr_opcode)wr->opcode;
	ib->send_flags = wr->send_flags;
	ib->imm_data = wr->imm_data;
	memcpy(&ib->wr, &wr->wr, sizeof(ib->wr));
	if (qp->qp_type == OPENRDMA_QPT_UD)
		ib->wr.ud.ah = to_verbs_ah(wr->wr.ud.ah)->ibah;
	if (likely(wr->opcode != OPENRDMA_WR_BIND_MW))
		return false;
	ib->bind_mw.mw = to_verbs_mw(wr->bind_mw.mw)->ibmw;
	ib->bind_mw.rkey = wr->bind_mw.rkey;
	bind_info_translate(&ib->bind_mw.bind_info, &wr->bind_mw.bind_info);
	return true;
}

/* iWARP (RDMAP) has no immediate data: not supported, not malformed. */
static inline bool imm_refused(const struct verbs_qp *vqp,
			       const struct openrdma_send_wr *wr)
{
	return vqp->no_imm && (wr->opcode == OPENRDMA_WR_SEND_WITH_IMM ||
			       wr->opcode == OPENRDMA_WR_RDMA_WRITE_WITH_IMM);
}

/*
 * Translates and links the requests from *wrp into ib[0..max).  Stops at
 * the end of the list, at a request that is refused (*err) or at a type 1
 * bind; *wrp is then the first request not translated.
 */
static inline unsigned int
list_translate(const struct verbs_qp *vqp, struct openrdma_send_wr **wrp,
	       struct ibv_send_wr *ib, unsigned int max, int *err, bool *binds)
{
	const struct openrdma_qp *qp = &vqp->base;
	struct openrdma_send_wr *wr = *wrp;
	unsigned int n = 0;

	*err = 0;
	*binds = false;
	for (; wr && n < max; wr = wr->next) {
		*err = openrdma_send_wr_check(qp, wr);
		if (unlikely(!*err && imm_refused(vqp, wr)))
			*err = -OPENRDMA_EOPNOTSUPP;
		if (unlikely(*err || is_mw1_bind(wr)))
			break;
		*binds |= send_wr_translate(qp, &ib[n], wr);
		ib[n].next = &ib[n + 1];
		n++;
	}
	if (n)
		ib[n - 1].next = NULL;
	*wrp = wr;
	return n;
}

/*
 * A posted bind gives the window its new key.  libibverbs leaves the
 * ibv_mw's alone, and a provider names the window of the next bind by it
 * (librxe: the kernel refuses a key that is not the window's current).
 */
static void binds_settle(struct openrdma_send_wr *wr, unsigned int n)
{
	for (; n; n--, wr = wr->next) {
		if (wr->opcode != OPENRDMA_WR_BIND_MW)
			continue;
		wr->bind_mw.mw->rkey = wr->bind_mw.rkey;
		to_verbs_mw(wr->bind_mw.mw)->ibmw->rkey = wr->bind_mw.rkey;
	}
}

/* Posts n translated requests of the list that starts at first. */
static inline int list_post(struct verbs_qp *vqp,
			    struct openrdma_send_wr *first,
			    struct ibv_send_wr *ib, unsigned int n, bool binds,
			    struct openrdma_send_wr **bad_wr)
{
	struct openrdma_send_wr *bad = first;
	struct ibv_send_wr *ibbad = ib;
	long i;
	int ret;

	ret = ibv_post_send(vqp->ibqp, ib, &ibbad);
	if (likely(!ret)) {
		if (unlikely(binds))
			binds_settle(first, n);
		return 0;
	}
	for (i = ibbad - ib; i > 0; i--)
		bad = bad->next;
	if (binds)
		binds_settle(first, (unsigned int)(ibbad - ib));
	*bad_wr = bad;
	return verbs_ret(ret);
}

static int mw1_bind(struct verbs_qp *vqp, const struct openrdma_send_wr *wr)
{
	struct verbs_mw *vmw = to_verbs_mw(wr->bind_mw.mw);
	struct ibv_mw_bind bind;
	int ret;

	memset(&bind, 0, sizeof(bind));
	bind.wr_id = wr->wr_id;
	bind.send_flags = wr->send_flags & ~OPENRDMA_SEND_TYPE1_BIND;
	bind_info_translate(&bind.bind_info, &wr->bind_mw.bind_info);
	if (!bind.bind_info.length && !bind.bind_info.mr)
		bind.bind_info.mr = vmw->bound_mr;
	ret = ibv_bind_mw(vqp->ibqp, vmw->ibmw, &bind);
	if (ret)
		return verbs_ret(ret);
	/* the provider chose the new key */
	vmw->base.rkey = vmw->ibmw->rkey;
	vmw->bound_mr = bind.bind_info.length ? bind.bind_info.mr : NULL;
	return 0;
}

/* Lists that do not fit the stack, refused requests and type 1 binds. */
static int post_slow(struct verbs_qp *vqp, struct openrdma_send_wr *wr,
		     struct openrdma_send_wr **bad_wr)
{
	struct ibv_send_wr stack[VERBS_POST_STACK], *ib = stack;
	unsigned int max = VERBS_POST_STACK, n;
	struct openrdma_send_wr *first;
	int ret = 0, err;
	bool binds;

	if (vqp->list) {
		core_lock_acquire(&vqp->post_lock);
		ib = vqp->list;
		max = vqp->list_max;
	}
	while (wr) {
		first = wr;
		n = list_translate(vqp, &wr, ib, max, &err, &binds);
		if (n) {
			ret = list_post(vqp, first, ib, n, binds, bad_wr);
			if (ret)
				break;
		}
		if (!wr)
			break;
		if (err) {
			*bad_wr = wr;
			ret = err;
			break;
		}
		if (is_mw1_bind(wr)) {
			ret = mw1_bind(vqp, wr);
			if (ret) {
				*bad_wr = wr;
				break;
			}
			wr = wr->next;
		}
		/* else: the array is full, post the next chunk */
	}
	if (vqp->list)
		core_lock_release(&vqp->post_lock);
	return ret;
}

/*
 * A QP not in RTS: sends are refused in RESET, INIT and RTR; in ERR the
 * requests are checked and flushed (verbs_flush.c); SQD and SQE take them.
 */
static int post_not_rts(struct verbs_qp *vqp, enum openrdma_qp_state state,
			struct openrdma_send_wr *wr,
			struct openrdma_send_wr **bad_wr)
{
	struct openrdma_send_wr *bad, *prev = NULL;
	int ret = 0;

	if (state <= OPENRDMA_QPS_RTR) {
		*bad_wr = wr;
		return -OPENRDMA_EINVAL;
	}
	if (state != OPENRDMA_QPS_ERR)
		return post_slow(vqp, wr, bad_wr);
	for (bad = wr; bad; prev = bad, bad = bad->next) {
		ret = openrdma_send_wr_check(&vqp->base, bad);
		if (ret)
			break;
	}
	/* as for receives: cut before the refused one, mend after */
	if (prev) {
		prev->next = NULL;
		verbs_flush_send(vqp, wr);
		prev->next = bad;
	}
	if (ret)
		*bad_wr = bad;
	return ret;
}

int verbs_qp_post_send(struct openrdma_qp *qp, struct openrdma_send_wr *wr,
		       struct openrdma_send_wr **bad_wr)
{
	struct verbs_qp *vqp = to_verbs_qp(qp);
	enum openrdma_qp_state state = qp_state(qp);
	struct ibv_send_wr ib[VERBS_POST_STACK];
	struct openrdma_send_wr *rest = wr;
	unsigned int n;
	bool binds;
	int err;

	if (unlikely(state != OPENRDMA_QPS_RTS))
		return post_not_rts(vqp, state, wr, bad_wr);
	n = list_translate(vqp, &rest, ib, VERBS_POST_STACK, &err, &binds);
	if (likely(!rest))
		return list_post(vqp, wr, ib, n, binds, bad_wr);
	return post_slow(vqp, wr, bad_wr);
}

/* The first request of the list its check refuses (NULL: none). */
static inline struct openrdma_recv_wr *
recv_list_check(uint32_t max_sge, struct openrdma_recv_wr *wr,
		struct openrdma_recv_wr **prev)
{
	*prev = NULL;
	for (; wr; *prev = wr, wr = wr->next)
		if (unlikely(openrdma_recv_wr_check(max_sge, wr)))
			return wr;
	return NULL;
}

/*
 * libsiw (rdma-core 44, push_recv_wqe) refuses a receive without SGEs,
 * which the verbs allow: each such request goes as one SGE of length 0,
 * which takes a message of 0 bytes and nothing more, as no SGE would.
 */
static int recv_post_empty_fix(struct ibv_qp *qp, struct ibv_srq *srq,
			       struct openrdma_recv_wr *wr,
			       struct openrdma_recv_wr **bad_wr)
{
	struct ibv_sge empty = { 0 };
	struct ibv_recv_wr one, *ibbad;
	int ret = 0;

	for (; wr && !ret; wr = wr->next) {
		memcpy(&one, wr, sizeof(one));
		one.next = NULL;
		if (!one.num_sge) {
			one.sg_list = &empty;
			one.num_sge = 1;
		}
		ret = qp ? ibv_post_recv(qp, &one, &ibbad) :
			   ibv_post_srq_recv(srq, &one, &ibbad);
		if (ret)
			*bad_wr = wr;
	}
	return verbs_ret(ret);
}

/* One of ibv_post_recv() and ibv_post_srq_recv(), folded when inlined. */
static inline int recv_post(struct ibv_qp *qp, struct ibv_srq *srq,
			    bool empty_fix, struct openrdma_recv_wr *wr,
			    struct openrdma_recv_wr **bad_wr)
{
	struct ibv_recv_wr *ibbad = NULL;
	int ret;

	if (unlikely(empty_fix))
		return recv_post_empty_fix(qp, srq, wr, bad_wr);
	if (qp)
		ret = ibv_post_recv(qp, (struct ibv_recv_wr *)wr, &ibbad);
	else
		ret = ibv_post_srq_recv(srq, (struct ibv_recv_wr *)wr, &ibbad);
	if (unlikely(ret))
		*bad_wr = (struct openrdma_recv_wr *)ibbad;
	return verbs_ret(ret);
}

/*
 * Posts the list up to the first request its check refuses: the list is
 * cut before it for the call and mended after, so that nothing is copied.
 */
static inline int recv_list_post(struct ibv_qp *qp, struct ibv_srq *srq,
				 bool empty_fix, uint32_t max_sge,
				 struct openrdma_recv_wr *wr,
				 struct openrdma_recv_wr **bad_wr)
{
	struct openrdma_recv_wr *bad, *prev;
	int ret;

	bad = recv_list_check(max_sge, wr, &prev);
	if (likely(!bad))
		return recv_post(qp, srq, empty_fix, wr, bad_wr);
	if (prev) {
		prev->next = NULL;
		ret = recv_post(qp, srq, empty_fix, wr, bad_wr);
		prev->next = bad;
		if (ret)
			return ret;
	}
	*bad_wr = bad;
	return -OPENRDMA_EINVAL;
}

int verbs_qp_post_recv(struct openrdma_qp *qp, struct openrdma_recv_wr *wr,
		       struct openrdma_recv_wr **bad_wr)
{
	enum openrdma_qp_state state = qp_state(qp);
	struct openrdma_recv_wr *bad, *prev;

	if (likely(state != OPENRDMA_QPS_RESET && state != OPENRDMA_QPS_ERR))
		return recv_list_post(to_verbs_qp(qp)->ibqp, NULL,
				      to_verbs_qp(qp)->vctx->quirks &
					      VERBS_QUIRK_NO_EMPTY_RECV,
				      qp->cap.max_recv_sge, wr, bad_wr);
	/* Receives are refused in RESET, and flushed in ERR. */
	if (state == OPENRDMA_QPS_RESET) {
		*bad_wr = wr;
		return -OPENRDMA_EINVAL;
	}
	bad = recv_list_check(qp->cap.max_recv_sge, wr, &prev);
	if (prev) {
		prev->next = NULL;
		verbs_flush_recv(to_verbs_qp(qp), wr);
		prev->next = bad;
	} else if (!bad) {
		verbs_flush_recv(to_verbs_qp(qp), wr);
	}
	if (!bad)
		return 0;
	*bad_wr = bad;
	return -OPENRDMA_EINVAL;
}

int verbs_srq_post_recv(struct openrdma_srq *srq, struct openrdma_recv_wr *wr,
			struct openrdma_recv_wr **bad_wr)
{
	return recv_list_post(NULL, to_verbs_srq(srq)->ibsrq,
			      to_verbs_ctx(srq->obj.ctx)->quirks &
				      VERBS_QUIRK_NO_EMPTY_RECV,
			      srq->max_sge, wr, bad_wr);
}
