/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Handles of the wrong kind: every call given a live handle of another
 * object (which passes the registry, whose checks stop only NULL and IA
 * indexes) fails with DAT_INVALID_HANDLE and the subtype of the object
 * it expected, and changes nothing.
 */
#include "config.h"

#include "tests/dat/test_api_common.h"

#define T_BAD(call, sub) T_ERR(call, DAT_INVALID_HANDLE, sub)

static struct t_ia t;
static DAT_EVD_HANDLE evd;
static DAT_HANDLE pz; /* the wrong object, given for another kind */

static void setup(void)
{
	t_ia_open(&t);
	T_OK(dat_evd_create(t.ia, 8, NULL, DAT_EVD_DTO_FLAG, &evd));
	pz = t.pz;
}

static void teardown(void)
{
	T_OK(dat_evd_free(evd));
	t_ia_close(&t);
}

TestSuite(dat_handle, .init = setup, .fini = teardown);

/* Where an IA handle is expected, another object's handle is refused. */
Test(dat_handle, ia_expected)
{
	DAT_SRQ_ATTR srq_attr = { .max_recv_dtos = 4, .max_recv_iov = 1 };
	DAT_REGION_DESCRIPTION region = { .for_va = &t };
	DAT_LMR_CONTEXT lctx;
	DAT_RMR_CONTEXT rctx;
	DAT_VADDR addr;
	DAT_VLEN len;
	DAT_HANDLE out = NULL;
	DAT_FD fd;

	T_BAD(dat_pz_create(pz, &out), DAT_INVALID_HANDLE_IA);
	T_BAD(dat_cno_create(pz, DAT_OS_WAIT_PROXY_AGENT_NULL, &out),
	      DAT_INVALID_HANDLE_IA);
	T_BAD(dat_cno_fd_create(pz, &fd, &out), DAT_INVALID_HANDLE_IA);
	T_BAD(dat_srq_create(pz, t.pz, &srq_attr, &out), DAT_INVALID_HANDLE_IA);
	T_BAD(dat_lmr_create(pz, DAT_MEM_TYPE_VIRTUAL, region, sizeof(t), t.pz,
			     DAT_MEM_PRIV_ALL_FLAG, DAT_VA_TYPE_VA, &out, &lctx,
			     &rctx, &len, &addr),
	      DAT_INVALID_HANDLE_IA);
	cr_assert_null(out);
}

Test(dat_handle, ia_expected_more)
{
	DAT_IA_ATTR attr;
	DAT_HANDLE out = NULL;

	T_BAD(dat_ia_query(pz, NULL, DAT_IA_FIELD_ALL, &attr, 0, NULL),
	      DAT_INVALID_HANDLE_IA);
	T_BAD(dat_evd_create(pz, 8, NULL, DAT_EVD_DTO_FLAG, &out),
	      DAT_INVALID_HANDLE_IA);
	T_BAD(dat_ep_create(pz, t.pz, evd, evd, evd, NULL, &out),
	      DAT_INVALID_HANDLE_IA);
	cr_assert_null(out);
}

/* Every EVD call reports the EVD as its request EVD argument. */
Test(dat_handle, evd_expected)
{
	DAT_EVD_PARAM param;
	DAT_EVENT event = { .event_number = DAT_SOFTWARE_EVENT };
	DAT_COUNT more;

	T_BAD(dat_evd_query(pz, DAT_EVD_FIELD_ALL, &param),
	      DAT_INVALID_HANDLE_EVD_REQUEST);
	T_BAD(dat_evd_modify_cno(pz, NULL), DAT_INVALID_HANDLE_EVD_REQUEST);
	T_BAD(dat_evd_enable(pz), DAT_INVALID_HANDLE_EVD_REQUEST);
	T_BAD(dat_evd_disable(pz), DAT_INVALID_HANDLE_EVD_REQUEST);
	T_BAD(dat_evd_set_unwaitable(pz), DAT_INVALID_HANDLE_EVD_REQUEST);
	T_BAD(dat_evd_clear_unwaitable(pz), DAT_INVALID_HANDLE_EVD_REQUEST);
	T_BAD(dat_evd_resize(pz, 16), DAT_INVALID_HANDLE_EVD_REQUEST);
	T_BAD(dat_evd_post_se(pz, &event), DAT_INVALID_HANDLE_EVD_REQUEST);
	T_BAD(dat_evd_dequeue(pz, &event), DAT_INVALID_HANDLE_EVD_REQUEST);
	T_BAD(dat_evd_wait(pz, 0, 1, &event, &more),
	      DAT_INVALID_HANDLE_EVD_REQUEST);
	T_BAD(dat_evd_free(pz), DAT_INVALID_HANDLE_EVD_REQUEST);
}

