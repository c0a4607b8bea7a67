/*
 * Congestion control and retransmission timeout of one path (RFC 9260 6.3 and 7.2): cwnd,
 * ssthresh, partial_bytes_acked, fast recovery, and RTO from SRTT/RTTVAR. Byte counts are of
 * DATA chunks (header and payload); times of RTT samples are in microseconds, RTO in ms.
 */
#ifndef SCTPE_CC_H
#define SCTPE_CC_H

#include <stdint.h>

struct sctpe_cc {
	uint32_t mtu;          /* PMTU: the largest SCTP packet on the path */
	uint32_t cwnd, ssthresh;
	uint32_t pba;          /* partial_bytes_acked (7.2.2) */
	uint32_t flight;       /* outstanding bytes on the path */
	int in_fast_recovery;
	uint32_t fr_exit;      /* the highest TSN outstanding when fast recovery began */
	/* RTO (6.3.1) */
	int rtt_measured;
	uint32_t srtt_us, rttvar_us;
	uint32_t rto_ms, rto_min_ms, rto_max_ms;
	uint32_t l;            /* slow start: at most l * MTU per SACK (7.2.1's L; see init) */
};

/* Initial values (7.2.1): cwnd = min(4 * MTU, max(2 * MTU, 4380)), ssthresh = the peer's
 * a_rwnd, RTO = RTO.Initial. */
void sctpe_cc_init(struct sctpe_cc *cc, uint32_t mtu, uint32_t peer_rwnd, uint32_t rto_initial,
		   uint32_t rto_min, uint32_t rto_max);
/* An RTT measurement (6.3.1 C2, C3). */
void sctpe_cc_rtt(struct sctpe_cc *cc, uint32_t rtt_us);
/* A SACK advanced the cumulative TSN ack point and acknowledged bytes; full: the sender had
 * cwnd's worth outstanding before it (7.2.1, 7.2.2). */
void sctpe_cc_acked(struct sctpe_cc *cc, uint32_t bytes, int full);
/* Fast retransmit (7.2.4): enters fast recovery (once) up to highest_outstanding. */
void sctpe_cc_fast_rtx(struct sctpe_cc *cc, uint32_t highest_outstanding);
/* Leaves fast recovery once the cumulative ack reaches its exit point. */
void sctpe_cc_cum(struct sctpe_cc *cc, uint32_t cum);
/* T3-rtx expired (6.3.3 E1, E2; 7.2.3). */
void sctpe_cc_timeout(struct sctpe_cc *cc);
/* No data was sent for an RTO (7.2.1): cwnd = max(cwnd / 2, 4 * MTU). */
void sctpe_cc_idle(struct sctpe_cc *cc);

#endif
