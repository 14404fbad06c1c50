/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Address handles.  An openrdma_ah_attr names the peer by GID (is_global),
 * by LID, or by the socket address its port reports, from which the RoCE
 * GID is derived (verbs_addr.c).  Replies to a UD sender are built by
 * ibv_init_ah_from_wc(), which knows how each device fills the GRH.
 */
#include <stdlib.h>

#include "transports/verbs/verbs.h"

int verbs_ah_create(struct openrdma_pd *pd, struct openrdma_ah_attr *attr,
		    struct openrdma_ah **ah_out)
{
	struct verbs_ctx *vctx = to_verbs_ctx(pd->obj.ctx);
	struct ibv_ah_attr ib;
	struct verbs_ah *vah;
	int ret;

	ret = verbs_ah_attr_to_ibv(vctx, attr, &ib);
	if (ret)
		return ret;
	vah = calloc(1, sizeof(*vah));
	if (!vah)
		return -OPENRDMA_ENOMEM;
	vah->ibah = ibv_create_ah(to_verbs_pd(pd)->ibpd, &ib);
	if (!vah->ibah) {
		ret = verbs_errno();
		free(vah);
		return ret;
	}
	*ah_out = &vah->base;
	return 0;
}

int verbs_ah_destroy(struct openrdma_ah *ah)
{
	struct verbs_ah *vah = to_verbs_ah(ah);
	int ret;

	ret = ibv_destroy_ah(vah->ibah);
	if (ret)
		return verbs_ret(ret);
	free(vah);
	return 0;
}

int verbs_ah_attr_from_wc(struct openrdma_context *ctx, uint8_t port_num,
			  const struct openrdma_wc *wc,
			  const struct openrdma_grh *grh,
			  struct openrdma_ah_attr *attr)
{
	struct verbs_ctx *vctx = to_verbs_ctx(ctx);
	struct ibv_ah_attr ib;
	int ret;

	/* Both structures have libibverbs' layout (verbs_abi.c). */
	ret = ibv_init_ah_from_wc(vctx->ibctx, vctx->port, (struct ibv_wc *)wc,
				  (struct ibv_grh *)grh, &ib);
	if (ret)
		return verbs_errno();
	verbs_ah_attr_from_ibv(vctx, &ib, attr);
	return 0;
}
