# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# Turns `readelf --debug-dump=info` of one object into a canonical listing
# of the types it describes, one fact per line:
#
#   struct NAME size N                    record layout
#   member NAME.FIELD[.SUB] @OFFSET TYPE  every field, anonymous ones flattened
#   enum NAME size N ENCODING             enum storage
#   enumerator NAME = VALUE               every enumeration constant
#   typedef NAME = TYPE                   what a typedef finally stands for
#   function NAME TYPE                    from variables named abi_fn_NAME
#
# TYPE is canonical: typedefs resolved, qualifiers postfix ("char const*",
# "char* const"), records by tag, functions as fn(PARAMS)->RETURN.  Only
# names and layout survive, so two header sets that are binary compatible
# give the same lines whatever their text looks like.

function hexkey(s)
{
	sub(/^0x/, "", s)
	sub(/^0+/, "", s)
	return s == "" ? "0" : s
}

function attrval(line)
{
	sub(/^[^:]*: */, "", line)
	return line
}

# "(indirect string, offset: 0x2dd): name" or "(indexed string: 0x5): name"
function strval(v)
{
	if (v ~ /^\(/)
		sub(/^\([^)]*\): */, "", v)
	return v
}

# readelf prints some constants in hex: list them all in decimal.
function numval(v,    neg, d, i, n)
{
	if (v ~ /DW_OP_plus_uconst:/) {
		sub(/.*DW_OP_plus_uconst: */, "", v)
		sub(/\).*/, "", v)
	}
	sub(/[ \t].*/, "", v)
	if (v !~ /^-?0x/)
		return v
	neg = v ~ /^-/
	sub(/^-?0x/, "", v)
	n = 0
	for (i = 1; i <= length(v); i++) {
		d = index("0123456789abcdef", tolower(substr(v, i, 1))) - 1
		n = n * 16 + d
	}
	return sprintf("%s%.0f", neg ? "-" : "", n)
}

function kw(t)
{
	if (t == "DW_TAG_structure_type")
		return "struct"
	if (t == "DW_TAG_union_type")
		return "union"
	return "enum"
}

function is_record(t)
{
	return t == "DW_TAG_structure_type" || t == "DW_TAG_union_type"
}

# Canonical text of the type at DIE offset o.
function tstr(o,    t, s, n, i, k, d)
{
	if (o == "")
		return "void"
	t = tag[o]
	if (t == "DW_TAG_base_type")
		return name[o]
	if (t == "DW_TAG_typedef")
		return tstr(type[o])
	if (t == "DW_TAG_pointer_type")
		return tstr(type[o]) "*"
	if (t == "DW_TAG_const_type")
		return tstr(type[o]) " const"
	if (t == "DW_TAG_volatile_type")
		return tstr(type[o]) " volatile"
	if (t == "DW_TAG_array_type") {
		s = tstr(type[o])
		n = split(kids[o], k, " ")
		for (i = 1; i <= n; i++) {
			if (tag[k[i]] != "DW_TAG_subrange_type")
				continue
			if (count[k[i]] != "")
				d = count[k[i]]
			else if (ubound[k[i]] != "")
				d = ubound[k[i]] + 1
			else
				d = ""
			s = s "[" d "]"
		}
		return s
	}
	if (t == "DW_TAG_subroutine_type") {
		s = ""
		n = split(kids[o], k, " ")
		for (i = 1; i <= n; i++) {
			if (tag[k[i]] == "DW_TAG_formal_parameter")
				s = s (s == "" ? "" : ", ") tstr(type[k[i]])
			else if (tag[k[i]] == "DW_TAG_unspecified_parameters")
				s = s (s == "" ? "" : ", ") "..."
		}
		return "fn(" s ")->" tstr(type[o])
	}
	if (is_record(t) || t == "DW_TAG_enumeration_type") {
		if (name[o] != "")
			return kw(t) " " name[o]
		return kw(t) anon(o)
	}
	return "?" t
}

# An anonymous record spelled out: {field:TYPE@OFFSET ...}
function anon(o,    s, n, i, k)
{
	s = ""
	n = split(kids[o], k, " ")
	for (i = 1; i <= n; i++) {
		if (tag[k[i]] != "DW_TAG_member" && tag[k[i]] != "DW_TAG_enumerator")
			continue
		s = s (s == "" ? "" : " ") name[k[i]]
		if (tag[k[i]] == "DW_TAG_member")
			s = s ":" tstr(type[k[i]]) "@" (loc[k[i]] == "" ? 0 : loc[k[i]])
		else
			s = s "=" cval[k[i]]
	}
	return "{" s "}"
}

