/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * OpenRDMA codes to DAT_RETURN, in one place.  A DAT_RETURN is a class, a
 * type and a subtype; the subtype says which argument, handle, state or
 * resource failed, and only means something within its group, so a
 * subtype from another group is replaced by the group's generic one.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include <openrdma/errno.h>
#include <openrdma/log.h>

#include "api/dat/provider.h"

static bool sub_in(DAT_RETURN_SUBTYPE sub, DAT_RETURN_SUBTYPE lo,
		   DAT_RETURN_SUBTYPE hi)
{
	return sub >= lo && sub <= hi;
}

static DAT_RETURN dat_error(DAT_RETURN type, DAT_RETURN_SUBTYPE sub)
{
	return DAT_CLASS_ERROR | type | sub;
}

DAT_RETURN datp_ret(int err, DAT_RETURN_SUBTYPE sub)
{
	switch (-err) {
	case 0:
		return DAT_SUCCESS;
	case OPENRDMA_EINVAL:
		if (!sub_in(sub, DAT_INVALID_ARG1, DAT_INVALID_ARG10))
			sub = DAT_NO_SUBTYPE;
		return dat_error(DAT_INVALID_PARAMETER, sub);
	case OPENRDMA_EBADHANDLE:
		if (!sub_in(sub, DAT_INVALID_HANDLE_IA, DAT_INVALID_HANDLE10))
			sub = DAT_NO_SUBTYPE;
		return dat_error(DAT_INVALID_HANDLE, sub);
	case OPENRDMA_ESTATE:
	case OPENRDMA_EBUSY:
	case OPENRDMA_EISCONN:
	case OPENRDMA_ENOTCONN:
	case OPENRDMA_EALREADY:
		if (!sub_in(sub, DAT_INVALID_STATE_EP_UNCONNECTED,
			    DAT_INVALID_STATE_SRQ_SHUTDOWN))
			sub = DAT_NO_SUBTYPE;
		return dat_error(DAT_INVALID_STATE, sub);
	case OPENRDMA_ENOMEM:
	case OPENRDMA_ENOBUFS:
		if (!sub_in(sub, DAT_RESOURCE_MEMORY, DAT_RESOURCE_SRQ))
			sub = DAT_RESOURCE_MEMORY;
		return dat_error(DAT_INSUFFICIENT_RESOURCES, sub);
	case OPENRDMA_ENOSPC:
		return dat_error(DAT_QUEUE_FULL, DAT_NO_SUBTYPE);
	case OPENRDMA_EAGAIN:
		/*
		 * Without the class bit: DAT programs poll with
		 * "dat_evd_dequeue() == DAT_QUEUE_EMPTY" as often as with
		 * DAT_GET_TYPE(), and the bare type satisfies both.
		 */
		return DAT_QUEUE_EMPTY;
	case OPENRDMA_ETIMEDOUT:
		return dat_error(DAT_TIMEOUT_EXPIRED, DAT_NO_SUBTYPE);
	case OPENRDMA_EINTR:
		return dat_error(DAT_INTERRUPTED_CALL, DAT_NO_SUBTYPE);
	case OPENRDMA_ECANCELED:
		return dat_error(DAT_ABORT, DAT_SUB_INTERRUPTED);
	case OPENRDMA_EOPNOTSUPP:
		return dat_error(DAT_MODEL_NOT_SUPPORTED, DAT_NO_SUBTYPE);
	case OPENRDMA_EADDRINUSE:
		return dat_error(DAT_CONN_QUAL_IN_USE, DAT_NO_SUBTYPE);
	case OPENRDMA_ENODEV:
	case OPENRDMA_ENOENT:
	case OPENRDMA_EADDRNOTAVAIL:
		return dat_error(DAT_INVALID_ADDRESS,
				 DAT_INVALID_ADDRESS_UNSUPPORTED);
	case OPENRDMA_ENETDOWN:
	case OPENRDMA_ENETUNREACH:
	case OPENRDMA_EHOSTUNREACH:
	case OPENRDMA_ECONNREFUSED:
		return dat_error(DAT_INVALID_ADDRESS,
				 DAT_INVALID_ADDRESS_UNREACHABLE);
	case OPENRDMA_EMSGSIZE:
	case OPENRDMA_E2BIG:
	case OPENRDMA_ETRUNC:
		return dat_error(DAT_LENGTH_ERROR, DAT_NO_SUBTYPE);
	case OPENRDMA_EACCES:
	case OPENRDMA_EPERM:
		if (!sub_in(sub, DAT_PRIVILEGES_READ,
			    DAT_PRIVILEGES_RDMA_WRITE))
			sub = DAT_NO_SUBTYPE;
		return dat_error(DAT_PRIVILEGES_VIOLATION, sub);
	case OPENRDMA_EFAULT:
		if (!sub_in(sub, DAT_PROTECTION_READ,
			    DAT_PROTECTION_RDMA_WRITE))
			sub = DAT_NO_SUBTYPE;
		return dat_error(DAT_PROTECTION_VIOLATION, sub);
	case OPENRDMA_EOVERFLOW:
		return dat_error(DAT_QUEUE_FULL, DAT_NO_SUBTYPE);
	case OPENRDMA_ERANGE:
		return dat_error(DAT_INVALID_PARAMETER,
				 sub_in(sub, DAT_INVALID_ARG1,
					DAT_INVALID_ARG10) ?
					 sub :
					 DAT_NO_SUBTYPE);
	default:
		return dat_error(DAT_INTERNAL_ERROR, DAT_NO_SUBTYPE);
	}
}

