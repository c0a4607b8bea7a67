/*
 * One side of a checked transfer between two namespace hosts, on the engine SCTPT_BACKEND
 * names (each side its own, for interop):
 *   engine_netxfer --addrs A[,B] --card-out F --card-in G (--send N | --recv N)
 *                  [--msg SIZE] [--big SIZE] [--cmt] [--crc] [--streams N] [--timeout S]
 *                  [--tcp]
 * The sender sends N bytes in messages of SIZE bytes (default 1 MiB) on a few contexts, then
 * one message of --big bytes (a fragment chain up to 64 MiB), then closes; every message's
 * bytes follow from its index, the receiver checks each byte and the order per context, and
 * answers the last with an acknowledgement. Exit 0 only if all arrived intact. Both print
 * MB/s. --tcp: the same bytes over one TCP connection instead (the baseline; the receiver's
 * "card" file names its listening address), checked likewise per message.
 */
#include "engine_test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NCTX 3

static uint64_t received, expect;
static int nmsgs, acked, bad, down, closed, last_tag[NCTX];

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}
static double t0;

/* Messages of one size repeat the contents of NPAT buffers made once (message i: buffer
 * i % NPAT), so that making and checking the bytes costs a copy and a compare, not the
 * pattern generator: what is measured is the transfer. */
#define NPAT 4
static unsigned char *pat[NPAT];
static size_t pat_len;

static const unsigned char *pattern(int tag, size_t len)
{
	if (len != pat_len) {
		for (int i = 0; i < NPAT; i++) {
			free(pat[i]);
			pat[i] = malloc(len ? len : 1);
			CHECK(pat[i], "memory for patterns");
			fill_pattern(pat[i], len, (uint32_t)i);
		}
		pat_len = len;
	}
	return pat[tag % NPAT];
}

/* Messages are reassembled into buffers used again and again, as an MPI library's are and as
 * the TCP side reads into one: fresh pages per message would measure page faults. */
struct rbuf {
	struct rbuf *next;
	size_t cap;
	unsigned char data[];
};
static struct rbuf *rbuf_free;

static void *recv_buf(void *arg, sctpt_peer_t peer, uint32_t context, int32_t tag, size_t len,
		      void **cookie)
{
	(void)arg, (void)peer, (void)context, (void)tag;
	struct rbuf **pp = &rbuf_free;
	while (*pp && (*pp)->cap < len)
		pp = &(*pp)->next;
	struct rbuf *b = *pp;
	if (b)
		*pp = b->next;
	else if (!(b = malloc(sizeof(*b) + len)))
		return NULL; /* the core allocates */
	else
		b->cap = len;
	*cookie = b;
	return b->data;
}

static void rbuf_put(void *cookie)
{
	struct rbuf *b = cookie;
	if (b) {
		b->next = rbuf_free;
		rbuf_free = b;
	}
}

static void on_complete(void *arg, const struct sctpt_cqe *c)
{
	(void)arg;
	if (c->kind == SCTPT_CQE_EVENT) {
		fprintf(stderr, "[%6.3f s] event: %s\n", now_s() - t0, c->ev.what);
		down |= c->ev.type == SCTPT_EV_ASSOC_DOWN;
		closed |= c->ev.type == SCTPT_EV_PEER_CLOSED;
		return;
	}
	if (c->kind == SCTPT_CQE_SEND) {
		if (c->status)
			bad = 1;
		return;
	}
	if (c->status < 0) {
		fprintf(stderr, "message %d abandoned: %d\n", c->tag, c->status);
		bad = 1;
		rbuf_put(c->cookie);
		return;
	}
	if (c->tag == -1) {
		acked = 1;
		return;
	}
	int ctx = (int)(c->context % NCTX);
	if (c->tag <= last_tag[ctx] || memcmp(c->data, pattern(c->tag, c->len), c->len) != 0) {
		fprintf(stderr, "message %d (%zu bytes, context %u) corrupt or out of order\n",
			c->tag, c->len, c->context);
		bad = 1;
	}
	last_tag[ctx] = c->tag;
	received += c->len;
	nmsgs++;
	rbuf_put(c->cookie);
}

