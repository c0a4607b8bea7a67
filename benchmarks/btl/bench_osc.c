/*
 * bench_osc: the OSU one-sided benchmarks (osu_put_latency, osu_get_latency, osu_acc_latency,
 * osu_put_bw, osu_get_bw, osu_put_bibw) on 2 ranks, each size with its own MPI_Win_create
 * window, so that osc rdma moves every byte with the BTL's RDMA (MPI_Win_allocate could put
 * the window in shared memory). Rank 0 prints "# osc <test> <sync> <unit>" and "<size> <value>".
 *
 *   bench_osc TEST [-s lock|flush|fence] [bench_common.h options]
 *   put_lat, get_lat, acc_lat (MPI_Accumulate, MPI_CHAR, MPI_SUM; -d int|long|double: that
 *     type, sizes from its size on): 0 B..4 MiB, microseconds;
 *     lock: lock(shared), op, unlock per iteration; flush: one lock, op + MPI_Win_flush per
 *     iteration; fence: rank 0 does op + fence + fence, rank 1 fence + op + fence (half
 *     the time per iteration). LOOP 10000 after SKIP 100 (100/10 above 8 KiB), average
 *     (-M: median).
 *   put_bw, get_bw: 1 B..4 MiB, windows of 32 operations to consecutive places, each window
 *     closed by unlock (lock), flush (flush) or fence (fence); MB/s. LOOP 10000/SKIP 100
 *     (30/10 above 8 KiB).
 *   put_bibw: as put_bw with fence, both ranks putting to each other (both directions counted).
 *   mixed: the thesis's overlap test: rank 0 keeps MPI_Isend traffic of the size going to rank
 *     1 while it does MPI_Put and MPI_Get of the same size, one fence epoch each; us per epoch.
 */
#include "bench_common.h"

#define OSC_WINDOW 32 /* OSU's WINDOW_SIZE_LARGE for one-sided bandwidth */

enum sync { SYNC_LOCK, SYNC_FLUSH, SYNC_FENCE };

static struct bench_opts o;
static struct bench_timer bt;
static MPI_Datatype acc_type = MPI_CHAR; /* -d */
static int acc_size = 1;

static void op(int test, char *buf, size_t n, int target, MPI_Aint disp, MPI_Win win)
{
	switch (test) {
	case 'p':
		MPI_Put(buf, (int)n, MPI_CHAR, target, disp, (int)n, MPI_CHAR, win);
		break;
	case 'g':
		MPI_Get(buf, (int)n, MPI_CHAR, target, disp, (int)n, MPI_CHAR, win);
		break;
	default:
		MPI_Accumulate(buf, (int)n / acc_size, acc_type, target, disp, (int)n / acc_size,
			       acc_type, MPI_SUM, win);
		break;
	}
}

/* One size of a latency test; rank 0's us per operation. */
static double latency(int rank, int test, enum sync sync, char *buf, size_t n, int loop,
		      int skip, MPI_Win win)
{
	double t;

	if (SYNC_FENCE == sync) {
		for (int i = 0; i < loop + skip; i++) {
			if (i == skip)
				bench_timer_start(&bt, &o, loop);
			MPI_Win_fence(0, win);
			if (0 == rank)
				op(test, buf, n, 1, 0, win);
			MPI_Win_fence(0, win);
			if (1 == rank)
				op(test, buf, n, 0, 0, win);
			MPI_Win_fence(0, win);
			if (i >= skip)
				bench_tick(&bt);
		}
		return bench_per_iter(&bt) * 1e6 / 2;
	}
	if (0 != rank)
		return 0;
	if (SYNC_FLUSH == sync)
		MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
	for (int i = 0; i < loop + skip; i++) {
		if (i == skip)
			bench_timer_start(&bt, &o, loop);
		if (SYNC_LOCK == sync)
			MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
		op(test, buf, n, 1, 0, win);
		if (SYNC_LOCK == sync)
			MPI_Win_unlock(1, win);
		else
			MPI_Win_flush(1, win);
		if (i >= skip)
			bench_tick(&bt);
	}
	t = bench_per_iter(&bt);
	if (SYNC_FLUSH == sync)
		MPI_Win_unlock(1, win);
	return t * 1e6;
}

/* One size of a bandwidth test; rank 0's MB/s. */
static double bandwidth(int rank, int test, int bidir, enum sync sync, char *buf, size_t n,
			int loop, int skip, MPI_Win win)
{
	double t;
	int active = 0 == rank || bidir, target = 1 - rank;

	if (SYNC_FLUSH == sync && 0 == rank)
		MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
	for (int i = 0; i < loop + skip && (0 == rank || SYNC_FENCE == sync); i++) {
		if (i == skip)
			bench_timer_start(&bt, &o, loop);
		if (SYNC_FENCE == sync)
			MPI_Win_fence(0, win);
		else if (SYNC_LOCK == sync)
			MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
		for (int j = 0; active && j < OSC_WINDOW; j++)
			op(test, buf + n * (size_t)j, n, target, (MPI_Aint)(n * (size_t)j), win);
		if (SYNC_FENCE == sync)
			MPI_Win_fence(0, win);
		else if (SYNC_LOCK == sync)
			MPI_Win_unlock(1, win);
		else
			MPI_Win_flush(1, win);
		if (i >= skip)
			bench_tick(&bt);
	}
	t = bench_per_iter(&bt);
	if (SYNC_FLUSH == sync && 0 == rank)
		MPI_Win_unlock(1, win);
	return t > 0 ? (bidir ? 2.0 : 1.0) * (double)n * OSC_WINDOW / t / 1e6 : 0;
}

