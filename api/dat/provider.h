/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The DAT 2.0 provider: what the files of api/dat/ share.
 *
 * Every object a handle points to starts with struct datp_obj, whose first
 * word is the DAT_PROVIDER of its IA: that is how libdat2 (DAPL's or ours)
 * dispatches a call.  The provider translates between the DAT model and the
 * verbs core (include/openrdma/verbs.h) and the event engine
 * (core/evd/evd.h), and nothing else.
 *
 * Locks, outer to inner: an EP's control lock (connect, accept, modify,
 * reset, free), then the IA's table lock, then a queue lock (send ring,
 * receive slots).  The table lock is a leaf towards the engine: no engine
 * call and no core call that may wait is made while it is held, because
 * the engine's converters take it on the dispatcher thread and engine
 * control calls wait for the dispatcher.
 */
#ifndef API_DAT_PROVIDER_H
#define API_DAT_PROVIDER_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <uthash.h>

#include <dat2/udat.h>
#include <dat2/dat_registry.h>
#include <dat2/dat_ib_extensions.h>
#include <openrdma/verbs.h>

#include "core/evd/evd.h"

/* ------------------------------------------------------------ objects */

/* Kinds of handle; the tag in datp_obj is DATP_TAG(kind). */
enum datp_kind {
	DATP_IA,
	DATP_PZ,
	DATP_LMR,
	DATP_RMR,
	DATP_EVD,
	DATP_CNO,
	DATP_EP,
	DATP_SRQ,
	DATP_PSP,
	DATP_RSP,
	DATP_CSP,
	DATP_CR,
	DATP_KIND_MAX
};

#define DATP_TAG_BASE 0x44415400u /* "DAT" */
#define DATP_TAG(kind) (DATP_TAG_BASE + (uint32_t)(kind))
#define DATP_TAG_FREED 0u

struct datp_ia;

/*
 * The header of every object.  'users' counts what refers to the object
 * (EPs to their PZ and EVDs, EVDs to their CNO): free refuses with
 * DAT_INVALID_STATE/..._IN_USE while it is not 0.  'ref' keeps the memory:
 * 1 for the object itself, plus one per blocked call (a wait) that must
 * survive a concurrent free.
 */
struct datp_obj {
	DAT_PROVIDER *provider; /* first word: DAT_HANDLE_TO_PROVIDER() */
	uint32_t tag;
	atomic_uint ref;
	atomic_uint users;
	struct datp_ia *ia;
	DAT_CONTEXT context;
	struct datp_obj *prev, *next; /* the IA's list of this kind */
};

/* The handle's object, or NULL if it is not a live object of that kind. */
struct datp_obj *datp_obj_get(DAT_HANDLE handle, enum datp_kind kind);
/* Any live object of this provider, whatever its kind. */
struct datp_obj *datp_obj_any(DAT_HANDLE handle, enum datp_kind *kind_out);
/* Fills the header and links the object to its IA's list. */
int datp_obj_init(struct datp_obj *obj, struct datp_ia *ia,
		  enum datp_kind kind);
/* Unlinks the object and kills its handle; memory goes with the last ref. */
void datp_obj_fini(struct datp_obj *obj, enum datp_kind kind);
void datp_obj_hold(struct datp_obj *obj);
void datp_obj_release(struct datp_obj *obj);

static inline void datp_use(struct datp_obj *obj)
{
	atomic_fetch_add(&obj->users, 1);
}

static inline void datp_unuse(struct datp_obj *obj)
{
	atomic_fetch_sub(&obj->users, 1);
}

static inline bool datp_in_use(struct datp_obj *obj)
{
	return atomic_load(&obj->users) != 0;
}

/* ------------------------------------------------------------ addresses */

/* The port of an IPv4 or IPv6 address, in host order; 0 for others. */
static inline uint16_t datp_addr_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return 0;
}

static inline void datp_addr_set_port(struct sockaddr_storage *ss,
				      uint16_t port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
}

/* ------------------------------------------------------------ errors */

/*
 * The one mapping from OpenRDMA codes to DAT_RETURN.  err is 0 or a
 * negative OPENRDMA_E* code; sub names the argument, handle, state or
 * resource concerned, and is used when the type err maps to has
 * subtypes of that group.
 */
