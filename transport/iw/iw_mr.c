/* iw_mr.c: protection domains, memory regions (STags) and completion queues. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "iw_int.h"

/* STag = region index << 8 | key; the key changes each time an index is reused. */
struct iw_mr *iw_mr_find(struct iw_rnic *r, uint32_t stag)
{
	uint32_t idx = stag >> 8;
	if (idx >= IW_MAX_MR || !r->mr[idx].used || r->mr[idx].key != (uint8_t)stag)
		return NULL;
	return &r->mr[idx];
}

int iw_pd_alloc(struct iw_rnic *r, struct iw_pd **out)
{
	struct iw_pd *pd = calloc(1, sizeof(*pd));
	if (!pd)
		return iw_err(-ENOMEM, "iw_pd_alloc: out of memory");
	pd->r = r;
	pthread_mutex_lock(&r->lock);
	pd->next = r->pds;
	r->pds = pd;
	pthread_mutex_unlock(&r->lock);
	*out = pd;
	return 0;
}

int iw_pd_free(struct iw_pd *pd)
{
	struct iw_rnic *r = pd->r;
	pthread_mutex_lock(&r->lock);
	int users = pd->users;
	if (!users)
		for (struct iw_pd **p = &r->pds; *p; p = &(*p)->next)
			if (*p == pd) {
				*p = pd->next;
				break;
			}
	pthread_mutex_unlock(&r->lock);
	if (users)
		return iw_err(-EBUSY, "iw_pd_free: %d region(s)/QP(s) still use the PD", users);
	free(pd);
	return 0;
}

int iw_reg_mr(struct iw_pd *pd, void *addr, size_t len, unsigned access, uint32_t *stag)
{
	struct iw_rnic *r = pd->r;
	uint64_t base = (uint64_t)(uintptr_t)addr;
	if ((!addr && len) || base + len < base || (access & ~0x3fu))
		return iw_err(-EINVAL, "iw_reg_mr: bad region %p+%zu or access %#x", addr, len,
			      access);
	pthread_mutex_lock(&r->lock);
	for (uint32_t i = 1; i < IW_MAX_MR; i++) {
		struct iw_mr *m = &r->mr[i];
		if (m->used)
			continue;
		uint8_t key = (uint8_t)(m->key + 1);
		memset(m, 0, sizeof(*m));
		m->used = m->valid = 1;
		m->key = key;
		m->pd = pd;
		m->base = base;
		m->len = len;
		m->access = access;
		pd->users++;
		*stag = i << 8 | key;
		pthread_mutex_unlock(&r->lock);
		return 0;
	}
	pthread_mutex_unlock(&r->lock);
	return iw_err(-ENOSPC, "iw_reg_mr: all %d regions in use", IW_MAX_MR - 1);
}

/*
 * Why dereg waits for Read Responses sent in place, rather than the segments holding a
 * reference on the region: the caller frees the memory as soon as we return (a reference
 * would keep the STag, not the bytes), and the core reads them until their sends complete.
 * So, as a hardware RNIC's deregistration waits for its DMA in flight, the region becomes
 * invalid (no new segments) and we progress until the core has let go of the rest: each of its
 * queued sends completes, sent, peer lost or endpoint closed. Lock held on entry and exit.
 */
static int wait_in_place(struct iw_rnic *r, uint32_t stag)
{
	struct iw_mr *m = iw_mr_find(r, stag);
	if (!m || !m->inflight)
		return 0;
	m->valid = 0;
	r->st.dereg_waits++;
	double end = iw_now() + r->attr.dereg_wait_ms / 1e3;
	while ((m = iw_mr_find(r, stag)) && m->inflight) {
		if (iw_now() >= end)
			return iw_err(-EBUSY, "iw_dereg_mr: STag %#x: %u Read Response segment(s) "
				      "sent from it still held by the core", stag, m->inflight);
		pthread_mutex_unlock(&r->lock);
		if (r->thread_on) {
			nanosleep(&(struct timespec){0, 1000000}, NULL);
		} else {
			iw_progress(r);
			sctpt_wait(r->ep, 1);
		}
		pthread_mutex_lock(&r->lock);
	}
	return 0;
}

