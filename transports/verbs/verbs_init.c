/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The verbs transport's descriptor: its probe, its parameters and its
 * operations.  The probe lists one interface per port of every RDMA
 * device libibverbs finds ("rxe0-1", "siw0-1"), or says why there is none.
 */
#include <stdio.h>
#include <string.h>

#include "transports/verbs/verbs.h"

static int probe_device(struct openrdma_probe *probe, struct ibv_device *dev)
{
	const char *name = ibv_get_device_name(dev);
	struct ibv_device_attr attr;
	struct ibv_context *ctx;
	char ifname[64];
	int ret, added = 0;
	uint8_t port;

	ctx = ibv_open_device(dev);
	if (!ctx) {
		openrdma_probe_explain(probe, "%s: ibv_open_device: %s", name,
				       strerror(errno));
		return 0;
	}
	ret = ibv_query_device(ctx, &attr);
	if (ret) {
		openrdma_probe_explain(probe, "%s: ibv_query_device: %s", name,
				       strerror(ret));
		goto out;
	}
	for (port = 1; port <= attr.phys_port_cnt; port++) {
		snprintf(ifname, sizeof(ifname), "%s-%u", name, port);
		ret = openrdma_probe_device_add(probe, ifname, name, port, NULL,
						NULL);
		if (ret)
			break;
		added++;
	}
	if (!added && !ret)
		openrdma_probe_explain(probe, "%s: no port", name);
out:
	ibv_close_device(ctx);
	return ret;
}

static int verbs_probe(struct openrdma_probe *probe)
{
	struct ibv_device **list;
	int i, n, ret = 0;

	list = ibv_get_device_list(&n);
	if (!list) {
		openrdma_probe_explain(probe, "ibv_get_device_list: %s",
				       strerror(errno));
		return 0;
	}
	if (!n)
		openrdma_probe_explain(probe, "no RDMA device");
	for (i = 0; i < n && !ret; i++)
		ret = probe_device(probe, list[i]);
	ibv_free_device_list(list);
	return ret;
}

static const struct openrdma_param_def verbs_params[] = {
	{ "reg_cache", OPENRDMA_PARAM_BOOL, "no",
	  "MRs of the same range, access and PD share one registration "
	  "(and keys) while any of them lives" },
	{ "resolve_timeout_ms", OPENRDMA_PARAM_INT, "2000",
	  "address and route resolution timeout of a connect (1-600000 ms)" },
	{ 0 },
};

/* Keep each group sorted. */
static const struct openrdma_transport_ops verbs_ops = {
	.context_close = verbs_context_close,
	.device_query = verbs_device_query,
	.gid_query = verbs_gid_query,
	.port_query = verbs_port_query,

	.mr_dereg = verbs_mr_dereg,
	.mr_reg = verbs_mr_reg,
	.mr_rereg = verbs_mr_rereg,
	.mw_alloc = verbs_mw_alloc,
	.mw_dealloc = verbs_mw_dealloc,
	.pd_alloc = verbs_pd_alloc,
	.pd_dealloc = verbs_pd_dealloc,

	.ah_attr_from_wc = verbs_ah_attr_from_wc,
	.ah_create = verbs_ah_create,
	.ah_destroy = verbs_ah_destroy,

	.cq_create = verbs_cq_create,
	.cq_destroy = verbs_cq_destroy,
	.cq_poll = verbs_cq_poll,
	.cq_req_notify = verbs_cq_req_notify,
	.cq_resize = verbs_cq_resize,

	.qp_create = verbs_qp_create,
	.qp_destroy = verbs_qp_destroy,
	.qp_modify = verbs_qp_modify,
	.qp_post_recv = verbs_qp_post_recv,
	.qp_post_send = verbs_qp_post_send,
	.qp_query = verbs_qp_query,

	.srq_create = verbs_srq_create,
	.srq_destroy = verbs_srq_destroy,
	.srq_modify = verbs_srq_modify,
	.srq_post_recv = verbs_srq_post_recv,
	.srq_query = verbs_srq_query,

	.cm_accept = verbs_cm_accept,
	.cm_connect = verbs_cm_connect,
	.cm_disconnect = verbs_cm_disconnect,
	.cm_id_create = verbs_cm_id_create,
	.cm_id_destroy = verbs_cm_id_destroy,
	.cm_listen = verbs_cm_listen,
	.cm_local_addr = verbs_cm_local_addr,
	.cm_peer_addr = verbs_cm_peer_addr,
	.cm_reject = verbs_cm_reject,
};

static const struct openrdma_transport verbs_transport = {
	.abi_version = OPENRDMA_TRANSPORT_ABI,
	.size = sizeof(struct openrdma_transport),
	.name = "verbs",
	.description = "kernel RDMA devices through rdma-core "
		       "(InfiniBand, RoCE, iWARP)",
	.probe = verbs_probe,
	.device_open = verbs_device_open,
	.ops = &verbs_ops,
	.params = verbs_params,
};

OPENRDMA_TRANSPORT_DEFINE(verbs, verbs_transport);
