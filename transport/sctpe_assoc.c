/*
 * The association: its state machine (one table below: state x chunk -> handler), the
 * handshake with a signed state cookie (RFC 9260 5.1, 5.2), verification tags (8.5),
 * heartbeats (8.3), graceful shutdown (9.2), ABORT and ERROR, and what the endpoint does
 * with packets no association owns: INIT, COOKIE ECHO and out-of-the-blue packets (8.4).
 */
#include "sctpe_int.h"

#include "sctpe_sha256.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/sm_bytes.h"

static void t1_fire(struct sctpe_timer *t);
static void t2_fire(struct sctpe_timer *t);
static void tsack_fire(struct sctpe_timer *t);
static void hb_fire(struct sctpe_timer *t);

/* ---- creation ---- */

static struct sctpt_sel *sel_of(struct sctpt_peer *p, int rail, int in)
{
	if (rail >= 0)
		return in ? &p->rails[rail].mirror : &p->rails[rail].out;
	return in ? &p->mirror : &p->sel_out;
}

static uint32_t nonzero_random(struct sctpe_ep *e)
{
	uint32_t v;
	while ((v = sctpe_random32(e)) == 0)
		;
	return v;
}

struct sctpe_assoc *sctpe_assoc_new(struct sctpe_ep *e, struct sctpt_peer *p, int rail, int in)
{
	const struct sctpt_config *c = &e->ep->cfg;
	struct sctpe_assoc *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->e = e;
	a->peer = p;
	p->registered = 1; /* the core probes its paths and reports their changes */
	a->rail = rail;
	a->in = in;
	a->sel = sel_of(p, rail, in);
	a->id = ++e->next_id ? e->next_id : ++e->next_id;
	a->fcfs = rail >= 0;
	a->lport = in ? SCTPE_RPORT : SCTPE_SPORT;
	a->rport = in ? (uint16_t)(p->info.sctp_port - 1) : p->info.sctp_port;
	a->my_vtag = nonzero_random(e);
	a->my_itsn = sctpe_random32(e);
	a->mis = c->streams;
	sctpe_timer_init(&a->t1, t1_fire);
	sctpe_timer_init(&a->t2, t2_fire);
	sctpe_timer_init(&a->tsack, tsack_fire);
	sctpe_timer_init(&a->thb, hb_fire);
	if (sctpe_out_init(a) != 0) {
		free(a);
		return NULL;
	}
	sctpe_cc_init(&a->cc, e->ep->mtu, (uint32_t)c->sndbuf, (uint32_t)c->rto_initial_ms,
		      (uint32_t)c->rto_min_ms, (uint32_t)c->rto_max_ms);
	TAILQ_INSERT_TAIL(&e->all, a, link);
	return a;
}

void sctpe_assoc_free(struct sctpe_assoc *a)
{
	struct sctpe_ep *e = a->e;
	struct sctpe_assoc **slot = sctpe_slot(e, a->peer, a->rail, a->in);
	if (slot && *slot == a)
		*slot = NULL;
	sctpe_fifo_drop(e, a);
	if (a->on_flush)
		TAILQ_REMOVE(&e->flush, a, flink);
	if (a->on_events)
		TAILQ_REMOVE(&e->events, a, elink);
	TAILQ_REMOVE(&e->all, a, link);
	sctpe_timer_stop(&e->wheel, &a->t1);
	sctpe_timer_stop(&e->wheel, &a->t2);
	sctpe_timer_stop(&e->wheel, &a->tsack);
	sctpe_timer_stop(&e->wheel, &a->thb);
	sctpe_out_fini(a);
	sctpe_in_fini(a);
	free(a->cookie);
	free(a);
}

void sctpe_assoc_end(struct sctpe_assoc *a, int err)
{
	struct sctpe_ep *e = a->e;
	if (a->dead)
		return;
	if (e->debug)
		sctpe_assoc_print(a, stderr);
	a->state = SCTPE_CLOSED;
	a->dead = 1;
	struct sctpe_assoc **slot = sctpe_slot(e, a->peer, a->rail, a->in);
	if (slot && *slot == a)
		*slot = NULL; /* a new association may take its place */
	sctpe_timer_stop(&e->wheel, &a->t1);
	sctpe_timer_stop(&e->wheel, &a->t2);
	sctpe_timer_stop(&e->wheel, &a->tsack);
	sctpe_timer_stop(&e->wheel, &a->thb);
	sctpe_out_fini(a);
	if (a->on_flush) {
		TAILQ_REMOVE(&e->flush, a, flink);
		a->on_flush = 0;
	}
	/* what was delivered stays readable; the event follows it */
	sctpe_want_event(a, err ? SCTPE_EV_DOWN : 0, err);
}

/* ---- sending control chunks ---- */

static void raw_send(struct sctpe_ep *e, struct sctpt_sel *sel, uint16_t sport, uint16_t dport,
		     uint32_t vtag, uint8_t type, uint8_t flags, const void *body, size_t len)
{
	struct sctpe_pb b;
	sctpe_pb_init(&b, e->pkt, sizeof(e->pkt), sport, dport, vtag);
	uint8_t *c = sctpe_pb_chunk(&b, type, flags, SCTPE_CHUNK_HDR_LEN + len);
	if (!c)
		return;
	if (len)
		memcpy(c + SCTPE_CHUNK_HDR_LEN, body, len);
	sctpe_send(e, sel, e->pkt, sctpe_pb_finish(&b, e->crc));
}

void sctpe_ctrl(struct sctpe_assoc *a, uint8_t type, uint8_t flags, const void *body, size_t len)
{
	uint32_t vtag = (flags & SCTPE_FLAG_T) ? a->my_vtag : a->peer_vtag;
	raw_send(a->e, a->sel, a->lport, a->rport, vtag, type, flags, body, len);
}

