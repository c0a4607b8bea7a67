/*
 * ft_pgft.c - Parallel Generalised Fat-Tree generator with the standard numbering.
 *
 * An element at level l (0 = nodes, 1..h = switches) has digits
 * (a_h..a_{l+1}, b_l..b_1), a_i < m_i, b_i < w_i; its index is that mixed-radix
 * number with a_h most significant. Element (a_h..a_l, b_{l-1}..b_1) at level l-1 is
 * cabled to the w_l switches (a_h..a_{l+1}, b_l, b_{l-1}..b_1) of level l, p_l cables
 * each. Port numbering of a level-l switch: down ports first, port 1 + j*m_l + a_l for
 * the j-th cable to child a_l; then up ports, port 1 + m_l*p_l + j*w_{l+1} + b_{l+1}.
 * So up port index q = j*w + b is the Dmodk port index p of Zahavi's formula.
 * GUIDs grow with the index inside a level, so sorting port groups by GUID (Dmodc)
 * gives the same order as the digits.
 */
#include "ft_topo.h"
#include "common/sm_err.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SW_GUID_BASE 0x0002c90000000000ull
#define CA_GUID_BASE 0x0002c9ff00000000ull

uint64_t ft_pgft_switch_guid(int level, long index)
{
	return SW_GUID_BASE | ((uint64_t)level << 32) | (uint64_t)index;
}

uint64_t ft_pgft_node_guid(long d)
{
	return CA_GUID_BASE + 2 * (uint64_t)d + 2;
}

/* Number of elements at level l. */
static long level_count(const struct ft_pgft *pg, int l)
{
	long n = 1;
	for (int k = l + 1; k <= pg->h; k++)
		n *= pg->m[k];
	for (int k = 1; k <= l; k++)
		n *= pg->w[k];
	return n;
}

long ft_pgft_nodes(const struct ft_pgft *pg)
{
	return level_count(pg, 0);
}

long ft_pgft_switches(const struct ft_pgft *pg)
{
	long n = 0;
	for (int l = 1; l <= pg->h; l++)
		n += level_count(pg, l);
	return n;
}

static int nports_at(const struct ft_pgft *pg, int l)
{
	int up = l < pg->h ? pg->w[l + 1] * pg->p[l + 1] : 0;
	return pg->m[l] * pg->p[l] + up;
}

static int validate(const struct ft_pgft *pg, char *err, size_t errlen)
{
	if (pg->h < 1 || pg->h > FT_PGFT_MAXH)
		return sm_err(err, errlen, -EINVAL, "PGFT height %d out of range 1..%d", pg->h,
			      FT_PGFT_MAXH);
	for (int l = 1; l <= pg->h; l++)
		if (pg->m[l] < 1 || pg->w[l] < 1 || pg->p[l] < 1)
			return sm_err(err, errlen, -EINVAL,
				      "PGFT level %d: m, w and p must be >= 1", l);
	if (pg->w[1] != 1 || pg->p[1] != 1)
		return sm_err(err, errlen, -EINVAL,
			      "PGFT: nodes must have a single port (w1 = p1 = 1)");
	double nodes = 1, sws = 0;
	for (int l = 1; l <= pg->h; l++) {
		if (nports_at(pg, l) > FT_MAX_PORTS)
			return sm_err(err, errlen, -EINVAL,
				      "PGFT level %d switches would need %d ports (max %d)", l,
				      nports_at(pg, l), FT_MAX_PORTS);
		nodes *= pg->m[l];
	}
	for (int l = 1; l <= pg->h; l++) {
		double c = 1;
		for (int k = l + 1; k <= pg->h; k++)
			c *= pg->m[k];
		for (int k = 1; k <= l; k++)
			c *= pg->w[k];
		sws += c;
	}
	if (nodes > 4e6 || sws > 1e6)
		return sm_err(err, errlen, -E2BIG, "PGFT too large (%.0f nodes, %.0f switches)",
			      nodes, sws);
	return 0;
}

static int parse_list(const char **pp, int *v, int n)
{
	const char *p = *pp;
	for (int i = 1; i <= n; i++) {
		char *end;
		long x = strtol(p, &end, 10);
		if (end == p || x < 1 || x > 65535)
			return -EINVAL;
		v[i] = (int)x;
		p = end;
		if (i < n) {
			if (*p != ',' && *p != '.')
				return -EINVAL;
			p++;
		}
	}
	*pp = p;
	return 0;
}

