#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# vm.sh [RESULTS_DIR]   (default /tmp/openrdma-perf-vm)
#
# openrdma-perf over the kernel's soft RDMA devices, rxe0 (RoCEv2) and
# siw0 (iWARP), next to perftest (ib_send_lat, ib_write_lat, ib_write_bw)
# on the same device, inside the lab VM (run-guest.sh).  Both programs
# connect with the RDMA CM (perftest -R) and run server and client in the
# VM.  The VM emulates its CPUs (TCG): the figures compare the two
# programs with each other, they are not RDMA performance.
#
# Needs a build with the verbs transport (configure --enable-verbs=yes):
# BUILD (default: the current folder) holds openrdma-perf and
# registry/openrdma-info.  VMLAB (default /work/shared/vmlab) is the lab;
# without it, or when it cannot boot here, the run is skipped with the
# reason.  LAT_ITERS (20000), BW_ITERS (1000), SIZE_LAT (2), SIZE_BW
# (65536), DEVICES ("rxe0 siw0"), ROUNDS (9).
#
# examples/it_pingpong, the IT-API ping-pong, runs next to ib_send_lat as
# perftest does, server and client pinned apart, its waits polling
# (OPENRDMA_EVD_SPIN_US) as perftest polls; it reports the mean of its
# round trips, compared with perftest's average (t_avg).
#
# The emulated CPUs' speed drifts during a run (by half, from one minute
# to the next): the two programs take turns, ROUNDS times, each pinned
# the same way (client on core 0, server on core 1), and the table gives
# the median of the rounds, the ratio of the medians and each round's
# ratio.
#
# The drift is faster than a program's run: the rounds of one pair
# spread by a fifth and more.  Last, per device,
# tests/transports/verbs/pingpong_ab runs it_pingpong's loop through
# IT-API and through the verbs interface next to ib_send_lat's loop and
# a lean one on raw verbs, in batches that take turns within one run
# (AB_ROUNDS rounds of AB_ITERS round trips, default 120 and 200); the
# summary ends with its figures.
set -u
RES=${1:-/tmp/openrdma-perf-vm}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
results_init

VMLAB=${VMLAB:-/work/shared/vmlab}
BUILD=$(cd "${BUILD:-.}" && pwd)
LAT_ITERS=${LAT_ITERS:-20000}
BW_ITERS=${BW_ITERS:-1000}
SIZE_LAT=${SIZE_LAT:-2}
SIZE_BW=${SIZE_BW:-65536}
DEVICES=${DEVICES:-"rxe0 siw0"}
ROUNDS=${ROUNDS:-9}
AB_ROUNDS=${AB_ROUNDS:-120}
AB_ITERS=${AB_ITERS:-200}
BIN=$BUILD/.libs/openrdma-perf
ITPP=$BUILD/examples/.libs/it_pingpong
INFO=$BUILD/registry/.libs/openrdma-info
AB=$BUILD/tests/transports/verbs/pingpong_ab
LIB=$BUILD/.libs

fatal_skip() {
	skip "vm" "$1"
	echo "vm.sh: skipped: $1"
	exit 77
}

[ -x "$VMLAB/run-guest.sh" ] || fatal_skip "no lab VM at $VMLAB (set VMLAB)"
[ -x "$BIN" ] || fatal_skip "no $BIN: build openrdma-perf (BUILD=build dir)"
LD_LIBRARY_PATH=$BUILD/.libs "$INFO" 2> /dev/null | grep -q '^ *verbs ' ||
	fatal_skip "the build in $BUILD has no verbs transport (configure --enable-verbs=yes)"

# The guest sees the current folder (RES) but not necessarily the build
# tree (/tmp may be a mount of its own): the programs go along in RES.
[ -x "$ITPP" ] || fatal_skip "no $ITPP: build the examples (BUILD=build dir)"
[ -x "$AB" ] || fatal_skip "no $AB: make tests/transports/verbs/pingpong_ab (BUILD=build dir)"
cp "$BIN" "$INFO" "$ITPP" "$AB" "$RES/bin/" && cp -P "$LIB"/libopenrdma.so* "$RES/bin/" ||
	fatal_skip "cannot copy the programs into $RES/bin"

