/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Event dispatchers: creation checks, software events, waits and
 * timeouts, batches, fds, callbacks, AEVDs with and without
 * notifications, modify and query, overflow, and the async SEVDs.
 */
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <criterion/criterion.h>

#include "tests/itapi/test_api.h"

TestSuite(itapi_evd, .timeout = 60);

static struct tapi t;

static void setup(void)
{
	tapi_open(&t);
}

static void teardown(void)
{
	tapi_close(&t);
}

static it_evd_handle_t sw_evd(size_t size, it_evd_flags_t flags, int *fd)
{
	it_evd_handle_t evd;

	cr_assert_eq(it_evd_create(t.ia, IT_SOFTWARE_EVENT_STREAM, flags, size,
				   0, NULL, &evd, fd),
		     IT_SUCCESS);
	return evd;
}

Test(itapi_evd, create_arguments, .init = setup, .fini = teardown)
{
	it_evd_handle_t evd = (it_evd_handle_t)0x1, aevd;
	int fd = -7;

	cr_assert_eq(it_evd_create(TAPI_BOGUS, IT_SOFTWARE_EVENT_STREAM, 0, 4,
				   0, NULL, &evd, NULL),
		     IT_ERR_INVALID_IA);
	cr_assert_eq(it_evd_create(t.ia, (it_event_type_t)0x3000, 0, 4, 0, NULL,
				   &evd, NULL),
		     IT_ERR_INVALID_EVD_TYPE);
	cr_assert_eq(it_evd_create(t.ia, IT_DTO_SEND_CMPL_EVENT, 0, 4, 0, NULL,
				   &evd, NULL),
		     IT_ERR_INVALID_EVD_TYPE);
	cr_assert_eq(it_evd_create(t.ia, IT_SOFTWARE_EVENT_STREAM,
				   (it_evd_flags_t)0x100, 4, 0, NULL, &evd,
				   NULL),
		     IT_ERR_INVALID_FLAGS);
	cr_assert_eq(it_evd_create(t.ia, IT_SOFTWARE_EVENT_STREAM,
				   IT_EVD_OVERFLOW_NOTIFY |
					   IT_EVD_OVERFLOW_AUTO_RESET,
				   4, 0, NULL, &evd, NULL),
		     IT_ERR_INVALID_FLAGS);
	cr_assert_eq(it_evd_create(t.ia, IT_SOFTWARE_EVENT_STREAM,
				   IT_EVD_DEQUEUE_NOTIFICATIONS, 4, 0, NULL,
				   &evd, NULL),
		     IT_ERR_INVALID_FLAGS);
	cr_assert_eq(it_evd_create(t.ia, IT_SOFTWARE_EVENT_STREAM, 0, 0, 0,
				   NULL, &evd, NULL),
		     IT_ERR_INVALID_QUEUE_SIZE);
	cr_assert_eq(it_evd_create(t.ia, IT_SOFTWARE_EVENT_STREAM, 0, 4, 5,
				   NULL, &evd, NULL),
		     IT_ERR_INVALID_THRESHOLD);
	cr_assert_eq(it_evd_create(t.ia, IT_SOFTWARE_EVENT_STREAM, 0, 4, 0,
				   t.sq, &evd, NULL),
		     IT_ERR_INVALID_AEVD);
	cr_assert_eq(it_evd_create(t.ia, IT_SOFTWARE_EVENT_STREAM, 0, 4, 0,
				   NULL, NULL, NULL),
		     IT_ERR_FAULT);
	cr_assert_eq(it_evd_create(t.ia, IT_SOFTWARE_EVENT_STREAM,
				   IT_EVD_CREATE_FD, 4, 0, NULL, &evd, NULL),
		     IT_ERR_FAULT);
	cr_assert_eq(it_evd_create(t.ia, IT_AEVD_NOTIFICATION_EVENT_STREAM, 0,
				   0, 0, NULL, &aevd, NULL),
		     IT_SUCCESS);
	cr_assert_eq(it_evd_create(t.ia, IT_AEVD_NOTIFICATION_EVENT_STREAM, 0,
				   0, 0, aevd, &evd, NULL),
		     IT_ERR_AEVD_NOT_ALLOWED);
	/* outputs are written only on success */
	cr_assert_eq(evd, (it_evd_handle_t)0x1);
	cr_assert_eq(fd, -7);
	cr_assert_eq(it_evd_free(aevd), IT_SUCCESS);
	cr_assert_eq(it_evd_free(TAPI_BOGUS), IT_ERR_INVALID_EVD);
	cr_assert_eq(it_evd_free(NULL), IT_ERR_INVALID_EVD);
	cr_assert_eq(it_evd_free((it_evd_handle_t)t.pz), IT_ERR_INVALID_EVD);
}

