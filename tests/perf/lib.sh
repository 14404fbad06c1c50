# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# Helpers of the openrdma-perf scripts (compare.sh, vm.sh, scale.sh).
# Source it after setting RES, the results directory.  Nothing here ends
# a process it did not start: servers run under `timeout` and are stopped
# by the PID of that timeout.

PERF_SCRIPTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH_DIR=${BENCH_DIR:-/work/shared/bench} # sockpp.c, cma_bw.c
CPU_A=${CPU_A:-0} # client core
CPU_B=${CPU_B:-1} # server core
BUSY_MAX=${BUSY_MAX:-25} # others' CPU use (%) tolerated before a run
QUIET_WAIT_S=${QUIET_WAIT_S:-120} # how long to wait for it, per category
INSTALL=${INSTALL:-1} # apt-get install missing peers (as root)

log() { echo "[$(date +%H:%M:%S)] $*" | tee -a "$RES/run.log" >&2; }

# results_init: the directory layout every script writes.
results_init() {
	mkdir -p "$RES/data" "$RES/logs" "$RES/bin" || exit 1
	: > "$RES/data/lat.tsv"
	: > "$RES/data/bw.tsv"
	: > "$RES/skipped.tsv"
	: > "$RES/commands.txt"
	{
		echo "date: $(date -Is)"
		uname -a
		nproc
		cat /proc/loadavg
	} > "$RES/env.txt"
}

# find_perf: the openrdma-perf to measure: $PERF, the build tree we are
# run from, or the installed one.
find_perf() {
	local p
	for p in "${PERF:-}" ./openrdma-perf "$(command -v openrdma-perf)"; do
		if [ -n "$p" ] && [ -x "$p" ]; then
			echo "$p"
			return 0
		fi
	done
	echo "compare: no openrdma-perf (set PERF=/path/to/openrdma-perf)" >&2
	return 1
}

# skip LABEL REASON: a comparison that could not run, and why.
skip() {
	printf '%s\t%s\n' "$1" "$2" >> "$RES/skipped.tsv"
	log "skipped $1: $2"
}

# run LOGNAME CMD...: runs and records a command; its output is the log.
run() {
	local name=$1
	shift
	echo "$*" >> "$RES/commands.txt"
	"$@" > "$RES/logs/$name.log" 2>&1
}

# need CMD PACKAGE: installs the Debian package that has CMD if missing.
need() {
	command -v "$1" > /dev/null && return 0
	if [ "$INSTALL" = 1 ] && [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
		log "installing $2 (for $1)"
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq "$2"; } >> "$RES/logs/apt.log" 2>&1
	fi
	command -v "$1" > /dev/null
}

# cpu_busy: all CPUs' busy % over one second (others' load, between runs).
cpu_busy() {
	local u1 n1 s1 i1 w1 q1 sq1 st1 u2 n2 s2 i2 w2 q2 sq2 st2 tot idle
	read -r _ u1 n1 s1 i1 w1 q1 sq1 st1 _ < /proc/stat
	sleep 1
	read -r _ u2 n2 s2 i2 w2 q2 sq2 st2 _ < /proc/stat
	tot=$(((u2 + n2 + s2 + i2 + w2 + q2 + sq2 + st2) - (u1 + n1 + s1 + i1 + w1 + q1 + sq1 + st1)))
	idle=$(((i2 + w2) - (i1 + w1)))
	[ "$tot" -gt 0 ] || tot=1
	echo $((100 * (tot - idle) / tot))
}

# wait_quiet LABEL: waits while other processes keep the machine busy, at
# most QUIET_WAIT_S; measures anyway after that and says so.
wait_quiet() {
	local waited=0 busy
	busy=$(cpu_busy)
	while [ "$busy" -gt "$BUSY_MAX" ] && [ "$waited" -lt "$QUIET_WAIT_S" ]; do
		sleep 4
		waited=$((waited + 5))
		busy=$(cpu_busy)
	done
	printf '%s\t%s\tbusy=%s%%\twaited=%ss\n' "$1" "$(date +%T)" \
		"$busy" "$waited" >> "$RES/quiet.tsv"
	[ "$busy" -le "$BUSY_MAX" ] || log "NOT QUIET before $1: ${busy}% busy after ${waited}s (measuring anyway)"
}

# stop_pid PID: ends a server we started (its timeout wrapper) if alive.
stop_pid() {
	if kill -0 "$1" 2> /dev/null; then
		kill "$1" 2> /dev/null
		sleep 0.2
	fi
	wait "$1" 2> /dev/null
}

# add_lat FAMILY SERIES BYTES US / add_bw FAMILY SERIES BYTES GBPS
add_lat() { printf '%s\t%s\t%s\t%s\n' "$@" >> "$RES/data/lat.tsv"; }
add_bw() { printf '%s\t%s\t%s\t%s\n' "$@" >> "$RES/data/bw.tsv"; }

# perf_csv FAMILY LABEL CSVFILE: openrdma-perf --csv rows into the data:
# latency tests give their median, stream tests their GB/s.
perf_csv() {
	awk -F, -v fam="$1" -v label="$2" -v lat="$RES/data/lat.tsv" \
		-v bw="$RES/data/bw.tsv" '
	$1 == "test" || NF < 18 { next }
	$8 != "" { printf "%s\t%s %s\t%s\t%s\n", fam, label, $1, $4, $10 >> lat; next }
	{ printf "%s\t%s %s\t%s\t%s\n", fam, label, $1, $4, $14 >> bw }' "$3"
}

