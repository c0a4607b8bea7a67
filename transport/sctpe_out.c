/*
 * What leaves: messages copied once into pooled buffers and queued per stream, cut into DATA
 * or I-DATA chunks when they are sent (streams take turns: by chunk with I-DATA, by message
 * with DATA, whose fragments must have consecutive TSNs; rails' associations send first come
 * first served), bundled into packets as far as cwnd and the peer's window allow; chunks in
 * flight wait in a ring indexed by TSN until a SACK acknowledges them. Gap blocks, fast
 * retransmit (RFC 9260 7.2.4) and T3-rtx (6.3.3) decide what is sent again.
 */
#include "sctpe_int.h"

#include "sctpe_crc32c.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/sm_bytes.h"

#define RING_MAX (1u << 20)

static void t3_fire(struct sctpe_timer *t);

static uint32_t hdr_len(const struct sctpe_assoc *a)
{
	return a->idata ? SCTPE_IDATA_HDR_LEN : SCTPE_DATA_HDR_LEN;
}

/* The bytes a chunk counts for in flight and in the peer's window. */
static uint32_t tc_bytes(const struct sctpe_assoc *a, const struct sctpe_tchunk *t)
{
	return t->len + hdr_len(a);
}

static struct sctpe_tchunk *ring_at(struct sctpe_assoc *a, uint32_t tsn)
{
	return &a->ring[tsn & (a->ring_cap - 1)];
}

static void omsg_unref(struct sctpe_ep *e, struct sctpe_omsg *m)
{
	if (--m->refs)
		return;
	sctpt_udp_tx_unref(); /* a batch may still point into it */
	sctpe_buf_put(e->opool, m, m->cls);
}

int sctpe_out_init(struct sctpe_assoc *a)
{
	uint16_t n = a->e->ep->cfg.streams;
	a->outs = calloc(n, sizeof(*a->outs));
	a->ring_cap = 256;
	a->ring = calloc(a->ring_cap, sizeof(*a->ring));
	if (!a->outs || !a->ring) {
		free(a->outs);
		free(a->ring);
		a->outs = NULL;
		a->ring = NULL;
		return -ENOMEM;
	}
	for (uint16_t s = 0; s < n; s++)
		STAILQ_INIT(&a->outs[s].q);
	TAILQ_INIT(&a->active);
	a->os = n;
	a->next_tsn = a->my_itsn;
	a->cum = a->my_itsn - 1;
	sctpe_timer_init(&a->t3, t3_fire);
	return 0;
}

void sctpe_out_fini(struct sctpe_assoc *a)
{
	struct sctpe_ep *e = a->e;
	for (uint32_t tsn = a->cum + 1; a->ring && tsn != a->next_tsn; tsn++) {
		struct sctpe_tchunk *t = ring_at(a, tsn);
		if (t->m)
			omsg_unref(e, t->m);
		t->m = NULL;
	}
	for (uint16_t s = 0; a->outs && s < e->ep->cfg.streams; s++) {
		struct sctpe_omsg *m;
		while ((m = STAILQ_FIRST(&a->outs[s].q))) {
			STAILQ_REMOVE_HEAD(&a->outs[s].q, link);
			omsg_unref(e, m);
		}
	}
	sctpe_timer_stop(&e->wheel, &a->t3);
	if (a->staged)
		sctpe_buf_put(e->opool, a->staged, a->staged->cls);
	a->staged = NULL;
	free(a->ring);
	free(a->outs);
	a->ring = NULL;
	a->outs = NULL;
	a->cur = NULL;
	a->held_bytes = a->queued_bytes = 0;
	a->queued_msgs = 0;
}

uint32_t sctpe_out_inflight(const struct sctpe_assoc *a)
{
	return a->next_tsn - 1 - a->cum + a->queued_msgs;
}