static size_t cause_put(uint8_t *out, size_t cap, uint16_t code, const void *val, size_t vlen)
{
	size_t len = SCTPE_CAUSE_HDR_LEN + vlen;
	if (SCTPE_PAD4(len) > cap)
		return 0;
	sm_put_be16(out, code);
	sm_put_be16(out + 2, (uint16_t)len);
	if (vlen)
		memcpy(out + SCTPE_CAUSE_HDR_LEN, val, vlen);
	memset(out + len, 0, SCTPE_PAD4(len) - len);
	return len;
}

void sctpe_assoc_abort(struct sctpe_assoc *a, uint16_t cause, const char *text, int err)
{
	uint8_t body[256];
	size_t n = 0;
	if (a->dead)
		return;
	if (cause)
		n = cause_put(body, sizeof(body), cause, text, text ? strlen(text) : 0);
	if (a->e->debug)
		fprintf(stderr, "sctpe %d: ABORT to %s (%s): cause %u %s, state %d\n", (int)getpid(),
			a->peer->card, a->in ? "in" : "out", cause, text ? text : "", a->state);
	if (a->peer_vtag) { /* known once the handshake got that far */
		sctpe_ctrl(a, SCTPE_ABORT, 0, body, n);
		a->e->st.aborts_out++;
	}
	sctpe_assoc_end(a, err);
}

/* ---- INIT and INIT ACK ---- */

static int idata_wanted(const struct sctpe_ep *e)
{
	(void)e;
	const char *v = getenv("SCTPT_NATIVE_IDATA");
	return !v || strcmp(v, "0") != 0;
}

static void put_init(struct sctpe_assoc *a, struct sctpe_pb *b, uint8_t type, uint32_t itag,
		     uint32_t itsn)
{
	const struct sctpt_config *c = &a->e->ep->cfg;
	uint8_t *ch = sctpe_pb_open(b, type, 0, SCTPE_INIT_FIXED_LEN);
	uint32_t rwnd = c->rcvbuf > (1u << 30) ? (1u << 30) : (uint32_t)c->rcvbuf;
	sm_put_be32(ch + SCTPE_INIT_OFF_ITAG, itag);
	sm_put_be32(ch + SCTPE_INIT_OFF_ARWND, rwnd);
	sm_put_be16(ch + SCTPE_INIT_OFF_OS, c->streams);
	sm_put_be16(ch + SCTPE_INIT_OFF_MIS, c->streams);
	sm_put_be32(ch + SCTPE_INIT_OFF_ITSN, itsn);
	if (idata_wanted(a->e)) {
		uint8_t ext[1] = {SCTPE_I_DATA};
		sctpe_pb_param(b, SCTPE_P_SUPPORTED_EXT, ext, sizeof(ext));
	}
	sctpe_pb_close(b, ch);
}

static void send_init(struct sctpe_assoc *a)
{
	struct sctpe_pb b;
	struct sctpe_ep *e = a->e;
	sctpe_pb_init(&b, e->pkt, sizeof(e->pkt), a->lport, a->rport, 0);
	put_init(a, &b, SCTPE_INIT, a->my_vtag, a->my_itsn);
	sctpe_output(a, e->pkt, sctpe_pb_finish(&b, e->crc));
}

static void send_cookie_echo(struct sctpe_assoc *a)
{
	sctpe_ctrl(a, SCTPE_COOKIE_ECHO, 0, a->cookie, a->cookie_len);
}

int sctpe_assoc_connect(struct sctpe_assoc *a)
{
	a->state = SCTPE_COOKIE_WAIT;
	a->init_tries = 1;
	send_init(a);
	sctpe_timer_arm(&a->e->wheel, &a->t1, a->e->wheel.now + a->cc.rto_ms);
	return 0;
}

/* What an INIT or INIT ACK says beyond its fixed part. */
struct init_params {
	int idata;                       /* lists I-DATA */
	const uint8_t *cookie;
	size_t cookie_len;
	uint8_t unrec[512];              /* Unrecognized Parameter parameters to send back */
	size_t unrec_len;
};

/* Walks parameters by RFC 9260 3.2.1's rules for the unknown ones. */
static void scan_params(const struct sctpe_init *in, struct init_params *ip)
{
	struct sctpe_iter it;
	struct sctpe_tlv t;
	memset(ip, 0, sizeof(*ip));
	sctpe_tlv_iter(&it, in->params, in->plen);
	while (sctpe_tlv_next(&it, &t) == 1) {
		switch (t.type) {
		case SCTPE_P_STATE_COOKIE:
			ip->cookie = t.val;
			ip->cookie_len = t.vlen;
			continue;
		case SCTPE_P_SUPPORTED_EXT:
			for (size_t i = 0; i < t.vlen; i++)
				ip->idata |= t.val[i] == SCTPE_I_DATA;
			continue;
		case SCTPE_P_IPV4:
		case SCTPE_P_IPV6:
		case SCTPE_P_COOKIE_PRESERVATIVE:
		case SCTPE_P_SUPPORTED_ADDR_TYPES:
		case SCTPE_P_UNRECOGNIZED:
			continue; /* paths are the core's; the rest needs nothing */
		}
		if ((t.type & SCTPE_PARAM_REPORT) &&
		    ip->unrec_len + SCTPE_PARAM_HDR_LEN + SCTPE_PAD4(t.len) <= sizeof(ip->unrec)) {
			uint8_t *u = ip->unrec + ip->unrec_len;
			sm_put_be16(u, SCTPE_P_UNRECOGNIZED);
			sm_put_be16(u + 2, (uint16_t)(SCTPE_PARAM_HDR_LEN + t.len));
			memcpy(u + SCTPE_PARAM_HDR_LEN, t.val - SCTPE_PARAM_HDR_LEN, t.len);
			memset(u + SCTPE_PARAM_HDR_LEN + t.len, 0, SCTPE_PAD4(t.len) - t.len);
			ip->unrec_len += SCTPE_PARAM_HDR_LEN + SCTPE_PAD4(t.len);
		}
		if (!(t.type & SCTPE_PARAM_SKIP))
			break; /* stop processing parameters */
	}
}

/* ---- the state cookie ---- */

