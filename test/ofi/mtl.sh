#!/usr/bin/env bash
# test/btl's MPI programs over Open MPI's mtl ofi on the sctp provider (pml cm), on 2, 4 and 8
# ranks, same-host peers through shared memory and through SCTP: the same answers as ob1 over
# btl tcp. The programs cover sizes to 4 MiB, any-source/any-tag order, probe/mprobe (FI_PEEK,
# FI_CLAIM), Ssend (selective completion), cancel (fi_cancel), collectives on
# sub-communicators and MPI_THREAD_MULTIPLE.
. "$(dirname "$0")/mpi_common.sh"
for shm in 1 0; do
	compare 2 "-x FI_SCTP_SHM=$shm" ./mpi_p2p
	compare 4 "-x FI_SCTP_SHM=$shm" ./mpi_p2p $((1 << 20))
	compare 8 "-x FI_SCTP_SHM=$shm" ./mpi_p2p $((256 << 10))
	for np in 2 4 8; do
		compare $np "-x FI_SCTP_SHM=$shm" ./mpi_coll
		compare $np "-x FI_SCTP_SHM=$shm" ./mpi_threads
	done
done
# automatic progress and the AV table, as a user may ask for them
compare 4 "--mca mtl_ofi_av table --mca mtl_ofi_data_progress auto --mca mtl_ofi_control_progress auto" ./mpi_p2p
