#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# compare.sh [RESULTS_DIR]   (default /tmp/openrdma-perf-results)
#
# openrdma-perf over self0, shm0 and tcp0 (those that exist; the others
# are skipped with the reason), next to what the peers reach on this
# machine, measured the same way, side by side:
#
#   TCP family     a raw TCP socket, TCP_NODELAY, busy-polled: ping-pong
#                  and stream (sockpp.c); UCX tcp (ucx_perftest tag_lat,
#                  tag_bw); libfabric tcp msg (fi_pingpong)
#   shared memory  UCX posix (tag_lat, tag_bw); libfabric shm
#                  (fi_pingpong); process_vm_writev, one call per message
#                  (cma_bw.c)
#
# Every pair runs its client on core CPU_A (0) and its server on CPU_B
# (1).  Prints the ratios and draws latency.png and bandwidth.png; the raw
# figures are in data/*.tsv, every command in commands.txt, every output
# in logs/.  Settings (environment): PERF (the openrdma-perf to measure;
# default ./openrdma-perf, then the installed one), IFACES ("self0 shm0
# tcp0"), DURATION (seconds per size for openrdma-perf, 0.3), SIZES (of
# the baselines; openrdma-perf runs every power of two from the smallest
# to the largest), BENCH_DIR (sockpp.c and cma_bw.c), CPU_A, CPU_B,
# BUSY_MAX and QUIET_WAIT_S (wait while others load the machine),
# INSTALL=0 (do not apt-get install missing peers), ROUNDS (1: the
# programs take turns that many times, and every figure is the median of
# its rounds: a host whose speed drifts while it runs moves them all
# alike; the rounds' figures are in data/*-rounds.tsv).  With tcp0, and
# run from a build tree (PERF's folder holds tests/transports/tcp/
# pingpong_ab: make it), tcp0's 8-byte latency is also measured in
# batches that take turns with a bare socket's within one pair of
# processes (ab-tcp.sh), which holds to about a hundredth where separate
# runs scatter by several.  Last, vm.sh runs the
# verbs transport next to perftest in the lab VM (its results in vm/;
# VM=0 leaves it out, and it says why when the VM cannot boot).
set -u
RES=${1:-/tmp/openrdma-perf-results}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
results_init

IFACES=${IFACES:-"self0 shm0 tcp0"}
DURATION=${DURATION:-0.3}
ROUNDS=${ROUNDS:-1}
SIZES=${SIZES:-"8 64 512 4096 32768 262144 1048576 8388608"}
PERF=$(find_perf) || exit 1
# openrdma-perf runs every power of two from the smallest to the largest.
PERF_SIZES=$(echo "$SIZES" | tr ' ' '\n' | sort -n | sed -n '1p;$p' | paste -sd:)
log "results in $RES; openrdma-perf: $PERF"

family_of() { case $1 in tcp*) echo tcp ;; *) echo shm ;; esac; }

# Round trips for a ping-pong of SIZE bytes: about 64 MiB moved, 200..20000.
pp_iters() {
	local n=$(((64 << 20) / $1))
	[ $n -gt 200 ] || n=200
	[ $n -lt 20000 ] || n=20000
	echo $n
}

# ------------------------------------------------------------ openrdma-perf
# One run per test, so that a test that fails costs only its own figures
# (those of its sizes before the failure are kept: rows come as they go).
openrdma() {
	local iface fam t log
	for iface in $IFACES; do
		fam=$(family_of "$iface")
		if ! run "probe-$iface" timeout 60 "$PERF" -l -d "$iface" \
			-t lat_send -n 10 --csv; then
			skip "openrdma-perf $iface" "$(grep -v '^test,' "$RES/logs/probe-$iface.log" | tail -1)"
			continue
		fi
		wait_quiet "openrdma-$iface"
		for t in lat_send lat_write bw_write bw_send; do
			log "openrdma-perf on $iface: $t"
			log=$RES/logs/openrdma-$iface-$t.log
			if ! run "openrdma-$iface-$t" timeout 900 "$PERF" -l \
				-d "$iface" --cpu "$CPU_A,$CPU_B" -t "$t" \
				-s "$PERF_SIZES" -D "$DURATION" --csv --no-progress; then
				skip "openrdma-perf $iface $t" "failed after $(grep -c "^$t," "$log") sizes: $(grep -v "^$t,\|^test," "$log" | tail -1)"
			fi
			grep "^test,\|^$t," "$log" > "$RES/data/openrdma-$iface-$t.csv"
			perf_csv "$fam" "openrdma $iface" "$RES/data/openrdma-$iface-$t.csv"
		done
	done
}

