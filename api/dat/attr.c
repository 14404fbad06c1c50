/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The IA and provider attributes of dat_ia_query(), from the device's
 * attributes.  DAT counts and lengths are 32-bit: larger device limits
 * are clamped.
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <openrdma/registry.h>

#include "api/dat/provider.h"

#define DATP_VERSION_MAJOR 0
#define DATP_VERSION_MINOR 1

static DAT_COUNT count_of(int64_t v)
{
	return v > INT_MAX ? INT_MAX : v < 0 ? 0 : (DAT_COUNT)v;
}

static DAT_SEG_LENGTH len_of(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (DAT_SEG_LENGTH)v;
}

void datp_ia_attr_fill(struct datp_ia *ia, DAT_IA_ATTR *attr)
{
	const struct openrdma_device_attr *d = &ia->dev_attr;
	DAT_COUNT evd_qlen = count_of(d->max_cqe);

	memset(attr, 0, sizeof(*attr));
	snprintf(attr->adapter_name, sizeof(attr->adapter_name), "%s",
		 ia->entry->iface);
	snprintf(attr->vendor_name, sizeof(attr->vendor_name),
		 "OpenRDMA %s (%s)", openrdma_version(), d->transport);
	attr->hardware_version_major = d->hw_ver >> 16;
	attr->hardware_version_minor = d->hw_ver & 0xffff;
	attr->ia_address_ptr = (DAT_IA_ADDRESS_PTR)&ia->addr;
	attr->max_eps = count_of(d->max_qp);
	attr->max_dto_per_ep = count_of(d->max_qp_wr);
	attr->max_rdma_read_per_ep_in = count_of(d->max_qp_rd_atom);
	attr->max_rdma_read_per_ep_out = count_of(d->max_qp_init_rd_atom);
	attr->max_evds = count_of(d->max_cq);
	if (evd_qlen > (DAT_COUNT)CORE_EVD_CAPACITY_MAX)
		evd_qlen = CORE_EVD_CAPACITY_MAX;
	attr->max_evd_qlen = evd_qlen;
	attr->max_iov_segments_per_dto = count_of(d->max_sge);
	attr->max_lmrs = count_of(d->max_mr);
	attr->max_lmr_block_size = len_of(d->max_mr_size);
	attr->max_lmr_virtual_address = UINT64_MAX;
	attr->max_pzs = count_of(d->max_pd);
	attr->max_message_size = len_of(d->max_msg_size);
	attr->max_rdma_size = len_of(d->max_msg_size);
	attr->max_rmrs = count_of(d->max_mw);
	attr->max_rmr_target_address = UINT64_MAX;
	attr->max_srqs = count_of(d->max_srq);
	attr->max_ep_per_srq = count_of(d->max_qp);
	attr->max_recv_per_srq = count_of(d->max_srq_wr);
	attr->max_iov_segments_per_rdma_read = count_of(d->max_sge_rd);
	attr->max_iov_segments_per_rdma_write = count_of(d->max_sge);
	attr->max_rdma_read_in = count_of(d->max_qp_rd_atom);
	attr->max_rdma_read_out = count_of(d->max_qp_init_rd_atom);
	attr->max_rdma_read_per_ep_in_guaranteed = DAT_TRUE;
	attr->max_rdma_read_per_ep_out_guaranteed = DAT_TRUE;
	attr->zb_supported = d->device_cap_flags & OPENRDMA_DEVICE_ZERO_BASED ?
				     DAT_TRUE :
				     DAT_FALSE;
	attr->extension_supported = DAT_EXTENSION_IB;
	attr->extension_version = DAT_IB_EXTENSION_VERSION;
}

DAT_COUNT datp_pdata_max(struct datp_ia *ia)
{
	const struct openrdma_device_attr *d = &ia->dev_attr;
	uint16_t max = d->max_pdata_connect;

	if (d->max_pdata_accept < max)
		max = d->max_pdata_accept;
	if (d->max_pdata_reject < max)
		max = d->max_pdata_reject;
	return max;
}

static void pattr_add(struct datp_ia *ia, const char *name, const char *value)
{
	int n = ia->num_pattr;

	if (n >= (int)(sizeof(ia->pattr) / sizeof(ia->pattr[0])))
		return;
	ia->pattr[n].name = name;
	ia->pattr[n].value = value;
	ia->num_pattr++;
}

/* A copy kept in the IA: the attribute list points into it. */
static const char *pattr_value(struct datp_ia *ia, int slot, const char *value)
{
	snprintf(ia->pattr_values[slot], sizeof(ia->pattr_values[slot]), "%s",
		 value);
	return ia->pattr_values[slot];
}

static const char *node_name(enum openrdma_node_transport node)
{
	switch (node) {
	case OPENRDMA_NODE_IB:
		return "IB";
	case OPENRDMA_NODE_IWARP:
		return "IWARP";
	default:
		return "SOFTWARE";
	}
}

