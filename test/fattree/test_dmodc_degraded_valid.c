/*
 * Randomly degraded PGFTs: Procedure 1's costs equal brute-force shortest up-down path
 * lengths; every Dmodc route is minimal under up-down, loop-free, free of down-up turns,
 * deadlock-free (acyclic channel dependency graph), and valid exactly for the node pairs
 * whose leaves have a finite cost (all of them when the fabric stays up-down connected).
 * Minimal-change re-routing keeps every still-valid entry and is just as correct.
 */
#include "ft_test.h"

#include <string.h>

/* Shortest up-down path length from switch a to switch b by BFS over (switch, went-down). */
static int updown_dist(const struct ft_topo *t, int a, int b, int *queue, int *dist)
{
	for (int i = 0; i < 2 * t->nsw; i++)
		dist[i] = -1;
	int head = 0, tail = 0;
	dist[2 * a] = 0;
	queue[tail++] = 2 * a;
	while (head < tail) {
		int v = queue[head++], s = v / 2, down = v % 2;
		if (s == b)
			return dist[v];
		for (int g = t->grp_off[s]; g < t->grp_off[s + 1]; g++) {
			int n = (int)t->grp[g].peer;
			int dn = t->sw[n].rank < t->sw[s].rank;
			int up = t->sw[n].rank > t->sw[s].rank;
			if ((!dn && !up) || (up && down))
				continue;
			int w = 2 * n + (dn || down);
			if (dist[w] < 0) {
				dist[w] = dist[v] + 1;
				queue[tail++] = w;
			}
		}
	}
	return -1;
}

static void costs_are_shortest_updown(const struct ft_topo *t)
{
	struct ft_route_opts o = { .threads = 2 };
	struct dmodc_state st;
	REQUIRE(!dmodc_preprocess(t, &o, &st), "preprocess");
	int *queue = malloc(sizeof(int) * 2 * (size_t)t->nsw), *dist = malloc(sizeof(int) * 2 * (size_t)t->nsw);
	long bad = 0;
	for (int s = 0; s < t->nsw; s++)
		for (int l = 0; l < t->nleaves; l++) {
			if (t->sw[s].rank < 0)
				continue;
			int d = updown_dist(t, s, t->leaves[l], queue, dist);
			int c = st.cost[(size_t)s * st.nleaves + l];
			bad += (d < 0 ? FT_INF : d) != c;
		}
	CHECK(bad == 0, "%ld costs differ from brute-force up-down distances", bad);
	free(queue);
	free(dist);
	dmodc_state_free(&st);
}

static void check_routes(const struct ft_topo *t, const struct ft_routes *r, const char *what)
{
	struct ft_route_opts o = { .threads = 2 };
	struct dmodc_state st;
	struct ft_check k;
	REQUIRE(!dmodc_preprocess(t, &o, &st), "preprocess");
	long expect_invalid = ft_check_leaf_pairs(t, &st);
	REQUIRE(!ft_check_routes(t, r, 2, &k), "check");
	CHECK(k.invalid_pairs == expect_invalid, "%s: %ld invalid pairs, leaf costs say %ld", what,
	      k.invalid_pairs, expect_invalid);
	CHECK(!k.nonminimal && !k.updown_violations && !k.loops && !k.deadlock,
	      "%s: nonminimal %ld updown %ld loops %ld deadlock %d", what, k.nonminimal, k.updown_violations,
	      k.loops, k.deadlock);
	dmodc_state_free(&st);
}

static void run(const char *spec, double links, double switches, uint64_t seed, int brute)
{
	char what[160], err[256];
	snprintf(what, sizeof(what), "%s links %.2f switches %.2f seed %llu", spec, links, switches,
		 (unsigned long long)seed);
	struct ft_topo *intact = ft_test_pgft(spec);
	struct ft_topo *t = ft_topo_clone(intact);
	REQUIRE(t, "clone");
	struct ft_degrade_opts d = { .link_fraction = links, .switch_fraction = switches, .seed = seed };
	REQUIRE(ft_degrade_random(t, &d) >= 0, "degrade");
	if (brute)
		costs_are_shortest_updown(t);
	struct ft_route_opts o = { .threads = 2 };
	struct ft_routes r, old, mc;
	REQUIRE(!ft_route(&ft_engine_dmodc, t, &o, &r, err, sizeof(err)), "%s", err);
	check_routes(t, &r, what);
	/* the spread and up-down-cost variants must be just as valid */
	for (int v = 0; v < 2; v++) {
		struct ft_route_opts ov = { .threads = 2, .spread = !v, .updown_cost = v };
		struct ft_routes rv;
		REQUIRE(!ft_route(&ft_engine_dmodc, t, &ov, &rv, err, sizeof(err)), "%s", err);
		check_routes(t, &rv, v ? "updown variant" : "spread variant");
		ft_routes_free(&rv);
	}
	/* minimal-change re-routing from the intact fabric's tables */
	REQUIRE(!ft_route(&ft_engine_dmodc, intact, &o, &old, err, sizeof(err)), "%s", err);
	long changed = ft_reroute_minimal(t, &old, &o, &mc, err, sizeof(err));
	REQUIRE(changed >= 0, "%s", err);
	long full = 0, kept_bad = 0;
	struct dmodc_state st;
	REQUIRE(!dmodc_preprocess(t, &o, &st), "preprocess");
	for (int s = 0; s < t->nsw; s++)
		for (int dd = 0; dd < t->nnodes; dd++) {
			size_t i = (size_t)s * t->nnodes + dd;
			full += old.lft[i] != r.lft[i];
			/* an old entry still leading to a closer switch must have been kept */
			uint8_t p = old.lft[i];
			int l = ft_node_leaf(t, dd);
			if (t->sw[s].leaf != l && p != FT_NO_PATH && t->sw[s].port[p].kind == FT_SWITCH) {
				int n = (int)t->sw[s].port[p].idx;
				uint8_t cs = st.cost[(size_t)s * st.nleaves + l];
				if (cs != FT_INF && st.cost[(size_t)n * st.nleaves + l] < cs)
					kept_bad += mc.lft[i] != p;
			}
		}
	CHECK(kept_bad == 0, "%s: %ld still-valid entries were changed", what, kept_bad);
	CHECK(changed <= full, "%s: minimal change %ld > full re-route %ld", what, changed, full);
	check_routes(t, &mc, what);
	dmodc_state_free(&st);
	ft_routes_free(&r);
	ft_routes_free(&old);
	ft_routes_free(&mc);
	ft_topo_free(t);
	ft_topo_free(intact);
}

int main(void)
{
	const double fr[] = { 0.01, 0.05, 0.1, 0.2, 0.4 };
	for (int i = 0; i < 5; i++)
		for (uint64_t seed = 1; seed <= 3; seed++) {
			run("3;2,2,3;1,2,2;1,2,1", fr[i], 0, seed, 1);
			run("3;4,4,4;1,4,2;1,2,2", fr[i], 0, seed, 1);
			run("rlft:3:8", fr[i], i == 2 ? 0.1 : 0, seed, 1);
			run("4;2,2,2,3;1,2,2,2;1,1,2,1", fr[i], 0.05, seed, 1);
		}
	run("rlft:3:16", 0.05, 0, 9, 0);
	run("rlft:3:16", 0.1, 0.05, 10, 0);
	run("rlft:2:36", 0.1, 0, 11, 0);
	return sm_check_result();
}
