/*
 * ft_ibnd.c - read and write the topology format of ibnetdiscover, which ibsim and
 * ibdmchk-style tools also take:
 *
 *   switchguid=0x0002c90000000011(2c90000000011)
 *   Switch  36 "S-0002c90000000011"   # "leaf 1" enhanced port 0 lid 1 lmc 0
 *   [1]     "H-0002c9ff00000002"[1](2c9ff00000003)   # "node0 HCA-1" lid 2 4xQDR
 *   [19]    "S-0002c90100000000"[1]   # "spine 0" lid 40 4xQDR
 *
 *   caguid=0x0002c9ff00000002
 *   Ca      1 "H-0002c9ff00000002"    # "node0 HCA-1"
 *   [1](2c9ff00000003)  "S-0002c90000000011"[1]   # lid 2 lmc 0 "leaf 1" lid 1 4xQDR
 *
 * "Hca" is accepted for "Ca" (ibsim). GUIDs come from the *guid= line before a record,
 * else from an "S-"/"H-" id, else are made up from the record number. Every error names
 * the file and line.
 */
#include "ft_topo.h"
#include "common/sm_err.h"
#include "common/sm_file.h"
#include "common/sm_array.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { REC_SW = 1, REC_CA = 2 };

struct rec {
	char *id, *name;
	int type, nports, line, first, nlines;
	uint64_t guid;
	int idx;                /* switch index (switch) or first node (CA) */
};

struct pline {
	int rec, port, rport, line;
	uint64_t pguid;
	char *rid;
	int node;               /* CA lines: endpoint node index */
};

struct parser {
	const char *fname;
	char *err;
	size_t errlen;
	struct rec *rec;
	int nrec, caprec;
	struct pline *pl;
	int npl, cappl;
	int *hash;              /* open addressing over rec, size hcap */
	int hcap;
};

#define PERR(ps, ln, ...)                                                                   \
	(sm_err((ps)->err, (ps)->errlen, 0, "%s:%d: ", (ps)->fname, (ln)),                   \
	 sm_err_append((ps)->err, (ps)->errlen, 0, __VA_ARGS__))

static uint32_t fnv(const char *s)
{
	uint32_t h = 2166136261u;
	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

static int hash_find(const struct parser *ps, const char *id)
{
	if (!ps->hcap)
		return -1;
	for (uint32_t i = fnv(id) & (uint32_t)(ps->hcap - 1);; i = (i + 1) & (uint32_t)(ps->hcap - 1)) {
		int r = ps->hash[i];
		if (r < 0)
			return -1;
		if (!strcmp(ps->rec[r].id, id))
			return r;
	}
}

static int hash_build(struct parser *ps)
{
	ps->hcap = 16;
	while (ps->hcap < 2 * ps->nrec + 2)
		ps->hcap *= 2;
	ps->hash = malloc(sizeof(int) * (size_t)ps->hcap);
	if (!ps->hash)
		return -ENOMEM;
	memset(ps->hash, 0xff, sizeof(int) * (size_t)ps->hcap);
	for (int r = 0; r < ps->nrec; r++) {
		if (hash_find(ps, ps->rec[r].id) >= 0) {
			PERR(ps, ps->rec[r].line, "node id \"%s\" declared twice", ps->rec[r].id);
			return -EINVAL;
		}
		uint32_t i = fnv(ps->rec[r].id) & (uint32_t)(ps->hcap - 1);
		while (ps->hash[i] >= 0)
			i = (i + 1) & (uint32_t)(ps->hcap - 1);
		ps->hash[i] = r;
	}
	return 0;
}

/* Copy a quoted string starting at *p (which points at the opening quote). */
static char *quoted(const char **p)
{
	const char *s = *p + 1, *e = strchr(s, '"');
	if (**p != '"' || !e)
		return NULL;
	char *out = strndup(s, (size_t)(e - s));
	*p = e + 1;
	return out;
}

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

static int parse_hex(const char **p, uint64_t *v)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(*p, &end, 16);
	if (end == *p || errno)
		return -1;
	*v = x;
	*p = end;
	return 0;
}

