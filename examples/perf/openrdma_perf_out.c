/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Output: a table for people, CSV or JSON for scripts, and a progress bar
 * on stderr while a long run goes on at a terminal.  Results are printed
 * as they come, so that a run that fails later keeps what it measured;
 * JSON is closed with the run's status.
 */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include <openrdma/registry.h>

#include "examples/perf/openrdma_perf.h"

#define BAR_WIDTH 30

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void bar_clear(struct perf_out *o)
{
	if (o->progress)
		fprintf(stderr, "\r\033[K");
}

static void bar_draw(struct perf_out *o, enum perf_test test, uint32_t size)
{
	unsigned int fill = o->steps ? o->done * BAR_WIDTH / o->steps : 0;
	char bar[BAR_WIDTH + 1];

	memset(bar, '#', fill);
	memset(bar + fill, '.', BAR_WIDTH - fill);
	bar[BAR_WIDTH] = '\0';
	fprintf(stderr, "\r[%s] %u/%u %s %u B\033[K", bar, o->done + 1,
		o->steps, perf_test_name(test), size);
}

void perf_out_step(struct perf_out *o, enum perf_test test, uint32_t size)
{
	if (o->progress)
		bar_draw(o, test, size);
	o->done++;
}

static void table_params(struct perf_out *o,
			 const struct perf_session_info *info)
{
	const struct perf_params *p = info->p;

	fprintf(o->f, "# %s %s: %s (%s) -> server %s at %s\n", PERF_NAME,
		openrdma_version(), info->iface, info->transport, info->peer,
		info->server);
	fprintf(o->f,
		"# QPs %u, threads %u, window %u, post list %u, signal 1 in %u, rx depth %u, inline <= %u B\n",
		p->qps, p->threads, p->window, p->post_list, p->cq_mod,
		p->rx_depth, info->max_inline);
	fprintf(o->f, "# cpu: %% of one core while timed, %s; GB/s = 1e9 B/s\n",
		info->local_threads ?
			"worker threads only (both sides share this process)" :
			"whole process");
}

void perf_out_begin(struct perf_out *o, const struct perf_session_info *info)
{
	const struct perf_params *p = info->p;

	o->last_test = -1;
	o->first_result = true;
	o->progress = o->progress && o->steps > 1 && isatty(STDOUT_FILENO) &&
		      isatty(STDERR_FILENO);
	switch (o->format) {
	case PERF_FMT_TABLE:
		table_params(o, info);
		break;
	case PERF_FMT_CSV:
		fprintf(o->f,
			"test,interface,transport,bytes,iterations,qps,threads,latency,lat_min_us,lat_median_us,lat_avg_us,lat_p99_us,lat_max_us,GBps,Mmsgps,cpu_client_pct,cpu_server_pct,seconds\n");
		break;
	case PERF_FMT_JSON:
		fprintf(o->f,
			"{\n  \"tool\": \"%s\",\n  \"version\": ", PERF_NAME);
		json_str(o->f, openrdma_version());
		fprintf(o->f, ",\n  \"interface\": ");
		json_str(o->f, info->iface);
		fprintf(o->f, ",\n  \"transport\": ");
		json_str(o->f, info->transport);
		fprintf(o->f, ",\n  \"server\": ");
		json_str(o->f, info->server);
		fprintf(o->f, ",\n  \"server_interface\": ");
		json_str(o->f, info->peer);
		fprintf(o->f,
			",\n  \"params\": {\"qps\": %u, \"threads\": %u, \"window\": %u, \"post_list\": %u, \"cq_mod\": %u, \"rx_depth\": %u, \"inline\": %u, \"iterations\": %llu, \"duration_s\": %.3f, \"cpu\": \"%s\"},\n  \"results\": [",
			p->qps, p->threads, p->window, p->post_list, p->cq_mod,
			p->rx_depth, info->max_inline,
			(unsigned long long)p->iters, p->duration_ms / 1000.0,
			info->local_threads ? "threads" : "process");
		break;
	}
	fflush(o->f);
	o->iface = info->iface;
	o->transport = info->transport;
	o->qps = p->qps;
	o->threads = p->threads;
}

