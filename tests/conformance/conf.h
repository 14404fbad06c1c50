/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The conformance suite's fixture.  A test drives side A (this process)
 * through the public verbs API directly, and side B through a peer: an
 * agent that runs in this thread (local), in another thread (thread) or in
 * a forked child (process), reached by the messages of conf_proto.h.  The
 * semantics checked are those of openrdma_semantics(7).
 *
 * Helpers assert: a failed setup step fails the test; a missing capability
 * skips it with the reason.  Every wait is bounded by the test timeout.
 */
#ifndef CONF_H
#define CONF_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>
#include <criterion/criterion.h>

#include <openrdma/errno.h>
#include <openrdma/verbs.h>

#include "conf_proto.h"

/* Criterion's limit for one test, in seconds; waits inside are shorter. */
#define CONF_TEST_TIMEOUT 60
#define CONF_TEST(suite, name) \
	Test(suite, name, .fini = conf_teardown, .timeout = CONF_TEST_TIMEOUT)

/* How long a "nothing arrives" check watches, in milliseconds. */
#define CONF_QUIET_MS 200

enum conf_mode {
	CONF_MODE_LOCAL,
	CONF_MODE_THREAD,
	CONF_MODE_PROCESS,
};

enum conf_connect {
	CONF_CONNECT_CM,
	CONF_CONNECT_MANUAL,
};

/* Kinds of side-A objects beyond those of conf_proto.h. */
enum {
	CONF_K_MEM = CONF_K_MAX, /* struct conf_mem: MR + buffer */
	CONF_K_COMP_CH,
	CONF_K_CM_CH,
};

struct conf_peer;

struct conf_tracked {
	int kind;
	void *obj;
};

#define CONF_MAX_TRACKED 1024

struct conf_test {
	char ifname[64];
	enum conf_mode mode;
	enum conf_connect connect;
	int timeout_ms;
	/* side A */
	struct openrdma_device *dev;
	struct openrdma_context *ctx;
	struct openrdma_device_attr attr;
	struct openrdma_port_attr port;
	struct openrdma_pd *pd;
	struct openrdma_cm_channel *cm_ch;
	/* side B */
	struct conf_peer *peer;
	uint32_t ppd; /* the peer's first PD */
	struct openrdma_device_attr pattr;
	struct openrdma_port_attr pport;
	int ntracked;
	struct conf_tracked tracked[CONF_MAX_TRACKED];
};

/* conf_setup() flags */
enum {
	CONF_LOCAL_ONLY = 0,
	CONF_WITH_PEER = 1 << 0,
};

/* Opens side A (and the peer); skips the test if the mode cannot run. */
struct conf_test *conf_setup(int flags);
/* Criterion .fini: destroys everything, expecting each destroy to work. */
void conf_teardown(void);

/* Skips the test unless the device has cap; what: the feature needed. */
void conf_require_cap(struct conf_test *t, uint32_t cap, const char *what);
/* Skips the test if ret says the transport cannot move a QP to RESET. */
void conf_skip_no_reset(struct conf_test *t, int ret);
/* Local and remote write, remote read and, with atomics, remote atomic. */
int conf_remote_access(const struct conf_test *t);
void conf_require_atomics(struct conf_test *t);
void conf_track(struct conf_test *t, int kind, void *obj);
/* The test destroyed obj itself. */
void conf_untrack(struct conf_test *t, void *obj);

const char *conf_mode_name(enum conf_mode mode);
int conf_mode_parse(const char *s, enum conf_mode *mode);
int conf_connect_parse(const char *s, enum conf_connect *connect);

/* Asserts that expr returns 0. */
#define CONF_OK(expr)                                                  \
	do {                                                           \
		int conf_ret_ = (expr);                                \
		cr_assert_eq(conf_ret_, 0, "%s: %s (%d)", #expr,       \
			     openrdma_strerror(conf_ret_), conf_ret_); \
	} while (0)

