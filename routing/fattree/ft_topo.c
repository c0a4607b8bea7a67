/*
 * ft_topo.c - building, finalising and copying fabric topologies.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* qsort_r */
#endif
#include "ft_topo.h"
#include "common/sm_err.h"
#include "common/sm_array.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct ft_topo *ft_topo_new(void)
{
	return calloc(1, sizeof(struct ft_topo));
}

static void free_derived(struct ft_topo *t)
{
	free(t->leaves);
	free(t->leaf_first);
	free(t->grp_off);
	free(t->grp);
	free(t->gport);
	free(t->gport_off);
	t->leaves = t->leaf_first = t->grp_off = t->gport_off = NULL;
	t->grp = NULL;
	t->gport = NULL;
}

void ft_topo_free(struct ft_topo *t)
{
	if (!t)
		return;
	for (int s = 0; s < t->nsw; s++) {
		free(t->sw[s].name);
		free(t->sw[s].port);
	}
	for (int n = 0; n < t->nnodes; n++)
		free(t->node[n].name);
	free(t->sw);
	free(t->node);
	free(t->sw_level);
	free(t->sw_index);
	free_derived(t);
	free(t);
}

int ft_topo_add_switch(struct ft_topo *t, uint64_t guid, const char *name, int nports)
{
	if (nports < 1 || nports > FT_MAX_PORTS)
		return -EINVAL;
	if (sm_grow(&t->sw, t->nsw, &t->sw_cap, sizeof(*t->sw)))
		return -ENOMEM;
	struct ft_switch *s = &t->sw[t->nsw];
	memset(s, 0, sizeof(*s));
	s->guid = guid;
	s->name = strdup(name ? name : "");
	s->nports = nports;
	s->port = calloc((size_t)nports + 1, sizeof(*s->port));
	s->leaf = -1;
	if (!s->name || !s->port) {
		free(s->name);
		free(s->port);
		return -ENOMEM;
	}
	return t->nsw++;
}

int ft_topo_add_node(struct ft_topo *t, uint64_t guid, uint64_t port_guid, const char *name,
		     int port, int nports)
{
	if (sm_grow(&t->node, t->nnodes, &t->node_cap, sizeof(*t->node)))
		return -ENOMEM;
	struct ft_node *n = &t->node[t->nnodes];
	memset(n, 0, sizeof(*n));
	n->guid = guid;
	n->port_guid = port_guid;
	n->name = strdup(name ? name : "");
	if (!n->name)
		return -ENOMEM;
	n->port = port;
	n->nports = nports;
	n->sw = -1;
	return t->nnodes++;
}

static int check_port(const struct ft_topo *t, int s, int p, char *err, size_t errlen)
{
	if (s < 0 || s >= t->nsw)
		return sm_err(err, errlen, -EINVAL, "no switch %d", s);
	if (p < 1 || p > t->sw[s].nports)
		return sm_err(err, errlen, -EINVAL, "switch '%s' has no port %d (it has %d)",
			      t->sw[s].name, p, t->sw[s].nports);
	if (t->sw[s].port[p].kind != FT_NONE)
		return sm_err(err, errlen, -EEXIST, "switch '%s' port %d is cabled twice",
			      t->sw[s].name, p);
	return 0;
}

int ft_topo_link_sw(struct ft_topo *t, int s1, int p1, int s2, int p2, char *err, size_t errlen)
{
	int rc = check_port(t, s1, p1, err, errlen);
	if (!rc)
		rc = check_port(t, s2, p2, err, errlen);
	if (rc)
		return rc;
	if (s1 == s2 && p1 == p2)
		return sm_err(err, errlen, -EINVAL, "switch '%s' port %d cabled to itself",
			      t->sw[s1].name, p1);
	t->sw[s1].port[p1] = (struct ft_link){ .kind = FT_SWITCH, .rport = (uint8_t)p2, .idx = (uint32_t)s2 };
	t->sw[s2].port[p2] = (struct ft_link){ .kind = FT_SWITCH, .rport = (uint8_t)p1, .idx = (uint32_t)s1 };
	return 0;
}

int ft_topo_link_node(struct ft_topo *t, int s, int p, int n, char *err, size_t errlen)
{
	int rc = check_port(t, s, p, err, errlen);
	if (rc)
		return rc;
	if (n < 0 || n >= t->nnodes)
		return sm_err(err, errlen, -EINVAL, "no node %d", n);
	if (t->node[n].sw >= 0)
		return sm_err(err, errlen, -EEXIST, "node '%s' port %d is cabled twice",
			      t->node[n].name, t->node[n].port);
	t->sw[s].port[p] = (struct ft_link){ .kind = FT_NODE, .rport = (uint8_t)t->node[n].port, .idx = (uint32_t)n };
	t->node[n].sw = s;
	t->node[n].sw_port = p;
	return 0;
}

