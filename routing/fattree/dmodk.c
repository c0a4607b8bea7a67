/*
 * dmodk.c - Dmodk (Zahavi, "D-mod-K routing providing non-blocking traffic for shift
 * permutations on real life fat trees") for complete PGFTs with the numbering of
 * ft_pgft.c. A level-l switch sends node d down if d lies below it, through child
 * a_l(d) and parallel cable floor(d / W_l) mod p_l; otherwise up through port index
 * floor(d / W_l) mod (w_{l+1} p_{l+1}), where W_l = w_1 * ... * w_l.
 */
#include "ft_route.h"

#include <errno.h>
#include <string.h>

struct kctx {
	const struct ft_topo *t;
	struct ft_routes *r;
	long W[FT_PGFT_MAXH + 2];       /* prod w_1..w_l */
	long M[FT_PGFT_MAXH + 2];       /* prod m_1..m_l */
};

static void route_switch(void *ctx, int s)
{
	const struct kctx *k = ctx;
	const struct ft_pgft *pg = &k->t->pgft;
	int l = k->t->sw_level[s];
	long idx = k->t->sw_index[s];
	long prefix = idx / k->W[l];                /* digits a_h..a_{l+1} */
	uint8_t *row = k->r->lft + (size_t)s * k->t->nnodes;
	int down = pg->m[l] * pg->p[l];
	long upw = l < pg->h ? (long)pg->w[l + 1] * pg->p[l + 1] : 1;
	for (long d = 0; d < k->t->nnodes; d++) {
		long q = d / k->W[l];
		if (d / k->M[l] == prefix) {
			int a = (int)((d / k->M[l - 1]) % pg->m[l]);
			int j = (int)(q % pg->p[l]);
			row[d] = (uint8_t)(1 + j * pg->m[l] + a);
		} else {
			row[d] = (uint8_t)(1 + down + q % upw);
		}
	}
}

static int dmodk_route(const struct ft_topo *t, const struct ft_route_opts *o, struct ft_routes *r,
		       char *err, size_t errlen)
{
	if (!t->has_pgft) {
		snprintf(err, errlen, "dmodk: needs a complete PGFT (generate one, or give its parameters "
			 "with --pgft)");
		return -EINVAL;
	}
	struct kctx k = { .t = t, .r = r };
	k.W[0] = k.M[0] = 1;
	for (int l = 1; l <= t->pgft.h; l++) {
		k.W[l] = k.W[l - 1] * t->pgft.w[l];
		k.M[l] = k.M[l - 1] * t->pgft.m[l];
	}
	ft_parallel_for(t->nsw, o->threads, route_switch, &k);
	return 0;
}

const struct ft_engine ft_engine_dmodk = {
	.name = "dmodk",
	.help = "Dmodk: Zahavi's closed-form routing; complete PGFTs only",
	.route = dmodk_route,
};
