/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The progress thread of a context, and the receive side it shares with
 * the application's threads.
 *
 * Incoming rings sit in slots; any thread may drain a slot it can mark
 * busy, so a polling application thread serves its peers without a
 * thread switch.  The progress thread drains them too when nobody polls,
 * watches the sockets (handshakes, CM, peers going away) and runs the
 * commands that must not race with its handlers.
 *
 * Sleeping: while the application polls, the progress thread naps without
 * telling anyone (producers then make no syscall); once nobody polled for
 * a nap, it sets the node segment's sleeping flag, looks at the rings once
 * more and blocks in epoll until a producer writes its eventfd.  While the
 * application arms CQs it may be waiting for a completion that only this
 * thread would deliver: then its naps are short and announced, so that a
 * producer cuts them short, and an arm cuts a blind nap short.  The flag
 * and the rings are a Dekker pair: the producer stores its element, then
 * loads the flag; we store the flag, then load the rings.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include <utlist.h>

#include <openrdma/log.h>

#include "transports/shm/shm.h"
#include "core/sw/epoll.h"

/* How long the thread naps while an application thread polls: silently,
 * or, while the application also arms CQs, a short nap that producers
 * cut short. */
#define NAP_NS 1000000
#define SHORT_NAP_NS 50000
/* Busy polling: look at the sockets every so many passes. */
#define BUSY_SOCKET_PASSES 256
#define MAX_EVENTS 32

struct shm_cmd {
	struct shm_cmd *next;
	void (*fn)(void *arg);
	void *arg;
	bool done;
};

/* The context whose progress thread this is, if any. */
static __thread struct shm_ctx *prog_ctx;

bool shm_prog_on_thread(struct shm_ctx *sctx)
{
	return prog_ctx && (!sctx || prog_ctx == sctx);
}

