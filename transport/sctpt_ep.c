/*
 * Endpoint: configuration, opening and closing, the engine (backend) beneath, free lists,
 * progress, statistics. Everything but completion dispatch runs under ep->lock.
 */
#include "sctpt_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/sm_err.h"

SM_LAST_ERROR_DEFINE(sctpt)

void sctpt_config_init(struct sctpt_config *c)
{
	memset(c, 0, sizeof(*c));
	c->streams = 16;
	c->frag_size = 64 * 1024;
	c->max_msg_size = 4ull << 30;
	c->rto_min_ms = 20;
	c->rto_max_ms = 1000;
	c->rto_initial_ms = 200;
	c->hb_interval_ms = 1000;
	c->path_max_retrans = 3;
	c->assoc_max_retrans = 8;
	c->sndbuf = 4u << 20;
	c->rcvbuf = 4u << 20;
	c->sack_delay_ms = 10;
	c->sack_freq = 2;
	c->stripe_small = 16 * 1024;
	c->handler.events = 1;
	/* the engine for every endpoint of the process, e.g. to run a test suite on another */
	const char *be = getenv("SCTPT_BACKEND");
	c->backend = be && *be ? be : NULL;
	c->shm = 1;
	c->shm_ring = 128 * 1024;
	c->shm_pull_min = 16 * 1024;
	c->shm_spin_us = 20;
	c->shm_lend = 1;
	const char *shm = getenv("SCTPT_SHM"); /* 0: every peer through the engine */
	if (shm && *shm)
		c->shm = atoi(shm);
	const char *keeper = getenv("SCTPT_KEEPER_MS");
	c->keeper_ms = keeper && *keeper ? atoi(keeper) : 50;
}

uint16_t sctpt_stream_default(uint32_t context, int32_t tag, uint16_t nstreams)
{
	if (nstreams <= 1)
		return 0;
	uint32_t h = context * 0x9e3779b1u ^ (uint32_t)tag * 0x85ebca6bu;
	h ^= h >> 15;
	h *= 0x2c1b3c6du;
	h ^= h >> 12;
	return (uint16_t)(1 + h % (uint32_t)(nstreams - 1));
}

uint64_t sctpt_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- backends ---- */

static pthread_mutex_t g_be_lock = PTHREAD_MUTEX_INITIALIZER;
/* The first is the default: our own engine; usrsctp stays selectable ("usrsctp"). */
static const struct sctpt_backend *g_backends[8] = {&sctpt_backend_native,
							&sctpt_backend_usrsctp};

int sctpt_backend_register(const struct sctpt_backend *be)
{
	int rc = -ENOSPC;
	pthread_mutex_lock(&g_be_lock);
	for (size_t i = 0; i < sizeof(g_backends) / sizeof(g_backends[0]); i++) {
		if (g_backends[i] == be || !g_backends[i]) {
			g_backends[i] = be;
			rc = 0;
			break;
		}
	}
	pthread_mutex_unlock(&g_be_lock);
	return rc;
}

static const struct sctpt_backend *backend_find(const char *name)
{
	const struct sctpt_backend *be = NULL;
	pthread_mutex_lock(&g_be_lock);
	for (size_t i = 0; i < sizeof(g_backends) / sizeof(g_backends[0]) && g_backends[i]; i++)
		if (!name || strcmp(name, g_backends[i]->name) == 0) {
			be = g_backends[i];
			break;
		}
	pthread_mutex_unlock(&g_be_lock);
	return be;
}

