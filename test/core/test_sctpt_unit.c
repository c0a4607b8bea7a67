/* Unit tests: envelope codec, card codec, stream mapping, ordering, and reassembly through
 * the real receive path (an endpoint without sockets, messages injected). */
#include "harness.h"
#include "sctpt_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

static int fails;
#define EXPECT(cond, ...)                                                        \
	do {                                                                     \
		if (!(cond)) {                                                   \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);     \
			fprintf(stderr, __VA_ARGS__);                            \
			fprintf(stderr, "\n");                                   \
			fails++;                                                 \
		}                                                                \
	} while (0)

static void envelope_round_trip_and_rejections(void)
{
	struct sctpt_hdr h = {.version = 1, .op = SCTPT_OP_DATA, .flags = SCTPT_F_FIRST,
			      .context = 0xdeadbeef, .tag = -5, .seq = 77, .msg_len = 1ull << 33,
			      .offset = 0}, d;
	uint8_t b[SCTPT_HDR_LEN];
	sctpt_hdr_encode(&h, b);
	EXPECT(b[0] == 1 && b[1] == 1 && b[4] == 0xde && b[11] == 0xfb, "byte layout");
	EXPECT(sctpt_hdr_decode(b, sizeof(b), &d) == 0, "decode: %s", sctpt_last_error());
	EXPECT(d.context == h.context && d.tag == -5 && d.seq == 77 && d.msg_len == h.msg_len,
	       "round trip");
	EXPECT(sctpt_hdr_decode(b, SCTPT_HDR_LEN - 1, &d) == -EPROTO, "short header accepted");
	uint8_t bad[SCTPT_HDR_LEN];
	memcpy(bad, b, sizeof(b)); bad[0] = 2;
	EXPECT(sctpt_hdr_decode(bad, sizeof(bad), &d) == -EPROTO, "version 2 accepted");
	memcpy(bad, b, sizeof(b)); bad[1] = 9;
	EXPECT(sctpt_hdr_decode(bad, sizeof(bad), &d) == -EPROTO, "unknown op accepted");
	memcpy(bad, b, sizeof(b)); bad[3] = 1;
	EXPECT(sctpt_hdr_decode(bad, sizeof(bad), &d) == -EPROTO, "reserved byte accepted");
	memcpy(bad, b, sizeof(b)); bad[2] = 0x80;
	EXPECT(sctpt_hdr_decode(bad, sizeof(bad), &d) == -EPROTO, "unknown flag accepted");
	h.offset = h.msg_len + 1;
	sctpt_hdr_encode(&h, bad);
	EXPECT(sctpt_hdr_decode(bad, sizeof(bad), &d) == -EPROTO, "offset past length accepted");
	h.offset = 0;
	h.msg_len = SCTPT_MAX_MSG + 1;
	sctpt_hdr_encode(&h, bad);
	EXPECT(sctpt_hdr_decode(bad, sizeof(bad), &d) == -EPROTO, "huge length accepted");
	h.msg_len = 10;
	h.flags = SCTPT_F_UNORDERED | SCTPT_F_FIRST | SCTPT_F_LAST;
	sctpt_hdr_encode(&h, bad);
	EXPECT(sctpt_hdr_decode(bad, sizeof(bad), &d) == -EPROTO, "unordered with seq accepted");

	struct sctpt_hdr cl = {.version = 1, .op = SCTPT_OP_CLOSE,
			       .flags = SCTPT_F_FIRST | SCTPT_F_LAST | SCTPT_F_UNORDERED};
	sctpt_hdr_encode(&cl, bad);
	EXPECT(sctpt_hdr_decode(bad, sizeof(bad), &d) == 0 && d.op == SCTPT_OP_CLOSE, "CLOSE");
	cl.msg_len = 5;
	sctpt_hdr_encode(&cl, bad);
	EXPECT(sctpt_hdr_decode(bad, sizeof(bad), &d) == -EPROTO, "CLOSE with payload accepted");

	struct sctpt_hdr f = {.version = 1, .op = 1, .msg_len = 100, .offset = 0,
			      .flags = SCTPT_F_FIRST};
	EXPECT(sctpt_hdr_check_payload(&f, 60) == 0, "first fragment");
	EXPECT(sctpt_hdr_check_payload(&f, 101) == -EPROTO, "overrun accepted");
	EXPECT(sctpt_hdr_check_payload(&f, 100) == -EPROTO, "missing LAST accepted");
	f.offset = 60;
	f.flags = SCTPT_F_LAST;
	EXPECT(sctpt_hdr_check_payload(&f, 40) == 0, "last fragment");
	f.flags = SCTPT_F_FIRST | SCTPT_F_LAST;
	EXPECT(sctpt_hdr_check_payload(&f, 40) == -EPROTO, "FIRST at offset 60 accepted");
	f.offset = 0;
	f.msg_len = 0;
	EXPECT(sctpt_hdr_check_payload(&f, 0) == 0, "empty message");
}

