/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* The parameters, who may connect, and whether single copies can work. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <openrdma/log.h>
#include <openrdma/param.h>

#include "transports/shm/shm.h"

static uint64_t pow2_ceil(uint64_t v)
{
	uint64_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

static uint64_t clamp(const char *name, uint64_t v, uint64_t lo, uint64_t hi)
{
	if (v >= lo && v <= hi)
		return v;
	openrdma_warn("shm", "%s %llu out of %llu-%llu", name,
		      (unsigned long long)v, (unsigned long long)lo,
		      (unsigned long long)hi);
	return v < lo ? lo : hi;
}

void shm_params_read(struct shm_params *par)
{
	uint64_t eager = 16384, data = 256 * 1024;
	int64_t entries = 256, scale = 100;
	const char *users = "";

	memset(par, 0, sizeof(*par));
	par->cma = true;
	openrdma_param_get_bool("shm", "cma", &par->cma);
	openrdma_param_get_bool("shm", "busy_poll", &par->busy_poll);
	openrdma_param_get_bool("shm", "ptracer_any", &par->ptracer_any);
	openrdma_param_get_size("shm", "eager_max", &eager);
	openrdma_param_get_int("shm", "ring_entries", &entries);
	openrdma_param_get_size("shm", "ring_data", &data);
	openrdma_param_get_int("shm", "rnr_timer_scale", &scale);
	openrdma_param_get_str("shm", "allow_users", &users);

	par->eager_max = clamp("eager_max", eager, SHM_INLINE_MAX, 1u << 30);
	par->ring_entries = (uint32_t)pow2_ceil(
		clamp("ring_entries", entries < 0 ? 0 : (uint64_t)entries, 16,
		      65536));
	par->ring_data = pow2_ceil(clamp("ring_data", data, 4096, 64u << 20));
	par->rnr_scale = (unsigned int)clamp(
		"rnr_timer_scale", scale < 0 ? 0 : (uint64_t)scale, 1, 10000);
	par->allow_users = users ? users : "";
}

bool shm_uid_allowed(const struct shm_ctx *sctx, uid_t uid)
{
	const char *p = sctx->par.allow_users;
	unsigned long v;
	char *end;

	if (uid == geteuid())
		return true;
	while (*p) {
		while (*p == ',' || *p == ' ')
			p++;
		if (*p == '*')
			return true;
		if (!*p)
			break;
		v = strtoul(p, &end, 10);
		if (end == p)
			break; /* not a number: the rest is ignored */
		if (v == (unsigned long)uid)
			return true;
		p = end;
	}
	return false;
}

/* Yama's ptrace_scope: 0 when the module is absent. */
static int yama_scope(void)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	int scope = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%d", &scope) != 1)
		scope = 0;
	fclose(f);
	return scope;
}

const char *shm_cma_status(const struct shm_params *par, bool *possible)
{
	static const char *const scope_text[] = {
		"single copy (cma)",
		"single copy to descendants (ptrace_scope 1)",
		"ring copies (ptrace_scope 2)",
		"ring copies (ptrace_scope 3)",
	};
	struct iovec l, r;
	uint64_t a = 1, b = 0;
	int scope;

	*possible = false;
	if (!par->cma)
		return "ring copies (shm.cma=no)";
	l.iov_base = &b;
	l.iov_len = sizeof(b);
	r.iov_base = &a;
	r.iov_len = sizeof(a);
	/* a seccomp filter or a kernel without it */
	if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) != sizeof(b))
		return "ring copies (process_vm_readv refused)";
	scope = yama_scope();
	if (scope == 1 && par->ptracer_any &&
	    !prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0))
		scope = 0;
	if (scope < 0 || scope > 3)
		scope = 3;
	*possible = scope < 2;
	return scope_text[scope];
}
