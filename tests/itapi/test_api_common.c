/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* The fixtures of test_api.h. */
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>

#include "tests/itapi/test_api.h"

const unsigned long tapi_bogus_object[64];

const char *tapi_interface(void)
{
	const char *name = getenv("OPENRDMA_TEST_INTERFACE");

	return name && *name ? name : "self0";
}

void tapi_require(bool have, const char *what)
{
	if (!have)
		cr_skip_test("%s: %s unsupported on this interface", what,
			     tapi_interface());
}

/*
 * What the interface of the last tapi_open() grants an endpoint: siw, for
 * one, takes a single RDMA read segment and no atomics.
 */
static size_t tapi_read_segs = 4;
static it_boolean_t tapi_atomics = IT_TRUE;

it_status_t tapi_rc_create(it_pz_handle_t pz, it_evd_handle_t sq,
			   it_evd_handle_t rq, it_evd_handle_t cmsg,
			   it_ep_attributes_t *a, it_ep_handle_t *ep)
{
	it_status_t st;

	st = it_ep_rc_create(pz, sq, rq, cmsg, IT_EP_NO_FLAG, a, ep);
	if (st == IT_ERR_RESOURCE_RRSEG &&
	    a->srv.rc.max_rdma_read_segments > 1) {
		a->srv.rc.max_rdma_read_segments = 1;
		st = it_ep_rc_create(pz, sq, rq, cmsg, IT_EP_NO_FLAG, a, ep);
	}
	return st;
}

/* Learns the limits above with a trial endpoint. */
static void tapi_limits(struct tapi *t)
{
	it_ep_attributes_t a;
	it_ep_handle_t ep;
	it_status_t st;

	tapi_read_segs = 4;
	tapi_atomics = t->info->atomic_support;
	a = tapi_rc_attr();
	st = tapi_rc_create(t->pz, t->sq, t->rq, t->cmsg, &a, &ep);
	cr_assert_eq(st, IT_SUCCESS, "trial endpoint: status %d", (int)st);
	tapi_read_segs = a.srv.rc.max_rdma_read_segments;
	cr_assert_eq(it_ep_free(ep), IT_SUCCESS);
}

void tapi_open(struct tapi *t)
{
	it_status_t st;

	memset(t, 0, sizeof(*t));
	st = it_ia_create(tapi_interface(), 2, 1, &t->ia);
	if (st == IT_ERR_INVALID_NAME)
		cr_skip_test("no interface %s", tapi_interface());
	cr_assert_eq(st, IT_SUCCESS, "it_ia_create(%s): %d", tapi_interface(),
		     st);
	cr_assert_eq(it_ia_query(t->ia, &t->info), IT_SUCCESS);
	cr_assert_eq(it_pz_create(t->ia, &t->pz), IT_SUCCESS);
	cr_assert_eq(it_evd_create(t->ia, IT_DTO_EVENT_STREAM,
				   IT_EVD_OVERFLOW_DEFAULT, 256, 0, NULL,
				   &t->sq, NULL),
		     IT_SUCCESS);
	cr_assert_eq(it_evd_create(t->ia, IT_DTO_EVENT_STREAM,
				   IT_EVD_OVERFLOW_DEFAULT, 256, 0, NULL,
				   &t->rq, NULL),
		     IT_SUCCESS);
	cr_assert_eq(it_evd_create(t->ia, IT_CM_REQ_EVENT_STREAM,
				   IT_EVD_OVERFLOW_DEFAULT, 16, 0, NULL,
				   &t->creq, NULL),
		     IT_SUCCESS);
	cr_assert_eq(it_evd_create(t->ia, IT_CM_MSG_EVENT_STREAM,
				   IT_EVD_OVERFLOW_DEFAULT, 32, 0, NULL,
				   &t->cmsg, NULL),
		     IT_SUCCESS);
	tapi_limits(t);
}

void tapi_close(struct tapi *t)
{
	it_ia_info_free(t->info);
	/* abrupt: every child goes with the IA */
	cr_assert_eq(it_ia_free(t->ia), IT_SUCCESS);
	while (t->num_mem)
		free(t->mem[--t->num_mem]);
}

