/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * openrdma-perf: latency, bandwidth, message-rate and scale benchmarks over
 * the OpenRDMA verbs core, in the manner of perftest.
 *
 * A run is a session between a client and a server.  The client's options
 * rule: it sends them to the server in the first control message, so the
 * server needs only its interface and port.  Each side has
 *
 *   - a control QP (its own CQ with a completion channel, so that waiting
 *     for the peer sleeps instead of spinning) carrying the session's
 *     messages: HELLO, BEGIN/READY/END/RESULT for every timed round, BYE;
 *   - data QPs, each with its own buffer and MR, spread over worker
 *     threads; each worker has one CQ that it busy-polls.
 *
 * Buffer addresses and keys travel in the CM private data of each data
 * QP's connect and accept.
 */
#ifndef EXAMPLES_PERF_OPENRDMA_PERF_H
#define EXAMPLES_PERF_OPENRDMA_PERF_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include <openrdma/verbs.h>

#define PERF_NAME "openrdma-perf"
#define PERF_DEFAULT_PORT 18515
#define PERF_ALL_MIN_SIZE 2 /* -a: 2 B ... */
#define PERF_ALL_MAX_SIZE (8u << 20) /* ... 8 MiB */
#define PERF_MAX_SIZE (1u << 30)
#define PERF_MAX_QPS 4096
#define PERF_MAX_THREADS 256
#define PERF_DEFAULT_TIMEOUT 30 /* seconds without progress */

/* Consecutive work requests use different buffer slots within this span. */
#define PERF_SPREAD 65536u
#define PERF_SLOT_ALIGN 64u
#define PERF_POLL_BATCH 16
/* Empty polls between two checks of the clock and the abort flag. */
#define PERF_IDLE_SPINS 4096u
/*
 * wr_id: the worker's QP index above bit 48, the receive flag in bit 47
 * (a failed completion's opcode is undefined), a sequence number below.
 */
#define PERF_WR_QP_SHIFT 48
#define PERF_WR_RECV (1ull << 47)
#define PERF_WR_SEQ_MASK (PERF_WR_RECV - 1)

/* ------------------------------------------------------------------ */
/* Tests                                                              */
/* ------------------------------------------------------------------ */

enum perf_test {
	PERF_LAT_SEND,
	PERF_LAT_WRITE,
	PERF_LAT_READ,
	PERF_LAT_ATOMIC,
	PERF_BW_SEND,
	PERF_BW_WRITE,
	PERF_BW_READ,
	PERF_MSG_RATE,
	PERF_SCALE,
	PERF_TEST_NUM
};

/* The tests that -t all selects: every one but scale. */
#define PERF_TESTS_ALL ((1u << PERF_SCALE) - 1)

enum perf_kind {
	PERF_KIND_PINGPONG, /* both sides answer: one-way = half a round trip */
	PERF_KIND_ROUNDTRIP, /* the initiator waits for its own completion */
	PERF_KIND_STREAM, /* a window of requests in flight */
	PERF_KIND_SCALE,
};

struct perf_test_desc {
	const char *name;
	const char *summary; /* for the table's header */
	enum perf_kind kind;
	enum openrdma_wr_opcode opcode;
	bool rate_at_target; /* msg_rate: counted where messages arrive */
};

extern const struct perf_test_desc perf_tests[PERF_TEST_NUM];

/* ------------------------------------------------------------------ */
/* Options                                                            */
/* ------------------------------------------------------------------ */

enum perf_format {
	PERF_FMT_TABLE,
	PERF_FMT_CSV,
	PERF_FMT_JSON,
};

/*
 * What the client decides and sends to the server (struct perf_msg HELLO);
 * zero means "the default" where a default exists.
 */
struct perf_params {
	uint32_t tests; /* 1 << enum perf_test */
	uint32_t explicit_tests; /* named on the command line, not by "all" */
	uint64_t min_size;
	uint64_t max_size;
	uint64_t iters; /* 0: a default per size */
	uint64_t duration_ms; /* 0: count iterations */
	uint32_t qps;
	uint32_t threads;
	uint32_t window; /* send requests in flight per QP */
	uint32_t post_list; /* send requests per post call */
	uint32_t cq_mod; /* one signaled send request in cq_mod */
	uint32_t rx_depth; /* receives posted per QP */
	int32_t inline_size; /* -1: the device's limit */
	uint32_t timeout_s;
	uint32_t scale_eps; /* 0: as many as the limits allow */
	uint32_t session; /* random, names the session in CM private data */
};

