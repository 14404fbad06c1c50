/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Data transfer: the it_post_* calls, the receive slots, and the
 * conversion of their completions into it_event_t records.
 *
 * A post never allocates: segments become SGEs in a stack array of at most
 * ITAPI_MAX_SGE entries, and what the completion needs (cookie, event
 * number, length) waits in a slot the endpoint allocated at creation.  A
 * send-queue request's wr_id is its sequence number, as is a receive's on
 * the endpoint's own queue; one on an SRQ names its slot.  ITAPI_WRID_RECV
 * marks a receive's, which tells the converter which queue a completion
 * belongs to whatever its status.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "api/itapi/itapi.h"
#include "core/datapath.h"
#include "core/export.h"

#define SEND_FLAGS                                                      \
	(IT_COMPLETION_FLAG | IT_NOTIFY_FLAG | IT_SOLICITED_WAIT_FLAG | \
	 IT_BARRIER_FENCE_FLAG | IT_COALESCE_WR_FLAG)
#define RDMA_FLAGS                                                     \
	(IT_COMPLETION_FLAG | IT_NOTIFY_FLAG | IT_BARRIER_FENCE_FLAG | \
	 IT_COALESCE_WR_FLAG)
#define RECV_FLAGS (IT_COMPLETION_FLAG | IT_NOTIFY_FLAG | IT_COALESCE_WR_FLAG)

/*
 * The data path is inline: an it_post_* call or a completion is one
 * function with its checks, and what only an error needs (the log
 * messages) is out of line, in the *_refused helpers.
 */
#define COLD __attribute__((cold, noinline))
#define HOT_INLINE inline __attribute__((always_inline))

/* OPENRDMA_SEND_* of checked IT flags. */
static inline unsigned int send_flags_of(it_dto_flags_t flags)
{
	return (flags & IT_COMPLETION_FLAG ? OPENRDMA_SEND_SIGNALED : 0) |
	       (flags & IT_SOLICITED_WAIT_FLAG ? OPENRDMA_SEND_SOLICITED : 0) |
	       (flags & (IT_BARRIER_FENCE_FLAG | IT_UNLINK_FENCE_FLAG) ?
			OPENRDMA_SEND_FENCE :
			0);
}

int itapi_dto_flags(it_dto_flags_t flags, it_dto_flags_t allowed)
{
	if (flags & ~(unsigned int)allowed)
		return -1;
	return (int)send_flags_of(flags);
}

/* ------------------------------------------------------------------ */
/* Receive slots                                                      */
/* ------------------------------------------------------------------ */

int itapi_rslots_init(struct itapi_rslots *rs, uint32_t num)
{
	uint32_t i;

	memset(rs, 0, sizeof(*rs));
	if (!num)
		num = 1;
	rs->free = calloc(num, sizeof(*rs->free));
	rs->cookie = calloc(num, sizeof(*rs->cookie));
	rs->busy = calloc(num, sizeof(*rs->busy));
	if (!rs->free || !rs->cookie || !rs->busy) {
		itapi_rslots_fini(rs);
		return -OPENRDMA_ENOMEM;
	}
	for (i = 0; i < num; i++)
		rs->free[i] = num - 1 - i;
	rs->num = num;
	rs->nfree = num;
	core_spin_init(&rs->lock);
	return 0;
}

void itapi_rslots_fini(struct itapi_rslots *rs)
{
	free(rs->free);
	free(rs->cookie);
	free(rs->busy);
	memset(rs, 0, sizeof(*rs));
}

/* A slot for cookie, as the wr_id to post: -OPENRDMA_ENOSPC when full. */
static inline int rslots_get(struct itapi_rslots *rs, it_dto_cookie_t cookie,
			     uint64_t *wr_id_out, uint32_t *slot_out)
{
	uint32_t slot;

	core_spin_lock(&rs->lock);
	if (!rs->nfree) {
		core_spin_unlock(&rs->lock);
		return -OPENRDMA_ENOSPC;
	}
	slot = rs->free[--rs->nfree];
	rs->busy[slot] = 1;
	rs->cookie[slot] = cookie;
	*wr_id_out = ITAPI_WRID_RECV | slot;
	core_spin_unlock(&rs->lock);
	*slot_out = slot;
	return 0;
}

/*
 * Frees the slot of wr_id: false (and nothing freed) if it is not taken.
 * SRQs only, out of line: the converter's path is an endpoint's ring.
 */
static __attribute__((noinline)) bool rslots_put(struct itapi_rslots *rs,
						 uint64_t wr_id,
						 it_dto_cookie_t *cookie_out,
						 uint32_t *slot_out)
{
	uint32_t slot = (uint32_t)wr_id;
	bool ok;

	core_spin_lock(&rs->lock);
	ok = wr_id == (ITAPI_WRID_RECV | slot) && slot < rs->num &&
	     rs->busy[slot];
	if (ok) {
		rs->busy[slot] = 0;
		*cookie_out = rs->cookie[slot];
		rs->free[rs->nfree++] = slot;
	}
	core_spin_unlock(&rs->lock);
	*slot_out = slot;
	return ok;
}

/* ------------------------------------------------------------------ */
/* Posting                                                            */
/* ------------------------------------------------------------------ */

/*
 * itapi_post_sq(), inline in the it_post_* calls: with the opcode known
 * there, what is not about it drops out.
 */
