/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Addresses: the IP address of the interface's port, the port's RoCE
 * GIDs, and the address handles derived from a socket address (RoCE GIDs
 * are IP addresses, IPv4 ones mapped into IPv6).
 */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>

#include "transports/verbs/verbs.h"

/* TTL of RoCE v2 packets to a derived address, as rdma_cm uses */
#define VERBS_HOP_LIMIT 64

socklen_t verbs_sockaddr_len(const struct sockaddr *sa)
{
	switch (sa->sa_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	default:
		return 0;
	}
}

void verbs_gid_from_sockaddr(const struct sockaddr *sa, union ibv_gid *gid)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)sa;

	memset(gid, 0, sizeof(*gid));
	if (sa->sa_family == AF_INET6) {
		memcpy(gid->raw, &sin6->sin6_addr, 16);
		return;
	}
	gid->raw[10] = 0xff;
	gid->raw[11] = 0xff;
	memcpy(&gid->raw[12], &sin->sin_addr, 4);
}

static bool gid_is_v4mapped(const union ibv_gid *gid)
{
	static const uint8_t prefix[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(gid->raw, prefix, sizeof(prefix));
}

static bool gid_is_linklocal(const union ibv_gid *gid)
{
	return gid->raw[0] == 0xfe && (gid->raw[1] & 0xc0) == 0x80;
}

void verbs_sockaddr_from_gid(const union ibv_gid *gid,
			     struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	if (gid_is_v4mapped(gid)) {
		sin->sin_family = AF_INET;
		memcpy(&sin->sin_addr, &gid->raw[12], 4);
		return;
	}
	sin6->sin6_family = AF_INET6;
	memcpy(&sin6->sin6_addr, gid->raw, 16);
}

/* Better candidates first: IPv4, global IPv6, link-local IPv6. */
static int addr_rank(const struct sockaddr *sa)
{
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)sa;

	if (sa->sa_family == AF_INET)
		return 0;
	return IN6_IS_ADDR_LINKLOCAL(&sin6->sin6_addr) ? 2 : 1;
}

/* True if binding to sa puts an rdma_cm id on the context's port. */
static bool addr_on_port(struct verbs_ctx *vctx, const struct sockaddr *sa)
{
	struct sockaddr_storage ss;
	struct rdma_cm_id *id;
	bool ours = false;

	memcpy(&ss, sa, verbs_sockaddr_len(sa));
	if (rdma_create_id(vctx->cm_ch, &id, NULL, RDMA_PS_TCP))
		return false;
	if (!rdma_bind_addr(id, (struct sockaddr *)&ss) && id->verbs)
		ours = !strcmp(ibv_get_device_name(id->verbs->device),
			       ibv_get_device_name(vctx->ibctx->device)) &&
		       id->port_num == vctx->port;
	rdma_destroy_id(id);
	return ours;
}

int verbs_port_addr_find(struct verbs_ctx *vctx)
{
	struct ifaddrs *ifa_list, *ifa;
	int best = 3;

	memset(&vctx->addr, 0, sizeof(vctx->addr));
	if (getifaddrs(&ifa_list))
		return verbs_errno();
	/*
	 * rdma_cm's own binding decides which device and port an address
	 * belongs to, for RoCE and iWARP alike.
	 */
	for (ifa = ifa_list; ifa; ifa = ifa->ifa_next) {
		if (!ifa->ifa_addr || (ifa->ifa_flags & IFF_LOOPBACK) ||
		    !(ifa->ifa_flags & IFF_UP) ||
		    !verbs_sockaddr_len(ifa->ifa_addr) ||
		    addr_rank(ifa->ifa_addr) >= best)
			continue;
		if (!addr_on_port(vctx, ifa->ifa_addr))
			continue;
		memcpy(&vctx->addr, ifa->ifa_addr,
		       verbs_sockaddr_len(ifa->ifa_addr));
		best = addr_rank(ifa->ifa_addr);
	}
	freeifaddrs(ifa_list);
	if (vctx->addr.ss_family == AF_UNSPEC)
		openrdma_info("verbs", "%s port %u: no IP address",
			      ibv_get_device_name(vctx->ibctx->device),
			      vctx->port);
	return 0;
}