it_ep_attributes_t tapi_rc_attr(void)
{
	it_ep_attributes_t a;

	memset(&a, 0, sizeof(a));
	a.max_dto_payload_size = 1 << 20;
	a.max_request_dtos = 32;
	a.max_recv_dtos = 32;
	a.max_send_segments = 4;
	a.max_recv_segments = 4;
	a.srv.rc.rdma_read_enable = IT_TRUE;
	a.srv.rc.rdma_write_enable = IT_TRUE;
	a.srv.rc.max_rdma_read_segments = tapi_read_segs;
	a.srv.rc.max_rdma_write_segments = 4;
	a.srv.rc.rdma_read_ird = 4;
	a.srv.rc.rdma_read_ord = 4;
	a.srv.rc.atomics_enable = tapi_atomics;
	return a;
}

it_ep_handle_t tapi_rc_ep(struct tapi *t)
{
	it_ep_attributes_t a = tapi_rc_attr();
	it_ep_handle_t ep;

	cr_assert_eq(it_ep_rc_create(t->pz, t->sq, t->rq, t->cmsg,
				     IT_EP_NO_FLAG, &a, &ep),
		     IT_SUCCESS);
	return ep;
}

void tapi_buf_make(struct tapi *t, struct tapi_buf *b, size_t len,
		   it_mem_priv_t privs)
{
	b->len = len;
	cr_assert_lt(t->num_mem, 64);
	cr_assert_eq(posix_memalign((void **)&b->p, 64, len ? len : 1), 0);
	t->mem[t->num_mem++] = b->p;
	memset(b->p, 0, len);
	cr_assert_eq(it_lmr_create21(t->pz, b->p, NULL, len,
				     IT_ADDR_MODE_ABSOLUTE, privs, 0, 0,
				     &b->lmr, &b->rkey),
		     IT_SUCCESS);
}

void tapi_buf_free(struct tapi_buf *b)
{
	cr_assert_eq(it_lmr_free(b->lmr), IT_SUCCESS);
}

it_lmr_triplet_t tapi_seg(const struct tapi_buf *b, size_t off, size_t len)
{
	it_lmr_triplet_t s;

	s.lmr = b->lmr;
	s.addr.abs = b->p + off;
	s.length = len;
	return s;
}

void tapi_path(struct tapi *t, it_path_t *path)
{
	size_t num = 1, total = 0;

	cr_assert_gt(t->info->num_spigots, 0);
	cr_assert_gt(t->info->spigot_info[0].num_net_addr, 0);
	cr_assert_eq(it_get_pathinfo(t->ia, 0,
				     &t->info->spigot_info[0].net_addr[0], &num,
				     &total, path),
		     IT_SUCCESS);
	cr_assert_eq(num, 1);
	cr_assert_geq(total, 1);
}

bool tapi_next(it_evd_handle_t evd, uint64_t timeout_us, it_event_t *ev)
{
	it_status_t st = it_evd_wait(evd, timeout_us, ev, NULL);

	if (st == IT_ERR_TIMEOUT_EXPIRED)
		return false;
	cr_assert_eq(st, IT_SUCCESS, "it_evd_wait: %d", st);
	return true;
}

void tapi_wait(it_evd_handle_t evd, it_event_type_t number, it_event_t *ev)
{
	it_event_t local;

	if (!ev)
		ev = &local;
	cr_assert(tapi_next(evd, TAPI_TIMEOUT_US, ev),
		  "no event 0x%x within the timeout", (unsigned int)number);
	cr_assert_eq(ev->event_number, number, "event 0x%x, expected 0x%x",
		     (unsigned int)ev->event_number, (unsigned int)number);
	cr_assert_eq(ev->any.evd, evd);
}

