/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The modify-QP state table and the checks of a modify request.
 *
 * Beyond the specification's table, OPENRDMA_QP_CAP (resizing the work
 * queues) is allowed while a QP is brought up, and for UD also once it
 * runs; an RC QP that is connected keeps its queues.
 */
#include <stdbool.h>
#include <sys/socket.h>

#include <openrdma/log.h>

#include "core/qp_state.h"

enum { QPT_RC, QPT_UD, QPT_NUM };

struct transition {
	bool valid[QPT_NUM];
	uint32_t req[QPT_NUM];
	uint32_t opt[QPT_NUM];
};

/* Transitions to RESET and ERR are legal from anywhere and take no bits. */
static const struct transition qp_table[OPENRDMA_QPS_ERR + 1]
				       [OPENRDMA_QPS_ERR + 1] = {
	[OPENRDMA_QPS_RESET] = {
		[OPENRDMA_QPS_INIT] = {
			.valid = { [QPT_RC] = true, [QPT_UD] = true },
			.req = {
				[QPT_RC] = OPENRDMA_QP_PKEY_INDEX |
					   OPENRDMA_QP_PORT |
					   OPENRDMA_QP_ACCESS_FLAGS,
				[QPT_UD] = OPENRDMA_QP_PKEY_INDEX |
					   OPENRDMA_QP_PORT | OPENRDMA_QP_QKEY,
			},
			.opt = {
				[QPT_RC] = OPENRDMA_QP_CAP,
				[QPT_UD] = OPENRDMA_QP_CAP,
			},
		},
	},
	[OPENRDMA_QPS_INIT] = {
		[OPENRDMA_QPS_INIT] = {
			.valid = { [QPT_RC] = true, [QPT_UD] = true },
			.opt = {
				[QPT_RC] = OPENRDMA_QP_PKEY_INDEX |
					   OPENRDMA_QP_PORT |
					   OPENRDMA_QP_ACCESS_FLAGS |
					   OPENRDMA_QP_CAP,
				[QPT_UD] = OPENRDMA_QP_PKEY_INDEX |
					   OPENRDMA_QP_PORT | OPENRDMA_QP_QKEY |
					   OPENRDMA_QP_CAP,
			},
		},
		[OPENRDMA_QPS_RTR] = {
			.valid = { [QPT_RC] = true, [QPT_UD] = true },
			.req = {
				[QPT_RC] = OPENRDMA_QP_AV |
					   OPENRDMA_QP_PATH_MTU |
					   OPENRDMA_QP_DEST_QPN |
					   OPENRDMA_QP_RQ_PSN |
					   OPENRDMA_QP_MAX_DEST_RD_ATOMIC |
					   OPENRDMA_QP_MIN_RNR_TIMER,
			},
			.opt = {
				[QPT_RC] = OPENRDMA_QP_ALT_PATH |
					   OPENRDMA_QP_ACCESS_FLAGS |
					   OPENRDMA_QP_PKEY_INDEX |
					   OPENRDMA_QP_CAP,
				[QPT_UD] = OPENRDMA_QP_PKEY_INDEX |
					   OPENRDMA_QP_QKEY | OPENRDMA_QP_CAP,
			},
		},
	},
	[OPENRDMA_QPS_RTR] = {
		[OPENRDMA_QPS_RTS] = {
			.valid = { [QPT_RC] = true, [QPT_UD] = true },
			.req = {
				[QPT_RC] = OPENRDMA_QP_SQ_PSN |
					   OPENRDMA_QP_TIMEOUT |
					   OPENRDMA_QP_RETRY_CNT |
					   OPENRDMA_QP_RNR_RETRY |
					   OPENRDMA_QP_MAX_QP_RD_ATOMIC,
				[QPT_UD] = OPENRDMA_QP_SQ_PSN,
			},
			.opt = {
				[QPT_RC] = OPENRDMA_QP_CUR_STATE |
					   OPENRDMA_QP_ALT_PATH |
					   OPENRDMA_QP_ACCESS_FLAGS |
					   OPENRDMA_QP_MIN_RNR_TIMER |
					   OPENRDMA_QP_PATH_MIG_STATE,
				[QPT_UD] = OPENRDMA_QP_CUR_STATE |
					   OPENRDMA_QP_QKEY | OPENRDMA_QP_CAP,
			},
		},
	},
	[OPENRDMA_QPS_RTS] = {
		[OPENRDMA_QPS_RTS] = {
			.valid = { [QPT_RC] = true, [QPT_UD] = true },
			.opt = {
				[QPT_RC] = OPENRDMA_QP_CUR_STATE |
					   OPENRDMA_QP_ACCESS_FLAGS |
					   OPENRDMA_QP_ALT_PATH |
					   OPENRDMA_QP_PATH_MIG_STATE |
					   OPENRDMA_QP_MIN_RNR_TIMER,
				[QPT_UD] = OPENRDMA_QP_CUR_STATE |
					   OPENRDMA_QP_QKEY | OPENRDMA_QP_CAP,
			},
		},
		[OPENRDMA_QPS_SQD] = {
			.valid = { [QPT_RC] = true, [QPT_UD] = true },
			.opt = {
				[QPT_RC] = OPENRDMA_QP_EN_SQD_ASYNC_NOTIFY,
				[QPT_UD] = OPENRDMA_QP_EN_SQD_ASYNC_NOTIFY,
			},
		},
	},
	[OPENRDMA_QPS_SQD] = {
		[OPENRDMA_QPS_RTS] = {
			.valid = { [QPT_RC] = true, [QPT_UD] = true },
			.opt = {
				[QPT_RC] = OPENRDMA_QP_CUR_STATE |
					   OPENRDMA_QP_ALT_PATH |
					   OPENRDMA_QP_ACCESS_FLAGS |
					   OPENRDMA_QP_MIN_RNR_TIMER |
					   OPENRDMA_QP_PATH_MIG_STATE,
				[QPT_UD] = OPENRDMA_QP_CUR_STATE |
					   OPENRDMA_QP_QKEY | OPENRDMA_QP_CAP,
			},
		},
		[OPENRDMA_QPS_SQD] = {
			.valid = { [QPT_RC] = true, [QPT_UD] = true },
			.opt = {
				[QPT_RC] = OPENRDMA_QP_PORT | OPENRDMA_QP_AV |
					   OPENRDMA_QP_TIMEOUT |
					   OPENRDMA_QP_RETRY_CNT |
					   OPENRDMA_QP_RNR_RETRY |
					   OPENRDMA_QP_MAX_QP_RD_ATOMIC |
					   OPENRDMA_QP_MAX_DEST_RD_ATOMIC |
					   OPENRDMA_QP_ALT_PATH |
					   OPENRDMA_QP_ACCESS_FLAGS |
					   OPENRDMA_QP_PKEY_INDEX |
					   OPENRDMA_QP_MIN_RNR_TIMER |
					   OPENRDMA_QP_PATH_MIG_STATE,
				[QPT_UD] = OPENRDMA_QP_PKEY_INDEX |
					   OPENRDMA_QP_QKEY | OPENRDMA_QP_CAP,
			},
		},
	},
	/* Only UD QPs enter SQE (a send error); RC errors go to ERR. */
	[OPENRDMA_QPS_SQE] = {
		[OPENRDMA_QPS_RTS] = {
			.valid = { [QPT_UD] = true },
			.opt = {
				[QPT_UD] = OPENRDMA_QP_CUR_STATE |
					   OPENRDMA_QP_QKEY,
			},
		},
	},
};