Test(dat_handle, ep_expected)
{
	DAT_EP_PARAM param;
	DAT_EP_STATE state;
	DAT_BOOLEAN recv_idle, req_idle;
	DAT_COUNT nbufs, size;
	DAT_LMR_TRIPLET seg = { 0 };
	DAT_RMR_TRIPLET rseg = { 0 };
	DAT_DTO_COOKIE cookie = { .as_64 = 0 };

	T_BAD(dat_ep_query(pz, DAT_EP_FIELD_ALL, &param),
	      DAT_INVALID_HANDLE_EP);
	T_BAD(dat_ep_get_status(pz, &state, &recv_idle, &req_idle),
	      DAT_INVALID_HANDLE_EP);
	T_BAD(dat_ep_recv_query(pz, &nbufs, &size), DAT_INVALID_HANDLE_EP);
	T_BAD(dat_ep_set_watermark(pz, 1, 1), DAT_INVALID_HANDLE_EP);
	T_BAD(dat_ep_post_recv(pz, 1, &seg, cookie,
			       DAT_COMPLETION_DEFAULT_FLAG),
	      DAT_INVALID_HANDLE_EP);
	T_BAD(dat_ep_post_send(pz, 1, &seg, cookie,
			       DAT_COMPLETION_DEFAULT_FLAG),
	      DAT_INVALID_HANDLE_EP);
	T_BAD(dat_ep_post_rdma_read(pz, 1, &seg, cookie, &rseg,
				    DAT_COMPLETION_DEFAULT_FLAG),
	      DAT_INVALID_HANDLE_EP);
	T_BAD(dat_ep_post_rdma_write(pz, 1, &seg, cookie, &rseg,
				     DAT_COMPLETION_DEFAULT_FLAG),
	      DAT_INVALID_HANDLE_EP);
	T_BAD(dat_ep_post_send_with_invalidate(pz, 1, &seg, cookie,
					       DAT_COMPLETION_DEFAULT_FLAG,
					       DAT_FALSE, 0),
	      DAT_INVALID_HANDLE_EP);
	T_BAD(dat_ep_post_rdma_read_to_rmr(pz, &rseg, cookie, &rseg,
					   DAT_COMPLETION_DEFAULT_FLAG),
	      DAT_INVALID_HANDLE_EP);
	T_BAD(dat_ep_disconnect(pz, DAT_CLOSE_ABRUPT_FLAG),
	      DAT_INVALID_HANDLE_EP);
	T_BAD(dat_ep_reset(pz), DAT_INVALID_HANDLE_EP);
	T_BAD(dat_ep_free(pz), DAT_INVALID_HANDLE_EP);
}

Test(dat_handle, pz_expected)
{
	DAT_PZ_PARAM param;
	DAT_RMR_HANDLE rmr = NULL;

	T_BAD(dat_pz_query(evd, DAT_PZ_FIELD_ALL, &param),
	      DAT_INVALID_HANDLE_PZ);
	T_BAD(dat_pz_free(evd), DAT_INVALID_HANDLE_PZ);
	T_BAD(dat_rmr_create(evd, &rmr), DAT_INVALID_HANDLE_PZ);
	T_BAD(dat_rmr_create_for_ep(evd, &rmr), DAT_INVALID_HANDLE_PZ);
	cr_assert_null(rmr);
	/* checked before whether the interface has windows of the type */
	T_ERR(dat_rmr_create(t.pz, NULL), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG2);
	T_ERR(dat_rmr_create_for_ep(t.pz, NULL), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG2);
}

Test(dat_handle, cno_expected)
{
	DAT_CNO_PARAM param;
	DAT_EVD_HANDLE out = NULL;

	T_BAD(dat_cno_query(pz, DAT_CNO_FIELD_ALL, &param),
	      DAT_INVALID_HANDLE_CNO);
	T_BAD(dat_cno_modify_agent(pz, DAT_OS_WAIT_PROXY_AGENT_NULL),
	      DAT_INVALID_HANDLE_CNO);
	T_BAD(dat_cno_wait(pz, 0, &out), DAT_INVALID_HANDLE_CNO);
	T_BAD(dat_cno_trigger(pz, &out), DAT_INVALID_HANDLE_CNO);
	T_BAD(dat_cno_free(pz), DAT_INVALID_HANDLE_CNO);
	cr_assert_null(out);
}

