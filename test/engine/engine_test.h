/*
 * Shared by the engine's tests: two processes on loopback, each with an endpoint on the
 * engine it is given ("native" or "usrsctp": interop runs one of each), that know each other's
 * card; the native engine itself carries the data (no shared-memory shortcut between
 * processes of one host).
 */
#ifndef ENGINE_TEST_H
#define ENGINE_TEST_H

#include "sctpt_int.h"

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond, ...)                                                              \
	do {                                                                          \
		if (!(cond)) {                                                        \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);          \
			fprintf(stderr, __VA_ARGS__);                                 \
			fprintf(stderr, " [%s]\n", sctpt_last_error());               \
			exit(1);                                                      \
		}                                                                     \
	} while (0)

struct pair_ctx {
	int rank;
	const char *engine;
	struct sctpt_ep *ep;
	sctpt_peer_t peer;   /* the other rank */
	void *user;
};

/* A loopback configuration for the native engine itself. */
void engine_config(struct sctpt_config *cfg);
/* Runs body in two forked ranks, rank i on engines[i]; cfg's handler.arg becomes the rank's
 * pair_ctx. 0 if both exited 0 within seconds. */
int pair_run(const char *engines[2], int seconds, struct sctpt_config *cfg,
	     int (*body)(struct pair_ctx *));
/* Both ranks meet here (progressing meanwhile). */
void pair_barrier(struct pair_ctx *pc);
void fill_pattern(unsigned char *buf, size_t len, uint32_t seed);
int check_pattern(const unsigned char *buf, size_t len, uint32_t seed);

#endif
