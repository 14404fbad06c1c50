/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * it_socket_convert(): a TCP connection the test makes over loopback, on
 * the interface's own address, becomes the connection of two endpoints of
 * one IA, both ends converted in this process.  Where the interface has
 * no socket conversion (self0, shm0) the call must say so and leave the
 * socket alone.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <criterion/criterion.h>

#include "tests/itapi/test_api.h"

TestSuite(itapi_convert, .timeout = 30);

static struct tapi t;

static void setup(void)
{
	tapi_open(&t);
}

/* A peer that never converts is given up on after this (ms). */
#define CONVERT_TIMEOUT_MS "300"

static void setup_short_timeout(void)
{
	setenv("OPENRDMA_TCP_CONNECT_TIMEOUT_MS", CONVERT_TIMEOUT_MS, 1);
	tapi_open(&t);
}

static void teardown(void)
{
	tapi_close(&t);
}

static void require_support(void)
{
	tapi_require(t.info->socket_conversion_support, "socket conversion");
}

static it_ep_state_rc_t ep_state(it_ep_handle_t ep)
{
	it_ep_param_t p;

	cr_assert_eq(it_ep_query(ep, IT_EP_PARAM_STATE, &p), IT_SUCCESS);
	return p.ep_state.rc;
}

/* The IA's first IPv4 address (the interface's), else 127.0.0.1. */
static struct sockaddr_in ia_addr(void)
{
	const it_spigot_info_t *sp = &t.info->spigot_info[0];
	struct sockaddr_in sin;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (t.info->num_spigots && sp->num_net_addr &&
	    sp->net_addr[0].addr_type == IT_IPV4)
		sin.sin_addr = sp->net_addr[0].addr.ipv4;
	return sin;
}

