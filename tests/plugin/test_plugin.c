/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * A transport plugin for the registry tests.  Its probe adds one interface,
 * testplug0, and it implements no op at all, so registration fills every
 * one with a stub.  The environment turns it into the faulty plugins the
 * tests need:
 *
 *   OPENRDMA_TESTPLUG_ABI=n      the descriptor claims ABI version n
 *   OPENRDMA_TESTPLUG_NAME=s     the descriptor is named s
 *   OPENRDMA_TESTPLUG_NODEV=1    the probe finds nothing and says why
 *   OPENRDMA_TESTPLUG_FAIL=1     the probe fails
 *   OPENRDMA_TESTPLUG_REENTER=1  the probe asks for the device list
 *   OPENRDMA_TESTPLUG_FINI=path  fini() creates that file
 */
#include "config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openrdma/transport.h>

static const struct openrdma_param_def testplug_params[] = {
	{ "flag", OPENRDMA_PARAM_BOOL, "no", "a boolean for the tests" },
	{ "depth", OPENRDMA_PARAM_SIZE, "4k", "a size for the tests" },
	{ 0 },
};

/* Every op left NULL on purpose. */
static const struct openrdma_transport_ops testplug_ops;

static int testplug_probe(struct openrdma_probe *probe)
{
	char *priv;
	int ret;

	if (getenv("OPENRDMA_TESTPLUG_FAIL")) {
		openrdma_probe_explain(probe, "told to fail");
		return -OPENRDMA_EIO;
	}
	if (getenv("OPENRDMA_TESTPLUG_REENTER")) {
		struct openrdma_device **list;

		ret = openrdma_device_list_get(&list, NULL);
		if (!ret)
			openrdma_device_list_free(list);
		openrdma_probe_explain(probe, "the device list said %s",
				       ret == -OPENRDMA_EBUSY ? "EBUSY" : "?");
		return 0;
	}
	if (getenv("OPENRDMA_TESTPLUG_NODEV")) {
		openrdma_probe_explain(probe, "no test device (%s)",
				       "OPENRDMA_TESTPLUG_NODEV is set");
		return 0;
	}
	/* Something to free, so leak checkers see free_priv called. */
	priv = strdup("testplug");
	if (!priv)
		return -OPENRDMA_ENOMEM;
	ret = openrdma_probe_device_add(probe, "testplug0", "tp0", 1, priv,
					free);
	if (ret)
		free(priv);
	return ret;
}

static int testplug_device_open(struct openrdma_device *dev,
				struct openrdma_context **ctx_out)
{
	return -OPENRDMA_EOPNOTSUPP;
}

static void testplug_fini(void)
{
	const char *path = getenv("OPENRDMA_TESTPLUG_FINI");
	int fd;

	if (!path)
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
}

static const struct openrdma_transport testplug_transport = {
	.abi_version = OPENRDMA_TRANSPORT_ABI,
	.size = sizeof(struct openrdma_transport),
	.name = "testplug",
	.description = "registry test plugin",
	.probe = testplug_probe,
	.device_open = testplug_device_open,
	.fini = testplug_fini,
	.ops = &testplug_ops,
	.params = testplug_params,
};

static const struct openrdma_transport *testplug_descriptor(void)
{
	static struct openrdma_transport variant;
	const char *abi = getenv("OPENRDMA_TESTPLUG_ABI");
	const char *name = getenv("OPENRDMA_TESTPLUG_NAME");

	if (!abi && !name)
		return &testplug_transport;
	variant = testplug_transport;
	if (abi)
		variant.abi_version = (uint32_t)strtoul(abi, NULL, 0);
	if (name)
		variant.name = name;
	return &variant;
}

/* The entry point's prototype, which OPENRDMA_TRANSPORT_DEFINE lacks. */
const struct openrdma_transport *OPENRDMA_CONCAT(openrdma_transport_ini_v,
						 OPENRDMA_TRANSPORT_ABI)(void);

OPENRDMA_TRANSPORT_DEFINE(testplug, *testplug_descriptor());
