# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# headers.sh c | c++
#
# Every DAT 2.0 header must compile on its own, twice in a row, warning
# free, in each C dialect DAT programs use (c) or as C++ (c++); and
# dat_program.c, a program written the way the dtest suite is, must
# compile against them.  Compile only: nothing is linked.
#
# Environment (set by the generated wrappers): CC, CXX (optional),
# DAT_SRCDIR (this folder), DAT_INCLUDEDIR (our include/); DAT_WORKDIR
# (scratch space, removed on success) is optional.
# Exit status: 0 pass, 1 fail, 77 skipped (reason on stderr).

set -eu

lang=${1:-c}
: "${CC:=cc}"
: "${DAT_SRCDIR:=$(cd "$(dirname "$0")" && pwd)}"
: "${DAT_INCLUDEDIR:=$DAT_SRCDIR/../../include}"
: "${DAT_WORKDIR:=$(mktemp -d "${TMPDIR:-/tmp}/dat-headers.XXXXXX")}"

headers='udat.h dat.h dat_error.h dat_platform_specific.h udat_config.h
dat_redirection.h udat_redirection.h dat_registry.h dat_vendor_specific.h
udat_vendor_specific.h dat_ib_extensions.h'

# The project's own warnings, and what a strict consumer adds.
cwarn='-Wall -Wextra -Werror -Wmissing-prototypes -Wstrict-prototypes
-Wshadow -Wpointer-arith -Wformat=2 -Wundef -Wvla -Wwrite-strings
-Wcast-align -Wredundant-decls -Wnested-externs -Wold-style-definition'
cxxwarn='-Wall -Wextra -Werror -Wshadow -Wpointer-arith -Wundef
-Wredundant-decls -Wnon-virtual-dtor'

rm -rf "$DAT_WORKDIR"
mkdir -p "$DAT_WORKDIR"
failures=0
checks=0

# check DESCRIPTION COMMAND...: run a compile, report it when it fails
check()
{
	what=$1
	shift
	checks=$((checks + 1))
	if ! "$@" >"$DAT_WORKDIR/out" 2>&1; then
		echo "FAIL: $what"
		echo "  $*"
		sed 's/^/  | /' "$DAT_WORKDIR/out"
		failures=$((failures + 1))
	fi
}

# Our headers must win over any installed copy, for every nested include.
own_headers()
{
	compiler=$1
	shift
	"$compiler" "$@" -I"$DAT_INCLUDEDIR" -M "$DAT_SRCDIR/dat_program.c" \
		>"$DAT_WORKDIR/deps"
	tr ' \\' '\n\n' <"$DAT_WORKDIR/deps" | grep 'dat2/' >"$DAT_WORKDIR/dat2" || true
	[ -s "$DAT_WORKDIR/dat2" ] || return 1
	! grep -v "^$DAT_INCLUDEDIR/dat2/" "$DAT_WORKDIR/dat2"
}

# header_units SUFFIX: one translation unit per header, each included twice
header_units()
{
	for h in $headers; do
		printf '#include <dat2/%s>\n#include <dat2/%s>\n' "$h" "$h" \
			>"$DAT_WORKDIR/${h%.h}.$1"
		# ISO C wants at least one declaration in a unit
		echo 'typedef int dat_header_check;' >>"$DAT_WORKDIR/${h%.h}.$1"
	done
}

case $lang in
c)
	check "our dat2/ headers are the ones used" own_headers "$CC"
	header_units c
	for std in c89 gnu89 c99 gnu99 c11 gnu11 c17; do
		case $std in
		c*) pedantic=-pedantic-errors ;;
		*) pedantic= ;;
		esac
		for h in $headers; do
			check "$h alone, -std=$std $pedantic" $CC -std=$std \
				$pedantic $cwarn -I"$DAT_INCLUDEDIR" -c \
				"$DAT_WORKDIR/${h%.h}.c" -o "$DAT_WORKDIR/h.o"
		done
	done
	# Extensions can be switched off, as in DAPL: the provider table
	# then ends before its extension slot.
	cat >"$DAT_WORKDIR/noext.c" <<'EOF'
#include <dat2/udat_config.h>
#undef DAT_EXTENSIONS
#include <dat2/udat.h>
#include <dat2/dat_registry.h>
typedef char dat_check_slots[sizeof(DAT_PROVIDER) == 80 * sizeof(void *) ?
				     1 : -1];
EOF
	check "DAT_EXTENSIONS off" $CC -std=c99 -pedantic-errors $cwarn \
		-I"$DAT_INCLUDEDIR" -c "$DAT_WORKDIR/noext.c" \
		-o "$DAT_WORKDIR/h.o"
	# the program needs C99 (DAT_OS_WAIT_PROXY_AGENT_NULL is a compound
	# literal); -D_GNU_SOURCE off, as a plain consumer builds
	for std in c99 gnu99 c11 gnu11; do
		case $std in
		c*) pedantic=-pedantic-errors ;;
		*) pedantic= ;;
		esac
		check "dat_program.c, -std=$std $pedantic" $CC -std=$std \
			$pedantic $cwarn -I"$DAT_INCLUDEDIR" -c \
			"$DAT_SRCDIR/dat_program.c" -o "$DAT_WORKDIR/p.o"
	done
	;;
c++)
	cxx=${CXX:-}
	if [ -z "$cxx" ]; then
		# prefer the C compiler's own family
		case $($CC --version 2>/dev/null | head -n 1) in
		*clang*) candidates='clang++ c++ g++' ;;
		*) candidates='g++ c++ clang++' ;;
		esac
		for c in $candidates; do
			if command -v "$c" >/dev/null 2>&1; then
				cxx=$c
				break
			fi
		done
	fi
	if [ -z "$cxx" ]; then
		echo "SKIP: no C++ compiler found (set CXX)" >&2
		rm -rf "$DAT_WORKDIR"
		exit 77
	fi
	check "our dat2/ headers are the ones used" own_headers "$cxx" -x c++
	header_units cc
	for std in c++98 c++11 c++17 c++20; do
		# ISO C++98 has no long long, which DAT_UVERYLONG needs
		case $std in
		c++98) pedantic= ;;
		*) pedantic=-pedantic-errors ;;
		esac
		for h in $headers; do
			check "$h alone, $cxx -std=$std $pedantic" $cxx \
				-std=$std $pedantic $cxxwarn -I"$DAT_INCLUDEDIR" \
				-c "$DAT_WORKDIR/${h%.h}.cc" -o "$DAT_WORKDIR/h.o"
		done
		check "dat_program.c as C++, -std=$std $pedantic" $cxx \
			-std=$std $pedantic $cxxwarn -I"$DAT_INCLUDEDIR" \
			-x c++ -c "$DAT_SRCDIR/dat_program.c" \
			-o "$DAT_WORKDIR/p.o"
	done
	;;
*)
	echo "usage: headers.sh c|c++" >&2
	exit 1
	;;
esac

echo "$checks compilations, $failures failed"
if [ $failures -ne 0 ]; then
	echo "(work files kept in $DAT_WORKDIR)"
	exit 1
fi
rm -rf "$DAT_WORKDIR"