static inline int post_sq(struct itapi_ep *ep, struct openrdma_send_wr *wr,
			  it_dto_cookie_t cookie, it_event_type_t event,
			  uint32_t length, bool signaled, struct itapi_obj *mem)
{
	struct openrdma_send_wr *bad;
	struct itapi_swr *s;
	uint64_t seq;
	int ret;

	/*
	 * The core's post locks the QP's queue too, but sequence order
	 * must be queue order (a completion retires every slot before
	 * its own), so a number is taken and posted under one lock.
	 */
	core_spin_lock(&ep->sq_lock);
	seq = ep->shead;
	if (seq - atomic_load_explicit(&ep->stail, memory_order_acquire) >=
	    ep->ssize) {
		core_spin_unlock(&ep->sq_lock);
		return -OPENRDMA_ENOMEM;
	}
	s = &ep->sring[seq & (ep->ssize - 1)];
	s->seq = seq;
	s->cookie = cookie;
	s->event = event;
	s->length = length;
	s->signaled = signaled;
	s->mem = mem;
	wr->wr_id = seq;
	wr->next = NULL;
	/*
	 * Slots of unsignaled requests are retired by a later completion:
	 * one request in each half ring asks for one, which the converter
	 * does not report, so that a consumer who never asks still gets
	 * the slots back when it next takes events from the request SEVD.
	 */
	if (!signaled && (seq & (ep->sauto - 1)) == ep->sauto - 1)
		wr->send_flags |= OPENRDMA_SEND_SIGNALED;
	/* type 1 windows have their own verb */
	if (wr->opcode == OPENRDMA_WR_BIND_MW &&
	    wr->bind_mw.mw->type == OPENRDMA_MW_TYPE_1)
		ret = openrdma_mw_bind(ep->qp, wr->bind_mw.mw, seq,
				       wr->send_flags, &wr->bind_mw.bind_info);
	else
		ret = core_qp_post_send(ep->qp, wr, &bad);
	if (!ret)
		ep->shead = seq + 1;
	core_spin_unlock(&ep->sq_lock);
	return ret;
}

int itapi_post_sq(struct itapi_ep *ep, struct openrdma_send_wr *wr,
		  it_dto_cookie_t cookie, it_event_type_t event,
		  uint32_t length, bool signaled, struct itapi_obj *mem)
{
	return post_sq(ep, wr, cookie, event, length, signaled, mem);
}

/* The status of a post the core refused. */
static it_status_t post_status(int ret)
{
	if (ret == -OPENRDMA_ENOMEM || ret == -OPENRDMA_ENOSPC)
		return IT_ERR_TOO_MANY_POSTS;
	/* the arguments were checked: what remains is the endpoint's state */
	return itapi_status(ret, IT_ERR_INVALID_EP_STATE);
}

/* Why segs_to_sges() refused the segments: logs it, returns the status. */
static COLD it_status_t segs_refused(const char *fn,
				     const it_lmr_triplet_t *segs, size_t num,
				     size_t max)
{
	const struct itapi_lmr *lmr;
	size_t i;

	if (num > max || num > ITAPI_MAX_SGE) {
		openrdma_dbg(ITAPI_LOG, "%s: arg num_segments: %zu > %zu", fn,
			     num, max);
		return IT_ERR_INVALID_NUM_SEGMENTS;
	}
	if (num && !segs) {
		openrdma_dbg(ITAPI_LOG, "%s: arg local_segments: NULL", fn);
		return IT_ERR_FAULT;
	}
	for (i = 0; i < num; i++) {
		lmr = (const struct itapi_lmr *)segs[i].lmr;
		if (!itapi_valid(lmr, IT_HANDLE_TYPE_LMR) || !lmr->mr) {
			openrdma_dbg(ITAPI_LOG,
				     "%s: segment %zu: not a linked LMR", fn,
				     i);
			return IT_ERR_INVALID_LMR;
		}
		if (segs[i].length > UINT32_MAX) {
			openrdma_dbg(ITAPI_LOG, "%s: segment %zu: too long", fn,
				     i);
			return IT_ERR_INVALID_LENGTH;
		}
	}
	/* another thread changed the segments meanwhile */
	return IT_ERR_INVALID_LMR;
}

/*
 * One segment's SGE: false if its LMR is no linked LMR or it is too long.
 * *in is cleared unless the segment lies inside its LMR and that LMR is
 * of pz (local: a device's check of an inline payload's lkey).
 */
static HOT_INLINE bool seg_to_sge(const it_lmr_triplet_t *seg,
				  const struct itapi_pz *pz, bool local,
				  struct openrdma_sge *sge, bool *in)
{
	const struct itapi_lmr *lmr = (const struct itapi_lmr *)seg->lmr;
	uint64_t base, start, off;

	if (!itapi_valid(lmr, IT_HANDLE_TYPE_LMR) || !lmr->mr ||
	    seg->length > UINT32_MAX)
		return false;
	base = (uint64_t)(uintptr_t)lmr->addr;
	start = lmr->addr_mode == IT_ADDR_MODE_RELATIVE ?
			base + seg->addr.rel :
			(uint64_t)(uintptr_t)seg->addr.abs;
	sge->addr = start;
	sge->length = (uint32_t)seg->length;
	sge->lkey = lmr->mr->lkey;
	/* inside: start - base wraps past the length if below base */
	off = start - base;
	if (local && (lmr->pz != pz || off > lmr->length ||
		      seg->length > lmr->length - off))
		*in = false;
	return true;
}

/*
 * The SGEs of num segments (at most max); *total is their length.  With
 * local set, *local tells whether every segment lies inside its LMR and
 * that LMR is of pz, as a device would have checked an inline payload's
 * lkey: one look at each LMR serves both.  One segment, the common case,
 * goes without the loop.
 */
