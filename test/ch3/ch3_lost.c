/*
 * A rank that stops answering without exiting (SIGSTOP): Hydra sees nothing wrong, so the
 * channel itself must notice that SCTP lost the peer and end the job, naming it. The others
 * talked to it first (associations up) and then wait for a message it never sends.
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int rank, size, v = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Allreduce(&rank, &v, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	/* every rank has an association to the last one */
	if (rank == size - 1) {
		for (int r = 0; r < size - 1; r++)
			MPI_Send(&v, 1, MPI_INT, r, 2, MPI_COMM_WORLD);
		usleep(100000);
		fprintf(stderr, "ch3_lost: rank %d stops\n", rank);
		raise(SIGSTOP);
	} else {
		MPI_Recv(&v, 1, MPI_INT, size - 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Send(&v, 1, MPI_INT, size - 1, 3, MPI_COMM_WORLD);
		MPI_Recv(&v, 1, MPI_INT, size - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	}
	MPI_Finalize();
	return 0;
}
