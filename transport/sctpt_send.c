/*
 * Sending: per-stream queues of messages, cut into fragments (envelope + payload) that go to
 * SCTP round-robin over the peer's streams, or to the rail scheduler for striped peers.
 */
#include "sctpt_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void txmsg_release(struct sctpt_ep *ep, struct sctpt_txmsg *m)
{
	if (m->iov != m->iov_inline)
		free(m->iov);
	if (m->done)
		sctpt_cq_drop(ep, m->done);
	sctpt_txmsg_put(ep, m);
}

/* m left its queue: its one completion (none for the core's own messages). */
static void tx_finish(struct sctpt_ep *ep, struct sctpt_txmsg *m, int status)
{
	if (m->done)
		sctpt_cq_send(ep, m->done, m->hdr.context, m->cookie, status);
	m->done = NULL;
	txmsg_release(ep, m);
}

static void dequeue(struct sctpt_ep *ep, struct sctpt_peer *p, uint16_t s)
{
	STAILQ_REMOVE_HEAD(&p->txq[s], link);
	if (--p->tx_queued == 0)
		ep->tx_peers--;
}

void sctpt_tx_finish(struct sctpt_ep *ep, struct sctpt_txmsg *m, int status)
{
	tx_finish(ep, m, status);
}

void sctpt_tx_fail_all(struct sctpt_ep *ep, struct sctpt_peer *p, int status)
{
	for (uint16_t s = 0; s < ep->cfg.streams; s++) {
		struct sctpt_txmsg *m;
		while ((m = STAILQ_FIRST(&p->txq[s]))) {
			dequeue(ep, p, s);
			tx_finish(ep, m, status);
		}
	}
	sctpt_rfrags_put(ep, &p->resend);
}

/*
 * The payload of m's next fragment. A message within cfg.frag_size goes whole, as the
 * configuration promises: cut at tx_frag (whole packets) it would take no fewer packets, and
 * the receiver would reassemble it in a buffer of its own instead of its staging buffer.
 */
static size_t frag_len(const struct sctpt_ep *ep, const struct sctpt_txmsg *m)
{
	uint64_t left = m->hdr.msg_len - m->hdr.offset;
	if (m->hdr.offset == 0 && left <= ep->cfg.frag_size)
		return (size_t)left;
	return left > ep->tx_frag ? ep->tx_frag : (size_t)left;
}

/* Copies the next fragment of m (envelope + payload) to out; returns its length. */
static size_t build_fragment(struct sctpt_ep *ep, struct sctpt_txmsg *m, uint8_t *out)
{
	uint64_t left = m->hdr.msg_len - m->hdr.offset;
	size_t n = frag_len(ep, m);
	struct sctpt_hdr h = m->hdr;
	h.flags = (uint8_t)((m->hdr.flags & (SCTPT_F_UNORDERED | SCTPT_F_MSGID)) |
			    (h.offset == 0 ? SCTPT_F_FIRST : 0) | (n == left ? SCTPT_F_LAST : 0));
	sctpt_hdr_encode(&h, out);
	uint8_t *d = out + SCTPT_HDR_LEN;
	size_t want = n;
	int idx = m->iov_idx;
	size_t off = m->iov_off;
	while (want) {
		size_t c = m->iov[idx].iov_len - off;
		if (c > want)
			c = want;
		memcpy(d, (const uint8_t *)m->iov[idx].iov_base + off, c);
		d += c;
		want -= c;
		off += c;
		if (off == m->iov[idx].iov_len) {
			idx++;
			off = 0;
		}
	}
	return SCTPT_HDR_LEN + n;
}

static void advance(struct sctpt_txmsg *m, size_t n)
{
	m->hdr.offset += n;
	while (n) {
		size_t c = m->iov[m->iov_idx].iov_len - m->iov_off;
		if (c > n)
			c = n;
		n -= c;
		m->iov_off += c;
		if (m->iov_off == m->iov[m->iov_idx].iov_len) {
			m->iov_idx++;
			m->iov_off = 0;
		}
	}
	while (m->iov_idx < m->iovcnt && m->iov[m->iov_idx].iov_len == 0)
		m->iov_idx++;
}

/* The fragment of n payload bytes at the head of stream s left: the message is done when
 * it was the last (the one sctpt_send is placing completes through its return value). */