struct perf_opts {
	const char *dev_name;
	const char *server; /* NULL: this is the server */
	unsigned int port;
	bool port_set;
	bool timeout_set; /* a server waits for its client only this long */
	bool local; /* -l: both sides here */
	bool verbose;
	bool progress; /* a progress bar on stderr */
	enum perf_format format;
	int cpu[2]; /* first core of the client's and the server's threads */
	struct perf_params p;
};

/*
 * Parses the command line.  Returns 0 to run, 1 when help or the version
 * was printed (exit 0), -OPENRDMA_EINVAL after printing a usage error.
 */
int perf_opts_parse(int argc, char **argv, struct perf_opts *opts);
/* The name of a test, or NULL. */
const char *perf_test_name(enum perf_test test);
/* Clamps the flow-control parameters to sane, mutually consistent values. */
void perf_params_fix(struct perf_params *p);
/* The sizes test runs at: [*first, *last], doubling. */
void perf_test_sizes(const struct perf_params *p, enum perf_test test,
		     uint32_t *first, uint32_t *last);
/* The largest message of the session: what each buffer must hold. */
uint32_t perf_params_max_size(const struct perf_params *p);

/* ------------------------------------------------------------------ */
/* Control messages (openrdma_perf_ctl.c)                             */
/* ------------------------------------------------------------------ */

enum perf_msg_type {
	PERF_MSG_HELLO = 1, /* client: the session's parameters */
	PERF_MSG_HELLO_ACK, /* server: its interface */
	PERF_MSG_BEGIN, /* client: a round */
	PERF_MSG_READY, /* server: its receives are posted, it runs */
	PERF_MSG_END, /* client: its side of the round is done */
	PERF_MSG_RESULT, /* server: its side, measured */
	PERF_MSG_ABORT, /* either: stop, v[0] holds the error */
	PERF_MSG_BYE, /* client: the session is over */
	PERF_MSG_HEARTBEAT, /* client: still running a long round */
	PERF_MSG_SCALE, /* client: a phase of the scale test */
};

#define PERF_MSG_VALUES 24

/* Host-order view of a control message; ctl.c converts to the wire. */
struct perf_msg {
	uint32_t type; /* enum perf_msg_type */
	int32_t status; /* 0 or -OPENRDMA_E* */
	uint64_t v[PERF_MSG_VALUES];
	char text[64]; /* NUL-terminated; HELLO_ACK: "iface/transport" */
};

/* The value slots of each message type. */
enum {
	/* BEGIN */
	PERF_V_TEST = 0,
	PERF_V_SIZE,
	PERF_V_ITERS,
	PERF_V_WARMUP,
	/* RESULT, and the sides' own measurements */
	PERF_V_CPU_NS = 0, /* user + system time of the side */
	PERF_V_WALL_NS,
	PERF_V_COUNT, /* messages that arrived (send tests) */
	PERF_V_RATE_NS, /* first to last arrival */
	PERF_V_FDS, /* scale: descriptors opened */
	PERF_V_RSS, /* scale: resident bytes added */
	PERF_V_EPS, /* scale: endpoints */
	PERF_V_CAP, /* scale: endpoints this side can still open */
	PERF_V_CAP_WHY, /* scale: 1 when descriptors bound it, 0 max_qp */
	/* HELLO_ACK */
	PERF_V_MAX_INLINE = 0,
	PERF_V_ATOMIC,
	PERF_V_MAX_QP,
};

/* ------------------------------------------------------------------ */
/* Per-side state                                                     */
/* ------------------------------------------------------------------ */

/* What one side tells the other about a QP's buffer (CM private data). */
struct perf_remote {
	uint64_t addr;
	uint64_t length;
	uint32_t rkey;
	uint32_t index;
};

struct perf_qp {
	struct openrdma_qp *qp;
	struct openrdma_cm_id *id;
	struct openrdma_mr *mr;
	uint8_t *buf; /* [0, area): the peer writes here; [area, 2 area): we send */
	size_t area;
	uint32_t index; /* in the session */
	uint32_t local; /* in its worker */
	bool established;
	struct perf_remote remote;

