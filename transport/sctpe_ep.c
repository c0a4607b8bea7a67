/*
 * The native engine's endpoint: buffer pools, the clock and random numbers, the association
 * slots of each core peer, packets in (checksum, port, association, tag), the batch of
 * associations waiting to transmit, and the events reported to the core once what arrived
 * before them is read.
 */
#include "sctpe_int.h"

#include "sctpe_crc32c.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

const uint32_t sctpe_class_size[SCTPE_NCLASS] = {512, 2048, 16384, SCTPE_MAX_MSG};

int sctpe_class_of(size_t len)
{
	for (int i = 0; i < SCTPE_NCLASS; i++)
		if (len <= sctpe_class_size[i])
			return i;
	return -1;
}

void *sctpe_buf_get(struct sctpt_pool *pools, size_t len, uint8_t *cls)
{
	int k = sctpe_class_of(len);
	if (k < 0)
		return NULL;
	*cls = (uint8_t)k;
	return sctpt_pool_get(&pools[k]);
}

void sctpe_buf_put(struct sctpt_pool *pools, void *b, uint8_t cls)
{
	sctpt_pool_put(&pools[cls], b);
}

uint64_t sctpe_clock_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

uint32_t sctpe_random32(struct sctpe_ep *e)
{
	/* xorshift64*, seeded from the kernel: tags and TSNs need to be unguessable off-path
	 * more than they need to be cryptographic; the cookie's key comes from getrandom */
	uint64_t x = e->rng;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	e->rng = x;
	return (uint32_t)((x * 0x2545f4914f6cdd1dull) >> 32);
}

struct sctpe_assoc **sctpe_slot(struct sctpe_ep *e, struct sctpt_peer *p, int rail, int in)
{
	if (p->id >= e->nps) {
		int n = p->id + 16;
		struct sctpe_pslot *ps = realloc(e->ps, (size_t)n * sizeof(*ps));
		if (!ps)
			return NULL;
		memset(ps + e->nps, 0, (size_t)(n - e->nps) * sizeof(*ps));
		e->ps = ps;
		e->nps = n;
	}
	struct sctpe_pslot *s = &e->ps[p->id];
	if (rail >= 0)
		return rail < SCTPT_MAX_RAILS ? (in ? &s->rin[rail] : &s->rout[rail]) : NULL;
	return in ? &s->in : &s->out;
}

static void deliver(struct sctpt_ep *ep, struct sctpt_peer *p, int pi, const uint8_t *pkt,
		    size_t len);

void sctpe_send(struct sctpe_ep *e, struct sctpt_sel *sel, const uint8_t *pkt, size_t len)
{
	e->st.pkts_out++;
	if (e->tap)
		e->tap(e->tap_arg, sel, pkt, len);
	else
		sctpt_udp_output(sel, pkt, len);
}

void sctpe_output(struct sctpe_assoc *a, const uint8_t *pkt, size_t len)
{
	sctpe_send(a->e, a->sel, pkt, len);
}

void sctpe_set_tap(struct sctpt_ep *ep, sctpe_tap_fn fn, void *arg)
{
	struct sctpe_ep *e = ep->engine;
	e->tap = fn;
	e->tap_arg = arg;
}

int sctpe_inject(struct sctpt_ep *ep, sctpt_peer_t id, int path, const uint8_t *pkt, size_t len)
{
	sctpt_lock(ep);
	struct sctpt_peer *p = sctpt_peer_get(ep, id);
	if (!p || !ep->engine || path < 0 || path >= p->npaths) {
		sctpt_unlock(ep);
		return -EINVAL;
	}
	sctpe_ep_tx_begin(ep);
	deliver(ep, p, path, pkt, len);
	sctpe_ep_tx_end(ep);
	sctpt_unlock(ep);
	return 0;
}

/*
 * Whether a's SACK, which nothing else goes with, waits for the next batch: one that packets
 * in order made due in this turn waits for the caller's reply to what just arrived (or the
 * next progress, or the wait before sleeping), unless that reply leaves in this batch. Each
 * direction of a conversation is its own association: a SACK can never ride on the reply as
 * TCP's ACK does, but it can leave with it, in the same send (sctpt_udp batches both).
 */
static int sack_waits(struct sctpe_ep *e, struct sctpe_assoc *a)
{
	if (!e->defer_sacks || !a->sack_due || !a->sack_fresh || !a->peer)
		return 0;
	struct sctpe_assoc **mate = sctpe_slot(e, a->peer, a->rail, !a->in);
	if (mate && *mate && (*mate)->flush_gen == e->flush_gen)
		return 0;
	a->sack_deferred = 1;
	return 1;
}

