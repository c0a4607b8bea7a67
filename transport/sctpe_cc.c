/* Congestion control and RTO of one path (sctpe_cc.h). */
#include "sctpe_cc.h"

#include "sctpe_tsn.h"

#include <string.h>

static uint32_t max_u32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

void sctpe_cc_init(struct sctpe_cc *cc, uint32_t mtu, uint32_t peer_rwnd, uint32_t rto_initial,
		   uint32_t rto_min, uint32_t rto_max)
{
	memset(cc, 0, sizeof(*cc));
	cc->mtu = mtu;
	cc->cwnd = min_u32(4 * mtu, max_u32(2 * mtu, 4380));
	cc->ssthresh = max_u32(peer_rwnd, 4 * mtu);
	cc->rto_ms = rto_initial;
	cc->rto_min_ms = rto_min;
	cc->rto_max_ms = rto_max;
	/* a SACK sent at the end of an input batch acknowledges the batch (GRO, recvmmsg: up
	 * to 64 packets), genuinely: counted at 7.2.1's usual 2 MTUs each, slow start would
	 * crawl; L is the size of the largest batch instead */
	cc->l = 64;
}

static void rto_clamp(struct sctpe_cc *cc)
{
	if (cc->rto_ms < cc->rto_min_ms)
		cc->rto_ms = cc->rto_min_ms; /* C6 */
	if (cc->rto_ms > cc->rto_max_ms)
		cc->rto_ms = cc->rto_max_ms; /* C7 */
}

void sctpe_cc_rtt(struct sctpe_cc *cc, uint32_t r)
{
	if (!cc->rtt_measured) { /* C2 */
		cc->srtt_us = r;
		cc->rttvar_us = r / 2;
		cc->rtt_measured = 1;
	} else { /* C3: RTO.Alpha 1/8, RTO.Beta 1/4 */
		uint32_t d = cc->srtt_us > r ? cc->srtt_us - r : r - cc->srtt_us;
		cc->rttvar_us = cc->rttvar_us - cc->rttvar_us / 4 + d / 4;
		cc->srtt_us = cc->srtt_us - cc->srtt_us / 8 + r / 8;
	}
	/* G = 1 ms: RTTVAR is at least the clock granularity */
	uint32_t var = cc->rttvar_us < 1000 ? 1000 : cc->rttvar_us;
	cc->rto_ms = (cc->srtt_us + 4 * var + 999) / 1000;
	rto_clamp(cc);
}

void sctpe_cc_acked(struct sctpe_cc *cc, uint32_t bytes, int full)
{
	if (cc->in_fast_recovery || !bytes)
		return; /* 7.2.4: cwnd does not grow in fast recovery */
	if (cc->cwnd <= cc->ssthresh) { /* slow start */
		if (full)
			cc->cwnd += min_u32(bytes, cc->l * cc->mtu);
		return;
	}
	/* congestion avoidance */
	cc->pba += bytes;
	if (cc->pba >= cc->cwnd && full) {
		cc->pba -= cc->cwnd;
		cc->cwnd += cc->mtu;
	}
	if (cc->pba > cc->cwnd)
		cc->pba = cc->cwnd;
}

void sctpe_cc_fast_rtx(struct sctpe_cc *cc, uint32_t highest_outstanding)
{
	if (cc->in_fast_recovery)
		return;
	cc->ssthresh = max_u32(cc->cwnd / 2, 4 * cc->mtu);
	cc->cwnd = cc->ssthresh;
	cc->pba = 0;
	cc->in_fast_recovery = 1;
	cc->fr_exit = highest_outstanding;
}

void sctpe_cc_cum(struct sctpe_cc *cc, uint32_t cum)
{
	if (cc->in_fast_recovery && sctpe_tsn_le(cc->fr_exit, cum))
		cc->in_fast_recovery = 0;
}

void sctpe_cc_timeout(struct sctpe_cc *cc)
{
	cc->ssthresh = max_u32(cc->cwnd / 2, 4 * cc->mtu);
	cc->cwnd = cc->mtu;
	cc->pba = 0;
	cc->in_fast_recovery = 0;
	cc->rto_ms = cc->rto_ms * 2; /* E2: back off */
	rto_clamp(cc);
}

void sctpe_cc_idle(struct sctpe_cc *cc)
{
	cc->cwnd = max_u32(cc->cwnd / 2, 4 * cc->mtu);
}
