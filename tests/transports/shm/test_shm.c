/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The shm transport between two processes, where the conformance suite
 * does not go: a peer killed with SIGKILL (flushes, events, nothing left
 * behind), the ring-copy fallback (forced by shm.cma, or found at connect
 * time when cross-memory attach is refused), the permissions of the
 * segments, other users, deregistration under a peer's writes, a
 * connection closed while another thread polls, an acknowledgement just
 * before a DREQ, blocking waits and busy polling.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openrdma/registry.h>

#include "shm_test.h"
#include "transports/shm/shm.h"

#define NOBODY 65534

static unsigned int seeds[4] = { 11, 22, 33, 44 };

/* ------------------------------------------------------------------ */
/* The child: the active side                                         */
/* ------------------------------------------------------------------ */

struct child_arg {
	bool as_nobody;
	bool expect_refused;
	bool idle; /* connect, say ready, wait to be killed */
};

static bool qp_cma(struct openrdma_qp *qp)
{
	struct shm_conn *conn = shm_conn_get(to_shm_qp(qp));
	bool cma = conn && atomic_load(&conn->cma);

	if (conn)
		shm_conn_put(conn);
	return cma;
}

static int become_nobody(void)
{
	if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
		return -1;
	return 0;
}

static int child_main(void *varg, uint16_t port, int ready_fd)
{
	struct child_arg *arg = varg;
	struct openrdma_wc wc;
	struct st_side s;
	char ready;
	int ret, i;

	if (arg->as_nobody && become_nobody())
		return ST_EXIT_SETUP;
	if (st_open(&s, false))
		return ST_EXIT_OPEN;
	st_fill(s.buf + ST_OFF_READ, ST_RDMA, seeds[1]);
	if (st_post_recv(&s, 1, ST_OFF_MSG, ST_MSG) ||
	    st_post_recv(&s, 2, ST_OFF_DONE, 64))
		return ST_EXIT_OPEN;
	ret = st_connect(&s, port);
	if (arg->expect_refused) {
		/* the refused attempt's CM id is ours to destroy */
		st_close(&s);
		return ret ? 0 : ST_EXIT_REFUSED;
	}
	if (ret)
		return ST_EXIT_CONNECT;
	/* tell the parent whether we copy into its memory ourselves */
	ready = qp_cma(s.qp) ? 'c' : 'r';
	if (write(ready_fd, &ready, 1) != 1)
		return ST_EXIT_SETUP;
	if (arg->idle)
		for (;;)
			pause();
	for (i = 1; i <= 2; i++) {
		ret = st_poll(&s, &wc, ST_TIMEOUT_MS);
		if (ret || wc.wr_id != (uint64_t)i)
			return ST_EXIT_RECV;
	}
	if (!st_check(s.buf, ST_RDMA, seeds[0]) ||
	    !st_check(s.buf + ST_OFF_MSG, ST_MSG, seeds[2]))
		return ST_EXIT_DATA;
	st_close(&s);
	return 0;
}

/* ------------------------------------------------------------------ */
/* The parent: the passive side                                       */
/* ------------------------------------------------------------------ */

static void expect_ok(struct st_side *s, const char *what)
{
	struct openrdma_wc wc;
	int ret = st_poll(s, &wc, ST_TIMEOUT_MS);

	cr_assert_eq(ret, 0, "%s: %s", what,
		     ret < 0 ? openrdma_strerror(ret) :
			       openrdma_wc_status_str(wc.status));
}

/* RDMA write, a large send, RDMA read and a last send, both ways
 * checked; cma: what each side should have found. */
