/* fnn_main.c - the `fnn` command: design / analyze / bound / labels / routes / ... */
#include "config.h"

#include "fnn.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

struct opts {
	int pcs;
	const char *nics, *switches, *out, *addrs, *prefix, *script_dir;
	const char *patterns[16];
	int npatterns;
	struct fnn_ga_params gp;
	double nic_mbps, uplink_mbps;
	int table, mac;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: fnn COMMAND [options] [TABLE]\n"
		"commands:\n"
		"  design   --pcs N --nics K|K,K,.. --switches 8x31,8 [--pattern P]... [GA options]\n"
		"           search for a wiring; prints the table (switch: pc pc ...)\n"
		"  analyze  TABLE [--pattern P]... [--pcs N --switches S]   links/pair, bound, bisection\n"
		"  bound    --pcs N --nics K --switches S     the tight upper bound on links/pair\n"
		"  labels   TABLE [--prefix k]                HTML wiring labels\n"
		"  addrs    TABLE                             default host/NIC address map\n"
		"  routes   TABLE [--pattern P]... [--addrs MAP] [--table | --script-dir DIR]\n"
		"           basic routing: machine table, or one `ip` script per host\n"
		"  advanced TABLE [--mac [--addrs MAP]]       packed NIC-tuple tables and sizes;\n"
		"           --mac: the MAC-lookup variant (peer MAC per local NIC)\n"
		"  stripe   TABLE ME PEER [--addrs MAP]       NIC pairs ME stripes over to PEER\n"
		"patterns: grid:RxC row:RxC col:RxC ring all file:PATH, optional @WEIGHT\n"
		"GA options: --seed N --threads N --population N --keep N --cross N --fudge N\n"
		"  --mutations N --generations N --seconds S --no-scale --scaled-generations N\n"
		"  --stop-at-bound --quiet\n"
		"other: -o FILE  --nic-mbps X (100)  --uplink-mbps X (NIC)\n");
}

enum {
	O_PCS = 256, O_NICS, O_SWITCHES, O_PATTERN, O_SEED, O_THREADS, O_POP, O_KEEP, O_CROSS,
	O_FUDGE, O_MUT, O_GENS, O_SECS, O_NOSCALE, O_SGENS, O_STOP, O_QUIET, O_NICMBPS,
	O_UPMBPS, O_ADDRS, O_PREFIX, O_TABLE, O_SCRIPTDIR, O_MAC
};

static const struct option longopts[] = {
	{ "pcs", 1, 0, O_PCS }, { "nics", 1, 0, O_NICS }, { "switches", 1, 0, O_SWITCHES },
	{ "pattern", 1, 0, O_PATTERN }, { "seed", 1, 0, O_SEED }, { "threads", 1, 0, O_THREADS },
	{ "population", 1, 0, O_POP }, { "keep", 1, 0, O_KEEP }, { "cross", 1, 0, O_CROSS },
	{ "fudge", 1, 0, O_FUDGE }, { "mutations", 1, 0, O_MUT },
	{ "generations", 1, 0, O_GENS }, { "seconds", 1, 0, O_SECS },
	{ "no-scale", 0, 0, O_NOSCALE }, { "scaled-generations", 1, 0, O_SGENS },
	{ "stop-at-bound", 0, 0, O_STOP }, { "quiet", 0, 0, O_QUIET },
	{ "nic-mbps", 1, 0, O_NICMBPS }, { "uplink-mbps", 1, 0, O_UPMBPS },
	{ "addrs", 1, 0, O_ADDRS }, { "prefix", 1, 0, O_PREFIX }, { "table", 0, 0, O_TABLE },
	{ "script-dir", 1, 0, O_SCRIPTDIR }, { "mac", 0, 0, O_MAC }, { "help", 0, 0, 'h' },
	{ 0, 0, 0, 0 }
};

static long num(const char *opt, const char *s, long lo, long hi)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (*s == '\0' || *end || v < lo || v > hi) {
		fprintf(stderr, "fnn: --%s %s: expected an integer %ld..%ld\n", opt, s, lo, hi);
		exit(2);
	}
	return v;
}

