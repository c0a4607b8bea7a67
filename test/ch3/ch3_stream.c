/*
 * Two ranks exchange checked messages for a while (argv[1] seconds, default 4): rank 0 sends
 * 256 KiB messages, rank 1 checks every byte and answers each with 8 bytes. The multihoming
 * test takes a link down meanwhile; the run must go on and finish.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define LEN (256 * 1024)

static unsigned char byte_of(long msg, size_t i)
{
	uint64_t x = (uint64_t)msg * 0x9e3779b97f4a7c15ULL + i * 0xbf58476d1ce4e5b9ULL;
	return (unsigned char)(x ^ (x >> 29));
}

int main(int argc, char **argv)
{
	int rank;
	double secs = argc > 1 ? atof(argv[1]) : 4;
	unsigned char *buf = malloc(LEN);
	long n = 0, ack = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	double t0 = MPI_Wtime();
	for (int more = 1; more; n++) {
		if (rank == 0) {
			for (size_t i = 0; i < LEN; i++)
				buf[i] = byte_of(n, i);
			more = MPI_Wtime() - t0 < secs;
			buf[0] = (unsigned char)more;
			MPI_Send(buf, LEN, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
			MPI_Recv(&ack, 1, MPI_LONG, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			if (ack != n) {
				fprintf(stderr, "ch3_stream: ack %ld for message %ld\n", ack, n);
				MPI_Abort(MPI_COMM_WORLD, 2);
			}
		} else if (rank == 1) {
			MPI_Recv(buf, LEN, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			more = buf[0];
			for (size_t i = 1; i < LEN; i++)
				if (buf[i] != byte_of(n, i)) {
					fprintf(stderr, "ch3_stream: message %ld byte %zu wrong\n", n, i);
					MPI_Abort(MPI_COMM_WORLD, 2);
				}
			ack = n;
			MPI_Send(&ack, 1, MPI_LONG, 0, 8, MPI_COMM_WORLD);
		} else {
			more = 0;
		}
	}
	if (rank == 0)
		printf("ch3_stream: %ld messages of %d bytes in %.1f s, all checked\n", n, LEN,
		       MPI_Wtime() - t0);
	free(buf);
	MPI_Finalize();
	return 0;
}
