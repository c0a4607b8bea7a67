/*
 * Peers: the table, their paths (local NIC, remote NIC) and rails, what happens to them
 * (up, lost, closed in order) and the events that say so.
 */
#include "sctpt_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int make_paths(struct sctpt_ep *ep, struct sctpt_peer *p)
{
	for (int r = 0; r < p->info.naddrs; r++)
		if (!new_path(p, pick_local(ep, p->info.addrs[r]), p->info.addrs[r],
			      p->info.udp_port))
			return -ENOMEM;
	return 0;
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
	for (uint16_t s = 0; s < ns; s++)
		STAILQ_INIT(&p->txq[s]);
	STAILQ_INIT(&p->resend);
	LIST_INIT(&p->rxlist);
	p->ep = ep;
	p->id = ep->npeers;
	p->mirror = (struct sctpt_sel){.kind = SCTPT_SEL_MIRROR, .peer = p, .rail = -1};
	p->sel_out = (struct sctpt_sel){.kind = SCTPT_SEL_OUT, .peer = p, .rail = -1};
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

static int make_rails(struct sctpt_ep *ep, struct sctpt_peer *p, const struct sctpt_rail *rails,
		      const int *local, int n)
{
	for (int i = 0; i < n; i++) {
		struct sctpt_rail_st *r = &p->rails[i];
		if (!new_path(p, local[i], rails[i].remote, p->info.udp_port))
			return -ENOMEM;
		r->index = i;
		r->out = (struct sctpt_sel){.kind = SCTPT_SEL_OUT, .peer = p, .rail = i};
		r->mirror = (struct sctpt_sel){.kind = SCTPT_SEL_MIRROR, .peer = p, .rail = i};
		atomic_store(&r->out.cur, i);
		atomic_store(&r->mirror.cur, i);
		STAILQ_INIT(&r->copies);
	}
	p->nrails = n;
	ep->rail_peers++;
	return 0;
}

/* Adds the peer with this card (lock held); NULL with sctpt_last_error() set. */
static struct sctpt_peer *peer_add_locked(struct sctpt_ep *ep, const char *card, int *rc)
{
	struct sctpt_card_info ci;
	struct sctpt_rail rails[SCTPT_MAX_RAILS];
	int local[SCTPT_MAX_RAILS];
	if ((*rc = sctpt_card_parse(card, &ci)) != 0)
		return NULL;
	for (int i = 0; i < ep->npeers; i++)
		if (strcmp(ep->peers[i]->card, card) == 0)
			return ep->peers[i];
	/* a same-host peer gets shared memory, not rails */
	int nrails = sctpt_shm_is_local(ep, &ci) ? 0 : ask_rails(ep, card, &ci, rails, local);
	if (nrails < 0) {
		*rc = nrails;
		return NULL;
	}
	struct sctpt_rail_st *rs = nrails ? calloc((size_t)nrails, sizeof(*rs)) : NULL;
	struct sctpt_peer *p = nrails && !rs ? NULL : new_peer(ep);
	if (!p) {
		free(rs);
		*rc = sctpt_err(-ENOMEM, "out of memory adding peer %s", card);
		return NULL;
	}
	snprintf(p->card, sizeof(p->card), "%s", card);
	p->info = ci;
	p->rails = rs;
	if ((nrails ? make_rails(ep, p, rails, local, nrails) : make_paths(ep, p)) != 0 ||
	    sctpt_shm_peer_init(ep, p) != 0) {
		/* the peer stays in the table, without paths: it can never connect */
		p->state = SCTPT_PEER_FAILED;
		p->error = -ENOMEM;
	}
	return p;
}

sctpt_peer_t sctpt_peer_add(struct sctpt_ep *ep, const char *card)
{
	int rc = 0;
	sctpt_lock(ep);
	struct sctpt_peer *p = peer_add_locked(ep, card, &rc);
	sctpt_peer_t id = p ? p->id : rc;
	sctpt_unlock(ep);
	return id;
}

struct sctpt_peer *sctpt_peer_adopt(struct sctpt_ep *ep, const char *card)
{
	int rc;
	return peer_add_locked(ep, card, &rc);
}

int sctpt_peer_state(struct sctpt_ep *ep, sctpt_peer_t id)
{
	sctpt_lock(ep);
	struct sctpt_peer *p = sctpt_peer_get(ep, id);
	int s = p ? p->state : -EINVAL;
	sctpt_unlock(ep);
	return s;
}

const char *sctpt_peer_name(struct sctpt_ep *ep, sctpt_peer_t id, char *buf, size_t len)
{
	sctpt_lock(ep); /* sctpt_peer_add may move the table */
	struct sctpt_peer *p = sctpt_peer_get(ep, id);
	snprintf(buf, len, "%s", p ? p->card : "(no such peer)");
	sctpt_unlock(ep);
	return buf;
}

/* ---- what happens to peers ---- */

void sctpt_peer_fail(struct sctpt_ep *ep, struct sctpt_peer *p, int err)
{
	if (p->state == SCTPT_PEER_FAILED)
		return;
	int closed = p->state == SCTPT_PEER_CLOSED; /* its ABORT after CLOSE is no loss */
	p->state = closed ? SCTPT_PEER_CLOSED : SCTPT_PEER_FAILED;
	p->error = closed ? -EPIPE : err;
	sctpt_tx_fail_all(ep, p, -EPIPE);
	sctpt_rx_abandon(ep, p, closed ? -EPIPE : err);
	if (p->shm)
		sctpt_shm_peer_down(ep, p);
	if (closed)
		return;
	/* A protocol error's cause was just recorded by whoever found it: keep it in the event. */
	char what[SCTPT_CARD_MAX + 320];
	if (err == -EPROTO)
		snprintf(what, sizeof(what), "peer %s lost: %s (%s)", p->card, strerror(-err),
			 sctpt_last_error());
	else
		snprintf(what, sizeof(what), "peer %s lost: %s", p->card, strerror(-err));
	sctpt_err(err, "%s", what);
	sctpt_cq_event(ep, SCTPT_EV_ASSOC_DOWN, p, err, -1, what);
}

/* The peer said CLOSE: whatever it sent has arrived or is arriving; nothing more will. */
void sctpt_peer_closed(struct sctpt_ep *ep, struct sctpt_peer *p)
{
	char what[SCTPT_CARD_MAX + 32];
	if (p->state == SCTPT_PEER_FAILED || p->state == SCTPT_PEER_CLOSED)
		return;
	p->state = SCTPT_PEER_CLOSED;
	p->error = -EPIPE;
	snprintf(what, sizeof(what), "peer %s closed its endpoint", p->card);
	sctpt_cq_event(ep, SCTPT_EV_PEER_CLOSED, p, 0, -1, what);
}

void sctpt_on_assoc(struct sctpt_ep *ep, struct sctpt_peer *p, enum sctpt_event_type t, int err)
{
	char what[SCTPT_CARD_MAX + 32];
	switch (t) {
	case SCTPT_EV_ASSOC_UP:
		if (p->state == SCTPT_PEER_CONNECTING || p->state == SCTPT_PEER_IDLE)
			p->state = p->assoc_out ? SCTPT_PEER_UP : p->state;
		snprintf(what, sizeof(what), "peer %s up", p->card);
		sctpt_cq_event(ep, t, p, 0, -1, what);
		break;
	case SCTPT_EV_ASSOC_RESTART:
		snprintf(what, sizeof(what), "peer %s restarted", p->card);
		sctpt_cq_event(ep, t, p, 0, -1, what);
		break;
	case SCTPT_EV_ASSOC_DOWN:
		sctpt_peer_fail(ep, p, err);
		break;
	default:
		break;
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
	sctpt_cq_event(ep, t, p, 0, path->index, what);
}

void sctpt_on_send_failed(struct sctpt_ep *ep, struct sctpt_peer *p, int err)
{
	sctpt_peer_fail(ep, p, err);
}

/* Tells the handlers about path changes the engine made since last time. */
void sctpt_report_paths(struct sctpt_ep *ep)
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
		if (!p->nrails && p->npaths && cur != p->primary_reported &&
		    atomic_load(&p->paths[cur]->up)) {
			p->primary_reported = cur;
			sctpt_on_path(ep, p->paths[cur], SCTPT_EV_PATH_PRIMARY);
		}
	}
}

void sctpt_peer_free(struct sctpt_ep *ep, struct sctpt_peer *p)
{
	sctpt_tx_fail_all(ep, p, -ECANCELED);
	sctpt_rx_abandon(ep, p, -ECANCELED);
	if (p->shm)
		sctpt_shm_peer_free(ep, p);
	sctpt_order_fini(&p->order, NULL); /* nothing is held after abandon */
	for (int i = 0; i < p->nrails; i++)
		sctpt_rfrags_put(ep, &p->rails[i].copies);
	sctpt_rfrags_put(ep, &p->resend);
	free(p->rails);
	free(p->seen.ids);
	for (int i = 0; i < p->npaths; i++)
		free(p->paths[i]);
	free(p->txq);
	free(p->rx);
	free(p->stream_msgs_sent);
	free(p);
}
