/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * openrdma-info's output, JSON or text, from the same calls.
 */
#include "config.h"

#include <inttypes.h>
#include <string.h>

#include "registry/info_out.h"

void info_out_json_string(FILE *fp, const char *s)
{
	const unsigned char *p;

	fputc('"', fp);
	for (p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", fp);
			break;
		case '\\':
			fputs("\\\\", fp);
			break;
		case '\b':
			fputs("\\b", fp);
			break;
		case '\f':
			fputs("\\f", fp);
			break;
		case '\n':
			fputs("\\n", fp);
			break;
		case '\r':
			fputs("\\r", fp);
			break;
		case '\t':
			fputs("\\t", fp);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(fp, "\\u%04x", *p);
			else
				fputc(*p, fp);
		}
	}
	fputc('"', fp);
}

/* Text is for terminals: no control characters from device strings. */
static void text_string(FILE *fp, const char *s)
{
	const unsigned char *p;

	for (p = (const unsigned char *)s; *p; p++)
		fputc(*p < 0x20 || *p == 0x7f ? '?' : *p, fp);
	fputc('\n', fp);
}

void info_out_init(struct info_out *o, FILE *fp, bool json)
{
	memset(o, 0, sizeof(*o));
	o->fp = fp;
	o->json = json;
	o->first[0] = true;
}

static void indent(struct info_out *o, int depth)
{
	int i;

	for (i = 0; i < depth + (o->json ? 0 : o->margin); i++)
		fputs("  ", o->fp);
}

/* Starts one member: separator, indentation and, in JSON, the key. */
static void member(struct info_out *o, const char *key)
{
	if (o->json) {
		if (!o->first[o->depth])
			fputc(',', o->fp);
		if (o->depth)
			fputc('\n', o->fp);
		indent(o, o->depth);
		if (key && !o->array[o->depth]) {
			info_out_json_string(o->fp, key);
			fputs(": ", o->fp);
		}
	} else {
		/* The outermost object is implicit in text. */
		indent(o, o->depth > 0 ? o->depth - 1 : 0);
		if (key)
			fprintf(o->fp, "%s: ", key);
	}
	o->first[o->depth] = false;
}

void info_out_open(struct info_out *o, const char *key, char bracket)
{
	if (o->depth + 1 >= INFO_OUT_DEPTH)
		return;
	if (o->json) {
		member(o, key);
		fputc(bracket, o->fp);
	} else if (o->depth > 0 && o->array[o->depth]) {
		if (!o->first[o->depth])
			fputc('\n', o->fp);
		o->first[o->depth] = false;
	} else if (o->depth > 0 && key) {
		indent(o, o->depth - 1);
		fprintf(o->fp, "%s:\n", key);
	}
	o->depth++;
	o->first[o->depth] = true;
	o->array[o->depth] = bracket == '[';
}

void info_out_close(struct info_out *o)
{
	if (!o->depth)
		return;
	o->depth--;
	if (!o->json)
		return;
	if (!o->first[o->depth + 1]) {
		fputc('\n', o->fp);
		indent(o, o->depth);
	}
	fputc(o->array[o->depth + 1] ? ']' : '}', o->fp);
}

void info_out_finish(struct info_out *o)
{
	while (o->depth)
		info_out_close(o);
	if (o->json)
		fputc('\n', o->fp);
	fflush(o->fp);
}

void info_out_str(struct info_out *o, const char *key, const char *value)
{
	if (!o->json && !value)
		return;
	member(o, key);
	if (!o->json)
		text_string(o->fp, value);
	else if (value)
		info_out_json_string(o->fp, value);
	else
		fputs("null", o->fp);
}

void info_out_int(struct info_out *o, const char *key, int64_t value)
{
	member(o, key);
	fprintf(o->fp, "%" PRId64 "%s", value, o->json ? "" : "\n");
}

void info_out_uint(struct info_out *o, const char *key, uint64_t value)
{
	member(o, key);
	fprintf(o->fp, "%" PRIu64 "%s", value, o->json ? "" : "\n");
}

void info_out_hex(struct info_out *o, const char *key, uint64_t value)
{
	member(o, key);
	fprintf(o->fp, o->json ? "\"0x%" PRIx64 "\"" : "0x%" PRIx64 "\n",
		value);
}

void info_out_bool(struct info_out *o, const char *key, bool value)
{
	member(o, key);
	fprintf(o->fp, "%s%s", value ? "true" : "false", o->json ? "" : "\n");
}