#define COOKIE_VERSION 1
#define COOKIE_MAC_OFF 48
#define COOKIE_LEN (COOKIE_MAC_OFF + SCTPE_SHA256_LEN)

struct cookie {
	int peer_idata;
	uint64_t created_ms;
	uint32_t my_vtag, peer_vtag, my_itsn, peer_itsn, peer_arwnd;
	uint16_t os, mis, lport, rport;
	uint32_t tie_my, tie_peer;
};

static void cookie_encode(struct sctpe_ep *e, const struct cookie *k, uint8_t out[COOKIE_LEN])
{
	memset(out, 0, COOKIE_LEN);
	out[0] = COOKIE_VERSION;
	out[1] = (uint8_t)(k->peer_idata ? 1 : 0);
	sm_put_be64(out + 4, k->created_ms);
	sm_put_be32(out + 12, k->my_vtag);
	sm_put_be32(out + 16, k->peer_vtag);
	sm_put_be32(out + 20, k->my_itsn);
	sm_put_be32(out + 24, k->peer_itsn);
	sm_put_be32(out + 28, k->peer_arwnd);
	sm_put_be16(out + 32, k->os);
	sm_put_be16(out + 34, k->mis);
	sm_put_be16(out + 36, k->lport);
	sm_put_be16(out + 38, k->rport);
	sm_put_be32(out + 40, k->tie_my);
	sm_put_be32(out + 44, k->tie_peer);
	sctpe_hmac_sha256(e->secret, sizeof(e->secret), out, COOKIE_MAC_OFF, out + COOKIE_MAC_OFF);
}

/* 0, -EBADMSG (not ours, or forged), -ETIMEDOUT (stale: *stale_us how much). */
static int cookie_decode(struct sctpe_ep *e, const uint8_t *p, size_t len, struct cookie *k,
			 uint32_t *stale_us)
{
	uint8_t mac[SCTPE_SHA256_LEN];
	if (len != COOKIE_LEN || p[0] != COOKIE_VERSION)
		return -EBADMSG;
	sctpe_hmac_sha256(e->secret, sizeof(e->secret), p, COOKIE_MAC_OFF, mac);
	uint8_t diff = 0;
	for (int i = 0; i < SCTPE_SHA256_LEN; i++)
		diff |= (uint8_t)(mac[i] ^ p[COOKIE_MAC_OFF + i]);
	if (diff)
		return -EBADMSG;
	k->peer_idata = p[1] & 1;
	k->created_ms = sm_get_be64(p + 4);
	k->my_vtag = sm_get_be32(p + 12);
	k->peer_vtag = sm_get_be32(p + 16);
	k->my_itsn = sm_get_be32(p + 20);
	k->peer_itsn = sm_get_be32(p + 24);
	k->peer_arwnd = sm_get_be32(p + 28);
	k->os = sm_get_be16(p + 32);
	k->mis = sm_get_be16(p + 34);
	k->lport = sm_get_be16(p + 36);
	k->rport = sm_get_be16(p + 38);
	k->tie_my = sm_get_be32(p + 40);
	k->tie_peer = sm_get_be32(p + 44);
	uint64_t now = sctpt_now_ms();
	if (now > k->created_ms + e->cookie_life_ms) {
		uint64_t us = (now - k->created_ms - e->cookie_life_ms) * 1000u;
		*stale_us = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
		return -ETIMEDOUT;
	}
	return 0;
}

/* ---- the handlers of the state table ---- */

/* What a packet's chunks leave for after the packet. */
struct pctx {
	const struct sctpe_hdr *h;
	int data;         /* it carried DATA */
	int sack_now;     /* ... that asks for a SACK at once */
	int stop;         /* the rest of the packet is not processed */
};

typedef void (*handler_fn)(struct sctpe_assoc *a, const struct sctpe_chunk *c, struct pctx *x);

static void h_discard(struct sctpe_assoc *a, const struct sctpe_chunk *c, struct pctx *x)
{
	(void)a, (void)c, (void)x;
}

static void established(struct sctpe_assoc *a)
{
	const struct sctpt_config *c = &a->e->ep->cfg;
	a->state = SCTPE_ESTABLISHED;
	a->errors = a->path_errors = 0;
	sctpe_timer_stop(&a->e->wheel, &a->t1);
	free(a->cookie);
	a->cookie = NULL;
	if (c->hb_interval_ms > 0)
		sctpe_timer_arm(&a->e->wheel, &a->thb,
				a->e->wheel.now + (uint64_t)c->hb_interval_ms + a->cc.rto_ms);
	sctpe_want_flush(a);
}

static void h_init_ack(struct sctpe_assoc *a, const struct sctpe_chunk *c, struct pctx *x)
{
	struct sctpe_init in;
	struct init_params ip;
	if (sctpe_init_decode(c, &in) != 0 || in.itag == 0) {
		a->e->st.malformed++;
		x->stop = 1;
		return;
	}
	if (in.os == 0 || in.mis == 0) {
		a->peer_vtag = in.itag;
		sctpe_assoc_abort(a, SCTPE_E_INVALID_PARAM, NULL, -ECONNREFUSED);
		x->stop = 1;
		return;
	}
	scan_params(&in, &ip);
	if (!ip.cookie || ip.cookie_len == 0 || ip.cookie_len > 4096) {
		uint8_t v[8], body[16]; /* Missing Mandatory Parameter: one, the State Cookie */
		sm_put_be32(v, 1);
		sm_put_be16(v + 4, SCTPE_P_STATE_COOKIE);
		sm_put_be16(v + 6, 0);
		size_t n = cause_put(body, sizeof(body), SCTPE_E_MISSING_PARAM, v, 6);
		a->peer_vtag = in.itag;
		sctpe_ctrl(a, SCTPE_ABORT, 0, body, n);
		sctpe_assoc_end(a, -ECONNREFUSED);
		x->stop = 1;
		return;
	}
	const struct sctpt_config *cfg = &a->e->ep->cfg;
	a->peer_vtag = in.itag;
	a->os = in.mis < cfg->streams ? in.mis : cfg->streams;
	a->mis = in.os < cfg->streams ? in.os : cfg->streams;
	a->idata = ip.idata && idata_wanted(a->e);
	a->peer_rwnd = in.arwnd;
	if (sctpe_in_init(a, in.itsn) != 0) {
		sctpe_assoc_abort(a, SCTPE_E_OUT_OF_RESOURCE, NULL, -ENOMEM);
		x->stop = 1;
		return;
	}
	sctpe_cc_init(&a->cc, a->e->ep->mtu, in.arwnd, (uint32_t)cfg->rto_initial_ms,
		      (uint32_t)cfg->rto_min_ms, (uint32_t)cfg->rto_max_ms);
	a->cookie = malloc(ip.cookie_len);
	if (!a->cookie) {
		sctpe_assoc_abort(a, SCTPE_E_OUT_OF_RESOURCE, NULL, -ENOMEM);
		x->stop = 1;
		return;
	}
	memcpy(a->cookie, ip.cookie, ip.cookie_len);
	a->cookie_len = (uint16_t)ip.cookie_len;
	a->state = SCTPE_COOKIE_ECHOED;
	a->init_tries = 1;
	send_cookie_echo(a);
	sctpe_timer_arm(&a->e->wheel, &a->t1, a->e->wheel.now + a->cc.rto_ms);
}

