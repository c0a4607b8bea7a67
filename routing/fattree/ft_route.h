/*
 * ft_route.h - the routing engine interface, the forwarding tables engines fill in,
 * and the checks and tools that read those tables.
 *
 * Every engine (dmodk.c, dmodc.c, ft_minhop.c) is one file exporting one
 * struct ft_engine; ft_engine_find() selects it by name, as OpenSM does with -R.
 */
#ifndef FT_ROUTE_H
#define FT_ROUTE_H

#include "ft_topo.h"

/* Forwarding tables: lft[s * nnodes + d] is the output port of switch s towards node d
 * (FT_NO_PATH if none). swlft[s * nsw + t] is the port towards switch t (0 for t == s),
 * filled by ft_route_switches() for the LFT dump. */
struct ft_routes {
	int nsw, nnodes;
	uint8_t *lft;
	uint8_t *swlft;
	/* Dmodc keeps, for every switch s and leaf l, the set of output ports that lead
	 * closer to l (the paper's P_{s,d}): alt[(s * nleaves + l) * alt_words ...] bits. */
	int nleaves, alt_words;
	uint64_t *alt;
	double seconds;         /* engine wall time */
	double cpu_seconds;     /* engine CPU time, all threads (load-independent) */
};

struct ft_route_opts {
	int threads;            /* worker threads (>= 1) */
	int updown_cost;        /* Dmodc: compare down-path costs for down groups (3.2 variant) */
	int keep_alternatives;  /* Dmodc: fill routes->alt */
	int spread;             /* Dmodc: keep complete-fabric choices, spread displaced nodes */
};

struct ft_engine {
	const char *name;
	const char *help;
	int (*route)(const struct ft_topo *t, const struct ft_route_opts *o, struct ft_routes *r,
		     char *err, size_t errlen);
};

extern const struct ft_engine ft_engine_dmodk;
extern const struct ft_engine ft_engine_dmodc;
extern const struct ft_engine ft_engine_minhop;

const struct ft_engine *ft_engine_find(const char *name);
const struct ft_engine *const *ft_engine_list(void);   /* NULL-terminated */

/* Run an engine: allocates r, times it. */
int ft_route(const struct ft_engine *e, const struct ft_topo *t, const struct ft_route_opts *o,
	     struct ft_routes *r, char *err, size_t errlen);
int ft_routes_alloc(struct ft_routes *r, const struct ft_topo *t);
void ft_routes_free(struct ft_routes *r);
/* Routes towards switch LIDs (up-down minimal, one pass per switch). */
int ft_route_switches(const struct ft_topo *t, struct ft_routes *r, int threads);

/* Parallel loop over [0, n) with dynamic scheduling. */
void ft_parallel_for(int n, int threads, void (*fn)(void *ctx, int i), void *ctx);
/* Same, telling fn which worker (0 .. threads-1) runs it. */
void ft_parallel_for_w(int n, int threads, void (*fn)(void *ctx, int i, int worker), void *ctx);
double ft_now(void);
double ft_cpu_now(void);   /* process CPU time */

/* ---- Dmodc internals, exposed for tests and for re-routing (dmodc.c) ---- */
#define FT_INF 255
struct dmodc_state {
	int nsw, nleaves;
	uint8_t *cost;          /* [nsw * nleaves] c_{s,l}, FT_INF if none */
	uint8_t *dcost;         /* [nsw * nleaves] down-only cost (updown_cost variant), or NULL */
	uint64_t *div;          /* [nsw] divider Pi_s */
};
int dmodc_preprocess(const struct ft_topo *t, const struct ft_route_opts *o, struct dmodc_state *st);
void dmodc_state_free(struct dmodc_state *st);
/* Equations (3) and (4): index of the group in C and of the port in that group. */
static inline void dmodc_select(uint64_t d, uint64_t div, int nc, int ng, int *gi, int *pi)
{
	uint64_t q = d / div;
	*gi = (int)(q % (uint64_t)nc);
	*pi = (int)((q / (uint64_t)nc) % (uint64_t)ng);
}