# The guest runs this, in RES.
cat > "$RES/guest.sh" << EOF
set -u
export LD_LIBRARY_PATH=$RES/bin
PERF=$RES/bin/openrdma-perf
INFO=$RES/bin/openrdma-info
ITPP=$RES/bin/it_pingpong
AB=$RES/bin/pingpong_ab
T=300
cd "$RES"
dev_ip() { case \$1 in rxe0) echo 192.168.77.1 ;; siw0) echo 192.168.78.1 ;; esac; }

# pair NAME "SERVER" "CLIENT": the server in the background, then the
# client, again while it is refused and the server still waits (the
# emulated CPUs make a server's start slow); a server left waiting is
# stopped by its PID.
pair() {
	timeout \$T bash -c "\$2" > "logs/\$1.server" 2>&1 &
	local sp=\$! try rc
	for try in 1 2 3 4 5; do
		sleep \$try
		timeout \$T bash -c "\$3" > "logs/\$1.client" 2>&1
		rc=\$?
		[ \$rc -eq 0 ] && break
		kill -0 \$sp 2> /dev/null || break
	done
	echo "\$1 client=\$rc tries=\$try" >> status.txt
	[ \$rc -eq 0 ] || kill \$sp 2> /dev/null
	wait \$sp
	echo "\$1 server=\$?" >> status.txt
}

: > status.txt
ibv_devices > logs/ibv_devices.txt 2>&1
\$INFO -v > logs/openrdma-info.txt 2>&1
S="taskset -c 1"
C="taskset -c 0"
# ours NAME ARGS...: openrdma-perf, both sides here, pinned as perftest
ours() {
	if \$PERF -l --cpu 0,1 --csv --timeout 60 "\${@:2}" \
		> logs/openrdma-\$1.csv 2> logs/openrdma-\$1.err; then
		echo "openrdma-\$1 ok" >> status.txt
	else
		echo "openrdma-\$1 failed" >> status.txt
	fi
}
# run_one DEV ROUND ADDRESS PORT RUN: one run of a round.  A round's runs
# take turns in an order that flips every other round (ABBA), each
# compared run next to its perftest counterpart: a drift of the emulated
# CPUs' speed during a round favours each side equally often.
run_one() {
	local dev=\$1 r=\$2 a=\$3 p=\$4 t
	case \$5 in
	ours)
		ours \$dev-lat.\$r -d \$dev-1 -t lat_send,lat_write -s $SIZE_LAT -n $LAT_ITERS ;;
	itpp)
		pair "\$dev-it_pingpong.\$r" \
			"OPENRDMA_EVD_SPIN_US=1000000 \$S \$ITPP -d \$dev-1 -p \$p -n $LAT_ITERS -s $SIZE_LAT" \
			"OPENRDMA_EVD_SPIN_US=1000000 \$C \$ITPP -d \$dev-1 -p \$p -n $LAT_ITERS -s $SIZE_LAT \$a" ;;
	ib_*_lat)
		t=\$5
		pair "\$dev-\$t.\$r" "\$S \$t -d \$dev -R -n $LAT_ITERS -s $SIZE_LAT" \
			"\$C \$t -d \$dev -R -n $LAT_ITERS -s $SIZE_LAT \$a" ;;
	ours_bw)
		ours \$dev-bw.\$r -d \$dev-1 -t bw_write,bw_send -s $SIZE_BW -n $BW_ITERS ;;
	ib_write_bw)
		pair "\$dev-ib_write_bw.\$r" "\$S ib_write_bw -d \$dev -R -n $BW_ITERS -s $SIZE_BW --report_gbits" \
			"\$C ib_write_bw -d \$dev -R -n $BW_ITERS -s $SIZE_BW --report_gbits \$a" ;;
	esac
}
for r in \$(seq $ROUNDS); do
for dev in $DEVICES; do
	a=\$(dev_ip \$dev)
	# a port per round: siw's are TCP ports, which linger
	p=\$((18600 + r))
	order="ours itpp ib_send_lat ib_write_lat ours_bw ib_write_bw"
	# every other round the same runs backwards
	[ \$((r % 2)) -eq 0 ] && order=\$(printf '%s\n' \$order | tac)
	for run in \$order; do
		run_one \$dev \$r \$a \$p \$run
	done
