/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
#include <openrdma/transport.h>

#include "core/sw/mw.h"
#include "core/sw/qp.h"

int sw_mw_init(struct sw_keymap *map, struct openrdma_mw *mw)
{
	struct sw_key_attr attr = {
		.type = mw->type == OPENRDMA_MW_TYPE_1 ? SW_KEY_MW1 :
							 SW_KEY_MW2,
		.pd = mw->pd,
		.owner = mw,
	};
	uint32_t key;
	int ret;

	if (mw->type != OPENRDMA_MW_TYPE_1 && mw->type != OPENRDMA_MW_TYPE_2)
		return -OPENRDMA_EINVAL;
	ret = sw_keymap_add(map, &attr, &key);
	if (ret)
		return ret;
	/* reserved, not valid until bound: a type 2 consumer derives its
	 * bind key from it with openrdma_inc_rkey() */
	mw->rkey = key;
	return 0;
}

void sw_mw_fini(struct sw_keymap *map, struct openrdma_mw *mw)
{
	sw_keymap_remove(map, mw->rkey);
}

enum openrdma_wc_status sw_mw_bind(struct sw_qp *sqp,
				   const struct sw_send_wqe *wqe)
{
	const struct openrdma_mw_bind_info *info = &wqe->bind_info;
	struct openrdma_mw *mw = wqe->mw;
	enum openrdma_wc_status status;
	struct sw_bind bind;
	uint32_t key;

	bind.type1 = wqe->send_flags & OPENRDMA_SEND_TYPE1_BIND;
	/* a type 1 window's mw->rkey belongs to the poster (queue.c) */
	bind.mw_key = bind.type1 ? wqe->bind_rkey : mw->rkey;
	bind.new_key = wqe->bind_rkey;
	bind.qp_pd = sqp->qp->pd;
	bind.has_mr = info->mr != NULL;
	bind.mr_key = info->mr ? info->mr->lkey : 0;
	bind.addr = info->addr;
	bind.length = info->length;
	bind.access = info->mw_access_flags;
	status = sw_keymap_bind(sqp->keymap, &bind, &key);
	/* a type 1 window's key changed when the bind was posted */
	if (status == OPENRDMA_WC_SUCCESS && !bind.type1)
		mw->rkey = key;
	return status;
}

enum openrdma_wc_status sw_mw_local_inv(struct sw_qp *sqp,
					const struct sw_send_wqe *wqe)
{
	if (sw_keymap_invalidate(sqp->keymap, wqe->ex, sqp->qp->pd))
		return OPENRDMA_WC_LOC_QP_OP_ERR;
	return OPENRDMA_WC_SUCCESS;
}
