/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Queue pairs: the process-wide table that numbers them and lets a QP
 * reach its peer, and the QP operations, which core/sw carries out.
 */
/* QPNs are handed out in sequence: their low bits spread them evenly over
 * the buckets, no hash needed. */
#define HASH_FUNCTION(keyptr, keylen, hashv) \
	((hashv) = *(const uint32_t *)(const void *)(keyptr))

#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>

#include "transports/self/self.h"

/* QPNs are 24 bits; 0 and 1 are IB's special QPs. */
#define QPN_FIRST 2
#define QPN_LAST 0xffffff

/*
 * Every QP of the process, by number: self is one device per process, as
 * one HCA is one QPN space for all its contexts.
 */
static pthread_rwlock_t qp_table_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct self_qp *qp_table;
static uint32_t qpn_next = QPN_FIRST;

/* Numbers qp and makes it reachable.  Numbers are not reused soon: a peer
 * still connected to a destroyed QP must not reach a new one. */
static int qp_table_add(struct self_qp *qp)
{
	struct self_qp *found;
	uint32_t qpn, tries;
	int ret = -OPENRDMA_ENOSPC;

	pthread_rwlock_wrlock(&qp_table_lock);
	for (tries = 0; tries <= QPN_LAST - QPN_FIRST; tries++) {
		qpn = qpn_next;
		qpn_next = qpn == QPN_LAST ? QPN_FIRST : qpn + 1;
		HASH_FIND(hh, qp_table, &qpn, sizeof(qpn), found);
		if (!found) {
			qp->base.qp_num = qpn;
			HASH_ADD(hh, qp_table, base.qp_num, sizeof(qpn), qp);
			ret = 0;
			break;
		}
	}
	pthread_rwlock_unlock(&qp_table_lock);
	return ret;
}

static void qp_table_del(struct self_qp *qp)
{
	pthread_rwlock_wrlock(&qp_table_lock);
	HASH_DEL(qp_table, qp);
	pthread_rwlock_unlock(&qp_table_lock);
}

struct self_qp *self_qp_get(uint32_t qpn)
{
	struct self_qp *qp;

	pthread_rwlock_rdlock(&qp_table_lock);
	HASH_FIND(hh, qp_table, &qpn, sizeof(qpn), qp);
	if (qp)
		atomic_fetch_add(&qp->users, 1);
	pthread_rwlock_unlock(&qp_table_lock);
	return qp;
}

void self_qp_put(struct self_qp *qp)
{
	atomic_fetch_sub(&qp->users, 1);
}

static void rnr_fire(struct sw_timer_entry *entry)
{
	struct self_qp *qp =
		openrdma_container_of(entry, struct self_qp, rnr_entry);

	sw_qp_progress(&qp->sw);
}

static const struct sw_qp_create_ops qp_create_ops = {
	.max_wr = SELF_MAX_QP_WR,
	.max_sge = SELF_MAX_SGE,
	.max_inline = SELF_MAX_INLINE,
	.max_msg_size = SELF_MAX_MSG_SIZE,
	.max_ud_msg = SELF_MAX_UD_MSG,
	.qp_size = sizeof(struct self_qp),
	.cq_sw = offsetof(struct self_cq, sw),
	.srq_sw = offsetof(struct self_srq, sw),
	.res_get = self_res_get,
	.res_put = self_res_put,
};

int self_qp_create(struct openrdma_pd *pd,
		   struct openrdma_qp_init_attr *init_attr,
		   struct openrdma_qp **qp_out)
{
	struct self_ctx *sctx = to_self_ctx(pd->obj.ctx);
	struct sw_qp_init init = { 0 };
	struct openrdma_qp_cap *cap;
	struct openrdma_qp *base;
	struct self_qp *qp;
	int ret;

	ret = sw_qp_alloc(&qp_create_ops, pd, init_attr, &init, &base);
	if (ret)
		return ret;
	qp = to_self_qp(base);
	cap = &qp->base.cap;
	qp->ctx = sctx;
	qp->rnr_entry.fn = rnr_fire;
	atomic_init(&qp->users, 0);
	atomic_init(&qp->av_local, false);

	init.ops = &self_sw_qp_ops;
	init.keymap = sctx->keymap;
	init.rnr_scale = sctx->rnr_scale;
	ret = sw_qp_init(&qp->sw, &qp->base, &init);
	if (ret)
		goto err_free;
	ret = qp_table_add(qp);
	if (ret)
		goto err_sw;

	init_attr->cap = *cap;
	*qp_out = &qp->base;
	return 0;

err_sw:
	sw_qp_fini(&qp->sw);
err_free:
	sw_qp_free(&qp_create_ops, &qp->base);
	return ret;
}

int self_qp_destroy(struct openrdma_qp *qp)
{
	struct self_qp *sqp = to_self_qp(qp);
	struct self_ctx *sctx = sqp->ctx;

	/* unreachable first, then wait out the requests already inside */
	qp_table_del(sqp);
	while (atomic_load(&sqp->users))
		sched_yield();
	sw_timer_cancel(&sctx->timer, &sqp->rnr_entry);
	sw_qp_fini(&sqp->sw);
	sw_qp_free(&qp_create_ops, qp);
	return 0;
}

int self_qp_modify(struct openrdma_qp *qp, struct openrdma_qp_attr *attr,
		   int attr_mask)
{
	struct self_qp *sqp = to_self_qp(qp);
	int ret;

	ret = sw_qp_modify(&sqp->sw, attr, attr_mask);
	if (ret)
		return ret;
	if (attr_mask & OPENRDMA_QP_AV)
		atomic_store(&sqp->av_local,
			     self_ah_attr_local(&attr->ah_attr));
	else if ((attr_mask & OPENRDMA_QP_STATE) &&
		 attr->qp_state == OPENRDMA_QPS_RESET)
		atomic_store(&sqp->av_local, false);
	return 0;
}

int self_qp_query(struct openrdma_qp *qp, struct openrdma_qp_attr *attr,
		  int attr_mask, struct openrdma_qp_init_attr *init_attr)
{
	sw_qp_query(&to_self_qp(qp)->sw, attr, init_attr);
	return 0;
}

int self_qp_post_send(struct openrdma_qp *qp, struct openrdma_send_wr *wr,
		      struct openrdma_send_wr **bad_wr)
{
	return sw_qp_post_send(&to_self_qp(qp)->sw, wr, bad_wr);
}

int self_qp_post_recv(struct openrdma_qp *qp, struct openrdma_recv_wr *wr,
		      struct openrdma_recv_wr **bad_wr)
{
	return sw_qp_post_recv(&to_self_qp(qp)->sw, wr, bad_wr);
}
