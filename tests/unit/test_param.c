/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Declared parameters: parsing of every type, the lookup order
 * (environment, config file, default), bad values, transport scopes,
 * openrdma_param_foreach, and config-file errors that must not be fatal.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <openrdma/param.h>

#include "core/param.h"

static void env_set(const char *name, const char *value)
{
	cr_assert_eq(setenv(name, value, 1), 0);
}

/* The test's temporary files; removed after the test, pass or fail. */
static char *tmp_files[8];
static int num_tmp_files;

static char *tmpfile_make(void)
{
	char *path = strdup("/tmp/openrdma-test-XXXXXX");
	int fd;

	cr_assert_not_null(path);
	cr_assert_lt(num_tmp_files, 8);
	fd = mkstemp(path);
	cr_assert_geq(fd, 0, "mkstemp: %s", strerror(errno));
	close(fd);
	tmp_files[num_tmp_files++] = path;
	return path;
}

static void tmp_cleanup(void)
{
	while (num_tmp_files)
		unlink(tmp_files[--num_tmp_files]);
}

/* Writes a config file, points OPENRDMA_CONFIG at it; returns its path. */
static char *config_make(const char *text)
{
	char *path = tmpfile_make();
	FILE *fp = fopen(path, "w");

	cr_assert_not_null(fp);
	fputs(text, fp);
	cr_assert_eq(fclose(fp), 0);
	env_set("OPENRDMA_CONFIG", path);
	return path;
}

/* Sends the log to a file of the test's own; returns its path. */
static char *log_capture(void)
{
	char *path = tmpfile_make();

	env_set("OPENRDMA_LOG_FILE", path);
	env_set("OPENRDMA_LOG_LEVEL", "warn");
	return path;
}

static char *file_slurp(const char *path)
{
	static char buf[16384];
	FILE *fp = fopen(path, "r");
	size_t n;

	cr_assert_not_null(fp);
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	return buf;
}

static void no_config(void)
{
	env_set("OPENRDMA_CONFIG", "/dev/null");
}

/* ------------------------------------------------------------------ */
/* Parsers                                                            */
/* ------------------------------------------------------------------ */

TestSuite(param, .fini = tmp_cleanup);

Test(param, parse_bool)
{
	static const char *const yes[] = { "1",	 "y",  "Y",    "yes",  "YES",
					   "on", "On", "true", "TRUE", " 1 " };
	static const char *const no[] = { "0",	"n",   "N",	"no",
					  "NO", "off", "false", "\tfalse\n" };
	static const char *const bad[] = { "",	 " ",	"2",	  "yess", "tru",
					   "-1", "on1", "enable", "1 0" };
	bool v;
	size_t i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		v = false;
		cr_assert_eq(core_param_parse_bool(yes[i], &v), 0, "%s",
			     yes[i]);
		cr_assert(v, "%s", yes[i]);
	}
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		v = true;
		cr_assert_eq(core_param_parse_bool(no[i], &v), 0, "%s", no[i]);
		cr_assert_not(v, "%s", no[i]);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(core_param_parse_bool(bad[i], &v),
			     -OPENRDMA_EINVAL, "\"%s\"", bad[i]);
	cr_assert_eq(core_param_parse_bool(NULL, &v), -OPENRDMA_EINVAL);
}

Test(param, parse_int)
{
	static const struct {
		const char *text;
		int64_t value;
	} good[] = {
		{ "0", 0 },
		{ "42", 42 },
		{ "+7", 7 },
		{ "-5", -5 },
		{ " 12 ", 12 },
		{ "08", 8 }, /* decimal, not octal */
		{ "0x1F", 31 },
		{ "0X10", 16 },
		{ "-0x10", -16 },
		{ "9223372036854775807", INT64_MAX },
		{ "-9223372036854775808", INT64_MIN },
		{ "0x7fffffffffffffff", INT64_MAX },
	};
	static const char *const bad[] = {
		"",
		"-",
		"+",
		"0x",
		"12abc",
		"1.5",
		"1e3",
		"--1",
		"- 1",
		"0xg",
		"9223372036854775808",
		"-9223372036854775809",
		"18446744073709551616",
		"1 2",
		"k",
	};
	int64_t v;
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		cr_assert_eq(core_param_parse_int(good[i].text, &v), 0, "%s",
			     good[i].text);
		cr_assert_eq(v, good[i].value, "%s: %" PRId64, good[i].text, v);
	}
	v = 99;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(core_param_parse_int(bad[i], &v), -OPENRDMA_EINVAL,
			     "\"%s\"", bad[i]);
	cr_assert_eq(v, 99, "no output on failure");
}