int iw_dereg_mr(struct iw_rnic *r, uint32_t stag)
{
	pthread_mutex_lock(&r->lock);
	int rc = wait_in_place(r, stag);
	struct iw_mr *m = iw_mr_find(r, stag);
	if (rc || !m) {
		pthread_mutex_unlock(&r->lock);
		return rc ? rc : iw_err(-ENOENT, "iw_dereg_mr: no STag %#x", stag);
	}
	m->pd->users--;
	m->used = m->valid = 0;
	pthread_mutex_unlock(&r->lock);
	return 0;
}

int iw_invalidate_stag(struct iw_rnic *r, uint32_t stag)
{
	pthread_mutex_lock(&r->lock);
	struct iw_mr *m = iw_mr_find(r, stag);
	if (m)
		m->valid = 0;
	pthread_mutex_unlock(&r->lock);
	return m ? 0 : iw_err(-ENOENT, "iw_invalidate_stag: no STag %#x", stag);
}

int iw_stag_valid(struct iw_rnic *r, uint32_t stag)
{
	pthread_mutex_lock(&r->lock);
	struct iw_mr *m = iw_mr_find(r, stag);
	int rc = m ? m->valid : -ENOENT;
	pthread_mutex_unlock(&r->lock);
	return rc;
}

int iw_cq_create(struct iw_rnic *r, unsigned depth, struct iw_cq **out)
{
	struct iw_cq *cq = calloc(1, sizeof(*cq));
	if (depth == 0)
		depth = 1024;
	if (cq)
		cq->ring = calloc(depth, sizeof(*cq->ring));
	if (!cq || !cq->ring) {
		free(cq);
		return iw_err(-ENOMEM, "iw_cq_create: out of memory");
	}
	cq->r = r;
	cq->depth = depth;
	pthread_mutex_lock(&r->lock);
	cq->next = r->cqs;
	r->cqs = cq;
	pthread_mutex_unlock(&r->lock);
	*out = cq;
	return 0;
}

int iw_cq_destroy(struct iw_cq *cq)
{
	struct iw_rnic *r = cq->r;
	pthread_mutex_lock(&r->lock);
	int users = cq->users;
	if (!users)
		for (struct iw_cq **p = &r->cqs; *p; p = &(*p)->next)
			if (*p == cq) {
				*p = cq->next;
				break;
			}
	pthread_mutex_unlock(&r->lock);
	if (users)
		return iw_err(-EBUSY, "iw_cq_destroy: %d QP(s) still use the CQ", users);
	free(cq->ring);
	free(cq);
	return 0;
}

int iw_cq_push(struct iw_cq *cq, const struct iw_wc *wc)
{
	if (cq->count == cq->depth) {
		cq->full = 1;
		return -1;
	}
	cq->ring[(cq->head + cq->count) % cq->depth] = *wc;
	cq->count++;
	return 0;
}

/* Room was made: the completions that waited for it, each QP's in its queue's order; the QPs
 * take turns at going first. Every QP of the CQ tries (a failed push marks the CQ full again). */
static void cq_refill(struct iw_cq *cq)
{
	struct iw_rnic *r = cq->r;
	uint32_t n = r->qp_end;
	cq->full = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct iw_qp *qp = r->qp[(cq->refill_next + i) % n];
		if (!qp)
			continue;
		if (qp->scq == cq)
			iw_sq_retire(qp);
		if (qp->rcq == cq)
			iw_rq_retire(qp);
	}
	if (n)
		cq->refill_next = (cq->refill_next + 1) % n;
}

int iw_poll_cq(struct iw_cq *cq, int n, struct iw_wc *wc)
{
	struct iw_rnic *r = cq->r;
	int got = 0;
	pthread_mutex_lock(&r->lock);
	while (got < n && cq->count) {
		wc[got++] = cq->ring[cq->head];
		cq->head = (cq->head + 1) % cq->depth;
		cq->count--;
	}
	if (got && cq->full)
		cq_refill(cq);
	pthread_mutex_unlock(&r->lock);
	return got;
}