	/* send ring: window entries, chained at post time */
	struct openrdma_send_wr *swr;
	struct openrdma_sge *ssge;
	uint32_t ring;
	uint32_t slot; /* next entry: posted % ring */
	uint32_t sig_left; /* requests until the next signaled one */
	uint64_t posted; /* this round */
	uint64_t completed;
	uint64_t total; /* requests this round */

	/* receive ring: rx_depth entries, kept posted across rounds */
	struct openrdma_recv_wr *rwr;
	struct openrdma_sge *rsge;
	uint32_t rx_ring;
	uint64_t rx_posted;
	uint64_t rx_done;
	uint64_t received; /* this round */

	uint8_t seq; /* lat_write: the flag byte of the last exchange */
	uint64_t atomic_next; /* lat_atomic: the value the next add returns */
	bool atomic_known;
};

struct perf_side;
struct perf_scale;

/* What a round asks of the workers. */
struct perf_round {
	enum perf_test test;
	uint32_t size;
	uint64_t iters; /* per QP */
	bool warmup;
	bool quit; /* the workers end */
};

struct perf_worker {
	struct perf_side *side;
	unsigned int index;
	pthread_t thread;
	bool started;
	struct openrdma_cq *cq;
	int cqe;
	struct perf_qp **qps;
	unsigned int nqps;

	/* this round */
	struct perf_round round;
	uint32_t cq_mod;
	uint32_t window;
	uint32_t post_list;
	uint32_t rx_group;
	unsigned int send_flags; /* INLINE or 0 */
	uint32_t *samples; /* round-trip times, ns */
	uint64_t nsamples;
	uint64_t samples_cap;
	bool cycles; /* pinned: the samples are timed in CPU cycles */
	uint64_t t_first,
		t_last; /* ns: first post (or arrival), last completion */
	uint64_t ops; /* messages this worker moved */
	uint64_t cpu_ns; /* its thread's CPU time, when sides share a process */
	int status;
	char error[160];

	/* busy-poll state */
	struct openrdma_wc wc[PERF_POLL_BATCH];
	uint32_t spins;
	uint64_t progress;
	uint64_t seen_progress;
	uint64_t deadline;
	struct perf_qp *rx_qp; /* the QP of the last receive */
};

/* The control connection. */
struct perf_ctl {
	struct openrdma_cq *cq;
	struct openrdma_comp_channel *channel;
	bool notify; /* the CQ can signal the channel */
	bool connected; /* until its DISCONNECTED event */
	/* BYE sent or received: the peer may disconnect at any time now */
	bool ending;
	struct openrdma_qp *qp;
	struct openrdma_cm_id *id;
	struct openrdma_mr *mr;
	uint8_t *buf; /* receive slots, then one send slot */
	/* received messages not yet taken */
	struct perf_msg inbox[8];
	unsigned int inbox_head, inbox_count;
};

struct perf_side {
	bool is_server;
	const struct perf_opts *opts;
	struct perf_params p; /* the client's, on both sides */
	bool shares_process; /* the peer is a thread of this process */
	int cpu; /* first core for the workers; -1: not pinned */
	struct openrdma_context *ctx;
	struct openrdma_device_attr attr;
	struct openrdma_pd *pd;
	struct openrdma_cm_channel *cm_ch;
	struct openrdma_cm_id *listen_id;
	struct sockaddr_storage addr; /* server: where it listens */
	int ready_fd; /* -l: the server writes its address here */
	struct perf_ctl ctl;

	struct perf_qp *qps;
	uint32_t nqps;
	struct perf_scale *scale; /* the scale test's endpoints */
	struct perf_worker *workers;
	uint32_t nworkers;
	uint32_t max_inline; /* granted by the data QPs */
	uint32_t peer_max_qp; /* client: the server's max_qp */

	/* worker coordination: main thread <-> workers */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool sync_init;
	uint64_t round_gen; /* a new round was posted */
	uint64_t go_gen; /* the round's timed part may start */
	bool go_abort; /* the round is called off before it starts */
	struct perf_round round;
	atomic_uint pending; /* workers still preparing, then still running */
	int event_fd; /* written by the last worker of each phase */
	atomic_bool abort; /* stop every loop now */
	bool peer_gone; /* the peer aborted or vanished: no ABORT back */
	bool bye; /* server: the client ended the session */
	int status; /* -l with threads: the server's outcome */
};

