/*
 * dmodk.c - Dmodk (Zahavi, "D-mod-K routing providing non-blocking traffic for shift
 * permutations on real life fat trees") for complete PGFTs with the numbering of
 * ft_pgft.c. A level-l switch sends node d down if d lies below it, through child
 * a_l(d) and parallel cable floor(d / W_l) mod p_l; otherwise up through port index
 * floor(d / W_l) mod (w_{l+1} p_{l+1}), where W_l = w_1 * ... * w_l.
 */
#include "ft_route.h"
#include "common/sm_err.h"

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
	long idx = k->t->sw_index[s], n = k->t->nnodes;
	long prefix = idx / k->W[l];                /* digits a_h..a_{l+1} */
	long lo = prefix * k->M[l], hi = lo + k->M[l];  /* nodes below this switch */
	uint8_t *row = k->r->lft + (size_t)s * n;
	int down = pg->m[l] * pg->p[l];
	long upw = l < pg->h ? (long)pg->w[l + 1] * pg->p[l + 1] : 1;
	/* the up port only changes with q = floor(d / W_l): fill runs of W_l nodes */
	if (k->W[l] == 1) {
		for (long d = 0, q = 0; d < n; d++) {
			row[d] = (uint8_t)(1 + down + q);
			if (++q == upw)
				q = 0;
		}
	} else {
		for (long d = 0; d < n; d += k->W[l]) {
			long e = d + k->W[l] < n ? d + k->W[l] : n;
			memset(row + d, 1 + down + (int)((d / k->W[l]) % upw), (size_t)(e - d));
		}
	}
	/* below: child a_l changes every M_{l-1} nodes, parallel cable j every W_l */
	for (long d = lo; d < hi && d < n;) {
		int a = (int)((d / k->M[l - 1]) % pg->m[l]);
		int j = (int)((d / k->W[l]) % pg->p[l]);
		long run = k->M[l - 1] - d % k->M[l - 1], r2 = k->W[l] - d % k->W[l];
		run = r2 < run ? r2 : run;
		run = hi - d < run ? hi - d : run;
		run = n - d < run ? n - d : run;
		memset(row + d, 1 + j * pg->m[l] + a, (size_t)run);
		d += run;
	}
}

static int dmodk_route(const struct ft_topo *t, const struct ft_route_opts *o, struct ft_routes *r,
		       char *err, size_t errlen)
{
	if (!t->has_pgft)
		return sm_err(err, errlen, -EINVAL,
			      "dmodk: needs a complete PGFT (generate one, or give its parameters "
			      "with --pgft)");
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
