/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The verbs transport without a device: the probe explains an absence,
 * opening a missing device fails cleanly, and the translations of device
 * attributes, addresses, address vectors and reject reasons are right.
 */
#include <arpa/inet.h>
#include <string.h>

#include <criterion/criterion.h>
#include <infiniband/verbs.h>

#include <openrdma/registry.h>
#include <openrdma/verbs.h>

#include "transports/verbs/verbs.h"

static bool host_has_rdma(void)
{
	struct ibv_device **list;
	int n = 0;

	list = ibv_get_device_list(&n);
	if (list)
		ibv_free_device_list(list);
	return list && n > 0;
}

Test(verbs_probe, explains_absence)
{
	struct openrdma_transport_info *info;
	int i, n, found = 0;

	if (host_has_rdma())
		cr_skip_test("this host has RDMA devices: the absence cannot "
			     "be checked here (the VM tests cover the probe)");
	cr_assert_eq(openrdma_transport_info_list(&info, &n), 0);
	for (i = 0; i < n; i++) {
		if (strcmp(info[i].name, "verbs"))
			continue;
		found = 1;
		cr_assert(info[i].loaded, "verbs: not loaded: %s",
			  info[i].status);
		cr_assert_eq(info[i].num_devices, 0);
		cr_assert(strstr(info[i].status, "ibv_get_device_list") ||
				  strstr(info[i].status, "no RDMA device"),
			  "verbs: the status does not say why: \"%s\"",
			  info[i].status);
	}
	openrdma_transport_info_free(info, n);
	cr_assert(found, "the registry does not list the verbs transport");
}

Test(verbs_probe, no_interface_listed)
{
	struct openrdma_device *dev;

	if (host_has_rdma())
		cr_skip_test("this host has RDMA devices");
	cr_assert_eq(openrdma_device_find("rxe0-1", &dev), -OPENRDMA_ENODEV);
}

Test(verbs_open, missing_device_fails)
{
	struct openrdma_device dev = { .name = "nosuch0-1",
				       .dev_name = "nosuch0",
				       .port_num = 1 };
	struct openrdma_context *ctx = NULL;
	int ret;

	ret = verbs_device_open(&dev, &ctx);
	cr_assert_lt(ret, 0, "opening a device that does not exist: %d", ret);
	cr_assert(ret == -OPENRDMA_ENODEV || ret == -OPENRDMA_ENOSYS ||
			  ret == -OPENRDMA_ENOENT,
		  "unexpected error %s", openrdma_strerror(ret));
	cr_assert_null(ctx, "output set on failure");
}

/* An rxe-like device (RoCE) and a siw-like one (iWARP), as 6.1 reports. */
static void rxe_like(struct ibv_device_attr_ex *dev, struct ibv_port_attr *port)
{
	memset(dev, 0, sizeof(*dev));
	memset(port, 0, sizeof(*port));
	dev->orig_attr.vendor_id = 0xffffff;
	dev->orig_attr.max_qp = 1048560;
	dev->orig_attr.max_qp_wr = 1048576;
	dev->orig_attr.device_cap_flags =
		IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_MGT_EXTENSIONS |
		IBV_DEVICE_MEM_WINDOW_TYPE_2B | IBV_DEVICE_SRQ_RESIZE;
	dev->orig_attr.max_sge = 32;
	dev->orig_attr.max_mw = 524287;
	dev->orig_attr.max_srq = 917503;
	dev->orig_attr.max_ah = 32767;
	dev->orig_attr.atomic_cap = IBV_ATOMIC_HCA;
	dev->orig_attr.phys_port_cnt = 1;
	dev->orig_attr.node_guid = htobe64(0x505400fffe123456ull);
	port->link_layer = IBV_LINK_LAYER_ETHERNET;
	port->active_mtu = IBV_MTU_1024;
	port->max_msg_sz = 0x800000;
	port->state = IBV_PORT_ACTIVE;
}

