#!/usr/bin/env bash
# compare.sh <build dir> [output dir]: runs the OSU-style benchmarks of benchmarks/btl over
# "btl self,sctp" and "btl self,tcp" in one go, prints one table per test (sctp vs tcp and
# their ratio) and draws every test into one PNG with gnuplot.
#
# Quick by default (a couple of minutes on 2 cores); FULL=1 for larger sizes and more
# iterations. NP_COLL ranks for allreduce (default 4). Each test runs REPS times (default 3),
# alternating sctp and tcp so both see the same machine, and the best value per size is kept
# (shared machines: the best run is the one nobody else disturbed). Everything runs on loopback (lo);
# set IFACE=eth0 (or a CIDR network) to use real interfaces, and HOSTS=a,b to use two hosts
# (both need the same build tree path).
set -u
build=${1:?usage: compare.sh <build dir> [output dir]}
build=$(cd "$build" && pwd) || exit 2
out=${2:-$build/benchmarks/btl/results}
bench=$build/benchmarks/btl
mkdir -p "$out" || exit 2

mpirun=$(sed -n 's/^MPIRUN = //p' "$bench/Makefile")
compdir=$(sed -n 's/^OMPI_COMPONENTDIR = //p' "$bench/Makefile")
[ -x "${mpirun:-}" ] || mpirun=$(command -v mpirun) || { echo "compare.sh: mpirun not found" >&2; exit 77; }
[ -f "$build/ompi-btl/.libs/mca_btl_sctp.so" ] || { echo "compare.sh: $build/ompi-btl/.libs/mca_btl_sctp.so not built" >&2; exit 2; }
for p in latency bw bibw msgrate allreduce; do
	[ -x "$bench/bench_$p" ] || { echo "compare.sh: $bench/bench_$p not built (make in $build)" >&2; exit 2; }
done

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
iface=${IFACE:-lo}
opts=(--allow-run-as-root --oversubscribe --bind-to none
	--mca mca_base_component_path "$build/ompi-btl/.libs:$compdir"
	--mca pml ob1 --mca btl_tcp_if_include "$iface" --mca btl_sctp_if_include "$iface"
	--mca btl_base_warn_component_unused 0)
[ -n "${HOSTS:-}" ] && opts+=(--host "$HOSTS")
if grep -q -- '-fsanitize=address' "$bench/Makefile" 2>/dev/null; then
	opts+=(-x LD_PRELOAD="$(gcc -print-file-name=libasan.so)" -x ASAN_OPTIONS=detect_leaks=0)
fi
np_coll=${NP_COLL:-4}

if [ "${FULL:-0}" = 1 ]; then
	args_latency="-m 4194304 -i 1000"; args_bw="-m 16777216 -i 200 -w 64"
	args_msgrate="-m 4096 -i 400 -w 128"; args_allreduce="-m 4194304 -i 400"
else
	args_latency="-m 1048576 -i 100"; args_bw="-m 1048576 -i 40 -w 16"
	args_msgrate="-m 1024 -i 40 -w 64"; args_allreduce="-m 262144 -i 40"
fi
args_bibw=$args_bw

# run TEST BTL REP: one benchmark run; its "size value" lines go to $out/TEST.BTL.REP.dat
run() {
	local t=$1 btl=$2 rep=$3 np=2 args
	[ "$t" = allreduce ] && np=$np_coll
	eval "args=\$args_$t"
	# shellcheck disable=SC2086
	if ! timeout -k 5 300 "$mpirun" "${opts[@]}" --mca btl "self,$btl" -np "$np" \
		"$bench/bench_$t" $args >"$out/$t.$btl.$rep.log" 2>&1; then
		echo "compare.sh: bench_$t over btl $btl failed (see $out/$t.$btl.$rep.log):" >&2
		tail -n 5 "$out/$t.$btl.$rep.log" >&2
		: >"$out/$t.$btl.$rep.dat"
		return 1
	fi
	grep -E '^[0-9]+ ' "$out/$t.$btl.$rep.log" >"$out/$t.$btl.$rep.dat"
}

