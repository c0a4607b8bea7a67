/* fnn_genome.c - the GA's genome: problem layout, construction, evaluation, operators. */
#include "fnn_ga.h"
#include "fnn_util.h"
#include "common/sm_rng.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define HAS(pb, g, pc, sw) (((g)->mask[(size_t)(pc) * (pb)->words + (sw) / 64] >> ((sw) % 64)) & 1)

static void mask_flip(const struct fnn_gaprob *pb, struct fnn_genome *g, int pc, int sw)
{
	g->mask[(size_t)pc * pb->words + sw / 64] ^= UINT64_C(1) << (sw % 64);
}

/* ------------------------------------------------------------ problem layout ------- */

void fnn_gaprob_free(struct fnn_gaprob *pb)
{
	free(pb->sw_first);
	free(pb->slot_sw);
	free(pb->nics);
	free(pb->realmask);
	free(pb->init);
	free(pb->target);
	memset(pb, 0, sizeof(*pb));
}

/*
 * Target real NICs per switch: the bound's profile, widest switches filled first
 * (ties: lower number), so a design with this profile is at the links bound.
 */
static int *target_profile(const struct fnn_problem *p)
{
	int *t = calloc(p->nswitches ? p->nswitches : 1, sizeof(int));
	int64_t nics = 0;
	if (!t)
		return NULL;
	for (int i = 0; i < p->npcs; i++)
		nics += p->nics[i];
	for (;;) {
		int best = -1;
		for (int s = 0; s < p->nswitches; s++)
			if (t[s] == 0 && p->ports[s] > 0 && (best < 0 || p->ports[s] > p->ports[best]))
				best = s;
		if (best < 0 || nics == 0)
			break;
		int u = p->ports[best] < p->npcs ? p->ports[best] : p->npcs;
		t[best] = (int)(u < nics ? u : nics);
		nics -= t[best];
	}
	return t;
}

/* The real switch with the most target capacity left that m does not hold; -1 if none. */
static int widest_free(int nsw, const int *freep, const uint64_t *m)
{
	int best = -1;
	for (int s = 0; s < nsw; s++)
		if (freep[s] > 0 && !((m[s / 64] >> (s % 64)) & 1) &&
		    (best < 0 || freep[s] > freep[best]))
			best = s;
	return best;
}

/*
 * The paper's construction, aimed at the bound: each NIC goes to the switch with the
 * most of its target capacity left that the PC is not on yet (lowest number on ties;
 * with every target full this is the paper's lowest-free-switch rule).  NICs that find
 * none go to dummy switches, created as needed; dummy PCs then take the free real ports.
 * Fills sw[pc * maxn + k].
 */
static int construct(const struct fnn_problem *p, const int *target, int maxn, int *sw,
		     int *ndummy_sw, int **dummy_size)
{
	int *freep = malloc((size_t)(p->nswitches ? p->nswitches : 1) * sizeof(int));
	int *dsize = calloc((size_t)maxn + 1, sizeof(int));
	int words = (p->nswitches + maxn + 64) / 64, nd = 0;
	uint64_t *m = calloc(words, sizeof(uint64_t));
	if (!freep || !dsize || !m) {
		free(freep);
		free(dsize);
		free(m);
		return -ENOMEM;
	}
	memcpy(freep, target, (size_t)p->nswitches * sizeof(int));
	for (int pc = 0; pc < p->npcs; pc++) {
		memset(m, 0, words * sizeof(uint64_t));
		for (int k = 0; k < p->nics[pc]; k++) {
			int pick = widest_free(p->nswitches, freep, m);
			if (pick >= 0) {
				freep[pick]--;
			} else {
				/* the k-th dummy switch is always free for the PC's k-th NIC */
				int d = 0;
				while (d < nd && ((m[(p->nswitches + d) / 64] >> ((p->nswitches + d) % 64)) & 1))
					d++;
				if (d == nd)
					nd++;
				dsize[d]++;
				pick = p->nswitches + d;
			}
			m[pick / 64] |= UINT64_C(1) << (pick % 64);
			sw[pc * maxn + k] = pick;
		}
	}
	free(freep);
	free(m);
	*ndummy_sw = nd;
	*dummy_size = dsize;
	return 0;
}

