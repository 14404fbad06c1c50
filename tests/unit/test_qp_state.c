/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The modify-QP state table (core/qp_state.c): legal transitions with their
 * required and optional masks, illegal transitions and masks, and the
 * checks of attribute values.
 */
#include <criterion/criterion.h>
#include <string.h>
#include <sys/socket.h>

#include "core/qp_state.h"

#define EINV (-OPENRDMA_EINVAL)
#define NSTATES (OPENRDMA_QPS_ERR + 1)
/* Legal bits with no field in struct openrdma_qp_attr. */
#define ALT (OPENRDMA_QP_ALT_PATH | OPENRDMA_QP_PATH_MIG_STATE)

static const enum openrdma_qp_type types[] = { OPENRDMA_QPT_RC,
					       OPENRDMA_QPT_UD };

static const struct openrdma_device_attr dev = {
	.max_qp_wr = 256,
	.max_sge = 4,
	.max_inline_data = 64,
	.max_qp_rd_atom = 8,
	.max_qp_init_rd_atom = 4,
	.max_pkeys = 1,
	.phys_port_cnt = 1,
};

/* Valid values for every attribute: any mask may name any of them. */
static struct openrdma_qp_attr good_attr(enum openrdma_qp_state cur,
					 enum openrdma_qp_state next)
{
	struct openrdma_qp_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = next;
	attr.cur_qp_state = cur;
	attr.path_mtu = OPENRDMA_MTU_1024;
	attr.qkey = 0x11111111;
	attr.rq_psn = 0xffffff;
	attr.sq_psn = 1;
	attr.dest_qp_num = 0x42;
	attr.qp_access_flags = OPENRDMA_ACCESS_REMOTE_WRITE |
			       OPENRDMA_ACCESS_REMOTE_READ |
			       OPENRDMA_ACCESS_REMOTE_ATOMIC;
	attr.cap.max_send_wr = 256;
	attr.cap.max_recv_wr = 16;
	attr.cap.max_send_sge = 4;
	attr.cap.max_recv_sge = 1;
	attr.cap.max_inline_data = 64;
	attr.ah_attr.port_num = 1;
	attr.ah_attr.addr.ss_family = AF_INET;
	attr.en_sqd_async_notify = 1;
	attr.max_rd_atomic = 4;
	attr.max_dest_rd_atomic = 8;
	attr.min_rnr_timer = 31;
	attr.port_num = 1;
	attr.timeout = 31;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	return attr;
}

static int check(enum openrdma_qp_type type, enum openrdma_qp_state cur,
		 const struct openrdma_qp_attr *attr, uint32_t mask)
{
	return core_qp_modify_check(type, cur, attr, (int)mask, &dev);
}

static bool legal(enum openrdma_qp_type type, enum openrdma_qp_state cur,
		  enum openrdma_qp_state next, uint32_t *req, uint32_t *opt)
{
	return core_qp_transition(type, cur, next, req, opt) == 0;
}

Test(qp_state, every_legal_transition_passes)
{
	struct openrdma_qp_attr attr;
	uint32_t req, opt, mask;
	int cur, next, n = 0;
	size_t t;

	for (t = 0; t < 2; t++) {
		for (cur = 0; cur < NSTATES; cur++) {
			for (next = 0; next < NSTATES; next++) {
				if (!legal(types[t], cur, next, &req, &opt))
					continue;
				n++;
				attr = good_attr(cur, next);
				mask = OPENRDMA_QP_STATE | req;
				cr_assert_eq(check(types[t], cur, &attr, mask),
					     0, "type %d %d->%d req 0x%x",
					     types[t], cur, next, req);
				mask |= opt & ~ALT;
				cr_assert_eq(check(types[t], cur, &attr, mask),
					     0, "type %d %d->%d all 0x%x",
					     types[t], cur, next, mask);
			}
		}
	}
	/* RC: 7 + 7 to RESET and ERR, 8 others; UD: 7 + 7, 9 others. */
	cr_assert_eq(n, 22 + 23);
}

