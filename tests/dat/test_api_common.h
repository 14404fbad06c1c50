/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * What the DAT API tests share: opening the IA under test (OpenRDMA's
 * provider on $OPENRDMA_TEST_INTERFACE, default self0, through the
 * registry library and dat_* calls only), and a connected pair of EPs.
 */
#ifndef TESTS_DAT_TEST_API_COMMON_H
#define TESTS_DAT_TEST_API_COMMON_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>

#include <criterion/criterion.h>
#include <dat2/udat.h>
#include <dat2/dat_ib_extensions.h>
#include <dat2/dat_registry.h>

/* The provider library of the build tree, for dat.conf lines of tests. */
#ifndef T_PROVIDER_LIB
#define T_PROVIDER_LIB "libopenrdma-dat.so.2"
#endif

#define T_TIMEOUT_US 5000000u
#define T_QLEN 64
#define T_BUF 65536

/* DAT_RETURN type and subtype, for messages. */
const char *t_str(DAT_RETURN ret);

#define T_OK(call)                                                        \
	do {                                                              \
		DAT_RETURN r_ = (call);                                   \
		cr_assert_eq(r_, DAT_SUCCESS, "%s: 0x%08x %s", #call, r_, \
			     t_str(r_));                                  \
	} while (0)

/* The call fails with this type (and subtype, unless -1). */
#define T_ERR(call, type, sub)                                               \
	do {                                                                 \
		DAT_RETURN r_ = (call);                                      \
		cr_assert_eq(DAT_GET_TYPE(r_), (DAT_RETURN)(type),           \
			     "%s: 0x%08x %s, not type 0x%x", #call, r_,      \
			     t_str(r_), (unsigned int)(type));               \
		if ((int)(sub) >= 0)                                         \
			cr_assert_eq(DAT_GET_SUBTYPE(r_), (DAT_RETURN)(sub), \
				     "%s: 0x%08x %s, not subtype %d", #call, \
				     r_, t_str(r_), (int)(sub));             \
	} while (0)

/* The IA name under test: "ofa-openrdma-<interface>". */
char *t_ia_name(void);
const char *t_iface(void);

struct t_ia {
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async;
	DAT_PZ_HANDLE pz;
	DAT_IA_ATTR attr;
	DAT_PROVIDER_ATTR pattr;
};

void t_ia_open(struct t_ia *t);
void t_ia_close(struct t_ia *t);

/* A region of memory, registered with all privileges (and atomics). */
struct t_mem {
	char *buf;
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lctx;
	DAT_RMR_CONTEXT rctx;
};

void t_mem_make(struct t_ia *t, struct t_mem *m, size_t len);
void t_mem_free(struct t_mem *m);
DAT_LMR_TRIPLET t_seg(const struct t_mem *m, size_t off, uint32_t len);
DAT_RMR_TRIPLET t_rseg(const struct t_mem *m, size_t off, uint32_t len);

/* Two EPs of one IA, connected through a PSP, each with its own EVDs. */
struct t_pair {
	struct t_ia t;
	DAT_EVD_HANDLE cr_evd;
	DAT_EVD_HANDLE conn[2], req[2], recv[2];
	DAT_EP_HANDLE ep[2]; /* 0: active, 1: passive */
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL qual;
	struct t_mem mem[2];
};

/* Everything but the connection; attr may be NULL. */
void t_pair_setup(struct t_pair *p, const DAT_EP_ATTR *attr);
/* Connects ep[0] to ep[1], checking every event on the way. */
void t_pair_connect(struct t_pair *p);
void t_pair_teardown(struct t_pair *p);

/* Waits for one event and checks its number. */
DAT_EVENT t_wait(DAT_EVD_HANDLE evd, DAT_EVENT_NUMBER number);
/* Waits for a DTO completion and checks its status. */
DAT_DTO_COMPLETION_EVENT_DATA t_dto(DAT_EVD_HANDLE evd,
				    DAT_DTO_COMPLETION_STATUS status);
/* Checks that nothing is queued. */
void t_empty(DAT_EVD_HANDLE evd);

/* A provider-specific attribute's value ("" when absent), and whether
 * it is TRUE. */
const char *t_pattr(const struct t_ia *t, const char *name);
bool t_pattr_true(const struct t_ia *t, const char *name);
/* Whether a completion the target refuses comes back with an error: on
 * iWARP a write or send completes once it is sent. */
bool t_refusal_completes(const struct t_ia *t);
/*
 * Waits for the completion of a local error: the status, or
 * DAT_DTO_ERR_LOCAL_EP where OPENRDMA_EXACT_ERRORS says so (rxe).
 */
DAT_DTO_COMPLETION_EVENT_DATA t_dto_local(const struct t_ia *t,
					  DAT_EVD_HANDLE evd,
					  DAT_DTO_COMPLETION_STATUS status);
/* Checks private data received; the IB CM pads it with zeros. */
void t_pdata_check(const struct t_ia *t, const void *got, DAT_COUNT got_len,
		   const void *want, DAT_COUNT want_len);
/* Waits for the end of ep's connection, reported on conn. */
void t_conn_ends(DAT_EVD_HANDLE conn, DAT_EP_HANDLE ep);
/* Skips the test, after checking that an RMR is refused as not
 * supported, on an interface without memory windows (siw). */
void t_require_rmrs(struct t_pair *p);

static inline DAT_DTO_COOKIE t_cookie(uint64_t v)
{
	DAT_DTO_COOKIE c;

	c.as_64 = v;
	return c;
}

#endif /* TESTS_DAT_TEST_API_COMMON_H */
