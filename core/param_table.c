/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The core's declared parameters.  Transports declare theirs in their
 * descriptor; openrdma-info -p lists both.
 */
#include "config.h"

#include <stddef.h>

#include "core/param.h"

const struct openrdma_param_def core_param_table[] = {
	{ "log_level", OPENRDMA_PARAM_STRING, "warn",
	  "log level: none, error, warn, info, debug, trace (or 0-5)" },
	{ "log_file", OPENRDMA_PARAM_STRING, "stderr",
	  "log destination: stderr, stdout or a file path (appended to)" },
	{ "config", OPENRDMA_PARAM_STRING, OPENRDMA_SYSCONFDIR "/openrdma.conf",
	  "path of the config file; drop-ins are read from interfaces.d/ next to it" },
	{ "transports", OPENRDMA_PARAM_STRING, NULL,
	  "comma list of the transports to use (\"tcp,shm\"), or to skip (\"^verbs\")" },
	{ "transport_path", OPENRDMA_PARAM_STRING, NULL,
	  "colon list of directories searched first for transport plugins" },
	{ "default_interface", OPENRDMA_PARAM_STRING, NULL,
	  "interface used when an application names none (default: the first one)" },
	{ "cb_threads", OPENRDMA_PARAM_INT, "0",
	  "worker threads that run event callbacks (0: number of online CPUs)" },
	{ "evd_spin_us", OPENRDMA_PARAM_INT, "0",
	  "microseconds a blocking wait polls before sleeping" },
	{ "inline_max", OPENRDMA_PARAM_INT, "128",
	  "longest IT-API send or RDMA write posted inline (0: none)" },
	{ 0 },
};
