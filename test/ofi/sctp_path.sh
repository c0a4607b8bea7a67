#!/usr/bin/env bash
# test_ofi_rdm and test_ofi_rma again with same-host peers on SCTP associations instead of
# the core's shared memory.
export FI_SCTP_SHM=0
./test_ofi_rdm || exit 1
exec ./test_ofi_rma
