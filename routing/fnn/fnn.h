/*
 * fnn.h - Flat Neighborhood Network designer, analysis and translators.
 *
 * A Flat Neighborhood Network (FNN) gives every pair of hosts (PCs) a single-switch path
 * by giving each PC several NICs on different switches.  This library follows Dietz and
 * Mattox, "Compiler Techniques for Flat Neighborhood Networks":
 *
 *   design   a genetic search (GA) over per-PC switch bitmasks, with a scaled-down first
 *            phase that solves basic connectivity, then the full weighted evaluation
 *   table    the paper's text table, one line per switch: "switch: pc pc pc ..."
 *   analyze  average links per pair against the tight upper bound, minimum per pair,
 *            pairs without a common switch, expected bisection bandwidth, pattern scores
 *   labels   printable HTML wiring labels, one per PC, a colour patch per NIC
 *   routes   basic routing (one path per pair) as `ip` scripts and a machine table
 *   advanced per-pair NIC tuples packed into one integer (shift/mask accessors)
 *   stripe   for the transports: (me, peer) -> (local NIC, remote NIC) pairs, best first
 *
 * Numbering: PCs, switches and NICs are 0-based.  NIC k of a PC is the one connected to
 * the PC's k-th lowest-numbered switch (the paper's convention).  In packed tuples a NIC
 * field holds nic+1, with 0 meaning "not used".
 *
 * Errors are negative errno values; functions that parse take a `char *err, size_t errlen`
 * buffer that receives a message naming the line or field that was wrong.
 */
#ifndef FNN_H
#define FNN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define FNN_MAX_PCS 4096      /* real PCs in one design */
#define FNN_MAX_SWITCHES 1024 /* real switches in one design */
#define FNN_MAX_NICS 16       /* NICs in one PC */

/* ---------------------------------------------------------------- design table ------ */

/* A wired FNN: which PC has a NIC on which switch.  Masks are `words` uint64_t per PC. */
struct fnn_design {
	int npcs;
	int nswitches;
	int words;       /* uint64_t words per PC mask: (nswitches + 63) / 64 */
	uint64_t *mask;  /* npcs * words: bit s set iff the PC has a NIC on switch s */
	int *ports;      /* nswitches: port count of each switch (>= NICs plugged in) */
};

/* Allocate an empty design (no connections); ports default to npcs. 0 or -errno. */
int fnn_design_init(struct fnn_design *d, int npcs, int nswitches);
void fnn_design_free(struct fnn_design *d);
int fnn_design_copy(struct fnn_design *dst, const struct fnn_design *src);

/* Connect / query: PC pc has a NIC on switch sw. */
void fnn_design_set(struct fnn_design *d, int pc, int sw, int on);
int fnn_design_has(const struct fnn_design *d, int pc, int sw);
int fnn_design_nics(const struct fnn_design *d, int pc);  /* NICs the PC uses */
int fnn_design_used(const struct fnn_design *d, int sw);  /* NICs on the switch */
int fnn_design_shared(const struct fnn_design *d, int a, int b); /* common switches */
/* The switch PC pc's NIC `nic` connects to, or -1; and the inverse (-1 if none). */
int fnn_nic_switch(const struct fnn_design *d, int pc, int nic);
int fnn_switch_nic(const struct fnn_design *d, int pc, int sw);

/*
 * Parse the text table.  Lines "S: p p p ..." (S and p decimal), '#' starts a comment,
 * blank lines are skipped.  A switch may appear once; a PC once per switch.  PC count is
 * the largest PC + 1 unless npcs > 0 is given (then a larger PC is an error).  Switch
 * port counts are set to the number of PCs listed.  0 or -EINVAL with a message.
 */
int fnn_table_parse(struct fnn_design *d, const char *text, size_t len, int npcs,
		    char *err, size_t errlen);
int fnn_table_load(struct fnn_design *d, const char *path, int npcs, char *err,
		   size_t errlen);
/* Print the table, one line per switch with PCs in increasing order.  0 or -errno. */
int fnn_table_print(const struct fnn_design *d, FILE *out);

/* ---------------------------------------------------------------- problem ----------- */

/* Problem: PCs with a NIC count each, switches with a port count each. */
struct fnn_problem {
	int npcs;
	int nswitches;
	int *nics;   /* npcs */
	int *ports;  /* nswitches */
};

