/*
 * MPI micro-benchmarks that follow the OSU Micro-Benchmarks (OMB 5.x) methodology, so that
 * their numbers compare with published OSU results: message sizes double from 1 B (0 B for
 * latency) to 4 MiB; "large" messages are those above 8 KiB; the first SKIP iterations are a
 * warm-up and the time of the LOOP that follows is averaged. Each program prints
 * "# <test> <unit>" and then "<size> <value>" per size on rank 0.
 *
 * Options: -m MAX (largest size), -n MIN (smallest size, for profiling one size), -M (the median
 * of the LOOP iterations' times instead of OSU's average: on a shared machine an iteration that
 * lost the CPU to another process does not count; the scripts' MEDIAN=1), -q F (multiply every iteration count by F, for quick runs;
 * 1 is OSU's own counts), -i LOOP / -I LOOP_LARGE / -x SKIP / -X SKIP_LARGE (override them),
 * -T (also print every timed iteration's microseconds, in order, to stderr: stalls show as outliers).
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BENCH_MAX_SIZE (4u << 20)
#define BENCH_LARGE 8192 /* OSU's LARGE_MESSAGE_SIZE */
#define BENCH_WINDOW 64  /* osu_bw, osu_bibw, osu_mbw_mr */

struct bench_opts {
	size_t min, max;
	int loop, loop_large, skip, skip_large;
	const char *sync; /* one-sided: lock, flush, fence */
	const char *type; /* one-sided accumulate: char, int, long, double */
	int median;       /* -M */
	int times;        /* -T */
};

/* The times of one size's timed iterations. */
struct bench_timer {
	double *t;
	int n, cap, median, times;
	double start, last;
};

/* OSU's counts for this kind of test, then the options. */
static inline void bench_parse(int argc, char **argv, struct bench_opts *o, int loop,
			       int loop_large, int skip, int skip_large)
{
	double q = 1;
	int c;

	o->min = 0;
	o->max = BENCH_MAX_SIZE;
	o->sync = NULL;
	o->type = NULL;
	o->median = 0;
	o->times = 0;
	o->loop = o->loop_large = o->skip = o->skip_large = -1;
	while ((c = getopt(argc, argv, "n:m:q:i:I:x:X:s:d:MT")) != -1) {
		switch (c) {
		case 'n': o->min = strtoul(optarg, NULL, 0); break;
		case 'm': o->max = strtoul(optarg, NULL, 0); break;
		case 'q': q = strtod(optarg, NULL); break;
		case 'i': o->loop = atoi(optarg); break;
		case 'I': o->loop_large = atoi(optarg); break;
		case 'x': o->skip = atoi(optarg); break;
		case 'X': o->skip_large = atoi(optarg); break;
		case 's': o->sync = optarg; break;
		case 'd': o->type = optarg; break;
		case 'M': o->median = 1; break;
		case 'T': o->times = 1; break;
		default:
			fprintf(stderr, "usage: %s [-n min] [-m max] [-M] [-q scale] [-i loop] [-I loop_large] "
				"[-x skip] [-X skip_large] [-s sync] [-d type] [-T]\n", argv[0]);
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
	}
#define BENCH_SCALED(v, d) ((v) >= 0 ? (v) : (int)((d) * q) > 0 ? (int)((d) * q) : 1)
	o->loop = BENCH_SCALED(o->loop, loop);
	o->loop_large = BENCH_SCALED(o->loop_large, loop_large);
	o->skip = BENCH_SCALED(o->skip, skip);
	o->skip_large = BENCH_SCALED(o->skip_large, skip_large);
#undef BENCH_SCALED
}

/* The first size of a test starting at from: from, or the -n size when larger. */
static inline size_t bench_first(const struct bench_opts *o, size_t from)
{
	return o->min > from ? o->min : from;
}

static inline int bench_loop(const struct bench_opts *o, size_t size)
{
	return size > BENCH_LARGE ? o->loop_large : o->loop;
}

static inline int bench_skip(const struct bench_opts *o, size_t size)
{
	return size > BENCH_LARGE ? o->skip_large : o->skip;
}

/* The next size: 0, 1, 2, 4, ... */
static inline size_t bench_next(size_t size)
{
	return size ? size * 2 : 1;
}

static inline void *bench_buf(size_t n, int fill)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, n ? n : 1))
		MPI_Abort(MPI_COMM_WORLD, 2);
	memset(p, fill, n ? n : 1);
	return p;
}

static int bench_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* At the first timed iteration (i == skip). */
static inline void bench_timer_start(struct bench_timer *bt, const struct bench_opts *o, int loop)
{
	free(bt->t);
	bt->t = malloc(sizeof(double) * (size_t)(loop > 0 ? loop : 1));
	if (NULL == bt->t)
		MPI_Abort(MPI_COMM_WORLD, 2);
	bt->n = 0;
	bt->cap = loop;
	bt->median = o->median;
	bt->times = o->times;
	bt->start = bt->last = MPI_Wtime();
}

/* At the end of each timed iteration. */
static inline void bench_tick(struct bench_timer *bt)
{
	double now = MPI_Wtime();

	if (bt->n < bt->cap)
		bt->t[bt->n++] = now - bt->last;
	bt->last = now;
}

/* Seconds per timed iteration: OSU's average, or with -M the median. */
static inline double bench_per_iter(struct bench_timer *bt)
{
	if (bt->n == 0)
		return 0;
	if (bt->times) {
		fprintf(stderr, "# times (us):");
		for (int i = 0; i < bt->n; i++)
			fprintf(stderr, " %.1f", bt->t[i] * 1e6);
		fprintf(stderr, "\n");
	}
	if (!bt->median)
		return (bt->last - bt->start) / bt->n;
	qsort(bt->t, (size_t)bt->n, sizeof(double), bench_cmp);
	return bt->n % 2 ? bt->t[bt->n / 2] : (bt->t[bt->n / 2 - 1] + bt->t[bt->n / 2]) / 2;
}

#endif
