/*
 * A rank that leaves badly: "abort" -- the last rank calls MPI_Abort while the others wait on
 * it; "exit" -- it exits without MPI_Finalize; "kill" -- it raises SIGKILL. The job must end
 * with a non-zero status and a message, never hang (the test script bounds it with timeout).
 * Before dying the ranks have talked over the BTL so that associations are up.
 */
#include "btl_test.h"

#include <signal.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "abort";
	int rank, size, v = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Allreduce(&rank, &v, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == size - 1) {
		usleep(200000);
		fprintf(stderr, "btl_die: rank %d leaves (%s)\n", rank, mode);
		if (0 == strcmp(mode, "abort"))
			MPI_Abort(MPI_COMM_WORLD, 3);
		if (0 == strcmp(mode, "kill"))
			raise(SIGKILL);
		_exit(3);
	}
	/* everyone else waits for a message the dead rank will never send */
	MPI_Recv(&v, 1, MPI_INT, size - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Finalize();
	return 0;
}
