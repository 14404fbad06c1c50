/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* The tests, the command line, and the defaults of the flow control. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openrdma/registry.h>

#include "examples/perf/openrdma_perf.h"

#define DEFAULT_WINDOW 128
#define DEFAULT_POST_LIST 16
#define DEFAULT_CQ_MOD 32
#define DEFAULT_RX_DEPTH 512
#define MAX_DEPTH 16384

const struct perf_test_desc perf_tests[PERF_TEST_NUM] = {
	[PERF_LAT_SEND] = { "lat_send", "send/receive ping-pong",
			    PERF_KIND_PINGPONG, OPENRDMA_WR_SEND, false },
	[PERF_LAT_WRITE] = { "lat_write", "RDMA write ping-pong",
			     PERF_KIND_PINGPONG, OPENRDMA_WR_RDMA_WRITE,
			     false },
	[PERF_LAT_READ] = { "lat_read", "RDMA read", PERF_KIND_ROUNDTRIP,
			    OPENRDMA_WR_RDMA_READ, false },
	[PERF_LAT_ATOMIC] = { "lat_atomic", "atomic fetch-and-add (8 bytes)",
			      PERF_KIND_ROUNDTRIP,
			      OPENRDMA_WR_ATOMIC_FETCH_AND_ADD, false },
	[PERF_BW_SEND] = { "bw_send", "send stream", PERF_KIND_STREAM,
			   OPENRDMA_WR_SEND, false },
	[PERF_BW_WRITE] = { "bw_write", "RDMA write stream", PERF_KIND_STREAM,
			    OPENRDMA_WR_RDMA_WRITE, false },
	[PERF_BW_READ] = { "bw_read", "RDMA read stream", PERF_KIND_STREAM,
			   OPENRDMA_WR_RDMA_READ, false },
	[PERF_MSG_RATE] = { "msg_rate", "send stream, counted at the receiver",
			    PERF_KIND_STREAM, OPENRDMA_WR_SEND, true },
	[PERF_SCALE] = { "scale", "connected endpoints: set-up rate, memory",
			 PERF_KIND_SCALE, OPENRDMA_WR_SEND, false },
};

const char *perf_test_name(enum perf_test test)
{
	return test < PERF_TEST_NUM ? perf_tests[test].name : NULL;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [options]            run the server\n"
		"       %s [options] SERVER     run the client against SERVER\n"
		"       %s -l [options]         run both sides on this machine\n"
		"\n"
		"  -d, --interface NAME   interface (default: %s)\n"
		"  -p, --port PORT        server port (default %u; -l: any free port)\n"
		"  -t, --test TEST[,...]  lat_send lat_write lat_read lat_atomic bw_send\n"
		"                         bw_write bw_read msg_rate scale, or all (default)\n"
		"  -s, --size BYTES       message size (default 8 for latency, 64k for streams)\n"
		"  -s, --size MIN:MAX     sizes MIN, 2*MIN, 4*MIN, ... up to MAX\n"
		"  -a, --all-sizes        every power of two from 2 B to 8 MiB\n"
		"  -n, --iters N          iterations per QP (default: by size)\n"
		"  -D, --duration SEC     run each size for about SEC seconds instead\n"
		"  -q, --qps N            data QPs (default 1, at least -T)\n"
		"  -T, --threads N        worker threads per side (default 1)\n"
		"  -w, --window N         send requests in flight per QP (default %u)\n"
		"  -P, --post-list N      send requests per post call (default %u)\n"
		"  -Q, --cq-mod N         signal one send request in N (default %u)\n"
		"  -r, --rx-depth N       receives posted per QP (default %u)\n"
		"  -I, --inline BYTES     inline sends up to BYTES (default: the device's)\n"
		"      --endpoints N      scale: endpoints (default: as many as allowed)\n"
		"      --timeout SEC      give up after SEC s without progress (default %u)\n"
		"      --cpu C[,S]        pin the client's threads from core C (and the\n"
		"                         server's from S, with -l)\n"
		"  -l, --local            run server and client here\n"
		"      --csv, --json      machine-readable output\n"
		"      --no-progress      no progress bar\n"
		"  -v, --verbose          the server reports its sessions\n"
		"  -h, --help             this text\n"
		"  -V, --version          the library's version\n",
		PERF_NAME, PERF_NAME, PERF_NAME,
		openrdma_default_interface() ? openrdma_default_interface() :
					       "none found",
		PERF_DEFAULT_PORT, DEFAULT_WINDOW, DEFAULT_POST_LIST,
		DEFAULT_CQ_MOD, DEFAULT_RX_DEPTH, PERF_DEFAULT_TIMEOUT);
}