static void traffic(struct child_arg *arg, bool cma_a, bool cma_b)
{
	struct st_child child;
	struct st_side a;
	char ready;
	int status;

	st_child_start(&child, child_main, arg);
	cr_assert_eq(st_open(&a, false), 0);
	st_child_go(&child, st_listen(&a));
	st_accept(&a);
	ready = st_child_ready(&child);
	cr_assert_eq(ready == 'c', cma_b, "the child %s copy by itself",
		     ready == 'c' ? "does" : "does not");
	cr_assert_eq(qp_cma(a.qp), cma_a, "this side %s copy by itself",
		     cma_a ? "should" : "should not");

	st_fill(a.buf, ST_RDMA, seeds[0]);
	cr_assert_eq(st_post(&a, OPENRDMA_WR_RDMA_WRITE, 1, 0, ST_RDMA, 0), 0);
	expect_ok(&a, "RDMA write");
	st_fill(a.buf + ST_OFF_MSG, ST_MSG, seeds[2]);
	cr_assert_eq(st_post(&a, OPENRDMA_WR_SEND, 2, ST_OFF_MSG, ST_MSG, 0),
		     0);
	expect_ok(&a, "large send");
	cr_assert_eq(st_post(&a, OPENRDMA_WR_RDMA_READ, 3, ST_OFF_READ, ST_RDMA,
			     ST_OFF_READ),
		     0);
	expect_ok(&a, "RDMA read");
	cr_assert(st_check(a.buf + ST_OFF_READ, ST_RDMA, seeds[1]),
		  "RDMA read brought other bytes");
	cr_assert_eq(st_post(&a, OPENRDMA_WR_SEND, 4, 0, 64, 0), 0);
	expect_ok(&a, "last send");
	status = st_child_wait(&child);
	cr_assert_eq(status, 0, "the child failed (status %d)", status);
	st_close(&a);
}

static const char *fw_ver(void)
{
	static struct openrdma_device_attr attr;
	struct openrdma_context *ctx;
	struct openrdma_device *dev;

	cr_assert_eq(openrdma_device_find("shm0", &dev), 0);
	cr_assert_eq(openrdma_device_open(dev, &ctx), 0);
	cr_assert_eq(openrdma_device_query(ctx, &attr), 0);
	cr_assert_eq(openrdma_context_close(ctx), 0);
	return attr.fw_ver;
}

Test(shm, single_copy_traffic)
{
	struct child_arg arg = { 0 };

	if (strstr(fw_ver(), "ring copies"))
		cr_skip_test("cross-memory attach is off here: %s", fw_ver());
	traffic(&arg, true, true);
}

Test(shm, ring_copies_forced_by_param)
{
	struct child_arg arg = { 0 };

	/* before the registry reads the parameters; the child inherits it */
	cr_assert_eq(setenv("OPENRDMA_SHM_CMA", "no", 1), 0);
	cr_assert(strstr(fw_ver(), "ring copies (shm.cma=no)"),
		  "openrdma-info does not say it: %s", fw_ver());
	traffic(&arg, false, false);
}

/* Makes process_vm_readv/writev on us fail for peers of our own user. */
static void refuse_cma(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	cr_assert_eq(prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), 0);
	/* root could still attach: give that up (the child inherits it) */
	cr_assert_eq(syscall(SYS_capget, &hdr, data), 0);
	data[0].effective &= ~(1u << CAP_SYS_PTRACE);
	data[0].permitted &= ~(1u << CAP_SYS_PTRACE);
	data[0].inheritable &= ~(1u << CAP_SYS_PTRACE);
	cr_assert_eq(syscall(SYS_capset, &hdr, data), 0);
}

Test(shm, ring_copies_when_attach_refused)
{
	struct child_arg arg = { 0 };

	if (strstr(fw_ver(), "ring copies"))
		cr_skip_test("cross-memory attach is off anyway: %s", fw_ver());
	refuse_cma();
	/* found at connect time, on both sides, and the traffic still
	 * arrives intact */
	traffic(&arg, false, false);
}

Test(shm, other_user_refused_unless_allowed)
{
	struct child_arg arg = { .as_nobody = true, .expect_refused = true };
	struct st_child child;
	struct st_side a;
	int ret;

	if (geteuid())
		cr_skip_test("needs root to run a process as another user");
	st_child_start(&child, child_main, &arg);
	cr_assert_eq(st_open(&a, false), 0);
	st_child_go(&child, st_listen(&a));
	ret = st_child_wait(&child);
	cr_assert_neq(ret, ST_EXIT_REFUSED,
		      "a process of another user connected");
	cr_assert_eq(ret, 0, "the other user's process failed: exit %d", ret);
	/* and nothing reached the listener */
	ret = st_cm_wait(&a, OPENRDMA_CM_EVENT_CONNECT_REQUEST, NULL, 300);
	cr_assert_eq(ret, -OPENRDMA_ETIMEDOUT, "the listener saw it: %s",
		     openrdma_strerror(ret));
	st_close(&a);

	/* allowed on both sides: root may attach to the other user's
	 * memory, the other user not to root's */
	cr_assert_eq(setenv("OPENRDMA_SHM_ALLOW_USERS", "*", 1), 0);
	arg.expect_refused = false;
	traffic(&arg, true, false);
}

