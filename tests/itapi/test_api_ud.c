/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Unreliable datagrams: UD endpoints, address handles, it_post_sendto and
 * it_post_recvfrom (the GRH stays out of the consumer's buffer), replies
 * to the sender's path, and UD service resolution.
 */
#include <arpa/inet.h>
#include <string.h>
#include <criterion/criterion.h>

#include "tests/itapi/test_api.h"

TestSuite(itapi_ud, .timeout = 60);

static struct tapi t;

static void setup(void)
{
	tapi_open(&t);
	tapi_require(t.info->supported_service_types & IT_UD_SERVICE,
		     "UD service");
}

static void teardown(void)
{
	tapi_close(&t);
}

static it_ep_attributes_t ud_attr(uint32_t key)
{
	it_ep_attributes_t a;

	memset(&a, 0, sizeof(a));
	a.max_dto_payload_size = 1024;
	a.max_request_dtos = 16;
	a.max_recv_dtos = 16;
	a.max_send_segments = 2;
	a.max_recv_segments = 2;
	a.srv.ud.ep_info.ud_ep_key = key;
	return a;
}

static it_ep_handle_t ud_ep(uint32_t key)
{
	it_ep_attributes_t a = ud_attr(key);
	it_ep_handle_t ep;

	cr_assert_eq(it_ep_ud_create(t.pz, t.sq, t.rq, &a, 0, &ep), IT_SUCCESS);
	return ep;
}

static it_remote_ep_info_t ep_info(it_ep_handle_t ep)
{
	it_ep_param_t p;

	cr_assert_eq(it_ep_query(ep, IT_EP_PARAM_EP_ID | IT_EP_PARAM_EP_KEY,
				 &p),
		     IT_SUCCESS);
	return p.attr.srv.ud.ep_info;
}

Test(itapi_ud, create_arguments, .init = setup, .fini = teardown)
{
	it_ep_attributes_t a = ud_attr(0x11);
	it_ep_handle_t ep = (it_ep_handle_t)0x1;
	it_ep_param_t p;

	cr_assert_eq(it_ep_ud_create(TAPI_BOGUS, t.sq, t.rq, &a, 0, &ep),
		     IT_ERR_INVALID_PZ);
	cr_assert_eq(it_ep_ud_create(t.pz, t.cmsg, t.rq, &a, 0, &ep),
		     IT_ERR_INVALID_REQ_EVD);
	cr_assert_eq(it_ep_ud_create(t.pz, t.sq, TAPI_BOGUS, &a, 0, &ep),
		     IT_ERR_INVALID_RECV_EVD);
	cr_assert_eq(it_ep_ud_create(t.pz, t.sq, t.rq, NULL, 0, &ep),
		     IT_ERR_INVALID_EP_ATTR);
	cr_assert_eq(it_ep_ud_create(t.pz, t.sq, t.rq, &a, 3, &ep),
		     IT_ERR_INVALID_SPIGOT);
	cr_assert_eq(it_ep_ud_create(t.pz, t.sq, t.rq, &a, 0, NULL),
		     IT_ERR_FAULT);
	a.srv.ud.ep_info.ud_ep_key = 0x80000001u;
	cr_assert_eq(it_ep_ud_create(t.pz, t.sq, t.rq, &a, 0, &ep),
		     IT_ERR_INVALID_EP_KEY);
	a = ud_attr(0x11);
	a.max_dto_payload_size = (size_t)1 << 40;
	cr_assert_eq(it_ep_ud_create(t.pz, t.sq, t.rq, &a, 0, &ep),
		     IT_ERR_INVALID_EP_ATTR);
	a = ud_attr(0x11);
	a.max_send_segments = 1000;
	cr_assert_eq(it_ep_ud_create(t.pz, t.sq, t.rq, &a, 0, &ep),
		     IT_ERR_RESOURCE_SSEG);
	cr_assert_eq(ep, (it_ep_handle_t)0x1);

	ep = ud_ep(0x11);
	cr_assert_eq(it_ep_query(ep, IT_EP_PARAM_ALL, &p), IT_SUCCESS);
	cr_assert_eq(p.service_type, IT_UD_SERVICE);
	cr_assert_eq(p.ep_state.ud, IT_EP_STATE_UD_OPERATIONAL);
	cr_assert_eq(p.attr.srv.ud.ep_info.ud_ep_key, 0x11);
	cr_assert_eq(p.spigot_id, 0);
	/* UD endpoints connect to nothing and reset to nothing */
	cr_assert_eq(it_ep_reset(ep), IT_ERR_INVALID_EP_TYPE);
	cr_assert_eq(it_ep_disconnect(ep, NULL, 0), IT_ERR_INVALID_EP_TYPE);
	p.attr.srv.ud.ep_info.ud_ep_key = 0x22;
	cr_assert_eq(it_ep_modify(ep, IT_EP_PARAM_EP_KEY, &p.attr), IT_SUCCESS);
	cr_assert_eq(ep_info(ep).ud_ep_key, 0x22);
	cr_assert_eq(it_ep_modify(ep, IT_EP_PARAM_MAX_IRD, &p.attr),
		     IT_ERR_INVALID_MASK);
	cr_assert_eq(it_ep_free(ep), IT_SUCCESS);
}

Test(itapi_ud, address_handles, .init = setup, .fini = teardown)
{
	it_addr_handle_t ah = (it_addr_handle_t)0x1;
	it_addr_param_t p;
	it_path_t path;

	tapi_path(&t, &path);
	cr_assert_eq(it_address_handle_create(TAPI_BOGUS, &path, 0, &ah),
		     IT_ERR_INVALID_PZ);
	cr_assert_eq(it_address_handle_create(t.pz, NULL, 0, &ah),
		     IT_ERR_FAULT);
	cr_assert_eq(it_address_handle_create(t.pz, &path, (it_ah_flags_t)0x10,
					      &ah),
		     IT_ERR_INVALID_FLAGS);
	path.spigot_id = 8;
	cr_assert_eq(it_address_handle_create(t.pz, &path, 0, &ah),
		     IT_ERR_INVALID_SPIGOT);
	cr_assert_eq(ah, (it_addr_handle_t)0x1);
	tapi_path(&t, &path);
	cr_assert_eq(it_address_handle_create(t.pz, &path, IT_AH_PATH_COMPLETE,
					      &ah),
		     IT_SUCCESS);
	cr_assert_eq(it_address_handle_query(ah, IT_ADDR_PARAM_ALL, &p),
		     IT_SUCCESS);
	cr_assert_eq(p.ia, t.ia);
	cr_assert_eq(p.pz, t.pz);
	cr_assert_eq(memcmp(&p.path, &path, sizeof(path)), 0);
	cr_assert_eq(it_address_handle_modify(ah, IT_ADDR_PARAM_PATH, &p),
		     IT_SUCCESS);
	cr_assert_eq(it_address_handle_modify(ah, IT_ADDR_PARAM_PZ, &p),
		     IT_ERR_INVALID_MASK);
	cr_assert_eq(it_address_handle_modify(ah, IT_ADDR_PARAM_PATH, NULL),
		     IT_ERR_FAULT);
	cr_assert_eq(it_address_handle_query(ah, (it_addr_param_mask_t)0x40,
					     &p),
		     IT_ERR_INVALID_MASK);
	cr_assert_eq(it_address_handle_query(TAPI_BOGUS, IT_ADDR_PARAM_ALL, &p),
		     IT_ERR_INVALID_AH);
	cr_assert_eq(it_pz_free(t.pz), IT_ERR_PZ_BUSY);
	cr_assert_eq(it_address_handle_free(ah), IT_SUCCESS);
	cr_assert_eq(it_address_handle_free(TAPI_BOGUS), IT_ERR_INVALID_AH);
}

/*
 * The path to a UD endpoint of this IA, as a consumer finds it: by UD
 * service resolution, whose reply's path carries what the transport
 * needs to reach the endpoint's port (a path from it_get_pathinfo() names
 * the host only).
 */
static void resolve(it_ep_handle_t server, it_path_t *path)
{
	it_ud_svc_req_handle_t svc;
	it_listen_handle_t l;
	it_conn_qual_t cq;
	it_path_t host;
	it_event_t ev;

	tapi_require(t.info->ud_req_private_data_len > 0,
		     "UD service resolution");
	cr_assert_eq(it_listen_create(t.ia, 0, t.creq, 0, &cq, &l), IT_SUCCESS);
	tapi_path(&t, &host);
	cr_assert_eq(it_ud_service_request_handle_create(&cq, t.cmsg, &host,
							 NULL, 0, &svc),
		     IT_SUCCESS);
	cr_assert_eq(it_ud_service_request(svc), IT_SUCCESS);
	tapi_wait(t.creq, IT_CM_REQ_UD_SERVICE_REQUEST_EVENT, &ev);
	cr_assert_eq(it_ud_service_reply(ev.ud_svc_request.ud_svc_req_id,
					 IT_UD_SVC_EP_INFO_VALID,
					 ep_info(server), NULL, 0),
		     IT_SUCCESS);
	tapi_wait(t.cmsg, IT_CM_MSG_UD_SERVICE_REPLY_EVENT, &ev);
	cr_assert_eq(ev.ud_svc_reply.status, IT_UD_SVC_EP_INFO_VALID);
	*path = ev.ud_svc_reply.dst_path;
	cr_assert_eq(it_ud_service_request_handle_free(svc), IT_SUCCESS);
	cr_assert_eq(it_listen_free(l), IT_SUCCESS);
}

Test(itapi_ud, datagrams_and_reply, .init = setup, .fini = teardown)
{
	it_ep_handle_t a = ud_ep(0x1234), b = ud_ep(0x1234);
	struct tapi_buf sbuf, rbuf;
	it_dg_remote_ep_addr_t dst;
	it_addr_handle_t ah, back;
	it_lmr_triplet_t seg;
	it_path_t path;
	it_event_t ev;
	int i;

	tapi_buf_make(&t, &sbuf, 512, IT_PRIV_LOCAL);
	tapi_buf_make(&t, &rbuf, 512, IT_PRIV_LOCAL);
	for (i = 0; i < 512; i++)
		sbuf.p[i] = (unsigned char)(i + 1);
	seg = tapi_seg(&rbuf, 0, 256);
	cr_assert_eq(it_post_recvfrom(b, &seg, 1, 101, IT_COMPLETION_FLAG),
		     IT_SUCCESS);
	seg = tapi_seg(&rbuf, 256, 256);
	cr_assert_eq(it_post_recvfrom(a, &seg, 1, 102, IT_COMPLETION_FLAG),
		     IT_SUCCESS);

	resolve(b, &path);
	cr_assert_eq(it_address_handle_create(t.pz, &path, 0, &ah), IT_SUCCESS);
	memset(&dst, 0, sizeof(dst));
	dst.type = IT_DG_TYPE_IB_UD;
	dst.addr.ud.addr = ah;
	dst.addr.ud.ep_info = ep_info(b);
	seg = tapi_seg(&sbuf, 0, 200);
	cr_assert_eq(it_post_sendto(a, &seg, 1, 103, IT_COMPLETION_FLAG, &dst),
		     IT_SUCCESS);
	tapi_wait(t.sq, IT_DTO_SEND_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.cookie, 103);
	cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_SUCCESS);
	tapi_wait(t.rq, IT_DTO_UD_RECV_CMPL_EVENT, &ev);
	cr_assert_eq(ev.all_dto_cmpl.ep, b);
	cr_assert_eq(ev.all_dto_cmpl.cookie, 101);
	cr_assert_eq(ev.all_dto_cmpl.dto_status, IT_DTO_SUCCESS);
	/* the payload only: the GRH went to the endpoint's own area */
	cr_assert_eq(ev.all_dto_cmpl.transferred_length, 200);
	cr_assert_arr_eq(rbuf.p, sbuf.p, 200);
	cr_assert_eq(ev.all_dto_cmpl.ud_ep_id, ep_info(a).ud_ep_id);

	/* answer the sender by the path it came from */
	cr_assert_eq(it_address_handle_create(t.pz, &ev.all_dto_cmpl.src_path,
					      0, &back),
		     IT_SUCCESS);
	dst.addr.ud.addr = back;
	dst.addr.ud.ep_info.ud_ep_id = ev.all_dto_cmpl.ud_ep_id;
	dst.addr.ud.ep_info.ud_ep_key = 0x1234;
	seg = tapi_seg(&sbuf, 300, 50);
	cr_assert_eq(it_post_sendto(b, &seg, 1, 104, 0, &dst), IT_SUCCESS);
	tapi_wait(t.rq, IT_DTO_UD_RECV_CMPL_EVENT, &ev);
	cr_assert_eq(ev.all_dto_cmpl.ep, a);
	cr_assert_eq(ev.all_dto_cmpl.cookie, 102);
	cr_assert_eq(ev.all_dto_cmpl.transferred_length, 50);
	cr_assert_arr_eq(rbuf.p + 256, sbuf.p + 300, 50);

	/* wrong key: the datagram is dropped, the send succeeds */
	dst.addr.ud.ep_info = ep_info(b);
	dst.addr.ud.ep_info.ud_ep_key = 0x999;
	dst.addr.ud.addr = ah;
	cr_assert_eq(it_post_sendto(a, &seg, 1, 105, IT_COMPLETION_FLAG, &dst),
		     IT_SUCCESS);
	tapi_wait(t.sq, IT_DTO_SEND_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.cookie, 105);
	cr_assert(!tapi_next(t.rq, 50000, &ev));

	dst.addr.ud.addr = TAPI_BOGUS;
	cr_assert_eq(it_post_sendto(a, &seg, 1, 0, 0, &dst), IT_ERR_INVALID_AH);
	cr_assert_eq(it_post_sendto(a, &seg, 1, 0, 0, NULL), IT_ERR_INVALID_AH);
	cr_assert_eq(it_post_send(a, &seg, 1, 0, 0), IT_ERR_INVALID_EP_TYPE);
	cr_assert_eq(it_post_recv(a, &seg, 1, 0, 0), IT_ERR_INVALID_EP_TYPE);
	cr_assert_eq(it_post_recvfrom(a, &seg, 3, 0, 0),
		     IT_ERR_INVALID_NUM_SEGMENTS);
}

