/*
 * The search reaches the bound with every pair connected on small problems and on
 * KLAT2's (stopping at the bound), returns designs inside the problem's limits, and is
 * deterministic for a seed whatever the thread count.
 */
#include "routing/fnn/fnn.h"
#include "fnn_test.h"

static void search(const char *nics, const char *sw, int npcs, const char *pattern,
		   int threads, int scaled, struct fnn_design *d, struct fnn_ga_result *res)
{
	struct fnn_problem p;
	struct fnn_weights w;
	struct fnn_ga_params gp;
	char err[256];
	REQUIRE(fnn_problem_init(&p, npcs, nics, sw, err, sizeof(err)) == 0);
	REQUIRE(fnn_weights_init(&w, npcs) == 0);
	if (pattern)
		REQUIRE(fnn_weights_add(&w, pattern, err, sizeof(err)) == 0);
	fnn_ga_defaults(&gp);
	gp.seed = 42;
	gp.threads = threads;
	gp.scaled = scaled;
	gp.generations = 3000;
	gp.seconds = 60;
	gp.stop_at_bound = 1;
	REQUIRE(fnn_design_search(&p, &w, &gp, d, res) == 0);
	REQUIRE(d->npcs == npcs && d->nswitches == p.nswitches);
	for (int pc = 0; pc < npcs; pc++)
		CHECK(fnn_design_nics(d, pc) <= p.nics[pc]);
	for (int s = 0; s < p.nswitches; s++)
		CHECK(fnn_design_used(d, s) <= p.ports[s]);
	fnn_weights_free(&w);
	fnn_problem_free(&p);
}

static void at_bound(const struct fnn_design *d, const struct fnn_ga_result *res)
{
	struct fnn_analysis a;
	CHECK(res->disconnected == 0 && res->seconds_to_bound >= 0 && res->optimal);
	REQUIRE(fnn_analyze(d, NULL, NULL, 100, 100, &a) == 0);
	CHECK(a.disconnected == 0);
	CHECK_NEAR(a.avg_links, res->bound, 1e-12);
	fnn_analysis_free(&a);
}

int main(void)
{
	struct fnn_design d, e;
	struct fnn_ga_result r1, r2;

	/* 16 PCs x 3 NICs on four 12-port switches: exactly full */
	search("3", "4x12", 16, NULL, 1, 1, &d, &r1);
	at_bound(&d, &r1);
	fnn_design_free(&d);

	/* uneven NICs and a spare port: dummy PCs take it; no scaled phase */
	search("3,3,3,3,3,3,3,3,3,3,2,2", "3x8,9", 12, NULL, 1, 0, &d, &r1);
	at_bound(&d, &r1);
	fnn_design_free(&d);

	/* KLAT2: 64 PCs x 4 NICs, eight 31-port switches and one of 8: 1.859 links per pair */
	search("4", "8x31,8", 64, "grid:8x8", 1, 1, &d, &r1);
	at_bound(&d, &r1);
	CHECK_NEAR(r1.bound, 7496.0 / 4032, 1e-12);
	fprintf(stderr, "KLAT2 at the bound after %.2fs, %ld generations (scaled phase %d PCs)\n",
		r1.seconds_to_bound, r1.generations, r1.scaled_pcs);

	/* same seed, two threads: the same design */
	search("4", "8x31,8", 64, "grid:8x8", 2, 1, &e, &r2);
	CHECK(r2.generations == r1.generations);
	CHECK(memcmp(d.mask, e.mask, sizeof(uint64_t) * d.npcs * d.words) == 0);
	fnn_design_free(&d);
	fnn_design_free(&e);
	return sm_check_result();
}
