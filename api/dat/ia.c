/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Interface adapters: open, query, close, and the IA's bookkeeping (its
 * objects, work-request keys, CM ids, deferred work).
 *
 * An IA is one open context of the interface its registry entry names.
 * Connection events of all its CM ids arrive on one CM channel and are
 * routed to the EVDs of their owners (connect.c); provider-made async
 * events are handed to the dispatcher through an eventfd.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <utlist.h>

#include <openrdma/errno.h>
#include <openrdma/log.h>
#include <openrdma/transport.h>

#include "api/dat/provider.h"
#include "api/dat/slots.h"

/* The CM sink never keeps an event: the converter routes every one. */
#define CM_SINK_CAPACITY 16

struct datp_ia *datp_ia_get(DAT_IA_HANDLE handle)
{
	struct datp_ia *ia = (struct datp_ia *)datp_obj_get(handle, DATP_IA);

	return ia && !ia->query_only ? ia : NULL;
}

/* ------------------------------------------------------------ tables */

uint32_t datp_key_add(struct datp_ia *ia, enum datp_key_kind kind, void *owner)
{
	struct datp_key *k = calloc(1, sizeof(*k)), *old;

	if (!k)
		return 0;
	k->kind = kind;
	k->owner = owner;
	pthread_mutex_lock(&ia->lock);
	do {
		k->key = ++ia->next_key & ~DATP_KEY_RECV;
		HASH_FIND_INT(ia->keys, &k->key, old);
	} while (!k->key || old);
	HASH_ADD_INT(ia->keys, key, k);
	pthread_mutex_unlock(&ia->lock);
	return k->key;
}

void datp_key_del(struct datp_ia *ia, uint32_t key)
{
	struct datp_key *k;

	if (!key)
		return;
	pthread_mutex_lock(&ia->lock);
	HASH_FIND_INT(ia->keys, &key, k);
	if (k)
		HASH_DEL(ia->keys, k);
	pthread_mutex_unlock(&ia->lock);
	free(k);
}

struct datp_key *datp_key_find(struct datp_ia *ia, uint32_t key)
{
	struct datp_key *k;

	HASH_FIND_INT(ia->keys, &key, k);
	return k;
}

int datp_cmref_add(struct datp_ia *ia, struct openrdma_cm_id *id,
		   struct datp_obj *owner)
{
	struct datp_cmref *r = calloc(1, sizeof(*r));

	if (!r)
		return -OPENRDMA_ENOMEM;
	r->id = id;
	r->owner = owner;
	pthread_mutex_lock(&ia->lock);
	HASH_ADD_PTR(ia->cmrefs, id, r);
	pthread_mutex_unlock(&ia->lock);
	return 0;
}

struct datp_obj *datp_cmref_find(struct datp_ia *ia,
				 const struct openrdma_cm_id *id)
{
	struct datp_cmref *r;

	HASH_FIND_PTR(ia->cmrefs, &id, r);
	return r ? r->owner : NULL;
}

void datp_cmref_del_locked(struct datp_ia *ia, const struct openrdma_cm_id *id)
{
	struct datp_cmref *r;

	HASH_FIND_PTR(ia->cmrefs, &id, r);
	if (r) {
		HASH_DEL(ia->cmrefs, r);
		free(r);
	}
}

void datp_cmref_move(struct datp_ia *ia, const struct openrdma_cm_id *id,
		     struct datp_obj *owner)
{
	struct datp_cmref *r;

	HASH_FIND_PTR(ia->cmrefs, &id, r);
	if (r)
		r->owner = owner;
}

bool datp_busy_retry(int ret, int *tries)
{
	if (ret != -OPENRDMA_EBUSY || ++*tries > 1000)
		return false;
	usleep(1000);
	return true;
}

void datp_qp_destroy(struct openrdma_qp *qp)
{
	int ret, tries = 0;

	do {
		ret = openrdma_qp_destroy(qp);
	} while (datp_busy_retry(ret, &tries));
	if (ret)
		openrdma_warn("dat", "qp_destroy: %s", openrdma_strerror(ret));
}

