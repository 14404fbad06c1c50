/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Latency statistics.  Runs take millions of samples, so the percentiles
 * come from selection (linear on average) rather than a full sort.
 */
#include "config.h"

#include "examples/perf/openrdma_perf.h"

static void swap32(uint32_t *a, uint32_t *b)
{
	uint32_t t = *a;

	*a = *b;
	*b = t;
}

/* Reorders v[0, n) so that v[k] holds the k-th smallest value. */
static uint32_t select_kth(uint32_t *v, uint64_t n, uint64_t k)
{
	uint64_t lo = 0, hi = n - 1;

	while (hi > lo) {
		uint64_t mid = lo + (hi - lo) / 2, i, j;
		uint32_t pivot;

		/* Median of three: sorted input does not degrade it. */
		if (v[mid] < v[lo])
			swap32(&v[mid], &v[lo]);
		if (v[hi] < v[lo])
			swap32(&v[hi], &v[lo]);
		if (v[hi] < v[mid])
			swap32(&v[hi], &v[mid]);
		pivot = v[mid];
		i = lo;
		j = hi;
		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				swap32(&v[i], &v[j]);
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			break;
	}
	return v[k];
}

/* The nearest-rank percentile q (0..100]. */
static uint64_t rank(uint64_t n, unsigned int q)
{
	uint64_t r = (n * q + 99) / 100;

	return r ? r - 1 : 0;
}

void perf_stats_latency(uint32_t *samples, uint64_t n, bool half,
			struct perf_result *r)
{
	double scale = half ? 2000.0 : 1000.0; /* ns to us, one way or not */
	uint32_t min = UINT32_MAX, max = 0;
	uint64_t i, sum = 0;

	r->one_way = half;
	if (!n) {
		r->lat_min = r->lat_median = r->lat_avg = r->lat_p99 =
			r->lat_max = 0;
		return;
	}
	for (i = 0; i < n; i++) {
		sum += samples[i];
		if (samples[i] < min)
			min = samples[i];
		if (samples[i] > max)
			max = samples[i];
	}
	r->lat_min = min / scale;
	r->lat_max = max / scale;
	r->lat_avg = (double)sum / (double)n / scale;
	/* The median first: the p99 selection keeps it below its rank. */
	r->lat_median = select_kth(samples, n, rank(n, 50)) / scale;
	r->lat_p99 = select_kth(samples, n, rank(n, 99)) / scale;
}
