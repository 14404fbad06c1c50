# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# abi.sh compare | selftest
#
# compare:  the DAT 2.0 headers in include/dat2 against a reference copy
#           (DAPL's, from $DAT_REFERENCE_INCLUDEDIR/dat2, default
#           /usr/include/dat2): every size, offset, constant, typedef,
#           function type, provider slot and macro expansion must agree,
#           except the lines abi-deviations.txt lists, and all of those
#           must still occur.
# selftest: the comparison itself: a copy of our headers with known
#           breakages must produce exactly the differences they cause.
#
# Environment (set by the generated wrappers): CC, DAT_SRCDIR (this
# folder), DAT_INCLUDEDIR (our include/); DAT_WORKDIR (scratch space,
# removed on success) is optional.
# Exit status: 0 pass, 1 fail, 77 skipped (reason on stderr).

set -eu

mode=${1:-compare}
: "${CC:=cc}"
: "${DAT_SRCDIR:=$(cd "$(dirname "$0")" && pwd)}"
: "${DAT_INCLUDEDIR:=$DAT_SRCDIR/../../include}"
: "${DAT_WORKDIR:=$(mktemp -d "${TMPDIR:-/tmp}/dat-abi.XXXXXX")}"
: "${DAT_REFERENCE_INCLUDEDIR:=/usr/include}"

skip()
{
	echo "SKIP: $*" >&2
	rm -rf "$DAT_WORKDIR"
	exit 77
}

fail()
{
	echo "FAIL: $*" >&2
	echo "(work files kept in $DAT_WORKDIR)" >&2
	exit 1
}

command -v readelf >/dev/null 2>&1 ||
	skip "readelf (binutils) is needed to read the compiler's debug information"

rm -rf "$DAT_WORKDIR"
mkdir -p "$DAT_WORKDIR"

# dump NAME INCLUDEDIR: the canonical listing of one header set
dump()
{
	if ! sh "$DAT_SRCDIR/abi-dump.sh" "$CC" "$2" "$DAT_WORKDIR/$1" \
		"$DAT_SRCDIR" >"$DAT_WORKDIR/$1.list"; then
		fail "could not take the listing of $2/dat2"
	fi
	[ -s "$DAT_WORKDIR/$1.list" ] || fail "empty listing for $2/dat2"
}

# differences REF OURS: "-line" only in REF, "+line" only in OURS, sorted
differences()
{
	{
		LC_ALL=C comm -23 "$1" "$2" | sed 's/^/-/'
		LC_ALL=C comm -13 "$1" "$2" | sed 's/^/+/'
	} | LC_ALL=C sort
}

case $mode in
compare)
	ref=$DAT_REFERENCE_INCLUDEDIR
	[ -f "$ref/dat2/udat.h" ] ||
		skip "no reference DAT 2.0 headers in $ref/dat2 (Debian: apt-get install libdapl-dev, or set DAT_REFERENCE_INCLUDEDIR)"
	dump reference "$ref"
	dump ours "$DAT_INCLUDEDIR"
	differences "$DAT_WORKDIR/reference.list" "$DAT_WORKDIR/ours.list" \
		>"$DAT_WORKDIR/actual"
	grep -v -e '^#' -e '^$' "$DAT_SRCDIR/abi-deviations.txt" |
		LC_ALL=C sort >"$DAT_WORKDIR/expected"
	LC_ALL=C comm -23 "$DAT_WORKDIR/actual" "$DAT_WORKDIR/expected" \
		>"$DAT_WORKDIR/unexpected"
	LC_ALL=C comm -13 "$DAT_WORKDIR/actual" "$DAT_WORKDIR/expected" \
		>"$DAT_WORKDIR/stale"
	n=$(wc -l <"$DAT_WORKDIR/ours.list")
	echo "compared $n facts of include/dat2 with $ref/dat2"
	status=0
	if [ -s "$DAT_WORKDIR/unexpected" ]; then
		echo "differences not in abi-deviations.txt (- $ref, + ours):"
		cat "$DAT_WORKDIR/unexpected"
		status=1
	fi
	if [ -s "$DAT_WORKDIR/stale" ]; then
		echo "abi-deviations.txt lists differences that no longer occur:"
		cat "$DAT_WORKDIR/stale"
		status=1
	fi
	if [ $status -ne 0 ]; then
		echo "(work files kept in $DAT_WORKDIR)"
		exit 1
	fi
	echo "$(wc -l <"$DAT_WORKDIR/expected") listed deviations, nothing else"
	rm -rf "$DAT_WORKDIR"
	;;
