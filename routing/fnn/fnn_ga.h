/*
 * fnn_ga.h - internals of the genetic search, exposed for the property tests.
 *
 * A genome is the paper's wiring: every switch port (slot) holds one PC.  Real PCs hold
 * as many slots as they have NICs, on distinct switches; dummy PCs (one NIC each) absorb
 * unused real ports; dummy switches hold the NICs left unplugged.  Each PC also has a
 * bitmask of its switches, so shared neighbourhoods are an AND and a popcount.  Every
 * operator below exchanges closed sets of connections, so the NIC count of every PC and
 * the port count of every switch never change.
 */
#ifndef FNN_GA_H
#define FNN_GA_H

#include "fnn.h"

#define FNN_GA_MAXWORDS 17     /* mask words the guided mutation handles: 1088 switches */
#define FNN_GA_GUIDED_TRIES 16 /* candidate exchanges a guided mutation compares */
#ifndef FNN_GA_DESCENT
#define FNN_GA_DESCENT 128     /* most improving exchanges a mutant far from connected takes */
#endif
#ifndef FNN_GA_DESCENT_PER
#define FNN_GA_DESCENT_PER 32  /* ... one per this many disconnected pairs */
#endif

struct fnn_gaprob {
	int npcs;          /* real PCs: 0 .. npcs-1 */
	int nall;          /* real + dummy PCs */
	int nsw;           /* real switches: 0 .. nsw-1 */
	int nswall;        /* real + dummy switches */
	int words;         /* mask words per PC */
	int nslots;        /* switch ports, real and dummy */
	int *sw_first;     /* nswall + 1: slots of switch s are [sw_first[s], sw_first[s+1]) */
	int16_t *slot_sw;  /* nslots */
	int *nics;         /* nall */
	uint64_t *realmask;/* words: bits of the real switches */
	const float *w;    /* npcs * npcs pattern weights, or NULL (connectivity only) */
	uint16_t *init;    /* nslots: the initial construction */
	int *target;       /* nsw: real NICs per switch in the bound's profile */
	int64_t bound_num; /* links bound numerator: sum of u(u-1) over switches */
};

struct fnn_genome {
	uint16_t *occ;     /* nslots: the PC in each slot */
	uint64_t *mask;    /* nall * words */
};

/* Fitness, compared lexicographically: fewer disconnected pairs, more links, more
 * weighted pattern links. */
struct fnn_score {
	int64_t disc;
	int64_t links;
	double pattern;
};

/* Build the GA's view of a problem (w may be NULL) and its initial construction. */
int fnn_gaprob_init(struct fnn_gaprob *pb, const struct fnn_problem *p, const float *w);
void fnn_gaprob_free(struct fnn_gaprob *pb);
/* The scaled-down problem: PCs and port counts divided by npcs / small, NICs kept. */
int fnn_problem_scaled(struct fnn_problem *small, const struct fnn_problem *p, int spcs);

int fnn_genome_alloc(const struct fnn_gaprob *pb, struct fnn_genome *g);
void fnn_genome_free(struct fnn_genome *g);
void fnn_genome_copy(const struct fnn_gaprob *pb, struct fnn_genome *dst,
		     const struct fnn_genome *src);
/* Set g to the occupancy occ (masks derived). */
void fnn_genome_set(const struct fnn_gaprob *pb, struct fnn_genome *g, const uint16_t *occ);
/* 0 if every PC holds its NIC count on distinct switches and the masks agree, else -1. */
int fnn_genome_check(const struct fnn_gaprob *pb, const struct fnn_genome *g);

/* Evaluate; bad (npcs entries, may be NULL) receives disconnected peers per PC. */
void fnn_ga_eval(const struct fnn_gaprob *pb, const struct fnn_genome *g,
		 struct fnn_score *sc, uint16_t *bad);
int fnn_score_better(const struct fnn_score *a, const struct fnn_score *b);

/* Operators; each returns 1 if it changed g, 0 if it found nothing to do. */
int fnn_ga_mutate_nic(const struct fnn_gaprob *pb, struct fnn_genome *g, uint64_t *rng);
int fnn_ga_mutate_pc(const struct fnn_gaprob *pb, struct fnn_genome *g, uint64_t *rng);
/* A NIC swap that moves a real NIC onto a free port of a real switch at least as full
 * as the one it leaves (or off a dummy switch): raises links toward the bound. */
int fnn_ga_mutate_ports(const struct fnn_gaprob *pb, struct fnn_genome *g, uint64_t *rng);
/* A NIC swap aimed at a pair marked disconnected by bad[] (from fnn_ga_eval): the best
 * of FNN_GA_GUIDED_TRIES exchanges by change in disconnected pairs; with only_better,
 * made only if that change is negative. */
int fnn_ga_mutate_guided(const struct fnn_gaprob *pb, struct fnn_genome *g,
			 const uint16_t *bad, int only_better, uint64_t *rng);
/* With pattern weights: the best of FNN_GA_GUIDED_TRIES exchanges that bring a PC onto
 * a switch of a PC it is weighted with, made only if no pair is disconnected by it and
 * the pattern score rises. */
int fnn_ga_mutate_pattern(const struct fnn_gaprob *pb, struct fnn_genome *g, uint64_t *rng);
/* child := a, then a random number of PCs forced to b's connections by exchanges. */
int fnn_ga_crossover(const struct fnn_gaprob *pb, struct fnn_genome *child,
		     const struct fnn_genome *a, const struct fnn_genome *b, uint64_t *rng);
/* Scale a genome of the scaled-down problem up to the full one.  0, or -1 if it
 * could not be placed (g then holds the initial construction). */
int fnn_ga_scale_up(const struct fnn_gaprob *full, struct fnn_genome *g,
		    const struct fnn_gaprob *small, const struct fnn_genome *sg, uint64_t *rng);

/* The real part of g as a design (ports from the problem). */
int fnn_genome_design(const struct fnn_gaprob *pb, const struct fnn_genome *g,
		      const struct fnn_problem *p, struct fnn_design *d);

#endif /* FNN_GA_H */
