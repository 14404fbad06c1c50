/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * tcp: a software RNIC over TCP (RC) and UDP (UD), built on the toolkit of
 * core/sw.  See openrdma_tcp(7) for what it offers and docs/wire/tcp.md
 * for its wire.
 *
 * One context is one port: a TCP listener and a UDP socket on the same
 * port number, whose address port_query() reports.  Each RC connection is
 * one TCP connection (struct tcp_conn) carrying both directions of a QP
 * pair, or, for QPs connected by hand, one connection per direction.  A
 * progress thread per context runs every socket of the context on epoll:
 * it places incoming payload straight into registered memory, answers
 * requests, completes the initiator's work requests, and continues writes
 * that did not fit.  The thread that posts writes its requests itself when
 * the socket takes them, so a send costs one system call.
 *
 * Locks, outer to inner: ctx->cm_lock -> ctx->lock -> qp->link_lock ->
 * conn->lock -> send queue (sw_sq) -> CQ ring; the memory guard
 * (ctx->mem_lock, read side) may be held around any of them.  No lock is
 * held across a blocking call; sockets never block.
 */
#ifndef TRANSPORTS_TCP_TCP_H
#define TRANSPORTS_TCP_TCP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <uthash.h>

#include <openrdma/transport.h>

#include "core/lock.h"
#include "core/sw/addr.h"
#include "core/sw/cq.h"
#include "core/sw/keymap.h"
#include "core/sw/qp.h"
#include "core/sw/srq.h"
#include "core/sw/sw_ops.h"
#include "core/sw/sw_pipe.h"
#include "core/sw/sw_place.h"
#include "core/sw/timer.h"
#include "transports/tcp/tcp_frame.h"

/* Limits advertised by device_query and enforced by every op. */
#define TCP_MAX_QP 4096
#define TCP_MAX_QP_WR 16384
#define TCP_MAX_SGE SW_MAX_SGE
#define TCP_MAX_INLINE 512
#define TCP_MAX_CQ 4096
#define TCP_MAX_CQE 65536
#define TCP_MAX_MR (1 << 20)
#define TCP_MAX_PD 4096
#define TCP_MAX_MW (1 << 16)
#define TCP_MAX_AH (1 << 16)
#define TCP_MAX_SRQ 4096
#define TCP_MAX_SRQ_WR 16384
#define TCP_MAX_RD_ATOM 16
#define TCP_MAX_MR_SIZE (1ull << 40)
#define TCP_MAX_MSG_SIZE TCP_FRAME_MAX_MSG
#define TCP_MAX_UD_MSG TCP_FRAME_MAX_UD
#define TCP_PORT 1

/* REJECTED events' status, as openrdma_cm(3) lists them */
#define TCP_REJ_BACKLOG (-OPENRDMA_ECONNREFUSED) /* the backlog is full */
#define TCP_REJ_CONSUMER (-OPENRDMA_EREJECTED) /* openrdma_cm_reject() */

/* Frames and iovecs one write batch holds. */
#define TCP_TX_FRAMES 32
#define TCP_TX_IOV 256
/* Answers a connection queues: reads and atomics in flight (IRD) with an
 * acknowledgement between each, and room for the NAK that ends them. */
#define TCP_RESP_MAX (2 * TCP_MAX_RD_ATOM + 4)

/* The parameters of openrdma_tcp(7), read when a context opens. */
struct tcp_params {
	unsigned int keepalive_ms; /* a silent peer is dead after this */
	unsigned int connect_timeout_ms;
	unsigned int ack_delay_us; /* how long an acknowledgement may wait */
	unsigned int rnr_scale; /* RNR delays, percent of the IB timer */
	size_t rx_buffer; /* staging buffer of each connection */
	int sndbuf; /* SO_SNDBUF / SO_RCVBUF, 0: the kernel's */
	int rcvbuf;
	bool busy_poll; /* the progress thread spins instead of sleeping */
	bool nodelay;
};

/* Something the progress thread watches: an fd and what to do with it. */
struct tcp_poll {
	int fd;
	void (*fn)(struct tcp_poll *poll, uint32_t events);
};

struct tcp_conn;
struct tcp_qp;
struct tcp_cm_id;
struct tcp_listener;

struct tcp_ctx {
	struct openrdma_context base;
	struct sw_keymap *keymap;
	struct sw_peers *peers;
	struct sw_timer timer; /* RNR retries, lost paths */
	struct tcp_params prm;

	/* the port */
	struct sockaddr_storage bind_addr; /* what sockets bind to, port 0 */
	struct sockaddr_storage port_addr; /* what port_query reports */
	union openrdma_gid gid;
	struct tcp_poll qp_listen; /* QPs connected by hand */
	struct tcp_poll ud; /* UD datagrams */
	int ud_family; /* of the UDP socket */
	uint8_t *ud_buf;