static void h_cookie_ack(struct sctpe_assoc *a, const struct sctpe_chunk *c, struct pctx *x)
{
	(void)c, (void)x;
	established(a);
	sctpe_want_event(a, SCTPE_EV_UP, 0);
}

static void h_data(struct sctpe_assoc *a, const struct sctpe_chunk *c, struct pctx *x)
{
	struct sctpe_data d;
	uint16_t cause;
	if (sctpe_data_decode(c, &d) != 0) {
		a->e->st.malformed++;
		x->stop = 1;
		return;
	}
	if (a->state == SCTPE_SHUTDOWN_RECEIVED || a->state == SCTPE_SHUTDOWN_ACK_SENT)
		return; /* 9.2: nothing new after the peer's SHUTDOWN */
	int rc = sctpe_in_data(a, &d, &cause);
	if (rc) {
		char why[64];
		snprintf(why, sizeof(why), "bad %s TSN %u stream %u", d.idata ? "I-DATA" : "DATA",
			 d.tsn, d.sid);
		sctpe_assoc_abort(a, cause, why, -EPROTO);
		x->stop = 1;
		return;
	}
	x->data = 1;
	if (d.flags & SCTPE_DATA_I)
		x->sack_now = 1;
	if (a->state == SCTPE_SHUTDOWN_SENT)
		x->sack_now = 1; /* 9.2: SACK and SHUTDOWN for every DATA in SHUTDOWN-SENT */
}

static void h_sack(struct sctpe_assoc *a, const struct sctpe_chunk *c, struct pctx *x)
{
	struct sctpe_sack s;
	if (sctpe_sack_decode(c, &s) != 0) {
		a->e->st.malformed++;
		x->stop = 1;
		return;
	}
	if (sctpe_out_sack(a, &s) != 0) {
		a->e->st.bad_sacks++;
		sctpe_assoc_abort(a, SCTPE_E_PROTOCOL_VIOLATION, "SACK of data never sent", -EPROTO);
		x->stop = 1;
	}
}

static void h_heartbeat(struct sctpe_assoc *a, const struct sctpe_chunk *c, struct pctx *x)
{
	struct sctpe_tlv info;
	if (sctpe_heartbeat_decode(c, &info) != 0) {
		a->e->st.malformed++;
		x->stop = 1;
		return;
	}
	/* the info parameter goes back as it came */
	sctpe_ctrl(a, SCTPE_HEARTBEAT_ACK, 0, c->p + SCTPE_HB_FIXED_LEN,
		   c->len - (size_t)SCTPE_HB_FIXED_LEN);
}

static void h_heartbeat_ack(struct sctpe_assoc *a, const struct sctpe_chunk *c, struct pctx *x)
{
	struct sctpe_tlv info;
	if (sctpe_heartbeat_decode(c, &info) != 0 || info.vlen != 16) {
		a->e->st.malformed++;
		x->stop = 1;
		return;
	}
	if (sm_get_be64(info.val) != a->hb_nonce || !a->hb_out)
		return; /* not the one we sent */
	uint64_t sent = sm_get_be64(info.val + 8), now = sctpe_clock_us();
	a->hb_out = 0;
	a->errors = 0;
	a->path_errors = 0;
	if (now > sent && now - sent < 60000000u)
		sctpe_cc_rtt(&a->cc, (uint32_t)(now - sent));
}

static void h_abort(struct sctpe_assoc *a, const struct sctpe_chunk *c, struct pctx *x)
{
	a->e->st.aborts_in++;
	if (a->e->debug)
		fprintf(stderr, "sctpe %d: ABORT from %s (%s) state %d, %u bytes: %.*s\n",
			(int)getpid(), a->peer->card, a->in ? "in" : "out", a->state, c->len,
			c->len > 8 ? c->len - 8 : 0, c->len > 8 ? (const char *)c->p + 8 : "");
	sctpe_assoc_end(a, a->state <= SCTPE_COOKIE_ECHOED ? -ECONNREFUSED : -ECONNRESET);
	x->stop = 1;
}

static void send_shutdown(struct sctpe_assoc *a)
{
	uint8_t b[4];
	sm_put_be32(b, a->ins ? a->tsn.cum : 0);
	sctpe_ctrl(a, SCTPE_SHUTDOWN, 0, b, sizeof(b));
}

