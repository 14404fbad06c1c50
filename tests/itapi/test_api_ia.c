/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Interfaces and IAs, addresses and paths, the calls that take any
 * handle, endpoint creation checks, and the abrupt it_ia_free().
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>

#include "tests/itapi/test_api.h"

TestSuite(itapi_ia, .timeout = 60);

static struct tapi t;

static void setup(void)
{
	tapi_open(&t);
}

static void teardown(void)
{
	tapi_close(&t);
}

Test(itapi_ia, interface_list)
{
	it_interface_t ifs[16];
	size_t num = 16, total = 0, i, all;
	bool found = false;

	it_interface_list(ifs, &num, &total);
	cr_assert_geq(total, num);
	for (i = 0; i < num; i++) {
		cr_assert_eq(ifs[i].major_version, 2);
		cr_assert_eq(ifs[i].minor_version, 1);
		if (!strcmp(ifs[i].name, tapi_interface()))
			found = true;
	}
	if (!found)
		cr_skip_test("%s is not listed", tapi_interface());
	/* a short array: as many as fit, and the total */
	all = total;
	num = 0;
	it_interface_list(NULL, &num, &total);
	cr_assert_eq(num, 0);
	cr_assert_eq(total, all);
	/* NULL counts: nothing happens, nothing crashes */
	it_interface_list(ifs, NULL, &total);
	it_interface_list(ifs, &num, NULL);
}

Test(itapi_ia, create_arguments)
{
	it_ia_handle_t ia = (it_ia_handle_t)0x1;
	char longname[IT_INTERFACE_NAME_SIZE + 8];

	memset(longname, 'x', sizeof(longname));
	longname[sizeof(longname) - 1] = 0;
	cr_assert_eq(it_ia_create(NULL, 2, 1, &ia), IT_ERR_INVALID_NAME);
	cr_assert_eq(it_ia_create("", 2, 1, &ia), IT_ERR_INVALID_NAME);
	cr_assert_eq(it_ia_create(longname, 2, 1, &ia), IT_ERR_INVALID_NAME);
	cr_assert_eq(it_ia_create("no-such-interface9", 2, 1, &ia),
		     IT_ERR_INVALID_NAME);
	cr_assert_eq(it_ia_create(tapi_interface(), 1, 0, &ia),
		     IT_ERR_INVALID_MAJOR_VERSION);
	cr_assert_eq(it_ia_create(tapi_interface(), 3, 0, &ia),
		     IT_ERR_INVALID_MAJOR_VERSION);
	cr_assert_eq(it_ia_create(tapi_interface(), 2, 2, &ia),
		     IT_ERR_INVALID_MINOR_VERSION);
	cr_assert_eq(it_ia_create(tapi_interface(), 2, 0, NULL), IT_ERR_FAULT);
	cr_assert_eq(ia, (it_ia_handle_t)0x1);
	/* 2.0 consumers are served too */
	cr_assert_eq(it_ia_create(tapi_interface(), 2, 0, &ia), IT_SUCCESS);
	cr_assert_eq(it_ia_free(ia), IT_SUCCESS);
	cr_assert_eq(it_ia_free(TAPI_BOGUS), IT_ERR_INVALID_IA);
	cr_assert_eq(it_ia_free(NULL), IT_ERR_INVALID_IA);
}