/* The test endpoint's engine: no sockets; it only receives what sctpt_rx_inject hands it. */
static int null_open(struct sctpt_ep *ep)
{
	ep->udp_port = ep->rport = 1;
	return 0;
}
static void null_close(struct sctpt_ep *ep)
{
	(void)ep;
}
static int null_connect(struct sctpt_ep *ep, struct sctpt_peer *p)
{
	(void)ep;
	(void)p;
	return sctpt_err(-ENOTCONN, "test endpoint cannot send");
}
static int null_rail_connect(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_rail_st *r)
{
	(void)r;
	return null_connect(ep, p);
}
static void null_forget(struct sctpt_ep *ep, struct sctpt_peer *p)
{
	(void)ep;
	(void)p;
}
static int null_send(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_rail_st *r,
		     uint16_t stream, const void *buf, size_t len)
{
	(void)ep, (void)p, (void)r, (void)stream, (void)buf, (void)len;
	return -ENOTCONN;
}
static void null_tx(struct sctpt_ep *ep)
{
	(void)ep;
}
static int null_input(struct sctpt_ep *ep)
{
	(void)ep;
	return 0;
}
static int null_recv(struct sctpt_ep *ep, void *buf, size_t len, struct sctpt_peer **peer,
		     uint16_t *stream, int *eor)
{
	(void)ep, (void)buf, (void)len, (void)peer, (void)stream, (void)eor;
	return -EAGAIN;
}
static int64_t null_rail_held(struct sctpt_ep *ep, struct sctpt_rail_st *r)
{
	(void)ep, (void)r;
	return -1;
}
static void null_rail_info(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_rail_st *r)
{
	(void)ep, (void)p, (void)r;
}
static int null_peer_stats(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_peer_stats *st)
{
	(void)ep;
	st->npaths = p->npaths;
	return 0;
}
static int null_wait(struct sctpt_ep *ep, int timeout_ms)
{
	(void)ep;
	struct timespec ts = {0, (timeout_ms < 0 || timeout_ms > 10 ? 10 : timeout_ms) * 1000000L};
	nanosleep(&ts, NULL);
	return 0;
}

static const struct sctpt_backend null_backend = {
	.name = "none",
	.open = null_open,
	.close = null_close,
	.connect = null_connect,
	.rail_connect = null_rail_connect,
	.forget = null_forget,
	.send = null_send,
	.tx_begin = null_tx,
	.tx_end = null_tx,
	.input = null_input,
	.events = null_input,
	.recv = null_recv,
	.rail_held = null_rail_held,
	.rail_info = null_rail_info,
	.unacked = null_input,
	.peer_stats = null_peer_stats,
	.wait = null_wait,
};

/* ---- free lists ---- */

void sctpt_pool_init(struct sctpt_pool *pool, size_t size, int keep)
{
	pool->free = NULL;
	pool->size = size < sizeof(void *) ? sizeof(void *) : size;
	pool->n = 0;
	pool->keep = keep;
}

void *sctpt_pool_get(struct sctpt_pool *pool)
{
	void *obj = pool->free;
	if (!obj)
		return malloc(pool->size);
	memcpy(&pool->free, obj, sizeof(void *));
	pool->n--;
	return obj;
}

void sctpt_pool_put(struct sctpt_pool *pool, void *obj)
{
	if (pool->n >= pool->keep) {
		free(obj);
		return;
	}
	memcpy(obj, &pool->free, sizeof(void *));
	pool->free = obj;
	pool->n++;
}

void sctpt_pool_fini(struct sctpt_pool *pool)
{
	pool->keep = 0;
	while (pool->free) {
		void *obj = pool->free;
		memcpy(&pool->free, obj, sizeof(void *));
		free(obj);
	}
	pool->n = 0;
}

struct sctpt_txmsg *sctpt_txmsg_get(struct sctpt_ep *ep)
{
	struct sctpt_txmsg *m = sctpt_pool_get(&ep->tx_pool);
	if (m)
		memset(m, 0, sizeof(*m));
	return m;
}

void sctpt_txmsg_put(struct sctpt_ep *ep, struct sctpt_txmsg *m)
{
	sctpt_pool_put(&ep->tx_pool, m);
}

struct sctpt_rxbuf *sctpt_rxbuf_get(struct sctpt_ep *ep)
{
	return sctpt_pool_get(&ep->buf_pool);
}

void sctpt_rxbuf_put(struct sctpt_ep *ep, struct sctpt_rxbuf *b)
{
	sctpt_pool_put(&ep->buf_pool, b);
}

struct sctpt_rfrag *sctpt_rfrag_get(struct sctpt_ep *ep)
{
	return sctpt_pool_get(&ep->frag_pool);
}

void sctpt_rfrags_put(struct sctpt_ep *ep, struct sctpt_rfragq *q)
{
	struct sctpt_rfrag *f;
	while ((f = STAILQ_FIRST(q))) {
		STAILQ_REMOVE_HEAD(q, link);
		sctpt_pool_put(&ep->frag_pool, f);
	}
}

