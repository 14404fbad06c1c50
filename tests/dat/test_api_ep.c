/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Endpoints and connections: create, query, modify, status, reset,
 * free; connect, accept, reject, handoff, disconnect; PSP (both flags),
 * RSP, CSP, dup and common connects.
 */
#include "config.h"

#include <arpa/inet.h>
#include <string.h>

#include "tests/dat/test_api_common.h"

static DAT_EP_STATE state_of(DAT_EP_HANDLE ep)
{
	DAT_EP_STATE s;

	T_OK(dat_ep_get_status(ep, &s, NULL, NULL));
	return s;
}

/* The next request at an EVD. */
static DAT_CR_HANDLE next_cr(DAT_EVD_HANDLE evd, DAT_HANDLE sp)
{
	DAT_EVENT ev = t_wait(evd, DAT_CONNECTION_REQUEST_EVENT);

	cr_assert_eq(ev.event_data.cr_arrival_event_data.sp_handle.psp_handle,
		     sp);
	return ev.event_data.cr_arrival_event_data.cr_handle;
}

static void connect_to(struct t_pair *p, DAT_EP_HANDLE ep, DAT_CONN_QUAL qual,
		       DAT_COUNT len, const void *pdata)
{
	T_OK(dat_ep_connect(ep, p->t.attr.ia_address_ptr, qual, T_TIMEOUT_US,
			    len, (DAT_PVOID)pdata, DAT_QOS_BEST_EFFORT,
			    DAT_CONNECT_DEFAULT_FLAG));
}

