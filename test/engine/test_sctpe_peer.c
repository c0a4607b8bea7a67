/*
 * The native engine against a peer emulated packet by packet: the handshake, DATA and SACK
 * with gap blocks and duplicates, I-DATA reassembly out of order, and hostile input (bad
 * checksum, unknown tag, chunk length past the packet, forged and stale cookies, a SACK for
 * data never sent, empty DATA, an INIT flood, out-of-the-blue packets): each dropped or
 * answered as RFC 9260 says, counted, and never a crash or a corrupted delivery.
 */
#include "emu.h"

#include <string.h>
#include <unistd.h>

#include "common/sm_bytes.h"
#include "common/sm_check.h"

static struct emu m;

static void open_up(int crc, int idata)
{
	REQUIRE(emu_open(&m, crc, 16) == 0, "open: %s", sctpt_last_error());
	REQUIRE(emu_handshake(&m, idata) == 0, "handshake");
}

/* A DATA chunk carrying a whole core message with this tag, sent on the peer's association. */
static void send_msg(uint32_t tsn, uint16_t sid, uint16_t ssn, int32_t tag, int idata)
{
	uint8_t msg[256], ch[512];
	size_t n = emu_message(msg, tag, 10);
	size_t len = emu_data(ch, idata, SCTPE_DATA_B | SCTPE_DATA_E, tsn, sid, ssn, 0, msg, n);
	emu_inject(&m, 1, m.peer_tag, ch, len);
}

static int sack_of(uint32_t *cum, uint16_t *ngaps, uint16_t gaps[][2], uint16_t *ndups,
		   uint32_t *dups)
{
	uint16_t len;
	const uint8_t *c = emu_chunk(&m, SCTPE_SACK, &len, NULL);
	if (!c)
		return -1;
	*cum = sm_get_be32(c + 4);
	*ngaps = sm_get_be16(c + 12);
	*ndups = sm_get_be16(c + 14);
	for (int i = 0; i < *ngaps && i < 8; i++) {
		gaps[i][0] = sm_get_be16(c + 16 + 4 * i);
		gaps[i][1] = sm_get_be16(c + 18 + 4 * i);
	}
	for (int i = 0; i < *ndups && i < 8; i++)
		dups[i] = sm_get_be32(c + 16 + 4 * *ngaps + 4 * i);
	return 0;
}

TEST(handshake_then_data_is_delivered_and_acknowledged)
{
	open_up(0, 0);
	CHECK_EQ(m.ups, 1, "the peer's association came up");
	emu_clear(&m);
	send_msg(m.tsn, 1, 0, 7, 0);
	emu_progress(&m);
	CHECK_EQ(m.recvs, 1);
	CHECK_EQ(m.last_len, 10);
	uint32_t cum, dups[8];
	uint16_t ng, nd, gaps[8][2];
	REQUIRE(sack_of(&cum, &ng, gaps, &nd, dups) == 0, "a SACK went out");
	CHECK_EQ(cum, m.tsn);
	CHECK_EQ(ng, 0);
	emu_close(&m);
}

/* Up with a SACK every second packet (the default, set here so that the tests say it). */
static void open_sack_every_second(void)
{
	REQUIRE(emu_open(&m, 0, 16) == 0);
	m.ep->cfg.sack_freq = 2;
	REQUIRE(emu_handshake(&m, 0) == 0);
}

TEST(sack_every_second_packet_else_after_the_delay)
{
	open_sack_every_second();
	uint32_t cum, dups[8];
	uint16_t ng, nd, gaps[8][2];
	emu_clear(&m);
	send_msg(m.tsn, 1, 0, 1, 0);
	CHECK(sack_of(&cum, &ng, gaps, &nd, dups) != 0, "no SACK for the first packet");
	send_msg(m.tsn + 1, 1, 1, 2, 0);
	REQUIRE(sack_of(&cum, &ng, gaps, &nd, dups) == 0, "a SACK for the second");
	CHECK_EQ(cum, m.tsn + 1);
	emu_clear(&m);
	send_msg(m.tsn + 2, 1, 2, 3, 0);
	CHECK(sack_of(&cum, &ng, gaps, &nd, dups) != 0);
	pthread_mutex_lock(&m.ep->lock); /* the delayed SACK timer's time comes */
	sctpe_ep_tx_begin(m.ep);
	sctpe_wheel_run(&m.e->wheel, m.e->wheel.now + (uint64_t)m.ep->cfg.sack_delay_ms);
	sctpe_ep_tx_end(m.ep);
	pthread_mutex_unlock(&m.ep->lock);
	REQUIRE(sack_of(&cum, &ng, gaps, &nd, dups) == 0, "the delayed SACK");
	CHECK_EQ(cum, m.tsn + 2);
	emu_close(&m);
}

