/* Table print/parse round trip on random designs, and clear errors for bad lines. */
#include "routing/fnn/fnn.h"
#include "routing/fnn/fnn_util.h"
#include "fnn_test.h"
#include "common/sm_rng.h"

static void print_parse_round_trip(uint64_t seed)
{
	uint64_t rng = seed;
	struct fnn_design d, e;
	char *buf;
	size_t len;
	char err[256];
	int npcs = 2 + sm_rng_below(&rng, 100), nsw = 1 + sm_rng_below(&rng, 130);
	REQUIRE(fnn_design_init(&d, npcs, nsw) == 0);
	for (int k = 0; k < npcs * 3; k++)
		fnn_design_set(&d, sm_rng_below(&rng, npcs), sm_rng_below(&rng, nsw), 1);
	FILE *f = open_memstream(&buf, &len);
	REQUIRE(f && fnn_table_print(&d, f) == 0);
	fclose(f);
	REQUIRE(fnn_table_parse(&e, buf, len, npcs, err, sizeof(err)) == 0);
	REQUIRE(e.npcs == d.npcs && e.nswitches == d.nswitches && e.words == d.words);
	CHECK(memcmp(e.mask, d.mask, sizeof(uint64_t) * d.npcs * d.words) == 0);
	for (int s = 0; s < nsw; s++)
		CHECK(e.ports[s] == fnn_design_used(&d, s));
	free(buf);
	fnn_design_free(&d);
	fnn_design_free(&e);
}

static void expect_error(const char *text, int npcs, const char *msg)
{
	struct fnn_design d;
	char err[256] = "";
	int rc = fnn_table_parse(&d, text, strlen(text), npcs, err, sizeof(err));
	CHECK(rc == -22 && strstr(err, msg), "table %s: rc %d err \"%s\", expected \"%s\"", text,
	      rc, err, msg);
}

static void bad_lines_are_named(void)
{
	expect_error("0: 1 2\nx: 3\n", 0, "line 2: expected a switch number");
	expect_error("0 1 2\n", 0, "line 1: expected ':' after switch 0");
	expect_error("0: 1 2 1\n", 0, "line 1: PC 1 appears twice on switch 0");
	expect_error("0: 1\n\n# c\n0: 2\n", 0, "line 4: switch 0 already listed on line 1");
	expect_error("0: 1 -2\n", 0, "line 1: switch 0: expected a PC number");
	expect_error("0: 1 2x\n", 0, "line 1: switch 0: expected a PC number");
	expect_error("0: 5\n", 4, "PC 5 listed but the design has 4 PCs");
	expect_error("99999: 1\n", 0, "line 1: expected a switch number 0..1023");
	expect_error("0: 0\n1: 0\n2: 0\n3: 0\n4: 0\n5: 0\n6: 0\n7: 0\n8: 0\n9: 0\n10: 0\n"
		     "11: 0\n12: 0\n13: 0\n14: 0\n15: 0\n16: 0\n", 0, "PC 0 has 17 NICs");
}

static void comments_blank_lines_and_crlf(void)
{
	struct fnn_design d;
	char err[256];
	const char *t = "# header\r\n\r\n  2 :  3 1 # trailing\r\n0:\n";
	REQUIRE(fnn_table_parse(&d, t, strlen(t), 0, err, sizeof(err)) == 0);
	REQUIRE(d.npcs == 4 && d.nswitches == 3);
	CHECK(fnn_design_has(&d, 1, 2) && fnn_design_has(&d, 3, 2) && !fnn_design_has(&d, 0, 2));
	CHECK(d.ports[0] == 0 && d.ports[1] == 0 && d.ports[2] == 2);
	fnn_design_free(&d);
}

int main(void)
{
	for (uint64_t seed = 1; seed <= 200; seed++)
		print_parse_round_trip(seed);
	bad_lines_are_named();
	comments_blank_lines_and_crlf();
	return sm_check_result();
}
