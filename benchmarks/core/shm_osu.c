/*
 * osu_latency and osu_bw between two MPI ranks (OSU Micro-Benchmarks counts: latency 10000
 * ping-pongs after 100, 1000 after 10 above 8 KiB; bandwidth 100 windows of 64 non-blocking
 * sends and a 4-byte ack after 10, 20 after 2 above 8 KiB), reporting OSU's mean and, beside
 * it, the median of the loop cut into pieces (100 ping-pongs, one window): on a machine shared
 * with other work the mean follows whoever else got the CPU, the median much less.
 * Prints "# latency us" / "# bw MB/s" and "<size> <osu mean> <median>" lines on rank 0.
 * Usage: shm_osu [-t latency|bw] [-m MAX] [-n MIN] [-q SCALE]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_SIZE (4u << 20)
#define LARGE 8192
#define WINDOW 64
#define BATCH 100

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int scaled(int n, double q)
{
	int k = (int)(n * q);
	return k > 0 ? k : 1;
}

int main(int argc, char **argv)
{
	int rank, c, bw = 0;
	size_t min = 0, max = MAX_SIZE;
	double q = 1;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	while ((c = getopt(argc, argv, "t:m:n:q:")) != -1) {
		switch (c) {
		case 't': bw = !strcmp(optarg, "bw"); break;
		case 'm': max = strtoul(optarg, NULL, 0); break;
		case 'n': min = strtoul(optarg, NULL, 0); break;
		case 'q': q = strtod(optarg, NULL); break;
		default: MPI_Abort(MPI_COMM_WORLD, 2);
		}
	}
	if (max > MAX_SIZE)
		max = MAX_SIZE;
	char *sbuf = malloc(MAX_SIZE), *rbuf = malloc(MAX_SIZE);
	double *t = malloc(sizeof(double) * (size_t)(scaled(10000, q) + 16));
	MPI_Request req[WINDOW];
	memset(sbuf, 'a', MAX_SIZE);
	memset(rbuf, 'b', MAX_SIZE);
	if (rank == 0)
		printf(bw ? "# bw MB/s\n" : "# latency us\n");
	for (size_t size = bw ? 1 : 0; size <= max; size = size ? 2 * size : 1) {
		if (size < min)
			continue;
		int large = size > LARGE, n = 0;
		if (!bw) {
			int loop = scaled(large ? 1000 : 10000, q), skip = scaled(large ? 10 : 100, q);
			int batch = loop < BATCH ? loop : BATCH;
			double t0 = 0, tb = 0;
			MPI_Barrier(MPI_COMM_WORLD);
			for (int i = 0; i < skip + loop; i++) {
				if (i == skip)
					t0 = tb = MPI_Wtime();
				if (rank == 0) {
					MPI_Send(sbuf, (int)size, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
					MPI_Recv(rbuf, (int)size, MPI_CHAR, 1, 1, MPI_COMM_WORLD,
						 MPI_STATUS_IGNORE);
				} else {
					MPI_Recv(rbuf, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD,
						 MPI_STATUS_IGNORE);
					MPI_Send(sbuf, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
				}
				if (i >= skip && (i - skip + 1) % batch == 0) {
					double now = MPI_Wtime();
					t[n++] = (now - tb) * 1e6 / (2.0 * batch);
					tb = now;
				}
			}
			double mean = (MPI_Wtime() - t0) * 1e6 / (2.0 * loop);
			if (rank == 0)
				printf("%zu %.3f %.3f\n", size, mean, median(t, n));
		} else {
			int loop = scaled(large ? 20 : 100, q), skip = scaled(large ? 2 : 10, q);
			double t0 = 0;
			MPI_Barrier(MPI_COMM_WORLD);
			for (int i = 0; i < skip + loop; i++) {
				double ti = MPI_Wtime();
				if (i == skip)
					t0 = ti;
				if (rank == 0) {
					for (int w = 0; w < WINDOW; w++)
						MPI_Isend(sbuf, (int)size, MPI_CHAR, 1, 100, MPI_COMM_WORLD,
							  &req[w]);
					MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
					MPI_Recv(rbuf, 4, MPI_CHAR, 1, 101, MPI_COMM_WORLD,
						 MPI_STATUS_IGNORE);
				} else {
					for (int w = 0; w < WINDOW; w++)
						MPI_Irecv(rbuf, (int)size, MPI_CHAR, 0, 100, MPI_COMM_WORLD,
							  &req[w]);
					MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
					MPI_Send(sbuf, 4, MPI_CHAR, 0, 101, MPI_COMM_WORLD);
				}
				if (i >= skip)
					t[n++] = (double)size * WINDOW / 1e6 / (MPI_Wtime() - ti);
			}
			double mean = (double)size * WINDOW * loop / 1e6 / (MPI_Wtime() - t0);
			if (rank == 0)
				printf("%zu %.2f %.2f\n", size, mean, median(t, n));
		}
		fflush(stdout);
	}
	free(t);
	free(sbuf);
	free(rbuf);
	MPI_Finalize();
	return 0;
}