	/*
	 * The memory guard: socket I/O into or out of registered memory
	 * holds the read side; deregistration takes the write side and
	 * bumps mem_gen, so I/O that spans it checks its memory again.
	 */
	pthread_rwlock_t mem_lock;
	atomic_uint mem_gen;

	/* the progress thread */
	int epfd;
	struct tcp_poll wake;
	pthread_t thread;
	bool thread_started;
	atomic_bool stop;
	/* progress thread only */
	struct tcp_conn *ack_list; /* delayed acknowledgements, by deadline */
	struct tcp_conn *rx_again; /* stopped reading on their budget */
	struct tcp_conn *app_conns; /* read by polling applications */
	uint64_t app_look; /* when tcp_poll_check looks at their clocks */
	atomic_int app_count; /* how many */
	atomic_bool app_asked; /* pollers ask for connections (tcp_poll.c) */
	uint64_t next_sweep;
	bool ud_again; /* the UD socket stopped on its budget */

	/* ctx->lock: QPs by number, connections, the close queue */
	pthread_mutex_t lock;
	pthread_cond_t reaped; /* a connection was torn down */
	struct tcp_qp *qps;
	uint32_t qpn_next;
	struct tcp_conn *conns;
	struct tcp_conn *sweep_next; /* where a full sweep pass stopped */
	struct tcp_conn *closing;
	struct tcp_listener *dead_listeners; /* freed by the progress thread */
	int hello_pending; /* QP connections that did not say HELLO yet */

	/* every CM id's state and the links between ids and connections */
	pthread_mutex_t cm_lock;

	atomic_int count[SW_RES_NUM];
};

struct tcp_pd {
	struct openrdma_pd base;
};

struct tcp_mr {
	struct openrdma_mr base;
};

struct tcp_mw {
	struct openrdma_mw base;
};

/*
 * A CQ, and the connections whose completions it gets: a thread polling
 * it in vain reads them itself (tcp_poll.c), so that a busy-polling
 * application needs no wake-up of the progress thread per message.
 */
struct tcp_cq {
	struct openrdma_cq base;
	struct sw_cq sw;
	/* a recent poll that found none (ns), stamped every few polls */
	_Atomic uint64_t last_poll;
	atomic_uint streak; /* polls in a row that found none */
	/* its poller once made APP_STREAK empty polls in a row, and did
	 * not arm the CQ since: a busy poller while it polls (tcp_poll.c) */
	atomic_bool busy;
	/* drive_lock: the connections, and the pollers reading them */
	struct core_lock drive_lock;
	struct tcp_conn **drive; /* each held by the array */
	int ndrive;
	int drive_next; /* where the next poll starts */
	int drive_cap;
	int drivers; /* pollers using connections of the array */
	int draining; /* a connection leaves: pollers keep out */
	/* threads asleep with the connections' sockets in their poll set
	 * (tcp_poll_sleep_begin): busy pollers that sleep */
	atomic_int sleepers;
};

struct tcp_srq {
	struct openrdma_srq base;
	struct sw_srq sw;
};

struct tcp_ah {
	struct openrdma_ah base;
	struct sockaddr_storage dest; /* AF_UNSPEC: datagrams are lost */
};

/* How a QP reaches its peer. */
enum tcp_qp_path {
	TCP_PATH_NONE,
	TCP_PATH_CM, /* one connection, owned by a CM id */
	TCP_PATH_MANUAL, /* connected by modify-QP: our own connections */
};

struct tcp_qp {
	struct openrdma_qp base;
	struct sw_qp sw;
	struct sw_pipe pipe; /* RC send queue */
	struct tcp_ctx *ctx;
	/* the progress thread's copy: the core sets base after publication */
	bool rc;
	/* progress-thread and timer users that hold the QP */
	atomic_uint users;
	struct sw_timer_entry rnr_entry;
	struct sw_timer_entry lost_entry;
	/* link_lock: the connections */
	pthread_spinlock_t link_lock;
	enum tcp_qp_path path;
	bool unlinking; /* its connections are being closed on purpose */
	struct tcp_conn *out; /* carries our requests and their answers */
	struct tcp_conn *in; /* carries the peer's requests (manual) */
	struct sockaddr_storage dest; /* the peer's port (manual) */
	uint32_t ackreq; /* unacknowledged requests that ask for an ack */
	UT_hash_handle hh; /* ctx->qps, by qp_num */
};

/* ------------------------------------------------------------------ */
/* Connections                                                        */
/* ------------------------------------------------------------------ */

enum tcp_conn_kind {
	TCP_CONN_CM_ACTIVE, /* openrdma_cm_connect() */
	TCP_CONN_CM_PASSIVE, /* accepted on a CM listener */
	TCP_CONN_QP_OUT, /* a QP connected by hand, to its peer's port */
	TCP_CONN_QP_IN, /* accepted on the context's port */
};

