/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Interfaces and interface adapters: the list of interfaces, opening one
 * as an IA, what it_ia_query() reports, and the abrupt it_ia_free().
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utlist.h>

#include <openrdma/registry.h>

#include "api/itapi/itapi.h"
#include "core/export.h"

static it_transport_type_t transport_of(const struct openrdma_device_attr *dev)
{
	switch (dev->node_transport) {
	case OPENRDMA_NODE_IB:
		return IT_IB_TRANSPORT;
	case OPENRDMA_NODE_IWARP:
		return IT_IWARP_TCP_TRANSPORT;
	default:
		/* self, shm, tcp: addressed like IB (see it_addr(3)) */
		return IT_VENDOR_TRANSPORT;
	}
}

/* A software interface needs no open to tell its type; a device does. */
static it_transport_type_t device_transport(struct openrdma_device *dev)
{
	const char *tname = openrdma_device_transport_name(dev);
	struct openrdma_device_attr attr;
	struct openrdma_context *ctx;
	it_transport_type_t type = IT_VENDOR_TRANSPORT;

	if (tname && strcmp(tname, "verbs") && strcmp(tname, "vfio"))
		return type;
	if (openrdma_device_open(dev, &ctx))
		return type;
	if (!openrdma_device_query(ctx, &attr))
		type = transport_of(&attr);
	openrdma_context_close(ctx);
	return type;
}

OPENRDMA_EXPORT void it_interface_list(it_interface_t *interfaces,
				       size_t *num_interfaces,
				       size_t *total_interfaces)
{
	struct openrdma_device **list;
	size_t room, i;
	int num = 0;

	if (!num_interfaces || !total_interfaces) {
		itapi_arg_err("it_interface_list", "num_interfaces", "NULL");
		return;
	}
	room = interfaces ? *num_interfaces : 0;
	if (openrdma_device_list_get(&list, &num)) {
		*num_interfaces = 0;
		*total_interfaces = 0;
		return;
	}
	for (i = 0; i < (size_t)num && i < room; i++) {
		memset(&interfaces[i], 0, sizeof(interfaces[i]));
		interfaces[i].major_version = ITAPI_MAJOR;
		interfaces[i].minor_version = ITAPI_MINOR;
		interfaces[i].transport_type = device_transport(list[i]);
		snprintf(interfaces[i].name, sizeof(interfaces[i].name), "%s",
			 openrdma_device_name(list[i]));
	}
	openrdma_device_list_free(list);
	*num_interfaces = i;
	*total_interfaces = (size_t)num;
}

bool itapi_spigot_valid(const struct itapi_ia *ia, size_t spigot_id)
{
	return spigot_id < ia->num_spigots;
}

size_t itapi_pdata_max(const struct itapi_ia *ia, uint16_t dev_max)
{
	return dev_max < IT_MAX_PRIV_DATA ? dev_max : IT_MAX_PRIV_DATA;
}

static int ia_locks_init(struct itapi_ia *ia)
{
	pthread_mutexattr_t rec;
	int ret;

	ret = -pthread_mutexattr_init(&rec);
	if (ret)
		return ret;
	ret = -pthread_mutexattr_settype(&rec, PTHREAD_MUTEX_RECURSIVE);
	if (ret)
		goto out;
	ret = -pthread_mutex_init(&ia->async_lock, &rec);
	if (ret)
		goto out;
	pthread_mutex_init(&ia->lock, NULL);
	pthread_mutex_init(&ia->cm_lock, NULL);
	pthread_mutex_init(&ia->key_lock, NULL);
out:
	pthread_mutexattr_destroy(&rec);
	return ret;
}

static void ia_locks_fini(struct itapi_ia *ia)
{
	pthread_mutex_destroy(&ia->key_lock);
	pthread_mutex_destroy(&ia->cm_lock);
	pthread_mutex_destroy(&ia->lock);
	pthread_mutex_destroy(&ia->async_lock);
}

