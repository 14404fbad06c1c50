/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The registry: plugin loading and every way a plugin is refused, the
 * OPENRDMA_TRANSPORTS filter, probe outcomes, config-file interfaces, the
 * public device list, teardown; and the "not supported" stubs.
 *
 * The registry is process-global and built on first use.  Criterion runs
 * each test in its own process, so each test sets its environment first.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pthread.h>

#include <criterion/criterion.h>

#include <openrdma/registry.h>
#include <openrdma/verbs.h>

#include "core/param.h"
#include "core/unsupported.h"
#include "registry/registry.h"

#define PLUGIN_FILE "libopenrdma-testplug-t2.so"
#define PLUGIN_PATH TEST_PLUGIN_DIR "/" PLUGIN_FILE

/* ------------------------------------------------------------------ */
/* Helpers                                                            */
/* ------------------------------------------------------------------ */

static void env_set(const char *name, const char *value)
{
	cr_assert_eq(setenv(name, value, 1), 0);
}

/* Points OPENRDMA_TRANSPORT_PATH at the built test plugin. */
static void use_plugin(void)
{
	cr_assert_eq(access(PLUGIN_PATH, R_OK), 0, "test plugin not built: %s",
		     PLUGIN_PATH);
	env_set("OPENRDMA_TRANSPORT_PATH", TEST_PLUGIN_DIR);
	/* Nothing from the machine's config file. */
	env_set("OPENRDMA_CONFIG", "/dev/null");
	/* The skips these tests provoke are expected: keep the log short. */
	env_set("OPENRDMA_LOG_LEVEL", "error");
	unsetenv("OPENRDMA_TRANSPORTS");
	unsetenv("OPENRDMA_DEFAULT_INTERFACE");
}

/* The test's temporary directory; removed after the test, pass or fail. */
static char tmp_dir[] = "/tmp/openrdma-test-XXXXXX";

static char *tmpdir_make(void)
{
	cr_assert_not_null(mkdtemp(tmp_dir), "mkdtemp: %s", strerror(errno));
	return tmp_dir;
}

static int tree_remove_one(const char *path, const struct stat *st, int flag,
			   struct FTW *ftw)
{
	remove(path);
	return 0;
}

static void tmp_cleanup(void)
{
	if (!strstr(tmp_dir, "XXXXXX"))
		nftw(tmp_dir, tree_remove_one, 8, FTW_DEPTH | FTW_PHYS);
}

TestSuite(registry, .fini = tmp_cleanup);
TestSuite(info_tool, .fini = tmp_cleanup);

static void file_write(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "w");
	cr_assert_not_null(fp, "%s: %s", path, strerror(errno));
	fputs(text, fp);
	cr_assert_eq(fclose(fp), 0);
}

static void file_copy(const char *from, const char *dir, const char *name)
{
	char path[512], buf[65536];
	int in, out;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	in = open(from, O_RDONLY);
	cr_assert_geq(in, 0, "%s: %s", from, strerror(errno));
	out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	cr_assert_geq(out, 0, "%s: %s", path, strerror(errno));
	while ((n = read(in, buf, sizeof(buf))) > 0)
		cr_assert_eq(write(out, buf, n), n);
	close(in);
	close(out);
}

struct infos {
	struct openrdma_transport_info *list;
	int num;
};

static struct infos infos_get(void)
{
	struct infos in;

	cr_assert_eq(openrdma_transport_info_list(&in.list, &in.num), 0);
	return in;
}

/* The entry of that name and source ("built-in", a path, or NULL: any). */
static const struct openrdma_transport_info *
info_find(struct infos in, const char *name, const char *source)
{
	int i;

	for (i = 0; i < in.num; i++)
		if (!strcmp(in.list[i].name, name) &&
		    (!source || !strcmp(in.list[i].source, source)))
			return &in.list[i];
	return NULL;
}

static bool device_exists(const char *name)
{
	struct openrdma_device *dev;

	return openrdma_device_find(name, &dev) == 0;
}

/* ------------------------------------------------------------------ */
/* Not-supported stubs                                                */
/* ------------------------------------------------------------------ */

typedef void (*any_fn)(void);

_Static_assert(sizeof(struct openrdma_transport_ops) % sizeof(any_fn) == 0,
	       "the ops table holds only function pointers");

#define NUM_OPS (sizeof(struct openrdma_transport_ops) / sizeof(any_fn))

static any_fn op_at(const struct openrdma_transport_ops *ops, size_t i)
{
	any_fn fn;

	memcpy(&fn, (const char *)ops + i * sizeof(fn), sizeof(fn));
	return fn;
}

Test(unsupported, fill_leaves_no_hole)
{
	struct openrdma_transport_ops ops;
	size_t i;

	memset(&ops, 0, sizeof(ops));
	core_ops_fill(&ops, NULL);
	for (i = 0; i < NUM_OPS; i++) {
		cr_assert_not_null(op_at(&ops, i), "op %zu is NULL", i);
		cr_assert_eq(op_at(&ops, i), op_at(&core_unsupported_ops, i));
	}
	for (i = 0; i < NUM_OPS; i++)
		cr_assert_not_null(op_at(&core_unsupported_ops, i),
				   "stub %zu missing", i);
}

