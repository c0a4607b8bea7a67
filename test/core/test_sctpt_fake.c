/*
 * Unit tests on the fake engine (fake_backend.h): the rail scheduler (placement, full
 * buffers, failure, hand-over, re-send, stall), peer loss, close, the completion rules
 * (exactly once, per-context handlers, polled handlers, buffers handed back) and striped
 * reassembly from a faulty peer.
 */
#include "fake_backend.h"

#define SM_CHECK_NOTE() sctpt_last_error()
#include "common/sm_check.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#define MAXC 4096

/* What a handler saw. */
struct seen {
	int recv, recv_bad, send_ok, send_err, events, lost, closed;
	int send_cookie[MAXC];   /* completions per send cookie (an index) */
	size_t bytes;
	int recv_tag[MAXC];      /* tags in delivery order */
	int bufs_out, bufs_back; /* recv_buf buffers handed out and come back */
};

static uint8_t pattern(size_t i, int tag)
{
	return (uint8_t)(i * 31 + (size_t)tag * 7 + 1);
}

static void on_complete(void *arg, const struct sctpt_cqe *c)
{
	struct seen *s = arg;
	switch (c->kind) {
	case SCTPT_CQE_RECV:
		if (c->cookie)
			s->bufs_back++;
		if (c->status) {
			s->recv_bad++;
			free(c->cookie);
			break;
		}
		for (size_t i = 0; i < c->len; i++)
			if (((const uint8_t *)c->data)[i] != pattern(i, c->tag)) {
				FAIL("tag %d: byte %zu is %u", c->tag, i, ((const uint8_t *)c->data)[i]);
				break;
			}
		if (s->recv < MAXC)
			s->recv_tag[s->recv] = c->tag;
		s->recv++;
		s->bytes += c->len;
		free(c->cookie); /* the recv_buf buffer c->data was in */
		break;
	case SCTPT_CQE_SEND: {
		intptr_t k = (intptr_t)c->cookie;
		if (k >= 0 && k < MAXC)
			s->send_cookie[k]++;
		if (c->status)
			s->send_err++;
		else
			s->send_ok++;
		break;
	}
	case SCTPT_CQE_EVENT:
		s->events++;
		s->lost += c->ev.type == SCTPT_EV_ASSOC_DOWN;
		s->closed += c->ev.type == SCTPT_EV_PEER_CLOSED;
		break;
	}
}

static void *on_recv_buf(void *arg, sctpt_peer_t peer, uint32_t context, int32_t tag, size_t len,
			 void **cookie)
{
	struct seen *s = arg;
	(void)peer, (void)context, (void)tag;
	void *b = malloc(len);
	*cookie = b;
	s->bufs_out += b != NULL;
	return b;
}

static int two_rails(void *arg, const char *card, const uint32_t *peer_addrs, int npeer,
		     const uint32_t *mine, int nmine, struct sctpt_rail *out, int max)
{
	(void)arg, (void)card, (void)max;
	int n = npeer < nmine ? npeer : nmine;
	for (int i = 0; i < n; i++)
		out[i] = (struct sctpt_rail){mine[i], peer_addrs[i]};
	return n;
}

struct pair {
	struct sctpt_ep *a, *b;
	sctpt_peer_t ab, ba; /* b as a's peer, a as b's */
	struct seen sa, sb;
};

static const char *g_addrs = "198.18.0.1,198.19.0.1";

static void pair_open(struct pair *x, int striped, size_t frag)
{
	struct sctpt_config cfg;
	char card[SCTPT_CARD_MAX];
	memset(x, 0, sizeof(*x));
	sctpt_config_init(&cfg);
	cfg.backend = "fake";
	cfg.addrs = g_addrs;
	cfg.frag_size = frag;
	cfg.handler.complete = on_complete;
	cfg.handler.recv_buf = on_recv_buf;
	if (striped)
		cfg.ops.rails = two_rails;
	cfg.handler.arg = &x->sa;
	REQUIRE(sctpt_open(&cfg, &x->a) == 0);
	cfg.handler.arg = &x->sb;
	REQUIRE(sctpt_open(&cfg, &x->b) == 0);
	sctpt_card(x->b, card, sizeof(card));
	x->ab = sctpt_peer_add(x->a, card);
	sctpt_card(x->a, card, sizeof(card));
	x->ba = sctpt_peer_add(x->b, card);
	REQUIRE(x->ab >= 0 && x->ba >= 0);
}