static int ia_ports_query(struct itapi_ia *ia)
{
	size_t i;
	int ret;

	ia->num_spigots = ia->dev.phys_port_cnt;
	ia->ports = calloc(ia->num_spigots ? ia->num_spigots : 1,
			   sizeof(*ia->ports));
	if (!ia->ports)
		return -OPENRDMA_ENOMEM;
	for (i = 0; i < ia->num_spigots; i++) {
		ret = openrdma_port_query(ia->ctx, (uint8_t)(i + 1),
					  &ia->ports[i]);
		if (ret) {
			free(ia->ports);
			ia->ports = NULL;
			return ret;
		}
	}
	return 0;
}

OPENRDMA_EXPORT it_status_t it_ia_create(const char *name,
					 uint32_t major_version,
					 uint32_t minor_version,
					 it_ia_handle_t *ia_handle)
{
	struct openrdma_device *dev;
	struct itapi_ia *ia;
	int ret;

	if (!name || !*name || strlen(name) >= IT_INTERFACE_NAME_SIZE) {
		itapi_arg_err("it_ia_create", "name", "NULL or too long");
		return IT_ERR_INVALID_NAME;
	}
	/* Version 2 calls mean what 2.0 and 2.1 say; 1.x is not offered. */
	if (major_version != ITAPI_MAJOR) {
		itapi_arg_err("it_ia_create", "major_version", "%u",
			      major_version);
		return IT_ERR_INVALID_MAJOR_VERSION;
	}
	if (minor_version > ITAPI_MINOR) {
		itapi_arg_err("it_ia_create", "minor_version", "%u",
			      minor_version);
		return IT_ERR_INVALID_MINOR_VERSION;
	}
	if (!ia_handle) {
		itapi_arg_err("it_ia_create", "ia_handle", "NULL");
		return IT_ERR_FAULT;
	}
	ret = openrdma_device_find(name, &dev);
	if (ret) {
		itapi_arg_err("it_ia_create", "name", "no interface %s", name);
		return ret == -OPENRDMA_ENODEV ?
			       IT_ERR_INVALID_NAME :
			       itapi_status(ret, IT_ERR_INVALID_NAME);
	}

	ia = calloc(1, sizeof(*ia));
	if (!ia)
		return IT_ERR_RESOURCES;
	snprintf(ia->name, sizeof(ia->name), "%s", name);
	ia->minor_version = minor_version;
	ret = ia_locks_init(ia);
	if (ret)
		goto err_free;
	ret = openrdma_device_open(dev, &ia->ctx);
	if (ret)
		goto err_locks;
	ret = openrdma_device_query(ia->ctx, &ia->dev);
	if (ret)
		goto err_close;
	ia->transport = transport_of(&ia->dev);
	ret = ia_ports_query(ia);
	if (ret)
		goto err_close;
	ret = itapi_cm_init(ia);
	if (ret)
		goto err_ports;
	ret = itapi_obj_init(&ia->obj, IT_HANDLE_TYPE_IA, ia);
	if (ret)
		goto err_cm;

	*ia_handle = (it_ia_handle_t)ia;
	return IT_SUCCESS;

err_cm:
	itapi_cm_fini(ia);
err_ports:
	free(ia->ports);
err_close:
	openrdma_context_close(ia->ctx);
err_locks:
	ia_locks_fini(ia);
err_free:
	free(ia);
	return itapi_status(ret, IT_ERR_INVALID_NAME);
}

/* The first object of the type still listed; AEVDs after the SEVDs. */
static struct itapi_obj *ia_first(struct itapi_ia *ia,
				  it_handle_type_enum_t type, bool aevd)
{
	struct itapi_obj *obj, *found = NULL;

	pthread_mutex_lock(&ia->lock);
	DL_FOREACH (ia->objs, obj) {
		if (obj->type != type)
			continue;
		if (type == IT_HANDLE_TYPE_EVD &&
		    aevd != (((struct itapi_evd *)obj)->stream ==
			     IT_AEVD_NOTIFICATION_EVENT_STREAM))
			continue;
		found = obj;
		break;
	}
	pthread_mutex_unlock(&ia->lock);
	return found;
}