TEST(a_sack_kept_for_the_reply_waits_one_batch_only)
{
	open_sack_every_second();
	uint32_t cum, dups[8];
	uint16_t ng, nd, gaps[8][2];
	emu_clear(&m);
	m.e->in_input = 1; /* packets as the receive batch brings them, turn by turn */
	send_msg(m.tsn, 1, 0, 1, 0);
	send_msg(m.tsn + 1, 1, 1, 2, 0);
	CHECK(sack_of(&cum, &ng, gaps, &nd, dups) != 0, "the SACK waits for a reply");
	send_msg(m.tsn + 2, 1, 2, 3, 0); /* the next turn brings more data, no reply */
	m.e->in_input = 0;
	REQUIRE(sack_of(&cum, &ng, gaps, &nd, dups) == 0, "it waited one batch, not more");
	CHECK(sctpe_tsn_le(m.tsn + 1, cum), "it acknowledges the first two at least");
	emu_close(&m);
}

TEST(gaps_and_duplicates_are_reported_and_order_kept)
{
	open_up(0, 0);
	uint32_t t = m.tsn, cum, dups[8];
	uint16_t ng, nd, gaps[8][2];
	/* stream 1 messages SSN 0..5 as TSN t..t+5; t+1 and t+4 come late */
	send_msg(t, 1, 0, 100, 0);
	send_msg(t + 2, 1, 2, 102, 0);
	send_msg(t + 3, 1, 3, 103, 0);
	emu_clear(&m);
	send_msg(t + 5, 1, 5, 105, 0);
	REQUIRE(sack_of(&cum, &ng, gaps, &nd, dups) == 0);
	CHECK_EQ(cum, t);
	CHECK_EQ(ng, 2);
	CHECK(gaps[0][0] == 2 && gaps[0][1] == 3, "first block %u-%u", gaps[0][0], gaps[0][1]);
	CHECK(gaps[1][0] == 5 && gaps[1][1] == 5, "second block %u-%u", gaps[1][0], gaps[1][1]);
	emu_clear(&m);
	send_msg(t + 2, 1, 2, 102, 0); /* again */
	REQUIRE(sack_of(&cum, &ng, gaps, &nd, dups) == 0);
	CHECK_EQ(nd, 1);
	CHECK_EQ(dups[0], t + 2);
	emu_progress(&m);
	CHECK_EQ(m.recvs, 1, "only SSN 0 may be delivered before SSN 1 arrives");
	send_msg(t + 1, 1, 1, 101, 0);
	send_msg(t + 4, 1, 4, 104, 0);
	emu_progress(&m);
	CHECK_EQ(m.recvs, 6);
	for (int i = 0; i < 6 && i < m.recvs; i++)
		CHECK_EQ(m.tags[i], 100 + i, "delivery %d", i);
	emu_clear(&m);
	send_msg(t + 6, 1, 6, 106, 0);
	REQUIRE(sack_of(&cum, &ng, gaps, &nd, dups) == 0);
	CHECK_EQ(cum, t + 6);
	CHECK_EQ(ng, 0);
	CHECK_EQ(m.e->st.dup_tsns, 1);
	emu_close(&m);
}

TEST(idata_fragments_interleaved_and_out_of_order_reassemble)
{
	open_up(0, 1);
	uint8_t a[3000], b[2000], ch[2048];
	uint32_t t = m.tsn;
	emu_message(a, 1, sizeof(a) - SCTPT_HDR_LEN);
	emu_message(b, 2, sizeof(b) - SCTPT_HDR_LEN);
	for (size_t i = SCTPT_HDR_LEN; i < sizeof(a); i++)
		a[i] = (uint8_t)i;
	for (size_t i = SCTPT_HDR_LEN; i < sizeof(b); i++)
		b[i] = (uint8_t)(i * 3);
	/* a: fsn 0,1,2 on stream 3 mid 0; b: fsn 0,1 on stream 4 mid 0; sent b1 a2 a0 b0 a1 */
	size_t n;
	n = emu_data(ch, 1, SCTPE_DATA_E, t + 1, 4, 0, 1, b + 1000, 1000);
	emu_inject(&m, 1, m.peer_tag, ch, n);
	n = emu_data(ch, 1, SCTPE_DATA_E, t + 4, 3, 0, 2, a + 2000, 1000);
	emu_inject(&m, 1, m.peer_tag, ch, n);
	n = emu_data(ch, 1, SCTPE_DATA_B, t + 2, 3, 0, 0, a, 1000);
	emu_inject(&m, 1, m.peer_tag, ch, n);
	n = emu_data(ch, 1, SCTPE_DATA_B, t, 4, 0, 0, b, 1000);
	emu_inject(&m, 1, m.peer_tag, ch, n);
	emu_progress(&m);
	CHECK_EQ(m.recvs, 1, "b is whole, a is not");
	CHECK_EQ(m.last_len, sizeof(b) - SCTPT_HDR_LEN);
	CHECK(memcmp(m.last, b + SCTPT_HDR_LEN, m.last_len) == 0, "b intact");
	n = emu_data(ch, 1, 0, t + 3, 3, 0, 1, a + 1000, 1000);
	emu_inject(&m, 1, m.peer_tag, ch, n);
	emu_progress(&m);
	CHECK_EQ(m.recvs, 2);
	CHECK_EQ(m.last_len, sizeof(a) - SCTPT_HDR_LEN);
	CHECK(memcmp(m.last, a + SCTPT_HDR_LEN, m.last_len) == 0, "a intact");
	/* a DATA chunk where I-DATA was negotiated is a protocol violation */
	emu_clear(&m);
	send_msg(t + 5, 1, 0, 9, 0);
	CHECK(emu_chunk(&m, SCTPE_ABORT, NULL, NULL), "DATA on an I-DATA association aborts");
	emu_progress(&m);
	CHECK_EQ(m.downs, 1);
	emu_close(&m);
}

