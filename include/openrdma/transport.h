/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The OpenRDMA transport interface, version OPENRDMA_TRANSPORT_ABI.
 *
 * A transport is one const descriptor (struct openrdma_transport) and one
 * const table of operations (struct openrdma_transport_ops).  It is linked
 * into the library (built-in) or loaded from a plugin that exports
 * openrdma_transport_ini_v<ABI>().  The contract is in
 * openrdma_transport(7); in short:
 *
 *  - probe() really looks for devices and either adds them with
 *    openrdma_probe_device_add() or says why there are none with
 *    openrdma_probe_explain().
 *  - Objects subclass by embedding: struct foo_qp { struct openrdma_qp base;
 *    ... }.  A create op allocates the whole object and returns the base; the
 *    core then fills the common header (obj) and the generic fields, checks
 *    arguments before calling, and counts references.  A destroy op is called
 *    only when the object has no children and frees it.
 *  - Leave an op NULL if the transport lacks the feature: the registry
 *    fills it with a stub that returns -OPENRDMA_EOPNOTSUPP.
 *  - Ops return 0 or a negative OPENRDMA_E* code.  Convert foreign error
 *    conventions (positive errno, -1 and errno) once, at this boundary.
 *  - Completion channels, async-event queues and CM channels belong to the
 *    core: a transport reports through openrdma_cq_notify(),
 *    openrdma_async_event_post() and openrdma_cm_event_post().
 *  - Never call application code, or block on the network, with a lock held.
 */
#ifndef OPENRDMA_TRANSPORT_H
#define OPENRDMA_TRANSPORT_H

#include <poll.h>
#include <stdbool.h>
#include <openrdma/verbs.h>
#include <openrdma/param.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any incompatible change of this header. */
#define OPENRDMA_TRANSPORT_ABI 2

#if defined(__GNUC__)
#define OPENRDMA_TRANSPORT_EXPORT __attribute__((visibility("default")))
#else
#define OPENRDMA_TRANSPORT_EXPORT
#endif

/*
 * The operations.  Keep each group sorted.  Every op receives objects that
 * the core has already validated (type, state where the core tracks it).
 */
struct openrdma_transport_ops {
	/* context */
	void (*context_close)(struct openrdma_context *ctx);
	int (*device_query)(struct openrdma_context *ctx,
			    struct openrdma_device_attr *attr);
	int (*gid_query)(struct openrdma_context *ctx, uint8_t port_num,
			 int index, union openrdma_gid *gid);
	int (*port_query)(struct openrdma_context *ctx, uint8_t port_num,
			  struct openrdma_port_attr *attr);

	/* protection domains and memory */
	int (*mr_dereg)(struct openrdma_mr *mr);
	int (*mr_reg)(struct openrdma_pd *pd, void *addr, size_t length,
		      int access, struct openrdma_mr **mr_out);
	/* pd, addr, length and access are all the new ones (the core fills
	 * in what flags leave unchanged) */
	int (*mr_rereg)(struct openrdma_mr *mr, int flags,
			struct openrdma_pd *pd, void *addr, size_t length,
			int access);
	int (*mw_alloc)(struct openrdma_pd *pd, enum openrdma_mw_type type,
			struct openrdma_mw **mw_out);
	int (*mw_dealloc)(struct openrdma_mw *mw);
	int (*pd_alloc)(struct openrdma_context *ctx,
			struct openrdma_pd **pd_out);
	int (*pd_dealloc)(struct openrdma_pd *pd);

	/* address handles */
	int (*ah_attr_from_wc)(struct openrdma_context *ctx, uint8_t port_num,
			       const struct openrdma_wc *wc,
			       const struct openrdma_grh *grh,
			       struct openrdma_ah_attr *attr);
	int (*ah_create)(struct openrdma_pd *pd, struct openrdma_ah_attr *attr,
			 struct openrdma_ah **ah_out);
	int (*ah_destroy)(struct openrdma_ah *ah);

