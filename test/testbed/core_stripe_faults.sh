#!/usr/bin/env bash
# The SCTP core striped over the 4-PC, 2-switch design (2 rails per pair), all-pairs traffic
# with every message checked: with 1% loss on PC 1's nic1, and with PC 1's nic1 taken down
# 2 s into a 6 s run and left down (what btl tcp cannot survive: nicdown.sh).  Every message
# must arrive intact; after the NIC goes down, PC 1's rails over it must have failed and
# their unacknowledged fragments been re-sent on the other rail.
. "$(dirname "$0")/tb_common.sh"
need_testbed
need_core_stripe

tb_up l "$TB_SRC/designs/pc4x2.table" --rate 200mbit --loss 1:1:1
tb_core_stripe 4 || { cat "$TB_OUT"/out.*; die "core striping with 1% loss on PC 1 nic1 failed"; }
check_core_stripe 4 || { cat "$TB_OUT"/out.*; die "core striping with 1% loss: messages or rails wrong"; }
grep -h '^CHECK' "$TB_OUT"/out.* | sed 's/^/1% loss: /'
grep -h '^RAILS pc [023] peer 1 ' "$TB_OUT"/out.* | sed 's/^/1% loss: /'
rm -rf "$TB_OUT"
tb_down

tb_up d "$TB_SRC/designs/pc4x2.table" --rate 200mbit
TB_DURING='sleep 2; "$CLUSTER" link --prefix "$TB_PREFIX" 1 1 down || hard "link down"'
tb_core_stripe 6 || { cat "$TB_OUT"/out.*; die "core striping with PC 1 nic1 down for good failed"; }
unset TB_DURING
check_core_stripe 4 || { cat "$TB_OUT"/out.*; die "core striping with nic1 down: messages or rails wrong"; }
grep -h '^CHECK' "$TB_OUT"/out.* | sed 's/^/nic1 down: /'
grep -h '^RAILS pc 1 ' "$TB_OUT"/out.1 | sed 's/^/nic1 down: /'
# PC 1's rails on nic1 (rail 1: switch 1) failed, and fragments were re-sent
grep -h '^RAILS pc 1 ' "$TB_OUT"/out.1 | awk '$15 == 0 { bad = 1 } END { exit bad }' ||
	{ cat "$TB_OUT"/out.1; die "a rail of PC 1 over its dead nic1 never failed"; }
grep -h '^RAILS pc 1 ' "$TB_OUT"/out.1 | awk '{ r += $17 } END { exit !(r > 0) }' ||
	{ cat "$TB_OUT"/out.1; die "PC 1 re-sent nothing after its nic1 went down"; }
rm -rf "$TB_OUT"
tb_down
