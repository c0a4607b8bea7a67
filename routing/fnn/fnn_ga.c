/*
 * fnn_ga.c - the genetic search: generations of KEEP / CROSS / mutated designs,
 * FUDGE exchanges, the scaled-down connectivity phase, then the full search.
 *
 * Determinism: every child is built from its own RNG stream, seeded from (seed, phase,
 * generation, child index), and the population is sorted with the buffer index as the
 * tie-break, so the result does not depend on the number of threads.
 */
#include "config.h"

#include "fnn_ga.h"
#include "fnn_util.h"
#include "common/sm_rng.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

void fnn_ga_defaults(struct fnn_ga_params *gp)
{
	memset(gp, 0, sizeof(*gp));
	gp->seed = 1;
	gp->threads = 1;
	gp->population = 160;
	gp->keep = 32;
	gp->cross = 48;
	gp->fudge = 4;
	gp->max_mutations = 3;
	gp->generations = 20000;
	gp->seconds = 0;
	gp->scaled = 1;
	gp->scaled_generations = 300;
	gp->stop_at_bound = 0;
}

enum job { JOB_CROSS, JOB_MUTATE, JOB_QUIT };

struct run {
	const struct fnn_gaprob *pb;
	const struct fnn_ga_params *gp;
	int n, keep, cross;
	struct fnn_genome *g;     /* n buffers */
	struct fnn_score *sc;
	uint16_t *bad;            /* n * npcs */
	int *order;               /* buffers by rank; [0, keep) survive */
	long gen;
	int phase;                /* salt: scaled size, or 0 for the full search */
	/* thread pool */
	int nthreads;
	pthread_t *tid;
	pthread_barrier_t start, done;
	enum job job;
};

static uint64_t child_seed(const struct run *r, int job, int i)
{
	uint64_t s = r->gp->seed ^ ((uint64_t)r->phase << 48) ^ ((uint64_t)job << 40);
	s ^= (uint64_t)r->gen * UINT64_C(0x9e3779b97f4a7c15);
	s += (uint64_t)i * UINT64_C(0xd1b54a32d192ed03);
	sm_rng_next(&s);
	return s;
}

static void evaluate(struct run *r, int buf)
{
	fnn_ga_eval(r->pb, &r->g[buf], &r->sc[buf], &r->bad[(size_t)buf * r->pb->npcs]);
}

/* Child slot i (rank keep + i): crossover of two kept parents. */
static void make_cross(struct run *r, int i)
{
	uint64_t rng = child_seed(r, JOB_CROSS, i);
	int pa = sm_rng_below(&rng, r->keep), pb_ = sm_rng_below(&rng, r->keep - 1);
	if (pb_ >= pa)
		pb_++;
	int buf = r->order[r->keep + i];
	fnn_ga_crossover(r->pb, &r->g[buf], &r->g[r->order[pa]], &r->g[r->order[pb_]], &rng);
	evaluate(r, buf);
}

/* Child slot i (rank keep + cross + i): mutations of a kept or crossover design. */
static void make_mutant(struct run *r, int i)
{
	uint64_t rng = child_seed(r, JOB_MUTATE, i);
	int src = r->order[sm_rng_below(&rng, r->keep + r->cross)];
	int buf = r->order[r->keep + r->cross + i];
	const uint16_t *bad = &r->bad[(size_t)src * r->pb->npcs];
	int guided = r->sc[src].disc > 0;
	int short_links = 2 * r->sc[src].links < r->pb->bound_num;
	fnn_genome_copy(r->pb, &r->g[buf], &r->g[src]);
	int times = 1 + sm_rng_below(&rng, r->gp->max_mutations);
	for (int k = 0; k < times; k++) {
		int op = sm_rng_below(&rng, 10);
		if (guided && op < 5)
			fnn_ga_mutate_guided(r->pb, &r->g[buf], bad, 0, &rng);
		else if (!guided && r->pb->w && op < 4)
			fnn_ga_mutate_pattern(r->pb, &r->g[buf], &rng);
		else if (short_links && op < 2)
			fnn_ga_mutate_ports(r->pb, &r->g[buf], &rng);
		else if (op < 8)
			fnn_ga_mutate_nic(r->pb, &r->g[buf], &rng);
		else
			fnn_ga_mutate_pc(r->pb, &r->g[buf], &rng);
	}
	/* far from connected: a short descent, one improving exchange per
	 * FNN_GA_DESCENT_PER disconnected pairs, at most FNN_GA_DESCENT */
	int extra = guided ? (int)(r->sc[src].disc / FNN_GA_DESCENT_PER) : 0;
	for (int k = 0; k < extra && k < FNN_GA_DESCENT; k++)
		fnn_ga_mutate_guided(r->pb, &r->g[buf], bad, 1, &rng);
	/* nearly connected: the last pairs need exchanges that break others first, so
	 * follow a guided exchange with up to three aimed at the pairs it broke */
	evaluate(r, buf);
	for (int k = 0; guided && r->sc[src].disc <= 8 && k < 3; k++) {
		if (r->sc[buf].disc < r->sc[src].disc)
			break;
		fnn_ga_mutate_guided(r->pb, &r->g[buf], &r->bad[(size_t)buf * r->pb->npcs], 0, &rng);
		evaluate(r, buf);
	}
}