static void fragment_sent(struct sctpt_ep *ep, struct sctpt_peer *p, uint16_t s, size_t n,
			  struct sctpt_txmsg *inline_msg, int *inline_done)
{
	struct sctpt_txmsg *m = STAILQ_FIRST(&p->txq[s]);
	advance(m, n);
	if (m->hdr.offset < m->hdr.msg_len)
		return;
	dequeue(ep, p, s);
	p->msgs_sent++;
	p->bytes_sent += m->hdr.msg_len;
	p->stream_msgs_sent[s]++;
	if (m == inline_msg) {
		*inline_done = 1;
		txmsg_release(ep, m);
	} else {
		tx_finish(ep, m, 0);
	}
}

/* Sends one fragment of the head message of stream s: 1 sent, 0 buffer full, < 0 error. */
static int push_one(struct sctpt_ep *ep, struct sctpt_peer *p, uint16_t s,
		    struct sctpt_txmsg *inline_msg, int *inline_done)
{
	struct sctpt_txmsg *m = STAILQ_FIRST(&p->txq[s]);
	size_t len;
	int rc;
	if (p->shm && (rc = sctpt_shm_push(ep, p, s, m, &len)) != SCTPT_SHM_SCTP) {
		if (rc <= 0)
			return rc;
		if (rc == SCTPT_SHM_WROTE) {
			fragment_sent(ep, p, s, len, inline_msg, inline_done);
			return 1;
		}
		/* pulled: the receiver reads it from the iovecs, its completion comes then */
		dequeue(ep, p, s);
		p->msgs_sent++;
		p->bytes_sent += m->hdr.msg_len;
		p->stream_msgs_sent[s]++;
		sctpt_shm_pulled(ep, p, m);
		return 1;
	}
	if (p->nrails) {
		/* striped: a copy that stays until SCTP has it acknowledged, on the best rail */
		struct sctpt_rfrag *f = sctpt_rfrag_get(ep);
		if (!f)
			return 0; /* try again on the next progress */
		f->len = len = build_fragment(ep, m, f->data);
		f->stream = s;
		rc = sctpt_rail_place(ep, p, f);
		if (rc <= 0) {
			struct sctpt_rfragq one = STAILQ_HEAD_INITIALIZER(one);
			STAILQ_INSERT_HEAD(&one, f, link);
			sctpt_rfrags_put(ep, &one);
			return rc;
		}
	} else {
		size_t want = SCTPT_HDR_LEN + frag_len(ep, m);
		int full = 0;
		uint8_t *dst = ep->be->send_buf ? ep->be->send_buf(ep, p, want, &full) : NULL;
		if (full)
			return 0; /* not built only to be thrown away */
		if (!dst)
			dst = ep->txbuf;
		len = build_fragment(ep, m, dst);
		rc = ep->be->send(ep, p, NULL, s, dst, len);
		if (rc == -EAGAIN)
			return 0;
		if (rc < 0)
			return rc;
	}
	fragment_sent(ep, p, s, len - SCTPT_HDR_LEN, inline_msg, inline_done);
	return 1;
}

int sctpt_push_peer(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_txmsg *inline_msg,
		    int *inline_done)
{
	uint16_t ns = ep->cfg.streams;
	int sent = 0, idle = 0;
	if (p->state == SCTPT_PEER_FAILED || p->state == SCTPT_PEER_CLOSED)
		return 0;
	if (p->nrails) { /* fragments of failed rails go first */
		sent = sctpt_rail_resend(ep, p);
		if (!STAILQ_EMPTY(&p->resend))
			return sent;
	}
	while (p->tx_queued && idle < ns) {
		uint16_t s = p->rr_next;
		p->rr_next = (uint16_t)((s + 1) % ns);
		if (STAILQ_EMPTY(&p->txq[s])) {
			idle++;
			continue;
		}
		idle = 0;
		int rc = push_one(ep, p, s, inline_msg, inline_done);
		if (rc <= 0)
			return rc < 0 ? rc : sent;
		sent++;
	}
	return sent;
}

static void enqueue(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_txmsg *m)
{
	struct sctpt_txq *q = &p->txq[m->stream];
	int was_empty = STAILQ_EMPTY(q);
	STAILQ_INSERT_TAIL(q, m, link);
	if (p->tx_queued++ == 0)
		ep->tx_peers++;
	if (was_empty) /* start with this stream so a lone small message leaves right away */
		p->rr_next = m->stream;
}

