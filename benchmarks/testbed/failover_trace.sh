#!/usr/bin/env bash
# failover_trace.sh BUILDDIR [RATE] [OUTDIR]: the thesis's failover trace on the emulated FNN
# cluster.  Two PCs share three switches (three rails), RATE per NIC (default 200mbit); PC 0
# streams to PC 1 (tb_bw --interval, 64 KiB x 32 in flight) for 20 s while PC 1's NICs go
# down and up on a fixed schedule:
#     t = 4 s nic1 down, 8 s nic2 down, 11 s nic1 up, 14 s nic2 up
# once over our btl sctp striped by the FNN table and once over Open MPI's btl tcp on the
# same three NICs, each in a fresh cluster.  Writes OUTDIR/failover_trace.dat (t, MB/s per
# transport), failover_trace.txt (the table and the events) and failover_trace.png (gnuplot;
# default OUTDIR benchmarks/testbed/results).  Needs root, Open MPI and BUILDDIR with
# test/testbed/tb_nsrun, benchmarks/testbed/tb_bw and ompi-btl/.libs/mca_btl_sctp.so.  Every
# cluster it brings up is taken down on exit; a transport that stalls for good is ended by
# timeout and plotted as far as it got.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
B=$(cd "${1:?usage: failover_trace.sh BUILDDIR [RATE] [OUTDIR]}" && pwd)
RATE=${2:-200mbit}
OUT=${3:-$HERE/results}
SECS=20 INTERVAL=500
EVENTS="4:1:down 8:2:down 11:1:up 14:2:up" # t_s:nic:state, PC 1's NICs
CLUSTER=$SRC/test/testbed/fnn-cluster.sh
export FNN_TB_NSRUN=$B/test/testbed/tb_nsrun OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
BW=$B/benchmarks/testbed/tb_bw
BTL_LIBDIR=$B/ompi-btl/.libs
OMPI_COMPONENTDIR=$(sed -n "s/^OMPI_COMPONENTDIR = //p" "$B/Makefile")
MPIRUN=$(command -v mpirun.openmpi || command -v mpirun)
[ "$(id -u)" -eq 0 ] || { echo "failover_trace.sh: needs root" >&2; exit 77; }
for f in "$BW" "$FNN_TB_NSRUN" "$BTL_LIBDIR/mca_btl_sctp.so"; do
	[ -e "$f" ] || { echo "failover_trace.sh: $f not built (make in $B)" >&2; exit 1; }
done
command -v gnuplot >/dev/null || { echo "failover_trace.sh: gnuplot missing" >&2; exit 1; }
mkdir -p "$OUT"

