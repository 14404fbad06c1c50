/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Connection management: listen points, two-way and three-way
 * handshakes, private data on every message, reject, handoff,
 * disconnect, reset and reconnect, and the argument checks.
 */
#include <arpa/inet.h>
#include <string.h>
#include <criterion/criterion.h>

#include "tests/itapi/test_api.h"

TestSuite(itapi_conn, .timeout = 60);

static struct tapi t;

static void setup(void)
{
	tapi_open(&t);
}

static void teardown(void)
{
	tapi_close(&t);
}

static it_ep_state_rc_t ep_state(it_ep_handle_t ep)
{
	it_ep_param_t p;

	cr_assert_eq(it_ep_query(ep, IT_EP_PARAM_STATE, &p), IT_SUCCESS);
	return p.ep_state.rc;
}

Test(itapi_conn, two_way, .init = setup, .fini = teardown)
{
	struct tapi_conn c;
	it_ep_param_t p;

	tapi_connect(&t, &c, false);
	cr_assert_eq(ep_state(c.a), IT_EP_STATE_CONNECTED);
	cr_assert_eq(ep_state(c.b), IT_EP_STATE_CONNECTED);
	cr_assert_eq(it_ep_query(c.a, IT_EP_PARAM_ALL, &p), IT_SUCCESS);
	cr_assert_eq(p.ia, t.ia);
	cr_assert_eq(p.pz, t.pz);
	cr_assert_eq(p.service_type, IT_RC_SERVICE);
	cr_assert_eq(p.request_sevd, t.sq);
	cr_assert_eq(p.recv_sevd, t.rq);
	cr_assert_eq(p.connect_sevd, t.cmsg);
	cr_assert_geq(p.attr.max_request_dtos, 32);
	cr_assert_eq(p.attr.srv.rc.rdma_read_enable, IT_TRUE);
	tapi_disconnect(&t, &c);
	cr_assert_eq(ep_state(c.a), IT_EP_STATE_NONOPERATIONAL);
	cr_assert_eq(ep_state(c.b), IT_EP_STATE_NONOPERATIONAL);
}

Test(itapi_conn, three_way, .init = setup, .fini = teardown)
{
	struct tapi_conn c;

	tapi_require(t.info->three_way_handshake_support,
		     "three-way handshake");
	tapi_connect(&t, &c, true);
	cr_assert_eq(ep_state(c.a), IT_EP_STATE_CONNECTED);
	cr_assert_eq(ep_state(c.b), IT_EP_STATE_CONNECTED);
	tapi_disconnect(&t, &c);
}