/* A peer we may send to, connecting it on first use; 0 or -errno (message set). */
static int sendable(struct sctpt_ep *ep, struct sctpt_peer *p)
{
	if (p->state == SCTPT_PEER_FAILED)
		return sctpt_err(-EPIPE, "peer %s is lost: %s", p->card, strerror(-p->error));
	if (p->state == SCTPT_PEER_CLOSED)
		return sctpt_err(-EPIPE, "peer %s has closed its endpoint", p->card);
	if (p->state == SCTPT_PEER_IDLE) {
		int rc = p->shm ? sctpt_shm_connect(ep, p) : 1; /* 0: through shared memory */
		if (rc > 0)
			rc = ep->be->connect(ep, p);
		if (rc)
			return rc;
		p->state = SCTPT_PEER_CONNECTING;
	}
	return 0;
}

/* The general way: into the stream's queue, then as far as the queues go now. 1 sent
 * already, 0 queued (its completion later), < 0 failed (no completion). */
static __attribute__((noinline)) int send_queued(struct sctpt_ep *ep, struct sctpt_peer *p,
						  struct sctpt_order_ctx *oc, uint16_t stream,
						  uint32_t context, int32_t tag,
						  const struct iovec *iov, int iovcnt, uint64_t len,
						  void *cookie)
{
	struct sctpt_txmsg *m;
	int rc, done = 0;
	if (!(m = sctpt_txmsg_get(ep)) || !(m->done = sctpt_cq_reserve(ep)) ||
	    !(m->iov = iovcnt <= 4 ? m->iov_inline : malloc((size_t)iovcnt * sizeof(*iov)))) {
		if (m) {
			m->iov = m->iov_inline;
			txmsg_release(ep, m);
		}
		return sctpt_err(-ENOMEM, "out of memory sending to %s", p->card);
	}
	if (iovcnt)
		memcpy(m->iov, iov, (size_t)iovcnt * sizeof(*iov));
	m->iovcnt = iovcnt;
	advance(m, 0); /* skip leading empty iovecs */
	m->cookie = cookie;
	m->hdr.version = SCTPT_PROTO_VERSION;
	m->hdr.op = SCTPT_OP_DATA;
	m->hdr.context = context;
	m->hdr.tag = tag;
	m->hdr.msg_len = len;
	if (!oc) {
		m->hdr.flags = SCTPT_F_UNORDERED;
		if (p->nrails) { /* numbered, so that a copy re-sent after a rail failure is known */
			p->unord_id = p->unord_id + 1 ? p->unord_id + 1 : 1;
			m->hdr.seq = p->unord_id;
			m->hdr.flags |= SCTPT_F_MSGID;
		}
	} else {
		m->hdr.seq = sctpt_order_stamp(oc);
	}
	m->stream = stream;
	enqueue(ep, p, m);
	int engine = !p->shm || !sctpt_shm_routes(p); /* the ring needs no packet batching */
	if (engine)
		ep->be->tx_begin(ep);
	rc = sctpt_push_peer(ep, p, m, &done);
	if (engine)
		ep->be->tx_end(ep);
	if (rc < 0) /* m, if still queued, completes with the rest: once, with -EPIPE */
		sctpt_peer_fail(ep, p, rc);
	return done ? 1 : 0;
}