static void run_job(struct run *r, int t)
{
	if (r->job == JOB_CROSS)
		for (int i = t; i < r->cross; i += r->nthreads)
			make_cross(r, i);
	else if (r->job == JOB_MUTATE)
		for (int i = t; i < r->n - r->keep - r->cross; i += r->nthreads)
			make_mutant(r, i);
}

struct worker_arg {
	struct run *r;
	int t;
};

static void *worker(void *p)
{
	struct worker_arg *wa = p;
	for (;;) {
		pthread_barrier_wait(&wa->r->start);
		if (wa->r->job == JOB_QUIT)
			break;
		run_job(wa->r, wa->t);
		pthread_barrier_wait(&wa->r->done);
	}
	free(wa);
	return NULL;
}

static void dispatch(struct run *r, enum job job)
{
	r->job = job;
	if (r->nthreads > 1)
		pthread_barrier_wait(&r->start);
	if (job == JOB_QUIT)
		return;
	run_job(r, 0);
	if (r->nthreads > 1)
		pthread_barrier_wait(&r->done);
}

static int cmp_rank(const void *x, const void *y, void *arg)
{
	const struct fnn_score *sc = arg;
	int a = *(const int *)x, b = *(const int *)y;
	if (fnn_score_better(&sc[a], &sc[b]))
		return -1;
	if (fnn_score_better(&sc[b], &sc[a]))
		return 1;
	return a - b;
}

static void rank(struct run *r)
{
	qsort_r(r->order, r->n, sizeof(int), cmp_rank, r->sc);
}

/* The last FUDGE kept designs trade places with random designs that would not be kept. */
static void fudge(struct run *r)
{
	uint64_t rng = child_seed(r, 7, 0);
	for (int k = 0; k < r->gp->fudge && r->keep - 1 - k > 0 && r->n > r->keep; k++) {
		int a = r->keep - 1 - k, b = r->keep + sm_rng_below(&rng, r->n - r->keep);
		int t = r->order[a];
		r->order[a] = r->order[b];
		r->order[b] = t;
	}
}

static void run_free(struct run *r)
{
	if (r->nthreads > 1 && r->tid) {
		dispatch(r, JOB_QUIT);
		for (int t = 1; t < r->nthreads; t++)
			pthread_join(r->tid[t], NULL);
		pthread_barrier_destroy(&r->start);
		pthread_barrier_destroy(&r->done);
	}
	for (int i = 0; r->g && i < r->n; i++)
		fnn_genome_free(&r->g[i]);
	free(r->g);
	free(r->sc);
	free(r->bad);
	free(r->order);
	free(r->tid);
}