static void siw_like(struct ibv_device_attr_ex *dev, struct ibv_port_attr *port)
{
	memset(dev, 0, sizeof(*dev));
	memset(port, 0, sizeof(*port));
	dev->orig_attr.vendor_id = 0x626d74;
	dev->orig_attr.device_cap_flags = IBV_DEVICE_MEM_MGT_EXTENSIONS;
	dev->orig_attr.max_sge = 6;
	dev->orig_attr.max_srq = 102400;
	dev->orig_attr.atomic_cap = IBV_ATOMIC_NONE;
	dev->orig_attr.phys_port_cnt = 1;
	port->link_layer = IBV_LINK_LAYER_ETHERNET;
	port->active_mtu = IBV_MTU_1024;
	port->max_msg_sz = 0xffffffff;
}

Test(verbs_attr, roce_device)
{
	struct openrdma_device_attr attr;
	struct ibv_device_attr_ex dev;
	struct ibv_port_attr port;
	uint32_t want =
		OPENRDMA_DEVICE_RC | OPENRDMA_DEVICE_UD | OPENRDMA_DEVICE_SRQ |
		OPENRDMA_DEVICE_SRQ_LIMIT | OPENRDMA_DEVICE_MW_TYPE1 |
		OPENRDMA_DEVICE_MW_TYPE2 | OPENRDMA_DEVICE_SEND_INV |
		OPENRDMA_DEVICE_ZERO_BASED | OPENRDMA_DEVICE_THREE_WAY |
		OPENRDMA_DEVICE_RNR_RETRY | OPENRDMA_DEVICE_CROSS_PROCESS |
		OPENRDMA_DEVICE_CROSS_HOST | OPENRDMA_DEVICE_PEER_CAN_READ_RMR |
		OPENRDMA_DEVICE_IMM | OPENRDMA_DEVICE_EXACT_ERRORS |
		OPENRDMA_DEVICE_SOLICITED;

	rxe_like(&dev, &port);
	cr_assert_eq(verbs_device_quirks(&dev),
		     VERBS_QUIRK_KERNEL_WC_FLAGS | VERBS_QUIRK_NO_LAST_WQE |
			     VERBS_QUIRK_LAX_ERRORS);
	verbs_device_attr_fill(&dev, &port, false, 0, &attr);
	cr_assert_str_eq(attr.transport, "verbs");
	cr_assert_eq(attr.node_transport, OPENRDMA_NODE_IB);
	cr_assert_eq(attr.device_cap_flags, want, "flags 0x%x, want 0x%x",
		     attr.device_cap_flags, want);
	cr_assert_eq(attr.atomic_cap, OPENRDMA_ATOMIC_HCA);
	cr_assert_eq(attr.node_guid, 0x505400fffe123456ull);
	cr_assert_eq(attr.max_msg_size, 0x800000);
	cr_assert_eq(attr.phys_port_cnt, 1);
	cr_assert_eq(attr.max_pdata_connect, 56);
	cr_assert_eq(attr.max_pdata_accept, 196);
	cr_assert_eq(attr.max_pdata_reject, 148);
	cr_assert_eq(attr.max_pdata_disconnect, 0);
	cr_assert_eq(attr.max_ud_msg_size, 1024);
	cr_assert_eq(attr.max_sge, 32);
}

Test(verbs_attr, iwarp_device)
{
	struct openrdma_device_attr attr;
	struct ibv_device_attr_ex dev;
	struct ibv_port_attr port;
	uint32_t quirks;

	siw_like(&dev, &port);
	quirks = verbs_device_quirks(&dev);
	cr_assert_eq(quirks, VERBS_QUIRK_NO_IOVA | VERBS_QUIRK_NO_SOLICITED |
				     VERBS_QUIRK_NO_LAST_WQE |
				     VERBS_QUIRK_NO_EMPTY_RECV |
				     VERBS_QUIRK_NO_RESET);
	verbs_device_attr_fill(&dev, &port, true, quirks, &attr);
	cr_assert_eq(attr.node_transport, OPENRDMA_NODE_IWARP);
	cr_assert_eq(attr.device_cap_flags,
		     OPENRDMA_DEVICE_RC | OPENRDMA_DEVICE_SRQ |
			     OPENRDMA_DEVICE_SRQ_LIMIT |
			     OPENRDMA_DEVICE_CROSS_PROCESS |
			     OPENRDMA_DEVICE_CROSS_HOST,
		     "flags 0x%x", attr.device_cap_flags);
	cr_assert_eq(attr.atomic_cap, OPENRDMA_ATOMIC_NONE);
	/* 256 bytes of MPA private data less MPA v2's 4, less siw's u8;
	 * connect and accept less the QPN header too */
	cr_assert_eq(attr.max_pdata_connect, 243);
	cr_assert_eq(attr.max_pdata_accept, 243);
	cr_assert_eq(attr.max_pdata_reject, 251);
	cr_assert_eq(attr.max_pdata_disconnect, 0);
	cr_assert_eq(attr.max_ud_msg_size, 0);
}

