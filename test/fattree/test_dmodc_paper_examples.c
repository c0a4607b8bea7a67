/*
 * The paper's worked examples: Figure 1's PGFT numbering, Figure 2's cost propagation
 * (a shorter path found after a longer one), Figure 3's dividers (max over downpaths,
 * giving the complete-network value), Figure 4's selection (d=20, Pi=4: group 1, port 2),
 * and routes that follow equations (1)-(4) exactly.
 */
#include "ft_test.h"

#include <string.h>

static int sw_at(const struct ft_topo *t, int level, long idx)
{
	for (int s = 0; s < t->nsw; s++)
		if (t->sw[s].guid == ft_pgft_switch_guid(level, idx))
			return s;
	return -1;
}

static void figure1_numbering(void)
{
	struct ft_topo *t = ft_test_pgft("3;2,2,3;1,2,2;1,2,1");
	CHECK(t->nnodes == 12 && t->nsw == 16 && t->nleaves == 6, "sizes %d %d %d", t->nnodes, t->nsw,
	      t->nleaves);
	/* leaves: 2 nodes + 2 upswitches x 2 cables; level 2: 2 children x 2 cables + 2 up; top: 3 */
	CHECK(t->sw[sw_at(t, 1, 0)].nports == 6, "leaf ports");
	CHECK(t->sw[sw_at(t, 2, 0)].nports == 6, "level-2 ports");
	CHECK(t->sw[sw_at(t, 3, 0)].nports == 3, "top ports");
	/* node d sits on leaf d/2, port d%2 + 1 */
	for (int d = 0; d < 12; d++) {
		CHECK(t->node[d].sw == sw_at(t, 1, d / 2) && t->node[d].sw_port == d % 2 + 1, "node %d", d);
		CHECK(t->node[d].port_guid == ft_pgft_node_guid(d) + 1, "node %d guid", d);
	}
	/* leaf 0 (a3=0,a2=0) up port index q = j*w2 + b2 reaches level-2 switch (a3=0, b2) */
	const struct ft_switch *l0 = &t->sw[sw_at(t, 1, 0)];
	for (int q = 0; q < 4; q++) {
		const struct ft_link *lk = &l0->port[3 + q];
		CHECK(lk->kind == FT_SWITCH && (int)lk->idx == sw_at(t, 2, q % 2), "leaf0 up %d", q);
		CHECK(lk->rport == 1 + (q / 2) * 2, "leaf0 up %d lands on down port %d", q, lk->rport);
	}
	/* level-2 switch (a3=1, b2=1) = index 3 reaches tops (b3, b2=1) = 1 and 3 */
	const struct ft_switch *m = &t->sw[sw_at(t, 2, 3)];
	CHECK(m->port[5].idx == (uint32_t)sw_at(t, 3, 1) && m->port[6].idx == (uint32_t)sw_at(t, 3, 3), "l2 up");
	CHECK(t->sw[sw_at(t, 3, 0)].rank == 2 && l0->rank == 0, "ranks");
	ft_topo_free(t);
}

/* Add a switch with n ports; attach `nodes` nodes on its first ports when > 0. */
static int add_sw(struct ft_topo *t, uint64_t guid, int nports, int nodes)
{
	char name[32];
	snprintf(name, sizeof(name), "s%llx", (unsigned long long)guid);
	int s = ft_topo_add_switch(t, guid, name, nports);
	for (int i = 0; i < nodes; i++) {
		int n = ft_topo_add_node(t, guid * 100 + (uint64_t)i, guid * 100 + (uint64_t)i + 50, name, 1, 1);
		ft_topo_link_node(t, s, i + 1, n, NULL, 0);
	}
	return s;
}

static void cable(struct ft_topo *t, int a, int b)
{
	int pa = 0, pb = 0;
	while (t->sw[a].port[++pa].kind != FT_NONE)
		;
	while (t->sw[b].port[++pb].kind != FT_NONE)
		;
	REQUIRE(!ft_topo_link_sw(t, a, pa, b, pb, NULL, 0), "cable %d-%d", a, b);
}

/*
 * Figure 2's point: a switch first reached by a long path must still take a shorter one
 * found later. Target leaf T below M1 below U2; the left leaf La below M0, and M0 below
 * both U1 (whose only way to T is up through R, cost 4) and U2 (cost 2). U1 has the lower
 * GUID, so in GUID order its longer cost arrives first. Expected: c(M0) = 3, c(La) = 4.
 */
