/*
 * What arrives: DATA and I-DATA chunks checked against the TSN map. The ordered message that
 * is next on its stream, when nothing of the stream waits to be read, is placed: its chunks
 * go straight from the packet into the core's buffer as they arrive in order (those that
 * overtake one wait in the stream's list until it comes). Everything else is copied into
 * pooled buffers, reassembled per stream (DATA by TSN, I-DATA by message id and fragment
 * sequence), released in order per stream (or at once, unordered) into the endpoint's
 * delivery queue, and copied out once more into the core's buffer when it reads. The window
 * the peer may fill is what the buffers of unread data leave of cfg.rcvbuf.
 */
#include "sctpe_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/sm_bytes.h"

#define MAX_GAPS 128 /* gap blocks per SACK */
#define PLACE_WHOLE_MIN 1024 /* one-chunk messages placed from this size on */

static uint32_t rcvbuf(const struct sctpe_assoc *a)
{
	size_t r = a->e->ep->cfg.rcvbuf;
	return r > (1u << 30) ? (1u << 30) : (uint32_t)r;
}

uint32_t sctpe_in_rwnd(const struct sctpe_assoc *a)
{
	uint32_t r = rcvbuf(a);
	return a->rx_bytes < r ? r - (uint32_t)a->rx_bytes : 0;
}

int sctpe_in_init(struct sctpe_assoc *a, uint32_t peer_itsn)
{
	if (sctpe_tsn_init(&a->tsn, peer_itsn) != 0)
		return -ENOMEM;
	a->ins = calloc(a->mis ? a->mis : 1, sizeof(*a->ins));
	if (!a->ins) {
		sctpe_tsn_fini(&a->tsn);
		return -ENOMEM;
	}
	a->adv_rwnd = rcvbuf(a);
	return 0;
}

void sctpe_rchunk_free(struct sctpe_ep *e, struct sctpe_rchunk *c)
{
	c->a->rx_bytes -= sctpe_class_size[c->cls];
	sctpe_buf_put(e->rpool, c, c->cls);
}

static void free_chain(struct sctpe_ep *e, struct sctpe_rchunk *c)
{
	while (c) {
		struct sctpe_rchunk *n = c->next;
		sctpe_rchunk_free(e, c);
		c = n;
	}
}

void sctpe_in_fini(struct sctpe_assoc *a)
{
	for (uint16_t s = 0; a->ins && s < a->mis; s++) {
		struct sctpe_instream *is = &a->ins[s];
		if (is->placing)
			sctpt_rx_place_cancel(a->e->ep, &is->pl);
		is->placing = 0;
		free_chain(a->e, is->head);
		free_chain(a->e, is->uhead);
		while (is->held) {
			struct sctpe_rchunk *m = is->held;
			is->held = m->hnext;
			free_chain(a->e, m);
		}
	}
	free(a->ins);
	a->ins = NULL;
	sctpe_tsn_fini(&a->tsn);
}

/* ---- reassembly ---- */

static int key_lt(const struct sctpe_assoc *a, const struct sctpe_rchunk *x,
		  const struct sctpe_rchunk *y)
{
	if (!a->idata)
		return sctpe_tsn_lt(x->tsn, y->tsn);
	if (x->mid != y->mid)
		return sctpe_tsn_lt(x->mid, y->mid);
	return x->fsn < y->fsn;
}

static int adjacent(const struct sctpe_assoc *a, const struct sctpe_rchunk *x,
		    const struct sctpe_rchunk *y)
{
	if (!a->idata)
		return x->tsn + 1 == y->tsn;
	return x->mid == y->mid && x->fsn + 1 == y->fsn;
}

static int mid_lt(const struct sctpe_assoc *a, uint32_t x, uint32_t y)
{
	if (!a->idata)
		return (int16_t)(uint16_t)(x - y) < 0;
	return sctpe_tsn_lt(x, y);
}

static uint32_t mid_next(const struct sctpe_assoc *a, uint32_t m)
{
	return a->idata ? m + 1 : (uint16_t)(m + 1);
}

static void deliver(struct sctpe_assoc *a, struct sctpe_rchunk *m)
{
	TAILQ_INSERT_TAIL(&a->e->fifo, m, dlink);
	a->rx_queued++;
	a->ins[m->sid].queued++;
}