/*
 * How much an association holds for sending (queued and unacknowledged) before it refuses
 * more: the core keeps the rest in its own queues, as references to the sender's buffers.
 * Four bandwidth-delay products, at least SCTPE_SNDQ_MIN, at most cfg.sndbuf: more than a
 * path can carry only makes the send buffers a larger circle through memory, each buffer cold
 * in the cache when it is written again.
 */
#define SCTPE_SNDQ_MIN (1u << 20)

size_t sctpe_out_limit(const struct sctpe_assoc *a)
{
	size_t max = a->e->ep->cfg.sndbuf;
	/* four of the path's round trips, or two of those the SACKs see: queued behind the
	 * peer's own data (both directions busy) they come far later than the path allows */
	uint64_t us = 4ull * a->min_rtt_us, seen = 2ull * a->cc.srtt_us;
	uint64_t q = a->rate * (us > seen ? us : seen) / 1000000u;
	if (q < SCTPE_SNDQ_MIN)
		q = SCTPE_SNDQ_MIN;
	return q < max ? (size_t)q : max;
}

static int queue_check(struct sctpe_assoc *a, uint16_t sid, size_t len)
{
	struct sctpe_ep *e = a->e;
	if (a->state == SCTPE_CLOSED || a->state >= SCTPE_SHUTDOWN_PENDING || a->want_shutdown)
		return sctpt_err(-EPIPE, "peer %s: the association is closing", a->peer->card);
	if (len == 0 || len > UINT32_MAX / 2 || sid >= e->ep->cfg.streams ||
	    (a->state == SCTPE_ESTABLISHED && sid >= a->os))
		return sctpt_err(-EINVAL, "peer %s: no SCTP message of %zu bytes on stream %u",
				 a->peer->card, len, sid);
	if (a->held_bytes && a->held_bytes + len > sctpe_out_limit(a)) {
		e->st.stop_limit++;
		return -EAGAIN;
	}
	return 0;
}

static struct sctpe_omsg *omsg_new(struct sctpe_assoc *a, size_t len)
{
	uint8_t cls;
	struct sctpe_omsg *m = sctpe_buf_get(a->e->opool, sizeof(*m) + len, &cls);
	if (m)
		m->cls = cls;
	return m;
}

/* m (len bytes of data) joins its stream's queue. */
static void enqueue(struct sctpe_assoc *a, uint16_t sid, struct sctpe_omsg *m, size_t len)
{
	m->len = (uint32_t)len;
	m->off = 0;
	m->fsn = 0;
	m->mid = 0;
	m->ppid = SCTPT_PPID;
	m->sid = sid;
	m->flags = 0;
	m->refs = 1;
	struct sctpe_ostream *os = &a->outs[a->fcfs ? 0 : sid];
	STAILQ_INSERT_TAIL(&os->q, m, link);
	if (!os->active) {
		os->active = 1;
		TAILQ_INSERT_TAIL(&a->active, os, alink);
	}
	a->queued_bytes += len;
	a->held_bytes += len;
	a->queued_msgs++;
	if (a->state == SCTPE_ESTABLISHED)
		sctpe_want_flush(a);
}

int sctpe_out_queue(struct sctpe_assoc *a, uint16_t sid, const void *buf, size_t len)
{
	int rc = queue_check(a, sid, len);
	if (rc)
		return rc;
	if (a->staged && buf == a->staged->data && len <= a->staged_cap) {
		struct sctpe_omsg *m = a->staged; /* built in place by the core: no copy */
		a->staged = NULL;
		enqueue(a, sid, m, len);
		return 0;
	}
	struct sctpe_omsg *m = omsg_new(a, len);
	if (!m)
		return -EAGAIN; /* out of memory: like a full buffer, tried again later */
	memcpy(m->data, buf, len);
	enqueue(a, sid, m, len);
	return 0;
}

void *sctpe_out_stage(struct sctpe_assoc *a, size_t len, int *full)
{
	int rc;
	if (a->staged) {
		sctpe_buf_put(a->e->opool, a->staged, a->staged->cls);
		a->staged = NULL;
	}
	if ((rc = queue_check(a, 0, len)) != 0 || !(a->staged = omsg_new(a, len))) {
		*full = rc == -EAGAIN;
		return NULL;
	}
	a->staged_cap = len;
	return a->staged->data;
}