static int layout(struct fnn_gaprob *pb, const struct fnn_problem *p, const int *dsize)
{
	pb->sw_first = malloc((size_t)(pb->nswall + 1) * sizeof(int));
	if (!pb->sw_first)
		return -ENOMEM;
	int n = 0;
	for (int s = 0; s < pb->nswall; s++) {
		pb->sw_first[s] = n;
		n += s < pb->nsw ? p->ports[s] : dsize[s - pb->nsw];
	}
	pb->sw_first[pb->nswall] = n;
	pb->nslots = n;
	pb->slot_sw = malloc((size_t)(n ? n : 1) * sizeof(int16_t));
	pb->init = malloc((size_t)(n ? n : 1) * sizeof(uint16_t));
	if (!pb->slot_sw || !pb->init)
		return -ENOMEM;
	for (int s = 0; s < pb->nswall; s++)
		for (int i = pb->sw_first[s]; i < pb->sw_first[s + 1]; i++)
			pb->slot_sw[i] = (int16_t)s;
	return 0;
}

/* Fill pb->init from the per-PC switch lists; dummy PCs take what is left. */
static void place_init(struct fnn_gaprob *pb, const int *sw, int maxn)
{
	int *fill = malloc((size_t)pb->nswall * sizeof(int));
	for (int s = 0; s < pb->nswall; s++)
		fill[s] = pb->sw_first[s];
	for (int pc = 0; pc < pb->npcs; pc++)
		for (int k = 0; k < pb->nics[pc]; k++) {
			int s = sw[pc * maxn + k];
			pb->init[fill[s]++] = (uint16_t)pc;
		}
	int dummy = pb->npcs;
	for (int s = 0; s < pb->nswall; s++)
		while (fill[s] < pb->sw_first[s + 1])
			pb->init[fill[s]++] = (uint16_t)dummy++;
	free(fill);
}

int fnn_gaprob_init(struct fnn_gaprob *pb, const struct fnn_problem *p, const float *w)
{
	int maxn = 1, nd = 0, rc;
	int64_t nreal = 0, slots = 0;
	int *dsize = NULL;
	memset(pb, 0, sizeof(*pb));
	for (int i = 0; i < p->npcs; i++) {
		if (p->nics[i] > maxn)
			maxn = p->nics[i];
		nreal += p->nics[i];
	}
	int *sw = malloc((size_t)p->npcs * maxn * sizeof(int));
	if (!sw)
		return -ENOMEM;
	pb->target = target_profile(p);
	rc = pb->target ? construct(p, pb->target, maxn, sw, &nd, &dsize) : -ENOMEM;
	if (rc)
		goto out;
	for (int s = 0; s < p->nswitches; s++)
		slots += p->ports[s];
	for (int d = 0; d < nd; d++)
		slots += dsize[d];
	rc = -E2BIG;
	if (slots - nreal + p->npcs >= 65535 || p->nswitches + nd > 32767)
		goto out;
	pb->npcs = p->npcs;
	pb->nsw = p->nswitches;
	pb->nswall = p->nswitches + nd;
	pb->nall = (int)(p->npcs + slots - nreal);
	pb->words = (pb->nswall + 63) / 64;
	pb->w = w;
	pb->bound_num = 0;
	fnn_bound(p, &pb->bound_num, NULL);
	rc = -ENOMEM;
	pb->nics = malloc((size_t)pb->nall * sizeof(int));
	pb->realmask = calloc(pb->words, sizeof(uint64_t));
	if (!pb->nics || !pb->realmask)
		goto out;
	for (int i = 0; i < pb->nall; i++)
		pb->nics[i] = i < p->npcs ? p->nics[i] : 1;
	for (int s = 0; s < pb->nsw; s++)
		pb->realmask[s / 64] |= UINT64_C(1) << (s % 64);
	rc = layout(pb, p, dsize);
	if (rc)
		goto out;
	place_init(pb, sw, maxn);
out:
	free(sw);
	free(dsize);
	if (rc)
		fnn_gaprob_free(pb);
	return rc;
}

