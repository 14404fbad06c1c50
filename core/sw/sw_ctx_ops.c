/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Device and port attributes of software transports: what every one of
 * them offers, and the limits each describes in a struct sw_dev_limits,
 * which also bound the object counts (sw_res_get()).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "core/sw/sw_ops.h"

/* What the toolkit implements for every software transport. */
#define SW_DEVICE_CAPS                                                   \
	(OPENRDMA_DEVICE_RC | OPENRDMA_DEVICE_UD | OPENRDMA_DEVICE_SRQ | \
	 OPENRDMA_DEVICE_MW_TYPE1 | OPENRDMA_DEVICE_MW_TYPE2 |           \
	 OPENRDMA_DEVICE_SEND_INV | OPENRDMA_DEVICE_ZERO_BASED |         \
	 OPENRDMA_DEVICE_THREE_WAY | OPENRDMA_DEVICE_RNR_RETRY |         \
	 OPENRDMA_DEVICE_SRQ_LIMIT | OPENRDMA_DEVICE_PEER_CAN_READ_RMR | \
	 OPENRDMA_DEVICE_IMM | OPENRDMA_DEVICE_EXACT_ERRORS |            \
	 OPENRDMA_DEVICE_SOLICITED)

void sw_device_attr_init(struct openrdma_device_attr *attr,
			 const struct sw_dev_limits *lim)
{
	memset(attr, 0, sizeof(*attr));
	strcpy(attr->transport, lim->transport);
	snprintf(attr->fw_ver, sizeof(attr->fw_ver), "openrdma %s",
		 OPENRDMA_VERSION_STRING);
	attr->node_transport = OPENRDMA_NODE_SOFTWARE;
	attr->max_mr_size = lim->max_mr_size;
	/* any power of two from 4 KiB: memory is never pinned */
	attr->page_size_cap = ~0xfffull;
	attr->max_msg_size = lim->max_msg_size;
	attr->device_cap_flags = SW_DEVICE_CAPS | lim->cap_flags;
	attr->max_qp = lim->res_max[SW_RES_QP];
	attr->max_qp_wr = lim->max_qp_wr;
	attr->max_sge = lim->max_sge;
	attr->max_sge_rd = lim->max_sge;
	attr->max_inline_data = lim->max_inline;
	attr->max_cq = lim->res_max[SW_RES_CQ];
	attr->max_cqe = lim->max_cqe;
	attr->max_mr = lim->res_max[SW_RES_MR];
	attr->max_pd = lim->res_max[SW_RES_PD];
	attr->max_qp_rd_atom = lim->max_rd_atom;
	attr->max_qp_init_rd_atom = lim->max_rd_atom;
	attr->atomic_cap = lim->atomic_cap;
	attr->max_mw = lim->res_max[SW_RES_MW];
	attr->max_ah = lim->res_max[SW_RES_AH];
	attr->max_srq = lim->res_max[SW_RES_SRQ];
	attr->max_srq_wr = lim->max_srq_wr;
	attr->max_srq_sge = lim->max_sge;
	attr->max_pkeys = 1;
	attr->phys_port_cnt = 1;
	attr->max_pdata_connect = lim->pdata_connect;
	attr->max_pdata_accept = lim->pdata_accept;
	attr->max_pdata_reject = lim->pdata_reject;
	attr->max_pdata_disconnect = lim->pdata_disconnect;
	attr->max_ud_msg_size = lim->max_ud_msg;
}

void sw_port_attr_init(struct openrdma_port_attr *attr,
		       const struct sw_dev_limits *lim)
{
	memset(attr, 0, sizeof(*attr));
	attr->state = OPENRDMA_PORT_ACTIVE;
	attr->max_mtu = OPENRDMA_MTU_4096;
	attr->active_mtu = OPENRDMA_MTU_4096;
	attr->gid_tbl_len = 1;
	attr->max_msg_sz = lim->max_msg_size;
	attr->link_layer = lim->link_layer;
}