static void pair_close(struct pair *x)
{
	sctpt_close(x->a);
	sctpt_close(x->b);
}

static void spin(struct pair *x, int rounds)
{
	for (int i = 0; i < rounds; i++) {
		sctpt_progress(x->a);
		sctpt_progress(x->b);
	}
}

/* Sends message k (tag k, len bytes of pattern) from a to b; the buffer is leaked on
 * purpose only if the send stays queued past the test (never). */
static uint8_t *bufs[MAXC];
static int send_k(struct pair *x, int k, size_t len, unsigned flags)
{
	free(bufs[k]);
	bufs[k] = malloc(len ? len : 1);
	for (size_t i = 0; i < len; i++)
		bufs[k][i] = pattern(i, k);
	struct iovec iov = {bufs[k], len};
	return sctpt_send(x->a, x->ab, 7, k, flags, &iov, 1, (void *)(intptr_t)k);
}

static void free_bufs(void)
{
	for (int k = 0; k < MAXC; k++) {
		free(bufs[k]);
		bufs[k] = NULL;
	}
}

/* Every send that returned 0 completed exactly once; none that returned 1 or < 0 did. */
static void check_once(const struct seen *s, const int *rc, int n)
{
	for (int k = 0; k < n; k++)
		CHECK_EQ(s->send_cookie[k], rc[k] == 0 ? 1 : 0, "send %d (returned %d)", k, rc[k]);
}

TEST(striped_messages_split_over_rails_and_arrive_in_order)
{
	struct pair x;
	int rc[64];
	pair_open(&x, 1, 4096);
	spin(&x, 2);
	for (int k = 0; k < 64; k++)
		rc[k] = send_k(&x, k, 50000 + (size_t)k, 0);
	spin(&x, 20);
	CHECK_EQ(x.sb.recv, 64);
	for (int k = 0; k < 64 && k < x.sb.recv; k++)
		CHECK_EQ(x.sb.recv_tag[k], k, "order");
	struct fake_rail *r0 = fake_rail(x.a, x.ab, 0), *r1 = fake_rail(x.a, x.ab, 1);
	CHECK(r0->sent_msgs > 100 && r1->sent_msgs > 100, "both rails used: %llu / %llu",
	      (unsigned long long)r0->sent_msgs, (unsigned long long)r1->sent_msgs);
	check_once(&x.sa, rc, 64);
	pair_close(&x);
	free_bufs();
}

TEST(a_full_rail_holds_fragments_back_until_it_has_room)
{
	struct pair x;
	int rc[8];
	pair_open(&x, 1, 4096);
	spin(&x, 2);
	fake_rail(x.a, x.ab, 0)->full = 1;
	fake_rail(x.a, x.ab, 1)->full = 1;
	for (int k = 0; k < 8; k++)
		rc[k] = send_k(&x, k, 20000, 0);
	spin(&x, 5);
	CHECK_EQ(x.sb.recv, 0, "nothing can leave");
	CHECK(sctpt_pending(x.a, x.ab), "sends are queued");
	fake_rail(x.a, x.ab, 1)->full = 0;
	for (int i = 0; i < 500 && x.sb.recv < 8; i++)
		spin(&x, 1); /* rail 1 takes what rail 0 cannot, a little at a time */
	CHECK_EQ(x.sb.recv, 8);
	check_once(&x.sa, rc, 8);
	pair_close(&x);
	free_bufs();
}

