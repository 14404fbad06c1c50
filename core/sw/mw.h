/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Memory windows of software transports: allocation (the window's key is
 * reserved at once, bound later), and the two send-queue operations that
 * act on keys, BIND_MW and LOCAL_INV, with the MW_BIND_ERR and
 * LOC_QP_OP_ERR cases of the semantics page.
 */
#ifndef CORE_SW_MW_H
#define CORE_SW_MW_H

#include <openrdma/verbs.h>

#include "core/sw/keymap.h"
#include "core/sw/queue.h"

struct sw_qp;

/* Registers mw (type, pd set) in map and sets its first key. */
int sw_mw_init(struct sw_keymap *map, struct openrdma_mw *mw);
void sw_mw_fini(struct sw_keymap *map, struct openrdma_mw *mw);

/* Executes a BIND_MW request; on success mw->rkey is the new key. */
enum openrdma_wc_status sw_mw_bind(struct sw_qp *sqp,
				   const struct sw_send_wqe *wqe);
/* Executes a LOCAL_INV request. */
enum openrdma_wc_status sw_mw_local_inv(struct sw_qp *sqp,
					const struct sw_send_wqe *wqe);

#endif /* CORE_SW_MW_H */
