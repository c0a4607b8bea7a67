/*
 * tb_core_stripe - all-pairs traffic over the SCTP core striped by an FNN table; one
 * process per PC namespace, no MPI.
 *
 *   tb_core_stripe --table T --addrs A --pc N --dir D [--seconds S] [--rounds R]
 *                  [--max BYTES] [--sizes B,B,..] [--rate-msgs N] [--all-rails] [--oneway]
 *                  [--expect-dead PC]
 *
 * The endpoint binds the PC's NICs from the address map A (fnn-cluster.sh's `addrs`) and
 * stripes to each peer over the (local NIC, remote NIC) pairs routing/fnn's
 * fnn_stripe_pairs gives the two PCs (ops.rails; the peer's PC is found from its card's
 * addresses in the map).  Business cards go through files D/card.<pc>.  Every PC that
 * shares a switch with this one is a peer; to each it sends messages of 1 B, 1 KiB, 64 KiB,
 * 300000 B and --max (default 1 MiB) in turn (or the --sizes given, each at most --max),
 * two in three ordered (context 1, checked to arrive in order) and one in three unordered
 * (context 2), each a header {src, dst, round,
 * len, FNV-1a 64} and a payload generated from (src, dst, round) that the receiver
 * regenerates and compares byte for byte; then an END message with the count.  Sends for
 * --seconds (default 5) or --rounds rounds, then waits (bounded) for every peer's messages.
 * With --oneway a PC sends only to higher-numbered PCs (one direction per pair); with
 * --rate-msgs N at most N messages a second to each peer (small messages that do not fill
 * a rail).  With
 * --expect-dead N, PC N is going to be killed: its messages are not counted, but the core
 * must report it lost (printed as "DEAD pc A peer N lost at T s", T since start).
 * Prints per peer
 *   RAILS pc A peer B rails K shared S bytes b0,b1,.. up u0,u1,.. failures F resent R dups D
 *         reconnects C held h0,h1,.. rtt_ms t0,t1,.. stalls T frags f0,f1,..
 *         rate_kBps r0,r1,.. local a0,a1,..
 * (held: bytes each rail still holds unacknowledged; rtt_ms: SCTP's smoothed RTT; stalls:
 * times a rail stopped moving data and its fragments went to the others; frags: fragments
 * each rail was given, re-sent ones included; rate_kBps: the core's delivery rate estimate
 * of each rail, 0 unknown; local: each rail's local address)
 * and
 *   CHECK core-stripe pc A peers P messages M bytes B errors E
 * An error is: a bad or missing message, a send failure, rails != shared switches, and with
 * --all-rails a rail that carried no fragment.  Exit 0 only without errors.
 */
#include "fnn.h"
#include "sctpt.h"
#include "tb_payload.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAXPC 64
#define WINDOW 4 /* messages per peer queued in the core at a time */

struct msg_hdr {
	uint32_t src, dst, round, len;
	uint64_t fnv;
};

struct peer {
	int pc;
	sctpt_peer_t id;
	uint32_t next_round;     /* next round to send */
	int inflight;
	uint32_t last_ordered;   /* last ordered round received (+1), for the order check */
	uint64_t got, want;      /* messages received; count announced by END (0: none yet) */
	int end_seen;
	double lost_s;           /* when the core reported it lost (0: not) */
};

static struct {
	int me, npeers;
	struct peer peers[MAXPC];
	struct fnn_design d;
	struct fnn_routes routes;
	struct fnn_addrmap map;
	unsigned char *scratch;
	size_t max;
	size_t sizes[16];        /* --sizes: message sizes in turn (0: none given) */
	int nsizes;
	int dead;                /* --expect-dead: the PC that will be killed (-1: none) */
	double rate_msgs;        /* --rate-msgs: messages per second to each peer (0: no cap) */
	uint64_t errors, msgs, bytes;
} g;

static size_t round_size(uint32_t round)
{
	static const size_t sizes[] = {1, 1024, 65536, 300000, 0};
	size_t s = g.nsizes ? g.sizes[round % (uint32_t)g.nsizes] : sizes[round % 5];
	return s == 0 || s > g.max ? g.max : s;
}

