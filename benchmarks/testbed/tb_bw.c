/*
 * tb_bw - bandwidth between rank pairs (2i, 2i+1), no collectives at all.
 *
 *   tb_bw [--seconds S] [--size BYTES] [--window W] [--bidir] [--interval MS]
 *
 * Pairs run independently (so each rank may use only the interfaces it shares with its
 * partner: a collective would need the others).  Each iteration the lower rank of a pair
 * says whether to go on (time left), then the even rank sends a window of W messages of
 * BYTES (default 8 x 1 MiB) and the odd rank receives them; with --bidir both do both.
 * The first iteration is warm-up.  Each receiving rank prints
 *   BW rank R from P MB/s X        (10^6 bytes per second received)
 * With --interval MS a receiving rank also prints, as each interval of the run ends,
 *   TRACE rank R t_s T MB/s X      (bytes of the receives completed in [T, T + MS))
 * counting each message when it completes (MPI_Waitsome), from the first iteration on, so
 * a trace of a link going down and up shows when delivery stopped and resumed.  Lines are
 * flushed as they are printed: a run ended by a timeout still leaves its trace.  Before it,
 *   TRACE rank R epoch E           (the wall-clock time, s since 1970, of t_s 0)
 * lets a script place events it timed itself on the trace.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct {
	double t0, ms;     /* start, interval length (ms; 0: no trace) */
	long next;         /* interval to print next */
	long long bytes;   /* received in interval `next` so far */
	int rank;
} tr;

/* Prints every interval that ended before now; bytes that completed at `now` count in the
 * interval that holds it. */
static void trace_until(double now)
{
	long cur = (long)((now - tr.t0) * 1000.0 / tr.ms);
	for (; tr.next < cur; tr.next++) {
		printf("TRACE rank %d t_s %.3f MB/s %.2f\n", tr.rank, tr.next * tr.ms / 1000.0,
		       (double)tr.bytes / (tr.ms / 1000.0) / 1e6);
		tr.bytes = 0;
	}
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int rank, n, bidir = 0, window = 8;
	double seconds = 5, interval = 0;
	size_t size = 1 << 20;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--bidir"))
			bidir = 1;
		else if (i + 1 < argc && !strcmp(argv[i], "--seconds"))
			seconds = atof(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--size"))
			size = (size_t)atol(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--window"))
			window = atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--interval"))
			interval = atof(argv[++i]);
	}
	int peer = rank ^ 1;
	if (peer >= n || window < 1 || size < 1 || interval < 0) {
		if (rank == 0)
			fprintf(stderr, "tb_bw: needs an even number of ranks, window >= 1, size >= 1, "
					"interval >= 0\n");
		MPI_Finalize();
		return peer >= n;
	}
	int sends = bidir || !(rank & 1), recvs = bidir || (rank & 1);
	char *sbuf = malloc(size * (size_t)window), *rbuf = malloc(size * (size_t)window);
	MPI_Request *rq = malloc(sizeof(*rq) * 2 * (size_t)window);
	int *done = malloc(sizeof(*done) * 2 * (size_t)window);
	memset(sbuf, rank, size * (size_t)window);
	double t0 = MPI_Wtime(), tstart = 0;
	long long got = 0;
	tr.t0 = t0;
	tr.ms = interval;
	tr.rank = rank;
	if (interval > 0 && recvs) {
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		printf("TRACE rank %d epoch %.3f\n", rank, (double)now.tv_sec + now.tv_nsec / 1e9);
	}

	for (long it = 0;; it++) {
		int go, nr = 0, nrecv = 0;
		if (rank < peer) {
			go = MPI_Wtime() - t0 < seconds;
			MPI_Send(&go, 1, MPI_INT, peer, 1, MPI_COMM_WORLD);
		} else {
			MPI_Recv(&go, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		}
		if (!go)
			break;
		for (int w = 0; recvs && w < window; w++)
			MPI_Irecv(rbuf + size * (size_t)w, (int)size, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &rq[nr++]);
		nrecv = nr;
		for (int w = 0; sends && w < window; w++)
			MPI_Isend(sbuf + size * (size_t)w, (int)size, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &rq[nr++]);
		if (interval > 0 && recvs) {
			for (int left = nr; left > 0;) {
				int k;
				MPI_Waitsome(nr, rq, &k, done, MPI_STATUSES_IGNORE);
				if (k == MPI_UNDEFINED)
					break;
				trace_until(MPI_Wtime());
				for (int j = 0; j < k; j++)
					tr.bytes += done[j] < nrecv ? (long long)size : 0;
				left -= k;
			}
		} else {
			MPI_Waitall(nr, rq, MPI_STATUSES_IGNORE);
		}
		if (it == 0)
			tstart = MPI_Wtime();
		else if (recvs)
			got += (long long)size * window;
	}
	if (interval > 0 && recvs)
		trace_until(MPI_Wtime());
	if (recvs)
		printf("BW rank %d from %d MB/s %.2f\n", rank, peer,
		       (double)got / (MPI_Wtime() - tstart) / 1e6);
	free(sbuf);
	free(rbuf);
	free(rq);
	free(done);
	MPI_Finalize();
	return 0;
}