# ------------------------------------------------------------ raw sockets, CMA
build_bench() {
	local p
	for p in sockpp cma_bw; do
		if [ ! -f "$BENCH_DIR/$p.c" ]; then
			skip "$p" "no $BENCH_DIR/$p.c (set BENCH_DIR)"
			continue
		fi
		gcc -O2 -o "$RES/bin/$p" "$BENCH_DIR/$p.c" -lpthread 2>> "$RES/logs/build.log" ||
			skip "$p" "does not build (logs/build.log)"
	done
}

sockets() {
	local s v
	[ -x "$RES/bin/sockpp" ] || return
	wait_quiet sockets
	log "raw TCP socket: ping-pong and stream (busy-poll)"
	for s in $SIZES; do
		if run "sock-pp-$s" timeout 120 "$RES/bin/sockpp" -m tcp -P -s "$s" \
			-n "$(pp_iters "$s")" -a "$CPU_A" -b "$CPU_B"; then
			v=$(sed -n 's/.*oneway_us_median=\([0-9.]*\).*/\1/p' "$RES/logs/sock-pp-$s.log")
			[ -n "$v" ] && add_lat tcp "tcp socket ping-pong" "$s" "$v"
		fi
		if run "sock-stream-$s" timeout 60 "$RES/bin/sockpp" -m tcp -P -S 1 \
			-s "$s" -a "$CPU_A" -b "$CPU_B"; then
			v=$(sed -n 's/.*GBps=\([0-9.]*\).*/\1/p' "$RES/logs/sock-stream-$s.log")
			[ -n "$v" ] && add_bw tcp "tcp socket stream" "$s" "$v"
		fi
	done
}

cma() {
	[ -x "$RES/bin/cma_bw" ] || return
	wait_quiet cma
	log "process_vm_writev (CMA)"
	# shellcheck disable=SC2086 # SIZES is a list
	if ! run cma timeout 120 "$RES/bin/cma_bw" -a "$CPU_A" -b "$CPU_B" -t 0.2 $SIZES; then
		skip "CMA" "$(tail -1 "$RES/logs/cma.log")"
		return
	fi
	awk '/op=write/ && /GBps=/ {
		for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		printf "shm\tCMA process_vm_writev\t%s\t%s\n", f["size"], f["GBps"] }' \
		"$RES/logs/cma.log" >> "$RES/data/bw.tsv"
}

# ------------------------------------------------------------ UCX
ucx() {
	local tls fam t s n port=13600 spid line
	if ! need ucx_perftest ucx-utils; then
		skip "UCX" "ucx_perftest is not installed (apt-get install ucx-utils)"
		return
	fi
	for tls in posix tcp; do
		fam=$(family_of "$tls")
		wait_quiet "ucx-$tls"
		log "UCX $tls: tag_lat, tag_bw"
		for t in tag_lat tag_bw; do
			for s in $SIZES; do
				n=$(pp_iters "$s")
				[ "$t" = tag_bw ] && n=$((n * 5))
				port=$((port + 1))
				echo "UCX_TLS=$tls ucx_perftest -p $port  |  ucx_perftest 127.0.0.1 -p $port -t $t -s $s -n $n -f" >> "$RES/commands.txt"
				UCX_TLS=$tls timeout 120 taskset -c "$CPU_B" ucx_perftest -p $port \
					> "$RES/logs/ucx-$tls-$t-$s.srv.log" 2>&1 &
				spid=$!
				sleep 0.4
				UCX_TLS=$tls timeout 110 taskset -c "$CPU_A" ucx_perftest 127.0.0.1 \
					-p $port -t "$t" -s "$s" -n "$n" -w $((n / 10)) -f \
					> "$RES/logs/ucx-$tls-$t-$s.log" 2>&1
				stop_pid $spid
				line=$(awk 'NF == 8 && $1 ~ /^[0-9]+$/' "$RES/logs/ucx-$tls-$t-$s.log" | tail -1)
				if [ -z "$line" ]; then
					skip "UCX $tls $t $s" "no result (logs/ucx-$tls-$t-$s.log)"
					continue
				fi
				# fields: iterations, typical (p50) latency, average,
				# overall latency, bandwidth avg and overall (MiB/s),
				# message rate avg and overall
				if [ "$t" = tag_lat ]; then
					add_lat "$fam" "ucx $tls tag_lat" "$s" "$(echo "$line" | awk '{print $2}')"
				else
					add_bw "$fam" "ucx $tls tag_bw" "$s" "$(echo "$line" | awk '{printf "%.4f", $6 * 1048576 / 1e9}')"
				fi
			done
		done
	done
}