/* A connected TCP pair: sv[0] connected, sv[1] accepted. */
static void tcp_pair(int sv[2])
{
	struct sockaddr_in sin = ia_addr();
	socklen_t len = sizeof(sin);
	int l;

	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(l, 0);
	cr_assert_eq(bind(l, (struct sockaddr *)&sin, sizeof(sin)), 0,
		     "bind: %s", strerror(errno));
	cr_assert_eq(listen(l, 1), 0);
	cr_assert_eq(getsockname(l, (struct sockaddr *)&sin, &len), 0);
	sv[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(sv[0], 0);
	cr_assert_eq(connect(sv[0], (struct sockaddr *)&sin, sizeof(sin)), 0,
		     "connect: %s", strerror(errno));
	sv[1] = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	cr_assert_geq(sv[1], 0);
	close(l);
}

static int fd_count(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	cr_assert_not_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/*
 * The IA's CM machinery keeps descriptors of its own from the first
 * connection call on: started here, so that counts taken afterwards see
 * only sockets.
 */
static void cm_warm_up(void)
{
	it_listen_handle_t l;
	it_conn_qual_t cq;

	memset(&cq, 0, sizeof(cq));
	cr_assert_eq(it_listen_create(t.ia, 0, t.creq, IT_LISTEN_NO_FLAG, &cq,
				      &l),
		     IT_SUCCESS);
	cr_assert_eq(it_listen_free(l), IT_SUCCESS);
}

/* The socket pair still carries bytes both ways. */
static void pair_works(const int sv[2])
{
	char c = 0;

	cr_assert_eq(write(sv[0], "x", 1), 1);
	cr_assert_eq(read(sv[1], &c, 1), 1);
	cr_assert_eq(c, 'x');
	cr_assert_eq(write(sv[1], "y", 1), 1);
	cr_assert_eq(read(sv[0], &c, 1), 1);
	cr_assert_eq(c, 'y');
}

/* Waits for the ESTABLISHED events of a and b, in any order. */
static void established(it_ep_handle_t a, it_event_t *ea, it_ep_handle_t b,
			it_event_t *eb)
{
	bool got_a = false, got_b = false;
	it_event_t ev;
	int i;

	for (i = 0; i < 2; i++) {
		tapi_wait(t.cmsg, IT_CM_MSG_CONN_ESTABLISHED_EVENT, &ev);
		if (ev.conn.ep == a) {
			*ea = ev;
			got_a = true;
		} else if (ev.conn.ep == b) {
			*eb = ev;
			got_b = true;
		}
	}
	cr_assert(got_a && got_b, "both endpoints established");
}

/* Converts both ends with their messages; both are established. */
static void convert_pair(it_ep_handle_t a, it_ep_handle_t b, const char *ma,
			 const char *mb, it_event_t *ea, it_event_t *eb)
{
	int sv[2];

	tcp_pair(sv);
	cr_assert_eq(it_socket_convert(sv[0], a, IT_SC_DEFAULT,
				       (const unsigned char *)ma, strlen(ma)),
		     IT_SUCCESS);
	cr_assert_eq(it_socket_convert(sv[1], b, IT_SC_DEFAULT,
				       (const unsigned char *)mb, strlen(mb)),
		     IT_SUCCESS);
	/* the application's copies: closing them ends nothing */
	close(sv[0]);
	close(sv[1]);
	established(a, ea, b, eb);
}

Test(itapi_convert, send_write_disconnect, .init = setup, .fini = teardown)
{
	it_ep_handle_t a, b;
	struct tapi_buf src, dst, remote;
	it_lmr_triplet_t seg;
	it_event_t ea, eb, ev;
	bool da = false, db = false;
	int i;

	require_support();
	a = tapi_rc_ep(&t);
	b = tapi_rc_ep(&t);
	convert_pair(a, b, "from a", "b says hi", &ea, &eb);
	cr_assert_eq(ea.conn.private_data_present, IT_TRUE);
	cr_assert_arr_eq(ea.conn.private_data, "b says hi", 9);
	cr_assert_eq(eb.conn.private_data_present, IT_TRUE);
	cr_assert_arr_eq(eb.conn.private_data, "from a", 6);
	cr_assert_eq(ep_state(a), IT_EP_STATE_CONNECTED);
	cr_assert_eq(ep_state(b), IT_EP_STATE_CONNECTED);
	/* read depths both ends agree on, within what each offered */
	cr_assert_eq(ea.conn.rdma_read_ird, eb.conn.rdma_read_ord);
	cr_assert_eq(ea.conn.rdma_read_ord, eb.conn.rdma_read_ird);
	cr_assert_leq(ea.conn.rdma_read_ird, 4);

	/* send and receive, a to b */
	tapi_buf_make(&t, &src, 4096, IT_PRIV_LOCAL);
	tapi_buf_make(&t, &dst, 4096, IT_PRIV_LOCAL);
	for (i = 0; i < 4096; i++)
		src.p[i] = (unsigned char)(i * 13);
	tapi_post_recv(b, &dst, 0, 4096, 0x77);
	seg = tapi_seg(&src, 0, 4096);
	cr_assert_eq(it_post_send(a, &seg, 1, 0x66, IT_COMPLETION_FLAG),
		     IT_SUCCESS);
	tapi_wait(t.sq, IT_DTO_SEND_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.ep, a);
	cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_SUCCESS);
	tapi_wait(t.rq, IT_DTO_RC_RECV_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.ep, b);
	cr_assert_eq(ev.dto_cmpl.cookie, 0x77);
	cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_SUCCESS);
	cr_assert_eq(ev.dto_cmpl.transferred_length, 4096);
	cr_assert_arr_eq(dst.p, src.p, 4096);

	/* RDMA write, b into a's memory */
	tapi_buf_make(&t, &remote, 4096, IT_PRIV_ALL);
	seg = tapi_seg(&dst, 0, 4096);
	cr_assert_eq(it_post_rdma_write(b, &seg, 1, 0x88, IT_COMPLETION_FLAG,
					it_make_rdma_addr_absolute(remote.p),
					remote.rkey),
		     IT_SUCCESS);
	tapi_wait(t.sq, IT_DTO_RDMA_WRITE_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.ep, b);
	cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_SUCCESS);
	cr_assert_arr_eq(remote.p, src.p, 4096);

	/* converted endpoints disconnect as connected ones do */
	cr_assert_eq(it_ep_disconnect(b, (const unsigned char *)"bye", 3),
		     IT_SUCCESS);
	for (i = 0; i < 2; i++) {
		tapi_wait(t.cmsg, IT_CM_MSG_CONN_DISCONNECT_EVENT, &ev);
		if (ev.conn.ep == a) {
			da = true;
			cr_assert_eq(ev.conn.private_data_present, IT_TRUE);
			cr_assert_arr_eq(ev.conn.private_data, "bye", 3);
		} else if (ev.conn.ep == b) {
			db = true;
		}
	}
	cr_assert(da && db);
}

