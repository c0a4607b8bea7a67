/*
 * ft_route.c - engine registry, running an engine, forwarding-table storage,
 * the worker pool and the routes towards switch LIDs shared by every engine.
 */
#include "ft_route.h"
#include "common/sm_err.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct ft_engine *const engines[] = {
	&ft_engine_dmodc, &ft_engine_dmodk, &ft_engine_minhop, NULL,
};

const struct ft_engine *const *ft_engine_list(void)
{
	return engines;
}

const struct ft_engine *ft_engine_find(const char *name)
{
	for (int i = 0; engines[i]; i++)
		if (!strcmp(engines[i]->name, name))
			return engines[i];
	return NULL;
}

double ft_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Engines fill every entry of every row (in parallel, which also spreads the page faults
 * of a large table over the workers), so only tables read from files are pre-filled. */
static int routes_alloc(struct ft_routes *r, const struct ft_topo *t, int fill)
{
	memset(r, 0, sizeof(*r));
	r->nsw = t->nsw;
	r->nnodes = t->nnodes;
	r->lft = malloc((size_t)t->nsw * t->nnodes + 1);
	if (!r->lft)
		return -ENOMEM;
	if (fill)
		memset(r->lft, FT_NO_PATH, (size_t)t->nsw * t->nnodes);
	return 0;
}

double ft_cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int ft_routes_alloc(struct ft_routes *r, const struct ft_topo *t)
{
	return routes_alloc(r, t, 1);
}

void ft_routes_free(struct ft_routes *r)
{
	free(r->lft);
	free(r->swlft);
	free(r->alt);
	memset(r, 0, sizeof(*r));
}

int ft_route(const struct ft_engine *e, const struct ft_topo *t, const struct ft_route_opts *o,
	     struct ft_routes *r, char *err, size_t errlen)
{
	if (routes_alloc(r, t, 0))
		return sm_err(err, errlen, -ENOMEM, "%s: out of memory for %d x %d tables", e->name,
			      t->nsw, t->nnodes);
	double t0 = ft_now(), c0 = ft_cpu_now();
	int rc = e->route(t, o, r, err, errlen);
	r->seconds = ft_now() - t0;
	r->cpu_seconds = ft_cpu_now() - c0;
	if (rc)
		ft_routes_free(r);
	return rc;
}

/* ---- worker pool ---- */

struct pf {
	atomic_int next;
	atomic_int wid;
	int n, chunk;
	void (*fn)(void *, int);
	void (*fnw)(void *, int, int);
	void *ctx;
};

static void *pf_worker(void *arg)
{
	struct pf *p = arg;
	int w = atomic_fetch_add(&p->wid, 1);
	for (;;) {
		int i = atomic_fetch_add(&p->next, p->chunk);
		if (i >= p->n)
			break;
		int e = i + p->chunk < p->n ? i + p->chunk : p->n;
		for (; i < e; i++) {
			if (p->fnw)
				p->fnw(p->ctx, i, w);
			else
				p->fn(p->ctx, i);
		}
	}
	return NULL;
}

static void pf_run(struct pf *p, int threads)
{
	if (threads > 256)
		threads = 256;
	atomic_init(&p->next, 0);
	atomic_init(&p->wid, 0);
	p->chunk = p->n / (threads * 16);
	if (p->chunk < 1)
		p->chunk = 1;
	pthread_t tid[256];
	int started = 0;
	for (int i = 1; i < threads; i++)
		if (!pthread_create(&tid[started], NULL, pf_worker, p))
			started++;
	pf_worker(p);
	for (int i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
}

void ft_parallel_for(int n, int threads, void (*fn)(void *ctx, int i), void *ctx)
{
	if (threads <= 1 || n <= 1) {
		for (int i = 0; i < n; i++)
			fn(ctx, i);
		return;
	}
	struct pf p = { .n = n, .fn = fn, .ctx = ctx };
	pf_run(&p, threads);
}

void ft_parallel_for_w(int n, int threads, void (*fn)(void *ctx, int i, int worker), void *ctx)
{
	if (threads <= 1 || n <= 1) {
		for (int i = 0; i < n; i++)
			fn(ctx, i, 0);
		return;
	}
	struct pf p = { .n = n, .fnw = fn, .ctx = ctx };
	pf_run(&p, threads);
}

/* ---- routes towards switches ---- */

struct swctx {
	const struct ft_topo *t;
	struct ft_routes *r;
	int *order;             /* switches by ascending rank */
	int nordered;
};

static void route_to_switch(void *ctx, int target)
{
	struct swctx *c = ctx;
	const struct ft_topo *t = c->t;
	int S = t->nsw;
	uint8_t *cost = malloc((size_t)S);
	if (!cost)
		return;
	memset(cost, FT_INF, (size_t)S);
	cost[target] = 0;
	for (int pass = 0; pass < 2; pass++) {
		for (int k = 0; k < c->nordered; k++) {
			int s = c->order[pass ? c->nordered - 1 - k : k], rs = t->sw[s].rank;
			for (int g = t->grp_off[s]; g < t->grp_off[s + 1]; g++) {
				int n = (int)t->grp[g].peer, rn = t->sw[n].rank;
				if (rn < 0 || rn != (pass ? rs + 1 : rs - 1) || cost[n] == FT_INF)
					continue;
				if (cost[n] + 1 < cost[s])
					cost[s] = (uint8_t)(cost[n] + 1);
			}
		}
	}
	for (int s = 0; s < S; s++) {
		uint8_t *e = &c->r->swlft[(size_t)s * S + target];
		if (s == target) {
			*e = 0;
			continue;
		}
		*e = FT_NO_PATH;
		if (cost[s] == FT_INF)
			continue;
		int C[FT_MAX_PORTS + 1], nc = 0;
		for (int g = t->grp_off[s]; g < t->grp_off[s + 1]; g++)
			if (cost[t->grp[g].peer] < cost[s])
				C[nc++] = g;
		if (!nc)
			continue;
		const struct ft_group *g = &t->grp[C[target % nc]];
		*e = t->gport[g->first + (uint32_t)(target / nc) % g->nports];
	}
	free(cost);
}

int ft_route_switches(const struct ft_topo *t, struct ft_routes *r, int threads)
{
	free(r->swlft);
	r->swlft = malloc((size_t)t->nsw * t->nsw + 1);
	struct swctx c = { .t = t, .r = r };
	c.order = malloc(sizeof(int) * (size_t)(t->nsw + 1));
	if (!r->swlft || !c.order) {
		free(c.order);
		return -ENOMEM;
	}
	for (int rk = 0; rk <= t->maxrank; rk++)
		for (int s = 0; s < t->nsw; s++)
			if (t->sw[s].rank == rk)
				c.order[c.nordered++] = s;
	ft_parallel_for(t->nsw, threads, route_to_switch, &c);
	free(c.order);
	return 0;
}