enum tcp_conn_state {
	TCP_CONN_CONNECTING, /* TCP handshake */
	TCP_CONN_OPEN,
	TCP_CONN_CLOSING, /* no more writes; torn down by the progress thread */
	TCP_CONN_CLOSED,
};

/* An answer the target queues for the initiator. */
struct tcp_resp {
	uint8_t opcode; /* ACK (merged), NAK, READ_RESP, ATOMIC_RESP */
	uint8_t syndrome;
	uint8_t rnr_timer;
	uint32_t psn;
	uint64_t value; /* ATOMIC_RESP */
	/* READ_RESP: the data, and what it was checked against */
	void *ptr;
	uint64_t len;
	uint32_t rkey;
	uint64_t raddr;
	const struct openrdma_pd *pd;
	unsigned int gen; /* the memory generation it was checked at */
};

/* A control frame (CM, HELLO, keepalive) waiting to be written. */
struct tcp_ctl {
	uint8_t hdr[TCP_FRAME_HDR_MAX];
	unsigned int hlen;
	uint8_t pdata[256];
	unsigned int plen;
	bool shut_after; /* half-close once written (DISCONNECT, REJECT) */
	struct tcp_ctl *next;
};

/* Registered memory behind one iovec of a batch, to check it again. */
struct tcp_guard {
	uint32_t key; /* 0: not registered memory */
	uint32_t access;
	const struct openrdma_pd *pd;
	uint64_t addr;
	uint64_t len;
	void *ptr;
};

/* The write side: a batch of frames, written by whoever holds the token. */
struct tcp_tx {
	/* conn->lock */
	bool busy; /* a thread is writing */
	bool kick; /* more arrived meanwhile */
	/* the socket is full: EPOLLOUT resumes; stored atomically, a poller
	 * peeks (tcp_poll.c) */
	bool blocked;
	/* the batch: the token holder's */
	struct iovec iov[TCP_TX_IOV];
	struct tcp_guard guard[TCP_TX_IOV];
	int iov_n;
	int iov_pos;
	uint8_t hdr[TCP_TX_FRAMES][TCP_FRAME_HDR_MAX];
	struct tcp_ctl *ctl[TCP_TX_FRAMES]; /* freed once written */
	int nctl;
	int nframes;
	bool has_mem; /* some iovec points into registered memory */
	bool full; /* it ran out of room: more may be waiting */
	bool stale; /* some memory was checked before gen: check again */
	bool shut_after;
	/* the batch carries the acknowledgement of ack_psn: pending until
	 * the batch is written (batch_done), off the path to the socket */
	bool ack_out;
	uint32_t ack_psn;
	unsigned int gen; /* mem_gen the batch's memory was checked at */
};

enum tcp_rx_state {
	TCP_RX_HDR,
	TCP_RX_BODY,
};

enum tcp_sink {
	TCP_SINK_DISCARD,
	TCP_SINK_MEM, /* registered memory: rx.iov */
	TCP_SINK_CTL, /* private data of a CM frame: rx.ctl */
};

/* The read side: progress thread only. */
struct tcp_rx {
	uint8_t *buf;
	size_t cap;
	size_t pos; /* parsed up to */
	size_t end; /* filled up to */
	/* the last read emptied the socket of data (a short read): what
	 * comes next raises a new edge, unless the peer's end came with the
	 * data (tcp_conn.rdhup) */
	bool drained;
	/* this turn queued an answer or made the acknowledgement due
	 * (tcp_tx_resp, tcp_tx_ack): the writer must be kicked */
	bool want_write;
	enum tcp_rx_state state;
	struct tcp_frame f; /* the frame being received */
	uint64_t left; /* its payload bytes still to come */
	enum tcp_sink sink;
	struct iovec iov[SW_MAX_SGE]; /* where the payload goes */
	struct iovec orig[SW_MAX_SGE]; /* as first mapped, to check again */
	int iovcnt;
	int iovidx;
	size_t iovoff;
	unsigned int gen;
	int status; /* the frame's fate once its payload is in */
	bool placing; /* place holds a request between begin and end */
	struct sw_place place;
	uint8_t ctl[256];
	/* after a NAK the target drops requests until psn comes again */
	bool dropping;
	uint32_t drop_psn;
	/* the SO_RCVLOWAT we raised the socket's to, 0 while it is the
	 * kernel's one byte (tcp_rx.c, lowat_set) */
	int lowat;
};