static int my_cq_poll(struct openrdma_cq *cq, int n, struct openrdma_wc *wc)
{
	return 42;
}

Test(unsupported, fill_keeps_what_is_set)
{
	const struct openrdma_transport_ops src = { .cq_poll = my_cq_poll };
	struct openrdma_transport_ops ops;
	size_t i, kept = 0;

	core_ops_fill(&ops, &src);
	cr_assert_eq(ops.cq_poll, my_cq_poll);
	cr_assert_eq(ops.cq_poll(NULL, 0, NULL), 42);
	for (i = 0; i < NUM_OPS; i++) {
		cr_assert_not_null(op_at(&ops, i));
		kept += op_at(&ops, i) != op_at(&core_unsupported_ops, i);
	}
	cr_assert_eq(kept, 1);
}

Test(unsupported, stubs_say_not_supported)
{
	const struct openrdma_transport_ops *o = &core_unsupported_ops;
	struct openrdma_send_wr swr, *bad_swr = NULL;
	struct openrdma_recv_wr rwr, *bad_rwr = NULL;
	const int E = -OPENRDMA_EOPNOTSUPP;

	o->context_close(NULL);
	cr_assert_eq(o->device_query(NULL, NULL), E);
	cr_assert_eq(o->gid_query(NULL, 1, 0, NULL), E);
	cr_assert_eq(o->port_query(NULL, 1, NULL), E);
	cr_assert_eq(o->mr_dereg(NULL), E);
	cr_assert_eq(o->mr_reg(NULL, NULL, 0, 0, NULL), E);
	cr_assert_eq(o->mr_rereg(NULL, 0, NULL, NULL, 0, 0), E);
	cr_assert_eq(o->mw_alloc(NULL, OPENRDMA_MW_TYPE_1, NULL), E);
	cr_assert_eq(o->mw_dealloc(NULL), E);
	cr_assert_eq(o->pd_alloc(NULL, NULL), E);
	cr_assert_eq(o->pd_dealloc(NULL), E);
	cr_assert_eq(o->ah_attr_from_wc(NULL, 1, NULL, NULL, NULL), E);
	cr_assert_eq(o->ah_create(NULL, NULL, NULL), E);
	cr_assert_eq(o->ah_destroy(NULL), E);
	cr_assert_eq(o->cq_create(NULL, 1, 0, NULL), E);
	cr_assert_eq(o->cq_destroy(NULL), E);
	cr_assert_eq(o->cq_poll(NULL, 1, NULL), E);
	cr_assert_eq(o->cq_req_notify(NULL, 0), E);
	cr_assert_eq(o->cq_resize(NULL, 1), E);
	cr_assert_eq(o->qp_create(NULL, NULL, NULL), E);
	cr_assert_eq(o->qp_destroy(NULL), E);
	cr_assert_eq(o->qp_modify(NULL, NULL, 0), E);
	cr_assert_eq(o->qp_post_recv(NULL, &rwr, &bad_rwr), E);
	cr_assert_eq(bad_rwr, &rwr, "a failed post names its bad WR");
	cr_assert_eq(o->qp_post_send(NULL, &swr, &bad_swr), E);
	cr_assert_eq(bad_swr, &swr);
	cr_assert_eq(o->qp_query(NULL, NULL, 0, NULL), E);
	cr_assert_eq(o->srq_create(NULL, NULL, NULL), E);
	cr_assert_eq(o->srq_destroy(NULL), E);
	cr_assert_eq(o->srq_modify(NULL, NULL, 0), E);
	bad_rwr = NULL;
	cr_assert_eq(o->srq_post_recv(NULL, &rwr, &bad_rwr), E);
	cr_assert_eq(bad_rwr, &rwr);
	cr_assert_eq(o->srq_query(NULL, NULL), E);
	cr_assert_eq(o->cm_accept(NULL, NULL, NULL), E);
	cr_assert_eq(o->cm_connect(NULL, NULL, NULL, NULL), E);
	cr_assert_eq(o->cm_disconnect(NULL, NULL, 0), E);
	cr_assert_eq(o->cm_id_create(NULL, OPENRDMA_PS_TCP, NULL), E);
	cr_assert_eq(o->cm_id_destroy(NULL), E);
	cr_assert_eq(o->cm_listen(NULL, NULL, 0), E);
	cr_assert_eq(o->cm_local_addr(NULL, NULL), E);
	cr_assert_eq(o->cm_peer_addr(NULL, NULL), E);
	cr_assert_eq(o->cm_reject(NULL, NULL, 0), E);
}

/* ------------------------------------------------------------------ */
/* Pure helpers                                                       */
/* ------------------------------------------------------------------ */

