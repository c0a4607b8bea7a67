/*
 * osu_latency: ping-pong between ranks 0 and 1 with blocking MPI_Send/MPI_Recv, 0 B..4 MiB;
 * one-way latency in microseconds, the average over LOOP round trips after SKIP warm-up
 * round trips (10000/100, and 1000/10 above 8 KiB), halved.
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
	if (0 == rank)
		printf("# latency us\n");
	for (size_t size = bench_first(&o, 0); size <= o.max; size = bench_next(size)) {
		int loop = bench_loop(&o, size), skip = bench_skip(&o, size);
		double t0 = 0;

		MPI_Barrier(MPI_COMM_WORLD);
		for (int i = 0; i < loop + skip; i++) {
			if (i == skip)
				t0 = MPI_Wtime();
			if (0 == rank) {
				MPI_Send(sbuf, (int)size, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
				MPI_Recv(rbuf, (int)size, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			} else if (1 == rank) {
				MPI_Recv(rbuf, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				MPI_Send(sbuf, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
			}
		}
		if (0 == rank) {
			printf("%zu %.2f\n", size, (MPI_Wtime() - t0) * 1e6 / (2.0 * loop));
			fflush(stdout);
		}
	}
	free(sbuf);
	free(rbuf);
	MPI_Finalize();
	return 0;
}
