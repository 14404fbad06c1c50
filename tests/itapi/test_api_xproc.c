/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The IT-API between two processes.  The test's process is the active
 * side; a child forked before either side touches the library runs the
 * passive side through it_* calls and reports back over a pipe.  Runs
 * where the interface reaches other processes (tcp0, shm0); elsewhere
 * every test is skipped with the reason.
 */
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <criterion/criterion.h>

#include <openrdma/verbs.h>

#include "tests/itapi/test_api.h"

TestSuite(itapi_xproc, .timeout = 120);

/* The layout of the passive side's exposed buffer. */
#define XP_WRITE_OFF 0 /* the active side writes here */
#define XP_READ_OFF 4096 /* and reads this pattern back */
#define XP_ATOMIC_OFF 8192 /* the word of both atomics */
#define XP_REMOTE_LEN 8256
#define XP_MSG_LEN 256
#define XP_ATOMIC_INIT 100ull
#define XP_ADD 5ull
#define XP_SWAP 0xfeedull
/* Waits of the passive side: it must outlive any slowness of the other. */
#define XP_CHILD_TIMEOUT_US 30000000ull

enum xp_scenario {
	/* two-way handshake; send/recv, RDMA, atomics; active disconnects */
	XP_DATA,
	/* a reject, then three-way handshake; the passive side disconnects */
	XP_REJECT_THREE_WAY,
};

/* What the passive side tells the active one before it connects. */
struct xp_hello {
	it_net_addr_t addr;
	it_conn_qual_t conn_qual;
};

/* The passive side's accept private data: where the active side goes. */
struct xp_target {
	uint64_t addr;
	it_rmr_context_t rkey;
};

/* The passive side's verdict: 0, or the line of the first failed check. */
struct xp_report {
	int line;
	int status;
};

static const unsigned char xp_busy[] = "busy, come back three-way";
static const unsigned char xp_greeting[] = "from the active side";

static unsigned char ping_byte(size_t i)
{
	return (unsigned char)(i ^ 0x3c);
}

static unsigned char pong_byte(size_t i)
{
	return (unsigned char)(i ^ 0xc3);
}

static unsigned char write_byte(size_t i)
{
	return (unsigned char)(i * 7 + 1);
}

static unsigned char read_byte(size_t i)
{
	return (unsigned char)(i * 13);
}

/* Whether the interface reaches other processes: the core's answer. */
static bool cross_process(const char *name)
{
	struct openrdma_device_attr attr;
	struct openrdma_context *ctx;
	struct openrdma_device *dev;
	bool ret = false;

	if (openrdma_device_find(name, &dev) || openrdma_device_open(dev, &ctx))
		return false;
	if (!openrdma_device_query(ctx, &attr))
		ret = attr.device_cap_flags & OPENRDMA_DEVICE_CROSS_PROCESS;
	openrdma_context_close(ctx);
	return ret;
}

static bool full_write(int fd, const void *p, size_t len)
{
	const char *c = p;
	ssize_t n;

	while (len) {
		n = write(fd, c, len);
		if (n <= 0)
			return false;
		c += n;
		len -= (size_t)n;
	}
	return true;
}

/* Reads len bytes within timeout_ms; false on timeout, EOF or error. */
static bool full_read(int fd, void *p, size_t len, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char *c = p;
	ssize_t n;

	while (len) {
		if (poll(&pfd, 1, timeout_ms) != 1)
			return false;
		n = read(fd, c, len);
		if (n <= 0)
			return false;
		c += n;
		len -= (size_t)n;
	}
	return true;
}

/*
 * The passive side.  Plain checks, no Criterion: this process is not a
 * test worker.  Every wait is bounded, so a dead peer ends it too.
 */
struct passive {
	struct xp_report rep;
	it_ia_handle_t ia;
	it_pz_handle_t pz;
	it_evd_handle_t sq, rq, creq, cmsg;
	it_ia_info_t *info;
	it_listen_handle_t listen;
	it_ep_handle_t ep;
	unsigned char *remote, *msg;
	it_lmr_handle_t remote_lmr, msg_lmr;
	it_rmr_context_t rkey;
};

