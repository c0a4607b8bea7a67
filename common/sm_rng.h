/*
 * sm_rng.h - the tree's seedable pseudo-random numbers: splitmix64. Small, fast and the
 * same on every host, so a seed names one run (designs, degraded fabrics, fuzz inputs).
 * The state is a caller's uint64_t, set to the seed; nothing here is for cryptography.
 */
#ifndef SM_RNG_H
#define SM_RNG_H

#include <stdint.h>

static inline uint64_t sm_rng_next(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Uniform in [0, n), 0 < n < 2^31: the top 32 bits scaled by n, no division. */
static inline int sm_rng_below(uint64_t *state, int n)
{
	return (int)((sm_rng_next(state) >> 32) * (uint64_t)n >> 32);
}

#endif