Test(verbs_attr, mtu_and_reject_reasons)
{
	cr_assert_eq(verbs_mtu_bytes(IBV_MTU_256), 256);
	cr_assert_eq(verbs_mtu_bytes(IBV_MTU_4096), 4096);
	cr_assert_eq(verbs_mtu_bytes((enum ibv_mtu)0), 0);
	cr_assert_eq(verbs_reject_status(28, false), -OPENRDMA_EREJECTED);
	cr_assert_eq(verbs_reject_status(8, false), -OPENRDMA_ECONNREFUSED);
	cr_assert_eq(verbs_reject_status(-ECONNRESET, true),
		     -OPENRDMA_EREJECTED);
	cr_assert_eq(verbs_reject_status(-ECONNREFUSED, true),
		     -OPENRDMA_ECONNREFUSED);
}

Test(verbs_addr, gid_and_sockaddr)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };
	struct sockaddr_storage ss;
	union ibv_gid gid;

	inet_pton(AF_INET, "192.168.77.1", &sin.sin_addr);
	verbs_gid_from_sockaddr((struct sockaddr *)&sin, &gid);
	cr_assert_eq(gid.raw[10], 0xff);
	cr_assert_eq(gid.raw[11], 0xff);
	cr_assert_eq(memcmp(&gid.raw[12], &sin.sin_addr, 4), 0);
	verbs_sockaddr_from_gid(&gid, &ss);
	cr_assert_eq(ss.ss_family, AF_INET);
	cr_assert_eq(((struct sockaddr_in *)&ss)->sin_addr.s_addr,
		     sin.sin_addr.s_addr);

	inet_pton(AF_INET6, "fe80::5054:ff:fe12:3456", &sin6.sin6_addr);
	verbs_gid_from_sockaddr((struct sockaddr *)&sin6, &gid);
	cr_assert_eq(memcmp(gid.raw, &sin6.sin6_addr, 16), 0);
	verbs_sockaddr_from_gid(&gid, &ss);
	cr_assert_eq(ss.ss_family, AF_INET6);
	cr_assert_eq(verbs_sockaddr_len((struct sockaddr *)&ss),
		     sizeof(struct sockaddr_in6));
}

/* A RoCE port with a link-local and an IPv4-mapped GID, as rxe0's. */
static void roce_ctx(struct verbs_ctx *vctx, struct verbs_gid *gids)
{
	memset(vctx, 0, sizeof(*vctx));
	memset(gids, 0, 2 * sizeof(*gids));
	inet_pton(AF_INET6, "fe80::5054:ff:fe12:3456", gids[0].gid.raw);
	gids[0].index = 0;
	gids[0].type = IBV_GID_TYPE_ROCE_V2;
	inet_pton(AF_INET6, "::ffff:192.168.77.1", gids[1].gid.raw);
	gids[1].index = 1;
	gids[1].type = IBV_GID_TYPE_ROCE_V2;
	vctx->gids = gids;
	vctx->num_gids = 2;
	vctx->port = 1;
	vctx->link_layer = IBV_LINK_LAYER_ETHERNET;
}