int fnn_problem_scaled(struct fnn_problem *small, const struct fnn_problem *p, int spcs)
{
	memset(small, 0, sizeof(*small));
	if (spcs < 2 || spcs > p->npcs)
		return -EINVAL;
	small->npcs = spcs;
	small->nswitches = p->nswitches;
	small->nics = malloc((size_t)spcs * sizeof(int));
	small->ports = malloc((size_t)p->nswitches * sizeof(int));
	if (!small->nics || !small->ports) {
		fnn_problem_free(small);
		return -ENOMEM;
	}
	/* group j holds the real PCs pc with pc * spcs / npcs == j; its first one speaks */
	for (int j = 0; j < spcs; j++)
		small->nics[j] = p->nics[(int)(((int64_t)j * p->npcs + spcs - 1) / spcs)];
	for (int s = 0; s < p->nswitches; s++)
		small->ports[s] = (int)(((int64_t)p->ports[s] * spcs * 2 + p->npcs) / (2 * p->npcs));
	return 0;
}

/* ------------------------------------------------------------ genomes -------------- */

int fnn_genome_alloc(const struct fnn_gaprob *pb, struct fnn_genome *g)
{
	g->occ = malloc((size_t)(pb->nslots ? pb->nslots : 1) * sizeof(uint16_t));
	g->mask = calloc((size_t)pb->nall * pb->words, sizeof(uint64_t));
	if (!g->occ || !g->mask) {
		fnn_genome_free(g);
		return -ENOMEM;
	}
	return 0;
}

void fnn_genome_free(struct fnn_genome *g)
{
	free(g->occ);
	free(g->mask);
	g->occ = NULL;
	g->mask = NULL;
}

void fnn_genome_copy(const struct fnn_gaprob *pb, struct fnn_genome *dst,
		     const struct fnn_genome *src)
{
	memcpy(dst->occ, src->occ, (size_t)pb->nslots * sizeof(uint16_t));
	memcpy(dst->mask, src->mask, (size_t)pb->nall * pb->words * sizeof(uint64_t));
}

void fnn_genome_set(const struct fnn_gaprob *pb, struct fnn_genome *g, const uint16_t *occ)
{
	memcpy(g->occ, occ, (size_t)pb->nslots * sizeof(uint16_t));
	memset(g->mask, 0, (size_t)pb->nall * pb->words * sizeof(uint64_t));
	for (int i = 0; i < pb->nslots; i++)
		mask_flip(pb, g, occ[i], pb->slot_sw[i]);
}

int fnn_genome_check(const struct fnn_gaprob *pb, const struct fnn_genome *g)
{
	int rc = 0;
	int *count = calloc(pb->nall, sizeof(int));
	uint64_t *m = calloc((size_t)pb->nall * pb->words, sizeof(uint64_t));
	if (!count || !m) {
		rc = -1;
		goto out;
	}
	for (int i = 0; i < pb->nslots && !rc; i++) {
		int pc = g->occ[i], s = pb->slot_sw[i];
		uint64_t bit = UINT64_C(1) << (s % 64);
		if (pc >= pb->nall || (m[(size_t)pc * pb->words + s / 64] & bit))
			rc = -1; /* unknown PC, or two NICs of one PC on one switch */
		else
			m[(size_t)pc * pb->words + s / 64] |= bit;
		if (!rc)
			count[pc]++;
	}
	for (int pc = 0; pc < pb->nall && !rc; pc++)
		if (count[pc] != pb->nics[pc])
			rc = -1;
	if (!rc && memcmp(m, g->mask, (size_t)pb->nall * pb->words * sizeof(uint64_t)))
		rc = -1;
out:
	free(count);
	free(m);
	return rc;
}

