/*
 * btl_osc: MPI one-sided communication, run over osc rdma on our BTL's RDMA (iWARP over
 * SCTP) and over osc pt2pt on btl tcp; both must print the same CHECK lines.
 * Windows made with MPI_Win_create (osc rdma then moves data with the BTL's put/get/atomics
 * even on one node) and MPI_Win_allocate; fence and passive-target (lock, lock_all, flush)
 * epochs; put, get, accumulate, get_accumulate, fetch_and_op, compare_and_swap; flush as
 * remote completion (a message after MPI_Win_flush finds the data there).
 *   btl_osc [MAXSIZE]   (default 4 MiB)
 */
#include "btl_test.h"

#include <stdint.h>

static int rank, size;

static void check_block(const unsigned char *b, size_t n, uint64_t seed, const char *what)
{
	long bad = bt_check(b, n, seed);
	BT_EXPECT(bad < 0, "%s: %zu bytes, byte %ld wrong", what, n, bad);
}

/* Fence epochs: put to the right neighbour, get from the left one, sizes up to max. */
static void fence_put_get(MPI_Win win, unsigned char *base, size_t max, const char *flavor)
{
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	unsigned char *src = malloc(max), *dst = malloc(max);
	uint64_t sum = 0;

	BT_EXPECT(src && dst, "malloc");
	for (size_t n = 1; n <= max; n = n < 64 ? n * 8 : n * 16) {
		bt_fill(src, n, 1000 + (uint64_t)rank * 7 + n);
		memset(base, 0, max);
		MPI_Win_fence(0, win);
		MPI_Put(src, (int)n, MPI_BYTE, right, 0, (int)n, MPI_BYTE, win);
		MPI_Win_fence(0, win);
		check_block(base, n, 1000 + (uint64_t)left * 7 + n, "put");
		sum += bt_hash(base, n);
		/* now read it back from the left neighbour's window: what I put there */
		memset(dst, 0, n);
		MPI_Win_fence(0, win);
		MPI_Get(dst, (int)n, MPI_BYTE, left, 0, (int)n, MPI_BYTE, win);
		MPI_Win_fence(0, win);
		check_block(dst, n, 1000 + (uint64_t)((left + size - 1) % size) * 7 + n, "get");
	}
	MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
	if (0 == rank)
		printf("CHECK %s fence put/get up to %zu bytes: %016llx\n", flavor, max,
		       (unsigned long long)sum);
	free(src);
	free(dst);
}

/* Many multi-segment gets in flight at once (their responses overtake each other on the
 * streams): each rank reads 16 blocks of 64 KiB from its left neighbour in one epoch. */
static void burst_get(MPI_Win win, unsigned char *base, const char *flavor)
{
	const size_t n = 65536;
	const int k = 16;
	int left = (rank + size - 1) % size;
	unsigned char *dst = malloc(n * k);
	uint64_t sum = 0;

	BT_EXPECT(dst, "malloc");
	for (int j = 0; j < k; j++)
		bt_fill(base + n * (size_t)j, n, 5000 + (uint64_t)rank * 31 + (uint64_t)j);
	memset(dst, 0, n * k);
	MPI_Win_fence(0, win);
	for (int j = 0; j < k; j++)
		MPI_Get(dst + n * (size_t)j, (int)n, MPI_BYTE, left, (MPI_Aint)(n * (size_t)j), (int)n,
			MPI_BYTE, win);
	MPI_Win_fence(0, win);
	for (int j = 0; j < k; j++) {
		check_block(dst + n * (size_t)j, n, 5000 + (uint64_t)left * 31 + (uint64_t)j, "burst get");
		sum += bt_hash(dst + n * (size_t)j, n);
	}
	MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
	if (0 == rank)
		printf("CHECK %s burst of %d gets of %zu bytes: %016llx\n", flavor, k, n,
		       (unsigned long long)sum);
	free(dst);
}