Test(itapi_evd, software_events, .init = setup, .fini = teardown)
{
	it_evd_handle_t evd = sw_evd(2, 0, NULL);
	int a, b, c;
	it_event_t ev;
	size_t nmore = 99;

	cr_assert_eq(it_evd_dequeue(evd, &ev), IT_ERR_QUEUE_EMPTY);
	cr_assert_eq(it_evd_post_se(evd, &a), IT_SUCCESS);
	cr_assert_eq(it_evd_post_se(evd, &b), IT_SUCCESS);
	/* a software post never overflows: it is refused */
	cr_assert_eq(it_evd_post_se(evd, &c), IT_ERR_EVD_QUEUE_FULL);
	cr_assert_eq(it_evd_wait(evd, 0, &ev, &nmore), IT_SUCCESS);
	cr_assert_eq(ev.event_number, IT_SOFTWARE_EVENT);
	cr_assert_eq(ev.sw.evd, evd);
	cr_assert_eq(ev.sw.data, &a);
	cr_assert_eq(nmore, 1);
	cr_assert_eq(it_evd_dequeue(evd, &ev), IT_SUCCESS);
	cr_assert_eq(ev.sw.data, &b);
	cr_assert_eq(it_evd_wait(evd, 1000, &ev, NULL), IT_ERR_TIMEOUT_EXPIRED);
	cr_assert_eq(it_evd_post_se(t.sq, &a), IT_ERR_INVALID_EVD_TYPE);
	cr_assert_eq(it_evd_post_se(TAPI_BOGUS, &a), IT_ERR_INVALID_EVD);
	cr_assert_eq(it_evd_dequeue(evd, NULL), IT_ERR_FAULT);
	cr_assert_eq(it_evd_wait(evd, 0, NULL, NULL), IT_ERR_FAULT);
	cr_assert_eq(it_evd_wait(TAPI_BOGUS, 0, &ev, NULL), IT_ERR_INVALID_EVD);
	cr_assert_eq(it_evd_dequeue(TAPI_BOGUS, &ev), IT_ERR_INVALID_EVD);
}

Test(itapi_evd, dequeue_n, .init = setup, .fini = teardown)
{
	it_evd_handle_t evd = sw_evd(8, 0, NULL);
	it_event_t ev[8];
	int data[5], n = -1, i;

	cr_assert_eq(it_evd_dequeue_n(evd, 4, ev, &n), IT_ERR_QUEUE_EMPTY);
	cr_assert_eq(n, -1);
	for (i = 0; i < 5; i++)
		cr_assert_eq(it_evd_post_se(evd, &data[i]), IT_SUCCESS);
	cr_assert_eq(it_evd_dequeue_n(evd, 3, ev, &n), IT_SUCCESS);
	cr_assert_eq(n, 3);
	for (i = 0; i < 3; i++)
		cr_assert_eq(ev[i].sw.data, &data[i]);
	cr_assert_eq(it_evd_dequeue_n(evd, 8, ev, &n), IT_SUCCESS);
	cr_assert_eq(n, 2);
	cr_assert_eq(ev[1].sw.data, &data[4]);
	cr_assert_eq(it_evd_dequeue_n(evd, 0, ev, &n), IT_ERR_RANGE);
	cr_assert_eq(it_evd_dequeue_n(evd, 1, NULL, &n), IT_ERR_FAULT);
	cr_assert_eq(it_evd_dequeue_n(evd, 1, ev, NULL), IT_ERR_FAULT);
	cr_assert_eq(it_evd_dequeue_n(TAPI_BOGUS, 1, ev, &n),
		     IT_ERR_INVALID_EVD);
}

