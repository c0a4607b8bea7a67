/*
 * The engine's pure parts: the TSN map (cumulative ack, gap blocks, duplicates, the window,
 * wrap-around), congestion control (slow start, congestion avoidance, fast recovery, T3
 * back-off, RTO from RTT samples), the timer wheel (order, re-arming, far timers, timers
 * stopped from another timer's function) and HMAC-SHA256 (RFC 4231 vectors).
 */
#include "sctpe_cc.h"
#include "sctpe_sha256.h"
#include "sctpe_timer.h"
#include "sctpe_tsn.h"

#include <string.h>

#include "common/sm_check.h"

TEST(tsn_map_reports_gaps_and_advances_over_holes)
{
	struct sctpe_tsnmap m;
	struct sctpe_gap g[8];
	REQUIRE(sctpe_tsn_init(&m, 100) == 0);
	CHECK_EQ(m.cum, 99);
	CHECK_EQ(sctpe_tsn_check(&m, 99), SCTPE_TSN_DUP);
	CHECK_EQ(sctpe_tsn_check(&m, 100), SCTPE_TSN_NEW);
	sctpe_tsn_add(&m, 100);
	sctpe_tsn_add(&m, 101);
	CHECK_EQ(m.cum, 101);
	CHECK(!sctpe_tsn_has_gaps(&m));
	sctpe_tsn_add(&m, 103);
	sctpe_tsn_add(&m, 104);
	sctpe_tsn_add(&m, 107);
	sctpe_tsn_add(&m, 200);
	CHECK_EQ(m.cum, 101);
	CHECK_EQ(sctpe_tsn_check(&m, 104), SCTPE_TSN_DUP);
	int n = sctpe_tsn_gaps(&m, g, 8);
	CHECK_EQ(n, 3);
	CHECK(g[0].start == 2 && g[0].end == 3);
	CHECK(g[1].start == 6 && g[1].end == 6);
	CHECK(g[2].start == 99 && g[2].end == 99);
	CHECK_EQ(sctpe_tsn_gaps(&m, g, 2), 2, "the furthest blocks are left out");
	sctpe_tsn_add(&m, 102);
	CHECK_EQ(m.cum, 104, "the hole filled: over what had arrived");
	for (uint32_t t = 105; t < 200; t++)
		if (sctpe_tsn_check(&m, t) == SCTPE_TSN_NEW)
			sctpe_tsn_add(&m, t);
	CHECK_EQ(m.cum, 200);
	CHECK(!sctpe_tsn_has_gaps(&m));
	CHECK_EQ(sctpe_tsn_check(&m, 200 + SCTPE_TSN_WINDOW), SCTPE_TSN_AHEAD);
	CHECK_EQ(sctpe_tsn_check(&m, 200 + SCTPE_TSN_WINDOW - 1), SCTPE_TSN_NEW);
	for (int i = 0; i < SCTPE_MAX_DUPS + 5; i++)
		sctpe_tsn_dup(&m, 5);
	CHECK_EQ(m.ndups, SCTPE_MAX_DUPS, "duplicates kept are bounded");
	sctpe_tsn_fini(&m);
}

TEST(tsn_map_wraps_around_and_forwards)
{
	struct sctpe_tsnmap m;
	struct sctpe_gap g[4];
	REQUIRE(sctpe_tsn_init(&m, 0xfffffffeu) == 0);
	sctpe_tsn_add(&m, 0xfffffffeu);
	sctpe_tsn_add(&m, 1);
	CHECK_EQ(m.cum, 0xfffffffeu);
	CHECK_EQ(sctpe_tsn_gaps(&m, g, 4), 1);
	CHECK(g[0].start == 3 && g[0].end == 3);
	sctpe_tsn_add(&m, 0xffffffffu);
	sctpe_tsn_add(&m, 0);
	CHECK_EQ(m.cum, 1);
	CHECK(sctpe_tsn_lt(0xffffffffu, 1) && !sctpe_tsn_lt(1, 0xffffffffu));
	sctpe_tsn_add(&m, 5);
	sctpe_tsn_forward(&m, 3);
	CHECK_EQ(m.cum, 3);
	sctpe_tsn_forward(&m, 4);
	CHECK_EQ(m.cum, 5, "forwarding reaches what had arrived above");
	sctpe_tsn_forward(&m, 5 + 3 * SCTPE_TSN_WINDOW);
	CHECK_EQ(m.cum, 5 + 3 * SCTPE_TSN_WINDOW, "a far FORWARD TSN costs no walk");
	sctpe_tsn_fini(&m);
}

