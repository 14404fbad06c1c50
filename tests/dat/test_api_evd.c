/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* Event dispatchers and consumer notification objects. */
#include "config.h"

#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "tests/dat/test_api_common.h"

static DAT_EVENT se(void *pointer)
{
	DAT_EVENT ev;

	memset(&ev, 0, sizeof(ev));
	ev.event_number = DAT_SOFTWARE_EVENT;
	ev.event_data.software_event_data.pointer = pointer;
	return ev;
}

Test(dat_evd, flag_combinations)
{
	static const DAT_EVD_FLAGS ok[] = {
		DAT_EVD_SOFTWARE_FLAG,
		DAT_EVD_CR_FLAG,
		DAT_EVD_DTO_FLAG,
		DAT_EVD_CONNECTION_FLAG,
		DAT_EVD_RMR_BIND_FLAG,
		(DAT_EVD_FLAGS)(DAT_EVD_DTO_FLAG | DAT_EVD_RMR_BIND_FLAG),
		(DAT_EVD_FLAGS)(DAT_EVD_CR_FLAG | DAT_EVD_CONNECTION_FLAG),
		(DAT_EVD_FLAGS)(DAT_EVD_DEFAULT_FLAG & ~DAT_EVD_ASYNC_FLAG),
		(DAT_EVD_FLAGS)(DAT_EVD_SOFTWARE_FLAG | DAT_EVD_DTO_FLAG |
				DAT_EVD_CONNECTION_FLAG),
		(DAT_EVD_FLAGS)DAT_IB_EVD_EXTENSION_FLAG,
	};
	DAT_EVD_PARAM param;
	DAT_EVD_HANDLE evd;
	struct t_ia t;
	size_t i;

	t_ia_open(&t);
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		T_OK(dat_evd_create(t.ia, 16, NULL, ok[i], &evd));
		T_OK(dat_evd_query(evd, DAT_EVD_FIELD_ALL, &param));
		cr_assert_eq(param.evd_flags, ok[i]);
		cr_assert_eq(param.evd_qlen, 16);
		cr_assert_null(param.cno_handle);
		cr_assert(param.evd_state & DAT_EVD_STATE_ENABLED);
		cr_assert(param.evd_state & DAT_EVD_STATE_WAITABLE);
		T_OK(dat_evd_free(evd));
	}
	T_ERR(dat_evd_create(t.ia, 16, NULL, (DAT_EVD_FLAGS)0, &evd),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);
	T_ERR(dat_evd_create(t.ia, 16, NULL, (DAT_EVD_FLAGS)0x2000, &evd),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);
	T_ERR(dat_evd_create(t.ia, 0, NULL, DAT_EVD_DTO_FLAG, &evd),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	T_ERR(dat_evd_create(t.ia, t.attr.max_evd_qlen + 1, NULL,
			     DAT_EVD_DTO_FLAG, &evd),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	T_ERR(dat_evd_create(t.ia, 16, (DAT_CNO_HANDLE)t.pz, DAT_EVD_DTO_FLAG,
			     &evd),
	      DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CNO);
	T_ERR(dat_evd_create(t.ia, 16, NULL, DAT_EVD_DTO_FLAG, NULL),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG5);
	T_ERR(dat_evd_query(t.async, DAT_EVD_FIELD_ALL, NULL),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	T_ERR(dat_evd_query(t.async, (DAT_EVD_PARAM_MASK)0x40, &param),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	T_ERR(dat_evd_free(t.pz), DAT_INVALID_HANDLE, -1);
	t_ia_close(&t);
}

Test(dat_evd, software_events_dequeue_wait)
{
	DAT_EVD_HANDLE evd, dto;
	DAT_EVENT ev, out;
	DAT_COUNT nmore;
	struct t_ia t;
	int marks[3];

	t_ia_open(&t);
	T_OK(dat_evd_create(t.ia, 4, NULL, DAT_EVD_SOFTWARE_FLAG, &evd));
	T_ERR(dat_evd_dequeue(evd, &out), DAT_QUEUE_EMPTY, -1);
	/* bare: programs compare with DAT_QUEUE_EMPTY directly */
	cr_assert_eq(dat_evd_dequeue(evd, &out), DAT_QUEUE_EMPTY);
	ev = se(&marks[0]);
	T_OK(dat_evd_post_se(evd, &ev));
	ev = se(&marks[1]);
	T_OK(dat_evd_post_se(evd, &ev));
	ev = se(&marks[2]);
	T_OK(dat_evd_post_se(evd, &ev));
	T_OK(dat_evd_wait(evd, 0, 3, &out, &nmore));
	cr_assert_eq(out.event_number, DAT_SOFTWARE_EVENT);
	cr_assert_eq(out.evd_handle, evd);
	cr_assert_eq(out.event_data.software_event_data.pointer, &marks[0]);
	cr_assert_eq(nmore, 2);
	T_OK(dat_evd_dequeue(evd, &out));
	cr_assert_eq(out.event_data.software_event_data.pointer, &marks[1]);
	/* threshold not met: the wait times out, and says what is queued */
	T_ERR(dat_evd_wait(evd, 1000, 2, &out, &nmore), DAT_TIMEOUT_EXPIRED,
	      -1);
	cr_assert_eq(nmore, 1);
	T_OK(dat_evd_wait(evd, DAT_TIMEOUT_INFINITE, 1, &out, NULL));
	cr_assert_eq(out.event_data.software_event_data.pointer, &marks[2]);

	/* full: the fifth software event does not fit */
	T_OK(dat_evd_post_se(evd, &ev));
	T_OK(dat_evd_post_se(evd, &ev));
	T_OK(dat_evd_post_se(evd, &ev));
	T_OK(dat_evd_post_se(evd, &ev));
	T_ERR(dat_evd_post_se(evd, &ev), DAT_QUEUE_FULL, -1);

	T_ERR(dat_evd_wait(evd, 0, 0, &out, &nmore), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG3);
	T_ERR(dat_evd_wait(evd, 0, 5, &out, &nmore), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG3);
	T_ERR(dat_evd_wait(evd, 0, 1, NULL, &nmore), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG4);
	T_ERR(dat_evd_dequeue(evd, NULL), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG2);
	T_ERR(dat_evd_post_se(evd, NULL), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG2);
	ev.event_number = DAT_DTO_COMPLETION_EVENT;
	T_ERR(dat_evd_post_se(evd, &ev), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG2);
	/* a software event needs the software stream */
	T_OK(dat_evd_create(t.ia, 4, NULL, DAT_EVD_DTO_FLAG, &dto));
	ev = se(NULL);
	T_ERR(dat_evd_post_se(dto, &ev), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG1);
	T_OK(dat_evd_free(dto));
	T_OK(dat_evd_free(evd));
	t_ia_close(&t);
}

Test(dat_evd, resize_enable_disable)
{
	DAT_EVD_PARAM param;
	DAT_EVD_HANDLE evd;
	DAT_EVENT ev;
	struct t_ia t;
	int i;

	t_ia_open(&t);
	T_OK(dat_evd_create(t.ia, 2, NULL, DAT_EVD_SOFTWARE_FLAG, &evd));
	ev = se(NULL);
	T_OK(dat_evd_post_se(evd, &ev));
	T_OK(dat_evd_post_se(evd, &ev));
	T_ERR(dat_evd_post_se(evd, &ev), DAT_QUEUE_FULL, -1);
	T_OK(dat_evd_resize(evd, 8));
	T_OK(dat_evd_query(evd, DAT_EVD_FIELD_EVD_QLEN, &param));
	cr_assert_eq(param.evd_qlen, 8);
	for (i = 0; i < 6; i++)
		T_OK(dat_evd_post_se(evd, &ev));
	/* never below what is queued */
	T_ERR(dat_evd_resize(evd, 4), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	T_ERR(dat_evd_resize(evd, 0), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	T_OK(dat_evd_disable(evd));
	T_OK(dat_evd_query(evd, DAT_EVD_FIELD_ALL, &param));
	cr_assert(param.evd_state & DAT_EVD_STATE_DISABLED);
	/* a disabled EVD still queues and is read */
	T_OK(dat_evd_dequeue(evd, &ev));
	T_OK(dat_evd_enable(evd));
	T_OK(dat_evd_query(evd, DAT_EVD_FIELD_ALL, &param));
	cr_assert(param.evd_state & DAT_EVD_STATE_ENABLED);
	T_ERR(dat_evd_enable(NULL), DAT_INVALID_HANDLE, -1);
	T_ERR(dat_evd_disable(t.pz), DAT_INVALID_HANDLE, -1);
	T_OK(dat_evd_free(evd));
	t_ia_close(&t);
}

struct waiter {
	DAT_EVD_HANDLE evd;
	DAT_RETURN ret;
	atomic_bool started;
};

static void *wait_thread(void *arg)
{
	struct waiter *w = arg;
	DAT_COUNT nmore;
	DAT_EVENT ev;

	atomic_store(&w->started, true);
	w->ret = dat_evd_wait(w->evd, DAT_TIMEOUT_INFINITE, 1, &ev, &nmore);
	return NULL;
}

Test(dat_evd, unwaitable_wakes_waiter)
{
	struct waiter w = { 0 };
	DAT_EVD_PARAM param;
	DAT_EVENT ev;
	struct t_ia t;
	pthread_t th;

	t_ia_open(&t);
	T_OK(dat_evd_create(t.ia, 4, NULL, DAT_EVD_SOFTWARE_FLAG, &w.evd));
	cr_assert_eq(pthread_create(&th, NULL, wait_thread, &w), 0);
	while (!atomic_load(&w.started))
		usleep(1000);
	usleep(20000);
	/* a second waiter is refused while the first waits */
	T_ERR(dat_evd_wait(w.evd, 0, 1, &ev, NULL), DAT_INVALID_STATE,
	      DAT_INVALID_STATE_EVD_WAITER);
	T_OK(dat_evd_set_unwaitable(w.evd));
	pthread_join(th, NULL);
	cr_assert_eq(DAT_GET_TYPE(w.ret), DAT_INVALID_STATE, "0x%08x", w.ret);
	cr_assert_eq(DAT_GET_SUBTYPE(w.ret), DAT_INVALID_STATE_EVD_UNWAITABLE);
	T_OK(dat_evd_query(w.evd, DAT_EVD_FIELD_ALL, &param));
	cr_assert(param.evd_state & DAT_EVD_STATE_UNWAITABLE);
	T_ERR(dat_evd_wait(w.evd, 0, 1, &ev, NULL), DAT_INVALID_STATE,
	      DAT_INVALID_STATE_EVD_UNWAITABLE);
	/* dequeue still works while unwaitable */
	ev = se(NULL);
	T_OK(dat_evd_post_se(w.evd, &ev));
	T_OK(dat_evd_dequeue(w.evd, &ev));
	T_OK(dat_evd_clear_unwaitable(w.evd));
	T_OK(dat_evd_post_se(w.evd, &ev));
	T_OK(dat_evd_wait(w.evd, 0, 1, &ev, NULL));
	T_OK(dat_evd_free(w.evd));
	t_ia_close(&t);
}

Test(dat_evd, free_in_use)
{
	struct t_pair p;

	t_pair_setup(&p, NULL);
	T_ERR(dat_evd_free(p.conn[0]), DAT_INVALID_STATE,
	      DAT_INVALID_STATE_EVD_IN_USE);
	T_ERR(dat_evd_free(p.cr_evd), DAT_INVALID_STATE,
	      DAT_INVALID_STATE_EVD_IN_USE);
	t_pair_teardown(&p);
}

/* An EVD too small for its connection events reports an overflow. */
Test(dat_evd, overflow_posts_async_event)
{
	DAT_EVD_HANDLE small;
	DAT_EP_PARAM param;
	DAT_CR_HANDLE cr;
	DAT_EVENT ev;
	struct t_pair p;

	t_pair_setup(&p, NULL);
	T_OK(dat_evd_create(p.t.ia, 1, NULL, DAT_EVD_CONNECTION_FLAG, &small));
	param.connect_evd_handle = small;
	T_OK(dat_ep_modify(p.ep[0], DAT_EP_FIELD_CONNECT_EVD_HANDLE, &param));
	T_OK(dat_ep_connect(p.ep[0], p.t.attr.ia_address_ptr, p.qual,
			    T_TIMEOUT_US, 0, NULL, DAT_QOS_BEST_EFFORT,
			    DAT_CONNECT_DEFAULT_FLAG));
	ev = t_wait(p.cr_evd, DAT_CONNECTION_REQUEST_EVENT);
	cr = ev.event_data.cr_arrival_event_data.cr_handle;
	T_OK(dat_cr_accept(cr, p.ep[1], 0, NULL));
	t_wait(p.conn[1], DAT_CONNECTION_EVENT_ESTABLISHED);
	/* ESTABLISHED fills the small EVD; DISCONNECTED has no room */
	T_OK(dat_ep_disconnect(p.ep[1], DAT_CLOSE_ABRUPT_FLAG));
	t_wait(p.conn[1], DAT_CONNECTION_EVENT_DISCONNECTED);
	ev = t_wait(p.t.async, DAT_ASYNC_ERROR_EVD_OVERFLOW);
	cr_assert_eq(ev.event_data.asynch_error_event_data.dat_handle, small);
	cr_assert_eq(ev.event_data.asynch_error_event_data.reason,
		     DAT_EVD_OVERFLOW_ERROR);
	/* what fitted is still there */
	ev = t_wait(small, DAT_CONNECTION_EVENT_ESTABLISHED);
	T_OK(dat_ep_free(p.ep[0]));
	T_OK(dat_evd_free(small));
	T_OK(dat_ep_create(p.t.ia, p.t.pz, p.recv[0], p.req[0], p.conn[0], NULL,
			   &p.ep[0]));
	t_pair_teardown(&p);
}

/* ------------------------------------------------------------ CNO */

Test(dat_cno, wait_and_query)
{
	DAT_EVD_HANDLE evd, got;
	DAT_CNO_HANDLE cno;
	DAT_CNO_PARAM param;
	DAT_EVD_PARAM eparam;
	DAT_EVENT ev;
	struct t_ia t;

	t_ia_open(&t);
	T_OK(dat_cno_create(t.ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	T_OK(dat_cno_query(cno, DAT_CNO_FIELD_ALL, &param));
	cr_assert_eq(param.proxy_type, DAT_PROXY_TYPE_NONE);
	T_OK(dat_evd_create(t.ia, 4, cno, DAT_EVD_SOFTWARE_FLAG, &evd));
	T_OK(dat_evd_query(evd, DAT_EVD_FIELD_CNO, &eparam));
	cr_assert_eq(eparam.cno_handle, cno);
	T_ERR(dat_cno_wait(cno, 1000, &got), DAT_TIMEOUT_EXPIRED, -1);
	ev = se(NULL);
	T_OK(dat_evd_post_se(evd, &ev));
	T_OK(dat_cno_wait(cno, T_TIMEOUT_US, &got));
	cr_assert_eq(got, evd);
	T_OK(dat_evd_dequeue(evd, &ev));
	/* an EVD with a CNO cannot be freed after the CNO, only before */
	T_ERR(dat_cno_free(cno), DAT_INVALID_STATE,
	      DAT_INVALID_STATE_CNO_IN_USE);
	T_OK(dat_evd_modify_cno(evd, NULL));
	T_OK(dat_evd_query(evd, DAT_EVD_FIELD_CNO, &eparam));
	cr_assert_null(eparam.cno_handle);
	T_OK(dat_evd_modify_cno(evd, cno));
	T_ERR(dat_evd_modify_cno(evd, (DAT_CNO_HANDLE)t.pz), DAT_INVALID_HANDLE,
	      DAT_INVALID_HANDLE_CNO);
	T_ERR(dat_cno_wait(cno, 0, NULL), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG3);
	T_ERR(dat_cno_query(cno, (DAT_CNO_PARAM_MASK)9, &param),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	T_ERR(dat_cno_query(cno, DAT_CNO_FIELD_ALL, NULL),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	T_OK(dat_evd_free(evd));
	T_OK(dat_cno_free(cno));
	T_ERR(dat_cno_create(t.ia, DAT_OS_WAIT_PROXY_AGENT_NULL, NULL),
	      DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	t_ia_close(&t);
}

struct agent_seen {
	atomic_int calls;
	DAT_EVD_HANDLE evd;
};

static void agent(DAT_PVOID instance, DAT_EVD_HANDLE evd)
{
	struct agent_seen *s = instance;

	s->evd = evd;
	atomic_fetch_add(&s->calls, 1);
}

Test(dat_cno, proxy_agent)
{
	struct agent_seen seen = { 0 };
	DAT_OS_WAIT_PROXY_AGENT a = { &seen, agent };
	DAT_CNO_HANDLE cno;
	DAT_CNO_PARAM param;
	DAT_EVD_HANDLE evd;
	DAT_EVENT ev;
	struct t_ia t;
	int i;

	t_ia_open(&t);
	T_OK(dat_cno_create(t.ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	T_OK(dat_cno_modify_agent(cno, a));
	T_OK(dat_cno_query(cno, DAT_CNO_FIELD_ALL, &param));
	cr_assert_eq(param.proxy_type, DAT_PROXY_TYPE_AGENT);
	cr_assert_eq(param.proxy.agent.instance_data, &seen);
	T_OK(dat_evd_create(t.ia, 4, cno, DAT_EVD_SOFTWARE_FLAG, &evd));
	ev = se(NULL);
	T_OK(dat_evd_post_se(evd, &ev));
	for (i = 0; i < 500 && !atomic_load(&seen.calls); i++)
		usleep(2000);
	cr_assert_geq(atomic_load(&seen.calls), 1);
	cr_assert_eq(seen.evd, evd);
	T_OK(dat_evd_dequeue(evd, &ev));
	T_OK(dat_cno_modify_agent(cno, DAT_OS_WAIT_PROXY_AGENT_NULL));
	T_OK(dat_cno_query(cno, DAT_CNO_FIELD_ALL, &param));
	cr_assert_eq(param.proxy_type, DAT_PROXY_TYPE_NONE);
	T_ERR(dat_cno_modify_agent(NULL, a), DAT_INVALID_HANDLE,
	      DAT_INVALID_HANDLE_CNO);
	T_OK(dat_evd_free(evd));
	T_OK(dat_cno_free(cno));
	t_ia_close(&t);
}

Test(dat_cno, fd_and_trigger)
{
	DAT_CNO_HANDLE cno;
	DAT_CNO_PARAM param;
	DAT_EVD_HANDLE evd, got;
	DAT_EVENT ev;
	struct pollfd pfd;
	struct t_ia t;
	DAT_FD fd;

	t_ia_open(&t);
	T_OK(dat_cno_fd_create(t.ia, &fd, &cno));
	cr_assert_geq(fd, 0);
	T_OK(dat_cno_query(cno, DAT_CNO_FIELD_ALL, &param));
	cr_assert_eq(param.proxy_type, DAT_PROXY_TYPE_FD);
	cr_assert_eq(param.proxy.fd, fd);
	T_OK(dat_evd_create(t.ia, 4, cno, DAT_EVD_SOFTWARE_FLAG, &evd));
	pfd.fd = fd;
	pfd.events = POLLIN;
	cr_assert_eq(poll(&pfd, 1, 0), 0);
	T_ERR(dat_cno_trigger(cno, &got), DAT_QUEUE_EMPTY, -1);
	ev = se(NULL);
	T_OK(dat_evd_post_se(evd, &ev));
	cr_assert_eq(poll(&pfd, 1, 5000), 1);
	T_OK(dat_cno_trigger(cno, &got));
	cr_assert_eq(got, evd);
	T_OK(dat_evd_dequeue(evd, &ev));
	cr_assert_eq(poll(&pfd, 1, 0), 0);
	T_ERR(dat_cno_trigger(cno, NULL), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG2);
	T_ERR(dat_cno_fd_create(t.ia, NULL, &cno), DAT_INVALID_PARAMETER,
	      DAT_INVALID_ARG2);
	T_OK(dat_evd_free(evd));
	T_OK(dat_cno_free(cno));
	t_ia_close(&t);
}
