/* fnn_analyze.c - links per pair against the paper's bound, bisection, pattern scores. */
#include "fnn.h"
#include "fnn_util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int cmp_desc(const void *a, const void *b)
{
	return *(const int *)b - *(const int *)a;
}

double fnn_bound(const struct fnn_problem *p, int64_t *num, int64_t *den)
{
	int64_t nics = 0, n = 0, d = (int64_t)p->npcs * (p->npcs - 1);
	int *ports = malloc((size_t)(p->nswitches ? p->nswitches : 1) * sizeof(int));
	if (!ports)
		return -1;
	for (int i = 0; i < p->npcs; i++)
		nics += p->nics[i];
	memcpy(ports, p->ports, (size_t)p->nswitches * sizeof(int));
	qsort(ports, p->nswitches, sizeof(int), cmp_desc);
	/* u(u-1) is convex: filling the widest switches first maximises the sum. */
	for (int s = 0; s < p->nswitches && nics > 0; s++) {
		int64_t u = ports[s] < p->npcs ? ports[s] : p->npcs;
		if (u > nics)
			u = nics;
		n += u * (u - 1);
		nics -= u;
	}
	free(ports);
	if (num)
		*num = n;
	if (den)
		*den = d;
	return d ? (double)n / (double)d : 0;
}

static void score_patterns(const struct fnn_design *d, const struct fnn_weights *w,
			   struct fnn_analysis *a)
{
	int n = d->npcs;
	for (int i = 0; i < a->npatterns; i++) {
		struct fnn_pattern_score *ps = &a->pattern[i];
		const float *m = w->pat[i].w;
		double sum = 0, wl = 0;
		snprintf(ps->name, sizeof(ps->name), "%s", w->pat[i].name);
		ps->min_links = FNN_MAX_NICS;
		for (int x = 0; x < n; x++)
			for (int y = x + 1; y < n; y++) {
				float v = m[x * n + y];
				if (v <= 0)
					continue;
				int c = fnn_design_shared(d, x, y);
				sum += v;
				wl += v * c;
				if (c < ps->min_links)
					ps->min_links = c;
				ps->disconnected += c == 0;
			}
		ps->weight = sum;
		ps->avg_links = sum > 0 ? wl / sum : 0;
		if (sum == 0)
			ps->min_links = 0;
	}
}

int fnn_analyze(const struct fnn_design *d, const struct fnn_problem *p,
		const struct fnn_weights *w, double nic_mbps, double uplink_mbps,
		struct fnn_analysis *a)
{
	struct fnn_problem own;
	int rc;
	memset(a, 0, sizeof(*a));
	if (w && w->npcs != d->npcs)
		return -EINVAL;
	if (!p) {
		rc = fnn_problem_from_design(&own, d);
		if (rc)
			return rc;
	}
	a->npcs = d->npcs;
	a->bound = fnn_bound(p ? p : &own, &a->bound_num, &a->bound_den);
	if (!p)
		fnn_problem_free(&own);
	a->min_links = d->npcs > 1 ? FNN_MAX_NICS : 0;
	for (int s = 0; s < d->nswitches; s++)
		a->nswitches += fnn_design_used(d, s) > 0;
	for (int x = 0; x < d->npcs; x++) {
		a->nics += fnn_design_nics(d, x);
		for (int y = x + 1; y < d->npcs; y++) {
			int c = fnn_design_shared(d, x, y);
			a->pairs++;
			a->links += c;
			a->disconnected += c == 0;
			a->hist[c]++;
			if (c < a->min_links)
				a->min_links = c;
			if (c > a->max_links)
				a->max_links = c;
		}
	}
	a->avg_links = a->pairs ? (double)a->links / a->pairs : 0;
	a->bisect_upper_mbps = a->nics * nic_mbps;
	a->bisect_random_mbps = a->avg_links * 2 * nic_mbps * (d->npcs / 2);
	a->bisect_uplink_mbps = a->bisect_random_mbps + a->nswitches * 2 * uplink_mbps;
	if (w && w->npatterns) {
		a->pattern = calloc(w->npatterns, sizeof(*a->pattern));
		if (!a->pattern)
			return -ENOMEM;
		a->npatterns = w->npatterns;
		score_patterns(d, w, a);
	}
	return 0;
}

void fnn_analysis_free(struct fnn_analysis *a)
{
	free(a->pattern);
	memset(a, 0, sizeof(*a));
}

void fnn_analysis_print(const struct fnn_analysis *a, FILE *out)
{
	fprintf(out, "pcs %d  switches %d  nics %d  pairs %lld\n", a->npcs, a->nswitches, a->nics,
		(long long)a->pairs);
	fprintf(out, "links per pair: average %.4f  bound %.4f (%lld/%lld)%s\n", a->avg_links,
		a->bound, (long long)a->bound_num, (long long)a->bound_den,
		a->links * a->bound_den == a->bound_num * a->pairs ? "  AT BOUND" : "");
	fprintf(out, "links per pair: min %d  max %d  pairs without a common switch %lld\n",
		a->min_links, a->max_links, (long long)a->disconnected);
	fprintf(out, "pairs by common switches:");
	for (int c = 0; c <= a->max_links; c++)
		fprintf(out, " %d:%lld", c, (long long)a->hist[c]);
	fputc('\n', out);
	fprintf(out, "bisection (Mb/s): upper %.1f  random permutation %.1f  "
		"with unfolded uplink %.1f\n",
		a->bisect_upper_mbps, a->bisect_random_mbps, a->bisect_uplink_mbps);
	for (int i = 0; i < a->npatterns; i++) {
		const struct fnn_pattern_score *p = &a->pattern[i];
		fprintf(out, "pattern %s: weight %.0f  avg links %.4f  min %d  disconnected %lld\n",
			p->name, p->weight, p->avg_links, p->min_links, (long long)p->disconnected);
	}
}
