/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * dat.conf: one entry per line, eight fields separated by blanks; '#'
 * starts a comment; a field may be double-quoted (then it may hold
 * blanks, and \" and \\ escapes):
 *
 *   <ia name> <[u|k]major.minor> <threadsafe|nonthreadsafe>
 *   <default|nondefault> <library> <id.major.minor> "<ia params>"
 *   "<platform params>"
 *
 * Lines that do not parse are kept with the reason, so that a failed
 * open can say what was wrong with the line the consumer meant.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry/dat/datreg.h"

#define FIELDS 8
#define LINE_MAX_LEN 4096

/* Splits line into fields; returns their number, or -1 on bad quoting. */
static int split(char *line, char **field, int max)
{
	char *p = line, *out;
	int n = 0;

	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
			p++;
		if (!*p || *p == '#')
			return n;
		if (n == max)
			return max + 1;
		if (*p != '"') {
			field[n++] = p;
			while (*p && !isspace((unsigned char)*p) && *p != '#')
				p++;
			if (*p == '#') {
				*p = '\0';
				return n;
			}
			if (*p)
				*p++ = '\0';
			continue;
		}
		/* quoted: unescape in place */
		out = field[n++] = ++p;
		while (*p && *p != '"') {
			if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
				p++;
			*out++ = *p++;
		}
		if (*p != '"')
			return -1;
		p++;
		*out = '\0';
	}
}

/* "u2.0": user or kernel API, major, minor. */
static bool api_version(const char *s, bool *kernel, DAT_UINT32 *major,
			DAT_UINT32 *minor)
{
	unsigned int a, b;
	int used = 0;

	if (*s != 'u' && *s != 'k')
		return false;
	if (sscanf(s + 1, "%u.%u%n", &a, &b, &used) != 2 || s[1 + used])
		return false;
	*kernel = *s == 'k';
	*major = a;
	*minor = b;
	return true;
}

static bool provider_version(const char *s)
{
	const char *dot = strchr(s, '.');
	unsigned int a, b;
	int used = 0;

	if (!dot || dot == s)
		return false;
	return sscanf(dot + 1, "%u.%u%n", &a, &b, &used) == 2 && !dot[1 + used];
}

static int bad_line(struct datreg_conf *conf, const char *origin, int line,
		    const char *name, const char *why)
{
	struct datreg_bad_line *b = calloc(1, sizeof(*b)), **pp;

	if (!b)
		return -ENOMEM;
	b->origin = origin;
	b->line = line;
	b->ia_name = name ? strdup(name) : NULL;
	b->why = strdup(why);
	for (pp = &conf->bad; *pp; pp = &(*pp)->next)
		;
	*pp = b;
	datreg_log(DATREG_DBG_SR, "%s:%d: entry skipped: %s\n", origin, line,
		   why);
	return 0;
}

static void entry_free(struct datreg_entry *e)
{
	free(e->lib_path);
	free(e->provider_version);
	free(e->ia_params);
	free(e->platform_params);
	free(e->load_error);
	free(e);
}

static int entry_add(struct datreg_conf *conf, const char *origin, int line,
		     char **f)
{
	struct datreg_entry *e, **pp;
	char why[160];
	bool kernel;
	DAT_UINT32 major, minor;

	if (strlen(f[0]) >= DAT_NAME_MAX_LENGTH)
		return bad_line(conf, origin, line, NULL,
				"IA name of 256 characters or more");
	if (!api_version(f[1], &kernel, &major, &minor)) {
		snprintf(why, sizeof(why),
			 "API version \"%.40s\" is not [u|k]<major>.<minor>",
			 f[1]);
		return bad_line(conf, origin, line, f[0], why);
	}
	/* prefix matches, as DAPL's parser does: "nonthreadsafe" first */
	if (strncmp(f[2], "nonthreadsafe", 13) &&
	    strncmp(f[2], "threadsafe", 10)) {
		snprintf(why, sizeof(why),
			 "thread safety \"%.40s\" is neither threadsafe nor "
			 "nonthreadsafe",
			 f[2]);
		return bad_line(conf, origin, line, f[0], why);
	}
	if (strncmp(f[3], "nondefault", 10) && strncmp(f[3], "default", 7)) {
		snprintf(why, sizeof(why),
			 "\"%.40s\" is neither default nor nondefault", f[3]);
		return bad_line(conf, origin, line, f[0], why);
	}
	if (!provider_version(f[5])) {
		snprintf(
			why, sizeof(why),
			"provider version \"%.40s\" is not <id>.<major>.<minor>",
			f[5]);
		return bad_line(conf, origin, line, f[0], why);
	}

	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	snprintf(e->info.ia_name, sizeof(e->info.ia_name), "%s", f[0]);
	e->info.dapl_version_major = major;
	e->info.dapl_version_minor = minor;
	e->info.is_thread_safe =
		strncmp(f[2], "nonthreadsafe", 13) ? DAT_TRUE : DAT_FALSE;
	e->is_default = !strncmp(f[3], "default", 7);
	e->kernel = kernel;
	e->lib_path = strdup(f[4]);
	e->provider_version = strdup(f[5]);
	e->ia_params = strdup(f[6]);
	e->platform_params = strdup(f[7]);
	e->origin = origin;
	e->line = line;
	if (!e->lib_path || !e->provider_version || !e->ia_params ||
	    !e->platform_params) {
		entry_free(e);
		return -ENOMEM;
	}
	for (pp = &conf->entries; *pp; pp = &(*pp)->next)
		;
	*pp = e;
	datreg_log(DATREG_DBG_SR, "%s:%d: entry %s (%s)\n", origin, line,
		   e->info.ia_name, e->lib_path);
	return 0;
}

int datreg_conf_read(const char *path, struct datreg_conf *conf)
{
	char line[LINE_MAX_LEN], copy[LINE_MAX_LEN], why[64];
	char *f[FIELDS + 1];
	int n, lineno = 0, ret = 0;
	FILE *fp;

	conf->path = strdup(path);
	if (!conf->path)
		return -ENOMEM;
	fp = fopen(path, "re");
	if (!fp) {
		ret = -errno;
		conf->open_error = strdup(strerror(errno));
		return ret;
	}
	while (fgets(line, sizeof(line), fp)) {
		lineno++;
		memcpy(copy, line, sizeof(line));
		n = split(copy, f, FIELDS);
		if (!n)
			continue;
		if (n < 0)
			ret = bad_line(conf, conf->path, lineno, f[0],
				       "unterminated quote");
		else if (n != FIELDS) {
			snprintf(why, sizeof(why), "%s fields, not %d",
				 n > FIELDS ? "more than 8" :
				 n == 7	    ? "7" :
					      "fewer than 7",
				 FIELDS);
			ret = bad_line(conf, conf->path, lineno, f[0], why);
		} else {
			ret = entry_add(conf, conf->path, lineno, f);
		}
		if (ret)
			break;
	}
	fclose(fp);
	return ret;
}

void datreg_conf_free(struct datreg_conf *conf)
{
	struct datreg_entry *e, *enext;
	struct datreg_bad_line *b, *bnext;

	for (e = conf->entries; e; e = enext) {
		enext = e->next;
		entry_free(e);
	}
	for (b = conf->bad; b; b = bnext) {
		bnext = b->next;
		free(b->ia_name);
		free(b->why);
		free(b);
	}
	free(conf->path);
	free(conf->open_error);
	memset(conf, 0, sizeof(*conf));
}
