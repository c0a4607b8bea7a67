#!/usr/bin/env bash
# How the core spreads a striped peer's data over rails of different speeds (issue 8: "large
# messages are split across the shared rails in proportion to their rates; small messages
# take the lowest-latency rail").  Two PCs share two switches; PC 0 sends to PC 1 only.
#  1. nic1 of both PCs at 20 Mbit/s, nic0 at 200: 1 KiB messages must go (>= 90% of the
#     bytes) on nic0's rail, the one that delivers them first.
#  2. nic1 at 100 Mbit/s, nic0 at 200: 1 MiB messages must split in proportion to the rates
#     (nic0's share of the bytes 0.55-0.80 for an ideal 0.67; fragments are 64 KiB, a rail's
#     rate is measured every 100 ms) and arrive at >= 85% of the 37.5 MB/s the two carry.
# Every message is checked byte for byte.
. "$(dirname "$0")/tb_common.sh"
need_testbed
need_core_stripe

table=$(mktemp)
printf '0: 0 1\n1: 0 1\n' >"$table"
trap 'rm -f "$table"; tb_cleanup' EXIT

# rail_bytes: "bytes on rail 0, rail 1" that PC 0 sent to PC 1, from its RAILS line
rail_bytes() { awk '/^RAILS pc 0 peer 1 / { split($11, b, ","); print b[1], b[2] }' "$TB_OUT/out.0"; }
recv_rate() { awk '/^time pc 1 / { print $(NF-1) }' "$TB_OUT/out.1"; }
# check_oneway: both PCs without errors, PC 1 received messages, two rails
check_oneway() {
	grep -q '^CHECK core-stripe pc 0 peers 1 messages 0 bytes 0 errors 0$' "$TB_OUT/out.0" &&
		grep -q '^CHECK core-stripe pc 1 peers 1 messages [1-9][0-9]* bytes [0-9]* errors 0$' "$TB_OUT/out.1" &&
		grep -q '^RAILS pc 0 peer 1 rails 2 shared 2 ' "$TB_OUT/out.0"
}

tb_up s "$table" --rate 200mbit
for pc in 0 1; do "$CLUSTER" shape --prefix "$TB_PREFIX" "$pc" 1 20mbit || hard "shape"; done
tb_core_stripe 3 --oneway --sizes 1024 || { cat "$TB_OUT"/out.*; die "small messages failed"; }
check_oneway || { cat "$TB_OUT"/out.*; die "small messages: messages or rails wrong"; }
read -r b0 b1 <<<"$(rail_bytes)"
echo "1 KiB messages, rails 200 + 20 Mbit/s: $b0 bytes on the fast rail, $b1 on the slow one"
awk -v a="$b0" -v b="$b1" 'BEGIN { exit !(a > 0 && a >= 0.9 * (a + b)) }' ||
	die "small messages did not keep to the fast rail ($b0 / $b1 bytes)"
rm -rf "$TB_OUT"

for pc in 0 1; do "$CLUSTER" shape --prefix "$TB_PREFIX" "$pc" 1 100mbit || hard "shape"; done
tb_core_stripe 4 --oneway --sizes 1048576 || { cat "$TB_OUT"/out.*; die "1 MiB messages failed"; }
check_oneway || { cat "$TB_OUT"/out.*; die "1 MiB messages: messages or rails wrong"; }
read -r b0 b1 <<<"$(rail_bytes)"
rate=$(recv_rate)
share=$(awk -v a="$b0" -v b="$b1" 'BEGIN { printf "%.3f", a / (a + b) }')
echo "1 MiB messages, rails 200 + 100 Mbit/s: fast rail's share $share (ideal 0.667), $rate MB/s of 37.5"
awk -v s="$share" 'BEGIN { exit !(s >= 0.55 && s <= 0.80) }' ||
	die "bytes not split in proportion to the rails' rates (fast share $share)"
awk -v r="$rate" 'BEGIN { exit !(r >= 0.85 * 37.5) }' ||
	die "the two rails together delivered only $rate MB/s"
rm -rf "$TB_OUT"
tb_down