void ft_topo_unlink(struct ft_topo *t, int s, int p)
{
	struct ft_link *l = &t->sw[s].port[p];
	if (l->kind == FT_SWITCH)
		t->sw[l->idx].port[l->rport] = (struct ft_link){ .kind = FT_NONE };
	else if (l->kind == FT_NODE)
		t->node[l->idx].sw = -1;
	*l = (struct ft_link){ .kind = FT_NONE };
}

long ft_topo_count_switch_links(const struct ft_topo *t)
{
	long n = 0;
	for (int s = 0; s < t->nsw; s++)
		for (int p = 1; p <= t->sw[s].nports; p++) {
			const struct ft_link *l = &t->sw[s].port[p];
			if (l->kind == FT_SWITCH && ((int)l->idx > s || ((int)l->idx == s && l->rport > p)))
				n++;
		}
	return n;
}

/* ---- finalisation ---- */

static int cmp_leaf(const void *a, const void *b, void *ctx)
{
	const struct ft_topo *t = ctx;
	uint64_t ga = t->sw[*(const int *)a].guid, gb = t->sw[*(const int *)b].guid;
	return ga < gb ? -1 : ga > gb;
}

static int cmp_node(const void *a, const void *b, void *ctx)
{
	const struct ft_topo *t = ctx;
	const struct ft_node *x = a, *y = b;
	if ((x->sw < 0) != (y->sw < 0))
		return x->sw < 0 ? 1 : -1;
	if (x->sw < 0)
		return x->port_guid < y->port_guid ? -1 : x->port_guid > y->port_guid;
	uint64_t gx = t->sw[x->sw].guid, gy = t->sw[y->sw].guid;
	if (gx != gy)
		return gx < gy ? -1 : 1;
	return x->sw_port - y->sw_port;
}

struct gent { uint64_t guid; uint32_t peer; uint8_t port; };

static int cmp_gent(const void *a, const void *b)
{
	const struct gent *x = a, *y = b;
	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	return x->port - y->port;
}

static int sort_nodes(struct ft_topo *t)
{
	if (t->nnodes > 1)
		qsort_r(t->node, (size_t)t->nnodes, sizeof(*t->node), cmp_node, t);
	for (int n = 0; n < t->nnodes; n++)
		if (t->node[n].sw >= 0)
			t->sw[t->node[n].sw].port[t->node[n].sw_port].idx = (uint32_t)n;
	return 0;
}

static int find_leaves(struct ft_topo *t)
{
	t->nleaves = 0;
	for (int s = 0; s < t->nsw; s++)
		t->sw[s].leaf = -1;
	for (int n = 0; n < t->nnodes; n++) {
		int s = t->node[n].sw;
		if (s >= 0 && t->sw[s].leaf < 0) {
			t->sw[s].leaf = 0;
			t->nleaves++;
		}
	}
	t->leaves = malloc(sizeof(int) * (size_t)(t->nleaves + 1));
	t->leaf_first = calloc((size_t)t->nleaves + 1, sizeof(int));
	if (!t->leaves || !t->leaf_first)
		return -ENOMEM;
	int k = 0;
	for (int s = 0; s < t->nsw; s++)
		if (t->sw[s].leaf == 0)
			t->leaves[k++] = s;
	if (t->nleaves > 1)
		qsort_r(t->leaves, (size_t)t->nleaves, sizeof(int), cmp_leaf, t);
	for (int l = 0; l < t->nleaves; l++)
		t->sw[t->leaves[l]].leaf = l;
	sort_nodes(t);
	for (int n = 0; n < t->nnodes; n++)
		if (t->node[n].sw >= 0)
			t->leaf_first[t->sw[t->node[n].sw].leaf + 1]++;
	for (int l = 0; l < t->nleaves; l++)
		t->leaf_first[l + 1] += t->leaf_first[l];
	return 0;
}

static int rank_switches(struct ft_topo *t)
{
	int *queue = malloc(sizeof(int) * (size_t)(t->nsw + 1));
	if (!queue)
		return -ENOMEM;
	int head = 0, tail = 0;
	for (int s = 0; s < t->nsw; s++) {
		t->sw[s].rank = t->sw[s].leaf >= 0 ? 0 : -1;
		if (!t->sw[s].rank)
			queue[tail++] = s;
	}
	t->maxrank = 0;
	while (head < tail) {
		int s = queue[head++];
		const struct ft_switch *sw = &t->sw[s];
		for (int p = 1; p <= sw->nports; p++) {
			const struct ft_link *l = &sw->port[p];
			if (l->kind != FT_SWITCH || t->sw[l->idx].rank >= 0)
				continue;
			t->sw[l->idx].rank = sw->rank + 1;
			if (sw->rank + 1 > t->maxrank)
				t->maxrank = sw->rank + 1;
			queue[tail++] = (int)l->idx;
		}
	}
	free(queue);
	return 0;
}

