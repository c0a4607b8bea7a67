/*
 * The receiver's TSN map (RFC 9260 6.2): the cumulative TSN ack point, which TSNs above it
 * arrived (a bitmap window), the duplicates to report, and the gap ack blocks of a SACK.
 * TSNs compare as serial numbers (RFC 1982).
 */
#ifndef SCTPE_TSN_H
#define SCTPE_TSN_H

#include <stdint.h>

#define SCTPE_TSN_WINDOW 65536u /* TSNs above the cumulative ack that are accepted */
#define SCTPE_MAX_DUPS 32       /* duplicates reported per SACK */

static inline int sctpe_tsn_lt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}
static inline int sctpe_tsn_le(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) <= 0;
}

struct sctpe_tsnmap {
	uint32_t cum;       /* every TSN up to this one arrived */
	uint32_t high;      /* the highest TSN that arrived */
	uint64_t *bits;     /* bit (tsn % SCTPE_TSN_WINDOW) for cum < tsn <= cum + window */
	uint32_t dups[SCTPE_MAX_DUPS];
	int ndups;
};

struct sctpe_gap {
	uint16_t start, end; /* offsets from cum, as in a SACK */
};

/* initial_tsn: the peer's Initial TSN (cum starts one below it). 0 or -ENOMEM. */
int sctpe_tsn_init(struct sctpe_tsnmap *m, uint32_t initial_tsn);
void sctpe_tsn_fini(struct sctpe_tsnmap *m);
enum { SCTPE_TSN_NEW = 0, SCTPE_TSN_DUP = 1, SCTPE_TSN_AHEAD = 2 };
/* Whether tsn would be new, a duplicate, or too far ahead to track (drop it). */
int sctpe_tsn_check(const struct sctpe_tsnmap *m, uint32_t tsn);
/* Records a TSN that sctpe_tsn_check found new; advances cum over what is contiguous. */
void sctpe_tsn_add(struct sctpe_tsnmap *m, uint32_t tsn);
/* Records a duplicate for the next SACK (up to SCTPE_MAX_DUPS). */
void sctpe_tsn_dup(struct sctpe_tsnmap *m, uint32_t tsn);
/* True when TSNs above cum arrived (the next SACK has gap blocks). */
static inline int sctpe_tsn_has_gaps(const struct sctpe_tsnmap *m)
{
	return m->high != m->cum;
}
/* The gap ack blocks, lowest first, at most max (those furthest up are left out). */
int sctpe_tsn_gaps(const struct sctpe_tsnmap *m, struct sctpe_gap *out, int max);
/* Forgets TSNs up to new_cum as if they had arrived (FORWARD TSN). */
void sctpe_tsn_forward(struct sctpe_tsnmap *m, uint32_t new_cum);

#endif
