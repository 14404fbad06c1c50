/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Addresses.  IPv6: a CM connection to [::1] carries data both ways, and
 * a config-file interface bound to one netdev (lo) works like tcp0.  The
 * addresses the kernel hands back (accept, getsockname, recvfrom) reach
 * events and QP attributes whole: after the family's length they are
 * zero, and IPv4-mapped IPv6 ones become IPv4.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "transports/tcp/tcp.h"
#include "tt.h"

static bool have_ipv6_loopback(void)
{
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6,
				     .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	int fd = socket(AF_INET6, SOCK_STREAM, 0);
	bool ok;

	if (fd < 0)
		return false;
	ok = !bind(fd, (struct sockaddr *)&sin6, sizeof(sin6));
	close(fd);
	return ok;
}

/* Sends a message each way between connected sides a and b. */
static void exchange(struct tt_side *a, struct tt_side *b)
{
	struct openrdma_wc wc[2];

	memcpy(a->buf, "from a", 7);
	memcpy(b->buf, "from b", 7);
	tt_post_recv(a, 1, 64, 64);
	tt_post_recv(b, 1, 64, 64);
	tt_post(a, OPENRDMA_WR_SEND, 2, 0, 7, 0, 0);
	tt_post(b, OPENRDMA_WR_SEND, 2, 0, 7, 0, 0);
	cr_assert_eq(tt_poll(a, 2, wc, TT_TIMEOUT_MS), 2);
	cr_assert_eq(wc[0].status, OPENRDMA_WC_SUCCESS);
	cr_assert_eq(wc[1].status, OPENRDMA_WC_SUCCESS);
	cr_assert_eq(tt_poll(b, 2, wc, TT_TIMEOUT_MS), 2);
	cr_assert_eq(wc[0].status, OPENRDMA_WC_SUCCESS);
	cr_assert_eq(wc[1].status, OPENRDMA_WC_SUCCESS);
	cr_assert_str_eq((char *)a->buf + 64, "from b");
	cr_assert_str_eq((char *)b->buf + 64, "from a");
}

Test(tcp_ipv6, cm_connection_over_ipv6_loopback)
{
	struct sockaddr_in6 any6 = { .sin6_family = AF_INET6,
				     .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	struct sockaddr_storage local, peer;
	struct tt_side s, c;

	if (!have_ipv6_loopback())
		cr_skip_test("no IPv6 loopback address (::1) on this host");
	tt_open(&s, "tcp0", 4096, TT_ACCESS, 0);
	tt_open(&c, "tcp0", 4096, TT_ACCESS, 0);
	tt_qp(&s, OPENRDMA_QPT_RC);
	tt_qp(&c, OPENRDMA_QPT_RC);
	tt_cm_connect(&s, &c, (struct sockaddr *)&any6);
	cr_assert_eq(openrdma_cm_peer_addr(c.id, &peer), 0);
	cr_assert_eq(peer.ss_family, AF_INET6);
	cr_assert_eq(openrdma_cm_local_addr(s.listen_id, &local), 0);
	cr_assert_eq(local.ss_family, AF_INET6);
	cr_assert_eq(openrdma_cm_local_addr(c.id, &local), 0);
	cr_assert_eq(local.ss_family, AF_INET6);
	exchange(&s, &c);
	tt_close(&c);
	tt_close(&s);
}

Test(tcp_ipv6, interface_bound_to_a_netdev)
{
	char path[] = "/tmp/openrdma-tcp-XXXXXX";
	struct sockaddr_storage any;
	struct sockaddr_in *sin;
	struct tt_side s, c;
	FILE *fp;
	int fd;

	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	fp = fdopen(fd, "w");
	cr_assert_not_null(fp);
	fprintf(fp, "interface tcplo transport=tcp device=lo "
		    "keepalive_ms=2000\n");
	fclose(fp);
	/* read once, by the first use of the registry in this process */
	setenv("OPENRDMA_CONFIG", path, 1);
	tt_open(&s, "tcplo", 4096, TT_ACCESS, 0);
	unlink(path);
	tt_open(&c, "tcp0", 4096, TT_ACCESS, 0);
	sin = (struct sockaddr_in *)&s.port.addr;
	cr_assert_eq(sin->sin_family, AF_INET, "lo has IPv4 127.0.0.1");
	cr_assert_eq(ntohl(sin->sin_addr.s_addr), INADDR_LOOPBACK);
	cr_assert_neq(sin->sin_port, 0, "the port has its own port number");
	tt_qp(&s, OPENRDMA_QPT_RC);
	tt_qp(&c, OPENRDMA_QPT_RC);
	/* the interface's address, another port */
	any = s.port.addr;
	((struct sockaddr_in *)&any)->sin_port = 0;
	tt_cm_connect(&s, &c, (struct sockaddr *)&any);
	exchange(&s, &c);
	tt_close(&c);
	tt_close(&s);
}

/* Storage as the kernel leaves it: the family's bytes written over
 * garbage. */
static void fill_garbage(struct sockaddr_storage *ss, const void *sa,
			 size_t len)
{
	memset(ss, 0xa5, sizeof(*ss));
	memcpy(ss, sa, len);
}

static void expect_zero_after(const struct sockaddr_storage *ss, size_t len)
{
	const uint8_t *p = (const uint8_t *)ss;
	size_t i;

	for (i = len; i < sizeof(*ss); i++)
		cr_assert_eq(p[i], 0, "byte %zu after the address: %#x", i,
			     p[i]);
}

Test(tcp_addr, normalize_zeroes_what_follows_an_ipv4_address)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(4791) };
	struct sockaddr_storage ss;
	struct sockaddr_in *out = (struct sockaddr_in *)&ss;

	sin.sin_addr.s_addr = htonl(0xc0000202);
	fill_garbage(&ss, &sin, sizeof(sin));
	tcp_addr_normalize(&ss);
	cr_assert_eq(out->sin_family, AF_INET);
	cr_assert_eq(out->sin_port, htons(4791));
	cr_assert_eq(out->sin_addr.s_addr, htonl(0xc0000202));
	expect_zero_after(&ss, sizeof(sin));
}

Test(tcp_addr, normalize_zeroes_what_follows_an_ipv6_address)
{
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6,
				     .sin6_port = htons(4791),
				     .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	struct sockaddr_storage ss;

	fill_garbage(&ss, &sin6, sizeof(sin6));
	tcp_addr_normalize(&ss);
	cr_assert_eq(memcmp(&ss, &sin6, sizeof(sin6)), 0);
	expect_zero_after(&ss, sizeof(sin6));
}

Test(tcp_addr, normalize_makes_a_mapped_address_ipv4)
{
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6,
				     .sin6_port = htons(4791) };
	struct sockaddr_storage ss;
	struct sockaddr_in *out = (struct sockaddr_in *)&ss;

	cr_assert_eq(inet_pton(AF_INET6, "::ffff:192.0.2.2", &sin6.sin6_addr),
		     1);
	fill_garbage(&ss, &sin6, sizeof(sin6));
	tcp_addr_normalize(&ss);
	cr_assert_eq(out->sin_family, AF_INET);
	cr_assert_eq(out->sin_port, htons(4791));
	cr_assert_eq(out->sin_addr.s_addr, htonl(0xc0000202));
	expect_zero_after(&ss, sizeof(*out));
}