DAT_RETURN datp_ret(int err, DAT_RETURN_SUBTYPE sub);
/* Logs "fn: message" at debug level, then returns datp_ret(err, sub). */
DAT_RETURN datp_fail(int err, DAT_RETURN_SUBTYPE sub, const char *fn,
		     const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#define DATP_ERR(err, sub, ...) datp_fail(err, sub, __func__, __VA_ARGS__)
/* An invalid argument: sub is DAT_INVALID_ARGn. */
#define DATP_ARG(sub, ...) \
	datp_fail(-OPENRDMA_EINVAL, sub, __func__, __VA_ARGS__)
/* A handle of the wrong kind or NULL. */
#define DATP_HANDLE(sub, ...) \
	datp_fail(-OPENRDMA_EBADHANDLE, sub, __func__, __VA_ARGS__)
/* A state that does not allow the call. */
#define DATP_STATE(sub, ...) \
	datp_fail(-OPENRDMA_ESTATE, sub, __func__, __VA_ARGS__)

/* DAT_INVALID_STATE subtype of an EP state. */
DAT_RETURN_SUBTYPE datp_ep_state_sub(DAT_EP_STATE state);

/* ------------------------------------------------------------ provider */

/*
 * One registry entry (one dat.conf line naming this library): the table
 * registered under its IA name and the interface its instance data names.
 */
struct datp_entry {
	DAT_PROVIDER provider; /* provider.extension points back here */
	DAT_PROVIDER_INFO info;
	char iface[64]; /* "self0", "tcp0" */
	struct datp_entry *next;
};

/* The entry registered under name; NULL if none. */
struct datp_entry *datp_entry_find(const char *name);
/* The template every entry's table copies. */
extern const DAT_PROVIDER datp_provider_template;

/* The provider's entry points, for libdat2 (dat_registry.h). */
void dat_provider_init(const DAT_PROVIDER_INFO *info,
		       const char *instance_data);
void dat_provider_fini(const DAT_PROVIDER_INFO *info);
/* DAPL's name for the extension entry point, looked up by libdat2. */
DAT_RETURN dapl_extensions(DAT_HANDLE handle, DAT_EXTENDED_OP op, va_list args);

/* ------------------------------------------------------------ IA */

struct datp_evd;
struct datp_ep;
struct datp_srq;

/* What a work-request id's key names (datp_key). */
enum datp_key_kind {
	DATP_KEY_EP,
	DATP_KEY_SRQ,
};

/*
 * Work-request ids are (key << 32 | slot).  A key names one generation of
 * an EP's queues (reset gives new keys) or an SRQ; completions whose key
 * is gone (a freed or reset EP) are dropped.  A receive's key carries
 * DATP_KEY_RECV: the opcode of a flushed completion is undefined (IBTA
 * 11.4.2.1; rxe leaves it SEND), so only the id says which queue it was.
 */
#define DATP_KEY_RECV 0x80000000u

struct datp_key {
	uint32_t key;
	enum datp_key_kind kind;
	void *owner;
	UT_hash_handle hh;
};

/* An IA's CM ids, and what each belongs to (EP, CR or service point). */
struct datp_cmref {
	struct openrdma_cm_id *id;
	struct datp_obj *owner;
	UT_hash_handle hh;
};

/*
 * CM ids (and the QPs only they used) waiting to be destroyed by an
 * application thread.
 */
struct datp_dead_id {
	struct openrdma_cm_id *id;
	struct openrdma_qp *qp;
	struct datp_dead_id *next;
};

/* Async events made by the provider, delivered by the dispatcher. */
struct datp_pending {
	DAT_EVENT event;
	struct datp_pending *next;
};

struct datp_ia {
	struct datp_obj obj;
	struct datp_entry *entry;
	struct openrdma_device *dev;
	struct openrdma_context *ctx;
	struct openrdma_device_attr dev_attr;
	struct openrdma_port_attr port_attr;
	struct sockaddr_storage addr; /* the IA address (port 0) */
	bool query_only; /* from dat_ib_open_query: only query and close */

	/* Leaf lock: the lists, tables and fields below. */
	pthread_mutex_t lock;
	struct datp_obj *objs[DATP_KIND_MAX];
	struct datp_key *keys;
	struct datp_cmref *cmrefs;
	struct datp_dead_id *dead_ids;
	/* Own leaf lock: converters queue events with ia->lock held. */
	pthread_mutex_t pending_lock;
	struct datp_pending *pending;
	uint32_t next_key;
	struct datp_ep *live_eps; /* by address, for events naming an EP */
	struct datp_ep *qp_eps; /* by QP number, for SRQ completions */
	struct datp_ah *ahs; /* UD destinations handed out */
	atomic_uint srq_eps; /* EPs on an SRQ */
	/* The async EVD; its own lock, since posting to it enters the engine */
	pthread_mutex_t async_lock;
	struct datp_evd *async_evd;
	bool async_owned; /* made by dat_ia_open, freed by dat_ia_close */

	/* Connection events: one channel, routed to the owners' EVDs. */
	struct openrdma_cm_channel *cm_ch;
	struct core_evd *cm_sink;
	/* Provider-made async events and connect timeouts. */
	int work_fd;
	struct core_disp_watch *work_watch;
	/* QP send and receive CQ for EPs without a request or receive EVD. */
	struct openrdma_cq *null_cq;
	struct openrdma_comp_channel *null_ch;

	/* Provider attributes: names and values live as long as the IA. */
	DAT_NAMED_ATTR pattr[16];
	int num_pattr;
	char pattr_values[4][80];

	atomic_uint_fast64_t counters[DCNT_IA_ALL_COUNTERS];
};

struct datp_ia *datp_ia_get(DAT_IA_HANDLE handle);
/* Runs the IA's deferred work (dead CM ids): application threads only. */
void datp_ia_reap(struct datp_ia *ia);
/* Queues a provider-made async event for the dispatcher to post. */
void datp_ia_defer_event(struct datp_ia *ia, const DAT_EVENT *event);
/* A new work-request key for owner; 0 when out of memory. */
uint32_t datp_key_add(struct datp_ia *ia, enum datp_key_kind kind, void *owner);
void datp_key_del(struct datp_ia *ia, uint32_t key);
/* With ia->lock held. */
struct datp_key *datp_key_find(struct datp_ia *ia, uint32_t key);
int datp_cmref_add(struct datp_ia *ia, struct openrdma_cm_id *id,
		   struct datp_obj *owner);
/* Forgets id and destroys it (now, or later when on the dispatcher). */
void datp_cmref_drop(struct datp_ia *ia, struct openrdma_cm_id *id,
		     bool deferred);
/*
 * Whether to try a destroy again: a core object with an async event in
 * flight refuses to go (-OPENRDMA_EBUSY) for a moment.  Sleeps if so.
 */
bool datp_busy_retry(int ret, int *tries);
/* Destroys a QP, waiting out its events in flight; warns on failure. */
void datp_qp_destroy(struct openrdma_qp *qp);
/* Destroys id, then qp (either may be NULL), from an application thread. */
void datp_ia_bury(struct datp_ia *ia, struct openrdma_cm_id *id,
		  struct openrdma_qp *qp);
/* With ia->lock held: forgets a CM id, which the caller destroys. */
void datp_cmref_del_locked(struct datp_ia *ia, const struct openrdma_cm_id *id);
/* With ia->lock held: gives a CM id another owner. */
void datp_cmref_move(struct datp_ia *ia, const struct openrdma_cm_id *id,
		     struct datp_obj *owner);
/* With ia->lock held. */
struct datp_obj *datp_cmref_find(struct datp_ia *ia,
				 const struct openrdma_cm_id *id);
/* The CQ for queues nobody reads; made on first use. */
int datp_ia_null_cq(struct datp_ia *ia, struct openrdma_cq **cq_out);
void datp_ia_count(struct datp_ia *ia, DAT_IA_COUNTERS which);

/* attr.c: the IA and provider attributes. */
void datp_ia_attr_fill(struct datp_ia *ia, DAT_IA_ATTR *attr);
void datp_provider_attr_fill(struct datp_ia *ia, DAT_PROVIDER_ATTR *attr);
void datp_pattr_init(struct datp_ia *ia);
/* ia.c, shared with the extension's open-and-query. */
int datp_ia_create(struct datp_entry *entry, bool query_only,
		   struct datp_ia **ia_out);
void datp_ia_destroy(struct datp_ia *ia);

/* ------------------------------------------------------------ PZ, LMR, RMR */

struct datp_pz {
	struct datp_obj obj;
	struct openrdma_pd *pd;
};

struct datp_pz *datp_pz_get(DAT_PZ_HANDLE handle);
void datp_pz_destroy(struct datp_pz *pz);

struct datp_lmr {
	struct datp_obj obj;
	struct datp_pz *pz;
	struct openrdma_mr *mr;
	DAT_LMR_PARAM param;
};

struct datp_lmr *datp_lmr_get(DAT_LMR_HANDLE handle);
void datp_lmr_destroy(struct datp_lmr *lmr);
/* openrdma access flags of DAT privileges. */
int datp_mem_access(DAT_MEM_PRIV_FLAGS priv, DAT_VA_TYPE va_type);

struct datp_rmr {
	struct datp_obj obj;
	struct datp_pz *pz;
	struct openrdma_mw *mw;
	DAT_RMR_SCOPE scope;
	uint32_t key; /* the key of the last bind posted */
	/* what the last bind posted gave access to */
	struct datp_lmr *lmr;
	DAT_LMR_TRIPLET triplet;
	DAT_MEM_PRIV_FLAGS priv;
	DAT_VA_TYPE va_type;
	struct datp_ep *ep; /* EP scope: the EP it is bound through */
};

void datp_rmr_destroy(struct datp_rmr *rmr);
/* The RMR of the IA whose context is rmr_context; NULL if none. */
struct datp_rmr *datp_rmr_find(struct datp_ia *ia, DAT_RMR_CONTEXT rmr_context);

/* ------------------------------------------------------------ EVD, CNO */

struct datp_cno;

struct datp_evd {
	struct datp_obj obj;
	struct core_evd *evd;
	DAT_EVD_FLAGS flags;
	DAT_COUNT qlen;
	struct datp_cno *cno;
	bool is_async; /* the IA's async EVD */
	/* DTO and RMR-bind EVDs: the CQ of the EPs that use it */
	struct openrdma_comp_channel *ch;
	struct openrdma_cq *cq;
	atomic_uint_fast64_t counters[DCNT_EVD_ALL_COUNTERS];
};

struct datp_evd *datp_evd_get(DAT_EVD_HANDLE handle);
int datp_evd_make(struct datp_ia *ia, DAT_COUNT qlen, struct datp_cno *cno,
		  DAT_EVD_FLAGS flags, struct datp_evd **evd_out);
/* Posts to the IA's async EVD, if it has one. */
void datp_ia_post_async(struct datp_ia *ia, DAT_EVENT *event);
/* An EVD handle that must be NULL or an EVD of ia with all of flags. */
DAT_RETURN datp_evd_arg(struct datp_ia *ia, DAT_EVD_HANDLE handle,
			DAT_EVD_FLAGS flags, DAT_RETURN_SUBTYPE sub,
			const char *fn, struct datp_evd **evd_out);
/* Queues an event the provider makes (not a software event). */
int datp_evd_post(struct datp_evd *evd, DAT_EVENT *event);
void datp_evd_destroy(struct datp_evd *evd);
/* The engine's record size: one DAT_EVENT. */
#define DATP_REC_SIZE sizeof(DAT_EVENT)

/* event.c: the engine's converters. */
int datp_wc_convert(void *arg, const struct openrdma_wc *wc, void *rec);
int datp_async_convert(void *arg, const struct openrdma_async_event *ev,
		       struct core_evd *cq_evd, void *rec);
void datp_overflow(struct core_evd *evd, void *arg);
DAT_DTO_COMPLETION_STATUS datp_dto_status(enum openrdma_wc_status status);

struct datp_cno {
	struct datp_obj obj;
	struct core_evd *aevd;
	DAT_PROXY_TYPE proxy_type;
	DAT_OS_WAIT_PROXY_AGENT agent;
	pthread_mutex_t agent_lock; /* the agent, read by the callback */
	DAT_FD fd;
};

struct datp_cno *datp_cno_get(DAT_CNO_HANDLE handle);
void datp_cno_destroy(struct datp_cno *cno);
/* Lets the CNO's proxy agent run again after a member EVD was read. */
void datp_cno_rearm(struct datp_cno *cno);

/* ------------------------------------------------------------ queues */

/* What a posted request was, for its completion event. */
struct datp_slot {
	DAT_DTO_COOKIE cookie;
	uint32_t length; /* bytes posted */
	uint16_t op; /* DAT_DTOS or DAT_IB_DTOS */
	uint8_t internal; /* signaled only to reclaim the ring: no event */
	uint8_t bind; /* an RMR bind: rmr_completion_event_data */
	DAT_RMR_HANDLE rmr;
	DAT_RMR_CONTEXT rmr_context;
};

/*
 * An EP's send ring.  Requests complete in order, and an unsignaled one
 * only says it is done when a later signaled one completes, so slots are
 * reclaimed up to each completion's sequence number.  The poster owns
 * head (under the EP's send lock), the converter tail.
 */
struct datp_sq {
	pthread_mutex_t lock;
	struct datp_slot *slots;
	uint32_t cap;
	uint32_t head;
	_Atomic uint32_t tail;
	uint32_t unsignaled; /* since the last signaled request */
	struct openrdma_sge *sge; /* scratch for one post, under lock */
	uint32_t max_sge;
};

/*
 * Receive slots: each receive completes exactly once (done or flushed),
 * so a free list serves EPs and SRQs alike.
 */
struct datp_rq {
	pthread_mutex_t lock;
	struct datp_slot *slots;
	uint32_t *free_list;
	uint32_t cap;
	uint32_t nfree;
	uint64_t bytes; /* posted, not yet completed */
	struct openrdma_sge *sge;
	uint32_t max_sge;
};

int datp_sq_init(struct datp_sq *sq, uint32_t cap, uint32_t max_sge);
void datp_sq_fini(struct datp_sq *sq);
void datp_sq_reset(struct datp_sq *sq);
uint32_t datp_sq_outstanding(struct datp_sq *sq);
int datp_rq_init(struct datp_rq *rq, uint32_t cap, uint32_t max_sge);
void datp_rq_fini(struct datp_rq *rq);
void datp_rq_reset(struct datp_rq *rq);
/* Under rq->lock: a slot index, or -OPENRDMA_ENOSPC. */
int datp_rq_take(struct datp_rq *rq);
void datp_rq_give(struct datp_rq *rq, uint32_t index);
/* Under rq->lock: room for cap receives; slots are never taken away. */
int datp_rq_grow(struct datp_rq *rq, uint32_t cap);
static inline uint32_t datp_rq_outstanding(struct datp_rq *rq)
{
	return rq->cap - rq->nfree;
}

static inline uint64_t datp_wr_id(uint32_t key, uint32_t slot)
{
	return (uint64_t)key << 32 | slot;
}

static inline uint64_t datp_recv_wr_id(uint32_t key, uint32_t slot)
{
	return datp_wr_id(key | DATP_KEY_RECV, slot);
}

/* ------------------------------------------------------------ EP */

enum datp_ep_kind {
	DATP_EP_RC,
	DATP_EP_UD,
};

struct datp_ah;

struct datp_ep {
	struct datp_obj obj;
	pthread_mutex_t lock; /* control path */
	_Atomic int state; /* DAT_EP_STATE */
	enum datp_ep_kind kind;
	DAT_EP_ATTR attr;
	struct datp_pz *pz;
	struct datp_evd *recv_evd, *req_evd, *conn_evd;
	struct datp_srq *srq;
	struct openrdma_qp *qp; /* NULL until the EP has a PZ */
	uint32_t key; /* of this generation of its queues */
	struct datp_sq sq;
	struct datp_rq rq;

	/* connection */
	struct openrdma_cm_id *cm_id;
	struct datp_cr *cr; /* the request a provider-made EP answers */
	bool active; /* connected by dat_ep_connect */
	DAT_CONN_QUAL remote_qual; /* what it connected to */
	struct sockaddr_storage remote_addr;
	/* atomic: the dispatcher sets it when the connection is up */
	_Atomic DAT_PORT_QUAL local_port;
	DAT_PORT_QUAL remote_port;
	/* the connect timeout: a one-shot timer the dispatcher watches */
	int timer_fd;
	struct core_disp_watch *timer_watch;
	/* private data of the last connection events, for their pointers */
	uint8_t pdata_est[OPENRDMA_MAX_PRIVATE_DATA];
	uint8_t pdata_rej[OPENRDMA_MAX_PRIVATE_DATA];
	uint8_t pdata_disc[OPENRDMA_MAX_PRIVATE_DATA];

	/* SRQ: receive buffers consumed, not yet dequeued; watermarks */
	atomic_int srq_held;
	DAT_COUNT soft_hw, hard_hw;
	atomic_bool soft_hw_sent;

	/* UD */
	uint32_t qkey;
	struct datp_ud_req *ud_reqs; /* address requests, under ia->lock */

	atomic_uint_fast64_t counters[DCNT_EP_ALL_COUNTERS];
	struct datp_ep *self; /* the key of hh_live */
	UT_hash_handle hh_live; /* ia->live_eps */
	uint32_t qpn; /* of qp, the key of hh_qpn */
	UT_hash_handle hh_qpn; /* ia->qp_eps, while it has a QP */
};

struct datp_ep *datp_ep_get(DAT_EP_HANDLE handle);
void datp_ep_destroy(struct datp_ep *ep);
/* Creates an EP a provider-flagged PSP hands out with a request. */
int datp_ep_alloc_tentative(struct datp_ia *ia, struct datp_ep **ep_out);
/* Makes the EP's QP if it can have one (it has a PZ), in INIT. */
int datp_ep_qp_make(struct datp_ep *ep);
/* Under the EP's lock: QP to RESET then INIT, new keys, empty queues. */
int datp_ep_qp_recycle(struct datp_ep *ep);
static inline DAT_EP_STATE datp_ep_state(struct datp_ep *ep)
{
	return (DAT_EP_STATE)atomic_load(&ep->state);
}
void datp_ep_count(struct datp_ep *ep, DAT_EP_COUNTERS which, uint64_t bytes);

/* connect.c */
/* Stops the connect timer, if any; ep_destroy also frees it. */
void datp_ep_timer_stop(struct datp_ep *ep);
void datp_ep_timer_free(struct datp_ep *ep);
int datp_cm_convert(void *arg, const struct openrdma_cm_event *ev, void *rec,
		    struct core_evd **dst);
/* Private data limits of the IA's device, per CM message. */
DAT_COUNT datp_pdata_max(struct datp_ia *ia);
/* Ends an EP's connection and forgets its CM id. */
void datp_ep_cm_release(struct datp_ep *ep);
/* Private data arguments: len_arg is the length's DAT_INVALID_ARGn. */
DAT_RETURN datp_pdata_check(DAT_COUNT len, const void *pdata, uint16_t max,
			    DAT_RETURN_SUBTYPE len_arg, const char *fn);

/* ------------------------------------------------------------ SP, CR */

struct datp_sp {
	struct datp_obj obj;
	enum datp_kind kind; /* PSP, RSP or CSP */
	DAT_CONN_QUAL conn_qual;
	struct datp_evd *evd;
	DAT_PSP_FLAGS flags;
	struct datp_ep *ep; /* RSP */
	DAT_COMM comm; /* CSP */
	struct sockaddr_storage addr; /* where it listens */
	struct openrdma_cm_id *id;
	atomic_bool consumed; /* RSP: its one request arrived */
};

struct datp_sp *datp_sp_get(DAT_HANDLE handle, enum datp_kind kind);
void datp_sp_destroy(struct datp_sp *sp);
/* With ia->lock held: the listening service point on conn_qual. */
struct datp_sp *datp_sp_find(struct datp_ia *ia, DAT_CONN_QUAL conn_qual);

struct datp_cr {
	struct datp_obj obj;
	struct datp_sp *sp; /* held (ref) while the CR lives */
	struct openrdma_cm_id *id;
	DAT_CONN_QUAL conn_qual;
	struct sockaddr_storage remote_addr;
	DAT_PORT_QUAL remote_port;
	uint8_t pdata[OPENRDMA_MAX_PRIVATE_DATA];
	int pdata_len;
	struct datp_ep *ep; /* the RSP's EP, or the one the PSP made */
	/* a UD address request (see ud.c) */
	bool ud;
	uint32_t peer_qpn, peer_qkey;
	struct sockaddr_storage peer_ud_addr;
};

struct datp_cr *datp_cr_get(DAT_CR_HANDLE handle);
/* Made on the dispatcher thread from a connection request. */
int datp_cr_create(struct datp_ia *ia, struct datp_sp *sp,
		   const struct openrdma_cm_event *ev, struct datp_cr **cr_out);
void datp_cr_destroy(struct datp_cr *cr, bool reject);
/* Fills the CR arrival event of cr at its service point. */
void datp_cr_event(struct datp_cr *cr, DAT_EVENT *event);

/* ------------------------------------------------------------ SRQ */

struct datp_srq {
	struct datp_obj obj;
	struct datp_pz *pz;
	struct openrdma_srq *srq;
	uint32_t key;
	struct datp_rq rq;
	DAT_COUNT max_recv_iov;
	DAT_COUNT low_watermark;
	atomic_int in_use; /* delivered receives the consumer still holds */
};

struct datp_srq *datp_srq_get(DAT_SRQ_HANDLE handle);
void datp_srq_destroy(struct datp_srq *srq);
/*
 * A receive event reached the consumer: if an SRQ fed it, the EP's
 * buffer is the consumer's now (dat_ep_recv_query, watermarks).
 */
void datp_srq_taken(struct datp_ia *ia, const DAT_EVENT *event);

/* ------------------------------------------------------------ posting */

/* Builds SGEs from DAT segments: -EINVAL names the bad one in the log. */
int datp_sge_fill(struct openrdma_sge *sge, const DAT_LMR_TRIPLET *iov,
		  DAT_COUNT n, uint64_t *total_out);
/* Posts one send-queue request on an EP, with its slot. */
DAT_RETURN datp_post_sq(struct datp_ep *ep, struct openrdma_send_wr *wr,
			const DAT_LMR_TRIPLET *iov, DAT_COUNT n,
			const struct datp_slot *slot,
			DAT_COMPLETION_FLAGS flags, const char *fn);
/*
 * Segments of an RDMA request: the RDMA limit, or the request limit
 * where that is larger (programs often leave the RDMA ones 0, as DAPL
 * never looked at them).
 */
static inline DAT_COUNT datp_rdma_iov_max(const struct datp_ep *ep, bool read)
{
	DAT_COUNT n =
		read ? ep->attr.max_rdma_read_iov : ep->attr.max_rdma_write_iov;

	return n > ep->attr.max_request_iov ? n : ep->attr.max_request_iov;
}

/* The EP states in which requests may be posted. */
DAT_RETURN datp_ep_can_send(struct datp_ep *ep, const char *fn);

/* ------------------------------------------------------------ UD */

/* A UD destination as the extension hands it out (DAT_IB_ADDR_HANDLE). */
struct datp_ah {
	struct openrdma_ah *ah;
	uint32_t qpn;
	struct datp_ep *ep; /* whose connection made it; freed with it */
	struct datp_ah *prev, *next; /* ia->ahs */
};

/*
 * A UD address request in flight: the CM needs a connected QP type for
 * the exchange, so a small RC QP carries it and is destroyed after.
 */
struct datp_ud_req {
	struct openrdma_cm_id *id;
	struct openrdma_qp *qp;
	struct datp_ud_req *prev, *next;
};

/* Private data of a UD address request or answer. */
#define DATP_UD_MAGIC 0x4f445544u /* "ODUD" */
/* A request's private data: a UD address request is recognised,
 * recorded in cr, and its header removed from what the consumer sees. */
bool datp_ud_parse(struct datp_cr *cr, const uint8_t *pd, int len,
		   const uint8_t **user_out, int *len_out);
int datp_ud_request(struct datp_ep *ep, const struct sockaddr *dst,
		    const void *pdata, DAT_COUNT pdata_len);
DAT_RETURN datp_ud_accept(struct datp_cr *cr, struct datp_ep *ep,
			  const void *pdata, DAT_COUNT pdata_len);
int datp_ud_answer(struct datp_ep *ep, const struct openrdma_cm_event *ev,
		   DAT_EVENT *event);
void datp_ud_fini(struct datp_ep *ep);
DAT_RETURN datp_ud_post_send(struct datp_ep *ep, DAT_COUNT n,
			     DAT_LMR_TRIPLET *iov, DAT_IB_ADDR_HANDLE *dest,
			     DAT_DTO_COOKIE cookie, DAT_COMPLETION_FLAGS flags);
DAT_RETURN datp_ud_ah_free(struct datp_ep *ep, DAT_IB_ADDR_HANDLE *dest);

#endif /* API_DAT_PROVIDER_H */
