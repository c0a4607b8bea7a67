/*
 * dmodc.c - Dmodc (Gliksberg et al., "High-Quality Fault Resiliency in Fat-Trees").
 *
 * Preprocessing (Procedure 1): costs c_{s,l} (up-down hop counts to every leaf) and
 * dividers Pi_s, both propagated upwards rank by rank, then costs downwards. Each rank is
 * one parallel loop over its switches (pull formulation: a switch reads its lower, then
 * its upper neighbours, so no two threads write the same row); the loop boundary is the
 * barrier of the paper's implementation.
 * Routes (equations 1-4): for every switch s and leaf l, C = groups of s whose remote
 * switch is closer to l (sorted by GUID), then for each node d of l the group
 * C[floor(d/Pi) mod #C] and its port floor(d/(Pi #C)) mod #g. Switches are the unit of work.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")   /* the cost and mask loops below are meant to vectorise */
#endif
#include "ft_route.h"
#include "common/sm_err.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void dmodc_state_free(struct dmodc_state *st)
{
	free(st->cost);
	free(st->dcost);
	free(st->div);
	memset(st, 0, sizeof(*st));
}

struct pass {
	const struct ft_topo *t;
	struct dmodc_state *st;
	const int *order;       /* switches of the current rank */
	int up;                 /* 1: pull from lower rank neighbours, 0: from upper */
};

static inline void relax(uint8_t *restrict dst, const uint8_t *restrict src, int n)
{
	for (int l = 0; l < n; l++) {
		uint8_t c = (uint8_t)(src[l] + (src[l] != FT_INF));
		dst[l] = c < dst[l] ? c : dst[l];
	}
}

/* Number of distinct switches above s (its upward arity). */
static int up_arity(const struct ft_topo *t, int s)
{
	int n = 0;
	for (int g = t->grp_off[s]; g < t->grp_off[s + 1]; g++)
		n += t->sw[t->grp[g].peer].rank > t->sw[s].rank;
	return n;
}

static void pass_one(void *ctx, int i)
{
	struct pass *p = ctx;
	const struct ft_topo *t = p->t;
	int s = p->order[i], r = t->sw[s].rank, L = p->st->nleaves;
	uint8_t *row = p->st->cost + (size_t)s * L;
	for (int g = t->grp_off[s]; g < t->grp_off[s + 1]; g++) {
		int n = (int)t->grp[g].peer, rn = t->sw[n].rank;
		if (rn < 0 || rn != (p->up ? r - 1 : r + 1))
			continue;
		relax(row, p->st->cost + (size_t)n * L, L);
		if (p->up) {
			uint64_t pi = p->st->div[n] * (uint64_t)up_arity(t, n);
			if (pi > p->st->div[s])
				p->st->div[s] = pi;
		}
	}
}

int dmodc_preprocess(const struct ft_topo *t, const struct ft_route_opts *o, struct dmodc_state *st)
{
	memset(st, 0, sizeof(*st));
	int S = t->nsw, L = t->nleaves;
	st->nsw = S;
	st->nleaves = L;
	st->cost = malloc((size_t)S * L + 1);
	st->div = malloc(sizeof(uint64_t) * (size_t)(S + 1));
	int *order = malloc(sizeof(int) * (size_t)(S + 1));
	int *rstart = calloc((size_t)t->maxrank + 3, sizeof(int));
	if (!st->cost || !st->div || !order || !rstart)
		goto oom;
	memset(st->cost, FT_INF, (size_t)S * L);
	for (int s = 0; s < S; s++) {
		st->div[s] = 1;
		if (t->sw[s].leaf >= 0)
			st->cost[(size_t)s * L + t->sw[s].leaf] = 0;
		if (t->sw[s].rank >= 0)
			rstart[t->sw[s].rank + 1]++;
	}
	for (int r = 0; r <= t->maxrank; r++)
		rstart[r + 1] += rstart[r];
	int *fill = calloc((size_t)t->maxrank + 2, sizeof(int));
	if (!fill)
		goto oom;
	for (int s = 0; s < S; s++)
		if (t->sw[s].rank >= 0)
			order[rstart[t->sw[s].rank] + fill[t->sw[s].rank]++] = s;
	free(fill);
	struct pass p = { .t = t, .st = st, .up = 1 };
	for (int r = 1; r <= t->maxrank; r++) {
		p.order = order + rstart[r];
		ft_parallel_for(rstart[r + 1] - rstart[r], o->threads, pass_one, &p);
	}
	if (o->updown_cost) {
		st->dcost = malloc((size_t)S * L + 1);
		if (!st->dcost)
			goto oom;
		memcpy(st->dcost, st->cost, (size_t)S * L);
	}
	p.up = 0;
	for (int r = t->maxrank - 1; r >= 0; r--) {
		p.order = order + rstart[r];
		ft_parallel_for(rstart[r + 1] - rstart[r], o->threads, pass_one, &p);
	}
	free(order);
	free(rstart);
	return 0;
oom:
	free(order);
	free(rstart);
	dmodc_state_free(st);
	return -ENOMEM;
}