TEST(bad_checksum_is_dropped_and_counted)
{
	open_up(1, 0);
	uint8_t pkt[512], msg[64];
	size_t n = emu_message(msg, 5, 10);
	size_t cl = emu_data(pkt + 12, 0, 3, m.tsn, 1, 0, 0, msg, n);
	sm_put_be16(pkt, SCTPE_SPORT);
	sm_put_be16(pkt + 2, SCTPE_RPORT);
	sm_put_be32(pkt + 4, m.peer_tag);
	sm_put_be32(pkt + 8, 0x12345678);
	emu_clear(&m);
	emu_inject_raw(&m, pkt, 12 + cl);
	emu_progress(&m);
	CHECK_EQ(m.e->st.bad_csum, 1);
	CHECK_EQ(m.recvs, 0);
	CHECK_EQ(m.npkts, 0, "nothing answered");
	send_msg(m.tsn, 1, 0, 5, 0); /* the same, with a good checksum */
	emu_progress(&m);
	CHECK_EQ(m.recvs, 1);
	emu_close(&m);
}

TEST(unknown_tag_and_lying_lengths_are_dropped)
{
	open_up(0, 0);
	uint8_t msg[64], ch[256];
	size_t n = emu_message(msg, 5, 10);
	size_t cl = emu_data(ch, 0, 3, m.tsn, 1, 0, 0, msg, n);
	emu_clear(&m);
	emu_inject(&m, 1, m.peer_tag + 1, ch, cl);
	CHECK_EQ(m.e->st.bad_vtag, 1);
	CHECK_EQ(m.npkts, 0, "no SACK for a packet with the wrong tag");
	sm_put_be16(ch + 2, 400); /* the chunk claims more than the packet has */
	emu_inject(&m, 1, m.peer_tag, ch, cl);
	CHECK_EQ(m.e->st.malformed, 1);
	sm_put_be16(ch + 2, 10); /* shorter than DATA's fixed part */
	emu_inject(&m, 1, m.peer_tag, ch, cl);
	CHECK_EQ(m.e->st.malformed, 2);
	emu_progress(&m);
	CHECK_EQ(m.recvs, 0);
	sm_put_be16(ch + 2, (uint16_t)(16 + n));
	emu_inject(&m, 1, m.peer_tag, ch, cl);
	emu_progress(&m);
	CHECK_EQ(m.recvs, 1, "the association survived");
	emu_close(&m);
}