int fnn_genome_design(const struct fnn_gaprob *pb, const struct fnn_genome *g,
		      const struct fnn_problem *p, struct fnn_design *d)
{
	int rc = fnn_design_init(d, pb->npcs, pb->nsw);
	if (rc)
		return rc;
	for (int s = 0; s < pb->nsw; s++)
		d->ports[s] = p->ports[s];
	for (int i = 0; i < pb->nslots; i++)
		if (g->occ[i] < pb->npcs && pb->slot_sw[i] < pb->nsw)
			fnn_design_set(d, g->occ[i], pb->slot_sw[i], 1);
	return 0;
}

/* ------------------------------------------------------------ evaluation ----------- */

int fnn_score_better(const struct fnn_score *a, const struct fnn_score *b)
{
	if (a->disc != b->disc)
		return a->disc < b->disc;
	if (a->links != b->links)
		return a->links > b->links;
	return a->pattern > b->pattern;
}

void fnn_ga_eval(const struct fnn_gaprob *pb, const struct fnn_genome *g,
		 struct fnn_score *sc, uint16_t *bad)
{
	const int n = pb->npcs, W = pb->words;
	int64_t disc = 0, links = 0;
	double pat = 0;
	if (bad)
		memset(bad, 0, (size_t)n * sizeof(uint16_t));
	for (int a = 0; a < n; a++) {
		const uint64_t *ma = &g->mask[(size_t)a * W];
		const float *wa = pb->w ? &pb->w[(size_t)a * n] : NULL;
		for (int b = a + 1; b < n; b++) {
			const uint64_t *mb = &g->mask[(size_t)b * W];
			int c = 0;
			if (W == 1) {
				c = __builtin_popcountll(ma[0] & mb[0] & pb->realmask[0]);
			} else {
				for (int w = 0; w < W; w++)
					c += __builtin_popcountll(ma[w] & mb[w] & pb->realmask[w]);
			}
			links += c;
			if (c == 0) {
				disc++;
				if (bad) {
					bad[a]++;
					bad[b]++;
				}
			}
			if (wa)
				pat += wa[b] * c;
		}
	}
	sc->disc = disc;
	sc->links = links;
	sc->pattern = pat;
}

/* ------------------------------------------------------------ operators ------------ */

/* Exchange the PCs in slots i and j if that keeps both PCs on distinct switches. */
static int try_swap(const struct fnn_gaprob *pb, struct fnn_genome *g, int i, int j)
{
	int a = g->occ[i], b = g->occ[j];
	int s = pb->slot_sw[i], t = pb->slot_sw[j];
	if (s == t || a == b || HAS(pb, g, a, t) || HAS(pb, g, b, s))
		return 0;
	g->occ[i] = (uint16_t)b;
	g->occ[j] = (uint16_t)a;
	mask_flip(pb, g, a, s);
	mask_flip(pb, g, a, t);
	mask_flip(pb, g, b, t);
	mask_flip(pb, g, b, s);
	return 1;
}

static int slot_of(const struct fnn_gaprob *pb, const struct fnn_genome *g, int pc, int sw)
{
	for (int i = pb->sw_first[sw]; i < pb->sw_first[sw + 1]; i++)
		if (g->occ[i] == pc)
			return i;
	return -1;
}

int fnn_ga_mutate_nic(const struct fnn_gaprob *pb, struct fnn_genome *g, uint64_t *rng)
{
	if (pb->nslots < 2)
		return 0;
	for (int tries = 0; tries < 16; tries++) {
		int i = sm_rng_below(rng, pb->nslots), j = sm_rng_below(rng, pb->nslots);
		/* two real PCs: the NICs per switch stay as they are (fnn_ga_mutate_ports
		 * is the one move that changes them) */
		if (g->occ[i] < pb->npcs && g->occ[j] < pb->npcs && try_swap(pb, g, i, j))
			return 1;
	}
	return 0;
}