Test(verbs_addr, ah_from_address)
{
	struct openrdma_ah_attr attr = { .port_num = 1 }, back;
	struct sockaddr_in *sin = (struct sockaddr_in *)&attr.addr;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&attr.addr;
	struct verbs_gid gids[2];
	struct verbs_ctx vctx;
	struct ibv_ah_attr ib;

	roce_ctx(&vctx, gids);
	sin->sin_family = AF_INET;
	inet_pton(AF_INET, "192.168.77.2", &sin->sin_addr);
	cr_assert_eq(verbs_ah_attr_to_ibv(&vctx, &attr, &ib), 0);
	cr_assert_eq(ib.is_global, 1);
	cr_assert_eq(ib.grh.sgid_index, 1, "IPv4 needs the mapped GID");
	cr_assert_eq(ib.grh.dgid.raw[15], 2);
	cr_assert_gt(ib.grh.hop_limit, 1);
	cr_assert_eq(ib.port_num, 1);
	verbs_ah_attr_from_ibv(&vctx, &ib, &back);
	cr_assert_eq(back.is_global, 1);
	cr_assert_eq(back.addr.ss_family, AF_INET);
	cr_assert_eq(((struct sockaddr_in *)&back.addr)->sin_addr.s_addr,
		     sin->sin_addr.s_addr);

	memset(&attr.addr, 0, sizeof(attr.addr));
	sin6->sin6_family = AF_INET6;
	inet_pton(AF_INET6, "fe80::1", &sin6->sin6_addr);
	cr_assert_eq(verbs_ah_attr_to_ibv(&vctx, &attr, &ib), 0);
	cr_assert_eq(ib.grh.sgid_index, 0, "IPv6 needs the link-local GID");

	/* no usable source GID */
	vctx.num_gids = 0;
	cr_assert_eq(verbs_ah_attr_to_ibv(&vctx, &attr, &ib),
		     -OPENRDMA_EADDRNOTAVAIL);
	/* iWARP has no address handles to derive */
	vctx.iwarp = true;
	cr_assert_eq(verbs_ah_attr_to_ibv(&vctx, &attr, &ib),
		     -OPENRDMA_EOPNOTSUPP);
}

Test(verbs_addr, ah_explicit_gid_and_lid)
{
	struct openrdma_ah_attr attr = { .port_num = 1, .is_global = 1 };
	struct verbs_gid gids[2];
	struct verbs_ctx vctx;
	struct ibv_ah_attr ib;

	roce_ctx(&vctx, gids);
	vctx.port = 2; /* the core's port 1 is the device's port 2 */
	memset(attr.grh.dgid.raw, 0xab, 16);
	attr.grh.sgid_index = 7;
	attr.grh.hop_limit = 3;
	attr.grh.traffic_class = 5;
	attr.grh.flow_label = 0x12345;
	cr_assert_eq(verbs_ah_attr_to_ibv(&vctx, &attr, &ib), 0);
	cr_assert_eq(ib.port_num, 2);
	cr_assert_eq(ib.grh.sgid_index, 7);
	cr_assert_eq(ib.grh.hop_limit, 3);
	cr_assert_eq(ib.grh.traffic_class, 5);
	cr_assert_eq(ib.grh.flow_label, 0x12345);
	cr_assert_eq(ib.grh.dgid.raw[0], 0xab);

	memset(&attr, 0, sizeof(attr));
	attr.port_num = 1;
	attr.dlid = 0x17;
	attr.sl = 2;
	cr_assert_eq(verbs_ah_attr_to_ibv(&vctx, &attr, &ib), 0);
	cr_assert_eq(ib.is_global, 0);
	cr_assert_eq(ib.dlid, 0x17);
	cr_assert_eq(ib.sl, 2);
}

