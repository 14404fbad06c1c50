/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The provider library's entry points.  libdat2 (DAPL's or OpenRDMA's)
 * loads this library for a dat.conf line and calls dat_provider_init()
 * with the line's IA name and instance data ("<interface> 0"); the
 * provider registers a table for that name.  dat_provider_fini() removes
 * it when the registry lets the library go.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openrdma/errno.h>
#include <openrdma/log.h>

#include "core/export.h"
#include "api/dat/provider.h"
#include "api/dat/slots.h"

/* Slot order is the binary interface: see udat_redirection.h. */
const DAT_PROVIDER datp_provider_template = {
	.device_name = NULL,
	.extension = NULL,
	.ia_open_func = datp_ia_open,
	.ia_query_func = datp_ia_query,
	.ia_close_func = datp_ia_close,
	.set_consumer_context_func = datp_set_consumer_context,
	.get_consumer_context_func = datp_get_consumer_context,
	.get_handle_type_func = datp_get_handle_type,
	.cno_create_func = datp_cno_create,
	.cno_modify_agent_func = datp_cno_modify_agent,
	.cno_query_func = datp_cno_query,
	.cno_free_func = datp_cno_free,
	.cno_wait_func = datp_cno_wait,
	.cr_query_func = datp_cr_query,
	.cr_accept_func = datp_cr_accept,
	.cr_reject_func = datp_cr_reject,
	.cr_handoff_func = datp_cr_handoff,
	.evd_create_func = datp_evd_create,
	.evd_query_func = datp_evd_query,
	.evd_modify_cno_func = datp_evd_modify_cno,
	.evd_enable_func = datp_evd_enable,
	.evd_disable_func = datp_evd_disable,
	.evd_wait_func = datp_evd_wait,
	.evd_resize_func = datp_evd_resize,
	.evd_post_se_func = datp_evd_post_se,
	.evd_dequeue_func = datp_evd_dequeue,
	.evd_free_func = datp_evd_free,
	.ep_create_func = datp_ep_create,
	.ep_query_func = datp_ep_query,
	.ep_modify_func = datp_ep_modify,
	.ep_connect_func = datp_ep_connect,
	.ep_dup_connect_func = datp_ep_dup_connect,
	.ep_disconnect_func = datp_ep_disconnect,
	.ep_post_send_func = datp_ep_post_send,
	.ep_post_recv_func = datp_ep_post_recv,
	.ep_post_rdma_read_func = datp_ep_post_rdma_read,
	.ep_post_rdma_write_func = datp_ep_post_rdma_write,
	.ep_get_status_func = datp_ep_get_status,
	.ep_free_func = datp_ep_free,
	.lmr_create_func = datp_lmr_create,
	.lmr_query_func = datp_lmr_query,
	.lmr_free_func = datp_lmr_free,
	.rmr_create_func = datp_rmr_create,
	.rmr_query_func = datp_rmr_query,
	.rmr_bind_func = datp_rmr_bind,
	.rmr_free_func = datp_rmr_free,
	.psp_create_func = datp_psp_create,
	.psp_query_func = datp_psp_query,
	.psp_free_func = datp_psp_free,
	.rsp_create_func = datp_rsp_create,
	.rsp_query_func = datp_rsp_query,
	.rsp_free_func = datp_rsp_free,
	.pz_create_func = datp_pz_create,
	.pz_query_func = datp_pz_query,
	.pz_free_func = datp_pz_free,
	.psp_create_any_func = datp_psp_create_any,
	.ep_reset_func = datp_ep_reset,
	.evd_set_unwaitable_func = datp_evd_set_unwaitable,
	.evd_clear_unwaitable_func = datp_evd_clear_unwaitable,
	.lmr_sync_rdma_read_func = datp_lmr_sync_rdma_read,
	.lmr_sync_rdma_write_func = datp_lmr_sync_rdma_write,
	.ep_create_with_srq_func = datp_ep_create_with_srq,
	.ep_recv_query_func = datp_ep_recv_query,
	.ep_set_watermark_func = datp_ep_set_watermark,
	.srq_create_func = datp_srq_create,
	.srq_free_func = datp_srq_free,
	.srq_post_recv_func = datp_srq_post_recv,
	.srq_query_func = datp_srq_query,
	.srq_resize_func = datp_srq_resize,
	.srq_set_lw_func = datp_srq_set_lw,
	.csp_create_func = datp_csp_create,
	.csp_query_func = datp_csp_query,
	.csp_free_func = datp_csp_free,
	.ep_common_connect_func = datp_ep_common_connect,
	.rmr_create_for_ep_func = datp_rmr_create_for_ep,
	.ep_post_send_with_invalidate_func = datp_ep_post_send_with_invalidate,
	.ep_post_rdma_read_to_rmr_func = datp_ep_post_rdma_read_to_rmr,
	.cno_fd_create_func = datp_cno_fd_create,
	.cno_trigger_func = datp_cno_trigger,
	.ia_ha_related_func = datp_ia_ha_related,
#ifdef DAT_EXTENSIONS
	.handle_extendedop_func = datp_handle_extendedop,
#endif
};

