/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
#include <string.h>

#include <openrdma/errno.h>

#include "core/sw/payload.h"

void sw_iov_cursor_init(struct sw_iov_cursor *cur, const struct iovec *iov,
			int cnt)
{
	cur->iov = iov;
	cur->cnt = cnt;
	cur->idx = 0;
	cur->off = 0;
}

/* The contiguous run at the cursor, at most len bytes long. */
static size_t cursor_run(struct sw_iov_cursor *cur, size_t len, uint8_t **p)
{
	size_t n;

	while (cur->idx < cur->cnt && cur->off == cur->iov[cur->idx].iov_len) {
		cur->idx++;
		cur->off = 0;
	}
	if (cur->idx == cur->cnt)
		return 0;
	n = cur->iov[cur->idx].iov_len - cur->off;
	*p = (uint8_t *)cur->iov[cur->idx].iov_base + cur->off;
	return n < len ? n : len;
}

size_t sw_iov_cursor_put(struct sw_iov_cursor *cur, const void *src, size_t len)
{
	const uint8_t *s = src;
	size_t done = 0, n;
	uint8_t *p = NULL;

	while (done < len && (n = cursor_run(cur, len - done, &p))) {
		memmove(p, s + done, n);
		cur->off += n;
		done += n;
	}
	return done;
}

size_t sw_iov_cursor_get(struct sw_iov_cursor *cur, void *dst, size_t len)
{
	uint8_t *d = dst;
	size_t done = 0, n;
	uint8_t *p = NULL;

	while (done < len && (n = cursor_run(cur, len - done, &p))) {
		memmove(d + done, p, n);
		cur->off += n;
		done += n;
	}
	return done;
}

int sw_iov_cursor_fill(struct sw_iov_cursor *cur, struct sw_payload *pl,
		       size_t len)
{
	size_t done = 0, n;
	uint8_t *p = NULL;
	int ret;

	while (done < len) {
		n = cursor_run(cur, len - done, &p);
		if (!n)
			return -OPENRDMA_EMSGSIZE;
		ret = pl->read(pl, p, n);
		if (ret)
			return ret;
		cur->off += n;
		done += n;
	}
	return 0;
}

static int iov_payload_read(struct sw_payload *pl, void *dst, size_t len)
{
	struct sw_iov_payload *p = (struct sw_iov_payload *)pl;

	return sw_iov_cursor_get(&p->cur, dst, len) == len ? 0 :
							     -OPENRDMA_EMSGSIZE;
}

static int iov_payload_write(struct sw_payload *pl, const void *src, size_t len)
{
	struct sw_iov_payload *p = (struct sw_iov_payload *)pl;

	return sw_iov_cursor_put(&p->cur, src, len) == len ? 0 :
							     -OPENRDMA_EMSGSIZE;
}

void sw_iov_payload_init(struct sw_iov_payload *p, const struct iovec *iov,
			 int cnt)
{
	p->base.read = iov_payload_read;
	p->base.write = iov_payload_write;
	sw_iov_cursor_init(&p->cur, iov, cnt);
}