int fnn_ga_mutate_pc(const struct fnn_gaprob *pb, struct fnn_genome *g, uint64_t *rng)
{
	if (pb->npcs < 2)
		return 0;
	int a = sm_rng_below(rng, pb->npcs), b = -1;
	for (int tries = 0; tries < 16 && b < 0; tries++) {
		int c = sm_rng_below(rng, pb->nall);
		if (c != a && pb->nics[c] == pb->nics[a])
			b = c;
	}
	if (b < 0)
		return 0;
	for (int i = 0; i < pb->nslots; i++) {
		if (g->occ[i] == a)
			g->occ[i] = (uint16_t)b;
		else if (g->occ[i] == b)
			g->occ[i] = (uint16_t)a;
	}
	for (int w = 0; w < pb->words; w++) {
		uint64_t t = g->mask[(size_t)a * pb->words + w];
		g->mask[(size_t)a * pb->words + w] = g->mask[(size_t)b * pb->words + w];
		g->mask[(size_t)b * pb->words + w] = t;
	}
	return 1;
}

/* Pick uniformly among items for which pred holds (reservoir); -1 if none. */
static int pick_pc_bad(const struct fnn_gaprob *pb, const uint16_t *bad, uint64_t *rng)
{
	int pick = -1, seen = 0;
	for (int pc = 0; pc < pb->npcs; pc++)
		if (bad[pc] && sm_rng_below(rng, ++seen) == 0)
			pick = pc;
	return pick;
}

static int shared_real(const struct fnn_gaprob *pb, const struct fnn_genome *g, int a, int b)
{
	int c = 0;
	for (int w = 0; w < pb->words; w++)
		c += __builtin_popcountll(g->mask[(size_t)a * pb->words + w] &
					  g->mask[(size_t)b * pb->words + w] & pb->realmask[w]);
	return c;
}

/* Disconnected pairs a PC with mask m has with the real PCs, skipping PC skip. */
static int lonely(const struct fnn_gaprob *pb, const struct fnn_genome *g, const uint64_t *m,
		  int self, int skip)
{
	int n = 0;
	for (int p = 0; p < pb->npcs; p++) {
		if (p == self || p == skip)
			continue;
		const uint64_t *mp = &g->mask[(size_t)p * pb->words];
		int c = 0;
		for (int w = 0; w < pb->words && !c; w++)
			c = (m[w] & mp[w] & pb->realmask[w]) != 0;
		n += !c;
	}
	return n;
}

static int disjoint(const struct fnn_gaprob *pb, const uint64_t *x, const uint64_t *y)
{
	for (int w = 0; w < pb->words; w++)
		if (x[w] & y[w] & pb->realmask[w])
			return 0;
	return 1;
}

/* Change in disconnected pairs if slots i (PC a) and j (PC c) were exchanged. */
static int swap_delta(const struct fnn_gaprob *pb, const struct fnn_genome *g, int i, int j)
{
	int a = g->occ[i], c = g->occ[j], s = pb->slot_sw[i], t = pb->slot_sw[j];
	uint64_t ma[FNN_GA_MAXWORDS], mc[FNN_GA_MAXWORDS];
	const uint64_t *oa = &g->mask[(size_t)a * pb->words], *oc = &g->mask[(size_t)c * pb->words];
	memcpy(ma, oa, pb->words * sizeof(uint64_t));
	memcpy(mc, oc, pb->words * sizeof(uint64_t));
	ma[s / 64] ^= UINT64_C(1) << (s % 64);
	ma[t / 64] ^= UINT64_C(1) << (t % 64);
	mc[t / 64] ^= UINT64_C(1) << (t % 64);
	mc[s / 64] ^= UINT64_C(1) << (s % 64);
	int d = lonely(pb, g, ma, a, c) - lonely(pb, g, oa, a, c);
	if (c < pb->npcs)
		d += lonely(pb, g, mc, c, a) - lonely(pb, g, oc, c, a) + disjoint(pb, ma, mc) -
		     disjoint(pb, oa, oc);
	return d;
}

/*
 * A marked PC a and a PC b it cannot reach: try moving each of a's NICs onto one of b's
 * switches in exchange with a few PCs there, and make the exchange that leaves the
 * fewest disconnected pairs (a small local search inside the mutation).
 */