Test(itapi_ud, service_resolution, .init = setup, .fini = teardown)
{
	const unsigned char ask[] = "which EP?", tell[] = "this one";
	it_ep_handle_t server = ud_ep(0x77);
	it_ud_svc_req_handle_t svc, bad;
	it_ud_svc_req_param_t p;
	it_listen_handle_t l;
	it_conn_qual_t cq, none;
	it_path_t path;
	it_event_t ev;

	tapi_require(t.info->ud_req_private_data_len >= sizeof(ask) &&
			     t.info->ud_rep_private_data_len >= sizeof(tell),
		     "UD service resolution");
	cr_assert_eq(it_listen_create(t.ia, 0, t.creq, 0, &cq, &l), IT_SUCCESS);
	tapi_path(&t, &path);
	cr_assert_eq(it_ud_service_request_handle_create(&cq, TAPI_BOGUS, &path,
							 NULL, 0, &svc),
		     IT_ERR_INVALID_EVD);
	cr_assert_eq(it_ud_service_request_handle_create(&cq, t.sq, &path, NULL,
							 0, &svc),
		     IT_ERR_INVALID_EVD_TYPE);
	cr_assert_eq(it_ud_service_request_handle_create(NULL, t.cmsg, &path,
							 NULL, 0, &svc),
		     IT_ERR_FAULT);
	cr_assert_eq(it_ud_service_request_handle_create(
			     &cq, t.cmsg, &path, ask,
			     t.info->ud_req_private_data_len + 1, &svc),
		     IT_ERR_INVALID_PDATA_LENGTH);
	cr_assert_eq(it_ud_service_request_handle_create(
			     &cq, t.cmsg, &path, ask, sizeof(ask), &svc),
		     IT_SUCCESS);
	cr_assert_eq(it_ud_service_request_handle_query(svc, IT_UD_PARAM_ALL,
							&p),
		     IT_SUCCESS);
	cr_assert_eq(p.ia, t.ia);
	cr_assert_eq(p.reply_evd, t.cmsg);
	cr_assert_eq(p.private_data_length, sizeof(ask));
	cr_assert_arr_eq(p.private_data, ask, sizeof(ask));
	cr_assert_eq(p.request_id, 0);

	cr_assert_eq(it_ud_service_request(svc), IT_SUCCESS);
	tapi_wait(t.creq, IT_CM_REQ_UD_SERVICE_REQUEST_EVENT, &ev);
	cr_assert_eq(ev.ud_svc_request.private_data_present, IT_TRUE);
	cr_assert_arr_eq(ev.ud_svc_request.private_data, ask, sizeof(ask));
	cr_assert_eq(ev.ud_svc_request.conn_qual.conn_qual.port,
		     cq.conn_qual.port);
	/* it is answered by a reply, not a connection */
	cr_assert_eq(it_ep_accept(tapi_rc_ep(&t),
				  ev.ud_svc_request.ud_svc_req_id, NULL, 0),
		     IT_ERR_INVALID_CN_EST_ID);
	cr_assert_eq(it_ud_service_reply(ev.ud_svc_request.ud_svc_req_id,
					 (it_ud_svc_req_status_t)17,
					 ep_info(server), NULL, 0),
		     IT_ERR_INVALID_UD_STATUS);
	cr_assert_eq(it_ud_service_reply(ev.ud_svc_request.ud_svc_req_id,
					 IT_UD_SVC_EP_INFO_VALID,
					 ep_info(server), tell, sizeof(tell)),
		     IT_SUCCESS);
	cr_assert_eq(it_ud_service_reply(ev.ud_svc_request.ud_svc_req_id,
					 IT_UD_SVC_EP_INFO_VALID,
					 ep_info(server), NULL, 0),
		     IT_ERR_INVALID_UD_SVC_REQ_ID);
	tapi_wait(t.cmsg, IT_CM_MSG_UD_SERVICE_REPLY_EVENT, &ev);
	cr_assert_eq(ev.ud_svc_reply.ud_svc, svc);
	cr_assert_eq(ev.ud_svc_reply.status, IT_UD_SVC_EP_INFO_VALID);
	cr_assert_eq(ev.ud_svc_reply.ep_info.ud_ep_id,
		     ep_info(server).ud_ep_id);
	cr_assert_eq(ev.ud_svc_reply.ep_info.ud_ep_key, 0x77);
	cr_assert_eq(ev.ud_svc_reply.private_data_present, IT_TRUE);
	cr_assert_arr_eq(ev.ud_svc_reply.private_data, tell, sizeof(tell));
	cr_assert_eq(it_ud_service_request_handle_query(svc, IT_UD_PARAM_REQ_ID,
							&p),
		     IT_SUCCESS);
	cr_assert_eq(p.request_id, 1);

	/* nobody listens there */
	memset(&none, 0, sizeof(none));
	none.type = IT_IANA_PORT;
	none.conn_qual.port = htons(11);
	cr_assert_eq(it_ud_service_request_handle_create(&none, t.cmsg, &path,
							 NULL, 0, &bad),
		     IT_SUCCESS);
	cr_assert_eq(it_ud_service_request(bad), IT_SUCCESS);
	tapi_wait(t.cmsg, IT_CM_MSG_UD_SERVICE_REPLY_EVENT, &ev);
	cr_assert_eq(ev.ud_svc_reply.ud_svc, bad);
	cr_assert_neq(ev.ud_svc_reply.status, IT_UD_SVC_EP_INFO_VALID);
	cr_assert_eq(it_ud_service_request_handle_free(bad), IT_SUCCESS);
	cr_assert_eq(it_ud_service_request_handle_free(svc), IT_SUCCESS);
	cr_assert_eq(it_ud_service_request_handle_free(TAPI_BOGUS),
		     IT_ERR_INVALID_UD_SVC);
	cr_assert_eq(it_ud_service_request(TAPI_BOGUS), IT_ERR_INVALID_UD_SVC);
	cr_assert_eq(it_ud_service_reply(0x7fffffffffffull,
					 IT_UD_SVC_EP_INFO_VALID,
					 ep_info(server), NULL, 0),
		     IT_ERR_INVALID_UD_SVC_REQ_ID);
}