# median_rows FILE: one row per family, series and size, the median of
# the rounds' figures; the rounds' rows stay in FILE's *-rounds.tsv.
median_rows() {
	local f=$1 r=${1%.tsv}-rounds.tsv
	[ -s "$f" ] || return 0
	mv "$f" "$r"
	sort -t"$(printf '\t')" -k1,1 -k2,2 -k3,3n -k4,4g "$r" | awk -F'\t' -v OFS='\t' '
	function flush() {
		if (n)
			print k1, k2, k3, (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
		n = 0
	}
	$1 != k1 || $2 != k2 || $3 != k3 { flush(); k1 = $1; k2 = $2; k3 = $3 }
	{ v[++n] = $4 }
	END { flush() }' > "$f"
}

# value FILE SERIES BYTES: a figure of the data, or nothing.
value() {
	awk -F'\t' -v s="$2" -v b="$3" '$2 == s && $3 == b { v = $4 } END { if (v != "") print v }' "$1"
}

# ratio LABEL FILE SERIES_A SERIES_B BYTES [lower|higher]: prints A / B.
ratio() {
	local a b
	a=$(value "$2" "$3" "$5")
	b=$(value "$2" "$4" "$5")
	if [ -z "$a" ] || [ -z "$b" ]; then
		printf '%-44s %8s  (%s: %s, %s: %s)\n' "$1" "n/a" "$3" "${a:-missing}" "$4" "${b:-missing}"
		return
	fi
	awk -v l="$1" -v a="$a" -v b="$b" -v sa="$3" -v sb="$4" -v better="${6:-lower}" 'BEGIN {
		r = b > 0 ? a / b : 0
		printf "%-44s %7.2fx  (%s %.4g vs %s %.4g; %s is better)\n", l, r, sa, a, sb, b, better }'
}

# plot_family DATA FAMILY TITLE YLABEL LOGY: gnuplot commands of one panel,
# one line per series of FAMILY (data files written next to DATA).
plot_family() {
	local data=$1 fam=$2 title=$3 ylabel=$4 logy=$5 dir series f first=1 i=0
	dir=$(dirname "$data")/series
	mkdir -p "$dir"
	echo "set title \"$title\""
	echo "set xlabel \"message size (bytes)\""
	echo "set ylabel \"$ylabel\""
	echo "set logscale x 2"
	echo 'set xtics ("2" 2, "8" 8, "32" 32, "128" 128, "512" 512, "2K" 2048, "8K" 8192, "32K" 32768, "128K" 131072, "512K" 524288, "2M" 2097152, "8M" 8388608)'
	echo "set xrange [1.5:12000000]"
	[ "$logy" = 1 ] && echo "set logscale y 10" || echo "unset logscale y"
	echo "set key top left font \",9\""
	echo "set grid"
	printf 'plot '
	while IFS= read -r series; do
		i=$((i + 1))
		f="$dir/$(echo "$fam-$(basename "$data" .tsv)-$series" | tr -c 'A-Za-z0-9._-' _).dat"
		awk -F'\t' -v fam="$fam" -v s="$series" '$1 == fam && $2 == s { print $3, $4 }' "$data" | sort -g > "$f"
		[ $first = 1 ] || printf ', \\\n     '
		first=0
		printf '"%s" using 1:2 with linespoints lw 2 pt %d title "%s"' "$f" "$i" "$series"
	done < <(awk -F'\t' -v fam="$fam" '$1 == fam { print $2 }' "$data" | awk '!seen[$0]++')
	[ $first = 1 ] && printf '0 notitle'
	echo
}

# plot_all: latency.png and bandwidth.png, a panel per family (tcp, shm).
plot_all() {
	if ! need gnuplot gnuplot-nox; then
		skip "plots" "gnuplot is not installed (apt-get install gnuplot-nox)"
		return 1
	fi
	{
		echo "set terminal pngcairo size 1600,700 noenhanced font \",10\""
		echo "set output \"$RES/latency.png\""
		echo "set multiplot layout 1,2 title \"one-way latency (median; half a round trip) -- $(hostname) $(date +%F)\""
		plot_family "$RES/data/lat.tsv" tcp "TCP family" "latency (us)" 1
		plot_family "$RES/data/lat.tsv" shm "shared memory family" "latency (us)" 1
		echo "unset multiplot"
		echo "set output \"$RES/bandwidth.png\""
		echo "set multiplot layout 1,2 title \"bandwidth (GB/s = 1e9 B/s) -- $(hostname) $(date +%F)\""
		plot_family "$RES/data/bw.tsv" tcp "TCP family" "GB/s" 1
		plot_family "$RES/data/bw.tsv" shm "shared memory family" "GB/s" 1
		echo "unset multiplot"
	} > "$RES/plot.gp"
	gnuplot "$RES/plot.gp" 2> "$RES/logs/gnuplot.log" ||
		{ log "gnuplot failed: $(head -3 "$RES/logs/gnuplot.log")"; return 1; }
	log "plots: $RES/latency.png $RES/bandwidth.png"
}