# ------------------------------------------------------------ libfabric
libfabric() {
	local prov ep fam port=47700 spid s
	if ! need fi_pingpong libfabric-bin; then
		skip "libfabric" "fi_pingpong is not installed (apt-get install libfabric-bin)"
		return
	fi
	for prov in shm:rdm tcp:msg; do
		ep=${prov#*:}
		prov=${prov%%:*}
		fam=$(family_of "$prov")
		wait_quiet "libfabric-$prov"
		log "libfabric $prov $ep: fi_pingpong"
		for s in $SIZES; do
			port=$((port + 1))
			echo "fi_pingpong -p $prov -e $ep -I $(pp_iters "$s") -S $s -B $port  |  ... -P $port 127.0.0.1" >> "$RES/commands.txt"
			timeout 120 taskset -c "$CPU_B" fi_pingpong -p "$prov" -e "$ep" \
				-I "$(pp_iters "$s")" -S "$s" -B $port \
				> "$RES/logs/fi-$prov-$s.srv.log" 2>&1 &
			spid=$!
			sleep 0.3
			timeout 110 taskset -c "$CPU_A" fi_pingpong -p "$prov" -e "$ep" \
				-I "$(pp_iters "$s")" -S "$s" -P $port 127.0.0.1 \
				> "$RES/logs/fi-$prov-$s.log" 2>&1
			stop_pid $spid
			# bytes iters total time MB/sec usec/xfer Mxfers/sec
			awk -v fam="$fam" -v series="libfabric $prov $ep" -v s="$s" \
				'NF == 8 && $3 ~ /^[=+-]/ && $2 ~ /^[0-9]/ {
					printf "%s\t%s\t%s\t%s\n", fam, series, s, $7 }' \
				"$RES/logs/fi-$prov-$s.log" >> "$RES/data/lat.tsv"
		done
		grep -q "libfabric $prov" "$RES/data/lat.tsv" ||
			skip "libfabric $prov" "no result (logs/fi-$prov-*.log)"
	done
}

# ------------------------------------------------------------ tcp0 in turns
tcp_turns() {
	local build
	build=$(dirname "$PERF")
	case " $IFACES " in *" tcp0 "*) ;; *) return ;; esac
	if [ ! -x "$build/tests/transports/tcp/pingpong_ab" ]; then
		skip "tcp0 in turns" "no $build/tests/transports/tcp/pingpong_ab (make it in the build tree)"
		return
	fi
	wait_quiet "ab-tcp"
	log "tcp0 and a bare socket in turns (pingpong_ab)"
	echo "(cd $build && CPU_A=$CPU_A CPU_B=$CPU_B tests/transports/tcp/ab-tcp.sh)" >> "$RES/commands.txt"
	(cd "$build" && CPU_A=$CPU_A CPU_B=$CPU_B \
		"$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/transports/tcp/ab-tcp.sh") \
		> "$RES/logs/ab-tcp.log" 2>&1 ||
		skip "tcp0 in turns" "failed: $(tail -1 "$RES/logs/ab-tcp.log")"
}

