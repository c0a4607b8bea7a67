/*
 * Completions: every received message, finished send and event becomes one entry, queued for
 * the handler that owns its context and handed out exactly once, never with ep->lock held.
 * Entries of handlers with a complete function wait in ep->done, one FIFO, and are dispatched
 * by one thread at a time (so a handler sees its entries in order); the others wait in their
 * handler's own queue for sctpt_cq_read.
 */
#include "sctpt_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sctpt_handler_find(struct sctpt_ep *ep, uint32_t context)
{
	/* on every message: only as far as handlers were ever added */
	for (int i = 1; i < ep->handlers_end; i++) {
		const struct sctpt_hslot *s = &ep->handlers[i];
		if (s->used && context >= s->h.lo && context <= s->h.hi)
			return i;
	}
	return 0;
}

static struct sctpt_cqent *ent_get(struct sctpt_ep *ep)
{
	struct sctpt_cqent *e = sctpt_pool_get(&ep->cq_pool);
	if (!e)
		return NULL;
	e->rxb = NULL;
	e->owned = NULL;
	e->loan = NULL;
	e->unseen = 0;
	e->c = (struct sctpt_cqe){.entry_ = e}; /* stores in line, no memset call */
	return e;
}

static void ent_put(struct sctpt_ep *ep, struct sctpt_cqent *e)
{
	if (e->rxb)
		sctpt_rxbuf_put(ep, e->rxb);
	if (e->loan)
		sctpt_shm_loan_end(ep, e->loan);
	if (e->owned)
		sctpt_msgbuf_put(ep, e->owned);
	sctpt_pool_put(&ep->cq_pool, e);
}

/* Out of its handler's queue (handed out, or dropped). */
static inline void ent_unqueue(struct sctpt_ep *ep, struct sctpt_cqent *e)
{
	ep->handlers[e->handler].unseen -= e->unseen;
	e->unseen = 0;
}

/* Into the handler's queue; an entry nobody will take is released now. */
static void ent_queue(struct sctpt_ep *ep, struct sctpt_cqent *e, int hid)
{
	struct sctpt_hslot *s = &ep->handlers[hid];
	e->handler = hid;
	if (!s->used) {
		ent_put(ep, e);
		return;
	}
	s->unseen += e->unseen;
	if (s->h.complete) {
		STAILQ_INSERT_TAIL(&ep->done, e, link);
		ep->ndone++;
	} else {
		STAILQ_INSERT_TAIL(&s->polled, e, link);
		ep->npolled++;
	}
}

void sctpt_cq_recv(struct sctpt_ep *ep, int hid, struct sctpt_peer *p, const struct sctpt_hdr *h,
		   uint16_t stream, const uint8_t *data, size_t len, void *cookie,
		   struct sctpt_rxbuf *rxb, void *owned, struct sctpt_loan *loan, int status,
		   int placed)
{
	struct sctpt_cqent *e = ent_get(ep);
	if (!e) {
		/* nowhere to say so but the peer: its messages can no longer be delivered */
		if (rxb)
			sctpt_rxbuf_put(ep, rxb);
		if (loan)
			sctpt_shm_loan_end(ep, loan);
		sctpt_msgbuf_put(ep, owned);
		if (p)
			sctpt_peer_fail(ep, p, -ENOMEM);
		return;
	}
	e->c.kind = SCTPT_CQE_RECV;
	e->c.status = status;
	e->c.peer = p ? p->id : -1;
	e->c.context = h->context;
	e->c.tag = h->tag;
	e->c.stream = stream;
	e->c.len = len;
	e->c.cookie = cookie;
	if (status == 0 && !rxb && !owned && !loan && !cookie) {
		/* the data is on loan (the staging buffer the caller keeps): copied; callers
		 * hand over the buffer of anything larger than the inline room */
		if (len > SCTPT_CQE_INLINE && !(owned = e->owned = sctpt_msgbuf_get(ep, len))) {
			ent_put(ep, e);
			if (p)
				sctpt_peer_fail(ep, p, -ENOMEM);
			return;
		}
		uint8_t *d = len > SCTPT_CQE_INLINE ? e->owned : e->inline_data;
		if (len)
			memcpy(d, data, len);
		data = d;
	} else {
		e->rxb = rxb;
		e->owned = owned;
		e->loan = loan;
	}
	e->c.data = status == 0 ? data : NULL;
	e->unseen = !placed;
	ent_queue(ep, e, hid);
}

