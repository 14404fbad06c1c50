/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Consumer calls of event dispatchers and notification objects.
 * Each checks its handle, translates an IA index to the provider's IA,
 * and calls the slot of the table the handle's object points to.
 */
#include "config.h"

#include <dat2/dat_redirection.h>

#include "core/export.h"
#include "registry/dat/datreg.h"

OPENRDMA_EXPORT DAT_RETURN dat_cno_create(DAT_IA_HANDLE ia_handle,
					  DAT_OS_WAIT_PROXY_AGENT agent,
					  DAT_CNO_HANDLE *cno_handle)
{
	return DATREG_IA_CALL(ia_handle, cno_create_func, agent, cno_handle);
}

OPENRDMA_EXPORT DAT_RETURN dat_cno_modify_agent(DAT_CNO_HANDLE cno_handle,
						DAT_OS_WAIT_PROXY_AGENT agent)
{
	return DATREG_CALL(cno_handle, DAT_INVALID_HANDLE_CNO,
			   cno_modify_agent_func, agent);
}

OPENRDMA_EXPORT DAT_RETURN dat_cno_query(DAT_CNO_HANDLE cno_handle,
					 DAT_CNO_PARAM_MASK cno_param_mask,
					 DAT_CNO_PARAM *cno_param)
{
	return DATREG_CALL(cno_handle, DAT_INVALID_HANDLE_CNO, cno_query_func,
			   cno_param_mask, cno_param);
}

OPENRDMA_EXPORT DAT_RETURN dat_cno_free(DAT_CNO_HANDLE cno_handle)
{
	return DATREG_CALL(cno_handle, DAT_INVALID_HANDLE_CNO, cno_free_func);
}

OPENRDMA_EXPORT DAT_RETURN dat_cno_wait(DAT_CNO_HANDLE cno_handle,
					DAT_TIMEOUT timeout,
					DAT_EVD_HANDLE *evd_handle)
{
	return DATREG_CALL(cno_handle, DAT_INVALID_HANDLE_CNO, cno_wait_func,
			   timeout, evd_handle);
}

OPENRDMA_EXPORT DAT_RETURN dat_evd_create(DAT_IA_HANDLE ia_handle,
					  DAT_COUNT evd_min_qlen,
					  DAT_CNO_HANDLE cno_handle,
					  DAT_EVD_FLAGS evd_flags,
					  DAT_EVD_HANDLE *evd_handle)
{
	return DATREG_IA_CALL(ia_handle, evd_create_func, evd_min_qlen,
			      cno_handle, evd_flags, evd_handle);
}

OPENRDMA_EXPORT DAT_RETURN dat_evd_query(DAT_EVD_HANDLE evd_handle,
					 DAT_EVD_PARAM_MASK evd_param_mask,
					 DAT_EVD_PARAM *evd_param)
{
	return DATREG_CALL(evd_handle, DAT_INVALID_HANDLE_EVD_REQUEST,
			   evd_query_func, evd_param_mask, evd_param);
}

OPENRDMA_EXPORT DAT_RETURN dat_evd_modify_cno(DAT_EVD_HANDLE evd_handle,
					      DAT_CNO_HANDLE cno_handle)
{
	return DATREG_CALL(evd_handle, DAT_INVALID_HANDLE_EVD_REQUEST,
			   evd_modify_cno_func, cno_handle);
}

OPENRDMA_EXPORT DAT_RETURN dat_evd_enable(DAT_EVD_HANDLE evd_handle)
{
	return DATREG_CALL(evd_handle, DAT_INVALID_HANDLE_EVD_REQUEST,
			   evd_enable_func);
}

OPENRDMA_EXPORT DAT_RETURN dat_evd_disable(DAT_EVD_HANDLE evd_handle)
{
	return DATREG_CALL(evd_handle, DAT_INVALID_HANDLE_EVD_REQUEST,
			   evd_disable_func);
}

OPENRDMA_EXPORT DAT_RETURN dat_evd_wait(DAT_EVD_HANDLE evd_handle,
					DAT_TIMEOUT timeout,
					DAT_COUNT threshold, DAT_EVENT *event,
					DAT_COUNT *n_more_events)
{
	return DATREG_CALL(evd_handle, DAT_INVALID_HANDLE_EVD_REQUEST,
			   evd_wait_func, timeout, threshold, event,
			   n_more_events);
}

OPENRDMA_EXPORT DAT_RETURN dat_evd_resize(DAT_EVD_HANDLE evd_handle,
					  DAT_COUNT evd_min_qlen)
{
	return DATREG_CALL(evd_handle, DAT_INVALID_HANDLE_EVD_REQUEST,
			   evd_resize_func, evd_min_qlen);
}

OPENRDMA_EXPORT DAT_RETURN dat_evd_post_se(DAT_EVD_HANDLE evd_handle,
					   const DAT_EVENT *event)
{
	return DATREG_CALL(evd_handle, DAT_INVALID_HANDLE_EVD_REQUEST,
			   evd_post_se_func, event);
}

OPENRDMA_EXPORT DAT_RETURN dat_evd_dequeue(DAT_EVD_HANDLE evd_handle,
					   DAT_EVENT *event)
{
	return DATREG_CALL(evd_handle, DAT_INVALID_HANDLE_EVD_REQUEST,
			   evd_dequeue_func, event);
}

OPENRDMA_EXPORT DAT_RETURN dat_evd_free(DAT_EVD_HANDLE evd_handle)
{
	return DATREG_CALL(evd_handle, DAT_INVALID_HANDLE_EVD_REQUEST,
			   evd_free_func);
}

OPENRDMA_EXPORT DAT_RETURN dat_evd_set_unwaitable(DAT_EVD_HANDLE evd_handle)
{
	return DATREG_CALL(evd_handle, DAT_INVALID_HANDLE_EVD_REQUEST,
			   evd_set_unwaitable_func);
}

OPENRDMA_EXPORT DAT_RETURN dat_evd_clear_unwaitable(DAT_EVD_HANDLE evd_handle)
{
	return DATREG_CALL(evd_handle, DAT_INVALID_HANDLE_EVD_REQUEST,
			   evd_clear_unwaitable_func);
}

OPENRDMA_EXPORT DAT_RETURN dat_cno_fd_create(DAT_IA_HANDLE ia_handle,
					     DAT_FD *fd,
					     DAT_CNO_HANDLE *cno_handle)
{
	return DATREG_IA_CALL(ia_handle, cno_fd_create_func, fd, cno_handle);
}

OPENRDMA_EXPORT DAT_RETURN dat_cno_trigger(DAT_CNO_HANDLE cno_handle,
					   DAT_EVD_HANDLE *evd_handle)
{
	return DATREG_CALL(cno_handle, DAT_INVALID_HANDLE_CNO, cno_trigger_func,
			   evd_handle);
}
