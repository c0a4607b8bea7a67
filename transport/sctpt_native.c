/*
 * The native SCTP engine (struct sctpt_backend "native"): RFC 9260 over the UDP layer
 * (RFC 6951), wire-compatible with the usrsctp engine. Each core peer has our association to
 * it (sent on, from SCTP port 5000 to the peer's receive port) and the peer's to us (received
 * on, port 5001), and a rail's pair each for striped peers, as the usrsctp engine does; the
 * physical path under each stays the core's (sctpt_sel).
 *
 * Selected by cfg.backend = "native" (or SCTPT_BACKEND=native for every endpoint of a
 * process). I-DATA (RFC 8260) is offered and used when the peer lists it too (usrsctp as the
 * core configures it does not: DATA then); SCTPT_NATIVE_IDATA=0 stops offering it. Unlike
 * usrsctp, crc32c, cmt and streams may differ between endpoints of one process. Diagnostics:
 * SCTPE_STATS=1 prints the engine's counters (hostile input included) when an endpoint
 * closes, SCTPE_DEBUG=1 says why associations end and when T3-rtx fires.
 *
 * The engine's files: sctpe_proto.h (wire format), sctpe_packet.[ch] (parser, builder),
 * sctpe_crc32c.[ch], sctpe_ep.c (endpoint, demultiplexing, events), sctpe_assoc.c (state
 * machine, handshake, cookie, heartbeats, shutdown), sctpe_stream.c (what arrives), sctpe_out.c
 * (what leaves, SACKs, retransmission), sctpe_tsn.[ch], sctpe_cc.[ch], sctpe_timer.[ch],
 * sctpe_sha256.[ch]; sctpe_int.h ties them together.
 */
#include "sctpe_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

static struct sctpe_ep *eng(struct sctpt_ep *ep)
{
	return ep->engine;
}

static struct sctpe_assoc *live(struct sctpe_assoc *a)
{
	return a && !a->dead ? a : NULL;
}

static int n_rail_connect(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_rail_st *r)
{
	struct sctpe_assoc **slot = sctpe_slot(eng(ep), p, r->index, 0);
	if (!slot)
		return sctpt_err(-ENOMEM, "peer %s: out of memory", p->card);
	if (live(*slot)) { /* still there: take it up again */
		r->assoc_out = (*slot)->id;
		r->live = 1;
		return 0;
	}
	struct sctpe_assoc *a = sctpe_assoc_new(eng(ep), p, r->index, 0);
	if (!a)
		return sctpt_err(-ENOMEM, "peer %s: out of memory for rail %d", p->card, r->index);
	*slot = a;
	r->assoc_out = a->id;
	r->live = 1;
	return sctpe_assoc_connect(a);
}

static int n_connect(struct sctpt_ep *ep, struct sctpt_peer *p)
{
	if (p->anonymous || p->npaths == 0)
		return sctpt_err(-EHOSTUNREACH, "peer %s: no business card, cannot connect to it",
				 p->card);
	if (p->nrails) {
		int ok = 0, rc = 0;
		for (int i = 0; i < p->nrails; i++) {
			int e = n_rail_connect(ep, p, &p->rails[i]);
			ok += e == 0;
			rc = e ? e : rc;
		}
		return ok ? 0 : rc;
	}
	struct sctpe_assoc **slot = sctpe_slot(eng(ep), p, -1, 0);
	if (!slot)
		return sctpt_err(-ENOMEM, "peer %s: out of memory", p->card);
	if (live(*slot)) {
		p->assoc_out = (*slot)->id;
		return 0;
	}
	/* start on the path the peer was last heard on, if it has talked to us */
	if (p->assoc_in)
		atomic_store(&p->sel_out.cur, atomic_load(&p->mirror.cur));
	struct sctpe_assoc *a = sctpe_assoc_new(eng(ep), p, -1, 0);
	if (!a)
		return sctpt_err(-ENOMEM, "peer %s: out of memory for an association", p->card);
	*slot = a;
	p->assoc_out = a->id;
	return sctpe_assoc_connect(a);
}

static void n_forget(struct sctpt_ep *ep, struct sctpt_peer *p)
{
	(void)ep, (void)p; /* associations live until they end or the endpoint closes */
}

static int n_send(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_rail_st *r,
		  uint16_t stream, const void *buf, size_t len)
{
	struct sctpe_assoc **slot = sctpe_slot(eng(ep), p, r ? r->index : -1, 0);
	struct sctpe_assoc *a = slot ? live(*slot) : NULL;
	if (!a)
		return sctpt_err(-EPIPE, "peer %s: no association to send on", p->card);
	return sctpe_out_queue(a, stream, buf, len);
}

static void *n_send_buf(struct sctpt_ep *ep, struct sctpt_peer *p, size_t len, int *full)
{
	struct sctpe_assoc **slot = sctpe_slot(eng(ep), p, -1, 0);
	struct sctpe_assoc *a = slot ? live(*slot) : NULL;
	*full = 0;
	return a ? sctpe_out_stage(a, len, full) : NULL;
}

static int n_recv(struct sctpt_ep *ep, void *buf, size_t len, struct sctpt_peer **peer,
		  uint16_t *stream, int *eor)
{
	return sctpe_recv(eng(ep), buf, len, peer, stream, eor);
}

static struct sctpe_assoc *by_id(struct sctpe_ep *e, uint32_t id)
{
	struct sctpe_assoc *a;
	TAILQ_FOREACH(a, &e->all, link)
		if (a->id == id && !a->dead)
			return a;
	return NULL;
}