/* --sizes LIST: comma-separated sizes, 1..max each; 0 on a bad list. */
static int parse_sizes(const char *list)
{
	for (const char *p = list; *p && g.nsizes < 16;) {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p || v < 1 || (*end && *end != ','))
			return 0;
		g.sizes[g.nsizes++] = (size_t)v;
		p = *end ? end + 1 : end;
	}
	return g.nsizes > 0;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ops.rails: routing/fnn's stripe pairs of this PC and the peer's, found by address. */
static int rails_cb(void *arg, const char *card, const uint32_t *addrs, int naddrs,
		    const uint32_t *mine, int nmine, struct sctpt_rail *out, int max)
{
	uint32_t l[SCTPT_MAX_RAILS], r[SCTPT_MAX_RAILS];
	(void)arg;
	int n = fnn_stripe_addrs(&g.d, &g.routes, &g.map, mine, nmine, addrs, naddrs, l, r,
				 max < SCTPT_MAX_RAILS ? max : SCTPT_MAX_RAILS);
	if (n < 0) {
		fprintf(stderr, "pc %d: card %s is no other PC of the address map\n", g.me, card);
		return 0;
	}
	for (int i = 0; i < n; i++) {
		out[i].local = l[i];
		out[i].remote = r[i];
	}
	return n;
}

static struct peer *peer_by_id(sctpt_peer_t id)
{
	for (int i = 0; i < g.npeers; i++)
		if (g.peers[i].id == id)
			return &g.peers[i];
	return NULL;
}

static void on_recv(const struct sctpt_cqe *m)
{
	struct peer *p = peer_by_id(m->peer);
	struct msg_hdr h;
	if (m->status < 0) { /* abandoned: only the dead PC's messages may be */
		if (!p || p->pc != g.dead) {
			fprintf(stderr, "pc %d: a message from peer %d was abandoned: %s\n", g.me,
				m->peer, strerror(-m->status));
			g.errors++;
		}
		return;
	}
	if (!p || m->len < sizeof(h)) {
		fprintf(stderr, "pc %d: message of %zu bytes from unknown peer %d\n", g.me, m->len,
			m->peer);
		g.errors++;
		return;
	}
	memcpy(&h, m->data, sizeof(h));
	if (m->tag == 2) { /* END: h.round holds the count */
		p->want = h.round;
		p->end_seen = 1;
		return;
	}
	const unsigned char *pl = (const unsigned char *)m->data + sizeof(h);
	size_t n = m->len - sizeof(h);
	int bad = h.src != (uint32_t)p->pc || h.dst != (uint32_t)g.me || h.len != n ||
		  n != round_size(h.round) || fnv1a(pl, n) != h.fnv;
	if (!bad) {
		fill(g.scratch, n, h.src, h.dst, h.round);
		bad = memcmp(g.scratch, pl, n) != 0;
	}
	if (!bad && m->context == 1) {
		bad = h.round + 1 <= p->last_ordered;
		p->last_ordered = h.round + 1;
	}
	if (bad) {
		fprintf(stderr, "pc %d: bad message from pc %d: round %u len %zu context %u\n", g.me,
			p->pc, h.round, n, m->context);
		g.errors++;
	}
	p->got++;
	g.msgs++;
	g.bytes += m->len;
}

/* Events go to stderr with the time since start: they tell how a rail failure went. */
static double g_t0;
static double now_s(void);
static struct peer *peer_by_id(sctpt_peer_t id);
static void on_event(const struct sctpt_event *ev)
{
	struct peer *p = peer_by_id(ev->peer);
	if (ev->type == SCTPT_EV_ASSOC_DOWN && p && !p->lost_s)
		p->lost_s = now_s() - g_t0;
	if (ev->type != SCTPT_EV_ASSOC_UP) /* ASSOC_DOWN's text says why */
		fprintf(stderr, "pc %d: %.3f s: %s\n", g.me, now_s() - g_t0, ev->what);
}

static void on_send_done(void *cookie, int status)
{
	uint32_t *b = cookie;
	struct peer *p = &g.peers[b[0]];
	p->inflight--;
	if (status && p->pc != g.dead) {
		fprintf(stderr, "pc %d: send to pc %d failed: %s\n", g.me, p->pc, strerror(-status));
		g.errors++;
	}
	free(b);
}

static void on_complete(void *arg, const struct sctpt_cqe *c)
{
	(void)arg;
	switch (c->kind) {
	case SCTPT_CQE_RECV:
		on_recv(c);
		break;
	case SCTPT_CQE_SEND:
		on_send_done(c->cookie, c->status);
		break;
	case SCTPT_CQE_EVENT:
		on_event(&c->ev);
		break;
	}
}

