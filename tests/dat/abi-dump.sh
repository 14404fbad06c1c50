# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# abi-dump.sh CC INCLUDEDIR WORKDIR AWKDIR
#
# Prints the canonical ABI listing of the DAT 2.0 headers in
# INCLUDEDIR/dat2: every record size and field offset, every enumeration
# constant, typedef and function type (from the compiler's debug
# information, see abi-dwarf.awk), and every macro: the value of each
# constant, the expansion of each function-like macro.  Two header sets
# are compatible when their listings are equal.  Nothing here knows which
# names the headers define: the listing is derived from what they declare,
# minus what the system headers alone declare.

set -eu

cc=$1
inc=$2
work=$3
awkdir=$(cd "$4" && pwd)

mkdir -p "$work"
cd "$work"

# Macros whose body is not a value: compared by their expansion instead.
nonvalue='DAT_EXPORT DAT_RMR_BIND_COMPLETION_STATUS DAT_OS_WAIT_PROXY_AGENT_NULL
max_rdma_read_per_ep max_mtu_size dat_ib_post_recv_ud dat_query_counters
dat_print_counters DAT_PROVIDER_INIT_FUNC_NAME DAT_PROVIDER_FINI_FUNC_NAME
DAT_IA_HA_RELATED DAT_IA_FIELD_IA_MAX_DTO_PER_OP'
nonvalue=$(echo $nonvalue)

# The system headers either set of DAT headers pulls in.
cat >sys.h <<'EOF'
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
EOF

# All headers, in the order DAT programs include them.
cat >dat.h <<'EOF'
#include "sys.h"
#include <dat2/udat.h>
#include <dat2/dat_registry.h>
#include <dat2/dat_ib_extensions.h>
#include <dat2/dat_vendor_specific.h>
#include <dat2/udat_vendor_specific.h>
EOF

cflags="-std=gnu11 -I$inc"

# ---------------------------------------------------------------- types

