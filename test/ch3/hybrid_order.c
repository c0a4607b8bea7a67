/*
 * hybrid_order: MPI_Win_flush, MPI_Win_unlock and MPI_Win_fence must mean remote completion
 * -- the target has the data, not merely the transport. Fails (exit 1, the numbers printed)
 * when an update is lost or a target reads its window before the data it was told about.
 *
 * counters: every rank adds 1 to counters in rank 0's window, many times:
 *           MPI_Accumulate(MPI_INT, MPI_SUM) under exclusive and under shared locks (one per
 *           epoch), MPI_Accumulate(MPI_LONG, MPI_SUM) several per epoch (all but the one
 *           carrying the lock request can go as RDMA atomics) and under lock_all + flush;
 *           then get-op-put under an exclusive lock (MPI_Get, flush, add 1, MPI_Put, unlock)
 *           on a block of longs of one segment and of several: an unlock that returned before
 *           the target had placed the Write lets the next rank read the old value. Rank 0
 *           checks each total exactly.
 * notify:   each rank puts a block into the next rank's window, completes it (MPI_Win_flush
 *           in a lock_all epoch, or MPI_Win_lock/unlock exclusive), then tells the target
 *           with MPI_Send; the target, on receipt, checks its window byte for byte (after
 *           MPI_Win_sync) and acknowledges. Sizes 1 B .. MAXSIZE.
 * third:    rank r puts into rank r+1, flushes and tells rank r+2, which MPI_Gets the block
 *           from rank r+1 and checks it (remote completion seen by a third process).
 * fence:    everyone puts into the next rank, MPI_Win_fence, the target checks.
 * readback: everyone gets the whole window of the next rank (up to MAXSIZE x 4, answered from
 *           the window itself), closes the epoch (MPI_Win_fence, or MPI_Win_complete /
 *           MPI_Win_wait) and at once overwrites its own window: the origin must still read
 *           what was there before -- the target's epoch must not end while it still answers.
 * Rank 0 prints "CHECK <part> <hash>"; the hashes do not depend on the device.
 *   hybrid_order [ITERATIONS] [MAXSIZE]   (default 50, 256 KiB)
 */
#include "btl_test.h"

#include <stdint.h>

enum { C_INT_EXCL, C_INT_SHARED, C_LONG_EXCL, C_LONG_SHARED, C_LONG_FLUSH, C_NCOUNT };
#define PER_EPOCH 4	/* MPI_LONG accumulates per lock epoch */
#define SMALL_LONGS 8	/* get-op-put blocks: 64 bytes (one segment) */
#define BIG_LONGS 20000	/* and 160000 bytes (several) */

static int rank, size, iters;
static size_t maxsize;

/* rank 0's counters: ints and longs at the start of its window, the blocks after them */
struct counters {
	int i[C_NCOUNT];
	long l[C_NCOUNT];
	long small[SMALL_LONGS];
	long big[BIG_LONGS];
};

static uint64_t seed(int who, int iter, int what)
{
	return 0x1000000ull * (uint64_t)(what + 1) + 1000ull * (uint64_t)iter + (uint64_t)who;
}

static void expect_total(const char *what, long got, long want)
{
	if (got != want)
		BT_FAIL("%s: total %ld, expected %ld (%ld updates lost)", what, got, want,
			want - got);
}

static void acc_loop(MPI_Win win, MPI_Datatype type, int lock, int per_epoch, MPI_Aint disp)
{
	int one_i = 1;
	long one_l = 1;
	void *one = type == MPI_INT ? (void *)&one_i : (void *)&one_l;

	for (int it = 0; it < iters; it++) {
		MPI_Win_lock(lock, 0, 0, win);
		for (int k = 0; k < per_epoch; k++)
			MPI_Accumulate(one, 1, type, 0, disp, 1, type, MPI_SUM, win);
		MPI_Win_unlock(0, win);
	}
}