static void figure2_costs(void)
{
	struct ft_topo *t = ft_topo_new();
	int T = add_sw(t, 0x10, 8, 1), La = add_sw(t, 0x11, 8, 1), Lb = add_sw(t, 0x12, 8, 1);
	int M1 = add_sw(t, 0x20, 8, 0), M0 = add_sw(t, 0x21, 8, 0), M2 = add_sw(t, 0x22, 8, 0);
	int U1 = add_sw(t, 0x30, 8, 0), U2 = add_sw(t, 0x31, 8, 0), R = add_sw(t, 0x40, 8, 0);
	cable(t, T, M1);
	cable(t, La, M0);
	cable(t, Lb, M2);
	cable(t, M1, U2);
	cable(t, M0, U1);
	cable(t, M0, U2);
	cable(t, M2, U1);
	cable(t, U1, R);
	cable(t, U2, R);
	REQUIRE(!ft_topo_finalize(t, NULL, 0), "finalize");
	struct ft_route_opts o = { .threads = 2 };
	struct dmodc_state st;
	REQUIRE(!dmodc_preprocess(t, &o, &st), "preprocess");
	int lt = t->sw[T].leaf, L = st.nleaves;
#define C(s) st.cost[(size_t)(s) * L + lt]
	CHECK(C(T) == 0 && C(M1) == 1 && C(U2) == 2 && C(R) == 3, "spine costs %d %d %d %d", C(T), C(M1),
	      C(U2), C(R));
	CHECK(C(U1) == 4, "U1 cost %d (only via R)", C(U1));
	CHECK(C(M0) == 3, "M0 cost %d: the shorter U2 path must win over U1", C(M0));
	CHECK(C(La) == 4 && C(M2) == 5 && C(Lb) == 6, "left costs %d %d %d", C(La), C(M2), C(Lb));
#undef C
	struct ft_routes r;
	char err[256];
	REQUIRE(!ft_route(&ft_engine_dmodc, t, &o, &r, err, sizeof(err)), "%s", err);
	/* La's node routes to T's node through M0 then U2, never U1 */
	int dT = t->leaf_first[lt];
	uint8_t p = r.lft[(size_t)M0 * t->nnodes + dT];
	CHECK(t->sw[M0].port[p].idx == (uint32_t)U2, "M0 -> U2 (port %d)", p);
	struct ft_check k;
	REQUIRE(!ft_check_routes(t, &r, 2, &k), "check");
	CHECK(k.invalid_pairs == 0 && k.nonminimal == 0, "check %ld %ld", k.invalid_pairs, k.nonminimal);
	ft_routes_free(&r);
	/* This is no PGFT: U2 reaches Lb equally well down through M0 (then up through U1) or up
	 * through R. Plain costs (section 3.2) allow the down-up turn; the up-down variant must not. */
	o.updown_cost = 1;
	REQUIRE(!ft_route(&ft_engine_dmodc, t, &o, &r, err, sizeof(err)), "%s", err);
	REQUIRE(!ft_check_routes(t, &r, 2, &k), "check");
	CHECK(k.invalid_pairs == 0 && k.nonminimal == 0 && k.updown_violations == 0 && !k.deadlock,
	      "up-down variant: check %ld %ld %ld %d", k.invalid_pairs, k.nonminimal, k.updown_violations,
	      k.deadlock);
	ft_routes_free(&r);
	dmodc_state_free(&st);
	ft_topo_free(t);
}

/*
 * Figure 3: bottom switches with dividers 3, 2, 3 and 2, 2, 3 upswitches. The tops get
 * 6, 6, 4 from the first two (4 <= 6 leaves the first upswitch of the second alone) and
 * 9, 9, 9 once the third is seen: the complete-network value.
 */
