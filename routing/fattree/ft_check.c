/*
 * ft_check.c - validity (leaf pairs under up-down), route walks (reachability, loops,
 * up-down turns, minimality) and the channel dependency graph deadlock check.
 */
#include "ft_route.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

long ft_check_leaf_pairs(const struct ft_topo *t, const struct dmodc_state *st)
{
	long bad = 0;
	for (int a = 0; a < t->nleaves; a++) {
		long na = t->leaf_first[a + 1] - t->leaf_first[a];
		for (int b = 0; b < t->nleaves; b++)
			if (st->cost[(size_t)t->leaves[a] * st->nleaves + b] == FT_INF)
				bad += na * (t->leaf_first[b + 1] - t->leaf_first[b]);
	}
	return bad;
}

static int uf_find(int *p, int x)
{
	while (p[x] != x)
		x = p[x] = p[p[x]];
	return x;
}

long ft_unreachable_nodes(const struct ft_topo *t)
{
	int *p = malloc(sizeof(int) * (size_t)(t->nsw + 1));
	long *cnt = calloc((size_t)t->nsw + 1, sizeof(long));
	if (!p || !cnt) {
		free(p);
		free(cnt);
		return -ENOMEM;
	}
	for (int s = 0; s < t->nsw; s++)
		p[s] = s;
	for (int s = 0; s < t->nsw; s++)
		for (int q = 1; q <= t->sw[s].nports; q++)
			if (t->sw[s].port[q].kind == FT_SWITCH)
				p[uf_find(p, s)] = uf_find(p, (int)t->sw[s].port[q].idx);
	long best = 0;
	for (int d = 0; d < t->nnodes; d++)
		if (t->node[d].sw >= 0) {
			long c = ++cnt[uf_find(p, t->node[d].sw)];
			if (c > best)
				best = c;
		}
	free(p);
	free(cnt);
	return t->nnodes - best;
}

/* ---- route walks ---- */

struct wctx {
	const struct ft_topo *t;
	const struct ft_routes *r;
	const struct dmodc_state *st;
	atomic_long invalid, nonmin, updown, loops;
	atomic_int max_hops;
};

static void walk_leaf(void *ctx, int l)
{
	struct wctx *w = ctx;
	const struct ft_topo *t = w->t;
	int L = t->nleaves, src = t->leaves[l], limit = 2 * t->maxrank + 4;
	long nsrc = t->leaf_first[l + 1] - t->leaf_first[l];
	long invalid = 0, nonmin = 0, updown = 0, loops = 0;
	int maxh = 0;
	if (!nsrc)
		return;
	for (int d = 0; d < t->nnodes; d++) {
		int dl = ft_node_leaf(t, d), s = src, hops = 0, down = 0, ok = 0;
		if (dl < 0) {
			invalid += nsrc;
			continue;
		}
		for (;;) {
			uint8_t p = w->r->lft[(size_t)s * t->nnodes + d];
			if (p == FT_NO_PATH || p < 1 || p > t->sw[s].nports)
				break;
			const struct ft_link *lk = &t->sw[s].port[p];
			if (lk->kind == FT_NODE) {
				ok = (int)lk->idx == d;
				break;
			}
			if (lk->kind != FT_SWITCH)
				break;
			int n = (int)lk->idx;
			if (t->sw[n].rank < t->sw[s].rank)
				down = 1;
			else if (t->sw[n].rank > t->sw[s].rank && down)
				updown++, down = 2;
			s = n;
			if (++hops > limit) {
				loops++;
				break;
			}
		}
		if (!ok) {
			invalid += nsrc;
			continue;
		}
		if (hops > maxh)
			maxh = hops;
		if (w->st && hops > w->st->cost[(size_t)src * L + dl])
			nonmin++;
	}
	atomic_fetch_add(&w->invalid, invalid);
	atomic_fetch_add(&w->nonmin, nonmin);
	atomic_fetch_add(&w->updown, updown);
	atomic_fetch_add(&w->loops, loops);
	int cur = atomic_load(&w->max_hops);
	while (maxh > cur && !atomic_compare_exchange_weak(&w->max_hops, &cur, maxh))
		;
}

/* ---- channel dependency graph ---- */

struct cdg {
	const struct ft_topo *t;
	const struct ft_routes *r;
	int *poff;              /* [nsw + 1] channel id of (s, p) = poff[s] + p */
	uint8_t **dep;          /* dep[s][in * (nports + 1) + out] */
};

static void cdg_from(void *ctx, int u)
{
	struct cdg *c = ctx;
	const struct ft_topo *t = c->t;
	const uint8_t *row = c->r->lft + (size_t)u * t->nnodes;
	for (int d = 0; d < t->nnodes; d++) {
		uint8_t pu = row[d];
		if (pu == FT_NO_PATH || pu < 1 || pu > t->sw[u].nports)
			continue;
		const struct ft_link *lk = &t->sw[u].port[pu];
		if (lk->kind != FT_SWITCH)
			continue;
		int s = (int)lk->idx, np = t->sw[s].nports;
		uint8_t ps = c->r->lft[(size_t)s * t->nnodes + d];
		if (ps == FT_NO_PATH || ps < 1 || ps > np || t->sw[s].port[ps].kind != FT_SWITCH)
			continue;
		uint8_t *b = &c->dep[s][lk->rport * (np + 1) + ps];
		if (!*b)
			__atomic_store_n(b, 1, __ATOMIC_RELAXED);
	}
}