# Function names: whatever the preprocessed headers declare as
# "DAT_RETURN dat_...(" (prototypes and static inline functions).
printf '#include "dat.h"\n' >decl.c
$cc $cflags -E -P decl.c >decl.i
awk '
	{ s = s " " $0 }
	END {
		while (match(s, /DAT_RETURN[ \t]+dat_[a-z0-9_]+[ \t]*\(/)) {
			f = substr(s, RSTART, RLENGTH)
			sub(/^DAT_RETURN[ \t]+/, "", f)
			sub(/[ \t]*\($/, "", f)
			print f
			s = substr(s, RSTART + RLENGTH)
		}
	}' decl.i >functions.unsorted
LC_ALL=C sort -u functions.unsorted >functions

{
	printf '#include "dat.h"\n'
	while read -r f; do
		printf '__typeof__(%s) *abi_fn_%s;\n' "$f" "$f"
	done <functions
} >types.c
printf '#include "sys.h"\n' >systypes.c

# No pipes: every step's failure must stop the script.
dwarf()
{
	$cc $cflags -g -O0 -fno-eliminate-unused-debug-types -c "$1.c" \
		-o "$1.o"
	readelf --debug-dump=info "$1.o" >"$1.dwarf"
	awk -f "$awkdir/abi-dwarf.awk" "$1.dwarf" >"$1.unsorted"
	LC_ALL=C sort -u "$1.unsorted" >"$1.list"
}
dwarf types
dwarf systypes
if ! grep -q '^struct dat_provider size ' types.list; then
	echo "abi-dump.sh: no DAT_PROVIDER in the debug information" >&2
	exit 1
fi

# ---------------------------------------------------------------- macros

printf '#include "dat.h"\n' >macros.c
$cc $cflags -dM -E macros.c >macros.i
LC_ALL=C sort macros.i >macros.all
printf '#include "sys.h"\n' >sysmacros.c
$cc $cflags -dM -E sysmacros.c >sysmacros.i
LC_ALL=C sort sysmacros.i >sysmacros.all
LC_ALL=C comm -23 macros.all sysmacros.all >macros.dat

# Sort "#define NAME body" and "#define NAME(params) body" lines.
awk -v nonvalue="$nonvalue" '
	BEGIN {
		n = split(nonvalue, a, /[ \t\n]+/)
		for (i = 1; i <= n; i++)
			if (a[i] != "")
				nv[a[i]] = 1
		printf "" >"fn.names"
		printf "" >"empty.names"
		printf "" >"text.names"
		printf "" >"values.names"
	}
	{
		line = $0
		sub(/^#define[ \t]+/, "", line)
		if (match(line, /^[A-Za-z_][A-Za-z0-9_]*\([^)]*\)/)) {
			sig = substr(line, 1, RLENGTH)
			gsub(/[ \t]/, "", sig)
			print sig >"fn.names"
			next
		}
		name = line
		sub(/[ \t].*/, "", name)
		body = substr(line, length(name) + 1)
		gsub(/[ \t]/, "", body)
		if (body == "")
			print name >"empty.names"
		else if (name in nv)
			print name >"text.names"
		else
			print name >"values.names"
	}' macros.dat

# Constants: print type and value, chosen by _Generic.  A macro of a type
# not listed here fails to compile: classify it above.
{
	cat <<'EOF'
#include "dat.h"
#include <stdint.h>

static void pr_s(const char *n, const char *t, const char *v)
{
	printf("macro %s %s \"%s\"\n", n, t, v);
}

static void pr_p(const char *n, const char *t, const void *v)
{
	printf("macro %s %s %#lx\n", n, t, (unsigned long)(uintptr_t)v);
}

static void pr_i(const char *n, const char *t, long long v)
{
	printf("macro %s %s %lld\n", n, t, v);
}

static void pr_u(const char *n, const char *t, unsigned long long v)
{
	printf("macro %s %s %#llx\n", n, t, v);
}

#define TNAME(x)                                                         \
	_Generic((x), char *: "string", const char *: "string",           \
		 void *: "pointer", const void *: "pointer",              \
		 signed char: "schar", char: "char", short: "short",      \
		 int: "int", long: "long", long long: "llong",            \
		 unsigned char: "uchar", unsigned short: "ushort",        \
		 unsigned int: "uint", unsigned long: "ulong",            \
		 unsigned long long: "ullong", _Bool: "bool")
#define PR(n)                                                            \
	_Generic((n), char *: pr_s, const char *: pr_s, void *: pr_p,     \
		 const void *: pr_p, signed char: pr_i, char: pr_i,       \
		 short: pr_i, int: pr_i, long: pr_i, long long: pr_i,     \
		 unsigned char: pr_u, unsigned short: pr_u,               \
		 unsigned int: pr_u, unsigned long: pr_u,                 \
		 unsigned long long: pr_u, _Bool: pr_u)(#n, TNAME(n), (n))

int main(void)
{
EOF
	while read -r n; do
		printf '\tPR(%s);\n' "$n"
	done <values.names
	printf '\treturn 0;\n}\n'
} >values.c
$cc $cflags -o values values.c
./values >values.list

# Everything else by its expansion, spaces removed and parentheses around
# a lone argument or the whole body dropped: (A1) -> A1.
{
	printf '#include "dat.h"\n'
	while read -r n; do
		printf '"text %s" = %s\n' "$n" "$n"
	done <text.names
	while read -r sig; do
		n=${sig%%(*}
		params=${sig#*(}
		params=${params%)}
		args=$(echo "$params" | awk -F, '{
			for (i = 1; i <= NF; i++)
				printf "%sA%d", (i > 1 ? "," : ""), i
		}')
		printf '"fmacro %s(%s)" = %s(%s)\n' "$n" "$args" "$n" "$args"
	done <fn.names
} >text.c
$cc $cflags -E -P text.c >text.i
awk '
	/^"(text|fmacro) / {
		label = $0
		sub(/^"/, "", label)
		sub(/" = .*/, "", label)
		body = $0
		sub(/^"[^"]*" = /, "", body)
		gsub(/[ \t]/, "", body)
		do {
			prev = body
			body = gensub_args(body)
		} while (body != prev)
		if (body ~ /^\(.*\)$/ && balanced(substr(body, 2, length(body) - 2)))
			body = substr(body, 2, length(body) - 2)
		print label " " body
	}
	function gensub_args(s,    out) {
		out = ""
		while (match(s, /\(A[0-9]+\)/)) {
			out = out substr(s, 1, RSTART - 1) \
				substr(s, RSTART + 1, RLENGTH - 2)
			s = substr(s, RSTART + RLENGTH)
		}
		return out s
	}
	function balanced(s,    i, d, c) {
		d = 0
		for (i = 1; i <= length(s); i++) {
			c = substr(s, i, 1)
			if (c == "(")
				d++
			else if (c == ")" && --d < 0)
				return 0
		}
		return d == 0
	}' text.i >text.list

sed 's/^/macro /; s/$/ empty/' empty.names >empty.list

# ---------------------------------------------------------------- listing

LC_ALL=C sort -u types.list values.list text.list empty.list >all.list
LC_ALL=C comm -23 all.list systypes.list