int fnn_ga_mutate_guided(const struct fnn_gaprob *pb, struct fnn_genome *g,
			 const uint16_t *bad, int only_better, uint64_t *rng)
{
	int a = pick_pc_bad(pb, bad, rng), b = -1, seen = 0;
	if (a < 0 || pb->words > FNN_GA_MAXWORDS)
		return 0;
	for (int pc = 0; pc < pb->npcs; pc++)
		if (pc != a && shared_real(pb, g, a, pc) == 0 && sm_rng_below(rng, ++seen) == 0)
			b = pc;
	if (b < 0)
		return 0;
	if (sm_rng_below(rng, 2)) { /* move a's NIC toward b, or b's toward a */
		int t = a;
		a = b;
		b = t;
	}
	int best_i = -1, best_j = -1, best = 0;
	for (int q = 0; q < FNN_GA_GUIDED_TRIES; q++) {
		int s2 = -1, s1 = -1, n = 0, m = 0;
		for (int s = 0; s < pb->nswall; s++) {
			if (s < pb->nsw && HAS(pb, g, b, s) && sm_rng_below(rng, ++n) == 0)
				s2 = s;
			if (HAS(pb, g, a, s) && sm_rng_below(rng, ++m) == 0)
				s1 = s;
		}
		int span = s2 < 0 ? 0 : pb->sw_first[s2 + 1] - pb->sw_first[s2];
		if (span == 0 || s1 < 0)
			continue;
		int i = slot_of(pb, g, a, s1);
		int j = pb->sw_first[s2] + sm_rng_below(rng, span), c = g->occ[j];
		/* a free port is taken only by a NIC coming off a dummy switch */
		if ((c >= pb->npcs && s1 < pb->nsw) || c == b || HAS(pb, g, c, s1))
			continue;
		int d = swap_delta(pb, g, i, j);
		if (best_i < 0 || d < best) {
			best_i = i;
			best_j = j;
			best = d;
		}
	}
	if (best_i < 0 || (only_better && best >= 0))
		return 0;
	return try_swap(pb, g, best_i, best_j);
}

/* Weighted links PC self (mask m) has with the real PCs, skipping PC skip. */
static double weighted(const struct fnn_gaprob *pb, const struct fnn_genome *g,
		       const uint64_t *m, int self, int skip)
{
	const float *w = &pb->w[(size_t)self * pb->npcs];
	double sum = 0;
	for (int p = 0; p < pb->npcs; p++) {
		if (p == self || p == skip || w[p] == 0)
			continue;
		const uint64_t *mp = &g->mask[(size_t)p * pb->words];
		int c = 0;
		for (int k = 0; k < pb->words; k++)
			c += __builtin_popcountll(m[k] & mp[k] & pb->realmask[k]);
		sum += w[p] * c;
	}
	return sum;
}

/* Changes in disconnected pairs and pattern score if real PCs in slots i, j swapped. */
static void pattern_delta(const struct fnn_gaprob *pb, const struct fnn_genome *g, int i,
			  int j, int *ddisc, double *dpat)
{
	int a = g->occ[i], c = g->occ[j], s = pb->slot_sw[i], t = pb->slot_sw[j];
	uint64_t ma[FNN_GA_MAXWORDS], mc[FNN_GA_MAXWORDS];
	const uint64_t *oa = &g->mask[(size_t)a * pb->words], *oc = &g->mask[(size_t)c * pb->words];
	memcpy(ma, oa, pb->words * sizeof(uint64_t));
	memcpy(mc, oc, pb->words * sizeof(uint64_t));
	ma[s / 64] ^= (UINT64_C(1) << (s % 64));
	ma[t / 64] ^= (UINT64_C(1) << (t % 64));
	mc[t / 64] ^= (UINT64_C(1) << (t % 64));
	mc[s / 64] ^= (UINT64_C(1) << (s % 64));
	*ddisc = swap_delta(pb, g, i, j);
	/* the a-c pair keeps its count: they trade s and t, sharing neither before */
	*dpat = weighted(pb, g, ma, a, c) - weighted(pb, g, oa, a, c) +
		weighted(pb, g, mc, c, a) - weighted(pb, g, oc, c, a);
}