void shm_prog_wake(struct shm_ctx *sctx)
{
	uint64_t one = 1;

	if (write(sctx->prog.wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		openrdma_warn("shm", "wake-up: %s", strerror(errno));
}

void shm_peer_kick(const struct shm_peer *peer)
{
	uint64_t one = 1;

	/* paired with the fence in prog_sleep(): our element is visible
	 * to it, or its flag to us */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&peer->hdr->sleeping, memory_order_relaxed) &&
	    write(peer->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		openrdma_dbg("shm", "kick node %u: %s", peer->node,
			     strerror(errno));
}

int shm_slot_add(struct shm_ctx *sctx, enum shm_slot_kind kind, void *obj)
{
	struct shm_prog *pg = &sctx->prog;
	uint32_t i, hwm;

	pthread_mutex_lock(&pg->lock);
	hwm = atomic_load(&pg->hwm);
	for (i = 0; i < hwm; i++)
		if (atomic_load(&pg->slots[i].kind) == SHM_SLOT_FREE &&
		    !(atomic_load(&pg->slots[i].seq) & 1))
			break;
	if (i == SHM_MAX_SLOTS) {
		pthread_mutex_unlock(&pg->lock);
		return -OPENRDMA_ENOSPC;
	}
	pg->slots[i].obj = obj;
	atomic_store(&pg->slots[i].kind, (int)kind);
	if (i == hwm)
		atomic_store(&pg->hwm, hwm + 1);
	pthread_mutex_unlock(&pg->lock);
	return (int)i;
}

bool shm_slot_take(struct shm_slot *s)
{
	uint32_t v = atomic_load_explicit(&s->seq, memory_order_relaxed);

	return !(v & 1) && atomic_compare_exchange_strong(&s->seq, &v, v + 1);
}

void shm_slot_release(struct shm_slot *s)
{
	/* only the taker moves an odd seq */
	uint32_t v = atomic_load_explicit(&s->seq, memory_order_relaxed);

	atomic_store_explicit(&s->seq, v + 1, memory_order_release);
}

/* Returns once the drain of s under way, if any, has ended. */
static void slot_wait(struct shm_slot *s)
{
	uint32_t v = atomic_load(&s->seq);

	if (v & 1)
		while (atomic_load(&s->seq) == v)
			sched_yield();
}

void shm_slots_wait(struct shm_ctx *sctx)
{
	uint32_t i, hwm = atomic_load(&sctx->prog.hwm);

	for (i = 0; i < hwm; i++)
		slot_wait(&sctx->prog.slots[i]);
}

void shm_slot_del(struct shm_ctx *sctx, int slot)
{
	struct shm_slot *s = &sctx->prog.slots[slot];

	pthread_mutex_lock(&sctx->prog.lock);
	atomic_store(&s->kind, SHM_SLOT_FREE);
	pthread_mutex_unlock(&sctx->prog.lock);
	/* a thread that saw it active before is still draining it; one
	 * that takes it now finds it free */
	slot_wait(s);
}

/* Whether a slot's rings have something: a hint, not trusted before
 * sleeping (pass()). */
static bool slot_pending(int kind, void *obj)
{
	struct shm_conn *conn;

	if (kind != SHM_SLOT_CONN)
		return shm_ring_pending(&((struct shm_link *)obj)->cons);
	conn = obj;
	return shm_ring_pending(&conn->req_rx) ||
	       shm_ring_pending(&conn->resp_rx) ||
	       atomic_load_explicit(&conn->ack_held, memory_order_relaxed) ||
	       atomic_load_explicit(&conn->streaming, memory_order_relaxed);
}

/*
 * thorough: drain every ring, not trusting the hints (before sleeping);
 * *held says one was held by another thread.
 *
 * A connection closed in another thread is freed, and its peer's segment
 * unmapped, once its slot is free and no longer taken (shm_slot_del()):
 * an application thread takes a slot before it looks at its rings, even
 * for the hint.  The progress thread looks first and takes only a slot
 * with work (an idle ring costs it two loads and no locked instruction):
 * what a slot holds is freed only on this thread, or after a command it
 * runs between passes (conn_close()), so nothing goes while it looks.
 * Were it to take every slot, an application thread polling on its core
 * would find the slot taken whenever it preempted the progress thread in
 * the middle of a look, and wait for the scheduler.
 */
static int pass(struct shm_ctx *sctx, bool thorough, bool *held)
{
	struct shm_prog *pg = &sctx->prog;
	uint32_t i, hwm = atomic_load_explicit(&pg->hwm, memory_order_acquire);
	bool on_thread = shm_prog_on_thread(sctx);
	bool peek = !thorough && on_thread, hint = !thorough && !on_thread;
	struct shm_slot *s;
	int n = 0, kind;

	for (i = 0; i < hwm; i++) {
		s = &pg->slots[i];
		kind = atomic_load_explicit(&s->kind, memory_order_acquire);
		if (kind == SHM_SLOT_FREE ||
		    (peek && !slot_pending(kind, s->obj)))
			continue;
		if (!shm_slot_take(s)) {
			/* another thread drains it, and may have looked
			 * before an element whose producer saw us awake:
			 * not a pass to go to sleep on */
			if (thorough)
				*held = true;
			continue;
		}
		/* checked again now that we hold it: see shm_slot_del() */
		kind = atomic_load(&s->kind);
		if (kind == SHM_SLOT_FREE ||
		    (hint && !slot_pending(kind, s->obj))) {
			shm_slot_release(s);
			continue;
		}
		/*
		 * Deliveries write registered memory.  A deregistration moves
		 * the epoch on, then waits for the drains under way: if this
		 * load comes before its move, it sees our take; if after, we
		 * see what it changed before (shm_slots_wait()).
		 */
		(void)atomic_load(&sctx->epoch.epoch);
		if (kind == SHM_SLOT_CONN)
			n += shm_conn_rx(s->obj);
		else
			n += shm_link_rx(s->obj);
		shm_slot_release(s);
	}
	return n;
}

int shm_prog_pass(struct shm_ctx *sctx)
{
	return pass(sctx, false, NULL);
}

void shm_prog_arm_hint(struct shm_ctx *sctx)
{
	struct shm_prog *pg = &sctx->prog;

	atomic_store(&pg->app_active, false);
	/* a Dekker pair with blind_nap(): it sees the arm, or we its nap */
	atomic_fetch_add(&pg->arms, 1);
	if (atomic_load(&pg->napping))
		shm_prog_wake(sctx);
}

int shm_prog_poll(struct shm_ctx *sctx)
{
	/* only a store when it changes: the flag's line stays shared */
	if (!atomic_load_explicit(&sctx->prog.app_active, memory_order_relaxed))
		atomic_store_explicit(&sctx->prog.app_active, true,
				      memory_order_relaxed);
	return shm_prog_pass(sctx);
}

struct shm_watch *shm_watch_add(struct shm_ctx *sctx, int fd,
				void (*fn)(struct shm_ctx *, struct shm_watch *,
					   uint32_t),
				void *owner)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP };
	struct shm_watch *w;

	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->fd = fd;
	w->fn = fn;
	w->owner = owner;
	ev.data.ptr = w;
	if (epoll_ctl(sctx->prog.epfd, EPOLL_CTL_ADD, fd, &ev)) {
		openrdma_warn("shm", "epoll_ctl: %s", strerror(errno));
		free(w);
		return NULL;
	}
	DL_APPEND(sctx->prog.watches, w);
	return w;
}

