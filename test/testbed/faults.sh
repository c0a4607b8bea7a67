#!/usr/bin/env bash
# Faults on one rail of the 4-PC, 2-NIC design, all-pairs traffic over btl tcp on both NICs,
# every message checked: 1% random loss (nft numgen) on PC 1's nic1, in and out; then PC 1's
# nic1 taken down 2 s into the run and brought back 4 s later.  btl tcp survives both (TCP
# retransmits; the rail's connections stall while it is down and resume).  A rail that stays
# down is nicdown.sh.
. "$(dirname "$0")/tb_common.sh"
need_testbed
need_mpi

tb_up f "$TB_SRC/designs/pc4x2.table" --rate 200mbit --loss 1:1:1
ip netns exec "$TB_PREFIX-pc1" nft list table inet fnntb_loss | grep -q 'numgen random mod 1000 < 10 drop' ||
	die "the 1% loss rule is not in place"
out=$(tb_mpirun 4 nic0,nic1 90 "$TB_ALLPAIRS" --seconds 5)
check_allpairs "$out" 4 || { echo "$out"; die "all-pairs with 1% loss on PC 1 nic1 failed"; }
echo "$out" | grep -E '^(CHECK|time)' | sed 's/^/1% loss: /'
"$CLUSTER" loss --prefix "$TB_PREFIX" 1 1 0 || die "removing the loss"

log=$(mktemp)
tb_mpirun 4 nic0,nic1 90 "$TB_ALLPAIRS" --seconds 6 >"$log" &
mpipid=$!
_pids+=("$mpipid")
sleep 2
"$CLUSTER" link --prefix "$TB_PREFIX" 1 1 down || die "link down"
sleep 4
"$CLUSTER" link --prefix "$TB_PREFIX" 1 1 up || die "link up"
wait "$mpipid"
rc=$?
out=$(cat "$log")
rm -f "$log"
[ $rc -eq 0 ] && check_allpairs "$out" 4 || { echo "$out"; die "all-pairs with nic1 of PC 1 down for 4 s: status $rc"; }
echo "$out" | grep -E '^(CHECK|time)' | sed 's/^/nic1 of PC 1 down 4 s: /'
tb_down