static void bury_now(struct openrdma_cm_id *id, struct openrdma_qp *qp)
{
	int ret;

	if (id) {
		ret = openrdma_cm_id_destroy(id);
		if (ret)
			openrdma_warn("dat", "cm_id_destroy: %s",
				      openrdma_strerror(ret));
	}
	if (qp)
		datp_qp_destroy(qp);
}

void datp_ia_bury(struct datp_ia *ia, struct openrdma_cm_id *id,
		  struct openrdma_qp *qp)
{
	struct datp_dead_id *dead = malloc(sizeof(*dead));

	if (!dead) {
		openrdma_warn("dat", "out of memory: CM id %p leaked",
			      (void *)id);
		return;
	}
	dead->id = id;
	dead->qp = qp;
	pthread_mutex_lock(&ia->lock);
	LL_APPEND(ia->dead_ids, dead);
	pthread_mutex_unlock(&ia->lock);
}

void datp_cmref_drop(struct datp_ia *ia, struct openrdma_cm_id *id,
		     bool deferred)
{
	struct datp_cmref *r;

	if (!id)
		return;
	pthread_mutex_lock(&ia->lock);
	HASH_FIND_PTR(ia->cmrefs, &id, r);
	if (r)
		HASH_DEL(ia->cmrefs, r);
	pthread_mutex_unlock(&ia->lock);
	free(r);
	/*
	 * Destroying an id waits for its events in flight, so the
	 * dispatcher thread leaves it to an application thread.
	 */
	if (deferred)
		datp_ia_bury(ia, id, NULL);
	else
		bury_now(id, NULL);
}

void datp_ia_reap(struct datp_ia *ia)
{
	struct datp_dead_id *list, *d, *tmp;

	pthread_mutex_lock(&ia->lock);
	list = ia->dead_ids;
	ia->dead_ids = NULL;
	pthread_mutex_unlock(&ia->lock);
	LL_FOREACH_SAFE (list, d, tmp) {
		bury_now(d->id, d->qp);
		free(d);
	}
}

int datp_ia_null_cq(struct datp_ia *ia, struct openrdma_cq **cq_out)
{
	struct openrdma_comp_channel *ch;
	struct openrdma_cq *cq;
	int ret;

	pthread_mutex_lock(&ia->lock);
	cq = ia->null_cq;
	pthread_mutex_unlock(&ia->lock);
	if (cq) {
		*cq_out = cq;
		return 0;
	}
	ret = openrdma_comp_channel_create(ia->ctx, &ch);
	if (ret)
		return ret;
	ret = openrdma_cq_create(ia->ctx, 16, NULL, ch, 0, &cq);
	if (ret) {
		openrdma_comp_channel_destroy(ch);
		return ret;
	}
	pthread_mutex_lock(&ia->lock);
	if (!ia->null_cq) {
		ia->null_cq = cq;
		ia->null_ch = ch;
		cq = NULL;
	}
	*cq_out = ia->null_cq;
	pthread_mutex_unlock(&ia->lock);
	if (cq) { /* another thread made one first */
		openrdma_cq_destroy(cq);
		openrdma_comp_channel_destroy(ch);
	}
	return 0;
}

void datp_ia_count(struct datp_ia *ia, DAT_IA_COUNTERS which)
{
	atomic_fetch_add_explicit(&ia->counters[which], 1,
				  memory_order_relaxed);
}

/* ------------------------------------------------------------ async */

void datp_ia_post_async(struct datp_ia *ia, DAT_EVENT *event)
{
	int ret = -OPENRDMA_ENOENT;

	pthread_mutex_lock(&ia->async_lock);
	if (ia->async_evd) {
		event->evd_handle = ia->async_evd;
		ret = core_evd_enqueue(ia->async_evd->evd, event);
	}
	pthread_mutex_unlock(&ia->async_lock);
	if (ret)
		openrdma_dbg("dat", "async event 0x%x not posted: %s",
			     event->event_number, openrdma_strerror(ret));
	else
		datp_ia_count(ia, DCNT_IA_ASYNC_ERROR);
}

