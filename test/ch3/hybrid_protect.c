/*
 * hybrid_protect: an MPI_Put or MPI_Get (argv[1]: put, get) beyond the end of the target's
 * window. The target's memory is larger than its window, so nothing would stop a channel that
 * places data itself; over RDMA the target's iWARP layer refuses the access (the window's
 * steering tag does not cover it) and the job must end with a message, not a wrong result.
 * Prints "REACHED" if the epoch completed anyway.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	const int wsize = 4096, n = 1024;
	int rank, get = argc > 1 && !strcmp(argv[1], "get");
	char *mem = calloc(4, wsize), buf[1024];
	MPI_Win win;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	memset(buf, 'x', sizeof(buf));
	/* the window is the first quarter of the allocation */
	MPI_Win_create(mem, wsize, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	MPI_Win_fence(0, win);
	if (rank == 0) {
		if (get)
			MPI_Get(buf, n, MPI_BYTE, 1, 2 * wsize, n, MPI_BYTE, win);
		else
			MPI_Put(buf, n, MPI_BYTE, 1, 2 * wsize, n, MPI_BYTE, win);
	}
	MPI_Win_fence(0, win);
	printf("REACHED rank %d\n", rank);
	MPI_Win_free(&win);
	MPI_Finalize();
	free(mem);
	return 0;
}