struct waiter {
	it_evd_handle_t evd;
	it_status_t st;
	it_event_t ev;
};

static void *wait_thread(void *arg)
{
	struct waiter *w = arg;

	w->st = it_evd_wait(w->evd, IT_TIMEOUT_INFINITE, &w->ev, NULL);
	return NULL;
}

Test(itapi_evd, blocking_wait, .init = setup, .fini = teardown)
{
	struct waiter w = { .evd = sw_evd(4, 0, NULL) };
	pthread_t thr;
	it_event_t ev;
	int data;

	cr_assert_eq(pthread_create(&thr, NULL, wait_thread, &w), 0);
	usleep(20000);
	/* one waiter at a time */
	cr_assert_eq(it_evd_wait(w.evd, 0, &ev, NULL), IT_ERR_WAITER_LIMIT);
	cr_assert_eq(it_evd_post_se(w.evd, &data), IT_SUCCESS);
	cr_assert_eq(pthread_join(thr, NULL), 0);
	cr_assert_eq(w.st, IT_SUCCESS);
	cr_assert_eq(w.ev.sw.data, &data);
}

Test(itapi_evd, fd, .init = setup, .fini = teardown)
{
	struct pollfd pfd;
	it_evd_handle_t evd;
	it_evd_param_t p;
	it_event_t ev;
	int fd = -1, data;

	evd = sw_evd(4, IT_EVD_CREATE_FD, &fd);
	cr_assert_geq(fd, 0);
	pfd.fd = fd;
	pfd.events = POLLIN;
	cr_assert_eq(poll(&pfd, 1, 0), 0);
	cr_assert_eq(it_evd_post_se(evd, &data), IT_SUCCESS);
	cr_assert_eq(poll(&pfd, 1, 1000), 1);
	cr_assert_eq(it_evd_dequeue(evd, &ev), IT_SUCCESS);
	cr_assert_eq(poll(&pfd, 1, 0), 0);
	cr_assert_eq(it_evd_query(evd, IT_EVD_PARAM_FD | IT_EVD_PARAM_FLAG, &p),
		     IT_SUCCESS);
	cr_assert_eq(p.fd, fd);
	cr_assert(p.evd_flag & IT_EVD_CREATE_FD);
	/* without the flag there is no fd */
	evd = sw_evd(4, 0, &fd);
	cr_assert_eq(fd, -1);
}

struct cb_state {
	atomic_int calls;
	atomic_int events;
};

static void callback(it_evd_handle_t evd, void *arg)
{
	struct cb_state *s = arg;
	it_event_t ev;

	atomic_fetch_add(&s->calls, 1);
	while (it_evd_dequeue(evd, &ev) == IT_SUCCESS)
		atomic_fetch_add(&s->events, 1);
}

