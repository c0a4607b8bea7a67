/*
 * ibnetdiscover format: generated fabrics survive write -> parse -> write unchanged (text
 * and structure, degraded too); ibsim-style files parse; bad input is rejected with the
 * file and line named; LFT dumps survive write -> read; a degradation list is applied.
 */
#include "ft_test.h"

#include <string.h>

static char *to_text(const struct ft_topo *t, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	REQUIRE(f && !ft_ibnd_write(f, t), "write");
	fclose(f);
	return buf;
}

static void same_structure(const struct ft_topo *a, const struct ft_topo *b, const char *what)
{
	CHECK(a->nsw == b->nsw && a->nnodes == b->nnodes && a->nleaves == b->nleaves, "%s: sizes", what);
	if (a->nsw != b->nsw || a->nnodes != b->nnodes)
		return;
	long bad = 0;
	for (int s = 0; s < a->nsw; s++) {
		bad += a->sw[s].guid != b->sw[s].guid || a->sw[s].nports != b->sw[s].nports ||
		       strcmp(a->sw[s].name, b->sw[s].name) || a->sw[s].rank != b->sw[s].rank;
		for (int p = 1; p <= a->sw[s].nports && p <= b->sw[s].nports; p++) {
			const struct ft_link *x = &a->sw[s].port[p], *y = &b->sw[s].port[p];
			bad += x->kind != y->kind || (x->kind != FT_NONE && (x->idx != y->idx || x->rport != y->rport));
		}
	}
	for (int d = 0; d < a->nnodes; d++)
		bad += a->node[d].port_guid != b->node[d].port_guid || a->node[d].sw != b->node[d].sw ||
		       a->node[d].sw_port != b->node[d].sw_port || strcmp(a->node[d].name, b->node[d].name);
	CHECK(bad == 0, "%s: %ld differences after a round trip", what, bad);
}

static void roundtrip(const char *spec, double frac)
{
	char err[256];
	struct ft_topo *t = ft_test_pgft(spec);
	struct ft_degrade_opts d = { .link_fraction = frac, .seed = 5 };
	if (frac > 0)
		REQUIRE(ft_degrade_random(t, &d) >= 0, "degrade");
	size_t n1, n2;
	char *txt = to_text(t, &n1);
	struct ft_topo *u = NULL;
	REQUIRE(!ft_ibnd_parse(txt, n1, spec, &u, err, sizeof(err)), "%s", err);
	same_structure(t, u, spec);
	char *txt2 = to_text(u, &n2);
	CHECK(n1 == n2 && !memcmp(txt, txt2, n1), "%s: text differs after write-parse-write", spec);
	/* a parsed complete fabric can be matched back to its PGFT for dmodk */
	if (frac == 0) {
		struct ft_pgft pg;
		REQUIRE(!ft_pgft_parse(spec, &pg, err, sizeof(err)), "%s", err);
		CHECK(!ft_pgft_attach(u, &pg, err, sizeof(err)), "%s: attach: %s", spec, err);
	} else {
		struct ft_pgft pg;
		REQUIRE(!ft_pgft_parse(spec, &pg, err, sizeof(err)), "%s", err);
		CHECK(ft_pgft_attach(u, &pg, err, sizeof(err)) < 0, "%s: degraded fabric attached as complete", spec);
		CHECK(strstr(err, "not a complete PGFT") != NULL, "message: %s", err);
	}
	free(txt);
	free(txt2);
	ft_topo_free(t);
	ft_topo_free(u);
}