Test(itapi_conn, private_data_everywhere, .init = setup, .fini = teardown)
{
	const unsigned char hello[] = "hello, passive", welcome[] = "welcome",
			    bye[] = "goodbye";
	it_ep_handle_t a = tapi_rc_ep(&t), b = tapi_rc_ep(&t);
	it_listen_handle_t l;
	it_conn_qual_t cq;
	it_path_t path;
	it_event_t ev;
	bool carried;
	int i;

	tapi_require(t.info->private_data_support, "private data");
	cr_assert_geq(t.info->connect_private_data_len, sizeof(hello));
	cr_assert_eq(it_listen_create(t.ia, 0, t.creq, IT_LISTEN_NO_FLAG, &cq,
				      &l),
		     IT_SUCCESS);
	tapi_path(&t, &path);
	cr_assert_eq(it_ep_connect(a, &path, NULL, &cq, IT_CONNECT_FLAG_TWO_WAY,
				   hello, sizeof(hello)),
		     IT_SUCCESS);
	cr_assert_eq(ep_state(a) == IT_EP_STATE_ACTIVE1_CONNECTION_PENDING ||
			     ep_state(a) == IT_EP_STATE_CONNECTED,
		     1);
	tapi_wait(t.creq, IT_CM_REQ_CONN_REQUEST_EVENT, &ev);
	cr_assert_eq(ev.conn_req.private_data_present, IT_TRUE);
	cr_assert_arr_eq(ev.conn_req.private_data, hello, sizeof(hello));
	cr_assert_eq(ev.conn_req.conn_qual.type, IT_IANA_PORT);
	cr_assert_eq(ev.conn_req.conn_qual.conn_qual.port, cq.conn_qual.port);
	cr_assert_eq(ev.conn_req.spigot_id, 0);
	cr_assert_eq(it_ep_accept(b, ev.conn_req.cn_est_id, welcome,
				  sizeof(welcome)),
		     IT_SUCCESS);
	/* the accept's private data reaches the active side */
	for (i = 0; i < 2; i++) {
		tapi_wait(t.cmsg, IT_CM_MSG_CONN_ESTABLISHED_EVENT, &ev);
		if (ev.conn.ep != a)
			continue;
		cr_assert_eq(ev.conn.private_data_present, IT_TRUE);
		cr_assert_arr_eq(ev.conn.private_data, welcome,
				 sizeof(welcome));
	}
	/* librdmacm's disconnect carries none: the IA says so */
	carried = t.info->disconnect_private_data_len >= sizeof(bye);
	if (carried) {
		cr_assert_eq(it_ep_disconnect(b, bye, sizeof(bye)), IT_SUCCESS);
	} else {
		cr_assert_eq(it_ep_disconnect(b, bye, sizeof(bye)),
			     t.info->disconnect_private_data_len ?
				     IT_ERR_INVALID_PDATA_LENGTH :
				     IT_ERR_PDATA_NOT_SUPPORTED);
		cr_assert_eq(it_ep_disconnect(b, NULL, 0), IT_SUCCESS);
	}
	for (i = 0; i < 2; i++) {
		tapi_wait(t.cmsg, IT_CM_MSG_CONN_DISCONNECT_EVENT, &ev);
		if (ev.conn.ep != a)
			continue;
		cr_assert_eq(ev.conn.private_data_present,
			     carried ? IT_TRUE : IT_FALSE);
		if (carried)
			cr_assert_arr_eq(ev.conn.private_data, bye,
					 sizeof(bye));
	}
}

Test(itapi_conn, reject_with_private_data, .init = setup, .fini = teardown)
{
	const unsigned char why[] = "no room";
	it_ep_handle_t a = tapi_rc_ep(&t);
	it_listen_handle_t l;
	it_conn_qual_t cq;
	it_path_t path;
	it_event_t ev;

	cr_assert_eq(it_listen_create(t.ia, 0, t.creq, IT_LISTEN_NO_FLAG, &cq,
				      &l),
		     IT_SUCCESS);
	tapi_path(&t, &path);
	cr_assert_eq(it_ep_connect(a, &path, NULL, &cq, IT_CONNECT_FLAG_TWO_WAY,
				   NULL, 0),
		     IT_SUCCESS);
	tapi_wait(t.creq, IT_CM_REQ_CONN_REQUEST_EVENT, &ev);
	cr_assert_eq(it_reject(ev.conn_req.cn_est_id, why, sizeof(why)),
		     IT_SUCCESS);
	/* the identifier is spent */
	cr_assert_eq(it_reject(ev.conn_req.cn_est_id, NULL, 0),
		     IT_ERR_INVALID_CN_EST_ID);
	tapi_wait(t.cmsg, IT_CM_MSG_CONN_PEER_REJECT_EVENT, &ev);
	cr_assert_eq(ev.conn.ep, a);
	if (t.info->private_data_support) {
		cr_assert_eq(ev.conn.private_data_present, IT_TRUE);
		cr_assert_arr_eq(ev.conn.private_data, why, sizeof(why));
	}
	cr_assert_eq(ep_state(a), IT_EP_STATE_NONOPERATIONAL);
	/* a rejected endpoint is reset before it connects again */
	cr_assert_eq(it_ep_connect(a, &path, NULL, &cq, IT_CONNECT_FLAG_TWO_WAY,
				   NULL, 0),
		     IT_ERR_INVALID_EP_STATE);
	cr_assert_eq(it_ep_reset(a), IT_SUCCESS);
	cr_assert_eq(ep_state(a), IT_EP_STATE_UNCONNECTED);
	cr_assert_eq(it_ep_connect(a, &path, NULL, &cq, IT_CONNECT_FLAG_TWO_WAY,
				   NULL, 0),
		     IT_SUCCESS);
	tapi_wait(t.creq, IT_CM_REQ_CONN_REQUEST_EVENT, &ev);
	cr_assert_eq(it_reject(ev.conn_req.cn_est_id, NULL, 0), IT_SUCCESS);
	tapi_wait(t.cmsg, IT_CM_MSG_CONN_PEER_REJECT_EVENT, &ev);
}

