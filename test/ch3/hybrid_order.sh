#!/usr/bin/env bash
# Remote completion (hybrid_order.c): MPI_Win_flush, MPI_Win_unlock and MPI_Win_fence return
# only once the target has the data. Accumulate counters and get-op-put from every rank into
# rank 0 must come out exact, and a target told by MPI_Send after a flush/unlock/fence (or a
# third rank reading it with MPI_Get) must find the data, and a target that overwrites its
# window as soon as its epoch ends must not change what a Get of it read. 4 and 5 ranks over
# ch3:sctp (the reference answers) and over ch3:hybrid with every operation that can go as
# RDMA going so (MPICH_HYBRID_LONE_MAX=0), epoch-closing packets as iWARP Sends (default) and
# held behind an ordering Read (MPICH_HYBRID_SENDS=0); then with the defaults, and once with
# the core's shared memory between the ranks.
# With the defaults, Puts that CH3 issues before the fence or unlock that ends their epoch
# must have waited for it and gone along as packets (MPICH_HYBRID_STATS).
. "$(dirname "$0")/hybrid_common.sh"
iters=100
for np in 4 5; do
	ref=$(run_on "$SCTP" "$np" "$(hybrid_prog hybrid_order "$SCTP")" $iters) ||
		{ echo "$ref"; die "hybrid_order on $np ranks over ch3:sctp failed"; }
	want=$(echo "$ref" | grep '^CHECK')
	[ "$(echo "$want" | wc -l)" -eq 7 ] || { echo "$ref"; die "ch3:sctp: 7 checks expected"; }
	for sends in 1 0; do
		out=$(MPICH_HYBRID_LONE_MAX=0 MPICH_HYBRID_SENDS=$sends MPICH_HYBRID_STATS=1 run_on "$HYB" "$np" \
			"$(hybrid_prog hybrid_order "$HYB")" $iters) ||
			{ echo "$out"; die "hybrid_order on $np ranks over ch3:hybrid (MPICH_HYBRID_SENDS=$sends) failed"; }
		[ "$(echo "$out" | grep '^CHECK')" = "$want" ] ||
			{ echo "--- ch3:sctp"; echo "$want"; echo "--- ch3:hybrid"; echo "$out"; die "hybrid_order on $np ranks: answers differ"; }
		stats=$(rdma_stats "$out" "$np") || exit 1
		echo "np=$np sends=$sends: exact ($(echo "$out" | grep '^TIME' | sed 's/^TIME //')); RDMA per rank: $stats"
	done
done
out=$(MPICH_HYBRID_STATS=1 run_on "$HYB" 4 "$(hybrid_prog hybrid_order "$HYB")" $iters) ||
	{ echo "$out"; die "hybrid_order on 4 ranks over ch3:hybrid (defaults) failed"; }
[ "$(echo "$out" | grep '^CHECK')" = "$(run_on "$SCTP" 4 "$(hybrid_prog hybrid_order "$SCTP")" $iters | grep '^CHECK')" ] ||
	{ echo "$out"; die "hybrid_order on 4 ranks over ch3:hybrid (defaults): answers differ"; }
# Puts issued before their fence or unlock waited for it and went along as packets
lone=$(echo "$out" | sed -n 's/.* (\([0-9]*\) of them went with it as packets).*/\1/p' | awk '{s += $1} END {print s + 0}')
[ "$lone" -gt 0 ] || { echo "$out"; die "no Put waited for the end of its epoch"; }
echo "np=4 with the defaults: exact ($lone Puts went along with the packet that closed their epoch)"
out=$(SCTPT_SHM=1 run_on "$HYB" 4 "$(hybrid_prog hybrid_order "$HYB")" $iters) ||
	{ echo "$out"; die "hybrid_order on 4 ranks over ch3:hybrid with shared memory failed"; }
echo "np=4 with the core's shared memory: exact"
echo "$want" | sed 's/^/  /'
