/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The IT-API 2.1 front end: the objects behind the it_*_handle_t handles,
 * the translation of OpenRDMA codes into IT_ERR_* statuses, and the
 * helpers its files share.  it_api(7) and the it_*(3) pages describe the
 * behaviour; this header is the contract between the files of api/itapi.
 *
 * Locks, outer to inner:
 *   ia->lock (object lists, control-path state)
 *   -> ia->cm_lock (CM ids and endpoint connection states)
 *   -> itapi_cn_lock (the process's pending connection requests)
 *   -> ia->async_lock (the IA's async EVDs; recursive)
 *   -> the event engine's locks -> ia->key_lock, ep->sq_lock, the
 *      receive-slot locks.
 * An SEVD's tables of endpoints are under its engine lock, which the
 * converter runs under.  ep->sq_lock and the receive-slot locks are
 * spinlocks (core_spin) over short data-path sections; a converter may
 * take ia->key_lock, and a post makes its system calls, if any, under
 * sq_lock.
 * The engine's threads (the dispatcher, which runs the converters and the
 * CM handler, and the callback pool) never take ia->lock.  So the calls
 * that wait for those threads (core_evd_free, the unbind calls,
 * core_disp_unwatch, and openrdma_cm_id_destroy, which waits for the CM
 * handler) may be made under ia->lock, but never under ia->cm_lock or a
 * lock the converters take.
 */
#ifndef API_ITAPI_ITAPI_H
#define API_ITAPI_ITAPI_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <uthash.h>

/* the front end is written to the newest signatures and member names */
#define ITAPI_ENABLE_V21_BINDINGS
#include <it_api.h>
#include <openrdma/log.h>
#include <openrdma/verbs.h>

#include "core/evd/evd.h"
#include "core/lock.h"
#include "core/obj.h"

#define ITAPI_LOG "itapi"

/* Argument errors are logged at debug level with the argument's name. */
#define itapi_arg_err(fn, arg, fmt, ...) \
	openrdma_dbg(ITAPI_LOG, fn ": arg " arg ": " fmt, ##__VA_ARGS__)

/* The newest IT-API version the front end implements. */
#define ITAPI_MAJOR 2
#define ITAPI_MINOR 1

/*
 * Segments a work request may carry: the SGE array lives on the stack of
 * the post calls, which never allocate.  Endpoints and SRQs ask the device
 * for at most this many.
 */
#define ITAPI_MAX_SGE 32

/* ------------------------------------------------------------------ */
/* Handles                                                            */
/* ------------------------------------------------------------------ */

/* A live handle's tag: "IT" and its it_handle_type_enum_t. */
#define ITAPI_MAGIC(type) (0x49540000u | (uint32_t)(type))

struct itapi_ia;

/*
 * First member of every object, so that validating a handle, reading its
 * type and its consumer context are one access each.  'users' counts the
 * objects and bindings that depend on this one; a free that finds it
 * non-zero reports the object's *_BUSY status.
 */
struct itapi_obj {
	uint32_t magic; /* ITAPI_MAGIC(type) while live, 0 once freed */
	it_handle_type_enum_t type;
	struct itapi_ia *ia; /* the owning IA (itself for an IA) */
	atomic_uint users;
	it_context_t context;
	bool has_context;
	struct itapi_obj *prev, *next; /* ia->objs; ia->lock */
};

/*
 * Whether h may be read.  Debug builds keep every live handle in the
 * core's table (keyed by address only), so that a freed one is rejected
 * before its memory is touched; release builds trust the tag.
 */
static inline bool itapi_obj_live(const void *h)
{
	return core_handle_live((const struct openrdma_obj *)h);
}

static inline bool itapi_valid(const void *h, it_handle_type_enum_t type)
{
	const struct itapi_obj *obj = h;

	return obj && itapi_obj_live(obj) && obj->magic == ITAPI_MAGIC(type);
}

/*
 * Registers a new object (its fields other than the header already set)
 * and, for anything but an IA, lists it on its IA.  -OPENRDMA_ENOMEM when
 * a debug build cannot record the handle.
 */
int itapi_obj_init(struct itapi_obj *obj, it_handle_type_enum_t type,
		   struct itapi_ia *ia);
/* Unlists the object and turns its handle dead, before its memory goes. */
void itapi_obj_fini(struct itapi_obj *obj);

static inline void itapi_obj_get(struct itapi_obj *obj)
{
	atomic_fetch_add_explicit(&obj->users, 1, memory_order_relaxed);
}

static inline void itapi_obj_put(struct itapi_obj *obj)
{
	atomic_fetch_sub_explicit(&obj->users, 1, memory_order_release);
}

static inline unsigned int itapi_obj_users(const struct itapi_obj *obj)
{
	return atomic_load_explicit(&obj->users, memory_order_acquire);
}

/*
 * The one translation of OpenRDMA codes into IT-API statuses.  'einval'
 * is what -OPENRDMA_EINVAL (and -OPENRDMA_ESTATE, -OPENRDMA_EBADHANDLE)
 * mean to the caller: the argument or state the call checked last.
 */
it_status_t itapi_status(int err, it_status_t einval);

/* ------------------------------------------------------------------ */
/* Interface adapters                                                 */
/* ------------------------------------------------------------------ */

struct itapi_evd;
struct itapi_ep;
struct itapi_listen;
struct itapi_rmr;

struct itapi_ia {
	struct itapi_obj obj;
	struct openrdma_context *ctx;
	struct openrdma_device_attr dev; /* cached at create */
	size_t num_spigots; /* ports; spigot n is port n + 1 */
	struct openrdma_port_attr *ports; /* cached at create */
	uint32_t minor_version; /* the consumer's */
	char name[IT_INTERFACE_NAME_SIZE];
	it_transport_type_t transport;

	/* every object of the IA, in creation order */
	pthread_mutex_t lock;
	struct itapi_obj *objs;

	/* the async SEVDs; recursive, see itapi_async_post() */
	pthread_mutex_t async_lock;
	struct itapi_evd *aff_evd;
	struct itapi_evd *unaff_evd;

	/*
	 * The CM: one channel for every CM id of the IA, read by the
	 * dispatcher thread (cm.c).  cm_lock guards the id table, the
	 * listen points and the connection state of the endpoints.
	 */
	pthread_mutex_t cm_lock;
	struct openrdma_cm_channel *cm_ch;
	struct core_disp_watch *cm_watch;
	struct itapi_cm_ref *cm_refs; /* by CM id */
	struct itapi_listen *listens;

	/* RMRs by address and, linked wide ones, by key; a leaf lock */
	pthread_mutex_t key_lock;
	struct itapi_rmr *rmrs;
	struct itapi_rmr *rmr_keys;

	/* hidden objects of UD service requests (ud_svc.c), made lazily */
	struct openrdma_pd *svc_pd;
	struct openrdma_cq *svc_cq;
};

static inline struct itapi_ia *to_ia(it_ia_handle_t h)
{
	return (struct itapi_ia *)h;
}

/* spigot_id names a port of the IA. */
bool itapi_spigot_valid(const struct itapi_ia *ia, size_t spigot_id);
/* Largest private data a CM call carries to an IT-API peer. */
size_t itapi_pdata_max(const struct itapi_ia *ia, uint16_t dev_max);

/* ------------------------------------------------------------------ */
/* Addresses and paths (addr.c)                                       */
/* ------------------------------------------------------------------ */

/* The socket address a path leads to, with the given port (host order). */
int itapi_path_to_sockaddr(const struct itapi_ia *ia, const it_path_t *path,
			   uint16_t port, struct sockaddr_storage *ss);
/* A path to the host of sa from the IA's spigot. */
void itapi_path_from_sockaddr(const struct itapi_ia *ia, size_t spigot_id,
			      const struct sockaddr *sa, it_path_t *path);
/* The address vector of a path, for an address handle. */
int itapi_path_to_ah_attr(const struct itapi_ia *ia, const it_path_t *path,
			  struct openrdma_ah_attr *attr);
/* A path back to the sender of a UD datagram (grh: NULL if none). */
void itapi_path_from_recv(const struct itapi_ia *ia, size_t spigot_id,
			  const struct openrdma_wc *wc,
			  const struct openrdma_grh *grh, it_path_t *path);
/*
 * The port number of a software port (0 elsewhere, and on transports with
 * one port per host), and setting it in a path: datagrams need it.
 */
uint16_t itapi_spigot_port(const struct itapi_ia *ia, size_t spigot_id);
void itapi_path_set_port(const struct itapi_ia *ia, it_path_t *path,
			 uint16_t port);
void itapi_net_addr_from_sockaddr(const struct sockaddr *sa, it_net_addr_t *na);
/* The port of a connection qualifier (host order). */
int itapi_conn_qual_port(const it_conn_qual_t *cq, uint16_t *port_out);

/* ------------------------------------------------------------------ */
/* Protection zones, memory                                           */
/* ------------------------------------------------------------------ */

struct itapi_pz {
	struct itapi_obj obj;
	struct openrdma_pd *pd;
};

struct itapi_lmr {
	struct itapi_obj obj;
	struct itapi_pz *pz;
	/* NULL while an LMR made by it_lmr_create_unlinked is unlinked */
	struct openrdma_mr *mr;
	void *addr;
	it_length_t length;
	it_addr_mode_t addr_mode;
	it_mem_priv_t privs;
	it_lmr_flag_t flags;
	uint32_t shared_id;
	bool linkable; /* made by it_lmr_create_unlinked */
	size_t iobl_num_elts;
};

struct itapi_rmr {
	struct itapi_obj obj;
	struct itapi_pz *pz;
	struct openrdma_mw *mw;
	it_rmr_type_t type; /* NARROW or WIDE */
	/*
	 * The last link, kept under ia->key_lock: completions that report a
	 * failed link or a remote invalidation change it from the engine's
	 * threads, finding the RMR by address (ptr_hh) or key (key_hh).
	 */
	struct itapi_lmr *lmr; /* holds a user on it until unlinked */
	void *addr;
	it_length_t length;
	it_mem_priv_t privs;
	it_addr_mode_t addr_mode;
	uint32_t rkey; /* the key of the last link */
	bool linked;
	bool keyed; /* in ia->rmr_keys */
	const void *self; /* the key of ptr_hh */
	UT_hash_handle ptr_hh; /* ia->rmrs */
	UT_hash_handle key_hh; /* ia->rmr_keys, wide RMRs while linked */
};

/* OPENRDMA_ACCESS_* for IT privileges; -1 for unknown bits. */
int itapi_privs_to_access(it_mem_priv_t privs);
/* The virtual address a triplet of a live LMR starts at, whatever the
 * LMR's addressing mode. */
static inline uint64_t itapi_triplet_start(const it_lmr_triplet_t *t)
{
	const struct itapi_lmr *lmr = (const struct itapi_lmr *)t->lmr;

	return lmr->addr_mode == IT_ADDR_MODE_RELATIVE ?
		       (uint64_t)(uintptr_t)lmr->addr + t->addr.rel :
		       (uint64_t)(uintptr_t)t->addr.abs;
}

/* Whether a triplet of a live LMR lies inside the LMR. */
static inline bool itapi_triplet_inside(const it_lmr_triplet_t *t)
{
	const struct itapi_lmr *lmr = (const struct itapi_lmr *)t->lmr;
	uint64_t base = (uint64_t)(uintptr_t)lmr->addr;
	uint64_t start = itapi_triplet_start(t), end = start + t->length;

	return start >= base && end >= start && end <= base + lmr->length;
}

/*
 * Marks the wide RMR of key unlinked after a remote invalidation; returns
 * its handle, or NULL if no RMR of the IA has the key.
 */
it_rmr_handle_t itapi_rmr_invalidated(struct itapi_ia *ia, uint32_t rkey);
/*
 * The link of rmr (a pointer that may be stale: it is looked up) completed
 * in error: the RMR is not linked.
 */
void itapi_rmr_link_failed(struct itapi_ia *ia, const void *rmr);

/* ------------------------------------------------------------------ */
/* Event dispatchers (evd.c)                                          */
/* ------------------------------------------------------------------ */

struct itapi_evd {
	struct itapi_obj obj;
	struct core_evd *core;
	it_event_type_t stream; /* the stream base, or the AEVD stream */
	it_evd_flags_t flags;
	size_t queue_size;
	size_t threshold;
	struct itapi_evd *aevd; /* ia->lock */
	int fd;
	bool enabled;
	/* set (arg first) by attach, cleared by detach; ia->lock */
	_Atomic(it_evd_callback_rtn_t) cb;
	void *cb_arg;

	/*
	 * DTO stream: one CQ (and its channel) that every endpoint naming
	 * this SEVD shares, made by the first one.  ia->lock.
	 */
	struct openrdma_comp_channel *chan;
	struct openrdma_cq *cq;
	size_t cq_need; /* work requests of the endpoints that use the CQ */
	/*
	 * Endpoints by QP number, read by the converter; under the engine
	 * lock of the EVD (core_evd_locked()).
	 */
	struct itapi_ep *req_eps;
	struct itapi_ep *recv_eps;
	/* the last endpoint each table gave: completions come in runs */
	struct itapi_ep *req_last, *recv_last;
};

static inline struct itapi_evd *to_evd(it_evd_handle_t h)
{
	return (struct itapi_evd *)h;
}

/* The SEVD's stream is base. */
static inline bool itapi_evd_is(const struct itapi_evd *evd,
				it_event_type_t base)
{
	return itapi_valid(evd, IT_HANDLE_TYPE_EVD) && evd->stream == base;
}

/*
 * Gives a DTO SEVD the CQ its endpoints share, made or grown to hold
 * 'need' more work requests; ia->lock held.
 */
int itapi_evd_cq_reserve(struct itapi_evd *evd, size_t need);
/* Undoes a reservation that was not used. */
void itapi_evd_cq_release(struct itapi_evd *evd, size_t need);
/*
 * Queues an event the front end makes (CM, link completions): subject to
 * the EVD's overflow mode.  The EVD must be kept alive by the caller.
 */
int itapi_evd_enqueue(struct itapi_evd *evd, it_event_t *event);
/*
 * Posts an IT_ASYNC_* event to the IA's affiliated or unaffiliated SEVD,
 * if it has one.
 */
void itapi_async_post(struct itapi_ia *ia, it_event_t *event);
/* Frees an EVD whose users are gone (it_evd_free, it_ia_free). */
void itapi_evd_destroy(struct itapi_evd *evd);

/* ------------------------------------------------------------------ */
/* Shared receive queues (srq.c) and receive slots                    */
/* ------------------------------------------------------------------ */

/*
 * Receive work requests in flight on an SRQ, whose completions come in
 * any order: the wr_id of each names a slot that keeps the consumer's
 * cookie, so that wr_id never needs the cookie's 64 bits.  A free list of
 * slot numbers.  (An endpoint's own receive queue is a ring: struct
 * itapi_ep.)
 */
struct itapi_rslots {
	struct core_spin lock;
	uint32_t num;
	uint32_t nfree;
	uint32_t *free; /* num entries, nfree of them valid */
	it_dto_cookie_t *cookie;
	uint8_t *busy;
};

#define ITAPI_WRID_RECV (1ull << 63)

int itapi_rslots_init(struct itapi_rslots *rs, uint32_t num);
/* (Taking and freeing a slot are post.c's, inline on the data path.) */
void itapi_rslots_fini(struct itapi_rslots *rs);

struct itapi_srq {
	struct itapi_obj obj;
	struct itapi_pz *pz;
	struct openrdma_srq *srq;
	size_t max_recv_segs;
	size_t max_recv_dtos;
	size_t low_watermark;
	struct itapi_rslots slots;
};

void itapi_srq_destroy(struct itapi_srq *srq);

/* ------------------------------------------------------------------ */
/* Endpoints (ep.c)                                                   */
/* ------------------------------------------------------------------ */

/* A CM id and the object it reports for: an entry of ia->cm_refs. */
struct itapi_cm_ref {
	struct openrdma_cm_id *id; /* key */
	struct itapi_obj *owner; /* EP, listen point or UD service request */
	UT_hash_handle hh;
};

/* What a send-queue work request was, for its completion (post.c). */
struct itapi_swr {
	uint64_t seq; /* the wr_id; a mismatch means the slot moved on */
	it_dto_cookie_t cookie;
	it_event_type_t event;
	uint32_t length; /* bytes the request moves */
	bool signaled; /* the consumer asked for the completion */
	struct itapi_obj *mem; /* the LMR or RMR of a link or unlink */
};

struct itapi_ep {
	struct itapi_obj obj;
	struct itapi_pz *pz;
	struct itapi_evd *req_evd;
	struct itapi_evd *recv_evd;
	struct itapi_evd *conn_evd; /* RC only */
	struct itapi_srq *srq;
	struct openrdma_qp *qp;
	uint32_t qpn;
	it_transport_service_type_t service;
	it_ep_attributes_t attr; /* granted */
	size_t spigot_id;
	size_t cq_req_need, cq_recv_need; /* reserved on the SEVDs' CQs */

	/*
	 * Send queue: a ring of ssize slots; wr_id is the sequence number
	 * of the post.  Completions of one queue come in order, so the one
	 * for sequence n retires every slot before it (unsignaled ones
	 * included).  sq_lock serializes posts, which keeps sequence and
	 * queue order the same.
	 */
	struct core_spin sq_lock;
	struct itapi_swr *sring;
	uint32_t inline_max; /* granted; 0: nothing goes inline */
	uint32_t ssize; /* a power of two */
	uint32_t sauto; /* every sauto-th request is signaled for the ring;
			 * a power of two */
	uint64_t shead; /* next sequence number; sq_lock */
	_Atomic uint64_t stail; /* oldest sequence not retired */

	/*
	 * Own receive queue (no SRQ): a ring like the send queue's, as a
	 * QP's receives complete in the order they were posted (flushed
	 * ones too).  wr_id is ITAPI_WRID_RECV | the post's sequence
	 * number, and its completion retires it.  rq_lock serializes posts;
	 * rhead is published before the post, so that a converter that
	 * sees a completion sees its cookie.  A reset retires everything
	 * posted (rtail = rhead): a completion older than rtail is stale.
	 */
	struct core_spin rq_lock;
	_Atomic it_dto_cookie_t *rcookie; /* relaxed: the ring orders it */
	uint32_t rsize; /* a power of two */
	uint32_t rnum; /* receives that may be outstanding: granted */
	_Atomic uint64_t rhead; /* next sequence number */
	_Atomic uint64_t rtail; /* oldest sequence not retired */
	uint8_t *grh; /* UD: OPENRDMA_GRH_LEN bytes per ring slot */
	struct openrdma_mr *grh_mr;
	uint32_t qkey; /* UD */

	/* connection (cm.c); ia->cm_lock */
	struct itapi_cm_ref cm;
	_Atomic int state; /* it_ep_state_rc_t or it_ep_state_ud_t */
	it_path_t path;
	uint32_t ird, ord; /* negotiated */

	UT_hash_handle req_hh; /* req_evd->req_eps, by qpn */
	UT_hash_handle recv_hh; /* recv_evd->recv_eps, by qpn */
};

static inline struct itapi_ep *to_ep(it_ep_handle_t h)
{
	return (struct itapi_ep *)h;
}

/* Frees an endpoint in any state (it_ep_free, it_ia_free). */
void itapi_ep_destroy(struct itapi_ep *ep);
/* Moves the QP to RESET then INIT, as a new endpoint's. */
int itapi_ep_qp_init(struct itapi_ep *ep);
/*
 * Destroys a QP, waiting out the async events that hold it while the
 * dispatcher delivers them.
 */
void itapi_qp_destroy(struct openrdma_qp *qp);

/* ------------------------------------------------------------------ */
/* Posting and DTO completions (post.c)                               */
/* ------------------------------------------------------------------ */

/*
 * Posts one send-queue work request: takes a ring slot, fills in wr_id
 * and posts.  Used by the it_post_* calls and by link and unlink.
 */
int itapi_post_sq(struct itapi_ep *ep, struct openrdma_send_wr *wr,
		  it_dto_cookie_t cookie, it_event_type_t event,
		  uint32_t length, bool signaled, struct itapi_obj *mem);
/* The CQ converter of DTO SEVDs (arg: the SEVD). */
int itapi_dto_convert(void *arg, const struct openrdma_wc *wc, void *rec);
/* OPENRDMA_SEND_* for IT DTO flags; -1 for flags the call does not take. */
int itapi_dto_flags(it_dto_flags_t flags, it_dto_flags_t allowed);

/* ------------------------------------------------------------------ */
/* Connections (cm.c) and UD service resolution (ud_svc.c)            */
/* ------------------------------------------------------------------ */

struct itapi_listen {
	struct itapi_obj obj;
	struct itapi_evd *evd; /* CM_REQ stream */
	size_t spigot_id;
	it_conn_qual_t conn_qual;
	uint16_t port; /* host order */
	it_listen_flags_t flags;
	struct itapi_cm_ref cm;
	struct itapi_listen *prev, *next; /* ia->listens; ia->cm_lock */
};

/*
 * The CM channel of an IA: made with the IA; stop ends the handler (no
 * new CM state after it returns), fini destroys the channel once every
 * id is gone.
 */
int itapi_cm_init(struct itapi_ia *ia);
void itapi_cm_stop(struct itapi_ia *ia);
void itapi_cm_fini(struct itapi_ia *ia);
/* Records an id of the IA as owner's; ia->cm_lock held. */
void itapi_cm_ref_add(struct itapi_ia *ia, struct itapi_cm_ref *ref,
		      struct openrdma_cm_id *id, struct itapi_obj *owner);
void itapi_cm_ref_del(struct itapi_ia *ia, struct itapi_cm_ref *ref);
/* Rejects and forgets the IA's unanswered requests (it_ia_free). */
void itapi_cm_requests_drop(struct itapi_ia *ia);
/* Forgets the three-way handshakes pending on ep. */
void itapi_cm_ep_forget(struct itapi_ep *ep);
void itapi_listen_destroy(struct itapi_listen *l);
/*
 * Fills the private data of a CM event: copied up to IT_MAX_PRIV_DATA
 * bytes.
 */
void itapi_pdata_copy(unsigned char *dst, it_boolean_t *present,
		      const struct openrdma_cm_event *ev, size_t skip);

/* The kinds of identifiers the process hands out (cn_est_id and the UD
 * service request ids share one table). */
enum itapi_cn_kind {
	ITAPI_CN_CONN_REQUEST, /* passive: a connection request */
	ITAPI_CN_ACCEPT_ARRIVAL, /* active: a three-way response */
	ITAPI_CN_UD_SVC, /* passive: a UD service request */
};

struct itapi_cn {
	uint64_t key; /* the cn_est_id or ud_svc_req_id */
	enum itapi_cn_kind kind;
	struct itapi_ia *ia;
	struct openrdma_cm_id *id; /* passive kinds: the request's id */
	struct itapi_ep *ep; /* ACCEPT_ARRIVAL */
	struct itapi_listen *listen; /* passive kinds; NULL once freed */
	uint8_t ird, ord; /* for the accept: the requester's, swapped */
	struct sockaddr_storage src; /* the requester's address */
	it_event_t ev; /* the request as delivered, for it_handoff() */
	UT_hash_handle hh;
};

/*
 * The table of identifiers: it_reject(), it_handoff() and
 * it_ud_service_reply() name a request by identifier alone.  A record is
 * listed under a new identifier by new, and owned by whoever takes it
 * out; list puts a taken one back under its identifier.
 */
struct itapi_cn *itapi_cn_new(struct itapi_ia *ia, enum itapi_cn_kind kind);
struct itapi_cn *itapi_cn_take(uint64_t key);
void itapi_cn_list(struct itapi_cn *cn);

/* What the CM handler leaves to do once it holds no lock. */
struct itapi_cm_drop {
	struct openrdma_cm_id *reject; /* a request nobody will answer */
	struct openrdma_cm_id *id; /* an id finished with */
	struct openrdma_qp *qp; /* and its hidden QP */
};

void itapi_cm_drop_run(struct itapi_cm_drop *drop);
/* Makes sure the dispatcher reads the IA's CM channel; ia->cm_lock held. */
int itapi_cm_start(struct itapi_ia *ia);

/* The header that marks a connect as a UD service request (ud_svc.c). */
#define ITAPI_SVC_REQ_HDR 8
#define ITAPI_SVC_REP_HDR 20

/* Whether a CONNECT_REQUEST is a UD service request. */
bool itapi_svc_is_request(const struct openrdma_cm_event *ev);
/*
 * The CM handler's part for the ids of UD service requests, ia->cm_lock
 * held: fills the reply event and its SEVD (0), or returns CORE_EVD_SKIP;
 * a finished request's id and QP move to drop.
 */
int itapi_svc_cm_event(struct itapi_ia *ia, struct itapi_obj *owner,
		       const struct openrdma_cm_event *ev, it_event_t *event,
		       struct itapi_evd **dst, struct itapi_cm_drop *drop);
void itapi_ud_svc_destroy(struct itapi_obj *svc);

/* ------------------------------------------------------------------ */
/* Address handles (ah.c)                                             */
/* ------------------------------------------------------------------ */

struct itapi_ah {
	struct itapi_obj obj;
	struct itapi_pz *pz;
	/* replaced by it_address_handle_modify(); sends in flight may still
	 * name the old ones, which live until the handle is freed */
	_Atomic(struct openrdma_ah *) ah;
	struct openrdma_ah **retired;
	size_t num_retired;
	it_path_t path;
};

void itapi_ah_destroy(struct itapi_ah *ah);

/* ------------------------------------------------------------------ */
/* Destructors of the other objects                                   */
/* ------------------------------------------------------------------ */

void itapi_pz_destroy(struct itapi_pz *pz);
void itapi_lmr_destroy(struct itapi_lmr *lmr);
void itapi_rmr_destroy(struct itapi_rmr *rmr);

#endif /* API_ITAPI_ITAPI_H */