/* Asserts that expr returns the negative code err. */
#define CONF_ERR(expr, err)                                                  \
	do {                                                                 \
		int conf_ret_ = (expr);                                      \
		cr_assert_eq(conf_ret_, -(err), "%s: got %s (%d), want %s",  \
			     #expr, openrdma_strerror(conf_ret_), conf_ret_, \
			     openrdma_strerror(-(err)));                     \
	} while (0)

/* ------------------------------------------------------------------ */
/* Byte patterns                                                      */
/* ------------------------------------------------------------------ */

/* Byte i of pattern seed; different seeds differ at every index. */
static inline uint8_t conf_pattern(unsigned int seed, size_t i)
{
	return (uint8_t)(i * 131u + (i >> 8) + seed * 73u);
}

void conf_fill(void *buf, size_t len, unsigned int seed, size_t first);
/* Index of the first byte that differs from the pattern, or -1. */
long conf_check(const void *buf, size_t len, unsigned int seed, size_t first);
#define CONF_EXPECT_PATTERN(buf, len, seed, first)                        \
	do {                                                              \
		long conf_bad_ = conf_check(buf, len, seed, first);       \
		cr_assert_eq(conf_bad_, -1,                               \
			     "byte %ld of %zu differs from pattern %u",   \
			     conf_bad_, (size_t)(len), (unsigned)(seed)); \
	} while (0)

/* ------------------------------------------------------------------ */
/* Side A                                                             */
/* ------------------------------------------------------------------ */

struct conf_mem {
	uint8_t *buf;
	size_t len;
	struct openrdma_mr *mr;
	bool mapped; /* buf is an mmap() reservation, never touched */
};

/* A page-aligned buffer filled with pattern seed, registered on pd. */
struct conf_mem *conf_mem_new(struct conf_test *t, struct openrdma_pd *pd,
			      size_t len, int access, unsigned int seed);
/* len bytes of untouched address space (MAP_NORESERVE), registered. */
struct conf_mem *conf_mem_map(struct conf_test *t, struct openrdma_pd *pd,
			      size_t len, int access);
struct openrdma_pd *conf_pd_new(struct conf_test *t);
struct openrdma_cq *conf_cq_new(struct conf_test *t, int cqe,
				struct openrdma_comp_channel *ch,
				void *cq_context);
struct openrdma_qp *conf_qp_new(struct conf_test *t,
				struct openrdma_qp_init_attr *init);
enum openrdma_qp_state conf_qp_state(struct openrdma_qp *qp);

static inline struct openrdma_sge conf_sge(const struct conf_mem *m, size_t off,
					   uint32_t len)
{
	return (struct openrdma_sge){ .addr = (uintptr_t)m->buf + off,
				      .length = len,
				      .lkey = m->mr->lkey };
}

/* Posts one WR; asserts success. */
void conf_post_send(struct openrdma_qp *qp, struct openrdma_send_wr *wr);
void conf_post_recv(struct openrdma_qp *qp, uint64_t wr_id,
		    const struct conf_mem *m, size_t off, uint32_t len);

/*
 * Collects up to n completions, polling until the test timeout.  Returns
 * the count, or the poll error if it failed before any arrived.
 */
int conf_poll_wait(struct conf_test *t, struct openrdma_cq *cq, int n,
		   struct openrdma_wc *wc);
void conf_poll_n(struct conf_test *t, struct openrdma_cq *cq, int n,
		 struct openrdma_wc *wc);
void conf_poll_none(struct openrdma_cq *cq);
/* Posts wr (signaled) and checks its single completion on cq. */
void conf_post_expect(struct conf_test *t, struct openrdma_qp *qp,
		      struct openrdma_cq *cq, struct openrdma_send_wr *wr,
		      enum openrdma_wc_status status, int opcode);
void conf_state_expect(struct openrdma_qp *qp, enum openrdma_qp_state want);
void conf_peer_state_expect(struct conf_test *t, uint32_t qp,
			    enum openrdma_qp_state want);
/* Checks one completion; opcode < 0 is not checked (unset on errors). */
void conf_wc_expect(const struct openrdma_wc *wc, uint64_t wr_id,
		    enum openrdma_wc_status status, int opcode);

