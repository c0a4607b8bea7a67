/* The bound formula and the analysis on small hand-checked designs, and KLAT2's numbers. */
#include "routing/fnn/fnn.h"
#include "fnn_test.h"

/* 4 PCs, 3 switches: pairs share 1,1,1,2,1,1 switches (hand count). */
static const char *small =
	"# a hand-checked design\n"
	"0: 0 1 2\n"
	"1: 0 3\n"
	"2: 1 2 3\n";

static void bound_is_sum_u_u_minus_1_over_p_p_minus_1(void)
{
	struct fnn_problem p;
	int64_t n, d;
	char err[256];
	/* KLAT2: 8 x 31 ports + 8, 64 PCs x 4 NICs: (8*31*30 + 8*7) / (64*63) = 7496/4032 */
	REQUIRE(fnn_problem_init(&p, 64, "4", "8x31,8", err, sizeof(err)) == 0);
	CHECK_NEAR(fnn_bound(&p, &n, &d), 1.859, 0.0005);
	CHECK(n == 7496 && d == 4032);
	fnn_problem_free(&p);
	/* fewer NICs than ports: the widest switches fill first, the rest stay empty */
	REQUIRE(fnn_problem_init(&p, 4, "1", "2x4", err, sizeof(err)) == 0);
	CHECK(fnn_bound(&p, &n, &d) == 1.0 && n == 12 && d == 12);
	fnn_problem_free(&p);
	/* a switch wider than the PC count only counts P ports */
	REQUIRE(fnn_problem_init(&p, 3, "1,2,1", "10,2", err, sizeof(err)) == 0);
	CHECK(fnn_bound(&p, &n, &d) * 6 == 3 * 2 + 1 * 0 && n == 6);
	fnn_problem_free(&p);
	/* mixed NIC counts and ports, bad specs are refused with the field named */
	CHECK(fnn_problem_init(&p, 3, "1,2", "4", err, sizeof(err)) == -22);
	CHECK(strstr(err, "2 entries for 3 PCs"));
	CHECK(fnn_problem_init(&p, 3, "2", "4x", err, sizeof(err)) == -22);
}

static void analysis_of_small_design_matches_hand_count(void)
{
	struct fnn_design d;
	struct fnn_analysis a;
	struct fnn_weights w;
	char err[256];
	PARSE(&d, small, 0);
	REQUIRE(d.npcs == 4 && d.nswitches == 3);
	CHECK(fnn_design_shared(&d, 1, 2) == 2 && fnn_design_shared(&d, 0, 3) == 1);
	REQUIRE(fnn_weights_init(&w, 4) == 0);
	REQUIRE(fnn_weights_add(&w, "grid:2x2", err, sizeof(err)) == 0);
	REQUIRE(fnn_weights_add(&w, "ring@2", err, sizeof(err)) == 0);
	CHECK(fnn_weights_add(&w, "grid:3x3", err, sizeof(err)) == -22);
	CHECK(strstr(err, "does not cover 4 PCs"));
	REQUIRE(fnn_analyze(&d, NULL, &w, 100, 100, &a) == 0);
	CHECK(a.pairs == 6 && a.links == 7 && a.disconnected == 0);
	CHECK(a.min_links == 1 && a.max_links == 2 && a.hist[1] == 5 && a.hist[2] == 1);
	CHECK(a.nics == 8 && a.nswitches == 3);
	CHECK_NEAR(a.avg_links, 7.0 / 6, 1e-9);
	/* own problem: ports 3,2,3 and 8 NICs: (6 + 6 + 2) / 12, the design is at the bound */
	CHECK(a.bound_num == 14 && a.bound_den == 12);
	CHECK_NEAR(a.bisect_upper_mbps, 800, 1e-9);
	CHECK_NEAR(a.bisect_random_mbps, 7.0 / 6 * 200 * 2, 1e-9);
	CHECK_NEAR(a.bisect_uplink_mbps, 7.0 / 6 * 200 * 2 + 3 * 200, 1e-9);
	REQUIRE(a.npatterns == 2);
	/* grid 2x2: rows {0,1},{2,3}, columns {0,2},{1,3}: one link each */
	CHECK_NEAR(a.pattern[0].avg_links, 1.0, 1e-9);
	CHECK(a.pattern[0].weight == 4 && a.pattern[0].min_links == 1);
	/* ring 0-1-2-3-0: 1 + 2 + 1 + 1 over 4 pairs (the weight does not change the mean) */
	CHECK_NEAR(a.pattern[1].avg_links, 5.0 / 4, 1e-9);
	CHECK(a.pattern[1].weight == 8);
	fnn_analysis_free(&a);
	fnn_weights_free(&w);
	fnn_design_free(&d);
}

static void disconnected_pairs_and_a_larger_problem_bound(void)
{
	struct fnn_design d;
	struct fnn_problem p;
	struct fnn_analysis a;
	char err[256];
	PARSE(&d, "0: 0 1\n1: 2 3\n", 0);
	REQUIRE(fnn_problem_init(&p, 4, "1", "2x4", err, sizeof(err)) == 0);
	REQUIRE(fnn_analyze(&d, &p, NULL, 100, 100, &a) == 0);
	CHECK(a.links == 2 && a.disconnected == 4 && a.min_links == 0);
	CHECK_NEAR(a.bound, 1.0, 1e-12); /* one 4-port switch would connect everyone */
	fnn_analysis_free(&a);
	fnn_problem_free(&p);
	fnn_design_free(&d);
}

static void nic_numbering_follows_switch_order(void)
{
	struct fnn_design d;
	PARSE(&d, small, 0);
	/* PC 3 is on switches 1 and 2: NIC 0 -> switch 1, NIC 1 -> switch 2 */
	CHECK(fnn_nic_switch(&d, 3, 0) == 1 && fnn_nic_switch(&d, 3, 1) == 2);
	CHECK(fnn_nic_switch(&d, 3, 2) == -1);
	CHECK(fnn_switch_nic(&d, 3, 2) == 1 && fnn_switch_nic(&d, 3, 0) == -1);
	fnn_design_free(&d);
}

int main(void)
{
	bound_is_sum_u_u_minus_1_over_p_p_minus_1();
	analysis_of_small_design_matches_hand_count();
	disconnected_pairs_and_a_larger_problem_bound();
	nic_numbering_follows_switch_order();
	return sm_check_result();
}