/* Sends one message (round r, or END with count when end) to peer index i. */
static int send_one(struct sctpt_ep *ep, int i, uint32_t r, int end, uint64_t count)
{
	struct peer *p = &g.peers[i];
	size_t n = end ? 0 : round_size(r);
	/* word 0 of the allocation: the peer index for its completion; the message follows */
	uint32_t *b = malloc(8 + sizeof(struct msg_hdr) + n);
	if (!b)
		return -ENOMEM;
	b[0] = (uint32_t)i;
	unsigned char *msg = (unsigned char *)b + 8;
	struct msg_hdr h = {.src = (uint32_t)g.me, .dst = (uint32_t)p->pc,
			    .round = end ? (uint32_t)count : r, .len = (uint32_t)n};
	fill(msg + sizeof(h), n, h.src, h.dst, r);
	h.fnv = fnv1a(msg + sizeof(h), n);
	memcpy(msg, &h, sizeof(h));
	struct iovec iov = {msg, sizeof(h) + n};
	int unordered = !end && r % 3 == 2;
	int rc = sctpt_send(ep, p->id, unordered ? 2 : 1, end ? 2 : 1,
			    unordered ? SCTPT_SEND_UNORDERED : 0, &iov, 1, b);
	if (rc == 0) {
		p->inflight++;
		return 0;
	}
	free(b);
	if (rc < 0) {
		fprintf(stderr, "pc %d: send to pc %d: %s\n", g.me, p->pc, sctpt_last_error());
		g.errors += p->pc != g.dead;
		return rc;
	}
	return 0;
}

static int read_card(const char *dir, int pc, char *card, size_t len)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/card.%d", dir, pc);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	int ok = fgets(card, (int)len, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	card[strcspn(card, "\n")] = 0;
	return 0;
}

static int write_card(const char *dir, int pc, const char *card)
{
	char path[512], tmp[520];
	snprintf(path, sizeof(path), "%s/card.%d", dir, pc);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return -1;
	fprintf(f, "%s\n", card);
	if (fclose(f) != 0)
		return -1;
	return rename(tmp, path);
}

