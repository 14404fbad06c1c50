/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * evd_bench: what the event engine costs.
 *
 *  1. events per second delivered through callbacks, from 2 producer
 *     threads (each to its own EVD, then both to one EVD);
 *  2. the wake-up latency of a blocked core_evd_wait(), next to a raw
 *     eventfd ping-pong between two threads measured in the same run;
 *  3. with -s, the full-size stress: 8 producers x 1 M events through
 *     callbacks, each counted exactly once.
 *
 * Usage: evd_bench [-n events per producer] [-p ping-pong rounds] [-s]
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include "tests/evd/evd_test.h"

static void die(const char *what, int ret)
{
	fprintf(stderr, "evd_bench: %s: %s\n", what, openrdma_strerror(ret));
	exit(1);
}

/* ------------------------------------------------------------ throughput */

struct sink {
	atomic_size_t n;
	uint32_t *next; /* per producer: the order check */
	uint8_t *seen; /* per event, with -s */
	uint32_t each;
	atomic_int bad;
};

static void sink_cb(struct core_evd *evd, void *arg)
{
	struct sink *s = arg;
	struct trec r[64];
	int n, i;

	while ((n = core_evd_dequeue_n(evd, r, 64)) > 0) {
		for (i = 0; i < n; i++) {
			if (r[i].seq != s->next[r[i].producer])
				atomic_store(&s->bad, 1);
			s->next[r[i].producer] = r[i].seq + 1;
			if (s->seen)
				s->seen[(size_t)r[i].producer * s->each +
					r[i].seq]++;
		}
		atomic_fetch_add_explicit(&s->n, n, memory_order_relaxed);
	}
}

struct producer {
	struct core_evd *evd;
	uint32_t id;
	uint32_t n;
};

static void *produce(void *arg)
{
	struct producer *p = arg;
	struct trec r = { p->id, 0, 0 };
	int ret;

	for (r.seq = 0; r.seq < p->n; r.seq++) {
		while ((ret = core_evd_post_se(p->evd, &r)) == -OPENRDMA_ENOSPC)
			sched_yield();
		if (ret)
			die("post_se", ret);
	}
	return NULL;
}

/*
 * nprod producers, each posting each events to evds[i % nevd], drained by
 * callbacks.  Returns events per second; *ok says nothing was lost,
 * duplicated or reordered.
 */
static double run_callbacks(unsigned int nprod, unsigned int nevd,
			    uint32_t each, bool check_all, bool *ok)
{
	struct core_evd *evd[8];
	struct sink sink[8];
	struct producer p[8];
	pthread_t tid[8];
	uint64_t t0, t1;
	size_t total = (size_t)nprod * each, got;
	unsigned int i;
	uint8_t *seen = NULL;
	int ret;

	if (check_all) {
		seen = calloc(total, 1);
		if (!seen)
			die("calloc", -OPENRDMA_ENOMEM);
	}
	for (i = 0; i < nevd; i++) {
		evd[i] = t_sevd(4096, 0);
		memset(&sink[i], 0, sizeof(sink[i]));
		sink[i].next = calloc(nprod, sizeof(uint32_t));
		sink[i].seen = seen;
		sink[i].each = each;
		ret = core_evd_callback_attach(evd[i], sink_cb, &sink[i], 0);
		if (ret)
			die("callback_attach", ret);
	}
	t0 = t_now_ns();
	for (i = 0; i < nprod; i++) {
		p[i] = (struct producer){ evd[i % nevd], i, each };
		pthread_create(&tid[i], NULL, produce, &p[i]);
	}
	for (i = 0; i < nprod; i++)
		pthread_join(tid[i], NULL);
	do {
		got = 0;
		for (i = 0; i < nevd; i++)
			got += atomic_load(&sink[i].n);
	} while (got < total && (sched_yield(), 1));
	t1 = t_now_ns();
	*ok = true;
	for (i = 0; i < nevd; i++) {
		if (atomic_load(&sink[i].bad))
			*ok = false;
		core_evd_free(evd[i]);
		free(sink[i].next);
	}
	for (got = 0; seen && got < total; got++)
		if (seen[got] != 1)
			*ok = false;
	free(seen);
	return (double)total * 1e9 / (double)(t1 - t0);
}

/* ------------------------------------------------------------ wake-up latency */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct pp {
	unsigned int rounds;
	uint64_t *lat; /* one-way, measured by the receiver */
	/* the EVD ping-pong */
	struct core_evd *evd[2];
	/* the eventfd ping-pong */
	int efd[2];
	_Atomic uint64_t stamp[2];
};

/* side 0 pings and side 1 pongs; each records the wake-ups it sees */
static void evd_side(struct pp *pp, int me)
{
	struct trec r = { 0 };
	unsigned int i;
	int ret;

	for (i = 0; i < pp->rounds; i++) {
		if (me == 0) {
			r.stamp_ns = t_now_ns();
			ret = core_evd_post_se(pp->evd[1], &r);
			if (ret)
				die("post_se", ret);
		}
		ret = core_evd_wait(pp->evd[me], CORE_EVD_INFINITE, 0, &r,
				    NULL);
		if (ret)
			die("wait", ret);
		pp->lat[2 * i + (unsigned int)me] = t_now_ns() - r.stamp_ns;
		if (me == 1) {
			r.stamp_ns = t_now_ns();
			ret = core_evd_post_se(pp->evd[0], &r);
			if (ret)
				die("post_se", ret);
		}
	}
}