/*
 * Buffers of messages above the staging buffers' size, kept for the next such message up to
 * cfg.rcvbuf bytes. Freed one by one, a window of them would make the heap grow and shrink
 * by its size at every turn (glibc serves blocks below its mmap threshold, 128 KiB at
 * first, from the top of the heap and gives the top back above 128 KiB free), at a page
 * fault per page each time.
 */
struct sctpt_msgbuf {
	struct sctpt_msgbuf *next;
	size_t cap;
	uint8_t data[]; /* 16-byte aligned, as malloc's */
};
_Static_assert(offsetof(struct sctpt_msgbuf, data) % 16 == 0, "message buffers misaligned");

#define SCTPT_MSGBUF_KEEP 64 /* a short walk per message */

void *sctpt_msgbuf_get(struct sctpt_ep *ep, size_t len)
{
	struct sctpt_msgbuf **pp = &ep->msgbufs, *b;
	for (; (b = *pp); pp = &b->next)
		if (b->cap >= len && b->cap / 2 <= len) { /* at most twice the room needed */
			*pp = b->next;
			ep->nmsgbufs--;
			ep->msgbuf_bytes -= b->cap;
			return b->data;
		}
	size_t cap = (len + 4095) & ~(size_t)4095; /* near sizes share buffers */
	if (cap < len || !(b = malloc(sizeof(*b) + cap)))
		return NULL;
	b->cap = cap;
	return b->data;
}

void sctpt_msgbuf_put(struct sctpt_ep *ep, void *buf)
{
	if (!buf)
		return;
	struct sctpt_msgbuf *b = (void *)((uint8_t *)buf - offsetof(struct sctpt_msgbuf, data));
	if (ep->nmsgbufs >= SCTPT_MSGBUF_KEEP || ep->msgbuf_bytes + b->cap > ep->cfg.rcvbuf) {
		free(b);
		return;
	}
	b->next = ep->msgbufs;
	ep->msgbufs = b;
	ep->nmsgbufs++;
	ep->msgbuf_bytes += b->cap;
}

static void pools_fini(struct sctpt_ep *ep)
{
	sctpt_pool_fini(&ep->tx_pool);
	sctpt_pool_fini(&ep->buf_pool);
	sctpt_pool_fini(&ep->frag_pool);
	sctpt_pool_fini(&ep->cq_pool);
	while (ep->msgbufs) {
		struct sctpt_msgbuf *b = ep->msgbufs;
		ep->msgbufs = b->next;
		free(b);
	}
	ep->nmsgbufs = 0;
	ep->msgbuf_bytes = 0;
}

/* ---- opening ---- */