/* Everything waiting goes out, data first, but for SACKs that wait (sack_waits). */
static void flush_all(struct sctpe_ep *e)
{
	struct sctpe_assoc *a;
	struct sctpe_assocq keep = TAILQ_HEAD_INITIALIZER(keep), last = TAILQ_HEAD_INITIALIZER(last);
	e->flush_gen++;
	while ((a = TAILQ_FIRST(&e->flush))) {
		TAILQ_REMOVE(&e->flush, a, flink);
		if (!TAILQ_FIRST(&a->active) && !a->rtx_chunks) {
			/* after the data: the batch sends its slots in order */
			TAILQ_INSERT_TAIL(&last, a, flink);
			continue;
		}
		a->sack_fresh = 0;
		a->flush_gen = e->flush_gen;
		a->on_flush = 0;
		sctpe_out_flush(a);
	}
	while ((a = TAILQ_FIRST(&last))) {
		TAILQ_REMOVE(&last, a, flink);
		int wait = sack_waits(e, a);
		a->sack_fresh = 0;
		if (wait) {
			TAILQ_INSERT_TAIL(&keep, a, flink);
			continue;
		}
		a->on_flush = 0;
		sctpe_out_flush(a);
	}
	TAILQ_CONCAT(&e->flush, &keep, flink);
}

void sctpe_want_flush(struct sctpe_assoc *a)
{
	struct sctpe_ep *e = a->e;
	if (a->dead)
		return;
	if (!a->on_flush) {
		a->on_flush = 1;
		TAILQ_INSERT_TAIL(&e->flush, a, flink);
	}
	if (e->tx_depth == 0)
		flush_all(e);
}

void sctpe_want_event(struct sctpe_assoc *a, int ev, int err)
{
	a->events |= ev;
	if (ev & SCTPE_EV_DOWN)
		a->down_err = err;
	if (!a->on_events) {
		a->on_events = 1;
		TAILQ_INSERT_TAIL(&a->e->events, a, elink);
	}
}

void sctpe_stats_print(const struct sctpe_ep *e, FILE *f)
{
	const struct sctpe_stats *s = &e->st;
	fprintf(f, "sctpe %d: pkts in %llu out %llu, bad csum %llu, bad vtag %llu, ootb %llu, "
		"malformed %llu, bad cookie %llu, stale cookie %llu, unknown chunks %llu, aborts in "
		"%llu out %llu, rtx t3 %llu fast %llu, sacks in %llu out %llu, dup tsns %llu, dropped "
		"%llu, bad sacks %llu, placed %llu, timeouts undone %llu; new data held by cwnd %llu, "
		"peer window %llu, local queue %llu, send limit %llu\n", (int)getpid(),
		(unsigned long long)s->pkts_in, (unsigned long long)s->pkts_out,
		(unsigned long long)s->bad_csum, (unsigned long long)s->bad_vtag,
		(unsigned long long)s->ootb, (unsigned long long)s->malformed,
		(unsigned long long)s->bad_cookie, (unsigned long long)s->stale_cookie,
		(unsigned long long)s->unknown_chunks, (unsigned long long)s->aborts_in,
		(unsigned long long)s->aborts_out, (unsigned long long)s->rtx_t3,
		(unsigned long long)s->rtx_fast, (unsigned long long)s->sacks_in,
		(unsigned long long)s->sacks_out, (unsigned long long)s->dup_tsns,
		(unsigned long long)s->dropped_window, (unsigned long long)s->bad_sacks,
		(unsigned long long)s->placed, (unsigned long long)s->rtx_undone,
		(unsigned long long)s->stop_cwnd, (unsigned long long)s->stop_rwnd,
		(unsigned long long)s->stop_localq, (unsigned long long)s->stop_limit);
	const struct sctpe_assoc *a;
	TAILQ_FOREACH(a, &e->all, link)
		sctpe_assoc_print(a, f);
}

void sctpe_assoc_print(const struct sctpe_assoc *a, FILE *f)
{
	fprintf(f, "  %s association %u%s: cwnd %u ssthresh %u srtt %u us, min rtt %u us, rate "
		"%llu B/s, send limit %zu\n", a->in ? "in" : "out", a->id, a->dead ? " (ended)" : "",
		a->cc.cwnd, a->cc.ssthresh, a->cc.srtt_us, a->min_rtt_us,
		(unsigned long long)a->rate, sctpe_out_limit(a));
}

/* ---- opening and closing ---- */