/* One size of the mixed test; us per fence epoch. */
static double mixed(int rank, char *buf, char *sbuf, char *rbuf, size_t n, int loop, int skip,
		    MPI_Win win)
{
	MPI_Request rq;

	MPI_Win_fence(0, win);
	for (int i = 0; i < loop + skip; i++) {
		if (i == skip)
			bench_timer_start(&bt, &o, loop);
		if (0 == rank) {
			MPI_Isend(sbuf, (int)n, MPI_BYTE, 1, 7, MPI_COMM_WORLD, &rq);
			MPI_Put(buf, (int)n, MPI_BYTE, 1, 0, (int)n, MPI_BYTE, win);
			MPI_Get(rbuf, (int)n, MPI_BYTE, 1, 0, (int)n, MPI_BYTE, win);
		} else {
			MPI_Irecv(rbuf, (int)n, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &rq);
		}
		MPI_Wait(&rq, MPI_STATUS_IGNORE);
		MPI_Win_fence(0, win);
		if (i >= skip)
			bench_tick(&bt);
	}
	return bench_per_iter(&bt) * 1e6;
}

int main(int argc, char **argv)
{
	static const char *const names[] = {"put_lat", "get_lat", "acc_lat", "put_bw", "get_bw",
					    "put_bibw", "mixed"};
	int rank, nranks, t = -1;
	const char *test = argc > 1 ? argv[1] : "";
	enum sync sync;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	for (int i = 0; i < (int)(sizeof(names) / sizeof(names[0])); i++)
		if (!strcmp(test, names[i]))
			t = i;
	int lat = t >= 0 && t <= 2, bw = t >= 3 && t <= 5, bidir = 5 == t;
	bench_parse(argc - 1, argv + 1, &o, 10000, bw ? 30 : 100, 100, 10);
	if (t < 0 || 2 != nranks) {
		if (0 == rank)
			fprintf(stderr, "usage: mpirun -np 2 bench_osc put_lat|get_lat|acc_lat|put_bw|"
				"get_bw|put_bibw|mixed [-s lock|flush|fence] [-m max] [-q scale]\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	if (NULL == o.sync)
		o.sync = bidir || 6 == t ? "fence" : "lock";
	if (NULL != o.type) {
		static const struct { const char *name; MPI_Datatype type; } types[] = {
			{"char", MPI_CHAR}, {"int", MPI_INT}, {"long", MPI_LONG}, {"double", MPI_DOUBLE}};
		int k = -1;

		for (int i = 0; i < (int)(sizeof(types) / sizeof(types[0])); i++)
			if (!strcmp(o.type, types[i].name))
				k = i;
		if (k < 0 || 2 != t) {
			if (0 == rank)
				fprintf(stderr, "bench_osc: -d char|int|long|double, with acc_lat only\n");
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
		acc_type = types[k].type;
		MPI_Type_size(acc_type, &acc_size);
	}
	sync = !strcmp(o.sync, "fence") ? SYNC_FENCE : !strcmp(o.sync, "flush") ? SYNC_FLUSH
									       : SYNC_LOCK;
	if (bidir)
		sync = SYNC_FENCE; /* as osu_put_bibw: an active-target test */
	size_t span = o.max * (bw ? OSC_WINDOW : 1);
	char *buf = bench_buf(span, 'a'), *sbuf = bench_buf(o.max, 'c'), *rbuf = bench_buf(o.max, 'd');
	char *wmem = bench_buf(span, 0);
	if (0 == rank)
		printf("# osc %s %s %s%s%s\n", test, 6 == t ? "fence" : o.sync, bw ? "MB/s" : "us",
		       o.type ? " " : "", o.type ? o.type : "");
	for (size_t n = bench_first(&o, bw || 6 == t ? 1 : o.type ? (size_t)acc_size : 0); n <= o.max;
	     n = bench_next(n)) {
		int loop = bench_loop(&o, n), skip = bench_skip(&o, n);
		size_t wlen = n * (bw ? OSC_WINDOW : 1);
		double v;
		MPI_Win win;

		MPI_Win_create(wmem, (MPI_Aint)wlen, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
		MPI_Barrier(MPI_COMM_WORLD);
		if (lat)
			v = latency(rank, test[0], sync, buf, n, loop, skip, win);
		else if (bw)
			v = bandwidth(rank, test[0], bidir, sync, buf, n, loop, skip, win);
		else
			v = mixed(rank, buf, sbuf, rbuf, n, loop, skip, win);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Win_free(&win);
		if (0 == rank) {
			printf("%zu %.2f\n", n, v);
			fflush(stdout);
		}
	}
	free(bt.t);
	free(wmem);
	free(buf);
	free(sbuf);
	free(rbuf);
	MPI_Finalize();
	return 0;
}