static int parse_int(const char **p, int *v, int lo, int hi)
{
	char *end;
	long x = strtol(*p, &end, 10);
	if (end == *p || x < lo || x > hi)
		return -1;
	*v = (int)x;
	*p = end;
	return 0;
}

static int parse_header(struct parser *ps, const char *p, int type, int line, uint64_t pending)
{
	struct rec r = { .type = type, .line = line, .first = ps->npl };
	p = skip_ws(p);
	if (parse_int(&p, &r.nports, 1, FT_MAX_PORTS)) {
		PERR(ps, line, "expected a port count 1..%d after the node type", FT_MAX_PORTS);
		return -EINVAL;
	}
	p = skip_ws(p);
	r.id = quoted(&p);
	if (!r.id || !*r.id) {
		free(r.id);
		PERR(ps, line, "expected a quoted node id after the port count");
		return -EINVAL;
	}
	const char *c = strchr(p, '#');
	if (c && (c = strchr(c, '"')))
		r.name = quoted(&c);
	if (!r.name)
		r.name = strdup(r.id);
	r.guid = pending;
	if (!r.guid && (r.id[0] == 'S' || r.id[0] == 'H') && r.id[1] == '-') {
		const char *g = r.id + 2;
		uint64_t v;
		if (!parse_hex(&g, &v) && !*g)
			r.guid = v;
	}
	if (!r.guid)
		r.guid = 0x0002c9fe00000000ull + ((uint64_t)ps->nrec + 1) * 256;   /* room for port GUIDs */
	if (!r.name || sm_grow(&ps->rec, ps->nrec, &ps->caprec, sizeof(r))) {
		free(r.id);
		free(r.name);
		return -ENOMEM;
	}
	ps->rec[ps->nrec++] = r;
	return 0;
}

static int parse_port(struct parser *ps, const char *p, int line)
{
	struct pline pl = { .rec = ps->nrec - 1, .line = line, .node = -1 };
	if (pl.rec < 0) {
		PERR(ps, line, "port line before any Switch or Ca line");
		return -EINVAL;
	}
	struct rec *r = &ps->rec[pl.rec];
	p++;
	if (parse_int(&p, &pl.port, 1, r->nports) || *p != ']') {
		PERR(ps, line, "bad local port: \"%s\" has ports 1..%d", r->id, r->nports);
		return -EINVAL;
	}
	p++;
	if (*p == '(' && (p++, parse_hex(&p, &pl.pguid) || *p++ != ')')) {
		PERR(ps, line, "bad port GUID in parentheses");
		return -EINVAL;
	}
	if (*p == '[') {   /* "[ext N]" on some switches */
		const char *e = strchr(p, ']');
		p = e ? e + 1 : p;
	}
	p = skip_ws(p);
	pl.rid = quoted(&p);
	if (!pl.rid) {
		PERR(ps, line, "expected the quoted id of the remote node");
		return -EINVAL;
	}
	if (*p != '[' || (p++, parse_int(&p, &pl.rport, 1, FT_MAX_PORTS)) || *p != ']') {
		PERR(ps, line, "expected the remote port as [n] (1..%d) after \"%s\"", FT_MAX_PORTS, pl.rid);
		free(pl.rid);
		return -EINVAL;
	}
	for (int i = r->first; i < ps->npl; i++)
		if (ps->pl[i].port == pl.port) {
			free(pl.rid);
			PERR(ps, line, "port %d of \"%s\" listed twice", pl.port, r->id);
			return -EINVAL;
		}
	if (sm_grow(&ps->pl, ps->npl, &ps->cappl, sizeof(pl))) {
		free(pl.rid);
		return -ENOMEM;
	}
	ps->pl[ps->npl++] = pl;
	r->nlines++;
	return 0;
}