Test(qp_state, missing_required_bits_fail)
{
	struct openrdma_qp_attr attr;
	uint32_t req, opt, bit;
	int cur, next;
	size_t t;

	for (t = 0; t < 2; t++)
		for (cur = 0; cur < NSTATES; cur++)
			for (next = 0; next < NSTATES; next++) {
				if (!legal(types[t], cur, next, &req, &opt))
					continue;
				attr = good_attr(cur, next);
				for (bit = 1; bit; bit <<= 1) {
					if (!(req & bit))
						continue;
					cr_assert_eq(check(types[t], cur, &attr,
							   (OPENRDMA_QP_STATE |
							    req) & ~bit),
						     EINV,
						     "%d->%d without 0x%x", cur,
						     next, bit);
				}
			}
}

Test(qp_state, extra_bits_fail)
{
	struct openrdma_qp_attr attr;
	uint32_t req, opt, bit;
	int cur, next;
	size_t t;

	for (t = 0; t < 2; t++)
		for (cur = 0; cur < NSTATES; cur++)
			for (next = 0; next < NSTATES; next++) {
				if (!legal(types[t], cur, next, &req, &opt))
					continue;
				attr = good_attr(cur, next);
				for (bit = 2; bit <= OPENRDMA_QP_DEST_QPN;
				     bit <<= 1) {
					if ((req | opt) & bit)
						continue;
					cr_assert_eq(check(types[t], cur, &attr,
							   OPENRDMA_QP_STATE |
								   req | bit),
						     EINV,
						     "type %d %d->%d with 0x%x",
						     types[t], cur, next, bit);
				}
			}
}

Test(qp_state, the_table_matches_the_specification)
{
	uint32_t req, opt;

	cr_assert(legal(OPENRDMA_QPT_RC, OPENRDMA_QPS_RESET, OPENRDMA_QPS_INIT,
			&req, &opt));
	cr_assert_eq(req, OPENRDMA_QP_PKEY_INDEX | OPENRDMA_QP_PORT |
				  OPENRDMA_QP_ACCESS_FLAGS);
	cr_assert(legal(OPENRDMA_QPT_UD, OPENRDMA_QPS_RESET, OPENRDMA_QPS_INIT,
			&req, &opt));
	cr_assert_eq(req, OPENRDMA_QP_PKEY_INDEX | OPENRDMA_QP_PORT |
				  OPENRDMA_QP_QKEY);
	cr_assert(legal(OPENRDMA_QPT_RC, OPENRDMA_QPS_INIT, OPENRDMA_QPS_RTR,
			&req, &opt));
	cr_assert_eq(req, OPENRDMA_QP_AV | OPENRDMA_QP_PATH_MTU |
				  OPENRDMA_QP_DEST_QPN | OPENRDMA_QP_RQ_PSN |
				  OPENRDMA_QP_MAX_DEST_RD_ATOMIC |
				  OPENRDMA_QP_MIN_RNR_TIMER);
	cr_assert(legal(OPENRDMA_QPT_UD, OPENRDMA_QPS_INIT, OPENRDMA_QPS_RTR,
			&req, &opt));
	cr_assert_eq(req, 0);
	cr_assert(legal(OPENRDMA_QPT_RC, OPENRDMA_QPS_RTR, OPENRDMA_QPS_RTS,
			&req, &opt));
	cr_assert_eq(req, OPENRDMA_QP_SQ_PSN | OPENRDMA_QP_TIMEOUT |
				  OPENRDMA_QP_RETRY_CNT |
				  OPENRDMA_QP_RNR_RETRY |
				  OPENRDMA_QP_MAX_QP_RD_ATOMIC);
	cr_assert(opt & OPENRDMA_QP_CUR_STATE);
	cr_assert(legal(OPENRDMA_QPT_UD, OPENRDMA_QPS_RTR, OPENRDMA_QPS_RTS,
			&req, &opt));
	cr_assert_eq(req, OPENRDMA_QP_SQ_PSN);
	cr_assert(legal(OPENRDMA_QPT_RC, OPENRDMA_QPS_RTS, OPENRDMA_QPS_SQD,
			&req, &opt));
	cr_assert_eq(opt, OPENRDMA_QP_EN_SQD_ASYNC_NOTIFY);
	cr_assert(legal(OPENRDMA_QPT_UD, OPENRDMA_QPS_SQE, OPENRDMA_QPS_RTS,
			&req, &opt));
	cr_assert_not(legal(OPENRDMA_QPT_RC, OPENRDMA_QPS_SQE, OPENRDMA_QPS_RTS,
			    &req, &opt),
		      "RC QPs never are in SQE");
}