Test(itapi_conn, three_way_rejected_by_active, .init = setup, .fini = teardown)
{
	it_ep_handle_t a = tapi_rc_ep(&t), b = tapi_rc_ep(&t);
	it_listen_handle_t l;
	it_conn_qual_t cq;
	it_path_t path;
	it_event_t ev;

	tapi_require(t.info->three_way_handshake_support,
		     "three-way handshake");
	cr_assert_eq(it_listen_create(t.ia, 0, t.creq, IT_LISTEN_NO_FLAG, &cq,
				      &l),
		     IT_SUCCESS);
	tapi_path(&t, &path);
	cr_assert_eq(it_ep_connect(a, &path, NULL, &cq,
				   IT_CONNECT_FLAG_THREE_WAY, NULL, 0),
		     IT_SUCCESS);
	tapi_wait(t.creq, IT_CM_REQ_CONN_REQUEST_EVENT, &ev);
	cr_assert_eq(it_ep_accept(b, ev.conn_req.cn_est_id, NULL, 0),
		     IT_SUCCESS);
	tapi_wait(t.cmsg, IT_CM_MSG_CONN_ACCEPT_ARRIVAL_EVENT, &ev);
	cr_assert_eq(ev.conn.ep, a);
	cr_assert_eq(ep_state(a), IT_EP_STATE_ACTIVE2_CONNECTION_PENDING);
	/* only the active endpoint can complete or refuse it */
	cr_assert_eq(it_ep_accept(b, ev.conn.cn_est_id, NULL, 0),
		     IT_ERR_INVALID_CN_EST_ID);
	cr_assert_eq(it_reject(ev.conn.cn_est_id, NULL, 0), IT_SUCCESS);
	/* whether the transport calls the active side a peer is its own */
	cr_assert(tapi_next(t.cmsg, TAPI_TIMEOUT_US, &ev));
	cr_assert(ev.event_number == IT_CM_MSG_CONN_PEER_REJECT_EVENT ||
		  ev.event_number == IT_CM_MSG_CONN_NONPEER_REJECT_EVENT);
	cr_assert_eq(ev.conn.ep, b);
	cr_assert_eq(ep_state(a), IT_EP_STATE_NONOPERATIONAL);
	cr_assert_eq(ep_state(b), IT_EP_STATE_NONOPERATIONAL);
}

Test(itapi_conn, no_listener, .init = setup, .fini = teardown)
{
	it_ep_handle_t a = tapi_rc_ep(&t);
	it_conn_qual_t cq;
	it_path_t path;
	it_event_t ev;

	memset(&cq, 0, sizeof(cq));
	cq.type = IT_IANA_PORT;
	cq.conn_qual.port = htons(9);
	tapi_path(&t, &path);
	cr_assert_eq(it_ep_connect(a, &path, NULL, &cq, IT_CONNECT_FLAG_TWO_WAY,
				   NULL, 0),
		     IT_SUCCESS);
	tapi_wait(t.cmsg, IT_CM_MSG_CONN_NONPEER_REJECT_EVENT, &ev);
	cr_assert_eq(ev.conn.ep, a);
	cr_assert_eq(ep_state(a), IT_EP_STATE_NONOPERATIONAL);
}