/* Every child, dependents before what they depend on. */
static void ia_children_destroy(struct itapi_ia *ia)
{
	struct itapi_obj *obj;

	while ((obj = ia_first(ia, IT_HANDLE_TYPE_UD_SVC_REQ, false)))
		itapi_ud_svc_destroy(obj);
	while ((obj = ia_first(ia, IT_HANDLE_TYPE_EP, false)))
		itapi_ep_destroy((struct itapi_ep *)obj);
	while ((obj = ia_first(ia, IT_HANDLE_TYPE_LISTEN, false)))
		itapi_listen_destroy((struct itapi_listen *)obj);
	while ((obj = ia_first(ia, IT_HANDLE_TYPE_ADDR, false)))
		itapi_ah_destroy((struct itapi_ah *)obj);
	while ((obj = ia_first(ia, IT_HANDLE_TYPE_RMR, false)))
		itapi_rmr_destroy((struct itapi_rmr *)obj);
	while ((obj = ia_first(ia, IT_HANDLE_TYPE_LMR, false)))
		itapi_lmr_destroy((struct itapi_lmr *)obj);
	while ((obj = ia_first(ia, IT_HANDLE_TYPE_SRQ, false)))
		itapi_srq_destroy((struct itapi_srq *)obj);
	while ((obj = ia_first(ia, IT_HANDLE_TYPE_EVD, false)))
		itapi_evd_destroy((struct itapi_evd *)obj);
	while ((obj = ia_first(ia, IT_HANDLE_TYPE_EVD, true)))
		itapi_evd_destroy((struct itapi_evd *)obj);
	while ((obj = ia_first(ia, IT_HANDLE_TYPE_PZ, false)))
		itapi_pz_destroy((struct itapi_pz *)obj);
}

OPENRDMA_EXPORT it_status_t it_ia_free(it_ia_handle_t ia_handle)
{
	struct itapi_ia *ia = to_ia(ia_handle);
	int ret;

	if (!itapi_valid(ia, IT_HANDLE_TYPE_IA)) {
		itapi_arg_err("it_ia_free", "ia_handle", "not an IA");
		return IT_ERR_INVALID_IA;
	}
	itapi_obj_fini(&ia->obj);
	/* No CM event may create new state while the children go. */
	itapi_cm_stop(ia);
	itapi_cm_requests_drop(ia);
	ia_children_destroy(ia);
	itapi_cm_fini(ia);
	if (ia->svc_cq)
		openrdma_cq_destroy(ia->svc_cq);
	if (ia->svc_pd)
		openrdma_pd_dealloc(ia->svc_pd);
	ret = openrdma_context_close(ia->ctx);
	if (ret)
		openrdma_warn(ITAPI_LOG, "%s: context_close: %s", ia->name,
			      openrdma_strerror(ret));
	free(ia->ports);
	ia_locks_fini(ia);
	free(ia);
	return IT_SUCCESS;
}

/* sw_major and sw_minor: the library's version. */
static void sw_version(uint32_t *major, uint32_t *minor)
{
	unsigned int ma = 0, mi = 0;

	if (sscanf(openrdma_version(), "%u.%u", &ma, &mi) != 2)
		ma = mi = 0;
	*major = ma;
	*minor = mi;
}