/* ---- cutting and sending ---- */

/* The message the next new chunk comes from, or NULL. */
static struct sctpe_omsg *sched_peek(struct sctpe_assoc *a, struct sctpe_ostream **osp)
{
	if (a->cur) {
		*osp = &a->outs[a->fcfs ? 0 : a->cur->sid];
		return a->cur;
	}
	struct sctpe_ostream *os = TAILQ_FIRST(&a->active);
	if (!os)
		return NULL;
	*osp = os;
	return STAILQ_FIRST(&os->q);
}

/* Cuts the next chunk of up to max payload bytes from m (at the head of os) into t. */
static void cut(struct sctpe_assoc *a, struct sctpe_ostream *os, struct sctpe_omsg *m,
		uint32_t max, struct sctpe_tchunk *t)
{
	uint32_t n = m->len - m->off;
	if (n > max)
		n = max;
	if (m->off == 0) {
		struct sctpe_ostream *ss = &a->outs[m->sid];
		if (m->flags & SCTPE_DATA_U)
			m->mid = a->idata ? ss->next_umid++ : 0;
		else
			m->mid = a->idata ? ss->next_ssn++ : (uint16_t)ss->next_ssn++;
	}
	t->m = m;
	t->off = m->off;
	t->len = n;
	t->sid = m->sid;
	t->mid = m->mid;
	t->fsn = m->fsn++;
	t->flags = (uint8_t)((m->flags & SCTPE_DATA_U) | (m->off == 0 ? SCTPE_DATA_B : 0) |
			     (m->off + n == m->len ? SCTPE_DATA_E : 0));
	t->state = SCTPE_TC_SENT;
	t->ntx = 0;
	t->miss = 0;
	t->fast_done = 0;
	m->off += n;
	m->refs++;
	a->queued_bytes -= n;
	int whole = m->off == m->len;
	if (whole) {
		STAILQ_REMOVE_HEAD(&os->q, link);
		a->queued_msgs--;
		m->refs--; /* the queue's reference */
		a->cur = NULL;
	} else if (!a->idata) {
		a->cur = m; /* DATA: this message's fragments go first */
	}
	/* streams take turns: after every chunk (I-DATA) or every message (DATA) */
	if (whole || a->idata) {
		TAILQ_REMOVE(&a->active, os, alink);
		if (STAILQ_EMPTY(&os->q))
			os->active = 0;
		else
			TAILQ_INSERT_TAIL(&a->active, os, alink);
	}
}

