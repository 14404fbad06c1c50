/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The messages between a test and its peer agent.  The same executor
 * (conf_agent_exec) serves every peer kind: called directly (local), from
 * a thread or from a forked child reached over a socketpair.  Objects are
 * named by small ids, never by pointers, so that the protocol also works
 * across processes.  Both ends are the same binary: structs travel as is.
 */
#ifndef CONF_PROTO_H
#define CONF_PROTO_H

#include <stdint.h>
#include <openrdma/verbs.h>

/* SGEs one peer work request carries; the wide SGE tests run locally. */
#define CONF_PEER_MAX_SGE 4
/* Bulk bytes in one message (memory reads and writes, completions). */
#define CONF_DATA_MAX (64 * 1024)

enum conf_op {
	CONF_OP_OPEN = 1,
	CONF_OP_QUIT,
	CONF_OP_PD_ALLOC,
	CONF_OP_MR_REG,
	CONF_OP_MEM_READ,
	CONF_OP_MEM_WRITE,
	CONF_OP_MW_ALLOC,
	CONF_OP_MW_BIND,
	CONF_OP_MW_RKEY,
	CONF_OP_CQ_CREATE,
	CONF_OP_SRQ_CREATE,
	CONF_OP_SRQ_MODIFY,
	CONF_OP_QP_CREATE,
	CONF_OP_QP_MODIFY,
	CONF_OP_QP_QUERY,
	CONF_OP_POST_SEND,
	CONF_OP_POST_RECV,
	CONF_OP_POLL,
	CONF_OP_ASYNC_GET,
	CONF_OP_AH_CREATE,
	CONF_OP_AH_FROM_WC,
	CONF_OP_CM_LISTEN,
	CONF_OP_CM_CONNECT,
	CONF_OP_CM_ACCEPT,
	CONF_OP_CM_REJECT,
	CONF_OP_CM_DISCONNECT,
	CONF_OP_CM_EVENT,
	CONF_OP_DESTROY,
	CONF_OP_MAX
};

/* Kinds of agent objects; destroy order is the reverse of creation. */
enum conf_kind {
	CONF_K_NONE = 0,
	CONF_K_PD,
	CONF_K_MR,
	CONF_K_MW,
	CONF_K_CQ,
	CONF_K_SRQ,
	CONF_K_QP,
	CONF_K_AH,
	CONF_K_CM_ID,
	CONF_K_MAX
};

/* A peer SGE: bytes [off, off + len) of the peer's MR 'mr'. */
struct conf_wire_sge {
	uint32_t mr;
	uint32_t len;
	uint64_t off;
};

struct conf_wire_send {
	uint64_t wr_id;
	uint32_t opcode; /* enum openrdma_wr_opcode */
	uint32_t flags; /* OPENRDMA_SEND_* */
	uint32_t imm; /* imm_data or invalidate_rkey */
	int32_t num_sge;
	struct conf_wire_sge sge[CONF_PEER_MAX_SGE];
	uint64_t remote_addr;
	uint64_t compare_add;
	uint64_t swap;
	uint32_t rkey;
	uint32_t ah; /* UD */
	uint32_t remote_qpn;
	uint32_t remote_qkey;
	uint32_t mw; /* BIND_MW */
	uint32_t bind_mr; /* 0: unbind */
	uint32_t bind_access;
	uint32_t bind_rkey;
	uint64_t bind_off;
	uint64_t bind_len;
};

struct conf_wire_recv {
	uint64_t wr_id;
	int32_t num_sge;
	uint32_t pad;
	struct conf_wire_sge sge[CONF_PEER_MAX_SGE];
};

struct conf_wire_param {
	uint8_t pdata[OPENRDMA_MAX_PRIVATE_DATA];
	uint8_t has_pdata; /* 0: pass a NULL private_data */
	uint8_t pdata_len;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	uint8_t three_way;
	uint8_t no_param; /* pass a NULL conn_param */
};

struct conf_wire_cm_event {
	uint32_t type; /* enum openrdma_cm_event_type */
	int32_t status;
	uint32_t id; /* agent id of event->id (registered if new) */
	uint32_t listen_id;
	uint32_t qp_num;
	uint32_t pdata_len;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t pdata[OPENRDMA_MAX_PRIVATE_DATA];
};

