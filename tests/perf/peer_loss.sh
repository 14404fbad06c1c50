#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# make check: openrdma-perf when its peer dies in the middle of a run.
# A server killed (SIGKILL) while a client streams: the client must exit
# with status 1 and say so, within its --timeout and not hang; a client
# killed the same way: the server must end its session likewise.  Runs on
# tcp0 and shm0 (the server is a process of its own, which self0 cannot
# have), or on $OPENRDMA_TEST_INTERFACE when that names another one.
set -u

PERF=${OPENRDMA_PERF:-./openrdma-perf}
TIMEOUT=5 # the tools' --timeout
SLACK=25  # scheduling on a loaded machine, on top of TIMEOUT
case ${OPENRDMA_TEST_INTERFACE:-all} in
all | self*) IFACES="tcp0 shm0" ;;
*) IFACES=$OPENRDMA_TEST_INTERFACE ;;
esac
TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}suppressions=$(dirname "$0")/tsan.supp"
export TSAN_OPTIONS

TMP=$(mktemp -d "${TMPDIR:-/tmp}/perf-loss.XXXXXX") || exit 99
SPID='' CPID=''
cleanup() {
	# only what this script started, by its PID
	for p in $SPID $CPID; do kill -9 "$p" 2> /dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT
failures=0 ran=0

fail() {
	echo "FAIL: $*"
	for f in "$TMP"/*.err; do
		[ -s "$f" ] && sed "s|^|  $(basename "$f"): |" "$f"
	done
	failures=$((failures + 1))
}

if [ ! -x "$PERF" ]; then
	echo "ERROR: $PERF is not built"
	exit 99
fi

# wait_for FILE REGEX PID SEC: until FILE has a line matching REGEX (0),
# PID exits (1) or SEC pass (2).
wait_for() {
	n=0
	while [ "$n" -lt $(($4 * 10)) ]; do
		grep -q "$2" "$1" 2> /dev/null && return 0
		kill -0 "$3" 2> /dev/null || {
			grep -q "$2" "$1" 2> /dev/null && return 0
			return 1
		}
		sleep 0.1
		n=$((n + 1))
	done
	return 2
}

# start_server IFACE: a server in the background (SPID), its address in
# ADDR and port in PORT; returns 77 with the reason when it cannot run.
start_server() {
	try=0
	while [ $try -lt 5 ]; do
		PORT=$((20000 + ($(od -An -N2 -tu2 /dev/urandom) + try) % 30000))
		: > "$TMP/srv.err"
		"$PERF" -d "$1" -p "$PORT" -v --timeout "$TIMEOUT" \
			> "$TMP/srv.out" 2> "$TMP/srv.err" &
		SPID=$!
		if wait_for "$TMP/srv.err" "listening at" "$SPID" 30; then
			ADDR=$(sed -n 's/.* listening at \(.*\):[0-9]*$/\1/p' "$TMP/srv.err" |
				tr -d '[]' | head -1)
			return 0
		fi
		kill -9 "$SPID" 2> /dev/null
		wait "$SPID" 2> /dev/null
		SPID=
		grep -q "in use" "$TMP/srv.err" || break
		try=$((try + 1))
	done
	REASON=$(tail -1 "$TMP/srv.err")
	return 77
}

# start_client IFACE: a client streaming 8 B then 16 B messages for about
# 2 s each (CPID); returns once the first row is out, i.e. mid-run.
start_client() {
	: > "$TMP/cli.out"
	"$PERF" -d "$1" -p "$PORT" --timeout "$TIMEOUT" -t bw_send \
		-s 8:16 -D 2 --no-progress "$ADDR" > "$TMP/cli.out" 2> "$TMP/cli.err" &
	CPID=$!
	wait_for "$TMP/cli.out" "^ *8 " "$CPID" 60
}

# reap PID LABEL GREP: waits for PID after its peer was killed: exit 1,
# a message matching GREP, within TIMEOUT + SLACK seconds.
reap() {
	start=$(date +%s)
	while kill -0 "$1" 2> /dev/null &&
		[ $(($(date +%s) - start)) -le $((TIMEOUT + SLACK + 30)) ]; do
		sleep 0.2
	done
	kill -9 "$1" 2> /dev/null # a hang is a failure, not a hung make check
	wait "$1"
	rc=$?
	took=$(($(date +%s) - start))
	if [ "$rc" -ne 1 ]; then
		fail "$2: exit $rc, expected 1"
	elif ! grep -q "$3" "$4"; then
		fail "$2: no message saying so"
	elif [ "$took" -gt $((TIMEOUT + SLACK)) ]; then
		fail "$2: took ${took} s (--timeout $TIMEOUT)"
	else
		echo "ok: $2 (exit 1 after ${took} s: $(grep "$3" "$4" | head -1))"
	fi
}

for iface in $IFACES; do
	# the server dies mid-run
	start_server "$iface"
	case $? in
	0) ;;
	77)
		echo "skip: $iface: no server: $REASON"
		continue
		;;
	esac
	ran=$((ran + 1))
	if ! start_client "$iface"; then
		fail "$iface: the client did not start streaming"
	else
		kill -9 "$SPID"
		wait "$SPID" 2> /dev/null
		SPID=
		reap "$CPID" "$iface: server killed mid-run, client" \
			"openrdma-perf: .*\(lost the server\|bw_send\)" "$TMP/cli.err"
	fi
	kill -9 "$SPID" "$CPID" 2> /dev/null
	SPID='' CPID=''

	# the client dies mid-run
	start_server "$iface" || {
		fail "$iface: the server did not start again: $REASON"
		continue
	}
	if ! start_client "$iface"; then
		fail "$iface: the client did not start streaming"
	else
		kill -9 "$CPID"
		wait "$CPID" 2> /dev/null
		CPID=
		reap "$SPID" "$iface: client killed mid-run, server" \
			"openrdma-perf: server: \(lost the client\|session failed\)" "$TMP/srv.err"
	fi
	kill -9 "$SPID" "$CPID" 2> /dev/null
	SPID='' CPID=''
done

if [ "$ran" -eq 0 ]; then
	echo "SKIP: no interface of '$IFACES' could run a server"
	exit 77
fi
if [ "$failures" -ne 0 ]; then
	echo "$failures failure(s)"
	exit 1
fi
echo "all ok"
exit 0
