/*
 * The translators' outputs parse back and say what they should: routing table, packed
 * advanced tables (128 bytes per node for KLAT2, 1.5 KB for the MAC variant), the address
 * map, the per-host scripts, the stripe-pairs call, and the labels page.
 */
#include "routing/fnn/fnn.h"
#include "fnn_test.h"

#include <arpa/inet.h>
#include <errno.h>

static char *print_to(int (*fn)(const void *, FILE *), const void *obj, size_t *len)
{
	char *buf;
	FILE *f = open_memstream(&buf, len);
	REQUIRE(f && fn(obj, f) == 0);
	fclose(f);
	return buf;
}

static int routes_print(const void *o, FILE *f) { return fnn_routes_print(o, f); }
static int adv_print(const void *o, FILE *f) { return fnn_advanced_print(o, f); }
static int addr_print(const void *o, FILE *f) { return fnn_addrmap_print(o, f); }

static void load_klat2(struct fnn_design *d)
{
	char err[512];
	const char *dir = getenv("srcdir") ? getenv("srcdir") : ".";
	char path[1024];
	snprintf(path, sizeof(path), "%s/klat2.table", dir);
	REQUIRE(fnn_table_load(d, path, 0, err, sizeof(err)) == 0, "%s", err);
	REQUIRE(d->npcs == 64 && d->nswitches == 9);
}

static void basic_routes_use_a_common_switch_and_parse_back(const struct fnn_design *d)
{
	struct fnn_routes r, q;
	struct fnn_weights w;
	size_t len;
	char err[256];
	REQUIRE(fnn_weights_init(&w, d->npcs) == 0);
	REQUIRE(fnn_weights_add(&w, "grid:8x8", err, sizeof(err)) == 0);
	REQUIRE(fnn_routes_build(&r, d, &w) == 0);
	int maxload = 0, total = 0;
	for (int a = 0; a < d->npcs; a++)
		for (int b = 0; b < d->npcs; b++) {
			if (a == b)
				continue;
			const struct fnn_path *p = fnn_route(&r, a, b);
			CHECK(p->sw >= 0 && fnn_design_has(d, a, p->sw) && fnn_design_has(d, b, p->sw));
			CHECK(p->nic_a == fnn_switch_nic(d, a, p->sw));
			CHECK(p->nic_b == fnn_switch_nic(d, b, p->sw));
			const struct fnn_path *back = fnn_route(&r, b, a);
			CHECK(back->sw == p->sw && back->nic_a == p->nic_b);
		}
	for (int i = 0; i < d->npcs * FNN_MAX_NICS; i++) {
		total += r.nic_load[i];
		if (r.nic_load[i] > maxload)
			maxload = r.nic_load[i];
	}
	CHECK(total == 64 * 63); /* each pair counted at both ends */
	CHECK(maxload <= 32);    /* 63 peers over 4 NICs: balanced, not piled on one */
	char *txt = print_to(routes_print, &r, &len);
	REQUIRE(fnn_routes_parse(&q, d->npcs, txt, len, err, sizeof(err)) == 0);
	CHECK(memcmp(q.path, r.path, sizeof(*r.path) * 64 * 64) == 0);
	fnn_routes_free(&q);
	CHECK(fnn_routes_parse(&q, 4, "0 1 2 3\n", 8, err, sizeof(err)) == -22);
	CHECK(strstr(err, "line 1: field nic_b"));
	free(txt);
	fnn_routes_free(&r);
	fnn_weights_free(&w);
}