void tapi_wait_write_refused(struct tapi *t, it_ep_handle_t ep,
			     it_dto_cookie_t cookie)
{
	it_event_t ev;

	tapi_wait(t->sq, IT_DTO_RDMA_WRITE_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.cookie, cookie);
	if (t->info->transport_type != IT_IWARP_TCP_TRANSPORT) {
		cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_ERR_REMOTE_ACCESS);
		return;
	}
	/* RFC 5040 (5.4): an RDMA write completes once it is sent */
	cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_SUCCESS);
	/* the target's Terminate ends the connection at both ends */
	do {
		cr_assert(tapi_next(t->cmsg, TAPI_TIMEOUT_US, &ev),
			  "the connection did not end");
		cr_assert(ev.event_number == IT_CM_MSG_CONN_DISCONNECT_EVENT ||
				  ev.event_number ==
					  IT_CM_MSG_CONN_BROKEN_EVENT,
			  "event 0x%x", (unsigned int)ev.event_number);
	} while (ev.conn.ep != ep);
}

void tapi_post_recv(it_ep_handle_t ep, const struct tapi_buf *b, size_t off,
		    size_t len, it_dto_cookie_t cookie)
{
	it_lmr_triplet_t s = tapi_seg(b, off, len);

	cr_assert_eq(it_post_recv(ep, &s, 1, cookie, IT_COMPLETION_FLAG),
		     IT_SUCCESS);
}

/* Waits for the ESTABLISHED events of both endpoints, in any order. */
static void established(struct tapi *t, struct tapi_conn *c)
{
	bool a = false, b = false;
	it_event_t ev;
	int i;

	for (i = 0; i < 2; i++) {
		tapi_wait(t->cmsg, IT_CM_MSG_CONN_ESTABLISHED_EVENT, &ev);
		if (ev.conn.ep == c->a)
			a = true;
		else if (ev.conn.ep == c->b)
			b = true;
	}
	cr_assert(a && b, "both endpoints established");
}

void tapi_connect(struct tapi *t, struct tapi_conn *c, bool three_way)
{
	memset(c, 0, sizeof(*c));
	c->a = tapi_rc_ep(t);
	c->b = tapi_rc_ep(t);
	tapi_connect_eps(t, c, three_way);
}

void tapi_connect_eps(struct tapi *t, struct tapi_conn *c, bool three_way)
{
	it_event_t ev;

	cr_assert_eq(it_listen_create(t->ia, 0, t->creq, IT_LISTEN_NO_FLAG,
				      &c->conn_qual, &c->listen),
		     IT_SUCCESS);
	cr_assert_eq(c->conn_qual.type, IT_IANA_PORT);
	tapi_path(t, &c->path);
	cr_assert_eq(it_ep_connect(c->a, &c->path, NULL, &c->conn_qual,
				   three_way ? IT_CONNECT_FLAG_THREE_WAY :
					       IT_CONNECT_FLAG_TWO_WAY,
				   NULL, 0),
		     IT_SUCCESS);
	tapi_wait(t->creq, IT_CM_REQ_CONN_REQUEST_EVENT, &ev);
	cr_assert_eq(it_ep_accept(c->b, ev.conn_req.cn_est_id, NULL, 0),
		     IT_SUCCESS);
	if (three_way) {
		tapi_wait(t->cmsg, IT_CM_MSG_CONN_ACCEPT_ARRIVAL_EVENT, &ev);
		cr_assert_eq(ev.conn.ep, c->a);
		cr_assert_eq(it_ep_accept(c->a, ev.conn.cn_est_id, NULL, 0),
			     IT_SUCCESS);
	}
	established(t, c);
}

void tapi_disconnect(struct tapi *t, struct tapi_conn *c)
{
	bool a = false, b = false;
	it_event_t ev;
	int i;

	cr_assert_eq(it_ep_disconnect(c->a, NULL, 0), IT_SUCCESS);
	for (i = 0; i < 2; i++) {
		tapi_wait(t->cmsg, IT_CM_MSG_CONN_DISCONNECT_EVENT, &ev);
		if (ev.conn.ep == c->a)
			a = true;
		else if (ev.conn.ep == c->b)
			b = true;
	}
	cr_assert(a && b, "both endpoints disconnected");
}