int ft_pgft_rlft(int levels, int radix, struct ft_pgft *pg, char *err, size_t errlen)
{
	if (levels < 2 || levels > 3 || radix < 4 || radix % 2 || radix > FT_MAX_PORTS)
		return sm_err(err, errlen, -EINVAL,
			      "real-life fat-tree needs 2 or 3 levels and an even radix 4..%d",
			      FT_MAX_PORTS);
	memset(pg, 0, sizeof(*pg));
	pg->h = levels;
	for (int l = 1; l <= levels; l++) {
		pg->m[l] = l == levels ? radix : radix / 2;
		pg->w[l] = l == 1 ? 1 : radix / 2;
		pg->p[l] = 1;
	}
	return validate(pg, err, errlen);
}

int ft_pgft_parse(const char *spec, struct ft_pgft *pg, char *err, size_t errlen)
{
	memset(pg, 0, sizeof(*pg));
	int lv, rx;
	char tail;
	if (sscanf(spec, "rlft:%d:%d%c", &lv, &rx, &tail) == 2)
		return ft_pgft_rlft(lv, rx, pg, err, errlen);
	const char *p = spec;
	if (!strncmp(p, "PGFT(", 5) || !strncmp(p, "pgft(", 5))
		p += 5;
	char *end;
	long h = strtol(p, &end, 10);
	if (end == p || h < 1 || h > FT_PGFT_MAXH || *end != ';')
		return sm_err(err, errlen, -EINVAL,
			      "bad PGFT spec '%s': expected h;m1,..,mh;w1,..,wh;p1,..,ph (h <= %d) "
			      "or rlft:L:K",
			      spec, FT_PGFT_MAXH);
	pg->h = (int)h;
	p = end + 1;
	int *lists[3] = { pg->m, pg->w, pg->p };
	for (int i = 0; i < 3; i++) {
		if (parse_list(&p, lists[i], pg->h) || (i < 2 && *p++ != ';'))
			return sm_err(err, errlen, -EINVAL,
				      "bad PGFT spec '%s': list %d needs %d positive integers",
				      spec, i + 1, pg->h);
	}
	if (*p == ')')
		p++;
	if (*p)
		return sm_err(err, errlen, -EINVAL, "bad PGFT spec '%s': trailing '%s'", spec, p);
	return validate(pg, err, errlen);
}

int ft_pgft_format(const struct ft_pgft *pg, char *buf, size_t len)
{
	size_t o = (size_t)snprintf(buf, len, "PGFT(%d", pg->h);
	const int *lists[3] = { pg->m, pg->w, pg->p };
	for (int i = 0; i < 3 && o < len; i++)
		for (int l = 1; l <= pg->h && o < len; l++)
			o += (size_t)snprintf(buf + o, len - o, "%c%d", l == 1 ? ';' : ',', lists[i][l]);
	if (o < len)
		snprintf(buf + o, len - o, ")");
	return 0;
}

/* Parent (level l) index of child x (level l-1) through its b_l-th upper switch. */
static long parent_of(const struct ft_pgft *pg, int l, long x, int b, int *a_l)
{
	long wlow = 1;
	for (int k = 1; k < l; k++)
		wlow *= pg->w[k];
	long B = x % wlow, A = x / wlow;
	*a_l = (int)(A % pg->m[l]);
	return ((A / pg->m[l]) * pg->w[l] + b) * wlow + B;
}