static void h_shutdown(struct sctpe_assoc *a, const struct sctpe_chunk *c, struct pctx *x)
{
	uint32_t cum;
	if (sctpe_shutdown_decode(c, &cum) != 0) {
		a->e->st.malformed++;
		x->stop = 1;
		return;
	}
	/* its cumulative ack acknowledges like a SACK's (9.2) */
	struct sctpe_sack s = {.cum = cum, .arwnd = a->peer_rwnd + a->cc.flight};
	if (sctpe_out_sack(a, &s) != 0) {
		sctpe_assoc_abort(a, SCTPE_E_PROTOCOL_VIOLATION, "SHUTDOWN of data never sent",
				  -EPROTO);
		x->stop = 1;
		return;
	}
	if (a->state == SCTPE_SHUTDOWN_SENT || a->state == SCTPE_SHUTDOWN_ACK_SENT) {
		/* both ends shut down (9.2) */
		a->state = SCTPE_SHUTDOWN_ACK_SENT;
		sctpe_timer_stop(&a->e->wheel, &a->t2);
		a->shutdown_tries = 0;
		sctpe_ctrl(a, SCTPE_SHUTDOWN_ACK, 0, NULL, 0);
		sctpe_timer_arm(&a->e->wheel, &a->t2, a->e->wheel.now + a->cc.rto_ms);
		return;
	}
	if (a->state != SCTPE_SHUTDOWN_RECEIVED) {
		a->state = SCTPE_SHUTDOWN_RECEIVED;
		a->peer_shutdown = 1;
		if (a->in)
			sctpe_want_event(a, SCTPE_EV_DOWN, -ECONNRESET);
	}
	if (sctpe_out_idle(a))
		sctpe_assoc_drained(a);
}

static void h_shutdown_ack(struct sctpe_assoc *a, const struct sctpe_chunk *c, struct pctx *x)
{
	(void)c;
	sctpe_ctrl(a, SCTPE_SHUTDOWN_COMPLETE, 0, NULL, 0);
	sctpe_assoc_end(a, -ECONNRESET);
	x->stop = 1;
}

static void h_shutdown_complete(struct sctpe_assoc *a, const struct sctpe_chunk *c,
				struct pctx *x)
{
	(void)c;
	sctpe_assoc_end(a, -ECONNRESET);
	x->stop = 1;
}

static void h_error(struct sctpe_assoc *a, const struct sctpe_chunk *c, struct pctx *x)
{
	struct sctpe_iter it;
	struct sctpe_tlv t;
	(void)x;
	sctpe_tlv_iter(&it, c->p + SCTPE_CHUNK_HDR_LEN, c->len - (size_t)SCTPE_CHUNK_HDR_LEN);
	while (sctpe_tlv_next(&it, &t) == 1) {
		if (t.type == SCTPE_E_STALE_COOKIE && a->state == SCTPE_COOKIE_ECHOED) {
			/* 5.2.6: start over with a fresh INIT */
			free(a->cookie);
			a->cookie = NULL;
			sctpe_in_fini(a);
			a->state = SCTPE_COOKIE_WAIT;
			send_init(a);
			sctpe_timer_arm(&a->e->wheel, &a->t1, a->e->wheel.now + a->cc.rto_ms);
			return;
		}
	}
}

/* Chunk kinds: the table's columns. */
enum {
	K_DATA, K_INIT_ACK, K_SACK, K_HB, K_HB_ACK, K_ABORT, K_SHUTDOWN, K_SHUTDOWN_ACK,
	K_ERROR, K_COOKIE_ACK, K_SHUTDOWN_COMPLETE, K_OTHER, NKINDS
};

static int kind_of(uint8_t type)
{
	switch (type) {
	case SCTPE_DATA:
	case SCTPE_I_DATA: return K_DATA;
	case SCTPE_INIT_ACK: return K_INIT_ACK;
	case SCTPE_SACK: return K_SACK;
	case SCTPE_HEARTBEAT: return K_HB;
	case SCTPE_HEARTBEAT_ACK: return K_HB_ACK;
	case SCTPE_ABORT: return K_ABORT;
	case SCTPE_SHUTDOWN: return K_SHUTDOWN;
	case SCTPE_SHUTDOWN_ACK: return K_SHUTDOWN_ACK;
	case SCTPE_ERROR: return K_ERROR;
	case SCTPE_COOKIE_ACK: return K_COOKIE_ACK;
	case SCTPE_SHUTDOWN_COMPLETE: return K_SHUTDOWN_COMPLETE;
	default: return K_OTHER;
	}
}

#define D h_discard
/* The state machine: what each chunk does in each state (INIT and COOKIE ECHO are the
 * endpoint's, sctpe_ep_input_noassoc; unknown chunks follow their type's high bits). */
static const handler_fn g_table[SCTPE_NSTATES][NKINDS] = {
	/*                DATA    INIT_ACK    SACK    HB           HB_ACK           ABORT    SHUTDOWN    SHUTDOWN_ACK    ERROR    COOKIE_ACK    SHUTDOWN_COMPLETE    OTHER */
	[SCTPE_CLOSED] = {D, D, D, D, D, D, D, D, D, D, D, D},
	[SCTPE_COOKIE_WAIT] = {D, h_init_ack, D, D, D, h_abort, D, D, h_error, D, D, D},
	[SCTPE_COOKIE_ECHOED] = {D, D, D, D, D, h_abort, D, D, h_error, h_cookie_ack, D, D},
	[SCTPE_ESTABLISHED] = {h_data, D, h_sack, h_heartbeat, h_heartbeat_ack, h_abort,
			       h_shutdown, D, h_error, D, D, D},
	[SCTPE_SHUTDOWN_PENDING] = {h_data, D, h_sack, h_heartbeat, h_heartbeat_ack, h_abort,
				    h_shutdown, D, h_error, D, D, D},
	[SCTPE_SHUTDOWN_SENT] = {h_data, D, h_sack, h_heartbeat, h_heartbeat_ack, h_abort,
				 h_shutdown, h_shutdown_ack, h_error, D, D, D},
	[SCTPE_SHUTDOWN_RECEIVED] = {h_data, D, h_sack, h_heartbeat, h_heartbeat_ack, h_abort,
				     h_shutdown, D, h_error, D, D, D},
	[SCTPE_SHUTDOWN_ACK_SENT] = {D, D, D, h_heartbeat, h_heartbeat_ack, h_abort, h_shutdown,
				     h_shutdown_ack, h_error, D, h_shutdown_complete, D},
};
#undef D

