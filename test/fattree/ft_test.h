/* ft_test.h - what the fat-tree tests share beyond common/sm_check.h. */
#ifndef FT_TEST_H
#define FT_TEST_H

#include <stdio.h>
#include <stdlib.h>

#include "common/sm_check.h"
#include "routing/fattree/ft_route.h"

static inline struct ft_topo *ft_test_pgft(const char *spec)
{
	struct ft_pgft pg;
	char err[256];
	REQUIRE(ft_pgft_parse(spec, &pg, err, sizeof(err)) == 0, "%s", err);
	struct ft_topo *t = ft_pgft_build(&pg, err, sizeof(err));
	REQUIRE(t, "%s", err);
	return t;
}

#endif
