/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * shm: the intra-host shared-memory transport.  Contexts of one host find
 * each other by Unix sockets in the abstract namespace (a node socket per
 * context, a port socket per CM listener), exchange memfd segments over
 * them, and then talk through lock-free single-producer rings in those
 * segments.  RDMA WRITE and READ to registered memory are done by the
 * initiator with process_vm_writev/readv after checking the target's
 * published key table; everything else (sends, atomics, windows, and RDMA
 * when cross-memory attach is not permitted) is executed by the target's
 * core/sw code, fed from the rings.  See openrdma_shm(7) and
 * docs/wire/shm.md.
 *
 * Threads: the application's (posting, polling, which also run the
 * receive side), one progress thread per context (sockets, and the
 * receive side when nobody polls), and the RNR timer of core/sw.
 *
 * Lock order: cm_lock -> qp->conn_lock -> peer_lock, qp_lock, key_lock,
 * link_lock; then the queue locks of core/sw.  No lock is held while
 * blocking on a socket or calling shm_prog_run().  A receive slot
 * (shm_slot_take) ranks after cm_lock: a thread may wait for one holding
 * cm_lock (a DREQ drains the connection first), and none that holds one
 * takes cm_lock.
 */
#ifndef TRANSPORTS_SHM_SHM_H
#define TRANSPORTS_SHM_SHM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/types.h>

#include <openrdma/transport.h>

#include "core/sw/addr.h"
#include "core/sw/cq.h"
#include "core/sw/keymap.h"
#include "core/sw/payload.h"
#include "core/sw/qp.h"
#include "core/sw/srq.h"
#include "core/sw/sw_ops.h"
#include "core/sw/sw_pipe.h"
#include "core/sw/timer.h"
#include "transports/shm/shm_ring.h"
#include "transports/shm/shm_wire.h"

/* Limits advertised by device_query and enforced by every op. */
#define SHM_MAX_QP SHM_QPN_INDEX_MAX
#define SHM_MAX_QP_WR 16384
#define SHM_MAX_SGE SW_MAX_SGE
#define SHM_MAX_INLINE 512
#define SHM_MAX_CQ 4096
#define SHM_MAX_CQE 65536
#define SHM_MAX_MR (1 << 15)
#define SHM_KEY_SLOTS (2 * SHM_MAX_MR)
#define SHM_MAX_PD 4096
#define SHM_MAX_MW (1 << 16)
#define SHM_MAX_AH (1 << 16)
#define SHM_MAX_SRQ 4096
#define SHM_MAX_SRQ_WR 16384
#define SHM_MAX_RD_ATOM 16
#define SHM_MAX_MR_SIZE (1ull << 40)
#define SHM_MAX_MSG_SIZE (1u << 31)
#define SHM_MAX_UD_MSG 4096
#define SHM_PDATA_CONNECT 56
#define SHM_PDATA_ACCEPT 196
#define SHM_PDATA_REJECT 148
#define SHM_PDATA_DISCONNECT 148
#define SHM_PORT 1
/* receive-side slots: RC connections and incoming datagram links */
#define SHM_MAX_SLOTS (SHM_MAX_QP + SHM_NODE_MAX + 1)

/* REJECTED events' status, as openrdma_cm(3) lists them */
#define SHM_REJ_BACKLOG (-OPENRDMA_ECONNREFUSED)
#define SHM_REJ_CONSUMER (-OPENRDMA_EREJECTED)

/* The transport's parameters (openrdma-info -p), read at device_open. */
struct shm_params {
	bool cma;
	bool busy_poll;
	bool ptracer_any;
	uint64_t eager_max;
	uint32_t ring_entries;
	uint64_t ring_data;
	unsigned int rnr_scale;
	const char *allow_users;
};

/* A memfd segment: ours (fd kept to hand out read-only copies), or a
 * peer's mapped read-only (fd closed). */
struct shm_seg {
	void *addr;
	size_t size;
	int fd;
};

struct shm_ctx;

