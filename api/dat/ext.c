/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The InfiniBand extension (dat_ib_extensions.h, version 2.0.9): every
 * dat_ib_*() call reaches this provider as dat_extension_op(handle, op,
 * ...).  The arguments are read with the types the header's macros cast
 * them to.  Atomics, RDMA write with immediate data, UD, counters and the
 * fast open-and-query are provided; the collectives, which need a fabric
 * that offloads MPI, return DAT_NOT_IMPLEMENTED as DAPL's providers do.
 */
#include "config.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <openrdma/errno.h>
#include <openrdma/log.h>

#include "api/dat/provider.h"
#include "api/dat/slots.h"

#define ATOMIC_LEN 8

static DAT_RETURN post_atomic(DAT_EP_HANDLE ep_handle, bool swap,
			      uint64_t compare_add, uint64_t swap_val,
			      const DAT_LMR_TRIPLET *lbuf,
			      DAT_DTO_COOKIE cookie,
			      const DAT_RMR_TRIPLET *rbuf,
			      DAT_COMPLETION_FLAGS flags, const char *fn)
{
	struct datp_ep *ep = datp_ep_get(ep_handle);
	struct openrdma_send_wr wr = { 0 };
	struct datp_slot slot = { 0 };
	DAT_LMR_TRIPLET local;
	DAT_RETURN ret;

	if (!ep)
		return datp_fail(-OPENRDMA_EBADHANDLE, DAT_INVALID_HANDLE_EP,
				 fn, "ep %p", ep_handle);
	if (ep->obj.ia->dev_attr.atomic_cap == OPENRDMA_ATOMIC_NONE)
		return datp_fail(-OPENRDMA_EOPNOTSUPP, DAT_NO_SUBTYPE, fn,
				 "%s has no atomics", ep->obj.ia->entry->iface);
	if (!lbuf || lbuf->segment_length < ATOMIC_LEN)
		return datp_fail(-OPENRDMA_EINVAL, DAT_INVALID_ARG3, fn,
				 "local buffer: NULL or under 8 bytes");
	if (!rbuf || rbuf->segment_length < ATOMIC_LEN)
		return datp_fail(-OPENRDMA_EINVAL, DAT_INVALID_ARG5, fn,
				 "remote buffer: NULL or under 8 bytes");
	ret = datp_ep_can_send(ep, fn);
	if (ret != DAT_SUCCESS)
		return ret;
	local = *lbuf;
	local.segment_length = ATOMIC_LEN;
	wr.opcode = swap ? OPENRDMA_WR_ATOMIC_CMP_AND_SWP :
			   OPENRDMA_WR_ATOMIC_FETCH_AND_ADD;
	wr.wr.atomic.remote_addr = rbuf->virtual_address;
	wr.wr.atomic.compare_add = compare_add;
	wr.wr.atomic.swap = swap_val;
	wr.wr.atomic.rkey = rbuf->rmr_context;
	slot.cookie = cookie;
	slot.op = swap ? DAT_IB_DTO_CMP_SWAP : DAT_IB_DTO_FETCH_ADD;
	ret = datp_post_sq(ep, &wr, &local, 1, &slot, flags, fn);
	if (ret == DAT_SUCCESS)
		datp_ep_count(ep,
			      swap ? DCNT_EP_POST_CMP_SWAP :
				     DCNT_EP_POST_FETCH_ADD,
			      ATOMIC_LEN);
	return ret;
}

static DAT_RETURN post_write_immed(DAT_EP_HANDLE ep_handle, DAT_COUNT n,
				   DAT_LMR_TRIPLET *lbuf, DAT_DTO_COOKIE cookie,
				   const DAT_RMR_TRIPLET *rbuf, uint32_t idata,
				   DAT_COMPLETION_FLAGS flags)
{
	struct datp_ep *ep = datp_ep_get(ep_handle);
	struct openrdma_send_wr wr = { 0 };
	struct datp_slot slot = { 0 };
	uint64_t total = 0;
	DAT_RETURN ret;
	DAT_COUNT i;

	if (!ep)
		return DATP_HANDLE(DAT_INVALID_HANDLE_EP, "ep %p", ep_handle);
	if (n < 0 || n > datp_rdma_iov_max(ep, false))
		return DATP_ARG(DAT_INVALID_ARG2, "segments %d (at most %d)", n,
				datp_rdma_iov_max(ep, false));
	if (n && !lbuf)
		return DATP_ARG(DAT_INVALID_ARG3, "local buffer: NULL");
	if (!rbuf)
		return DATP_ARG(DAT_INVALID_ARG5, "remote buffer: NULL");
	ret = datp_ep_can_send(ep, __func__);
	if (ret != DAT_SUCCESS)
		return ret;
	for (i = 0; i < n; i++)
		total += lbuf[i].segment_length;
	wr.opcode = OPENRDMA_WR_RDMA_WRITE_WITH_IMM;
	wr.imm_data = htonl(idata);
	wr.wr.rdma.remote_addr = rbuf->virtual_address;
	wr.wr.rdma.rkey = rbuf->rmr_context;
	slot.cookie = cookie;
	slot.op = DAT_IB_DTO_RDMA_WRITE_IMMED;
	ret = datp_post_sq(ep, &wr, lbuf, n, &slot, flags, __func__);
	if (ret == DAT_SUCCESS)
		datp_ep_count(ep, DCNT_EP_POST_WRITE_IMM, total);
	return ret;
}

