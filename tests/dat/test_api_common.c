/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/dat/test_api_common.h"

const char *t_str(DAT_RETURN ret)
{
	static __thread char buf[128];
	const char *major = "?", *minor = "?";

	dat_strerror(ret, &major, &minor);
	snprintf(buf, sizeof(buf), "%s %s", major, minor);
	return buf;
}

const char *t_iface(void)
{
	const char *iface = getenv("OPENRDMA_TEST_INTERFACE");

	return iface && *iface ? iface : "self0";
}

char *t_ia_name(void)
{
	static char name[DAT_NAME_MAX_LENGTH];

	snprintf(name, sizeof(name), "ofa-openrdma-%s", t_iface());
	return name;
}

void t_ia_open(struct t_ia *t)
{
	memset(t, 0, sizeof(*t));
	T_OK(dat_ia_open(t_ia_name(), T_QLEN, &t->async, &t->ia));
	cr_assert_not_null(t->async);
	T_OK(dat_ia_query(t->ia, NULL, DAT_IA_FIELD_ALL, &t->attr,
			  DAT_PROVIDER_FIELD_ALL, &t->pattr));
	T_OK(dat_pz_create(t->ia, &t->pz));
}

void t_ia_close(struct t_ia *t)
{
	T_OK(dat_pz_free(t->pz));
	T_OK(dat_ia_close(t->ia, DAT_CLOSE_GRACEFUL_FLAG));
}

void t_mem_make(struct t_ia *t, struct t_mem *m, size_t len)
{
	DAT_REGION_DESCRIPTION region;
	DAT_VLEN reg_len;
	DAT_VADDR reg_addr;

	memset(m, 0, sizeof(*m));
	m->buf = aligned_alloc(4096, len);
	cr_assert_not_null(m->buf);
	memset(m->buf, 0, len);
	region.for_va = m->buf;
	T_OK(dat_lmr_create(t->ia, DAT_MEM_TYPE_VIRTUAL, region, len, t->pz,
			    (DAT_MEM_PRIV_FLAGS)(DAT_MEM_PRIV_ALL_FLAG |
						 DAT_IB_MEM_PRIV_REMOTE_ATOMIC),
			    DAT_VA_TYPE_VA, &m->lmr, &m->lctx, &m->rctx,
			    &reg_len, &reg_addr));
	cr_assert_eq(reg_len, len);
	cr_assert_eq(reg_addr, (DAT_VADDR)(uintptr_t)m->buf);
}

void t_mem_free(struct t_mem *m)
{
	T_OK(dat_lmr_free(m->lmr));
	free(m->buf);
}

DAT_LMR_TRIPLET t_seg(const struct t_mem *m, size_t off, uint32_t len)
{
	DAT_LMR_TRIPLET s;

	s.virtual_address = (DAT_VADDR)(uintptr_t)(m->buf + off);
	s.segment_length = len;
	s.lmr_context = m->lctx;
	return s;
}

DAT_RMR_TRIPLET t_rseg(const struct t_mem *m, size_t off, uint32_t len)
{
	DAT_RMR_TRIPLET s;

	s.virtual_address = (DAT_VADDR)(uintptr_t)(m->buf + off);
	s.segment_length = len;
	s.rmr_context = m->rctx;
	return s;
}

DAT_EVENT t_wait(DAT_EVD_HANDLE evd, DAT_EVENT_NUMBER number)
{
	DAT_COUNT nmore;
	DAT_EVENT ev;

	memset(&ev, 0, sizeof(ev));
	T_OK(dat_evd_wait(evd, T_TIMEOUT_US, 1, &ev, &nmore));
	cr_assert_eq(ev.event_number, number, "event 0x%x, not 0x%x",
		     ev.event_number, number);
	cr_assert_eq(ev.evd_handle, evd);
	return ev;
}

