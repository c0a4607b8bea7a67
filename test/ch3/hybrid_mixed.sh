#!/usr/bin/env bash
# The thesis's mixed MPI-1/MPI-2 program (hybrid_mixed.c: Isend/Irecv overlapped with Put/Get
# in the same fence epochs, then derived datatypes, PSCW and flush-then-notify), every result
# checked by the program, on 2, 3 and 4 ranks over ch3:hybrid: the same CHECK lines as over
# ch3:sctp, RDMA used by every rank that had a partner, no Terminate.
. "$(dirname "$0")/hybrid_common.sh"
for np in 2 3 4; do
	ref=$(run_on "$SCTP" "$np" "$(hybrid_prog hybrid_mixed "$SCTP")" 42) ||
		{ echo "$ref"; die "hybrid_mixed on $np ranks over ch3:sctp failed"; }
	want=$(echo "$ref" | grep '^CHECK')
	[ "$(echo "$want" | wc -l)" -eq 4 ] || { echo "$ref"; die "ch3:sctp: 4 checks expected"; }
	out=$(MPICH_HYBRID_STATS=1 run_on "$HYB" "$np" "$(hybrid_prog hybrid_mixed "$HYB")" 42) ||
		{ echo "$out"; die "hybrid_mixed on $np ranks over ch3:hybrid failed"; }
	[ "$(echo "$out" | grep '^CHECK')" = "$want" ] ||
		{ echo "--- ch3:sctp"; echo "$want"; echo "--- ch3:hybrid"; echo "$out"; die "hybrid_mixed on $np ranks: answers differ"; }
	stats=$(rdma_stats "$out" "$np") || exit 1
	echo "np=$np: same checks as ch3:sctp ($(echo "$out" | grep '^TIME' | sed 's/^TIME //'); ch3:sctp $(echo "$ref" | grep '^TIME' | sed 's/.*: //')); RDMA per rank: $stats"
done
echo "$want" | sed 's/^/  /'