static HOT_INLINE it_status_t segs_to_sges(const char *fn,
					   const it_lmr_triplet_t *segs,
					   size_t num, size_t max,
					   const struct itapi_pz *pz,
					   struct openrdma_sge *sge,
					   uint64_t *total, bool *local)
{
	uint64_t len = 0;
	bool in = true;
	size_t i;

	if (num == 1 && max && segs) {
		if (!seg_to_sge(segs, pz, local != NULL, sge, &in))
			goto refused;
		len = segs->length;
	} else {
		if (num > max || num > ITAPI_MAX_SGE || (num && !segs))
			goto refused;
		for (i = 0; i < num; i++) {
			if (!seg_to_sge(&segs[i], pz, local != NULL, &sge[i],
					&in))
				goto refused;
			len += segs[i].length;
		}
	}
	*total = len;
	if (local)
		*local = in;
	return IT_SUCCESS;

refused:
	/* written on every path: no caller reads them unset */
	*total = 0;
	if (local)
		*local = false;
	return segs_refused(fn, segs, num, max);
}

static COLD it_status_t ep_refused(const char *fn, const struct itapi_ep *ep)
{
	if (!itapi_valid(ep, IT_HANDLE_TYPE_EP)) {
		openrdma_dbg(ITAPI_LOG, "%s: arg ep_handle: not an EP", fn);
		return IT_ERR_INVALID_EP;
	}
	openrdma_dbg(ITAPI_LOG, "%s: arg ep_handle: wrong service", fn);
	return IT_ERR_INVALID_EP_TYPE;
}

/* The endpoint of a post: live, and of the service the call is for. */
static inline it_status_t ep_check(const char *fn, const struct itapi_ep *ep,
				   it_transport_service_type_t service)
{
	if (!itapi_valid(ep, IT_HANDLE_TYPE_EP) || ep->service != service)
		return ep_refused(fn, ep);
	return IT_SUCCESS;
}

static COLD it_status_t flags_refused(const char *fn, it_dto_flags_t flags)
{
	if (flags & IT_UNLINK_LOCAL_SINK) {
		openrdma_dbg(ITAPI_LOG, "%s: IT_UNLINK_LOCAL_SINK unsupported",
			     fn);
		return IT_ERR_OP_NOT_SUPPORTED;
	}
	openrdma_dbg(ITAPI_LOG, "%s: arg dto_flags: 0x%x", fn,
		     (unsigned int)flags);
	return IT_ERR_INVALID_DTO_FLAGS;
}

static inline it_status_t flags_check(const char *fn, it_dto_flags_t flags,
				      it_dto_flags_t allowed, int *send_flags)
{
	if (flags & ~(unsigned int)allowed) {
		*send_flags = 0;
		return flags_refused(fn, flags);
	}
	*send_flags = (int)send_flags_of(flags);
	return IT_SUCCESS;
}

/*
 * A send request with every member a transport reads for its opcode
 * cleared (bind_mw is read by binds only, which make their own).
 */
static inline void swr_init(struct openrdma_send_wr *wr,
			    enum openrdma_wr_opcode opcode)
{
	memset(wr, 0, offsetof(struct openrdma_send_wr, bind_mw));
	wr->opcode = opcode;
}

/* Opcodes whose payload may go inline. */
static inline bool opcode_inlines(enum openrdma_wr_opcode opcode)
{
	switch (opcode) {
	case OPENRDMA_WR_SEND:
	case OPENRDMA_WR_SEND_WITH_IMM:
	case OPENRDMA_WR_SEND_WITH_INV:
	case OPENRDMA_WR_RDMA_WRITE:
	case OPENRDMA_WR_RDMA_WRITE_WITH_IMM:
		return true;
	default:
		return false;
	}
}

/*
 * A send-queue request made of LMR segments.  It goes inline when its
 * payload fits and a device would have accepted its segments' lkeys (a
 * device does not check an inline payload's).
 */
static HOT_INLINE it_status_t
post_segs(const char *fn, it_ep_handle_t ep_handle,
	  it_transport_service_type_t service, struct openrdma_send_wr *wr,
	  const it_lmr_triplet_t *segs, size_t num, size_t max_segs,
	  it_dto_cookie_t cookie, it_dto_flags_t flags, it_dto_flags_t allowed,
	  it_event_type_t event)
{
	struct itapi_ep *ep = to_ep(ep_handle);
	struct openrdma_sge sge[ITAPI_MAX_SGE];
	uint64_t total;
	it_status_t st;
	bool local;
	int sf, ret;

	st = ep_check(fn, ep, service);
	if (st)
		return st;
	if (max_segs == SIZE_MAX)
		max_segs = ep->attr.max_send_segments;
	st = segs_to_sges(fn, segs, num, max_segs, ep->pz, sge, &total, &local);
	if (st)
		return st;
	if (total > ep->attr.max_dto_payload_size) {
		openrdma_dbg(ITAPI_LOG, "%s: %llu bytes > max payload %zu", fn,
			     (unsigned long long)total,
			     ep->attr.max_dto_payload_size);
		return IT_ERR_PAYLOAD_SIZE;
	}
	st = flags_check(fn, flags, allowed, &sf);
	if (st)
		return st;
	wr->sg_list = sge;
	wr->num_sge = (int)num;
	wr->send_flags = (unsigned int)sf;
	if (local && total <= ep->inline_max && opcode_inlines(wr->opcode))
		wr->send_flags |= OPENRDMA_SEND_INLINE;
	ret = post_sq(ep, wr, cookie, event, (uint32_t)total,
		      flags & IT_COMPLETION_FLAG, NULL);
	return ret ? post_status(ret) : IT_SUCCESS;
}