/*
 * Build a problem from strings: nics "4" (all PCs) or "4,4,3,..." (one per PC);
 * switches "8x31,8" (count x ports, or ports alone).  0 or -EINVAL with a message.
 */
int fnn_problem_init(struct fnn_problem *p, int npcs, const char *nics,
		     const char *switches, char *err, size_t errlen);
void fnn_problem_free(struct fnn_problem *p);
/* The problem a design solves: NIC counts from the design, ports from d->ports. */
int fnn_problem_from_design(struct fnn_problem *p, const struct fnn_design *d);

/* ---------------------------------------------------------------- patterns ---------- */

/* Symmetric pair weights over npcs PCs; w[a * npcs + b], diagonal unused. */
struct fnn_weights {
	int npcs;
	int npatterns;
	float *w;                 /* combined weights */
	struct fnn_pattern_desc {
		char name[64];
		float *w;         /* this pattern alone */
	} *pat;
};

int fnn_weights_init(struct fnn_weights *w, int npcs);
void fnn_weights_free(struct fnn_weights *w);
/*
 * Add a pattern by spec: "grid:RxC" (rows and columns of a logical R x C grid, row-major
 * PC numbering, as KLAT2's 8x8), "row:RxC", "col:RxC", "ring", "all", or "file:PATH"
 * (lines "a b weight", '#' comments).  An optional "@W" suffix scales the pattern
 * ("grid:8x8@2").  0 or -errno with a message.
 */
int fnn_weights_add(struct fnn_weights *w, const char *spec, char *err, size_t errlen);

/* ---------------------------------------------------------------- analysis ---------- */

/*
 * The paper's tight upper bound on average links per PC pair:
 *   max sum_s u_s (u_s - 1)  /  (P (P - 1))
 * over used-port counts u_s <= min(ports_s, P) with sum u_s <= total NICs; the maximum
 * fills the widest switches first.  Also returns the numerator and denominator.
 */
double fnn_bound(const struct fnn_problem *p, int64_t *num, int64_t *den);

struct fnn_pattern_score {
	char name[64];
	double weight;        /* sum of weights */
	double avg_links;     /* weighted average links per pair */
	int min_links;        /* over pairs with weight > 0 */
	int64_t disconnected; /* weighted pairs without a common switch */
};

struct fnn_analysis {
	int npcs, nswitches, nics;  /* real NICs plugged into switches */
	int64_t pairs;
	int64_t links;              /* sum over pairs of common switches */
	int64_t disconnected;       /* pairs with no common switch */
	double avg_links, bound;    /* links / pairs and the tight upper bound */
	int64_t bound_num, bound_den;
	int min_links, max_links;
	int64_t hist[FNN_MAX_NICS + 1];  /* pairs by common switches */
	double bisect_upper_mbps;   /* NICs x NIC bandwidth */
	double bisect_random_mbps;  /* avg links x 2 x bw x P/2, random permutation */
	double bisect_uplink_mbps;  /* the above plus an unfolded uplink switch */
	int npatterns;
	struct fnn_pattern_score *pattern;
};

/* Analyse d against problem p (NULL: the problem the design itself defines). */
int fnn_analyze(const struct fnn_design *d, const struct fnn_problem *p,
		const struct fnn_weights *w, double nic_mbps, double uplink_mbps,
		struct fnn_analysis *a);
void fnn_analysis_free(struct fnn_analysis *a);
void fnn_analysis_print(const struct fnn_analysis *a, FILE *out);

/* ---------------------------------------------------------------- designer (GA) ----- */

struct fnn_ga_params {
	uint64_t seed;
	int threads;          /* evaluation threads, >= 1 */
	int population;       /* designs per generation */
	int keep;             /* KEEP: best designs carried over */
	int cross;            /* CROSS: children by closed crossover */
	int fudge;            /* FUDGE: kept designs exchanged at random with others */
	int max_mutations;    /* mutations per mutated child: 1..max */
	long generations;     /* limit for the full search; 0 = none */
	double seconds;       /* time limit for the whole run; 0 = none */
	int scaled;           /* run the scaled-down connectivity phase first */
	long scaled_generations; /* per scaled-down size */
	int stop_at_bound;    /* with patterns too, stop once connected and at the bound
			       * (without patterns that is the proven optimum, always a stop) */
	int verbose;          /* progress on stderr */
	/* Called on every new best (may be NULL).  */
	void (*on_best)(void *arg, long gen, double secs, int64_t disconnected,
			double avg_links, double pattern);
	void *arg;
};

