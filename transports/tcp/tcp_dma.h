/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The transport's accesses to registered memory on a peer's behalf are
 * the RNIC's, as a DMA engine's would be: the application learns of them
 * over the wire (a completion at the peer, then a message), never through
 * a lock taken here, so ThreadSanitizer, which cannot follow that order
 * through the kernel, is told to ignore them.  No-ops in other builds.
 */
#ifndef TCP_DMA_H
#define TCP_DMA_H

#if defined(__SANITIZE_THREAD__)
#define TCP_DMA_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TCP_DMA_TSAN 1
#endif
#endif

#ifdef TCP_DMA_TSAN
void __tsan_ignore_thread_begin(void) __attribute__((weak));
void __tsan_ignore_thread_end(void) __attribute__((weak));
#endif

static inline void tcp_dma_begin(void)
{
#ifdef TCP_DMA_TSAN
	if (__tsan_ignore_thread_begin)
		__tsan_ignore_thread_begin();
#endif
}

static inline void tcp_dma_end(void)
{
#ifdef TCP_DMA_TSAN
	if (__tsan_ignore_thread_end)
		__tsan_ignore_thread_end();
#endif
}

#endif