Test(itapi_evd, callbacks, .init = setup, .fini = teardown)
{
	it_evd_handle_t evd = sw_evd(16, 0, NULL);
	struct cb_state s = { 0 };
	it_evd_param_t p;
	int data, i;

	cr_assert_eq(it_evd_callback_attach(evd, NULL, NULL), IT_ERR_FAULT);
	cr_assert_eq(it_evd_callback_attach(TAPI_BOGUS, callback, &s),
		     IT_ERR_INVALID_EVD);
	cr_assert_eq(it_evd_callback_detach(evd), IT_ERR_INVALID_EVD_STATE);
	cr_assert_eq(it_evd_callback_attach(evd, callback, &s), IT_SUCCESS);
	cr_assert_eq(it_evd_callback_attach(evd, callback, &s),
		     IT_ERR_CALLBACK_EXISTS);
	cr_assert_eq(it_evd_query(evd, IT_EVD_PARAM_CALLBACK, &p), IT_SUCCESS);
	cr_assert_eq(p.evd_callback, IT_TRUE);
	for (i = 0; i < 10; i++)
		cr_assert_eq(it_evd_post_se(evd, &data), IT_SUCCESS);
	for (i = 0; i < 1000 && atomic_load(&s.events) < 10; i++)
		usleep(1000);
	cr_assert_eq(atomic_load(&s.events), 10);
	cr_assert_geq(atomic_load(&s.calls), 1);
	cr_assert_eq(it_evd_callback_detach(evd), IT_SUCCESS);
	/* detached: events stay for the consumer */
	cr_assert_eq(it_evd_post_se(evd, &data), IT_SUCCESS);
	usleep(20000);
	cr_assert_eq(atomic_load(&s.events), 10);
	cr_assert_eq(it_evd_query(evd, IT_EVD_PARAM_CALLBACK, &p), IT_SUCCESS);
	cr_assert_eq(p.evd_callback, IT_FALSE);
}

Test(itapi_evd, aevd, .init = setup, .fini = teardown)
{
	it_evd_handle_t aevd, notify, s1, s2;
	it_evd_param_t p;
	it_event_t ev;
	int d1, d2;

	cr_assert_eq(it_evd_create(t.ia, IT_AEVD_NOTIFICATION_EVENT_STREAM, 0,
				   0, 0, NULL, &aevd, NULL),
		     IT_SUCCESS);
	cr_assert_eq(it_evd_create(t.ia, IT_SOFTWARE_EVENT_STREAM, 0, 4, 0,
				   aevd, &s1, NULL),
		     IT_SUCCESS);
	s2 = sw_evd(4, 0, NULL);
	/* joining by modify */
	memset(&p, 0, sizeof(p));
	p.aevd = aevd;
	cr_assert_eq(it_evd_modify(s2, IT_EVD_PARAM_AEVD_HANDLE, &p),
		     IT_SUCCESS);
	cr_assert_eq(it_evd_query(s2, IT_EVD_PARAM_AEVD_HANDLE, &p),
		     IT_SUCCESS);
	cr_assert_eq(p.aevd, aevd);
	cr_assert_eq(it_evd_dequeue(aevd, &ev), IT_ERR_QUEUE_EMPTY);
	cr_assert_eq(it_evd_post_se(s1, &d1), IT_SUCCESS);
	cr_assert_eq(it_evd_post_se(s2, &d2), IT_SUCCESS);
	/* without IT_EVD_DEQUEUE_NOTIFICATIONS: the members' events */
	cr_assert_eq(it_evd_wait(aevd, TAPI_TIMEOUT_US, &ev, NULL), IT_SUCCESS);
	cr_assert_eq(ev.event_number, IT_SOFTWARE_EVENT);
	cr_assert_eq(ev.sw.evd, s1);
	cr_assert_eq(it_evd_dequeue(aevd, &ev), IT_SUCCESS);
	cr_assert_eq(ev.sw.evd, s2);
	/* an AEVD with members cannot go */
	cr_assert_eq(it_evd_free(aevd), IT_ERR_EVD_BUSY);
	cr_assert_eq(it_evd_free(s1), IT_SUCCESS);
	cr_assert_eq(it_evd_free(s2), IT_SUCCESS);
	cr_assert_eq(it_evd_free(aevd), IT_SUCCESS);

	/* with it: notifications naming the SEVD, whose event stays */
	cr_assert_eq(it_evd_create(t.ia, IT_AEVD_NOTIFICATION_EVENT_STREAM,
				   IT_EVD_DEQUEUE_NOTIFICATIONS, 0, 0, NULL,
				   &notify, NULL),
		     IT_SUCCESS);
	cr_assert_eq(it_evd_create(t.ia, IT_SOFTWARE_EVENT_STREAM, 0, 4, 0,
				   notify, &s1, NULL),
		     IT_SUCCESS);
	cr_assert_eq(it_evd_post_se(s1, &d1), IT_SUCCESS);
	cr_assert_eq(it_evd_wait(notify, TAPI_TIMEOUT_US, &ev, NULL),
		     IT_SUCCESS);
	cr_assert_eq(ev.event_number, IT_AEVD_NOTIFICATION_EVENT);
	cr_assert_eq(ev.aevd_notify.aevd, notify);
	cr_assert_eq(ev.aevd_notify.sevd, s1);
	cr_assert_eq(it_evd_dequeue(s1, &ev), IT_SUCCESS);
	cr_assert_eq(ev.sw.data, &d1);
	cr_assert_eq(it_evd_dequeue(notify, &ev), IT_ERR_QUEUE_EMPTY);
}

