/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * DAT 2.0 (uDAPL): basic types and operating-system glue.
 *
 * The widths and underlying types here are part of the binary interface
 * that DAT programs, libdat2 and DAPL providers share; see dat_headers(7).
 */
#ifndef _DAT_PLATFORM_SPECIFIC_H_
#define _DAT_PLATFORM_SPECIFIC_H_

/*
 * DAPL's copy of this header pulls these in, and DAT programs lean on
 * that (size_t, printf, struct sockaddr without including them).
 */
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/socket.h>

/* Buffer alignment that gives providers their best performance. */
#ifndef DAT_OPTIMAL_ALIGNMENT
#define DAT_OPTIMAL_ALIGNMENT 256
#endif

/* The very types of uint32_t and uint64_t, from <sys/types.h>. */
typedef u_int32_t DAT_UINT32;
typedef u_int64_t DAT_UINT64;
__extension__ typedef unsigned long long DAT_UVERYLONG;

typedef void *DAT_PVOID;
typedef int DAT_COUNT;
typedef DAT_UINT64 DAT_PADDR;

/*
 * The 64-bit attribute masks are written with UINT64_C.  <stdint.h> is
 * deliberately not included: without it the masks are unsigned long long,
 * as with DAPL's headers; with it they take <stdint.h>'s type, also as
 * with DAPL's headers.
 */
#ifndef UINT64_C
#define UINT64_C(c) c##ULL
#endif

/* An IA handle is an opaque pointer that fits an unsigned long. */
#define DAT_IA_HANDLE_TO_UL(a) ((unsigned long)(a))
#define DAT_UL_TO_IA_HANDLE(a) ((DAT_IA_HANDLE)(a))

/* Addresses are native socket addresses: AF_INET or AF_INET6. */
typedef struct sockaddr DAT_SOCK_ADDR;
typedef struct sockaddr_in6 DAT_SOCK_ADDR6;
#define DAT_AF_INET AF_INET
#define DAT_AF_INET6 AF_INET6

/* The socket triple that names a common service point's transport. */
typedef struct dat_comm {
	int domain;
	int type;
	int protocol;
} DAT_COMM;

typedef int DAT_FD;

/* Calling convention and export markers: nothing special on POSIX. */
#define DAT_API
#define DAT_EXPORT extern

/* Parameter-direction markers used in DAT code; they expand to nothing. */
#ifndef IN
#define IN
#endif
#ifndef OUT
#define OUT
#endif
#ifndef INOUT
#define INOUT
#endif

#endif /* _DAT_PLATFORM_SPECIFIC_H_ */
