/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Data transfer operations: a DAT post is one work request of the core.
 * Arguments DAT defines as synchronous errors are checked here; the rest
 * (bad keys, lengths, access rights) is reported by the completion, as
 * the core's semantics say (openrdma_semantics(7)).
 */
#include "config.h"

#include <string.h>

#include <openrdma/errno.h>
#include <openrdma/log.h>

#include "api/dat/provider.h"
#include "api/dat/slots.h"

#define SEND_FLAGS                                           \
	((unsigned int)(DAT_COMPLETION_SUPPRESS_FLAG |       \
			DAT_COMPLETION_SOLICITED_WAIT_FLAG | \
			DAT_COMPLETION_UNSIGNALLED_FLAG |    \
			DAT_COMPLETION_BARRIER_FENCE_FLAG))
#define RECV_FLAGS                                           \
	((unsigned int)(DAT_COMPLETION_SOLICITED_WAIT_FLAG | \
			DAT_COMPLETION_EVD_THRESHOLD_FLAG))

int datp_sge_fill(struct openrdma_sge *sge, const DAT_LMR_TRIPLET *iov,
		  DAT_COUNT n, uint64_t *total_out)
{
	uint64_t total = 0;
	DAT_COUNT i;

	for (i = 0; i < n; i++) {
		sge[i].addr = iov[i].virtual_address;
		sge[i].length = iov[i].segment_length;
		sge[i].lkey = iov[i].lmr_context;
		total += iov[i].segment_length;
	}
	*total_out = total;
	return 0;
}

static unsigned int send_flags_of(DAT_COMPLETION_FLAGS flags)
{
	unsigned int f = 0;

	if (flags & DAT_COMPLETION_SOLICITED_WAIT_FLAG)
		f |= OPENRDMA_SEND_SOLICITED;
	if (flags & DAT_COMPLETION_BARRIER_FENCE_FLAG)
		f |= OPENRDMA_SEND_FENCE;
	return f;
}

DAT_RETURN datp_post_sq(struct datp_ep *ep, struct openrdma_send_wr *wr,
			const DAT_LMR_TRIPLET *iov, DAT_COUNT n,
			const struct datp_slot *slot,
			DAT_COMPLETION_FLAGS flags, const char *fn)
{
	struct datp_sq *sq = &ep->sq;
	struct openrdma_send_wr *bad;
	struct datp_slot *s;
	uint64_t total = 0;
	bool signaled;
	uint32_t seq;
	int ret;

	if (!ep->req_evd)
		return datp_fail(-OPENRDMA_ESTATE,
				 DAT_INVALID_STATE_EP_EVD_REQUEST, fn,
				 "the EP has no request EVD");
	pthread_mutex_lock(&sq->lock);
	seq = sq->head;
	if (seq - atomic_load_explicit(&sq->tail, memory_order_acquire) >=
	    sq->cap) {
		pthread_mutex_unlock(&sq->lock);
		return datp_fail(-OPENRDMA_ENOMEM, DAT_RESOURCE_TEP, fn,
				 "%u requests outstanding", sq->cap);
	}
	if (n) {
		datp_sge_fill(sq->sge, iov, n, &total);
		wr->sg_list = sq->sge;
		wr->num_sge = n;
	}
	s = &sq->slots[seq % sq->cap];
	*s = *slot;
	s->length = total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
	signaled = !(flags & DAT_COMPLETION_SUPPRESS_FLAG);
	/* the ring reclaims on signaled completions: force one now and then */
	s->internal = !signaled && sq->unsignaled + 1 >= sq->cap / 2 + 1;
	if (s->internal)
		signaled = true;
	wr->wr_id = datp_wr_id(ep->key, seq);
	wr->send_flags |=
		send_flags_of(flags) | (signaled ? OPENRDMA_SEND_SIGNALED : 0);
	if (wr->opcode == OPENRDMA_WR_BIND_MW &&
	    wr->bind_mw.mw->type == OPENRDMA_MW_TYPE_1)
		ret = openrdma_mw_bind(ep->qp, wr->bind_mw.mw, wr->wr_id,
				       wr->send_flags, &wr->bind_mw.bind_info);
	else
		ret = openrdma_qp_post_send(ep->qp, wr, &bad);
	if (!ret) {
		sq->head = seq + 1;
		sq->unsignaled = signaled ? 0 : sq->unsignaled + 1;
	}
	pthread_mutex_unlock(&sq->lock);
	if (ret)
		return datp_fail(ret, DAT_RESOURCE_TEP, fn, "post: opcode %d",
				 (int)wr->opcode);
	return DAT_SUCCESS;
}

