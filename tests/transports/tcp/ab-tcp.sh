#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# From the build directory (make ab-tcp): tcp0's 8-byte latency next to
# a bare TCP socket and a minimal framed protocol on one, in batches that
# take turns within one pair of processes (tests/transports/tcp/
# pingpong_ab, whose header says what each loop does).  Two runs of a
# benchmark minutes apart can find this host in different states (a raw
# ping-pong of 3.8 us in one, 5.5 us in the next); batches a few
# milliseconds apart share one, so the ratios hold to about a hundredth
# where separate runs scatter by several.  Each batch's figure is its
# median round trip (pingpong_ab -m), as openrdma-perf and the raw
# socket benchmark give medians.
#
#   AB_LIB      directory of the libopenrdma.so.1 to measure (default:
#               the build's .libs)
#   AB_ROUNDS   rounds (default 40), AB_ITERS round trips per batch
#               (default 2000), AB_SIZE message size (default 8)
#   AB_PORT     first of the three ports (default 18600)
#   CPU_A, CPU_B  client's and server's cores (default 0 and 1)
#   AB_DEV      interface (default tcp0); its address comes from
#               openrdma-info
set -u
lib=${AB_LIB:-$PWD/.libs}
dev=${AB_DEV:-tcp0}
prog=./tests/transports/tcp/pingpong_ab
args=(-m -d "$dev" -p "${AB_PORT:-18600}" -r "${AB_ROUNDS:-40}"
	-n "${AB_ITERS:-2000}" -s "${AB_SIZE:-8}")

[ -x "$prog" ] || { echo "ab-tcp: no $prog (make $prog)" >&2; exit 1; }
# "192.0.2.2:37621", "[fe80::1]:37621", or without the port
addr=$(LD_LIBRARY_PATH=$lib ./registry/openrdma-info -d "$dev" -v |
	awk '$1 == "address:" { a = $2
		if (a ~ /^\[/) { sub(/\]:[0-9]+$/, "", a); sub(/^\[/, "", a) }
		else if (gsub(/:/, ":", a) == 1) sub(/:[0-9]+$/, "", a)
		print a; exit }')
[ -n "$addr" ] || { echo "ab-tcp: no address for $dev" >&2; exit 1; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# spinning IT-API waits, as it_pingpong's in the benchmarks
export LD_LIBRARY_PATH=$lib OPENRDMA_EVD_SPIN_US=1000000
taskset -c "${CPU_B:-1}" timeout 600 "$prog" "${args[@]}" > "$log" 2>&1 &
srv=$!
sleep 0.5
taskset -c "${CPU_A:-0}" timeout 600 "$prog" "${args[@]}" "$addr"
rc=$?
wait $srv || rc=1
[ $rc = 0 ] || { echo "ab-tcp: failed; the server said:" >&2; cat "$log" >&2; }
exit $rc