static void table_header(struct perf_out *o, enum perf_test test)
{
	const struct perf_test_desc *t = &perf_tests[test];

	fprintf(o->f, "\n# %s: %s", t->name, t->summary);
	switch (t->kind) {
	case PERF_KIND_PINGPONG:
		fprintf(o->f, "; latency one-way (half a round trip), us\n");
		fprintf(o->f, "%10s %10s %9s %9s %9s %9s %9s %8s %8s\n",
			"bytes", "iters", "min", "median", "avg", "p99", "max",
			"cpu_cl%", "cpu_sv%");
		break;
	case PERF_KIND_ROUNDTRIP:
		fprintf(o->f, "; latency a full round trip, us\n");
		fprintf(o->f, "%10s %10s %9s %9s %9s %9s %9s %8s %8s\n",
			"bytes", "iters", "min", "median", "avg", "p99", "max",
			"cpu_cl%", "cpu_sv%");
		break;
	default:
		fprintf(o->f, "; %s\n",
			t->rate_at_target ?
				"rate from the first to the last arrival" :
				"at the initiator, first post to last completion");
		fprintf(o->f, "%10s %10s %10s %10s %8s %8s\n", "bytes", "iters",
			"GB/s", "Mmsg/s", "cpu_cl%", "cpu_sv%");
		break;
	}
}

static bool is_latency(enum perf_test test)
{
	return perf_tests[test].kind != PERF_KIND_STREAM;
}

void perf_out_result(struct perf_out *o, const struct perf_result *r)
{
	const char *name = perf_test_name(r->test);

	bar_clear(o);
	o->any = true;
	switch (o->format) {
	case PERF_FMT_TABLE:
		if (o->last_test != (int)r->test)
			table_header(o, r->test);
		o->last_test = (int)r->test;
		if (is_latency(r->test))
			fprintf(o->f,
				"%10u %10llu %9.3f %9.3f %9.3f %9.3f %9.3f %8.1f %8.1f\n",
				r->size, (unsigned long long)r->iters,
				r->lat_min, r->lat_median, r->lat_avg,
				r->lat_p99, r->lat_max, r->cpu_client,
				r->cpu_server);
		else
			fprintf(o->f, "%10u %10llu %10.3f %10.3f %8.1f %8.1f\n",
				r->size, (unsigned long long)r->iters, r->gbps,
				r->mmps, r->cpu_client, r->cpu_server);
		break;
	case PERF_FMT_CSV:
		fprintf(o->f, "%s,%s,%s,%u,%llu,%u,%u,", name, o->iface,
			o->transport, r->size, (unsigned long long)r->iters,
			o->qps, o->threads);
		if (is_latency(r->test))
			fprintf(o->f, "%s,%.4f,%.4f,%.4f,%.4f,%.4f,,,",
				r->one_way ? "one-way" : "round-trip",
				r->lat_min, r->lat_median, r->lat_avg,
				r->lat_p99, r->lat_max);
		else
			/* significant digits: a slow stream is not 0 */
			fprintf(o->f, ",,,,,,%.6g,%.6g,", r->gbps, r->mmps);
		fprintf(o->f, "%.1f,%.1f,%.3f\n", r->cpu_client, r->cpu_server,
			r->seconds);
		break;
	case PERF_FMT_JSON:
		fprintf(o->f,
			"%s\n    {\"test\": \"%s\", \"bytes\": %u, \"iterations\": %llu, ",
			o->first_result ? "" : ",", name, r->size,
			(unsigned long long)r->iters);
		if (is_latency(r->test))
			fprintf(o->f,
				"\"latency\": \"%s\", \"lat_us\": {\"min\": %.4f, \"median\": %.4f, \"avg\": %.4f, \"p99\": %.4f, \"max\": %.4f}, ",
				r->one_way ? "one-way" : "round-trip",
				r->lat_min, r->lat_median, r->lat_avg,
				r->lat_p99, r->lat_max);
		else
			fprintf(o->f, "\"GBps\": %.6g, \"Mmsgps\": %.6g, ",
				r->gbps, r->mmps);
		fprintf(o->f,
			"\"cpu_client_pct\": %.1f, \"cpu_server_pct\": %.1f, \"seconds\": %.3f}",
			r->cpu_client, r->cpu_server, r->seconds);
		o->first_result = false;
		break;
	}
	fflush(o->f);
}

