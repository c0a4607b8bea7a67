#!/bin/bash
# The native engine keeps its own queue in front of a slower link short: between two
# namespace hosts whose link is a 200 Mbit/s tbf with room for 10 MB, a 24 MiB transfer
# (native -> native, every byte checked) must never have more than 1 MiB waiting in the
# sender's tbf. Without the limit the queue holds whatever cwnd allows (it grows without
# loss here, to megabytes). The tbf's backlog is read every 20 ms while the data moves.
# What is asserted holds whatever the load: a slower sender only queues less.
. "$(dirname "$0")/../common.sh"
need_netns
x=./engine_netxfer
[ -x "$x" ] || die "$x not built"
ns_add a; ns_add b
a=$(ns_name a) b=$(ns_name b)
ns_link "$a" a1 198.18.3.1/24 "$b" b1 198.18.3.2/24
dir=$(mktemp -d)
trap 'ns_cleanup; rm -rf "$dir"' EXIT
tc -n "$a" qdisc add dev a1 root tbf rate 200mbit burst 32kb limit 10mb ||
	skip "tc cannot add a tbf here"

bg ip netns exec "$b" env SCTPT_BACKEND=native timeout 100 $x --addrs 198.18.3.2 \
	--card-out "$dir/b" --card-in "$dir/a" --recv $((24 << 20)) --timeout 90 >"$dir/recv" 2>&1
rpid=$!
bg ip netns exec "$a" env SCTPT_BACKEND=native SCTPE_STATS=1 timeout 100 $x --addrs 198.18.3.1 \
	--card-out "$dir/a" --card-in "$dir/b" --send $((24 << 20)) --timeout 90 >"$dir/send" 2>&1
spid=$!
max=0 samples=0
# bounded: the transfer's own timeout ends it
while kill -0 $spid 2>/dev/null && [ $samples -lt 5000 ]; do
	q=$(tc -n "$a" -s qdisc show dev a1 | sed -n 's/.*backlog \([0-9]*\)b.*/\1/p' | head -n 1)
	[ -n "$q" ] && [ "$q" -gt "$max" ] && max=$q
	samples=$((samples + 1))
	sleep 0.02
done
wait $spid; src=$?
wait $rpid; rrc=$?
cat "$dir/send" "$dir/recv"
tc -n "$a" -s qdisc show dev a1
echo "largest backlog in the sender's tbf: $max bytes ($samples samples)"
[ $src -eq 0 ] || die "sender failed ($src)"
[ $rrc -eq 0 ] || die "receiver failed ($rrc)"
grep -q "intact: yes" "$dir/recv" || die "not intact"
[ $samples -ge 10 ] || die "the transfer ended before the queue could be watched"
[ "$max" -le $((1 << 20)) ] || die "the engine let $max bytes queue in front of the link"
echo "ok"