/* Waits for the next async event of side A and checks its type. */
void conf_async_expect(struct conf_test *t, enum openrdma_event_type type,
		       struct openrdma_async_event *ev);
/* Asserts that no async event is queued within CONF_QUIET_MS. */
void conf_async_none(struct conf_test *t);
/* The next CM event of side A within timeout_ms, or -EAGAIN. */
int conf_cm_next(struct conf_test *t, int timeout_ms,
		 struct openrdma_cm_event **ev);
void conf_cm_none(struct conf_test *t);
/* Waits for the next CM event of side A (caller acks). */
struct openrdma_cm_event *conf_cm_expect(struct conf_test *t,
					 enum openrdma_cm_event_type type);

/* ------------------------------------------------------------------ */
/* Side B: the peer                                                   */
/* ------------------------------------------------------------------ */

int conf_peer_start(enum conf_mode mode, struct conf_peer **peer_out);
/* Kills a process peer on purpose (-EOPNOTSUPP for the other kinds). */
int conf_peer_kill(struct conf_peer *peer);
/* Asks the agent to clean up and stop; returns its cleanup result. */
int conf_peer_stop(struct conf_peer *peer);
/* The request buffer to fill (op set, data_len 0). */
struct conf_msg *conf_peer_req(struct conf_peer *peer, enum conf_op op);
/* Sends the request from conf_peer_req; returns the reply (its ret). */
struct conf_msg *conf_peer_do(struct conf_peer *peer);

struct conf_pmr {
	uint32_t id;
	int access;
	uint64_t addr; /* the buffer, in the peer's address space */
	uint64_t len;
	uint32_t lkey;
	uint32_t rkey;
	unsigned int seed;
};

/* The remote address of offset off, as the peer's MR expects it. */
static inline uint64_t conf_pmr_raddr(const struct conf_pmr *m, uint64_t off)
{
	return (m->access & OPENRDMA_ACCESS_ZERO_BASED ? 0 : m->addr) + off;
}

struct conf_pqp {
	uint32_t id;
	uint32_t qpn;
	struct openrdma_qp_cap cap;
};

struct conf_pasync {
	enum openrdma_event_type type;
	uint32_t kind;
	uint32_t id;
};

uint32_t conf_peer_pd_alloc(struct conf_test *t);
struct conf_pmr conf_peer_mr_reg(struct conf_test *t, uint32_t pd, uint64_t len,
				 int access, unsigned int seed);
void conf_peer_mem_read(struct conf_test *t, const struct conf_pmr *m,
			uint64_t off, void *buf, uint64_t len);
void conf_peer_mem_write(struct conf_test *t, const struct conf_pmr *m,
			 uint64_t off, const void *buf, uint64_t len);
/* Asserts that [off, off + len) of m holds pattern seed from index first. */
void conf_peer_mem_expect(struct conf_test *t, const struct conf_pmr *m,
			  uint64_t off, uint64_t len, unsigned int seed,
			  size_t first);
/* Writes m's original pattern back over [off, off + len). */
void conf_peer_mem_restore(struct conf_test *t, const struct conf_pmr *m,
			   uint64_t off, uint64_t len);
/* Asserts that m still holds the pattern it was registered with. */
void conf_peer_mem_untouched(struct conf_test *t, const struct conf_pmr *m);
uint32_t conf_peer_cq_create(struct conf_test *t, int cqe);
struct conf_pqp conf_peer_qp_create(struct conf_test *t, uint32_t pd,
				    enum openrdma_qp_type type, uint32_t scq,
				    uint32_t rcq, uint32_t srq,
				    const struct openrdma_qp_cap *cap,
				    int sq_sig_all);
int conf_peer_qp_modify(struct conf_test *t, uint32_t qp,
			const struct openrdma_qp_attr *attr, int mask);
enum openrdma_qp_state conf_peer_qp_state(struct conf_test *t, uint32_t qp);
/* Posts n WRs; *bad gets the index of the first not posted (or -1). */
int conf_peer_post_send(struct conf_test *t, uint32_t qp,
			const struct conf_wire_send *wr, int n, int *bad);