void datp_ia_defer_event(struct datp_ia *ia, const DAT_EVENT *event)
{
	struct datp_pending *p = malloc(sizeof(*p));

	if (!p) {
		openrdma_warn("dat", "out of memory: async event 0x%x lost",
			      event->event_number);
		return;
	}
	p->event = *event;
	p->next = NULL;
	pthread_mutex_lock(&ia->pending_lock);
	LL_APPEND(ia->pending, p);
	pthread_mutex_unlock(&ia->pending_lock);
	if (eventfd_write(ia->work_fd, 1))
		openrdma_warn("dat", "eventfd_write: %m");
}

/* The dispatcher's handler of the work fd. */
static void ia_work(void *arg)
{
	struct datp_ia *ia = arg;
	struct datp_pending *list, *p, *tmp;
	eventfd_t count;

	(void)eventfd_read(ia->work_fd, &count);
	pthread_mutex_lock(&ia->pending_lock);
	list = ia->pending;
	ia->pending = NULL;
	pthread_mutex_unlock(&ia->pending_lock);
	LL_FOREACH_SAFE (list, p, tmp) {
		datp_ia_post_async(ia, &p->event);
		free(p);
	}
}

/* ------------------------------------------------------------ lifetime */

static int ia_cm_start(struct datp_ia *ia)
{
	struct core_evd_attr attr = {
		.streams = CORE_EVD_STREAM_CM_REQ | CORE_EVD_STREAM_CM_MSG,
		.overflow = CORE_EVD_OVERFLOW_AUTO_RESET,
		.rec_size = DATP_REC_SIZE,
		.capacity = CM_SINK_CAPACITY,
		.context = ia,
	};
	int ret;

	ret = openrdma_cm_channel_create(ia->ctx, &ia->cm_ch);
	if (ret)
		return ret;
	ret = core_evd_create(&attr, &ia->cm_sink);
	if (ret)
		goto err_channel;
	ret = core_evd_cm_bind(ia->cm_sink, ia->cm_ch, datp_cm_convert, ia);
	if (ret)
		goto err_sink;
	ia->work_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (ia->work_fd < 0) {
		ret = -errno;
		goto err_unbind;
	}
	ret = core_disp_watch(ia->work_fd, ia_work, ia, &ia->work_watch);
	if (ret)
		goto err_fd;
	return 0;

err_fd:
	close(ia->work_fd);
	ia->work_fd = -1;
err_unbind:
	core_evd_cm_unbind(ia->cm_sink, ia->cm_ch);
err_sink:
	core_evd_free(ia->cm_sink);
	ia->cm_sink = NULL;
err_channel:
	openrdma_cm_channel_destroy(ia->cm_ch);
	ia->cm_ch = NULL;
	return ret;
}

/* Stops the events first: then nothing is converted while objects go. */
static void ia_cm_stop(struct datp_ia *ia)
{
	if (ia->cm_sink)
		core_evd_cm_unbind(ia->cm_sink, ia->cm_ch);
	if (ia->work_watch)
		core_disp_unwatch(ia->work_watch);
	ia->work_watch = NULL;
}

int datp_ia_create(struct datp_entry *entry, bool query_only,
		   struct datp_ia **ia_out)
{
	struct datp_ia *ia;
	uint8_t port;
	int ret;

	ia = calloc(1, sizeof(*ia));
	if (!ia)
		return -OPENRDMA_ENOMEM;
	ia->entry = entry;
	ia->query_only = query_only;
	ia->work_fd = -1;
	ret = -pthread_mutex_init(&ia->lock, NULL);
	if (ret)
		goto err_free;
	ret = -pthread_mutex_init(&ia->async_lock, NULL);
	if (ret)
		goto err_lock;
	ret = -pthread_mutex_init(&ia->pending_lock, NULL);
	if (ret)
		goto err_async_lock;