static void usage(void)
{
	fprintf(stderr, "usage: tb_core_stripe --table T --addrs A --pc N --dir D [--seconds S] "
			"[--rounds R] [--max BYTES] [--sizes B,B,..] [--rate-msgs N] [--all-rails] "
			"[--oneway] [--expect-dead PC]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *table = NULL, *addrs = NULL, *dir = NULL;
	double seconds = 5;
	long rounds = -1;
	int all_rails = 0, oneway = 0;
	char err[256];
	static const struct option opts[] = {
		{"table", 1, 0, 't'}, {"addrs", 1, 0, 'a'}, {"pc", 1, 0, 'p'}, {"dir", 1, 0, 'd'},
		{"seconds", 1, 0, 's'}, {"rounds", 1, 0, 'r'}, {"max", 1, 0, 'm'},
		{"sizes", 1, 0, 'S'}, {"all-rails", 0, 0, 'A'}, {"oneway", 0, 0, 'o'},
		{"expect-dead", 1, 0, 'D'}, {"rate-msgs", 1, 0, 'R'}, {0, 0, 0, 0}};
	g.me = -1;
	g.dead = -1;
	g.max = 1 << 20;
	for (int c; (c = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
		switch (c) {
		case 't': table = optarg; break;
		case 'a': addrs = optarg; break;
		case 'p': g.me = atoi(optarg); break;
		case 'd': dir = optarg; break;
		case 's': seconds = atof(optarg); break;
		case 'r': rounds = atol(optarg); break;
		case 'm': g.max = (size_t)atol(optarg); break;
		case 'S': if (!parse_sizes(optarg)) usage(); break;
		case 'A': all_rails = 1; break;
		case 'o': oneway = 1; break;
		case 'D': g.dead = atoi(optarg); break;
		case 'R': g.rate_msgs = atof(optarg); if (g.rate_msgs <= 0) usage(); break;
		default: usage();
		}
	}
	if (!table || !addrs || !dir || g.me < 0 || g.max < 1 || g.max > (64u << 20))
		usage();
	if (fnn_table_load(&g.d, table, 0, err, sizeof(err)) != 0 ||
	    fnn_addrmap_load(&g.map, addrs, err, sizeof(err)) != 0 ||
	    fnn_routes_build(&g.routes, &g.d, NULL) != 0) {
		fprintf(stderr, "tb_core_stripe: %s\n", err);
		return 2;
	}
	if (g.me >= g.d.npcs || g.d.npcs > MAXPC) {
		fprintf(stderr, "tb_core_stripe: pc %d of %d\n", g.me, g.d.npcs);
		return 2;
	}
	g.scratch = malloc(g.max);

	/* bind this PC's NICs */
	char mine[SCTPT_MAX_ADDRS * 17] = "";
	for (int k = 0; k < g.map.maxnics; k++) {
		const struct fnn_nic_addr *a = fnn_addr(&g.map, g.me, k);
		if (a && a->pc >= 0)
			snprintf(mine + strlen(mine), sizeof(mine) - strlen(mine), "%s%s",
				 mine[0] ? "," : "", a->ip);
	}
	struct sctpt_config cfg;
	struct sctpt_ep *ep;
	sctpt_config_init(&cfg);
	cfg.addrs = mine;
	cfg.handler.complete = on_complete;
	cfg.ops.rails = rails_cb;
	g_t0 = now_s();
	if (sctpt_open(&cfg, &ep) != 0) {
		fprintf(stderr, "pc %d: sctpt_open: %s\n", g.me, sctpt_last_error());
		return 1;
	}
	char card[SCTPT_CARD_MAX];
	sctpt_card(ep, card, sizeof(card));
	if (write_card(dir, g.me, card) != 0) {
		fprintf(stderr, "pc %d: cannot write its card to %s\n", g.me, dir);
		return 1;
	}
	/* every PC sharing a switch with this one is a peer; wait (bounded) for their cards */
	double t0 = now_s();
	for (int pc = 0; pc < g.d.npcs; pc++) {
		if (pc == g.me || fnn_design_shared(&g.d, g.me, pc) == 0)
			continue;
		char pcard[SCTPT_CARD_MAX];
		while (read_card(dir, pc, pcard, sizeof(pcard)) != 0) {
			if (now_s() - t0 > 20) {
				fprintf(stderr, "pc %d: no card from pc %d after 20 s\n", g.me, pc);
				return 1;
			}
			usleep(20000);
		}
		struct peer *p = &g.peers[g.npeers];
		p->pc = pc;
		p->id = sctpt_peer_add(ep, pcard);
		if (p->id < 0) {
			fprintf(stderr, "pc %d: peer %d: %s\n", g.me, pc, sctpt_last_error());
			return 1;
		}
		g.npeers++;
	}

	/* send for `seconds` (or `rounds` rounds), WINDOW messages per peer at a time */
	double start = now_s();
	uint32_t cap = rounds >= 0 ? (uint32_t)rounds : UINT32_MAX;
	for (;;) {
		int busy = 0;
		double el = now_s() - start;
		int timeup = rounds < 0 && el >= seconds;
		for (int i = 0; i < g.npeers && !timeup; i++) {
			struct peer *p = &g.peers[i];
			if (p->next_round >= cap || (oneway && p->pc < g.me) || p->lost_s)
				continue;
			busy = 1;
			if (g.rate_msgs > 0 && (double)p->next_round >= el * g.rate_msgs)
				continue; /* ahead of --rate-msgs: wait */
			if (p->inflight < WINDOW && send_one(ep, i, p->next_round, 0, 0) == 0)
				p->next_round++;
		}
		if (!busy || now_s() - start > seconds + 60)
			break;
		sctpt_wait(ep, 1);
	}
	for (int i = 0; i < g.npeers; i++)
		if (!g.peers[i].lost_s)
			send_one(ep, i, 0, 1, g.peers[i].next_round);
	double sent_s = now_s() - start;

	/* wait for everything from every peer: at most 60 s more */
	for (;;) {
		int done = 1;
		for (int i = 0; i < g.npeers; i++) /* (a lost peer sends no more: errors below) */
			done &= (g.peers[i].end_seen && g.peers[i].got == g.peers[i].want) ||
				g.peers[i].lost_s;
		if (done || now_s() - start > seconds + 60)
			break;
		sctpt_wait(ep, 10);
	}
	double total_s = now_s() - start;
	for (int i = 0; i < g.npeers; i++) {
		struct peer *p = &g.peers[i];
		if (p->pc == g.dead) { /* its messages may be cut short; its loss must be told */
			if (p->lost_s)
				printf("DEAD pc %d peer %d lost at %.3f s\n", g.me, p->pc, p->lost_s);
			else
				fprintf(stderr, "pc %d: pc %d was expected to die: no loss reported\n",
					g.me, p->pc);
			g.errors += !p->lost_s;
			continue;
		}
		if (!p->end_seen || p->got != p->want) {
			fprintf(stderr, "pc %d: from pc %d got %llu of %llu messages%s\n", g.me, p->pc,
				(unsigned long long)p->got, (unsigned long long)p->want,
				p->end_seen ? "" : " (no END)");
			g.errors++;
		}
	}
	/* rails, read back from the core's statistics */
	static struct sctpt_peer_stats st;
	for (int i = 0; i < g.npeers; i++) {
		struct peer *p = &g.peers[i];
		int shared = fnn_design_shared(&g.d, g.me, p->pc);
		char b[256] = "", u[64] = "", h[256] = "", t[128] = "", f[256] = "", r[256] = "",
		     l[512] = "";
		sctpt_peer_stats(ep, p->id, &st);
		for (int k = 0; k < st.npaths; k++) {
			snprintf(b + strlen(b), sizeof(b) - strlen(b), "%s%llu", k ? "," : "",
				 (unsigned long long)st.paths[k].frag_bytes_out);
			snprintf(u + strlen(u), sizeof(u) - strlen(u), "%s%d", k ? "," : "",
				 st.paths[k].up);
			snprintf(h + strlen(h), sizeof(h) - strlen(h), "%s%llu", k ? "," : "",
				 (unsigned long long)st.paths[k].unacked_bytes);
			snprintf(t + strlen(t), sizeof(t) - strlen(t), "%s%u", k ? "," : "",
				 st.paths[k].rtt_us / 1000);
			snprintf(f + strlen(f), sizeof(f) - strlen(f), "%s%llu", k ? "," : "",
				 (unsigned long long)st.paths[k].frags_out);
			snprintf(r + strlen(r), sizeof(r) - strlen(r), "%s%llu", k ? "," : "",
				 (unsigned long long)(st.paths[k].rate_bps / 1000));
			snprintf(l + strlen(l), sizeof(l) - strlen(l), "%s%.*s", k ? "," : "",
				 (int)strcspn(st.paths[k].local, ":"), st.paths[k].local);
			if (all_rails && st.paths[k].frags_out == 0) {
				fprintf(stderr, "pc %d: rail %d to pc %d (%s -> %s) carried nothing\n",
					g.me, k, p->pc, st.paths[k].local, st.paths[k].remote);
				g.errors++;
			}
		}
		printf("RAILS pc %d peer %d rails %d shared %d bytes %s up %s failures %llu resent "
		       "%llu dups %llu reconnects %llu held %s rtt_ms %s stalls %llu frags %s rate_kBps %s "
		       "local %s\n", g.me, p->pc,
		       st.nrails, shared, b, u, (unsigned long long)st.rail_failures,
		       (unsigned long long)st.frags_resent, (unsigned long long)st.dup_frags_dropped,
		       (unsigned long long)st.rail_reconnects, h, t,
		       (unsigned long long)st.rail_stalls, f, r, l);
		if (st.nrails != shared || st.npaths != shared) {
			fprintf(stderr, "pc %d: %d rails to pc %d, which shares %d switches\n", g.me,
				st.nrails, p->pc, shared);
			g.errors++;
		}
	}
	printf("time pc %d send %.2f s total %.2f s recv %.1f MB/s\n", g.me, sent_s, total_s,
	       (double)g.bytes / total_s / 1e6);
	printf("CHECK core-stripe pc %d peers %d messages %llu bytes %llu errors %llu\n", g.me,
	       g.npeers, (unsigned long long)g.msgs, (unsigned long long)g.bytes,
	       (unsigned long long)g.errors);
	fflush(stdout);
	sctpt_close(ep);
	fnn_routes_free(&g.routes);
	fnn_addrmap_free(&g.map);
	fnn_design_free(&g.d);
	free(g.scratch);
	return g.errors ? 1 : 0;
}