/* ------------------------------------------------------------------ */
/* A peer killed                                                      */
/* ------------------------------------------------------------------ */

/* Descriptors and mappings of ours still open. */
static int leftovers(void)
{
	char path[300], target[256], line[512];
	struct dirent *d;
	ssize_t n;
	int count = 0;
	DIR *dir;
	FILE *f;

	dir = opendir("/proc/self/fd");
	cr_assert_not_null(dir);
	while ((d = readdir(dir))) {
		snprintf(path, sizeof(path), "/proc/self/fd/%s", d->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		count += strstr(target, "openrdma-shm") != NULL;
	}
	closedir(dir);
	f = fopen("/proc/self/maps", "r");
	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f))
		count += strstr(line, "openrdma-shm") != NULL;
	fclose(f);
	return count;
}

static int dev_shm_entries(void)
{
	struct dirent *d;
	int n = 0;
	DIR *dir = opendir("/dev/shm");

	if (!dir)
		return 0;
	/* other programs of the machine may use /dev/shm meanwhile */
	while ((d = readdir(dir)))
		n += strstr(d->d_name, "openrdma") != NULL;
	closedir(dir);
	return n;
}

/* Is this abstract socket name bound by anybody? */
static bool name_bound(const char *name)
{
	char line[512];
	bool found = false;
	FILE *f = fopen("/proc/net/unix", "r");

	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, name))
			found = true;
	fclose(f);
	return found;
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 +
	       (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Kills a connected child; with_recv: receives are outstanding. */
static void kill_peer(bool with_recv)
{
	struct child_arg arg = { .idle = true };
	struct openrdma_async_event aev;
	struct openrdma_qp_init_attr init;
	struct openrdma_cm_event ev;
	struct openrdma_qp_attr attr;
	struct openrdma_wc wc;
	struct st_child child;
	struct timespec t0;
	struct st_side a;
	char node_name[64];
	int shm_before = dev_shm_entries(), ret, i, status;

	cr_assert_eq(leftovers(), 0);
	st_child_start(&child, child_main, &arg);
	cr_assert_eq(st_open(&a, false), 0);
	st_child_go(&child, st_listen(&a));
	st_accept(&a);
	st_child_ready(&child);
	snprintf(node_name, sizeof(node_name), "@%s/node/%u", SHM_NAME_PREFIX,
		 SHM_QPN_NODE(to_shm_qp(a.qp)->conn->peer_qpn));
	cr_assert(name_bound(node_name), "%s not bound", node_name);
	if (with_recv) {
		cr_assert_eq(st_post_recv(&a, 7, 0, 64), 0);
		cr_assert_eq(st_post_recv(&a, 8, 64, 64), 0);
	}

	kill(child.pid, SIGKILL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = st_cm_wait(&a, OPENRDMA_CM_EVENT_DISCONNECTED, &ev, 1000);
	cr_assert_eq(ret, 0, "no DISCONNECTED within 1 s: %s",
		     openrdma_strerror(ret));
	cr_assert_eq(ev.status, -OPENRDMA_ECONNRESET,
		     "a broken connection reports a status");
	cr_assert_lt(ms_since(&t0), 1000);
	/* the kernel closes a dead process's sockets one by one */
	while (name_bound(node_name) && ms_since(&t0) < 1000)
		usleep(1000);
	cr_assert(!name_bound(node_name), "the dead peer's %s is still bound",
		  node_name);

	if (with_recv) {
		/* what was outstanding is flushed, with an event */
		for (i = 7; i <= 8; i++) {
			cr_assert_eq(st_poll(&a, &wc, 1000),
				     OPENRDMA_WC_WR_FLUSH_ERR);
			cr_assert_eq(wc.wr_id, (uint64_t)i);
		}
		cr_assert_lt(ms_since(&t0), 1000);
		cr_assert_eq(openrdma_async_event_get(a.ctx, &aev), 0);
		cr_assert_eq(aev.event_type, OPENRDMA_EVENT_QP_FATAL);
		cr_assert_eq(aev.element.qp, a.qp);
		openrdma_async_event_ack(&aev);
	} else {
		/* nothing to tell: the next request finds out (semantics
		 * page: peer dead, RETRY_EXC_ERR) */
		cr_assert_eq(openrdma_qp_query(a.qp, &attr, OPENRDMA_QP_STATE,
					       &init),
			     0);
		cr_assert_eq(attr.qp_state, OPENRDMA_QPS_RTS);
		cr_assert_eq(st_post(&a, OPENRDMA_WR_SEND, 9, 0, 64, 0), 0);
		cr_assert_eq(st_poll(&a, &wc, 1000), OPENRDMA_WC_RETRY_EXC_ERR);
	}
	cr_assert_eq(openrdma_qp_query(a.qp, &attr, OPENRDMA_QP_STATE, &init),
		     0);
	cr_assert_eq(attr.qp_state, OPENRDMA_QPS_ERR);
	cr_assert_eq(waitpid(child.pid, &status, 0), child.pid);
	cr_assert(WIFSIGNALED(status));
	close(child.ready_fd);

	st_close(&a);
	/* memfd segments and abstract names: nothing survives anybody */
	cr_assert_eq(leftovers(), 0, "segments still open or mapped");
	cr_assert_eq(dev_shm_entries(), shm_before, "files left in /dev/shm");
}

Test(shm, killed_peer_flushes_and_reports)
{
	kill_peer(true);
}

Test(shm, killed_peer_fails_next_request)
{
	kill_peer(false);
}

/* ------------------------------------------------------------------ */
/* Deregistration under remote writes                                 */
/* ------------------------------------------------------------------ */

#define DEREG_LEN ST_RDMA

/* The child: RDMA writes into the parent's buffer, one at a time, until
 * the parent's deregistration refuses one. */
static int writer_main(void *varg, uint16_t port, int ready_fd)
{
	struct openrdma_wc wc;
	struct st_side s;
	char ready = 'w';
	uint64_t n;
	int ret;

	(void)varg;
	if (st_open(&s, false))
		return ST_EXIT_OPEN;
	st_fill(s.buf, DEREG_LEN, seeds[3]);
	if (st_connect(&s, port))
		return ST_EXIT_CONNECT;
	if (write(ready_fd, &ready, 1) != 1)
		return ST_EXIT_SETUP;
	for (n = 0; n < 10000000; n++) {
		if (st_post(&s, OPENRDMA_WR_RDMA_WRITE, n, 0, DEREG_LEN, 0))
			return ST_EXIT_DATA;
		ret = st_poll(&s, &wc, ST_TIMEOUT_MS);
		if (ret == OPENRDMA_WC_REM_ACCESS_ERR) {
			st_close(&s);
			return 0;
		}
		if (ret)
			return ST_EXIT_DATA;
	}
	return ST_EXIT_DATA;
}

/*
 * Once openrdma_mr_dereg() returned, no write of the peer reaches the
 * memory: those under way finished before, the next fail with
 * REM_ACCESS_ERR.  With cma the peer copies itself; without, this
 * side's receive path executes them.
 */
static void dereg_under_writes(bool cma)
{
	struct st_child child;
	struct st_side a;
	long end;
	int status;

	st_child_start(&child, writer_main, NULL);
	cr_assert_eq(st_open(&a, false), 0);
	st_child_go(&child, st_listen(&a));
	st_accept(&a);
	cr_assert_eq(st_child_ready(&child), 'w');
	cr_assert_eq(qp_cma(a.qp), cma);
	/* the writes land: the child's pattern appears */
	end = time(NULL) + 10;
	while (!st_check(a.buf, DEREG_LEN, seeds[3]) && time(NULL) < end)
		usleep(100);
	cr_assert(st_check(a.buf, DEREG_LEN, seeds[3]), "no write arrived");
	cr_assert_eq(openrdma_mr_dereg(a.mr), 0);
	a.mr = NULL;
	st_fill(a.buf, DEREG_LEN, seeds[0]);
	status = st_child_wait(&child);
	cr_assert_eq(status, 0, "the child failed (status %d)", status);
	cr_assert(st_check(a.buf, DEREG_LEN, seeds[0]),
		  "a write landed after the deregistration");
	st_close(&a);
}

Test(shm, dereg_stops_peer_copies)
{
	if (strstr(fw_ver(), "ring copies"))
		cr_skip_test("cross-memory attach is off here: %s", fw_ver());
	dereg_under_writes(true);
}

Test(shm, dereg_stops_target_writes)
{
	cr_assert_eq(setenv("OPENRDMA_SHM_CMA", "no", 1), 0);
	dereg_under_writes(false);
}

/* ------------------------------------------------------------------ */
/* Segments                                                           */
/* ------------------------------------------------------------------ */

static void check_private(int fd, const char *what)
{
	struct stat st;
	int seals;

	cr_assert_eq(fstat(fd, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0600, "%s has mode %o", what,
		     st.st_mode & 0777);
	cr_assert_eq(st.st_uid, geteuid(), "%s", what);
	seals = fcntl(fd, F_GET_SEALS);
	cr_assert_eq(seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
		     F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL,
		     "%s is not sealed against resizing", what);
}

/* The permissions /proc/self/maps shows for the mapping at addr. */
static void map_perms(const void *addr, char perms[5])
{
	unsigned long lo, hi;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	cr_assert_not_null(f);
	perms[0] = 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) == 3 &&
		    (uintptr_t)addr >= lo && (uintptr_t)addr < hi)
			break;
		perms[0] = 0;
	}
	fclose(f);
}