Test(dat_ep, create_query_defaults)
{
	DAT_EP_PARAM param;
	DAT_BOOLEAN ri, qi;
	DAT_EP_STATE s;
	struct t_pair p;

	t_pair_setup(&p, NULL);
	T_OK(dat_ep_query(p.ep[0], DAT_EP_FIELD_ALL, &param));
	cr_assert_eq(param.ep_state, DAT_EP_STATE_UNCONNECTED);
	cr_assert_eq(param.pz_handle, p.t.pz);
	cr_assert_eq(param.recv_evd_handle, p.recv[0]);
	cr_assert_eq(param.request_evd_handle, p.req[0]);
	cr_assert_eq(param.connect_evd_handle, p.conn[0]);
	cr_assert_null(param.srq_handle);
	cr_assert_eq(param.ep_attr.service_type, DAT_SERVICE_TYPE_RC);
	cr_assert_gt(param.ep_attr.max_recv_dtos, 0);
	cr_assert_gt(param.ep_attr.max_request_dtos, 0);
	cr_assert_gt(param.ep_attr.max_recv_iov, 0);
	cr_assert_gt(param.ep_attr.max_message_size, 0);
	cr_assert_not_null(param.local_ia_address_ptr);
	T_OK(dat_ia_query(param.ia_handle, NULL, 0, NULL, 0, NULL));
	T_OK(dat_ep_get_status(p.ep[0], &s, &ri, &qi));
	cr_assert_eq(s, DAT_EP_STATE_UNCONNECTED);
	cr_assert_eq(ri, DAT_TRUE);
	cr_assert_eq(qi, DAT_TRUE);
	T_ERR(dat_ep_query(p.ep[0], DAT_EP_FIELD_ALL, NULL),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	T_ERR(dat_ep_query(p.ep[0], (DAT_EP_PARAM_MASK)1 << 40, &param),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	T_ERR(dat_ep_query(p.t.pz, DAT_EP_FIELD_ALL, &param),
	      DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	T_ERR(dat_ep_get_status(NULL, &s, NULL, NULL), DAT_INVALID_HANDLE,
	      DAT_INVALID_HANDLE_EP);
	t_pair_teardown(&p);
}

Test(dat_ep, create_errors)
{
	DAT_EP_ATTR attr;
	DAT_EP_HANDLE ep;
	struct t_pair p;

	t_pair_setup(&p, NULL);
	T_ERR(dat_ep_create(NULL, p.t.pz, p.recv[0], p.req[0], p.conn[0], NULL,
			    &ep),
	      DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	T_ERR(dat_ep_create(p.t.ia, p.recv[0], p.recv[0], p.req[0], p.conn[0],
			    NULL, &ep),
	      DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	/* EVDs without the stream they are used for */
	T_ERR(dat_ep_create(p.t.ia, p.t.pz, p.conn[0], p.req[0], p.conn[0],
			    NULL, &ep),
	      DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EVD_RECV);
	T_ERR(dat_ep_create(p.t.ia, p.t.pz, p.recv[0], p.cr_evd, p.conn[0],
			    NULL, &ep),
	      DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EVD_REQUEST);
	T_ERR(dat_ep_create(p.t.ia, p.t.pz, p.recv[0], p.req[0], p.req[0], NULL,
			    &ep),
	      DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EVD_CONN);
	T_ERR(dat_ep_create(p.t.ia, p.t.pz, p.recv[0], p.req[0], p.conn[0],
			    NULL, NULL),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG7);
	memset(&attr, 0, sizeof(attr));
	attr.max_recv_dtos = 4;
	attr.max_request_dtos = 4;
	attr.max_recv_iov = 1;
	attr.max_request_iov = 1;
	T_OK(dat_ep_create(p.t.ia, p.t.pz, p.recv[0], p.req[0], p.conn[0],
			   &attr, &ep));
	T_OK(dat_ep_free(ep));
	attr.max_recv_iov = p.t.attr.max_iov_segments_per_dto + 1;
	T_ERR(dat_ep_create(p.t.ia, p.t.pz, p.recv[0], p.req[0], p.conn[0],
			    &attr, &ep),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG6);
	attr.max_recv_iov = 1;
	attr.max_request_dtos = -1;
	T_ERR(dat_ep_create(p.t.ia, p.t.pz, p.recv[0], p.req[0], p.conn[0],
			    &attr, &ep),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG6);
	attr.max_request_dtos = 4;
	attr.service_type = (DAT_SERVICE_TYPE)7;
	T_ERR(dat_ep_create(p.t.ia, p.t.pz, p.recv[0], p.req[0], p.conn[0],
			    &attr, &ep),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG6);
	attr.service_type = DAT_SERVICE_TYPE_RC;
	attr.request_completion_flags = (DAT_COMPLETION_FLAGS)0x1000;
	T_ERR(dat_ep_create(p.t.ia, p.t.pz, p.recv[0], p.req[0], p.conn[0],
			    &attr, &ep),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG6);
	T_ERR(dat_ep_free(p.t.pz), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	t_pair_teardown(&p);
}

/* Objects of one IA are not another's, even on the same interface. */
Test(dat_ep, evds_of_another_ia)
{
	DAT_EVD_HANDLE dto, conn, cr;
	DAT_PSP_HANDLE psp;
	DAT_EP_PARAM param;
	DAT_EP_HANDLE ep;
	struct t_pair p;
	struct t_ia t2;

	t_pair_setup(&p, NULL);
	t_ia_open(&t2);
	T_OK(dat_evd_create(t2.ia, T_QLEN, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG,
			    &dto));
	T_OK(dat_evd_create(t2.ia, T_QLEN, DAT_HANDLE_NULL,
			    DAT_EVD_CONNECTION_FLAG, &conn));
	T_OK(dat_evd_create(t2.ia, T_QLEN, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG,
			    &cr));
	T_ERR(dat_ep_create(p.t.ia, p.t.pz, dto, p.req[0], p.conn[0], NULL,
			    &ep),
	      DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EVD_RECV);
	T_ERR(dat_ep_create(p.t.ia, p.t.pz, p.recv[0], dto, p.conn[0], NULL,
			    &ep),
	      DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EVD_REQUEST);
	T_ERR(dat_ep_create(p.t.ia, p.t.pz, p.recv[0], p.req[0], conn, NULL,
			    &ep),
	      DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EVD_CONN);
	T_ERR(dat_ep_create(p.t.ia, t2.pz, p.recv[0], p.req[0], p.conn[0], NULL,
			    &ep),
	      DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	memset(&param, 0, sizeof(param));
	param.connect_evd_handle = conn;
	T_ERR(dat_ep_modify(p.ep[0], DAT_EP_FIELD_CONNECT_EVD_HANDLE, &param),
	      DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EVD_CONN);
	param.recv_evd_handle = dto;
	T_ERR(dat_ep_modify(p.ep[0], DAT_EP_FIELD_RECV_EVD_HANDLE, &param),
	      DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EVD_RECV);
	T_ERR(dat_psp_create(p.t.ia, p.qual + 1, cr, DAT_PSP_CONSUMER_FLAG,
			     &psp),
	      DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EVD_CR);
	T_OK(dat_evd_free(cr));
	T_OK(dat_evd_free(conn));
	T_OK(dat_evd_free(dto));
	t_ia_close(&t2);
	t_pair_teardown(&p);
}

Test(dat_ep, unconfigured_then_modified)
{
	DAT_EP_PARAM param;
	DAT_EP_HANDLE ep;
	struct t_pair p;

	t_pair_setup(&p, NULL);
	T_OK(dat_ep_create(p.t.ia, NULL, NULL, NULL, NULL, NULL, &ep));
	cr_assert_eq(state_of(ep), DAT_EP_STATE_UNCONFIGURED_UNCONNECTED);
	T_ERR(dat_ep_connect(ep, p.t.attr.ia_address_ptr, p.qual, 0, 0, NULL,
			     DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG),
	      DAT_INVALID_STATE, DAT_INVALID_STATE_EP_UNCONFIGURED);
	param.pz_handle = p.t.pz;
	param.recv_evd_handle = p.recv[1];
	param.request_evd_handle = p.req[1];
	param.connect_evd_handle = p.conn[1];
	param.ep_attr.max_recv_dtos = 8;
	T_OK(dat_ep_modify(ep,
			   DAT_EP_FIELD_PZ_HANDLE |
				   DAT_EP_FIELD_RECV_EVD_HANDLE |
				   DAT_EP_FIELD_REQUEST_EVD_HANDLE |
				   DAT_EP_FIELD_CONNECT_EVD_HANDLE |
				   DAT_EP_FIELD_EP_ATTR_MAX_RECV_DTOS,
			   &param));
	cr_assert_eq(state_of(ep), DAT_EP_STATE_UNCONNECTED);
	T_OK(dat_ep_query(ep, DAT_EP_FIELD_ALL, &param));
	cr_assert_eq(param.pz_handle, p.t.pz);
	cr_assert_eq(param.ep_attr.max_recv_dtos, 8);
	/* fields that never change */
	T_ERR(dat_ep_modify(ep, DAT_EP_FIELD_EP_STATE, &param),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	T_ERR(dat_ep_modify(ep, DAT_EP_FIELD_SRQ_HANDLE, &param),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	T_ERR(dat_ep_modify(ep, DAT_EP_FIELD_PZ_HANDLE, NULL),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	param.pz_handle = p.recv[0];
	T_ERR(dat_ep_modify(ep, DAT_EP_FIELD_PZ_HANDLE, &param),
	      DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	param.ep_attr.max_recv_iov = -3;
	T_ERR(dat_ep_modify(ep, DAT_EP_FIELD_EP_ATTR_MAX_RECV_IOV, &param),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	T_OK(dat_ep_free(ep));
	t_pair_teardown(&p);
}

Test(dat_ep, connect_pdata_disconnect_reset_reconnect)
{
	unsigned char pd[48], back[48];
	DAT_CR_PARAM crp;
	DAT_EP_PARAM ep0, ep1;
	DAT_CR_HANDLE cr;
	DAT_EVENT ev;
	struct t_pair p;
	int i;

	t_pair_setup(&p, NULL);
	for (i = 0; i < 48; i++)
		pd[i] = (unsigned char)(i + 1);
	connect_to(&p, p.ep[0], p.qual, 48, pd);
	cr_assert_eq(state_of(p.ep[0]), DAT_EP_STATE_ACTIVE_CONNECTION_PENDING);
	cr = next_cr(p.cr_evd, p.psp);
	T_OK(dat_cr_query(cr, DAT_CR_FIELD_ALL, &crp));
	t_pdata_check(&p.t, crp.private_data, crp.private_data_size, pd, 48);
	cr_assert_not_null(crp.remote_ia_address_ptr);
	cr_assert_null(crp.local_ep_handle);
	for (i = 0; i < 48; i++)
		back[i] = (unsigned char)(i + 2);
	T_ERR(dat_cr_accept(cr, p.ep[1], -1, back), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG3);
	T_ERR(dat_cr_accept(cr, p.ep[1], 48, NULL), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG4);
	T_ERR(dat_cr_accept(cr, p.t.pz, 0, NULL), DAT_INVALID_HANDLE,
	      DAT_INVALID_HANDLE_EP);
	T_OK(dat_cr_accept(cr, p.ep[1], 48, back));
	ev = t_wait(p.conn[0], DAT_CONNECTION_EVENT_ESTABLISHED);
	t_pdata_check(&p.t, ev.event_data.connect_event_data.private_data,
		      ev.event_data.connect_event_data.private_data_size, back,
		      48);
	t_wait(p.conn[1], DAT_CONNECTION_EVENT_ESTABLISHED);
	T_OK(dat_ep_query(p.ep[0], DAT_EP_FIELD_ALL, &ep0));
	T_OK(dat_ep_query(p.ep[1], DAT_EP_FIELD_ALL, &ep1));
	cr_assert_eq(ep0.remote_port_qual, p.qual);
	cr_assert_eq(ep1.local_port_qual, p.qual);
	cr_assert_eq(ep0.ep_state, DAT_EP_STATE_CONNECTED);
	/* connected: no second connect, no reset */
	T_ERR(dat_ep_connect(p.ep[0], p.t.attr.ia_address_ptr, p.qual, 0, 0,
			     NULL, DAT_QOS_BEST_EFFORT,
			     DAT_CONNECT_DEFAULT_FLAG),
	      DAT_INVALID_STATE, DAT_INVALID_STATE_EP_CONNECTED);
	T_ERR(dat_ep_reset(p.ep[0]), DAT_INVALID_STATE,
	      DAT_INVALID_STATE_EP_CONNECTED);

	T_ERR(dat_ep_disconnect(p.ep[0], (DAT_CLOSE_FLAGS)3),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	T_OK(dat_ep_disconnect(p.ep[0], DAT_CLOSE_GRACEFUL_FLAG));
	t_wait(p.conn[0], DAT_CONNECTION_EVENT_DISCONNECTED);
	t_wait(p.conn[1], DAT_CONNECTION_EVENT_DISCONNECTED);
	cr_assert_eq(state_of(p.ep[0]), DAT_EP_STATE_DISCONNECTED);
	cr_assert_eq(state_of(p.ep[1]), DAT_EP_STATE_DISCONNECTED);
	/* disconnecting twice is harmless */
	T_OK(dat_ep_disconnect(p.ep[0], DAT_CLOSE_ABRUPT_FLAG));
	T_OK(dat_ep_reset(p.ep[0]));
	T_OK(dat_ep_reset(p.ep[1]));
	cr_assert_eq(state_of(p.ep[0]), DAT_EP_STATE_UNCONNECTED);
	T_OK(dat_ep_reset(p.ep[0]));
	/* the same EPs connect again */
	t_pair_connect(&p);
	T_OK(dat_ep_disconnect(p.ep[1], DAT_CLOSE_ABRUPT_FLAG));
	t_wait(p.conn[1], DAT_CONNECTION_EVENT_DISCONNECTED);
	t_wait(p.conn[0], DAT_CONNECTION_EVENT_DISCONNECTED);
	t_pair_teardown(&p);
}

Test(dat_ep, connect_errors)
{
	struct sockaddr_in bad = { 0 };
	unsigned char big[1024] = { 0 };
	struct t_pair p;

	t_pair_setup(&p, NULL);
	T_ERR(dat_ep_connect(NULL, p.t.attr.ia_address_ptr, p.qual, 0, 0, NULL,
			     DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG),
	      DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	T_ERR(dat_ep_connect(p.ep[0], NULL, p.qual, 0, 0, NULL,
			     DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	bad.sin_family = AF_UNIX;
	T_ERR(dat_ep_connect(p.ep[0], (DAT_IA_ADDRESS_PTR)&bad, p.qual, 0, 0,
			     NULL, DAT_QOS_BEST_EFFORT,
			     DAT_CONNECT_DEFAULT_FLAG),
	      DAT_INVALID_ADDRESS, DAT_INVALID_ADDRESS_MALFORMED);
	T_ERR(dat_ep_connect(p.ep[0], p.t.attr.ia_address_ptr, 0x10000, 0, 0,
			     NULL, DAT_QOS_BEST_EFFORT,
			     DAT_CONNECT_DEFAULT_FLAG),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	T_ERR(dat_ep_connect(p.ep[0], p.t.attr.ia_address_ptr, p.qual, 0,
			     (DAT_COUNT)sizeof(big), big, DAT_QOS_BEST_EFFORT,
			     DAT_CONNECT_DEFAULT_FLAG),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG5);
	T_ERR(dat_ep_connect(p.ep[0], p.t.attr.ia_address_ptr, p.qual, 0, 8,
			     NULL, DAT_QOS_BEST_EFFORT,
			     DAT_CONNECT_DEFAULT_FLAG),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG6);
	T_ERR(dat_ep_connect(p.ep[0], p.t.attr.ia_address_ptr, p.qual, 0, 0,
			     NULL, (DAT_QOS)0x40, DAT_CONNECT_DEFAULT_FLAG),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG7);
	T_ERR(dat_ep_connect(p.ep[0], p.t.attr.ia_address_ptr, p.qual, 0, 0,
			     NULL, DAT_QOS_BEST_EFFORT,
			     DAT_CONNECT_MULTIPATH_REQUIRED_FLAG),
	      DAT_MODEL_NOT_SUPPORTED, -1);
	T_ERR(dat_ep_connect(p.ep[0], p.t.attr.ia_address_ptr, p.qual, 0, 0,
			     NULL, DAT_QOS_BEST_EFFORT,
			     (DAT_CONNECT_FLAGS)0x10),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG8);
	/* not connected: nothing to disconnect */
	T_ERR(dat_ep_disconnect(p.ep[0], DAT_CLOSE_ABRUPT_FLAG),
	      DAT_INVALID_STATE, DAT_INVALID_STATE_EP_UNCONNECTED);
	t_pair_teardown(&p);
}

Test(dat_ep, reject_with_pdata_and_nobody_listening)
{
	char why[] = "go away";
	DAT_CONN_QUAL unused;
	DAT_PSP_HANDLE tmp;
	DAT_CR_HANDLE cr;
	DAT_EVENT ev;
	struct t_pair p;

	t_pair_setup(&p, NULL);
	connect_to(&p, p.ep[0], p.qual, 0, NULL);
	cr = next_cr(p.cr_evd, p.psp);
	T_ERR(dat_cr_reject(cr, -2, why), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG2);
	T_OK(dat_cr_reject(cr, (DAT_COUNT)sizeof(why), why));
	ev = t_wait(p.conn[0], DAT_CONNECTION_EVENT_PEER_REJECTED);
	t_pdata_check(&p.t, ev.event_data.connect_event_data.private_data,
		      ev.event_data.connect_event_data.private_data_size, why,
		      (DAT_COUNT)sizeof(why));
	cr_assert_eq(state_of(p.ep[0]), DAT_EP_STATE_DISCONNECTED);
	T_ERR(dat_cr_reject(NULL, 0, NULL), DAT_INVALID_HANDLE,
	      DAT_INVALID_HANDLE_CR);

	/* a qualifier nobody listens on any more */
	T_OK(dat_psp_create_any(p.t.ia, &unused, p.cr_evd,
				DAT_PSP_CONSUMER_FLAG, &tmp));
	T_OK(dat_psp_free(tmp));
	T_OK(dat_ep_reset(p.ep[0]));
	connect_to(&p, p.ep[0], unused, 0, NULL);
	T_OK(dat_evd_wait(p.conn[0], T_TIMEOUT_US, 1, &ev, NULL));
	cr_assert(ev.event_number == DAT_CONNECTION_EVENT_NON_PEER_REJECTED ||
			  ev.event_number == DAT_CONNECTION_EVENT_UNREACHABLE,
		  "event 0x%x", ev.event_number);
	cr_assert_eq(state_of(p.ep[0]), DAT_EP_STATE_DISCONNECTED);
	t_empty(p.cr_evd);
	t_pair_teardown(&p);
}

Test(dat_ep, psp_errors_query)
{
	DAT_PSP_HANDLE psp;
	DAT_PSP_PARAM param;
	DAT_CONN_QUAL q;
	struct t_pair p;

	t_pair_setup(&p, NULL);
	T_OK(dat_psp_query(p.psp, DAT_PSP_FIELD_ALL, &param));
	cr_assert_eq(param.conn_qual, p.qual);
	cr_assert_eq(param.evd_handle, p.cr_evd);
	cr_assert_eq(param.psp_flags, DAT_PSP_CONSUMER_FLAG);
	T_ERR(dat_psp_create(p.t.ia, p.qual, p.cr_evd, DAT_PSP_CONSUMER_FLAG,
			     &psp),
	      DAT_CONN_QUAL_IN_USE, -1);
	T_ERR(dat_psp_create(p.t.ia, 0, p.cr_evd, DAT_PSP_CONSUMER_FLAG, &psp),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	T_ERR(dat_psp_create(p.t.ia, 0x12345, p.cr_evd, DAT_PSP_CONSUMER_FLAG,
			     &psp),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	T_ERR(dat_psp_create(p.t.ia, 4242, p.conn[0], DAT_PSP_CONSUMER_FLAG,
			     &psp),
	      DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EVD_CR);
	T_ERR(dat_psp_create(p.t.ia, 4242, p.cr_evd, (DAT_PSP_FLAGS)5, &psp),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);
	T_ERR(dat_psp_create(p.t.ia, 4242, p.cr_evd, DAT_PSP_CONSUMER_FLAG,
			     NULL),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG5);
	T_ERR(dat_psp_create_any(p.t.ia, NULL, p.cr_evd, DAT_PSP_CONSUMER_FLAG,
				 &psp),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	T_ERR(dat_psp_create_any(NULL, &q, p.cr_evd, DAT_PSP_CONSUMER_FLAG,
				 &psp),
	      DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	T_ERR(dat_psp_query(p.psp, (DAT_PSP_PARAM_MASK)0x20, &param),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	T_ERR(dat_psp_query(p.psp, DAT_PSP_FIELD_ALL, NULL),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	T_ERR(dat_psp_free(p.ep[0]), DAT_INVALID_HANDLE,
	      DAT_INVALID_HANDLE_PSP);
	t_pair_teardown(&p);
}

Test(dat_ep, psp_provider_flag)
{
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL q;
	DAT_CR_PARAM crp;
	DAT_EP_PARAM param;
	DAT_EP_HANDLE ep;
	DAT_CR_HANDLE cr;
	struct t_pair p;

	t_pair_setup(&p, NULL);
	T_OK(dat_psp_create_any(p.t.ia, &q, p.cr_evd, DAT_PSP_PROVIDER_FLAG,
				&psp));
	connect_to(&p, p.ep[0], q, 0, NULL);
	cr = next_cr(p.cr_evd, psp);
	T_OK(dat_cr_query(cr, DAT_CR_FIELD_LOCAL_EP_HANDLE, &crp));
	ep = crp.local_ep_handle;
	cr_assert_not_null(ep);
	cr_assert_eq(state_of(ep), DAT_EP_STATE_UNCONFIGURED_TENTATIVE);
	/* the consumer gives the provider's EP what it needs */
	param.pz_handle = p.t.pz;
	param.recv_evd_handle = p.recv[1];
	param.request_evd_handle = p.req[1];
	param.connect_evd_handle = p.conn[1];
	T_OK(dat_ep_modify(ep,
			   DAT_EP_FIELD_PZ_HANDLE |
				   DAT_EP_FIELD_RECV_EVD_HANDLE |
				   DAT_EP_FIELD_REQUEST_EVD_HANDLE |
				   DAT_EP_FIELD_CONNECT_EVD_HANDLE,
			   &param));
	cr_assert_eq(state_of(ep), DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING);
	/* only that EP may take the request */
	T_ERR(dat_cr_accept(cr, p.ep[1], 0, NULL), DAT_INVALID_HANDLE,
	      DAT_INVALID_HANDLE_EP);
	T_OK(dat_cr_accept(cr, NULL, 0, NULL));
	t_wait(p.conn[0], DAT_CONNECTION_EVENT_ESTABLISHED);
	t_wait(p.conn[1], DAT_CONNECTION_EVENT_ESTABLISHED);
	cr_assert_eq(state_of(ep), DAT_EP_STATE_CONNECTED);
	T_OK(dat_ep_free(ep));
	t_wait(p.conn[0], DAT_CONNECTION_EVENT_DISCONNECTED);
	T_OK(dat_psp_free(psp));
	t_pair_teardown(&p);
}

Test(dat_ep, rsp_single_request)
{
	DAT_RSP_HANDLE rsp;
	DAT_RSP_PARAM param;
	DAT_CR_PARAM crp;
	DAT_EP_HANDLE extra;
	DAT_CR_HANDLE cr;
	DAT_EVENT ev;
	struct t_pair p;
	DAT_CONN_QUAL q = 0;

	t_pair_setup(&p, NULL);
	/* a qualifier nobody uses: one a PSP had */
	T_OK(dat_psp_free(p.psp));
	q = p.qual;
	T_OK(dat_rsp_create(p.t.ia, q, p.ep[1], p.cr_evd, &rsp));
	cr_assert_eq(state_of(p.ep[1]), DAT_EP_STATE_RESERVED);
	T_OK(dat_rsp_query(rsp, DAT_RSP_FIELD_ALL, &param));
	cr_assert_eq(param.ep_handle, p.ep[1]);
	cr_assert_eq(param.conn_qual, q);
	T_ERR(dat_ep_free(p.ep[1]), DAT_INVALID_STATE,
	      DAT_INVALID_STATE_EP_RESERVED);
	T_ERR(dat_rsp_create(p.t.ia, q + 1, p.ep[1], p.cr_evd, &rsp),
	      DAT_INVALID_STATE, DAT_INVALID_STATE_EP_RESERVED);
	connect_to(&p, p.ep[0], q, 0, NULL);
	ev = t_wait(p.cr_evd, DAT_CONNECTION_REQUEST_EVENT);
	cr_assert_eq(ev.event_data.cr_arrival_event_data.sp_handle.rsp_handle,
		     rsp);
	cr = ev.event_data.cr_arrival_event_data.cr_handle;
	T_OK(dat_cr_query(cr, DAT_CR_FIELD_ALL, &crp));
	cr_assert_eq(crp.local_ep_handle, p.ep[1]);
	cr_assert_eq(state_of(p.ep[1]),
		     DAT_EP_STATE_PASSIVE_CONNECTION_PENDING);

	/* the RSP took its one request: the next is refused */
	T_OK(dat_ep_create(p.t.ia, p.t.pz, p.recv[0], p.req[0], p.conn[0], NULL,
			   &extra));
	connect_to(&p, extra, q, 0, NULL);
	T_OK(dat_evd_wait(p.conn[0], T_TIMEOUT_US, 1, &ev, NULL));
	/* refused by the provider: the CM reports it as the peer's refusal */
	cr_assert(ev.event_number == DAT_CONNECTION_EVENT_NON_PEER_REJECTED ||
			  ev.event_number == DAT_CONNECTION_EVENT_PEER_REJECTED,
		  "event 0x%x", ev.event_number);
	cr_assert_eq(ev.event_data.connect_event_data.ep_handle, extra);

	T_OK(dat_cr_accept(cr, NULL, 0, NULL));
	t_wait(p.conn[0], DAT_CONNECTION_EVENT_ESTABLISHED);
	t_wait(p.conn[1], DAT_CONNECTION_EVENT_ESTABLISHED);
	T_OK(dat_rsp_free(rsp));
	T_ERR(dat_rsp_free(NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_RSP);
	T_OK(dat_ep_free(extra));
	T_OK(dat_psp_create(p.t.ia, q, p.cr_evd, DAT_PSP_CONSUMER_FLAG,
			    &p.psp));
	t_pair_teardown(&p);
}

Test(dat_ep, rsp_free_gives_ep_back)
{
	DAT_RSP_HANDLE rsp;
	struct t_pair p;

	t_pair_setup(&p, NULL);
	/* a qualifier nobody uses: the PSP's (the next one up may be any
	 * other socket's) */
	T_OK(dat_psp_free(p.psp));
	T_OK(dat_rsp_create(p.t.ia, p.qual, p.ep[1], p.cr_evd, &rsp));
	T_OK(dat_rsp_free(rsp));
	cr_assert_eq(state_of(p.ep[1]), DAT_EP_STATE_UNCONNECTED);
	T_ERR(dat_rsp_create(p.t.ia, p.qual, p.t.pz, p.cr_evd, &rsp),
	      DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	T_OK(dat_psp_create(p.t.ia, p.qual, p.cr_evd, DAT_PSP_CONSUMER_FLAG,
			    &p.psp));
	t_pair_teardown(&p);
}

Test(dat_ep, handoff)
{
	DAT_PSP_HANDLE psp2;
	DAT_EVD_HANDLE cr2;
	DAT_CONN_QUAL q2;
	DAT_CR_HANDLE cr;
	DAT_EVENT ev;
	struct t_pair p;

	t_pair_setup(&p, NULL);
	T_OK(dat_evd_create(p.t.ia, 4, NULL, DAT_EVD_CR_FLAG, &cr2));
	T_OK(dat_psp_create_any(p.t.ia, &q2, cr2, DAT_PSP_CONSUMER_FLAG,
				&psp2));
	connect_to(&p, p.ep[0], p.qual, 0, NULL);
	cr = next_cr(p.cr_evd, p.psp);
	T_ERR(dat_cr_handoff(cr, q2 + 7), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG2);
	T_OK(dat_cr_handoff(cr, q2));
	ev = t_wait(cr2, DAT_CONNECTION_REQUEST_EVENT);
	cr_assert_eq(ev.event_data.cr_arrival_event_data.sp_handle.psp_handle,
		     psp2);
	cr_assert_eq(ev.event_data.cr_arrival_event_data.conn_qual, q2);
	T_OK(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle,
			   p.ep[1], 0, NULL));
	t_wait(p.conn[0], DAT_CONNECTION_EVENT_ESTABLISHED);
	t_wait(p.conn[1], DAT_CONNECTION_EVENT_ESTABLISHED);
	T_OK(dat_psp_free(psp2));
	T_OK(dat_evd_free(cr2));
	t_pair_teardown(&p);
}

Test(dat_ep, csp_and_common_connect)
{
	struct sockaddr_storage addr;
	DAT_CSP_PARAM param;
	DAT_CSP_HANDLE csp;
	DAT_COMM comm = { 0, SOCK_STREAM, 0 }, bad;
	DAT_EVENT ev;
	struct t_pair p;

	t_pair_setup(&p, NULL);
	memset(&addr, 0, sizeof(addr));
	memcpy(&addr, p.t.attr.ia_address_ptr,
	       p.t.attr.ia_address_ptr->sa_family == AF_INET6 ?
		       sizeof(struct sockaddr_in6) :
		       sizeof(struct sockaddr_in));
	comm.domain = addr.ss_family;
	/* port 0: the CM picks one, which the query tells */
	T_OK(dat_csp_create(p.t.ia, &comm, (DAT_IA_ADDRESS_PTR)&addr, p.cr_evd,
			    &csp));
	T_OK(dat_csp_query(csp, DAT_CSP_FIELD_ALL, &param));
	cr_assert_eq(param.evd_handle, p.cr_evd);
	cr_assert_eq(param.comm->type, SOCK_STREAM);
	T_OK(dat_ep_common_connect(p.ep[0], param.address_ptr, T_TIMEOUT_US, 0,
				   NULL));
	ev = t_wait(p.cr_evd, DAT_CONNECTION_REQUEST_EVENT);
	cr_assert_eq(ev.event_data.cr_arrival_event_data.sp_handle.csp_handle,
		     csp);
	T_OK(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle,
			   p.ep[1], 0, NULL));
	t_wait(p.conn[0], DAT_CONNECTION_EVENT_ESTABLISHED);
	t_wait(p.conn[1], DAT_CONNECTION_EVENT_ESTABLISHED);
	bad = comm;
	bad.type = SOCK_DGRAM;
	T_ERR(dat_csp_create(p.t.ia, &bad, (DAT_IA_ADDRESS_PTR)&addr, p.cr_evd,
			     &csp),
	      DAT_COMM_NOT_SUPPORTED, -1);
	T_ERR(dat_csp_create(p.t.ia, NULL, (DAT_IA_ADDRESS_PTR)&addr, p.cr_evd,
			     &csp),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	T_ERR(dat_csp_create(p.t.ia, &comm, param.address_ptr, p.cr_evd, &csp),
	      DAT_PORT_IN_USE, -1);
	T_ERR(dat_ep_common_connect(p.ep[0], (DAT_IA_ADDRESS_PTR)&addr, 0, 0,
				    NULL),
	      DAT_INVALID_ADDRESS, DAT_INVALID_ADDRESS_MALFORMED);
	T_ERR(dat_csp_query(csp, DAT_CSP_FIELD_ALL, NULL),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	T_OK(dat_csp_free(csp));
	t_pair_teardown(&p);
}

Test(dat_ep, dup_connect)
{
	DAT_EP_HANDLE ep2, ep3;
	DAT_CR_HANDLE cr;
	struct t_pair p;

	t_pair_setup(&p, NULL);
	T_OK(dat_ep_create(p.t.ia, p.t.pz, p.recv[0], p.req[0], p.conn[0], NULL,
			   &ep2));
	T_OK(dat_ep_create(p.t.ia, p.t.pz, p.recv[1], p.req[1], p.conn[1], NULL,
			   &ep3));
	/* the original must be connected */
	T_ERR(dat_ep_dup_connect(ep2, p.ep[0], 0, 0, NULL, DAT_QOS_BEST_EFFORT),
	      DAT_INVALID_STATE, DAT_INVALID_STATE_EP_UNCONNECTED);
	t_pair_connect(&p);
	T_ERR(dat_ep_dup_connect(ep2, NULL, 0, 0, NULL, DAT_QOS_BEST_EFFORT),
	      DAT_INVALID_HANDLE, DAT_INVALID_HANDLE2);
	T_OK(dat_ep_dup_connect(ep2, p.ep[0], T_TIMEOUT_US, 0, NULL,
				DAT_QOS_BEST_EFFORT));
	cr = next_cr(p.cr_evd, p.psp);
	T_OK(dat_cr_accept(cr, ep3, 0, NULL));
	t_wait(p.conn[0], DAT_CONNECTION_EVENT_ESTABLISHED);
	t_wait(p.conn[1], DAT_CONNECTION_EVENT_ESTABLISHED);
	cr_assert_eq(state_of(ep2), DAT_EP_STATE_CONNECTED);
	T_OK(dat_ep_free(ep2));
	T_OK(dat_ep_free(ep3));
	t_pair_teardown(&p);
}

Test(dat_ep, disconnect_pending_connect)
{
	DAT_CR_HANDLE cr;
	DAT_EVENT ev;
	struct t_pair p;

	t_pair_setup(&p, NULL);
	connect_to(&p, p.ep[0], p.qual, 0, NULL);
	cr = next_cr(p.cr_evd, p.psp);
	/* nobody accepts: the consumer gives up */
	T_OK(dat_ep_disconnect(p.ep[0], DAT_CLOSE_ABRUPT_FLAG));
	ev = t_wait(p.conn[0], DAT_CONNECTION_EVENT_DISCONNECTED);
	cr_assert_eq(ev.event_data.connect_event_data.ep_handle, p.ep[0]);
	cr_assert_eq(state_of(p.ep[0]), DAT_EP_STATE_DISCONNECTED);
	T_OK(dat_ep_reset(p.ep[0]));
	/* the request stays until the consumer answers it */
	T_OK(dat_cr_reject(cr, 0, NULL));
	t_empty(p.conn[0]);
	t_pair_teardown(&p);
}

Test(dat_ep, connect_timeout)
{
	DAT_CR_HANDLE cr;
	DAT_EVENT ev;
	struct t_pair p;

	t_pair_setup(&p, NULL);
	/* nobody accepts within 50 ms */
	T_OK(dat_ep_connect(p.ep[0], p.t.attr.ia_address_ptr, p.qual, 50000, 0,
			    NULL, DAT_QOS_BEST_EFFORT,
			    DAT_CONNECT_DEFAULT_FLAG));
	cr = next_cr(p.cr_evd, p.psp);
	ev = t_wait(p.conn[0], DAT_CONNECTION_EVENT_TIMED_OUT);
	cr_assert_eq(ev.event_data.connect_event_data.ep_handle, p.ep[0]);
	cr_assert_eq(state_of(p.ep[0]), DAT_EP_STATE_DISCONNECTED);
	T_ERR(dat_ep_post_send(p.ep[0], 0, NULL, t_cookie(1),
			       DAT_COMPLETION_DEFAULT_FLAG),
	      DAT_INVALID_STATE, DAT_INVALID_STATE_EP_DISCONNECTED);
	/* a late accept does not revive the attempt */
	T_OK(dat_cr_accept(cr, p.ep[1], 0, NULL));
	T_OK(dat_evd_wait(p.conn[1], T_TIMEOUT_US, 1, &ev, NULL));
	t_empty(p.conn[0]);
	cr_assert_eq(state_of(p.ep[0]), DAT_EP_STATE_DISCONNECTED);
	T_OK(dat_ep_disconnect(p.ep[0], DAT_CLOSE_ABRUPT_FLAG));
	T_OK(dat_ep_reset(p.ep[0]));
	if (ev.event_number == DAT_CONNECTION_EVENT_ESTABLISHED)
		t_wait(p.conn[1], DAT_CONNECTION_EVENT_DISCONNECTED);
	T_OK(dat_ep_reset(p.ep[1]));
	/* a timer that does not expire leaves the connection alone */
	t_pair_connect(&p);
	T_OK(dat_ep_disconnect(p.ep[0], DAT_CLOSE_GRACEFUL_FLAG));
	t_wait(p.conn[0], DAT_CONNECTION_EVENT_DISCONNECTED);
	t_wait(p.conn[1], DAT_CONNECTION_EVENT_DISCONNECTED);
	/* timeout 0: the attempt is over at once */
	T_OK(dat_ep_reset(p.ep[0]));
	T_OK(dat_ep_connect(p.ep[0], p.t.attr.ia_address_ptr, p.qual, 0, 0,
			    NULL, DAT_QOS_BEST_EFFORT,
			    DAT_CONNECT_DEFAULT_FLAG));
	t_wait(p.conn[0], DAT_CONNECTION_EVENT_TIMED_OUT);
	T_OK(dat_cr_reject(next_cr(p.cr_evd, p.psp), 0, NULL));
	t_empty(p.conn[0]);
	t_pair_teardown(&p);
}

Test(dat_ep, recv_query_and_watermark)
{
	DAT_COUNT n, span;
	DAT_LMR_TRIPLET s;
	struct t_pair p;

	t_pair_setup(&p, NULL);
	s = t_seg(&p.mem[1], 0, 100);
	T_OK(dat_ep_post_recv(p.ep[1], 1, &s, t_cookie(1),
			      DAT_COMPLETION_DEFAULT_FLAG));
	T_OK(dat_ep_post_recv(p.ep[1], 1, &s, t_cookie(2),
			      DAT_COMPLETION_DEFAULT_FLAG));
	T_OK(dat_ep_recv_query(p.ep[1], &n, &span));
	cr_assert_eq(n, 2);
	cr_assert_eq(span, 200);
	T_OK(dat_ep_recv_query(p.ep[1], NULL, NULL));
	/* watermarks belong to EPs on an SRQ */
	T_ERR(dat_ep_set_watermark(p.ep[1], 4, 8), DAT_INVALID_STATE,
	      DAT_INVALID_STATE_EP_RECV_WATERMARK);
	T_ERR(dat_ep_recv_query(NULL, &n, &span), DAT_INVALID_HANDLE,
	      DAT_INVALID_HANDLE_EP);
	/* reset forgets what was posted */
	t_pair_connect(&p);
	T_OK(dat_ep_disconnect(p.ep[0], DAT_CLOSE_ABRUPT_FLAG));
	t_wait(p.conn[1], DAT_CONNECTION_EVENT_DISCONNECTED);
	T_OK(dat_ep_reset(p.ep[1]));
	T_OK(dat_ep_recv_query(p.ep[1], &n, &span));
	cr_assert_eq(n, 0);
	t_pair_teardown(&p);
}