static int ep_open(const struct sctpt_config *cfg, struct sctpt_ep **out,
		   const struct sctpt_backend *be)
{
	struct sctpt_ep *ep;
	int rc;
	if (cfg->streams < 2 || cfg->streams > SCTPT_MAX_STREAMS || cfg->frag_size < SCTPT_MIN_FRAG ||
	    cfg->frag_size > SCTPT_MAX_FRAG)
		return sctpt_err(-EINVAL, "bad configuration: need 2..%d streams and a fragment "
				 "size of 512 B..1 MiB", SCTPT_MAX_STREAMS);
	if (!be && !(be = backend_find(cfg->backend)))
		return sctpt_err(-ENOENT, "no SCTP backend \"%s\"", cfg->backend);
	if (be->max_msg && cfg->frag_size + SCTPT_HDR_LEN > be->max_msg)
		return sctpt_err(-EINVAL, "bad configuration: the %s backend carries fragments of "
				 "%zu B at most", be->name, be->max_msg - SCTPT_HDR_LEN);
	if (!(ep = calloc(1, sizeof(*ep))))
		return sctpt_err(-ENOMEM, "out of memory for the endpoint");
	ep->cfg = *cfg;
	ep->be = be;
	ep->wait_fd = -1;
	pthread_mutex_init(&ep->lock, NULL);
	STAILQ_INIT(&ep->done);
	ep->handlers[0].h = cfg->handler;
	ep->handlers[0].h.lo = 0;
	ep->handlers[0].h.hi = UINT32_MAX;
	STAILQ_INIT(&ep->handlers[0].polled);
	ep->handlers[0].used = 1;
	ep->handlers_end = 1;
	ep->handlers_lo = UINT32_MAX; /* UINT32_MAX itself is searched for: found in none */
	rc = sctpt_local_addrs(cfg, ep->udp, SCTPT_MAX_ADDRS);
	if (rc < 0)
		goto fail;
	ep->nudp = rc;
	ep->mtu = cfg->path_mtu;
	if (!ep->mtu) {
		int m = 65535;
		for (int i = 0; i < ep->nudp; i++)
			if (ep->udp[i].mtu < m)
				m = ep->udp[i].mtu;
		ep->mtu = m >= 65535 ? 64000 : (uint32_t)(m - 28); /* room for IPv4 + UDP headers */
	}
	ep->buf_len = cfg->frag_size + SCTPT_HDR_LEN;
	ep->tx_frag = cfg->frag_size;
	if (be->pkt_overhead && ep->mtu > be->pkt_overhead + SCTPT_MIN_FRAG) {
		/* a fragment a little above whole packets costs a packet for its last bytes
		 * (messages that fit cfg.frag_size still go whole: sctpt_send.c) */
		size_t per = ep->mtu - be->pkt_overhead, whole = ep->buf_len / per * per;
		if (whole >= SCTPT_MIN_FRAG + SCTPT_HDR_LEN)
			ep->tx_frag = whole - SCTPT_HDR_LEN;
	}
	/* staging buffers are large: fewer of them are kept, but enough for the socket's
	 * receive buffer of whole messages, which one input pass may hand to handlers at once
	 * (fewer, and each window would make the heap grow and shrink: sctpt_msgbuf_put) */
	sctpt_pool_init(&ep->tx_pool, sizeof(struct sctpt_txmsg), 256);
	sctpt_pool_init(&ep->buf_pool, sizeof(struct sctpt_rxbuf) + ep->buf_len,
			32 + (int)(ep->cfg.rcvbuf / ep->buf_len));
	sctpt_pool_init(&ep->frag_pool, sizeof(struct sctpt_rfrag) + ep->buf_len, 256);
	sctpt_pool_init(&ep->cq_pool, sizeof(struct sctpt_cqent), 256);
	ep->stage = sctpt_rxbuf_get(ep);
	ep->txbuf = malloc(ep->buf_len);
	if (!ep->stage || !ep->txbuf) {
		rc = sctpt_err(-ENOMEM, "out of memory for staging buffers");
		goto fail;
	}
	if ((rc = be->open(ep)) != 0)
		goto fail;
	if (be != &null_backend)
		sctpt_shm_open(ep);
	if ((rc = sctpt_keeper_start(ep)) != 0) {
		sctpt_shm_fini(ep);
		be->close(ep);
		goto fail;
	}
	struct sctpt_card_info ci = {.udp_port = ep->udp_port, .sctp_port = ep->rport};
	for (int i = 0; i < ep->nudp; i++)
		ci.addrs[ci.naddrs++] = ep->udp[i].addr.sin_addr.s_addr;
	if (sctpt_shm_token(ep))
		snprintf(ci.shm, sizeof(ci.shm), "%s", sctpt_shm_token(ep));
	sctpt_card_format(&ci, ep->card, sizeof(ep->card));
	*out = ep;
	return 0;
fail:
	if (ep->stage)
		sctpt_rxbuf_put(ep, ep->stage);
	pools_fini(ep);
	free(ep->txbuf);
	pthread_mutex_destroy(&ep->lock);
	free(ep);
	return rc;
}

int sctpt_open(const struct sctpt_config *cfg, struct sctpt_ep **out)
{
	return ep_open(cfg, out, NULL);
}

int sctpt_open_nosock(const struct sctpt_config *cfg, struct sctpt_ep **out)
{
	return ep_open(cfg, out, &null_backend);
}

int sctpt_card(struct sctpt_ep *ep, char *buf, size_t len)
{
	size_t n = strlen(ep->card);
	if (n + 1 > len)
		return sctpt_err(-ENOSPC, "business card needs %zu bytes", n + 1);
	memcpy(buf, ep->card, n + 1);
	return (int)n;
}

uint16_t sctpt_streams(struct sctpt_ep *ep)
{
	return ep->cfg.streams;
}

