/* fnn_util.h - internal helpers shared by the fnn files: text cursor, errors, RNG, clock. */
#ifndef FNN_UTIL_H
#define FNN_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A read position in a text buffer that need not be NUL-terminated. */
struct fnn_cursor {
	const char *s;
	size_t len, pos;
};

int fnn_cursor_peek(const struct fnn_cursor *c);       /* EOF at the end */
void fnn_cursor_blank(struct fnn_cursor *c);           /* skip spaces, tabs, \r */
void fnn_cursor_skip_line(struct fnn_cursor *c);       /* past the next '\n' */
int fnn_cursor_long(struct fnn_cursor *c, long *v);    /* decimal; 0 or -EINVAL */
/* A word of non-blank characters, at most cap-1 long; 0 or -EINVAL. */
int fnn_cursor_word(struct fnn_cursor *c, char *buf, size_t cap);

/* Format a message into err (if non-NULL) and return rc. */
int fnn_err(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int fnn_read_file(const char *path, char **text, size_t *len, char *err, size_t errlen);

/* splitmix64: small, seedable, deterministic. */
static inline uint64_t fnn_rng_next(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0. */
static inline int fnn_rng_below(uint64_t *state, int n)
{
	return (int)((fnn_rng_next(state) >> 32) * (uint64_t)n >> 32);
}

double fnn_now(void); /* monotonic seconds */

#endif /* FNN_UTIL_H */