#define PCHECK(p, call)                             \
	do {                                        \
		it_status_t st_ = (call);           \
		if (st_ != IT_SUCCESS) {            \
			(p)->rep.line = __LINE__;   \
			(p)->rep.status = (int)st_; \
			return -1;                  \
		}                                   \
	} while (0)
#define PASSERT(p, cond)                          \
	do {                                      \
		if (!(cond)) {                    \
			(p)->rep.line = __LINE__; \
			return -1;                \
		}                                 \
	} while (0)

/* The next event of evd, which must be want. */
static int pwait(struct passive *p, it_evd_handle_t evd, it_event_type_t want,
		 it_event_t *ev)
{
	PCHECK(p, it_evd_wait(evd, XP_CHILD_TIMEOUT_US, ev, NULL));
	PASSERT(p, ev->event_number == want);
	return 0;
}

static int passive_open(struct passive *p)
{
	size_t i;

	PCHECK(p, it_ia_create(tapi_interface(), 2, 1, &p->ia));
	PCHECK(p, it_ia_query(p->ia, &p->info));
	PASSERT(p,
		p->info->num_spigots && p->info->spigot_info[0].num_net_addr);
	PCHECK(p, it_pz_create(p->ia, &p->pz));
	PCHECK(p, it_evd_create(p->ia, IT_DTO_EVENT_STREAM,
				IT_EVD_OVERFLOW_DEFAULT, 64, 0, NULL, &p->sq,
				NULL));
	PCHECK(p, it_evd_create(p->ia, IT_DTO_EVENT_STREAM,
				IT_EVD_OVERFLOW_DEFAULT, 64, 0, NULL, &p->rq,
				NULL));
	PCHECK(p, it_evd_create(p->ia, IT_CM_REQ_EVENT_STREAM,
				IT_EVD_OVERFLOW_DEFAULT, 8, 0, NULL, &p->creq,
				NULL));
	PCHECK(p, it_evd_create(p->ia, IT_CM_MSG_EVENT_STREAM,
				IT_EVD_OVERFLOW_DEFAULT, 16, 0, NULL, &p->cmsg,
				NULL));
	PASSERT(p, !posix_memalign((void **)&p->remote, 64, XP_REMOTE_LEN));
	PASSERT(p, !posix_memalign((void **)&p->msg, 64, 2 * XP_MSG_LEN));
	memset(p->remote, 0, XP_REMOTE_LEN);
	for (i = 0; i < 4096; i++)
		p->remote[XP_READ_OFF + i] = read_byte(i);
	*(uint64_t *)(p->remote + XP_ATOMIC_OFF) = XP_ATOMIC_INIT;
	PCHECK(p, it_lmr_create21(p->pz, p->remote, NULL, XP_REMOTE_LEN,
				  IT_ADDR_MODE_ABSOLUTE, IT_PRIV_ALL, 0, 0,
				  &p->remote_lmr, &p->rkey));
	PCHECK(p, it_lmr_create21(p->pz, p->msg, NULL, 2 * XP_MSG_LEN,
				  IT_ADDR_MODE_ABSOLUTE, IT_PRIV_LOCAL, 0, 0,
				  &p->msg_lmr, NULL));
	return 0;
}

static int passive_ep(struct passive *p)
{
	it_ep_attributes_t a = tapi_rc_attr();

	a.srv.rc.atomics_enable = p->info->atomic_support;
	PCHECK(p, tapi_rc_create(p->pz, p->sq, p->rq, p->cmsg, &a, &p->ep));
	return 0;
}

/* Accepts the request of ev, its receive posted first. */
static int passive_accept(struct passive *p, const it_event_t *ev)
{
	struct xp_target tg = {
		.addr = (uint64_t)(uintptr_t)p->remote,
		.rkey = p->rkey,
	};
	it_lmr_triplet_t s = {
		.lmr = p->msg_lmr,
		.addr.abs = p->msg,
		.length = XP_MSG_LEN,
	};

	PCHECK(p, it_post_recv(p->ep, &s, 1, 7, IT_COMPLETION_FLAG));
	PCHECK(p, it_ep_accept(p->ep, ev->conn_req.cn_est_id,
			       (const unsigned char *)&tg, sizeof(tg)));
	return 0;
}