static void card_codec(void)
{
	struct sctpt_card_info c = {.udp_port = 4000, .sctp_port = 5001, .naddrs = 2}, d;
	char s[SCTPT_CARD_MAX];
	c.addrs[0] = inet_addr("198.18.0.1");
	c.addrs[1] = inet_addr("198.19.0.1");
	EXPECT(sctpt_card_format(&c, s, sizeof(s)) > 0, "format");
	EXPECT(strcmp(s, "sctpt1 4000 5001 198.18.0.1 198.19.0.1") == 0, "card text: %s", s);
	EXPECT(sctpt_card_parse(s, &d) == 0 && d.naddrs == 2 && d.udp_port == 4000 &&
	       d.addrs[1] == c.addrs[1], "parse back");
	const char *bad[] = {"", "sctpt2 1 2 1.2.3.4", "sctpt1 0 5 1.2.3.4", "sctpt1 70000 5 1.2.3.4",
			     "sctpt1 1 2", "sctpt1 1 2 1.2.3", "sctpt1 1x 2 1.2.3.4",
			     "sctpt1 1 2 1.1.1.1 1.1.1.2 1.1.1.3 1.1.1.4 1.1.1.5 1.1.1.6 1.1.1.7 1.1.1.8 1.1.1.9",
			     "sctpt1 1 2 1.2.3.4 shm=ab.12 shm=cd"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT(sctpt_card_parse(bad[i], &d) == -EINVAL, "bad card accepted: '%s'", bad[i]);
		EXPECT(strlen(sctpt_last_error()) > 0, "no message for '%s'", bad[i]);
	}
}

static void stream_mapping(void)
{
	int seen[16] = {0};
	for (int ctx = 0; ctx < 4; ctx++)
		for (int tag = -1; tag < 200; tag++) {
			uint16_t s = sctpt_stream_default((uint32_t)ctx, tag, 16);
			EXPECT(s >= 1 && s < 16, "stream %u out of range", s);
			if (s < 16)
				seen[s]++;
		}
	for (int s = 1; s < 16; s++)
		EXPECT(seen[s] > 804 / 15 / 3, "stream %d used %d times of 804", s, seen[s]);
	EXPECT(sctpt_stream_default(3, 9, 16) == sctpt_stream_default(3, 9, 16), "not deterministic");
}

static void ordering(void)
{
	struct sctpt_order o;
	struct sctpt_order_item it[5];
	sctpt_order_init(&o);
	struct sctpt_order_ctx *c = sctpt_order_get(&o, 42);
	EXPECT(sctpt_order_stamp(c) == 1 && sctpt_order_stamp(c) == 2, "stamps start at 1");
	EXPECT(sctpt_order_classify(c, 1) == SCTPT_ORDER_NOW, "1 first");
	EXPECT(sctpt_order_classify(c, 3) == SCTPT_ORDER_HOLD, "3 early");
	EXPECT(sctpt_order_classify(c, 0) == SCTPT_ORDER_BAD, "seq 0");
	it[0].seq = 3; sctpt_order_hold(c, &it[0]);
	it[1].seq = 2; sctpt_order_hold(c, &it[1]);
	EXPECT(sctpt_order_classify(c, 3) == SCTPT_ORDER_BAD, "duplicate 3 accepted");
	EXPECT(sctpt_order_advance(c) == &it[1], "2 after 1");
	EXPECT(sctpt_order_advance(c) == &it[0], "3 after 2");
	EXPECT(sctpt_order_advance(c) == NULL && c->recv_seq == 4, "nothing after 3");
	EXPECT(sctpt_order_classify(c, 2) == SCTPT_ORDER_BAD, "stale 2 accepted");
	/* wrap-around: ... UINT32_MAX, 1, 2 */
	c->recv_seq = UINT32_MAX;
	c->send_seq = UINT32_MAX - 1;
	EXPECT(sctpt_order_stamp(c) == UINT32_MAX && sctpt_order_stamp(c) == 1, "send wrap");
	EXPECT(sctpt_order_classify(c, 1) == SCTPT_ORDER_HOLD, "1 after wrap held");
	it[2].seq = 1; sctpt_order_hold(c, &it[2]);
	EXPECT(sctpt_order_advance(c) == &it[2], "wrap release");
	/* many contexts: the table grows */
	for (uint32_t k = 0; k < 1000; k++)
		EXPECT(sctpt_order_get(&o, k * 7919u) != NULL, "context %u", k);
	EXPECT(sctpt_order_get(&o, 42)->recv_seq == 1, "context 42 survived growth");
	sctpt_order_fini(&o, NULL);
}