Test(shm, segments_are_private)
{
	struct st_side a, b;
	struct shm_conn *conn;
	struct shm_ctx *sctx;
	char perms[5];
	int fd;

	/* two contexts of this process, connected by the CM */
	cr_assert_eq(st_open(&a, false), 0);
	cr_assert_eq(st_open(&b, false), 0);
	b.listen_id = NULL;
	{
		uint16_t port = st_listen(&a);
		struct sockaddr_in sin = { .sin_family = AF_INET,
					   .sin_port = htons(port) };
		struct openrdma_cm_event *ev;

		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		cr_assert_eq(openrdma_cm_id_create(b.ctx, b.ch, NULL,
						   OPENRDMA_PS_TCP, &b.id),
			     0);
		cr_assert_eq(openrdma_cm_connect(b.id, b.qp,
						 (struct sockaddr *)&sin, NULL),
			     0);
		cr_assert_eq(openrdma_cm_event_get(a.ch, &ev), 0);
		cr_assert_eq(ev->event, OPENRDMA_CM_EVENT_CONNECT_REQUEST);
		a.id = ev->id;
		openrdma_cm_event_ack(ev);
		cr_assert_eq(openrdma_cm_accept(a.id, a.qp, NULL), 0);
		cr_assert_eq(st_cm_wait(&b, OPENRDMA_CM_EVENT_ESTABLISHED, NULL,
					ST_TIMEOUT_MS),
			     0);
		cr_assert_eq(st_cm_wait(&a, OPENRDMA_CM_EVENT_ESTABLISHED, NULL,
					ST_TIMEOUT_MS),
			     0);
	}

	sctx = to_shm_ctx(a.ctx);
	check_private(sctx->node_seg.fd, "the node segment");
	conn = to_shm_qp(a.qp)->conn;
	cr_assert_not_null(conn);
	check_private(conn->own.fd, "a connection segment");

	/* what peers get: read-only, for good */
	fd = shm_seg_ro_fd(&conn->own);
	cr_assert_geq(fd, 0);
	cr_assert_eq(mmap(NULL, SHM_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
			  fd, 0),
		     MAP_FAILED, "a peer could map our segment writable");
	cr_assert_eq(errno, EACCES);
	cr_assert_neq(ftruncate(fd, 0), 0, "a peer could resize it");
	cr_assert_neq(write(fd, "x", 1), 1, "a peer could write it");
	close(fd);
	/* and the peer's segments are mapped read-only here */
	map_perms(conn->theirs.addr, perms);
	cr_assert_str_eq(perms, "r--s", "the peer's segment is mapped %s",
			 perms);
	map_perms(to_shm_qp(a.qp)->conn->peer->hdr, perms);
	cr_assert_str_eq(perms, "r--s", "the peer's node segment is mapped %s",
			 perms);
	map_perms(conn->own.addr, perms);
	cr_assert_str_eq(perms, "rw-s");

	st_close(&b);
	st_close(&a);
	cr_assert_eq(leftovers(), 0, "segments still open or mapped");
}

