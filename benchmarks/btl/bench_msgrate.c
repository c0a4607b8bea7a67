/* Message rate (osu_mbw_mr with one pair): small messages per second from rank 0 to 1. */
#include "bench_common.h"

int main(int argc, char **argv)
{
	struct bench_opts o;
	int rank;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	bench_parse(argc, argv, &o, 4096);
	MPI_Request *rq = malloc(sizeof(MPI_Request) * (size_t)o.window);
	char *buf = bench_buf(o.max);
	if (0 == rank)
		printf("# msgrate msgs/s\n");
	for (size_t size = o.min; size <= o.max; size *= 4) {
		int iters = o.iters / 2 + 3;
		double *t = malloc(sizeof(double) * (size_t)iters);
		MPI_Barrier(MPI_COMM_WORLD);
		for (int i = 0; i < iters + 2; i++) {
			double t0 = MPI_Wtime();
			if (rank > 1)
				continue;
			for (int w = 0; w < o.window; w++) {
				if (0 == rank)
					MPI_Isend(buf, (int)size, MPI_CHAR, 1, 4, MPI_COMM_WORLD, &rq[w]);
				else
					MPI_Irecv(buf, (int)size, MPI_CHAR, 0, 4, MPI_COMM_WORLD, &rq[w]);
			}
			MPI_Waitall(o.window, rq, MPI_STATUSES_IGNORE);
			if (0 == rank)
				MPI_Recv(buf, 0, MPI_CHAR, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			else
				MPI_Send(buf, 0, MPI_CHAR, 0, 5, MPI_COMM_WORLD);
			if (i >= 2)
				t[i - 2] = MPI_Wtime() - t0;
		}
		if (0 == rank)
			printf("%zu %.0f\n", size, (double)o.window / bench_median(t, iters));
		fflush(stdout);
		free(t);
	}
	free(buf);
	free(rq);
	MPI_Finalize();
	return 0;
}
