/*
 * Receiving: SCTP messages (one fragment each) read from the engine into the staging buffer
 * or straight into their message's buffer, reassembled -- per stream in order, or for striped
 * peers by (context, seq, offset) from any rail in any order --, released in order per
 * (peer, context) and queued as completions for the context's handler.
 */
#include "sctpt_int.h"
#include "common/sm_bytes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Frees r; a handler's buffer goes back to it with status (0: it was delivered already). */
static void rxmsg_drop(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_rxmsg *r,
		       int status)
{
	if (r->cookie && status)
		sctpt_cq_recv(ep, r->handler, p, &r->hdr, r->stream, NULL, 0, r->cookie, NULL, NULL,
			      NULL, status, r->placed);
	if (r->rxb)
		sctpt_rxbuf_put(ep, r->rxb);
	sctpt_msgbuf_put(ep, r->owned);
	free(r->spans);
	free(r);
}

static void protocol_error(struct sctpt_ep *ep, struct sctpt_peer *p, const char *why)
{
	char msg[256];
	snprintf(msg, sizeof(msg), "%s", why);
	sctpt_err(-EPROTO, "peer %s sent a malformed message: %s", p ? p->card : "?", msg);
	if (p)
		sctpt_peer_fail(ep, p, -EPROTO);
}

/* Hands the staging buffer (holding a whole message) on; a fresh one takes its place. 0, or
 * -ENOMEM (then the data must be copied). */
static int take_stage(struct sctpt_ep *ep, struct sctpt_rxbuf **out)
{
	struct sctpt_rxbuf *b = sctpt_rxbuf_get(ep);
	if (!b)
		return -ENOMEM;
	*out = ep->stage;
	ep->stage = b;
	return 0;
}

/* Message of h is ready for its handler: data is in r (reassembled or held), else in the
 * staging buffer. */
static void deliver(struct sctpt_ep *ep, struct sctpt_peer *p, const struct sctpt_hdr *hp,
		    uint16_t stream, const uint8_t *data, struct sctpt_rxmsg *r)
{
	size_t len = (size_t)hp->msg_len;
	int hid = r ? r->handler : sctpt_handler_of(ep, hp->context);
	p->msgs_recv++;
	p->bytes_recv += len;
	if (!ep->handlers[hid].used) {
		p->unclaimed++;
		if (r)
			rxmsg_drop(ep, p, r, -ENOENT);
		return;
	}
	if (!r && len <= SCTPT_CQE_INLINE) { /* the common small message: copied */
		sctpt_cq_recv_small(ep, hid, p, hp, stream, data, len);
		return;
	}
	const struct sctpt_hdr hdr = *hp, *h = &hdr; /* hp may be r's, which goes below */
	struct sctpt_rxbuf *rxb = NULL;
	struct sctpt_loan *loan = NULL;
	void *owned = NULL, *cookie = NULL;
	int placed = 0;
	if (r) {
		placed = r->placed;
		rxb = r->rxb;
		owned = r->owned;
		cookie = r->cookie;
		r->rxb = NULL;
		r->owned = NULL;
		r->cookie = NULL;
		data = r->buf;
		rxmsg_drop(ep, p, r, 0);
	} else if (len > SCTPT_CQE_INLINE && ep->lent) {
		loan = ep->lent; /* it stays in the ring until its entry is released */
		ep->lent = NULL;
	} else if (len > SCTPT_CQE_INLINE && take_stage(ep, &rxb) != 0) {
		rxb = NULL; /* copied by the completion queue */
	}
	sctpt_cq_recv(ep, hid, p, h, stream, data, len, cookie, rxb, owned, loan, 0, placed);
}

/* A held message: keeps the staging buffer it is in, or a copy of a small one (as
 * deliver() does, a staging buffer goes with messages only where that saves a copy). */
static struct sctpt_rxmsg *hold_stage(struct sctpt_ep *ep, const struct sctpt_hdr *h,
				      uint16_t stream, const uint8_t *data)
{
	size_t len = (size_t)h->msg_len;
	struct sctpt_rxmsg *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	if (len > SCTPT_CQE_INLINE && !ep->lent && take_stage(ep, &r->rxb) == 0) {
		r->buf = (uint8_t *)data; /* in r->rxb now */
	} else if ((r->owned = sctpt_msgbuf_get(ep, len ? len : 1))) {
		r->buf = r->owned;
		memcpy(r->buf, data, len);
	} else {
		free(r);
		return NULL;
	}
	r->hdr = *h;
	r->stream = stream;
	r->handler = sctpt_handler_of(ep, h->context);
	return r;
}