static void lft_roundtrip(void)
{
	char err[256];
	struct ft_topo *t = ft_test_pgft("rlft:3:8");
	struct ft_degrade_opts d = { .link_fraction = 0.1, .seed = 2 };
	REQUIRE(ft_degrade_random(t, &d) >= 0, "degrade");
	struct ft_route_opts o = { .threads = 2 };
	struct ft_routes r, back;
	struct ft_lids l;
	REQUIRE(!ft_route(&ft_engine_dmodc, t, &o, &r, err, sizeof(err)), "%s", err);
	REQUIRE(!ft_route_switches(t, &r, 2), "switch routes");
	REQUIRE(!ft_lids_default(t, &l), "lids");
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	REQUIRE(!ft_lft_write(f, t, &r, &l), "lft write");
	fclose(f);
	CHECK(!strncmp(buf, "Unicast lids [0-", 16), "dump header: %.40s", buf);
	f = fmemopen(buf, len, "r");
	REQUIRE(!ft_lft_read(t, f, "mem", &back, err, sizeof(err)), "%s", err);
	fclose(f);
	CHECK(!memcmp(r.lft, back.lft, (size_t)t->nsw * t->nnodes), "LFT differs after dump and read");
	/* the same dump gives the LIDs back */
	struct ft_lids l2;
	f = fmemopen(buf, len, "r");
	REQUIRE(!ft_lids_read(t, f, "mem", &l2, err, sizeof(err)), "%s", err);
	fclose(f);
	CHECK(!memcmp(l.node_lid, l2.node_lid, sizeof(uint16_t) * (size_t)t->nnodes), "node LIDs");
	CHECK(!memcmp(l.sw_lid, l2.sw_lid, sizeof(uint16_t) * (size_t)t->nsw), "switch LIDs");
	ft_lids_free(&l);
	ft_lids_free(&l2);
	free(buf);
	ft_routes_free(&r);
	ft_routes_free(&back);
	ft_topo_free(t);
}

static const char ibsim_net[] =
	"# ibsim example style\n"
	"Switch\t8 \"Switch1\"\n"
	"[1]\t\"Hca1\"[1]\n"
	"[2]\t\"Hca3\"[1]\n"
	"[3]\t\"Switch2\"[3]\n"
	"[5]\t\"Switch2\"[5]\n"
	"\n"
	"Switch 8 \"Switch2\"\n"
	"[1]\t\"Hca2\"[1]\n"
	"[2]\t\"Hca4\"[1]\n"
	"[3]\t\"Switch1\"[3]\n"
	"[5]\t\"Switch1\"[5]\n"
	"\n"
	"Hca\t2 \"Hca1\"\n[1]\t\"Switch1\"[1]\n\n"
	"Hca\t2 \"Hca2\"\n[1]\t\"Switch2\"[1]\n\n"
	"Hca\t2 \"Hca3\"\n[1]\t\"Switch1\"[2]\n\n"
	"Hca \t2 \"Hca4\"\n[1]\t\"Switch2\"[2]\n";

static void ibsim_style(void)
{
	char err[256];
	struct ft_topo *t = NULL;
	REQUIRE(!ft_ibnd_parse(ibsim_net, sizeof(ibsim_net) - 1, "net", &t, err, sizeof(err)), "%s", err);
	CHECK(t->nsw == 2 && t->nnodes == 4 && t->nleaves == 2, "sizes %d %d %d", t->nsw, t->nnodes, t->nleaves);
	CHECK(ft_topo_count_switch_links(t) == 2, "two parallel cables");
	/* two leaves cabled to each other: no up-down path (Dmodc ranks both 0), min-hop routes */
	struct ft_route_opts o = { .threads = 1 };
	struct ft_routes r;
	struct ft_check k;
	REQUIRE(!ft_route(&ft_engine_minhop, t, &o, &r, err, sizeof(err)), "%s", err);
	REQUIRE(!ft_check_routes(t, &r, 1, &k), "check");
	CHECK(k.invalid_pairs == 0 && !k.deadlock, "two-switch fabric routes");
	ft_routes_free(&r);
	ft_topo_free(t);
}

struct bad { const char *text, *expect; };

