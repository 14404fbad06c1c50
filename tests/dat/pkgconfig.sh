#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# A DAT program recompiled unchanged against an installed OpenRDMA: the
# registry library, <dat2/*.h> and openrdma-dat2.pc are installed into a
# staging tree (make install DESTDIR=), examples/dat_pingpong.c is built
# with nothing but $(pkg-config --cflags --libs openrdma-dat2) from there,
# and runs on self0 with the installed library.
#
# Environment (set by the generated wrapper): CC, MAKE, DAT_BUILDDIR (the
# build tree), DAT_TOP_SRCDIR (the source tree), DAT_INFO (openrdma-info),
# DAT_LIBDIR and DAT_INCLUDEDIR (the configured install directories).
# Exit status: 0 passed, 1 failed, 77 skipped.

: "${CC:=cc}" "${MAKE:=make}"

skip() {
	echo "SKIP: $*"
	exit 77
}

fail() {
	echo "FAIL: $*"
	exit 1
}

command -v pkg-config >/dev/null ||
	skip "no pkg-config (apt-get install pkgconf)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/openrdma-dat-pkgconfig.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
dest=$tmp/root

# What building a DAT program needs: the headers, the .pc file and the
# registry library.  The build is complete already, so nothing is built;
# the provider is left out because libtool relinks it on installation,
# replacing the build tree's copy for a moment, under the feet of the
# tests that run beside this one.  Not a part of the make that runs the
# tests: none of its flags or jobserver.
MAKEFLAGS= MFLAGS= $MAKE -s -C "$DAT_BUILDDIR" DESTDIR="$dest" \
	lib_LTLIBRARIES=libopenrdma-dat2.la install-libLTLIBRARIES \
	install-pkgconfigDATA install-dat2includeHEADERS >"$tmp/install.log" 2>&1 || {
	cat "$tmp/install.log"
	fail "make install DESTDIR=$dest"
}
pcdir=$dest$DAT_LIBDIR/pkgconfig
[ -f "$pcdir/openrdma-dat2.pc" ] || fail "no $pcdir/openrdma-dat2.pc"
[ -f "$dest$DAT_INCLUDEDIR/dat2/udat.h" ] ||
	fail "no $DAT_INCLUDEDIR/dat2/udat.h installed"
if grep -n '@[a-z_]*@' "$pcdir/openrdma-dat2.pc"; then
	fail "openrdma-dat2.pc: template variables left unsubstituted"
fi

# The staging tree stands for the root: pkg-config prefixes the paths.
PKG_CONFIG_LIBDIR=$pcdir PKG_CONFIG_PATH= PKG_CONFIG_SYSROOT_DIR=$dest
export PKG_CONFIG_LIBDIR PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
flags=$(pkg-config --cflags --libs openrdma-dat2) ||
	fail "pkg-config --cflags --libs openrdma-dat2"
echo "pkg-config --cflags --libs openrdma-dat2: $flags"
# a sanitizer build's library needs the sanitizer's runtime in the program
# shellcheck disable=SC2086
$CC ${SAN_CFLAGS:-} -std=gnu11 -Wall -Wextra -Werror \
	-o "$tmp/dat_pingpong" "$DAT_TOP_SRCDIR/examples/dat_pingpong.c" $flags ||
	fail "dat_pingpong.c does not build with openrdma-dat2.pc's flags"

# The installed registry library loads the build tree's provider.
LD_LIBRARY_PATH=$DAT_BUILDDIR/.libs "$DAT_INFO" --dat-conf |
	sed "s|libopenrdma-dat.so.2|$DAT_BUILDDIR/.libs/libopenrdma-dat.so.2|" \
		>"$tmp/dat.conf" || fail "openrdma-info --dat-conf"
DAT_OVERRIDE=$tmp/dat.conf
LD_LIBRARY_PATH=$dest$DAT_LIBDIR:$DAT_BUILDDIR/.libs
export DAT_OVERRIDE LD_LIBRARY_PATH
lib=$(ldd "$tmp/dat_pingpong" | awk '/libopenrdma-dat2/ { print $3 }')
case $lib in
"$dest"/*) echo "runs with $lib" ;;
*) fail "dat_pingpong loads '$lib', not the installed library" ;;
esac
timeout 120 "$tmp/dat_pingpong" -P ofa-openrdma-self0 -l -n 100 -S 4096 ||
	fail "the installed dat_pingpong on self0"
echo "PASS: dat_pingpong built with pkg-config against the installed tree"