done
done
# the four loops taking turns within one run (ports p to p + 2)
p=18700
for dev in $DEVICES; do
	a=\$(dev_ip \$dev)
	p=\$((p + 10))
	pair "\$dev-pingpong_ab" \
		"OPENRDMA_EVD_SPIN_US=1000000 \$S \$AB -d \$dev-1 -p \$p -n $AB_ITERS -r $AB_ROUNDS -s $SIZE_LAT" \
		"OPENRDMA_EVD_SPIN_US=1000000 \$C \$AB -d \$dev-1 -p \$p -n $AB_ITERS -r $AB_ROUNDS -s $SIZE_LAT \$a"
done
EOF

log "booting the lab VM (devices: $DEVICES)"
echo "cd $RES && $VMLAB/run-guest.sh bash $RES/guest.sh" >> "$RES/commands.txt"
(cd "$RES" && VMLAB_TIMEOUT=${VMLAB_TIMEOUT:-1500} "$VMLAB/run-guest.sh" bash "$RES/guest.sh") \
	> "$RES/logs/vm.log" 2>&1
rc=$?
if [ $rc -ne 0 ] && [ ! -s "$RES/status.txt" ]; then
	fatal_skip "the VM did not run (exit $rc): $(tail -2 "$RES/logs/vm.log" | tr '\n' ' ')"
fi

