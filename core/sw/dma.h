/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * A software transport's accesses to registered memory on a peer's behalf
 * are the RNIC's, as a DMA engine's would be: the application learns of
 * them over the wire or through another process (a completion at the
 * peer, then a message), never through a lock taken here.
 * ThreadSanitizer cannot follow that order through the kernel or another
 * process, so it is told to ignore them.  No-ops in other builds.
 */
#ifndef CORE_SW_DMA_H
#define CORE_SW_DMA_H

#if defined(__SANITIZE_THREAD__)
#define SW_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SW_TSAN 1
#endif
#endif

#ifdef SW_TSAN
/*
 * Weak: a program that loads the library with dlopen may not export the
 * runtime's annotation entry points; then nothing is annotated.
 */
void __tsan_ignore_thread_begin(void) __attribute__((weak));
void __tsan_ignore_thread_end(void) __attribute__((weak));
#endif

static inline void sw_dma_begin(void)
{
#ifdef SW_TSAN
	if (__tsan_ignore_thread_begin)
		__tsan_ignore_thread_begin();
#endif
}

static inline void sw_dma_end(void)
{
#ifdef SW_TSAN
	if (__tsan_ignore_thread_end)
		__tsan_ignore_thread_end();
#endif
}

#endif /* CORE_SW_DMA_H */