static int read_card(const char *path, char *card, double deadline)
{
	while (now_s() < deadline) {
		FILE *f = fopen(path, "r");
		if (f) {
			int ok = fgets(card, SCTPT_CARD_MAX, f) != NULL;
			fclose(f);
			if (ok && strchr(card, '\n')) {
				*strchr(card, '\n') = 0;
				return 0;
			}
		}
		usleep(20000);
	}
	return -1;
}

/* Straight from the pattern (it outlives the send), as the TCP side writes it. */
static int send_one(struct sctpt_ep *ep, sctpt_peer_t p, int tag, size_t len)
{
	struct iovec iov = {(void *)pattern(tag, len), len};
	int r = sctpt_send(ep, p, (uint32_t)(tag % NCTX), tag, 0, &iov, 1, NULL);
	return r < 0 ? r : 0;
}

static int full_io(int fd, void *buf, size_t len, int wr)
{
	uint8_t *p = buf;
	while (len) {
		ssize_t n = wr ? write(fd, p, len) : read(fd, p, len);
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The TCP baseline: messages of msg bytes (the last one shorter), then big, each checked. */
static int tcp_side(int sender, const char *addr, const char *out, const char *in, uint64_t total,
		    uint64_t msg, uint64_t big, double deadline)
{
	char card[SCTPT_CARD_MAX], ip[64];
	struct sockaddr_in sa = {.sin_family = AF_INET};
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	snprintf(ip, sizeof(ip), "%s", addr);
	if (strchr(ip, ','))
		*strchr(ip, ',') = 0;
	inet_pton(AF_INET, ip, &sa.sin_addr);
	if (!sender) {
		socklen_t l = sizeof(sa);
		CHECK(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(fd, 1) == 0 &&
		      getsockname(fd, (struct sockaddr *)&sa, &l) == 0, "tcp listen");
		FILE *f = fopen(out, "w");
		CHECK(f && fprintf(f, "tcp %s %u\n", ip, ntohs(sa.sin_port)) > 0 && fclose(f) == 0,
		      "writing %s", out);
		int c = accept(fd, NULL, NULL);
		CHECK(c >= 0, "accept");
		close(fd);
		fd = c;
	} else {
		unsigned port;
		CHECK(read_card(in, card, deadline) == 0 && sscanf(card, "tcp %63s %u", ip, &port) == 2,
		      "no TCP address in %s", in);
		inet_pton(AF_INET, ip, &sa.sin_addr);
		sa.sin_port = htons((uint16_t)port);
		CHECK(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0, "connect %s:%u", ip, port);
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	t0 = now_s(); /* rates from the first byte on */
	uint64_t cap = big > msg ? big : msg, done = 0;
	unsigned char *buf = malloc(cap);
	CHECK(buf, "memory");
	int tag = 0, ok = 1;
	while (done < total + big && ok) {
		uint64_t left = done < total ? total - done : big;
		size_t len = (size_t)(done < total && left > msg ? msg : left);
		if (sender) {
			ok = full_io(fd, (void *)pattern(tag, len), len, 1) == 0;
		} else {
			ok = full_io(fd, buf, len, 0) == 0 && memcmp(buf, pattern(tag, len), len) == 0;
		}
		done += len;
		tag++;
	}
	char ack = 1;
	ok = ok && (sender ? full_io(fd, &ack, 1, 0) : full_io(fd, &ack, 1, 1)) == 0;
	double dt = now_s() - t0;
	printf("tcp: %s %llu bytes in %d messages in %.2f s, %.1f MB/s, intact: %s\n",
	       sender ? "sent" : "received", (unsigned long long)done, tag, dt, done / dt / 1e6,
	       ok ? "yes" : "no");
	free(buf);
	close(fd);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"addrs", 1, 0, 'a'}, {"card-out", 1, 0, 'o'}, {"card-in", 1, 0, 'i'},
		{"send", 1, 0, 's'},  {"recv", 1, 0, 'r'},     {"msg", 1, 0, 'm'},
		{"big", 1, 0, 'b'},   {"cmt", 0, 0, 'c'},      {"crc", 0, 0, 'k'},
		{"streams", 1, 0, 'n'}, {"timeout", 1, 0, 't'}, {"tcp", 0, 0, 'T'}, {0, 0, 0, 0}};
	const char *addrs = NULL, *out = NULL, *in = NULL;
	uint64_t total = 0, msg = 1 << 20, big = 0;
	int sender = -1, cmt = 0, crc = 0, streams = 16, secs = 60, tcp = 0, o;
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'a': addrs = optarg; break;
		case 'o': out = optarg; break;
		case 'i': in = optarg; break;
		case 's': sender = 1; total = strtoull(optarg, NULL, 0); break;
		case 'r': sender = 0; total = strtoull(optarg, NULL, 0); break;
		case 'm': msg = strtoull(optarg, NULL, 0); break;
		case 'b': big = strtoull(optarg, NULL, 0); break;
		case 'c': cmt = 1; break;
		case 'k': crc = 1; break;
		case 'n': streams = atoi(optarg); break;
		case 't': secs = atoi(optarg); break;
		case 'T': tcp = 1; break;
		default: return 2;
		}
	}
	if (!addrs || !out || !in || sender < 0 || !msg) {
		fprintf(stderr, "usage: see the header of engine_netxfer.c\n");
		return 2;
	}
	if (tcp) {
		t0 = now_s();
		return tcp_side(sender, addrs, out, in, total, msg, big, t0 + secs);
	}
	struct sctpt_config cfg;
	struct sctpt_ep *ep;
	char card[SCTPT_CARD_MAX];
	engine_config(&cfg);
	cfg.addrs = addrs;
	cfg.cmt = cmt;
	cfg.crc32c = crc;
	cfg.streams = (uint16_t)streams;
	cfg.handler.complete = on_complete;
	cfg.handler.recv_buf = recv_buf;
	t0 = now_s();
	double deadline = t0 + secs;
	for (int i = 0; i < NCTX; i++)
		last_tag[i] = -1;
	CHECK(sctpt_open(&cfg, &ep) == 0, "open");
	sctpt_card(ep, card, sizeof(card));
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.tmp", out);
	FILE *f = fopen(tmp, "w");
	CHECK(f && fprintf(f, "%s\n", card) > 0 && fclose(f) == 0 && rename(tmp, out) == 0,
	      "writing %s", out);
	CHECK(read_card(in, card, deadline) == 0, "no card in %s", in);
	sctpt_peer_t p = sctpt_peer_add(ep, card);
	CHECK(p >= 0, "peer_add(%s)", card);
	const char *engine = cfg.backend ? cfg.backend : "usrsctp";
	if (sender) {
		int tag = 0;
		uint64_t sent = 0;
		t0 = now_s(); /* rates from the first message on */
		while (sent < total && now_s() < deadline && !down && !bad) {
			size_t len = total - sent < msg ? (size_t)(total - sent) : (size_t)msg;
			CHECK(send_one(ep, p, tag++, len) == 0, "send");
			sent += len;
			while (sctpt_pending(ep, p) && now_s() < deadline && !down)
				sctpt_wait(ep, 5);
		}
		if (big && !down && !bad)
			CHECK(send_one(ep, p, tag++, (size_t)big) == 0, "send big");
		while (!acked && !down && !bad && now_s() < deadline)
			sctpt_wait(ep, 10);
		double dt = now_s() - t0;
		printf("%s: sent %llu bytes in %d messages in %.2f s, %.1f MB/s, acknowledged: %s\n",
		       engine, (unsigned long long)(sent + big), tag, dt, (sent + big) / dt / 1e6,
		       acked ? "yes" : "no");
		sctpt_close(ep);
		return acked && !bad ? 0 : 1;
	}
	expect = total + big;
	while (received < expect && !bad && !down && now_s() < deadline)
		sctpt_wait(ep, 10);
	if (received == expect && !bad) {
		struct iovec iov = {NULL, 0};
		sctpt_send(ep, p, 0, -1, 0, &iov, 0, NULL);
	}
	/* the sender closes once it has the acknowledgement: its CLOSE and ABORT end it */
	while (!closed && !down && now_s() < deadline)
		sctpt_wait(ep, 10);
	printf("%s: received %llu of %llu bytes in %d messages intact: %s; peer %s\n", engine,
	       (unsigned long long)received, (unsigned long long)expect, nmsgs,
	       received == expect && !bad ? "yes" : "no",
	       closed ? "closed its endpoint" : down ? "lost" : "still there");
	sctpt_close(ep);
	return received == expect && !bad && closed ? 0 : 1;
}
