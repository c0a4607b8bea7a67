/*
 * tb_allpairs - all-pairs MPI traffic, every message checksummed.
 *
 *   tb_allpairs [--rounds N] [--seconds S] [--max BYTES]
 *
 * Each round every rank sends one message to every other rank (shifted order: distance
 * 1, 2, ..., n-1) and receives one from each.  Sizes cycle per round through 1 B, 1 KiB,
 * 64 KiB and --max (default 1 MiB), so both eager and rendezvous paths run.  A message is
 * a header {src, dst, round, length, FNV-1a 64 of the payload} and a payload generated
 * from (src, dst, round); the receiver checks the header, the checksum and every payload
 * byte against its own copy.  Runs --rounds rounds (default 20), or with --seconds as many
 * rounds as fit (rank 0 decides, broadcast each round).  Prints
 *   CHECK allpairs ranks N rounds R messages M bytes B errors E
 * on rank 0 and exits 1 if any rank saw an error.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tb_payload.h"

struct msg_hdr {
	uint32_t src, dst, round, len;
	uint64_t fnv;
};

static size_t round_size(uint32_t round, size_t max)
{
	static const size_t sizes[] = { 1, 1024, 65536, 0 };
	size_t s = sizes[round % 4];

	return s == 0 || s > max ? max : s;
}

/* Checks one received message; returns the number of problems found (0 or 1). */
static int check(const unsigned char *buf, const unsigned char *want, uint32_t src,
		 uint32_t me, uint32_t round, size_t len)
{
	struct msg_hdr h;

	memcpy(&h, buf, sizeof(h));
	if (h.src != src || h.dst != me || h.round != round || h.len != len) {
		fprintf(stderr, "rank %u: bad header from %u round %u: src %u dst %u round %u len %u\n",
			me, src, round, h.src, h.dst, h.round, h.len);
		return 1;
	}
	if (fnv1a(buf + sizeof(h), len) != h.fnv || memcmp(buf + sizeof(h), want, len)) {
		fprintf(stderr, "rank %u: corrupt payload from %u round %u (%zu bytes)\n", me, src,
			round, len);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int rank, n;
	long rounds = 20;
	double seconds = 0;
	size_t max = 1 << 20;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--rounds"))
			rounds = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--seconds"))
			seconds = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--max"))
			max = (size_t)atol(argv[i + 1]);
	}
	if (max < 1)
		max = 1;
	size_t cap = sizeof(struct msg_hdr) + max;
	unsigned char *sbuf = malloc(cap * (size_t)n), *rbuf = malloc(cap * (size_t)n);
	unsigned char *want = malloc(max);
	MPI_Request *rq = malloc(sizeof(*rq) * 2 * (size_t)n);
	long long msgs = 0, bytes = 0, errors = 0;
	double t0 = MPI_Wtime();
	uint32_t r;

	for (r = 0;; r++) {
		int go = seconds > 0 ? MPI_Wtime() - t0 < seconds : (long)r < rounds;
		MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
		if (!go)
			break;
		size_t len = round_size(r, max);
		int nr = 0;
		for (int d = 1; d < n; d++) {
			int from = (rank - d + n) % n, to = (rank + d) % n;
			unsigned char *s = sbuf + cap * (size_t)to;
			struct msg_hdr h = { (uint32_t)rank, (uint32_t)to, r, (uint32_t)len, 0 };
			fill(s + sizeof(h), len, (uint32_t)rank, (uint32_t)to, r);
			h.fnv = fnv1a(s + sizeof(h), len);
			memcpy(s, &h, sizeof(h));
			MPI_Irecv(rbuf + cap * (size_t)from, (int)(sizeof(h) + len), MPI_BYTE, from, 7,
				  MPI_COMM_WORLD, &rq[nr++]);
			MPI_Isend(s, (int)(sizeof(h) + len), MPI_BYTE, to, 7, MPI_COMM_WORLD, &rq[nr++]);
		}
		MPI_Waitall(nr, rq, MPI_STATUSES_IGNORE);
		for (int d = 1; d < n; d++) {
			int from = (rank - d + n) % n;
			fill(want, len, (uint32_t)from, (uint32_t)rank, r);
			errors += check(rbuf + cap * (size_t)from, want, (uint32_t)from, (uint32_t)rank, r, len);
			msgs++;
			bytes += (long long)len;
		}
	}
	long long tot[3] = { msgs, bytes, errors }, sum[3] = { 0, 0, 0 };
	MPI_Reduce(tot, sum, 3, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		printf("CHECK allpairs ranks %d rounds %u messages %lld bytes %lld errors %lld\n", n, r,
		       sum[0], sum[1], sum[2]);
		printf("time %.2f s, %.2f MB/s received in all\n", MPI_Wtime() - t0,
		       (double)sum[1] / (MPI_Wtime() - t0) / 1e6);
	}
	int bad = sum[2] != 0;
	MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
	free(sbuf);
	free(rbuf);
	free(want);
	free(rq);
	/* every rank done before any finalizes: MPICH 4.0.2 over UCX's tcp transport hangs in
	 * MPI_Finalize now and then when a rank is still flushing its endpoints to ranks that
	 * have already gone into the finalize barrier (test/testbed/README.md) */
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return bad;
}
