/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The suite's own machinery: every kind of peer (local, thread, process)
 * serves the protocol, whatever mode the run uses, so that the process
 * peer is proven even on interfaces that cannot reach another process.
 */
#include <stdio.h>
#include <stdlib.h>

#include "conf.h"

/* Drives one peer kind through the requests that need no second side. */
static void exercise(enum conf_mode mode)
{
	struct conf_test h = { .timeout_ms = 5000, .mode = mode };
	const char *ifname = getenv("OPENRDMA_TEST_INTERFACE");
	uint8_t in[300], out[300];
	struct openrdma_wc wc;
	struct conf_msg *req, *rep;
	struct conf_pmr m;
	uint32_t cq;
	int ret;

	cr_assert_not_null(ifname);
	ret = conf_peer_start(mode, &h.peer);
	cr_assert_eq(ret, 0, "%s peer: %s", conf_mode_name(mode),
		     openrdma_strerror(ret));
	/* requests before OPEN are refused, not crashed on */
	cr_assert_eq(conf_peer_destroy(&h, CONF_K_PD, 1), -OPENRDMA_ENODEV);
	req = conf_peer_req(h.peer, CONF_OP_OPEN);
	snprintf(req->a.open.ifname, sizeof(req->a.open.ifname), "%s", ifname);
	rep = conf_peer_do(h.peer);
	cr_assert_eq(rep->ret, 0, "%s peer: open %s: %s", conf_mode_name(mode),
		     ifname, openrdma_strerror(rep->ret));
	h.ppd = rep->a.opened.pd;

	m = conf_peer_mr_reg(&h, h.ppd, 100000, OPENRDMA_ACCESS_LOCAL_WRITE, 5);
	conf_peer_mem_untouched(&h, &m); /* more than one message's worth */
	conf_fill(in, sizeof(in), 6, 0);
	conf_peer_mem_write(&h, &m, 99000, in, sizeof(in));
	conf_peer_mem_read(&h, &m, 99000, out, sizeof(out));
	cr_assert_arr_eq(in, out, sizeof(in));
	conf_peer_mem_restore(&h, &m, 99000, sizeof(in));
	conf_peer_mem_untouched(&h, &m);

	cq = conf_peer_cq_create(&h, 8);
	cr_assert_eq(conf_peer_poll(&h, cq, 1, &wc, 0), 0);
	cr_assert_eq(conf_peer_destroy(&h, CONF_K_QP, cq), -OPENRDMA_ENOENT,
		     "a CQ id accepted as a QP");
	cr_assert_eq(conf_peer_destroy(&h, CONF_K_CQ, 999), -OPENRDMA_ENOENT);
	conf_peer_req(h.peer, CONF_OP_MAX);
	cr_assert_eq(conf_peer_do(h.peer)->ret, -OPENRDMA_EPROTO);
	CONF_OK(conf_peer_destroy(&h, CONF_K_CQ, cq));
	/* the MR and PD are left for the agent's own cleanup */
	ret = conf_peer_stop(h.peer);
	cr_assert_eq(ret, 0, "%s peer cleanup: %s", conf_mode_name(mode),
		     openrdma_strerror(ret));
}

/* The process peer first: it forks before this process opens anything. */
CONF_TEST(harness, process_peer)
{
	exercise(CONF_MODE_PROCESS);
}

CONF_TEST(harness, thread_peer)
{
	exercise(CONF_MODE_THREAD);
}

CONF_TEST(harness, local_peer)
{
	exercise(CONF_MODE_LOCAL);
}

CONF_TEST(harness, killed_process_peer_is_reported)
{
	struct conf_test h = { .timeout_ms = 5000 };

	CONF_OK(conf_peer_start(CONF_MODE_PROCESS, &h.peer));
	CONF_OK(conf_peer_kill(h.peer));
	CONF_OK(conf_peer_stop(h.peer));
	CONF_OK(conf_peer_start(CONF_MODE_THREAD, &h.peer));
	CONF_ERR(conf_peer_kill(h.peer), OPENRDMA_EOPNOTSUPP);
	CONF_OK(conf_peer_stop(h.peer));
}