/* A socket the progress thread watches. */
struct shm_watch {
	int fd;
	void (*fn)(struct shm_ctx *ctx, struct shm_watch *w, uint32_t events);
	void *owner;
	bool dead;
	struct shm_watch *prev, *next; /* all live ones */
	struct shm_watch *reap_next;
};

enum shm_slot_kind {
	SHM_SLOT_FREE = 0,
	SHM_SLOT_CONN,
	SHM_SLOT_LINK,
};

/*
 * A receive-side slot: a ring some thread drains, one at a time.  seq is
 * odd while a thread drains it (one step at the take, one at the release):
 * a deregistration waits for the drains under way (shm_slots_wait()), so
 * a drain needs no other guard for the memory it writes.
 */
struct shm_slot {
	_Atomic int kind; /* enum shm_slot_kind */
	_Atomic uint32_t seq;
	void *obj;
};

struct shm_cmd;

struct shm_prog {
	pthread_t thread;
	bool started;
	int epfd;
	int wake_fd; /* eventfd: peers and our own threads */
	atomic_bool stop;
	/* an application thread ran the receive side since the last look */
	atomic_bool app_active;
	/* arms of the context's CQs so far, and as the thread last saw them:
	 * an application that arms may wait for a completion that only the
	 * thread would deliver */
	atomic_uint arms;
	unsigned int arms_seen;
	/* in a blind nap, which an arm cuts short */
	atomic_bool napping;
	atomic_uint ncmds; /* commands queued: a look without the lock */
	struct shm_slot *slots;
	_Atomic uint32_t hwm; /* slots in use are below it */
	pthread_mutex_t lock; /* slot allocation, commands */
	pthread_cond_t done;
	struct shm_cmd *cmds;
	struct shm_watch *watches; /* the progress thread's alone */
	struct shm_watch *reap;
};

/* Another context of this host, as its segment and eventfd show it. */
struct shm_peer {
	struct shm_peer *next;
	int ref;
	uint64_t incarnation;
	uint32_t node;
	pid_t pid;
	struct shm_seg seg;
	const struct shm_node_hdr *hdr;
	const struct shm_key *keys;
	uint32_t key_mask;
	const struct shm_qp_pub *qps;
	int wake_fd;
	bool cma; /* process_vm_readv/writev on it work */
	bool foreign; /* in another process */
};

/*
 * Sections that touch registered memory (our SQ's work, the receive side)
 * against deregistration: two reader counts, and a deregistration flips
 * the epoch and waits for the old one's readers, as RCU does.  Entering
 * never waits, so a section may begin under a queue's lock.
 */
struct shm_epoch {
	_Atomic uint32_t epoch;
	atomic_uint readers[2];
	pthread_mutex_t lock; /* one waiter at a time */
};

static inline int shm_epoch_enter(struct shm_epoch *e)
{
	uint32_t v;

	for (;;) {
		v = atomic_load(&e->epoch);
		atomic_fetch_add(&e->readers[v & 1], 1);
		if (atomic_load(&e->epoch) == v)
			return (int)(v & 1);
		atomic_fetch_sub(&e->readers[v & 1], 1);
	}
}

static inline void shm_epoch_exit(struct shm_epoch *e, int slot)
{
	atomic_fetch_sub_explicit(&e->readers[slot], 1, memory_order_release);
}

struct shm_ctx {
	struct openrdma_context base;
	struct shm_params par;
	struct sw_keymap *keymap;
	struct sw_peers *peers;
	struct sw_timer timer; /* RNR retries */
	uint32_t node;
	int node_fd;
	struct shm_watch *node_watch;
	struct shm_seg node_seg;
	struct shm_node_hdr *hdr;
	struct shm_key *keys;
	struct shm_qp_pub *qp_pub;
	pthread_mutex_t key_lock;
	/* read by peers through process_vm_readv to test their access */
	uint64_t cma_cookie;
	char cma_status[40];
	struct shm_prog prog;
	struct shm_epoch epoch;
	pthread_mutex_t qp_lock;
	struct shm_qp *qps[SHM_QPN_INDEX_MAX + 1];
	uint32_t qp_next;
	pthread_mutex_t peer_lock;
	struct shm_peer *peer_list;
	pthread_mutex_t conn_lock;
	struct shm_conn *conns; /* every attached RC connection */
	pthread_mutex_t link_lock;
	struct shm_link *links; /* datagram links, both directions */
	pthread_mutex_t cm_lock;
	_Atomic uint32_t pd_next;
	atomic_int count[SW_RES_NUM]; /* against the limits above */
};