/* Reassembly and ordered release through the receive path of a socketless endpoint. */
static int delivered[8], ndelivered;
static size_t delivered_len[8];
static void on_complete(void *arg, const struct sctpt_cqe *m)
{
	(void)arg;
	if (m->kind != SCTPT_CQE_RECV || m->status < 0)
		return; /* events, and nothing handed back: no recv_buf here */
	if (ndelivered < 8) {
		delivered[ndelivered] = m->tag;
		delivered_len[ndelivered] = m->len;
	}
	ndelivered++;
	EXPECT(check_pattern(m->data, m->len, (uint32_t)m->tag) == 0, "payload of tag %d", m->tag);
}

/* One received SCTP message, then the progress that hands out what it completed. */
static int inject(struct sctpt_ep *ep, sctpt_peer_t peer, uint16_t stream, const uint8_t *buf,
		  size_t len)
{
	int rc = sctpt_rx_inject(ep, peer, stream, buf, len);
	sctpt_progress(ep);
	return rc;
}

static size_t frame(uint8_t *out, uint32_t ctx, int32_t tag, uint32_t seq, const uint8_t *msg,
		    size_t len, size_t off, size_t n)
{
	struct sctpt_hdr h = {.version = 1, .op = SCTPT_OP_DATA, .context = ctx, .tag = tag,
			      .seq = seq, .msg_len = len, .offset = off};
	h.flags = (uint8_t)((off == 0 ? SCTPT_F_FIRST : 0) | (off + n == len ? SCTPT_F_LAST : 0));
	sctpt_hdr_encode(&h, out);
	memcpy(out + SCTPT_HDR_LEN, msg + off, n);
	return SCTPT_HDR_LEN + n;
}

static void reassembly(void)
{
	struct sctpt_config cfg;
	struct sctpt_ep *ep;
	sctpt_config_init(&cfg);
	cfg.addrs = "127.0.0.1";
	cfg.frag_size = 1024;
	cfg.handler.complete = on_complete;
	EXPECT(sctpt_open_nosock(&cfg, &ep) == 0, "open: %s", sctpt_last_error());
	sctpt_peer_t p = sctpt_peer_add(ep, "sctpt1 9 9 127.0.0.2");
	sctpt_peer_t q = sctpt_peer_add(ep, "sctpt1 9 9 127.0.0.3");
	static uint8_t big[3000], small[10], pkt[2000];
	fill_pattern(big, sizeof(big), 1);
	fill_pattern(small, sizeof(small), 2);
	/* big (seq 1, stream 3) in three fragments; small (seq 2, stream 4) completes first */
	EXPECT(inject(ep, p, 3, pkt, frame(pkt, 5, 1, 1, big, 3000, 0, 1024)) == 0, "f1");
	EXPECT(inject(ep, p, 4, pkt, frame(pkt, 5, 2, 2, small, 10, 0, 10)) == 0, "small");
	EXPECT(ndelivered == 0, "small released before big");
	EXPECT(inject(ep, p, 3, pkt, frame(pkt, 5, 1, 1, big, 3000, 1024, 1024)) == 0, "f2");
	EXPECT(inject(ep, p, 3, pkt, frame(pkt, 5, 1, 1, big, 3000, 2048, 952)) == 0, "f3");
	EXPECT(ndelivered == 2 && delivered[0] == 1 && delivered[1] == 2 &&
	       delivered_len[0] == 3000, "order after reassembly: %d messages", ndelivered);
	/* a fragment that skips ahead is a protocol error for that peer only */
	EXPECT(inject(ep, q, 3, pkt, frame(pkt, 5, 1, 1, big, 3000, 0, 1024)) == 0, "q f1");
	EXPECT(inject(ep, q, 3, pkt, frame(pkt, 5, 1, 1, big, 3000, 2048, 952)) == -EPROTO,
	       "gap accepted");
	EXPECT(sctpt_peer_state(ep, q) == SCTPT_PEER_FAILED, "peer q not failed");
	EXPECT(strstr(sctpt_last_error(), "127.0.0.3") != NULL, "error does not name the peer: %s",
	       sctpt_last_error());
	EXPECT(sctpt_peer_state(ep, p) != SCTPT_PEER_FAILED, "peer p failed too");
	/* a peer with a larger fragment size: accepted, straight into the message buffer */
	static uint8_t huge[1500];
	fill_pattern(huge, sizeof(huge), 3);
	EXPECT(inject(ep, p, 5, pkt, frame(pkt, 6, 3, 1, huge, 1500, 0, 1500)) == 0 &&
	       ndelivered == 3 && delivered_len[2] == 1500, "larger fragment not received");
	/* a message longer than its envelope says */
	size_t n = frame(pkt, 6, 4, 2, huge, 10, 0, 10);
	memcpy(pkt + n, huge, 20);
	EXPECT(inject(ep, p, 5, pkt, n + 20) == -EPROTO, "overlong message accepted");
	EXPECT(ndelivered == 3, "overlong message delivered");
	sctpt_close(ep);
}

