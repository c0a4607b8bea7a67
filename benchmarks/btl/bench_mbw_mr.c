/*
 * osu_mbw_mr: multi-pair bandwidth and message rate, 1 B..4 MiB. With N ranks (even), rank
 * r < N/2 sends to rank r + N/2: windows of 64 MPI_Isend, each acknowledged by a 4-byte
 * message once the receiver's 64 MPI_Irecv completed; LOOP windows after SKIP warm-up ones
 * (100/10, and 20/2 above 8 KiB). Prints "<size> <MB/s> <messages/s>", both aggregated over
 * the pairs (bytes and messages of all pairs over the slowest sender's time; -M: per median
 * window).
 */
#include "bench_common.h"

int main(int argc, char **argv)
{
	struct bench_opts o;
	int rank, np;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	bench_parse(argc, argv, &o, 100, 20, 10, 2);
	if (np < 2 || np % 2) {
		if (0 == rank)
			fprintf(stderr, "bench_mbw_mr: needs an even number of ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	int pairs = np / 2, sender = rank < pairs;
	int peer = sender ? rank + pairs : rank - pairs;
	MPI_Request rq[BENCH_WINDOW];
	char *sbuf = bench_buf(o.max, 'a'), *rbuf = bench_buf(o.max, 'b');
	struct bench_timer bt = {0};
	if (0 == rank)
		printf("# mbw_mr MB/s msgs/s (%d pairs)\n", pairs);
	for (size_t size = bench_first(&o, 1); size <= o.max; size *= 2) {
		int loop = bench_loop(&o, size), skip = bench_skip(&o, size);
		double t, tmax;

		MPI_Barrier(MPI_COMM_WORLD);
		for (int i = 0; i < loop + skip; i++) {
			if (i == skip)
				bench_timer_start(&bt, &o, loop);
			for (int w = 0; w < BENCH_WINDOW; w++) {
				if (sender)
					MPI_Isend(sbuf, (int)size, MPI_CHAR, peer, 100, MPI_COMM_WORLD, &rq[w]);
				else
					MPI_Irecv(rbuf, (int)size, MPI_CHAR, peer, 100, MPI_COMM_WORLD, &rq[w]);
			}
			MPI_Waitall(BENCH_WINDOW, rq, MPI_STATUSES_IGNORE);
			if (sender)
				MPI_Recv(rbuf, 4, MPI_CHAR, peer, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			else
				MPI_Send(sbuf, 4, MPI_CHAR, peer, 101, MPI_COMM_WORLD);
			if (i >= skip)
				bench_tick(&bt);
		}
		t = sender ? bench_per_iter(&bt) : 0; /* per window */
		MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
		if (0 == rank) {
			double msgs = (double)pairs * BENCH_WINDOW;

			printf("%zu %.2f %.0f\n", size, msgs * (double)size / tmax / 1e6, msgs / tmax);
			fflush(stdout);
		}
	}
	free(bt.t);
	free(sbuf);
	free(rbuf);
	MPI_Finalize();
	return 0;
}