/* ---- progress ---- */

static int progress_locked(struct sctpt_ep *ep, int engine)
{
	int n = 0;
	if (ep->shm)
		n += sctpt_shm_progress(ep);
	if (engine) {
		n += ep->be->input(ep);
		n += sctpt_receive(ep);
		n += ep->be->events(ep);
		sctpt_report_paths(ep);
	}
	if (ep->tx_peers || ep->rail_peers) {
		for (int i = 0; i < ep->npeers; i++) {
			struct sctpt_peer *p = ep->peers[i];
			if (p->nrails)
				sctpt_rails_tend(ep, p);
			if (!p->tx_queued && STAILQ_EMPTY(&p->resend))
				continue;
			int rc = sctpt_push_peer(ep, p, NULL, NULL);
			if (rc < 0)
				sctpt_peer_fail(ep, p, rc);
			else
				n += rc;
		}
	}
	return n + ep->npolled;
}

/* Nothing for a progress to do, seen without the lock (only same-host peers talk, their rings
 * are empty): a busy-polling caller does not take the lock, nor move its cache line, each
 * time round. What comes meanwhile is found by the next call. */
static int progress_idle(struct sctpt_ep *ep)
{
	return !__atomic_load_n(&ep->ndone, __ATOMIC_RELAXED) &&
	       !__atomic_load_n(&ep->nspent, __ATOMIC_RELAXED) &&
	       !__atomic_load_n(&ep->npolled, __ATOMIC_RELAXED) &&
	       !__atomic_load_n(&ep->tx_peers, __ATOMIC_RELAXED) &&
	       !__atomic_load_n(&ep->rail_peers, __ATOMIC_RELAXED) && sctpt_shm_quiet(ep);
}

/* Out of line: the idle check above needs no stack frame of this size. */
static __attribute__((noinline)) int progress_locking(struct sctpt_ep *ep)
{
	struct sctpt_cqbatch b;
	sctpt_lock(ep);
	/* while only same-host peers talk, the engine is looked at now and then */
	int engine = !ep->shm || sctpt_shm_engine_due(ep);
	if (engine)
		ep->be->tx_begin(ep);
	int n = progress_locked(ep, engine);
	if (engine)
		ep->be->tx_end(ep);
	sctpt_cq_take(ep, &b); /* in this lock hold: no second round trip to hand them out */
	sctpt_unlock(ep);
	return n + sctpt_cq_run(ep, &b);
}

int sctpt_progress(struct sctpt_ep *ep)
{
	/* the keeper's sign of life: racing threads may lose a count, never all of them */
	__atomic_store_n(&ep->app_calls, __atomic_load_n(&ep->app_calls, __ATOMIC_RELAXED) + 1,
			 __ATOMIC_RELAXED);
	if (ep->shm) {
		if (progress_idle(ep))
			return 0;
		if (sctpt_shm_express(ep)) /* a small message from a ring, straight to its handler */
			return 1;
	}
	return progress_locking(ep);
}

int sctpt_wait(struct sctpt_ep *ep, int timeout_ms)
{
	uint64_t t0 = sctpt_now_ms();
	for (;;) {
		int n = sctpt_progress(ep);
		if (n > 0)
			return n;
		uint64_t el = sctpt_now_ms() - t0;
		if (timeout_ms >= 0 && el >= (uint64_t)timeout_ms)
			return 0;
		int left = timeout_ms < 0 ? -1 : (int)((uint64_t)timeout_ms - el);
		/* same-host peers: spin briefly, then arm the tripwires (1: something came) */
		if (ep->shm && sctpt_shm_idle(ep, left))
			continue;
		/* without the lock: other threads send meanwhile (the sockets outlive us) */
		ep->be->wait(ep, left);
		if (ep->shm)
			sctpt_shm_awake(ep);
	}
}

