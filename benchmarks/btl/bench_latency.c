/* Ping-pong latency between ranks 0 and 1 (osu_latency): one-way time in microseconds
 * (half the median round trip). */
#include "bench_common.h"

int main(int argc, char **argv)
{
	struct bench_opts o;
	int rank;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	bench_parse(argc, argv, &o, 1 << 20);
	char *buf = bench_buf(o.max);
	if (0 == rank)
		printf("# latency us\n");
	for (size_t size = 0; size <= o.max; size = size ? size * 4 : 1) {
		int iters = bench_iters(&o, size) * 2;
		double *t = malloc(sizeof(double) * (size_t)iters);
		MPI_Barrier(MPI_COMM_WORLD);
		for (int i = 0; i < iters + o.skip; i++) {
			double t0 = MPI_Wtime();
			if (0 == rank) {
				MPI_Send(buf, (int)size, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
				MPI_Recv(buf, (int)size, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			} else if (1 == rank) {
				MPI_Recv(buf, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				MPI_Send(buf, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
			}
			if (i >= o.skip)
				t[i - o.skip] = MPI_Wtime() - t0;
		}
		if (0 == rank)
			printf("%zu %.2f\n", size, bench_median(t, iters) * 1e6 / 2.0);
		fflush(stdout);
		free(t);
	}
	free(buf);
	MPI_Finalize();
	return 0;
}
