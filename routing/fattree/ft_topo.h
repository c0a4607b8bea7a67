/*
 * ft_topo.h - fabric topology model shared by every fat-tree routing engine.
 *
 * A fabric is a set of switches and end nodes. An end node is one connected CA port
 * (it owns one LID). Switch ports are numbered 1..nports (port 0 is the management
 * port, as in InfiniBand). After ft_topo_finalize():
 *   - leaf switches are the switches with at least one node attached, sorted by GUID;
 *   - nodes are sorted by (leaf GUID, leaf port): node index d is the destination
 *     number used by the Dmodk/Dmodc formulas;
 *   - every switch has a rank (0 for leaves, BFS distance from the nearest leaf
 *     otherwise, -1 when no leaf can be reached);
 *   - the ports of every switch are grouped by remote switch, groups sorted by the
 *     remote switch GUID and ports inside a group by port number.
 * Errors are negative errno values; messages go to the error buffer passed in.
 */
#ifndef FT_TOPO_H
#define FT_TOPO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define FT_MAX_PORTS 254   /* port 255 is the "no path" LFT value */
#define FT_NO_PATH 255     /* LFT entry: destination unreachable */

enum ft_kind { FT_NONE = 0, FT_SWITCH = 1, FT_NODE = 2 };

/* What a switch port is cabled to. */
struct ft_link {
	uint8_t kind;   /* enum ft_kind */
	uint8_t rport;  /* remote port number */
	uint32_t idx;   /* switch index or node index */
};

struct ft_switch {
	uint64_t guid;
	char *name;
	int nports;
	struct ft_link *port;   /* [nports + 1], port[0] unused */
	int rank;               /* 0 = leaf, -1 = cut off from every leaf */
	int leaf;               /* leaf index, or -1 */
	int removed;            /* degraded away: no links left */
};

struct ft_node {
	uint64_t guid;          /* node GUID */
	uint64_t port_guid;     /* GUID of the connected port */
	char *name;
	int port;               /* CA port number (1 for generated nodes) */
	int nports;             /* CA port count */
	int sw;                 /* switch it is cabled to, or -1 */
	int sw_port;            /* port on that switch */
};

/* One port group: every port of switch s cabled to the same remote switch. */
struct ft_group {
	uint32_t peer;          /* remote switch index */
	uint32_t first;         /* index of the first port in topo->gport */
	uint32_t nports;
};

/* PGFT(h; m1..mh; w1..wh; p1..ph) parameters (index 1..h used). */
#define FT_PGFT_MAXH 8
struct ft_pgft {
	int h;
	int m[FT_PGFT_MAXH + 2];
	int w[FT_PGFT_MAXH + 2];
	int p[FT_PGFT_MAXH + 2];
};

struct ft_topo {
	int nsw, nnodes, nleaves;
	int sw_cap, node_cap;
	struct ft_switch *sw;
	struct ft_node *node;
	int *leaves;            /* [nleaves] switch index of each leaf, sorted by GUID */
	int *leaf_first;        /* [nleaves + 1]: nodes of leaf l are leaf_first[l]..[l+1]-1 */
	int maxrank;
	/* port groups (built by ft_topo_finalize) */
	int *grp_off;           /* [nsw + 1] */
	struct ft_group *grp;
	uint8_t *gport;         /* ports of all groups, flattened per switch */
	int *gport_off;         /* [nsw + 1] */
	/* set when generated (or matched) as a PGFT; used by Dmodk */
	int has_pgft;
	struct ft_pgft pgft;
	int *sw_level;          /* [nsw] PGFT level 1..h (only with has_pgft) */
	int *sw_index;          /* [nsw] index inside its level (only with has_pgft) */
};

/* Building a topology. Indices are returned (>= 0) or negative errno. */
struct ft_topo *ft_topo_new(void);
void ft_topo_free(struct ft_topo *t);
int ft_topo_add_switch(struct ft_topo *t, uint64_t guid, const char *name, int nports);
int ft_topo_add_node(struct ft_topo *t, uint64_t guid, uint64_t port_guid, const char *name,
		     int port, int nports);
/* Cable switch port to switch port, or switch port to node. */
int ft_topo_link_sw(struct ft_topo *t, int s1, int p1, int s2, int p2, char *err, size_t errlen);
int ft_topo_link_node(struct ft_topo *t, int s, int p, int n, char *err, size_t errlen);
void ft_topo_unlink(struct ft_topo *t, int s, int p);
/* Sort nodes, find leaves, rank switches, build port groups. Call after any change. */
int ft_topo_finalize(struct ft_topo *t, char *err, size_t errlen);
struct ft_topo *ft_topo_clone(const struct ft_topo *t);

/* Counts for reports. */
long ft_topo_count_switch_links(const struct ft_topo *t);   /* cables, not directions */

/* Leaf switch of node d, or -1. */
static inline int ft_node_leaf(const struct ft_topo *t, int d)
{
	int s = t->node[d].sw;
	return s < 0 ? -1 : t->sw[s].leaf;
}

/* ---- PGFT generator (ft_pgft.c) ---- */
/* Parse "3;2,2,3;1,2,2;1,2,1" (or with '.' separators). */
int ft_pgft_parse(const char *spec, struct ft_pgft *pg, char *err, size_t errlen);
int ft_pgft_format(const struct ft_pgft *pg, char *buf, size_t len);
/* Real-life fat-trees: levels 2 or 3 of radix-port switches; "rlft:3:36". */
int ft_pgft_rlft(int levels, int radix, struct ft_pgft *pg, char *err, size_t errlen);
long ft_pgft_nodes(const struct ft_pgft *pg);
long ft_pgft_switches(const struct ft_pgft *pg);
struct ft_topo *ft_pgft_build(const struct ft_pgft *pg, char *err, size_t errlen);
/* Recognise switches of a fabric generated with ft_pgft_build (by GUID) so Dmodk can run. */
int ft_pgft_attach(struct ft_topo *t, const struct ft_pgft *pg, char *err, size_t errlen);
uint64_t ft_pgft_switch_guid(int level, long index);
uint64_t ft_pgft_node_guid(long d);

/* ---- ibnetdiscover / ibsim format (ft_ibnd.c) ---- */
int ft_ibnd_read(FILE *f, const char *fname, struct ft_topo **out, char *err, size_t errlen);
int ft_ibnd_parse(const char *buf, size_t len, const char *fname, struct ft_topo **out,
		  char *err, size_t errlen);
int ft_ibnd_write(FILE *f, const struct ft_topo *t);

/* ---- degradation (ft_degrade.c) ---- */
struct ft_degrade_opts {
	double link_fraction;   /* of switch-to-switch cables */
	long link_count;
	double switch_fraction; /* of non-leaf switches */
	long switch_count;
	uint64_t seed;
};
/* Random removal; returns the number of cables removed (>= 0) or negative errno. */
long ft_degrade_random(struct ft_topo *t, const struct ft_degrade_opts *o);
/* Removal from a list: lines "link <guid|name> <port>" or "switch <guid|name>". */
long ft_degrade_file(struct ft_topo *t, FILE *f, const char *fname, char *err, size_t errlen);
int ft_topo_find_switch(const struct ft_topo *t, const char *guid_or_name);

#endif