static int64_t n_rail_held(struct sctpt_ep *ep, struct sctpt_rail_st *r)
{
	struct sctpe_assoc *a = r->assoc_out ? by_id(eng(ep), r->assoc_out) : NULL;
	return a ? (int64_t)a->held_bytes : -1;
}

static void n_rail_info(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_rail_st *r)
{
	(void)p;
	struct sctpe_assoc *a = r->assoc_out ? by_id(eng(ep), r->assoc_out) : NULL;
	if (a) {
		r->srtt_us = a->cc.srtt_us;
		r->cwnd = a->cc.cwnd;
	}
}

static int n_unacked(struct sctpt_ep *ep)
{
	struct sctpe_ep *e = eng(ep);
	struct sctpe_assoc *a;
	int n = 0;
	TAILQ_FOREACH(a, &e->all, link) {
		struct sctpt_peer *p = a->peer;
		if (a->in || a->dead || p->state == SCTPT_PEER_FAILED ||
		    p->state == SCTPT_PEER_CLOSED)
			continue;
		n += (int)sctpe_out_inflight(a);
	}
	for (int i = 0; i < ep->npeers; i++) {
		struct sctpt_peer *p = ep->peers[i];
		if (p->state == SCTPT_PEER_FAILED || p->state == SCTPT_PEER_CLOSED)
			continue;
		for (int k = 0; k < p->nrails; k++)
			if (p->rails[k].live && !STAILQ_EMPTY(&p->rails[k].copies))
				n++;
	}
	return n;
}

static int n_peer_stats(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_peer_stats *st)
{
	struct sctpe_ep *e = eng(ep);
	int rail = p->nrails ? 0 : -1;
	struct sctpe_assoc **so = sctpe_slot(e, p, rail, 0), **si = sctpe_slot(e, p, rail, 1);
	struct sctpe_assoc *o = so ? live(*so) : NULL, *in = si ? live(*si) : NULL;
	if (o) {
		st->sctp_state = o->state;
		st->sctp_rwnd = o->peer_rwnd;
		st->sctp_unacked = o->next_tsn - 1 - o->cum;
		st->sctp_pending = o->queued_msgs;
		st->sctp_rto_ms = o->cc.rto_ms;
		st->sctp_cwnd = o->cc.cwnd;
	}
	if (in) {
		st->sctp_in_rwnd = sctpe_in_rwnd(in);
		st->sctp_in_unacked = in->next_tsn - 1 - in->cum;
		st->sctp_in_pending = (uint32_t)in->rx_queued;
	}
	st->npaths = p->npaths;
	for (int i = 0; i < p->npaths; i++) {
		struct sctpt_path *path = p->paths[i];
		struct sctpt_path_stats *ps = &st->paths[i];
		char a[INET_ADDRSTRLEN];
		inet_ntop(AF_INET, &ep->udp[path->local].addr.sin_addr, a, sizeof(a));
		snprintf(ps->local, sizeof(ps->local), "%s:%u", a, ep->udp_port);
		inet_ntop(AF_INET, &path->remote.sin_addr, a, sizeof(a));
		snprintf(ps->remote, sizeof(ps->remote), "%s:%u", a, ntohs(path->remote.sin_port));
		ps->up = atomic_load(&path->up);
		ps->packets_out = atomic_load(&path->pkts_out);
		ps->bytes_out = atomic_load(&path->bytes_out);
		ps->packets_in = atomic_load(&path->pkts_in);
		ps->bytes_in = atomic_load(&path->bytes_in);
		if (p->nrails) {
			struct sctpt_rail_st *r = &p->rails[i];
			struct sctpe_assoc **rs = sctpe_slot(e, p, i, 0);
			struct sctpe_assoc *ra = rs ? live(*rs) : NULL;
			ps->up = ps->up && r->live;
			ps->primary = i == 0;
			ps->rtt_us = ra ? ra->cc.srtt_us : 0;
			ps->cwnd = ra ? ra->cc.cwnd : 0;
			ps->frags_out = r->frags_out;
			ps->frag_bytes_out = r->frag_bytes_out;
			ps->unacked_bytes = r->held;
			ps->rate_bps = r->rate;
			continue;
		}
		ps->primary = atomic_load(&p->sel_out.cur) == i;
		if (ps->primary && o) {
			ps->rtt_us = o->cc.srtt_us;
			ps->cwnd = o->cc.cwnd;
		}
	}
	return 0;
}

const struct sctpt_backend sctpt_backend_native = {
	.name = "native",
	/* a queued message's pooled buffer holds its record too */
	.max_msg = SCTPE_MAX_MSG - sizeof(struct sctpe_omsg),
	.pkt_overhead = SCTPE_COMMON_LEN + SCTPE_IDATA_HDR_LEN,
	.open = sctpe_ep_open,
	.close = sctpe_ep_close,
	.connect = n_connect,
	.rail_connect = n_rail_connect,
	.forget = n_forget,
	.send_buf = n_send_buf,
	.send = n_send,
	.tx_begin = sctpe_ep_tx_begin,
	.tx_end = sctpe_ep_tx_end,
	.input = sctpe_ep_input,
	.events = sctpe_ep_events,
	.recv = n_recv,
	.rail_held = n_rail_held,
	.rail_info = n_rail_info,
	.unacked = n_unacked,
	.peer_stats = n_peer_stats,
	.wait = sctpe_ep_wait,
	.keep = sctpe_ep_keep,
};
