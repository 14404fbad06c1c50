#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# scale.sh [RESULTS_DIR]   (default /tmp/openrdma-perf-scale)
#
# Connected RC endpoints on one interface, as many as the descriptor limit
# and the interface's QP limit allow (openrdma-perf -t scale), over shm0
# and tcp0, with self0 for reference: the endpoints reached, the limit
# that stopped them, the connection set-up and teardown rates, and the
# memory (resident set growth / endpoints) and descriptors per endpoint on
# each side.  Fewer than MIN_EPS (4096) endpoints fails the run unless an
# interface's own max_qp is what stopped it.  Settings: PERF, IFACES
# ("shm0 tcp0 self0"), ENDPOINTS (default: as many as allowed), MIN_EPS.
set -u
RES=${1:-/tmp/openrdma-perf-scale}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
results_init

IFACES=${IFACES:-"shm0 tcp0 self0"}
MIN_EPS=${MIN_EPS:-4096}
PERF=$(find_perf) || exit 1
failed=0

# The descriptor limit the tool will raise its own soft limit to.
log "descriptor limit: soft $(ulimit -Sn), hard $(ulimit -Hn)"
for iface in $IFACES; do
	if ! run "probe-$iface" timeout 60 "$PERF" -l -d "$iface" -t scale \
		--endpoints 16 --json; then
		skip "scale $iface" "$(grep -v '^ *[{}"]' "$RES/logs/probe-$iface.log" | tail -1)"
		continue
	fi
	wait_quiet "scale-$iface"
	log "scale on $iface"
	if ! run "scale-$iface" timeout 1800 "$PERF" -l -d "$iface" -t scale \
		--cpu "$CPU_A,$CPU_B" ${ENDPOINTS:+--endpoints $ENDPOINTS} --json; then
		skip "scale $iface" "failed: $(tail -1 "$RES/logs/scale-$iface.log")"
		failed=1
		continue
	fi
	cp "$RES/logs/scale-$iface.log" "$RES/data/scale-$iface.json"
done

python3 - "$RES" "$MIN_EPS" $IFACES << 'PY' | tee "$RES/summary.txt"
import json, os, sys
res, min_eps, ifaces = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
print("%-6s %9s %11s %11s %12s %12s %8s %8s  %s" % (
    "iface", "endpoints", "connect/s", "teardown/s", "KiB/ep cli", "KiB/ep srv",
    "fds cli", "fds srv", "limited by"))
bad = 0
for iface in ifaces:
    path = os.path.join(res, "data", "scale-%s.json" % iface)
    if not os.path.exists(path):
        print("%-6s %9s" % (iface, "skipped"))
        continue
    doc = json.load(open(path))
    r = doc["results"][0]
    srv = "(same)" if r["one_process"] else "%.1f" % (r["rss_per_ep_server_bytes"] / 1024)
    fsrv = "(same)" if r["one_process"] else "%.2f" % r["fds_per_ep_server"]
    print("%-6s %9d %11.0f %11.0f %12.1f %12s %8.2f %8s  %s" % (
        iface, r["endpoints"], r["connections_per_s"], r["teardown_per_s"],
        r["rss_per_ep_client_bytes"] / 1024, srv, r["fds_per_ep_client"], fsrv,
        r["limited_by"]))
    if r["messages"] != r["endpoints"]:
        print("       only %d of %d messages arrived" % (r["messages"], r["endpoints"]))
        bad = 1
    if r["endpoints"] < min_eps and "max_qp" not in r["limited_by"]:
        print("       fewer than %d endpoints" % min_eps)
        bad = 1
print("\n(one process: both sides' growth, in the client's column)")
sys.exit(bad)
PY
[ $? -eq 0 ] || failed=1
if [ -s "$RES/skipped.tsv" ]; then
	echo "skipped:"
	sed 's/^/  /; s/\t/: /' "$RES/skipped.tsv"
fi
exit $failed