OPENRDMA_EXPORT it_status_t it_post_send(it_ep_handle_t ep_handle,
					 const it_lmr_triplet_t *local_segments,
					 size_t num_segments,
					 it_dto_cookie_t cookie,
					 it_dto_flags_t dto_flags)
{
	struct openrdma_send_wr wr;

	swr_init(&wr, OPENRDMA_WR_SEND);
	return post_segs("it_post_send", ep_handle, IT_RC_SERVICE, &wr,
			 local_segments, num_segments, SIZE_MAX, cookie,
			 dto_flags, SEND_FLAGS, IT_DTO_SEND_CMPL_EVENT);
}

OPENRDMA_EXPORT it_status_t it_post_send_and_unlink(
	it_ep_handle_t ep_handle, const it_lmr_triplet_t *local_segments,
	size_t num_segments, it_dto_cookie_t cookie, it_dto_flags_t dto_flags,
	it_rmr_context_t rmr_context)
{
	struct itapi_ep *ep = to_ep(ep_handle);
	struct openrdma_send_wr wr;

	if (itapi_valid(ep, IT_HANDLE_TYPE_EP) &&
	    !(ep->obj.ia->dev.device_cap_flags & OPENRDMA_DEVICE_SEND_INV)) {
		openrdma_dbg(ITAPI_LOG, "it_post_send_and_unlink: no remote "
					"invalidation on this transport");
		return IT_ERR_OP_NOT_SUPPORTED;
	}
	if (rmr_context > UINT32_MAX) {
		itapi_arg_err("it_post_send_and_unlink", "rmr_context",
			      "0x%llx", (unsigned long long)rmr_context);
		return IT_ERR_INVALID_RMR;
	}
	swr_init(&wr, OPENRDMA_WR_SEND_WITH_INV);
	wr.invalidate_rkey = (uint32_t)rmr_context;
	return post_segs("it_post_send_and_unlink", ep_handle, IT_RC_SERVICE,
			 &wr, local_segments, num_segments, SIZE_MAX, cookie,
			 dto_flags, SEND_FLAGS, IT_DTO_SEND_CMPL_EVENT);
}

OPENRDMA_EXPORT it_status_t it_post_sendto(
	it_ep_handle_t ep_handle, const it_lmr_triplet_t *local_segments,
	size_t num_segments, it_dto_cookie_t cookie, it_dto_flags_t dto_flags,
	const it_dg_remote_ep_addr_t *remote_ep_addr)
{
	struct itapi_ep *ep = to_ep(ep_handle);
	struct openrdma_send_wr wr;
	struct itapi_ah *ah;
	it_status_t st;

	st = ep_check("it_post_sendto", ep, IT_UD_SERVICE);
	if (st)
		return st;
	if (!remote_ep_addr || remote_ep_addr->type != IT_DG_TYPE_IB_UD) {
		itapi_arg_err("it_post_sendto", "remote_ep_addr",
			      "NULL or not IT_DG_TYPE_IB_UD");
		return IT_ERR_INVALID_AH;
	}
	ah = (struct itapi_ah *)remote_ep_addr->addr.ud.addr;
	if (!itapi_valid(ah, IT_HANDLE_TYPE_ADDR) || ah->obj.ia != ep->obj.ia) {
		itapi_arg_err("it_post_sendto", "remote_ep_addr",
			      "not an address handle of the IA");
		return IT_ERR_INVALID_AH;
	}
	swr_init(&wr, OPENRDMA_WR_SEND);
	wr.wr.ud.ah = atomic_load_explicit(&ah->ah, memory_order_acquire);
	wr.wr.ud.remote_qpn = remote_ep_addr->addr.ud.ep_info.ud_ep_id;
	wr.wr.ud.remote_qkey = remote_ep_addr->addr.ud.ep_info.ud_ep_key;
	return post_segs("it_post_sendto", ep_handle, IT_UD_SERVICE, &wr,
			 local_segments, num_segments, SIZE_MAX, cookie,
			 dto_flags, SEND_FLAGS, IT_DTO_SEND_CMPL_EVENT);
}

/* it_post_rdma_write() and it_post_rdma_read(): opcode tells which. */
static inline it_status_t
post_rdma(const char *fn, it_ep_handle_t ep_handle,
	  enum openrdma_wr_opcode opcode, const it_lmr_triplet_t *segs,
	  size_t num, it_dto_cookie_t cookie, it_dto_flags_t dto_flags,
	  it_rdma_addr_t rdma_addr, it_rmr_context_t rmr_context)
{
	struct itapi_ep *ep = to_ep(ep_handle);
	bool write = opcode == OPENRDMA_WR_RDMA_WRITE;
	struct openrdma_send_wr wr;
	size_t max = 0;

	if (rmr_context > UINT32_MAX) {
		openrdma_dbg(ITAPI_LOG, "%s: arg rmr_context: 0x%llx", fn,
			     (unsigned long long)rmr_context);
		return IT_ERR_INVALID_RMR;
	}
	if (itapi_valid(ep, IT_HANDLE_TYPE_EP))
		max = write ? ep->attr.srv.rc.max_rdma_write_segments :
			      ep->attr.srv.rc.max_rdma_read_segments;
	swr_init(&wr, opcode);
	wr.wr.rdma.remote_addr = rdma_addr;
	wr.wr.rdma.rkey = (uint32_t)rmr_context;
	return post_segs(fn, ep_handle, IT_RC_SERVICE, &wr, segs, num, max,
			 cookie, dto_flags, RDMA_FLAGS,
			 write ? IT_DTO_RDMA_WRITE_CMPL_EVENT :
				 IT_DTO_RDMA_READ_CMPL_EVENT);
}

