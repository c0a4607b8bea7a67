/*
 * Striping: the rail scheduler of striped peers (see "Striping" in sctpt.h). Each fragment
 * goes to the rail that would deliver it first; a copy stays on the rail until SCTP has it
 * acknowledged; a rail that fails or stalls hands its copies to the others; the receiver
 * drops what arrives twice (ids of unordered messages, sequence numbers of ordered ones).
 */
#include "sctpt_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A rail can take new fragments. */
static int rail_usable(struct sctpt_peer *p, const struct sctpt_rail_st *r)
{
	return r->live && !r->stalled && r->assoc_out && atomic_load(&p->paths[r->index]->up);
}

/* Rail r's delivery rate, bytes/s (rails of unknown rate count as the mean of the known
 * ones, or all alike). */
static uint64_t rail_rate(const struct sctpt_peer *p, const struct sctpt_rail_st *r)
{
	uint64_t known = 0, sum = 0;
	for (int i = 0; i < p->nrails; i++)
		if (p->rails[i].rate) {
			known++;
			sum += p->rails[i].rate;
		}
	uint64_t rate = r->rate ? r->rate : known ? sum / known : 1000000;
	return rate ? rate : 1;
}

/* Expected time (us) until a fragment of len bytes given to rail r now has arrived: its RTT
 * plus what it holds ahead of it at its rate. */
static uint64_t rail_cost(const struct sctpt_peer *p, const struct sctpt_rail_st *r, size_t len)
{
	return r->srtt_us + (r->held + len) * 1000000u / rail_rate(p, r);
}

/* Queues the copies rail r holds to be re-sent on the other rails, oldest first. */
static void rail_hand_over(struct sctpt_peer *p, struct sctpt_rail_st *r)
{
	STAILQ_CONCAT(&p->resend, &r->copies);
	r->held = 0;
	r->released = 0;
}

/* Stops using rail r and queues its unacknowledged fragments to be re-sent on the others
 * (the receiver drops whatever arrives twice). Its association is left to SCTP: it is used
 * again if it outlives the outage, else COMM_LOST clears assoc_out and the rail reconnects.
 * (An ABORT cannot be relied on: usrsctp refuses it with EAGAIN while the send buffer is
 * full, which is when a rail's path has just died.) What SCTP still holds of the old
 * copies only delays the release of new ones (rail_release). */
static void rail_fail(struct sctpt_peer *p, struct sctpt_rail_st *r)
{
	if (r->live && (p->state == SCTPT_PEER_UP || p->state == SCTPT_PEER_CONNECTING))
		p->rail_failures++; /* not the ABORTs of a peer that closed */
	r->live = 0;
	r->stalled = 0;
	r->down_ms = sctpt_now_ms();
	rail_hand_over(p, r);
}

/*
 * A rail whose association has moved no data for a while, while another rail to the same
 * peer has (so the peer is alive and reading), is in SCTP's retransmission back-off: a burst
 * lost on a lossy link, timeouts doubling up to rto_max; what it holds could take seconds to
 * arrive. Like CMT-PF's "potentially failed" destinations, it gets no new fragments and its
 * copies go to the other rails now; it is used again as soon as SCTP moves data on it. Only
 * after 250 ms plus 4 RTTs, so a merely slow rail is left alone. A peer that stops reading
 * altogether stalls every rail at once: nothing is handed over then.
 */
static void rail_check_stall(struct sctpt_peer *p, struct sctpt_rail_st *r, uint64_t held,
			     uint64_t now)
{
	if (held < r->sctp_held || held == 0) {
		r->moved_ms = now;
		r->stalled = 0;
	}
	r->sctp_held = held;
	uint64_t since = r->moved_ms > r->busy_ms ? r->moved_ms : r->busy_ms;
	if (r->stalled || !r->ever_up || now - since < 250 + 4 * (uint64_t)r->srtt_us / 1000)
		return; /* (an association still being set up is not stalled) */
	for (int i = 0; i < p->nrails; i++) {
		struct sctpt_rail_st *o = &p->rails[i];
		if (o != r && rail_usable(p, o) && o->moved_ms > since) {
			r->stalled = 1;
			p->rail_stalls++;
			rail_hand_over(p, r);
			return;
		}
	}
}

