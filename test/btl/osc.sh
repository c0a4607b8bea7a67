#!/usr/bin/env bash
# One-sided (btl_osc) on 2, 4 and 8 ranks: osc rdma over our BTL's RDMA (iWARP over SCTP),
# osc pt2pt over btl sctp with RDMA off, and osc pt2pt over btl tcp: the same answers. The
# rdma runs must have moved their data as iWARP segments (the BTL's statistics say so).
. "$(dirname "$0")/btl_common.sh"
OSC_RDMA=(--mca osc rdma --mca osc_rdma_btls sctp --mca btl_base_verbose 20)
for np in 2 4 8; do
	max=$((4 << 20))
	[ "$np" -eq 8 ] && max=$((1 << 20))
	out_tcp=$(run_btl tcp "$np" --mca osc pt2pt ./btl_osc $max) ||
		{ echo "$out_tcp"; die "osc pt2pt over btl tcp, $np ranks, failed"; }
	want=$(echo "$out_tcp" | grep '^CHECK')
	[ "$(echo "$want" | wc -l)" -eq 8 ] || { echo "$out_tcp"; die "tcp run printed no checks"; }
	out=$(run_btl sctp "$np" "${OSC_RDMA[@]}" ./btl_osc $max) ||
		{ echo "$out"; die "osc rdma over btl sctp, $np ranks, failed"; }
	[ "$(echo "$out" | grep '^CHECK')" = "$want" ] ||
		{ echo "--- tcp"; echo "$want"; echo "--- sctp"; echo "$out"; die "osc rdma over sctp: answers differ"; }
	# every rank's RNIC carried segments, and no Terminate was needed
	stats=$(echo "$out" | grep 'btl sctp: rdma:')
	[ "$(echo "$stats" | wc -l)" -eq "$np" ] || { echo "$out"; die "rdma statistics missing"; }
	echo "$stats" | awk '$4 != "rdma:" || $5 + 0 == 0 || $13 != 0 || $16 != 0 { bad = 1 } END { exit bad }' ||
		{ echo "$stats"; die "a rank sent no RDMA segment, or Terminates were exchanged"; }
	out_pt=$(run_btl sctp "$np" --mca osc pt2pt --mca btl_sctp_rdma 0 ./btl_osc $max) ||
		{ echo "$out_pt"; die "osc pt2pt over btl sctp, $np ranks, failed"; }
	[ "$(echo "$out_pt" | grep '^CHECK')" = "$want" ] || { echo "$out_pt"; die "osc pt2pt over sctp: answers differ"; }
	echo "np=$np: osc rdma/sctp, osc pt2pt/sctp and osc pt2pt/tcp agree; rdma segments sent per rank:" \
		$(echo "$stats" | awk '{ print $5 }')
done
echo "$want" | sed 's/^/  /'
