/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The core's values and layouts against libibverbs'.  The verbs transport
 * casts opcodes, statuses, flags, states, masks and event types, and
 * passes SGEs, receive work requests, completions and GRHs to libibverbs
 * without copying them: this file fails to compile if any of that stops
 * being true.
 */
#include <stddef.h>

#include "transports/verbs/verbs.h"

#define SAME_VALUE(a, b) _Static_assert((int)(a) == (int)(b), #a " != " #b)
#define SAME_SIZE(a, b) \
	_Static_assert(sizeof(a) == sizeof(b), "sizeof " #a " != " #b)
#define SAME_FIELD(a, b, fa, fb)                                             \
	_Static_assert(offsetof(a, fa) == offsetof(b, fb) &&                 \
			       sizeof(((a *)0)->fa) == sizeof(((b *)0)->fb), \
		       #a "." #fa " differs from " #b "." #fb)

/* work-request opcodes */
SAME_VALUE(OPENRDMA_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE);
SAME_VALUE(OPENRDMA_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_WRITE_WITH_IMM);
SAME_VALUE(OPENRDMA_WR_SEND, IBV_WR_SEND);
SAME_VALUE(OPENRDMA_WR_SEND_WITH_IMM, IBV_WR_SEND_WITH_IMM);
SAME_VALUE(OPENRDMA_WR_RDMA_READ, IBV_WR_RDMA_READ);
SAME_VALUE(OPENRDMA_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_CMP_AND_SWP);
SAME_VALUE(OPENRDMA_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_ATOMIC_FETCH_AND_ADD);
SAME_VALUE(OPENRDMA_WR_LOCAL_INV, IBV_WR_LOCAL_INV);
SAME_VALUE(OPENRDMA_WR_BIND_MW, IBV_WR_BIND_MW);
SAME_VALUE(OPENRDMA_WR_SEND_WITH_INV, IBV_WR_SEND_WITH_INV);

/* send flags */
SAME_VALUE(OPENRDMA_SEND_FENCE, IBV_SEND_FENCE);
SAME_VALUE(OPENRDMA_SEND_SIGNALED, IBV_SEND_SIGNALED);
SAME_VALUE(OPENRDMA_SEND_SOLICITED, IBV_SEND_SOLICITED);
SAME_VALUE(OPENRDMA_SEND_INLINE, IBV_SEND_INLINE);

/* completions */
SAME_VALUE(OPENRDMA_WC_SUCCESS, IBV_WC_SUCCESS);
SAME_VALUE(OPENRDMA_WC_LOC_LEN_ERR, IBV_WC_LOC_LEN_ERR);
SAME_VALUE(OPENRDMA_WC_LOC_QP_OP_ERR, IBV_WC_LOC_QP_OP_ERR);
SAME_VALUE(OPENRDMA_WC_LOC_EEC_OP_ERR, IBV_WC_LOC_EEC_OP_ERR);
SAME_VALUE(OPENRDMA_WC_LOC_PROT_ERR, IBV_WC_LOC_PROT_ERR);
SAME_VALUE(OPENRDMA_WC_WR_FLUSH_ERR, IBV_WC_WR_FLUSH_ERR);
SAME_VALUE(OPENRDMA_WC_MW_BIND_ERR, IBV_WC_MW_BIND_ERR);
SAME_VALUE(OPENRDMA_WC_BAD_RESP_ERR, IBV_WC_BAD_RESP_ERR);
SAME_VALUE(OPENRDMA_WC_LOC_ACCESS_ERR, IBV_WC_LOC_ACCESS_ERR);
SAME_VALUE(OPENRDMA_WC_REM_INV_REQ_ERR, IBV_WC_REM_INV_REQ_ERR);
SAME_VALUE(OPENRDMA_WC_REM_ACCESS_ERR, IBV_WC_REM_ACCESS_ERR);
SAME_VALUE(OPENRDMA_WC_REM_OP_ERR, IBV_WC_REM_OP_ERR);
SAME_VALUE(OPENRDMA_WC_RETRY_EXC_ERR, IBV_WC_RETRY_EXC_ERR);
SAME_VALUE(OPENRDMA_WC_RNR_RETRY_EXC_ERR, IBV_WC_RNR_RETRY_EXC_ERR);
SAME_VALUE(OPENRDMA_WC_LOC_RDD_VIOL_ERR, IBV_WC_LOC_RDD_VIOL_ERR);
SAME_VALUE(OPENRDMA_WC_REM_INV_RD_REQ_ERR, IBV_WC_REM_INV_RD_REQ_ERR);
SAME_VALUE(OPENRDMA_WC_REM_ABORT_ERR, IBV_WC_REM_ABORT_ERR);
SAME_VALUE(OPENRDMA_WC_INV_EECN_ERR, IBV_WC_INV_EECN_ERR);
SAME_VALUE(OPENRDMA_WC_INV_EEC_STATE_ERR, IBV_WC_INV_EEC_STATE_ERR);
SAME_VALUE(OPENRDMA_WC_FATAL_ERR, IBV_WC_FATAL_ERR);
SAME_VALUE(OPENRDMA_WC_RESP_TIMEOUT_ERR, IBV_WC_RESP_TIMEOUT_ERR);
SAME_VALUE(OPENRDMA_WC_GENERAL_ERR, IBV_WC_GENERAL_ERR);
SAME_VALUE(OPENRDMA_WC_SEND, IBV_WC_SEND);
SAME_VALUE(OPENRDMA_WC_RDMA_WRITE, IBV_WC_RDMA_WRITE);
SAME_VALUE(OPENRDMA_WC_RDMA_READ, IBV_WC_RDMA_READ);
SAME_VALUE(OPENRDMA_WC_COMP_SWAP, IBV_WC_COMP_SWAP);
SAME_VALUE(OPENRDMA_WC_FETCH_ADD, IBV_WC_FETCH_ADD);
SAME_VALUE(OPENRDMA_WC_BIND_MW, IBV_WC_BIND_MW);
SAME_VALUE(OPENRDMA_WC_LOCAL_INV, IBV_WC_LOCAL_INV);
SAME_VALUE(OPENRDMA_WC_RECV, IBV_WC_RECV);
SAME_VALUE(OPENRDMA_WC_RECV_RDMA_WITH_IMM, IBV_WC_RECV_RDMA_WITH_IMM);
SAME_VALUE(OPENRDMA_WC_GRH, IBV_WC_GRH);
SAME_VALUE(OPENRDMA_WC_WITH_IMM, IBV_WC_WITH_IMM);
SAME_VALUE(OPENRDMA_WC_WITH_INV, IBV_WC_WITH_INV);

/* memory */
SAME_VALUE(OPENRDMA_ACCESS_LOCAL_WRITE, IBV_ACCESS_LOCAL_WRITE);
SAME_VALUE(OPENRDMA_ACCESS_REMOTE_WRITE, IBV_ACCESS_REMOTE_WRITE);
SAME_VALUE(OPENRDMA_ACCESS_REMOTE_READ, IBV_ACCESS_REMOTE_READ);
SAME_VALUE(OPENRDMA_ACCESS_REMOTE_ATOMIC, IBV_ACCESS_REMOTE_ATOMIC);
SAME_VALUE(OPENRDMA_ACCESS_MW_BIND, IBV_ACCESS_MW_BIND);
SAME_VALUE(OPENRDMA_ACCESS_ZERO_BASED, IBV_ACCESS_ZERO_BASED);
SAME_VALUE(OPENRDMA_MW_TYPE_1, IBV_MW_TYPE_1);
SAME_VALUE(OPENRDMA_MW_TYPE_2, IBV_MW_TYPE_2);

/* QPs */
SAME_VALUE(OPENRDMA_QPT_RC, IBV_QPT_RC);
SAME_VALUE(OPENRDMA_QPT_UD, IBV_QPT_UD);
SAME_VALUE(OPENRDMA_QPS_RESET, IBV_QPS_RESET);
SAME_VALUE(OPENRDMA_QPS_INIT, IBV_QPS_INIT);
SAME_VALUE(OPENRDMA_QPS_RTR, IBV_QPS_RTR);
SAME_VALUE(OPENRDMA_QPS_RTS, IBV_QPS_RTS);
SAME_VALUE(OPENRDMA_QPS_SQD, IBV_QPS_SQD);
SAME_VALUE(OPENRDMA_QPS_SQE, IBV_QPS_SQE);
SAME_VALUE(OPENRDMA_QPS_ERR, IBV_QPS_ERR);
SAME_VALUE(OPENRDMA_QPS_UNKNOWN, IBV_QPS_UNKNOWN);
SAME_VALUE(OPENRDMA_MTU_256, IBV_MTU_256);
SAME_VALUE(OPENRDMA_MTU_4096, IBV_MTU_4096);
SAME_VALUE(OPENRDMA_QP_STATE, IBV_QP_STATE);
SAME_VALUE(OPENRDMA_QP_CUR_STATE, IBV_QP_CUR_STATE);
SAME_VALUE(OPENRDMA_QP_EN_SQD_ASYNC_NOTIFY, IBV_QP_EN_SQD_ASYNC_NOTIFY);
SAME_VALUE(OPENRDMA_QP_ACCESS_FLAGS, IBV_QP_ACCESS_FLAGS);
SAME_VALUE(OPENRDMA_QP_PKEY_INDEX, IBV_QP_PKEY_INDEX);
SAME_VALUE(OPENRDMA_QP_PORT, IBV_QP_PORT);
SAME_VALUE(OPENRDMA_QP_QKEY, IBV_QP_QKEY);
SAME_VALUE(OPENRDMA_QP_AV, IBV_QP_AV);
SAME_VALUE(OPENRDMA_QP_PATH_MTU, IBV_QP_PATH_MTU);
SAME_VALUE(OPENRDMA_QP_TIMEOUT, IBV_QP_TIMEOUT);
SAME_VALUE(OPENRDMA_QP_RETRY_CNT, IBV_QP_RETRY_CNT);
SAME_VALUE(OPENRDMA_QP_RNR_RETRY, IBV_QP_RNR_RETRY);
SAME_VALUE(OPENRDMA_QP_RQ_PSN, IBV_QP_RQ_PSN);
SAME_VALUE(OPENRDMA_QP_MAX_QP_RD_ATOMIC, IBV_QP_MAX_QP_RD_ATOMIC);
SAME_VALUE(OPENRDMA_QP_ALT_PATH, IBV_QP_ALT_PATH);
SAME_VALUE(OPENRDMA_QP_MIN_RNR_TIMER, IBV_QP_MIN_RNR_TIMER);
SAME_VALUE(OPENRDMA_QP_SQ_PSN, IBV_QP_SQ_PSN);
SAME_VALUE(OPENRDMA_QP_MAX_DEST_RD_ATOMIC, IBV_QP_MAX_DEST_RD_ATOMIC);
SAME_VALUE(OPENRDMA_QP_PATH_MIG_STATE, IBV_QP_PATH_MIG_STATE);
SAME_VALUE(OPENRDMA_QP_CAP, IBV_QP_CAP);
SAME_VALUE(OPENRDMA_QP_DEST_QPN, IBV_QP_DEST_QPN);
SAME_VALUE(OPENRDMA_REREG_CHANGE_TRANSLATION, IBV_REREG_MR_CHANGE_TRANSLATION);
SAME_VALUE(OPENRDMA_REREG_CHANGE_PD, IBV_REREG_MR_CHANGE_PD);
SAME_VALUE(OPENRDMA_REREG_CHANGE_ACCESS, IBV_REREG_MR_CHANGE_ACCESS);
SAME_VALUE(OPENRDMA_SRQ_MAX_WR, IBV_SRQ_MAX_WR);
SAME_VALUE(OPENRDMA_SRQ_LIMIT, IBV_SRQ_LIMIT);

/* ports and devices */
SAME_VALUE(OPENRDMA_PORT_DOWN, IBV_PORT_DOWN);
SAME_VALUE(OPENRDMA_PORT_ACTIVE, IBV_PORT_ACTIVE);
SAME_VALUE(OPENRDMA_PORT_ACTIVE_DEFER, IBV_PORT_ACTIVE_DEFER);
SAME_VALUE(OPENRDMA_LINK_LAYER_INFINIBAND, IBV_LINK_LAYER_INFINIBAND);
SAME_VALUE(OPENRDMA_LINK_LAYER_ETHERNET, IBV_LINK_LAYER_ETHERNET);
SAME_VALUE(OPENRDMA_ATOMIC_NONE, IBV_ATOMIC_NONE);
SAME_VALUE(OPENRDMA_ATOMIC_HCA, IBV_ATOMIC_HCA);
SAME_VALUE(OPENRDMA_ATOMIC_GLOB, IBV_ATOMIC_GLOB);

/* async events */
SAME_VALUE(OPENRDMA_EVENT_CQ_ERR, IBV_EVENT_CQ_ERR);
SAME_VALUE(OPENRDMA_EVENT_QP_FATAL, IBV_EVENT_QP_FATAL);
SAME_VALUE(OPENRDMA_EVENT_QP_REQ_ERR, IBV_EVENT_QP_REQ_ERR);
SAME_VALUE(OPENRDMA_EVENT_QP_ACCESS_ERR, IBV_EVENT_QP_ACCESS_ERR);
SAME_VALUE(OPENRDMA_EVENT_COMM_EST, IBV_EVENT_COMM_EST);
SAME_VALUE(OPENRDMA_EVENT_SQ_DRAINED, IBV_EVENT_SQ_DRAINED);
SAME_VALUE(OPENRDMA_EVENT_PATH_MIG, IBV_EVENT_PATH_MIG);
SAME_VALUE(OPENRDMA_EVENT_PATH_MIG_ERR, IBV_EVENT_PATH_MIG_ERR);
SAME_VALUE(OPENRDMA_EVENT_DEVICE_FATAL, IBV_EVENT_DEVICE_FATAL);
SAME_VALUE(OPENRDMA_EVENT_PORT_ACTIVE, IBV_EVENT_PORT_ACTIVE);
SAME_VALUE(OPENRDMA_EVENT_PORT_ERR, IBV_EVENT_PORT_ERR);
SAME_VALUE(OPENRDMA_EVENT_LID_CHANGE, IBV_EVENT_LID_CHANGE);
SAME_VALUE(OPENRDMA_EVENT_PKEY_CHANGE, IBV_EVENT_PKEY_CHANGE);
SAME_VALUE(OPENRDMA_EVENT_SM_CHANGE, IBV_EVENT_SM_CHANGE);
SAME_VALUE(OPENRDMA_EVENT_SRQ_ERR, IBV_EVENT_SRQ_ERR);
SAME_VALUE(OPENRDMA_EVENT_SRQ_LIMIT_REACHED, IBV_EVENT_SRQ_LIMIT_REACHED);
SAME_VALUE(OPENRDMA_EVENT_QP_LAST_WQE_REACHED, IBV_EVENT_QP_LAST_WQE_REACHED);
SAME_VALUE(OPENRDMA_EVENT_CLIENT_REREGISTER, IBV_EVENT_CLIENT_REREGISTER);
SAME_VALUE(OPENRDMA_EVENT_GID_CHANGE, IBV_EVENT_GID_CHANGE);

/* CM */
SAME_VALUE(OPENRDMA_PS_TCP, RDMA_PS_TCP);
SAME_VALUE(OPENRDMA_PS_UDP, RDMA_PS_UDP);
SAME_VALUE(OPENRDMA_CM_EVENT_CONNECT_REQUEST, RDMA_CM_EVENT_CONNECT_REQUEST);
SAME_VALUE(OPENRDMA_CM_EVENT_TIMEWAIT_EXIT, RDMA_CM_EVENT_TIMEWAIT_EXIT);

/* passed through without a copy */
SAME_SIZE(struct openrdma_sge, struct ibv_sge);
SAME_FIELD(struct openrdma_sge, struct ibv_sge, addr, addr);
SAME_FIELD(struct openrdma_sge, struct ibv_sge, length, length);
SAME_FIELD(struct openrdma_sge, struct ibv_sge, lkey, lkey);

SAME_SIZE(struct openrdma_recv_wr, struct ibv_recv_wr);
SAME_FIELD(struct openrdma_recv_wr, struct ibv_recv_wr, wr_id, wr_id);
SAME_FIELD(struct openrdma_recv_wr, struct ibv_recv_wr, next, next);
SAME_FIELD(struct openrdma_recv_wr, struct ibv_recv_wr, sg_list, sg_list);
SAME_FIELD(struct openrdma_recv_wr, struct ibv_recv_wr, num_sge, num_sge);

SAME_SIZE(struct openrdma_wc, struct ibv_wc);
SAME_FIELD(struct openrdma_wc, struct ibv_wc, wr_id, wr_id);
SAME_FIELD(struct openrdma_wc, struct ibv_wc, status, status);
SAME_FIELD(struct openrdma_wc, struct ibv_wc, opcode, opcode);
SAME_FIELD(struct openrdma_wc, struct ibv_wc, vendor_err, vendor_err);
SAME_FIELD(struct openrdma_wc, struct ibv_wc, byte_len, byte_len);
SAME_FIELD(struct openrdma_wc, struct ibv_wc, imm_data, imm_data);
SAME_FIELD(struct openrdma_wc, struct ibv_wc, qp_num, qp_num);
SAME_FIELD(struct openrdma_wc, struct ibv_wc, src_qp, src_qp);
SAME_FIELD(struct openrdma_wc, struct ibv_wc, wc_flags, wc_flags);
SAME_FIELD(struct openrdma_wc, struct ibv_wc, pkey_index, pkey_index);
SAME_FIELD(struct openrdma_wc, struct ibv_wc, slid, slid);
SAME_FIELD(struct openrdma_wc, struct ibv_wc, sl, sl);
SAME_FIELD(struct openrdma_wc, struct ibv_wc, dlid_path_bits, dlid_path_bits);

SAME_SIZE(struct openrdma_grh, struct ibv_grh);
SAME_FIELD(struct openrdma_grh, struct ibv_grh, version_tclass_flow,
	   version_tclass_flow);
SAME_FIELD(struct openrdma_grh, struct ibv_grh, paylen, paylen);
SAME_FIELD(struct openrdma_grh, struct ibv_grh, next_hdr, next_hdr);
SAME_FIELD(struct openrdma_grh, struct ibv_grh, hop_limit, hop_limit);
SAME_FIELD(struct openrdma_grh, struct ibv_grh, sgid, sgid);
SAME_FIELD(struct openrdma_grh, struct ibv_grh, dgid, dgid);
SAME_SIZE(union openrdma_gid, union ibv_gid);

/* the send WR's remote part is copied as one block, then fixed for UD */
SAME_SIZE(((struct openrdma_send_wr *)0)->wr, ((struct ibv_send_wr *)0)->wr);
_Static_assert(offsetof(struct ibv_send_wr, wr.rdma.remote_addr) -
			       offsetof(struct ibv_send_wr, wr) ==
		       offsetof(struct openrdma_send_wr, wr.rdma.remote_addr) -
			       offsetof(struct openrdma_send_wr, wr),
	       "rdma.remote_addr");
_Static_assert(offsetof(struct ibv_send_wr, wr.rdma.rkey) -
			       offsetof(struct ibv_send_wr, wr) ==
		       offsetof(struct openrdma_send_wr, wr.rdma.rkey) -
			       offsetof(struct openrdma_send_wr, wr),
	       "rdma.rkey");
_Static_assert(offsetof(struct ibv_send_wr, wr.atomic.compare_add) -
			       offsetof(struct ibv_send_wr, wr) ==
		       offsetof(struct openrdma_send_wr,
				wr.atomic.compare_add) -
			       offsetof(struct openrdma_send_wr, wr),
	       "atomic.compare_add");
_Static_assert(offsetof(struct ibv_send_wr, wr.atomic.swap) -
			       offsetof(struct ibv_send_wr, wr) ==
		       offsetof(struct openrdma_send_wr, wr.atomic.swap) -
			       offsetof(struct openrdma_send_wr, wr),
	       "atomic.swap");
_Static_assert(offsetof(struct ibv_send_wr, wr.atomic.rkey) -
			       offsetof(struct ibv_send_wr, wr) ==
		       offsetof(struct openrdma_send_wr, wr.atomic.rkey) -
			       offsetof(struct openrdma_send_wr, wr),
	       "atomic.rkey");
_Static_assert(offsetof(struct ibv_send_wr, wr.ud.remote_qpn) -
			       offsetof(struct ibv_send_wr, wr) ==
		       offsetof(struct openrdma_send_wr, wr.ud.remote_qpn) -
			       offsetof(struct openrdma_send_wr, wr),
	       "ud.remote_qpn");
_Static_assert(offsetof(struct ibv_send_wr, wr.ud.remote_qkey) -
			       offsetof(struct ibv_send_wr, wr) ==
		       offsetof(struct openrdma_send_wr, wr.ud.remote_qkey) -
			       offsetof(struct openrdma_send_wr, wr),
	       "ud.remote_qkey");
