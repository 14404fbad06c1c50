/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The modify-QP state table: which transitions are legal for RC and UD
 * QPs, and which attribute-mask bits each requires and allows, as the
 * InfiniBand specification defines them (chapter 11, "Modify QP").
 */
#ifndef CORE_QP_STATE_H
#define CORE_QP_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <openrdma/verbs.h>

/*
 * The mask bits that cur -> next requires and allows for a QP of the given
 * type, not counting OPENRDMA_QP_STATE; -OPENRDMA_EINVAL if the transition
 * is illegal.
 */
int core_qp_transition(enum openrdma_qp_type type, enum openrdma_qp_state cur,
		       enum openrdma_qp_state next, uint32_t *req_out,
		       uint32_t *opt_out);

/*
 * Checks QP caps (at create, or OPENRDMA_QP_CAP at modify) against the
 * device's limits; receive caps are ignored for a QP with an SRQ.  fn and
 * arg name the caller and its argument in the debug log.
 */
int core_qp_cap_check(const struct openrdma_qp_cap *cap, bool srq,
		      const struct openrdma_device_attr *dev, const char *fn,
		      const char *arg);

/*
 * Checks a modify request on a QP in state cur: the transition, the mask
 * against the table, and the value of each attribute the mask names
 * against the device's limits.  -OPENRDMA_EINVAL when the request is
 * wrong, -OPENRDMA_EOPNOTSUPP for alternate paths (not carried by
 * struct openrdma_qp_attr).
 */
int core_qp_modify_check(enum openrdma_qp_type type, enum openrdma_qp_state cur,
			 const struct openrdma_qp_attr *attr, int attr_mask,
			 const struct openrdma_device_attr *dev);

#endif /* CORE_QP_STATE_H */