	ret = openrdma_device_find(entry->iface, &ia->dev);
	if (ret) {
		openrdma_info("dat", "%s: no interface %s: %s",
			      entry->info.ia_name, entry->iface,
			      openrdma_strerror(ret));
		goto err_pending_lock;
	}
	ret = openrdma_device_open(ia->dev, &ia->ctx);
	if (ret)
		goto err_pending_lock;
	ret = openrdma_device_query(ia->ctx, &ia->dev_attr);
	if (ret)
		goto err_close;
	port = ia->dev->port_num ? ia->dev->port_num : 1;
	ret = openrdma_port_query(ia->ctx, port, &ia->port_attr);
	if (ret)
		goto err_close;
	/* the IA's address names the interface; qualifiers give the port */
	ia->addr = ia->port_attr.addr;
	datp_addr_set_port(&ia->addr, 0);
	datp_pattr_init(ia);

	if (!query_only) {
		ret = ia_cm_start(ia);
		if (ret)
			goto err_close;
	}
	ret = datp_obj_init(&ia->obj, ia, DATP_IA);
	if (ret)
		goto err_cm;
	*ia_out = ia;
	return 0;

err_cm:
	if (!query_only) {
		ia_cm_stop(ia);
		close(ia->work_fd);
		core_evd_free(ia->cm_sink);
		openrdma_cm_channel_destroy(ia->cm_ch);
	}
err_close:
	openrdma_context_close(ia->ctx);
err_pending_lock:
	pthread_mutex_destroy(&ia->pending_lock);
err_async_lock:
	pthread_mutex_destroy(&ia->async_lock);
err_lock:
	pthread_mutex_destroy(&ia->lock);
err_free:
	free(ia);
	return ret;
}

static struct datp_obj *ia_first(struct datp_ia *ia, enum datp_kind kind)
{
	struct datp_obj *obj;

	pthread_mutex_lock(&ia->lock);
	obj = ia->objs[kind];
	pthread_mutex_unlock(&ia->lock);
	return obj;
}

/* Frees every object of the IA, users before what they use. */
static void ia_free_children(struct datp_ia *ia)
{
	struct datp_obj *obj;

	while ((obj = ia_first(ia, DATP_CR)))
		datp_cr_destroy((struct datp_cr *)obj, true);
	while ((obj = ia_first(ia, DATP_PSP)))
		datp_sp_destroy((struct datp_sp *)obj);
	while ((obj = ia_first(ia, DATP_RSP)))
		datp_sp_destroy((struct datp_sp *)obj);
	while ((obj = ia_first(ia, DATP_CSP)))
		datp_sp_destroy((struct datp_sp *)obj);
	while ((obj = ia_first(ia, DATP_EP)))
		datp_ep_destroy((struct datp_ep *)obj);
	while ((obj = ia_first(ia, DATP_RMR)))
		datp_rmr_destroy((struct datp_rmr *)obj);
	while ((obj = ia_first(ia, DATP_LMR)))
		datp_lmr_destroy((struct datp_lmr *)obj);
	while ((obj = ia_first(ia, DATP_SRQ)))
		datp_srq_destroy((struct datp_srq *)obj);
	while ((obj = ia_first(ia, DATP_EVD)))
		datp_evd_destroy((struct datp_evd *)obj);
	while ((obj = ia_first(ia, DATP_CNO)))
		datp_cno_destroy((struct datp_cno *)obj);
	while ((obj = ia_first(ia, DATP_PZ)))
		datp_pz_destroy((struct datp_pz *)obj);
}