int sctpt_rail_place(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_rfrag *f)
{
	int tried[SCTPT_MAX_RAILS] = {0};
	uint64_t limit = UINT64_MAX; /* latest acceptable delivery, once the best rail is full */
	for (;;) {
		int best = -1;
		uint64_t bc = 0;
		for (int i = 0; i < p->nrails; i++) {
			struct sctpt_rail_st *r = &p->rails[i];
			if (tried[i] || !rail_usable(p, r))
				continue;
			uint64_t c = rail_cost(p, r, f->len);
			if (best < 0 || c < bc) {
				best = i;
				bc = c;
			}
		}
		if (best < 0 || bc > limit)
			return 0;
		struct sctpt_rail_st *r = &p->rails[best];
		tried[best] = 1;
		int rc = ep->be->send(ep, p, r, f->stream, f->data, f->len);
		if (rc == -EAGAIN) {
			/* SCTP's buffer for the best rail is full: another rail only if it delivers
			 * no later than the best would once it has room for one more fragment. A
			 * slow rail given what a fast one cannot take yet delivers it later (it
			 * holds megabytes at a fraction of the rate) and holds up the messages. */
			if (limit == UINT64_MAX)
				limit = bc + f->len * 1000000u / rail_rate(p, r);
			continue;
		}
		if (rc < 0) {
			rail_fail(p, r); /* its copies join p->resend, behind f's list if any */
			continue;
		}
		if (STAILQ_EMPTY(&r->copies))
			r->busy_ms = sctpt_now_ms(); /* the stall clock starts with work to do */
		STAILQ_INSERT_TAIL(&r->copies, f, link);
		r->held += f->len;
		r->frags_out++;
		r->frag_bytes_out += f->len;
		return 1;
	}
}

int sctpt_rail_resend(struct sctpt_ep *ep, struct sctpt_peer *p)
{
	int sent = 0;
	struct sctpt_rfrag *f;
	while ((f = STAILQ_FIRST(&p->resend))) {
		/* off the list before placing: a rail failing meanwhile appends its copies */
		STAILQ_REMOVE_HEAD(&p->resend, link);
		if (sctpt_rail_place(ep, p, f) <= 0) {
			STAILQ_INSERT_HEAD(&p->resend, f, link);
			break;
		}
		p->frags_resent++;
		sent++;
	}
	return sent;
}

/* SCTP holds `sctp` bytes of rail r: the oldest copies beyond those are acknowledged. */
static void rail_release(struct sctpt_ep *ep, struct sctpt_rail_st *r, uint64_t sctp)
{
	struct sctpt_rfragq acked = STAILQ_HEAD_INITIALIZER(acked);
	struct sctpt_rfrag *f;
	while ((f = STAILQ_FIRST(&r->copies)) && r->held - f->len >= sctp) {
		STAILQ_REMOVE_HEAD(&r->copies, link);
		r->held -= f->len;
		r->released += f->len;
		STAILQ_INSERT_TAIL(&acked, f, link);
	}
	sctpt_rfrags_put(ep, &acked);
}

/* Per progress pass for a striped peer: release acknowledged copies, measure rates and RTTs,
 * fail rails whose path went down, reconnect rails whose path came back, and give up on the
 * peer once no rail has worked for rto_max_ms * assoc_max_retrans. */