OPENRDMA_EXPORT it_status_t it_post_rdma_write(
	it_ep_handle_t ep_handle, const it_lmr_triplet_t *local_segments,
	size_t num_segments, it_dto_cookie_t cookie, it_dto_flags_t dto_flags,
	it_rdma_addr_t rdma_addr, it_rmr_context_t rmr_context)
{
	return post_rdma("it_post_rdma_write", ep_handle,
			 OPENRDMA_WR_RDMA_WRITE, local_segments, num_segments,
			 cookie, dto_flags, rdma_addr, rmr_context);
}

OPENRDMA_EXPORT it_status_t it_post_rdma_read(
	it_ep_handle_t ep_handle, const it_lmr_triplet_t *local_segments,
	size_t num_segments, it_dto_cookie_t cookie, it_dto_flags_t dto_flags,
	it_rdma_addr_t rdma_addr, it_rmr_context_t rmr_context)
{
	return post_rdma("it_post_rdma_read", ep_handle, OPENRDMA_WR_RDMA_READ,
			 local_segments, num_segments, cookie, dto_flags,
			 rdma_addr, rmr_context);
}

/* An RMR segment as an SGE: the memory of the LMR the RMR is linked to. */
static int rmr_triplet_sge(struct itapi_ia *ia, const it_rmr_triplet_t *t,
			   struct openrdma_sge *sge)
{
	const struct itapi_rmr *rmr = (const struct itapi_rmr *)t->rmr;
	uint64_t start, base;
	int ret = 0;

	if (!itapi_valid(rmr, IT_HANDLE_TYPE_RMR) || rmr->obj.ia != ia)
		return -OPENRDMA_EBADHANDLE;
	pthread_mutex_lock(&ia->key_lock);
	if (!rmr->linked || !rmr->lmr || !rmr->lmr->mr ||
	    !(rmr->privs & IT_PRIV_REMOTE_WRITE)) {
		ret = -OPENRDMA_EBADHANDLE;
		goto out;
	}
	base = (uint64_t)(uintptr_t)rmr->addr;
	start = rmr->addr_mode == IT_ADDR_MODE_RELATIVE ?
			base + t->addr.rel :
			(uint64_t)(uintptr_t)t->addr.abs;
	if (t->length > UINT32_MAX || start < base ||
	    start + t->length > base + rmr->length) {
		ret = -OPENRDMA_EMSGSIZE;
		goto out;
	}
	sge->addr = start;
	sge->length = (uint32_t)t->length;
	sge->lkey = rmr->lmr->mr->lkey;
out:
	pthread_mutex_unlock(&ia->key_lock);
	return ret;
}

OPENRDMA_EXPORT it_status_t it_post_rdma_read_to_rmr(
	it_ep_handle_t ep_handle, const it_rmr_triplet_t *local_segments,
	size_t num_segments, it_dto_cookie_t cookie, it_dto_flags_t dto_flags,
	it_rdma_addr_t rdma_addr, it_rmr_context_t rmr_context)
{
	struct itapi_ep *ep = to_ep(ep_handle);
	struct openrdma_sge sge[ITAPI_MAX_SGE];
	struct openrdma_send_wr wr;
	uint64_t total = 0;
	it_status_t st;
	size_t i;
	int sf, ret;

	st = ep_check("it_post_rdma_read_to_rmr", ep, IT_RC_SERVICE);
	if (st)
		return st;
	if (!(ep->obj.ia->dev.device_cap_flags &
	      OPENRDMA_DEVICE_PEER_CAN_READ_RMR)) {
		openrdma_dbg(ITAPI_LOG,
			     "it_post_rdma_read_to_rmr: unsupported here");
		return IT_ERR_OP_NOT_SUPPORTED;
	}
	if (num_segments > ep->attr.srv.rc.max_rdma_read_segments ||
	    num_segments > ITAPI_MAX_SGE)
		return IT_ERR_INVALID_NUM_SEGMENTS;
	if (num_segments && !local_segments)
		return IT_ERR_FAULT;
	if (rmr_context > UINT32_MAX)
		return IT_ERR_INVALID_RMR;
	st = flags_check("it_post_rdma_read_to_rmr", dto_flags, RDMA_FLAGS,
			 &sf);
	if (st)
		return st;
	for (i = 0; i < num_segments; i++) {
		ret = rmr_triplet_sge(ep->obj.ia, &local_segments[i], &sge[i]);
		if (ret)
			return ret == -OPENRDMA_EMSGSIZE ?
				       IT_ERR_INVALID_LENGTH :
				       IT_ERR_INVALID_RMR;
		total += sge[i].length;
	}
	if (total > ep->attr.max_dto_payload_size)
		return IT_ERR_PAYLOAD_SIZE;
	swr_init(&wr, OPENRDMA_WR_RDMA_READ);
	wr.sg_list = sge;
	wr.num_sge = (int)num_segments;
	wr.send_flags = (unsigned int)sf;
	wr.wr.rdma.remote_addr = rdma_addr;
	wr.wr.rdma.rkey = (uint32_t)rmr_context;
	ret = itapi_post_sq(ep, &wr, cookie, IT_DTO_RDMA_READ_CMPL_EVENT,
			    (uint32_t)total, dto_flags & IT_COMPLETION_FLAG,
			    NULL);
	return ret ? post_status(ret) : IT_SUCCESS;
}

