/* fnn_advanced.c - advanced routing: per-pair NIC tuples packed into one integer. */
#include "fnn.h"
#include "fnn_util.h"
#include "common/sm_err.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void fnn_advanced_free(struct fnn_advanced *t)
{
	free(t->tuple);
	memset(t, 0, sizeof(*t));
}

/* Field width for values 0..maxnics, and the smallest integer holding all fields. */
static int layout(struct fnn_advanced *t, int maxnics)
{
	t->bits = 1;
	while ((1 << t->bits) < maxnics + 1)
		t->bits++;
	int total = t->bits * (maxnics ? maxnics : 1);
	t->bytes = total <= 8 ? 1 : total <= 16 ? 2 : total <= 32 ? 4 : 8;
	return total <= 64 ? 0 : -E2BIG;
}

static int tuples_alloc(struct fnn_advanced *t, int npcs)
{
	t->npcs = npcs;
	t->tuple = calloc((size_t)(npcs ? npcs : 1) * (npcs ? npcs : 1), sizeof(uint64_t));
	return t->tuple ? 0 : -ENOMEM;
}

int fnn_advanced_build(struct fnn_advanced *t, const struct fnn_design *d)
{
	int maxn = 0, rc;
	memset(t, 0, sizeof(*t));
	for (int pc = 0; pc < d->npcs; pc++)
		if (fnn_design_nics(d, pc) > maxn)
			maxn = fnn_design_nics(d, pc);
	rc = layout(t, maxn);
	if (!rc)
		rc = tuples_alloc(t, d->npcs);
	if (rc) {
		fnn_advanced_free(t);
		return rc;
	}
	for (int a = 0; a < d->npcs; a++)
		for (int b = 0; b < d->npcs; b++) {
			uint64_t v = 0;
			for (int k = 0; a != b; k++) {
				int s = fnn_nic_switch(d, a, k);
				if (s < 0)
					break;
				int rn = fnn_switch_nic(d, b, s);
				if (rn >= 0)
					v |= (uint64_t)(rn + 1) << (k * t->bits);
			}
			t->tuple[a * d->npcs + b] = v;
		}
	return 0;
}

uint64_t fnn_advanced_tuple(const struct fnn_advanced *t, int a, int b)
{
	if (a < 0 || b < 0 || a >= t->npcs || b >= t->npcs)
		return 0;
	return t->tuple[a * t->npcs + b];
}

int fnn_advanced_remote(const struct fnn_advanced *t, int a, int b, int k)
{
	if (k < 0 || (k + 1) * t->bits > 64)
		return -1;
	return (int)FNN_TUPLE_FIELD(fnn_advanced_tuple(t, a, b), k, t->bits) - 1;
}

size_t fnn_advanced_node_bytes(const struct fnn_advanced *t)
{
	return (size_t)t->npcs * t->bytes;
}

size_t fnn_advanced_mac_node_bytes(const struct fnn_design *d, int pc)
{
	return (size_t)d->npcs * fnn_design_nics(d, pc) * 6;
}

int fnn_advanced_print(const struct fnn_advanced *t, FILE *out)
{
	fprintf(out, "# fnn-advanced pcs %d bits %d bytes %d\n", t->npcs, t->bits, t->bytes);
	for (int a = 0; a < t->npcs; a++) {
		fprintf(out, "%d:", a);
		for (int b = 0; b < t->npcs; b++)
			fprintf(out, " %llx", (unsigned long long)t->tuple[a * t->npcs + b]);
		fputc('\n', out);
	}
	return ferror(out) ? -EIO : 0;
}

static int parse_header(struct fnn_cursor *c, struct fnn_advanced *t, char *err, size_t errlen)
{
	static const char head[] = "# fnn-advanced pcs ";
	long pcs, bits, bytes;
	if (c->len < sizeof(head) - 1 || memcmp(c->s, head, sizeof(head) - 1))
		return sm_err(err, errlen, -EINVAL, "line 1: expected \"%s...\"", head);
	c->pos = sizeof(head) - 1;
	if (fnn_cursor_long(c, &pcs) || pcs < 1 || pcs > FNN_MAX_PCS)
		return sm_err(err, errlen, -EINVAL, "line 1: pcs must be 1..%d", FNN_MAX_PCS);
	fnn_cursor_blank(c);
	if (c->len - c->pos < 5 || memcmp(c->s + c->pos, "bits ", 5))
		return sm_err(err, errlen, -EINVAL, "line 1: expected \"bits\"");
	c->pos += 5;
	if (fnn_cursor_long(c, &bits) || bits < 1 || bits > 8)
		return sm_err(err, errlen, -EINVAL, "line 1: bits must be 1..8");
	fnn_cursor_blank(c);
	if (c->len - c->pos < 6 || memcmp(c->s + c->pos, "bytes ", 6))
		return sm_err(err, errlen, -EINVAL, "line 1: expected \"bytes\"");
	c->pos += 6;
	if (fnn_cursor_long(c, &bytes) || (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8))
		return sm_err(err, errlen, -EINVAL, "line 1: bytes must be 1, 2, 4 or 8");
	t->bits = (int)bits;
	t->bytes = (int)bytes;
	fnn_cursor_skip_line(c);
	return tuples_alloc(t, (int)pcs);
}

static int parse_row(struct fnn_cursor *c, struct fnn_advanced *t, int line, char *err,
		     size_t errlen)
{
	long a;
	char word[24];
	if (fnn_cursor_long(c, &a) || a < 0 || a >= t->npcs || fnn_cursor_peek(c) != ':')
		return sm_err(err, errlen, -EINVAL, "line %d: expected \"PC:\" with PC 0..%d", line,
			       t->npcs - 1);
	c->pos++;
	for (int b = 0; b < t->npcs; b++) {
		char *end;
		fnn_cursor_blank(c);
		if (fnn_cursor_word(c, word, sizeof(word)))
			return sm_err(err, errlen, -EINVAL, "line %d: PC %ld: %d tuples, expected %d",
				       line, a, b, t->npcs);
		unsigned long long v = strtoull(word, &end, 16);
		if (*end || (t->bytes < 8 && v >> (8 * t->bytes)))
			return sm_err(err, errlen, -EINVAL, "line %d: PC %ld: bad tuple \"%s\"", line,
				       a, word);
		t->tuple[a * t->npcs + b] = v;
	}
	return 0;
}

int fnn_advanced_parse(struct fnn_advanced *t, const char *text, size_t len, char *err,
		       size_t errlen)
{
	struct fnn_cursor c = { text, len, 0 };
	memset(t, 0, sizeof(*t));
	int rc = parse_header(&c, t, err, errlen);
	for (int line = 2; !rc && fnn_cursor_peek(&c) != EOF; line++) {
		fnn_cursor_blank(&c);
		int ch = fnn_cursor_peek(&c);
		if (ch != '\n' && ch != '#' && ch != EOF)
			rc = parse_row(&c, t, line, err, errlen);
		fnn_cursor_skip_line(&c);
	}
	if (rc)
		fnn_advanced_free(t);
	return rc;
}
