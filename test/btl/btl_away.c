/*
 * A rank that computes for longer than its peers would wait for an answer from SCTP: rank 1
 * makes no MPI call for AWAY seconds while rank 0 sends it an eager message, puts into its
 * window under a passive-target lock, and sends it a large (rendezvous) message. Rank 1 must
 * then receive everything intact and the job end normally: a peer declared lost while it was
 * away ends the job with "lost the connection" instead.
 */
#include "btl_test.h"

#include <unistd.h>

#define SMALL 1024
#define LARGE (4u << 20)
#define WIN (1u << 20)

int main(int argc, char **argv)
{
	int away = argc > 1 ? atoi(argv[1]) : 6;
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2)
		BT_FAIL("needs 2 ranks");
	unsigned char *small = malloc(SMALL), *large = malloc(LARGE), *wbuf;
	MPI_Win win;
	MPI_Alloc_mem(WIN, MPI_INFO_NULL, &wbuf);
	memset(wbuf, 0, WIN);
	MPI_Win_create(wbuf, WIN, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	MPI_Barrier(MPI_COMM_WORLD); /* the associations are up before rank 1 goes */
	if (rank == 0) {
		unsigned char *put = malloc(WIN);
		bt_fill(small, SMALL, 1);
		bt_fill(put, WIN, 2);
		bt_fill(large, LARGE, 3);
		MPI_Send(small, SMALL, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
		MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
		MPI_Put(put, WIN, MPI_BYTE, 1, 0, WIN, MPI_BYTE, win);
		MPI_Win_unlock(1, win);
		MPI_Send(large, LARGE, MPI_BYTE, 1, 3, MPI_COMM_WORLD);
		free(put);
	} else {
		sleep((unsigned)away); /* computing: no MPI call */
		MPI_Recv(small, SMALL, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Recv(large, LARGE, MPI_BYTE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		long bad;
		if ((bad = bt_check(small, SMALL, 1)) >= 0)
			BT_FAIL("eager message wrong at byte %ld", bad);
		if ((bad = bt_check(large, LARGE, 3)) >= 0)
			BT_FAIL("large message wrong at byte %ld", bad);
	}
	MPI_Barrier(MPI_COMM_WORLD); /* rank 0's unlock returned: its put is in rank 1's window */
	if (rank == 1) {
		MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
		long bad = bt_check(wbuf, WIN, 2);
		MPI_Win_unlock(1, win);
		if (bad >= 0)
			BT_FAIL("window wrong at byte %ld after the put", bad);
		printf("CHECK rank 1 away %d s: eager, put and rendezvous data intact\n", away);
	}
	MPI_Win_free(&win);
	MPI_Free_mem(wbuf);
	free(small);
	free(large);
	MPI_Finalize();
	return 0;
}