static int parse_lines(struct parser *ps, const char *buf, size_t len)
{
	uint64_t pending = 0;
	int line = 0;
	const char *end = buf + len;
	char tmp[4096];
	for (const char *p = buf; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p);
		line++;
		if (n >= sizeof(tmp)) {
			PERR(ps, line, "line longer than %zu characters", sizeof(tmp) - 1);
			return -EINVAL;
		}
		memcpy(tmp, p, n);
		tmp[n] = 0;
		if (memchr(tmp, 0, n)) {
			PERR(ps, line, "NUL byte in line");
			return -EINVAL;
		}
		p = nl ? nl + 1 : end;
		const char *s = skip_ws(tmp);
		int rc = 0;
		if (!*s || *s == '#')
			continue;
		if (!strncmp(s, "switchguid=", 11) || !strncmp(s, "caguid=", 7)) {
			const char *g = strchr(s, '=') + 1;
			if (!strncmp(g, "0x", 2) || !strncmp(g, "0X", 2))
				g += 2;
			if (parse_hex(&g, &pending) || (*g && *g != '(' && *g != ' ' && *g != '\t' && *g != '\r')) {
				PERR(ps, line, "bad GUID after '='");
				return -EINVAL;
			}
		} else if (strchr(s, '=') && s[0] != '[' && s[0] != '"') {
			continue;   /* vendid=, devid=, sysimgguid=, ... */
		} else if (!strncmp(s, "Switch", 6) && (s[6] == ' ' || s[6] == '\t')) {
			rc = parse_header(ps, s + 6, REC_SW, line, pending);
			pending = 0;
		} else if ((!strncmp(s, "Ca", 2) && (s[2] == ' ' || s[2] == '\t')) ||
			   (!strncmp(s, "Hca", 3) && (s[3] == ' ' || s[3] == '\t'))) {
			rc = parse_header(ps, s + (s[0] == 'C' ? 2 : 3), REC_CA, line, pending);
			pending = 0;
		} else if (*s == '[') {
			rc = parse_port(ps, s, line);
		} else {
			PERR(ps, line, "unrecognised line (expected Switch, Ca, a [port] line or key=value)");
			return -EINVAL;
		}
		if (rc)
			return rc;
	}
	return 0;
}

/* Node index of CA record r's port rp, or -1. */
static int ca_endpoint(const struct parser *ps, int r, int rp)
{
	const struct rec *c = &ps->rec[r];
	for (int i = c->first; i < c->first + c->nlines; i++)
		if (ps->pl[i].port == rp)
			return ps->pl[i].node;
	return -1;
}

static int link_line(struct parser *ps, struct ft_topo *t, const struct pline *pl)
{
	const struct rec *me = &ps->rec[pl->rec];
	int r = hash_find(ps, pl->rid);
	char e2[200];
	if (r < 0) {
		PERR(ps, pl->line, "remote node \"%s\" is not declared in the file", pl->rid);
		return -EINVAL;
	}
	const struct rec *rem = &ps->rec[r];
	if (pl->rport > rem->nports) {
		PERR(ps, pl->line, "remote \"%s\" has no port %d (it has %d)", rem->id, pl->rport, rem->nports);
		return -EINVAL;
	}
	if (me->type == REC_CA && rem->type == REC_CA) {
		PERR(ps, pl->line, "CA-to-CA cable (\"%s\" - \"%s\") is not supported", me->id, rem->id);
		return -EINVAL;
	}
	if (me->type == REC_SW && rem->type == REC_SW) {
		const struct ft_link *l = &t->sw[me->idx].port[pl->port];
		if (l->kind != FT_NONE) {
			if (l->kind == FT_SWITCH && (int)l->idx == rem->idx && l->rport == pl->rport)
				return 0;
			PERR(ps, pl->line, "\"%s\" port %d is already cabled elsewhere", me->id, pl->port);
			return -EINVAL;
		}
		if (ft_topo_link_sw(t, me->idx, pl->port, rem->idx, pl->rport, e2, sizeof(e2))) {
			PERR(ps, pl->line, "%s", e2);
			return -EINVAL;
		}
		return 0;
	}
	int s = me->type == REC_SW ? me->idx : rem->idx;
	int sp = me->type == REC_SW ? pl->port : pl->rport;
	int node = me->type == REC_CA ? pl->node : ca_endpoint(ps, r, pl->rport);
	if (node < 0) {
		PERR(ps, pl->line, "CA \"%s\" does not list its port %d", rem->id, pl->rport);
		return -EINVAL;
	}
	if (t->node[node].sw >= 0) {
		if (t->node[node].sw == s && t->node[node].sw_port == sp)
			return 0;
		PERR(ps, pl->line, "CA port is cabled to two different switch ports");
		return -EINVAL;
	}
	if (ft_topo_link_node(t, s, sp, node, e2, sizeof(e2))) {
		PERR(ps, pl->line, "%s", e2);
		return -EINVAL;
	}
	return 0;
}