int verbs_gids_load(struct verbs_ctx *vctx)
{
	struct ibv_port_attr port;
	struct ibv_gid_entry *tbl;
	ssize_t n, i;
	int ret;

	ret = ibv_query_port(vctx->ibctx, vctx->port, &port);
	if (ret)
		return verbs_ret(ret);
	if (vctx->iwarp || port.gid_tbl_len <= 0)
		return 0;
	tbl = calloc(port.gid_tbl_len, sizeof(*tbl));
	if (!tbl)
		return -OPENRDMA_ENOMEM;
	n = ibv_query_gid_table(vctx->ibctx, tbl, port.gid_tbl_len, 0);
	if (n < 0) {
		/* Older kernels: AHs then need explicit GIDs. */
		openrdma_dbg("verbs", "ibv_query_gid_table: %s",
			     strerror((int)-n));
		free(tbl);
		return 0;
	}
	vctx->gids = calloc(n ? (size_t)n : 1, sizeof(*vctx->gids));
	if (!vctx->gids) {
		free(tbl);
		return -OPENRDMA_ENOMEM;
	}
	for (i = 0; i < n; i++) {
		if (tbl[i].port_num != vctx->port)
			continue;
		vctx->gids[vctx->num_gids].gid = tbl[i].gid;
		vctx->gids[vctx->num_gids].index = (uint8_t)tbl[i].gid_index;
		vctx->gids[vctx->num_gids].type = (uint8_t)tbl[i].gid_type;
		vctx->num_gids++;
	}
	free(tbl);
	return 0;
}

/*
 * The source GID for a destination GID: same family (IPv4-mapped or
 * not), the same scope for IPv6, RoCE v2 preferred.  -1 if none.
 */
static int sgid_for(const struct verbs_ctx *vctx, const union ibv_gid *dgid)
{
	int i, best = -1, best_rank = 4, rank;
	const union ibv_gid *g;

	for (i = 0; i < vctx->num_gids; i++) {
		g = &vctx->gids[i].gid;
		if (gid_is_v4mapped(g) != gid_is_v4mapped(dgid))
			continue;
		rank = vctx->gids[i].type == IBV_GID_TYPE_ROCE_V2 ? 0 : 2;
		if (!gid_is_v4mapped(g) &&
		    gid_is_linklocal(g) != gid_is_linklocal(dgid))
			rank++;
		if (rank < best_rank) {
			best_rank = rank;
			best = vctx->gids[i].index;
		}
	}
	return best;
}

int verbs_ah_attr_to_ibv(const struct verbs_ctx *vctx,
			 const struct openrdma_ah_attr *attr,
			 struct ibv_ah_attr *ib)
{
	int sgid;

	memset(ib, 0, sizeof(*ib));
	ib->dlid = attr->dlid;
	ib->sl = attr->sl;
	ib->src_path_bits = attr->src_path_bits;
	ib->static_rate = attr->static_rate;
	ib->port_num = vctx->port;
	if (attr->is_global) {
		memcpy(ib->grh.dgid.raw, attr->grh.dgid.raw, 16);
		ib->grh.flow_label = attr->grh.flow_label;
		ib->grh.sgid_index = attr->grh.sgid_index;
		ib->grh.hop_limit = attr->grh.hop_limit;
		ib->grh.traffic_class = attr->grh.traffic_class;
		ib->is_global = 1;
		return 0;
	}
	if (attr->addr.ss_family == AF_UNSPEC)
		return 0;
	/* Only RoCE GIDs are addresses; an IB fabric needs a LID or GID. */
	if (vctx->link_layer != IBV_LINK_LAYER_ETHERNET || vctx->iwarp)
		return -OPENRDMA_EOPNOTSUPP;
	verbs_gid_from_sockaddr((const struct sockaddr *)&attr->addr,
				&ib->grh.dgid);
	sgid = sgid_for(vctx, &ib->grh.dgid);
	if (sgid < 0) {
		openrdma_dbg("verbs", "no source GID for the address family");
		return -OPENRDMA_EADDRNOTAVAIL;
	}
	ib->grh.sgid_index = (uint8_t)sgid;
	ib->grh.hop_limit = VERBS_HOP_LIMIT;
	ib->is_global = 1;
	return 0;
}

void verbs_ah_attr_from_ibv(const struct verbs_ctx *vctx,
			    const struct ibv_ah_attr *ib,
			    struct openrdma_ah_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->dlid = ib->dlid;
	attr->sl = ib->sl;
	attr->src_path_bits = ib->src_path_bits;
	attr->static_rate = ib->static_rate;
	attr->port_num = 1;
	if (!ib->is_global)
		return;
	attr->is_global = 1;
	memcpy(attr->grh.dgid.raw, ib->grh.dgid.raw, 16);
	attr->grh.flow_label = ib->grh.flow_label;
	attr->grh.sgid_index = ib->grh.sgid_index;
	attr->grh.hop_limit = ib->grh.hop_limit;
	attr->grh.traffic_class = ib->grh.traffic_class;
	/* On RoCE the GID is the peer's IP address: report it too. */
	if (vctx->link_layer == IBV_LINK_LAYER_ETHERNET)
		verbs_sockaddr_from_gid(&ib->grh.dgid, &attr->addr);
}