Test(itapi_conn, handoff, .init = setup, .fini = teardown)
{
	it_ep_handle_t a = tapi_rc_ep(&t), b = tapi_rc_ep(&t);
	it_listen_handle_t l1, l2;
	it_conn_qual_t cq1, cq2, other;
	it_evd_handle_t creq2;
	it_path_t path;
	it_event_t ev;

	cr_assert_eq(it_evd_create(t.ia, IT_CM_REQ_EVENT_STREAM, 0, 4, 0, NULL,
				   &creq2, NULL),
		     IT_SUCCESS);
	cr_assert_eq(it_listen_create(t.ia, 0, t.creq, IT_LISTEN_NO_FLAG, &cq1,
				      &l1),
		     IT_SUCCESS);
	cr_assert_eq(it_listen_create(t.ia, 0, creq2, IT_LISTEN_NO_FLAG, &cq2,
				      &l2),
		     IT_SUCCESS);
	cr_assert_neq(cq1.conn_qual.port, cq2.conn_qual.port);
	tapi_path(&t, &path);
	cr_assert_eq(it_ep_connect(a, &path, NULL, &cq1,
				   IT_CONNECT_FLAG_TWO_WAY, NULL, 0),
		     IT_SUCCESS);
	tapi_wait(t.creq, IT_CM_REQ_CONN_REQUEST_EVENT, &ev);
	/* nothing listens there: the request stays where it is */
	other = cq1;
	other.conn_qual.port = htons(7);
	cr_assert_eq(it_handoff(&other, 0, ev.conn_req.cn_est_id),
		     IT_ERR_INVALID_CONN_QUAL);
	cr_assert_eq(it_handoff(&cq2, 5, ev.conn_req.cn_est_id),
		     IT_ERR_INVALID_SPIGOT);
	cr_assert_eq(it_handoff(&cq2, 0, ev.conn_req.cn_est_id), IT_SUCCESS);
	tapi_wait(creq2, IT_CM_REQ_CONN_REQUEST_EVENT, &ev);
	cr_assert_eq(ev.conn_req.conn_qual.conn_qual.port, cq2.conn_qual.port);
	cr_assert_eq(it_ep_accept(b, ev.conn_req.cn_est_id, NULL, 0),
		     IT_SUCCESS);
	tapi_wait(t.cmsg, IT_CM_MSG_CONN_ESTABLISHED_EVENT, &ev);
	tapi_wait(t.cmsg, IT_CM_MSG_CONN_ESTABLISHED_EVENT, &ev);
	/* a listen point in use keeps its SEVD */
	cr_assert_eq(it_evd_free(creq2), IT_ERR_EVD_BUSY);
	cr_assert_eq(it_listen_free(l2), IT_SUCCESS);
	cr_assert_eq(it_evd_free(creq2), IT_SUCCESS);
}

