#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# make check: openrdma-perf -l on self0 (or $OPENRDMA_TEST_INTERFACE) runs
# every test at two sizes with few iterations, its JSON parses and holds
# every result, and its failures fail: an unknown interface, a bad option,
# a server that never answers (within the timeout, not hanging).
set -u

PERF=${OPENRDMA_PERF:-./openrdma-perf}
IFACE=${OPENRDMA_TEST_INTERFACE:-self0}
[ "$IFACE" = all ] && IFACE=self0
# Bandwidth tests let several RDMA writes land in the same buffer at once,
# as perftest does: the bytes do not matter.  ThreadSanitizer (TSAN
# builds) would call that a race in the copy; it is the benchmark's, not
# the library's, so only this script tells TSAN to ignore it.
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}suppressions=$(dirname "$0")/tsan.supp"

TESTS="lat_send lat_write lat_read lat_atomic bw_send bw_write bw_read msg_rate"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/perf-smoke.XXXXXX") || exit 99
trap 'rm -rf "$TMP"' EXIT
failures=0

fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

# expect_rc WANT LABEL CMD...: runs CMD (bounded), checks its exit status.
expect_rc() {
	want=$1 label=$2
	shift 2
	timeout 120 "$@" > "$TMP/out" 2> "$TMP/err"
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		fail "$label: exit $rc, expected $want"
		sed 's/^/  | /' "$TMP/out" "$TMP/err"
		return 1
	fi
	echo "ok: $label (exit $rc)"
	return 0
}

if [ ! -x "$PERF" ]; then
	echo "ERROR: $PERF is not built"
	exit 99
fi
if ! command -v python3 > /dev/null; then
	echo "SKIP: python3 is needed to check the JSON output"
	exit 77
fi

# Every test at two sizes, as JSON: it must parse and list each result.
for size in 8 4096; do
	if expect_rc 0 "all tests, $size B, JSON" \
		"$PERF" -l -d "$IFACE" -t all -s "$size" -n 200 --json; then
		cp "$TMP/out" "$TMP/run-$size.json"
		if ! python3 -m json.tool "$TMP/run-$size.json" > /dev/null; then
			fail "$size B: the JSON does not parse"
			continue
		fi
		python3 - "$TMP/run-$size.json" "$size" $TESTS <<'PY' || fail "$size B: JSON content"
import json, sys
doc = json.load(open(sys.argv[1]))
size, want = int(sys.argv[2]), sys.argv[3:]
assert doc["status"] == "ok", doc
got = {r["test"]: r for r in doc["results"]}
for t in want:
    r = got.get(t)
    assert r is not None, "%s missing" % t
    if "skipped" in r:
        continue  # the interface has no atomics, say
    assert r["bytes"] == (8 if t == "lat_atomic" else size), r
    assert r["iterations"] == 200, r
    if t.startswith("lat_"):
        lat = r["lat_us"]
        assert 0 < lat["min"] <= lat["median"] <= lat["p99"] <= lat["max"], r
        assert r["latency"] == ("one-way" if t in ("lat_send", "lat_write") else "round-trip"), r
    else:
        assert r["GBps"] > 0 and r["Mmsgps"] > 0, r
print("json ok: %d results" % len(got))
PY
	fi
done

# The table and CSV with several QPs and threads.
expect_rc 0 "table, 4 QPs on 2 threads" \
	"$PERF" -l -d "$IFACE" -q 4 -T 2 -n 100 -t lat_send,bw_write,msg_rate &&
	{ grep -q '^# bw_write' "$TMP/out" || fail "table: no bw_write section"; }
expect_rc 0 "CSV" "$PERF" -l -d "$IFACE" -t lat_read,bw_read -n 100 --csv &&
	{ [ "$(grep -c "^lat_read,$IFACE,\|^bw_read,$IFACE," "$TMP/out")" -eq 2 ] ||
		fail "CSV: expected 2 rows"; }
expect_rc 0 "size range 8:32" "$PERF" -l -d "$IFACE" -t bw_send -s 8:32 -n 100 --csv &&
	{ [ "$(grep -c "^bw_send,$IFACE,[^,]*,\(8\|16\|32\)," "$TMP/out")" -eq 3 ] ||
		fail "size range: expected 3 rows"; }
expect_rc 2 "size range 64:8" "$PERF" -l -d "$IFACE" -s 64:8
expect_rc 0 "duration mode" "$PERF" -l -d "$IFACE" -t lat_write -D 0.05
expect_rc 0 "scale, 256 endpoints" \
	"$PERF" -l -d "$IFACE" -t scale --endpoints 256 --json &&
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; assert r["endpoints"]==256 and r["messages"]==256, r' \
		"$TMP/out" || fail "scale: JSON content"

# Failures fail, and in time.
expect_rc 1 "unknown interface" "$PERF" -l -d no-such-interface0 -t lat_send
expect_rc 2 "bad option" "$PERF" --no-such-option
expect_rc 2 "-n with -D" "$PERF" -l -d "$IFACE" -n 10 -D 1
start=$(date +%s)
expect_rc 1 "no server (timeout 2 s)" \
	"$PERF" -d "$IFACE" -p 18999 --timeout 2 -t lat_send 127.0.0.1
[ $(($(date +%s) - start)) -le 20 ] || fail "no server: took too long"

if [ "$failures" -ne 0 ]; then
	echo "$failures failure(s)"
	exit 1
fi
echo "all ok"
exit 0
