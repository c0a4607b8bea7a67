#!/usr/bin/env bash
# The SCTP core striped over the 4-PC, 2-switch design (2 rails per pair), all-pairs traffic
# with every message checked: with 1% loss on PC 1's nic1, with PC 1's nic1 taken down
# 2 s into a 6 s run and left down (what btl tcp cannot survive: nicdown.sh), and with it
# down for 2 s only.  Every message must arrive intact; after the NIC goes down, PC 1's
# rails over it must have failed and their unacknowledged fragments been re-sent on the
# other rail; once it is back, the rails must be connected again and nic1 used again.
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

tb_up f "$TB_SRC/designs/pc4x2.table" --rate 200mbit
# tx_bytes PC IF: bytes sent on a NIC so far
tx_bytes() { ip -n "$TB_PREFIX-pc$1" -s -j link show "$2" | sed 's/.*"tx":{"bytes":\([0-9]*\).*/\1/'; }
TB_DURING='sleep 2; "$CLUSTER" link --prefix "$TB_PREFIX" 1 1 down || hard "link down"
	sleep 2; "$CLUSTER" link --prefix "$TB_PREFIX" 1 1 up || hard "link up"; sleep 1
	tx_up=$(tx_bytes 1 nic1)'
tb_core_stripe 7 || { cat "$TB_OUT"/out.*; die "core striping with PC 1 nic1 down for 2 s failed"; }
unset TB_DURING
check_core_stripe 4 || { cat "$TB_OUT"/out.*; die "core striping with nic1 down for 2 s: messages or rails wrong"; }
grep -h '^CHECK' "$TB_OUT"/out.* | sed 's/^/nic1 down 2 s: /'
grep -h '^RAILS pc 1 ' "$TB_OUT"/out.1 | sed 's/^/nic1 down 2 s: /'
after=$(($(tx_bytes 1 nic1) - tx_up))
echo "nic1 down 2 s: PC 1 sent $after bytes on nic1 from 1 s after it came back"
grep -h '^RAILS pc 1 ' "$TB_OUT"/out.1 | awk '$15 == 0 || $21 == 0 { bad = 1 } END { exit bad }' ||
	{ cat "$TB_OUT"/out.1; die "a rail of PC 1 over nic1 did not fail and reconnect"; }
[ "$after" -gt 1000000 ] || die "PC 1 did not use nic1 again after it came back ($after bytes)"
rm -rf "$TB_OUT"
tb_down