Test(qp_state, illegal_transitions_fail)
{
	static const int bad[][2] = {
		{ OPENRDMA_QPS_RESET, OPENRDMA_QPS_RTR },
		{ OPENRDMA_QPS_RESET, OPENRDMA_QPS_RTS },
		{ OPENRDMA_QPS_RESET, OPENRDMA_QPS_SQD },
		{ OPENRDMA_QPS_INIT, OPENRDMA_QPS_RTS },
		{ OPENRDMA_QPS_INIT, OPENRDMA_QPS_SQD },
		{ OPENRDMA_QPS_RTR, OPENRDMA_QPS_INIT },
		{ OPENRDMA_QPS_RTR, OPENRDMA_QPS_RTR },
		{ OPENRDMA_QPS_RTS, OPENRDMA_QPS_INIT },
		{ OPENRDMA_QPS_RTS, OPENRDMA_QPS_RTR },
		{ OPENRDMA_QPS_SQD, OPENRDMA_QPS_INIT },
		{ OPENRDMA_QPS_ERR, OPENRDMA_QPS_INIT },
		{ OPENRDMA_QPS_ERR, OPENRDMA_QPS_RTS },
		{ OPENRDMA_QPS_RTS, OPENRDMA_QPS_SQE },
		{ OPENRDMA_QPS_SQE, OPENRDMA_QPS_SQE },
	};
	struct openrdma_qp_attr attr;
	uint32_t req, opt;
	size_t i, t;

	for (t = 0; t < 2; t++)
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			cr_assert_not(legal(types[t], bad[i][0], bad[i][1],
					    &req, &opt),
				      "%d->%d", bad[i][0], bad[i][1]);
			attr = good_attr(bad[i][0], bad[i][1]);
			cr_assert_eq(check(types[t], bad[i][0], &attr,
					   OPENRDMA_QP_ATTR_MASK_ALL & ~ALT),
				     EINV);
			cr_assert_eq(check(types[t], bad[i][0], &attr,
					   OPENRDMA_QP_STATE),
				     EINV);
		}
	/* Out of the enum, either end. */
	cr_assert_not(legal(OPENRDMA_QPT_RC, OPENRDMA_QPS_UNKNOWN,
			    OPENRDMA_QPS_ERR, &req, &opt));
	cr_assert_not(legal(OPENRDMA_QPT_RC, OPENRDMA_QPS_RTS, 42, &req, &opt));
	cr_assert_not(
		legal(3, OPENRDMA_QPS_RESET, OPENRDMA_QPS_INIT, &req, &opt));
	attr = good_attr(OPENRDMA_QPS_RESET, OPENRDMA_QPS_RESET);
	cr_assert_eq(core_qp_modify_check(3, OPENRDMA_QPS_RESET, &attr,
					  OPENRDMA_QP_STATE, &dev),
		     EINV);
}

Test(qp_state, reset_and_err_from_anywhere)
{
	struct openrdma_qp_attr attr;
	int cur;
	size_t t;

	for (t = 0; t < 2; t++)
		for (cur = 0; cur < NSTATES; cur++) {
			attr = good_attr(cur, OPENRDMA_QPS_RESET);
			cr_assert_eq(check(types[t], cur, &attr,
					   OPENRDMA_QP_STATE),
				     0);
			cr_assert_eq(check(types[t], cur, &attr,
					   OPENRDMA_QP_STATE |
						   OPENRDMA_QP_QKEY),
				     EINV, "RESET takes no attribute");
			attr = good_attr(cur, OPENRDMA_QPS_ERR);
			cr_assert_eq(check(types[t], cur, &attr,
					   OPENRDMA_QP_STATE),
				     0);
			cr_assert_eq(check(types[t], cur, &attr,
					   OPENRDMA_QP_STATE |
						   OPENRDMA_QP_PORT),
				     EINV);
		}
}