/* Receives the ping and answers it with the pong. */
static int passive_pingpong(struct passive *p)
{
	it_lmr_triplet_t s = {
		.lmr = p->msg_lmr,
		.addr.abs = p->msg + XP_MSG_LEN,
		.length = XP_MSG_LEN,
	};
	it_event_t ev;
	size_t i;

	if (pwait(p, p->rq, IT_DTO_RC_RECV_CMPL_EVENT, &ev))
		return -1;
	PASSERT(p, ev.dto_cmpl.ep == p->ep && ev.dto_cmpl.cookie == 7);
	PASSERT(p, ev.dto_cmpl.dto_status == IT_DTO_SUCCESS);
	PASSERT(p, ev.dto_cmpl.transferred_length == XP_MSG_LEN);
	for (i = 0; i < XP_MSG_LEN; i++)
		PASSERT(p, p->msg[i] == ping_byte(i));
	for (i = 0; i < XP_MSG_LEN; i++)
		p->msg[XP_MSG_LEN + i] = pong_byte(i);
	PCHECK(p, it_post_send(p->ep, &s, 1, 8, IT_COMPLETION_FLAG));
	if (pwait(p, p->sq, IT_DTO_SEND_CMPL_EVENT, &ev))
		return -1;
	PASSERT(p, ev.dto_cmpl.cookie == 8);
	PASSERT(p, ev.dto_cmpl.dto_status == IT_DTO_SUCCESS);
	return 0;
}

static int passive_data(struct passive *p)
{
	uint64_t want = XP_ATOMIC_INIT;
	it_event_t ev;
	size_t i;

	if (pwait(p, p->creq, IT_CM_REQ_CONN_REQUEST_EVENT, &ev))
		return -1;
	PASSERT(p, ev.conn_req.private_data_present);
	PASSERT(p, !memcmp(ev.conn_req.private_data, xp_greeting,
			   sizeof(xp_greeting)));
	if (passive_accept(p, &ev) ||
	    pwait(p, p->cmsg, IT_CM_MSG_CONN_ESTABLISHED_EVENT, &ev))
		return -1;
	PASSERT(p, ev.conn.ep == p->ep);
	if (passive_pingpong(p))
		return -1;
	/* the active side's RDMA and atomics complete before it disconnects */
	if (pwait(p, p->cmsg, IT_CM_MSG_CONN_DISCONNECT_EVENT, &ev))
		return -1;
	PASSERT(p, ev.conn.ep == p->ep);
	for (i = 0; i < 4096; i++)
		PASSERT(p, p->remote[XP_WRITE_OFF + i] == write_byte(i));
	if (p->info->atomic_support)
		want = XP_SWAP;
	PASSERT(p, *(uint64_t *)(p->remote + XP_ATOMIC_OFF) == want);
	return 0;
}

static int passive_reject_three_way(struct passive *p)
{
	it_event_t ev;

	/* the first request is turned away, with a reason */
	if (pwait(p, p->creq, IT_CM_REQ_CONN_REQUEST_EVENT, &ev))
		return -1;
	PCHECK(p, it_reject(ev.conn_req.cn_est_id, xp_busy, sizeof(xp_busy)));
	/* the second (three-way where the IA has it) is accepted */
	if (pwait(p, p->creq, IT_CM_REQ_CONN_REQUEST_EVENT, &ev) ||
	    passive_accept(p, &ev) ||
	    pwait(p, p->cmsg, IT_CM_MSG_CONN_ESTABLISHED_EVENT, &ev) ||
	    passive_pingpong(p))
		return -1;
	/* this side ends the connection */
	PCHECK(p, it_ep_disconnect(p->ep, NULL, 0));
	if (pwait(p, p->cmsg, IT_CM_MSG_CONN_DISCONNECT_EVENT, &ev))
		return -1;
	PASSERT(p, ev.conn.ep == p->ep);
	return 0;
}