DAT_DTO_COMPLETION_EVENT_DATA t_dto(DAT_EVD_HANDLE evd,
				    DAT_DTO_COMPLETION_STATUS status)
{
	DAT_COUNT nmore;
	DAT_EVENT ev;

	T_OK(dat_evd_wait(evd, T_TIMEOUT_US, 1, &ev, &nmore));
	cr_assert(ev.event_number == DAT_DTO_COMPLETION_EVENT ||
			  ev.event_number == (DAT_EVENT_NUMBER)DAT_IB_DTO_EVENT,
		  "event 0x%x is no DTO completion", ev.event_number);
	cr_assert_eq(ev.event_data.dto_completion_event_data.status, status,
		     "status %d, not %d",
		     ev.event_data.dto_completion_event_data.status, status);
	return ev.event_data.dto_completion_event_data;
}

const char *t_pattr(const struct t_ia *t, const char *name)
{
	const DAT_PROVIDER_ATTR *a = &t->pattr;
	int i;

	for (i = 0; i < a->num_provider_specific_attr; i++)
		if (!strcmp(a->provider_specific_attr[i].name, name))
			return a->provider_specific_attr[i].value;
	return "";
}

bool t_pattr_true(const struct t_ia *t, const char *name)
{
	return !strcmp(t_pattr(t, name), "TRUE");
}

bool t_refusal_completes(const struct t_ia *t)
{
	return strcmp(t_pattr(t, "OPENRDMA_NODE_TRANSPORT"), "IWARP") != 0;
}

DAT_DTO_COMPLETION_EVENT_DATA t_dto_local(const struct t_ia *t,
					  DAT_EVD_HANDLE evd,
					  DAT_DTO_COMPLETION_STATUS status)
{
	DAT_COUNT nmore;
	DAT_EVENT ev;
	DAT_DTO_COMPLETION_STATUS got;

	T_OK(dat_evd_wait(evd, T_TIMEOUT_US, 1, &ev, &nmore));
	cr_assert_eq(ev.event_number, DAT_DTO_COMPLETION_EVENT, "event 0x%x",
		     ev.event_number);
	got = ev.event_data.dto_completion_event_data.status;
	cr_assert(got == status || (got == DAT_DTO_ERR_LOCAL_EP &&
				    !t_pattr_true(t, "OPENRDMA_EXACT_ERRORS")),
		  "status %d, not %d", got, status);
	return ev.event_data.dto_completion_event_data;
}

void t_pdata_check(const struct t_ia *t, const void *got, DAT_COUNT got_len,
		   const void *want, DAT_COUNT want_len)
{
	const unsigned char *g = got;
	DAT_COUNT i;

	if (strcmp(t_pattr(t, "OPENRDMA_NODE_TRANSPORT"), "IB"))
		cr_assert_eq(got_len, want_len);
	cr_assert_geq(got_len, want_len);
	cr_assert_arr_eq(g, want, (size_t)want_len);
	for (i = want_len; i < got_len; i++)
		cr_assert_eq(g[i], 0, "private data byte %d: 0x%x", i, g[i]);
}

void t_conn_ends(DAT_EVD_HANDLE conn, DAT_EP_HANDLE ep)
{
	DAT_COUNT nmore;
	DAT_EVENT ev;

	T_OK(dat_evd_wait(conn, T_TIMEOUT_US, 1, &ev, &nmore));
	cr_assert(ev.event_number == DAT_CONNECTION_EVENT_DISCONNECTED ||
			  ev.event_number == DAT_CONNECTION_EVENT_BROKEN,
		  "event 0x%x", ev.event_number);
	cr_assert_eq(ev.event_data.connect_event_data.ep_handle, ep);
}

void t_require_rmrs(struct t_pair *p)
{
	DAT_RMR_HANDLE rmr;

	if (p->t.attr.max_rmrs > 0)
		return;
	T_ERR(dat_rmr_create(p->t.pz, &rmr), DAT_MODEL_NOT_SUPPORTED, -1);
	t_pair_teardown(p);
	cr_skip_test("%s has no memory windows", t_iface());
}