/* Checks shared by every send-queue post: EP, segments, flags. */
static DAT_RETURN sq_args(struct datp_ep *ep, DAT_EP_HANDLE ep_handle,
			  DAT_COUNT n, const DAT_LMR_TRIPLET *iov,
			  DAT_COUNT max_iov, DAT_COMPLETION_FLAGS flags,
			  DAT_RETURN_SUBTYPE flags_arg, const char *fn)
{
	if (!ep)
		return datp_fail(-OPENRDMA_EBADHANDLE, DAT_INVALID_HANDLE_EP,
				 fn, "ep %p", ep_handle);
	if (n < 0 || n > max_iov)
		return datp_fail(-OPENRDMA_EINVAL, DAT_INVALID_ARG2, fn,
				 "num_segments %d (at most %d)", n, max_iov);
	if (n && !iov)
		return datp_fail(-OPENRDMA_EINVAL, DAT_INVALID_ARG3, fn,
				 "local_iov: NULL");
	if ((unsigned int)flags & ~SEND_FLAGS)
		return datp_fail(-OPENRDMA_EINVAL, flags_arg, fn,
				 "completion_flags 0x%x", flags);
	return datp_ep_can_send(ep, fn);
}

static DAT_RETURN post_send(DAT_EP_HANDLE ep_handle, DAT_COUNT n,
			    DAT_LMR_TRIPLET *iov, DAT_DTO_COOKIE cookie,
			    DAT_COMPLETION_FLAGS flags, bool invalidate,
			    DAT_RMR_CONTEXT rmr_context, const char *fn)
{
	struct datp_ep *ep = datp_ep_get(ep_handle);
	struct openrdma_send_wr wr = { 0 };
	struct datp_slot slot = { 0 };
	uint64_t total = 0;
	DAT_RETURN ret;
	DAT_COUNT i;

	ret = sq_args(ep, ep_handle, n, iov, ep ? ep->attr.max_request_iov : 0,
		      flags, DAT_INVALID_ARG5, fn);
	if (ret != DAT_SUCCESS)
		return ret;
	for (i = 0; i < n; i++)
		total += iov[i].segment_length;
	if (ep->kind == DATP_EP_UD)
		return datp_fail(-OPENRDMA_EOPNOTSUPP, DAT_NO_SUBTYPE, fn,
				 "a UD EP sends with dat_ib_post_send_ud");
	wr.opcode = invalidate ? OPENRDMA_WR_SEND_WITH_INV : OPENRDMA_WR_SEND;
	if (invalidate)
		wr.invalidate_rkey = rmr_context;
	slot.cookie = cookie;
	slot.op = DAT_DTO_SEND;
	ret = datp_post_sq(ep, &wr, iov, n, &slot, flags, fn);
	if (ret == DAT_SUCCESS)
		datp_ep_count(ep, DCNT_EP_POST_SEND, total);
	return ret;
}

DAT_RETURN datp_ep_post_send(DAT_EP_HANDLE ep_handle, DAT_COUNT num_segments,
			     DAT_LMR_TRIPLET *local_iov,
			     DAT_DTO_COOKIE user_cookie,
			     DAT_COMPLETION_FLAGS completion_flags)
{
	return post_send(ep_handle, num_segments, local_iov, user_cookie,
			 completion_flags, false, 0, __func__);
}

DAT_RETURN datp_ep_post_send_with_invalidate(
	DAT_EP_HANDLE ep_handle, DAT_COUNT num_segments,
	DAT_LMR_TRIPLET *local_iov, DAT_DTO_COOKIE user_cookie,
	DAT_COMPLETION_FLAGS completion_flags, DAT_BOOLEAN invalidate_flag,
	DAT_RMR_CONTEXT rmr_context)
{
	struct datp_ep *ep = datp_ep_get(ep_handle);

	if (ep && invalidate_flag &&
	    !(ep->obj.ia->dev_attr.device_cap_flags & OPENRDMA_DEVICE_SEND_INV))
		return DATP_ERR(-OPENRDMA_EOPNOTSUPP, DAT_NO_SUBTYPE,
				"%s cannot invalidate remotely",
				ep->obj.ia->entry->iface);
	if (invalidate_flag != DAT_TRUE && invalidate_flag != DAT_FALSE)
		return DATP_ARG(DAT_INVALID_ARG6, "invalidate_flag %d",
				invalidate_flag);
	return post_send(ep_handle, num_segments, local_iov, user_cookie,
			 completion_flags, invalidate_flag == DAT_TRUE,
			 rmr_context, __func__);
}

