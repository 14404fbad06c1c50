/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Addresses and paths.  A path names the peer by GID in its InfiniBand
 * view, which every transport but iWARP uses: software ports have GIDs
 * derived from their socket addresses (IPv4 mapped into IPv6), as RoCE
 * does, so one path leads both to a CM connect (a socket address) and to
 * an address handle.  iWARP paths carry the IP addresses themselves.
 */
#include "config.h"

#include <endian.h>
#include <string.h>
#include <arpa/inet.h>

#include "api/itapi/itapi.h"
#include "core/export.h"

/* The port that rdma_cm service IDs of the TCP port space are based on. */
#define ITAPI_SID_PS_TCP 0x0000000001060000ull

static const uint8_t v4_prefix[12] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
};

static bool gid_is_v4(const struct in6_addr *gid)
{
	return !memcmp(gid->s6_addr, v4_prefix, sizeof(v4_prefix));
}

static void gid_from_v4(const struct in_addr *v4, struct in6_addr *gid)
{
	memcpy(gid->s6_addr, v4_prefix, sizeof(v4_prefix));
	memcpy(gid->s6_addr + 12, &v4->s_addr, 4);
}

static void sockaddr_from_gid(const struct in6_addr *gid, uint16_t port,
			      struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	if (gid_is_v4(gid)) {
		sin->sin_family = AF_INET;
		memcpy(&sin->sin_addr.s_addr, gid->s6_addr + 12, 4);
		sin->sin_port = htons(port);
	} else {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = *gid;
		sin6->sin6_port = htons(port);
	}
}

/* The GID of a socket address; false for other families. */
static bool gid_from_sockaddr(const struct sockaddr *sa, struct in6_addr *gid)
{
	if (sa->sa_family == AF_INET) {
		gid_from_v4(&((const struct sockaddr_in *)sa)->sin_addr, gid);
		return true;
	}
	if (sa->sa_family == AF_INET6) {
		*gid = ((const struct sockaddr_in6 *)sa)->sin6_addr;
		return true;
	}
	return false;
}

void itapi_net_addr_from_sockaddr(const struct sockaddr *sa, it_net_addr_t *na)
{
	memset(na, 0, sizeof(*na));
	if (sa->sa_family == AF_INET) {
		na->addr_type = IT_IPV4;
		na->addr.ipv4 = ((const struct sockaddr_in *)sa)->sin_addr;
	} else {
		na->addr_type = IT_IPV6;
		na->addr.ipv6 = ((const struct sockaddr_in6 *)sa)->sin6_addr;
	}
}

static const struct openrdma_port_attr *spigot_port(const struct itapi_ia *ia,
						    size_t spigot_id)
{
	return &ia->ports[spigot_id < ia->num_spigots ? spigot_id : 0];
}

static uint16_t sockaddr_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)sa)->sin_port);
	if (sa->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	return 0;
}

/*
 * A path to the GID remote (IB view) or the address (iWARP view).  The
 * software transports have no LIDs: theirs carry the port number of a
 * transport that gives each context its own (0 otherwise), which their
 * datagrams need.
 */
