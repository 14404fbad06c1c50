#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# Debian's DAT test programs (dapl2-utils: dtest, dtestx), unchanged
# binaries, run as server and client processes over OpenRDMA: the
# system's libdat2, then OpenRDMA's registry library in its place, loads
# OpenRDMA's provider from a dat.conf line (DAT_OVERRIDE) that
# openrdma-info --dat-conf writes.  The two processes
# need an interface that reaches across processes (tcp0, shm0; self0
# serves one process only), so the test runs on each such interface
# present, and is skipped, saying why, when there is none.
#
# Environment (the generated wrapper sets the first four):
#   DAT_BUILDDIR               the build tree; its .libs holds the provider
#   DAT_INFO                   the build tree's openrdma-info
#   DAT_TOP_SRCDIR             the source tree (its include/dat2)
#   CC                         the compiler, for the connect delay below
#   OPENRDMA_DTEST_INTERFACES  interfaces to use (default: tcp0 shm0)
#   OPENRDMA_DTEST_TIMEOUT     seconds per run (default: 60; a run takes
#                              a few)
# Exit status: 0 passed, 1 failed, 77 skipped.

skip() {
	echo "SKIP: $*"
	exit 77
}

interfaces=${OPENRDMA_DTEST_INTERFACES:-"tcp0 shm0"}
limit=${OPENRDMA_DTEST_TIMEOUT:-60}
port=15828 # dtest's side channel, fixed in the programs
qual=45248 # dtest's service point, fixed too

dtest=$(command -v dtest) ||
	skip "no dtest: install Debian's dapl2-utils (apt-get install dapl2-utils)"
dtestx=$(command -v dtestx) || dtestx=
libdat2=$(ldd "$dtest" 2>/dev/null | awk '/libdat2/ { print $3 }')
if [ -z "$libdat2" ] || [ ! -e "$libdat2" ]; then
	skip "$dtest does not load a libdat2 (Debian's libdapl2 provides it)"
fi
[ -x "$DAT_INFO" ] || skip "no openrdma-info at '$DAT_INFO': build it first"
# dtest is Debian's binary, built without a sanitizer: it cannot load a
# sanitizer build's provider (the plain build runs this test)
[ -z "${SAN_CFLAGS:-}" ] ||
	skip "a sanitizer build's provider needs the sanitizer's runtime, which $dtest does not have"
provider=$DAT_BUILDDIR/.libs/libopenrdma-dat.so.2
[ -e "$provider" ] || skip "no provider library at $provider: build it first"

# dtest's fixed ports allow one run at a time on this machine: parallel
# builds' runs of this script take turns
if command -v flock >/dev/null; then
	exec 9>"${TMPDIR:-/tmp}/openrdma-dtest.lock"
	flock -w $((limit * 10)) 9 || skip "another dtest run holds the lock"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/openrdma-dtest.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

# The dat.conf lines of the interfaces present, pointing at this build.
LD_LIBRARY_PATH=$DAT_BUILDDIR/.libs "$DAT_INFO" --dat-conf >"$tmp/all.conf" ||
	skip "openrdma-info --dat-conf failed"
found=
for i in $interfaces; do
	if grep -q "^ofa-openrdma-$i " "$tmp/all.conf"; then
		found="$found $i"
	fi
done
if [ -z "$found" ]; then
	present=$(awk '/^ofa-openrdma-/ { sub("ofa-openrdma-", "", $1); printf " %s", $1 }' "$tmp/all.conf")
	skip "no interface reaching across processes among '$interfaces' (present:${present:- none}); build with --enable-tcp or --enable-shm"
fi
sed "s|libopenrdma-dat.so.2|$provider|" "$tmp/all.conf" >"$tmp/dat.conf"

DAT_OVERRIDE=$tmp/dat.conf
LD_LIBRARY_PATH=$DAT_BUILDDIR/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export DAT_OVERRIDE LD_LIBRARY_PATH
echo "libdat2: $libdat2"
echo "dat.conf:"
sed 's/^/  /' "$tmp/dat.conf"

# The dtest programs' server sends its address to the client before it
# creates its service point; on InfiniBand the client's address and route
# resolution take long enough to hide that.  Transports that answer at
# once can refuse the client, so the client gets that time from a small
# preload that delays dat_ep_connect() (the binaries stay unchanged).
cat >"$tmp/delay.c" <<'SHIM'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <time.h>
#include <dat2/udat.h>

typedef DAT_RETURN (*connect_fn)(DAT_EP_HANDLE, DAT_IA_ADDRESS_PTR,
				 DAT_CONN_QUAL, DAT_TIMEOUT, DAT_COUNT,
				 const DAT_PVOID, DAT_QOS, DAT_CONNECT_FLAGS);

DAT_RETURN dat_ep_connect(DAT_EP_HANDLE ep, DAT_IA_ADDRESS_PTR addr,
			  DAT_CONN_QUAL qual, DAT_TIMEOUT timeout,
			  DAT_COUNT len, const DAT_PVOID pdata, DAT_QOS qos,
			  DAT_CONNECT_FLAGS flags)
{
	struct timespec ts = { 0, 200 * 1000 * 1000 };
	connect_fn next = (connect_fn)dlsym(RTLD_NEXT, "dat_ep_connect");

	if (!next)
		return DAT_INTERNAL_ERROR;
	nanosleep(&ts, NULL);
	return next(ep, addr, qual, timeout, len, pdata, qos, flags);
}
SHIM
delay=
if ${CC:-cc} -shared -fPIC -Wall -I"$DAT_TOP_SRCDIR/include" \
	-o "$tmp/delay.so" "$tmp/delay.c" -ldl >"$tmp/delay.log" 2>&1; then
	delay=$tmp/delay.so