/* ------------------------------------------------------------------ */
/* Helpers (openrdma_perf_util.c)                                     */
/* ------------------------------------------------------------------ */

uint64_t perf_now_ns(void);

/*
 * The latency loops' clock: the CPU's cycle counter where there is one
 * (x86; perftest counts cycles too), read in a few cycles, where
 * clock_gettime() may cost a microsecond (an emulated guest whose clock
 * source is the HPET).  Only for differences on one pinned thread: a
 * guest's cores may disagree.  perf_cycle_ns is 0 where there is none.
 */
extern double perf_cycle_ns;
/* Measures perf_cycle_ns against CLOCK_MONOTONIC (about 20 ms). */
void perf_cycles_init(void);

static inline uint64_t perf_cycles(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __rdtsc();
#else
	return perf_now_ns();
#endif
}
/* Prints "openrdma-perf: [server: ]<what>: <error>" to stderr; returns ret. */
int perf_err(const struct perf_side *side, const char *what, int ret);
/* CPU time of the process, or of the calling thread, in ns. */
uint64_t perf_cpu_ns(bool thread_only);
/* Resident set size in bytes; open file descriptors. */
uint64_t perf_rss_bytes(void);
unsigned int perf_fd_count(void);
/* Raises the soft descriptor limit to the hard one; returns the limit. */
unsigned int perf_fd_limit_raise(void);
/* Pins the calling thread to core (cpu % online cores); cpu < 0: no-op.
 * Returns whether the thread is pinned. */
bool perf_pin(int cpu);
/* Pins the calling thread, and the threads it makes from now on, to
 * cores cpu .. cpu + n - 1 (modulo the online cores); cpu < 0: no-op.
 * Returns whether the thread is pinned. */
bool perf_pin_span(int cpu, unsigned int n);
uint64_t perf_round_up(uint64_t v, uint64_t align);
/* Parses "8", "4k", "1m", "1g"; returns 0 or -OPENRDMA_EINVAL. */
int perf_parse_size(const char *s, uint64_t *out);

/* ------------------------------------------------------------------ */
/* Resources (openrdma_perf_res.c)                                    */
/* ------------------------------------------------------------------ */

/* Opens a context of dev with a PD and a non-blocking CM channel. */
int perf_ctx_open(struct perf_side *side, struct openrdma_device *dev,
		  struct openrdma_context **ctx_out,
		  struct openrdma_pd **pd_out,
		  struct openrdma_cm_channel **ch_out);
/* Opens the interface, its PD and CM channel. */
int perf_side_open(struct perf_side *side);
/* Moves qp to INIT with the remote access the device allows. */
int perf_qp_init(struct perf_side *side, struct openrdma_qp *qp);
/* Creates an RC QP on cq with cap (granted: written back), in INIT. */
int perf_qp_open(struct perf_side *side, struct openrdma_pd *pd,
		 struct openrdma_cq *send_cq, struct openrdma_cq *recv_cq,
		 struct openrdma_qp_cap *cap, struct openrdma_qp **qp_out);
/* Creates the data QPs, their buffers and the workers' CQs. */
int perf_data_create(struct perf_side *side);
/* Posts every free entry of q's receive ring. */
int perf_rx_fill(struct perf_qp *q);
/*
 * Points q's rings at the buffer slots of a round of 'size' bytes:
 * consecutive requests use consecutive slots when 'spread', else all use
 * the first (ping-pong tests, whose peer polls a fixed byte).
 */
void perf_rings_layout(struct perf_qp *q, uint32_t size,
		       enum openrdma_wr_opcode opcode, bool spread);
/* Destroys everything, in reverse order; safe on a partly built side. */
void perf_side_close(struct perf_side *side);

/* ------------------------------------------------------------------ */
/* Connections (openrdma_perf_conn.c)                                 */
/* ------------------------------------------------------------------ */

enum perf_conn_kind {
	PERF_CONN_CTL = 1,
	PERF_CONN_DATA = 2,
	PERF_CONN_SCALE = 3,
};

/* What the CM private data carries, decoded. */
struct perf_conn_info {
	enum perf_conn_kind kind;
	uint32_t session;
	struct perf_remote remote;
};

/* Waits up to timeout_ms (< 0: the session's timeout) for one CM event
 * of ch, or of the side's channel. */
int perf_cm_wait_on(struct perf_side *side, struct openrdma_cm_channel *ch,
		    int timeout_ms, struct openrdma_cm_event **ev_out);