/* Without the exchange nothing goes either way; a message is refused. */
Test(itapi_convert, no_req_rep, .init = setup, .fini = teardown)
{
	it_ep_handle_t a, b;
	it_event_t ea, eb;
	int sv[2];

	require_support();
	a = tapi_rc_ep(&t);
	b = tapi_rc_ep(&t);
	tcp_pair(sv);
	cr_assert_eq(it_socket_convert(sv[0], a, IT_SC_NO_REQ_REP,
				       (const unsigned char *)"m", 1),
		     IT_ERR_INVALID_PDATA_LENGTH);
	cr_assert_eq(it_socket_convert(sv[0], a, IT_SC_NO_REQ_REP, NULL, 0),
		     IT_SUCCESS);
	cr_assert_eq(it_socket_convert(sv[1], b, IT_SC_NO_REQ_REP, NULL, 0),
		     IT_SUCCESS);
	close(sv[0]);
	close(sv[1]);
	established(a, &ea, b, &eb);
	cr_assert_eq(ea.conn.private_data_present, IT_FALSE);
	cr_assert_eq(eb.conn.private_data_present, IT_FALSE);
}

/* Every refusal leaves the socket as it was and no descriptor behind. */
Test(itapi_convert, bad_arguments, .init = setup, .fini = teardown)
{
	unsigned char big[IT_MAX_PRIV_DATA + 300];
	it_ep_attributes_t ua;
	struct tapi_conn c;
	it_ep_handle_t a, b, ud;
	struct sockaddr_in sin;
	int sv[2], p[2], s, n, fl;

	require_support();
	a = tapi_rc_ep(&t);
	tapi_connect(&t, &c, false);
	tcp_pair(sv);
	fl = fcntl(sv[0], F_GETFL);
	n = fd_count();

	cr_assert_eq(it_socket_convert(-1, a, IT_SC_DEFAULT, NULL, 0),
		     IT_ERR_INVALID_HANDLE);
	cr_assert_eq(it_socket_convert(sv[0], a, (it_sc_flags_t)0x10, NULL, 0),
		     IT_ERR_INVALID_FLAGS);
	cr_assert_eq(it_socket_convert(sv[0], a, IT_SC_DEFAULT, NULL, 4),
		     IT_ERR_FAULT);
	memset(big, 1, sizeof(big));
	cr_assert_eq(it_socket_convert(sv[0], a, IT_SC_DEFAULT, big,
				       sizeof(big)),
		     IT_ERR_INVALID_PDATA_LENGTH);
	cr_assert_eq(it_socket_convert(sv[0], TAPI_BOGUS, IT_SC_DEFAULT, NULL,
				       0),
		     IT_ERR_INVALID_EP);

	/* not a socket */
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	cr_assert_eq(it_socket_convert(p[0], a, IT_SC_DEFAULT, NULL, 0),
		     IT_ERR_INVALID_HANDLE);
	close(p[0]);
	close(p[1]);
	/* a UDP socket, even a connected one */
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(s, 0);
	sin = ia_addr();
	sin.sin_port = htons(9);
	cr_assert_eq(connect(s, (struct sockaddr *)&sin, sizeof(sin)), 0);
	cr_assert_eq(it_socket_convert(s, a, IT_SC_DEFAULT, NULL, 0),
		     IT_ERR_INVALID_HANDLE);
	close(s);
	/* a TCP socket connected to nothing */
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(s, 0);
	cr_assert_eq(it_socket_convert(s, a, IT_SC_DEFAULT, NULL, 0),
		     IT_ERR_INVALID_HANDLE);
	close(s);
	/* a UD endpoint has no connection to take */
	memset(&ua, 0, sizeof(ua));
	ua.max_dto_payload_size = 1024;
	ua.max_request_dtos = 4;
	ua.max_recv_dtos = 4;
	ua.max_send_segments = 1;
	ua.max_recv_segments = 1;
	ua.srv.ud.ep_info.ud_ep_key = 0x1234;
	if (it_ep_ud_create(t.pz, t.sq, t.rq, &ua, 0, &ud) == IT_SUCCESS) {
		cr_assert_eq(it_socket_convert(sv[0], ud, IT_SC_DEFAULT, NULL,
					       0),
			     IT_ERR_INVALID_EP_TYPE);
		cr_assert_eq(it_ep_free(ud), IT_SUCCESS);
	}
	cr_assert_eq(fd_count(), n, "a refusal left a descriptor");
	pair_works(sv);

	/* a connected endpoint is in the wrong state */
	cr_assert_eq(it_socket_convert(sv[0], c.a, IT_SC_DEFAULT, NULL, 0),
		     IT_ERR_INVALID_EP_STATE);
	/* so is one already converting */
	b = tapi_rc_ep(&t);
	cr_assert_eq(it_socket_convert(sv[1], b, IT_SC_DEFAULT, NULL, 0),
		     IT_SUCCESS);
	cr_assert_eq(it_socket_convert(sv[0], b, IT_SC_DEFAULT, NULL, 0),
		     IT_ERR_INVALID_EP_STATE);
	cr_assert_eq(ep_state(a), IT_EP_STATE_UNCONNECTED);
	/* one more: b's, held by the library */
	cr_assert_eq(fd_count(), n + 1);
	/* sv[0] is the application's as before, flags included */
	cr_assert_eq(fcntl(sv[0], F_GETFL), fl);
	close(sv[0]);
	close(sv[1]);
}

