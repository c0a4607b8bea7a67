/* The fake SCTP engine of fake_backend.h. Single-threaded tests only. */
#include "fake_backend.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fake_msg {
	STAILQ_ENTRY(fake_msg) link;
	char from[SCTPT_CARD_MAX];
	uint16_t stream;
	size_t len, off;
	uint8_t data[];
};
STAILQ_HEAD(fake_msgq, fake_msg);

#define MAX_EPS 8
#define MAX_RAILS 64

static struct fake_ep {
	struct sctpt_ep *ep;
	struct fake_msgq inbox;
	int ninbox;
	int ups;                 /* connects whose ASSOC_UP is still to be reported */
	struct sctpt_peer *up_peer[64];
	int up_rail[64];
} g_eps[MAX_EPS];

static struct {
	struct sctpt_ep *ep;
	sctpt_peer_t p;
	int i;
	struct fake_rail st;
} g_rails[MAX_RAILS];
static int g_nrails;
static uint16_t g_port = 40000;

static struct fake_ep *fep(struct sctpt_ep *ep)
{
	for (int i = 0; i < MAX_EPS; i++)
		if (g_eps[i].ep == ep)
			return &g_eps[i];
	return NULL;
}

struct fake_rail *fake_rail(struct sctpt_ep *ep, sctpt_peer_t p, int i)
{
	for (int k = 0; k < g_nrails; k++)
		if (g_rails[k].ep == ep && g_rails[k].p == p && g_rails[k].i == i)
			return &g_rails[k].st;
	if (g_nrails == MAX_RAILS)
		abort();
	g_rails[g_nrails].ep = ep;
	g_rails[g_nrails].p = p;
	g_rails[g_nrails].i = i;
	memset(&g_rails[g_nrails].st, 0, sizeof(g_rails[g_nrails].st));
	return &g_rails[g_nrails++].st;
}

void fake_ack(struct sctpt_ep *ep, sctpt_peer_t p, int i)
{
	fake_rail(ep, p, i)->held = 0;
}

void fake_path(struct sctpt_ep *ep, sctpt_peer_t p, int i, int up)
{
	atomic_store(&ep->peers[p]->paths[i]->up, up);
}

void fake_lose(struct sctpt_ep *ep, sctpt_peer_t id)
{
	struct sctpt_peer *p = ep->peers[id];
	pthread_mutex_lock(&ep->lock);
	if (p->nrails)
		for (int i = 0; i < p->nrails; i++)
			sctpt_on_rail(ep, p, &p->rails[i], 0, SCTPT_EV_ASSOC_DOWN);
	else
		sctpt_on_assoc(ep, p, SCTPT_EV_ASSOC_DOWN, -ETIMEDOUT);
	pthread_mutex_unlock(&ep->lock);
}

int fake_inbox(struct sctpt_ep *ep)
{
	return fep(ep)->ninbox;
}

static int f_open(struct sctpt_ep *ep)
{
	struct fake_ep *f = fep(NULL);
	if (!f)
		return sctpt_err(-EMFILE, "fake backend: %d endpoints already", MAX_EPS);
	memset(f, 0, sizeof(*f));
	f->ep = ep;
	STAILQ_INIT(&f->inbox);
	ep->udp_port = g_port++;
	ep->rport = 1;
	return 0;
}

static void f_close(struct sctpt_ep *ep)
{
	struct fake_ep *f = fep(ep);
	struct fake_msg *m;
	while ((m = STAILQ_FIRST(&f->inbox))) {
		STAILQ_REMOVE_HEAD(&f->inbox, link);
		free(m);
	}
	f->ep = NULL;
	for (int k = 0; k < g_nrails; k++)
		if (g_rails[k].ep == ep)
			g_rails[k].ep = NULL;
}

static void queue_up(struct sctpt_ep *ep, struct sctpt_peer *p, int rail)
{
	struct fake_ep *f = fep(ep);
	if (f->ups < 64) {
		f->up_peer[f->ups] = p;
		f->up_rail[f->ups++] = rail;
	}
}

static int f_connect(struct sctpt_ep *ep, struct sctpt_peer *p)
{
	if (p->nrails) {
		for (int i = 0; i < p->nrails; i++) {
			p->rails[i].assoc_out = 100 + (uint32_t)i;
			p->rails[i].live = 1;
			queue_up(ep, p, i);
		}
		return 0;
	}
	p->assoc_out = 1;
	queue_up(ep, p, -1);
	return 0;
}

static int f_rail_connect(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_rail_st *r)
{
	r->assoc_out = 100 + (uint32_t)r->index;
	r->live = 1;
	queue_up(ep, p, r->index);
	return 0;
}