static double real(const char *opt, const char *s)
{
	char *end;
	double v = strtod(s, &end);
	if (*s == '\0' || *end || v < 0) {
		fprintf(stderr, "fnn: --%s %s: expected a non-negative number\n", opt, s);
		exit(2);
	}
	return v;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	int c;
	memset(o, 0, sizeof(*o));
	fnn_ga_defaults(&o->gp);
	o->gp.verbose = 1;
	o->nic_mbps = 100;
	o->uplink_mbps = -1;
	o->prefix = "pc";
	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (c) {
		case O_PCS: o->pcs = (int)num("pcs", optarg, 2, FNN_MAX_PCS); break;
		case O_NICS: o->nics = optarg; break;
		case O_SWITCHES: o->switches = optarg; break;
		case O_PATTERN:
			if (o->npatterns == 16) {
				fprintf(stderr, "fnn: at most 16 patterns\n");
				return 2;
			}
			o->patterns[o->npatterns++] = optarg;
			break;
		case O_SEED: o->gp.seed = (uint64_t)num("seed", optarg, 0, 0x7fffffffL); break;
		case O_THREADS: o->gp.threads = (int)num("threads", optarg, 1, 256); break;
		case O_POP: o->gp.population = (int)num("population", optarg, 4, 100000); break;
		case O_KEEP: o->gp.keep = (int)num("keep", optarg, 2, 100000); break;
		case O_CROSS: o->gp.cross = (int)num("cross", optarg, 0, 100000); break;
		case O_FUDGE: o->gp.fudge = (int)num("fudge", optarg, 0, 100000); break;
		case O_MUT: o->gp.max_mutations = (int)num("mutations", optarg, 1, 1000); break;
		case O_GENS: o->gp.generations = num("generations", optarg, 0, 1000000000L); break;
		case O_SECS: o->gp.seconds = real("seconds", optarg); break;
		case O_NOSCALE: o->gp.scaled = 0; break;
		case O_SGENS:
			o->gp.scaled_generations = num("scaled-generations", optarg, 1, 100000000L);
			break;
		case O_STOP: o->gp.stop_at_bound = 1; break;
		case O_QUIET: o->gp.verbose = 0; break;
		case O_NICMBPS: o->nic_mbps = real("nic-mbps", optarg); break;
		case O_UPMBPS: o->uplink_mbps = real("uplink-mbps", optarg); break;
		case O_ADDRS: o->addrs = optarg; break;
		case O_PREFIX: o->prefix = optarg; break;
		case O_TABLE: o->table = 1; break;
		case O_SCRIPTDIR: o->script_dir = optarg; break;
		case O_MAC: o->mac = 1; break;
		case 'o': o->out = optarg; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return 2;
		}
	}
	if (o->uplink_mbps < 0)
		o->uplink_mbps = o->nic_mbps;
	return 0;
}

static FILE *open_out(const struct opts *o)
{
	if (!o->out)
		return stdout;
	FILE *f = fopen(o->out, "w");
	if (!f)
		fprintf(stderr, "fnn: %s: %s\n", o->out, strerror(errno));
	return f;
}

static int close_out(const struct opts *o, FILE *f)
{
	if (f == stdout)
		return fflush(f) ? 1 : 0;
	if (fclose(f)) {
		fprintf(stderr, "fnn: %s: write error\n", o->out);
		return 1;
	}
	return 0;
}

static int load_weights(const struct opts *o, int npcs, struct fnn_weights *w)
{
	char err[512];
	if (fnn_weights_init(w, npcs))
		return 1;
	for (int i = 0; i < o->npatterns; i++)
		if (fnn_weights_add(w, o->patterns[i], err, sizeof(err))) {
			fprintf(stderr, "fnn: %s\n", err);
			fnn_weights_free(w);
			return 1;
		}
	return 0;
}

static int load_table(const char *path, int npcs, struct fnn_design *d)
{
	char err[600];
	if (!path) {
		fprintf(stderr, "fnn: a TABLE file is needed\n");
		return 2;
	}
	if (fnn_table_load(d, path, npcs, err, sizeof(err))) {
		fprintf(stderr, "fnn: %s\n", err);
		return 1;
	}
	return 0;
}