void perf_out_skip(struct perf_out *o, enum perf_test test, const char *reason)
{
	bar_clear(o);
	switch (o->format) {
	case PERF_FMT_TABLE:
		fprintf(o->f, "\n# %s: skipped: %s\n", perf_test_name(test),
			reason);
		o->last_test = -1;
		break;
	case PERF_FMT_CSV:
		fprintf(stderr, "%s: %s skipped: %s\n", PERF_NAME,
			perf_test_name(test), reason);
		break;
	case PERF_FMT_JSON:
		fprintf(o->f, "%s\n    {\"test\": \"%s\", \"skipped\": ",
			o->first_result ? "" : ",", perf_test_name(test));
		json_str(o->f, reason);
		fputc('}', o->f);
		o->first_result = false;
		break;
	}
	fflush(o->f);
}

void perf_out_scale(struct perf_out *o, const struct perf_scale_result *r)
{
	bar_clear(o);
	switch (o->format) {
	case PERF_FMT_TABLE:
		fprintf(o->f, "\n# scale: %s\n",
			perf_tests[PERF_SCALE].summary);
		fprintf(o->f, "endpoints          %u (limited by %s)\n", r->eps,
			r->limited_by);
		fprintf(o->f, "set-up             %.3f s, %.0f connections/s\n",
			r->setup_s, r->conn_per_s);
		fprintf(o->f, "teardown           %.0f endpoints/s\n",
			r->teardown_per_s);
		if (r->one_process) {
			fprintf(o->f,
				"memory/endpoint    %.1f KiB, both sides in this process (RSS growth / endpoints)\n",
				r->rss_per_ep_client / 1024);
			fprintf(o->f, "fds/endpoint       %.2f, both sides\n",
				r->fds_per_ep_client);
		} else {
			fprintf(o->f,
				"memory/endpoint    client %.1f KiB, server %.1f KiB (RSS growth / endpoints)\n",
				r->rss_per_ep_client / 1024,
				r->rss_per_ep_server / 1024);
			fprintf(o->f,
				"fds/endpoint       client %.2f, server %.2f\n",
				r->fds_per_ep_client, r->fds_per_ep_server);
		}
		fprintf(o->f, "messages           %llu of %u arrived\n",
			(unsigned long long)r->messages, r->eps);
		break;
	case PERF_FMT_CSV:
		fprintf(o->f,
			"\ntest,interface,transport,endpoints,limited_by,setup_s,connections_per_s,teardown_per_s,rss_per_ep_client_bytes,rss_per_ep_server_bytes,fds_per_ep_client,fds_per_ep_server,one_process,messages\n");
		fprintf(o->f,
			"scale,%s,%s,%u,\"%s\",%.4f,%.1f,%.1f,%.0f,%.0f,%.3f,%.3f,%d,%llu\n",
			o->iface, o->transport, r->eps, r->limited_by,
			r->setup_s, r->conn_per_s, r->teardown_per_s,
			r->rss_per_ep_client, r->rss_per_ep_server,
			r->fds_per_ep_client, r->fds_per_ep_server,
			r->one_process, (unsigned long long)r->messages);
		break;
	case PERF_FMT_JSON:
		fprintf(o->f,
			"%s\n    {\"test\": \"scale\", \"endpoints\": %u, \"limited_by\": ",
			o->first_result ? "" : ",", r->eps);
		json_str(o->f, r->limited_by);
		fprintf(o->f,
			", \"setup_s\": %.4f, \"connections_per_s\": %.1f, \"teardown_per_s\": %.1f, \"rss_per_ep_client_bytes\": %.0f, \"rss_per_ep_server_bytes\": %.0f, \"fds_per_ep_client\": %.3f, \"fds_per_ep_server\": %.3f, \"one_process\": %s, \"messages\": %llu}",
			r->setup_s, r->conn_per_s, r->teardown_per_s,
			r->rss_per_ep_client, r->rss_per_ep_server,
			r->fds_per_ep_client, r->fds_per_ep_server,
			r->one_process ? "true" : "false",
			(unsigned long long)r->messages);
		o->first_result = false;
		break;
	}
	fflush(o->f);
}

void perf_out_end(struct perf_out *o, int status, const char *error)
{
	bar_clear(o);
	if (o->format == PERF_FMT_JSON) {
		fprintf(o->f, "\n  ],\n  \"status\": \"%s\"",
			status ? "error" : "ok");
		if (status) {
			fprintf(o->f, ",\n  \"error\": ");
			json_str(o->f,
				 error ? error : openrdma_strerror(status));
		}
		fprintf(o->f, "\n}\n");
	}
	fflush(o->f);
}