static uint16_t local_port(int fd)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);

	cr_assert_eq(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	return ntohs(sin.sin_port);
}

/* The peer closes its socket instead of converting. */
Test(itapi_convert, peer_closes, .init = setup, .fini = teardown)
{
	it_ep_handle_t a;
	it_event_t ev;
	int sv[2], n, i, w, me;

	require_support();
	a = tapi_rc_ep(&t);
	cm_warm_up();
	/* once as each role: the end with the lower port is active */
	for (i = 0; i < 2; i++) {
		n = fd_count();
		tcp_pair(sv);
		me = (local_port(sv[0]) < local_port(sv[1])) == !i ? 0 : 1;
		cr_assert_eq(it_socket_convert(sv[me], a, IT_SC_DEFAULT,
					       (const unsigned char *)"x", 1),
			     IT_SUCCESS);
		close(sv[me]);
		close(sv[!me]);
		tapi_wait(t.cmsg, IT_CM_MSG_CONN_NONPEER_REJECT_EVENT, &ev);
		cr_assert_eq(ev.conn.ep, a);
		cr_assert_eq(ep_state(a), IT_EP_STATE_NONOPERATIONAL);
		/* reset, the endpoint takes another socket; the library
		 * lets go of the one that failed */
		cr_assert_eq(it_ep_reset(a), IT_SUCCESS);
		cr_assert_eq(ep_state(a), IT_EP_STATE_UNCONNECTED);
		for (w = 0; w < 200 && fd_count() != n; w++)
			usleep(10000);
		cr_assert_eq(fd_count(), n, "the library's descriptor stays");
	}
}