Test(itapi_conn, listen_arguments, .init = setup, .fini = teardown)
{
	it_listen_handle_t l, l2;
	it_listen_param_t p;
	it_conn_qual_t cq, taken;

	memset(&cq, 0, sizeof(cq));
	cr_assert_eq(it_listen_create(TAPI_BOGUS, 0, t.creq, 0, &cq, &l),
		     IT_ERR_INVALID_IA);
	cr_assert_eq(it_listen_create(t.ia, 9, t.creq, 0, &cq, &l),
		     IT_ERR_INVALID_SPIGOT);
	cr_assert_eq(it_listen_create(t.ia, 0, t.cmsg, 0, &cq, &l),
		     IT_ERR_INVALID_CONN_EVD);
	cr_assert_eq(it_listen_create(t.ia, 0, t.creq, (it_listen_flags_t)0x100,
				      &cq, &l),
		     IT_ERR_INVALID_FLAGS);
	cr_assert_eq(it_listen_create(t.ia, 0, t.creq, 0, NULL, &l),
		     IT_ERR_FAULT);
	cr_assert_eq(it_listen_create(t.ia, 0, t.creq, 0, &cq, NULL),
		     IT_ERR_FAULT);
	cq.type = IT_VIA_DISCRIMINATOR;
	cr_assert_eq(it_listen_create(t.ia, 0, t.creq,
				      IT_LISTEN_CONN_QUAL_INPUT, &cq, &l),
		     IT_ERR_INVALID_CONN_QUAL);
	/* the core always negotiates the read depths (it_api(7)) */
	cr_assert_eq(it_listen_create(t.ia, 0, t.creq,
				      IT_LISTEN_SUPPRESS_IRD_ORD, &cq, &l),
		     IT_ERR_OP_NOT_SUPPORTED);
	/* a handle of another type */
	cr_assert_eq(it_listen_create((it_ia_handle_t)t.pz, 0, t.creq, 0, &cq,
				      &l),
		     IT_ERR_INVALID_IA);
	cr_assert_eq(it_listen_query((it_listen_handle_t)t.creq,
				     IT_LISTEN_PARAM_ALL, &p),
		     IT_ERR_INVALID_LISTEN);

	/* an ephemeral port, reported in conn_qual */
	cr_assert_eq(it_listen_create(t.ia, 0, t.creq, 0, &cq, &l), IT_SUCCESS);
	cr_assert_eq(cq.type, IT_IANA_PORT);
	cr_assert_neq(cq.conn_qual.port, 0);
	taken = cq;
	cr_assert_eq(it_listen_create(t.ia, 0, t.creq,
				      IT_LISTEN_CONN_QUAL_INPUT, &taken, &l2),
		     IT_ERR_CONN_QUAL_BUSY);
	cr_assert_eq(it_listen_query(l, IT_LISTEN_PARAM_ALL, &p), IT_SUCCESS);
	cr_assert_eq(p.ia_handle, t.ia);
	cr_assert_eq(p.spigot_id, 0);
	cr_assert_eq(p.connect_evd, t.creq);
	cr_assert_eq(p.connect_qual.conn_qual.port, cq.conn_qual.port);
	cr_assert_eq(it_listen_query(l, (it_listen_param_mask_t)0x400, &p),
		     IT_ERR_INVALID_MASK);
	cr_assert_eq(it_listen_query(l, IT_LISTEN_PARAM_ALL, NULL),
		     IT_ERR_FAULT);
	cr_assert_eq(it_listen_query(TAPI_BOGUS, IT_LISTEN_PARAM_ALL, &p),
		     IT_ERR_INVALID_LISTEN);
	cr_assert_eq(it_listen_free(l), IT_SUCCESS);
	/* the port is free again; the handle is dead */
	cr_assert_eq(it_listen_create(t.ia, 0, t.creq,
				      IT_LISTEN_CONN_QUAL_INPUT, &taken, &l2),
		     IT_SUCCESS);
	cr_assert_eq(it_listen_free(l2), IT_SUCCESS);
#ifdef OPENRDMA_DEBUG
	cr_assert_eq(it_listen_free(l2), IT_ERR_INVALID_LISTEN);
#endif
}

