/*
 * One-sided MPI for osc rdma over btl ofi (the provider's RMA and atomics) against osc pt2pt
 * over btl tcp: both must print the same CHECK lines. Windows come from MPI_Win_create and
 * every access goes to another rank: Open MPI 4.1.4's btl ofi dereferences the NULL
 * registration handle that osc rdma passes for memory it reaches directly -- a rank's own
 * window, and MPI_Win_allocate windows of ranks on the same node -- in MPI_Compare_and_swap
 * (mca_btl_ofi_acswap; libfabric's own shm provider crashes there the same way), so
 * test/btl's btl_osc, which does both, cannot run over btl ofi.
 *   fence put/get to the right neighbour, sizes up to argv[1] (default 1 MiB);
 *   passive: every rank but 0 hammers rank 0 (rank 0 hammers rank 1) with 64-bit fetch-and-op,
 *   32-bit and 64-bit accumulate, a compare-and-swap lock, get_accumulate.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, failures;

#define EXPECT(cond, ...)                                                                  \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "rank %d: ", rank);                                \
			fprintf(stderr, __VA_ARGS__);                                      \
			fprintf(stderr, "\n");                                             \
			failures++;                                                        \
		}                                                                          \
	} while (0)

static unsigned char pat(size_t i, int who, size_t len)
{
	return (unsigned char)(i * 131 + (size_t)who * 17 + len);
}

static uint64_t fence_put_get(MPI_Win win, unsigned char *mem, size_t max)
{
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	unsigned char *buf = malloc(max);
	uint64_t sum = 0;

	for (size_t len = 1; len <= max; len *= 4) {
		for (size_t i = 0; i < len; i++)
			buf[i] = pat(i, rank, len);
		MPI_Win_fence(0, win);
		MPI_Put(buf, (int)len, MPI_BYTE, right, 0, (int)len, MPI_BYTE, win);
		MPI_Win_fence(0, win);
		for (size_t i = 0; i < len; i++)
			if (mem[i] != pat(i, left, len)) {
				EXPECT(0, "put of %zu bytes: byte %zu", len, i);
				break;
			}
		memset(buf, 0, len);
		MPI_Get(buf, (int)len, MPI_BYTE, right, 0, (int)len, MPI_BYTE, win);
		MPI_Win_fence(0, win);
		for (size_t i = 0; i < len; i++)
			if (buf[i] != pat(i, rank, len)) {
				EXPECT(0, "get of %zu bytes: byte %zu", len, i);
				break;
			}
		sum = sum * 31 + len;
	}
	free(buf);
	return sum;
}

/* Words: 0 fetch-and-op counter, 1 lock, 2..9 64-bit accumulate, 10 two 32-bit sums. */
static void passive(MPI_Win win, int64_t *base, const char *flavor)
{
	const int rounds = 40;
	int target = rank == 0 ? 1 : 0;
	int64_t one = 1, got[40], vals[8], prev;
	int32_t one32[2] = {1, -2};

	memset(base, 0, 16 * sizeof(int64_t));
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock_all(0, win);
	for (int i = 0; i < rounds; i++) {
		MPI_Fetch_and_op(&one, &got[i], MPI_INT64_T, target, 0, MPI_SUM, win);
		MPI_Win_flush(target, win);
	}
	for (int i = 0; i < 8; i++)
		vals[i] = (int64_t)(rank + 1) * (i + 1);
	MPI_Accumulate(vals, 8, MPI_INT64_T, target, 2, 8, MPI_INT64_T, MPI_SUM, win);
	for (int i = 0; i < rounds; i++)
		MPI_Accumulate(one32, 2, MPI_INT32_T, target, 10, 2, MPI_INT32_T, MPI_SUM, win);
	MPI_Win_flush(target, win);
	MPI_Win_unlock_all(win);
	for (int i = 1; i < rounds; i++)
		EXPECT(got[i] > got[i - 1], "%s: fetch_and_op tickets not increasing", flavor);

	/* a lock word on the target, taken and released with compare-and-swap */
	int taken = 0;
	for (int attempt = 0; attempt < 100000 && !taken; attempt++) {
		int64_t me = rank + 1, zero = 0;
		MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win);
		MPI_Compare_and_swap(&me, &zero, &prev, MPI_INT64_T, target, 1, win);
		MPI_Win_unlock(target, win);
		taken = prev == 0;
	}
	EXPECT(taken, "%s: compare_and_swap lock never taken", flavor);
	int64_t me = rank + 1, zero = 0;
	MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win);
	MPI_Compare_and_swap(&zero, &me, &prev, MPI_INT64_T, target, 1, win);
	MPI_Win_unlock(target, win);
	EXPECT(prev == rank + 1, "%s: lock held by %lld", flavor, (long long)prev);
	MPI_Barrier(MPI_COMM_WORLD);

	/* the owners read their own words; rank 1 also read rank 0's with get_accumulate */
	int64_t total[11];
	int hitters = rank == 0 ? size - 1 : rank == 1 ? 1 : 0;
	if (rank == 1) {
		MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
		MPI_Get_accumulate(NULL, 0, MPI_INT64_T, total, 11, MPI_INT64_T, 0, 0, 11,
				   MPI_INT64_T, MPI_NO_OP, win);
		MPI_Win_unlock(0, win);
		EXPECT(total[0] == (int64_t)rounds * (size - 1), "%s: rank 0's counter %lld", flavor,
		       (long long)total[0]);
	}
	MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
	memcpy(total, base, sizeof(total));
	MPI_Win_unlock(rank, win);
	if (hitters) {
		int32_t h[2];
		int64_t want = 0;
		memcpy(h, &total[10], 8);
		EXPECT(total[0] == (int64_t)rounds * hitters, "%s: counter %lld", flavor,
		       (long long)total[0]);
		EXPECT(total[1] == 0, "%s: lock word %lld left behind", flavor, (long long)total[1]);
		for (int r = 0; r < size; r++)
			if ((r == 0 ? 1 : 0) == rank)
				want += r + 1;
		for (int i = 0; i < 8; i++)
			EXPECT(total[2 + i] == want * (i + 1), "%s: accumulate[%d] = %lld", flavor, i,
			       (long long)total[2 + i]);
		EXPECT(h[0] == rounds * hitters && h[1] == -2 * rounds * hitters,
		       "%s: 32-bit sums %d %d", flavor, h[0], h[1]);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	int32_t h32[2];
	memcpy(h32, &total[10], 8);
	if (rank == 0)
		printf("CHECK %s passive counter %lld accumulate %lld..%lld 32-bit %d/%d cswap ok\n",
		       flavor, (long long)total[0], (long long)total[2], (long long)total[9], h32[0],
		       h32[1]);
}

int main(int argc, char **argv)
{
	size_t max = argc > 1 ? strtoul(argv[1], NULL, 0) : 1 << 20;
	unsigned char *mem;
	MPI_Win win;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size < 2) {
		fprintf(stderr, "needs 2 ranks or more\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Alloc_mem((MPI_Aint)max, MPI_INFO_NULL, &mem);
	MPI_Win_create(mem, (MPI_Aint)max, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	uint64_t s = fence_put_get(win, mem, max);
	if (rank == 0)
		printf("CHECK create fence put/get up to %zu bytes: %llx\n", max,
		       (unsigned long long)s);
	MPI_Win_free(&win);
	MPI_Win_create(mem, (MPI_Aint)max, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	passive(win, (int64_t *)mem, "create");
	MPI_Win_free(&win);
	MPI_Free_mem(mem);

	int all = 0;
	MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("osc peers: %d ranks %s\n", size, all ? "FAILED" : "ok");
	MPI_Finalize();
	return all ? 1 : 0;
}