Test(registry, filter_match)
{
	cr_assert(registry_filter_match(NULL, "tcp"));
	cr_assert(registry_filter_match("", "tcp"));
	cr_assert(registry_filter_match("tcp", "tcp"));
	cr_assert(registry_filter_match("shm,tcp", "tcp"));
	cr_assert(registry_filter_match(" shm , tcp ", "tcp"));
	cr_assert_not(registry_filter_match("shm", "tcp"));
	cr_assert_not(registry_filter_match("tcpx", "tcp"));
	cr_assert_not(registry_filter_match("tc", "tcp"));
	cr_assert_not(registry_filter_match(",,", "tcp"));
	cr_assert_not(registry_filter_match("^tcp", "tcp"));
	cr_assert_not(registry_filter_match("^shm,tcp", "tcp"));
	cr_assert(registry_filter_match("^shm", "tcp"));
}

Test(registry, plugin_file_names)
{
	char name[16];

	cr_assert(registry_plugin_file_match("libopenrdma-tcp-t2.so", name,
					     sizeof(name)));
	cr_assert_str_eq(name, "tcp");
	cr_assert(registry_plugin_file_match("libopenrdma-a-b-t2.so", name,
					     sizeof(name)));
	cr_assert_str_eq(name, "a-b");
	cr_assert_not(
		registry_plugin_file_match("libopenrdma--t2.so", NULL, 0));
	cr_assert_not(
		registry_plugin_file_match("libopenrdma-tcp-t1.so", NULL, 0));
	cr_assert_not(
		registry_plugin_file_match("libopenrdma-tcp-t2.so.0", NULL, 0));
	cr_assert_not(registry_plugin_file_match("libopenrdma.so", NULL, 0));
	cr_assert_not(registry_plugin_file_match("libfoo-tcp-t2.so", NULL, 0));
}

Test(registry, names)
{
	cr_assert(registry_transport_name_valid("tcp"));
	cr_assert(registry_transport_name_valid("my_rdma2"));
	cr_assert(registry_transport_name_valid("abcdefghijklmno"));
	cr_assert_not(registry_transport_name_valid("abcdefghijklmnop"));
	cr_assert_not(registry_transport_name_valid("TCP"));
	cr_assert_not(registry_transport_name_valid("a-b"));
	cr_assert_not(registry_transport_name_valid(""));
	cr_assert_not(registry_transport_name_valid(NULL));
	cr_assert(registry_iface_name_valid("rxe0-1"));
	cr_assert(registry_iface_name_valid("Eth.0:1_a"));
	cr_assert_not(registry_iface_name_valid("a b"));
	cr_assert_not(registry_iface_name_valid("a/b"));
	cr_assert_not(registry_iface_name_valid(""));
}

Test(registry, setid_rule)
{
	cr_assert_not(core_setid_check(1000, 1000, 100, 100));
	cr_assert(core_setid_check(1000, 0, 100, 100), "setuid root");
	cr_assert(core_setid_check(1000, 1000, 100, 0), "setgid");
	cr_assert(core_setid_check(0, 1000, 0, 0), "dropped privileges");
	/* This test program runs with the ids of whoever started it. */
	cr_assert_eq(core_setid(),
		     getuid() != geteuid() || getgid() != getegid());
}

/* ------------------------------------------------------------------ */
/* Plugins                                                            */
/* ------------------------------------------------------------------ */

Test(registry, plugin_loads)
{
	const struct openrdma_transport_info *ti;
	struct openrdma_device *dev;
	struct infos in;

	use_plugin();
	cr_assert_eq(openrdma_device_find("testplug0", &dev), 0);
	cr_assert_str_eq(openrdma_device_name(dev), "testplug0");
	cr_assert_str_eq(openrdma_device_transport_name(dev), "testplug");
	cr_assert_str_eq(dev->dev_name, "tp0");
	cr_assert_eq(dev->port_num, 1);
	cr_assert_str_eq(dev->priv, "testplug");
	cr_assert_eq(dev->num_params, 0);

	/* Every op the plugin left NULL answers "not supported". */
	cr_assert_not_null(dev->ops);
	cr_assert_eq(dev->ops->cq_create(NULL, 1, 0, NULL),
		     -OPENRDMA_EOPNOTSUPP);
	cr_assert_eq(dev->ops->device_query(NULL, NULL), -OPENRDMA_EOPNOTSUPP);
	cr_assert_eq(dev->transport->device_open(dev, NULL),
		     -OPENRDMA_EOPNOTSUPP);

	in = infos_get();
	ti = info_find(in, "testplug", NULL);
	cr_assert_not_null(ti);
	cr_assert_str_eq(ti->source, PLUGIN_PATH);
	cr_assert_str_eq(ti->status, "ok");
	cr_assert_str_eq(ti->description, "registry test plugin");
	cr_assert(ti->loaded);
	cr_assert_eq(ti->num_devices, 1);
	openrdma_transport_info_free(in.list, in.num);
}

