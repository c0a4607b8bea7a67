/* fnn_util.c - text cursor, error messages, file reading, clock. */
#include "fnn_util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int fnn_cursor_peek(const struct fnn_cursor *c)
{
	return c->pos < c->len ? (unsigned char)c->s[c->pos] : EOF;
}

void fnn_cursor_blank(struct fnn_cursor *c)
{
	while (c->pos < c->len && (c->s[c->pos] == ' ' || c->s[c->pos] == '\t' ||
				   c->s[c->pos] == '\r'))
		c->pos++;
}

void fnn_cursor_skip_line(struct fnn_cursor *c)
{
	while (c->pos < c->len && c->s[c->pos] != '\n')
		c->pos++;
	if (c->pos < c->len)
		c->pos++;
}

int fnn_cursor_long(struct fnn_cursor *c, long *v)
{
	long x = 0;
	size_t start = c->pos;
	int neg = 0;
	if (c->pos < c->len && c->s[c->pos] == '-') {
		neg = 1;
		c->pos++;
	}
	size_t digits = c->pos;
	while (c->pos < c->len && c->s[c->pos] >= '0' && c->s[c->pos] <= '9') {
		if (x > 100000000L) { /* far beyond any limit we accept */
			c->pos = start;
			return -EINVAL;
		}
		x = x * 10 + (c->s[c->pos++] - '0');
	}
	if (c->pos == digits) {
		c->pos = start;
		return -EINVAL;
	}
	*v = neg ? -x : x;
	return 0;
}

int fnn_cursor_word(struct fnn_cursor *c, char *buf, size_t cap)
{
	size_t n = 0;
	while (c->pos < c->len) {
		char ch = c->s[c->pos];
		if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n' || ch == '#')
			break;
		if (n + 1 >= cap || ch == '\0')
			return -EINVAL;
		buf[n++] = ch;
		c->pos++;
	}
	buf[n] = '\0';
	return n ? 0 : -EINVAL;
}

int fnn_err(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

int fnn_read_file(const char *path, char **text, size_t *len, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return fnn_err(err, errlen, -errno, "%s: %s", path, strerror(errno));
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		n += fread(buf + n, 1, cap - n, f);
		if (n < cap)
			break;
		char *nb = realloc(buf, cap * 2);
		if (!nb) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = nb;
		cap *= 2;
	}
	int bad = ferror(f);
	fclose(f);
	if (!buf)
		return fnn_err(err, errlen, -ENOMEM, "%s: out of memory", path);
	if (bad) {
		free(buf);
		return fnn_err(err, errlen, -EIO, "%s: read error", path);
	}
	*text = buf;
	*len = n;
	return 0;
}

double fnn_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}
