#!/usr/bin/env bash
# compare.sh <build dir> [output dir]: Open MPI over btl sctp against the SCTP core alone
# (benchmarks/core/sctpt_bench, same pattern, no MPI) and against btl tcp, with the OSU
# Micro-Benchmarks methodology (benchmarks/btl/bench_common.h): latency, bandwidth,
# bidirectional bandwidth (2 ranks), multi-pair bandwidth and message rate and allreduce
# (NP_MULTI ranks, default 4). Prints one table per test with the ratios the project's goals
# are stated in, a summary of those goals, and draws btl_compare.png (gnuplot).
#
# Each test runs REPS times (default 3), the stacks alternating within each repetition so
# that all see the same machine; the table shows the median per size. All of them busy-poll
# (Open MPI's progress loop, sctpt_progress). Environment:
#   QUICK=1        OSU's iteration counts x0.1 (Q=F for any factor; default 1: OSU's own)
#   MEDIAN=0       OSU's average per run (default: the median iteration or window of each run,
#                  which an iteration that lost the CPU to another job does not move)
#   TESTS="..."    subset of: latency bw bibw mbw_mr allreduce
#   OLD=DIR        also run the btl sctp built in another build directory DIR (column "old")
#   SCTP_MCA="..." extra mpirun options for the sctp runs (e.g. "--mca btl_sctp_eager_limit N")
#   IFACE=eth0     interfaces (default lo); HOSTS=a,b to run on two hosts (same paths)
#   SCTPT_SHM=1    let the core use shared memory between the ranks of this host (default 0:
#                  the ranks talk SCTP over IFACE, as between hosts)
set -u
build=${1:?usage: compare.sh <build dir> [output dir]}
build=$(cd "$build" && pwd) || exit 2
out=${2:-$build/benchmarks/btl/results}
bench=$build/benchmarks/btl
core=$build/benchmarks/core/sctpt_bench
mkdir -p "$out" || exit 2

mpirun=$(sed -n 's/^MPIRUN = //p' "$bench/Makefile")
compdir=$(sed -n 's/^OMPI_COMPONENTDIR = //p' "$bench/Makefile")
[ -x "${mpirun:-}" ] || mpirun=$(command -v mpirun) || { echo "compare.sh: mpirun not found" >&2; exit 77; }
[ -f "$build/ompi-btl/.libs/mca_btl_sctp.so" ] || { echo "compare.sh: $build/ompi-btl/.libs/mca_btl_sctp.so not built" >&2; exit 2; }
for p in latency bw bibw mbw_mr allreduce; do
	[ -x "$bench/bench_$p" ] || { echo "compare.sh: $bench/bench_$p not built (make in $build)" >&2; exit 2; }
done
[ -x "$core" ] || { echo "compare.sh: $core not built" >&2; exit 2; }
old=""
if [ -n "${OLD:-}" ]; then
	old=$(cd "$OLD" && pwd)/ompi-btl/.libs
	[ -f "$old/mca_btl_sctp.so" ] || { echo "compare.sh: $old/mca_btl_sctp.so not built" >&2; exit 2; }
fi

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
iface=${IFACE:-lo}
opts=(--allow-run-as-root --oversubscribe --bind-to none --mca pml ob1
	--mca btl_tcp_if_include "$iface" --mca btl_sctp_if_include "$iface"
	--mca btl_base_warn_component_unused 0 -x SCTPT_SHM="${SCTPT_SHM:-0}")
[ -n "${HOSTS:-}" ] && opts+=(--host "$HOSTS")
if grep -q -- '-fsanitize=address' "$bench/Makefile" 2>/dev/null; then
	opts+=(-x LD_PRELOAD="$(gcc -print-file-name=libasan.so)" -x ASAN_OPTIONS=detect_leaks=0)
fi
np_multi=${NP_MULTI:-4}
q=${Q:-$([ "${QUICK:-0}" = 1 ] && echo 0.1 || echo 1)}
# per-iteration medians (each iteration or window timed, -M) unless MEDIAN=0 (OSU's averages)
med=$([ "${MEDIAN:-1}" = 0 ] || echo -M)
what=$([ -n "$med" ] && echo "the median iteration of each run (OSU: the average; MEDIAN=0)" || echo "OSU's average per run")
reps=${REPS:-3}
tests=${TESTS:-latency bw bibw mbw_mr allreduce}
read -r -a sctp_mca <<<"${SCTP_MCA:-}"

# The stacks each test runs on; "core" only where the core has the same pattern.
stacks_of() {
	local s="sctp"
	[ -n "$old" ] && s="$s old"
	case $1 in latency | bw | bibw) s="$s core" ;; esac
	echo "$s tcp"
}
core_test() { case $1 in latency) echo lat ;; *) echo "$1" ;; esac; }