struct fnn_ga_result {
	long generations;     /* full-search generations run */
	double seconds;       /* total wall time */
	double seconds_to_bound; /* time when connected + at bound first held, or -1 */
	int scaled_pcs;       /* PCs of the scaled-down problem used, 0 if none */
	int64_t disconnected;
	double avg_links, bound, pattern;
	int optimal;          /* stopped on a proven optimum */
};

/* seed 1, 1 thread, population 160, KEEP 32, CROSS 48, FUDGE 4, 1..3 mutations,
 * 20000 generations, no time limit, scaled phase on (300 generations per size). */
void fnn_ga_defaults(struct fnn_ga_params *gp);
/*
 * Search; on success *out holds the best design (real PCs and switches only, ports from
 * p).  Progress on stderr if gp->verbose.  The same seed gives the same design for any
 * thread count.  w may be NULL (connectivity and links only).  0 or -errno.
 */
int fnn_design_search(const struct fnn_problem *p, const struct fnn_weights *w,
		      const struct fnn_ga_params *gp, struct fnn_design *out,
		      struct fnn_ga_result *res);

/* ---------------------------------------------------------------- addresses --------- */

struct fnn_nic_addr {
	int pc, nic;
	char ifname[16];
	char ip[16];          /* dotted IPv4 */
	char mac[18];         /* aa:bb:cc:dd:ee:ff */
};

struct fnn_addrmap {
	int npcs;
	int maxnics;
	struct fnn_nic_addr *nic; /* npcs * maxnics, pc == -1 where absent */
};

/* Lines "pc nic ifname ipv4 mac", '#' comments.  0 or -EINVAL with a message. */
int fnn_addrmap_parse(struct fnn_addrmap *m, const char *text, size_t len, char *err,
		      size_t errlen);
int fnn_addrmap_load(struct fnn_addrmap *m, const char *path, char *err, size_t errlen);
/* Default plan: NIC on switch s of PC p is 10.(s+1).((p+1)>>8).((p+1)&255)/16 on eth<nic>,
 * MAC 02:f0:<s>>8>:<s&255>:<(p+1)>>8>:<(p+1)&255>; -E2BIG past 254 switches. */
int fnn_addrmap_default(struct fnn_addrmap *m, const struct fnn_design *d);
int fnn_addrmap_print(const struct fnn_addrmap *m, FILE *out);
const struct fnn_nic_addr *fnn_addr(const struct fnn_addrmap *m, int pc, int nic);
void fnn_addrmap_free(struct fnn_addrmap *m);

/* ---------------------------------------------------------------- basic routing ----- */

/* One path per unordered pair: the switch, and each end's NIC on it. */
struct fnn_path {
	int16_t sw;      /* -1: no common switch */
	int8_t nic_a;    /* NIC of the lower-numbered PC */
	int8_t nic_b;
};

struct fnn_routes {
	int npcs;
	struct fnn_path *path;   /* npcs * npcs, symmetric; [a*npcs+b] */
	int *nic_load;           /* npcs * FNN_MAX_NICS: paths using each NIC */
};

/*
 * Assign one path per pair: by decreasing weight (w may be NULL), among equal weight
 * the pairs with fewest common switches first, each pair taking the common switch whose
 * two NICs have so far carried the fewest paths (ties: lower switch).
 */
int fnn_routes_build(struct fnn_routes *r, const struct fnn_design *d,
		     const struct fnn_weights *w);
void fnn_routes_free(struct fnn_routes *r);
const struct fnn_path *fnn_route(const struct fnn_routes *r, int a, int b);
/* Machine table: lines "a b switch nic_a nic_b" for a < b.  Parse it back into r. */
int fnn_routes_print(const struct fnn_routes *r, FILE *out);
int fnn_routes_parse(struct fnn_routes *r, int npcs, const char *text, size_t len,
		     char *err, size_t errlen);