Test(registry, plugin_params_declared)
{
	uint64_t depth;
	bool flag = false;

	use_plugin();
	/* Declared only once the registry loaded the plugin. */
	cr_assert_eq(openrdma_param_get_bool("testplug", "flag", &flag),
		     -OPENRDMA_ENOENT);
	cr_assert(device_exists("testplug0"));
	cr_assert_eq(openrdma_param_get_bool("testplug", "flag", &flag), 0);
	cr_assert_not(flag);
	env_set("OPENRDMA_TESTPLUG_FLAG", "on");
	env_set("OPENRDMA_TESTPLUG_DEPTH", "2m");
	cr_assert_eq(openrdma_param_get_bool("testplug", "flag", &flag), 0);
	cr_assert(flag);
	cr_assert_eq(openrdma_param_get_size("testplug", "depth", &depth), 0);
	cr_assert_eq(depth, 2 << 20);
}

Test(registry, abi_mismatch_refused)
{
	const struct openrdma_transport_info *ti;
	struct infos in;

	use_plugin();
	env_set("OPENRDMA_TESTPLUG_ABI", "1");
	cr_assert_not(device_exists("testplug0"));
	in = infos_get();
	ti = info_find(in, "testplug", PLUGIN_PATH);
	cr_assert_not_null(ti);
	cr_assert_not(ti->loaded);
	cr_assert_str_eq(ti->status, "ABI version 1, expected 2");
	openrdma_transport_info_free(in.list, in.num);
}

Test(registry, invalid_name_refused)
{
	const struct openrdma_transport_info *ti;
	struct infos in;

	use_plugin();
	env_set("OPENRDMA_TESTPLUG_NAME", "Bad-Name");
	cr_assert_not(device_exists("testplug0"));
	in = infos_get();
	ti = info_find(in, "Bad-Name", PLUGIN_PATH);
	cr_assert_not_null(ti);
	cr_assert_not(ti->loaded);
	cr_assert(strstr(ti->status, "invalid name"), "%s", ti->status);
	openrdma_transport_info_free(in.list, in.num);
}

Test(registry, duplicate_plugin_refused)
{
	const struct openrdma_transport_info *first, *second;
	char *dir = tmpdir_make();
	char path[512];
	struct infos in;

	use_plugin();
	/* Same descriptor name twice: the first file in byte order wins. */
	file_copy(PLUGIN_PATH, dir, "libopenrdma-aaa-t2.so");
	file_copy(PLUGIN_PATH, dir, "libopenrdma-bbb-t2.so");
	env_set("OPENRDMA_TRANSPORT_PATH", dir);

	cr_assert(device_exists("testplug0"));
	in = infos_get();
	snprintf(path, sizeof(path), "%s/libopenrdma-aaa-t2.so", dir);
	first = info_find(in, "testplug", path);
	snprintf(path, sizeof(path), "%s/libopenrdma-bbb-t2.so", dir);
	second = info_find(in, "testplug", path);
	cr_assert_not_null(first);
	cr_assert_not_null(second);
	cr_assert(first->loaded);
	cr_assert_str_eq(first->status, "ok");
	cr_assert_not(second->loaded);
	snprintf(path, sizeof(path),
		 "duplicate of plugin %s/libopenrdma-aaa-t2.so", dir);
	cr_assert_str_eq(second->status, path);
	openrdma_transport_info_free(in.list, in.num);
}

Test(registry, duplicate_builtin_refused)
{
	const struct openrdma_transport_info *ti;
	char expect[64];
	const char *name;
	struct infos in;

	if (!registry_builtin[0])
		cr_skip_test("no built-in transport in this build");
	name = (*registry_builtin[0])->name;
	use_plugin();
	env_set("OPENRDMA_TESTPLUG_NAME", name);
	in = infos_get();
	ti = info_find(in, name, PLUGIN_PATH);
	cr_assert_not_null(ti);
	cr_assert_not(ti->loaded);
	snprintf(expect, sizeof(expect), "duplicate of built-in %s", name);
	cr_assert_str_eq(ti->status, expect);
	ti = info_find(in, name, "built-in");
	cr_assert_not_null(ti);
	cr_assert(ti->loaded);
	openrdma_transport_info_free(in.list, in.num);
}

Test(registry, broken_plugin_explained)
{
	const struct openrdma_transport_info *ti;
	char *dir = tmpdir_make();
	char path[512];
	struct infos in;

	use_plugin();
	file_write(dir, "libopenrdma-junk-t2.so", "not an ELF file\n");
	file_write(dir, "libopenrdma-other-t1.so", "another ABI: ignored\n");
	env_set("OPENRDMA_TRANSPORT_PATH", dir);
	in = infos_get();
	snprintf(path, sizeof(path), "%s/libopenrdma-junk-t2.so", dir);
	ti = info_find(in, "junk", path);
	cr_assert_not_null(ti);
	cr_assert_not(ti->loaded);
	cr_assert_eq(strncmp(ti->status, "plugin load failed: ", 20), 0, "%s",
		     ti->status);
	cr_assert_null(info_find(in, "other", NULL));
	openrdma_transport_info_free(in.list, in.num);
}

Test(registry, setid_path_rule_applies_through_params)
{
	const char *value, *source;

	/* Unprivileged, the environment is honoured. */
	if (core_setid())
		cr_skip_test("this test program runs setuid or setgid");
	env_set("OPENRDMA_TRANSPORT_PATH", "/x:/y");
	cr_assert_eq(core_param_raw(NULL, "transport_path", &value, &source),
		     0);
	cr_assert_str_eq(value, "/x:/y");
	cr_assert_str_eq(source, "env");
}