struct shm_pd {
	struct openrdma_pd base;
	uint32_t id; /* published with keys and QPs */
};

struct shm_mr {
	struct openrdma_mr base;
};

struct shm_mw {
	struct openrdma_mw base;
};

struct shm_cq {
	struct openrdma_cq base;
	struct sw_cq sw;
};

struct shm_srq {
	struct openrdma_srq base;
	struct sw_srq sw;
};

struct shm_ah {
	struct openrdma_ah base;
	struct openrdma_ah_attr attr;
	bool local; /* names this host's port: deliverable */
};

/* One end of an RC connection: our segment's rings and the peer's. */
struct shm_conn {
	struct shm_conn *prev, *next; /* ctx->conns */
	atomic_int ref;
	struct shm_ctx *ctx;
	struct shm_qp *qp;
	uint32_t peer_qpn;
	struct shm_peer *peer;
	int sock;
	struct shm_watch *watch;
	uint32_t initiator; /* QPN of the side that asked for it */
	struct shm_seg own;
	struct shm_chan_hdr *own_hdr;
	struct shm_seg theirs;
	const struct shm_chan_hdr *peer_hdr;
	/* our requests: the QP's transmitter (qp->tx_want) */
	struct shm_ring_prod req_tx;
	/* the rest: whoever holds the slot */
	struct shm_ring_cons resp_rx; /* their answers */
	struct shm_ring_cons req_rx; /* their requests */
	struct shm_ring_prod resp_tx; /* our answers */
	/* transmitter: a payload streamed through the data ring */
	struct {
		bool on;
		uint32_t psn;
		uint64_t left;
		struct iovec iov[SW_MAX_SGE];
		struct sw_iov_cursor cur;
	} stream;
	atomic_bool streaming; /* the slot has work without incoming data */
	/* slot holder, initiator side: a READ coming back in RDATA */
	struct {
		bool on;
		uint32_t psn;
		int status;
		struct iovec iov[SW_MAX_SGE];
		struct sw_iov_cursor cur;
	} rd;
	/* slot holder, target side */
	bool ack_due; /* requests up to ack_psn executed, not yet said */
	uint32_t ack_psn;
	bool ack_hold; /* this pass holds acknowledgements back */
	bool answered; /* this pass wrote an answer */
	atomic_bool ack_held; /* one is, for the next pass (a hint) */
	bool dropping; /* after a NAK: requests are dropped ... */
	uint32_t drop_psn; /* ... until this one comes again */
	atomic_int slot; /* in prog.slots, -1 once closed */
	atomic_bool dead; /* the peer QP is gone: requests fail */
	atomic_bool cma; /* we may read and write the peer's memory */
};

struct shm_qp {
	struct openrdma_qp base;
	struct sw_qp sw;
	struct sw_pipe pipe; /* RC: the send queue, pipelined */
	struct shm_ctx *ctx;
	uint32_t pd_id;
	struct sw_timer_entry rnr_entry;
	/* RC: no answer for so long: the peer is lost */
	struct sw_timer_entry lost_entry;
	uint32_t lost_mark; /* the pipe's acked when it was armed */
	atomic_bool lost_armed;
	/* RC: one thread transmits at a time (the ring's one producer) */
	atomic_uint tx_want; /* calls of shm_tx() not yet served */
	/* the connection as the transmitter holds it, with a reference of
	 * its own, taken again when conn_gen moves (shm_tx.c) */
	struct shm_conn *tx_conn;
	uint32_t tx_gen;
	/* deliveries and handshakes holding the QP against destruction */
	atomic_uint users;
	/* reachable by peers: set at the first modify, once the core has
	 * filled the object */
	atomic_bool ready;
	pthread_mutex_t conn_lock;
	struct shm_conn *conn;
	atomic_uint conn_gen; /* moves with conn, under conn_lock */
	/* the RTR address vector names this host's port */
	atomic_bool av_local;
	/* RTS attributes the initiator's waits use */
	_Atomic uint8_t timeout;
	_Atomic uint8_t retry_cnt;
};