void datp_ia_destroy(struct datp_ia *ia)
{
	struct datp_key *k, *ktmp;
	struct datp_cmref *r, *rtmp;
	struct datp_pending *p, *ptmp;

	if (!ia->query_only)
		ia_cm_stop(ia);
	ia_free_children(ia);
	datp_ia_reap(ia);
	if (!ia->query_only) {
		close(ia->work_fd);
		core_evd_free(ia->cm_sink);
		openrdma_cm_channel_destroy(ia->cm_ch);
	}
	if (ia->null_cq) {
		openrdma_cq_destroy(ia->null_cq);
		openrdma_comp_channel_destroy(ia->null_ch);
	}
	if (openrdma_context_close(ia->ctx))
		openrdma_warn("dat", "%s: context still in use",
			      ia->entry->info.ia_name);
	HASH_ITER (hh, ia->keys, k, ktmp) {
		HASH_DEL(ia->keys, k);
		free(k);
	}
	HASH_ITER (hh, ia->cmrefs, r, rtmp) {
		HASH_DEL(ia->cmrefs, r);
		free(r);
	}
	LL_FOREACH_SAFE (ia->pending, p, ptmp)
		free(p);
	pthread_mutex_destroy(&ia->pending_lock);
	pthread_mutex_destroy(&ia->async_lock);
	pthread_mutex_destroy(&ia->lock);
	datp_obj_fini(&ia->obj, DATP_IA);
}

/* ------------------------------------------------------------ DAT calls */

DAT_RETURN datp_ia_open(const DAT_NAME_PTR name, DAT_COUNT async_evd_min_qlen,
			DAT_EVD_HANDLE *async_evd_handle,
			DAT_IA_HANDLE *ia_handle)
{
	struct datp_evd *async = NULL;
	struct datp_entry *entry;
	struct datp_ia *ia;
	bool make_async;
	int ret;

	if (!name)
		return DATP_ARG(DAT_INVALID_ARG1, "name: NULL");
	if (!async_evd_handle)
		return DATP_ARG(DAT_INVALID_ARG3, "async_evd_handle: NULL");
	if (!ia_handle)
		return DATP_ARG(DAT_INVALID_ARG4, "ia_handle: NULL");
	entry = datp_entry_find(name);
	if (!entry) {
		openrdma_dbg("dat", "%s: not registered with this provider",
			     name);
		return DAT_CLASS_ERROR | DAT_PROVIDER_NOT_FOUND |
		       DAT_NAME_NOT_REGISTERED;
	}
	make_async = *async_evd_handle == DAT_HANDLE_NULL;
	if (!make_async && *async_evd_handle != DAT_EVD_ASYNC_EXISTS)
		return DATP_HANDLE(DAT_INVALID_HANDLE_EVD_ASYNC,
				   "async_evd_handle: %p is neither NULL nor "
				   "DAT_EVD_ASYNC_EXISTS",
				   *async_evd_handle);
	if (make_async && async_evd_min_qlen <= 0)
		return DATP_ARG(DAT_INVALID_ARG2, "async_evd_min_qlen: %d",
				async_evd_min_qlen);

	ret = datp_ia_create(entry, false, &ia);
	if (ret)
		return DATP_ERR(ret, DAT_NO_SUBTYPE, "%s: interface %s", name,
				entry->iface);
	if (make_async) {
		ret = datp_evd_make(ia, async_evd_min_qlen, NULL,
				    DAT_EVD_ASYNC_FLAG, &async);
		if (ret) {
			datp_ia_destroy(ia);
			return DATP_ERR(ret, DAT_RESOURCE_TEVD, "%s: async EVD",
					name);
		}
		ia->async_owned = true;
		*async_evd_handle = async;
	}
	openrdma_dbg("dat", "%s: opened interface %s", name, entry->iface);
	*ia_handle = ia;
	return DAT_SUCCESS;
}