static int bad(const char *what, const char *arg)
{
	fprintf(stderr, "%s: invalid %s: '%s' (see --help)\n", PERF_NAME, what,
		arg);
	return -OPENRDMA_EINVAL;
}

/* A count in [min, max]. */
static int parse_count(const char *what, const char *arg, uint64_t min,
		       uint64_t max, uint64_t *out)
{
	uint64_t v;

	if (perf_parse_size(arg, &v) || v < min || v > max)
		return bad(what, arg);
	*out = v;
	return 0;
}

static int parse_u32(const char *what, const char *arg, uint32_t min,
		     uint32_t max, uint32_t *out)
{
	uint64_t v;
	int ret;

	ret = parse_count(what, arg, min, max, &v);
	if (!ret)
		*out = (uint32_t)v;
	return ret;
}

static int set_sizes(struct perf_params *p, uint64_t min, uint64_t max,
		     bool *sized)
{
	p->min_size = min;
	p->max_size = max;
	*sized = true;
	return 0;
}

/* -s SIZE or -s MIN:MAX (MIN, 2 MIN, 4 MIN, ... up to MAX). */
static int parse_sizes(const char *arg, struct perf_params *p, bool *sized)
{
	const char *colon = strchr(arg, ':');
	uint64_t min, max;
	char buf[32];

	if (!colon) {
		if (parse_count("size", arg, 1, PERF_MAX_SIZE, &min))
			return -OPENRDMA_EINVAL;
		return set_sizes(p, min, min, sized);
	}
	if ((size_t)(colon - arg) >= sizeof(buf))
		return bad("size range", arg);
	memcpy(buf, arg, (size_t)(colon - arg));
	buf[colon - arg] = '\0';
	if (parse_count("size", buf, 1, PERF_MAX_SIZE, &min) ||
	    parse_count("size", colon + 1, 1, PERF_MAX_SIZE, &max))
		return -OPENRDMA_EINVAL;
	if (max < min)
		return bad("size range", arg);
	return set_sizes(p, min, max, sized);
}

static int parse_tests(const char *arg, struct perf_params *p)
{
	char buf[256], *tok, *save;
	int t;

	if (strlen(arg) >= sizeof(buf))
		return bad("test", arg);
	strcpy(buf, arg);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "all")) {
			p->tests |= PERF_TESTS_ALL;
			continue;
		}
		for (t = 0; t < PERF_TEST_NUM; t++)
			if (!strcmp(tok, perf_tests[t].name))
				break;
		if (t == PERF_TEST_NUM)
			return bad("test", tok);
		p->tests |= 1u << t;
		p->explicit_tests |= 1u << t;
	}
	return 0;
}

static int parse_cpus(const char *arg, int cpu[2])
{
	char *end;
	long c, s;

	c = strtol(arg, &end, 10);
	if (end == arg || c < 0 || c > 4095)
		return bad("cpu", arg);
	s = c + 1;
	if (*end == ',') {
		const char *sarg = end + 1;

		s = strtol(sarg, &end, 10);
		if (end == sarg || s < 0 || s > 4095)
			return bad("cpu", arg);
	}
	if (*end)
		return bad("cpu", arg);
	cpu[0] = (int)c;
	cpu[1] = (int)s;
	return 0;
}