/* A datagram link: our ring to one peer context, or its ring to us. */
struct shm_link {
	struct shm_link *next; /* ctx->links */
	struct shm_ctx *ctx;
	struct shm_peer *peer; /* dropped when the link dies */
	uint32_t node;
	bool tx; /* ours to them */
	int sock;
	struct shm_watch *watch;
	struct shm_seg own;
	struct shm_seg theirs;
	/* UD QPs of this context share the ring; the segments go with the
	 * link's death under it */
	pthread_mutex_t tx_lock;
	struct shm_ring_prod prod;
	struct shm_ring_cons cons;
	int slot;
	atomic_bool dead;
};

static inline struct shm_ctx *to_shm_ctx(struct openrdma_context *ctx)
{
	return openrdma_container_of(ctx, struct shm_ctx, base);
}

static inline struct shm_pd *to_shm_pd(struct openrdma_pd *pd)
{
	return openrdma_container_of(pd, struct shm_pd, base);
}

static inline struct shm_cq *to_shm_cq(struct openrdma_cq *cq)
{
	return openrdma_container_of(cq, struct shm_cq, base);
}

static inline struct shm_srq *to_shm_srq(struct openrdma_srq *srq)
{
	return openrdma_container_of(srq, struct shm_srq, base);
}

static inline struct shm_ah *to_shm_ah(struct openrdma_ah *ah)
{
	return openrdma_container_of(ah, struct shm_ah, base);
}

static inline struct shm_qp *to_shm_qp(struct openrdma_qp *qp)
{
	return openrdma_container_of(qp, struct shm_qp, base);
}

static inline struct shm_qp *sw_to_shm_qp(struct sw_qp *sqp)
{
	return openrdma_container_of(sqp, struct shm_qp, sw);
}

/* shm_ctx.c: contexts, limits, port */
int shm_device_open(struct openrdma_device *dev,
		    struct openrdma_context **ctx_out);
void shm_context_close(struct openrdma_context *ctx);
int shm_device_query(struct openrdma_context *ctx,
		     struct openrdma_device_attr *attr);
int shm_port_query(struct openrdma_context *ctx, uint8_t port_num,
		   struct openrdma_port_attr *attr);
int shm_gid_query(struct openrdma_context *ctx, uint8_t port_num, int index,
		  union openrdma_gid *gid);
int shm_res_get(struct openrdma_context *ctx, enum sw_res res);
void shm_res_put(struct openrdma_context *ctx, enum sw_res res);
/* The port's address (127.0.0.1, port 0) and GID. */
void shm_port_addr(struct sockaddr_storage *addr);
void shm_port_gid(union openrdma_gid *gid);
bool shm_ah_attr_local(const struct openrdma_ah_attr *attr);

/* shm_params.c: the parameters and what they allow */
void shm_params_read(struct shm_params *par);
/* Whether a process of uid may talk to us (shm.allow_users). */
bool shm_uid_allowed(const struct shm_ctx *sctx, uid_t uid);
/*
 * How RDMA data moves for this process: "single copy (cma)", or ring
 * copies and why (shown in fw_ver by openrdma-info).  *possible: whether
 * a connection may still find process_vm_readv permitted.
 */
const char *shm_cma_status(const struct shm_params *par, bool *possible);