int sctpt_send(struct sctpt_ep *ep, sctpt_peer_t id, uint32_t context, int32_t tag, unsigned flags,
	       const struct iovec *iov, int iovcnt, void *cookie)
{
	struct sctpt_peer *p;
	struct sctpt_order_ctx *oc = NULL;
	uint64_t len = 0;
	uint16_t stream;
	int rc;
	if (iovcnt < 0 || (iovcnt > 0 && !iov))
		return sctpt_err(-EINVAL, "sctpt_send: bad iovec");
	for (int i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	if (len > SCTPT_MAX_MSG || len > ep->cfg.max_msg_size)
		return sctpt_err(-EMSGSIZE, "sctpt_send: %llu bytes is over the limit",
				 (unsigned long long)len);
	sctpt_lock(ep);
	p = sctpt_peer_get(ep, id);
	if (!p || p->anonymous) {
		sctpt_unlock(ep);
		return sctpt_err(-EINVAL, "sctpt_send: no peer %d with a business card", id);
	}
	if (p->state != SCTPT_PEER_UP && (rc = sendable(ep, p)) != 0)
		goto out;
	if (!(flags & SCTPT_SEND_UNORDERED) && !(oc = sctpt_order_get(&p->order, context))) {
		rc = sctpt_err(-ENOMEM, "out of memory sending to %s", p->card);
		goto out;
	}
	stream = ep->cfg.ops.stream_map ?
			 ep->cfg.ops.stream_map(ep->cfg.ops.arg, context, tag, ep->cfg.streams) :
			 sctpt_stream_default(context, tag, ep->cfg.streams);
	if (stream == 0 || stream >= ep->cfg.streams)
		stream = (uint16_t)(1 + stream % (ep->cfg.streams - 1));
	if (p->shm && !p->tx_queued && !p->nrails) {
		/* a same-host peer with nothing queued: a small message goes into its ring now,
		 * from the caller's iovecs (nothing queued, so nothing it could overtake) */
		struct sctpt_hdr h = {.version = SCTPT_PROTO_VERSION, .op = SCTPT_OP_DATA,
				      .flags = oc ? 0 : SCTPT_F_UNORDERED, .context = context,
				      .tag = tag, .msg_len = len};
		rc = sctpt_shm_send(ep, p, stream, &h, oc, iov, iovcnt);
		if (rc > 0) {
			p->msgs_sent++;
			p->bytes_sent += len;
			p->stream_msgs_sent[stream]++;
			goto out;
		}
		if (rc < 0) { /* the ring failed the peer */
			rc = sctpt_err(-EPIPE, "peer %s is lost: %s", p->card, strerror(-rc));
			goto out;
		}
	}
	if (flags & SCTPT_SEND_NOW)
		rc = -EAGAIN; /* no message set: not an error, the caller's cue */
	else
		rc = send_queued(ep, p, oc, stream, context, tag, iov, iovcnt, len, cookie);
out:
	sctpt_unlock(ep);
	return rc;
}

int sctpt_pending(struct sctpt_ep *ep, sctpt_peer_t id)
{
	sctpt_lock(ep);
	struct sctpt_peer *p = sctpt_peer_get(ep, id);
	int r = id < 0 ? ep->tx_peers > 0 : p ? p->tx_queued > 0 || !STAILQ_EMPTY(&p->resend) : 0;
	for (int i = 0; id < 0 && !r && ep->rail_peers && i < ep->npeers; i++)
		r = !STAILQ_EMPTY(&ep->peers[i]->resend);
	sctpt_unlock(ep);
	return r;
}

/* The peer has an association to us: it sent, or meant to. */
static int heard_from(const struct sctpt_peer *p)
{
	int heard = p->assoc_in != 0;
	for (int i = 0; i < p->nrails; i++)
		heard |= p->rails[i].assoc_in != 0;
	return heard;
}

/* Queues our CLOSE (stream 0) to every peer we have sent to or heard from: one that only
 * ever sent to us would otherwise take our leaving for a loss. */
void sctpt_send_close(struct sctpt_ep *ep)
{
	sctpt_lock(ep);
	for (int i = 0; i < ep->npeers; i++) {
		struct sctpt_peer *p = ep->peers[i];
		struct sctpt_txmsg *m;
		if (p->state == SCTPT_PEER_IDLE && !p->anonymous && heard_from(p) &&
		    sendable(ep, p) != 0)
			continue;
		if ((p->state != SCTPT_PEER_UP && p->state != SCTPT_PEER_CONNECTING) ||
		    !(m = sctpt_txmsg_get(ep)))
			continue;
		p->close_sent = 1;
		m->iov = m->iov_inline;
		m->hdr.version = SCTPT_PROTO_VERSION;
		m->hdr.op = SCTPT_OP_CLOSE;
		m->hdr.flags = SCTPT_F_UNORDERED;
		m->stream = 0;
		enqueue(ep, p, m);
		if (sctpt_push_peer(ep, p, NULL, NULL) < 0)
			sctpt_peer_fail(ep, p, -EPIPE);
	}
	sctpt_unlock(ep);
}