DAT_RETURN datp_fail(int err, DAT_RETURN_SUBTYPE sub, const char *fn,
		     const char *fmt, ...)
{
	DAT_RETURN ret = datp_ret(err, sub);
	char msg[256];
	va_list ap;

	if (openrdma_log_enabled(OPENRDMA_LOG_DEBUG)) {
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		openrdma_log(OPENRDMA_LOG_DEBUG, "dat", fn, "%s (0x%08x: %s)",
			     msg, ret, openrdma_strerror(err));
	}
	return ret;
}

DAT_RETURN_SUBTYPE datp_ep_state_sub(DAT_EP_STATE state)
{
	switch (state) {
	case DAT_EP_STATE_UNCONNECTED:
		return DAT_INVALID_STATE_EP_UNCONNECTED;
	case DAT_EP_STATE_UNCONFIGURED_UNCONNECTED:
		return DAT_INVALID_STATE_EP_UNCONFIGURED;
	case DAT_EP_STATE_RESERVED:
		return DAT_INVALID_STATE_EP_RESERVED;
	case DAT_EP_STATE_UNCONFIGURED_RESERVED:
		return DAT_INVALID_STATE_EP_UNCONFRESERVED;
	case DAT_EP_STATE_PASSIVE_CONNECTION_PENDING:
		return DAT_INVALID_STATE_EP_PASSCONNPENDING;
	case DAT_EP_STATE_UNCONFIGURED_PASSIVE:
		return DAT_INVALID_STATE_EP_UNCONFPASSIVE;
	case DAT_EP_STATE_ACTIVE_CONNECTION_PENDING:
		return DAT_INVALID_STATE_EP_ACTCONNPENDING;
	case DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING:
		return DAT_INVALID_STATE_EP_TENTCONNPENDING;
	case DAT_EP_STATE_UNCONFIGURED_TENTATIVE:
		return DAT_INVALID_STATE_EP_UNCONFTENTATIVE;
	case DAT_EP_STATE_CONNECTED:
	case DAT_EP_STATE_CONNECTED_SINGLE_PATH:
	case DAT_EP_STATE_CONNECTED_MULTI_PATH:
		return DAT_INVALID_STATE_EP_CONNECTED;
	case DAT_EP_STATE_DISCONNECT_PENDING:
		return DAT_INVALID_STATE_EP_DISCPENDING;
	case DAT_EP_STATE_DISCONNECTED:
		return DAT_INVALID_STATE_EP_DISCONNECTED;
	case DAT_EP_STATE_COMPLETION_PENDING:
		return DAT_INVALID_STATE_EP_COMPLPENDING;
	}
	return DAT_INVALID_STATE_EP_NOTREADY;
}
