#!/usr/bin/env bash
# FNN striping (MPICH_SCTP_FNN_TABLE / MPICH_SCTP_FNN_ADDRS) on the emulated FNN cluster of
# test/testbed (fnn-cluster.sh: a network namespace per PC, 200 Mbit/s NICs, the 4-PC
# 2-NIC design), one rank per PC (test/testbed/in-pc-ns.sh under our mpiexec), tb_allpairs
# checking every message: PC 0 must send on both of its NICs (the core stripes each peer
# over the switches the two PCs share), and with PC 1's nic1 taken down for good 2 s into a
# run the job still finishes with every message intact.
. "$(dirname "$0")/ch3_common.sh"
TB_SRC=$top_srcdir/test/testbed
CLUSTER=$TB_SRC/fnn-cluster.sh
[ "$(id -u)" -eq 0 ] || skip "the testbed needs root (network namespaces, tc, nft)"
for c in ip tc nft nsenter; do command -v $c >/dev/null || skip "$c missing"; done
need_netns
prefix="t$$c"
tb_dir=/run/fnn-testbed/$prefix
trap 'ns_cleanup; timeout 60 "$CLUSTER" down --prefix "$prefix" >/dev/null 2>&1' EXIT
timeout 60 "$CLUSTER" up "$TB_SRC/designs/pc4x2.table" --prefix "$prefix" --rate 200mbit >/dev/null ||
	die "fnn-cluster.sh up failed"

prog=$(ch3_prog tb_allpairs)
tx_bytes() { ip -n "$prefix-pc$1" -s -j link show "$2" | sed 's/.*"tx":{"bytes":\([0-9]*\).*/\1/'; }
run_striped() { # SECONDS
	MPICH_SCTP_FNN_TABLE=$tb_dir/table MPICH_SCTP_FNN_ADDRS=$tb_dir/addrs FNN_TB_PREFIX=$prefix \
		MPICH_SCTP_VERBOSE=1 timeout -k 10 90 "$MPIEXEC" -launcher fork -n 4 \
		"$TB_SRC/in-pc-ns.sh" "$prog" --seconds "$1" 2>&1
}
check() { # NAME OUTPUT
	echo "$2" | grep -q '^CHECK allpairs ranks 4 rounds [0-9]* messages [1-9][0-9]* bytes [0-9]* errors 0$' ||
		{ echo "$2" | tail -n 30; die "$1: messages missing or wrong"; }
	echo "$2" | grep -q 'ch3:sctp: rank 0: peer .* striped over 2 rails' ||
		{ echo "$2" | tail -n 30; die "$1: rank 0 striped no peer over 2 rails"; }
	echo "$1: $(echo "$2" | grep '^CHECK allpairs')"
}

b0=$(tx_bytes 0 nic0) b1=$(tx_bytes 0 nic1)
out=$(run_striped 3); rc=$?
[ $rc -eq 0 ] || { echo "$out" | tail -n 30; die "striped run: status $rc"; }
check "pc4x2 striped" "$out"
d0=$(($(tx_bytes 0 nic0) - b0)) d1=$(($(tx_bytes 0 nic1) - b1))
echo "PC 0 sent $d0 bytes on nic0, $d1 on nic1"
[ "$d0" -gt 1000000 ] && [ "$d1" -gt 1000000 ] || die "PC 0 did not stripe over both NICs"

log=$(mktemp)
run_striped 5 >"$log" &
pid=$!
sleep 2
"$CLUSTER" link --prefix "$prefix" 1 1 down || die "link down"
wait $pid; rc=$?
out=$(cat "$log"); rm -f "$log"
[ $rc -eq 0 ] || { echo "$out" | tail -n 30; die "PC 1 nic1 down: status $rc"; }
check "pc4x2 striped, PC 1 nic1 down for good after 2 s" "$out"
