/* ft_test.h - tiny assertion helpers shared by the fat-tree tests. */
#ifndef FT_TEST_H
#define FT_TEST_H

#include <stdio.h>
#include <stdlib.h>

#include "routing/fattree/ft_route.h"

static int ft_failures;

#define CHECK(cond, ...) do { \
		if (!(cond)) { \
			ft_failures++; \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
		} \
	} while (0)

#define REQUIRE(cond, ...) do { \
		if (!(cond)) { \
			fprintf(stderr, "%s:%d: required: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
			exit(1); \
		} \
	} while (0)

static inline int ft_test_result(const char *name)
{
	if (ft_failures) {
		fprintf(stderr, "%s: %d check(s) failed\n", name, ft_failures);
		return 1;
	}
	printf("%s: ok\n", name);
	return 0;
}

static inline struct ft_topo *ft_test_pgft(const char *spec)
{
	struct ft_pgft pg;
	char err[256];
	if (ft_pgft_parse(spec, &pg, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		exit(1);
	}
	struct ft_topo *t = ft_pgft_build(&pg, err, sizeof(err));
	if (!t) {
		fprintf(stderr, "%s\n", err);
		exit(1);
	}
	return t;
}

#endif