TEST(forged_and_stale_cookies_are_refused)
{
	REQUIRE(emu_open(&m, 0, 16) == 0);
	REQUIRE(emu_handshake(&m, 0) == 0);
	/* a forged cookie: the valid one with a flipped bit; nothing is set up */
	uint8_t echo[300];
	echo[0] = SCTPE_COOKIE_ECHO;
	echo[1] = 0;
	sm_put_be16(echo + 2, (uint16_t)(4 + m.cookie_len));
	memcpy(echo + 4, m.cookie, m.cookie_len);
	echo[4 + 20] ^= 1;
	emu_clear(&m);
	emu_inject(&m, 1, m.peer_tag, echo, SCTPE_PAD4(4 + m.cookie_len));
	CHECK_EQ(m.e->st.bad_cookie, 1);
	CHECK(!emu_chunk(&m, SCTPE_COOKIE_ACK, NULL, NULL), "no COOKIE ACK for a forged cookie");
	/* the genuine one again: a lost COOKIE ACK, answered again, no second association */
	echo[4 + 20] ^= 1;
	emu_inject(&m, 1, m.peer_tag, echo, SCTPE_PAD4(4 + m.cookie_len));
	CHECK(emu_chunk(&m, SCTPE_COOKIE_ACK, NULL, NULL));
	emu_progress(&m);
	CHECK_EQ(m.ups, 1);
	emu_close(&m);
	/* stale: the cookie's life is over by the time it comes back */
	REQUIRE(emu_open(&m, 0, 16) == 0);
	m.e->cookie_life_ms = 0;
	m.echo_delay_ms = 3;
	CHECK(emu_handshake(&m, 0) != 0, "a stale cookie sets nothing up");
	uint16_t len;
	const uint8_t *err = emu_chunk(&m, SCTPE_ERROR, &len, NULL);
	REQUIRE(err, "an ERROR answers a stale cookie");
	CHECK_EQ(sm_get_be16(err + 4), SCTPE_E_STALE_COOKIE);
	CHECK_EQ(m.e->st.stale_cookie, 1);
	emu_progress(&m);
	CHECK_EQ(m.ups, 0);
	emu_close(&m);
}

/* Our own association to the emulated peer up to ESTABLISHED, with one message sent; returns
 * the TSN of its first DATA chunk. */
static uint32_t connect_out(uint32_t *our_tag)
{
	uint8_t msg[64];
	struct iovec iov = {msg, 20};
	memset(msg, 1, sizeof(msg));
	emu_clear(&m);
	REQUIRE(sctpt_send(m.ep, m.peer, 1, 1, 0, &iov, 1, NULL) >= 0);
	uint16_t len;
	const uint8_t *init = emu_chunk(&m, SCTPE_INIT, &len, NULL);
	REQUIRE(init, "INIT sent");
	*our_tag = sm_get_be32(init + 4);
	uint32_t itsn = sm_get_be32(init + 16);
	uint8_t ack[64];
	memset(ack, 0, sizeof(ack));
	ack[0] = SCTPE_INIT_ACK;
	sm_put_be16(ack + 2, 20 + 12);
	sm_put_be32(ack + 4, 0xabcdef01u);
	sm_put_be32(ack + 8, 1u << 20);
	sm_put_be16(ack + 12, 16);
	sm_put_be16(ack + 14, 16);
	sm_put_be32(ack + 16, 5);
	sm_put_be16(ack + 20, SCTPE_P_STATE_COOKIE);
	sm_put_be16(ack + 22, 12);
	memcpy(ack + 24, "cookie!!", 8);
	emu_clear(&m);
	emu_inject(&m, 0, *our_tag, ack, 32);
	REQUIRE(emu_chunk(&m, SCTPE_COOKIE_ECHO, &len, NULL), "COOKIE ECHO sent");
	uint8_t cack[4] = {SCTPE_COOKIE_ACK, 0, 0, 4};
	emu_clear(&m);
	emu_inject(&m, 0, *our_tag, cack, 4);
	emu_progress(&m);
	REQUIRE(emu_chunk(&m, SCTPE_DATA, NULL, NULL), "the queued message went out");
	return itsn;
}

TEST(sack_of_data_never_sent_aborts)
{
	REQUIRE(emu_open(&m, 0, 16) == 0);
	uint32_t tag, t = connect_out(&tag);
	uint8_t sack[16];
	memset(sack, 0, sizeof(sack));
	sack[0] = SCTPE_SACK;
	sm_put_be16(sack + 2, 16);
	sm_put_be32(sack + 4, t + 100);
	sm_put_be32(sack + 8, 1u << 20);
	emu_clear(&m);
	emu_inject(&m, 0, tag, sack, 16);
	uint16_t len;
	const uint8_t *ab = emu_chunk(&m, SCTPE_ABORT, &len, NULL);
	REQUIRE(ab, "ABORT sent");
	CHECK(len >= 8 && sm_get_be16(ab + 4) == SCTPE_E_PROTOCOL_VIOLATION);
	CHECK_EQ(m.e->st.bad_sacks, 1);
	emu_progress(&m);
	CHECK_EQ(m.downs, 1, "the core hears of it");
	CHECK_EQ(m.last_down_err, -EPROTO);
	emu_close(&m);
}

