/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Part of libopenrdma.so, not of the DAT provider: releases the core's
 * process-wide state when the shared library itself is unmapped.
 *
 * A process that uses OpenRDMA only through DAT gets libopenrdma with the
 * provider, and libdat2 unloads both (dat_provider_fini, then dlclose)
 * once the last IA is closed.  Without this the registry and parameter
 * tables built on the first open would be lost with the mapping, once per
 * open/close cycle; the same for the config file read with them.
 *
 * The destructor also runs at process exit, when threads may still be
 * inside the library: the state is released only when no context is open
 * and no engine thread runs (transports run threads only for open
 * contexts), so that nothing of the library's own can touch it afterwards.
 * Otherwise it stays, as libraries that start threads leave it at exit.
 */
#include <openrdma/log.h>

#include "core/core.h"
#include "core/evd/evd.h"
#include "core/param.h"
#include "registry/conf.h"
#include "registry/registry.h"

static void __attribute__((destructor)) unload(void)
{
	/* none may run the library's code once it is unmapped */
	if (!core_ctx_count())
		core_evd_reap();
	if (core_ctx_count() || core_evd_engine_threads()) {
		openrdma_dbg("core", "unloaded in use: state kept");
		return;
	}
	registry_fini();
	core_param_fini();
	/* last: the parameters kept pointers into it */
	registry_conf_fini();
}
