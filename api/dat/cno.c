/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Consumer notification objects: an aggregate EVD of the engine whose
 * members are the EVDs given the CNO.  dat_cno_wait() waits for a member
 * with events; an fd CNO (dat_cno_fd_create) is readable while one has
 * events; a proxy agent is called from the engine's callback pool, once
 * per notification, and again after the consumer has read a member.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <openrdma/errno.h>
#include <openrdma/log.h>

#include "api/dat/provider.h"
#include "api/dat/slots.h"

struct datp_cno *datp_cno_get(DAT_CNO_HANDLE handle)
{
	return (struct datp_cno *)datp_obj_get(handle, DATP_CNO);
}

/* On the callback pool, no lock held: hand the member EVD to the agent. */
static void cno_notify(struct core_evd *aevd, void *arg)
{
	struct datp_cno *cno = arg;
	DAT_OS_WAIT_PROXY_AGENT agent;
	struct core_evd *member;
	DAT_EVD_HANDLE evd;

	if (core_evd_notify_dequeue(aevd, &member))
		return;
	evd = core_evd_context(member);
	pthread_mutex_lock(&cno->agent_lock);
	agent = cno->agent;
	pthread_mutex_unlock(&cno->agent_lock);
	if (agent.proxy_agent_func)
		agent.proxy_agent_func(agent.instance_data, evd);
}

void datp_cno_rearm(struct datp_cno *cno)
{
	if (cno->proxy_type == DAT_PROXY_TYPE_AGENT)
		core_evd_callback_arm(cno->aevd);
}

static DAT_RETURN cno_agent_set(struct datp_cno *cno,
				DAT_OS_WAIT_PROXY_AGENT agent, const char *fn)
{
	bool had = cno->agent.proxy_agent_func != NULL;
	bool has = agent.proxy_agent_func != NULL;
	int ret;

	pthread_mutex_lock(&cno->agent_lock);
	cno->agent = agent;
	pthread_mutex_unlock(&cno->agent_lock);
	if (has && !had) {
		ret = core_evd_callback_attach(cno->aevd, cno_notify, cno,
					       CORE_EVD_CB_ONESHOT);
		if (ret) {
			pthread_mutex_lock(&cno->agent_lock);
			memset(&cno->agent, 0, sizeof(cno->agent));
			pthread_mutex_unlock(&cno->agent_lock);
			return datp_fail(ret, DAT_NO_SUBTYPE, fn,
					 "core_evd_callback_attach");
		}
	} else if (!has && had) {
		core_evd_callback_detach(cno->aevd);
	}
	cno->proxy_type = has	       ? DAT_PROXY_TYPE_AGENT :
			  cno->fd >= 0 ? DAT_PROXY_TYPE_FD :
					 DAT_PROXY_TYPE_NONE;
	return DAT_SUCCESS;
}

static DAT_RETURN cno_make(struct datp_ia *ia, bool with_fd,
			   DAT_OS_WAIT_PROXY_AGENT agent,
			   struct datp_cno **cno_out, const char *fn)
{
	struct core_evd_attr attr = {
		.streams = CORE_EVD_STREAM_AEVD,
		.flags = with_fd ? CORE_EVD_FD : 0,
	};
	struct core_evd_info info;
	struct datp_cno *cno;
	DAT_RETURN dret;
	int ret;

	cno = calloc(1, sizeof(*cno));
	if (!cno)
		return datp_ret(-OPENRDMA_ENOMEM, DAT_RESOURCE_MEMORY);
	cno->fd = -1;
	ret = -pthread_mutex_init(&cno->agent_lock, NULL);
	if (ret)
		goto err_free;
	attr.context = cno;
	ret = core_evd_create(&attr, &cno->aevd);
	if (ret)
		goto err_lock;
	if (with_fd) {
		ret = core_evd_query(cno->aevd, &info);
		if (ret)
			goto err_evd;
		cno->fd = info.fd;
		cno->proxy_type = DAT_PROXY_TYPE_FD;
	}
	dret = cno_agent_set(cno, agent, fn);
	if (dret != DAT_SUCCESS) {
		core_evd_free(cno->aevd);
		pthread_mutex_destroy(&cno->agent_lock);
		free(cno);
		return dret;
	}
	ret = datp_obj_init(&cno->obj, ia, DATP_CNO);
	if (ret)
		goto err_evd;
	*cno_out = cno;
	return DAT_SUCCESS;

err_evd:
	core_evd_free(cno->aevd);
err_lock:
	pthread_mutex_destroy(&cno->agent_lock);
err_free:
	free(cno);
	return datp_fail(ret, DAT_RESOURCE_MEMORY, fn, "CNO");
}

