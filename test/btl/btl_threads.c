/*
 * MPI_THREAD_MULTIPLE: NT threads per rank each exchange messages with both ring neighbours at
 * the same time (tags per thread, sizes across eager and rendezvous), so several threads drive
 * the BTL's send path and progress concurrently. Rank 0 prints "CHECK threads <sum>".
 */
#include "btl_test.h"

#include <pthread.h>

enum { NT = 4, ROUNDS = 20 };
static int rank, size;
static uint64_t sums[NT];

static void *worker(void *arg)
{
	int t = (int)(intptr_t)arg;
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;
	uint64_t sum = 0;

	for (int i = 0; i < ROUNDS; i++) {
		size_t n = (size_t)((i * 7919 + t * 104729) % 150000);
		unsigned char *s = malloc(n + 1), *r = malloc(n + 1), *s2 = malloc(n + 1), *r2 = malloc(n + 1);
		MPI_Request rq[4];
		uint64_t sd = ((uint64_t)rank << 32) | ((uint64_t)t << 16) | (uint64_t)i;
		uint64_t pd = ((uint64_t)prev << 32) | ((uint64_t)t << 16) | (uint64_t)i;
		uint64_t nd = ((uint64_t)next << 32) | ((uint64_t)t << 16) | (uint64_t)i | 0x8000;

		bt_fill(s, n, sd);
		bt_fill(s2, n, sd | 0x8000);
		MPI_Irecv(r, (int)n, MPI_BYTE, prev, t, MPI_COMM_WORLD, &rq[0]);
		MPI_Irecv(r2, (int)n, MPI_BYTE, next, NT + t, MPI_COMM_WORLD, &rq[1]);
		MPI_Isend(s, (int)n, MPI_BYTE, next, t, MPI_COMM_WORLD, &rq[2]);
		MPI_Isend(s2, (int)n, MPI_BYTE, prev, NT + t, MPI_COMM_WORLD, &rq[3]);
		MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
		BT_EXPECT(bt_check(r, n, pd) < 0, "thread %d round %d: bad data from %d", t, i, prev);
		BT_EXPECT(bt_check(r2, n, nd) < 0, "thread %d round %d: bad data from %d", t, i, next);
		sum += bt_hash(r, n) + bt_hash(r2, n);
		free(s);
		free(r);
		free(s2);
		free(r2);
	}
	sums[t] = sum;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[NT];
	int provided;
	uint64_t sum = 0;

	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (provided < MPI_THREAD_MULTIPLE) {
		if (0 == rank)
			fprintf(stderr, "SKIP: MPI_THREAD_MULTIPLE not provided (%d)\n", provided);
		MPI_Finalize();
		return 77;
	}
	for (int t = 0; t < NT; t++)
		pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
	for (int t = 0; t < NT; t++) {
		pthread_join(th[t], NULL);
		sum += sums[t];
	}
	bt_report("threads", sum);
	MPI_Barrier(MPI_COMM_WORLD);
	if (0 == rank)
		printf("threads: %d ranks x %d threads ok\n", size, NT);
	MPI_Finalize();
	return 0;
}