TEST(sack_with_gap_of_data_never_sent_aborts_and_good_sack_frees)
{
	REQUIRE(emu_open(&m, 0, 16) == 0);
	uint32_t tag, t = connect_out(&tag);
	uint8_t sack[20];
	memset(sack, 0, sizeof(sack));
	sack[0] = SCTPE_SACK;
	sm_put_be16(sack + 2, 16);
	sm_put_be32(sack + 4, t);
	sm_put_be32(sack + 8, 1u << 20);
	emu_inject(&m, 0, tag, sack, 16);
	CHECK_EQ(m.e->st.sacks_in, 1);
	CHECK_EQ(sctpt_pending(m.ep, -1), 0);
	struct sctpe_assoc *a = m.e->ps[m.peer].out;
	REQUIRE(a);
	CHECK_EQ(a->held_bytes, 0, "acknowledged data is freed");
	sm_put_be16(sack + 2, 20);
	sm_put_be16(sack + 12, 1);
	sm_put_be16(sack + 16, 2);
	sm_put_be16(sack + 18, 9);
	emu_clear(&m);
	emu_inject(&m, 0, tag, sack, 20);
	CHECK(emu_chunk(&m, SCTPE_ABORT, NULL, NULL), "a gap block past what was sent aborts");
	emu_close(&m);
}

TEST(empty_data_and_bad_stream_are_answered)
{
	open_up(0, 0);
	uint8_t ch[64], msg[64];
	size_t n = emu_message(msg, 5, 1);
	size_t cl = emu_data(ch, 0, 3, m.tsn, 40, 0, 0, msg, n);
	emu_clear(&m);
	emu_inject(&m, 1, m.peer_tag, ch, cl);
	uint16_t len;
	const uint8_t *err = emu_chunk(&m, SCTPE_ERROR, &len, NULL);
	REQUIRE(err, "ERROR for a stream that does not exist");
	CHECK_EQ(sm_get_be16(err + 4), SCTPE_E_INVALID_STREAM);
	CHECK_EQ(sm_get_be16(err + 8), 40);
	emu_progress(&m);
	CHECK_EQ(m.recvs, 0);
	cl = emu_data(ch, 0, 3, m.tsn + 1, 1, 0, 0, NULL, 0);
	emu_clear(&m);
	emu_inject(&m, 1, m.peer_tag, ch, cl);
	const uint8_t *ab = emu_chunk(&m, SCTPE_ABORT, &len, NULL);
	REQUIRE(ab, "ABORT for DATA without data");
	CHECK_EQ(sm_get_be16(ab + 4), SCTPE_E_NO_USER_DATA);
	emu_close(&m);
}

TEST(init_flood_keeps_no_state_and_ootb_gets_abort)
{
	REQUIRE(emu_open(&m, 0, 16) == 0);
	uint8_t c[20];
	for (int i = 0; i < 5000; i++) {
		memset(c, 0, sizeof(c));
		c[0] = SCTPE_INIT;
		sm_put_be16(c + 2, 20);
		sm_put_be32(c + 4, 0x1000u + (uint32_t)i);
		sm_put_be32(c + 8, 65536);
		sm_put_be16(c + 12, 8);
		sm_put_be16(c + 14, 8);
		sm_put_be32(c + 16, (uint32_t)i);
		emu_inject(&m, 1, 0, c, 20);
		if (m.npkts > 100)
			emu_clear(&m);
	}
	int n = 0;
	struct sctpe_assoc *a;
	TAILQ_FOREACH(a, &m.e->all, link)
		n++;
	CHECK_EQ(n, 0, "INITs keep no state");
	CHECK(emu_chunk(&m, SCTPE_INIT_ACK, NULL, NULL));
	/* DATA to our send port, where no association is: ABORT with the T bit, its tag */
	uint8_t ch[64], msg[64];
	size_t len = emu_data(ch, 0, 3, 1, 1, 0, 0, msg, emu_message(msg, 1, 1));
	emu_clear(&m);
	emu_inject(&m, 0, 0x77777777u, ch, len);
	uint16_t cl;
	uint32_t vtag;
	const uint8_t *ab = emu_chunk(&m, SCTPE_ABORT, &cl, &vtag);
	REQUIRE(ab, "ABORT for an out-of-the-blue packet");
	CHECK(ab[1] & SCTPE_FLAG_T);
	CHECK_EQ(vtag, 0x77777777u);
	CHECK_EQ(m.e->st.ootb, 1);
	/* ... but none for an out-of-the-blue ABORT */
	uint8_t abort[4] = {SCTPE_ABORT, 0, 0, 4};
	emu_clear(&m);
	emu_inject(&m, 0, 1, abort, 4);
	CHECK_EQ(m.npkts, 0);
	emu_close(&m);
}

