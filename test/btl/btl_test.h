/* Helpers shared by the BTL test programs: deterministic data, checksums, failure reports. */
#ifndef BTL_TEST_H
#define BTL_TEST_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Byte i of the message identified by seed. */
static inline unsigned char bt_byte(uint64_t seed, size_t i)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ULL + i * 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 31;
	return (unsigned char)(x ^ (x >> 17));
}

static inline void bt_fill(void *buf, size_t n, uint64_t seed)
{
	unsigned char *p = buf;
	for (size_t i = 0; i < n; i++)
		p[i] = bt_byte(seed, i);
}

/* Index of the first wrong byte, or -1. */
static inline long bt_check(const void *buf, size_t n, uint64_t seed)
{
	const unsigned char *p = buf;
	for (size_t i = 0; i < n; i++)
		if (p[i] != bt_byte(seed, i))
			return (long)i;
	return -1;
}

/* FNV-1a over buf, folded into *sum (order-independent across ranks via MPI_SUM later). */
static inline uint64_t bt_hash(const void *buf, size_t n)
{
	const unsigned char *p = buf;
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

#define BT_FAIL(...)                                                                   \
	do {                                                                           \
		int r_;                                                                \
		MPI_Comm_rank(MPI_COMM_WORLD, &r_);                                    \
		fprintf(stderr, "FAIL rank %d %s:%d: ", r_, __FILE__, __LINE__);       \
		fprintf(stderr, __VA_ARGS__);                                          \
		fprintf(stderr, "\n");                                                 \
		MPI_Abort(MPI_COMM_WORLD, 1);                                          \
	} while (0)

#define BT_EXPECT(cond, ...)                                                           \
	do {                                                                           \
		if (!(cond))                                                           \
			BT_FAIL(__VA_ARGS__);                                          \
	} while (0)

/* Sums every rank's value and prints "CHECK <what> <hex>" on rank 0. */
static inline void bt_report(const char *what, uint64_t local)
{
	uint64_t total = 0;
	int rank;

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	/* Allreduce, not Reduce: no rank starts the next test (whose messages rank 0's
	 * MPI_ANY_SOURCE/MPI_ANY_TAG receives would match) before every rank finished this one */
	MPI_Allreduce(&local, &total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
	if (0 == rank)
		printf("CHECK %s %016llx\n", what, (unsigned long long)total);
	fflush(stdout);
}

#endif