/* ------------------------------------------------------------------ */
/* Filter                                                             */
/* ------------------------------------------------------------------ */

Test(registry, filter_keeps_only_listed)
{
	const struct openrdma_transport_info *ti;
	struct openrdma_device **list;
	struct infos in;
	int i, num;

	use_plugin();
	env_set("OPENRDMA_TRANSPORTS", "testplug");
	cr_assert_eq(openrdma_device_list_get(&list, &num), 0);
	cr_assert_eq(num, 1);
	cr_assert_str_eq(list[0]->name, "testplug0");
	cr_assert_null(list[1]);
	openrdma_device_list_free(list);

	in = infos_get();
	for (i = 0; i < in.num; i++) {
		ti = &in.list[i];
		if (!strcmp(ti->name, "testplug"))
			continue;
		cr_assert_not(ti->loaded, "%s", ti->name);
		cr_assert_str_eq(ti->status, "excluded by OPENRDMA_TRANSPORTS");
		cr_assert_eq(ti->num_devices, 0);
	}
	cr_assert(info_find(in, "testplug", NULL)->loaded);
	openrdma_transport_info_free(in.list, in.num);
}

Test(registry, filter_excludes)
{
	const struct openrdma_transport_info *ti;
	struct infos in;

	use_plugin();
	env_set("OPENRDMA_TRANSPORTS", "^testplug");
	cr_assert_not(device_exists("testplug0"));
	in = infos_get();
	ti = info_find(in, "testplug", NULL);
	cr_assert_not_null(ti);
	cr_assert_not(ti->loaded);
	cr_assert_str_eq(ti->status, "excluded by OPENRDMA_TRANSPORTS");
	openrdma_transport_info_free(in.list, in.num);
}

Test(registry, filter_unknown_name_excludes_all)
{
	struct openrdma_device **list;
	int num = -1;

	use_plugin();
	env_set("OPENRDMA_TRANSPORTS", "nosuch");
	cr_assert_eq(openrdma_device_list_get(&list, &num), 0);
	cr_assert_eq(num, 0);
	cr_assert_null(list[0]);
	openrdma_device_list_free(list);
	cr_assert_null(openrdma_default_interface());
}

/* ------------------------------------------------------------------ */
/* Probes                                                             */
/* ------------------------------------------------------------------ */

Test(registry, probe_without_device_explains)
{
	const struct openrdma_transport_info *ti;
	struct infos in;

	use_plugin();
	env_set("OPENRDMA_TESTPLUG_NODEV", "1");
	cr_assert_not(device_exists("testplug0"));
	in = infos_get();
	ti = info_find(in, "testplug", NULL);
	cr_assert(ti->loaded, "listed and loaded, with no interface");
	cr_assert_eq(ti->num_devices, 0);
	cr_assert_str_eq(
		ti->status,
		"no device: no test device (OPENRDMA_TESTPLUG_NODEV is set)");
	openrdma_transport_info_free(in.list, in.num);
}

Test(registry, probe_failure_explains)
{
	const struct openrdma_transport_info *ti;
	struct infos in;

	use_plugin();
	env_set("OPENRDMA_TESTPLUG_FAIL", "1");
	cr_assert_not(device_exists("testplug0"));
	in = infos_get();
	ti = info_find(in, "testplug", NULL);
	cr_assert_eq(ti->num_devices, 0);
	cr_assert_eq(strncmp(ti->status, "probe failed: ", 14), 0, "%s",
		     ti->status);
	cr_assert(strstr(ti->status, "told to fail"), "%s", ti->status);
	openrdma_transport_info_free(in.list, in.num);
}

/* ------------------------------------------------------------------ */
/* Config-file interfaces                                             */
/* ------------------------------------------------------------------ */

static char *config_make(const char *main_text, const char *dropin_text)
{
	char *dir = tmpdir_make();
	char path[512];

	file_write(dir, "openrdma.conf", main_text);
	if (dropin_text) {
		snprintf(path, sizeof(path), "%s/interfaces.d", dir);
		cr_assert_eq(mkdir(path, 0700), 0);
		file_write(path, "20-b.conf", dropin_text);
		file_write(path, "10-a.conf", "# comment only\n");
		file_write(path, "ignored.txt",
			   "interface no transport=testplug device=x\n");
	}
	snprintf(path, sizeof(path), "%s/openrdma.conf", dir);
	env_set("OPENRDMA_CONFIG", path);
	return dir;
}