/* Passive target: every rank adds into rank 0's counters and takes tickets. */
static void passive_atomics(MPI_Win win, int64_t *base, const char *flavor)
{
	const int rounds = 50;
	int64_t one = 1, prev, got[50];
	int64_t vals[8];

	if (0 == rank)
		memset(base, 0, 16 * sizeof(int64_t));
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock_all(0, win);
	for (int i = 0; i < rounds; i++) {
		MPI_Fetch_and_op(&one, &got[i], MPI_INT64_T, 0, 0, MPI_SUM, win);
		MPI_Win_flush(0, win);
	}
	for (int i = 0; i < 8; i++)
		vals[i] = (int64_t)(rank + 1) * (i + 1);
	MPI_Accumulate(vals, 8, MPI_INT64_T, 0, 2, 8, MPI_INT64_T, MPI_SUM, win);
	MPI_Win_flush(0, win);
	MPI_Win_unlock_all(win);
	/* every ticket was handed out once: mine are strictly increasing */
	for (int i = 1; i < rounds; i++)
		BT_EXPECT(got[i] > got[i - 1], "fetch_and_op tickets not increasing");
	MPI_Barrier(MPI_COMM_WORLD);

	/* compare-and-swap: a lock word at index 1, taken and released by each rank in turn
	 * (bounded in time, not attempts: a rank trying on its own memory tries fast, while the
	 * holder may wait for a CPU among oversubscribed ranks) */
	int64_t taken = 0;
	double give_up = MPI_Wtime() + 60;
	while (!taken && MPI_Wtime() < give_up) {
		int64_t me = rank + 1, zero = 0;
		MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
		MPI_Compare_and_swap(&me, &zero, &prev, MPI_INT64_T, 0, 1, win);
		MPI_Win_unlock(0, win);
		taken = prev == 0;
	}
	BT_EXPECT(taken, "compare_and_swap: lock never taken");
	MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
	int64_t me = rank + 1, zero = 0;
	MPI_Compare_and_swap(&zero, &me, &prev, MPI_INT64_T, 0, 1, win);
	MPI_Win_unlock(0, win);
	BT_EXPECT(prev == rank + 1, "compare_and_swap: lock held by %lld, not me", (long long)prev);

	/* get_accumulate with MPI_NO_OP reads the totals back */
	int64_t total[10];
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
	MPI_Get_accumulate(NULL, 0, MPI_INT64_T, total, 10, MPI_INT64_T, 0, 0, 10, MPI_INT64_T,
			   MPI_NO_OP, win);
	MPI_Win_unlock(0, win);
	BT_EXPECT(total[0] == (int64_t)rounds * size, "counter %lld, want %lld", (long long)total[0],
		  (long long)rounds * size);
	BT_EXPECT(total[1] == 0, "lock word %lld left behind", (long long)total[1]);
	for (int i = 0; i < 8; i++)
		BT_EXPECT(total[2 + i] == (int64_t)size * (size + 1) / 2 * (i + 1),
			  "accumulate[%d] = %lld", i, (long long)total[2 + i]);
	MPI_Barrier(MPI_COMM_WORLD);
	if (0 == rank)
		printf("CHECK %s passive fetch_and_op %lld cswap-lock ok accumulate %lld..%lld\n",
		       flavor, (long long)total[0], (long long)total[2], (long long)total[9]);
}

/* Exclusive lock epochs: each rank writes its block into every other rank's window. */
static void passive_puts(MPI_Win win, unsigned char *base, size_t block, const char *flavor)
{
	unsigned char *src = malloc(block);
	uint64_t sum;

	BT_EXPECT(src, "malloc");
	memset(base, 0, block * (size_t)size);
	MPI_Barrier(MPI_COMM_WORLD);
	bt_fill(src, block, 77 + (uint64_t)rank);
	for (int t = 0; t < size; t++) {
		MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win);
		MPI_Put(src, (int)block, MPI_BYTE, t, (MPI_Aint)(block * (size_t)rank), (int)block,
			MPI_BYTE, win);
		MPI_Win_unlock(t, win);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win); /* make remote updates visible here */
	for (int r = 0; r < size; r++)
		check_block(base + block * (size_t)r, block, 77 + (uint64_t)r, "lock put");
	sum = bt_hash(base, block * (size_t)size);
	MPI_Win_unlock(rank, win);
	MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
	if (0 == rank)
		printf("CHECK %s lock/unlock puts of %zu bytes: %016llx\n", flavor, block,
		       (unsigned long long)sum);
	free(src);
}

/*
 * MPI_Win_flush completes puts at the target: each rank puts 8 blocks of 128 KiB (each cut into
 * segments that travel unordered over the streams) into its right neighbour's window, flushes,
 * and tells the neighbour with a message; the neighbour checks its window on receipt. Without
 * a remote completion in the flush, the small message could overtake the bulk data.
 */