OPENRDMA_EXPORT it_status_t it_post_atomic(
	it_ep_handle_t ep_handle, it_atomic_op_t op, uint64_t swap_or_add,
	uint64_t compare, const it_lmr_triplet_t *result,
	it_dto_cookie_t cookie, it_dto_flags_t dto_flags,
	it_rdma_addr_t rdma_addr, it_rmr_context_t rmr_context)
{
	struct itapi_ep *ep = to_ep(ep_handle);
	struct openrdma_send_wr wr;
	it_status_t st;

	st = ep_check("it_post_atomic", ep, IT_RC_SERVICE);
	if (st)
		return st;
	if (op != IT_COMPARE_AND_SWAP && op != IT_FETCH_AND_ADD) {
		itapi_arg_err("it_post_atomic", "op", "%d", (int)op);
		return IT_ERR_INVALID_ATOMIC_OP;
	}
	if (!result) {
		itapi_arg_err("it_post_atomic", "result", "NULL");
		return IT_ERR_FAULT;
	}
	if (result->length != sizeof(uint64_t)) {
		itapi_arg_err("it_post_atomic", "result", "length %llu",
			      (unsigned long long)result->length);
		return IT_ERR_INVALID_LENGTH;
	}
	if (rmr_context > UINT32_MAX) {
		itapi_arg_err("it_post_atomic", "rmr_context", "0x%llx",
			      (unsigned long long)rmr_context);
		return IT_ERR_INVALID_RMR;
	}
	/* arguments first: an error names the caller's mistake */
	if (ep->obj.ia->dev.atomic_cap == OPENRDMA_ATOMIC_NONE) {
		openrdma_dbg(ITAPI_LOG, "it_post_atomic: no atomics here");
		return IT_ERR_OP_NOT_SUPPORTED;
	}
	if (op == IT_COMPARE_AND_SWAP) {
		swr_init(&wr, OPENRDMA_WR_ATOMIC_CMP_AND_SWP);
		wr.wr.atomic.compare_add = compare;
		wr.wr.atomic.swap = swap_or_add;
	} else {
		swr_init(&wr, OPENRDMA_WR_ATOMIC_FETCH_AND_ADD);
		wr.wr.atomic.compare_add = swap_or_add;
	}
	wr.wr.atomic.remote_addr = rdma_addr;
	wr.wr.atomic.rkey = (uint32_t)rmr_context;
	return post_segs("it_post_atomic", ep_handle, IT_RC_SERVICE, &wr,
			 result, 1, 1, cookie, dto_flags, RDMA_FLAGS,
			 op == IT_COMPARE_AND_SWAP ?
				 IT_DTO_CMP_SWAP_CMPL_EVENT :
				 IT_DTO_FETCH_ADD_CMPL_EVENT);
}

/* A receive on an endpoint's own queue (UD: after its GRH area). */
static HOT_INLINE it_status_t post_recv_ep(struct itapi_ep *ep,
					   const it_lmr_triplet_t *segs,
					   size_t num, it_dto_cookie_t cookie)
{
	struct openrdma_sge sge[ITAPI_MAX_SGE + 1];
	struct openrdma_recv_wr wr, *bad;
	size_t first = ep->service == IT_UD_SERVICE ? 1 : 0;
	uint64_t total, seq;
	uint32_t slot;
	it_status_t st;
	int ret;

	st = segs_to_sges("it_post_recv", segs, num, ep->attr.max_recv_segments,
			  NULL, sge + first, &total, NULL);
	if (st)
		return st;
	core_spin_lock(&ep->rq_lock);
	seq = atomic_load_explicit(&ep->rhead, memory_order_relaxed);
	/* acquire: the converter read the cookie of the slot reused here */
	if (seq - atomic_load_explicit(&ep->rtail, memory_order_acquire) >=
	    ep->rnum) {
		core_spin_unlock(&ep->rq_lock);
		return IT_ERR_TOO_MANY_POSTS;
	}
	slot = (uint32_t)seq & (ep->rsize - 1);
	atomic_store_explicit(&ep->rcookie[slot], cookie, memory_order_relaxed);
	/* published before the post: its completion may come before we
	 * return */
	atomic_store_explicit(&ep->rhead, seq + 1, memory_order_release);
	if (first) {
		/* the GRH goes to the slot's own area, the payload to the
		 * consumer's buffers */
		sge[0].addr =
			(uint64_t)(uintptr_t)(ep->grh +
					      (size_t)slot * OPENRDMA_GRH_LEN);
		sge[0].length = OPENRDMA_GRH_LEN;
		sge[0].lkey = ep->grh_mr->lkey;
	}
	wr.wr_id = ITAPI_WRID_RECV | seq;
	wr.next = NULL;
	wr.sg_list = sge;
	wr.num_sge = (int)(num + first);
	ret = core_qp_post_recv(ep->qp, &wr, &bad);
	/* refused: no completion names seq */
	if (ret)
		atomic_store_explicit(&ep->rhead, seq, memory_order_relaxed);
	core_spin_unlock(&ep->rq_lock);
	return ret ? post_status(ret) : IT_SUCCESS;
}

static it_status_t post_recv_srq(struct itapi_srq *srq,
				 const it_lmr_triplet_t *segs, size_t num,
				 it_dto_cookie_t cookie)
{
	struct openrdma_sge sge[ITAPI_MAX_SGE];
	struct openrdma_recv_wr wr, *bad;
	uint64_t total;
	uint32_t slot;
	it_status_t st;
	int ret;

	st = segs_to_sges("it_post_recv", segs, num, srq->max_recv_segs, NULL,
			  sge, &total, NULL);
	if (st)
		return st;
	ret = rslots_get(&srq->slots, cookie, &wr.wr_id, &slot);
	if (ret)
		return IT_ERR_TOO_MANY_POSTS;
	wr.next = NULL;
	wr.sg_list = sge;
	wr.num_sge = (int)num;
	ret = core_srq_post_recv(srq->srq, &wr, &bad);
	if (ret) {
		rslots_put(&srq->slots, wr.wr_id, &cookie, &slot);
		return post_status(ret);
	}
	return IT_SUCCESS;
}

