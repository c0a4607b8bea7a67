/*
 * Unidirectional (osu_bw) or, with BIDIR, bidirectional (osu_bibw) bandwidth between ranks 0
 * and 1: windows of non-blocking sends, acknowledged per window. MB/s (10^6 bytes).
 */
#include "bench_common.h"

#ifndef BIDIR
#define BIDIR 0
#endif

int main(int argc, char **argv)
{
	struct bench_opts o;
	int rank;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	bench_parse(argc, argv, &o, 4 << 20);
	MPI_Request *rq = malloc(sizeof(MPI_Request) * 2 * (size_t)o.window);
	char *sbuf = bench_buf(o.max), *rbuf = bench_buf(o.max);
	if (0 == rank)
		printf("# %s MB/s\n", BIDIR ? "bibw" : "bw");
	for (size_t size = o.min; size <= o.max; size *= 4) {
		int iters = bench_iters(&o, size) / 4 + 3, n;
		double *t = malloc(sizeof(double) * (size_t)iters);
		MPI_Barrier(MPI_COMM_WORLD);
		for (int i = 0; i < iters + 2; i++) {
			double t0 = MPI_Wtime();
			n = 0;
			if (rank <= 1) {
				int peer = 1 - rank;
				if (0 == rank || BIDIR)
					for (int w = 0; w < o.window; w++)
						MPI_Isend(sbuf, (int)size, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &rq[n++]);
				if (1 == rank || BIDIR)
					for (int w = 0; w < o.window; w++)
						MPI_Irecv(rbuf, (int)size, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &rq[n++]);
				MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
				if (0 == rank)
					MPI_Recv(rbuf, 0, MPI_CHAR, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				else
					MPI_Send(sbuf, 0, MPI_CHAR, 0, 3, MPI_COMM_WORLD);
			}
			if (i >= 2)
				t[i - 2] = MPI_Wtime() - t0;
		}
		if (0 == rank)
			printf("%zu %.2f\n", size,
			       (BIDIR ? 2.0 : 1.0) * (double)size * o.window / bench_median(t, iters) / 1e6);
		fflush(stdout);
		free(t);
	}
	free(sbuf);
	free(rbuf);
	free(rq);
	MPI_Finalize();
	return 0;
}
