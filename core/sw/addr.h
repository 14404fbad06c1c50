/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Addresses of software ports: GIDs derived from socket addresses (the
 * IPv6 address, or the IPv4 one mapped into IPv6), the GRH that a UD
 * receive starts with, and the per-context peer table behind wc.slid: a
 * small index naming the sender's address, which sw_ah_attr_from_wc() turns
 * back into an address to reply to.
 */
#ifndef CORE_SW_ADDR_H
#define CORE_SW_ADDR_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <openrdma/verbs.h>

/* IB's next-header value for a GRH followed by the BTH. */
#define SW_GRH_NEXT_HDR 0x1b

int sw_gid_from_addr(const struct sockaddr *sa, union openrdma_gid *gid);
/* The inverse: IPv4-mapped GIDs give AF_INET; port 0. */
void sw_addr_from_gid(const union openrdma_gid *gid,
		      struct sockaddr_storage *ss);
/* Compares two addresses, IPv4 and IPv4-mapped IPv6 alike; ports too if
 * with_port. */
bool sw_addr_equal(const struct sockaddr *a, const struct sockaddr *b,
		   bool with_port);
bool sw_addr_is_any(const struct sockaddr *sa);
bool sw_addr_is_loopback(const struct sockaddr *sa);
uint16_t sw_addr_port(const struct sockaddr *sa);
void sw_addr_set_port(struct sockaddr *sa, uint16_t port);
/* Byte length of a sockaddr of this family, 0 if unknown. */
socklen_t sw_addr_len(const struct sockaddr *sa);

/* Fills a GRH (network byte order) for a datagram of paylen bytes. */
void sw_grh_build(struct openrdma_grh *grh, const union openrdma_gid *sgid,
		  const union openrdma_gid *dgid, uint32_t paylen);

struct sw_peers;

int sw_peers_create(struct sw_peers **peers_out);
void sw_peers_destroy(struct sw_peers *peers);
/* The index of addr (port included), added if new; -OPENRDMA_ENOSPC once
 * all 65535 are taken. */
int sw_peers_index(struct sw_peers *peers, const struct sockaddr *addr,
		   uint16_t *index_out);
int sw_peers_addr(struct sw_peers *peers, uint16_t index,
		  struct sockaddr_storage *addr);
/* openrdma_ah_attr_from_wc() for software transports. */
int sw_ah_attr_from_wc(struct sw_peers *peers, uint8_t port_num,
		       const struct openrdma_wc *wc,
		       const struct openrdma_grh *grh,
		       struct openrdma_ah_attr *attr);

#endif /* CORE_SW_ADDR_H */
