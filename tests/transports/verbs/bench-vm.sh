#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# Runs in the vmlab guest, from the build directory (make bench-vmlab):
# examples/openrdma_demo over the verbs transport next to perftest on the
# same device, in the same run, then the instructions OpenRDMA adds per
# post and per completion over raw libibverbs, counted by callgrind
# (tests/transports/verbs/verbs_overhead).  Under TCG these are emulated
# figures: compare them with each other, not with hardware.
#
#   BENCH_DEV      device (default rxe0)       BENCH_GID   GID index (1)
#   BENCH_ADDR     its IP address (192.168.77.1)
#   BENCH_ITERS    iterations (default 2000)   BENCH_SIZE  latency size (8)
set -u
dev=${BENCH_DEV:-rxe0}
gid=${BENCH_GID:-1}
addr=${BENCH_ADDR:-192.168.77.1}
iters=${BENCH_ITERS:-2000}
size=${BENCH_SIZE:-8}
port=18515
status=0

# perftest TOOL ARGS...: server in the background, client against it
perftest() {
	local tool=$1
	shift
	port=$((port + 1))
	echo "=== $tool -d $dev -x $gid $*"
	timeout 300 "$tool" -d "$dev" -x "$gid" -p $port -F "$@" \
		> "/tmp/$tool.srv" 2>&1 &
	local srv=$!
	sleep 1
	timeout 300 "$tool" -d "$dev" -x "$gid" -p $port -F "$@" "$addr" \
		> "/tmp/$tool.cli" 2>&1 || status=1
	wait $srv || status=1
	cat "/tmp/$tool.cli"
	# perftest gives up ("inf") when it cannot time the CPU's clock
	# under load; one more run then
	if grep -q ' inf ' "/tmp/$tool.cli" && [ "${retry:-0}" = 0 ]; then
		retry=1 perftest "$tool" "$@"
	fi
}

# 64 KiB transfers: few enough to stay inside the demo's 10 s waits
bw_iters=$((iters / 10))

perftest ib_send_lat -n "$iters" -s "$size"
perftest ib_write_lat -n "$iters" -s "$size"
perftest ib_write_bw -n "$bw_iters" -s 65536

# the same three measurements through OpenRDMA (rdma_cm on the same device)
echo "=== openrdma-perf -l -d $dev-1 -t lat_send,lat_write -n $iters -s $size"
timeout 300 ./openrdma-perf -l -d "$dev-1" -t lat_send,lat_write \
	-n "$iters" -s "$size" --no-progress || status=1
echo "=== openrdma-perf -l -d $dev-1 -t bw_write -n $bw_iters -s 65536"
timeout 300 ./openrdma-perf -l -d "$dev-1" -t bw_write -n "$bw_iters" \
	-s 65536 --no-progress || status=1
echo "=== it_pingpong -l -d $dev-1 -n $iters -s $size"
timeout 300 ./examples/it_pingpong -l -d "$dev-1" -n "$iters" -s "$size" ||
	status=1

echo "=== openrdma_demo -l -d $dev-1 -n $iters -s $size"
timeout 300 ./examples/openrdma_demo -l -d "$dev-1" -n "$iters" -s "$size" ||
	status=1
echo "=== openrdma_demo -l -d $dev-1 -n $bw_iters -s 65536"
timeout 300 ./examples/openrdma_demo -l -d "$dev-1" -n "$bw_iters" \
	-s 65536 || status=1

echo "=== callgrind: instructions per post and per completion"
out=/tmp/verbs_overhead.cg
if timeout 900 valgrind --tool=callgrind --callgrind-out-file=$out \
	./tests/transports/verbs/verbs_overhead -d "$dev-1" -r 20 -b 64 \
	> /tmp/verbs_overhead.out 2>/tmp/verbs_overhead.err; then
	cat /tmp/verbs_overhead.out
	calls=$(sed -n 's/.*: \([0-9]*\) posts.*/\1/p' /tmp/verbs_overhead.out)
	callgrind_annotate --inclusive=yes --threshold=100 $out |
		awk -v n="$calls" '
		/measure_post_openrdma/ { gsub(",", "", $1); po = $1 }
		/measure_post_raw/ { gsub(",", "", $1); pr = $1 }
		/measure_poll_openrdma/ { gsub(",", "", $1); qo = $1 }
		/measure_poll_raw/ { gsub(",", "", $1); qr = $1 }
		END {
			printf "post: raw %.1f, openrdma %.1f, added %.1f Ir\n",
				pr / n, po / n, (po - pr) / n
			printf "completion: raw %.1f, openrdma %.1f, added %.1f Ir\n",
				qr / n, qo / n, (qo - qr) / n
		}'
else
	echo "callgrind run failed:"
	tail -20 /tmp/verbs_overhead.err
	status=1
fi
exit $status
