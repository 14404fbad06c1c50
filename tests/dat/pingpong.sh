#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# pingpong.sh openrdma|dapl
#
# Runs examples/dat_pingpong, a plain DAT program, two ways:
#   openrdma  the build's own dat_pingpong, linked with OpenRDMA's
#             libdat2-compatible registry library: both sides in one
#             process on OPENRDMA_TEST_INTERFACE (self0 when unset), then
#             server and client processes on a cross-process interface
#             (tcp0 or shm0) when one is present
#   dapl      the same source compiled unchanged against DAPL's headers
#             and linked with the system's libdat2, which loads
#             OpenRDMA's provider from a dat.conf line (DAT_OVERRIDE):
#             the same runs; skipped, with the reason, without
#             libdapl-dev
#
# Environment (set by the generated wrappers): CC, DAT_BUILDDIR (the
# build tree), DAT_TOP_SRCDIR (the source tree), DAT_INFO (openrdma-info).
# Exit status: 0 passed, 1 failed, 77 skipped.

mode=${1:-openrdma}
iface=${OPENRDMA_TEST_INTERFACE:-self0}
: "${CC:=cc}"
# a connection qualifier of this run's own: a TCP port on tcp0, below
# Linux's ephemeral range
qual=$((12000 + $$ % 20000))

skip() {
	echo "SKIP: $*"
	exit 77
}

fail() {
	echo "FAIL: $*"
	exit 1
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/openrdma-dat-pingpong.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

# The dat.conf lines of the interfaces present, naming this build's
# provider by path.
LD_LIBRARY_PATH=$DAT_BUILDDIR/.libs "$DAT_INFO" --dat-conf >"$tmp/all.conf" ||
	fail "openrdma-info --dat-conf"
sed "s|libopenrdma-dat.so.2|$DAT_BUILDDIR/.libs/libopenrdma-dat.so.2|" \
	"$tmp/all.conf" >"$tmp/dat.conf"
grep -q "^ofa-openrdma-$iface " "$tmp/all.conf" ||
	skip "interface $iface is not present"

# run_loopback PROGRAM: both sides in one process, small and large.
run_loopback() {
	for args in "-n 2000 -S 64" "-n 100 -S 1048576"; do
		echo "== $1 -P ofa-openrdma-$iface -l $args"
		# shellcheck disable=SC2086
		timeout 120 "$1" -P "ofa-openrdma-$iface" -l -q $qual $args ||
			fail "$1 -l $args on $iface"
	done
}

# run_pair PROGRAM IFACE: a server process and a client process.
run_pair() {
	prog=$1 ia=ofa-openrdma-$2
	echo "== $prog -P $ia: server and client, qualifier $qual"
	# a file of its own: the last server's "listening" must not start
	# the client before this server listens
	out=$tmp/server-$2-$(basename "$prog")
	timeout 120 "$prog" -P "$ia" -s -q $qual -n 500 -S 4096 \
		>"$out" 2>&1 &
	spid=$!
	n=0
	while ! grep -qs "^listening" "$out" && [ $n -lt 300 ] &&
		kill -0 $spid 2>/dev/null; do
		sleep 0.1
		n=$((n + 1))
	done
	host=$(sed -n 's/^listening on .* address \([^,]*\),.*/\1/p' \
		"$out")
	[ -n "$host" ] || {
		kill $spid 2>/dev/null
		cat "$out"
		fail "$prog server on $2 did not start"
	}
	timeout 120 "$prog" -P "$ia" -h "$host" -q $qual -n 500 -S 4096
	crc=$?
	wait $spid
	src=$?
	sed 's/^/server: /' "$out"
	if [ $crc -ne 0 ] || [ $src -ne 0 ]; then
		fail "$prog on $2 (server exit $src, client exit $crc)"
	fi
}

# run_all PROGRAM: loopback, then a pair on each cross-process interface.
run_all() {
	run_loopback "$1"
	for i in tcp0 shm0; do
		if grep -q "^ofa-openrdma-$i " "$tmp/all.conf"; then
			run_pair "$1" $i
		else
			echo "($i not present: no cross-process run on it)"
		fi
	done
}

case $mode in
openrdma)
	prog=$DAT_BUILDDIR/examples/dat_pingpong
	[ -x "$prog" ] || fail "no $prog: build it first"
	run_all "$prog"
	;;
dapl)
	[ -e /usr/include/dat2/udat.h ] ||
		skip "DAPL's headers are not installed (apt-get install libdapl-dev)"
	# DAPL's headers and library only: no OpenRDMA path on the line
	# a sanitizer build's provider needs the sanitizer's runtime in the
	# program (libdat2 itself is Debian's, uninstrumented)
	# shellcheck disable=SC2086
	$CC ${SAN_CFLAGS:-} -std=gnu11 -Wall -Wextra -Werror \
		-o "$tmp/dat_pingpong" \
		"$DAT_TOP_SRCDIR/examples/dat_pingpong.c" -ldat2 ||
		fail "dat_pingpong.c does not build against DAPL's headers"
	lib=$(ldd "$tmp/dat_pingpong" | awk '/libdat2/ { print $3 }')
	echo "built against /usr/include/dat2, runs with $lib"
	DAT_OVERRIDE=$tmp/dat.conf
	LD_LIBRARY_PATH=$DAT_BUILDDIR/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	export DAT_OVERRIDE LD_LIBRARY_PATH
	run_all "$tmp/dat_pingpong"
	;;
*)
	fail "usage: pingpong.sh openrdma|dapl"
	;;
esac
echo "PASS: dat_pingpong ($mode)"
exit 0
