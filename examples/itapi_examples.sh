#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# Runs every IT-API example with both sides on this machine (-l) over
# OPENRDMA_TEST_INTERFACE (self0 when unset); fails if any of them does.
# On an interface that reaches other processes (tcp0, shm0) each example
# puts its server and client in two processes.  Run from the build tree,
# as make check does.
: "${OPENRDMA_TEST_INTERFACE:=self0}"
dir=examples
status=0
# Ports from this shell's process id: runs of other build trees, or on
# other interfaces, at the same time do not contend for one port.  They
# stay below the kernel's ephemeral range, which the connections of tests
# running beside this one draw from (a listen on such a port is refused
# with IT_ERR_CONN_QUAL_BUSY).
low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null)
case $low in '' | *[!0-9]*) low=32768 ;; esac
[ "$low" -gt 20100 ] || low=32768
port=$((20000 + ($$ % ((low - 20000) / 10 - 1)) * 10))
for run in "it_pingpong -n 2000 -s 64" \
	   "it_pingpong -n 200 -s 1048576" \
	   "it_rdma -n 500 -s 65536" \
	   "it_callbacks -n 2000 -s 32" \
	   "it_ud -n 1000 -s 512" \
	   "it_srq -n 4000 -s 256"; do
	set -- $run
	prog=$1
	shift
	port=$((port + 1))
	echo "== $prog $* -p $port -l -d $OPENRDMA_TEST_INTERFACE"
	if ! "$dir/$prog" -d "$OPENRDMA_TEST_INTERFACE" -p "$port" -l "$@"; then
		echo "FAIL: $prog $*" >&2
		status=1
	fi
done
exit $status
