/* fnn_test.h - what the fnn tests share beyond common/sm_check.h. */
#ifndef FNN_TEST_H
#define FNN_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/sm_check.h"

/* Parse a table given as a string literal; the test cannot go on without it. */
#define PARSE(d, text, npcs)                                                        \
	do {                                                                        \
		char parse_err_[256];                                               \
		REQUIRE(fnn_table_parse((d), (text), strlen(text), (npcs), parse_err_, \
					sizeof(parse_err_)) == 0, "%s", parse_err_); \
	} while (0)

#endif