static void efd_side(struct pp *pp, int me)
{
	unsigned int i;
	eventfd_t v;

	for (i = 0; i < pp->rounds; i++) {
		if (me == 0) {
			atomic_store(&pp->stamp[1], t_now_ns());
			eventfd_write(pp->efd[1], 1);
		}
		if (eventfd_read(pp->efd[me], &v))
			die("eventfd_read", -errno);
		pp->lat[2 * i + (unsigned int)me] =
			t_now_ns() - atomic_load(&pp->stamp[me]);
		if (me == 1) {
			atomic_store(&pp->stamp[0], t_now_ns());
			eventfd_write(pp->efd[0], 1);
		}
	}
}

static bool pp_use_evd;

static void *pp_pong(void *arg)
{
	if (pp_use_evd)
		evd_side(arg, 1);
	else
		efd_side(arg, 1);
	return NULL;
}

/* Runs one ping-pong; fills median and p99 of the one-way latency (ns). */
static void run_pingpong(struct pp *pp, bool use_evd, uint64_t *p50,
			 uint64_t *p99)
{
	size_t n = 2 * (size_t)pp->rounds;
	pthread_t tid;

	pp_use_evd = use_evd;
	pthread_create(&tid, NULL, pp_pong, pp);
	if (use_evd)
		evd_side(pp, 0);
	else
		efd_side(pp, 0);
	pthread_join(tid, NULL);
	qsort(pp->lat, n, sizeof(*pp->lat), cmp_u64);
	*p50 = pp->lat[n / 2];
	*p99 = pp->lat[n * 99 / 100];
}

int main(int argc, char **argv)
{
	uint32_t each = 2000000;
	unsigned int rounds = 20000;
	bool stress = false, ok;
	uint64_t e50, e99, r50, r99;
	struct pp pp = { 0 };
	double rate;
	int opt;

	while ((opt = getopt(argc, argv, "n:p:s")) != -1) {
		switch (opt) {
		case 'n':
			each = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'p':
			rounds = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 's':
			stress = true;
			break;
		default:
			fprintf(stderr,
				"usage: %s [-n events] [-p rounds] [-s]\n",
				argv[0]);
			return 2;
		}
	}
	if (!each || !rounds)
		return 2;
	printf("evd_bench: %ld online CPUs, %u callback threads requested\n",
	       sysconf(_SC_NPROCESSORS_ONLN),
	       getenv("OPENRDMA_CB_THREADS") ?
		       (unsigned int)atoi(getenv("OPENRDMA_CB_THREADS")) :
		       0);

	rate = run_callbacks(2, 2, each, false, &ok);
	printf("callbacks, 2 producers -> 2 EVDs: %10.0f events/s  %s\n", rate,
	       ok ? "ok" : "LOST/REORDERED");
	rate = run_callbacks(2, 1, each, false, &ok);
	printf("callbacks, 2 producers -> 1 EVD:  %10.0f events/s  %s\n", rate,
	       ok ? "ok" : "LOST/REORDERED");

	pp.rounds = rounds;
	pp.lat = calloc(2 * (size_t)rounds, sizeof(*pp.lat));
	pp.evd[0] = t_sevd(16, 0);
	pp.evd[1] = t_sevd(16, 0);
	pp.efd[0] = eventfd(0, 0);
	pp.efd[1] = eventfd(0, 0);
	if (!pp.lat || pp.efd[0] < 0 || pp.efd[1] < 0)
		die("setup", -OPENRDMA_ENOMEM);
	/* the raw figure first and last: the machine's noise shows */
	run_pingpong(&pp, false, &r50, &r99);
	run_pingpong(&pp, true, &e50, &e99);
	printf("wake-up, raw eventfd ping-pong:   median %7.2f us  p99 %7.2f us\n",
	       r50 / 1e3, r99 / 1e3);
	printf("wake-up, blocked core_evd_wait:   median %7.2f us  p99 %7.2f us\n",
	       e50 / 1e3, e99 / 1e3);
	printf("ratio evd/raw:                    median %7.2f     p99 %7.2f\n",
	       (double)e50 / (double)r50, (double)e99 / (double)r99);
	run_pingpong(&pp, false, &r50, &r99);
	printf("wake-up, raw eventfd again:       median %7.2f us  p99 %7.2f us\n",
	       r50 / 1e3, r99 / 1e3);
	core_evd_free(pp.evd[0]);
	core_evd_free(pp.evd[1]);
	close(pp.efd[0]);
	close(pp.efd[1]);
	free(pp.lat);

	if (stress) {
		rate = run_callbacks(8, 4, 1000000, true, &ok);
		printf("stress, 8 x 1M through callbacks: %10.0f events/s  %s\n",
		       rate, ok ? "each exactly once, in order" : "FAILED");
		if (!ok)
			return 1;
	}
	return core_evd_engine_threads() ? 1 : 0;
}