int fnn_ga_mutate_pattern(const struct fnn_gaprob *pb, struct fnn_genome *g, uint64_t *rng)
{
	if (!pb->w || pb->npcs < 3 || pb->words > FNN_GA_MAXWORDS)
		return 0;
	int best_i = -1, best_j = -1;
	double best = 0;
	for (int q = 0; q < FNN_GA_GUIDED_TRIES; q++) {
		/* a weighted pair (a, b): bring a onto one of b's switches it lacks */
		int a = sm_rng_below(rng, pb->npcs), b = -1, n = 0;
		const float *w = &pb->w[(size_t)a * pb->npcs];
		for (int k = 0; k < 8 && b < 0; k++) {
			int p = sm_rng_below(rng, pb->npcs);
			if (p != a && w[p] > 0)
				b = p;
		}
		if (b < 0)
			continue;
		int s1 = -1, s2 = -1;
		for (int s = 0; s < pb->nsw; s++) {
			int ha = HAS(pb, g, a, s), hb = HAS(pb, g, b, s);
			if (hb && !ha && sm_rng_below(rng, ++n) == 0)
				s2 = s;
		}
		n = 0;
		for (int s = 0; s < pb->nsw; s++)
			if (HAS(pb, g, a, s) && !HAS(pb, g, b, s) && sm_rng_below(rng, ++n) == 0)
				s1 = s;
		if (s1 < 0 || s2 < 0)
			continue;
		int span = pb->sw_first[s2 + 1] - pb->sw_first[s2];
		int i = slot_of(pb, g, a, s1), j = pb->sw_first[s2] + sm_rng_below(rng, span);
		int c = g->occ[j];
		if (c >= pb->npcs || c == b || HAS(pb, g, c, s1))
			continue;
		int dd;
		double dp;
		pattern_delta(pb, g, i, j, &dd, &dp);
		if (dd <= 0 && dp > best) {
			best = dp;
			best_i = i;
			best_j = j;
		}
	}
	return best_i >= 0 && try_swap(pb, g, best_i, best_j);
}

/* Real NICs on switch s (dummy PCs not counted). */
static int real_on(const struct fnn_gaprob *pb, const struct fnn_genome *g, int s)
{
	int n = 0;
	for (int i = pb->sw_first[s]; i < pb->sw_first[s + 1]; i++)
		n += g->occ[i] < pb->npcs;
	return n;
}

int fnn_ga_mutate_ports(const struct fnn_gaprob *pb, struct fnn_genome *g, uint64_t *rng)
{
	if (pb->nslots < 2)
		return 0;
	for (int tries = 0; tries < 16; tries++) {
		/* a free (dummy-held) port on a real switch ... */
		int i = sm_rng_below(rng, pb->nslots), a = pb->slot_sw[i];
		if (g->occ[i] < pb->npcs || a >= pb->nsw)
			continue;
		/* ... takes a real NIC from a dummy switch or a switch no fuller than a */
		int j = sm_rng_below(rng, pb->nslots), b = pb->slot_sw[j];
		if (g->occ[j] >= pb->npcs || b == a)
			continue;
		if (b < pb->nsw && real_on(pb, g, b) > real_on(pb, g, a))
			continue;
		if (try_swap(pb, g, i, j))
			return 1;
	}
	return 0;
}

/* Force child's PC x onto b's switch s in exchange for one of its switches not in b. */
static void force_match(const struct fnn_gaprob *pb, struct fnn_genome *c, int x,
			const uint64_t *want, uint64_t *rng)
{
	for (int s = 0; s < pb->nswall; s++) {
		if (!((want[s / 64] >> (s % 64)) & 1) || HAS(pb, c, x, s))
			continue;
		int done = 0;
		for (int t = 0; t < pb->nswall && !done; t++) {
			if (!HAS(pb, c, x, t) || ((want[t / 64] >> (t % 64)) & 1))
				continue;
			int i = slot_of(pb, c, x, t);
			int span = pb->sw_first[s + 1] - pb->sw_first[s];
			int off = span ? sm_rng_below(rng, span) : 0;
			for (int q = 0; q < span && !done; q++) {
				int j = pb->sw_first[s] + (off + q) % span;
				/* keep the NICs per real switch: a free port only takes a NIC
				 * coming off a dummy switch */
				if (c->occ[j] >= pb->npcs && t < pb->nsw)
					continue;
				done = try_swap(pb, c, i, j);
			}
		}
	}
}