Test(param, parse_size)
{
	static const struct {
		const char *text;
		uint64_t value;
	} good[] = {
		{ "0", 0 },
		{ "4096", 4096 },
		{ "4k", 4096 },
		{ "4K", 4096 },
		{ "1m", 1 << 20 },
		{ "3M", 3 << 20 },
		{ "2g", 2ULL << 30 },
		{ "2G", 2ULL << 30 },
		{ "0x10k", 16 << 10 },
		{ " 8k ", 8192 },
		{ "18446744073709551615", UINT64_MAX },
		{ "17179869183g", 17179869183ULL << 30 },
	};
	static const char *const bad[] = {
		"",
		"k",
		"-1",
		"+1",
		"4kb",
		"4 k",
		"4t",
		"1.5m",
		"0x",
		"17179869184g",
		"18446744073709551616",
		"4kk",
		"m4",
	};
	uint64_t v;
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		cr_assert_eq(core_param_parse_size(good[i].text, &v), 0, "%s",
			     good[i].text);
		cr_assert_eq(v, good[i].value, "%s", good[i].text);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(core_param_parse_size(bad[i], &v),
			     -OPENRDMA_EINVAL, "\"%s\"", bad[i]);
}

Test(param, parsers_keep_errno)
{
	int64_t i;
	uint64_t u;

	errno = EBADF;
	core_param_parse_int("99999999999999999999", &i);
	core_param_parse_size("99999999999999999999", &u);
	core_param_parse_int("5", &i);
	cr_assert_eq(errno, EBADF);
}

/* ------------------------------------------------------------------ */
/* Lookup order                                                       */
/* ------------------------------------------------------------------ */

Test(param, defaults)
{
	const char *s, *source;
	int64_t v = -1;

	no_config();
	unsetenv("OPENRDMA_CB_THREADS");
	unsetenv("OPENRDMA_LOG_LEVEL");
	unsetenv("OPENRDMA_TRANSPORTS");
	cr_assert_eq(openrdma_param_get_int(NULL, "cb_threads", &v), 0);
	cr_assert_eq(v, 0);
	cr_assert_eq(openrdma_param_get_str(NULL, "log_level", &s), 0);
	cr_assert_str_eq(s, "warn");
	cr_assert_eq(core_param_raw(NULL, "log_level", &s, &source), 0);
	cr_assert_str_eq(source, "default");
	cr_assert_eq(openrdma_param_get_str(NULL, "transports", &s), 0);
	cr_assert_null(s, "no default");
	cr_assert_eq(core_param_raw(NULL, "transports", &s, &source), 0);
	cr_assert_str_eq(source, "unset");
	cr_assert_eq(core_param_raw(NULL, "config", &s, &source), 0);
	cr_assert_str_eq(source, "env");
	cr_assert_str_eq(s, "/dev/null");
}

Test(param, env_beats_config_beats_default)
{
	const char *s, *source;
	int64_t v;

	unsetenv("OPENRDMA_EVD_SPIN_US");
	unsetenv("OPENRDMA_CB_THREADS");
	config_make("# settings\n"
		    "evd_spin_us = 5\n"
		    "  cb_threads=3   \n"
		    "default_interface = tcp0 # not a comment\n");
	cr_assert_eq(openrdma_param_get_int(NULL, "evd_spin_us", &v), 0);
	cr_assert_eq(v, 5);
	cr_assert_eq(core_param_raw(NULL, "evd_spin_us", &s, &source), 0);
	cr_assert_str_eq(source, "config");
	cr_assert_eq(openrdma_param_get_int(NULL, "cb_threads", &v), 0);
	cr_assert_eq(v, 3);
	cr_assert_eq(openrdma_param_get_str(NULL, "default_interface", &s), 0);
	cr_assert_str_eq(s, "tcp0 # not a comment");

	env_set("OPENRDMA_EVD_SPIN_US", "0x20");
	cr_assert_eq(openrdma_param_get_int(NULL, "evd_spin_us", &v), 0);
	cr_assert_eq(v, 32);
	cr_assert_eq(core_param_raw(NULL, "evd_spin_us", &s, &source), 0);
	cr_assert_str_eq(source, "env");
	/* Empty is a value too, and it beats the file. */
	env_set("OPENRDMA_DEFAULT_INTERFACE", "");
	cr_assert_eq(openrdma_param_get_str(NULL, "default_interface", &s), 0);
	cr_assert_str_eq(s, "");
}