Test(registry, config_interfaces)
{
	const struct openrdma_transport_info *ti;
	struct openrdma_device **list, *dev;
	struct infos in;
	int num;

	use_plugin();
	config_make(
		"# interfaces of the test plugin\n"
		"interface cfg0 transport=testplug device=tpX port=2 speed=fast\n"
		"interface testplug0 transport=testplug device=dup\n"
		"interface ghost0 transport=nosuch device=x\n"
		"interface bad transport=testplug\n"
		"interface cfg9 transport=testplug device=y port=300\n",
		"interface cfg1 transport=testplug device=tpY\n");

	cr_assert_eq(openrdma_device_find("cfg0", &dev), 0);
	cr_assert_str_eq(dev->dev_name, "tpX");
	cr_assert_eq(dev->port_num, 2);
	cr_assert_str_eq(openrdma_device_transport_name(dev), "testplug");
	cr_assert_str_eq(openrdma_device_param(dev, "speed"), "fast");
	cr_assert_str_eq(openrdma_device_param(dev, "device"), "tpX");
	cr_assert_null(openrdma_device_param(dev, "spee"));
	cr_assert_null(openrdma_device_param(dev, "nosuch"));
	cr_assert_null(dev->priv);
	cr_assert_eq(dev->ops->pd_alloc(NULL, NULL), -OPENRDMA_EOPNOTSUPP);

	/* Probed interfaces first, then the file's, then drop-ins. */
	cr_assert_eq(openrdma_device_list_get(&list, &num), 0);
	cr_assert_geq(num, 3);
	cr_assert_str_eq(list[num - 3]->name, "testplug0");
	cr_assert_str_eq(list[num - 2]->name, "cfg0");
	cr_assert_str_eq(list[num - 1]->name, "cfg1");
	cr_assert_str_eq(list[num - 3]->dev_name, "tp0", "the probe's wins");
	openrdma_device_list_free(list);
	cr_assert_not(device_exists("bad"));
	cr_assert_not(device_exists("cfg9"));
	cr_assert_not(device_exists("no"));

	in = infos_get();
	ti = info_find(in, "testplug", NULL);
	cr_assert_eq(ti->num_devices, 3);
	cr_assert_eq(strncmp(ti->status, "ok; interface testplug0 (", 25), 0,
		     "%s", ti->status);
	cr_assert(strstr(ti->status, "the name is taken by transport testplug"),
		  "%s", ti->status);
	ti = info_find(in, "nosuch", NULL);
	cr_assert_not_null(ti, "an unknown transport is listed with why");
	cr_assert_not(ti->loaded);
	cr_assert(strstr(ti->status, "not found; interface ghost0 ("), "%s",
		  ti->status);
	openrdma_transport_info_free(in.list, in.num);
}

Test(registry, config_interface_of_excluded_transport)
{
	const struct openrdma_transport_info *ti;
	struct infos in;

	use_plugin();
	env_set("OPENRDMA_TRANSPORTS", "^testplug");
	config_make("interface cfg0 transport=testplug device=tpX\n", NULL);
	cr_assert_not(device_exists("cfg0"));
	in = infos_get();
	ti = info_find(in, "testplug", NULL);
	cr_assert(strstr(ti->status, "excluded by OPENRDMA_TRANSPORTS; "
				     "interface cfg0 ("),
		  "%s", ti->status);
	cr_assert(strstr(ti->status, "skipped: transport not loaded"), "%s",
		  ti->status);
	openrdma_transport_info_free(in.list, in.num);
}

Test(registry, config_sets_filter_and_default)
{
	use_plugin();
	config_make("transports = testplug\n"
		    "default_interface = cfg0\n"
		    "interface cfg0 transport=testplug device=tpX\n",
		    NULL);
	cr_assert_str_eq(openrdma_default_interface(), "cfg0");
	cr_assert(device_exists("cfg0"));
	env_set("OPENRDMA_DEFAULT_INTERFACE", "testplug0");
	cr_assert_str_eq(openrdma_default_interface(), "testplug0",
			 "the environment beats the file");
}

/* ------------------------------------------------------------------ */
/* The public functions                                               */
/* ------------------------------------------------------------------ */

Test(registry, default_interface_is_first_device)
{
	struct openrdma_device **list;
	int num;

	use_plugin();
	cr_assert_eq(openrdma_device_list_get(&list, &num), 0);
	cr_assert_geq(num, 1);
	cr_assert_str_eq(openrdma_default_interface(), list[0]->name);
	openrdma_device_list_free(list);
}

Test(registry, device_list_without_count)
{
	struct openrdma_device **list;
	int n = 0;

	use_plugin();
	cr_assert_eq(openrdma_device_list_get(&list, NULL), 0);
	while (list[n])
		n++;
	cr_assert_geq(n, 1);
	openrdma_device_list_free(list);
	openrdma_device_list_free(NULL);
}