int core_qp_transition(enum openrdma_qp_type type, enum openrdma_qp_state cur,
		       enum openrdma_qp_state next, uint32_t *req_out,
		       uint32_t *opt_out)
{
	const struct transition *t;
	int qpt;

	if (type == OPENRDMA_QPT_RC)
		qpt = QPT_RC;
	else if (type == OPENRDMA_QPT_UD)
		qpt = QPT_UD;
	else
		return -OPENRDMA_EINVAL;
	if ((unsigned int)cur > OPENRDMA_QPS_ERR ||
	    (unsigned int)next > OPENRDMA_QPS_ERR)
		return -OPENRDMA_EINVAL;
	/* SQE is entered on a send error only, never by a modify. */
	if (next == OPENRDMA_QPS_SQE)
		return -OPENRDMA_EINVAL;

	if (next == OPENRDMA_QPS_RESET || next == OPENRDMA_QPS_ERR) {
		*req_out = 0;
		*opt_out = 0;
		return 0;
	}
	t = &qp_table[cur][next];
	if (!t->valid[qpt])
		return -OPENRDMA_EINVAL;
	*req_out = t->req[qpt];
	*opt_out = t->opt[qpt];
	return 0;
}

/* One limit of the QP caps, for the table of core_qp_cap_check(). */
struct cap_limit {
	const char *name;
	uint32_t value;
	int max;
	bool recv;
};

