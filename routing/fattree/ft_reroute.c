/*
 * ft_reroute.c - minimal-change re-routing after a fault. Dmodc is run on the degraded
 * fabric keeping its alternative ports P_{s,d} (every port to a closer switch); an old
 * entry is kept whenever its port is still in P_{s,d}, i.e. still valid and minimal
 * under up-down, otherwise Dmodc's own choice is taken. Every kept or new port leads
 * to a strictly closer switch, so routes stay minimal, loop-free and up-down.
 */
#include "ft_route.h"
#include "common/sm_err.h"

#include <errno.h>
#include <string.h>

long ft_reroute_minimal(const struct ft_topo *t, const struct ft_routes *old, const struct ft_route_opts *o,
			struct ft_routes *out, char *err, size_t errlen)
{
	if (old->nsw != t->nsw || old->nnodes != t->nnodes)
		return sm_err(err, errlen, -EINVAL,
			      "reroute: old tables are for %d switches x %d nodes, fabric has "
			      "%d x %d", old->nsw, old->nnodes, t->nsw, t->nnodes);
	struct ft_route_opts oo = *o;
	oo.keep_alternatives = 1;
	int rc = ft_route(&ft_engine_dmodc, t, &oo, out, err, errlen);
	if (rc)
		return rc;
	double t0 = ft_now();
	long changed = 0;
	for (int s = 0; s < t->nsw; s++) {
		uint8_t *row = out->lft + (size_t)s * t->nnodes;
		const uint8_t *orow = old->lft + (size_t)s * t->nnodes;
		for (int d = 0; d < t->nnodes; d++) {
			int l = ft_node_leaf(t, d);
			uint8_t p = orow[d];
			if (l >= 0 && t->sw[s].leaf != l && p <= t->sw[s].nports && p != row[d]) {
				const uint64_t *a = out->alt + ((size_t)s * out->nleaves + l) * out->alt_words;
				if (a[p >> 6] >> (p & 63) & 1)
					row[d] = p;
			}
			changed += row[d] != p;
		}
	}
	out->seconds += ft_now() - t0;
	return changed;
}