int perf_cm_wait(struct perf_side *side, int timeout_ms,
		 struct openrdma_cm_event **ev_out);
/* Encodes and decodes the private data; decode fails on a foreign peer. */
void perf_conn_encode(const struct perf_conn_info *info, uint8_t *out,
		      uint8_t *len_out);
int perf_conn_decode(const struct openrdma_cm_event *ev,
		     struct perf_conn_info *info);
/* Fills param for connect or accept with private data in pdata. */
void perf_conn_param(struct perf_side *side, struct openrdma_conn_param *param,
		     const uint8_t *pdata, uint8_t len);
/* Sets the port number of an IPv4 or IPv6 address. */
void perf_addr_set_port(struct sockaddr_storage *ss, unsigned int port);
/* Listens at the port address of ctx, on port (0: any free one). */
int perf_listen_on(struct perf_side *side, struct openrdma_context *ctx,
		   struct openrdma_cm_channel *ch, unsigned int port,
		   struct openrdma_cm_id **id_out,
		   struct sockaddr_storage *addr_out);
/* Server: binds and listens (port 0 in -l mode: any free port). */
int perf_listen(struct perf_side *side);
/* Client: resolves the server's name and port. */
int perf_resolve(struct perf_side *side, const char *host,
		 struct sockaddr_storage *ss);
/* Client: connects the control QP, retrying while the server starts. */
int perf_ctl_connect(struct perf_side *side,
		     const struct sockaddr_storage *dst);
/* Server: waits for a client's control connection and accepts it. */
int perf_ctl_accept(struct perf_side *side);
/* Connects (client) or accepts (server) every data QP. */
int perf_data_connect(struct perf_side *side,
		      const struct sockaddr_storage *dst);
/* Disconnects the data QPs and the control QP, and takes their events. */
void perf_disconnect_all(struct perf_side *side);

/* ------------------------------------------------------------------ */
/* Control channel (openrdma_perf_ctl.c)                              */
/* ------------------------------------------------------------------ */

/* Creates the control QP, its CQ and channel, and posts its receives. */
int perf_ctl_create(struct perf_side *side);
/* After a failed connect: back to INIT, the receives posted again. */
int perf_ctl_reset(struct perf_side *side);
int perf_ctl_send(struct perf_side *side, const struct perf_msg *msg);
/*
 * Takes the next control message.  With wake_fd >= 0, also returns
 * -OPENRDMA_EINTR when wake_fd becomes readable (and reads it).  Gives up
 * with -OPENRDMA_ETIMEDOUT after timeout_ms (< 0: the session's timeout).
 */
int perf_ctl_recv(struct perf_side *side, struct perf_msg *msg, int wake_fd,
		  int timeout_ms);
/* Waits for a message of type 'want'; an ABORT or another type fails. */
int perf_ctl_expect(struct perf_side *side, uint32_t want,
		    struct perf_msg *msg);
/* Tells the peer to stop (best effort). */
void perf_ctl_abort(struct perf_side *side, int code);
void perf_ctl_destroy(struct perf_side *side);

/* ------------------------------------------------------------------ */
/* Workers (openrdma_perf_worker.c)                                   */
/* ------------------------------------------------------------------ */

int perf_workers_start(struct perf_side *side);
/*
 * Runs one round on every worker: prepare, then (after 'go', which the
 * server follows with READY) the timed loops.  cpu_ns/wall_ns: the side's
 * use from go to the end.  Returns 0 or the first worker's error.
 */
int perf_round_run(struct perf_side *side, const struct perf_round *round,
		   struct perf_msg *peer_end, uint64_t *cpu_ns,
		   uint64_t *wall_ns);
