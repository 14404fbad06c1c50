/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* Clocks, CPU and memory accounting, pinning, number parsing. */
#include "config.h"

#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "examples/perf/openrdma_perf.h"

uint64_t perf_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

double perf_cycle_ns;

void perf_cycles_init(void)
{
#if defined(__x86_64__) || defined(__i386__)
	struct timespec nap = { 0, 20 * 1000 * 1000 };
	uint64_t t0, t1, c0, c1;

	t0 = perf_now_ns();
	c0 = perf_cycles();
	nanosleep(&nap, NULL);
	t1 = perf_now_ns();
	c1 = perf_cycles();
	/* slower than 100 MHz, it would round the samples */
	if (c1 > c0 && (c1 - c0) * 10 >= t1 - t0)
		perf_cycle_ns = (double)(t1 - t0) / (double)(c1 - c0);
#endif
}

int perf_err(const struct perf_side *side, const char *what, int ret)
{
	fprintf(stderr, "%s: %s%s: %s\n", PERF_NAME,
		side && side->is_server ? "server: " : "", what,
		openrdma_strerror(ret));
	return ret < 0 ? ret : -ret;
}

/* The kernel's CPU clocks: exact, where getrusage() may count in ticks. */
uint64_t perf_cpu_ns(bool thread_only)
{
	struct timespec ts;

	if (clock_gettime(thread_only ? CLOCK_THREAD_CPUTIME_ID :
					CLOCK_PROCESS_CPUTIME_ID,
			  &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t perf_rss_bytes(void)
{
	unsigned long size = 0, resident = 0;
	FILE *f;

	f = fopen("/proc/self/statm", "r");
	if (!f)
		return 0;
	if (fscanf(f, "%lu %lu", &size, &resident) != 2)
		resident = 0;
	fclose(f);
	return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

unsigned int perf_fd_count(void)
{
	struct dirent *de;
	unsigned int n = 0;
	DIR *d;

	d = opendir("/proc/self/fd");
	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n > 0 ? n - 1 : 0; /* not the directory's own descriptor */
}

unsigned int perf_fd_limit_raise(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 1024;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			getrlimit(RLIMIT_NOFILE, &rl);
	}
	return rl.rlim_cur > 1u << 30 ? 1u << 30 : (unsigned int)rl.rlim_cur;
}

bool perf_pin_span(int cpu, unsigned int n)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;
	unsigned int i;

	if (cpu < 0 || ncpu < 1)
		return false;
	if (!n)
		n = 1;
	CPU_ZERO(&set);
	for (i = 0; i < n; i++)
		CPU_SET((cpu + (long)i) % ncpu, &set);
	/* Best effort: a restricted cpuset still runs, only unpinned. */
	if (sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "%s: cannot pin to core %ld (%u cores)\n",
			PERF_NAME, cpu % ncpu, n);
		return false;
	}
	return true;
}

bool perf_pin(int cpu)
{
	return perf_pin_span(cpu, 1);
}

uint64_t perf_round_up(uint64_t v, uint64_t align)
{
	return (v + align - 1) / align * align;
}

int perf_parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -OPENRDMA_EINVAL;
	v = strtoull(s, &end, 0);
	switch (*end) {
	case 'k':
	case 'K':
		v <<= 10;
		end++;
		break;
	case 'm':
	case 'M':
		v <<= 20;
		end++;
		break;
	case 'g':
	case 'G':
		v <<= 30;
		end++;
		break;
	default:
		break;
	}
	if (*end)
		return -OPENRDMA_EINVAL;
	*out = v;
	return 0;
}