TEST(shutdown_from_the_peer_completes)
{
	open_up(0, 0);
	send_msg(m.tsn, 1, 0, 1, 0);
	uint8_t sd[8] = {SCTPE_SHUTDOWN, 0, 0, 8};
	sm_put_be32(sd + 4, 0); /* nothing of ours to acknowledge: our initial TSN - 1 */
	struct sctpe_assoc *a = m.e->ps[m.peer].in;
	REQUIRE(a);
	sm_put_be32(sd + 4, a->cum);
	emu_clear(&m);
	emu_inject(&m, 1, m.peer_tag, sd, 8);
	CHECK(emu_chunk(&m, SCTPE_SHUTDOWN_ACK, NULL, NULL), "SHUTDOWN ACK");
	uint8_t sc[4] = {SCTPE_SHUTDOWN_COMPLETE, 0, 0, 4};
	emu_inject(&m, 1, m.peer_tag, sc, 4);
	emu_progress(&m);
	CHECK_EQ(m.recvs, 1, "what came before the SHUTDOWN is delivered");
	CHECK(m.downs >= 1);
	CHECK(m.e->ps[m.peer].in == NULL, "the association is gone");
	emu_close(&m);
}

TEST(peer_restart_replaces_the_association)
{
	open_up(0, 0);
	send_msg(m.tsn, 1, 0, 1, 0);
	emu_progress(&m);
	CHECK_EQ(m.recvs, 1);
	struct sctpe_assoc *old = m.e->ps[m.peer].in;
	REQUIRE(old);
	uint32_t old_tag = m.peer_tag;
	/* the peer's process starts again: new tag, new TSNs, same address */
	m.tag = 0x5eed0002u;
	m.tsn = 7000;
	int ups = m.ups, events = m.events;
	REQUIRE(emu_handshake(&m, 0) == 0, "the new incarnation's handshake");
	CHECK(m.peer_tag != old_tag, "a new tag for the new association");
	struct sctpe_assoc *now = m.e->ps[m.peer].in;
	CHECK(now && now != old, "the association was replaced");
	CHECK_EQ(m.ups, ups, "not reported as a new peer");
	CHECK(m.events > events, "a restart event");
	send_msg(m.tsn, 1, 0, 2, 0);
	emu_progress(&m);
	CHECK_EQ(m.recvs, 2, "data of the new incarnation is delivered");
	/* a COOKIE ECHO of the old incarnation now is not taken */
	emu_close(&m);
}

/* A core message of n payload bytes (a pattern from seed) in msg; its length. */
static size_t pattern_msg(uint8_t *msg, int32_t tag, size_t n, unsigned seed)
{
	size_t len = emu_message(msg, tag, n);
	for (size_t i = SCTPT_HDR_LEN; i < len; i++)
		msg[i] = (uint8_t)(i * seed + 7);
	return len;
}

/* Chunk k of msg cut in pieces of 'piece' bytes (k from 0), as DATA or I-DATA on sid. */
static void send_piece(const uint8_t *msg, size_t len, size_t piece, int k, uint32_t tsn0,
		       uint16_t sid, uint32_t mid, int idata)
{
	uint8_t ch[2048];
	size_t off = (size_t)k * piece, n = len - off < piece ? len - off : piece;
	uint8_t fl = (k == 0 ? SCTPE_DATA_B : 0) | (off + n == len ? SCTPE_DATA_E : 0);
	size_t cl = emu_data(ch, idata, fl, tsn0 + (uint32_t)k, sid, mid, (uint32_t)k, msg + off, n);
	emu_inject(&m, 1, m.peer_tag, ch, cl);
}

TEST(in_order_chunks_are_placed_and_overtakers_follow_them)
{
	for (int idata = 0; idata <= 1; idata++) {
		open_up(0, idata);
		uint8_t a[5032];
		size_t len = pattern_msg(a, 5, 5000, 3);
		uint32_t t = m.tsn;
		send_piece(a, len, 1100, 0, t, 2, 0, idata);
		emu_progress(&m);
		CHECK_EQ(m.e->st.placed, 1u, "the first chunk goes to the core at once");
		send_piece(a, len, 1100, 2, t, 2, 0, idata);
		send_piece(a, len, 1100, 3, t, 2, 0, idata);
		emu_progress(&m);
		CHECK_EQ(m.e->st.placed, 1u, "chunks 2 and 3 wait for chunk 1");
		send_piece(a, len, 1100, 1, t, 2, 0, idata);
		emu_progress(&m);
		CHECK_EQ(m.e->st.placed, 4u, "chunk 1 brings 2 and 3 with it");
		CHECK_EQ(m.recvs, 0, "not whole yet");
		send_piece(a, len, 1100, 4, t, 2, 0, idata);
		emu_progress(&m);
		CHECK_EQ(m.e->st.placed, 5u);
		CHECK_EQ(m.recvs, 1);
		CHECK_EQ(m.recv_bytes, len - SCTPT_HDR_LEN);
		CHECK(memcmp(m.last, a + SCTPT_HDR_LEN, m.last_len) == 0, "intact (idata %d)", idata);
		/* the stream's next message: placed too, nothing held */
		size_t len2 = pattern_msg(a, 6, 3000, 5);
		for (int k = 0; k < 3; k++)
			send_piece(a, len2, 1100, k, t + 5, 2, 1, idata);
		emu_progress(&m);
		CHECK_EQ(m.e->st.placed, 8u);
		CHECK_EQ(m.recvs, 2);
		CHECK(m.last_len == len2 - SCTPT_HDR_LEN &&
		      memcmp(m.last, a + SCTPT_HDR_LEN, m.last_len) == 0, "second intact");
		emu_close(&m);
	}
}

