/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The types of <it_api.h>: scalar widths, the common prefix of the event
 * structures, the null handle and the widths of the bit-fields.
 */
#include <string.h>

#include "itapi_test.h"

/* The standard's cookie is 64 bits, not a structure. */
ITAPI_BUILD_ASSERT(cookie_is_64_bits, sizeof(it_dto_cookie_t) == 8);
ITAPI_BUILD_ASSERT(cookie_is_integer, (it_dto_cookie_t)-1 > 0);

Test(itapi_layout, scalar_widths)
{
	cr_expect_eq(sizeof(it_dto_cookie_t), 8);
	cr_expect_eq(sizeof(it_rmr_context_t), 8);
	cr_expect_eq(sizeof(it_rdma_addr_t), 8);
	cr_expect_eq(sizeof(it_cn_est_identifier_t), 8);
	cr_expect_eq(sizeof(it_ud_svc_req_identifier_t), 8);
	cr_expect_eq(sizeof(it_ib_serviceid_t), 8);
	cr_expect_eq(sizeof(it_ud_ep_id_t), 4);
	cr_expect_eq(sizeof(it_ud_ep_key_t), 4);
	cr_expect_eq(sizeof(it_ib_gid_t), 16);
	cr_expect_eq(sizeof(((it_context_t *)0)->index), 8);
	/* it_length_t is as wide as an address (IT_32BIT otherwise). */
	cr_expect_eq(sizeof(it_length_t), sizeof(void *));
}

/* Where a member of it_event_t keeps its event number and EVD. */
struct itapi_prefix {
	const char *name;
	size_t number_off;
	size_t evd_off;
	size_t size;
};

#define ITAPI_PREFIX(type, evd)                                            \
	{                                                                  \
		.name = #type, .number_off = offsetof(type, event_number), \
		.evd_off = offsetof(type, evd), .size = sizeof(type)       \
	}

static const struct itapi_prefix prefixes[] = {
	ITAPI_PREFIX(it_any_event_t, evd),
	ITAPI_PREFIX(it_dto_cmpl_event_t, evd),
	ITAPI_PREFIX(it_all_dto_cmpl_event_t, evd),
	ITAPI_PREFIX(it_conn_request_event_t, evd),
	ITAPI_PREFIX(it_ud_svc_request_event_t, evd),
	ITAPI_PREFIX(it_connection_event_t, evd),
	ITAPI_PREFIX(it_ud_svc_reply_event_t, evd),
	ITAPI_PREFIX(it_affiliated_event_t, evd),
	ITAPI_PREFIX(it_unaffiliated_event_t, evd),
	ITAPI_PREFIX(it_software_event_t, evd),
	ITAPI_PREFIX(it_aevd_notification_event_t, aevd),
};

Test(itapi_layout, event_prefix)
{
	size_t i;

	for (i = 0; i < ITAPI_ARRAY_SIZE(prefixes); i++) {
		const struct itapi_prefix *p = &prefixes[i];

		cr_expect_eq(p->number_off, 0, "%s", p->name);
		cr_expect_eq(p->evd_off, offsetof(it_any_event_t, evd), "%s",
			     p->name);
		cr_expect_leq(p->size, sizeof(it_event_t), "%s", p->name);
	}
}

Test(itapi_layout, event_union_views)
{
	it_event_t ev;
	it_evd_handle_t evd = (it_evd_handle_t)&ev;

	memset(&ev, 0, sizeof(ev));
	ev.conn.event_number = IT_CM_MSG_CONN_ESTABLISHED_EVENT;
	ev.conn.evd = evd;
	cr_assert_eq(ev.event_number, IT_CM_MSG_CONN_ESTABLISHED_EVENT);
	cr_assert_eq(ev.any.event_number, IT_CM_MSG_CONN_ESTABLISHED_EVENT);
	cr_assert_eq(ev.any.evd, evd);
	cr_assert_eq(ev.aevd_notify.aevd, evd);

	/* A DTO completion read through the wider UD view. */
	ev.dto_cmpl.event_number = IT_DTO_RC_RECV_CMPL_EVENT;
	ev.dto_cmpl.cookie = UINT64_C(0xfedcba9876543210);
	ev.dto_cmpl.transferred_length = 4096;
	cr_assert_eq(ev.all_dto_cmpl.cookie, UINT64_C(0xfedcba9876543210));
	cr_assert_eq(ev.all_dto_cmpl.transferred_length, 4096);
}

