/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Stubs for the transport ops a transport leaves NULL: each returns
 * -OPENRDMA_EOPNOTSUPP (the void ones do nothing).
 */
#ifndef CORE_UNSUPPORTED_H
#define CORE_UNSUPPORTED_H

#include <openrdma/transport.h>

/* Every op set to its stub. */
extern const struct openrdma_transport_ops core_unsupported_ops;

/*
 * Copies src (NULL: an empty table) into dst and fills every NULL op with
 * its stub, so that dst has no NULL member.
 */
void core_ops_fill(struct openrdma_transport_ops *dst,
		   const struct openrdma_transport_ops *src);

#endif /* CORE_UNSUPPORTED_H */
