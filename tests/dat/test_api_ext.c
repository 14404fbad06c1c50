/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The InfiniBand extension through dat_extension_op(): atomics, RDMA
 * write with immediate data, UD endpoints and address handles, counters,
 * open-and-query, and what is not implemented.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tests/dat/test_api_common.h"

static DAT_IB_EXTENSION_EVENT_DATA *ext_of(DAT_EVENT *ev)
{
	return (DAT_IB_EXTENSION_EVENT_DATA *)ev->event_extension_data;
}

static DAT_EVENT ext_wait(DAT_EVD_HANDLE evd)
{
	DAT_EVENT ev;

	T_OK(dat_evd_wait(evd, T_TIMEOUT_US, 1, &ev, NULL));
	cr_assert_eq(ev.event_number, (DAT_EVENT_NUMBER)DAT_IB_DTO_EVENT,
		     "event 0x%x", ev.event_number);
	return ev;
}

Test(dat_ext, atomics)
{
	DAT_LMR_TRIPLET l;
	DAT_RMR_TRIPLET r;
	DAT_EVENT ev;
	uint64_t *target, *result;
	struct t_pair p;

	t_pair_setup(&p, NULL);
	if (!t_pattr_true(&p.t, DAT_IB_ATTR_FETCH_AND_ADD)) {
		t_pair_teardown(&p);
		cr_skip_test("%s has no atomics", t_iface());
	}
	t_pair_connect(&p);
	target = (uint64_t *)(void *)(p.mem[1].buf + 64);
	result = (uint64_t *)(void *)p.mem[0].buf;
	*target = 40;
	l = t_seg(&p.mem[0], 0, 8);
	r = t_rseg(&p.mem[1], 64, 8);
	T_OK(dat_ib_post_fetch_and_add(p.ep[0], 2, &l, t_cookie(1), &r,
				       DAT_COMPLETION_DEFAULT_FLAG));
	ev = ext_wait(p.req[0]);
	cr_assert_eq(ev.event_data.dto_completion_event_data.operation,
		     (DAT_DTOS)DAT_IB_DTO_FETCH_ADD);
	cr_assert_eq(ev.event_data.dto_completion_event_data.status,
		     DAT_DTO_SUCCESS);
	cr_assert_eq(ext_of(&ev)->type, DAT_IB_FETCH_AND_ADD);
	cr_assert_eq(*result, 40);
	cr_assert_eq(*target, 42);

	T_OK(dat_ib_post_cmp_and_swap(p.ep[0], 42, 7, &l, t_cookie(2), &r,
				      DAT_COMPLETION_DEFAULT_FLAG));
	ev = ext_wait(p.req[0]);
	cr_assert_eq(ext_of(&ev)->type, DAT_IB_CMP_AND_SWAP);
	cr_assert_eq(ev.event_data.dto_completion_event_data.user_cookie.as_64,
		     2);
	cr_assert_eq(*result, 42);
	cr_assert_eq(*target, 7);
	/* no swap when the compare fails */
	T_OK(dat_ib_post_cmp_and_swap(p.ep[0], 1, 99, &l, t_cookie(3), &r,
				      DAT_COMPLETION_DEFAULT_FLAG));
	ext_wait(p.req[0]);
	cr_assert_eq(*result, 7);
	cr_assert_eq(*target, 7);

	l.segment_length = 4;
	T_ERR(dat_ib_post_fetch_and_add(p.ep[0], 1, &l, t_cookie(4), &r,
					DAT_COMPLETION_DEFAULT_FLAG),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	T_ERR(dat_ib_post_fetch_and_add(p.t.pz, 1, &l, t_cookie(4), &r,
					DAT_COMPLETION_DEFAULT_FLAG),
	      DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	t_pair_teardown(&p);
}

Test(dat_ext, rdma_write_immed)
{
	DAT_LMR_TRIPLET l, rcv;
	DAT_RMR_TRIPLET r;
	DAT_EVENT ev;
	struct t_pair p;

	t_pair_setup(&p, NULL);
	t_pair_connect(&p);
	strcpy(p.mem[0].buf, "with immediate");
	l = t_seg(&p.mem[0], 0, 15);
	r = t_rseg(&p.mem[1], 1000, 15);
	if (!t_pattr_true(&p.t, DAT_IB_ATTR_IMMED_DATA)) {
		/* iWARP has none: refused as such, not as malformed */
		T_ERR(dat_ib_post_rdma_write_immed(p.ep[0], 1, &l, t_cookie(51),
						   &r, 1,
						   DAT_COMPLETION_DEFAULT_FLAG),
		      DAT_MODEL_NOT_SUPPORTED, -1);
		t_pair_teardown(&p);
		cr_skip_test("%s has no immediate data", t_iface());
	}
	rcv = t_seg(&p.mem[1], 0, 16);
	T_OK(dat_ep_post_recv(p.ep[1], 1, &rcv, t_cookie(50),
			      DAT_COMPLETION_DEFAULT_FLAG));
	T_OK(dat_ib_post_rdma_write_immed(p.ep[0], 1, &l, t_cookie(51), &r,
					  0x12345678,
					  DAT_COMPLETION_DEFAULT_FLAG));
	ev = ext_wait(p.req[0]);
	cr_assert_eq(ext_of(&ev)->type, DAT_IB_RDMA_WRITE_IMMED);
	cr_assert_eq(ev.event_data.dto_completion_event_data.operation,
		     (DAT_DTOS)DAT_IB_DTO_RDMA_WRITE_IMMED);
	ev = ext_wait(p.recv[1]);
	cr_assert_eq(ext_of(&ev)->type, DAT_IB_RDMA_WRITE_IMMED_DATA);
	cr_assert_eq(ext_of(&ev)->val.immed.data, 0x12345678);
	cr_assert_eq(ev.event_data.dto_completion_event_data.operation,
		     (DAT_DTOS)DAT_IB_DTO_RECV_IMMED);
	cr_assert_eq(ev.event_data.dto_completion_event_data.user_cookie.as_64,
		     50);
	cr_assert_str_eq(p.mem[1].buf + 1000, "with immediate");
	T_ERR(dat_ib_post_rdma_write_immed(p.ep[0], 1, &l, t_cookie(52), NULL,
					   1, DAT_COMPLETION_DEFAULT_FLAG),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG5);
	t_pair_teardown(&p);
}

Test(dat_ext, counters)
{
	DAT_UINT64 all[DCNT_EP_ALL_COUNTERS], one, ia[DCNT_IA_ALL_COUNTERS];
	DAT_LMR_TRIPLET l;
	DAT_RMR_TRIPLET r;
	struct t_pair p;

	t_pair_setup(&p, NULL);
	t_pair_connect(&p);
	l = t_seg(&p.mem[0], 0, 100);
	r = t_rseg(&p.mem[1], 0, 100);
	T_OK(dat_ep_post_rdma_write(p.ep[0], 1, &l, t_cookie(1), &r,
				    DAT_COMPLETION_DEFAULT_FLAG));
	t_dto(p.req[0], DAT_DTO_SUCCESS);
	T_OK(dat_ib_query_counters(p.ep[0], DCNT_EP_ALL_COUNTERS, all, 0));
	cr_assert_eq(all[DCNT_EP_POST_WRITE], 1);
	cr_assert_eq(all[DCNT_EP_POST_WRITE_DATA], 100);
	cr_assert_eq(all[DCNT_EP_CONNECT], 1);
	T_OK(dat_ib_query_counters(p.ep[0], DCNT_EP_POST_WRITE, &one, 1));
	cr_assert_eq(one, 1);
	T_OK(dat_ib_query_counters(p.ep[0], DCNT_EP_POST_WRITE, &one, 0));
	cr_assert_eq(one, 0);
	T_OK(dat_ib_query_counters(p.t.ia, DCNT_IA_ALL_COUNTERS, ia, 0));
	cr_assert_geq(ia[DCNT_IA_EP_CREATE], 2);
	cr_assert_geq(ia[DCNT_IA_LMR_CREATE], 2);
	cr_assert_geq(ia[DCNT_IA_CM_LISTEN], 1);
	T_OK(dat_ib_query_counters(p.req[0], DCNT_EVD_WAIT, &one, 0));
	cr_assert_geq(one, 1);
	T_OK(dat_ib_print_counters(p.ep[0], DCNT_EP_ALL_COUNTERS, 0));
	T_OK(dat_ib_start_counter(p.t.ia, DCNT_IA_CM));
	T_OK(dat_ib_stop_counter(p.t.ia, DCNT_IA_CM));
	T_ERR(dat_ib_query_counters(p.t.pz, 0, &one, 0), DAT_INVALID_HANDLE,
	      -1);
	T_ERR(dat_ib_query_counters(p.ep[0], DCNT_EP_ALL_COUNTERS + 1, &one, 0),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	T_ERR(dat_ib_query_counters(p.ep[0], 0, NULL, 0), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG4);
	/* an operation the extension does not define, bare as in DAPL */
	T_ERR(dat_extension_op(p.ep[0], (DAT_EXTENDED_OP)0x0fff),
	      DAT_NOT_IMPLEMENTED, DAT_NO_SUBTYPE);
	t_pair_teardown(&p);
}

Test(dat_ext, open_query_and_unimplemented)
{
	DAT_IA_ATTR attr;
	DAT_PROVIDER_ATTR pattr;
	DAT_HANDLE ia = NULL;
	struct t_ia t;

	T_OK(dat_ib_open_query(t_ia_name(), &ia, DAT_IA_FIELD_ALL, &attr,
			       DAT_PROVIDER_FIELD_ALL, &pattr));
	cr_assert_not_null(ia);
	cr_assert_str_eq(attr.adapter_name, t_iface());
	cr_assert_str_eq(pattr.provider_name, "OpenRDMA");
	T_OK(dat_ib_close_query(ia));
	T_ERR(dat_ib_close_query(ia), DAT_INVALID_HANDLE, -1);
	T_ERR(dat_ib_open_query(NULL, &ia, 0, NULL, 0, NULL),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG1);

	/* collectives need an offloading fabric */
	t_ia_open(&t);
	cr_assert_eq(dat_ib_collective_barrier(
			     (DAT_IB_COLLECTIVE_HANDLE)t.async, t_cookie(0),
			     DAT_COMPLETION_DEFAULT_FLAG),
		     DAT_NOT_IMPLEMENTED);
	cr_assert_eq(dat_extension_op(t.ia, 0x777), DAT_NOT_IMPLEMENTED);
	t_ia_close(&t);
}

/* UD: address resolution through a connect, then datagrams both ways. */
Test(dat_ext, ud_endpoints)
{
	DAT_IB_ADDR_HANDLE to_server, to_client;
	DAT_EP_ATTR attr;
	DAT_EP_HANDLE ud[2];
	DAT_LMR_TRIPLET l, r;
	DAT_CR_HANDLE cr;
	DAT_EVENT ev;
	struct t_pair p;
	int id = 7;
	int i;

	t_pair_setup(&p, NULL);
	if (!t_pattr_true(&p.t, DAT_IB_ATTR_UD)) {
		t_pair_teardown(&p);
		cr_skip_test("%s has no UD", t_iface());
	}
	memset(&attr, 0, sizeof(attr));
	attr.service_type = (DAT_SERVICE_TYPE)DAT_IB_SERVICE_TYPE_UD;
	attr.max_message_size = 1024;
	attr.max_recv_dtos = 8;
	attr.max_request_dtos = 8;
	attr.max_recv_iov = 1;
	attr.max_request_iov = 1;
	for (i = 0; i < 2; i++)
		T_OK(dat_ep_create(p.t.ia, p.t.pz, p.recv[i], p.req[i],
				   p.conn[i], &attr, &ud[i]));
	/* a UD EP posts no RC operations */
	l = t_seg(&p.mem[0], 0, 16);
	T_ERR(dat_ep_post_send(ud[0], 1, &l, t_cookie(1),
			       DAT_COMPLETION_DEFAULT_FLAG),
	      DAT_MODEL_NOT_SUPPORTED, -1);

	T_OK(dat_ep_connect(ud[0], p.t.attr.ia_address_ptr, p.qual,
			    T_TIMEOUT_US, (DAT_COUNT)sizeof(id), &id,
			    DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
	ev = t_wait(p.cr_evd, DAT_CONNECTION_REQUEST_EVENT);
	cr = ev.event_data.cr_arrival_event_data.cr_handle;
	id = 9;
	T_OK(dat_cr_accept(cr, ud[1], (DAT_COUNT)sizeof(id), &id));
	ev = t_wait(p.conn[1],
		    (DAT_EVENT_NUMBER)DAT_IB_UD_CONNECTION_EVENT_ESTABLISHED);
	cr_assert_eq(ext_of(&ev)->type, DAT_IB_UD_PASSIVE_REMOTE_AH);
	cr_assert_eq(*(int *)ev.event_data.connect_event_data.private_data, 7);
	to_client = ext_of(&ev)->remote_ah;
	ev = t_wait(p.conn[0],
		    (DAT_EVENT_NUMBER)DAT_IB_UD_CONNECTION_EVENT_ESTABLISHED);
	cr_assert_eq(ext_of(&ev)->type, DAT_IB_UD_REMOTE_AH);
	cr_assert_eq(*(int *)ev.event_data.connect_event_data.private_data, 9);
	to_server = ext_of(&ev)->remote_ah;
	T_OK(dat_ib_ud_cm_free(ud[0], ext_of(&ev)->context));

	/* a receive buffer holds the 40-byte GRH first */
	r = t_seg(&p.mem[1], 0, 40 + 64);
	T_OK(dat_ib_post_recv_ud(ud[1], 1, &r, t_cookie(20),
				 DAT_COMPLETION_DEFAULT_FLAG));
	strcpy(p.mem[0].buf, "datagram");
	l = t_seg(&p.mem[0], 0, 9);
	T_OK(dat_ib_post_send_ud(ud[0], 1, &l, &to_server, t_cookie(21),
				 DAT_COMPLETION_DEFAULT_FLAG));
	ev = ext_wait(p.req[0]);
	cr_assert_eq(ext_of(&ev)->type, DAT_IB_UD_SEND);
	cr_assert_eq(ev.event_data.dto_completion_event_data.operation,
		     (DAT_DTOS)DAT_IB_DTO_SEND_UD);
	ev = ext_wait(p.recv[1]);
	cr_assert_eq(ext_of(&ev)->type, DAT_IB_UD_RECV);
	cr_assert_eq(ev.event_data.dto_completion_event_data.operation,
		     (DAT_DTOS)DAT_IB_DTO_RECV_UD);
	cr_assert_eq(ev.event_data.dto_completion_event_data.transfered_length,
		     40 + 9);
	cr_assert_str_eq(p.mem[1].buf + 40, "datagram");

	/* and back */
	r = t_seg(&p.mem[0], 1000, 40 + 64);
	T_OK(dat_ep_post_recv(ud[0], 1, &r, t_cookie(30),
			      DAT_COMPLETION_DEFAULT_FLAG));
	l = t_seg(&p.mem[1], 40, 9);
	T_OK(dat_ib_post_send_ud(ud[1], 1, &l, &to_client, t_cookie(31),
				 DAT_COMPLETION_DEFAULT_FLAG));
	ext_wait(p.req[1]);
	ext_wait(p.recv[0]);
	cr_assert_str_eq(p.mem[0].buf + 1040, "datagram");

	T_ERR(dat_ib_post_send_ud(ud[0], 1, &l, NULL, t_cookie(32),
				  DAT_COMPLETION_DEFAULT_FLAG),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);
	T_OK(dat_ib_ud_ah_free(ud[0], &to_server));
	T_ERR(dat_ib_post_send_ud(ud[0], 1, &l, &to_server, t_cookie(33),
				  DAT_COMPLETION_DEFAULT_FLAG),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);
	T_ERR(dat_ib_ud_ah_free(ud[0], &to_server), DAT_INVALID_PARAMETER, -1);
	T_OK(dat_ep_free(ud[0]));
	T_OK(dat_ep_free(ud[1]));
	t_pair_teardown(&p);
}
