/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * IA, registry and any-handle calls: open, query, close (graceful and
 * abrupt), the registry's explanations and subtypes, consumer contexts,
 * handle types, error strings.
 */
#include "config.h"

#include <dirent.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tests/dat/test_api_common.h"

Test(dat_ia, open_query_close)
{
	struct t_ia t;
	DAT_EVD_HANDLE async = NULL;
	DAT_IA_ATTR attr;
	DAT_PROVIDER_ATTR pattr;
	int i;
	bool read_attr = false;

	t_ia_open(&t);
	cr_assert_str_eq(t.attr.adapter_name, t_iface());
	cr_assert_not_null(t.attr.ia_address_ptr);
	cr_assert(t.attr.ia_address_ptr->sa_family == AF_INET ||
		  t.attr.ia_address_ptr->sa_family == AF_INET6);
	cr_assert_gt(t.attr.max_eps, 0);
	cr_assert_gt(t.attr.max_evd_qlen, 0);
	cr_assert_gt(t.attr.max_iov_segments_per_dto, 0);
	cr_assert_eq(t.attr.extension_supported, DAT_EXTENSION_IB);
	cr_assert_eq(t.attr.extension_version, DAT_IB_EXTENSION_VERSION);
	cr_assert_str_eq(t.pattr.provider_name, "OpenRDMA");
	cr_assert_eq(t.pattr.dapl_version_major, 2);
	cr_assert_eq(t.pattr.dapl_version_minor, 0);
	cr_assert_eq(t.pattr.is_thread_safe, DAT_FALSE);
	cr_assert_gt(t.pattr.max_private_data_size, 0);
	for (i = 0; i < t.pattr.num_provider_specific_attr; i++)
		if (!strcmp(t.pattr.provider_specific_attr[i].name,
			    "DAT_IB_RDMA_READ"))
			read_attr =
				!strcmp(t.pattr.provider_specific_attr[i].value,
					"TRUE");
	cr_assert(read_attr, "DAT_IB_RDMA_READ is not TRUE");

	/* the async EVD comes back from the query; masks of 0 need no struct */
	T_OK(dat_ia_query(t.ia, &async, 0, NULL, 0, NULL));
	cr_assert_eq(async, t.async);
	T_ERR(dat_ia_query(t.ia, NULL, DAT_IA_FIELD_ALL, NULL, 0, NULL),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);
	T_ERR(dat_ia_query(t.ia, NULL, 0, NULL, DAT_PROVIDER_FIELD_ALL, NULL),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG6);
	T_OK(dat_ia_query(t.ia, NULL, DAT_IA_FIELD_IA_ADDRESS_PTR, &attr,
			  DAT_PROVIDER_FIELD_PROVIDER_NAME, &pattr));
	/* the async EVD belongs to the IA */
	T_ERR(dat_evd_free(t.async), DAT_INVALID_STATE,
	      DAT_INVALID_STATE_EVD_IN_USE);
	t_ia_close(&t);
	T_ERR(dat_ia_close(t.ia, DAT_CLOSE_ABRUPT_FLAG), DAT_INVALID_HANDLE,
	      DAT_INVALID_HANDLE_IA);
}

static int mapped_one(struct dl_phdr_info *info, size_t size, void *name)
{
	return strstr(info->dlpi_name, name) != NULL;
}

/* Whether a shared object whose path contains name is mapped. */
static bool mapped(const char *name)
{
	return dl_iterate_phdr(mapped_one, (void *)name) != 0;
}

static int threads(void)
{
	struct dirent *de;
	DIR *dir;
	int n = 0;

	dir = opendir("/proc/self/task");
	cr_assert_not_null(dir);
	while ((de = readdir(dir)))
		n += de->d_name[0] != '.';
	closedir(dir);
	return n;
}

/*
 * The threads once those that ended have left: a joined thread is still
 * listed for a moment after pthread_join() returns (the kernel clears its
 * id before it releases the task), longer on a loaded machine.
 */
static int threads_settled(int want)
{
	int i, n = threads();

	for (i = 0; i < 2000 && n != want; i++) {
		usleep(1000);
		n = threads();
	}
	return n;
}

/*
 * The registry unloads the provider once its last IA is closed, and
 * libopenrdma, which nothing else here uses, goes with it: each cycle
 * starts from nothing and leaves no thread behind and, as the sanitizer
 * builds' leak check shows, no memory (libopenrdma releases its registry,
 * parameters and config file when unloaded).
 */
