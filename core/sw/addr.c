/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "core/sw/addr.h"

#define MAX_PEERS 65535

static const uint8_t v4_mapped_prefix[12] = { 0, 0, 0, 0, 0,	0,
					      0, 0, 0, 0, 0xff, 0xff };

/* An address as 16 bytes of IPv6 (IPv4 mapped) and a port. */
struct addr_key {
	uint8_t addr[16];
	uint16_t port;
};

static int addr_key(const struct sockaddr *sa, struct addr_key *k)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)sa;

	memset(k, 0, sizeof(*k));
	switch (sa->sa_family) {
	case AF_INET:
		memcpy(k->addr, v4_mapped_prefix, sizeof(v4_mapped_prefix));
		memcpy(&k->addr[12], &sin->sin_addr, 4);
		k->port = ntohs(sin->sin_port);
		return 0;
	case AF_INET6:
		memcpy(k->addr, &sin6->sin6_addr, 16);
		k->port = ntohs(sin6->sin6_port);
		return 0;
	}
	return -OPENRDMA_EINVAL;
}

int sw_gid_from_addr(const struct sockaddr *sa, union openrdma_gid *gid)
{
	struct addr_key k;
	int ret;

	ret = addr_key(sa, &k);
	if (ret)
		return ret;
	memcpy(gid->raw, k.addr, sizeof(gid->raw));
	return 0;
}

void sw_addr_from_gid(const union openrdma_gid *gid,
		      struct sockaddr_storage *ss)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (!memcmp(gid->raw, v4_mapped_prefix, sizeof(v4_mapped_prefix))) {
		sin->sin_family = AF_INET;
		memcpy(&sin->sin_addr, &gid->raw[12], 4);
	} else {
		sin6->sin6_family = AF_INET6;
		memcpy(&sin6->sin6_addr, gid->raw, 16);
	}
}

bool sw_addr_equal(const struct sockaddr *a, const struct sockaddr *b,
		   bool with_port)
{
	struct addr_key ka, kb;

	if (addr_key(a, &ka) || addr_key(b, &kb))
		return false;
	return !memcmp(ka.addr, kb.addr, sizeof(ka.addr)) &&
	       (!with_port || ka.port == kb.port);
}

bool sw_addr_is_any(const struct sockaddr *sa)
{
	static const uint8_t zero[16];
	struct addr_key k;

	if (addr_key(sa, &k))
		return false;
	return !memcmp(k.addr, zero, 16) ||
	       (!memcmp(k.addr, v4_mapped_prefix, 12) &&
		!memcmp(&k.addr[12], zero, 4));
}

bool sw_addr_is_loopback(const struct sockaddr *sa)
{
	struct addr_key k;

	if (addr_key(sa, &k))
		return false;
	if (!memcmp(k.addr, v4_mapped_prefix, 12))
		return k.addr[12] == 127;
	return IN6_IS_ADDR_LOOPBACK((const struct in6_addr *)k.addr);
}

uint16_t sw_addr_port(const struct sockaddr *sa)
{
	struct addr_key k;

	return addr_key(sa, &k) ? 0 : k.port;
}

void sw_addr_set_port(struct sockaddr *sa, uint16_t port)
{
	if (sa->sa_family == AF_INET)
		((struct sockaddr_in *)sa)->sin_port = htons(port);
	else if (sa->sa_family == AF_INET6)
		((struct sockaddr_in6 *)sa)->sin6_port = htons(port);
}

socklen_t sw_addr_len(const struct sockaddr *sa)
{
	switch (sa->sa_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	}
	return 0;
}

void sw_grh_build(struct openrdma_grh *grh, const union openrdma_gid *sgid,
		  const union openrdma_gid *dgid, uint32_t paylen)
{
	memset(grh, 0, sizeof(*grh));
	/* IP version 6, traffic class and flow label 0 */
	grh->version_tclass_flow = htonl(6u << 28);
	grh->paylen = htons((uint16_t)paylen);
	grh->next_hdr = SW_GRH_NEXT_HDR;
	grh->hop_limit = 1;
	grh->sgid = *sgid;
	grh->dgid = *dgid;
}