/*
 * A rail dies with fragments in flight (sent, never arriving): its copies go to the other
 * rail and every message arrives once. Then the other rail fails while the re-send list is
 * being placed (its last fragment on the failing rail): the failed rail's copies must join
 * the list, not vanish with its last fragment.
 */
TEST(a_failed_rails_copies_are_resent_even_when_another_fails_during_the_resend)
{
	struct pair x;
	int rc[16];
	pair_open(&x, 1, 4096);
	spin(&x, 2);
	struct fake_rail *r0 = fake_rail(x.a, x.ab, 0), *r1 = fake_rail(x.a, x.ab, 1);
	r0->blackhole = 1;
	r1->blackhole = 1;
	for (int k = 0; k < 16; k++)
		rc[k] = send_k(&x, k, 30000, 0);
	spin(&x, 3);
	CHECK_EQ(x.sb.recv, 0, "all in flight, none arrived");
	/* rail 0's path goes down: its copies are queued for rail 1, which fails on the first
	 * send; rail 1's copies then join the queue too, and go to rail 0 once it is back */
	r1->blackhole = 0;
	r1->fail = 1;
	fake_path(x.a, x.ab, 0, 0);
	spin(&x, 3);
	CHECK_EQ(x.sb.recv, 0, "no rail works");
	r0->blackhole = 0;
	r0->held = 0;
	fake_path(x.a, x.ab, 0, 1);
	for (int i = 0; i < 400 && x.sb.recv < 16; i++) {
		spin(&x, 1);
		struct timespec ts = {0, 2000000};
		nanosleep(&ts, NULL); /* failed rails wait 200 ms before they are used again */
	}
	CHECK_EQ(x.sb.recv, 16, "every message arrived (held %llu)",
		 (unsigned long long)r0->held);
	struct sctpt_peer_stats st;
	sctpt_peer_stats(x.a, x.ab, &st);
	CHECK(st.rail_failures >= 2, "rail failures %llu", (unsigned long long)st.rail_failures);
	CHECK(st.frags_resent > 0);
	check_once(&x.sa, rc, 16);
	pair_close(&x);
	free_bufs();
}

/*
 * The re-send list's last fragment is being placed when the rail it is offered to fails: that
 * rail's copies are appended to the list behind the fragment, and must be re-sent too (they
 * were lost with the fragment once it was placed elsewhere).
 */
TEST(a_rail_failing_while_the_last_resent_fragment_is_placed_keeps_its_copies)
{
	struct pair x;
	int rc[16];
	g_addrs = "198.18.0.1,198.19.0.1,198.20.0.1";
	pair_open(&x, 1, 4096);
	g_addrs = "198.18.0.1,198.19.0.1";
	spin(&x, 2);
	struct sctpt_peer *p = x.a->peers[x.ab];
	REQUIRE(p->nrails == 3);
	struct fake_rail *r0 = fake_rail(x.a, x.ab, 0), *r1 = fake_rail(x.a, x.ab, 1);
	r0->blackhole = 1;
	r1->blackhole = 1;
	rc[0] = send_k(&x, 0, 1000, 0); /* one fragment, on rail 0 (all alike: the first) */
	CHECK_EQ(r0->sent_msgs, 1);
	r0->full = 1;
	for (int k = 1; k < 16; k++)
		rc[k] = send_k(&x, k, 3000, 0);
	spin(&x, 3);
	CHECK(r1->sent_msgs > 0, "rail 1 holds copies");
	/* rail 1 looks fastest and fails on its next send; rail 2 is slow but works */
	p->rails[1].rate = 1000000000;
	p->rails[2].rate = 1000;
	r1->fail = 1;
	fake_path(x.a, x.ab, 0, 0); /* rail 0 fails: its one copy is the whole re-send list */
	for (int i = 0; i < 50 && x.sb.recv < 16; i++)
		spin(&x, 1);
	CHECK_EQ(x.sb.recv, 16, "every message, rail 0's and rail 1's copies re-sent on rail 2");
	check_once(&x.sa, rc, 16);
	r0->blackhole = r1->blackhole = 0;
	pair_close(&x);
	free_bufs();
}

