#!/usr/bin/env bash
# MPICH with --with-device=ch3:hybrid builds and installs (cached), reports its device and
# carries the core with its iWARP layer; point-to-point (test/btl's btl_p2p) on 2 and 4 ranks
# gives the same CHECK lines as over ch3:sctp.
. "$(dirname "$0")/hybrid_common.sh"
ch3_installed "$HYB" ch3:hybrid
for sym in sctpt_send iw_post_send; do
	nm "$lib" | grep -q " T $sym\$" || die "$lib does not contain $sym"
done
for np in 2 4; do
	out=$(run_on "$HYB" "$np" "$(hybrid_prog btl_p2p "$HYB")") ||
		{ echo "$out"; die "btl_p2p on $np ranks over ch3:hybrid failed"; }
	ref=$(run_on "$SCTP" "$np" "$(hybrid_prog btl_p2p "$SCTP")") ||
		{ echo "$ref"; die "btl_p2p on $np ranks over ch3:sctp failed"; }
	[ "$(echo "$out" | grep -c '^CHECK')" -gt 0 ] || { echo "$out"; die "no CHECK lines"; }
	[ "$(echo "$out" | grep '^CHECK')" = "$(echo "$ref" | grep '^CHECK')" ] ||
		{ echo "--- ch3:sctp"; echo "$ref"; echo "--- ch3:hybrid"; echo "$out"; die "btl_p2p on $np ranks: ch3:hybrid and ch3:sctp disagree"; }
	echo "np=$np btl_p2p: $(echo "$out" | grep -c '^CHECK') CHECK lines, the same as over ch3:sctp"
done
