/*
 * ft_quality.c - congestion risk of forwarding tables: for each pattern instance every
 * pair's path is walked and the routes crossing each switch-to-switch channel counted.
 * Reports the maximum (over channels and instances), the mean of per-instance maxima,
 * the mean over used channels, a histogram of per-channel loads and path lengths.
 */
#include "ft_route.h"
#include "common/sm_err.h"
#include "common/sm_rng.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct worker {
	uint32_t *load;
	int *touched;
	long ntouched;
	int *dst;               /* instance destinations, [nnodes] */
	uint64_t *sum;          /* all-to-all accumulation, or NULL */
	long hist[9], routes, invalid, hops, instances, sum_max;
	double sum_mean;
	int max_load, max_hops;
};

struct qctx {
	const struct ft_topo *t;
	const struct ft_routes *r;
	int *poff;
	long nch;
	struct worker *w;
	int nworkers;
	enum ft_pattern pat;
	long ninst;
	uint64_t seed;
	const struct ft_pairs *pairs;
};

static int bucket(uint32_t v)
{
	if (v <= 4)
		return (int)v - 1;
	if (v <= 8)
		return 4;
	if (v <= 16)
		return 5;
	if (v <= 32)
		return 6;
	if (v <= 64)
		return 7;
	return 8;
}

/* Walk a -> d; returns hops or -1. */
static inline int walk(const struct qctx *q, struct worker *w, int a, int d)
{
	const struct ft_topo *t = q->t;
	int s = t->node[a].sw, hops = 0, limit = 2 * t->maxrank + 4;
	if (s < 0 || t->node[d].sw < 0)
		return -1;
	for (;;) {
		uint8_t p = q->r->lft[(size_t)s * t->nnodes + d];
		if (p == FT_NO_PATH || p < 1 || p > t->sw[s].nports)
			return -1;
		const struct ft_link *lk = &t->sw[s].port[p];
		if (lk->kind == FT_NODE)
			return (int)lk->idx == d ? hops : -1;
		if (lk->kind != FT_SWITCH || ++hops > limit)
			return -1;
		long ch = q->poff[s] + p;
		if (!w->load[ch]++)
			w->touched[w->ntouched++] = (int)ch;
		s = (int)lk->idx;
	}
}

static void finish_instance(struct worker *w)
{
	uint32_t mx = 0;
	long tot = 0;
	for (long i = 0; i < w->ntouched; i++) {
		int ch = w->touched[i];
		uint32_t v = w->load[ch];
		if (v > mx)
			mx = v;
		tot += v;
		w->hist[bucket(v)]++;
		if (w->sum)
			w->sum[ch] += v;
		w->load[ch] = 0;
	}
	if ((int)mx > w->max_load)
		w->max_load = (int)mx;
	w->sum_max += mx;
	w->sum_mean += w->ntouched ? (double)tot / (double)w->ntouched : 0;
	w->instances++;
	w->ntouched = 0;
}

static void route_pair(const struct qctx *q, struct worker *w, int a, int d)
{
	int h = walk(q, w, a, d);
	w->routes++;
	if (h < 0) {
		w->invalid++;
		return;
	}
	w->hops += h;
	if (h > w->max_hops)
		w->max_hops = h;
}

static void run_instance(void *ctx, int i, int wid)
{
	struct qctx *q = ctx;
	struct worker *w = &q->w[wid];
	int N = q->t->nnodes;
	if (q->pat == FT_PAT_FILE) {
		for (long k = 0; k < q->pairs->n; k++)
			route_pair(q, w, q->pairs->src[k], q->pairs->dst[k]);
	} else if (q->pat == FT_PAT_RANDPERM) {
		uint64_t x = q->seed * 1000003u + (uint64_t)i;
		for (int a = 0; a < N; a++)
			w->dst[a] = a;
		for (int a = N - 1; a > 0; a--) {
			int b = (int)(sm_rng_next(&x) % (uint64_t)(a + 1)), tmp = w->dst[a];
			w->dst[a] = w->dst[b];
			w->dst[b] = tmp;
		}
		for (int a = 0; a < N; a++)
			route_pair(q, w, a, w->dst[a]);
	} else {
		/* shift k: instance i of ninst spread evenly over 1..N-1 */
		long k = q->ninst >= N - 1 ? i + 1 : 1 + (long)i * (N - 1) / q->ninst;
		for (int a = 0; a < N; a++)
			route_pair(q, w, a, (int)((a + k) % N));
	}
	finish_instance(w);
}