int conf_peer_post_recv(struct conf_test *t, uint32_t qp, bool srq,
			const struct conf_wire_recv *wr, int n, int *bad);
/* One receive of [off, off + len) of m; asserts success. */
void conf_peer_recv(struct conf_test *t, uint32_t qp, uint64_t wr_id,
		    const struct conf_pmr *m, uint64_t off, uint32_t len);
void conf_peer_srq_recv(struct conf_test *t, uint32_t srq, uint64_t wr_id,
			const struct conf_pmr *m, uint64_t off, uint32_t len);
int conf_peer_poll(struct conf_test *t, uint32_t cq, int n,
		   struct openrdma_wc *wc, int timeout_ms);
void conf_peer_poll_n(struct conf_test *t, uint32_t cq, int n,
		      struct openrdma_wc *wc);
void conf_peer_poll_none(struct conf_test *t, uint32_t cq);
int conf_peer_async_get(struct conf_test *t, int timeout_ms,
			struct conf_pasync *ev);
void conf_peer_async_expect(struct conf_test *t, enum openrdma_event_type type,
			    uint32_t kind, uint32_t id);
void conf_peer_async_none(struct conf_test *t);
uint32_t conf_peer_mw_alloc(struct conf_test *t, uint32_t pd,
			    enum openrdma_mw_type type, uint32_t *rkey);
int conf_peer_mw_bind(struct conf_test *t, uint32_t qp, uint32_t mw,
		      const struct conf_pmr *m, uint64_t off, uint64_t len,
		      int access, uint64_t wr_id, uint32_t *rkey);
uint32_t conf_peer_mw_rkey(struct conf_test *t, uint32_t mw);
uint32_t conf_peer_srq_create(struct conf_test *t, uint32_t pd, uint32_t max_wr,
			      uint32_t max_sge);
int conf_peer_srq_modify(struct conf_test *t, uint32_t srq,
			 const struct openrdma_srq_attr *attr, int mask);
uint32_t conf_peer_ah_create(struct conf_test *t, uint32_t pd,
			     const struct openrdma_ah_attr *attr);
int conf_peer_ah_from_wc(struct conf_test *t, uint32_t pd,
			 const struct openrdma_wc *wc, const struct conf_pmr *m,
			 uint64_t off, uint32_t *ah_out);
uint32_t conf_peer_cm_listen(struct conf_test *t, int backlog,
			     struct sockaddr_storage *addr);
int conf_peer_cm_connect(struct conf_test *t, uint32_t qp,
			 const struct sockaddr_storage *dst,
			 const struct conf_wire_param *param, uint32_t *id);
int conf_peer_cm_accept(struct conf_test *t, uint32_t id, uint32_t qp,
			const struct conf_wire_param *param);
int conf_peer_cm_reject(struct conf_test *t, uint32_t id, const void *pdata,
			uint8_t len);
int conf_peer_cm_disconnect(struct conf_test *t, uint32_t id, const void *pdata,
			    uint8_t len);
int conf_peer_cm_event(struct conf_test *t, int timeout_ms,
		       struct conf_wire_cm_event *ev);
void conf_peer_cm_expect(struct conf_test *t, enum openrdma_cm_event_type type,
			 struct conf_wire_cm_event *ev);
void conf_peer_cm_none(struct conf_test *t);
int conf_peer_destroy(struct conf_test *t, enum conf_kind kind, uint32_t id);

/* ------------------------------------------------------------------ */
/* Connections                                                        */
/* ------------------------------------------------------------------ */

struct conf_rc_opts {
	struct openrdma_qp_cap cap; /* zero fields: defaults */
	int cqe; /* 0: default */
	int sq_sig_all;
	bool few_retries; /* rnr_retry and retry_cnt 1 instead of 7 */
	struct openrdma_srq *srq; /* side A's QP uses it */
	struct openrdma_comp_channel *channel; /* side A's CQs report to it */
	uint32_t psrq; /* side B's QP uses it */
	bool manual; /* connect by modify-QP instead of the test's default */
};