static int need_problem(const struct opts *o, struct fnn_problem *p)
{
	char err[512];
	if (!o->pcs || !o->nics || !o->switches) {
		fprintf(stderr, "fnn: --pcs, --nics and --switches are needed\n");
		return 2;
	}
	if (fnn_problem_init(p, o->pcs, o->nics, o->switches, err, sizeof(err))) {
		fprintf(stderr, "fnn: %s\n", err);
		return 2;
	}
	return 0;
}

static int cmd_design(const struct opts *o)
{
	struct fnn_problem p;
	struct fnn_weights w;
	struct fnn_design d;
	struct fnn_ga_result res;
	int rc = need_problem(o, &p);
	if (rc)
		return rc;
	if (load_weights(o, p.npcs, &w)) {
		fnn_problem_free(&p);
		return 2;
	}
	rc = fnn_design_search(&p, &w, &o->gp, &d, &res);
	if (rc) {
		fprintf(stderr, "fnn: design search failed: %s\n", strerror(-rc));
		goto out;
	}
	fprintf(stderr, "fnn: %ld generations in %.2fs; scaled phase %d PCs; disconnected %lld; "
		"links/pair %.4f bound %.4f; at bound after %.2fs\n", res.generations, res.seconds,
		res.scaled_pcs, (long long)res.disconnected, res.avg_links, res.bound,
		res.seconds_to_bound);
	FILE *f = open_out(o);
	rc = 1;
	if (f) {
		fprintf(f, "# fnn design: %d PCs, nics %s, switches %s, seed %llu\n", p.npcs, o->nics,
			o->switches, (unsigned long long)o->gp.seed);
		fnn_table_print(&d, f);
		rc = close_out(o, f);
	}
	fnn_design_free(&d);
out:
	fnn_weights_free(&w);
	fnn_problem_free(&p);
	return rc;
}

static int cmd_analyze(const struct opts *o, const char *table)
{
	struct fnn_design d;
	struct fnn_problem p, *pp = NULL;
	struct fnn_weights w;
	struct fnn_analysis a;
	int rc = load_table(table, o->pcs, &d);
	if (rc)
		return rc;
	if (o->switches) {
		char err[512];
		/* the problem's port counts; NICs per PC from the design */
		rc = fnn_problem_init(&p, d.npcs, "1", o->switches, err, sizeof(err));
		if (rc) {
			fprintf(stderr, "fnn: %s\n", err);
			fnn_design_free(&d);
			return 2;
		}
		for (int i = 0; i < d.npcs; i++)
			p.nics[i] = fnn_design_nics(&d, i);
		pp = &p;
	}
	if (load_weights(o, d.npcs, &w)) {
		rc = 2;
		goto out;
	}
	rc = fnn_analyze(&d, pp, &w, o->nic_mbps, o->uplink_mbps, &a);
	if (!rc) {
		FILE *f = open_out(o);
		rc = 1;
		if (f) {
			fnn_analysis_print(&a, f);
			rc = close_out(o, f);
		}
		fnn_analysis_free(&a);
	}
	fnn_weights_free(&w);
out:
	if (pp)
		fnn_problem_free(pp);
	fnn_design_free(&d);
	return rc;
}

static int cmd_bound(const struct opts *o)
{
	struct fnn_problem p;
	int64_t n, d;
	int rc = need_problem(o, &p);
	if (rc)
		return rc;
	double b = fnn_bound(&p, &n, &d);
	printf("bound %.4f links/pair (%lld/%lld)\n", b, (long long)n, (long long)d);
	fnn_problem_free(&p);
	return 0;
}

static int cmd_labels(const struct opts *o, const char *table)
{
	struct fnn_design d;
	int rc = load_table(table, o->pcs, &d);
	if (rc)
		return rc;
	FILE *f = open_out(o);
	rc = 1;
	if (f) {
		rc = fnn_labels_html(&d, o->prefix, f) ? 1 : 0;
		rc |= close_out(o, f);
	}
	fnn_design_free(&d);
	return rc;
}