struct gref { uint64_t guid; int line; const char *id; };

static int cmp_gref(const void *a, const void *b)
{
	const struct gref *x = a, *y = b;
	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	return x->line - y->line;
}

/* Node GUIDs (switches, CAs) and CA port GUIDs must be unique: tables name them. */
static int check_guids(struct parser *ps)
{
	struct gref *g = malloc(sizeof(*g) * (size_t)(ps->nrec + ps->npl + 1));
	int n = 0, rc = 0;
	if (!g)
		return -ENOMEM;
	for (int r = 0; r < ps->nrec; r++) {
		const struct rec *c = &ps->rec[r];
		g[n++] = (struct gref){ c->guid, c->line, c->id };
		for (int i = c->first; c->type == REC_CA && i < c->first + c->nlines; i++) {
			uint64_t pg = ps->pl[i].pguid ? ps->pl[i].pguid : c->guid + (uint64_t)ps->pl[i].port;
			if (pg != c->guid)
				g[n++] = (struct gref){ pg, ps->pl[i].line, c->id };
		}
	}
	qsort(g, (size_t)n, sizeof(*g), cmp_gref);
	for (int i = 1; i < n && !rc; i++)
		if (g[i].guid == g[i - 1].guid) {
			PERR(ps, g[i].line, "GUID 0x%016llx of \"%s\" is already used (line %d)",
			     (unsigned long long)g[i].guid, g[i].id, g[i - 1].line);
			rc = -EINVAL;
		}
	free(g);
	return rc;
}

static int build(struct parser *ps, struct ft_topo *t)
{
	int rc = check_guids(ps);
	if (rc)
		return rc;
	for (int r = 0; r < ps->nrec; r++) {
		struct rec *c = &ps->rec[r];
		if (c->type == REC_SW) {
			c->idx = ft_topo_add_switch(t, c->guid, c->name, c->nports);
			if (c->idx < 0)
				return c->idx;
			continue;
		}
		for (int i = c->first; i < c->first + c->nlines; i++) {
			struct pline *pl = &ps->pl[i];
			uint64_t pg = pl->pguid ? pl->pguid : c->guid + (uint64_t)pl->port;
			pl->node = ft_topo_add_node(t, c->guid, pg, c->name, pl->port, c->nports);
			if (pl->node < 0)
				return pl->node;
		}
	}
	for (int i = 0; i < ps->npl; i++) {
		rc = link_line(ps, t, &ps->pl[i]);
		if (rc)
			return rc;
	}
	return 0;
}