void shm_watch_del(struct shm_ctx *sctx, struct shm_watch *w)
{
	if (!w)
		return;
	epoll_ctl(sctx->prog.epfd, EPOLL_CTL_DEL, w->fd, NULL);
	close(w->fd);
	w->fd = -1;
	w->dead = true;
	w->owner = NULL;
	DL_DELETE(sctx->prog.watches, w);
	/* events for it may be in the batch being handled: freed after */
	w->reap_next = sctx->prog.reap;
	sctx->prog.reap = w;
}

static void reap(struct shm_prog *pg)
{
	struct shm_watch *w;

	while ((w = pg->reap)) {
		pg->reap = w->reap_next;
		free(w);
	}
}

static void drain_wake(struct shm_prog *pg)
{
	uint64_t v;

	if (read(pg->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		openrdma_dbg("shm", "wake-up read: %s", strerror(errno));
}

/* Handles the sockets' events; timeout_ns < 0: wait for one. */
static void poll_sockets(struct shm_ctx *sctx, long timeout_ns)
{
	struct shm_prog *pg = &sctx->prog;
	struct epoll_event evs[MAX_EVENTS];
	struct shm_watch *w;
	int i, n;

	n = sw_epoll_wait(pg->epfd, evs, MAX_EVENTS, timeout_ns);
	for (i = 0; i < n; i++) {
		w = evs[i].data.ptr;
		if (!w)
			drain_wake(pg);
		else if (!w->dead)
			w->fn(sctx, w, evs[i].events);
	}
	reap(pg);
}

static bool run_cmds(struct shm_prog *pg)
{
	struct shm_cmd *c;
	bool ran = false;

	if (!atomic_load(&pg->ncmds))
		return false;
	pthread_mutex_lock(&pg->lock);
	while ((c = pg->cmds)) {
		pg->cmds = c->next;
		atomic_fetch_sub(&pg->ncmds, 1);
		pthread_mutex_unlock(&pg->lock);
		c->fn(c->arg);
		ran = true;
		pthread_mutex_lock(&pg->lock);
		c->done = true;
		pthread_cond_broadcast(&pg->done);
	}
	pthread_mutex_unlock(&pg->lock);
	reap(pg);
	return ran;
}

void shm_prog_run(struct shm_ctx *sctx, void (*fn)(void *arg), void *arg)
{
	struct shm_prog *pg = &sctx->prog;
	struct shm_cmd cmd = { .fn = fn, .arg = arg }, **pos;

	if (!pg->started || prog_ctx == sctx) {
		fn(arg);
		reap(pg);
		return;
	}
	pthread_mutex_lock(&pg->lock);
	for (pos = &pg->cmds; *pos; pos = &(*pos)->next)
		;
	*pos = &cmd;
	atomic_fetch_add(&pg->ncmds, 1);
	pthread_mutex_unlock(&pg->lock);
	shm_prog_wake(sctx);
	pthread_mutex_lock(&pg->lock);
	while (!cmd.done)
		pthread_cond_wait(&pg->done, &pg->lock);
	pthread_mutex_unlock(&pg->lock);
}

/* An application polls and arms nothing: it drains the rings itself, and
 * producers need not wake us. */
static void blind_nap(struct shm_ctx *sctx)
{
	struct shm_prog *pg = &sctx->prog;

	atomic_store(&pg->napping, true);
	if (atomic_load(&pg->arms) == pg->arms_seen)
		poll_sockets(sctx, NAP_NS);
	atomic_store(&pg->napping, false);
}

/* Announces that we sleep, looks once more, and sleeps until a producer
 * wakes us, or for at most timeout_ns (< 0: no limit). */
static void prog_sleep(struct shm_ctx *sctx, long timeout_ns)
{
	bool held = false;

	atomic_store(&sctx->hdr->sleeping, 1);
	atomic_thread_fence(memory_order_seq_cst);
	if (!pass(sctx, true, &held) && !held && !atomic_load(&sctx->prog.stop))
		poll_sockets(sctx, timeout_ns);
	atomic_store(&sctx->hdr->sleeping, 0);
	/* the thread that holds a ring is often one we preempted on its
	 * core, and looks at the ring for us: not a thread to spin
	 * against */
	if (held)
		sched_yield();
}

static void *prog_main(void *arg)
{
	struct shm_ctx *sctx = arg;
	struct shm_prog *pg = &sctx->prog;
	unsigned int passes = 0, arms;
	int n;

	prog_ctx = sctx;
	while (!atomic_load(&pg->stop)) {
		run_cmds(pg);
		n = shm_prog_pass(sctx);
		if (sctx->par.busy_poll) {
			if (!(++passes % BUSY_SOCKET_PASSES))
				poll_sockets(sctx, 0);
			continue;
		}
		arms = atomic_load(&pg->arms);
		if (!atomic_exchange(&pg->app_active, false)) {
			/* nobody polls: we drain while there is work */
			if (n)
				poll_sockets(sctx, 0);
			else
				prog_sleep(sctx, -1);
		} else if (arms != pg->arms_seen) {
			/* the application polls, but arms CQs and may wait
			 * for a completion that only we would deliver: a nap
			 * that producers cut short */
			pg->arms_seen = arms;
			prog_sleep(sctx, SHORT_NAP_NS);
		} else {
			blind_nap(sctx);
		}
	}
	return NULL;
}

int shm_prog_start(struct shm_ctx *sctx)
{
	struct shm_prog *pg = &sctx->prog;
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	int ret;

	pg->slots = calloc(SHM_MAX_SLOTS, sizeof(*pg->slots));
	if (!pg->slots)
		return -OPENRDMA_ENOMEM;
	ret = -pthread_mutex_init(&pg->lock, NULL);
	if (ret)
		goto err_slots;
	ret = -pthread_cond_init(&pg->done, NULL);
	if (ret)
		goto err_lock;
	pg->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (pg->epfd < 0) {
		ret = -errno;
		goto err_cond;
	}
	pg->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (pg->wake_fd < 0) {
		ret = -errno;
		goto err_ep;
	}
	if (epoll_ctl(pg->epfd, EPOLL_CTL_ADD, pg->wake_fd, &ev)) {
		ret = -errno;
		goto err_wake;
	}
	ret = -pthread_create(&pg->thread, NULL, prog_main, sctx);
	if (ret)
		goto err_wake;
	pg->started = true;
	return 0;

err_wake:
	close(pg->wake_fd);
err_ep:
	close(pg->epfd);
err_cond:
	pthread_cond_destroy(&pg->done);
err_lock:
	pthread_mutex_destroy(&pg->lock);
err_slots:
	free(pg->slots);
	return ret;
}

void shm_prog_stop(struct shm_ctx *sctx)
{
	struct shm_prog *pg = &sctx->prog;

	if (pg->started) {
		atomic_store(&pg->stop, true);
		shm_prog_wake(sctx);
		pthread_join(pg->thread, NULL);
		pg->started = false;
	}
	/* what nobody took back: sockets of requests never answered */
	while (pg->watches)
		shm_watch_del(sctx, pg->watches);
	reap(pg);
	close(pg->wake_fd);
	close(pg->epfd);
	pthread_cond_destroy(&pg->done);
	pthread_mutex_destroy(&pg->lock);
	free(pg->slots);
}