static void *nothing(void *arg)
{
	*(pid_t *)arg = (pid_t)syscall(SYS_gettid);
	return NULL;
}

/*
 * The process's threads, once a sanitizer's runtime has started its own
 * (it does with the first thread made) and that first thread has gone.
 */
static int threads_base(void)
{
	char path[64];
	pid_t tid = 0;
	pthread_t t;
	int i;

	cr_assert_eq(pthread_create(&t, NULL, nothing, &tid), 0);
	pthread_join(t, NULL);
	snprintf(path, sizeof(path), "/proc/self/task/%d", (int)tid);
	for (i = 0; i < 2000 && !access(path, F_OK); i++)
		usleep(1000);
	return threads();
}

/*
 * In sanitizer builds, fails the test on a leak (the report says which):
 * a leak in a Criterion test's process is only printed, the test passes.
 */
int __lsan_do_recoverable_leak_check(void) __attribute__((weak));

static void no_leaks(void)
{
	if (__lsan_do_recoverable_leak_check)
		cr_assert_eq(__lsan_do_recoverable_leak_check(), 0,
			     "leaks: see the LeakSanitizer report");
}

Test(dat_ia, unload_cycles)
{
	struct t_pair p;
	int before, i;

	before = threads_base();

	cr_assert(!mapped("/libopenrdma.so"), "libopenrdma linked in");
	for (i = 0; i < 3; i++) {
		t_pair_setup(&p, NULL);
		t_pair_connect(&p);
		cr_assert(mapped("/libopenrdma-dat.so"));
		cr_assert(mapped("/libopenrdma.so"));
		t_pair_teardown(&p);
		cr_assert(!mapped("/libopenrdma-dat.so"), "cycle %d", i);
		cr_assert(!mapped("/libopenrdma.so"), "cycle %d", i);
		cr_assert_eq(threads_settled(before), before, "cycle %d", i);
	}
	no_leaks();
}

/*
 * The same with a config file (openrdma_config(5)) and a drop-in, whose
 * settings and interface lines are read on each cycle's first open:
 * libopenrdma frees them as well when unloaded.
 */