/* n longs at disp of rank 0, each incremented under an exclusive lock, iters times */
static void get_op_put(MPI_Win win, MPI_Aint disp, long *buf, int n)
{
	for (int it = 0; it < iters; it++) {
		MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
		MPI_Get(buf, n, MPI_LONG, 0, disp, n, MPI_LONG, win);
		MPI_Win_flush(0, win);
		for (int k = 0; k < n; k++)
			buf[k]++;
		MPI_Put(buf, n, MPI_LONG, 0, disp, n, MPI_LONG, win);
		MPI_Win_unlock(0, win);
	}
}

static void counters(void)
{
	struct counters *c;
	MPI_Win win;
	long *buf = malloc(sizeof(long) * BIG_LONGS);
	long want = (long)size * iters;
	uint64_t h = 0;

	MPI_Alloc_mem(sizeof(*c), MPI_INFO_NULL, &c);
	BT_EXPECT(c && buf, "malloc");
	memset(c, 0, sizeof(*c));
	/* displacement unit 1: every displacement below is a byte offset */
	MPI_Win_create(c, rank == 0 ? (MPI_Aint)sizeof(*c) : 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD,
		       &win);
	MPI_Barrier(MPI_COMM_WORLD);

	acc_loop(win, MPI_INT, MPI_LOCK_EXCLUSIVE, 1,
		 (MPI_Aint)offsetof(struct counters, i[C_INT_EXCL]));
	acc_loop(win, MPI_INT, MPI_LOCK_SHARED, 1,
		 (MPI_Aint)offsetof(struct counters, i[C_INT_SHARED]));
	acc_loop(win, MPI_LONG, MPI_LOCK_EXCLUSIVE, PER_EPOCH,
		 (MPI_Aint)offsetof(struct counters, l[C_LONG_EXCL]));
	acc_loop(win, MPI_LONG, MPI_LOCK_SHARED, PER_EPOCH,
		 (MPI_Aint)offsetof(struct counters, l[C_LONG_SHARED]));
	MPI_Win_lock_all(0, win);
	for (int it = 0; it < iters; it++) {
		long one = 1;
		MPI_Accumulate(&one, 1, MPI_LONG, 0,
			       (MPI_Aint)offsetof(struct counters, l[C_LONG_FLUSH]), 1, MPI_LONG,
			       MPI_SUM, win);
		MPI_Win_flush(0, win);
	}
	MPI_Win_unlock_all(win);
	get_op_put(win, (MPI_Aint)offsetof(struct counters, small), buf, SMALL_LONGS);
	get_op_put(win, (MPI_Aint)offsetof(struct counters, big), buf, BIG_LONGS);
	MPI_Barrier(MPI_COMM_WORLD);

	if (rank == 0) {
		MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
		expect_total("MPI_INT accumulate, exclusive lock", c->i[C_INT_EXCL], want);
		expect_total("MPI_INT accumulate, shared lock", c->i[C_INT_SHARED], want);
		expect_total("MPI_LONG accumulates, exclusive lock", c->l[C_LONG_EXCL],
			     want * PER_EPOCH);
		expect_total("MPI_LONG accumulates, shared lock", c->l[C_LONG_SHARED],
			     want * PER_EPOCH);
		expect_total("MPI_LONG accumulate + flush", c->l[C_LONG_FLUSH], want);
		for (int k = 0; k < SMALL_LONGS; k++)
			expect_total("get-op-put, 64 bytes", c->small[k], want);
		for (int k = 0; k < BIG_LONGS; k++)
			expect_total("get-op-put, 160000 bytes", c->big[k], want);
		MPI_Win_unlock(0, win);
		h = bt_hash(c, sizeof(*c));
		printf("counters: %d ranks x %d: every total exact (%ld, %ld per epoch x %d)\n",
		       size, iters, want, want * PER_EPOCH, PER_EPOCH);
	}
	bt_report("counters", h);
	MPI_Win_free(&win);
	MPI_Free_mem(c);
	free(buf);
}

enum { SYNC_FLUSH, SYNC_UNLOCK, SYNC_THIRD, SYNC_FENCE };
static const char *const sync_name[] = {"flush", "unlock", "third", "fence"};

