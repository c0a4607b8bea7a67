#!/bin/sh
# Dmodc alone on growing PGFTs, complete and degraded, up to 64k nodes: engine time with
# 1 and 2 threads (best of 3, shown as wall/CPU seconds: CPU time sums the threads and does
# not grow when the machine is shared), Dmodk on the complete ones, minimal-change
# re-routing after 1% cable loss, and the validity check.
#
# usage: bench_scale.sh [-q]     (-q: stop at 11664 nodes)
# Environment: FTROUTE (path to ftroute).
here=$(cd "$(dirname "$0")" && pwd)
FTROUTE=${FTROUTE:-$here/../../_build/fattree/routing/fattree/ftroute}
[ -x "$FTROUTE" ] || { echo "set FTROUTE to the ftroute binary" >&2; exit 2; }
SPECS="rlft:2:36 rlft:3:16 3;18,18,12;1,18,18;1,1,1 rlft:3:36 rlft:3:48 3;32,32,50;1,32,32;1,1,1 3;32,32,64;1,32,32;1,1,1"
[ "$1" = -q ] && SPECS="rlft:2:36 rlft:3:16 3;18,18,12;1,18,18;1,1,1 rlft:3:36"

best() { # best of 3 engine wall times, as wall/cpu, for: ftroute args...
	for i in 1 2 3; do
		"$FTROUTE" "$@" | sed -n 's/^route: .* time=\([0-9.]*\) s cpu=\([0-9.]*\) s/\1 \2/p'
	done | sort -g | head -1 | awk '{ printf "%.3f/%.3f", $1, $2 }'
}

printf "%-8s %-7s %-30s %5s %13s %13s %13s %12s %12s %8s\n" nodes switches pgft degr dmodc_1t dmodc_2t dmodk_2t \
	reroute_chg full_chg invalid
for spec in $SPECS; do
	info=$("$FTROUTE" -g "$spec" -n)
	n=$(echo "$info" | sed -n 's/.* nodes=\([0-9]*\).*/\1/p')
	s=$(echo "$info" | sed -n 's/.* switches=\([0-9]*\).*/\1/p')
	pg=$(echo "$info" | sed -n 's/^fabric: \([^ ]*\) .*/\1/p')
	for dg in 0 5; do
		set -- -g "$spec"
		[ "$dg" != 0 ] && set -- "$@" --degrade-links "$dg%" --seed 1
		t1=$(best "$@" -j 1)
		t2=$(best "$@" -j 2)
		tk=-
		[ "$dg" = 0 ] && tk=$(best "$@" -j 2 -e dmodk)
		rr=$("$FTROUTE" -g "$spec" --degrade-links 1% --seed 2 --reroute -j 2 | sed -n 's/^reroute: //p')
		chg=$(echo "$rr" | sed -n 's/.*changed_minimal=\([0-9]*\).*/\1/p')
		full=$(echo "$rr" | sed -n 's/.*changed_full_dmodc=\([0-9]*\).*/\1/p')
		inv=-
		[ "$n" -le 30000 ] && inv=$("$FTROUTE" "$@" -c | sed -n 's/^check: invalid_pairs=\([0-9]*\).*/\1/p')
		[ "$dg" = 0 ] || { chg=-; full=-; }
		printf "%-8s %-7s %-30s %4s%% %13s %13s %13s %12s %12s %8s\n" "$n" "$s" "$pg" "$dg" "$t1" "$t2" "$tk" \
			"$chg" "$full" "$inv"
	done
done
echo "(reroute: table entries changed after 1% cable loss, minimal-change vs a full Dmodc re-route)"
