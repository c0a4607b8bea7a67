/*
 * osu_allreduce: MPI_Allreduce (MPI_FLOAT, MPI_SUM) over all ranks, 4 B..4 MiB; the average
 * time per call over LOOP calls after SKIP warm-up calls (1000/100, and 100/10 above 8 KiB),
 * averaged over the ranks, in microseconds.
 */
#include "bench_common.h"

int main(int argc, char **argv)
{
	struct bench_opts o;
	int rank, np;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	bench_parse(argc, argv, &o, 1000, 100, 100, 10);
	float *s = bench_buf(o.max, 0), *r = bench_buf(o.max, 0);
	if (0 == rank)
		printf("# allreduce us\n");
	for (size_t size = bench_first(&o, sizeof(float)); size <= o.max; size *= 2) {
		int loop = bench_loop(&o, size), skip = bench_skip(&o, size);
		int count = (int)(size / sizeof(float));
		double t0 = 0, t, sum;

		MPI_Barrier(MPI_COMM_WORLD);
		for (int i = 0; i < loop + skip; i++) {
			if (i == skip)
				t0 = MPI_Wtime();
			MPI_Allreduce(s, r, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
		}
		t = (MPI_Wtime() - t0) * 1e6 / loop;
		MPI_Reduce(&t, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
		if (0 == rank) {
			printf("%zu %.2f\n", size, sum / np);
			fflush(stdout);
		}
	}
	free(s);
	free(r);
	MPI_Finalize();
	return 0;
}