static DAT_RETURN post_rdma(DAT_EP_HANDLE ep_handle, DAT_COUNT n,
			    DAT_LMR_TRIPLET *iov, DAT_DTO_COOKIE cookie,
			    const DAT_RMR_TRIPLET *remote,
			    DAT_COMPLETION_FLAGS flags, bool read,
			    const char *fn)
{
	struct datp_ep *ep = datp_ep_get(ep_handle);
	struct openrdma_send_wr wr = { 0 };
	struct datp_slot slot = { 0 };
	uint64_t total = 0;
	DAT_RETURN ret;
	DAT_COUNT i;

	ret = sq_args(ep, ep_handle, n, iov,
		      ep ? datp_rdma_iov_max(ep, read) : 0, flags,
		      DAT_INVALID_ARG6, fn);
	if (ret != DAT_SUCCESS)
		return ret;
	if (!remote)
		return datp_fail(-OPENRDMA_EINVAL, DAT_INVALID_ARG5, fn,
				 "remote_iov: NULL");
	if (ep->kind == DATP_EP_UD)
		return datp_fail(-OPENRDMA_EOPNOTSUPP, DAT_NO_SUBTYPE, fn,
				 "RDMA on a UD EP");
	for (i = 0; i < n; i++)
		total += iov[i].segment_length;
	if (total > remote->segment_length)
		return datp_fail(-OPENRDMA_EMSGSIZE, DAT_NO_SUBTYPE, fn,
				 "%llu bytes for a remote segment of %u",
				 (unsigned long long)total,
				 remote->segment_length);
	wr.opcode = read ? OPENRDMA_WR_RDMA_READ : OPENRDMA_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = remote->virtual_address;
	wr.wr.rdma.rkey = remote->rmr_context;
	slot.cookie = cookie;
	slot.op = read ? DAT_DTO_RDMA_READ : DAT_DTO_RDMA_WRITE;
	ret = datp_post_sq(ep, &wr, iov, n, &slot, flags, fn);
	if (ret == DAT_SUCCESS)
		datp_ep_count(ep, read ? DCNT_EP_POST_READ : DCNT_EP_POST_WRITE,
			      total);
	return ret;
}

DAT_RETURN datp_ep_post_rdma_read(DAT_EP_HANDLE ep_handle,
				  DAT_COUNT num_segments,
				  DAT_LMR_TRIPLET *local_iov,
				  DAT_DTO_COOKIE user_cookie,
				  const DAT_RMR_TRIPLET *remote_iov,
				  DAT_COMPLETION_FLAGS completion_flags)
{
	return post_rdma(ep_handle, num_segments, local_iov, user_cookie,
			 remote_iov, completion_flags, true, __func__);
}

DAT_RETURN datp_ep_post_rdma_write(DAT_EP_HANDLE ep_handle,
				   DAT_COUNT num_segments,
				   DAT_LMR_TRIPLET *local_iov,
				   DAT_DTO_COOKIE user_cookie,
				   const DAT_RMR_TRIPLET *remote_iov,
				   DAT_COMPLETION_FLAGS completion_flags)
{
	return post_rdma(ep_handle, num_segments, local_iov, user_cookie,
			 remote_iov, completion_flags, false, __func__);
}

/*
 * The local side is a window of this IA: the data lands in the region it
 * is bound to, within its bounds and only if it grants remote write.
 */
