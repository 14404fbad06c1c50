/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * What a device says about itself, in the core's terms.  Pure functions of
 * libibverbs' structures, so that the unit tests check them without a
 * device.
 */
#include <endian.h>
#include <stdio.h>
#include <string.h>

#include "transports/verbs/verbs.h"

/* siw's vendor id ("bmt"): see verbs_device_quirks() */
#define VERBS_VENDOR_SIW 0x626d74

uint32_t verbs_mtu_bytes(enum ibv_mtu mtu)
{
	return mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096 ? 128u << mtu : 0;
}

uint32_t verbs_device_quirks(const struct ibv_device_attr_ex *dev)
{
	uint32_t quirks = 0;

	/*
	 * siw (Linux 6.1, siw_reg_user_mr) registers user memory at its
	 * virtual address whatever IOVA ibv_reg_mr_iova() asks for, so a
	 * zero-based MR would silently be addressed by virtual address.
	 */
	if (dev->orig_attr.vendor_id == VERBS_VENDOR_SIW)
		quirks |= VERBS_QUIRK_NO_IOVA;
	/*
	 * siw (siw_rqe_complete) reports every receive completion as merely
	 * signaled, so a CQ armed for solicited ones never fires.
	 */
	if (dev->orig_attr.vendor_id == VERBS_VENDOR_SIW)
		quirks |= VERBS_QUIRK_NO_SOLICITED;
	return quirks;
}

static uint32_t cap_flags(const struct ibv_device_attr_ex *dev, bool iwarp,
			  uint32_t quirks)
{
	const struct ibv_device_attr *a = &dev->orig_attr;
	uint32_t flags = OPENRDMA_DEVICE_RC | OPENRDMA_DEVICE_CROSS_PROCESS |
			 OPENRDMA_DEVICE_CROSS_HOST;

	/* IB and RoCE devices all have UD, RNR retries and the three-way
	 * handshake (REQ, REP, RTU); iWARP has none of them. */
	if (!iwarp)
		flags |= OPENRDMA_DEVICE_UD | OPENRDMA_DEVICE_RNR_RETRY |
			 OPENRDMA_DEVICE_THREE_WAY;
	/* The limit event is part of the SRQ verbs in both specifications. */
	if (a->max_srq > 0)
		flags |= OPENRDMA_DEVICE_SRQ | OPENRDMA_DEVICE_SRQ_LIMIT;
	if (a->max_mw > 0 && (a->device_cap_flags & IBV_DEVICE_MEM_WINDOW))
		flags |= OPENRDMA_DEVICE_MW_TYPE1;
	if (a->max_mw > 0 &&
	    (a->device_cap_flags &
	     (IBV_DEVICE_MEM_WINDOW_TYPE_2A | IBV_DEVICE_MEM_WINDOW_TYPE_2B)))
		flags |= OPENRDMA_DEVICE_MW_TYPE2 |
			 OPENRDMA_DEVICE_PEER_CAN_READ_RMR;
	/* The core's invalidation targets type 2 windows: SEND_WITH_INV and
	 * LOCAL_INV need the memory-management extensions and those. */
	if ((a->device_cap_flags & IBV_DEVICE_MEM_MGT_EXTENSIONS) &&
	    (flags & OPENRDMA_DEVICE_MW_TYPE2))
		flags |= OPENRDMA_DEVICE_SEND_INV;
	if (!(quirks & VERBS_QUIRK_NO_IOVA))
		flags |= OPENRDMA_DEVICE_ZERO_BASED;
	return flags;
}

void verbs_device_attr_fill(const struct ibv_device_attr_ex *dev,
			    const struct ibv_port_attr *port, bool iwarp,
			    uint32_t quirks, struct openrdma_device_attr *attr)
{
	const struct ibv_device_attr *a = &dev->orig_attr;

	memset(attr, 0, sizeof(*attr));
	strcpy(attr->transport, "verbs");
	snprintf(attr->fw_ver, sizeof(attr->fw_ver), "%s", a->fw_ver);
	attr->node_guid = be64toh(a->node_guid);
	attr->vendor_id = a->vendor_id;
	attr->vendor_part_id = a->vendor_part_id;
	attr->hw_ver = a->hw_ver;
	attr->node_transport = iwarp ? OPENRDMA_NODE_IWARP : OPENRDMA_NODE_IB;
	attr->max_mr_size = a->max_mr_size;
	attr->page_size_cap = a->page_size_cap;
	attr->max_msg_size = port->max_msg_sz;
	attr->device_cap_flags = cap_flags(dev, iwarp, quirks);
	attr->max_qp = a->max_qp;
	attr->max_qp_wr = a->max_qp_wr;
	attr->max_sge = a->max_sge;
	attr->max_sge_rd = a->max_sge_rd;
	attr->max_cq = a->max_cq;
	attr->max_cqe = a->max_cqe;
	attr->max_mr = a->max_mr;
	attr->max_pd = a->max_pd;
	attr->max_qp_rd_atom = a->max_qp_rd_atom;
	attr->max_qp_init_rd_atom = a->max_qp_init_rd_atom;
	attr->atomic_cap = (enum openrdma_atomic_cap)a->atomic_cap;
	attr->max_mw = a->max_mw;
	attr->max_ah = a->max_ah;
	attr->max_srq = a->max_srq;
	attr->max_srq_wr = a->max_srq_wr;
	attr->max_srq_sge = a->max_srq_sge;
	attr->max_pkeys = a->max_pkeys;
	/* each interface is one device port: the core's port 1 */
	attr->phys_port_cnt = 1;
	if (iwarp) {
		attr->max_pdata_connect = VERBS_IWARP_PDATA;
		attr->max_pdata_accept = VERBS_IWARP_PDATA;
		attr->max_pdata_reject = VERBS_IWARP_PDATA;
	} else {
		attr->max_pdata_connect = VERBS_IB_PDATA_CONNECT;
		attr->max_pdata_accept = VERBS_IB_PDATA_ACCEPT;
		attr->max_pdata_reject = VERBS_IB_PDATA_REJECT;
	}
	/* rdma_disconnect() takes no private data (librdmacm's API) */
	attr->max_pdata_disconnect = 0;
	if (!iwarp)
		attr->max_ud_msg_size = verbs_mtu_bytes(port->active_mtu);
}

void verbs_port_attr_fill(const struct ibv_port_attr *port,
			  struct openrdma_port_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->state = (enum openrdma_port_state)port->state;
	attr->max_mtu = (enum openrdma_mtu)port->max_mtu;
	attr->active_mtu = (enum openrdma_mtu)port->active_mtu;
	attr->gid_tbl_len = port->gid_tbl_len;
	attr->max_msg_sz = port->max_msg_sz;
	attr->lid = port->lid;
	attr->link_layer = port->link_layer;
}

int verbs_reject_status(int status, bool iwarp)
{
	/*
	 * librdmacm passes IB CM reasons through; iWARP reports -ECONNRESET
	 * for an MPA reject and -ECONNREFUSED when the TCP connection is
	 * refused.  Anything but the peer's own reject means nobody took
	 * the request.
	 */
	if (iwarp)
		return status == -ECONNRESET ? -OPENRDMA_EREJECTED :
					       -OPENRDMA_ECONNREFUSED;
	return status == VERBS_IB_REJ_CONSUMER ? -OPENRDMA_EREJECTED :
						 -OPENRDMA_ECONNREFUSED;
}
