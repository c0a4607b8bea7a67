/*
 * OSU-style micro-benchmarks for comparing BTLs: shared options and output. Each program
 * prints "# <test> <unit>" then one "<size> <value>" line per message size on rank 0.
 * Times are medians over iterations (latency, allreduce) or over windows (bandwidth, rate).
 * Options: -m MAX (largest size, bytes), -i ITERS (iterations at small sizes; large sizes use
 * fewer), -w WINDOW (messages in flight for bandwidth/rate tests).
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct bench_opts {
	size_t min, max;
	int iters, window, skip;
};

static inline void bench_parse(int argc, char **argv, struct bench_opts *o, size_t max)
{
	int c;

	o->min = 1;
	o->max = max;
	o->iters = 200;
	o->window = 64;
	o->skip = 10;
	while ((c = getopt(argc, argv, "n:m:i:w:")) != -1) {
		switch (c) {
		case 'n': o->min = strtoul(optarg, NULL, 0); break;
		case 'm': o->max = strtoul(optarg, NULL, 0); break;
		case 'i': o->iters = atoi(optarg); break;
		case 'w': o->window = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: %s [-n min] [-m max] [-i iters] [-w window]\n", argv[0]);
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
	}
}

/* Fewer iterations for large messages so every size takes about the same time. */
static inline int bench_iters(const struct bench_opts *o, size_t size)
{
	int it = o->iters;
	if (size > 8192)
		it = (int)(it * 8192.0 / (double)size) + 2;
	return it < 4 ? 4 : it;
}

static inline void *bench_buf(size_t n)
{
	void *p = NULL;
	if (posix_memalign(&p, 4096, n ? n : 1))
		MPI_Abort(MPI_COMM_WORLD, 2);
	memset(p, 'a', n ? n : 1);
	return p;
}

static int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Median of n samples (sorts them). The machines these run on are often shared: the median
 * ignores the iterations that lost the CPU to someone else. */
static inline double bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), bench_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
