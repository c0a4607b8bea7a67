/*
 * ft_cli.c - ftroute: generate, read, degrade and route fat-trees; check and measure
 * forwarding tables (ours or OpenSM's); write them for OpenSM. Run with --help.
 */
#include "ft_route.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
"usage: ftroute [options]\n"
"fabric (one of):\n"
"  -g, --pgft SPEC          generate PGFT 'h;m1,..;w1,..;p1,..' or 'rlft:LEVELS:RADIX'\n"
"  -t, --topo FILE          read an ibnetdiscover/ibsim topology (with -g: check it is\n"
"                           that complete PGFT so dmodk can route it)\n"
"degradation:\n"
"  --degrade-links X        remove X switch cables (X<1 or X%%: a fraction)\n"
"  --degrade-switches X     remove X non-leaf switches (X<1 or X%%: a fraction)\n"
"  --degrade-list FILE      remove 'link <guid|name> <port>' / 'switch <guid|name>' lines\n"
"  --seed N                 random seed (default 1)\n"
"  -o, --out FILE           write the (degraded) topology, ibnetdiscover format\n"
"routing:\n"
"  -e, --engine NAME        dmodc (default), dmodk, minhop; --list-engines\n"
"  -j, --threads N          worker threads (default: online CPUs)\n"
"  --updown                 dmodc: up-down cost variant (down-only costs for down groups)\n"
"  --spread                 dmodc: keep complete-fabric up choices, spread displaced nodes\n"
"                           over the remaining closer groups (not in the paper)\n"
"  -n, --no-route           stop after writing the topology\n"
"  --load-lft FILE          do not route: read tables from an OpenSM/ftroute LFT dump\n"
"  --reroute                route the intact fabric with dmodc, then re-route the degraded\n"
"                           one keeping every still-valid minimal entry; print changes\n"
"output and measures:\n"
"  --lft FILE               write tables in opensm-lfts.dump format (opensm -R file -U)\n"
"  --lids FILE              LIDs from an OpenSM guid2lid file or lfts dump (default:\n"
"                           nodes 1..N, then switches)\n"
"  --no-switch-lids         do not route switch LIDs in the dump\n"
"  -c, --check              validity, up-down, minimality, loops, deadlock (CDG)\n"
"  --shifts N               shift permutations (0: all N-1)\n"
"  --a2a                    all-to-all\n"
"  --perms N                random permutations\n"
"  --pattern FILE           pairs 'src dst' (index, 0xGUID or node name)\n"
"  -q, --quality            shorthand: --shifts 0 (sampled to 512 above 512 nodes),\n"
"                           --perms 16, --a2a up to 4096 nodes\n";

struct cli {
	const char *pgft, *topo, *out, *engine, *lft, *lids, *load_lft, *pattern, *dlist;
	const char *dlinks, *dswitches;
	uint64_t seed;
	int threads, updown, spread, no_route, reroute, no_swlids, check, a2a, quality;
	long shifts, perms;
};

static void die(const char *msg)
{
	fprintf(stderr, "ftroute: %s\n", msg);
	exit(1);
}

static FILE *xopen(const char *path, const char *mode)
{
	if (!strcmp(path, "-"))
		return mode[0] == 'r' ? stdin : stdout;
	FILE *f = fopen(path, mode);
	if (!f) {
		fprintf(stderr, "ftroute: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	return f;
}

static void xclose(FILE *f)
{
	if (f != stdin && f != stdout && fclose(f))
		die("write error");
}

static void amount(const char *s, double *frac, long *count)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || v < 0)
		die("bad degradation amount");
	if (*end == '%')
		*frac = v / 100;
	else if (v < 1 && v > 0)
		*frac = v;
	else
		*count = (long)v;
}

