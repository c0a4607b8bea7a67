/*
 * ft_lft.c - forwarding tables in OpenSM's opensm-lfts.dump format, shared by every
 * engine, and LID maps:
 *
 *   Unicast lids [0-4] of switch Lid 1 guid 0x0002c90000000011 ('leafA'):
 *   0x0001 000 # Switch portguid 0x0002c90000000011: 'leafA'
 *   0x0002 001 # Channel Adapter portguid 0x0002c90000000101: 'h1 HCA-1'
 *   4 lids dumped
 *
 * OpenSM's file routing engine (opensm -R file -U <dump>) loads this format, and reading
 * a dump back (ours or OpenSM's) lets one quality tool compare every engine.
 */
#include "ft_route.h"
#include "common/sm_err.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void ft_lids_free(struct ft_lids *l)
{
	free(l->sw_lid);
	free(l->node_lid);
	memset(l, 0, sizeof(*l));
}

static int lids_alloc(const struct ft_topo *t, struct ft_lids *l)
{
	memset(l, 0, sizeof(*l));
	l->nsw = t->nsw;
	l->nnodes = t->nnodes;
	l->sw_lid = calloc((size_t)t->nsw + 1, sizeof(uint16_t));
	l->node_lid = calloc((size_t)t->nnodes + 1, sizeof(uint16_t));
	return l->sw_lid && l->node_lid ? 0 : -ENOMEM;
}

int ft_lids_default(const struct ft_topo *t, struct ft_lids *l)
{
	if (t->nnodes + t->nsw > 0xbfff)
		return -E2BIG;
	if (lids_alloc(t, l))
		return -ENOMEM;
	int lid = 1;
	for (int d = 0; d < t->nnodes; d++)
		l->node_lid[d] = (uint16_t)lid++;
	for (int s = 0; s < t->nsw; s++)
		l->sw_lid[s] = (uint16_t)lid++;
	l->max_lid = lid - 1;
	return 0;
}

/* GUID -> (kind, index) lookup by sorted array. */
struct gent { uint64_t guid; int kind, idx; };

static int cmp_gent(const void *a, const void *b)
{
	const struct gent *x = a, *y = b;
	return x->guid < y->guid ? -1 : x->guid > y->guid;
}

static struct gent *guid_index(const struct ft_topo *t)
{
	struct gent *g = malloc(sizeof(*g) * (size_t)(t->nsw + t->nnodes + 1));
	if (!g)
		return NULL;
	int k = 0;
	for (int s = 0; s < t->nsw; s++)
		g[k++] = (struct gent){ t->sw[s].guid, FT_SWITCH, s };
	for (int d = 0; d < t->nnodes; d++)
		g[k++] = (struct gent){ t->node[d].port_guid, FT_NODE, d };
	qsort(g, (size_t)k, sizeof(*g), cmp_gent);
	return g;
}

static const struct gent *guid_find(const struct ft_topo *t, const struct gent *g, uint64_t guid)
{
	struct gent key = { .guid = guid };
	return bsearch(&key, g, (size_t)(t->nsw + t->nnodes), sizeof(*g), cmp_gent);
}

int ft_lids_read(const struct ft_topo *t, FILE *f, const char *fname, struct ft_lids *l, char *err,
		 size_t errlen)
{
	struct gent *g = guid_index(t);
	if (!g || lids_alloc(t, l)) {
		free(g);
		return -ENOMEM;
	}
	char line[1024];
	long lineno = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long guid, lid, lid2;
		unsigned port;
		char *pg;
		lineno++;
		if (sscanf(line, "0x%llx 0x%llx 0x%llx", &guid, &lid, &lid2) == 3) {
			/* guid2lid cache line */
		} else if (sscanf(line, "0x%llx %u", &lid, &port) == 2 && (pg = strstr(line, "portguid 0x"))) {
			guid = strtoull(pg + 11, NULL, 16);
		} else {
			continue;
		}
		if (lid < 1 || lid > 0xbfff) {
			sm_err(err, errlen, -EINVAL, "%s:%ld: LID 0x%llx out of the unicast range",
			       fname, lineno, lid);
			goto fail;
		}
		const struct gent *e = guid_find(t, g, guid);
		if (!e)
			continue;   /* a port the topology does not know (e.g. a router): ignore */
		if (e->kind == FT_SWITCH)
			l->sw_lid[e->idx] = (uint16_t)lid;
		else
			l->node_lid[e->idx] = (uint16_t)lid;
		if ((int)lid > l->max_lid)
			l->max_lid = (int)lid;
	}
	free(g);
	for (int d = 0; d < t->nnodes; d++)
		if (!l->node_lid[d] && t->node[d].sw >= 0) {
			ft_lids_free(l);
			return sm_err(err, errlen, -ENOENT,
				      "%s: no LID for node '%s' (port GUID 0x%016llx)", fname,
				      t->node[d].name, (unsigned long long)t->node[d].port_guid);
		}
	return 0;