void sctpt_cq_recv_small(struct sctpt_ep *ep, int hid, struct sctpt_peer *p,
			 const struct sctpt_hdr *h, uint16_t stream, const uint8_t *data, size_t len)
{
	struct sctpt_cqent *e = sctpt_pool_get(&ep->cq_pool);
	if (!e) {
		sctpt_peer_fail(ep, p, -ENOMEM); /* as sctpt_cq_recv */
		return;
	}
	e->rxb = NULL;
	e->owned = NULL;
	e->loan = NULL;
	e->unseen = 1;
	e->c = (struct sctpt_cqe){.kind = SCTPT_CQE_RECV, .peer = p->id, .context = h->context,
				  .tag = h->tag, .stream = stream, .data = e->inline_data,
				  .len = len, .entry_ = e};
	if (len)
		memcpy(e->inline_data, data, len);
	ent_queue(ep, e, hid);
}

struct sctpt_cqent *sctpt_cq_reserve(struct sctpt_ep *ep)
{
	return ent_get(ep);
}

void sctpt_cq_drop(struct sctpt_ep *ep, struct sctpt_cqent *e)
{
	ent_put(ep, e);
}

void sctpt_cq_send(struct sctpt_ep *ep, struct sctpt_cqent *e, uint32_t context, void *cookie,
		   int status)
{
	e->c.kind = SCTPT_CQE_SEND;
	e->c.status = status;
	e->c.peer = -1;
	e->c.context = context;
	e->c.cookie = cookie;
	ent_queue(ep, e, sctpt_handler_of(ep, context));
}

void sctpt_cq_event(struct sctpt_ep *ep, enum sctpt_event_type t, struct sctpt_peer *p, int err,
		    int path, const char *what)
{
	for (int i = 0; i < SCTPT_MAX_HANDLERS; i++) {
		if (!ep->handlers[i].used || !ep->handlers[i].h.events)
			continue;
		struct sctpt_cqent *e = ent_get(ep);
		if (!e)
			return;
		e->c.kind = SCTPT_CQE_EVENT;
		e->c.peer = p ? p->id : -1;
		snprintf(e->what, sizeof(e->what), "%s", what ? what : "");
		e->c.ev = (struct sctpt_event){.type = t, .peer = e->c.peer, .error = err,
					       .path = path, .what = e->what};
		ent_queue(ep, e, i);
	}
}

/*
 * Dispatching. One thread at a time hands entries out: it takes ep->dispatching under the lock
 * (sctpt_cq_take, in the same lock hold as the progress that queued them) and clears it when
 * done, so a delivered message costs one lock round trip, not four. The entries of its last
 * batch are released by whoever dispatches next, in that next lock hold: for a message at a
 * time (ping-pong) that is no second lock round trip either.
 */

/* Up to a batch of entries to b (lock held; the caller dispatches). */
static void take_batch(struct sctpt_ep *ep, struct sctpt_cqbatch *b)
{
	b->n = 0;
	while (b->n < SCTPT_DISPATCH_BATCH && !STAILQ_EMPTY(&ep->done)) {
		struct sctpt_cqent *e = STAILQ_FIRST(&ep->done);
		const struct sctpt_hslot *s = &ep->handlers[e->handler];
		STAILQ_REMOVE_HEAD(&ep->done, link);
		ep->ndone--;
		ent_unqueue(ep, e);
		/* the handler as it is now: one removed meanwhile gets nothing more */
		b->complete[b->n] = s->used ? s->h.complete : NULL;
		b->arg[b->n] = s->h.arg;
		b->e[b->n++] = e;
	}
}