int core_qp_cap_check(const struct openrdma_qp_cap *cap, bool srq,
		      const struct openrdma_device_attr *dev, const char *fn,
		      const char *arg)
{
	const struct cap_limit limits[] = {
		{ "max_send_wr", cap->max_send_wr, dev->max_qp_wr, false },
		{ "max_recv_wr", cap->max_recv_wr, dev->max_qp_wr, true },
		{ "max_send_sge", cap->max_send_sge, dev->max_sge, false },
		{ "max_recv_sge", cap->max_recv_sge, dev->max_sge, true },
		{ "max_inline_data", cap->max_inline_data, dev->max_inline_data,
		  false },
	};
	size_t i;

	for (i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		/* With an SRQ the receive caps are ignored, as in libibverbs */
		if (srq && limits[i].recv)
			continue;
		if (limits[i].value <= (uint32_t)limits[i].max)
			continue;
		openrdma_dbg("core", "%s: arg %s: %s=%u > device's %d", fn, arg,
			     limits[i].name, limits[i].value, limits[i].max);
		return -OPENRDMA_EINVAL;
	}
	return 0;
}

static int av_check(const struct openrdma_ah_attr *ah,
		    const struct openrdma_device_attr *dev)
{
	sa_family_t family = ah->addr.ss_family;

	/* port_num 0 means the QP's own port. */
	if (ah->port_num > dev->phys_port_cnt || ah->is_global > 1 ||
	    (family != AF_UNSPEC && family != AF_INET && family != AF_INET6)) {
		openrdma_dbg(
			"core",
			"qp_modify: arg attr: ah_attr port_num %u is_global %u family %u",
			ah->port_num, ah->is_global, family);
		return -OPENRDMA_EINVAL;
	}
	return 0;
}

/* The range of one attribute, checked when its mask bit is set. */
struct value_range {
	uint32_t bit;
	const char *name;
	uint32_t value;
	uint32_t min;
	uint32_t max;
};

static int values_check(const struct openrdma_qp_attr *attr, uint32_t mask,
			const struct openrdma_device_attr *dev)
{
	const uint32_t psn_max = (1u << 24) - 1;
	const uint32_t qp_access = OPENRDMA_ACCESS_REMOTE_WRITE |
				   OPENRDMA_ACCESS_REMOTE_READ |
				   OPENRDMA_ACCESS_REMOTE_ATOMIC;
	const struct value_range ranges[] = {
		{ OPENRDMA_QP_PKEY_INDEX, "pkey_index", attr->pkey_index, 0,
		  dev->max_pkeys > 1 ? (uint32_t)dev->max_pkeys - 1 : 0 },
		{ OPENRDMA_QP_PORT, "port_num", attr->port_num, 1,
		  dev->phys_port_cnt },
		{ OPENRDMA_QP_PATH_MTU, "path_mtu", attr->path_mtu,
		  OPENRDMA_MTU_256, OPENRDMA_MTU_4096 },
		{ OPENRDMA_QP_TIMEOUT, "timeout", attr->timeout, 0, 31 },
		{ OPENRDMA_QP_RETRY_CNT, "retry_cnt", attr->retry_cnt, 0, 7 },
		{ OPENRDMA_QP_RNR_RETRY, "rnr_retry", attr->rnr_retry, 0, 7 },
		{ OPENRDMA_QP_MIN_RNR_TIMER, "min_rnr_timer",
		  attr->min_rnr_timer, 0, 31 },
		{ OPENRDMA_QP_RQ_PSN, "rq_psn", attr->rq_psn, 0, psn_max },
		{ OPENRDMA_QP_SQ_PSN, "sq_psn", attr->sq_psn, 0, psn_max },
		{ OPENRDMA_QP_DEST_QPN, "dest_qp_num", attr->dest_qp_num, 0,
		  psn_max },
		{ OPENRDMA_QP_MAX_QP_RD_ATOMIC, "max_rd_atomic",
		  attr->max_rd_atomic, 0, (uint32_t)dev->max_qp_init_rd_atom },
		{ OPENRDMA_QP_MAX_DEST_RD_ATOMIC, "max_dest_rd_atomic",
		  attr->max_dest_rd_atomic, 0, (uint32_t)dev->max_qp_rd_atom },
		{ OPENRDMA_QP_EN_SQD_ASYNC_NOTIFY, "en_sqd_async_notify",
		  attr->en_sqd_async_notify, 0, 1 },
	};
	const struct value_range *r;
	size_t i;

	for (i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++) {
		r = &ranges[i];
		if (!(mask & r->bit) ||
		    (r->value >= r->min && r->value <= r->max))
			continue;
		openrdma_dbg("core", "qp_modify: arg attr: %s %u not in %u..%u",
			     r->name, r->value, r->min, r->max);
		return -OPENRDMA_EINVAL;
	}
	if ((mask & OPENRDMA_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~qp_access)) {
		openrdma_dbg(
			"core",
			"qp_modify: arg attr: qp_access_flags 0x%x beyond REMOTE_WRITE|READ|ATOMIC",
			attr->qp_access_flags);
		return -OPENRDMA_EINVAL;
	}
	if ((mask & OPENRDMA_QP_AV) && av_check(&attr->ah_attr, dev))
		return -OPENRDMA_EINVAL;
	if ((mask & OPENRDMA_QP_CAP) &&
	    core_qp_cap_check(&attr->cap, false, dev, "qp_modify", "attr->cap"))
		return -OPENRDMA_EINVAL;
	return 0;
}