PREFIX="ft$$" TMP=$(mktemp -d)
events_pid=
cleanup() {
	[ -z "$events_pid" ] || kill "$events_pid" 2>/dev/null
	timeout 60 "$CLUSTER" down --prefix "$PREFIX" >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT
printf '0: 0 1\n1: 0 1\n2: 0 1\n' >"$TMP/pair3.table"

# link_events NAME: the schedule, from now (in the background: its PID in events_pid);
# each event's wall-clock time goes to $TMP/events.NAME.
link_events() {
	local name=$1
	(
		start=$(date +%s.%N)
		for e in $EVENTS; do
			IFS=: read -r t nic state <<<"$e"
			sleep "$(awk -v s="$start" -v t="$t" -v now="$(date +%s.%N)" \
				'BEGIN { d = s + t - now; print (d > 0 ? d : 0) }')"
			"$CLUSTER" link --prefix "$PREFIX" 1 "$nic" "$state" >/dev/null
			echo "$(date +%s.%N) $nic $state" >>"$TMP/events.$name"
		done
	) &
	events_pid=$!
}

# run NAME MPIRUN-ARGS...: one traced run in a fresh cluster; the trace in $TMP/NAME.trace
run() {
	local name=$1
	shift
	timeout 60 "$CLUSTER" up "$TMP/pair3.table" --prefix "$PREFIX" --rate "$RATE" >/dev/null ||
		{ echo "failover_trace.sh: cluster up failed" >&2; exit 1; }
	link_events "$name"
	FNN_TB_PREFIX=$PREFIX timeout -k 5 $((SECS + 15)) "$MPIRUN" --allow-run-as-root \
		--oversubscribe --bind-to none -np 2 --mca pml ob1 \
		--mca btl_base_warn_component_unused 0 "$@" "$SRC/test/testbed/in-pc-ns.sh" \
		"$BW" --seconds "$SECS" --size 65536 --window 32 --interval "$INTERVAL" \
		>"$TMP/$name.out" 2>&1
	echo "$name: mpirun exit status $?" >>"$TMP/status"
	wait "$events_pid" 2>/dev/null
	events_pid=
	awk '/^TRACE rank 1 t_s / { print $5, $7 }' "$TMP/$name.out" >"$TMP/$name.trace"
	# the events on the trace's clock
	local t0
	t0=$(awk '/^TRACE rank 1 epoch / { print $5 }' "$TMP/$name.out")
	[ -n "$t0" ] && awk -v t0="$t0" -v n="$name" '{ printf "%s %.2f nic%s %s\n", n, $1 - t0, $2, $3 }' \
		"$TMP/events.$name" >>"$TMP/events"
	timeout 60 "$CLUSTER" down --prefix "$PREFIX" >/dev/null
}

dir=/run/fnn-testbed/$PREFIX
run sctp --mca btl self,sctp --mca mca_base_component_path "$BTL_LIBDIR:$OMPI_COMPONENTDIR" \
	--mca btl_sctp_fnn_table "$dir/table" --mca btl_sctp_fnn_addrs "$dir/addrs"
run tcp --mca btl self,tcp --mca btl_tcp_if_include nic0,nic1,nic2

# the table: t, MB/s per transport ("-" once a run has stopped reporting)
{
	echo "# failover trace: 2 PCs sharing 3 switches, $RATE per NIC, PC 0 -> PC 1, tb_bw 64 KiB x 32,"
	echo "# MB/s per ${INTERVAL} ms; events on PC 1's NICs (t_s:nic:state): $EVENTS"
	sed 's/^/# /' "$TMP/status"
	echo "# events on the trace's clock (run, t_s, NIC, state):"
	sed 's/^/#   /' "$TMP/events"
	printf '# %-6s %-22s %s\n' "t_s" "btl_sctp_fnn_striped" "btl_tcp_3_nics"
	awk 'FNR == NR { a[$1] = $2; if ($1 > m) m = $1; next } { b[$1] = $2; if ($1 > m) m = $1 }
	     END { for (t = 0; t <= m + 0.0001; t += '"$INTERVAL"' / 1000.0) {
		     k = sprintf("%.3f", t)
		     printf "%-8s %-22s %s\n", k, (k in a ? a[k] : "-"), (k in b ? b[k] : "-") } }' \
		"$TMP/sctp.trace" "$TMP/tcp.trace"
} >"$OUT/failover_trace.dat"
cp "$OUT/failover_trace.dat" "$OUT/failover_trace.txt"
{
	echo
	grep -h '^BW ' "$TMP/sctp.out" | sed 's/^/btl sctp: /'
	grep -h '^BW ' "$TMP/tcp.out" | sed 's/^/btl tcp: /'
} >>"$OUT/failover_trace.txt"
cat "$OUT/failover_trace.txt"

# the plot: one line per transport, the link events as dashed vertical lines
{
	echo "set terminal pngcairo size 1000,520 font ',11'"
	echo "set output '$OUT/failover_trace.png'"
	echo "set title 'Failover trace: PC 0 -> PC 1 over 3 rails of $RATE, PC 1 NICs going down and up' noenhanced"
	echo "set xlabel 'time (s)'; set ylabel 'MB/s received (per ${INTERVAL} ms)'"
	echo "set yrange [0:*]; set xrange [0:$SECS]; set grid; set key below"
	echo "set datafile missing '-'"
	# where the events fell on the btl sctp run's clock (the btl tcp run's differ by < 0.2 s)
	awk '$1 == "sctp" { printf "set arrow from %s, graph 0 to %s, graph 1 nohead dt 2 lc rgb \"gray40\"\n", $2, $2
		printf "set label \"%s %s\" at %s, graph 0.97 offset 0.3,0 font \",9\" noenhanced\n", $3, $4, $2 }' \
		"$TMP/events"
	# each point at the middle of its interval
	echo "mid = $INTERVAL / 2000.0"
	echo "plot '$OUT/failover_trace.dat' using (\$1 + mid):2 with linespoints lw 2 pt 7 ps 0.5 title 'btl sctp, FNN striped', \\"
	echo "     '' using (\$1 + mid):3 with linespoints lw 2 pt 5 ps 0.5 title 'btl tcp, 3 NICs'"
} >"$TMP/plot.gp"
gnuplot "$TMP/plot.gp" && echo "wrote $OUT/failover_trace.png"