DAT_RETURN datp_ia_query(DAT_IA_HANDLE ia_handle,
			 DAT_EVD_HANDLE *async_evd_handle,
			 DAT_IA_ATTR_MASK ia_attr_mask, DAT_IA_ATTR *ia_attr,
			 DAT_PROVIDER_ATTR_MASK provider_attr_mask,
			 DAT_PROVIDER_ATTR *provider_attr)
{
	struct datp_ia *ia = (struct datp_ia *)datp_obj_get(ia_handle, DATP_IA);
	DAT_PROVIDER_ATTR pattr;
	DAT_IA_ATTR iattr;

	if (!ia)
		return DATP_HANDLE(DAT_INVALID_HANDLE_IA, "ia %p", ia_handle);
	if (ia_attr_mask && !ia_attr)
		return DATP_ARG(DAT_INVALID_ARG4, "ia_attr: NULL, mask 0x%llx",
				(unsigned long long)ia_attr_mask);
	if (provider_attr_mask && !provider_attr)
		return DATP_ARG(DAT_INVALID_ARG6,
				"provider_attr: NULL, mask 0x%llx",
				(unsigned long long)provider_attr_mask);
	if (ia_attr_mask) {
		datp_ia_attr_fill(ia, &iattr);
		*ia_attr = iattr;
	}
	if (provider_attr_mask) {
		datp_provider_attr_fill(ia, &pattr);
		memcpy(provider_attr, &pattr, sizeof(pattr));
	}
	if (async_evd_handle) {
		pthread_mutex_lock(&ia->async_lock);
		*async_evd_handle = ia->async_evd ?
					    (DAT_EVD_HANDLE)ia->async_evd :
					    DAT_HANDLE_NULL;
		pthread_mutex_unlock(&ia->async_lock);
	}
	return DAT_SUCCESS;
}

/* Objects other than the async EVD dat_ia_open made. */
static bool ia_has_children(struct datp_ia *ia)
{
	struct datp_obj *obj;
	int kind;
	bool busy = false;

	pthread_mutex_lock(&ia->lock);
	for (kind = 0; kind < DATP_KIND_MAX && !busy; kind++) {
		for (obj = ia->objs[kind]; obj && !busy; obj = obj->next)
			busy = !(ia->async_owned && obj == &ia->async_evd->obj);
	}
	pthread_mutex_unlock(&ia->lock);
	return busy;
}

DAT_RETURN datp_ia_close(DAT_IA_HANDLE ia_handle, DAT_CLOSE_FLAGS close_flags)
{
	struct datp_ia *ia = datp_ia_get(ia_handle);

	if (!ia)
		return DATP_HANDLE(DAT_INVALID_HANDLE_IA, "ia %p", ia_handle);
	if (close_flags != DAT_CLOSE_ABRUPT_FLAG &&
	    close_flags != DAT_CLOSE_GRACEFUL_FLAG)
		return DATP_ARG(DAT_INVALID_ARG2, "close_flags 0x%x",
				close_flags);
	datp_ia_reap(ia);
	if (close_flags == DAT_CLOSE_GRACEFUL_FLAG && ia_has_children(ia))
		return DATP_STATE(DAT_INVALID_STATE_IA_IN_USE,
				  "graceful close of an IA with objects");
	openrdma_dbg("dat", "%s: closing", ia->entry->info.ia_name);
	datp_ia_destroy(ia);
	return DAT_SUCCESS;
}

DAT_RETURN datp_ia_ha_related(DAT_IA_HANDLE ia_handle, const DAT_NAME_PTR name,
			      DAT_BOOLEAN *answer)
{
	struct datp_ia *ia = datp_ia_get(ia_handle);
	struct datp_entry *other;

	if (!ia)
		return DATP_HANDLE(DAT_INVALID_HANDLE_IA, "ia %p", ia_handle);
	if (!name)
		return DATP_ARG(DAT_INVALID_ARG2, "name: NULL");
	if (!answer)
		return DATP_ARG(DAT_INVALID_ARG3, "answer: NULL");
	/* Two names are paths to the same thing when they name one interface */
	other = datp_entry_find(name);
	*answer = other && !strcmp(other->iface, ia->entry->iface) ? DAT_TRUE :
								     DAT_FALSE;
	return DAT_SUCCESS;
}
