/* fnn_table.c - the design object and the paper's text table ("switch: pc pc ..."). */
#include "fnn.h"
#include "fnn_util.h"
#include "common/sm_err.h"
#include "common/sm_file.h"
#include "common/sm_array.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int fnn_design_init(struct fnn_design *d, int npcs, int nswitches)
{
	memset(d, 0, sizeof(*d));
	if (npcs < 0 || npcs > FNN_MAX_PCS || nswitches < 0 || nswitches > FNN_MAX_SWITCHES)
		return -EINVAL;
	d->npcs = npcs;
	d->nswitches = nswitches;
	d->words = (nswitches + 63) / 64;
	if (d->words == 0)
		d->words = 1;
	d->mask = calloc((size_t)(npcs ? npcs : 1) * d->words, sizeof(uint64_t));
	d->ports = calloc(nswitches ? nswitches : 1, sizeof(int));
	if (!d->mask || !d->ports) {
		fnn_design_free(d);
		return -ENOMEM;
	}
	for (int s = 0; s < nswitches; s++)
		d->ports[s] = npcs;
	return 0;
}

void fnn_design_free(struct fnn_design *d)
{
	free(d->mask);
	free(d->ports);
	memset(d, 0, sizeof(*d));
}

int fnn_design_copy(struct fnn_design *dst, const struct fnn_design *src)
{
	int rc = fnn_design_init(dst, src->npcs, src->nswitches);
	if (rc)
		return rc;
	memcpy(dst->mask, src->mask, (size_t)src->npcs * src->words * sizeof(uint64_t));
	memcpy(dst->ports, src->ports, (size_t)src->nswitches * sizeof(int));
	return 0;
}

void fnn_design_set(struct fnn_design *d, int pc, int sw, int on)
{
	uint64_t *m = &d->mask[(size_t)pc * d->words + sw / 64];
	uint64_t bit = UINT64_C(1) << (sw % 64);
	*m = on ? (*m | bit) : (*m & ~bit);
}

int fnn_design_has(const struct fnn_design *d, int pc, int sw)
{
	return (d->mask[(size_t)pc * d->words + sw / 64] >> (sw % 64)) & 1;
}

int fnn_design_nics(const struct fnn_design *d, int pc)
{
	int n = 0;
	for (int w = 0; w < d->words; w++)
		n += __builtin_popcountll(d->mask[(size_t)pc * d->words + w]);
	return n;
}

int fnn_design_used(const struct fnn_design *d, int sw)
{
	int n = 0;
	for (int pc = 0; pc < d->npcs; pc++)
		n += fnn_design_has(d, pc, sw);
	return n;
}

int fnn_design_shared(const struct fnn_design *d, int a, int b)
{
	const uint64_t *ma = &d->mask[(size_t)a * d->words];
	const uint64_t *mb = &d->mask[(size_t)b * d->words];
	int n = 0;
	for (int w = 0; w < d->words; w++)
		n += __builtin_popcountll(ma[w] & mb[w]);
	return n;
}

int fnn_nic_switch(const struct fnn_design *d, int pc, int nic)
{
	if (pc < 0 || pc >= d->npcs || nic < 0)
		return -1;
	for (int w = 0; w < d->words; w++) {
		uint64_t m = d->mask[(size_t)pc * d->words + w];
		int c = __builtin_popcountll(m);
		if (nic >= c) {
			nic -= c;
			continue;
		}
		while (nic-- > 0)
			m &= m - 1;
		return w * 64 + __builtin_ctzll(m);
	}
	return -1;
}

int fnn_switch_nic(const struct fnn_design *d, int pc, int sw)
{
	if (pc < 0 || pc >= d->npcs || sw < 0 || sw >= d->nswitches || !fnn_design_has(d, pc, sw))
		return -1;
	const uint64_t *m = &d->mask[(size_t)pc * d->words];
	int n = 0;
	for (int w = 0; w < sw / 64; w++)
		n += __builtin_popcountll(m[w]);
	uint64_t below = (UINT64_C(1) << (sw % 64)) - 1;
	return n + __builtin_popcountll(m[sw / 64] & below);
}

/* ------------------------------------------------------------------ parser --------- */

struct entry {
	int sw, line;
	int n;
	int *pcs;
};

static void entries_free(struct entry *e, int n)
{
	for (int i = 0; i < n; i++)
		free(e[i].pcs);
	free(e);
}