/* Shell script for one host: `ip neigh` ARP preload for every shared NIC of every peer,
 * `ip route` host routes for the chosen path, and /etc/hosts lines naming the peers. */
int fnn_routes_script(const struct fnn_routes *r, const struct fnn_design *d,
		      const struct fnn_addrmap *m, int pc, const char *prefix, FILE *out);

/* ---------------------------------------------------------------- advanced routing -- */

/*
 * For (a, b): field k (k < NICs of a) holds 1 + the NIC of b on the switch of a's NIC k,
 * or 0 if b has no NIC there.  Fields are `bits` wide, field k at shift k * bits.
 */
#define FNN_TUPLE_FIELD(t, k, bits) \
	((unsigned)(((uint64_t)(t) >> ((k) * (bits))) & ((UINT64_C(1) << (bits)) - 1)))

struct fnn_advanced {
	int npcs;
	int bits;        /* field width: enough for maxnics + 1 values */
	int bytes;       /* bytes per tuple: smallest of 1, 2, 4, 8 holding maxnics fields */
	uint64_t *tuple; /* npcs * npcs */
};

int fnn_advanced_build(struct fnn_advanced *t, const struct fnn_design *d);
void fnn_advanced_free(struct fnn_advanced *t);
uint64_t fnn_advanced_tuple(const struct fnn_advanced *t, int a, int b);
/* Remote NIC used with local NIC k for a -> b, or -1. */
int fnn_advanced_remote(const struct fnn_advanced *t, int a, int b, int k);
/* Per-node table size: tuples (npcs * bytes) and the MAC-lookup variant
 * (npcs * nics * 6 bytes: the peer MAC to use from each local NIC). */
size_t fnn_advanced_node_bytes(const struct fnn_advanced *t);
size_t fnn_advanced_mac_node_bytes(const struct fnn_design *d, int pc);
/* Text form: header "# fnn-advanced bits B bytes N", then "a: t0 t1 ..." in hex. */
int fnn_advanced_print(const struct fnn_advanced *t, FILE *out);
int fnn_advanced_parse(struct fnn_advanced *t, const char *text, size_t len, char *err,
		       size_t errlen);

/* ---------------------------------------------------------------- stripe pairs ------ */

struct fnn_stripe {
	int sw;                              /* the shared switch (neighborhood) */
	int local_nic, remote_nic;
	const struct fnn_nic_addr *local;    /* from the address map; NULL if absent */
	const struct fnn_nic_addr *remote;
};

/*
 * The call the transports use.  Given the design table, its routes (may be NULL) and
 * the address map (may be NULL), list the (local NIC, remote NIC) pairs `me` can stripe
 * over to reach `peer`, best first: the basic-routing path first, then the other shared
 * switches by increasing load of the local NIC in the basic routing, then switch
 * number.  Writes at most max entries; returns the number of shared switches (which
 * may exceed max), 0 if none, or -EINVAL for a bad PC.
 */
int fnn_stripe_pairs(const struct fnn_design *d, const struct fnn_routes *r,
		     const struct fnn_addrmap *m, int me, int peer, struct fnn_stripe *out,
		     int max);

/*
 * The same for a transport that knows hosts by their addresses only (the SCTP core's
 * ops.rails): finds `me` and the peer in the address map by any of their IPv4 addresses
 * (network byte order, as in struct in_addr) and writes each stripe pair's local and remote
 * address, best first.  Pairs whose NIC the map lacks are skipped.  Returns the number
 * written, 0 if the two share no switch, or -ENOENT if either host is not in the map.
 */
int fnn_stripe_addrs(const struct fnn_design *d, const struct fnn_routes *r,
		     const struct fnn_addrmap *m, const uint32_t *mine, int nmine,
		     const uint32_t *theirs, int ntheirs, uint32_t *local, uint32_t *remote,
		     int max);

/* ---------------------------------------------------------------- wiring labels ----- */

/* Colour of switch sw: 12 distinguishable colours; past them a second mark
 * (0 none, 1 double triangle, 2 stripes, ...) like the paper's transparent cables. */
const char *fnn_switch_colour(int sw, const char **colour_name, int *mark);
/* One HTML page, a printable label per PC (name: prefix + number). */
int fnn_labels_html(const struct fnn_design *d, const char *prefix, FILE *out);

#endif /* FNN_H */