static void path_fill(const struct itapi_ia *ia, size_t spigot_id,
		      const struct in6_addr *remote, it_path_t *path)
{
	const struct openrdma_port_attr *port = spigot_port(ia, spigot_id);
	const struct sockaddr *local = (const struct sockaddr *)&port->addr;
	union openrdma_gid lgid;
	struct in6_addr lg;

	memset(path, 0, sizeof(*path));
	path->spigot_id = spigot_id;
	if (ia->transport == IT_IWARP_TCP_TRANSPORT) {
		it_iwarp_net_endpoint_t *iw = &path->remote.iwarp;

		if (gid_is_v4(remote)) {
			iw->ip_vers = IT_IP_VERS_IPV4;
			memcpy(&iw->raddr.ipv4, remote->s6_addr + 12, 4);
			if (local->sa_family == AF_INET)
				iw->laddr.ipv4 =
					((const struct sockaddr_in *)local)
						->sin_addr;
		} else {
			iw->ip_vers = IT_IP_VERS_IPV6;
			iw->raddr.ipv6 = *remote;
			if (local->sa_family == AF_INET6)
				iw->laddr.ipv6 =
					((const struct sockaddr_in6 *)local)
						->sin6_addr;
		}
		return;
	}
	path->remote.ib.partition_key = 0xffff;
	path->remote.ib.path_mtu = port->active_mtu;
	path->remote.ib.local_port_lid = ia->transport == IT_VENDOR_TRANSPORT ?
						 sockaddr_port(local) :
						 port->lid;
	if (!openrdma_gid_query(ia->ctx, (uint8_t)(spigot_id + 1), 0, &lgid)) {
		memcpy(lg.s6_addr, lgid.raw, sizeof(lgid.raw));
		path->remote.ib.local_port_gid = lg;
	} else if (gid_from_sockaddr(local, &lg)) {
		path->remote.ib.local_port_gid = lg;
	}
	path->remote.ib.remote_port_gid = *remote;
	path->remote.ib.hop_limit = 64;
}

void itapi_path_from_sockaddr(const struct itapi_ia *ia, size_t spigot_id,
			      const struct sockaddr *sa, it_path_t *path)
{
	struct in6_addr gid;

	if (!gid_from_sockaddr(sa, &gid))
		memset(&gid, 0, sizeof(gid));
	path_fill(ia, spigot_id, &gid, path);
}

void itapi_path_set_port(const struct itapi_ia *ia, it_path_t *path,
			 uint16_t port)
{
	if (ia->transport == IT_VENDOR_TRANSPORT)
		path->remote.ib.remote_port_lid = port;
}

uint16_t itapi_spigot_port(const struct itapi_ia *ia, size_t spigot_id)
{
	return ia->transport == IT_VENDOR_TRANSPORT ?
		       sockaddr_port((const struct sockaddr *)&spigot_port(
					     ia, spigot_id)
					     ->addr) :
		       0;
}

/* The address vector of a sender, as a path (IB view). */
static void path_from_ah_attr(const struct itapi_ia *ia, size_t spigot_id,
			      const struct openrdma_ah_attr *attr,
			      it_path_t *path)
{
	const struct sockaddr *sa = (const struct sockaddr *)&attr->addr;
	it_ib_net_endpoint_t *ib;
	struct in6_addr gid;

	if (sa->sa_family == AF_INET || sa->sa_family == AF_INET6) {
		itapi_path_from_sockaddr(ia, spigot_id, sa, path);
		itapi_path_set_port(ia, path, sockaddr_port(sa));
		return;
	}
	memset(&gid, 0, sizeof(gid));
	if (attr->is_global)
		memcpy(gid.s6_addr, attr->grh.dgid.raw, sizeof(gid.s6_addr));
	path_fill(ia, spigot_id, &gid, path);
	if (ia->transport == IT_IWARP_TCP_TRANSPORT)
		return;
	ib = &path->remote.ib;
	ib->remote_port_lid = attr->dlid;
	ib->sl = attr->sl;
	ib->packet_rate = attr->static_rate;
	ib->subnet_local = attr->is_global ? 0 : 1;
	ib->flow_label = attr->grh.flow_label;
	ib->traffic_class = attr->grh.traffic_class;
	if (attr->grh.hop_limit)
		ib->hop_limit = attr->grh.hop_limit;
}

void itapi_path_from_recv(const struct itapi_ia *ia, size_t spigot_id,
			  const struct openrdma_wc *wc,
			  const struct openrdma_grh *grh, it_path_t *path)
{
	struct openrdma_ah_attr attr;

	/* the transport knows best how to answer its sender */
	if (openrdma_ah_attr_from_wc(ia->ctx, (uint8_t)(spigot_id + 1), wc, grh,
				     &attr)) {
		memset(&attr, 0, sizeof(attr));
		attr.dlid = wc->slid;
		if (grh) {
			attr.is_global = 1;
			attr.grh.dgid = grh->sgid;
			attr.grh.hop_limit = grh->hop_limit;
		}
	}
	path_from_ah_attr(ia, spigot_id, &attr, path);
}

