/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* openrdma_strerror(): a message for every OPENRDMA_E* code. */
#include <openrdma/errno.h>

#include "core/export.h"

OPENRDMA_EXPORT const char *openrdma_strerror(int err)
{
	/* Negated as unsigned: -INT_MIN does not fit an int. */
	unsigned int code =
		err < 0 ? 0u - (unsigned int)err : (unsigned int)err;

	/* Our own wording, stable across C libraries and locales. */
	switch (code) {
	case OPENRDMA_SUCCESS:
		return "Success";
	case OPENRDMA_EPERM:
		return "Operation not permitted";
	case OPENRDMA_ENOENT:
		return "No such entry";
	case OPENRDMA_EINTR:
		return "Interrupted";
	case OPENRDMA_EIO:
		return "Input/output error";
	case OPENRDMA_E2BIG:
		return "Argument list too long";
	case OPENRDMA_EAGAIN:
		return "Resource temporarily unavailable";
	case OPENRDMA_ENOMEM:
		return "Out of memory";
	case OPENRDMA_EACCES:
		return "Permission denied";
	case OPENRDMA_EFAULT:
		return "Bad address";
	case OPENRDMA_EBUSY:
		return "Object in use";
	case OPENRDMA_EEXIST:
		return "Already exists";
	case OPENRDMA_ENODEV:
		return "No such device";
	case OPENRDMA_EINVAL:
		return "Invalid argument";
	case OPENRDMA_ENOSPC:
		return "Queue or table full";
	case OPENRDMA_ERANGE:
		return "Value out of range";
	case OPENRDMA_ENOSYS:
		return "Function not implemented";
	case OPENRDMA_EOPNOTSUPP:
		return "Operation not supported";
	case OPENRDMA_EADDRINUSE:
		return "Address already in use";
	case OPENRDMA_EADDRNOTAVAIL:
		return "Address not available";
	case OPENRDMA_ENETDOWN:
		return "Network or port is down";
	case OPENRDMA_ENETUNREACH:
		return "Network unreachable";
	case OPENRDMA_ECONNABORTED:
		return "Connection aborted";
	case OPENRDMA_ECONNRESET:
		return "Connection reset by peer";
	case OPENRDMA_ENOBUFS:
		return "No buffer space available";
	case OPENRDMA_EISCONN:
		return "Already connected";
	case OPENRDMA_ENOTCONN:
		return "Not connected";
	case OPENRDMA_ETIMEDOUT:
		return "Timed out";
	case OPENRDMA_ECONNREFUSED:
		return "Connection refused";
	case OPENRDMA_EHOSTUNREACH:
		return "Host unreachable";
	case OPENRDMA_EALREADY:
		return "Operation already in progress";
	case OPENRDMA_EINPROGRESS:
		return "Operation in progress";
	case OPENRDMA_EOVERFLOW:
		return "Queue overflowed";
	case OPENRDMA_EMSGSIZE:
		return "Message too long";
	case OPENRDMA_EPROTO:
		return "Protocol error";
	case OPENRDMA_ECANCELED:
		return "Operation canceled";
	case OPENRDMA_EBADHANDLE:
		return "Invalid or destroyed object handle";
	case OPENRDMA_ESTATE:
		return "Object state does not allow the operation";
	case OPENRDMA_ETRUNC:
		return "Data truncated";
	case OPENRDMA_EAVAIL:
		return "Error event pending";
	case OPENRDMA_EABI:
		return "Transport built for another ABI version";
	case OPENRDMA_EREJECTED:
		return "Connection rejected by the peer";
	case OPENRDMA_EFATAL:
		return "Fatal device error";
	default:
		return "Unknown error";
	}
}
