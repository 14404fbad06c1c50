/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The three kinds of peer.  All of them run conf_agent_exec(): 'local'
 * calls it directly, 'thread' and 'process' send the request over a
 * socketpair to an agent in another thread or a forked child.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"
#include "conf_sys.h"

/* An agent that does not answer within this is considered hung. */
#define PEER_RPC_TIMEOUT_MS 30000

struct conf_peer {
	enum conf_mode mode;
	struct conf_agent *agent; /* local; the thread's until it stops */
	int fd; /* thread and process: our end of the socketpair */
	pthread_t thread;
	pid_t pid;
	struct conf_msg *req;
	struct conf_msg *rep;
};

void conf_agent_serve(struct conf_agent *agent, int fd)
{
	struct conf_msg *req = malloc(sizeof(*req));
	struct conf_msg *rep = malloc(sizeof(*rep));

	if (!req || !rep)
		goto out;
	/* -1: the test side decides how long a request may take */
	while (!conf_msg_recv(fd, req, -1)) {
		conf_agent_exec(agent, req, rep);
		if (req->op == CONF_OP_QUIT) {
			rep->ret = conf_agent_free(agent);
			agent = NULL;
		}
		if (conf_msg_send(fd, rep) || !agent)
			break;
	}
out:
	if (agent)
		conf_agent_free(agent);
	free(rep);
	free(req);
}

struct thread_arg {
	struct conf_agent *agent;
	int fd;
};

static void *agent_thread(void *p)
{
	struct thread_arg *arg = p;

	conf_agent_serve(arg->agent, arg->fd);
	close(arg->fd);
	free(arg);
	return NULL;
}

static int start_thread(struct conf_peer *peer, int fd)
{
	struct thread_arg *arg = malloc(sizeof(*arg));
	int ret;

	if (!arg)
		return -OPENRDMA_ENOMEM;
	*arg = (struct thread_arg){ peer->agent, fd };
	ret = -pthread_create(&peer->thread, NULL, agent_thread, arg);
	if (ret) {
		free(arg);
		return ret;
	}
	peer->agent = NULL; /* the thread frees it */
	return 0;
}

static int start_process(struct conf_peer *peer, int fd, int other)
{
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		/* never outlive a test that Criterion killed on timeout */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(other);
		conf_agent_serve(peer->agent, fd);
		_exit(0);
	}
	conf_agent_free(peer->agent);
	peer->agent = NULL;
	peer->pid = pid;
	return 0;
}

int conf_peer_start(enum conf_mode mode, struct conf_peer **peer_out)
{
	struct conf_peer *peer;
	int sv[2] = { -1, -1 };
	int ret;

	peer = calloc(1, sizeof(*peer));
	if (!peer)
		return -OPENRDMA_ENOMEM;
	peer->mode = mode;
	peer->fd = -1;
	peer->req = malloc(sizeof(*peer->req));
	peer->rep = malloc(sizeof(*peer->rep));
	if (!peer->req || !peer->rep) {
		ret = -OPENRDMA_ENOMEM;
		goto err_free;
	}
	ret = conf_agent_new(&peer->agent);
	if (ret)
		goto err_free;
	if (mode == CONF_MODE_LOCAL)
		goto out;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		ret = -errno;
		goto err_agent;
	}
	if (mode == CONF_MODE_THREAD)
		ret = start_thread(peer, sv[1]);
	else
		ret = start_process(peer, sv[1], sv[0]);
	if (ret)
		goto err_sock;
	if (mode == CONF_MODE_PROCESS)
		close(sv[1]);
	peer->fd = sv[0];
out:
	*peer_out = peer;
	return 0;

err_sock:
	close(sv[0]);
	close(sv[1]);
err_agent:
	if (peer->agent)
		conf_agent_free(peer->agent);
err_free:
	free(peer->rep);
	free(peer->req);
	free(peer);
	return ret;
}

struct conf_msg *conf_peer_req(struct conf_peer *peer, enum conf_op op)
{
	memset(peer->req, 0, CONF_MSG_HDR_LEN);
	peer->req->op = op;
	return peer->req;
}

/* Sends peer->req and reads the reply; a dead agent fails the test. */
struct conf_msg *conf_peer_do(struct conf_peer *peer)
{
	int ret;

	if (peer->mode == CONF_MODE_LOCAL) {
		conf_agent_exec(peer->agent, peer->req, peer->rep);
		return peer->rep;
	}
	cr_assert_neq(peer->fd, -1, "the peer agent is gone");
	ret = conf_msg_send(peer->fd, peer->req);
	if (!ret)
		ret = conf_msg_recv(peer->fd, peer->rep, PEER_RPC_TIMEOUT_MS);
	cr_assert_eq(ret, 0, "peer agent (%s) did not answer request %u: %s",
		     conf_mode_name(peer->mode), peer->req->op,
		     openrdma_strerror(ret));
	cr_assert_eq(peer->rep->op, peer->req->op, "peer answered %u for %u",
		     peer->rep->op, peer->req->op);
	return peer->rep;
}

/* Waits up to timeout_ms for the child; kills it if it does not exit. */
static int reap(pid_t pid, int timeout_ms)
{
	int status, waited = 0;
	pid_t ret;

	for (;;) {
		ret = waitpid(pid, &status, WNOHANG);
		if (ret == pid)
			break;
		if (ret < 0)
			return -errno;
		if (waited >= timeout_ms) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -OPENRDMA_ETIMEDOUT;
		}
		usleep(10000);
		waited += 10;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return -OPENRDMA_EIO;
	return 0;
}

int conf_peer_kill(struct conf_peer *peer)
{
	int status;

	if (peer->mode != CONF_MODE_PROCESS || peer->fd < 0)
		return -OPENRDMA_EOPNOTSUPP;
	kill(peer->pid, SIGKILL);
	waitpid(peer->pid, &status, 0);
	close(peer->fd);
	peer->fd = -1;
	return 0;
}

int conf_peer_stop(struct conf_peer *peer)
{
	int ret, err;

	if (peer->mode == CONF_MODE_LOCAL) {
		ret = conf_agent_free(peer->agent);
		goto out;
	}
	if (peer->fd < 0) {
		ret = 0; /* killed by the test */
		goto out;
	}
	conf_peer_req(peer, CONF_OP_QUIT);
	ret = conf_msg_send(peer->fd, peer->req);
	if (!ret)
		ret = conf_msg_recv(peer->fd, peer->rep, PEER_RPC_TIMEOUT_MS);
	if (!ret)
		ret = peer->rep->ret;
	close(peer->fd);
	if (peer->mode == CONF_MODE_THREAD) {
		/* after a lost answer the thread may still be inside a verb */
		err = -pthread_join(peer->thread, NULL);
	} else {
		err = reap(peer->pid, PEER_RPC_TIMEOUT_MS);
	}
	if (err && !ret)
		ret = err;
out:
	free(peer->rep);
	free(peer->req);
	free(peer);
	return ret;
}
