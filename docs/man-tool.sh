#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# The man-page helpers of docs/Makefile.inc.  Pages are docs/man/NAME.S.md
# with pandoc front matter and a NAME section "name, name - summary".
#
#   man-tool.sh aliases PAGE.md...
#	Prints "ALIAS.S PAGE.S" for every name in a page's NAME section other
#	than the page's own, for the ".so" alias pages.  A name claimed by
#	two pages, or that is a page itself, is skipped with a warning.
#
#   man-tool.sh check-list DIR LISTED...
#	Fails if a DIR/*.md is missing from LISTED, a LISTED page does not
#	exist, or a page's front matter or NAME section is malformed.

set -eu

aliases() {
	awk '
	function page_of(path, p) {
		p = path
		sub(/.*\//, "", p)
		sub(/\.md$/, "", p)
		return p
	}
	function warn(msg) {
		printf "man-tool: %s\n", msg > "/dev/stderr"
	}
	function flush(p, sec, own, idx, names, n, i, nm, alias, list) {
		p = page_of(file)
		if (!match(p, /\.[^.]+$/)) {
			warn(file ": no section in the file name")
			return
		}
		sec = substr(p, RSTART + 1)
		own = substr(p, 1, RSTART - 1)
		idx = index(text, " - ")
		if (idx == 0) {
			warn(file ": no \"name - summary\" line in NAME")
			return
		}
		names = substr(text, 1, idx - 1)
		gsub(/[\\*]/, "", names)
		n = split(names, list, ",")
		for (i = 1; i <= n; i++) {
			nm = list[i]
			gsub(/^[ \t]+|[ \t]+$/, "", nm)
			if (nm == own || nm == "")
				continue
			alias = nm "." sec
			if (nm !~ /^[A-Za-z0-9_-]+$/) {
				warn(file ": bad name \"" nm "\" in NAME")
			} else if (alias in pages) {
				warn(file ": " alias " is a page of its own")
			} else if (alias in seen) {
				warn(file ": " alias " already named by " seen[alias])
			} else {
				seen[alias] = p
				print alias, p
			}
		}
	}
	BEGIN {
		for (i = 1; i < ARGC; i++)
			pages[page_of(ARGV[i])] = 1
	}
	FNR == 1 {
		if (file != "")
			flush()
		file = FILENAME
		state = 0
		text = ""
	}
	state == 0 && /^#[ \t]+NAME[ \t]*$/ { state = 1; next }
	state == 1 && /^#/ { state = 2 }
	state == 1 && NF == 0 { if (text != "") state = 2; next }
	state == 1 { text = text " " $0 }
	END {
		if (file != "")
			flush()
	}
	' "$@"
}

# Front matter: "---" first, then title, section (equal to the file name's),
# header, footer and date before the closing "---"; then a NAME section.
check_page() {
	awk -v want="$2" '
	NR == 1 && $0 != "---" { print FILENAME ": no front matter"; bad = 1; exit }
	NR > 1 && fm == 0 && $0 == "---" { fm = 1; next }
	fm == 0 && /^[a-z]+:/ {
		key = $0; sub(/:.*/, "", key)
		val = $0; sub(/^[a-z]+:[ \t]*/, "", val)
		seen[key] = val
	}
	fm == 1 && /^#[ \t]+NAME[ \t]*$/ { name = 1 }
	END {
		if (bad)
			exit 1
		if (fm == 0) { print FILENAME ": front matter not closed"; exit 1 }
		n = split("title section header footer date", keys, " ")
		for (i = 1; i <= n; i++)
			if (!(keys[i] in seen)) {
				print FILENAME ": front matter lacks " keys[i]
				bad = 1
			}
		if (("section" in seen) && seen["section"] != want) {
			print FILENAME ": section " seen["section"] \
				" does not match the file name (" want ")"
			bad = 1
		}
		if (!name) { print FILENAME ": no NAME section"; bad = 1 }
		exit bad
	}
	' "$1"
}

check_list() {
	dir=$1
	shift
	listed=" $* "
	status=0
	for f in "$dir"/*.md; do
		[ -e "$f" ] || continue
		case $listed in
		*" docs/man/${f##*/} "*) ;;
		*)
			echo "docs/man/${f##*/}: not listed in OPENRDMA_MAN_MD (docs/Makefile.inc)"
			status=1
			;;
		esac
	done
	for p in "$@"; do
		f=$dir/${p##*/}
		if [ ! -f "$f" ]; then
			echo "$p: listed in docs/Makefile.inc but missing"
			status=1
			continue
		fi
		sec=${p%.md}
		check_page "$f" "${sec##*.}" || status=1
	done
	return $status
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case $cmd in
aliases) aliases "$@" ;;
check-list) check_list "$@" ;;
*)
	echo "usage: $0 aliases PAGE.md... | check-list DIR LISTED..." >&2
	exit 2
	;;
esac