static int ring_grow(struct sctpe_assoc *a)
{
	uint32_t cap = a->ring_cap * 2;
	if (cap > RING_MAX)
		return -ENOSPC;
	struct sctpe_tchunk *r = calloc(cap, sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (uint32_t tsn = a->cum + 1; tsn != a->next_tsn; tsn++)
		r[tsn & (cap - 1)] = *ring_at(a, tsn);
	free(a->ring);
	a->ring = r;
	a->ring_cap = cap;
	return 0;
}

/* Payloads from this size on leave from their message uncopied: in a batch, where a piece
 * costs an iovec; alone, where it costs a gathered sendmsg. */
#define GATHER_MIN_BATCH 256
#define GATHER_MIN_ALONE 2048

/* A packet may end with a payload left where it is (in its message, until acknowledged): the
 * datagram is gathered from the headers, the payload and the padding, in a batch or alone. */
struct gather {
	uint32_t min;           /* gather payloads of this size on; 0: never */
	const uint8_t *payload; /* the last chunk's payload, once there is one */
	size_t plen, hdr_end;   /* its length; where the headers before it end */
};

/* Appends chunk tsn to the packet: 0, or -ENOSPC. */
static int put_chunk(struct sctpe_assoc *a, struct sctpe_pb *b, uint32_t tsn,
		     struct sctpe_tchunk *t, struct gather *g)
{
	struct sctpe_data d = {.flags = t->flags, .idata = (uint8_t)a->idata, .sid = t->sid,
			       .tsn = tsn, .mid = t->mid, .fsn = t->fsn, .ppid = t->m->ppid};
	uint8_t *p = sctpe_pb_data(b, &d, t->len);
	if (!p)
		return -ENOSPC;
	if (g->min && t->len >= g->min) {
		g->payload = t->m->data + t->off;
		g->plen = t->len;
		g->hdr_end = (size_t)(p - b->buf);
		return 0;
	}
	memcpy(p, t->m->data + t->off, t->len);
	return 0;
}

static void sent(struct sctpe_assoc *a, struct sctpe_tchunk *t, uint64_t now_us)
{
	t->ntx++;
	t->sent_us = now_us;
	t->miss = 0;
	t->state = SCTPE_TC_SENT;
	uint32_t bytes = tc_bytes(a, t);
	a->cc.flight += bytes;
	a->peer_rwnd = a->peer_rwnd > bytes ? a->peer_rwnd - bytes : 0;
}

/* Retransmissions into b, lowest TSN first: how many. */
static int put_rtx(struct sctpe_assoc *a, struct sctpe_pb *b, int ignore_cwnd, uint64_t now_us,
		   struct gather *g)
{
	int n = 0;
	for (uint32_t tsn = a->cum + 1; a->rtx_chunks && tsn != a->next_tsn && !g->payload; tsn++) {
		struct sctpe_tchunk *t = ring_at(a, tsn);
		if (t->state != SCTPE_TC_RTX)
			continue;
		if (!ignore_cwnd && a->cc.flight >= a->cc.cwnd)
			break;
		if (put_chunk(a, b, tsn, t, g) != 0)
			break;
		if (a->rtt_on && a->rtt_tsn == tsn)
			a->rtt_on = 0; /* Karn: no sample from a retransmitted chunk */
		if (a->undo.on && sctpe_tsn_le(tsn, a->undo.hi))
			a->undo.resent++;
		a->rtx_chunks--;
		sent(a, t, now_us);
		n++;
	}
	return n;
}

/* New chunks into b while cwnd and the peer's window allow: how many; *full when the packet
 * ran out of room first. */
static int put_new(struct sctpe_assoc *a, struct sctpe_pb *b, uint64_t now_us, int *full,
		   struct gather *g)
{
	int n = 0;
	uint32_t hl = hdr_len(a);
	*full = 1;
	if (b->cap < b->len + hl + 4)
		return 0;
	uint32_t maxpay = (uint32_t)((b->cap - SCTPE_COMMON_LEN - hl) & ~(size_t)3);
	while (!g->payload) {
		struct sctpe_ostream *os;
		struct sctpe_omsg *m = sched_peek(a, &os);
		*full = 0;
		if (!m)
			break;
		if (a->cc.flight >= a->cc.cwnd) {
			a->cwnd_full = 1;
			a->e->st.stop_cwnd++;
			break;
		}
		*full = 1;
		uint32_t room = (uint32_t)(b->cap - b->len);
		if (room < hl + 4)
			break;
		uint32_t want = m->len - m->off;
		if (want > maxpay)
			want = maxpay;
		if (want + hl > room && b->len > SCTPE_COMMON_LEN + 0u)
			break; /* a whole chunk in the next packet rather than a sliver here */
		uint32_t max = room - hl < maxpay ? (room - hl) & ~3u : maxpay;
		if (max == 0)
			break;
		uint32_t len = want < max ? want : max;
		/* the peer's window, but one probe when nothing is outstanding (6.1 A) */
		if (len + hl > a->peer_rwnd && a->cc.flight > 0) {
			*full = 0;
			a->e->st.stop_rwnd++;
			break;
		}
		if (a->next_tsn - a->cum - 1 >= a->ring_cap && ring_grow(a) != 0)
			break;
		uint32_t tsn = a->next_tsn;
		struct sctpe_tchunk *t = ring_at(a, tsn);
		cut(a, os, m, max, t);
		a->next_tsn++;
		put_chunk(a, b, tsn, t, g);
		sent(a, t, now_us);
		if (!a->rtt_on) {
			a->rtt_on = 1;
			a->rtt_tsn = tsn;
		}
		n++;
		if (a->peer_rwnd == 0) {
			*full = 0;
			break;
		}
	}
	return n;
}

static void send_gathered(struct sctpe_assoc *a, struct sctpe_pb *b, const struct gather *g,
			  int inplace)
{
	static const uint8_t zero[4];
	size_t end = g->hdr_end + g->plen;
	struct iovec iov[3] = {{b->buf, g->hdr_end}, {(void *)g->payload, g->plen},
			       {(void *)zero, b->len - end}};
	int n = b->len > end ? 3 : 2;
	if (a->e->crc)
		sm_put_le32(b->buf + SCTPE_OFF_CSUM, sctpe_crc32c_packetv(iov, n));
	else
		sm_put_le32(b->buf + SCTPE_OFF_CSUM, 0);
	a->e->st.pkts_out++;
	if (inplace)
		sctpt_udp_commitv(a->sel, g->hdr_end, g->payload, g->plen, b->len - end);
	else
		sctpt_udp_outputv(a->sel, iov, n);
}

/*
 * New data waits while the kernel still holds more than a quarter of a millisecond of our
 * sends at the path's rate (at least SCTPE_LOCALQ_MIN, in the kernel's buffer terms), as
 * TCP's small queues keep it. Else a queue in front of a slower link (a shaper, a NIC slower
 * than the host) fills with all that cwnd allows; when both directions are busy the SACKs
 * for the peer's data wait behind it, its round trip and cwnd grow with our queue and ours
 * with its, and each direction gets half the link. Only asked with a lot in flight: the
 * SACKs for it flush again, so nothing waits for a wake-up that does not come.
 */
#define SCTPE_LOCALQ_MIN_FLIGHT (256u << 10)
#define SCTPE_LOCALQ_MIN (128u << 10)
#define SCTPE_LOCALQ_MAX (8u << 20)

static int local_queue_full(const struct sctpe_assoc *a, uint64_t now_us)
{
	if (a->cc.flight < SCTPE_LOCALQ_MIN_FLIGHT || a->e->tap)
		return 0;
	uint64_t q = a->rate / 4000u;
	q = q < SCTPE_LOCALQ_MIN ? SCTPE_LOCALQ_MIN : q > SCTPE_LOCALQ_MAX ? SCTPE_LOCALQ_MAX : q;
	if (a->e->localq)
		q = a->e->localq;
	return sctpt_udp_backlogged(a->sel, (size_t)q, now_us);
}

static int can_send_data(const struct sctpe_assoc *a)
{
	return a->state == SCTPE_ESTABLISHED || a->state == SCTPE_SHUTDOWN_PENDING ||
	       a->state == SCTPE_SHUTDOWN_RECEIVED;
}

void sctpe_out_flush(struct sctpe_assoc *a)
{
	struct sctpe_ep *e = a->e;
	if (a->state == SCTPE_CLOSED || a->dead)
		return;
	uint64_t now_us = sctpe_clock_us(), now_ms = now_us / 1000;
	int data = can_send_data(a) && a->ring;
	int fast = a->cc.in_fast_recovery && a->rtx_chunks;
	int fresh = data && !local_queue_full(a, now_us);
	/* held back with data to send, as by cwnd: it may grow (the local queue, not cwnd, now
	 * bounds what waits in front of the link) */
	if (data && !fresh && TAILQ_FIRST(&a->active)) {
		a->cwnd_full = 1;
		e->st.stop_localq++;
	}
	if (data && a->cc.flight == 0 && a->last_data_ms &&
	    now_ms - a->last_data_ms > a->cc.rto_ms && TAILQ_FIRST(&a->active)) {
		sctpe_cc_idle(&a->cc);
		a->last_data_ms = now_ms;
	}
	for (int pkts = 0; pkts < SCTPE_MAX_BURST; pkts++) {
		struct sctpe_pb b;
		/* built where the batch will send it from, where it can */
		uint8_t *buf = e->tap ? NULL : sctpt_udp_reserve(a->sel, a->cc.mtu);
		int inplace = buf != NULL;
		sctpe_pb_init(&b, inplace ? buf : e->pkt, a->cc.mtu, a->lport, a->rport,
			      a->peer_vtag);
		if (a->sack_due)
			sctpe_in_sack(a, &b);
		int n = 0, more = 0;
		struct gather g = {.min = e->tap ? 0 : inplace ? GATHER_MIN_BATCH : GATHER_MIN_ALONE};
		if (data) {
			if (a->rtx_chunks)
				n += put_rtx(a, &b, fast && pkts == 0, now_us, &g);
			if (!a->rtx_chunks && fresh)
				n += put_new(a, &b, now_us, &more, &g);
		}
		if (b.len == SCTPE_COMMON_LEN) {
			if (inplace)
				sctpt_udp_commit(a->sel, 0);
			break;
		}
		if (g.payload) {
			send_gathered(a, &b, &g, inplace);
			more = 1;
		} else {
			size_t len = sctpe_pb_finish(&b, e->crc);
			if (inplace) {
				e->st.pkts_out++;
				sctpt_udp_commit(a->sel, len);
			} else {
				sctpe_output(a, b.buf, len);
			}
		}
		if (n) {
			a->last_data_ms = now_ms;
			if (!sctpe_timer_armed(&a->t3))
				sctpe_timer_arm(&e->wheel, &a->t3, now_ms + a->cc.rto_ms);
		} else if (!more) {
			break; /* a SACK alone, and nothing may follow it */
		}
	}
}

/* ---- SACKs ---- */

static void rtt_sample(struct sctpe_assoc *a, uint32_t tsn, const struct sctpe_tchunk *t)
{
	if (!a->rtt_on || a->rtt_tsn != tsn)
		return;
	a->rtt_on = 0;
	if (t->ntx == 1) {
		uint64_t now = sctpe_clock_us();
		uint32_t r = (uint32_t)(now - t->sent_us);
		sctpe_cc_rtt(&a->cc, r);
		if (!a->min_rtt_us || r < a->min_rtt_us)
			a->min_rtt_us = r ? r : 1;
	}
}

/* Delivery rate: bytes newly acknowledged over at least an RTT (and a millisecond); the
 * estimate follows rises at once and falls by an eighth per sample. */
static void rate_sample(struct sctpe_assoc *a, uint32_t acked)
{
	uint64_t now = sctpe_clock_us(), span = a->cc.srtt_us > 1000 ? a->cc.srtt_us : 1000;
	a->rate_bytes += acked;
	if (!a->rate_t0_us) {
		a->rate_t0_us = now;
		return;
	}
	if (now - a->rate_t0_us < span)
		return;
	uint64_t r = a->rate_bytes * 1000000u / (now - a->rate_t0_us);
	a->rate = r > a->rate ? r : a->rate - a->rate / 8 + r / 8;
	a->rate_bytes = 0;
	a->rate_t0_us = now;
}

/* Whether tsn is in one of the SACK's gap blocks. Blocks are walked in order; *bi keeps the
 * position between calls for increasing TSNs. */
static int in_gaps(const struct sctpe_sack *s, uint32_t cum, uint32_t tsn, int *bi)
{
	uint32_t off = tsn - cum;
	while (*bi < s->ngaps && sctpe_sack_gap_end(s, *bi) < off)
		(*bi)++;
	for (int i = *bi; i < s->ngaps; i++) {
		if (sctpe_sack_gap_start(s, i) <= off && off <= sctpe_sack_gap_end(s, i))
			return 1;
		if (sctpe_sack_gap_start(s, i) > off)
			break;
	}
	return 0;
}

/* Duplicates the peer reports of a T3-rtx episode's TSNs: all it resent twice over, and its
 * congestion state comes back; acknowledged past what followed it, it is over. */
static void undo_check(struct sctpe_assoc *a, const struct sctpe_sack *s)
{
	if (!a->undo.on)
		return;
	for (int i = 0; i < s->ndups; i++) {
		uint32_t d = sm_get_be32(s->dups + 4 * i);
		if (sctpe_tsn_le(a->undo.lo, d) && sctpe_tsn_le(d, a->undo.hi))
			a->undo.dups++;
	}
	if (a->undo.resent && a->undo.dups >= a->undo.resent) {
		struct sctpe_cc *cc = &a->cc;
		cc->cwnd = cc->cwnd > a->undo.cwnd ? cc->cwnd : a->undo.cwnd;
		cc->ssthresh = cc->ssthresh > a->undo.ssthresh ? cc->ssthresh : a->undo.ssthresh;
		cc->rto_ms = a->undo.rto_ms;
		cc->in_fast_recovery = 0;
		a->e->st.rtx_undone++;
		a->undo.on = 0;
		return;
	}
	if (!a->undo.close && sctpe_tsn_le(a->undo.hi, s->cum))
		a->undo.close = a->next_tsn - 1; /* its duplicates come before this is acknowledged */
	else if (a->undo.close && sctpe_tsn_le(a->undo.close, s->cum))
		a->undo.on = 0;
}

int sctpe_out_sack(struct sctpe_assoc *a, const struct sctpe_sack *s)
{
	struct sctpe_ep *e = a->e;
	uint32_t cum = s->cum, top = 0;
	if (sctpe_tsn_lt(cum, a->cum))
		return 0; /* older than one seen: out of order (6.2.1 D i) */
	if (!sctpe_tsn_lt(cum, a->next_tsn))
		return -EPROTO; /* acknowledges a TSN never sent */
	for (int i = 0; i < s->ngaps; i++) {
		uint16_t st = sctpe_sack_gap_start(s, i), en = sctpe_sack_gap_end(s, i);
		if (st == 0 || st > en || !sctpe_tsn_lt(cum + en, a->next_tsn))
			return -EPROTO; /* a block that cannot be, or of TSNs never sent */
		if (en > top)
			top = en;
	}
	e->st.sacks_in++;
	uint32_t acked = 0, flight_before = a->cc.flight;
	int advanced = cum != a->cum;
	for (uint32_t tsn = a->cum + 1; tsn != cum + 1; tsn++) {
		struct sctpe_tchunk *t = ring_at(a, tsn);
		if (t->state == SCTPE_TC_SENT) {
			a->cc.flight -= tc_bytes(a, t);
			acked += tc_bytes(a, t);
		} else if (t->state == SCTPE_TC_RTX) {
			a->rtx_chunks--;
			acked += tc_bytes(a, t);
		}
		rtt_sample(a, tsn, t);
		a->held_bytes -= t->len;
		omsg_unref(e, t->m);
		t->m = NULL;
		t->state = 0;
	}
	a->cum = cum;
	/* gap blocks: newly acknowledged, reneged (6.2.1's revoking), and the highest TSN newly
	 * acknowledged for the miss indications (7.2.4) */
	uint32_t htna = cum;
	int bi = 0, nfast = 0;
	for (uint32_t off = 1; off <= top; off++) {
		uint32_t tsn = cum + off;
		struct sctpe_tchunk *t = ring_at(a, tsn);
		if (in_gaps(s, cum, tsn, &bi)) {
			if (t->state == SCTPE_TC_SENT || t->state == SCTPE_TC_RTX) {
				if (t->state == SCTPE_TC_SENT)
					a->cc.flight -= tc_bytes(a, t);
				else
					a->rtx_chunks--;
				acked += tc_bytes(a, t);
				t->state = SCTPE_TC_GAP;
				rtt_sample(a, tsn, t);
				htna = tsn;
			}
		} else if (t->state == SCTPE_TC_GAP) {
			t->state = SCTPE_TC_RTX; /* the peer dropped it after all */
			a->rtx_chunks++;
		}
	}
	for (uint32_t tsn = cum + 1; sctpe_tsn_lt(tsn, htna); tsn++) {
		struct sctpe_tchunk *t = ring_at(a, tsn);
		if (t->state != SCTPE_TC_SENT || t->fast_done || ++t->miss < 3)
			continue;
		t->state = SCTPE_TC_RTX;
		t->fast_done = 1;
		a->cc.flight -= tc_bytes(a, t);
		a->rtx_chunks++;
		nfast++;
	}
	if (nfast) {
		e->st.rtx_fast += (uint64_t)nfast;
		sctpe_cc_fast_rtx(&a->cc, a->next_tsn - 1);
		if (a->rtt_on)
			a->rtt_on = 0;
	}
	a->peer_rwnd = s->arwnd > a->cc.flight ? s->arwnd - a->cc.flight : 0;
	undo_check(a, s);
	if (advanced) {
		rate_sample(a, acked);
		sctpe_cc_acked(&a->cc, acked, a->cwnd_full || flight_before >= a->cc.cwnd);
		sctpe_cc_cum(&a->cc, cum);
		a->errors = 0;
		a->path_errors = 0;
		a->cwnd_full = 0;
		if (a->next_tsn - 1 == cum)
			sctpe_timer_stop(&e->wheel, &a->t3);
		else
			sctpe_timer_arm(&e->wheel, &a->t3, e->wheel.now + a->cc.rto_ms);
	}
	if (a->next_tsn - 1 == cum && a->queued_msgs == 0)
		sctpe_assoc_drained(a);
	sctpe_want_flush(a);
	return 0;
}

static void t3_fire(struct sctpe_timer *tm)
{
	struct sctpe_assoc *a = sctpe_container(tm, struct sctpe_assoc, t3);
	if (a->next_tsn - 1 == a->cum || a->state == SCTPE_CLOSED)
		return;
	a->e->st.rtx_t3++;
	if (a->e->debug) {
		struct sctpe_tchunk *t = ring_at(a, a->cum + 1);
		fprintf(stderr, "sctpe %d: T3 %s: %u chunks out, first sent %llu us ago (%d times), "
			"rto %u ms, srtt %u us\n", (int)getpid(), a->peer->card,
			a->next_tsn - 1 - a->cum,
			(unsigned long long)(sctpe_clock_us() - t->sent_us), t->ntx, a->cc.rto_ms,
			a->cc.srtt_us);
	}
	if (sctpe_assoc_timeout(a) != 0)
		return; /* the association is lost */
	if (!a->undo.on) { /* a timeout within an episode keeps the state from before it */
		memset(&a->undo, 0, sizeof(a->undo));
		a->undo.on = 1;
		a->undo.cwnd = a->cc.cwnd;
		a->undo.ssthresh = a->cc.ssthresh;
		a->undo.rto_ms = a->cc.rto_ms;
		a->undo.lo = a->cum + 1;
	}
	a->undo.hi = a->next_tsn - 1;
	a->undo.close = 0;
	sctpe_cc_timeout(&a->cc);
	for (uint32_t tsn = a->cum + 1; tsn != a->next_tsn; tsn++) {
		struct sctpe_tchunk *t = ring_at(a, tsn);
		if (t->state != SCTPE_TC_SENT)
			continue;
		t->state = SCTPE_TC_RTX;
		a->cc.flight -= tc_bytes(a, t);
		a->rtx_chunks++;
	}
	if (a->rtx_chunks == 0) { /* all gap-acknowledged: the first may have been dropped */
		ring_at(a, a->cum + 1)->state = SCTPE_TC_RTX;
		a->rtx_chunks++;
	}
	a->cc.flight = 0;
	a->rtt_on = 0;
	sctpe_timer_arm(&a->e->wheel, &a->t3, a->e->wheel.now + a->cc.rto_ms);
	sctpe_want_flush(a);
}