# Print the fields of record o under prefix, at byte offset base.
function members(o, prefix, base,    n, i, k, m, off, mt, path)
{
	n = split(kids[o], k, " ")
	for (i = 1; i <= n; i++) {
		m = k[i]
		if (tag[m] != "DW_TAG_member")
			continue
		off = base + (loc[m] == "" ? 0 : loc[m])
		mt = type[m]
		if (name[m] == "") {
			# an anonymous struct or union: its fields are ours
			members(mt, prefix, off)
			continue
		}
		path = prefix "." name[m]
		print "member " path " @" off " " tstr(mt)
		if (is_record(tag[mt]) && name[mt] == "")
			members(mt, path, off)
	}
}

/^ *<[0-9a-f]+><[0-9a-f]+>: Abbrev Number:/ {
	line = $0
	sub(/^ *</, "", line)
	depth = line
	sub(/>.*/, "", depth)
	sub(/^[0-9a-f]+></, "", line)
	cur = line
	sub(/>.*/, "", cur)
	cur = hexkey(cur)
	if ($0 ~ /Abbrev Number: 0 *$/) {
		cur = ""
		next
	}
	t = $0
	sub(/.*\(/, "", t)
	sub(/\).*/, "", t)
	tag[cur] = t
	order[++ndie] = cur
	lvl[cur] = depth + 0
	stack[depth + 0] = cur
	if (depth + 0 > 0) {
		p = stack[depth - 1]
		parent[cur] = p
		kids[p] = kids[p] (kids[p] == "" ? "" : " ") cur
	}
	next
}

cur != "" && /^ *<[0-9a-f]+> +DW_AT_/ {
	a = $0
	sub(/^ *<[0-9a-f]+> +/, "", a)
	attr = a
	sub(/[ :].*/, "", attr)
	v = attrval(a)
	if (attr == "DW_AT_name")
		name[cur] = strval(v)
	else if (attr == "DW_AT_byte_size")
		size[cur] = numval(v)
	else if (attr == "DW_AT_type") {
		sub(/^</, "", v)
		sub(/>.*/, "", v)
		type[cur] = hexkey(v)
	} else if (attr == "DW_AT_data_member_location")
		loc[cur] = numval(v)
	else if (attr == "DW_AT_const_value")
		cval[cur] = numval(v)
	else if (attr == "DW_AT_upper_bound")
		ubound[cur] = numval(v)
	else if (attr == "DW_AT_count")
		count[cur] = numval(v)
	else if (attr == "DW_AT_declaration")
		decl[cur] = 1
	else if (attr == "DW_AT_encoding") {
		sub(/^[0-9]+[ \t]*/, "", v)
		enc[cur] = v
	}
	next
}

END {
	for (j = 1; j <= ndie; j++) {
		o = order[j]
		t = tag[o]
		if (lvl[o] != 1)
			continue
		if (is_record(t) && name[o] != "") {
			if (decl[o]) {
				print kw(t) " " name[o] " incomplete"
				continue
			}
			print kw(t) " " name[o] " size " size[o]
			members(o, name[o], 0)
		} else if (t == "DW_TAG_enumeration_type") {
			nm = name[o] != "" ? name[o] : "<anonymous>"
			print "enum " nm " size " size[o] " " enc[o]
			n = split(kids[o], k, " ")
			for (i = 1; i <= n; i++)
				if (tag[k[i]] == "DW_TAG_enumerator")
					print "enumerator " name[k[i]] " = " cval[k[i]]
		} else if (t == "DW_TAG_typedef") {
			print "typedef " name[o] " = " tstr(type[o])
			# a record known only by its typedef name
			r = type[o]
			if (is_record(tag[r]) && name[r] == "") {
				print kw(tag[r]) " typedef:" name[o] " size " size[r]
				members(r, "typedef:" name[o], 0)
			}
		} else if (t == "DW_TAG_variable" && name[o] ~ /^abi_fn_/) {
			fn = name[o]
			sub(/^abi_fn_/, "", fn)
			s = tstr(type[o])
			sub(/\*$/, "", s)
			print "function " fn " " s
		}
	}
}