/* ------------------------------------------------------------ counters */

/* The counters of a handle: an IA's, an EP's or an EVD's. */
static DAT_RETURN counters_of(DAT_HANDLE handle, atomic_uint_fast64_t **c_out,
			      int *n_out)
{
	enum datp_kind kind;
	struct datp_obj *obj = datp_obj_any(handle, &kind);

	switch (obj ? kind : DATP_KIND_MAX) {
	case DATP_IA:
		*c_out = ((struct datp_ia *)obj)->counters;
		*n_out = DCNT_IA_ALL_COUNTERS;
		return DAT_SUCCESS;
	case DATP_EP:
		*c_out = ((struct datp_ep *)obj)->counters;
		*n_out = DCNT_EP_ALL_COUNTERS;
		return DAT_SUCCESS;
	case DATP_EVD:
		*c_out = ((struct datp_evd *)obj)->counters;
		*n_out = DCNT_EVD_ALL_COUNTERS;
		return DAT_SUCCESS;
	default:
		return DATP_HANDLE(DAT_INVALID_HANDLE1,
				   "%p: counters belong to IAs, EPs and EVDs",
				   handle);
	}
}

static DAT_RETURN query_counters(DAT_HANDLE handle, int cntr, DAT_UINT64 *out,
				 int reset)
{
	atomic_uint_fast64_t *c;
	DAT_RETURN ret;
	int n, i;

	ret = counters_of(handle, &c, &n);
	if (ret != DAT_SUCCESS)
		return ret;
	if (cntr < 0 || cntr > n)
		return DATP_ARG(DAT_INVALID_ARG3, "counter %d (0 to %d)", cntr,
				n);
	if (!out)
		return DATP_ARG(DAT_INVALID_ARG4, "counters: NULL");
	/* the *_ALL_COUNTERS value asks for every one, in order */
	for (i = cntr == n ? 0 : cntr; i < (cntr == n ? n : cntr + 1); i++) {
		*out++ = reset ? atomic_exchange(&c[i], 0) : atomic_load(&c[i]);
	}
	return DAT_SUCCESS;
}

static DAT_RETURN print_counters(DAT_HANDLE handle, int cntr, int reset)
{
	DAT_UINT64 values[DCNT_IA_ALL_COUNTERS];
	atomic_uint_fast64_t *c;
	DAT_RETURN ret;
	int n, i, first;

	ret = counters_of(handle, &c, &n);
	if (ret != DAT_SUCCESS)
		return ret;
	if (cntr < 0 || cntr > n)
		return DATP_ARG(DAT_INVALID_ARG3, "counter %d (0 to %d)", cntr,
				n);
	ret = query_counters(handle, cntr, values, reset);
	if (ret != DAT_SUCCESS)
		return ret;
	first = cntr == n ? 0 : cntr;
	for (i = 0; i < (cntr == n ? n : 1); i++)
		printf("%p counter %d: %" PRIu64 "\n", handle, first + i,
		       (uint64_t)values[i]);
	fflush(stdout);
	return DAT_SUCCESS;
}

/* ------------------------------------------------------------ open query */

static DAT_RETURN open_query(const char *name, va_list args)
{
	DAT_HANDLE *ia_handle = va_arg(args, DAT_HANDLE *);
	DAT_IA_ATTR_MASK ia_mask = va_arg(args, DAT_IA_ATTR_MASK);
	DAT_IA_ATTR *ia_attr = va_arg(args, DAT_IA_ATTR *);
	DAT_PROVIDER_ATTR_MASK pr_mask = va_arg(args, DAT_PROVIDER_ATTR_MASK);
	DAT_PROVIDER_ATTR *pr_attr = va_arg(args, DAT_PROVIDER_ATTR *);
	struct datp_entry *entry;
	struct datp_ia *ia;
	DAT_RETURN ret;
	int err;

	if (!name)
		return DATP_ARG(DAT_INVALID_ARG1, "name: NULL");
	if (!ia_handle)
		return DATP_ARG(DAT_INVALID_ARG2, "ia_handle: NULL");
	entry = datp_entry_find(name);
	if (!entry)
		return DAT_CLASS_ERROR | DAT_PROVIDER_NOT_FOUND |
		       DAT_NAME_NOT_REGISTERED;
	err = datp_ia_create(entry, true, &ia);
	if (err)
		return DATP_ERR(err, DAT_NO_SUBTYPE, "%s: interface %s", name,
				entry->iface);
	ret = datp_ia_query(ia, NULL, ia_mask, ia_attr, pr_mask, pr_attr);
	if (ret != DAT_SUCCESS) {
		datp_ia_destroy(ia);
		return ret;
	}
	*ia_handle = ia;
	return DAT_SUCCESS;
}