Test(itapi_conn, connect_arguments, .init = setup, .fini = teardown)
{
	unsigned char big[IT_MAX_PRIV_DATA + 1];
	it_ep_handle_t a = tapi_rc_ep(&t);
	it_conn_qual_t cq;
	it_path_t path;

	memset(big, 1, sizeof(big));
	memset(&cq, 0, sizeof(cq));
	cq.type = IT_IANA_PORT;
	cq.conn_qual.port = htons(4000);
	tapi_path(&t, &path);
	cr_assert_eq(it_ep_connect(TAPI_BOGUS, &path, NULL, &cq,
				   IT_CONNECT_FLAG_TWO_WAY, NULL, 0),
		     IT_ERR_INVALID_EP);
	cr_assert_eq(it_ep_connect(a, NULL, NULL, &cq, IT_CONNECT_FLAG_TWO_WAY,
				   NULL, 0),
		     IT_ERR_FAULT);
	cr_assert_eq(it_ep_connect(a, &path, NULL, &cq, 0, NULL, 0),
		     IT_ERR_INVALID_CN_EST_FLAGS);
	cr_assert_eq(it_ep_connect(a, &path, NULL, &cq,
				   IT_CONNECT_FLAG_TWO_WAY |
					   IT_CONNECT_FLAG_THREE_WAY,
				   NULL, 0),
		     IT_ERR_INVALID_CN_EST_FLAGS);
	cr_assert_eq(it_ep_connect(a, &path, NULL, &cq, IT_CONNECT_FLAG_TWO_WAY,
				   big, sizeof(big)),
		     t.info->private_data_support ?
			     IT_ERR_INVALID_PDATA_LENGTH :
			     IT_ERR_PDATA_NOT_SUPPORTED);
	cr_assert_eq(it_ep_connect(a, &path, NULL, &cq, IT_CONNECT_FLAG_TWO_WAY,
				   NULL, 4),
		     t.info->private_data_support ? IT_ERR_FAULT :
						    IT_ERR_PDATA_NOT_SUPPORTED);
	cr_assert_eq(it_ep_connect(a, &path, NULL, &cq,
				   IT_CONNECT_FLAG_TWO_WAY |
					   IT_CONNECT_SUPPRESS_IRD_ORD,
				   NULL, 0),
		     IT_ERR_OP_NOT_SUPPORTED);
	cr_assert_eq(it_ep_connect((it_ep_handle_t)t.pz, &path, NULL, &cq,
				   IT_CONNECT_FLAG_TWO_WAY, NULL, 0),
		     IT_ERR_INVALID_EP);
	cq.conn_qual.port = 0;
	cr_assert_eq(it_ep_connect(a, &path, NULL, &cq, IT_CONNECT_FLAG_TWO_WAY,
				   NULL, 0),
		     IT_ERR_INVALID_CONN_QUAL);
	path.spigot_id = 17;
	cq.conn_qual.port = htons(4000);
	cr_assert_eq(it_ep_connect(a, &path, NULL, &cq, IT_CONNECT_FLAG_TWO_WAY,
				   NULL, 0),
		     IT_ERR_INVALID_SPIGOT);
	cr_assert_eq(it_ep_accept(a, 0x7fffffffffffull, NULL, 0),
		     IT_ERR_INVALID_CN_EST_ID);
	cr_assert_eq(it_ep_accept(TAPI_BOGUS, 1, NULL, 0), IT_ERR_INVALID_EP);
	cr_assert_eq(it_reject(0x7fffffffffffull, NULL, 0),
		     IT_ERR_INVALID_CN_EST_ID);
	cr_assert_eq(it_handoff(NULL, 0, 1), IT_ERR_FAULT);
	cr_assert_eq(it_handoff(&cq, 0, 0x7fffffffffffull),
		     IT_ERR_INVALID_CN_EST_ID);
	/* nothing to disconnect yet */
	cr_assert_eq(it_ep_disconnect(a, NULL, 0), IT_ERR_INVALID_EP_STATE);
	cr_assert_eq(it_ep_disconnect(TAPI_BOGUS, NULL, 0), IT_ERR_INVALID_EP);
	cr_assert_eq(it_socket_convert(3, TAPI_BOGUS, 0, NULL, 0),
		     IT_ERR_INVALID_EP);
	cr_assert_eq(it_socket_convert(3, a, (it_sc_flags_t)0x10, NULL, 0),
		     IT_ERR_INVALID_FLAGS);
	cr_assert_eq(it_socket_convert(-1, a, IT_SC_DEFAULT, NULL, 0),
		     IT_ERR_INVALID_HANDLE);
	/* the rest: test_api_convert.c */
	if (!t.info->socket_conversion_support)
		cr_assert_eq(it_socket_convert(3, a, IT_SC_DEFAULT, NULL, 0),
			     IT_ERR_OP_NOT_SUPPORTED);
}

