/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The tcp transport's descriptor: its probe, its parameters and its
 * operations.  cq_req_notify only takes note that the application will
 * sleep on the channel (tcp_poll.c): the core arms CQs itself.
 */
#include "transports/tcp/tcp.h"

static int tcp_probe(struct openrdma_probe *probe)
{
	/* every host has addresses, loopback at least: tcp0 listens on all
	 * of them; interfaces bound to one netdev come from the config file */
	return openrdma_probe_device_add(probe, "tcp0", tcp_iface_all, TCP_PORT,
					 (void *)tcp_iface_all, NULL);
}

static const struct openrdma_param_def tcp_params[] = {
	{ "keepalive_ms", OPENRDMA_PARAM_INT, "3000",
	  "a connection whose peer sent nothing for this long is dead; "
	  "keepalives go out every third of it (100-3600000)" },
	{ "connect_timeout_ms", OPENRDMA_PARAM_INT, "5000",
	  "how long connection set-up may take (100-3600000)" },
	{ "ack_delay_us", OPENRDMA_PARAM_INT, "20",
	  "how long a target holds an acknowledgement back to carry it on "
	  "its next frame (0-100000)" },
	{ "rnr_timer_scale", OPENRDMA_PARAM_INT, "100",
	  "RNR retry delays in percent of the IB timer the target asked for "
	  "(1-10000)" },
	{ "busy_poll", OPENRDMA_PARAM_BOOL, "no",
	  "the progress thread spins on its sockets instead of sleeping "
	  "(lower latency, one CPU busy per context)" },
	{ "nodelay", OPENRDMA_PARAM_BOOL, "yes",
	  "TCP_NODELAY on connections (frames are batched already)" },
	{ "rx_buffer", OPENRDMA_PARAM_SIZE, "64k",
	  "staging buffer of a connection for headers and small payloads "
	  "(4k-16m)" },
	{ "sndbuf", OPENRDMA_PARAM_SIZE, "0",
	  "SO_SNDBUF of connections; 0: the kernel's autotuning" },
	{ "rcvbuf", OPENRDMA_PARAM_SIZE, "0",
	  "SO_RCVBUF of connections; 0: the kernel's autotuning" },
	{ 0 },
};

/* Keep each group sorted. */
static const struct openrdma_transport_ops tcp_ops = {
	.context_close = tcp_context_close,
	.device_query = tcp_device_query,
	.gid_query = tcp_gid_query,
	.port_query = tcp_port_query,

	.mr_dereg = tcp_mr_dereg,
	.mr_reg = tcp_mr_reg,
	.mr_rereg = tcp_mr_rereg,
	.mw_alloc = tcp_mw_alloc,
	.mw_dealloc = tcp_mw_dealloc,
	.pd_alloc = tcp_pd_alloc,
	.pd_dealloc = tcp_pd_dealloc,

	.ah_attr_from_wc = tcp_ah_attr_from_wc,
	.ah_create = tcp_ah_create,
	.ah_destroy = tcp_ah_destroy,

	.cq_create = tcp_cq_create,
	.cq_destroy = tcp_cq_destroy,
	.cq_poll = tcp_cq_poll,
	.cq_req_notify = tcp_cq_req_notify,
	.cq_resize = tcp_cq_resize,
	.cq_sleep_begin = tcp_cq_sleep_begin,
	.cq_sleep_end = tcp_cq_sleep_end,

	.qp_create = tcp_qp_create,
	.qp_destroy = tcp_qp_destroy,
	.qp_modify = tcp_qp_modify,
	.qp_post_recv = tcp_qp_post_recv,
	.qp_post_send = tcp_qp_post_send,
	.qp_query = tcp_qp_query,

	.srq_create = tcp_srq_create,
	.srq_destroy = tcp_srq_destroy,
	.srq_modify = tcp_srq_modify,
	.srq_post_recv = tcp_srq_post_recv,
	.srq_query = tcp_srq_query,

	.cm_accept = tcp_cm_accept,
	.cm_adopt = tcp_cm_adopt,
	.cm_connect = tcp_cm_connect,
	.cm_disconnect = tcp_cm_disconnect,
	.cm_id_create = tcp_cm_id_create,
	.cm_id_destroy = tcp_cm_id_destroy,
	.cm_listen = tcp_cm_listen,
	.cm_local_addr = tcp_cm_local_addr,
	.cm_peer_addr = tcp_cm_peer_addr,
	.cm_reject = tcp_cm_reject,
};

static const struct openrdma_transport tcp_transport = {
	.abi_version = OPENRDMA_TRANSPORT_ABI,
	.size = sizeof(struct openrdma_transport),
	.name = "tcp",
	.description = "software RNIC over TCP and UDP",
	.probe = tcp_probe,
	.device_open = tcp_device_open,
	.ops = &tcp_ops,
	.params = tcp_params,
};

OPENRDMA_TRANSPORT_DEFINE(tcp, tcp_transport);