Test(param, bad_value_gives_default)
{
	char *log = log_capture();
	int64_t v = 77;
	bool b = true;

	no_config();
	env_set("OPENRDMA_EVD_SPIN_US", "fast");
	cr_assert_eq(openrdma_param_get_int(NULL, "evd_spin_us", &v),
		     -OPENRDMA_EINVAL);
	cr_assert_eq(v, 0, "the default");
	cr_assert(strstr(file_slurp(log), "WARN param: "), "%s",
		  file_slurp(log));
	cr_assert(
		strstr(file_slurp(log),
		       "OPENRDMA_EVD_SPIN_US=\"fast\" (from env) is not an integer; using the default \"0\"\n"),
		"%s", file_slurp(log));
	/* Reading it as another type is a programming error. */
	cr_assert_eq(openrdma_param_get_bool(NULL, "evd_spin_us", &b),
		     -OPENRDMA_EINVAL);
	cr_assert(b, "untouched");
	cr_assert(strstr(file_slurp(log), "is an integer, not a boolean"));
}

Test(param, undeclared_and_bad_arguments)
{
	const char *s = "x";
	uint64_t u = 5;
	int64_t v = 5;
	bool b;

	no_config();
	cr_assert_eq(openrdma_param_get_int(NULL, "no_such", &v),
		     -OPENRDMA_ENOENT);
	cr_assert_eq(openrdma_param_get_int("nosuch", "cb_threads", &v),
		     -OPENRDMA_ENOENT);
	cr_assert_eq(openrdma_param_get_size(NULL, "no_such", &u),
		     -OPENRDMA_ENOENT);
	cr_assert_eq(openrdma_param_get_str(NULL, "no_such", &s),
		     -OPENRDMA_ENOENT);
	cr_assert_eq(v, 5);
	cr_assert_eq(u, 5);
	cr_assert_str_eq(s, "x");
	cr_assert_eq(openrdma_param_get_int(NULL, NULL, &v), -OPENRDMA_EINVAL);
	cr_assert_eq(openrdma_param_get_int(NULL, "cb_threads", NULL),
		     -OPENRDMA_EINVAL);
	cr_assert_eq(openrdma_param_get_bool(NULL, "cb_threads", NULL),
		     -OPENRDMA_EINVAL);
	cr_assert_eq(openrdma_param_get_size(NULL, "cb_threads", NULL),
		     -OPENRDMA_EINVAL);
	cr_assert_eq(openrdma_param_get_str(NULL, "cb_threads", NULL),
		     -OPENRDMA_EINVAL);
	cr_assert_eq(openrdma_param_get_bool(NULL, NULL, &b), -OPENRDMA_EINVAL);
	cr_assert_eq(openrdma_param_foreach(NULL, NULL), -OPENRDMA_EINVAL);
}

Test(param, strings_stay_valid)
{
	const char *first, *second;

	no_config();
	env_set("OPENRDMA_DEFAULT_INTERFACE", "alpha0");
	cr_assert_eq(openrdma_param_get_str(NULL, "default_interface", &first),
		     0);
	env_set("OPENRDMA_DEFAULT_INTERFACE", "beta0");
	cr_assert_eq(openrdma_param_get_str(NULL, "default_interface", &second),
		     0);
	cr_assert_str_eq(first, "alpha0", "still valid after setenv");
	cr_assert_str_eq(second, "beta0");
}

/* ------------------------------------------------------------------ */
/* Transport scopes                                                   */
/* ------------------------------------------------------------------ */

static const struct openrdma_param_def scope_defs[] = {
	{ "nodelay", OPENRDMA_PARAM_BOOL, "yes", "a boolean" },
	{ "depth", OPENRDMA_PARAM_SIZE, "64k", "a size" },
	{ "retries", OPENRDMA_PARAM_INT, "-1", "an integer" },
	{ "label", OPENRDMA_PARAM_STRING, NULL, "a string without default" },
	{ "Bad-Name", OPENRDMA_PARAM_INT, "1", "skipped: bad name" },
	{ "depth", OPENRDMA_PARAM_INT, "1", "skipped: declared twice" },
	{ "broken", OPENRDMA_PARAM_INT, "one", "skipped: bad default" },
	{ "typeless", 0, "1", "skipped: no type" },
	{ 0 },
};