struct tcp_conn {
	struct tcp_poll poll;
	struct tcp_ctx *ctx;
	atomic_int ref;
	enum tcp_conn_kind kind;
	_Atomic int state; /* enum tcp_conn_state */
	int error; /* why it closed, -OPENRDMA_E* */
	bool abortive; /* close with a reset */
	bool initiator; /* carries our requests */
	bool target; /* carries the peer's requests */
	bool confirmed; /* requests may flow (QP_OUT: the peer said HELLO) */
	bool greeted; /* the peer's first frame (CONNECT, ACCEPT, HELLO) came */
	/* epoll reported the peer's end (or an error): reads go on until
	 * they hear it, short or not */
	atomic_bool rdhup;
	atomic_bool bye; /* DISCONNECT or REJECT went either way: EOF is clean
			 * (atomic: QP teardown reads it without cm_lock) */
	bool shut; /* our side is half-closed: nothing more is written */
	bool hello_counted;
	struct sockaddr_storage local;
	struct sockaddr_storage peer;
	/* QP connections: the peer's port (its HELLO, or where we went) */
	struct sockaddr_storage peer_port;
	uint64_t deadline; /* of the handshake (CLOCK_MONOTONIC ns), 0: none */
	/* progress thread: requests wait for the peer's HELLO since (QP_OUT) */
	uint64_t wait_since;
	/* reads and writes that moved bytes, counted by the token holders:
	 * the data path reads no clock; the sweep turns changes into times
	 * (rx_at, tx_at) */
	_Atomic uint64_t rx_count;
	_Atomic uint64_t tx_count;
	/* progress thread only: the counts the last sweep saw, and when
	 * they last moved (ns) */
	uint64_t rx_seen, tx_seen;
	uint64_t rx_at, tx_at;

	/* conn->lock: the QP, the queues, acknowledgements, the tx token */
	struct core_lock lock;
	struct tcp_qp *qp;
	uint32_t peer_qpn;
	struct tcp_ctl *ctl_head, *ctl_tail;
	struct tcp_resp resp[TCP_RESP_MAX];
	unsigned int resp_head, resp_n;
	bool ack_pending; /* stored atomically: a poller peeks (tcp_poll.c) */
	bool ack_due; /* write it now, without waiting for a frame */
	uint32_t ack_psn;
	uint64_t ack_deadline; /* 0: from the first look (tcp_tx_ack_due) */
	bool want_keepalive;
	struct tcp_tx tx;
	/* the read token, as tx's: whoever reads, reads for all */
	bool rx_busy;
	bool rx_kick;

	struct tcp_rx rx;
	/* the CQs that drive it (tcp_poll.c); conn->lock */
	struct tcp_cq *drive_cq[2];
	/* handed to its poller, or asked for by it (tcp_poll.c) */
	atomic_bool app_asked;

	/* ctx->cm_lock */
	struct tcp_cm_id *id; /* the CM id that owns it */
	struct tcp_listener *listener; /* CM_PASSIVE before CONNECT */
	struct tcp_conn *lprev, *lnext; /* on the listener's */

	/* ctx->lock */
	struct tcp_conn *prev, *next; /* ctx->conns */
	bool close_queued;
	struct tcp_conn *close_next;
	/* progress thread only */
	bool on_ack_list;
	struct tcp_conn *ack_prev, *ack_next;
	bool on_rx_again;
	struct tcp_conn *rx_prev, *rx_next;
	bool app_mode; /* unwatched: a polling application reads it */
	struct tcp_conn *app_prev, *app_next;
	/* its CQs' poll clocks at the last look (tcp_poll_check), 0 after
	 * the hand-over */
	uint64_t poll_seen[2];
};

/* ------------------------------------------------------------------ */
/* Helpers                                                            */
/* ------------------------------------------------------------------ */

static inline struct tcp_ctx *to_tcp_ctx(struct openrdma_context *ctx)
{
	return openrdma_container_of(ctx, struct tcp_ctx, base);
}

static inline struct tcp_cq *to_tcp_cq(struct openrdma_cq *cq)
{
	return openrdma_container_of(cq, struct tcp_cq, base);
}

static inline struct tcp_srq *to_tcp_srq(struct openrdma_srq *srq)
{
	return openrdma_container_of(srq, struct tcp_srq, base);
}

static inline struct tcp_ah *to_tcp_ah(struct openrdma_ah *ah)
{
	return openrdma_container_of(ah, struct tcp_ah, base);
}

static inline struct tcp_qp *to_tcp_qp(struct openrdma_qp *qp)
{
	return openrdma_container_of(qp, struct tcp_qp, base);
}

static inline struct tcp_qp *sw_to_tcp_qp(struct sw_qp *sqp)
{
	return openrdma_container_of(sqp, struct tcp_qp, sw);
}

/* Counts a read or a write that moved bytes (rx_count, tx_count): only
 * the token's holder writes it, so no locked instruction. */
static inline void tcp_conn_count(_Atomic uint64_t *count)
{
	atomic_store_explicit(
		count, atomic_load_explicit(count, memory_order_relaxed) + 1,
		memory_order_relaxed);
}