union conf_args {
	struct {
		char ifname[64];
	} open;
	struct {
		struct openrdma_device_attr attr;
		struct openrdma_port_attr port;
		uint32_t pd;
	} opened;
	struct {
		uint32_t id;
	} obj;
	struct {
		uint32_t kind;
		uint32_t id;
	} destroy;
	struct {
		uint32_t pd;
		uint32_t access;
		uint32_t seed;
		uint32_t id; /* reply */
		uint64_t len;
		uint64_t addr; /* reply: the buffer's address */
		uint32_t lkey; /* reply */
		uint32_t rkey; /* reply */
	} mr;
	struct {
		uint32_t mr;
		uint32_t pad;
		uint64_t off;
		uint64_t len;
	} mem;
	struct {
		uint32_t pd;
		uint32_t type;
		uint32_t id; /* reply */
		uint32_t rkey; /* reply */
	} mw;
	struct {
		uint32_t qp;
		uint32_t mw;
		uint32_t mr; /* 0: unbind */
		uint32_t access;
		uint32_t send_flags;
		uint32_t rkey; /* reply: the window's key after the post */
		uint64_t wr_id;
		uint64_t off;
		uint64_t len;
	} mw_bind;
	struct {
		int32_t cqe; /* in: wanted; out: granted */
		uint32_t id;
	} cq;
	struct {
		uint32_t pd;
		uint32_t id;
		int32_t mask; /* SRQ_MODIFY */
		struct openrdma_srq_attr attr;
	} srq;
	struct {
		uint32_t pd;
		uint32_t scq;
		uint32_t rcq;
		uint32_t srq;
		uint32_t type;
		int32_t sq_sig_all;
		struct openrdma_qp_cap cap; /* in: wanted; out: granted */
		uint32_t id; /* reply */
		uint32_t qpn; /* reply */
	} qp;
	struct {
		uint32_t id;
		int32_t mask;
		struct openrdma_qp_attr attr;
	} qp_attr;
	struct {
		uint32_t id; /* QP, or SRQ when srq is set */
		uint32_t srq;
		uint32_t count; /* WRs in data */
		int32_t bad; /* reply: index of *bad_wr, -1 if none */
	} post;
	struct {
		uint32_t cq;
		int32_t max;
		int32_t timeout_ms;
	} poll;
	struct {
		int32_t timeout_ms;
		uint32_t type; /* reply */
		uint32_t kind; /* reply */
		uint32_t id; /* reply, or the port number */
	} async;
	struct {
		uint32_t pd;
		uint32_t id; /* reply */
		struct openrdma_ah_attr attr;
	} ah;
	struct {
		uint32_t pd;
		uint32_t mr; /* the receive buffer holding the GRH */
		uint64_t off;
		struct openrdma_wc wc;
		uint32_t id; /* reply */
	} ah_wc;
	struct {
		int32_t backlog;
		uint32_t id; /* reply */
		struct sockaddr_storage addr; /* reply */
	} listen;
	struct {
		uint32_t id; /* CM id (reply of CONNECT) */
		uint32_t qp; /* 0: none */
		struct sockaddr_storage dst;
		struct conf_wire_param param;
	} cm;
	struct {
		int32_t timeout_ms;
		struct conf_wire_cm_event ev;
	} cm_event;
};

struct conf_msg {
	uint32_t op; /* enum conf_op */
	int32_t ret; /* reply: 0 or a negative OPENRDMA_E* code */
	uint32_t data_len;
	uint32_t pad;
	union conf_args a;
	uint8_t data[CONF_DATA_MAX];
};

#define CONF_MSG_HDR_LEN offsetof(struct conf_msg, data)

struct conf_agent;

/* Runs one request; fills rep (op, ret, args, data). */
void conf_agent_exec(struct conf_agent *agent, const struct conf_msg *req,
		     struct conf_msg *rep);
int conf_agent_new(struct conf_agent **agent_out);
/* Destroys every object left, newest first; returns the first failure. */
int conf_agent_free(struct conf_agent *agent);
/* Serves requests from fd until QUIT or end of file. */
void conf_agent_serve(struct conf_agent *agent, int fd);

#endif /* CONF_PROTO_H */