/* shm_seg.c: memfd segments */
int shm_seg_create(const char *name, size_t size, struct shm_seg *seg);
/* A read-only descriptor of our segment, to hand to a peer. */
int shm_seg_ro_fd(const struct shm_seg *seg);
/* Maps a peer's segment (fd consumed) read-only; its size must be within
 * [min, max] and it must be sealed against shrinking. */
int shm_seg_map_peer(int fd, size_t min, size_t max, struct shm_seg *seg);
void shm_seg_destroy(struct shm_seg *seg);
/* Checks a peer's channel header against its segment. */
int shm_chan_check(const struct shm_chan_hdr *hdr, size_t size,
		   enum shm_seg_kind kind, uint32_t nring);
/* Lays out a channel segment: rings of entries x data bytes each. */
int shm_chan_create(const char *name, enum shm_seg_kind kind, uint32_t nring,
		    uint32_t entries, uint64_t data, struct shm_seg *seg);
void shm_chan_prod(struct shm_chan_hdr *own, int ring,
		   const struct shm_chan_hdr *peer, int head,
		   struct shm_ring_prod *p);
/* Consumer over a peer's ring (size: its segment's), after checking the
 * ring's place in it. */
int shm_chan_cons(const struct shm_chan_hdr *peer, size_t size, int ring,
		  struct shm_chan_hdr *own, int head, struct shm_ring_cons *c);

/* shm_sock.c: the rendezvous sockets */
enum shm_sock_kind {
	SHM_SOCK_NODE,
	SHM_SOCK_PORT,
};
/* Binds and listens; -OPENRDMA_EADDRINUSE if the name is taken. */
int shm_sock_listen(enum shm_sock_kind kind, uint32_t num, int *fd_out);
/* Connects; -OPENRDMA_ECONNREFUSED if nobody listens. */
int shm_sock_connect(enum shm_sock_kind kind, uint32_t num, int *fd_out);
int shm_sock_send(int fd, const void *msg, size_t len, const int *fds,
		  int nfds);
/*
 * Receives one message (MSG_DONTWAIT unless wait_ms > 0); returns its
 * length, 0 at end of stream, or a negative code.  Up to *nfds descriptors
 * are returned (the count in *nfds), any further ones closed.
 */
int shm_sock_recv(int fd, void *buf, size_t len, int *fds, int *nfds,
		  int wait_ms);
void shm_msg_init(struct shm_msg_hdr *hdr, enum shm_msg_type type);
/* The message's type if it is one of ours of at least min bytes, or -1. */
int shm_msg_type(const void *buf, int len, size_t min);
/* The peer's uid is allowed; its pid in *pid_out. */
int shm_sock_peer_check(const struct shm_ctx *sctx, int fd, pid_t *pid_out);
void shm_fds_close(int *fds, int n);

/* shm_prog.c: the progress thread and the receive side */
int shm_prog_start(struct shm_ctx *sctx);
void shm_prog_stop(struct shm_ctx *sctx);
bool shm_prog_on_thread(struct shm_ctx *sctx);
/* Runs fn(arg) on the progress thread and waits for it.  Call with no
 * lock held. */
void shm_prog_run(struct shm_ctx *sctx, void (*fn)(void *arg), void *arg);
/* On the progress thread: watch fd (readable, hang-up). */
struct shm_watch *shm_watch_add(struct shm_ctx *sctx, int fd,
				void (*fn)(struct shm_ctx *, struct shm_watch *,
					   uint32_t),
				void *owner);
/* On the progress thread: stop watching, close the fd, free later. */
void shm_watch_del(struct shm_ctx *sctx, struct shm_watch *w);
int shm_slot_add(struct shm_ctx *sctx, enum shm_slot_kind kind, void *obj);
/* Deactivates a slot and waits for the thread draining it. */
void shm_slot_del(struct shm_ctx *sctx, int slot);
/* Takes a slot to drain it, unless another thread does; then releases it. */
bool shm_slot_take(struct shm_slot *s);
void shm_slot_release(struct shm_slot *s);
/* Returns once every drain under way at the call has ended.  Call after
 * the epoch moved on (shm_mem.c): a drain that begins later sees what
 * changed before. */