/* A striped peer: fragments of one message over any rail (stream), in any order, some
 * twice, as after a rail failure; unordered messages numbered with MSGID. */
static int two_rails(void *arg, const char *card, const uint32_t *addrs, int naddrs,
		     const uint32_t *mine, int nmine, struct sctpt_rail *out, int max)
{
	(void)arg;
	(void)card;
	EXPECT(naddrs == 2 && max >= 2 && nmine == 1, "rails callback: %d addresses, %d own, max %d",
	       naddrs, nmine, max);
	for (int i = 0; i < 2; i++) {
		out[i].local = mine[0];
		out[i].remote = addrs[i];
	}
	return 2;
}

static size_t frame_f(uint8_t *out, uint32_t ctx, int32_t tag, uint32_t seq, uint8_t flags,
		      const uint8_t *msg, size_t len, size_t off, size_t n)
{
	size_t k = frame(out, ctx, tag, seq, msg, len, off, n);
	out[2] |= flags;
	return k;
}

static void striped_reassembly(void)
{
	struct sctpt_config cfg;
	struct sctpt_ep *ep;
	static struct sctpt_peer_stats st;
	sctpt_config_init(&cfg);
	cfg.addrs = "127.0.0.1";
	cfg.frag_size = 1024;
	cfg.handler.complete = on_complete;
	cfg.ops.rails = two_rails;
	EXPECT(sctpt_open_nosock(&cfg, &ep) == 0, "open: %s", sctpt_last_error());
	sctpt_peer_t p = sctpt_peer_add(ep, "sctpt1 9 9 127.0.0.2 127.0.0.3");
	EXPECT(p >= 0 && sctpt_peer_stats(ep, p, &st) == 0 && st.nrails == 2 && st.npaths == 2,
	       "striped peer: %d rails", st.nrails);
	static uint8_t big[3000], small[10], pkt[2000];
	ndelivered = 0;
	fill_pattern(big, sizeof(big), 1);
	fill_pattern(small, sizeof(small), 2);
	/* big (seq 1): last fragment first, on two streams, the first one twice */
	EXPECT(inject(ep, p, 3, pkt, frame(pkt, 5, 1, 1, big, 3000, 2048, 952)) == 0, "f3");
	EXPECT(inject(ep, p, 7, pkt, frame(pkt, 5, 1, 1, big, 3000, 0, 1024)) == 0, "f1");
	EXPECT(inject(ep, p, 3, pkt, frame(pkt, 5, 1, 1, big, 3000, 0, 1024)) == 0, "f1 again");
	EXPECT(inject(ep, p, 4, pkt, frame(pkt, 5, 2, 2, small, 10, 0, 10)) == 0, "small");
	EXPECT(ndelivered == 0, "small released before big");
	EXPECT(inject(ep, p, 7, pkt, frame(pkt, 5, 1, 1, big, 3000, 1024, 1024)) == 0, "f2");
	EXPECT(ndelivered == 2 && delivered[0] == 1 && delivered[1] == 2 &&
	       delivered_len[0] == 3000, "striped order: %d messages", ndelivered);
	/* late copies of delivered messages are dropped, not protocol errors */
	EXPECT(inject(ep, p, 4, pkt, frame(pkt, 5, 2, 2, small, 10, 0, 10)) == 0, "small again");
	EXPECT(inject(ep, p, 3, pkt, frame(pkt, 5, 1, 1, big, 3000, 1024, 1024)) == 0, "f2 again");
	/* unordered, numbered: id 2 (tag 3) before id 1 (tag 4, two fragments, reversed) */
	uint8_t uf = SCTPT_F_UNORDERED | SCTPT_F_MSGID;
	static uint8_t u3[10], u4[1500];
	fill_pattern(u3, sizeof(u3), 3);
	fill_pattern(u4, sizeof(u4), 4);
	EXPECT(inject(ep, p, 2, pkt, frame_f(pkt, 9, 3, 2, uf, u3, 10, 0, 10)) == 0, "u id 2");
	EXPECT(inject(ep, p, 2, pkt, frame_f(pkt, 9, 4, 1, uf, u4, 1500, 1024, 476)) == 0, "u1 f2");
	EXPECT(ndelivered == 3 && delivered[2] == 3, "unordered id 2 not delivered at once");
	EXPECT(inject(ep, p, 2, pkt, frame_f(pkt, 9, 3, 2, uf, u3, 10, 0, 10)) == 0, "u id 2 again");
	EXPECT(inject(ep, p, 6, pkt, frame_f(pkt, 9, 4, 1, uf, u4, 1500, 0, 1024)) == 0, "u1 f1");
	EXPECT(inject(ep, p, 2, pkt, frame_f(pkt, 9, 4, 1, uf, u4, 1500, 1024, 476)) == 0, "u1 f2 again");
	EXPECT(ndelivered == 4 && delivered[3] == 4 && delivered_len[3] == 1500,
	       "unordered id 1: %d messages", ndelivered);
	EXPECT(sctpt_peer_state(ep, p) != SCTPT_PEER_FAILED, "striped peer failed: %s",
	       sctpt_last_error());
	EXPECT(sctpt_peer_stats(ep, p, &st) == 0 && st.dup_frags_dropped == 5 && st.reassembling == 0,
	       "duplicates dropped: %llu, reassembling %u", (unsigned long long)st.dup_frags_dropped,
	       st.reassembling);
	/* MSGID only on unordered, numbered data */
	EXPECT(inject(ep, p, 2, pkt, frame_f(pkt, 9, 5, 3, SCTPT_F_MSGID, u3, 10, 0, 10)) ==
	       -EPROTO, "MSGID on an ordered message accepted");
	/* two rails to one remote address cannot be told apart on receipt: refused */
	EXPECT(sctpt_peer_add(ep, "sctpt1 8 8 127.0.0.4 127.0.0.4") == -EINVAL &&
	       strstr(sctpt_last_error(), "both go to 127.0.0.4"), "duplicate rail: %s",
	       sctpt_last_error());
	sctpt_close(ep);
}