static DAT_RETURN close_query(DAT_HANDLE handle)
{
	struct datp_ia *ia = (struct datp_ia *)datp_obj_get(handle, DATP_IA);

	if (!ia || !ia->query_only)
		return DATP_HANDLE(DAT_INVALID_HANDLE_IA,
				   "%p: not from dat_ib_open_query", handle);
	datp_ia_destroy(ia);
	return DAT_SUCCESS;
}

/* ------------------------------------------------------------ dispatch */

DAT_RETURN datp_handle_extendedop(DAT_HANDLE handle, DAT_EXTENDED_OP op,
				  va_list args)
{
	DAT_UINT64 a, b;
	DAT_LMR_TRIPLET *lbuf;
	DAT_RMR_TRIPLET *rbuf;
	DAT_DTO_COOKIE cookie;
	DAT_IB_ADDR_HANDLE *ah;
	DAT_COUNT n;
	uint32_t idata;
	int flags, cntr;
	DAT_UINT64 *out;

	switch ((DAT_IB_OP)op) {
	case DAT_IB_OPEN_QUERY_OP:
		/* libdat2 passes the IA name in place of a handle */
		return open_query((const char *)handle, args);
	case DAT_IB_CLOSE_QUERY_OP:
		return close_query(handle);
	case DAT_IB_FETCH_AND_ADD_OP:
		a = va_arg(args, DAT_UINT64);
		lbuf = va_arg(args, DAT_LMR_TRIPLET *);
		cookie = va_arg(args, DAT_DTO_COOKIE);
		rbuf = va_arg(args, DAT_RMR_TRIPLET *);
		flags = va_arg(args, int);
		return post_atomic(handle, false, a, 0, lbuf, cookie, rbuf,
				   (DAT_COMPLETION_FLAGS)flags, __func__);
	case DAT_IB_CMP_AND_SWAP_OP:
		a = va_arg(args, DAT_UINT64);
		b = va_arg(args, DAT_UINT64);
		lbuf = va_arg(args, DAT_LMR_TRIPLET *);
		cookie = va_arg(args, DAT_DTO_COOKIE);
		rbuf = va_arg(args, DAT_RMR_TRIPLET *);
		flags = va_arg(args, int);
		return post_atomic(handle, true, a, b, lbuf, cookie, rbuf,
				   (DAT_COMPLETION_FLAGS)flags, __func__);
	case DAT_IB_RDMA_WRITE_IMMED_OP:
		n = va_arg(args, DAT_COUNT);
		lbuf = va_arg(args, DAT_LMR_TRIPLET *);
		cookie = va_arg(args, DAT_DTO_COOKIE);
		rbuf = va_arg(args, DAT_RMR_TRIPLET *);
		idata = va_arg(args, DAT_UINT32);
		flags = va_arg(args, int);
		return post_write_immed(handle, n, lbuf, cookie, rbuf, idata,
					(DAT_COMPLETION_FLAGS)flags);
	case DAT_IB_UD_SEND_OP:
		n = va_arg(args, DAT_COUNT);
		lbuf = va_arg(args, DAT_LMR_TRIPLET *);
		ah = va_arg(args, DAT_IB_ADDR_HANDLE *);
		cookie = va_arg(args, DAT_DTO_COOKIE);
		flags = va_arg(args, int);
		if (!datp_ep_get(handle))
			return DATP_HANDLE(DAT_INVALID_HANDLE_EP, "ep %p",
					   handle);
		return datp_ud_post_send(datp_ep_get(handle), n, lbuf, ah,
					 cookie, (DAT_COMPLETION_FLAGS)flags);
	case DAT_IB_QUERY_COUNTERS_OP:
		cntr = va_arg(args, int);
		out = va_arg(args, DAT_UINT64 *);
		flags = va_arg(args, int);
		return query_counters(handle, cntr, out, flags);
	case DAT_IB_PRINT_COUNTERS_OP:
		cntr = va_arg(args, int);
		flags = va_arg(args, int);
		return print_counters(handle, cntr, flags);
	case DAT_IB_START_COUNTERS_OP:
	case DAT_IB_STOP_COUNTERS_OP:
		/* counting never stops; link and diagnostic ones stay 0 */
		if (!datp_obj_get(handle, DATP_IA))
			return DATP_HANDLE(DAT_INVALID_HANDLE_IA, "ia %p",
					   handle);
		return DAT_SUCCESS;
	case DAT_IB_UD_CM_FREE_OP:
		/* a UD connection keeps nothing once its event is out */
		if (!datp_ep_get(handle))
			return DATP_HANDLE(DAT_INVALID_HANDLE_EP, "ep %p",
					   handle);
		return DAT_SUCCESS;
	case DAT_IB_UD_AH_FREE_OP:
		ah = va_arg(args, DAT_IB_ADDR_HANDLE *);
		if (!datp_ep_get(handle))
			return DATP_HANDLE(DAT_INVALID_HANDLE_EP, "ep %p",
					   handle);
		return datp_ud_ah_free(datp_ep_get(handle), ah);
	default:
		openrdma_dbg("dat", "extension op %d: not implemented", op);
		/* bare, as DAPL's providers return it */
		return DAT_NOT_IMPLEMENTED;
	}
}
