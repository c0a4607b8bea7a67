/*
 * osu_bw, or with BIDIR osu_bibw, between ranks 0 and 1, 1 B..4 MiB, MB/s (10^6 bytes):
 * bw: rank 0 posts a window of 64 MPI_Isend, waits for them and for a 4-byte ack that rank 1
 *     sends once its 64 MPI_Irecv completed;
 * bibw: both ranks post 64 MPI_Irecv, then 64 MPI_Isend, and wait for all 128 (both
 *     directions counted).
 * LOOP windows after SKIP warm-up windows (100/10, and 20/2 above 8 KiB); total bytes over
 * the total time of the LOOP (-M: over the median window's time).
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
	bench_parse(argc, argv, &o, 100, 20, 10, 2);
	MPI_Request rq[2 * BENCH_WINDOW];
	char *sbuf = bench_buf(o.max, 'a'), *rbuf = bench_buf(o.max, 'b');
	struct bench_timer bt = {0};
	if (0 == rank)
		printf("# %s MB/s\n", BIDIR ? "bibw" : "bw");
	for (size_t size = bench_first(&o, 1); size <= o.max; size *= 2) {
		int loop = bench_loop(&o, size), skip = bench_skip(&o, size);
		int peer = 1 - rank;

		MPI_Barrier(MPI_COMM_WORLD);
		for (int i = 0; rank <= 1 && i < loop + skip; i++) {
			int n = 0;

			if (i == skip)
				bench_timer_start(&bt, &o, loop);
			if (BIDIR || 1 == rank)
				for (int w = 0; w < BENCH_WINDOW; w++)
					MPI_Irecv(rbuf, (int)size, MPI_CHAR, peer, 100, MPI_COMM_WORLD,
						  &rq[n++]);
			if (BIDIR || 0 == rank)
				for (int w = 0; w < BENCH_WINDOW; w++)
					MPI_Isend(sbuf, (int)size, MPI_CHAR, peer, 100, MPI_COMM_WORLD,
						  &rq[n++]);
			MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
			if (!BIDIR && 0 == rank)
				MPI_Recv(rbuf, 4, MPI_CHAR, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			else if (!BIDIR)
				MPI_Send(sbuf, 4, MPI_CHAR, 0, 101, MPI_COMM_WORLD);
			if (i >= skip)
				bench_tick(&bt);
		}
		if (0 == rank) {
			printf("%zu %.2f\n", size, (BIDIR ? 2.0 : 1.0) * (double)size * BENCH_WINDOW /
							   bench_per_iter(&bt) / 1e6);
			fflush(stdout);
		}
	}
	free(bt.t);
	free(sbuf);
	free(rbuf);
	MPI_Finalize();
	return 0;
}