static void flush_then_notify(MPI_Win win, unsigned char *base, const char *flavor)
{
	const size_t n = 128 * 1024;
	const int k = 8;
	int right = (rank + 1) % size, left = (rank + size - 1) % size, token = 0;
	unsigned char *src = malloc(n * k);
	uint64_t sum = 0;

	BT_EXPECT(src, "malloc");
	for (int round = 0; round < 4; round++) {
		uint64_t seed = 9000 + (uint64_t)round * 101;

		for (int j = 0; j < k; j++)
			bt_fill(src + n * (size_t)j, n, seed + (uint64_t)rank * 13 + (uint64_t)j);
		memset(base, 0, n * k);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Win_lock_all(0, win);
		for (int j = 0; j < k; j++)
			MPI_Put(src + n * (size_t)j, (int)n, MPI_BYTE, right, (MPI_Aint)(n * (size_t)j),
				(int)n, MPI_BYTE, win);
		MPI_Win_flush(right, win);
		MPI_Send(&token, 1, MPI_INT, right, 42, MPI_COMM_WORLD);
		MPI_Recv(&token, 1, MPI_INT, left, 42, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Win_sync(win);
		for (int j = 0; j < k; j++) {
			check_block(base + n * (size_t)j, n, seed + (uint64_t)left * 13 + (uint64_t)j,
				    "put after flush");
			sum += bt_hash(base + n * (size_t)j, n);
		}
		MPI_Win_unlock_all(win);
	}
	MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
	if (0 == rank)
		printf("CHECK %s flush then notify, 4 x %d puts of %zu bytes: %016llx\n", flavor, k, n,
		       (unsigned long long)sum);
	free(src);
}

/*
 * Accumulates that the target memory cannot do as one atomic (MPI_INT, and runs of elements)
 * are a read, an update and a write under the window's accumulate lock: every rank adds to the
 * same elements of rank 0 many times, and no update may be lost. A write that completes before
 * the target has placed it lets the next rank read the old value.
 */
static void contended_accumulate(MPI_Win win, int *base, const char *flavor)
{
	const int rounds = 100, n = 1024;
	int one[1024], total[1024];

	for (int i = 0; i < n; i++)
		one[i] = 1 + i % 7;
	if (0 == rank)
		memset(base, 0, (size_t)(n + 1) * sizeof(int));
	MPI_Barrier(MPI_COMM_WORLD);
	for (int r = 0; r < rounds; r++) {
		int lock = r % 2 ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED;

		MPI_Win_lock(lock, 0, 0, win);
		MPI_Accumulate(one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win);
		MPI_Accumulate(one, n, MPI_INT, 0, 1, n, MPI_INT, MPI_SUM, win);
		MPI_Win_unlock(0, win);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (0 == rank) {
		MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
		memcpy(total, base + 1, sizeof(total));
		BT_EXPECT(base[0] == rounds * size, "one int: %d, want %d", base[0], rounds * size);
		MPI_Win_unlock(0, win);
		for (int i = 0; i < n; i++)
			BT_EXPECT(total[i] == rounds * size * (1 + i % 7), "element %d: %d, want %d", i,
				  total[i], rounds * size * (1 + i % 7));
		printf("CHECK %s contended accumulates: %d x %d ranks, no update lost\n", flavor,
		       rounds, size);
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
	size_t max = argc > 1 ? (size_t)strtoull(argv[1], NULL, 0) : 4u << 20;
	size_t len = max > (1u << 20) ? max : 1u << 20; /* burst_get's 16 x 64 KiB, 8 x 128 KiB */
	MPI_Win win;
	void *mem;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	len = len > 65536 * (size_t)size ? len : 65536 * (size_t)size;

	/* MPI_Win_create: user memory, every access through the BTL */
	MPI_Alloc_mem((MPI_Aint)len, MPI_INFO_NULL, &mem);
	MPI_Win_create(mem, (MPI_Aint)len, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	fence_put_get(win, mem, max, "create");
	burst_get(win, mem, "create");
	passive_puts(win, mem, 65536, "create");
	flush_then_notify(win, mem, "create");
	MPI_Win_free(&win);
	MPI_Win_create(mem, (MPI_Aint)len, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	passive_atomics(win, mem, "create");
	MPI_Win_free(&win);
	MPI_Win_create(mem, (MPI_Aint)len, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	contended_accumulate(win, mem, "create");
	MPI_Win_free(&win);
	MPI_Free_mem(mem);

	/* MPI_Win_allocate: the case that fails over btl tcp with osc rdma */
	MPI_Win_allocate((MPI_Aint)len, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
	fence_put_get(win, mem, max < (1u << 20) ? max : 1u << 20, "allocate");
	MPI_Win_free(&win);
	MPI_Win_allocate((MPI_Aint)len, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
	passive_atomics(win, mem, "allocate");
	MPI_Win_free(&win);

	MPI_Barrier(MPI_COMM_WORLD);
	if (0 == rank)
		printf("done\n");
	MPI_Finalize();
	return 0;
}
