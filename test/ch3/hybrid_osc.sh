#!/usr/bin/env bash
# One-sided communication (test/btl's btl_osc: fence and passive-target epochs, put, get,
# accumulate, get_accumulate, fetch_and_op, compare_and_swap, flush as remote completion) on
# 2, 4 and 8 ranks over ch3:hybrid: the same CHECK lines as over ch3:sctp (one-sided as CH3
# packets), as over ch3:hybrid with MPICH_HYBRID_RDMA=0, and as over ch3:hybrid with every
# operation that can go as RDMA going so (MPICH_HYBRID_LONE_MAX=0: no lone operation as a
# packet), where every rank moved data by RDMA, the core read segments straight into the
# windows, and no Terminate was exchanged (MPICH_HYBRID_STATS=1).
. "$(dirname "$0")/hybrid_common.sh"
for np in 2 4 8; do
	max=$((4 << 20))
	[ "$np" -eq 8 ] && max=$((1 << 20))
	ref=$(run_on "$SCTP" "$np" "$(hybrid_prog btl_osc "$SCTP")" $max) ||
		{ echo "$ref"; die "btl_osc on $np ranks over ch3:sctp failed"; }
	want=$(echo "$ref" | grep '^CHECK')
	[ "$(echo "$want" | wc -l)" -ge 7 ] || { echo "$ref"; die "ch3:sctp printed $(echo "$want" | wc -l) checks, fewer than 7"; }
	out=$(run_on "$HYB" "$np" "$(hybrid_prog btl_osc "$HYB")" $max) ||
		{ echo "$out"; die "btl_osc on $np ranks over ch3:hybrid failed"; }
	[ "$(echo "$out" | grep '^CHECK')" = "$want" ] ||
		{ echo "--- ch3:sctp"; echo "$want"; echo "--- ch3:hybrid"; echo "$out"; die "btl_osc on $np ranks: answers differ"; }
	out=$(MPICH_HYBRID_LONE_MAX=0 MPICH_HYBRID_STATS=1 run_on "$HYB" "$np" "$(hybrid_prog btl_osc "$HYB")" $max) ||
		{ echo "$out"; die "btl_osc on $np ranks over ch3:hybrid (MPICH_HYBRID_LONE_MAX=0) failed"; }
	[ "$(echo "$out" | grep '^CHECK')" = "$want" ] ||
		{ echo "--- ch3:sctp"; echo "$want"; echo "--- ch3:hybrid"; echo "$out"; die "btl_osc on $np ranks: answers differ"; }
	stats=$(rdma_stats "$out" "$np") || exit 1
	# every rank put and got by RDMA
	echo "$out" | grep 'RDMA:' | grep -qE 'RDMA: 0 puts|, 0 gets' && { echo "$out" | grep 'RDMA:'; die "a rank did no RDMA put or get"; }
	# and the core read segments of them straight into the windows (direct placement)
	echo "$out" | grep -qE '\([1-9][0-9]* read straight into their region\)' ||
		{ echo "$out" | grep 'RDMA:'; die "no segment was placed directly"; }
	off=$(MPICH_HYBRID_RDMA=0 run_on "$HYB" "$np" "$(hybrid_prog btl_osc "$HYB")" $max) ||
		{ echo "$off"; die "btl_osc on $np ranks over ch3:hybrid without RDMA failed"; }
	[ "$(echo "$off" | grep '^CHECK')" = "$want" ] || { echo "$off"; die "MPICH_HYBRID_RDMA=0: answers differ"; }
	echo "np=$np: ch3:hybrid (RDMA and not) and ch3:sctp agree; RDMA puts/gets/atomics per rank: $stats"
done
echo "$want" | sed 's/^/  /'