/* The entries the last dispatcher handed out (lock held, dispatching ours). */
static void spent_put(struct sctpt_ep *ep)
{
	for (int i = 0; i < ep->nspent; i++)
		ent_put(ep, ep->spent[i]);
	ep->nspent = 0;
}

int sctpt_cq_take(struct sctpt_ep *ep, struct sctpt_cqbatch *b)
{
	b->n = 0;
	/* dispatching first: spent is the dispatcher's until it clears that (release) */
	if (atomic_load_explicit(&ep->dispatching, memory_order_acquire) ||
	    (!ep->ndone && !ep->nspent))
		return 0; /* another thread (or this one, further out) is at it, or nothing */
	atomic_store_explicit(&ep->dispatching, 1, memory_order_relaxed);
	spent_put(ep);
	take_batch(ep, b);
	if (!b->n)
		atomic_store_explicit(&ep->dispatching, 0, memory_order_relaxed);
	return b->n;
}

int sctpt_cq_run(struct sctpt_ep *ep, struct sctpt_cqbatch *b)
{
	int count = 0;
	while (b->n) {
		for (int i = 0; i < b->n; i++)
			if (b->complete[i])
				b->complete[i](b->arg[i], &b->e[i]->c);
		count += b->n;
		if (!__atomic_load_n(&ep->ndone, __ATOMIC_RELAXED)) {
			/* nothing more (what comes meanwhile waits for the next progress, as it
			 * would for a dispatcher busy in a handler): keep the batch for the next
			 * one to release, and no lock now */
			for (int i = 0; i < b->n; i++) /* mostly one: no memcpy call */
				ep->spent[i] = b->e[i];
			ep->nspent = b->n;
			atomic_store_explicit(&ep->dispatching, 0, memory_order_release);
			return count;
		}
		sctpt_lock(ep);
		for (int i = 0; i < b->n; i++)
			ent_put(ep, b->e[i]);
		take_batch(ep, b);
		if (!b->n)
			atomic_store_explicit(&ep->dispatching, 0, memory_order_relaxed);
		sctpt_unlock(ep);
	}
	return count;
}

int sctpt_cq_express(struct sctpt_ep *ep, int hid, sctpt_complete_fn *fn, void **arg)
{
	const struct sctpt_hslot *s = &ep->handlers[hid];
	/* as sctpt_cq_take would hand it out: nothing before it, nobody else dispatching */
	if (atomic_load_explicit(&ep->dispatching, memory_order_acquire) || ep->ndone ||
	    !s->used || !s->h.complete)
		return 0;
	atomic_store_explicit(&ep->dispatching, 1, memory_order_relaxed);
	if (ep->nspent)
		spent_put(ep);
	*fn = s->h.complete;
	*arg = s->h.arg;
	return 1;
}

void sctpt_cq_express_end(struct sctpt_ep *ep)
{
	atomic_store_explicit(&ep->dispatching, 0, memory_order_release);
	if (__atomic_load_n(&ep->ndone, __ATOMIC_RELAXED)) /* queued meanwhile: theirs now */
		sctpt_cq_dispatch(ep);
}

int sctpt_cq_dispatch(struct sctpt_ep *ep)
{
	struct sctpt_cqbatch b;
	if (!__atomic_load_n(&ep->ndone, __ATOMIC_RELAXED))
		return 0;
	sctpt_lock(ep);
	sctpt_cq_take(ep, &b);
	sctpt_unlock(ep);
	return sctpt_cq_run(ep, &b);
}