int fnn_ga_crossover(const struct fnn_gaprob *pb, struct fnn_genome *child,
		     const struct fnn_genome *a, const struct fnn_genome *b, uint64_t *rng)
{
	fnn_genome_copy(pb, child, a);
	int most = pb->npcs / 4 > 1 ? pb->npcs / 4 : 1;
	int subs = 1 + sm_rng_below(rng, most);
	for (int k = 0; k < subs; k++) {
		int x = sm_rng_below(rng, pb->npcs);
		force_match(pb, child, x, &b->mask[(size_t)x * pb->words], rng);
	}
	return 1;
}

/* ------------------------------------------------------------ scaling up ----------- */

/* Fallback for a NIC the scaled design could not place: the widest target capacity
 * left, then a dummy switch. */
static int first_free(const struct fnn_gaprob *pb, const int *freep, const uint64_t *m)
{
	int s = widest_free(pb->nsw, freep, m);
	for (int d = pb->nsw; s < 0 && d < pb->nswall; d++)
		if (freep[d] > 0 && !((m[d / 64] >> (d % 64)) & 1))
			s = d;
	return s;
}

int fnn_ga_scale_up(const struct fnn_gaprob *full, struct fnn_genome *g,
		    const struct fnn_gaprob *small, const struct fnn_genome *sg, uint64_t *rng)
{
	int n = full->npcs, rc = 0;
	int *freep = malloc((size_t)full->nswall * sizeof(int));
	int *order = malloc((size_t)n * sizeof(int));
	uint16_t *occ = malloc((size_t)full->nslots * sizeof(uint16_t));
	uint64_t *m = calloc((size_t)full->nall * full->words, sizeof(uint64_t));
	if (!freep || !order || !occ || !m) {
		rc = -1;
		goto out;
	}
	for (int s = 0; s < full->nswall; s++)
		freep[s] = s < full->nsw ? full->target[s] : full->sw_first[s + 1] - full->sw_first[s];
	for (int i = 0; i < n; i++)
		order[i] = i;
	for (int i = n - 1; i > 0; i--) {
		int j = sm_rng_below(rng, i + 1), t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (int q = 0; q < n && !rc; q++) {
		int pc = order[q], grp = (int)((int64_t)pc * small->npcs / n), have = 0;
		uint64_t *pm = &m[(size_t)pc * full->words];
		for (int s = 0; s < small->nsw && s < full->nsw && have < full->nics[pc]; s++)
			if (((sg->mask[(size_t)grp * small->words + s / 64] >> (s % 64)) & 1) &&
			    freep[s] > 0) {
				freep[s]--;
				pm[s / 64] |= UINT64_C(1) << (s % 64);
				have++;
			}
		for (; have < full->nics[pc]; have++) {
			int s = first_free(full, freep, pm);
			if (s < 0) {
				rc = -1;
				break;
			}
			freep[s]--;
			pm[s / 64] |= UINT64_C(1) << (s % 64);
		}
	}
	if (!rc) {
		int dummy = n;
		for (int s = 0; s < full->nswall; s++) {
			int i = full->sw_first[s];
			for (int pc = 0; pc < n; pc++)
				if ((m[(size_t)pc * full->words + s / 64] >> (s % 64)) & 1)
					occ[i++] = (uint16_t)pc;
			while (i < full->sw_first[s + 1])
				occ[i++] = (uint16_t)dummy++;
		}
		fnn_genome_set(full, g, occ);
	}
out:
	if (rc)
		fnn_genome_set(full, g, full->init);
	free(freep);
	free(order);
	free(occ);
	free(m);
	return rc;
}
