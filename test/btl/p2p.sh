#!/usr/bin/env bash
# Point-to-point (btl_p2p) on 2, 4 and 8 ranks over btl self,tcp and self,sctp: same answers.
. "$(dirname "$0")/btl_common.sh"
compare_btls 2 ./btl_p2p
compare_btls 4 ./btl_p2p $((1 << 20))
# shared memory on the node, sctp configured too (what users run on clusters)
if sctp_usable; then
	out=$(run_btl vader,sctp 4 ./btl_p2p $((1 << 20))) || { echo "$out"; die "btl self,vader,sctp failed"; }
	[ "$(echo "$out" | grep '^CHECK')" = "$LAST_TCP_CHECKS" ] || { echo "$out"; die "self,vader,sctp: answers differ"; }
	echo "self,vader,sctp np=4: same answers"
fi
compare_btls 8 ./btl_p2p $((256 << 10))
finish