static struct datp_entry *entries;
static pthread_mutex_t entries_lock = PTHREAD_MUTEX_INITIALIZER;

struct datp_entry *datp_entry_find(const char *name)
{
	struct datp_entry *e;

	pthread_mutex_lock(&entries_lock);
	for (e = entries; e; e = e->next)
		if (!strcmp(e->info.ia_name, name))
			break;
	pthread_mutex_unlock(&entries_lock);
	return e;
}

/*
 * The instance data names the interface; DAPL's lines add a port number,
 * which the interface name already implies.  Without instance data the
 * IA name is taken as the interface name.
 */
static void iface_parse(const char *instance_data, const char *ia_name,
			char *iface, size_t size)
{
	const char *p = instance_data ? instance_data : "";
	size_t n;

	while (*p == ' ' || *p == '\t')
		p++;
	n = strcspn(p, " \t");
	if (!n) {
		p = ia_name;
		n = strlen(p);
	}
	if (n >= size)
		n = size - 1;
	memcpy(iface, p, n);
	iface[n] = '\0';
}

OPENRDMA_EXPORT void dat_provider_init(const DAT_PROVIDER_INFO *info,
				       const char *instance_data)
{
	struct datp_entry *e;
	DAT_RETURN ret;

	if (!info)
		return;
	if (datp_entry_find(info->ia_name)) {
		openrdma_dbg("dat", "%s: registered already", info->ia_name);
		return;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		openrdma_err("dat", "%s: out of memory", info->ia_name);
		return;
	}
	e->info = *info;
	e->info.ia_name[DAT_NAME_MAX_LENGTH - 1] = '\0';
	iface_parse(instance_data, e->info.ia_name, e->iface, sizeof(e->iface));
	e->provider = datp_provider_template;
	e->provider.device_name = e->info.ia_name;
	e->provider.extension = e;

	pthread_mutex_lock(&entries_lock);
	e->next = entries;
	entries = e;
	pthread_mutex_unlock(&entries_lock);

	ret = dat_registry_add_provider(&e->provider, &e->info);
	if (ret != DAT_SUCCESS)
		openrdma_warn("dat", "%s: dat_registry_add_provider: 0x%08x",
			      e->info.ia_name, ret);
	else
		openrdma_dbg("dat", "%s: registered for interface %s",
			     e->info.ia_name, e->iface);
}

OPENRDMA_EXPORT void dat_provider_fini(const DAT_PROVIDER_INFO *info)
{
	struct datp_entry **pp, *e = NULL;

	if (!info)
		return;
	pthread_mutex_lock(&entries_lock);
	for (pp = &entries; *pp; pp = &(*pp)->next) {
		if (!strcmp((*pp)->info.ia_name, info->ia_name)) {
			e = *pp;
			*pp = e->next;
			break;
		}
	}
	pthread_mutex_unlock(&entries_lock);
	if (!e)
		return;
	dat_registry_remove_provider(&e->provider, &e->info);
	/*
	 * The registry calls this once the entry's last IA is closed, so
	 * no object refers to the table any more.
	 */
	free(e);
}

OPENRDMA_EXPORT DAT_RETURN dapl_extensions(DAT_HANDLE handle,
					   DAT_EXTENDED_OP op, va_list args)
{
	return datp_handle_extendedop(handle, op, args);
}