TEST(a_stalled_rail_hands_its_copies_to_a_moving_one)
{
	struct pair x;
	int rc[8];
	pair_open(&x, 1, 4096);
	spin(&x, 2);
	struct fake_rail *r0 = fake_rail(x.a, x.ab, 0), *r1 = fake_rail(x.a, x.ab, 1);
	r0->blackhole = 1; /* holds, moves nothing */
	r1->hold = 1;
	for (int k = 0; k < 8; k++)
		rc[k] = send_k(&x, k, 16384, 0);
	spin(&x, 2);
	uint64_t t0 = sctpt_now_ms();
	while (sctpt_now_ms() - t0 < 600) {
		fake_ack(x.a, x.ab, 1); /* rail 1 moves data */
		spin(&x, 1);
		struct timespec ts = {0, 5000000};
		nanosleep(&ts, NULL);
	}
	struct sctpt_peer_stats st;
	sctpt_peer_stats(x.a, x.ab, &st);
	CHECK(st.rail_stalls >= 1, "stalls %llu", (unsigned long long)st.rail_stalls);
	CHECK_EQ(x.sb.recv, 8, "all arrived through rail 1");
	check_once(&x.sa, rc, 8);
	r0->blackhole = 0;
	r0->held = 0;
	pair_close(&x);
	free_bufs();
}

TEST(a_lost_peer_fails_each_queued_send_once_and_gives_buffers_back)
{
	struct pair x;
	int rc[8];
	pair_open(&x, 0, 4096);
	spin(&x, 2);
	fake_rail(x.a, x.ab, -1)->full = 1;
	for (int k = 0; k < 8; k++)
		rc[k] = send_k(&x, k, 10000, 0);
	/* b gets half a large message: its recv_buf buffer must come back when a is lost */
	struct fake_rail *back = fake_rail(x.b, x.ba, -1);
	back->full = 0;
	uint8_t big[3 * 4096];
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = pattern(i, 99);
	struct iovec iov = {big, sizeof(big)};
	back->full = 0;
	CHECK(sctpt_send(x.b, x.ba, 7, 99, 0, &iov, 1, NULL) >= 0);
	spin(&x, 1);
	fake_lose(x.a, x.ab);
	spin(&x, 3);
	for (int k = 0; k < 8; k++)
		CHECK(rc[k] == 0, "send %d queued", k);
	CHECK_EQ(x.sa.send_err, 8, "each queued send failed");
	CHECK_EQ(x.sa.lost, 1, "one ASSOC_DOWN");
	check_once(&x.sa, rc, 8);
	CHECK(send_k(&x, 9, 10, 0) == -EPIPE, "a send to a lost peer fails at once");
	CHECK_EQ(x.sa.send_cookie[9], 0, "... with no completion");
	/* b: a's peer is lost from b's side too */
	fake_lose(x.b, x.ba);
	spin(&x, 2);
	CHECK_EQ(x.sb.bufs_out, x.sb.bufs_back, "recv_buf buffers handed out and back");
	pair_close(&x);
	free_bufs();
}

TEST(close_cancels_what_cannot_leave_once)
{
	struct pair x;
	int rc[8];
	pair_open(&x, 0, 4096);
	spin(&x, 2);
	fake_rail(x.a, x.ab, -1)->full = 1;
	for (int k = 0; k < 8; k++)
		rc[k] = send_k(&x, k, 5000, 0);
	/* fake: close's drain gives up after its deadline (3 s); the sends never left */
	sctpt_close(x.a);
	CHECK_EQ(x.sa.send_err, 8);
	check_once(&x.sa, rc, 8);
	sctpt_close(x.b);
	free_bufs();
}

static struct seen polled_sink;

