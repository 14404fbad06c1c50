/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The progress thread of a context: it sleeps in epoll on the context's
 * completion channel, async-event fd and rdma_cm event channel, and turns
 * what it reads into core notifications and events.  Every libibverbs and
 * librdmacm event is acknowledged right after it is reported, which is
 * what lets ibv_destroy_cq(), ibv_destroy_qp() and rdma_destroy_id() in
 * other threads return.
 */
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "transports/verbs/verbs.h"

enum { SRC_WAKE, SRC_COMP, SRC_ASYNC, SRC_CM, SRC_NUM };

static void comp_drain(struct verbs_ctx *vctx)
{
	struct ibv_cq *ibcq;
	void *cq_ctx;

	while (!ibv_get_cq_event(vctx->comp_ch, &ibcq, &cq_ctx)) {
		/*
		 * The device fired because the CQ was armed as the core armed
		 * it; the core decides whether its channel wakes up.
		 */
		openrdma_cq_notify(&((struct verbs_cq *)cq_ctx)->base, true);
		ibv_ack_cq_events(ibcq, 1);
	}
}

/* Data arrived before the RTU: tell the CM that the connection is up. */
static void comm_est(struct verbs_ctx *vctx, struct verbs_qp *vqp)
{
	pthread_mutex_lock(&vctx->cm_lock);
	if (vqp->cmid && rdma_notify(vqp->cmid, IBV_EVENT_COMM_EST))
		openrdma_dbg("verbs", "rdma_notify: %s", strerror(errno));
	pthread_mutex_unlock(&vctx->cm_lock);
}

void verbs_async_event(struct verbs_ctx *vctx, struct ibv_async_event *ev)
{
	struct openrdma_async_event out;
	struct verbs_srq *vsrq;
	struct verbs_cq *vcq;

	memset(&out, 0, sizeof(out));
	out.event_type = (enum openrdma_event_type)ev->event_type;
	switch (ev->event_type) {
	case IBV_EVENT_CQ_ERR:
		vcq = ev->element.cq->cq_context;
		atomic_store(&vcq->overrun, true);
		verbs_qp_cq_overrun(vctx, vcq);
		out.element.cq = &vcq->base;
		break;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		out.element.qp = ev->element.qp->qp_context;
		if (ev->event_type == IBV_EVENT_COMM_EST)
			comm_est(vctx, ev->element.qp->qp_context);
		/* these three mean the device moved the QP to ERR */
		if (ev->event_type == IBV_EVENT_QP_FATAL ||
		    ev->event_type == IBV_EVENT_QP_REQ_ERR ||
		    ev->event_type == IBV_EVENT_QP_ACCESS_ERR)
			verbs_qp_state_set(ev->element.qp->qp_context,
					   OPENRDMA_QPS_ERR);
		break;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		vsrq = ev->element.srq->srq_context;
		out.element.srq = &vsrq->base;
		/* the event disarms the limit */
		if (ev->event_type == IBV_EVENT_SRQ_LIMIT_REACHED)
			atomic_store(&vsrq->limit, 0);
		break;
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_SM_CHANGE:
	case IBV_EVENT_CLIENT_REREGISTER:
	case IBV_EVENT_GID_CHANGE:
		/* another port of the device is another interface */
		if (ev->element.port_num != vctx->port)
			return;
		out.element.port_num = 1;
		break;
	case IBV_EVENT_DEVICE_FATAL:
		break;
	default:
		openrdma_dbg("verbs", "async event %d ignored",
			     (int)ev->event_type);
		return;
	}
	openrdma_async_event_post(&vctx->base, &out);
}

static void async_drain(struct verbs_ctx *vctx)
{
	struct ibv_async_event ev;

	while (!ibv_get_async_event(vctx->ibctx, &ev)) {
		verbs_async_event(vctx, &ev);
		ibv_ack_async_event(&ev);
	}
}

static void cm_drain(struct verbs_ctx *vctx)
{
	struct rdma_cm_event *ev;

	while (!rdma_get_cm_event(vctx->cm_ch, &ev))
		verbs_cm_event(vctx, ev);
}

static void *progress_main(void *arg)
{
	struct verbs_ctx *vctx = arg;
	struct epoll_event evs[SRC_NUM];
	int i, n;

	for (;;) {
		n = epoll_wait(vctx->epfd, evs, SRC_NUM, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			openrdma_err("verbs", "epoll_wait: %s",
				     strerror(errno));
			return NULL;
		}
		for (i = 0; i < n; i++) {
			switch (evs[i].data.u32) {
			case SRC_WAKE:
				return NULL;
			case SRC_COMP:
				comp_drain(vctx);
				break;
			case SRC_ASYNC:
				async_drain(vctx);
				break;
			case SRC_CM:
				cm_drain(vctx);
				break;
			}
		}
	}
}

static int epoll_add(int epfd, int fd, uint32_t src)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = src };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) ? verbs_errno() : 0;
}

int verbs_progress_start(struct verbs_ctx *vctx)
{
	sigset_t all, old;
	int ret;

	vctx->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (vctx->epfd < 0)
		return verbs_errno();
	vctx->wake_fd = eventfd(0, EFD_CLOEXEC);
	if (vctx->wake_fd < 0) {
		ret = verbs_errno();
		goto err_epoll;
	}
	ret = epoll_add(vctx->epfd, vctx->wake_fd, SRC_WAKE);
	if (!ret)
		ret = epoll_add(vctx->epfd, vctx->comp_ch->fd, SRC_COMP);
	if (!ret)
		ret = epoll_add(vctx->epfd, vctx->ibctx->async_fd, SRC_ASYNC);
	if (!ret)
		ret = epoll_add(vctx->epfd, vctx->cm_ch->fd, SRC_CM);
	if (ret)
		goto err_wake;

	/* The application's signals are for its own threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&vctx->thread, NULL, progress_main, vctx);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		goto err_wake;
	return 0;

err_wake:
	close(vctx->wake_fd);
err_epoll:
	close(vctx->epfd);
	return ret;
}

void verbs_progress_stop(struct verbs_ctx *vctx)
{
	uint64_t one = 1;

	if (write(vctx->wake_fd, &one, sizeof(one)) != sizeof(one))
		openrdma_err("verbs", "progress thread wake-up: %s",
			     strerror(errno));
	pthread_join(vctx->thread, NULL);
	close(vctx->wake_fd);
	close(vctx->epfd);
}