DAT_RETURN datp_ep_post_rdma_read_to_rmr(DAT_EP_HANDLE ep_handle,
					 const DAT_RMR_TRIPLET *local_iov,
					 DAT_DTO_COOKIE user_cookie,
					 const DAT_RMR_TRIPLET *remote_iov,
					 DAT_COMPLETION_FLAGS completion_flags)
{
	struct datp_ep *ep = datp_ep_get(ep_handle);
	DAT_LMR_TRIPLET seg;
	struct datp_rmr *rmr;
	uint64_t start, base;

	if (!ep)
		return DATP_HANDLE(DAT_INVALID_HANDLE_EP, "ep %p", ep_handle);
	if (!local_iov)
		return DATP_ARG(DAT_INVALID_ARG2, "local_iov: NULL");
	rmr = datp_rmr_find(ep->obj.ia, local_iov->rmr_context);
	if (!rmr || !rmr->lmr)
		return DATP_ARG(DAT_INVALID_ARG2,
				"local_iov: rmr_context 0x%x is no bound RMR",
				local_iov->rmr_context);
	if (!(rmr->priv & DAT_MEM_PRIV_REMOTE_WRITE_FLAG))
		return DATP_ERR(-OPENRDMA_EACCES, DAT_PRIVILEGES_RDMA_WRITE,
				"the RMR does not grant remote write");
	/* zero-based windows are addressed from 0 */
	base = rmr->va_type == DAT_VA_TYPE_ZB ? 0 :
						rmr->triplet.virtual_address;
	if (local_iov->virtual_address < base ||
	    local_iov->virtual_address + local_iov->segment_length >
		    base + rmr->triplet.segment_length)
		return DATP_ERR(-OPENRDMA_EFAULT, DAT_PROTECTION_RDMA_WRITE,
				"local_iov outside the RMR");
	start = rmr->triplet.virtual_address +
		(local_iov->virtual_address - base);
	seg.virtual_address = start;
	seg.segment_length = local_iov->segment_length;
	seg.lmr_context = rmr->lmr->mr->lkey;
	return post_rdma(ep_handle, 1, &seg, user_cookie, remote_iov,
			 completion_flags, true, __func__);
}

DAT_RETURN datp_ep_post_recv(DAT_EP_HANDLE ep_handle, DAT_COUNT num_segments,
			     DAT_LMR_TRIPLET *local_iov,
			     DAT_DTO_COOKIE user_cookie,
			     DAT_COMPLETION_FLAGS completion_flags)
{
	struct datp_ep *ep = datp_ep_get(ep_handle);
	struct openrdma_recv_wr wr = { 0 }, *bad;
	struct datp_rq *rq;
	uint64_t total;
	int index, ret;

	if (!ep)
		return DATP_HANDLE(DAT_INVALID_HANDLE_EP, "ep %p", ep_handle);
	if (num_segments < 0 || num_segments > ep->attr.max_recv_iov)
		return DATP_ARG(DAT_INVALID_ARG2,
				"num_segments %d (at most %d)", num_segments,
				ep->attr.max_recv_iov);
	if (num_segments && !local_iov)
		return DATP_ARG(DAT_INVALID_ARG3, "local_iov: NULL");
	if ((unsigned int)completion_flags & ~RECV_FLAGS)
		return DATP_ARG(DAT_INVALID_ARG5, "completion_flags 0x%x",
				completion_flags);
	if (!ep->qp)
		return DATP_STATE(DAT_INVALID_STATE_EP_UNCONFIGURED,
				  "the EP has no PZ");
	if (ep->srq)
		return DATP_STATE(DAT_INVALID_STATE_EP_NOTREADY,
				  "the EP receives from its SRQ");
	if (!ep->recv_evd)
		return DATP_STATE(DAT_INVALID_STATE_EP_EVD_RECV,
				  "the EP has no receive EVD");
	rq = &ep->rq;
	pthread_mutex_lock(&rq->lock);
	index = datp_rq_take(rq);
	if (index < 0) {
		pthread_mutex_unlock(&rq->lock);
		return DATP_ERR(-OPENRDMA_ENOMEM, DAT_RESOURCE_TEP,
				"%u receives outstanding", rq->cap);
	}
	datp_sge_fill(rq->sge, local_iov, num_segments, &total);
	rq->slots[index].cookie = user_cookie;
	rq->slots[index].op = DAT_DTO_RECEIVE;
	rq->slots[index].length = (uint32_t)total;
	wr.wr_id = datp_recv_wr_id(ep->key, (uint32_t)index);
	wr.sg_list = rq->sge;
	wr.num_sge = num_segments;
	rq->bytes += total;
	ret = openrdma_qp_post_recv(ep->qp, &wr, &bad);
	if (ret)
		datp_rq_give(rq, (uint32_t)index);
	pthread_mutex_unlock(&rq->lock);
	if (ret)
		return DATP_ERR(ret, DAT_RESOURCE_TEP, "post_recv");
	datp_ep_count(ep, DCNT_EP_POST_RECV, total);
	return DAT_SUCCESS;
}