# perftest prints "#bytes #iterations t_min t_max t_typical t_avg t_stdev
# 99% 99.9%" (latency: one-way; "inf" when it could not time the CPU's
# clock, a round without a figure then) and, with --report_gbits, "#bytes
# #iterations BW_peak BW_average MsgRate" in Gb/s (1e9 bits).
perftest_lat() {
	awk -v s="$2" '$1 == s && $2 ~ /^[0-9]+$/ && NF >= 8 && $5 ~ /^[0-9.]+$/ { print $5; exit }' "$1" 2> /dev/null
}
perftest_avg() {
	awk -v s="$2" '$1 == s && $2 ~ /^[0-9]+$/ && NF >= 8 && $6 ~ /^[0-9.]+$/ { print $6; exit }' "$1" 2> /dev/null
}
# it_pingpong: "send latency   X us (half round trip)", the mean
itpp_lat() {
	awk '$1 == "send" && $2 == "latency" { print $3; exit }' "$1" 2> /dev/null
}
perftest_bw() {
	awk -v s="$2" '$1 == s && $2 ~ /^[0-9]+$/ && NF >= 5 { printf "%.4f", $4 / 8; exit }' "$1" 2> /dev/null
}
csv_field() { # FILE TEST COLUMN
	awk -F, -v t="$2" -v c="$3" '$1 == t { print $c; exit }' "$1" 2> /dev/null
}
# The median of the numbers on stdin ("" if none).
median() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ratio_of() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2fx", a / b; else print "-" }'
}
# A figure, or "-" when its run gave none.
val() {
	local v
	v=$("$@")
	echo "${v:--}"
}
# row DEVICE LABEL "OPENRDMA VALUES" "PERFTEST VALUES" (one per round):
# the medians, the ratio of the medians, the median of the rounds'
# ratios (paired: the two runs of a round are minutes apart at most,
# the rounds up to half an hour) and each round's ratio.
row() {
	local o p per="" pr i
	local -a ov pv
	read -ra ov <<< "$3"
	read -ra pv <<< "$4"
	o=$(printf '%s\n' "${ov[@]}" | grep -v '^-*$' | median)
	p=$(printf '%s\n' "${pv[@]}" | grep -v '^-*$' | median)
	for ((i = 0; i < ${#ov[@]} && i < ${#pv[@]}; i++)); do
		per="$per $(ratio_of "${ov[i]}" "${pv[i]}")"
	done
	pr=$(printf '%s\n' $per | grep -v '^-$' | tr -d x | median)
	[ -n "$pr" ] && pr=$(printf '%.2fx' "$pr")
	printf '%-6s %-28s %14s %14s %8s %8s  %s\n' "$1" "$2" "${o:-failed}" \
		"${p:--}" "$(ratio_of "$o" "$p")" "${pr:--}" "${per# }"
}

{
	echo "openrdma-perf vs perftest in the lab VM (emulated CPUs: compare ratios, not absolute figures)"
	echo "median of $ROUNDS rounds taken in turns (ABBA); ratio: of the medians; paired: median of the rounds' ratios; then each round's ratio"
	printf '%-6s %-28s %14s %14s %8s %8s  %s\n' device test openrdma-perf perftest ratio paired rounds
	for dev in $DEVICES; do
		for pair in "lat_send:ib_send_lat" "lat_write:ib_write_lat"; do
			o="" p=""
			for r in $(seq "$ROUNDS"); do
				o="$o $(val csv_field "$RES/logs/openrdma-$dev-lat.$r.csv" "${pair%%:*}" 10)"
				p="$p $(val perftest_lat "$RES/logs/$dev-${pair#*:}.$r.client" "$SIZE_LAT")"
			done
			row "$dev" "${pair%%:*} ${SIZE_LAT} B, us (median)" "$o" "$p"
		done
		o="" p=""
		for r in $(seq "$ROUNDS"); do
			o="$o $(val itpp_lat "$RES/logs/$dev-it_pingpong.$r.client")"
			p="$p $(val perftest_avg "$RES/logs/$dev-ib_send_lat.$r.client" "$SIZE_LAT")"
		done
		row "$dev" "it_pingpong ${SIZE_LAT} B, us (mean)" "$o" "$p"
		o="" p="" s=""
		for r in $(seq "$ROUNDS"); do
			o="$o $(val csv_field "$RES/logs/openrdma-$dev-bw.$r.csv" bw_write 14)"
			p="$p $(val perftest_bw "$RES/logs/$dev-ib_write_bw.$r.client" "$SIZE_BW")"
			s="$s $(val csv_field "$RES/logs/openrdma-$dev-bw.$r.csv" bw_send 14)"
		done
		row "$dev" "bw_write ${SIZE_BW} B, GB/s" "$o" "$p"
		row "$dev" "bw_send ${SIZE_BW} B, GB/s" "$s" ""
	done
	echo
	echo "it_pingpong's loop through IT-API and the verbs interface (core), ib_send_lat's (perftest)"
	echo "and a lean one on raw verbs, taking turns in batches within one run (pingpong_ab):"
	for dev in $DEVICES; do
		f=$RES/logs/$dev-pingpong_ab.client
		if grep -q '^IT-API/' "$f" 2> /dev/null; then
			sed -n 's/^\(perftest\|lean\|core\|IT-API\)/'"$dev"'   &/p' "$f"
		else
			echo "$dev   pingpong_ab: no figures (see logs/$dev-pingpong_ab.*)"
		fi
	done
	echo
	echo "runs:"
	sed 's/^/  /' "$RES/status.txt"
	for f in "$RES"/logs/openrdma-*.err; do
		[ -s "$f" ] && { echo "  $(basename "$f"):"; sed 's/^/    /' "$f" | tail -3; }
	done
} | tee "$RES/summary.txt"
grep -q failed "$RES/status.txt" && exit 1
exit 0