static int passive_run(struct passive *p, enum xp_scenario sc, int out)
{
	struct xp_hello hello;

	if (passive_open(p) || passive_ep(p))
		return -1;
	PCHECK(p, it_listen_create(p->ia, 0, p->creq, IT_LISTEN_NO_FLAG,
				   &hello.conn_qual, &p->listen));
	hello.addr = p->info->spigot_info[0].net_addr[0];
	PASSERT(p, full_write(out, &hello, sizeof(hello)));
	switch (sc) {
	case XP_DATA:
		return passive_data(p);
	case XP_REJECT_THREE_WAY:
		return passive_reject_three_way(p);
	}
	PASSERT(p, false);
	return -1;
}

static _Noreturn void passive_main(enum xp_scenario sc, int out)
{
	struct passive p;

	memset(&p, 0, sizeof(p));
	/* never outlive the test */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	passive_run(&p, sc, out);
	if (p.info)
		it_ia_info_free(p.info);
	if (p.ia && it_ia_free(p.ia) != IT_SUCCESS && !p.rep.line)
		p.rep.line = __LINE__;
	full_write(out, &p.rep, sizeof(p.rep));
	_exit(p.rep.line ? 1 : 0);
}

/* The active side's view of the passive process. */
struct xp_peer {
	pid_t pid;
	int fd;
	struct xp_hello hello;
};

/*
 * Forks the passive side first, while this process has no thread of the
 * library, so that the child starts clean (ThreadSanitizer refuses
 * threads after a fork of a threaded process); then asks the core
 * whether the interface reaches the child at all.
 */
static void peer_start(struct xp_peer *peer, enum xp_scenario sc)
{
	int fds[2];

	cr_assert_eq(pipe(fds), 0);
	fflush(NULL);
	peer->pid = fork();
	cr_assert_geq(peer->pid, 0, "fork");
	if (!peer->pid) {
		close(fds[0]);
		passive_main(sc, fds[1]);
	}
	close(fds[1]);
	peer->fd = fds[0];
	if (!cross_process(tapi_interface())) {
		kill(peer->pid, SIGKILL);
		waitpid(peer->pid, NULL, 0);
		close(peer->fd);
		cr_skip_test("%s does not reach other processes "
			     "(OPENRDMA_DEVICE_CROSS_PROCESS)",
			     tapi_interface());
	}
	cr_assert(full_read(peer->fd, &peer->hello, sizeof(peer->hello), 30000),
		  "the passive process did not start listening");
}

/* Collects the passive side's verdict. */
static void peer_finish(struct xp_peer *peer)
{
	struct xp_report rep = { .line = -1 };
	int wstatus;

	cr_assert(full_read(peer->fd, &rep, sizeof(rep), 30000),
		  "no report from the passive process");
	close(peer->fd);
	cr_assert_eq(waitpid(peer->pid, &wstatus, 0), peer->pid);
	cr_assert_eq(rep.line, 0,
		     "passive side failed at test_api_xproc.c:%d (status %d)",
		     rep.line, rep.status);
	cr_assert(WIFEXITED(wstatus) && !WEXITSTATUS(wstatus));
}

static void active_path(struct tapi *t, const struct xp_peer *peer,
			it_path_t *path)
{
	size_t num = 1, total = 0;

	cr_assert_eq(it_get_pathinfo(t->ia, 0, &peer->hello.addr, &num, &total,
				     path),
		     IT_SUCCESS);
	cr_assert_eq(num, 1);
}