Test(itapi_layout, private_data_fits)
{
	it_conn_request_event_t req;
	it_connection_event_t conn;
	it_ud_svc_request_event_t ud_req;
	it_ud_svc_reply_event_t ud_rep;
	it_ud_svc_req_param_t ud_param;

	cr_expect_eq(sizeof(req.private_data), IT_MAX_PRIV_DATA);
	cr_expect_eq(sizeof(conn.private_data), IT_MAX_PRIV_DATA);
	cr_expect_eq(sizeof(ud_req.private_data), IT_MAX_PRIV_DATA);
	cr_expect_eq(sizeof(ud_rep.private_data), IT_MAX_PRIV_DATA);
	cr_expect_eq(sizeof(ud_param.private_data), IT_MAX_PRIV_DATA);
	cr_expect_eq(sizeof(((it_interface_t *)0)->name),
		     IT_INTERFACE_NAME_SIZE);
}

Test(itapi_layout, null_handle)
{
	it_addr_handle_t ah = IT_NULL_HANDLE;
	it_ep_handle_t ep = IT_NULL_HANDLE;
	it_evd_handle_t evd = IT_NULL_HANDLE;
	it_ia_handle_t ia = IT_NULL_HANDLE;
	it_listen_handle_t listen = IT_NULL_HANDLE;
	it_lmr_handle_t lmr = IT_NULL_HANDLE;
	it_pz_handle_t pz = IT_NULL_HANDLE;
	it_rmr_handle_t rmr = IT_NULL_HANDLE;
	it_ud_svc_req_handle_t ud = IT_NULL_HANDLE;
	it_srq_handle_t srq = IT_NULL_HANDLE;
	it_handle_t any = IT_NULL_HANDLE;

	cr_assert_null(ah);
	cr_assert_null(ep);
	cr_assert_null(evd);
	cr_assert_null(ia);
	cr_assert_null(listen);
	cr_assert_null(lmr);
	cr_assert_null(pz);
	cr_assert_null(rmr);
	cr_assert_null(ud);
	cr_assert_null(srq);
	cr_assert_null(any);
	/* Any typed handle goes where the API takes it_handle_t. */
	any = ep;
	cr_assert(any == IT_NULL_HANDLE);
}

/* Number of bits a bit-field keeps: store all ones, count what is left. */
static unsigned int bits(unsigned int stored)
{
	unsigned int n = 0;

	while (stored) {
		n += stored & 1;
		stored >>= 1;
	}
	return n;
}

Test(itapi_layout, bit_field_widths)
{
	volatile unsigned int ones = ~0u;
	it_ib_net_endpoint_t ep;
	it_ib_conn_attributes_t ca;
	it_vendor_ib_t vendor;

	memset(&ep, 0, sizeof(ep));
	ep.path_mtu = ones;
	ep.packet_lifetime = ones;
	ep.packet_rate = ones;
	ep.sl = ones;
	ep.subnet_local = ones;
	ep.flow_label = ones;
	cr_expect_eq(bits(ep.path_mtu), 4);
	cr_expect_eq(bits(ep.packet_lifetime), 6);
	cr_expect_eq(bits(ep.packet_rate), 6);
	cr_expect_eq(bits(ep.sl), 4);
	cr_expect_eq(bits(ep.subnet_local), 1);
	cr_expect_eq(bits(ep.flow_label), 20);

	memset(&ca, 0, sizeof(ca));
	ca.remote_cm_timeout = ones;
	ca.local_cm_timeout = ones;
	ca.retry_count = ones;
	ca.rnr_retry_count = ones;
	ca.max_cm_retries = ones;
	ca.local_ack_timeout = ones;
	cr_expect_eq(bits(ca.remote_cm_timeout), 5);
	cr_expect_eq(bits(ca.local_cm_timeout), 5);
	cr_expect_eq(bits(ca.retry_count), 3);
	cr_expect_eq(bits(ca.rnr_retry_count), 3);
	cr_expect_eq(bits(ca.max_cm_retries), 4);
	cr_expect_eq(bits(ca.local_ack_timeout), 5);

	memset(&vendor, 0, sizeof(vendor));
	vendor.vendor = ones;
	cr_expect_eq(bits(vendor.vendor), 24);
}

Test(itapi_layout, path_union_is_named_remote)
{
	it_path_t path;

	memset(&path, 0, sizeof(path));
	path.remote.iwarp.ip_vers = IT_IP_VERS_IPV4;
	path.remote.iwarp.raddr.ipv4.s_addr = htonl(0x7f000001);
	path.remote.iwarp.laddr.ipv6.s6_addr[15] = 1;
	cr_assert_eq(ntohl(path.remote.iwarp.raddr.ipv4.s_addr), 0x7f000001);
	cr_assert_eq(path.remote.iwarp.laddr.ipv6.s6_addr[15], 1);
}