static void spigot_fill(struct itapi_ia *ia, size_t i, it_spigot_info_t *sp,
			it_net_addr_t *na)
{
	struct openrdma_port_attr port;
	const struct sockaddr *sa;

	/* fresh: the port may have gone down since the IA was made */
	if (openrdma_port_query(ia->ctx, (uint8_t)(i + 1), &port))
		port = ia->ports[i];
	sp->spigot_id = i;
	sp->max_rc_send_len = ia->dev.max_msg_size;
	sp->max_rc_rdma_len = ia->dev.max_msg_size;
	sp->max_ud_send_len = ia->dev.device_cap_flags & OPENRDMA_DEVICE_UD ?
				      ia->dev.max_ud_msg_size :
				      0;
	sp->spigot_online =
		port.state == OPENRDMA_PORT_ACTIVE ||
				port.state == OPENRDMA_PORT_ACTIVE_DEFER ?
			IT_TRUE :
			IT_FALSE;
	sp->active_side_conn_qual = IT_IANA_PORT | IT_IB_SERVICEID;
	sp->passive_side_conn_qual = IT_IANA_PORT | IT_IB_SERVICEID;
	sa = (const struct sockaddr *)&port.addr;
	sp->num_net_addr = 0;
	sp->net_addr = NULL;
	if (sa->sa_family == AF_INET || sa->sa_family == AF_INET6) {
		itapi_net_addr_from_sockaddr(sa, na);
		sp->num_net_addr = 1;
		sp->net_addr = na;
	}
}

static it_boolean_t cap(const struct itapi_ia *ia, uint32_t flags)
{
	return (ia->dev.device_cap_flags & flags) == flags ? IT_TRUE : IT_FALSE;
}

static void info_fill(struct itapi_ia *ia, it_ia_info_t *info)
{
	const struct openrdma_device_attr *dev = &ia->dev;
	size_t svc_req = 0, svc_rep = 0;

	sw_version(&info->sw_major_version, &info->sw_minor_version);
	info->api_major_version = ITAPI_MAJOR;
	info->api_minor_version = ITAPI_MINOR;
	info->transport_type = ia->transport;
	if (ia->transport == IT_IB_TRANSPORT) {
		info->vendor.ib.vendor = dev->vendor_id & 0xffffff;
		info->vendor.ib.device = (uint16_t)dev->vendor_part_id;
		info->vendor.ib.revision = dev->hw_ver;
	}
	info->dto_alignment_hint = 64;
	if (dev->device_cap_flags & OPENRDMA_DEVICE_RC)
		info->supported_service_types |= IT_RC_SERVICE;
	if (dev->device_cap_flags & OPENRDMA_DEVICE_UD)
		info->supported_service_types |= IT_UD_SERVICE;
	info->ep_work_queues_resizable = IT_FALSE;
	info->three_way_handshake_support = cap(ia, OPENRDMA_DEVICE_THREE_WAY);
	info->private_data_support =
		dev->max_pdata_connect ? IT_TRUE : IT_FALSE;
	info->max_message_size_support = IT_TRUE;
	info->ird_ord_ia_support = IT_TRUE;
	info->ird_ord_suppressible = IT_FALSE;
	info->spigot_online_support = IT_TRUE;
	info->spigot_offline_support = IT_TRUE;
	info->connect_private_data_len =
		itapi_pdata_max(ia, dev->max_pdata_connect);
	info->accept_private_data_len =
		itapi_pdata_max(ia, dev->max_pdata_accept);
	info->reject_private_data_len =
		itapi_pdata_max(ia, dev->max_pdata_reject);
	info->disconnect_private_data_len =
		itapi_pdata_max(ia, dev->max_pdata_disconnect);
	/* UD service requests ride on connects and rejects (ud_svc.c) */
	if (dev->max_pdata_connect >= ITAPI_SVC_REQ_HDR &&
	    dev->max_pdata_reject >= ITAPI_SVC_REP_HDR) {
		svc_req = dev->max_pdata_connect - ITAPI_SVC_REQ_HDR;
		svc_rep = dev->max_pdata_reject - ITAPI_SVC_REP_HDR;
	}
	info->ud_req_private_data_len =
		svc_req < IT_MAX_PRIV_DATA ? svc_req : IT_MAX_PRIV_DATA;
	info->ud_rep_private_data_len =
		svc_rep < IT_MAX_PRIV_DATA ? svc_rep : IT_MAX_PRIV_DATA;
	info->srq_support = cap(ia, OPENRDMA_DEVICE_SRQ);
	info->hard_hi_watermark_support = IT_FALSE;
	info->soft_hi_watermark_support = IT_FALSE;
	info->srq_resizable = cap(ia, OPENRDMA_DEVICE_SRQ);
	info->extended_iwarp_qp_states = IT_FALSE;
	info->socket_conversion_support = cap(ia, OPENRDMA_DEVICE_SOCKET_ADOPT);
	info->rdma_read_ord_increasable = IT_FALSE;
	info->rdma_read_ird_modifiable = IT_FALSE;
	if (dev->device_cap_flags & OPENRDMA_DEVICE_MW_TYPE1)
		info->rmr_types_supported |= IT_RMR_TYPE_NARROW;
	if (dev->device_cap_flags & OPENRDMA_DEVICE_MW_TYPE2)
		info->rmr_types_supported |= IT_RMR_TYPE_WIDE;
	info->addr_mode_relative_support = cap(ia, OPENRDMA_DEVICE_ZERO_BASED);
	info->rdma_read_requires_remote_write =
		ia->transport == IT_IWARP_TCP_TRANSPORT ? IT_TRUE : IT_FALSE;
	info->ep_rdma_enables_modifiable = IT_TRUE;
	info->rdma_read_local_extensions = IT_FALSE;
	info->dto_evd_overflow_detection = IT_TRUE;
	info->atomic_support =
		dev->atomic_cap != OPENRDMA_ATOMIC_NONE ? IT_TRUE : IT_FALSE;
	info->lmr_link_support = IT_TRUE;
	info->direct_lmr_handle_support = IT_FALSE;
	info->direct_lmr_handle = (it_lmr_handle_t)IT_NULL_HANDLE;
	info->post_send_unlink_remote_support =
		cap(ia, OPENRDMA_DEVICE_SEND_INV | OPENRDMA_DEVICE_MW_TYPE2);
	info->narrow_rmr_unlink_support = cap(ia, OPENRDMA_DEVICE_MW_TYPE1);
	info->wide_rmr_unlink_support =
		cap(ia, OPENRDMA_DEVICE_SEND_INV | OPENRDMA_DEVICE_MW_TYPE2);
	info->unlink_fence_support = IT_TRUE;
	info->iobl_types_supported = 0;

	pthread_mutex_lock(&ia->async_lock);
	info->affiliated_err_evd = (it_evd_handle_t)ia->aff_evd;
	info->unaffiliated_err_evd = (it_evd_handle_t)ia->unaff_evd;
	pthread_mutex_unlock(&ia->async_lock);
}

