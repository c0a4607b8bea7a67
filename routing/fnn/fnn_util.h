/* fnn_util.h - internal helpers shared by the fnn files: text cursor, clock (errors, files
 * and random numbers: common/sm_err.h, sm_file.h, sm_rng.h). */
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

double fnn_now(void); /* monotonic seconds */

#endif /* FNN_UTIL_H */