Test(itapi_evd, modify_query, .init = setup, .fini = teardown)
{
	it_evd_handle_t evd = sw_evd(4, IT_EVD_OVERFLOW_NOTIFY, NULL);
	it_evd_param_t p;
	int data[8], i;

	cr_assert_eq(it_evd_query(evd, IT_EVD_PARAM_ALL, &p), IT_SUCCESS);
	cr_assert_eq(p.ia, t.ia);
	cr_assert_eq(p.event_number, IT_SOFTWARE_EVENT_STREAM);
	cr_assert_eq(p.evd_flag, IT_EVD_OVERFLOW_NOTIFY);
	cr_assert_eq(p.sevd_queue_size, 4);
	cr_assert_eq(p.sevd_threshold, 0);
	cr_assert_eq(p.aevd, NULL);
	cr_assert_eq(p.fd, -1);
	cr_assert_eq(p.evd_bound, IT_FALSE);
	cr_assert_eq(p.evd_enabled, IT_TRUE);
	cr_assert_eq(p.evd_overflowed, IT_FALSE);
	cr_assert_eq(it_evd_query(evd, (it_evd_param_mask_t)0x10000, &p),
		     IT_ERR_INVALID_MASK);
	cr_assert_eq(it_evd_query(evd, IT_EVD_PARAM_ALL, NULL), IT_ERR_FAULT);
	cr_assert_eq(it_evd_query(TAPI_BOGUS, IT_EVD_PARAM_ALL, &p),
		     IT_ERR_INVALID_EVD);

	p.sevd_queue_size = 8;
	p.sevd_threshold = 2;
	cr_assert_eq(it_evd_modify(evd,
				   IT_EVD_PARAM_QUEUE_SIZE |
					   IT_EVD_PARAM_THRESHOLD,
				   &p),
		     IT_SUCCESS);
	for (i = 0; i < 8; i++)
		cr_assert_eq(it_evd_post_se(evd, &data[i]), IT_SUCCESS);
	cr_assert_eq(it_evd_query(evd, IT_EVD_PARAM_QUEUE_SIZE, &p),
		     IT_SUCCESS);
	cr_assert_eq(p.sevd_queue_size, 8);
	/* not below the events queued */
	p.sevd_queue_size = 4;
	cr_assert_eq(it_evd_modify(evd, IT_EVD_PARAM_QUEUE_SIZE, &p),
		     IT_ERR_INVALID_QUEUE_SIZE);
	p.sevd_threshold = 9;
	cr_assert_eq(it_evd_modify(evd, IT_EVD_PARAM_THRESHOLD, &p),
		     IT_ERR_INVALID_THRESHOLD);
	cr_assert_eq(it_evd_modify(evd, IT_EVD_PARAM_FD, &p),
		     IT_ERR_INVALID_MASK);
	cr_assert_eq(it_evd_modify(evd, IT_EVD_PARAM_IA, &p),
		     IT_ERR_INVALID_MASK);
	p.evd_flag = IT_EVD_CREATE_FD;
	cr_assert_eq(it_evd_modify(evd, IT_EVD_PARAM_FLAG, &p),
		     IT_ERR_INVALID_FLAGS);
	p.evd_flag = IT_EVD_OVERFLOW_AUTO_RESET;
	cr_assert_eq(it_evd_modify(evd, IT_EVD_PARAM_FLAG, &p), IT_SUCCESS);
	p.aevd = t.sq;
	cr_assert_eq(it_evd_modify(evd, IT_EVD_PARAM_AEVD_HANDLE, &p),
		     IT_ERR_INVALID_AEVD);
	p.evd_enabled = IT_FALSE;
	cr_assert_eq(it_evd_modify(evd, IT_EVD_PARAM_ENABLED, &p), IT_SUCCESS);
	cr_assert_eq(it_evd_query(evd, IT_EVD_PARAM_ENABLED | IT_EVD_PARAM_FLAG,
				  &p),
		     IT_SUCCESS);
	cr_assert_eq(p.evd_enabled, IT_FALSE);
	cr_assert_eq(p.evd_flag, IT_EVD_OVERFLOW_AUTO_RESET);
	cr_assert_eq(it_evd_modify(evd, IT_EVD_PARAM_ENABLED, NULL),
		     IT_ERR_FAULT);
	cr_assert_eq(it_evd_modify(TAPI_BOGUS, IT_EVD_PARAM_ENABLED, &p),
		     IT_ERR_INVALID_EVD);
}