enum {
	OPT_CSV = 256,
	OPT_JSON,
	OPT_TIMEOUT,
	OPT_CPU,
	OPT_ENDPOINTS,
	OPT_NO_PROGRESS,
};

static const struct option long_opts[] = {
	{ "interface", required_argument, NULL, 'd' },
	{ "port", required_argument, NULL, 'p' },
	{ "test", required_argument, NULL, 't' },
	{ "size", required_argument, NULL, 's' },
	{ "all-sizes", no_argument, NULL, 'a' },
	{ "iters", required_argument, NULL, 'n' },
	{ "duration", required_argument, NULL, 'D' },
	{ "qps", required_argument, NULL, 'q' },
	{ "threads", required_argument, NULL, 'T' },
	{ "window", required_argument, NULL, 'w' },
	{ "post-list", required_argument, NULL, 'P' },
	{ "cq-mod", required_argument, NULL, 'Q' },
	{ "rx-depth", required_argument, NULL, 'r' },
	{ "inline", required_argument, NULL, 'I' },
	{ "local", no_argument, NULL, 'l' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ "csv", no_argument, NULL, OPT_CSV },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "cpu", required_argument, NULL, OPT_CPU },
	{ "endpoints", required_argument, NULL, OPT_ENDPOINTS },
	{ "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
	{ NULL, 0, NULL, 0 },
};

static int parse_one(int c, const char *arg, struct perf_opts *o, bool *sized,
		     bool *qps_set)
{
	struct perf_params *p = &o->p;
	uint64_t v;
	double d;
	char *end;

	switch (c) {
	case 'd':
		o->dev_name = arg;
		return 0;
	case 'p':
		o->port_set = true;
		return parse_u32("port", arg, 1, 65535, &o->port);
	case 't':
		return parse_tests(arg, p);
	case 's':
		return parse_sizes(arg, p, sized);
	case 'a':
		p->min_size = PERF_ALL_MIN_SIZE;
		p->max_size = PERF_ALL_MAX_SIZE;
		*sized = true;
		return 0;
	case 'n':
		return parse_count("iteration count", arg, 1, 1ull << 40,
				   &p->iters);
	case 'D':
		d = strtod(arg, &end);
		if (end == arg || *end || !(d > 0) || d > 86400)
			return bad("duration", arg);
		p->duration_ms = (uint64_t)(d * 1000 + 0.5);
		if (!p->duration_ms)
			p->duration_ms = 1;
		return 0;
	case 'q':
		*qps_set = true;
		return parse_u32("QP count", arg, 1, PERF_MAX_QPS, &p->qps);
	case 'T':
		return parse_u32("thread count", arg, 1, PERF_MAX_THREADS,
				 &p->threads);
	case 'w':
		return parse_u32("window", arg, 1, MAX_DEPTH, &p->window);
	case 'P':
		return parse_u32("post list", arg, 1, MAX_DEPTH, &p->post_list);
	case 'Q':
		return parse_u32("cq-mod", arg, 1, MAX_DEPTH, &p->cq_mod);
	case 'r':
		return parse_u32("rx depth", arg, 1, MAX_DEPTH, &p->rx_depth);
	case 'I':
		if (parse_count("inline size", arg, 0, 1u << 20, &v))
			return -OPENRDMA_EINVAL;
		p->inline_size = (int32_t)v;
		return 0;
	case 'l':
		o->local = true;
		return 0;
	case 'v':
		o->verbose = true;
		return 0;
	case OPT_CSV:
		o->format = PERF_FMT_CSV;
		return 0;
	case OPT_JSON:
		o->format = PERF_FMT_JSON;
		return 0;
	case OPT_TIMEOUT:
		o->timeout_set = true;
		return parse_u32("timeout", arg, 1, 86400, &p->timeout_s);
	case OPT_CPU:
		return parse_cpus(arg, o->cpu);
	case OPT_ENDPOINTS:
		return parse_u32("endpoint count", arg, 1, 1u << 24,
				 &p->scale_eps);
	case OPT_NO_PROGRESS:
		o->progress = false;
		return 0;
	default:
		fprintf(stderr, "see '%s --help'\n", PERF_NAME);
		return -OPENRDMA_EINVAL;
	}
}