else
	echo "no connect delay for the clients (the shim did not build):"
	cat "$tmp/delay.log"
fi

# Whether something listens on TCP port $1 (the server is ready for us).
listening() {
	hex=$(printf '%04X' "$1")
	grep -q ":$hex [0-9A-F]*:0000 0A " /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# in_use PORT: a TCP or UDP socket of this host has PORT for its own
# (another test's connection or datagram socket on an ephemeral port),
# other than a connection in TIME_WAIT, which a listener may bind over.
in_use() {
	hex=$(printf '%04X' "$1")
	awk -v p=":$hex" '$2 ~ p "$" && $4 != "06" { f = 1 } END { exit !f }' \
		/proc/net/tcp /proc/net/tcp6 /proc/net/udp /proc/net/udp6 \
		2>/dev/null
}

# run NAME PROGRAM SERVER_ARGS CLIENT_ARGS: one server and one client.
run_pair() {
	name=$1 prog=$2 sargs=$3 cargs=$4
	log=$tmp/$name
	# a dtest of someone else's would answer our client: wait it out
	n=0
	while { listening $port || in_use $qual; } && [ $n -lt 600 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	# shellcheck disable=SC2086
	timeout "$limit" "$prog" $sargs >"$log.server" 2>&1 &
	spid=$!
	n=0
	while ! listening $port && [ $n -lt 300 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	# shellcheck disable=SC2086
	LD_PRELOAD=$delay${LD_PRELOAD:+:$LD_PRELOAD} \
		timeout "$limit" "$prog" $cargs >"$log.client" 2>&1
	crc=$?
	# a client that gave up leaves its server waiting: end it soon
	if [ $crc -ne 0 ] || grep -q "FAILED" "$log.client"; then
		n=0
		while kill -0 $spid 2>/dev/null && [ $n -lt 50 ]; do
			sleep 0.1
			n=$((n + 1))
		done
		kill $spid 2>/dev/null
	fi
	wait $spid
	src=$?
	# the programs exit 0 on failure too: read their verdict
	if [ $crc -eq 0 ] && [ $src -eq 0 ] &&
		grep -q "PASSED" "$log.server" && grep -q "PASSED" "$log.client" &&
		! grep -q "FAILED" "$log.server" "$log.client"; then
		echo "PASS: $name"
		return 0
	fi
	echo "FAIL: $name (server exit $src, client exit $crc)"
	echo "--- server ($prog $sargs)"
	tail -n 25 "$log.server"
	echo "--- client ($prog $cargs)"
	tail -n 25 "$log.client"
	return 1
}

# Should a connect still reach the server before its service point
# exists (see the delay above), the run fails, or for UD hangs until the
# time limit: two more tries then.  A server refused its fixed service
# point met a socket of a concurrent test (make check -j) bound to that
# port without listening or connecting, which in_use() cannot see: it
# tries again for up to half a minute.
run() {
	tries=0
	while ! run_pair "$@"; do
		tries=$((tries + 1))
		if grep -q DAT_CONN_QUAL_IN_USE "$tmp/$1.server"; then
			[ $tries -lt 15 ] || return 1
			sleep 2
		else
			[ $tries -lt 3 ] || return 1
			sleep 1
		fi
	done
}

status=0
for i in $found; do
	ia=ofa-openrdma-$i
	echo "== $i"
	run "dtest-$i" "$dtest" "-P $ia -s" "-P $ia -h 127.0.0.1" || status=1
	run "dtest-polling-$i" "$dtest" "-P $ia -s -p" \
		"-P $ia -h 127.0.0.1 -p" || status=1
	run "dtest-cno-$i" "$dtest" "-P $ia -s -c" "-P $ia -h 127.0.0.1 -c" ||
		status=1
	if [ -n "$dtestx" ]; then
		run "dtestx-$i" "$dtestx" "-P $ia -s" "-P $ia -h 127.0.0.1" ||
			status=1
		run "dtestx-ud-$i" "$dtestx" "-P $ia -s -u" \
			"-P $ia -c -h 127.0.0.1 -u" || status=1
	else
		echo "dtestx not installed: extension runs left out"
	fi
done

# The same binaries through OpenRDMA's registry library instead of the
# system's libdat2: a drop-in (same soname's symbols and DAT_2.0
# versions), found first under the name the programs were linked with.
ours=$DAT_BUILDDIR/.libs/libopenrdma-dat2.so.2
if [ -e "$ours" ]; then
	mkdir "$tmp/ours" && ln -s "$ours" "$tmp/ours/libdat2.so.2"
	system_path=$LD_LIBRARY_PATH
	LD_LIBRARY_PATH=$tmp/ours:$system_path
	lib=$(ldd "$dtest" | awk '/libdat2/ { print $3 }')
	echo "== through OpenRDMA's registry library: $lib"
	for i in $found; do
		ia=ofa-openrdma-$i
		run "dtest-ours-$i" "$dtest" "-P $ia -s" "-P $ia -h 127.0.0.1" ||
			status=1
		if [ -n "$dtestx" ]; then
			run "dtestx-ours-$i" "$dtestx" "-P $ia -s" \
				"-P $ia -h 127.0.0.1" || status=1
		fi
	done
	LD_LIBRARY_PATH=$system_path
else
	echo "FAIL: no $ours: OpenRDMA's registry library is not built"
	status=1
fi
exit $status