static int default_addrs(const struct fnn_design *d, struct fnn_addrmap *m)
{
	int rc = fnn_addrmap_default(m, d);
	if (rc == -E2BIG)
		fprintf(stderr, "fnn: the default address plan has one /16 per switch: %d switches "
			"are more than 254; give --addrs MAP\n", d->nswitches);
	else if (rc)
		fprintf(stderr, "fnn: default address plan: %s\n", strerror(-rc));
	return rc ? 1 : 0;
}

static int load_addrs(const struct opts *o, const struct fnn_design *d, struct fnn_addrmap *m)
{
	char err[600];
	if (!o->addrs)
		return default_addrs(d, m);
	if (fnn_addrmap_load(m, o->addrs, err, sizeof(err))) {
		fprintf(stderr, "fnn: %s\n", err);
		return 1;
	}
	return 0;
}

static int cmd_addrs(const struct opts *o, const char *table)
{
	struct fnn_design d;
	struct fnn_addrmap m;
	int rc = load_table(table, o->pcs, &d);
	if (rc)
		return rc;
	rc = default_addrs(&d, &m);
	if (!rc) {
		FILE *f = open_out(o);
		rc = f ? (fnn_addrmap_print(&m, f) ? 1 : 0) | close_out(o, f) : 1;
		fnn_addrmap_free(&m);
	}
	fnn_design_free(&d);
	return rc;
}

static int write_scripts(const struct opts *o, const struct fnn_routes *r,
			 const struct fnn_design *d, const struct fnn_addrmap *m)
{
	char path[4096];
	for (int pc = 0; pc < d->npcs; pc++) {
		snprintf(path, sizeof(path), "%s/%s%d.sh", o->script_dir, o->prefix, pc);
		FILE *f = fopen(path, "w");
		if (!f) {
			fprintf(stderr, "fnn: %s: %s\n", path, strerror(errno));
			return 1;
		}
		int rc = fnn_routes_script(r, d, m, pc, o->prefix, f);
		if (fclose(f) || rc) {
			fprintf(stderr, "fnn: %s: write error\n", path);
			return 1;
		}
	}
	return 0;
}

static int cmd_routes(const struct opts *o, const char *table)
{
	struct fnn_design d;
	struct fnn_weights w;
	struct fnn_routes r;
	struct fnn_addrmap m;
	int rc = load_table(table, o->pcs, &d);
	if (rc)
		return rc;
	rc = 2;
	if (load_weights(o, d.npcs, &w))
		goto out_d;
	rc = 1;
	if (fnn_routes_build(&r, &d, &w))
		goto out_w;
	if (o->script_dir) {
		if (!load_addrs(o, &d, &m)) {
			rc = write_scripts(o, &r, &d, &m);
			fnn_addrmap_free(&m);
		}
	} else {
		FILE *f = open_out(o);
		rc = f ? (fnn_routes_print(&r, f) ? 1 : 0) | close_out(o, f) : 1;
	}
	fnn_routes_free(&r);
out_w:
	fnn_weights_free(&w);
out_d:
	fnn_design_free(&d);
	return rc;
}

/* The MAC-lookup variant: for each (a, b), per local NIC of a, the MAC to send to. */
static int print_mac_table(const struct fnn_design *d, const struct fnn_advanced *t,
			   const struct fnn_addrmap *m, FILE *f)
{
	fprintf(f, "# fnn-advanced-mac: a b: peer MAC per local NIC (- where not shared)\n");
	for (int a = 0; a < d->npcs; a++)
		for (int b = 0; b < d->npcs; b++) {
			if (a == b)
				continue;
			fprintf(f, "%d %d:", a, b);
			for (int k = 0; k < fnn_design_nics(d, a); k++) {
				const struct fnn_nic_addr *x = fnn_addr(m, b, fnn_advanced_remote(t, a, b, k));
				fprintf(f, " %s", x ? x->mac : "-");
			}
			fputc('\n', f);
		}
	return ferror(f) ? 1 : 0;
}