/* The stream's next message went out: those held for it follow. */
static void release_held(struct sctpe_assoc *a, struct sctpe_instream *is)
{
	is->next_mid = mid_next(a, is->next_mid);
	while (is->held && is->held->mid == is->next_mid) {
		struct sctpe_rchunk *h = is->held;
		is->held = h->hnext;
		deliver(a, h);
		is->next_mid = mid_next(a, is->next_mid);
	}
}

/* A whole message headed by m: out now, or held for its turn on the stream. */
static int message_done(struct sctpe_assoc *a, struct sctpe_instream *is, struct sctpe_rchunk *m)
{
	if (m->flags & SCTPE_DATA_U) {
		deliver(a, m);
		return 0;
	}
	if (m->mid != is->next_mid) {
		struct sctpe_rchunk **pp = &is->held;
		while (*pp && mid_lt(a, (*pp)->mid, m->mid))
			pp = &(*pp)->hnext;
		/* a sequence number delivered already, or held already */
		if (mid_lt(a, m->mid, is->next_mid) || (*pp && (*pp)->mid == m->mid)) {
			free_chain(a->e, m);
			return -EPROTO;
		}
		m->hnext = *pp;
		*pp = m;
		return 0;
	}
	deliver(a, m);
	release_held(a, is);
	return 0;
}

/* Inserts c into the sorted list (head, tail); -EPROTO if its key is there already. */
static int list_insert(struct sctpe_assoc *a, struct sctpe_rchunk **head,
		       struct sctpe_rchunk **tail, struct sctpe_rchunk *c)
{
	struct sctpe_rchunk *after = *tail;
	while (after && key_lt(a, c, after))
		after = after->prev;
	if (after && !key_lt(a, after, c))
		return -EPROTO; /* same key: I-DATA's (MID, FSN) sent twice under new TSNs */
	c->prev = after;
	c->next = after ? after->next : *head;
	if (c->next)
		c->next->prev = c;
	else
		*tail = c;
	if (after)
		after->next = c;
	else
		*head = c;
	return 0;
}

/* If c completes a message in its list, takes the message out and hands it on. */
static int try_complete(struct sctpe_assoc *a, struct sctpe_instream *is,
			struct sctpe_rchunk **head, struct sctpe_rchunk **tail,
			struct sctpe_rchunk *c)
{
	struct sctpe_rchunk *b = c, *e = c;
	uint64_t len = c->len;
	while (!(b->flags & SCTPE_DATA_B) && b->prev && adjacent(a, b->prev, b) &&
	       !(b->prev->flags & SCTPE_DATA_E)) {
		b = b->prev;
		len += b->len;
	}
	if (!(b->flags & SCTPE_DATA_B))
		return 0;
	while (!(e->flags & SCTPE_DATA_E) && e->next && adjacent(a, e, e->next) &&
	       !(e->next->flags & SCTPE_DATA_B)) {
		e = e->next;
		len += e->len;
	}
	if (!(e->flags & SCTPE_DATA_E))
		return 0;
	/* one message: one stream (by construction), one kind, one sequence number */
	for (struct sctpe_rchunk *x = b; x != e; x = x->next)
		if ((x->next->flags & SCTPE_DATA_U) != (b->flags & SCTPE_DATA_U) ||
		    (!(b->flags & SCTPE_DATA_U) && x->next->mid != b->mid))
			return -EPROTO;
	if (b->prev)
		b->prev->next = e->next;
	else
		*head = e->next;
	if (e->next)
		e->next->prev = b->prev;
	else
		*tail = b->prev;
	b->prev = NULL;
	e->next = NULL;
	b->msg_len = len;
	return message_done(a, is, b);
}

static int reassemble(struct sctpe_assoc *a, struct sctpe_rchunk *c)
{
	struct sctpe_instream *is = &a->ins[c->sid];
	c->next = c->prev = c->hnext = NULL;
	if ((c->flags & (SCTPE_DATA_B | SCTPE_DATA_E)) == (SCTPE_DATA_B | SCTPE_DATA_E)) {
		c->msg_len = c->len; /* a whole message in one chunk: no list */
		return message_done(a, is, c);
	}
	int unord = a->idata && (c->flags & SCTPE_DATA_U);
	struct sctpe_rchunk **head = unord ? &is->uhead : &is->head;
	struct sctpe_rchunk **tail = unord ? &is->utail : &is->tail;
	int rc = list_insert(a, head, tail, c);
	if (rc) {
		sctpe_rchunk_free(a->e, c);
		return rc;
	}
	/* a fragment at the end that does not end its message completes nothing: no walk */
	if (c == *tail && !(c->flags & SCTPE_DATA_E))
		return 0;
	return try_complete(a, is, head, tail, c);
}

