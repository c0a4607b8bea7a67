#!/bin/bash
# Two test hosts joined by two links (198.18.1.0/24 and 198.18.2.0/24, 200 Mbit/s each).
# A 64 MiB transfer starts on the first link; when a quarter has arrived, that link goes
# down on the sender's side. The transfer must complete intact over the second link.
. "$(dirname "$0")/../common.sh"
need_netns
xfer=./sctpt_xfer
[ -x "$xfer" ] || die "$xfer not built"
ns_add a; ns_add b
a=$(ns_name a) b=$(ns_name b)
ns_link "$a" a1 198.18.1.1/24 "$b" b1 198.18.1.2/24
ns_link "$a" a2 198.18.2.1/24 "$b" b2 198.18.2.2/24
for dev in a1 a2; do tc -n "$a" qdisc add dev $dev root tbf rate 200mbit burst 64kb latency 50ms; done
for dev in b1 b2; do tc -n "$b" qdisc add dev $dev root tbf rate 200mbit burst 64kb latency 50ms; done
dir=$(mktemp -d)
trap 'ns_cleanup; rm -rf "$dir"' EXIT
size=$((64 << 20))
bg ip netns exec "$b" timeout 40 $xfer --addrs 198.18.1.2,198.18.2.2 --card-out "$dir/b" \
	--card-in "$dir/a" --recv $size --progress "$dir/progress" >"$dir/recv.out" 2>"$dir/recv.err"
rpid=$!
bg ip netns exec "$a" timeout 40 $xfer --addrs 198.18.1.1,198.18.2.1 --card-out "$dir/a" \
	--card-in "$dir/b" --send $size >"$dir/send.out" 2>"$dir/send.err"
spid=$!
# wait (at most 30 s) for a quarter of the data, then cut the first link
for i in $(seq 300); do
	got=$(cat "$dir/progress" 2>/dev/null || echo 0)
	[ "${got:-0}" -ge $((size / 4)) ] && break
	sleep 0.1
done
[ "${got:-0}" -ge $((size / 4)) ] || { cat "$dir"/*.out "$dir"/*.err; die "transfer did not start"; }
[ "${got:-0}" -lt "$size" ] || die "transfer finished before the link could be cut"
echo "cutting link 198.18.1.1 <-> 198.18.1.2 after $got bytes"
ip -n "$a" link set a1 down
wait $spid; src=$?
wait $rpid; rrc=$?
echo "--- receiver"; cat "$dir/recv.out" "$dir/recv.err"
echo "--- sender"; cat "$dir/send.out" "$dir/send.err"
[ $rrc -eq 0 ] || die "receiver failed ($rrc)"
[ $src -eq 0 ] || die "sender failed ($src)"
grep -q "received $size of $size bytes intact" "$dir/recv.out" || die "data not intact"
grep -q "198.18.1.1 -> 198.18.1.2 to peer 0 down" "$dir/send.err" || die "no path-down event"
# the second link carried the rest: more than half of the data went out on it
out2=$(sed -n 's/^path 198.18.2.1:[0-9]* -> 198.18.2.2:[0-9]*: .*out \([0-9]*\) bytes.*/\1/p' "$dir/send.out")
[ "${out2:-0}" -gt $((size / 2)) ] || die "second path carried only ${out2:-0} bytes"
echo "PASS: 64 MiB intact across the link failure; second path carried $out2 bytes"
