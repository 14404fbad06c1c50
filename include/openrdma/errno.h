/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * OpenRDMA error codes.
 *
 * Every internal and core function returns 0 on success or a negative
 * OPENRDMA_E* value.  Codes that errno can express are equal to it; codes
 * specific to OpenRDMA start at OPENRDMA_ERRNO_OFFSET.  "Not supported" is
 * always -OPENRDMA_EOPNOTSUPP, in every transport.  See openrdma_errno(3).
 */
#ifndef OPENRDMA_ERRNO_H
#define OPENRDMA_ERRNO_H

#include <errno.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OPENRDMA_SUCCESS 0
#define OPENRDMA_EPERM EPERM /* operation not permitted */
#define OPENRDMA_ENOENT ENOENT /* no such entry */
#define OPENRDMA_EINTR EINTR /* interrupted */
#define OPENRDMA_EIO EIO /* I/O error */
#define OPENRDMA_E2BIG E2BIG /* argument list too long */
#define OPENRDMA_EAGAIN EAGAIN /* try again: nothing available now */
#define OPENRDMA_ENOMEM ENOMEM /* out of memory */
#define OPENRDMA_EACCES EACCES /* permission denied */
#define OPENRDMA_EFAULT EFAULT /* bad address */
#define OPENRDMA_EBUSY EBUSY /* object in use (has children) */
#define OPENRDMA_EEXIST EEXIST /* already exists */
#define OPENRDMA_ENODEV ENODEV /* no such device */
#define OPENRDMA_EINVAL EINVAL /* invalid argument */
#define OPENRDMA_ENOSPC ENOSPC /* queue or table full */
#define OPENRDMA_ERANGE ERANGE /* value out of range */
#define OPENRDMA_ENOSYS ENOSYS /* function not implemented */
#define OPENRDMA_EOPNOTSUPP EOPNOTSUPP /* operation not supported */
#define OPENRDMA_EADDRINUSE EADDRINUSE /* address in use */
#define OPENRDMA_EADDRNOTAVAIL EADDRNOTAVAIL /* address not available */
#define OPENRDMA_ENETDOWN ENETDOWN /* network or port down */
#define OPENRDMA_ENETUNREACH ENETUNREACH /* network unreachable */
#define OPENRDMA_ECONNABORTED ECONNABORTED /* connection aborted */
#define OPENRDMA_ECONNRESET ECONNRESET /* connection reset by peer */
#define OPENRDMA_ENOBUFS ENOBUFS /* no buffer space */
#define OPENRDMA_EISCONN EISCONN /* already connected */
#define OPENRDMA_ENOTCONN ENOTCONN /* not connected */
#define OPENRDMA_ETIMEDOUT ETIMEDOUT /* timed out */
#define OPENRDMA_ECONNREFUSED ECONNREFUSED /* connection refused or rejected */
#define OPENRDMA_EHOSTUNREACH EHOSTUNREACH /* host unreachable */
#define OPENRDMA_EALREADY EALREADY /* operation already in progress */
#define OPENRDMA_EINPROGRESS EINPROGRESS /* operation now in progress */
#define OPENRDMA_EOVERFLOW EOVERFLOW /* queue overflowed */
#define OPENRDMA_EMSGSIZE EMSGSIZE /* message too long */
#define OPENRDMA_EPROTO EPROTO /* protocol error (malformed wire data) */
#define OPENRDMA_ECANCELED ECANCELED /* operation canceled */

#define OPENRDMA_ERRNO_OFFSET 256

/* Codes specific to OpenRDMA. */
enum {
	/* wrong object type, or an object that was freed (debug builds) */
	OPENRDMA_EBADHANDLE = OPENRDMA_ERRNO_OFFSET,
	/* the object is in a state that does not allow the operation */
	OPENRDMA_ESTATE,
	/* data truncated: a receive buffer was too small */
	OPENRDMA_ETRUNC,
	/* an error event is pending on the queue */
	OPENRDMA_EAVAIL,
	/* a transport was built for another transport ABI version */
	OPENRDMA_EABI,
	/* the peer rejected the connection request */
	OPENRDMA_EREJECTED,
	/* the device reported a fatal error */
	OPENRDMA_EFATAL,
	OPENRDMA_ERRNO_MAX
};

/*
 * Returns a static string for an OpenRDMA error code.  Accepts positive and
 * negative values; never returns NULL.
 */
const char *openrdma_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif /* OPENRDMA_ERRNO_H */