/* ---- placement ---- */

/* The chunk (tsn, mid, fsn) is the one the message being placed on is needs next. */
static int continues(const struct sctpe_assoc *a, const struct sctpe_instream *is, uint32_t tsn,
		     uint32_t mid, uint32_t fsn)
{
	return a->idata ? mid == is->next_mid && fsn == is->pl_next : tsn == is->pl_next;
}

/* One more chunk of the message being placed on is; its last ends it. */
static void place_chunk(struct sctpe_assoc *a, struct sctpe_instream *is, const uint8_t *data,
			uint32_t len, uint8_t flags)
{
	struct sctpe_ep *e = a->e;
	sctpt_rx_place_more(e->ep, &is->pl, data, len);
	e->st.placed++;
	is->pl_next++;
	if (!(flags & SCTPE_DATA_E))
		return;
	is->placing = 0;
	sctpt_rx_place_end(e->ep, &is->pl);
	release_held(a, is);
}

/* Chunks of the message being placed that overtook the one it waited for. */
static void place_drain(struct sctpe_assoc *a, struct sctpe_instream *is)
{
	while (is->placing) {
		struct sctpe_rchunk *c = is->head;
		/* I-DATA: the message's own fragments sort first; DATA: unordered ones may */
		while (!a->idata && c && sctpe_tsn_lt(c->tsn, is->pl_next))
			c = c->next;
		if (!c || !continues(a, is, c->tsn, c->mid, c->fsn) || (c->flags & SCTPE_DATA_B))
			return;
		if (c->prev)
			c->prev->next = c->next;
		else
			is->head = c->next;
		if (c->next)
			c->next->prev = c->prev;
		else
			is->tail = c->prev;
		place_chunk(a, is, c->data, c->len, c->flags);
		sctpe_rchunk_free(a->e, c);
	}
}

/*
 * Places d if it is the next chunk of the message being placed on its stream, or the first
 * of one that may be: 1 placed, 0 not (the usual path takes it), -EPROTO if it contradicts
 * the message being placed (a fragment again under a new TSN, a new message inside it).
 */
static int place(struct sctpe_assoc *a, const struct sctpe_data *d)
{
	struct sctpe_instream *is = &a->ins[d->sid];
	if (d->flags & SCTPE_DATA_U) {
		/* an unordered message in one chunk waits for no turn on its stream: placed at
		 * once, with a cursor of its own (the stream's may be placing an ordered one) */
		struct sctpt_rxcur pl;
		if ((d->flags & (SCTPE_DATA_B | SCTPE_DATA_E)) != (SCTPE_DATA_B | SCTPE_DATA_E) ||
		    d->len < PLACE_WHOLE_MIN || !a->e->place || !a->peer ||
		    !sctpt_rx_place_begin(a->e->ep, &pl, a->peer, d->sid, d->payload, d->len))
			return 0;
		a->e->st.placed++;
		sctpt_rx_place_end(a->e->ep, &pl);
		return 1;
	}
	if (is->placing) {
		if (!continues(a, is, d->tsn, d->mid, d->fsn)) {
			if (a->idata && d->mid == is->next_mid && d->fsn < is->pl_next)
				return -EPROTO;
			return 0; /* ahead of its turn: it waits in the list */
		}
		if ((d->flags & SCTPE_DATA_B) || d->mid != is->next_mid)
			return -EPROTO;
		place_chunk(a, is, d->payload, (uint32_t)d->len, d->flags);
		place_drain(a, is);
		return 1;
	}
	/* a message in one chunk (a core fragment that fills a packet) is placed too, when it is
	 * large enough for a copy to matter */
	int whole = (d->flags & (SCTPE_DATA_B | SCTPE_DATA_E)) == (SCTPE_DATA_B | SCTPE_DATA_E);
	if (!a->e->place || !(d->flags & SCTPE_DATA_B) || (whole && d->len < PLACE_WHOLE_MIN) ||
	    d->mid != is->next_mid || is->queued || !a->peer)
		return 0;
	if (a->idata && is->head && is->head->mid == d->mid && (is->head->flags & SCTPE_DATA_B))
		return 0; /* its first fragment again: the list refuses it */
	if (!sctpt_rx_place_begin(a->e->ep, &is->pl, a->peer, d->sid, d->payload, d->len))
		return 0;
	a->e->st.placed++;
	if (whole) {
		sctpt_rx_place_end(a->e->ep, &is->pl);
		release_held(a, is);
		return 1;
	}
	is->placing = 1;
	is->pl_next = a->idata ? 1 : d->tsn + 1;
	place_drain(a, is);
	return 1;
}