Test(qp_state, without_state_bit_the_qp_stays)
{
	struct openrdma_qp_attr attr = good_attr(OPENRDMA_QPS_RTS, 0);

	cr_assert_eq(check(OPENRDMA_QPT_UD, OPENRDMA_QPS_RTS, &attr,
			   OPENRDMA_QP_QKEY),
		     0);
	cr_assert_eq(check(OPENRDMA_QPT_RC, OPENRDMA_QPS_RTS, &attr,
			   OPENRDMA_QP_MIN_RNR_TIMER),
		     0);
	cr_assert_eq(check(OPENRDMA_QPT_RC, OPENRDMA_QPS_RTR, &attr,
			   OPENRDMA_QP_MIN_RNR_TIMER),
		     EINV, "RTR -> RTR is not a transition");
	cr_assert_eq(check(OPENRDMA_QPT_RC, OPENRDMA_QPS_RESET, &attr, 0), 0);
	cr_assert_eq(check(OPENRDMA_QPT_RC, OPENRDMA_QPS_RESET, &attr,
			   1u << 21),
		     EINV, "unknown mask bit");
}

/* One attribute out of range on a transition that takes it. */
struct bad_value {
	enum openrdma_qp_type type;
	enum openrdma_qp_state cur, next;
	uint32_t bit;
	void (*spoil)(struct openrdma_qp_attr *attr);
};

#define SPOIL(name, stmt)                                    \
	static void spoil_##name(struct openrdma_qp_attr *a) \
	{                                                    \
		stmt;                                        \
	}

SPOIL(retry_cnt, a->retry_cnt = 8)
SPOIL(rnr_retry, a->rnr_retry = 8)
SPOIL(timeout, a->timeout = 32)
SPOIL(rnr_timer, a->min_rnr_timer = 32)
SPOIL(port0, a->port_num = 0)
SPOIL(port2, a->port_num = 2)
SPOIL(pkey, a->pkey_index = 1)
SPOIL(local_write, a->qp_access_flags = OPENRDMA_ACCESS_LOCAL_WRITE)
SPOIL(mw_bind, a->qp_access_flags = OPENRDMA_ACCESS_MW_BIND)
SPOIL(mtu0, a->path_mtu = 0)
SPOIL(mtu6, a->path_mtu = 6)
SPOIL(rq_psn, a->rq_psn = 1u << 24)
SPOIL(sq_psn, a->sq_psn = 1u << 24)
SPOIL(dest_qpn, a->dest_qp_num = 1u << 24)
SPOIL(ord, a->max_rd_atomic = 5)
SPOIL(ird, a->max_dest_rd_atomic = 9)
SPOIL(av_port, a->ah_attr.port_num = 2)
SPOIL(av_global, a->ah_attr.is_global = 2)
SPOIL(av_family, a->ah_attr.addr.ss_family = AF_UNIX)
SPOIL(sqd_notify, a->en_sqd_async_notify = 2)
SPOIL(cap_wr, a->cap.max_recv_wr = 257)
SPOIL(cap_sge, a->cap.max_send_sge = 5)
SPOIL(cap_inline, a->cap.max_inline_data = 65)
SPOIL(cur_state, a->cur_qp_state = OPENRDMA_QPS_SQD)

