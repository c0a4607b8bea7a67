/* Multi-process test harness: forks ranks that each open an endpoint on loopback and learn
 * every other rank's business card through shared memory. Bounded by alarm(). */
#ifndef TEST_HARNESS_H
#define TEST_HARNESS_H

#include "sctpt.h"

#include <stdio.h>
#include <stdlib.h>

struct rank_ctx {
	int rank, size;
	struct sctpt_ep *ep;
	sctpt_peer_t *peer; /* peer[r]: the peer id of rank r (peer[rank] unused) */
	void *user;
};

#define CHECK(cond, ...)                                                              \
	do {                                                                          \
		if (!(cond)) {                                                        \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);          \
			fprintf(stderr, __VA_ARGS__);                                 \
			fprintf(stderr, " [%s]\n", sctpt_last_error());               \
			exit(1);                                                      \
		}                                                                     \
	} while (0)

/* Runs body in size forked ranks, each with an endpoint configured by cfg (its ops.arg and
 * handler.arg are replaced by the rank's rank_ctx). Returns 0 if every rank exited 0 within seconds. */
int harness_run(int size, int seconds, struct sctpt_config *cfg, int (*body)(struct rank_ctx *));
void harness_barrier(struct rank_ctx *rc);
/* A rank that is meant to die by SIGKILL (peer-death tests); -1: none. */
extern int harness_killed_rank;
/* Deterministic payload bytes for (src, dst, index). */
void fill_pattern(unsigned char *buf, size_t len, uint32_t seed);
int check_pattern(const unsigned char *buf, size_t len, uint32_t seed);

#endif