Test(itapi_ia, query, .init = setup, .fini = teardown)
{
	it_ia_info_t *info = t.info, *keep = (it_ia_info_t *)0x1;
	const it_spigot_info_t *sp;

	cr_assert_str_eq(info->ia_name, tapi_interface());
	cr_assert_eq(info->api_major_version, 2);
	cr_assert_eq(info->api_minor_version, 1);
	cr_assert(info->supported_service_types & IT_RC_SERVICE);
	cr_assert_geq(info->num_spigots, 1);
	sp = &info->spigot_info[0];
	cr_assert_eq(sp->spigot_id, 0);
	cr_assert_eq(sp->spigot_online, IT_TRUE);
	cr_assert_gt(sp->max_rc_send_len, 0);
	cr_assert(sp->passive_side_conn_qual & IT_IANA_PORT);
	cr_assert_geq(sp->num_net_addr, 1);
	cr_assert(sp->net_addr[0].addr_type == IT_IPV4 ||
		  sp->net_addr[0].addr_type == IT_IPV6);
	cr_assert_leq(info->connect_private_data_len, IT_MAX_PRIV_DATA);
	cr_assert_leq(info->accept_private_data_len, IT_MAX_PRIV_DATA);
	cr_assert_leq(info->reject_private_data_len, IT_MAX_PRIV_DATA);
	cr_assert_leq(info->disconnect_private_data_len, IT_MAX_PRIV_DATA);
	cr_assert_eq(info->affiliated_err_evd, NULL);
	cr_assert_eq(info->unaffiliated_err_evd, NULL);
	cr_assert_eq(info->lmr_link_support, IT_TRUE);
	cr_assert_eq(info->iobl_types_supported, 0);
	cr_assert_eq(it_ia_query(TAPI_BOGUS, &keep), IT_ERR_INVALID_IA);
	cr_assert_eq(it_ia_query(t.ia, NULL), IT_ERR_FAULT);
	cr_assert_eq(keep, (it_ia_info_t *)0x1);
	it_ia_info_free(NULL);
}

Test(itapi_ia, pathinfo, .init = setup, .fini = teardown)
{
	it_net_addr_t na = t.info->spigot_info[0].net_addr[0], bad;
	it_path_t paths[2];
	size_t num = 2, total = 0;

	cr_assert_eq(it_get_pathinfo(t.ia, 0, &na, &num, &total, paths),
		     IT_SUCCESS);
	cr_assert_eq(num, 1);
	cr_assert_eq(total, 1);
	cr_assert_eq(paths[0].spigot_id, 0);
	num = 0;
	cr_assert_eq(it_get_pathinfo(t.ia, 0, &na, &num, &total, NULL),
		     IT_SUCCESS);
	cr_assert_eq(num, 0);
	cr_assert_eq(total, 1);
	num = 1;
	cr_assert_eq(it_get_pathinfo(TAPI_BOGUS, 0, &na, &num, &total, paths),
		     IT_ERR_INVALID_IA);
	cr_assert_eq(it_get_pathinfo(t.ia, 4, &na, &num, &total, paths),
		     IT_ERR_INVALID_SPIGOT);
	cr_assert_eq(it_get_pathinfo(t.ia, 0, NULL, &num, &total, paths),
		     IT_ERR_INVALID_NETADDR);
	bad = na;
	bad.addr_type = IT_VIA_HOSTADDR;
	cr_assert_eq(it_get_pathinfo(t.ia, 0, &bad, &num, &total, paths),
		     IT_ERR_INVALID_NETADDR);
	cr_assert_eq(it_get_pathinfo(t.ia, 0, &na, NULL, &total, paths),
		     IT_ERR_FAULT);
	cr_assert_eq(it_get_pathinfo(t.ia, 0, &na, &num, &total, NULL),
		     IT_ERR_FAULT);
}

Test(itapi_ia, address_helpers)
{
	it_net_addr_t v4, v6, gid, out;
	uint64_t x = 0x0102030405060708ull;
	unsigned char bytes[8];
	int probe = 0;

	memset(&v4, 0, sizeof(v4));
	v4.addr_type = IT_IPV4;
	inet_pton(AF_INET, "10.1.2.3", &v4.addr.ipv4);
	cr_assert_eq(it_convert_net_addr(&v4, IT_IPV6, &v6), IT_SUCCESS);
	cr_assert_eq(v6.addr_type, IT_IPV6);
	cr_assert_eq(v6.addr.ipv6.s6_addr[10], 0xff);
	cr_assert_eq(v6.addr.ipv6.s6_addr[15], 3);
	cr_assert_eq(it_convert_net_addr(&v6, IT_IB_GID, &gid), IT_SUCCESS);
	cr_assert_eq(it_convert_net_addr(&gid, IT_IPV4, &out), IT_SUCCESS);
	cr_assert_eq(out.addr.ipv4.s_addr, v4.addr.ipv4.s_addr);
	inet_pton(AF_INET6, "fe80::1", &v6.addr.ipv6);
	out.addr_type = IT_IPV6;
	cr_assert_eq(it_convert_net_addr(&v6, IT_IPV4, &out),
		     IT_ERR_INVALID_CONVERSION);
	cr_assert_eq(out.addr_type, IT_IPV6);
	cr_assert_eq(it_convert_net_addr(&v4, IT_VIA_HOSTADDR, &out),
		     IT_ERR_INVALID_CONVERSION);
	cr_assert_eq(it_convert_net_addr(NULL, IT_IPV4, &out),
		     IT_ERR_INVALID_NETADDR);
	cr_assert_eq(it_convert_net_addr(&v4, IT_IPV6, NULL), IT_ERR_FAULT);

	memcpy(bytes, &(uint64_t){ it_hton64(x) }, 8);
	cr_assert_eq(bytes[0], 1);
	cr_assert_eq(bytes[7], 8);
	cr_assert_eq(it_ntoh64(it_hton64(x)), x);
	cr_assert_eq(it_make_rdma_addr_absolute(&probe),
		     (it_rdma_addr_t)(uintptr_t)&probe);
	cr_assert_eq(it_make_rdma_addr(&probe),
		     (it_rdma_addr_t)(uintptr_t)&probe);
	cr_assert_eq(it_make_rdma_addr_relative(4096), 4096);
}