TEST(handlers_own_context_ranges_and_polled_handlers_read)
{
	struct pair x;
	pair_open(&x, 0, 4096);
	struct sctpt_handler h = {.lo = 100, .hi = 199}, bad = {.lo = 150, .hi = 300};
	int id = sctpt_handler_add(x.b, &h);
	CHECK(id > 0);
	CHECK_EQ(sctpt_handler_add(x.b, &bad), -EEXIST, "overlap refused");
	struct seen *own = &polled_sink;
	struct sctpt_handler ha = {.lo = 100, .hi = 199, .complete = on_complete, .arg = own};
	CHECK(sctpt_handler_add(x.a, &ha) > 0);
	uint8_t d[300];
	for (size_t i = 0; i < sizeof(d); i++)
		d[i] = pattern(i, 5);
	struct iovec iov = {d, sizeof(d)};
	fake_rail(x.a, x.ab, -1)->full = 1;
	CHECK_EQ(sctpt_send(x.a, x.ab, 150, 5, 0, &iov, 1, (void *)(intptr_t)3), 0, "queued");
	CHECK_EQ(sctpt_send(x.a, x.ab, 7, 5, 0, &iov, 1, (void *)(intptr_t)4), 0, "queued");
	fake_rail(x.a, x.ab, -1)->full = 0;
	spin(&x, 3);
	CHECK_EQ(own->send_cookie[3], 1, "context 150's completion to its handler");
	CHECK_EQ(x.sa.send_cookie[3], 0, "... not to the default");
	CHECK_EQ(x.sa.send_cookie[4], 1, "context 7's to the default");
	struct sctpt_cqe c[4];
	int n = sctpt_cq_read(x.b, id, c, 4);
	CHECK_EQ(n, 1, "one message polled");
	if (n == 1) {
		CHECK(c[0].kind == SCTPT_CQE_RECV && c[0].context == 150 && c[0].len == sizeof(d) &&
		      memcmp(c[0].data, d, sizeof(d)) == 0);
		sctpt_cq_release(x.b, c, n);
	}
	CHECK_EQ(x.sb.recv, 1, "context 7 to b's default handler");
	CHECK_EQ(sctpt_cq_read(x.b, id, c, 4), 0, "read once");
	pair_close(&x);
}

/* Fragments of a striped message as a faulty peer might send them. */
static int inject(struct sctpt_ep *ep, sctpt_peer_t p, uint64_t off, size_t n, uint64_t msg_len)
{
	static uint8_t b[SCTPT_HDR_LEN + 8192];
	struct sctpt_hdr h = {.version = SCTPT_PROTO_VERSION, .op = SCTPT_OP_DATA,
			      .flags = SCTPT_F_UNORDERED | SCTPT_F_MSGID, .context = 7, .tag = 1,
			      .seq = 1, .msg_len = msg_len, .offset = off};
	h.flags |= (off == 0 ? SCTPT_F_FIRST : 0) | (off + n == msg_len ? SCTPT_F_LAST : 0);
	sctpt_hdr_encode(&h, b);
	for (size_t i = 0; i < n; i++)
		b[SCTPT_HDR_LEN + i] = pattern(off + i, 1);
	return sctpt_rx_inject(ep, p, 1, b, SCTPT_HDR_LEN + n);
}

