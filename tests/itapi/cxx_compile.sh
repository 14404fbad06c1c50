#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# Compile checks of <it_api.h> that the C test program cannot make: as C++
# with every version binding, as C99/C11 with clang (when present) and the
# project's warnings, and the mistakes the header must refuse to build.
# Needs no library: everything is -fsyntax-only.  Exits 77 (skipped) when
# no C++ compiler is installed.

srcdir=${srcdir:-.}
inc="$srcdir/include"
cxx_src="$srcdir/tests/itapi/itapi_cxx.cc"
cxx=${CXX:-g++}
cc=${CC:-cc}
failed=0

if ! command -v "$cxx" >/dev/null 2>&1; then
	echo "SKIP: no C++ compiler ('$cxx' not found; set CXX)"
	exit 77
fi

tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

# Runs a compile that must succeed.
pass() {
	desc=$1
	shift
	if "$@" >"$tmp/err" 2>&1; then
		echo "ok: $desc"
	else
		echo "FAIL: $desc: $*"
		cat "$tmp/err"
		failed=1
	fi
}

# Runs a compile that must be refused with a diagnostic matching $2.
refuse() {
	desc=$1
	pattern=$2
	shift 2
	if "$@" >"$tmp/err" 2>&1; then
		echo "FAIL: $desc was accepted: $*"
		failed=1
	elif ! grep -q -e "$pattern" "$tmp/err"; then
		echo "FAIL: $desc refused for another reason: $*"
		cat "$tmp/err"
		failed=1
	else
		echo "ok: refuses $desc"
	fi
}

# "-U" of a binding that is not set stands for "no binding selected".
bindings="-UITAPI_ENABLE_V21_BINDINGS -DITAPI_ENABLE_V20_BINDINGS -DITAPI_ENABLE_V21_BINDINGS"
cxxflags="-fsyntax-only -Wall -Wextra -Werror -pedantic -I$inc"
cwarn="-fsyntax-only -Wall -Wextra -Werror -pedantic -Wundef -Wshadow \
-Wstrict-prototypes -Wmissing-prototypes -Wpointer-arith -Wvla \
-Wwrite-strings -Wformat=2 -Wconversion -I$inc"

cxx_compilers=$cxx
if [ "$cxx" != clang++ ] && command -v clang++ >/dev/null 2>&1; then
	cxx_compilers="$cxx_compilers clang++"
fi
for c in $cxx_compilers; do
	for std in c++98 c++11 c++17; do
		for b in $bindings; do
			pass "$c -std=$std $b" \
				"$c" -x c++ -std=$std $b $cxxflags "$cxx_src"
		done
	done
done

printf '#include <it_api.h>\n' >"$tmp/include.c"
c_compilers=
for c in "$cc" clang; do
	if command -v "$c" >/dev/null 2>&1; then
		c_compilers="$c_compilers $c"
	else
		echo "note: C compiler '$c' not found, not checked"
	fi
done
for c in $c_compilers; do
	for std in c99 c11; do
		for b in $bindings; do
			pass "$c -std=$std $b" \
				"$c" -x c -std=$std $b $cwarn "$tmp/include.c"
		done
	done
done

# Mistakes that must not build, in C and in C++, each next to the
# corrected program that must build, so that a refusal proves something.
cat >"$tmp/handle.c" <<'PROG'
#include <it_api.h>
void f(it_ep_handle_t ep);
void f(it_ep_handle_t ep) { HANDLE_TYPE h = ep; (void)h; }
PROG
cat >"$tmp/member.c" <<'PROG'
#include <it_api.h>
int f(it_rmr_param_t *p);
int f(it_rmr_param_t *p) { return p->MEMBER; }
PROG
for lang in c c++; do
	c=$cc
	[ $lang = c++ ] && c=$cxx
	flags="-x $lang -fsyntax-only -Wall -Werror -I$inc"
	refuse "both v2.0 and v2.1 bindings ($lang)" "at most one" \
		"$c" $flags -DITAPI_ENABLE_V20_BINDINGS \
		-DITAPI_ENABLE_V21_BINDINGS "$tmp/include.c"
	pass "the same handle type ($lang)" \
		"$c" $flags -DHANDLE_TYPE=it_ep_handle_t "$tmp/handle.c"
	refuse "one handle type for another ($lang)" "it_pz_handle" \
		"$c" $flags -DHANDLE_TYPE=it_pz_handle_t "$tmp/handle.c"
	pass "the v1.0 member name under v1.0 bindings ($lang)" \
		"$c" $flags -DMEMBER=bound "$tmp/member.c"
	refuse "the v2.0 member name under v1.0 bindings ($lang)" "linked" \
		"$c" $flags -DMEMBER=linked "$tmp/member.c"
	pass "the v2.0 member name under v2.0 bindings ($lang)" \
		"$c" $flags -DMEMBER=linked -DITAPI_ENABLE_V20_BINDINGS \
		"$tmp/member.c"
done

exit $failed
