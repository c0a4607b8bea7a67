#!/usr/bin/env bash
# Open MPI's btl ofi on the sctp provider: one-sided MPI through osc rdma on the provider's
# RMA and atomics (mpi_osc_peers; see there why not test/btl's btl_osc), with point-to-point
# over mtl ofi or over btl ofi itself (btl_ofi_mode 2: ob1 on the provider's messages), on 2,
# 4 and 8 ranks, same answers as osc pt2pt over btl tcp; and test/btl's p2p program over
# ob1 + btl self,ofi.
. "$(dirname "$0")/mpi_common.sh"
OFI_BTL=(--mca btl_ofi_provider_include sctp --mca btl_base_verbose 100)
OSC=(--mca osc rdma --mca osc_rdma_btls ofi)
# btl ofi started on every rank (restricted to sctp, it has no other provider to start on)
started() { # NP OUTPUT
	[ "$(echo "$2" | grep -c 'select: init of component ofi returned success')" -ge "$1" ]
}
for np in 2 4 8; do
	base=$(run "$np" "${TCP_OPTS[@]}" --mca osc pt2pt ./mpi_osc_peers $((1 << 20))) ||
		{ echo "$base"; die "osc pt2pt over btl tcp, $np ranks, failed"; }
	want=$(echo "$base" | grep '^CHECK')
	[ "$(echo "$want" | wc -l)" -eq 2 ] || { echo "$base"; die "baseline printed no checks"; }
	for p2p in mtl btl; do
		if [ $p2p = mtl ]; then
			opts=("${MTL_OPTS[@]}" --mca btl self,ofi)
		else
			opts=(--mca pml ob1 --mca btl self,ofi --mca btl_ofi_mode 2)
		fi
		out=$(run "$np" "${opts[@]}" "${OFI_BTL[@]}" "${OSC[@]}" ./mpi_osc_peers $((1 << 20))) ||
			{ echo "$out"; die "osc rdma over btl ofi/sctp ($p2p p2p), $np ranks, failed"; }
		started "$np" "$out" || { echo "$out"; die "btl ofi did not pick sctp on every rank"; }
		[ "$(echo "$out" | grep '^CHECK')" = "$want" ] ||
			{ echo "$want"; echo "$out"; die "osc rdma/btl ofi ($p2p p2p), $np ranks: answers differ"; }
		echo "np=$np osc rdma over btl ofi/sctp, p2p over $p2p ofi: same answers as osc pt2pt/tcp"
	done
done
echo "$want" | sed 's/^/  /'
# two-sided over btl ofi: ob1 on the provider's FI_MSG
for np in 2 4; do
	base=$(run "$np" "${TCP_OPTS[@]}" ./mpi_p2p $((1 << 20))) || die "p2p over tcp failed"
	out=$(run "$np" --mca pml ob1 --mca btl self,ofi --mca btl_ofi_mode 2 "${OFI_BTL[@]}" \
		./mpi_p2p $((1 << 20))) || { echo "$out"; die "p2p over btl ofi/sctp failed"; }
	[ "$(echo "$base" | grep '^CHECK')" = "$(echo "$out" | grep '^CHECK')" ] ||
		{ echo "$out"; die "p2p over btl ofi/sctp, $np ranks: answers differ"; }
	[ "$(echo "$out" | grep -c 'bml: Using ofi btl for send')" -ge "$np" ] ||
		{ echo "$out"; die "ob1 did not send over btl ofi"; }
	echo "np=$np p2p over ob1 + btl self,ofi (sctp): same answers as ob1/tcp"
done
