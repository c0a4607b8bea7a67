#!/usr/bin/env bash
# MPI_THREAD_MULTIPLE with 4 threads per rank (btl_threads) on 2, 4 and 8 ranks.
. "$(dirname "$0")/btl_common.sh"
for np in 2 4 8; do compare_btls $np ./btl_threads; done