/* The peer sends bytes that are no frame of the transport. */
Test(itapi_convert, peer_garbage, .init = setup, .fini = teardown)
{
	static const char junk[64] = "GET / HTTP/1.0\r\n\r\n";
	it_ep_handle_t a;
	it_event_t ev;
	int sv[2];

	require_support();
	a = tapi_rc_ep(&t);
	tcp_pair(sv);
	cr_assert_eq(write(sv[1], junk, sizeof(junk)), (ssize_t)sizeof(junk));
	cr_assert_eq(it_socket_convert(sv[0], a, IT_SC_DEFAULT, NULL, 0),
		     IT_SUCCESS);
	close(sv[0]);
	tapi_wait(t.cmsg, IT_CM_MSG_CONN_NONPEER_REJECT_EVENT, &ev);
	cr_assert_eq(ev.conn.ep, a);
	cr_assert_eq(ep_state(a), IT_EP_STATE_NONOPERATIONAL);
	close(sv[1]);
}

/* The peer keeps its socket open but never converts: given up on. */
Test(itapi_convert, peer_silent, .init = setup_short_timeout, .fini = teardown)
{
	it_ep_handle_t a;
	it_event_t ev;
	struct pollfd pfd;
	char buf[256];
	int sv[2], i;

	require_support();
	a = tapi_rc_ep(&t);
	tcp_pair(sv);
	cr_assert_eq(it_socket_convert(sv[0], a, IT_SC_DEFAULT, NULL, 0),
		     IT_SUCCESS);
	close(sv[0]);
	/* the peer reads (whatever was sent to it) but never answers */
	for (i = 0; i < 2; i++) {
		pfd.fd = sv[1];
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 0) == 1 && read(sv[1], buf, sizeof(buf)) < 0)
			break;
	}
	tapi_wait(t.cmsg, IT_CM_MSG_CONN_NONPEER_REJECT_EVENT, &ev);
	cr_assert_eq(ev.conn.ep, a);
	cr_assert_eq(ev.conn.reject_reason_code, IT_CN_REJ_TIMEOUT);
	cr_assert_eq(ep_state(a), IT_EP_STATE_NONOPERATIONAL);
	close(sv[1]);
}

/* Where the transport cannot adopt a socket the call says so, and the
 * socket stays the application's, untouched. */
Test(itapi_convert, not_supported, .init = setup, .fini = teardown)
{
	it_ep_handle_t a;
	int sv[2], n, fl;

	if (t.info->socket_conversion_support)
		cr_skip_test("%s converts sockets", tapi_interface());
	a = tapi_rc_ep(&t);
	cm_warm_up();
	tcp_pair(sv);
	fl = fcntl(sv[0], F_GETFL);
	n = fd_count();
	cr_assert_eq(it_socket_convert(sv[0], a, IT_SC_DEFAULT,
				       (const unsigned char *)"m", 1),
		     IT_ERR_OP_NOT_SUPPORTED);
	cr_assert_eq(it_socket_convert(sv[0], a, IT_SC_NO_REQ_REP, NULL, 0),
		     IT_ERR_OP_NOT_SUPPORTED);
	cr_assert_eq(fd_count(), n);
	cr_assert_eq(fcntl(sv[0], F_GETFL), fl);
	cr_assert_eq(ep_state(a), IT_EP_STATE_UNCONNECTED);
	pair_works(sv);
	close(sv[0]);
	close(sv[1]);
}

/* ------------------------------------------------------------------ */
/* The other end in another process                                   */
/* ------------------------------------------------------------------ */

/* What the forked end sends with its conversion: where to write. */
struct fork_target {
	uint64_t addr;
	it_rmr_context_t rkey;
};

#define FORK_LEN 4096
#define FORK_WAIT_US 10000000ull

/* The forked end's first failed check, or 0; -1: no socket conversion. */
#define FCHECK(cond)                     \
	do {                             \
		if (!(cond))             \
			return __LINE__; \
	} while (0)

static int fork_wait(it_evd_handle_t evd, it_event_type_t number,
		     it_event_t *ev)
{
	return it_evd_wait(evd, FORK_WAIT_US, ev, NULL) == IT_SUCCESS &&
	       ev->event_number == number;
}