	/* completion queues */
	int (*cq_create)(struct openrdma_context *ctx, int cqe, int comp_vector,
			 struct openrdma_cq **cq_out);
	int (*cq_destroy)(struct openrdma_cq *cq);
	int (*cq_poll)(struct openrdma_cq *cq, int num_entries,
		       struct openrdma_wc *wc);
	int (*cq_req_notify)(struct openrdma_cq *cq, int solicited_only);
	int (*cq_resize)(struct openrdma_cq *cq, int cqe);
	/*
	 * Optional: a thread about to sleep until cq has a completion (an
	 * event queue's waiter) also watches the transport's own descriptors
	 * and makes the progress itself when one is ready: one thread woken
	 * per message instead of two.  cq_sleep_begin fills at most max
	 * entries of pfd and cookie and returns how many; the core then arms
	 * cq itself (cq_req_notify, which says nobody polls, is not called)
	 * and sleeps.  Once awake it disarms cq and calls cq_sleep_end with
	 * the same entries, revents set, if begin filled any.
	 */
	int (*cq_sleep_begin)(struct openrdma_cq *cq, struct pollfd *pfd,
			      void **cookie, int max);
	void (*cq_sleep_end)(struct openrdma_cq *cq, const struct pollfd *pfd,
			     void **cookie, int n);

	/* queue pairs; qp_modify is called after the core checked the
	 * transition and the attributes it requires, see openrdma_qp_modify */
	int (*qp_create)(struct openrdma_pd *pd,
			 struct openrdma_qp_init_attr *init_attr,
			 struct openrdma_qp **qp_out);
	int (*qp_destroy)(struct openrdma_qp *qp);
	int (*qp_modify)(struct openrdma_qp *qp, struct openrdma_qp_attr *attr,
			 int attr_mask);
	int (*qp_post_recv)(struct openrdma_qp *qp, struct openrdma_recv_wr *wr,
			    struct openrdma_recv_wr **bad_wr);
	int (*qp_post_send)(struct openrdma_qp *qp, struct openrdma_send_wr *wr,
			    struct openrdma_send_wr **bad_wr);
	int (*qp_query)(struct openrdma_qp *qp, struct openrdma_qp_attr *attr,
			int attr_mask, struct openrdma_qp_init_attr *init_attr);

	/* shared receive queues */
	int (*srq_create)(struct openrdma_pd *pd,
			  struct openrdma_srq_init_attr *init_attr,
			  struct openrdma_srq **srq_out);
	int (*srq_destroy)(struct openrdma_srq *srq);
	int (*srq_modify)(struct openrdma_srq *srq,
			  struct openrdma_srq_attr *attr, int attr_mask);
	int (*srq_post_recv)(struct openrdma_srq *srq,
			     struct openrdma_recv_wr *wr,
			     struct openrdma_recv_wr **bad_wr);
	int (*srq_query)(struct openrdma_srq *srq,
			 struct openrdma_srq_attr *attr);

	/* connection manager; results go to the id's channel through
	 * openrdma_cm_event_post() */
	int (*cm_accept)(struct openrdma_cm_id *id, struct openrdma_qp *qp,
			 const struct openrdma_conn_param *param);
	/* optional (OPENRDMA_DEVICE_SOCKET_ADOPT): fd becomes the transport's
	 * on success only; see openrdma_cm_adopt_socket */
	int (*cm_adopt)(struct openrdma_cm_id *id, struct openrdma_qp *qp,
			int fd, const struct openrdma_conn_param *param);
	int (*cm_connect)(struct openrdma_cm_id *id, struct openrdma_qp *qp,
			  const struct sockaddr *dst,
			  const struct openrdma_conn_param *param);
	int (*cm_disconnect)(struct openrdma_cm_id *id,
			     const void *private_data,
			     uint8_t private_data_len);
	int (*cm_id_create)(struct openrdma_context *ctx,
			    enum openrdma_port_space ps,
			    struct openrdma_cm_id **id_out);
	int (*cm_id_destroy)(struct openrdma_cm_id *id);
	int (*cm_listen)(struct openrdma_cm_id *id, const struct sockaddr *addr,
			 int backlog);
	int (*cm_local_addr)(struct openrdma_cm_id *id,
			     struct sockaddr_storage *addr);
	int (*cm_peer_addr)(struct openrdma_cm_id *id,
			    struct sockaddr_storage *addr);
	int (*cm_reject)(struct openrdma_cm_id *id, const void *private_data,
			 uint8_t private_data_len);
};

/* ------------------------------------------------------------------ */
/* Devices and probing                                                */
/* ------------------------------------------------------------------ */

struct openrdma_probe;
struct openrdma_transport;

/*
 * One interface: a device port as the registry lists it.  Created by the
 * core from what probe() adds; the transport keeps its own data in priv.
 */