/*
 * The QP attached to a connection.  It changes from NULL to a QP when the
 * connection is set up, and back only when the progress thread tears the
 * connection down: the progress thread and a writer holding the token
 * use it without a reference.
 */
static inline struct tcp_qp *tcp_conn_qp(struct tcp_conn *conn)
{
	return __atomic_load_n(&conn->qp, __ATOMIC_ACQUIRE);
}

/* tcp_ctx.c: contexts, the port, limits */
int tcp_device_open(struct openrdma_device *dev,
		    struct openrdma_context **ctx_out);
void tcp_context_close(struct openrdma_context *ctx);
int tcp_device_query(struct openrdma_context *ctx,
		     struct openrdma_device_attr *attr);
int tcp_port_query(struct openrdma_context *ctx, uint8_t port_num,
		   struct openrdma_port_attr *attr);
int tcp_gid_query(struct openrdma_context *ctx, uint8_t port_num, int index,
		  union openrdma_gid *gid);
/* Counts one more object of kind res: -OPENRDMA_ENOMEM at the limit. */
int tcp_res_get(struct openrdma_context *ctx, enum sw_res res);
void tcp_res_put(struct openrdma_context *ctx, enum sw_res res);

/* tcp_iface.c: which address an interface uses */
/* The marker probe() hands to tcp0's device: all local addresses. */
extern const char tcp_iface_all[];
/*
 * The address sockets of dev bind to (port 0) and the one its port
 * reports: tcp0 binds to every address and reports the first
 * non-loopback IPv4 one (else 127.0.0.1); a configured interface binds to
 * its netdev's first IPv4 address (else IPv6).
 */
int tcp_iface_resolve(const struct openrdma_device *dev,
		      struct sockaddr_storage *bind_addr,
		      struct sockaddr_storage *port_addr);

/* tcp_sock.c: sockets and addresses */
/* A non-blocking socket of family with the context's options. */
int tcp_sock_open(struct tcp_ctx *tctx, int family, int type, int *fd_out);
/* Applies the per-connection options (TCP_NODELAY, buffers, timeouts). */
void tcp_sock_tune(struct tcp_ctx *tctx, int fd);
/* Binds a listening socket to addr (its port may be 0) and listens. */
int tcp_sock_listen(struct tcp_ctx *tctx, const struct sockaddr *addr,
		    int backlog, int *fd_out);
/*
 * The data path's system calls on a non-blocking socket, without glibc's
 * cancellation point (tcp_sock.c says why).  Each returns the byte count or
 * -errno (-EAGAIN: nothing to read, or no room), and restarts on EINTR.
 */
ssize_t tcp_sock_recv(int fd, void *buf, size_t len);
ssize_t tcp_sock_readv(int fd, const struct iovec *iov, int cnt);
int tcp_sock_rcvlowat(int fd, int bytes);
/* Batches of up to this many bytes are copied into one buffer and sent
 * with send(); larger ones go with sendmsg() as they are. */
#define TCP_SOCK_FLAT_MAX 512
/* sendmsg() with MSG_NOSIGNAL | MSG_DONTWAIT, or send() of a small batch:
 * in registered memory, under the memory guard (tcp_tx.c) */
ssize_t tcp_sock_send(int fd, const struct msghdr *msg);
/* IPv4-mapped IPv6 addresses become IPv4 ones; the bytes after the
 * family's address are zeroed. */
void tcp_addr_normalize(struct sockaddr_storage *ss);
/* sa as the family of a socket bound to family (IPv4 mapped into IPv6). */
int tcp_addr_for_family(const struct sockaddr *sa, int family,
			struct sockaddr_storage *out, socklen_t *len_out);
uint64_t tcp_now(void);

/* tcp_progress.c: the progress thread */
int tcp_progress_start(struct tcp_ctx *tctx);
void tcp_progress_stop(struct tcp_ctx *tctx);
/* What the progress thread watches on an open connection's socket. */
#define TCP_CONN_EVENTS (EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET)
int tcp_poll_add(struct tcp_ctx *tctx, struct tcp_poll *poll, uint32_t events);
void tcp_poll_del(struct tcp_ctx *tctx, struct tcp_poll *poll);
void tcp_progress_wake(struct tcp_ctx *tctx);
/* The memory guard (see struct tcp_ctx); may nest in one thread. */
void tcp_mem_enter(struct tcp_ctx *tctx);
void tcp_mem_leave(struct tcp_ctx *tctx);
/* Deregistration side: excludes every guarded transfer. */
void tcp_mem_change_begin(struct tcp_ctx *tctx);
void tcp_mem_change_end(struct tcp_ctx *tctx);
/* Progress thread: a pending acknowledgement of conn waits on the list
 * until its deadline, or goes at once if it is due. */
void tcp_ack_list_add(struct tcp_conn *conn);
void tcp_ack_list_del(struct tcp_conn *conn);