static void parse_args(int argc, char **argv, struct cli *c)
{
	enum { O_DL = 256, O_DS, O_DLIST, O_SEED, O_UPDOWN, O_LOAD, O_REROUTE, O_LFT, O_LIDS, O_NOSW,
	       O_SHIFTS, O_A2A, O_PERMS, O_PATTERN, O_LIST, O_SPREAD };
	static const struct option opts[] = {
		{ "pgft", 1, 0, 'g' }, { "topo", 1, 0, 't' }, { "out", 1, 0, 'o' },
		{ "engine", 1, 0, 'e' }, { "threads", 1, 0, 'j' }, { "no-route", 0, 0, 'n' },
		{ "check", 0, 0, 'c' }, { "quality", 0, 0, 'q' }, { "help", 0, 0, 'h' },
		{ "degrade-links", 1, 0, O_DL }, { "degrade-switches", 1, 0, O_DS },
		{ "degrade-list", 1, 0, O_DLIST }, { "seed", 1, 0, O_SEED }, { "updown", 0, 0, O_UPDOWN },
		{ "load-lft", 1, 0, O_LOAD }, { "reroute", 0, 0, O_REROUTE }, { "lft", 1, 0, O_LFT },
		{ "lids", 1, 0, O_LIDS }, { "no-switch-lids", 0, 0, O_NOSW }, { "shifts", 1, 0, O_SHIFTS },
		{ "a2a", 0, 0, O_A2A }, { "perms", 1, 0, O_PERMS }, { "pattern", 1, 0, O_PATTERN },
		{ "list-engines", 0, 0, O_LIST }, { "spread", 0, 0, O_SPREAD }, { 0, 0, 0, 0 },
	};
	memset(c, 0, sizeof(*c));
	c->engine = "dmodc";
	c->seed = 1;
	c->shifts = c->perms = -1;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	c->threads = ncpu > 0 ? (int)ncpu : 1;
	int o;
	while ((o = getopt_long(argc, argv, "g:t:o:e:j:ncqh", opts, NULL)) != -1) {
		switch (o) {
		case 'g': c->pgft = optarg; break;
		case 't': c->topo = optarg; break;
		case 'o': c->out = optarg; break;
		case 'e': c->engine = optarg; break;
		case 'j': c->threads = atoi(optarg) > 0 ? atoi(optarg) : 1; break;
		case 'n': c->no_route = 1; break;
		case 'c': c->check = 1; break;
		case 'q': c->quality = 1; break;
		case O_DL: c->dlinks = optarg; break;
		case O_DS: c->dswitches = optarg; break;
		case O_DLIST: c->dlist = optarg; break;
		case O_SEED: c->seed = strtoull(optarg, NULL, 0); break;
		case O_UPDOWN: c->updown = 1; break;
		case O_SPREAD: c->spread = 1; break;
		case O_LOAD: c->load_lft = optarg; break;
		case O_REROUTE: c->reroute = 1; break;
		case O_LFT: c->lft = optarg; break;
		case O_LIDS: c->lids = optarg; break;
		case O_NOSW: c->no_swlids = 1; break;
		case O_SHIFTS: c->shifts = atol(optarg); break;
		case O_A2A: c->a2a = 1; break;
		case O_PERMS: c->perms = atol(optarg); break;
		case O_PATTERN: c->pattern = optarg; break;
		case O_LIST:
			for (const struct ft_engine *const *e = ft_engine_list(); *e; e++)
				printf("%-8s %s\n", (*e)->name, (*e)->help);
			exit(0);
		case 'h': fputs(usage, stdout); exit(0);
		default: fputs(usage, stderr); exit(2);
		}
	}
	if (optind != argc || (!c->pgft && !c->topo)) {
		fputs(usage, stderr);
		exit(2);
	}
}

static struct ft_topo *load_fabric(const struct cli *c)
{
	char err[512];
	struct ft_topo *t = NULL;
	struct ft_pgft pg;
	if (c->pgft && ft_pgft_parse(c->pgft, &pg, err, sizeof(err)))
		die(err);
	if (c->topo) {
		FILE *f = xopen(c->topo, "r");
		if (ft_ibnd_read(f, c->topo, &t, err, sizeof(err)))
			die(err);
		xclose(f);
		if (c->pgft && ft_pgft_attach(t, &pg, err, sizeof(err)))
			die(err);
	} else if (!(t = ft_pgft_build(&pg, err, sizeof(err)))) {
		die(err);
	}
	return t;
}

static void degrade(const struct cli *c, struct ft_topo *t)
{
	char err[512];
	long removed = 0;
	if (c->dlinks || c->dswitches) {
		struct ft_degrade_opts o = { .seed = c->seed };
		if (c->dlinks)
			amount(c->dlinks, &o.link_fraction, &o.link_count);
		if (c->dswitches)
			amount(c->dswitches, &o.switch_fraction, &o.switch_count);
		long n = ft_degrade_random(t, &o);
		if (n < 0)
			die("degradation failed");
		removed += n;
	}
	if (c->dlist) {
		FILE *f = xopen(c->dlist, "r");
		long n = ft_degrade_file(t, f, c->dlist, err, sizeof(err));
		if (n < 0)
			die(err);
		xclose(f);
		removed += n;
	}
	if (c->dlinks || c->dswitches || c->dlist)
		printf("degraded: cables_removed=%ld\n", removed);
}

static void describe(const struct ft_topo *t)
{
	char pg[128] = "-";
	if (t->has_pgft)
		ft_pgft_format(&t->pgft, pg, sizeof(pg));
	printf("fabric: %s switches=%d nodes=%d leaves=%d levels=%d cables=%ld unreachable_nodes=%ld\n", pg,
	       t->nsw, t->nnodes, t->nleaves, t->maxrank + 1, ft_topo_count_switch_links(t),
	       ft_unreachable_nodes(t));
}