static int build_groups(struct ft_topo *t)
{
	long nlinks = 0;
	for (int s = 0; s < t->nsw; s++)
		for (int p = 1; p <= t->sw[s].nports; p++)
			nlinks += t->sw[s].port[p].kind == FT_SWITCH;
	t->grp_off = calloc((size_t)t->nsw + 1, sizeof(int));
	t->gport_off = calloc((size_t)t->nsw + 1, sizeof(int));
	t->grp = malloc(sizeof(*t->grp) * (size_t)(nlinks + 1));
	t->gport = malloc((size_t)nlinks + 1);
	struct gent *tmp = malloc(sizeof(*tmp) * (FT_MAX_PORTS + 1));
	if (!t->grp_off || !t->gport_off || !t->grp || !t->gport || !tmp) {
		free(tmp);
		return -ENOMEM;
	}
	int ng = 0, np = 0;
	for (int s = 0; s < t->nsw; s++) {
		const struct ft_switch *sw = &t->sw[s];
		int k = 0;
		for (int p = 1; p <= sw->nports; p++)
			if (sw->port[p].kind == FT_SWITCH)
				tmp[k++] = (struct gent){ t->sw[sw->port[p].idx].guid, sw->port[p].idx, (uint8_t)p };
		qsort(tmp, (size_t)k, sizeof(*tmp), cmp_gent);
		t->grp_off[s] = ng;
		t->gport_off[s] = np;
		for (int i = 0; i < k; i++) {
			if (i == 0 || tmp[i].peer != tmp[i - 1].peer)
				t->grp[ng++] = (struct ft_group){ .peer = tmp[i].peer, .first = (uint32_t)np, .nports = 0 };
			t->grp[ng - 1].nports++;
			t->gport[np++] = tmp[i].port;
		}
	}
	t->grp_off[t->nsw] = ng;
	t->gport_off[t->nsw] = np;
	free(tmp);
	return 0;
}

int ft_topo_finalize(struct ft_topo *t, char *err, size_t errlen)
{
	free_derived(t);
	int rc = find_leaves(t);
	if (!rc)
		rc = rank_switches(t);
	if (!rc)
		rc = build_groups(t);
	if (rc)
		return sm_err(err, errlen, rc, "out of memory finalising topology");
	return 0;
}

struct ft_topo *ft_topo_clone(const struct ft_topo *t)
{
	struct ft_topo *c = ft_topo_new();
	if (!c)
		return NULL;
	c->sw = calloc((size_t)t->nsw + 1, sizeof(*c->sw));
	c->node = calloc((size_t)t->nnodes + 1, sizeof(*c->node));
	if (!c->sw || !c->node)
		goto fail;
	c->sw_cap = t->nsw + 1;
	c->node_cap = t->nnodes + 1;
	for (int s = 0; s < t->nsw; s++) {
		c->sw[s] = t->sw[s];
		c->sw[s].name = strdup(t->sw[s].name);
		c->sw[s].port = malloc(sizeof(struct ft_link) * (size_t)(t->sw[s].nports + 1));
		c->nsw = s + 1;
		if (!c->sw[s].name || !c->sw[s].port)
			goto fail;
		memcpy(c->sw[s].port, t->sw[s].port, sizeof(struct ft_link) * (size_t)(t->sw[s].nports + 1));
	}
	for (int n = 0; n < t->nnodes; n++) {
		c->node[n] = t->node[n];
		c->node[n].name = strdup(t->node[n].name);
		c->nnodes = n + 1;
		if (!c->node[n].name)
			goto fail;
	}
	c->has_pgft = t->has_pgft;
	c->pgft = t->pgft;
	if (t->has_pgft) {
		c->sw_level = malloc(sizeof(int) * (size_t)(t->nsw + 1));
		c->sw_index = malloc(sizeof(int) * (size_t)(t->nsw + 1));
		if (!c->sw_level || !c->sw_index)
			goto fail;
		memcpy(c->sw_level, t->sw_level, sizeof(int) * (size_t)t->nsw);
		memcpy(c->sw_index, t->sw_index, sizeof(int) * (size_t)t->nsw);
	}
	if (ft_topo_finalize(c, NULL, 0))
		goto fail;
	return c;
fail:
	ft_topo_free(c);
	return NULL;
}