/*
 * A whole message is here: release it now if it is next in its (peer, context), else hold
 * it. r is its reassembly, or NULL for a message in the staging buffer.
 */
static void complete(struct sctpt_ep *ep, struct sctpt_peer *p, const struct sctpt_hdr *h,
		     uint16_t stream, const uint8_t *data, struct sctpt_rxmsg *r)
{
	const struct sctpt_hdr hdr = *h; /* h may live in r, which goes below */
	if (p->nrails && sctpt_rail_dup(p, &hdr)) { /* a copy re-sent after a rail failure */
		p->dup_frags++;
		if (r)
			rxmsg_drop(ep, p, r, -EALREADY);
		return;
	}
	if (hdr.flags & SCTPT_F_UNORDERED) {
		if ((hdr.flags & SCTPT_F_MSGID) && sctpt_seen_add(&p->seen, hdr.seq) != 0) {
			if (r)
				rxmsg_drop(ep, p, r, -ENOMEM);
			sctpt_peer_fail(ep, p, -ENOMEM);
			return;
		}
		deliver(ep, p, &hdr, stream, data, r);
		return;
	}
	struct sctpt_order_ctx *oc = sctpt_order_get(&p->order, hdr.context);
	if (!oc) {
		if (r)
			rxmsg_drop(ep, p, r, -ENOMEM);
		sctpt_peer_fail(ep, p, -ENOMEM);
		return;
	}
	switch (sctpt_order_classify(oc, hdr.seq)) {
	case SCTPT_ORDER_BAD:
		if (r)
			rxmsg_drop(ep, p, r, -EPROTO);
		protocol_error(ep, p, "duplicate or stale sequence number");
		return;
	case SCTPT_ORDER_HOLD:
		if (!r && !(r = hold_stage(ep, &hdr, stream, data))) {
			sctpt_peer_fail(ep, p, -ENOMEM);
			return;
		}
		r->order.seq = hdr.seq;
		p->held_for_order++;
		sctpt_order_hold(oc, &r->order);
		return;
	case SCTPT_ORDER_NOW:
		break;
	}
	deliver(ep, p, &hdr, stream, data, r);
	struct sctpt_order_item *it;
	while ((it = sctpt_order_advance(oc))) {
		struct sctpt_rxmsg *n = (struct sctpt_rxmsg *)it;
		deliver(ep, p, &n->hdr, n->stream, n->buf, n);
	}
}

/* First fragment of a multi-fragment message: get its buffer. */
static struct sctpt_rxmsg *start_reassembly(struct sctpt_ep *ep, struct sctpt_peer *p,
					    const struct sctpt_hdr *h, uint16_t stream)
{
	struct sctpt_rxmsg *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->hdr = *h;
	r->stream = stream;
	r->handler = sctpt_handler_of(ep, h->context);
	const struct sctpt_handler *hd = &ep->handlers[r->handler].h;
	if (ep->handlers[r->handler].used && hd->recv_buf)
		r->buf = hd->recv_buf(hd->arg, p->id, h->context, h->tag, (size_t)h->msg_len,
				      &r->cookie);
	if (!r->buf) {
		r->cookie = NULL;
		r->buf = r->owned = sctpt_msgbuf_get(ep, (size_t)h->msg_len);
	}
	if (!r->buf) {
		free(r);
		return NULL;
	}
	return r;
}

