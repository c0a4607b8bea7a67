/*
 * tb_pmpi_finalize.c - an MPI_Finalize (PMPI profiling interface) for MPICH 4.0.2 over UCX,
 * linked into the MPICH build of tb_allpairs by mpich_launch.sh.
 *
 * MPICH 4.0.2's ch4:ucx MPI_Finalize closes every UCP endpoint in flush mode, waits for the
 * closes while progressing UCX, and only then enters a PMI barrier.  Over UCX 1.13's tcp
 * transport a close sends the peer a small request (a zero-length PUT_REQ) and completes on
 * its acknowledgement.  A rank whose own closes were acknowledged while a peer was still
 * inside its last MPI call sits in the PMI barrier, no longer progressing UCX, when that
 * peer's request arrives: the peer waits for the acknowledgement for ever (about one run in
 * three on the testbed).  Upstream MPICH dropped that barrier (pmodels/mpich#6596) and now
 * has one before the disconnects.  This does the same from outside: with TB_FINALIZE_DIR
 * set, every rank creates DIR/<rank> and waits (at most 30 s) until all ranks have, so none
 * is still in an MPI call when the first one starts closing.  The ranks share the file
 * system (only their network namespaces differ); libmpich does not export its PMI client.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int MPI_Finalize(void)
{
	const char *dir = getenv("TB_FINALIZE_DIR");
	char path[4096];
	int rank, n;

	if (dir && PMPI_Comm_rank(MPI_COMM_WORLD, &rank) == MPI_SUCCESS &&
	    PMPI_Comm_size(MPI_COMM_WORLD, &n) == MPI_SUCCESS) {
		FILE *f;
		snprintf(path, sizeof(path), "%s/%d", dir, rank);
		if ((f = fopen(path, "w")))
			fclose(f);
		for (int t = 0; t < 30000; t++) {
			int have = 0;
			for (int r = 0; r < n; r++) {
				snprintf(path, sizeof(path), "%s/%d", dir, r);
				have += access(path, F_OK) == 0;
			}
			if (have == n)
				break;
			usleep(1000);
		}
	}
	return PMPI_Finalize();
}
