/* MPI_Allreduce latency (osu_allreduce) over all ranks: median time per call in
 * microseconds, averaged over the ranks. */
#include "bench_common.h"

int main(int argc, char **argv)
{
	struct bench_opts o;
	int rank;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	bench_parse(argc, argv, &o, 1 << 20);
	if (o.min < sizeof(float))
		o.min = sizeof(float);
	float *s = bench_buf(o.max), *r = bench_buf(o.max);
	if (0 == rank)
		printf("# allreduce us\n");
	for (size_t size = o.min; size <= o.max; size *= 4) {
		int iters = bench_iters(&o, size), count = (int)(size / sizeof(float));
		double *tv = malloc(sizeof(double) * (size_t)iters), t, sum;
		MPI_Barrier(MPI_COMM_WORLD);
		for (int i = 0; i < iters + o.skip; i++) {
			double t0 = MPI_Wtime();
			MPI_Allreduce(s, r, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
			if (i >= o.skip)
				tv[i - o.skip] = MPI_Wtime() - t0;
		}
		t = bench_median(tv, iters) * 1e6;
		free(tv);
		MPI_Reduce(&t, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
		if (0 == rank) {
			int np;
			MPI_Comm_size(MPI_COMM_WORLD, &np);
			printf("%zu %.2f\n", size, sum / np);
		}
		fflush(stdout);
	}
	free(s);
	free(r);
	MPI_Finalize();
	return 0;
}