TEST(placement_walks_past_an_unfinished_unordered_message)
{
	open_up(0, 0); /* DATA: unordered and ordered fragments share the stream's list */
	uint8_t u[2232], o[3332], ch[2048];
	size_t ul = pattern_msg(u, 1, 2200, 11), ol = pattern_msg(o, 2, 3300, 13);
	uint32_t t = m.tsn;
	size_t n = emu_data(ch, 0, SCTPE_DATA_B | SCTPE_DATA_U, t, 3, 0, 0, u, 1200);
	emu_inject(&m, 1, m.peer_tag, ch, n);
	send_piece(o, ol, 1200, 1, t + 2, 3, 0, 0);
	send_piece(o, ol, 1200, 0, t + 2, 3, 0, 0);
	emu_progress(&m);
	CHECK_EQ(m.e->st.placed, 2u, "the ordered message's second chunk follows its first");
	send_piece(o, ol, 1200, 2, t + 2, 3, 0, 0);
	emu_progress(&m);
	CHECK_EQ(m.recvs, 1, "the ordered message is whole");
	CHECK(m.last_len == ol - SCTPT_HDR_LEN && memcmp(m.last, o + SCTPT_HDR_LEN, m.last_len) == 0,
	      "ordered message intact");
	n = emu_data(ch, 0, SCTPE_DATA_E | SCTPE_DATA_U, t + 1, 3, 0, 0, u + 1200, ul - 1200);
	emu_inject(&m, 1, m.peer_tag, ch, n);
	emu_progress(&m);
	CHECK_EQ(m.recvs, 2, "the unordered one completes from the list");
	CHECK(m.last_len == ul - SCTPT_HDR_LEN && memcmp(m.last, u + SCTPT_HDR_LEN, m.last_len) == 0,
	      "unordered message intact");
	emu_close(&m);
}

TEST(a_placed_fragment_sent_again_under_a_new_tsn_aborts)
{
	open_up(0, 1);
	uint8_t a[4032];
	size_t len = pattern_msg(a, 1, 4000, 3);
	uint32_t t = m.tsn;
	send_piece(a, len, 1100, 0, t, 1, 0, 1);
	send_piece(a, len, 1100, 1, t, 1, 0, 1);
	emu_clear(&m);
	send_piece(a, len, 1100, 1, t + 1, 1, 0, 1); /* FSN 1 again as TSN t + 2 */
	CHECK(emu_chunk(&m, SCTPE_ABORT, NULL, NULL), "a protocol violation");
	emu_progress(&m);
	CHECK_EQ(m.downs, 1);
	CHECK_EQ(m.recvs, 0);
	emu_close(&m);
}

TEST(a_message_half_placed_goes_when_the_peer_aborts_or_we_close)
{
	uint8_t a[4032], ab[4] = {SCTPE_ABORT, 0, 0, 4};
	size_t len = pattern_msg(a, 1, 4000, 3);
	open_up(0, 1);
	send_piece(a, len, 1100, 0, m.tsn, 1, 0, 1);
	send_piece(a, len, 1100, 1, m.tsn, 1, 0, 1);
	emu_progress(&m);
	CHECK_EQ(m.e->st.placed, 2u);
	emu_inject(&m, 1, m.peer_tag, ab, sizeof(ab));
	emu_progress(&m);
	CHECK_EQ(m.downs, 1, "the peer is lost");
	CHECK_EQ(m.recvs, 0, "nothing of the half message is delivered");
	emu_close(&m); /* its staging buffer is back (ASan's leak check) */
	open_up(0, 0);
	send_piece(a, len, 1100, 0, m.tsn, 1, 0, 0);
	emu_progress(&m);
	CHECK_EQ(m.e->st.placed, 1u);
	emu_close(&m);
}