Test(itapi_conn, disconnect_pending, .init = setup, .fini = teardown)
{
	it_ep_handle_t a = tapi_rc_ep(&t), b;
	it_status_t st;
	it_listen_handle_t l;
	it_conn_qual_t cq;
	it_path_t path;
	it_event_t ev;

	cr_assert_eq(it_listen_create(t.ia, 0, t.creq, 0, &cq, &l), IT_SUCCESS);
	tapi_path(&t, &path);
	cr_assert_eq(it_ep_connect(a, &path, NULL, &cq, IT_CONNECT_FLAG_TWO_WAY,
				   NULL, 0),
		     IT_SUCCESS);
	tapi_wait(t.creq, IT_CM_REQ_CONN_REQUEST_EVENT, &ev);
	/* withdrawn before the answer: the endpoint reports the end */
	cr_assert_eq(it_ep_disconnect(a, NULL, 0), IT_SUCCESS);
	tapi_wait(t.cmsg, IT_CM_MSG_CONN_DISCONNECT_EVENT, NULL);
	cr_assert_eq(ep_state(a), IT_EP_STATE_NONOPERATIONAL);
	/* the request went with it: an accept fails, at once or (where
	 * the withdrawal is still on its way) by an event */
	b = tapi_rc_ep(&t);
	st = it_ep_accept(b, ev.conn_req.cn_est_id, NULL, 0);
	if (st == IT_SUCCESS) {
		cr_assert(tapi_next(t.cmsg, TAPI_TIMEOUT_US, &ev));
		/* iWARP: a passive side is established once its reply is
		 * sent, and learns of the peer's end from TCP after */
		if (ev.event_number == IT_CM_MSG_CONN_ESTABLISHED_EVENT &&
		    t.info->transport_type == IT_IWARP_TCP_TRANSPORT)
			cr_assert(tapi_next(t.cmsg, TAPI_TIMEOUT_US, &ev));
		cr_assert_eq(ev.conn.ep, b);
		cr_assert(ev.event_number != IT_CM_MSG_CONN_ESTABLISHED_EVENT &&
				  ev.event_number !=
					  IT_CM_MSG_CONN_ACCEPT_ARRIVAL_EVENT,
			  "event 0x%x", (unsigned int)ev.event_number);
	} else {
		cr_assert_eq(st, IT_ERR_INVALID_CN_EST_ID, "status %d",
			     (int)st);
	}
}

Test(itapi_conn, free_connected_endpoint, .init = setup, .fini = teardown)
{
	struct tapi_conn c;
	it_event_t ev;

	tapi_connect(&t, &c, false);
	/* abrupt: the peer sees the connection end */
	cr_assert_eq(it_ep_free(c.a), IT_SUCCESS);
	tapi_wait(t.cmsg, IT_CM_MSG_CONN_DISCONNECT_EVENT, &ev);
	cr_assert_eq(ev.conn.ep, c.b);
	cr_assert_eq(ep_state(c.b), IT_EP_STATE_NONOPERATIONAL);
	cr_assert_eq(it_ep_reset(c.b), IT_SUCCESS);
	cr_assert_eq(ep_state(c.b), IT_EP_STATE_UNCONNECTED);
}

/*
 * A reset retires the receives posted before it: their completions, still
 * in the CQ, never surface, the queue holds its full depth again, and the
 * receives posted after it complete with their own cookies.
 */
