/*
 * Endpoint: peers, send queues, fragmentation, reassembly and ordered release.
 * Everything here runs under ep->lock; the socket layer (sctpt_usrsctp.c) does the I/O.
 */
#include "sctpt_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static __thread char t_err[256];

int sctpt_err(int code, const char *fmt, ...)
{
	char tmp[sizeof(t_err)];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap); /* fmt may print t_err itself */
	va_end(ap);
	memcpy(t_err, tmp, sizeof(t_err));
	return code;
}

const char *sctpt_last_error(void)
{
	return t_err;
}

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
	c->sack_freq = 1;
	c->stripe_small = 16 * 1024;
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

#define LOCK(ep) pthread_mutex_lock(&(ep)->lock)
#define UNLOCK(ep) pthread_mutex_unlock(&(ep)->lock)

static void emit(struct sctpt_ep *ep, enum sctpt_event_type t, struct sctpt_peer *p, int err,
		 int path, const char *what)
{
	struct sctpt_event ev = {.type = t, .peer = p->id, .error = err, .path = path, .what = what};
	if (ep->cfg.ops.event)
		ep->cfg.ops.event(ep->cfg.ops.arg, &ev);
}

/* ---- opening ---- */

static int ep_open(const struct sctpt_config *cfg, struct sctpt_ep **out, int nosock)
{
	struct sctpt_ep *ep = calloc(1, sizeof(*ep));
	pthread_mutexattr_t ma;
	int rc;
	if (!ep)
		return sctpt_err(-ENOMEM, "out of memory for the endpoint");
	ep->cfg = *cfg;
	if (!cfg->ops.recv || cfg->streams < 2 || cfg->streams > SCTPT_MAX_STREAMS ||
	    cfg->frag_size < 512 || cfg->frag_size > (1u << 20)) {
		free(ep);
		return sctpt_err(-EINVAL, "bad configuration: need a recv callback, 2..%d streams and "
				 "a fragment size of 512 B..1 MiB", SCTPT_MAX_STREAMS);
	}
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&ep->lock, &ma);
	pthread_mutexattr_destroy(&ma);
	ep->nosock = nosock;
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
	ep->stage_len = cfg->frag_size + SCTPT_HDR_LEN;
	ep->stage = malloc(ep->stage_len);
	ep->txbuf = malloc(ep->stage_len);
	if (!ep->stage || !ep->txbuf) {
		rc = sctpt_err(-ENOMEM, "out of memory for staging buffers");
		goto fail;
	}
	rc = nosock ? 0 : sctpt_sock_open(ep);
	if (rc)
		goto fail;
	if (nosock)
		ep->udp_port = ep->rport = 1;
	struct sctpt_card_info ci = {.udp_port = ep->udp_port, .sctp_port = ep->rport};
	for (int i = 0; i < ep->nudp; i++)
		ci.addrs[ci.naddrs++] = ep->udp[i].addr.sin_addr.s_addr;
	sctpt_card_format(&ci, ep->card, sizeof(ep->card));
	*out = ep;
	return 0;
fail:
	free(ep->stage);
	free(ep->txbuf);
	pthread_mutex_destroy(&ep->lock);
	free(ep);
	return rc;
}

int sctpt_open(const struct sctpt_config *cfg, struct sctpt_ep **out)
{
	return ep_open(cfg, out, 0);
}