Test(itapi_ia, handles_and_contexts, .init = setup, .fini = teardown)
{
	it_handle_type_enum_t type = (it_handle_type_enum_t)99;
	it_context_t ctx;
	int anchor;

	cr_assert_eq(it_get_handle_type(t.ia, &type), IT_SUCCESS);
	cr_assert_eq(type, IT_HANDLE_TYPE_IA);
	cr_assert_eq(it_get_handle_type(t.pz, &type), IT_SUCCESS);
	cr_assert_eq(type, IT_HANDLE_TYPE_PZ);
	cr_assert_eq(it_get_handle_type(t.sq, &type), IT_SUCCESS);
	cr_assert_eq(type, IT_HANDLE_TYPE_EVD);
	cr_assert_eq(it_get_handle_type(TAPI_BOGUS, &type),
		     IT_ERR_INVALID_HANDLE);
	cr_assert_eq(it_get_handle_type(NULL, &type), IT_ERR_INVALID_HANDLE);
	cr_assert_eq(it_get_handle_type(t.ia, NULL), IT_ERR_FAULT);

	cr_assert_eq(it_get_consumer_context(t.pz, &ctx), IT_ERR_NO_CONTEXT);
	ctx.ptr = &anchor;
	cr_assert_eq(it_set_consumer_context(t.pz, ctx), IT_SUCCESS);
	memset(&ctx, 0, sizeof(ctx));
	cr_assert_eq(it_get_consumer_context(t.pz, &ctx), IT_SUCCESS);
	cr_assert_eq(ctx.ptr, &anchor);
	ctx.index = 77;
	cr_assert_eq(it_set_consumer_context(t.ia, ctx), IT_SUCCESS);
	cr_assert_eq(it_get_consumer_context(t.ia, &ctx), IT_SUCCESS);
	cr_assert_eq(ctx.index, 77);
	cr_assert_eq(it_set_consumer_context(TAPI_BOGUS, ctx),
		     IT_ERR_INVALID_HANDLE);
	cr_assert_eq(it_get_consumer_context(TAPI_BOGUS, &ctx),
		     IT_ERR_INVALID_HANDLE);
	cr_assert_eq(it_get_consumer_context(t.ia, NULL), IT_ERR_FAULT);
}