Test(param, transport_scope)
{
	char *log = log_capture();
	const char *s = "x";
	uint64_t u;
	int64_t v;
	bool b;

	config_make("tp.retries = 9\n"
		    "tp.nosuch = 1\n"
		    "other.x = 2\n");
	cr_assert_eq(openrdma_param_get_bool("tp", "nodelay", &b),
		     -OPENRDMA_ENOENT);
	cr_assert_eq(core_param_scope_add("tp", scope_defs), 0);
	cr_assert_eq(core_param_scope_add("tp", scope_defs), -OPENRDMA_EEXIST);
	cr_assert_eq(core_param_scope_add("Bad", scope_defs), -OPENRDMA_EINVAL);
	cr_assert_eq(core_param_scope_add(NULL, scope_defs), -OPENRDMA_EINVAL);

	cr_assert_eq(openrdma_param_get_bool("tp", "nodelay", &b), 0);
	cr_assert(b);
	cr_assert_eq(openrdma_param_get_size("tp", "depth", &u), 0);
	cr_assert_eq(u, 64 << 10);
	cr_assert_eq(openrdma_param_get_int("tp", "retries", &v), 0);
	cr_assert_eq(v, 9, "from the config file");
	cr_assert_eq(openrdma_param_get_str("tp", "label", &s), 0);
	cr_assert_null(s);
	env_set("OPENRDMA_TP_NODELAY", "off");
	cr_assert_eq(openrdma_param_get_bool("tp", "nodelay", &b), 0);
	cr_assert_not(b);

	cr_assert(core_param_declared("tp", "depth"));
	cr_assert_not(core_param_declared("tp", "Bad-Name"));
	cr_assert_not(core_param_declared("tp", "broken"));
	cr_assert_not(core_param_declared("tp", "typeless"));
	cr_assert(strstr(file_slurp(log),
			 "tp: parameter \"depth\": declared twice; ignored"));
	cr_assert(strstr(file_slurp(log),
			 "tp: parameter \"broken\": default does not parse"));

	core_param_scope_clear();
	cr_assert_eq(openrdma_param_get_bool("tp", "nodelay", &b),
		     -OPENRDMA_ENOENT);
	cr_assert(core_param_declared(NULL, "cb_threads"), "core stays");
}

/* ------------------------------------------------------------------ */
/* foreach                                                            */
/* ------------------------------------------------------------------ */

struct seen {
	int count;
	int core;
	bool log_level_ok;
	bool spin_ok;
	bool tp_ok;
};

static int collect(const struct openrdma_param_info *info, void *arg)
{
	struct seen *seen = arg;

	seen->count++;
	cr_assert_not_null(info->def);
	cr_assert_not_null(info->env_name);
	cr_assert_not_null(info->source);
	if (!info->scope)
		seen->core++;
	if (!info->scope && !strcmp(info->def->name, "log_level"))
		seen->log_level_ok =
			!strcmp(info->env_name, "OPENRDMA_LOG_LEVEL") &&
			!strcmp(info->source, "default") &&
			!strcmp(info->value, "warn");
	if (!info->scope && !strcmp(info->def->name, "evd_spin_us"))
		seen->spin_ok = !strcmp(info->source, "env") &&
				!strcmp(info->value, "12");
	if (info->scope && !strcmp(info->scope, "tp") &&
	    !strcmp(info->def->name, "label"))
		seen->tp_ok = !strcmp(info->env_name, "OPENRDMA_TP_LABEL") &&
			      !strcmp(info->source, "unset") && !info->value;
	return 0;
}

static int stop_at_first(const struct openrdma_param_info *info, void *arg)
{
	(*(int *)arg)++;
	return 7;
}

Test(param, foreach_lists_everything)
{
	const struct openrdma_param_def *def;
	struct seen seen = { 0 };
	int core = 0, calls = 0;

	no_config();
	unsetenv("OPENRDMA_LOG_LEVEL");
	unsetenv("OPENRDMA_TRANSPORTS");
	env_set("OPENRDMA_EVD_SPIN_US", "12");
	cr_assert_eq(core_param_scope_add("tp", scope_defs), 0);
	for (def = core_param_table; def->name; def++)
		core++;
	cr_assert_eq(openrdma_param_foreach(collect, &seen), 0);
	cr_assert_eq(seen.core, core);
	cr_assert_geq(seen.count, core + 4);
	cr_assert(seen.log_level_ok);
	cr_assert(seen.spin_ok);
	cr_assert(seen.tp_ok);

	cr_assert_eq(openrdma_param_foreach(stop_at_first, &calls), 7);
	cr_assert_eq(calls, 1);
}