Test(dat_ia, unload_cycles_config)
{
	char dir[] = "/tmp/openrdma-dat-unload-XXXXXX";
	char path[sizeof(dir) + 64], dropin[sizeof(dir) + 64];
	char name[] = "ofa-openrdma-unload_conf1";
	DAT_EVD_HANDLE async;
	DAT_IA_HANDLE ia;
	DAT_IA_ATTR attr;
	struct t_pair p;
	FILE *fp;
	int i;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/openrdma.conf", dir);
	fp = fopen(path, "w");
	cr_assert_not_null(fp);
	fprintf(fp, "# settings and an interface\n"
		    "log_level = warn\n"
		    "tcp.nodelay = yes\n"
		    "interface unload_conf0 transport=self device=self\n");
	fclose(fp);
	snprintf(dropin, sizeof(dropin), "%s/interfaces.d", dir);
	cr_assert_eq(mkdir(dropin, 0700), 0);
	snprintf(dropin, sizeof(dropin), "%s/interfaces.d/a.conf", dir);
	fp = fopen(dropin, "w");
	cr_assert_not_null(fp);
	fprintf(fp, "interface unload_conf1 transport=self device=self\n");
	fclose(fp);
	setenv("OPENRDMA_CONFIG", path, 1);

	for (i = 0; i < 3; i++) {
		t_pair_setup(&p, NULL);
		t_pair_connect(&p);
		cr_assert(mapped("/libopenrdma.so"));
		/* read again on each cycle: the drop-in's interface opens */
		async = NULL;
		T_OK(dat_ia_open(name, 8, &async, &ia));
		T_OK(dat_ia_query(ia, NULL, DAT_IA_FIELD_ALL, &attr, 0, NULL));
		cr_assert_str_eq(attr.adapter_name, "unload_conf1");
		T_OK(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
		t_pair_teardown(&p);
		cr_assert(!mapped("/libopenrdma.so"), "cycle %d", i);
	}
	no_leaks();
	unlink(dropin);
	snprintf(dropin, sizeof(dropin), "%s/interfaces.d", dir);
	rmdir(dropin);
	unlink(path);
	rmdir(dir);
}

Test(dat_ia, open_errors)
{
	char unknown[] = "ofa-openrdma-no-such-interface0";
	char nobody[] = "no-such-ia-name";
	char longname[300];
	DAT_EVD_HANDLE async = NULL;
	DAT_IA_HANDLE ia;

	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	T_ERR(dat_ia_open(NULL, 8, &async, &ia), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG1);
	T_ERR(dat_ia_open(longname, 8, &async, &ia), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG1);
	T_ERR(dat_ia_open(t_ia_name(), 8, &async, NULL), DAT_INVALID_HANDLE,
	      DAT_INVALID_HANDLE_IA);
	T_ERR(dat_ia_open(nobody, 8, &async, &ia), DAT_PROVIDER_NOT_FOUND,
	      DAT_NAME_NOT_REGISTERED);
	/* the provider is found, the interface is not */
	T_ERR(dat_ia_open(unknown, 8, &async, &ia), DAT_INVALID_ADDRESS, -1);
	T_ERR(dat_ia_open(t_ia_name(), 0, &async, &ia), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG2);
	async = (DAT_EVD_HANDLE)0x1234;
	T_ERR(dat_ia_open(t_ia_name(), 8, &async, &ia), DAT_INVALID_HANDLE,
	      DAT_INVALID_HANDLE_EVD_ASYNC);
	/* OpenRDMA's provider is DAT 2.0 only */
	async = NULL;
	T_ERR(dat_ia_openv(t_ia_name(), 8, &async, &ia, 1, 2, DAT_FALSE),
	      DAT_PROVIDER_NOT_FOUND, DAT_NAME_NOT_REGISTERED);
}

static char conf_path[] = "/tmp/openrdma-dat-conf-XXXXXX";

/* A dat.conf of the test's own, read on the registry's first use. */
static void conf_use(const char *text)
{
	int fd = mkstemp(conf_path);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	setenv("DAT_OVERRIDE", conf_path, 1);
}

/* The tests' .fini: the file goes whatever the test's outcome. */
static void conf_drop(void)
{
	if (!strstr(conf_path, "XXXXXX"))
		unlink(conf_path);
}

Test(dat_ia, registry_explains_each_line, .fini = conf_drop)
{
	char name[] = "dat-test-ia";
	char conf[1024];
	DAT_EVD_HANDLE async = NULL;
	DAT_IA_HANDLE ia;

	snprintf(conf, sizeof(conf),
		 "# a comment line\n"
		 "dat-test-ia u1.2 nonthreadsafe default %s "
		 "dapl.2.0 \"%s 0\" \"\"\n"
		 "dat-test-ia u2.1 nonthreadsafe default %s "
		 "dapl.2.0 \"%s 0\" \"\"\n",
		 T_PROVIDER_LIB, t_iface(), T_PROVIDER_LIB, t_iface());
	conf_use(conf);
	T_ERR(dat_ia_open(name, 8, &async, &ia), DAT_PROVIDER_NOT_FOUND,
	      DAT_MINOR_NOT_FOUND);
}

Test(dat_ia, registry_thread_safety_key, .fini = conf_drop)
{
	char name[] = "dat-test-ia";
	char conf[512];
	DAT_EVD_HANDLE async = NULL;
	DAT_IA_HANDLE ia;

	snprintf(conf, sizeof(conf),
		 "dat-test-ia u2.0 threadsafe default %s "
		 "dapl.2.0 \"%s 0\" \"\"\n",
		 T_PROVIDER_LIB, t_iface());
	conf_use(conf);
	T_ERR(dat_ia_open(name, 8, &async, &ia), DAT_PROVIDER_NOT_FOUND,
	      DAT_THREAD_SAFETY_NOT_FOUND);
	/* asking for a thread-safe provider finds it */
	async = NULL;
	T_OK(dat_ia_openv(name, 8, &async, &ia, 2, 0, DAT_TRUE));
	T_OK(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

Test(dat_ia, registry_major_missing_library_nondefault, .fini = conf_drop)
{
	char name[] = "dat-test-ia";
	char conf[1024];
	DAT_EVD_HANDLE async = NULL;
	DAT_IA_HANDLE ia;

	snprintf(conf, sizeof(conf),
		 "dat-test-ia u1.2 nonthreadsafe default x.so dapl.2.0 \"\" "
		 "\"\"\n"
		 "dat-test-ia u2.0 nonthreadsafe nondefault "
		 "%s dapl.2.0 \"%s 0\" \"\"\n"
		 "dat-test-ia u2.0 nonthreadsafe default libmissing-dat.so.2 "
		 "dapl.2.0 \"%s 0\"\n",
		 T_PROVIDER_LIB, t_iface(), t_iface());
	conf_use(conf);
	T_ERR(dat_ia_open(name, 8, &async, &ia), DAT_PROVIDER_NOT_FOUND,
	      DAT_MAJOR_NOT_FOUND);
}

Test(dat_ia, registry_conf_line_opens, .fini = conf_drop)
{
	char name[] = "dat-test-ia";
	char conf[512];
	DAT_PROVIDER_INFO info[4], *list[4];
	DAT_EVD_HANDLE async = NULL;
	DAT_IA_HANDLE ia;
	DAT_COUNT n;
	int i;

	snprintf(conf, sizeof(conf),
		 "dat-test-ia u2.0 nonthreadsafe default %s "
		 "dapl.2.0 \"%s 0\" \"\"\n"
		 "dat-other u2.0 nonthreadsafe default %s "
		 "dapl.2.0 \"%s 0\" \"\"\n",
		 T_PROVIDER_LIB, t_iface(), T_PROVIDER_LIB, t_iface());
	conf_use(conf);
	for (i = 0; i < 4; i++)
		list[i] = &info[i];
	T_ERR(dat_registry_list_providers(0, &n, list), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG1);
	cr_assert_eq(n, 2);
	T_ERR(dat_registry_list_providers(4, NULL, list), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG2);
	T_ERR(dat_registry_list_providers(4, &n, NULL), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG3);
	T_OK(dat_registry_list_providers(4, &n, list));
	cr_assert_eq(n, 2);
	cr_assert_str_eq(info[0].ia_name, "dat-test-ia");
	cr_assert_eq(info[0].dapl_version_major, 2);
	cr_assert_str_eq(info[1].ia_name, "dat-other");
	T_OK(dat_registry_list_providers(1, &n, list));
	cr_assert_eq(n, 1);

	T_OK(dat_ia_open(name, 8, &async, &ia));
	T_OK(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

Test(dat_ia, providers_related)
{
	char a[] = "ofa-openrdma-self0", b[] = "ofa-openrdma-self1";
	char none[] = "no-such-ia";
	DAT_HA_RELATIONSHIP rel;

	T_OK(dat_registry_providers_related(a, a, &rel));
	cr_assert_eq(rel, DAT_HA_TRUE);
	T_OK(dat_registry_providers_related(a, b, &rel));
	cr_assert_eq(rel, DAT_HA_FALSE);
	T_ERR(dat_registry_providers_related(a, none, &rel),
	      DAT_PROVIDER_NOT_FOUND, -1);
	T_ERR(dat_registry_providers_related(NULL, a, &rel),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG1);
	T_ERR(dat_registry_providers_related(a, a, NULL), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG3);
}

/*
 * The calls that take any handle, given memory that starts with the
 * provider's table as every handle does but is no object of it: the
 * provider refuses it with the subtype of the first argument.
 */
Test(dat_ia, any_handle_not_an_object)
{
	void *fake[16] = { 0 };
	DAT_HANDLE_TYPE type;
	DAT_CONTEXT ctx;
	struct t_ia t;

	t_ia_open(&t);
	fake[0] = *(void **)t.pz;
	ctx.as_64 = 7;
	T_ERR(dat_set_consumer_context((DAT_HANDLE)fake, ctx),
	      DAT_INVALID_HANDLE, DAT_INVALID_HANDLE1);
	T_ERR(dat_get_consumer_context((DAT_HANDLE)fake, &ctx),
	      DAT_INVALID_HANDLE, DAT_INVALID_HANDLE1);
	T_ERR(dat_get_handle_type((DAT_HANDLE)fake, &type), DAT_INVALID_HANDLE,
	      DAT_INVALID_HANDLE1);
	cr_assert_eq(ctx.as_64, 7);
	/* the real one is unchanged */
	T_OK(dat_get_consumer_context(t.pz, &ctx));
	cr_assert_eq(ctx.as_64, 0);
	t_ia_close(&t);
}

/*
 * Slot 79 (ia_ha_related_func): no libdat2 function calls it, so it is
 * reached through DAT_IA_HA_RELATED with the provider's own IA pointer,
 * as a query returns it.  Two names are related when they name one
 * interface.
 */
Test(dat_ia, ha_related_slot)
{
	char other[] = "ofa-openrdma-no-such-interface0";
	DAT_BOOLEAN answer = DAT_FALSE;
	DAT_PZ_PARAM param;
	DAT_IA_HANDLE ia;
	struct t_ia t;

	t_ia_open(&t);
	T_OK(dat_pz_query(t.pz, DAT_PZ_FIELD_ALL, &param));
	ia = param.ia_handle;
	T_OK(DAT_IA_HA_RELATED(ia, t_ia_name(), &answer));
	cr_assert_eq(answer, DAT_TRUE);
	T_OK(DAT_IA_HA_RELATED(ia, other, &answer));
	cr_assert_eq(answer, DAT_FALSE);
	T_ERR(DAT_IA_HA_RELATED(ia, NULL, &answer), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG2);
	T_ERR(DAT_IA_HA_RELATED(ia, t_ia_name(), NULL), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG3);
	T_ERR(DAT_IA_HA_RELATED(t.pz, t_ia_name(), &answer), DAT_INVALID_HANDLE,
	      DAT_INVALID_HANDLE_IA);
	t_ia_close(&t);
}

Test(dat_ia, async_exists_then_created)
{
	DAT_EVD_HANDLE async = DAT_EVD_ASYNC_EXISTS, evd, evd2, q = NULL;
	DAT_IA_HANDLE ia;

	T_OK(dat_ia_open(t_ia_name(), 8, &async, &ia));
	cr_assert_eq(async, DAT_EVD_ASYNC_EXISTS);
	T_OK(dat_ia_query(ia, &q, 0, NULL, 0, NULL));
	cr_assert_null(q);
	T_OK(dat_evd_create(ia, 8, NULL, DAT_EVD_ASYNC_FLAG, &evd));
	T_OK(dat_ia_query(ia, &q, 0, NULL, 0, NULL));
	cr_assert_eq(q, evd);
	/* one async EVD per IA */
	T_ERR(dat_evd_create(ia, 8, NULL, DAT_EVD_DEFAULT_FLAG, &evd2),
	      DAT_INVALID_STATE, DAT_INVALID_STATE_EVD_ASYNC);
	/* the consumer's async EVD is the consumer's to free */
	T_OK(dat_evd_free(evd));
	T_OK(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

Test(dat_ia, close_graceful_and_abrupt)
{
	DAT_EVD_HANDLE evd;
	DAT_EP_HANDLE ep;
	DAT_CNO_HANDLE cno;
	struct t_mem m;
	struct t_ia t;

	t_ia_open(&t);
	T_ERR(dat_ia_close(t.ia, (DAT_CLOSE_FLAGS)7), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG2);
	T_OK(dat_cno_create(t.ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	T_OK(dat_evd_create(t.ia, 8, cno,
			    DAT_EVD_DEFAULT_FLAG & ~DAT_EVD_ASYNC_FLAG, &evd));
	T_OK(dat_ep_create(t.ia, t.pz, evd, evd, evd, NULL, &ep));
	t_mem_make(&t, &m, 4096);
	T_ERR(dat_ia_close(t.ia, DAT_CLOSE_GRACEFUL_FLAG), DAT_INVALID_STATE,
	      DAT_INVALID_STATE_IA_IN_USE);
	/* everything goes, users before what they use */
	T_OK(dat_ia_close(t.ia, DAT_CLOSE_ABRUPT_FLAG));
	free(m.buf);
	/* the index is free again */
	T_ERR(dat_ia_query(t.ia, NULL, 0, NULL, 0, NULL), DAT_INVALID_HANDLE,
	      DAT_INVALID_HANDLE_IA);
}

Test(dat_ia, two_ias_and_ha_related)
{
	DAT_EVD_HANDLE a1 = NULL, a2 = NULL;
	DAT_IA_HANDLE ia1, ia2;

	T_OK(dat_ia_open(t_ia_name(), 8, &a1, &ia1));
	T_OK(dat_ia_open(t_ia_name(), 8, &a2, &ia2));
	cr_assert_neq(ia1, ia2);
	cr_assert_neq(a1, a2);
	T_OK(dat_ia_close(ia1, DAT_CLOSE_ABRUPT_FLAG));
	T_OK(dat_ia_close(ia2, DAT_CLOSE_ABRUPT_FLAG));
}

Test(dat_ia, consumer_context_and_handle_type)
{
	DAT_HANDLE_TYPE type;
	DAT_CONTEXT ctx, got;
	struct t_pair p;
	DAT_CNO_HANDLE cno;
	DAT_SRQ_ATTR sattr = { 4, 1, 0 };
	DAT_SRQ_HANDLE srq;
	DAT_RMR_HANDLE rmr = NULL;
	struct {
		DAT_HANDLE h;
		DAT_HANDLE_TYPE type;
	} all[12];
	int i, n = 0;

	t_pair_setup(&p, NULL);
	T_OK(dat_cno_create(p.t.ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	T_OK(dat_srq_create(p.t.ia, p.t.pz, &sattr, &srq));
	all[n].h = p.t.ia, all[n++].type = DAT_HANDLE_TYPE_IA;
	all[n].h = p.t.pz, all[n++].type = DAT_HANDLE_TYPE_PZ;
	all[n].h = p.mem[0].lmr, all[n++].type = DAT_HANDLE_TYPE_LMR;
	/* an interface without windows (siw) has no RMRs */
	if (p.t.attr.max_rmrs > 0) {
		T_OK(dat_rmr_create(p.t.pz, &rmr));
		all[n].h = rmr, all[n++].type = DAT_HANDLE_TYPE_RMR;
	}
	all[n].h = p.req[0], all[n++].type = DAT_HANDLE_TYPE_EVD;
	all[n].h = cno, all[n++].type = DAT_HANDLE_TYPE_CNO;
	all[n].h = p.ep[0], all[n++].type = DAT_HANDLE_TYPE_EP;
	all[n].h = srq, all[n++].type = DAT_HANDLE_TYPE_SRQ;
	all[n].h = p.psp, all[n++].type = DAT_HANDLE_TYPE_PSP;
	for (i = 0; i < n; i++) {
		T_OK(dat_get_handle_type(all[i].h, &type));
		cr_assert_eq(type, all[i].type, "handle %d: type %d", i, type);
		ctx.as_64 = 0x1000 + (uint64_t)i;
		T_OK(dat_set_consumer_context(all[i].h, ctx));
		T_OK(dat_get_consumer_context(all[i].h, &got));
		cr_assert_eq(got.as_64, ctx.as_64);
	}
	T_ERR(dat_get_handle_type(NULL, &type), DAT_INVALID_HANDLE, -1);
	T_ERR(dat_get_handle_type(p.ep[0], NULL), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG2);
	T_ERR(dat_get_consumer_context(p.ep[0], NULL), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG2);
	T_ERR(dat_set_consumer_context(NULL, ctx), DAT_INVALID_HANDLE, -1);
	if (rmr)
		T_OK(dat_rmr_free(rmr));
	T_OK(dat_srq_free(srq));
	T_OK(dat_cno_free(cno));
	t_pair_teardown(&p);
}

Test(dat_ia, strerror_names)
{
	const char *major = NULL, *minor = NULL;

	T_OK(dat_strerror(DAT_CLASS_ERROR | DAT_PROVIDER_NOT_FOUND |
				  DAT_NAME_NOT_REGISTERED,
			  &major, &minor));
	cr_assert_str_eq(major, "DAT_PROVIDER_NOT_FOUND");
	cr_assert_str_eq(minor, "DAT_NAME_NOT_REGISTERED");
	/* the bare type reads the same */
	T_OK(dat_strerror(DAT_QUEUE_EMPTY, &major, &minor));
	cr_assert_str_eq(major, "DAT_QUEUE_EMPTY");
	cr_assert_str_eq(minor, "");
	T_OK(dat_strerror(DAT_SUCCESS, &major, NULL));
	cr_assert_str_eq(major, "DAT_SUCCESS");
	T_OK(dat_strerror(DAT_NOT_IMPLEMENTED, &major, &minor));
	cr_assert_str_eq(major, "DAT_NOT_IMPLEMENTED");
	T_ERR(dat_strerror(0x3ffe0000, &major, &minor), DAT_INVALID_PARAMETER,
	      -1);
	cr_assert_str_eq(major, "unknown error");
}

Test(dat_ia, ia_index_is_no_other_handle)
{
	struct t_ia t;
	DAT_PZ_PARAM param;

	t_ia_open(&t);
	/* DAPL's libdat2 dereferences the index here; this registry refuses */
	T_ERR(dat_pz_query((DAT_PZ_HANDLE)t.ia, DAT_PZ_FIELD_ALL, &param),
	      DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	/* the provider's own IA pointer, from a query, works as an IA */
	T_OK(dat_pz_query(t.pz, DAT_PZ_FIELD_ALL, &param));
	T_OK(dat_ia_query(param.ia_handle, NULL, 0, NULL, 0, NULL));
	t_ia_close(&t);
}
