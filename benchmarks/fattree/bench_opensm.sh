#!/bin/sh
# Route the same fat-trees with OpenSM's ftree, updn and dfsssp (inside ibsim) and with
# ftroute's dmodc (plus its --spread option, minhop, and dmodk when complete); print one
# table: routing time, invalid pairs, deadlock (CDG cycle), and max / mean routes per link
# per pattern, all measured by the same tool (ftroute --load-lft) on the same tables.
#
# usage: bench_opensm.sh [-q] [-f "nodes:spec ..."] [-d "0 1 5 10"] [-e "ftree updn dfsssp"] [-o DIR]
#   -q  quick: only the 512- and 648-node fabrics
#   -e  OpenSM engines to run (dfsssp takes tens of minutes at 11,664 nodes)
# Environment: FTROUTE (path to ftroute), FT_SEED (degradation seed, default 1).
# OpenSM's time is read from its log: from "building routing with" to the next sweep step
# (routing plus LFT construction, no discovery, no upload). Ours is the engine alone.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../test/fattree/ft_ibsim.sh"
FTROUTE=${FTROUTE:-$here/../../_build/fattree/routing/fattree/ftroute}
[ -x "$FTROUTE" ] || { echo "set FTROUTE to the ftroute binary" >&2; exit 2; }
ft_have_opensm || { echo "opensm and ibsim-utils are needed" >&2; exit 2; }
FABRICS="512:3;8,8,8;1,8,8;1,1,1 648:rlft:2:36 1944:3;18,18,6;1,18,18;1,1,1 11664:rlft:3:36"
DEGR="0 1 5 10"
OSM_ENGINES="ftree updn dfsssp"
OUT=
while getopts qf:d:e:o: o; do
	case $o in
	q) FABRICS="512:3;8,8,8;1,8,8;1,1,1 648:rlft:2:36" ;;
	f) FABRICS=$OPTARG ;;
	d) DEGR=$OPTARG ;;
	e) OSM_ENGINES=$OPTARG ;;
	o) OUT=$OPTARG ;;
	*) sed -n '2,12p' "$0"; exit 2 ;;
	esac
done
[ -n "$OUT" ] || OUT=$(mktemp -d /tmp/ft_bench.XXXXXX)
mkdir -p "$OUT"
export IBSIM_SOCKNAME=ftbench$$
trap 'ft_ibsim_stop' EXIT INT TERM
FT_OPENSM_TIMEOUT=${FT_OPENSM_TIMEOUT:-1800}
FT_IBSIM_TIMEOUT=${FT_IBSIM_TIMEOUT:-7200}

# seconds between "building routing with" and the next do_sweep line of an OpenSM log
osm_route_time() {
	awk '
	function ts(line,   a, h) { split($3, h, ":"); return h[1] * 3600 + h[2] * 60 + h[3] + $4 / 1e6 }
	/building routing with/ && !t0 { t0 = ts($0); next }
	t0 && /do_sweep:/ { printf "%.6f", ts($0) - t0; t0 = 0; done = 1; exit }
	END { if (!done) printf "-" }' "$1"
}

# quality options by size: every shift and all-to-all up to 2048 nodes, else 256 shifts
qopts() {
	if [ "$1" -le 2048 ]; then echo "--shifts 0 --a2a --perms 16"; else echo "--shifts 256 --perms 16"; fi
}

# one table row from an ftroute output file
row() { # fabric degr engine time file
	awk -v f="$1" -v dg="$2" -v e="$3" -v tm="$4" '
	function val(k,   i) { for (i = 1; i <= NF; i++) if ($i == k) return $(i + 1); return "-" }
	/^check:/ { for (i = 1; i <= NF; i++) { split($i, kv, "="); c[kv[1]] = kv[2] } }
	/^shift /    { smax = val("max"); smm = val("meanmax"); smean = val("mean") }
	/^all2all /  { amax = val("max"); amean = val("mean") }
	/^randperm / { pmax = val("max"); pmm = val("meanmax") }
	END {
		printf "%-7s %-5s %-16s %10s %9s %-4s %5s %7s %6s %8s %8s %5s %7s\n", f, dg "%", e, tm,
		       c["invalid_pairs"], c["deadlock"], smax, smm, smean, (amax == "" ? "-" : amax),
		       (amean == "" ? "-" : amean), pmax, pmm
	}' "$5"
}

printf "%-7s %-5s %-16s %10s %9s %-4s %5s %7s %6s %8s %8s %5s %7s\n" nodes degr engine route_s \
	invalid dlck shmax shmmax shmean a2amax a2amean rpmax rpmmax
for fab in $FABRICS; do
	n=${fab%%:*}
	spec=${fab#*:}
	for dg in $DEGR; do
		d=$OUT/n${n}_d$dg
		mkdir -p "$d"
		if [ "$dg" = 0 ]; then
			"$FTROUTE" -g "$spec" -n -o "$d/fabric.net" >"$d/gen.out" || exit 1
		else
			"$FTROUTE" -g "$spec" --degrade-links "$dg%" --seed "${FT_SEED:-1}" -n -o "$d/fabric.net" \
				>"$d/gen.out" || exit 1
		fi
		q=$(qopts "$n")
		nsw=$(sed -n 's/.*switches=\([0-9]*\).*/\1/p' "$d/gen.out" | head -1)
		ft_ibsim_start "$d/fabric.net" "$d/ibsim.log" -N $((n + nsw + 64)) -S $((nsw + 64)) \
			-P $(((n + nsw * 80) + 64)) || { echo "ibsim failed on $d" >&2; exit 1; }
		for e in $OSM_ENGINES; do
			ft_opensm "$d/osm_$e" "$d/cache" "$d/osm_$e.log" -R "$e" -D 0x45
			tm=$(osm_route_time "$d/osm_$e.log")
			name=$e
			grep -q "hasn.t been identified as FatTree\|cannot build lid matrices\|falling back" "$d/osm_$e.log" && name="$e>minhop"
			if [ -s "$d/osm_$e/opensm-lfts.dump" ]; then
				# $q stays unquoted: it is a list of options
				"$FTROUTE" -t "$d/fabric.net" --load-lft "$d/osm_$e/opensm-lfts.dump" -c $q >"$d/q_$e.out" 2>&1
				row "$n" "$dg" "osm-$name" "$tm" "$d/q_$e.out"
			else
				echo "$n $dg osm-$e: no tables (see $d/osm_$e.log)"
			fi
			rm -f "$d/osm_$e.log"   # verbose; the row keeps what matters
		done
		ft_ibsim_stop
		for e in dmodc dmodc+spread minhop dmodk; do
			[ "$e" = dmodk ] && [ "$dg" != 0 ] && continue
			if [ "$e" = dmodk ]; then
				"$FTROUTE" -t "$d/fabric.net" -g "$spec" -e dmodk -c $q >"$d/q_$e.out" 2>&1
			elif [ "$e" = dmodc+spread ]; then
				"$FTROUTE" -t "$d/fabric.net" -e dmodc --spread -c $q >"$d/q_$e.out" 2>&1
			else
				"$FTROUTE" -t "$d/fabric.net" -e "$e" -c $q >"$d/q_$e.out" 2>&1
			fi
			tm=$(sed -n 's/^route: .* time=\([0-9.]*\) s.*/\1/p' "$d/q_$e.out")
			row "$n" "$dg" "$e" "$tm" "$d/q_$e.out"
		done
	done
done
echo "(outputs in $OUT)"