/* The forked end: converts its socket, takes an RDMA write and a send. */
static int fork_peer(int sd)
{
	it_ep_attributes_t a = tapi_rc_attr();
	it_evd_handle_t sq, rq, cm;
	struct fork_target tg;
	it_lmr_handle_t lmr, rlmr;
	it_rmr_context_t rkey, unused;
	it_lmr_triplet_t seg;
	it_ia_info_t *info;
	it_ia_handle_t ia;
	it_pz_handle_t pz;
	it_ep_handle_t ep;
	unsigned char *mem, *msg;
	it_event_t ev;
	int i;

	FCHECK(it_ia_create(tapi_interface(), 2, 1, &ia) == IT_SUCCESS);
	FCHECK(it_ia_query(ia, &info) == IT_SUCCESS);
	if (!info->socket_conversion_support)
		return -1;
	a.srv.rc.atomics_enable = IT_FALSE;
	FCHECK(it_pz_create(ia, &pz) == IT_SUCCESS);
	FCHECK(it_evd_create(ia, IT_DTO_EVENT_STREAM, IT_EVD_OVERFLOW_DEFAULT,
			     64, 0, NULL, &sq, NULL) == IT_SUCCESS);
	FCHECK(it_evd_create(ia, IT_DTO_EVENT_STREAM, IT_EVD_OVERFLOW_DEFAULT,
			     64, 0, NULL, &rq, NULL) == IT_SUCCESS);
	FCHECK(it_evd_create(ia, IT_CM_MSG_EVENT_STREAM,
			     IT_EVD_OVERFLOW_DEFAULT, 16, 0, NULL, &cm,
			     NULL) == IT_SUCCESS);
	FCHECK(it_ep_rc_create(pz, sq, rq, cm, IT_EP_NO_FLAG, &a, &ep) ==
	       IT_SUCCESS);
	mem = calloc(1, FORK_LEN);
	msg = calloc(1, 64);
	FCHECK(mem && msg);
	FCHECK(it_lmr_create21(pz, mem, NULL, FORK_LEN, IT_ADDR_MODE_ABSOLUTE,
			       IT_PRIV_ALL, 0, 0, &rlmr, &rkey) == IT_SUCCESS);
	FCHECK(it_lmr_create21(pz, msg, NULL, 64, IT_ADDR_MODE_ABSOLUTE,
			       IT_PRIV_LOCAL, 0, 0, &lmr,
			       &unused) == IT_SUCCESS);
	seg.lmr = lmr;
	seg.addr.abs = msg;
	seg.length = 64;
	/* posted before the conversion: the peer may send at once */
	FCHECK(it_post_recv(ep, &seg, 1, 5, IT_COMPLETION_FLAG) == IT_SUCCESS);

	tg.addr = (uint64_t)(uintptr_t)mem;
	tg.rkey = rkey;
	FCHECK(it_socket_convert(sd, ep, IT_SC_DEFAULT,
				 (const unsigned char *)&tg,
				 sizeof(tg)) == IT_SUCCESS);
	close(sd);
	FCHECK(fork_wait(cm, IT_CM_MSG_CONN_ESTABLISHED_EVENT, &ev));
	FCHECK(ev.conn.private_data_present == IT_TRUE);
	FCHECK(!memcmp(ev.conn.private_data, "parent", 6));
	/* the send comes after the write: the data is in when it does */
	FCHECK(fork_wait(rq, IT_DTO_RC_RECV_CMPL_EVENT, &ev));
	FCHECK(ev.dto_cmpl.dto_status == IT_DTO_SUCCESS);
	FCHECK(ev.dto_cmpl.transferred_length == 5);
	FCHECK(!memcmp(msg, "done", 5));
	for (i = 0; i < FORK_LEN; i++)
		FCHECK(mem[i] == (unsigned char)(i * 31 + 7));
	FCHECK(fork_wait(cm, IT_CM_MSG_CONN_DISCONNECT_EVENT, &ev));
	it_ia_info_free(info);
	FCHECK(it_ia_free(ia) == IT_SUCCESS);
	free(mem);
	free(msg);
	return 0;
}