Test(registry, bad_input)
{
	struct openrdma_transport_info *tl;
	struct openrdma_device *dev = NULL;
	int num;

	use_plugin();
	cr_assert_eq(openrdma_device_list_get(NULL, &num), -OPENRDMA_EINVAL);
	cr_assert_eq(openrdma_device_find(NULL, &dev), -OPENRDMA_EINVAL);
	cr_assert_eq(openrdma_device_find("testplug0", NULL), -OPENRDMA_EINVAL);
	cr_assert_eq(openrdma_device_find("nosuch0", &dev), -OPENRDMA_ENODEV);
	cr_assert_eq(openrdma_device_find("", &dev), -OPENRDMA_ENODEV);
	cr_assert_null(dev, "no output on failure");
	cr_assert_null(openrdma_device_name(NULL));
	cr_assert_null(openrdma_device_transport_name(NULL));
	cr_assert_null(openrdma_device_param(NULL, "x"));
	cr_assert_eq(openrdma_device_find("testplug0", &dev), 0);
	cr_assert_null(openrdma_device_param(dev, NULL));
	cr_assert_eq(openrdma_transport_info_list(NULL, &num),
		     -OPENRDMA_EINVAL);
	cr_assert_eq(openrdma_transport_info_list(&tl, NULL), -OPENRDMA_EINVAL);
	cr_assert_eq(openrdma_probe_device_add(NULL, "x", "y", 1, NULL, NULL),
		     -OPENRDMA_EINVAL);
	openrdma_probe_explain(NULL, "ignored");
	openrdma_transport_info_free(NULL, 0);
}

Test(registry, version)
{
	unsigned int major, minor, patch;

	cr_assert_str_eq(openrdma_version(), OPENRDMA_VERSION_STRING);
	cr_assert_eq(sscanf(openrdma_version(), "%u.%u.%u", &major, &minor,
			    &patch),
		     3);
}

Test(registry, fini_then_rebuild)
{
	char *dir = tmpdir_make();
	struct infos in;
	char flag[512];

	use_plugin();
	snprintf(flag, sizeof(flag), "%s/fini-called", dir);
	env_set("OPENRDMA_TESTPLUG_FINI", flag);
	cr_assert(device_exists("testplug0"));
	/* The list outlives the registry: it is a copy. */
	in = infos_get();
	registry_fini();
	cr_assert_eq(access(flag, F_OK), 0, "fini() was not called");
	cr_assert(info_find(in, "testplug", NULL)->loaded);
	openrdma_transport_info_free(in.list, in.num);
	registry_fini(); /* twice is harmless */

	cr_assert_eq(unlink(flag), 0);
	cr_assert(device_exists("testplug0"), "built again on use");
	registry_fini();
	cr_assert_eq(access(flag, F_OK), 0);
}

Test(registry, probe_reentry_refused)
{
	const struct openrdma_transport_info *ti;
	struct infos in;

	use_plugin();
	/* The plugin's probe asks for the device list: EBUSY, not a hang. */
	env_set("OPENRDMA_TESTPLUG_REENTER", "1");
	in = infos_get();
	ti = info_find(in, "testplug", NULL);
	cr_assert_str_eq(ti->status, "no device: the device list said EBUSY");
	openrdma_transport_info_free(in.list, in.num);
}

#define RACERS 8

static void *racer(void *arg)
{
	struct openrdma_device **list;
	int *num = arg;

	if (openrdma_device_list_get(&list, num))
		*num = -1;
	else
		openrdma_device_list_free(list);
	return NULL;
}

Test(registry, concurrent_first_use)
{
	pthread_t threads[RACERS];
	int num[RACERS], i;

	use_plugin();
	for (i = 0; i < RACERS; i++)
		cr_assert_eq(pthread_create(&threads[i], NULL, racer, &num[i]),
			     0);
	for (i = 0; i < RACERS; i++)
		pthread_join(threads[i], NULL);
	/* One build, seen whole by every thread. */
	for (i = 0; i < RACERS; i++) {
		cr_assert_geq(num[i], 1);
		cr_assert_eq(num[i], num[0]);
	}
}

static int dummy_open(struct openrdma_device *dev,
		      struct openrdma_context **ctx_out)
{
	return -OPENRDMA_EOPNOTSUPP;
}

/* Registers desc in a registry of its own; returns rt's status. */
static const char *check_desc(struct registry *reg,
			      const struct openrdma_transport *desc, int expect)
{
	struct registry_transport *rt;

	rt = registry_transport_new(reg, "file_name", "built-in");
	cr_assert_not_null(rt);
	cr_assert_eq(registry_transport_register(reg, rt, desc), expect, "%s",
		     rt->status ? rt->status : "");
	return rt->status ? rt->status : "";
}

Test(registry, descriptor_checks)
{
	static const struct openrdma_transport_ops ops;
	const struct openrdma_transport good = {
		.abi_version = OPENRDMA_TRANSPORT_ABI,
		.size = sizeof(good),
		.name = "good",
		.device_open = dummy_open,
		.ops = &ops,
	};
	struct openrdma_transport desc;
	struct registry reg;
	char expect[80];

	memset(&reg, 0, sizeof(reg));
	cr_assert_str_eq(check_desc(&reg, &good, 0), "");
	cr_assert_str_eq(check_desc(&reg, &good, -OPENRDMA_EEXIST),
			 "duplicate of built-in good");

	desc = good;
	desc.name = "other";
	desc.size = 8;
	snprintf(expect, sizeof(expect),
		 "descriptor of 8 bytes, expected at least %zu", sizeof(desc));
	cr_assert_str_eq(check_desc(&reg, &desc, -OPENRDMA_EABI), expect);
	desc.size = sizeof(desc) + 16; /* a newer, bigger descriptor is fine */
	desc.ops = NULL;
	cr_assert_str_eq(check_desc(&reg, &desc, -OPENRDMA_EINVAL),
			 "no operations table");
	desc.ops = &ops;
	desc.device_open = NULL;
	cr_assert_str_eq(check_desc(&reg, &desc, -OPENRDMA_EINVAL),
			 "no device_open");
	desc.device_open = dummy_open;
	desc.name = NULL;
	cr_assert_eq(strncmp(check_desc(&reg, &desc, -OPENRDMA_EINVAL),
			     "invalid name \"\"", 15),
		     0);
	desc.name = "other";
	desc.abi_version = 0;
	cr_assert_str_eq(check_desc(&reg, &desc, -OPENRDMA_EABI),
			 "ABI version 0, expected 2");
	desc.abi_version = OPENRDMA_TRANSPORT_ABI;
	reg.filter = "good";
	cr_assert_str_eq(check_desc(&reg, &desc, -OPENRDMA_EPERM),
			 "excluded by OPENRDMA_TRANSPORTS");
	while (reg.transports)
		registry_transport_free(&reg, reg.transports);
}

