#!/usr/bin/env bash
# test_ofi_rdm again with same-host peers on SCTP associations instead of shared memory.
FI_SCTP_SHM=0 exec ./test_ofi_rdm "$@"