DAT_RETURN datp_cno_create(DAT_IA_HANDLE ia_handle,
			   DAT_OS_WAIT_PROXY_AGENT agent,
			   DAT_CNO_HANDLE *cno_handle)
{
	struct datp_ia *ia = datp_ia_get(ia_handle);
	struct datp_cno *cno;
	DAT_RETURN ret;

	if (!ia)
		return DATP_HANDLE(DAT_INVALID_HANDLE_IA, "ia %p", ia_handle);
	if (!cno_handle)
		return DATP_ARG(DAT_INVALID_ARG3, "cno_handle: NULL");
	ret = cno_make(ia, false, agent, &cno, __func__);
	if (ret == DAT_SUCCESS)
		*cno_handle = cno;
	return ret;
}

DAT_RETURN datp_cno_fd_create(DAT_IA_HANDLE ia_handle, DAT_FD *fd,
			      DAT_CNO_HANDLE *cno_handle)
{
	struct datp_ia *ia = datp_ia_get(ia_handle);
	DAT_OS_WAIT_PROXY_AGENT none = { NULL, NULL };
	struct datp_cno *cno;
	DAT_RETURN ret;

	if (!ia)
		return DATP_HANDLE(DAT_INVALID_HANDLE_IA, "ia %p", ia_handle);
	if (!fd)
		return DATP_ARG(DAT_INVALID_ARG2, "fd: NULL");
	if (!cno_handle)
		return DATP_ARG(DAT_INVALID_ARG3, "cno_handle: NULL");
	ret = cno_make(ia, true, none, &cno, __func__);
	if (ret != DAT_SUCCESS)
		return ret;
	*fd = cno->fd;
	*cno_handle = cno;
	return DAT_SUCCESS;
}

DAT_RETURN datp_cno_modify_agent(DAT_CNO_HANDLE cno_handle,
				 DAT_OS_WAIT_PROXY_AGENT agent)
{
	struct datp_cno *cno = datp_cno_get(cno_handle);

	if (!cno)
		return DATP_HANDLE(DAT_INVALID_HANDLE_CNO, "cno %p",
				   cno_handle);
	return cno_agent_set(cno, agent, __func__);
}

DAT_RETURN datp_cno_query(DAT_CNO_HANDLE cno_handle, DAT_CNO_PARAM_MASK mask,
			  DAT_CNO_PARAM *param)
{
	struct datp_cno *cno = datp_cno_get(cno_handle);
	DAT_CNO_PARAM p;

	if (!cno)
		return DATP_HANDLE(DAT_INVALID_HANDLE_CNO, "cno %p",
				   cno_handle);
	/* the masks are the values 1 to 4, not bits */
	if ((unsigned int)mask > (unsigned int)DAT_CNO_FIELD_ALL)
		return DATP_ARG(DAT_INVALID_ARG2, "cno_param_mask 0x%x", mask);
	if (!param)
		return DATP_ARG(DAT_INVALID_ARG3, "cno_param: NULL");
	memset(&p, 0, sizeof(p));
	p.ia_handle = cno->obj.ia;
	p.proxy_type = cno->proxy_type;
	if (cno->proxy_type == DAT_PROXY_TYPE_AGENT) {
		pthread_mutex_lock(&cno->agent_lock);
		p.proxy.agent = cno->agent;
		pthread_mutex_unlock(&cno->agent_lock);
	} else if (cno->proxy_type == DAT_PROXY_TYPE_FD) {
		p.proxy.fd = cno->fd;
	}
	*param = p;
	return DAT_SUCCESS;
}