/* An unknown chunk type (3.2): 1 if the rest of the packet is not processed. */
static int unknown_chunk(struct sctpe_assoc *a, const struct sctpe_chunk *c)
{
	a->e->st.unknown_chunks++;
	if (c->type & SCTPE_CHUNK_REPORT) {
		uint8_t body[64];
		size_t part = c->len < 32 ? c->len : 32;
		size_t n = cause_put(body, sizeof(body), SCTPE_E_UNRECOGNIZED_CHUNK, c->p, part);
		sctpe_ctrl(a, SCTPE_ERROR, 0, body, n);
	}
	return !(c->type & SCTPE_CHUNK_SKIP);
}

/* 8.5.1: which tag a packet must carry. ABORT and SHUTDOWN COMPLETE with the T bit carry
 * the peer's own. */
static int tag_ok(const struct sctpe_assoc *a, const struct sctpe_hdr *h, const uint8_t *pkt,
		  size_t len)
{
	if (h->vtag == a->my_vtag && a->my_vtag)
		return 1;
	struct sctpe_hdr h2;
	struct sctpe_iter it;
	struct sctpe_chunk c;
	if (sctpe_packet_parse(pkt, len, &h2, &it) != 0 || sctpe_chunk_next(&it, &c) != 1)
		return 0;
	if ((c.type == SCTPE_ABORT || c.type == SCTPE_SHUTDOWN_COMPLETE) &&
	    (c.flags & SCTPE_FLAG_T) && a->peer_vtag && h->vtag == a->peer_vtag)
		return 1;
	/* 8.5.1 B: an ABORT in COOKIE-WAIT may come before we know the peer's tag */
	return c.type == SCTPE_ABORT && a->state == SCTPE_COOKIE_WAIT &&
	       !(c.flags & SCTPE_FLAG_T) && h->vtag == a->my_vtag;
}

void sctpe_assoc_input(struct sctpe_assoc *a, const struct sctpe_hdr *h, const uint8_t *pkt,
		       size_t len)
{
	struct sctpe_ep *e = a->e;
	struct sctpe_iter it;
	struct sctpe_chunk c;
	struct pctx x = {.h = h};
	if (!tag_ok(a, h, pkt, len)) {
		e->st.bad_vtag++;
		return;
	}
	sctpe_packet_parse(pkt, len, (struct sctpe_hdr[1]){0}, &it);
	int rc;
	while (!x.stop && !a->dead && (rc = sctpe_chunk_next(&it, &c)) != 0) {
		if (rc < 0) {
			e->st.malformed++;
			break;
		}
		int k = kind_of(c.type);
		if (k == K_OTHER && c.type != SCTPE_INIT && c.type != SCTPE_COOKIE_ECHO) {
			if (unknown_chunk(a, &c))
				break;
			continue;
		}
		if (c.type == SCTPE_INIT || c.type == SCTPE_COOKIE_ECHO)
			continue; /* only the first chunk of a packet; not with a tag */
		g_table[a->state][k](a, &c, &x);
	}
	if (x.data && !a->dead)
		sctpe_in_packet_done(a, x.sack_now);
	if (x.data && !a->dead && a->state == SCTPE_SHUTDOWN_SENT)
		send_shutdown(a);
}

/* ---- timers ---- */

static void t1_fire(struct sctpe_timer *t)
{
	struct sctpe_assoc *a = sctpe_container(t, struct sctpe_assoc, t1);
	if (a->state != SCTPE_COOKIE_WAIT && a->state != SCTPE_COOKIE_ECHOED)
		return;
	if (++a->init_tries > SCTPE_MAX_INIT_RETRANS) {
		sctpe_assoc_end(a, -ECONNREFUSED); /* as CANT_STR_ASSOC */
		return;
	}
	a->cc.rto_ms = a->cc.rto_ms * 2 > a->cc.rto_max_ms ? a->cc.rto_max_ms : a->cc.rto_ms * 2;
	if (a->state == SCTPE_COOKIE_WAIT)
		send_init(a);
	else
		send_cookie_echo(a);
	sctpe_timer_arm(&a->e->wheel, &a->t1, a->e->wheel.now + a->cc.rto_ms);
}

static void t2_fire(struct sctpe_timer *t)
{
	struct sctpe_assoc *a = sctpe_container(t, struct sctpe_assoc, t2);
	if (a->state != SCTPE_SHUTDOWN_SENT && a->state != SCTPE_SHUTDOWN_ACK_SENT)
		return;
	if (sctpe_assoc_timeout(a) != 0)
		return;
	a->cc.rto_ms = a->cc.rto_ms * 2 > a->cc.rto_max_ms ? a->cc.rto_max_ms : a->cc.rto_ms * 2;
	if (a->state == SCTPE_SHUTDOWN_SENT)
		send_shutdown(a);
	else
		sctpe_ctrl(a, SCTPE_SHUTDOWN_ACK, 0, NULL, 0);
	sctpe_timer_arm(&a->e->wheel, &a->t2, a->e->wheel.now + a->cc.rto_ms);
}

static void tsack_fire(struct sctpe_timer *t)
{
	struct sctpe_assoc *a = sctpe_container(t, struct sctpe_assoc, tsack);
	a->sack_due = 1;
	sctpe_want_flush(a);
}