void shm_slots_wait(struct shm_ctx *sctx);
/* One pass over the receive side; returns the messages handled. */
int shm_prog_pass(struct shm_ctx *sctx);
/* An application thread's pass (polling an empty CQ). */
int shm_prog_poll(struct shm_ctx *sctx);
/* The application armed a CQ: it may block. */
void shm_prog_arm_hint(struct shm_ctx *sctx);
/* Wakes the progress thread (to look at the command queue, or a hint). */
void shm_prog_wake(struct shm_ctx *sctx);
/* Tells a peer's progress thread about new requests if it sleeps. */
void shm_peer_kick(const struct shm_peer *peer);

/* shm_peer.c: other contexts of the host */
/* The peer whose node segment and eventfd these are (fds consumed). */
int shm_peer_get(struct shm_ctx *sctx, int node_fd, int wake_fd, pid_t pid,
		 struct shm_peer **peer_out);
void shm_peer_put(struct shm_ctx *sctx, struct shm_peer *peer);
/* Descriptors describing us for a handshake: node segment, wake eventfd. */
int shm_own_fds(struct shm_ctx *sctx, int fds[2]);

/* shm_keytab.c: the published key table */
void shm_keytab_publish(struct shm_ctx *sctx, uint32_t key,
			const struct shm_pd *pd, uint64_t va, uint64_t len,
			unsigned int access);
/* Removes a key; returns once no initiator copies through it. */
void shm_keytab_unpublish(struct shm_ctx *sctx, uint32_t key);

/* A key as a peer published it, checked for one access. */
struct shm_key_grant {
	uint64_t va; /* target address of the first byte */
	uint32_t seq;
	const struct shm_key *slot;
};
/*
 * Looks key up in peer's table and checks pd, rights and bounds of
 * [addr, addr + len).  False: not found or not allowed (the target then
 * decides).
 */
bool shm_keytab_grant(const struct shm_peer *peer, uint32_t key, uint32_t pd,
		      uint64_t addr, uint64_t len, unsigned int access,
		      struct shm_key_grant *g);
/* Still the same entry (after announcing the access in flight)? */
bool shm_keytab_still(const struct shm_key_grant *g);

/* shm_mem.c: PDs, MRs, MWs, AHs */
int shm_pd_alloc(struct openrdma_context *ctx, struct openrdma_pd **pd_out);
int shm_pd_dealloc(struct openrdma_pd *pd);
int shm_mr_reg(struct openrdma_pd *pd, void *addr, size_t length, int access,
	       struct openrdma_mr **mr_out);
int shm_mr_rereg(struct openrdma_mr *mr, int flags, struct openrdma_pd *pd,
		 void *addr, size_t length, int access);
int shm_mr_dereg(struct openrdma_mr *mr);
int shm_mw_alloc(struct openrdma_pd *pd, enum openrdma_mw_type type,
		 struct openrdma_mw **mw_out);
int shm_mw_dealloc(struct openrdma_mw *mw);
int shm_ah_create(struct openrdma_pd *pd, struct openrdma_ah_attr *attr,
		  struct openrdma_ah **ah_out);
int shm_ah_destroy(struct openrdma_ah *ah);
int shm_ah_attr_from_wc(struct openrdma_context *ctx, uint8_t port_num,
			const struct openrdma_wc *wc,
			const struct openrdma_grh *grh,
			struct openrdma_ah_attr *attr);

/* shm_cq.c: CQs and SRQs */
int shm_cq_create(struct openrdma_context *ctx, int cqe, int comp_vector,
		  struct openrdma_cq **cq_out);
int shm_cq_destroy(struct openrdma_cq *cq);
int shm_cq_poll(struct openrdma_cq *cq, int num_entries,
		struct openrdma_wc *wc);
