/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * libFuzzer target for the tcp transport's frame parser: any bytes, as a
 * stream of frames.  Every header the parser accepts must survive a
 * round trip through the encoder unchanged, and the parser must never
 * read past what it was given (AddressSanitizer watches).
 *
 *   make fuzz-tcp [FUZZ_TIME=60]
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "transports/tcp/tcp_frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t hdr[TCP_FRAME_HDR_MAX];
	struct tcp_frame f, g;
	size_t off = 0, need;
	uint8_t *copy;
	int n;

	/* an exact-size copy: a read past the end is caught */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	while (off < size) {
		n = tcp_frame_parse(copy + off, size - off, &f, &need);
		if (n <= 0) {
			if (!n &&
			    (need <= size - off || need > TCP_FRAME_HDR_MAX))
				abort(); /* "need more" must mean more */
			break;
		}
		if ((unsigned int)n != tcp_frame_encode(&f, hdr) ||
		    memcmp(hdr, copy + off, (size_t)n) ||
		    tcp_frame_parse(hdr, (size_t)n, &g, NULL) != n ||
		    memcmp(&f, &g, sizeof(f)))
			abort(); /* accepted, yet not what it encodes to */
		off += (size_t)n;
		/* the payload, as a connection would skip it */
		if (f.length > size - off)
			break;
		off += f.length;
	}
	free(copy);
	return 0;
}
