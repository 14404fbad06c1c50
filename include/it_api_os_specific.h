/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * IT-API 2.1: the platform part of <it_api.h> for Linux and other POSIX
 * systems.  The standard leaves these few definitions to each operating
 * system; <it_api.h> includes this file, applications need not.
 */
#ifndef IT_API_OS_SPECIFIC_H
#define IT_API_OS_SPECIFIC_H

#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h> /* struct in_addr, struct in6_addr */

/* Size of it_interface_t.name, terminating NUL included. */
#define IT_INTERFACE_NAME_SIZE 128

/*
 * it_length_t follows the width of an address: the standard makes it 32
 * bits on 32-bit platforms, which announce themselves with IT_32BIT.
 */
#if !defined(IT_32BIT) && defined(UINTPTR_MAX) && UINTPTR_MAX == 0xffffffffu
#define IT_32BIT
#endif

/*
 * A bus or I/O-virtual address, as IOBLs and it_mem_map() carry it.  The
 * standard leaves the type to the platform; an opaque pointer keeps it
 * distinct from virtual addresses at compile time.
 */
typedef struct it_io_addr_s *it_io_addr_t;

#endif /* IT_API_OS_SPECIFIC_H */