int sctpe_in_data(struct sctpe_assoc *a, const struct sctpe_data *d, uint16_t *cause)
{
	struct sctpe_ep *e = a->e;
	*cause = SCTPE_E_PROTOCOL_VIOLATION;
	if (d->len == 0) {
		*cause = SCTPE_E_NO_USER_DATA; /* 6.2: abort */
		return -EPROTO;
	}
	if (d->idata != a->idata)
		return -EPROTO; /* RFC 8260 2.2: the kind that was not negotiated */
	if (d->idata && !(d->flags & SCTPE_DATA_B) && d->fsn == 0)
		return -EPROTO; /* FSN 0 is the first fragment's */
	switch (sctpe_tsn_check(&a->tsn, d->tsn)) {
	case SCTPE_TSN_DUP:
		sctpe_tsn_dup(&a->tsn, d->tsn);
		e->st.dup_tsns++;
		return 0;
	case SCTPE_TSN_AHEAD:
		e->st.dropped_window++;
		return 0;
	}
	if (d->sid >= a->mis) { /* acknowledged, not delivered (6.5) */
		uint8_t err[8];
		sm_put_be16(err, SCTPE_E_INVALID_STREAM);
		sm_put_be16(err + 2, 8);
		sm_put_be16(err + 4, d->sid);
		sm_put_be16(err + 6, 0);
		sctpe_ctrl(a, SCTPE_ERROR, 0, err, sizeof(err));
		sctpe_tsn_add(&a->tsn, d->tsn);
		return 0;
	}
	int placed = place(a, d);
	if (placed) {
		if (placed > 0)
			sctpe_tsn_add(&a->tsn, d->tsn);
		return placed < 0 ? placed : 0;
	}
	int cls = sctpe_class_of(sizeof(struct sctpe_rchunk) + d->len);
	uint32_t size = cls >= 0 ? sctpe_class_size[cls] : 0;
	uint32_t lim = rcvbuf(a);
	/* past the window only the next expected TSN gets in (the sender's probe, or what
	 * unblocks a message), and never past twice the window */
	if (cls < 0 || a->rx_bytes + size > 2ull * lim ||
	    (a->rx_bytes + size > lim && d->tsn != a->tsn.cum + 1)) {
		e->st.dropped_window++;
		return 0;
	}
	uint8_t k;
	struct sctpe_rchunk *c = sctpe_buf_get(e->rpool, sizeof(*c) + d->len, &k);
	if (!c) {
		e->st.dropped_window++;
		return 0;
	}
	c->a = a;
	c->cls = k;
	c->tsn = d->tsn;
	c->mid = d->mid;
	c->fsn = d->fsn;
	c->ppid = d->ppid;
	c->sid = d->sid;
	c->flags = d->flags;
	c->len = (uint32_t)d->len;
	memcpy(c->data, d->payload, d->len);
	a->rx_bytes += sctpe_class_size[k];
	sctpe_tsn_add(&a->tsn, d->tsn);
	return reassemble(a, c); /* what it refuses it frees, or leaves to sctpe_in_fini */
}

void sctpe_in_packet_done(struct sctpe_assoc *a, int immediate)
{
	int freq = a->e->ep->cfg.sack_freq;
	a->sack_pkts++;
	if (immediate || a->sack_pkts >= freq || sctpe_tsn_has_gaps(&a->tsn) || a->tsn.ndups) {
		a->sack_due = 1;
		/* out of order or duplicated: at once; in order: it may wait for the reply */
		/* once: while data keeps coming every turn, a SACK kept for each next batch would
		 * wait until the sender runs out of window */
		a->sack_fresh = !immediate && !sctpe_tsn_has_gaps(&a->tsn) && !a->tsn.ndups &&
				a->e->in_input && !a->sack_deferred;
		sctpe_want_flush(a);
	} else if (!sctpe_timer_armed(&a->tsack)) {
		sctpe_timer_arm(&a->e->wheel, &a->tsack,
				a->e->wheel.now + (uint64_t)a->e->ep->cfg.sack_delay_ms);
	}
}