static void f_forget(struct sctpt_ep *ep, struct sctpt_peer *p)
{
	(void)ep;
	(void)p;
}

static int f_send(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_rail_st *r,
		  uint16_t stream, const void *buf, size_t len)
{
	struct fake_rail *fr = fake_rail(ep, p->id, r ? r->index : -1);
	if (fr->fail)
		return -EIO;
	if (fr->full)
		return -EAGAIN;
	fr->sent_msgs++;
	fr->sent_bytes += len;
	if (fr->hold || fr->blackhole)
		fr->held += len;
	if (fr->blackhole)
		return 0;
	struct fake_ep *to = NULL;
	for (int i = 0; i < MAX_EPS && !to; i++)
		if (g_eps[i].ep && strcmp(g_eps[i].ep->card, p->card) == 0)
			to = &g_eps[i];
	if (!to)
		return 0; /* nobody there: lost, as on a wire */
	struct fake_msg *m = malloc(sizeof(*m) + len);
	if (!m)
		return -ENOMEM;
	snprintf(m->from, sizeof(m->from), "%s", ep->card);
	m->stream = stream;
	m->len = len;
	m->off = 0;
	memcpy(m->data, buf, len);
	STAILQ_INSERT_TAIL(&to->inbox, m, link);
	to->ninbox++;
	return 0;
}

static void f_tx(struct sctpt_ep *ep)
{
	(void)ep;
}

static int f_input(struct sctpt_ep *ep)
{
	struct fake_ep *f = fep(ep);
	int n = f->ups;
	for (int i = 0; i < n; i++) {
		struct sctpt_peer *p = f->up_peer[i];
		if (f->up_rail[i] >= 0)
			sctpt_on_rail(ep, p, &p->rails[f->up_rail[i]], 0, SCTPT_EV_ASSOC_UP);
		else
			sctpt_on_assoc(ep, p, SCTPT_EV_ASSOC_UP, 0);
	}
	f->ups = 0;
	return n;
}

static int f_events(struct sctpt_ep *ep)
{
	(void)ep;
	return 0;
}

static int f_recv(struct sctpt_ep *ep, void *buf, size_t len, struct sctpt_peer **peer,
		  uint16_t *stream, int *eor)
{
	struct fake_ep *f = fep(ep);
	struct fake_msg *m = STAILQ_FIRST(&f->inbox);
	if (!m)
		return -EAGAIN;
	size_t n = m->len - m->off < len ? m->len - m->off : len;
	memcpy(buf, m->data + m->off, n);
	m->off += n;
	*peer = NULL;
	for (int i = 0; i < ep->npeers; i++)
		if (strcmp(ep->peers[i]->card, m->from) == 0)
			*peer = ep->peers[i];
	*stream = m->stream;
	*eor = m->off == m->len;
	if (*eor) {
		STAILQ_REMOVE_HEAD(&f->inbox, link);
		f->ninbox--;
		free(m);
	}
	return (int)n;
}

static int64_t f_rail_held(struct sctpt_ep *ep, struct sctpt_rail_st *r)
{
	struct sctpt_peer *p = NULL;
	for (int i = 0; i < ep->npeers && !p; i++)
		if (ep->peers[i]->rails && r >= ep->peers[i]->rails &&
		    r < ep->peers[i]->rails + ep->peers[i]->nrails)
			p = ep->peers[i];
	return p ? (int64_t)fake_rail(ep, p->id, r->index)->held : -1;
}

static void f_rail_info(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_rail_st *r)
{
	(void)ep;
	(void)p;
	r->srtt_us = 100;
}

static int f_unacked(struct sctpt_ep *ep)
{
	int n = 0;
	for (int k = 0; k < g_nrails; k++)
		if (g_rails[k].ep == ep && g_rails[k].st.held && !g_rails[k].st.blackhole)
			n++;
	return n;
}

static int f_peer_stats(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_peer_stats *st)
{
	(void)ep;
	st->npaths = p->npaths;
	return 0;
}

static int f_wait(struct sctpt_ep *ep, int timeout_ms)
{
	(void)ep;
	(void)timeout_ms;
	return 0;
}

static const struct sctpt_backend fake = {
	.name = "fake",
	.open = f_open,
	.close = f_close,
	.connect = f_connect,
	.rail_connect = f_rail_connect,
	.forget = f_forget,
	.send = f_send,
	.tx_begin = f_tx,
	.tx_end = f_tx,
	.input = f_input,
	.events = f_events,
	.recv = f_recv,
	.rail_held = f_rail_held,
	.rail_info = f_rail_info,
	.unacked = f_unacked,
	.peer_stats = f_peer_stats,
	.wait = f_wait,
};

void fake_backend_register(void)
{
	sctpt_backend_register(&fake);
}
