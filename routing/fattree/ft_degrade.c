/*
 * ft_degrade.c - remove cables and switches, at random (seeded) or from a list.
 * A removed switch loses every switch-to-switch cable but keeps its nodes, so node
 * numbering (and so forwarding-table indices) stays the same as in the intact fabric.
 */
#include "ft_topo.h"
#include "common/sm_err.h"
#include "common/sm_rng.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static long remove_switch(struct ft_topo *t, int s)
{
	long n = 0;
	for (int p = 1; p <= t->sw[s].nports; p++)
		if (t->sw[s].port[p].kind == FT_SWITCH) {
			ft_topo_unlink(t, s, p);
			n++;
		}
	t->sw[s].removed = 1;
	return n;
}

static long pick(double fraction, long count, long total)
{
	long k = count > 0 ? count : (long)(fraction * (double)total + 0.5);
	return k > total ? total : k < 0 ? 0 : k;
}

long ft_degrade_random(struct ft_topo *t, const struct ft_degrade_opts *o)
{
	uint64_t x = o->seed;
	long removed = 0;
	/* switches first (non-leaf ones), then cables among what is left */
	int *sws = malloc(sizeof(int) * (size_t)(t->nsw + 1));
	if (!sws)
		return -ENOMEM;
	int ns = 0;
	for (int s = 0; s < t->nsw; s++)
		if (t->sw[s].leaf < 0 && !t->sw[s].removed)
			sws[ns++] = s;
	long ks = pick(o->switch_fraction, o->switch_count, ns);
	for (long i = 0; i < ks; i++) {
		long j = i + (long)(sm_rng_next(&x) % (uint64_t)(ns - i));
		int tmp = sws[i];
		sws[i] = sws[j];
		sws[j] = tmp;
		removed += remove_switch(t, sws[i]);
	}
	free(sws);
	long nl = ft_topo_count_switch_links(t);
	struct { int s, p; } *links = malloc(sizeof(*links) * (size_t)(nl + 1));
	if (!links)
		return -ENOMEM;
	long k = 0;
	for (int s = 0; s < t->nsw; s++)
		for (int p = 1; p <= t->sw[s].nports; p++) {
			const struct ft_link *l = &t->sw[s].port[p];
			if (l->kind == FT_SWITCH && ((int)l->idx > s || ((int)l->idx == s && l->rport > p))) {
				links[k].s = s;
				links[k++].p = p;
			}
		}
	long kl = pick(o->link_fraction, o->link_count, nl);
	for (long i = 0; i < kl; i++) {
		long j = i + (long)(sm_rng_next(&x) % (uint64_t)(nl - i));
		__typeof__(links[0]) tmp = links[i];
		links[i] = links[j];
		links[j] = tmp;
		ft_topo_unlink(t, links[i].s, links[i].p);
		removed++;
	}
	free(links);
	if (removed)
		t->has_pgft = 0;
	int rc = ft_topo_finalize(t, NULL, 0);
	return rc ? rc : removed;
}

int ft_topo_find_switch(const struct ft_topo *t, const char *key)
{
	char *end;
	if (!strncmp(key, "0x", 2) || !strncmp(key, "S-", 2)) {
		uint64_t g = strtoull(key + 2, &end, 16);
		if (!*end)
			for (int s = 0; s < t->nsw; s++)
				if (t->sw[s].guid == g)
					return s;
	}
	for (int s = 0; s < t->nsw; s++)
		if (!strcmp(t->sw[s].name, key))
			return s;
	return -1;
}

long ft_degrade_file(struct ft_topo *t, FILE *f, const char *fname, char *err, size_t errlen)
{
	char line[1024], what[32], key[512];
	long lineno = 0, removed = 0;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		char *h = strchr(line, '#');
		if (h)
			*h = 0;
		int port = 0;
		int n = sscanf(line, " %31s \"%511[^\"]\" %d", what, key, &port);
		if (n < 2)
			n = sscanf(line, " %31s %511s %d", what, key, &port);
		if (n <= 0)
			continue;
		int s = n >= 2 ? ft_topo_find_switch(t, key) : -1;
		if (s < 0)
			return sm_err(err, errlen, -EINVAL,
				      "%s:%ld: no switch '%s' (expected 'link <guid|name> <port>' "
				      "or 'switch <guid|name>')",
				      fname, lineno, n >= 2 ? key : "");
		if (!strcmp(what, "switch")) {
			removed += remove_switch(t, s);
		} else if (!strcmp(what, "link") && n == 3) {
			if (port < 1 || port > t->sw[s].nports ||
			    t->sw[s].port[port].kind != FT_SWITCH)
				return sm_err(err, errlen, -EINVAL,
					      "%s:%ld: switch '%s' port %d is not cabled to a "
					      "switch",
					      fname, lineno, t->sw[s].name, port);
			ft_topo_unlink(t, s, port);
			removed++;
		} else {
			return sm_err(err, errlen, -EINVAL,
				      "%s:%ld: expected 'link <guid|name> <port>' or "
				      "'switch <guid|name>'",
				      fname, lineno);
		}
	}
	if (removed)
		t->has_pgft = 0;
	int rc = ft_topo_finalize(t, err, errlen);
	return rc ? rc : removed;
}