/* The span of r that holds byte off, or -1. */
static int span_find(const struct sctpt_rxmsg *r, uint64_t off, uint32_t *at)
{
	uint32_t lo = 0, hi = r->nspans;
	while (lo < hi) { /* the first span starting above off */
		uint32_t mid = (lo + hi) / 2;
		if (r->spans[mid].lo <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	*at = lo;
	return lo > 0 && r->spans[lo - 1].hi > off ? (int)lo - 1 : -1;
}

/* Records that [off, off + n) of r arrived: 0, or -EALREADY if part of it had. */
static int span_add(struct sctpt_rxmsg *r, uint64_t off, uint64_t n)
{
	uint64_t end = off + n;
	uint32_t i;
	if (span_find(r, off, &i) >= 0 || (i < r->nspans && r->spans[i].lo < end))
		return -EALREADY;
	int left = i > 0 && r->spans[i - 1].hi == off;
	int right = i < r->nspans && r->spans[i].lo == end;
	if (left && right) {
		r->spans[i - 1].hi = r->spans[i].hi;
		memmove(&r->spans[i], &r->spans[i + 1], (r->nspans - i - 1) * sizeof(*r->spans));
		r->nspans--;
	} else if (left) {
		r->spans[i - 1].hi = end;
	} else if (right) {
		r->spans[i].lo = off;
	} else {
		if (r->nspans == r->cap_spans) {
			uint32_t cap = r->cap_spans ? 2 * r->cap_spans : 8;
			struct sctpt_span *ns = realloc(r->spans, cap * sizeof(*ns));
			if (!ns)
				return -ENOMEM;
			r->spans = ns;
			r->cap_spans = cap;
		}
		memmove(&r->spans[i + 1], &r->spans[i], (r->nspans - i) * sizeof(*r->spans));
		r->spans[i] = (struct sctpt_span){off, end};
		r->nspans++;
	}
	return 0;
}

/* Where the bytes of r from offset off on go, room of them: c->dst, then c->dst2 when r is in
 * two pieces (its handler's) and the range crosses into the second. */
static void cur_target(struct sctpt_rxcur *c, const struct sctpt_rxmsg *r, uint64_t off,
		       size_t room)
{
	c->dst2 = NULL;
	c->cap2 = 0;
	if (!r->buf2 || off >= r->len0) {
		c->dst = r->buf2 ? r->buf2 + (off - r->len0) : r->buf + off;
		c->cap = room;
		return;
	}
	c->dst = r->buf + off;
	c->cap = r->len0 - off < room ? (size_t)(r->len0 - off) : room;
	c->dst2 = r->buf2;
	c->cap2 = room - c->cap;
}

/* n bytes to where c points (checked against its room by the caller). */
static void cur_copy(struct sctpt_rxcur *c, const uint8_t *src, size_t n)
{
	while (n) {
		size_t k = n < c->cap ? n : c->cap;
		memcpy(c->dst, src, k);
		c->dst += k;
		c->cap -= k;
		src += k;
		n -= k;
		if (!c->cap && c->cap2) {
			c->dst = c->dst2;
			c->cap = c->cap2;
			c->cap2 = 0;
		}
	}
}

/* A buffer of the handler's it cannot have: back to it, unfilled. */
static void cookie_back(struct sctpt_ep *ep, struct sctpt_rxcur *c, int hid, void *cookie,
			int status)
{
	sctpt_cq_recv(ep, hid, c->peer, &c->hdr, c->stream, NULL, 0, cookie, NULL, NULL, NULL,
		      status, 1);
}

/*
 * The message beginning in c, whose first n bytes are at head, placed by its handler (the
 * place hook): its reassembly in the handler's pieces, or NULL if the core keeps it. Only when
 * nothing earlier of its (peer, context) is still the core's, so the handler may match it now.
 */
static struct sctpt_rxmsg *direct_msg(struct sctpt_ep *ep, struct sctpt_rxcur *c,
				      const uint8_t *head, size_t n)
{
	const struct sctpt_hdr *h = &c->hdr;
	size_t len = (size_t)h->msg_len;
	int hid = sctpt_handler_of(ep, h->context);
	const struct sctpt_hslot *s = &ep->handlers[hid];
	if (!s->used || !s->h.place || len <= SCTPT_CQE_INLINE || n > len ||
	    n < (len < SCTPT_PLACE_HEAD ? len : SCTPT_PLACE_HEAD))
		return NULL;
	/* a send's completion, an event or a message it placed itself does not count */
	if (!s->h.place_anytime && (s->unseen || (s->h.complete &&
	    atomic_load_explicit(&ep->dispatching, memory_order_acquire))))
		return NULL;
	if (!(h->flags & SCTPT_F_UNORDERED)) {
		const struct sctpt_order_ctx *oc = sctpt_order_get(&c->peer->order, h->context);
		if (!oc || sctpt_order_classify(oc, h->seq) != SCTPT_ORDER_NOW)
			return NULL;
	}
	struct iovec iov[2] = {{NULL, 0}, {NULL, 0}};
	void *cookie = NULL;
	int k = s->h.place(s->h.arg, c->peer->id, h->context, h->tag, len, head, n, iov, &cookie);
	if (k <= 0)
		return NULL;
	size_t room0 = iov[0].iov_len, room1 = k > 1 ? iov[1].iov_len : 0;
	if (k > 2 || room0 > len || room0 + room1 != len || (room0 && !iov[0].iov_base) ||
	    (room1 && !iov[1].iov_base)) {
		sctpt_err(-EINVAL, "place hook for context %u: %d pieces of %zu + %zu bytes for a "
			  "message of %zu", h->context, k, room0, room1, len);
		cookie_back(ep, c, hid, cookie, -EINVAL);
		return NULL;
	}
	struct sctpt_rxmsg *r = calloc(1, sizeof(*r));
	if (!r) {
		cookie_back(ep, c, hid, cookie, -ENOMEM);
		return NULL;
	}
	r->hdr = *h;
	r->stream = c->stream;
	r->handler = hid;
	r->cookie = cookie;
	r->placed = 1;
	if (room0 && room1) {
		r->buf = iov[0].iov_base;
		r->len0 = room0;
		r->buf2 = iov[1].iov_base;
	} else {
		r->buf = room0 ? iov[0].iov_base : iov[1].iov_base;
	}
	return r;
}

/* A whole message its handler places (direct_msg): 1, with c reading into its pieces. */
static int begin_direct(struct sctpt_ep *ep, struct sctpt_rxcur *c, const uint8_t *head, size_t n)
{
	struct sctpt_rxmsg *r = direct_msg(ep, c, head, n);
	if (!r)
		return 0;
	cur_target(c, r, 0, (size_t)c->hdr.msg_len);
	cur_copy(c, head, n);
	c->frag = r;
	c->whole = 1;
	c->got = n;
	return 1;
}

/* A message read whole (one fragment): into the handler's buffer (place), into the staging
 * buffer, or, placed, into a staging buffer of its own that goes with it (-ENOMEM: none to be
 * had). */
static int begin_whole(struct sctpt_ep *ep, struct sctpt_rxcur *c, const uint8_t *env, size_t n,
		       int place)
{
	size_t payload = n - SCTPT_HDR_LEN;
	if (begin_direct(ep, c, env + SCTPT_HDR_LEN, payload))
		return 0;
	c->got = payload;
	c->cap = ep->buf_len - n;
	if (!place) {
		c->in_stage = 1;
		c->dst = ep->stage->data + n;
		return 0;
	}
	struct sctpt_rxmsg *r = calloc(1, sizeof(*r));
	if (!r || !(r->rxb = sctpt_rxbuf_get(ep))) {
		free(r);
		return -ENOMEM;
	}
	r->hdr = c->hdr;
	r->stream = c->stream;
	r->handler = sctpt_handler_of(ep, c->hdr.context);
	r->buf = r->rxb->data + SCTPT_HDR_LEN;
	memcpy(r->buf, env + SCTPT_HDR_LEN, payload);
	c->frag = r;
	c->whole = 1;
	c->dst = r->buf + payload;
	return 0;
}

/* A fragment from a striped peer: any rail, any order, maybe twice. Reassembly is keyed by
 * (ordered or not, context, seq); which units arrived is kept by offset. */
static int begin_rail(struct sctpt_ep *ep, struct sctpt_rxcur *c, struct sctpt_peer *p,
		      const uint8_t *env, size_t n)
{
	const struct sctpt_hdr *h = &c->hdr;
	size_t payload = n - SCTPT_HDR_LEN;
	if (sctpt_rail_dup(p, h)) {
		p->dup_frags++;
		c->discard = 1;
		return 0;
	}
	if ((h->flags & (SCTPT_F_FIRST | SCTPT_F_LAST)) == (SCTPT_F_FIRST | SCTPT_F_LAST) &&
	    h->msg_len <= ep->cfg.frag_size)
		return begin_whole(ep, c, env, n, 0);
	if (h->msg_len > ep->cfg.max_msg_size) {
		protocol_error(ep, p, "message larger than max_msg_size");
		c->discard = 1;
		return 0;
	}
	struct sctpt_rxmsg *r;
	uint8_t kind = h->flags & SCTPT_F_UNORDERED;
	LIST_FOREACH(r, &p->rxlist, rlink)
		if ((r->hdr.flags & SCTPT_F_UNORDERED) == kind && r->hdr.context == h->context &&
		    r->hdr.seq == h->seq)
			break;
	if (!r) {
		r = start_reassembly(ep, p, h, c->stream);
		if (!r) {
			sctpt_peer_fail(ep, p, -ENOMEM);
			c->discard = 1;
			return 0;
		}
		LIST_INSERT_HEAD(&p->rxlist, r, rlink);
	} else if (r->hdr.tag != h->tag || r->hdr.msg_len != h->msg_len) {
		protocol_error(ep, p, "fragment does not belong to the message of its sequence");
		c->discard = 1;
		return 0;
	}
	/* the fragment's length is known only at its end: check the envelope's claim then;
	 * here what it cannot overrun */
	uint64_t room = r->hdr.msg_len - h->offset;
	if (h->offset > r->hdr.msg_len || payload > room) {
		protocol_error(ep, p, "fragment overruns its message");
		c->discard = 1;
		return 0;
	}
	uint32_t at;
	if (span_find(r, h->offset, &at) >= 0) { /* a copy re-sent after a rail failure */
		p->dup_frags++;
		c->discard = 1;
		return 0;
	}
	memcpy(r->buf + h->offset, env + SCTPT_HDR_LEN, payload);
	c->frag = r;
	c->got = payload;
	c->dst = r->buf + h->offset + payload;
	c->cap = (size_t)(room - payload);
	return 0;
}

/* A striped peer's fragment was read whole. Overlapping fragments are refused, so a message
 * whose every byte arrived is one whose byte count is complete. */
static void end_rail(struct sctpt_ep *ep, struct sctpt_rxcur *c, struct sctpt_peer *p)
{
	struct sctpt_rxmsg *r = c->frag;
	int rc = span_add(r, c->hdr.offset, c->got);
	if (rc == -ENOMEM) {
		sctpt_peer_fail(ep, p, -ENOMEM);
		return;
	}
	if (rc) {
		protocol_error(ep, p, "fragment overlaps one that arrived before");
		return;
	}
	r->got += c->got;
	if (r->got < r->hdr.msg_len)
		return;
	LIST_REMOVE(r, rlink);
	complete(ep, p, &r->hdr, r->stream, r->buf, r);
}

/*
 * The envelope of a new SCTP message is at env [0, n), with the first n - 32 bytes of its
 * payload: where its bytes go, in c. Read from the engine, env is the staging buffer; placed
 * (place = 1), the engine's packet, and -EAGAIN, before anything changed, says to read the
 * message as usual instead.
 */
static int begin_cur(struct sctpt_ep *ep, struct sctpt_rxcur *c, struct sctpt_peer *p,
		     uint16_t stream, const uint8_t *env, size_t n, int place)
{
	memset(c, 0, sizeof(*c));
	c->active = 1;
	c->peer = p;
	c->stream = stream;
	if (!p || stream >= ep->cfg.streams || p->state == SCTPT_PEER_FAILED) {
		c->discard = 1;
		return place ? -EAGAIN : 0;
	}
	if (sctpt_hdr_decode(env, n, &c->hdr) != 0) {
		if (place)
			return -EAGAIN; /* reported when read */
		protocol_error(ep, p, sctpt_last_error());
		c->discard = 1;
		return 0;
	}
	if (c->hdr.op == SCTPT_OP_CLOSE) {
		if (place)
			return -EAGAIN;
		sctpt_peer_closed(ep, p);
		c->discard = 1;
		return 0;
	}
	/* a striped peer's fragment may come twice, on two rails at once (a copy re-sent after
	 * a stall): read whole, the first ends before the second begins; placed, they would
	 * overlap in time, and the first could complete the message under the second */
	if (p->nrails)
		return place ? -EAGAIN : begin_rail(ep, c, p, env, n);
	size_t payload = n - SCTPT_HDR_LEN;
	struct sctpt_rxmsg **slot = &p->rx[stream];
	/* whole in this one (a small message may come in pieces from the shared-memory path) */
	if ((c->hdr.flags & (SCTPT_F_FIRST | SCTPT_F_LAST)) == (SCTPT_F_FIRST | SCTPT_F_LAST) &&
	    c->hdr.msg_len <= ep->cfg.frag_size)
		return begin_whole(ep, c, env, n, place);
	if (c->hdr.flags & SCTPT_F_FIRST) {
		if (c->hdr.msg_len > ep->cfg.max_msg_size) {
			protocol_error(ep, p, "message larger than max_msg_size");
			c->discard = 1;
			return 0;
		}
		if (*slot) {
			protocol_error(ep, p, "new message on a stream with one unfinished");
			c->discard = 1;
			return 0;
		}
		*slot = direct_msg(ep, c, env + SCTPT_HDR_LEN, payload);
		if (!*slot)
			*slot = start_reassembly(ep, p, &c->hdr, stream);
		if (!*slot) {
			sctpt_peer_fail(ep, p, -ENOMEM);
			c->discard = 1;
			return 0;
		}
	} else if (!*slot || (*slot)->got != c->hdr.offset ||
		   (*slot)->hdr.context != c->hdr.context || (*slot)->hdr.tag != c->hdr.tag ||
		   (*slot)->hdr.seq != c->hdr.seq || (*slot)->hdr.msg_len != c->hdr.msg_len) {
		protocol_error(ep, p, "fragment does not continue the message on its stream");
		c->discard = 1;
		return 0;
	}
	struct sctpt_rxmsg *r = *slot;
	uint64_t room = r->hdr.msg_len - c->hdr.offset;
	if (payload > room) {
		protocol_error(ep, p, "fragment overruns its message");
		c->discard = 1;
		return 0;
	}
	cur_target(c, r, c->hdr.offset, (size_t)room);
	cur_copy(c, env + SCTPT_HDR_LEN, payload);
	c->frag = r;
	c->got = payload;
	return 0;
}

static void begin_message(struct sctpt_ep *ep, struct sctpt_peer *p, uint16_t stream, size_t n)
{
	begin_cur(ep, &ep->cur, p, stream, ep->stage->data, n, 0);
}

/* A whole message's own buffer (a staging buffer, or its handler's: back to it with status),
 * when the message goes nowhere. */
static void drop_whole(struct sctpt_ep *ep, struct sctpt_rxcur *c, int status)
{
	if (c->whole && c->frag)
		rxmsg_drop(ep, c->peer, c->frag, status);
	c->frag = NULL;
}

/* Why a message being read goes nowhere. */
static int drop_status(const struct sctpt_rxcur *c)
{
	const struct sctpt_peer *p = c->peer;
	return p && p->state == SCTPT_PEER_FAILED && p->error < 0 ? p->error : -EPROTO;
}

/* The SCTP message in c ended. */
static void end_cur(struct sctpt_ep *ep, struct sctpt_rxcur *c)
{
	struct sctpt_peer *p = c->peer;
	c->active = 0;
	if (p)
		p->sctp_msgs_in++;
	if (c->discard || (p && p->state == SCTPT_PEER_FAILED)) {
		drop_whole(ep, c, drop_status(c));
		return;
	}
	if (sctpt_hdr_check_payload(&c->hdr, c->got) != 0) {
		drop_whole(ep, c, -EPROTO);
		protocol_error(ep, p, sctpt_last_error());
		return;
	}
	if (c->in_stage) {
		complete(ep, p, &c->hdr, c->stream, ep->stage->data + SCTPT_HDR_LEN, NULL);
		return;
	}
	if (c->whole) {
		struct sctpt_rxmsg *w = c->frag;
		c->frag = NULL;
		complete(ep, p, &w->hdr, w->stream, w->buf, w);
		return;
	}
	if (p->nrails) {
		end_rail(ep, c, p);
		return;
	}
	struct sctpt_rxmsg *r = c->frag;
	r->got = (size_t)(c->hdr.offset + c->got);
	if (c->hdr.flags & SCTPT_F_LAST) {
		p->rx[c->stream] = NULL;
		complete(ep, p, &r->hdr, r->stream, r->buf, r);
	}
}

static void end_message(struct sctpt_ep *ep)
{
	end_cur(ep, &ep->cur);
}

/* n more bytes of the SCTP message in c were read to c->dst, or to scratch. */
static void account_cur(struct sctpt_ep *ep, struct sctpt_rxcur *c, int to_scratch, size_t n)
{
	if (c->discard)
		return;
	if (to_scratch) {
		if (n > 0) {
			protocol_error(ep, c->peer, "message longer than its envelope says");
			c->discard = 1;
		}
		return;
	}
	c->dst += n;
	c->cap -= n;
	c->got += n;
	if (!c->cap && c->cap2) { /* the handler's first piece is full: on to its second */
		c->dst = c->dst2;
		c->cap = c->cap2;
		c->cap2 = 0;
	}
}

static void rx_account(struct sctpt_ep *ep, int to_scratch, size_t n)
{
	account_cur(ep, &ep->cur, to_scratch, n);
}

void sctpt_rx_abandon(struct sctpt_ep *ep, struct sctpt_peer *p, int status)
{
	struct sctpt_rxcur *c = &ep->cur;
	if (c->active && c->peer == p) { /* the rest of a message being read goes nowhere */
		drop_whole(ep, c, status); /* a reassembly target goes below */
		c->discard = 1;
	}
	c = ep->cur_parked;
	if (c && c->active && c->peer == p) {
		drop_whole(ep, c, status);
		c->discard = 1;
	}
	LIST_FOREACH(c, &ep->placing, plink) {
		if (c->peer != p)
			continue;
		drop_whole(ep, c, status);
		c->discard = 1;
	}
	for (uint16_t s = 0; s < ep->cfg.streams; s++) {
		if (p->rx[s])
			rxmsg_drop(ep, p, p->rx[s], status);
		p->rx[s] = NULL;
	}
	struct sctpt_rxmsg *r;
	while ((r = LIST_FIRST(&p->rxlist))) {
		LIST_REMOVE(r, rlink);
		rxmsg_drop(ep, p, r, status);
	}
	/* complete messages held for an earlier one that will never come */
	for (uint32_t i = 0; i < p->order.cap; i++) {
		struct sctpt_order_ctx *oc = &p->order.slots[i];
		struct sctpt_order_item *it;
		if (!oc->used)
			continue;
		while ((it = oc->held)) {
			oc->held = it->next;
			oc->nheld--;
			rxmsg_drop(ep, p, (struct sctpt_rxmsg *)it, status);
		}
	}
}

int sctpt_rx_place_begin(struct sctpt_ep *ep, struct sctpt_rxcur *c, struct sctpt_peer *p,
			 uint16_t stream, const uint8_t *data, size_t n)
{
	if (n < SCTPT_HDR_LEN || begin_cur(ep, c, p, stream, data, n, 1) != 0) {
		memset(c, 0, sizeof(*c));
		return 0;
	}
	LIST_INSERT_HEAD(&ep->placing, c, plink);
	return 1;
}

void sctpt_rx_place_more(struct sctpt_ep *ep, struct sctpt_rxcur *c, const uint8_t *data,
			 size_t n)
{
	if (c->discard)
		return;
	if (n > c->cap + c->cap2) {
		protocol_error(ep, c->peer, "message longer than its envelope says");
		drop_whole(ep, c, -EPROTO);
		c->discard = 1;
		return;
	}
	cur_copy(c, data, n);
	c->got += n;
}

void sctpt_rx_place_end(struct sctpt_ep *ep, struct sctpt_rxcur *c)
{
	LIST_REMOVE(c, plink);
	end_cur(ep, c);
}

void sctpt_rx_place_cancel(struct sctpt_ep *ep, struct sctpt_rxcur *c)
{
	LIST_REMOVE(c, plink);
	drop_whole(ep, c, -ECONNRESET);
	c->active = 0;
}

int sctpt_rx_inject(struct sctpt_ep *ep, sctpt_peer_t id, uint16_t stream, const uint8_t *buf,
		    size_t len)
{
	struct sctpt_rxcur *c = &ep->cur;
	sctpt_lock(ep);
	struct sctpt_peer *p = sctpt_peer_get(ep, id);
	if (!p) {
		sctpt_unlock(ep);
		return sctpt_err(-EINVAL, "no peer %d", id);
	}
	size_t n0 = len < 4096 ? len : 4096;
	if (n0 > ep->buf_len)
		n0 = ep->buf_len;
	memcpy(ep->stage->data, buf, n0);
	begin_message(ep, p, stream, n0);
	for (size_t off = n0; off < len;) {
		uint8_t scratch[4096];
		int to_scratch = c->discard || c->cap == 0;
		size_t k = len - off, cap = to_scratch ? sizeof(scratch) : c->cap;
		if (k > cap)
			k = cap;
		memcpy(to_scratch ? scratch : c->dst, buf + off, k);
		rx_account(ep, to_scratch, k);
		off += k;
	}
	end_message(ep);
	int rc = p->state == SCTPT_PEER_FAILED ? p->error : 0;
	sctpt_unlock(ep);
	return rc;
}

int sctpt_receive(struct sctpt_ep *ep)
{
	struct sctpt_rxcur *c = &ep->cur;
	int count = 0;
	for (int guard = 0; guard < 4096; guard++) {
		struct sctpt_peer *p = NULL;
		uint16_t stream = 0;
		int eor = 0, n;
		if (!c->active) {
			/* read the envelope and, for small messages, the whole message */
			size_t want = ep->buf_len < 4096 ? ep->buf_len : 4096;
			n = ep->be->recv(ep, ep->stage->data, want, &p, &stream, &eor);
			if (n < 0)
				break;
			if ((size_t)n < SCTPT_HDR_LEN && !eor) {
				/* cannot happen with a 4 KiB first read; keep the bytes honest */
				protocol_error(ep, p, "envelope split across reads");
				c->active = 1;
				c->discard = 1;
				continue;
			}
			begin_message(ep, p, stream, (size_t)n);
		} else {
			uint8_t scratch[4096];
			int to_scratch = c->discard || c->cap == 0;
			n = ep->be->recv(ep, to_scratch ? scratch : c->dst,
					 to_scratch ? sizeof(scratch) : c->cap, &p, &stream, &eor);
			if (n < 0)
				break;
			rx_account(ep, to_scratch, (size_t)n);
		}
		if (eor) {
			end_message(ep);
			count++;
		}
	}
	return count;
}

void sctpt_rx_begin(struct sctpt_ep *ep, struct sctpt_peer *p, uint16_t stream, size_t n)
{
	begin_message(ep, p, stream, n);
}

void sctpt_rx_account(struct sctpt_ep *ep, int to_scratch, size_t n)
{
	rx_account(ep, to_scratch, n);
}

int sctpt_rx_lent(struct sctpt_ep *ep, struct sctpt_peer *p, uint16_t stream,
		  const struct sctpt_hdr *h, const uint8_t *data, size_t len,
		  struct sctpt_loan *loan)
{
	const struct sctpt_hslot *s = &ep->handlers[sctpt_handler_of(ep, h->context)];
	/* what begin_message would have put whole in the staging buffer, for a handler that
	 * releases its entries as soon as it has seen them (a polled one may keep them) */
	if (p->nrails || p->state == SCTPT_PEER_FAILED || stream >= ep->cfg.streams ||
	    h->op != SCTPT_OP_DATA || h->offset != 0 || h->msg_len != len ||
	    (h->flags & (SCTPT_F_FIRST | SCTPT_F_LAST)) != (SCTPT_F_FIRST | SCTPT_F_LAST) ||
	    len > ep->cfg.frag_size || len <= SCTPT_CQE_INLINE || !s->used || !s->h.complete)
		return 0;
	p->sctp_msgs_in++;
	ep->lent = loan;
	complete(ep, p, h, stream, data, NULL);
	if (ep->lent) /* copied (held for order), or dropped */
		sctpt_shm_loan_end(ep, ep->lent);
	ep->lent = NULL;
	return 1;
}

/* The envelope of a whole small DATA message from a ring, as the sender's fast path writes
 * it, into h: 1, or 0 for anything else (a bad envelope included: the general way reports
 * it). Each byte is read once: the sender may be writing over them. */
static int small_env(struct sctpt_ep *ep, struct sctpt_peer *p, uint16_t stream,
		     const uint8_t *env, size_t len, struct sctpt_hdr *h)
{
	uint8_t flags = env[2];
	if (len > SCTPT_CQE_INLINE || env[0] != SCTPT_PROTO_VERSION || env[1] != SCTPT_OP_DATA ||
	    env[3] != 0 || (flags & ~SCTPT_F_UNORDERED) != (SCTPT_F_FIRST | SCTPT_F_LAST) ||
	    p->nrails || p->state == SCTPT_PEER_FAILED || stream >= ep->cfg.streams)
		return 0;
	*h = (struct sctpt_hdr){.version = SCTPT_PROTO_VERSION, .op = SCTPT_OP_DATA,
				.flags = flags, .context = sm_get_be32(env + 4),
				.tag = (int32_t)sm_get_be32(env + 8), .seq = sm_get_be32(env + 12),
				.msg_len = sm_get_be64(env + 16), .offset = sm_get_be64(env + 24)};
	return h->msg_len == len && h->offset == 0 &&
	       (!(flags & SCTPT_F_UNORDERED) || h->seq == 0);
}

int sctpt_rx_small(struct sctpt_ep *ep, struct sctpt_peer *p, uint16_t stream,
		   const uint8_t *env, size_t len)
{
	struct sctpt_hdr h;
	if (!small_env(ep, p, stream, env, len, &h))
		return 0;
	p->sctp_msgs_in++;
	/* copied into the entry (or, held for order, into a copy of its own) */
	if (h.flags & SCTPT_F_UNORDERED)
		deliver(ep, p, &h, stream, env + SCTPT_HDR_LEN, NULL);
	else
		complete(ep, p, &h, stream, env + SCTPT_HDR_LEN, NULL);
	return 1;
}

int sctpt_rx_express(struct sctpt_ep *ep, struct sctpt_peer *p, uint16_t stream,
		     const uint8_t *env, size_t len, uint8_t *buf, struct sctpt_cqe *c,
		     sctpt_complete_fn *fn, void **arg)
{
	struct sctpt_order_ctx *oc = NULL;
	struct sctpt_hdr h;
	if (!small_env(ep, p, stream, env, len, &h))
		return 0;
	/* ordered: only the one due, with nothing held behind it (complete() releases those) */
	if (!(h.flags & SCTPT_F_UNORDERED) &&
	    (!(oc = sctpt_order_get(&p->order, h.context)) || oc->nheld ||
	     sctpt_order_classify(oc, h.seq) != SCTPT_ORDER_NOW))
		return 0;
	if (!sctpt_cq_express(ep, sctpt_handler_of(ep, h.context), fn, arg))
		return 0;
	if (oc)
		sctpt_order_advance(oc); /* nothing held: returns nothing */
	p->sctp_msgs_in++;
	p->msgs_recv++;
	p->bytes_recv += len;
	if (len)
		memcpy(buf, env + SCTPT_HDR_LEN, len);
	*c = (struct sctpt_cqe){.kind = SCTPT_CQE_RECV, .peer = p->id, .context = h.context,
				.tag = h.tag, .stream = stream, .data = buf, .len = len};
	return 1;
}

void sctpt_rx_end(struct sctpt_ep *ep)
{
	end_message(ep);
}
