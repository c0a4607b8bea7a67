/* fnn_route.c - basic routing: one path per pair, balanced over NICs; writers. */
#include "fnn.h"
#include "fnn_util.h"
#include "common/sm_err.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct pair {
	int a, b, alts;
	float w;
};

static int cmp_pair(const void *x, const void *y)
{
	const struct pair *p = x, *q = y;
	if (p->w != q->w)
		return p->w > q->w ? -1 : 1;
	if (p->alts != q->alts)
		return p->alts - q->alts;
	if (p->a != q->a)
		return p->a - q->a;
	return p->b - q->b;
}

void fnn_routes_free(struct fnn_routes *r)
{
	free(r->path);
	free(r->nic_load);
	memset(r, 0, sizeof(*r));
}

static int routes_alloc(struct fnn_routes *r, int npcs)
{
	memset(r, 0, sizeof(*r));
	r->npcs = npcs;
	r->path = malloc((size_t)(npcs ? npcs : 1) * (npcs ? npcs : 1) * sizeof(*r->path));
	r->nic_load = calloc((size_t)(npcs ? npcs : 1) * FNN_MAX_NICS, sizeof(int));
	if (!r->path || !r->nic_load) {
		fnn_routes_free(r);
		return -ENOMEM;
	}
	for (int i = 0; i < npcs * npcs; i++)
		r->path[i] = (struct fnn_path){ -1, -1, -1 };
	return 0;
}

static void set_path(struct fnn_routes *r, int a, int b, int sw, int na, int nb)
{
	r->path[a * r->npcs + b] = (struct fnn_path){ (int16_t)sw, (int8_t)na, (int8_t)nb };
	r->path[b * r->npcs + a] = (struct fnn_path){ (int16_t)sw, (int8_t)nb, (int8_t)na };
	r->nic_load[a * FNN_MAX_NICS + na]++;
	r->nic_load[b * FNN_MAX_NICS + nb]++;
}

/* The common switch whose two NICs carry the fewest paths so far. */
static void assign(struct fnn_routes *r, const struct fnn_design *d, int a, int b)
{
	int best = -1, best_load = 0, bna = 0, bnb = 0;
	for (int s = 0; s < d->nswitches; s++) {
		if (!fnn_design_has(d, a, s) || !fnn_design_has(d, b, s))
			continue;
		int na = fnn_switch_nic(d, a, s), nb = fnn_switch_nic(d, b, s);
		int la = r->nic_load[a * FNN_MAX_NICS + na], lb = r->nic_load[b * FNN_MAX_NICS + nb];
		int load = (la > lb ? la : lb) * 4096 + la + lb;
		if (best < 0 || load < best_load) {
			best = s;
			best_load = load;
			bna = na;
			bnb = nb;
		}
	}
	if (best >= 0)
		set_path(r, a, b, best, bna, bnb);
}

int fnn_routes_build(struct fnn_routes *r, const struct fnn_design *d,
		     const struct fnn_weights *w)
{
	int n = d->npcs;
	if (w && w->npatterns && w->npcs != n)
		return -EINVAL;
	int rc = routes_alloc(r, n);
	if (rc)
		return rc;
	size_t np = (size_t)n * (n > 0 ? n - 1 : 0) / 2, k = 0;
	struct pair *pairs = malloc((np ? np : 1) * sizeof(*pairs));
	if (!pairs) {
		fnn_routes_free(r);
		return -ENOMEM;
	}
	for (int a = 0; a < n; a++)
		for (int b = a + 1; b < n; b++) {
			float wt = w && w->npatterns ? w->w[a * n + b] : 0;
			pairs[k++] = (struct pair){ a, b, fnn_design_shared(d, a, b), wt };
		}
	qsort(pairs, np, sizeof(*pairs), cmp_pair);
	for (k = 0; k < np; k++)
		if (pairs[k].alts > 0)
			assign(r, d, pairs[k].a, pairs[k].b);
	free(pairs);
	return 0;
}

const struct fnn_path *fnn_route(const struct fnn_routes *r, int a, int b)
{
	if (a < 0 || b < 0 || a >= r->npcs || b >= r->npcs || a == b)
		return NULL;
	return &r->path[a * r->npcs + b];
}