Test(itapi_conn, reset_retires_posted_receives, .init = setup, .fini = teardown)
{
	struct tapi_buf src, dst;
	it_lmr_triplet_t seg;
	struct tapi_conn c;
	it_ep_param_t p;
	it_ep_handle_t a2;
	it_event_t ev;
	size_t i, depth;

	tapi_connect(&t, &c, false);
	tapi_buf_make(&t, &src, 8, IT_PRIV_LOCAL);
	tapi_buf_make(&t, &dst, 8, IT_PRIV_LOCAL);
	for (i = 0; i < 3; i++)
		tapi_post_recv(c.b, &dst, 0, 8, 100 + i);
	cr_assert_eq(it_ep_free(c.a), IT_SUCCESS);
	tapi_wait(t.cmsg, IT_CM_MSG_CONN_DISCONNECT_EVENT, &ev);
	cr_assert_eq(ev.conn.ep, c.b);
	/* the flushed receives are not taken before the reset */
	cr_assert_eq(it_ep_reset(c.b), IT_SUCCESS);
	cr_assert_eq(it_evd_dequeue(t.rq, &ev), IT_ERR_QUEUE_EMPTY);

	cr_assert_eq(it_ep_query(c.b, IT_EP_PARAM_MAX_RECV_DTO, &p),
		     IT_SUCCESS);
	depth = p.attr.max_recv_dtos;
	cr_assert_geq(depth, 3);
	seg = tapi_seg(&dst, 0, 8);
	for (i = 0; i < depth; i++)
		cr_assert_eq(it_post_recv(c.b, &seg, 1, 200 + i, 0), IT_SUCCESS,
			     "receive %zu of %zu", i, depth);
	cr_assert_eq(it_post_recv(c.b, &seg, 1, 999, 0), IT_ERR_TOO_MANY_POSTS);

	/* connected again, the first receive after the reset takes the
	 * first message */
	a2 = tapi_rc_ep(&t);
	cr_assert_eq(it_ep_connect(a2, &c.path, NULL, &c.conn_qual,
				   IT_CONNECT_FLAG_TWO_WAY, NULL, 0),
		     IT_SUCCESS);
	tapi_wait(t.creq, IT_CM_REQ_CONN_REQUEST_EVENT, &ev);
	cr_assert_eq(it_ep_accept(c.b, ev.conn_req.cn_est_id, NULL, 0),
		     IT_SUCCESS);
	tapi_wait(t.cmsg, IT_CM_MSG_CONN_ESTABLISHED_EVENT, NULL);
	tapi_wait(t.cmsg, IT_CM_MSG_CONN_ESTABLISHED_EVENT, NULL);
	seg = tapi_seg(&src, 0, 8);
	for (i = 0; i < 2; i++)
		cr_assert_eq(it_post_send(a2, &seg, 1, i, 0), IT_SUCCESS);
	for (i = 0; i < 2; i++) {
		tapi_wait(t.rq, IT_DTO_RC_RECV_CMPL_EVENT, &ev);
		cr_assert_eq(ev.dto_cmpl.ep, c.b);
		cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_SUCCESS);
		cr_assert_eq(ev.dto_cmpl.cookie, 200 + i);
	}
	/* a completion frees its place in the queue */
	cr_assert_eq(it_post_recv(c.b, &seg, 1, 300, 0), IT_SUCCESS);
}

Test(itapi_conn, service_id_conn_qual, .init = setup, .fini = teardown)
{
	it_ep_handle_t a = tapi_rc_ep(&t), b = tapi_rc_ep(&t);
	it_listen_handle_t l;
	it_conn_qual_t cq;
	it_path_t path;
	it_event_t ev;

	/* the rdma_cm form: the TCP port space and a port */
	memset(&cq, 0, sizeof(cq));
	cq.type = IT_IB_SERVICEID;
	cq.conn_qual.serviceid = it_hton64(0x0000000001060000ull | 23456);
	cr_assert_eq(it_listen_create(t.ia, 0, t.creq,
				      IT_LISTEN_CONN_QUAL_INPUT, &cq, &l),
		     IT_SUCCESS);
	tapi_path(&t, &path);
	cr_assert_eq(it_ep_connect(a, &path, NULL, &cq, IT_CONNECT_FLAG_TWO_WAY,
				   NULL, 0),
		     IT_SUCCESS);
	tapi_wait(t.creq, IT_CM_REQ_CONN_REQUEST_EVENT, &ev);
	cr_assert_eq(ev.conn_req.conn_qual.type, IT_IB_SERVICEID);
	cr_assert_eq(it_ep_accept(b, ev.conn_req.cn_est_id, NULL, 0),
		     IT_SUCCESS);
	tapi_wait(t.cmsg, IT_CM_MSG_CONN_ESTABLISHED_EVENT, NULL);
	tapi_wait(t.cmsg, IT_CM_MSG_CONN_ESTABLISHED_EVENT, NULL);
	cq.conn_qual.serviceid = it_hton64(0x1234);
	cr_assert_eq(it_listen_create(t.ia, 0, t.creq,
				      IT_LISTEN_CONN_QUAL_INPUT, &cq, &l),
		     IT_ERR_INVALID_CONN_QUAL);
}
