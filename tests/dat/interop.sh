# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# interop.sh
#
# Builds interop.c (a DAT program) and interop_provider.c (a DAT provider
# library) against OpenRDMA's DAT headers, links the program with the
# system's libdat2 (DAPL), points libdat2 at the provider with a dat.conf
# of its own (DAT_OVERRIDE), and runs it: the calls pass through DAPL's
# registry and dispatch code, compiled with DAPL's headers, in both
# directions.  Also links dat_program.c with libdat2.  Skipped, with the
# reason, when libdat2 is not installed.
#
# Environment (set by the generated wrappers): CC, DAT_SRCDIR (this
# folder), DAT_INCLUDEDIR (our include/); DAT_WORKDIR (scratch space,
# removed on success) is optional.
# Exit status: 0 pass, 1 fail, 77 skipped (reason on stderr).

set -eu

: "${CC:=cc}"
: "${DAT_SRCDIR:=$(cd "$(dirname "$0")" && pwd)}"
: "${DAT_INCLUDEDIR:=$DAT_SRCDIR/../../include}"
: "${DAT_WORKDIR:=$(mktemp -d "${TMPDIR:-/tmp}/dat-interop.XXXXXX")}"

cflags="-std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter
-Wmissing-prototypes -Wstrict-prototypes -Wshadow -Wpointer-arith
-Wformat=2 -Wundef -Wvla -Wwrite-strings -I$DAT_INCLUDEDIR -I$DAT_SRCDIR"

mkdir -p "$DAT_WORKDIR"
cd "$DAT_WORKDIR"

fail()
{
	echo "FAIL: $*" >&2
	echo "(work files kept in $DAT_WORKDIR)" >&2
	exit 1
}

# Is there a libdat2 to link with at all?
printf 'char dat_strerror(void);\nint main(void) { return !dat_strerror; }\n' \
	>probe.c
if ! $CC probe.c -o probe -ldat2 >probe.log 2>&1; then
	echo "SKIP: no libdat2 to link with (Debian: apt-get install libdapl-dev)" >&2
	cd / && rm -rf "$DAT_WORKDIR"
	exit 77
fi

$CC $cflags -fPIC -shared "$DAT_SRCDIR/interop_provider.c" \
	-o libinterop-provider.so || fail "the provider did not build"
$CC $cflags "$DAT_SRCDIR/interop.c" -o interop -ldat2 ||
	fail "the program did not build"
# Every call a dtest-style program makes resolves to a libdat2 export.
$CC $cflags "$DAT_SRCDIR/dat_program.c" -o dat_program -ldat2 ||
	fail "dat_program.c did not link with libdat2"
echo "ok - dat_program.c links with libdat2"

# One entry, the eight fields libdat2 wants; the library by absolute path.
printf 'openrdma-interop u2.0 nonthreadsafe default %s dapl.2.0 "%s" ""\n' \
	"$DAT_WORKDIR/libinterop-provider.so" "interop0 1" >dat.conf

status=0
DAT_OVERRIDE=$DAT_WORKDIR/dat.conf ./interop >interop.out 2>&1 || status=$?
cat interop.out
[ $status -eq 0 ] || fail "interop exited with status $status"
grep -q '^ok - dat_ia_close' interop.out || fail "interop stopped early"
cd / && rm -rf "$DAT_WORKDIR"