/* ---- checks (ft_check.c) ---- */
struct ft_check {
	long unreachable_nodes; /* nodes outside the largest connected part of the fabric */
	long invalid_pairs;     /* ordered node pairs with no route (or a broken one) */
	long updown_unreachable;/* node pairs whose leaves have no up-down path (paper's 4.1 test) */
	long nonminimal;        /* leaf-to-node routes longer than the shortest up-down path */
	long updown_violations; /* entries taking an up port after a down hop */
	long loops;             /* routes that loop */
	int deadlock;           /* 1 if the channel dependency graph has a cycle */
	long cdg_channels, cdg_edges;
	int max_hops;
};
/* Leaf-pair validity: every pair of leaves has a finite up-down cost. */
long ft_check_leaf_pairs(const struct ft_topo *t, const struct dmodc_state *st);
/* Full check of tables: walk, up-down minimality against Dmodc costs, CDG cycle. */
int ft_check_routes(const struct ft_topo *t, const struct ft_routes *r, int threads, struct ft_check *c);
long ft_unreachable_nodes(const struct ft_topo *t);

/* ---- quality (ft_quality.c) ---- */
enum ft_pattern { FT_PAT_SHIFT, FT_PAT_ALL2ALL, FT_PAT_RANDPERM, FT_PAT_FILE };
struct ft_quality {
	const char *pattern;
	long instances;         /* permutations evaluated */
	long routes, invalid;   /* routed pairs, pairs with no path */
	int max_load;           /* max routes per link over all instances */
	double mean_max_load;   /* mean over instances of the max routes per link */
	double mean_load;       /* mean routes per used link */
	long hist[9];           /* channels by max load: 1,2,3,4,5-8,9-16,17-32,33-64,>64 */
	double mean_hops;
	int max_hops;
};
struct ft_pairs { long n; int *src, *dst; };
/* shifts: evaluate every shift if n_inst <= 0, else n_inst evenly spaced ones.
 * Only switch-to-switch channels are counted (node cables carry 1 per permutation). */
int ft_quality_shift(const struct ft_topo *t, const struct ft_routes *r, long n_inst, int threads,
		     struct ft_quality *q);
int ft_quality_all2all(const struct ft_topo *t, const struct ft_routes *r, int threads, struct ft_quality *q);
int ft_quality_randperm(const struct ft_topo *t, const struct ft_routes *r, long n_inst, uint64_t seed,
			int threads, struct ft_quality *q);
int ft_quality_pairs(const struct ft_topo *t, const struct ft_routes *r, const struct ft_pairs *p,
		     struct ft_quality *q);
int ft_pairs_read(const struct ft_topo *t, FILE *f, const char *fname, struct ft_pairs *p, char *err,
		  size_t errlen);
void ft_pairs_free(struct ft_pairs *p);
void ft_quality_print(FILE *f, const struct ft_quality *q);

/* ---- LFT dump (ft_lft.c), OpenSM's opensm-lfts.dump format ---- */
struct ft_lids {
	int nsw, nnodes;
	uint16_t *sw_lid;       /* [nsw] */
	uint16_t *node_lid;     /* [nnodes] */
	int max_lid;
};
int ft_lids_default(const struct ft_topo *t, struct ft_lids *l);
/* LIDs from an OpenSM guid2lid cache file or an opensm-lfts.dump. */
int ft_lids_read(const struct ft_topo *t, FILE *f, const char *fname, struct ft_lids *l, char *err,
		 size_t errlen);
void ft_lids_free(struct ft_lids *l);
int ft_lft_write(FILE *f, const struct ft_topo *t, const struct ft_routes *r, const struct ft_lids *l);
/* Read a dump (ours or OpenSM's) back into routes for the same topology. */
int ft_lft_read(const struct ft_topo *t, FILE *f, const char *fname, struct ft_routes *r, char *err,
		size_t errlen);

/* ---- minimal-change re-routing (ft_reroute.c) ---- */
/* New routes for the degraded fabric t: keep old[s][d] wherever it is still among Dmodc's
 * alternatives (valid and minimal), else take Dmodc's choice. Returns entries changed. */
long ft_reroute_minimal(const struct ft_topo *t, const struct ft_routes *old, const struct ft_route_opts *o,
			struct ft_routes *out, char *err, size_t errlen);

#endif