/* Iterative DFS; returns 1 on a cycle. */
static int cdg_cycle(struct cdg *c, long nch, long *edges)
{
	const struct ft_topo *t = c->t;
	uint8_t *color = calloc((size_t)nch + 1, 1);
	int *stk_s = malloc(sizeof(int) * (size_t)(nch + 1));
	int *stk_p = malloc(sizeof(int) * (size_t)(nch + 1));
	int *stk_i = malloc(sizeof(int) * (size_t)(nch + 1));
	int cycle = 0;
	*edges = 0;
	for (int s = 0; s < t->nsw; s++) {
		int np = t->sw[s].nports;
		for (int i = 1; i <= np; i++)
			for (int o = 1; o <= np; o++)
				*edges += c->dep[s][i * (np + 1) + o];
	}
	if (!color || !stk_s || !stk_p || !stk_i) {
		cycle = -ENOMEM;
		goto out;
	}
	for (int s0 = 0; s0 < t->nsw && !cycle; s0++)
		for (int p0 = 1; p0 <= t->sw[s0].nports && !cycle; p0++) {
			if (t->sw[s0].port[p0].kind != FT_SWITCH || color[c->poff[s0] + p0])
				continue;
			int top = 0;
			stk_s[0] = s0, stk_p[0] = p0, stk_i[0] = 0;
			color[c->poff[s0] + p0] = 1;
			while (top >= 0 && !cycle) {
				int s = stk_s[top], p = stk_p[top];
				const struct ft_link *lk = &t->sw[s].port[p];
				int n = (int)lk->idx, np = t->sw[n].nports;
				const uint8_t *row = c->dep[n] + lk->rport * (np + 1);
				int o = ++stk_i[top];
				while (o <= np && !row[o])
					o++;
				stk_i[top] = o;
				if (o > np) {
					color[c->poff[s] + p] = 2;
					top--;
					continue;
				}
				uint8_t col = color[c->poff[n] + o];
				if (col == 1)
					cycle = 1;
				else if (col == 0) {
					color[c->poff[n] + o] = 1;
					top++;
					stk_s[top] = n, stk_p[top] = o, stk_i[top] = 0;
				}
			}
		}
out:
	free(color);
	free(stk_s);
	free(stk_p);
	free(stk_i);
	return cycle;
}

static int check_cdg(const struct ft_topo *t, const struct ft_routes *r, int threads, struct ft_check *res)
{
	struct cdg c = { .t = t, .r = r };
	int rc = -ENOMEM;
	c.poff = malloc(sizeof(int) * (size_t)(t->nsw + 1));
	c.dep = calloc((size_t)t->nsw + 1, sizeof(uint8_t *));
	if (!c.poff || !c.dep)
		goto out;
	long nch = 0;
	for (int s = 0; s < t->nsw; s++) {
		int np = t->sw[s].nports;
		c.poff[s] = (int)nch;
		nch += np + 1;
		c.dep[s] = calloc((size_t)(np + 1) * (np + 1), 1);
		if (!c.dep[s])
			goto out;
	}
	ft_parallel_for(t->nsw, threads, cdg_from, &c);
	res->cdg_channels = 2 * ft_topo_count_switch_links(t);
	rc = cdg_cycle(&c, nch, &res->cdg_edges);
	if (rc >= 0) {
		res->deadlock = rc;
		rc = 0;
	}
out:
	if (c.dep)
		for (int s = 0; s < t->nsw; s++)
			free(c.dep[s]);
	free(c.dep);
	free(c.poff);
	return rc;
}

int ft_check_routes(const struct ft_topo *t, const struct ft_routes *r, int threads, struct ft_check *res)
{
	memset(res, 0, sizeof(*res));
	struct ft_route_opts o = { .threads = threads };
	struct dmodc_state st;
	if (dmodc_preprocess(t, &o, &st))
		return -ENOMEM;
	struct wctx w = { .t = t, .r = r, .st = &st };
	atomic_init(&w.invalid, 0);
	atomic_init(&w.nonmin, 0);
	atomic_init(&w.updown, 0);
	atomic_init(&w.loops, 0);
	atomic_init(&w.max_hops, 0);
	ft_parallel_for(t->nleaves, threads, walk_leaf, &w);
	res->invalid_pairs = atomic_load(&w.invalid);
	/* nodes cabled to no switch can neither send nor receive */
	for (int d = 0; d < t->nnodes; d++)
		if (t->node[d].sw < 0)
			res->invalid_pairs += t->nnodes - 1;
	res->nonminimal = atomic_load(&w.nonmin);
	res->updown_violations = atomic_load(&w.updown);
	res->loops = atomic_load(&w.loops);
	res->max_hops = atomic_load(&w.max_hops);
	res->unreachable_nodes = ft_unreachable_nodes(t);
	res->updown_unreachable = ft_check_leaf_pairs(t, &st);
	dmodc_state_free(&st);
	return check_cdg(t, r, threads, res);
}
