/*
 * Collectives over whatever BTL mpirun selected, on MPI_COMM_WORLD and on sub-communicators
 * (even/odd ranks, and a reversed-order duplicate): bcast, reduce, allreduce, gather, gatherv,
 * alltoall, alltoallv, barrier. Results are checked against closed forms; rank 0 prints
 * "CHECK <name> <sum>" lines that must not depend on the BTL.
 */
#include "btl_test.h"

static uint64_t run_on(MPI_Comm comm, int salt)
{
	int rank, size;
	uint64_t sum = 0;

	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &size);

	/* bcast: small and large, from the last rank */
	for (int k = 0; k < 2; k++) {
		size_t n = k ? 1u << 20 : 100;
		unsigned char *b = malloc(n);
		if (rank == size - 1)
			bt_fill(b, n, (uint64_t)salt * 10 + (uint64_t)k);
		MPI_Bcast(b, (int)n, MPI_BYTE, size - 1, comm);
		BT_EXPECT(bt_check(b, n, (uint64_t)salt * 10 + (uint64_t)k) < 0, "bcast %zu", n);
		sum += bt_hash(b, n);
		free(b);
	}
	/* reduce and allreduce: 1 and 100000 longs */
	for (int k = 0; k < 2; k++) {
		int n = k ? 100000 : 1;
		long *v = malloc(sizeof(long) * (size_t)n), *r = malloc(sizeof(long) * (size_t)n);
		for (int i = 0; i < n; i++)
			v[i] = (long)rank * i + salt;
		MPI_Reduce(v, r, n, MPI_LONG, MPI_SUM, 0, comm);
		if (0 == rank)
			for (int i = 0; i < n; i++)
				BT_EXPECT(r[i] == (long)size * (size - 1) / 2 * i + (long)size * salt,
					  "reduce element %d", i);
		MPI_Allreduce(v, r, n, MPI_LONG, MPI_MAX, comm);
		for (int i = 0; i < n; i++)
			BT_EXPECT(r[i] == (long)(size - 1) * i + salt, "allreduce element %d", i);
		sum += bt_hash(r, sizeof(long) * (size_t)n);
		free(v);
		free(r);
	}
	/* gather and gatherv (rank i contributes i+1 ints) */
	{
		int mine[64], *all = malloc(sizeof(int) * 64 * (size_t)size);
		int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
		for (int i = 0; i < 64; i++)
			mine[i] = rank * 1000 + i + salt;
		MPI_Gather(mine, 64, MPI_INT, all, 64, MPI_INT, 0, comm);
		if (0 == rank) {
			for (int p = 0; p < size; p++)
				for (int i = 0; i < 64; i++)
					BT_EXPECT(all[p * 64 + i] == p * 1000 + i + salt, "gather %d.%d", p, i);
			sum += bt_hash(all, sizeof(int) * 64 * (size_t)size);
		}
		for (int p = 0, d = 0; p < size; p++) {
			counts[p] = p + 1;
			displs[p] = d;
			d += p + 1 + 3; /* gaps */
		}
		memset(all, 0, sizeof(int) * 64 * (size_t)size);
		MPI_Gatherv(mine, rank + 1, MPI_INT, all, counts, displs, MPI_INT, 0, comm);
		if (0 == rank) {
			for (int p = 0; p < size; p++)
				for (int i = 0; i <= p; i++)
					BT_EXPECT(all[displs[p] + i] == p * 1000 + i + salt, "gatherv %d.%d", p, i);
			sum += bt_hash(all, sizeof(int) * 64 * (size_t)size);
		}
		free(all);
		free(counts);
		free(displs);
	}
	/* alltoall (4 KiB blocks) and alltoallv (rank i sends j+1 ints to rank j) */
	{
		const int B = 1024;
		int *s = malloc(sizeof(int) * (size_t)(B * size)), *r = malloc(sizeof(int) * (size_t)(B * size));
		int *sc = malloc(sizeof(int) * (size_t)size), *sd = malloc(sizeof(int) * (size_t)size);
		int *rc = malloc(sizeof(int) * (size_t)size), *rd = malloc(sizeof(int) * (size_t)size);
		for (int p = 0; p < size; p++)
			for (int i = 0; i < B; i++)
				s[p * B + i] = rank * 100000 + p * 1000 + i % 1000 + salt;
		MPI_Alltoall(s, B, MPI_INT, r, B, MPI_INT, comm);
		for (int p = 0; p < size; p++)
			for (int i = 0; i < B; i++)
				BT_EXPECT(r[p * B + i] == p * 100000 + rank * 1000 + i % 1000 + salt,
					  "alltoall from %d element %d", p, i);
		sum += bt_hash(r, sizeof(int) * (size_t)(B * size));
		for (int p = 0; p < size; p++) {
			sc[p] = p + 1;
			sd[p] = p * B;
			rc[p] = rank + 1;
			rd[p] = p * B;
		}
		memset(r, 0, sizeof(int) * (size_t)(B * size));
		MPI_Alltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, comm);
		for (int p = 0; p < size; p++)
			for (int i = 0; i <= rank; i++)
				BT_EXPECT(r[p * B + i] == p * 100000 + rank * 1000 + i + salt,
					  "alltoallv from %d element %d", p, i);
		sum += bt_hash(r, sizeof(int) * (size_t)(B * size));
		free(s);
		free(r);
		free(sc);
		free(sd);
		free(rc);
		free(rd);
	}
	for (int i = 0; i < 5; i++)
		MPI_Barrier(comm);
	return sum;
}

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Comm half, rev;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	bt_report("world", run_on(MPI_COMM_WORLD, 1));
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
	bt_report("half", run_on(half, 2 + rank % 2));
	MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
	bt_report("reversed", run_on(rev, 5));
	MPI_Comm_free(&half);
	MPI_Comm_free(&rev);
	MPI_Barrier(MPI_COMM_WORLD);
	if (0 == rank)
		printf("coll: %d ranks ok\n", size);
	MPI_Finalize();
	return 0;
}