/* ---- routes ---- */

struct rctx {
	const struct ft_topo *t;
	const struct ft_route_opts *o;
	const struct dmodc_state *st;
	struct ft_routes *r;
};

/* Groups of s whose remote switch is closer to leaf l: equation (1). */
static int closer_groups(const struct rctx *c, int s, int l, int *C)
{
	const struct ft_topo *t = c->t;
	int L = c->st->nleaves, nc = 0, rs = t->sw[s].rank;
	uint8_t cs = c->st->cost[(size_t)s * L + l];
	for (int g = t->grp_off[s]; g < t->grp_off[s + 1]; g++) {
		int n = (int)t->grp[g].peer;
		const uint8_t *cm = c->st->cost;
		if (c->st->dcost && t->sw[n].rank < rs)
			cm = c->st->dcost;   /* down neighbour: only a down-only path counts */
		if (cm[(size_t)n * L + l] < cs)
			C[nc++] = g;
	}
	return nc;
}

/* Same as closer_groups, from a bit mask of group indices (ascending = GUID order). */
static int groups_from_mask(const struct ft_topo *t, int s, uint64_t m, int *C)
{
	int nc = 0;
	while (m) {
		C[nc++] = t->grp_off[s] + __builtin_ctzll(m);
		m &= m - 1;
	}
	return nc;
}

/*
 * For switches with at most 64 groups, compare whole cost rows group by group (sequential
 * memory, vectorised) into one mask of closer groups per leaf: equation (1) for all leaves.
 */
static void closer_masks(const struct rctx *c, int s, uint64_t *mask, uint8_t *tmp)
{
	const struct ft_topo *t = c->t;
	int L = c->st->nleaves, G = t->grp_off[s + 1] - t->grp_off[s], rs = t->sw[s].rank;
	const uint8_t *restrict self = c->st->cost + (size_t)s * L;
	memset(mask, 0, sizeof(uint64_t) * (size_t)L);
	for (int g0 = 0; g0 < G; g0 += 8) {
		memset(tmp, 0, (size_t)L);
		for (int k = 0; k < 8 && g0 + k < G; k++) {
			int n = (int)t->grp[t->grp_off[s] + g0 + k].peer;
			const uint8_t *cm = c->st->dcost && t->sw[n].rank < rs ? c->st->dcost : c->st->cost;
			const uint8_t *restrict rn = cm + (size_t)n * L;
			for (int l = 0; l < L; l++)
				tmp[l] |= (uint8_t)((rn[l] < self[l]) << k);
		}
		for (int l = 0; l < L; l++)
			mask[l] |= (uint64_t)tmp[l] << g0;
	}
}

/* Closer groups of the leaf being routed; consecutive leaves mostly share them. */
struct cset {
	int valid, nc, single;
	uint64_t mask;
	int C[FT_MAX_PORTS + 1];
	uint8_t P[FT_MAX_PORTS + 1];    /* first port of each group */
	/* spread option: the switch's up groups, and which groups are in C */
	int nup, U[FT_MAX_PORTS + 1];
	uint64_t inC[(FT_MAX_PORTS >> 6) + 1];
};

/*
 * Spread variant (ft_route_opts.spread, not in the paper): when only some up groups lead
 * closer to the leaf, pick among all up groups as in the complete fabric (so unaffected
 * destinations keep their Dmodk route) and spread only the displaced destinations over C,
 * by node and by switch ((d + s) mod #C), so the sources of one displaced destination do
 * not all pile onto one surviving link. Routes stay minimal: every choice is in C.
 */
static int spread_applies(const struct ft_topo *t, int s, const struct cset *cs)
{
	if (cs->nc == cs->nup || !cs->nup)
		return 0;
	for (int i = 0; i < cs->nc; i++)
		if (t->sw[t->grp[cs->C[i]].peer].rank <= t->sw[s].rank)
			return 0;
	return 1;
}