static int run(struct qctx *q, int threads, const char *name, struct ft_quality *res)
{
	const struct ft_topo *t = q->t;
	int rc = -ENOMEM;
	memset(res, 0, sizeof(*res));
	res->pattern = name;
	if (threads < 1)
		threads = 1;
	q->nworkers = threads;
	q->poff = malloc(sizeof(int) * (size_t)(t->nsw + 1));
	q->w = calloc((size_t)threads, sizeof(*q->w));
	if (!q->poff || !q->w)
		goto out;
	q->nch = 0;
	for (int s = 0; s < t->nsw; s++) {
		q->poff[s] = (int)q->nch;
		q->nch += t->sw[s].nports + 1;
	}
	for (int i = 0; i < threads; i++) {
		struct worker *w = &q->w[i];
		w->load = calloc((size_t)q->nch + 1, sizeof(uint32_t));
		w->touched = malloc(sizeof(int) * (size_t)(q->nch + 1));
		w->dst = malloc(sizeof(int) * (size_t)(t->nnodes + 1));
		if (q->pat == FT_PAT_ALL2ALL)
			w->sum = calloc((size_t)q->nch + 1, sizeof(uint64_t));
		if (!w->load || !w->touched || !w->dst || (q->pat == FT_PAT_ALL2ALL && !w->sum))
			goto out;
	}
	ft_parallel_for_w((int)q->ninst, threads, run_instance, q);
	long sum_max = 0;
	double sum_mean = 0;
	long hops = 0;
	for (int i = 0; i < threads; i++) {
		struct worker *w = &q->w[i];
		res->instances += w->instances;
		res->routes += w->routes;
		res->invalid += w->invalid;
		hops += w->hops;
		sum_max += w->sum_max;
		sum_mean += w->sum_mean;
		if (w->max_load > res->max_load)
			res->max_load = w->max_load;
		if (w->max_hops > res->max_hops)
			res->max_hops = w->max_hops;
		for (int b = 0; b < 9; b++)
			res->hist[b] += w->hist[b];
	}
	if (res->instances) {
		res->mean_max_load = (double)sum_max / (double)res->instances;
		res->mean_load = sum_mean / (double)res->instances;
	}
	if (res->routes > res->invalid)
		res->mean_hops = (double)hops / (double)(res->routes - res->invalid);
	if (q->pat == FT_PAT_ALL2ALL) {
		/* all-to-all is one instance: the union of every shift */
		uint64_t mx = 0, tot = 0, used = 0;
		memset(res->hist, 0, sizeof(res->hist));
		for (long ch = 0; ch < q->nch; ch++) {
			uint64_t v = 0;
			for (int i = 0; i < threads; i++)
				v += q->w[i].sum[ch];
			if (!v)
				continue;
			mx = v > mx ? v : mx;
			tot += v;
			used++;
			res->hist[bucket(v > UINT32_MAX ? UINT32_MAX : (uint32_t)v)]++;
		}
		res->instances = 1;
		res->max_load = (int)mx;
		res->mean_max_load = (double)mx;
		res->mean_load = used ? (double)tot / (double)used : 0;
	}
	rc = 0;
out:
	if (q->w)
		for (int i = 0; i < threads; i++) {
			free(q->w[i].load);
			free(q->w[i].touched);
			free(q->w[i].dst);
			free(q->w[i].sum);
		}
	free(q->w);
	free(q->poff);
	return rc;
}

int ft_quality_shift(const struct ft_topo *t, const struct ft_routes *r, long n_inst, int threads,
		     struct ft_quality *q)
{
	struct qctx c = { .t = t, .r = r, .pat = FT_PAT_SHIFT };
	c.ninst = n_inst <= 0 || n_inst > t->nnodes - 1 ? t->nnodes - 1 : n_inst;
	return run(&c, threads, "shift", q);
}