int ft_ibnd_parse(const char *buf, size_t len, const char *fname, struct ft_topo **out, char *err,
		  size_t errlen)
{
	static char dummy[2];
	struct parser ps = { .fname = fname ? fname : "<input>", .err = err ? err : dummy,
			     .errlen = err ? errlen : sizeof(dummy) };
	struct ft_topo *t = ft_topo_new();
	int rc = t ? parse_lines(&ps, buf, len) : -ENOMEM;
	if (!rc && !ps.nrec) {
		PERR(&ps, 0, "no Switch or Ca record found");
		rc = -EINVAL;
	}
	if (!rc)
		rc = hash_build(&ps);
	if (!rc)
		rc = build(&ps, t);
	if (!rc && !t->nsw && !t->nnodes) {
		/* CA records without port lines add no endpoint: nothing to route */
		PERR(&ps, 0, "no switch and no CA port found");
		rc = -EINVAL;
	}
	if (!rc)
		rc = ft_topo_finalize(t, err, errlen);
	if (rc == -ENOMEM)
		snprintf(ps.err, ps.errlen, "%s: out of memory", ps.fname);
	for (int r = 0; r < ps.nrec; r++) {
		free(ps.rec[r].id);
		free(ps.rec[r].name);
	}
	for (int i = 0; i < ps.npl; i++)
		free(ps.pl[i].rid);
	free(ps.rec);
	free(ps.pl);
	free(ps.hash);
	if (rc) {
		ft_topo_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

int ft_ibnd_read(FILE *f, const char *fname, struct ft_topo **out, char *err, size_t errlen)
{
	char *buf;
	size_t len;
	int rc = sm_read_stream(f, fname, &buf, &len, err, errlen);
	if (rc)
		return rc;
	rc = ft_ibnd_parse(buf, len, fname, out, err, errlen);
	free(buf);
	return rc;
}

/* ---- writer ---- */

static void write_name(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == '"' || *s == '\n' ? '\'' : *s, f);
}

int ft_ibnd_write(FILE *f, const struct ft_topo *t)
{
	fprintf(f, "# Topology file: %d switches, %d nodes (ibnetdiscover format)\n#\n", t->nsw, t->nnodes);
	for (int s = 0; s < t->nsw; s++) {
		const struct ft_switch *sw = &t->sw[s];
		unsigned long long g = (unsigned long long)sw->guid;
		fprintf(f, "\nvendid=0x2c9\ndevid=0xc738\nsysimgguid=0x%llx\nswitchguid=0x%llx(%llx)\n", g, g, g);
		fprintf(f, "Switch\t%d \"S-%016llx\"\t\t# \"", sw->nports, g);
		write_name(f, sw->name);
		fprintf(f, "\" enhanced port 0 lmc 0\n");
		for (int p = 1; p <= sw->nports; p++) {
			const struct ft_link *l = &sw->port[p];
			if (l->kind == FT_SWITCH) {
				fprintf(f, "[%d]\t\"S-%016llx\"[%d]\t\t# \"", p,
					(unsigned long long)t->sw[l->idx].guid, l->rport);
				write_name(f, t->sw[l->idx].name);
				fprintf(f, "\" lid 0 4xQDR\n");
			} else if (l->kind == FT_NODE) {
				const struct ft_node *n = &t->node[l->idx];
				fprintf(f, "[%d]\t\"H-%016llx\"[%d](%llx)\t\t# \"", p, (unsigned long long)n->guid,
					n->port, (unsigned long long)n->port_guid);
				write_name(f, n->name);
				fprintf(f, "\" lid 0 4xQDR\n");
			}
		}
	}
	/* CAs: group the endpoints of one CA (same node GUID) into one record */
	for (int d = 0; d < t->nnodes; d++) {
		const struct ft_node *n = &t->node[d];
		int seen = 0;
		for (int e = 0; n->nports > 1 && e < d && !seen; e++)
			seen = t->node[e].guid == n->guid;
		if (seen)
			continue;
		unsigned long long g = (unsigned long long)n->guid;
		fprintf(f, "\nvendid=0x2c9\ndevid=0x1003\nsysimgguid=0x%llx\ncaguid=0x%llx\n", g, g);
		fprintf(f, "Ca\t%d \"H-%016llx\"\t\t# \"", n->nports > 0 ? n->nports : 1, g);
		write_name(f, n->name);
		fprintf(f, "\"\n");
		for (int e = d; e < (n->nports > 1 ? t->nnodes : d + 1); e++) {
			const struct ft_node *m = &t->node[e];
			if (m->guid != n->guid)
				continue;
			if (m->sw < 0)
				continue;
			fprintf(f, "[%d](%llx)\t\"S-%016llx\"[%d]\t\t# lmc 0 \"", m->port,
				(unsigned long long)m->port_guid, (unsigned long long)t->sw[m->sw].guid, m->sw_port);
			write_name(f, t->sw[m->sw].name);
			fprintf(f, "\" lid 0 4xQDR\n");
		}
	}
	return ferror(f) ? -EIO : 0;
}
