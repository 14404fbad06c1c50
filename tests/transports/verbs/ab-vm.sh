#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# Runs in the vmlab guest, from the build directory (make ab-vmlab):
# pingpong_ab with two builds of libopenrdma in turns, to tell whether a
# change moved the IT-API's latency.  Under TCG one run's ratio scatters
# by several hundredths and the emulated CPU's speed drifts, so each pair
# runs both builds, in an order that flips from pair to pair, and the
# summary gives each build's mean ratios and the mean of the pairs'
# differences with its standard error: a change of 1% takes a hundred
# pairs or more to see.
#
#   AB_LIB_A, AB_LIB_B  directories holding each build's libopenrdma.so.1
#   AB_PAIRS            pairs of runs (default 50)
#   AB_DEV, AB_ADDR     device and its address (rxe0, 192.168.77.1;
#                       siw0's is 192.168.78.1)
set -u
a=${AB_LIB_A:?AB_LIB_A: the library directory of the first build}
b=${AB_LIB_B:?AB_LIB_B: the library directory of the second build}
pairs=${AB_PAIRS:-50}
dev=${AB_DEV:-rxe0}
case $dev in
siw0) addr=${AB_ADDR:-192.168.78.1} ;;
*) addr=${AB_ADDR:-192.168.77.1} ;;
esac
prog=./tests/transports/verbs/pingpong_ab
port=21000
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# one LIBDIR LABEL: a run of pingpong_ab, "label core/perftest IT/perftest"
one() {
	port=$((port + 10))
	LD_LIBRARY_PATH=$1 OPENRDMA_EVD_SPIN_US=1000000 taskset -c 1 \
		timeout 120 "$prog" -d "$dev-1" -p $port -n 200 -r 30 \
		> /tmp/ab-server.log 2>&1 &
	local srv=$!
	sleep 0.5
	LD_LIBRARY_PATH=$1 OPENRDMA_EVD_SPIN_US=1000000 taskset -c 0 \
		timeout 120 "$prog" -d "$dev-1" -p $port -n 200 -r 30 "$addr" |
		awk -v l="$2" '/^core\/perftest/ { c = $2 }
			/^IT-API\/perftest/ { i = $2 }
			END { if (c && i) print l, c, i }'
	wait $srv
}

for ((p = 1; p <= pairs; p++)); do
	if ((p % 2)); then
		one "$a" A && one "$b" B
	else
		one "$b" B && one "$a" A
	fi
done > "$out"
awk '
	{ c[$1] += $2; i[$1] += $3; n[$1]++; v[$1, n[$1]] = $3 }
	END {
		if (!n["A"] || !n["B"]) { print "ab-vm: no runs"; exit 1 }
		for (k = 1; k <= n["A"] && k <= n["B"]; k++) {
			d = v["B", k] - v["A", k]; s += d; ss += d * d; m++
		}
		printf "A: %d runs, core/perftest %.4f, IT-API/perftest %.4f\n",
			n["A"], c["A"] / n["A"], i["A"] / n["A"]
		printf "B: %d runs, core/perftest %.4f, IT-API/perftest %.4f\n",
			n["B"], c["B"] / n["B"], i["B"] / n["B"]
		mean = s / m
		printf "B - A, IT-API/perftest: %+.4f (standard error %.4f, %d pairs)\n",
			mean, sqrt((ss / m - mean * mean) / m), m
	}' "$out"