static void bad_inputs(void)
{
	static const struct bad cases[] = {
		{ "Switch 4 \"A\"\n[1] \"B\"[1]\n", "x:2: remote node \"B\" is not declared" },
		{ "Switch 4 \"A\"\n[5] \"A\"[1]\n", "x:2: bad local port" },
		{ "Switch 0 \"A\"\n", "x:1: expected a port count" },
		{ "Switch 4 A\n", "x:1: expected a quoted node id" },
		{ "\n\n[1] \"A\"[1]\n", "x:3: port line before any Switch" },
		{ "Switch 4 \"A\"\nbogus line\n", "x:2: unrecognised line" },
		{ "Switch 4 \"A\"\n[1] \"B\"[1]\n[1] \"B\"[2]\nSwitch 4 \"B\"\n", "x:3: port 1 of \"A\" listed twice" },
		{ "Switch 4 \"A\"\n[1] \"B\"[9]\n\nSwitch 4 \"B\"\n", "x:2: remote \"B\" has no port 9" },
		{ "Switch 4 \"A\"\nSwitch 4 \"A\"\n", "x:2: node id \"A\" declared twice" },
		{ "Ca 1 \"H\"\n[1] \"I\"[1]\nCa 1 \"I\"\n[1] \"H\"[1]\n", "x:2: CA-to-CA cable" },
		{ "Switch 4 \"A\"\n[1] \"B\"[1]\nSwitch 4 \"B\"\n[1] \"C\"[1]\nSwitch 4 \"C\"\n", "x:4: \"B\" port 1 is already cabled" },
		{ "switchguid=0xZZ\n", "x:1: bad GUID" },
		{ "switchguid=0x10\nSwitch 4 \"A\"\nswitchguid=0x10\nSwitch 4 \"B\"\n", "x:4: GUID 0x0000000000000010 of \"B\" is already used" },
		{ "Switch 4 \"A\"\n[1] \"B\"\n", "x:2: expected the remote port" },
		{ "", "no Switch or Ca record" },
		{ "Ca 1 \"H\"\n# no port lines\n", "no switch and no CA port found" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[256] = "";
		struct ft_topo *t = NULL;
		int rc = ft_ibnd_parse(cases[i].text, strlen(cases[i].text), "x", &t, err, sizeof(err));
		CHECK(rc < 0 && !t, "case %zu accepted", i);
		CHECK(strstr(err, cases[i].expect) != NULL, "case %zu: got '%s', want '%s'", i, err, cases[i].expect);
		ft_topo_free(t);
	}
}

static void degrade_list(void)
{
	char err[256];
	struct ft_topo *t = ft_test_pgft("3;2,2,3;1,2,2;1,2,1");
	long before = ft_topo_count_switch_links(t);
	const char list[] = "# two faults\nlink sw-l1-0 3\nswitch 0x0002c90300000001\n";
	FILE *f = fmemopen((void *)list, sizeof(list) - 1, "r");
	long n = ft_degrade_file(t, f, "faults", err, sizeof(err));
	fclose(f);
	CHECK(n == 1 + 3, "removed %ld (%s)", n, err);
	CHECK(ft_topo_count_switch_links(t) == before - 4, "cables left");
	const char badlist[] = "link nosuch 3\n";
	f = fmemopen((void *)badlist, sizeof(badlist) - 1, "r");
	CHECK(ft_degrade_file(t, f, "faults", err, sizeof(err)) < 0 && strstr(err, "faults:1:"), "bad list: %s",
	      err);
	fclose(f);
	ft_topo_free(t);
}

int main(void)
{
	roundtrip("3;2,2,3;1,2,2;1,2,1", 0);
	roundtrip("rlft:2:12", 0);
	roundtrip("rlft:3:8", 0);
	roundtrip("rlft:3:8", 0.2);
	roundtrip("3;4,4,4;1,4,2;1,2,2", 0.1);
	lft_roundtrip();
	ibsim_style();
	bad_inputs();
	degrade_list();
	return sm_check_result();
}
