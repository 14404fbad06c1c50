/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The self transport's descriptor: its probe, its parameters and its
 * operations.  Operations left out (cq_req_notify) are filled by the
 * registry with -OPENRDMA_EOPNOTSUPP stubs; the core arms CQs itself.
 */
#include "transports/self/self.h"

static int self_probe(struct openrdma_probe *probe)
{
	/* nothing to look for: the loopback device always exists */
	return openrdma_probe_device_add(probe, "self0", "self", SELF_PORT,
					 NULL, NULL);
}

static const struct openrdma_param_def self_params[] = {
	{ "rnr_timer_scale", OPENRDMA_PARAM_INT, "100",
	  "RNR retry delays in percent of the IB timer the target asked for "
	  "(1-10000)" },
	{ "port_event", OPENRDMA_PARAM_BOOL, "no",
	  "queue PORT_ACTIVE on a context's async-event queue when it opens" },
	{ 0 },
};

/* Keep each group sorted. */
static const struct openrdma_transport_ops self_ops = {
	.context_close = self_context_close,
	.device_query = self_device_query,
	.gid_query = self_gid_query,
	.port_query = self_port_query,

	.mr_dereg = self_mr_dereg,
	.mr_reg = self_mr_reg,
	.mr_rereg = self_mr_rereg,
	.mw_alloc = self_mw_alloc,
	.mw_dealloc = self_mw_dealloc,
	.pd_alloc = self_pd_alloc,
	.pd_dealloc = self_pd_dealloc,

	.ah_attr_from_wc = self_ah_attr_from_wc,
	.ah_create = self_ah_create,
	.ah_destroy = self_ah_destroy,

	.cq_create = self_cq_create,
	.cq_destroy = self_cq_destroy,
	.cq_poll = self_cq_poll,
	.cq_resize = self_cq_resize,

	.qp_create = self_qp_create,
	.qp_destroy = self_qp_destroy,
	.qp_modify = self_qp_modify,
	.qp_post_recv = self_qp_post_recv,
	.qp_post_send = self_qp_post_send,
	.qp_query = self_qp_query,

	.srq_create = self_srq_create,
	.srq_destroy = self_srq_destroy,
	.srq_modify = self_srq_modify,
	.srq_post_recv = self_srq_post_recv,
	.srq_query = self_srq_query,

	.cm_accept = self_cm_accept,
	.cm_connect = self_cm_connect,
	.cm_disconnect = self_cm_disconnect,
	.cm_id_create = self_cm_id_create,
	.cm_id_destroy = self_cm_id_destroy,
	.cm_listen = self_cm_listen,
	.cm_local_addr = self_cm_local_addr,
	.cm_peer_addr = self_cm_peer_addr,
	.cm_reject = self_cm_reject,
};

static const struct openrdma_transport self_transport = {
	.abi_version = OPENRDMA_TRANSPORT_ABI,
	.size = sizeof(struct openrdma_transport),
	.name = "self",
	.description = "in-process loopback",
	.probe = self_probe,
	.device_open = self_device_open,
	.ops = &self_ops,
	.params = self_params,
};

OPENRDMA_TRANSPORT_DEFINE(self, self_transport);
