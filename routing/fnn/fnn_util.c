/* fnn_util.c - text cursor, clock. */
#include "fnn_util.h"

#include <errno.h>
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

double fnn_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}
