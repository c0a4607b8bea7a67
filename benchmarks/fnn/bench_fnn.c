/*
 * bench_fnn - time to the links bound (every pair connected, average links per pair at
 * the paper's tight upper bound) for KLAT2's problem and larger ones, with 1 and 2
 * threads, and the design quality reached over time.
 *
 *   bench_fnn [--seconds S] [--seeds N] [--only NAME]
 *
 * One line per (problem, threads, seed): time to the bound (or "-" if not reached within
 * S seconds), generations, and the best design at 1, 5, 15 s and at the end as
 * "disconnected pairs / links per pair".
 */
#include "routing/fnn/fnn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct problem {
	const char *name;
	int pcs;
	const char *nics, *switches, *pattern;
};

static const struct problem problems[] = {
	{ "klat2", 64, "4", "8x31,8", "grid:8x8" },
	{ "pc128", 128, "4", "11x48", "grid:8x16" },
	{ "pc256", 256, "8", "43x48", "grid:16x16" },
	{ "pc256w", 256, "4", "11x96", "grid:16x16" },
};

static const double marks[] = { 1, 5, 15 };
#define NMARKS 3

struct trace {
	double mark_disc[NMARKS], mark_links[NMARKS];
	double disc, links;
};

static void on_best(void *arg, long gen, double secs, int64_t disc, double links, double pat)
{
	struct trace *t = arg;
	(void)gen;
	(void)pat;
	/* the best so far holds at every mark not yet passed */
	for (int i = 0; i < NMARKS; i++)
		if (secs <= marks[i]) {
			t->mark_disc[i] = (double)disc;
			t->mark_links[i] = links;
		}
	t->disc = (double)disc;
	t->links = links;
}

static int run(const struct problem *pr, int threads, uint64_t seed, double seconds)
{
	struct fnn_problem p;
	struct fnn_weights w;
	struct fnn_ga_params gp;
	struct fnn_ga_result res;
	struct fnn_design d;
	struct trace t;
	char err[256];
	if (fnn_problem_init(&p, pr->pcs, pr->nics, pr->switches, err, sizeof(err)) ||
	    fnn_weights_init(&w, pr->pcs) || fnn_weights_add(&w, pr->pattern, err, sizeof(err))) {
		fprintf(stderr, "bench_fnn: %s: %s\n", pr->name, err);
		return 1;
	}
	for (int i = 0; i < NMARKS; i++)
		t.mark_disc[i] = t.mark_links[i] = -1;
	fnn_ga_defaults(&gp);
	gp.seed = seed;
	gp.threads = threads;
	gp.seconds = seconds;
	gp.generations = 0;
	gp.stop_at_bound = 1;
	gp.on_best = on_best;
	gp.arg = &t;
	if (fnn_design_search(&p, &w, &gp, &d, &res)) {
		fprintf(stderr, "bench_fnn: %s: search failed\n", pr->name);
		return 1;
	}
	for (int i = 0; i < NMARKS; i++)
		if (t.mark_disc[i] < 0) { /* finished before the mark: the final design */
			t.mark_disc[i] = (double)res.disconnected;
			t.mark_links[i] = res.avg_links;
		}
	char tb[32] = "-";
	if (res.seconds_to_bound >= 0)
		snprintf(tb, sizeof(tb), "%.2f", res.seconds_to_bound);
	printf("%-7s %4d %-6s %-6s %7s %2d %4llu %8s %7ld", pr->name, pr->pcs, pr->nics,
	       pr->switches, "", threads, (unsigned long long)seed, tb, res.generations);
	for (int i = 0; i < NMARKS; i++)
		printf("  %4.0f/%.4f", t.mark_disc[i], t.mark_links[i]);
	printf("  %4lld/%.4f (bound %.4f)\n", (long long)res.disconnected, res.avg_links,
	       res.bound);
	fflush(stdout);
	fnn_design_free(&d);
	fnn_weights_free(&w);
	fnn_problem_free(&p);
	return 0;
}

int main(int argc, char **argv)
{
	double seconds = 60;
	int seeds = 3;
	const char *only = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--seeds") && i + 1 < argc)
			seeds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			only = argv[++i];
		else {
			fprintf(stderr, "usage: bench_fnn [--seconds S] [--seeds N] [--only NAME]\n");
			return 2;
		}
	}
	printf("# problem pcs nics switches    thr seed  t_bound(s)  gens   "
	       "disc/links@1s  @5s  @15s  final\n");
	for (size_t k = 0; k < sizeof(problems) / sizeof(problems[0]); k++) {
		if (only && strcmp(only, problems[k].name))
			continue;
		for (int threads = 1; threads <= 2; threads++)
			for (int s = 1; s <= seeds; s++)
				if (run(&problems[k], threads, (uint64_t)s, seconds))
					return 1;
	}
	return 0;
}
