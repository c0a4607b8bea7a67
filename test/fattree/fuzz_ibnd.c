/*
 * Fuzz target: the ibnetdiscover topology parser. Anything it accepts must write back
 * out and parse again to the same fabric; routing a small accepted fabric must not crash.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/fattree/ft_route.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	struct ft_topo *t = NULL;
	if (ft_ibnd_parse((const char *)data, size, "fuzz", &t, err, sizeof(err)))
		return 0;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (f) {
		ft_ibnd_write(f, t);
		fclose(f);
		struct ft_topo *u = NULL;
		if (ft_ibnd_parse(buf, len, "fuzz-rewrite", &u, err, sizeof(err)) ||
		    u->nsw != t->nsw || u->nnodes != t->nnodes ||
		    ft_topo_count_switch_links(u) != ft_topo_count_switch_links(t)) {
			fprintf(stderr, "round trip failed: %s\n", err);
			abort();
		}
		ft_topo_free(u);
	}
	free(buf);
	if (t->nsw <= 64 && t->nnodes <= 256) {
		struct ft_route_opts o = { .threads = 1, .keep_alternatives = 1 };
		struct ft_routes r;
		if (!ft_route(&ft_engine_dmodc, t, &o, &r, err, sizeof(err))) {
			struct ft_check k;
			ft_check_routes(t, &r, 1, &k);
			if (k.loops || k.nonminimal) {
				fprintf(stderr, "dmodc produced loops (%ld) or non-minimal routes (%ld)\n", k.loops,
					k.nonminimal);
				abort();
			}
			ft_routes_free(&r);
		}
	}
	ft_topo_free(t);
	return 0;
}