Test(verbs_qp, attr_translation)
{
	struct openrdma_qp_attr attr = {
		.qp_state = OPENRDMA_QPS_RTR,
		.path_mtu = OPENRDMA_MTU_1024,
		.dest_qp_num = 0x1234,
		.rq_psn = 77,
		.max_dest_rd_atomic = 4,
		.min_rnr_timer = 12,
		.ah_attr = { .port_num = 1, .dlid = 3 },
	};
	struct verbs_gid gids[2];
	struct verbs_ctx vctx;
	struct ibv_qp_attr ib;
	int mask = OPENRDMA_QP_STATE | OPENRDMA_QP_AV | OPENRDMA_QP_PATH_MTU |
		   OPENRDMA_QP_DEST_QPN | OPENRDMA_QP_RQ_PSN |
		   OPENRDMA_QP_MAX_DEST_RD_ATOMIC | OPENRDMA_QP_MIN_RNR_TIMER;

	roce_ctx(&vctx, gids);
	cr_assert_eq(verbs_qp_attr_to_ibv(&vctx, &attr, mask, &ib), 0);
	cr_assert_eq(ib.qp_state, IBV_QPS_RTR);
	cr_assert_eq(ib.path_mtu, IBV_MTU_1024);
	cr_assert_eq(ib.dest_qp_num, 0x1234);
	cr_assert_eq(ib.rq_psn, 77);
	cr_assert_eq(ib.max_dest_rd_atomic, 4);
	cr_assert_eq(ib.min_rnr_timer, 12);
	cr_assert_eq(ib.ah_attr.dlid, 3);
	cr_assert_eq(ib.ah_attr.port_num, 1);
	/* what libibverbs has no field for is not supported */
	cr_assert_eq(verbs_qp_attr_to_ibv(&vctx, &attr,
					  mask | OPENRDMA_QP_ALT_PATH, &ib),
		     -OPENRDMA_EOPNOTSUPP);
}

/*
 * Requests posted in ERR are completed by the transport: in posting order,
 * after the CQ's earlier ones, and a full ring is an overrun.
 */
Test(verbs_flush, order_and_overrun)
{
	struct openrdma_context ctx = { 0 };
	struct openrdma_send_wr swr[3];
	struct openrdma_recv_wr rwr[2];
	struct openrdma_wc wc[8];
	struct verbs_cq vcq;
	struct verbs_qp vqp;
	int i, n;

	memset(&vcq, 0, sizeof(vcq));
	memset(&vqp, 0, sizeof(vqp));
	vcq.base.obj.ctx = &ctx;
	cr_assert_eq(verbs_flush_init(&vcq, 4), 0);
	vqp.base.qp_num = 0x42;
	vqp.base.send_cq = &vcq.base;
	vqp.base.recv_cq = &vcq.base;
	memset(swr, 0, sizeof(swr));
	memset(rwr, 0, sizeof(rwr));
	for (i = 0; i < 3; i++) {
		swr[i].wr_id = 10 + (uint64_t)i;
		swr[i].next = i < 2 ? &swr[i + 1] : NULL;
	}
	rwr[0].wr_id = 20;
	rwr[0].next = &rwr[1];
	rwr[1].wr_id = 21;

	cr_assert_eq(verbs_flush_send(&vqp, swr), 0);
	cr_assert_eq(atomic_load(&vcq.flushed), 3);
	n = verbs_flush_poll(&vcq, 2, wc);
	cr_assert_eq(n, 2);
	cr_assert_eq(wc[0].wr_id, 10);
	cr_assert_eq(wc[1].wr_id, 11);
	cr_assert_eq(wc[0].status, OPENRDMA_WC_WR_FLUSH_ERR);
	cr_assert_eq(wc[0].qp_num, 0x42);
	/* the ring wraps around: 1 left, 2 more fit, then it is full */
	cr_assert_eq(verbs_flush_recv(&vqp, rwr), 0);
	cr_assert_eq(atomic_load(&vcq.overrun), false);
	cr_assert_eq(verbs_flush_recv(&vqp, rwr), 0);
	cr_assert_eq(atomic_load(&vcq.overrun), true, "full ring: no overrun");
	n = verbs_flush_poll(&vcq, 8, wc);
	cr_assert_eq(n, 4);
	cr_assert_eq(wc[0].wr_id, 12);
	cr_assert_eq(wc[1].wr_id, 20);
	cr_assert_eq(wc[2].wr_id, 21);
	cr_assert_eq(wc[3].wr_id, 20);
	cr_assert_eq(verbs_flush_poll(&vcq, 8, wc), 0);
	verbs_flush_fini(&vcq);
}