/* The provider-specific attributes DAT programs look for (see §1.4). */
void datp_pattr_init(struct datp_ia *ia)
{
	const struct openrdma_device_attr *d = &ia->dev_attr;
	bool atomics = d->atomic_cap != OPENRDMA_ATOMIC_NONE;
	bool ud = d->device_cap_flags & OPENRDMA_DEVICE_UD;
	bool imm = d->device_cap_flags & OPENRDMA_DEVICE_IMM;
	bool exact = d->device_cap_flags & OPENRDMA_DEVICE_EXACT_ERRORS;
	char mtu[16];

	snprintf(mtu, sizeof(mtu), "%d", 128 << ia->port_attr.active_mtu);
	ia->num_pattr = 0;
	pattr_add(ia, "DAT_EXTENSION_INTERFACE", "TRUE");
	pattr_add(ia, "DAT_IB_RDMA_READ", "TRUE");
	pattr_add(ia, DAT_IB_ATTR_IMMED_DATA, imm ? "TRUE" : "FALSE");
	pattr_add(ia, DAT_IB_ATTR_FETCH_AND_ADD, atomics ? "TRUE" : "FALSE");
	pattr_add(ia, DAT_IB_ATTR_CMP_AND_SWAP, atomics ? "TRUE" : "FALSE");
	pattr_add(ia, DAT_IB_ATTR_UD, ud ? "TRUE" : "FALSE");
	pattr_add(ia, DAT_IB_ATTR_COUNTERS, "TRUE");
	pattr_add(ia, "DAT_IB_PROVIDER_NAME", "OpenRDMA");
	pattr_add(ia, "DAT_IB_DEVICE_NAME",
		  pattr_value(ia, 0, ia->entry->iface));
	pattr_add(ia, "DAT_IB_TRANSPORT", pattr_value(ia, 1, d->transport));
	pattr_add(ia, "DAT_IB_TRANSPORT_MTU", pattr_value(ia, 2, mtu));
	pattr_add(ia, "DAT_IB_PORT_STATUS",
		  ia->port_attr.state == OPENRDMA_PORT_ACTIVE ? "ACTIVE" :
								"DOWN");
	pattr_add(ia, "DAT_IB_CONNECTIVITY_MODE", "RC");
	/* what a program needs to read its completions right */
	pattr_add(ia, "OPENRDMA_NODE_TRANSPORT", node_name(d->node_transport));
	pattr_add(ia, "OPENRDMA_EXACT_ERRORS", exact ? "TRUE" : "FALSE");
}

void datp_provider_attr_fill(struct datp_ia *ia, DAT_PROVIDER_ATTR *attr)
{
	const struct openrdma_device_attr *d = &ia->dev_attr;
	DAT_BOOLEAN merge[6][6];
	int i, j;

	memset(attr, 0, sizeof(*attr));
	snprintf(attr->provider_name, sizeof(attr->provider_name), "OpenRDMA");
	attr->provider_version_major = DATP_VERSION_MAJOR;
	attr->provider_version_minor = DATP_VERSION_MINOR;
	/* the registry entry's: DAPL's libdat2 finds the entry by them */
	attr->dapl_version_major = ia->entry->info.dapl_version_major;
	attr->dapl_version_minor = ia->entry->info.dapl_version_minor;
	attr->is_thread_safe = ia->entry->info.is_thread_safe;
	attr->lmr_mem_types_supported =
		(DAT_MEM_TYPE)(DAT_MEM_TYPE_VIRTUAL | DAT_MEM_TYPE_LMR |
			       DAT_MEM_TYPE_SHARED_VIRTUAL);
	attr->iov_ownership_on_return = DAT_IOV_CONSUMER;
	attr->dat_qos_supported =
		(DAT_QOS)(DAT_QOS_BEST_EFFORT | DAT_QOS_HIGH_THROUGHPUT |
			  DAT_QOS_LOW_LATENCY | DAT_QOS_ECONOMY |
			  DAT_QOS_PREMIUM);
	attr->completion_flags_supported =
		(DAT_COMPLETION_FLAGS)(DAT_COMPLETION_SUPPRESS_FLAG |
				       DAT_COMPLETION_SOLICITED_WAIT_FLAG |
				       DAT_COMPLETION_UNSIGNALLED_FLAG |
				       DAT_COMPLETION_BARRIER_FENCE_FLAG |
				       DAT_COMPLETION_EVD_THRESHOLD_FLAG);
	attr->max_private_data_size = datp_pdata_max(ia);
	attr->supports_multipath = DAT_FALSE;
	attr->ep_creator = DAT_PSP_CREATES_EP_IFASKED;
	attr->pz_support = DAT_PZ_UNIQUE;
	attr->optimal_buffer_alignment = DAT_OPTIMAL_ALIGNMENT;
	/* any streams may share an EVD; the array is const, so copy bytes */
	for (i = 0; i < 6; i++)
		for (j = 0; j < 6; j++)
			merge[i][j] = DAT_TRUE;
	memcpy((void *)attr->evd_stream_merging_supported, merge,
	       sizeof(merge));
	attr->srq_supported = d->device_cap_flags & OPENRDMA_DEVICE_SRQ ?
				      DAT_TRUE :
				      DAT_FALSE;
	attr->srq_watermarks_supported = DAT_TRUE;
	attr->srq_ep_pz_difference_supported = DAT_FALSE;
	attr->srq_info_supported = DAT_TRUE;
	attr->ep_recv_info_supported = DAT_TRUE;
	attr->lmr_sync_req = DAT_FALSE;
	attr->dto_async_return_guaranteed = DAT_FALSE;
	attr->rdma_write_for_rdma_read_req = DAT_FALSE;
	attr->rdma_read_lmr_rmr_context_exposure = DAT_FALSE;
	attr->rmr_scope_supported =
		d->device_cap_flags & OPENRDMA_DEVICE_MW_TYPE2 ?
			DAT_RMR_SCOPE_ANY :
			DAT_RMR_SCOPE_PZ;
	attr->is_signal_safe = DAT_FALSE;
	attr->ha_supported = DAT_FALSE;
	attr->ha_loadbalancing = DAT_HA_LB_NONE;
	attr->num_provider_specific_attr = ia->num_pattr;
	attr->provider_specific_attr = ia->pattr;
}