/* ------------------------------------------------------------------ */
/* A connection closed while another thread polls                     */
/* ------------------------------------------------------------------ */

struct poller {
	struct openrdma_cq *cq;
	pthread_t thread;
	atomic_bool stop;
	atomic_ulong polls;
	int ret;
};

static void *poller_main(void *arg)
{
	struct poller *p = arg;
	struct openrdma_wc wc;
	int ret;

	while (!atomic_load(&p->stop)) {
		ret = openrdma_cq_poll(p->cq, 1, &wc);
		if (ret) {
			p->ret = ret;
			break;
		}
		atomic_fetch_add(&p->polls, 1);
	}
	return NULL;
}

/* Polls a CQ of its own on ctx in another thread until poller_stop(). */
static void poller_start(struct poller *p, struct openrdma_context *ctx)
{
	*p = (struct poller){ 0 };
	cr_assert_eq(openrdma_cq_create(ctx, 16, NULL, NULL, 0, &p->cq), 0);
	cr_assert_eq(pthread_create(&p->thread, NULL, poller_main, p), 0);
}

/* Returns once the poller made n more polls (or failed). */
static void poller_wait(struct poller *p, unsigned long n)
{
	unsigned long end = atomic_load(&p->polls) + n;

	while (atomic_load(&p->polls) < end && !p->ret)
		sched_yield();
}