OPENRDMA_EXPORT it_status_t it_post_recv(it_handle_t handle,
					 const it_lmr_triplet_t *local_segments,
					 size_t num_segments,
					 it_dto_cookie_t cookie,
					 it_dto_flags_t dto_flags)
{
	struct itapi_ep *ep = handle;
	int sf;

	if (itapi_valid(ep, IT_HANDLE_TYPE_EP)) {
		if (ep->service != IT_RC_SERVICE || ep->srq) {
			itapi_arg_err("it_post_recv", "handle",
				      "a UD endpoint or one with an SRQ");
			return IT_ERR_INVALID_EP_TYPE;
		}
		if (flags_check("it_post_recv", dto_flags, RECV_FLAGS, &sf))
			return IT_ERR_INVALID_DTO_FLAGS;
		return post_recv_ep(ep, local_segments, num_segments, cookie);
	}
	if (!itapi_valid(handle, IT_HANDLE_TYPE_SRQ)) {
		itapi_arg_err("it_post_recv", "handle", "not an EP or SRQ");
		return IT_ERR_INVALID_HANDLE;
	}
	if (flags_check("it_post_recv", dto_flags, RECV_FLAGS, &sf))
		return IT_ERR_INVALID_DTO_FLAGS;
	return post_recv_srq(handle, local_segments, num_segments, cookie);
}

OPENRDMA_EXPORT it_status_t it_post_recvfrom(
	it_ep_handle_t ep_handle, const it_lmr_triplet_t *local_segments,
	size_t num_segments, it_dto_cookie_t cookie, it_dto_flags_t dto_flags)
{
	struct itapi_ep *ep = to_ep(ep_handle);
	it_status_t st;
	int sf;

	st = ep_check("it_post_recvfrom", ep, IT_UD_SERVICE);
	if (st)
		return st;
	if (flags_check("it_post_recvfrom", dto_flags, RECV_FLAGS, &sf))
		return IT_ERR_INVALID_DTO_FLAGS;
	return post_recv_ep(ep, local_segments, num_segments, cookie);
}

/* ------------------------------------------------------------------ */
/* Completions                                                        */
/* ------------------------------------------------------------------ */

static it_dto_status_t wc_status(enum openrdma_wc_status status,
				 it_event_type_t event)
{
	/* before the switch, which may be a table's indirect jump */
	if (status == OPENRDMA_WC_SUCCESS)
		return IT_DTO_SUCCESS;
	switch (status) {
	case OPENRDMA_WC_WR_FLUSH_ERR:
		return IT_DTO_ERR_FLUSHED;
	case OPENRDMA_WC_LOC_LEN_ERR:
		return IT_DTO_ERR_LOCAL_LENGTH;
	case OPENRDMA_WC_LOC_QP_OP_ERR:
	case OPENRDMA_WC_LOC_EEC_OP_ERR:
		if (event == IT_LMR_LINK_CMPL_EVENT)
			return IT_DTO_ERR_LOCAL_MM_OPERATION;
		if (event == IT_RMR_LINK_CMPL_EVENT)
			return IT_RMR_OPERATION_FAILED;
		return IT_DTO_ERR_LOCAL_EP;
	case OPENRDMA_WC_LOC_PROT_ERR:
	case OPENRDMA_WC_LOC_ACCESS_ERR:
	case OPENRDMA_WC_LOC_RDD_VIOL_ERR:
		return IT_DTO_ERR_LOCAL_PROTECTION;
	case OPENRDMA_WC_MW_BIND_ERR:
		return IT_RMR_OPERATION_FAILED;
	case OPENRDMA_WC_BAD_RESP_ERR:
		return IT_DTO_ERR_BAD_RESPONSE;
	case OPENRDMA_WC_REM_ACCESS_ERR:
		return IT_DTO_ERR_REMOTE_ACCESS;
	case OPENRDMA_WC_REM_INV_REQ_ERR:
	case OPENRDMA_WC_REM_OP_ERR:
	case OPENRDMA_WC_REM_INV_RD_REQ_ERR:
	case OPENRDMA_WC_REM_ABORT_ERR:
		return IT_DTO_ERR_REMOTE_RESPONDER;
	case OPENRDMA_WC_RNR_RETRY_EXC_ERR:
		return IT_DTO_ERR_RECEIVER_NOT_READY;
	default:
		/* retry exceeded, fatal, timeouts: the connection failed */
		return IT_DTO_ERR_TRANSPORT;
	}
}

/*
 * A ring's *tail = max(*tail, seq + 1): stale completions never move it
 * back.  False if the tail was past seq already (a reset retired it).
 */
static inline bool ring_retire(_Atomic uint64_t *tail, uint64_t seq)
{
	uint64_t t = atomic_load_explicit(tail, memory_order_relaxed);

	do {
		if (t > seq)
			return false;
	} while (!atomic_compare_exchange_weak_explicit(
		tail, &t, seq + 1, memory_order_release, memory_order_relaxed));
	return true;
}

static inline int send_convert(struct itapi_evd *evd, struct itapi_ep *ep,
			       const struct openrdma_wc *wc, it_event_t *ev)
{
	const struct itapi_swr *s = &ep->sring[wc->wr_id & (ep->ssize - 1)];
	it_dto_cmpl_event_t *d = &ev->dto_cmpl;
	it_dto_status_t status;

	if (s->seq != wc->wr_id)
		return CORE_EVD_SKIP;
	status = wc_status(wc->status, s->event);
	/* a skipped completion leaves ev alone: it may be the caller's */
	if (status == IT_DTO_SUCCESS && !s->signaled) {
		ring_retire(&ep->stail, wc->wr_id);
		return CORE_EVD_SKIP;
	}
	d->event_number = s->event;
	d->evd = (it_evd_handle_t)evd;
	d->ep = (it_ep_handle_t)ep;
	d->cookie = s->cookie;
	d->dto_status = status;
	d->transferred_length = status == IT_DTO_SUCCESS ? s->length : 0;
	d->unlinked_mr_handle = NULL;
	if (status != IT_DTO_SUCCESS && s->event == IT_RMR_LINK_CMPL_EVENT)
		itapi_rmr_link_failed(ep->obj.ia, s->mem);
	ring_retire(&ep->stail, wc->wr_id);
	return 0;
}

