/* fnn_pattern.c - weighted communication patterns (grid rows/columns, ring, all, file). */
#include "fnn.h"
#include "fnn_util.h"
#include "common/sm_err.h"
#include "common/sm_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int fnn_weights_init(struct fnn_weights *w, int npcs)
{
	memset(w, 0, sizeof(*w));
	if (npcs < 1 || npcs > FNN_MAX_PCS)
		return -EINVAL;
	w->npcs = npcs;
	w->w = calloc((size_t)npcs * npcs, sizeof(float));
	return w->w ? 0 : -ENOMEM;
}

void fnn_weights_free(struct fnn_weights *w)
{
	for (int i = 0; i < w->npatterns; i++)
		free(w->pat[i].w);
	free(w->pat);
	free(w->w);
	memset(w, 0, sizeof(*w));
}

static void add_pair(float *m, int n, int a, int b, float v)
{
	if (a == b)
		return;
	m[a * n + b] += v;
	m[b * n + a] += v;
}

/* "RxC" with R * C == n. */
static int parse_grid(const char *s, int n, int *r, int *c, char *err, size_t errlen)
{
	struct fnn_cursor cur = { s, strlen(s), 0 };
	long a, b;
	if (fnn_cursor_long(&cur, &a) || fnn_cursor_peek(&cur) != 'x')
		return sm_err(err, errlen, -EINVAL, "pattern grid \"%s\": expected RxC", s);
	cur.pos++;
	if (fnn_cursor_long(&cur, &b) || fnn_cursor_peek(&cur) != EOF)
		return sm_err(err, errlen, -EINVAL, "pattern grid \"%s\": expected RxC", s);
	if (a < 1 || b < 1 || a * b != n)
		return sm_err(err, errlen, -EINVAL, "pattern grid %ldx%ld does not cover %d PCs",
			       a, b, n);
	*r = (int)a;
	*c = (int)b;
	return 0;
}

static int fill_grid(float *m, int n, const char *arg, int rows, int cols, char *err,
		     size_t errlen)
{
	int R = 0, C = 1, rc = parse_grid(arg, n, &R, &C, err, errlen);
	if (rc)
		return rc;
	for (int a = 0; a < n; a++)
		for (int b = a + 1; b < n; b++) {
			if (rows && a / C == b / C)
				add_pair(m, n, a, b, 1);
			if (cols && a % C == b % C)
				add_pair(m, n, a, b, 1);
		}
	return 0;
}

static int fill_file(float *m, int n, const char *path, char *err, size_t errlen)
{
	char *text;
	size_t len;
	int rc = sm_read_file(path, &text, &len, err, errlen);
	if (rc)
		return rc;
	struct fnn_cursor c = { text, len, 0 };
	for (int line = 1; fnn_cursor_peek(&c) != EOF && !rc; line++) {
		long a, b;
		char word[64];
		fnn_cursor_blank(&c);
		int ch = fnn_cursor_peek(&c);
		if (ch != '\n' && ch != '#' && ch != EOF) {
			if (fnn_cursor_long(&c, &a) || a < 0 || a >= n) {
				rc = sm_err(err, errlen, -EINVAL, "%s:%d: first PC must be 0..%d",
					     path, line, n - 1);
				break;
			}
			fnn_cursor_blank(&c);
			if (fnn_cursor_long(&c, &b) || b < 0 || b >= n) {
				rc = sm_err(err, errlen, -EINVAL, "%s:%d: second PC must be 0..%d",
					     path, line, n - 1);
				break;
			}
			fnn_cursor_blank(&c);
			double v = 1;
			if (fnn_cursor_word(&c, word, sizeof(word)) == 0) {
				char *end;
				v = strtod(word, &end);
				if (*end || v < 0 || v > 1e6) {
					rc = sm_err(err, errlen, -EINVAL,
						     "%s:%d: weight \"%s\" must be 0..1e6", path, line,
						     word);
					break;
				}
			}
			add_pair(m, n, (int)a, (int)b, (float)v);
		}
		fnn_cursor_skip_line(&c);
	}
	free(text);
	return rc;
}

static int fill(float *m, int n, const char *kind, const char *arg, char *err, size_t errlen)
{
	if (!strcmp(kind, "grid"))
		return fill_grid(m, n, arg, 1, 1, err, errlen);
	if (!strcmp(kind, "row"))
		return fill_grid(m, n, arg, 1, 0, err, errlen);
	if (!strcmp(kind, "col"))
		return fill_grid(m, n, arg, 0, 1, err, errlen);
	if (!strcmp(kind, "ring")) {
		for (int a = 0; a < n && n > 1; a++)
			if (n > 2 || a == 0)
				add_pair(m, n, a, (a + 1) % n, 1);
		return 0;
	}
	if (!strcmp(kind, "all")) {
		for (int a = 0; a < n; a++)
			for (int b = a + 1; b < n; b++)
				add_pair(m, n, a, b, 1);
		return 0;
	}
	if (!strcmp(kind, "file"))
		return fill_file(m, n, arg, err, errlen);
	return sm_err(err, errlen, -EINVAL,
		       "pattern \"%s\": unknown kind (grid:RxC, row:RxC, col:RxC, ring, all, file:PATH)",
		       kind);
}

int fnn_weights_add(struct fnn_weights *w, const char *spec, char *err, size_t errlen)
{
	char kind[32] = "", arg[512] = "";
	double scale = 1;
	const char *at = strrchr(spec, '@');
	size_t speclen = at ? (size_t)(at - spec) : strlen(spec);
	if (at) {
		char *end;
		scale = strtod(at + 1, &end);
		if (*end || end == at + 1 || scale <= 0 || scale > 1e6)
			return sm_err(err, errlen, -EINVAL, "pattern \"%s\": bad weight after '@'",
				       spec);
	}
	const char *colon = memchr(spec, ':', speclen);
	size_t klen = colon ? (size_t)(colon - spec) : speclen;
	if (klen >= sizeof(kind) || (colon && speclen - klen - 1 >= sizeof(arg)))
		return sm_err(err, errlen, -EINVAL, "pattern \"%s\": too long", spec);
	memcpy(kind, spec, klen);
	if (colon)
		memcpy(arg, colon + 1, speclen - klen - 1);

	size_t nn = (size_t)w->npcs * w->npcs;
	float *m = calloc(nn, sizeof(float));
	struct fnn_pattern_desc *np = realloc(w->pat, (w->npatterns + 1) * sizeof(*np));
	if (!m || !np) {
		free(m);
		if (np)
			w->pat = np;
		return -ENOMEM;
	}
	w->pat = np;
	int rc = fill(m, w->npcs, kind, arg, err, errlen);
	if (rc) {
		free(m);
		return rc;
	}
	for (size_t i = 0; i < nn; i++) {
		m[i] *= (float)scale;
		w->w[i] += m[i];
	}
	struct fnn_pattern_desc *p = &w->pat[w->npatterns++];
	snprintf(p->name, sizeof(p->name), "%.*s", (int)speclen, spec);
	p->w = m;
	return 0;
}