int shm_cq_req_notify(struct openrdma_cq *cq, int solicited_only);
int shm_cq_resize(struct openrdma_cq *cq, int cqe);
int shm_srq_create(struct openrdma_pd *pd,
		   struct openrdma_srq_init_attr *init_attr,
		   struct openrdma_srq **srq_out);
int shm_srq_destroy(struct openrdma_srq *srq);
int shm_srq_modify(struct openrdma_srq *srq, struct openrdma_srq_attr *attr,
		   int attr_mask);
int shm_srq_post_recv(struct openrdma_srq *srq, struct openrdma_recv_wr *wr,
		      struct openrdma_recv_wr **bad_wr);
int shm_srq_query(struct openrdma_srq *srq, struct openrdma_srq_attr *attr);

/* shm_qp.c: QPs */
int shm_qp_create(struct openrdma_pd *pd,
		  struct openrdma_qp_init_attr *init_attr,
		  struct openrdma_qp **qp_out);
int shm_qp_destroy(struct openrdma_qp *qp);
int shm_qp_modify(struct openrdma_qp *qp, struct openrdma_qp_attr *attr,
		  int attr_mask);
int shm_qp_query(struct openrdma_qp *qp, struct openrdma_qp_attr *attr,
		 int attr_mask, struct openrdma_qp_init_attr *init_attr);
int shm_qp_post_send(struct openrdma_qp *qp, struct openrdma_send_wr *wr,
		     struct openrdma_send_wr **bad_wr);
int shm_qp_post_recv(struct openrdma_qp *qp, struct openrdma_recv_wr *wr,
		     struct openrdma_recv_wr **bad_wr);
/* The QP numbered qpn in this context, held until shm_qp_put(). */
struct shm_qp *shm_qp_get(struct shm_ctx *sctx, uint32_t qpn);
void shm_qp_put(struct shm_qp *qp);
/* Writes the QP's state where the initiator's direct RDMA reads it. */
void shm_qp_publish(struct shm_qp *qp);
/* Whether send or receive requests are outstanding. */
bool shm_qp_busy(struct shm_qp *qp, bool *sends);

/* shm_conn.c: RC connections */
/* Active side: connects qp to dest_qpn through dest's node socket. */
int shm_conn_attach(struct shm_qp *qp, uint32_t dest_qpn);
/*
 * Passive side, on the progress thread: an ATTACH message on an accepted
 * node socket.  Takes the descriptors and the watch (which becomes the
 * connection's, or is deleted).
 */
void shm_conn_accept(struct shm_ctx *sctx, struct shm_watch *w, pid_t pid,
		     const struct shm_msg_attach *msg, int *fds, int nfds);
/* Tears the QP's connection down (QP reset or destroyed), once no
 * thread drains it; false if it had none. */
bool shm_conn_detach(struct shm_qp *qp);
/* The QP's connection, referenced; NULL if none. */
struct shm_conn *shm_conn_get(struct shm_qp *qp);
/* The same, and the conn_gen it goes with. */
struct shm_conn *shm_conn_get_gen(struct shm_qp *qp, uint32_t *gen);
void shm_conn_put(struct shm_conn *conn);
void shm_conn_rx_settle(struct shm_qp *qp);
/* Drains what the peer wrote to qp's connection, waiting for a thread that
 * holds its ring: before the QP dies of a DREQ or DETACH. */
void shm_conn_rx_drain(struct shm_qp *qp);
/* Drains the peer's requests; returns how many were handled. */
int shm_conn_rx(struct shm_conn *conn);
/* Waits for a key's accesses in flight by the initiators (dereg). */
void shm_conn_key_quiesce(struct shm_ctx *sctx, uint32_t key);

/* shm_cma.c: cross-memory attach */
/* Copies between our iovecs and the peer's (same total length). */
int shm_cma_rw(pid_t pid, bool to_peer, const struct iovec *liov, int lcnt,
	       const struct iovec *riov, int rcnt);