Test(param, core_table_is_sound)
{
	const struct openrdma_param_def *def;
	static const char *const needed[] = {
		"log_level",  "log_file",	"config",
		"transports", "transport_path", "default_interface",
		"cb_threads", "evd_spin_us",
	};
	size_t i;

	union {
		bool b;
		int64_t i;
		uint64_t u;
	} v;

	for (def = core_param_table; def->name; def++) {
		cr_assert_not_null(def->help, "%s", def->name);
		cr_assert_geq(def->type, OPENRDMA_PARAM_BOOL);
		cr_assert_leq(def->type, OPENRDMA_PARAM_STRING);
		if (!def->default_value)
			continue;
		if (def->type == OPENRDMA_PARAM_BOOL)
			cr_assert_eq(core_param_parse_bool(def->default_value,
							   &v.b),
				     0, "%s", def->name);
		if (def->type == OPENRDMA_PARAM_INT)
			cr_assert_eq(core_param_parse_int(def->default_value,
							  &v.i),
				     0, "%s", def->name);
		if (def->type == OPENRDMA_PARAM_SIZE)
			cr_assert_eq(core_param_parse_size(def->default_value,
							   &v.u),
				     0, "%s", def->name);
	}
	for (i = 0; i < sizeof(needed) / sizeof(needed[0]); i++)
		cr_assert(core_param_declared(NULL, needed[i]), "%s",
			  needed[i]);
}

/* ------------------------------------------------------------------ */
/* Config-file errors                                                 */
/* ------------------------------------------------------------------ */

Test(param, config_errors_are_reported_and_skipped)
{
	char *log = log_capture();
	char *conf, expect[600];
	const char *text;
	int64_t v;

	unsetenv("OPENRDMA_CB_THREADS");
	unsetenv("OPENRDMA_EVD_SPIN_US");
	conf = config_make("this line has no equals sign\n"
			   "no_such_param = 1\n"
			   "Bad Name = 2\n"
			   "config = /elsewhere\n"
			   "interface x0 transport=tcp\n"
			   "interface x1 transport=tcp device=a device=b\n"
			   "interface x2 transport=tcp device=a port=0\n"
			   "interface x/3 transport=tcp device=a\n"
			   "interface x4 transport=tcp device=a oops\n"
			   "cb_threads = 4\n"
			   "evd_spin_us = 1\n"
			   "evd_spin_us = 2\n");
	cr_assert_eq(openrdma_param_get_int(NULL, "cb_threads", &v), 0);
	cr_assert_eq(v, 4, "lines after bad ones still count");
	cr_assert_eq(openrdma_param_get_int(NULL, "evd_spin_us", &v), 0);
	cr_assert_eq(v, 2, "the last setting wins");

	text = file_slurp(log);
	snprintf(expect, sizeof(expect), "%s:1: expected", conf);
	cr_assert(strstr(text, expect), "%s", text);
	snprintf(expect, sizeof(expect),
		 "%s:2: unknown parameter \"no_such_param\"", conf);
	cr_assert(strstr(text, expect), "%s", text);
	snprintf(expect, sizeof(expect), "%s:3: invalid parameter name", conf);
	cr_assert(strstr(text, expect), "%s", text);
	snprintf(expect, sizeof(expect), "%s:4: \"config\" can only be set",
		 conf);
	cr_assert(strstr(text, expect), "%s", text);
	snprintf(expect, sizeof(expect), "%s:5: interface x0 needs", conf);
	cr_assert(strstr(text, expect), "%s", text);
	snprintf(expect, sizeof(expect), "%s:6: \"device\" given twice", conf);
	cr_assert(strstr(text, expect), "%s", text);
	snprintf(expect, sizeof(expect), "%s:7: port=0 is not", conf);
	cr_assert(strstr(text, expect), "%s", text);
	snprintf(expect, sizeof(expect), "%s:8: invalid interface name", conf);
	cr_assert(strstr(text, expect), "%s", text);
	snprintf(expect, sizeof(expect), "%s:9: expected key=value", conf);
	cr_assert(strstr(text, expect), "%s", text);
	cr_assert_null(strstr(text, ":10:"), "%s", text);
}

Test(param, empty_config_reads_nothing)
{
	char *log = log_capture();
	const char *s, *source;

	env_set("OPENRDMA_CONFIG", "");
	unsetenv("OPENRDMA_CB_THREADS");
	cr_assert_eq(core_param_raw(NULL, "cb_threads", &s, &source), 0);
	cr_assert_str_eq(source, "default");
	cr_assert(openrdma_log_enabled(OPENRDMA_LOG_WARN));
	cr_assert_str_eq(file_slurp(log), "");
}

Test(param, named_config_file_must_exist)
{
	char *log = log_capture();
	int64_t v;

	env_set("OPENRDMA_CONFIG", "/nonexistent/dir/openrdma.conf");
	cr_assert_eq(openrdma_param_get_int(NULL, "cb_threads", &v), 0);
	cr_assert(strstr(file_slurp(log),
			 "/nonexistent/dir/openrdma.conf: cannot open"),
		  "%s", file_slurp(log));
}