void datp_cno_destroy(struct datp_cno *cno)
{
	int ret;

	cno->obj.tag = DATP_TAG_FREED;
	if (cno->agent.proxy_agent_func)
		core_evd_callback_detach(cno->aevd);
	ret = core_evd_free(cno->aevd);
	if (ret)
		openrdma_warn("dat", "core_evd_free: %s",
			      openrdma_strerror(ret));
	pthread_mutex_destroy(&cno->agent_lock);
	datp_obj_fini(&cno->obj, DATP_CNO);
}

DAT_RETURN datp_cno_free(DAT_CNO_HANDLE cno_handle)
{
	struct datp_cno *cno = datp_cno_get(cno_handle);

	if (!cno)
		return DATP_HANDLE(DAT_INVALID_HANDLE_CNO, "cno %p",
				   cno_handle);
	if (datp_in_use(&cno->obj))
		return DATP_STATE(DAT_INVALID_STATE_CNO_IN_USE,
				  "%u EVDs use cno %p",
				  atomic_load(&cno->obj.users), cno_handle);
	datp_cno_destroy(cno);
	return DAT_SUCCESS;
}

/*
 * The checks that wait and trigger share: the CNO, and the output for
 * the EVD (argument number arg).  NULL, with *ret set, when one fails.
 */
static struct datp_cno *cno_args(DAT_CNO_HANDLE cno_handle,
				 const DAT_EVD_HANDLE *evd_handle,
				 DAT_RETURN_SUBTYPE arg, DAT_RETURN *ret,
				 const char *fn)
{
	struct datp_cno *cno = datp_cno_get(cno_handle);

	if (!cno)
		*ret = datp_fail(-OPENRDMA_EBADHANDLE, DAT_INVALID_HANDLE_CNO,
				 fn, "cno %p", cno_handle);
	else if (!evd_handle)
		*ret = datp_fail(-OPENRDMA_EINVAL, arg, fn, "evd_handle: NULL");
	else
		return cno;
	return NULL;
}

DAT_RETURN datp_cno_wait(DAT_CNO_HANDLE cno_handle, DAT_TIMEOUT timeout,
			 DAT_EVD_HANDLE *evd_handle)
{
	struct core_evd *member;
	struct datp_cno *cno;
	DAT_RETURN dret;
	int ret;

	cno = cno_args(cno_handle, evd_handle, DAT_INVALID_ARG3, &dret,
		       __func__);
	if (!cno)
		return dret;
	datp_obj_hold(&cno->obj);
	ret = core_evd_notify_wait(cno->aevd,
				   timeout == DAT_TIMEOUT_INFINITE ?
					   CORE_EVD_INFINITE :
					   (uint64_t)timeout,
				   &member);
	datp_obj_release(&cno->obj);
	if (ret == -OPENRDMA_ECANCELED)
		return DATP_STATE(DAT_INVALID_STATE_CNO_DEAD,
				  "cno %p freed during the wait", cno_handle);
	if (ret == -OPENRDMA_EBUSY)
		return DATP_STATE(DAT_INVALID_STATE_CNO_IN_USE,
				  "another thread waits on cno %p", cno_handle);
	if (ret)
		return datp_ret(ret, DAT_NO_SUBTYPE);
	*evd_handle = core_evd_context(member);
	return DAT_SUCCESS;
}

DAT_RETURN datp_cno_trigger(DAT_CNO_HANDLE cno_handle,
			    DAT_EVD_HANDLE *evd_handle)
{
	struct core_evd *member;
	struct datp_cno *cno;
	DAT_RETURN dret;
	int ret;

	cno = cno_args(cno_handle, evd_handle, DAT_INVALID_ARG2, &dret,
		       __func__);
	if (!cno)
		return dret;
	ret = core_evd_notify_dequeue(cno->aevd, &member);
	if (ret)
		return datp_ret(ret, DAT_NO_SUBTYPE);
	*evd_handle = core_evd_context(member);
	return DAT_SUCCESS;
}
