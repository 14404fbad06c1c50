/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Fixtures of the IT-API functional tests: an IA with its PZ and SEVDs,
 * registered buffers, and RC endpoints connected to each other through a
 * listen point of the same IA.  The tests use it_* calls only; the
 * interface is OPENRDMA_TEST_INTERFACE (self0 when unset).
 */
#ifndef TESTS_ITAPI_TEST_API_H
#define TESTS_ITAPI_TEST_API_H

#include "config.h"

#include <stdbool.h>
#include <stddef.h>

#define ITAPI_ENABLE_V21_BINDINGS
#include <it_api.h>

/* How long a test waits for an event that must come: 10 s. */
#define TAPI_TIMEOUT_US 10000000ull
/* Handles no object has: for the bad-handle checks. */
#define TAPI_BOGUS ((void *)&tapi_bogus_object)

extern const unsigned long tapi_bogus_object[64];

struct tapi {
	it_ia_handle_t ia;
	it_pz_handle_t pz;
	it_evd_handle_t sq; /* DTO: requests */
	it_evd_handle_t rq; /* DTO: receives */
	it_evd_handle_t creq; /* CM requests */
	it_evd_handle_t cmsg; /* CM messages */
	it_ia_info_t *info;
	/* memory of the buffers made by tapi_buf_make, freed with the IA */
	void *mem[64];
	int num_mem;
};

struct tapi_buf {
	unsigned char *p;
	size_t len;
	it_lmr_handle_t lmr;
	it_rmr_context_t rkey;
};

/* Two RC endpoints of one IA, connected: a connected, b accepted. */
struct tapi_conn {
	it_listen_handle_t listen;
	it_conn_qual_t conn_qual;
	it_path_t path;
	it_ep_handle_t a, b;
};

const char *tapi_interface(void);
void tapi_open(struct tapi *t);
void tapi_close(struct tapi *t);
/* Skips the test (with the reason) unless the IA has the capability. */
void tapi_require(bool have, const char *what);

it_ep_attributes_t tapi_rc_attr(void);
it_ep_handle_t tapi_rc_ep(struct tapi *t);
/*
 * it_ep_rc_create() of a; where the device takes one RDMA read segment
 * only (siw), again with one, which *a then says.
 */
it_status_t tapi_rc_create(it_pz_handle_t pz, it_evd_handle_t sq,
			   it_evd_handle_t rq, it_evd_handle_t cmsg,
			   it_ep_attributes_t *a, it_ep_handle_t *ep);
void tapi_buf_make(struct tapi *t, struct tapi_buf *b, size_t len,
		   it_mem_priv_t privs);
/* Frees the LMR; the memory goes with tapi_close(). */
void tapi_buf_free(struct tapi_buf *b);
it_lmr_triplet_t tapi_seg(const struct tapi_buf *b, size_t off, size_t len);

/* A path to the IA's own first address. */
void tapi_path(struct tapi *t, it_path_t *path);
/* Waits for the next event of evd, which must be 'number'. */
void tapi_wait(it_evd_handle_t evd, it_event_type_t number, it_event_t *ev);
/* The next event of evd within timeout_us, or false. */
bool tapi_next(it_evd_handle_t evd, uint64_t timeout_us, it_event_t *ev);

/* Listens, connects a to it and accepts with b; both are established. */
void tapi_connect(struct tapi *t, struct tapi_conn *c, bool three_way);
/* The same with c->a and c->b the caller made (the rest of c is set). */
void tapi_connect_eps(struct tapi *t, struct tapi_conn *c, bool three_way);
/* Disconnects a: both endpoints report the disconnect. */
void tapi_disconnect(struct tapi *t, struct tapi_conn *c);
/*
 * Waits for the completion, on t->sq, of ep's RDMA write that the target
 * refuses: a remote access error, or on iWARP (where a write completes
 * once sent) a success followed by the end of ep's connection.
 */
void tapi_wait_write_refused(struct tapi *t, it_ep_handle_t ep,
			     it_dto_cookie_t cookie);
/* Posts a receive on ep of len bytes of b at off. */
void tapi_post_recv(it_ep_handle_t ep, const struct tapi_buf *b, size_t off,
		    size_t len, it_dto_cookie_t cookie);

#endif /* TESTS_ITAPI_TEST_API_H */
