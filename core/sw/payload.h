/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The initiator's bytes as the target sees them: a stream read in order
 * (SEND and RDMA WRITE data) or written in order (RDMA READ data, atomic
 * results).  self backs it with the initiator's iovecs; tcp backs it with
 * its socket and shm with process_vm_readv(), so sw_target needs to know
 * neither.  Copies use memmove: in one process, source and destination of
 * an RDMA operation may overlap.
 */
#ifndef CORE_SW_PAYLOAD_H
#define CORE_SW_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct sw_payload {
	/* Copies the next len bytes of the request's data to dst. */
	int (*read)(struct sw_payload *pl, void *dst, size_t len);
	/* Hands the next len bytes of the response to the initiator. */
	int (*write)(struct sw_payload *pl, const void *src, size_t len);
};

/* A position in a list of iovecs. */
struct sw_iov_cursor {
	const struct iovec *iov;
	int cnt;
	int idx;
	size_t off;
};

void sw_iov_cursor_init(struct sw_iov_cursor *cur, const struct iovec *iov,
			int cnt);
/* Copies up to len bytes from src into the iovecs; returns the count. */
size_t sw_iov_cursor_put(struct sw_iov_cursor *cur, const void *src,
			 size_t len);
/* Copies up to len bytes out of the iovecs into dst; returns the count. */
size_t sw_iov_cursor_get(struct sw_iov_cursor *cur, void *dst, size_t len);
/* Reads len bytes of pl into the iovecs (which must hold them). */
int sw_iov_cursor_fill(struct sw_iov_cursor *cur, struct sw_payload *pl,
		       size_t len);

/* A payload over local iovecs: the initiator is in this process. */
struct sw_iov_payload {
	struct sw_payload base;
	struct sw_iov_cursor cur;
};

void sw_iov_payload_init(struct sw_iov_payload *p, const struct iovec *iov,
			 int cnt);

#endif /* CORE_SW_PAYLOAD_H */
