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
# reason.  ITERS (1000), SIZE_LAT (2), SIZE_BW (65536), DEVICES
# ("rxe0 siw0").
set -u
RES=${1:-/tmp/openrdma-perf-vm}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
results_init

VMLAB=${VMLAB:-/work/shared/vmlab}
BUILD=$(cd "${BUILD:-.}" && pwd)
ITERS=${ITERS:-1000}
SIZE_LAT=${SIZE_LAT:-2}
SIZE_BW=${SIZE_BW:-65536}
DEVICES=${DEVICES:-"rxe0 siw0"}
BIN=$BUILD/.libs/openrdma-perf
INFO=$BUILD/registry/.libs/openrdma-info
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
cp "$BIN" "$INFO" "$RES/bin/" && cp -P "$LIB"/libopenrdma.so* "$RES/bin/" ||
	fatal_skip "cannot copy the programs into $RES/bin"

# The guest runs this, in RES.
cat > "$RES/guest.sh" << EOF
set -u
export LD_LIBRARY_PATH=$RES/bin
PERF=$RES/bin/openrdma-perf
INFO=$RES/bin/openrdma-info
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
for dev in $DEVICES; do
	a=\$(dev_ip \$dev)
	if \$PERF -l -d \$dev-1 -t lat_send,lat_write -s $SIZE_LAT -n $ITERS --csv --timeout 60 \
		> logs/openrdma-\$dev-lat.csv 2> logs/openrdma-\$dev-lat.err; then
		echo "openrdma-\$dev-lat ok" >> status.txt
	else
		echo "openrdma-\$dev-lat failed" >> status.txt
	fi
	if \$PERF -l -d \$dev-1 -t bw_write,bw_send -s $SIZE_BW -n $ITERS --csv --timeout 60 \
		> logs/openrdma-\$dev-bw.csv 2> logs/openrdma-\$dev-bw.err; then
		echo "openrdma-\$dev-bw ok" >> status.txt
	else
		echo "openrdma-\$dev-bw failed" >> status.txt
	fi
	for t in ib_send_lat ib_write_lat; do
		pair "\$dev-\$t" "\$t -d \$dev -R -n $ITERS -s $SIZE_LAT" \
			"\$t -d \$dev -R -n $ITERS -s $SIZE_LAT \$a"
	done
	pair "\$dev-ib_write_bw" "ib_write_bw -d \$dev -R -n $ITERS -s $SIZE_BW --report_gbits" \
		"ib_write_bw -d \$dev -R -n $ITERS -s $SIZE_BW --report_gbits \$a"
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
# 99% 99.9%" (latency: one-way) and, with --report_gbits, "#bytes
# #iterations BW_peak BW_average MsgRate" in Gb/s (1e9 bits).
perftest_lat() {
	awk -v s="$2" '$1 == s && $2 ~ /^[0-9]+$/ && NF >= 8 { print $5; exit }' "$1" 2> /dev/null
}
perftest_bw() {
	awk -v s="$2" '$1 == s && $2 ~ /^[0-9]+$/ && NF >= 5 { printf "%.4f", $4 / 8; exit }' "$1" 2> /dev/null
}
csv_field() { # FILE TEST COLUMN
	awk -F, -v t="$2" -v c="$3" '$1 == t { print $c; exit }' "$1" 2> /dev/null
}

{
	echo "openrdma-perf vs perftest in the lab VM (emulated CPUs: compare ratios, not absolute figures)"
	printf '%-6s %-28s %14s %14s %8s\n' device test openrdma-perf perftest ratio
	for dev in $DEVICES; do
		L=$RES/logs/openrdma-$dev-lat.csv
		Bw=$RES/logs/openrdma-$dev-bw.csv
		for pair in "lat_send:ib_send_lat" "lat_write:ib_write_lat"; do
			o=$(csv_field "$L" "${pair%%:*}" 10)
			p=$(perftest_lat "$RES/logs/$dev-${pair#*:}.client" "$SIZE_LAT")
			printf '%-6s %-28s %14s %14s %8s\n' "$dev" \
				"${pair%%:*} ${SIZE_LAT} B, us (median)" "${o:-failed}" "${p:-failed}" \
				"$(awk -v a="$o" -v b="$p" 'BEGIN { if (a > 0 && b > 0) printf "%.2fx", a / b; else print "-" }')"
		done
		o=$(csv_field "$Bw" bw_write 14)
		p=$(perftest_bw "$RES/logs/$dev-ib_write_bw.client" "$SIZE_BW")
		printf '%-6s %-28s %14s %14s %8s\n' "$dev" "bw_write ${SIZE_BW} B, GB/s" \
			"${o:-failed}" "${p:-failed}" \
			"$(awk -v a="$o" -v b="$p" 'BEGIN { if (a > 0 && b > 0) printf "%.2fx", a / b; else print "-" }')"
		o=$(csv_field "$Bw" bw_send 14)
		printf '%-6s %-28s %14s %14s %8s\n' "$dev" "bw_send ${SIZE_BW} B, GB/s" "${o:-failed}" "-" "-"
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
