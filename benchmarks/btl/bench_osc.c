/*
 * bench_osc: OSU-style one-sided benchmarks on 2 ranks, MPI_Win_create windows (osc rdma then
 * moves every byte with the BTL's RDMA). Rank 0 prints "# <test> <unit>" and "<size> <value>".
 *   bench_osc put_lat|get_lat|put_bw|get_bw|acc_lat|mixed [-m MAX] [-i ITERS] [-w WINDOW]
 * put_lat/get_lat: one operation + MPI_Win_flush, median us (passive target, lock_all).
 * put_bw/get_bw: WINDOW operations then one flush, MB/s.
 * acc_lat: MPI_Accumulate of MPI_SUM on doubles + flush, median us.
 * mixed: the thesis's overlap test: rank 0 keeps MPI_Isend/MPI_Irecv traffic of the size in
 *   flight to rank 1 while doing MPI_Put/MPI_Get of the same size under MPI_Win_fence; prints
 *   the time per fence epoch in us (lower is better).
 */
#include "bench_common.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *t, int n)
{
	qsort(t, (size_t)n, sizeof(*t), cmp_double);
	return t[n / 2];
}

int main(int argc, char **argv)
{
	struct bench_opts o;
	int rank, nranks;
	const char *test = argc > 1 ? argv[1] : "";
	void *win_mem;
	MPI_Win win;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	bench_parse(argc - 1, argv + 1, &o, 1 << 20);
	if (nranks != 2) {
		if (0 == rank)
			fprintf(stderr, "bench_osc: run with 2 ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	int lat = !strcmp(test, "put_lat") || !strcmp(test, "get_lat") || !strcmp(test, "acc_lat");
	int bw = !strcmp(test, "put_bw") || !strcmp(test, "get_bw");
	int mixed = !strcmp(test, "mixed");
	if (!lat && !bw && !mixed) {
		if (0 == rank)
			fprintf(stderr, "usage: bench_osc put_lat|get_lat|put_bw|get_bw|acc_lat|mixed "
					"[-m MAX] [-i ITERS] [-w WINDOW]\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	int put = test[0] == 'p', acc = test[0] == 'a';
	size_t winlen = o.max * (bw ? (size_t)o.window : 1);
	char *buf = bench_buf(winlen), *sbuf = bench_buf(o.max), *rbuf = bench_buf(o.max);
	double *t = malloc(sizeof(double) * (size_t)(o.iters + o.skip + 4));

	MPI_Alloc_mem((MPI_Aint)winlen, MPI_INFO_NULL, &win_mem);
	memset(win_mem, 0, winlen);
	MPI_Win_create(win_mem, (MPI_Aint)winlen, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	if (0 == rank)
		printf("# osc %s %s\n", test, bw ? "MB/s" : "us");
	for (size_t n = acc ? 8 : o.min; n <= o.max; n *= 2) {
		int it = bench_iters(&o, n);
		double v = 0;
		if (mixed) {
			MPI_Request rq[2];
			MPI_Win_fence(0, win);
			double t0 = MPI_Wtime();
			for (int i = 0; i < it; i++) {
				if (0 == rank) {
					MPI_Isend(sbuf, (int)n, MPI_BYTE, 1, 7, MPI_COMM_WORLD, &rq[0]);
					MPI_Put(buf, (int)n, MPI_BYTE, 1, 0, (int)n, MPI_BYTE, win);
					MPI_Get(rbuf, (int)n, MPI_BYTE, 1, 0, (int)n, MPI_BYTE, win);
					MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
				} else {
					MPI_Irecv(rbuf, (int)n, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &rq[1]);
					MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
				}
				MPI_Win_fence(0, win);
			}
			v = (MPI_Wtime() - t0) * 1e6 / it;
		} else if (0 == rank) {
			MPI_Win_lock_all(0, win);
			for (int i = 0; i < it + o.skip; i++) {
				double t0 = MPI_Wtime();
				int k = bw ? o.window : 1;
				for (int j = 0; j < k; j++) {
					MPI_Aint disp = (MPI_Aint)(n * (size_t)j);
					if (acc)
						MPI_Accumulate(buf, (int)(n / 8), MPI_DOUBLE, 1, 0, (int)(n / 8),
							       MPI_DOUBLE, MPI_SUM, win);
					else if (put)
						MPI_Put(buf + disp, (int)n, MPI_BYTE, 1, disp, (int)n, MPI_BYTE,
							win);
					else
						MPI_Get(buf + disp, (int)n, MPI_BYTE, 1, disp, (int)n, MPI_BYTE,
							win);
				}
				MPI_Win_flush(1, win);
				if (i >= o.skip)
					t[i - o.skip] = MPI_Wtime() - t0;
			}
			MPI_Win_unlock_all(win);
			double m = median(t, it);
			v = bw ? (double)n * o.window / m / 1e6 : m * 1e6;
		}
		MPI_Barrier(MPI_COMM_WORLD);
		if (0 == rank)
			printf("%zu %.2f\n", n, v);
		fflush(stdout);
	}
	MPI_Win_free(&win);
	MPI_Free_mem(win_mem);
	free(t);
	free(buf);
	free(sbuf);
	free(rbuf);
	MPI_Finalize();
	return 0;
}