int ft_quality_all2all(const struct ft_topo *t, const struct ft_routes *r, int threads, struct ft_quality *q)
{
	struct qctx c = { .t = t, .r = r, .pat = FT_PAT_ALL2ALL, .ninst = t->nnodes - 1 };
	return run(&c, threads, "all2all", q);
}

int ft_quality_randperm(const struct ft_topo *t, const struct ft_routes *r, long n_inst, uint64_t seed,
			int threads, struct ft_quality *q)
{
	struct qctx c = { .t = t, .r = r, .pat = FT_PAT_RANDPERM, .ninst = n_inst, .seed = seed };
	return run(&c, threads, "randperm", q);
}

int ft_quality_pairs(const struct ft_topo *t, const struct ft_routes *r, const struct ft_pairs *p,
		     struct ft_quality *q)
{
	struct qctx c = { .t = t, .r = r, .pat = FT_PAT_FILE, .ninst = 1, .pairs = p };
	return run(&c, 1, "file", q);
}

void ft_quality_print(FILE *f, const struct ft_quality *q)
{
	fprintf(f, "%-9s inst %-6ld routes %-10ld invalid %-8ld max %-5d meanmax %-8.2f mean %-7.2f "
		"hops %.2f/%d  hist[1,2,3,4,5-8,9-16,17-32,33-64,>64]", q->pattern, q->instances, q->routes,
		q->invalid, q->max_load, q->mean_max_load, q->mean_load, q->mean_hops, q->max_hops);
	for (int b = 0; b < 9; b++)
		fprintf(f, "%c%ld", b ? ',' : ' ', q->hist[b]);
	fputc('\n', f);
}

/* ---- pattern files ---- */

static int find_node(const struct ft_topo *t, const char *tok)
{
	char *end;
	if (!strncmp(tok, "0x", 2)) {
		uint64_t g = strtoull(tok, &end, 16);
		for (int d = 0; !*end && d < t->nnodes; d++)
			if (t->node[d].port_guid == g || t->node[d].guid == g)
				return d;
		return -1;
	}
	long v = strtol(tok, &end, 10);
	if (!*end && end != tok)
		return v >= 0 && v < t->nnodes ? (int)v : -1;
	for (int d = 0; d < t->nnodes; d++)
		if (!strcmp(t->node[d].name, tok))
			return d;
	return -1;
}

int ft_pairs_read(const struct ft_topo *t, FILE *f, const char *fname, struct ft_pairs *p, char *err,
		  size_t errlen)
{
	char line[1024], a[512], b[512];
	long cap = 0, lineno = 0;
	memset(p, 0, sizeof(*p));
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		int n = sscanf(line, " \"%511[^\"]\" \"%511[^\"]\"", a, b);
		if (n != 2)
			n = sscanf(line, "%511s %511s", a, b);
		if (n <= 0)
			continue;
		int x = n == 2 ? find_node(t, a) : -1, y = n == 2 ? find_node(t, b) : -1;
		if (x < 0 || y < 0) {
			ft_pairs_free(p);
			return sm_err(err, errlen, -EINVAL,
				      "%s:%ld: expected 'src dst' (node index, 0xGUID or name), "
				      "got '%s'",
				      fname, lineno, n == 2 ? (x < 0 ? a : b) : a);
		}
		if (p->n == cap) {
			cap = cap ? cap * 2 : 256;
			int *s = realloc(p->src, sizeof(int) * (size_t)cap);
			if (s)
				p->src = s;
			int *d = realloc(p->dst, sizeof(int) * (size_t)cap);
			if (d)
				p->dst = d;
			if (!s || !d) {
				ft_pairs_free(p);
				return -ENOMEM;
			}
		}
		p->src[p->n] = x;
		p->dst[p->n++] = y;
	}
	return 0;
}

void ft_pairs_free(struct ft_pairs *p)
{
	free(p->src);
	free(p->dst);
	memset(p, 0, sizeof(*p));
}
