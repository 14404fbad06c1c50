/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The shm transport's descriptor: its probe, its parameters and its
 * operations.  See openrdma_shm(7).
 */
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "transports/shm/shm.h"

/* What the transport needs from the kernel, tried for real. */
static int shm_probe(struct openrdma_probe *probe)
{
	struct shm_seg seg = { .fd = -1 };
	int fd, ret;

	ret = shm_seg_create("openrdma-shm-probe", SHM_PAGE, &seg);
	if (ret) {
		openrdma_probe_explain(probe, "memfd_create: %s",
				       openrdma_strerror(ret));
		return 0;
	}
	fd = shm_seg_ro_fd(&seg);
	shm_seg_destroy(&seg);
	if (fd < 0) {
		openrdma_probe_explain(probe,
				       "cannot reopen a memfd read-only "
				       "(/proc/self/fd): %s",
				       openrdma_strerror(fd));
		return 0;
	}
	close(fd);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		openrdma_probe_explain(probe, "Unix sockets: %s",
				       strerror(errno));
		return 0;
	}
	close(fd);
	return openrdma_probe_device_add(probe, "shm0", "shm", SHM_PORT, NULL,
					 NULL);
}

static const struct openrdma_param_def shm_params[] = {
	{ "allow_users", OPENRDMA_PARAM_STRING, "",
	  "other users whose processes may connect: uids separated by "
	  "commas, or * for anyone (default: this user only)" },
	{ "busy_poll", OPENRDMA_PARAM_BOOL, "no",
	  "the progress thread polls the rings without ever sleeping: "
	  "lowest latency for applications that block, one CPU per "
	  "context" },
	{ "cma", OPENRDMA_PARAM_BOOL, "yes",
	  "single-copy RDMA and large sends with process_vm_readv/writev "
	  "where permitted; no: always copy through the rings" },
	{ "eager_max", OPENRDMA_PARAM_SIZE, "16k",
	  "sends up to this size are copied through the rings; larger ones "
	  "are read by the target from the sender's memory (one copy)" },
	{ "ptracer_any", OPENRDMA_PARAM_BOOL, "no",
	  "with Yama ptrace_scope 1, let any process of this user attach "
	  "(PR_SET_PTRACER_ANY) so that peers can copy directly" },
	{ "ring_data", OPENRDMA_PARAM_SIZE, "256k",
	  "bytes of each ring's data area (a power of two)" },
	{ "ring_entries", OPENRDMA_PARAM_INT, "256",
	  "messages each ring holds (a power of two)" },
	{ "rnr_timer_scale", OPENRDMA_PARAM_INT, "100",
	  "RNR retry delays in percent of the IB timer the target asked for "
	  "(1-10000)" },
	{ 0 },
};

/* Keep each group sorted. */
static const struct openrdma_transport_ops shm_ops = {
	.context_close = shm_context_close,
	.device_query = shm_device_query,
	.gid_query = shm_gid_query,
	.port_query = shm_port_query,

	.mr_dereg = shm_mr_dereg,
	.mr_reg = shm_mr_reg,
	.mr_rereg = shm_mr_rereg,
	.mw_alloc = shm_mw_alloc,
	.mw_dealloc = shm_mw_dealloc,
	.pd_alloc = shm_pd_alloc,
	.pd_dealloc = shm_pd_dealloc,

	.ah_attr_from_wc = shm_ah_attr_from_wc,
	.ah_create = shm_ah_create,
	.ah_destroy = shm_ah_destroy,

	.cq_create = shm_cq_create,
	.cq_destroy = shm_cq_destroy,
	.cq_poll = shm_cq_poll,
	.cq_req_notify = shm_cq_req_notify,
	.cq_resize = shm_cq_resize,

	.qp_create = shm_qp_create,
	.qp_destroy = shm_qp_destroy,
	.qp_modify = shm_qp_modify,
	.qp_post_recv = shm_qp_post_recv,
	.qp_post_send = shm_qp_post_send,
	.qp_query = shm_qp_query,

	.srq_create = shm_srq_create,
	.srq_destroy = shm_srq_destroy,
	.srq_modify = shm_srq_modify,
	.srq_post_recv = shm_srq_post_recv,
	.srq_query = shm_srq_query,

	.cm_accept = shm_cm_accept,
	.cm_connect = shm_cm_connect,
	.cm_disconnect = shm_cm_disconnect,
	.cm_id_create = shm_cm_id_create,
	.cm_id_destroy = shm_cm_id_destroy,
	.cm_listen = shm_cm_listen,
	.cm_local_addr = shm_cm_local_addr,
	.cm_peer_addr = shm_cm_peer_addr,
	.cm_reject = shm_cm_reject,
};

static const struct openrdma_transport shm_transport = {
	.abi_version = OPENRDMA_TRANSPORT_ABI,
	.size = sizeof(struct openrdma_transport),
	.name = "shm",
	.description = "intra-host shared memory, single-copy RDMA",
	.probe = shm_probe,
	.device_open = shm_device_open,
	.ops = &shm_ops,
	.params = shm_params,
};

OPENRDMA_TRANSPORT_DEFINE(shm, shm_transport);
