/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * openrdma-info's output: nested objects and arrays of named values, as
 * JSON or as indented "name: value" text.
 */
#ifndef REGISTRY_INFO_OUT_H
#define REGISTRY_INFO_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define INFO_OUT_DEPTH 16

struct info_out {
	FILE *fp;
	bool json;
	int depth;
	int margin; /* text: extra indentation levels */
	bool first[INFO_OUT_DEPTH]; /* nothing written yet at that depth */
	bool array[INFO_OUT_DEPTH];
};

void info_out_init(struct info_out *o, FILE *fp, bool json);
/* Ends the output with a newline. */
void info_out_finish(struct info_out *o);

/*
 * Opens an object ({) or array ([) named key; key is NULL inside arrays.
 * In text, an object inside an array is set apart by a blank line.
 */
void info_out_open(struct info_out *o, const char *key, char bracket);
void info_out_close(struct info_out *o);

/* Named values; a NULL string is JSON null and is left out of text. */
void info_out_str(struct info_out *o, const char *key, const char *value);
void info_out_int(struct info_out *o, const char *key, int64_t value);
void info_out_uint(struct info_out *o, const char *key, uint64_t value);
/* As a "0x..." string, since JSON numbers lose 64-bit precision. */
void info_out_hex(struct info_out *o, const char *key, uint64_t value);
void info_out_bool(struct info_out *o, const char *key, bool value);

/* Writes s as a JSON string, quotes included. */
void info_out_json_string(FILE *fp, const char *s);

#endif /* REGISTRY_INFO_OUT_H */
