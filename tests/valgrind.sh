#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# make check-valgrind: the software transports' fault and hostile-input
# tests ($VALGRIND_TESTS) and the conformance suite with its peer in
# another process on each of $VALGRIND_INTERFACES, under valgrind's
# memcheck.  Each fails on an invalid access, a use of uninitialised
# memory, or memory definitely or indirectly lost (what libraries below
# us keep for their life, "possibly lost", does not count); a test that
# fails fails too.  Run from the build directory; logs go to
# <program>[-<interface>].valgrind.log.  Exits 77, saying why, where
# valgrind is missing.
#
# --fair-sched=yes: valgrind runs one thread at a time, and without it a
# busy-polling thread keeps the others (the progress thread) from
# running for up to seconds.  --vgdb=no: a test that changes its user
# cannot remove the pipes of valgrind's gdbserver.
set -u

if ! command -v valgrind >/dev/null 2>&1; then
	echo "check-valgrind: SKIP: valgrind is not installed"
	exit 77
fi

VG_OPTS="-q --error-exitcode=99 --leak-check=full
	--errors-for-leak-kinds=definite,indirect
	--show-leak-kinds=definite,indirect --trace-children=yes
	--fair-sched=yes --vgdb=no"
failed=0

# run NAME LOG COMMAND...: one program under memcheck, its tests one
# after the other.
run() {
	name=$1
	log=$2
	shift 2
	start=$(date +%s)
	# shellcheck disable=SC2086
	valgrind $VG_OPTS "$@" -j1 >"$log" 2>&1
	rc=$?
	took=$(($(date +%s) - start))
	if [ "$rc" -eq 0 ]; then
		echo "PASS: $name (${took} s)"
		return
	fi
	echo "FAIL: $name (exit $rc, ${took} s; $log):"
	grep -E '^==[0-9]+== [^ ]|\[FAIL\]|Assertion|Synthesis' "$log" |
		head -40
	failed=1
}

for t in ${VALGRIND_TESTS:-}; do
	run "$t" "$t.valgrind.log" "./$t"
done
OPENRDMA_TEST_MODE=process
export OPENRDMA_TEST_MODE
for iface in ${VALGRIND_INTERFACES:-}; do
	OPENRDMA_TEST_INTERFACE=$iface
	export OPENRDMA_TEST_INTERFACE
	run "conformance on $iface" \
		"tests/conformance/conformance-$iface.valgrind.log" \
		tests/conformance/conformance
done
exit $failed