# best TEST BTL lower|higher: the best value per size over the repetitions -> TEST.BTL.dat
best() {
	cat "$out/$1.$2".*.dat | awk -v low=$([ "$3" = lower ] && echo 1 || echo 0) '
		!($1 in v) { order[n++] = $1; v[$1] = $2; next }
		low && $2 < v[$1] { v[$1] = $2 } !low && $2 > v[$1] { v[$1] = $2 }
		END { for (i = 0; i < n; i++) print order[i], v[order[i]] }' >"$out/$1.$2.dat"
}

# table TEST UNIT BETTER: sctp and tcp side by side; BETTER is "lower" or "higher"
table() {
	local t=$1 unit=$2 better=$3
	printf '\n%s (%s, %s is better; %s ranks)\n' "$t" "$unit" "$better" "$([ "$t" = allreduce ] && echo "$np_coll" || echo 2)"
	printf '%10s | %12s | %12s | %9s\n' size sctp tcp sctp/tcp
	printf -- '-----------+--------------+--------------+----------\n'
	join "$out/$t.sctp.dat" "$out/$t.tcp.dat" | while read -r size s c; do
		awk -v z="$size" -v s="$s" -v c="$c" 'BEGIN {
			if (z >= 1048576) h = sprintf("%d MiB", z / 1048576);
			else if (z >= 1024) h = sprintf("%d KiB", z / 1024);
			else h = sprintf("%d B", z);
			printf "%10s | %12s | %12s | %9s\n", h, s, c, (c > 0 ? sprintf("%.2f", s / c) : "-") }'
	done
}

status=0
reps=${REPS:-3}
rm -f "$out"/*.dat
for t in latency bw bibw msgrate allreduce; do
	for rep in $(seq 1 "$reps"); do
		for btl in sctp tcp; do
			echo "== bench_$t over btl $btl ($rep/$reps)" >&2
			run "$t" "$btl" "$rep" || status=1
		done
	done
	case $t in latency | allreduce) better=lower ;; *) better=higher ;; esac
	best "$t" sctp $better
	best "$t" tcp $better
done

{
	echo "btl sctp vs btl tcp, $(date -u '+%Y-%m-%d %H:%M UTC'), $(hostname), interface $iface, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), best of $reps runs"
	table latency "one-way us" lower
	table bw "MB/s" higher
	table bibw "MB/s" higher
	table msgrate "msgs/s" higher
	table allreduce "us" lower
} | tee "$out/compare.txt"

if command -v gnuplot >/dev/null; then
	gnuplot <<GP 2>"$out/gnuplot.log" || echo "compare.sh: gnuplot failed, see $out/gnuplot.log" >&2
set terminal pngcairo size 1500,900 font ",10"
set output "$out/btl_compare.png"
set multiplot layout 2,3 title "Open MPI ob1: btl sctp vs btl tcp ($iface)"
set logscale x 2
set logscale y
set grid
set key top left
set xlabel "message size (bytes)"
set format x "%.0b%BB"
set title "latency (one-way, lower is better)"; set ylabel "us"
plot "$out/latency.sctp.dat" u (\$1 > 0 ? \$1 : 1):2 w lp t "sctp", "$out/latency.tcp.dat" u (\$1 > 0 ? \$1 : 1):2 w lp t "tcp"
set title "bandwidth (higher is better)"; set ylabel "MB/s"
plot "$out/bw.sctp.dat" u 1:2 w lp t "sctp", "$out/bw.tcp.dat" u 1:2 w lp t "tcp"
set title "bidirectional bandwidth"; set ylabel "MB/s"
plot "$out/bibw.sctp.dat" u 1:2 w lp t "sctp", "$out/bibw.tcp.dat" u 1:2 w lp t "tcp"
set title "message rate (higher is better)"; set ylabel "messages/s"
plot "$out/msgrate.sctp.dat" u 1:2 w lp t "sctp", "$out/msgrate.tcp.dat" u 1:2 w lp t "tcp"
set title "allreduce, $np_coll ranks (lower is better)"; set ylabel "us"
plot "$out/allreduce.sctp.dat" u 1:2 w lp t "sctp", "$out/allreduce.tcp.dat" u 1:2 w lp t "tcp"
unset multiplot
GP
	[ -s "$out/btl_compare.png" ] && echo "plot: $out/btl_compare.png"
else
	echo "compare.sh: gnuplot not installed, no plot" >&2
fi
echo "table: $out/compare.txt"
exit $status