TEST(cc_slow_start_then_avoidance_then_recovery)
{
	struct sctpe_cc c;
	sctpe_cc_init(&c, 1452, 100000, 200, 20, 1000);
	CHECK_EQ(c.cwnd, 4380, "min(4 MTU, max(2 MTU, 4380))");
	CHECK_EQ(c.ssthresh, 100000);
	uint32_t w = c.cwnd;
	sctpe_cc_acked(&c, 1452, 0);
	CHECK_EQ(c.cwnd, w, "no growth while cwnd is not used up");
	sctpe_cc_acked(&c, 10 * 1452, 1);
	CHECK_EQ(c.cwnd, w + 10 * 1452, "slow start: what a SACK acknowledged");
	w = c.cwnd;
	sctpe_cc_acked(&c, 100 * 1452, 1);
	CHECK_EQ(c.cwnd, w + c.l * 1452, "... at most L MTUs per SACK");
	while (c.cwnd <= c.ssthresh)
		sctpe_cc_acked(&c, 1452, 1);
	w = c.cwnd;
	for (uint32_t acked = 0; acked < w; acked += 1452)
		sctpe_cc_acked(&c, 1452, 1);
	CHECK_EQ(c.cwnd, w + 1452, "congestion avoidance: one MTU per cwnd acknowledged");
	w = c.cwnd;
	sctpe_cc_fast_rtx(&c, 5000);
	CHECK_EQ(c.ssthresh, w / 2);
	CHECK_EQ(c.cwnd, w / 2);
	sctpe_cc_fast_rtx(&c, 6000);
	CHECK_EQ(c.cwnd, w / 2, "once per recovery");
	sctpe_cc_acked(&c, 100000, 1);
	CHECK_EQ(c.cwnd, w / 2, "no growth in fast recovery");
	sctpe_cc_cum(&c, 4999);
	CHECK(c.in_fast_recovery);
	sctpe_cc_cum(&c, 5000);
	CHECK(!c.in_fast_recovery);
	sctpe_cc_timeout(&c);
	CHECK_EQ(c.cwnd, 1452);
	CHECK_EQ(c.rto_ms, 400, "back-off doubles RTO");
	for (int i = 0; i < 5; i++)
		sctpe_cc_timeout(&c);
	CHECK_EQ(c.rto_ms, 1000, "up to RTO.Max");
	CHECK_EQ(c.ssthresh, 4 * 1452, "ssthresh never under 4 MTU");
}

TEST(cc_rto_follows_rtt_within_its_bounds)
{
	struct sctpe_cc c;
	sctpe_cc_init(&c, 1452, 100000, 200, 20, 1000);
	sctpe_cc_rtt(&c, 100000); /* 100 ms */
	CHECK_EQ(c.srtt_us, 100000);
	CHECK_EQ(c.rttvar_us, 50000);
	CHECK_EQ(c.rto_ms, 300, "SRTT + 4 RTTVAR");
	for (int i = 0; i < 100; i++)
		sctpe_cc_rtt(&c, 50);
	CHECK_EQ(c.rto_ms, 20, "RTO.Min");
	sctpe_cc_rtt(&c, 5000000);
	CHECK_EQ(c.rto_ms, 1000, "RTO.Max");
}

static int fired[16], order[16], nfired;
static struct sctpe_timer tm[16];
static struct sctpe_wheel wheel;

static void fire(struct sctpe_timer *t)
{
	int i = (int)(t - tm);
	fired[i]++;
	order[nfired++ % 16] = i;
	if (i == 3) /* stops a timer that is due in the same run */
		sctpe_timer_stop(&wheel, &tm[4]);
	if (i == 5 && fired[5] < 3) /* re-arms itself */
		sctpe_timer_arm(&wheel, t, wheel.now + 10);
}