int itapi_path_to_sockaddr(const struct itapi_ia *ia, const it_path_t *path,
			   uint16_t port, struct sockaddr_storage *ss)
{
	const it_iwarp_net_endpoint_t *iw = &path->remote.iwarp;
	struct in6_addr gid;

	if (ia->transport != IT_IWARP_TCP_TRANSPORT) {
		sockaddr_from_gid(&path->remote.ib.remote_port_gid, port, ss);
		return 0;
	}
	if (iw->ip_vers == IT_IP_VERS_IPV4)
		gid_from_v4(&iw->raddr.ipv4, &gid);
	else if (iw->ip_vers == IT_IP_VERS_IPV6)
		gid = iw->raddr.ipv6;
	else
		return -OPENRDMA_EINVAL;
	sockaddr_from_gid(&gid, port, ss);
	return 0;
}

int itapi_path_to_ah_attr(const struct itapi_ia *ia, const it_path_t *path,
			  struct openrdma_ah_attr *attr)
{
	const it_ib_net_endpoint_t *ib = &path->remote.ib;
	const struct openrdma_port_attr *port;

	if (!itapi_spigot_valid(ia, path->spigot_id))
		return -OPENRDMA_EINVAL;
	port = spigot_port(ia, path->spigot_id);
	memset(attr, 0, sizeof(*attr));
	attr->port_num = (uint8_t)(path->spigot_id + 1);
	/* software ports are found by socket address, port included */
	if (ia->transport == IT_VENDOR_TRANSPORT)
		return itapi_path_to_sockaddr(ia, path, ib->remote_port_lid,
					      &attr->addr);
	if (ia->transport == IT_IWARP_TCP_TRANSPORT)
		return itapi_path_to_sockaddr(ia, path, 0, &attr->addr);
	attr->dlid = ib->remote_port_lid;
	attr->sl = (uint8_t)ib->sl;
	attr->static_rate = (uint8_t)ib->packet_rate;
	/*
	 * RoCE: the GID is the peer's IP address, and the source GID must be
	 * of its family and RoCE version, which the transport knows.
	 */
	if (port->link_layer == OPENRDMA_LINK_LAYER_ETHERNET)
		return itapi_path_to_sockaddr(ia, path, 0, &attr->addr);
	/* InfiniBand needs the GRH unless subnet-local */
	if (!ib->subnet_local) {
		attr->is_global = 1;
		memcpy(attr->grh.dgid.raw, ib->remote_port_gid.s6_addr,
		       sizeof(attr->grh.dgid.raw));
		attr->grh.flow_label = ib->flow_label;
		attr->grh.hop_limit = ib->hop_limit ? ib->hop_limit : 64;
		attr->grh.traffic_class = ib->traffic_class;
	}
	return 0;
}

int itapi_conn_qual_port(const it_conn_qual_t *cq, uint16_t *port_out)
{
	uint64_t sid;

	switch (cq->type) {
	case IT_IANA_PORT:
		*port_out = ntohs(cq->conn_qual.port);
		return 0;
	case IT_IB_SERVICEID:
		/* the rdma_cm form: the TCP port space plus the port */
		sid = be64toh(cq->conn_qual.serviceid);
		if ((sid & ~0xffffull) != ITAPI_SID_PS_TCP)
			return -OPENRDMA_EINVAL;
		*port_out = (uint16_t)(sid & 0xffff);
		return 0;
	default:
		return -OPENRDMA_EINVAL;
	}
}