fail:
	free(g);
	ft_lids_free(l);
	return -EINVAL;
}

int ft_lft_write(FILE *f, const struct ft_topo *t, const struct ft_routes *r, const struct ft_lids *l)
{
	/* LID -> destination, to write entries in LID order */
	int *dest = malloc(sizeof(int) * (size_t)(l->max_lid + 1));
	if (!dest)
		return -ENOMEM;
	for (int i = 0; i <= l->max_lid; i++)
		dest[i] = -1;
	for (int d = 0; d < t->nnodes; d++)
		if (l->node_lid[d])
			dest[l->node_lid[d]] = d;
	for (int s = 0; s < t->nsw; s++)
		if (l->sw_lid[s])
			dest[l->sw_lid[s]] = t->nnodes + s;
	for (int s = 0; s < t->nsw; s++) {
		const struct ft_switch *sw = &t->sw[s];
		long n = 0;
		fprintf(f, "Unicast lids [0-%d] of switch Lid %u guid 0x%016llx ('%s'):\n", l->max_lid,
			l->sw_lid[s], (unsigned long long)sw->guid, sw->name);
		for (int lid = 1; lid <= l->max_lid; lid++) {
			int x = dest[lid];
			if (x < 0)
				continue;
			if (x < t->nnodes) {
				uint8_t p = r->lft[(size_t)s * t->nnodes + x];
				if (p == FT_NO_PATH)
					continue;
				fprintf(f, "0x%04x %03u # Channel Adapter portguid 0x%016llx: '%s'\n", lid, p,
					(unsigned long long)t->node[x].port_guid, t->node[x].name);
			} else {
				int u = x - t->nnodes;
				uint8_t p = r->swlft ? r->swlft[(size_t)s * t->nsw + u] : (u == s ? 0 : FT_NO_PATH);
				if (p == FT_NO_PATH)
					continue;
				fprintf(f, "0x%04x %03u # Switch portguid 0x%016llx: '%s'\n", lid, p,
					(unsigned long long)t->sw[u].guid, t->sw[u].name);
			}
			n++;
		}
		fprintf(f, "%ld lids dumped\n", n);
	}
	free(dest);
	return ferror(f) ? -EIO : 0;
}

int ft_lft_read(const struct ft_topo *t, FILE *f, const char *fname, struct ft_routes *r, char *err,
		size_t errlen)
{
	struct gent *g = guid_index(t);
	if (!g || ft_routes_alloc(r, t)) {
		free(g);
		return -ENOMEM;
	}
	char line[1024];
	long lineno = 0;
	int s = -1;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (!strncmp(line, "Unicast lids", 12)) {
			char *p = strstr(line, " guid 0x");
			const struct gent *e = p ? guid_find(t, g, strtoull(p + 8, NULL, 16)) : NULL;
			if (!e || e->kind != FT_SWITCH) {
				sm_err(err, errlen, -EINVAL,
				       "%s:%ld: switch GUID not in the topology", fname, lineno);
				goto fail;
			}
			s = e->idx;
			continue;
		}
		unsigned long long lid;
		unsigned port;
		char *pg = strstr(line, "portguid 0x");
		if (sscanf(line, "0x%llx %u", &lid, &port) != 2)
			continue;
		if (s < 0 || !pg) {
			sm_err(err, errlen, -EINVAL,
			       "%s:%ld: LFT entry outside a switch block or without its portguid",
			       fname, lineno);
			goto fail;
		}
		const struct gent *e = guid_find(t, g, strtoull(pg + 11, NULL, 16));
		if (!e || e->kind != FT_NODE)
			continue;
		if (port > FT_MAX_PORTS) {
			sm_err(err, errlen, -EINVAL, "%s:%ld: port %u out of range", fname, lineno,
			       port);
			goto fail;
		}
		r->lft[(size_t)s * t->nnodes + e->idx] = (uint8_t)port;
	}
	free(g);
	return 0;
fail:
	free(g);
	ft_routes_free(r);
	return -EINVAL;
}
