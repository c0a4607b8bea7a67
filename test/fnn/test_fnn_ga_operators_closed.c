/*
 * Every GA operator keeps the NIC and port constraints: over many random problems
 * (uneven NIC counts, too many and too few ports, so dummy PCs and dummy switches
 * appear) every mutation (NIC swap, PC swap, guided, port move, pattern move; the pattern
 * move never disconnects a pair nor lowers the pattern score), crossover and scale-up
 * leaves each PC with
 * its NIC count on distinct switches and every switch with its port count.
 */
#include "routing/fnn/fnn_ga.h"
#include "routing/fnn/fnn_util.h"
#include "fnn_test.h"
#include "common/sm_rng.h"

static void random_problem(struct fnn_problem *p, uint64_t *rng)
{
	char nics[4096] = "", sw[1024] = "", err[256];
	int npcs = 4 + sm_rng_below(rng, 40);
	int nsw = 2 + sm_rng_below(rng, 12);
	size_t o = 0;
	for (int i = 0; i < npcs; i++)
		o += snprintf(nics + o, sizeof(nics) - o, "%s%d", i ? "," : "",
			      1 + sm_rng_below(rng, 5));
	o = 0;
	for (int s = 0; s < nsw; s++)
		o += snprintf(sw + o, sizeof(sw) - o, "%s%d", s ? "," : "",
			      1 + sm_rng_below(rng, npcs + 4));
	REQUIRE(fnn_problem_init(p, npcs, nics, sw, err, sizeof(err)) == 0);
}

/* The real PCs' switch counts and each switch's slot count never change. */
static void check_closed(const struct fnn_gaprob *pb, const struct fnn_genome *g)
{
	CHECK(fnn_genome_check(pb, g) == 0);
	for (int s = 0; s < pb->nswall; s++) {
		int n = 0;
		for (int i = pb->sw_first[s]; i < pb->sw_first[s + 1]; i++)
			n += pb->slot_sw[i] == s;
		CHECK(n == pb->sw_first[s + 1] - pb->sw_first[s]);
	}
}

static void operators_on_one_problem(uint64_t seed)
{
	uint64_t rng = seed;
	struct fnn_problem p, sp;
	struct fnn_gaprob pb, spb;
	struct fnn_genome a, b, c, small;
	struct fnn_score sc;
	uint16_t bad[64];
	random_problem(&p, &rng);
	/* a ring pattern, so the pattern move has pairs to work on */
	float *w = calloc((size_t)p.npcs * p.npcs, sizeof(float));
	REQUIRE(w != NULL);
	for (int x = 0; x < p.npcs; x++) {
		w[x * p.npcs + (x + 1) % p.npcs] = 1;
		w[((x + 1) % p.npcs) * p.npcs + x] = 1;
	}
	REQUIRE(fnn_gaprob_init(&pb, &p, w) == 0);
	REQUIRE(fnn_genome_alloc(&pb, &a) == 0 && fnn_genome_alloc(&pb, &b) == 0);
	REQUIRE(fnn_genome_alloc(&pb, &c) == 0);
	fnn_genome_set(&pb, &a, pb.init);
	fnn_genome_set(&pb, &b, pb.init);
	check_closed(&pb, &a);
	for (int k = 0; k < 200; k++) {
		fnn_ga_mutate_nic(&pb, &a, &rng);
		check_closed(&pb, &a);
		fnn_ga_mutate_pc(&pb, &b, &rng);
		check_closed(&pb, &b);
		fnn_ga_eval(&pb, &a, &sc, bad);
		CHECK(sc.disc >= 0 && 2 * sc.links <= pb.bound_num);
		fnn_ga_mutate_guided(&pb, &a, bad, k & 1, &rng);
		check_closed(&pb, &a);
		struct fnn_score before, after;
		fnn_ga_eval(&pb, &b, &before, NULL);
		fnn_ga_mutate_pattern(&pb, &b, &rng);
		check_closed(&pb, &b);
		fnn_ga_eval(&pb, &b, &after, NULL);
		CHECK(after.disc <= before.disc && after.pattern >= before.pattern);
		fnn_ga_mutate_ports(&pb, &b, &rng);
		check_closed(&pb, &b);
		fnn_ga_mutate_nic(&pb, &b, &rng);
		fnn_ga_crossover(&pb, &c, &a, &b, &rng);
		check_closed(&pb, &c);
	}
	/* crossover of a design with itself is that design */
	fnn_ga_crossover(&pb, &c, &a, &a, &rng);
	CHECK(memcmp(c.occ, a.occ, pb.nslots * sizeof(uint16_t)) == 0);
	/* scaling a scaled-down design up keeps the full problem's constraints */
	int spcs = 2 + sm_rng_below(&rng, p.npcs - 1);
	REQUIRE(fnn_problem_scaled(&sp, &p, spcs) == 0);
	REQUIRE(fnn_gaprob_init(&spb, &sp, NULL) == 0);
	REQUIRE(fnn_genome_alloc(&spb, &small) == 0);
	fnn_genome_set(&spb, &small, spb.init);
	for (int k = 0; k < 20; k++)
		fnn_ga_mutate_nic(&spb, &small, &rng);
	check_closed(&spb, &small);
	fnn_ga_scale_up(&pb, &c, &spb, &small, &rng);
	check_closed(&pb, &c);
	fnn_genome_free(&small);
	fnn_gaprob_free(&spb);
	fnn_problem_free(&sp);
	fnn_genome_free(&a);
	fnn_genome_free(&b);
	fnn_genome_free(&c);
	fnn_gaprob_free(&pb);
	free(w);
	fnn_problem_free(&p);
}

/* A design the GA returns uses at most each PC's NICs and each switch's ports. */
static void design_respects_problem(void)
{
	struct fnn_problem p;
	struct fnn_gaprob pb;
	struct fnn_genome g;
	struct fnn_design d;
	char err[256];
	uint64_t rng = 5;
	REQUIRE(fnn_problem_init(&p, 10, "3,3,2,2,1,4,3,3,2,2", "5,5,4,3", err, sizeof(err)) == 0);
	REQUIRE(fnn_gaprob_init(&pb, &p, NULL) == 0);
	REQUIRE(fnn_genome_alloc(&pb, &g) == 0);
	fnn_genome_set(&pb, &g, pb.init);
	for (int k = 0; k < 100; k++)
		fnn_ga_mutate_nic(&pb, &g, &rng);
	REQUIRE(fnn_genome_design(&pb, &g, &p, &d) == 0);
	for (int pc = 0; pc < d.npcs; pc++)
		CHECK(fnn_design_nics(&d, pc) <= p.nics[pc]);
	for (int s = 0; s < d.nswitches; s++)
		CHECK(fnn_design_used(&d, s) <= p.ports[s]);
	fnn_design_free(&d);
	fnn_genome_free(&g);
	fnn_gaprob_free(&pb);
	fnn_problem_free(&p);
}

int main(void)
{
	for (uint64_t seed = 1; seed <= 300; seed++)
		operators_on_one_problem(seed);
	design_respects_problem();
	return sm_check_result();
}