/* Waits (bounded) for our association's T3-rtx to fire and resend; the resent chunk. */
static void wait_t3(struct sctpe_assoc *a)
{
	for (int i = 0; i < 300 && m.e->st.rtx_t3 == 0; i++) {
		usleep(10000);
		emu_progress(&m);
	}
	REQUIRE(m.e->st.rtx_t3 == 1, "T3-rtx fired");
	CHECK_EQ(a->cc.cwnd, a->cc.mtu, "cwnd is one MTU after the timeout");
}

/* A SACK up to cum reporting dup (0: none) as a duplicate. */
static void sack_dup(uint32_t tag, uint32_t cum, uint32_t dup)
{
	uint8_t sack[20];
	memset(sack, 0, sizeof(sack));
	sack[0] = SCTPE_SACK;
	sm_put_be16(sack + 2, dup ? 20 : 16);
	sm_put_be32(sack + 4, cum);
	sm_put_be32(sack + 8, 1u << 20);
	sm_put_be16(sack + 14, dup ? 1 : 0);
	sm_put_be32(sack + 16, dup);
	emu_inject(&m, 0, tag, sack, dup ? 20 : 16);
}

TEST(a_timeout_whose_resend_arrives_twice_is_undone)
{
	REQUIRE(emu_open(&m, 0, 16) == 0);
	uint32_t tag, t = connect_out(&tag);
	struct sctpe_assoc *a = m.e->ps[m.peer].out;
	REQUIRE(a);
	uint32_t cwnd = a->cc.cwnd, ssthresh = a->cc.ssthresh, rto = a->cc.rto_ms;
	wait_t3(a);
	sack_dup(tag, t, 0); /* the original's acknowledgement, late */
	CHECK_EQ(m.e->st.rtx_undone, 0, "not yet: the resend may have been needed");
	sack_dup(tag, t, t); /* the peer saw the resend as a duplicate */
	CHECK_EQ(m.e->st.rtx_undone, 1);
	CHECK_EQ(a->cc.cwnd, cwnd, "cwnd back");
	CHECK_EQ(a->cc.ssthresh, ssthresh, "ssthresh back");
	CHECK_EQ(a->cc.rto_ms, rto, "no back-off");
	emu_close(&m);
}

TEST(a_timeout_whose_resend_was_needed_stands)
{
	REQUIRE(emu_open(&m, 0, 16) == 0);
	uint32_t tag, t = connect_out(&tag);
	struct sctpe_assoc *a = m.e->ps[m.peer].out;
	REQUIRE(a);
	uint32_t ssthresh = a->cc.ssthresh;
	wait_t3(a);
	sack_dup(tag, t, 0); /* the resend's acknowledgement: no duplicate */
	uint8_t msg[20] = {0};
	struct iovec iov = {msg, sizeof(msg)};
	REQUIRE(sctpt_send(m.ep, m.peer, 1, 2, 0, &iov, 1, NULL) >= 0);
	emu_progress(&m);
	sack_dup(tag, t + 1, 0); /* what followed is acknowledged: the episode is over */
	sack_dup(tag, t + 1, t); /* a duplicate reported after that does not count */
	CHECK_EQ(m.e->st.rtx_undone, 0);
	CHECK(a->cc.ssthresh < ssthresh, "the reduction stands");
	emu_close(&m);
}

int main(void)
{
	RUN(handshake_then_data_is_delivered_and_acknowledged);
	RUN(sack_every_second_packet_else_after_the_delay);
	RUN(a_sack_kept_for_the_reply_waits_one_batch_only);
	RUN(gaps_and_duplicates_are_reported_and_order_kept);
	RUN(idata_fragments_interleaved_and_out_of_order_reassemble);
	RUN(bad_checksum_is_dropped_and_counted);
	RUN(unknown_tag_and_lying_lengths_are_dropped);
	RUN(forged_and_stale_cookies_are_refused);
	RUN(sack_of_data_never_sent_aborts);
	RUN(sack_with_gap_of_data_never_sent_aborts_and_good_sack_frees);
	RUN(empty_data_and_bad_stream_are_answered);
	RUN(init_flood_keeps_no_state_and_ootb_gets_abort);
	RUN(shutdown_from_the_peer_completes);
	RUN(peer_restart_replaces_the_association);
	RUN(in_order_chunks_are_placed_and_overtakers_follow_them);
	RUN(placement_walks_past_an_unfinished_unordered_message);
	RUN(a_placed_fragment_sent_again_under_a_new_tsn_aborts);
	RUN(a_message_half_placed_goes_when_the_peer_aborts_or_we_close);
	RUN(a_timeout_whose_resend_arrives_twice_is_undone);
	RUN(a_timeout_whose_resend_was_needed_stands);
	return sm_check_result();
}
