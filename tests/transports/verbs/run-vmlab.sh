#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# Runs in the vmlab guest, from the build directory (make check-vmlab):
# the verbs transport's device tests and the conformance suite, once per
# interface, each ending with Criterion's summary.
#
#   VERBS_VM_INTERFACES   interfaces to test (default: rxe0-1 siw0-1)
#   VERBS_VM_MODES        conformance peer modes (default: local; also process)
#   VERBS_VM_FILTER       Criterion --filter pattern for both programs
#   VERBS_VM_TIMEOUT      seconds allowed to each program (default 600)
#   VERBS_VM_LOG          also written to this file (default vmlab-verbs.log)
set -u
exec > >(tee "${VERBS_VM_LOG:-vmlab-verbs.log}") 2>&1
interfaces=${VERBS_VM_INTERFACES:-rxe0-1 siw0-1}
modes=${VERBS_VM_MODES:-local}
filter=()
[ -n "${VERBS_VM_FILTER:-}" ] && filter=(--filter "$VERBS_VM_FILTER")
status=0
summary=()

run() { # label command...
	local label=$1 rc
	shift
	echo "=== $label"
	timeout "${VERBS_VM_TIMEOUT:-600}" "$@"
	rc=$?
	[ $rc -eq 0 ] || status=1
	summary+=("$label: $([ $rc -eq 0 ] && echo ok || echo "FAILED ($rc)")")
}

ibv_devices
./registry/openrdma-info || status=1
for ifc in $interfaces; do
	export OPENRDMA_TEST_INTERFACE=$ifc
	run "$ifc device tests" ./tests/transports/verbs/test_verbs_device \
		--jobs 1 "${filter[@]}"
	if [ ! -x tests/conformance/conformance ]; then
		summary+=("$ifc conformance: not built")
		continue
	fi
	for mode in $modes; do
		OPENRDMA_TEST_MODE=$mode run "$ifc conformance ($mode)" \
			./tests/conformance/conformance --jobs 1 "${filter[@]}"
	done
done
echo "=== summary"
printf '%s\n' "${summary[@]}"
exit $status