int sctpt_open_nosock(const struct sctpt_config *cfg, struct sctpt_ep **out)
{
	return ep_open(cfg, out, 1);
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

/* ---- peers ---- */

static struct sctpt_path *new_path(struct sctpt_peer *p, int local, uint32_t ip, uint16_t port)
{
	struct sctpt_path *path = calloc(1, sizeof(*path));
	if (!path)
		return NULL;
	path->peer = p;
	path->index = p->npaths;
	path->local = local;
	path->remote.sin_family = AF_INET;
	path->remote.sin_addr.s_addr = ip;
	path->remote.sin_port = htons(port);
	path->up = 1;
	path->reported_up = 1;
	p->paths[p->npaths++] = path;
	return path;
}

/* The local NIC to reach a remote address from: same subnet first, else loopback to
 * loopback, else the first one (the kernel's routes decide). */
static int pick_local(struct sctpt_ep *ep, uint32_t ip)
{
	for (int i = 0; i < ep->nudp; i++) {
		uint32_t m = ep->udp[i].mask;
		if ((ep->udp[i].addr.sin_addr.s_addr & m) == (ip & m))
			return i;
	}
	if ((ntohl(ip) >> 24) == 127)
		for (int i = 0; i < ep->nudp; i++)
			if ((ntohl(ep->udp[i].addr.sin_addr.s_addr) >> 24) == 127)
				return i;
	return 0;
}

static void make_paths(struct sctpt_ep *ep, struct sctpt_peer *p)
{
	for (int r = 0; r < p->info.naddrs; r++) {
		int l = pick_local(ep, p->info.addrs[r]);
		new_path(p, l, p->info.addrs[r], p->info.udp_port);
	}
}

static struct sctpt_peer *new_peer(struct sctpt_ep *ep)
{
	if (ep->npeers == ep->cap_peers) {
		int cap = ep->cap_peers ? ep->cap_peers * 2 : 16;
		struct sctpt_peer **np = realloc(ep->peers, (size_t)cap * sizeof(*np));
		if (!np)
			return NULL;
		ep->peers = np;
		ep->cap_peers = cap;
	}
	struct sctpt_peer *p = calloc(1, sizeof(*p));
	uint16_t ns = ep->cfg.streams;
	if (!p)
		return NULL;
	p->txq = calloc(ns, sizeof(*p->txq));
	p->rx = calloc(ns, sizeof(*p->rx));
	p->stream_msgs_sent = calloc(ns, sizeof(*p->stream_msgs_sent));
	if (!p->txq || !p->rx || !p->stream_msgs_sent) {
		free(p->txq);
		free(p->rx);
		free(p->stream_msgs_sent);
		free(p);
		return NULL;
	}
	p->ep = ep;
	p->id = ep->npeers;
	p->mirror.kind = SCTPT_SEL_MIRROR;
	p->mirror.peer = p;
	p->sel_out.kind = SCTPT_SEL_OUT;
	p->sel_out.peer = p;
	p->mirror.rail = -1;
	p->sel_out.rail = -1;
	p->seen.low = 1;
	sctpt_order_init(&p->order);
	ep->peers[ep->npeers++] = p;
	return p;
}

struct sctpt_peer *sctpt_peer_by_udp(struct sctpt_ep *ep, const struct sockaddr_in *from, int *path)
{
	for (int i = 0; i < ep->npeers; i++) {
		struct sctpt_peer *p = ep->peers[i];
		for (int k = 0; k < p->npaths; k++) {
			const struct sockaddr_in *r = &p->paths[k]->remote;
			if (r->sin_addr.s_addr == from->sin_addr.s_addr && r->sin_port == from->sin_port) {
				*path = k;
				return p;
			}
		}
	}
	return NULL;
}

/* The rails the caller gives this peer (ops.rails), as indices into ep->udp; 0: none. */
static int ask_rails(struct sctpt_ep *ep, const char *card, const struct sctpt_card_info *ci,
		     struct sctpt_rail *rails, int *local)
{
	if (!ep->cfg.ops.rails)
		return 0;
	uint32_t mine[SCTPT_MAX_ADDRS];
	for (int k = 0; k < ep->nudp; k++)
		mine[k] = ep->udp[k].addr.sin_addr.s_addr;
	int n = ep->cfg.ops.rails(ep->cfg.ops.arg, card, ci->addrs, ci->naddrs, mine, ep->nudp,
				  rails, SCTPT_MAX_RAILS);
	if (n < 0 || n > SCTPT_MAX_RAILS)
		return sctpt_err(-EINVAL, "peer %s: the rails callback returned %d", card, n);
	for (int i = 0; i < n; i++) {
		char a[INET_ADDRSTRLEN];
		local[i] = -1;
		for (int k = 0; k < ep->nudp; k++)
			if (ep->udp[k].addr.sin_addr.s_addr == rails[i].local)
				local[i] = k;
		if (local[i] < 0) {
			inet_ntop(AF_INET, &rails[i].local, a, sizeof(a));
			return sctpt_err(-EINVAL, "peer %s: rail %d's local address %s is not one of "
					 "this endpoint's", card, i, a);
		}
		/* incoming packets find their rail by the peer's address */
		for (int k = 0; k < i; k++) {
			if (rails[k].remote == rails[i].remote) {
				inet_ntop(AF_INET, &rails[i].remote, a, sizeof(a));
				return sctpt_err(-EINVAL, "peer %s: rails %d and %d both go to %s", card,
						 k, i, a);
			}
		}
	}
	return n;
}

static void make_rails(struct sctpt_ep *ep, struct sctpt_peer *p, const struct sctpt_rail *rails,
		       const int *local, int n)
{
	for (int i = 0; i < n; i++) {
		struct sctpt_rail_st *r = &p->rails[i];
		new_path(p, local[i], rails[i].remote, p->info.udp_port);
		r->index = i;
		r->out = (struct sctpt_sel){.kind = SCTPT_SEL_OUT, .peer = p, .rail = i};
		r->mirror = (struct sctpt_sel){.kind = SCTPT_SEL_MIRROR, .peer = p, .rail = i};
		atomic_store(&r->out.cur, i);
		atomic_store(&r->mirror.cur, i);
	}
	p->nrails = n;
	ep->rail_peers++;
}

sctpt_peer_t sctpt_peer_add(struct sctpt_ep *ep, const char *card)
{
	struct sctpt_card_info ci;
	struct sctpt_rail rails[SCTPT_MAX_RAILS];
	int local[SCTPT_MAX_RAILS];
	int rc = sctpt_card_parse(card, &ci);
	if (rc)
		return rc;
	LOCK(ep);
	for (int i = 0; i < ep->npeers; i++) {
		if (strcmp(ep->peers[i]->card, card) == 0) {
			UNLOCK(ep);
			return i;
		}
	}
	int nrails = ask_rails(ep, card, &ci, rails, local);
	if (nrails < 0) {
		UNLOCK(ep);
		return nrails;
	}
	struct sctpt_rail_st *rs = nrails ? calloc((size_t)nrails, sizeof(*rs)) : NULL;
	struct sctpt_peer *p = nrails && !rs ? NULL : new_peer(ep);
	if (!p) {
		free(rs);
		UNLOCK(ep);
		return sctpt_err(-ENOMEM, "out of memory adding peer %s", card);
	}
	snprintf(p->card, sizeof(p->card), "%s", card);
	p->info = ci;
	p->rails = rs;
	if (nrails)
		make_rails(ep, p, rails, local, nrails);
	else
		make_paths(ep, p);
	UNLOCK(ep);
	return p->id;
}

static struct sctpt_peer *peer_get(struct sctpt_ep *ep, sctpt_peer_t id)
{
	return id >= 0 && id < ep->npeers ? ep->peers[id] : NULL;
}

int sctpt_peer_state(struct sctpt_ep *ep, sctpt_peer_t id)
{
	LOCK(ep);
	struct sctpt_peer *p = peer_get(ep, id);
	int s = p ? p->state : -EINVAL;
	UNLOCK(ep);
	return s;
}

const char *sctpt_peer_name(struct sctpt_ep *ep, sctpt_peer_t id)
{
	struct sctpt_peer *p = peer_get(ep, id);
	return p ? p->card : "(no such peer)";
}

/* ---- sending ---- */

static void txmsg_free(struct sctpt_txmsg *m)
{
	if (m->iov != m->iov_inline)
		free(m->iov);
	free(m);
}

static void finish_tx(struct sctpt_ep *ep, struct sctpt_txmsg *m, int status, int notify)
{
	if (notify && !m->internal && ep->cfg.ops.send_done)
		ep->cfg.ops.send_done(ep->cfg.ops.arg, m->cookie, status);
	txmsg_free(m);
}

/* Copies the next fragment of m (envelope + payload) to out; returns its length. */
static size_t build_fragment_to(struct sctpt_ep *ep, struct sctpt_txmsg *m, uint8_t *out)
{
	uint64_t left = m->hdr.msg_len - m->hdr.offset;
	size_t n = left > ep->cfg.frag_size ? ep->cfg.frag_size : (size_t)left;
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

static size_t build_fragment(struct sctpt_ep *ep, struct sctpt_txmsg *m)
{
	return build_fragment_to(ep, m, ep->txbuf);
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

static int rail_place(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_rfrag *f);

/* The fragment of n payload bytes at the head of stream s left: the message is done when
 * it was the last. */
static void fragment_sent(struct sctpt_ep *ep, struct sctpt_peer *p, uint16_t s, size_t n,
			  struct sctpt_txmsg *inline_msg, int *inline_done)
{
	struct sctpt_txq *q = &p->txq[s];
	struct sctpt_txmsg *m = q->head;
	advance(m, n);
	if (m->hdr.offset == m->hdr.msg_len) {
		q->head = m->next;
		if (!q->head)
			q->tail = NULL;
		p->tx_queued--;
		if (p->tx_queued == 0)
			ep->tx_peers--;
		p->msgs_sent++;
		p->bytes_sent += m->hdr.msg_len;
		p->stream_msgs_sent[s]++;
		if (m == inline_msg) {
			*inline_done = 1;
			txmsg_free(m);
		} else {
			finish_tx(ep, m, 0, 1);
		}
	}
}

/* Sends one fragment of the head message of stream s: 1 sent, 0 buffer full, < 0 error. */
static int push_one(struct sctpt_ep *ep, struct sctpt_peer *p, uint16_t s,
		    struct sctpt_txmsg *inline_msg, int *inline_done)
{
	struct sctpt_txmsg *m = p->txq[s].head;
	size_t len;
	int rc;
	if (p->nrails) {
		/* striped: a copy that stays until SCTP has it acknowledged, on the best rail */
		uint64_t left = m->hdr.msg_len - m->hdr.offset;
		size_t n = left > ep->cfg.frag_size ? ep->cfg.frag_size : (size_t)left;
		struct sctpt_rfrag *f = malloc(sizeof(*f) + SCTPT_HDR_LEN + n);
		if (!f)
			return 0; /* try again on the next progress */
		f->len = len = build_fragment_to(ep, m, f->data);
		f->stream = s;
		f->next = NULL;
		rc = rail_place(ep, p, f);
		if (rc <= 0) {
			free(f);
			return rc;
		}
	} else {
		len = build_fragment(ep, m);
		rc = sctpt_sock_send(ep, p, s, ep->txbuf, len);
		if (rc == -EAGAIN)
			return 0;
		if (rc < 0)
			return rc;
	}
	fragment_sent(ep, p, s, len - SCTPT_HDR_LEN, inline_msg, inline_done);
	return 1;
}

/* Round-robin over the peer's streams, one fragment each, until SCTP's buffer is full. */
static int push_peer(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_txmsg *inline_msg,
		     int *inline_done)
{
	uint16_t ns = ep->cfg.streams;
	int sent = 0, idle = 0;
	if (p->state == SCTPT_PEER_FAILED || p->state == SCTPT_PEER_CLOSED)
		return 0;
	/* fragments of failed rails go first */
	while (p->resend_head) {
		struct sctpt_rfrag *f = p->resend_head;
		struct sctpt_rfrag *next = f->next;
		if (rail_place(ep, p, f) <= 0)
			return sent;
		p->resend_head = next;
		if (!next)
			p->resend_tail = NULL;
		p->frags_resent++;
		sent++;
	}
	while (p->tx_queued && idle < ns) {
		uint16_t s = p->rr_next;
		p->rr_next = (uint16_t)((s + 1) % ns);
		if (!p->txq[s].head) {
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

/* ---- striping: rails ---- */

static void rfrags_free(struct sctpt_rfrag *f)
{
	while (f) {
		struct sctpt_rfrag *n = f->next;
		free(f);
		f = n;
	}
}

/* A rail can take new fragments. */
static int rail_usable(struct sctpt_peer *p, const struct sctpt_rail_st *r)
{
	return r->live && !r->stalled && r->assoc_out && atomic_load(&p->paths[r->index]->up);
}

/* Expected time (us) until a fragment of len bytes given to rail r now has arrived: its RTT
 * plus what it holds ahead of it at its rate (rails of unknown rate count as the mean of
 * the known ones, or all alike). */
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

static uint64_t rail_cost(const struct sctpt_peer *p, const struct sctpt_rail_st *r, size_t len)
{
	return r->srtt_us + (r->held + len) * 1000000u / rail_rate(p, r);
}

/* Queues the copies rail r holds to be re-sent on the other rails, oldest first. */
static void rail_hand_over(struct sctpt_peer *p, struct sctpt_rail_st *r)
{
	if (r->head) {
		if (p->resend_tail)
			p->resend_tail->next = r->head;
		else
			p->resend_head = r->head;
		p->resend_tail = r->tail;
	}
	r->head = r->tail = NULL;
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

/* Gives fragment f to the rail that would deliver it first and keeps it in that rail's list:
 * 1, or 0 when no rail can take it now. */
static int rail_place(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_rfrag *f)
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
		int rc = sctpt_sock_rail_send(ep, p, r, f->stream, f->data, f->len);
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
			rail_fail(p, r);
			continue;
		}
		f->next = NULL;
		if (r->tail) {
			r->tail->next = f;
		} else {
			r->head = f;
			r->busy_ms = sctpt_now_ms(); /* the stall clock starts with work to do */
		}
		r->tail = f;
		r->held += f->len;
		r->frags_out++;
		r->frag_bytes_out += f->len;
		return 1;
	}
}

/* SCTP holds `sctp` bytes of rail r: the oldest copies beyond those are acknowledged. */
static void rail_release(struct sctpt_rail_st *r, uint64_t sctp)
{
	while (r->head && r->held - r->head->len >= sctp) {
		struct sctpt_rfrag *f = r->head;
		r->head = f->next;
		if (!r->head)
			r->tail = NULL;
		r->held -= f->len;
		r->released += f->len;
		free(f);
	}
}

static void fail_peer(struct sctpt_ep *ep, struct sctpt_peer *p, int err);

/* Per progress pass for a striped peer: release acknowledged copies, measure rates and RTTs,
 * fail rails whose path went down, reconnect rails whose path came back, and give up on the
 * peer once no rail has worked for rto_max_ms * assoc_max_retrans. */
static void rails_tend(struct sctpt_ep *ep, struct sctpt_peer *p)
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
			} else if (sctpt_sock_rail_connect(ep, p, r) != 0) {
				r->down_ms = now;
			} else {
				p->rail_reconnects++;
			}
			continue;
		}
		live++;
		int64_t held = sctpt_sock_rail_held(ep, r);
		if (now - r->info_ms >= 100) {
			sctpt_sock_rail_info(ep, p, r);
			r->info_ms = now;
		}
		if (held >= 0) {
			uint64_t before = r->released;
			rail_release(r, (uint64_t)held);
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
		fail_peer(ep, p, -ETIMEDOUT);
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
		emit(ep, SCTPT_EV_ASSOC_UP, p, 0, -1, what);
	}
}

static void fail_peer(struct sctpt_ep *ep, struct sctpt_peer *p, int err)
{
	if (p->state == SCTPT_PEER_FAILED)
		return;
	int closed = p->state == SCTPT_PEER_CLOSED; /* its ABORT after CLOSE is no loss */
	p->state = closed ? SCTPT_PEER_CLOSED : SCTPT_PEER_FAILED;
	p->error = closed ? -EPIPE : err;
	for (uint16_t s = 0; s < ep->cfg.streams; s++) {
		struct sctpt_txmsg *m = p->txq[s].head, *n;
		for (; m; m = n) {
			n = m->next;
			finish_tx(ep, m, -EPIPE, 1);
		}
		p->txq[s].head = p->txq[s].tail = NULL;
	}
	if (p->tx_queued)
		ep->tx_peers--;
	p->tx_queued = 0;
	rfrags_free(p->resend_head);
	p->resend_head = p->resend_tail = NULL;
	if (closed)
		return;
	char what[SCTPT_CARD_MAX + 64];
	snprintf(what, sizeof(what), "peer %s lost: %s", p->card, strerror(-err));
	sctpt_err(err, "%s", what);
	emit(ep, SCTPT_EV_ASSOC_DOWN, p, err, -1, what);
}

/* The peer said CLOSE: whatever it sent has arrived or is arriving; nothing more will. */
static void peer_closed(struct sctpt_ep *ep, struct sctpt_peer *p)
{
	char what[SCTPT_CARD_MAX + 32];
	if (p->state == SCTPT_PEER_FAILED || p->state == SCTPT_PEER_CLOSED)
		return;
	p->state = SCTPT_PEER_CLOSED;
	p->error = -EPIPE;
	snprintf(what, sizeof(what), "peer %s closed its endpoint", p->card);
	emit(ep, SCTPT_EV_PEER_CLOSED, p, 0, -1, what);
}

int sctpt_send(struct sctpt_ep *ep, sctpt_peer_t id, uint32_t context, int32_t tag, unsigned flags,
	       const struct iovec *iov, int iovcnt, void *cookie)
{
	struct sctpt_peer *p;
	struct sctpt_txmsg *m;
	uint64_t len = 0;
	int rc = 0, done = 0;
	if (iovcnt < 0 || (iovcnt > 0 && !iov))
		return sctpt_err(-EINVAL, "sctpt_send: bad iovec");
	for (int i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	if (len > SCTPT_MAX_MSG || len > ep->cfg.max_msg_size)
		return sctpt_err(-EMSGSIZE, "sctpt_send: %llu bytes is over the limit",
				 (unsigned long long)len);
	LOCK(ep);
	p = peer_get(ep, id);
	if (!p || p->anonymous) {
		UNLOCK(ep);
		return sctpt_err(-EINVAL, "sctpt_send: no peer %d with a business card", id);
	}
	if (p->state == SCTPT_PEER_FAILED) {
		rc = sctpt_err(-EPIPE, "peer %s is lost: %s", p->card, strerror(-p->error));
		goto out;
	}
	if (p->state == SCTPT_PEER_CLOSED) {
		rc = sctpt_err(-EPIPE, "peer %s has closed its endpoint", p->card);
		goto out;
	}
	if (p->state == SCTPT_PEER_IDLE) {
		rc = ep->nosock ? sctpt_err(-ENOTCONN, "test endpoint cannot send") :
				  sctpt_sock_connect(ep, p);
		if (rc)
			goto out;
		p->state = SCTPT_PEER_CONNECTING;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		rc = sctpt_err(-ENOMEM, "out of memory sending to %s", p->card);
		goto out;
	}
	m->iov = iovcnt <= 4 ? m->iov_inline : malloc((size_t)iovcnt * sizeof(*iov));
	if (!m->iov) {
		free(m);
		rc = sctpt_err(-ENOMEM, "out of memory sending to %s", p->card);
		goto out;
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
	if (flags & SCTPT_SEND_UNORDERED) {
		m->hdr.flags = SCTPT_F_UNORDERED;
		if (p->nrails) { /* numbered, so that a copy re-sent after a rail failure is known */
			p->unord_id = p->unord_id + 1 ? p->unord_id + 1 : 1;
			m->hdr.seq = p->unord_id;
			m->hdr.flags |= SCTPT_F_MSGID;
		}
	} else {
		struct sctpt_order_ctx *oc = sctpt_order_get(&p->order, context);
		if (!oc) {
			txmsg_free(m);
			rc = sctpt_err(-ENOMEM, "out of memory sending to %s", p->card);
			goto out;
		}
		m->hdr.seq = sctpt_order_stamp(oc);
	}
	m->stream = ep->cfg.ops.stream_map ?
			    ep->cfg.ops.stream_map(ep->cfg.ops.arg, context, tag, ep->cfg.streams) :
			    sctpt_stream_default(context, tag, ep->cfg.streams);
	if (m->stream == 0 || m->stream >= ep->cfg.streams)
		m->stream = (uint16_t)(1 + m->stream % (ep->cfg.streams - 1));
	struct sctpt_txq *q = &p->txq[m->stream];
	if (q->tail)
		q->tail->next = m;
	else
		q->head = m;
	q->tail = m;
	if (p->tx_queued++ == 0)
		ep->tx_peers++;
	/* Start with this stream so a lone small message leaves right away. */
	if (!q->head->next)
		p->rr_next = m->stream;
	sctpt_sock_tx_begin();
	rc = push_peer(ep, p, m, &done);
	sctpt_sock_tx_end();
	if (rc < 0) {
		fail_peer(ep, p, rc);
		rc = done ? 1 : -EPIPE;
		goto out;
	}
	rc = done ? 1 : 0;
out:
	UNLOCK(ep);
	return rc;
}

int sctpt_pending(struct sctpt_ep *ep, sctpt_peer_t id)
{
	LOCK(ep);
	struct sctpt_peer *p = peer_get(ep, id);
	int r = id < 0 ? ep->tx_peers > 0 : p ? p->tx_queued > 0 || p->resend_head : 0;
	for (int i = 0; id < 0 && !r && ep->rail_peers && i < ep->npeers; i++)
		r = ep->peers[i]->resend_head != NULL;
	UNLOCK(ep);
	return r;
}

/* ---- receiving ---- */

static void rxmsg_free(struct sctpt_rxmsg *r)
{
	if (r->owned)
		free(r->buf);
	free(r->bits);
	free(r);
}

/* ---- striping: duplicates ---- */

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

static int seen_add(struct sctpt_seen *s, uint32_t id)
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

/* A striped peer's message that was delivered (or held complete) already? */
static int rail_dup(struct sctpt_peer *p, const struct sctpt_hdr *h)
{
	if (h->flags & SCTPT_F_UNORDERED)
		return (h->flags & SCTPT_F_MSGID) && seen_has(&p->seen, h->seq);
	struct sctpt_order_ctx *oc = sctpt_order_get(&p->order, h->context);
	return oc && sctpt_order_classify(oc, h->seq) == SCTPT_ORDER_BAD;
}

static void order_release(struct sctpt_order_item *it)
{
	rxmsg_free((struct sctpt_rxmsg *)it);
}

static void deliver_now(struct sctpt_ep *ep, struct sctpt_peer *p, const struct sctpt_hdr *h,
			uint16_t stream, const void *data, size_t len, void *cookie)
{
	struct sctpt_msg msg = {.peer = p->id, .context = h->context, .tag = h->tag,
				.stream = stream, .data = data, .len = len, .buf_cookie = cookie};
	p->msgs_recv++;
	p->bytes_recv += len;
	ep->cfg.ops.recv(ep->cfg.ops.arg, &msg);
}

static void protocol_error(struct sctpt_ep *ep, struct sctpt_peer *p, const char *why)
{
	char msg[256];
	snprintf(msg, sizeof(msg), "%s", why);
	sctpt_err(-EPROTO, "peer %s sent a malformed message: %s", p ? p->card : "?", msg);
	if (p)
		fail_peer(ep, p, -EPROTO);
}

/*
 * A whole message is here: release it now if it is next in its (peer, context), else hold
 * it. For a held message from the staging buffer, r is NULL and the data is copied.
 */
static void complete(struct sctpt_ep *ep, struct sctpt_peer *p, const struct sctpt_hdr *h,
		     uint16_t stream, const uint8_t *data, struct sctpt_rxmsg *r)
{
	size_t len = (size_t)h->msg_len;
	const uint32_t context = h->context; /* h may live in r, which is freed below */
	if (p->nrails && rail_dup(p, h)) { /* a copy re-sent after a rail failure */
		p->dup_frags++;
		if (r)
			rxmsg_free(r);
		return;
	}
	if (h->flags & SCTPT_F_UNORDERED) {
		if ((h->flags & SCTPT_F_MSGID) && seen_add(&p->seen, h->seq) != 0) {
			fail_peer(ep, p, -ENOMEM);
			if (r)
				rxmsg_free(r);
			return;
		}
		deliver_now(ep, p, h, stream, data, len, r ? r->cookie : NULL);
		if (r)
			rxmsg_free(r);
		return;
	}
	struct sctpt_order_ctx *oc = sctpt_order_get(&p->order, h->context);
	if (!oc) {
		fail_peer(ep, p, -ENOMEM);
		if (r)
			rxmsg_free(r);
		return;
	}
	switch (sctpt_order_classify(oc, h->seq)) {
	case SCTPT_ORDER_BAD:
		if (r)
			rxmsg_free(r);
		protocol_error(ep, p, "duplicate or stale sequence number");
		return;
	case SCTPT_ORDER_HOLD:
		if (!r) {
			r = calloc(1, sizeof(*r));
			if (!r || !(r->buf = malloc(len ? len : 1))) {
				free(r);
				fail_peer(ep, p, -ENOMEM);
				return;
			}
			memcpy(r->buf, data, len);
			r->owned = 1;
			r->hdr = *h;
			r->stream = stream;
		}
		r->order.seq = h->seq;
		p->held_for_order++;
		sctpt_order_hold(oc, &r->order);
		return;
	case SCTPT_ORDER_NOW:
		break;
	}
	deliver_now(ep, p, h, stream, data, len, r ? r->cookie : NULL);
	if (r)
		rxmsg_free(r);
	/* the callback may have added contexts: look the context up again */
	for (;;) {
		oc = sctpt_order_get(&p->order, context);
		struct sctpt_order_item *it = oc ? sctpt_order_advance(oc) : NULL;
		if (!it)
			break;
		struct sctpt_rxmsg *n = (struct sctpt_rxmsg *)it;
		deliver_now(ep, p, &n->hdr, n->stream, n->buf, (size_t)n->hdr.msg_len, n->cookie);
		rxmsg_free(n);
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
	if (ep->cfg.ops.recv_buf)
		r->buf = ep->cfg.ops.recv_buf(ep->cfg.ops.arg, p->id, h->context, h->tag,
					      (size_t)h->msg_len, &r->cookie);
	if (!r->buf) {
		r->buf = malloc((size_t)h->msg_len);
		r->owned = 1;
		r->cookie = NULL;
	}
	if (!r->buf) {
		free(r);
		return NULL;
	}
	return r;
}

/* A fragment from a striped peer: any rail, any order, maybe twice. Reassembly is keyed by
 * (ordered or not, context, seq); which fragments arrived is kept by offset. */
static int begin_rail(struct sctpt_ep *ep, struct sctpt_peer *p, size_t n)
{
	struct sctpt_rxcur *c = &ep->cur;
	const struct sctpt_hdr *h = &c->hdr;
	size_t payload = n - SCTPT_HDR_LEN;
	if (rail_dup(p, h)) {
		p->dup_frags++;
		c->discard = 1;
		return 0;
	}
	if ((h->flags & SCTPT_F_FIRST) && h->msg_len <= ep->cfg.frag_size) {
		c->in_stage = 1;
		c->dst = ep->stage + n;
		c->cap = ep->stage_len - n;
		c->got = payload;
		return 0;
	}
	if (h->msg_len > ep->cfg.max_msg_size) {
		protocol_error(ep, p, "message larger than max_msg_size");
		c->discard = 1;
		return 0;
	}
	struct sctpt_rxmsg *r = p->rxlist;
	uint8_t kind = h->flags & SCTPT_F_UNORDERED;
	while (r && ((r->hdr.flags & SCTPT_F_UNORDERED) != kind || r->hdr.context != h->context ||
		     r->hdr.seq != h->seq))
		r = r->rnext;
	if (!r) {
		r = start_reassembly(ep, p, h, c->stream);
		if (r && !(r->bits = calloc((size_t)(h->msg_len / 512 / 8 + 1), 1))) {
			rxmsg_free(r);
			r = NULL;
		}
		if (!r) {
			fail_peer(ep, p, -ENOMEM);
			c->discard = 1;
			return 0;
		}
		r->rnext = p->rxlist;
		p->rxlist = r;
	} else if (r->hdr.tag != h->tag || r->hdr.msg_len != h->msg_len) {
		protocol_error(ep, p, "fragment does not belong to the message of its sequence");
		c->discard = 1;
		return 0;
	}
	size_t bit = (size_t)(h->offset / 512);
	if (r->bits[bit / 8] & (1u << (bit % 8))) {
		p->dup_frags++;
		c->discard = 1;
		return 0;
	}
	uint64_t room = r->hdr.msg_len - h->offset;
	if (payload > room) {
		protocol_error(ep, p, "fragment overruns its message");
		c->discard = 1;
		return 0;
	}
	memcpy(r->buf + h->offset, ep->stage + SCTPT_HDR_LEN, payload);
	c->frag = r;
	c->got = payload;
	c->dst = r->buf + h->offset + payload;
	c->cap = (size_t)(room - payload);
	return 0;
}

/* A striped peer's fragment was read whole. */
static void end_rail(struct sctpt_ep *ep, struct sctpt_peer *p)
{
	struct sctpt_rxcur *c = &ep->cur;
	struct sctpt_rxmsg *r = c->frag, **pp;
	size_t bit = (size_t)(c->hdr.offset / 512);
	r->bits[bit / 8] |= (uint8_t)(1u << (bit % 8));
	r->got += c->got;
	if (r->got < r->hdr.msg_len)
		return;
	for (pp = &p->rxlist; *pp != r; pp = &(*pp)->rnext)
		;
	*pp = r->rnext;
	complete(ep, p, &r->hdr, r->stream, r->buf, r);
}

/* The envelope of a new SCTP message is in ep->stage[0..n): decide where its bytes go. */
static int begin_message(struct sctpt_ep *ep, struct sctpt_peer *p, uint16_t stream, size_t n)
{
	struct sctpt_rxcur *c = &ep->cur;
	memset(c, 0, sizeof(*c));
	c->active = 1;
	c->peer = p;
	c->stream = stream;
	if (!p || stream >= ep->cfg.streams) {
		c->discard = 1;
		return 0;
	}
	if (sctpt_hdr_decode(ep->stage, n, &c->hdr) != 0) {
		protocol_error(ep, p, sctpt_last_error());
		c->discard = 1;
		return 0;
	}
	if (c->hdr.op == SCTPT_OP_CLOSE) {
		peer_closed(ep, p);
		c->discard = 1;
		return 0;
	}
	if (p->nrails)
		return begin_rail(ep, p, n);
	size_t payload = n - SCTPT_HDR_LEN;
	struct sctpt_rxmsg **slot = &p->rx[stream];
	int single = (c->hdr.flags & SCTPT_F_FIRST) && c->hdr.msg_len <= ep->cfg.frag_size;
	if (single) {
		c->in_stage = 1;
		c->dst = ep->stage + n;
		c->cap = ep->stage_len - n;
		c->got = payload;
		return 0;
	}
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
		*slot = start_reassembly(ep, p, &c->hdr, stream);
		if (!*slot) {
			fail_peer(ep, p, -ENOMEM);
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
	memcpy(r->buf + c->hdr.offset, ep->stage + SCTPT_HDR_LEN, payload);
	c->frag = r;
	c->got = payload;
	c->dst = r->buf + c->hdr.offset + payload;
	c->cap = (size_t)(room - payload);
	return 0;
}

/* The SCTP message in ep->cur ended. */
static void end_message(struct sctpt_ep *ep)
{
	struct sctpt_rxcur *c = &ep->cur;
	struct sctpt_peer *p = c->peer;
	c->active = 0;
	if (p)
		p->sctp_msgs_in++;
	if (c->discard || (p && p->state == SCTPT_PEER_FAILED))
		return;
	if (sctpt_hdr_check_payload(&c->hdr, c->got) != 0) {
		protocol_error(ep, p, sctpt_last_error());
		return;
	}
	if (c->in_stage) {
		complete(ep, p, &c->hdr, c->stream, ep->stage + SCTPT_HDR_LEN, NULL);
		return;
	}
	if (p->nrails) {
		end_rail(ep, p);
		return;
	}
	struct sctpt_rxmsg *r = c->frag;
	r->got = (size_t)(c->hdr.offset + c->got);
	if (c->hdr.flags & SCTPT_F_LAST) {
		p->rx[c->stream] = NULL;
		complete(ep, p, &r->hdr, r->stream, r->buf, r);
	}
}

/* n more bytes of the current SCTP message were read to c->dst, or to scratch. */
static void rx_account(struct sctpt_ep *ep, int to_scratch, size_t n)
{
	struct sctpt_rxcur *c = &ep->cur;
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
}

int sctpt_rx_inject(struct sctpt_ep *ep, sctpt_peer_t id, uint16_t stream, const uint8_t *buf,
		    size_t len)
{
	struct sctpt_rxcur *c = &ep->cur;
	LOCK(ep);
	struct sctpt_peer *p = peer_get(ep, id);
	if (!p) {
		UNLOCK(ep);
		return sctpt_err(-EINVAL, "no peer %d", id);
	}
	size_t n0 = len < 4096 ? len : 4096;
	if (n0 > ep->stage_len)
		n0 = ep->stage_len;
	memcpy(ep->stage, buf, n0);
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
	UNLOCK(ep);
	return rc;
}

/* Drains the receive socket; returns SCTP messages completed. */
static int receive(struct sctpt_ep *ep)
{
	struct sctpt_rxcur *c = &ep->cur;
	int count = 0;
	for (int guard = 0; guard < 4096; guard++) {
		struct sctpt_peer *p = NULL;
		uint16_t stream = 0;
		int eor = 0, n;
		if (!c->active) {
			/* read the envelope and, for small messages, the whole message */
			size_t want = ep->stage_len < 4096 ? ep->stage_len : 4096;
			n = sctpt_sock_recv(ep, ep->stage, want, &p, &stream, &eor);
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
			n = sctpt_sock_recv(ep, to_scratch ? scratch : c->dst,
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

/* ---- events from the socket layer ---- */

void sctpt_on_assoc(struct sctpt_ep *ep, struct sctpt_peer *p, enum sctpt_event_type t, int err)
{
	char what[SCTPT_CARD_MAX + 32];
	switch (t) {
	case SCTPT_EV_ASSOC_UP:
		if (p->state == SCTPT_PEER_CONNECTING || p->state == SCTPT_PEER_IDLE)
			p->state = p->assoc_out ? SCTPT_PEER_UP : p->state;
		snprintf(what, sizeof(what), "peer %s up", p->card);
		emit(ep, t, p, 0, -1, what);
		break;
	case SCTPT_EV_ASSOC_RESTART:
		snprintf(what, sizeof(what), "peer %s restarted", p->card);
		emit(ep, t, p, 0, -1, what);
		break;
	case SCTPT_EV_ASSOC_DOWN:
		fail_peer(ep, p, err);
		break;
	default:
		break;
	}
}

/* Tells the event callback about path changes the socket layer made since last time. */
static void report_paths(struct sctpt_ep *ep)
{
	for (int i = 0; i < ep->npeers; i++) {
		struct sctpt_peer *p = ep->peers[i];
		if (!p->registered)
			continue;
		for (int k = 0; k < p->npaths; k++) {
			struct sctpt_path *path = p->paths[k];
			int up = atomic_load(&path->up);
			if (up != path->reported_up) {
				path->reported_up = up;
				sctpt_on_path(ep, path, up ? SCTPT_EV_PATH_UP : SCTPT_EV_PATH_DOWN);
			}
		}
		int cur = atomic_load(&p->sel_out.cur);
		if (!p->nrails && cur != p->primary_reported && atomic_load(&p->paths[cur]->up)) {
			p->primary_reported = cur;
			sctpt_on_path(ep, p->paths[cur], SCTPT_EV_PATH_PRIMARY);
		}
	}
}

void sctpt_on_path(struct sctpt_ep *ep, struct sctpt_path *path, enum sctpt_event_type t)
{
	struct sctpt_peer *p = path->peer;
	char what[160], l[INET_ADDRSTRLEN], r[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &ep->udp[path->local].addr.sin_addr, l, sizeof(l));
	inet_ntop(AF_INET, &path->remote.sin_addr, r, sizeof(r));
	int e = atomic_load(&path->send_errno);
	snprintf(what, sizeof(what), "path %s -> %s to peer %d %s%s%s", l, r, p->id,
		 t == SCTPT_EV_PATH_UP ? "up" : t == SCTPT_EV_PATH_DOWN ? "down" : "primary",
		 t == SCTPT_EV_PATH_DOWN && e ? ": " : "", t == SCTPT_EV_PATH_DOWN && e ? strerror(e) : "");
	emit(ep, t, p, 0, path->index, what);
}

void sctpt_on_send_failed(struct sctpt_ep *ep, struct sctpt_peer *p, int err)
{
	fail_peer(ep, p, err);
}

/* ---- progress ---- */

static int progress_locked(struct sctpt_ep *ep)
{
	int n = sctpt_sock_input(ep);
	n += sctpt_sock_events(ep);
	n += receive(ep);
	report_paths(ep);
	if (ep->tx_peers || ep->rail_peers) {
		for (int i = 0; i < ep->npeers; i++) {
			struct sctpt_peer *p = ep->peers[i];
			if (p->nrails)
				rails_tend(ep, p);
			if (!p->tx_queued && !p->resend_head)
				continue;
			int rc = push_peer(ep, p, NULL, NULL);
			if (rc < 0)
				fail_peer(ep, p, rc);
			else
				n += rc;
		}
	}
	return n;
}

int sctpt_progress(struct sctpt_ep *ep)
{
	LOCK(ep);
	sctpt_sock_tx_begin();
	int n = progress_locked(ep);
	sctpt_sock_tx_end();
	UNLOCK(ep);
	return n;
}

int sctpt_wait(struct sctpt_ep *ep, int timeout_ms)
{
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int n = sctpt_progress(ep);
		if (n > 0)
			return n;
		struct timespec t1;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		long el = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
		if (timeout_ms >= 0 && el >= timeout_ms)
			return 0;
		sctpt_sock_wait(ep, timeout_ms < 0 ? -1 : (int)(timeout_ms - el));
	}
}

int sctpt_peer_stats(struct sctpt_ep *ep, sctpt_peer_t id, struct sctpt_peer_stats *st)
{
	LOCK(ep);
	struct sctpt_peer *p = peer_get(ep, id);
	if (!p) {
		UNLOCK(ep);
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
	for (struct sctpt_rxmsg *r = p->rxlist; r; r = r->rnext)
		st->reassembling++;
	st->nrails = p->nrails;
	st->rail_failures = p->rail_failures;
	st->rail_reconnects = p->rail_reconnects;
	st->frags_resent = p->frags_resent;
	st->rail_stalls = p->rail_stalls;
	st->dup_frags_dropped = p->dup_frags;
	for (uint16_t s = 0; s < ep->cfg.streams; s++)
		st->stream_msgs_sent[s] = p->stream_msgs_sent[s];
	int rc = sctpt_sock_peer_stats(ep, p, st);
	UNLOCK(ep);
	return rc;
}

/* ---- closing ---- */

static void free_peer(struct sctpt_ep *ep, struct sctpt_peer *p)
{
	for (uint16_t s = 0; s < ep->cfg.streams; s++) {
		struct sctpt_txmsg *m = p->txq[s].head, *n;
		for (; m; m = n) {
			n = m->next;
			finish_tx(ep, m, -ECANCELED, 1);
		}
		if (p->rx[s])
			rxmsg_free(p->rx[s]);
	}
	sctpt_order_fini(&p->order, order_release);
	while (p->rxlist) {
		struct sctpt_rxmsg *r = p->rxlist;
		p->rxlist = r->rnext;
		rxmsg_free(r);
	}
	for (int i = 0; i < p->nrails; i++)
		rfrags_free(p->rails[i].head);
	rfrags_free(p->resend_head);
	free(p->rails);
	free(p->seen.ids);
	for (int i = 0; i < p->npaths; i++)
		free(p->paths[i]);
	free(p->txq);
	free(p->rx);
	free(p->stream_msgs_sent);
	free(p);
}

static int sctpt_unacked(struct sctpt_ep *ep)
{
	LOCK(ep);
	int n = sctpt_sock_unacked(ep);
	UNLOCK(ep);
	return n;
}

/* Queues our CLOSE (stream 0) to every peer we have sent to. */
static void send_close(struct sctpt_ep *ep)
{
	LOCK(ep);
	for (int i = 0; i < ep->npeers; i++) {
		struct sctpt_peer *p = ep->peers[i];
		struct sctpt_txmsg *m;
		if ((p->state != SCTPT_PEER_UP && p->state != SCTPT_PEER_CONNECTING) ||
		    !(m = calloc(1, sizeof(*m))))
			continue;
		m->internal = 1;
		p->close_sent = 1;
		m->iov = m->iov_inline;
		m->hdr.version = SCTPT_PROTO_VERSION;
		m->hdr.op = SCTPT_OP_CLOSE;
		m->hdr.flags = SCTPT_F_UNORDERED;
		struct sctpt_txq *q = &p->txq[0];
		if (q->tail)
			q->tail->next = m;
		else
			q->head = m;
		q->tail = m;
		if (p->tx_queued++ == 0)
			ep->tx_peers++;
		if (push_peer(ep, p, NULL, NULL) < 0)
			fail_peer(ep, p, -EPIPE);
	}
	UNLOCK(ep);
}

/* Something is queued for a peer that may still take it (not one that closed or failed). */
static int drain_pending(struct sctpt_ep *ep)
{
	int n = 0;
	LOCK(ep);
	for (int i = 0; i < ep->npeers && !n; i++) {
		struct sctpt_peer *p = ep->peers[i];
		n = (p->tx_queued || p->resend_head) && p->state != SCTPT_PEER_CLOSED &&
		    p->state != SCTPT_PEER_FAILED;
	}
	UNLOCK(ep);
	return n;
}

/* Progresses until nothing is queued (and, with acked, SCTP holds nothing unacknowledged),
 * or until the deadline. */
static void drain_until(struct sctpt_ep *ep, const struct timespec *deadline, int acked)
{
	struct timespec t;
	while (drain_pending(ep) || (acked && sctpt_unacked(ep))) {
		sctpt_wait(ep, 10);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec > deadline->tv_sec ||
		    (t.tv_sec == deadline->tv_sec && t.tv_nsec >= deadline->tv_nsec))
			break;
	}
}

void sctpt_close(struct sctpt_ep *ep)
{
	if (!ep)
		return;
	if (!ep->nosock) {
		/* Everything queued first, then CLOSE behind it, then wait until SCTP has it all
		 * acknowledged: 2 s for the data, 1 s more for the CLOSE. */
		struct timespec deadline;
		clock_gettime(CLOCK_MONOTONIC, &deadline);
		deadline.tv_sec += 2;
		/* striped peers: CLOSE may take any rail, so the data must be acknowledged first */
		drain_until(ep, &deadline, ep->rail_peers > 0);
		send_close(ep);
		deadline.tv_sec += 1;
		drain_until(ep, &deadline, 1);
	}
	LOCK(ep);
	if (!ep->nosock)
		sctpt_sock_close(ep);
	for (int i = 0; i < ep->npeers; i++)
		free_peer(ep, ep->peers[i]);
	free(ep->peers);
	free(ep->stage);
	free(ep->txbuf);
	UNLOCK(ep);
	pthread_mutex_destroy(&ep->lock);
	free(ep);
}