Test(itapi_evd, async_sevds, .init = setup, .fini = teardown)
{
	it_evd_handle_t aff, unaff, again;
	it_ia_info_t *info;

	cr_assert_eq(it_evd_create(t.ia, IT_ASYNC_AFF_EVENT_STREAM, 0, 8, 0,
				   NULL, &aff, NULL),
		     IT_SUCCESS);
	cr_assert_eq(it_evd_create(t.ia, IT_ASYNC_AFF_EVENT_STREAM, 0, 8, 0,
				   NULL, &again, NULL),
		     IT_ERR_ASYNC_AFF_EVD_EXISTS);
	cr_assert_eq(it_evd_create(t.ia, IT_ASYNC_UNAFF_EVENT_STREAM, 0, 8, 0,
				   NULL, &unaff, NULL),
		     IT_SUCCESS);
	cr_assert_eq(it_evd_create(t.ia, IT_ASYNC_UNAFF_EVENT_STREAM, 0, 8, 0,
				   NULL, &again, NULL),
		     IT_ERR_ASYNC_UNAFF_EVD_EXISTS);
	cr_assert_eq(it_ia_query(t.ia, &info), IT_SUCCESS);
	cr_assert_eq(info->affiliated_err_evd, aff);
	cr_assert_eq(info->unaffiliated_err_evd, unaff);
	it_ia_info_free(info);
	cr_assert_eq(it_evd_free(aff), IT_SUCCESS);
	cr_assert_eq(it_evd_create(t.ia, IT_ASYNC_AFF_EVENT_STREAM, 0, 8, 0,
				   NULL, &aff, NULL),
		     IT_SUCCESS);
}