int sctpe_ep_open(struct sctpt_ep *ep)
{
	struct sctpe_ep *e = calloc(1, sizeof(*e));
	if (!e)
		return sctpt_err(-ENOMEM, "out of memory for the SCTP engine");
	for (int i = 0; i < SCTPT_MAX_ADDRS; i++)
		ep->udp[i].fd = -1;
	int rc = sctpt_udp_open(ep);
	if (rc) {
		sctpt_udp_close(ep);
		free(e);
		return rc;
	}
	if (getrandom(e->secret, sizeof(e->secret), 0) != (ssize_t)sizeof(e->secret) ||
	    getrandom(&e->rng, sizeof(e->rng), 0) != (ssize_t)sizeof(e->rng)) {
		sctpt_udp_close(ep);
		free(e);
		return sctpt_err(-EIO, "no random numbers for the SCTP engine's keys");
	}
	e->rng |= 1;
	e->ep = ep;
	e->crc = ep->cfg.crc32c != 0;
	e->debug = getenv("SCTPE_DEBUG") != NULL;
	const char *pl = getenv("SCTPT_NATIVE_PLACE"); /* 0: every message queued whole first */
	e->place = !pl || strcmp(pl, "0") != 0;
	e->cookie_life_ms = SCTPE_VALID_COOKIE_LIFE_MS;
	e->defer_sacks = !getenv("SCTPE_NO_DEFER");
	const char *lq = getenv("SCTPE_LOCALQ");
	e->localq = lq && *lq ? strtoul(lq, NULL, 0) : 0;

	TAILQ_INIT(&e->all);
	TAILQ_INIT(&e->flush);
	TAILQ_INIT(&e->events);
	TAILQ_INIT(&e->fifo);
	for (int k = 0; k < SCTPE_NCLASS; k++) {
		/* what a window's worth of buffers of each class needs, kept */
		int keep = (int)(ep->cfg.rcvbuf / sctpe_class_size[k]) + 16;
		sctpt_pool_init(&e->rpool[k], sctpe_class_size[k], keep > 4096 ? 4096 : keep);
		sctpt_pool_init(&e->opool[k], sctpe_class_size[k], keep > 4096 ? 4096 : keep);
	}
	sctpe_wheel_init(&e->wheel, sctpt_now_ms());
	ep->engine = e;
	ep->sport = SCTPE_SPORT;
	ep->rport = SCTPE_RPORT;
	return 0;
}

void sctpe_ep_close(struct sctpt_ep *ep)
{
	struct sctpe_ep *e = ep->engine;
	struct sctpe_assoc *a;
	if (!e)
		return;
	if (getenv("SCTPE_STATS"))
		sctpe_stats_print(e, stderr);
	/* abort what is up, as the usrsctp engine does: the core waited for its data */
	e->tx_depth++;
	sctpt_udp_tx_begin();
	TAILQ_FOREACH(a, &e->all, link)
		if (!a->dead && a->state >= SCTPE_COOKIE_ECHOED)
			sctpe_assoc_abort(a, SCTPE_E_USER_ABORT, "endpoint closed", 0);
	sctpt_udp_tx_end();
	e->tx_depth--;
	while ((a = TAILQ_FIRST(&e->all)))
		sctpe_assoc_free(a);
	sctpt_udp_close(ep);
	for (int k = 0; k < SCTPE_NCLASS; k++) {
		sctpt_pool_fini(&e->rpool[k]);
		sctpt_pool_fini(&e->opool[k]);
	}
	free(e->ps);
	free(e);
	ep->engine = NULL;
}

/* ---- packets in ---- */

static void deliver(struct sctpt_ep *ep, struct sctpt_peer *p, int pi, const uint8_t *pkt,
		    size_t len)
{
	struct sctpe_ep *e = ep->engine;
	struct sctpe_hdr h;
	struct sctpe_iter it;
	e->st.pkts_in++;
	if (sctpe_packet_parse(pkt, len, &h, &it) != 0) {
		e->st.malformed++;
		return;
	}
	if (e->crc && sctpe_crc32c_check(pkt, len) != 0) {
		e->st.bad_csum++; /* 6.8: dropped silently */
		return;
	}
	int in = h.dport == SCTPE_RPORT;
	if (!in && h.dport != SCTPE_SPORT) {
		e->st.ootb++; /* no such port here */
		return;
	}
	int rail = -1;
	if (p->nrails) {
		if (pi < 0 || pi >= p->nrails)
			return;
		rail = pi; /* rail i is path i */
	} else if (in) {
		/* the peer's association is answered on the path it was last heard on */
		atomic_store_explicit(&p->mirror.cur, pi, memory_order_relaxed);
	}
	struct sctpe_chunk c;
	int first = sctpe_chunk_next(&it, &c) == 1 ? c.type : -1;
	struct sctpe_assoc **slot = sctpe_slot(e, p, rail, in);
	if (!slot)
		return;
	if ((in && (first == SCTPE_INIT || first == SCTPE_COOKIE_ECHO)) || !*slot)
		sctpe_ep_input_noassoc(e, p, rail, in, &h, pkt, len);
	else
		sctpe_assoc_input(*slot, &h, pkt, len);
}