static void poller_stop(struct poller *p)
{
	atomic_store(&p->stop, true);
	cr_assert_eq(pthread_join(p->thread, NULL), 0);
	cr_assert_eq(p->ret, 0, "cq_poll: %s", openrdma_strerror(p->ret));
	cr_assert_eq(openrdma_cq_destroy(p->cq), 0);
}

/*
 * Every poll of a CQ passes over the rings of all of its context's
 * connections, whichever QPs they serve.  A thread that destroys a QP
 * frees its connection and unmaps the peer's segment: a poll in another
 * thread must not be reading them.  It did, for a hint, without holding
 * the ring's slot; ThreadSanitizer saw the free race with those reads
 * (and, timed badly, the read faulted on the unmapped segment).
 */
Test(shm, connection_closed_under_a_polling_thread)
{
	struct child_arg arg = { .idle = true };
	struct st_child child;
	struct poller p;
	struct st_side a;
	int status;

	st_child_start(&child, child_main, &arg);
	cr_assert_eq(st_open(&a, false), 0);
	st_child_go(&child, st_listen(&a));
	st_accept(&a);
	st_child_ready(&child);
	poller_start(&p, a.ctx);
	poller_wait(&p, 1000);
	/* as a front end frees an endpoint: its CM id, then its QP */
	cr_assert_eq(openrdma_cm_id_destroy(a.id), 0);
	a.id = NULL;
	cr_assert_eq(openrdma_qp_destroy(a.qp), 0);
	a.qp = NULL;
	/* and the polls go on over what is left */
	poller_wait(&p, 1000);
	poller_stop(&p);

	kill(child.pid, SIGKILL);
	cr_assert_eq(waitpid(child.pid, &status, 0), child.pid);
	close(child.ready_fd);
	st_close(&a);
}

#define DREQ_ROUNDS 20

/* The active side, DREQ_ROUNDS times: connects, takes one message and
 * disconnects, its acknowledgement held back until then (it polled). */
static int one_message_main(void *varg, uint16_t port, int ready_fd)
{
	struct openrdma_wc wc;
	struct st_side s;
	int i;

	(void)varg;
	(void)ready_fd;
	for (i = 0; i < DREQ_ROUNDS; i++) {
		if (st_open(&s, false) || st_post_recv(&s, 1, 0, 64) ||
		    st_connect(&s, port))
			return ST_EXIT_CONNECT;
		if (st_poll(&s, &wc, ST_TIMEOUT_MS) || wc.wr_id != 1)
			return ST_EXIT_RECV;
		st_close(&s);
	}
	return 0;
}