Test(itapi_evd, overflow, .init = setup, .fini = teardown)
{
	static const unsigned char zero[IT_MAX_PRIV_DATA];
	it_ep_handle_t a1 = tapi_rc_ep(&t), a2 = tapi_rc_ep(&t);
	it_evd_handle_t aff, creq;
	it_listen_handle_t l;
	it_conn_qual_t cq;
	it_evd_param_t p;
	it_path_t path;
	it_event_t ev;

	cr_assert_eq(it_evd_create(t.ia, IT_ASYNC_AFF_EVENT_STREAM, 0, 8, 0,
				   NULL, &aff, NULL),
		     IT_SUCCESS);
	cr_assert_eq(it_evd_create(t.ia, IT_CM_REQ_EVENT_STREAM,
				   IT_EVD_OVERFLOW_DEFAULT, 1, 0, NULL, &creq,
				   NULL),
		     IT_SUCCESS);
	cr_assert_eq(it_listen_create(t.ia, 0, creq, 0, &cq, &l), IT_SUCCESS);
	tapi_path(&t, &path);
	cr_assert_eq(it_ep_connect(a1, &path, NULL, &cq,
				   IT_CONNECT_FLAG_TWO_WAY, NULL, 0),
		     IT_SUCCESS);
	cr_assert_eq(it_ep_connect(a2, &path, NULL, &cq,
				   IT_CONNECT_FLAG_TWO_WAY, NULL, 0),
		     IT_SUCCESS);
	/* the second request did not fit: it is refused and reported */
	tapi_wait(aff, IT_ASYNC_AFF_SEVD_ENQUEUE_FAILURE, &ev);
	cr_assert_eq(ev.aff_async.cause.sevd, creq);
	/* the transport's reject: whether it says "peer" is its own */
	cr_assert(tapi_next(t.cmsg, TAPI_TIMEOUT_US, &ev));
	cr_assert(ev.event_number == IT_CM_MSG_CONN_NONPEER_REJECT_EVENT ||
		  ev.event_number == IT_CM_MSG_CONN_PEER_REJECT_EVENT);
	/* none was sent; the IB CM pads a REJ's with zeros to its size */
	if (t.info->transport_type == IT_IB_TRANSPORT)
		cr_assert_arr_eq(ev.conn.private_data, zero, sizeof(zero));
	else
		cr_assert_eq(ev.conn.private_data_present, IT_FALSE);
	cr_assert_eq(ev.conn.ep, a2);
	cr_assert_eq(it_evd_query(creq, IT_EVD_PARAM_OVERFLOWED, &p),
		     IT_SUCCESS);
	cr_assert_eq(p.evd_overflowed, IT_TRUE);
	/* what came before the overflow, then the overflow itself */
	cr_assert_eq(it_evd_dequeue(creq, &ev), IT_SUCCESS);
	cr_assert_eq(ev.event_number, IT_CM_REQ_CONN_REQUEST_EVENT);
	cr_assert_eq(it_evd_dequeue(creq, &ev), IT_ERR_EVD_QUEUE_FULL);
	p.evd_overflowed = IT_FALSE;
	cr_assert_eq(it_evd_modify(creq, IT_EVD_PARAM_OVERFLOWED, &p),
		     IT_SUCCESS);
	cr_assert_eq(it_evd_dequeue(creq, &ev), IT_ERR_QUEUE_EMPTY);
}

/*
 * A DTO SEVD that overflowed: what it queued before comes out, then the
 * overflow, on dequeue and on wait alike, although its CQ is empty (a
 * take with nothing queued would otherwise look in the CQ only).
 */