/* ------------------------------------------------------------------ */
/* openrdma-info                                                      */
/* ------------------------------------------------------------------ */

/* Runs openrdma-info with args; returns its exit status, output in out. */
static int info_run(const char *args, char *out, size_t size)
{
	char cmd[1024];
	size_t n = 0;
	FILE *fp;
	int status;

	cr_assert_eq(access(TEST_INFO_TOOL, X_OK), 0, "not built: %s",
		     TEST_INFO_TOOL);
	snprintf(cmd, sizeof(cmd), "%s %s 2>&1", TEST_INFO_TOOL, args);
	fp = popen(cmd, "r");
	cr_assert_not_null(fp);
	while (n + 1 < size && !feof(fp))
		n += fread(out + n, 1, size - 1 - n, fp);
	out[n] = '\0';
	status = pclose(fp);
	cr_assert(WIFEXITED(status), "%s: %s", cmd, out);
	return WEXITSTATUS(status);
}

Test(info_tool, lists_transports_and_interfaces)
{
	static char out[65536];

	use_plugin();
	cr_assert_eq(info_run("", out, sizeof(out)), 0, "%s", out);
	cr_assert(strstr(out, "testplug   loaded   ok\n"), "%s", out);
	cr_assert(strstr(out, "source: " PLUGIN_PATH "\n"), "%s", out);
	cr_assert(strstr(out, "  testplug0    transport testplug"), "%s", out);
	env_set("OPENRDMA_TRANSPORTS", "^testplug");
	cr_assert_eq(info_run("", out, sizeof(out)), 0, "%s", out);
	cr_assert(strstr(out, "skipped  excluded by OPENRDMA_TRANSPORTS\n"),
		  "%s", out);
}

Test(info_tool, json)
{
	static char out[65536];

	use_plugin();
	env_set("OPENRDMA_TESTPLUG_NODEV", "1");
	cr_assert_eq(info_run("--json -v -p", out, sizeof(out)), 0, "%s", out);
	cr_assert_eq(out[0], '{', "%s", out);
	cr_assert(
		strstr(out,
		       "\"status\": \"no device: no test device (OPENRDMA_TESTPLUG_NODEV is set)\""),
		"%s", out);
	cr_assert(strstr(out, "\"env\": \"OPENRDMA_TESTPLUG_FLAG\""), "%s",
		  out);
	cr_assert(strstr(out, "\"env\": \"OPENRDMA_LOG_LEVEL\""), "%s", out);
	cr_assert(strstr(out, "\"value\": null"), "unset is null: %s", out);
	/* The help text's quotes come out escaped. */
	cr_assert(strstr(out, "(\\\"tcp,shm\\\")"), "%s", out);
}

Test(info_tool, one_device)
{
	static char out[65536];

	use_plugin();
	/* The test plugin cannot open its device: reported, status 1. */
	cr_assert_eq(info_run("-d testplug0", out, sizeof(out)), 1, "%s", out);
	cr_assert(strstr(out, "open failed: Operation not supported"), "%s",
		  out);
	cr_assert_eq(info_run("-d nosuch0", out, sizeof(out)), 1, "%s", out);
	cr_assert(strstr(out, "no interface \"nosuch0\""), "%s", out);
}

Test(info_tool, usage)
{
	static char out[4096];

	use_plugin();
	cr_assert_eq(info_run("--bogus", out, sizeof(out)), 2, "%s", out);
	cr_assert(strstr(out, "Usage: openrdma-info"), "%s", out);
	cr_assert_eq(info_run("extra", out, sizeof(out)), 2, "%s", out);
	cr_assert_eq(info_run("-d", out, sizeof(out)), 2, "%s", out);
	cr_assert_eq(info_run("-h", out, sizeof(out)), 0, "%s", out);
	cr_assert(strstr(out, "--json"), "%s", out);
	cr_assert_eq(info_run("--version", out, sizeof(out)), 0, "%s", out);
	cr_assert_str_eq(out, "openrdma-info " OPENRDMA_VERSION_STRING "\n");
}
