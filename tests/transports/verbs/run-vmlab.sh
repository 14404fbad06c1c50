#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# Runs in the vmlab guest, from the build directory (make check-vmlab):
# the verbs transport's device tests, the conformance suite and the
# IT-API and DAT tests on each interface, the interfaces side by side (their devices are independent),
# each one's output shown whole once it is done, then a summary with
# Criterion's synthesis of every program.  Exit status 0 when all passed.
#
#   VERBS_VM_INTERFACES   interfaces to test (default: rxe0-1 siw0-1)
#   VERBS_VM_MODES        conformance peer modes (default: local process)
#   VERBS_VM_FILTER       Criterion --filter pattern for both programs
#   VERBS_VM_TIMEOUT      seconds allowed to each program (default 600)
#   VERBS_VM_BUDGET       seconds for the whole run (default none): each
#                         program gets at most what is left of it
#   VERBS_VM_SERIAL       1: one interface after the other
#   VERBS_VM_CONFORMANCE  the suite's program (tests/conformance/conformance)
#   VERBS_VM_ITAPI        Criterion --filter pattern of the IT-API tests
#                         run too (default: all but those below that do not
#                         pass on the interface's device yet)
#   VERBS_VM_DAT          DAT test programs run too, by the name after
#                         tests/dat/test_api_ (default: all of them)
set -u
# IT-API tests that do not pass on a device yet, with what is known.
# rxe: a write refused by the target raises no event there (rxe's
# responder posts none and keeps its QP running).
itapi_known_rxe='itapi_dto/rdma_write_bad_key'
itapi_known_siw=
interfaces=${VERBS_VM_INTERFACES:-rxe0-1 siw0-1}
modes=${VERBS_VM_MODES:-local process}
conformance=${VERBS_VM_CONFORMANCE:-./tests/conformance/conformance}
filter=()
[ -n "${VERBS_VM_FILTER:-}" ] && filter=(--filter "$VERBS_VM_FILTER")
work=$(mktemp -d)
start=$SECONDS

# run LABEL COMMAND...: one program; its summary line goes to $sumfile
run() {
	local label=$1 limit=${VERBS_VM_TIMEOUT:-600} rc synth
	shift
	if [ -n "${VERBS_VM_BUDGET:-}" ] &&
		[ $((VERBS_VM_BUDGET - (SECONDS - start))) -lt "$limit" ]; then
		limit=$((VERBS_VM_BUDGET - (SECONDS - start)))
	fi
	echo "=== $label"
	if [ "$limit" -le 0 ]; then
		echo "$label: FAILED (not run: out of time)" >>"$sumfile"
		return 1
	fi
	timeout "$limit" "$@" >"$work/out" 2>&1
	rc=$?
	cat "$work/out"
	synth=$(grep -a 'Synthesis:' "$work/out" | tail -1 |
		sed 's/.*Synthesis: //')
	case $rc in
	0) echo "$label: ok: $synth" ;;
	124) echo "$label: FAILED (timed out after ${limit}s) $synth" ;;
	*) echo "$label: FAILED ($rc): $synth" ;;
	esac >>"$sumfile"
	return $rc
}

# one interface: the device tests, then the suite in each mode
interface() {
	local ifc=$1 status=0 mode known prog
	export OPENRDMA_TEST_INTERFACE=$ifc
	run "$ifc device tests" ./tests/transports/verbs/test_verbs_device \
		--jobs 1 "${filter[@]}" || status=1
	if [ ! -x "$conformance" ]; then
		echo "$ifc conformance: FAILED (not built)" >>"$sumfile"
		return 1
	fi
	for mode in $modes; do
		OPENRDMA_TEST_MODE=$mode run "$ifc conformance ($mode)" \
			"$conformance" --jobs 1 "${filter[@]}" || status=1
	done
	case $ifc in
	rxe*) known=$itapi_known_rxe ;;
	siw*) known=$itapi_known_siw ;;
	*) known= ;;
	esac
	[ -n "$known" ] && known="!($known)"
	run "$ifc IT-API" ./tests/itapi/test_api --jobs 1 \
		--filter "${VERBS_VM_ITAPI:-${known:-*/*}}" || status=1
	for prog in ${VERBS_VM_DAT:-ia mem evd ep post srq ext handle}; do
		run "$ifc DAT $prog" ./tests/dat/test_api_"$prog" --jobs 1 ||
			status=1
	done
	return $status
}

status=0
ibv_devices
./registry/openrdma-info || status=1
for ifc in $interfaces; do
	mkdir -p "$work/$ifc"
	(
		work=$work/$ifc
		sumfile=$work/summary
		interface "$ifc" >"$work/log" 2>&1
		echo $? >"$work/rc"
	) &
	[ "${VERBS_VM_SERIAL:-0}" = 1 ] && wait
done
wait
for ifc in $interfaces; do
	cat "$work/$ifc/log"
	[ "$(cat "$work/$ifc/rc" 2>/dev/null)" = 0 ] || status=1
done
echo "=== summary ($((SECONDS - start))s)"
for ifc in $interfaces; do
	cat "$work/$ifc/summary"
done
rm -rf "$work"
exit $status
