/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
#include "config.h"

#include "core/probe.h"

#ifdef OPENRDMA_PROBES
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

/* Whose probes these are: the library's, or a program's own copy. */
#ifndef CORE_PROBE_OWNER
#define CORE_PROBE_OWNER "libopenrdma"
#endif

/* Durations kept per segment; later ones are only counted. */
#define PROBE_SAMPLES (1u << 18)

static const char *const seg_name[CORE_PROBE_SEGS] = {
	[CORE_PROBE_SEG_RX] = "rx",   [CORE_PROBE_SEG_APP] = "app",
	[CORE_PROBE_SEG_TX] = "tx",   [CORE_PROBE_SEG_SYSCALL] = "syscall",
	[CORE_PROBE_SEG_RET] = "ret",
};

static struct {
	_Atomic uint64_t n;
	_Atomic uint64_t sum;
	uint32_t sample[PROBE_SAMPLES];
} segs[CORE_PROBE_SEGS];

/* 0: not marked */
static __thread uint64_t marks[CORE_PROBE_MARKS];

/* The clock's start, to convert ticks to nanoseconds at the end. */
static uint64_t start_ticks, start_ns;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __rdtsc();
#else
	return now_ns();
#endif
}

void core_probe_mark(enum core_probe_mark m)
{
	marks[m] = ticks();
}

void core_probe_end(enum core_probe_seg seg, enum core_probe_mark from)
{
	uint64_t begin = marks[from], d, i;

	if (!begin)
		return;
	marks[from] = 0;
	d = ticks() - begin;
	if (d > UINT32_MAX)
		return;
	i = atomic_fetch_add_explicit(&segs[seg].n, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&segs[seg].sum, d, memory_order_relaxed);
	if (i < PROBE_SAMPLES)
		segs[seg].sample[i] = (uint32_t)d;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

__attribute__((constructor)) static void probe_start(void)
{
	start_ticks = ticks();
	start_ns = now_ns();
}

__attribute__((destructor)) static void probe_report(void)
{
	uint64_t n, kept, dt = ticks() - start_ticks, dns = now_ns() - start_ns;
	double per_ns = dns ? (double)dt / (double)dns : 1.0;
	uint32_t *s;
	int i;

	for (i = 0; i < CORE_PROBE_SEGS; i++) {
		n = atomic_load(&segs[i].n);
		if (!n)
			continue;
		kept = n < PROBE_SAMPLES ? n : PROBE_SAMPLES;
		s = segs[i].sample;
		qsort(s, (size_t)kept, sizeof(*s), cmp_u32);
		fprintf(stderr,
			"openrdma-probe %d %s %-8s n %llu ticks mean %.0f p10 %u median %u p90 %u; median %.1f ns\n",
			(int)getpid(), CORE_PROBE_OWNER, seg_name[i],
			(unsigned long long)n,
			(double)atomic_load(&segs[i].sum) / (double)n,
			s[kept / 10], s[kept / 2], s[kept * 9 / 10],
			s[kept / 2] / per_ns);
	}
}
#else
/* ISO C wants a translation unit to declare something. */
typedef int core_probe_unused;
#endif
