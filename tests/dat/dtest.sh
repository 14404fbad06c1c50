#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# Debian's DAT test programs (dapl2-utils: dtest, dtestx), unchanged
# binaries, run as server and client processes over OpenRDMA: the
# system's libdat2 loads OpenRDMA's provider from a dat.conf line
# (DAT_OVERRIDE) that openrdma-info --dat-conf writes.  The two processes
# need an interface that reaches across processes (tcp0, shm0; self0
# serves one process only), so the test runs on each such interface
# present, and is skipped, saying why, when there is none.
#
# Environment (the generated wrapper sets the first two):
#   DAT_BUILDDIR               the build tree; its .libs holds the provider
#   DAT_INFO                   the build tree's openrdma-info
#   OPENRDMA_DTEST_INTERFACES  interfaces to use (default: tcp0 shm0)
#   OPENRDMA_DTEST_TIMEOUT     seconds per run (default: 120)
# Exit status: 0 passed, 1 failed, 77 skipped.

skip() {
	echo "SKIP: $*"
	exit 77
}

interfaces=${OPENRDMA_DTEST_INTERFACES:-"tcp0 shm0"}
limit=${OPENRDMA_DTEST_TIMEOUT:-120}
port=15828 # dtest's side channel, fixed in the programs

dtest=$(command -v dtest) ||
	skip "no dtest: install Debian's dapl2-utils (apt-get install dapl2-utils)"
dtestx=$(command -v dtestx) || dtestx=
libdat2=$(ldd "$dtest" 2>/dev/null | awk '/libdat2/ { print $3 }')
[ -n "$libdat2" ] && [ -e "$libdat2" ] ||
	skip "$dtest does not load a libdat2 (Debian's libdapl2 provides it)"
[ -x "$DAT_INFO" ] || skip "no openrdma-info at '$DAT_INFO': build it first"
provider=$DAT_BUILDDIR/.libs/libopenrdma-dat.so.2
[ -e "$provider" ] || skip "no provider library at $provider: build it first"

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

# Whether something listens on TCP port $1 (the server is ready for us).
listening() {
	hex=$(printf '%04X' "$1")
	grep -q ":$hex [0-9A-F]*:0000 0A " /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# run NAME PROGRAM SERVER_ARGS CLIENT_ARGS: one server and one client.
run_pair() {
	name=$1 prog=$2 sargs=$3 cargs=$4
	log=$tmp/$name
	# shellcheck disable=SC2086
	timeout "$limit" "$prog" $sargs >"$log.server" 2>&1 &
	spid=$!
	n=0
	while ! listening $port && [ $n -lt 300 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	# shellcheck disable=SC2086
	timeout "$limit" "$prog" $cargs >"$log.client" 2>&1
	crc=$?
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

# A connect can reach the server before its listener exists (the dtest
# programs send their address first, then listen): one more try then.
run() {
	run_pair "$@" || { sleep 1 && run_pair "$@"; }
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
exit $status