void t_empty(DAT_EVD_HANDLE evd)
{
	DAT_EVENT ev;

	T_ERR(dat_evd_dequeue(evd, &ev), DAT_QUEUE_EMPTY, -1);
}

void t_pair_setup(struct t_pair *p, const DAT_EP_ATTR *attr)
{
	int i;

	memset(p, 0, sizeof(*p));
	t_ia_open(&p->t);
	T_OK(dat_evd_create(p->t.ia, T_QLEN, NULL, DAT_EVD_CR_FLAG,
			    &p->cr_evd));
	for (i = 0; i < 2; i++) {
		T_OK(dat_evd_create(p->t.ia, T_QLEN, NULL,
				    DAT_EVD_CONNECTION_FLAG, &p->conn[i]));
		T_OK(dat_evd_create(p->t.ia, T_QLEN, NULL,
				    (DAT_EVD_FLAGS)(DAT_EVD_DTO_FLAG |
						    DAT_EVD_RMR_BIND_FLAG),
				    &p->req[i]));
		T_OK(dat_evd_create(p->t.ia, T_QLEN, NULL, DAT_EVD_DTO_FLAG,
				    &p->recv[i]));
		T_OK(dat_ep_create(p->t.ia, p->t.pz, p->recv[i], p->req[i],
				   p->conn[i], attr, &p->ep[i]));
		t_mem_make(&p->t, &p->mem[i], T_BUF);
	}
	T_OK(dat_psp_create_any(p->t.ia, &p->qual, p->cr_evd,
				DAT_PSP_CONSUMER_FLAG, &p->psp));
}

void t_pair_connect(struct t_pair *p)
{
	DAT_CR_HANDLE cr;
	DAT_EP_STATE state;
	DAT_EVENT ev;

	T_OK(dat_ep_connect(p->ep[0], p->t.attr.ia_address_ptr, p->qual,
			    T_TIMEOUT_US, 0, NULL, DAT_QOS_BEST_EFFORT,
			    DAT_CONNECT_DEFAULT_FLAG));
	ev = t_wait(p->cr_evd, DAT_CONNECTION_REQUEST_EVENT);
	cr_assert_eq(ev.event_data.cr_arrival_event_data.sp_handle.psp_handle,
		     p->psp);
	cr_assert_eq(ev.event_data.cr_arrival_event_data.conn_qual, p->qual);
	cr = ev.event_data.cr_arrival_event_data.cr_handle;
	T_OK(dat_cr_accept(cr, p->ep[1], 0, NULL));
	ev = t_wait(p->conn[0], DAT_CONNECTION_EVENT_ESTABLISHED);
	cr_assert_eq(ev.event_data.connect_event_data.ep_handle, p->ep[0]);
	ev = t_wait(p->conn[1], DAT_CONNECTION_EVENT_ESTABLISHED);
	cr_assert_eq(ev.event_data.connect_event_data.ep_handle, p->ep[1]);
	T_OK(dat_ep_get_status(p->ep[0], &state, NULL, NULL));
	cr_assert_eq(state, DAT_EP_STATE_CONNECTED);
	T_OK(dat_ep_get_status(p->ep[1], &state, NULL, NULL));
	cr_assert_eq(state, DAT_EP_STATE_CONNECTED);
}

void t_pair_teardown(struct t_pair *p)
{
	int i;

	T_OK(dat_psp_free(p->psp));
	for (i = 0; i < 2; i++) {
		T_OK(dat_ep_free(p->ep[i]));
		t_mem_free(&p->mem[i]);
		T_OK(dat_evd_free(p->conn[i]));
		T_OK(dat_evd_free(p->req[i]));
		T_OK(dat_evd_free(p->recv[i]));
	}
	T_OK(dat_evd_free(p->cr_evd));
	t_ia_close(&p->t);
}