OPENRDMA_EXPORT it_status_t it_ia_query(it_ia_handle_t ia_handle,
					it_ia_info_t **ia_info)
{
	struct itapi_ia *ia = to_ia(ia_handle);
	it_spigot_info_t *spigots;
	it_net_addr_t *addrs;
	it_ia_info_t *info;
	size_t n, size, i;
	char *name;

	if (!itapi_valid(ia, IT_HANDLE_TYPE_IA)) {
		itapi_arg_err("it_ia_query", "ia_handle", "not an IA");
		return IT_ERR_INVALID_IA;
	}
	if (!ia_info) {
		itapi_arg_err("it_ia_query", "ia_info", "NULL");
		return IT_ERR_FAULT;
	}
	/* One block, so that it_ia_info_free() is one free(). */
	n = ia->num_spigots;
	size = sizeof(*info) + n * (sizeof(*spigots) + sizeof(*addrs)) +
	       strlen(ia->name) + 1;
	info = calloc(1, size);
	if (!info)
		return IT_ERR_RESOURCES;
	spigots = (it_spigot_info_t *)(info + 1);
	addrs = (it_net_addr_t *)(spigots + n);
	name = (char *)(addrs + n);
	strcpy(name, ia->name);
	info->ia_name = name;
	info->num_spigots = n;
	info->spigot_info = n ? spigots : NULL;
	for (i = 0; i < n; i++)
		spigot_fill(ia, i, &spigots[i], &addrs[i]);
	info_fill(ia, info);

	*ia_info = info;
	return IT_SUCCESS;
}

OPENRDMA_EXPORT void it_ia_info_free(it_ia_info_t *ia_info)
{
	free(ia_info);
}