static void active_pingpong(struct tapi *t, it_ep_handle_t ep)
{
	struct tapi_buf msg;
	it_lmr_triplet_t s;
	it_event_t ev;
	size_t i;

	tapi_buf_make(t, &msg, 2 * XP_MSG_LEN, IT_PRIV_LOCAL);
	tapi_post_recv(ep, &msg, XP_MSG_LEN, XP_MSG_LEN, 2);
	for (i = 0; i < XP_MSG_LEN; i++)
		msg.p[i] = ping_byte(i);
	s = tapi_seg(&msg, 0, XP_MSG_LEN);
	cr_assert_eq(it_post_send(ep, &s, 1, 1, IT_COMPLETION_FLAG),
		     IT_SUCCESS);
	tapi_wait(t->sq, IT_DTO_SEND_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.cookie, 1);
	cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_SUCCESS);
	tapi_wait(t->rq, IT_DTO_RC_RECV_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.cookie, 2);
	cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_SUCCESS);
	cr_assert_eq(ev.dto_cmpl.transferred_length, XP_MSG_LEN);
	for (i = 0; i < XP_MSG_LEN; i++)
		cr_assert_eq(msg.p[XP_MSG_LEN + i], pong_byte(i),
			     "pong byte %zu", i);
}

static void active_rdma(struct tapi *t, it_ep_handle_t ep,
			const struct xp_target *tg)
{
	struct tapi_buf buf;
	it_lmr_triplet_t s;
	it_event_t ev;
	uint64_t *res;
	size_t i;

	tapi_buf_make(t, &buf, 8192 + 64, IT_PRIV_LOCAL);
	for (i = 0; i < 4096; i++)
		buf.p[i] = write_byte(i);
	s = tapi_seg(&buf, 0, 4096);
	cr_assert_eq(it_post_rdma_write(ep, &s, 1, 3, IT_COMPLETION_FLAG,
					tg->addr + XP_WRITE_OFF, tg->rkey),
		     IT_SUCCESS);
	tapi_wait(t->sq, IT_DTO_RDMA_WRITE_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.cookie, 3);
	cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_SUCCESS);
	cr_assert_eq(ev.dto_cmpl.transferred_length, 4096);

	s = tapi_seg(&buf, 4096, 4096);
	cr_assert_eq(it_post_rdma_read(ep, &s, 1, 4, IT_COMPLETION_FLAG,
				       tg->addr + XP_READ_OFF, tg->rkey),
		     IT_SUCCESS);
	tapi_wait(t->sq, IT_DTO_RDMA_READ_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.cookie, 4);
	cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_SUCCESS);
	for (i = 0; i < 4096; i++)
		cr_assert_eq(buf.p[4096 + i], read_byte(i), "read byte %zu", i);

	if (!t->info->atomic_support)
		return;
	res = (uint64_t *)(buf.p + 8192);
	s = tapi_seg(&buf, 8192, sizeof(*res));
	cr_assert_eq(it_post_atomic(ep, IT_FETCH_AND_ADD, XP_ADD, 0, &s, 5,
				    IT_COMPLETION_FLAG,
				    tg->addr + XP_ATOMIC_OFF, tg->rkey),
		     IT_SUCCESS);
	tapi_wait(t->sq, IT_DTO_FETCH_ADD_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.cookie, 5);
	cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_SUCCESS);
	cr_assert_eq(*res, XP_ATOMIC_INIT);
	/* a compare that fails leaves the word alone, one that holds swaps */
	cr_assert_eq(it_post_atomic(ep, IT_COMPARE_AND_SWAP, XP_SWAP,
				    XP_ATOMIC_INIT, &s, 6, IT_COMPLETION_FLAG,
				    tg->addr + XP_ATOMIC_OFF, tg->rkey),
		     IT_SUCCESS);
	tapi_wait(t->sq, IT_DTO_CMP_SWAP_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_SUCCESS);
	cr_assert_eq(*res, XP_ATOMIC_INIT + XP_ADD);
	cr_assert_eq(it_post_atomic(ep, IT_COMPARE_AND_SWAP, XP_SWAP,
				    XP_ATOMIC_INIT + XP_ADD, &s, 7,
				    IT_COMPLETION_FLAG,
				    tg->addr + XP_ATOMIC_OFF, tg->rkey),
		     IT_SUCCESS);
	tapi_wait(t->sq, IT_DTO_CMP_SWAP_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.cookie, 7);
	cr_assert_eq(*res, XP_ATOMIC_INIT + XP_ADD);
}

