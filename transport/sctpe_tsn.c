/* The receiver's TSN map (sctpe_tsn.h). */
#include "sctpe_tsn.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define WORDS (SCTPE_TSN_WINDOW / 64)
#define BIT(t) ((t) % SCTPE_TSN_WINDOW)

int sctpe_tsn_init(struct sctpe_tsnmap *m, uint32_t initial_tsn)
{
	memset(m, 0, sizeof(*m));
	m->bits = calloc(WORDS, sizeof(uint64_t));
	if (!m->bits)
		return -ENOMEM;
	m->cum = m->high = initial_tsn - 1;
	return 0;
}

void sctpe_tsn_fini(struct sctpe_tsnmap *m)
{
	free(m->bits);
	m->bits = NULL;
}

static int test_bit(const struct sctpe_tsnmap *m, uint32_t tsn)
{
	uint32_t b = BIT(tsn);
	return (m->bits[b / 64] >> (b % 64)) & 1;
}

static void clear_bit(struct sctpe_tsnmap *m, uint32_t tsn)
{
	uint32_t b = BIT(tsn);
	m->bits[b / 64] &= ~(1ull << (b % 64));
}

int sctpe_tsn_check(const struct sctpe_tsnmap *m, uint32_t tsn)
{
	uint32_t d = tsn - m->cum;
	if ((int32_t)d <= 0)
		return SCTPE_TSN_DUP;
	if (d > SCTPE_TSN_WINDOW - 1)
		return SCTPE_TSN_AHEAD;
	return test_bit(m, tsn) ? SCTPE_TSN_DUP : SCTPE_TSN_NEW;
}

void sctpe_tsn_add(struct sctpe_tsnmap *m, uint32_t tsn)
{
	if (tsn == m->cum + 1 && m->high == m->cum) { /* in order, nothing above: no bits */
		m->cum = m->high = tsn;
		return;
	}
	uint32_t b = BIT(tsn);
	m->bits[b / 64] |= 1ull << (b % 64);
	if (sctpe_tsn_lt(m->high, tsn))
		m->high = tsn;
	while (m->cum != m->high && test_bit(m, m->cum + 1)) {
		clear_bit(m, m->cum + 1);
		m->cum++;
	}
}

void sctpe_tsn_dup(struct sctpe_tsnmap *m, uint32_t tsn)
{
	if (m->ndups < SCTPE_MAX_DUPS)
		m->dups[m->ndups++] = tsn;
}

int sctpe_tsn_gaps(const struct sctpe_tsnmap *m, struct sctpe_gap *out, int max)
{
	int n = 0;
	uint32_t span = m->high - m->cum; /* bits to look at: offsets 1..span */
	uint32_t off = 1;
	while (off <= span && n < max) {
		/* the next set bit at or after off */
		while (off <= span && !test_bit(m, m->cum + off)) {
			uint32_t b = BIT(m->cum + off);
			if (b % 64 == 0 && m->bits[b / 64] == 0)
				off += 64; /* a whole empty word */
			else
				off++;
		}
		if (off > span)
			break;
		uint32_t start = off;
		while (off <= span && test_bit(m, m->cum + off))
			off++;
		if (start > 0xffff)
			break; /* beyond what a gap block can say */
		out[n].start = (uint16_t)start;
		out[n].end = (uint16_t)(off - 1 > 0xffff ? 0xffff : off - 1);
		n++;
	}
	return n;
}

void sctpe_tsn_forward(struct sctpe_tsnmap *m, uint32_t new_cum)
{
	if (!sctpe_tsn_lt(m->cum, new_cum))
		return;
	if (new_cum - m->cum >= SCTPE_TSN_WINDOW) { /* past everything tracked */
		memset(m->bits, 0, WORDS * sizeof(uint64_t));
		m->cum = m->high = new_cum;
		return;
	}
	while (sctpe_tsn_lt(m->cum, new_cum)) {
		clear_bit(m, m->cum + 1);
		m->cum++;
	}
	if (sctpe_tsn_lt(m->high, m->cum))
		m->high = m->cum;
	while (m->cum != m->high && test_bit(m, m->cum + 1)) {
		clear_bit(m, m->cum + 1);
		m->cum++;
	}
}