selftest)
	dump ours "$DAT_INCLUDEDIR"
	dump again "$DAT_INCLUDEDIR"
	cmp -s "$DAT_WORKDIR/ours.list" "$DAT_WORKDIR/again.list" ||
		fail "two listings of the same headers differ"

	# A copy with one breakage of each kind the comparison must see.
	broken=$DAT_WORKDIR/broken/dat2
	mkdir -p "$broken"
	cp "$DAT_INCLUDEDIR"/dat2/*.h "$broken/"
	edit()
	{
		sed "$2" "$broken/$1" >"$broken/$1.new"
		cmp -s "$broken/$1" "$broken/$1.new" &&
			fail "self-test edit '$2' did not apply to $1"
		mv "$broken/$1.new" "$broken/$1"
	}
	# a record size and a field type
	edit dat.h 's/event_extension_data\[8\]/event_extension_data[7]/'
	# an enumeration constant
	edit dat_error.h 's/DAT_QUEUE_EMPTY = 0x000D0000/DAT_QUEUE_EMPTY = 0x000D0001/'
	# two provider slots swapped
	edit udat_redirection.h 's/DAT_CR_ACCEPT_FUNC cr_accept_func;/DAT_CR_REJECT_FUNC cr_reject_func_x;/
s/DAT_CR_REJECT_FUNC cr_reject_func;/DAT_CR_ACCEPT_FUNC cr_accept_func;/
s/cr_reject_func_x;/cr_reject_func;/'
	# a dispatch macro calling the wrong slot
	edit dat_redirection.h 's/->ep_post_send_func)/->ep_post_recv_func)/'
	# a constant's value
	edit dat.h 's/((DAT_TIMEOUT)~0)/((DAT_TIMEOUT)~1)/'
	# a function's parameter type
	edit dat.h 's/dat_ep_reset(DAT_EP_HANDLE ep_handle)/dat_ep_reset(DAT_COUNT ep_handle)/'
	# a declaration removed
	edit udat.h '/^extern DAT_RETURN dat_evd_enable(/d'
	dump broken "$DAT_WORKDIR/broken"
	differences "$DAT_WORKDIR/ours.list" "$DAT_WORKDIR/broken.list" \
		>"$DAT_WORKDIR/actual"
	for pattern in '^-struct dat_event size 120$' \
		'^+struct dat_event size 112$' \
		'^-member dat_event.event_extension_data @' \
		'^-enumerator DAT_QUEUE_EMPTY = 851968$' \
		'^+enumerator DAT_QUEUE_EMPTY = 851969$' \
		'^-member dat_provider.cr_accept_func @112 ' \
		'^+member dat_provider.cr_accept_func @120 ' \
		'^+fmacro DAT_EP_POST_SEND(.*->ep_post_recv_func' \
		'^-macro DAT_TIMEOUT_INFINITE uint 0xffffffff$' \
		'^+macro DAT_TIMEOUT_INFINITE uint 0xfffffffe$' \
		'^-function dat_ep_reset fn(void\*)' \
		'^+function dat_ep_reset fn(int)' \
		'^-function dat_evd_enable '; do
		grep -q -e "$pattern" "$DAT_WORKDIR/actual" ||
			fail "the comparison missed a breakage: $pattern"
	done
	# ...and nothing beyond what those edits imply.
	if grep -v -e 'dat_event' -e 'DAT_EVENT' -e 'DAT_QUEUE_EMPTY' \
		-e 'cr_accept_func' -e 'cr_reject_func' -e 'CR_ACCEPT' \
		-e 'CR_REJECT' -e 'DAT_EP_POST_SEND' -e 'TIMEOUT_INFINITE' \
		-e 'dat_ep_reset' -e 'dat_evd_enable' "$DAT_WORKDIR/actual" \
		>"$DAT_WORKDIR/extra"; then
		cat "$DAT_WORKDIR/extra"
		fail "the comparison reported differences no edit caused"
	fi
	echo "self-test: $(wc -l <"$DAT_WORKDIR/actual") differences, all expected"
	rm -rf "$DAT_WORKDIR"
	;;
*)
	fail "usage: abi.sh compare|selftest"
	;;
esac
