#!/usr/bin/env bash
# Protection errors end the job with a message: an MPI_Put and an MPI_Get beyond the end of the
# target's window (inside memory the target owns) are refused by the target's iWARP layer; the
# job exits non-zero, within the timeout, naming the failed RDMA operation and the reason, and
# the target never leaves the epoch (the origin may: CH3's fence only starts the barrier).
. "$(dirname "$0")/hybrid_common.sh"
prog=$(hybrid_prog hybrid_protect "$HYB")
for op in put get; do
	start=$SECONDS
	out=$(RUN_TIMEOUT=60 run_on "$HYB" 2 "$prog" "$op"); rc=$?
	[ $rc -ne 0 ] || { echo "$out"; die "$op beyond the window: the job succeeded"; }
	[ $rc -ne 124 ] && [ $rc -ne 137 ] || { echo "$out"; die "$op beyond the window: the job hung"; }
	echo "$out" | grep -q 'REACHED rank 1' && { echo "$out"; die "$op beyond the window: the target's epoch completed"; }
	msg=$(echo "$out" | grep -m1 -E 'ch3:hybrid: rank 0: RDMA (Write \(MPI_Put\)|Read \(MPI_Get\)) to rank 1 failed: the target refused the access: base or bounds violation') ||
		{ echo "$out"; die "$op beyond the window: no message naming the failed RDMA operation"; }
	echo "$op beyond the window: exit $rc after $((SECONDS - start)) s: $msg"
done
