/* fnn_test.h - tiny assertion helpers for the fnn tests (exit 1 on the first failure). */
#ifndef FNN_TEST_H
#define FNN_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond)                                                                 \
	do {                                                                        \
		if (!(cond)) {                                                      \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
			exit(1);                                                    \
		}                                                                   \
	} while (0)

#define CHECK_NEAR(a, b, eps)                                                       \
	do {                                                                        \
		double _a = (a), _b = (b);                                          \
		if (_a - _b > (eps) || _b - _a > (eps)) {                           \
			fprintf(stderr, "%s:%d: %s = %g, expected %g\n", __FILE__, __LINE__, #a, \
				_a, _b);                                            \
			exit(1);                                                    \
		}                                                                   \
	} while (0)

/* Parse a table given as a string literal; fails the test on error. */
#define PARSE(d, text, npcs)                                                        \
	do {                                                                        \
		char _err[256];                                                     \
		if (fnn_table_parse((d), (text), strlen(text), (npcs), _err, sizeof(_err))) { \
			fprintf(stderr, "%s:%d: parse: %s\n", __FILE__, __LINE__, _err); \
			exit(1);                                                    \
		}                                                                   \
	} while (0)

#endif