struct conf_rc {
	/* side A: the active side */
	struct openrdma_cq *scq;
	struct openrdma_cq *rcq;
	struct openrdma_qp *qp;
	struct openrdma_cm_id *id; /* NULL when connected manually */
	/* side B: the passive side */
	uint32_t pscq;
	uint32_t prcq;
	struct conf_pqp pqp;
	uint32_t pid; /* accepted CM id, 0 when connected manually */
	uint32_t plisten;
	uint16_t listen_port;
};

/* Creates both QPs (RESET) and their CQs. */
void conf_rc_create(struct conf_test *t, struct conf_rc *rc,
		    const struct conf_rc_opts *opts);
/* Creates and connects them (CM, or by hand: see conf_rc_connect_manual). */
void conf_rc_connect(struct conf_test *t, struct conf_rc *rc,
		     const struct conf_rc_opts *opts);
/* A sends to B, B sends to A, A writes into B: asserts all arrive. */
void conf_rc_traffic(struct conf_test *t, struct conf_rc *rc);
/* Connects created QPs through the CM, whatever the test's default. */
void conf_rc_connect_cm(struct conf_test *t, struct conf_rc *rc,
			const struct conf_rc_opts *opts);
/* Connects created QPs by modify-QP; skips if the transport cannot. */
void conf_rc_connect_manual(struct conf_test *t, struct conf_rc *rc,
			    const struct conf_rc_opts *opts);
/* Moves side A's QP through INIT and RTR to RTS towards dest. */
int conf_qp_to_rts(struct conf_test *t, struct openrdma_qp *qp,
		   const struct sockaddr_storage *addr, uint32_t dest_qpn,
		   bool few_retries);
/* The same, for side B's QP. */
int conf_peer_qp_to_rts(struct conf_test *t, uint32_t qp,
			const struct sockaddr_storage *addr, uint32_t dest_qpn,
			bool few_retries);
/* The suite's connection parameters: IRD/ORD, retries (1 or 7). */
void conf_conn_param(struct conf_test *t, bool few_retries,
		     struct openrdma_conn_param *p);
/* Fills the attributes that one RC transition requires. */
int conf_rc_attr(struct conf_test *t, enum openrdma_qp_state to,
		 const struct sockaddr_storage *addr, uint32_t dest_qpn,
		 bool few_retries, struct openrdma_qp_attr *attr);

#define CONF_QKEY 0x11223344u

struct conf_ud {
	struct openrdma_cq *cq;
	struct openrdma_qp *qp;
	struct openrdma_ah *ah; /* to side B */
	uint32_t pcq;
	struct conf_pqp pqp;
	uint32_t pah; /* to side A */
};

/* Two UD QPs in RTS with Q_Key CONF_QKEY and an AH each way. */
void conf_ud_create(struct conf_test *t, struct conf_ud *ud);
/* Fills the attributes that one UD transition requires; returns the mask. */
int conf_ud_attr(enum openrdma_qp_state to, struct openrdma_qp_attr *attr);

/* The port number of an IPv4 or IPv6 address (host order), and set it. */
uint16_t conf_addr_port(const struct sockaddr_storage *ss);
void conf_addr_set_port(struct sockaddr_storage *ss, uint16_t port);

/* ------------------------------------------------------------------ */
/* Work-request builders                                              */
/* ------------------------------------------------------------------ */

static inline struct conf_wire_sge conf_psge(const struct conf_pmr *m,
					     uint64_t off, uint32_t len)
{
	return (struct conf_wire_sge){ .mr = m->id, .len = len, .off = off };
}

/* A signaled RDMA write/read/send of one SGE from side A. */
void conf_rdma(struct openrdma_qp *qp, enum openrdma_wr_opcode op,
	       uint64_t wr_id, const struct conf_mem *m, size_t off,
	       uint32_t len, uint64_t raddr, uint32_t rkey);
void conf_send(struct openrdma_qp *qp, uint64_t wr_id, const struct conf_mem *m,
	       size_t off, uint32_t len);

#endif /* CONF_H */
