/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * What the IT-API examples share: the ibv_rc_pingpong-style command line,
 * running both sides on this machine (-l), and the IT-API set-up every
 * example repeats: IA, PZ, SEVDs, a listen point or a connect, buffers.
 */
#ifndef EXAMPLES_ITAPI_COMMON_H
#define EXAMPLES_ITAPI_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ITAPI_ENABLE_V21_BINDINGS
#include <it_api.h>

struct itx_opts {
	const char *prog;
	const char *dev; /* -d: interface */
	unsigned int port; /* -p: connection qualifier */
	unsigned int iters; /* -n */
	size_t size; /* -s */
	bool local; /* -l: both sides here */
	const char *server; /* the server's address; NULL: be the server */
	size_t max_size; /* what the example accepts for -s */
};

/* One side of an example: 0 on success. */
typedef int (*itx_side_fn)(const struct itx_opts *o, bool server);

/* Parses the command line; returns 0, or the exit status on error. */
int itx_parse(int argc, char **argv, struct itx_opts *o);
/* Runs the server, the client, or (-l) both; returns the exit status. */
int itx_main(const struct itx_opts *o, itx_side_fn side);

/* An IA with its PZ and one SEVD of each stream the examples use. */
struct itx {
	it_ia_handle_t ia;
	it_pz_handle_t pz;
	it_evd_handle_t sq, rq, creq, cmsg;
	it_ia_info_t *info;
};

int itx_open(struct itx *x, const struct itx_opts *o, size_t dto_events);
void itx_close(struct itx *x);
/* Waits for the next event of evd, which must be want. */
int itx_wait(it_evd_handle_t evd, it_event_type_t want, it_event_t *ev);
/* Reports a failed call: always -1. */
int itx_fail(const char *what, it_status_t st);

/* A registered buffer. */
struct itx_buf {
	unsigned char *p;
	size_t len;
	it_lmr_handle_t lmr;
	it_rmr_context_t rkey;
};

int itx_buf(struct itx *x, struct itx_buf *b, size_t len, it_mem_priv_t privs);
void itx_buf_free(struct itx_buf *b);
it_lmr_triplet_t itx_seg(const struct itx_buf *b, size_t off, size_t len);

/* Sends len bytes of b; a signaled send waits for its completion on sq. */
int itx_send(it_ep_handle_t ep, const struct itx_buf *b, size_t len,
	     it_dto_cookie_t cookie, bool signaled, it_evd_handle_t sq);
/* Posts a receive of up to len bytes into b. */
int itx_post_recv(it_ep_handle_t ep, const struct itx_buf *b, size_t len);
/* Waits on x->rq for a message of len bytes, then posts the next
 * receive into b. */
int itx_recv(struct itx *x, it_ep_handle_t ep, const struct itx_buf *b,
	     size_t len);

it_ep_attributes_t itx_rc_attr(const struct itx *x, size_t depth);
/* The path to the server: its address, or this IA's own with -l. */
int itx_server_path(struct itx *x, const struct itx_opts *o, it_path_t *path);
it_conn_qual_t itx_conn_qual(const struct itx_opts *o);
/* A listen point on the example's port. */
int itx_listen(struct itx *x, const struct itx_opts *o, it_listen_handle_t *l);
/*
 * Connects ep to the server, retrying while nobody listens yet (with -l
 * the server may still be starting); *ev is the established event.
 */
int itx_connect(struct itx *x, const struct itx_opts *o, it_ep_handle_t ep,
		it_event_t *ev);
/* Waits for a request on the listen point and accepts it with ep. */
int itx_accept(struct itx *x, it_ep_handle_t ep, const void *pdata, size_t len);
/*
 * Ends the connections of n endpoints in order: the client disconnects
 * them once it has all it waited for, the server waits for that, so that
 * neither frees an endpoint while its messages are still on the way.
 */
int itx_disconnect(struct itx *x, const it_ep_handle_t *ep, unsigned int n,
		   bool server);

double itx_now_us(void);

#endif /* EXAMPLES_ITAPI_COMMON_H */