void perf_workers_stop(struct perf_side *side);
/* Records a worker's failure (message in w->error); returns ret. */
int perf_worker_fail(struct perf_worker *w, int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The slow part of an empty poll: abort flag and progress deadline. */
int perf_worker_idle(struct perf_worker *w);
/* Records a failed completion; returns -OPENRDMA_EIO. */
int perf_wc_fail(struct perf_worker *w, const struct openrdma_wc *wc);

/* Polls w's CQ once: completions in w->wc, 0 when idle, or an error. */
static inline int perf_poll(struct perf_worker *w)
{
	int n, i;

	n = openrdma_cq_poll(w->cq, PERF_POLL_BATCH, w->wc);
	if (n > 0) {
		w->progress++;
		for (i = 0; i < n; i++) {
			if (w->wc[i].status != OPENRDMA_WC_SUCCESS)
				return perf_wc_fail(w, &w->wc[i]);
		}
		return n;
	}
	if (n < 0)
		return perf_worker_fail(w, n, "cq_poll: %s",
					openrdma_strerror(n));
	if (++w->spins & (PERF_IDLE_SPINS - 1))
		return 0;
	return perf_worker_idle(w);
}

/* ------------------------------------------------------------------ */
/* Test loops (openrdma_perf_lat.c, openrdma_perf_bw.c)               */
/* ------------------------------------------------------------------ */

/* Posts 'count' requests of q's send ring and accounts them. */
int perf_post_sends(struct perf_worker *w, struct perf_qp *q, uint32_t count);
/* Accounts one successful completion: 1 for a receive, 0 for a send. */
int perf_complete(struct perf_worker *w, const struct openrdma_wc *wc);
/* Polls until every request posted on the worker's QPs has completed. */
int perf_drain_sends(struct perf_worker *w);

int perf_lat_client(struct perf_worker *w);
int perf_lat_server(struct perf_worker *w);
int perf_bw_client(struct perf_worker *w);
int perf_bw_server(struct perf_worker *w);

/* ------------------------------------------------------------------ */
/* Statistics and output (openrdma_perf_stats.c, openrdma_perf_out.c) */
/* ------------------------------------------------------------------ */

struct perf_result {
	enum perf_test test;
	uint32_t size;
	uint64_t iters; /* per QP */
	/* latency, us */
	double lat_min, lat_median, lat_avg, lat_p99, lat_max;
	bool one_way;
	/* stream */
	double gbps; /* 1e9 bytes/s */
	double mmps; /* 1e6 messages/s */
	double cpu_client, cpu_server; /* % of one core; < 0: unknown */
	double seconds;
};

struct perf_scale_result {
	uint32_t eps;
	uint32_t limit_eps; /* the limit that stopped it */
	const char *limited_by;
	char limit_text[96]; /* a limit met on the way: what failed, why */
	double setup_s;
	double conn_per_s;
	double teardown_per_s;
	double fds_per_ep_client, fds_per_ep_server;
	double rss_per_ep_client, rss_per_ep_server; /* bytes */
	bool one_process; /* the client's figures are both sides' */
	uint64_t messages; /* one per endpoint, checked at the server */
};

/* Fills r's latency fields from n round-trip samples (reorders them). */
void perf_stats_latency(uint32_t *samples, uint64_t n, bool half,
			struct perf_result *r);

struct perf_out {
	FILE *f;
	enum perf_format format;
	bool progress; /* wanted; begin() keeps it only on a terminal */
	unsigned int steps, done;
	int last_test; /* whose table header was printed last */
	bool first_result;
	bool any;
	const char *iface;
	const char *transport;
	uint32_t qps, threads;
};

struct perf_session_info {
	const char *iface;
	const char *transport;
	const char *peer; /* "iface/transport" of the server */
	const char *server;
	bool local_threads; /* -l with both sides in one process */
	const struct perf_params *p;
	uint32_t max_inline;
};

void perf_out_begin(struct perf_out *o, const struct perf_session_info *info);
void perf_out_result(struct perf_out *o, const struct perf_result *r);
void perf_out_skip(struct perf_out *o, enum perf_test test, const char *reason);
void perf_out_scale(struct perf_out *o, const struct perf_scale_result *r);
void perf_out_step(struct perf_out *o, enum perf_test test, uint32_t size);
void perf_out_end(struct perf_out *o, int status, const char *error);

/* ------------------------------------------------------------------ */
/* Sessions (openrdma_perf_session.c, openrdma_perf_scale.c)          */
/* ------------------------------------------------------------------ */

int perf_client_run(struct perf_side *side);
int perf_server_run(struct perf_side *side);
/* The scale test: the client drives phases, the server answers each. */
int perf_scale_client(struct perf_side *side, struct perf_out *out,
		      const struct sockaddr_storage *dst);
int perf_scale_server(struct perf_side *side, const struct perf_msg *msg);
void perf_scale_close(struct perf_side *side);

#endif /* EXAMPLES_PERF_OPENRDMA_PERF_H */