struct openrdma_device {
	char name[64]; /* interface name: "self0", "tcp0", "rxe0-1" */
	char dev_name[64]; /* the transport's device: "rxe0", "lo", "eth0" */
	const struct openrdma_transport *transport;
	const struct openrdma_transport_ops *ops; /* filled copy */
	uint8_t port_num;
	void *priv; /* transport data, freed with free_priv */
	void (*free_priv)(void *priv);
	/* parameters from the registry's config file ("key=value" strings) */
	char **params;
	int num_params;
};

/*
 * Called from probe(): adds one interface.  name is the interface name
 * (deterministic: <transport or device><index>[-<port>]).  priv is handed
 * back in dev->priv and released with free_priv (may be NULL).
 */
int openrdma_probe_device_add(struct openrdma_probe *probe, const char *name,
			      const char *dev_name, uint8_t port_num,
			      void *priv, void (*free_priv)(void *));
/* Called from probe(): says why the transport found nothing (printf). */
void openrdma_probe_explain(struct openrdma_probe *probe, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A config-file parameter of the interface being opened ("key"), or NULL. */
const char *openrdma_device_param(const struct openrdma_device *dev,
				  const char *key);

struct openrdma_transport {
	uint32_t abi_version; /* OPENRDMA_TRANSPORT_ABI */
	uint32_t size; /* sizeof(struct openrdma_transport) */
	const char *name; /* "self", "tcp", ... ; [a-z0-9_]+ */
	const char *description;
	/*
	 * Finds devices; returns 0 (even when none was found: explain why) or a
	 * negative code when probing itself failed.
	 */
	int (*probe)(struct openrdma_probe *probe);
	/*
	 * Opens a context on dev: allocates the transport's context (embedding
	 * struct openrdma_context) and returns it.  The core sets the rest,
	 * including async_fd (its own event queue's fd).
	 */
	int (*device_open)(struct openrdma_device *dev,
			   struct openrdma_context **ctx_out);
	/* Called once when the registry is torn down (may be NULL). */
	void (*fini)(void);
	const struct openrdma_transport_ops *ops;
	/* the transport's declared parameters, ending with an all-zero entry */
	const struct openrdma_param_def *params;
};

/* The plugin entry point: a dl transport exports exactly this symbol. */
#define OPENRDMA_TRANSPORT_INI_SYM_STR(abi) "openrdma_transport_ini_v" #abi
#define OPENRDMA_TRANSPORT_INI_SYM(abi) OPENRDMA_TRANSPORT_INI_SYM_STR(abi)
typedef const struct openrdma_transport *(*openrdma_transport_ini_fn)(void);

#define OPENRDMA_CONCAT_(a, b) a##b
#define OPENRDMA_CONCAT(a, b) OPENRDMA_CONCAT_(a, b)

/*
 * OPENRDMA_TRANSPORT_DEFINE(name, descriptor): one line at the end of a
 * transport.  Built in, it defines openrdma_transport_<name>_ptr, which the
 * generated registry/builtin.c lists (no constructors).  Built as a plugin
 * (OPENRDMA_TRANSPORT_DL defined), it exports the versioned entry point.
 */
#ifdef OPENRDMA_TRANSPORT_DL
#define OPENRDMA_TRANSPORT_INI_FN \
	OPENRDMA_CONCAT(openrdma_transport_ini_v, OPENRDMA_TRANSPORT_ABI)
/* Declared first: plugins build with -Wmissing-prototypes too. */
#define OPENRDMA_TRANSPORT_DEFINE(name, desc)                       \
	OPENRDMA_TRANSPORT_EXPORT const struct openrdma_transport * \
	OPENRDMA_TRANSPORT_INI_FN(void);                            \
	OPENRDMA_TRANSPORT_EXPORT const struct openrdma_transport * \
	OPENRDMA_TRANSPORT_INI_FN(void)                             \
	{                                                           \
		return &(desc);                                     \
	}
#else
#define OPENRDMA_TRANSPORT_DEFINE(name, desc) \
	const struct openrdma_transport       \
		*const openrdma_transport_##name##_ptr = &(desc)
#endif

/* ------------------------------------------------------------------ */
/* Reporting events to the core                                       */
/* ------------------------------------------------------------------ */

/*
 * A completion was added to cq.  solicited: it was a solicited receive or
 * an error.  If the CQ was armed accordingly, the core disarms it and
 * signals its channel.  Safe from any thread; takes no transport lock.
 */
void openrdma_cq_notify(struct openrdma_cq *cq, bool solicited);
/* Queues an async event on the context (takes a reference on the object). */
void openrdma_async_event_post(struct openrdma_context *ctx,
			       const struct openrdma_async_event *event);
/*
 * Queues a CM event on id's channel (copied).  For CONNECT_REQUEST, the
 * transport creates the new id with openrdma_cm_id_new_request() first.
 * Returns -OPENRDMA_ENOSPC if the channel is gone.
 */
int openrdma_cm_event_post(struct openrdma_cm_id *id,
			   const struct openrdma_cm_event *event);
/*
 * Creates the id for an incoming request on listen_id, through the
 * transport's cm_id_create, on the listener's channel.
 */
int openrdma_cm_id_new_request(struct openrdma_cm_id *listen_id,
			       struct openrdma_cm_id **id_out);
/*
 * Moves qp to ERR as the result of a failure, as the core's state machine
 * does for an error (the transport flushes).  Returns the previous state.
 */
enum openrdma_qp_state openrdma_qp_state_set(struct openrdma_qp *qp,
					     enum openrdma_qp_state state);

/*
 * Send flag that openrdma_mw_bind() sets on the BIND_MW work request it
 * posts for a type 1 window.  Type 1 windows are bound only that way; a
 * BIND_MW request the application posts binds type 2 windows, and one that
 * names a type 1 window completes with MW_BIND_ERR.  Accepted only with
 * OPENRDMA_WR_BIND_MW.
 */
#define OPENRDMA_SEND_TYPE1_BIND (1u << 31)

/*
 * Checks one send work request against the QP's type and granted caps: the
 * single definition of what a post may be refused for (-OPENRDMA_EINVAL;
 * the transport then sets *bad_wr to it).  Everything else is reported by
 * completion status.  Transports call it for each WR of a list.
 */
static inline int openrdma_send_wr_check(const struct openrdma_qp *qp,
					 const struct openrdma_send_wr *wr)
{
	uint64_t len = 0;
	int i;

	if ((unsigned int)wr->opcode >= OPENRDMA_WR_OPCODE_MAX)
		return -OPENRDMA_EINVAL;
	if (qp->qp_type == OPENRDMA_QPT_UD && wr->opcode != OPENRDMA_WR_SEND &&
	    wr->opcode != OPENRDMA_WR_SEND_WITH_IMM)
		return -OPENRDMA_EINVAL;
	if (qp->qp_type == OPENRDMA_QPT_UD && !wr->wr.ud.ah)
		return -OPENRDMA_EINVAL;
	if (wr->num_sge < 0 || (wr->num_sge > 0 && !wr->sg_list))
		return -OPENRDMA_EINVAL;
	if (wr->send_flags &
	    ~(unsigned int)(OPENRDMA_SEND_FENCE | OPENRDMA_SEND_SIGNALED |
			    OPENRDMA_SEND_SOLICITED | OPENRDMA_SEND_INLINE |
			    OPENRDMA_SEND_TYPE1_BIND))
		return -OPENRDMA_EINVAL;
	if ((wr->send_flags & OPENRDMA_SEND_TYPE1_BIND) &&
	    wr->opcode != OPENRDMA_WR_BIND_MW)
		return -OPENRDMA_EINVAL;
	if (wr->send_flags & OPENRDMA_SEND_INLINE) {
		for (i = 0; i < wr->num_sge; i++)
			len += wr->sg_list[i].length;
		if (len > qp->cap.max_inline_data)
			return -OPENRDMA_EINVAL;
		return 0;
	}
	if ((uint32_t)wr->num_sge > qp->cap.max_send_sge)
		return -OPENRDMA_EINVAL;
	if ((wr->opcode == OPENRDMA_WR_ATOMIC_CMP_AND_SWP ||
	     wr->opcode == OPENRDMA_WR_ATOMIC_FETCH_AND_ADD) &&
	    (wr->num_sge != 1 || wr->sg_list[0].length != 8))
		return -OPENRDMA_EINVAL;
	if (wr->opcode == OPENRDMA_WR_BIND_MW && !wr->bind_mw.mw)
		return -OPENRDMA_EINVAL;
	return 0;
}

/* Checks one receive work request against max_sge of its QP or SRQ. */
static inline int openrdma_recv_wr_check(uint32_t max_sge,
					 const struct openrdma_recv_wr *wr)
{
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge ||
	    (wr->num_sge > 0 && !wr->sg_list))
		return -OPENRDMA_EINVAL;
	return 0;
}

/* container_of for subclassed objects */
#define openrdma_container_of(ptr, type, member) \
	((type *)((char *)(ptr)-offsetof(type, member)))

#ifdef __cplusplus
}
#endif

#endif /* OPENRDMA_TRANSPORT_H */