/*
 * A peer acknowledges the last message it took, then disconnects: the
 * acknowledgement is in the ring before the DREQ is on the socket, and
 * the send it answers completes successfully.  The progress thread, at
 * the DREQ, drained the rings with a pass, which skips a ring another
 * thread holds for a moment; the QP then died with the acknowledgement
 * unread, and the send was flushed.  Two threads poll here, as in a
 * threaded application.
 */
Test(shm, acknowledgement_before_a_dreq_completes_the_send)
{
	struct st_child child;
	struct poller p;
	struct st_side a;
	int i;

	st_child_start(&child, one_message_main, NULL);
	cr_assert_eq(st_open(&a, false), 0);
	poller_start(&p, a.ctx);
	st_child_go(&child, st_listen(&a));
	for (i = 0; i < DREQ_ROUNDS; i++) {
		if (i)
			cr_assert_eq(st_qp_new(&a), 0);
		st_accept(&a);
		cr_assert_eq(st_post(&a, OPENRDMA_WR_SEND, (uint64_t)i, 0, 64,
				     0),
			     0);
		expect_ok(&a, "send the peer took before its DREQ");
		cr_assert_eq(st_cm_wait(&a, OPENRDMA_CM_EVENT_DISCONNECTED,
					NULL, ST_TIMEOUT_MS),
			     0);
		cr_assert_eq(openrdma_cm_id_destroy(a.id), 0);
		a.id = NULL;
		cr_assert_eq(openrdma_qp_destroy(a.qp), 0);
		a.qp = NULL;
	}
	poller_stop(&p);
	cr_assert_eq(st_child_wait(&child), 0);
	st_close(&a);
}

/* ------------------------------------------------------------------ */
/* Waiting                                                            */
/* ------------------------------------------------------------------ */

static int sender_main(void *varg, uint16_t port, int ready_fd)
{
	struct openrdma_wc wc;
	struct st_side s;
	char ready = 'r';

	if (st_open(&s, false) || st_connect(&s, port))
		return ST_EXIT_CONNECT;
	if (write(ready_fd, &ready, 1) != 1)
		return ST_EXIT_SETUP;
	/* long enough for the peer's progress thread to fall asleep */
	usleep(300 * 1000);
	st_fill(s.buf, 64, seeds[3]);
	if (st_post(&s, OPENRDMA_WR_SEND, 1, 0, 64, 0) ||
	    st_poll(&s, &wc, ST_TIMEOUT_MS))
		return ST_EXIT_DATA;
	st_close(&s);
	return 0;
}

static void blocking_receive(void)
{
	struct openrdma_wc wc;
	struct openrdma_cq *cq;
	struct st_child child;
	struct timespec t0;
	struct st_side a;
	void *cq_ctx;

	st_child_start(&child, sender_main, NULL);
	cr_assert_eq(st_open(&a, true), 0);
	cr_assert_eq(st_post_recv(&a, 5, 0, 64), 0);
	st_child_go(&child, st_listen(&a));
	st_accept(&a);
	st_child_ready(&child);
	/* nobody polls: the data must come through the channel */
	cr_assert_eq(openrdma_cq_req_notify(a.cq, 0), 0);
	cr_assert_eq(openrdma_cq_poll(a.cq, 1, &wc), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	cr_assert_eq(openrdma_cq_event_get(a.comp, &cq, &cq_ctx), 0);
	cr_assert_eq(cq, a.cq);
	cr_assert_gt(ms_since(&t0), 100, "woken before the send");
	openrdma_cq_events_ack(a.cq, 1);
	cr_assert_eq(openrdma_cq_poll(a.cq, 1, &wc), 1);
	cr_assert_eq(wc.status, OPENRDMA_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 5);
	cr_assert(st_check(a.buf, 64, seeds[3]));
	cr_assert_eq(st_child_wait(&child), 0);
	st_close(&a);
}

Test(shm, blocking_wait_wakes)
{
	blocking_receive();
}

Test(shm, busy_poll)
{
	struct child_arg arg = { 0 };

	cr_assert_eq(setenv("OPENRDMA_SHM_BUSY_POLL", "yes", 1), 0);
	blocking_receive();
	traffic(&arg, !strstr(fw_ver(), "ring copies"),
		!strstr(fw_ver(), "ring copies"));
}