static void measure(const struct cli *c, const struct ft_topo *t, const struct ft_routes *r)
{
	char err[512];
	struct ft_quality q;
	long shifts = c->shifts, perms = c->perms;
	int a2a = c->a2a;
	if (c->quality) {
		if (shifts < 0)
			shifts = t->nnodes > 512 ? 512 : 0;
		if (perms < 0)
			perms = 16;
		a2a |= t->nnodes <= 4096;
	}
	if (c->check) {
		struct ft_check k;
		if (ft_check_routes(t, r, c->threads, &k))
			die("check: out of memory");
		printf("check: invalid_pairs=%ld unreachable_nodes=%ld nonminimal=%ld updown_violations=%ld "
		       "loops=%ld deadlock=%s cdg_channels=%ld cdg_edges=%ld max_hops=%d updown_unreachable_pairs=%ld\n",
		       k.invalid_pairs, k.unreachable_nodes, k.nonminimal, k.updown_violations, k.loops,
		       k.deadlock ? "yes" : "no", k.cdg_channels, k.cdg_edges, k.max_hops, k.updown_unreachable);
	}
	if (shifts >= 0 && t->nnodes > 1 && !ft_quality_shift(t, r, shifts, c->threads, &q))
		ft_quality_print(stdout, &q);
	if (a2a && t->nnodes > 1 && !ft_quality_all2all(t, r, c->threads, &q))
		ft_quality_print(stdout, &q);
	if (perms > 0 && !ft_quality_randperm(t, r, perms, c->seed, c->threads, &q))
		ft_quality_print(stdout, &q);
	if (c->pattern) {
		struct ft_pairs p;
		FILE *f = xopen(c->pattern, "r");
		if (ft_pairs_read(t, f, c->pattern, &p, err, sizeof(err)))
			die(err);
		xclose(f);
		if (!ft_quality_pairs(t, r, &p, &q))
			ft_quality_print(stdout, &q);
		ft_pairs_free(&p);
	}
}

static void write_lft(const struct cli *c, const struct ft_topo *t, struct ft_routes *r)
{
	char err[512];
	struct ft_lids l;
	if (c->lids) {
		FILE *f = xopen(c->lids, "r");
		if (ft_lids_read(t, f, c->lids, &l, err, sizeof(err)))
			die(err);
		xclose(f);
	} else if (ft_lids_default(t, &l)) {
		die("too many ports for the unicast LID range");
	}
	double t0 = ft_now();
	if (!c->no_swlids && ft_route_switches(t, r, c->threads))
		die("out of memory routing switch LIDs");
	double t1 = ft_now();
	FILE *f = xopen(c->lft, "w");
	if (ft_lft_write(f, t, r, &l))
		die("cannot write the LFT dump");
	xclose(f);
	printf("lft: file=%s switch_lid_routing=%.6f s write=%.6f s\n", c->lft, t1 - t0, ft_now() - t1);
	ft_lids_free(&l);
}

int main(int argc, char **argv)
{
	struct cli c;
	char err[512];
	parse_args(argc, argv, &c);
	struct ft_topo *t = load_fabric(&c);
	struct ft_topo *intact = c.reroute ? ft_topo_clone(t) : NULL;
	if (c.reroute && !intact)
		die("out of memory");
	degrade(&c, t);
	describe(t);
	if (c.out) {
		FILE *f = xopen(c.out, "w");
		if (ft_ibnd_write(f, t))
			die("cannot write the topology");
		xclose(f);
	}
	if (c.no_route) {
		ft_topo_free(t);
		return 0;
	}
	struct ft_routes r;
	struct ft_route_opts o = { .threads = c.threads, .updown_cost = c.updown, .spread = c.spread };
	const struct ft_engine *e = ft_engine_find(c.engine);
	if (c.load_lft) {
		FILE *f = xopen(c.load_lft, "r");
		if (ft_lft_read(t, f, c.load_lft, &r, err, sizeof(err)))
			die(err);
		xclose(f);
		printf("route: loaded=%s\n", c.load_lft);
	} else if (c.reroute) {
		struct ft_routes old, full;
		if (ft_route(&ft_engine_dmodc, intact, &o, &old, err, sizeof(err)) ||
		    ft_route(&ft_engine_dmodc, t, &o, &full, err, sizeof(err)))
			die(err);
		long changed = ft_reroute_minimal(t, &old, &o, &r, err, sizeof(err));
		if (changed < 0)
			die(err);
		long full_changed = 0;
		for (size_t i = 0; i < (size_t)t->nsw * t->nnodes; i++)
			full_changed += old.lft[i] != full.lft[i];
		printf("reroute: entries=%ld changed_minimal=%ld changed_full_dmodc=%ld time=%.6f s\n",
		       (long)t->nsw * t->nnodes, changed, full_changed, r.seconds);
		ft_routes_free(&old);
		ft_routes_free(&full);
	} else {
		if (!e)
			die("unknown engine (see --list-engines)");
		if (ft_route(e, t, &o, &r, err, sizeof(err)))
			die(err);
		printf("route: engine=%s threads=%d time=%.6f s cpu=%.6f s\n", e->name, c.threads, r.seconds,
		       r.cpu_seconds);
	}
	if (c.lft)
		write_lft(&c, t, &r);
	measure(&c, t, &r);
	ft_routes_free(&r);
	ft_topo_free(intact);
	ft_topo_free(t);
	return 0;
}