# run TEST STACK REP: one run; "size value..." lines go to $out/TEST.STACK.REP.dat
run() {
	local t=$1 s=$2 rep=$3 np=2 log=$out/$1.$2.$3.log rc
	case $t in mbw_mr | allreduce) np=$np_multi ;; esac
	case $s in
	core)
		timeout -k 5 900 "$core" --only sctp $([ "${SCTPT_SHM:-0}" = 0 ] || echo --shm) \
			--tests "$(core_test "$t")" --iters-scale "$q" ${med:+--median} --dat >"$log" 2>&1 ;;
	*)
		local path=$build/ompi-btl/.libs btl=sctp extra=("${sctp_mca[@]}")
		[ "$s" = old ] && path=$old
		[ "$s" = tcp ] && btl=tcp && extra=()
		timeout -k 5 900 "$mpirun" "${opts[@]}" --mca mca_base_component_path "$path:$compdir" \
			--mca btl "self,$btl" "${extra[@]}" -np "$np" "$bench/bench_$t" -q "$q" $med \
			>"$log" 2>&1 ;;
	esac
	rc=$?
	grep -E '^[0-9]+ ' "$log" >"$out/$t.$s.$rep.dat"
	if [ $rc -ne 0 ]; then
		echo "compare.sh: $t over $s failed (status $rc, see $log):" >&2
		tail -n 5 "$log" >&2
		return 1
	fi
}

# median TEST STACK: per size and column, the median over the repetitions -> TEST.STACK.dat
median() {
	cat "$out/$1.$2".*.dat 2>/dev/null | awk '
		{ if (!($1 in n)) order[k++] = $1; n[$1]++; nc = NF
		  for (c = 2; c <= NF; c++) v[$1, c, n[$1]] = $c }
		function med(z, c,   m, i, j, a, t) {
			m = n[z]; for (i = 1; i <= m; i++) a[i] = v[z, c, i]
			for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2 }
		END { for (i = 0; i < k; i++) { z = order[i]; line = z
			for (c = 2; c <= nc; c++) line = line " " med(z, c); print line } }' >"$out/$1.$2.dat"
}