TEST(timer_wheel_fires_in_time_and_survives_changes)
{
	sctpe_wheel_init(&wheel, 1000);
	for (int i = 0; i < 16; i++)
		sctpe_timer_init(&tm[i], fire);
	sctpe_timer_arm(&wheel, &tm[0], 1005);
	sctpe_timer_arm(&wheel, &tm[1], 1003);
	sctpe_timer_arm(&wheel, &tm[2], 1000 + 3 * SCTPE_WHEEL_SLOTS + 7); /* several turns */
	sctpe_timer_arm(&wheel, &tm[3], 1020);
	sctpe_timer_arm(&wheel, &tm[4], 1021);
	sctpe_timer_arm(&wheel, &tm[5], 1030);
	sctpe_timer_arm(&wheel, &tm[6], 1040);
	sctpe_timer_stop(&wheel, &tm[6]);
	CHECK_EQ(sctpe_wheel_run(&wheel, 1002), 0);
	CHECK_EQ(sctpe_wheel_run(&wheel, 1004), 1);
	CHECK_EQ(fired[1], 1);
	sctpe_timer_arm(&wheel, &tm[0], 1010); /* moved later */
	CHECK_EQ(sctpe_wheel_run(&wheel, 1006), 0);
	CHECK_EQ(sctpe_wheel_run(&wheel, 1025), 2, "tm[0], then tm[3] which stops tm[4]");
	CHECK(fired[0] == 1 && fired[3] == 1 && fired[4] == 0);
	CHECK_EQ(sctpe_wheel_run(&wheel, 1100), 1, "tm[5], which re-arms itself");
	CHECK_EQ(sctpe_wheel_run(&wheel, 1109), 0);
	CHECK_EQ(sctpe_wheel_run(&wheel, 1110), 1);
	CHECK_EQ(sctpe_wheel_run(&wheel, 1120), 1);
	CHECK_EQ(fired[5], 3);
	CHECK_EQ(fired[6], 0);
	CHECK_EQ(fired[2], 0);
	CHECK_EQ(sctpe_wheel_run(&wheel, 1000 + 3 * SCTPE_WHEEL_SLOTS + 6), 0);
	CHECK_EQ(sctpe_wheel_run(&wheel, 1000 + 3 * SCTPE_WHEEL_SLOTS + 7), 1);
	CHECK_EQ(fired[2], 1);
	CHECK_EQ(wheel.armed, 0);
	/* a long sleep: everything due fires once, in one run */
	for (int i = 8; i < 16; i++)
		sctpe_timer_arm(&wheel, &tm[i], wheel.now + 1 + (uint64_t)i * 97);
	CHECK_EQ(sctpe_wheel_run(&wheel, wheel.now + 100000), 8);
}

TEST(hmac_sha256_matches_rfc4231)
{
	uint8_t key[20], out[32];
	memset(key, 0x0b, sizeof(key));
	static const uint8_t t1[32] = {0xb0, 0x34, 0x4c, 0x61, 0xd8, 0xdb, 0x38, 0x53,
				       0x5c, 0xa8, 0xaf, 0xce, 0xaf, 0x0b, 0xf1, 0x2b,
				       0x88, 0x1d, 0xc2, 0x00, 0xc9, 0x83, 0x3d, 0xa7,
				       0x26, 0xe9, 0x37, 0x6c, 0x2e, 0x32, 0xcf, 0xf7};
	sctpe_hmac_sha256(key, sizeof(key), "Hi There", 8, out);
	CHECK(memcmp(out, t1, 32) == 0, "test case 1");
	static const uint8_t t2[32] = {0x5b, 0xdc, 0xc1, 0x46, 0xbf, 0x60, 0x75, 0x4e,
				       0x6a, 0x04, 0x24, 0x26, 0x08, 0x95, 0x75, 0xc7,
				       0x5a, 0x00, 0x3f, 0x08, 0x9d, 0x27, 0x39, 0x83,
				       0x9d, 0xec, 0x58, 0xb9, 0x64, 0xec, 0x38, 0x43};
	sctpe_hmac_sha256((const uint8_t *)"Jefe", 4, "what do ya want for nothing?", 28, out);
	CHECK(memcmp(out, t2, 32) == 0, "test case 2");
	uint8_t big[131];
	memset(big, 0xaa, sizeof(big));
	static const uint8_t t6[32] = {0x60, 0xe4, 0x31, 0x59, 0x1e, 0xe0, 0xb6, 0x7f,
				       0x0d, 0x8a, 0x26, 0xaa, 0xcb, 0xf5, 0xb7, 0x7f,
				       0x8e, 0x0b, 0xc6, 0x21, 0x37, 0x28, 0xc5, 0x14,
				       0x05, 0x46, 0x04, 0x0f, 0x0e, 0xe3, 0x7f, 0x54};
	sctpe_hmac_sha256(big, sizeof(big), "Test Using Larger Than Block-Size Key - Hash Key First",
			  54, out);
	CHECK(memcmp(out, t6, 32) == 0, "test case 6: a key longer than a block");
}

int main(void)
{
	RUN(tsn_map_reports_gaps_and_advances_over_holes);
	RUN(tsn_map_wraps_around_and_forwards);
	RUN(cc_slow_start_then_avoidance_then_recovery);
	RUN(cc_rto_follows_rtt_within_its_bounds);
	RUN(timer_wheel_fires_in_time_and_survives_changes);
	RUN(hmac_sha256_matches_rfc4231);
	return sm_check_result();
}
