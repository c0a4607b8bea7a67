/*
 * osu_latency: ping-pong between ranks 0 and 1 with blocking MPI_Send/MPI_Recv, 0 B..4 MiB;
 * one-way latency in microseconds, the average over LOOP round trips after SKIP warm-up
 * round trips (10000/100, and 1000/10 above 8 KiB), halved (-M: the median round trip).
 */
#include "bench_common.h"

int main(int argc, char **argv)
{
	struct bench_opts o;
	int rank;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	bench_parse(argc, argv, &o, 10000, 1000, 100, 10);
	char *sbuf = bench_buf(o.max, 'a'), *rbuf = bench_buf(o.max, 'b');
	struct bench_timer bt = {0};
	if (0 == rank)
		printf("# latency us\n");
	for (size_t size = bench_first(&o, 0); size <= o.max; size = bench_next(size)) {
		int loop = bench_loop(&o, size), skip = bench_skip(&o, size);

		MPI_Barrier(MPI_COMM_WORLD);
		for (int i = 0; i < loop + skip; i++) {
			if (i == skip)
				bench_timer_start(&bt, &o, loop);
			if (0 == rank) {
				MPI_Send(sbuf, (int)size, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
				MPI_Recv(rbuf, (int)size, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			} else if (1 == rank) {
				MPI_Recv(rbuf, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				MPI_Send(sbuf, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
			}
			if (i >= skip)
				bench_tick(&bt);
		}
		if (0 == rank) {
			printf("%zu %.2f\n", size, bench_per_iter(&bt) * 1e6 / 2.0);
			fflush(stdout);
		}
	}
	free(bt.t);
	free(sbuf);
	free(rbuf);
	MPI_Finalize();
	return 0;
}