Test(itapi_xproc, connect_data_disconnect)
{
	struct xp_target tg;
	struct xp_peer peer;
	struct tapi t;
	it_path_t path;
	it_event_t ev;
	it_ep_handle_t ep;

	peer_start(&peer, XP_DATA);
	tapi_open(&t);
	ep = tapi_rc_ep(&t);
	active_path(&t, &peer, &path);
	cr_assert_eq(it_ep_connect(ep, &path, NULL, &peer.hello.conn_qual,
				   IT_CONNECT_FLAG_TWO_WAY, xp_greeting,
				   sizeof(xp_greeting)),
		     IT_SUCCESS);
	tapi_wait(t.cmsg, IT_CM_MSG_CONN_ESTABLISHED_EVENT, &ev);
	cr_assert_eq(ev.conn.ep, ep);
	/* the accept's private data says where to go */
	cr_assert(ev.conn.private_data_present);
	memcpy(&tg, ev.conn.private_data, sizeof(tg));

	active_pingpong(&t, ep);
	active_rdma(&t, ep, &tg);

	cr_assert_eq(it_ep_disconnect(ep, NULL, 0), IT_SUCCESS);
	tapi_wait(t.cmsg, IT_CM_MSG_CONN_DISCONNECT_EVENT, &ev);
	cr_assert_eq(ev.conn.ep, ep);
	peer_finish(&peer);
	tapi_close(&t);
}

Test(itapi_xproc, reject_three_way_passive_disconnect)
{
	struct xp_peer peer;
	it_boolean_t three_way;
	struct tapi t;
	it_path_t path;
	it_event_t ev;
	it_ep_handle_t ep;

	peer_start(&peer, XP_REJECT_THREE_WAY);
	tapi_open(&t);
	ep = tapi_rc_ep(&t);
	active_path(&t, &peer, &path);
	cr_assert_eq(it_ep_connect(ep, &path, NULL, &peer.hello.conn_qual,
				   IT_CONNECT_FLAG_TWO_WAY, NULL, 0),
		     IT_SUCCESS);
	tapi_wait(t.cmsg, IT_CM_MSG_CONN_PEER_REJECT_EVENT, &ev);
	cr_assert_eq(ev.conn.ep, ep);
	cr_assert(ev.conn.private_data_present);
	cr_assert_arr_eq(ev.conn.private_data, xp_busy, sizeof(xp_busy));

	/* a rejected endpoint is reset before it connects again; three-way
	 * where the IA has the handshake (iWARP has not) */
	three_way = t.info->three_way_handshake_support;
	cr_assert_eq(it_ep_reset(ep), IT_SUCCESS);
	cr_assert_eq(it_ep_connect(ep, &path, NULL, &peer.hello.conn_qual,
				   three_way ? IT_CONNECT_FLAG_THREE_WAY :
					       IT_CONNECT_FLAG_TWO_WAY,
				   NULL, 0),
		     IT_SUCCESS);
	if (three_way) {
		tapi_wait(t.cmsg, IT_CM_MSG_CONN_ACCEPT_ARRIVAL_EVENT, &ev);
		cr_assert_eq(ev.conn.ep, ep);
		cr_assert(ev.conn.private_data_present);
		cr_assert_eq(it_ep_accept(ep, ev.conn.cn_est_id, NULL, 0),
			     IT_SUCCESS);
	}
	tapi_wait(t.cmsg, IT_CM_MSG_CONN_ESTABLISHED_EVENT, &ev);
	cr_assert_eq(ev.conn.ep, ep);

	active_pingpong(&t, ep);
	/* the passive side ends it */
	tapi_wait(t.cmsg, IT_CM_MSG_CONN_DISCONNECT_EVENT, &ev);
	cr_assert_eq(ev.conn.ep, ep);
	peer_finish(&peer);
	tapi_close(&t);
}