static void hb_fire(struct sctpe_timer *t)
{
	struct sctpe_assoc *a = sctpe_container(t, struct sctpe_assoc, thb);
	struct sctpe_ep *e = a->e;
	const struct sctpt_config *c = &e->ep->cfg;
	if (a->hb_out && sctpe_assoc_timeout(a) != 0)
		return;
	/* 8.3: heartbeats go while no data is outstanding (T3-rtx watches the rest) */
	if (!sctpe_timer_armed(&a->t3)) {
		uint8_t info[SCTPE_PARAM_HDR_LEN + 16];
		a->hb_nonce = (uint64_t)sctpe_random32(e) << 32 | sctpe_random32(e);
		sm_put_be16(info, SCTPE_P_HEARTBEAT_INFO);
		sm_put_be16(info + 2, sizeof(info));
		sm_put_be64(info + 4, a->hb_nonce);
		sm_put_be64(info + 12, sctpe_clock_us());
		sctpe_ctrl(a, SCTPE_HEARTBEAT, 0, info, sizeof(info));
		a->hb_out = 1;
	} else {
		a->hb_out = 0;
	}
	/* jitter: RTO +- 50% (8.3) */
	uint64_t rto = a->cc.rto_ms, jit = rto ? sctpe_random32(e) % (rto + 1) : 0;
	sctpe_timer_arm(&e->wheel, &a->thb, e->wheel.now + (uint64_t)c->hb_interval_ms + rto / 2 + jit);
}

int sctpe_assoc_timeout(struct sctpe_assoc *a)
{
	const struct sctpt_config *c = &a->e->ep->cfg;
	a->errors++;
	a->path_errors++;
	if (a->errors > c->assoc_max_retrans) {
		sctpe_assoc_abort(a, SCTPE_E_USER_ABORT, "too many retransmissions", -ETIMEDOUT);
		return 1;
	}
	struct sctpt_peer *p = a->peer;
	if (a->path_errors > c->path_max_retrans && a->rail < 0 && p->npaths > 1) {
		/* the path failed: the selector moves on, as on usrsctp's ADDR_UNREACHABLE */
		int cur = atomic_load(&a->sel->cur);
		atomic_store(&p->paths[cur]->up, 0);
		atomic_store(&a->sel->cur, sctpt_path_next(p, cur));
		a->path_errors = 0;
	}
	return 0;
}

/* ---- graceful shutdown ---- */

void sctpe_assoc_drained(struct sctpe_assoc *a)
{
	struct sctpe_wheel *w = &a->e->wheel;
	if (a->state == SCTPE_SHUTDOWN_PENDING) {
		a->state = SCTPE_SHUTDOWN_SENT;
		a->shutdown_tries = 0;
		send_shutdown(a);
		sctpe_timer_arm(w, &a->t2, w->now + a->cc.rto_ms);
	} else if (a->state == SCTPE_SHUTDOWN_RECEIVED) {
		a->state = SCTPE_SHUTDOWN_ACK_SENT;
		sctpe_ctrl(a, SCTPE_SHUTDOWN_ACK, 0, NULL, 0);
		sctpe_timer_arm(w, &a->t2, w->now + a->cc.rto_ms);
	}
}

void sctpe_assoc_shutdown(struct sctpe_assoc *a)
{
	if (a->dead)
		return;
	if (a->state == SCTPE_COOKIE_WAIT || a->state == SCTPE_COOKIE_ECHOED) {
		sctpe_assoc_end(a, -ECONNRESET);
		return;
	}
	a->want_shutdown = 1;
	if (a->state == SCTPE_ESTABLISHED)
		a->state = SCTPE_SHUTDOWN_PENDING;
	if (sctpe_out_idle(a))
		sctpe_assoc_drained(a);
}

/* ---- packets without an association ---- */

static void reply_abort_t(struct sctpe_ep *e, struct sctpt_sel *sel, const struct sctpe_hdr *h,
			  uint32_t vtag, int t_bit)
{
	e->st.aborts_out++;
	raw_send(e, sel, h->dport, h->sport, vtag, SCTPE_ABORT, t_bit ? SCTPE_FLAG_T : 0, NULL, 0);
}

/* An INIT on our receive port: INIT ACK with a signed cookie, no state kept (5.1). */
static void on_init(struct sctpe_ep *e, struct sctpt_peer *p, int rail, const struct sctpe_hdr *h,
		    const struct sctpe_chunk *c)
{
	const struct sctpt_config *cfg = &e->ep->cfg;
	struct sctpt_sel *sel = sel_of(p, rail, 1);
	struct sctpe_init in;
	struct init_params ip;
	if (h->vtag != 0 || sctpe_init_decode(c, &in) != 0 || in.itag == 0) {
		e->st.malformed++;
		return; /* 3.3.2: a zero tag is discarded silently */
	}
	if (in.os == 0 || in.mis == 0) {
		uint8_t body[16];
		size_t n = cause_put(body, sizeof(body), SCTPE_E_INVALID_PARAM, NULL, 0);
		raw_send(e, sel, h->dport, h->sport, in.itag, SCTPE_ABORT, 0, body, n);
		return;
	}
	scan_params(&in, &ip);
	struct sctpe_assoc **slot = sctpe_slot(e, p, rail, 1), *old = slot ? *slot : NULL;
	struct cookie k = {
		.peer_idata = ip.idata,
		.created_ms = sctpt_now_ms(),
		.my_vtag = nonzero_random(e),
		.peer_vtag = in.itag,
		.my_itsn = sctpe_random32(e),
		.peer_itsn = in.itsn,
		.peer_arwnd = in.arwnd,
		.os = in.mis < cfg->streams ? in.mis : cfg->streams,
		.mis = in.os < cfg->streams ? in.os : cfg->streams,
		.lport = h->dport,
		.rport = h->sport,
		.tie_my = old ? old->my_vtag : 0,
		.tie_peer = old ? old->peer_vtag : 0,
	};
	uint8_t cookie[COOKIE_LEN];
	cookie_encode(e, &k, cookie);
	struct sctpe_pb b;
	struct sctpe_assoc tmp = {.e = e};
	sctpe_pb_init(&b, e->pkt, sizeof(e->pkt), h->dport, h->sport, in.itag);
	put_init(&tmp, &b, SCTPE_INIT_ACK, k.my_vtag, k.my_itsn);
	/* reopen the chunk to add the cookie and what was not recognized */
	uint8_t *ch = e->pkt + SCTPE_COMMON_LEN;
	sctpe_pb_param(&b, SCTPE_P_STATE_COOKIE, cookie, sizeof(cookie));
	if (ip.unrec_len)
		sctpe_pb_put(&b, ip.unrec, ip.unrec_len);
	sctpe_pb_close(&b, ch);
	sctpe_send(e, sel, e->pkt, sctpe_pb_finish(&b, e->crc));
}

