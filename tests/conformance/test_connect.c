/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Both ways of connecting RC QPs, whatever OPENRDMA_TEST_CONNECT says:
 * through the CM, and by hand (modify to INIT, RTR with the peer's QPN and
 * address, RTS) where the transport allows it.  Data then flows both ways.
 */
#include "conf.h"

CONF_TEST(connect, through_the_cm)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct conf_rc rc;

	conf_rc_create(t, &rc, NULL);
	conf_rc_connect_cm(t, &rc, NULL);
	conf_rc_traffic(t, &rc);
}

CONF_TEST(connect, by_modify_qp)
{
	struct conf_test *t = conf_setup(CONF_WITH_PEER);
	struct conf_rc rc;

	conf_rc_create(t, &rc, NULL);
	conf_rc_connect_manual(t, &rc, NULL);
	conf_rc_traffic(t, &rc);
}