Test(itapi_evd, dto_overflow, .init = setup, .fini = teardown)
{
	it_ep_attributes_t a = tapi_rc_attr();
	it_evd_handle_t aff, small;
	struct tapi_buf region;
	it_lmr_handle_t lmr;
	it_evd_param_t p;
	it_ep_handle_t ep;
	it_event_t ev;

	cr_assert_eq(it_evd_create(t.ia, IT_ASYNC_AFF_EVENT_STREAM, 0, 8, 0,
				   NULL, &aff, NULL),
		     IT_SUCCESS);
	cr_assert_eq(it_evd_create(t.ia, IT_DTO_EVENT_STREAM,
				   IT_EVD_OVERFLOW_DEFAULT, 2, 0, NULL, &small,
				   NULL),
		     IT_SUCCESS);
	cr_assert_eq(it_ep_rc_create(t.pz, small, t.rq, t.cmsg, IT_EP_NO_FLAG,
				     &a, &ep),
		     IT_SUCCESS);
	tapi_buf_make(&t, &region, 64, IT_PRIV_LOCAL);
	cr_assert_eq(it_lmr_create_unlinked(t.pz, 0, 0, 0, &lmr), IT_SUCCESS);
	/* unconnected: each completion is queued at once; the third is lost */
	cr_assert_eq(it_lmr_link(lmr, region.p, NULL, 64, IT_ADDR_MODE_ABSOLUTE,
				 IT_PRIV_LOCAL, ep, 1, IT_COMPLETION_FLAG,
				 NULL),
		     IT_SUCCESS);
	cr_assert_eq(it_lmr_unlink(lmr, ep, 2, IT_COMPLETION_FLAG), IT_SUCCESS);
	cr_assert_neq(it_lmr_link(lmr, region.p, NULL, 64,
				  IT_ADDR_MODE_ABSOLUTE, IT_PRIV_LOCAL, ep, 3,
				  IT_COMPLETION_FLAG, NULL),
		      IT_SUCCESS);
	tapi_wait(aff, IT_ASYNC_AFF_SEVD_ENQUEUE_FAILURE, &ev);
	cr_assert_eq(ev.aff_async.cause.sevd, small);
	cr_assert_eq(it_evd_dequeue(small, &ev), IT_SUCCESS);
	cr_assert_eq(ev.dto_cmpl.cookie, 1);
	cr_assert_eq(it_evd_wait(small, TAPI_TIMEOUT_US, &ev, NULL),
		     IT_SUCCESS);
	cr_assert_eq(ev.dto_cmpl.cookie, 2);
	cr_assert_eq(it_evd_dequeue(small, &ev), IT_ERR_EVD_QUEUE_FULL);
	cr_assert_eq(it_evd_wait(small, TAPI_TIMEOUT_US, &ev, NULL),
		     IT_ERR_EVD_QUEUE_FULL);
	p.evd_overflowed = IT_FALSE;
	cr_assert_eq(it_evd_modify(small, IT_EVD_PARAM_OVERFLOWED, &p),
		     IT_SUCCESS);
	cr_assert_eq(it_evd_dequeue(small, &ev), IT_ERR_QUEUE_EMPTY);
	cr_assert_eq(it_evd_wait(small, 0, &ev, NULL), IT_ERR_TIMEOUT_EXPIRED);
	cr_assert_eq(it_lmr_free(lmr), IT_SUCCESS);
	cr_assert_eq(it_ep_free(ep), IT_SUCCESS);
	cr_assert_eq(it_evd_free(small), IT_SUCCESS);
}

Test(itapi_evd, busy_while_used, .init = setup, .fini = teardown)
{
	it_ep_handle_t ep = tapi_rc_ep(&t);
	it_evd_param_t p;

	cr_assert_eq(it_evd_query(t.sq, IT_EVD_PARAM_BOUND, &p), IT_SUCCESS);
	cr_assert_eq(p.evd_bound, IT_TRUE);
	cr_assert_eq(it_evd_free(t.sq), IT_ERR_EVD_BUSY);
	cr_assert_eq(it_evd_free(t.cmsg), IT_ERR_EVD_BUSY);
	cr_assert_eq(it_ep_free(ep), IT_SUCCESS);
	cr_assert_eq(it_evd_free(t.sq), IT_SUCCESS);
#ifdef OPENRDMA_DEBUG
	/* a freed handle is refused, not read */
	cr_assert_eq(it_evd_free(t.sq), IT_ERR_INVALID_EVD);
	cr_assert_eq(it_evd_dequeue(t.sq, &(it_event_t){ 0 }),
		     IT_ERR_INVALID_EVD);
#endif
}

Test(itapi_evd, spigot_online)
{
	it_evd_handle_t unaff;
	it_event_t ev;

	/* self queues PORT_ACTIVE once when asked to: the unaffiliated
	 * SEVD reports it as the spigot coming online */
	setenv("OPENRDMA_SELF_PORT_EVENT", "1", 1);
	tapi_open(&t);
	if (strncmp(t.info->ia_name, "self", 4))
		cr_skip_test("port events on demand are self's (%s)",
			     t.info->ia_name);
	cr_assert_eq(it_evd_create(t.ia, IT_ASYNC_UNAFF_EVENT_STREAM, 0, 8, 0,
				   NULL, &unaff, NULL),
		     IT_SUCCESS);
	tapi_wait(unaff, IT_ASYNC_UNAFF_SPIGOT_ONLINE, &ev);
	cr_assert_eq(ev.unaff_async.ia, t.ia);
	cr_assert_eq(ev.unaff_async.spigot_id, 0);
	tapi_close(&t);
}