/*
 * One completion mode: rank r puts n bytes into slot r of rank r+1's window (each rank's
 * window holds one slot per origin), completes it, then the check: the target reads its own
 * window (flush, unlock, fence) or rank r+2 reads the target's (third) after being told.
 */
static uint64_t notify(int mode, unsigned char *mem, MPI_Win win, unsigned char *src,
		       unsigned char *got)
{
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;
	int third_src = (rank + size - 2) % size;	/* whose put I check in mode third */
	uint64_t h = 0;

	if (mode == SYNC_FLUSH || mode == SYNC_THIRD)
		MPI_Win_lock_all(0, win);
	for (int it = 0; it < iters; it++) {
		size_t n = (size_t)1 << (2 * (it % 10)); /* 1 B .. 256 KiB */
		unsigned long note[2] = {(unsigned long)it, 0}, in[2];
		MPI_Aint slot = (MPI_Aint)(maxsize * (size_t)rank);
		int checker = mode == SYNC_THIRD ? (rank + 2) % size : next;
		int from = mode == SYNC_THIRD ? third_src : prev;

		if (n > maxsize)
			n = maxsize;
		note[1] = n;
		bt_fill(src, n, seed(rank, it, mode));
		if (mode == SYNC_UNLOCK)
			MPI_Win_lock(MPI_LOCK_EXCLUSIVE, next, 0, win);
		MPI_Put(src, (int)n, MPI_BYTE, next, slot, (int)n, MPI_BYTE, win);
		if (mode == SYNC_UNLOCK)
			MPI_Win_unlock(next, win);
		else if (mode == SYNC_FENCE)
			MPI_Win_fence(0, win);
		else
			MPI_Win_flush(next, win);
		if (mode != SYNC_FENCE)
			MPI_Send(note, 2, MPI_UNSIGNED_LONG, checker, 7, MPI_COMM_WORLD);
		/* the check of someone's put */
		if (mode != SYNC_FENCE) {
			MPI_Recv(in, 2, MPI_UNSIGNED_LONG, from, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			BT_EXPECT(in[0] == (unsigned long)it && in[1] == n, "note out of step");
		}
		if (mode == SYNC_THIRD) {
			/* the target is the rank between the origin and me */
			int target = (from + 1) % size;
			MPI_Aint at = (MPI_Aint)(maxsize * (size_t)from);
			memset(got, 0, n);
			MPI_Get(got, (int)n, MPI_BYTE, target, at, (int)n, MPI_BYTE, win);
			MPI_Win_flush(target, win);
		} else if (mode == SYNC_FLUSH) {
			MPI_Win_sync(win);
			memcpy(got, mem + maxsize * (size_t)prev, n);
		} else if (mode == SYNC_UNLOCK) {
			MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
			memcpy(got, mem + maxsize * (size_t)prev, n);
			MPI_Win_unlock(rank, win);
		} else {
			memcpy(got, mem + maxsize * (size_t)prev, n);
		}
		long bad = bt_check(got, n, seed(from, it, mode));
		if (bad >= 0)
			BT_FAIL("%s: %zu bytes from rank %d, iteration %d: byte %ld is %#x, expected "
				"%#x: the check ran before the data was there", sync_name[mode], n,
				from, it, bad, got[bad], bt_byte(seed(from, it, mode), (size_t)bad));
		h += bt_hash(got, n);
		/* the origin overwrites the slot only after the check */
		MPI_Send(note, 1, MPI_UNSIGNED_LONG, from, 8, MPI_COMM_WORLD);
		MPI_Recv(in, 1, MPI_UNSIGNED_LONG, checker, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (mode == SYNC_FENCE)
			MPI_Win_fence(0, win);
	}
	if (mode == SYNC_FLUSH || mode == SYNC_THIRD)
		MPI_Win_unlock_all(win);
	return h;
}

static void notifies(void)
{
	unsigned char *mem, *src = malloc(maxsize), *got = malloc(maxsize);
	size_t wsize = maxsize * (size_t)size;
	MPI_Win win;

	MPI_Alloc_mem((MPI_Aint)wsize, MPI_INFO_NULL, &mem);
	BT_EXPECT(mem && src && got, "malloc");
	memset(mem, 0, wsize);
	MPI_Win_create(mem, (MPI_Aint)wsize, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	for (int mode = SYNC_FLUSH; mode <= SYNC_FENCE; mode++) {
		if (mode == SYNC_FENCE)
			MPI_Win_fence(0, win);
		if (mode == SYNC_THIRD && size < 3)
			continue;
		uint64_t h = notify(mode, mem, win, src, got);
		if (mode == SYNC_FENCE)
			MPI_Win_fence(0, win);
		char what[32];
		snprintf(what, sizeof(what), "notify-%s", sync_name[mode]);
		bt_report(what, h);
	}
	MPI_Win_free(&win);
	MPI_Free_mem(mem);
	free(src);
	free(got);
}

/* Gets of the next rank's whole window, which its owner overwrites the moment its epoch as
 * a target ends (fence or PSCW). */
static void readback(void)
{
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;
	size_t n = maxsize * 4;
	unsigned char *mem, *got = malloc(n);
	MPI_Group world, gnext, gprev;
	MPI_Win win;
	uint64_t h[2] = {0, 0};

	MPI_Comm_group(MPI_COMM_WORLD, &world);
	MPI_Group_incl(world, 1, &next, &gnext);
	MPI_Group_incl(world, 1, &prev, &gprev);
	MPI_Alloc_mem((MPI_Aint)n, MPI_INFO_NULL, &mem);
	BT_EXPECT(mem && got, "malloc");
	MPI_Win_create(mem, (MPI_Aint)n, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	for (int pscw = 0; pscw < 2; pscw++) {
		for (int it = 0; it < iters / 5 + 1; it++) {
			size_t len = it % 2 ? n : n / 2 + 8;
			bt_fill(mem, n, seed(rank, it, 10 + pscw));
			memset(got, 0, len);
			if (pscw) {
				MPI_Win_post(gprev, 0, win);
				MPI_Win_start(gnext, 0, win);
			} else {
				MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
			}
			MPI_Get(got, (int)len, MPI_BYTE, next, 0, (int)len, MPI_BYTE, win);
			/* (a fence that may open another epoch would leave MPICH's ch3 a barrier
			 * to finish under the PSCW epochs that follow) */
			if (pscw) {
				MPI_Win_complete(win);
				MPI_Win_wait(win);
			} else {
				MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
			}
			/* this rank's epoch as a target is over: its window is its own again */
			memset(mem, 0xee, n);
			long bad = bt_check(got, len, seed(next, it, 10 + pscw));
			if (bad >= 0)
				BT_FAIL("readback-%s: %zu bytes from rank %d, iteration %d: byte %ld is "
					"%#x, expected %#x: the target's epoch ended while it still "
					"answered the Get", pscw ? "pscw" : "fence", len, next, it, bad,
					got[bad], bt_byte(seed(next, it, 10 + pscw), (size_t)bad));
			h[pscw] += bt_hash(got, len);
			MPI_Barrier(MPI_COMM_WORLD);
		}
	}
	bt_report("readback-fence", h[0]);
	bt_report("readback-pscw", h[1]);
	MPI_Win_free(&win);
	MPI_Free_mem(mem);
	MPI_Group_free(&gnext);
	MPI_Group_free(&gprev);
	MPI_Group_free(&world);
	free(got);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	iters = argc > 1 ? atoi(argv[1]) : 50;
	maxsize = argc > 2 ? (size_t)atol(argv[2]) : 256 * 1024;
	BT_EXPECT(iters > 0 && maxsize > 0 && size >= 2, "usage: hybrid_order [ITERS] [MAXSIZE]");
	double t0 = MPI_Wtime();
	counters();
	notifies();
	readback();
	if (rank == 0)
		printf("TIME %d ranks: %.2f s\n", size, MPI_Wtime() - t0);
	MPI_Finalize();
	return 0;
}