/* tcp_conn.c: connection lifetime */
int tcp_conn_create(struct tcp_ctx *tctx, int fd, enum tcp_conn_kind kind,
		    struct tcp_conn **conn_out);
/* Registers with the progress thread (state CONNECTING or OPEN). */
int tcp_conn_start(struct tcp_conn *conn, enum tcp_conn_state state);
void tcp_conn_get(struct tcp_conn *conn);
void tcp_conn_put(struct tcp_conn *conn);
/*
 * Ends conn: err is why (0: a clean end), abortive sends a reset.  The
 * progress thread tears it down and tells its QP and CM id.
 */
void tcp_conn_close(struct tcp_conn *conn, int err, bool abortive);
/* Stops writers of conn and waits for the one writing (QP teardown). */
void tcp_conn_quiesce(struct tcp_conn *conn);
/* Progress thread: tears down the connections tcp_conn_close() queued. */
void tcp_conn_reap(struct tcp_ctx *tctx);
/* Progress thread: keepalives and handshake deadlines. */
void tcp_conn_sweep(struct tcp_ctx *tctx, uint64_t now);
/* The QP attached to conn, held (tcp_qp_put), or NULL. */
struct tcp_qp *tcp_conn_qp_get(struct tcp_conn *conn);
/* Attaches qp to conn (NULL detaches). */
void tcp_conn_set_qp(struct tcp_conn *conn, struct tcp_qp *qp,
		     uint32_t peer_qpn);

/* tcp_tx.c: the write side */
/* Batch building, for the writer (tcp_rc_fill): room for a frame of niov
 * iovecs; a frame's header; registered memory behind it. */
bool tcp_tx_room(struct tcp_conn *conn, int niov);
void tcp_tx_frame(struct tcp_conn *conn, const struct tcp_frame *f);
void tcp_tx_mem(struct tcp_conn *conn, void *ptr, size_t len,
		const struct tcp_guard *guard);
/* Writes what conn has to send, or leaves it to the thread writing. */
void tcp_tx_kick(struct tcp_conn *conn);
/* EPOLLOUT: the socket takes data again. */
void tcp_tx_writable(struct tcp_conn *conn);
/* Queues a control frame (f: opcode and fields; pdata: its payload). */
int tcp_tx_ctl(struct tcp_conn *conn, const struct tcp_frame *f,
	       const void *pdata, unsigned int plen, bool shut_after);
/* Target, the reader: request psn executed; ackreq: the initiator waits
 * for it (the reader's turn then kicks the writer: rx.want_write). */
void tcp_tx_ack(struct tcp_conn *conn, uint32_t psn, bool ackreq);
/* Is conn's pending acknowledgement due at now?  Its delay starts at the
 * first look after it became pending: arrivals read no clock.  Called
 * with conn->lock held. */
bool tcp_tx_ack_due(struct tcp_conn *conn, uint64_t now);
/* Target, the reader: queues an answer (READ_RESP, ATOMIC_RESP, NAK) for
 * its turn to write (rx.want_write); -ENOSPC if the initiator has more
 * outstanding than the IRD allows. */
int tcp_tx_resp(struct tcp_conn *conn, const struct tcp_resp *resp);
/* Progress thread, at teardown: drops the batch and the queues. */
void tcp_tx_fini(struct tcp_conn *conn);

/* tcp_rx.c: the read side */
/*
 * Reads what arrived on conn, or leaves it to the thread reading.  app:
 * called by a polling application (no budget; the progress thread's
 * lists are not touched).
 */
void tcp_rx_run(struct tcp_conn *conn, bool app);
/* Waits until no thread reads conn (teardown; conn is CLOSING). */
void tcp_rx_quiesce(struct tcp_conn *conn);
/* Progress thread, at teardown: ends a placement cut short. */
void tcp_rx_fini(struct tcp_conn *conn);

/* tcp_rc.c: RC requests and answers */
/* Target: a request header arrived; sets up where its payload goes. */
void tcp_rc_request(struct tcp_conn *conn, struct tcp_qp *qp,
		    const struct tcp_frame *f);
/* Target: the request's payload is in (or status says why not). */
void tcp_rc_request_end(struct tcp_conn *conn, struct tcp_qp *qp,
			const struct tcp_frame *f);
/* Initiator: an answer arrived; returns 0 or -OPENRDMA_EPROTO. */
int tcp_rc_answer(struct tcp_conn *conn, struct tcp_qp *qp,
		  const struct tcp_frame *f);
int tcp_rc_answer_end(struct tcp_conn *conn, struct tcp_qp *qp,
		      const struct tcp_frame *f);
/* Checks again where the payload being received goes, after memory
 * changed; false: it is gone (the rest is discarded). */