/* Each end converts in its own process, as applications do. */
Test(itapi_convert, forked_peer)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	struct tapi_buf src, small;
	struct fork_target tg;
	it_lmr_triplet_t seg;
	struct pollfd pfd;
	it_ep_handle_t a;
	it_event_t ev;
	int sv[2], rp[2], l, verdict = 0, st, i;
	pid_t pid;

	/* the pair and the child come before the library starts threads */
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(l, 0);
	cr_assert_eq(bind(l, (struct sockaddr *)&sin, sizeof(sin)), 0);
	cr_assert_eq(listen(l, 1), 0);
	cr_assert_eq(getsockname(l, (struct sockaddr *)&sin, &len), 0);
	sv[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_eq(connect(sv[0], (struct sockaddr *)&sin, sizeof(sin)), 0);
	sv[1] = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	cr_assert_geq(sv[1], 0);
	close(l);
	cr_assert_eq(pipe2(rp, O_CLOEXEC), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(sv[0]);
		close(rp[0]);
		verdict = fork_peer(sv[1]);
		if (write(rp[1], &verdict, sizeof(verdict)) < 0)
			_exit(2);
		_exit(0);
	}
	close(sv[1]);
	close(rp[1]);

	tapi_open(&t);
	if (!t.info->socket_conversion_support) {
		cr_assert_eq(read(rp[0], &verdict, sizeof(verdict)),
			     (ssize_t)sizeof(verdict));
		cr_assert_eq(verdict, -1);
		waitpid(pid, &st, 0);
		tapi_close(&t);
		cr_skip_test("%s has no socket conversion", tapi_interface());
	}
	a = tapi_rc_ep(&t);
	cr_assert_eq(it_socket_convert(sv[0], a, IT_SC_DEFAULT,
				       (const unsigned char *)"parent", 6),
		     IT_SUCCESS);
	close(sv[0]);
	tapi_wait(t.cmsg, IT_CM_MSG_CONN_ESTABLISHED_EVENT, &ev);
	cr_assert_eq(ev.conn.ep, a);
	cr_assert_eq(ev.conn.private_data_present, IT_TRUE);
	memcpy(&tg, ev.conn.private_data, sizeof(tg));

	tapi_buf_make(&t, &src, FORK_LEN, IT_PRIV_LOCAL);
	for (i = 0; i < FORK_LEN; i++)
		src.p[i] = (unsigned char)(i * 31 + 7);
	seg = tapi_seg(&src, 0, FORK_LEN);
	cr_assert_eq(it_post_rdma_write(a, &seg, 1, 1, IT_COMPLETION_FLAG,
					it_make_rdma_addr_absolute(
						(void *)(uintptr_t)tg.addr),
					tg.rkey),
		     IT_SUCCESS);
	tapi_wait(t.sq, IT_DTO_RDMA_WRITE_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_SUCCESS);
	tapi_buf_make(&t, &small, 5, IT_PRIV_LOCAL);
	memcpy(small.p, "done", 5);
	seg = tapi_seg(&small, 0, 5);
	cr_assert_eq(it_post_send(a, &seg, 1, 2, IT_COMPLETION_FLAG),
		     IT_SUCCESS);
	tapi_wait(t.sq, IT_DTO_SEND_CMPL_EVENT, &ev);
	cr_assert_eq(ev.dto_cmpl.dto_status, IT_DTO_SUCCESS);
	cr_assert_eq(it_ep_disconnect(a, NULL, 0), IT_SUCCESS);
	tapi_wait(t.cmsg, IT_CM_MSG_CONN_DISCONNECT_EVENT, NULL);

	pfd.fd = rp[0];
	pfd.events = POLLIN;
	cr_assert_eq(poll(&pfd, 1, (int)(FORK_WAIT_US / 1000) * 2), 1,
		     "the forked end did not report");
	cr_assert_eq(read(rp[0], &verdict, sizeof(verdict)),
		     (ssize_t)sizeof(verdict));
	cr_assert_eq(verdict, 0, "the forked end failed at line %d", verdict);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(rp[0]);
	tapi_close(&t);
}
