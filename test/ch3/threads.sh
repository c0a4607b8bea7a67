#!/usr/bin/env bash
# MPI_THREAD_MULTIPLE: 4 threads per rank (test/btl's btl_threads) on 2, 4 and 8 ranks over
# ch3:sctp, against Debian's MPICH.
. "$(dirname "$0")/ch3_common.sh"
for np in 2 4 8; do compare $np btl_threads; done
