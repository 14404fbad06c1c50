/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * openrdma-perf: perftest-class benchmarks over the OpenRDMA verbs core.
 *
 *   openrdma-perf [options]           the server
 *   openrdma-perf [options] SERVER    the client, which decides the tests
 *   openrdma-perf -l [options]        both: two processes when the
 *                                     interface reaches other processes,
 *                                     else two threads of this one
 *
 * See openrdma-perf(1).  Exit status: 0, 1 on any failure, 2 on a usage
 * error.
 */
#include "config.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openrdma/registry.h>

#include "examples/perf/openrdma_perf.h"

static void side_init(struct perf_side *side, const struct perf_opts *opts,
		      bool is_server, int cpu)
{
	memset(side, 0, sizeof(*side));
	side->is_server = is_server;
	side->opts = opts;
	side->p = opts->p;
	side->cpu = cpu;
	side->ready_fd = -1;
	side->event_fd = -1;
}

static uint32_t session_id(void)
{
	uint32_t v;

	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		v = (uint32_t)perf_now_ns() ^ ((uint32_t)getpid() << 16);
	return v;
}

/* Whether the interface reaches other processes (-l: fork or threads). */
static int cross_process(const struct perf_opts *opts, bool *cross)
{
	const char *name = opts->dev_name;
	struct openrdma_device_attr attr;
	struct openrdma_context *ctx;
	struct openrdma_device *dev;
	int ret;

	if (!name)
		name = openrdma_default_interface();
	if (!name)
		return perf_err(NULL, "no interface found", -OPENRDMA_ENODEV);
	ret = openrdma_device_find(name, &dev);
	if (ret)
		return perf_err(NULL, name, ret);
	ret = openrdma_device_open(dev, &ctx);
	if (ret)
		return perf_err(NULL, name, ret);
	ret = openrdma_device_query(ctx, &attr);
	openrdma_context_close(ctx);
	if (ret)
		return perf_err(NULL, "device_query", ret);
	*cross = attr.device_cap_flags & OPENRDMA_DEVICE_CROSS_PROCESS;
	return 0;
}

static void *server_thread(void *arg)
{
	struct perf_side *server = arg;

	server->status = perf_server_run(server);
	return NULL;
}

/* The server reports where it listens, or an empty address on failure. */
static int server_addr(int fd, unsigned int timeout_s,
		       struct sockaddr_storage *ss)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t n;

	if (poll(&pfd, 1, (int)timeout_s * 1000) <= 0)
		return perf_err(NULL, "server start", -OPENRDMA_ETIMEDOUT);
	n = read(fd, ss, sizeof(*ss));
	if (n != (ssize_t)sizeof(*ss) || ss->ss_family == AF_UNSPEC)
		return -OPENRDMA_ENOTCONN; /* the server said why */
	return 0;
}

static int run_local(const struct perf_opts *opts)
{
	struct perf_side server, client;
	bool cross = false;
	pthread_t thr;
	int fds[2], ret, wstatus;
	pid_t pid;

	ret = cross_process(opts, &cross);
	if (ret)
		return 1;
	if (pipe2(fds, O_CLOEXEC))
		return perf_err(NULL, "pipe", -errno) ? 1 : 0;
	side_init(&server, opts, true, opts->cpu[1]);
	side_init(&client, opts, false, opts->cpu[0]);
	server.ready_fd = fds[1];
	server.shares_process = client.shares_process = !cross;
	if (cross) {
		fflush(NULL);
		pid = fork();
		if (pid < 0)
			return perf_err(NULL, "fork", -errno) ? 1 : 0;
		if (pid == 0) {
			close(fds[0]);
			_exit(perf_server_run(&server) ? 1 : 0);
		}
		close(fds[1]);
		ret = server_addr(fds[0], opts->p.timeout_s, &client.addr);
		close(fds[0]);
		if (!ret)
			ret = perf_client_run(&client);
		if (waitpid(pid, &wstatus, 0) < 0 || !WIFEXITED(wstatus) ||
		    WEXITSTATUS(wstatus))
			ret = ret ? ret : -OPENRDMA_EIO;
		return ret ? 1 : 0;
	}
	ret = pthread_create(&thr, NULL, server_thread, &server);
	if (ret) {
		close(fds[0]);
		close(fds[1]);
		return perf_err(NULL, "pthread_create", -ret) ? 1 : 0;
	}
	ret = server_addr(fds[0], opts->p.timeout_s, &client.addr);
	close(fds[0]);
	if (!ret)
		ret = perf_client_run(&client);
	pthread_join(thr, NULL);
	return ret || server.status ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct perf_opts opts;
	struct perf_side side;
	int ret;

	ret = perf_opts_parse(argc, argv, &opts);
	if (ret)
		return ret > 0 ? 0 : 2;
	/* The scale test and many QPs need descriptors. */
	perf_fd_limit_raise();
	perf_cycles_init();
	opts.p.session = session_id();
	if (opts.local)
		return run_local(&opts);
	side_init(&side, &opts, !opts.server, opts.cpu[0]);
	ret = opts.server ? perf_client_run(&side) : perf_server_run(&side);
	return ret ? 1 : 0;
}