static int cmd_advanced(const struct opts *o, const char *table)
{
	struct fnn_design d;
	struct fnn_advanced t;
	int rc = load_table(table, o->pcs, &d);
	if (rc)
		return rc;
	rc = 1;
	if (!fnn_advanced_build(&t, &d)) {
		size_t macb = 0;
		for (int pc = 0; pc < d.npcs; pc++)
			if (fnn_advanced_mac_node_bytes(&d, pc) > macb)
				macb = fnn_advanced_mac_node_bytes(&d, pc);
		fprintf(stderr, "fnn: per-node table %zu bytes (%d-bit fields, %d-byte tuples); "
			"MAC-lookup variant %zu bytes\n", fnn_advanced_node_bytes(&t), t.bits,
			t.bytes, macb);
		FILE *f = open_out(o);
		if (f && o->mac) {
			struct fnn_addrmap m;
			rc = load_addrs(o, &d, &m);
			if (!rc) {
				rc = print_mac_table(&d, &t, &m, f);
				fnn_addrmap_free(&m);
			}
			rc |= close_out(o, f);
		} else {
			rc = f ? (fnn_advanced_print(&t, f) ? 1 : 0) | close_out(o, f) : 1;
		}
		fnn_advanced_free(&t);
	}
	fnn_design_free(&d);
	return rc;
}

static int cmd_stripe(const struct opts *o, const char *table, const char *me_s,
		      const char *peer_s)
{
	struct fnn_design d;
	struct fnn_routes r;
	struct fnn_addrmap m;
	struct fnn_stripe st[FNN_MAX_NICS];
	if (!me_s || !peer_s) {
		fprintf(stderr, "fnn: stripe needs TABLE ME PEER\n");
		return 2;
	}
	int rc = load_table(table, o->pcs, &d);
	if (rc)
		return rc;
	int me = (int)num("me", me_s, 0, d.npcs - 1), peer = (int)num("peer", peer_s, 0, d.npcs - 1);
	rc = 1;
	if (fnn_routes_build(&r, &d, NULL))
		goto out_d;
	if (load_addrs(o, &d, &m))
		goto out_r;
	int n = fnn_stripe_pairs(&d, &r, &m, me, peer, st, FNN_MAX_NICS);
	for (int i = 0; i < n && i < FNN_MAX_NICS; i++)
		printf("switch %d: local nic %d (%s %s) -> remote nic %d (%s %s)\n", st[i].sw,
		       st[i].local_nic, st[i].local ? st[i].local->ifname : "?",
		       st[i].local ? st[i].local->ip : "?", st[i].remote_nic,
		       st[i].remote ? st[i].remote->ip : "?", st[i].remote ? st[i].remote->mac : "?");
	rc = n > 0 ? 0 : 1;
	if (n == 0)
		fprintf(stderr, "fnn: PCs %d and %d share no switch\n", me, peer);
	fnn_addrmap_free(&m);
out_r:
	fnn_routes_free(&r);
out_d:
	fnn_design_free(&d);
	return rc;
}

int main(int argc, char **argv)
{
	struct opts o;
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
		usage(stdout);
		return 0;
	}
	int rc = parse_opts(argc - 1, argv + 1, &o);
	if (rc)
		return rc;
	char **args = argv + 1 + optind;
	int nargs = argc - 1 - optind;
	const char *a0 = nargs > 0 ? args[0] : NULL;
	if (!strcmp(cmd, "design"))
		return cmd_design(&o);
	if (!strcmp(cmd, "analyze"))
		return cmd_analyze(&o, a0);
	if (!strcmp(cmd, "bound"))
		return cmd_bound(&o);
	if (!strcmp(cmd, "labels"))
		return cmd_labels(&o, a0);
	if (!strcmp(cmd, "addrs"))
		return cmd_addrs(&o, a0);
	if (!strcmp(cmd, "routes"))
		return cmd_routes(&o, a0);
	if (!strcmp(cmd, "advanced"))
		return cmd_advanced(&o, a0);
	if (!strcmp(cmd, "stripe"))
		return cmd_stripe(&o, a0, nargs > 1 ? args[1] : NULL, nargs > 2 ? args[2] : NULL);
	fprintf(stderr, "fnn: unknown command \"%s\"\n", cmd);
	usage(stderr);
	return 2;
}
