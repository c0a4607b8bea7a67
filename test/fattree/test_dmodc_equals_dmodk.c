/*
 * On complete PGFTs Dmodc must produce exactly Dmodk's tables (same divider, same GUID
 * order as Zahavi's port order), both must be valid and deadlock-free, and on real-life
 * fat-trees every shift permutation must load each link with at most one route.
 */
#include "ft_test.h"

#include <string.h>

static void compare(const char *spec, int rlft)
{
	struct ft_topo *t = ft_test_pgft(spec);
	struct ft_route_opts o = { .threads = 2 };
	struct ft_routes k, c, u;
	char err[256];
	REQUIRE(!ft_route(&ft_engine_dmodk, t, &o, &k, err, sizeof(err)), "%s", err);
	REQUIRE(!ft_route(&ft_engine_dmodc, t, &o, &c, err, sizeof(err)), "%s", err);
	o.updown_cost = 1;
	o.spread = 1;   /* neither variant changes anything on a complete PGFT */
	REQUIRE(!ft_route(&ft_engine_dmodc, t, &o, &u, err, sizeof(err)), "%s", err);
	size_t n = (size_t)t->nsw * t->nnodes, diff = 0, diffu = 0;
	for (size_t i = 0; i < n; i++) {
		diff += k.lft[i] != c.lft[i];
		diffu += k.lft[i] != u.lft[i];
	}
	CHECK(diff == 0, "%s: dmodc differs from dmodk in %zu of %zu entries", spec, diff, n);
	CHECK(diffu == 0, "%s: dmodc (up-down costs, spread) differs from dmodk in %zu entries", spec, diffu);
	struct ft_check ck;
	REQUIRE(!ft_check_routes(t, &k, 2, &ck), "check");
	CHECK(!ck.invalid_pairs && !ck.nonminimal && !ck.updown_violations && !ck.loops && !ck.deadlock,
	      "%s: dmodk check invalid %ld nonmin %ld updown %ld loops %ld deadlock %d", spec, ck.invalid_pairs,
	      ck.nonminimal, ck.updown_violations, ck.loops, ck.deadlock);
	if (rlft) {
		struct ft_quality q;
		REQUIRE(!ft_quality_shift(t, &c, t->nnodes > 700 ? 200 : 0, 2, &q), "quality");
		CHECK(q.max_load == 1 && q.invalid == 0, "%s: shift max load %d invalid %ld", spec, q.max_load,
		      q.invalid);
	}
	ft_routes_free(&k);
	ft_routes_free(&c);
	ft_routes_free(&u);
	ft_topo_free(t);
}

int main(void)
{
	compare("3;2,2,3;1,2,2;1,2,1", 0);   /* the paper's Figure 1 */
	compare("2;4,8;1,4;1,2", 0);
	compare("3;4,4,4;1,4,2;1,2,2", 0);
	compare("3;3,2,5;1,3,2;1,1,2", 0);
	compare("4;2,2,2,3;1,2,2,2;1,1,2,1", 0);
	compare("rlft:2:8", 1);
	compare("rlft:2:36", 1);
	compare("rlft:3:8", 1);
	compare("rlft:3:16", 1);
	compare("rlft:3:24", 1);
	return sm_check_result();
}