int sctpt_peer_stats(struct sctpt_ep *ep, sctpt_peer_t id, struct sctpt_peer_stats *st)
{
	sctpt_lock(ep);
	struct sctpt_peer *p = sctpt_peer_get(ep, id);
	if (!p) {
		sctpt_unlock(ep);
		return sctpt_err(-EINVAL, "no peer %d", id);
	}
	memset(st, 0, sizeof(*st));
	st->state = p->state;
	st->msgs_sent = p->msgs_sent;
	st->bytes_sent = p->bytes_sent;
	st->msgs_recv = p->msgs_recv;
	st->bytes_recv = p->bytes_recv;
	st->held_for_order = p->held_for_order;
	st->sctp_msgs_in = p->sctp_msgs_in;
	for (uint32_t i = 0; i < p->order.cap; i++)
		if (p->order.slots[i].used)
			st->held_now += p->order.slots[i].nheld;
	for (uint16_t s = 0; s < ep->cfg.streams; s++)
		st->reassembling += p->rx[s] != NULL;
	struct sctpt_rxmsg *r;
	LIST_FOREACH(r, &p->rxlist, rlink)
		st->reassembling++;
	st->nrails = p->nrails;
	st->rail_failures = p->rail_failures;
	st->rail_reconnects = p->rail_reconnects;
	st->frags_resent = p->frags_resent;
	st->rail_stalls = p->rail_stalls;
	st->dup_frags_dropped = p->dup_frags;
	st->unclaimed = p->unclaimed;
	for (uint16_t s = 0; s < ep->cfg.streams; s++)
		st->stream_msgs_sent[s] = p->stream_msgs_sent[s];
	int rc = ep->be->peer_stats(ep, p, st);
	if (p->shm)
		sctpt_shm_stats(ep, p, st);
	sctpt_unlock(ep);
	return rc;
}

/* ---- closing ---- */

static int unacked(struct sctpt_ep *ep)
{
	sctpt_lock(ep);
	int n = ep->be->unacked(ep);
	if (ep->shm)
		n += sctpt_shm_unacked(ep);
	for (int i = 0; i < ep->npeers; i++) /* a CLOSE waiting for its association */
		n += ep->peers[i]->close_sent && ep->peers[i]->state == SCTPT_PEER_CONNECTING;
	sctpt_unlock(ep);
	return n;
}

/* Something is queued for a peer that may still take it (not one that closed or failed). */
static int drain_pending(struct sctpt_ep *ep)
{
	int n = 0;
	sctpt_lock(ep);
	for (int i = 0; i < ep->npeers && !n; i++) {
		struct sctpt_peer *p = ep->peers[i];
		n = (p->tx_queued || !STAILQ_EMPTY(&p->resend)) && p->state != SCTPT_PEER_CLOSED &&
		    p->state != SCTPT_PEER_FAILED;
	}
	sctpt_unlock(ep);
	return n;
}

/* Progresses until nothing is queued (and, with acked, SCTP holds nothing unacknowledged),
 * or until the deadline. */
static void drain_until(struct sctpt_ep *ep, uint64_t deadline, int acked)
{
	while (drain_pending(ep) || (acked && unacked(ep))) {
		sctpt_wait(ep, 10);
		if (sctpt_now_ms() >= deadline)
			break;
	}
}

void sctpt_close(struct sctpt_ep *ep)
{
	if (!ep)
		return;
	/* Everything queued first, then CLOSE behind it, then wait until SCTP has it all
	 * acknowledged: 2 s for the data, 1 s more for the CLOSE. Striped peers: CLOSE may take
	 * any rail, so the data must be acknowledged before it goes. */
	sctpt_keeper_stop(ep); /* the application is here from now on */
	uint64_t deadline = sctpt_now_ms() + 2000;
	drain_until(ep, deadline, ep->rail_peers > 0);
	sctpt_send_close(ep);
	drain_until(ep, deadline + 1000, 1);
	sctpt_lock(ep);
	ep->be->close(ep);
	for (int i = 0; i < ep->npeers; i++)
		sctpt_peer_free(ep, ep->peers[i]);
	sctpt_shm_fini(ep);
	sctpt_unlock(ep);
	sctpt_cq_dispatch(ep); /* the last completions: cancelled sends, buffers given back */
	sctpt_lock(ep);
	sctpt_cq_fini(ep);
	free(ep->peers);
	sctpt_rxbuf_put(ep, ep->stage);
	pools_fini(ep);
	free(ep->txbuf);
	free(ep->rx_dgrams);
	sctpt_unlock(ep);
	pthread_mutex_destroy(&ep->lock);
	free(ep);
}