static void advanced_tuples_are_128_bytes_per_klat2_node(const struct fnn_design *d)
{
	struct fnn_advanced t, u;
	size_t len;
	char err[256];
	REQUIRE(fnn_advanced_build(&t, d) == 0);
	CHECK(t.bits == 3 && t.bytes == 2);
	CHECK(fnn_advanced_node_bytes(&t) == 128);
	CHECK(fnn_advanced_mac_node_bytes(d, 0) == 1536);
	for (int a = 0; a < 64; a++)
		for (int b = 0; b < 64; b++)
			for (int k = 0; k < 4 && a != b; k++) {
				int s = fnn_nic_switch(d, a, k), rn = fnn_advanced_remote(&t, a, b, k);
				CHECK(rn == fnn_switch_nic(d, b, s));
				CHECK(FNN_TUPLE_FIELD(fnn_advanced_tuple(&t, a, b), k, 3) == (unsigned)(rn + 1));
			}
	char *txt = print_to(adv_print, &t, &len);
	REQUIRE(fnn_advanced_parse(&u, txt, len, err, sizeof(err)) == 0);
	REQUIRE(u.npcs == 64 && u.bits == 3 && u.bytes == 2);
	CHECK(memcmp(u.tuple, t.tuple, sizeof(uint64_t) * 64 * 64) == 0);
	fnn_advanced_free(&u);
	const char *bad = "# fnn-advanced pcs 2 bits 3 bytes 1\n0: 0 1ff\n";
	CHECK(fnn_advanced_parse(&u, bad, strlen(bad), err, sizeof(err)) == -22);
	CHECK(strstr(err, "line 2: PC 0: bad tuple \"1ff\""));
	free(txt);
	fnn_advanced_free(&t);
}

static void address_map_round_trip_and_errors(const struct fnn_design *d)
{
	struct fnn_addrmap m, n;
	size_t len;
	char err[256];
	REQUIRE(fnn_addrmap_default(&m, d) == 0);
	const struct fnn_nic_addr *a = fnn_addr(&m, 63, 3);
	int s = fnn_nic_switch(d, 63, 3);
	char want[32];
	snprintf(want, sizeof(want), "10.%d.0.64", s + 1);
	CHECK(a && !strcmp(a->ip, want) && !strcmp(a->ifname, "eth3"));
	char *txt = print_to(addr_print, &m, &len);
	REQUIRE(fnn_addrmap_parse(&n, txt, len, err, sizeof(err)) == 0);
	for (int pc = 0; pc < 64; pc++)
		for (int k = 0; k < 4; k++) {
			const struct fnn_nic_addr *x = fnn_addr(&m, pc, k), *y = fnn_addr(&n, pc, k);
			CHECK(x && y && !strcmp(x->ip, y->ip) && !strcmp(x->mac, y->mac));
		}
	fnn_addrmap_free(&n);
	const char *bad = "0 0 eth0 10.0.0.1 02:00:00:00:00:01\n1 0 eth0 10.0.0.300 02:00:00:00:00:02\n";
	CHECK(fnn_addrmap_parse(&n, bad, strlen(bad), err, sizeof(err)) == -22);
	CHECK(strstr(err, "line 2: PC 1 NIC 0: bad IPv4 address"));
	free(txt);
	fnn_addrmap_free(&m);
}

static void stripe_pairs_are_the_shared_switches_basic_path_first(const struct fnn_design *d)
{
	struct fnn_routes r;
	struct fnn_addrmap m;
	struct fnn_stripe st[FNN_MAX_NICS];
	REQUIRE(fnn_routes_build(&r, d, NULL) == 0);
	REQUIRE(fnn_addrmap_default(&m, d) == 0);
	for (int me = 0; me < 64; me++)
		for (int peer = 0; peer < 64; peer++) {
			if (me == peer) {
				CHECK(fnn_stripe_pairs(d, &r, &m, me, peer, st, 4) == -22);
				continue;
			}
			int n = fnn_stripe_pairs(d, &r, &m, me, peer, st, FNN_MAX_NICS);
			REQUIRE(n == fnn_design_shared(d, me, peer) && n >= 1);
			CHECK(st[0].sw == fnn_route(&r, me, peer)->sw);
			for (int i = 0; i < n; i++) {
				CHECK(fnn_nic_switch(d, me, st[i].local_nic) == st[i].sw);
				CHECK(fnn_nic_switch(d, peer, st[i].remote_nic) == st[i].sw);
				REQUIRE(st[i].local && st[i].local->pc == me);
				REQUIRE(st[i].remote && st[i].remote->nic == st[i].remote_nic);
				for (int j = 0; j < i; j++)
					CHECK(st[j].sw != st[i].sw);
			}
			/* a short buffer gets the best entries, the count says how many exist */
			struct fnn_stripe one;
			CHECK(fnn_stripe_pairs(d, &r, NULL, me, peer, &one, 1) == n);
			CHECK(one.sw == st[0].sw && one.local == NULL);
			/* by addresses (the SCTP core's ops.rails): hosts found by any NIC */
			uint32_t mine[2], theirs[1], l[FNN_MAX_NICS], rm[FNN_MAX_NICS];
			CHECK(inet_pton(AF_INET, fnn_addr(&m, me, 0)->ip, &mine[0]) == 1);
			mine[1] = mine[0] ^ 0xff000000u; /* an address the map lacks */
			CHECK(inet_pton(AF_INET, st[n - 1].remote->ip, &theirs[0]) == 1);
			CHECK(fnn_stripe_addrs(d, &r, &m, mine + 1, 1, theirs, 1, l, rm, 4) == -ENOENT);
			CHECK(fnn_stripe_addrs(d, &r, &m, mine, 2, theirs, 1, l, rm, FNN_MAX_NICS) == n);
			for (int i = 0; i < n; i++) {
				uint32_t a, b;
				CHECK(inet_pton(AF_INET, st[i].local->ip, &a) == 1 && a == l[i]);
				CHECK(inet_pton(AF_INET, st[i].remote->ip, &b) == 1 && b == rm[i]);
			}
		}
	fnn_addrmap_free(&m);
	fnn_routes_free(&r);
}