bool tcp_rc_sink_check(struct tcp_conn *conn, struct tcp_qp *qp);
/*
 * Writer: adds request frames of conn's QP to the batch; the first carries
 * the acknowledgement *ack when *has_ack (then cleared).
 */
void tcp_rc_fill(struct tcp_conn *conn, struct tcp_qp *qp, bool *has_ack,
		 uint32_t ack);

/* tcp_qp.c: QPs */
int tcp_qp_create(struct openrdma_pd *pd,
		  struct openrdma_qp_init_attr *init_attr,
		  struct openrdma_qp **qp_out);
int tcp_qp_destroy(struct openrdma_qp *qp);
int tcp_qp_modify(struct openrdma_qp *qp, struct openrdma_qp_attr *attr,
		  int attr_mask);
int tcp_qp_query(struct openrdma_qp *qp, struct openrdma_qp_attr *attr,
		 int attr_mask, struct openrdma_qp_init_attr *init_attr);
int tcp_qp_post_send(struct openrdma_qp *qp, struct openrdma_send_wr *wr,
		     struct openrdma_send_wr **bad_wr);
int tcp_qp_post_recv(struct openrdma_qp *qp, struct openrdma_recv_wr *wr,
		     struct openrdma_recv_wr **bad_wr);
/* The QP numbered qpn of tctx, held (tcp_qp_put), or NULL. */
struct tcp_qp *tcp_qp_lookup(struct tcp_ctx *tctx, uint32_t qpn);
void tcp_qp_hold(struct tcp_qp *qp);
void tcp_qp_put(struct tcp_qp *qp);
/* Has the QP's requests written (after a post, an answer, a timer). */
void tcp_qp_kick(struct tcp_qp *qp);
/* RNR: sends again at deadline. */
void tcp_qp_rnr_wait(struct tcp_qp *qp, uint64_t deadline);
/* The path through conn is gone (progress thread). */
void tcp_qp_conn_lost(struct tcp_qp *qp, struct tcp_conn *conn, int err);
/* A CM connection carries the QP from now on (NULL: no longer). */
void tcp_qp_attach_cm(struct tcp_qp *qp, struct tcp_conn *conn,
		      uint32_t peer_qpn);
/* Marks the QP as connected by the CM before its modify calls. */
void tcp_qp_set_cm(struct tcp_qp *qp);

/* tcp_manual.c: QPs connected by hand */
/* RTS: opens the connection to the peer's port. */
void tcp_manual_connect(struct tcp_qp *qp);
/* RTR: confirms a connection the peer opened before we were ready. */
void tcp_manual_ready(struct tcp_qp *qp);
/* A HELLO arrived on conn. */
void tcp_manual_hello(struct tcp_conn *conn, const struct tcp_frame *f);
/* The context's port accepted a connection. */
void tcp_manual_accept(struct tcp_poll *poll, uint32_t events);
/* The out connection is up: say HELLO. */
void tcp_manual_connected(struct tcp_conn *conn);
/*
 * Progress thread: conn, our QP_OUT connection, is not answered yet.  If
 * requests waited on it for longer than the QP's retry span (timeout and
 * retry_cnt), it ends, and they complete with RETRY_EXC_ERR.
 */
void tcp_manual_sweep(struct tcp_conn *conn, uint64_t now);

/* tcp_cm.c: the connection manager */
int tcp_cm_id_create(struct openrdma_context *ctx, enum openrdma_port_space ps,
		     struct openrdma_cm_id **id_out);
int tcp_cm_id_destroy(struct openrdma_cm_id *id);
int tcp_cm_listen(struct openrdma_cm_id *id, const struct sockaddr *addr,
		  int backlog);
int tcp_cm_connect(struct openrdma_cm_id *id, struct openrdma_qp *qp,
		   const struct sockaddr *dst,
		   const struct openrdma_conn_param *param);
int tcp_cm_accept(struct openrdma_cm_id *id, struct openrdma_qp *qp,
		  const struct openrdma_conn_param *param);
/* Makes fd, a connected TCP socket, the connection of qp. */
int tcp_cm_adopt(struct openrdma_cm_id *id, struct openrdma_qp *qp, int fd,
		 const struct openrdma_conn_param *param);
int tcp_cm_reject(struct openrdma_cm_id *id, const void *private_data,
		  uint8_t private_data_len);
int tcp_cm_disconnect(struct openrdma_cm_id *id, const void *private_data,
		      uint8_t private_data_len);
int tcp_cm_local_addr(struct openrdma_cm_id *id, struct sockaddr_storage *addr);
int tcp_cm_peer_addr(struct openrdma_cm_id *id, struct sockaddr_storage *addr);
/* A CM frame arrived on conn, with its private data. */
void tcp_cm_frame(struct tcp_conn *conn, const struct tcp_frame *f,
		  const uint8_t *pdata);