/* A COOKIE ECHO on our receive port: the association it describes, unless one with the same
 * tags is up already (a lost COOKIE ACK: sent again) or this is the peer restarting (its
 * cookie names the tags of the association it replaces). Returns the association the rest
 * of the packet goes to, or NULL. */
static struct sctpe_assoc *on_cookie_echo(struct sctpe_ep *e, struct sctpt_peer *p, int rail,
					  const struct sctpe_hdr *h, const struct sctpe_chunk *c)
{
	const struct sctpt_config *cfg = &e->ep->cfg;
	struct sctpt_sel *sel = sel_of(p, rail, 1);
	struct cookie k;
	uint32_t stale = 0;
	int rc = cookie_decode(e, c->p + SCTPE_CHUNK_HDR_LEN, c->len - (size_t)SCTPE_CHUNK_HDR_LEN,
			       &k, &stale);
	if (rc == -ETIMEDOUT && h->vtag == k.my_vtag) {
		uint8_t body[8], v[4];
		e->st.stale_cookie++;
		sm_put_be32(v, stale);
		size_t n = cause_put(body, sizeof(body), SCTPE_E_STALE_COOKIE, v, 4);
		raw_send(e, sel, h->dport, h->sport, k.peer_vtag, SCTPE_ERROR, 0, body, n);
		return NULL;
	}
	if (rc != 0 || h->vtag != k.my_vtag || k.lport != h->dport || k.rport != h->sport) {
		e->st.bad_cookie++;
		return NULL;
	}
	struct sctpe_assoc **slot = sctpe_slot(e, p, rail, 1);
	if (!slot)
		return NULL;
	struct sctpe_assoc *old = *slot;
	int restart = 0;
	if (old) {
		if (old->my_vtag == k.my_vtag && old->peer_vtag == k.peer_vtag) {
			sctpe_ctrl(old, SCTPE_COOKIE_ACK, 0, NULL, 0); /* 5.2.4 D */
			return old;
		}
		if (old->my_vtag != k.tie_my || old->peer_vtag != k.tie_peer) {
			e->st.bad_cookie++; /* a cookie of another time */
			return NULL;
		}
		restart = 1; /* 5.2.4 A: the peer restarted */
		sctpe_assoc_end(old, 0);
	}
	struct sctpe_assoc *a = sctpe_assoc_new(e, p, rail, 1);
	if (!a)
		return NULL;
	a->rport = h->sport;
	a->my_vtag = k.my_vtag;
	a->peer_vtag = k.peer_vtag;
	a->my_itsn = k.my_itsn;
	a->next_tsn = k.my_itsn;
	a->cum = k.my_itsn - 1;
	a->os = k.os;
	a->mis = k.mis;
	a->idata = k.peer_idata && idata_wanted(e);
	a->peer_rwnd = k.peer_arwnd;
	sctpe_cc_init(&a->cc, e->ep->mtu, k.peer_arwnd, (uint32_t)cfg->rto_initial_ms,
		      (uint32_t)cfg->rto_min_ms, (uint32_t)cfg->rto_max_ms);
	if (sctpe_in_init(a, k.peer_itsn) != 0) {
		sctpe_assoc_free(a);
		return NULL;
	}
	*slot = a;
	established(a);
	sctpe_ctrl(a, SCTPE_COOKIE_ACK, 0, NULL, 0);
	sctpe_want_event(a, restart ? SCTPE_EV_RESTART : SCTPE_EV_UP, 0);
	return a;
}

void sctpe_ep_input_noassoc(struct sctpe_ep *e, struct sctpt_peer *p, int rail, int in,
			    const struct sctpe_hdr *h, const uint8_t *pkt, size_t len)
{
	struct sctpe_iter it;
	struct sctpe_chunk c;
	struct sctpe_hdr h2;
	struct sctpt_sel *sel = sel_of(p, rail, in);
	if (sctpe_packet_parse(pkt, len, &h2, &it) != 0 || sctpe_chunk_next(&it, &c) != 1) {
		e->st.malformed++;
		return;
	}
	if (c.type == SCTPE_INIT) {
		if (in)
			on_init(e, p, rail, h, &c);
		else if (c.len >= SCTPE_INIT_FIXED_LEN) /* nobody listens on our send port */
			reply_abort_t(e, sel, h, sm_get_be32(c.p + SCTPE_INIT_OFF_ITAG), 0);
		return;
	}
	if (c.type == SCTPE_COOKIE_ECHO && in) {
		struct sctpe_assoc *a = on_cookie_echo(e, p, rail, h, &c);
		if (a && it.off < it.len) { /* DATA may come with the cookie */
			struct pctx x = {.h = h};
			struct sctpe_chunk d;
			int rc;
			while (!x.stop && !a->dead && (rc = sctpe_chunk_next(&it, &d)) > 0) {
				int k = kind_of(d.type);
				if (k != K_OTHER)
					g_table[a->state][k](a, &d, &x);
				else if (unknown_chunk(a, &d))
					break;
			}
			if (x.data && !a->dead)
				sctpe_in_packet_done(a, x.sack_now);
		}
		return;
	}
	/* out of the blue (8.4) */
	e->st.ootb++;
	if (c.type == SCTPE_ABORT || c.type == SCTPE_SHUTDOWN_COMPLETE ||
	    c.type == SCTPE_COOKIE_ACK || c.type == SCTPE_ERROR)
		return;
	if (c.type == SCTPE_SHUTDOWN_ACK) {
		raw_send(e, sel, h->dport, h->sport, h->vtag, SCTPE_SHUTDOWN_COMPLETE, SCTPE_FLAG_T,
			 NULL, 0);
		return;
	}
	reply_abort_t(e, sel, h, h->vtag, 1);
}