static void route_spread(const struct rctx *c, int s, int d0, int d1, uint8_t *row, struct cset *cs)
{
	const struct ft_topo *t = c->t;
	int base = t->grp_off[s];
	memset(cs->inC, 0, sizeof(cs->inC));
	for (int i = 0; i < cs->nc; i++)
		cs->inC[(cs->C[i] - base) >> 6] |= 1ull << ((cs->C[i] - base) & 63);
	uint64_t pi = c->st->div[s], nu = (uint64_t)cs->nup;
	for (int d = d0; d < d1; d++) {
		uint64_t q = (uint64_t)d / pi;
		int g = cs->U[q % nu];
		if (!(cs->inC[(g - base) >> 6] >> ((g - base) & 63) & 1))
			g = cs->C[((uint64_t)d + (uint64_t)s) % (uint64_t)cs->nc];
		const struct ft_group *gr = &t->grp[g];
		row[d] = t->gport[gr->first + (uint32_t)((q / nu) % gr->nports)];
	}
}

static void cset_fill(const struct ft_topo *t, struct cset *cs)
{
	cs->single = 1;
	for (int i = 0; i < cs->nc; i++) {
		cs->single &= t->grp[cs->C[i]].nports == 1;
		cs->P[i] = t->gport[t->grp[cs->C[i]].first];
	}
}

static void keep_alternatives(const struct rctx *c, int s, int l, const struct cset *cs)
{
	const struct ft_topo *t = c->t;
	int nc = cs->nc;
	if (c->r->alt) {
		uint64_t *a = c->r->alt + ((size_t)s * c->r->nleaves + l) * c->r->alt_words;
		for (int i = 0; i < nc; i++) {
			const struct ft_group *g = &t->grp[cs->C[i]];
			for (uint32_t k = 0; k < g->nports; k++) {
				int p = t->gport[g->first + k];
				a[p >> 6] |= 1ull << (p & 63);
			}
		}
	}
}

/* Index of the k-th (from 0) set bit of m; m has more than k bits set. */
static inline int select64(uint64_t m, int k)
{
	int base = 0;
	for (;;) {
		int c = __builtin_popcountll(m & 0xff);
		if (k < c)
			break;
		k -= c;
		m >>= 8;
		base += 8;
	}
	while (k--)
		m &= m - 1;
	return base + __builtin_ctzll(m);
}

/*
 * Equations (3)-(4) straight from the closer-group mask, for switches whose divider
 * covers the whole leaf (upper levels): one or two runs per leaf, no group list to build.
 */
static void route_leaf_runs(const struct rctx *c, int s, int d0, int d1, uint8_t *row, uint64_t m)
{
	const struct ft_topo *t = c->t;
	uint64_t pi = c->st->div[s], nc = (uint64_t)__builtin_popcountll(m);
	if (!nc)
		return;
	for (int d = d0; d < d1;) {
		uint64_t q = (uint64_t)d / pi, run = pi - (uint64_t)d % pi;
		if (run > (uint64_t)(d1 - d))
			run = (uint64_t)(d1 - d);
		const struct ft_group *g = &t->grp[t->grp_off[s] + select64(m, (int)(q % nc))];
		uint8_t port = t->gport[g->first + (g->nports == 1 ? 0 : (uint32_t)((q / nc) % g->nports))];
		memset(row + d, port, (size_t)run);
		d += (int)run;
	}
}