static void config_file(void)
{
	char path[] = "/tmp/sctpt_cfgXXXXXX";
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	fprintf(f, "# thesis-style multihoming file\nnode0 198.18.0.1 198.19.0.1\n"
		   "node1 198.18.0.2   198.19.0.2 # two NICs\n\n");
	fclose(f);
	uint32_t a[8];
	EXPECT(sctpt_config_file_addrs(path, "node1", a, 8) == 2 && a[1] == inet_addr("198.19.0.2"),
	       "node1's addresses");
	EXPECT(sctpt_config_file_addrs(path, "node9", a, 8) == -ENOENT, "missing host");
	EXPECT(strstr(sctpt_last_error(), "node9") != NULL, "message: %s", sctpt_last_error());
	f = fopen(path, "a");
	fprintf(f, "node2 198.18.0.300\n");
	fclose(f);
	EXPECT(sctpt_config_file_addrs(path, "node1", a, 8) == -EINVAL, "bad address accepted");
	EXPECT(strstr(sctpt_last_error(), ":5:") != NULL, "error does not name line 5: %s",
	       sctpt_last_error());
	EXPECT(sctpt_config_file_addrs("/nonexistent/x", "a", a, 8) < 0, "missing file");
	unlink(path);
}

/* Fragment sizes on the native engine: one it cannot carry is refused at open; one a little
 * above whole packets is cut to whole packets for sending messages above it (those within it
 * go whole: test_sctpt_frag_whole), and received as configured. */