static int run_init(struct run *r, const struct fnn_gaprob *pb, const struct fnn_ga_params *gp,
		    int threads)
{
	memset(r, 0, sizeof(*r));
	r->pb = pb;
	r->gp = gp;
	r->n = gp->population < 4 ? 4 : gp->population;
	r->keep = gp->keep < 2 ? 2 : (gp->keep > r->n / 2 ? r->n / 2 : gp->keep);
	r->cross = gp->cross < 0 ? 0 : gp->cross;
	if (r->cross > r->n - r->keep - 1)
		r->cross = r->n - r->keep - 1;
	r->g = calloc(r->n, sizeof(*r->g));
	r->sc = calloc(r->n, sizeof(*r->sc));
	r->bad = calloc((size_t)r->n * (pb->npcs ? pb->npcs : 1), sizeof(uint16_t));
	r->order = malloc((size_t)r->n * sizeof(int));
	if (!r->g || !r->sc || !r->bad || !r->order)
		return -ENOMEM;
	for (int i = 0; i < r->n; i++) {
		if (fnn_genome_alloc(pb, &r->g[i]))
			return -ENOMEM;
		r->order[i] = i;
	}
	r->nthreads = threads < 1 ? 1 : threads;
	if (r->nthreads == 1)
		return 0;
	r->tid = calloc(r->nthreads, sizeof(pthread_t));
	if (!r->tid)
		return -ENOMEM;
	pthread_barrier_init(&r->start, NULL, r->nthreads);
	pthread_barrier_init(&r->done, NULL, r->nthreads);
	for (int t = 1; t < r->nthreads; t++) {
		struct worker_arg *wa = malloc(sizeof(*wa));
		if (!wa)
			abort(); /* the barriers expect every thread */
		wa->r = r;
		wa->t = t;
		if (pthread_create(&r->tid[t], NULL, worker, wa))
			abort();
	}
	return 0;
}

/* Seed the population with the construction, each but the first randomly mutated. */
static void seed_population(struct run *r)
{
	for (int i = 0; i < r->n; i++) {
		uint64_t rng = child_seed(r, 9, i);
		fnn_genome_set(r->pb, &r->g[i], r->pb->init);
		int times = i ? r->pb->nslots : 0;
		for (int k = 0; k < times; k++)
			fnn_ga_mutate_nic(r->pb, &r->g[i], &rng);
		evaluate(r, i);
	}
	rank(r);
}

static void generation(struct run *r)
{
	fudge(r);
	dispatch(r, JOB_CROSS);
	dispatch(r, JOB_MUTATE);
	r->gen++;
	rank(r);
}

/* ------------------------------------------------------------ the search ----------- */

struct search {
	const struct fnn_ga_params *gp;
	struct fnn_ga_result *res;
	double t0;
	struct fnn_score best;
	int have_best;
	int64_t bound_links; /* links when every pair sum is at the bound: bound_num / 2 */
};

static int out_of_time(const struct search *s)
{
	return s->gp->seconds > 0 && fnn_now() - s->t0 >= s->gp->seconds;
}

static void report(struct search *s, const struct run *r, const char *what)
{
	const struct fnn_score *b = &r->sc[r->order[0]];
	double pairs = (double)r->pb->npcs * (r->pb->npcs - 1) / 2;
	double secs = fnn_now() - s->t0;
	if (s->gp->verbose)
		fprintf(stderr, "fnn: %s gen %ld  disconnected %lld  links/pair %.4f (bound %.4f)  "
			"pattern %.1f  %.2fs\n", what, r->gen, (long long)b->disc,
			b->links / pairs, r->pb->bound_num / (2 * pairs), b->pattern, secs);
	if (s->gp->on_best && r->phase == 0)
		s->gp->on_best(s->gp->arg, r->gen, secs, b->disc, b->links / pairs, b->pattern);
}

/* Try scaled-down sizes 4, 6, 8, ... PCs until one is connected; returns that size, its
 * run, problem and GA view left in *sr, *sp and *spb for scaling up; or 0. */
