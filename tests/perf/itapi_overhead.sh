#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# itapi_overhead.sh [interface [round trips]]: the instructions the IT-API
# adds to each call over the transport, counted with callgrind on
# tests/perf/itapi_overhead (a one-thread ping-pong; self0 by default).
# Run from the build directory.  Prints, per call:
#   it_post_send   less the transport's qp_post_send
#   it_post_recv   less the transport's qp_post_recv
#   it_evd_wait    less the transport's cq_poll and the converter
#   itapi_dto_convert, the completion's conversion into an event
set -e
dev=${1:-self0}
n=${2:-20000}
prog=./tests/perf/itapi_overhead
command -v valgrind >/dev/null || { echo "itapi_overhead: SKIP: no valgrind"; exit 77; }
case $dev in
self*) t=self ;;
shm*) t=shm ;;
tcp*) t=tcp ;;
*) t=verbs ;;
esac
out=${TMPDIR:-/tmp}/itapi_overhead.$$.cg
trap 'rm -f "$out"' EXIT
OPENRDMA_EVD_SPIN_US=${OPENRDMA_EVD_SPIN_US:-1000000} \
	valgrind -q --tool=callgrind --fair-sched=yes --callgrind-out-file="$out" \
	"$prog" -d "$dev" -n "$n"
callgrind_annotate --inclusive=yes --threshold=100 "$out" |
	awk -v t="$t" -v n="$n" '
	# one line per function of the library: "Ir (pct) file:function [lib]"
	/libopenrdma/ {
		x = $1; gsub(",", "", x)
		f = $0; sub(/ \[.*/, "", f); sub(/.*:/, "", f)
		if (!(f in ir)) ir[f] = x
	}
	END {
		sends = 2 * n; recvs = 2 * n
		waits = 2 * n + 2 * int(n / 16)
		printf "it_post_send       %6.1f\n", (ir["it_post_send"] - ir[t "_qp_post_send"]) / sends
		printf "it_post_recv       %6.1f\n", (ir["it_post_recv"] - ir[t "_qp_post_recv"]) / recvs
		printf "it_evd_wait        %6.1f\n", (ir["it_evd_wait"] - ir[t "_cq_poll"] - ir["itapi_dto_convert"]) / waits
		printf "itapi_dto_convert  %6.1f\n", ir["itapi_dto_convert"] / waits
	}'