Test(qp_state, bad_values_fail)
{
	const enum openrdma_qp_type RC = OPENRDMA_QPT_RC, UD = OPENRDMA_QPT_UD;
	const enum openrdma_qp_state RESET = OPENRDMA_QPS_RESET,
				     INIT = OPENRDMA_QPS_INIT,
				     RTR = OPENRDMA_QPS_RTR,
				     RTS = OPENRDMA_QPS_RTS,
				     SQD = OPENRDMA_QPS_SQD;
	const struct bad_value bad[] = {
		{ RC, RTR, RTS, 0, spoil_retry_cnt },
		{ RC, RTR, RTS, 0, spoil_rnr_retry },
		{ RC, RTR, RTS, 0, spoil_timeout },
		{ RC, INIT, RTR, 0, spoil_rnr_timer },
		{ RC, RESET, INIT, 0, spoil_port0 },
		{ UD, RESET, INIT, 0, spoil_port2 },
		{ UD, RESET, INIT, 0, spoil_pkey },
		{ RC, RESET, INIT, 0, spoil_local_write },
		{ RC, INIT, INIT, OPENRDMA_QP_ACCESS_FLAGS, spoil_mw_bind },
		{ RC, INIT, RTR, 0, spoil_mtu0 },
		{ RC, INIT, RTR, 0, spoil_mtu6 },
		{ RC, INIT, RTR, 0, spoil_rq_psn },
		{ UD, RTR, RTS, 0, spoil_sq_psn },
		{ RC, INIT, RTR, 0, spoil_dest_qpn },
		{ RC, RTR, RTS, 0, spoil_ord },
		{ RC, INIT, RTR, 0, spoil_ird },
		{ RC, INIT, RTR, 0, spoil_av_port },
		{ RC, INIT, RTR, 0, spoil_av_global },
		{ RC, INIT, RTR, 0, spoil_av_family },
		{ UD, RTS, SQD, OPENRDMA_QP_EN_SQD_ASYNC_NOTIFY,
		  spoil_sqd_notify },
		{ RC, RESET, INIT, OPENRDMA_QP_CAP, spoil_cap_wr },
		{ UD, RTS, RTS, OPENRDMA_QP_CAP, spoil_cap_sge },
		{ UD, INIT, RTR, OPENRDMA_QP_CAP, spoil_cap_inline },
		{ RC, RTS, RTS, OPENRDMA_QP_CUR_STATE, spoil_cur_state },
	};
	struct openrdma_qp_attr attr;
	uint32_t req, opt, mask;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert(legal(bad[i].type, bad[i].cur, bad[i].next, &req,
				&opt));
		mask = OPENRDMA_QP_STATE | req | bad[i].bit;
		attr = good_attr(bad[i].cur, bad[i].next);
		cr_assert_eq(check(bad[i].type, bad[i].cur, &attr, mask), 0,
			     "case %zu is legal unspoiled", i);
		bad[i].spoil(&attr);
		cr_assert_eq(check(bad[i].type, bad[i].cur, &attr, mask), EINV,
			     "case %zu passed", i);
	}
}

Test(qp_state, queue_sizes_change_only_while_allowed)
{
	struct openrdma_qp_attr attr =
		good_attr(OPENRDMA_QPS_RTS, OPENRDMA_QPS_RTS);
	const uint32_t mask = OPENRDMA_QP_STATE | OPENRDMA_QP_CAP;

	cr_assert_eq(check(OPENRDMA_QPT_RC, OPENRDMA_QPS_RTS, &attr, mask),
		     EINV, "a connected RC QP keeps its queues");
	cr_assert_eq(check(OPENRDMA_QPT_UD, OPENRDMA_QPS_RTS, &attr, mask), 0);
	attr = good_attr(OPENRDMA_QPS_INIT, OPENRDMA_QPS_INIT);
	cr_assert_eq(check(OPENRDMA_QPT_RC, OPENRDMA_QPS_INIT, &attr, mask), 0);
}

Test(qp_state, alternate_paths_are_not_supported)
{
	struct openrdma_qp_attr attr =
		good_attr(OPENRDMA_QPS_RTS, OPENRDMA_QPS_RTS);

	cr_assert_eq(check(OPENRDMA_QPT_RC, OPENRDMA_QPS_RTS, &attr,
			   OPENRDMA_QP_STATE | OPENRDMA_QP_ALT_PATH),
		     -OPENRDMA_EOPNOTSUPP);
	cr_assert_eq(check(OPENRDMA_QPT_RC, OPENRDMA_QPS_RTS, &attr,
			   OPENRDMA_QP_PATH_MIG_STATE),
		     -OPENRDMA_EOPNOTSUPP);
	cr_assert_eq(check(OPENRDMA_QPT_UD, OPENRDMA_QPS_RTS, &attr,
			   OPENRDMA_QP_ALT_PATH),
		     EINV, "not even legal for UD");
}
