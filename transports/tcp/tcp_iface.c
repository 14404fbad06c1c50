/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Which addresses an interface uses.  tcp0 binds its sockets to every
 * local address (IPv6 and IPv4 through one dual-stack socket where the
 * host has IPv6) and reports, as its port's address, the first
 * non-loopback IPv4 address that is up, else 127.0.0.1.  An interface of
 * the config file (interface NAME transport=tcp device=NETDEV) binds to
 * one address of that netdev: its first IPv4 address, else its first IPv6
 * one (global before link-local).
 */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>

#include <openrdma/log.h>

#include "transports/tcp/tcp.h"

const char tcp_iface_all[] = "all";

static bool ifa_up(const struct ifaddrs *ifa)
{
	return ifa->ifa_addr && (ifa->ifa_flags & IFF_UP);
}

/* Preference of an address of a netdev: lower is better, -1 unusable. */
static int rank(const struct sockaddr *sa)
{
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)sa;

	if (sa->sa_family == AF_INET)
		return 0;
	if (sa->sa_family != AF_INET6)
		return -1;
	return IN6_IS_ADDR_LINKLOCAL(&sin6->sin6_addr) ? 2 : 1;
}

static void copy_addr(const struct sockaddr *sa, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, sa, sw_addr_len(sa));
	sw_addr_set_port((struct sockaddr *)ss, 0);
}

static int resolve_all(struct sockaddr_storage *bind_addr,
		       struct sockaddr_storage *port_addr)
{
	struct sockaddr_in6 *any = (struct sockaddr_in6 *)bind_addr;
	struct sockaddr_in *sin = (struct sockaddr_in *)port_addr;
	struct ifaddrs *list, *ifa;

	memset(bind_addr, 0, sizeof(*bind_addr));
	any->sin6_family = AF_INET6;
	any->sin6_addr = in6addr_any;

	memset(port_addr, 0, sizeof(*port_addr));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (getifaddrs(&list))
		return 0; /* loopback still works */
	for (ifa = list; ifa; ifa = ifa->ifa_next) {
		if (!ifa_up(ifa) || ifa->ifa_addr->sa_family != AF_INET ||
		    (ifa->ifa_flags & IFF_LOOPBACK) ||
		    sw_addr_is_loopback(ifa->ifa_addr))
			continue;
		copy_addr(ifa->ifa_addr, port_addr);
		break;
	}
	freeifaddrs(list);
	return 0;
}

static int resolve_netdev(const char *name, struct sockaddr_storage *bind_addr,
			  struct sockaddr_storage *port_addr)
{
	const struct sockaddr *best = NULL;
	struct ifaddrs *list, *ifa;
	int r, best_rank = 3;

	if (getifaddrs(&list))
		return -errno;
	for (ifa = list; ifa; ifa = ifa->ifa_next) {
		if (!ifa_up(ifa) || strcmp(ifa->ifa_name, name))
			continue;
		r = rank(ifa->ifa_addr);
		if (r >= 0 && r < best_rank) {
			best = ifa->ifa_addr;
			best_rank = r;
		}
	}
	if (best) {
		/* link-local IPv6 keeps its scope (the netdev) */
		copy_addr(best, bind_addr);
		*port_addr = *bind_addr;
	}
	freeifaddrs(list);
	if (!best) {
		openrdma_warn("tcp", "netdev %s: no address, or not up", name);
		return -OPENRDMA_ENODEV;
	}
	return 0;
}

int tcp_iface_resolve(const struct openrdma_device *dev,
		      struct sockaddr_storage *bind_addr,
		      struct sockaddr_storage *port_addr)
{
	if (dev->priv == (const void *)tcp_iface_all)
		return resolve_all(bind_addr, port_addr);
	if (!dev->dev_name[0]) {
		openrdma_warn("tcp", "%s: no device= netdev given", dev->name);
		return -OPENRDMA_ENODEV;
	}
	return resolve_netdev(dev->dev_name, bind_addr, port_addr);
}