/* Parse one non-empty line into *e.  0 or -EINVAL with a message. */
static int parse_line(struct fnn_cursor *c, int line, struct entry *e, char *err, size_t errlen)
{
	long v;
	int cap = 0;
	memset(e, 0, sizeof(*e));
	e->line = line;
	if (fnn_cursor_long(c, &v) || v < 0 || v >= FNN_MAX_SWITCHES)
		return sm_err(err, errlen, -EINVAL,
			       "line %d: expected a switch number 0..%d at the start", line,
			       FNN_MAX_SWITCHES - 1);
	e->sw = (int)v;
	fnn_cursor_blank(c);
	if (fnn_cursor_peek(c) != ':')
		return sm_err(err, errlen, -EINVAL, "line %d: expected ':' after switch %d", line,
			       e->sw);
	c->pos++;
	for (;;) {
		fnn_cursor_blank(c);
		int ch = fnn_cursor_peek(c);
		if (ch == '\n' || ch == '#' || ch == EOF)
			return 0;
		if (fnn_cursor_long(c, &v) || v < 0 || v >= FNN_MAX_PCS) {
			return sm_err(err, errlen, -EINVAL,
				       "line %d: switch %d: expected a PC number 0..%d", line,
				       e->sw, FNN_MAX_PCS - 1);
		}
		if (sm_grow(&e->pcs, e->n, &cap, sizeof(int)))
			return -ENOMEM;
		for (int i = 0; i < e->n; i++)
			if (e->pcs[i] == v)
				return sm_err(err, errlen, -EINVAL,
					       "line %d: PC %ld appears twice on switch %d", line, v,
					       e->sw);
		e->pcs[e->n++] = (int)v;
	}
}

static int collect(struct fnn_cursor *c, struct entry **out, int *nout, char *err,
		   size_t errlen)
{
	struct entry *e = NULL;
	int n = 0, cap = 0, rc = 0;
	for (int line = 1; fnn_cursor_peek(c) != EOF; line++) {
		fnn_cursor_blank(c);
		int ch = fnn_cursor_peek(c);
		if (ch != '\n' && ch != '#' && ch != EOF) {
			rc = sm_grow(&e, n, &cap, sizeof(*e));
			if (rc)
				break;
			rc = parse_line(c, line, &e[n], err, errlen);
			n++;
			if (rc)
				break;
		}
		fnn_cursor_skip_line(c);
	}
	if (rc) {
		entries_free(e, n);
		return rc;
	}
	*out = e;
	*nout = n;
	return 0;
}

int fnn_table_parse(struct fnn_design *d, const char *text, size_t len, int npcs, char *err,
		    size_t errlen)
{
	struct fnn_cursor c = { text, len, 0 };
	struct entry *e = NULL;
	int n = 0, maxsw = -1, maxpc = -1, rc;

	memset(d, 0, sizeof(*d));
	rc = collect(&c, &e, &n, err, errlen);
	if (rc)
		return rc;
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < i; j++)
			if (e[j].sw == e[i].sw) {
				rc = sm_err(err, errlen, -EINVAL,
					     "line %d: switch %d already listed on line %d",
					     e[i].line, e[i].sw, e[j].line);
				goto out;
			}
		if (e[i].sw > maxsw)
			maxsw = e[i].sw;
		for (int k = 0; k < e[i].n; k++)
			if (e[i].pcs[k] > maxpc)
				maxpc = e[i].pcs[k];
	}
	if (npcs > 0 && maxpc >= npcs) {
		rc = sm_err(err, errlen, -EINVAL, "PC %d listed but the design has %d PCs", maxpc,
			     npcs);
		goto out;
	}
	rc = fnn_design_init(d, npcs > 0 ? npcs : maxpc + 1, maxsw + 1);
	if (rc)
		goto out;
	for (int s = 0; s < d->nswitches; s++)
		d->ports[s] = 0;
	for (int i = 0; i < n; i++) {
		d->ports[e[i].sw] = e[i].n;
		for (int k = 0; k < e[i].n; k++)
			fnn_design_set(d, e[i].pcs[k], e[i].sw, 1);
	}
	for (int pc = 0; pc < d->npcs; pc++)
		if (fnn_design_nics(d, pc) > FNN_MAX_NICS) {
			rc = sm_err(err, errlen, -EINVAL, "PC %d has %d NICs, more than %d", pc,
				     fnn_design_nics(d, pc), FNN_MAX_NICS);
			fnn_design_free(d);
			goto out;
		}
out:
	entries_free(e, n);
	return rc;
}

int fnn_table_load(struct fnn_design *d, const char *path, int npcs, char *err, size_t errlen)
{
	size_t len;
	char *text;
	int rc = sm_read_file(path, &text, &len, err, errlen);
	if (rc)
		return rc;
	rc = fnn_table_parse(d, text, len, npcs, err, errlen);
	free(text);
	return rc ? sm_err(err, errlen, rc, "%s: %s", path, err) : 0;
}

int fnn_table_print(const struct fnn_design *d, FILE *out)
{
	for (int s = 0; s < d->nswitches; s++) {
		fprintf(out, "%d:", s);
		for (int pc = 0; pc < d->npcs; pc++)
			if (fnn_design_has(d, pc, s))
				fprintf(out, " %d", pc);
		fputc('\n', out);
	}
	return ferror(out) ? -EIO : 0;
}
