/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The peer agent's insides, shared by its files: the object table that
 * names objects by id, and the request handlers.  See conf_proto.h.
 */
#ifndef CONF_AGENT_H
#define CONF_AGENT_H

#include "conf.h"

#define CONF_AGENT_MAX_OBJ 4096

struct conf_agent_obj {
	enum conf_kind kind;
	void *ptr;
	void *buf; /* MR: the registered buffer, owned by the agent */
};

struct conf_agent {
	struct openrdma_context *ctx;
	struct openrdma_cm_channel *cm_ch;
	int nobj;
	struct conf_agent_obj obj[CONF_AGENT_MAX_OBJ]; /* id = index + 1 */
};

/* Enters an object in the table; its id goes to *id. */
int conf_agent_add(struct conf_agent *agent, enum conf_kind kind, void *ptr,
		   void *buf, uint32_t *id);
/* The object of that id and kind, or NULL. */
void *conf_agent_get(struct conf_agent *agent, enum conf_kind kind,
		     uint32_t id);
/* The id of an object, or 0. */
uint32_t conf_agent_find(struct conf_agent *agent, enum conf_kind kind,
			 const void *ptr);
/* Bytes [off, off + len) of the MR of that id, or NULL if out of range. */
uint8_t *conf_agent_mem(struct conf_agent *agent, uint32_t id, uint64_t off,
			uint64_t len);

/* A request handler: returns the reply's ret and fills the rest of rep. */
typedef int (*conf_agent_fn)(struct conf_agent *agent,
			     const struct conf_msg *req, struct conf_msg *rep);

int conf_agent_post_send(struct conf_agent *agent, const struct conf_msg *req,
			 struct conf_msg *rep);
int conf_agent_post_recv(struct conf_agent *agent, const struct conf_msg *req,
			 struct conf_msg *rep);
int conf_agent_poll(struct conf_agent *agent, const struct conf_msg *req,
		    struct conf_msg *rep);
int conf_agent_async_get(struct conf_agent *agent, const struct conf_msg *req,
			 struct conf_msg *rep);
int conf_agent_cm_listen(struct conf_agent *agent, const struct conf_msg *req,
			 struct conf_msg *rep);
int conf_agent_cm_connect(struct conf_agent *agent, const struct conf_msg *req,
			  struct conf_msg *rep);
/* CM_ACCEPT, CM_REJECT and CM_DISCONNECT */
int conf_agent_cm_call(struct conf_agent *agent, const struct conf_msg *req,
		       struct conf_msg *rep);
int conf_agent_cm_event(struct conf_agent *agent, const struct conf_msg *req,
			struct conf_msg *rep);

#endif /* CONF_AGENT_H */