/* A CNO's wait and trigger refuse a NULL output, each as its argument. */
Test(dat_handle, cno_output_null)
{
	DAT_CNO_HANDLE cno;

	T_OK(dat_cno_create(t.ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	T_ERR(dat_cno_wait(cno, 0, NULL), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG3);
	T_ERR(dat_cno_trigger(cno, NULL), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG2);
	T_OK(dat_cno_free(cno));
}

Test(dat_handle, lmr_rmr_expected)
{
	DAT_LMR_TRIPLET seg = { 0 };
	DAT_RMR_CONTEXT rctx;
	DAT_LMR_PARAM lparam;
	DAT_RMR_PARAM rparam;

	T_BAD(dat_lmr_query(pz, DAT_LMR_FIELD_ALL, &lparam),
	      DAT_INVALID_HANDLE_LMR);
	T_BAD(dat_lmr_free(pz), DAT_INVALID_HANDLE_LMR);
	T_BAD(dat_rmr_query(pz, DAT_RMR_FIELD_ALL, &rparam),
	      DAT_INVALID_HANDLE_RMR);
	T_BAD(dat_rmr_bind(pz, NULL, &seg, DAT_MEM_PRIV_ALL_FLAG,
			   DAT_VA_TYPE_VA, NULL, (DAT_RMR_COOKIE){ .as_64 = 0 },
			   DAT_COMPLETION_DEFAULT_FLAG, &rctx),
	      DAT_INVALID_HANDLE_RMR);
	T_BAD(dat_rmr_free(pz), DAT_INVALID_HANDLE_RMR);
}

Test(dat_handle, srq_expected)
{
	DAT_LMR_TRIPLET seg = { 0 };
	DAT_SRQ_PARAM param;

	T_BAD(dat_srq_post_recv(pz, 1, &seg, (DAT_DTO_COOKIE){ .as_64 = 0 }),
	      DAT_INVALID_HANDLE_SRQ);
	T_BAD(dat_srq_query(pz, DAT_SRQ_FIELD_ALL, &param),
	      DAT_INVALID_HANDLE_SRQ);
	T_BAD(dat_srq_resize(pz, 8), DAT_INVALID_HANDLE_SRQ);
	T_BAD(dat_srq_set_lw(pz, 1), DAT_INVALID_HANDLE_SRQ);
	T_BAD(dat_srq_free(pz), DAT_INVALID_HANDLE_SRQ);
}

Test(dat_handle, cr_expected)
{
	DAT_CR_PARAM param;

	T_BAD(dat_cr_query(pz, DAT_CR_FIELD_ALL, &param),
	      DAT_INVALID_HANDLE_CR);
	T_BAD(dat_cr_accept(pz, NULL, 0, NULL), DAT_INVALID_HANDLE_CR);
	T_BAD(dat_cr_reject(pz, 0, NULL), DAT_INVALID_HANDLE_CR);
	T_BAD(dat_cr_handoff(pz, 1), DAT_INVALID_HANDLE_CR);
}

/* Service points: the kind is checked, a PSP is not taken for an RSP. */
Test(dat_handle, sp_expected)
{
	DAT_PSP_PARAM pparam;
	DAT_RSP_PARAM rparam;
	DAT_CSP_PARAM cparam;

	T_BAD(dat_psp_query(pz, DAT_PSP_FIELD_ALL, &pparam),
	      DAT_INVALID_HANDLE_PSP);
	T_BAD(dat_psp_free(pz), DAT_INVALID_HANDLE_PSP);
	T_BAD(dat_rsp_query(pz, DAT_RSP_FIELD_ALL, &rparam),
	      DAT_INVALID_HANDLE_RSP);
	T_BAD(dat_rsp_free(pz), DAT_INVALID_HANDLE_RSP);
	T_BAD(dat_csp_query(pz, DAT_CSP_FIELD_ALL, &cparam),
	      DAT_INVALID_HANDLE_CSP);
	T_BAD(dat_csp_free(pz), DAT_INVALID_HANDLE_CSP);
}

/* The handle still works after all of that. */
Test(dat_handle, unchanged)
{
	DAT_PZ_PARAM param;
	DAT_HANDLE_TYPE type;

	T_OK(dat_pz_query(pz, DAT_PZ_FIELD_ALL, &param));
	T_OK(dat_ia_query(param.ia_handle, NULL, 0, NULL, 0, NULL));
	T_OK(dat_get_handle_type(evd, &type));
	cr_assert_eq(type, DAT_HANDLE_TYPE_EVD);
}
