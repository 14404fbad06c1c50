#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# The tcp transport between two hosts, as two network namespaces joined by
# veth pairs: the demo (server in one namespace, client in the other) and
# tcp_xcheck (a subset of the conformance checks, both sides in different
# namespaces), over IPv4 and IPv6.  The first pair has both families (tcp0
# takes its IPv4 address); the second only IPv6, for interfaces of the
# config file bound to it (device=), whose port address is then IPv6.
# Only addresses inside the namespaces are used.  Needs root and ip(8);
# otherwise exits 77 and says why.
#
#   tests/transports/tcp/netns.sh BUILDDIR
set -u

B=${1:-.}
DEMO=$B/examples/openrdma_demo
XCHECK=$B/tests/transports/tcp/tcp_xcheck
NS1=ortcp-a-$$
NS2=ortcp-b-$$
V1=ortcpa$$
V2=ortcpb$$
V3=ortcpc$$
V4=ortcpd$$
A4=10.231.0.1
B4=10.231.0.2
A6=fd00:231::1
B6=fd00:231::2
C6=fd00:232::1
D6=fd00:232::2
TMP=
FAIL=0

skip() {
	echo "netns.sh: skipped: $*"
	exit 77
}

cleanup() {
	ip netns del "$NS1" 2>/dev/null
	ip netns del "$NS2" 2>/dev/null
	[ -n "$TMP" ] && rm -rf "$TMP"
}

[ "$(id -u)" = 0 ] || skip "network namespaces need root"
command -v ip >/dev/null 2>&1 || skip "no ip(8) (iproute2)"
[ -x "$DEMO" ] || skip "$DEMO is not built"
[ -x "$XCHECK" ] || skip "$XCHECK is not built (make check builds it)"

trap cleanup EXIT INT TERM
ip netns add "$NS1" 2>/dev/null || skip "ip netns add: not permitted here"
ip netns add "$NS2" || skip "ip netns add: not permitted here"
ip link add "$V1" type veth peer name "$V2" 2>/dev/null ||
	skip "ip link add type veth: not permitted here"
ip link add "$V3" type veth peer name "$V4" || exit 1
ip link set "$V1" netns "$NS1" && ip link set "$V2" netns "$NS2" &&
	ip link set "$V3" netns "$NS1" && ip link set "$V4" netns "$NS2" ||
	exit 1
for ns in "$NS1" "$NS2"; do
	ip -n "$ns" link set lo up || exit 1
done
ip -n "$NS1" addr add "$A4/24" dev "$V1" &&
	ip -n "$NS2" addr add "$B4/24" dev "$V2" &&
	ip -n "$NS1" addr add "$A6/64" dev "$V1" nodad &&
	ip -n "$NS2" addr add "$B6/64" dev "$V2" nodad &&
	ip -n "$NS1" link set "$V1" up &&
	ip -n "$NS2" link set "$V2" up &&
	ip -n "$NS1" addr add "$C6/64" dev "$V3" nodad &&
	ip -n "$NS2" addr add "$D6/64" dev "$V4" nodad &&
	ip -n "$NS1" link set "$V3" up &&
	ip -n "$NS2" link set "$V4" up || exit 1
TMP=$(mktemp -d)
# tcp6: an interface on the IPv6-only pair, one config file per side
echo "interface tcp6 transport=tcp device=$V3" >"$TMP/a.conf"
echo "interface tcp6 transport=tcp device=$V4" >"$TMP/b.conf"

# Runs "$@" as the client after the server (in NS1, log $1) is ready.
wait_listening() {
	i=0
	while ! grep -q listening "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 100 ] || return 1
		sleep 0.1
	done
}

result() {
	if [ "$1" = 0 ]; then
		echo "netns.sh: $2: ok"
	else
		echo "netns.sh: $2: FAILED"
		FAIL=1
	fi
}

# The demo: the server listens on its interface's port address (tcp0: the
# namespace's first non-loopback IPv4 address, $A4; tcp6: $C6); the client
# retries until it answers.
demo() {
	iface=$1
	server=$2
	client=$3
	size=$4
	port=$5
	ip netns exec "$NS1" env OPENRDMA_CONFIG="$TMP/a.conf" "$DEMO" \
		-d "$iface" -p "$port" -n 200 -s "$size" \
		>"$TMP/demo-server.log" 2>&1 &
	srv=$!
	ip netns exec "$NS2" env OPENRDMA_CONFIG="$TMP/b.conf" "$DEMO" \
		-d "$iface" -p "$port" -n 200 -s "$size" "$server" \
		>"$TMP/demo-client.log" 2>&1
	rc=$?
	wait $srv || rc=1
	cat "$TMP/demo-client.log"
	[ $rc = 0 ] || cat "$TMP/demo-server.log"
	result $rc "demo on $iface, $size-byte messages, $client -> $server"
}

# Each server has a log of its own: a reused one could still show the
# previous server's "listening" when the client looks.
xcheck() {
	addr=$1
	port=$2
	slog=$TMP/x-server-$port.log
	clog=$TMP/x-client-$port.log
	ip netns exec "$NS1" "$XCHECK" -a "$addr" -p "$port" server \
		>"$slog" 2>&1 &
	srv=$!
	if wait_listening "$slog"; then
		ip netns exec "$NS2" "$XCHECK" -a "$addr" -p "$port" client \
			>"$clog" 2>&1
		rc=$?
	else
		rc=1
	fi
	wait $srv || rc=1
	cat "$slog" "$clog"
	result $rc "conformance subset (tcp_xcheck) to $addr"
}

demo tcp0 "$A4" "$B4" 8 18601
demo tcp0 "$A4" "$B4" 1048576 18602
demo tcp6 "$C6" "$D6" 8 18605
demo tcp6 "$C6" "$D6" 1048576 18606
xcheck "$A4" 18603
xcheck "$A6" 18604
exit $FAIL