/* The UD part of a receive's event: length, sender, path. */
static __attribute__((noinline)) void
ud_recv_convert(struct itapi_ep *ep, const struct openrdma_wc *wc,
		uint32_t slot, it_all_dto_cmpl_event_t *d)
{
	const struct openrdma_grh *grh;

	d->event_number = IT_DTO_UD_RECV_CMPL_EVENT;
	d->transferred_length = 0;
	d->flags = (it_dto_ud_flags_t)0;
	d->ud_ep_id = wc->src_qp;
	memset(&d->src_path, 0, sizeof(d->src_path));
	if (wc->status)
		return;
	/* the GRH area is the endpoint's, not the consumer's */
	d->transferred_length = wc->byte_len >= OPENRDMA_GRH_LEN ?
					wc->byte_len - OPENRDMA_GRH_LEN :
					0;
	grh = NULL;
	if (wc->wc_flags & OPENRDMA_WC_GRH) {
		d->flags = IT_UD_IB_GRH_PRESENT;
		grh = (const struct openrdma_grh *)(ep->grh +
						    (size_t)slot *
							    OPENRDMA_GRH_LEN);
	}
	itapi_path_from_recv(ep->obj.ia, ep->spigot_id, wc, grh, &d->src_path);
}

/*
 * Takes the cookie of a receive on the endpoint's own queue: false if the
 * completion is stale (its receive was posted before a reset).  A reset
 * may retire it meanwhile, and a post reuse its slot: the retire that
 * fails then discards what was read.
 */
static inline bool rq_take(struct itapi_ep *ep, uint64_t seq,
			   it_dto_cookie_t *cookie, uint32_t *slot)
{
	/* acquire: the post published seq after writing its cookie */
	if (seq < atomic_load_explicit(&ep->rtail, memory_order_relaxed) ||
	    seq >= atomic_load_explicit(&ep->rhead, memory_order_acquire))
		return false;
	*slot = (uint32_t)seq & (ep->rsize - 1);
	*cookie =
		atomic_load_explicit(&ep->rcookie[*slot], memory_order_relaxed);
	return ring_retire(&ep->rtail, seq);
}

static inline int recv_convert(struct itapi_evd *evd, struct itapi_ep *ep,
			       const struct openrdma_wc *wc, it_event_t *ev)
{
	it_all_dto_cmpl_event_t *d = &ev->all_dto_cmpl;
	it_dto_cookie_t cookie;
	uint32_t slot;

	if (!(ep->srq ? rslots_put(&ep->srq->slots, wc->wr_id, &cookie, &slot) :
			rq_take(ep, wc->wr_id & ~ITAPI_WRID_RECV, &cookie,
				&slot)))
		return CORE_EVD_SKIP;
	d->evd = (it_evd_handle_t)evd;
	d->ep = (it_ep_handle_t)ep;
	d->cookie = cookie;
	d->dto_status = wc_status(wc->status, IT_DTO_RC_RECV_CMPL_EVENT);
	d->unlinked_mr_handle = NULL;
	if (ep->service != IT_RC_SERVICE) {
		ud_recv_convert(ep, wc, slot, d);
		return 0;
	}
	d->event_number = IT_DTO_RC_RECV_CMPL_EVENT;
	d->transferred_length = wc->status ? 0 : wc->byte_len;
	if (!wc->status && (wc->wc_flags & OPENRDMA_WC_WITH_INV))
		d->unlinked_mr_handle =
			itapi_rmr_invalidated(ep->obj.ia, wc->invalidated_rkey);
	return 0;
}

/* The endpoint of a completion that is not the last one's. */
static COLD struct itapi_ep *ep_find(struct itapi_evd *evd, uint32_t qpn,
				     bool recv)
{
	struct itapi_ep *ep;

	if (recv) {
		HASH_FIND(recv_hh, evd->recv_eps, &qpn, sizeof(qpn), ep);
		if (ep)
			evd->recv_last = ep;
	} else {
		HASH_FIND(req_hh, evd->req_eps, &qpn, sizeof(qpn), ep);
		if (ep)
			evd->req_last = ep;
	}
	return ep;
}

int itapi_dto_convert(void *arg, const struct openrdma_wc *wc, void *rec)
{
	struct itapi_evd *evd = arg;
	uint32_t qpn = wc->qp_num;
	struct itapi_ep *ep;

	/*
	 * The engine holds the SEVD's lock, under which the tables change
	 * (ep.c): the endpoint stays listed, and so alive, meanwhile.
	 */
	if (wc->wr_id & ITAPI_WRID_RECV) {
		ep = evd->recv_last;
		if (!ep || ep->qpn != qpn)
			ep = ep_find(evd, qpn, true);
		return ep ? recv_convert(evd, ep, wc, rec) : CORE_EVD_SKIP;
	}
	ep = evd->req_last;
	if (!ep || ep->qpn != qpn)
		ep = ep_find(evd, qpn, false);
	return ep ? send_convert(evd, ep, wc, rec) : CORE_EVD_SKIP;
}