static int scaled_phase(struct search *s, const struct fnn_problem *p, struct run *sr,
			struct fnn_gaprob *spb, struct fnn_problem *sp)
{
	const struct fnn_ga_params *gp = s->gp;
	/* the scaled-down phase is a head start: at most a fifth of the time limit */
	double until = gp->seconds > 0 ? s->t0 + gp->seconds / 5 : 0;
	for (int spcs = 4; spcs <= p->npcs / 4 || spcs == 4; spcs += 2) {
		if (out_of_time(s) || (until > 0 && fnn_now() >= until))
			return 0;
		if (fnn_problem_scaled(sp, p, spcs))
			return 0;
		if (fnn_gaprob_init(spb, sp, NULL)) {
			fnn_problem_free(sp);
			continue;
		}
		if (run_init(sr, spb, gp, spcs >= 64 ? gp->threads : 1)) {
			run_free(sr);
			fnn_gaprob_free(spb);
			fnn_problem_free(sp);
			return 0;
		}
		sr->phase = spcs;
		seed_population(sr);
		long solved_at = -1;
		while (sr->gen < gp->scaled_generations && !out_of_time(s) &&
		       !(until > 0 && fnn_now() >= until)) {
			if (sr->sc[sr->order[0]].disc == 0 && solved_at < 0)
				solved_at = sr->gen;
			if (solved_at >= 0 && sr->gen >= solved_at + 20)
				break;
			generation(sr);
		}
		if (solved_at >= 0 || sr->sc[sr->order[0]].disc == 0) {
			report(s, sr, "scaled");
			return spcs;
		}
		run_free(sr);
		fnn_gaprob_free(spb);
		fnn_problem_free(sp);
	}
	return 0;
}

static void full_search(struct search *s, struct run *r)
{
	const struct fnn_ga_params *gp = s->gp;
	for (;;) {
		const struct fnn_score *b = &r->sc[r->order[0]];
		if (!s->have_best || fnn_score_better(b, &s->best)) {
			s->best = *b;
			s->have_best = 1;
			report(s, r, "best");
		}
		int at_bound = b->disc == 0 && 2 * b->links == r->pb->bound_num;
		if (at_bound && s->res->seconds_to_bound < 0)
			s->res->seconds_to_bound = fnn_now() - s->t0;
		if (at_bound && (gp->stop_at_bound || !r->pb->w)) {
			s->res->optimal = 1;
			break;
		}
		if ((gp->generations > 0 && r->gen >= gp->generations) || out_of_time(s))
			break;
		generation(r);
		if (gp->verbose && r->gen % 500 == 0)
			report(s, r, "at");
	}
}

int fnn_design_search(const struct fnn_problem *p, const struct fnn_weights *w,
		      const struct fnn_ga_params *gp, struct fnn_design *out,
		      struct fnn_ga_result *res)
{
	struct search s = { .gp = gp, .res = res, .t0 = fnn_now() };
	struct fnn_gaprob pb, spb;
	struct fnn_problem sp;
	struct run r, sr;
	int rc;

	memset(res, 0, sizeof(*res));
	res->seconds_to_bound = -1;
	if (w && w->npcs != p->npcs)
		return -EINVAL;
	rc = fnn_gaprob_init(&pb, p, w && w->npatterns ? w->w : NULL);
	if (rc)
		return rc;
	rc = run_init(&r, &pb, gp, gp->threads);
	if (rc)
		goto out;
	int spcs = gp->scaled && p->npcs >= 8 ? scaled_phase(&s, p, &sr, &spb, &sp) : 0;
	if (spcs) {
		for (int i = 0; i < r.n; i++) {
			uint64_t rng = child_seed(&r, 11, i);
			fnn_ga_scale_up(&pb, &r.g[i], &spb, &sr.g[sr.order[i % sr.n]], &rng);
			evaluate(&r, i);
		}
		rank(&r);
		run_free(&sr);
		fnn_gaprob_free(&spb);
		fnn_problem_free(&sp);
	} else {
		seed_population(&r);
	}
	res->scaled_pcs = spcs;
	full_search(&s, &r);

	const struct fnn_score *b = &r.sc[r.order[0]];
	double pairs = (double)p->npcs * (p->npcs - 1) / 2;
	res->generations = r.gen;
	res->seconds = fnn_now() - s.t0;
	res->disconnected = b->disc;
	res->avg_links = b->links / pairs;
	res->bound = pb.bound_num / (2 * pairs);
	res->pattern = b->pattern;
	report(&s, &r, "final");
	rc = fnn_genome_design(&pb, &r.g[r.order[0]], p, out);
out:
	run_free(&r);
	fnn_gaprob_free(&pb);
	return rc;
}