void sctpt_rails_tend(struct sctpt_ep *ep, struct sctpt_peer *p)
{
	uint64_t now = sctpt_now_ms();
	int live = 0;
	if (p->state != SCTPT_PEER_CONNECTING && p->state != SCTPT_PEER_UP)
		return;
	for (int i = 0; i < p->nrails; i++) {
		struct sctpt_rail_st *r = &p->rails[i];
		int path_up = atomic_load(&p->paths[i]->up);
		if (r->live && !path_up)
			rail_fail(p, r);
		if (!r->live) {
			if (!path_up || now - r->down_ms < 200)
				continue;
			if (r->assoc_out) { /* its association outlived the outage: use it again */
				r->live = 1;
				p->rail_reconnects++;
			} else if (ep->be->rail_connect(ep, p, r) != 0) {
				r->down_ms = now;
			} else {
				p->rail_reconnects++;
			}
			continue;
		}
		live++;
		int64_t held = ep->be->rail_held(ep, r);
		if (now - r->info_ms >= 100) {
			ep->be->rail_info(ep, p, r);
			r->info_ms = now;
		}
		if (held >= 0) {
			uint64_t before = r->released;
			rail_release(ep, r, (uint64_t)held);
			if (r->released != before)
				r->moved_ms = now;
			rail_check_stall(p, r, (uint64_t)held, now);
		}
		uint64_t dt = now - r->rate_ms;
		if (dt >= 100) {
			if (r->released && r->rate_ms) {
				uint64_t sample = r->released * 1000u / dt;
				r->rate = r->rate ? (3 * r->rate + sample) / 4 : sample;
			}
			r->released = 0;
			r->rate_ms = now;
		}
	}
	uint64_t limit = (uint64_t)ep->cfg.rto_max_ms * (uint64_t)ep->cfg.assoc_max_retrans;
	if (live)
		p->all_down_ms = 0;
	else if (!p->all_down_ms)
		p->all_down_ms = now;
	else if (now - p->all_down_ms > limit)
		sctpt_peer_fail(ep, p, -ETIMEDOUT);
}

void sctpt_on_rail(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_rail_st *r, int in,
		   enum sctpt_event_type t)
{
	char what[SCTPT_CARD_MAX + 32];
	if (in) {
		if (t == SCTPT_EV_ASSOC_DOWN)
			r->assoc_in = 0;
		return;
	}
	if (t == SCTPT_EV_ASSOC_DOWN) {
		r->assoc_out = 0; /* gone already: nothing to abort */
		/* after our CLOSE, a peer that closed first aborts its rails: that is the end,
		 * not a failure to re-send on other rails */
		if (p->close_sent && p->state != SCTPT_PEER_FAILED)
			p->state = SCTPT_PEER_CLOSED;
		rail_fail(p, r);
		return;
	}
	r->ever_up = 1;
	if (p->state == SCTPT_PEER_CONNECTING || p->state == SCTPT_PEER_IDLE) {
		p->state = SCTPT_PEER_UP;
		snprintf(what, sizeof(what), "peer %s up", p->card);
		sctpt_cq_event(ep, SCTPT_EV_ASSOC_UP, p, 0, -1, what);
	}
}

/* ---- the receiver's side: duplicates ---- */

static int seen_has(const struct sctpt_seen *s, uint32_t id)
{
	if ((int32_t)(id - s->low) < 0)
		return 1;
	for (uint32_t i = 0; i < s->n; i++)
		if (s->ids[i] == id)
			return 1;
	return 0;
}

static uint32_t seen_next(uint32_t id)
{
	return id + 1 ? id + 1 : 1;
}

int sctpt_seen_add(struct sctpt_seen *s, uint32_t id)
{
	if (id == s->low) {
		s->low = seen_next(s->low);
		uint32_t k = 0;
		while (k < s->n && s->ids[k] == s->low) {
			s->low = seen_next(s->low);
			k++;
		}
		if (k) {
			memmove(s->ids, s->ids + k, (s->n - k) * sizeof(*s->ids));
			s->n -= k;
		}
		return 0;
	}
	if (s->n == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 16;
		uint32_t *ids = realloc(s->ids, cap * sizeof(*ids));
		if (!ids)
			return -ENOMEM;
		s->ids = ids;
		s->cap = cap;
	}
	uint32_t i = s->n;
	while (i > 0 && (int32_t)(s->ids[i - 1] - id) > 0) {
		s->ids[i] = s->ids[i - 1];
		i--;
	}
	s->ids[i] = id;
	s->n++;
	return 0;
}

int sctpt_rail_dup(struct sctpt_peer *p, const struct sctpt_hdr *h)
{
	if (h->flags & SCTPT_F_UNORDERED)
		return (h->flags & SCTPT_F_MSGID) && seen_has(&p->seen, h->seq);
	struct sctpt_order_ctx *oc = sctpt_order_get(&p->order, h->context);
	return oc && sctpt_order_classify(oc, h->seq) == SCTPT_ORDER_BAD;
}