# ------------------------------------------------------------ ratios
ratios() {
	local L=$RES/data/lat.tsv B=$RES/data/bw.tsv
	{
		echo "openrdma-perf against the peers (ratio = openrdma / peer)"
		echo
		echo "one-way latency, 8 B (lower is better):"
		ratio "  tcp0 lat_send / raw TCP socket" "$L" "openrdma tcp0 lat_send" "tcp socket ping-pong" 8
		ratio "  tcp0 lat_send / UCX tcp" "$L" "openrdma tcp0 lat_send" "ucx tcp tag_lat" 8
		ratio "  tcp0 lat_send / libfabric tcp" "$L" "openrdma tcp0 lat_send" "libfabric tcp msg" 8
		ratio "  shm0 lat_send / UCX posix" "$L" "openrdma shm0 lat_send" "ucx posix tag_lat" 8
		ratio "  shm0 lat_send / libfabric shm" "$L" "openrdma shm0 lat_send" "libfabric shm rdm" 8
		ratio "  shm0 lat_write / UCX posix" "$L" "openrdma shm0 lat_write" "ucx posix tag_lat" 8
		ratio "  self0 lat_send / UCX posix" "$L" "openrdma self0 lat_send" "ucx posix tag_lat" 8
		if grep -q '^core/socket' "$RES/logs/ab-tcp.log" 2>/dev/null; then
			echo
			echo "tcp0, 8 B, in turns with a bare socket within one run (ab-tcp.sh):"
			grep '^\(core\|IT-API\)/' "$RES/logs/ab-tcp.log" | sed 's/^/  /'
		fi
		echo
		echo "one-way latency, 32 KiB (lower is better):"
		ratio "  tcp0 lat_send / raw TCP socket" "$L" "openrdma tcp0 lat_send" "tcp socket ping-pong" 32768
		ratio "  shm0 lat_send / UCX posix" "$L" "openrdma shm0 lat_send" "ucx posix tag_lat" 32768
		echo
		echo "bandwidth, 1 MiB (higher is better):"
		ratio "  tcp0 bw_write / raw TCP stream" "$B" "openrdma tcp0 bw_write" "tcp socket stream" 1048576 higher
		ratio "  tcp0 bw_send / raw TCP stream" "$B" "openrdma tcp0 bw_send" "tcp socket stream" 1048576 higher
		ratio "  tcp0 bw_send / UCX tcp" "$B" "openrdma tcp0 bw_send" "ucx tcp tag_bw" 1048576 higher
		ratio "  shm0 bw_write / CMA" "$B" "openrdma shm0 bw_write" "CMA process_vm_writev" 1048576 higher
		ratio "  shm0 bw_send / UCX posix" "$B" "openrdma shm0 bw_send" "ucx posix tag_bw" 1048576 higher
		ratio "  self0 bw_write / CMA" "$B" "openrdma self0 bw_write" "CMA process_vm_writev" 1048576 higher
		echo
		echo "bandwidth, 8 B messages (higher is better):"
		ratio "  tcp0 bw_send / UCX tcp" "$B" "openrdma tcp0 bw_send" "ucx tcp tag_bw" 8 higher
		ratio "  shm0 bw_send / UCX posix" "$B" "openrdma shm0 bw_send" "ucx posix tag_bw" 8 higher
		if [ -s "$RES/skipped.tsv" ]; then
			echo
			echo "skipped:"
			sort -u "$RES/skipped.tsv" | sed 's/^/  /; s/\t/: /'
		fi
	} | tee "$RES/ratios.txt"
}

build_bench
for round in $(seq "$ROUNDS"); do
	[ "$ROUNDS" -gt 1 ] && log "round $round of $ROUNDS"
	openrdma
	sockets
	cma
	ucx
	libfabric
done
tcp_turns
median_rows "$RES/data/lat.tsv"
median_rows "$RES/data/bw.tsv"
ratios
plot_all
# the verbs transport in the lab VM, next to perftest on the same devices
if [ "${VM:-1}" != 0 ]; then
	BUILD=$(dirname "$PERF") "$(dirname "${BASH_SOURCE[0]}")/vm.sh" \
		"$RES/vm" || log "vm.sh: status $? (see $RES/vm)"
fi
log "done: $RES"
