/*
 * ft_minhop.c - plain shortest-path baseline (as OpenSM's minhop): no up-down restriction,
 * hop counts by BFS from every leaf, and among the ports on a shortest path each switch
 * takes the one it has used least so far (ties to the lowest port).
 */
#include "ft_route.h"
#include "common/sm_err.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct mctx {
	const struct ft_topo *t;
	struct ft_routes *r;
	uint8_t *dist;          /* [nsw * nleaves] */
};

static void bfs_leaf(void *ctx, int l)
{
	struct mctx *m = ctx;
	const struct ft_topo *t = m->t;
	int L = t->nleaves;
	int *queue = malloc(sizeof(int) * (size_t)(t->nsw + 1));
	if (!queue)
		return;   /* dist stays FT_INF: routes become FT_NO_PATH */
	int head = 0, tail = 0, src = t->leaves[l];
	m->dist[(size_t)src * L + l] = 0;
	queue[tail++] = src;
	while (head < tail) {
		int s = queue[head++];
		uint8_t ds = m->dist[(size_t)s * L + l];
		for (int g = t->grp_off[s]; g < t->grp_off[s + 1]; g++) {
			int n = (int)t->grp[g].peer;
			if (m->dist[(size_t)n * L + l] != FT_INF || ds + 1 >= FT_INF)
				continue;
			m->dist[(size_t)n * L + l] = (uint8_t)(ds + 1);
			queue[tail++] = n;
		}
	}
	free(queue);
}

static void route_switch(void *ctx, int s)
{
	struct mctx *m = ctx;
	const struct ft_topo *t = m->t;
	int L = t->nleaves;
	uint8_t *row = m->r->lft + (size_t)s * t->nnodes;
	uint32_t use[FT_MAX_PORTS + 1] = { 0 };
	uint8_t cand[FT_MAX_PORTS + 1];
	memset(row, FT_NO_PATH, (size_t)t->nnodes);
	for (int l = 0; l < L; l++) {
		int d0 = t->leaf_first[l], d1 = t->leaf_first[l + 1];
		if (t->sw[s].leaf == l) {
			for (int d = d0; d < d1; d++)
				row[d] = (uint8_t)t->node[d].sw_port;
			continue;
		}
		uint8_t ds = m->dist[(size_t)s * L + l];
		int nc = 0;
		for (int g = t->grp_off[s]; ds != FT_INF && g < t->grp_off[s + 1]; g++)
			if (m->dist[(size_t)t->grp[g].peer * L + l] < ds)
				for (uint32_t k = 0; k < t->grp[g].nports; k++)
					cand[nc++] = t->gport[t->grp[g].first + k];
		for (int d = d0; d < d1; d++) {
			int best = -1;
			for (int i = 0; i < nc; i++)
				if (best < 0 || use[cand[i]] < use[best] || (use[cand[i]] == use[best] && cand[i] < best))
					best = cand[i];
			row[d] = best < 0 ? FT_NO_PATH : (uint8_t)best;
			if (best >= 0)
				use[best]++;
		}
	}
}

static int minhop_route(const struct ft_topo *t, const struct ft_route_opts *o, struct ft_routes *r,
			char *err, size_t errlen)
{
	struct mctx m = { .t = t, .r = r };
	m.dist = malloc((size_t)t->nsw * t->nleaves + 1);
	if (!m.dist)
		return sm_err(err, errlen, -ENOMEM, "minhop: out of memory");
	memset(m.dist, FT_INF, (size_t)t->nsw * t->nleaves);
	ft_parallel_for(t->nleaves, o->threads, bfs_leaf, &m);
	ft_parallel_for(t->nsw, o->threads, route_switch, &m);
	free(m.dist);
	return 0;
}

const struct ft_engine ft_engine_minhop = {
	.name = "minhop",
	.help = "shortest paths without up-down restriction, least-used port first (baseline)",
	.route = minhop_route,
};