/* Copies len bytes between buf and the peer's iovecs, from a cursor
 * (*idx, *off) that moves on. */
int shm_cma_copy(pid_t pid, bool to_peer, void *buf, size_t len,
		 const struct shm_iov *iov, int niov, int *idx, uint64_t *off);

/* Waiting with growing politeness: spin, yield, then short sleeps. */
struct shm_backoff {
	uint32_t n;
	uint64_t deadline; /* CLOCK_MONOTONIC ns; 0: none */
};
void shm_backoff_init(struct shm_backoff *b, uint64_t timeout_ns);
/* One round; -OPENRDMA_ETIMEDOUT once the deadline has passed. */
int shm_backoff(struct shm_backoff *b);

/* shm_rx.c: the target's side of requests */
/* Executes the element at the head; 1: it must wait (QP not in RTR). */
int shm_rx_request(struct shm_conn *conn, const struct shm_elem *e);
/* The ACK for the requests executed and not yet answered, if any. */
int shm_rx_ack(struct shm_conn *conn);

/* Sends an answer (the slot's holder); waits for room, never drops. */
int shm_answer(struct shm_conn *conn, const struct shm_elem *tmpl);

/* shm_exec.c: UD sends, and the toolkit's operations */
extern const struct sw_qp_ops shm_sw_qp_ops;

/* shm_tx.c: the RC initiator */
/* Transmits what the send queue holds, as far as the ring takes it;
 * never waits.  Any thread. */
void shm_tx(struct shm_qp *qp);
/* The peer cannot be reached: what is outstanding fails. */
void shm_tx_lost(struct shm_qp *qp, enum openrdma_wc_status status, int event);
/* A request's answer (the slot's holder); returns the messages taken. */
int shm_tx_answers(struct shm_conn *conn);
void shm_tx_lost_fire(struct sw_timer_entry *entry);

/* shm_link.c: datagrams */
int shm_link_send(struct shm_ctx *sctx, uint32_t node,
		  const struct shm_elem *tmpl, const struct iovec *iov,
		  int iovcnt, uint64_t len);
/* As shm_conn_accept(), for a LINK message. */
void shm_link_accept(struct shm_ctx *sctx, struct shm_watch *w, pid_t pid,
		     int *fds, int nfds);
int shm_link_rx(struct shm_link *link);
void shm_links_close(struct shm_ctx *sctx);

/* shm_node.c: the context's node socket */
int shm_node_open(struct shm_ctx *sctx);
void shm_node_close(struct shm_ctx *sctx);

/* shm_cm.c: the connection manager */
int shm_cm_id_create(struct openrdma_context *ctx, enum openrdma_port_space ps,
		     struct openrdma_cm_id **id_out);
int shm_cm_id_destroy(struct openrdma_cm_id *id);
int shm_cm_listen(struct openrdma_cm_id *id, const struct sockaddr *addr,
		  int backlog);
int shm_cm_connect(struct openrdma_cm_id *id, struct openrdma_qp *qp,
		   const struct sockaddr *dst,
		   const struct openrdma_conn_param *param);
int shm_cm_accept(struct openrdma_cm_id *id, struct openrdma_qp *qp,
		  const struct openrdma_conn_param *param);
int shm_cm_reject(struct openrdma_cm_id *id, const void *private_data,
		  uint8_t private_data_len);
int shm_cm_disconnect(struct openrdma_cm_id *id, const void *private_data,
		      uint8_t private_data_len);
int shm_cm_local_addr(struct openrdma_cm_id *id, struct sockaddr_storage *addr);
int shm_cm_peer_addr(struct openrdma_cm_id *id, struct sockaddr_storage *addr);

/* Timing */
/* IB's local ACK timeout (4.096 us << timeout) in ns; 0 means none. */
static inline uint64_t shm_ib_timeout_ns(uint8_t timeout)
{
	return timeout ? 4096ull << (timeout > 31 ? 31 : timeout) : 0;
}

#endif /* TRANSPORTS_SHM_SHM_H */