/* An active connection is up: send CONNECT. */
void tcp_cm_connected(struct tcp_conn *conn);
/* conn, owned by a CM id, is gone (progress thread). */
void tcp_cm_conn_lost(struct tcp_conn *conn, int err);
/* Progress thread: frees the listening sockets their ids let go of. */
void tcp_cm_reap_listeners(struct tcp_ctx *tctx);

/* tcp_ud.c: UD over UDP */
extern const struct sw_qp_ops tcp_ud_ops;
int tcp_ud_open(struct tcp_ctx *tctx, uint16_t port);
void tcp_ud_close(struct tcp_ctx *tctx);

/* tcp_mem.c: PDs, MRs, MWs, AHs */
int tcp_pd_alloc(struct openrdma_context *ctx, struct openrdma_pd **pd_out);
int tcp_pd_dealloc(struct openrdma_pd *pd);
int tcp_mr_reg(struct openrdma_pd *pd, void *addr, size_t length, int access,
	       struct openrdma_mr **mr_out);
int tcp_mr_rereg(struct openrdma_mr *mr, int flags, struct openrdma_pd *pd,
		 void *addr, size_t length, int access);
int tcp_mr_dereg(struct openrdma_mr *mr);
int tcp_mw_alloc(struct openrdma_pd *pd, enum openrdma_mw_type type,
		 struct openrdma_mw **mw_out);
int tcp_mw_dealloc(struct openrdma_mw *mw);
int tcp_ah_create(struct openrdma_pd *pd, struct openrdma_ah_attr *attr,
		  struct openrdma_ah **ah_out);
int tcp_ah_destroy(struct openrdma_ah *ah);
int tcp_ah_attr_from_wc(struct openrdma_context *ctx, uint8_t port_num,
			const struct openrdma_wc *wc,
			const struct openrdma_grh *grh,
			struct openrdma_ah_attr *attr);

/* tcp_poll.c: progress driven by polling applications */
/* conn completes into the QP's CQs: lets their pollers drive it. */
void tcp_poll_attach(struct tcp_conn *conn, struct tcp_qp *qp);
void tcp_poll_detach(struct tcp_conn *conn);
/* An empty poll of cq: after a few in a row, reads its connections (one
 * whose writer a full socket stopped only now and then), stopping once
 * what the poller waits for is there.  Returns nothing: the caller polls
 * again. */
void tcp_poll_drive(struct tcp_cq *cq);
/* A thread about to sleep until cq has a completion, and once it woke:
 * the transport's cq_sleep_begin and cq_sleep_end. */
int tcp_poll_sleep_begin(struct tcp_cq *cq, struct pollfd *pfd, void **cookie,
			 int max);
void tcp_poll_sleep_end(struct tcp_cq *cq, const struct pollfd *pfd,
			void **cookie, int n);
/* Progress thread: EPOLLIN on conn; hands it to its poller if it has one. */
void tcp_poll_rx_event(struct tcp_conn *conn);
/* Progress thread: hands connections over that their pollers asked for. */
void tcp_poll_asked(struct tcp_ctx *tctx);
/* Progress thread, on each turn: takes back connections whose pollers
 * stopped or armed their CQs; returns when to look again (ns), 0 if none
 * is handed out. */
uint64_t tcp_poll_check(struct tcp_ctx *tctx, uint64_t now);
/* Progress thread, teardown: takes conn back. */
void tcp_poll_release(struct tcp_conn *conn);

/* tcp_cq.c: CQs and SRQs */
int tcp_cq_create(struct openrdma_context *ctx, int cqe, int comp_vector,
		  struct openrdma_cq **cq_out);
int tcp_cq_destroy(struct openrdma_cq *cq);
int tcp_cq_poll(struct openrdma_cq *cq, int num_entries,
		struct openrdma_wc *wc);
int tcp_cq_req_notify(struct openrdma_cq *cq, int solicited_only);
int tcp_cq_resize(struct openrdma_cq *cq, int cqe);
int tcp_cq_sleep_begin(struct openrdma_cq *cq, struct pollfd *pfd,
		       void **cookie, int max);
void tcp_cq_sleep_end(struct openrdma_cq *cq, const struct pollfd *pfd,
		      void **cookie, int n);
int tcp_srq_create(struct openrdma_pd *pd,
		   struct openrdma_srq_init_attr *init_attr,
		   struct openrdma_srq **srq_out);
int tcp_srq_destroy(struct openrdma_srq *srq);
int tcp_srq_modify(struct openrdma_srq *srq, struct openrdma_srq_attr *attr,
		   int attr_mask);
int tcp_srq_post_recv(struct openrdma_srq *srq, struct openrdma_recv_wr *wr,
		      struct openrdma_recv_wr **bad_wr);
int tcp_srq_query(struct openrdma_srq *srq, struct openrdma_srq_attr *attr);

#endif /* TRANSPORTS_TCP_TCP_H */