int fnn_routes_print(const struct fnn_routes *r, FILE *out)
{
	fprintf(out, "# fnn routes: %d PCs; a b switch nic_a nic_b (-1: no common switch)\n",
		r->npcs);
	for (int a = 0; a < r->npcs; a++)
		for (int b = a + 1; b < r->npcs; b++) {
			const struct fnn_path *p = &r->path[a * r->npcs + b];
			fprintf(out, "%d %d %d %d %d\n", a, b, p->sw, p->nic_a, p->nic_b);
		}
	return ferror(out) ? -EIO : 0;
}

int fnn_routes_parse(struct fnn_routes *r, int npcs, const char *text, size_t len, char *err,
		     size_t errlen)
{
	struct fnn_cursor c = { text, len, 0 };
	int rc = routes_alloc(r, npcs);
	if (rc)
		return rc;
	for (int line = 1; fnn_cursor_peek(&c) != EOF && !rc; line++) {
		long v[5];
		static const char *field[5] = { "a", "b", "switch", "nic_a", "nic_b" };
		fnn_cursor_blank(&c);
		int ch = fnn_cursor_peek(&c);
		if (ch != '\n' && ch != '#' && ch != EOF) {
			for (int i = 0; i < 5 && !rc; i++) {
				fnn_cursor_blank(&c);
				long lo = i < 2 ? 0 : -1;
				long hi = i < 2 ? npcs - 1 : (i == 2 ? FNN_MAX_SWITCHES - 1 : FNN_MAX_NICS - 1);
				if (fnn_cursor_long(&c, &v[i]) || v[i] < lo || v[i] > hi)
					rc = sm_err(err, errlen, -EINVAL, "line %d: field %s must be %ld..%ld",
						     line, field[i], lo, hi);
			}
			if (!rc && v[0] == v[1])
				rc = sm_err(err, errlen, -EINVAL, "line %d: a PC routed to itself", line);
			if (!rc && v[2] >= 0 && (v[3] < 0 || v[4] < 0))
				rc = sm_err(err, errlen, -EINVAL, "line %d: switch without NICs", line);
			if (!rc && v[2] >= 0)
				set_path(r, (int)v[0], (int)v[1], (int)v[2], (int)v[3], (int)v[4]);
		}
		fnn_cursor_skip_line(&c);
	}
	if (rc)
		fnn_routes_free(r);
	return rc;
}

int fnn_routes_script(const struct fnn_routes *r, const struct fnn_design *d,
		      const struct fnn_addrmap *m, int pc, const char *prefix, FILE *out)
{
	fprintf(out, "#!/bin/sh\n# fnn basic routing for %s%d: ARP preload (no broadcasts on the "
		"FNN), one host route per peer\nset -e\n", prefix, pc);
	for (int peer = 0; peer < d->npcs; peer++) {
		if (peer == pc)
			continue;
		for (int s = 0; s < d->nswitches; s++) {
			if (!fnn_design_has(d, pc, s) || !fnn_design_has(d, peer, s))
				continue;
			const struct fnn_nic_addr *l = fnn_addr(m, pc, fnn_switch_nic(d, pc, s));
			const struct fnn_nic_addr *p = fnn_addr(m, peer, fnn_switch_nic(d, peer, s));
			if (l && p)
				fprintf(out, "ip neigh replace %s lladdr %s dev %s nud permanent\n",
					p->ip, p->mac, l->ifname);
		}
	}
	fprintf(out, "# host routes: the chosen path to each peer\n");
	for (int peer = 0; peer < d->npcs; peer++) {
		const struct fnn_path *p = fnn_route(r, pc, peer);
		if (!p || p->sw < 0)
			continue;
		const struct fnn_nic_addr *l = fnn_addr(m, pc, p->nic_a), *q = fnn_addr(m, peer, p->nic_b);
		if (l && q)
			fprintf(out, "ip route replace %s/32 dev %s src %s  # %s%d via switch %d\n",
				q->ip, l->ifname, l->ip, prefix, peer, p->sw);
	}
	fprintf(out, "# /etc/hosts for this host: each peer's name is its address on the path\n"
		"cat > /etc/hosts.fnn <<'EOF'\n");
	for (int peer = 0; peer < d->npcs; peer++) {
		const struct fnn_path *p = fnn_route(r, pc, peer);
		const struct fnn_nic_addr *q = p && p->sw >= 0 ? fnn_addr(m, peer, p->nic_b) : NULL;
		if (q)
			fprintf(out, "%s %s%d\n", q->ip, prefix, peer);
	}
	fprintf(out, "EOF\n");
	return ferror(out) ? -EIO : 0;
}