void perf_params_fix(struct perf_params *p)
{
	if (!p->tests)
		p->tests = PERF_TESTS_ALL;
	if (!p->threads)
		p->threads = 1;
	if (p->qps < p->threads)
		p->qps = p->threads;
	if (!p->window)
		p->window = DEFAULT_WINDOW;
	if (!p->post_list)
		p->post_list = DEFAULT_POST_LIST;
	if (p->post_list > p->window)
		p->post_list = p->window;
	/* Signal at least twice per window, so that it refills while the
	 * rest of it is still in flight. */
	if (!p->cq_mod)
		p->cq_mod = DEFAULT_CQ_MOD;
	if (p->cq_mod > p->window / 2)
		p->cq_mod = p->window / 2 ? p->window / 2 : 1;
	if (!p->rx_depth)
		p->rx_depth = DEFAULT_RX_DEPTH;
	if (!p->timeout_s)
		p->timeout_s = PERF_DEFAULT_TIMEOUT;
}

int perf_opts_parse(int argc, char **argv, struct perf_opts *o)
{
	bool sized = false, qps_set = false;
	int c, ret;

	memset(o, 0, sizeof(*o));
	o->port = PERF_DEFAULT_PORT;
	o->progress = true;
	o->cpu[0] = o->cpu[1] = -1;
	o->p.inline_size = -1;
	while ((c = getopt_long(argc, argv, "d:p:t:s:an:D:q:T:w:P:Q:r:I:lvhV",
				long_opts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return 1;
		}
		if (c == 'V') {
			printf("%s %s\n", PERF_NAME, openrdma_version());
			return 1;
		}
		ret = parse_one(c, optarg, o, &sized, &qps_set);
		if (ret)
			return ret;
	}
	if (optind < argc)
		o->server = argv[optind++];
	if (optind < argc)
		return bad("argument", argv[optind]);
	if (o->server && o->local) {
		fprintf(stderr, "%s: -l runs the server too: no SERVER\n",
			PERF_NAME);
		return -OPENRDMA_EINVAL;
	}
	if (o->p.iters && o->p.duration_ms) {
		fprintf(stderr, "%s: -n and -D exclude each other\n",
			PERF_NAME);
		return -OPENRDMA_EINVAL;
	}
	if (qps_set && o->p.threads > o->p.qps) {
		fprintf(stderr, "%s: -q %u gives %u threads nothing to do\n",
			PERF_NAME, o->p.qps, o->p.threads);
		return -OPENRDMA_EINVAL;
	}
	if (!sized)
		o->p.min_size = o->p.max_size = 0; /* per test */
	perf_params_fix(&o->p);
	return 0;
}

void perf_test_sizes(const struct perf_params *p, enum perf_test test,
		     uint32_t *first, uint32_t *last)
{
	uint32_t def;

	if (test == PERF_LAT_ATOMIC) {
		*first = *last = 8;
		return;
	}
	if (p->min_size) {
		*first = (uint32_t)p->min_size;
		*last = (uint32_t)p->max_size;
		return;
	}
	def = perf_tests[test].kind == PERF_KIND_STREAM ? 65536 : 8;
	*first = *last = def;
}

uint32_t perf_params_max_size(const struct perf_params *p)
{
	uint32_t first, last, max = 8;
	int t;

	for (t = 0; t < PERF_SCALE; t++) {
		if (!(p->tests & (1u << t)))
			continue;
		perf_test_sizes(p, t, &first, &last);
		if (last > max)
			max = last;
	}
	return max;
}
