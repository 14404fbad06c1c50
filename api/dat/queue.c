/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * What is posted and not yet completed: the send ring of an EP and the
 * receive slots of an EP or SRQ (see provider.h for why they differ).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <openrdma/errno.h>

#include "api/dat/provider.h"

int datp_sq_init(struct datp_sq *sq, uint32_t cap, uint32_t max_sge)
{
	int ret;

	memset(sq, 0, sizeof(*sq));
	sq->slots = calloc(cap, sizeof(*sq->slots));
	sq->sge = calloc(max_sge ? max_sge : 1, sizeof(*sq->sge));
	if (!sq->slots || !sq->sge) {
		ret = -OPENRDMA_ENOMEM;
		goto err_free;
	}
	ret = -pthread_mutex_init(&sq->lock, NULL);
	if (ret)
		goto err_free;
	sq->cap = cap;
	sq->max_sge = max_sge;
	atomic_init(&sq->tail, 0);
	return 0;

err_free:
	free(sq->sge);
	free(sq->slots);
	sq->sge = NULL;
	sq->slots = NULL;
	return ret;
}

void datp_sq_fini(struct datp_sq *sq)
{
	if (!sq->slots)
		return;
	pthread_mutex_destroy(&sq->lock);
	free(sq->sge);
	free(sq->slots);
	sq->slots = NULL;
	sq->sge = NULL;
}

void datp_sq_reset(struct datp_sq *sq)
{
	pthread_mutex_lock(&sq->lock);
	sq->head = 0;
	sq->unsignaled = 0;
	atomic_store(&sq->tail, 0);
	pthread_mutex_unlock(&sq->lock);
}

uint32_t datp_sq_outstanding(struct datp_sq *sq)
{
	uint32_t n;

	pthread_mutex_lock(&sq->lock);
	n = sq->head - atomic_load(&sq->tail);
	pthread_mutex_unlock(&sq->lock);
	return n;
}

int datp_rq_init(struct datp_rq *rq, uint32_t cap, uint32_t max_sge)
{
	int ret;

	memset(rq, 0, sizeof(*rq));
	rq->slots = calloc(cap, sizeof(*rq->slots));
	rq->free_list = calloc(cap, sizeof(*rq->free_list));
	rq->sge = calloc(max_sge ? max_sge : 1, sizeof(*rq->sge));
	if (!rq->slots || !rq->free_list || !rq->sge) {
		ret = -OPENRDMA_ENOMEM;
		goto err_free;
	}
	ret = -pthread_mutex_init(&rq->lock, NULL);
	if (ret)
		goto err_free;
	rq->cap = cap;
	rq->max_sge = max_sge;
	datp_rq_reset(rq);
	return 0;

err_free:
	free(rq->sge);
	free(rq->free_list);
	free(rq->slots);
	memset(rq, 0, sizeof(*rq));
	return ret;
}

void datp_rq_fini(struct datp_rq *rq)
{
	if (!rq->slots)
		return;
	pthread_mutex_destroy(&rq->lock);
	free(rq->sge);
	free(rq->free_list);
	free(rq->slots);
	memset(rq, 0, sizeof(*rq));
}

/* Every slot free.  Called on new queues, or with rq->lock held. */
void datp_rq_reset(struct datp_rq *rq)
{
	uint32_t i;

	for (i = 0; i < rq->cap; i++)
		rq->free_list[i] = rq->cap - 1 - i;
	rq->nfree = rq->cap;
	rq->bytes = 0;
}

int datp_rq_take(struct datp_rq *rq)
{
	if (!rq->nfree)
		return -OPENRDMA_ENOSPC;
	return (int)rq->free_list[--rq->nfree];
}

void datp_rq_give(struct datp_rq *rq, uint32_t index)
{
	if (rq->nfree < rq->cap) {
		rq->bytes -= rq->slots[index].length;
		rq->free_list[rq->nfree++] = index;
	}
}

int datp_rq_grow(struct datp_rq *rq, uint32_t cap)
{
	struct datp_slot *slots;
	uint32_t *free_list;
	uint32_t i;

	if (cap <= rq->cap)
		return 0;
	slots = realloc(rq->slots, cap * sizeof(*slots));
	if (!slots)
		return -OPENRDMA_ENOMEM;
	rq->slots = slots;
	free_list = realloc(rq->free_list, cap * sizeof(*free_list));
	if (!free_list)
		return -OPENRDMA_ENOMEM;
	rq->free_list = free_list;
	for (i = rq->cap; i < cap; i++)
		rq->free_list[rq->nfree++] = i;
	rq->cap = cap;
	return 0;
}