OPENRDMA_EXPORT it_status_t it_get_pathinfo(it_ia_handle_t ia_handle,
					    size_t spigot_id,
					    const it_net_addr_t *net_addr,
					    size_t *num_paths,
					    size_t *total_paths,
					    it_path_t *paths)
{
	struct itapi_ia *ia = to_ia(ia_handle);
	struct in6_addr gid;

	if (!itapi_valid(ia, IT_HANDLE_TYPE_IA)) {
		itapi_arg_err("it_get_pathinfo", "ia_handle", "not an IA");
		return IT_ERR_INVALID_IA;
	}
	if (!itapi_spigot_valid(ia, spigot_id)) {
		itapi_arg_err("it_get_pathinfo", "spigot_id", "%zu", spigot_id);
		return IT_ERR_INVALID_SPIGOT;
	}
	if (!net_addr) {
		itapi_arg_err("it_get_pathinfo", "net_addr", "NULL");
		return IT_ERR_INVALID_NETADDR;
	}
	switch (net_addr->addr_type) {
	case IT_IPV4:
		gid_from_v4(&net_addr->addr.ipv4, &gid);
		break;
	case IT_IPV6:
		gid = net_addr->addr.ipv6;
		break;
	case IT_IB_GID:
		gid = net_addr->addr.gid;
		break;
	default:
		itapi_arg_err("it_get_pathinfo", "net_addr", "type %d",
			      (int)net_addr->addr_type);
		return IT_ERR_INVALID_NETADDR;
	}
	if (!num_paths || !total_paths || (*num_paths && !paths)) {
		itapi_arg_err("it_get_pathinfo", "num_paths", "NULL");
		return IT_ERR_FAULT;
	}
	/* One path per address: the transports route, not the consumer. */
	if (*num_paths) {
		path_fill(ia, spigot_id, &gid, &paths[0]);
		*num_paths = 1;
	}
	*total_paths = 1;
	return IT_SUCCESS;
}

OPENRDMA_EXPORT it_status_t it_convert_net_addr(const it_net_addr_t *source,
						it_net_addr_type_t addr_type,
						it_net_addr_t *destination)
{
	it_net_addr_t out;
	struct in6_addr a6;

	if (!source) {
		itapi_arg_err("it_convert_net_addr", "source_addr", "NULL");
		return IT_ERR_INVALID_NETADDR;
	}
	if (!destination) {
		itapi_arg_err("it_convert_net_addr", "destination_addr",
			      "NULL");
		return IT_ERR_FAULT;
	}
	switch (source->addr_type) {
	case IT_IPV4:
		gid_from_v4(&source->addr.ipv4, &a6);
		break;
	case IT_IPV6:
		a6 = source->addr.ipv6;
		break;
	case IT_IB_GID:
		a6 = source->addr.gid;
		break;
	default:
		itapi_arg_err("it_convert_net_addr", "source_addr", "type %d",
			      (int)source->addr_type);
		return IT_ERR_INVALID_NETADDR;
	}
	memset(&out, 0, sizeof(out));
	out.addr_type = addr_type;
	switch (addr_type) {
	case IT_IPV4:
		if (!gid_is_v4(&a6))
			return IT_ERR_INVALID_CONVERSION;
		memcpy(&out.addr.ipv4, a6.s6_addr + 12, 4);
		break;
	case IT_IPV6:
		out.addr.ipv6 = a6;
		break;
	case IT_IB_GID:
		/* the GID of an IP address, as RoCE and software ports form it */
		out.addr.gid = a6;
		break;
	default:
		return IT_ERR_INVALID_CONVERSION;
	}
	*destination = out;
	return IT_SUCCESS;
}

OPENRDMA_EXPORT it_rdma_addr_t it_make_rdma_addr_absolute(void *addr)
{
	return (it_rdma_addr_t)(uintptr_t)addr;
}

OPENRDMA_EXPORT it_rdma_addr_t it_make_rdma_addr_relative(it_length_t offset)
{
	return (it_rdma_addr_t)offset;
}

OPENRDMA_EXPORT uint64_t it_hton64(uint64_t hostint)
{
	return htobe64(hostint);
}

OPENRDMA_EXPORT uint64_t it_ntoh64(uint64_t netint)
{
	return be64toh(netint);
}
