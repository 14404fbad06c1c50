#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# make check-vmlab, on the host, from the build directory: boots the vmlab
# guest and runs run-vmlab.sh there (the verbs device tests and the
# conformance suite on each interface).
#
# Exit status: 0 when everything passed, 1 when anything failed or timed
# out, 77 (automake's "skipped") with the reason when the guest cannot
# boot here: no vmlab scripts, no qemu, or no guest image and no way to
# build one.
#
#   VMLAB_SCRIPTS        the vmlab folder (run-guest.sh, build-guest.sh)
#   VERBS_VM_DEADLINE    seconds the whole run may take (default 1800)
#   VERBS_VM_INTERFACES, VERBS_VM_MODES, VERBS_VM_FILTER: see run-vmlab.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
scripts=${VMLAB_SCRIPTS:-}
deadline=${VERBS_VM_DEADLINE:-1800}

skip() {
	echo "check-vmlab: SKIP: $*" >&2
	exit 77
}

[ -n "$scripts" ] && [ -x "$scripts/run-guest.sh" ] ||
	skip "no vmlab scripts (VMLAB_SCRIPTS='$scripts')"
[ -x tests/conformance/conformance ] ||
	{ echo "check-vmlab: not in a build directory" >&2; exit 1; }
[ -x tests/transports/verbs/test_verbs_device ] ||
	skip "the verbs transport is not built (no rdma-core at configure)"
# The guest image is built once (apt-get and downloads): a host that
# cannot is one where the guest cannot boot, not a failure of the tests.
# It installs qemu too: a fresh machine gets it there.
if ! "$scripts/build-guest.sh" >vmlab-build.log 2>&1; then
	tail -5 vmlab-build.log >&2
	skip "the guest image cannot be built here (vmlab-build.log)"
fi
command -v qemu-system-x86_64 >/dev/null ||
	skip "qemu-system-x86_64 is not installed"

# The guest's own limits (run-vmlab.sh) come first; the VM's is a backstop.
budget=$((deadline - 30))
export VERBS_VM_BUDGET=$budget
export VMLAB_TIMEOUT=$deadline
export VMLAB_PASSENV="${VMLAB_PASSENV:-} VERBS_VM_INTERFACES VERBS_VM_MODES \
VERBS_VM_FILTER VERBS_VM_BUDGET VERBS_VM_TIMEOUT VERBS_VM_CONFORMANCE \
VERBS_VM_ITAPI VERBS_VM_DAT"
# the guest's output, also kept here (the guest has no /dev/fd for tee)
log=vmlab-verbs.log
"$scripts/run-guest.sh" "$here/run-vmlab.sh" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
case $rc in
0) ;;
124) echo "check-vmlab: FAIL: the guest ran out of ${deadline}s" >&2 ;;
125)
	# the guest never reported: did it run the tests at all?
	grep -q '^=== ' "$log" 2>/dev/null ||
		skip "the guest did not boot (run with VMLAB_VERBOSE=1)"
	echo "check-vmlab: FAIL: the guest stopped without a status" >&2
	;;
*) echo "check-vmlab: FAIL (status $rc): see $log" >&2 ;;
esac
[ $rc -eq 0 ] || exit 1
exit 0