struct peer {
	struct addr_key key;
	uint16_t index;
	struct sockaddr_storage addr;
	UT_hash_handle hh;
};

struct sw_peers {
	pthread_mutex_t lock;
	struct peer *by_addr;
	struct peer **by_index; /* [index - 1] */
	unsigned int num;
	unsigned int size;
};

int sw_peers_create(struct sw_peers **peers_out)
{
	struct sw_peers *p;
	int ret;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -OPENRDMA_ENOMEM;
	ret = -pthread_mutex_init(&p->lock, NULL);
	if (ret) {
		free(p);
		return ret;
	}
	*peers_out = p;
	return 0;
}

void sw_peers_destroy(struct sw_peers *peers)
{
	struct peer *e, *tmp;

	if (!peers)
		return;
	HASH_ITER (hh, peers->by_addr, e, tmp) {
		HASH_DEL(peers->by_addr, e);
		free(e);
	}
	free(peers->by_index);
	pthread_mutex_destroy(&peers->lock);
	free(peers);
}

static int peers_grow(struct sw_peers *p)
{
	unsigned int size = p->size ? p->size * 2 : 16;
	struct peer **n;

	if (size > MAX_PEERS)
		size = MAX_PEERS;
	n = realloc(p->by_index, size * sizeof(*n));
	if (!n)
		return -OPENRDMA_ENOMEM;
	p->by_index = n;
	p->size = size;
	return 0;
}

int sw_peers_index(struct sw_peers *peers, const struct sockaddr *addr,
		   uint16_t *index_out)
{
	struct addr_key k;
	struct peer *e;
	int ret;

	ret = addr_key(addr, &k);
	if (ret)
		return ret;
	pthread_mutex_lock(&peers->lock);
	HASH_FIND(hh, peers->by_addr, &k, sizeof(k), e);
	if (e)
		goto found;
	ret = -OPENRDMA_ENOSPC;
	if (peers->num == MAX_PEERS)
		goto out;
	if (peers->num == peers->size) {
		ret = peers_grow(peers);
		if (ret)
			goto out;
	}
	ret = -OPENRDMA_ENOMEM;
	e = calloc(1, sizeof(*e));
	if (!e)
		goto out;
	e->key = k;
	memcpy(&e->addr, addr, sw_addr_len(addr));
	peers->by_index[peers->num++] = e;
	e->index = (uint16_t)peers->num;
	HASH_ADD(hh, peers->by_addr, key, sizeof(e->key), e);
found:
	*index_out = e->index;
	ret = 0;
out:
	pthread_mutex_unlock(&peers->lock);
	return ret;
}

int sw_peers_addr(struct sw_peers *peers, uint16_t index,
		  struct sockaddr_storage *addr)
{
	int ret = -OPENRDMA_ENOENT;

	pthread_mutex_lock(&peers->lock);
	if (index && index <= peers->num) {
		*addr = peers->by_index[index - 1]->addr;
		ret = 0;
	}
	pthread_mutex_unlock(&peers->lock);
	return ret;
}

int sw_ah_attr_from_wc(struct sw_peers *peers, uint8_t port_num,
		       const struct openrdma_wc *wc,
		       const struct openrdma_grh *grh,
		       struct openrdma_ah_attr *attr)
{
	struct openrdma_ah_attr a;
	uint32_t flow;
	int ret;

	memset(&a, 0, sizeof(a));
	ret = sw_peers_addr(peers, wc->slid, &a.addr);
	if (ret && !((wc->wc_flags & OPENRDMA_WC_GRH) && grh))
		return -OPENRDMA_EINVAL;
	a.dlid = wc->slid;
	a.sl = wc->sl;
	a.port_num = port_num;
	if ((wc->wc_flags & OPENRDMA_WC_GRH) && grh) {
		flow = ntohl(grh->version_tclass_flow);
		a.is_global = 1;
		a.grh.dgid = grh->sgid;
		a.grh.flow_label = flow & 0xfffff;
		a.grh.traffic_class = (flow >> 20) & 0xff;
		a.grh.hop_limit = 0xff;
		a.grh.sgid_index = 0;
		if (ret)
			sw_addr_from_gid(&grh->sgid, &a.addr);
	}
	*attr = a;
	return 0;
}