static void host_script_preloads_arp_and_routes_each_peer(const struct fnn_design *d)
{
	struct fnn_routes r;
	struct fnn_addrmap m;
	char *buf;
	size_t len;
	REQUIRE(fnn_routes_build(&r, d, NULL) == 0);
	REQUIRE(fnn_addrmap_default(&m, d) == 0);
	FILE *f = open_memstream(&buf, &len);
	CHECK(fnn_routes_script(&r, d, &m, 0, "k", f) == 0);
	fclose(f);
	int neigh = 0, route = 0, links = 0;
	for (char *p = buf; (p = strstr(p, "ip neigh replace ")); p++)
		neigh++;
	for (char *p = buf; (p = strstr(p, "ip route replace ")); p++)
		route++;
	for (int b = 1; b < 64; b++)
		links += fnn_design_shared(d, 0, b);
	CHECK(neigh == links && route == 63);
	CHECK(strstr(buf, " k63\n"));
	free(buf);
	fnn_addrmap_free(&m);
	fnn_routes_free(&r);
}

static void labels_page_has_a_label_per_pc_and_marks_past_12_colours(void)
{
	struct fnn_design d;
	char *buf;
	size_t len;
	const char *name;
	int mark;
	REQUIRE(fnn_design_init(&d, 3, 14) == 0);
	fnn_design_set(&d, 0, 0, 1);
	fnn_design_set(&d, 0, 13, 1);
	fnn_design_set(&d, 1, 1, 1);
	fnn_design_set(&d, 2, 13, 1);
	FILE *f = open_memstream(&buf, &len);
	CHECK(fnn_labels_html(&d, "k", f) == 0);
	fclose(f);
	int labels = 0;
	for (char *p = buf; (p = strstr(p, "class='label'")); p++)
		labels++;
	CHECK(labels == 3 && strstr(buf, ">k2</div>"));
	CHECK(strcmp(fnn_switch_colour(1, &name, &mark), fnn_switch_colour(13, NULL, NULL)) == 0);
	fnn_switch_colour(13, &name, &mark);
	CHECK(mark == 1 && strstr(buf, "double triangle"));
	fnn_switch_colour(0, &name, &mark);
	CHECK(mark == 0 && !strcmp(name, "red"));
	free(buf);
	fnn_design_free(&d);
}

int main(void)
{
	struct fnn_design d;
	load_klat2(&d);
	basic_routes_use_a_common_switch_and_parse_back(&d);
	advanced_tuples_are_128_bytes_per_klat2_node(&d);
	address_map_round_trip_and_errors(&d);
	stripe_pairs_are_the_shared_switches_basic_path_first(&d);
	host_script_preloads_arp_and_routes_each_peer(&d);
	labels_page_has_a_label_per_pc_and_marks_past_12_colours();
	fnn_design_free(&d);
	return sm_check_result();
}