TEST(striped_reassembly_never_delivers_bytes_that_did_not_arrive)
{
	struct pair x;
	/* [0, 4096) and [2048, 6144) of 8 KiB add up to 8 KiB, but 6144..8191 never came: a
	 * byte count would deliver it; the second is taken for a copy of the first and the
	 * message waits for the rest */
	pair_open(&x, 1, 4096);
	CHECK_EQ(inject(x.b, x.ba, 0, 4096, 8192), 0);
	CHECK_EQ(inject(x.b, x.ba, 2048, 4096, 8192), 0);
	spin(&x, 2);
	CHECK_EQ(x.sb.recv, 0, "no message with bytes missing");
	pair_close(&x);

	/* [0, 2048), [4096, 8192), then [2048, 6144) overlapping the second: a faulty peer */
	pair_open(&x, 1, 4096);
	inject(x.b, x.ba, 0, 2048, 8192);
	inject(x.b, x.ba, 4096, 4096, 8192);
	inject(x.b, x.ba, 2048, 4096, 8192);
	spin(&x, 2);
	CHECK_EQ(x.sb.recv, 0, "no message from overlapping fragments");
	CHECK_EQ(sctpt_peer_state(x.b, x.ba), SCTPT_PEER_FAILED, "the peer is failed");
	CHECK_EQ(x.sb.bufs_out, x.sb.bufs_back, "its recv_buf buffer came back");
	pair_close(&x);

	/* the fragments out of order, one twice: delivered once */
	pair_open(&x, 1, 4096);
	inject(x.b, x.ba, 4096, 4096, 8192);
	inject(x.b, x.ba, 4096, 4096, 8192);
	inject(x.b, x.ba, 0, 4096, 8192);
	spin(&x, 2);
	CHECK_EQ(x.sb.recv, 1);
	CHECK_EQ(sctpt_peer_state(x.b, x.ba), SCTPT_PEER_IDLE);
	pair_close(&x);
}

/* An ordered message of a context, as a peer sends it (one fragment). */
static void inject_ordered(struct sctpt_ep *ep, sctpt_peer_t p, uint16_t stream, int32_t tag,
			   uint32_t seq, size_t n)
{
	static uint8_t b[SCTPT_HDR_LEN + 2048];
	struct sctpt_hdr h = {.version = SCTPT_PROTO_VERSION, .op = SCTPT_OP_DATA,
			      .flags = SCTPT_F_FIRST | SCTPT_F_LAST, .context = 7, .tag = tag,
			      .seq = seq, .msg_len = n};
	sctpt_hdr_encode(&h, b);
	for (size_t i = 0; i < n; i++)
		b[SCTPT_HDR_LEN + i] = pattern(i, tag);
	CHECK_EQ(sctpt_rx_inject(ep, p, stream, b, SCTPT_HDR_LEN + n), 0);
}

TEST(messages_held_for_order_come_out_in_order_with_their_own_envelopes)
{
	struct pair x;
	pair_open(&x, 0, 4096);
	/* seq 3 and 2 overtake 1 on other streams (one small, one over the inline size) */
	inject_ordered(x.b, x.ba, 3, 30, 3, 100);
	inject_ordered(x.b, x.ba, 2, 20, 2, 1500);
	spin(&x, 1);
	CHECK_EQ(x.sb.recv, 0, "held for seq 1");
	inject_ordered(x.b, x.ba, 1, 10, 1, 700);
	spin(&x, 1);
	CHECK_EQ(x.sb.recv, 3);
	CHECK(x.sb.recv_tag[0] == 10 && x.sb.recv_tag[1] == 20 && x.sb.recv_tag[2] == 30,
	      "tags in order: %d %d %d", x.sb.recv_tag[0], x.sb.recv_tag[1], x.sb.recv_tag[2]);
	pair_close(&x);
}

int main(void)
{
	fake_backend_register();
	RUN(striped_messages_split_over_rails_and_arrive_in_order);
	RUN(a_full_rail_holds_fragments_back_until_it_has_room);
	RUN(a_failed_rails_copies_are_resent_even_when_another_fails_during_the_resend);
	RUN(a_rail_failing_while_the_last_resent_fragment_is_placed_keeps_its_copies);
	RUN(a_stalled_rail_hands_its_copies_to_a_moving_one);
	RUN(a_lost_peer_fails_each_queued_send_once_and_gives_buffers_back);
	RUN(close_cancels_what_cannot_leave_once);
	RUN(handlers_own_context_ranges_and_polled_handlers_read);
	RUN(striped_reassembly_never_delivers_bytes_that_did_not_arrive);
	RUN(messages_held_for_order_come_out_in_order_with_their_own_envelopes);
	return sm_check_result();
}