Test(itapi_ia, ep_create_arguments, .init = setup, .fini = teardown)
{
	it_ep_attributes_t a = tapi_rc_attr(), b;
	it_ep_handle_t ep = (it_ep_handle_t)0x1;
	it_srq_handle_t srq = NULL;
	it_ep_param_t p;

	a.srv.rc.atomics_enable = IT_FALSE;
	cr_assert_eq(it_ep_rc_create(TAPI_BOGUS, t.sq, t.rq, t.cmsg, 0, &a,
				     &ep),
		     IT_ERR_INVALID_PZ);
	cr_assert_eq(it_ep_rc_create(t.pz, t.cmsg, t.rq, t.cmsg, 0, &a, &ep),
		     IT_ERR_INVALID_REQ_EVD);
	cr_assert_eq(it_ep_rc_create(t.pz, t.sq, t.creq, t.cmsg, 0, &a, &ep),
		     IT_ERR_INVALID_RECV_EVD);
	cr_assert_eq(it_ep_rc_create(t.pz, t.sq, t.rq, t.creq, 0, &a, &ep),
		     IT_ERR_INVALID_CONN_EVD);
	cr_assert_eq(it_ep_rc_create(t.pz, t.sq, t.rq, t.cmsg,
				     (it_ep_rc_creation_flags_t)0x40, &a, &ep),
		     IT_ERR_INVALID_FLAGS);
	cr_assert_eq(it_ep_rc_create(t.pz, t.sq, t.rq, t.cmsg, 0, NULL, &ep),
		     IT_ERR_INVALID_EP_ATTR);
	cr_assert_eq(it_ep_rc_create(t.pz, t.sq, t.rq, t.cmsg, 0, &a, NULL),
		     IT_ERR_FAULT);
	b = a;
	b.max_request_dtos = 0;
	cr_assert_eq(it_ep_rc_create(t.pz, t.sq, t.rq, t.cmsg, 0, &b, &ep),
		     IT_ERR_INVALID_EP_ATTR);
	b = a;
	b.max_request_dtos = (size_t)1 << 40;
	cr_assert_eq(it_ep_rc_create(t.pz, t.sq, t.rq, t.cmsg, 0, &b, &ep),
		     IT_ERR_RESOURCE_REQ_DTO);
	b = a;
	b.max_recv_dtos = (size_t)1 << 40;
	cr_assert_eq(it_ep_rc_create(t.pz, t.sq, t.rq, t.cmsg, 0, &b, &ep),
		     IT_ERR_RESOURCE_RECV_DTO);
	b = a;
	b.max_recv_segments = 1000;
	cr_assert_eq(it_ep_rc_create(t.pz, t.sq, t.rq, t.cmsg, 0, &b, &ep),
		     IT_ERR_RESOURCE_RSEG);
	b = a;
	b.srv.rc.max_rdma_read_segments = 1000;
	cr_assert_eq(it_ep_rc_create(t.pz, t.sq, t.rq, t.cmsg, 0, &b, &ep),
		     IT_ERR_RESOURCE_RRSEG);
	b = a;
	b.srv.rc.max_rdma_write_segments = 1000;
	cr_assert_eq(it_ep_rc_create(t.pz, t.sq, t.rq, t.cmsg, 0, &b, &ep),
		     IT_ERR_RESOURCE_RWSEG);
	b = a;
	b.srv.rc.rdma_read_ird = 100000;
	cr_assert_eq(it_ep_rc_create(t.pz, t.sq, t.rq, t.cmsg, 0, &b, &ep),
		     IT_ERR_RESOURCE_IRD);
	b = a;
	b.srv.rc.rdma_read_ord = 100000;
	cr_assert_eq(it_ep_rc_create(t.pz, t.sq, t.rq, t.cmsg, 0, &b, &ep),
		     IT_ERR_RESOURCE_ORD);
	b = a;
	b.priv_ops_enable = IT_TRUE;
	cr_assert_eq(it_ep_rc_create(t.pz, t.sq, t.rq, t.cmsg, 0, &b, &ep),
		     IT_ERR_PRIV_OPS_UNAVAILABLE);
	b = a;
	b.srv.rc.soft_hi_watermark = 4;
	cr_assert_eq(it_ep_rc_create(t.pz, t.sq, t.rq, t.cmsg, 0, &b, &ep),
		     IT_ERR_OP_NOT_SUPPORTED);
	b = a;
	b.srv.rc.srq = srq;
	cr_assert_eq(it_ep_rc_create(t.pz, t.sq, t.rq, t.cmsg, IT_EP_SRQ, &b,
				     &ep),
		     t.info->srq_support ? IT_ERR_INVALID_SRQ :
					   IT_ERR_SRQ_NOT_SUPPORTED);
	cr_assert_eq(ep, (it_ep_handle_t)0x1);

	cr_assert_eq(it_ep_rc_create(t.pz, t.sq, t.rq, t.cmsg, IT_EP_REUSEADDR,
				     &a, &ep),
		     IT_SUCCESS);
	cr_assert_eq(it_ep_query(ep, (it_ep_param_mask_t)0x40000000, NULL),
		     IT_ERR_INVALID_MASK);
	cr_assert_eq(it_ep_query(ep, IT_EP_PARAM_ALL, NULL), IT_ERR_FAULT);
	cr_assert_eq(it_ep_modify(ep, IT_EP_PARAM_MAX_REQ_DTO, &a),
		     IT_ERR_OP_NOT_SUPPORTED);
	cr_assert_eq(it_ep_modify(ep, IT_EP_PARAM_PZ, &a), IT_ERR_INVALID_MASK);
	cr_assert_eq(it_ep_modify(ep, IT_EP_PARAM_RDMA_RD_ENABLE, NULL),
		     IT_ERR_FAULT);
	a.srv.rc.rdma_read_enable = IT_FALSE;
	a.srv.rc.rdma_read_ord = 2;
	cr_assert_eq(it_ep_modify(ep,
				  IT_EP_PARAM_RDMA_RD_ENABLE |
					  IT_EP_PARAM_MAX_ORD,
				  &a),
		     IT_SUCCESS);
	cr_assert_eq(it_ep_query(ep, IT_EP_PARAM_ALL, &p), IT_SUCCESS);
	cr_assert_eq(p.attr.srv.rc.rdma_read_enable, IT_FALSE);
	cr_assert_eq(p.attr.srv.rc.rdma_read_ord, 2);
	cr_assert_eq(p.ep_state.rc, IT_EP_STATE_UNCONNECTED);
	cr_assert_eq(it_ep_query(TAPI_BOGUS, IT_EP_PARAM_ALL, NULL),
		     IT_ERR_INVALID_EP);
	cr_assert_eq(it_ep_modify(TAPI_BOGUS, IT_EP_PARAM_MAX_ORD, &a),
		     IT_ERR_INVALID_EP);
	cr_assert_eq(it_ep_reset(ep), IT_SUCCESS);
	cr_assert_eq(it_ep_reset(TAPI_BOGUS), IT_ERR_INVALID_EP);
	cr_assert_eq(it_ep_free(ep), IT_SUCCESS);
	cr_assert_eq(it_ep_free(TAPI_BOGUS), IT_ERR_INVALID_EP);
}

