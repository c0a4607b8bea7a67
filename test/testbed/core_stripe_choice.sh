#!/usr/bin/env bash
# How the core spreads a striped peer's data over rails of different latency or speed (issue
# 8: "large messages are split across the shared rails in proportion to their rates; small
# messages take the lowest-latency rail").  Two PCs share two switches (two rails); PC 0
# sends to PC 1 only, every message checked byte for byte.
#  1. Both NICs at 200 Mbit/s, one NIC of each PC delayed 5 ms each way (its rail's RTT
#     +20 ms), 1 KiB messages at 2000 a second (2.2 MB/s, 9% of a rail: no queue builds up
#     anywhere) for 3 s: >= 90% of the fragments must go on the other rail, the one that
#     delivers them first.  Once with nic1 delayed and once with nic0 (so a tie going to
#     rail 0 cannot pass for a choice).  fnn-cluster.sh's `shape ... DELAY` uses netem, or
#     where the kernel has none, a delay line (a relay in the fabric namespace).
#  2. nic0 at 200 Mbit/s, nic1 at 100, no delay, 1 MiB messages for 4 s: the bytes must split
#     in proportion to the rates, nic0's share 0.55-0.80 for an ideal 0.667 (rates are
#     estimated from acknowledgements in 100 ms samples, fragments are 64 KiB, and the
#     first fragments go out before any rate is known), and PC 1 must receive >= 85% of the
#     37.5 MB/s the two rails carry (a wire rate: Ethernet, IP, UDP and SCTP headers take
#     ~5% of it, the rest of the margin is start-up and the drain at the end).
. "$(dirname "$0")/tb_common.sh"
need_testbed
need_core_stripe
command -v python3 >/dev/null || skip "python3 missing (fnn-cluster.sh's delay line)"

table=$(mktemp)
printf '0: 0 1\n1: 0 1\n' >"$table"
trap 'rm -f "$table"; tb_cleanup' EXIT

# rail_of FIELD IP: PC 0's FIELD (e.g. frags, bytes) to PC 1 on the rail whose local address
# is IP, from its RAILS line (fields by name: the line only grows at its end)
rail_of() {
	awk -v f="$1" -v ip="$2" '/^RAILS pc 0 peer 1 / {
		for (i = 1; i < NF; i++) v[$i] = $(i + 1)
		n = split(v[f], x, ","); split(v["local"], l, ",")
		for (k = 1; k <= n; k++) if (l[k] == ip) print x[k] }' "$TB_OUT/out.0"
}
rail_total() {
	awk -v f="$1" '/^RAILS pc 0 peer 1 / { for (i = 1; i < NF; i++) v[$i] = $(i + 1)
		n = split(v[f], x, ","); for (k = 1; k <= n; k++) t += x[k]; print t }' "$TB_OUT/out.0"
}
rtts() { awk '/^RAILS pc 0 peer 1 / { for (i = 1; i < NF; i++) if ($i == "rtt_ms") print $(i + 1) }' "$TB_OUT/out.0"; }
recv_rate() { awk '/^time pc 1 / { print $(NF-1) }' "$TB_OUT/out.1"; }
# check_oneway: both PCs without errors, PC 1 received messages, two rails
check_oneway() {
	grep -q '^CHECK core-stripe pc 0 peers 1 messages 0 bytes 0 errors 0$' "$TB_OUT/out.0" &&
		grep -q '^CHECK core-stripe pc 1 peers 1 messages [1-9][0-9]* bytes [0-9]* errors 0$' "$TB_OUT/out.1" &&
		grep -q '^RAILS pc 0 peer 1 rails 2 shared 2 ' "$TB_OUT/out.0"
}
# shape_nic K RATE [DELAY]: NIC K of both PCs
shape_nic() {
	local pc
	for pc in 0 1; do
		timeout 30 "$CLUSTER" shape --prefix "$TB_PREFIX" "$pc" "$@" || hard "fnn-cluster.sh shape $pc $*"
	done
}

tb_up s "$table" --rate 200mbit
# small messages: the delayed NIC, then the fast one's address on PC 0
for slow in 1 0; do
	fast=$((1 - slow))
	shape_nic "$fast" 200mbit
	shape_nic "$slow" 200mbit 5ms
	tb_core_stripe 3 --oneway --sizes 1024 --rate-msgs 2000 ||
		{ cat "$TB_OUT"/out.*; die "small messages (nic$slow delayed) failed"; }
	check_oneway || { cat "$TB_OUT"/out.*; die "small messages (nic$slow delayed): messages or rails wrong"; }
	f=$(rail_of frags "198.18.$fast.1")
	n=$(rail_total frags)
	echo "1 KiB messages, 2000/s, nic$slow delayed 5 ms each way (RTT ms by rail: $(rtts)):" \
		"$f of $n fragments on nic$fast's rail ($(awk -v a="$f" -v n="$n" 'BEGIN { printf "%.2f", 100 * a / n }')%)"
	awk -v a="$f" -v n="$n" 'BEGIN { exit !(n > 0 && a >= 0.9 * n) }' ||
		{ cat "$TB_OUT"/out.0; die "small messages did not keep to the low-latency rail (nic$fast: $f of $n fragments)"; }
	rm -rf "$TB_OUT"
done

# large messages: rails at 200 and 100 Mbit/s
shape_nic 0 200mbit
shape_nic 1 100mbit
tb_core_stripe 4 --oneway --sizes 1048576 || { cat "$TB_OUT"/out.*; die "1 MiB messages failed"; }
check_oneway || { cat "$TB_OUT"/out.*; die "1 MiB messages: messages or rails wrong"; }
b0=$(rail_of bytes 198.18.0.1)
b1=$(rail_of bytes 198.18.1.1)
rate=$(recv_rate)
share=$(awk -v a="$b0" -v b="$b1" 'BEGIN { printf "%.3f", a / (a + b) }')
echo "1 MiB messages, rails 200 + 100 Mbit/s: $b0 + $b1 bytes, the 200 Mbit/s rail's share" \
	"$share (ideal 0.667), PC 1 received $rate MB/s of 37.5 ($(awk -v r="$rate" 'BEGIN { printf "%.0f", 100 * r / 37.5 }')%)"
awk -v s="$share" 'BEGIN { exit !(s >= 0.55 && s <= 0.80) }' ||
	{ cat "$TB_OUT"/out.0; die "bytes not split in proportion to the rails' rates (fast share $share)"; }
awk -v r="$rate" 'BEGIN { exit !(r >= 0.85 * 37.5) }' ||
	{ cat "$TB_OUT"/out.*; die "the two rails together delivered only $rate MB/s"; }
rm -rf "$TB_OUT"
tb_down
