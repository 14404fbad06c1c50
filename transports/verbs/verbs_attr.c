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

/* siw's vendor id ("bmt") and rxe's: see verbs_device_quirks() */
#define VERBS_VENDOR_SIW 0x626d74
#define VERBS_VENDOR_RXE 0xffffff

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
	/*
	 * rxe (Linux 6.1, rxe_resp.c do_complete) writes the kernel's
	 * IB_WC_WITH_INVALIDATE (bit 2) into the user CQ, where libibverbs
	 * reads IBV_WC_IP_CSUM_OK; IBV_WC_WITH_INV is bit 3.
	 */
	if (dev->orig_attr.vendor_id == VERBS_VENDOR_RXE)
		quirks |= VERBS_QUIRK_KERNEL_WC_FLAGS;
	/*
	 * rxe (Linux 6.1) misses errors or reports them otherwise: no
	 * QP_ACCESS_ERR at the target (rxe_resp.c, do_class_ac_error), a
	 * window's range checked against its MR (check_rkey), LOC_QP_OP_ERR
	 * for protection errors, REM_OP_ERR for a send longer than its
	 * receive, no check of max_msg_sz or of the datagram size, type 1
	 * windows accepted in BIND_MW requests (librxe binds them so).
	 */
	if (dev->orig_attr.vendor_id == VERBS_VENDOR_RXE)
		quirks |= VERBS_QUIRK_LAX_ERRORS;
	/*
	 * Neither raises QP_LAST_WQE_REACHED when a QP of an SRQ enters
	 * ERR (no IB_EVENT_QP_LAST_WQE_REACHED in either driver).
	 */
	if (dev->orig_attr.vendor_id == VERBS_VENDOR_RXE ||
	    dev->orig_attr.vendor_id == VERBS_VENDOR_SIW)
		quirks |= VERBS_QUIRK_NO_LAST_WQE;
	/* libsiw refuses receives without SGEs (verbs_post.c) */
	if (dev->orig_attr.vendor_id == VERBS_VENDOR_SIW)
		quirks |= VERBS_QUIRK_NO_EMPTY_RECV;
	/*
	 * siw (Linux 6.1, siw_qp_modify) maps RESET and INIT to its IDLE
	 * state and has no transition to IDLE from RTS or ERROR: it answers
	 * such a modify with success and leaves the QP, its queued requests
	 * and its connection as they were (verbs_qp_modify()).
	 */
	if (dev->orig_attr.vendor_id == VERBS_VENDOR_SIW)
		quirks |= VERBS_QUIRK_NO_RESET;
	return quirks;
}

static uint32_t cap_flags(const struct ibv_device_attr_ex *dev, bool iwarp,
			  uint32_t quirks)
{
	const struct ibv_device_attr *a = &dev->orig_attr;
	uint32_t flags = OPENRDMA_DEVICE_RC | OPENRDMA_DEVICE_CROSS_PROCESS |
			 OPENRDMA_DEVICE_CROSS_HOST;

	/* IB and RoCE devices all have UD, RNR retries, the three-way
	 * handshake (REQ, REP, RTU) and immediate data; iWARP (RDMAP, RFC
	 * 5040) has none of them. */
	if (!iwarp)
		flags |= OPENRDMA_DEVICE_UD | OPENRDMA_DEVICE_RNR_RETRY |
			 OPENRDMA_DEVICE_THREE_WAY | OPENRDMA_DEVICE_IMM;
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
	/*
	 * iWARP completes an RDMA write once it is sent: a remote error
	 * comes later, as a TERMINATE (RFC 5040), never in the completion.
	 */
	if (!iwarp && !(quirks & VERBS_QUIRK_LAX_ERRORS))
		flags |= OPENRDMA_DEVICE_EXACT_ERRORS;
	if (!(quirks & VERBS_QUIRK_NO_SOLICITED))
		flags |= OPENRDMA_DEVICE_SOLICITED;
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
		attr->max_pdata_connect = VERBS_IWARP_PDATA_CONN;
		attr->max_pdata_accept = VERBS_IWARP_PDATA_CONN;
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