int sctpe_ep_input(struct sctpt_ep *ep)
{
	struct sctpe_ep *e = ep->engine;
	e->tx_depth++;
	sctpt_udp_tx_begin();
	e->in_input = 1;
	int n = sctpt_udp_input(ep, deliver);
	e->in_input = 0;
	/* timers after the input: a SACK waiting in the socket stops T3-rtx first */
	n += sctpe_wheel_run(&e->wheel, sctpt_now_ms());
	if (--e->tx_depth == 0)
		flush_all(e);
	sctpt_udp_tx_end();
	return n;
}

int sctpe_ep_keep(struct sctpt_ep *ep)
{
	struct sctpe_ep *e = ep->engine;
	/* no buffer asked of a handler; SACKs at once, there is no reply to ride on */
	int place = e->place, defer = e->defer_sacks;
	e->place = 0;
	e->defer_sacks = 0;
	int n = sctpe_ep_input(ep);
	e->place = place;
	e->defer_sacks = defer;
	return n;
}

int sctpe_ep_wait(struct sctpt_ep *ep, int timeout_ms)
{
	struct sctpe_ep *e = ep->engine;
	sctpt_lock(ep); /* the core waits without it */
	if (TAILQ_FIRST(&e->flush)) { /* SACKs kept for a reply that did not come: out now */
		int keep = e->defer_sacks;
		e->defer_sacks = 0;
		sctpe_ep_tx_begin(ep);
		sctpe_ep_tx_end(ep);
		e->defer_sacks = keep;
	}
	sctpt_unlock(ep);
	return sctpt_udp_wait(ep, timeout_ms);
}

void sctpe_ep_tx_begin(struct sctpt_ep *ep)
{
	struct sctpe_ep *e = ep->engine;
	e->tx_depth++;
	sctpt_udp_tx_begin();
}

void sctpe_ep_tx_end(struct sctpt_ep *ep)
{
	struct sctpe_ep *e = ep->engine;
	if (--e->tx_depth == 0)
		flush_all(e);
	sctpt_udp_tx_end();
}

/* ---- events ---- */

static void report(struct sctpe_ep *e, struct sctpe_assoc *a, enum sctpt_event_type t, int err)
{
	struct sctpt_ep *ep = e->ep;
	struct sctpt_peer *p = a->peer;
	if (a->rail >= 0) {
		struct sctpt_rail_st *r = &p->rails[a->rail];
		if (t == SCTPT_EV_ASSOC_UP && a->in)
			r->assoc_in = a->id;
		if (t == SCTPT_EV_ASSOC_RESTART)
			t = SCTPT_EV_ASSOC_UP;
		if (t == SCTPT_EV_ASSOC_DOWN && (a->in ? r->assoc_in : r->assoc_out) != a->id)
			return; /* not the rail's association any more */
		sctpt_on_rail(ep, p, r, a->in, t);
		return;
	}
	if (t == SCTPT_EV_ASSOC_UP && a->in)
		p->assoc_in = a->id;
	if (t == SCTPT_EV_ASSOC_DOWN && (a->in ? p->assoc_in : p->assoc_out) != a->id)
		return;
	sctpt_on_assoc(ep, p, t, err);
}

int sctpe_ep_events(struct sctpt_ep *ep)
{
	struct sctpe_ep *e = ep->engine;
	struct sctpe_assoc *a, *next;
	int n = 0;
	for (a = TAILQ_FIRST(&e->events); a; a = next) {
		next = TAILQ_NEXT(a, elink);
		int ev = a->events;
		a->events &= SCTPE_EV_DOWN;
		if (ev & SCTPE_EV_UP) {
			report(e, a, SCTPT_EV_ASSOC_UP, 0);
			n++;
		}
		if (ev & SCTPE_EV_RESTART) {
			report(e, a, SCTPT_EV_ASSOC_RESTART, 0);
			n++;
		}
		if ((ev & SCTPE_EV_DOWN) && a->rx_queued == 0) {
			a->events = 0;
			report(e, a, SCTPT_EV_ASSOC_DOWN, a->down_err);
			n++;
		}
		if (a->events == 0) {
			TAILQ_REMOVE(&e->events, a, elink);
			a->on_events = 0;
			if (a->dead && a->rx_queued == 0)
				sctpe_assoc_free(a); /* off every list: next stays valid */
		}
	}
	return n;
}
