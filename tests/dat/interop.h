/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* Values interop.c passes and interop_provider.c expects. */
#ifndef OPENRDMA_TESTS_DAT_INTEROP_H
#define OPENRDMA_TESTS_DAT_INTEROP_H

#define INTEROP_IA_NAME "openrdma-interop"
#define INTEROP_IA_PARAMS "interop0 1"
#define INTEROP_ADAPTER "interop adapter"
#define INTEROP_PROVIDER "interop provider"
#define INTEROP_QLEN 9
#define INTEROP_MAX_EPS 1234
#define INTEROP_MAX_MSG 65536u
#define INTEROP_MAX_PDATA 56
#define INTEROP_RECV_DTOS 17
#define INTEROP_WRITE_IOV 3
#define INTEROP_VADDR 0x7f0012345678ull
#define INTEROP_LEN 4096u
#define INTEROP_LKEY 0x1111u
#define INTEROP_RKEY 0x2222u
#define INTEROP_COOKIE 0xc00c1e5eedull
#define INTEROP_ADD 0x100000001ull

/* What interop_provider.c exports; libdat2 looks both up by name. */
struct dat_provider_info;
void dat_provider_init(const struct dat_provider_info *info,
		       const char *ia_params);
void dat_provider_fini(const struct dat_provider_info *info);

#endif