int sctpe_in_sack(struct sctpe_assoc *a, struct sctpe_pb *b)
{
	struct sctpe_gap gaps[MAX_GAPS];
	size_t room = b->cap - b->len;
	if (room < SCTPE_SACK_FIXED_LEN)
		return -ENOSPC;
	int ndups = a->tsn.ndups;
	size_t left = room - SCTPE_SACK_FIXED_LEN;
	if ((size_t)ndups * 4 > left)
		ndups = (int)(left / 4);
	int max = (int)((left - (size_t)ndups * 4) / 4);
	int ngaps = sctpe_tsn_gaps(&a->tsn, gaps, max < MAX_GAPS ? max : MAX_GAPS);
	size_t len = SCTPE_SACK_FIXED_LEN + 4u * (size_t)(ngaps + ndups);
	uint8_t *c = sctpe_pb_chunk(b, SCTPE_SACK, 0, len);
	if (!c)
		return -ENOSPC;
	uint32_t rwnd = sctpe_in_rwnd(a);
	sm_put_be32(c + SCTPE_SACK_OFF_CUM, a->tsn.cum);
	sm_put_be32(c + SCTPE_SACK_OFF_ARWND, rwnd);
	sm_put_be16(c + SCTPE_SACK_OFF_NGAPS, (uint16_t)ngaps);
	sm_put_be16(c + SCTPE_SACK_OFF_NDUPS, (uint16_t)ndups);
	uint8_t *p = c + SCTPE_SACK_FIXED_LEN;
	for (int i = 0; i < ngaps; i++, p += 4) {
		sm_put_be16(p, gaps[i].start);
		sm_put_be16(p + 2, gaps[i].end);
	}
	for (int i = 0; i < ndups; i++, p += 4)
		sm_put_be32(p, a->tsn.dups[i]);
	a->tsn.ndups = 0;
	a->adv_rwnd = rwnd;
	a->sack_due = 0;
	a->sack_deferred = 0;
	a->sack_pkts = 0;
	sctpe_timer_stop(&a->e->wheel, &a->tsack);
	a->e->st.sacks_out++;
	return 0;
}

/* ---- the core reads ---- */

/* The message m was read whole: its buffers go, and the peer may hear of the window. */
static void message_read(struct sctpe_ep *e, struct sctpe_rchunk *m)
{
	struct sctpe_assoc *a = m->a;
	TAILQ_REMOVE(&e->fifo, m, dlink);
	a->rx_queued--;
	a->ins[m->sid].queued--;
	free_chain(e, m);
	uint32_t rwnd = sctpe_in_rwnd(a), q = rcvbuf(a) / 4;
	if (a->state != SCTPE_CLOSED && rwnd > a->adv_rwnd && rwnd - a->adv_rwnd >= q) {
		a->sack_due = 1; /* window update */
		sctpe_want_flush(a);
	}
	if (a->dead && a->rx_queued == 0)
		sctpe_want_event(a, 0, 0); /* it may go now */
}

int sctpe_recv(struct sctpe_ep *e, void *buf, size_t len, struct sctpt_peer **peer,
	       uint16_t *stream, int *eor)
{
	struct sctpe_rchunk *m = TAILQ_FIRST(&e->fifo);
	uint8_t *out = buf;
	size_t got = 0;
	if (!m)
		return -EAGAIN;
	if (!e->rd) {
		e->rd = m;
		e->rd_off = 0;
	}
	while (got < len && e->rd) {
		size_t n = e->rd->len - e->rd_off;
		if (n > len - got)
			n = len - got;
		memcpy(out + got, e->rd->data + e->rd_off, n);
		got += n;
		e->rd_off += (uint32_t)n;
		if (e->rd_off == e->rd->len) {
			e->rd = e->rd->next;
			e->rd_off = 0;
		}
	}
	*peer = m->a->peer;
	*stream = m->sid;
	*eor = e->rd == NULL;
	if (*eor)
		message_read(e, m);
	return (int)got;
}

void sctpe_fifo_drop(struct sctpe_ep *e, struct sctpe_assoc *a)
{
	struct sctpe_rchunk *m = TAILQ_FIRST(&e->fifo), *n;
	for (; m; m = n) {
		n = TAILQ_NEXT(m, dlink);
		if (m->a != a)
			continue;
		if (m == TAILQ_FIRST(&e->fifo))
			e->rd = NULL;
		TAILQ_REMOVE(&e->fifo, m, dlink);
		a->rx_queued--;
		a->ins[m->sid].queued--;
		free_chain(e, m);
	}
}