static void figure3_dividers(int with_third)
{
	struct ft_topo *t = ft_topo_new();
	/* leaves: l0 has 3 upswitches (b0, b2, x) -> Pi(b0) = Pi(b2) = 3; l1 has 2 (b1, x) -> Pi(b1) = 2 */
	int l0 = add_sw(t, 0x10, 8, 1), l1 = add_sw(t, 0x11, 8, 1);
	int b0 = add_sw(t, 0x20, 8, 0), b1 = add_sw(t, 0x21, 8, 0), b2 = add_sw(t, 0x22, 8, 0);
	int x = add_sw(t, 0x23, 8, 0);
	int t0 = add_sw(t, 0x30, 8, 0), t1 = add_sw(t, 0x31, 8, 0), t2 = add_sw(t, 0x32, 8, 0);
	cable(t, l0, b0);
	cable(t, l0, b2);
	cable(t, l0, x);
	cable(t, l1, b1);
	cable(t, l1, x);
	cable(t, b0, t0);
	cable(t, b0, t1);
	cable(t, b1, t1);
	cable(t, b1, t2);
	if (with_third) {
		cable(t, b2, t0);
		cable(t, b2, t1);
		cable(t, b2, t2);
	}
	REQUIRE(!ft_topo_finalize(t, NULL, 0), "finalize");
	struct ft_route_opts o = { .threads = 1 };
	struct dmodc_state st;
	REQUIRE(!dmodc_preprocess(t, &o, &st), "preprocess");
	CHECK(st.div[l0] == 1 && st.div[l1] == 1, "leaves divide by 1");
	CHECK(st.div[b0] == 3 && st.div[b1] == 2 && st.div[b2] == 3, "bottom %llu %llu %llu",
	      (unsigned long long)st.div[b0], (unsigned long long)st.div[b1], (unsigned long long)st.div[b2]);
	uint64_t e0 = with_third ? 9 : 6, e1 = with_third ? 9 : 6, e2 = with_third ? 9 : 4;
	CHECK(st.div[t0] == e0 && st.div[t1] == e1 && st.div[t2] == e2, "tops %llu %llu %llu",
	      (unsigned long long)st.div[t0], (unsigned long long)st.div[t1], (unsigned long long)st.div[t2]);
	dmodc_state_free(&st);
	ft_topo_free(t);
}

static void figure4_selection(void)
{
	int gi, pi;
	dmodc_select(20, 4, 2, 3, &gi, &pi);
	CHECK(gi == 1, "group %d, expected 1 (floor(20/4) mod 2)", gi);
	CHECK(pi == 2, "port %d, expected 2 (floor(20/8) mod 3)", pi);
}

/* Every LFT entry of Dmodc equals equations (1)-(4) recomputed from costs and dividers. */
static void routes_follow_equations(const char *spec, double frac, uint64_t seed)
{
	struct ft_topo *t = ft_test_pgft(spec);
	struct ft_degrade_opts d = { .link_fraction = frac, .seed = seed };
	REQUIRE(ft_degrade_random(t, &d) >= 0, "degrade");
	struct ft_route_opts o = { .threads = 2 };
	struct dmodc_state st;
	struct ft_routes r;
	char err[256];
	REQUIRE(!dmodc_preprocess(t, &o, &st), "preprocess");
	REQUIRE(!ft_route(&ft_engine_dmodc, t, &o, &r, err, sizeof(err)), "%s", err);
	long bad = 0;
	for (int s = 0; s < t->nsw; s++)
		for (int d = 0; d < t->nnodes; d++) {
			int l = ft_node_leaf(t, d), C[FT_MAX_PORTS + 1], nc = 0;
			uint8_t cs = st.cost[(size_t)s * st.nleaves + l], want = FT_NO_PATH;
			if (t->sw[s].leaf == l) {
				want = (uint8_t)t->node[d].sw_port;
			} else {
				for (int g = t->grp_off[s]; g < t->grp_off[s + 1]; g++)
					if (st.cost[(size_t)t->grp[g].peer * st.nleaves + l] < cs)
						C[nc++] = g;
				if (cs != FT_INF && nc) {
					int gi, pi;
					dmodc_select((uint64_t)d, st.div[s], nc, (int)t->grp[C[0]].nports, &gi, &pi);
					dmodc_select((uint64_t)d, st.div[s], nc, (int)t->grp[C[gi]].nports, &gi, &pi);
					want = t->gport[t->grp[C[gi]].first + pi];
				}
			}
			bad += r.lft[(size_t)s * t->nnodes + d] != want;
		}
	CHECK(bad == 0, "%s degraded %.2f seed %llu: %ld entries differ from equations (1)-(4)", spec, frac,
	      (unsigned long long)seed, bad);
	ft_routes_free(&r);
	dmodc_state_free(&st);
	ft_topo_free(t);
}

int main(void)
{
	figure1_numbering();
	figure2_costs();
	figure3_dividers(0);
	figure3_dividers(1);
	figure4_selection();
	routes_follow_equations("3;2,2,3;1,2,2;1,2,1", 0, 1);
	routes_follow_equations("3;4,4,6;1,4,3;1,2,1", 0.1, 7);
	routes_follow_equations("rlft:3:12", 0.05, 3);
	routes_follow_equations("rlft:3:12", 0.3, 4);
	return sm_check_result();
}