struct ft_topo *ft_pgft_build(const struct ft_pgft *pg, char *err, size_t errlen)
{
	if (validate(pg, err, errlen))
		return NULL;
	struct ft_topo *t = ft_topo_new();
	long first[FT_PGFT_MAXH + 2];
	long nsw = ft_pgft_switches(pg), nn = ft_pgft_nodes(pg);
	char name[64];
	if (!t)
		goto oom;
	t->sw = malloc(sizeof(*t->sw) * (size_t)(nsw + 1));
	t->node = malloc(sizeof(*t->node) * (size_t)(nn + 1));
	t->sw_level = malloc(sizeof(int) * (size_t)(nsw + 1));
	t->sw_index = malloc(sizeof(int) * (size_t)(nsw + 1));
	if (!t->sw || !t->node || !t->sw_level || !t->sw_index)
		goto oom;
	t->sw_cap = (int)nsw + 1;
	t->node_cap = (int)nn + 1;
	for (int l = 1; l <= pg->h; l++) {
		first[l] = t->nsw;
		for (long i = 0; i < level_count(pg, l); i++) {
			snprintf(name, sizeof(name), "sw-l%d-%ld", l, i);
			int s = ft_topo_add_switch(t, ft_pgft_switch_guid(l, i), name, nports_at(pg, l));
			if (s < 0)
				goto oom;
			t->sw_level[s] = l;
			t->sw_index[s] = (int)i;
		}
	}
	for (long d = 0; d < nn; d++) {
		snprintf(name, sizeof(name), "node%ld HCA-1", d);
		uint64_t g = ft_pgft_node_guid(d);
		if (ft_topo_add_node(t, g, g + 1, name, 1, 1) < 0)
			goto oom;
	}
	for (int l = 1; l <= pg->h; l++) {
		long nchild = level_count(pg, l - 1);
		int cdown = l >= 2 ? pg->m[l - 1] * pg->p[l - 1] : 0;
		for (long x = 0; x < nchild; x++)
			for (int b = 0; b < pg->w[l]; b++)
				for (int j = 0; j < pg->p[l]; j++) {
					int a;
					long par = parent_of(pg, l, x, b, &a);
					int s = (int)(first[l] + par);
					int pdown = 1 + j * pg->m[l] + a;
					int rc;
					if (l == 1)
						rc = ft_topo_link_node(t, s, pdown, (int)x, err, errlen);
					else
						rc = ft_topo_link_sw(t, (int)(first[l - 1] + x),
								     1 + cdown + j * pg->w[l] + b, s, pdown, err, errlen);
					if (rc)
						goto fail;
				}
	}
	t->has_pgft = 1;
	t->pgft = *pg;
	if (ft_topo_finalize(t, err, errlen))
		goto fail;
	return t;
oom:
	sm_err(err, errlen, -ENOMEM, "out of memory building PGFT");
fail:
	ft_topo_free(t);
	return NULL;
}

int ft_pgft_attach(struct ft_topo *t, const struct ft_pgft *pg, char *err, size_t errlen)
{
	struct ft_topo *ref = ft_pgft_build(pg, err, errlen);
	if (!ref)
		return -EINVAL;
	int rc = -EINVAL;
	if (ref->nsw != t->nsw || ref->nnodes != t->nnodes) {
		sm_err(err, errlen, rc,
		       "fabric has %d switches and %d nodes, the PGFT has %d and %d", t->nsw,
		       t->nnodes, ref->nsw, ref->nnodes);
		goto out;
	}
	int *map = malloc(sizeof(int) * (size_t)t->nsw);   /* ref switch -> t switch */
	free(t->sw_level);
	free(t->sw_index);
	t->sw_level = malloc(sizeof(int) * (size_t)t->nsw);
	t->sw_index = malloc(sizeof(int) * (size_t)t->nsw);
	if (!map || !t->sw_level || !t->sw_index) {
		free(map);
		rc = -ENOMEM;
		goto out;
	}
	for (int s = 0; s < t->nsw; s++)
		map[s] = -1;
	for (int s = 0; s < t->nsw; s++) {
		uint64_t g = t->sw[s].guid;
		int l = (int)((g >> 32) & 0xff);
		long i = (long)(g & 0xffffffffu);
		long k = -1;
		if ((g & ~0xffffffffffull) == SW_GUID_BASE && l >= 1 && l <= pg->h && i < level_count(pg, l)) {
			k = i;
			for (int m = 1; m < l; m++)
				k += level_count(pg, m);
		}
		if (k < 0 || map[k] >= 0) {
			sm_err(err, errlen, rc,
			       "switch '%s' (guid 0x%016llx) is not a switch of the generated PGFT",
			       t->sw[s].name, (unsigned long long)g);
			free(map);
			goto out;
		}
		map[k] = s;
		t->sw_level[s] = l;
		t->sw_index[s] = (int)i;
	}
	for (int r = 0; r < ref->nsw; r++) {
		const struct ft_switch *a = &ref->sw[r], *b = &t->sw[map[r]];
		for (int p = 1; p <= a->nports; p++) {
			const struct ft_link *x = &a->port[p];
			const struct ft_link *y = p <= b->nports ? &b->port[p] : NULL;
			int ok = y && x->kind == y->kind && x->rport == y->rport;
			if (ok && x->kind == FT_SWITCH)
				ok = map[x->idx] == (int)y->idx;
			if (ok && x->kind == FT_NODE)
				ok = ref->node[x->idx].port_guid == t->node[y->idx].port_guid;
			if (!ok) {
				sm_err(err, errlen, rc,
				       "not a complete PGFT: switch '%s' port %d differs", b->name,
				       p);
				free(map);
				goto out;
			}
		}
	}
	free(map);
	t->has_pgft = 1;
	t->pgft = *pg;
	rc = 0;
out:
	ft_topo_free(ref);
	return rc;
}