status=0
rm -f "$out"/*.dat "$out"/*.log
for t in $tests; do
	for rep in $(seq 1 "$reps"); do
		for s in $(stacks_of "$t"); do
			echo "== $t over $s ($rep/$reps)" >&2
			run "$t" "$s" "$rep" || status=1
		done
	done
	for s in $(stacks_of "$t"); do median "$t" "$s"; done
done


# table TEST COL: columns of every stack (value column COL of the .dat files), their ratios
table() {
	local t=$1 col=${2:-2} unit better
	case $t in latency | allreduce) better=lower ;; *) better=higher ;; esac
	case $t in latency | allreduce) unit=us ;; *) unit=MB/s ;; esac
	[ "$col" = 3 ] && unit=msgs/s
	local ss; read -r -a ss <<<"$(stacks_of "$t")"
	printf '\n%s (%s, %s is better; %s ranks; median of %s runs)\n' "$t" "$unit" "$better" \
		"$(case $t in mbw_mr | allreduce) echo "$np_multi" ;; *) echo 2 ;; esac)" "$reps"
	awk -v col="$col" -v t="$t" -v names="${ss[*]}" -v dir="$out" '
		function human(z) { return z >= 1048576 ? sprintf("%d MiB", z / 1048576) : z >= 1024 ? sprintf("%d KiB", z / 1024) : sprintf("%d B", z) }
		BEGIN {
			ns = split(names, s, " ")
			for (i = 1; i <= ns; i++) {
				f = dir "/" t "." s[i] ".dat"
				while ((getline line < f) > 0) { split(line, a, " "); if (!(a[1] in seen)) { seen[a[1]] = 1; z[nz++] = a[1] } v[s[i], a[1]] = a[col] }
				close(f)
			}
			hdr = sprintf("%9s", "size")
			for (i = 1; i <= ns; i++) hdr = hdr sprintf(" | %10s", s[i] == "sctp" ? "btl sctp" : s[i] == "tcp" ? "btl tcp" : s[i] == "core" ? "core alone" : "sctp old")
			has_core = 0; has_old = 0
			for (i = 1; i <= ns; i++) { if (s[i] == "core") has_core = 1; if (s[i] == "old") has_old = 1 }
			if (has_core) hdr = hdr sprintf(" | %9s", "sctp/core")
			if (has_core && t == "latency") hdr = hdr sprintf(" | %9s", "sctp-core")
			hdr = hdr sprintf(" | %8s", "sctp/tcp")
			if (has_old) hdr = hdr sprintf(" | %8s", "new/old")
			if (t == "latency") hdr = hdr sprintf(" | %9s", "x/doubling")
			print hdr
			prev = 0
			for (k = 0; k < nz; k++) {
				zz = z[k]; line = sprintf("%9s", human(zz))
				for (i = 1; i <= ns; i++) line = line sprintf(" | %10s", ((s[i], zz) in v) ? v[s[i], zz] : "-")
				sc = v["sctp", zz]; co = v["core", zz]; tc = v["tcp", zz]; ol = v["old", zz]
				if (has_core) line = line sprintf(" | %9s", co > 0 ? sprintf("%.2f", sc / co) : "-")
				if (has_core && t == "latency") line = line sprintf(" | %9s", co > 0 ? sprintf("%+.2f", sc - co) : "-")
				line = line sprintf(" | %8s", tc > 0 ? sprintf("%.2f", sc / tc) : "-")
				if (has_old) line = line sprintf(" | %8s", ol > 0 ? sprintf("%.2f", sc / ol) : "-")
				if (t == "latency") line = line sprintf(" | %9s", prev > 0 && zz > 1 ? sprintf("%.2f", sc / prev) : "-")
				prev = sc
				print line
			}
		}'
}

# The issue's goals, from the medians.
goals() {
	echo
	echo "goals (btl sctp; median values):"
	if [ -s "$out/latency.core.dat" ]; then
		join "$out/latency.sctp.dat" "$out/latency.core.dat" | awk '
			{ d = $2 - $3; if (n++ == 0 || d > m) { m = d; mz = $1 } if ($1 > 1 && p > 0 && $2 / p > g) { g = $2 / p; gz = $1 } p = $2 }
			END { printf "  latency over the core alone: at most %+.2f us (at %d B; goal <= 1.5)\n", m, mz
			      printf "  latency growth per size doubling: at most %.2fx (at %d B; goal <= 2.2)\n", g, gz }'
	fi
	for t in bw bibw; do
		[ -s "$out/$t.core.dat" ] || continue
		join "$out/$t.sctp.dat" "$out/$t.core.dat" | awk -v t="$t" '
			{ r = $2 / $3; if (n++ == 0 || r < m) { m = r; mz = $1 } }
			END { printf "  %s vs the core alone: at least %.2fx (at %d B; goal >= 0.9)\n", t, m, mz }'
	done
	if [ -s "$out/bibw.sctp.dat" ] && [ -s "$out/bw.sctp.dat" ]; then
		join "$out/bibw.sctp.dat" "$out/bw.sctp.dat" | awk '
			$1 >= 65536 { r = $2 / $3; if (n++ == 0 || r < m) { m = r; mz = $1 } }
			END { if (n) printf "  bibw / bw from 64 KiB: at least %.2fx (at %d B; goal >= 1.6)\n", m, mz }'
	fi
}

{
	echo "Open MPI ob1: btl sctp vs the SCTP core alone vs btl tcp, $(date -u '+%Y-%m-%d %H:%M UTC'), $(hostname), interface $iface, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "OSU methodology, iterations x$q, $what; every stack busy-polls; the core's same-host shared memory $([ "${SCTPT_SHM:-0}" = 0 ] && echo off: SCTP over $iface || echo on); median of $reps alternating runs${SCTP_MCA:+; sctp runs with $SCTP_MCA}${old:+; old: $old}"
	for t in $tests; do
		table "$t"
		[ "$t" = mbw_mr ] && table mbw_mr 3
	done
	goals
} | tee "$out/compare.txt"

if command -v gnuplot >/dev/null; then
	{
		echo 'set terminal pngcairo size 1500,900 font ",10"'
		echo "set output \"$out/btl_compare.png\""
		echo "set multiplot layout 2,3 title \"Open MPI ob1 over btl sctp, the SCTP core alone, btl tcp ($iface, median of $reps)\""
		echo 'set logscale x 2; set logscale y; set grid; set key top left; set xlabel "message size (bytes)"; set format x "%.0b%BB"'
		for t in $tests; do
			[ "$t" = mbw_mr ] && panels="2 3" || panels=2
			for col in $panels; do
				case $t in latency | allreduce) yl=us ;; *) yl=MB/s ;; esac
				[ "$col" = 3 ] && yl=msgs/s
				printf 'set title "%s%s" noenhanced; set ylabel "%s"\nplot ' "$t" "$([ "$col" = 3 ] && echo ' (message rate)')" "$yl"
				sep=""
				for s in $(stacks_of "$t"); do
					printf '%s"%s/%s.%s.dat" u ($1 > 0 ? $1 : 1):%s w lp t "%s"' "$sep" "$out" "$t" "$s" "$col" "$s"
					sep=", "
				done
				echo
			done
		done
		echo 'unset multiplot'
	} | gnuplot 2>"$out/gnuplot.log" || echo "compare.sh: gnuplot failed, see $out/gnuplot.log" >&2
	[ -s "$out/btl_compare.png" ] && echo "plot: $out/btl_compare.png"
fi
echo "table: $out/compare.txt"
exit $status