static void route_leaf(const struct rctx *c, int s, int l, uint8_t *row, struct cset *cs, const uint64_t *mask)
{
	const struct ft_topo *t = c->t;
	int d0 = t->leaf_first[l], d1 = t->leaf_first[l + 1];
	if (d0 == d1)
		return;
	if (t->sw[s].leaf == l) {
		for (int d = d0; d < d1; d++)
			row[d] = (uint8_t)t->node[d].sw_port;
		return;
	}
	if (c->st->cost[(size_t)s * c->st->nleaves + l] == FT_INF)
		return;   /* row is pre-filled with FT_NO_PATH */
	uint64_t pi = c->st->div[s];
	if (mask && !c->o->spread && !c->r->alt && pi >= (uint64_t)(d1 - d0)) {
		route_leaf_runs(c, s, d0, d1, row, mask[l]);
		return;
	}
	if (!mask) {
		cs->nc = closer_groups(c, s, l, cs->C);
		cs->valid = 0;
		cset_fill(t, cs);
	} else if (!cs->valid || cs->mask != mask[l]) {
		cs->nc = groups_from_mask(t, s, mask[l], cs->C);
		cs->mask = mask[l];
		cs->valid = 1;
		cset_fill(t, cs);
	}
	int nc = cs->nc;
	if (!nc)
		return;
	if (c->o->spread && spread_applies(t, s, cs)) {
		route_spread(c, s, d0, d1, row, cs);
		keep_alternatives(c, s, l, cs);
		return;
	}
	keep_alternatives(c, s, l, cs);
	/* Equations (3)-(4), walking consecutive d: q = floor(d / Pi) only changes every
	 * Pi nodes, and the port only depends on q. */
	uint64_t q = (uint64_t)d0 / pi, rem = (uint64_t)d0 % pi;
	uint32_t gi = (uint32_t)(q % (uint64_t)nc), q2 = (uint32_t)(q / (uint64_t)nc);
	if (cs->single && pi == 1) {
		/* the common leaf case: one port per group, a new group every node */
		for (int d = d0; d < d1; d++) {
			row[d] = cs->P[gi];
			if (++gi == (uint32_t)nc)
				gi = 0;
		}
		return;
	}
	for (int d = d0; d < d1;) {
		const struct ft_group *g = &t->grp[cs->C[gi]];
		uint8_t port = g->nports == 1 ? cs->P[gi] : t->gport[g->first + q2 % g->nports];
		uint64_t run = pi - rem;
		if (run > (uint64_t)(d1 - d))
			run = (uint64_t)(d1 - d);
		if (run == 1)
			row[d] = port;
		else
			memset(row + d, port, (size_t)run);
		d += (int)run;
		rem = 0;
		if (++gi == (uint32_t)nc) {
			gi = 0;
			q2++;
		}
	}
}

static void route_switch(void *ctx, int s)
{
	const struct rctx *c = ctx;
	const struct ft_topo *t = c->t;
	uint8_t *row = c->r->lft + (size_t)s * t->nnodes;
	struct cset cs = { .valid = 0 };
	int L = t->nleaves;
	uint64_t *mask = NULL;
	uint8_t *tmp = NULL;
	if (t->grp_off[s + 1] - t->grp_off[s] <= 64) {
		mask = malloc(sizeof(uint64_t) * (size_t)(L + 1));
		tmp = malloc((size_t)L + 1);
		if (mask && tmp)
			closer_masks(c, s, mask, tmp);
		else {
			free(mask);
			mask = NULL;   /* fall back to the per-leaf scan */
		}
	}
	for (int g = t->grp_off[s]; g < t->grp_off[s + 1]; g++)
		if (t->sw[t->grp[g].peer].rank > t->sw[s].rank)
			cs.U[cs.nup++] = g;
	memset(row, FT_NO_PATH, (size_t)t->nnodes);   /* nodes cabled to no leaf */
	for (int l = 0; l < L; l++)
		route_leaf(c, s, l, row, &cs, mask);
	free(mask);
	free(tmp);
}

static int dmodc_route(const struct ft_topo *t, const struct ft_route_opts *o, struct ft_routes *r,
		       char *err, size_t errlen)
{
	struct dmodc_state st;
	if (dmodc_preprocess(t, o, &st))
		return sm_err(err, errlen, -ENOMEM, "dmodc: out of memory for %d x %d costs",
			      t->nsw, t->nleaves);
	if (o->keep_alternatives) {
		r->nleaves = t->nleaves;
		r->alt_words = 0;
		for (int s = 0; s < t->nsw; s++)
			if ((t->sw[s].nports >> 6) + 1 > r->alt_words)
				r->alt_words = (t->sw[s].nports >> 6) + 1;
		r->alt = calloc((size_t)t->nsw * t->nleaves * r->alt_words + 1, sizeof(uint64_t));
		if (!r->alt) {
			dmodc_state_free(&st);
			return sm_err(err, errlen, -ENOMEM,
				      "dmodc: out of memory for alternative ports");
		}
	}
	struct rctx c = { .t = t, .o = o, .st = &st, .r = r };
	ft_parallel_for(t->nsw, o->threads, route_switch, &c);
	dmodc_state_free(&st);
	return 0;
}

const struct ft_engine ft_engine_dmodc = {
	.name = "dmodc",
	.help = "Dmodc: closed-form Dmodk formula over locally computed costs and dividers; "
		"any (degraded) fat-tree",
	.route = dmodc_route,
};
