#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# Runs every IT-API example with both sides on this machine (-l) over
# OPENRDMA_TEST_INTERFACE (self0 when unset); fails if any of them does.
# Run from the build tree, as make check does.
: "${OPENRDMA_TEST_INTERFACE:=self0}"
dir=examples
status=0
for run in "it_pingpong -n 2000 -s 64" \
	   "it_pingpong -n 200 -s 1048576" \
	   "it_rdma -n 500 -s 65536" \
	   "it_callbacks -n 2000 -s 32" \
	   "it_ud -n 1000 -s 512" \
	   "it_srq -n 4000 -s 256"; do
	set -- $run
	prog=$1
	shift
	echo "== $prog $* -l -d $OPENRDMA_TEST_INTERFACE"
	if ! "$dir/$prog" -d "$OPENRDMA_TEST_INTERFACE" -l "$@"; then
		echo "FAIL: $prog $*" >&2
		status=1
	fi
done
exit $status