int sctpt_handler_add(struct sctpt_ep *ep, const struct sctpt_handler *h)
{
	int id = -ENOSPC;
	if (!h || h->lo > h->hi)
		return sctpt_err(-EINVAL, "sctpt_handler_add: no context range");
	sctpt_lock(ep);
	for (int i = 1; i < SCTPT_MAX_HANDLERS; i++) {
		const struct sctpt_hslot *s = &ep->handlers[i];
		if (s->used && h->lo <= s->h.hi && s->h.lo <= h->hi) {
			sctpt_unlock(ep);
			return sctpt_err(-EEXIST, "contexts %#x..%#x overlap handler %d's %#x..%#x",
					 h->lo, h->hi, i, s->h.lo, s->h.hi);
		}
		if (!s->used && id < 0)
			id = i;
	}
	if (id > 0) {
		struct sctpt_hslot *s = &ep->handlers[id];
		s->h = *h;
		STAILQ_INIT(&s->polled);
		s->used = 1;
		if (id >= ep->handlers_end)
			ep->handlers_end = id + 1;
		if (h->lo < ep->handlers_lo)
			ep->handlers_lo = h->lo;
	}
	sctpt_unlock(ep);
	return id > 0 ? id : sctpt_err(id, "sctpt_handler_add: %d handlers already",
				       SCTPT_MAX_HANDLERS - 1);
}

/* Drops the entries of handler id still queued (lock held). */
static void handler_drop(struct sctpt_ep *ep, int id)
{
	struct sctpt_hslot *s = &ep->handlers[id];
	struct sctpt_cqent *e;
	while ((e = STAILQ_FIRST(&s->polled))) {
		STAILQ_REMOVE_HEAD(&s->polled, link);
		ep->npolled--;
		ent_unqueue(ep, e);
		ent_put(ep, e);
	}
}

void sctpt_handler_remove(struct sctpt_ep *ep, int id)
{
	if (id <= 0 || id >= SCTPT_MAX_HANDLERS)
		return;
	sctpt_lock(ep);
	handler_drop(ep, id);
	struct sctpt_cqent *e;
	/* not counted against a later handler in its slot */
	STAILQ_FOREACH(e, &ep->done, link)
		if (e->handler == id)
			e->unseen = 0;
	ep->handlers[id].unseen = 0;
	ep->handlers[id].used = 0;
	ep->handlers_lo = UINT32_MAX;
	for (int i = 1; i < ep->handlers_end; i++)
		if (ep->handlers[i].used && ep->handlers[i].h.lo < ep->handlers_lo)
			ep->handlers_lo = ep->handlers[i].h.lo;
	sctpt_unlock(ep);
}

int sctpt_cq_read(struct sctpt_ep *ep, int id, struct sctpt_cqe *out, int max)
{
	int n = 0;
	if (id < 0 || id >= SCTPT_MAX_HANDLERS || max < 0)
		return sctpt_err(-EINVAL, "sctpt_cq_read: no handler %d", id);
	sctpt_lock(ep);
	struct sctpt_hslot *s = &ep->handlers[id];
	while (n < max && !STAILQ_EMPTY(&s->polled)) {
		struct sctpt_cqent *e = STAILQ_FIRST(&s->polled);
		STAILQ_REMOVE_HEAD(&s->polled, link);
		ep->npolled--;
		ent_unqueue(ep, e);
		out[n++] = e->c;
	}
	sctpt_unlock(ep);
	return n;
}

void sctpt_cq_release(struct sctpt_ep *ep, struct sctpt_cqe *c, int n)
{
	sctpt_lock(ep);
	for (int i = 0; i < n; i++) {
		if (c[i].entry_)
			ent_put(ep, c[i].entry_);
		c[i].entry_ = NULL;
	}
	sctpt_unlock(ep);
}

void sctpt_cq_fini(struct sctpt_ep *ep)
{
	struct sctpt_cqent *e;
	for (int i = 0; i < SCTPT_MAX_HANDLERS; i++)
		if (ep->handlers[i].used)
			handler_drop(ep, i);
	while ((e = STAILQ_FIRST(&ep->done))) {
		STAILQ_REMOVE_HEAD(&ep->done, link);
		ent_unqueue(ep, e);
		ent_put(ep, e);
	}
	ep->ndone = ep->npolled = 0;
	spent_put(ep);
}