int core_qp_modify_check(enum openrdma_qp_type type, enum openrdma_qp_state cur,
			 const struct openrdma_qp_attr *attr, int attr_mask,
			 const struct openrdma_device_attr *dev)
{
	uint32_t mask = (uint32_t)attr_mask, req, opt;
	enum openrdma_qp_state next = cur;

	if (mask & ~(uint32_t)OPENRDMA_QP_ATTR_MASK_ALL) {
		openrdma_dbg("core",
			     "qp_modify: arg attr_mask: unknown bits 0x%x",
			     mask & ~(uint32_t)OPENRDMA_QP_ATTR_MASK_ALL);
		return -OPENRDMA_EINVAL;
	}
	/* Without STATE, the QP stays where it is and changes attributes. */
	if (mask & OPENRDMA_QP_STATE)
		next = attr->qp_state;
	if (core_qp_transition(type, cur, next, &req, &opt)) {
		openrdma_dbg("core", "qp_modify: arg attr: %s -> %s illegal",
			     openrdma_qp_state_str(cur),
			     openrdma_qp_state_str(next));
		return -OPENRDMA_EINVAL;
	}
	mask &= ~(uint32_t)OPENRDMA_QP_STATE;
	if ((mask & req) != req) {
		openrdma_dbg("core",
			     "qp_modify: arg attr_mask: %s -> %s needs 0x%x",
			     openrdma_qp_state_str(cur),
			     openrdma_qp_state_str(next), req & ~mask);
		return -OPENRDMA_EINVAL;
	}
	if (mask & ~(req | opt)) {
		openrdma_dbg(
			"core",
			"qp_modify: arg attr_mask: 0x%x not allowed in %s -> %s",
			mask & ~(req | opt), openrdma_qp_state_str(cur),
			openrdma_qp_state_str(next));
		return -OPENRDMA_EINVAL;
	}
	if ((mask & OPENRDMA_QP_CUR_STATE) && attr->cur_qp_state != cur) {
		openrdma_dbg(
			"core",
			"qp_modify: arg attr: cur_qp_state %s, QP is in %s",
			openrdma_qp_state_str(attr->cur_qp_state),
			openrdma_qp_state_str(cur));
		return -OPENRDMA_EINVAL;
	}
	if (values_check(attr, mask, dev))
		return -OPENRDMA_EINVAL;
	/* Legal, but struct openrdma_qp_attr has no alternate path. */
	if (mask & (OPENRDMA_QP_ALT_PATH | OPENRDMA_QP_PATH_MIG_STATE)) {
		openrdma_dbg("core", "qp_modify: alternate paths unsupported");
		return -OPENRDMA_EOPNOTSUPP;
	}
	return 0;
}