static void fragment_bounds(void)
{
	struct sctpt_config cfg;
	struct sctpt_ep *ep;
	sctpt_config_init(&cfg);
	cfg.addrs = "127.0.0.1";
	cfg.backend = "native";
	cfg.handler.complete = on_complete;
	cfg.frag_size = 127800;
	EXPECT(sctpt_open(&cfg, &ep) == -EINVAL && strstr(sctpt_last_error(), "fragments"),
	       "a fragment the engine cannot carry accepted: %s", sctpt_last_error());
	/* its largest buffer holds the message's record as well as the message */
	cfg.frag_size = 65536 + 256 - SCTPT_HDR_LEN;
	EXPECT(sctpt_open(&cfg, &ep) == -EINVAL, "a fragment with no room for its record accepted");
	cfg.frag_size = 64 * 1024;
	cfg.path_mtu = 1500;
	EXPECT(sctpt_open(&cfg, &ep) == 0, "open: %s", sctpt_last_error());
	/* 12 bytes of SCTP common header and 20 of I-DATA per packet */
	size_t per = 1500 - 32;
	EXPECT((ep->tx_frag + SCTPT_HDR_LEN) % per == 0 && ep->tx_frag <= 64 * 1024 &&
	       ep->tx_frag + SCTPT_HDR_LEN + per > 64 * 1024 + SCTPT_HDR_LEN,
	       "fragments of %zu bytes do not fill whole packets of %zu", ep->tx_frag, per);
	EXPECT(ep->cfg.frag_size == 64 * 1024 && ep->buf_len == 64 * 1024 + SCTPT_HDR_LEN,
	       "the receive side's fragment size changed");
	sctpt_close(ep);
}

/* Buffers of reassembled messages are kept for the next message of a near size (not for one
 * under half their size), within cfg.rcvbuf bytes, and come back aligned as malloc's. */
static void message_buffers_kept(void)
{
	struct sctpt_config cfg;
	struct sctpt_ep *ep;
	sctpt_config_init(&cfg);
	cfg.addrs = "127.0.0.1";
	cfg.handler.complete = on_complete;
	cfg.rcvbuf = 1u << 20;
	EXPECT(sctpt_open(&cfg, &ep) == 0, "open: %s", sctpt_last_error());
	uint8_t *a = sctpt_msgbuf_get(ep, 100000), *b;
	EXPECT(a && (uintptr_t)a % 16 == 0, "buffer %p", (void *)a);
	memset(a, 1, 100000);
	sctpt_msgbuf_put(ep, a);
	EXPECT(sctpt_msgbuf_get(ep, 99000) == a, "a near size did not reuse the buffer");
	sctpt_msgbuf_put(ep, a);
	b = sctpt_msgbuf_get(ep, 40000);
	EXPECT(b && b != a, "a buffer over twice the size reused");
	sctpt_msgbuf_put(ep, b);
	EXPECT(ep->nmsgbufs == 2 && ep->msgbuf_bytes >= 140000, "%d kept, %zu bytes",
	       ep->nmsgbufs, ep->msgbuf_bytes);
	void *big[12];
	for (int i = 0; i < 12; i++)
		big[i] = sctpt_msgbuf_get(ep, 200000);
	for (int i = 0; i < 12; i++)
		sctpt_msgbuf_put(ep, big[i]);
	EXPECT(ep->msgbuf_bytes <= cfg.rcvbuf, "%zu bytes kept over the %zu allowed",
	       ep->msgbuf_bytes, cfg.rcvbuf);
	sctpt_close(ep);
}

int main(void)
{
	config_file();
	envelope_round_trip_and_rejections();
	card_codec();
	stream_mapping();
	ordering();
	reassembly();
	striped_reassembly();
	fragment_bounds();
	message_buffers_kept();
	printf("%s\n", fails ? "FAILED" : "all unit checks passed");
	return fails ? 1 : 0;
}