Test(itapi_ia, free_with_children)
{
	struct tapi_conn c;
	struct tapi_buf b;
	it_evd_handle_t aevd, member;
	it_rmr_handle_t rmr;

	/* everything at once, in use: it_ia_free() takes it all down */
	tapi_open(&t);
	tapi_connect(&t, &c, false);
	tapi_buf_make(&t, &b, 4096, IT_PRIV_ALL);
	tapi_post_recv(c.b, &b, 0, 64, 1);
	cr_assert_eq(it_evd_create(t.ia, IT_AEVD_NOTIFICATION_EVENT_STREAM, 0,
				   0, 0, NULL, &aevd, NULL),
		     IT_SUCCESS);
	cr_assert_eq(it_evd_create(t.ia, IT_SOFTWARE_EVENT_STREAM, 0, 4, 0,
				   aevd, &member, NULL),
		     IT_SUCCESS);
	cr_assert_eq(it_evd_post_se(member, NULL), IT_SUCCESS);
	if (t.info->rmr_types_supported) {
		cr_assert_eq(it_rmr_create10(t.pz, &rmr), IT_SUCCESS);
		cr_assert_eq(it_rmr_link(rmr, b.lmr, b.p, 64,
					 IT_ADDR_MODE_ABSOLUTE, IT_PRIV_REMOTE,
					 c.b, 0, 0, NULL),
			     IT_SUCCESS);
	}
	it_ia_info_free(t.info);
	cr_assert_eq(it_ia_free(t.ia), IT_SUCCESS);
	while (t.num_mem)
		free(t.mem[--t.num_mem]);
#ifdef OPENRDMA_DEBUG
	/* every child handle died with it */
	cr_assert_eq(it_ep_free(c.a), IT_ERR_INVALID_EP);
	cr_assert_eq(it_lmr_free(b.lmr), IT_ERR_INVALID_LMR);
	cr_assert_eq(it_evd_free(aevd), IT_ERR_INVALID_EVD);
	cr_assert_eq(it_pz_free(t.pz), IT_ERR_INVALID_PZ);
	cr_assert_eq(it_ia_free(t.ia), IT_ERR_INVALID_IA);
#endif
}
